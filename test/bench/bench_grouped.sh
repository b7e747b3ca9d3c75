#!/usr/bin/env bash
# test/bench/bench_grouped.sh -- speed of grouped releases (uldp 0.8) against PostgreSQL's own
# GROUP BY, in the same run.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54341 unless ULDP_PORT is set, shared_buffers
# 2GB so that every table stays cached), loads
#   countries  4M rows, 40k users (int ids in random order), each user in one of 50 countries
#   months     ULDP_BENCH_MONTH_ROWS rows (default 10M), 1M users, a date spread over 12 months
# and times, with jit = off and with jit = on, serial (max_parallel_workers_per_gather = 0) and
# with 1 and 2 workers, the median of RUNS runs after a warm-up, interleaved, of
#   countries: SELECT country, avg(x) FROM t GROUP BY country                      (plain)
#              SELECT country, user_dp_mean(x, user_id, 1, 0, 100) ... GROUP BY country
#              SELECT avg(x) FROM t                                              (ungrouped)
#              SELECT user_dp_mean(x, user_id, 1, 0, 100) FROM t
#   months:    SELECT date_trunc('month', d), avg(x) ... GROUP BY 1                (plain)
#              SELECT date_trunc('month', d), user_dp_mean(x, user_id, 1, 0, 100) ... GROUP BY 1
#              (uldp.max_groups_per_user = 12)
#              SELECT avg(x), user_dp_mean(x, user_id, 1, 0, 100) FROM t          (ungrouped)
# Prints a table and writes doc/benchmark-grouped.md. Takes about 15 minutes on 2 cores.
#
# Usage: bash test/bench/bench_grouped.sh
#   ULDP_NO_BUILD=1          skip dependency install and build (benchmark what is installed)
#   ULDP_PORT                cluster port (default 54341)
#   ULDP_BENCH_RUNS          timed runs per query (default 5)
#   ULDP_BENCH_MONTH_ROWS    rows of the months table (default 10000000)
#   ULDP_BENCH_DOC           where to write the results (default doc/benchmark-grouped.md)
set -euo pipefail

: "${ULDP_PORT:=54341}"
export ULDP_PORT
RUNS="${ULDP_BENCH_RUNS:-5}"
MONTH_ROWS="${ULDP_BENCH_MONTH_ROWS:-10000000}"
export ULDP_PG_CONF_EXTRA="shared_buffers = 2GB
max_parallel_workers = 8"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
DOC="${ULDP_BENCH_DOC:-$ULDP_REPO/doc/benchmark-grouped.md}"

uldp_bench_start
SO_STAMP="$(date -u -r "$ULDP_SO" '+%Y-%m-%d %H:%M UTC')"
COMMIT="$(git -C "$ULDP_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"

uldp_log "loading tables (4M and $MONTH_ROWS rows)"
bpsql -q <<SQL
SET max_parallel_workers_per_gather = 0;
CREATE TABLE countries AS
    SELECT u AS user_id, 'C' || (hashint4(u + 7) & 2147483647) % 50 AS country, random() * 100 AS x
    FROM (SELECT (hashint4(i) & 2147483647) % 40000 AS u FROM generate_series(1, 4000000) i) s;
CREATE TABLE months AS
    SELECT (hashint4(i) & 2147483647) % 1000000 AS user_id,
           date '2026-01-01' + (hashint4(i + 1) & 2147483647) % 365 AS d, random() * 100 AS x
    FROM generate_series(1, $MONTH_ROWS) i;
VACUUM (FREEZE, ANALYZE) countries, months;
SQL

# table|name|setting (SET before the timed query, untimed)|query
QUERIES=(
    "countries|plain GROUP BY||SELECT country, avg(x) FROM countries GROUP BY country"
    "countries|dp GROUP BY|SET uldp.max_groups_per_user = 1;|SELECT country, user_dp_mean(x, user_id, 1, 0, 100) FROM countries GROUP BY country"
    "countries|plain||SELECT avg(x) FROM countries"
    "countries|dp||SELECT user_dp_mean(x, user_id, 1, 0, 100) FROM countries"
    "months|plain GROUP BY||SELECT date_trunc('month', d), avg(x) FROM months GROUP BY 1"
    "months|dp GROUP BY|SET uldp.max_groups_per_user = 12;|SELECT date_trunc('month', d), user_dp_mean(x, user_id, 1, 0, 100) FROM months GROUP BY 1"
    "months|plain||SELECT avg(x) FROM months"
    "months|dp||SELECT user_dp_mean(x, user_id, 1, 0, 100) FROM months"
)

# run_set JIT WORKERS: RUNS rounds of every query, interleaved, timed by psql's \timing in one
# session after a warm-up round; prints "index ms" lines
run_set() {
    local jit="$1" workers="$2" i q r setting sql
    {
        echo "SET jit = $jit; SET max_parallel_workers_per_gather = $workers;"
        for q in "${QUERIES[@]}"; do
            IFS='|' read -r _ _ setting sql <<<"$q"
            echo "$setting $sql \\g /dev/null"
        done
        printf '%s\n' '\timing on'
        for ((r = 0; r < RUNS; r++)); do
            for i in "${!QUERIES[@]}"; do
                IFS='|' read -r _ _ setting sql <<<"${QUERIES[i]}"
                [ -z "$setting" ] || printf '\\echo q-\n%s\n' "$setting"
                printf '\\echo q%s\n' "$i"
                echo "$sql \\g /dev/null"
            done
        done
    } | bpsql -q 2>&1 | awk '/^q(-|[0-9]+)$/ {q = substr($0, 2)} /^Time:/ {print q, $2}'
}

declare -A MEDIAN
for jit in off on; do
    for workers in 0 1 2; do
        uldp_log "jit = $jit, $workers workers"
        out="$(run_set "$jit" "$workers")"
        for i in "${!QUERIES[@]}"; do
            MEDIAN[$jit/$workers/$i]="$(printf '%s\n' "$out" | awk -v q="$i" '$1 == q {print $2}' |
                sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
        done
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

REPORT="# Grouped releases: speed against PostgreSQL's GROUP BY

<!-- written by test/bench/bench_grouped.sh; do not edit by hand -->

uldp $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ULDP_REPO/uldp.control") (commit $COMMIT, uldp.so of $SO_STAMP), run on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores.
\`bash test/bench/bench_grouped.sh\` (median of $RUNS runs, ms; ratio: uldp / PostgreSQL's own aggregate in the same run).

- countries: 4M rows, 40k users, each in one of 50 countries; \`GROUP BY country\`, \`uldp.max_groups_per_user = 1\`.
- months: $MONTH_ROWS rows, 1M users, dates over one year; \`GROUP BY date_trunc('month', d)\`, \`uldp.max_groups_per_user = 12\`.

| table | query | jit | workers | PostgreSQL ms | uldp ms | ratio |
|---|---|---|---|---|---|---|"
for jit in off on; do
    for workers in 0 1 2; do
        for i in 0 2 4 6; do
            IFS='|' read -r table name _ <<<"${QUERIES[i]}"
            REPORT+="
| $table | ${name#plain} | $jit | $workers | ${MEDIAN[$jit/$workers/$i]} | ${MEDIAN[$jit/$workers/$((i + 1))]} | $(ratio "${MEDIAN[$jit/$workers/$((i + 1))]}" "${MEDIAN[$jit/$workers/$i]}") |"
        done
    done
done
REPORT+="

Parallel speed-up (the serial median over the median with 1 or 2 workers; on 2 cores, 1 worker and
the leader use both):

| table | query | jit | PostgreSQL, 1 worker | uldp, 1 worker | PostgreSQL, 2 workers | uldp, 2 workers |
|---|---|---|---|---|---|---|"
for jit in off on; do
    for i in 0 2 4 6; do
        IFS='|' read -r table name _ <<<"${QUERIES[i]}"
        REPORT+="
| $table | ${name#plain} | $jit | $(ratio "${MEDIAN[$jit/0/$i]}" "${MEDIAN[$jit/1/$i]}") | $(ratio "${MEDIAN[$jit/0/$((i + 1))]}" "${MEDIAN[$jit/1/$((i + 1))]}") | $(ratio "${MEDIAN[$jit/0/$i]}" "${MEDIAN[$jit/2/$i]}") | $(ratio "${MEDIAN[$jit/0/$((i + 1))]}" "${MEDIAN[$jit/2/$((i + 1))]}") |"
    done
done
REPORT+="

Grouped releases read their rows twice (an aggregate registers each user's groups before the
first row is aggregated: doc/privacy.md), then keep every row whose (user, group) pair
registration did not drop (no lookup at all when no user has more than k groups, as here) and read
each group's count of users for partition selection from the registry. Both readings run in
parallel when PostgreSQL plans them so (the registration's partial registries merge in the leader,
which passes the kept groups to the aggregation's workers); PostgreSQL's own GROUP BY reads once.
The ungrouped rows are the same engine as doc/benchmark.md's."

printf '%s\n' "$REPORT"
if [ "$DOC" != /dev/null ]; then
    printf '%s\n' "$REPORT" >"$DOC"
    uldp_log "wrote $DOC"
fi

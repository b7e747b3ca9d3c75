#!/usr/bin/env bash
# test/bench/bench_grouped.sh -- speed of grouped releases (uldp 0.8) against PostgreSQL's own
# GROUP BY, in the same run.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54341 unless ULDP_PORT is set, shared_buffers
# 2GB so that every table stays cached), loads
#   countries  4M rows, 40k users (int ids in random order), each user in one of 50 countries
#   months     ULDP_BENCH_MONTH_ROWS rows (default 10M), 1M users, a date spread over 12 months
# and times, with jit = off and with jit = on, RUNS rounds after a warm-up, each round running
# serially (max_parallel_workers_per_gather = 0), then with 1 and 2 workers (and
# uldp.max_parallel_workers_per_gather set alike, so that 2 workers are 2 on any machine), each of
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

# run_set JIT: RUNS rounds, each running every query with 0, 1 and 2 workers in turn, timed by
# psql's \timing in one session after a warm-up round; prints "round workers index ms" lines.
# A round's runs follow each other within seconds, so the ratios and speed-ups below compare runs
# of one round: on a shared machine whose speed drifts by tens of percent over minutes, a ratio
# of medians taken minutes apart measures the drift as much as the code.
run_set() {
    local jit="$1" i q r w setting sql
    {
        echo "SET jit = $jit;"
        for w in 0 1 2; do
            echo "SET max_parallel_workers_per_gather = $w; SET uldp.max_parallel_workers_per_gather = $w;"
            for q in "${QUERIES[@]}"; do
                IFS='|' read -r _ _ setting sql <<<"$q"
                echo "$setting $sql \\g /dev/null"
            done
        done
        printf '%s\n' '\timing on'
        for ((r = 0; r < RUNS; r++)); do
            for w in 0 1 2; do
                printf '\\echo q-\nSET max_parallel_workers_per_gather = %s;\n' "$w"
                printf 'SET uldp.max_parallel_workers_per_gather = %s;\n' "$w"
                for i in "${!QUERIES[@]}"; do
                    IFS='|' read -r _ _ setting sql <<<"${QUERIES[i]}"
                    [ -z "$setting" ] || printf '\\echo q-\n%s\n' "$setting"
                    printf '\\echo q%s:%s:%s\n' "$r" "$w" "$i"
                    echo "$sql \\g /dev/null"
                done
            done
        done
    } | bpsql -q 2>&1 | awk '/^q(-|[0-9]+:[0-9]:[0-9]+)$/ {q = substr($0, 2)}
        /^Time:/ && q != "-" {split(q, f, ":"); print f[1], f[2], f[3], $2}'
}

# median of the numbers on stdin
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

declare -A MEDIAN RATIO SPEEDUP
for jit in off on; do
    uldp_log "jit = $jit: $RUNS rounds of 0, 1 and 2 workers"
    out="$(run_set "$jit")"
    for workers in 0 1 2; do
        for i in "${!QUERIES[@]}"; do
            MEDIAN[$jit/$workers/$i]="$(printf '%s\n' "$out" |
                awk -v w="$workers" -v q="$i" '$2 == w && $3 == q {print $4}' | median)"
            # per round: the query's time with these workers against its serial time
            SPEEDUP[$jit/$workers/$i]="$(printf '%s\n' "$out" | awk -v w="$workers" -v q="$i" '
                $3 == q && $2 == 0 {serial[$1] = $4} $3 == q && $2 == w {t[$1] = $4}
                END {for (r in t) printf "%.4f\n", serial[r] / t[r]}' | median)"
        done
        for i in 1 3 5 7; do
            # per round: uldp against PostgreSQL's own aggregate, run just before it
            RATIO[$jit/$workers/$i]="$(printf '%s\n' "$out" | awk -v w="$workers" -v q="$i" '
                $2 == w && $3 == q - 1 {plain[$1] = $4} $2 == w && $3 == q {t[$1] = $4}
                END {for (r in t) printf "%.4f\n", t[r] / plain[r]}' | median)"
        done
    done
done

REPORT="# Grouped releases: speed against PostgreSQL's GROUP BY

<!-- written by test/bench/bench_grouped.sh; do not edit by hand -->

uldp $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ULDP_REPO/uldp.control") (commit $COMMIT, uldp.so of $SO_STAMP), run on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores.
\`bash test/bench/bench_grouped.sh\` ($RUNS rounds, each running every query serially, then with 1 and 2 workers; ms: the median over the rounds; ratio: the median over the rounds of uldp's time over PostgreSQL's own aggregate's, run just before it).

- countries: 4M rows, 40k users, each in one of 50 countries; \`GROUP BY country\`, \`uldp.max_groups_per_user = 1\`.
- months: $MONTH_ROWS rows, 1M users, dates over one year; \`GROUP BY date_trunc('month', d)\`, \`uldp.max_groups_per_user = 12\`.

| table | query | jit | workers | PostgreSQL ms | uldp ms | ratio |
|---|---|---|---|---|---|---|"
for jit in off on; do
    for workers in 0 1 2; do
        for i in 0 2 4 6; do
            IFS='|' read -r table name _ <<<"${QUERIES[i]}"
            REPORT+="
| $table | ${name#plain} | $jit | $workers | ${MEDIAN[$jit/$workers/$i]} | ${MEDIAN[$jit/$workers/$((i + 1))]} | $(printf '%.2f' "${RATIO[$jit/$workers/$((i + 1))]}") |"
        done
    done
done
REPORT+="

Parallel speed-up (the median over the rounds of a query's serial time over its time with 1 or 2
workers in the same round; on 2 cores, 1 worker and the leader use both). The runs set
\`uldp.max_parallel_workers_per_gather\` to the workers asked for; by default it caps a Gather over
releases over 262,144 users or more (by the planner's estimate) at one fewer than the CPUs online
(src/releaseworkers.c), so that on these 2 cores the months releases run as in the 1-worker
columns when PostgreSQL plans 2 workers, as it does by default, and the countries releases as in
the 2-worker ones:

| table | query | jit | PostgreSQL, 1 worker | uldp, 1 worker | PostgreSQL, 2 workers | uldp, 2 workers |
|---|---|---|---|---|---|---|"
for jit in off on; do
    for i in 0 2 4 6; do
        IFS='|' read -r table name _ <<<"${QUERIES[i]}"
        REPORT+="
| $table | ${name#plain} | $jit | $(printf '%.2f' "${SPEEDUP[$jit/1/$i]}") | $(printf '%.2f' "${SPEEDUP[$jit/1/$((i + 1))]}") | $(printf '%.2f' "${SPEEDUP[$jit/2/$i]}") | $(printf '%.2f' "${SPEEDUP[$jit/2/$((i + 1))]}") |"
    done
done
REPORT+="

Grouped releases read their rows twice (an aggregate registers each user's groups before the
first row is aggregated: doc/privacy.md), then keep every row whose (user, group) pair
registration did not drop (no lookup at all when no user has more than k groups, as here) and read
each group's count of users for partition selection from the registry. Registration records a
user's groups by number, as bits of the user's entry while they are at most k and numbered below
64, as months are (a user's pseudorandom values are computed only once it has more than k
groups), and each group's table of users grows at once to the size registration counted (half of
it in each process of a parallel plan) when it first grows: a table that took that memory on its
group's first row put PostgreSQL's hashed GROUP BY past \`work_mem\` before it had met the other
groups, and it wrote their rows to disk and read them again (7 batches, 327 MB, at 1M users). A key computed
on one column, as date_trunc('month', d) is, is computed once per distinct value of the column in
each reading (a memo of 1024 values), where PostgreSQL computes it on every row. Both readings
run in parallel when PostgreSQL plans them so, and the leader passes the kept groups to the
aggregation's workers; PostgreSQL's own GROUP BY reads once.
The ungrouped rows are the same engine as doc/benchmark.md's.

In a parallel plan every process holds a table of nearly all the users it meets: with 10 rows a
user, each process meets almost every one of the months table's million users, so the partial
states are as large as the serial state, and what remains serial is their passing to the leader
and their merge. The leader's own partial states are handed to its final aggregation by a handle
(src/handover.c) instead of serialized and copied into a tuple; its registry takes over its own
partial registry and adds the workers' to it; a worker's users are read where they arrived and
added to the leader's table when it holds them without growing (the ungrouped release), else kept
as a run, the leader's table then written out as a run while the worker sends its next group.
A parallel GROUP BY over releases finishes hashed, over Gather (src/finalagg.c): PostgreSQL's
own choice for this shape, at about the same estimated cost, sorts every process's partial
states for a Gather Merge, which for a release means copying its tables of users into a Sort and
writing them to disk (80 MB here) before the leader sees the first group. A worker passes a
partial state over 64 kB in the parallel query's shared memory and sends the leader only a 16 kB
value that names it (src/sharedpass.c): through PostgreSQL's tuple queue, 64 kB at a time, the
months table's 20 MB partial state took 50-100 ms. What remains serial after the scan of 1M
users' months release with 1 worker is about 0.12 s: the worker serializing its state (55 ms), the
leader merging it (50 ms) and reading its users (20 ms); of the grouped one about 0.4 s: the
worker's 12 groups (12-15 ms each, while the leader merges the group before; they were merged
only after the last one while their values waited in the queue), then the leader's 12 final
functions (15-20 ms each), against 0.5-0.6 s through the queue (timestamps logged in the
aggregate's support functions). With \`jit = on\`, JIT's optimization and inlining thresholds are
compared with the grouped plan's cost less its registration's (src/groupjit.c): the second
reading doubled the cost past \`jit_optimize_above_cost\`, and every process then inlined and
optimized the key's date_trunc, 0.1-0.2 s each, which the readings did not win back.
PostgreSQL's own per-user aggregation
(\`SELECT avg(m) FROM (SELECT user_id, avg(x) m FROM months GROUP BY user_id) s\`) sped up 0.95 to
1.51 times (median 1.16) with 1 worker in 5 pairs of runs here, for the same reason.

On these machines (virtual, 2 cores; the guest kernel returns free memory to the host in blocks
of 8 MB, \`page_reporting.page_reporting_order=11\`) memory that the kernel has not handed out
recently is backed by the host only when first touched, at 0.07-1.45 GB/s, against 7-12 GB/s for
memory freed moments before (allocating and zeroing 288 MB to 16 GB, several times in one
process). A release's tables of users, its registry and its partial states are such memory: in a
profile of the serial months GROUP BY (perf, 10M rows), the kernel zeroing pages on first touch
(clear_page_erms) took a third of the backend's time. So uldp touches as little memory as it
can: a user of few groups needs no row in the registry, the registry's rows grow in chunks that
are never copied, a complete registry frees what only registration read, and the leader copies no
partial state of its own. Memory first touched by the months releases (page faults counted in
/proc/vmstat, a huge page as 2 MB), serially and with 1 worker: GROUP BY 430 and 808-856 MB (555
and 1220-1523 MB at commit fbf29f7, 492 and 976 MB at 954dfd0), ungrouped 145 and 307-308 MB (145
and 384 MB at fbf29f7). How much of a run's memory was freed recently depends on what ran
before it, which is much of why runs of one query spread over tens of percent here; PostgreSQL's
own GROUP BY touches little memory and pays almost none of it."

printf '%s\n' "$REPORT"
if [ "$DOC" != /dev/null ]; then
    printf '%s\n' "$REPORT" >"$DOC"
    uldp_log "wrote $DOC"
fi

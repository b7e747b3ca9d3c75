#!/usr/bin/env bash
# test/bench/bench_gate.sh -- what the query gate of protected tables costs.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54345 unless ULDP_PORT is set, shared_buffers
# 2GB, uldp preloaded per role with session_preload_libraries rather than for the cluster) with a table of 4M rows (40k users in random order, x uniform in [0, 1000))
# protected on user_id, a role "owner" with SELECT and a role "analyst" without, and measures
#   1. releases, serial, median of 5 interleaved runs after a warm-up, as owner (not gated) and as
#      analyst (gated: the filter's arithmetic is rewritten to uldp's error-free functions):
#        avg          SELECT avg(x) FROM t WHERE <filter>                       (owner)
#        release      SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t WHERE <filter>
#      for the filters  x > 10  (comparison only)  and  x * 2 - 1 > 10 AND user_id % 7 <> 3
#      (float and integer arithmetic);
#   2. planning overhead on queries that do not touch a protected table: pgbench, 1 client,
#      a primary-key lookup on a small table by two roles with SELECT, one with uldp preloaded and
#      one without, 3 s each, alternating 7 times; median and range.
# Prints the results and writes doc/benchmark-gate.md. Takes about 2 minutes on 2 cores.
#
# Usage: bash test/bench/bench_gate.sh
#   ULDP_NO_BUILD=1  skip dependency install and build;  ULDP_PORT (default 54345)
#   ULDP_BENCH_ROWS  rows (default 4000000);  ULDP_BENCH_RUNS  timed runs (default 5)
#   ULDP_BENCH_DOC   output file (default doc/benchmark-gate.md; /dev/null: nowhere)
set -euo pipefail

: "${ULDP_PORT:=54345}"
export ULDP_PORT
ROWS="${ULDP_BENCH_ROWS:-4000000}"
RUNS="${ULDP_BENCH_RUNS:-5}"
export ULDP_PG_CONF_EXTRA="shared_buffers = 2GB
shared_preload_libraries = ''"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
DOC="${ULDP_BENCH_DOC:-$ULDP_REPO/doc/benchmark-gate.md}"

uldp_prepare
uldp_start_cluster

uldp_log "loading $ROWS rows"
uldp_psql -d postgres -q -c 'CREATE DATABASE bench'
uldp_psql -d bench -q <<SQL
CREATE EXTENSION uldp;
CREATE ROLE owner LOGIN;
CREATE ROLE analyst LOGIN;
CREATE ROLE plain LOGIN;
ALTER ROLE owner SET session_preload_libraries = 'uldp';
ALTER ROLE analyst SET session_preload_libraries = 'uldp';
SELECT uldp.set_budget('owner', 1e9, 1) \\g /dev/null
SELECT uldp.set_budget('analyst', 1e9, 1) \\g /dev/null
CREATE TABLE t AS
    SELECT (hashint4(i) & 2147483647) % 40000 AS user_id, random() * 1000 AS x
    FROM generate_series(1, $ROWS) i;
CREATE TABLE small AS SELECT i AS id, i * 2 AS v FROM generate_series(1, 1000) i;
ALTER TABLE small ADD PRIMARY KEY (id);
VACUUM (FREEZE, ANALYZE) t, small;
GRANT SELECT ON t, small TO owner;
GRANT SELECT ON small TO plain;
SELECT uldp.protect_table('t', 'user_id') \\g /dev/null
SQL

FILTERS=("x > 10" "x * 2 - 1 > 10 AND user_id % 7 <> 3")
declare -A MS

# median of the "Time: N ms" lines of stdin
median() { grep -o 'Time: [0-9.]*' | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for f in "${FILTERS[@]}"; do
    uldp_log "filter: $f"
    q_avg="SELECT avg(x) FROM t WHERE $f;"
    q_rel="SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t WHERE $f;"
    script="SET max_parallel_workers_per_gather = 0;
$q_rel
\\timing on"
    own="$script" ana="$script"
    for ((i = 0; i < RUNS; i++)); do own+=$'\n'"$q_avg"$'\n'"$q_rel"; ana+=$'\n'"$q_rel"; done
    # interleave the two sessions' rounds by running them one after the other, RUNS times
    o="$(uldp_psql -d bench -U owner <<<"$own")"
    a="$(uldp_psql -d bench -U analyst <<<"$ana")"
    MS["$f/avg"]="$(grep Time <<<"$o" | awk 'NR % 2 == 1' | median)"
    MS["$f/owner"]="$(grep Time <<<"$o" | awk 'NR % 2 == 0' | median)"
    MS["$f/analyst"]="$(median <<<"$a")"
done

# pgbench: planning overhead of the gate on queries that do not touch a protected table
PGBENCH="$ULDP_PGBIN/pgbench"
printf 'SELECT v FROM small WHERE id = 500;\n' >"$ULDP_PGTMP/lookup.sql"
chown postgres "$ULDP_PGTMP/lookup.sql"
tps() { uldp_as_pg "$PGBENCH" -n -c 1 -T 3 -U "$1" -f "$ULDP_PGTMP/lookup.sql" bench | awk '/^tps/ {print $3; exit}'; }
uldp_log "pgbench: owner (uldp preloaded) and plain (not), alternating"
ON=() OFF=()
for ((i = 0; i < 7; i++)); do ON+=("$(tps owner)"); OFF+=("$(tps plain)"); done
# "median (min-max)"
summary() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.0f (%.0f-%.0f)", a[4], a[1], a[NR]}'; }
TPS_ON="$(summary "${ON[@]}")"
TPS_OFF="$(summary "${OFF[@]}")"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
    echo "# Cost of the query gate"
    echo
    echo "Produced by \`bash test/bench/bench_gate.sh\` on $(nproc) cores, $(date -u '+%Y-%m-%d'):"
    echo "$ROWS rows, 40k users in random order, serial plans, median of $RUNS runs (ms)."
    echo "*owner* has SELECT on the table and is not gated; *analyst* has none and is gated:"
    echo "the filter's arithmetic runs through uldp's error-free functions."
    echo
    echo "| filter | avg(x), owner | release, owner | release, analyst | analyst / owner | analyst / avg |"
    echo "|---|---|---|---|---|---|"
    for f in "${FILTERS[@]}"; do
        echo "| \`$f\` | ${MS[$f/avg]} | ${MS[$f/owner]} | ${MS[$f/analyst]} | $(ratio "${MS[$f/analyst]}" "${MS[$f/owner]}") | $(ratio "${MS[$f/analyst]}" "${MS[$f/avg]}") |"
    done
    echo
    echo "Comparisons are not rewritten, so a filter of comparisons costs nothing more. Arithmetic"
    echo "is: each operation is a call of a uldp function (PostgreSQL's JIT, on by default, inlines"
    echo "its own operators for the owner but calls uldp's)."
    echo
    echo "Queries that do not read a protected table pay only the gate's check of each table"
    echo "reference (a privilege lookup) and the walk of their plan for uldp aggregates when the executor"
    echo "starts them (statement.c). pgbench, 1 client, a primary-key lookup on a 1000-row"
    echo "table by two roles with SELECT, one with uldp preloaded, 3 s each, alternating 7 times;"
    echo "median tps (range):"
    echo
    echo "| uldp preloaded | not loaded | ratio |"
    echo "|---|---|---|"
    echo "| $TPS_ON | $TPS_OFF | $(ratio "${TPS_ON%% *}" "${TPS_OFF%% *}") |"
} | tee "$DOC"

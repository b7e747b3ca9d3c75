#!/usr/bin/env bash
# test/bench/bench_mean.sh -- speed and memory of user_dp_mean against plain SQL.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54340 unless ULDP_PORT is set, shared_buffers
# 2GB so that every table stays cached, work_mem and jit left at their defaults), loads tables
# of 4M rows (int user ids in random order: 40k users, 1M users, 1 user; text ids: 40k users) and
# times, serial (max_parallel_workers_per_gather = 0) and parallel (= 1 and 2, and
# uldp.max_parallel_workers_per_gather alike, so that 2 workers are 2 on any machine), the median of 5 runs
# after one warm-up run (the warm-up is an EXPLAIN ANALYZE, which gives the plan notes) of
#   avg        SELECT avg(x) FROM t
#   two-level  SELECT avg(m) FROM (SELECT avg(x) m FROM t GROUP BY user_id) s
#   dp tau     SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t
#   dp bounds  SELECT user_dp_mean(x, user_id, 1.0, 0, 1000) FROM t
#   dp none    SELECT user_dp_mean(x, user_id, 1.0) FROM t
# Then the memory per user (peak RSS, VmHWM, of a fresh serial backend running one user_dp_mean
# over the 1M-user table minus the same over the 1-user table of the same size), and the error
# that uldp.max_state_memory = '16MB' gives on the 1M-user table.
# Prints a table on stdout and writes doc/benchmark.md. Takes about 3 minutes on 2 cores.
#
# Usage: bash test/bench/bench_mean.sh
#   ULDP_NO_BUILD=1       skip dependency install and build (benchmark what is installed)
#   ULDP_PORT             cluster port (default 54340)
#   ULDP_BENCH_ROWS       rows per table (default 4000000; smaller for a smoke test)
#   ULDP_BENCH_RUNS       timed runs per query (default 5)
#   ULDP_BENCH_DOC        where to write the results (default doc/benchmark.md; /dev/null: nowhere)
set -euo pipefail

: "${ULDP_PORT:=54340}"
export ULDP_PORT
ROWS="${ULDP_BENCH_ROWS:-4000000}"
RUNS="${ULDP_BENCH_RUNS:-5}"
export ULDP_PG_CONF_EXTRA="shared_buffers = 2GB
max_parallel_workers = 8"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
DOC="${ULDP_BENCH_DOC:-$ULDP_REPO/doc/benchmark.md}"
START_TIME=$SECONDS

uldp_bench_start
SO_STAMP_START="$(date -u -r "$ULDP_SO" '+%Y-%m-%d %H:%M:%S UTC')"

# ---------------------------------------------------------------------------------------------
uldp_log "loading tables of $ROWS rows"
bpsql -q <<SQL
SET max_parallel_workers_per_gather = 0;
CREATE TABLE t40k AS
    SELECT (hashint4(i) & 2147483647) % 40000 AS user_id, random() * 1000 AS x
    FROM generate_series(1, $ROWS) i;
CREATE TABLE t1m AS
    SELECT (hashint4(i) & 2147483647) % 1000000 AS user_id, random() * 1000 AS x
    FROM generate_series(1, $ROWS) i;
CREATE TABLE t1 AS
    SELECT 1 AS user_id, random() * 1000 AS x FROM generate_series(1, $ROWS) i;
CREATE TABLE t40k_text AS SELECT user_id::text AS user_id, x FROM t40k;
VACUUM (FREEZE, ANALYZE) t40k, t1m, t1, t40k_text;
SQL

declare -A NUSERS SIZE
for t in t40k t1m t1 t40k_text; do
    NUSERS[$t]="$(bpsql -qAt -c "SELECT count(DISTINCT user_id) FROM $t")"
    SIZE[$t]="$(bpsql -qAt -c "SELECT pg_size_pretty(pg_relation_size('$t'))")"
done

# bench_set TABLE WORKERS: in one session, an EXPLAIN (ANALYZE, TIMING OFF) warm-up of every query
# (it gives the plan notes), then RUNS rounds that each run every query once, timed by psql
# \timing: interleaved, so that load from other processes hits all the queries alike.
# Fills MS[TABLE/WORKERS/QUERY] (median ms) and TABLE_ROWS.
bench_set() {
    local t="$1" w="$2" out k i times plan med min max launched disk note
    local queries=()
    for k in "${!QUERY_NAMES[@]}"; do queries+=("$(query_text "${QUERY_NAMES[k]}" "$t")"); done
    out="$(
        {
            echo "SET max_parallel_workers_per_gather = $w; SET uldp.max_parallel_workers_per_gather = $w;"
            for k in "${!queries[@]}"; do
                echo "\\echo '@plan $k'"
                echo "EXPLAIN (ANALYZE, TIMING OFF) ${queries[k]};"
            done
            echo '\timing on'
            for ((i = 0; i < RUNS; i++)); do
                for k in "${!queries[@]}"; do echo "${queries[k]};"; done
            done
        } | bpsql -qAt
    )"
    for k in "${!queries[@]}"; do
        times="$(awk -v k="$k" -v n="${#queries[@]}" '/^Time: / { if (j++ % n == k) print $2 }' <<<"$out" | sort -g)"
        [ "$(wc -l <<<"$times")" -eq "$RUNS" ] || uldp_die "could not time: ${queries[k]}"
        med="$(awk -v n="$RUNS" 'NR == int((n + 1) / 2) { m = $1 } NR == int(n / 2) + 1 { m2 = $1 }
                                 END { printf "%.0f", (m + m2) / 2 }' <<<"$times")"
        min="$(head -n1 <<<"$times" | xargs printf '%.0f')"
        max="$(tail -n1 <<<"$times" | xargs printf '%.0f')"
        plan="$(awk -v k="$k" '/^@plan / { cur = $2; next } /^Time: / { exit } cur == k' <<<"$out")"
        launched="$(awk '{ if (match($0, /Workers Launched: [0-9]+/)) s += substr($0, RSTART + 18, RLENGTH - 18) }
                         END { print s + 0 }' <<<"$plan")"
        disk="$(awk '{ while (match($0, /Disk( Usage)?: [0-9]+kB/)) { d = substr($0, RSTART, RLENGTH);
                         gsub(/[^0-9]/, "", d); s += d; $0 = substr($0, RSTART + RLENGTH) } }
                     END { print s + 0 }' <<<"$plan")"
        note="workers launched: $launched"
        if [ "$disk" -gt 0 ]; then note+=", spilled $((disk / 1024)) MB"; fi
        if grep -q '^JIT:' <<<"$plan"; then note+=", JIT"; fi
        MS[$t/$w/${QUERY_NAMES[k]}]="$med"
        TABLE_ROWS+=("$(printf '| %s | %s | %s | %s | %s–%s | %s |' \
            "$t" "$w" "${QUERY_NAMES[k]}" "$med" "$min" "$max" "$note")")
    done
}

QUERY_NAMES=(avg two-level "dp tau" "dp bounds" "dp none")
query_text() { # query_text NAME TABLE
    case "$1" in
        avg) echo "SELECT avg(x) FROM $2" ;;
        two-level) echo "SELECT avg(m) FROM (SELECT avg(x) m FROM $2 GROUP BY user_id) s" ;;
        "dp tau") echo "SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM $2" ;;
        "dp bounds") echo "SELECT user_dp_mean(x, user_id, 1.0, 0, 1000) FROM $2" ;;
        "dp none") echo "SELECT user_dp_mean(x, user_id, 1.0) FROM $2" ;;
    esac
}

TABLE_ROWS=()     # markdown rows of the full table
SUMMARY_ROWS=()   # markdown rows of the ratio summary
declare -A MS
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for t in t40k t1m t40k_text; do
    for w in 0 1 2; do
        uldp_log "$t, max_parallel_workers_per_gather = $w"
        bench_set "$t" "$w"
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
SPEEDUP_ROWS=()   # markdown rows of the parallel speed-up
for t in t40k t1m t40k_text; do
    for w in 1 2; do
        row="$(printf '| %s | %s |' "$t" "$w")"
        for q in avg "dp tau" "dp bounds" "dp none"; do row+="$(printf ' %s |' "$(ratio "${MS[$t/0/$q]}" "${MS[$t/$w/$q]}")")"; done
        SPEEDUP_ROWS+=("$row")
    done
done
for t in t40k t1m t40k_text; do
    for w in 0 1 2; do
        avg="${MS[$t/$w/avg]}"
        two="${MS[$t/$w/two-level]}"
        row="$(printf '| %s | %s | %s | %s |' "$t" "${NUSERS[$t]}" "$w" "$avg")"
        row+="$(printf ' %s |' "$two")"
        for q in "dp tau" "dp bounds" "dp none"; do row+="$(printf ' %s |' "${MS[$t/$w/$q]}")"; done
        for q in "dp tau" "dp bounds" "dp none"; do row+="$(printf ' %s |' "$(ratio "${MS[$t/$w/$q]}" "$avg")")"; done
        for q in "dp tau" "dp bounds" "dp none"; do row+="$(printf ' %s |' "$(ratio "$two" "${MS[$t/$w/$q]}")")"; done
        SUMMARY_ROWS+=("$row")
    done
done

# ---------------------------------------------------------------------------------------------
# Memory: peak RSS of a fresh serial backend. Shared-buffer pages the scan touches count in RSS
# too; t1 has the same number of pages as t1m, so the difference is the aggregate's own memory.
# Three fresh backends per measurement; the median counts.
MEM_REPS=3
peak_kb() { # peak_kb TABLE ARGS -> "median min max" of VmHWM (kB) after one user_dp_mean
    local i
    for ((i = 0; i < MEM_REPS; i++)); do
        bpsql -qAt <<SQL | tail -n1
SET max_parallel_workers_per_gather = 0;
SELECT user_dp_mean(x, user_id, $2) FROM $1 \g /dev/null
SELECT substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s+(\d+) kB');
SQL
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'
}
MEM_ROWS=()
for mode in "dp tau:1.0, 0, 1000, 5" "dp bounds:1.0, 0, 1000" "dp none:1.0"; do
    name="${mode%%:*}" args="${mode#*:}"
    uldp_log "memory: $name"
    read -r one one_min one_max <<<"$(peak_kb t1 "$args")"
    read -r many many_min many_max <<<"$(peak_kb t1m "$args")"
    per_user="$(awk -v a="$many" -v b="$one" -v n="${NUSERS[t1m]}" 'BEGIN { printf "%.0f", (a - b) * 1024 / (n - 1) }')"
    MEM_ROWS+=("$(printf '| user_dp_mean(x, user_id, %s) | %s (%s–%s) | %s (%s–%s) | %s | %s |' \
        "$args" "$one" "$one_min" "$one_max" "$many" "$many_min" "$many_max" \
        "$(( (many - one) / 1024 ))" "$per_user")")
done

uldp_log "memory limit: uldp.max_state_memory = '16MB' on t1m"
LIMIT_OUT=""
LIMIT_ROWS=()
for w in 0 2; do
    out="$(bpsql -qAt -v ON_ERROR_STOP=0 2>&1 <<SQL || true
SET uldp.max_state_memory = '16MB';
SET max_parallel_workers_per_gather = $w;
SET uldp.max_parallel_workers_per_gather = $w;
\\echo 'bench=# SET uldp.max_state_memory = ''16MB''; SET max_parallel_workers_per_gather = $w;'
\\echo 'bench=# SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t1m;'
SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t1m;
SQL
)"
    LIMIT_OUT+="$out"$'\n'
    if grep -q 'ERROR: .*exceed uldp.max_state_memory' <<<"$out"; then
        LIMIT_ROWS+=("| $w | yes: clean error |")
    else
        LIMIT_ROWS+=("| $w | **no**: the release ran to completion |")
        # a smoke test with few rows may have too few users to reach 16MB
        uldp_warn "max_parallel_workers_per_gather = $w: uldp.max_state_memory = '16MB' did not stop the ${NUSERS[t1m]}-user release"
    fi
done

# ---------------------------------------------------------------------------------------------
CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
MEM_TOTAL="$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
PG_VERSION="$(bpsql -qAt -c 'SHOW server_version')"
SETTINGS="$(bpsql -qAt -F ' = ' -c "SELECT name, current_setting(name) FROM pg_settings
    WHERE name IN ('shared_buffers', 'work_mem', 'jit', 'max_parallel_workers', 'max_worker_processes')
    ORDER BY name" | sed 's/^/    /')"
COMMIT="$(git -C "$ULDP_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ULDP_REPO" status --porcelain -- src sql Makefile 2>/dev/null)" ]; then
    COMMIT+=" (with uncommitted changes in src/, sql/ or the Makefile)"
fi
BUILD_NOTE="built from the working tree by the script"
if [ "${ULDP_NO_BUILD:-0}" = 1 ]; then
    BUILD_NOTE="the installed build (ULDP_NO_BUILD=1), $ULDP_SO of $SO_STAMP_START"
fi
SO_STAMP_END="$(date -u -r "$ULDP_SO" '+%Y-%m-%d %H:%M:%S UTC')"
if [ "$SO_STAMP_END" != "$SO_STAMP_START" ]; then
    BUILD_NOTE+=". **WARNING: $ULDP_SO was reinstalled during the run ($SO_STAMP_END): the results mix two builds**"
    uldp_warn "$ULDP_SO was reinstalled during the run: the results mix two builds"
fi

REPORT="$(cat <<EOF
# uldp benchmark

Generated by \`bash test/bench/bench_mean.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in $((SECONDS - START_TIME)) s
(uldp commit $COMMIT, $BUILD_NOTE). Rerun that command to regenerate this file.
Grouped releases (GROUP BY) against PostgreSQL's own GROUP BY: [benchmark-grouped.md](benchmark-grouped.md)
(\`bash test/bench/bench_grouped.sh\`).
Releases over postgres_fdw shards against one node: [benchmark-shards.md](benchmark-shards.md)
(\`bash test/bench/bench_shards.sh\`; summarized in [scale-out.md](scale-out.md#measured)).

Machine: $(nproc) cores (nproc), $CPU_MODEL, $MEM_TOTAL RAM, Linux $(uname -r).
Load average (1, 5, 15 min) before the timed runs: $LOAD_BEFORE, after: $LOAD_AFTER
(anything above the benchmark's own ~1, or ~2 for the parallel runs, came from other processes).
PostgreSQL $PG_VERSION, throwaway cluster with (work_mem and jit at their defaults):

$SETTINGS

Tables: $ROWS rows each, \`x = random() * 1000\` (float8), rows in random user order,
\`user_id = (hashint4(i) & 2147483647) % nusers\` (int):

| table | user ids | distinct users | size |
|---|---|---|---|
| t40k | int, % 40000 | ${NUSERS[t40k]} | ${SIZE[t40k]} |
| t1m | int, % 1000000 | ${NUSERS[t1m]} | ${SIZE[t1m]} |
| t40k_text | text: t40k's ids as text | ${NUSERS[t40k_text]} | ${SIZE[t40k_text]} |
| t1 | int, all 1 (memory baseline) | ${NUSERS[t1]} | ${SIZE[t1]} |

Queries, per table and setting of max_parallel_workers_per_gather ("workers", and
\`uldp.max_parallel_workers_per_gather\` alike: by default it caps a Gather over releases over 262,144 users or more, by the
planner's estimate, at one fewer than the CPUs online), in one session:
one EXPLAIN (ANALYZE, TIMING OFF) warm-up of each, then $RUNS rounds running each once (interleaved),
timed by psql \`\\timing\`; the tables show the median:

- avg: \`SELECT avg(x) FROM t\`
- two-level: \`SELECT avg(m) FROM (SELECT avg(x) m FROM t GROUP BY user_id) s\`
- dp tau: \`SELECT user_dp_mean(x, user_id, 1.0, 0, 1000, 5) FROM t\`
- dp bounds: \`SELECT user_dp_mean(x, user_id, 1.0, 0, 1000) FROM t\`
- dp none: \`SELECT user_dp_mean(x, user_id, 1.0) FROM t\`

Every user_dp_mean run includes its budget charge (a background worker commits it).

## Summary (median ms)

| table | users | workers | avg | two-level | dp tau | dp bounds | dp none | dp/avg: tau | bounds | none | two-level/dp: tau | bounds | none |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${SUMMARY_ROWS[@]}")

## Parallel speed-up

The serial median over the median with 1 or 2 workers (on 2 cores, 1 worker and the leader use
both; with 2 the three processes share them):

| table | workers | avg | dp tau | dp bounds | dp none |
|---|---|---|---|---|---|
$(printf '%s\n' "${SPEEDUP_ROWS[@]}")

## All runs

| table | workers | query | median ms | min–max ms | plan (from the warm-up EXPLAIN ANALYZE) |
|---|---|---|---|---|---|
$(printf '%s\n' "${TABLE_ROWS[@]}")

## Memory per user

Peak resident set (VmHWM of /proc/self/status, read with pg_read_file) of a fresh serial backend
that ran one user_dp_mean over t1m (${NUSERS[t1m]} users) or over t1 (1 user, same number of pages,
so the shared buffers touched by the scan cancel out); median (min–max) of $MEM_REPS backends each:

| release | peak kB, t1 | peak kB, t1m | difference MB | bytes per user |
|---|---|---|---|---|
$(printf '%s\n' "${MEM_ROWS[@]}")

## The limit

\`SET uldp.max_state_memory = '16MB'\` (superuser-only; default 1GB), then the release over t1m
(${NUSERS[t1m]} users, whose per-user table needs well over 16 MB):

| workers | stopped by the limit? |
|---|---|
$(printf '%s\n' "${LIMIT_ROWS[@]}")

\`\`\`
$LIMIT_OUT
\`\`\`
EOF
)"

echo
echo "$REPORT" | sed -n '/^## Summary/,/^## All runs/p' | sed '$d'
echo "$REPORT" | sed -n '/^## Memory per user/,$p'
if [ "$DOC" != /dev/null ]; then
    mkdir -p "$(dirname "$DOC")"
    printf '%s\n' "$REPORT" >"$DOC"
    uldp_log "wrote $DOC"
fi
uldp_log "done in $((SECONDS - START_TIME)) s"

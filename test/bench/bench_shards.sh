#!/usr/bin/env bash
# test/bench/bench_shards.sh -- releases over postgres_fdw shards (uldp 0.9, doc/scale-out.md)
# against the same release on one node, in the same run.
#
# Starts a throwaway coordinator and 3 shards on this machine (test/lib/shards.sh). For each size
# in ULDP_BENCH_SHARD_ROWS (default 6M and 30M rows, over a tenth as many users) it loads the
# hash-partitioned, protected table visits (3 foreign partitions, uldp_shard on each shard), the
# same rows in visits_local on the coordinator, and visits_share, the rows of one partition, on
# the coordinator. Times, with jit = off, the median of RUNS runs after a warm-up, interleaved:
#   plain avg       SELECT avg(amount) FROM visits_local
#   bounded mean    SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM
#                   visits_local (one node), visits_share (one node, one shard's rows: the
#                   weak-scaling base), (SELECT * FROM visits OFFSET 0) v as the superuser
#                   (shipping every row, what uldp does when it cannot rewrite a release), and
#                   visits as an analyst without SELECT on it: rewritten into the sum of the
#                   partitions' pushed-down uldp_shard.user_sums (an async foreign scan per
#                   shard; the coordinator adds 3 sums); and one shard's sums alone, computed on
#                   its shard and fetched (the other shards idle): what each shard's part would
#                   take on a machine of its own
#   count           user_dp_count(user_id, 0.3), one node and the analyst (sums too)
#   unbounded mean  user_dp_mean(amount, user_id, 0.5): one node, one share, the analyst
#                   (merging the partitions' uldp_shard.user_values, each shard's own users'
#                   means, sorted, as sorted runs on the coordinator: the private interval needs
#                   every user's value), one partition's values alone, and uldp.user_dp_mean over
#                   the 3 partitions' values stored on the coordinator (its part)
#   grouped         by country (50 groups): PostgreSQL's avg and user_dp_mean on one node, and the
#                   analyst's over the shards (each shard returns each country's users with
#                   their values, once); user_dp_mean on one shard's rows (the weak-scaling base),
#                   one shard's pairs alone (computed, fetched and unpacked), and the release over
#                   all the pairs stored on the coordinator (its part, visits_pairs)
# The projections to 3 machines (one shard's part + the coordinator's) are the weak-scaling
# figures this machine can give: here the shards' scans compete for the same 2 cores.
# Writes doc/benchmark-shards.md.
#
# Usage: bash test/bench/bench_shards.sh
#   ULDP_NO_BUILD=1              benchmark what is installed
#   ULDP_BENCH_RUNS              timed runs per query (default 5)
#   ULDP_BENCH_SHARD_ROWS        sizes, in rows (default "6000000 30000000")
#   ULDP_BENCH_DOC               where to write the results (default doc/benchmark-shards.md)
#   ULDP_SHARD_PORT_BASE         ports (default 55100..55103)
set -euo pipefail

RUNS="${ULDP_BENCH_RUNS:-5}"
SIZES="${ULDP_BENCH_SHARD_ROWS:-6000000 30000000}"
export ULDP_PG_CONF_EXTRA="shared_buffers = 4GB"
export ULDP_SHARD_CONF_EXTRA="shared_buffers = 2GB"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=test/lib/shards.sh
source "$ULDP_REPO/test/lib/shards.sh"
DOC="${ULDP_BENCH_DOC:-$ULDP_REPO/doc/benchmark-shards.md}"

uldp_prepare
COMMIT="$(git -C "$ULDP_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
uldp_shards_start 3
for i in 0 1 2; do
    spsql "$i" -q -c 'CREATE EXTENSION uldp_shard' \
        -c 'GRANT USAGE ON SCHEMA uldp_shard TO uldp_owner' \
        -c 'GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA uldp_shard TO uldp_owner'
done
cpsql -q -c 'CREATE EXTENSION uldp' -c 'CREATE EXTENSION uldp_shard' -c 'CREATE ROLE analyst' \
    -c "SELECT uldp.set_budget('postgres', 1e9, 1)" -c "SELECT uldp.set_budget('analyst', 1e9, 1)" >/dev/null
for i in 0 1 2; do cpsql -q -c "ALTER SERVER shard_$i OPTIONS (ADD extensions 'uldp_shard')"; done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
RELEASE='SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM'
UNBOUNDED='SELECT user_dp_mean(amount, user_id, 0.5) FROM'
# name|query|role (empty: the superuser); the report below refers to them by index
QUERIES=(
    "plain avg (one node)|SELECT avg(amount) FROM visits_local|"
    "user_dp_mean with bounds, one node|$RELEASE visits_local|"
    "user_dp_mean with bounds, one node, one shard's rows|$RELEASE visits_share|"
    "user_dp_mean with bounds, shipping rows from 3 shards|$RELEASE (SELECT * FROM visits OFFSET 0) v|"
    "user_dp_mean with bounds by an analyst, adding 3 shards' sums|$RELEASE visits|analyst"
    "one shard's sums alone, pushed down and fetched|SELECT length(uldp_shard.user_sums(amount, user_id, 0, 100, true, 3, 0, NULL)) FROM visits_p0|"
    "user_dp_count, one node|SELECT user_dp_count(user_id, 0.3) FROM visits_local|"
    "user_dp_count by an analyst, adding 3 shards' counts|SELECT user_dp_count(user_id, 0.3) FROM visits|analyst"
    "user_dp_mean without bounds, one node|$UNBOUNDED visits_local|"
    "user_dp_mean without bounds, one node, one shard's rows|$UNBOUNDED visits_share|"
    "user_dp_mean without bounds by an analyst, merging 3 shards' sorted values|$UNBOUNDED visits|analyst"
    "one shard's sorted values alone, pushed down and fetched|SELECT length(uldp_shard.user_values(amount, user_id, -1e300, 1e300, true, 3, 0, NULL)) FROM visits_p0|"
    "uldp.user_dp_mean merging 3 stored partitions' values (the coordinator's part)|SELECT uldp.user_dp_mean(s, NULL::bigint, 0.5) FROM visits_states|"
    "grouped by country (50), plain avg (one node)|SELECT country, avg(amount) FROM visits_local GROUP BY country|"
    "grouped by country, user_dp_mean, one node|SELECT country, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits_local GROUP BY country|"
    "grouped by country, user_dp_mean by an analyst over 3 shards|SELECT country, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits GROUP BY country|analyst"
    "grouped by country, user_dp_mean, one node, one shard's rows|SELECT country, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits_share GROUP BY country|"
    "one shard's pairs alone, pushed down, fetched and unpacked|SELECT count(*) FROM (SELECT uldp.pair_users(p) FROM (SELECT country, uldp_shard.user_pairs(user_id, :max_rows, 'mean', amount, true, 0::float8, 100::float8) p FROM visits_p0 GROUP BY 1) g) u|"
    "grouped by country over 3 partitions' pairs stored on the coordinator (its part)|SELECT country, user_dp_mean(value, user_id, 0.5, 0, 100) FROM visits_pairs GROUP BY country|"
)
# the statement that runs query i, as its role
statement() {
    local role="${QUERIES[$1]##*|}" query="${QUERIES[$1]#*|}"
    query="${query%|*}"
    if [ -n "$role" ]; then
        printf '\\echo skip\nSET ROLE %s;\n\\echo q%s\n%s \\g /dev/null\n\\echo skip\nRESET ROLE;\n' "$role" "$1" "$query"
    else
        printf '\\echo q%s\n%s \\g /dev/null\n' "$1" "$query"
    fi
}

REPORT="# Releases over shards: speed against one node

<!-- written by test/bench/bench_shards.sh; do not edit by hand -->

uldp $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ULDP_REPO/uldp.control") (commit $COMMIT), run on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores shared by the coordinator and 3 shards.
\`bash test/bench/bench_shards.sh\`: rows over a tenth as many users, hash-partitioned by user into 3 postgres_fdw
partitions; median of $RUNS runs, ms, jit off; ratio: against the same release on one node with all the rows.
The analyst's release is the same SQL as on one node; uldp rewrites it (doc/scale-out.md)."

for ROWS in $SIZES; do
    USERS=$((ROWS / 10))
    cpsql -q -c 'DROP TABLE IF EXISTS visits, visits_local, visits_share, visits_states, visits_pairs'
    for i in 0 1 2; do spsql "$i" -q -c 'DROP TABLE IF EXISTS visits'; done
    uldp_shards_create_table visits
    uldp_shards_load visits "$USERS" "$ROWS"
    cpsql -q -c "CREATE TABLE visits_share AS SELECT * FROM visits_local
                     WHERE satisfies_hash_partition('visits'::regclass, 3, 0, user_id)" \
        -c "CREATE TABLE visits_pairs AS SELECT user_id, country, avg(LEAST(GREATEST(amount, 0), 100)) AS value
                FROM visits_local GROUP BY user_id, country" \
        -c 'VACUUM (FREEZE, ANALYZE) visits_local, visits_share, visits_pairs' \
        -c "SELECT uldp.protect_table('visits', 'user_id')" \
        -c "CREATE TABLE visits_states (s bytea)" -c "ALTER TABLE visits_states ALTER s SET STORAGE EXTERNAL" \
        -c "INSERT INTO visits_states
                SELECT uldp_shard.user_values(amount, user_id, -1e300, 1e300, true, 3, 0, NULL) AS s FROM visits_p0
                UNION ALL SELECT uldp_shard.user_values(amount, user_id, -1e300, 1e300, true, 3, 1, NULL) FROM visits_p1
                UNION ALL SELECT uldp_shard.user_values(amount, user_id, -1e300, 1e300, true, 3, 2, NULL) FROM visits_p2" >/dev/null
    for i in 0 1 2; do spsql "$i" -q -c 'VACUUM (FREEZE, ANALYZE) visits'; done

    uldp_log "timing $ROWS rows ($RUNS runs, interleaved)"
    out="$({
        # the worst case of the analyst's merge, checked before reading, is public and large
        echo "SET jit = off; SET uldp.max_partition_rows = $((ROWS * 2 / 3)); SET uldp.max_state_memory = '512GB';"
        echo "\\set max_rows $((ROWS * 2 / 3))"
        for i in "${!QUERIES[@]}"; do statement "$i"; done
        printf '%s\n' '\timing on'
        for ((r = 0; r < RUNS; r++)); do
            for i in "${!QUERIES[@]}"; do statement "$i"; done
        done
    } | cpsql -q 2>&1 | awk '/^q[0-9]+$/ {q = substr($0, 2)} /^skip$/ {q = ""} /^Time:/ && q != "" {print q, $2}')"
    declare -a MEDIAN
    for i in "${!QUERIES[@]}"; do
        MEDIAN[i]="$(awk -v q="$i" '$1 == q {print $2}' <<<"$out" | sort -n |
            awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
    done
    STATE_BYTES="$(cpsql -qAt -c "SELECT sum(length(s)) FROM visits_states")"
    PAIRS="$(cpsql -qAt -c "SELECT count(*) FROM visits_pairs")"
    REPORT+="

## $ROWS rows, $USERS users

| query | ms | ratio |
|---|---|---|"
    for i in "${!QUERIES[@]}"; do
        # each release against itself on one node with all the rows
        base=1
        [ "$i" -ge 6 ] && base=6
        [ "$i" -ge 8 ] && base=8
        [ "$i" -ge 13 ] && base=14
        REPORT+="
| ${QUERIES[i]%%|*} | ${MEDIAN[i]} | $(ratio "${MEDIAN[i]}" "${MEDIAN[base]}") |"
    done
    REPORT+="

Weak scaling (3 shards holding 3 times one shard's rows, against one node with one shard's rows; goal: at most 1.5):
- with bounds (the shards' sums): $(ratio "${MEDIAN[4]}" "${MEDIAN[2]}") on this machine; projected to 3 machines (one shard's
  sums; adding 3 sums on the coordinator takes no measurable time): $(ratio "${MEDIAN[5]}" "${MEDIAN[2]}");
- without bounds (the shards' sorted values, $STATE_BYTES bytes in all, $(awk -v b="$STATE_BYTES" -v u="$USERS" 'BEGIN {printf "%.1f", b / u}') a user):
  $(ratio "${MEDIAN[10]}" "${MEDIAN[9]}") on this machine; projected (one partition's values + the merge):
  $(awk -v a="${MEDIAN[11]}" -v b="${MEDIAN[12]}" 'BEGIN {printf "%.0f", a + b}') ms, $(ratio "$(awk -v a="${MEDIAN[11]}" -v b="${MEDIAN[12]}" 'BEGIN {print a + b}')" "${MEDIAN[9]}").

Grouped by country: the analyst's release over the shards takes $(ratio "${MEDIAN[15]}" "${MEDIAN[14]}") times the same release on one node
($(ratio "${MEDIAN[14]}" "${MEDIAN[13]}") times PostgreSQL's own GROUP BY there). Weak scaling: $(ratio "${MEDIAN[15]}" "${MEDIAN[16]}") on this machine;
projected to 3 machines (one shard's pairs + the coordinator's release over all the pairs, $PAIRS of them):
$(awk -v a="${MEDIAN[17]}" -v b="${MEDIAN[18]}" 'BEGIN {printf "%.0f", a + b}') ms, $(ratio "$(awk -v a="${MEDIAN[17]}" -v b="${MEDIAN[18]}" 'BEGIN {print a + b}')" "${MEDIAN[16]}")."
done
PLAN="$(cpsql -qAt -c "EXPLAIN (VERBOSE, COSTS OFF) $RELEASE visits")"
REPORT+="

On this machine the three shards and the coordinator share $(nproc) cores, so the shards' scans do not
run in parallel as they would on three machines.

The plan of the same release (EXPLAIN VERBOSE, as the superuser, whose release is rewritten too):

\`\`\`
$PLAN
\`\`\`"

printf '%s\n' "$REPORT"
if [ "$DOC" != /dev/null ]; then
    printf '%s\n' "$REPORT" >"$DOC"
    uldp_log "wrote $DOC"
fi

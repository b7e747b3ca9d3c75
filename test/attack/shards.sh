#!/usr/bin/env bash
# test/attack/shards.sh -- uldp over postgres_fdw shards (issue 16, doc/scale-out.md): the shard
# side as it stands, and the ways an analyst could reach a shard's exact per-user state.
#
# Starts its own coordinator and 3 shards (test/lib/shards.sh; ports ULDP_SHARD_PORT_BASE,
# default 55100, to + 3), each shard with uldp_shard and nothing else of uldp; the coordinator
# with uldp, postgres_fdw and uldp_shard, its servers listing only uldp_shard in "extensions".
# Table visits (user_id bigint, ...) is hash-partitioned by user_id into 3 foreign partitions,
# 60000 rows over 6000 users, and protected; visits_local holds the same rows on the coordinator.
# The analyst has no SELECT on either, a budget, and (part d) a user mapping.
#
# Checked:
#   a. (also: a release with bounds reads each shard's user_sums, and one without them its
#      user_values, both filtered by partition_member, which routes ids as PostgreSQL does, so
#      that rows written on a shard directly for another partition's users count once; bounds
#      that are parameters of a generic plan never use user_values)
#      the owner's per-partition user_rows, in a UNION ALL, is pushed down: EXPLAIN (VERBOSE)
#      shows 3 Async Foreign Scans whose remote SQL runs uldp_shard.user_rows; the states hold
#      exactly the users, rows and clamped sum of the same rows on one node (users are disjoint
#      across partitions, since the partitions are keyed by the privacy unit); and, in the seeded
#      test mode, uldp.user_dp_mean / _sum / _count merging those states release exactly what
#      user_dp_mean / _sum / _count release over the same rows on one node (each user's rows are
#      summed in the same order on its shard as locally: both tables were loaded in one order),
#      with one ledger row per statement;
#   b. an analyst cannot run user_rows, on the coordinator or through a foreign partition, nor
#      read a state with state_summary; none of it is executable by PUBLIC on a shard either;
#      The same releases written over the sharded table are rewritten (shardrewrite.c) into that
#      merge: EXPLAIN (VERBOSE) shows the pushdown, and they release what one node releases,
#      FILTER and WHERE included;
#   c. the analyst, without a user mapping, releases over the sharded table (the states are read
#      with the owner's mapping), charged once, and may not EXPLAIN it; what cannot be bounded
#      (uldp.max_state_memory) is refused before reading and charges nothing; what the shards cannot
#      compute (a quantile, a filter they cannot run, a join, bounds that are parameters) ships the
#      partitions' rows, read as the owner, with a NOTICE, and releases
#      what one node releases (seeded), charged once; the shards check their sizes before sending
#      any row, and a server that cannot run that check refuses; grouped releases run over the shards' per-(user, group)
#      values, as on one node (with negligible noise, the same values, also over text user ids
#      with users in several groups) and charged the same, and
#      their partitions' sizes are checked whether or not rows match, their shards work at once,
#      and keys declared public stay public over the pairs; a partition larger than
#      uldp.max_partition_rows by its size is refused by its shard whether or not rows match, and
#      a partition with use_remote_estimate (planning would ask its shard before the charge) too;
#      the owner's release that cannot be rewritten ships rows, with a NOTICE; a release over
#      partitions whose coordinator statistics say they are empty is pushed down all the same;
#   d. with a user mapping for the analyst: still no state, nor a group's pairs (gate; permission); releases run as
#      before, charged once;
#   e. a release run on a shard directly fails: shards have no uldp.
# Deterministic: no check depends on noise.
# shellcheck disable=SC2317 # functions called through ok_if
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"
# shellcheck source=test/lib/shards.sh
source "$ULDP_REPO/test/lib/shards.sh"

ULDP_SHARDS_AT_EXIT=attack_at_exit
A=uldp_attack_shards_analyst

uldp_shards_start 3 >/dev/null || exit 1
for i in 0 1 2; do
    spsql "$i" -q -c 'CREATE EXTENSION uldp_shard' \
        -c 'GRANT USAGE ON SCHEMA uldp_shard TO uldp_owner' \
        -c 'GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA uldp_shard TO uldp_owner' || exit 1
done
cpsql -q -c 'CREATE EXTENSION uldp' -c 'CREATE EXTENSION uldp_shard' \
    -c 'GRANT USAGE ON SCHEMA uldp_shard TO uldp_owner' \
    -c 'GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA uldp_shard TO uldp_owner' \
    -c "CREATE ROLE $A LOGIN" || exit 1
for i in 0 1 2; do
    cpsql -q -c "ALTER SERVER shard_$i OPTIONS (ADD extensions 'uldp_shard')" || exit 1
done
uldp_shards_create_table visits >/dev/null || exit 1
uldp_shards_load visits 6000 60000 >/dev/null || exit 1
cpsql -q -c "SELECT uldp.protect_table('visits', 'user_id')" \
    -c "SELECT uldp.protect_table('visits_local', 'user_id')" \
    -c "SELECT uldp.set_budget('$A', 100, 0.001)" >/dev/null || exit 1

cq() { cpsql -qAt "$@"; }
cq_as() { local role="$1"; shift; cpsql -qAt -U "$role" "$@"; }
# sqlstate_on K ROLE SQL: the SQLSTATE ROLE gets for SQL on cluster K (0 = coordinator)
sqlstate_on() {
    local k="$1" role="$2" db=coord
    [ "$k" -gt 0 ] && db=shard
    _uldp_shards_psql "$k" -d "$db" -U "$role" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "$3" 2>&1 \
        | sed -n 's/^ERROR: *\([0-9A-Z]\{5\}\):.*/\1/p' | head -1
}
ledger() { cq -c "SELECT count(*) || ' ' || coalesce(sum(epsilon), 0) FROM uldp.ledger_data WHERE role = '$A'"; }

# ---------------------------------------------------------------------------------------------
# a. pushdown of the state aggregate, and what the states hold
STATES="SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) AS s FROM visits_p0
        UNION ALL SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits_p1
        UNION ALL SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits_p2"
PLAN="$(cq_as uldp_owner -c "EXPLAIN (VERBOSE, COSTS OFF) $STATES")"
is "$(grep -c 'Async Foreign Scan' <<<"$PLAN")" 3 "a. the owner's states come from 3 async foreign scans"
is "$(grep -c 'Remote SQL: SELECT uldp_shard.user_rows(amount, user_id, 0' <<<"$PLAN")" 3 \
    "a. each shard runs uldp_shard.user_rows itself (the aggregate is pushed down)" || diag "$PLAN"
is "$(cq_as uldp_owner -c "SELECT sum(users) || ' ' || sum(rows) FROM (SELECT (uldp_shard.state_summary(s)).* FROM ($STATES) u) t")" \
   "$(cq -c "SELECT count(DISTINCT user_id) || ' ' || count(*) FROM visits_local")" \
   "a. the shards' states hold the same users and rows as one node"
is "$(cq_as uldp_owner -c "SELECT round(sum(total)::numeric, 6) FROM (SELECT (uldp_shard.state_summary(s)).* FROM ($STATES) u) t")" \
   "$(cq -c "SELECT round(sum(least(greatest(amount, 0), 50))::numeric, 6) FROM visits_local")" \
   "a. and the same sum of rows clamped to [0, 50]"

# the same releases from the merged states as from one node's rows, in the seeded test mode
merged() { # merged AGG LOWER UPPER PARAMS: the release AGG(PARAMS) merging the shards' states
    local s="uldp_shard.user_rows(amount, user_id, $2, $3, NULL)"
    echo "SELECT uldp.$1(s, NULL::bigint, $4) FROM (SELECT $s AS s FROM visits_p0
        UNION ALL SELECT $s FROM visits_p1 UNION ALL SELECT $s FROM visits_p2) u"
}
# seeded SQL: SQL's output in the seeded test mode; if it fails, a line naming SQL, so that two
# failing releases (over budget, say) never compare equal
seeded() { cq -c "SET uldp.test_seed = 11" -c "$1" 2>/dev/null || echo "failed: $1"; }
cq -c "SELECT uldp.set_budget('postgres', 100, 0.001)" >/dev/null || exit 1
# rows are clamped as locally: to the mean's bounds, else to +-1e300 (ULDP_MAX_MAGNITUDE)
for c in "user_dp_mean|0|100|0.5, 0, 100|amount, user_id, 0.5, 0, 100" \
         "user_dp_mean|-1e300|1e300|1|amount, user_id, 1" \
         "user_dp_sum|-1e300|1e300|0.5, 0, 2000|amount, user_id, 0.5, 0, 2000" \
         "user_dp_count|0|0|0.3|user_id, 0.3"; do
    IFS='|' read -r agg lo hi params local <<<"$c"
    is "$(seeded "$(merged "$agg" "$lo" "$hi" "$params")")" \
       "$(seeded "SELECT $agg($local) FROM visits_local")" \
       "a. uldp.$agg($params) over the shards' states releases what $agg($local) releases on one node"
done
is "$(cq -c "SELECT count(*) FROM uldp.ledger_data WHERE role = 'postgres' AND function LIKE 'user\_dp\_%'")" 8 \
   "a. each of these 8 statements was charged once"

# the same releases written over the sharded table: rewritten into the merge of pushed-down states
PLAN="$(cq -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits")"
is "$(grep -c 'Async Foreign Scan' <<<"$PLAN")" 3 "a. a release over the sharded table reads 3 async foreign scans" \
    || diag "$PLAN"
for r in 0 1 2; do
    is "$(grep -c "Remote SQL: SELECT uldp_shard.user_sums(amount, user_id, 0::double precision, 100::double precision, true, 3, $r, 3000000::bigint) FROM public.visits\$" <<<"$PLAN")" 1 \
        "a. partition $r's shard sums its own users' clipped means (bounds, uldp.max_partition_rows, its hash remainder)" || diag "$PLAN"
done
is "$(grep -c 'uldp.user_dp_mean' <<<"$PLAN")" 1 "a. and the coordinator adds the sums with uldp.user_dp_mean"
PLAN="$(cq -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT user_dp_mean(amount, user_id, 0.5) FROM visits")"
for r in 0 1 2; do
    is "$(grep -c "Remote SQL: SELECT uldp_shard.user_values(amount, user_id, (-1e+300)::double precision, 1e+300::double precision, true, 3, $r, 3000000::bigint) FROM public.visits\$" <<<"$PLAN")" 1 \
        "a. without bounds, partition $r's shard sends its own users' means, sorted, instead (the interval needs every user)" || diag "$PLAN"
done
PLAN="$(cq -c "PREPARE unbound(float8) AS SELECT user_dp_mean(amount, user_id, 0.5, 0, \$1) FROM visits" \
           -c "SET plan_cache_mode = force_generic_plan" -c "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE unbound(100)")"
is "$(grep -c 'Remote SQL' <<<"$PLAN") $(grep -c 'user_values' <<<"$PLAN")" "3 0" \
    "a. a bound that is a parameter of a generic plan never reads sorted values (their bounds are constants)" || diag "$PLAN"
# partition_member routes ids as PostgreSQL's hash partitioning does (bigint, integer and text keys)
cq -c "CREATE TABLE member_int (u integer) PARTITION BY HASH (u)" -c "CREATE TABLE member_text (u text) PARTITION BY HASH (u)" \
    >/dev/null || exit 1
is "$(cq -c "SELECT count(*) FROM generate_series(-30000, 30000) g, generate_series(0, 4) r
             WHERE uldp_shard.partition_member(g::bigint, 5, r) <> satisfies_hash_partition('visits'::regclass, 5, r, g::bigint)
                OR uldp_shard.partition_member(g::integer, 5, r) <> satisfies_hash_partition('member_int'::regclass, 5, r, g::integer)
                OR uldp_shard.partition_member('u' || g, 5, r) <> satisfies_hash_partition('member_text'::regclass, 5, r, 'u' || g)")" 0 \
   "a. partition_member agrees with satisfies_hash_partition on 60001 ids of three types, modulus 5"
# a row written on a shard directly, for a user id that hashes to another partition, is not counted
# twice: each shard keeps its own users (the sums and the sorted values)
STRAY="$(cq -c "SELECT g FROM generate_series(1000000, 1000100) g WHERE NOT satisfies_hash_partition('visits'::regclass, 3, 0, g::bigint) LIMIT 1")"
SEEN="$(cq -c "SELECT user_id FROM visits_local WHERE NOT satisfies_hash_partition('visits'::regclass, 3, 0, user_id) LIMIT 1")"
spsql 0 -q -c "INSERT INTO visits (user_id, amount, country, ordered_at) VALUES ($STRAY, 10, 'C1', '2026-03-01'), ($SEEN, 10, 'C1', '2026-03-01')" || exit 1
is "$(cq -c "SELECT count(*) FROM visits") $(seeded "SELECT user_dp_count(user_id, 0.3), user_dp_sum(amount, user_id, 0.5, 0, 2000) FROM visits")" \
   "$(cq -c "SELECT count(*) + 2 FROM visits_local") $(seeded "SELECT user_dp_count(user_id, 0.3), user_dp_sum(amount, user_id, 0.5, 0, 2000) FROM visits_local")" \
   "a. with 2 stray rows on shard 0 (one a new user), the sums count and add up each user of its own partition only"
is "$(seeded "SELECT user_dp_mean(amount, user_id, 0.5), user_dp_sum(amount, user_id, 0.5) FROM visits")" \
   "$(seeded "SELECT user_dp_mean(amount, user_id, 0.5), user_dp_sum(amount, user_id, 0.5) FROM visits_local")" \
   "a. and so do the sorted values of releases without bounds"
spsql 0 -q -c "DELETE FROM visits WHERE user_id IN ($STRAY, $SEEN) AND amount = 10 AND ordered_at = '2026-03-01' AND country = 'C1'" || exit 1
for c in "user_dp_mean(amount, user_id, 0.5, 0, 100)" "user_dp_mean(amount, user_id, 1)" \
         "user_dp_sum(amount, user_id, 0.5, 0, 2000)" "user_dp_count(user_id, 0.3)" \
         "user_dp_mean(amount > 20, user_id, 0.5, 0, 1) FILTER (WHERE country = 'C1'), user_dp_count(user_id, 0.3)" \
         "user_dp_mean(amount > 20, user_id, 0.5)" "user_dp_mean(amount > 20, user_id, 0.5, NULL, NULL)" \
         "user_dp_mean_ci(amount, user_id, 0.5, 0, 100)" "user_dp_sum_ci(amount, user_id, 0.5, 0, 2000)" \
         "user_dp_count_ci(user_id, 0.3)" "user_dp_range(amount, user_id, 0.5)" \
         "user_dp_mean(amount, user_id, 0.5, 0, 100, 5)" "user_dp_sum_ci(amount, user_id, 0.5)" \
         "user_dp_sum(amount, user_id, 0.5, 10, NULL)" "user_dp_range(amount, user_id, 0.5, 0, 100, 5)"; do
    is "$(seeded "SELECT $c FROM visits WHERE ordered_at >= '2026-02-01'")" \
       "$(seeded "SELECT $c FROM visits_local WHERE ordered_at >= '2026-02-01'")" \
       "a. SELECT $c over the sharded table releases what it releases on one node"
done

# ---------------------------------------------------------------------------------------------
# b. no way for the analyst to a state
is "$(sqlstate_on 0 "$A" 'SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits')" 42501 \
    "b. the analyst's user_rows over the protected table is refused"
is "$(sqlstate_on 0 "$A" "SELECT uldp_shard.state_summary('\\x'::bytea)")" 42501 \
    "b. the analyst may not use schema uldp_shard on the coordinator"
ok_if "b. the analyst's user_rows through a foreign partition is refused" \
    test -n "$(sqlstate_on 0 "$A" 'SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits_p0')"
cpsql -q -c "CREATE ROLE uldp_nobody" || exit 1
for i in 0 1 2; do
    spsql "$i" -q -c "CREATE ROLE uldp_nobody LOGIN" || exit 1
    is "$(sqlstate_on $((i + 1)) uldp_nobody 'SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits')" 42501 \
        "b. on shard $i a role without grants may not run user_rows"
done

# ---------------------------------------------------------------------------------------------
# c. the analyst's releases over the sharded table, without a user mapping: rewritten, the
#    states read with the owner's mapping, charged once before any shard is contacted
RELEASE='SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM'
L0="$(ledger)"
ok_if "c. the analyst's release over the sharded table runs" \
    test -n "$(cq_as "$A" -c "$RELEASE visits WHERE amount > 10")"
is "$(ledger)" "$(cq -c "SELECT ($(cut -d' ' -f1 <<<"$L0") + 1) || ' ' || ($(cut -d' ' -f2 <<<"$L0") + 0.5)")" \
    "c. and is charged once, 0.5"
is "$(sqlstate_on 0 "$A" "EXPLAIN $RELEASE visits")" 42501 "c. the analyst may not EXPLAIN it"
# the filters analysts write, made safe by the gate, still ship (uldp_shard has the safe functions;
# values without columns are computed once on the coordinator and shipped as parameters)
while IFS= read -r w; do
    ok_if "c. the analyst's release WHERE $w runs over the shards" \
        test -n "$(cq_as "$A" -c "$RELEASE visits WHERE $w")"
done <<'EOF_FILTERS'
ordered_at >= current_date - 400 AND ordered_at < current_date + interval '1 day'
lower(country) LIKE 'c1%' AND amount / (amount - 4) > 0
amount::int BETWEEN 5 AND 50 AND country IN ('C1', 'C2', 'C3')
EOF_FILTERS
# COALESCE, which postgres_fdw 15 does not ship, ships as the CASE it means: pushed down, no rows
# shipped, the release of one node
COALESCED="SELECT user_dp_sum(amount, user_id, 0.5, 0, 100) FROM %s WHERE coalesce(nullif(amount, 7), 0) > 1"
# shellcheck disable=SC2059 # the tables' names go into the query
ok_if "c. a COALESCE filter is pushed down (no NOTICE of shipped rows)" \
    test -z "$(cpsql -qAt -U "$A" -c "$(printf "$COALESCED" visits)" 2>&1 | grep NOTICE)"
# shellcheck disable=SC2059
is "$(seeded "$(printf "$COALESCED" visits)")" "$(seeded "$(printf "$COALESCED" visits_local)")" \
   "c. and releases what it releases on one node"
# shellcheck disable=SC2059
ok_if "c. the plan ships it as CASE" \
    grep -q "CASE WHEN" <<<"$(cq -c "EXPLAIN (VERBOSE, COSTS OFF) $(printf "$COALESCED" visits)")"
# date_part of a date column, a SQL function the planner would inline with the field's collation
# (which postgres_fdw does not ship), ships as the date_part of a timestamp it stands for, also in
# the owner's release (the gate makes the analyst's a safe function anyway)
DATE_PART="SELECT user_dp_sum(amount, user_id, 0.5, 0, 100) FROM %s WHERE date_part('month', ordered_at) = 3"
# shellcheck disable=SC2059
ok_if "c. the owner's date_part of a date column is pushed down" \
    grep -q "Remote SQL: SELECT uldp_shard.user_sums(.*date_part('month'::text, ordered_at::timestamp without time zone)" \
    <<<"$(cq -c "EXPLAIN (VERBOSE, COSTS OFF) $(printf "$DATE_PART" visits)")"
# shellcheck disable=SC2059
is "$(seeded "$(printf "$DATE_PART" visits)")" "$(seeded "$(printf "$DATE_PART" visits_local)")" \
   "c. and releases what it releases on one node"
# refused before reading, and not charged: what cannot be bounded
L0="$(ledger)"
is "$(sqlstate_on 0 "$A" "SELECT user_dp_mean(amount, user_id, 0.5), user_dp_count(user_id, 0.5) FROM visits")" 54000 \
    "c. two releases whose worst case exceeds uldp.max_state_memory are refused before reading (54000)"
is "$(sqlstate_on 0 "$A" "SET uldp.max_partition_rows = 4000000; SELECT user_dp_quantile(amount, user_id, 0.5, 0.5, 0, 100) FROM visits")" 54000 \
    "c. so is a release over the partitions' rows, each bounded by uldp.max_partition_rows (3 x 4M rows, 114 bytes each)"
is "$(ledger)" "$L0" "c. and neither was charged"
# what the shards cannot compute ships the partitions' rows, read as the owner, behind the shards'
# size checks: the same release as on one node (seeded here through the analyst's role settings)
cq -c "ALTER ROLE $A SET uldp.test_seed = 11" -c "CREATE TABLE shard_countries (code text, region text)" \
   -c "INSERT INTO shard_countries SELECT 'C' || i, 'R' || (i % 5) FROM generate_series(0, 49) i" \
   -c "GRANT SELECT ON shard_countries TO $A" >/dev/null || exit 1
while IFS='|' read -r what query; do
    L0="$(ledger)"
    OUT="$(cpsql -qAt -U "$A" -c "SET uldp.max_partition_rows = 30000" -c "$(printf "$query" visits)" 2>&1)"
    ok_if "c. $what ships rows, with a NOTICE" grep -q 'NOTICE:  uldp ships the rows of "visits" from its shards' <<<"$OUT"
    is "$(grep -v NOTICE <<<"$OUT" | grep -v '^DETAIL\|^HINT')" "$(cq_as "$A" -c "$(printf "$query" visits_local)")" \
       "c. and releases what it releases on one node"
    ok_if "c. and each release is charged once" test "$(cut -d' ' -f1 <<<"$(ledger)")" -eq $(($(cut -d' ' -f1 <<<"$L0") + 2))
done <<'EOF_SHIPPED'
a quantile (no merge)|SELECT user_dp_quantile(amount, user_id, 0.5, 0.5, 0, 100) FROM %s
a filter postgres_fdw cannot ship (a date column against a timestamptz)|SELECT user_dp_sum(amount, user_id, 0.5, 0, 100) FROM %s WHERE ordered_at > now() - interval '10 years'
a join with an ordinary table|SELECT user_dp_count(v.user_id, 0.5) FROM %s v JOIN shard_countries c ON c.code = v.country WHERE c.region = 'R1'
a mean of booleans whose bounds are parameters|PREPARE p(float8) AS SELECT user_dp_mean(amount > 20, user_id, 0.5, $1, 1) FROM %s; EXECUTE p(0)
EOF_SHIPPED
cq -c "ALTER ROLE $A RESET uldp.test_seed" >/dev/null || exit 1
is "$(sqlstate_on 0 "$A" "EXPLAIN SELECT user_dp_quantile(amount, user_id, 0.5, 0.5, 0, 100) FROM visits")" 42501 \
    "c. the analyst may not EXPLAIN a release that ships rows either"
# (charged: the shards check their sizes as the statement runs; the error depends on them only)
for w in "amount > 10" "amount > 1e9"; do
    is "$(sqlstate_on 0 "$A" "SET uldp.max_partition_rows = 1000; SELECT user_dp_quantile(amount, user_id, 0.5, 0.5, 0, 100) FROM visits WHERE $w")" 54000 \
        "c. shipping rows, with uldp.max_partition_rows = 1000, the shards refuse before sending any (WHERE $w)"
done
L0="$(ledger)"
cpsql -q -c "ALTER SERVER shard_1 OPTIONS (SET extensions 'cube')" || exit 1
is "$(sqlstate_on 0 "$A" "$RELEASE visits")" 42501 \
    "c. a server that does not list uldp_shard cannot check its partition's size: refused"
cpsql -q -c "ALTER SERVER shard_1 OPTIONS (SET extensions 'uldp_shard')" || exit 1
is "$(ledger)" "$L0" "c. and not charged"
# whether a release is pushed down does not depend on statistics: partitions that ANALYZE found empty
uldp_shards_create_table sparse >/dev/null || exit 1
cpsql -q -c 'ANALYZE sparse' -c "SELECT uldp.protect_table('sparse', 'user_id')" >/dev/null || exit 1
is "$(cq -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'sparse\_p_' AND reltuples = 0")" 3 \
    "c. the coordinator's statistics say sparse's 3 partitions are empty"
ok_if "c. the analyst's release over them is still pushed down and runs" \
    test -n "$(cq_as "$A" -c "SELECT user_dp_count(user_id, 0.1) FROM sparse")"
# grouped releases: the shards return each group's users with their values; the coordinator releases over them
# The same grouped releases over the shards and over visits_local, with epsilon 1e4: each count's
# discrete noise is 0 but with probability below 1e-40, and a mean's, sum's and boolean mean's Laplace
# noise (scales at most 1e-4, 0.1 and 1e-6) exceeds the tolerances below (0.01, 3, 0.001), over 50
# groups and both sides, with probability below 1e-10: the values agree unless the pairs differ.
GROUPED="SELECT country, user_dp_count(user_id, 1e4) n, user_dp_mean(amount, user_id, 1e4, 0, 100) m,
                user_dp_sum(amount, user_id, 1e4, 0, 1000) s, user_dp_count(user_id, 1e4) FILTER (WHERE amount > 50) f,
                user_dp_mean(amount > 50, user_id, 1e4) bm
         FROM %s WHERE amount > 5 GROUP BY country"
cq -c "SELECT uldp.set_budget('postgres', 1e9, 0.5)" >/dev/null || exit 1
# shellcheck disable=SC2059 # the tables' names go into the query
is "$(cq -c "SELECT count(*) || ' ' || max(abs(a.n - b.n)) || ' ' || (max(abs(a.m - b.m)) < 0.01) || ' ' ||
                    (max(abs(a.s - b.s)) < 3) || ' ' || max(abs(a.f - b.f)) || ' ' || (max(abs(a.bm - b.bm)) < 0.001)
             FROM ($(printf "$GROUPED" visits)) a JOIN ($(printf "$GROUPED" visits_local)) b USING (country)")" \
   "50 0 true true 0 true" \
   "c. grouped count, mean, sum, FILTER and a mean of booleans by country agree with one node's (50 groups)"
# The same over text user ids, each user with rows in several of 7 countries, all kept
# (uldp.max_groups_per_user = 7): the shards key a user by the hash of its id, as one node does.
# Epsilon 1e4 over k = 7 groups: each count's discrete noise is 0 but with probability below
# 1e-40, a mean's Laplace noise is below 1e-4 and a sum's (scale 1000 k / 1e4 = 0.7) exceeds 25
# with probability exp(-25 / 0.7) < 3e-16: the tolerances below (0.01, 50) fail with probability
# below 1e-14 over the 7 groups and both sides, and a user lost or counted twice moves a count.
for i in 0 1 2; do
    spsql "$i" -q -U uldp_owner -c "CREATE TABLE public.tv (user_id text, amount float8, country text)" || exit 1
done
cpsql -q -c "CREATE TABLE tv (user_id text, amount float8, country text) PARTITION BY HASH (user_id)" \
    -c "CREATE TABLE tv_local (LIKE tv)" || exit 1
for i in 0 1 2; do
    cpsql -q -c "CREATE FOREIGN TABLE tv_p$i PARTITION OF tv FOR VALUES WITH (MODULUS 3, REMAINDER $i)
                     SERVER shard_$i OPTIONS (schema_name 'public', table_name 'tv')" \
        -c "ALTER FOREIGN TABLE tv_p$i OWNER TO uldp_owner" || exit 1
done
TV_ROWS="SELECT 'user-' || ((hashint4(g) & 2147483647) % 3000), ((hashint4(g + 1) & 2147483647) % 10000) / 100.0,
                'C' || ((hashint4(g + 3) & 2147483647) % 7) FROM generate_series(1, 30000) g"
cpsql -q -c "ALTER TABLE tv OWNER TO uldp_owner" -c "ALTER TABLE tv_local OWNER TO uldp_owner" \
    -c "INSERT INTO tv $TV_ROWS" -c "INSERT INTO tv_local $TV_ROWS" -c "ANALYZE tv_local" \
    -c "SELECT uldp.protect_table('tv', 'user_id')" -c "SELECT uldp.protect_table('tv_local', 'user_id')" >/dev/null || exit 1
for i in 0 1 2; do spsql "$i" -q -c 'ANALYZE tv' || exit 1; done
TEXT_IDS="SELECT country, user_dp_count(user_id, 1e4) n, user_dp_mean(amount, user_id, 1e4, 0, 100) m,
                 user_dp_sum(amount, user_id, 1e4, 0, 1000) s FROM %s GROUP BY 1"
# shellcheck disable=SC2059 # the tables' names go into the query
is "$(cq -c "SET uldp.max_partition_rows = 30000" -c "SET uldp.max_groups_per_user = 7" \
         -c "SELECT count(*) || ' ' || max(abs(a.n - b.n)) || ' ' || (max(abs(a.m - b.m)) < 0.01) || ' ' ||
                    (max(abs(a.s - b.s)) < 50)
             FROM ($(printf "$TEXT_IDS" tv)) a JOIN ($(printf "$TEXT_IDS" tv_local)) b USING (country)")" \
   "7 0 true true" \
   "c. over text user ids, each user in several countries, all kept: the same counts, means and sums as one node's"
ok_if "c. and computed by the shards (user_pairs over text ids, pushed down)" \
    grep -q "Remote SQL: SELECT country, uldp_shard.user_pairs(user_id, 30000::bigint" \
    <<<"$(cq -c "SET uldp.max_partition_rows = 30000" -c "EXPLAIN (VERBOSE, COSTS OFF) $(printf "$TEXT_IDS" tv)")"
PLAN="$(cq -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT country, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits GROUP BY country")"
is "$(grep -c "Remote SQL: SELECT country, uldp_shard.user_pairs(user_id, 3000000::bigint, 'mean'::text, amount, true, 0::double precision, 100::double precision) FROM public.visits GROUP BY 1\$" <<<"$PLAN")" 3 \
    "c. each shard groups its rows by country and returns each country's users with their values, once" || diag "$PLAN"
is "$(grep -c 'CTE uldp_shard_groups' <<<"$PLAN") $(grep -c 'CTE Scan on uldp_shard_groups' <<<"$PLAN") $(grep -c 'ProjectSet' <<<"$PLAN") $(grep -c 'Output: uldp.pair_users(groups_1.pairs), groups_1.key_1, uldp.pair_values(groups_1.pairs, 1)' <<<"$PLAN")" "1 2 1 1" \
    "c. the coordinator keeps the countries' values and reads them back as one row per user and country" || diag "$PLAN"
is "$(grep -c 'Output: NULL::bigint, groups.key_1, NULL::double precision' <<<"$PLAN")" 1 \
    "c. after one row without user per country, so that PostgreSQL's hashed GROUP BY meets every country first" || diag "$PLAN"
is "$(grep -c 'CTE uldp_shard_pairs' <<<"$PLAN") $(grep -c 'CTE Scan on uldp_shard_pairs' <<<"$PLAN")" "1 2" \
    "c. the coordinator keeps the pairs for both readings (to register the groups, then to release)" || diag "$PLAN"
is "$(grep -c '[>] *Foreign Scan' <<<"$PLAN") $(grep -c 'Async Foreign Scan' <<<"$PLAN")" "0 9" \
    "c. all 9 foreign scans (the pairs, and the size checks of both readings) are asynchronous: the shards work at once" || diag "$PLAN"
is "$(grep -c "Remote SQL: SELECT uldp_shard.partition_check(3000000::bigint) FROM public.visits WHERE ((ctid < '(0,0)'))" <<<"$PLAN")" 6 \
    "c. and checks its partition's size before any pair is read (for the release and for the registration of groups)"
L0="$(ledger)"
ok_if "c. the analyst's grouped release over the shards runs (HAVING, ORDER BY, LIMIT)" \
    test -n "$(cq_as "$A" -c "SET uldp.max_partition_rows = 30000" -c "SELECT country, user_dp_count(user_id, 0.5) AS users,
        user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits WHERE ordered_at >= current_date - 400
        GROUP BY country HAVING user_dp_count(user_id, 0.5) > 50 ORDER BY users DESC LIMIT 3")"
is "$(ledger)" "$(cq -c "SELECT ($(cut -d' ' -f1 <<<"$L0") + 1) || ' ' || ($(cut -d' ' -f2 <<<"$L0") + 1.75)")" \
    "c. charged once, as on one node: two counts, a mean and the choice of groups (1.75)"
# a group's value is at most 1 GB: at uldp.max_partition_rows = 50M users with two values each
# (a mean and a sum) it could not be sent, so the release ships rows, with the reason
OUT="$(cq -c "SET uldp.max_partition_rows = 50000000" -c "SET uldp.max_state_memory = '512GB'" \
          -c "SELECT country, user_dp_mean(amount, user_id, 1e4, 0, 100), user_dp_sum(amount, user_id, 1e4, 0, 1000)
              FROM visits GROUP BY 1" 2>&1)"
ok_if "c. a grouped release whose groups' values could exceed 1 GB ships rows, saying why" \
    grep -q "DETAIL:  A group could hold more users (uldp.max_partition_rows = 50000000) than a shard can send in one value of at most 1 GB, with 2 values per user." <<<"$OUT" || diag "$OUT"
# the release's memory is bounded by the pairs the 3 partitions may hold, counted once (the pairs
# read the shards' groups twice, the second time for one row without user per group); with
# uldp.max_partition_rows = 50M it is refused before reading, and the detail gives the bound
MEMORY_BOUND="SET uldp.max_partition_rows = 50000000;
              SELECT country, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits GROUP BY 1"
OUT="$(cpsql -qAt -U "$A" -v VERBOSITY=verbose -c "$MEMORY_BOUND" 2>&1)"
is "$(sed -n 's/^DETAIL: *Its tables can hold up to \([0-9]*\) rows.*/\1/p' <<<"$OUT" | head -1)" 150000000 \
    "c. a grouped release's memory bound over the shards: 3 x uldp.max_partition_rows pairs, before reading" ||
    diag "$OUT"
for w in "amount > 10" "amount > 1e9"; do
    is "$(sqlstate_on 0 "$A" "SET uldp.max_partition_rows = 1000; SELECT country, user_dp_count(user_id, 0.5) FROM visits WHERE $w GROUP BY 1")" 54000 \
        "c. grouped, with uldp.max_partition_rows = 1000, the shards refuse (WHERE $w)"
done
cpsql -q -c "SELECT uldp.set_public_groups('visits', 'country', ARRAY['C1', 'C2', 'none'])" \
    -c "SELECT uldp.set_public_groups('visits_local', 'country', ARRAY['C1', 'C2', 'none'])" >/dev/null || exit 1
# with epsilon 1e4 each of the 6 counts' discrete noise is 0 but with probability below 1e-40:
# the counts agree unless the groups differ
PUBLIC_KEYS="SET uldp.max_partition_rows = 30000; SELECT country, user_dp_count(user_id, 1e4) FROM %s GROUP BY 1 ORDER BY 1"
cq -c "SELECT uldp.set_budget('$A', 1e9, 0.5)" >/dev/null || exit 1
# shellcheck disable=SC2059 # the tables' names go into the query
OUT="$(cpsql -qAt -U "$A" -c "$(printf "$PUBLIC_KEYS" visits)" 2>&1)"
is "$OUT" "$(cq_as "$A" -c "$(printf "$PUBLIC_KEYS" visits_local)")" \
    "c. grouped by keys declared public: over the shards' pairs (no NOTICE: no rows shipped), as on one node (epsilon 1e4)"
is "$(cut -d'|' -f1 <<<"$OUT" | tr '\n' ' ')" "C1 C2 none " "c. exactly the keys declared, the empty one included"
# a grouped release the shards cannot compute ships the rows once (both readings, registration
# and release, read them from a CTE), and the keys declared public stay so; epsilon 1e4
GROUPED_QUANTILE="SET uldp.max_partition_rows = 30000; SELECT country, user_dp_quantile(amount, user_id, 1e4, 0.5, 0, 100) FROM %s GROUP BY 1 ORDER BY 1"
# shellcheck disable=SC2059 # the tables' names go into the query
OUT="$(cpsql -qAt -U "$A" -c "$(printf "$GROUPED_QUANTILE" visits)" 2>&1)"
ok_if "c. a grouped quantile ships rows, with a NOTICE" grep -q 'NOTICE:  uldp ships the rows of "visits" from its shards' <<<"$OUT"
is "$(grep -v NOTICE <<<"$OUT" | grep -v '^DETAIL\|^HINT' | cut -d'|' -f1 | tr '\n' ' ')" "C1 C2 none " \
   "c. exactly the keys declared, the empty one included"
# In the groups with users (about 1200 rows of about 120 users each), the two releases, drawn in
# the order of each plan's groups, lie within 1 of each other: at epsilon 1e4 the exponential
# mechanism picks a point whose user-weighted rank is off by a tenth of a user (a row, about 0.08
# apart in value) with probability below exp(-1e4 * 0.1 / 2) times the grid's size, far below 1e-6.
# The empty group's is drawn uniformly over [0, 100].
LOCAL="$(cq_as "$A" -c "$(printf "$GROUPED_QUANTILE" visits_local)")"
is "$(awk -F'|' 'NR == FNR {q[$1] = $2; next} $1 != "none" {d = $2 - q[$1]; print $1, (d < 1 && d > -1)}' \
        <(grep -v NOTICE <<<"$OUT" | grep -v '^DETAIL\|^HINT') <(cat <<<"$LOCAL") | tr '\n' ' ')" \
   "C1 1 C2 1 " "c. and in the groups with users, what it releases on one node (within 1, epsilon 1e4)"
cpsql -q -c "SELECT uldp.set_public_groups('visits', 'country', NULL::text[])" \
    -c "SELECT uldp.set_public_groups('visits_local', 'country', NULL::text[])" >/dev/null || exit 1
# remote estimates would contact a shard before the charge: refused while a partition uses them
cpsql -q -c "ALTER FOREIGN TABLE visits_p1 OPTIONS (ADD use_remote_estimate 'true')" || exit 1
L0="$(ledger)"
is "$(sqlstate_on 0 "$A" "$RELEASE visits")" 42501 "c. with use_remote_estimate on a partition, a release is refused"
is "$(ledger)" "$L0" "c. and not charged"
cpsql -q -c "ALTER FOREIGN TABLE visits_p1 OPTIONS (DROP use_remote_estimate)" || exit 1
# a partition larger than uldp.max_partition_rows by its size: refused by its shard, whatever the rows
for w in "amount > 10" "amount > 1e9"; do
    is "$(sqlstate_on 0 "$A" "SET uldp.max_partition_rows = 1000; $RELEASE visits WHERE $w")" 54000 \
        "c. with uldp.max_partition_rows = 1000, the shards refuse (WHERE $w)"
done
# the owner may read the rows: what cannot be rewritten ships them, with a NOTICE
ok_if "c. the owner's release with a filter the shards cannot run ships rows, with a NOTICE" \
    grep -q 'NOTICE:  uldp ships the rows of "visits" from its shards' \
    <(cpsql -qAt -U uldp_owner -c "$RELEASE visits WHERE random() < 2" 2>&1)

# ---------------------------------------------------------------------------------------------
# d. the analyst with a user mapping (as a careless DBA might give)
for i in 0 1 2; do
    cpsql -q -c "CREATE USER MAPPING FOR $A SERVER shard_$i OPTIONS (user 'uldp_owner', password_required 'false')" \
        || exit 1
done
is "$(sqlstate_on 0 "$A" 'SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits')" 42501 \
    "d. with a user mapping, user_rows over the protected table is still refused"
is "$(sqlstate_on 0 "$A" 'SELECT uldp_shard.user_rows(amount, user_id, 0, 50, NULL) FROM visits_p0')" 42501 \
    "d. and through a foreign partition (no SELECT on it)"
# a grouped release's per-group users with their exact values, read back by the functions anyone
# may call (uldp.pair_users, uldp.pair_values)
for t in visits visits_p0; do
    is "$(sqlstate_on 0 "$A" "SELECT country, uldp.pair_users(p), uldp.pair_values(p, 1) FROM (SELECT country,
            uldp_shard.user_pairs(user_id, NULL, 'total', amount, true, NULL::float8, NULL::float8) p FROM $t GROUP BY 1) g")" 42501 \
        "d. and so is user_pairs over $t, unpacked"
done
is "$(sqlstate_on 0 "$A" 'SELECT count(*) FROM visits_p1')" 42501 \
    "d. and so is reading a foreign partition"
L1="$(ledger)"
ok_if "d. a release over the sharded table still runs" \
    test -n "$(cq_as "$A" -c "$RELEASE visits")"
is "$(ledger)" "$(cq -c "SELECT ($(cut -d' ' -f1 <<<"$L1") + 1) || ' ' || ($(cut -d' ' -f2 <<<"$L1") + 0.5)")" \
    "d. and is charged once"

# ---------------------------------------------------------------------------------------------
# e. shards release nothing
is "$(sqlstate_on 1 postgres "$RELEASE visits")" 42883 "e. a release on a shard fails: no uldp there"

attack_done

#!/usr/bin/env bash
# test/attack/workers_memory.sh -- two ways around "pay before reading" that a review found in the
# first 0.4 code, kept as regression tests.
#
#   1. Parallel workers: a release in a hashed subplan of a parallel scan is built by every
#      process that evaluates the filter (the leader and each worker), each with fresh noise. Every
#      such release must be charged: the ledger must grow by at least as many charges as the
#      query shows distinct releases (the leader's charge may go unused: more, never fewer).
#   2. Memory of vector releases: on a one-page protected table, user_dp_sgd over a constant
#      vector of 40000 features, with a filter that a single user's row matches or not. Before the
#      fix the first matching row allocated far more than the bound planned from the table's size,
#      and the final function's memory check failed after the charge only when a row matched.
#      Now both outcomes are of the same class (both models, or both refused before the charge)
#      and the role with budget is charged exactly once per statement.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $A LOGIN" || exit 1
sql -c "SELECT uldp.set_budget('$A', 1000, 0.5)" >/dev/null || exit 1

# ---------------------------------------------------------------------------------------------
# 1. parallel workers
sql -c "CREATE TABLE prot (uid int, x float8)" \
    -c "INSERT INTO prot SELECT u % 50, u % 100 FROM generate_series(1, 500) u" \
    -c "SELECT uldp.protect_table('prot', 'uid')" \
    -c "CREATE TABLE pub (v int)" \
    -c "INSERT INTO pub SELECT i % 101 FROM generate_series(1, 300000) i" \
    -c "ALTER TABLE pub SET (parallel_workers = 2)" -c "ALTER TABLE prot SET (parallel_workers = 0)" \
    -c "GRANT SELECT ON pub TO $A" -c "VACUUM ANALYZE pub, prot" >/dev/null || exit 1
PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = on;"
QUERY="SELECT v, count(*) FROM pub
WHERE v < 0 OR v IN (SELECT (round(user_dp_mean(x, uid, 0.5, 0, 100) * 1000))::int % 101 FROM prot)
GROUP BY v"
# (EXPLAIN as the superuser: the gate refuses it to the analyst)
plan="$(sql -c "$PARALLEL" -c "EXPLAIN (COSTS OFF) $QUERY" 2>&1)"
diag "$plan"
if grep -q 'Parallel Seq Scan on pub' <<<"$plan" && grep -q 'hashed SubPlan' <<<"$plan"; then
    ok 0 "1. the plan scans pub in parallel and builds the release in a hashed subplan"
else
    ok 1 "1. the plan scans pub in parallel and builds the release in a hashed subplan"
    diag "$plan"
fi
rows0="$(ledger_rows "$A")"
out="$(sql_as "$A" -c "$PARALLEL" -c "$QUERY" 2>&1)"
releases="$(grep -c '|' <<<"$out")"
charges=$(($(ledger_rows "$A") - rows0))
diag "1. $releases distinct releases in the output, $charges charges"
ok_if "1. every release a process built was charged ($charges charges >= $releases releases)" \
    test "$charges" -ge "$releases" -a "$releases" -ge 1

# ---------------------------------------------------------------------------------------------
# 2. memory of vector releases on a one-page protected table
sql -c "CREATE TABLE vprot (uid int, x float8)" \
    -c "INSERT INTO vprot SELECT u, u FROM generate_series(1, 100) u" \
    -c "SELECT uldp.protect_table('vprot', 'uid')" >/dev/null || exit 1
is "$(sql -c "SELECT pg_relation_size('vprot') / current_setting('block_size')::int")" "1" \
    "2. vprot is one page"
V="$(sql -c "SELECT array_fill(1::float8, ARRAY[40000])::text")"
sgd() { # sgd FILTER: the outcome class of the release, and its charge
    local rows0 out class
    rows0="$(ledger_rows "$A")"
    out="$(sql_as "$A" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c \
        "SELECT user_dp_sgd('$V'::float8[], 1.0, uid, 1.0, 1e-6) IS NOT NULL FROM vprot WHERE $1" 2>&1)"
    class="$(sed -n 's/^ERROR: *\([0-9A-Z]\{5\}\):.*/ERROR \1/p' <<<"$out" | head -1)"
    [ -n "$class" ] || class="$(grep -x 't' <<<"$out" | head -1)"
    echo "$class charged $(($(ledger_rows "$A") - rows0))"
}
no_match="$(sgd 'uid = 7 AND x > 1000')"
match="$(sgd 'uid = 7 AND x > 5')"
is "$match" "$no_match" "2. user 7's row matching or not gives the same outcome class and charge"
ok_if "2. the outcome is a model, charged once ($match)" test "$match" = "t charged 1"

attack_done

#!/usr/bin/env bash
# test/attack/grouped.sh -- grouped releases (GROUP BY, joins) on a protected table: can an
# analyst without SELECT on it learn about one user through the groups, or release without
# paying, or pay less than the statement's cost?
#
# The protected table people has 10000 users, one row each (user_id, amount, tid = 'u' || id).
# The analyst has no SELECT on it, a budget, and owns two ordinary tables: map (user_id, g), 50
# rows per user, g = 1..50, and slow (i), 3000 rows, to make a statement slow.
#
# Attacks, each checked:
#   a. GROUP BY the privacy unit column (also through a join alias): refused (42501), nothing charged.
#   b. GROUP BY a near-unique key, one user per group: user_id * 7 + 1, the text copy tid, and the
#      joined ordinary table's copy of the id (map.user_id): no row is released, 7 runs of each,
#      4 users selected (WHERE user_id <= 4), each run charged once.
#   c. a join that puts every user in 50 groups (map, GROUP BY g): with k = 1 the released counts
#      sum to about n = 10000 (each user counted once), with uldp.max_groups_per_user = 5 to about
#      5 n, never to 50 n; all 50 groups are released.
#   d. the protected table joined with itself or with another protected table: refused (42501).
#   e. one statement releasing 30 groups is charged exactly once (one ledger row, epsilon_spent
#      grows by exactly the aggregates' epsilons plus the selection's 0.25), also in BEGIN ...
#      ROLLBACK, and when the statement is cancelled while it reads (statement_timeout, and
#      pg_cancel_backend from another session).
#   f. a role whose budget is too small is refused (53000) before reading, with the same error
#      text whatever its filter selects, and charged nothing.
#   g. EXPLAIN and EXPLAIN ANALYZE of a grouped release: refused (42501), nothing charged.
#   h. the grouped rewrite's functions called by hand on the protected table (group_registry,
#      group_key, group_member with a forged registry, and the memo of keys, whose lookup would
#      make a row's filter depend on other rows' values): refused (42501), nothing charged.
#   i. the memory bound of a grouped release, checked before reading, counts the rows its table
#      can hold once, as an ungrouped release does (not again for its registration).
#
# False failures (checks that can fail although uldp is right), derived:
#   b. A group held by one user appears with probability P(1 + Z >= T), Z discrete Laplace with
#      q = exp(-0.25) (k = 1), T = 73 at delta 1e-8 (src/selection.c): P(Z >= 72) = q^72 / (1 + q)
#      = 8.6e-9 (the spend margin of 2^-40 changes neither T nor this). 21 runs x 4 groups:
#      P(some row) <= 84 x 8.6e-9 = 7.2e-7.
#   c. Every user keeps exactly k of its 50 groups, so the groups' true counts sum to exactly k n;
#      each released count is that plus Z, discrete Laplace at epsilon / k = 1 / k. A sum of 50
#      independent Z has P(|sum| >= 80) <= 2 x 1.5e-12 at epsilon 1 and P(|sum| >= 450) <= 3.3e-14
#      at epsilon 0.2 (Chernoff bound with E[e^(tZ)] = (1 - q)^2 / ((1 - q e^t)(1 - q e^-t)),
#      minimised over t). Selection runs here with uldp.group_selection_epsilon = 1. At k = 1
#      (T = 20 at delta 1e-8) a group's true count is Binomial(10000, 1/50), <= 40 with
#      probability <= exp(-10000 KL(0.004 || 0.02)) < 1e-42, and a group of >= 41 users misses
#      with P(Z <= -22) = e^-22 / (1 + e^-1) < 2.1e-10: 50 groups, < 1.1e-8. At k = 5 (selection
#      at epsilon 0.2 and delta 2e-9 per group, T = 99) the count is Binomial(10000, 1/10), <= 500
#      with probability < 1e-72, and a group of > 500 misses with P(Z <= -402) < 1e-35.
#   e. The 30 groups of user_id % 30 hold 333 or 334 users: P(a group misses) = P(Z <= -261) at
#      q = exp(-0.25), < 3e-29; 30 groups, twice: < 1e-27.
#   In all, P(false failure) <= 7.2e-7 + 3e-12 + 3.3e-14 + 1.1e-8 + 1e-27 < 7.4e-7 <= 1e-6.
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
P="${ATTACK_PREFIX}poor"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $A LOGIN" -c "CREATE ROLE $P LOGIN" || exit 1
sql -c 'CREATE TABLE public.people (user_id int, amount float8, tid text)' \
    -c "INSERT INTO public.people SELECT u, u % 100, 'u' || u FROM generate_series(1, 10000) u" \
    -c 'CREATE TABLE public.other (user_id int, amount float8)' \
    -c 'INSERT INTO public.other SELECT u, 1 FROM generate_series(1, 100) u' \
    -c 'CREATE TABLE public.map (user_id int, g int)' \
    -c 'INSERT INTO public.map SELECT u, g FROM generate_series(1, 10000) u, generate_series(1, 50) g' \
    -c 'CREATE TABLE public.slow (i int)' \
    -c 'INSERT INTO public.slow SELECT generate_series(1, 3000)' \
    -c 'ANALYZE public.people, public.other, public.map, public.slow' \
    -c "ALTER TABLE public.map OWNER TO $A" -c "ALTER TABLE public.slow OWNER TO $A" \
    -c "GRANT SELECT ON public.map, public.slow TO $P" >/dev/null || exit 1
sql -c "SELECT uldp.protect_table('public.people', 'user_id')" \
    -c "SELECT uldp.protect_table('public.other', 'user_id')" >/dev/null || exit 1
sql -c "SELECT uldp.set_budget('$A', 1000, 0.001)" -c "SELECT uldp.set_budget('$P', 0.5, 0.001)" \
    >/dev/null || exit 1

ok_if "setup: the analyst may not read the protected table" \
    test "$(sqlstate_as "$A" 'SELECT count(*) FROM people')" = 42501

CHARGE_ROLE="$A"

# run_as ROLE: run the psql script on stdin as ROLE (errors do not stop it); sets OUT and RC
OUT=""
RC=0
run_as() {
    RC=0
    OUT="$(sql_as "$1" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1)" || RC=$?
}
show_out() { diag "psql output (exit status $RC):" "$OUT"; }
refused_with() { grep -q "ERROR:  $1:" <<<"$OUT"; }
# runs query $2 as the analyst and checks it is refused (42501), under label $1
refused_uncharged() {
    charge_snapshot
    run_as "$A" <<<"$2;"
    ok_if "$1. refused (42501): $2" refused_with 42501 || show_out
}

# ---------------------------------------------------------------------------------------------
# a. GROUP BY the privacy unit
for q in 'SELECT user_id, user_dp_count(user_id, 1.0) FROM people GROUP BY user_id' \
    'SELECT p.user_id, user_dp_count(p.user_id, 1.0) FROM people p GROUP BY 1' \
    'SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM people GROUP BY user_id, amount'; do
    refused_uncharged a "$q"
    check_not_charged "a. $q"
done

# ---------------------------------------------------------------------------------------------
# b. near-unique keys: one user per group, 4 users, 7 runs of each query, at delta 1e-8
for q in 'SELECT user_id * 7 + 1, user_dp_count(user_id, 0.5) FROM people WHERE user_id <= 4 GROUP BY 1' \
    'SELECT tid, user_dp_count(user_id, 0.5) FROM people WHERE user_id <= 4 GROUP BY tid' \
    'SELECT m.user_id, user_dp_count(p.user_id, 0.5) FROM people p JOIN map m ON m.user_id = p.user_id AND m.g = 1 WHERE p.user_id <= 4 GROUP BY m.user_id'; do
    charge_snapshot
    run_as "$A" <<<"$(for _ in 1 2 3 4 5 6 7; do echo "$q;"; done)"
    ok_if "b. 7 runs answered without error: $q" test "$RC" -eq 0 || show_out
    is "$OUT" "" "b. no group of one user was released in 7 runs: $q"
    check_charged "b. $q" 0.75 7
done

# ---------------------------------------------------------------------------------------------
# c. every user in 50 groups through a join with the analyst's own table
# sum_released K: run the join at k = K; sets NGROUPS and SUM (of the released counts)
NGROUPS=""
SUM=""
sum_released() {
    run_as "$A" <<SQL
SET uldp.group_selection_epsilon = 1;
SET uldp.max_groups_per_user = $1;
SELECT count(*) || ' ' || round(sum(c)) FROM (
    SELECT m.g, user_dp_count(p.user_id, 1.0) AS c FROM people p JOIN map m USING (user_id) GROUP BY m.g) s;
SQL
    read -r NGROUPS SUM <<<"$OUT"
}
within() { # within X CENTER TOL
    [[ "$1" =~ ^-?[0-9]+$ ]] && [ "$1" -ge $(($2 - $3)) ] && [ "$1" -le $(($2 + $3)) ]
}
charge_snapshot
sum_released 1
is "$NGROUPS" 50 "c. k = 1: all 50 groups are released" || show_out
ok_if "c. k = 1: the released counts sum to $SUM, within 80 of n = 10000 (not 50 n = 500000)" \
    within "$SUM" 10000 80 || show_out
check_charged "c. k = 1" 2
charge_snapshot
sum_released 5
is "$NGROUPS" 50 "c. k = 5: all 50 groups are released" || show_out
ok_if "c. k = 5: the released counts sum to $SUM, within 450 of 5 n = 50000" \
    within "$SUM" 50000 450 || show_out
check_charged "c. k = 5" 2

# ---------------------------------------------------------------------------------------------
# d. joins of protected tables
for q in 'SELECT a.amount, user_dp_count(a.user_id, 1.0) FROM people a JOIN people b USING (user_id) GROUP BY a.amount' \
    'SELECT user_dp_count(a.user_id, 1.0) FROM people a JOIN people b ON a.amount = b.amount' \
    'SELECT p.amount, user_dp_count(p.user_id, 1.0) FROM people p JOIN other o USING (user_id) GROUP BY p.amount' \
    'SELECT user_dp_count(o.user_id, 1.0) FROM people p, other o'; do
    refused_uncharged d "$q"
    check_not_charged "d. $q"
done

# ---------------------------------------------------------------------------------------------
# h. the rewrite's own functions called by hand on the protected table: the registration (whose
#    snapshot holds every group's exact count of users), the key, group_member with a forged
#    registry, the memo of keys (a lookup is true when an earlier row held the same value):
#    refused (42501), nothing charged
for q in "SELECT uldp.group_registry(1, 1, NULL, user_id, amount) FROM people" \
    "SELECT amount, uldp.group_key(1), user_dp_count(user_id, 1.0) FROM people GROUP BY amount" \
    "SELECT user_dp_count(uldp.group_member(1, 1, '\\x00'::bytea, user_id, amount), 1.0) FROM people" \
    "SELECT user_dp_count(user_id, 1.0) FROM people WHERE uldp.key_memo_lookup(1, 0, amount)" \
    "SELECT user_dp_count(user_id, 1.0) FROM people WHERE uldp.key_memo_store(1, 0, amount) > 0" \
    "SELECT uldp.key_memo_lookup(1, 0, amount), user_dp_count(user_id, 1.0) FROM people GROUP BY 1"; do
    refused_uncharged h "$q"
    check_not_charged "h. $q"
done

# ---------------------------------------------------------------------------------------------
# e. many groups, one charge
Q30='SELECT user_id % 30 AS r, user_dp_count(user_id, 0.3) AS c, user_dp_mean(amount, user_id, 0.2, 0, 100) AS m FROM people GROUP BY 1'
charge_snapshot
run_as "$A" <<<"SELECT count(*) FROM ($Q30) s WHERE c IS NOT NULL AND m IS NOT NULL;"
is "$OUT" 30 "e. one statement released 30 groups" || show_out
check_charged "e. 30 groups" 0.75
charge_snapshot
run_as "$A" <<SQL
BEGIN;
SELECT count(*) FROM ($Q30) s WHERE c IS NOT NULL;
ROLLBACK;
SQL
is "$OUT" 30 "e. in BEGIN ... ROLLBACK: the statement released 30 groups" || show_out
check_charged "e. 30 groups, rolled back" 0.75

SLOW='SELECT p.user_id % 30, user_dp_count(p.user_id, 0.3) FROM people p CROSS JOIN slow GROUP BY 1'
charge_snapshot
run_as "$A" <<<"SET statement_timeout = '1s'; $SLOW;"
ok_if "e. statement_timeout: the slow grouped statement was cancelled (57014)" \
    refused_with 57014 || show_out
check_charged "e. cancelled by statement_timeout" 0.55

# pg_cancel_backend from another session, while the statement reads
app=uldp_attack_grouped_cancel
charge_snapshot
uldp_as_pg "$ULDP_PGBIN/psql" -X -qAt -v VERBOSITY=verbose -d "dbname=$ATTACK_DB application_name=$app" \
    -U "$A" -c "$SLOW" >"$ATTACK_DIR/cancel.out" 2>&1 &
bgpid=$!
attack_track "$bgpid"
running() {
    [ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' AND state = 'active'")" = 1 ]
}
charged_once() { [ "$(ledger_rows "$A")" = "$((ROWS0 + 1))" ]; }
ok_if "e. pg_cancel_backend: the slow statement is running" wait_for 30 "the slow statement" running
ok_if "e. pg_cancel_backend: it was charged before reading" wait_for 30 "its charge" charged_once
sleep 0.3
ok_if "e. pg_cancel_backend: still running when cancelled" running
sql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'" >/dev/null
wait "$bgpid"
OUT="$(cat "$ATTACK_DIR/cancel.out")"
RC=0
ok_if "e. pg_cancel_backend: the statement was cancelled (57014)" refused_with 57014 || show_out
check_charged "e. cancelled by pg_cancel_backend" 0.55

# ---------------------------------------------------------------------------------------------
# f. a budget too small (0.5) for a grouped release costing 1.25: refused before reading, the
# same error whatever the filter selects
errors=()
for w in 'false' 'true' 'user_id <= 10' 'user_id = 1'; do
    run_as "$P" <<<"SELECT amount, user_dp_count(user_id, 1.0) FROM people WHERE $w GROUP BY amount;"
    ok_if "f. refused (53000) with WHERE $w" refused_with 53000 || show_out
    errors+=("$OUT")
done
run_as "$P" <<<"SELECT m.g, user_dp_count(p.user_id, 1.0) FROM people p JOIN map m USING (user_id) WHERE m.g <= 3 GROUP BY m.g;"
ok_if "f. refused (53000) through a join" refused_with 53000 || show_out
errors+=("$OUT")
same=0
for e in "${errors[@]}"; do [ "$e" == "${errors[0]}" ] || same=1; done
ok "$same" "f. the error text is the same whatever the data selected" || diag "${errors[@]}"
is "$(epsilon_spent "$P")" 0 "f. the poor role was charged nothing (epsilon_spent)"
is "$(ledger_rows "$P")" 0 "f. the poor role was charged nothing (ledger)"

# ---------------------------------------------------------------------------------------------
# g. EXPLAIN of a grouped release
no_plan_shown() { ! grep -Eq 'QUERY PLAN|Seq Scan|->|rows=' <<<"$OUT"; }
for q in 'EXPLAIN SELECT user_id % 30, user_dp_count(user_id, 1.0) FROM people GROUP BY 1' \
    'EXPLAIN (COSTS OFF) SELECT m.g, user_dp_count(p.user_id, 1.0) FROM people p JOIN map m USING (user_id) GROUP BY m.g' \
    'EXPLAIN ANALYZE SELECT user_id % 30, user_dp_count(user_id, 1.0) FROM people GROUP BY 1'; do
    refused_uncharged g "$q"
    ok_if "g. no plan shown: $q" no_plan_shown || show_out
    check_not_charged "g. $q"
done

# ---------------------------------------------------------------------------------------------
# i. the memory a grouped release may need, bounded before reading: the rows its table can hold,
#    counted once (its registration reads them too, in a CTE of its own), as an ungrouped release
#    counts them; refused (54000) under a limit set for the analyst by the superuser
sql -c "ALTER ROLE $A SET uldp.max_state_memory = '64kB'" >/dev/null || exit 1
bound_rows() { sed -n 's/^DETAIL: *Its tables can hold up to \([0-9]*\) rows.*/\1/p' <<<"$OUT" | head -1; }
run_as "$A" <<<"SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM people;"
ok_if "i. an ungrouped release over the table is refused under 64 kB (54000)" refused_with 54000 || show_out
UNGROUPED_ROWS="$(bound_rows)"
run_as "$A" <<<"SELECT user_id % 30, user_dp_mean(amount, user_id, 1.0, 0, 100) FROM people GROUP BY 1;"
ok_if "i. so is a grouped one" refused_with 54000 || show_out
is "$(bound_rows)" "$UNGROUPED_ROWS" "i. both bound their memory by the same rows, those the table can hold" || show_out
sql -c "ALTER ROLE $A RESET uldp.max_state_memory" >/dev/null || exit 1

attack_done

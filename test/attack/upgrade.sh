#!/usr/bin/env bash
# test/attack/upgrade.sh -- ALTER EXTENSION uldp UPDATE from 0.1 through every version to 0.9 keeps
# budgets and ledger. A database that ran 0.1 (budgets, charges, a reset; a second role that is
# dropped before 0.4) is updated step by step. 0.2 chains the existing rows in id order and
# verify_ledger() finds them valid; 0.3 keeps rows, hashes and budgets and adds the learning
# functions; 0.4 keys budgets by role name (the dropped role's under "(dropped role OID)"), gives
# every ledger row its role name while keeping id, time, oid, amounts and hash (encoding version
# 1), verifies with the same head, charges new releases by name in version 2 rows chained on top,
# keeps the budget across DROP ROLE + CREATE ROLE, and refuses DROP EXTENSION; 0.5 adds
# user_dp_count and keeps every ledger row and budget; 0.6 declares user_dp_sgd's final function
# READ_WRITE (the four aggregates created anew) and keeps every ledger row and budget; 0.7 adds the
# local protocol's functions and tables (kept by pg_dump), keeps every ledger row and budget, and
# runs a round without charging any budget; 0.8 adds the functions of grouped releases
# (group_register, group_member, group_users, the aggregate group_selected) and their three GUCs and
# keeps every ledger row and budget, but this library's grouped releases need 0.9's grouping
# functions: at 0.8 one is refused before reading with the hint to update, charged nothing; 0.9
# adds the six aggregates that merge shards' per-user states (user_dp_mean, _sum, _count in schema
# uldp), keeps every ledger row and budget, runs one, and runs the grouped release, charged once,
# with partition selection.
#
# The library is always the newest, whose budget worker calls the 0.4 uldp._charge: before 0.4
# the charges are made by calling that version's uldp._charge(oid, ...) as superuser, which is
# what its worker did.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
G="${ATTACK_PREFIX}gone"
RELEASE="SELECT user_dp_mean(amount, user_id, 0.25, 0, 300) FROM visits"
old_charge() { # old_charge ROLE EPSILON [DELTA]: a charge as the 0.1-0.3 worker made it
    sql -c "SELECT status FROM uldp._charge('$1'::regrole, 'user_dp_mean', $2, ${3:-0})"
}
LEDGER_COLS="id, at, function, epsilon, delta"
ledger_and_budgets() { # every ledger row (id, role, hash) and every budget's spent epsilon, from 0.4 on
    sql -c "SELECT (SELECT string_agg(concat_ws(' ', id, role, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data)
        || '/' || (SELECT string_agg(concat_ws(' ', role, epsilon_spent), ';' ORDER BY role) FROM uldp.budget_data)"
}

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c 'DROP EXTENSION uldp' -c "CREATE EXTENSION uldp VERSION '0.1'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.1" "version 0.1 installed"
sql -c "CREATE ROLE $A LOGIN" -c "CREATE ROLE $G LOGIN" || exit 1
attack_setup_visits "$A" || exit 1
sql -c "SELECT uldp.set_budget('$A', 10, 0)" -c "SELECT uldp.set_budget('$G', 1, 0)" >/dev/null || exit 1
for i in 1 2 3; do is "$(old_charge "$A" 0.25)" ok "0.1: charge $i"; done
sql -c "SELECT uldp.reset_budget('$A')" >/dev/null || exit 1
is "$(old_charge "$A" 0.25)" ok "0.1: a charge after the reset"
is "$(old_charge "$G" 0.5)" ok "0.1: a charge of the second role"
A_OID="$(sql -c "SELECT oid FROM pg_roles WHERE rolname = '$A'")"
G_OID="$(sql -c "SELECT oid FROM pg_roles WHERE rolname = '$G'")"
before="$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role), ';' ORDER BY id) FROM uldp.ledger_data")"
budget_before="$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")"
is "$(sql -c 'SELECT count(*) FROM uldp.ledger_data')" "8" \
    "0.1: eight ledger rows (2 set_budget, 3 charges, reset, 2 charges)"

sql -c "ALTER EXTENSION uldp UPDATE TO '0.2'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.2" "updated to 0.2"
is "$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role), ';' ORDER BY id) FROM uldp.ledger_data")" \
    "$before" "the ledger rows are unchanged"
is "$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")" \
    "$budget_before" "the budget is unchanged"
is "$(sql -c 'SELECT count(*) FROM uldp.ledger_data WHERE hash IS NULL')" "0" "every row has a hash"
is "$(sql -c 'SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger()')" "t|8|t" \
    "verify_ledger: the chain of the 8 existing rows is valid"
is "$(sql -c 'SELECT h.id = max(l.id) FROM uldp.ledger_head h, uldp.ledger_data l GROUP BY h.id')" "t" \
    "ledger_head points at the last row"
is "$(old_charge "$A" 0.25)" ok "0.2: a charge after the update"
is "$(sql -c 'SELECT valid, entries FROM uldp.verify_ledger()')" "t|9" "the charge is chained on top"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'::regrole")" "0.50" \
    "the budget holds the two charges since the reset"
out="$(sql -v ON_ERROR_STOP=0 -c 'DELETE FROM uldp.ledger_data' 2>&1)"
if grep -q 'append-only' <<<"$out"; then ok 0 "the ledger is append-only after the update"; else
    ok 1 "the ledger is append-only after the update"
    diag "$out"
fi

# ---------------------------------------------------------------------------------------------
# 0.2 -> 0.3
before="$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")"
budget_before="$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.3'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.3" "updated to 0.3"
is "$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")" \
    "$before" "the ledger rows and their hashes are unchanged"
is "$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")" \
    "$budget_before" "the budget is unchanged"
is "$(sql -c "SELECT count(*) FROM (VALUES
    ('user_dp_mean(float8[], anyelement, float8, float8)'),
    ('user_dp_sgd(float8[], float8, anyelement, float8, float8, jsonb)'),
    ('uldp.predict(jsonb, float8[])'), ('uldp.zcdp_rho(float8, float8)'),
    ('uldp._sample_discrete_gaussian(float8, integer)')) f(name) WHERE to_regprocedure(name) IS NOT NULL")" \
    "5" "the learning functions exist"
sql -c "SELECT uldp.set_budget('$A', 10, 1e-3)" >/dev/null || exit 1
is "$(old_charge "$A" 0.5 1e-6)" ok "0.3: a charge of epsilon and delta"
is "$(sql -c 'SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger()')" "t|11|t" \
    "verify_ledger after the update to 0.3: the 11 rows are valid"

# ---------------------------------------------------------------------------------------------
# 0.3 -> 0.4, after the second role was dropped
sql -c "DROP ROLE $G" || exit 1
before="$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")"
budget_before="$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = $A_OID")"
head_before="$(sql -c "SELECT encode(hash, 'hex') FROM uldp.ledger_head")"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.4'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.4" "updated to 0.4"
is "$(sql -c "SELECT string_agg(concat_ws(' ', $LEDGER_COLS, role_oid, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")" \
    "$before" "every ledger row keeps id, time, function, amounts, role oid and hash"
is "$(sql -c "SELECT string_agg(DISTINCT hash_version::text, ',') FROM uldp.ledger_data")" "1" \
    "the rows written before 0.4 keep encoding version 1"
is "$(sql -c "SELECT string_agg(DISTINCT role_oid || '=' || role, ',' ORDER BY role_oid || '=' || role) FROM uldp.ledger_data")" \
    "$(printf '%s\n' "$A_OID=$A" "$G_OID=(dropped role $G_OID)" | LC_ALL=C sort | paste -sd,)" \
    "ledger rows got their role's name, the dropped role's a marked one"
is "$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = '$A'")" \
    "$budget_before" "the budget is kept, now under the role's name"
is "$(sql -c "SELECT epsilon_limit || ' ' || epsilon_spent FROM uldp.budget_data WHERE role = '(dropped role $G_OID)'")" \
    "1 0.5" "the dropped role's budget is kept under \"(dropped role OID)\""
is "$(sql -c "SELECT valid, entries, encode(head, 'hex'), problem IS NULL FROM uldp.verify_ledger()")" \
    "t|11|$head_before|t" "verify_ledger after the update to 0.4: valid, the same head"

# 0.4 -> 0.5: user_dp_count; budgets and ledger untouched
state_04="$(ledger_and_budgets)"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.5'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.5" "updated to 0.5"
is "$(ledger_and_budgets)" \
    "$state_04" "0.5 keeps every ledger row and budget"
is "$(sql -c "SELECT count(*) FROM pg_proc WHERE proname IN ('user_dp_count', 'user_dp_count_ci')")" "2" \
    "0.5 adds user_dp_count and user_dp_count_ci"

out="$(sql_as "$A" -c "$RELEASE" 2>&1)"
ok_if "a release after the update works" grep -Eq "$RELEASED_RE" <<<"$out" || diag "$out"
is "$(sql -c "SELECT concat_ws(' ', role, function, epsilon, hash_version, role_oid IS NULL, statement IS NOT NULL)
    FROM uldp.ledger_data ORDER BY id DESC LIMIT 1")" "$A user_dp_mean 0.25 2 t t" \
    "it is charged by name, in a version 2 row"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.25" "the budget holds it"
is "$(sql -c "SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger('\\x$head_before')")" "t|12|t" \
    "verify_ledger: the version 2 row is chained on top, and the head before the update is in the chain"

# 0.5 -> 0.6: user_dp_sgd's final function becomes READ_WRITE
state_05="$(ledger_and_budgets)"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.6'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.6" "updated to 0.6"
is "$(ledger_and_budgets)" \
    "$state_05" "0.6 keeps every ledger row and budget"
is "$(sql -c "SELECT string_agg(a.aggfinalmodify::text, '' ORDER BY p.oid) FROM pg_aggregate a
    JOIN pg_proc p ON p.oid = a.aggfnoid WHERE p.proname = 'user_dp_sgd' AND a.aggfinalfn = 'uldp.sgd_finalfn'::regproc")" \
    "wwww" "0.6 has the four user_dp_sgd aggregates, each with a READ_WRITE final function"
out="$(sql -c "SELECT uldp.set_budget(current_user::regrole, 1000, 1e-3)" \
    -c "SELECT user_dp_sgd(ARRAY[amount::float8], amount::float8, user_id, 1.0, 1e-6, '{\"dimension\": 1}') FROM visits" 2>&1)"
ok_if "and user_dp_sgd releases a model after the update" grep -q '"weights"' <<<"$out" || diag "$out"

# 0.6 -> 0.7: the local protocol's rounds and reports
state_06="$(ledger_and_budgets)"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.7'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.7" "updated to 0.7"
is "$(ledger_and_budgets)" "$state_06" "0.7 keeps every ledger row and budget"
is "$(sql -c "SELECT count(*) FROM (VALUES ('uldp.ldp_round(text, jsonb)'), ('uldp.ldp_round_info(bigint)'),
    ('uldp.ldp_report(bigint, float8[])'), ('uldp.ldp_submit(bigint, text, jsonb)'), ('uldp.ldp_result(bigint)'),
    ('uldp.ldp_sgd_step(bigint)'), ('uldp.ldp_ingest()'), ('uldp.shuffle_epsilon(float8, bigint, float8)')) f(name)
    WHERE to_regprocedure(name) IS NOT NULL")" "8" "0.7 adds the eight functions of the local protocol"
is "$(sql -c "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_extension e, unnest(e.extconfig) t(oid)
    JOIN pg_class c ON c.oid = t.oid WHERE e.extname = 'uldp' AND c.relname LIKE 'ldp%'")" \
    "ldp_reports,ldp_rounds,ldp_rounds_id_seq" "and its tables, which pg_dump keeps"
round="$(sql -c "SELECT uldp.ldp_round('range', '{\"bound\": 10, \"tau\": 1, \"epsilon\": 1}')")"
sql -c "SELECT uldp.ldp_submit($round, 'u1', uldp.ldp_report($round, ARRAY[2.5]))" >/dev/null || exit 1
is "$(sql -c "SELECT uldp.ldp_result($round) ->> 'reports'")" "1" "a round runs after the update"
is "$(ledger_and_budgets)" "$state_06" "and charges no budget"

# 0.7 -> 0.8: GROUP BY over uldp aggregates
state_07="$(ledger_and_budgets)"
sql -c "ALTER EXTENSION uldp UPDATE TO '0.8'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.8" "updated to 0.8"
is "$(ledger_and_budgets)" "$state_07" "0.8 keeps every ledger row and budget"
is "$(sql -c "SELECT count(*) FROM (VALUES ('uldp.group_register(bigint, int, anyelement, \"any\")'),
    ('uldp.group_member(bigint, int, anyelement, \"any\")'), ('uldp.group_users(bigint, int, anyelement, \"any\")'),
    ('uldp.group_selected(anyelement, float8, float8)')) f(name)
    WHERE to_regprocedure(name) IS NOT NULL")" "4" "0.8 adds group_register, group_member, group_users and group_selected"
is "$(sql -c "SELECT string_agg(name || '=' || setting, ',' ORDER BY name) FROM pg_settings
    WHERE name IN ('uldp.max_groups_per_user', 'uldp.group_selection_epsilon', 'uldp.group_selection_delta')")" \
    "uldp.group_selection_delta=1e-08,uldp.group_selection_epsilon=0.25,uldp.max_groups_per_user=1" \
    "and the three GUCs of grouped releases, with their defaults"
# a grouped release needs 0.9's functions (its registry passes to parallel workers): refused
# before reading with the hint to update, and charged nothing
GROUPED="SELECT amount > 100, user_dp_mean(amount, user_id, 0.25, 0, 300) FROM visits GROUP BY 1"
out="$(sql_as "$A" -c "$GROUPED" 2>&1)"
ok_if "a grouped release at 0.8 with this library is refused with the hint to update" \
    grep -q 'ALTER EXTENSION uldp UPDATE' <<<"$out"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.25" "and charged nothing"
out="$(sql_as "$A" -c "SELECT uldp.group_selected(user_id, 1.0, 1e-8) FROM visits" 2>&1)"
ok_if "0.8's partition selection called by hand with this library is refused" \
    grep -q 'uldp.group_selected runs only inside the grouped releases that uldp rewrites' <<<"$out"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.25" "and charged nothing"
is "$(sql -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the ledger is valid after it"

# 0.8 -> 0.9 (the default version): releases merging shards' per-user states
state_08="$(ledger_and_budgets)"
sql -c 'ALTER EXTENSION uldp UPDATE' || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.9" "updated to 0.9 (the default version)"
is "$(ledger_and_budgets)" "$state_08" "0.9 keeps every ledger row and budget"
is "$(sql -c "SELECT count(*) FROM (VALUES ('uldp.user_dp_mean(bytea, anyelement, float8)'),
    ('uldp.user_dp_mean(bytea, anyelement, float8, float8, float8)'),
    ('uldp.user_dp_mean(bytea, anyelement, float8, float8, float8, float8)'),
    ('uldp.user_dp_sum(bytea, anyelement, float8)'), ('uldp.user_dp_sum(bytea, anyelement, float8, float8, float8)'),
    ('uldp.user_dp_count(bytea, anyelement, float8)')) f(name)
    WHERE to_regprocedure(name) IS NOT NULL")" "6" "0.9 adds the six aggregates that merge shards' states"
sql -c "SELECT uldp.set_budget(current_user::regrole, 1e6, 1)" >/dev/null || exit 1
is "$(sql -c "SELECT uldp.user_dp_count(NULL::bytea, NULL::int, 0.5) >= 0")" "t" \
    "a release merging no state runs after the update"
is "$(sql -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the ledger is valid after it"
out="$(sql_as "$A" -v ON_ERROR_STOP=1 -c "$GROUPED" 2>&1)"
rc=$?
ok "$rc" "a grouped release runs after the update to 0.9"
[ "$rc" -eq 0 ] || diag "$out"
is "$(sql -c "SELECT concat_ws(' ', role, function, epsilon, delta, hash_version)
    FROM uldp.ledger_data ORDER BY id DESC LIMIT 1")" "$A user_dp_mean, group_selected 0.5 0.00000001 2" \
    "it is charged once: its release and partition selection (0.25 + 0.25, delta 1e-8)"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.75" "the budget holds it"
is "$(sql -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the ledger is valid after that"

sql -c "REVOKE SELECT ON visits FROM $A" -c "DROP ROLE $A" -c "CREATE ROLE $A LOGIN" \
    -c "GRANT SELECT ON visits TO $A" || exit 1
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.75" \
    "after DROP ROLE + CREATE ROLE the budget is still there"
ok_if "and releases are charged to it" grep -Eq "$RELEASED_RE" <<<"$(sql_as "$A" -c "$RELEASE" 2>&1)"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "2.00" "on top of what was spent"
is "$(sql -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the ledger is valid"

out="$(sql -v ON_ERROR_STOP=0 -c 'DROP EXTENSION uldp' 2>&1)"
if grep -q 'cannot drop extension uldp while it holds privacy budgets or ledger rows' <<<"$out"; then
    ok 0 "DROP EXTENSION is refused after the update"
else
    ok 1 "DROP EXTENSION is refused after the update"
    diag "$out"
fi

attack_done

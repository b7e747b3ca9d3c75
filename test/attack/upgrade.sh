#!/usr/bin/env bash
# test/attack/upgrade.sh -- ALTER EXTENSION uldp UPDATE from 0.1 keeps budgets and ledger, and
# chains the existing ledger rows: a database that ran 0.1 (budgets, releases, a reset) is
# updated to 0.2; the ledger rows and budgets are unchanged, every row gets its hash in id order,
# verify_ledger() finds the chain valid, releases are charged and chained on top of it, and the
# ledger is append-only from then on.  Then 0.2 -> 0.3 (the default version): the ledger and
# budget are unchanged and still verify, the learning functions exist, and their releases are
# charged and chained on top of the old rows.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
RELEASE="SELECT user_dp_mean(amount, user_id, 0.25, 0, 300) FROM visits"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c 'DROP EXTENSION uldp' -c "CREATE EXTENSION uldp VERSION '0.1'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.1" "version 0.1 installed"
sql -c "CREATE ROLE $A LOGIN" || exit 1
attack_setup_visits "$A" || exit 1
sql -c "SELECT uldp.set_budget('$A', 10, 0)" >/dev/null || exit 1
for i in 1 2 3; do sql_as "$A" -c "$RELEASE" >/dev/null || exit 1; done
sql -c "SELECT uldp.reset_budget('$A')" >/dev/null || exit 1
sql_as "$A" -c "$RELEASE" >/dev/null || exit 1
before="$(sql -c "SELECT string_agg(concat_ws(' ', id, at, role, function, epsilon, delta), ';' ORDER BY id) FROM uldp.ledger_data")"
budget_before="$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")"
is "$(sql -c 'SELECT count(*) FROM uldp.ledger_data')" "6" "0.1: six ledger rows (set_budget, 3 releases, reset, release)"

sql -c "ALTER EXTENSION uldp UPDATE TO '0.2'" || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.2" "updated to 0.2"
is "$(sql -c "SELECT string_agg(concat_ws(' ', id, at, role, function, epsilon, delta), ';' ORDER BY id) FROM uldp.ledger_data")" \
    "$before" "the ledger rows are unchanged"
is "$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")" \
    "$budget_before" "the budget is unchanged"
is "$(sql -c 'SELECT count(*) FROM uldp.ledger_data WHERE hash IS NULL')" "0" "every row has a hash"
is "$(sql -c 'SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger()')" "t|6|t" \
    "verify_ledger: the chain of the 6 existing rows is valid"
is "$(sql -c 'SELECT h.id = max(l.id) FROM uldp.ledger_head h, uldp.ledger_data l GROUP BY h.id')" "t" \
    "ledger_head points at the last row"

sql_as "$A" -c "$RELEASE" >/dev/null
ok $? "a release after the update works"
is "$(sql -c 'SELECT valid, entries FROM uldp.verify_ledger()')" "t|7" "the release is chained on top"
is "$(sql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'::regrole")" "0.50" \
    "the budget holds the two releases since the reset"
out="$(sql -v ON_ERROR_STOP=0 -c 'DELETE FROM uldp.ledger_data' 2>&1)"
if grep -q 'append-only' <<<"$out"; then ok 0 "the ledger is append-only after the update"; else
    ok 1 "the ledger is append-only after the update"
    diag "$out"
fi

# ---------------------------------------------------------------------------------------------
# 0.2 -> 0.3
before="$(sql -c "SELECT string_agg(concat_ws(' ', id, at, role, function, epsilon, delta, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")"
budget_before="$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")"
absent="$(sql -c "SELECT count(*) FROM (VALUES ('user_dp_mean(float8[], anyelement, float8, float8)'),
    ('user_dp_sgd(float8[], float8, anyelement, float8, float8, jsonb)'), ('uldp.predict(jsonb, float8[])'),
    ('uldp.zcdp_rho(float8, float8)')) f(name) WHERE to_regprocedure(name) IS NOT NULL")"
is "$absent" "0" "0.2 has none of the learning functions"

sql -c 'ALTER EXTENSION uldp UPDATE' || exit 1
is "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'uldp'")" "0.3" "updated to 0.3 (the default version)"
is "$(sql -c "SELECT string_agg(concat_ws(' ', id, at, role, function, epsilon, delta, encode(hash, 'hex')), ';' ORDER BY id) FROM uldp.ledger_data")" \
    "$before" "the ledger rows and their hashes are unchanged"
is "$(sql -c "SELECT concat_ws(' ', epsilon_limit, epsilon_spent, delta_limit, delta_spent) FROM uldp.budget_data WHERE role = '$A'::regrole")" \
    "$budget_before" "the budget is unchanged"
is "$(sql -c 'SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger()')" "t|7|t" \
    "verify_ledger after the update to 0.3: the chain of the 7 rows is valid"
is "$(sql -c "SELECT count(*) FROM (VALUES
    ('user_dp_mean(float8[], anyelement, float8, float8)'),
    ('user_dp_mean(float8[], anyelement, float8, float8, float8)'),
    ('user_dp_mean(float8[], anyelement, float8, float8, float8, float8)'),
    ('user_dp_sgd(float8[], float8, anyelement, float8, float8)'),
    ('user_dp_sgd(float8[], float8, anyelement, float8, float8, jsonb)'),
    ('uldp.predict(jsonb, float8[])'), ('uldp.zcdp_rho(float8, float8)'), ('uldp.zcdp_delta(float8, float8)'),
    ('uldp._sample_discrete_gaussian(float8, integer)')) f(name) WHERE to_regprocedure(name) IS NOT NULL")" \
    "9" "the 9 new functions and aggregates exist"
is "$(sql -c "SELECT has_function_privilege('$A', 'uldp._sample_discrete_gaussian(float8, integer)', 'EXECUTE')")" "f" \
    "the sampler is not executable by the analyst"
is "$(sql -c "SELECT uldp.predict('{\"loss\": \"squared\", \"weights\": [2, 1], \"feature_radius\": 10}', '{3}')")" "7" \
    "uldp.predict works"

sql -c "SELECT uldp.set_budget('$A', 10, 1e-3)" >/dev/null || exit 1
sql -c "CREATE TABLE vectors AS SELECT user_id, ARRAY[amount, amount / 2] AS v, amount AS y FROM visits" || exit 1
sql -c "GRANT SELECT ON vectors TO $A" || exit 1
out="$(sql_as "$A" -c "SELECT cardinality(user_dp_mean(v, user_id, 0.5, 1e-6, 300)) IN (0, 2) FROM vectors" 2>&1)"
is "$out" "t" "a vector release after the update works"
out="$(sql_as "$A" -c "SELECT jsonb_typeof(user_dp_sgd(v, y, user_id, 0.5, 1e-6, '{\"iterations\": 5}') -> 'weights') FROM vectors" 2>&1)"
is "$out" "array" "a model release after the update works"
is "$(sql -c "SELECT string_agg(e, ',' ORDER BY id) FROM (SELECT id, function || ' ' || epsilon || ' ' || delta AS e FROM uldp.ledger_data ORDER BY id DESC LIMIT 3) s")" \
    "uldp.set_budget 0 0,user_dp_mean 0.5 0.000001,user_dp_sgd 0.5 0.000001" \
    "both releases are charged epsilon and delta"
is "$(sql -c 'SELECT valid, entries, problem IS NULL FROM uldp.verify_ledger()')" "t|10|t" \
    "verify_ledger: the new rows are chained on top of the old ones"
is "$(sql -c "SELECT epsilon_spent || ' ' || delta_spent FROM uldp.budget_data WHERE role = '$A'::regrole")" "1.50 0.000002" \
    "the budget holds them"
sql -c 'DROP TABLE vectors' >/dev/null

attack_done

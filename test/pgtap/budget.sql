-- test/pgtap/budget.sql -- privacy budgets: charged per release to the session user, exactly,
-- before anything is computed, never refunded, refused when absent or exhausted.
--
-- Budget charges are committed by a background worker in a transaction of its own, which
-- cannot see uncommitted rows: the roles, table and budgets are created outside any
-- transaction (autocommit), with names of their own, and removed at the end (and at the
-- start, in case an earlier run stopped half way).
\set prefix uldp_tap_budget_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_budget_analyst LOGIN;
CREATE ROLE uldp_tap_budget_other LOGIN;
CREATE ROLE uldp_tap_budget_super LOGIN SUPERUSER;
GRANT uldp_tap_budget_other TO uldp_tap_budget_analyst;
CREATE TABLE public.uldp_tap_budget_visits (user_id int, amount float8);
INSERT INTO public.uldp_tap_budget_visits
    SELECT u, 10 * u + r FROM generate_series(1, 20) u, generate_series(1, 3) r;
GRANT SELECT ON public.uldp_tap_budget_visits TO uldp_tap_budget_analyst, uldp_tap_budget_other;
-- a SECURITY DEFINER function owned by another role that has a budget of its own
CREATE FUNCTION public.uldp_tap_budget_definer() RETURNS float8
    LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT user_dp_mean(amount, user_id, 0.25, 0, 300) FROM public.uldp_tap_budget_visits $$;
ALTER FUNCTION public.uldp_tap_budget_definer() OWNER TO uldp_tap_budget_other;

-- the charges of a role, as the administrator sees them: 'function epsilon delta', in order
CREATE TEMP VIEW charges AS
    SELECT l.role AS rolname, array_agg(l.function || ' ' || l.epsilon || ' ' || l.delta ORDER BY l.id) AS entries
    FROM uldp.ledger_data l GROUP BY l.role;
CREATE TEMP VIEW spent AS
    SELECT b.role AS rolname, b.epsilon_limit, b.epsilon_spent, b.delta_spent
    FROM uldp.budget_data b;
GRANT SELECT ON charges, spent TO PUBLIC;

SELECT plan(72);

-- ---------------------------------------------------------------------------
-- no budget: refused before anything is computed, nothing recorded
SET SESSION AUTHORIZATION uldp_tap_budget_analyst;
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM uldp_tap_budget_visits$$,
    '42501', 'role "uldp_tap_budget_analyst" has no privacy budget', 'no budget: user_dp_mean is refused');
SELECT throws_ok($$SELECT user_dp_range(amount, user_id, 0.5) FROM uldp_tap_budget_visits WHERE false$$,
    '42501', 'role "uldp_tap_budget_analyst" has no privacy budget', 'no budget: user_dp_range on empty input is refused');
SELECT is((SELECT count(*) FROM uldp.budget), 0::bigint, 'no budget: the analyst sees no budget row');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM uldp.ledger_data WHERE role = 'uldp_tap_budget_analyst'), 0::bigint,
    'no budget: nothing was written to the ledger');
SELECT is((SELECT count(*) FROM uldp.budget_data WHERE role = 'uldp_tap_budget_analyst'), 0::bigint,
    'no budget: no budget row was created');

-- ---------------------------------------------------------------------------
-- a budget of 1.0: ten releases of 0.1 spend exactly 1.0 (numeric sums), the eleventh is refused
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_budget_analyst', 1.0, 0)$$, 'set_budget(analyst, 1.0, 0)');
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_budget_other', 1.0, 0)$$, 'set_budget(other, 1.0, 0)');
SELECT is((SELECT entries FROM charges WHERE rolname = 'uldp_tap_budget_analyst'),
    ARRAY['uldp.set_budget 0 0'], 'set_budget is logged in the ledger with zero amounts');

SET SESSION AUTHORIZATION uldp_tap_budget_analyst;
SELECT ok(user_dp_mean(amount, user_id, 0.1) IS NOT NULL, 'release 1/10: user_dp_mean/3') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_mean(amount, user_id, 0.1, 0, 300) IS NOT NULL, 'release 2/10: user_dp_mean/5') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_mean(amount, user_id, 0.1, 0, 300, 20) IS NOT NULL, 'release 3/10: user_dp_mean/6') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_range(amount, user_id, 0.1) IS NOT NULL, 'release 4/10: user_dp_range/3') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_range(amount, user_id, 0.1, 0, 300) IS NOT NULL, 'release 5/10: user_dp_range/5') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_range(amount, user_id, 0.1, 0, 300, 20) IS NOT NULL, 'release 6/10: user_dp_range/6') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_mean(amount, user_id::text, 0.1, 0, 300) IS NOT NULL, 'release 7/10: text user ids') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_mean(amount, user_id::bigint, 0.1, 0, 300) IS NOT NULL, 'release 8/10: bigint user ids') FROM uldp_tap_budget_visits;
SELECT ok(user_dp_mean(amount, user_id, 0.1, 0, 300) IS NOT NULL, 'release 9/10: empty input') FROM uldp_tap_budget_visits WHERE false;
SELECT ok(user_dp_mean(amount, user_id, 0.05, 0, 300) IS NOT NULL AND user_dp_range(amount, user_id, 0.05) IS NOT NULL,
    'release 10/10: two releases of 0.05 in one statement') FROM uldp_tap_budget_visits;
SELECT is((SELECT epsilon_spent FROM uldp.budget), 1.0, 'the analyst has spent exactly 1.0 (numeric)');
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0.1, 0, 300) FROM uldp_tap_budget_visits$$, '53000',
    'user_dp_mean with epsilon 0.1 and delta 0 exceeds the privacy budget of role "uldp_tap_budget_analyst"',
    'the 11th release of 0.1 exceeds the budget');
SELECT throws_ok($$SELECT user_dp_range(amount, user_id, 1e-6) FROM uldp_tap_budget_visits$$, '53000',
    'user_dp_range with epsilon 1e-06 and delta 0 exceeds the privacy budget of role "uldp_tap_budget_analyst"',
    'even the smallest epsilon exceeds an exhausted budget');
SELECT is((SELECT epsilon_spent FROM uldp.budget), 1.0, 'a refused release charges nothing');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function LIKE 'user_dp_%'), 10::bigint,
    'a refused release writes nothing to the ledger (10 statements)');
SELECT is((SELECT array_agg(function || ' ' || epsilon ORDER BY at) FROM uldp.ledger WHERE function LIKE 'user_dp_%'),
    ARRAY['user_dp_mean 0.1', 'user_dp_mean 0.1', 'user_dp_mean 0.1', 'user_dp_range 0.1', 'user_dp_range 0.1',
          'user_dp_range 0.1', 'user_dp_mean 0.1', 'user_dp_mean 0.1', 'user_dp_mean 0.1',
          'user_dp_mean, user_dp_range 0.1'],
    'the ledger names each statement''s releases and their exact total epsilon, in one row');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- raising the limit keeps what was spent; releases are never refunded
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_budget_analyst', 3.0, 1e-6)$$, 'set_budget(analyst, 3.0, 1e-6)');
SELECT is((SELECT epsilon_limit::text || ' ' || epsilon_spent::text FROM spent WHERE rolname = 'uldp_tap_budget_analyst'),
    '3 1.0', 'set_budget changes the limit, not the amount spent');

SET SESSION AUTHORIZATION uldp_tap_budget_analyst;
-- ROLLBACK
BEGIN;
DO $$ BEGIN PERFORM user_dp_mean(amount, user_id, 0.25, 0, 300) FROM uldp_tap_budget_visits; END $$;
ROLLBACK;
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '1.25', 'a rolled back transaction keeps its charge');
-- ROLLBACK TO SAVEPOINT
BEGIN;
SAVEPOINT s;
DO $$ BEGIN PERFORM user_dp_range(amount, user_id, 0.25, 0, 300) FROM uldp_tap_budget_visits; END $$;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '1.50', 'a rolled back savepoint keeps its charge');
-- an error raised after the release, in the same DO block
SELECT throws_ok($q$DO $do$ BEGIN
        PERFORM user_dp_mean(amount, user_id, 0.25, 0, 300, 20) FROM uldp_tap_budget_visits;
        RAISE EXCEPTION 'boom after release';
    END $do$$q$, 'P0001', 'boom after release', 'a DO block that raises after releasing fails');
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '1.75', 'and keeps its charge');
-- an error later in the same statement
SELECT throws_ok($$SELECT (user_dp_mean(amount, user_id, 0.25, 0, 300) * 0)::int / 0 FROM uldp_tap_budget_visits$$,
    '22012', 'division by zero', 'a statement that fails after its release');
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.00', 'keeps its charge');
-- a read-only transaction can release: the charge is written by the worker
BEGIN READ ONLY;
SELECT ok(user_dp_mean(amount, user_id, 0.25, 0, 300) IS NOT NULL, 'a read-only transaction can release')
    FROM uldp_tap_budget_visits;
COMMIT;
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.25', 'and is charged');
-- invalid public parameters are refused before the charge
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0) FROM uldp_tap_budget_visits$$, '22023', NULL,
    'an invalid epsilon is refused');
SELECT throws_ok($$SELECT user_dp_range(amount, user_id, 0.25, 0, 300, -1) FROM uldp_tap_budget_visits WHERE false$$,
    '22023', NULL, 'an invalid tau is refused, also on empty input');
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.25', 'refused parameters charge nothing');

-- ---------------------------------------------------------------------------
-- the session user pays: SET ROLE and SECURITY DEFINER do not move charges
SET ROLE uldp_tap_budget_other;
SELECT ok(user_dp_mean(amount, user_id, 0.25, 0, 300) IS NOT NULL, 'release after SET ROLE other')
    FROM uldp_tap_budget_visits;
RESET ROLE;
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.50', 'SET ROLE: the session user (analyst) paid');
SELECT ok(uldp_tap_budget_definer() IS NOT NULL, 'release inside a SECURITY DEFINER function owned by other');
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.75', 'SECURITY DEFINER: the session user (analyst) paid');
-- the exact remainder can still be spent, then nothing more
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM uldp_tap_budget_visits$$, '53000',
    'user_dp_mean with epsilon 0.5 and delta 0 exceeds the privacy budget of role "uldp_tap_budget_analyst"',
    'over budget (0.25 left, 0.5 asked)');
SELECT ok(user_dp_range(amount, user_id, 0.25, 0, 300) IS NOT NULL, 'the exact remainder (0.25) can be spent')
    FROM uldp_tap_budget_visits;
SELECT throws_ok($$SELECT user_dp_range(amount, user_id, 1e-6, 0, 300) FROM uldp_tap_budget_visits$$, '53000', NULL,
    'then nothing more');
SELECT is((SELECT epsilon_limit::text || ' ' || epsilon_spent::text || ' ' || delta_spent::text FROM uldp.budget),
    '3 3.00 0', 'the analyst has spent exactly the limit');
RESET SESSION AUTHORIZATION;
SELECT is((SELECT epsilon_spent::text FROM spent WHERE rolname = 'uldp_tap_budget_other'), '0',
    'the other role (SET ROLE target, SECURITY DEFINER owner) was charged nothing');
SELECT is((SELECT entries[12:] FROM charges WHERE rolname = 'uldp_tap_budget_analyst'),
    ARRAY['uldp.set_budget 0 0', 'user_dp_mean 0.25 0', 'user_dp_range 0.25 0', 'user_dp_mean 0.25 0',
          'user_dp_mean 0.25 0', 'user_dp_mean 0.25 0', 'user_dp_mean 0.25 0', 'user_dp_mean 0.25 0',
          'user_dp_range 0.25 0'],
    'the ledger holds exactly the charges made after the second set_budget');

-- ---------------------------------------------------------------------------
-- the analyst cannot touch the budget tables or the admin functions
SET SESSION AUTHORIZATION uldp_tap_budget_analyst;
SELECT throws_ok($$UPDATE uldp.budget_data SET epsilon_spent = 0$$, '42501',
    'permission denied for table budget_data', 'analyst cannot UPDATE budget_data');
SELECT throws_ok($$DELETE FROM uldp.budget_data$$, '42501',
    'permission denied for table budget_data', 'analyst cannot DELETE from budget_data');
SELECT throws_ok($$INSERT INTO uldp.budget_data VALUES (0, 100, 1)$$, '42501',
    'permission denied for table budget_data', 'analyst cannot INSERT into budget_data');
SELECT throws_ok($$UPDATE uldp.ledger_data SET epsilon = 0$$, '42501',
    'permission denied for table ledger_data', 'analyst cannot UPDATE ledger_data');
SELECT throws_ok($$DELETE FROM uldp.ledger_data$$, '42501',
    'permission denied for table ledger_data', 'analyst cannot DELETE from ledger_data');
SELECT throws_ok($$INSERT INTO uldp.ledger_data (role, function, epsilon, delta) VALUES (0, 'x', -1, 0)$$, '42501',
    'permission denied for table ledger_data', 'analyst cannot INSERT into ledger_data');
SELECT throws_ok($$UPDATE uldp.budget SET epsilon_spent = 0$$, '42501',
    'permission denied for view budget', 'analyst cannot UPDATE through the view budget');
SELECT throws_ok($$DELETE FROM uldp.ledger$$, '42501',
    'permission denied for view ledger', 'analyst cannot DELETE through the view ledger');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_budget_analyst', 100, 1)$$, '42501',
    'permission denied for function set_budget', 'analyst cannot call set_budget');
SELECT throws_ok($$SELECT uldp.reset_budget('uldp_tap_budget_analyst')$$, '42501',
    'permission denied for function reset_budget', 'analyst cannot call reset_budget');
SELECT throws_ok($$SELECT uldp._charge('uldp_tap_budget_analyst', 'x', -1, 0, '')$$, '42501',
    'permission denied for function _charge', 'analyst cannot call _charge');

-- the views show the analyst's own rows only
SELECT is((SELECT array_agg(role::text) FROM uldp.budget), ARRAY['uldp_tap_budget_analyst'],
    'uldp.budget shows the analyst only their own budget');
SELECT is((SELECT array_agg(DISTINCT role::text) FROM uldp.ledger), ARRAY['uldp_tap_budget_analyst'],
    'uldp.ledger shows the analyst only their own rows');
SELECT is((SELECT count(*) FROM uldp.ledger), 20::bigint, 'all 20 of them');
SET ROLE uldp_tap_budget_other;
SELECT is((SELECT array_agg(DISTINCT role::text) FROM uldp.ledger), ARRAY['uldp_tap_budget_analyst'],
    'after SET ROLE the views still show the session user''s rows');
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT ok((SELECT count(DISTINCT role) FROM uldp.ledger WHERE role::text LIKE 'uldp\_tap\_budget\_%') = 2,
    'the administrator sees the rows of both roles');

-- ---------------------------------------------------------------------------
-- reset_budget gives the budget back and logs the amounts, negated
SELECT lives_ok($$SELECT uldp.reset_budget('uldp_tap_budget_analyst')$$, 'reset_budget(analyst)');
SELECT is((SELECT epsilon_limit::text || ' ' || epsilon_spent::text FROM spent WHERE rolname = 'uldp_tap_budget_analyst'),
    '3 0', 'reset_budget sets the amount spent to 0 and keeps the limit');
SELECT is((SELECT entries[array_upper(entries, 1)] FROM charges WHERE rolname = 'uldp_tap_budget_analyst'),
    'uldp.reset_budget -3.00 0', 'reset_budget logs a ledger row with the negated amounts');
SET SESSION AUTHORIZATION uldp_tap_budget_analyst;
SELECT ok(user_dp_mean(amount, user_id, 2.5, 0, 300) IS NOT NULL, 'after the reset the analyst can release again')
    FROM uldp_tap_budget_visits;
SELECT is((SELECT epsilon_spent::text FROM uldp.budget), '2.5', 'and is charged from zero');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- superusers have no implicit budget
SET SESSION AUTHORIZATION uldp_tap_budget_super;
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM uldp_tap_budget_visits$$,
    '42501', 'role "uldp_tap_budget_super" has no privacy budget', 'a superuser without budget is refused');
SET ROLE uldp_tap_budget_analyst;
SELECT throws_ok($$SELECT user_dp_mean(amount, user_id, 0.1, 0, 300) FROM uldp_tap_budget_visits$$,
    '42501', 'role "uldp_tap_budget_super" has no privacy budget',
    'SET ROLE to a role with budget does not help: the session user pays');
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM uldp.ledger_data WHERE role = 'uldp_tap_budget_super'), 0::bigint,
    'nothing was recorded for the superuser');
SELECT is((SELECT epsilon_spent::text FROM spent WHERE rolname = 'uldp_tap_budget_analyst'), '2.5',
    'nor for the role it SET ROLE to');

SELECT * FROM finish();

\ir ../lib/cleanup.sql

-- test/pgtap/learning_robust.sql -- the SQL surface of user_dp_sgd's "robust" method (uldp 0.6):
-- the model it releases (its report of one pass: passes, gradient evaluations, phases, steps,
-- test_failed), the options it shares with the other methods, the refusals before the charge
-- (bad options, a budget its steps cannot honour) and its charge in the ledger.
--
-- Budget charges are committed by a background worker that cannot see uncommitted rows: the
-- roles, tables and budgets are created outside any transaction and removed at the end.
\set prefix uldp_tap_robust_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_robust_analyst LOGIN;
-- 400 users, 1 + u % 3 rows: two features, a linear label y and a binary label c
CREATE TABLE public.uldp_tap_robust_rows (u int, v float8[] CHECK (cardinality(v) = 2), y float8, c float8);
INSERT INTO public.uldp_tap_robust_rows
    SELECT u, ARRAY[(u % 10) / 5.0 - 1, (j % 3) - 1.0], (u % 10) / 5.0 - (j % 3) + 0.5, (u % 2)::float8
    FROM generate_series(1, 400) u, generate_series(0, 2) j WHERE j <= u % 3;
-- a vector column of no declared dimension, for the "dimension" option
CREATE TABLE public.uldp_tap_robust_wide (u int, v float8[], y float8);
GRANT SELECT ON public.uldp_tap_robust_rows, public.uldp_tap_robust_wide TO uldp_tap_robust_analyst;
SELECT uldp.set_budget('uldp_tap_robust_analyst', 1000, 0.1) IS NULL AS budget_set \gset

SELECT plan(33);

SET SESSION AUTHORIZATION uldp_tap_robust_analyst;
-- ---------------------------------------------------------------------------
-- the model
-- (Real randomness: the checks that read a noisy count, gradient_evaluations within 100 of the
-- 400 users and one phase by default (two need about 1600 users by the count), fail only if the
-- count's discrete Gaussian noise, variance 1 / (2 rho / 8) = 59 at epsilon 2, delta 1e-6
-- (rho = 0.0676), exceeds 100 = 13 standard deviations: probability below 1e-37 each.)
CREATE TEMP TABLE models AS
    SELECT 'linear' AS name, user_dp_sgd(v, y, u, 2, 1e-6, '{"method": "robust"}') AS m FROM uldp_tap_robust_rows
    UNION ALL
    SELECT 'logistic', user_dp_sgd(v, c, u, 2, 1e-6, '{"method": "robust", "loss": "logistic"}') FROM uldp_tap_robust_rows
    UNION ALL
    SELECT 'boolean', user_dp_sgd(v, c = 1, u, 2, 1e-6, '{"method": "robust", "loss": "logistic"}') FROM uldp_tap_robust_rows
    UNION ALL
    SELECT 'options', user_dp_sgd(v, y, u, 2, 1e-6,
        '{"method": "robust", "iterations": 7, "phases": 3, "tau": 0.5, "step_size": 0.1}') FROM uldp_tap_robust_rows;
SELECT is((SELECT array_agg(DISTINCT m ->> 'method') FROM models), ARRAY['robust'], 'every model says its method');
SELECT is((SELECT array_agg(DISTINCT (m ->> 'passes')::int) FROM models), ARRAY[1],
    'one pass: every row''s gradient is evaluated once');
SELECT ok((SELECT bool_and(abs((m ->> 'gradient_evaluations')::float8 - 400) < 100) FROM models),
    'gradient evaluations: one per user, from the noisy count of 400 users');
SELECT ok((SELECT bool_and((m ->> 'gradient_evaluations')::float8 = round((m ->> 'gradient_evaluations')::float8)) FROM models),
    'gradient evaluations: a whole number');
SELECT is((SELECT array_agg((m ->> 'phases')::int ORDER BY name) FROM models), ARRAY[1, 1, 1, 3],
    'one phase by default, or the phases option');
SELECT ok((SELECT bool_and((m ->> 'steps')::int BETWEEN 1 AND 10000) FROM models WHERE name <> 'options'),
    'without iterations, the steps are derived from the noisy count: 1 to 10000');
SELECT is((SELECT (m ->> 'steps')::int FROM models WHERE name = 'options'), 21, 'iterations are steps per phase: 7 x 3');
SELECT ok((SELECT NOT (m ? 'iterations') FROM models WHERE name = 'linear'), 'no iterations key when they were derived');
SELECT is((SELECT (m ->> 'iterations')::int FROM models WHERE name = 'options'), 7, 'the iterations given are reported');
SELECT is((SELECT (m ->> 'tau')::float8 FROM models WHERE name = 'options'), 0.5::float8, 'tau (the boxes'' half-width) is reported');
SELECT is((SELECT (m ->> 'step_size')::float8 FROM models WHERE name = 'options'), 0.1::float8, 'step_size is reported');
SELECT is((SELECT array_agg(DISTINCT jsonb_typeof(m -> 'test_failed')) FROM models), ARRAY['boolean'],
    'test_failed is a boolean in every model');
SELECT is((SELECT array_agg(jsonb_array_length(m -> 'weights') ORDER BY name) FROM models), ARRAY[3, 3, 3, 3],
    'two weights and an intercept');
SELECT ok((SELECT bool_and(w::float8 BETWEEN -1e6 AND 1e6) FROM models, jsonb_array_elements_text(m -> 'weights') w),
    'finite weights, both losses');
SELECT is((SELECT m ->> 'loss' FROM models WHERE name = 'boolean'), 'logistic', 'a boolean label with the logistic loss');
SELECT ok((SELECT uldp.predict(m, '{0.5, -1}') BETWEEN 0 AND 1 FROM models WHERE name = 'logistic'),
    'uldp.predict reads the model: a probability');
SELECT is((SELECT user_dp_sgd(v, y, u, 2, 1e-6, '{"method": "robust"}') -> 'weights' FROM uldp_tap_robust_rows WHERE u <= 3),
    '[]'::jsonb, 'too few users: no weights');
SELECT is((SELECT user_dp_sgd(v, y, u, 2, 1e-6, '{"method": "robust"}') -> 'weights' FROM uldp_tap_robust_rows WHERE false),
    '[]'::jsonb, 'no users: no weights');

-- ---------------------------------------------------------------------------
-- refused before the charge
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "Robust"}') FROM uldp_tap_robust_rows$$, '22023',
    'invalid user_dp_sgd option "method": unknown method', 'the method''s name is case-sensitive');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": 3}') FROM uldp_tap_robust_rows$$, '22023', NULL,
    'a number for the method');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "phases": 0}') FROM uldp_tap_robust_rows$$,
    '22023', 'invalid user_dp_sgd option "phases": must be an integer between 1 and 20', '0 phases');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "phases": 21}') FROM uldp_tap_robust_rows$$,
    '22023', NULL, '21 phases');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "iterations": 0}') FROM uldp_tap_robust_rows$$,
    '22023', 'invalid user_dp_sgd option "iterations": must be an integer between 1 and 10000', '0 iterations');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "iterations": 2.5}') FROM uldp_tap_robust_rows$$,
    '22023', NULL, 'fractional iterations');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "tau": 0}') FROM uldp_tap_robust_rows$$,
    '22023', 'invalid user_dp_sgd option "tau": must be a positive finite number', 'tau 0');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "tau": 1e51}') FROM uldp_tap_robust_rows$$,
    '22023', NULL, 'tau above 1e50');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust", "step_size": -1}') FROM uldp_tap_robust_rows$$,
    '22023', NULL, 'a negative step_size');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1e-4, 1e-6, '{"method": "robust", "dimension": 10000}') FROM uldp_tap_robust_wide$$,
    '22023', 'epsilon 0.0001 is too small for user_dp_sgd with delta 1e-06',
    'a budget that cannot give each step one grid step per coordinate of 10001 weights');
SELECT lives_ok($$SELECT user_dp_sgd(v, y, u, 1e-4, 1e-6, '{"method": "robust", "dimension": 100}') FROM uldp_tap_robust_wide$$,
    'the same budget with 101 weights');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust"}') FROM uldp_tap_robust_wide$$, '22023', NULL,
    'features whose dimension the query does not fix');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "robust"}') OVER () FROM uldp_tap_robust_rows$$,
    '0A000', NULL, 'as a window function');

-- ---------------------------------------------------------------------------
-- the charge: epsilon and delta once per model, whatever its steps; the refusals cost nothing
RESET SESSION AUTHORIZATION;
SELECT is((SELECT array_agg(epsilon || ' ' || delta ORDER BY at) FROM uldp.ledger
           WHERE role = 'uldp_tap_robust_analyst' AND function = 'user_dp_sgd'
             AND at > (SELECT max(at) FROM uldp.ledger
                       WHERE role = 'uldp_tap_robust_analyst' AND function = 'uldp.set_budget')),
    ARRAY['8 0.000004', '2 0.000001', '2 0.000001', '0.0001 0.000001'],
    'the ledger: the four models of one statement together, then each release once, and no refusal');
SELECT is((SELECT epsilon_spent || ' ' || delta_spent FROM uldp.budget_data WHERE role = 'uldp_tap_robust_analyst'),
    '12.0001 0.000007', 'the budget spent: 6 x 2 + 1e-4, and 7 x 1e-6');

SELECT * FROM finish();

\ir ../lib/cleanup.sql

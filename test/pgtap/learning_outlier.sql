-- test/pgtap/learning_outlier.sql -- user_dp_sgd's method "outlier_removal" (uldp 0.6, Lowy et al.
-- 2024, Algorithm 1), mostly with real randomness: the shape and the public facts of its models, the
-- failed test's initial point, the ball, budget charging, refusals, protected tables.
--
-- Budget charges are committed by a background worker that cannot see uncommitted rows: the
-- roles, tables and budgets are created outside any transaction and removed at the end.
\set prefix uldp_tap_outlier_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_outlier_analyst LOGIN;
CREATE ROLE uldp_tap_outlier_charged LOGIN;
-- 1500 users, 1 + u % 4 rows: two features, a linear label y and a logistic label c
CREATE TABLE public.uldp_tap_outlier_rows (u int, v float8[] CHECK (cardinality(v) = 2), y float8, c float8);
INSERT INTO public.uldp_tap_outlier_rows
    SELECT u, x, 2 * x[1] - x[2] + 0.5 + ((u * 7 + j * 3) % 5 - 2) * 0.05, (x[1] > x[2])::int::float8
    FROM generate_series(1, 1500) u, generate_series(0, 3) j,
         LATERAL (SELECT ARRAY[((u * 13 + j * 29) % 41) / 20.0 - 1,
                               ((u * 17 + j * 11) % 37) / 18.0 - 1]::float8[] AS x) xx
    WHERE j <= u % 4;
CREATE TABLE public.uldp_tap_outlier_protected AS SELECT * FROM public.uldp_tap_outlier_rows;
ALTER TABLE public.uldp_tap_outlier_protected ADD CHECK (cardinality(v) = 2);
SELECT uldp.protect_table('public.uldp_tap_outlier_protected', 'u') IS NOT NULL AS protected \gset
GRANT SELECT ON public.uldp_tap_outlier_rows TO uldp_tap_outlier_analyst, uldp_tap_outlier_charged;
SELECT uldp.set_budget('uldp_tap_outlier_analyst', 10000, 0.5) IS NULL AS budget_set \gset
SELECT uldp.set_budget('uldp_tap_outlier_charged', 1, 1e-5) IS NULL AS small_budget_set \gset

SELECT plan(25);

-- Models at epsilon 500, where the noise is small against what it measures and the test
-- passes on these concentrated users (in the seeded mode the weight's lower bound is 1.3 to
-- 1.4 times the floor at epsilon 32 already).  Whether the groups' points concentrate depends
-- on the random groups and row orders, for which no bound is derived, so these three are drawn
-- in the seeded mode and the checks that read their accuracy and their test cannot fail by
-- chance.  (With real randomness: 0 failed tests in 300 releases of each, the linear weights
-- within 0.02 of 2 and -1 against the check's 0.5, the logistic ones beyond +-4 against 0.5.)
-- Then five at epsilon 1 over 200 users, with real randomness, whose test fails unless the
-- weight's noise exceeds 3.1 standard deviations (37.7 points: the weight is at most 200
-- points, the margin 220 and the floor 98): with the subgaussian tail, one passes with
-- probability below 0.008, and the check (at least one fails) fails only if all five pass,
-- below 1e-9.
SET uldp.test_seed = 71;
SET SESSION AUTHORIZATION uldp_tap_outlier_analyst;
CREATE TEMP TABLE models AS
    SELECT 'logistic' AS name, user_dp_sgd(v, c, u, 500, 1e-6, '{"method": "outlier_removal", "loss": "logistic"}') AS m
    FROM uldp_tap_outlier_rows
    UNION ALL
    SELECT 'logistic again', user_dp_sgd(v, c, u, 500, 1e-6, '{"method": "outlier_removal", "loss": "logistic"}')
    FROM uldp_tap_outlier_rows
    UNION ALL
    SELECT 'squared', user_dp_sgd(v, y, u, 500, 1e-6, '{"method": "outlier_removal", "phases": 2}')
    FROM uldp_tap_outlier_rows;
RESET SESSION AUTHORIZATION;
RESET uldp.test_seed;
SET SESSION AUTHORIZATION uldp_tap_outlier_analyst;
INSERT INTO models
    SELECT 'few users ' || i, (SELECT user_dp_sgd(v, c, u, 1, 1e-6, '{"method": "outlier_removal", "loss": "logistic"}')
                               FROM uldp_tap_outlier_rows WHERE u <= 200 AND i > 0)
    FROM generate_series(1, 5) i;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- the shape of a model and its public facts
SELECT is((SELECT m ->> 'method' FROM models WHERE name = 'logistic'), 'outlier_removal',
    'the model names its method');
SELECT is((SELECT jsonb_array_length(m -> 'weights') FROM models WHERE name = 'logistic'), 3,
    'two weights and an intercept');
SELECT is((SELECT count(*) FROM models, jsonb_array_elements_text(m -> 'weights') w
           WHERE w::float8 = 'NaN' OR abs(w::float8) = 'Infinity'), 0::bigint, 'every weight is finite');
SELECT ok((SELECT bool_and(sqrt((SELECT sum(w::float8 ^ 2) FROM jsonb_array_elements_text(m -> 'weights') w))
                           <= (m ->> 'radius')::float8 * (1 + 1e-12)) FROM models),
    'every model lies in its ball');
SELECT is((SELECT array_agg(DISTINCT (m ->> 'passes')::int) FROM models), ARRAY[1],
    'passes: each row''s gradient is evaluated once');
SELECT ok((SELECT bool_and((m ->> 'steps')::int = (m ->> 'phases')::int) FROM models),
    'steps: one noisy model a phase');
SELECT ok((SELECT bool_and((m ->> 'phases')::int BETWEEN 1 AND 3) FROM models WHERE name <> 'squared')
          AND (SELECT (m ->> 'phases')::int BETWEEN 1 AND 2 FROM models WHERE name = 'squared'),
    'phases: at most the phases option (3 by default)');
SELECT ok((SELECT bool_and(abs((m ->> 'gradient_evaluations')::float8 - 1500) < 150) FROM models WHERE name NOT LIKE 'few users%'),
    'gradient_evaluations: the noisy count of users (each user''s rows once)');
SELECT ok((SELECT bool_and(jsonb_typeof(m -> 'test_failed') = 'boolean') FROM models),
    'test_failed is a boolean');
SELECT is((SELECT array_agg(m ->> 'test_failed' ORDER BY name) FROM models WHERE name NOT LIKE 'few users%'),
    ARRAY['false', 'false', 'false'], 'at epsilon 500, 1500 users concentrate: the test passes');
SELECT ok((SELECT bool_or((m ->> 'test_failed')::boolean) FROM models WHERE name LIKE 'few users%'),
    '200 users at epsilon 1: the test fails');
SELECT ok((SELECT bool_and(NOT (m ->> 'test_failed')::boolean OR m -> 'weights' = '[0, 0, 0]') FROM models),
    'a failed test releases the initial point, all zeros');
SELECT isnt((SELECT m -> 'weights' FROM models WHERE name = 'logistic'),
    (SELECT m -> 'weights' FROM models WHERE name = 'logistic again'),
    'two releases differ: the models carry noise');
SELECT ok((SELECT ((m -> 'weights' ->> 0)::float8 > 0.5 AND (m -> 'weights' ->> 1)::float8 < -0.5)
           FROM models WHERE name = 'logistic'),
    'the logistic model has the signs of x1 - x2');
SELECT ok((SELECT abs((m -> 'weights' ->> 0)::float8 - 2) < 0.5 AND abs((m -> 'weights' ->> 1)::float8 + 1) < 0.5
           FROM models WHERE name = 'squared'),
    'the linear model is near y = 2 x1 - x2 + 0.5');
SET SESSION AUTHORIZATION uldp_tap_outlier_analyst;
SELECT is((SELECT user_dp_sgd(v, y, u, 8, 1e-6, '{"method": "outlier_removal"}') -> 'weights'
           FROM uldp_tap_outlier_rows WHERE u <= 3), '[]'::jsonb,
    'below the release''s threshold of users: no model');

-- ---------------------------------------------------------------------------
-- refusals, before the charge
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1e-5, 1e-12, '{"method": "outlier_removal"}') FROM uldp_tap_outlier_rows$$,
    '22023', 'epsilon 1e-05 is too small for user_dp_sgd with delta 1e-12', 'a budget its mechanisms cannot honour');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "outlier_removal", "phases": 21}') FROM uldp_tap_outlier_rows$$,
    '22023', NULL, 'phases out of range');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "outlier_removal"}') OVER () FROM uldp_tap_outlier_rows$$,
    '0A000', NULL, 'not as a window function');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- budget: one call charges (epsilon, delta) once, whatever the phases
SET SESSION AUTHORIZATION uldp_tap_outlier_charged;
SELECT ok(user_dp_sgd(v, y, u, 0.5, 1e-6, '{"method": "outlier_removal", "phases": 3}') IS NOT NULL, 'the analyst trains')
FROM uldp_tap_outlier_rows;
SELECT is((SELECT array_agg(function || ' ' || epsilon || ' ' || delta) FROM uldp.ledger WHERE function LIKE 'user_dp_%'),
    ARRAY['user_dp_sgd 0.5 0.000001'], 'one ledger row: epsilon 0.5, delta 1e-6');
SELECT is((SELECT epsilon_spent || ' ' || delta_spent FROM uldp.budget), '0.5 0.000001',
    'the budget is charged (epsilon, delta) once');
RESET SESSION AUTHORIZATION;

-- protected tables: the analyst may train over the privacy unit without SELECT
SET SESSION AUTHORIZATION uldp_tap_outlier_analyst;
SELECT is((SELECT jsonb_array_length(user_dp_sgd(v, c, u, 8, 1e-6, '{"method": "outlier_removal", "loss": "logistic"}') -> 'weights')
           FROM uldp_tap_outlier_protected), 3, 'on a protected table, over its privacy unit');
SELECT throws_ok($$SELECT user_dp_sgd(v, c, c, 8, 1e-6, '{"method": "outlier_removal", "loss": "logistic"}') FROM uldp_tap_outlier_protected$$,
    '42501', NULL, 'on a protected table, not over another column');
SELECT throws_ok($$SELECT v FROM uldp_tap_outlier_protected LIMIT 1$$, '42501', NULL, 'and no raw rows');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();

DROP TABLE models;
\ir ../lib/cleanup.sql

-- test/pgtap/learning_accelerated.sql -- user_dp_sgd's method "accelerated" (uldp 0.6): its
-- options and defaults, the shape and report of its models (phases, steps, passes, gradient
-- evaluations, test_failed) with both losses and a boolean label, minibatches, the keys of a
-- model with outlier removal, errors, and budget charging (refused without a budget, charged
-- (epsilon, delta) also when tau keeps a share of delta for the tests, refused before the charge
-- when the budget cannot pay for a step).
--
-- Real randomness: the checks that read a model's report depend on it only through the noisy
-- count of users (a discrete Gaussian of rho / 8, sigma below 4 at epsilon 4): the phases and
-- gradient evaluations move only if it is off by 500 or more, over 100 standard deviations
-- (probability below 1e-1000).  Outlier removal's tests pass concentrated data but with
-- probability 10^-3 by design, so what they release (the inlier mean, a failed test's initial
-- point) is checked in the seeded mode, in sql/uldp_sgd_accelerated.sql.
--
-- Budget charges are committed by a background worker that cannot see uncommitted rows: the
-- roles, tables and budgets are created outside any transaction and removed at the end.
\set prefix uldp_tap_accel_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_accel_analyst LOGIN;
CREATE ROLE uldp_tap_accel_poor LOGIN;
-- 24000 users, 1 + u % 2 rows: two features, a linear label y and a binary label c
CREATE TABLE public.uldp_tap_accel_rows (u int, v float8[] CHECK (cardinality(v) = 2), y float8, c float8);
INSERT INTO public.uldp_tap_accel_rows
    SELECT u, ARRAY[(u % 10) / 5.0 - 1, (j % 3) - 1.0], (u % 10) / 5.0 - (j % 3) + 0.5, ((u % 10) >= 5)::int::float8
    FROM generate_series(1, 24000) u, generate_series(0, 1) j WHERE j <= u % 2;
-- 4000 users with the same rows (so the same gradients)
CREATE TABLE public.uldp_tap_accel_same (u int, v float8[] CHECK (cardinality(v) = 2), y float8);
INSERT INTO public.uldp_tap_accel_same
    SELECT u, ARRAY[(j % 3) - 1, (j % 2) * 0.5], 0.5 * ((j % 3) - 1) + 0.25
    FROM generate_series(1, 4000) u, generate_series(0, 5) j;
GRANT SELECT ON public.uldp_tap_accel_rows, public.uldp_tap_accel_same TO uldp_tap_accel_analyst, uldp_tap_accel_poor;
SELECT uldp.set_budget('uldp_tap_accel_analyst', 1000, 0.1) IS NULL AS budget_set \gset

SELECT plan(29);

SET SESSION AUTHORIZATION uldp_tap_accel_analyst;
CREATE TEMP TABLE models AS
    SELECT 'linear' AS name, user_dp_sgd(v, y, u, 4, 1e-6, '{"method": "accelerated"}') AS m
    FROM uldp_tap_accel_rows
    UNION ALL
    SELECT 'logistic', user_dp_sgd(v, c, u, 4, 1e-6, '{"loss": "logistic", "method": "accelerated"}')
    FROM uldp_tap_accel_rows
    UNION ALL
    SELECT 'boolean', user_dp_sgd(v, c = 1, u, 4, 1e-6, '{"loss": "logistic", "method": "accelerated"}')
    FROM uldp_tap_accel_rows
    UNION ALL
    SELECT 'given', user_dp_sgd(v, y, u, 4, 1e-6, '{"method": "accelerated", "phases": 3, "iterations": 4}')
    FROM uldp_tap_accel_rows
    UNION ALL
    SELECT 'minibatch', user_dp_sgd(v, y, u, 4, 1e-6, '{"method": "accelerated", "phases": 1, "iterations": 12, "passes": 3}')
    FROM uldp_tap_accel_rows
    UNION ALL
    SELECT 'removal', user_dp_sgd(v, y, u, 8, 1e-6,
        '{"method": "accelerated", "tau": 0.001, "feature_radius": 2, "label_bound": 2}')
    FROM uldp_tap_accel_same;

-- ---------------------------------------------------------------------------
-- shape and settings
SELECT is((SELECT array_agg(k ORDER BY k) FROM models, jsonb_object_keys(m) k WHERE name = 'linear'),
    ARRAY['delta', 'epsilon', 'feature_radius', 'gradient_clip', 'gradient_evaluations', 'iterations', 'l2',
          'label_bound', 'loss', 'method', 'passes', 'phases', 'radius', 'step_size', 'steps', 'test_failed',
          'weights'], 'an accelerated linear model has exactly these keys');
SELECT is((SELECT array_agg(k ORDER BY k) FROM models, jsonb_object_keys(m) k WHERE name = 'removal'),
    ARRAY['delta', 'epsilon', 'feature_radius', 'gradient_clip', 'gradient_evaluations', 'iterations', 'l2',
          'label_bound', 'loss', 'method', 'passes', 'phases', 'radius', 'step_size', 'steps', 'tau', 'test_failed',
          'weights'], 'with tau: the same keys and tau');
SELECT is((SELECT string_agg(name || ':' || jsonb_array_length(m -> 'weights'), ' ' ORDER BY name) FROM models),
    'boolean:3 given:3 linear:3 logistic:3 minibatch:3 removal:3', 'every model has three weights');
SELECT ok((SELECT bool_and(jsonb_typeof(w) = 'number') FROM models, jsonb_array_elements(m -> 'weights') w),
    'every weight is a number');
SELECT is((SELECT m ->> 'loss' || ' ' || (m ->> 'method') || ' ' || (m ->> 'phases') || ' ' || (m ->> 'iterations')
           FROM models WHERE name = 'linear'), 'squared accelerated 2 20',
    'the defaults of accelerated: 2 phases (of 12000 users) of at most 20 steps');
SELECT is((SELECT m ->> 'phases' FROM models WHERE name = 'removal'),
    '1', '4000 users: one phase (a second would have fewer than 10000 users)');
SELECT is((SELECT m ->> 'loss' || ' ' || (m ->> 'method') FROM models WHERE name = 'logistic'), 'logistic accelerated',
    'the logistic model records its loss and method');
SELECT ok((SELECT uldp.predict(m, '{0.5, -0.5}') BETWEEN 0 AND 1 FROM models WHERE name = 'boolean'),
    'a model of a boolean label predicts a probability');
SELECT ok((SELECT sqrt((SELECT sum(w::float8 ^ 2) FROM jsonb_array_elements_text(m -> 'weights') w)) <= (m ->> 'radius')::float8
           FROM models WHERE name = 'linear'), 'the model lies in its ball');

-- ---------------------------------------------------------------------------
-- the report: public facts
SELECT ok((SELECT bool_and((m ->> 'steps')::int BETWEEN (m ->> 'phases')::int AND (m ->> 'phases')::int * (m ->> 'iterations')::int)
           FROM models WHERE name IN ('linear', 'logistic', 'boolean', 'given', 'removal')),
    'a fit takes between 1 and iterations steps per phase');
SELECT is((SELECT (m ->> 'phases') || ' ' || (m ->> 'steps') || ' ' || (m ->> 'passes') FROM models WHERE name = 'given'),
    '2 8 4', 'phases 3 (a third would have 6000 users: 2), iterations 4: 8 steps, each user read by the 4 of its phase');
SELECT ok((SELECT (m ->> 'gradient_evaluations')::float8 BETWEEN 4 * 23500 AND 4 * 24500 FROM models WHERE name = 'given'),
    'gradient evaluations: 4 per user, from the noisy counts of its phases');
SELECT is((SELECT (m ->> 'steps') || ' ' || (m ->> 'passes') FROM models WHERE name = 'minibatch'), '12 3',
    'passes 3: 12 steps in 3 passes of 4 minibatches');
SELECT ok((SELECT (m ->> 'gradient_evaluations')::float8 BETWEEN 3 * 23500 AND 3 * 24500 FROM models WHERE name = 'minibatch'),
    'minibatches: each user''s gradient evaluated 3 times');
SELECT is((SELECT string_agg(DISTINCT m ->> 'test_failed', ' ') FROM models WHERE name <> 'removal'), 'false',
    'without tau there is no test: test_failed is false');

-- ---------------------------------------------------------------------------
-- errors and small inputs
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "accelerated", "passes": 0}') FROM uldp_tap_accel_rows$$,
    '22023', NULL, 'passes 0 is refused');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "accelerated", "passes": "2"}') FROM uldp_tap_accel_rows$$,
    '22023', NULL, 'passes must be a number');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "accelerate"}') FROM uldp_tap_accel_rows$$,
    '22023', 'invalid user_dp_sgd option "method": unknown method', 'a misspelt method is refused');
SELECT is((SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "accelerated"}') ? 'steps' FROM uldp_tap_accel_rows WHERE u <= 3),
    false, 'three users: no fit, no report');
SELECT is((SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "accelerated"}') -> 'weights' FROM uldp_tap_accel_rows WHERE false),
    '[]'::jsonb, 'no users: no weights');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- budgets
SET SESSION AUTHORIZATION uldp_tap_accel_poor;
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 0.5, 1e-6, '{"method": "accelerated"}') FROM uldp_tap_accel_rows$$,
    '42501', 'role "uldp_tap_accel_poor" has no privacy budget', 'no budget: accelerated is refused');
RESET SESSION AUTHORIZATION;
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_accel_poor', 1.0, 3e-6)$$, 'a budget of (1.0, 3e-6)');
SET SESSION AUTHORIZATION uldp_tap_accel_poor;
SELECT is((SELECT epsilon || ' ' || delta FROM uldp.cost($$SELECT user_dp_sgd(v, y, u, 0.5, 1e-6,
           '{"method": "accelerated", "tau": 0.5}') FROM uldp_tap_accel_rows$$)), '0.5 1e-06',
    'uldp.cost: (epsilon, delta), the tests'' share of delta included');
SELECT ok(user_dp_sgd(v, y, u, 0.5, 1e-6, '{"method": "accelerated", "tau": 0.5}') IS NOT NULL, 'accelerated with tau (0.5, 1e-6)')
FROM uldp_tap_accel_rows;
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1e-6, 1e-10, '{"method": "accelerated", "iterations": 10000}') FROM uldp_tap_accel_rows$$,
    '22023', NULL, 'a budget too small for a step is refused');
SELECT ok(user_dp_sgd(v, c, u, 0.5, 1e-6, '{"loss": "logistic", "method": "accelerated"}') IS NOT NULL, 'accelerated (0.5, 1e-6)')
FROM uldp_tap_accel_rows;
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 0.1, 1e-6, '{"method": "accelerated"}') FROM uldp_tap_accel_rows$$, '53000',
    'user_dp_sgd with epsilon 0.1 and delta 1e-06 exceeds the privacy budget of role "uldp_tap_accel_poor"',
    'epsilon exhausted: accelerated is refused');
SELECT is((SELECT epsilon_spent || ' ' || delta_spent FROM uldp.budget), '1.0 0.000002', 'the budget is spent exactly');
SELECT is((SELECT array_agg(function || ' ' || epsilon || ' ' || delta ORDER BY at) FROM uldp.ledger WHERE function LIKE 'user_dp_%'),
    ARRAY['user_dp_sgd 0.5 0.000001', 'user_dp_sgd 0.5 0.000001'],
    'the ledger holds the two releases, and not the refused ones');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();

\ir ../lib/cleanup.sql

-- test/pgtap/learning.sql -- the SQL surface of uldp 0.3's learning functions: user_dp_mean on
-- vectors, user_dp_sgd, uldp.predict, the zCDP helpers and the discrete Gaussian sampler:
-- signatures, return types, volatility, privileges, error SQLSTATEs, the shape of a model, and
-- budget charging (refused without a budget, charged (epsilon, delta), refused when exhausted).
--
-- Budget charges are committed by a background worker that cannot see uncommitted rows: the
-- roles, table and budgets are created outside any transaction and removed at the end.
\set prefix uldp_tap_learning_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_learning_analyst LOGIN;
CREATE ROLE uldp_tap_learning_poor LOGIN;
CREATE ROLE uldp_tap_learning_nobody NOLOGIN;
-- 200 users, 1 + u % 3 rows: two features, a linear label y and a binary label c
CREATE TABLE public.uldp_tap_learning_rows (u int, v float8[] CHECK (cardinality(v) = 2), y float8, c float8);
INSERT INTO public.uldp_tap_learning_rows
    SELECT u, ARRAY[(u % 10) / 5.0 - 1, (j % 3) - 1.0], (u % 10) / 5.0 - (j % 3) + 0.5, (u % 2)::float8
    FROM generate_series(1, 200) u, generate_series(0, 2) j WHERE j <= u % 3;
GRANT SELECT ON public.uldp_tap_learning_rows TO uldp_tap_learning_analyst, uldp_tap_learning_poor;
SELECT uldp.set_budget('uldp_tap_learning_analyst', 1000, 0.1) IS NULL AS budget_set \gset

SELECT plan(89);

-- ---------------------------------------------------------------------------
-- signatures and return types
SELECT is_aggregate('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision'],
    'user_dp_mean(value float8[], user_id, epsilon, delta) is an aggregate');
SELECT is_aggregate('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'user_dp_mean(value float8[], user_id, epsilon, delta, radius) is an aggregate');
SELECT is_aggregate('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'user_dp_mean(value float8[], user_id, epsilon, delta, radius, tau) is an aggregate');
SELECT is_aggregate('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'double precision', 'anyelement', 'double precision', 'double precision'],
    'user_dp_sgd(features, label, user_id, epsilon, delta) is an aggregate');
SELECT is_aggregate('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'double precision', 'anyelement', 'double precision', 'double precision', 'jsonb'],
    'user_dp_sgd(features, label, user_id, epsilon, delta, options) is an aggregate');
SELECT is_aggregate('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'boolean', 'anyelement', 'double precision', 'double precision'],
    'user_dp_sgd(features, label boolean, user_id, epsilon, delta) is an aggregate');
SELECT is_aggregate('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'boolean', 'anyelement', 'double precision', 'double precision', 'jsonb'],
    'user_dp_sgd(features, label boolean, user_id, epsilon, delta, options) is an aggregate');
SELECT function_returns('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision'],
    'double precision[]', 'vector user_dp_mean/4 returns double precision[]');
SELECT function_returns('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'double precision[]', 'vector user_dp_mean/5 returns double precision[]');
SELECT function_returns('public', 'user_dp_mean',
    ARRAY['double precision[]', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'double precision[]', 'vector user_dp_mean/6 returns double precision[]');
SELECT function_returns('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'double precision', 'anyelement', 'double precision', 'double precision'],
    'jsonb', 'user_dp_sgd/5 returns jsonb');
SELECT function_returns('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'double precision', 'anyelement', 'double precision', 'double precision', 'jsonb'],
    'jsonb', 'user_dp_sgd/6 returns jsonb');
SELECT function_returns('public', 'user_dp_sgd',
    ARRAY['double precision[]', 'boolean', 'anyelement', 'double precision', 'double precision', 'jsonb'],
    'jsonb', 'user_dp_sgd/6 with a boolean label returns jsonb');
SELECT is((SELECT array_agg(p.oid::regprocedure::text ORDER BY p.oid::regprocedure::text)
           FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_sgd'),
    ARRAY['user_dp_sgd(double precision[],boolean,anyelement,double precision,double precision)',
          'user_dp_sgd(double precision[],boolean,anyelement,double precision,double precision,jsonb)',
          'user_dp_sgd(double precision[],double precision,anyelement,double precision,double precision)',
          'user_dp_sgd(double precision[],double precision,anyelement,double precision,double precision,jsonb)'],
    'exactly four user_dp_sgd aggregates: a float8 or a boolean label, with or without options');
SELECT is((SELECT array_agg(DISTINCT a.aggtransfn::text || ' ' || a.aggfinalfn::text)
           FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_sgd'),
    ARRAY['uldp.sgd_transfn uldp.sgd_finalfn'],
    'all four run uldp.sgd_transfn and finish with uldp.sgd_finalfn, the release the statement plans');
SELECT is((SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
           AND p.proname = 'user_dp_mean' AND p.proargtypes[0] = 'float8[]'::regtype),
    3::bigint, 'exactly three vector user_dp_mean aggregates');
SELECT is((SELECT array_agg(p.proname::text || ' ' || a.aggfinalmodify::text ORDER BY p.oid)
           FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.proname IN ('user_dp_mean', 'user_dp_sgd') AND p.proargtypes[0] = 'float8[]'::regtype
             AND a.aggkind = 'n' AND p.proparallel = 's'),
    ARRAY['user_dp_mean r', 'user_dp_mean r', 'user_dp_mean r',
          'user_dp_sgd w', 'user_dp_sgd w', 'user_dp_sgd w', 'user_dp_sgd w'],
    'the seven aggregates are plain and parallel safe; the mean''s final function is read-only, '
    'user_dp_sgd''s groups and clips the rows in its state (read-write: never shared, never a window)');

SELECT function_returns('uldp', 'predict', ARRAY['jsonb', 'double precision[]'], 'double precision',
    'uldp.predict(model, features) returns double precision');
SELECT volatility_is('uldp', 'predict', ARRAY['jsonb', 'double precision[]'], 'immutable', 'uldp.predict is immutable');
SELECT is_strict('uldp', 'predict', ARRAY['jsonb', 'double precision[]'], 'uldp.predict is strict');
SELECT volatility_is('uldp', 'zcdp_rho', ARRAY['double precision', 'double precision'], 'immutable', 'uldp.zcdp_rho is immutable');
SELECT volatility_is('uldp', 'zcdp_delta', ARRAY['double precision', 'double precision'], 'immutable', 'uldp.zcdp_delta is immutable');
SELECT function_returns('uldp', '_sample_discrete_gaussian', ARRAY['double precision', 'integer'], 'bigint[]',
    'uldp._sample_discrete_gaussian(sigma2, n) returns bigint[]');
SELECT volatility_is('uldp', '_sample_discrete_gaussian', ARRAY['double precision', 'integer'], 'volatile',
    'the sampler is volatile');

-- privileges: the releases and predict are for everyone, the sampler for superusers only
SELECT ok(has_function_privilege('uldp_tap_learning_nobody',
    'user_dp_mean(float8[], anyelement, float8, float8, float8, float8)', 'EXECUTE'), 'PUBLIC may call vector user_dp_mean');
SELECT ok(has_function_privilege('uldp_tap_learning_nobody',
    'user_dp_sgd(float8[], float8, anyelement, float8, float8, jsonb)', 'EXECUTE'), 'PUBLIC may call user_dp_sgd');
SELECT ok(has_function_privilege('uldp_tap_learning_nobody',
    'user_dp_sgd(float8[], boolean, anyelement, float8, float8)', 'EXECUTE'),
    'PUBLIC may call user_dp_sgd with a boolean label');
SELECT ok(has_function_privilege('uldp_tap_learning_nobody', 'uldp.predict(jsonb, float8[])', 'EXECUTE'),
    'PUBLIC may call uldp.predict');
SELECT ok(has_function_privilege('uldp_tap_learning_nobody', 'uldp.zcdp_rho(float8, float8)', 'EXECUTE'),
    'PUBLIC may call uldp.zcdp_rho');
SELECT ok(NOT has_function_privilege('uldp_tap_learning_nobody', 'uldp._sample_discrete_gaussian(float8, integer)', 'EXECUTE'),
    'PUBLIC may not call uldp._sample_discrete_gaussian');
SET SESSION AUTHORIZATION uldp_tap_learning_analyst;
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(1, 10)$$, '42501', NULL,
    'a non-superuser cannot draw discrete Gaussian noise');
RESET SESSION AUTHORIZATION;
SELECT is(cardinality(uldp._sample_discrete_gaussian(1, 10)), 10, 'a superuser can: n draws');
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(2 ^ (-65), 10)$$, '22023', NULL, 'sampler: sigma2 below 2^-64');
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(1, -1)$$, '22023', NULL, 'sampler: negative n');

-- the zCDP conversion: rho gives back (at most) delta
SELECT ok(uldp.zcdp_delta(uldp.zcdp_rho(1, 1e-6), 1) BETWEEN 0.999e-6 AND 1e-6,
    'zcdp_delta(zcdp_rho(1, 1e-6), 1) is just below 1e-6');
SELECT ok(uldp.zcdp_rho(1, 1e-6) < uldp.zcdp_rho(1, 1e-3) AND uldp.zcdp_rho(1, 1e-6) < uldp.zcdp_rho(2, 1e-6),
    'zcdp_rho grows with epsilon and delta');
SELECT throws_ok($$SELECT uldp.zcdp_rho(0, 1e-6)$$, '22023', NULL, 'zcdp_rho: epsilon 0');
SELECT throws_ok($$SELECT uldp.zcdp_rho(1, 0)$$, '22023', NULL, 'zcdp_rho: delta 0');
SELECT throws_ok($$SELECT uldp.zcdp_delta(-1, 1)$$, '22023', NULL, 'zcdp_delta: negative rho');

-- ---------------------------------------------------------------------------
-- errors, as the analyst (who has a budget)
SET SESSION AUTHORIZATION uldp_tap_learning_analyst;
SELECT throws_ok($$SELECT user_dp_mean(v, u, 0, 1e-6) FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: epsilon 0');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 0) FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: delta 0');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 0.51) FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: delta above 0.5');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 1e-6, -2) FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: negative radius');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 1e-6, 1, 'NaN') FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: NaN tau');
SELECT throws_ok($$SELECT user_dp_mean(v, u, NULL, 1e-6) FROM uldp_tap_learning_rows$$, '22004', NULL, 'mean: NULL epsilon');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, NULL, 1) FROM uldp_tap_learning_rows$$, '22004', NULL, 'mean: NULL delta');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 1e-6, NULL) FROM uldp_tap_learning_rows$$, '22004', NULL, 'mean: NULL radius');
SELECT throws_ok($$SELECT user_dp_mean(CASE WHEN u = 7 THEN v || 1.0::float8 ELSE v END, u, 1, 1e-6) FROM uldp_tap_learning_rows$$,
    '22023', NULL, 'mean: a dimension the query does not fix (the error does not depend on the rows)');
SELECT throws_ok($$SELECT user_dp_mean('{}'::float8[], u, 1, 1e-6) FROM uldp_tap_learning_rows$$, '22023', NULL, 'mean: an empty vector');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1, 1e-6) OVER () FROM uldp_tap_learning_rows$$, '0A000', NULL, 'mean: as a window function');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"loss": "hinge"}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: unknown loss');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"method": "sgd"}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: unknown method');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"iterations": 0}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: 0 iterations');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"phases": 21}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: 21 phases');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"l2": -1}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: negative l2');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"gradient_clip": "1"}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: a string for a number');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"momentum": 0.9}') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: unknown option');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '"squared"') FROM uldp_tap_learning_rows$$, '22023', NULL, 'sgd: options not an object');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"iterations": 10}') OVER () FROM uldp_tap_learning_rows$$, '0A000', NULL, 'sgd: as a window function');
SELECT throws_ok($$SELECT user_dp_sgd(v || 1.0::float8, y, u, 1, 1e-6) FROM uldp_tap_learning_rows WHERE u = 1
                   UNION ALL SELECT user_dp_sgd(CASE WHEN u = 2 THEN v || 1.0::float8 ELSE v END, y, u, 1, 1e-6) FROM uldp_tap_learning_rows$$,
    '22023', NULL, 'sgd: features whose dimension the query does not fix');
SELECT throws_ok($$SELECT uldp.predict('{"loss": "squared"}', '{1, 2}')$$, '22023', NULL, 'predict: a model without weights');
SELECT throws_ok($$SELECT uldp.predict('{"loss": "squared", "weights": [1, 2, 3], "feature_radius": 1}', '{1}')$$,
    '2202E', NULL, 'predict: the wrong number of features');
SELECT is(uldp.predict('{"loss": "squared", "weights": [1, 2, 3], "feature_radius": 1}', '{NULL, 1}'), NULL,
    'predict: NULL when a feature is NULL');

-- ---------------------------------------------------------------------------
-- model shape
CREATE TEMP TABLE models AS
    SELECT 'linear' AS name, user_dp_sgd(v, y, u, 2, 1e-6, '{"iterations": 10}') AS m FROM uldp_tap_learning_rows
    UNION ALL
    SELECT 'logistic', user_dp_sgd(v, c, u, 2, 1e-6, '{"loss": "logistic", "method": "phased_erm", "phases": 2, "iterations": 5, "tau": 1}')
    FROM uldp_tap_learning_rows;
SELECT is((SELECT array_agg(k ORDER BY k) FROM models, jsonb_object_keys(m) k WHERE name = 'linear'),
    ARRAY['delta', 'epsilon', 'feature_radius', 'gradient_clip', 'gradient_evaluations', 'iterations', 'l2',
          'label_bound', 'loss', 'method', 'passes', 'phases', 'radius', 'step_size', 'steps', 'test_failed',
          'weights'], 'a linear model has exactly these keys');
SELECT is((SELECT array_agg(k ORDER BY k) FROM models, jsonb_object_keys(m) k WHERE name = 'logistic'),
    ARRAY['delta', 'epsilon', 'feature_radius', 'gradient_clip', 'gradient_evaluations', 'iterations', 'l2', 'loss',
          'method', 'passes', 'phases', 'radius', 'step_size', 'steps', 'tau', 'test_failed', 'weights'],
    'a logistic phased_erm model with tau has exactly these keys');
SELECT is((SELECT jsonb_array_length(m -> 'weights') FROM models WHERE name = 'linear'), 3, 'two features: three weights');
SELECT ok((SELECT bool_and(jsonb_typeof(w) = 'number') FROM models, jsonb_array_elements(m -> 'weights') w),
    'every weight is a number');
SELECT is((SELECT m ->> 'loss' || ' ' || (m ->> 'method') || ' ' || (m ->> 'iterations') || ' ' || (m ->> 'epsilon')
           FROM models WHERE name = 'linear'), 'squared winsorized 10 2', 'the linear model records its settings');
SELECT is((SELECT m ->> 'loss' || ' ' || (m ->> 'method') || ' ' || (m ->> 'phases') || ' ' || (m ->> 'tau')
           FROM models WHERE name = 'logistic'), 'logistic phased_erm 2 1', 'the logistic model records its settings');
SELECT is((SELECT (m ->> 'phases') || ' ' || (m ->> 'steps') || ' ' || (m ->> 'passes') || ' ' || (m ->> 'test_failed')
           FROM models WHERE name = 'linear'), '1 10 10 false', 'a winsorized fit reports one phase of 10 steps, each reading every row');
SELECT is((SELECT (m ->> 'phases') || ' ' || (m ->> 'steps') || ' ' || (m ->> 'passes') || ' ' || (m ->> 'test_failed')
           FROM models WHERE name = 'logistic'), '2 10 5 false', 'a phased fit reports 2 phases of 5 steps, each row read in one');
SELECT ok((SELECT (m ->> 'gradient_evaluations')::float8 = 10 * round((m ->> 'gradient_evaluations')::float8 / 10)
                  AND (m ->> 'gradient_evaluations')::float8 > 0 FROM models WHERE name = 'linear'),
    'a winsorized fit reports its user gradients: 10 steps times a noisy count');
SELECT ok((SELECT (m ->> 'delta')::float8 BETWEEN 0.999999e-6 AND 1.000001e-6 FROM models WHERE name = 'linear'),
    'the model records delta');
SELECT ok((SELECT (m ->> 'feature_radius')::float8 > 0 AND (m ->> 'radius')::float8 > 0 AND (m ->> 'step_size')::float8 > 0
                  AND (m ->> 'gradient_clip')::float8 > 0 AND (m ->> 'label_bound')::float8 > 0
           FROM models WHERE name = 'linear'), 'the private scales of a model are positive');
SELECT ok((SELECT uldp.predict(m, '{0.5, -0.5}') BETWEEN 0 AND 1 FROM models WHERE name = 'logistic'),
    'a logistic model predicts a probability');
SELECT is((SELECT jsonb_array_length(user_dp_sgd(v, c = 1, u, 2, 1e-6, '{"loss": "logistic", "iterations": 5}') -> 'weights')
           FROM uldp_tap_learning_rows), 3, 'a boolean label trains a model');
SELECT is((SELECT user_dp_sgd(v, y, u, 2, 1e-6) -> 'weights' FROM uldp_tap_learning_rows WHERE u <= 3), '[]'::jsonb,
    'three users: no weights');
SELECT is((SELECT user_dp_mean(v, u, 2, 1e-6) FROM uldp_tap_learning_rows WHERE false), '{}'::float8[],
    'vector mean of nothing: the empty array');
SELECT is((SELECT cardinality(user_dp_mean(v, u, 2, 1e-6, 3)) FROM uldp_tap_learning_rows), 2,
    'vector mean of 200 users: a vector of their dimension');
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- budgets: no budget, exhausted epsilon, exhausted delta
SET SESSION AUTHORIZATION uldp_tap_learning_poor;
SELECT throws_ok($$SELECT user_dp_mean(v, u, 0.5, 1e-6) FROM uldp_tap_learning_rows$$,
    '42501', 'role "uldp_tap_learning_poor" has no privacy budget', 'no budget: vector user_dp_mean is refused');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 0.5, 1e-6) FROM uldp_tap_learning_rows WHERE false$$,
    '42501', 'role "uldp_tap_learning_poor" has no privacy budget', 'no budget: user_dp_sgd on empty input is refused');
RESET SESSION AUTHORIZATION;
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_learning_poor', 1.0, 3e-6)$$, 'a budget of (1.0, 3e-6)');
SET SESSION AUTHORIZATION uldp_tap_learning_poor;
SELECT ok(user_dp_mean(v, u, 0.5, 1e-6, 2) IS NOT NULL, 'vector mean (0.5, 1e-6)') FROM uldp_tap_learning_rows;
SELECT ok(user_dp_sgd(v, y, u, 0.25, 1e-6, '{"iterations": 5}') IS NOT NULL, 'sgd (0.25, 1e-6)') FROM uldp_tap_learning_rows;
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 0.5, 1e-7) FROM uldp_tap_learning_rows$$, '53000',
    'user_dp_sgd with epsilon 0.5 and delta 1e-07 exceeds the privacy budget of role "uldp_tap_learning_poor"',
    'epsilon exhausted: user_dp_sgd is refused');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 0.1, 2e-6) FROM uldp_tap_learning_rows$$, '53000', NULL,
    'delta exhausted: vector user_dp_mean is refused');
SELECT ok(user_dp_mean(v, u, 0.25, 1e-6) IS NOT NULL, 'the rest of the budget: (0.25, 1e-6)') FROM uldp_tap_learning_rows;
SELECT is((SELECT epsilon_spent || ' ' || delta_spent FROM uldp.budget), '1.00 0.000003', 'the budget is spent exactly');
SELECT is((SELECT array_agg(function || ' ' || epsilon || ' ' || delta ORDER BY at) FROM uldp.ledger WHERE function LIKE 'user_dp_%'),
    ARRAY['user_dp_mean 0.5 0.000001', 'user_dp_sgd 0.25 0.000001', 'user_dp_mean 0.25 0.000001'],
    'the ledger holds the three releases, and not the refused ones');
RESET SESSION AUTHORIZATION;

SELECT * FROM finish();

\ir ../lib/cleanup.sql

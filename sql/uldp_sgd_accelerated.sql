-- user_dp_sgd's method "accelerated" (uldp 0.6): accelerated phased ERM with outlier gradient
-- removal (Lowy et al. 2024, Algorithms 2 and 3), in the seeded test mode
SET uldp.test_seed = 61;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

\set users 600
\set rows_table acc_rows
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixture :abs_srcdir '/sql/include/sgd_rows.sql'
\i :fixture

-- linear regression with the defaults of "accelerated": AC-SA in at most 2 phases (here 1: a
-- phase needs 10000 users) of at most 20 steps (fewer when lambda_k is large), every step
-- reading its phase's users; private scales
-- (600 users are enough for them at epsilon 1), and at 150 users the typical norm and label 1
-- (feature_radius 2.5, label_bound 3, radius 30): finite weights in the ball
SELECT model_round(user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"method": "accelerated"}')) FROM acc_rows;
SELECT model_round(user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated"}')) FROM acc_rows;
SELECT model_round(m, 2) -> 'weights' AS weights_150, m -> 'feature_radius' AS feature_radius,
	   sqrt((SELECT sum(w::float8 ^ 2) FROM jsonb_array_elements_text(m -> 'weights') w)) <= (m ->> 'radius')::float8
		   AS inside_ball
FROM (SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated"}') AS m
	  FROM acc_rows WHERE user_id <= 150) s;
-- logistic regression
SET uldp.test_seed = 62;
SELECT model_round(user_dp_sgd(x, c, user_id, 4.0, 1e-6, '{"loss": "logistic", "method": "accelerated"}'))
FROM acc_rows;
-- the same seed, the same model
SET uldp.test_seed = 62;
SELECT model_round(user_dp_sgd(x, c, user_id, 4.0, 1e-6, '{"loss": "logistic", "method": "accelerated"}'))
	-> 'weights' AS same_seed_same_weights
FROM acc_rows;
-- a boolean label is the label 1 or 0, draw for draw
SET uldp.test_seed = 62;
SELECT model_round(user_dp_sgd(x, c = 1, user_id, 4.0, 1e-6, '{"loss": "logistic", "method": "accelerated"}'))
	-> 'weights' AS boolean_label
FROM acc_rows;

-- predictions of released models: the linear model's mean absolute error, the logistic
-- model's accuracy
SET uldp.test_seed = 63;
CREATE TABLE acc_models AS
	SELECT 'linear' AS name, user_dp_sgd(x, y, user_id, 4.0, 1e-6,
		'{"method": "accelerated", "feature_radius": 1.5, "label_bound": 4, "radius": 5, "gradient_clip": 8}') AS model
	FROM acc_rows
	UNION ALL
	SELECT 'logistic', user_dp_sgd(x, c, user_id, 4.0, 1e-6,
		'{"loss": "logistic", "method": "accelerated", "feature_radius": 1.5, "radius": 20}')
	FROM acc_rows;
SELECT name, model_round(model) FROM acc_models ORDER BY name;
SELECT round(avg(abs(uldp.predict(m.model, x) - y))::numeric, 2) < 0.5 AS linear_fits
FROM acc_rows, acc_models m WHERE m.name = 'linear';
SELECT avg(((uldp.predict(m.model, x) > 0.5)::int::float8 = c)::int) > 0.9 AS logistic_fits
FROM acc_rows, acc_models m WHERE m.name = 'logistic';

-- the report: phases (at most those given, here 1), steps (the sum of each phase's steps, here
-- the "iterations" given), passes (the steps that read a user) and the users' gradients
-- evaluated, from the noisy counts
SET uldp.test_seed = 64;
SELECT m -> 'phases' AS phases, m -> 'steps' AS steps, m -> 'passes' AS passes,
	   (m ->> 'gradient_evaluations')::float8 BETWEEN 5 * 500 AND 5 * 700 AS about_5_per_user,
	   m -> 'test_failed' AS test_failed
FROM (SELECT user_dp_sgd(x, y, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "phases": 3, "iterations": 5}') AS m FROM acc_rows) s;
-- minibatches: "passes": 1 reads each user once per phase, one of its steps drawn at random
SELECT m -> 'steps' AS steps, m -> 'passes' AS passes,
	   (m ->> 'gradient_evaluations')::float8 BETWEEN 500 AND 700 AS about_1_per_user,
	   model_round(m, 1) -> 'weights' AS weights
FROM (SELECT user_dp_sgd(x, y, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "passes": 1, "iterations": 10, "phases": 1}') AS m FROM acc_rows) s;
-- the keys of a model
SELECT string_agg(k, ' ' ORDER BY k) AS keys
FROM (SELECT user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"loss": "logistic", "method": "accelerated"}') AS m
	  FROM acc_rows) s, jsonb_object_keys(m) k;

-- outlier removal (tau given): 2000 users with the same rows, so the same gradients; the
-- inlier mean of every step passes its test and gets noise for 12 tau / W instead of
-- gradient_clip / n: a model close to y = 0.5 x1 + 0.25 and test_failed false
CREATE TABLE acc_same AS
	SELECT u AS user_id, ARRAY[(j % 3) - 1, (j % 2) * 0.5]::float8[] AS x,
		   0.5 * ((j % 3) - 1) + 0.25 AS y, u % 2 = 0 AS even
	FROM generate_series(1, 2000) u, generate_series(0, 5) j;
ALTER TABLE acc_same ADD CHECK (cardinality(x) = 2);
SET uldp.test_seed = 65;
SELECT model_round(m, 2) -> 'weights' AS weights, m -> 'test_failed' AS test_failed, m -> 'tau' AS tau
FROM (SELECT user_dp_sgd(x, y, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "tau": 0.001, "feature_radius": 2, "label_bound": 2}') AS m
	  FROM acc_same) s;
-- half of the users with the opposite labels: their gradients form two clusters, no user has
-- more than half of the others within 2 tau, the first test fails and the model is the
-- initial point, all zeros, after one step
SELECT m -> 'weights' AS weights, m -> 'test_failed' AS test_failed, m -> 'steps' AS steps
FROM (SELECT user_dp_sgd(x, CASE WHEN even THEN y ELSE -y END, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "tau": 0.001, "feature_radius": 2, "label_bound": 2}') AS m
	  FROM acc_same) s;
-- a tau too large to beat gradient_clip / n, or too few users for the test's noise margin:
-- the clipped mean, no test
SELECT m -> 'test_failed' AS test_failed, m -> 'steps' AS steps
FROM (SELECT user_dp_sgd(x, CASE WHEN even THEN y ELSE -y END, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "tau": 1, "feature_radius": 2, "label_bound": 2}') AS m
	  FROM acc_same) s;
SELECT m -> 'test_failed' AS test_failed, m -> 'steps' AS steps
FROM (SELECT user_dp_sgd(x, CASE WHEN even THEN y ELSE -y END, user_id, 8.0, 1e-6,
		'{"method": "accelerated", "tau": 0.001, "feature_radius": 2, "label_bound": 2}') AS m
	  FROM acc_same WHERE user_id <= 100) s;
DROP TABLE acc_same;

-- one-hot features: 3 categories besides a reference one (the zero row), 400 users, 60% of them
-- in the reference category; a boolean label; the model tells the categories apart
CREATE TABLE acc_onehot AS
	SELECT u AS user_id, k,
		   ARRAY[(k = 1)::int, (k = 2)::int, (k = 3)::int]::float8[] AS x,
		   (j + u % 10) % 10 < CASE k WHEN 0 THEN 2 WHEN 1 THEN 8 WHEN 2 THEN 5 ELSE 9 END AS y
	FROM generate_series(1, 400) u, generate_series(0, 2) j,
		 LATERAL (SELECT CASE WHEN u % 5 < 3 THEN 0 ELSE 1 + u % 3 END AS k) kk;
ALTER TABLE acc_onehot ADD CHECK (cardinality(x) = 3);
SET uldp.test_seed = 66;
SELECT (model ->> 'feature_radius')::float8 AS feature_radius,
	   round(uldp.predict(model, '{0, 0, 0}')::numeric, 2) AS reference,
	   round(uldp.predict(model, '{1, 0, 0}')::numeric, 2) AS first,
	   round(uldp.predict(model, '{0, 1, 0}')::numeric, 2) AS second,
	   round(uldp.predict(model, '{0, 0, 1}')::numeric, 2) AS third
FROM (SELECT user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"loss": "logistic", "method": "accelerated"}') AS model
	  FROM acc_onehot) s;
DROP TABLE acc_onehot;

-- too few users: no weights and no report; no users at all
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated"}') -> 'weights' AS few_users
FROM acc_rows WHERE user_id <= 5;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated"}') AS empty FROM acc_rows WHERE false;

-- the option passes, and a budget too small for the steps, refused before the charge
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated", "passes": 0}') FROM acc_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated", "passes": 10001}') FROM acc_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "accelerated", "passes": 1.5}') FROM acc_rows;
SELECT user_dp_sgd(x, y, user_id, 1e-6, 1e-10, '{"method": "accelerated", "iterations": 10000}') FROM acc_rows;
-- the ledger: charged (epsilon, delta), with tau too (the tests' share of delta is part of it)
SELECT user_dp_sgd(x, y, user_id, 0.375, 3e-7, '{"method": "accelerated", "tau": 0.5}') -> 'weights'
FROM acc_rows WHERE false;
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;

DROP TABLE acc_models;
DROP TABLE acc_rows;
DROP FUNCTION model_round(jsonb, int);
RESET uldp.test_seed;

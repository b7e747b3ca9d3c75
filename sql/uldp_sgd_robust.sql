-- user_dp_sgd's "robust" method (uldp 0.6: one pass of robust SGD, after Ghazi et al. 2025) in the
-- seeded test mode
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

\set users 300
\set rows_table robust_rows
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixture :abs_srcdir '/sql/include/sgd_rows.sql'
\i :fixture

-- linear regression, default options: one pass (passes 1, one gradient per user: the noisy count),
-- the steps derived from the noisy count; 300 users are too few for the concentration test
-- (test_failed false, not run) and for a second phase, and, at epsilon 1, for the calibration of
-- the boxes
SELECT model_round(user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"method": "robust"}')) FROM robust_rows;
SELECT model_round(user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust"}')) FROM robust_rows;
-- predictions of a model at epsilon 8: close to y = 2 x1 - x2 + 0.5
SET uldp.test_seed = 43;
SELECT round(avg(abs(uldp.predict(m, x) - y))::numeric, 2) < 0.25 AS linear_fits
FROM (SELECT user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"method": "robust"}') AS m FROM robust_rows) s, robust_rows;
-- logistic regression; a boolean label is 1 (true) or 0 (false): the same model, draw for draw
SET uldp.test_seed = 44;
SELECT model_round(user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"method": "robust", "loss": "logistic"}')) FROM robust_rows;
SET uldp.test_seed = 44;
SELECT model_round(user_dp_sgd(x, c = 1, user_id, 2.0, 1e-6, '{"method": "robust", "loss": "logistic"}')) -> 'weights'
	AS boolean_label
FROM robust_rows;
SET uldp.test_seed = 45;
SELECT round(avg(((uldp.predict(m, x) > 0.5)::int::float8 = c)::int), 2) AS accuracy
FROM (SELECT user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"method": "robust", "loss": "logistic"}') AS m FROM robust_rows) s,
	 robust_rows;
-- few users: 100 users at epsilon 1, and 30 users (no model: the noisy count is below the threshold)
SET uldp.test_seed = 46;
SELECT model_round(m, 2) -> 'weights' AS weights_100,
	   sqrt((SELECT sum(w::float8 ^ 2) FROM jsonb_array_elements_text(m -> 'weights') w)) <= (m ->> 'radius')::float8
		   AS inside_ball
FROM (SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust"}') AS m FROM robust_rows WHERE user_id <= 100) s;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust"}') AS thirty_users FROM robust_rows WHERE user_id <= 30;
-- the options it shares with the other methods: iterations (steps per phase), phases, step_size,
-- l2, tau (the half-width of the boxes, instead of the calibration)
SET uldp.test_seed = 47;
SELECT model_round(user_dp_sgd(x, y, user_id, 4.0, 1e-6,
	'{"method": "robust", "iterations": 5, "phases": 3, "step_size": 0.5, "l2": 0, "tau": 2, "feature_radius": 1.5}'))
FROM robust_rows;

-- one-hot features (as in uldp_sgd.sql): 3 categories besides a reference one, 400 users, 60% of
-- them in the reference category; the boxes are calibrated at epsilon 8 but not at epsilon 1
CREATE TABLE robust_onehot AS
	SELECT u AS user_id, k,
		   ARRAY[(k = 1)::int, (k = 2)::int, (k = 3)::int]::float8[] AS x,
		   (j + u % 10) % 10 < CASE k WHEN 0 THEN 2 WHEN 1 THEN 8 WHEN 2 THEN 5 ELSE 9 END AS y
	FROM generate_series(1, 400) u, generate_series(0, 2) j,
		 LATERAL (SELECT CASE WHEN u % 5 < 3 THEN 0 ELSE 1 + u % 3 END AS k) kk;
ALTER TABLE robust_onehot ADD CHECK (cardinality(x) = 3);
SET uldp.test_seed = 48;
CREATE TABLE robust_onehot_models AS
	SELECT 8 AS epsilon, user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"method": "robust", "loss": "logistic"}') AS model
	FROM robust_onehot
	UNION ALL
	SELECT 1, user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust", "loss": "logistic"}') FROM robust_onehot;
SELECT epsilon, (model ->> 'feature_radius')::float8 AS feature_radius, (model ->> 'steps')::int AS steps,
	   round(uldp.predict(model, '{0, 0, 0}')::numeric, 2) AS reference,
	   round(uldp.predict(model, '{1, 0, 0}')::numeric, 2) AS first,
	   round(uldp.predict(model, '{0, 1, 0}')::numeric, 2) AS second,
	   round(uldp.predict(model, '{0, 0, 1}')::numeric, 2) AS third
FROM robust_onehot_models ORDER BY epsilon DESC;

-- 2000 users with 2 rows each: enough at epsilon 8 for a second phase, whose boxes are
-- calibrated near the optimum (by default: phases 2); and, with tau (one phase, no calibration),
-- for the concentration test (a third of the users must leave the boxes for it to fail): its
-- queries count the users whose gradient left the box, and it fails, releasing the initial point
-- 0, when the boxes are far too narrow for the users' gradients (tau 1e-6): test_failed true,
-- all-zero weights
CREATE TABLE robust_many AS
	SELECT u AS user_id, x, (x[1] + 0.5 * x[2] > 0.1)::int::float8 AS c
	FROM generate_series(1, 2000) u, generate_series(0, 1) j,
		 LATERAL (SELECT ARRAY[((u * 13 + j * 29) % 41) / 20.0 - 1,
							   ((u * 17 + j * 11) % 37) / 18.0 - 1]::float8[] AS x) xx;
ALTER TABLE robust_many ADD CHECK (cardinality(x) = 2);
SET uldp.test_seed = 49;
SELECT model_round(user_dp_sgd(x, c, user_id, 8.0, 1e-6, '{"method": "robust", "loss": "logistic"}')) AS passed
FROM robust_many;
SELECT model_round(user_dp_sgd(x, c, user_id, 8.0, 1e-6, '{"method": "robust", "loss": "logistic", "tau": 1e-6}'))
	AS failed
FROM robust_many;
-- the keys of a model
SELECT string_agg(k, ' ' ORDER BY k) AS keys
FROM (SELECT user_dp_sgd(x, c, user_id, 8.0, 1e-6, '{"method": "robust", "loss": "logistic"}') AS m FROM robust_many) s,
	 jsonb_object_keys(m) k;

-- refused before the charge: a budget whose steps could not get one grid step per coordinate of a
-- 10000-feature model (the other methods accept it), and the options' ranges
CREATE TABLE robust_wide (user_id int, x float8[], y float8);
SELECT jsonb_array_length(user_dp_sgd(x, y, user_id, 1e-4, 1e-6, '{"dimension": 10000}') -> 'weights') AS winsorized
FROM robust_wide;
SELECT user_dp_sgd(x, y, user_id, 1e-4, 1e-6, '{"method": "robust", "dimension": 10000}') FROM robust_wide;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust", "phases": 0}') FROM robust_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "robust", "tau": 0}') FROM robust_rows;
-- the last release charged is the winsorized one: the refusals cost nothing
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;

DROP TABLE robust_wide;
DROP TABLE robust_many;
DROP TABLE robust_onehot_models;
DROP TABLE robust_onehot;
DROP TABLE robust_rows;
DROP FUNCTION model_round(jsonb, int);
RESET uldp.test_seed;

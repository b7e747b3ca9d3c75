-- user_dp_sgd and uldp.predict (uldp 0.3) in the seeded test mode
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

\set users 300
\set rows_table sgd_rows
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixture :abs_srcdir '/sql/include/sgd_rows.sql'
\i :fixture

-- linear regression, default options: winsorized gradient descent, and private scales where the
-- noisy count shows enough users for them (epsilon 8); at epsilon 1, 300 users are too few, and
-- the typical feature norm and label are 1 (feature_radius 2.5, label_bound 3, radius 30)
SELECT model_round(user_dp_sgd(x, y, user_id, 8.0, 1e-6)) FROM sgd_rows;
SELECT model_round(user_dp_sgd(x, y, user_id, 1.0, 1e-6)) FROM sgd_rows;
-- with public scales the fit is close to y = 2 x1 - x2 + 0.5
SET uldp.test_seed = 43;
SELECT model_round(user_dp_sgd(x, y, user_id, 4.0, 1e-6,
	'{"feature_radius": 1.5, "label_bound": 4, "radius": 5, "iterations": 100, "gradient_clip": 8}'))
FROM sgd_rows;
SET uldp.test_seed = 43;
SELECT model_round(user_dp_sgd(x, y, user_id, 4.0, 1e-6,
	'{"feature_radius": 1.5, "label_bound": 4, "radius": 5, "iterations": 100, "gradient_clip": 8}'), 2)
	-> 'weights' AS same_seed_same_weights
FROM sgd_rows;
-- phased ERM, with tau and l2
SET uldp.test_seed = 44;
SELECT model_round(user_dp_sgd(x, y, user_id, 4.0, 1e-6,
	'{"method": "phased_erm", "phases": 2, "iterations": 20, "tau": 1, "l2": 0, "feature_radius": 1.5}'))
FROM sgd_rows;
-- logistic regression, both methods
SET uldp.test_seed = 45;
SELECT model_round(user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"loss": "logistic", "iterations": 30}'))
FROM sgd_rows;
SET uldp.test_seed = 46;
SELECT model_round(user_dp_sgd(x, c, user_id, 2.0, 1e-6,
	'{"loss": "logistic", "method": "phased_erm", "step_size": 0.5, "radius": 10}'))
FROM sgd_rows;
-- the keys of each kind of model
SELECT string_agg(k, ' ' ORDER BY k) AS keys
FROM (SELECT user_dp_sgd(x, c, user_id, 2.0, 1e-6,
		'{"loss": "logistic", "method": "phased_erm", "tau": 2}') AS m FROM sgd_rows) s,
	 jsonb_object_keys(m) k;
SELECT string_agg(k, ' ' ORDER BY k) AS keys
FROM (SELECT user_dp_sgd(x, y, user_id, 2.0, 1e-6, NULL) AS m FROM sgd_rows) s, jsonb_object_keys(m) k;

-- predict with a released model
SET uldp.test_seed = 47;
CREATE TABLE sgd_models AS
	SELECT 'linear' AS name, user_dp_sgd(x, y, user_id, 4.0, 1e-6,
		'{"feature_radius": 1.5, "label_bound": 4, "radius": 5, "iterations": 100, "gradient_clip": 8}') AS model
	FROM sgd_rows
	UNION ALL
	SELECT 'logistic', user_dp_sgd(x, c, user_id, 4.0, 1e-6,
		'{"loss": "logistic", "feature_radius": 1.5, "radius": 20, "iterations": 100}')
	FROM sgd_rows;
SELECT name, model_round(model) FROM sgd_models ORDER BY name;
-- predictions: the linear model's mean absolute error, the logistic model's accuracy
SELECT round(avg(abs(uldp.predict(m.model, x) - y))::numeric, 2) < 0.5 AS linear_fits
FROM sgd_rows, sgd_models m WHERE m.name = 'linear';
SELECT avg(((uldp.predict(m.model, x) > 0.5)::int::float8 = c)::int) > 0.9 AS logistic_fits,
	   min(uldp.predict(m.model, x)) > 0 AND max(uldp.predict(m.model, x)) < 1 AS probabilities
FROM sgd_rows, sgd_models m WHERE m.name = 'logistic';
-- the prediction is weights . x + intercept, with x clipped to the feature radius
SELECT round(uldp.predict('{"loss": "squared", "weights": [2, -1, 0.5], "feature_radius": 10}', '{1, 2}')::numeric, 6) AS linear,
	   round(uldp.predict('{"loss": "squared", "weights": [2, -1, 0.5], "feature_radius": 1}', '{3, 4}')::numeric, 6) AS clipped,
	   round(uldp.predict('{"loss": "logistic", "weights": [1, 0], "feature_radius": 5}', '{0}')::numeric, 6) AS half,
	   round(uldp.predict('{"loss": "logistic", "weights": [1, 0], "feature_radius": 50}', '{40}')::numeric, 6) AS near_one;
SELECT uldp.predict('{"loss": "squared", "weights": [2, -1, 0.5], "feature_radius": 10}', '{1, NULL}') IS NULL AS null_feature,
	   uldp.predict(NULL, '{1, 2}') IS NULL AS null_model;
SELECT provolatile, proisstrict FROM pg_proc WHERE oid = 'uldp.predict(jsonb, float8[])'::regprocedure;
-- invalid models and features
SELECT uldp.predict('{}', '{1}');
SELECT uldp.predict('[1, 2]', '{1}');
SELECT uldp.predict('{"loss": "hinge", "weights": [1, 0], "feature_radius": 1}', '{1}');
SELECT uldp.predict('{"loss": "squared", "weights": [1, 0]}', '{1}');
SELECT uldp.predict('{"loss": "squared", "weights": [1, 0], "feature_radius": 0}', '{1}');
SELECT uldp.predict('{"loss": "squared", "weights": [1, "a"], "feature_radius": 1}', '{1}');
SELECT uldp.predict('{"loss": "squared", "weights": [], "feature_radius": 1}', '{}');
SELECT uldp.predict('{"loss": "squared", "weights": 3, "feature_radius": 1}', '{1}');
SELECT uldp.predict(model, '{1, 2, 3}') FROM sgd_models WHERE name = 'linear';
SELECT uldp.predict(model, '{1}') FROM sgd_models WHERE name = 'logistic';

-- small n: 150 users at epsilon 1, default options; finite weights close to (2, -1, 0.5), in the ball
SET uldp.test_seed = 51;
SELECT model_round(m, 2) -> 'weights' AS weights_150,
	   sqrt((SELECT sum(w::float8 ^ 2) FROM jsonb_array_elements_text(m -> 'weights') w)) <= (m ->> 'radius')::float8
		   AS inside_ball
FROM (SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6) AS m FROM sgd_rows WHERE user_id <= 150) s;

-- a boolean label is 1 (true) or 0 (false): the same model as the label 0/1, draw for draw
SET uldp.test_seed = 45;
SELECT model_round(user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"loss": "logistic", "iterations": 30}'))
	-> 'weights' AS float_label
FROM sgd_rows;
SET uldp.test_seed = 45;
SELECT model_round(user_dp_sgd(x, c = 1, user_id, 2.0, 1e-6, '{"loss": "logistic", "iterations": 30}'))
	-> 'weights' AS boolean_label
FROM sgd_rows;
-- without options: the squared loss on 0 and 1
SET uldp.test_seed = 45;
SELECT model_round(user_dp_sgd(x, c = 1, user_id, 2.0, 1e-6)) ->> 'loss' AS five_arguments FROM sgd_rows;
SELECT user_dp_sgd(x, NULL::boolean, user_id, 2.0, 1e-6) -> 'weights' AS null_labels_skipped FROM sgd_rows;

-- one-hot features: 3 categories besides a reference one (the zero row), 400 users, 60% of them
-- in the reference category, so that the median of the users' feature norms is 0; the median is
-- taken over non-zero rows, and a zero median falls back to the norm of a one-hot row (1):
-- feature_radius 1.5, and a model that tells the categories apart; the label is a boolean
CREATE TABLE sgd_onehot AS
	SELECT u AS user_id, k,
		   ARRAY[(k = 1)::int, (k = 2)::int, (k = 3)::int]::float8[] AS x,
		   (j + u % 10) % 10 < CASE k WHEN 0 THEN 2 WHEN 1 THEN 8 WHEN 2 THEN 5 ELSE 9 END AS y
	FROM generate_series(1, 400) u, generate_series(0, 2) j,
		 LATERAL (SELECT CASE WHEN u % 5 < 3 THEN 0 ELSE 1 + u % 3 END AS k) kk;
ALTER TABLE sgd_onehot ADD CHECK (cardinality(x) = 3);
SELECT k, count(DISTINCT user_id) AS users, round(avg(y::int), 2) AS p_label FROM sgd_onehot GROUP BY k ORDER BY k;
SET uldp.test_seed = 52;
CREATE TABLE sgd_onehot_models AS
	SELECT 8 AS epsilon, user_dp_sgd(x, y, user_id, 8.0, 1e-6, '{"loss": "logistic"}') AS model FROM sgd_onehot
	UNION ALL
	SELECT 1, user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"loss": "logistic"}') FROM sgd_onehot;
SELECT epsilon, (model ->> 'feature_radius')::float8 AS feature_radius,
	   round(uldp.predict(model, '{0, 0, 0}')::numeric, 2) AS reference,
	   round(uldp.predict(model, '{1, 0, 0}')::numeric, 2) AS first,
	   round(uldp.predict(model, '{0, 1, 0}')::numeric, 2) AS second,
	   round(uldp.predict(model, '{0, 0, 1}')::numeric, 2) AS third
FROM sgd_onehot_models ORDER BY epsilon DESC;
-- sparse features: most rows zero, the others of norm 5; the private scale is that of the
-- non-zero rows (squared loss: feature_radius 2.5 x 5.5, 5.5 the middle of the grid's key for 5)
SET uldp.test_seed = 53;
SELECT (user_dp_sgd(CASE WHEN j = 0 THEN x ELSE '{0, 0}' END, y, user_id, 8.0, 1e-6) ->> 'feature_radius')::float8
	AS sparse_feature_radius
FROM (SELECT user_id, row_no AS j, ARRAY[5, 0]::float8[] AS x, y FROM sgd_rows) s;
DROP TABLE sgd_onehot_models;
DROP TABLE sgd_onehot;

-- too few users: no weights, and predict refuses the model
SET uldp.test_seed = 48;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6) -> 'weights' AS few_users FROM sgd_rows WHERE user_id <= 5;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6) -> 'weights' AS empty FROM sgd_rows WHERE false;
SELECT uldp.predict(user_dp_sgd(x, y, user_id, 1.0, 1e-6), '{1, 2}') FROM sgd_rows WHERE false;

-- rows with a NULL feature vector, element, label or user, or a NaN, are skipped
SET uldp.test_seed = 49;
SELECT model_round(user_dp_sgd(x, y, user_id, 2.0, 1e-6, '{"iterations": 10}')) -> 'weights' AS plain FROM sgd_rows;
SET uldp.test_seed = 49;
SELECT model_round(user_dp_sgd(x, y, user_id, 2.0, 1e-6, '{"iterations": 10}')) -> 'weights' AS with_skipped
FROM (SELECT x, y, user_id FROM sgd_rows
	  UNION ALL VALUES (NULL::float8[], 1::float8, 1), ('{1, 1}', NULL, 2), ('{1, 1}', 1, NULL),
					   ('{1, NULL}', 1, 3), ('{NaN, 1}', 1, 4), ('{1, 1}', 'NaN', 5)) s(x, y, user_id);
-- the dimension is public: read from the query, or given as an option; rows without it
-- (here the second) are skipped
SELECT user_dp_sgd(x, y, u, 1.0, 1e-6) FROM (VALUES ('{1, 2}'::float8[], 1::float8, 1), ('{1}', 1, 2)) s(x, y, u);
SELECT user_dp_sgd(x, y, u, 1.0, 1e-6, '{"dimension": 2}') -> 'weights' AS too_few_users
FROM (VALUES ('{1, 2}'::float8[], 1::float8, 1), ('{1}', 1, 2)) s(x, y, u);
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"dimension": 3}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"dimension": 65537}') FROM sgd_rows;

-- options are checked before anything is released
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '[1]') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"loss": "hinge"}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"method": "adam"}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"iterations": 0}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"iterations": 10001}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"iterations": 2.5}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"phases": 21}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"step_size": 0}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"radius": -1}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"feature_radius": "big"}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"label_bound": 0}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"gradient_clip": null}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"tau": 0}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"l2": -0.1}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{"learning_rate": 0.1}') FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 0, 1e-6) FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, 0) FROM sgd_rows;
SELECT user_dp_sgd(x, y, user_id, 1.0, NULL) FROM sgd_rows;
-- PostgreSQL itself refuses the window: the final function is declared READ_WRITE
SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6) OVER () FROM sgd_rows LIMIT 1;
-- a budget too small for its steps is refused before anything is charged
SELECT user_dp_sgd(x, y, user_id, 1e-6, 1e-10, '{"iterations": 10000}') -> 'weights' AS tiny_budget FROM sgd_rows;

-- the ledger: each release charged (epsilon, delta), also one without enough users
SELECT user_dp_sgd(x, y, user_id, 0.375, 3e-7) -> 'weights' FROM sgd_rows WHERE false;
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;

-- protected tables: an analyst without SELECT may train over the privacy unit
CREATE ROLE uldp_sgd_analyst LOGIN;
CREATE TABLE sgd_protected AS SELECT user_id, x, y, c, user_id % 3 AS region FROM sgd_rows;
ALTER TABLE sgd_protected ADD CHECK (cardinality(x) = 2);
SELECT uldp.protect_table('sgd_protected', 'user_id');
SELECT uldp.set_budget('uldp_sgd_analyst', 100, 1e-3);
SET uldp.test_seed = 50;
SET SESSION AUTHORIZATION uldp_sgd_analyst;
SELECT model_round(user_dp_sgd(x, y, user_id, 2.0, 1e-6, '{"iterations": 20}')) AS analyst FROM sgd_protected;
SELECT jsonb_array_length(user_dp_sgd(x, c, user_id, 2.0, 1e-6, '{"loss": "logistic"}') -> 'weights') AS filtered
FROM sgd_protected WHERE region = 1;
SELECT jsonb_array_length(user_dp_sgd(x, c = 1, user_id, 2.0, 1e-6, '{"loss": "logistic"}') -> 'weights')
	AS boolean_label
FROM sgd_protected;
SELECT user_dp_sgd(x, y, region, 2.0, 1e-6) FROM sgd_protected;
SELECT model_round(user_dp_sgd(x, y, user_id, 2.0, 1e-6)) -> 'weights' AS label_filter FROM sgd_protected WHERE y > 0;
SELECT x FROM sgd_protected LIMIT 1;
RESET SESSION AUTHORIZATION;
SELECT function, epsilon, delta FROM uldp.ledger
WHERE role = 'uldp_sgd_analyst' ORDER BY at;

DROP TABLE sgd_protected;
DELETE FROM uldp.budget_data WHERE role = 'uldp_sgd_analyst';
DROP ROLE uldp_sgd_analyst;
DROP TABLE sgd_models;
DROP TABLE sgd_rows;
DROP FUNCTION model_round(jsonb, int);
RESET uldp.test_seed;

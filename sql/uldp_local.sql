-- the local protocol of uldp 0.7 (Girgis, Data and Diggavi) in the seeded test mode: rounds,
-- reports, submissions and results of every kind, every refusal, ULDP-SGD, shuffling and the
-- ingestion trigger
SET uldp.test_seed = 42;
SELECT count(*) AS ledger_rows FROM uldp.ledger_data \gset

-- who may do what: the round operator's and the submitting functions are revoked from PUBLIC
-- and run as the extension's owner; clients' functions are public; rounds are readable by all
SELECT f AS function, has_function_privilege('public', f, 'EXECUTE') AS public_execute,
	   p.prosecdef AS security_definer, p.proconfig AS config
FROM unnest(ARRAY['uldp.ldp_round(text, jsonb)', 'uldp.ldp_round_info(bigint)',
				  'uldp.ldp_report(bigint, float8[])', 'uldp.ldp_submit(bigint, text, jsonb)',
				  'uldp.ldp_result(bigint)', 'uldp.ldp_sgd_step(bigint)', 'uldp.ldp_ingest()',
				  'uldp.shuffle_epsilon(float8, bigint, float8)']::regprocedure[]) f
JOIN pg_proc p ON p.oid = f;
SELECT t AS "table", has_table_privilege('public', t, 'SELECT') AS public_select,
	   has_table_privilege('public', t, 'INSERT') AS public_insert
FROM unnest(ARRAY['uldp.ldp_rounds', 'uldp.ldp_reports']::regclass[]) t;

-- Scalar rounds: range, then mean (Algorithm 1) ------------------------------------------
--
-- 200 users with 20 samples each; user u's mean is about 3 + (u % 5) / 10
CREATE TABLE local_samples AS
	SELECT u, s, 3 + (u % 5) / 10.0 + ((s * 7 + u) % 11 - 5) / 10.0 AS x
	FROM generate_series(1, 200) u, generate_series(1, 20) s;
CREATE VIEW local_users AS
	SELECT u, array_agg(x ORDER BY s) AS samples FROM local_samples GROUP BY u ORDER BY u;
SELECT min(m), max(m), avg(m) AS mean_of_user_means
FROM (SELECT avg(x) m FROM local_samples GROUP BY u) s;

SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": 2}') AS range_round \gset
SELECT uldp.ldp_round_info(:range_round);
-- one user's report: a Hadamard row and a sign
SELECT uldp.ldp_report(:range_round, ARRAY[3.1, 2.9, 3.4]);
SELECT count(uldp.ldp_submit(:range_round, 'user-' || u, uldp.ldp_report(:range_round, samples)))
FROM local_users;
SELECT count(*) FROM uldp.ldp_reports WHERE round_id = :range_round;
-- the heavy-hitter bin's midpoint +-3 tau: the users' means lie in [0, 4), whose midpoint is 2
SELECT uldp.ldp_result(:range_round);
-- computed once: later calls return the stored result
SELECT uldp.ldp_result(:range_round) = r.result AS stored
FROM uldp.ldp_rounds r WHERE r.id = :range_round;

-- the mean round takes its interval from the closed range round
SELECT uldp.ldp_round('mean', format('{"range_round": %s, "epsilon": 1}', :range_round)::jsonb) AS mean_round \gset
SELECT uldp.ldp_round_info(:mean_round);
SELECT uldp.ldp_report(:mean_round, ARRAY[3.1, 2.9, 3.4]);
SELECT count(uldp.ldp_submit(:mean_round, 'user-' || u, uldp.ldp_report(:mean_round, samples)))
FROM local_users;
-- the estimate of the mean of the users' means (3.2), with its 95% interval
SELECT uldp.ldp_result(:mean_round);
SELECT (r->>'ci_lower')::float8 <= 3.2 AND 3.2 <= (r->>'ci_upper')::float8 AS covers
FROM uldp.ldp_result(:mean_round) r;

-- Gaussian noise when the round asks for it: (epsilon, delta)-LDP, delta recorded
SELECT uldp.ldp_round('mean', '{"lower": 1.2, "upper": 5.2, "epsilon": 0.5, "delta": 1e-6, "noise": "gaussian"}')
	AS gauss_round \gset
SELECT uldp.ldp_round_info(:gauss_round);
SELECT count(uldp.ldp_submit(:gauss_round, 'user-' || u, uldp.ldp_report(:gauss_round, samples)))
FROM local_users;
SELECT uldp.ldp_result(:gauss_round);
-- when the round leaves the noise open, the client takes the one with the smaller variance:
-- here Laplace, so the reports are pure epsilon-LDP and the round records delta 0
SELECT uldp.ldp_round('mean', '{"lower": 1.2, "upper": 5.2, "epsilon": 0.5, "delta": 1e-6}') AS open_noise \gset
SELECT epsilon, delta FROM uldp.ldp_rounds WHERE id = :open_noise;

-- a round without reports: the interval's centre, and the whole interval
SELECT uldp.ldp_round('mean', '{"lower": -1, "upper": 3, "epsilon": 1}') AS empty_mean \gset
SELECT uldp.ldp_result(:empty_mean);
SELECT uldp.ldp_round('range', '{"bound": 10, "tau": 1, "epsilon": 1}') AS empty_range \gset
SELECT uldp.ldp_result(:empty_range);
-- too few users for the heavy-hitter bin to stand out from the noise: not found, the whole range
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": 2}') AS few_range \gset
SELECT count(uldp.ldp_submit(:few_range, 'user-' || u, uldp.ldp_report(:few_range, samples)))
FROM local_users WHERE u <= 20;
SELECT uldp.ldp_result(:few_range);

-- a user without samples, and NULL samples (missing values), still report
SELECT uldp.ldp_round('mean', '{"lower": 0, "upper": 1, "epsilon": 1}') AS spare_mean \gset
SELECT uldp.ldp_report(:spare_mean, '{}'::float8[]) ? 'level' AS no_samples;
SELECT uldp.ldp_report(:spare_mean, ARRAY[NULL, 0.5]::float8[]) ? 'level' AS null_sample;

-- Vector rounds (Algorithm 5) ----------------------------------------------------------------
--
-- 600 users with 10 samples each in R^3, around (1, -2, 0.5)
CREATE TABLE local_vectors AS
	SELECT u, s, ARRAY[1 + ((u + s) % 5 - 2) / 10.0, -2 + ((u * s) % 5 - 2) / 10.0,
					   0.5 + ((u + 2 * s) % 3 - 1) / 10.0]::float8[] AS v
	FROM generate_series(1, 600) u, generate_series(1, 10) s;
SELECT uldp.ldp_round('vector_range', '{"dimension": 3, "bound": 10, "tau": 1, "epsilon": 2}') AS vrange \gset
-- the server draws the public rotation_seed
SELECT uldp.ldp_round_info(:vrange);
-- one sample as a one-dimensional array, several as rows of a two-dimensional one
SELECT uldp.ldp_report(:vrange, ARRAY[1, -2, 0.5]);
SELECT uldp.ldp_report(:vrange, ARRAY[[1, -2, 0.5], [1.2, -2.1, 0.4]]);
-- array_agg turns one row per sample into that two-dimensional array
SELECT count(uldp.ldp_submit(:vrange, 'user-' || u, uldp.ldp_report(:vrange, samples)))
FROM (SELECT u, array_agg(v ORDER BY s) AS samples FROM local_vectors GROUP BY u ORDER BY u) g;
-- per rotated coordinate (padded to 4), the range of that coordinate, from its ~150 reports
SELECT uldp.ldp_result(:vrange);

SELECT uldp.ldp_round('vector_mean', format('{"range_round": %s, "epsilon": 2}', :vrange)::jsonb) AS vmean \gset
-- intervals, dimension, bound and rotation come from the range round
SELECT uldp.ldp_round_info(:vmean);
SELECT count(uldp.ldp_submit(:vmean, 'user-' || u, uldp.ldp_report(:vmean, samples)))
FROM (SELECT u, array_agg(v ORDER BY s) AS samples FROM local_vectors GROUP BY u ORDER BY u) g;
-- the estimate of the mean of the users' means, rotated back, with per-coordinate intervals
SELECT uldp.ldp_result(:vmean);
SELECT array_agg(round(avg::numeric, 4) ORDER BY k) AS mean_of_user_means
FROM (SELECT k, avg(m) FROM (SELECT u, k, avg(v[k]) m FROM local_vectors, generate_series(1, 3) k
							 GROUP BY u, k) s GROUP BY k) t;

-- ULDP-SGD (Algorithm 6) ----------------------------------------------------------------------
--
-- logistic regression: 600 users, 10 rows (x1, x2, label) each; label 1 when x1 + x2 > 0
CREATE TABLE local_rows AS
	SELECT u, s, x1, x2, (x1 + x2 > 0)::int::float8 AS y
	FROM generate_series(1, 600) u, generate_series(1, 10) s,
		 LATERAL (SELECT ((u * 13 + s * 7) % 21 - 10) / 10.0 AS x1,
						 ((u * 5 + s * 11) % 21 - 10) / 10.0 AS x2) f;
SELECT uldp.ldp_round('gradient', '{"epsilon": 2, "clip": 1, "learning_rate": 2, "radius": 10,
	"model": {"loss": "logistic", "weights": [0, 0, 0], "feature_radius": 1.5}}') AS grad1 \gset
SELECT uldp.ldp_round_info(:grad1);
-- each row is (features, label)
SELECT uldp.ldp_report(:grad1, ARRAY[[0.5, 0.2, 1], [-0.3, -0.4, 0]]);
SELECT count(uldp.ldp_submit(:grad1, 'user-' || u, uldp.ldp_report(:grad1, samples)))
FROM (SELECT u, array_agg(ARRAY[x1, x2, y] ORDER BY s) AS samples FROM local_rows GROUP BY u ORDER BY u) g;
-- the mean gradient, then the next model: weights - learning_rate * gradient
SELECT uldp.ldp_result(:grad1);
SELECT uldp.ldp_sgd_step(:grad1) AS model1 \gset
SELECT :'model1'::jsonb AS model1;
-- the model predicts, and is the model of the next gradient round
SELECT round(uldp.predict(:'model1', ARRAY[1, 1])::numeric, 6) AS p_positive,
	   round(uldp.predict(:'model1', ARRAY[-1, -1])::numeric, 6) AS p_negative;
SELECT uldp.ldp_round('gradient', jsonb_build_object('epsilon', 2, 'clip', 1, 'learning_rate', 2,
	'model', :'model1'::jsonb)) AS grad2 \gset
SELECT count(uldp.ldp_submit(:grad2, 'user-' || u, uldp.ldp_report(:grad2, samples)))
FROM (SELECT u, array_agg(ARRAY[x1, x2, y] ORDER BY s) AS samples FROM local_rows GROUP BY u ORDER BY u) g;
-- ldp_sgd_step closes an open round itself
SELECT uldp.ldp_sgd_step(:grad2);
SELECT closed_at IS NOT NULL AS closed FROM uldp.ldp_rounds WHERE id = :grad2;

-- the range of the mean clipped gradients, then a gradient round that uses it
SELECT uldp.ldp_round('vector_range', '{"epsilon": 2, "tau": 0.25, "clip": 1,
	"model": {"loss": "logistic", "weights": [0, 0, 0], "feature_radius": 1.5}}') AS grange \gset
SELECT count(uldp.ldp_submit(:grange, 'user-' || u, uldp.ldp_report(:grange, samples)))
FROM (SELECT u, array_agg(ARRAY[x1, x2, y] ORDER BY s) AS samples FROM local_rows GROUP BY u ORDER BY u) g;
SELECT uldp.ldp_result(:grange);
SELECT uldp.ldp_round('gradient', format('{"range_round": %s, "epsilon": 2, "learning_rate": 2}', :grange)::jsonb)
	AS grad3 \gset
SELECT uldp.ldp_round_info(:grad3);

-- Refusals -------------------------------------------------------------------------------------
SELECT uldp.ldp_round('mean', '{"lower": 0, "upper": 10, "epsilon": 1}') AS open_mean \gset
SELECT uldp.ldp_report(:open_mean, ARRAY[4.0]) AS good_report \gset
SELECT uldp.ldp_submit(:open_mean, 'first', :'good_report');
-- unknown round
SELECT uldp.ldp_submit(999999, 'x', :'good_report');
SELECT uldp.ldp_round_info(999999);
SELECT uldp.ldp_report(999999, ARRAY[1.0]);
SELECT uldp.ldp_result(999999);
-- closed round
SELECT uldp.ldp_submit(:range_round, 'late', uldp.ldp_report(:range_round, ARRAY[3.0]));
-- a second report from the same user
SELECT uldp.ldp_submit(:open_mean, 'first', :'good_report');
-- reports the library refuses: another round's, bad version, keys, level type, index, sign,
-- coordinate
SELECT uldp.ldp_submit(:open_mean, 'u1', uldp.ldp_report(:spare_mean, ARRAY[0.5]));
SELECT uldp.ldp_submit(:open_mean, 'u2', format('{"v": 2, "round": %s, "level": 7}', :open_mean)::jsonb);
SELECT uldp.ldp_submit(:open_mean, 'u3', format('{"v": 1, "round": %s, "level": 7, "x": 1}', :open_mean)::jsonb);
SELECT uldp.ldp_submit(:open_mean, 'u4', format('{"v": 1, "round": %s}', :open_mean)::jsonb);
SELECT uldp.ldp_submit(:open_mean, 'u5', format('{"v": 1, "round": %s, "level": 1.5}', :open_mean)::jsonb);
SELECT uldp.ldp_submit(:open_mean, 'u6', format('{"v": 1, "round": %s, "level": "7"}', :open_mean)::jsonb);
SELECT uldp.ldp_submit(:open_mean, 'u7', '[1, 2]');
SELECT uldp.ldp_round('range', '{"bound": 50, "tau": 0.5, "epsilon": 1}') AS open_range \gset
SELECT uldp.ldp_submit(:open_range, 'u8', format('{"v": 1, "round": %s, "index": 128, "sign": 1}', :open_range)::jsonb);
SELECT uldp.ldp_submit(:open_range, 'u9', format('{"v": 1, "round": %s, "index": -1, "sign": 1}', :open_range)::jsonb);
SELECT uldp.ldp_submit(:open_range, 'u10', format('{"v": 1, "round": %s, "index": 3, "sign": 0}', :open_range)::jsonb);
SELECT uldp.ldp_round('vector_range', '{"dimension": 3, "bound": 10, "tau": 0.5, "epsilon": 1}') AS open_vector \gset
SELECT uldp.ldp_submit(:open_vector, 'u11', format('{"v": 1, "round": %s, "coordinate": 4, "index": 3, "sign": 1}', :open_vector)::jsonb);
SELECT uldp.ldp_submit(:open_vector, 'u12', format('{"v": 1, "round": %s, "index": 3, "sign": 1}', :open_vector)::jsonb);
-- samples of the wrong dimension
SELECT uldp.ldp_report(:open_vector, ARRAY[[1, 2], [3, 4]]::float8[]);
SELECT uldp.ldp_report(:open_vector, ARRAY[1, 2]::float8[]);
SELECT uldp.ldp_report(:open_vector, ARRAY[[[1, 2, 3]]]::float8[]);
SELECT uldp.ldp_report(:open_vector, NULL);
SELECT uldp.ldp_submit(:open_vector, NULL, NULL);
-- none of them was stored, and results are unchanged
SELECT r.id, count(p.round_id) AS reports FROM uldp.ldp_rounds r LEFT JOIN uldp.ldp_reports p ON p.round_id = r.id
WHERE r.id IN (:open_mean, :open_range, :open_vector, :range_round) GROUP BY r.id ORDER BY r.id;
SELECT uldp.ldp_result(:range_round) = r.result AS unchanged FROM uldp.ldp_rounds r WHERE r.id = :range_round;

-- rounds the server refuses, and those the library refuses
SELECT uldp.ldp_round('median', '{"epsilon": 1}');
SELECT uldp.ldp_round('range', '[1]');
SELECT uldp.ldp_round(NULL, '{}');
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": 1, "id": 3}');
SELECT uldp.ldp_round('vector_range', '{"dimension": 3, "bound": 10, "tau": 1, "epsilon": 1, "rotation_seed": "5"}');
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": 1, "range_round": 1}');
SELECT uldp.ldp_round('mean', '{"range_round": 999999, "epsilon": 1}');
SELECT uldp.ldp_round('mean', format('{"range_round": %s, "epsilon": 1}', :open_range)::jsonb);
SELECT uldp.ldp_round('mean', format('{"range_round": %s, "epsilon": 1}', :vrange)::jsonb);
SELECT uldp.ldp_round('mean', format('{"range_round": %s, "epsilon": 1, "lower": 0}', :range_round)::jsonb);
SELECT uldp.ldp_round('mean', '{"range_round": 1.5, "epsilon": 1}');
SELECT uldp.ldp_round('vector_mean', format('{"range_round": %s, "epsilon": 1}', :grange)::jsonb);
SELECT uldp.ldp_round('gradient', format('{"range_round": %s, "epsilon": 1, "learning_rate": 1}', :vrange)::jsonb);
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": 1, "learning_rate": 1}');
SELECT uldp.ldp_round('gradient', '{"epsilon": 1, "clip": 1,
	"model": {"loss": "logistic", "weights": [0, 0], "feature_radius": 1}}');
SELECT uldp.ldp_round('gradient', '{"epsilon": 1, "clip": 1, "learning_rate": -1,
	"model": {"loss": "logistic", "weights": [0, 0], "feature_radius": 1}}');
SELECT uldp.ldp_round('gradient', '{"epsilon": 1, "clip": 1, "learning_rate": 1, "radius": 0,
	"model": {"loss": "logistic", "weights": [0, 0], "feature_radius": 1}}');
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2}');
SELECT uldp.ldp_round('range', '{"bound": 100, "tau": 2, "epsilon": -1}');
SELECT uldp.ldp_round('mean', '{"lower": 5, "upper": 1, "epsilon": 1}');
-- decoding would hold padded coordinates x Hadamard rows doubles: capped at 2^24
SELECT uldp.ldp_round('vector_range', '{"dimension": 65536, "bound": 1000, "tau": 1, "epsilon": 1}');
-- steps are taken from gradient rounds only
SELECT uldp.ldp_sgd_step(:open_mean);
SELECT closed_at IS NULL AS still_open FROM uldp.ldp_rounds WHERE id = :open_mean;

-- Shuffling ----------------------------------------------------------------------------------
--
-- the central epsilon of n shuffled epsilon0-LDP reports (Feldman, McMillan and Talwar 2021);
-- epsilon0 itself where the bound claims no amplification
SELECT e0, n, delta, round(uldp.shuffle_epsilon(e0, n, delta)::numeric, 6) AS epsilon
FROM (VALUES (1.0, 10000, 1e-6), (0.5, 1000000, 1e-8), (2.0, 100000, 1e-6), (4.0, 100000, 1e-6),
			 (4.0, 1000, 1e-6), (10.0, 100, 1e-6)) v(e0, n, delta);
SELECT uldp.shuffle_epsilon(0, 100, 1e-6);
SELECT uldp.shuffle_epsilon('infinity', 100, 1e-6);
SELECT uldp.shuffle_epsilon(1, 0, 1e-6);
SELECT uldp.shuffle_epsilon(1, 100, 0);
SELECT uldp.shuffle_epsilon(1, 100, 1);

-- The ingestion trigger ------------------------------------------------------------------------
--
-- rows arrive with samples; the table keeps only the reports
SELECT uldp.ldp_round('mean', '{"lower": 0, "upper": 10, "epsilon": 1}') AS ingest_round \gset
CREATE TABLE incoming (user_key int, samples float8[], report jsonb);
SELECT format('CREATE TRIGGER ingest BEFORE INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest(%L)',
			  :ingest_round) \gexec
INSERT INTO incoming (user_key, samples) VALUES (1, ARRAY[3.0, 4.0]), (2, ARRAY[5.5]), (3, '{}');
SELECT user_key, samples, report FROM incoming ORDER BY user_key;
SELECT user_key, report FROM uldp.ldp_reports WHERE round_id = :ingest_round ORDER BY user_key;
-- a second row of a user is refused, and not stored
INSERT INTO incoming (user_key, samples) VALUES (4, ARRAY[1.0]), (1, ARRAY[2.0]);
SELECT count(*) FROM incoming;
-- without a report column, the table keeps the user keys only
CREATE TABLE incoming_keys (samples float8[], user_key text);
SELECT format('CREATE TRIGGER ingest BEFORE INSERT ON incoming_keys FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest(%L)',
			  :ingest_round) \gexec
INSERT INTO incoming_keys VALUES (ARRAY[7.0, 8.0], 'k1');
SELECT * FROM incoming_keys;
-- tables and triggers it cannot work with
CREATE TABLE incoming_bad (user_key text, samples numeric[]);
CREATE TRIGGER ingest BEFORE INSERT ON incoming_bad FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest('1');
INSERT INTO incoming_bad VALUES ('a', ARRAY[1]);
CREATE TRIGGER ingest_after AFTER INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest('1');
INSERT INTO incoming (user_key, samples) VALUES (9, ARRAY[1.0]);
DROP TRIGGER ingest_after ON incoming;
CREATE TRIGGER ingest_bad_arg BEFORE INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest('seven');
INSERT INTO incoming (user_key, samples) VALUES (9, ARRAY[1.0]);
DROP TRIGGER ingest_bad_arg ON incoming;

-- Roles ------------------------------------------------------------------------------------------
--
-- a client role reads rounds and makes reports, but cannot create, submit or close
CREATE ROLE uldp_local_client;
SET ROLE uldp_local_client;
SELECT uldp.ldp_round_info(:open_mean) ->> 'kind' AS kind;
SELECT uldp.ldp_report(:open_mean, ARRAY[1.0]) ? 'level' AS reports;
SELECT count(*) > 0 AS reads_rounds FROM uldp.ldp_rounds;
SELECT uldp.ldp_round('range', '{"bound": 1, "tau": 1, "epsilon": 1}');
SELECT uldp.ldp_submit(:open_mean, 'c', uldp.ldp_report(:open_mean, ARRAY[1.0]));
SELECT uldp.ldp_result(:open_mean);
SELECT count(*) FROM uldp.ldp_reports;
RESET ROLE;
-- granted EXECUTE on ldp_submit, it submits, directly and through the trigger (which runs as
-- the inserting role)
GRANT EXECUTE ON FUNCTION uldp.ldp_submit(bigint, text, jsonb) TO uldp_local_client;
GRANT INSERT, SELECT ON incoming TO uldp_local_client;
SET ROLE uldp_local_client;
SELECT uldp.ldp_submit(:open_mean, 'c', uldp.ldp_report(:open_mean, ARRAY[1.0]));
INSERT INTO incoming (user_key, samples) VALUES (10, ARRAY[6.0]);
RESET ROLE;
SELECT round_id, user_key FROM uldp.ldp_reports WHERE round_id IN (:open_mean, :ingest_round)
ORDER BY round_id, user_key;
SELECT uldp.ldp_result(:ingest_round);
REVOKE ALL ON incoming FROM uldp_local_client;
REVOKE ALL ON FUNCTION uldp.ldp_submit(bigint, text, jsonb) FROM uldp_local_client;
DROP ROLE uldp_local_client;

-- Rounds as a DBA sees them: kind, the epsilon and delta each participating user spends, state
SELECT id, kind, epsilon, delta, created_by = current_user AS mine,
	   closed_at IS NOT NULL AS closed, result IS NOT NULL AS has_result
FROM uldp.ldp_rounds ORDER BY id;
-- rounds, reports and results charge no central budget: no ledger row was written
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM uldp.ledger_data;

-- bounds so wide that the decoding's sums would overflow doubles (results must stay finite)
SELECT uldp.ldp_round('mean', '{"lower": -1e300, "upper": 1e300, "epsilon": 1}');
SELECT uldp.ldp_round('gradient', '{"model": {"loss": "logistic", "weights": [1, 0], "feature_radius": 1}, "clip": 1e300, "learning_rate": 1, "epsilon": 1}');

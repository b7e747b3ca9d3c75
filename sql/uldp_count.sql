-- user_dp_count and user_dp_count_ci (uldp 0.5) in the seeded test mode
SET uldp.test_seed = 42;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

-- 300 users with 1 + u % 4 rows each
CREATE TABLE count_visits AS
	SELECT u AS user_id, r AS visit, u % 3 AS region
	FROM generate_series(1, 300) u, generate_series(0, 3) r WHERE r <= u % 4;
SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM count_visits;

-- the number of distinct users, with discrete Laplace noise of scale 1 / epsilon
SELECT user_dp_count(user_id, 1.0) AS users FROM count_visits;
SELECT pg_typeof(user_dp_count(user_id, 1.0)) FROM count_visits;
SELECT user_dp_count(user_id, 0.2) AS users_eps_02 FROM count_visits;
-- every user counts once, however many rows: the same seed gives the same release
-- for the table and for one row per user
SET uldp.test_seed = 7;
SELECT user_dp_count(user_id, 1.0) AS all_rows FROM count_visits;
SET uldp.test_seed = 7;
SELECT user_dp_count(user_id, 1.0) AS one_row_per_user FROM count_visits WHERE visit = 0;
-- ids of any type; NULL ids are skipped
SET uldp.test_seed = 7;
SELECT user_dp_count('user-' || user_id, 1.0) AS text_ids FROM count_visits;
SET uldp.test_seed = 7;
SELECT user_dp_count(user_id, 1.0) AS with_null_ids
FROM (SELECT user_id FROM count_visits UNION ALL SELECT NULL::int FROM generate_series(1, 50)) s;
-- parallel plans combine the same per-user states
SET uldp.test_seed = 7;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT user_dp_count(user_id, 1.0) AS parallel FROM count_visits;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- never negative, never NULL: an empty input releases a noisy count cut at 0
SET uldp.test_seed = 11;
SELECT user_dp_count(user_id, 0.5) AS empty_1 FROM count_visits WHERE false;
SELECT user_dp_count(user_id, 0.5) AS empty_2 FROM count_visits WHERE false;
SELECT user_dp_count(user_id, 0.5) AS empty_3 FROM count_visits WHERE false;

-- the interval: the same release, and a 95% interval from the noise's law (no extra charge)
SET uldp.test_seed = 7;
SELECT (e).estimate, (e).ci_lower, (e).ci_upper
FROM (SELECT user_dp_count_ci(user_id, 1.0) AS e FROM count_visits) s;
SELECT (e).estimate, (e).ci_lower, (e).ci_upper
FROM (SELECT user_dp_count_ci(user_id, 0.1) AS e FROM count_visits WHERE false) s;
-- half-widths: the smallest k with P(|Z| > k) = 2 exp(-epsilon (k + 1)) / (1 + exp(-epsilon))
-- <= 5% for Z discrete Laplace of parameter epsilon: 30, 3 and 0
SELECT (e).ci_upper - (e).estimate AS half_width_eps_01 FROM (SELECT user_dp_count_ci(user_id, 0.1) AS e FROM count_visits) s;
SELECT (e).ci_upper - (e).estimate AS half_width_eps_1 FROM (SELECT user_dp_count_ci(user_id, 1.0) AS e FROM count_visits) s;
SELECT (e).ci_upper - (e).estimate AS half_width_eps_10 FROM (SELECT user_dp_count_ci(user_id, 10.0) AS e FROM count_visits) s;

-- public parameters, checked before anything is read or charged
SELECT user_dp_count(user_id, 0) FROM count_visits;
SELECT user_dp_count(user_id, NULL) FROM count_visits;
SELECT user_dp_count(user_id, visit) FROM count_visits;
-- grouping by the user argument would give each user a group of its own
SELECT user_id, user_dp_count(user_id, 1.0) FROM count_visits GROUP BY user_id;
SELECT user_dp_count(user_id, 1.0) OVER () FROM count_visits LIMIT 1;

-- each statement is charged once, before it reads rows
SELECT user_dp_count(user_id, 0.375) IS NOT NULL AS released, (user_dp_count_ci(user_id, 0.125)).estimate >= 0 AS ci
FROM count_visits;
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;

-- protected tables: an analyst without SELECT may count the privacy unit
CREATE ROLE uldp_count_analyst LOGIN;
SELECT uldp.protect_table('count_visits', 'user_id');
SELECT uldp.set_budget('uldp_count_analyst', 10, 0);
SET uldp.test_seed = 13;
SET SESSION AUTHORIZATION uldp_count_analyst;
SELECT user_dp_count(user_id, 1.0) AS analyst FROM count_visits WHERE region = 1;
SELECT user_dp_count(region, 1.0) FROM count_visits;
SELECT count(DISTINCT user_id) FROM count_visits;
-- the analyst may price a release on the protected table, not anything else
SELECT * FROM uldp.cost($$SELECT user_dp_count(user_id, 0.5) FROM count_visits WHERE region = 1$$);
SELECT * FROM uldp.cost($$SELECT count(DISTINCT user_id) FROM count_visits$$);
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 13;
SELECT user_dp_count(user_id, 1.0) AS owner FROM count_visits WHERE region = 1;
SELECT function, epsilon FROM uldp.ledger WHERE role::text = 'uldp_count_analyst' AND function LIKE 'user\_dp\_%';

DROP TABLE count_visits;
DELETE FROM uldp.budget_data WHERE role = 'uldp_count_analyst';
DROP ROLE uldp_count_analyst;
RESET uldp.test_seed;

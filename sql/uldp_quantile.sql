-- user_dp_quantile (uldp 0.5, issue 12) in the seeded test mode
SET uldp.test_seed = 42;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

-- 400 users; user u has 1 + u % 5 rows, with amounts near (37 u) % 400
CREATE TABLE quant_visits AS
	SELECT u AS user_id, r AS visit, (u * 37) % 400 + r * 0.25 AS amount,
		   u % 9 AS items, ((u * 37) % 400)::numeric / 8 AS price,
		   ((u * 37) % 400)::real / 4 AS ratio, u % 4 = 0 AS returned
	FROM generate_series(1, 400) u, generate_series(0, 4) r WHERE r <= u % 5;
SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM quant_visits;

-- the non-private value: the smallest amount whose cumulative weight reaches q users,
-- each user's rows weighing 1 / (its number of rows)
CREATE FUNCTION quant_exact(q float8) RETURNS float8 LANGUAGE sql AS $$
	SELECT min(amount) FROM (
		SELECT amount, sum(weight) OVER (ORDER BY amount) AS cumulative, sum(weight) OVER () AS users
		FROM (SELECT amount, 1.0 / count(*) OVER (PARTITION BY user_id) AS weight FROM quant_visits) w
	) c WHERE cumulative >= q * users $$;
SELECT quant_exact(0.1) AS p10, quant_exact(0.5) AS p50, quant_exact(0.9) AS p90;

-- the two arities; the result is a float8
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5)::numeric, 3) AS median FROM quant_visits;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.9, 0, 1000)::numeric, 3) AS p90 FROM quant_visits;
SELECT pg_typeof(user_dp_quantile(amount, user_id, 1.0, 0.5)) FROM quant_visits;
-- the same seed gives the same release
SET uldp.test_seed = 7;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.1, 0, 1000)::numeric, 3) AS p10 FROM quant_visits;
SET uldp.test_seed = 7;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.1, 0, 1000)::numeric, 3) AS p10 FROM quant_visits;

-- values of any numeric type, without casts; booleans count as 0 and 1.  (The median of items
-- is 4; a release on integers may fall between the integers around it, whose ranks are close.)
SELECT round(user_dp_quantile(items, user_id, 1.0, 0.5, 0, 10)::numeric, 3) AS int_median,
	   round(user_dp_quantile(items::int2, user_id, 1.0, 0.5, 0, 10)::numeric, 3) AS int2_median,
	   round(user_dp_quantile(items::int8, user_id, 1.0, 0.5, 0, 10)::numeric, 3) AS int8_median,
	   round(user_dp_quantile(price, user_id, 1.0, 0.5)::numeric, 3) AS numeric_median,
	   round(user_dp_quantile(ratio, user_id, 1.0, 0.5)::numeric, 3) AS real_median
FROM quant_visits;
SELECT user_dp_quantile(returned, user_id, 1.0, 0.5) AS bool_median,
	   user_dp_quantile(returned, user_id, 1.0, 0.9, 0, 1) AS bool_p90,
	   user_dp_quantile(NOT returned, user_id, 1.0, 0.1, 0, 1) AS not_bool_p10
FROM quant_visits;

-- NULL for a bound means "not given": one bound alone, or none
SET uldp.test_seed = 11;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5)::numeric, 3) AS no_bounds FROM quant_visits;
SET uldp.test_seed = 11;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, NULL, NULL)::numeric, 3) AS null_bounds FROM quant_visits;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 100, NULL)::numeric, 3) AS lower_only,
	   round(user_dp_quantile(amount, user_id, 1.0, 0.5, NULL, 100)::numeric, 3) AS upper_only
FROM quant_visits;

-- every user weighs one: a user with 1000 rows at 5000 moves the median like a user with one
SET uldp.test_seed = 13;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 10000)::numeric, 3) AS heavy_user
FROM (SELECT amount, user_id FROM quant_visits
	  UNION ALL SELECT 5000, 9999 FROM generate_series(1, 1000)) s;
SET uldp.test_seed = 13;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 10000)::numeric, 3) AS one_row_user
FROM (SELECT amount, user_id FROM quant_visits UNION ALL VALUES (5000, 9999)) s;
-- ids of any type group the same way
SET uldp.test_seed = 13;
SELECT round(user_dp_quantile(amount, 'user-' || user_id, 1.0, 0.5, 0, 10000)::numeric, 3) AS text_ids
FROM (SELECT amount, user_id FROM quant_visits UNION ALL VALUES (5000, 9999)) s;

-- rows with a NULL user, a NULL value or NaN are skipped; +-Infinity is clamped to the bounds
SET uldp.test_seed = 17;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS plain FROM quant_visits;
SET uldp.test_seed = 17;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS skipped
FROM (SELECT amount, user_id FROM quant_visits
	  UNION ALL VALUES (NULL::float8, 5), (3.0, NULL), ('NaN', 7), ('NaN', 9999)) s(amount, user_id);
SET uldp.test_seed = 23;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS at_the_bounds
FROM (SELECT amount, user_id FROM quant_visits UNION ALL VALUES (0, 10001), (1000, 10002)) s;
SET uldp.test_seed = 23;
SELECT round(user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS infinities
FROM (SELECT amount, user_id FROM quant_visits
	  UNION ALL VALUES ('-Infinity'::float8, 10001), ('Infinity', 10002)) s(amount, user_id);
SELECT user_dp_quantile(amount, user_id, 1.0, 0.99) AS top_without_bounds
FROM (SELECT 'Infinity'::float8, u FROM generate_series(1, 100) u) s(amount, user_id);

-- an empty input releases a value, never NULL (within the bounds when there are some)
SELECT user_dp_quantile(amount, user_id, 1.0, 0.5) IS NOT NULL AS empty_no_bounds,
	   user_dp_quantile(amount, user_id, 1.0, 0.5, 0, 1000) BETWEEN 0 AND 1000 AS empty_bounds,
	   user_dp_quantile(returned, user_id, 1.0, 0.5) IS NOT NULL AS empty_bool
FROM quant_visits WHERE false;

-- public parameters, checked before anything is read or charged
SELECT user_dp_quantile(amount, user_id, 1.0, 0) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, 1) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, -0.5) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, 'NaN') FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, NULL) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, NULL, 0.5) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 0, 0.5) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, 0.5, 10, 10) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, 0.5, 'Infinity', NULL) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, 0.5, NULL, -1e301) FROM quant_visits;
SELECT user_dp_quantile(amount, user_id, 1.0, visit / 10.0) FROM quant_visits;
-- grouping sets (CUBE) are refused; plain GROUP BY is tested in uldp_grouped
SELECT visit, user_dp_quantile(amount, user_id, 1.0, 0.5) FROM quant_visits GROUP BY CUBE (visit);
SELECT user_dp_quantile(amount, user_id, 1.0, 0.5) OVER () FROM quant_visits LIMIT 1;

-- parallel plans: workers' partial states are serialized, deserialized and combined; the
-- release equals the serial one (the final function sorts the rows)
CREATE TABLE quant_big AS
	SELECT i % 5000 AS user_id, (i % 97)::float8 AS x, (i % 5000)::text AS user_name
	FROM generate_series(1, 200000) i;
ANALYZE quant_big;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 5;
SELECT user_dp_quantile(x, user_id, 1.0, 0.3, 0, 100) AS serial_int FROM quant_big \gset
SET uldp.test_seed = 5;
SELECT user_dp_quantile(x, user_name, 1.0, 0.7) AS serial_text FROM quant_big \gset
SELECT round(:serial_int::numeric, 3) AS serial_int, round(:serial_text::numeric, 3) AS serial_text;
SET max_parallel_workers_per_gather = 2;
SET uldp.max_parallel_workers_per_gather = 2;	-- on any number of CPUs
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT user_dp_quantile(x, user_id, 1.0, 0.3, 0, 100) FROM quant_big;
SET uldp.test_seed = 5;
SELECT user_dp_quantile(x, user_id, 1.0, 0.3, 0, 100) = :serial_int AS parallel_int_equal FROM quant_big;
SET uldp.test_seed = 5;
SELECT user_dp_quantile(x, user_name, 1.0, 0.7) = :serial_text AS parallel_text_equal FROM quant_big;
SET parallel_leader_participation = on;
SET uldp.test_seed = 5;
SELECT user_dp_quantile(x, user_name, 1.0, 0.7) = :serial_text AS with_leader_equal FROM quant_big;
-- an empty parallel scan, and one where only some workers see rows
SELECT user_dp_quantile(x, user_id, 1.0, 0.5, 0, 100) BETWEEN 0 AND 100 AS empty_parallel
FROM quant_big WHERE x < 0;
SELECT user_dp_quantile(x, user_id, 1.0, 0.5, 0, 100) BETWEEN 0 AND 100 AS sparse_parallel
FROM quant_big WHERE user_id = 7;
-- workers whose rows are all skipped (NULL values: only the first two pages count) hand over
-- states without rows
SET uldp.test_seed = 5;
SELECT user_dp_quantile(CASE WHEN ctid < '(2,0)' THEN x END, user_id, 1.0, 0.5, 0, 100) AS skipped_parallel
FROM quant_big \gset
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 5;
SELECT user_dp_quantile(CASE WHEN ctid < '(2,0)' THEN x END, user_id, 1.0, 0.5, 0, 100) = :skipped_parallel
	AS skipped_serial_equal
FROM quant_big;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

-- the statement is charged before it reads rows: an error while reading does not undo it
CREATE ROLE uldp_quant_analyst LOGIN;
CREATE ROLE uldp_quant_nobody LOGIN;
GRANT SELECT ON quant_visits TO uldp_quant_analyst, uldp_quant_nobody;
SELECT uldp.set_budget('uldp_quant_analyst', 10, 0);
SET SESSION AUTHORIZATION uldp_quant_nobody;
-- no budget: refused before any row is read (the filter fails on every row, and is never evaluated)
SELECT user_dp_quantile(amount, user_id, 0.5, 0.5) FROM quant_visits WHERE 1 / (visit - visit) > 0;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 29;
SET SESSION AUTHORIZATION uldp_quant_analyst;
SELECT user_dp_quantile(amount, user_id, 0.25, 0.5) FROM quant_visits WHERE 1 / (visit - visit) > 0;
-- an invalid parameter charges nothing
SELECT user_dp_quantile(amount, user_id, 0.25, 2) FROM quant_visits WHERE 1 / (visit - visit) > 0;
SELECT * FROM uldp.cost($$SELECT user_dp_quantile(amount, user_id, 0.5, 0.5),
	user_dp_quantile(amount, user_id, 0.125, 0.9, 0, 1000) FROM quant_visits$$);
-- (at eps = 0.125, 400 users and q = 0.9, eps n (1 - q) = 5 is far too small for the 90th
-- percentile to be near the data: functions.md says when to expect that)
SELECT round(user_dp_quantile(amount, user_id, 0.5, 0.5)::numeric, 3) AS median,
	   round(user_dp_quantile(amount, user_id, 0.125, 0.9, 0, 1000)::numeric, 3) AS p90
FROM quant_visits;
RESET SESSION AUTHORIZATION;
SELECT function, epsilon, delta FROM uldp.ledger WHERE role::text = 'uldp_quant_analyst' ORDER BY at;
SELECT epsilon_spent FROM uldp.budget WHERE role = 'uldp_quant_analyst';

-- protected tables: an analyst without SELECT may release quantiles of the privacy unit
REVOKE SELECT ON quant_visits FROM uldp_quant_analyst;
SELECT uldp.protect_table('quant_visits', 'user_id');
SET uldp.test_seed = 19;
SET SESSION AUTHORIZATION uldp_quant_analyst;
SELECT round(user_dp_quantile(amount * 2, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS analyst
FROM quant_visits WHERE visit < 3;
SELECT user_dp_quantile(amount, visit, 1.0, 0.5) FROM quant_visits;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 19;
SELECT round(user_dp_quantile(amount * 2, user_id, 1.0, 0.5, 0, 1000)::numeric, 3) AS owner
FROM quant_visits WHERE visit < 3;

SELECT uldp.unprotect_table('quant_visits');
DROP TABLE quant_visits, quant_big;
DROP FUNCTION quant_exact(float8);
DELETE FROM uldp.budget_data WHERE role IN ('uldp_quant_analyst', 'uldp_quant_nobody');
DROP ROLE uldp_quant_analyst;
DROP ROLE uldp_quant_nobody;
RESET uldp.test_seed;

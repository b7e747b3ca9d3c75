-- user_dp_mean in the seeded test mode: exact, reproducible outputs
CREATE EXTENSION uldp;
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1000, 1e-3);

-- 300 users; user u has 1 + u % 7 rows around 50 + (u % 10)
CREATE TABLE visits AS
	SELECT u AS user_id, j AS visit, 50 + (u % 10) + ((j * 37 + u) % 11 - 5) * 0.5 AS amount
	FROM generate_series(1, 300) u, generate_series(0, 6) j
	WHERE j <= u % 7;
SELECT count(*) AS rows, count(DISTINCT user_id) AS users,
	   avg(m) AS mean_of_user_means
FROM visits, LATERAL (SELECT avg(amount) m FROM visits v2 WHERE v2.user_id = visits.user_id) s;

-- the three arities (without bounds, 300 users need an epsilon above 1 for a private interval)
SELECT round(user_dp_mean(amount, user_id, 2.0)::numeric, 6) FROM visits;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000)::numeric, 6) FROM visits;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;

-- the same seed gives the same release
SET uldp.test_seed = 7;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;
SET uldp.test_seed = 7;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;

-- user ids of other types group the same way
SET uldp.test_seed = 11;
SELECT round(user_dp_mean(amount, user_id::bigint, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;
SET uldp.test_seed = 11;
SELECT round(user_dp_mean(amount, 'user-' || user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;
SET uldp.test_seed = 11;
SELECT round(user_dp_mean(amount, md5(user_id::text)::uuid, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;
SET uldp.test_seed = 11;
SELECT round(user_dp_mean(amount, user_id::numeric, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;

-- rows with NULL user, NULL value or NaN are skipped; +-Infinity is clamped
SET uldp.test_seed = 13;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;
SET uldp.test_seed = 13;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6)
FROM (SELECT amount, user_id FROM visits
	  UNION ALL VALUES (NULL::float8, 5), (1e6, NULL), ('NaN', 7), ('NaN', 9999)) s(amount, user_id);
SET uldp.test_seed = 13;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6)
FROM (SELECT amount, user_id FROM visits
	  UNION ALL VALUES ('Infinity'::float8, 10001), ('-Infinity', 10002)) s(amount, user_id);

-- empty input and a single user still release a number, never NULL
SELECT user_dp_mean(amount, user_id, 1.0) IS NOT NULL AS empty_no_bounds,
	   user_dp_mean(amount, user_id, 1.0, 0, 1000) IS NOT NULL AS empty_bounds,
	   user_dp_mean(amount, user_id, 1.0, 0, 1000, 5) IS NOT NULL AS empty_tau
FROM visits WHERE false;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 1000, 5) BETWEEN 0 AND 1000 AS one_user
FROM visits WHERE user_id = 1;
SELECT user_dp_mean(x, u, 1.0) IS NOT NULL AS extreme_values
FROM (VALUES (1e308::float8, 1), (-1e308, 2), ('Infinity', 3), (1e-300, 4)) v(x, u);

-- numeric and integer values are accepted through implicit casts
SET uldp.test_seed = 17;
SELECT round(user_dp_mean(amount::numeric, user_id, 1.0, 0, 1000, 5)::numeric, 6) FROM visits;

-- grouping sets are refused before reading (plain GROUP BY releases per group: uldp_grouped)
SET uldp.test_seed = 19;
SELECT user_id % 2 AS parity, round(user_dp_mean(amount, user_id, 1.0, 0, 1000, 5)::numeric, 6)
FROM visits GROUP BY ROLLUP (1) ORDER BY 1;

-- with too few users for a private interval (by a noisy count) the release says it
-- knows nothing: 0, and an interval as wide as the values can be
SET uldp.test_seed = 29;
SELECT user_dp_mean(amount, user_id, 0.5) AS too_few, user_dp_mean_ci(amount, user_id, 0.5) AS interval
FROM visits;

-- the tau-free mean tracks the data at any scale
SET uldp.test_seed = 23;
SELECT round((user_dp_mean(amount * 1e-9, user_id, 2.0) * 1e9)::numeric, 3) AS tiny_scale,
	   round((user_dp_mean(amount * 1e12, user_id, 2.0) / 1e12)::numeric, 3) AS huge_scale,
	   round((user_dp_mean(amount - 1e6, user_id, 2.0) + 1e6)::numeric, 3) AS far_from_zero
FROM visits;

-- when 4 tau covers the bounds the range is public: all of epsilon goes to
-- the sum and the count
SET uldp.test_seed = 29;
SELECT round(user_dp_mean(amount, user_id, 1.0, 40, 70, 10)::numeric, 6) AS public_range FROM visits;
SELECT (r).lower, (r).upper
FROM (SELECT user_dp_range(amount, user_id, 1.0, 40, 70, 10) r FROM visits) s;

-- user_dp_mean on vectors (uldp 0.3) in the seeded test mode: exact, reproducible outputs
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1e6, 0.5);

-- releases rounded element by element (NULL for the empty array)
CREATE FUNCTION vec_round(v float8[], digits int DEFAULT 6) RETURNS numeric[]
	LANGUAGE sql IMMUTABLE AS
	$$ SELECT array_agg(round(x::numeric, digits) ORDER BY i) FROM unnest(v) WITH ORDINALITY t(x, i) $$;
CREATE FUNCTION vec_norm(v float8[]) RETURNS float8
	LANGUAGE sql IMMUTABLE AS $$ SELECT sqrt(sum(x * x)) FROM unnest(v) x $$;

-- 400 users with 1 + u % 5 rows of 3 coordinates around (3, -4, 1.15)
CREATE TABLE vec_visits AS
	SELECT u AS user_id, j AS visit,
		   ARRAY[3 + (u % 5 - 2) * 0.5 + (j % 3 - 1) * 0.25,
				 -4 + (u % 7 - 3) * 0.25,
				 1 + ((u * j) % 4) * 0.1]::float8[] AS v
	FROM generate_series(1, 400) u, generate_series(0, 4) j
	WHERE j <= u % 5;
-- the dimension is public: the table declares it
ALTER TABLE vec_visits ADD CHECK (cardinality(v) = 3);
SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM vec_visits;
-- the mean of the user means, the quantity released
SELECT array_agg(round(m::numeric, 6) ORDER BY k) AS true_mean
FROM (SELECT k, avg(um) AS m
	  FROM (SELECT user_id, k, avg(v[k]) AS um FROM vec_visits, generate_series(1, 3) k GROUP BY 1, 2) s
	  GROUP BY k) t;

-- the three arities: private radius and tau, given radius, given radius and tau (at epsilon 8,
-- 400 users are enough for every private selection)
SELECT vec_round(user_dp_mean(v, user_id, 8.0, 1e-6)) FROM vec_visits;
SELECT vec_round(user_dp_mean(v, user_id, 8.0, 1e-6, 10)) FROM vec_visits;
SELECT vec_round(user_dp_mean(v, user_id, 8.0, 1e-6, 10, 0.5)) FROM vec_visits;
-- a tau whose box is not smaller than the ball: no range, all of rho to the sum
SELECT vec_round(user_dp_mean(v, user_id, 8.0, 1e-6, 10, 100)) FROM vec_visits;
SELECT pg_typeof(user_dp_mean(v, user_id, 1.0, 1e-6)) FROM vec_visits;

-- small n: at epsilon 1, 400 users are too few for a private radius or private ranges to land
-- on the data whatever it is (the noisy count must show about 650 users for the radius, 740 for
-- the ranges of 4 rotated coordinates).  Without radius nothing
-- is released; with it the ranges are skipped, and the release is the naive mean (the ball and
-- Gaussian noise), the same as with no range at all
SET uldp.test_seed = 5;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6) AS no_radius FROM vec_visits;
SET uldp.test_seed = 5;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) AS private_tau FROM vec_visits;
SET uldp.test_seed = 5;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10, 100)) AS no_range FROM vec_visits;
-- 150 users: a given tau's bins need about 420 users here, so even with tau the release is the
-- naive mean, whose noise has sd 0.3 to 0.5 per coordinate here (the sum's, and the count's
-- times the coordinate of the mean)
SELECT array_agg(round(m::numeric, 6) ORDER BY k) AS true_mean_150
FROM (SELECT k, avg(um) AS m
	  FROM (SELECT user_id, k, avg(v[k]) AS um FROM vec_visits, generate_series(1, 3) k
			WHERE user_id <= 150 GROUP BY 1, 2) s
	  GROUP BY k) t;
SET uldp.test_seed = 3;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10), 3) AS private_tau_150
FROM vec_visits WHERE user_id <= 150;
SET uldp.test_seed = 3;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10, 0.5), 3) AS given_tau_150
FROM vec_visits WHERE user_id <= 150;
SET uldp.test_seed = 3;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10, 100), 3) AS no_range_150
FROM vec_visits WHERE user_id <= 150;

-- the same seed gives the same release
SET uldp.test_seed = 7;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) FROM vec_visits;
SET uldp.test_seed = 7;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) FROM vec_visits;

-- user ids of other types group the same way
SET uldp.test_seed = 11;
SELECT vec_round(user_dp_mean(v, user_id::bigint, 1.0, 1e-6, 10)) FROM vec_visits;
SET uldp.test_seed = 11;
SELECT vec_round(user_dp_mean(v, 'user-' || user_id, 1.0, 1e-6, 10)) FROM vec_visits;

-- rows with a NULL vector, a NULL element, a NaN or a NULL user are skipped
SET uldp.test_seed = 13;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) FROM vec_visits;
SET uldp.test_seed = 13;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10))
FROM (SELECT v, user_id FROM vec_visits
	  UNION ALL VALUES (NULL::float8[], 5), ('{1,2,3}', NULL), ('{1,NULL,3}', 7),
					   ('{NaN,2,3}', 9999), ('{1,2,NaN}', 8)) s(v, user_id);
-- infinite elements are clamped, then the row is clipped to the ball
SET uldp.test_seed = 13;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) FROM vec_visits;
SET uldp.test_seed = 13;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10))
FROM (SELECT v, user_id FROM vec_visits
	  UNION ALL VALUES ('{Infinity,0,0}'::float8[], 10001), ('{0,-Infinity,Infinity}', 10002)) s(v, user_id);
SET uldp.test_seed = 13;
SELECT cardinality(r) AS dims, (SELECT bool_and(x > '-Infinity' AND x < 'Infinity') FROM unnest(r) x) AS finite
FROM (SELECT user_dp_mean(v, g, 8.0, 1e-6) AS r
	  FROM (VALUES ('{Infinity,1e308,-1e308}'::float8[])) s(v), generate_series(1, 300) g) t;

-- rows are clipped to the ball of radius: the release lies in it
SET uldp.test_seed = 17;
SELECT round(vec_norm(user_dp_mean(v, user_id, 2.0, 1e-6, 1))::numeric, 6) AS norm_radius_1
FROM vec_visits;

-- empty input and too few users release the empty array, never NULL
SELECT user_dp_mean(v, user_id, 1.0, 1e-6) AS empty,
	   user_dp_mean(v, user_id, 1.0, 1e-6, 10) AS empty_radius,
	   user_dp_mean(v, user_id, 1.0, 1e-6, 10, 1) AS empty_tau
FROM vec_visits WHERE false;
SET uldp.test_seed = 19;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10) AS three_users FROM vec_visits WHERE user_id <= 3;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10) AS one_user_many_rows
FROM vec_visits, generate_series(1, 100) WHERE user_id = 4;
-- the threshold: 1 + sigma sqrt(2 ln(1/delta)), sigma^2 = 1 / (2 rho / 8); about 68 users here
SELECT round((1 + sqrt(8 / (2 * uldp.zcdp_rho(1.0, 1e-6))) * sqrt(2 * ln(1e6)))::numeric, 2)
	AS threshold;
SET uldp.test_seed = 19;
SELECT cardinality(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) AS forty_users FROM vec_visits WHERE user_id <= 40;
SET uldp.test_seed = 19;
SELECT cardinality(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) AS two_hundred_users FROM vec_visits WHERE user_id <= 200;

-- grouping sets are refused before reading (plain GROUP BY releases per group: uldp_grouped)
SELECT user_id % 2 AS parity, vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10), 3)
FROM vec_visits GROUP BY GROUPING SETS ((1), ()) ORDER BY 1;

-- the dimension is public: read from the query (a constraint, ARRAY[...], a constant,
-- VALUES that agree), never from the rows
SET uldp.test_seed = 23;
SELECT vec_round(user_dp_mean(ARRAY[v[1], v[2] * 2], user_id, 1.0, 1e-6, 10)) AS constructed FROM vec_visits;
SELECT user_dp_mean(v, u, 1.0, 1e-6) FROM (VALUES ('{1,2}'::float8[], 1), ('{1,2,3}', 2)) s(v, u);
SELECT user_dp_mean(v, u, 1.0, 1e-6) FROM (VALUES ('{}'::float8[], 1)) s(v, u);
SELECT user_dp_mean(v, u, 1.0, 1e-6) FROM (SELECT u, array_fill(1::float8, ARRAY[u]) FROM generate_series(1, 3) u) s(u, v);
SELECT user_dp_mean(array_fill(1::float8, ARRAY[65537]), 1, 1.0, 1e-6);
SELECT cardinality(user_dp_mean(array_fill(1::float8, ARRAY[65536]), 1, 1.0, 1e-6)) AS max_dimension;
-- rows without exactly the public dimension, in one dimension, are skipped: never an error
CREATE TABLE vec_shapes (u int, v float8[] CHECK (cardinality(v) = 2));
INSERT INTO vec_shapes SELECT u, ARRAY[u % 3, 1] FROM generate_series(1, 300) u;
SET uldp.test_seed = 37;
SELECT vec_round(user_dp_mean(v, u, 1.0, 1e-6, 10)) AS well_formed FROM vec_shapes;
INSERT INTO vec_shapes VALUES (1, '{{5},{6}}'), (2, '{5,NULL}'), (3, '{{7,8}}');
SET uldp.test_seed = 37;
SELECT vec_round(user_dp_mean(v, u, 1.0, 1e-6, 10)) AS with_odd_shapes FROM vec_shapes;
DROP TABLE vec_shapes;
-- a row of NULLs is skipped
SET uldp.test_seed = 29;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) FROM vec_visits;
SET uldp.test_seed = 29;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10))
FROM (SELECT v, user_id FROM vec_visits UNION ALL SELECT NULL, NULL) s;

-- public parameters
SELECT user_dp_mean(v, user_id, 1.0, 0) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 0.6) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-101) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, NULL) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 0, 1e-6) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 0) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 'Infinity') FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10, -1) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10, NULL) FROM vec_visits;
SELECT user_dp_mean(v, user_id, visit, 1e-6) FROM vec_visits;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6) OVER () FROM vec_visits LIMIT 1;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6) OVER (PARTITION BY user_id % 2) FROM vec_visits LIMIT 1;

-- each release is charged its epsilon and delta, also an empty one
SELECT user_dp_mean(v, user_id, 0.375, 3e-7) FROM vec_visits WHERE false;
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;
SELECT cardinality(user_dp_mean(v, user_id, 0.625, 5e-7, 10, 1)) FROM vec_visits;
SELECT function, epsilon, delta FROM uldp.ledger ORDER BY at DESC LIMIT 1;

-- protected tables: an analyst without SELECT may release the mean over the privacy unit
CREATE ROLE uldp_vector_analyst LOGIN;
CREATE TABLE vec_protected AS SELECT user_id, visit, v, user_id % 3 AS region FROM vec_visits;
ALTER TABLE vec_protected ADD CHECK (cardinality(v) = 3);
SELECT uldp.protect_table('vec_protected', 'user_id');
SELECT uldp.set_budget('uldp_vector_analyst', 100, 1e-3);
SET uldp.test_seed = 31;
SET SESSION AUTHORIZATION uldp_vector_analyst;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) AS analyst FROM vec_protected;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10, 0.5)) AS filtered
FROM vec_protected WHERE region <> 1;
-- but nothing else
SELECT v FROM vec_protected LIMIT 1;
SELECT user_dp_mean(v, region, 1.0, 1e-6, 10) FROM vec_protected;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10) OVER () FROM vec_protected;
SELECT user_dp_mean(v, user_id, 1.0, 1e-6, 10) FROM vec_protected WHERE v[1] > 3;
RESET SESSION AUTHORIZATION;
SELECT function, epsilon, delta FROM uldp.ledger
WHERE role = 'uldp_vector_analyst' ORDER BY at;
SELECT epsilon_spent, delta_spent FROM uldp.budget WHERE role = 'uldp_vector_analyst';
-- the same seed gives the owner the same release
SET uldp.test_seed = 31;
SELECT vec_round(user_dp_mean(v, user_id, 1.0, 1e-6, 10)) AS owner FROM vec_protected;

DROP TABLE vec_protected;
DELETE FROM uldp.budget_data WHERE role = 'uldp_vector_analyst';
DROP ROLE uldp_vector_analyst;
DROP TABLE vec_visits;
DROP FUNCTION vec_norm(float8[]);
DROP FUNCTION vec_round(float8[], int);
RESET uldp.test_seed;

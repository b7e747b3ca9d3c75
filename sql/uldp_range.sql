-- user_dp_range in the seeded test mode
SET uldp.test_seed = 101;
SET extra_float_digits = 0;

SELECT (r).lower, (r).upper
FROM (SELECT user_dp_range(amount, user_id, 1.0, 0, 1000, 5) r FROM visits) s;
-- with tau the range is 4 tau wide, a bin centre +- 2 tau
SELECT (r).upper - (r).lower AS width
FROM (SELECT user_dp_range(amount, user_id, 1.0, 0, 1000, 5) r FROM visits) s;
-- without tau: median +- 7 MAD, clipped to the bounds
SELECT round((r).lower::numeric, 4) AS lower, round((r).upper::numeric, 4) AS upper
FROM (SELECT user_dp_range(amount, user_id, 1.0, 0, 1000) r FROM visits) s;
SELECT round((r).lower::numeric, 4) AS lower, round((r).upper::numeric, 4) AS upper
FROM (SELECT user_dp_range(amount, user_id, 1.0) r FROM visits) s;
-- the range holds the bulk of the user averages
SELECT (r).lower < 50 AND (r).upper > 59 AS covers
FROM (SELECT user_dp_range(amount, user_id, 1.0) r FROM visits) s;

-- tiny bins over huge bounds: 1e18 bins, exact and fast
SELECT (r).upper - (r).lower < 1e-5 AS narrow, (r).lower > 40 AND (r).upper < 70 AS located
FROM (SELECT user_dp_range(amount, user_id, 1.0, -1e12, 1e12, 1e-6) r FROM visits) s;

-- empty input still returns a range inside the bounds
SELECT (r).lower >= 0 AND (r).upper <= 1000 AND (r).lower <= (r).upper AS inside
FROM (SELECT user_dp_range(amount, user_id, 1.0, 0, 1000) r FROM visits WHERE false) s;

-- the composite type
SELECT pg_typeof(user_dp_range(amount, user_id, 1.0)) FROM visits;

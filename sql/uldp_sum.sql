-- user_dp_sum, the _ci twins, value types and NULL parameters, in the seeded test mode
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
SELECT uldp.set_budget(current_user::regrole, 1e7, 1e-3);

-- 400 users; user u has 1 + u % 7 orders of about 20 + u % 30, returned when u % 9 = 0
CREATE TABLE orders AS
	SELECT u AS user_id, j AS item, (20 + u % 30 + (j * 37 + u) % 11)::numeric(8, 2) AS amount,
		   (u % 9 = 0) AS returned
	FROM generate_series(1, 400) u, generate_series(0, 6) j
	WHERE j <= u % 7;
SELECT count(*) AS orders, count(DISTINCT user_id) AS customers, sum(amount) AS revenue,
	   avg(r) AS share_returned
FROM orders, LATERAL (SELECT avg(returned::int) r FROM orders o WHERE o.user_id = orders.user_id) s;

-- the signatures: values of any numeric type, booleans, integer constants (without bounds,
-- 400 users need an epsilon above 1 for a private interval)
SELECT round(user_dp_sum(amount, user_id, 2.0)::numeric, 2) AS revenue,
	   round(user_dp_sum(amount, user_id, 1.0, 0, 500)::numeric, 2) AS revenue_bounded,
	   round(user_dp_sum(1, user_id, 2.0)::numeric, 2) AS orders,
	   round(user_dp_sum(item::int2, user_id, 1.0, 0, 30)::numeric, 2) AS items,
	   round(user_dp_mean(returned, user_id, 1.0)::numeric, 4) AS share_returned,
	   round(user_dp_mean(amount::real, user_id, 1.0)::numeric, 2) AS basket
FROM orders;

-- without bounds, when most users have the same value (here most never returned an order),
-- the private interval collapses onto it and the others are clipped: bounds avoid that
SELECT round(user_dp_sum(returned, user_id, 2.0)::numeric, 2) AS returned_no_bounds,
	   round(user_dp_sum(returned, user_id, 1.0, 0, 7)::numeric, 2) AS returned_bounded
FROM orders;

-- intervals hold the estimate; the same seed gives the same estimate as the plain release
SET uldp.test_seed = 7;
SELECT round((e).estimate::numeric, 2) AS estimate, (e).ci_lower <= (e).estimate AS lower_ok,
	   (e).estimate <= (e).ci_upper AS upper_ok
FROM (SELECT user_dp_mean_ci(amount, user_id, 1.0, 0, 100) AS e FROM orders) s;
SET uldp.test_seed = 7;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 2) AS plain FROM orders;
SET uldp.test_seed = 7;
SELECT round((e).estimate::numeric, 2) AS estimate, round((e).ci_lower::numeric, 2) AS ci_lower,
	   round((e).ci_upper::numeric, 2) AS ci_upper
FROM (SELECT user_dp_sum_ci(amount, user_id, 2.0) AS e FROM orders) s;
SET uldp.test_seed = 7;
SELECT round(user_dp_sum(amount, user_id, 2.0)::numeric, 2) AS plain FROM orders;

-- each user's total is clamped, not its rows: with a huge epsilon the noise vanishes
CREATE TABLE ledger_rows (user_id int, amount float8);
INSERT INTO ledger_rows VALUES (1, -100), (1, 200), (2, 400), (3, 50), (3, 60);
SELECT round(user_dp_sum(amount, user_id, 1e6, 0, 150)::numeric, 2) AS clamped_totals,  -- 100 + 150 + 110
	   round(user_dp_mean(amount, user_id, 1e6, 0, 150)::numeric, 2) AS clamped_rows      -- (50 + 150 + 55) / 3
FROM ledger_rows;

-- NULL for an optional parameter means "not given"; one bound alone is kept
SET uldp.test_seed = 11;
SELECT round(user_dp_sum(amount, user_id, 2.0, NULL, NULL)::numeric, 2) AS no_bounds,
	   round(user_dp_sum(amount, user_id, 2.0, 0, NULL)::numeric, 2) AS lower_only,
	   round(user_dp_mean(amount, user_id, 1.0, 0, 100, NULL)::numeric, 2) AS no_tau,
	   user_dp_mean(amount, user_id, 1.0, NULL, 10) <= 10 AS upper_only
FROM orders;
SELECT user_dp_sum(amount, user_id, 1.0, 0, 10, 1) FROM orders;
SELECT user_dp_mean(amount, user_id, NULL) FROM orders;
SELECT user_dp_mean(amount, user_id, 1.0, NULL, NULL, 1) FROM orders;

-- empty input releases a value; without bounds (and with too few users for a private
-- interval) the release says it knows nothing
SELECT user_dp_sum(amount, user_id, 1.0, 0, 100) IS NOT NULL AS sum_bounds,
	   user_dp_sum_ci(amount, user_id, 1.0) AS sum_no_bounds,
	   user_dp_mean_ci(amount, user_id, 1.0) AS mean_no_bounds,
	   (user_dp_mean_ci(amount, user_id, 1.0, 0, 100)).ci_lower >= 0 AS mean_bounds
FROM orders WHERE false;

-- every release is charged before reading: uldp.cost shows it, the ledger records it
SELECT * FROM uldp.cost($$SELECT user_dp_sum(amount, user_id, 0.5), user_dp_mean_ci(amount, user_id, 0.25) FROM orders$$);
SELECT function, epsilon FROM uldp.ledger ORDER BY at DESC, function LIMIT 2;

DROP TABLE orders, ledger_rows;
-- the releases of epsilon 1e6 above spent more than the next tests' budgets
SELECT uldp.reset_budget(current_user::regrole);
RESET uldp.test_seed;

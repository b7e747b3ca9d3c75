-- grouped releases (uldp 0.8): GROUP BY over uldp aggregates, on an ordinary table and on a
-- protected table with joins to ordinary tables, in the seeded test mode
SET extra_float_digits = 0;
CREATE ROLE uldp_grouped_analyst LOGIN;

-- 400 customers with 1 to 12 orders each in 2024, over 8 products of 4 categories;
-- amounts, dates and products are pseudorandom but fixed by setseed
SELECT setseed(0.42);
CREATE TABLE grouped_orders AS
	SELECT c AS customer_id, o AS order_no,
		   date '2024-01-01' + (random() * 365)::int AS ordered_on,
		   1 + (random() * 7)::int AS product_id,
		   round((5 + random() * 95 + (c % 4) * 10)::numeric, 2)::float8 AS amount,
		   random() < 0.1 + (c % 3) * 0.05 AS returned,
		   c % 4 AS segment, 'c' || c AS customer_code
	FROM generate_series(1, 400) c, generate_series(1, 12) o
	WHERE o <= 1 + (c * 7) % 12;
CREATE TABLE grouped_products AS
	SELECT p AS product_id, (ARRAY['books', 'games', 'tools', 'garden'])[1 + p % 4] AS category
	FROM generate_series(1, 8) p;
GRANT SELECT ON grouped_products TO uldp_grouped_analyst;
SELECT count(*) AS orders, count(DISTINCT customer_id) AS customers,
	   round(avg(amount)::numeric, 2) AS mean_amount FROM grouped_orders;
-- the true per-segment facts the releases estimate
SELECT segment, count(DISTINCT customer_id) AS customers, round(avg(amount)::numeric, 2) AS mean_amount
FROM grouped_orders GROUP BY segment ORDER BY segment;

SELECT uldp.protect_table('grouped_orders', 'customer_id');
SELECT uldp.set_budget('uldp_grouped_analyst', 1000, 1e-3);
SET SESSION AUTHORIZATION uldp_grouped_analyst;

-- the seed is set by the superuser: each seeded block switches back for it
-- one group per segment: counts of customers, means with and without bounds, sums
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 1; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY segment ORDER BY segment;
-- without bounds the private range of 100 users at epsilon 1 finds nothing, so the mean is 0,
-- as it is ungrouped over the same rows; with bounds [0, 200] it is near the true means
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 2; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, round(user_dp_mean(amount, customer_id, 1.0)::numeric, 3) AS mean,
	   round(user_dp_mean(amount, customer_id, 1.0, 0, 200)::numeric, 3) AS bounded_mean
FROM grouped_orders GROUP BY segment ORDER BY segment;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 2; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT round(user_dp_mean(amount, customer_id, 1.0)::numeric, 3) AS segment_0_ungrouped
FROM grouped_orders WHERE segment = 0;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 3; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, round(user_dp_sum(amount, customer_id, 1.0, 0, 1000)::numeric, 1) AS revenue
FROM grouped_orders GROUP BY segment ORDER BY segment;
-- quantiles and ranges per group
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 4; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, round(user_dp_quantile(amount, customer_id, 1.0, 0.5, 0, 200)::numeric, 2) AS median
FROM grouped_orders GROUP BY segment ORDER BY segment;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 5; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, round((r).lower::numeric, 2) AS lower, round((r).upper::numeric, 2) AS upper
FROM (SELECT segment, user_dp_range(amount, customer_id, 1.0, 0, 200) AS r
	  FROM grouped_orders GROUP BY segment) s ORDER BY segment;
-- the intervals: estimate, and a 95% interval around it
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 6; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, (e).estimate, (e).ci_lower, (e).ci_upper
FROM (SELECT segment, user_dp_count_ci(customer_id, 1.0) AS e FROM grouped_orders GROUP BY segment) s
ORDER BY segment;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 7; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, round((e).estimate::numeric, 2) AS estimate,
	   (e).ci_lower <= (e).estimate AND (e).estimate <= (e).ci_upper AS inside
FROM (SELECT segment, user_dp_mean_ci(amount, customer_id, 1.0, 0, 200) AS e FROM grouped_orders GROUP BY segment) s
ORDER BY segment;

-- vector means per group: one 2-dimensional mean (amount, returned) per segment, with delta
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 8; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, (SELECT array_agg(round(x::numeric, 2)) FROM unnest(m) x) AS mean
FROM (SELECT segment, user_dp_mean(ARRAY[amount / 100, returned::int], customer_id, 1.0, 1e-6, 4) AS m
	  FROM grouped_orders GROUP BY segment) s ORDER BY segment;
-- the same release ungrouped, on the same rows
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 8; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT cardinality(user_dp_mean(ARRAY[amount / 100, returned::int], customer_id, 1.0, 1e-6, 4)) AS dims
FROM grouped_orders;

-- one model per group: logistic regression of returns on the amount
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 9; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, jsonb_typeof(m -> 'weights') AS weights, jsonb_array_length(m -> 'weights') AS n_weights
FROM (SELECT segment, user_dp_sgd(ARRAY[amount / 100, 1], returned::int, customer_id, 2.0, 1e-6,
								  '{"loss": "logistic"}') AS m
	  FROM grouped_orders GROUP BY segment) s ORDER BY segment;

-- expressions as keys: a month. Each customer keeps one of its months, so a month has about
-- 33 customers: below the selection threshold at the default epsilon 0.25 (73), no month
-- appears; at selection epsilon 1 (threshold 20) they do
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 10; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT date_trunc('month', ordered_on)::date AS month, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY 1 ORDER BY 1;
SET uldp.group_selection_epsilon = 1.0;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 10; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT date_trunc('month', ordered_on)::date AS month, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY 1 ORDER BY 1;
-- the key above reads one column: both readings compute it once per distinct date
-- (src/keymemo.c); the releases equal those of the same key computed on every row (a key of
-- two columns, which the memo leaves as it is)
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 10; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT date_trunc('month', ordered_on + 0 * product_id)::date AS month, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY 1 ORDER BY 1;
-- several keys, one of them a CASE bucket
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 11; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, CASE WHEN amount < 50 THEN 'small' WHEN amount < 100 THEN 'medium' ELSE 'large' END AS basket,
	   user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY 1, 2 ORDER BY 1, 2;
RESET uldp.group_selection_epsilon;
-- HAVING on a release, ORDER BY a release, LIMIT: post-processing of the released groups
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 12; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY segment HAVING user_dp_count(customer_id, 1.0) > 95
ORDER BY customers DESC LIMIT 2;
-- a join with an ordinary table, grouped by its column
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 13; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT p.category, user_dp_count(o.customer_id, 1.0) AS customers,
	   round(user_dp_mean(o.amount, o.customer_id, 1.0, 0, 200)::numeric, 2) AS mean
FROM grouped_orders o JOIN grouped_products p USING (product_id)
GROUP BY p.category ORDER BY p.category;

-- each user keeps one group by default: a customer with orders in many months counts in one
-- of them; with uldp.max_groups_per_user = 3 it counts in up to 3 (each group with epsilon / 3)
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 14; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT date_trunc('quarter', ordered_on)::date AS quarter, user_dp_count(customer_id, 3.0) AS customers
FROM grouped_orders GROUP BY 1 ORDER BY 1;
SET uldp.max_groups_per_user = 3;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 14; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT date_trunc('quarter', ordered_on)::date AS quarter, user_dp_count(customer_id, 3.0) AS customers
FROM grouped_orders GROUP BY 1 ORDER BY 1;
RESET uldp.max_groups_per_user;

-- a group held by one customer never appears: grouped by a column unique to each customer
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 15; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT customer_code, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY customer_code;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 15; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT count(*) AS groups
FROM (SELECT customer_code, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY customer_code) s;
-- the query's own HAVING runs only on groups that passed selection: on these one-customer
-- groups, which never do, a HAVING that fails on every group it reaches raises nothing
SELECT customer_code, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY customer_code
HAVING 1 / (user_dp_count(customer_id, 1.0) * 0) > 0;

-- the cost: the aggregates' epsilons plus partition selection (0.25, delta 1e-8), once for
-- the statement whatever the number of groups
SELECT * FROM uldp.cost($$SELECT segment, user_dp_count(customer_id, 0.5) FROM grouped_orders GROUP BY segment$$);
SELECT * FROM uldp.cost($$SELECT segment, user_dp_count(customer_id, 0.5), user_dp_mean(amount, customer_id, 0.25, 0, 200)
						 FROM grouped_orders GROUP BY segment$$);
SELECT * FROM uldp.cost($$SELECT customer_code, user_dp_count(customer_id, 0.5) FROM grouped_orders GROUP BY customer_code$$);
SELECT * FROM uldp.cost($$SELECT user_dp_count(customer_id, 0.5) FROM grouped_orders$$);
SET uldp.group_selection_epsilon = 0.5;
SET uldp.group_selection_delta = 1e-7;
SELECT * FROM uldp.cost($$SELECT segment, user_dp_count(customer_id, 0.5) FROM grouped_orders GROUP BY segment$$);
RESET uldp.group_selection_epsilon;
RESET uldp.group_selection_delta;
-- k does not change the cost: each group releases with epsilon / k
SET uldp.max_groups_per_user = 3;
SELECT * FROM uldp.cost($$SELECT segment, user_dp_count(customer_id, 0.5) FROM grouped_orders GROUP BY segment$$);
RESET uldp.max_groups_per_user;

-- one ledger row per statement, whatever the number of groups (12 months, then 400 codes)
RESET SESSION AUTHORIZATION;
SELECT count(*) AS ledger_rows FROM uldp.ledger WHERE role = 'uldp_grouped_analyst' \gset
SET SESSION AUTHORIZATION uldp_grouped_analyst;
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 16; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT count(*) AS months FROM (SELECT date_trunc('month', ordered_on), user_dp_count(customer_id, 0.5)
								FROM grouped_orders GROUP BY 1) s;
SELECT count(*) AS codes FROM (SELECT customer_code, user_dp_count(customer_id, 0.5)
							   FROM grouped_orders GROUP BY 1) s;
-- a prepared grouped release pays at every execution
PREPARE by_segment AS SELECT segment, user_dp_count(customer_id, 0.5) FROM grouped_orders GROUP BY segment ORDER BY segment;
EXECUTE by_segment;
EXECUTE by_segment;
DEALLOCATE by_segment;
RESET SESSION AUTHORIZATION;
SELECT function, epsilon, delta FROM uldp.ledger
WHERE role = 'uldp_grouped_analyst' ORDER BY at OFFSET :ledger_rows;
SET SESSION AUTHORIZATION uldp_grouped_analyst;

-- still refused, before reading: grouping by the privacy unit, grouping sets, a join of
-- two protected tables, a subquery in FROM, grouped releases over two user arguments
SELECT customer_id, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY customer_id;
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY GROUPING SETS ((segment), ());
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY ROLLUP (segment);
SELECT o.segment, user_dp_count(o.customer_id, 1.0)
FROM grouped_orders o JOIN grouped_orders p ON o.product_id = p.product_id GROUP BY o.segment;
SELECT segment, user_dp_count(customer_id, 1.0)
FROM (SELECT * FROM grouped_orders WHERE amount > 10) o GROUP BY segment;
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY segment, random() > 0.5;
RESET SESSION AUTHORIZATION;
-- for every role, on any table: a grouped release reads its rows twice, so rows that a
-- volatile function or a sample picks (a second reading could pick others) are refused, and
-- partition selection called by hand, over anything but the users of each group, is refused
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders WHERE random() < 2 GROUP BY segment;
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders TABLESAMPLE BERNOULLI (50) GROUP BY segment;
SELECT segment, uldp.group_selected(1, 1, NULL, customer_id, 1.0, 1e-8, segment)
FROM grouped_orders GROUP BY segment;
-- nothing was charged for the refusals: still the 4 rows above
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM uldp.ledger WHERE role = 'uldp_grouped_analyst';

-- over a CTE of the query, which both readings share: the releases of the first block
-- (seed 1), by a role that may read the table
SET uldp.test_seed = 1;
WITH o AS (SELECT * FROM grouped_orders)
SELECT segment, user_dp_count(customer_id, 1.0) AS customers FROM o GROUP BY segment ORDER BY segment;
-- and a CTE that a subquery of its WHERE reads
SET uldp.test_seed = 1;
WITH big AS (SELECT customer_id FROM grouped_orders WHERE amount > 100)
SELECT segment, user_dp_count(customer_id, 1.0) AS customers FROM grouped_orders
WHERE customer_id IN (SELECT customer_id FROM big) GROUP BY segment ORDER BY segment;

-- a grouping key fixed by WHERE: one group, still aggregated after all rows are read
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 30; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders WHERE segment = 3 GROUP BY segment;

-- keys that GROUP BY holds equal but whose bytes differ (1.00 for customers 1 to 10, read
-- first, and 1.0 for the 390 others) name two groups of the registry: partition selection
-- counts the users of the larger (390), so the group appears
RESET SESSION AUTHORIZATION; SET uldp.test_seed = 32; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT CASE WHEN customer_id <= 10 THEN 1.00 ELSE 1.0 END AS k, user_dp_count(customer_id, 1.0) AS customers
FROM grouped_orders GROUP BY 1;

-- public keys: the owner declares segments 0 to 4 public (4 has no customer); exactly those
-- groups appear, the empty one included, rows of other keys reach no group, and choosing
-- the groups costs nothing
RESET SESSION AUTHORIZATION;
SELECT uldp.set_public_groups('grouped_orders', 'segment', ARRAY[4, 0, 1, 2, 0]);
SELECT uldp.set_public_groups('grouped_orders', 'segment', ARRAY['0']);
SELECT uldp.set_public_groups('grouped_orders', 'customer_id', ARRAY[1]);
SET uldp.test_seed = 31; SET SESSION AUTHORIZATION uldp_grouped_analyst;
SELECT * FROM uldp.cost($$SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders GROUP BY segment$$);
SELECT segment, user_dp_count(customer_id, 1.0) AS customers,
	   round(user_dp_mean(amount, customer_id, 1.0, 0, 200)::numeric, 3) AS mean
FROM grouped_orders WHERE ordered_on >= '2024-03-01'::date GROUP BY segment ORDER BY segment;
-- with public keys every public group appears, also those a filter empties (their releases are noise)
SELECT segment, user_dp_count(customer_id, 1.0) FROM grouped_orders WHERE segment = 1 GROUP BY segment;
RESET SESSION AUTHORIZATION;
SELECT uldp.set_public_groups('grouped_orders', 'segment', NULL::int[]);

-- a group's table grows to its registered size when it first grows, not on the group's first
-- row: with three groups of 10000 users each (tables of 393 kB) and a work_mem of 64 kB, the
-- hashed GROUP BY meets every group before its memory passes the limit and writes no row to
-- disk (one batch); tables presized on their first row made it spill the third group's rows
CREATE TABLE grouped_spill AS SELECT i % 30000 AS user_id, i % 3 AS g, 1.0::float8 AS x
	FROM generate_series(1, 60000) i;
ANALYZE grouped_spill;
CREATE FUNCTION pg_temp.hashagg_batches(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Strategy') || ', batches: ' ||
		(plan -> 0 -> 'Plan' ->> 'HashAgg Batches');
END $$;
SELECT uldp.set_budget(current_user::regrole, 1000, 1e-3);
SET work_mem = '64kB'; SET enable_sort = off; SET max_parallel_workers_per_gather = 0;
SET uldp.max_groups_per_user = 2;
SELECT pg_temp.hashagg_batches('SELECT g, user_dp_mean(x, user_id, 1.0, 0, 1) FROM grouped_spill GROUP BY g');
RESET work_mem; RESET enable_sort; RESET max_parallel_workers_per_gather; RESET uldp.max_groups_per_user;
-- a grouped release that runs again in one statement (a correlated subquery)
-- is refused when its second run starts, before it reads a row: also when
-- that run would read none (g = 5), so the error says nothing of the rows
SELECT o.g, (SELECT count(*) FROM (SELECT g, user_dp_count(user_id, 1.0) FROM grouped_spill
								   WHERE g = o.g GROUP BY g) s) AS groups
FROM (VALUES (0), (1)) o(g);
SELECT o.g, (SELECT count(*) FROM (SELECT g, user_dp_count(user_id, 1.0) FROM grouped_spill
								   WHERE g = o.g GROUP BY g) s) AS groups
FROM (VALUES (0), (5)) o(g);
DELETE FROM uldp.budget_data WHERE role = current_user;
DROP TABLE grouped_spill;

SELECT uldp.unprotect_table('grouped_orders');
DROP TABLE grouped_orders;
DROP TABLE grouped_products;
DELETE FROM uldp.budget_data WHERE role = 'uldp_grouped_analyst';
DROP ROLE uldp_grouped_analyst;

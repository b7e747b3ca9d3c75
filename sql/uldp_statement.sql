-- uldp 0.4: a statement's releases are charged before it reads any row, in one ledger row
SET uldp.test_seed = 42;
SET extra_float_digits = 0;
CREATE ROLE uldp_statement_analyst LOGIN;
CREATE ROLE uldp_statement_nobody LOGIN;
CREATE TABLE stmt_visits AS
	SELECT u AS user_id, r AS visit, (u * 7 + r * 13) % 100 + 0.5 AS amount
	FROM generate_series(1, 300) u, generate_series(1, 3) r;
GRANT SELECT ON stmt_visits TO uldp_statement_analyst, uldp_statement_nobody;
SELECT uldp.set_budget('uldp_statement_analyst', 10, 1e-3);
CREATE VIEW stmt_charges AS
	SELECT function, epsilon, delta FROM uldp.ledger
	WHERE function LIKE 'user\_dp\_%' AND role::text = 'uldp_statement_analyst' ORDER BY at;

SET SESSION AUTHORIZATION uldp_statement_nobody;
-- a role without budget is refused before any row is read: the filter, which fails on
-- every row, is never evaluated
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits WHERE 1 / (visit - visit) > 0;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits WHERE false;
RESET SESSION AUTHORIZATION;

SET SESSION AUTHORIZATION uldp_statement_analyst;
-- the charge comes first: an error while reading rows does not undo it
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits WHERE 1 / (visit - visit) > 0;
-- public parameters are checked first: an invalid one charges nothing
SELECT user_dp_mean(amount, user_id, 0.5, 100, 0) FROM stmt_visits WHERE 1 / (visit - visit) > 0;
-- several releases, in the SELECT list, in subqueries and CTEs: one ledger row, their sum
SELECT round(user_dp_mean(amount, user_id, 0.25, 0, 100, 10)::numeric, 4) AS mean,
	   (user_dp_range(amount, user_id, 0.125, 0, 100)).lower IS NOT NULL AS range_released,
	   (SELECT round(user_dp_mean(amount, user_id, 0.5, 0, 100, 10)::numeric, 4) FROM stmt_visits WHERE visit = 1) AS first_visits
FROM stmt_visits;
WITH a AS (SELECT user_dp_mean(amount, user_id, 0.5, 0, 100, 10) AS m FROM stmt_visits),
	 b AS (SELECT user_dp_mean(amount, user_id, 0.5, 0, 100, 10) AS m FROM stmt_visits WHERE visit > 1)
SELECT round(a.m::numeric, 4) AS all_visits, round(b.m::numeric, 4) AS later_visits FROM a, b;
-- identical calls in one SELECT are one release, computed and charged once
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) = user_dp_mean(amount, user_id, 0.5, 0, 100) AS same
FROM stmt_visits;
-- a release that runs once per outer row is charged for each run, before it reads rows
SELECT g, round((SELECT user_dp_mean(amount, user_id, 0.5, 0, 100, 10) FROM stmt_visits WHERE visit <= g)::numeric, 4)
FROM generate_series(1, 3) g;
-- EXPLAIN runs nothing and charges nothing; a prepared statement pays at every execution
EXPLAIN (COSTS OFF) SELECT user_dp_mean(amount, user_id, 5, 0, 100) FROM stmt_visits;
PREPARE release(float8) AS SELECT round(user_dp_mean(amount, user_id, $1, 0, 100, 10)::numeric, 4) FROM stmt_visits;
EXECUTE release(0.25);
EXECUTE release(0.25);
DEALLOCATE release;
-- a cursor pays when it starts
BEGIN;
DECLARE c CURSOR FOR SELECT user_dp_mean(amount, user_id, 0.03125, 0, 100) FROM stmt_visits;
CLOSE c;
COMMIT;
-- over budget: refused before reading, whatever the rows
SELECT user_dp_mean(amount, user_id, 100, 0, 100) FROM stmt_visits WHERE 1 / (visit - visit) > 0;
-- grouping sets and windows are refused before reading (the filter would fail on every row)
SELECT visit, user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits WHERE 1 / (visit - visit) > 0 GROUP BY ROLLUP (visit);
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) OVER () FROM stmt_visits WHERE 1 / (visit - visit) > 0;
-- uldp.cost: what a query would charge, without running it (nothing charged, nothing read:
-- the filter that fails on every row is never evaluated)
SELECT * FROM uldp.cost($$SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits$$);
SELECT * FROM uldp.cost($$
	SELECT user_dp_mean(amount, user_id, 0.25, 0, 100, 10), (user_dp_range(amount, user_id, 0.125, 0, 100)).lower,
		   (SELECT user_dp_count(user_id, 0.0625) FROM stmt_visits WHERE visit = 1)
	FROM stmt_visits WHERE 1 / (visit - visit) > 0$$);
SELECT * FROM uldp.cost($$SELECT user_dp_mean(ARRAY[amount, visit], user_id, 1, 1e-6) FROM stmt_visits$$);
SELECT * FROM uldp.cost($$SELECT count(*) FROM stmt_visits$$);
-- what the query would refuse, it refuses, before anything
SELECT * FROM uldp.cost($$SELECT user_dp_mean(amount, user_id, 0.5, 100, 0) FROM stmt_visits$$);
SELECT * FROM uldp.cost($$SELECT user_id, user_dp_mean(amount, user_id, 0.5) FROM stmt_visits GROUP BY user_id$$);
SELECT * FROM uldp.cost($$SELECT user_dp_mean(amount, user_id, 0.5) FROM no_such_table$$);
SELECT * FROM uldp.cost($$SELECT 1; SELECT 2$$);
SELECT * FROM uldp.cost($$VACUUM stmt_visits$$);
RESET SESSION AUTHORIZATION;
-- a role without budget may ask the price
SET SESSION AUTHORIZATION uldp_statement_nobody;
SELECT * FROM uldp.cost($$SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM stmt_visits$$);
RESET SESSION AUTHORIZATION;

SELECT * FROM stmt_charges;
-- for the administrator, each row records the statement that was charged
SELECT statement FROM uldp.ledger
WHERE function LIKE 'user\_dp\_%' AND role::text = 'uldp_statement_analyst' ORDER BY at LIMIT 2;
SELECT epsilon_spent, delta_spent FROM uldp.budget_data WHERE role = 'uldp_statement_analyst';

DROP VIEW stmt_charges;
DROP TABLE stmt_visits;
DELETE FROM uldp.budget_data WHERE role = 'uldp_statement_analyst';
DROP ROLE uldp_statement_analyst;
DROP ROLE uldp_statement_nobody;
RESET uldp.test_seed;

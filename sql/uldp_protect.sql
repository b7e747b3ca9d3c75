-- protected tables: a role without SELECT privilege may run releases over
-- the table's privacy unit, and nothing else
SET extra_float_digits = 0;
CREATE ROLE uldp_protect_analyst LOGIN;
CREATE TYPE protected_pair AS (region int, spot point);
CREATE TABLE protected_visits AS
	SELECT u AS user_id, j AS visit, ((u * 37 + j * 11) % 100)::float8 AS amount, u % 5 AS region,
		   'note ' || u AS note, ROW(u % 5, point(u, j))::protected_pair AS pair
	FROM generate_series(1, 400) u, generate_series(1, 3) j;
CREATE TABLE public_regions AS SELECT r AS region FROM generate_series(0, 4) r;
GRANT SELECT ON public_regions TO uldp_protect_analyst;
CREATE VIEW public_regions_view AS SELECT * FROM public_regions;
CREATE SEQUENCE protected_seq;
GRANT USAGE ON protected_seq TO uldp_protect_analyst;

-- before protection the analyst cannot read the table at all
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM protected_visits;
RESET SESSION AUTHORIZATION;

-- only the owner (or a superuser) may protect a table; the analyst may not
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT uldp.protect_table('protected_visits', 'user_id');
RESET SESSION AUTHORIZATION;
SELECT uldp.protect_table('protected_visits', 'no_such_column');
SELECT uldp.protect_table('protected_visits', 'ctid');
SELECT uldp.protect_table('public_regions_view', 'region');
SELECT uldp.protect_table('protected_visits', 'user_id');
SELECT * FROM uldp.protected_tables;
SECURITY LABEL FOR uldp ON TABLE protected_visits IS 'public';
SELECT uldp.set_budget('uldp_protect_analyst', 100, 1e-6);

-- releases are allowed, with safe filters, and charged to the analyst
SET uldp.test_seed = 5;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS mean FROM protected_visits;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS mean
FROM protected_visits WHERE region = 3 AND NOT (amount BETWEEN 40 AND 45) AND note IS NOT NULL;
SELECT round(user_dp_mean(amount * 2 - 1, user_id, 1.0, 0, 200)::numeric, 6) AS mean
FROM protected_visits WHERE region IN (1, 2) OR amount > 90.5;
SELECT user_dp_range(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE visit <> 2;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS filtered
FROM protected_visits WHERE user_id % 2 = 0 AND greatest(amount, 10) < 80;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100) FILTER (WHERE region <> 0)::numeric, 6) AS with_filter
FROM protected_visits;
-- a release inside a bigger query: its one row is post-processed
SELECT (SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits) > 0 AS positive;
WITH m AS (SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) AS m FROM protected_visits)
SELECT round(m::numeric, 6) FROM m;
PREPARE release(int) AS
	SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) FROM protected_visits WHERE region = $1;
EXECUTE release(4);
DEALLOCATE release;

-- arithmetic that would raise an error yields NULL instead: the row is filtered out,
-- or its value skipped; the same seed gives the same release as the explicit filter
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 9;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS safe
FROM protected_visits WHERE 100 / (region - 2) > 0;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 9;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS explicit
FROM protected_visits WHERE region > 2;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 6) AS overflow
FROM protected_visits WHERE (amount * 1e307 * 1e10) > 0 OR user_id * 2147483647 > 0
	OR (amount::numeric / (region - region)) IS NOT NULL OR (amount * 1e300)::int8 > 0;

-- parallel plans: the gate is checked once, in the leader; the workers run the plan
-- it allowed, and the same seed gives the same release as without workers
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 13;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 9) AS serial
FROM protected_visits WHERE region < 4 \gset
RESET SESSION AUTHORIZATION;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET uldp.max_parallel_workers_per_gather = 2;	-- on any number of CPUs
EXPLAIN (COSTS OFF) SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE region < 4;
SET uldp.test_seed = 13;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT round(user_dp_mean(amount, user_id, 1.0, 0, 100)::numeric, 9) = :serial AS same_release
FROM protected_visits WHERE region < 4;
RESET SESSION AUTHORIZATION;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SET SESSION AUTHORIZATION uldp_protect_analyst;

-- everything else is refused before any row is read
SELECT * FROM protected_visits;
TABLE protected_visits;
SELECT count(*) FROM protected_visits;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100), count(*) FROM protected_visits;
SELECT user_dp_mean(amount, region, 1.0, 0, 100) FROM protected_visits;
SELECT user_dp_mean(amount, user_id::text, 1.0, 0, 100) FROM protected_visits;
SELECT user_dp_mean(amount, user_id, amount, 0, 100) FROM protected_visits;
-- GROUP BY, HAVING, ORDER BY, LIMIT and joins with ordinary tables run (uldp_grouped);
-- grouping by the privacy unit, grouping sets, HAVING without GROUP BY, a LIMIT read
-- from the table, joins of the protected table with itself and subqueries in FROM do not
SELECT user_id, user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits GROUP BY user_id;
SELECT region, user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits GROUP BY ROLLUP (region);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits HAVING true;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits ORDER BY 1 LIMIT (SELECT count(*) FROM protected_visits);
SELECT DISTINCT region, user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits GROUP BY region;
SELECT user_dp_mean(DISTINCT amount, user_id, 1.0, 0, 100) FROM protected_visits;
SELECT user_dp_mean(v.amount, v.user_id, 1.0, 0, 100) FROM protected_visits v JOIN protected_visits w USING (user_id);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM (SELECT * FROM protected_visits) v;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE region IN (SELECT region FROM public_regions);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE ctid = '(0,1)';
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits v WHERE v IS NOT NULL;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE note ~ '^note 1';
-- rows compare column by column and fail only on reaching the point column
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE pair < pair;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE repeat(note, 2) > 'note';
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE substr(note, 6)::int > 7;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE random() < 0.5;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE region = 3 AND nextval('protected_seq') > 0;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE (ARRAY[1, 2, 3])[region] = 2;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits TABLESAMPLE BERNOULLI (50);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits FOR SHARE;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100), pg_notify('c', 'x') FROM protected_visits;
UPDATE protected_visits SET amount = 0 WHERE user_id = 1;
COPY protected_visits TO STDOUT;
COPY (SELECT * FROM protected_visits) TO STDOUT;
EXPLAIN (COSTS OFF) SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
EXPLAIN ANALYZE SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
SET debug_print_plan = on;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
RESET debug_print_plan;
CREATE TEMP VIEW raw AS SELECT * FROM protected_visits;
SELECT * FROM raw;
DROP VIEW raw;
DO $$ BEGIN PERFORM * FROM protected_visits; END $$;
-- the analyst's own operators and functions are not in the safe set; PostgreSQL lets
-- no one but a superuser build an aggregate on uldp's support functions (internal
-- state); an SQL function inlined into the query is denied
RESET SESSION AUTHORIZATION;
GRANT CREATE ON SCHEMA public TO uldp_protect_analyst;
SET SESSION AUTHORIZATION uldp_protect_analyst;
CREATE FUNCTION protected_leak(float8, float8) RETURNS bool LANGUAGE plpgsql IMMUTABLE
	AS $$ BEGIN RAISE NOTICE 'row %', $1; RETURN $1 > $2; END $$;
CREATE OPERATOR >>> (LEFTARG = float8, RIGHTARG = float8, FUNCTION = protected_leak);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE amount >>> 50;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE protected_leak(amount, 50);
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits WHERE protected_leak(amount, 50) IS NULL;
CREATE AGGREGATE protected_mean(float8, anyelement, float8, float8, float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn);
CREATE FUNCTION protected_rows() RETURNS SETOF protected_visits LANGUAGE sql STABLE
	AS 'SELECT * FROM protected_visits';
SELECT count(*) FROM protected_rows();
DROP FUNCTION protected_rows();
DROP OPERATOR >>> (float8, float8);
DROP FUNCTION protected_leak(float8, float8);
RESET SESSION AUTHORIZATION;
REVOKE CREATE ON SCHEMA public FROM uldp_protect_analyst;
SET SESSION AUTHORIZATION uldp_protect_analyst;

RESET SESSION AUTHORIZATION;
SET track_functions = 'all';
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
RESET SESSION AUTHORIZATION;
RESET track_functions;

-- auto_explain with log_analyze instruments the plan: refused as well
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
RESET SESSION AUTHORIZATION;
RESET auto_explain.log_analyze;
RESET auto_explain.log_min_duration;

-- the analyst paid for each release it ran, and only for those
SELECT function, epsilon, delta FROM uldp.ledger
WHERE role = 'uldp_protect_analyst' ORDER BY at;
SELECT epsilon_spent FROM uldp.budget WHERE role = 'uldp_protect_analyst';

-- roles with ordinary privileges keep them: the owner reads raw rows, and a role
-- granted SELECT is not gated
SELECT count(*), sum(amount) FROM protected_visits;
GRANT SELECT (region) ON protected_visits TO uldp_protect_analyst;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT region, count(*) FROM protected_visits GROUP BY region ORDER BY region;
SELECT count(note) FROM protected_visits;
RESET SESSION AUTHORIZATION;
REVOKE SELECT (region) ON protected_visits FROM uldp_protect_analyst;

-- unprotected again, the table is closed to the analyst, also to a plan the analyst
-- prepared while it was protected
SET SESSION AUTHORIZATION uldp_protect_analyst;
PREPARE cached AS SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) > -1 AS released FROM protected_visits;
EXECUTE cached;
RESET SESSION AUTHORIZATION;
SELECT uldp.unprotect_table('protected_visits');
SET SESSION AUTHORIZATION uldp_protect_analyst;
EXECUTE cached;
DEALLOCATE cached;
RESET SESSION AUTHORIZATION;
SELECT uldp.unprotect_table('protected_visits');
SELECT count(*) FROM uldp.protected_tables;
SET SESSION AUTHORIZATION uldp_protect_analyst;
SELECT user_dp_mean(amount, user_id, 1.0, 0, 100) FROM protected_visits;
RESET SESSION AUTHORIZATION;

-- protection is dropped with the table
SELECT uldp.protect_table('protected_visits', 'user_id');
DROP TABLE protected_visits;
SELECT count(*) FROM uldp.protected_tables;
SELECT count(*) FROM pg_seclabel WHERE provider = 'uldp';

DROP VIEW public_regions_view;
DROP TABLE public_regions;
DROP SEQUENCE protected_seq;
DROP TYPE protected_pair;
DELETE FROM uldp.budget_data WHERE role = 'uldp_protect_analyst';
DROP ROLE uldp_protect_analyst;

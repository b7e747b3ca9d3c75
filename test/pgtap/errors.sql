-- test/pgtap/errors.sql -- invalid public parameters raise clear errors (and charge nothing);
-- private data never raises: every input gives a finite answer within the bounds.
--
-- Releases are charged by a background worker that cannot see uncommitted rows, so the role,
-- its budget and the data are committed first and removed at the end.
\set prefix uldp_tap_errors_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_errors_analyst LOGIN;
SELECT uldp.set_budget('uldp_tap_errors_analyst', 1e9, 1) IS NULL AS budget_set \gset

-- data sets of adversarial private data: ds names the set, u the user, v the value
CREATE TABLE public.uldp_tap_errors_sets (ds text PRIMARY KEY);
CREATE TABLE public.uldp_tap_errors_data (ds text, u int, v float8);
INSERT INTO public.uldp_tap_errors_sets VALUES
    ('empty'), ('one user, one row'), ('one user, 1000 rows'), ('null and NaN values'),
    ('infinite values'), ('huge values'), ('null user ids'), ('skewed: one user with 100000 rows'),
    ('100000 users'), ('all users equal'), ('tiny and signed zeros'), ('far outside the bounds');
INSERT INTO public.uldp_tap_errors_data
    SELECT 'one user, one row', 7, 5
    UNION ALL SELECT 'one user, 1000 rows', 7, g FROM generate_series(1, 1000) g
    -- users 1..20 have a mix; user 21 has only NULL and NaN rows (so is absent)
    UNION ALL SELECT 'null and NaN values', g % 20 + 1, CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' ELSE g::float8 END
        FROM generate_series(1, 200) g
    UNION ALL SELECT 'null and NaN values', 21, NULL UNION ALL SELECT 'null and NaN values', 21, 'NaN'
    -- +inf, -inf, and a user with both
    UNION ALL SELECT 'infinite values', g, CASE WHEN g % 2 = 0 THEN 'Infinity' ELSE '-Infinity' END::float8
        FROM generate_series(1, 10) g
    UNION ALL SELECT 'infinite values', 11, 'Infinity' UNION ALL SELECT 'infinite values', 11, '-Infinity'
    UNION ALL SELECT 'huge values', g % 10, CASE WHEN g % 3 = 0 THEN -1.7e308::float8 ELSE 1.7e308::float8 END
        FROM generate_series(1, 1000) g
    UNION ALL SELECT 'null user ids', NULL, g FROM generate_series(1, 100) g
    UNION ALL SELECT 'skewed: one user with 100000 rows', 1, 1e6 FROM generate_series(1, 100000)
    UNION ALL SELECT 'skewed: one user with 100000 rows', g, 1 FROM generate_series(2, 10) g
    UNION ALL SELECT '100000 users', g, (g * 7919) % 1001 FROM generate_series(1, 100000) g
    UNION ALL SELECT 'all users equal', g, 42 FROM generate_series(1, 50) g
    UNION ALL SELECT 'tiny and signed zeros', g, (ARRAY[5e-324, -5e-324, 0, '-0'])[g % 4 + 1]
        FROM generate_series(1, 40) g
    UNION ALL SELECT 'far outside the bounds', g, 1e6 * (g % 2 * 2 - 1) FROM generate_series(1, 30) g;
GRANT SELECT ON public.uldp_tap_errors_data, public.uldp_tap_errors_sets TO uldp_tap_errors_analyst;
ANALYZE public.uldp_tap_errors_data;

-- outcome(q): the single value q returns, as text ('NULL' if null), or 'ERROR <sqlstate>: <message>'
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE q INTO r;
    RETURN coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
    RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;
-- verdict(kind, res, lo, hi): 'ok' if res is a valid release of kind 'mean' or 'range' within
-- [lo, hi], else what is wrong with it
CREATE FUNCTION pg_temp.verdict(kind text, res text, lo float8, hi float8) RETURNS text LANGUAGE plpgsql AS $$
DECLARE m float8; r uldp.range;
BEGIN
    IF res LIKE 'ERROR%' OR res = 'NULL' THEN RETURN res; END IF;
    IF kind = 'mean' THEN
        m := res::float8;
        IF m = 'NaN' OR NOT (m >= lo AND m <= hi) THEN RETURN 'mean outside [lo, hi]: ' || res; END IF;
    ELSE
        r := res::uldp.range;
        IF r.lower IS NULL OR r.upper IS NULL OR r.lower = 'NaN' OR r.upper = 'NaN'
           OR NOT (lo <= r.lower AND r.lower <= r.upper AND r.upper <= hi) THEN
            RETURN 'range not within [lo, hi] or reversed: ' || res;
        END IF;
    END IF;
    RETURN 'ok';
END $$;
-- the six aggregates: kind, call (%1$s = value, %2$s = user id, %3$s = epsilon), bounds
CREATE TEMP TABLE aggs (name text, kind text, call text, lo float8, hi float8);
INSERT INTO aggs VALUES
    ('user_dp_mean/3',  'mean',  'user_dp_mean(%s, %s, %s)',                 -1e300, 1e300),
    ('user_dp_mean/5',  'mean',  'user_dp_mean(%s, %s, %s, -1000, 1000)',     -1000, 1000),
    ('user_dp_mean/6',  'mean',  'user_dp_mean(%s, %s, %s, -1000, 1000, 50)', -1000, 1000),
    ('user_dp_range/3', 'range', 'user_dp_range(%s, %s, %s)',                -1e300, 1e300),
    ('user_dp_range/5', 'range', 'user_dp_range(%s, %s, %s, -1000, 1000)',    -1000, 1000),
    ('user_dp_range/6', 'range', 'user_dp_range(%s, %s, %s, -1000, 1000, 50)', -1000, 1000);
GRANT SELECT ON aggs TO PUBLIC;

SET SESSION AUTHORIZATION uldp_tap_errors_analyst;
SELECT plan(276);

-- ---------------------------------------------------------------------------
-- invalid public parameters: every aggregate, every arity
CREATE TEMP TABLE bad_params (args text, sqlstate text, message text);
INSERT INTO bad_params VALUES
    ('0',           '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not 0'),
    ('-1',          '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not -1'),
    ('''NaN''',     '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not NaN'),
    ('''Infinity''', '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not Infinity'),
    ('''-Infinity''', '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not -Infinity'),
    ('NULL',        '22004', 'epsilon must not be null'),
    ('1.5e6',       '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not 1.5e+06'),
    ('1000001',     '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not 1e+06'),
    ('1e-7',        '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not 1e-07'),
    ('9.99e-7',     '22023', 'epsilon must be a finite number between 1e-06 and 1e+06, not 9.99e-07');
-- each epsilon, for each of the 6 aggregates, on data and on empty input
SELECT throws_ok(
    format('SELECT %s(v, u, %s%s) FROM uldp_tap_errors_data WHERE %s', a.agg, b.args, a.rest, e.cond),
    b.sqlstate, b.message, format('%s(..., epsilon %s%s) %s', a.agg, b.args, a.rest, e.label))
FROM bad_params b,
     (VALUES ('user_dp_mean', ''), ('user_dp_mean', ', 0, 10'), ('user_dp_mean', ', 0, 10, 1'),
             ('user_dp_range', ''), ('user_dp_range', ', 0, 10'), ('user_dp_range', ', 0, 10, 1')) a(agg, rest),
     (VALUES ('ds = ''huge values''', 'is refused'), ('false', 'is refused on empty input')) e(cond, label)
WHERE e.cond = 'ds = ''huge values''' OR b.args IN ('0', 'NULL')
ORDER BY a.agg, a.rest, b.args, e.cond;

-- bounds and tau
CREATE TEMP TABLE bad_bounds (args text, sqlstate text, message text);
INSERT INTO bad_bounds VALUES
    ('10, 10',            '22023', 'lower bound 10 must be less than upper bound 10'),
    ('10, 0',             '22023', 'lower bound 10 must be less than upper bound 0'),
    ('''-Infinity'', 0',  '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('0, ''Infinity''',   '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('''NaN'', 1',        '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('0, ''NaN''',        '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('-2e300, 0',         '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('0, 1.1e300',        '22023', 'bounds must be finite numbers within [-1e+300, 1e+300]'),
    ('0, 10, 0',          '22023', 'tau must be a positive finite number, not 0'),
    ('0, 10, -1',         '22023', 'tau must be a positive finite number, not -1'),
    ('0, 10, ''-0''',     '22023', 'tau must be a positive finite number, not -0'),
    ('0, 10, ''NaN''',    '22023', 'tau must be a positive finite number, not NaN'),
    ('0, 10, ''Infinity''', '22023', 'tau must be a positive finite number, not Infinity'),
    ('NULL, NULL, 1',     '22023', 'tau needs both bounds'),
    ('-1e12, 1e12, 1e-9', '22023', 'tau 1e-09 is too small for the bounds [-1e+12, 1e+12]'),
    -- (upper - lower) / (2 tau) = 2^63 > 2^62
    ('0, 9223372036854775808, 0.5', '22023', 'tau 0.5 is too small for the bounds [0, 9.22337e+18]'),
    ('-1e300, 1e300, 1e-300', '22023', 'tau 1e-300 is too small for the bounds [-1e+300, 1e+300]'),
    ('10, 0, 1',          '22023', 'lower bound 10 must be less than upper bound 0');
SELECT throws_ok(format('SELECT %s(v, u, 1.0, %s) FROM uldp_tap_errors_data WHERE ds = ''huge values''', a.agg, b.args),
    b.sqlstate, b.message, format('%s(v, u, 1.0, %s) is refused', a.agg, b.args))
FROM bad_bounds b, (VALUES ('user_dp_mean'), ('user_dp_range')) a(agg)
ORDER BY a.agg, b.args;
-- NULL for a bound or tau means "not given"
SELECT is(pg_temp.verdict('mean', pg_temp.outcome(
        $$SELECT user_dp_mean(v, u, 1.0, NULL, 10) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        -1e300, 10), 'ok', 'a NULL lower bound is not given');
SELECT is(pg_temp.verdict('mean', pg_temp.outcome(
        $$SELECT user_dp_mean(v, u, 1.0, 0, NULL) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        0, 1e300), 'ok', 'a NULL upper bound is not given');
SELECT is(pg_temp.verdict('mean', pg_temp.outcome(
        $$SELECT user_dp_mean(v, u, 1.0, 0, 10, NULL) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        0, 10), 'ok', 'a NULL tau is not given');
SELECT throws_ok($$SELECT user_dp_range(v, u, 1.0, 0, 10, -1) FROM uldp_tap_errors_data WHERE false$$, '22023',
    'tau must be a positive finite number, not -1', 'an invalid tau is refused on empty input');
-- the largest allowed number of bins, 2^62, is accepted
SELECT is(pg_temp.verdict('range', pg_temp.outcome(
        $$SELECT user_dp_range(v, u, 1.0, 0, 4611686018427387904, 0.5) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        0, 4611686018427387904), 'ok', 'exactly 2^62 bins of width 2 tau are accepted');
SELECT is(pg_temp.verdict('mean', pg_temp.outcome(
        $$SELECT user_dp_mean(v, u, 1.0, -1e300, 1e300, 1e282) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        -1e300, 1e300), 'ok', 'the widest bounds with a small tau are accepted');

-- ---------------------------------------------------------------------------
-- parameters must be known before any row is read: no columns, volatile functions or subqueries
SELECT throws_ok($$SELECT user_dp_mean(v, u, u + 1.0) FROM uldp_tap_errors_data WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_mean must be known before any row is read', 'epsilon from a column');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1.0, 0, u + 1000) FROM uldp_tap_errors_data WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_mean must be known before any row is read', 'upper bound from a column');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1.0, -u, 1000, 10) FROM uldp_tap_errors_data WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_mean must be known before any row is read', 'lower bound from a column');
SELECT throws_ok($$SELECT user_dp_range(v, u, 1.0, 0, 1000, u + 1) FROM uldp_tap_errors_data WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_range must be known before any row is read', 'tau from a column');
SELECT throws_ok($$SELECT user_dp_range(v, u, 0.5 + random()) FROM uldp_tap_errors_data WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_range must be known before any row is read', 'epsilon from a volatile function');
SELECT throws_ok($$SELECT user_dp_range(v, u, 1.0, 0, 1000 + random()) FROM uldp_tap_errors_data WHERE false$$,
    '22023', 'the privacy parameters of user_dp_range must be known before any row is read',
    'a bound from a volatile function, on empty input');
SELECT throws_ok($$SELECT user_dp_mean(v, u, (SELECT d.u + 1.0)) FROM uldp_tap_errors_data d WHERE ds = 'null and NaN values'$$,
    '22023', 'the privacy parameters of user_dp_mean must be known before any row is read', 'epsilon from a correlated subquery');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1.0) FILTER (WHERE u > 3) OVER () FROM uldp_tap_errors_data WHERE ds = 'one user, one row'$$,
    '0A000', 'uldp aggregates cannot be used as window functions', 'user_dp_mean/3 as a window function');
SELECT throws_ok($$SELECT user_dp_mean(v, u, 1.0, 0, 10, 1) OVER (PARTITION BY u) FROM uldp_tap_errors_data WHERE ds = 'one user, one row'$$,
    '0A000', 'uldp aggregates cannot be used as window functions', 'user_dp_mean/6 as a window function');
SELECT throws_ok($$SELECT user_dp_range(v, u, 1.0) OVER (ORDER BY u) FROM uldp_tap_errors_data WHERE ds = 'one user, one row'$$,
    '0A000', 'uldp aggregates cannot be used as window functions', 'user_dp_range/3 as a window function');
SELECT throws_ok($$SELECT user_dp_range(v, u, 1.0, 0, 10) OVER () FROM uldp_tap_errors_data WHERE ds = 'one user, one row'$$,
    '0A000', 'uldp aggregates cannot be used as window functions', 'user_dp_range/5 as a window function');
-- constant expressions, query parameters and stable functions are known before any row is read
SELECT is(pg_temp.verdict('mean', pg_temp.outcome(
        $$SELECT user_dp_mean(v, u, 0.5 + 0.5, 0, 10 * 100) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        0, 1000), 'ok', 'constant expressions are accepted');
SELECT is(pg_temp.verdict('range', pg_temp.outcome(
        $$SELECT user_dp_range(v, u, current_setting('server_version_num')::float8 / 150000, 0, 1000) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$),
        0, 1000), 'ok', 'stable functions are accepted');
SELECT throws_ok($$SELECT user_dp_mean(v, u, (SELECT 1.0), 0, 1000) FROM uldp_tap_errors_data WHERE ds = '100000 users'$$,
    '22023', 'the privacy parameters of user_dp_mean must be known before any row is read',
    'an uncorrelated subquery is refused: its value is known only once it has read rows');
PREPARE release(float8, float8) AS
    SELECT pg_temp.verdict('mean', user_dp_mean(v, u, $1, 0, $2)::text, 0, $2) FROM uldp_tap_errors_data WHERE ds = '100000 users';
SELECT is(pg_temp.outcome('EXECUTE release(1.0, 1000)'), 'ok', 'query parameters are accepted');
SELECT is(pg_temp.outcome('EXECUTE release(0, 1000)'),
    'ERROR 22023: epsilon must be a finite number between 1e-06 and 1e+06, not 0', 'and validated');
DEALLOCATE release;

-- refused parameters were never charged: the ledger holds only the accepted releases so far
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function LIKE 'user_dp_%'), 8::bigint,
    'no refused call was charged (8 accepted releases so far)');

-- ---------------------------------------------------------------------------
-- private data never raises: each data set x each aggregate gives a finite, non-NULL answer
-- within the bounds (the range: lower <= upper, within the bounds)
SELECT is(pg_temp.verdict(a.kind, pg_temp.outcome(
              format('SELECT ' || a.call || ' FROM uldp_tap_errors_data WHERE ds = %L', 'v', 'u', '1.0', s.ds)),
              a.lo, a.hi),
          'ok', format('%s on %s', a.name, s.ds))
FROM uldp_tap_errors_sets s, aggs a ORDER BY s.ds, a.name;
-- other user id types: text, uuid, numeric, NULL ids
SELECT is(pg_temp.verdict(a.kind, pg_temp.outcome(
              format('SELECT ' || a.call || ' FROM uldp_tap_errors_data WHERE ds = %L', 'v', i.expr, '1.0', s.ds)),
              a.lo, a.hi),
          'ok', format('%s on %s with %s user ids', a.name, s.ds, i.label))
FROM (VALUES ('null and NaN values'), ('skewed: one user with 100000 rows')) s(ds), aggs a,
     (VALUES ('u::text', 'text'), ('md5(u::text)::uuid', 'uuid'), ('u::numeric', 'numeric'),
             ('CASE WHEN u % 2 = 0 THEN u END', 'half NULL')) i(expr, label)
ORDER BY s.ds, a.name, i.label;
-- the extreme epsilons
SELECT is(pg_temp.verdict(a.kind, pg_temp.outcome(
              format('SELECT ' || a.call || ' FROM uldp_tap_errors_data WHERE ds = %L', 'v', 'u', e.eps, 'null and NaN values')),
              a.lo, a.hi),
          'ok', format('%s with epsilon %s', a.name, e.eps))
FROM aggs a, (VALUES ('1e-6'), ('1e6')) e(eps) ORDER BY e.eps, a.name;
-- parallel plans (partial states serialised by workers, combined by the leader). Any parallel
-- unsafe function in the statement (pgTAP's, ours) would disable parallelism, so the releases
-- run in a statement of their own and are checked afterwards.
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP plan := plan || line || E'\n'; END LOOP;
    RETURN plan;
END $$;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT ok(pg_temp.plan_of($$SELECT user_dp_mean(v, u::text, 1.0) FROM uldp_tap_errors_data
                            WHERE ds = 'skewed: one user with 100000 rows'$$) ~ 'Gather.*Partial Aggregate',
    'the parallel releases below use a Gather over a Partial Aggregate');
SELECT user_dp_mean(v, u::text, 1.0) AS p_mean3, user_dp_mean(v, u::text, 1.0, -1000, 1000) AS p_mean5,
       user_dp_mean(v, u::text, 1.0, -1000, 1000, 50) AS p_mean6, user_dp_range(v, u::text, 1.0) AS p_range3,
       user_dp_range(v, u::text, 1.0, -1000, 1000) AS p_range5, user_dp_range(v, u::text, 1.0, -1000, 1000, 50) AS p_range6
FROM uldp_tap_errors_data WHERE ds = 'skewed: one user with 100000 rows' \gset
SELECT user_dp_mean(v, u, 1.0) AS e_mean3, user_dp_mean(v, u, 1.0, -1000, 1000) AS e_mean5,
       user_dp_mean(v, u, 1.0, -1000, 1000, 50) AS e_mean6, user_dp_range(v, u, 1.0) AS e_range3,
       user_dp_range(v, u, 1.0, -1000, 1000) AS e_range5, user_dp_range(v, u, 1.0, -1000, 1000, 50) AS e_range6
FROM uldp_tap_errors_data WHERE ds = 'empty' \gset
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT is(pg_temp.verdict(kind, res, lo, hi), 'ok', format('%s on %s in a parallel plan', name, ds))
FROM (VALUES ('user_dp_mean/3', 'mean', :'p_mean3', -1e300, 1e300), ('user_dp_mean/5', 'mean', :'p_mean5', -1000, 1000),
             ('user_dp_mean/6', 'mean', :'p_mean6', -1000, 1000), ('user_dp_range/3', 'range', :'p_range3', -1e300, 1e300),
             ('user_dp_range/5', 'range', :'p_range5', -1000, 1000), ('user_dp_range/6', 'range', :'p_range6', -1000, 1000)
     ) r(name, kind, res, lo, hi), (VALUES ('skewed data')) d(ds)
UNION ALL
SELECT is(pg_temp.verdict(kind, res, lo, hi), 'ok', format('%s on %s in a parallel plan', name, ds))
FROM (VALUES ('user_dp_mean/3', 'mean', :'e_mean3', -1e300, 1e300), ('user_dp_mean/5', 'mean', :'e_mean5', -1000, 1000),
             ('user_dp_mean/6', 'mean', :'e_mean6', -1000, 1000), ('user_dp_range/3', 'range', :'e_range3', -1e300, 1e300),
             ('user_dp_range/5', 'range', :'e_range5', -1000, 1000), ('user_dp_range/6', 'range', :'e_range6', -1000, 1000)
     ) r(name, kind, res, lo, hi), (VALUES ('empty input')) d(ds);

SELECT * FROM finish();

\ir ../lib/cleanup.sql

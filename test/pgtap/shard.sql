-- test/pgtap/shard.sql -- uldp_shard, the shard-side extension (doc/scale-out.md): its objects and
-- privileges, what its state aggregate user_rows keeps per user, user_sums per partition and
-- user_values per partition's user, serially and in parallel, and partition_member's routing of
-- user ids.
-- Releases nothing, so everything runs in one transaction that is rolled back.
\set prefix uldp_tap_shard_
\ir ../lib/prelude.sql

BEGIN;
CREATE EXTENSION uldp_shard;
CREATE ROLE uldp_tap_shard_nobody NOLOGIN;
CREATE FUNCTION uldp_tap_shard_explain(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        RETURN NEXT line;
    END LOOP;
END
$$;

SELECT plan(70);

-- ---------------------------------------------------------------------------
-- objects and privileges
SELECT has_schema('uldp_shard', 'uldp_shard installs schema uldp_shard');
SELECT is_aggregate('uldp_shard', 'user_rows',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'bigint'],
    'user_rows(value float8, user_id, lower, upper, max_rows) is an aggregate');
SELECT is_aggregate('uldp_shard', 'user_rows',
    ARRAY['boolean', 'anyelement', 'double precision', 'double precision', 'bigint'],
    'user_rows(value boolean, user_id, lower, upper, max_rows) is an aggregate');
SELECT function_returns('uldp_shard', 'user_rows',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'bigint'], 'bytea',
    'user_rows returns the state as bytea');
SELECT ok(NOT has_schema_privilege('uldp_tap_shard_nobody', 'uldp_shard', 'USAGE'),
    'PUBLIC has no USAGE on schema uldp_shard');
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'uldp_shard'
             AND has_function_privilege('uldp_tap_shard_nobody', p.oid, 'EXECUTE')), 0::bigint,
    'PUBLIC may execute no function of uldp_shard');
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'uldp_shard' AND p.proparallel <> 's'), 0::bigint,
    'every function of uldp_shard is parallel safe');

-- ---------------------------------------------------------------------------
-- what a state keeps: per user, the row count and the sum of rows clamped to the bounds
CREATE TABLE uldp_tap_shard_rows (user_id int, v float8, flag boolean);
INSERT INTO uldp_tap_shard_rows VALUES
    (1, 2, true), (1, 4, false), (2, 100, true), (2, -100, true), (3, 'NaN', true),
    (3, 'Infinity', NULL), (NULL, 5, true), (4, NULL, true), (5, '-Infinity', false);

SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, -10, 10, NULL))).* FROM uldp_tap_shard_rows$$,
    $$VALUES (4::bigint, 6::numeric, 2 + 4 + 10 - 10 + 10 - 10::float8)$$,
    'rows are clamped to the bounds; NULL and NaN values and NULL ids are skipped; infinities clamp');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(flag, user_id, 0, 1, NULL))).* FROM uldp_tap_shard_rows$$,
    $$VALUES (5::bigint, 7::numeric, 5::float8)$$,
    'boolean values count as 1 and 0');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id::text, -10, 10, NULL))).* FROM uldp_tap_shard_rows$$,
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, -10, 10, NULL))).* FROM uldp_tap_shard_rows$$,
    'text user ids key the same users as their integers');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, 0, 1, NULL))).* FROM uldp_tap_shard_rows WHERE false$$,
    $$VALUES (0::bigint, 0::numeric, 0::float8)$$,
    'empty input gives a state with no users, not NULL');
SELECT is((SELECT length(uldp_shard.user_rows(v, user_id, 0, 1, NULL)) FROM uldp_tap_shard_rows WHERE false), 24,
    'an empty state is its header alone (24 bytes)');
SELECT is((SELECT length(uldp_shard.user_rows(v, user_id, -10, 10, NULL)) FROM uldp_tap_shard_rows), 24 + 4 * 20,
    'a state takes 20 bytes per user');
SELECT is((SELECT length(uldp_shard.user_rows(v, user_id::int8, -10, 10, NULL)) FROM uldp_tap_shard_rows WHERE user_id = 1),
          (SELECT length(uldp_shard.user_rows(v, user_id::text, -10, 10, NULL)) FROM uldp_tap_shard_rows WHERE user_id = 1),
    'whatever the id type, a user takes 20 bytes');

-- what a partition's sums hold: its users and the fixed-point sum of their clipped values
SELECT is_aggregate('uldp_shard', 'user_sums',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'boolean', 'integer', 'integer', 'bigint'],
    'user_sums(value float8, user_id, lower, upper, average, modulus, remainder, max_rows) is an aggregate');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, -10, 10, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows$$,
    $$VALUES (4::bigint, NULL::numeric, 3 + 0 + 10 - 10::float8)$$,
    'user_sums, averages: each user''s mean of rows clamped to the bounds; NULL and NaN values and NULL ids skipped');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, -10, 10, false, 1, 0, NULL))).* FROM uldp_tap_shard_rows$$,
    $$VALUES (4::bigint, NULL::numeric, 6 + 0 + 10 - 10::float8)$$,
    'user_sums, totals: each user''s whole total, then clamped to the bounds');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(flag, user_id, 0, 1, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows$$,
    $$VALUES (5::bigint, NULL::numeric, 3.5::float8)$$,
    'user_sums of booleans: 1 and 0');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, 0, 1, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows WHERE false$$,
    $$VALUES (0::bigint, NULL::numeric, 0::float8)$$,
    'user_sums over no rows: no users, not NULL');
SELECT is((SELECT length(uldp_shard.user_sums(v, user_id, -10, 10, false, 1, 0, NULL)) FROM uldp_tap_shard_rows),
          (SELECT length(uldp_shard.user_sums(v, user_id, -10, 10, false, 1, 0, NULL)) FROM uldp_tap_shard_rows WHERE false),
    'a partition''s sums take the same bytes whatever its users');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id, 1, 0, true, 1, 0, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'uldp_shard.user_sums needs bounds lower <= upper', 'user_sums refuses bounds in the wrong order');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id, 0, v, true, 1, 0, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'the bounds, average and partition of uldp_shard.user_sums must be constants', 'user_sums refuses bounds read from rows');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id, 0, 1, true, 1, 0, 225) FROM uldp_tap_shard_rows WHERE v > 1e10$$,
    '54000', NULL, 'user_sums checks the row bound as user_rows does, whatever the rows');
-- what a partition's sorted values hold: its users' values, as user_sums clips them
SELECT is_aggregate('uldp_shard', 'user_values',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'boolean', 'integer', 'integer', 'bigint'],
    'user_values(value float8, user_id, lower, upper, average, modulus, remainder, max_rows) is an aggregate');
SELECT is_aggregate('uldp_shard', 'user_values',
    ARRAY['boolean', 'anyelement', 'double precision', 'double precision', 'boolean', 'integer', 'integer', 'bigint'],
    'user_values(value boolean, ...) is an aggregate');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_values(v, user_id, -10, 10, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows$$,
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, -10, 10, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows$$,
    'user_values, averages: the users and values user_sums adds up');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_values(v, user_id::text, -10, 10, false, 2, 1, NULL))).* FROM uldp_tap_shard_rows$$,
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id::text, -10, 10, false, 2, 1, NULL))).* FROM uldp_tap_shard_rows$$,
    'user_values, totals of text ids of one hash partition: those of user_sums');
SELECT is((SELECT length(uldp_shard.user_values(v, user_id, -10, 10, true, 1, 0, NULL)) FROM uldp_tap_shard_rows),
          40 + 4 * 8, 'a 40-byte header and 8 bytes a user');
SELECT is((SELECT substr(uldp_shard.user_values(v, user_id, -10, 10, false, 1, 0, NULL), 41) FROM uldp_tap_shard_rows),
          (SELECT string_agg((SELECT string_agg(substr(float8send(t), 9 - i, 1), ''::bytea ORDER BY i)
                              FROM generate_series(1, 8) i), ''::bytea ORDER BY t)
           FROM (SELECT least(greatest(sum(v), -10), 10) t FROM uldp_tap_shard_rows
                 WHERE v <> 'NaN' AND user_id IS NOT NULL GROUP BY user_id) u),
    'the values come sorted, in ascending order (little-endian doubles here)');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_values(v, user_id, 0, 1, true, 1, 0, NULL))).* FROM uldp_tap_shard_rows WHERE false$$,
    $$VALUES (0::bigint, NULL::numeric, 0::float8)$$,
    'user_values over no rows: no users, not NULL');
SELECT throws_ok($$SELECT uldp_shard.user_values(v, user_id, 0, v, true, 1, 0, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'the bounds, average and partition of uldp_shard.user_values must be constants', 'user_values refuses bounds read from rows');
SELECT throws_ok($$SELECT uldp_shard.user_values(v, user_id, 0, 1, true, 1, 0, 225) FROM uldp_tap_shard_rows WHERE v > 1e10$$,
    '54000', NULL, 'user_values checks the row bound as user_rows does, whatever the rows');
-- user_sums keeps the users of its hash partition: each id in one of them, as partition_member routes it
SELECT results_eq(
    $$SELECT 0, (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, -10, 10, true, 2, 0, NULL))).users
      FROM uldp_tap_shard_rows
      UNION ALL SELECT 1, (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, -10, 10, true, 2, 1, NULL))).users
      FROM uldp_tap_shard_rows$$,
    $$SELECT r, count(DISTINCT user_id) FROM generate_series(0, 1) r LEFT JOIN uldp_tap_shard_rows
        ON v <> 'NaN' AND uldp_shard.partition_member(user_id, 2, r) GROUP BY r ORDER BY r$$,
    'user_sums of integer ids (one hash per user) keeps its partition''s users');
SELECT results_eq(
    $$SELECT 0, (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id::text, -10, 10, false, 2, 0, NULL))).*
      FROM uldp_tap_shard_rows
      UNION ALL SELECT 1, (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id::text, -10, 10, false, 2, 1, NULL))).*
      FROM uldp_tap_shard_rows$$,
    $$SELECT r, count(t), NULL::numeric, coalesce(sum(least(greatest(t, -10), 10)), 0)
      FROM generate_series(0, 1) r LEFT JOIN
           (SELECT user_id, sum(least(greatest(v, -1e300), 1e300)) t FROM uldp_tap_shard_rows WHERE v <> 'NaN' AND user_id IS NOT NULL GROUP BY user_id) u
        ON uldp_shard.partition_member(user_id::text, 2, r)
      GROUP BY r ORDER BY r$$,
    'user_sums of text ids (one hash per row) keeps its partition''s users and their totals');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id, 0, 1, true, 2, 2, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'a hash partition needs 0 <= remainder < modulus', 'user_sums refuses a remainder beyond the modulus');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id::text, 0, 1, true, 0, 0, NULL) FROM uldp_tap_shard_rows WHERE false$$,
    '22023', 'a hash partition needs 0 <= remainder < modulus', 'and a modulus of 0 over no rows, whatever the ids');
-- partition_member: each id belongs to exactly one remainder
SELECT is((SELECT count(*) FROM generate_series(-2000, 2000) g
           WHERE (SELECT count(*) FROM generate_series(0, 6) r WHERE uldp_shard.partition_member(g, 7, r)) <> 1),
    0::bigint, 'partition_member puts each of 4001 ids in exactly one of 7 partitions');
SELECT is(uldp_shard.partition_member(NULL::bigint, 3, 0), NULL, 'partition_member of NULL is NULL (the row is skipped)');
SELECT throws_ok($$SELECT uldp_shard.partition_member(1, 3, 3)$$,
    '22023', 'a hash partition needs 0 <= remainder < modulus', 'partition_member refuses a remainder beyond the modulus');

-- what grouped releases read: for each group (here one per flag), its users with one value per
-- slot, read back on the coordinator as one row per user (uldp.pair_users, uldp.pair_values)
CREATE FUNCTION uldp_tap_shard_pairs(query text) RETURNS TABLE (g boolean, user_id bigint, v1 float8,
                                                               v2 float8, v3 float8, v4 float8)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT g, uldp.pair_users(p), uldp.pair_values(p, 1), uldp.pair_values(p, 2),
                                        uldp.pair_values(p, 3), uldp.pair_values(p, 4) FROM (%s) s(g, p)
                                 ORDER BY 1, 2', query);
END
$$;
SELECT results_eq(
    $$SELECT * FROM uldp_tap_shard_pairs($q$SELECT flag, uldp_shard.user_pairs(user_id, NULL,
        'mean', v, true, -10::float8, 10::float8, 'total', v, true, NULL::float8, NULL::float8,
        'mean', v, v > 3, -10::float8, 10::float8, 'any', true, v > 3, NULL::float8, NULL::float8)
        FROM uldp_tap_shard_rows GROUP BY flag$q$)$$,
    $$VALUES (false, 1::bigint, 4::float8, 4::float8, 4::float8, 1::float8),
             (false, 5, -10, -1e300, NULL, NULL),
             (true, 1, 2, 2, NULL, NULL), (true, 2, 0, 0, 10, 1), (true, 3, NULL, NULL, NULL, 1),
             (true, 4, NULL, NULL, NULL, NULL),
             (NULL, 3, 10, 1e300, 10, 1)$$,
    'user_pairs: per group each user, the mean of its clamped rows, their total (within +-1e300), and with a filter (NaN > 3 passes, as in SQL); NULL and NaN values and NULL ids skipped');
SELECT results_eq(
    $$SELECT * FROM uldp_tap_shard_pairs($q$SELECT v > 0, uldp_shard.user_pairs(user_id, NULL,
        'mean', flag, true, 0::float8, 1::float8, 'total', flag, flag, NULL::float8, NULL::float8,
        'total', flag, NOT flag, NULL::float8, NULL::float8, 'any', NULL::boolean, NULL::boolean, NULL::float8, NULL::float8)
        FROM uldp_tap_shard_rows WHERE user_id < 3 GROUP BY 1$q$)$$,
    $$VALUES (false, 2::bigint, 1::float8, 1::float8, NULL::float8, NULL::float8),
             (true, 1, 0.5, 1, 0, NULL), (true, 2, 1, 1, NULL, NULL)$$,
    'booleans count as 1 and 0; a user without rows that pass a filter (NULL counts as false) gets NULL');
SELECT results_eq(
    $$SELECT uldp.pair_users(uldp_shard.user_pairs(user_id, 226)) u FROM uldp_tap_shard_rows ORDER BY u$$,
    $$VALUES (1::bigint), (2), (3), (4), (5)$$,
    'without slots, user_pairs holds the users alone');
SELECT is((SELECT count(*) FROM (SELECT uldp.pair_users(uldp_shard.user_pairs(user_id::text, NULL))
                                 FROM uldp_tap_shard_rows) u), 5::bigint,
    'text ids are keyed by their hash: 5 users');
SELECT throws_ok($$SELECT uldp_shard.user_pairs(user_id, 225) FROM uldp_tap_shard_rows$$,
    '54000', NULL, 'user_pairs refuses a table that could hold more rows than max_rows');
SELECT throws_ok($$SELECT uldp_shard.user_pairs(user_id, NULL, 'mean', v, true, 1::float8, 0::float8) FROM uldp_tap_shard_rows$$,
    '22023', 'uldp_shard.user_pairs needs slots of five arguments: kind, value, filter, lower, upper',
    'user_pairs refuses a mean with bounds in the wrong order');
SELECT throws_ok($$SELECT uldp_shard.user_pairs(user_id, NULL, 'median', v, true, 0::float8, 1::float8) FROM uldp_tap_shard_rows$$,
    '22023', NULL, 'and a kind it does not know');
SELECT throws_ok($$SELECT uldp_shard.user_pairs(user_id, NULL, 'total', v::int, true, 0::float8) FROM uldp_tap_shard_rows$$,
    '22023', NULL, 'and a slot of four arguments');
SELECT throws_ok($$SELECT uldp.pair_users('\x00'::bytea)$$, 'XX001', NULL,
    'pair_users refuses a value that user_pairs did not write');
SELECT throws_ok($$SELECT uldp.pair_values(uldp_shard.user_pairs(user_id, NULL, 'total', v, true, NULL::float8, NULL::float8), 2)
                   FROM uldp_tap_shard_rows$$, '22023', 'slot 2 is not among the 1 of the group''s pairs',
    'pair_values refuses a slot the value does not have');
SELECT is((SELECT uldp_shard.partition_check(226) FROM uldp_tap_shard_rows WHERE ctid < '(0,0)'), 0::bigint,
    'partition_check: 0 for a table of one page within 226 rows');
SELECT throws_ok($$SELECT uldp_shard.partition_check(225) FROM uldp_tap_shard_rows WHERE ctid < '(0,0)'$$,
    '54000', NULL, 'partition_check refuses a table that could hold more rows, reading none');

-- ---------------------------------------------------------------------------
-- parallel: partial states from workers are combined into the same state
CREATE TABLE uldp_tap_shard_big AS
    SELECT (hashint4(i) & 2147483647) % 5000 AS user_id, (i % 97)::float8 AS v
    FROM generate_series(1, 200000) i;
ANALYZE uldp_tap_shard_big;
SET LOCAL max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE uldp_tap_shard_serial AS
    SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, 0, 50, NULL))).* FROM uldp_tap_shard_big;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT ok((SELECT bool_or(plan LIKE '%Partial Aggregate%') FROM
           (SELECT t AS plan FROM uldp_tap_shard_explain(
               'SELECT uldp_shard.user_rows(v, user_id, 0, 50, NULL) FROM uldp_tap_shard_big') t) s),
    'user_rows runs as a partial aggregate in parallel workers');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, 0, 50, NULL))).* FROM uldp_tap_shard_big$$,
    $$SELECT * FROM uldp_tap_shard_serial$$,
    'the parallel state has the same users, rows and sum as the serial one');
SELECT results_eq(
    $$SELECT * FROM uldp_tap_shard_serial$$,
    $$SELECT count(DISTINCT user_id), count(*)::numeric, sum(least(v, 50)) FROM uldp_tap_shard_big$$,
    'and they are the table''s users, rows and clamped sum');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, 0, 50, false, 1, 0, NULL))).* FROM uldp_tap_shard_big$$,
    $$SELECT count(*), NULL::numeric, sum(least(t, 50)) FROM (SELECT sum(v) t FROM uldp_tap_shard_big GROUP BY user_id) u$$,
    'user_sums in parallel: the users and the sum of their clamped totals');
-- the final step of a parallel aggregation sees the partial states as its arguments: the
-- constants (bounds, partition, row bound) come from the partial step's call
SELECT ok((SELECT bool_or(plan LIKE '%Partial%Aggregate%') FROM
           (SELECT t AS plan FROM uldp_tap_shard_explain(
               'SELECT uldp_shard.user_sums(v, user_id, 0, 50, true, 3, 1, NULL) FROM uldp_tap_shard_big WHERE v * 0 = 1') t) s),
    'user_sums over no rows runs as a partial aggregate in parallel workers too');
SELECT results_eq(
    $$SELECT (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, 0, 50, true, 3, 1, NULL))).* FROM uldp_tap_shard_big WHERE v * 0 = 1$$,
    $$VALUES (0::bigint, NULL::numeric, 0::float8)$$,
    'in parallel, user_sums over no rows gives no users');
SELECT throws_ok($$SELECT uldp_shard.user_sums(v, user_id, 0, 50, true, 3, 1, 10) FROM uldp_tap_shard_big WHERE v * 0 = 1$$,
    '54000', NULL, 'in parallel, over no rows, user_sums still checks its row bound');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, 0, 50, 10) FROM uldp_tap_shard_big WHERE v * 0 = 1$$,
    '54000', NULL, 'and so does user_rows');
SELECT results_eq(
    $$SELECT user_id % 3, (uldp_shard.state_summary(uldp_shard.user_sums(v, user_id, 0, 50, true, 1, 0, NULL))).users
      FROM uldp_tap_shard_big GROUP BY 1 ORDER BY 1$$,
    $$SELECT user_id % 3, count(DISTINCT user_id) FROM uldp_tap_shard_big GROUP BY 1 ORDER BY 1$$,
    'user_sums grouped, in parallel: each group''s users');
RESET max_parallel_workers_per_gather;

-- ---------------------------------------------------------------------------
-- errors: public arguments and call context only
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, 1, 0, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'uldp_shard.user_rows needs bounds lower <= upper', 'bounds in the wrong order are refused');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, NULL, 0, NULL) FROM uldp_tap_shard_rows$$,
    '22023', 'uldp_shard.user_rows needs bounds lower <= upper', 'a NULL bound is refused');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, 0, 1, NULL) OVER () FROM uldp_tap_shard_rows$$,
    '0A000', 'uldp_shard.user_rows runs only as an aggregate', 'user_rows is not a window function');

-- the row bound: checked against the tables' size on disk, whatever their rows
SELECT is((SELECT (uldp_shard.state_summary(uldp_shard.user_rows(v, user_id, -10, 10, 226))).users
           FROM uldp_tap_shard_rows), 4::bigint,
    'a table of one page is within a bound of 226 rows (the most a page can hold)');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, -10, 10, 225) FROM uldp_tap_shard_rows$$,
    '54000', NULL, 'a table of one page could hold more than 225 rows: refused');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, -10, 10, 225) FROM uldp_tap_shard_rows WHERE v > 1e10$$,
    '54000', NULL, 'refused the same when no row is read');
SELECT throws_ok($$SELECT uldp_shard.user_rows(x, 1, -10, 10, 1000) FROM generate_series(1, 3) x$$,
    '0A000', 'uldp_shard aggregates with a row bound read only tables', 'a bound over rows that are not a table''s is refused');
SELECT throws_ok($$SELECT uldp_shard.user_rows(v, user_id, -10, 10, user_id) FROM uldp_tap_shard_rows$$,
    '22023', 'max_rows of uldp_shard.user_rows must be a constant', 'a bound read from the rows is refused');
SELECT throws_ok($$SELECT uldp_shard.state_summary('\x0001'::bytea)$$,
    '22P03', 'invalid per-user state', 'a value that is not a state is refused');
SELECT throws_ok($$SELECT uldp_shard.state_summary(
                     overlay(uldp_shard.user_rows(v, user_id, 0, 1, NULL) placing '\x00'::bytea from 1)) FROM uldp_tap_shard_rows$$,
    '22P03', 'invalid per-user state', 'a state with another magic number (another byte order) is refused');

SELECT * FROM finish();
ROLLBACK;

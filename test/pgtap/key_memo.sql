-- test/pgtap/key_memo.sql -- the memo through which a grouped release computes a key of one
-- column once per distinct value of the column (src/keymemo.c): the rewritten key,
--     CASE WHEN uldp.key_memo_lookup(s, i, x) THEN uldp.key_memo_value(s, i, NULL::type)
--          ELSE uldp.key_memo_store(s, i, <key of x>) END,
-- equals the key on every row: keys passed by value and by reference, short and longer than
-- the memo holds, inputs passed by value and by reference (short and long), NULL inputs and
-- NULL keys, few distinct inputs (found in the memo) and many
-- (evicted, then the memo turns itself off), two memos in one row; the calls made by hand in
-- the wrong order or with the wrong type return NULL or their argument, never another value;
-- and the grouped rewrite uses the memo for such keys only.
\set prefix uldp_tap_key_memo_
\ir ../lib/prelude.sql

BEGIN;
SELECT plan(14);

-- 60000 rows in a pseudorandom order: a date among 700 days (the memo holds them all), a date
-- among 6000 (more than it holds: evictions, then too few hits), an integer among 40 with NULLs,
-- amounts (numeric, passed by reference) among 500, and text, some longer than the memo looks up
CREATE TEMP TABLE rows_ AS
SELECT i, date '2020-01-01' + (hashint4(i) & 2147483647) % 700 AS few_days,
       date '2000-01-01' + (hashint4(i + 1) & 2147483647) % 6000 AS many_days,
       NULLIF((hashint4(i + 2) & 2147483647) % 41, 40) AS n,
       ((hashint4(i + 3) & 2147483647) % 500 / 4.0)::numeric AS amount,
       CASE WHEN i % 5 = 0 THEN repeat('Country ', 5) ELSE 'Country ' END || (hashint4(i + 4) & 2147483647) % 60 AS country
FROM generate_series(1, 60000) i;

SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, few_days)
                      THEN uldp.key_memo_value(1, 0, NULL::timestamptz)
                      ELSE uldp.key_memo_store(1, 0, date_trunc('month', few_days)) END
                 IS DISTINCT FROM date_trunc('month', few_days)), 0::bigint,
    'a key passed by value (date_trunc of a date) equals the key on every row, over 700 distinct inputs');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, many_days)
                      THEN uldp.key_memo_value(1, 0, NULL::timestamptz)
                      ELSE uldp.key_memo_store(1, 0, date_trunc('month', many_days)) END
                 IS DISTINCT FROM date_trunc('month', many_days)), 0::bigint,
    'and over 6000 distinct inputs, more than the memo holds');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, few_days)
                      THEN uldp.key_memo_value(1, 0, NULL::numeric)
                      ELSE uldp.key_memo_store(1, 0, extract(week FROM few_days)) END
                 IS DISTINCT FROM extract(week FROM few_days)), 0::bigint,
    'a key passed by reference (extract, a numeric) equals the key on every row');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, n)
                      THEN uldp.key_memo_value(1, 0, NULL::text)
                      ELSE uldp.key_memo_store(1, 0, CASE WHEN n < 10 THEN 'small' WHEN n < 30 THEN 'medium'
                                                           WHEN n < 35 THEN NULL ELSE 'large' END) END
                 IS DISTINCT FROM CASE WHEN n < 10 THEN 'small' WHEN n < 30 THEN 'medium'
                                       WHEN n < 35 THEN NULL ELSE 'large' END), 0::bigint,
    'a CASE bucket (text) of an integer with NULL inputs and NULL keys equals the key on every row');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, n)
                      THEN uldp.key_memo_value(1, 0, NULL::text)
                      ELSE uldp.key_memo_store(1, 0, repeat('bucket ', 8) || n) END
                 IS DISTINCT FROM repeat('bucket ', 8) || n), 0::bigint,
    'a key longer than the memo holds equals the key on every row (it is computed every time)');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, amount)
                      THEN uldp.key_memo_value(1, 0, NULL::text)
                      ELSE uldp.key_memo_store(1, 0, CASE WHEN amount < 10 THEN 'small' WHEN amount < 100.25 THEN 'medium'
                                                           ELSE 'large ' || floor(amount / 10) END) END
                 IS DISTINCT FROM CASE WHEN amount < 10 THEN 'small' WHEN amount < 100.25 THEN 'medium'
                                       ELSE 'large ' || floor(amount / 10) END), 0::bigint,
    'a CASE bucket of a numeric (an input passed by reference, looked up by its bytes) equals the key on every row');
SELECT is((SELECT count(*) FROM rows_
           WHERE CASE WHEN uldp.key_memo_lookup(1, 0, country)
                      THEN uldp.key_memo_value(1, 0, NULL::text)
                      ELSE uldp.key_memo_store(1, 0, lower(right(country, 2))) END
                 IS DISTINCT FROM lower(right(country, 2))), 0::bigint,
    'a key of a text column, with inputs longer than the memo looks up (computed every time), equals the key on every row');
SELECT is((SELECT count(*) FROM rows_
           WHERE (CASE WHEN uldp.key_memo_lookup(1, 0, few_days)
                       THEN uldp.key_memo_value(1, 0, NULL::timestamptz)
                       ELSE uldp.key_memo_store(1, 0, date_trunc('month', few_days)) END,
                  CASE WHEN uldp.key_memo_lookup(1, 1, n)
                       THEN uldp.key_memo_value(1, 1, NULL::int)
                       ELSE uldp.key_memo_store(1, 1, n / 10) END)
                 IS DISTINCT FROM (date_trunc('month', few_days), n / 10)), 0::bigint,
    'two keys of one row, each through its own memo, equal the keys on every row');

-- by hand, out of order: a memo's value is returned only right after a lookup that found it,
-- and only as the type it was stored as; a store without a lookup that missed stores nothing
SELECT is((SELECT array_agg(concat_ws(' ', uldp.key_memo_lookup(7, 0, 1), uldp.key_memo_store(7, 0, i),
                                      coalesce(uldp.key_memo_value(7, 0, NULL::text), '-'),
                                      coalesce(uldp.key_memo_value(8, 0, NULL::int)::text, '-'),
                                      coalesce(uldp.key_memo_value(7, 0, NULL::int)::text, '-'))
                            ORDER BY i)
           FROM generate_series(1, 3) i),
    ARRAY['f 1 - - -', 't 2 - - 1', 't 3 - - 1'],
    'a value is read only after a lookup that found it, by the memo''s slot and position, as the type it was stored as');
SELECT ok(uldp.key_memo_value(9, 0, NULL::int) IS NULL AND uldp.key_memo_value(NULL, NULL, 1) IS NULL
          AND uldp.key_memo_store(NULL, NULL, 5) = 5 AND uldp.key_memo_lookup(NULL, NULL, 5) = false
          AND uldp.key_memo_lookup(1, 0, 'a'::cstring) = false,
    'without a lookup, or with NULL arguments, or a C string input (never looked up), nothing is found or stored');

-- the grouped rewrite: a key computed on one column goes through the memo, in both readings;
-- a column as it is, or a key over two columns, does not
CREATE TEMP TABLE plans (line text);
CREATE FUNCTION pg_temp.memo_calls(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    line text;
    calls bigint := 0;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
        calls := calls + (length(line) - length(replace(line, 'uldp.key_memo_lookup', ''))) / length('uldp.key_memo_lookup');
    END LOOP;
    RETURN calls;
END $$;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT cmp_ok(pg_temp.memo_calls($$SELECT date_trunc('month', few_days), user_dp_count(i, 1.0) FROM rows_ GROUP BY 1$$),
    '>=', 2::bigint,
    'a grouped release by date_trunc of a date computes the key through the memo in both readings');
SELECT is(pg_temp.memo_calls($$SELECT few_days, user_dp_count(i, 1.0) FROM rows_ GROUP BY 1$$), 0::bigint,
    'a grouped release by a column as it is reads it without a memo');
SELECT cmp_ok(pg_temp.memo_calls($$SELECT CASE WHEN amount < 50 THEN 'small' ELSE 'large' END, user_dp_count(i, 1.0) FROM rows_ GROUP BY 1$$),
    '>=', 2::bigint,
    'and so does one by a CASE bucket of a numeric column');
SELECT is(pg_temp.memo_calls($$SELECT date_trunc('month', few_days + n), user_dp_count(i, 1.0) FROM rows_ GROUP BY 1$$),
    0::bigint,
    'a grouped release by a key of two columns computes it on every row');

SELECT * FROM finish();
ROLLBACK;

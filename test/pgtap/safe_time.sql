-- test/pgtap/safe_time.sql -- the error-free date and time functions that queries on protected
-- tables are rewritten to: for every operator, cast and function they replace, over a grid of
-- edge values (both infinities, the first and last timestamps and dates, the largest intervals,
-- a leap day, daylight saving changes) in five time zones, the result is the built-in's where
-- the built-in succeeds, and NULL where it fails; never an error.  The exceptions are the
-- results PostgreSQL 15 gets wrong by wrapping 64-bit microseconds around (timestamps 290,000
-- years apart, timestamp minus the most negative interval): NULL there too.  And the functions
-- the gate keeps as they are (extract, date_part, date_trunc of intervals, the date of a
-- timestamp) never fail on the grid for a field that succeeds on 2000-01-01 and both infinities,
-- which is what the gate checks.
\set prefix uldp_tap_safe_time_
\ir ../lib/prelude.sql

CREATE TEMP TABLE stamps (v text);
INSERT INTO stamps VALUES
    ('-infinity'), ('4714-11-24 00:00:00 BC'), ('4714-11-30 23:59:59.999999 BC'), ('4713-01-01 00:00 BC'),
    ('3714-06-15 12:00 BC'), ('0001-12-31 23:00 BC'), ('1970-01-01'), ('2000-02-29 12:34:56.789'),
    ('2024-03-10 02:30'), ('2026-10-25 01:30'), ('9999-12-31 23:59:59'), ('294276-11-30 10:00'),
    ('294276-12-31 23:59:59.999999'), ('infinity');
-- the same instants as timestamptz, in UTC (the infinities as they are)
CREATE TEMP TABLE stamps_tz AS
SELECT v || CASE WHEN v LIKE '%infinity' THEN '' WHEN v LIKE '% BC' THEN '' ELSE '+00' END AS v FROM stamps;
UPDATE stamps_tz SET v = replace(v, ' BC', '+00 BC') WHERE v LIKE '% BC';
CREATE TEMP TABLE dates (v text);
INSERT INTO dates VALUES
    ('-infinity'), ('4714-11-24 BC'), ('4714-12-01 BC'), ('2000-02-29'), ('2026-01-31'), ('294276-12-31'),
    ('294277-01-01'), ('5874897-12-31'), ('infinity');
-- intervals, as expressions: the extremes of each field (the most negative time has no literal)
CREATE TEMP TABLE spans (v text);
INSERT INTO spans SELECT format('interval %L', x) FROM unnest(ARRAY[
    '0', '1 month', '-1 month', '1 day', '-1 day', '1 mon 1 day 1 hour', '1 year', '-1 year', '1000 years',
    '300000 years', '-300000 years', '178956970 years 7 months', '-178956970 years -8 months',
    '2147483647 days', '-2147483648 days', '2562047788:00:54.775807', '-2562047788:00:54.775807',
    '106751991 days', '12 hours', '-12 hours', '29 days 23:00', '-1 mon 40 days -1000 hours']) x;
INSERT INTO spans VALUES ('(interval ''-2562047788:00:54.775807'' - interval ''1 microsecond'')');
CREATE TEMP TABLE days (v text);
INSERT INTO days VALUES ('0'), ('1'), ('-1'), ('1000000'), ('-1000000'), ('2147483647'), ('-2147483648');
CREATE TEMP TABLE fields (v text);
INSERT INTO fields VALUES
    ('microseconds'), ('milliseconds'), ('second'), ('minute'), ('hour'), ('day'), ('week'), ('month'),
    ('quarter'), ('year'), ('decade'), ('century'), ('millennium'), ('isoyear'), ('epoch'), ('julian'),
    ('dow'), ('isodow'), ('doy'), ('timezone'), ('timezone_hour');
CREATE TEMP TABLE zones (v text);
INSERT INTO zones VALUES ('UTC'), ('America/New_York'), ('Pacific/Kiritimati'), ('Etc/GMT+12'), ('Australia/Lord_Howe');

-- an expression's value as text, 'NULL', or 'ERROR' if it raises one
CREATE FUNCTION pg_temp.eval(expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    EXECUTE 'SELECT (' || expr || ')::text' INTO r;
    RETURN coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
    RETURN 'ERROR';
END
$$;

-- zone: the session's time zone for the case (NULL: UTC); wraps: PostgreSQL 15 returns a
-- wrong value there, without an error
CREATE TEMP TABLE cases (kind text, zone text, builtin text, safe text, wraps boolean DEFAULT false);
INSERT INTO cases (kind, builtin, safe)
SELECT 'timestamp + interval', format('%L::timestamp + %s', a.v, b.v), format('uldp._safe_time_add(%L::timestamp, %s)', a.v, b.v)
FROM stamps a, spans b
UNION ALL
SELECT 'interval + timestamp', format('%s + %L::timestamp', b.v, a.v), format('uldp._safe_time_add(%L::timestamp, %s)', a.v, b.v)
FROM stamps a, spans b
UNION ALL
SELECT 'timestamp - interval', format('%L::timestamp - %s', a.v, b.v), format('uldp._safe_time_sub(%L::timestamp, %s)', a.v, b.v)
FROM stamps a, spans b
UNION ALL
SELECT 'date + interval', format('%L::date + %s', a.v, b.v), format('uldp._safe_time_add(%L::date, %s)', a.v, b.v)
FROM dates a, spans b
UNION ALL
SELECT 'interval + date', format('%s + %L::date', b.v, a.v), format('uldp._safe_time_add(%L::date, %s)', a.v, b.v)
FROM dates a, spans b
UNION ALL
SELECT 'date - interval', format('%L::date - %s', a.v, b.v), format('uldp._safe_time_sub(%L::date, %s)', a.v, b.v)
FROM dates a, spans b
UNION ALL
SELECT 'date + integer', format('%L::date + (%s)', a.v, b.v), format('uldp._safe_time_add(%L::date, %s)', a.v, b.v)
FROM dates a, days b
UNION ALL
SELECT 'integer + date', format('(%s) + %L::date', b.v, a.v), format('uldp._safe_time_add(%L::date, %s)', a.v, b.v)
FROM dates a, days b
UNION ALL
SELECT 'date - integer', format('%L::date - (%s)', a.v, b.v), format('uldp._safe_time_sub(%L::date, %s)', a.v, b.v)
FROM dates a, days b
UNION ALL
SELECT 'date - date', format('%L::date - %L::date', a.v, b.v), format('uldp._safe_time_sub(%L::date, %L::date)', a.v, b.v)
FROM dates a, dates b
UNION ALL
SELECT 'interval + interval', format('%s + %s', a.v, b.v), format('uldp._safe_time_add(%s, %s)', a.v, b.v)
FROM spans a, spans b
UNION ALL
SELECT 'interval - interval', format('%s - %s', a.v, b.v), format('uldp._safe_time_sub(%s, %s)', a.v, b.v)
FROM spans a, spans b
UNION ALL
SELECT '- interval', format('- %s', a.v), format('uldp._safe_time_neg(%s)', a.v) FROM spans a
UNION ALL
SELECT 'date_trunc(timestamp)', format('date_trunc(%L, %L::timestamp)', f.v, a.v),
       format('uldp._safe_date_trunc(%L, %L::timestamp)', f.v, a.v)
FROM stamps a, fields f
UNION ALL
SELECT 'date_part(date)', format('date_part(%L, %L::date)', f.v, a.v), format('uldp._safe_date_part(%L, %L::date)', f.v, a.v)
FROM dates a, fields f
UNION ALL
SELECT 'age', format('age(%L::timestamp, %L::timestamp)', a.v, b.v), format('uldp._safe_age(%L::timestamp, %L::timestamp)', a.v, b.v)
FROM stamps a, stamps b
UNION ALL
SELECT 'age of today', format('age(%L::timestamp)', a.v), format('uldp._safe_age(%L::timestamp)', a.v) FROM stamps a
UNION ALL
SELECT 'date::timestamp', format('%L::date::timestamp', a.v), format('uldp._safe_cast_timestamp(%L::date)', a.v) FROM dates a;
-- a timestamp's field names that do not fail on 2000-01-01 (the gate checks this, and infinities)
DELETE FROM cases WHERE kind = 'date_trunc(timestamp)'
    AND pg_temp.eval(replace(builtin, split_part(builtin, ', ', 2), '''2000-01-01''::timestamp)')) = 'ERROR';
DELETE FROM cases WHERE kind = 'date_part(date)'
    AND pg_temp.eval(replace(builtin, split_part(builtin, ', ', 2), '''2000-01-01''::date)')) = 'ERROR';
-- in the session's time zone
INSERT INTO cases (kind, zone, builtin, safe)
SELECT 'timestamptz + interval', z.v, format('%L::timestamptz + %s', a.v, b.v), format('uldp._safe_time_add(%L::timestamptz, %s)', a.v, b.v)
FROM stamps_tz a, spans b, zones z
UNION ALL
SELECT 'interval + timestamptz', z.v, format('%s + %L::timestamptz', b.v, a.v), format('uldp._safe_time_add(%L::timestamptz, %s)', a.v, b.v)
FROM stamps_tz a, spans b, zones z
UNION ALL
SELECT 'timestamptz - interval', z.v, format('%L::timestamptz - %s', a.v, b.v), format('uldp._safe_time_sub(%L::timestamptz, %s)', a.v, b.v)
FROM stamps_tz a, spans b, zones z
UNION ALL
SELECT 'date_trunc(timestamptz)', z.v, format('date_trunc(%L, %L::timestamptz)', f.v, a.v),
       format('uldp._safe_date_trunc(%L, %L::timestamptz)', f.v, a.v)
FROM stamps_tz a, fields f, zones z
WHERE pg_temp.eval(format('date_trunc(%L, timestamptz ''2000-01-01'')', f.v)) <> 'ERROR'
UNION ALL
SELECT 'age(timestamptz)', z.v, format('age(%L::timestamptz, %L::timestamptz)', a.v, b.v),
       format('uldp._safe_age(%L::timestamptz, %L::timestamptz)', a.v, b.v)
FROM stamps_tz a, stamps_tz b, zones z
UNION ALL
SELECT 'age of today(timestamptz)', z.v, format('age(%L::timestamptz)', a.v), format('uldp._safe_age(%L::timestamptz)', a.v)
FROM stamps_tz a, zones z
UNION ALL
SELECT 'date::timestamptz', z.v, format('%L::date::timestamptz', a.v), format('uldp._safe_cast_timestamptz(%L::date)', a.v)
FROM dates a, zones z
UNION ALL
SELECT 'timestamp::timestamptz', z.v, format('%L::timestamp::timestamptz', a.v), format('uldp._safe_cast_timestamptz(%L::timestamp)', a.v)
FROM stamps a, zones z
UNION ALL
SELECT 'timestamptz::timestamp', z.v, format('%L::timestamptz::timestamp', a.v), format('uldp._safe_cast_timestamp(%L::timestamptz)', a.v)
FROM stamps_tz a, zones z
UNION ALL
SELECT 'timestamptz - timestamptz', z.v, format('%L::timestamptz - %L::timestamptz', a.v, b.v),
       format('uldp._safe_time_sub(%L::timestamptz, %L::timestamptz)', a.v, b.v)
FROM stamps_tz a, stamps_tz b, zones z WHERE z.v = 'UTC'
UNION ALL
SELECT 'timestamp - timestamp', NULL, format('%L::timestamp - %L::timestamp', a.v, b.v),
       format('uldp._safe_time_sub(%L::timestamp, %L::timestamp)', a.v, b.v)
FROM stamps a, stamps b;
-- PostgreSQL 15 wraps around: the microseconds between two finite timestamps beyond 2^63, and
-- the negation of the most negative time
UPDATE cases SET wraps = true
WHERE kind IN ('timestamp - timestamp', 'timestamptz - timestamptz') AND builtin NOT LIKE '%infinity%'
  AND abs(pg_temp.eval('extract(epoch FROM ' || replace(builtin, ' - ', ') - extract(epoch FROM ') || ')')::numeric)
      * 1000000 > 9223372036854775807;
UPDATE cases SET wraps = true
WHERE kind IN ('timestamp - interval', 'timestamptz - interval', 'date - interval')
  AND builtin LIKE '%1 microsecond%' AND builtin NOT LIKE '%infinity%';

-- the gate's kept functions, for the field names its check lets through
CREATE TEMP TABLE kept (func text, type text, values_table text);
INSERT INTO kept VALUES
    ('extract', 'timestamp', 'stamps'), ('extract', 'timestamptz', 'stamps_tz'), ('extract', 'date', 'dates'),
    ('extract', 'interval', 'spans'), ('date_part', 'timestamp', 'stamps'), ('date_part', 'timestamptz', 'stamps_tz'),
    ('date_part', 'interval', 'spans'), ('date_trunc', 'interval', 'spans');
CREATE TEMP TABLE kept_fields AS
SELECT k.func, k.type, k.values_table, f.v AS field FROM kept k, fields f
WHERE pg_temp.eval(format('%s(%L, %s)', k.func, f.v,
                          CASE k.type WHEN 'interval' THEN 'interval ''0''' ELSE format('''2000-01-01''::%s', k.type) END)) <> 'ERROR'
  AND (k.type = 'interval' OR (pg_temp.eval(format('%s(%L, ''infinity''::%s)', k.func, f.v, k.type)) <> 'ERROR'
                               AND pg_temp.eval(format('%s(%L, ''-infinity''::%s)', k.func, f.v, k.type)) <> 'ERROR'));
INSERT INTO cases (kind, zone, builtin, safe)
SELECT 'kept ' || k.func, z.v, format('%s(%L, %s)', k.func, k.field, v.expr), format('%s(%L, %s)', k.func, k.field, v.expr)
FROM kept_fields k
JOIN (SELECT 'stamps' AS t, format('%L::timestamp', v) AS expr FROM stamps
      UNION ALL SELECT 'stamps_tz', format('%L::timestamptz', v) FROM stamps_tz
      UNION ALL SELECT 'dates', format('%L::date', v) FROM dates
      UNION ALL SELECT 'spans', v FROM spans) v ON v.t = k.values_table
CROSS JOIN zones z
UNION ALL
SELECT 'kept date', z.v, format('%L::timestamptz::date', a.v), format('%L::timestamptz::date', a.v)
FROM stamps_tz a, zones z
UNION ALL
SELECT 'kept date', NULL, format('%L::timestamp::date', a.v), format('%L::timestamp::date', a.v) FROM stamps a;

CREATE TEMP TABLE outcomes (kind text, zone text, builtin text, wraps boolean, b text, s text);
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT * FROM cases LOOP
        PERFORM set_config('timezone', coalesce(c.zone, 'UTC'), true);
        INSERT INTO outcomes VALUES (c.kind, c.zone, c.builtin, c.wraps, pg_temp.eval(c.builtin), pg_temp.eval(c.safe));
    END LOOP;
END
$$;

SELECT plan(9);

SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind NOT LIKE 'kept%'), '>', 10000::bigint,
    'over 10000 cases of replaced operators, casts and functions');
SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind NOT LIKE 'kept%' AND b = 'ERROR'), '>', 3000::bigint,
    'over 3000 of them raise an error with the built-in');
SELECT is((SELECT count(*) FROM outcomes WHERE kind NOT LIKE 'kept%' AND NOT wraps AND b <> 'ERROR' AND b IS DISTINCT FROM s),
    0::bigint, 'where the built-in succeeds (and does not wrap around), the safe version gives the same result');
SELECT is((SELECT count(*) FROM outcomes WHERE kind NOT LIKE 'kept%' AND b = 'ERROR' AND s <> 'NULL'),
    0::bigint, 'where the built-in fails, the safe version returns NULL');
SELECT is((SELECT array_agg(DISTINCT kind ORDER BY kind) FROM outcomes WHERE wraps AND b <> 'ERROR' AND b <> s),
    ARRAY['date - interval', 'timestamp - interval', 'timestamp - timestamp', 'timestamptz - interval', 'timestamptz - timestamptz'],
    'PostgreSQL 15 wraps around in some cases of these');
SELECT is((SELECT count(*) FROM outcomes WHERE wraps AND s <> 'NULL'), 0::bigint,
    'where PostgreSQL 15 wraps around, the safe version returns NULL');
SELECT is((SELECT count(*) FROM outcomes WHERE s = 'ERROR'), 0::bigint, 'no safe version ever raises an error');
SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind LIKE 'kept%'), '>', 5000::bigint,
    'kept functions: over 5000 cases');
SELECT is((SELECT count(*) FROM outcomes WHERE kind LIKE 'kept%' AND b = 'ERROR'), 0::bigint,
    'extract, date_part, date_trunc of intervals and the date of a timestamp never fail for a field the gate lets through');

SELECT diag(format('mismatch (%s, %s): %s -> built-in %s, safe %s', kind, zone, builtin, b, s)) FROM outcomes
WHERE (kind LIKE 'kept%' AND b = 'ERROR')
   OR (kind NOT LIKE 'kept%' AND NOT ((b = 'ERROR' AND s = 'NULL') OR (b <> 'ERROR' AND b = s) OR (wraps AND s = 'NULL')))
LIMIT 10;

SELECT * FROM finish();
\ir ../lib/cleanup.sql

-- test/pgtap/safe_text.sql -- the error-free LIKE, ILIKE, lower and upper that queries on
-- protected tables are rewritten to.  Over a grid of texts (empty, multibyte, with wildcards and
-- backslashes, long runs) and patterns (wildcards, escapes, multibyte characters, many '%'), in
-- every deterministic collation at hand (C, POSIX, C.utf8 and ICU ones where they exist):
-- wherever the pattern is valid, the same result as LIKE, ILIKE, NOT LIKE and NOT ILIKE; for a
-- pattern that ends in an escape, NULL (PostgreSQL's LIKE raises an error there, or returns
-- false, depending on the text); uldp._like_pattern_check raises exactly for those patterns.
-- lower and upper: the built-in's result, and NULL for a text over 32 MB outside the C locale.
\set prefix uldp_tap_safe_text_
\ir ../lib/prelude.sql

CREATE TEMP TABLE texts (v text);
INSERT INTO texts VALUES
    (''), ('a'), ('abc'), ('ABC'), ('aXbXc'), ('a%c'), ('a_c'), ('a\c'), ('ab\'), ('%'), ('_'), ('\'),
    ('ééé'), ('éaé'), ('Éa'), ('日本語テキスト'), ('日本'), ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaab'), ('xyz xyz xyz'),
    ('İstanbul'), ('ß'), ('ﬁ'), ('a b'), (E'a\nb'), ('abcabcabc'), ('mississippi');
CREATE TEMP TABLE patterns (v text);
INSERT INTO patterns VALUES
    (''), ('%'), ('_'), ('a%'), ('%c'), ('a_c'), ('a%c'), ('%b%'), ('_%_'), ('%_'), ('__'), ('___'),
    ('a\%c'), ('a\_c'), ('a\\c'), ('\a\b\c'), ('ab\\'), ('\%'), ('\_'), ('\\'), ('é%'), ('%é'), ('_a_'),
    ('é_é'), ('%日%'), ('日_'), ('日__'), ('___テ%'), ('%%%'), ('%a%a%a%a%a%a%a%b'), ('%X%X%'), ('a%b%c'),
    ('%ss%ss%'), ('m%i%p%'), ('%abc'), ('%abc%abc'), ('ABC'), ('abc'), ('i%'), ('%\é'), ('\日%'),
    ('%\'), ('a\'), ('\'), ('x\\\');
CREATE TEMP TABLE collations AS
SELECT collname FROM pg_collation
WHERE collname IN ('C', 'POSIX', 'C.utf8', 'und-x-icu', 'tr-x-icu') AND collisdeterministic
  AND collencoding IN (-1, pg_char_to_encoding(current_setting('server_encoding')));

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

CREATE TEMP TABLE outcomes AS
SELECT op, c.collname, t.v AS t, p.v AS p,
       pg_temp.eval(format('uldp._like_pattern_check(%L)', p.v)) <> 'ERROR' AS valid,
       pg_temp.eval(format('%L COLLATE %I %s %L', t.v, c.collname, op, p.v)) AS b,
       pg_temp.eval(format('%s uldp.%s(%L COLLATE %I, %L)', CASE WHEN op LIKE '!%' THEN 'NOT' ELSE '' END,
                           CASE WHEN op LIKE '%*' THEN '_safe_ilike' ELSE '_safe_like' END,
                           t.v, c.collname, p.v)) AS s
FROM texts t, patterns p, collations c, unnest(ARRAY['~~', '~~*', '!~~', '!~~*']) op;

CREATE TEMP TABLE mapped AS
SELECT f, c.collname, t.v AS t,
       pg_temp.eval(format('%s(%L COLLATE %I)', f, t.v, c.collname)) AS b,
       pg_temp.eval(format('uldp._safe_%s(%L COLLATE %I)', f, t.v, c.collname)) AS s
FROM texts t, collations c, unnest(ARRAY['lower', 'upper']) f;

SELECT plan(10);

SELECT cmp_ok((SELECT count(*) FROM outcomes), '>', 4000::bigint, 'LIKE, ILIKE and their negations: over 4000 cases');
SELECT is((SELECT array_agg(DISTINCT p ORDER BY p) FROM outcomes WHERE NOT valid),
    ARRAY['%\', '\', 'a\', 'x\\\'], 'uldp._like_pattern_check refuses exactly the patterns that end in an escape');
SELECT is((SELECT count(*) FROM outcomes WHERE valid AND b = 'ERROR'), 0::bigint,
    'PostgreSQL''s LIKE fails only on those patterns');
SELECT ok((SELECT bool_or(b = 'ERROR') AND bool_or(b = 'false') FROM outcomes WHERE NOT valid AND op = '~~'),
    'on those it fails or returns false, depending on the text');
SELECT is((SELECT count(*) FROM outcomes WHERE valid AND b <> s), 0::bigint,
    'for every valid pattern, the safe version gives the same result');
SELECT is((SELECT count(*) FROM outcomes WHERE NOT valid AND s <> 'NULL'), 0::bigint,
    'for the other patterns, the safe version returns NULL, whatever the text');
SELECT is((SELECT count(*) FROM mapped WHERE b IS DISTINCT FROM s), 0::bigint,
    'lower and upper: the safe versions give the same result in every collation');
SELECT is((SELECT count(*) FROM outcomes WHERE s = 'ERROR') + (SELECT count(*) FROM mapped WHERE s = 'ERROR'),
    0::bigint, 'no safe version ever raises an error');
-- 32 MB and one byte: over the limit of a case mapping outside the C locale
SELECT is((SELECT uldp._safe_lower(repeat('X', 33554433) COLLATE "C") = repeat('x', 33554433)), true,
    'in the C locale, lower of a text over 32 MB is the built-in''s');
SELECT ok(NOT EXISTS (SELECT FROM collations WHERE collname = 'und-x-icu')
          OR pg_temp.eval($$uldp._safe_upper(repeat('x', 33554433) COLLATE "und-x-icu") IS NULL
                            AND uldp._safe_ilike(repeat('x', 33554433) COLLATE "und-x-icu", '%') IS NULL
                            AND uldp._safe_upper(repeat('x', 33554432) COLLATE "und-x-icu") = repeat('X', 33554432)$$)
             = 'true',
    'in an ICU collation, upper and ILIKE of a text over 32 MB are NULL, of 32 MB the built-in''s');

SELECT diag(format('mismatch %s %s %s (%s): built-in %s, safe %s', t, op, p, collname, b, s)) FROM outcomes
WHERE (valid AND b <> s) OR (NOT valid AND s <> 'NULL') LIMIT 10;

SELECT * FROM finish();
\ir ../lib/cleanup.sql

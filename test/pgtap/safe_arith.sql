-- test/pgtap/safe_arith.sql -- the error-free arithmetic that queries on protected tables
-- are rewritten to: for every operator and cast it replaces, over a grid of edge values
-- (zero, ±1, type limits, the square roots of the limits, subnormals, ±Infinity, NaN), its
-- result is the built-in's result where the built-in succeeds, and NULL where it fails.
-- And the operators and casts the gate keeps as they are (float and numeric unary minus
-- and abs, widening casts) never fail on the grid.
\set prefix uldp_tap_safe_
\ir ../lib/prelude.sql

CREATE TEMP TABLE vals (type text, v text);
INSERT INTO vals VALUES
    ('int2', '-32768'), ('int2', '-1'), ('int2', '0'), ('int2', '1'), ('int2', '2'), ('int2', '181'),
    ('int2', '32767'),
    ('int4', '-2147483648'), ('int4', '-1'), ('int4', '0'), ('int4', '1'), ('int4', '2'), ('int4', '46341'),
    ('int4', '2147483647'),
    ('int8', '-9223372036854775808'), ('int8', '-1'), ('int8', '0'), ('int8', '1'), ('int8', '2'),
    ('int8', '3037000500'), ('int8', '9223372036854775807'),
    ('float4', '-Infinity'), ('float4', '-3.4e38'), ('float4', '-1'), ('float4', '-1e-45'), ('float4', '0'),
    ('float4', '1e-30'), ('float4', '1.5'), ('float4', '3e20'), ('float4', '3.4e38'), ('float4', 'Infinity'),
    ('float4', 'NaN'),
    ('float8', '-Infinity'), ('float8', '-1.7e308'), ('float8', '-1'), ('float8', '-5e-324'), ('float8', '0'),
    ('float8', '1e-200'), ('float8', '1.5'), ('float8', '3e20'), ('float8', '4e38'), ('float8', '1.7e308'),
    ('float8', 'Infinity'), ('float8', 'NaN'),
    ('numeric', '-Infinity'), ('numeric', '-1'), ('numeric', '0'), ('numeric', '0.5'), ('numeric', '1'),
    ('numeric', '2.5'), ('numeric', '1e40'), ('numeric', '1e400'), ('numeric', '9.9e131071'),
    ('numeric', 'Infinity'), ('numeric', 'NaN');

-- the operand type pairs of the built-in operators, with their result types
CREATE TEMP TABLE pairs (a text, b text, result text);
INSERT INTO pairs VALUES
    ('int2', 'int2', 'int2'), ('int4', 'int4', 'int4'), ('int8', 'int8', 'int8'),
    ('int2', 'int4', 'int4'), ('int4', 'int2', 'int4'), ('int2', 'int8', 'int8'), ('int8', 'int2', 'int8'),
    ('int4', 'int8', 'int8'), ('int8', 'int4', 'int8'),
    ('float4', 'float4', 'float4'), ('float8', 'float8', 'float8'),
    ('float4', 'float8', 'float8'), ('float8', 'float4', 'float8'), ('numeric', 'numeric', 'numeric');
CREATE TEMP TABLE ops (sym text, code int, integers_only boolean);
INSERT INTO ops VALUES ('+', 1, false), ('-', 2, false), ('*', 3, false), ('/', 4, false), ('%', 5, true);

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

CREATE TEMP TABLE cases (kind text, builtin text, safe text);
-- binary operators
INSERT INTO cases
SELECT 'binary', format('%L::%s %s %L::%s', x.v, p.a, o.sym, y.v, p.b),
       format('uldp._safe_arith_%s(%s, %L::%s, %L::%s)', p.result, o.code, x.v, p.a, y.v, p.b)
FROM pairs p JOIN vals x ON x.type = p.a JOIN vals y ON y.type = p.b CROSS JOIN ops o
WHERE NOT (o.integers_only AND p.a LIKE 'float%')
  AND NOT (o.sym = '%' AND p.a <> p.b);
-- integer unary minus and abs
INSERT INTO cases
SELECT 'unary', format('%s(%L::%s)', f.name, x.v, x.type),
       format('uldp._safe_arith_%s(%s, 0, %L::%s)', x.type, f.code, x.v, x.type)
FROM vals x CROSS JOIN (VALUES ('-', 6), ('abs', 7)) f(name, code)
WHERE x.type LIKE 'int%';
-- casts between the six types
INSERT INTO cases
SELECT 'cast', format('%L::%s::%s', x.v, x.type, t.type),
       format('uldp._safe_cast_%s(%L::%s)', t.type, x.v, x.type)
FROM vals x CROSS JOIN (SELECT DISTINCT type FROM vals WHERE type <> 'numeric') t
WHERE x.type <> t.type;

-- kept as they are: the built-in must never fail ("safe" is the same expression)
INSERT INTO cases
SELECT 'kept', e, e FROM (
    SELECT format('%s(%L::%s)', f, x.v, x.type) AS e
    FROM vals x CROSS JOIN unnest(ARRAY['-', '+', 'abs']) f
    WHERE x.type IN ('float4', 'float8', 'numeric')
    UNION ALL
    SELECT format('+(%L::%s)', x.v, x.type) FROM vals x WHERE x.type LIKE 'int%'
    UNION ALL
    SELECT format('%L::%s::%s', x.v, x.type, t)
    FROM vals x JOIN (VALUES ('int2', 'int4'), ('int2', 'int8'), ('int4', 'int8'),
                             ('int2', 'float4'), ('int4', 'float4'), ('int8', 'float4'),
                             ('int2', 'float8'), ('int4', 'float8'), ('int8', 'float8'),
                             ('float4', 'float8'), ('int2', 'numeric'), ('int4', 'numeric'),
                             ('int8', 'numeric'), ('float4', 'numeric'), ('float8', 'numeric'))
                    w(source, t) ON w.source = x.type) kept;

CREATE TEMP TABLE outcomes AS
SELECT kind, builtin, pg_temp.eval(builtin) AS b, pg_temp.eval(safe) AS s FROM cases;

SELECT plan(11);

SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind = 'binary'), '>', 1500::bigint,
    'binary operators: over 1500 cases');
SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind = 'binary' AND b = 'ERROR'), '>', 200::bigint,
    'binary operators: over 200 of them raise an error with the built-in operator');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'binary' AND b <> 'ERROR' AND b IS DISTINCT FROM s),
    0::bigint, 'binary operators: where the built-in succeeds, the safe version gives the same result');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'binary' AND b = 'ERROR' AND s <> 'NULL'),
    0::bigint, 'binary operators: where the built-in fails, the safe version returns NULL');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'unary' AND b = 'ERROR'), 6::bigint,
    'unary minus and abs fail on the 3 integer minimums, twice');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'unary'
           AND NOT ((b = 'ERROR' AND s = 'NULL') OR (b <> 'ERROR' AND b = s))),
    0::bigint, 'unary minus and abs: same result, or NULL where the built-in fails');
SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind = 'cast' AND b = 'ERROR'), '>', 40::bigint,
    'casts: over 40 cases raise an error with the built-in cast');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'cast'
           AND NOT ((b = 'ERROR' AND s = 'NULL') OR (b <> 'ERROR' AND b = s))),
    0::bigint, 'casts: same result, or NULL where the built-in fails');
SELECT is((SELECT count(*) FROM outcomes WHERE s = 'ERROR'), 0::bigint, 'no safe version ever raises an error');
SELECT cmp_ok((SELECT count(*) FROM outcomes WHERE kind = 'kept'), '>', 150::bigint,
    'kept operators and casts: over 150 cases');
SELECT is((SELECT count(*) FROM outcomes WHERE kind = 'kept' AND b = 'ERROR'), 0::bigint,
    'kept operators and casts (unary minus, unary plus, abs, widening casts) never raise an error');

SELECT diag(format('mismatch: %s -> built-in %s, safe %s', builtin, b, s)) FROM outcomes
WHERE NOT ((b = 'ERROR' AND s = 'NULL') OR (b <> 'ERROR' AND b = s)) LIMIT 10;

SELECT * FROM finish();
\ir ../lib/cleanup.sql

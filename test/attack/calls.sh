#!/usr/bin/env bash
# test/attack/calls.sh -- no argument crashes the server: every SQL-callable function and aggregate of
# the extension, enumerated from the catalog (so new ones are covered without editing this file), is
# called with NULLs, edge values and wrongly typed values, and the server must survive them all.
#
# For each function and each parameter position the file tries NULL and a fixed set of values of
# the declared type (edge values: 0, extremes, NaN, +-Infinity, empty, multidimensional, NULL-holding
# and huge arrays, jsonb of many shapes, NULL::internal), or, where the parameter is "any" or
# polymorphic, values of many types (integers, floats, numerics, an unknown literal, text, bool,
# bytea, jsonb, arrays, a row); the other parameters keep a valid value of their own, so that each
# call reaches as deep as the one odd argument lets it. Aggregates run over a three-row VALUES list,
# with their data arguments also varying by row (some rows NULL). The calls are made
#   - as a role with no privileges and no budget (functions revoked from PUBLIC fail on privileges),
#   - as a role with a budget (aggregates only: their releases actually run),
#   - as superuser, who can call everything.
# Errors are expected and fine. What must hold: no session loses its connection, the postmaster was
# neither restarted nor reset its children (the checkpointer keeps its pid), a new connection works,
# and the server log has no "terminated by signal" since the file started.
# Except for the query gate's typed error-free functions (uldp._safe_* without "any" parameters):
# they are called on every combination of extreme arguments (infinities, the first and last
# timestamps and dates, the largest intervals, patterns that end in an escape), in three time
# zones, and must raise no error at all.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

PLAIN="${ATTACK_PREFIX}plain"
SPENDER="${ATTACK_PREFIX}spender"
VICTIM="${ATTACK_PREFIX}victim"
LOG_START="$(stat -c %s "$ULDP_PGLOG" 2>/dev/null || echo 0)"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $PLAIN LOGIN" -c "CREATE ROLE $SPENDER LOGIN" -c "CREATE ROLE $VICTIM" \
    -c "CREATE TABLE public.calls_t (user_id int, amount float8)" \
    -c "CREATE VIEW public.calls_v AS SELECT 1 AS user_id" \
    -c "GRANT SELECT ON public.calls_t TO $SPENDER" >/dev/null || exit 1
sql -c "SELECT uldp.set_budget('$SPENDER', 1000, 0.5)" >/dev/null || exit 1

# The calls, generated from the catalog: one file per kind of call.
#   candidate(kind, expr, is_default): the values tried for a parameter of a type ("poly" for "any"
#     and the polymorphic types); the default is what the other positions get
#   named_default(name, kind, expr): a valid value for a parameter of that name and type, so that the
#     other positions of a release or a model are valid
sql -v victim="$VICTIM" >"$ATTACK_DIR/generate.out" 2>&1 <<'SQL' || { cat "$ATTACK_DIR/generate.out"; exit 1; }
CREATE TEMP TABLE candidate (kind text, expr text, is_default bool DEFAULT false);
INSERT INTO candidate (kind, expr) VALUES
	('poly', 'NULL'), ('poly', 'NULL::int4'), ('poly', '''42'''), ('poly', '7::int2'),
	('poly', '''-9223372036854775808''::int8'), ('poly', '1.5::float4'),
	('poly', '''-Infinity''::float8'), ('poly', '''NaN''::float8'), ('poly', '''NaN''::numeric'),
	('poly', '''Infinity''::numeric'), ('poly', '''-1e-130''::numeric'), ('poly', '''abc''::text'),
	('poly', 'true'), ('poly', '''\x00ff''::bytea'), ('poly', '''{"a": [1, {"b": null}]}''::jsonb'),
	('poly', '''{}''::float8[]'), ('poly', '''{{1,2},{3,4}}''::float8[]'),
	('poly', '''{1,NULL}''::int4[]'), ('poly', 'ROW(1, ''a''::text)'),
	('integer', 'NULL'), ('integer', '0'), ('integer', '-1'), ('integer', '7'), ('integer', '8'),
	('integer', '2147483647'), ('integer', '-2147483648'),
	('bigint', 'NULL'), ('bigint', '0'), ('bigint', '-1'), ('bigint', '2199023255553'),
	('bigint', '9223372036854775807'), ('bigint', '-9223372036854775808'),
	('double precision', 'NULL'), ('double precision', '0'), ('double precision', '''-0'''),
	('double precision', '-1'), ('double precision', '1e-320'), ('double precision', '1e308'),
	('double precision', '''Infinity'''), ('double precision', '''-Infinity'''),
	('double precision', '''NaN'''),
	('numeric', 'NULL'), ('numeric', '''NaN'''), ('numeric', '''-Infinity'''),
	('numeric', '''1e-1000'''), ('numeric', '''1e1000'''),
	('double precision[]', 'NULL'), ('double precision[]', '''{}'''),
	('double precision[]', '''{{1,2},{3,4}}'''), ('double precision[]', '''{1,NULL}'''),
	('double precision[]', '''{NaN,Infinity}'''), ('double precision[]', '''{-Infinity,1e308}'''),
	('double precision[]', '''[0:1]={1,2}'''),
	('double precision[]', 'array_fill(1e300::float8, ARRAY[1,1,1,1,1,1])'),
	('double precision[]', 'array_fill(1::float8, ARRAY[1000000])'),
	('jsonb', 'NULL'), ('jsonb', '''{}'''), ('jsonb', '''[]'''), ('jsonb', '''null'''),
	('jsonb', '''1'''), ('jsonb', '''"x"'''), ('jsonb', '''[[[[[[]]]]]]'''),
	('jsonb', '''{"loss": "squared", "weights": [1e300, -1e300], "feature_radius": 1e-300}'''),
	('jsonb', '''{"loss": "squared", "weights": {"a": 1, "b": 2}, "feature_radius": 1}'''),
	('jsonb', '''{"loss": "squared", "weights": [[1], 2], "feature_radius": 1}'''),
	('jsonb', '''{"loss": "logistic", "weights": [1, 2], "feature_radius": "1"}'''),
	('jsonb', '''{"loss": "logistic", "weights": [1, 2, 3], "feature_radius": 1e-300, "x": [1]}'''),
	('jsonb', '''{"loss": "logistic", "method": "phased_erm", "phases": 2, "iterations": 2}'''),
	('jsonb', '''{"loss": "logistic", "method": "robust", "phases": 3, "iterations": 2}'''),
	('jsonb', '''{"method": "accelerated", "tau": 1e-50, "passes": 2, "iterations": 3, "step_size": 1e50}'''),
	('jsonb', '''{"method": "outlier_removal", "phases": 20, "step_size": 1e50, "gradient_clip": 1e-50, "radius": 1e50}'''),
	('jsonb', '''{"iterations": 1e400}'''), ('jsonb', '''{"iterations": -1, "loss": 1}'''),
	('jsonb', '''{"step_size": 1e-320, "radius": 1e308, "l2": 0, "tau": 1e-300, "gradient_clip": 1e300, "iterations": 3}'''),
	('text', 'NULL'), ('text', ''''''), ('text', 'repeat(''x'', 1000000)'),
	('name', 'NULL'), ('name', ''''''), ('name', '''ctid'''), ('name', 'repeat(''x'', 100)'),
	('bytea', 'NULL'), ('bytea', '''\x00'''), ('bytea', 'decode(repeat(''ff'', 100), ''hex'')'),
	('regclass', 'NULL'), ('regclass', '0'), ('regclass', '4294967295'),
	('regclass', '''public.calls_v'''),
	('regrole', 'NULL'), ('regrole', '0'), ('regrole', '4294967295'),
	('oid', 'NULL'), ('oid', '0'), ('oid', '4294967295'),
	('timestamp with time zone', 'NULL'), ('timestamp with time zone', '''infinity'''),
	('timestamp with time zone', '''-infinity'''),
	('timestamp with time zone', '''4714-11-24 00:00:00+00 BC'''),
	('timestamp with time zone', '''294276-12-31 23:59:59.999999+00'''),
	('timestamp without time zone', 'NULL'), ('timestamp without time zone', '''infinity'''),
	('timestamp without time zone', '''-infinity'''), ('timestamp without time zone', '''4714-11-24 BC'''),
	('timestamp without time zone', '''294276-12-31 23:59:59.999999'''),
	('date', 'NULL'), ('date', '''infinity'''), ('date', '''-infinity'''), ('date', '''4714-11-24 BC'''),
	('date', '''294276-12-31'''), ('date', '''294277-01-01'''), ('date', '''5874897-12-31'''),
	('interval', 'NULL'), ('interval', '''178956970 years 7 months'''),
	('interval', '''-178956970 years -8 months'''), ('interval', '''2147483647 days'''),
	('interval', '''-2147483648 days'''), ('interval', '''2562047788:00:54.775807'''),
	('interval', 'interval ''-2562047788:00:54.775807'' - interval ''1 microsecond'''),
	('text', '''\'''), ('text', '''%é_\%'''), ('text', '''İß ﬁ'''), ('text', 'repeat(''%a'', 100000)'),
	('boolean', 'NULL'), ('boolean', 'false'),
	('internal', 'NULL');
INSERT INTO candidate VALUES
	('poly', '5::int4', true), ('integer', '1', true), ('bigint', '1', true),
	('double precision', '0.5', true), ('numeric', '1', true),
	('double precision[]', '''{1,2}''', true),
	('jsonb', '''{"loss": "logistic", "weights": [1, 2], "feature_radius": 1}''', true),
	('text', '''x''', true), ('name', '''user_id''', true), ('bytea', '''\x''', true),
	('regclass', '''public.calls_t''', true), ('regrole', quote_literal(:'victim'), true),
	('oid', '1', true), ('timestamp with time zone', '''2000-01-01''', true),
	('timestamp without time zone', '''2000-01-01''', true), ('date', '''2000-01-01''', true),
	('interval', '''1 day''', true),
	('boolean', 'true', true);

CREATE TEMP TABLE named_default (name text, kind text, expr text);
INSERT INTO named_default VALUES
	('value', 'double precision', '1.5'), ('epsilon', 'double precision', '0.5'),
	('delta', 'double precision', '1e-6'), ('lower', 'double precision', '0'),
	('upper', 'double precision', '10'), ('tau', 'double precision', '1'),
	('radius', 'double precision', '2'), ('label', 'double precision', '1'),
	('sigma2', 'double precision', '1'), ('rho', 'double precision', '0.1'),
	('n', 'integer', '3'), ('options', 'jsonb', '''{"iterations": 2}'''),
	('role', 'name', quote_literal(:'victim')), ('function', 'text', '''user_dp_mean'''),
	('statement', 'text', '''SELECT 1''');

-- every parameter of every function and aggregate of the extension (pos NULL: no parameters)
CREATE TEMP TABLE param AS
SELECT p.oid AS fn, p.prokind, format('%I.%I', n.nspname, p.proname) AS fname,
	   a.ord::int - 1 AS pos,
	   CASE WHEN t.typtype = 'p' AND t.typname <> 'internal' THEN 'poly'
			ELSE format_type(a.typ, NULL) END AS kind,
	   coalesce(p.proargnames[a.ord], '') AS name
FROM pg_depend d
JOIN pg_proc p ON p.oid = d.objid
JOIN pg_namespace n ON n.oid = p.pronamespace
LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(typ, ord) ON true
LEFT JOIN pg_type t ON t.oid = a.typ
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'uldp')
  AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e';

-- the values tried at each position, as typed SQL; types without candidates get NULL only
CREATE TEMP TABLE arg_value AS
SELECT p.fn, p.pos, CASE WHEN p.kind = 'poly' THEN c.expr ELSE format('(%s)::%s', c.expr, p.kind) END AS expr,
	   c.is_default
FROM param p JOIN candidate c ON c.kind = p.kind
UNION ALL
SELECT p.fn, p.pos, 'NULL::' || p.kind, true
FROM param p
WHERE p.pos IS NOT NULL AND NOT EXISTS (SELECT FROM candidate c WHERE c.kind = p.kind);

-- the value of a position while another one varies
CREATE TEMP TABLE arg_default AS
SELECT p.fn, p.pos,
	   coalesce((SELECT format('(%s)::%s', nd.expr, nd.kind) FROM named_default nd
				 WHERE nd.name = p.name AND nd.kind = p.kind),
				(SELECT v.expr FROM arg_value v WHERE v.fn = p.fn AND v.pos = p.pos AND v.is_default)) AS expr,
	   p.name IN ('value', 'user_id', 'features', 'label') AS is_data
FROM param p WHERE p.pos IS NOT NULL;

-- Functions with an internal parameter cannot be called from SQL (nothing converts to internal):
-- they get the all-NULL call only, which shows it; the aggregates exercise them.
CREATE TEMP TABLE callable AS
SELECT DISTINCT fn, fname, prokind FROM param f
WHERE NOT EXISTS (SELECT FROM param p WHERE p.fn = f.fn AND p.kind = 'internal');

-- kind: function, aggregate, or aggregate_data (the varied data argument differs by row)
CREATE TABLE public.calls_generated (kind text, stmt text);
INSERT INTO public.calls_generated
SELECT DISTINCT CASE WHEN f.prokind = 'a' THEN 'aggregate' ELSE 'function' END,
	   format('SELECT %s(%s)%s;', f.fname,
			  string_agg(CASE WHEN p.pos = v.pos THEN v.expr ELSE d.expr END, ', ' ORDER BY p.pos),
			  CASE WHEN f.prokind = 'a' THEN ' FROM (VALUES (1), (2), (3)) AS v(i)' ELSE '' END)
FROM callable f
JOIN arg_value v ON v.fn = f.fn
JOIN param p ON p.fn = f.fn
JOIN arg_default d ON d.fn = p.fn AND d.pos = p.pos
GROUP BY f.fn, f.fname, f.prokind, v.pos, v.expr
UNION
-- the same value at every "any" or polymorphic position (uldp._safe_arith_numeric(1, x, x))
SELECT CASE WHEN f.prokind = 'a' THEN 'aggregate' ELSE 'function' END,
	   format('SELECT %s(%s)%s;', f.fname,
			  string_agg(CASE WHEN p.kind = 'poly' THEN c.expr ELSE d.expr END, ', ' ORDER BY p.pos),
			  CASE WHEN f.prokind = 'a' THEN ' FROM (VALUES (1), (2), (3)) AS v(i)' ELSE '' END)
FROM callable f
CROSS JOIN candidate c
JOIN param p ON p.fn = f.fn
JOIN arg_default d ON d.fn = p.fn AND d.pos = p.pos
WHERE c.kind = 'poly'
  AND (SELECT count(*) FROM param q WHERE q.fn = f.fn AND q.kind = 'poly') > 1
GROUP BY f.fn, f.fname, f.prokind, c.expr
UNION
SELECT 'aggregate_data',
	   format('SELECT %s(%s) FROM (VALUES (1), (2), (3)) AS v(i);', f.fname,
			  string_agg(CASE WHEN p.pos = v.pos
						 THEN format('CASE v.i WHEN 1 THEN %s WHEN 3 THEN %s END', v.expr,
									 CASE WHEN p.kind = 'poly' THEN v.expr ELSE d.expr END)
						 ELSE d.expr END, ', ' ORDER BY p.pos))
FROM (SELECT DISTINCT fn, fname FROM param WHERE prokind = 'a') f
JOIN arg_default vd ON vd.fn = f.fn AND vd.is_data
JOIN arg_value v ON v.fn = f.fn AND v.pos = vd.pos
JOIN param p ON p.fn = f.fn
JOIN arg_default d ON d.fn = p.fn AND d.pos = p.pos
GROUP BY f.fn, f.fname, v.pos, v.expr
UNION
-- all NULL, and functions without parameters
SELECT CASE WHEN f.prokind = 'a' THEN 'aggregate' ELSE 'function' END,
	   format('SELECT %s(%s)%s;', f.fname,
			  string_agg(CASE WHEN p.kind = 'poly' THEN 'NULL::int4' ELSE 'NULL::' || p.kind END,
						 ', ' ORDER BY p.pos),
			  CASE WHEN f.prokind = 'a' THEN ' FROM (VALUES (1), (2), (3)) AS v(i)' ELSE '' END)
FROM (SELECT DISTINCT fn, fname, prokind FROM param) f
JOIN param p ON p.fn = f.fn
GROUP BY f.fn, f.fname, f.prokind;

-- kind error_free: the typed error-free functions of the gate (uldp._safe_* without "any"
-- parameters), on every combination of their parameters' candidates; a field name gets the
-- valid ones, a pattern valid and invalid ones (they take at most two parameters)
CREATE TEMP TABLE error_free_arg AS
SELECT p.fn, p.fname, p.pos, v.expr
FROM param p
CROSS JOIN LATERAL (
	SELECT format('%L', u) AS expr
	FROM unnest(ARRAY['microseconds', 'second', 'hour', 'day', 'week', 'month', 'quarter', 'year',
					  'decade', 'century', 'millennium']) u
	WHERE p.name = 'field'
	UNION ALL
	SELECT format('%L', u) FROM unnest(ARRAY['%', '_', 'a\%', '%é_%', '\', 'x\\\', '%%%%%%%%b']) u
	WHERE p.name = 'pattern'
	UNION ALL
	SELECT a.expr FROM arg_value a WHERE a.fn = p.fn AND a.pos = p.pos AND p.name NOT IN ('field', 'pattern')
) v
WHERE p.fname LIKE 'uldp.\_safe\_%'
  AND NOT EXISTS (SELECT FROM param q WHERE q.fn = p.fn AND q.kind = 'poly');
INSERT INTO public.calls_generated
SELECT DISTINCT 'error_free', format('SELECT %s(%s);', a0.fname, a0.expr || coalesce(', ' || a1.expr, ''))
FROM error_free_arg a0
LEFT JOIN error_free_arg a1 ON a1.fn = a0.fn AND a1.pos = 1
WHERE a0.pos = 0;
SQL
attack_at_exit "sql -c 'DROP TABLE IF EXISTS public.calls_generated' >/dev/null"
for kind in function aggregate aggregate_data error_free; do
    sql -c "SELECT stmt FROM public.calls_generated WHERE kind = '$kind' ORDER BY stmt" \
        >"$ATTACK_DIR/$kind.sql" || exit 1
done
nfunctions="$(sql -c "SELECT count(*) FROM pg_depend WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'uldp') AND classid = 'pg_proc'::regclass AND deptype = 'e'")"
diag "$nfunctions functions and aggregates; calls: $(wc -l <"$ATTACK_DIR/function.sql") of functions," \
    "$(wc -l <"$ATTACK_DIR/aggregate.sql") + $(wc -l <"$ATTACK_DIR/aggregate_data.sql") of aggregates"
ok_if "the catalog lists the extension's functions (more than 40)" test "$nfunctions" -gt 40

# what a crash of any backend changes: the postmaster resets every child (a new checkpointer)
server_state() {
    sql -c "SELECT pg_postmaster_start_time(), pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
}
state0="$(server_state)"

# run_calls ROLE FILE...: every statement of the files in one session of ROLE (errors are fine)
run_calls() {
    local role="$1" f out rc
    shift
    for f in "$@"; do
        out="$ATTACK_DIR/out_${role#"$ATTACK_PREFIX"}_$(basename "$f" .sql).txt"
        rc=0
        PGOPTIONS="-c statement_timeout=30s -c client_min_messages=warning" \
            sql_as "$role" -v ON_ERROR_STOP=0 -v VERBOSITY=terse -e <"$f" >"$out" 2>&1 || rc=$?
        if [ "$rc" -eq 0 ] && ! grep -q 'connection to server was lost\|server closed the connection' "$out"; then
            ok 0 "$(basename "$f" .sql) calls as ${role}: the session survived them all ($(grep -c '^ERROR:' "$out") errors)"
        else
            ok 1 "$(basename "$f" .sql) calls as ${role}: the session survived them all" || true
            diag "psql exited with status $rc; the last statements and messages:" "$(tail -n 6 "$out")"
            # after a crash, let recovery finish so that the next sessions (and files) can connect
            wait_for 120 "the server to accept connections again" sql -c 'SELECT 1' || true
        fi
    done
}

# answer SQL: what the plain role gets: the value, or the SQLSTATE of the error
answer() {
    sql_as "$PLAIN" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "$1" 2>&1 \
        | sed -n -e 's/^ERROR: *\([0-9A-Z]\{5\}\):.*/\1/p' -e '/^[A-Z]*: /!p' | head -1
}
# the gate's internal functions check their argument types and operation before reading anything
is "$(answer 'SELECT uldp._safe_arith_numeric(1, 5, 7)')" 42804 "_safe_arith_numeric on integers is refused"
is "$(answer "SELECT uldp._safe_cast_float8('abc'::text)")" 42804 "_safe_cast_float8 of text is refused"
is "$(answer "SELECT uldp._safe_arith_int8(1, 1, ROW(1, 2))")" 42804 "_safe_arith_int8 on a row is refused"
is "$(answer 'SELECT uldp._safe_arith_float8(5, 1.5::float8, 2::float8)')" 22023 \
    "_safe_arith_float8 refuses the modulo, which floats do not have"
is "$(answer 'SELECT uldp._safe_arith_int4(8, 1, 2)')" 22023 "_safe_arith_int4 refuses operation 8"
is "$(answer 'SELECT uldp._safe_arith_numeric(1, 0, 2::numeric)')" 22023 \
    "_safe_arith_numeric refuses a binary operation on the unary placeholder"
is "$(answer 'SELECT uldp._safe_arith_int4(1, 2, 3::int2)')" 5 "the gate's calls still work: 2 + 3"
is "$(answer 'SELECT uldp._safe_arith_numeric(4, 1::numeric, 0::numeric) IS NULL')" t \
    "the gate's calls still work: numeric 1 / 0 is NULL"
is "$(answer 'SELECT uldp._safe_arith_int2(6, 0, (-32768)::int2) IS NULL')" t \
    "the gate's calls still work: -(-32768::int2) is NULL"
is "$(answer 'SELECT uldp._safe_cast_int4(2.5::float8)')" 2 "the gate's calls still work: 2.5::float8::int4"

# the gate's error-free functions: no error at all, in time zones far from UTC too
is "$(answer "SELECT uldp._safe_time_add('294276-12-31'::timestamp, interval '1 day') IS NULL")" t \
    "the gate's calls still work: the last timestamp + 1 day is NULL"
is "$(answer "SELECT uldp._safe_date_trunc('millennium', '4714-11-24 BC'::timestamp) IS NULL")" t \
    "the gate's calls still work: the millennium of the first timestamp is NULL"
is "$(answer "SELECT uldp._safe_like('xbc', 'x\\') IS NULL")" t \
    "the gate's calls still work: a pattern that ends in an escape matches nothing (NULL)"
is "$(answer "SELECT uldp._like_pattern_check('x\\')")" 22025 \
    "_like_pattern_check raises PostgreSQL's error for such a pattern"
is "$(answer "SELECT uldp._public_check(ROW(1, 'a'))")" t "_public_check of any value is true"
nerror_free="$(wc -l <"$ATTACK_DIR/error_free.sql")"
ok_if "calls of the error-free functions on extreme arguments: over 1000 ($nerror_free)" test "$nerror_free" -gt 1000
for zone in UTC Pacific/Kiritimati America/St_Johns; do
    out="$ATTACK_DIR/out_error_free_${zone//\//_}.txt"
    PGOPTIONS="-c statement_timeout=30s -c TimeZone=$zone" \
        sql_as "$PLAIN" -v ON_ERROR_STOP=0 -v VERBOSITY=terse -e <"$ATTACK_DIR/error_free.sql" >"$out" 2>&1
    is "$(grep -c '^ERROR:' "$out")" 0 "the error-free functions raise no error on extreme arguments (time zone $zone)" \
        || diag "$(grep -B1 '^ERROR:' "$out" | head -n 6)"
done

run_calls "$PLAIN" "$ATTACK_DIR/function.sql" "$ATTACK_DIR/aggregate.sql"
run_calls "$SPENDER" "$ATTACK_DIR/aggregate.sql" "$ATTACK_DIR/aggregate_data.sql"
run_calls postgres "$ATTACK_DIR/function.sql" "$ATTACK_DIR/aggregate.sql"

is "$(server_state)" "$state0" "the postmaster and its checkpointer are the same as before the calls (no crash reset)"
is "$(sql -c 'SELECT 1')" "1" "a new connection works"
crashes="$(tail -c +"$((LOG_START + 1))" "$ULDP_PGLOG" | grep 'terminated by signal' || true)"
is "$crashes" "" "no server process was terminated by a signal"

attack_done

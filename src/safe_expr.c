/*-------------------------------------------------------------------------
 *
 * safe_expr.c
 *	  Checking and rewriting the per-row expressions of a protected query.
 *
 * Filters, FILTER clauses and the value argument of a uldp aggregate are
 * evaluated on every row before any budget is charged.  Anything they do
 * that depends on a row and can be observed is a leak: an error ("division
 * by zero" exactly when some row has x = 4), a side effect, a NOTICE.  So
 * they are built from an allow-list of things that cannot fail:
 *
 *	- columns of the protected table and of the tables joined with it (not
 *	  system columns or whole rows),
 *	  constants, parameters of a prepared statement, CURRENT_DATE and kin,
 *	  now();
 *	- AND, OR, NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE, CASE, COALESCE,
 *	  NULLIF, IS DISTINCT FROM, GREATEST, LEAST, COLLATE, ARRAY[...];
 *	- comparisons: built-in operators that are members of a built-in btree
 *	  operator family (=, <>, <, <=, >, >= on numbers, text, dates, ...),
 *	  also as IN (...) and = ANY (array), but not on rows;
 *	- ARRAY[...] of fixed-length values, or of constants.
 *	- arithmetic on int2, int4, int8, float4, float8 and numeric
 *	  (+, -, *, /, %, unary minus, abs) and the casts between them; boolean
 *	  to integer and back; numbers, booleans, dates and times to text;
 *	- date and time: + and - of dates, timestamps, intervals and days,
 *	  date_trunc, extract, date_part, age and the casts between dates and
 *	  timestamps;
 *	- text: LIKE, ILIKE and their negations with a pattern that is a
 *	  constant or a parameter, lower, upper, length, char_length and
 *	  octet_length.
 *
 * The functions and operators that can raise an error are replaced by the
 * functions of safe_arith.c, safe_time.c and safe_text.c, which return NULL
 * instead; those that cannot (float unary minus, widening casts, length,
 * extract) are kept.  A field name (date_trunc('month', ...)) must be a
 * constant, and is checked here.  Everything else is refused, naming what
 * was found.
 *
 * Values that do not come from rows are public: a cast of a constant or a
 * parameter ('2026-01-01'::text::date, $1::jsonb) may fail, and so may a
 * LIKE pattern ('x\' ends in an escape).  Such an error is public too,
 * but only if it does not depend on whether a row reaches the expression:
 * PostgreSQL evaluates it per row, so WHERE amount > 1000 AND d < 'x'::date
 * would fail only if some amount exceeds 1000.  So each of these is also
 * added to the query's WHERE clause as uldp._public_check(value) (or
 * uldp._like_pattern_check(pattern)), true when it does not fail: a clause
 * without columns, which PostgreSQL evaluates once, before the scan reads
 * its first row (a One-Time Filter), or at planning if it is a constant.
 * After it succeeded, the same expression cannot fail on any row.
 *
 * Some of the allowed constructs can still fail at run time for reasons
 * the types alone decide; those are refused too (check_comparison):
 * comparisons whose collation is indeterminate (two columns of conflicting
 * implicit collations: "could not determine which collation to use"),
 * comparisons of arrays whose element type has no ordering, ARRAY[...]
 * of variable-length values taken from rows, which can exceed the 1 GB
 * limit of a value, and LIKE or ILIKE in a nondeterministic collation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "gate.h"
#include "safe_arith.h"
#include "safe_expr.h"
#include "safe_time.h"

#define ALLOWED_FUNCTIONS_HINT \
	"Filters and values may use comparisons, boolean logic, IN lists, arithmetic, casts between numbers and of " \
	"constants and parameters, LIKE and ILIKE with constant patterns, lower, upper, length, now(), date_trunc, " \
	"extract, date_part, age, and + and - of dates, timestamps and intervals."

PG_FUNCTION_INFO_V1(uldp_public_check);

typedef enum SafeKind
{
	KEEP,						/* cannot fail: keep it */
	ARITH,						/* replace by uldp._safe_arith_<result type> */
	CAST,						/* replace by uldp._safe_cast_<result type> */
	REPLACE,					/* replace by uldp.<name>, same arguments */
	SWAPPED,					/* replace by uldp.<name>, its two arguments swapped */
	FIELD,						/* keep; the field name, its first argument, is checked */
	FIELD_REPLACE,				/* both */
	LIKE,						/* uldp.<name>(value, pattern): pattern public, checked */
	NOT_LIKE,					/* NOT uldp.<name>(value, pattern) */
	PUBLIC						/* of public values only: evaluated before reading */
} SafeKind;

typedef struct SafeFunction
{
	Oid			func;
	SafeKind	kind;
	SafeArithOp op;				/* ARITH */
	const char *name;			/* REPLACE, SWAPPED, FIELD_REPLACE, LIKE, NOT_LIKE */
	bool		collation;		/* fails without a collation (lower, upper) */
} SafeFunction;

static const SafeFunction safe_functions[] = {
	/* unary plus, float unary minus and abs, numeric unary minus and abs */
	{F_INT2UP, KEEP}, {F_INT4UP, KEEP}, {F_INT8UP, KEEP},
	{F_FLOAT4UP, KEEP}, {F_FLOAT8UP, KEEP}, {F_NUMERIC_UPLUS, KEEP},
	{F_FLOAT4UM, KEEP}, {F_FLOAT8UM, KEEP}, {F_NUMERIC_UMINUS, KEEP},
	{F_FLOAT4ABS, KEEP}, {F_FLOAT8ABS, KEEP}, {F_NUMERIC_ABS, KEEP},
	/* widening casts (int8 to float rounds, never fails) */
	{F_INT4_INT2, KEEP}, {F_INT8_INT2, KEEP}, {F_INT8_INT4, KEEP},
	{F_FLOAT4_INT2, KEEP}, {F_FLOAT4_INT4, KEEP}, {F_FLOAT4_INT8, KEEP},
	{F_FLOAT8_INT2, KEEP}, {F_FLOAT8_INT4, KEEP}, {F_FLOAT8_INT8, KEEP},
	{F_FLOAT8_FLOAT4, KEEP},
	{F_NUMERIC_INT2, KEEP}, {F_NUMERIC_INT4, KEEP}, {F_NUMERIC_INT8, KEEP},
	{F_NUMERIC_FLOAT4, KEEP}, {F_NUMERIC_FLOAT8, KEEP},
	/* narrowing casts: out of range, NaN */
	{F_INT2_INT4, CAST}, {F_INT2_INT8, CAST}, {F_INT4_INT8, CAST},
	{F_INT2_FLOAT4, CAST}, {F_INT2_FLOAT8, CAST}, {F_INT4_FLOAT4, CAST},
	{F_INT4_FLOAT8, CAST}, {F_INT8_FLOAT4, CAST}, {F_INT8_FLOAT8, CAST},
	{F_INT2_NUMERIC, CAST}, {F_INT4_NUMERIC, CAST}, {F_INT8_NUMERIC, CAST},
	{F_FLOAT4_FLOAT8, CAST}, {F_FLOAT4_NUMERIC, CAST}, {F_FLOAT8_NUMERIC, CAST},
	/* integer and float arithmetic: overflow, underflow, division by zero */
	{F_INT2PL, ARITH, SAFE_ADD}, {F_INT4PL, ARITH, SAFE_ADD}, {F_INT8PL, ARITH, SAFE_ADD},
	{F_INT24PL, ARITH, SAFE_ADD}, {F_INT42PL, ARITH, SAFE_ADD}, {F_INT28PL, ARITH, SAFE_ADD},
	{F_INT82PL, ARITH, SAFE_ADD}, {F_INT48PL, ARITH, SAFE_ADD}, {F_INT84PL, ARITH, SAFE_ADD},
	{F_FLOAT4PL, ARITH, SAFE_ADD}, {F_FLOAT8PL, ARITH, SAFE_ADD},
	{F_FLOAT48PL, ARITH, SAFE_ADD}, {F_FLOAT84PL, ARITH, SAFE_ADD},
	{F_NUMERIC_ADD, ARITH, SAFE_ADD},
	{F_INT2MI, ARITH, SAFE_SUB}, {F_INT4MI, ARITH, SAFE_SUB}, {F_INT8MI, ARITH, SAFE_SUB},
	{F_INT24MI, ARITH, SAFE_SUB}, {F_INT42MI, ARITH, SAFE_SUB}, {F_INT28MI, ARITH, SAFE_SUB},
	{F_INT82MI, ARITH, SAFE_SUB}, {F_INT48MI, ARITH, SAFE_SUB}, {F_INT84MI, ARITH, SAFE_SUB},
	{F_FLOAT4MI, ARITH, SAFE_SUB}, {F_FLOAT8MI, ARITH, SAFE_SUB},
	{F_FLOAT48MI, ARITH, SAFE_SUB}, {F_FLOAT84MI, ARITH, SAFE_SUB},
	{F_NUMERIC_SUB, ARITH, SAFE_SUB},
	{F_INT2MUL, ARITH, SAFE_MUL}, {F_INT4MUL, ARITH, SAFE_MUL}, {F_INT8MUL, ARITH, SAFE_MUL},
	{F_INT24MUL, ARITH, SAFE_MUL}, {F_INT42MUL, ARITH, SAFE_MUL}, {F_INT28MUL, ARITH, SAFE_MUL},
	{F_INT82MUL, ARITH, SAFE_MUL}, {F_INT48MUL, ARITH, SAFE_MUL}, {F_INT84MUL, ARITH, SAFE_MUL},
	{F_FLOAT4MUL, ARITH, SAFE_MUL}, {F_FLOAT8MUL, ARITH, SAFE_MUL},
	{F_FLOAT48MUL, ARITH, SAFE_MUL}, {F_FLOAT84MUL, ARITH, SAFE_MUL},
	{F_NUMERIC_MUL, ARITH, SAFE_MUL},
	{F_INT2DIV, ARITH, SAFE_DIV}, {F_INT4DIV, ARITH, SAFE_DIV}, {F_INT8DIV, ARITH, SAFE_DIV},
	{F_INT24DIV, ARITH, SAFE_DIV}, {F_INT42DIV, ARITH, SAFE_DIV}, {F_INT28DIV, ARITH, SAFE_DIV},
	{F_INT82DIV, ARITH, SAFE_DIV}, {F_INT48DIV, ARITH, SAFE_DIV}, {F_INT84DIV, ARITH, SAFE_DIV},
	{F_FLOAT4DIV, ARITH, SAFE_DIV}, {F_FLOAT8DIV, ARITH, SAFE_DIV},
	{F_FLOAT48DIV, ARITH, SAFE_DIV}, {F_FLOAT84DIV, ARITH, SAFE_DIV},
	{F_NUMERIC_DIV, ARITH, SAFE_DIV},
	{F_INT2MOD, ARITH, SAFE_MOD}, {F_INT4MOD, ARITH, SAFE_MOD}, {F_INT8MOD, ARITH, SAFE_MOD},
	{F_NUMERIC_MOD, ARITH, SAFE_MOD},
	{F_INT2UM, ARITH, SAFE_NEG}, {F_INT4UM, ARITH, SAFE_NEG}, {F_INT8UM, ARITH, SAFE_NEG},
	{F_INT2ABS, ARITH, SAFE_ABS}, {F_INT4ABS, ARITH, SAFE_ABS}, {F_INT8ABS, ARITH, SAFE_ABS},
	/* booleans to integers and back */
	{F_INT4_BOOL, KEEP}, {F_BOOL_INT4, KEEP},
	/* the current time; the date of a timestamp (every timestamp has one) */
	{F_NOW, KEEP}, {F_TRANSACTION_TIMESTAMP, KEEP}, {F_STATEMENT_TIMESTAMP, KEEP},
	{F_DATE_TIMESTAMP, KEEP}, {F_DATE_TIMESTAMPTZ, KEEP},
	/* dates after 294276 AD have no timestamp; local times can leave the range */
	{F_TIMESTAMP_DATE, REPLACE, .name = "_safe_cast_timestamp"},
	{F_TIMESTAMP_TIMESTAMPTZ, REPLACE, .name = "_safe_cast_timestamp"},
	{F_TIMESTAMPTZ_DATE, REPLACE, .name = "_safe_cast_timestamptz"},
	{F_TIMESTAMPTZ_TIMESTAMP, REPLACE, .name = "_safe_cast_timestamptz"},
	/* date and time arithmetic: out of range, infinite operands */
	{F_TIMESTAMP_PL_INTERVAL, REPLACE, .name = "_safe_time_add"},
	{F_TIMESTAMPTZ_PL_INTERVAL, REPLACE, .name = "_safe_time_add"},
	{F_DATE_PL_INTERVAL, REPLACE, .name = "_safe_time_add"},
	{F_DATE_PLI, REPLACE, .name = "_safe_time_add"},
	{F_INTERVAL_PL, REPLACE, .name = "_safe_time_add"},
	{F_INTERVAL_PL_TIMESTAMP, SWAPPED, .name = "_safe_time_add"},
	{F_INTERVAL_PL_TIMESTAMPTZ, SWAPPED, .name = "_safe_time_add"},
	{F_INTERVAL_PL_DATE, SWAPPED, .name = "_safe_time_add"},
	{F_INTEGER_PL_DATE, SWAPPED, .name = "_safe_time_add"},
	{F_TIMESTAMP_MI_INTERVAL, REPLACE, .name = "_safe_time_sub"},
	{F_TIMESTAMPTZ_MI_INTERVAL, REPLACE, .name = "_safe_time_sub"},
	{F_DATE_MI_INTERVAL, REPLACE, .name = "_safe_time_sub"},
	{F_DATE_MII, REPLACE, .name = "_safe_time_sub"},
	{F_INTERVAL_MI, REPLACE, .name = "_safe_time_sub"},
	{F_DATE_MI, REPLACE, .name = "_safe_time_sub"},
	{F_TIMESTAMP_MI, REPLACE, .name = "_safe_time_sub"},
	{F_TIMESTAMPTZ_MI, REPLACE, .name = "_safe_time_sub"},
	{F_INTERVAL_UM, REPLACE, .name = "_safe_time_neg"},
	{F_AGE_TIMESTAMP_TIMESTAMP, REPLACE, .name = "_safe_age"},
	{F_AGE_TIMESTAMPTZ_TIMESTAMPTZ, REPLACE, .name = "_safe_age"},
	{F_AGE_TIMESTAMP, REPLACE, .name = "_safe_age"},
	{F_AGE_TIMESTAMPTZ, REPLACE, .name = "_safe_age"},
	/* fields: extract and date_part cannot fail on a valid one, date_trunc can */
	{F_EXTRACT_TEXT_DATE, FIELD}, {F_EXTRACT_TEXT_TIMESTAMP, FIELD},
	{F_EXTRACT_TEXT_TIMESTAMPTZ, FIELD}, {F_EXTRACT_TEXT_INTERVAL, FIELD},
	{F_DATE_PART_TEXT_TIMESTAMP, FIELD}, {F_DATE_PART_TEXT_TIMESTAMPTZ, FIELD},
	{F_DATE_PART_TEXT_INTERVAL, FIELD}, {F_DATE_TRUNC_TEXT_INTERVAL, FIELD},
	{F_DATE_PART_TEXT_DATE, FIELD_REPLACE, .name = "_safe_date_part"},
	{F_DATE_TRUNC_TEXT_TIMESTAMP, FIELD_REPLACE, .name = "_safe_date_trunc"},
	{F_DATE_TRUNC_TEXT_TIMESTAMPTZ, FIELD_REPLACE, .name = "_safe_date_trunc"},
	/* text */
	{F_LENGTH_TEXT, KEEP}, {F_LENGTH_BPCHAR, KEEP},
	{F_CHAR_LENGTH_TEXT, KEEP}, {F_CHAR_LENGTH_BPCHAR, KEEP},
	{F_CHARACTER_LENGTH_TEXT, KEEP}, {F_CHARACTER_LENGTH_BPCHAR, KEEP},
	{F_OCTET_LENGTH_TEXT, KEEP}, {F_OCTET_LENGTH_BPCHAR, KEEP},
	{F_LOWER_TEXT, REPLACE, .name = "_safe_lower", .collation = true},
	{F_UPPER_TEXT, REPLACE, .name = "_safe_upper", .collation = true},
	{F_TEXTLIKE, LIKE, .name = "_safe_like"}, {F_BPCHARLIKE, LIKE, .name = "_safe_like"},
	{F_TEXTNLIKE, NOT_LIKE, .name = "_safe_like"}, {F_BPCHARNLIKE, NOT_LIKE, .name = "_safe_like"},
	{F_TEXTICLIKE, LIKE, .name = "_safe_ilike"}, {F_BPCHARICLIKE, LIKE, .name = "_safe_ilike"},
	{F_TEXTICNLIKE, NOT_LIKE, .name = "_safe_ilike"}, {F_BPCHARICNLIKE, NOT_LIKE, .name = "_safe_ilike"},
	/* LIKE ... ESCAPE: "invalid escape string" */
	{F_LIKE_ESCAPE_TEXT_TEXT, PUBLIC},
};

typedef struct SafeContext
{
	const char *table;
	List	  **checks;			/* evaluated before any row is read (see the header) */
} SafeContext;

static Node *safe_mutator(Node *node, SafeContext *context);

static const SafeFunction *
find_safe_function(Oid func)
{
	for (int i = 0; i < lengthof(safe_functions); i++)
		if (safe_functions[i].func == func)
			return &safe_functions[i];
	return NULL;
}

/* Does node read the row: a column, or the value that a CASE compares? */
static bool
reads_row(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, CaseTestExpr))
		return true;
	return expression_tree_walker(node, reads_row, context);
}

/*
 * A built-in comparison: a member of a built-in btree operator family (or
 * its negator), on operands that are not rows.  Rows (and arrays of rows) are
 * compared column by column, and the comparison fails only when it reaches a
 * column without an ordering: whether it does depends on the values.
 */
static bool
is_comparison(Oid opno, List *args)
{
	ListCell   *lc;

	if (opno >= FirstUnpinnedObjectId || get_op_btree_interpretation(opno) == NIL)
		return false;
	foreach(lc, args)
	{
		Oid			type = exprType(lfirst(lc));
		Oid			element = get_element_type(type);

		if (type_is_rowtype(type) || (OidIsValid(element) && type_is_rowtype(element)))
			return false;
	}
	return true;
}

/*
 * A comparison (or GREATEST, LEAST) that is_comparison() allows, of "args",
 * can still fail on the first row it reaches, which depends on the data:
 * refuse it if
 *	- one input is of a collatable type and its collation is indeterminate
 *	  (PostgreSQL reports a conflict of implicit collations only then);
 *	- one input is an array whose element type has no default btree
 *	  operator class (array_eq and array_cmp look for one per call).
 */
static void
check_comparison(Node *node, List *args, SafeContext *context)
{
	ListCell   *lc;

	foreach(lc, args)
	{
		Oid			type = exprType(lfirst(lc));
		Oid			element = get_base_element_type(type);

		if (!OidIsValid(exprInputCollation(node)) && type_is_collatable(type))
			uldp_gate_refuse(context->table,
							 psprintf("The collation of a comparison of %s values is indeterminate; "
									  "add COLLATE to one side.", format_type_be(type)));
		if (OidIsValid(element) &&
			!OidIsValid(GetDefaultOpClass(getBaseType(element), BTREE_AM_OID)))
			uldp_gate_refuse(context->table,
							 psprintf("Arrays of type %s cannot be compared: the type has no ordering.",
									  format_type_be(element)));
	}
}

/*
 * ARRAY[...] of variable-length values fails when they add up to more than
 * 1 GB: refused of values from rows.  Constants are computed when the query
 * is planned; of other public values (parameters, casts), true: they are to
 * be computed before any row is read.
 */
static bool
check_array(ArrayExpr *array, SafeContext *context)
{
	bool		public_values = false;
	ListCell   *lc;

	/* nested ARRAY[...] of arrays fails when their dimensions differ */
	if (array->multidims)
		uldp_gate_refuse(context->table, "Multidimensional array constructors can raise errors.");
	if (get_typlen(array->element_typeid) > 0)
		return false;
	foreach(lc, array->elements)
	{
		if (reads_row(lfirst(lc), NULL))
			uldp_gate_refuse(context->table,
							 psprintf("ARRAY[...] of %s values from rows can exceed the size limit of a value: "
									  "only constants and parameters are allowed.",
									  format_type_be(array->element_typeid)));
		public_values |= !IsA(lfirst(lc), Const);
	}
	return public_values;
}

/* The name of a type safe_arith.c computes in, for uldp._safe_<kind>_<name> */
static const char *
safe_type_name(Oid type)
{
	switch (type)
	{
		case INT2OID:
			return "int2";
		case INT4OID:
			return "int4";
		case INT8OID:
			return "int8";
		case FLOAT4OID:
			return "float4";
		case FLOAT8OID:
			return "float8";
		case NUMERICOID:
			return "numeric";
	}
	elog(ERROR, "uldp: no safe arithmetic for type %u", type);
	return NULL;
}

/* A call of uldp.<name>(args), of those argument types. */
static Node *
uldp_call(const char *name, int nargs, Oid *argtypes, Oid result_type, List *args,
		  Oid collation, Oid input_collation)
{
	Oid			func = LookupFuncName(list_make2(makeString("uldp"), makeString(pstrdup(name))),
									  nargs, argtypes, false);

	return (Node *) makeFuncExpr(func, result_type, args, collation, input_collation,
								 COERCE_EXPLICIT_CALL);
}

/* uldp._safe_arith_<type>(op, a, b) or uldp._safe_cast_<type>(a) in place of a call of safe->func. */
static Node *
replacement(const SafeFunction *safe, Oid result_type, List *args)
{
	Oid			argtypes[3] = {INT4OID, ANYOID, ANYOID};
	Node	   *op;

	if (safe->kind == CAST)
		return uldp_call(psprintf("_safe_cast_%s", safe_type_name(result_type)), 1, &argtypes[1],
						 result_type, args, InvalidOid, InvalidOid);

	/* unary operations read the second operand; the first is a placeholder */
	op = (Node *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(safe->op), false, true);
	if (list_length(args) == 1)
		args = list_make2(makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(0), false, true),
						  linitial(args));
	return uldp_call(psprintf("_safe_arith_%s", safe_type_name(result_type)), 3, argtypes,
					 result_type, lcons(op, args), InvalidOid, InvalidOid);
}

/* The arguments of an operator or function call. */
static List *
call_args(Node *node)
{
	return IsA(node, OpExpr) ? ((OpExpr *) node)->args : ((FuncExpr *) node)->args;
}

/* uldp.<name> of the same arguments as the call of func (or swapped, see SafeKind). */
static Node *
replace_call(Node *node, Oid func, const SafeFunction *safe, Oid result_type)
{
	List	   *args = call_args(node);
	Oid		   *argtypes;
	int			nargs;

	get_func_signature(func, &argtypes, &nargs);
	if (safe->kind == SWAPPED)
	{
		Oid			first = argtypes[0];

		argtypes[0] = argtypes[1];
		argtypes[1] = first;
		args = list_make2(lsecond(args), linitial(args));
	}
	return uldp_call(safe->name, nargs, argtypes, result_type, args, exprCollation(node),
					 exprInputCollation(node));
}

/*
 * Adds "check", a clause on public values that is true or fails, to those
 * evaluated before any row is read (see the file's header).
 */
static void
add_check(Node *check, SafeContext *context)
{
	*context->checks = list_append_unique(*context->checks, check);
}

/* expr, a public value that may fail: evaluated once before any row, by uldp._public_check(expr) */
static Node *
before_reading(Node *expr, SafeContext *context)
{
	Oid			anyelement = ANYELEMENTOID;

	add_check(uldp_call("_public_check", 1, &anyelement, BOOLOID, list_make1(copyObject(expr)),
						InvalidOid, exprCollation(expr)),
			  context);
	return expr;
}

/* Types that public values can be cast from and to: built-in I/O without side effects. */
static bool
is_public_type(Oid type)
{
	Oid			element = get_element_type(type);

	switch (OidIsValid(element) ? element : type)
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case DATEOID:
		case TIMEOID:
		case TIMETZOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case INTERVALOID:
		case UUIDOID:
		case JSONOID:
		case JSONBOID:
			return true;
	}
	return false;
}

/* Types whose output function cannot fail, whatever the value: their values from rows may become text. */
static bool
has_safe_output(Oid type)
{
	switch (type)
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
		case DATEOID:
		case TIMEOID:
		case TIMETZOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case INTERVALOID:
		case UUIDOID:
			return true;
	}
	return false;
}

/*
 * A cast from "source" to "target" (by the function "func", or through text
 * if it is invalid) that can fail: allowed on public values, and evaluated
 * before reading; refused on values from rows.
 */
static Node *
public_cast(Node *node, Oid func, Oid source, Oid target, SafeContext *context)
{
	const char *to = format_type_with_typemod(target, exprTypmod(node));

	if (reads_row(node, NULL))
		uldp_gate_refuse_hint(context->table,
							  psprintf("A cast of %s values from rows to %s can fail on some rows.",
									   format_type_be(source), to),
							  psprintf("Cast constants and parameters instead: compare the column with a %s value, "
									   "or store it as %s.", format_type_be(source), to));
	if ((OidIsValid(func) && (func >= FirstUnpinnedObjectId || func_volatile(func) == PROVOLATILE_VOLATILE)) ||
		!is_public_type(source) || !is_public_type(target))
		uldp_gate_refuse_hint(context->table,
							  psprintf("A cast from %s to %s is not allowed.", format_type_be(source), to),
							  ALLOWED_FUNCTIONS_HINT);
	return before_reading(expression_tree_mutator(node, safe_mutator, context), context);
}

/*
 * Refuses a call whose collation is indeterminate (PostgreSQL raises "could
 * not determine which collation to use" when a row reaches it), or, for LIKE
 * and ILIKE, nondeterministic.
 */
static void
check_collation(Node *node, bool deterministic, SafeContext *context)
{
	Oid			collation = exprInputCollation(node);

	if (!OidIsValid(collation))
		uldp_gate_refuse(context->table,
						 "The collation of LIKE, ILIKE, lower or upper is indeterminate; add COLLATE to one side.");
	if (deterministic && !get_collation_isdeterministic(collation))
		uldp_gate_refuse(context->table,
						 psprintf("LIKE and ILIKE cannot use the nondeterministic collation \"%s\".",
								  get_collation_name(collation)));
}

/* The field name of extract, date_part or date_trunc must be a valid constant. */
static void
check_field(Node *node, Oid func, SafeContext *context)
{
	Node	   *field = linitial(call_args(node));

	if (!IsA(field, Const))
		uldp_gate_refuse_hint(context->table,
							  psprintf("The field name of %s must be a constant.", get_func_name(func)),
							  "Write it as a string, as in date_trunc('month', created_at).");
	if (!((Const *) field)->constisnull)
		uldp_check_time_field(func, ((Const *) field)->constvalue, exprType(lsecond(call_args(node))));
}

/*
 * LIKE or ILIKE (or NOT): uldp._safe_like or uldp._safe_ilike of the value
 * and the pattern, a public one, checked before reading.
 */
static Node *
like_call(Node *node, const SafeFunction *safe, SafeContext *context)
{
	Oid			textargs[2] = {TEXTOID, TEXTOID};
	Node	   *value = linitial(call_args(node));
	Node	   *pattern = lsecond(call_args(node));
	Node	   *call;

	/* char(n) values match with their padding, as bpcharlike does */
	if (exprType(value) != TEXTOID)
		value = (Node *) makeRelabelType((Expr *) value, TEXTOID, -1, exprCollation(value),
										 COERCE_IMPLICIT_CAST);
	add_check(uldp_call("_like_pattern_check", 1, textargs, BOOLOID, list_make1(copyObject(pattern)),
						InvalidOid, exprCollation(pattern)),
			  context);
	call = uldp_call(safe->name, 2, textargs, BOOLOID, list_make2(value, pattern), InvalidOid,
					 exprInputCollation(node));
	if (safe->kind == NOT_LIKE)
		call = (Node *) makeBoolExpr(NOT_EXPR, list_make1(call), -1);
	return call;
}

/* A call of func (by an operator if opno is valid): kept, replaced or refused. */
static Node *
safe_call(Node *node, Oid func, Oid opno, Oid result_type, SafeContext *context)
{
	const SafeFunction *safe = find_safe_function(func);

	if (safe == NULL)
	{
		if (OidIsValid(opno) && is_comparison(opno, call_args(node)))
		{
			check_comparison(node, call_args(node), context);
			return expression_tree_mutator(node, safe_mutator, context);
		}
		if (IsA(node, FuncExpr) && (((FuncExpr *) node)->funcformat == COERCE_EXPLICIT_CAST ||
									((FuncExpr *) node)->funcformat == COERCE_IMPLICIT_CAST))
			return public_cast(node, func, exprType(linitial(call_args(node))), result_type, context);
		if (OidIsValid(opno))
			uldp_gate_refuse_hint(context->table,
								  psprintf("Operator %s is not one of the operators that cannot raise errors.",
										   format_operator(opno)),
								  ALLOWED_FUNCTIONS_HINT);
		uldp_gate_refuse_hint(context->table,
							  psprintf("Function %s is not one of the functions that cannot raise errors.",
									   format_procedure(func)),
							  ALLOWED_FUNCTIONS_HINT);
	}

	if (safe->kind == FIELD || safe->kind == FIELD_REPLACE)
		check_field(node, func, context);
	if (safe->kind == LIKE || safe->kind == NOT_LIKE)
	{
		if (reads_row(lsecond(call_args(node)), NULL))
			uldp_gate_refuse_hint(context->table,
								  "The pattern of LIKE or ILIKE must be a constant or a parameter, not a value from rows.",
								  "Compare the column with a pattern: note LIKE 'abc%'.");
		check_collation(node, true, context);
	}
	if (safe->collation)
		check_collation(node, false, context);
	if (safe->kind == PUBLIC && reads_row(node, NULL))
		uldp_gate_refuse_hint(context->table,
							  psprintf("Function %s can fail on values from rows; it is allowed on constants and parameters.",
									   format_procedure(func)),
							  ALLOWED_FUNCTIONS_HINT);

	node = expression_tree_mutator(node, safe_mutator, context);
	switch (safe->kind)
	{
		case KEEP:
		case FIELD:
			break;
		case ARITH:
		case CAST:
			return replacement(safe, result_type, call_args(node));
		case REPLACE:
		case SWAPPED:
		case FIELD_REPLACE:
			return replace_call(node, func, safe, result_type);
		case LIKE:
		case NOT_LIKE:
			return like_call(node, safe, context);
		case PUBLIC:
			return before_reading(node, context);
	}
	return node;
}

static const char *
describe(Node *node)
{
	switch (nodeTag(node))
	{
		case T_SubLink:
			return "A subquery";
		case T_Aggref:
			return "An aggregate inside an aggregate or a filter";
		case T_ArrayCoerceExpr:
			return "An array cast";
		case T_FieldSelect:
		case T_FieldStore:
			return "A composite field reference";
		case T_RowExpr:
		case T_RowCompareExpr:
			return "A row constructor";
		case T_SubscriptingRef:
			return "An array subscript";
		case T_CoerceToDomain:
			return "A domain cast";
		default:
			return "This kind of expression";
	}
}

static Node *
safe_mutator(Node *node, SafeContext *context)
{
	if (node == NULL)
		return NULL;
	switch (nodeTag(node))
	{
		case T_Var:
			{
				Var		   *var = (Var *) node;

				if (var->varlevelsup != 0)
					uldp_gate_refuse(context->table, "Outer references are not allowed.");
				if (var->varattno <= 0)
					uldp_gate_refuse(context->table,
									 "System columns and whole-row references cannot be read.");
				return node;
			}
		case T_Param:
			if (((Param *) node)->paramkind != PARAM_EXTERN)
				uldp_gate_refuse(context->table, "Only parameters of a prepared statement are allowed.");
			return node;
		case T_Const:
		case T_SQLValueFunction:
		case T_CaseTestExpr:
			return node;
		case T_List:
		case T_BoolExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_RelabelType:
		case T_CoalesceExpr:
		case T_CaseExpr:
		case T_CaseWhen:
		case T_CollateExpr:
			return expression_tree_mutator(node, safe_mutator, context);
		case T_ArrayExpr:
			if (check_array((ArrayExpr *) node, context))
				return before_reading(expression_tree_mutator(node, safe_mutator, context), context);
			return expression_tree_mutator(node, safe_mutator, context);
		case T_MinMaxExpr:
			if (((MinMaxExpr *) node)->minmaxtype >= FirstUnpinnedObjectId)
				uldp_gate_refuse(context->table, "GREATEST and LEAST are allowed on built-in types only.");
			check_comparison(node, ((MinMaxExpr *) node)->args, context);
			return expression_tree_mutator(node, safe_mutator, context);
		case T_OpExpr:
			{
				OpExpr	   *op = (OpExpr *) node;

				set_opfuncid(op);
				return safe_call(node, op->opfuncid, op->opno, op->opresulttype, context);
			}
		case T_DistinctExpr:
		case T_NullIfExpr:
		case T_ScalarArrayOpExpr:
			{
				/* all three compare with an equality or ordering operator */
				Oid			opno = IsA(node, ScalarArrayOpExpr) ?
				((ScalarArrayOpExpr *) node)->opno : ((OpExpr *) node)->opno;
				List	   *args = IsA(node, ScalarArrayOpExpr) ?
				((ScalarArrayOpExpr *) node)->args : ((OpExpr *) node)->args;

				if (!is_comparison(opno, args))
					uldp_gate_refuse(context->table,
									 psprintf("Operator %s is not a comparison that cannot raise errors.",
											  format_operator(opno)));
				check_comparison(node, args, context);
				return expression_tree_mutator(node, safe_mutator, context);
			}
		case T_FuncExpr:
			{
				FuncExpr   *func = (FuncExpr *) node;

				return safe_call(node, func->funcid, InvalidOid, func->funcresulttype, context);
			}
		case T_CoerceViaIO:
			{
				CoerceViaIO *io = (CoerceViaIO *) node;
				Oid			source = exprType((Node *) io->arg);

				/* numbers, dates and times from rows become text without fail */
				if ((io->resulttype == TEXTOID || io->resulttype == VARCHAROID) && has_safe_output(source))
					return expression_tree_mutator(node, safe_mutator, context);
				return public_cast(node, InvalidOid, source, io->resulttype, context);
			}
		default:
			uldp_gate_refuse(context->table,
							 psprintf("%s is not allowed: only comparisons, boolean logic, IN lists, "
									  "constants, columns and arithmetic are.", describe(node)));
	}
	return NULL;
}

/*
 * expr with every operator and cast that could fail replaced by its safe
 * version; refuses (ERROR) anything outside the allow-list.  expr may read
 * the columns of its query level's tables (the protected one, and the
 * ordinary tables joined with it: a failure on their rows would depend on
 * the protected row they are joined with).  The clauses that must be
 * evaluated before any row is read (see the file's header) are added to
 * *checks.
 */
Node *
uldp_safe_expr(Node *expr, const char *table, List **checks)
{
	SafeContext context = {table, checks};

	return safe_mutator(expr, &context);
}

/*
 * uldp._public_check(value anyelement) returns boolean: true.  Calling it
 * computed its argument, which is the point (see the file's header).
 */
Datum
uldp_public_check(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(true);
}

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
 *	- columns of the protected table (not system columns or whole rows),
 *	  constants, parameters of a prepared statement, CURRENT_DATE and kin;
 *	- AND, OR, NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE, CASE, COALESCE,
 *	  NULLIF, IS DISTINCT FROM, GREATEST, LEAST, COLLATE, ARRAY[...];
 *	- comparisons: built-in operators that are members of a built-in btree
 *	  operator family (=, <>, <, <=, >, >= on numbers, text, dates, ...),
 *	  also as IN (...) and = ANY (array), but not on rows;
 *	- ARRAY[...] of fixed-length values, or of constants.
 *	- arithmetic on int2, int4, int8, float4, float8 and numeric
 *	  (+, -, *, /, %, unary minus, abs) and the casts between them.
 *
 * The arithmetic operators and casts that can raise an error are replaced
 * by the functions of safe_arith.c, which return NULL instead; those that
 * cannot (float unary minus, widening casts) are kept.  Everything else is
 * refused, naming what was found.
 *
 * Some of the allowed constructs can still fail at run time for reasons
 * the types alone decide; those are refused too (check_comparison):
 * comparisons whose collation is indeterminate (two columns of conflicting
 * implicit collations: "could not determine which collation to use"),
 * comparisons of arrays whose element type has no ordering, and ARRAY[...]
 * of variable-length values taken from rows, which can exceed the 1 GB
 * limit of a value.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
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

typedef enum SafeKind
{
	KEEP,						/* cannot fail: keep it */
	ARITH,						/* replace by uldp._safe_arith_<result type> */
	CAST						/* replace by uldp._safe_cast_<result type> */
} SafeKind;

typedef struct SafeFunction
{
	Oid			func;
	SafeKind	kind;
	SafeArithOp op;
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
};

typedef struct SafeContext
{
	Index		varno;			/* the protected table's range table index */
	const char *table;
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
 * ARRAY[...] of variable-length values taken from rows fails when they add
 * up to more than 1 GB; constants are evaluated when the query is planned.
 */
static void
check_array(ArrayExpr *array, SafeContext *context)
{
	ListCell   *lc;

	/* nested ARRAY[...] of arrays fails when their dimensions differ */
	if (array->multidims)
		uldp_gate_refuse(context->table, "Multidimensional array constructors can raise errors.");
	if (get_typlen(array->element_typeid) > 0)
		return;
	foreach(lc, array->elements)
		if (!IsA(lfirst(lc), Const))
			uldp_gate_refuse(context->table,
							 psprintf("ARRAY[...] of %s values from rows can exceed the size limit of a value: "
									  "only constants are allowed.",
									  format_type_be(array->element_typeid)));
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

/* uldp._safe_arith_<type>(op, a, b) or uldp._safe_cast_<type>(a) in place of a call of safe->func. */
static Node *
replacement(const SafeFunction *safe, Oid result_type, List *args)
{
	Oid			argtypes[3] = {INT4OID, ANYOID, ANYOID};
	char	   *name;
	Oid			func;

	if (safe->kind == CAST)
	{
		name = psprintf("_safe_cast_%s", safe_type_name(result_type));
		func = LookupFuncName(list_make2(makeString("uldp"), makeString(name)), 1, &argtypes[1], false);
	}
	else
	{
		Node	   *op = (Node *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
										   Int32GetDatum(safe->op), false, true);

		/* unary operations read the second operand; the first is a placeholder */
		if (list_length(args) == 1)
			args = list_make2(makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
										Int32GetDatum(0), false, true),
							  linitial(args));
		args = lcons(op, args);
		name = psprintf("_safe_arith_%s", safe_type_name(result_type));
		func = LookupFuncName(list_make2(makeString("uldp"), makeString(name)), 3, argtypes, false);
	}
	return (Node *) makeFuncExpr(func, result_type, args, InvalidOid, InvalidOid,
								 COERCE_EXPLICIT_CALL);
}

/* A call of func (by an operator if opno is valid): kept, replaced or refused. */
static Node *
safe_call(Node *node, Oid func, Oid opno, Oid result_type, SafeContext *context)
{
	const SafeFunction *safe = find_safe_function(func);

	if (safe == NULL && !(OidIsValid(opno) && is_comparison(opno, ((OpExpr *) node)->args)))
	{
		if (OidIsValid(opno))
			uldp_gate_refuse(context->table,
							 psprintf("Operator %s is not one of the operators that cannot raise errors.",
									  format_operator(opno)));
		uldp_gate_refuse(context->table,
						 psprintf("Function %s is not one of the functions that cannot raise errors.",
								  format_procedure(func)));
	}
	if (safe == NULL)
		check_comparison(node, ((OpExpr *) node)->args, context);
	node = expression_tree_mutator(node, safe_mutator, context);
	if (safe == NULL || safe->kind == KEEP)
		return node;
	return replacement(safe, result_type,
					   IsA(node, OpExpr) ? ((OpExpr *) node)->args : ((FuncExpr *) node)->args);
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
		case T_CoerceViaIO:
			return "A cast through text";
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

				if (var->varlevelsup != 0 || var->varno != context->varno)
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
			check_array((ArrayExpr *) node, context);
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
		default:
			uldp_gate_refuse(context->table,
							 psprintf("%s is not allowed: only comparisons, boolean logic, IN lists, "
									  "constants, columns and arithmetic are.", describe(node)));
	}
	return NULL;
}

/*
 * expr with every operator and cast that could fail replaced by its safe
 * version; refuses (ERROR) anything outside the allow-list.  varno is the
 * protected table's range table index: the only table expr may read.
 */
Node *
uldp_safe_expr(Node *expr, Index varno, const char *table)
{
	SafeContext context = {varno, table};

	return safe_mutator(expr, &context);
}

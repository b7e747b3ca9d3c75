/*-------------------------------------------------------------------------
 *
 * dimension.c
 *	  The public dimension of a vector argument, read from the plan.
 *
 * The dimension of the vectors a release reads is public, like the type of
 * a column: it decides the shape of the output, the memory the release may
 * need and how much noise each coordinate gets, so it must never be read off
 * the rows (a first row of another dimension, or one user's odd vector,
 * would otherwise decide it).  Before any row is read, the value argument's
 * expression is followed down the plan to where it is computed, and its
 * dimension is
 *
 *	- the number of elements of an ARRAY[...] constructor, or of a constant
 *	  array, also in every row of a VALUES list;
 *	- for a table column, d from a validated CHECK constraint of the form
 *	  cardinality(column) = d (or array_length(column, 1) = d);
 *	- for CASE and COALESCE, the dimension all their branches agree on, and
 *	  through casts of the elements;
 *
 * and unknown (0) otherwise.  Rows whose vector does not have it are
 * skipped by the transition functions, the same way every time.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "dimension.h"

/* a NULL constant: it agrees with every dimension (its rows are skipped) */
#define ANY_DIMENSION (-1)

static int	expr_dimension(Expr *expr, Plan *plan, List *rtable);

/* The dimension two expressions agree on, 0 if none. */
static int
agree(int a, int b)
{
	if (a == ANY_DIMENSION)
		return b;
	if (b == ANY_DIMENSION || a == b)
		return a;
	return 0;
}

/* d if "check" is cardinality(column attno) = d or array_length(column, 1) = d */
static int
constraint_dimension(Node *check, AttrNumber attno)
{
	OpExpr	   *op = (OpExpr *) check;
	Node	   *call;
	Node	   *constant;
	FuncExpr   *func;
	Var		   *var;

	if (!IsA(check, OpExpr) || list_length(op->args) != 2 || op->opfuncid != F_INT4EQ)
		return 0;
	call = linitial(op->args);
	constant = lsecond(op->args);
	if (IsA(call, Const))
	{
		Node	   *swap = call;

		call = constant;
		constant = swap;
	}
	if (!IsA(call, FuncExpr) || !IsA(constant, Const) || ((Const *) constant)->constisnull)
		return 0;
	func = (FuncExpr *) call;
	if (func->funcid == F_ARRAY_LENGTH)
	{
		Const	   *dim = lsecond_node(Const, func->args);

		if (dim->constisnull || DatumGetInt32(dim->constvalue) != 1)
			return 0;
	}
	else if (func->funcid != F_CARDINALITY)
		return 0;
	var = (Var *) linitial(func->args);
	if (!IsA(var, Var) || var->varattno != attno)
		return 0;
	return Max(DatumGetInt32(((Const *) constant)->constvalue), 0);
}

/* The dimension that a validated CHECK constraint fixes for column attno of relid. */
static int
column_dimension(Oid relid, AttrNumber attno)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	int			dimension = 0;

	for (int i = 0; constr && i < constr->num_check && dimension == 0; i++)
		if (constr->check[i].ccvalid)
			dimension = constraint_dimension(stringToNode(constr->check[i].ccbin), attno);
	table_close(rel, AccessShareLock);
	return dimension;
}

/* The dimension every expression of "exprs" agrees on, or 0. */
static int
common_dimension(List *exprs, Plan *plan, List *rtable)
{
	ListCell   *lc;
	int			dimension = ANY_DIMENSION;

	foreach(lc, exprs)
		dimension = agree(dimension, expr_dimension(lfirst(lc), plan, rtable));
	return dimension;
}

/* The dimension of output column "resno" of plan, or 0. */
static int
output_dimension(Plan *plan, AttrNumber resno, List *rtable)
{
	TargetEntry *tle = plan ? get_tle_by_resno(plan->targetlist, resno) : NULL;

	return tle ? expr_dimension(tle->expr, plan, rtable) : 0;
}

/*
 * The dimension of a Var of "plan"'s target list or quals: a column of one
 * of the plan's inputs, or of what it scans, or a table's column.
 */
static int
var_dimension(Var *var, Plan *plan, List *rtable)
{
	RangeTblEntry *rte;

	if (var->varno == OUTER_VAR && (IsA(plan, Append) || IsA(plan, MergeAppend)))
	{
		/* every input of an append must agree */
		List	   *inputs = IsA(plan, Append) ? ((Append *) plan)->appendplans :
		((MergeAppend *) plan)->mergeplans;
		ListCell   *lc;
		int			dimension = ANY_DIMENSION;

		foreach(lc, inputs)
			dimension = agree(dimension, output_dimension(lfirst(lc), var->varattno, rtable));
		return dimension;
	}
	if (var->varno == OUTER_VAR)
		return output_dimension(outerPlan(plan), var->varattno, rtable);
	if (var->varno == INNER_VAR)
		return output_dimension(innerPlan(plan), var->varattno, rtable);
	if (IS_SPECIAL_VARNO(var->varno) || var->varattno <= 0)
		return 0;
	rte = rt_fetch(var->varno, rtable);
	if (rte->rtekind == RTE_RELATION)
		return column_dimension(rte->relid, var->varattno);
	if (IsA(plan, SubqueryScan) && var->varno == ((Scan *) plan)->scanrelid)
		return output_dimension(((SubqueryScan *) plan)->subplan, var->varattno, rtable);
	if (IsA(plan, ValuesScan) && var->varno == ((Scan *) plan)->scanrelid)
	{
		/* a VALUES list: the query text itself */
		List	   *column = NIL;
		ListCell   *lc;

		foreach(lc, ((ValuesScan *) plan)->values_lists)
			column = lappend(column, list_nth(lfirst(lc), var->varattno - 1));
		return common_dimension(column, plan, rtable);
	}
	return 0;
}

static int
expr_dimension(Expr *expr, Plan *plan, List *rtable)
{
	if (expr == NULL)
		return 0;
	switch (nodeTag(expr))
	{
		case T_RelabelType:
			return expr_dimension(((RelabelType *) expr)->arg, plan, rtable);
		case T_ArrayCoerceExpr:
			/* a cast of every element keeps their number */
			return expr_dimension(((ArrayCoerceExpr *) expr)->arg, plan, rtable);
		case T_ArrayExpr:
			if (((ArrayExpr *) expr)->multidims)
				return 0;
			return list_length(((ArrayExpr *) expr)->elements);
		case T_Const:
			{
				Const	   *c = (Const *) expr;
				ArrayType  *array;

				if (c->constisnull)
					return ANY_DIMENSION;
				if (get_element_type(c->consttype) == InvalidOid)
					return 0;
				array = DatumGetArrayTypeP(c->constvalue);
				if (ARR_NDIM(array) != 1)
					return 0;
				return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
			}
		case T_CaseExpr:
			{
				CaseExpr   *c = (CaseExpr *) expr;
				List	   *results = list_make1(c->defresult);
				ListCell   *lc;

				foreach(lc, c->args)
					results = lappend(results, lfirst_node(CaseWhen, lc)->result);
				return common_dimension(results, plan, rtable);
			}
		case T_CoalesceExpr:
			return common_dimension(((CoalesceExpr *) expr)->args, plan, rtable);
		case T_Var:
			return var_dimension((Var *) expr, plan, rtable);
		default:
			return 0;
	}
}

/*
 * The public dimension of "expr", an argument of an aggregate computed by
 * the Agg node "agg" of a statement whose range table is "rtable"; 0 when it
 * cannot be known before reading rows.
 */
int
uldp_public_dimension(Expr *expr, Plan *agg, List *rtable)
{
	return Max(expr_dimension(expr, agg, rtable), 0);
}

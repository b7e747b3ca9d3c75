/*-------------------------------------------------------------------------
 *
 * params.c
 *	  Reading and validating the public parameters of a release.
 *
 * The parameters are (epsilon [, lower, upper [, tau]]).  They are public:
 * invalid values raise errors.  They must be known before any row is read,
 * and the same on every row, which uldp enforces by requiring the argument
 * expressions to be free of columns, volatile functions and subqueries.  The final function reads them
 * from the aggregate call itself, so that an empty input still knows its
 * epsilon and releases a noisy answer instead of a NULL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "nodes/plannodes.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "params.h"

void
uldp_check_not_null(int nvalues, const char *const *names, const bool *nulls)
{
	for (int i = 0; i < nvalues; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", names[i]),
					 errhint("Pass a constant value for every privacy parameter.")));
}

void
uldp_check_epsilon(double epsilon)
{
	if (!(epsilon >= ULDP_MIN_EPSILON && epsilon <= ULDP_MAX_EPSILON))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon must be a finite number between %g and %g, not %g",
						ULDP_MIN_EPSILON, ULDP_MAX_EPSILON, epsilon),
				 errhint("epsilon is the privacy cost of one release; typical values lie between 0.1 and 2.")));
}

void
uldp_check_delta(double delta)
{
	if (!(delta >= ULDP_MIN_DELTA && delta <= ULDP_MAX_DELTA))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must be a number between %g and %g, not %g",
						ULDP_MIN_DELTA, ULDP_MAX_DELTA, delta),
				 errhint("delta is the probability that the epsilon guarantee fails; use much less than one over the number of users, e.g. 1e-6.")));
}

/* A positive finite scale parameter (radius, tau, ...) named "name". */
void
uldp_check_scale(const char *name, double value, const char *hint)
{
	if (!(value > 0 && value <= ULDP_MAX_MAGNITUDE))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a positive finite number, not %g", name, value),
				 errhint("%s", hint)));
}

/*
 * Vector releases: (epsilon, delta [, radius [, tau]]).  Without radius the
 * release chooses it privately, so tau, a fraction of it, needs radius.
 */
void
uldp_vector_params_set(UldpVectorParams *params, int nvalues,
					   const Datum *values, const bool *nulls)
{
	static const char *const names[] = {"epsilon", "delta", "radius", "tau"};

	uldp_check_not_null(nvalues, names, nulls);
	memset(params, 0, sizeof(UldpVectorParams));
	params->epsilon = DatumGetFloat8(values[0]);
	params->delta = DatumGetFloat8(values[1]);
	params->has_radius = nvalues >= 3;
	params->has_tau = nvalues >= 4;
	params->radius = params->has_radius ? DatumGetFloat8(values[2]) : 0;
	params->tau = params->has_tau ? DatumGetFloat8(values[3]) : 0;
	uldp_check_epsilon(params->epsilon);
	uldp_check_delta(params->delta);
	if (params->has_radius)
		uldp_check_scale("radius", params->radius,
						 "radius bounds the l2 norm of each row; omit it to let uldp choose it privately.");
	if (params->has_tau)
		uldp_check_scale("tau", params->tau,
						 "tau is the l2 radius around the mean that holds the user averages; omit it to let uldp choose it privately.");
}

/*
 * Validates the bounds of a scalar release (a bound not given is
 * +-ULDP_MAX_MAGNITUDE).
 */
void
uldp_check_bounds(double lower, double upper)
{
	if (!(fabs(lower) <= ULDP_MAX_MAGNITUDE && fabs(upper) <= ULDP_MAX_MAGNITUDE))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bounds must be finite numbers within [%g, %g]",
						-ULDP_MAX_MAGNITUDE, ULDP_MAX_MAGNITUDE),
				 errhint("Pass NULL for a bound, or omit both, to let uldp estimate the scale of the data privately.")));
	if (!(lower < upper))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lower bound %g must be less than upper bound %g",
						lower, upper),
				 errhint("Pass the bounds as (lower, upper).")));
}

/* Scalar releases: (epsilon [, lower, upper [, tau]]), validated. */
void
uldp_params_set(UldpParams *params, int nvalues, const Datum *values,
				const bool *nulls)
{
	static const char *const names[] = {"epsilon", "lower", "upper", "tau"};

	/* epsilon is required; NULL for a bound or tau means "not given" */
	uldp_check_not_null(1, names, nulls);

	memset(params, 0, sizeof(UldpParams));
	params->epsilon = DatumGetFloat8(values[0]);
	params->has_lower = nvalues >= 2 && !nulls[1];
	params->has_upper = nvalues >= 3 && !nulls[2];
	params->has_bounds = params->has_lower && params->has_upper;
	params->has_tau = nvalues >= 4 && !nulls[3];
	params->lower = params->has_lower ? DatumGetFloat8(values[1]) : -ULDP_MAX_MAGNITUDE;
	params->upper = params->has_upper ? DatumGetFloat8(values[2]) : ULDP_MAX_MAGNITUDE;
	params->tau = params->has_tau ? DatumGetFloat8(values[3]) : 0;

	uldp_check_epsilon(params->epsilon);
	uldp_check_bounds(params->lower, params->upper);
	if (params->has_tau && !params->has_bounds)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tau needs both bounds"),
				 errhint("Pass lower and upper with tau, or pass NULL for tau.")));
	if (params->has_tau)
	{
		if (!(params->tau > 0 && isfinite(params->tau)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tau must be a positive finite number, not %g", params->tau),
					 errhint("tau is the radius around the mean that holds the user averages; omit it to let uldp choose it privately.")));
		if (!((params->upper - params->lower) / (2 * params->tau) <= ULDP_MAX_BINS))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tau %g is too small for the bounds [%g, %g]",
							params->tau, params->lower, params->upper),
					 errhint("(upper - lower) / (2 * tau) may be at most 2^62; raise tau or narrow the bounds.")));
	}
}

/* From the arguments of a transition function call, starting at "first". */
void
uldp_params_from_args(FunctionCallInfo fcinfo, int first, UldpParams *params)
{
	Datum		values[4];
	bool		nulls[4];
	int			nvalues = PG_NARGS() - first;

	Assert(nvalues >= 1 && nvalues <= 4);
	for (int i = 0; i < nvalues; i++)
	{
		values[i] = PG_GETARG_DATUM(first + i);
		nulls[i] = PG_ARGISNULL(first + i);
	}
	uldp_params_set(params, nvalues, values, nulls);
}

static bool
exec_param_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
		return true;
	return expression_tree_walker(node, exec_param_walker, context);
}

/*
 * Does expr read a parameter set while the statement runs (the output of a
 * subquery, computed by reading rows)?
 */
static bool
reads_run_time_param(Node *expr)
{
	return exec_param_walker(expr, NULL);
}

/* The plan node whose output the Vars of "plan"'s target list refer to. */
static Plan *
input_plan(Plan *plan)
{
	if (IsA(plan, Append))
		return linitial(((Append *) plan)->appendplans);
	if (IsA(plan, MergeAppend))
		return linitial(((MergeAppend *) plan)->mergeplans);
	return outerPlan(plan);
}

/*
 * The aggregate call that holds the original arguments.  In a Finalize
 * Aggregate the only argument is a Var for the partial aggregate's output;
 * follow it down the plan (through Gather, Sort, Append, ...) to the
 * Partial Aggregate's own Aggref.  Using the plan rather than the state
 * makes the parameters available even when every partial state is empty.
 */
Aggref *
uldp_original_aggref(Plan *plan, Aggref *aggref)
{
	while (DO_AGGSPLIT_COMBINE(aggref->aggsplit))
	{
		Expr	   *arg = linitial_node(TargetEntry, aggref->args)->expr;

		while (IsA(arg, Var))
		{
			TargetEntry *tle;

			plan = input_plan(plan);
			tle = plan ? get_tle_by_resno(plan->targetlist, ((Var *) arg)->varattno) : NULL;
			if (tle == NULL)
				break;
			arg = tle->expr;
		}
		if (!IsA(arg, Aggref))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("could not find the privacy parameters of a combined uldp aggregate"),
					 errhint("Disable parallel query for this statement with SET max_parallel_workers_per_gather = 0.")));
		aggref = (Aggref *) arg;
	}
	return aggref;
}

/*
 * The arguments after "first" of an aggregate call computed by the Agg node
 * "aggstate", up to a VARIADIC "any" (the grouping keys of partition
 * selection, which follow its parameters): checks that they are constant for
 * the query and evaluates them.  Returns how many there are (at most "max").
 */
int
uldp_call_constants(AggState *aggstate, Aggref *aggref, int first,
					Datum *values, bool *nulls, int max)
{
	int			nvalues;
	const char *function;
	Oid		   *declared;
	int			ndeclared;
	ListCell   *cell;

	aggref = uldp_original_aggref(aggstate->ss.ps.plan, aggref);
	function = get_func_name(aggref->aggfnoid);
	get_func_signature(aggref->aggfnoid, &declared, &ndeclared);
	nvalues = 0;

	/* the arguments after "first"; ORDER BY adds resjunk entries to skip */
	foreach(cell, aggref->args)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, cell);
		Expr	   *expr = tle->expr;

		if (tle->resjunk || tle->resno <= first)
			continue;
		if (tle->resno >= ndeclared && declared[ndeclared - 1] == ANYOID)
			break;
		Assert(nvalues < max);
		if (contain_var_clause((Node *) expr) ||
			contain_volatile_functions((Node *) expr) ||
			contain_subplans((Node *) expr) ||
			reads_run_time_param((Node *) expr))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the privacy parameters of %s must be known before any row is read", function),
					 errhint("Pass the privacy parameters and options as constants or query parameters, not as columns, subqueries or volatile functions.")));
		if (IsA(expr, Const))
		{
			values[nvalues] = ((Const *) expr)->constvalue;
			nulls[nvalues] = ((Const *) expr)->constisnull;
		}
		else
		{
			ExprState  *exprstate = ExecInitExpr(expr, (PlanState *) aggstate);

			values[nvalues] = ExecEvalExprSwitchContext(exprstate,
														aggstate->ss.ps.ps_ExprContext,
														&nulls[nvalues]);
		}
		nvalues++;
	}
	return nvalues;
}

/* uldp_call_constants() for the aggregate call of a final function. */
int
uldp_aggref_constants(FunctionCallInfo fcinfo, int first, Datum *values,
					  bool *nulls, int max)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	AggState   *aggstate = (AggState *) fcinfo->context;

	if (aggref == NULL || aggstate == NULL || !IsA(aggstate, AggState))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("uldp aggregates can only be called as plain aggregates")));
	return uldp_call_constants(aggstate, aggref, first, values, nulls, max);
}

/*
 * An entry that reads "cte", a CTE of the query "levelsup" levels up, under
 * the name "alias"; the CTE counts one more reference.
 */
RangeTblEntry *
uldp_make_cte_entry(CommonTableExpr *cte, Index levelsup, const char *alias)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_CTE;
	rte->ctename = cte->ctename;
	rte->ctelevelsup = levelsup;
	rte->self_reference = false;
	rte->coltypes = list_copy(cte->ctecoltypes);
	rte->coltypmods = list_copy(cte->ctecoltypmods);
	rte->colcollations = list_copy(cte->ctecolcollations);
	rte->eref = makeAlias(alias, list_copy(cte->ctecolnames));
	rte->inFromCl = true;
	cte->cterefcount++;
	return rte;
}

/*
 * The user argument of a uldp aggregate: the one declared anyelement (values
 * precede it, privacy parameters and options follow it).
 */
int
uldp_user_argument(Oid aggfnoid)
{
	Oid		   *declared;
	int			ndeclared;

	get_func_signature(aggfnoid, &declared, &ndeclared);
	for (int i = 0; i < ndeclared; i++)
		if (declared[i] == ANYELEMENTOID)
			return i;
	elog(ERROR, "uldp aggregate %u has no user argument", aggfnoid);
	return -1;
}

/*
 * The name of a uldp aggregate's transition function, or of its final
 * function: what says which kind of state it reads and which release it is.
 */
char *
uldp_aggregate_support_name(Oid aggfnoid, bool final)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate aggregate;
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	aggregate = (Form_pg_aggregate) GETSTRUCT(tuple);
	name = get_func_name(final ? aggregate->aggfinalfn : aggregate->aggtransfn);
	ReleaseSysCache(tuple);
	return name;
}

void
uldp_refuse_window(FunctionCallInfo fcinfo)
{
	int			context = AggCheckCallContext(fcinfo, NULL);

	if (context == AGG_CONTEXT_WINDOW)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("uldp aggregates cannot be used as window functions"),
				 errhint("Each window would be a separate release over overlapping users; call it as a plain aggregate.")));
	if (context != AGG_CONTEXT_AGGREGATE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("uldp aggregates can only be called as aggregates")));
}

/*
 * The plain aggregate call aggfnoid(args) FILTER (WHERE filter) returning
 * result_type; the planner completes what it computes itself.
 */
Aggref *
uldp_make_aggref(Oid aggfnoid, Oid result_type, List *args, Expr *filter, Oid inputcollid)
{
	Aggref	   *aggref = makeNode(Aggref);
	ListCell   *lc;

	aggref->aggfnoid = aggfnoid;
	aggref->aggtype = result_type;
	aggref->aggcollid = InvalidOid;
	aggref->inputcollid = inputcollid;
	foreach(lc, args)
	{
		aggref->aggargtypes = lappend_oid(aggref->aggargtypes, exprType(lfirst(lc)));
		aggref->args = lappend(aggref->args, makeTargetEntry(lfirst(lc), foreach_current_index(lc) + 1,
															 NULL, false));
	}
	aggref->aggfilter = filter;
	aggref->aggkind = AGGKIND_NORMAL;
	aggref->aggsplit = AGGSPLIT_SIMPLE;
	aggref->aggno = -1;
	aggref->aggtransno = -1;
	aggref->location = -1;
	return aggref;
}

/*-------------------------------------------------------------------------
 *
 * shardbound.c
 *	  What every aggregate of uldp_shard checks: its call, and the rows its
 *	  partition may hold.
 *
 * The coordinator bounds its memory before it charges a release and asks
 * any shard for its rows' values, by the rows each partition may hold (its setting
 * uldp.max_partition_rows), and ships that bound in the aggregate call.
 * Here it is checked against the size on disk of the tables the aggregate
 * reads (rowbound.c): an error then depends on the partition's size,
 * never on its rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"

#include "rowbound.h"
#include "shardbound.h"

/* The aggregate's memory context; refuses any other call. */
MemoryContext
uldp_shard_aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext aggcontext;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s runs only as an aggregate", function),
				 errhint("Call it as an aggregate, not as a window function.")));
	return aggcontext;
}

/* The most rows the scans below a plan node read, and the first table. */
typedef struct ScanBound
{
	double		rows;
	const char *table;
} ScanBound;

static bool
scan_bound_walker(PlanState *planstate, ScanBound *bound)
{
	Plan	   *plan = planstate->plan;

	/* a subquery's own scans are below it */
	if (uldp_plan_is_scan(plan) && !IsA(plan, SubqueryScan))
	{
		Index		scanrelid = ((Scan *) plan)->scanrelid;
		RangeTblEntry *rte = scanrelid > 0 ? exec_rt_fetch(scanrelid, planstate->state) : NULL;
		Relation	rel;
		double		rows;

		if (rte == NULL || rte->rtekind != RTE_RELATION)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("uldp_shard aggregates with a row bound read only tables"),
					 errhint("Pass NULL as max_rows to aggregate other rows.")));
		rel = ExecGetRangeTableRelation(planstate->state, scanrelid);
		if (!uldp_table_row_bound(rel, &rows))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("uldp_shard cannot bound the rows of \"%s\", which is not a table stored on this shard",
							RelationGetRelationName(rel)),
					 errhint("Point the coordinator's foreign partitions at tables.")));
		if (bound->table == NULL)
			bound->table = RelationGetRelationName(rel);
		bound->rows += rows;
	}
	return planstate_tree_walker(planstate, scan_bound_walker, (void *) bound);
}

/* The partial aggregation's call of the aggregate the search names. */
typedef struct CallSearch
{
	Oid			aggfnoid;
	int			aggno;
	Aggref	   *found;
} CallSearch;

static bool
partial_call_walker(Node *node, CallSearch *search)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *aggref = (Aggref *) node;

		if (aggref->aggfnoid == search->aggfnoid && aggref->aggno == search->aggno &&
			!DO_AGGSPLIT_COMBINE(aggref->aggsplit))
		{
			search->found = aggref;
			return true;
		}
		return false;
	}
	return expression_tree_walker(node, partial_call_walker, (void *) search);
}

static bool
partial_agg_walker(PlanState *planstate, CallSearch *search)
{
	if (IsA(planstate, AggState) && !DO_AGGSPLIT_COMBINE(((AggState *) planstate)->aggsplit) &&
		partial_call_walker((Node *) planstate->plan->targetlist, search))
		return true;
	return planstate_tree_walker(planstate, partial_agg_walker, (void *) search);
}

/*
 * The arguments of an aggregate's call as written (TargetEntry nodes),
 * for its transition or final function.  A final function sees its extra
 * arguments as NULLs, so constant arguments are read from the call; but
 * where the aggregate was computed in parallel, the call that the final
 * step sees has the partial states for arguments: the call as written is
 * that of the partial aggregation below it, in the same plan.
 */
List *
uldp_shard_call_args(FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	CallSearch	search = {InvalidOid, 0, NULL};

	if (aggref == NULL)
		elog(ERROR, "uldp_shard aggregate support function called outside an aggregate");
	if (!DO_AGGSPLIT_COMBINE(aggref->aggsplit))
		return aggref->args;
	search.aggfnoid = aggref->aggfnoid;
	search.aggno = aggref->aggno;
	if (!partial_agg_walker(outerPlanState((PlanState *) fcinfo->context), &search))
		elog(ERROR, "the partial aggregation of uldp_shard.%s is not in the plan",
			 get_func_name(aggref->aggfnoid));
	return search.found->args;
}

/*
 * Refuses, whatever the rows, an aggregate whose tables could hold more
 * rows than its argument max_rows, number "arg" (NULL: no bound, for the
 * owner's own use), which must be a constant.
 */
void
uldp_shard_check_rows(FunctionCallInfo fcinfo, int arg)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	Const	   *max_rows;
	ScanBound	bound = {0, NULL};

	uldp_shard_aggregate_context(fcinfo, get_func_name(aggref->aggfnoid));
	max_rows = (Const *) lfirst_node(TargetEntry, list_nth_cell(uldp_shard_call_args(fcinfo), arg))->expr;
	if (!IsA(max_rows, Const))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows of uldp_shard.%s must be a constant", get_func_name(aggref->aggfnoid))));
	if (max_rows->constisnull)
		return;
	scan_bound_walker(outerPlanState((PlanState *) fcinfo->context), &bound);
	if (bound.rows > (double) DatumGetInt64(max_rows->constvalue))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("partition \"%s\" could hold up to %.0f rows, more than the %lld that the coordinator allows",
						bound.table, bound.rows, (long long) DatumGetInt64(max_rows->constvalue)),
				 errdetail("The coordinator bounds the memory of a release over shards by the rows each partition may hold; a table's size on disk bounds its rows."),
				 errhint("Raise uldp.max_partition_rows on the coordinator (it needs uldp.max_state_memory to match), or split the table into more partitions.")));
}


PG_FUNCTION_INFO_V1(uldp_shard_partition_check_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_partition_check_finalfn);

/* partition_check(max_rows): its rows count for nothing */
Datum
uldp_shard_partition_check_transfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0));
}

/*
 * partition_check(max_rows): 0, once the tables it reads are found to hold
 * no more than max_rows rows by their size on disk.  The coordinator runs it
 * over no rows, so that a partition too large is refused before any of its
 * rows is read (shardgroups.c).
 */
Datum
uldp_shard_partition_check_finalfn(PG_FUNCTION_ARGS)
{
	uldp_shard_check_rows(fcinfo, 0);
	PG_RETURN_INT64(0);
}

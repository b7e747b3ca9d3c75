/*-------------------------------------------------------------------------
 *
 * statement.c
 *	  Charging a statement's releases before it reads any row.
 *
 * Whatever a statement does while it reads rows can be observed by the
 * caller: an error, a cancel by statement_timeout, a memory failure, the time
 * it takes.  If the budget were charged after the rows were read (in the
 * final function), a role without budget could make any of these depend on
 * one user's rows and learn them for free.  So a statement's releases are
 * charged first:
 *
 *	1. When the executor starts a statement, every Agg node of its plan
 *	   (subplans, CTEs and initplans included) that finalizes uldp aggregates
 *	   is found, and each release's public parameters are read from the
 *	   aggregate call and validated by its kind (the function registered for
 *	   its final function).  Everything that can make a release fail is
 *	   decided here, from public facts only: invalid parameters, a vector
 *	   dimension that is not public, grouping or window use, and, for a
 *	   release over a protected table, whether its worst-case memory fits
 *	   uldp.max_state_memory (the number of rows the table can hold, from its
 *	   size on disk, bounds its users).
 *	2. The statement's total epsilon and delta are charged in one ledger row
 *	   (budget.c), before any row is read.  A role without enough budget is
 *	   refused here, with the same error whatever the data.
 *	3. Each release's first run is then paid for.  A node that the executor
 *	   runs again (a correlated subquery, the inner side of a nested loop, a
 *	   rescan) charges each further run before that run reads its input: its
 *	   ExecProcNode is wrapped to count runs.  The final function only checks
 *	   that the run it finishes was paid for.
 *
 * After the charge nothing gives it back: the worker committed it, so an
 * error, a cancel, a terminated backend or a ROLLBACK leaves it in place.
 *
 * Parallel workers run the same preparation, to know each release's plan,
 * and charge every run of a release they finish themselves (a full
 * aggregate below a Gather, or a subplan that each worker builds, is a
 * separate release in every process that runs it); the leader's charge
 * paid only for its own copy, which may then never run: a release in such a
 * plan can cost more than its epsilon, never less.  Without shared_preload_libraries the
 * library is loaded while the executor initializes a statement's first
 * uldp aggregate, after ExecutorStart_hook was consulted; then the same
 * preparation runs at the statement's first ExecutorRun, still before any
 * row is read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/dependency.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/nodeAgg.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "budget.h"
#include "dimension.h"
#include "gate.h"
#include "groupbound.h"
#include "grouping.h"
#include "params.h"
#include "rowbound.h"
#include "shardrewrite.h"
#include "shardrows.h"
#include "statement.h"
#include "userstate.h"

/*
 * The most rows a release over protected tables may be able to read: its
 * per-user tables index at most 2^32 entries (simplehash), and raising an
 * error once they are full would depend on the rows.
 */
#define MAX_BOUNDED_ROWS ((double) (UINT64CONST(1) << 31))

typedef struct StatementReleases StatementReleases;

/* the most rows an Agg node can read from protected tables */
typedef struct RowBound
{
	double		rows;
	const char *table;			/* the last protected table seen, or NULL */
	double		partition_rows; /* uldp_shard_checked_rows, or 0 if not read yet */
	List	   *cte_plans;		/* the plans of the CTEs met */
	List	   *ctes_read;		/* those counted, through a scan that reads them */
	PlanState  *entering;		/* the CTE plan being entered from its scan */
} RowBound;

/* An Agg node that computes uldp aggregates. */
typedef struct ReleaseNode
{
	AggState   *aggstate;
	StatementReleases *statement;
	ExecProcNodeMtd exec_agg;	/* the node's own ExecProcNodeReal */
	UldpReleasePlan *plans;		/* by aggno; NULL entries: not uldp */
	const UldpReleaseKind **kinds;	/* by aggno */
	int			groups_per_user;	/* k of a grouped release, else 1 */
	UldpGroupBound *group_bound;	/* a grouped release's registry */
	bool		grouped;		/* a grouped release */
	bool		group_parallel; /* ... in a parallel plan: workers read it */
	double		group_name_bytes;	/* the longest name of one of its groups */
	bool		bounded;		/* reads a protected table: no limit checks */
	RowBound	bound;			/* the rows it can read from protected tables */
	bool		finalizes;		/* releases (not only partial states) */
	/* the cost of one run, and the names of its releases */
	double		epsilon;
	double		delta;
	List	   *names;
	char	   *functions;
	/* runs */
	int64		runs_paid;
	int64		runs_started;
	bool		running;
} ReleaseNode;

/* The releases of one executor state (one statement, or one SPI query). */
struct StatementReleases
{
	EState	   *estate;
	const char *text;
	List	   *nodes;
	StatementReleases *next;
};

/* every prepared executor state of this backend, newest first */
static StatementReleases *statements = NULL;

static ExecutorStart_hook_type previous_executor_start_hook = NULL;
static ExecutorRun_hook_type previous_executor_run_hook = NULL;

/* The executor state's entry, if it was prepared. */
static StatementReleases *
find_statement(EState *estate)
{
	for (StatementReleases *s = statements; s != NULL; s = s->next)
		if (s->estate == estate)
			return s;
	return NULL;
}

static ReleaseNode *
find_node(PlanState *planstate)
{
	for (StatementReleases *s = statements; s != NULL; s = s->next)
	{
		ListCell   *lc;

		if (s->estate != planstate->state)
			continue;
		foreach(lc, s->nodes)
			if (((ReleaseNode *) lfirst(lc))->aggstate == (AggState *) planstate)
				return lfirst(lc);
	}
	return NULL;
}

/* Forgets a statement when its executor state's memory goes away. */
static void
forget_statement(void *arg)
{
	StatementReleases **link = &statements;

	while (*link != NULL && *link != (StatementReleases *) arg)
		link = &(*link)->next;
	if (*link != NULL)
		*link = (*link)->next;
}

/* Is "func" a member of the extension "extension"? */
static bool
extension_member(Oid func, Oid extension)
{
	return OidIsValid(extension) &&
		getExtensionOfObject(ProcedureRelationId, func) == extension;
}

/* "names", a list of distinct function names, with "name" added */
static List *
add_name(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp(lfirst(lc), name) == 0)
			return names;
	return lappend(names, (void *) name);
}

/* "a, b, c" for the ledger */
static char *
join_names(List *names)
{
	StringInfoData out;
	ListCell   *lc;

	initStringInfo(&out);
	foreach(lc, names)
		appendStringInfo(&out, "%s%s", out.len > 0 ? ", " : "", (char *) lfirst(lc));
	return out.data;
}

static void
refuse_grouping(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("uldp aggregates cannot be computed per group in this plan"),
			 errdetail("%s", detail),
			 errhint("Use GROUP BY on plain grouping keys, without GROUPING SETS, ROLLUP or CUBE, in a session that loaded uldp before planning (shared_preload_libraries or LOAD 'uldp').")));
}

/* Refuses uldp aggregates used as window functions (before any row is read). */
static bool
refuse_window_walker(Node *node, Oid *extension)
{
	if (node == NULL)
		return false;
	if (IsA(node, WindowFunc) && extension_member(((WindowFunc *) node)->winfnoid, *extension))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("uldp aggregates cannot be used as window functions"),
				 errhint("Each window would be a separate release over overlapping users; call it as a plain aggregate.")));
	return expression_tree_walker(node, refuse_window_walker, (void *) extension);
}

/*
 * A foreign scan that computes something remotely (scanrelid 0) and reads
 * protected partitions that the statement's role may not read: the
 * shards' states of a release rewritten over shards (shardrewrite.c), each
 * of at most the rows its shard checked it could hold.  Anything else such
 * a scan could return (a pushed-down join) has no bound.
 */
static void
state_scan_bound(ForeignScan *scan, EState *estate, RowBound *bound)
{
	RangeTblEntry *rte = exec_rt_fetch(bms_next_member(scan->fs_relids, -1), estate);
	double		rows;

	if (!uldp_gate_reads_protected_as(rte, GetUserId()))
		return;
	bound->table = get_rel_name(rte->relid);
	if (!uldp_shard_state_scan(scan, &rows))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("uldp cannot release over rows of \"%s\" that a foreign server computes", bound->table),
				 errdetail("A release bounds its memory by the number of rows its tables can hold."),
				 errhint("Release over its rows alone.")));
	bound->rows += rows;
}

/*
 * The most rows that the scans below "planstate" can read from protected
 * tables (0 if they read none), from the tables' sizes on disk.  Rows
 * visible to the statement's snapshot lie in pages that existed when it
 * was taken, so the current size bounds them.  A foreign partition read as
 * its table's owner for a role that may not read it, in a release over
 * shards, is protected too.
 */
static bool
row_bound_walker(PlanState *planstate, RowBound *bound)
{
	Plan	   *plan = planstate->plan;
	ListCell   *lc;

	/*
	 * A CTE's plan is an init plan of the query that has it: its rows are
	 * counted where a scan reads them (below), not there
	 */
	if (list_member_ptr(bound->cte_plans, planstate))
	{
		if (planstate != bound->entering)
			return false;
		bound->entering = NULL;
	}
	foreach(lc, planstate->initPlan)
		if (lfirst_node(SubPlanState, lc)->subplan->subLinkType == CTE_SUBLINK)
			bound->cte_plans = lappend(bound->cte_plans, lfirst_node(SubPlanState, lc)->planstate);

	if (uldp_plan_is_scan(plan))
	{
		Index		scanrelid = ((Scan *) plan)->scanrelid;
		RangeTblEntry *rte;
		Relation	rel;
		double		rows;

		if (scanrelid == 0)
		{
			if (IsA(plan, ForeignScan))
				state_scan_bound((ForeignScan *) plan, planstate->state, bound);
			return planstate_tree_walker(planstate, row_bound_walker, (void *) bound);
		}
		rte = exec_rt_fetch(scanrelid, planstate->state);
		if (rte->rtekind == RTE_RELATION &&
			(uldp_gate_reads_protected(rte) ||
			 (rte->relkind == RELKIND_FOREIGN_TABLE && uldp_gate_reads_protected_as(rte, GetUserId()))))
		{
			rel = ExecGetRangeTableRelation(planstate->state, scanrelid);
			bound->table = RelationGetRelationName(rel);
			/* a foreign partition's rows: the bound its shard checks (shardrows.c) */
			if (rte->relkind == RELKIND_FOREIGN_TABLE)
			{
				if (bound->partition_rows == 0)
					bound->partition_rows = uldp_shard_checked_rows(planstate->state);
				rows = bound->partition_rows;
			}
			else if (!uldp_table_row_bound(rel, &rows))
				rows = -1;
			if (rows < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("uldp cannot release over \"%s\", which is not a table stored here",
								bound->table),
						 errdetail("A release bounds its memory by the number of rows its tables can hold."),
						 errhint("Protect tables, and partitions that are tables; a table partitioned into postgres_fdw partitions releases over its shards' states.")));
			bound->rows += rows;
		}
		/*
		 * The rows of a CTE that it reads (the pairs of a grouped release
		 * over shards, shardgroups.c), once: the pairs read the shards'
		 * groups twice, the second time for one row per group without user,
		 * which takes no memory, and no other CTE reaches a release (the
		 * gate refuses them in releases).  A registration's CTE returns one
		 * row, its snapshot, after reading the rows that the release reads
		 * again.
		 */
		if (IsA(planstate, CteScanState) &&
			!uldp_grouping_reads_registration((CteScan *) plan, planstate->state) &&
			!list_member_ptr(bound->ctes_read, ((CteScanState *) planstate)->cteplanstate))
		{
			PlanState  *cte = ((CteScanState *) planstate)->cteplanstate;

			bound->ctes_read = lappend(bound->ctes_read, cte);
			if (!list_member_ptr(bound->cte_plans, cte))
				bound->cte_plans = lappend(bound->cte_plans, cte);
			bound->entering = cte;
			if (row_bound_walker(cte, bound))
				return true;
		}
	}
	return planstate_tree_walker(planstate, row_bound_walker, (void *) bound);
}

/*
 * Epsilon (the first public argument) and delta of one group of a grouped
 * release whose users contribute to at most groups_per_user groups.
 */
static void
per_group_params(const UldpReleaseKind *kind, int groups_per_user, int nvalues,
				 Datum *values, const bool *nulls)
{
	for (int i = 0; i < nvalues && groups_per_user > 1; i++)
		if ((i == 0 || i == kind->delta_param) && !nulls[i])
			values[i] = Float8GetDatum(DatumGetFloat8(values[i]) / groups_per_user);
}

/* Is aggfnoid partition selection, uldp.group_selected? */
static bool
is_selection(Oid aggfnoid)
{
	const UldpReleaseKind *kind = uldp_release_kind(aggfnoid);

	return kind != NULL && strcmp(kind->finalfn, "selection_finalfn") == 0;
}

/*
 * Plans one release.  A grouped release is validated with the arguments
 * each group runs with (uldp_release_constants), so that nothing its
 * groups need can fail after reading, and costs the arguments' epsilon and
 * delta, for all its groups.
 */
static void
plan_release(AggState *aggstate, AggStatePerAgg peragg, int groups_per_user,
			 UldpReleasePlan *plan, const UldpReleaseKind **planned_kind, const char **function)
{
	Aggref	   *aggref = peragg->aggref;
	const UldpReleaseKind *kind = uldp_release_kind(aggref->aggfnoid);
	UldpReleaseCall call = {0};
	int			user = uldp_user_argument(aggref->aggfnoid);

	if (kind == NULL)
		elog(ERROR, "unknown uldp release %s", get_func_name(aggref->aggfnoid));
	call.function = get_func_name(aggref->aggfnoid);
	call.nparams = uldp_call_constants(aggstate, aggref, user + 1, call.params,
									   call.nulls, ULDP_MAX_RELEASE_PARAMS);
	if (!DO_AGGSPLIT_COMBINE(aggstate->aggsplit))
		call.dimension = uldp_public_dimension(linitial_node(TargetEntry, aggref->args)->expr,
											   aggstate->ss.ps.plan,
											   aggstate->ss.ps.state->es_range_table);
	memset(plan, 0, sizeof(UldpReleasePlan));
	if (groups_per_user > 1)
	{
		UldpReleaseCall group = call;
		UldpReleasePlan whole = {0};

		per_group_params(kind, groups_per_user, group.nparams, group.params, group.nulls);
		kind->plan(&group, plan);
		/* the cost: the arguments' own epsilon and delta, not k rounded shares */
		kind->plan(&call, &whole);
		plan->epsilon = whole.epsilon;
		plan->delta = whole.delta;
	}
	else
		kind->plan(&call, plan);
	*planned_kind = kind;
	*function = call.function;
}

typedef struct PrepareContext
{
	StatementReleases *statement;
	bool		extension_known;
	Oid			extension;		/* uldp's, once extension_known */
	double		bounded_bytes;	/* the worst case of the releases over protected tables */
} PrepareContext;

/* uldp's OID, looked up only for plans that aggregate */
static Oid
uldp_extension(PrepareContext *context)
{
	if (!context->extension_known)
	{
		context->extension = get_extension_oid("uldp", true);
		context->extension_known = true;
	}
	return context->extension;
}

/*
 * A grouped release node (see grouping.c): every uldp aggregate of it was
 * rewritten with the same slot and k, and reads its users through the
 * registry that the registration returns once it has read every row.  Its
 * registry, with its key, is made here, before reading, and serves every
 * run (the registration runs once) and both halves of a parallel plan's
 * aggregation: the partial one, in the leader and in the workers (which
 * read the registry's snapshot), and the final one.
 */
static void
prepare_grouping(AggState *aggstate, ReleaseNode *node, Oid extension)
{
	Agg		   *agg = (Agg *) aggstate->ss.ps.plan;
	int64		slot = 0;

	if (agg->groupingSets != NIL || aggstate->aggstrategy == AGG_MIXED)
		refuse_grouping("Grouped releases aggregate plain groups.");
	for (int i = 0; i < aggstate->numaggs; i++)
	{
		Aggref	   *aggref = uldp_original_aggref(aggstate->ss.ps.plan, aggstate->peragg[i].aggref);
		int64		aggref_slot;
		int			k;
		List	   *key_types;

		if (!extension_member(aggref->aggfnoid, extension))
			continue;
		if (!uldp_grouped_call(aggref, uldp_user_argument(aggref->aggfnoid), &aggref_slot, &k,
							   &key_types) ||
			(slot != 0 && (aggref_slot != slot || k != node->groups_per_user)))
			refuse_grouping("Its uldp aggregates were not rewritten for grouping when it was planned.");
		slot = aggref_slot;
		node->groups_per_user = k;
		node->group_name_bytes = uldp_group_bound_name_bytes(key_types);
	}
	if (!uldp_grouping_registered_first(aggstate, slot, extension))
		refuse_grouping("The plan does not register every row before it aggregates the first.");
	node->grouped = true;
	node->group_parallel = DO_AGGSPLIT_SERIALIZE(aggstate->aggsplit) ||
		DO_AGGSPLIT_DESERIALIZE(aggstate->aggsplit);
	if (!IsParallelWorker())
		node->group_bound = uldp_group_bound_for(slot, node->groups_per_user,
												 aggstate->ss.ps.state->es_query_cxt,
												 node->group_parallel);
}

/*
 * The registration of a grouped release (grouping.c): no release, nothing to
 * charge.  Its registry is counted with its release; a parallel
 * registration's memory is counted here: in each process that aggregates
 * partially, its partial registry and that registry serialized, and in the
 * leader, which keeps the partial registries it receives until all are in,
 * their copies (each row in one of them) and the one being received; its
 * own partial registry, which the registry takes over instead of receiving
 * it serialized, is counted as any process's.  One that could not be
 * passed from a worker is refused before reading.
 */
static void
prepare_registration(AggState *aggstate, PrepareContext *context, int k, List *key_types)
{
	RowBound	bound = {0};
	double		name_bytes = uldp_group_bound_name_bytes(key_types);
	double		partial_bytes = uldp_group_bound_partial_bytes_per_row(name_bytes);
	double		bytes_per_row;

	if (DO_AGGSPLIT_SERIALIZE(aggstate->aggsplit))
		bytes_per_row = uldp_group_bound_bytes_per_row(k, name_bytes) + partial_bytes;
	else if (DO_AGGSPLIT_DESERIALIZE(aggstate->aggsplit))
		bytes_per_row = 2 * partial_bytes;
	else
		return;
	row_bound_walker((PlanState *) aggstate, &bound);
	if (bound.table == NULL)
		return;
	context->bounded_bytes += bound.rows * bytes_per_row;
	if (context->bounded_bytes > (double) uldp_max_state_memory * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the registration of a grouped release could need %.0f MB of memory on \"%s\", more than uldp.max_state_memory (%d kB)",
						context->bounded_bytes / (1024 * 1024), bound.table, uldp_max_state_memory),
				 errhint("A superuser can raise uldp.max_state_memory; the bound depends only on public facts, never on the rows.")));
	if (bound.rows * partial_bytes > (double) MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the registration of a grouped release in a parallel plan could pass a partial registry of %.0f MB from \"%s\", more than the 1 GB a worker can pass",
						bound.rows * partial_bytes / (1024 * 1024), bound.table),
				 errhint("Run it without parallel workers (SET max_parallel_workers_per_gather = 0); the bound depends only on the table's size, never on the rows.")));
}

/* Finds, validates and plans the uldp aggregates of one Agg node. */
static void
prepare_agg(AggState *aggstate, PrepareContext *context)
{
	Agg		   *agg = (Agg *) aggstate->ss.ps.plan;
	ReleaseNode *node = NULL;
	int			first_release = -1;
	int			k;
	List	   *key_types;

	if (find_node((PlanState *) aggstate) != NULL)
		return;
	if (uldp_grouping_registration(aggstate, &k, &key_types))
	{
		/* uldp's rewrite computes it alone, in its own query */
		for (int i = 0; i < aggstate->numaggs; i++)
			if (extension_member(aggstate->peragg[i].aggref->aggfnoid, uldp_extension(context)) &&
				aggstate->peragg[i].aggref->aggfnoid != uldp_registry_oid())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("uldp.group_registry runs only inside the grouped releases that uldp rewrites"),
						 errhint("Group by the keys whose groups you want: uldp registers them itself.")));
		prepare_registration(aggstate, context, k, key_types);
		return;
	}
	for (int i = 0; i < aggstate->numaggs; i++)
	{
		AggStatePerAgg peragg = &aggstate->peragg[i];
		const char *function;

		if (!extension_member(peragg->aggref->aggfnoid, uldp_extension(context)))
			continue;
		/*
		 * partition selection (any version's, by its final function) reads
		 * the registry of uldp's rewrite, in a grouped node (whose
		 * registry prepare_grouping checks)
		 */
		if (is_selection(peragg->aggref->aggfnoid) &&
			((aggstate->aggstrategy == AGG_PLAIN && agg->numCols == 0) ||
			 !uldp_grouped_call(uldp_original_aggref(aggstate->ss.ps.plan, peragg->aggref),
							   uldp_user_argument(peragg->aggref->aggfnoid), NULL, NULL, NULL)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("uldp.group_selected runs only inside the grouped releases that uldp rewrites"),
					 errhint("Group by the keys whose groups you want: uldp adds partition selection to the query itself.")));
		if (node == NULL)
		{
			node = palloc0(sizeof(ReleaseNode));
			node->aggstate = aggstate;
			node->statement = context->statement;
			node->plans = palloc0(aggstate->numaggs * sizeof(UldpReleasePlan));
			node->kinds = palloc0(aggstate->numaggs * sizeof(UldpReleaseKind *));
			node->groups_per_user = 1;
			first_release = i;
			if (aggstate->aggstrategy != AGG_PLAIN || agg->numCols > 0 || agg->groupingSets != NIL)
				prepare_grouping(aggstate, node, uldp_extension(context));
			node->finalizes = !DO_AGGSPLIT_SKIPFINAL(aggstate->aggsplit);
			row_bound_walker((PlanState *) aggstate, &node->bound);
			node->bounded = node->bound.table != NULL;
			if (node->bound.rows > MAX_BOUNDED_ROWS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("uldp cannot release over \"%s\", whose size lets it hold up to %.0f rows",
								node->bound.table, node->bound.rows),
						 errdetail("A release over protected tables may read at most %.0f rows.", MAX_BOUNDED_ROWS),
						 errhint("Partition the table and release over each partition's rows with a WHERE condition on the partition key.")));
		}
		plan_release(aggstate, peragg, node->groups_per_user, &node->plans[i], &node->kinds[i],
					 &function);
		if (node->bounded)
		{
			/* the statement's releases over protected tables, together */
			context->bounded_bytes += node->bound.rows * node->plans[i].bytes_per_row +
				node->plans[i].fixed_bytes;
			/*
			 * A grouped release's registry, counted with its first aggregate
			 * on the node that finalizes it, and in a parallel plan its
			 * snapshot: built, kept by the initplan that reads it and copied
			 * to its param in the leader, restored in each worker.
			 */
			if (node->grouped && i == first_release)
				context->bounded_bytes += node->bound.rows *
					((node->finalizes ?
					  uldp_group_bound_bytes_per_row(node->groups_per_user, node->group_name_bytes) : 0) +
					 (!node->group_parallel ? 0 :
					  (IsParallelWorker() ? 1 : node->finalizes ? 3 : 0) *
					  uldp_group_bound_snapshot_bytes_per_row()));
			if (context->bounded_bytes > (double) uldp_max_state_memory * 1024)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("%s could need %.0f MB of memory on \"%s\", more than uldp.max_state_memory (%d kB)",
								function, context->bounded_bytes / (1024 * 1024), node->bound.table,
								uldp_max_state_memory),
						 errdetail("Its tables can hold up to %.0f rows (by their size on disk, or uldp.max_partition_rows for each foreign partition), and the release takes up to %.0f bytes a row (with the statement's other releases over protected tables).",
								   node->bound.rows, node->plans[i].bytes_per_row),
						 errhint("A superuser can raise uldp.max_state_memory; the bound depends only on public facts, never on the rows.")));
		}
		/*
		 * A partial state passed from a parallel worker is one bytea, at most
		 * MaxAllocSize: a longer one could not be serialized, and whether it
		 * grows that long depends on the rows.  bytes_per_row bounds a
		 * state's serialized size from above.
		 */
		if (node->bounded && node->group_parallel && i == first_release &&
			node->bound.rows * uldp_group_bound_snapshot_bytes_per_row() > (double) MaxAllocSize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s in a parallel plan could pass its workers a registry of groups of %.0f MB from \"%s\", more than the 1 GB PostgreSQL can pass",
							function, node->bound.rows * uldp_group_bound_snapshot_bytes_per_row() / (1024 * 1024),
							node->bound.table),
					 errhint("Run it without parallel workers (SET max_parallel_workers_per_gather = 0); the bound depends only on the table's size, never on the rows.")));
		if (node->bounded && DO_AGGSPLIT_SERIALIZE(aggstate->aggsplit) &&
			node->bound.rows * node->plans[i].bytes_per_row > (double) MaxAllocSize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s in a parallel plan could pass a partial state of %.0f MB from \"%s\", more than the 1 GB a worker can pass",
							function, node->bound.rows * node->plans[i].bytes_per_row / (1024 * 1024),
							node->bound.table),
					 errhint("Run it without parallel workers (SET max_parallel_workers_per_gather = 0); the bound depends only on the table's size, never on the rows.")));
		if (node->finalizes)
			node->names = add_name(node->names, function);
	}
	if (node == NULL)
		return;
	for (int i = 0; i < aggstate->numaggs; i++)
	{
		node->epsilon += node->plans[i].epsilon;
		node->delta += node->plans[i].delta;
	}
	node->functions = join_names(node->names);
	context->statement->nodes = lappend(context->statement->nodes, node);
}

static bool
prepare_walker(PlanState *planstate, PrepareContext *context)
{
	if (planstate == NULL)
		return false;
	if (IsA(planstate, AggState))
		prepare_agg((AggState *) planstate, context);
	else if (IsA(planstate, WindowAggState))
	{
		Oid			extension = uldp_extension(context);

		refuse_window_walker((Node *) planstate->plan->targetlist, &extension);
	}
	return planstate_tree_walker(planstate, prepare_walker, (void *) context);
}

/*
 * Counts the runs of a release node, and charges every run after the
 * first (which the statement paid for) before it reads its input.  A run
 * starts when the node is called with nothing read yet: at its first call,
 * and at the first call after a rescan.  An Agg without grouping reads all
 * its input and finalizes in that call; a grouped one returns its groups
 * over several calls.
 */
static TupleTableSlot *
exec_release_node(PlanState *planstate)
{
	AggState   *aggstate = (AggState *) planstate;
	ReleaseNode *node = find_node(planstate);
	TupleTableSlot *slot;
	bool		fresh = aggstate->aggstrategy == AGG_HASHED ? !aggstate->table_filled :
		!aggstate->input_done && aggstate->grp_firstTuple == NULL;

	if (!aggstate->agg_done && fresh)
	{
		/*
		 * A grouped release's registry serves one run: a second one (a
		 * correlated subquery) is refused before it reads or pays anything,
		 * whatever its rows.
		 */
		if (node->grouped && node->runs_started > 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a grouped release cannot run twice in one statement"),
					 errhint("Run it as a statement of its own, or join the outer rows into its FROM and group by them too.")));
		if (node->runs_started == node->runs_paid)
		{
			uldp_charge(node->functions, node->epsilon, node->delta, node->statement->text);
			node->runs_paid++;
		}
		node->runs_started++;
		node->running = true;
	}
	slot = node->exec_agg(planstate);
	if (aggstate->agg_done)
		node->running = false;
	return slot;
}

/*
 * Finds, validates and plans every release of a statement whose executor
 * state was just created (see the file's header), and registers them.
 * Returns the releases' distinct names (NIL if none) and, in *epsilon and
 * *delta, the cost of one run of each.
 */
static List *
plan_statement(QueryDesc *queryDesc, StatementReleases **statement,
			   double *epsilon, double *delta)
{
	EState	   *estate = queryDesc->estate;
	MemoryContext old_context = MemoryContextSwitchTo(estate->es_query_cxt);
	MemoryContextCallback *callback = palloc(sizeof(MemoryContextCallback));
	PrepareContext context;
	List	   *names = NIL;
	ListCell   *lc;

	context.statement = palloc0(sizeof(StatementReleases));
	context.statement->estate = estate;
	context.statement->text = queryDesc->sourceText ? pstrdup(queryDesc->sourceText) : "";
	context.statement->next = statements;
	statements = context.statement;
	callback->func = forget_statement;
	callback->arg = context.statement;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, callback);

	context.extension_known = false;
	context.bounded_bytes = 0;
	prepare_walker(queryDesc->planstate, &context);
	foreach(lc, estate->es_subplanstates)
		prepare_walker(lfirst(lc), &context);

	*epsilon = 0;
	*delta = 0;
	foreach(lc, context.statement->nodes)
	{
		ReleaseNode *node = lfirst(lc);
		ListCell   *name;

		if (!node->finalizes)
			continue;
		*epsilon += node->epsilon;
		*delta += node->delta;
		foreach(name, node->names)
			names = add_name(names, lfirst(name));
	}
	MemoryContextSwitchTo(old_context);
	*statement = context.statement;
	return names;
}

/*
 * Prepares every release of a statement about to run, and charges its
 * first runs (see the file's header).
 */
static void
prepare_statement(QueryDesc *queryDesc)
{
	StatementReleases *statement;
	double		epsilon;
	double		delta;
	List	   *names = plan_statement(queryDesc, &statement, &epsilon, &delta);
	ListCell   *lc;

	if (names == NIL)
		return;
	/* the leader pays for the statement; a worker, for the runs it finishes */
	if (!IsParallelWorker())
		uldp_charge(join_names(names), epsilon, delta, statement->text);
	foreach(lc, statement->nodes)
	{
		ReleaseNode *node = lfirst(lc);
		PlanState  *planstate = (PlanState *) node->aggstate;

		if (!node->finalizes)
			continue;
		/* a worker's runs are releases of its own (see the header) */
		node->runs_paid = IsParallelWorker() ? 0 : 1;
		node->exec_agg = planstate->ExecProcNodeReal;
		planstate->ExecProcNodeReal = exec_release_node;
	}
}

static void
statement_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (previous_executor_start_hook)
		previous_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		prepare_statement(queryDesc);
}

static void
statement_executor_run(QueryDesc *queryDesc, ScanDirection direction,
					   uint64 count, bool execute_once)
{
	/* a statement that loaded uldp while it started (see the header) */
	if (find_statement(queryDesc->estate) == NULL)
		prepare_statement(queryDesc);
	if (previous_executor_run_hook)
		previous_executor_run_hook(queryDesc, direction, count, execute_once);
	else
		standard_ExecutorRun(queryDesc, direction, count, execute_once);
}

/* The release node that "fcinfo", a call of a uldp support function, runs in. */
static ReleaseNode *
calling_node(FunctionCallInfo fcinfo)
{
	ReleaseNode *node = NULL;

	if (fcinfo->context && IsA(fcinfo->context, AggState))
		node = find_node((PlanState *) fcinfo->context);
	if (node == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uldp aggregates can only run in statements that uldp prepared before reading rows"),
				 errhint("Call uldp aggregates as plain aggregates in a query.")));
	return node;
}

/* The plan of the uldp aggregate whose support function "fcinfo" calls. */
const UldpReleasePlan *
uldp_release_plan(FunctionCallInfo fcinfo)
{
	ReleaseNode *node = calling_node(fcinfo);
	Aggref	   *aggref = AggGetAggref(fcinfo);

	if (aggref == NULL || aggref->aggno < 0 || aggref->aggno >= node->aggstate->numaggs)
		elog(ERROR, "uldp: no aggregate for this call");
	return &node->plans[aggref->aggno];
}

/*
 * Does the release read a protected table?  Then its memory was bounded
 * before reading, and must not be checked while reading (a failure would
 * depend on the rows).
 */
bool
uldp_release_bounded(FunctionCallInfo fcinfo)
{
	return calling_node(fcinfo)->bounded;
}

/*
 * The public arguments after "first" of the aggregate call that final
 * function "fcinfo" finishes, as uldp_aggref_constants() gives them, except
 * that in a grouped release epsilon (the first) and delta are those of one
 * group: a user contributes to at most k groups, so k groups of epsilon / k
 * each cost epsilon (basic composition), which the statement was charged.
 */
int
uldp_release_constants(FunctionCallInfo fcinfo, int first, Datum *values,
					   bool *nulls, int max)
{
	ReleaseNode *node = calling_node(fcinfo);
	Aggref	   *aggref = AggGetAggref(fcinfo);
	int			nvalues = uldp_aggref_constants(fcinfo, first, values, nulls, max);

	if (aggref == NULL || aggref->aggno < 0 || aggref->aggno >= node->aggstate->numaggs ||
		node->kinds[aggref->aggno] == NULL)
		elog(ERROR, "uldp: no release for this call");
	per_group_params(node->kinds[aggref->aggno], node->groups_per_user, nvalues, values, nulls);
	return nvalues;
}

/* The UldpParams of the aggregate call that final function "fcinfo" finishes. */
void
uldp_release_params(FunctionCallInfo fcinfo, int first, UldpParams *params)
{
	Datum		values[4];
	bool		nulls[4];
	int			nvalues = uldp_release_constants(fcinfo, first, values, nulls, 4);

	uldp_params_set(params, nvalues, values, nulls);
}

/*
 * The position of a release's first public argument, the one after its user
 * argument: a final function reads its parameters from there, whatever
 * comes before the user argument (a value, a merged state, or nothing).
 */
int
uldp_release_first_param(FunctionCallInfo fcinfo)
{
	return uldp_user_argument(AggGetAggref(fcinfo)->aggfnoid) + 1;
}

/* Called by final functions: the run they finish must have been paid for. */
void
uldp_release_begin(FunctionCallInfo fcinfo)
{
	ReleaseNode *node = calling_node(fcinfo);

	if (!node->finalizes || !node->running || node->runs_started > node->runs_paid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uldp release was not charged before it read rows")));
}

PG_FUNCTION_INFO_V1(uldp_cost);

/* Error positions in uldp.cost's query point into that query, not the caller's. */
static void
cost_error_callback(void *arg)
{
	int			position = geterrposition();

	if (position > 0)
	{
		errposition(0);
		internalerrposition(position);
		internalerrquery((const char *) arg);
	}
}

/*
 * uldp.cost(query text, OUT epsilon, OUT delta): what running query would
 * charge, without running it.  The query is planned and its executor state
 * initialized as for EXPLAIN (nothing is read), and its releases are
 * prepared as when it runs: everything that would refuse it refuses it here
 * (the query gate, permissions, invalid parameters, the memory bound), with
 * the same errors, which depend on public facts only.  A release that the
 * executor would run several times is charged per run; the cost counts one.
 */
Datum
uldp_cost(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ErrorContextCallback error_context = {error_context_stack, cost_error_callback, sql};
	List	   *raw;
	List	   *plans;
	double		total_epsilon = 0;
	double		total_delta = 0;
	ListCell   *lc;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	error_context_stack = &error_context;
	raw = pg_parse_query(sql);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uldp.cost takes exactly one statement, not %d", list_length(raw)),
				 errhint("Pass the statement whose cost you want, without the others.")));
	plans = pg_plan_queries(pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw), sql,
															   NULL, 0, NULL),
							sql, CURSOR_OPT_PARALLEL_OK, NULL);
	foreach(lc, plans)
	{
		PlannedStmt *plan = lfirst_node(PlannedStmt, lc);
		QueryDesc  *queryDesc;
		StatementReleases *statement;
		double		epsilon;
		double		delta;

		if (plan->commandType == CMD_UTILITY)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("uldp.cost takes a query, not a utility statement"),
					 errhint("Pass the SELECT (or INSERT ... SELECT, CREATE TABLE AS's query) whose releases you want to price.")));
		queryDesc = CreateQueryDesc(plan, sql, GetActiveSnapshot(), InvalidSnapshot,
									None_Receiver, NULL, NULL, 0);
		/* the standard executor: no charge by our hook, no EXPLAIN check by the gate's */
		standard_ExecutorStart(queryDesc, EXEC_FLAG_EXPLAIN_ONLY);
		(void) plan_statement(queryDesc, &statement, &epsilon, &delta);
		total_epsilon += epsilon;
		total_delta += delta;
		standard_ExecutorEnd(queryDesc);
		FreeQueryDesc(queryDesc);
	}
	error_context_stack = error_context.previous;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "uldp.cost must return a composite type");
	values[0] = Float8GetDatum(total_epsilon);
	values[1] = Float8GetDatum(total_delta);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

void
uldp_statement_init(void)
{
	previous_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = statement_executor_start;
	previous_executor_run_hook = ExecutorRun_hook;
	ExecutorRun_hook = statement_executor_run;
}

/*-------------------------------------------------------------------------
 *
 * shardrewrite.c
 *	  Releases over tables whose rows live on postgres_fdw shards,
 *	  rewritten into releases over what the shards compute.
 *
 * A protected table whose leaf partitions are all postgres_fdw foreign
 * tables keeps its rows on shards that run the extension uldp_shard
 * (doc/scale-out.md).  Shipping its rows to the coordinator would be slow,
 * and a release over them could not bound its memory before reading: a
 * foreign table's size says nothing here.  So, while the statement is
 * planned (gate.c calls this after it checked the release),
 *
 *	SELECT f(user_dp_mean(v, u, eps, lo, hi)) FROM t WHERE w
 *
 * becomes
 *
 *	SELECT f(uldp.user_dp_mean(s.state_1, NULL::<u's type>, eps, lo, hi))
 *	FROM (SELECT uldp_shard.user_rows(v, u, lo, hi, max_rows) FROM ONLY t_1 WHERE w
 *		  UNION ALL ... one branch per leaf partition ...) s
 *
 * Each branch is a full aggregate over one foreign table, which
 * postgres_fdw pushes down to its shard when uldp_shard is listed in the
 * server's "extensions" (async foreign scans under one Append).  The merge
 * aggregates add the states' users by user id, so a user found in two
 * partitions is still one user, and release with the final function of the
 * same release over local rows: same mechanism, same charge, before any
 * shard runs a query over its rows (statement.c charges at executor start;
 * postgres_fdw has then only connected and opened its remote transactions,
 * which reveals nothing of the rows).  Rows are
 * clamped on the shards as the local transition functions clamp them
 * (user_dp_mean to its bounds, the others to +-ULDP_MAX_MAGNITUDE), and a
 * count's state ignores the value.  Releases that read the same rows with
 * the same clamping share one state.
 *
 * When the partitions' users are disjoint (shardquery.c,
 * uldp_shard_users_disjoint: hash partitions on the user id), a count, and
 * a mean or sum whose bounds are constants, read uldp_shard.user_sums
 * instead: each branch keeps the user ids that hash to its partition and
 * returns its number of users and the exact fixed-point sum of their
 * clipped values, which the same merge aggregates add up.  The coordinator
 * then does no work per user.  The others (without both bounds, or with
 * tau, and ranges) need every user's value for their private interval:
 * they read uldp_shard.user_values, each branch's users' values, finished
 * and sorted on the shard, which the coordinator merges as sorted runs
 * (partvalues.c) and releases from without sorting.  Only bounds that are
 * not constants keep the per-user merge.  Grouped releases run over
 * per-(user, group) values instead (shardgroups.c); both build their
 * queries from shardquery.c.
 *
 * The branches read the partitions as the table's owner (their
 * checkAsUser), so postgres_fdw connects with the owner's user mapping:
 * analysts need none, and since the gate accepted only releases, all they
 * get is the release.  The parent table stays in the range table, unread,
 * so that the plan is invalidated when partitions change, and the gate
 * still refuses EXPLAIN of it to roles that may not read it.
 *
 * Memory: each state holds at most the rows its partition may hold, the
 * public bound uldp.max_partition_rows, which the shard checks against its
 * tables' size on disk whatever their rows (shard/shardbound.c); the
 * coordinator checks the merge's worst case against uldp.max_state_memory
 * before reading (statement.c, with uldp_shard_state_scan).
 *
 * Whether a branch can be pushed down is postgres_fdw's decision (what it
 * can ship), made from the query alone; which path the planner keeps is a
 * matter of costs, which come from statistics of the data.  So where a
 * branch's aggregate can be pushed down, the other paths are dropped
 * (state_paths_hook), and whether it runs on its shard never depends on the
 * rows.  Whether postgres_fdw pushed every branch down is known only
 * once the statement is planned: uldp_shard_unpushed looks.  A role that
 * may not read the table is then refused before anything runs; one that
 * may read it is planned again without the rewrite, shipping rows, with a
 * NOTICE for the DBA.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"

#include "params.h"
#include "protect.h"
#include "rowbound.h"
#include "grouping.h"
#include "shardgroups.h"
#include "shardquery.h"
#include "shardrewrite.h"

/* the most rows one foreign partition may hold (uldp.max_partition_rows) */
int			uldp_max_partition_rows = 3 * 1000 * 1000;

static create_upper_paths_hook_type previous_upper_paths_hook = NULL;

/* One release of the statement, and the state column it merges. */
typedef struct ShardRelease
{
	Aggref	   *release;		/* as the statement writes it */
	List	   *params;			/* its parameters after the user id, as merged */
	Oid			merge;			/* uldp.<same name>(bytea, anyelement, float8...) */
	int			column;			/* its state column, from 1 */
} ShardRelease;

typedef struct RewriteContext
{
	Oid			relid;			/* the protected table */
	Index		varno;			/* its entry */
	Var		   *user;			/* the releases' user argument */
	List	   *releases;		/* ShardRelease */
	List	   *states;			/* the state Aggrefs, over the parent's columns */
	int			disjoint;		/* uldp_shard_users_disjoint, or -1 if not asked yet */
	Oid			uldp;
	const char *reason;			/* why it cannot be rewritten */
} RewriteContext;

static bool
is_postgres_fdw_table(Oid relid)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);

	return strcmp(GetForeignDataWrapper(server->fdwid)->fdwname, "postgres_fdw") == 0;
}

/*
 * Is relid partitioned into leaves that all are postgres_fdw foreign
 * tables?  (It locks the partitions, as planning would.)  A protected table
 * is never a foreign table itself (protect.c).
 */
bool
uldp_table_sharded(Oid relid)
{
	char		relkind;
	bool		leaves = false;
	ListCell   *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
	{
		relkind = get_rel_relkind(lfirst_oid(lc));
		if (relkind == RELKIND_PARTITIONED_TABLE)
			continue;
		if (relkind != RELKIND_FOREIGN_TABLE || !is_postgres_fdw_table(lfirst_oid(lc)))
			return false;
		leaves = true;
	}
	return leaves;
}

static bool
reads_shards_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;
		AttrNumber	privacy_unit;

		return rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_PARTITIONED_TABLE &&
			uldp_table_protection(rte->relid, &privacy_unit) && uldp_table_sharded(rte->relid);
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, reads_shards_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, reads_shards_walker, context);
}

/* Does any level of query read a protected table kept on shards? */
bool
uldp_query_reads_shards(Query *query)
{
	return reads_shards_walker((Node *) query, NULL);
}

/* uldp_shard.user_rows for values of value_type, or InvalidOid. */
static Oid
state_aggregate(Oid value_type)
{
	Oid			argtypes[] = {value_type, ANYELEMENTOID, FLOAT8OID, FLOAT8OID, INT8OID};

	return uldp_shard_function("uldp_shard", "uldp_shard", "user_rows", argtypes, lengthof(argtypes));
}

/* uldp_shard.user_sums or user_values ("name") for values of value_type, or InvalidOid. */
static Oid
partition_aggregate(const char *name, Oid value_type)
{
	Oid			argtypes[] = {value_type, ANYELEMENTOID, FLOAT8OID, FLOAT8OID, BOOLOID, INT4OID, INT4OID,
	INT8OID};

	return uldp_shard_function("uldp_shard", "uldp_shard", name, argtypes, lengthof(argtypes));
}

/*
 * The merge of release: uldp.<its name>(bytea, anyelement, float8 for each
 * of its parameters).
 */
static Oid
merge_aggregate(Aggref *release, int nparams)
{
	Oid			argtypes[FUNC_MAX_ARGS];
	int			nargs = 0;

	argtypes[nargs++] = BYTEAOID;
	argtypes[nargs++] = ANYELEMENTOID;
	while (nargs < nparams + 2 && nargs < FUNC_MAX_ARGS)
		argtypes[nargs++] = FLOAT8OID;
	return uldp_shard_function("uldp", "uldp", get_func_name(release->aggfnoid), argtypes, nargs);
}

/*
 * The state aggregate a release reads, over the parent's columns:
 * user_rows(value, user, lower, upper, max_rows) FILTER (its filter).
 */
static Aggref *
state_call(Aggref *release, Var *user, List *params, UldpShardClamp clamp, Oid state_agg)
{
	Expr	   *value;
	Expr	   *lower = NULL;
	Expr	   *upper = NULL;

	if (clamp == ULDP_CLAMP_COUNT)
		value = (Expr *) uldp_shard_float8(0);
	else
		value = copyObject(linitial_node(TargetEntry, release->args)->expr);
	if (clamp == ULDP_CLAMP_TO_BOUNDS && list_length(params) >= 3)
	{
		lower = lsecond(params);
		upper = lthird(params);
	}
	return uldp_make_aggref(state_agg, BYTEAOID,
							 list_make5(value, copyObject(user),
										uldp_shard_clamp_bound(lower, -ULDP_MAX_MAGNITUDE),
										uldp_shard_clamp_bound(upper, ULDP_MAX_MAGNITUDE),
										uldp_shard_int8(uldp_max_partition_rows)),
							 copyObject(release->aggfilter), release->inputcollid);
}

/*
 * user_sums or user_values (agg) of a branch: (value, user, lower, upper,
 * average, modulus, remainder, max_rows) FILTER (the release's filter),
 * with modulus 1 and remainder 0 (every user) until shardquery.c sets each
 * branch's partition.
 */
static Aggref *
partition_call(Oid agg, Aggref *release, Expr *value, Var *user, Const *lower, Const *upper,
			   bool average)
{
	List	   *args = list_make5(value, copyObject(user), lower, upper, makeBoolConst(average, false));

	args = lappend(args, makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(1), false, true));
	args = lappend(args, makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(0), false, true));
	Assert(list_length(args) == ULDP_SUMS_MODULUS_ARG + 2);
	return uldp_make_aggref(agg, BYTEAOID, lappend(args, uldp_shard_int8(uldp_max_partition_rows)),
							copyObject(release->aggfilter), release->inputcollid);
}

/* Are the partitions' users disjoint (cached in context)? */
static bool
users_disjoint(Var *user, RewriteContext *context)
{
	if (context->disjoint < 0)
		context->disjoint = uldp_shard_users_disjoint(context->relid, user->varattno);
	return context->disjoint;
}

/*
 * The partitions' sums that release reads instead of per-user states, or
 * NULL: user_sums FILTER (its filter), for a count (no value, [0, 0]) or a
 * mean or sum whose bounds are constants (and no tau), when the
 * partitions' users are disjoint.  Each branch then keeps only its
 * partition's user ids.
 */
static Aggref *
sums_call(Aggref *release, Var *user, List *params, UldpShardClamp clamp,
		  RewriteContext *context)
{
	char	   *finalfn = uldp_aggregate_support_name(release->aggfnoid, true);
	bool		average = strcmp(finalfn, "mean_finalfn") == 0 ||
		strcmp(finalfn, "mean_ci_finalfn") == 0;
	Expr	   *value;
	Const	   *lower;
	Const	   *upper;
	Oid			sums_agg;

	if (clamp == ULDP_CLAMP_COUNT)
	{
		value = (Expr *) uldp_shard_float8(0);
		lower = upper = uldp_shard_float8(0);
	}
	else
	{
		List	   *folded;

		if (!(average || clamp == ULDP_CLAMP_TO_MAGNITUDE) || list_length(params) != 3)
			return NULL;
		folded = (List *) eval_const_expressions(NULL, (Node *) copyObject(params));
		lower = lsecond(folded);
		upper = lthird(folded);
		if (!IsA(lower, Const) || !IsA(upper, Const) || lower->constisnull || upper->constisnull)
			return NULL;
		value = copyObject(linitial_node(TargetEntry, release->args)->expr);
	}
	sums_agg = partition_aggregate("user_sums", exprType((Node *) value));
	if (!users_disjoint(user, context) || !OidIsValid(sums_agg))
		return NULL;
	return partition_call(sums_agg, release, value, user, lower, upper, average);
}

/*
 * The partitions' sorted values that a mean, sum or range reads instead of
 * per-user states when the partitions' users are disjoint and it needs
 * every user's value (no bounds, one, or tau), or NULL: user_values
 * FILTER (its filter) of each user's average (means and ranges, rows
 * clamped to the bounds) or total, clamped to the bounds; a bound not
 * given is +-ULDP_MAX_MAGNITUDE, as locally.  Bounds that are not
 * constants keep the per-user merge.
 */
static Aggref *
values_call(Aggref *release, Var *user, List *params, UldpShardClamp clamp,
			RewriteContext *context)
{
	Expr	   *value;
	Const	   *lower;
	Const	   *upper;
	Oid			values_agg;

	if (clamp == ULDP_CLAMP_COUNT)
		return NULL;
	if (list_length(params) >= 3)
	{
		List	   *folded = (List *) eval_const_expressions(NULL, (Node *) copyObject(params));

		lower = (Const *) uldp_shard_clamp_bound(lsecond(folded), -ULDP_MAX_MAGNITUDE);
		upper = (Const *) uldp_shard_clamp_bound(lthird(folded), ULDP_MAX_MAGNITUDE);
		if (!IsA(lower, Const) || !IsA(upper, Const))
			return NULL;
	}
	else
	{
		lower = uldp_shard_float8(-ULDP_MAX_MAGNITUDE);
		upper = uldp_shard_float8(ULDP_MAX_MAGNITUDE);
	}
	value = copyObject(linitial_node(TargetEntry, release->args)->expr);
	values_agg = partition_aggregate("user_values", exprType((Node *) value));
	if (!users_disjoint(user, context) || !OidIsValid(values_agg))
		return NULL;
	return partition_call(values_agg, release, value, user, lower, upper,
						  clamp == ULDP_CLAMP_TO_BOUNDS);
}

/* Registers one release of the statement with its state column. */
static void
add_release(Aggref *release, RewriteContext *context)
{
	UldpShardClamp clamp;
	ShardRelease *shard_release = palloc0(sizeof(ShardRelease));
	Aggref	   *state;
	Oid			state_agg;
	ListCell   *lc;

	if (!uldp_shard_release(release, context->varno, &context->user, &clamp,
							&shard_release->params, &context->reason))
		return;
	state_agg = state_aggregate(clamp == ULDP_CLAMP_COUNT ? FLOAT8OID :
								exprType((Node *) linitial_node(TargetEntry, release->args)->expr));
	if (!OidIsValid(state_agg))
	{
		context->reason = "Extension uldp_shard is not installed on the coordinator: its state aggregates must exist here to be shipped.";
		return;
	}
	shard_release->release = release;
	shard_release->merge = merge_aggregate(release, list_length(shard_release->params));
	if (!OidIsValid(shard_release->merge))
	{
		context->reason = psprintf("uldp has no merge of %s over shards.", format_procedure(release->aggfnoid));
		return;
	}
	state = sums_call(release, context->user, shard_release->params, clamp, context);
	if (state == NULL)
		state = values_call(release, context->user, shard_release->params, clamp, context);
	if (state == NULL)
		state = state_call(release, context->user, shard_release->params, clamp, state_agg);
	foreach(lc, context->states)
		if (equal(lfirst(lc), state))
			shard_release->column = foreach_current_index(lc) + 1;
	if (shard_release->column == 0)
	{
		context->states = lappend(context->states, state);
		shard_release->column = list_length(context->states);
	}
	context->releases = lappend(context->releases, shard_release);
}

/* Finds the statement's releases; anything else over the rows is a reason. */
static bool
find_releases_walker(Node *node, RewriteContext *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *aggref = (Aggref *) node;

		if (getExtensionOfObject(ProcedureRelationId, aggref->aggfnoid) != context->uldp)
		{
			if (context->reason == NULL)
				context->reason = psprintf("%s is not a uldp release.", format_procedure(aggref->aggfnoid));
		}
		else if (context->reason == NULL)
			add_release(aggref, context);
		return false;
	}
	if (IsA(node, Var) && context->reason == NULL)
		context->reason = "It reads columns outside its releases.";
	return expression_tree_walker(node, find_releases_walker, (void *) context);
}

/* Each release, reading its state column of the subquery (entry varno). */
static Node *
merge_mutator(Node *node, RewriteContext *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
	{
		ListCell   *lc;

		foreach(lc, context->releases)
		{
			ShardRelease *shard_release = lfirst(lc);
			Aggref	   *release = shard_release->release;
			Aggref	   *merge;
			List	   *args;
			List	   *argtypes;
			ListCell   *param;

			if (!equal(node, release))
				continue;
			merge = copyObject(release);
			args = list_make2(makeTargetEntry((Expr *) makeVar(context->varno, shard_release->column,
																BYTEAOID, -1, InvalidOid, 0),
											  1, NULL, false),
							  makeTargetEntry((Expr *) makeNullConst(context->user->vartype,
																	 context->user->vartypmod,
																	 context->user->varcollid),
											  2, NULL, false));
			argtypes = list_make2_oid(BYTEAOID, context->user->vartype);
			foreach(param, shard_release->params)
			{
				args = lappend(args, makeTargetEntry(copyObject(lfirst(param)), list_length(args) + 1,
													 NULL, false));
				argtypes = lappend_oid(argtypes, FLOAT8OID);
			}
			merge->aggfnoid = shard_release->merge;
			merge->args = args;
			merge->aggargtypes = argtypes;
			merge->aggfilter = NULL;
			merge->aggtranstype = InvalidOid;
			merge->aggno = -1;
			merge->aggtransno = -1;
			return (Node *) merge;
		}
		elog(ERROR, "uldp release not found while rewriting it over shards");
	}
	return expression_tree_mutator(node, merge_mutator, (void *) context);
}

/* Is there anything in query but SELECT <releases> FROM <one table> WHERE ...? */
static const char *
shape_reason(Query *query)
{
	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL || query->rowMarks != NIL)
		return "Only SELECT can release over it.";
	if (query->groupingSets != NIL)
		return "GROUPING SETS are not shipped to shards.";
	if (list_length(query->rtable) != 1)
		return "It is joined with other tables, which the shards do not hold.";
	if (query->hasSubLinks || query->cteList != NIL || query->setOperations != NULL ||
		query->hasWindowFuncs || query->hasTargetSRFs || query->distinctClause != NIL)
		return "Subqueries, CTEs, set operations, window functions and DISTINCT are not shipped to shards.";
	if (((RangeTblEntry *) linitial(query->rtable))->tablesample != NULL)
		return "TABLESAMPLE is not shipped to shards.";
	return NULL;
}

/*
 * The ungrouped releases of query over its entry varno, rewritten into
 * merges of the shards' per-user states; false if it cannot (*reason).
 */
static bool
rewrite_merges(Query *query, Index varno, List *checks, List **state_aggs, const char **reason)
{
	RangeTblEntry *rte = rt_fetch(varno, query->rtable);
	RewriteContext context = {0};
	UldpShardColumns columns = {0};
	UldpShipping shipping = {0};
	Relation	parent;
	Node	   *quals;
	List	   *names = NIL;
	Query	   *states;
	ListCell   *lc;

	context.relid = rte->relid;
	context.varno = varno;
	context.disjoint = -1;
	context.uldp = get_extension_oid("uldp", false);
	find_releases_walker((Node *) query->targetList, &context);
	if ((*reason = context.reason) != NULL)
		return false;

	shipping.uldp = context.uldp;
	columns.exprs = (List *) uldp_shard_shippable((Node *) context.states, &shipping);
	foreach(lc, columns.exprs)
		columns.names = lappend(columns.names, psprintf("state_%d", foreach_current_index(lc) + 1));
	quals = uldp_shard_shippable(query->jointree->quals, &shipping);
	parent = table_open(rte->relid, NoLock);
	states = uldp_shard_union(parent, &columns, quals, shipping.sublinks, parent->rd_rel->relowner);
	table_close(parent, NoLock);
	foreach(lc, columns.names)
		names = lappend(names, makeString(lfirst(lc)));

	query->targetList = (List *) merge_mutator((Node *) query->targetList, &context);
	query->jointree->quals = checks != NIL ? (Node *) make_ands_explicit(checks) : NULL;
	uldp_shard_replace_entry(query, varno, uldp_shard_subquery_entry(states, "shards", names));
	foreach(lc, columns.exprs)
		*state_aggs = list_append_unique_oid(*state_aggs, ((Aggref *) lfirst(lc))->aggfnoid);
	return true;
}

/* Does node hold an aggregate of uldp? */
static bool
uldp_aggregate_walker(Node *node, Oid *uldp)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) &&
		getExtensionOfObject(ProcedureRelationId, ((Aggref *) node)->aggfnoid) == *uldp)
		return true;
	return expression_tree_walker(node, uldp_aggregate_walker, (void *) uldp);
}

/*
 * Rewrites the releases of query over its entry varno, a protected table
 * kept on shards (uldp_table_sharded), into releases over what the shards
 * compute: merges of per-user states, or, grouped, releases over
 * per-(user, group) values (shardgroups.c).  "checks" are clauses without
 * columns to evaluate once before reading (gate.c), kept on the
 * coordinator.  Returns true if it did; otherwise *reason says why, unless
 * query releases nothing (then NULL: it is no release).  "gated": the role
 * may not read the table.
 */
bool
uldp_shard_rewrite(Query *query, Index varno, List *checks, bool gated,
				   UldpShardRewrites *rewrites, const char **reason)
{
	RangeTblEntry *rte = rt_fetch(varno, query->rtable);
	Oid			uldp = get_extension_oid("uldp", false);
	List	   *state_aggs = NIL;
	bool		rewritten;
	ListCell   *lc;

	*reason = NULL;
	/* a grouped release's registration (grouping.c) is no release */
	if (!rewrites->enabled || !query->hasAggs || uldp_grouping_is_registration(query) ||
		!(uldp_aggregate_walker((Node *) query->targetList, &uldp) ||
		  uldp_aggregate_walker(query->havingQual, &uldp)))
		return false;
	*reason = shape_reason(query);
	/*
	 * Remote estimates would contact the shards before the charge, and make
	 * the plan (pushed down or refused) depend on their statistics.
	 */
	if (*reason == NULL && gated)
		*reason = uldp_shard_remote_estimate_reason(rte->relid);
	if (*reason != NULL)
		return false;
	if (query->groupClause != NIL)
		rewritten = uldp_shard_rewrite_grouped(query, varno, checks, uldp_max_partition_rows,
											   &state_aggs, reason);
	else
		rewritten = rewrite_merges(query, varno, checks, &state_aggs, reason);
	if (!rewritten)
		return false;
	foreach(lc, state_aggs)
		rewrites->state_aggs = list_append_unique_oid(rewrites->state_aggs, lfirst_oid(lc));
	rewrites->table = get_rel_name(rte->relid);
	if (gated)
		rewrites->gated = rewrites->table;
	return true;
}

static bool
computes_state_walker(Node *node, const UldpShardRewrites *rewrites)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && list_member_oid(rewrites->state_aggs, ((Aggref *) node)->aggfnoid))
		return true;
	return expression_tree_walker(node, computes_state_walker, (void *) rewrites);
}

/* Does a node of the plan compute a state on the coordinator? */
static bool
plan_computes_state(Plan *plan, const UldpShardRewrites *rewrites)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	/* a foreign scan's own target list is computed by its shard */
	if (!IsA(plan, ForeignScan) &&
		(computes_state_walker((Node *) plan->targetlist, rewrites) ||
		 computes_state_walker((Node *) plan->qual, rewrites)))
		return true;
	foreach(lc, uldp_plan_children(plan))
		if (plan_computes_state(lfirst(lc), rewrites))
			return true;
	return plan_computes_state(plan->lefttree, rewrites) ||
		plan_computes_state(plan->righttree, rewrites);
}

/*
 * NULL if every state of the rewrites is computed by a shard in the plan;
 * else why not.
 */
const char *
uldp_shard_unpushed(PlannedStmt *stmt, const UldpShardRewrites *rewrites)
{
	ListCell   *lc;
	bool		local = plan_computes_state(stmt->planTree, rewrites);

	foreach(lc, stmt->subplans)
		local = local || plan_computes_state(lfirst(lc), rewrites);
	if (!local)
		return NULL;
	return "postgres_fdw would compute uldp_shard's states on the coordinator: the servers' \"extensions\" option must list uldp_shard, "
		"and the filter and values must be expressions the shards can run (built-in or uldp_shard's).";
}

/*
 * The aggregation of a branch: when postgres_fdw offers to compute it on
 * the shard, that is the only path kept, whatever the costs say.
 */
static void
state_paths_hook(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	List	   *foreign = NIL;
	ListCell   *lc;
	bool		computes_state = false;

	if (previous_upper_paths_hook)
		previous_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || output_rel->fdwroutine == NULL || !root->parse->hasAggs)
		return;
	foreach(lc, root->parse->targetList)
	{
		Aggref	   *aggref = (Aggref *) lfirst_node(TargetEntry, lc)->expr;

		if (IsA(aggref, Aggref) && (uldp_shard_aggregate_named(aggref->aggfnoid, "user_rows") ||
									uldp_shard_aggregate_named(aggref->aggfnoid, "user_sums") ||
									uldp_shard_aggregate_named(aggref->aggfnoid, "user_values") ||
									uldp_shard_aggregate_named(aggref->aggfnoid, "user_pairs") ||
									uldp_shard_aggregate_named(aggref->aggfnoid, "partition_check")))
			computes_state = true;
	}
	if (!computes_state)
		return;
	foreach(lc, output_rel->pathlist)
		if (IsA(lfirst(lc), ForeignPath))
			foreign = lappend(foreign, lfirst(lc));
	/*
	 * add_path may have discarded the FDW's path as no cheaper than a local
	 * one (with statistics that say the partition is empty): ask again, into
	 * an empty list.  postgres_fdw keeps its per-relation state in
	 * fdw_private and skips a relation that has one.
	 */
	if (foreign == NIL && output_rel->fdwroutine->GetForeignUpperPaths != NULL)
	{
		List	   *local = output_rel->pathlist;
		void	   *fdw_private = output_rel->fdw_private;

		output_rel->pathlist = NIL;
		output_rel->fdw_private = NULL;
		output_rel->fdwroutine->GetForeignUpperPaths(root, stage, input_rel, output_rel, extra);
		foreign = output_rel->pathlist;
		if (foreign == NIL)
		{
			output_rel->pathlist = local;
			output_rel->fdw_private = fdw_private;
			return;
		}
	}
	if (foreign == NIL)
		return;
	output_rel->pathlist = foreign;
	output_rel->partial_pathlist = NIL;
}

void
uldp_shard_rewrite_init(void)
{
	previous_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = state_paths_hook;
}

/*
 * Does a foreign scan return what a shard computed for a release over
 * shards: a partition's per-user state (uldp_shard.user_rows) or its
 * per-(user, group) values (uldp_shard.user_pairs, one value per group), or the check
 * of its size (uldp_shard.partition_check, no user)?  Then
 * *max_rows is the most users, or pairs, it returns: the rows its shard
 * checked its partition could hold, the bound written in the call.
 */
bool
uldp_shard_state_scan(ForeignScan *scan, double *max_rows)
{
	ListCell   *lc;
	bool		found = false;

	*max_rows = 0;
	foreach(lc, scan->fdw_scan_tlist)
	{
		Aggref	   *aggref = (Aggref *) lfirst_node(TargetEntry, lc)->expr;
		int			bound_arg;
		Const	   *bound;

		if (!IsA(aggref, Aggref))
			continue;
		if (uldp_shard_aggregate_named(aggref->aggfnoid, "user_rows"))
			bound_arg = 4;
		else if (uldp_shard_aggregate_named(aggref->aggfnoid, "user_values"))
			bound_arg = ULDP_SUMS_MODULUS_ARG + 2;
		else if (uldp_shard_aggregate_named(aggref->aggfnoid, "user_pairs"))
			bound_arg = 1;
		else if (uldp_shard_aggregate_named(aggref->aggfnoid, "partition_check") ||
				 uldp_shard_aggregate_named(aggref->aggfnoid, "user_sums"))
		{
			/* a few numbers, and no user */
			found = true;
			continue;
		}
		else
			continue;
		bound = (Const *) lfirst_node(TargetEntry, list_nth_cell(aggref->args, bound_arg))->expr;
		if (!IsA(bound, Const) || bound->constisnull)
			return false;
		*max_rows = Max(*max_rows, (double) DatumGetInt64(bound->constvalue));
		found = true;
	}
	return found;
}

/*
 * Does a foreign scan check a partition's size (uldp_shard.partition_check,
 * shardquery.c)?  Then *max_rows is the bound it checks, as written.
 */
bool
uldp_shard_size_checked(ForeignScan *scan, double *max_rows)
{
	ListCell   *lc;

	foreach(lc, scan->fdw_scan_tlist)
	{
		Aggref	   *aggref = (Aggref *) lfirst_node(TargetEntry, lc)->expr;
		Const	   *bound;

		if (!IsA(aggref, Aggref) || !uldp_shard_aggregate_named(aggref->aggfnoid, "partition_check"))
			continue;
		bound = (Const *) linitial_node(TargetEntry, aggref->args)->expr;
		if (!IsA(bound, Const) || bound->constisnull)
			return false;
		*max_rows = (double) DatumGetInt64(bound->constvalue);
		return true;
	}
	return false;
}

/*-------------------------------------------------------------------------
 *
 * gate.c
 *	  The query gate: roles that may not read a protected table may still
 *	  run differentially private releases over it, and nothing else.
 *
 * PostgreSQL's own privilege check stays the only door.  An analyst has no
 * SELECT privilege on a protected table, so without uldp every query that
 * reads it fails with "permission denied"; that includes COPY, sessions in
 * which uldp is not loaded, and any path that does not go through the
 * planner (fail closed).  The planner hook below looks at every query before
 * it is planned.  When a query reads a protected table that the checking
 * role may not read, the query must be a release, and only then does the
 * hook drop the SELECT requirement from that one range table entry:
 *
 *	SELECT <outputs> FROM <protected table> [JOIN <ordinary tables> ON ...]
 *	[WHERE <safe filter>] [GROUP BY <safe keys> [HAVING <condition>]]
 *	[ORDER BY <outputs>] [LIMIT ...]
 *
 * where every output is built from uldp aggregates, grouping keys and
 * constants, the aggregates' user argument is the table's privacy unit
 * column, and their value argument, FILTER clause, the grouping keys, the
 * join conditions and the WHERE clause are safe expressions (safe_expr.c:
 * nothing in them can raise an error that depends on a row or have a side
 * effect; what may fail on public values, such as a cast of a parameter, is
 * added to the WHERE clause once more, as a clause that PostgreSQL evaluates
 * once before the scan reads its first row).  The other tables of a join
 * are ordinary tables that the role may read: each joined row then comes
 * from one row of the protected table, and so from one user, whose
 * contribution the aggregates bound whatever its number of rows.  A join of
 * two protected tables is refused: one user's rows would reach the rows of
 * the other's users.  A grouped release is rewritten by grouping.c, which
 * bounds the groups per user and selects the groups privately; what
 * HAVING, ORDER BY and LIMIT then do with the released groups is
 * post-processing.  No subqueries in FROM, DISTINCT, GROUPING SETS, window
 * functions, set-returning functions, locking clauses or TABLESAMPLE.  Such
 * a release query may itself sit inside a bigger query (a scalar subquery,
 * a CTE, a plpgsql statement): what happens to its output rows is
 * post-processing of a differentially private result.
 *
 * Three more things would show per-row facts that the release hides, and
 * are refused or suppressed for gated queries:
 *	- EXPLAIN, with or without ANALYZE, and any instrumentation: estimated
 *	  and actual row counts come from the rows (checked at executor start,
 *	  after other hooks such as auto_explain had their say);
 *	- debug_print_plan, which prints the same estimates;
 *	- track_functions = all, which counts calls of the aggregate's
 *	  transition function per row in pg_stat_user_functions;
 *	- index and TID scans, which count matching rows in pg_stat_*_indexes:
 *	  gated queries are planned with sequential scans only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/partition.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "gate.h"
#include "groupjit.h"
#include "grouping.h"
#include "params.h"
#include "protect.h"
#include "releasekind.h"
#include "releaseworkers.h"
#include "safe_expr.h"
#include "shardrewrite.h"
#include "shardrows.h"

static planner_hook_type previous_planner_hook = NULL;
static ExecutorStart_hook_type previous_executor_start_hook = NULL;

void
uldp_gate_refuse_hint(const char *table, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("table \"%s\" is protected by uldp", table),
			 errdetail_internal("%s", detail),
			 errhint("%s", hint)));
}

void
uldp_gate_refuse(const char *table, const char *detail)
{
	uldp_gate_refuse_hint(table, detail,
						  "Without SELECT privilege on it, only releases are allowed: "
						  "SELECT of uldp aggregates over its privacy unit FROM it (joined with ordinary tables), "
						  "filtered and grouped with comparisons, boolean logic, IN lists, constants, arithmetic and date functions.");
}

/* Would PostgreSQL's executor let userid read what rte reads (ExecCheckRTEPerms)? */
static bool
select_allowed(RangeTblEntry *rte, Oid userid)
{
	int			col = -1;

	if (pg_class_aclcheck(rte->relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return true;
	if (bms_is_empty(rte->selectedCols))
		return pg_attribute_aclcheck_all(rte->relid, userid, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
	while ((col = bms_next_member(rte->selectedCols, col)) >= 0)
	{
		AttrNumber	attno = col + FirstLowInvalidHeapAttributeNumber;

		if (attno == InvalidAttrNumber)
		{
			if (pg_attribute_aclcheck_all(rte->relid, userid, ACL_SELECT, ACLMASK_ALL) != ACLCHECK_OK)
				return false;
		}
		else if (pg_attribute_aclcheck(rte->relid, attno, userid, ACL_SELECT) != ACLCHECK_OK)
			return false;
	}
	return true;
}

/* Does rte read a protected table its checking role may not read? */
static bool
is_gated(RangeTblEntry *rte, AttrNumber *privacy_unit)
{
	Oid			userid;

	if (rte->rtekind != RTE_RELATION)
		return false;
	userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	return !select_allowed(rte, userid) && uldp_table_protection(rte->relid, privacy_unit);
}

/*
 * Does rte read, itself or as one of its partitions, a protected table that
 * userid may not read?  (The planner checks privileges on the partitioned
 * table only, so a partition's own entry says nothing.)
 */
bool
uldp_gate_reads_protected_as(RangeTblEntry *rte, Oid userid)
{
	AttrNumber	privacy_unit;
	ListCell   *lc;

	if (rte->rtekind != RTE_RELATION)
		return false;
	if (!select_allowed(rte, userid) && uldp_table_protection(rte->relid, &privacy_unit))
		return true;
	if (!get_rel_relispartition(rte->relid))
		return false;
	foreach(lc, get_partition_ancestors(rte->relid))
		if (uldp_table_protection(lfirst_oid(lc), &privacy_unit) &&
			pg_class_aclcheck(lfirst_oid(lc), userid, ACL_SELECT) != ACLCHECK_OK)
			return true;
	return false;
}

/* The same, for the role that rte's reads are checked as. */
bool
uldp_gate_reads_protected(RangeTblEntry *rte)
{
	return uldp_gate_reads_protected_as(rte, OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId());
}

/* The protected table a release query reads. */
typedef struct Protected
{
	Index		varno;			/* its range table index */
	AttrNumber	privacy_unit;
	const char *table;
	const char *unit_name;
	List	   *checks;			/* clauses to evaluate before reading (safe_expr.c) */
	List	   *keys;			/* the grouping keys, once made safe */
} Protected;

/*
 * Does the aggregate merge per-user states (uldp.user_dp_mean and its
 * siblings over shards' states) rather than read rows?  Its transition
 * function says.
 */
static bool
merges_states(Oid aggfnoid)
{
	char	   *transfn = uldp_aggregate_support_name(aggfnoid, false);

	return transfn != NULL && strcmp(transfn, "user_merge_transfn") == 0;
}

/*
 * A release is accepted by identity (releasekind.c), not for being a
 * function of uldp: an aggregate that a role could reach through a foreign
 * table, or that reads something other than rows, must not count as one.
 */
static void
check_aggref(Aggref *aggref, Protected *target)
{
	ListCell   *lc;
	int			argno = 0;
	int			user_argno;

	/*
	 * A state is many users' rows: read from one row of a protected table,
	 * it would let one user's row count as any number of users.
	 */
	if (merges_states(aggref->aggfnoid))
		uldp_gate_refuse_hint(target->table,
							  psprintf("Aggregate %s merges per-user states of shards; a protected table's rows are not states.",
									   format_procedure(aggref->aggfnoid)),
							  "Call the release of the same name in the public schema on the table's rows.");
	if (!uldp_is_release(aggref->aggfnoid))
		uldp_gate_refuse(target->table, psprintf("Aggregate %s is not a uldp release.",
												 format_procedure(aggref->aggfnoid)));
	if (aggref->agglevelsup != 0 || aggref->aggdistinct != NIL || aggref->aggorder != NIL ||
		aggref->aggstar || aggref->aggvariadic || aggref->aggkind != AGGKIND_NORMAL)
		uldp_gate_refuse(target->table,
						 "DISTINCT, ORDER BY and outer references are not allowed in a uldp aggregate.");

	user_argno = uldp_user_argument(aggref->aggfnoid);

	foreach(lc, aggref->args)
	{
		TargetEntry *arg = lfirst_node(TargetEntry, lc);

		if (argno == user_argno)
		{
			Var		   *user = (Var *) arg->expr;

			if (!IsA(user, Var) || user->varno != target->varno || user->varlevelsup != 0 ||
				user->varattno != target->privacy_unit)
				uldp_gate_refuse(target->table,
								 psprintf("The user argument of %s must be the privacy unit column \"%s\".",
										  format_procedure(aggref->aggfnoid), target->unit_name));
		}
		else
		{
			if (argno > user_argno && contain_var_clause((Node *) arg->expr))
				uldp_gate_refuse(target->table,
								 "The privacy parameters of a uldp aggregate must be constants.");
			arg->expr = (Expr *) uldp_safe_expr((Node *) arg->expr, target->table, &target->checks);
		}
		argno++;
	}
	aggref->aggfilter = (Expr *) uldp_safe_expr((Node *) aggref->aggfilter, target->table,
												&target->checks);
}

/*
 * Outputs: uldp aggregates, grouping keys, and anything computed from them
 * and constants.  What is computed from the keys is computed per released
 * group, after its selection.
 */
static bool
check_output(Node *node, Protected *target)
{
	ListCell   *lc;

	if (node == NULL)
		return false;
	foreach(lc, target->keys)
		if (equal(node, lfirst(lc)))
			return false;
	if (IsA(node, Aggref))
	{
		check_aggref((Aggref *) node, target);
		return false;			/* its arguments are checked above */
	}
	if (IsA(node, Var))
		uldp_gate_refuse(target->table, "Raw rows are not released: only uldp aggregates are.");
	return expression_tree_walker(node, check_output, (void *) target);
}

/*
 * The other entries of a release's range table: joins, and ordinary tables
 * the role may read (PostgreSQL checks that), not protected ones.
 */
static void
check_joined(Query *query, Index varno, Protected *target)
{
	Index		index = 0;
	ListCell   *lc;

	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		AttrNumber	privacy_unit;

		if (++index == varno || rte->rtekind == RTE_JOIN)
			continue;
		if (rte->rtekind != RTE_RELATION)
			uldp_gate_refuse(target->table,
							 "It can only be joined with tables: no subqueries, functions, VALUES or CTEs in the same FROM.");
		if (uldp_table_protection(rte->relid, &privacy_unit) || uldp_gate_reads_protected(rte))
			uldp_gate_refuse_hint(target->table,
								  psprintf("It is joined with \"%s\", which uldp protects too.", get_rel_name(rte->relid)),
								  "One user's rows would reach the rows of the other table's users: release over each protected table separately.");
		if (rte->tablesample != NULL)
			uldp_gate_refuse(target->table, "TABLESAMPLE is not allowed.");
	}
}

/* Makes the join conditions of a release safe (safe_expr.c). */
static void
check_join_tree(Node *node, Protected *target)
{
	if (node == NULL || IsA(node, RangeTblRef))
		return;
	if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			check_join_tree(lfirst(lc), target);
		return;
	}
	if (IsA(node, JoinExpr))
	{
		JoinExpr   *join = (JoinExpr *) node;

		check_join_tree(join->larg, target);
		check_join_tree(join->rarg, target);
		join->quals = uldp_safe_expr(join->quals, target->table, &target->checks);
		return;
	}
	uldp_gate_refuse(target->table, "Its FROM clause holds something other than tables and joins.");
}

/*
 * Refuse query unless it is a release over its range table entry varno, a
 * protected table; rewrite its per-row expressions to their safe versions.
 * Returns the clauses, without columns, that must hold before it reads a
 * row (safe_expr.c).
 */
static List *
check_release(Query *query, Index varno, RangeTblEntry *rte, AttrNumber privacy_unit)
{
	Protected	target = {varno, privacy_unit, get_rel_name(rte->relid), NULL, NIL, NIL};
	FromExpr   *from = query->jointree;
	ListCell   *lc;

	if (privacy_unit == InvalidAttrNumber)
		uldp_gate_refuse(target.table, "It has no privacy unit column; uldp.protect_table sets one.");
	target.unit_name = get_attname(rte->relid, privacy_unit, false);

	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL || query->rowMarks != NIL)
		uldp_gate_refuse(target.table, "Only SELECT can read it.");
	if (!query->hasAggs)
		uldp_gate_refuse(target.table, "Raw rows are not released: only uldp aggregates are.");
	if (from == NULL || query->cteList != NIL || query->setOperations != NULL || query->hasSubLinks)
		uldp_gate_refuse(target.table,
						 "No subqueries, CTEs or set operations in the same SELECT.");
	check_joined(query, varno, &target);
	if (rte->tablesample != NULL)
		uldp_gate_refuse(target.table, "TABLESAMPLE is not allowed.");
	if (query->groupingSets != NIL)
		uldp_gate_refuse(target.table, "GROUPING SETS, ROLLUP and CUBE are not allowed: group by plain keys.");
	if (query->havingQual != NULL && query->groupClause == NIL)
		uldp_gate_refuse(target.table, "HAVING needs GROUP BY.");
	if (query->distinctClause != NIL || query->hasWindowFuncs || query->hasTargetSRFs)
		uldp_gate_refuse(target.table,
						 "DISTINCT, window functions and set-returning functions are not allowed.");
	if (query->limitCount != NULL && contain_var_clause(query->limitCount))
		uldp_gate_refuse(target.table, "LIMIT must be a constant.");

	/* the grouping keys: computed per row, then released with their groups */
	foreach(lc, query->groupClause)
	{
		TargetEntry *key = get_sortgroupclause_tle(lfirst_node(SortGroupClause, lc), query->targetList);

		if (IsA(key->expr, Var) && ((Var *) key->expr)->varno == varno &&
			((Var *) key->expr)->varattno == privacy_unit)
			uldp_gate_refuse_hint(target.table,
								  psprintf("It is grouped by its privacy unit \"%s\".", target.unit_name),
								  "Each group would hold one user: group by a property that many users share.");
		key->expr = (Expr *) uldp_safe_expr((Node *) key->expr, target.table, &target.checks);
		target.keys = lappend(target.keys, key->expr);
	}
	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		check_output((Node *) tle->expr, &target);
		if (contain_volatile_functions((Node *) tle->expr))
			uldp_gate_refuse(target.table, "Volatile functions, which may have side effects, are not allowed.");
	}
	check_output(query->havingQual, &target);
	if (contain_volatile_functions(query->havingQual))
		uldp_gate_refuse(target.table, "Volatile functions, which may have side effects, are not allowed.");
	check_join_tree((Node *) from, &target);
	from->quals = uldp_safe_expr(from->quals, target.table, &target.checks);
	return target.checks;
}

/* What the gate did to a statement while it was planned. */
typedef struct GateContext
{
	const char *gated;			/* a protected table read as a release */
	UldpShardRewrites shards;	/* its releases over shards (shardrewrite.c) */
} GateContext;

/*
 * A release over a table kept on shards by a role that may read it: it
 * ships rows unless it is rewritten, and the DBA is told why not.  Returns
 * true if it rewrote it.
 */
static bool
rewrite_readable(Query *query, Index varno, RangeTblEntry *rte, GateContext *context)
{
	AttrNumber	privacy_unit;
	const char *reason;

	if (!context->shards.enabled || rte->rtekind != RTE_RELATION ||
		!uldp_table_protection(rte->relid, &privacy_unit) || !uldp_table_sharded(rte->relid))
		return false;
	if (uldp_shard_rewrite(query, varno, NIL, false, &context->shards, &reason))
		return true;
	if (reason != NULL)
		ereport(NOTICE,
				(errmsg("uldp ships the rows of \"%s\" from its shards", get_rel_name(rte->relid)),
				 errdetail_internal("%s", reason),
				 errhint("Releases over it by roles that may not read it are refused.")));
	return false;
}

/*
 * Check one query level; drop the SELECT requirement of the protected
 * entries it reads as a release, or rewrite releases over tables kept on
 * shards (shardrewrite.c).
 */
static void
gate_query(Query *query, GateContext *context)
{
	Index		varno = 0;
	ListCell   *lc;

	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		AttrNumber	privacy_unit;
		List	   *checks;
		const char *reason;

		varno++;
		if (!(rte->requiredPerms & ACL_SELECT) || !is_gated(rte, &privacy_unit))
		{
			if (rewrite_readable(query, varno, rte, context))
				return;			/* the entry is now the shards' states */
			continue;
		}
		checks = check_release(query, varno, rte, privacy_unit);
		rte->requiredPerms &= ~ACL_SELECT;
		context->gated = get_rel_name(rte->relid);
		if (uldp_table_sharded(rte->relid))
		{
			/*
			 * The shards compute the release's part, or else send their
			 * rows, behind a check of their sizes (shardrows.c).
			 */
			if (!context->shards.ship_rows &&
				uldp_shard_rewrite(query, varno, checks, true, &context->shards, &reason))
				return;			/* the entry is now the shards' states */
			if (!context->shards.ship_rows && reason == NULL)
				uldp_gate_refuse(context->gated, "It releases nothing.");
			if (!uldp_shard_ship_rows(query, varno, checks,
									  context->shards.ship_rows ? context->shards.why : reason,
									  &context->shards, &reason))
				uldp_gate_refuse_hint(context->gated, reason,
									  "Ask the DBA to install uldp_shard on the coordinator and to turn use_remote_estimate off.");
			return;				/* the entry is now the partitions' rows */
		}
		/* evaluated once, before the scan reads a row: a clause without columns */
		if (checks != NIL)
			query->jointree->quals = make_and_qual(query->jointree->quals,
												   (Node *) make_ands_explicit(checks));
	}
}

/*
 * Visit every query level (range table subqueries, CTEs, sublinks): check
 * the releases over gated tables, then rewrite grouped releases
 * (grouping.c), whose added calls are uldp's own and need no check.
 */
static bool
gate_walker(Node *node, GateContext *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *query = (Query *) node;

		gate_query(query, context);
		uldp_grouping_rewrite(query);
		return query_tree_walker(query, gate_walker, (void *) context, 0);
	}
	return expression_tree_walker(node, gate_walker, (void *) context);
}

/*
 * What uldp decides of a plan with releases that PostgreSQL decided
 * without knowing them: JIT (groupjit.c) and the number of workers
 * (releaseworkers.c); then what the planning of an enclosing statement, if
 * this one was planned within it, had found is restored.
 */
static void
finish_plan(PlannedStmt *plan, bool outer_many_users)
{
	uldp_group_jit(plan);
	uldp_cap_release_workers(plan);
	uldp_release_workers_end(outer_many_users);
}

/* Plans a statement checked by the gate. */
static PlannedStmt *
plan_checked(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams,
			 const GateContext *context)
{
	int			nest_level;
	PlannedStmt *plan;
	static const char *const scan_settings[][2] = {
		{"enable_seqscan", "on"}, {"enable_indexscan", "off"}, {"enable_indexonlyscan", "off"},
		{"enable_bitmapscan", "off"}, {"enable_tidscan", "off"},
	};
	bool		outer_many_users = uldp_release_workers_begin();

	if (!context->gated)
	{
		if (previous_planner_hook)
			plan = previous_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			plan = standard_planner(parse, query_string, cursorOptions, boundParams);
		finish_plan(plan, outer_many_users);
		return plan;
	}

	if (Debug_print_plan)
		uldp_gate_refuse(context->gated, "debug_print_plan would print row estimates of a protected table.");
	/* restored when planning ends, or by the abort if it fails */
	nest_level = NewGUCNestLevel();
	for (int i = 0; i < lengthof(scan_settings); i++)
		(void) set_config_option(scan_settings[i][0], scan_settings[i][1], PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (previous_planner_hook)
		plan = previous_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		plan = standard_planner(parse, query_string, cursorOptions, boundParams);
	AtEOXact_GUC(true, nest_level);
	finish_plan(plan, outer_many_users);
	return plan;
}

/*
 * Checks and rewrites a statement, then plans it.  A release rewritten over
 * shards whose states postgres_fdw would not compute on the shards is
 * planned again: for a role that may not read the table, reading the
 * partitions' rows behind a check of their sizes (shardrows.c), which the
 * shards must run, or it is refused; for one that may, as written.
 */
static PlannedStmt *
gate_planner(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	GateContext context = {0};
	Query	   *original = NULL;
	PlannedStmt *plan;
	const char *unpushed;

	if (uldp_query_reads_shards(parse))
	{
		original = copyObject(parse);
		context.shards.enabled = true;
	}
	gate_walker((Node *) parse, &context);
	plan = plan_checked(parse, query_string, cursorOptions, boundParams, &context);
	if (context.shards.table == NULL ||
		(unpushed = uldp_shard_unpushed(plan, &context.shards)) == NULL)
		return plan;
	if (context.shards.gated && context.shards.ship_rows)
		uldp_gate_refuse_hint(context.shards.gated, unpushed,
							  "Ask the DBA to list uldp_shard in the foreign servers' extensions option.");
	if (context.shards.gated)
	{
		memset(&context, 0, sizeof(context));
		context.shards.enabled = true;
		context.shards.ship_rows = true;
		context.shards.why = unpushed;
		gate_walker((Node *) original, &context);
		plan = plan_checked(original, query_string, cursorOptions, boundParams, &context);
		if ((unpushed = uldp_shard_unpushed(plan, &context.shards)) != NULL)
			uldp_gate_refuse_hint(context.shards.gated, unpushed,
								  "Ask the DBA to list uldp_shard in the foreign servers' extensions option.");
		return plan;
	}
	ereport(NOTICE,
			(errmsg("uldp ships the rows of \"%s\" from its shards", context.shards.table),
			 errdetail_internal("%s", unpushed),
			 errhint("Releases over it by roles that may not read it are refused.")));
	memset(&context, 0, sizeof(context));
	gate_walker((Node *) original, &context);
	return plan_checked(original, query_string, cursorOptions, boundParams, &context);
}

static void
gate_executor_start(QueryDesc *queryDesc, int eflags)
{
	const char *reason = NULL;
	ListCell   *lc;

	if (previous_executor_start_hook)
		previous_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		reason = "EXPLAIN would show row estimates drawn from its rows.";
	else if (queryDesc->instrument_options != 0)
		reason = "EXPLAIN ANALYZE and other instrumentation would show row counts of its rows.";
	else if (pgstat_track_functions == TRACK_FUNC_ALL)
		reason = "track_functions = all would count the rows a release reads; "
			"an administrator must set it to none or pl.";
	if (reason == NULL)
		return;
	foreach(lc, queryDesc->plannedstmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		AttrNumber	privacy_unit;

		if (is_gated(rte, &privacy_unit))
			uldp_gate_refuse(get_rel_name(rte->relid), reason);
	}
}

void
uldp_gate_init(void)
{
	previous_planner_hook = planner_hook;
	planner_hook = gate_planner;
	previous_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = gate_executor_start;
}

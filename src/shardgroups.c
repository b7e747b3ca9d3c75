/*-------------------------------------------------------------------------
 *
 * shardgroups.c
 *	  Grouped releases over shards: releases over the per-(user, group)
 *	  values that the shards compute.
 *
 * A grouped release reads, for each user and group, one value: the mean of
 * the user's clamped rows in the group (means, ranges), or their total
 * (sums), or only that the user has rows there (counts).  The shards can
 * compute these for their partitions, so (shardrewrite.c calls this)
 *
 *	SELECT k, user_dp_mean(v, u, eps, lo, hi), user_dp_count(u, eps2) FILTER (WHERE f)
 *	FROM t WHERE w GROUP BY k HAVING h
 *
 * becomes
 *
 *	WITH uldp_shard_pairs AS MATERIALIZED (
 *		SELECT uldp_shard.pair_user(u, max_rows), k,
 *			   uldp_shard.user_mean(v, lo, hi), bool_or(f), u
 *		FROM ONLY t_1 WHERE w GROUP BY u, k
 *		UNION ALL ... one branch per leaf partition ...)
 *	SELECT s.key_1, user_dp_mean(s.value_1, s.user_id, eps, lo, hi),
 *		   user_dp_count(s.user_id, eps2) FILTER (WHERE s.value_2)
 *	FROM uldp_shard_pairs s
 *	WHERE <the gate's checks>
 *	  AND (SELECT count(c.checked) FROM (SELECT uldp_shard.partition_check(max_rows)
 *										FROM ONLY t_1 WHERE ctid < '(0,0)' UNION ALL ...) c)
 *		  IS NOT NULL
 *	GROUP BY s.key_1 HAVING h
 *
 * and the coordinator's grouped release (grouping.c) runs over the pairs as
 * over rows, which it reads twice (to register every user's groups, then
 * to aggregate) from the CTE, so that the shards compute and send them
 * once: each pair is one row of its user in its group, whose value is
 * what the local transition function would compute from the user's rows
 * there, so the contribution bound, the partition selection and every
 * release are those of the same statement on one node.  A user found in
 * two partitions is two rows of the same user, which the local machinery
 * treats as any two rows.  The value of a release with a FILTER is
 * computed over the rows that pass it (NULL if none, which the release
 * skips); a count's FILTER becomes whether any of the pair's rows passes.
 * A boolean mean without bounds gets its public bounds [0, 1] written out,
 * since its value is now a float8 (shardquery.c).
 *
 * Memory: the pairs of a partition are at most its rows, at most
 * max_rows (uldp.max_partition_rows): pair_user checks it on the shard at
 * its first row (every query of the pairs reads the user id, the
 * registration of grouping.c included, and so the bound reaches
 * statement.c in every scan), and the size check in WHERE, one state aggregate per
 * partition over no rows (a TID range that holds none), checks it before
 * any pair is read, whatever the rows, so that the error a too large
 * partition raises never depends on them.  statement.c bounds the
 * release's memory by max_rows pairs per partition.
 *
 * Keys declared public (uldp.set_public_groups) for a column grouped by
 * stay public: the pairs' key column keeps the column's origin, which
 * grouping.c reads.  Not rewritten (they ship rows, shardrows.c): releases
 * whose per-user value is not a mean or a total of rows (quantiles,
 * vectors, models).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/regproc.h"

#include "params.h"
#include "protect.h"
#include "shardgroups.h"
#include "shardquery.h"

/* One release of the statement, and the columns of the pairs it reads. */
typedef struct PairRelease
{
	Aggref	   *release;		/* as the statement writes it */
	Oid			function;		/* the same release over float8 values */
	List	   *params;			/* its parameters after the user id */
	int			value;			/* its value column, or 0 (counts) */
	int			filter;			/* its filter column (counts), or 0 */
} PairRelease;

typedef struct PairContext
{
	Index		varno;			/* the protected table's entry */
	Oid			relid;
	Var		   *user;			/* the releases' user argument */
	List	   *keys;			/* the grouping keys, over the table */
	UldpShardColumns columns;	/* of the branches: user, keys, values */
	List	   *releases;		/* PairRelease */
	Oid			uldp;
	const char *reason;
} PairContext;

/* Column number of expr among the branches' columns, added if new. */
static int
pair_column(PairContext *context, Expr *expr, const char *name)
{
	ListCell   *lc;

	foreach(lc, context->columns.exprs)
		if (equal(lfirst(lc), expr))
			return foreach_current_index(lc) + 1;
	context->columns.exprs = lappend(context->columns.exprs, expr);
	context->columns.names = lappend(context->columns.names,
									 psprintf("%s_%d", name, list_length(context->columns.exprs)));
	return list_length(context->columns.exprs);
}

/* uldp_shard.<name>(argtypes), or InvalidOid with a reason. */
static Oid
shard_aggregate(PairContext *context, const char *name, const Oid *argtypes, int nargs)
{
	Oid			aggfnoid = uldp_shard_function("uldp_shard", "uldp_shard", name, argtypes, nargs);

	if (!OidIsValid(aggfnoid) && context->reason == NULL)
		context->reason = "Extension uldp_shard is not installed on the coordinator: its aggregates must exist here to be shipped.";
	return aggfnoid;
}

static void
add_release(Aggref *release, PairContext *context)
{
	PairRelease *pair = palloc0(sizeof(PairRelease));
	UldpShardClamp clamp;
	Oid			argtypes[FUNC_MAX_ARGS];
	int			nargs = 0;

	if (!uldp_shard_release(release, context->varno, &context->user, &clamp, &pair->params,
							&context->reason))
		return;
	pair->release = release;
	if (clamp == ULDP_CLAMP_COUNT)
	{
		pair->function = release->aggfnoid;
		if (release->aggfilter != NULL)
			pair->filter = pair_column(context,
									   (Expr *) uldp_make_aggref(F_BOOL_OR, BOOLOID,
																  list_make1(copyObject(release->aggfilter)),
																  NULL, InvalidOid),
									   "filter");
	}
	else
	{
		Expr	   *value = copyObject(linitial_node(TargetEntry, release->args)->expr);
		Oid			value_type = exprType((Node *) value);
		Oid			mean_args[] = {value_type, FLOAT8OID, FLOAT8OID};
		Aggref	   *call;

		if (clamp == ULDP_CLAMP_TO_BOUNDS)
			call = uldp_make_aggref(shard_aggregate(context, "user_mean", mean_args, 3), FLOAT8OID,
									 list_make3(value,
												uldp_shard_clamp_bound(list_length(pair->params) >= 3 ?
																	   lsecond(pair->params) : NULL,
																	   -ULDP_MAX_MAGNITUDE),
												uldp_shard_clamp_bound(list_length(pair->params) >= 3 ?
																	   lthird(pair->params) : NULL,
																	   ULDP_MAX_MAGNITUDE)),
									 copyObject(release->aggfilter), InvalidOid);
		else
			call = uldp_make_aggref(shard_aggregate(context, "user_total", &value_type, 1), FLOAT8OID,
									 list_make1(value), copyObject(release->aggfilter), InvalidOid);
		if (context->reason != NULL)
			return;
		pair->value = pair_column(context, (Expr *) call, "value");
		/* the same release over the pairs' float8 values */
		argtypes[nargs++] = FLOAT8OID;
		argtypes[nargs++] = ANYELEMENTOID;
		for (int i = 0; i < list_length(pair->params) && nargs < FUNC_MAX_ARGS; i++)
			argtypes[nargs++] = FLOAT8OID;
		pair->function = uldp_shard_function("uldp", get_namespace_name(get_func_namespace(release->aggfnoid)),
											 get_func_name(release->aggfnoid), argtypes, nargs);
		if (!OidIsValid(pair->function))
		{
			context->reason = psprintf("%s has no form over float8 values.", format_procedure(release->aggfnoid));
			return;
		}
	}
	context->releases = lappend(context->releases, pair);
}

/* Finds the releases among the outputs; a column outside keys is a reason. */
static bool
find_releases_walker(Node *node, PairContext *context)
{
	ListCell   *lc;

	if (node == NULL || context->reason != NULL)
		return false;
	foreach(lc, context->keys)
		if (equal(node, lfirst(lc)))
			return false;
	if (IsA(node, Aggref))
	{
		if (getExtensionOfObject(ProcedureRelationId, ((Aggref *) node)->aggfnoid) != context->uldp)
			context->reason = psprintf("%s is not a uldp release.",
									   format_procedure(((Aggref *) node)->aggfnoid));
		else
			add_release((Aggref *) node, context);
		return false;
	}
	if (IsA(node, Var))
	{
		context->reason = "It reads columns outside its releases and grouping keys.";
		return false;
	}
	return expression_tree_walker(node, find_releases_walker, (void *) context);
}

static Var *
column_var(PairContext *context, int column)
{
	Expr	   *expr = list_nth(context->columns.exprs, column - 1);

	return makeVar(context->varno, column, exprType((Node *) expr), exprTypmod((Node *) expr),
				   exprCollation((Node *) expr), 0);
}

/* Keys and releases of the outputs, over the pairs' columns. */
static Node *
pairs_mutator(Node *node, PairContext *context)
{
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	foreach(lc, context->keys)
		if (equal(node, lfirst(lc)))
			return (Node *) column_var(context, foreach_current_index(lc) + 2);
	if (IsA(node, Aggref))
	{
		foreach(lc, context->releases)
		{
			PairRelease *pair = lfirst(lc);
			Aggref	   *release = copyObject(pair->release);
			List	   *args = NIL;
			List	   *argtypes = NIL;
			ListCell   *param;

			if (!equal(node, pair->release))
				continue;
			if (pair->value != 0)
			{
				args = lappend(args, column_var(context, pair->value));
				argtypes = lappend_oid(argtypes, FLOAT8OID);
			}
			args = lappend(args, column_var(context, 1));
			argtypes = lappend_oid(argtypes, context->user->vartype);
			foreach(param, pair->params)
			{
				args = lappend(args, copyObject(lfirst(param)));
				argtypes = lappend_oid(argtypes, exprType(lfirst(param)));
			}
			release->aggfnoid = pair->function;
			release->args = NIL;
			foreach(param, args)
				release->args = lappend(release->args,
										makeTargetEntry(lfirst(param), foreach_current_index(param) + 1,
														NULL, false));
			release->aggargtypes = argtypes;
			release->aggfilter = pair->filter != 0 ? (Expr *) column_var(context, pair->filter) : NULL;
			release->aggtranstype = InvalidOid;
			release->aggno = -1;
			release->aggtransno = -1;
			return (Node *) release;
		}
		elog(ERROR, "uldp release not found while rewriting it over shards");
	}
	return expression_tree_mutator(node, pairs_mutator, (void *) context);
}

/*
 * Rewrites the grouped releases of query over its entry varno, a protected
 * table kept on shards, into releases over the pairs the shards compute;
 * false if it cannot (*reason).  shard_aggs gets the aggregates that must
 * run on the shards.
 */
bool
uldp_shard_rewrite_grouped(Query *query, Index varno, List *checks, int max_rows,
						   List **shard_aggs, const char **reason)
{
	RangeTblEntry *rte = rt_fetch(varno, query->rtable);
	PairContext context = {0};
	UldpShipping shipping = {0};
	Oid			user_args[] = {ANYELEMENTOID, INT8OID};
	Relation	parent;
	Query	   *pairs;
	Node	   *quals;
	Node	   *check;
	List	   *names = NIL;
	ListCell   *lc;

	context.varno = varno;
	context.relid = rte->relid;
	context.uldp = get_extension_oid("uldp", false);
	foreach(lc, query->groupClause)
		context.keys = lappend(context.keys,
							   get_sortgroupclause_tle(lfirst_node(SortGroupClause, lc), query->targetList)->expr);
	/* columns: the user id (known once a release is found), then the keys */
	context.columns.exprs = list_make1(NULL);
	context.columns.names = list_make1("user_id");
	foreach(lc, context.keys)
	{
		context.columns.exprs = lappend(context.columns.exprs, copyObject(lfirst(lc)));
		context.columns.names = lappend(context.columns.names, psprintf("key_%d", foreach_current_index(lc) + 1));
		context.columns.grouped = bms_add_member(context.columns.grouped, foreach_current_index(lc) + 2);
	}
	find_releases_walker((Node *) query->targetList, &context);
	find_releases_walker(query->havingQual, &context);
	if (context.reason == NULL && context.user == NULL)
		context.reason = "It releases nothing over the table.";
	if ((*reason = context.reason) != NULL)
		return false;
	/*
	 * The branches group by the user id and return it through pair_user;
	 * the id grouped by is returned too, unread, so that a branch returns
	 * all its columns and its foreign scan runs asynchronously.
	 */
	linitial(context.columns.exprs) = uldp_make_aggref(shard_aggregate(&context, "pair_user", user_args, 2),
													   context.user->vartype,
													   list_make2(copyObject(context.user),
																  uldp_shard_int8(max_rows)),
													   NULL, context.user->varcollid);
	context.columns.grouped = bms_add_member(context.columns.grouped,
											 pair_column(&context, (Expr *) copyObject(context.user), "user_key"));

	shipping.uldp = context.uldp;
	context.columns.exprs = (List *) uldp_shard_shippable((Node *) context.columns.exprs, &shipping);
	quals = uldp_shard_shippable(query->jointree->quals, &shipping);
	parent = table_open(rte->relid, NoLock);
	pairs = uldp_shard_union(parent, &context.columns, quals, shipping.sublinks, parent->rd_rel->relowner);
	check = uldp_shard_size_check(parent, max_rows);
	table_close(parent, NoLock);
	if (check == NULL && context.reason == NULL)
		context.reason = "Extension uldp_shard is not installed on the coordinator: its aggregates must exist here to be shipped.";
	if ((*reason = context.reason) != NULL)
		return false;
	/*
	 * A key that is a column of the table keeps its origin in the pairs, so
	 * that keys declared public for it (uldp.set_public_groups) are those
	 * grouping.c reads for the pairs' column
	 */
	foreach(lc, context.keys)
	{
		Var		   *key = lfirst(lc);
		TargetEntry *column = list_nth(pairs->targetList, foreach_current_index(lc) + 1);

		if (IsA(key, Var) && key->varno == varno && key->varlevelsup == 0)
		{
			column->resorigtbl = rte->relid;
			column->resorigcol = key->varattno;
		}
	}

	query->targetList = (List *) pairs_mutator((Node *) query->targetList, &context);
	query->havingQual = pairs_mutator(query->havingQual, &context);
	query->jointree->quals = (Node *) make_ands_explicit(lappend(checks, check));
	query->hasSubLinks = true;
	foreach(lc, context.columns.names)
		names = lappend(names, makeString(lfirst(lc)));
	/* read twice (registration, then release), computed once */
	uldp_shard_replace_entry(query, varno, uldp_shard_cte_entry(query, pairs, "uldp_shard_pairs", "pairs", names));
	foreach(lc, context.columns.exprs)
		if (IsA(lfirst(lc), Aggref) && ((Aggref *) lfirst(lc))->aggfnoid != F_BOOL_OR)
			*shard_aggs = list_append_unique_oid(*shard_aggs, ((Aggref *) lfirst(lc))->aggfnoid);
	*shard_aggs = list_append_unique_oid(*shard_aggs,
										 uldp_shard_function("uldp_shard", "uldp_shard", "partition_check",
															 (Oid[]) {INT8OID}, 1));
	return true;
}

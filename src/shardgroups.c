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
 *	WITH uldp_shard_groups AS MATERIALIZED (
 *		SELECT k AS key_1, uldp_shard.user_pairs(u, max_rows, 'mean', v, true, lo, hi,
 *												 'any', true, f, NULL, NULL) AS pairs
 *		FROM ONLY t_1 WHERE w GROUP BY k
 *		UNION ALL ... one branch per leaf partition ...),
 *	uldp_shard_pairs AS MATERIALIZED (
 *		SELECT NULL::bigint AS user_id, g.key_1, NULL::float8 AS value_1, NULL::float8 AS value_2
 *		FROM uldp_shard_groups g
 *		UNION ALL
 *		SELECT uldp.pair_users(g.pairs), g.key_1,
 *			   uldp.pair_values(g.pairs, 1), uldp.pair_values(g.pairs, 2)
 *		FROM uldp_shard_groups g)
 *	SELECT s.key_1, user_dp_mean(s.value_1, s.user_id, eps, lo, hi),
 *		   user_dp_count(s.user_id, eps2) FILTER (WHERE s.value_2 IS NOT NULL)
 *	FROM uldp_shard_pairs s
 *	WHERE <the gate's checks>
 *	  AND (SELECT count(c.checked) FROM (SELECT uldp_shard.partition_check(max_rows)
 *										FROM ONLY t_1 WHERE ctid < '(0,0)' UNION ALL ...) c)
 *		  IS NOT NULL
 *	GROUP BY s.key_1 HAVING h
 *
 * Each shard groups its rows by the keys alone, and each group's state is
 * a table of its users with their values, one slot per release
 * (shard/shardpairs.c), which it sends as one value; the coordinator reads
 * it back as one row per user (pairunpack.c), after one row without user
 * per group (see pairs_query).  The coordinator's grouped
 * release (grouping.c) runs over these pairs as over rows, which it reads
 * twice (to register every user's groups, then to aggregate) from the
 * CTE, so that the shards compute and send them once: each pair is one
 * row of its user in its group, whose value is what the local transition
 * function would compute from the user's rows there, so the contribution
 * bound, the partition selection and every release are those of the same
 * statement on one node.  A user is read by its key (uldp_user_key, a
 * bigint), which keys it as its id would.  A user found in two partitions
 * is two rows of the same user, which the local machinery treats as any
 * two rows.  The value of a release with a FILTER is computed over the
 * rows that pass it (NULL if none, which the release skips); a count's
 * FILTER becomes whether any of the pair's rows passes.  A boolean mean
 * without bounds gets its public bounds [0, 1] written out, since its
 * value is now a float8 (shardquery.c).
 *
 * Memory: the pairs of a partition are at most its rows, at most
 * max_rows (uldp.max_partition_rows): user_pairs checks it on the shard at
 * its first row, and the size check in WHERE, one state aggregate per
 * partition over no rows (a TID range that holds none), checks it before
 * any pair is read, whatever the rows, so that the error a too large
 * partition raises never depends on them.  statement.c bounds the
 * release's memory by max_rows pairs per partition.  A group's value takes
 * at most 1 GB: where max_rows users with their slots could take more, the
 * release ships rows instead.
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
#include "catalog/pg_collation.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/regproc.h"

#include "pairwire.h"
#include "params.h"
#include "protect.h"
#include "shardgroups.h"
#include "shardquery.h"

/* One release of the statement, and the slot of the pairs it reads. */
typedef struct PairRelease
{
	Aggref	   *release;		/* as the statement writes it */
	Oid			function;		/* the same release over float8 values */
	List	   *params;			/* its parameters after the user id */
	int			slot;			/* its slot (from 1), or 0 (counts) */
	bool		any;			/* its slot is a count's filter */
} PairRelease;

typedef struct PairContext
{
	Index		varno;			/* the protected table's entry */
	Var		   *user;			/* the releases' user argument */
	List	   *keys;			/* the grouping keys, over the table */
	List	   *slots;			/* each a list of user_pairs' 5 arguments */
	List	   *releases;		/* PairRelease */
	Oid			uldp;
	Oid			pair_users;		/* uldp.pair_users(bytea) */
	Oid			pair_values;	/* uldp.pair_values(bytea, integer) */
	const char *reason;
} PairContext;

/* The pairs' columns: the user, the keys, then one value per slot. */
#define USER_COLUMN 1
#define KEY_COLUMN(i) (2 + (i))
#define SLOT_COLUMN(context, slot) (1 + list_length((context)->keys) + (slot))

static Const *
text_const(const char *text)
{
	return makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1, CStringGetTextDatum(text), false, false);
}

/* Number (from 1) of the slot of these arguments, added if new. */
static int
pair_slot(PairContext *context, const char *kind, Expr *value, Expr *filter, Expr *lower,
		  Expr *upper)
{
	List	   *slot = list_make5(text_const(kind), value,
								  filter != NULL ? filter : (Expr *) makeBoolConst(true, false),
								  lower, upper);
	ListCell   *lc;

	foreach(lc, context->slots)
		if (equal(lfirst(lc), slot))
			return foreach_current_index(lc) + 1;
	if (list_length(context->slots) == ULDP_PAIRS_MAX_SLOTS && context->reason == NULL)
		context->reason = psprintf("Its releases need more than %d values per user and group.",
								   ULDP_PAIRS_MAX_SLOTS);
	context->slots = lappend(context->slots, slot);
	return list_length(context->slots);
}

static void
add_release(Aggref *release, PairContext *context)
{
	PairRelease *pair = palloc0(sizeof(PairRelease));
	UldpShardClamp clamp;
	Oid			argtypes[FUNC_MAX_ARGS];
	int			nargs = 0;
	Expr	   *filter = copyObject(release->aggfilter);
	Expr	   *no_bound = (Expr *) makeNullConst(FLOAT8OID, -1, InvalidOid);

	if (!uldp_shard_release(release, context->varno, &context->user, &clamp, &pair->params,
							&context->reason))
		return;
	pair->release = release;
	if (clamp == ULDP_CLAMP_COUNT)
	{
		pair->function = release->aggfnoid;
		/* a count with a FILTER reads whether any of the pair's rows passes */
		if (filter != NULL)
		{
			pair->slot = pair_slot(context, "any", (Expr *) makeBoolConst(true, false), filter,
								   no_bound, copyObject(no_bound));
			pair->any = true;
		}
	}
	else
	{
		Expr	   *value = copyObject(linitial_node(TargetEntry, release->args)->expr);
		Oid			value_type = exprType((Node *) value);

		if (value_type != FLOAT8OID && value_type != BOOLOID)
		{
			context->reason = psprintf("%s reads values of type %s, which the shards do not aggregate.",
									   format_procedure(release->aggfnoid), format_type_be(value_type));
			return;
		}
		if (clamp == ULDP_CLAMP_TO_BOUNDS)
			pair->slot = pair_slot(context, "mean", value, filter,
								   uldp_shard_clamp_bound(list_length(pair->params) >= 3 ?
														  lsecond(pair->params) : NULL,
														  -ULDP_MAX_MAGNITUDE),
								   uldp_shard_clamp_bound(list_length(pair->params) >= 3 ?
														  lthird(pair->params) : NULL,
														  ULDP_MAX_MAGNITUDE));
		else
			pair->slot = pair_slot(context, "total", value, filter, no_bound, copyObject(no_bound));
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

/* A column of the pairs, read through the statement's entry varno. */
static Var *
pairs_var(PairContext *context, int column, Oid type, Oid collation, int32 typmod)
{
	return makeVar(context->varno, column, type, typmod, collation, 0);
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
			return (Node *) pairs_var(context, KEY_COLUMN(foreach_current_index(lc)),
									  exprType(lfirst(lc)), exprCollation(lfirst(lc)),
									  exprTypmod(lfirst(lc)));
	if (IsA(node, Aggref))
	{
		foreach(lc, context->releases)
		{
			PairRelease *pair = lfirst(lc);
			Aggref	   *release = copyObject(pair->release);
			List	   *args = NIL;
			List	   *argtypes = NIL;
			ListCell   *param;
			Var		   *value = pair->slot != 0 ?
				pairs_var(context, SLOT_COLUMN(context, pair->slot), FLOAT8OID, InvalidOid, -1) : NULL;

			if (!equal(node, pair->release))
				continue;
			if (value != NULL && !pair->any)
			{
				args = lappend(args, value);
				argtypes = lappend_oid(argtypes, FLOAT8OID);
			}
			args = lappend(args, pairs_var(context, USER_COLUMN, INT8OID, InvalidOid, -1));
			argtypes = lappend_oid(argtypes, INT8OID);
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
			release->aggfilter = NULL;
			if (pair->any)
			{
				NullTest   *passes = makeNode(NullTest);

				passes->arg = (Expr *) value;
				passes->nulltesttype = IS_NOT_NULL;
				passes->location = -1;
				release->aggfilter = (Expr *) passes;
			}
			release->inputcollid = InvalidOid;
			release->aggtranstype = InvalidOid;
			release->aggno = -1;
			release->aggtransno = -1;
			return (Node *) release;
		}
		elog(ERROR, "uldp release not found while rewriting it over shards");
	}
	return expression_tree_mutator(node, pairs_mutator, (void *) context);
}

/* A call of a set-returning function of the pairs' query */
static Expr *
unpack_call(Oid function, Oid result_type, List *args)
{
	FuncExpr   *call = makeFuncExpr(function, result_type, args, InvalidOid, InvalidOid,
									COERCE_EXPLICIT_CALL);

	call->funcretset = true;
	return (Expr *) call;
}

/*
 * One branch of the pairs' query, which reads the shards' groups (their
 * keys, then the value of user_pairs) from the CTE "groups", two levels up:
 * one row per user and group, with the user's key and its values, or with
 * "seeds", one row per group without user.
 */
static Query *
pairs_branch(PairContext *context, CommonTableExpr *groups, bool seeds)
{
	Query	   *branch = makeNode(Query);
	RangeTblRef *ref = makeNode(RangeTblRef);
	int			nkeys = list_length(context->keys);
	Var		   *value = makeVar(1, nkeys + 1, BYTEAOID, -1, InvalidOid, 0);
	Expr	   *user;
	ListCell   *lc;

	branch->commandType = CMD_SELECT;
	branch->querySource = QSRC_ORIGINAL;
	branch->canSetTag = true;
	branch->rtable = list_make1(uldp_make_cte_entry(groups, 2, "groups"));
	ref->rtindex = 1;
	branch->jointree = makeFromExpr(list_make1(ref), NULL);
	user = seeds ? (Expr *) makeNullConst(INT8OID, -1, InvalidOid) :
		unpack_call(context->pair_users, INT8OID, list_make1(copyObject(value)));
	branch->targetList = list_make1(makeTargetEntry(user, USER_COLUMN, "user_id", false));
	foreach(lc, context->keys)
	{
		Node	   *key = lfirst(lc);
		int			i = foreach_current_index(lc);

		branch->targetList = lappend(branch->targetList,
									 makeTargetEntry((Expr *) makeVar(1, i + 1, exprType(key), exprTypmod(key),
																	  exprCollation(key), 0),
													 KEY_COLUMN(i), psprintf("key_%d", i + 1), false));
	}
	for (int slot = 1; slot <= list_length(context->slots); slot++)
	{
		Expr	   *column = seeds ? (Expr *) makeNullConst(FLOAT8OID, -1, InvalidOid) :
			unpack_call(context->pair_values, FLOAT8OID,
						list_make2(copyObject(value),
								   makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(slot),
											 false, true)));

		branch->targetList = lappend(branch->targetList,
									 makeTargetEntry(column, SLOT_COLUMN(context, slot),
													 psprintf("value_%d", slot), false));
	}
	branch->hasTargetSRFs = !seeds;
	return branch;
}

/*
 * The pairs' query over the CTE of the shards' groups: a row without user
 * for each group, then one row per user and group.  PostgreSQL's hashed
 * GROUP BY, which the release runs over the pairs, spills only when it
 * meets a new group with its memory full: the pairs of one group come
 * together, so without the first rows the groups met last would be
 * spilled, batch after batch, as the first ones' users fill its memory (at
 * 1M users per shard, 25 batches and 100 MB of temporary files).  A row
 * without user counts for nothing, as on one node (grouping.c, the
 * releases).
 */
static Query *
pairs_query(PairContext *context, CommonTableExpr *groups, Oid relid)
{
	Query	   *pairs = uldp_shard_union_all(list_make2(pairs_branch(context, groups, true),
														pairs_branch(context, groups, false)),
											 list_make2("seeds", "users"));
	ListCell   *lc;

	/*
	 * A key that is a column of the table keeps its origin, so that keys
	 * declared public for it (uldp.set_public_groups) are those grouping.c
	 * reads for the pairs' column
	 */
	foreach(lc, context->keys)
	{
		Var		   *key = lfirst(lc);
		TargetEntry *column = list_nth(pairs->targetList, KEY_COLUMN(foreach_current_index(lc)) - 1);

		if (IsA(key, Var) && key->varno == context->varno && key->varlevelsup == 0)
		{
			column->resorigtbl = relid;
			column->resorigcol = key->varattno;
		}
	}
	return pairs;
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
	UldpShardColumns columns = {0};
	Oid			pairs_args[] = {ANYELEMENTOID, INT8OID, ANYOID};
	Oid			user_pairs;
	List	   *args;
	List	   *names = NIL;
	Relation	parent;
	Query	   *groups;
	Query	   *pairs;
	Node	   *quals;
	Node	   *check;
	ListCell   *lc;

	context.varno = varno;
	context.uldp = get_extension_oid("uldp", false);
	context.pair_users = uldp_shard_function("uldp", "uldp", "pair_users", (Oid[]) {BYTEAOID}, 1);
	context.pair_values = uldp_shard_function("uldp", "uldp", "pair_values",
											  (Oid[]) {BYTEAOID, INT4OID}, 2);
	foreach(lc, query->groupClause)
		context.keys = lappend(context.keys,
							   get_sortgroupclause_tle(lfirst_node(SortGroupClause, lc), query->targetList)->expr);
	find_releases_walker((Node *) query->targetList, &context);
	find_releases_walker(query->havingQual, &context);
	if (context.reason == NULL && context.user == NULL)
		context.reason = "It releases nothing over the table.";
	/* without slots (counts without FILTER), the form that returns users only */
	user_pairs = uldp_shard_function("uldp_shard", "uldp_shard", "user_pairs", pairs_args,
									 context.slots != NIL ? 3 : 2);
	if (context.reason == NULL && !OidIsValid(user_pairs))
		context.reason = "Extension uldp_shard is not installed on the coordinator: its aggregates must exist here to be shipped.";
	if (context.reason == NULL && (!OidIsValid(context.pair_users) || !OidIsValid(context.pair_values)))
		context.reason = "Extension uldp lacks the functions that read the shards' pairs: update it (ALTER EXTENSION uldp UPDATE).";
	/* a user's entry per slot, for at most max_rows users in one group */
	if (context.reason == NULL &&
		max_rows > ULDP_PAIRS_MAX_USERS(list_length(context.slots)))
		context.reason = psprintf("A group could hold more users (uldp.max_partition_rows = %d) than a shard can send in one value of at most 1 GB, with %d values per user.",
								  max_rows, list_length(context.slots));
	if ((*reason = context.reason) != NULL)
		return false;

	/* the branches: the keys, grouped by, then the group's users and values */
	foreach(lc, context.keys)
	{
		columns.exprs = lappend(columns.exprs, copyObject(lfirst(lc)));
		columns.names = lappend(columns.names, psprintf("key_%d", foreach_current_index(lc) + 1));
		columns.grouped = bms_add_member(columns.grouped, foreach_current_index(lc) + 1);
	}
	args = list_make2(copyObject(context.user), uldp_shard_int8(max_rows));
	foreach(lc, context.slots)
		args = list_concat(args, copyObject(lfirst(lc)));
	columns.exprs = lappend(columns.exprs, uldp_make_aggref(user_pairs, BYTEAOID, args, NULL,
															context.user->varcollid));
	columns.names = lappend(columns.names, "pairs");

	shipping.uldp = context.uldp;
	columns.exprs = (List *) uldp_shard_shippable((Node *) columns.exprs, &shipping);
	quals = uldp_shard_shippable(query->jointree->quals, &shipping);
	parent = table_open(rte->relid, NoLock);
	groups = uldp_shard_union(parent, &columns, quals, shipping.sublinks, parent->rd_rel->relowner);
	check = uldp_shard_size_check(parent, max_rows);
	table_close(parent, NoLock);
	if (check == NULL)
	{
		*reason = "Extension uldp_shard is not installed on the coordinator: its aggregates must exist here to be shipped.";
		return false;
	}
	foreach(lc, columns.names)
		names = lappend(names, makeString(lfirst(lc)));
	pairs = pairs_query(&context, uldp_shard_cte(query, groups, "uldp_shard_groups", names), rte->relid);

	query->targetList = (List *) pairs_mutator((Node *) query->targetList, &context);
	query->havingQual = pairs_mutator(query->havingQual, &context);
	query->jointree->quals = (Node *) make_ands_explicit(lappend(checks, check));
	query->hasSubLinks = true;
	names = NIL;
	foreach(lc, pairs->targetList)
		names = lappend(names, makeString(lfirst_node(TargetEntry, lc)->resname));
	/* read twice (registration, then release), computed once */
	uldp_shard_replace_entry(query, varno, uldp_shard_cte_entry(query, pairs, "uldp_shard_pairs", "pairs", names));
	*shard_aggs = list_append_unique_oid(*shard_aggs, user_pairs);
	*shard_aggs = list_append_unique_oid(*shard_aggs,
										 uldp_shard_function("uldp_shard", "uldp_shard", "partition_check",
															 (Oid[]) {INT8OID}, 1));
	return true;
}

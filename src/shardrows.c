/*-------------------------------------------------------------------------
 *
 * shardrows.c
 *	  Releases over shards that read the partitions' rows, for roles that
 *	  may not read them, when the shards cannot compute the release's part.
 *
 * A release over a protected table kept on shards is rewritten so that the
 * shards compute its part (shardrewrite.c, shardgroups.c).  What cannot be
 * (a quantile, a vector mean, a model, a join, keys declared public, a
 * filter postgres_fdw cannot ship, servers that do not list uldp_shard)
 * falls back to shipping rows, as over any foreign table, with a NOTICE that
 * says why: the same release, the same guarantee, only slower.  For a role
 * that may not read the table, while the statement is planned, the table's
 * entry becomes
 *
 *	(SELECT <every column> FROM ONLY t_1 UNION ALL ... one per leaf ...)
 *
 * read as the table's owner (postgres_fdw connects with the owner's user
 * mapping: analysts need none), and the statement's WHERE gets the size
 * check of shardgroups.c: each shard checks, before any row is read and
 * whatever the rows, that its partition can hold no more than
 * uldp.max_partition_rows rows by its size on disk.  That is the public
 * bound statement.c needs to bound the release's memory before it charges
 * (uldp_shard_checked_rows reads it from the plan, as written when the
 * statement was planned).  The gate has checked the release as over a
 * local table.  The filters that read the table alone move into the
 * branches, made shippable where they can be (shardquery.c): those that
 * ship run on the shards, the others on the coordinator as the rows
 * arrive; filters that read joined tables stay with the statement.  A
 * grouped release reads its rows twice (grouping.c): from a materialized
 * CTE instead, so that the shards send them once.  The columns keep their
 * origin in the table, so that keys declared public stay public.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "rowbound.h"
#include "shardquery.h"
#include "shardrows.h"

/* Does a clause read a column of a query above it? */
static bool
outer_column_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup > 0;
	return expression_tree_walker(node, outer_column_walker, context);
}

/*
 * The clauses of "quals" (an AND) that read the table (entry varno) alone,
 * which the branches apply (*own, over entry 1), and the others (the
 * result): those that read joined tables, none (the gate's checks) or a
 * subquery stay with the statement.
 */
static Node *
split_quals(Node *quals, Index varno, Node **own)
{
	List	   *others = NIL;
	List	   *table = NIL;
	ListCell   *lc;

	foreach(lc, make_ands_implicit((Expr *) quals))
	{
		Node	   *clause = lfirst(lc);
		Bitmapset  *read = pull_varnos(NULL, clause);

		if (bms_is_member(varno, read) && bms_num_members(read) == 1 &&
			!checkExprHasSubLink(clause) && !outer_column_walker(clause, NULL))
		{
			clause = copyObject(clause);
			ChangeVarNodes(clause, varno, 1, 0);
			table = lappend(table, clause);
		}
		else
			others = lappend(others, clause);
	}
	*own = table != NIL ? (Node *) make_ands_explicit(table) : NULL;
	return others != NIL ? (Node *) make_ands_explicit(others) : NULL;
}

/*
 * Rewrites query's entry varno, a protected table kept on shards, into the
 * rows of its partitions read as its owner, behind the size check; "checks"
 * are the gate's clauses without columns, "why" is why the shards cannot
 * compute the release's part.  False, with *reason, if it cannot.
 */
bool
uldp_shard_ship_rows(Query *query, Index varno, List *checks, const char *why,
					 UldpShardRewrites *rewrites, const char **reason)
{
	RangeTblEntry *rte = rt_fetch(varno, query->rtable);
	UldpShardColumns columns = {0};
	UldpShipping shipping = {0};
	Relation	parent;
	TupleDesc	desc;
	Node	   *size_check;
	Node	   *own_quals;
	Query	   *rows;
	List	   *names = NIL;
	Oid			check_args[] = {INT8OID};

	/* planning would ask the shards for estimates before the charge */
	if ((*reason = uldp_shard_remote_estimate_reason(rte->relid)) != NULL)
		return false;
	parent = table_open(rte->relid, NoLock);
	size_check = uldp_shard_size_check(parent, uldp_max_partition_rows);
	if (size_check == NULL)
	{
		table_close(parent, NoLock);
		*reason = "Extension uldp_shard is not installed on the coordinator: the shards check their partitions' sizes with it.";
		return false;
	}
	/* every column, in order, so that the statement's columns keep their numbers */
	desc = RelationGetDescr(parent);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);
		char	   *name = attr->attisdropped ? psprintf("dropped_%d", i + 1) : pstrdup(NameStr(attr->attname));

		columns.exprs = lappend(columns.exprs, attr->attisdropped ?
								(Expr *) makeNullConst(INT4OID, -1, InvalidOid) :
								(Expr *) makeVar(1, attr->attnum, attr->atttypid, attr->atttypmod,
												 attr->attcollation, 0));
		columns.names = lappend(columns.names, name);
		names = lappend(names, makeString(name));
	}
	/* the filters of the table alone run in the branches, on the shards where they ship */
	shipping.uldp = get_extension_oid("uldp", false);
	query->jointree->quals = split_quals(query->jointree->quals, varno, &own_quals);
	own_quals = uldp_shard_shippable(own_quals, &shipping);
	rows = uldp_shard_union(parent, &columns, own_quals, shipping.sublinks, parent->rd_rel->relowner);
	/* each column keeps its origin: the keys declared public for it stay so (grouping.c) */
	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
		{
			TargetEntry *column = list_nth(rows->targetList, i);

			column->resorigtbl = rte->relid;
			column->resorigcol = TupleDescAttr(desc, i)->attnum;
		}
	table_close(parent, NoLock);

	query->jointree->quals = make_and_qual(query->jointree->quals,
										   (Node *) make_ands_explicit(lappend(checks, size_check)));
	query->hasSubLinks = true;
	uldp_shard_replace_entry(query, varno, query->groupClause != NIL ?
							 uldp_shard_cte_entry(query, rows, "uldp_shard_rows", "rows", names) :
							 uldp_shard_subquery_entry(rows, "rows", names));
	rewrites->state_aggs = list_append_unique_oid(rewrites->state_aggs,
												  uldp_shard_function("uldp_shard", "uldp_shard",
																	  "partition_check", check_args, 1));
	rewrites->table = rewrites->gated = get_rel_name(rte->relid);
	ereport(NOTICE,
			(errmsg("uldp ships the rows of \"%s\" from its shards", rewrites->table),
			 errdetail_internal("%s", why),
			 errhint("The release is the same, only slower.")));
	return true;
}

/* The largest row bound of a size check among the plans below "plan", or -1. */
static double
checked_rows_walker(Plan *plan)
{
	double		rows = -1;
	double		checked;
	ListCell   *lc;

	if (plan == NULL)
		return -1;
	if (IsA(plan, ForeignScan) && uldp_shard_size_checked((ForeignScan *) plan, &checked))
		rows = checked;
	foreach(lc, uldp_plan_children(plan))
		rows = Max(rows, checked_rows_walker(lfirst(lc)));
	rows = Max(rows, checked_rows_walker(plan->lefttree));
	return Max(rows, checked_rows_walker(plan->righttree));
}

/*
 * The rows a foreign partition read for a role that may not read it can
 * hold: the bound its shard checked (uldp_shard_ship_rows), as written in
 * the statement's plan; -1 if the plan checks none.
 */
double
uldp_shard_checked_rows(EState *estate)
{
	PlannedStmt *stmt = estate->es_plannedstmt;
	double		rows = checked_rows_walker(stmt->planTree);
	ListCell   *lc;

	foreach(lc, stmt->subplans)
		rows = Max(rows, checked_rows_walker(lfirst(lc)));
	return rows;
}

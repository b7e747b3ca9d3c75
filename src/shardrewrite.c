/*-------------------------------------------------------------------------
 *
 * shardrewrite.c
 *	  Releases over tables whose rows live on postgres_fdw shards,
 *	  rewritten into merges of the states that the shards compute.
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
 * shard is contacted (statement.c charges at executor start).  Rows are
 * clamped on the shards as the local transition functions clamp them
 * (user_dp_mean to its bounds, the others to +-ULDP_MAX_MAGNITUDE), and a
 * count's state ignores the value.  Releases that read the same rows with
 * the same clamping share one state.
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
 * tables' size on disk whatever their rows (shard/shardstate.c); the
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
#include "commands/defrem.h"
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
#include "shardrewrite.h"

/* the most rows one foreign partition may hold (uldp.max_partition_rows) */
int			uldp_max_partition_rows = 3 * 1000 * 1000;

static create_upper_paths_hook_type previous_upper_paths_hook = NULL;

/* How the shards clamp the rows of one release's state. */
typedef enum StateClamp
{
	CLAMP_TO_BOUNDS,			/* user_dp_mean: to its bounds */
	CLAMP_TO_MAGNITUDE,			/* user_dp_sum: to +-ULDP_MAX_MAGNITUDE */
	CLAMP_COUNT					/* user_dp_count: no value */
} StateClamp;

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
	Index		varno;			/* the protected table's entry */
	Oid			user_type;
	int32		user_typmod;
	Oid			user_collation;
	List	   *releases;		/* ShardRelease */
	List	   *states;			/* the state Aggrefs, over the parent's columns */
	Oid			uldp;
	bool		releases_found;	/* any uldp aggregate */
	const char *reason;			/* why it cannot be rewritten */
} RewriteContext;

static bool
is_postgres_fdw_table(Oid relid)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);

	return strcmp(GetForeignDataWrapper(server->fdwid)->fdwname, "postgres_fdw") == 0;
}

/* Does postgres_fdw ask the shard for estimates when it plans a scan of relid? */
static bool
uses_remote_estimate(Oid relid)
{
	ForeignTable *table = GetForeignTable(relid);
	List	   *options = list_concat(list_copy(GetForeignServer(table->serverid)->options),
									  table->options);
	bool		remote = false;
	ListCell   *lc;

	/* the table's option, listed last, overrides the server's */
	foreach(lc, options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, "use_remote_estimate") == 0)
			remote = defGetBoolean(lfirst_node(DefElem, lc));
	return remote;
}

/*
 * Is relid a postgres_fdw foreign table, or partitioned into leaves that
 * all are?  (It locks the partitions, as planning would.)
 */
bool
uldp_table_sharded(Oid relid)
{
	char		relkind = get_rel_relkind(relid);
	bool		leaves = false;
	ListCell   *lc;

	if (relkind == RELKIND_FOREIGN_TABLE)
		return is_postgres_fdw_table(relid);
	if (relkind != RELKIND_PARTITIONED_TABLE)
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

		return rte->rtekind == RTE_RELATION &&
			(rte->relkind == RELKIND_PARTITIONED_TABLE || rte->relkind == RELKIND_FOREIGN_TABLE) &&
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

/*
 * The function schema.name(argtypes) of extension "extension", or
 * InvalidOid.  Found by identity, without the caller's privileges: an
 * analyst may use neither schema, and needs no privilege on what the
 * rewrite calls for it.
 */
static Oid
extension_function(const char *extension, const char *schema, const char *name,
				   const Oid *argtypes, int nargs)
{
	Oid			extension_oid = get_extension_oid(extension, true);
	Oid			namespace = get_namespace_oid(schema, true);
	Oid			function;

	if (!OidIsValid(extension_oid) || !OidIsValid(namespace))
		return InvalidOid;
	function = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid, CStringGetDatum(name),
							   PointerGetDatum(buildoidvector(argtypes, nargs)),
							   ObjectIdGetDatum(namespace));
	if (!OidIsValid(function) || getExtensionOfObject(ProcedureRelationId, function) != extension_oid)
		return InvalidOid;
	return function;
}

/* uldp_shard.user_rows for values of value_type, or InvalidOid. */
static Oid
state_aggregate(Oid value_type)
{
	Oid			argtypes[] = {value_type, ANYELEMENTOID, FLOAT8OID, FLOAT8OID, INT8OID};

	return extension_function("uldp_shard", "uldp_shard", "user_rows", argtypes, lengthof(argtypes));
}

/* Is aggfnoid uldp_shard.user_rows? */
static bool
is_state_aggregate(Oid aggfnoid)
{
	Oid			extension = get_extension_oid("uldp_shard", true);
	char	   *name;

	if (!OidIsValid(extension) || getExtensionOfObject(ProcedureRelationId, aggfnoid) != extension)
		return false;
	name = get_func_name(aggfnoid);
	return name != NULL && strcmp(name, "user_rows") == 0;
}

/*
 * The clamping of a release that has a merge over shards, from its
 * transition and final functions (the release's identity: the _ci twins
 * and other releases share transition functions); false for any other.
 */
static bool
release_clamp(Oid aggfnoid, StateClamp *clamp)
{
	char	   *transfn = uldp_aggregate_support_name(aggfnoid, false);
	char	   *finalfn = uldp_aggregate_support_name(aggfnoid, true);

	if (transfn == NULL || finalfn == NULL)
		return false;
	if ((strcmp(finalfn, "mean_finalfn") == 0 || strcmp(finalfn, "mean_ci_finalfn") == 0 ||
		 strcmp(finalfn, "range_finalfn") == 0) &&
		(strcmp(transfn, "user_transfn") == 0 || strcmp(transfn, "user_bool_transfn") == 0))
		*clamp = CLAMP_TO_BOUNDS;
	else if ((strcmp(finalfn, "sum_finalfn") == 0 || strcmp(finalfn, "sum_ci_finalfn") == 0) &&
			 (strcmp(transfn, "user_sum_transfn") == 0 || strcmp(transfn, "user_bool_sum_transfn") == 0))
		*clamp = CLAMP_TO_MAGNITUDE;
	else if ((strcmp(finalfn, "count_finalfn") == 0 || strcmp(finalfn, "count_ci_finalfn") == 0) &&
			 strcmp(transfn, "user_count_transfn") == 0)
		*clamp = CLAMP_COUNT;
	else
		return false;
	return true;
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
	return extension_function("uldp", "uldp", get_func_name(release->aggfnoid), argtypes, nargs);
}

static Const *
float8_const(double value)
{
	return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8), Float8GetDatum(value), false,
					 FLOAT8PASSBYVAL);
}

static bool
is_null_const(Node *node)
{
	return IsA(node, Const) && ((Const *) node)->constisnull;
}

/*
 * A release's parameters after its user id, as its merge takes them.  The
 * mean of a boolean without bounds has the public bounds [0, 1] (the final
 * function sees the value's type, which a merge does not: release.c), so
 * they are written out; whether bounds are absent must then be known when
 * the statement is planned.  NULL if it cannot be merged (*reason says why).
 */
static List *
merge_params(Aggref *release, int user_arg, StateClamp clamp, const char **reason)
{
	List	   *params = NIL;
	bool		boolean = clamp == CLAMP_TO_BOUNDS &&
		exprType((Node *) linitial_node(TargetEntry, release->args)->expr) == BOOLOID;

	for (int i = user_arg + 1; i < list_length(release->args); i++)
		params = lappend(params, lfirst_node(TargetEntry, list_nth_cell(release->args, i))->expr);
	if (!boolean)
		return params;
	if (list_length(params) == 1)
		return lappend(lappend(params, float8_const(0)), float8_const(1));
	if (is_null_const(lsecond(params)) && is_null_const(lthird(params)))
	{
		params = list_copy(params);
		lsecond(params) = float8_const(0);
		lthird(params) = float8_const(1);
		return params;
	}
	if (!IsA(lsecond(params), Const) || !IsA(lthird(params), Const))
	{
		*reason = "The bounds of a mean of booleans over shards must be constants.";
		return NULL;
	}
	return params;
}

static TargetEntry *
argument(Expr *expr, int resno)
{
	return makeTargetEntry(expr, (AttrNumber) resno, NULL, false);
}

/* A clamping bound: the release's own, or +-ULDP_MAX_MAGNITUDE when not given. */
static Expr *
clamp_bound(Expr *given, double absent)
{
	Const	   *fallback = makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
									 Float8GetDatum(absent), false, FLOAT8PASSBYVAL);
	CoalesceExpr *coalesce;

	if (given == NULL || (IsA(given, Const) && ((Const *) given)->constisnull))
		return (Expr *) fallback;
	if (IsA(given, Const))
		return given;
	coalesce = makeNode(CoalesceExpr);
	coalesce->coalescetype = FLOAT8OID;
	coalesce->coalescecollid = InvalidOid;
	coalesce->args = list_make2(copyObject(given), fallback);
	coalesce->location = -1;
	return (Expr *) coalesce;
}

/*
 * The state aggregate a release reads, over the parent's columns:
 * user_rows(value, user, lower, upper, max_rows) FILTER (its filter).
 */
static Aggref *
state_call(Aggref *release, int user_arg, List *params, StateClamp clamp, Oid state_agg)
{
	Aggref	   *state = makeNode(Aggref);
	Expr	   *value;
	Expr	   *lower = NULL;
	Expr	   *upper = NULL;
	Expr	   *user = lfirst_node(TargetEntry, list_nth_cell(release->args, user_arg))->expr;

	if (clamp == CLAMP_COUNT)
		value = (Expr *) makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
								   Float8GetDatum(0), false, FLOAT8PASSBYVAL);
	else
		value = copyObject(linitial_node(TargetEntry, release->args)->expr);
	if (clamp == CLAMP_TO_BOUNDS && list_length(params) >= 3)
	{
		lower = lsecond(params);
		upper = lthird(params);
	}
	state->aggfnoid = state_agg;
	state->aggtype = BYTEAOID;
	state->aggcollid = InvalidOid;
	state->inputcollid = release->inputcollid;
	state->aggargtypes = list_make5_oid(exprType((Node *) value), exprType((Node *) user),
										FLOAT8OID, FLOAT8OID, INT8OID);
	state->args = list_make5(argument(value, 1), argument(copyObject(user), 2),
							 argument(clamp_bound(lower, -ULDP_MAX_MAGNITUDE), 3),
							 argument(clamp_bound(upper, ULDP_MAX_MAGNITUDE), 4),
							 argument((Expr *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
														 Int64GetDatum(uldp_max_partition_rows),
														 false, FLOAT8PASSBYVAL), 5));
	state->aggfilter = copyObject(release->aggfilter);
	state->aggkind = AGGKIND_NORMAL;
	state->aggsplit = AGGSPLIT_SIMPLE;
	state->aggno = -1;
	state->aggtransno = -1;
	state->location = -1;
	return state;
}

/* Registers one release of the statement with its state column. */
static void
add_release(Aggref *release, RewriteContext *context)
{
	int			user_arg;
	StateClamp	clamp;
	ShardRelease *shard_release;
	Aggref	   *state;
	Var		   *user;
	Oid			state_agg;
	ListCell   *lc;

	if (!release_clamp(release->aggfnoid, &clamp))
	{
		context->reason = psprintf("%s has no merge over shards yet: user_dp_mean, user_dp_sum, user_dp_count, their _ci twins and user_dp_range have.",
								   format_procedure(release->aggfnoid));
		return;
	}
	user_arg = uldp_user_argument(release->aggfnoid);
	user = (Var *) lfirst_node(TargetEntry, list_nth_cell(release->args, user_arg))->expr;
	if (release->agglevelsup != 0 || release->aggdistinct != NIL || release->aggorder != NIL ||
		!IsA(user, Var) || user->varno != context->varno || user->varlevelsup != 0)
	{
		context->reason = "Its releases must read the user id column of the table itself.";
		return;
	}
	state_agg = state_aggregate(clamp == CLAMP_COUNT ? FLOAT8OID :
								exprType((Node *) linitial_node(TargetEntry, release->args)->expr));
	if (!OidIsValid(state_agg))
	{
		context->reason = "Extension uldp_shard is not installed on the coordinator: its state aggregates must exist here to be shipped.";
		return;
	}
	shard_release = palloc0(sizeof(ShardRelease));
	shard_release->release = release;
	shard_release->params = merge_params(release, user_arg, clamp, &context->reason);
	if (context->reason != NULL)
		return;
	shard_release->merge = merge_aggregate(release, list_length(shard_release->params));
	if (!OidIsValid(shard_release->merge))
	{
		context->reason = psprintf("uldp has no merge of %s over shards.", format_procedure(release->aggfnoid));
		return;
	}
	context->user_type = user->vartype;
	context->user_typmod = user->vartypmod;
	context->user_collation = user->varcollid;
	state = state_call(release, user_arg, shard_release->params, clamp, state_agg);
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
		else
		{
			context->releases_found = true;
			if (context->reason == NULL)
				add_release(aggref, context);
		}
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
			args = list_make2(argument((Expr *) makeVar(context->varno, shard_release->column,
														 BYTEAOID, -1, InvalidOid, 0), 1),
							  argument((Expr *) makeNullConst(context->user_type, context->user_typmod,
															  context->user_collation), 2));
			argtypes = list_make2_oid(BYTEAOID, context->user_type);
			foreach(param, shard_release->params)
			{
				args = lappend(args, argument(copyObject(lfirst(param)), list_length(args) + 1));
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

/* What the shards need in the expressions of a branch. */
typedef struct ShippingContext
{
	Oid			uldp;
	bool		sublinks;		/* were values hoisted into subqueries */
} ShippingContext;

/* (SELECT expr): a value computed once, on the coordinator. */
static Node *
scalar_subquery(Expr *expr)
{
	Query	   *query = makeNode(Query);
	SubLink    *sublink = makeNode(SubLink);

	query->commandType = CMD_SELECT;
	query->querySource = QSRC_ORIGINAL;
	query->canSetTag = true;
	query->jointree = makeFromExpr(NIL, NULL);
	query->targetList = list_make1(makeTargetEntry(expr, 1, "value", false));
	sublink->subLinkType = EXPR_SUBLINK;
	sublink->subLinkId = 0;
	sublink->subselect = (Node *) query;
	sublink->location = -1;
	return (Node *) sublink;
}

/*
 * Makes an expression of a branch shippable where it can:
 *	- a stable value without columns (current_date - 30) becomes a scalar
 *	  subquery, which PostgreSQL computes once before the
 *	  scan and postgres_fdw ships as a parameter (a stable function cannot
 *	  ship: the shard could compute another value);
 *	- the gate's filter functions over rows (uldp._safe_*, safe_expr.c)
 *	  become uldp_shard's of the same name and arguments: the same C code,
 *	  which the shards can run.  One that uldp_shard lacks stays, and the
 *	  branch is then not pushed down.
 */
static Node *
shippable_mutator(Node *node, ShippingContext *context)
{
	if (node == NULL || IsA(node, Const) || IsA(node, Param) || IsA(node, Aggref) ||
		IsA(node, TargetEntry) || IsA(node, List))
		return expression_tree_mutator(node, shippable_mutator, (void *) context);
	if (!contain_var_clause(node))
	{
		/* a volatile value is computed per row: it stays, and does not ship */
		if (!contain_mutable_functions(node) || contain_volatile_functions(node))
			return copyObject(node);
		context->sublinks = true;
		return scalar_subquery((Expr *) copyObject(node));
	}
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *func = (FuncExpr *) expression_tree_mutator(node, shippable_mutator,
																 (void *) context);
		char	   *name = get_func_name(func->funcid);
		Oid		   *argtypes;
		int			nargs;
		Oid			shard_function;

		if (name == NULL || strncmp(name, "_safe_", strlen("_safe_")) != 0 ||
			getExtensionOfObject(ProcedureRelationId, func->funcid) != context->uldp)
			return (Node *) func;
		get_func_signature(func->funcid, &argtypes, &nargs);
		shard_function = extension_function("uldp_shard", "uldp_shard", name, argtypes, nargs);
		if (OidIsValid(shard_function))
			func->funcid = shard_function;
		return (Node *) func;
	}
	return expression_tree_mutator(node, shippable_mutator, (void *) context);
}

/* The names of a relation's columns, as a range table entry lists them. */
static List *
column_names(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *names = NIL;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		names = lappend(names, makeString(pstrdup(attr->attisdropped ? "" : NameStr(attr->attname))));
	}
	return names;
}

static List *
state_column_names(int count)
{
	List	   *names = NIL;

	for (int i = 1; i <= count; i++)
		names = lappend(names, makeString(psprintf("state_%d", i)));
	return names;
}

/*
 * One branch: the states of one leaf partition, filtered by "quals", read
 * as the table's owner ("sublinks": the expressions hold scalar subqueries).
 */
static Query *
branch_query(Relation parent, Oid leaf, List *states, Node *quals, bool sublinks, Oid owner)
{
	Relation	rel = table_open(leaf, NoLock);
	Query	   *branch = makeNode(Query);
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	RangeTblRef *ref = makeNode(RangeTblRef);
	List	   *mapped = map_partition_varattnos(lappend(list_copy(states), quals), 1, rel, parent);
	Bitmapset  *columns = NULL;
	ListCell   *lc;

	rte->rtekind = RTE_RELATION;
	rte->relid = leaf;
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = AccessShareLock;
	rte->eref = makeAlias(RelationGetRelationName(rel), column_names(rel));
	rte->inh = false;
	rte->inFromCl = true;
	rte->requiredPerms = ACL_SELECT;
	rte->checkAsUser = owner;
	pull_varattnos((Node *) mapped, 1, &columns);
	rte->selectedCols = columns;
	ref->rtindex = 1;

	branch->commandType = CMD_SELECT;
	branch->querySource = QSRC_ORIGINAL;
	branch->canSetTag = true;
	branch->rtable = list_make1(rte);
	branch->jointree = makeFromExpr(list_make1(ref), llast(mapped));
	foreach(lc, mapped)
		if (foreach_current_index(lc) < list_length(states))
			branch->targetList = lappend(branch->targetList,
										 makeTargetEntry(lfirst(lc), foreach_current_index(lc) + 1,
														 psprintf("state_%d", foreach_current_index(lc) + 1),
														 false));
	branch->hasAggs = true;
	branch->hasSubLinks = sublinks;
	table_close(rel, NoLock);
	return branch;
}

/* The UNION ALL of the branches (or the only one), as a subquery. */
static Query *
union_query(List *branches, int nstates)
{
	Query	   *query;
	Node	   *tree = NULL;
	List	   *types = NIL;
	List	   *typmods = NIL;
	List	   *collations = NIL;
	ListCell   *lc;

	if (list_length(branches) == 1)
		return linitial(branches);
	for (int i = 1; i <= nstates; i++)
	{
		types = lappend_oid(types, BYTEAOID);
		typmods = lappend_int(typmods, -1);
		collations = lappend_oid(collations, InvalidOid);
	}
	query = makeNode(Query);
	query->commandType = CMD_SELECT;
	query->querySource = QSRC_ORIGINAL;
	query->canSetTag = true;
	foreach(lc, branches)
	{
		RangeTblEntry *rte = makeNode(RangeTblEntry);
		RangeTblRef *ref = makeNode(RangeTblRef);

		rte->rtekind = RTE_SUBQUERY;
		rte->subquery = lfirst(lc);
		rte->eref = makeAlias(psprintf("shard_%d", foreach_current_index(lc) + 1),
							  state_column_names(nstates));
		query->rtable = lappend(query->rtable, rte);
		ref->rtindex = list_length(query->rtable);
		if (tree == NULL)
			tree = (Node *) ref;
		else
		{
			SetOperationStmt *union_all = makeNode(SetOperationStmt);

			union_all->op = SETOP_UNION;
			union_all->all = true;
			union_all->larg = tree;
			union_all->rarg = (Node *) ref;
			union_all->colTypes = types;
			union_all->colTypmods = typmods;
			union_all->colCollations = collations;
			tree = (Node *) union_all;
		}
	}
	query->setOperations = tree;
	query->jointree = makeFromExpr(NIL, NULL);
	for (int i = 1; i <= nstates; i++)
		query->targetList = lappend(query->targetList,
									makeTargetEntry((Expr *) makeVar(1, i, BYTEAOID, -1, InvalidOid, 0),
													i, psprintf("state_%d", i), false));
	return query;
}

/* Is there anything in query but SELECT <releases> FROM <one table> WHERE ...? */
static const char *
shape_reason(Query *query)
{
	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL || query->rowMarks != NIL)
		return "Only SELECT can release over it.";
	if (query->groupClause != NIL || query->groupingSets != NIL || query->havingQual != NULL)
		return "Grouped releases over shards are not supported yet.";
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
 * Rewrites the releases of query over its entry varno, a protected table
 * kept on shards (uldp_table_sharded), into merges of the shards' states;
 * "checks" are clauses without columns to evaluate once before reading
 * (gate.c), kept on the coordinator.  Returns true if it did; otherwise
 * *reason says why, unless query releases nothing over the table (then
 * NULL: it is no release).  "gated": the role may not read the table.
 */
bool
uldp_shard_rewrite(Query *query, Index varno, List *checks, bool gated,
				   UldpShardRewrites *rewrites, const char **reason)
{
	RangeTblEntry *rte = rt_fetch(varno, query->rtable);
	RewriteContext context = {0};
	Relation	parent;
	List	   *branches = NIL;
	List	   *states;
	Node	   *quals;
	ShippingContext shipping = {0};
	RangeTblEntry *states_rte;
	ListCell   *lc;

	*reason = NULL;
	if (!rewrites->enabled || !query->hasAggs)
		return false;
	context.varno = varno;
	context.uldp = get_extension_oid("uldp", false);
	find_releases_walker((Node *) query->targetList, &context);
	find_releases_walker(query->havingQual, &context);
	if (!context.releases_found)
		return false;
	*reason = shape_reason(query);
	if (*reason == NULL)
		*reason = context.reason;
	if (*reason != NULL)
		return false;
	/*
	 * Remote estimates would contact the shards before the charge, and make
	 * the plan (pushed down or refused) depend on their statistics.
	 */
	if (gated)
		foreach(lc, find_all_inheritors(rte->relid, AccessShareLock, NULL))
			if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE &&
				uses_remote_estimate(lfirst_oid(lc)))
			{
				*reason = psprintf("Its partition \"%s\" has use_remote_estimate on: planning would ask the shard before the charge.",
								   get_rel_name(lfirst_oid(lc)));
				return false;
			}

	shipping.uldp = context.uldp;
	states = (List *) shippable_mutator((Node *) context.states, &shipping);
	quals = shippable_mutator(query->jointree->quals, &shipping);
	parent = table_open(rte->relid, NoLock);
	foreach(lc, find_all_inheritors(rte->relid, AccessShareLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			branches = lappend(branches, branch_query(parent, lfirst_oid(lc), states, quals,
													  shipping.sublinks, parent->rd_rel->relowner));
	table_close(parent, NoLock);

	states_rte = makeNode(RangeTblEntry);
	states_rte->rtekind = RTE_SUBQUERY;
	states_rte->subquery = union_query(branches, list_length(context.states));
	states_rte->eref = makeAlias("shards", state_column_names(list_length(context.states)));
	states_rte->inFromCl = true;

	query->targetList = (List *) merge_mutator((Node *) query->targetList, &context);
	query->jointree->quals = checks != NIL ? (Node *) make_ands_explicit(checks) : NULL;
	/* unread, for plan invalidation and for the gate's EXPLAIN refusal */
	rte = copyObject(rte);
	rte->inh = false;
	rte->requiredPerms = 0;
	rte->selectedCols = NULL;
	rte->inFromCl = false;
	list_nth_cell(query->rtable, varno - 1)->ptr_value = states_rte;
	query->rtable = lappend(query->rtable, rte);

	foreach(lc, states)
		rewrites->state_aggs = list_append_unique_oid(rewrites->state_aggs,
													  ((Aggref *) lfirst(lc))->aggfnoid);
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
	List	   *children = NIL;

	if (plan == NULL)
		return false;
	/* a foreign scan's own target list is computed by its shard */
	if (!IsA(plan, ForeignScan) &&
		(computes_state_walker((Node *) plan->targetlist, rewrites) ||
		 computes_state_walker((Node *) plan->qual, rewrites)))
		return true;
	if (IsA(plan, Append))
		children = ((Append *) plan)->appendplans;
	else if (IsA(plan, MergeAppend))
		children = ((MergeAppend *) plan)->mergeplans;
	else if (IsA(plan, SubqueryScan))
		children = list_make1(((SubqueryScan *) plan)->subplan);
	else if (IsA(plan, CustomScan))
		children = ((CustomScan *) plan)->custom_plans;
	foreach(lc, children)
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
	return "postgres_fdw would compute uldp_shard.user_rows on the coordinator: the servers' \"extensions\" option must list uldp_shard, "
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

		if (IsA(aggref, Aggref) && is_state_aggregate(aggref->aggfnoid))
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
 * Does a foreign scan return shards' states (a pushed-down plain
 * uldp_shard.user_rows)?  Then *max_rows is the most rows, and so users,
 * that one of its states holds: the bound its shard checked.
 */
bool
uldp_shard_state_scan(ForeignScan *scan, double *max_rows)
{
	ListCell   *lc;
	bool		states = false;

	*max_rows = 0;
	foreach(lc, scan->fdw_scan_tlist)
	{
		Aggref	   *aggref = (Aggref *) lfirst_node(TargetEntry, lc)->expr;
		Const	   *bound;

		if (!IsA(aggref, Aggref) || !is_state_aggregate(aggref->aggfnoid) ||
			list_length(aggref->args) != 5)
			return false;
		bound = (Const *) lfirst_node(TargetEntry, list_nth_cell(aggref->args, 4))->expr;
		if (!IsA(bound, Const) || bound->constisnull)
			return false;
		*max_rows = Max(*max_rows, (double) DatumGetInt64(bound->constvalue));
		states = true;
	}
	return states;
}

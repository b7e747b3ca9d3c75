/*-------------------------------------------------------------------------
 *
 * shardquery.c
 *	  The pieces of the queries that releases over shards become: what a
 *	  release reads, what the shards can run, one branch per partition.
 *
 * shardrewrite.c (releases merging per-user states) and shardgroups.c
 * (grouped releases over per-(user, group) values) build their queries
 * from these: the UNION ALL of one branch per foreign leaf partition, each
 * reading its partition as the table's owner, which postgres_fdw pushes
 * down to its shard; the functions they call, found by identity; and the
 * expressions rewritten so that the shards can run them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "foreign/foreign.h"
#include "partitioning/partdesc.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "storage/itemptr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "params.h"
#include "shardquery.h"

/*
 * The function schema.name(argtypes) of extension "extension", or
 * InvalidOid.  Found by identity, without the caller's privileges: an
 * analyst may use neither schema, and needs no privilege on what the
 * rewrite calls for it.
 */
Oid
uldp_shard_function(const char *extension, const char *schema, const char *name,
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

/* Is aggfnoid the aggregate "name" of uldp_shard? */
bool
uldp_shard_aggregate_named(Oid aggfnoid, const char *name)
{
	Oid			extension = get_extension_oid("uldp_shard", true);
	char	   *function;

	if (!OidIsValid(extension) || getExtensionOfObject(ProcedureRelationId, aggfnoid) != extension)
		return false;
	function = get_func_name(aggfnoid);
	return function != NULL && strcmp(function, name) == 0;
}

/*
 * The clamping of a release that can run over shards, from its
 * transition and final functions (the release's identity: the _ci twins
 * and other releases share transition functions); false for any other.
 */
static bool
release_clamp(Oid aggfnoid, UldpShardClamp *clamp)
{
	char	   *transfn = uldp_aggregate_support_name(aggfnoid, false);
	char	   *finalfn = uldp_aggregate_support_name(aggfnoid, true);

	if (transfn == NULL || finalfn == NULL)
		return false;
	if ((strcmp(finalfn, "mean_finalfn") == 0 || strcmp(finalfn, "mean_ci_finalfn") == 0 ||
		 strcmp(finalfn, "range_finalfn") == 0) &&
		(strcmp(transfn, "user_transfn") == 0 || strcmp(transfn, "user_bool_transfn") == 0))
		*clamp = ULDP_CLAMP_TO_BOUNDS;
	else if ((strcmp(finalfn, "sum_finalfn") == 0 || strcmp(finalfn, "sum_ci_finalfn") == 0) &&
			 (strcmp(transfn, "user_sum_transfn") == 0 || strcmp(transfn, "user_bool_sum_transfn") == 0))
		*clamp = ULDP_CLAMP_TO_MAGNITUDE;
	else if ((strcmp(finalfn, "count_finalfn") == 0 || strcmp(finalfn, "count_ci_finalfn") == 0) &&
			 strcmp(transfn, "user_count_transfn") == 0)
		*clamp = ULDP_CLAMP_COUNT;
	else
		return false;
	return true;
}

Const *
uldp_shard_float8(double value)
{
	return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8), Float8GetDatum(value), false,
					 FLOAT8PASSBYVAL);
}

Const *
uldp_shard_int8(int64 value)
{
	return makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(value), false,
					 FLOAT8PASSBYVAL);
}

static bool
is_null_const(Node *node)
{
	return IsA(node, Const) && ((Const *) node)->constisnull;
}

/*
 * A release's parameters after its user id, as it takes them over shards.
 * The mean of a boolean without bounds has the public bounds [0, 1] (the
 * final function sees the value's type, which a release over shards' values
 * does not: release.c), so they are written out; whether bounds are absent
 * must then be known when the statement is planned.  NULL if it cannot run
 * over shards (*reason says why).
 */
static List *
release_params(Aggref *release, int user_arg, UldpShardClamp clamp, const char **reason)
{
	List	   *params = NIL;
	bool		boolean = clamp == ULDP_CLAMP_TO_BOUNDS &&
		exprType((Node *) linitial_node(TargetEntry, release->args)->expr) == BOOLOID;

	for (int i = user_arg + 1; i < list_length(release->args); i++)
		params = lappend(params, lfirst_node(TargetEntry, list_nth_cell(release->args, i))->expr);
	if (!boolean)
		return params;
	/* the bounds as written (0 is int4 cast to float8), folded */
	params = (List *) eval_const_expressions(NULL, (Node *) params);
	if (list_length(params) == 1)
		return lappend(lappend(params, uldp_shard_float8(0)), uldp_shard_float8(1));
	if (is_null_const(lsecond(params)) && is_null_const(lthird(params)))
	{
		lsecond(params) = uldp_shard_float8(0);
		lthird(params) = uldp_shard_float8(1);
		return params;
	}
	if (!IsA(lsecond(params), Const) || !IsA(lthird(params), Const))
	{
		*reason = "The bounds of a mean of booleans over shards must be constants.";
		return NULL;
	}
	return params;
}

/*
 * Checks that "release" can run over shards, reading the user id column of
 * the table (entry varno) that *user already names if it is set; sets
 * *user, its clamping and its parameters after the user id.  False, with
 * *reason, if it cannot.
 */
bool
uldp_shard_release(Aggref *release, Index varno, Var **user, UldpShardClamp *clamp,
				   List **params, const char **reason)
{
	Var		   *reads;
	int			user_arg;

	if (!release_clamp(release->aggfnoid, clamp))
	{
		*reason = psprintf("%s has no release over shards yet: user_dp_mean, user_dp_sum, user_dp_count, their _ci twins and user_dp_range have.",
						   format_procedure(release->aggfnoid));
		return false;
	}
	user_arg = uldp_user_argument(release->aggfnoid);
	reads = (Var *) lfirst_node(TargetEntry, list_nth_cell(release->args, user_arg))->expr;
	if (release->agglevelsup != 0 || release->aggdistinct != NIL || release->aggorder != NIL ||
		!IsA(reads, Var) || reads->varno != varno || reads->varlevelsup != 0 ||
		(*user != NULL && reads->varattno != (*user)->varattno))
	{
		*reason = "Its releases must read the same user id column of the table itself.";
		return false;
	}
	*params = release_params(release, user_arg, *clamp, reason);
	if (*reason != NULL)
		return false;
	*user = reads;
	return true;
}

/* A clamping bound: the release's own, or +-ULDP_MAX_MAGNITUDE when not given. */
Expr *
uldp_shard_clamp_bound(Expr *given, double absent)
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

/* COALESCE(a, ..., z) as CASE WHEN a IS NOT NULL THEN a ... ELSE z END */
static Node *
coalesce_as_case(CoalesceExpr *coalesce)
{
	CaseExpr   *result = makeNode(CaseExpr);
	ListCell   *lc;

	result->casetype = coalesce->coalescetype;
	result->casecollid = coalesce->coalescecollid;
	result->location = -1;
	foreach(lc, coalesce->args)
	{
		CaseWhen   *when;
		NullTest   *test;

		if (lnext(coalesce->args, lc) == NULL)
		{
			result->defresult = (Expr *) lfirst(lc);
			break;
		}
		test = makeNode(NullTest);
		test->arg = (Expr *) lfirst(lc);
		test->nulltesttype = IS_NOT_NULL;
		test->argisrow = false;
		test->location = -1;
		when = makeNode(CaseWhen);
		when->expr = (Expr *) test;
		when->result = (Expr *) copyObject(lfirst(lc));
		when->location = -1;
		result->args = lappend(result->args, when);
	}
	return (Node *) result;
}

/* NULLIF(a, b) as CASE WHEN a = b THEN NULL ELSE a END */
static Node *
nullif_as_case(NullIfExpr *nullif)
{
	CaseExpr   *result = makeNode(CaseExpr);
	CaseWhen   *when = makeNode(CaseWhen);
	Expr	   *value = linitial(nullif->args);
	OpExpr	   *equal;

	equal = (OpExpr *) make_opclause(nullif->opno, BOOLOID, false,
									 copyObject(value), lsecond(nullif->args),
									 InvalidOid, nullif->inputcollid);
	equal->opfuncid = nullif->opfuncid;
	when->expr = (Expr *) equal;
	when->result = (Expr *) makeNullConst(exprType((Node *) value), exprTypmod((Node *) value),
										  nullif->opcollid);
	when->location = -1;
	result->casetype = exprType((Node *) value);
	result->casecollid = nullif->opcollid;
	result->args = list_make1(when);
	result->defresult = value;
	result->location = -1;
	return (Node *) result;
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
 *	  branch is then not pushed down;
 *	- COALESCE(a, ..., y, z) over columns becomes CASE WHEN a IS NOT NULL
 *	  THEN a ... ELSE z END, and NULLIF(a, b) becomes CASE WHEN a = b THEN
 *	  NULL ELSE a END, which postgres_fdw 15 ships (COALESCE and NULLIF it
 *	  does not): the same values, each argument evaluated only where the
 *	  original evaluates it, though some twice, so not when one is
 *	  volatile; nor for a composite type, whose IS NOT NULL the shard would
 *	  read as "no field is NULL".
 */
static Node *
shippable_mutator(Node *node, UldpShipping *context)
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
	if (IsA(node, CoalesceExpr) && !contain_volatile_functions(node) &&
		!type_is_rowtype(((CoalesceExpr *) node)->coalescetype))
		return coalesce_as_case((CoalesceExpr *) expression_tree_mutator(node, shippable_mutator,
																		 (void *) context));
	if (IsA(node, NullIfExpr) && !contain_volatile_functions(node))
		return nullif_as_case((NullIfExpr *) expression_tree_mutator(node, shippable_mutator,
																	 (void *) context));
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *func = (FuncExpr *) expression_tree_mutator(node, shippable_mutator,
																 (void *) context);
		char	   *name = get_func_name(func->funcid);
		Oid		   *argtypes;
		int			nargs;
		Oid			shard_function;

		if (name == NULL)
			return (Node *) func;
		/*
		 * date_part(text, date) is the SQL function date_part($1,
		 * $2::timestamp), which the planner would inline with the field's
		 * collation back (below): call what it stands for.
		 */
		if (func->funcid == F_DATE_PART_TEXT_DATE)
		{
			func->funcid = F_DATE_PART_TEXT_TIMESTAMP;
			lsecond(func->args) = makeFuncExpr(F_TIMESTAMP_DATE, TIMESTAMPOID,
											   list_make1(lsecond(func->args)),
											   InvalidOid, InvalidOid, COERCE_EXPLICIT_CAST);
		}
		/*
		 * A date field's name is a text constant, whose collation these
		 * functions never use, but which stops postgres_fdw from shipping
		 * them (only a column's collation ships).
		 */
		if (OidIsValid(func->inputcollid) && IsA(linitial(func->args), Const) &&
			(strcmp(name, "date_part") == 0 || strcmp(name, "extract") == 0 ||
			 strcmp(name, "date_trunc") == 0 || strcmp(name, "_safe_date_part") == 0 ||
			 strcmp(name, "_safe_date_trunc") == 0) &&
			!contain_var_clause((Node *) list_make1(linitial(func->args))))
		{
			Const	   *field = copyObject(linitial(func->args));

			field->constcollid = InvalidOid;
			linitial(func->args) = field;
			func->inputcollid = InvalidOid;
		}
		if (strncmp(name, "_safe_", strlen("_safe_")) != 0 ||
			getExtensionOfObject(ProcedureRelationId, func->funcid) != context->uldp)
			return (Node *) func;
		get_func_signature(func->funcid, &argtypes, &nargs);
		shard_function = uldp_shard_function("uldp_shard", "uldp_shard", name, argtypes, nargs);
		if (OidIsValid(shard_function))
			func->funcid = shard_function;
		return (Node *) func;
	}
	return expression_tree_mutator(node, shippable_mutator, (void *) context);
}

Node *
uldp_shard_shippable(Node *node, UldpShipping *shipping)
{
	return shippable_mutator(node, shipping);
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

/* The foreign leaf partitions of relid, or relid itself if it is one. */
List *
uldp_shard_leaves(Oid relid)
{
	List	   *leaves = NIL;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	return leaves;
}

/*
 * Are the users of relid's partitions disjoint, whatever rows the shards
 * hold, once each partition keeps only the user ids that hash to it
 * (uldp_shard.partition_member)?  Yes for a table partitioned by hash on
 * the user id column alone, with the type's default extended hash (which
 * the shards compute too) and a deterministic collation, into foreign
 * partitions directly below it.
 */
bool
uldp_shard_users_disjoint(Oid relid, AttrNumber user)
{
	Relation	rel;
	PartitionKey key;
	bool		disjoint;
	ListCell   *lc;

	rel = table_open(relid, NoLock);
	key = RelationGetPartitionKey(rel);
	disjoint = key != NULL && key->strategy == PARTITION_STRATEGY_HASH && key->partnatts == 1 &&
		key->partattrs[0] == user &&
		key->partsupfunc[0].fn_oid ==
		lookup_type_cache(key->parttypid[0], TYPECACHE_HASH_EXTENDED_PROC)->hash_extended_proc &&
		(!OidIsValid(key->partcollation[0]) || get_collation_isdeterministic(key->partcollation[0]));
	table_close(rel, NoLock);
	if (!disjoint)
		return false;
	foreach(lc, uldp_shard_leaves(relid))
		if (get_partition_parent(lfirst_oid(lc), false) != relid)
			return false;
	return true;
}

/* The bound of a hash partition: false for anything else. */
static bool
hash_bound(Oid leaf, int *modulus, int *remainder)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(leaf));
	PartitionBoundSpec *spec = NULL;
	Datum		bound;
	bool		isnull;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", leaf);
	bound = SysCacheGetAttr(RELOID, tuple, Anum_pg_class_relpartbound, &isnull);
	if (!isnull)
		spec = castNode(PartitionBoundSpec, stringToNode(TextDatumGetCString(bound)));
	ReleaseSysCache(tuple);
	if (spec == NULL || spec->strategy != PARTITION_STRATEGY_HASH)
		return false;
	*modulus = spec->modulus;
	*remainder = spec->remainder;
	return true;
}

/* The hash partition whose users the sums of one branch keep. */
typedef struct PartitionBound
{
	int			modulus;
	int			remainder;
} PartitionBound;

/*
 * Each uldp_shard.user_sums or user_values of a branch, keeping the user
 * ids that hash to its partition (uldp_shard_users_disjoint), so that no
 * user counts in two partitions' sums or values: its arguments modulus and
 * remainder, 1 and 0 (every user) as the rewrite writes them, become the
 * partition's.
 */
static Node *
partition_bound_mutator(Node *node, PartitionBound *bound)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref) && (uldp_shard_aggregate_named(((Aggref *) node)->aggfnoid, "user_sums") ||
							  uldp_shard_aggregate_named(((Aggref *) node)->aggfnoid, "user_values")))
	{
		Aggref	   *sums = copyObject((Aggref *) node);

		list_nth_node(TargetEntry, sums->args, ULDP_SUMS_MODULUS_ARG)->expr =
			(Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(bound->modulus),
							   false, true);
		list_nth_node(TargetEntry, sums->args, ULDP_SUMS_MODULUS_ARG + 1)->expr =
			(Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(bound->remainder),
							   false, true);
		return (Node *) sums;
	}
	return expression_tree_mutator(node, partition_bound_mutator, (void *) bound);
}

/* The branch's columns, with their sums keeping the leaf's users. */
static List *
keep_partition_users(List *exprs, Oid leaf)
{
	PartitionBound bound;

	if (!hash_bound(leaf, &bound.modulus, &bound.remainder))
		return list_copy(exprs);
	return (List *) partition_bound_mutator((Node *) exprs, &bound);
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

/* The reason a partition of relid would be planned with its shard's estimates, or NULL. */
const char *
uldp_shard_remote_estimate_reason(Oid relid)
{
	ListCell   *lc;

	foreach(lc, uldp_shard_leaves(relid))
		if (uses_remote_estimate(lfirst_oid(lc)))
			return psprintf("Its partition \"%s\" has use_remote_estimate on: planning would ask the shard before the charge.",
							get_rel_name(lfirst_oid(lc)));
	return NULL;
}

/* A subquery's range table entry, with its columns' names (String nodes). */
RangeTblEntry *
uldp_shard_subquery_entry(Query *subquery, const char *name, List *colnames)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = subquery;
	rte->eref = makeAlias(name, colnames);
	return rte;
}

/* Has query a CTE of that name? */
static bool
cte_named(Query *query, const char *name)
{
	ListCell   *lc;

	foreach(lc, query->cteList)
		if (strcmp(lfirst_node(CommonTableExpr, lc)->ctename, name) == 0)
			return true;
	return false;
}

/*
 * "subquery" as a materialized CTE of query, named "ctename" (followed by a
 * number if one of query's CTEs has that name), for a grouped release,
 * which reads its rows twice (grouping.c registers every user's groups,
 * then aggregates): the shards compute and send them once, and the
 * coordinator keeps them for the second reading.  A later CTE of query may
 * read it too.
 */
CommonTableExpr *
uldp_shard_cte(Query *query, Query *subquery, const char *ctename, List *colnames)
{
	CommonTableExpr *cte = makeNode(CommonTableExpr);
	ListCell   *lc;

	cte->ctename = pstrdup(ctename);
	for (int suffix = 2; cte_named(query, cte->ctename); suffix++)
		cte->ctename = psprintf("%s_%d", ctename, suffix);
	cte->ctematerialized = CTEMaterializeAlways;
	cte->ctequery = (Node *) subquery;
	cte->location = -1;
	cte->ctecolnames = colnames;
	foreach(lc, subquery->targetList)
	{
		Node	   *column = (Node *) lfirst_node(TargetEntry, lc)->expr;

		cte->ctecoltypes = lappend_oid(cte->ctecoltypes, exprType(column));
		cte->ctecoltypmods = lappend_int(cte->ctecoltypmods, exprTypmod(column));
		cte->ctecolcollations = lappend_oid(cte->ctecolcollations, exprCollation(column));
	}
	query->cteList = lappend(query->cteList, cte);
	return cte;
}

/* An entry of query that reads "subquery" as such a CTE of query. */
RangeTblEntry *
uldp_shard_cte_entry(Query *query, Query *subquery, const char *ctename, const char *alias,
					 List *colnames)
{
	return uldp_make_cte_entry(uldp_shard_cte(query, subquery, ctename, colnames), 0, alias);
}

static List *
string_list(List *names)
{
	List	   *strings = NIL;
	ListCell   *lc;

	foreach(lc, names)
		strings = lappend(strings, makeString(pstrdup(lfirst(lc))));
	return strings;
}

/* Groups branch by its target entry tle, numbered ref. */
static void
group_by(Query *branch, TargetEntry *tle, Index ref)
{
	SortGroupClause *group = makeNode(SortGroupClause);
	bool		hashable;

	get_sort_group_operators(exprType((Node *) tle->expr), false, true, false,
							 &group->sortop, &group->eqop, NULL, &hashable);
	group->tleSortGroupRef = ref;
	group->hashable = hashable;
	tle->ressortgroupref = ref;
	branch->groupClause = lappend(branch->groupClause, group);
}

/*
 * One branch: "columns" over one leaf partition, filtered by "quals", read
 * as the table's owner ("sublinks": the expressions hold scalar
 * subqueries), grouped as they say.
 */
static Query *
branch_query(Relation parent, Oid leaf, const UldpShardColumns *columns, Node *quals,
			 bool sublinks, Oid owner)
{
	Relation	rel = table_open(leaf, NoLock);
	Query	   *branch = makeNode(Query);
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	RangeTblRef *ref = makeNode(RangeTblRef);
	List	   *mapped = map_partition_varattnos(lappend(keep_partition_users(columns->exprs, leaf),
														 quals),
												 1, rel, parent);
	Bitmapset  *selected = NULL;
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
	pull_varattnos((Node *) mapped, 1, &selected);
	rte->selectedCols = selected;
	ref->rtindex = 1;

	branch->commandType = CMD_SELECT;
	branch->querySource = QSRC_ORIGINAL;
	branch->canSetTag = true;
	branch->rtable = list_make1(rte);
	branch->jointree = makeFromExpr(list_make1(ref), llast(mapped));
	foreach(lc, mapped)
	{
		int			column = foreach_current_index(lc) + 1;
		TargetEntry *tle;

		if (column == list_length(mapped))
			break;				/* the quals */
		tle = makeTargetEntry(lfirst(lc), column, pstrdup(list_nth(columns->names, column - 1)), false);
		if (bms_is_member(column, columns->grouped))
			group_by(branch, tle, column);
		branch->targetList = lappend(branch->targetList, tle);
	}
	branch->hasAggs = contain_agg_clause((Node *) branch->targetList);
	branch->hasSubLinks = sublinks;
	table_close(rel, NoLock);
	return branch;
}

/*
 * The UNION ALL of "branches", queries with the same columns, read through
 * entries named "entry_names": its columns are the first branch's, by
 * name.
 */
Query *
uldp_shard_union_all(List *branches, List *entry_names)
{
	Query	   *query = makeNode(Query);
	Query	   *first = linitial(branches);
	Node	   *tree = NULL;
	List	   *types = NIL;
	List	   *typmods = NIL;
	List	   *collations = NIL;
	List	   *colnames = NIL;
	ListCell   *lc;

	foreach(lc, first->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		types = lappend_oid(types, exprType((Node *) tle->expr));
		typmods = lappend_int(typmods, exprTypmod((Node *) tle->expr));
		collations = lappend_oid(collations, exprCollation((Node *) tle->expr));
		colnames = lappend(colnames, tle->resname);
		query->targetList = lappend(query->targetList,
									makeTargetEntry((Expr *) makeVarFromTargetEntry(1, tle), tle->resno,
													pstrdup(tle->resname), false));
	}
	query->commandType = CMD_SELECT;
	query->querySource = QSRC_ORIGINAL;
	query->canSetTag = true;
	foreach(lc, branches)
	{
		RangeTblRef *ref = makeNode(RangeTblRef);

		query->rtable = lappend(query->rtable,
								uldp_shard_subquery_entry(lfirst(lc),
														  list_nth(entry_names, foreach_current_index(lc)),
														  string_list(colnames)));
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
	return query;
}

/*
 * The UNION ALL of one branch per foreign leaf partition of "parent" (or
 * the only one), as a subquery.  Its OFFSET 0 keeps the planner from
 * pulling it up into the query above: the clauses without columns there
 * (the gate's checks, the size check, the registration of groups) then
 * gate the whole Append once, instead of each branch, whose foreign scans
 * can then run on their shards at once (asynchronously).
 */
Query *
uldp_shard_union(Relation parent, const UldpShardColumns *columns, Node *quals, bool sublinks,
				 Oid owner)
{
	List	   *branches = NIL;
	List	   *entry_names = NIL;
	Query	   *query;
	ListCell   *lc;

	foreach(lc, uldp_shard_leaves(RelationGetRelid(parent)))
	{
		branches = lappend(branches, branch_query(parent, lfirst_oid(lc), columns, quals, sublinks,
												  owner));
		entry_names = lappend(entry_names, psprintf("shard_%d", foreach_current_index(lc) + 1));
	}
	if (list_length(branches) == 1)
		return linitial(branches);
	query = uldp_shard_union_all(branches, entry_names);
	query->limitOffset = (Node *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(0),
											false, FLOAT8PASSBYVAL);
	return query;
}

/*
 * The size check: (SELECT count(c.checked) FROM (SELECT
 * uldp_shard.partition_check(max_rows) FROM ONLY <each partition> WHERE
 * ctid < '(0,0)' UNION ALL ...) c) IS NOT NULL, always true once every
 * shard has checked that its partition may hold no more than max_rows rows.
 * In a statement's WHERE it runs before any partition's rows are read, and
 * its outcome depends on the partitions' sizes only.  NULL if uldp_shard
 * is not installed here.
 */
Node *
uldp_shard_size_check(Relation parent, int max_rows)
{
	Oid			check_args[] = {INT8OID};
	Oid			check = uldp_shard_function("uldp_shard", "uldp_shard", "partition_check", check_args, 1);
	UldpShardColumns columns = {0};
	ItemPointer nowhere = palloc0(sizeof(ItemPointerData));
	Expr	   *no_rows;
	Query	   *states;
	Query	   *count = makeNode(Query);
	RangeTblRef *ref = makeNode(RangeTblRef);
	SubLink    *sublink = makeNode(SubLink);
	NullTest   *test = makeNode(NullTest);
	Var		   *state;

	if (!OidIsValid(check))
		return NULL;
	columns.exprs = list_make1(uldp_make_aggref(check, INT8OID, list_make1(uldp_shard_int8(max_rows)),
												NULL, InvalidOid));
	columns.names = list_make1("checked");
	ItemPointerSet(nowhere, 0, 0);
	no_rows = make_opclause(TIDLessOperator, BOOLOID, false,
							(Expr *) makeVar(1, SelfItemPointerAttributeNumber, TIDOID, -1, InvalidOid, 0),
							(Expr *) makeConst(TIDOID, -1, InvalidOid, sizeof(ItemPointerData),
											   PointerGetDatum(nowhere), false, false),
							InvalidOid, InvalidOid);
	states = uldp_shard_union(parent, &columns, (Node *) no_rows, false, parent->rd_rel->relowner);

	state = makeVar(1, 1, INT8OID, -1, InvalidOid, 0);
	ref->rtindex = 1;
	count->commandType = CMD_SELECT;
	count->querySource = QSRC_ORIGINAL;
	count->canSetTag = true;
	count->rtable = list_make1(uldp_shard_subquery_entry(states, "sizes", list_make1(makeString("checked"))));
	linitial_node(RangeTblEntry, count->rtable)->inFromCl = true;
	count->jointree = makeFromExpr(list_make1(ref), NULL);
	count->targetList = list_make1(makeTargetEntry((Expr *) uldp_make_aggref(F_COUNT_ANY, INT8OID,
																			  list_make1(state), NULL,
																			  InvalidOid),
												   1, "partitions", false));
	count->hasAggs = true;
	sublink->subLinkType = EXPR_SUBLINK;
	sublink->subselect = (Node *) count;
	sublink->location = -1;
	test->arg = (Expr *) sublink;
	test->nulltesttype = IS_NOT_NULL;
	test->location = -1;
	return (Node *) test;
}

/*
 * Puts "entry" in place of query's entry varno, the protected table, which
 * stays in the range table, unread: for plan invalidation when partitions
 * change, and for the gate's refusal of EXPLAIN to roles that may not read it.
 */
void
uldp_shard_replace_entry(Query *query, Index varno, RangeTblEntry *entry)
{
	RangeTblEntry *table = copyObject(rt_fetch(varno, query->rtable));

	table->inh = false;
	table->requiredPerms = 0;
	table->selectedCols = NULL;
	table->inFromCl = false;
	entry->inFromCl = true;
	list_nth_cell(query->rtable, varno - 1)->ptr_value = entry;
	query->rtable = lappend(query->rtable, table);
}

/*-------------------------------------------------------------------------
 *
 * grouping.c
 *	  Grouped releases: GROUP BY over uldp aggregates.
 *
 * A query level that groups and computes uldp aggregates is rewritten before
 * it is planned (the planner hook, gate.c), for every role:
 *
 *	SELECT keys, agg(x, user_id, eps) FROM t WHERE f GROUP BY keys HAVING h
 *
 * becomes
 *
 *	WITH uldp_groups_<s> AS MATERIALIZED (
 *		SELECT uldp.group_registry(s, k, (SELECT uldp.group_key(s)), user_id, keys)
 *		AS registry FROM t WHERE f)
 *	SELECT keys, agg(x, uldp.group_member(s, k, R, user_id, keys), eps)
 *	FROM t
 *	WHERE f
 *	GROUP BY keys
 *	HAVING CASE WHEN uldp.group_selected(s, k, R, user_id, sel_eps, sel_delta, keys)
 *		   THEN h ELSE false END
 *
 * with R = (SELECT registry FROM uldp_groups_<s>), s a slot that names this
 * release, k = uldp.max_groups_per_user and sel_eps, sel_delta =
 * uldp.group_selection_epsilon and _delta, read now: a prepared statement
 * keeps the values it was planned with.
 *
 *	- group_registry and group_member (groupbound.c) keep every user in at
 *	  most k groups, a uniformly random subset of its groups;
 *	- group_selected (selection.c) lets a group appear only if a noisy
 *	  count of its users passes a threshold derived from delta; the count,
 *	  of the users that keep the group, comes from the registry;
 *	- every uldp aggregate of the level, selection included, releases with
 *	  epsilon / k (and delta / k) per group (statement.c), while the
 *	  statement is charged its epsilon, once, before reading.
 *
 * The registration is a CTE without a column of the level: PostgreSQL runs
 * it once, and each R is an initplan that reads its one row.  R is an
 * argument of every call that decides a row's groups, and PostgreSQL
 * evaluates an initplan before the first expression that reads its output,
 * so every row is registered before the first one is aggregated, whatever
 * the plan: hashed or sorted, serial or parallel.  Both halves may run in
 * parallel: the registration as any aggregate (partial registries, under
 * the key that the initplan (SELECT uldp.group_key(s)) passes to the
 * workers, merged in the leader), then the aggregation, whose workers
 * receive R from the leader before they start: the registry's snapshot, all
 * that group_member and group_selected need there (groupbound.c).
 * statement.c checks the plan before the statement runs.
 *
 * A key computed on one column (date_trunc('month', d)) is written, in both
 * readings, as a CASE that computes it once per distinct value of the
 * column (keymemo.c): in the level's output and HAVING, where PostgreSQL
 * finds the keys it computes below the aggregation, and in the grouping
 * functions' arguments, which then read that one computation.
 *
 * Public keys.  When the level groups by one column whose keys the table's
 * owner declared public (uldp.set_public_groups, protect.c), exactly those
 * groups appear, empty ones included, and choosing them costs nothing:
 *
 *	WITH uldp_groups_<s> AS MATERIALIZED (
 *		SELECT uldp.group_registry(s, k, (SELECT uldp.group_key(s)), user_id, t.c)
 *		AS registry FROM t WHERE f AND t.c = ANY(<public keys>))
 *	SELECT k.key, agg(x, uldp.group_member(s, k, R, user_id, t.c), eps)
 *	FROM (VALUES <public keys>) k(key) LEFT JOIN t ON t.c = k.key AND f
 *	WHERE <clauses without columns>
 *	GROUP BY k.key HAVING h
 *
 * Rows with other keys are not read into any group.  An empty group's
 * aggregates see one row without a user (the join's NULLs), which they
 * skip: their releases are those of empty input.  The clauses without
 * columns (safe_expr.c's checks) stay in WHERE, evaluated once before
 * reading.
 *
 * All uldp aggregates of a grouped level must take the same user argument:
 * the bound is on the groups of one privacy unit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/nodeAgg.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "utils/array.h"
#include "utils/typcache.h"
#include "utils/lsyscache.h"

#include "groupbound.h"
#include "params.h"
#include "grouping.h"
#include "keymemo.h"
#include "protect.h"
#include "selection.h"

/* uldp.<name>(...) with these argument types; InvalidOid if missing_ok and missing */
static Oid
lookup_uldp_function(const char *name, int nargs, const Oid *argtypes, bool missing_ok)
{
	return LookupFuncName(list_make2(makeString("uldp"), makeString(pstrdup(name))),
						  nargs, argtypes, missing_ok);
}

static Oid
uldp_function(const char *name, int nargs, const Oid *argtypes)
{
	return lookup_uldp_function(name, nargs, argtypes, false);
}

/*
 * The arguments of group_member: slot, k, registry, user, VARIADIC keys
 * (group_registry's: the key in place of the registry)
 */
static const Oid lookup_argtypes[] = {INT8OID, INT4OID, BYTEAOID, ANYELEMENTOID, ANYOID};

/* uldp.group_selected's: the same, with epsilon and delta before the keys */
static const Oid selection_argtypes[] = {INT8OID, INT4OID, BYTEAOID, ANYELEMENTOID,
	FLOAT8OID, FLOAT8OID, ANYOID};

/* the grouping argument that is the registry */
#define REGISTRY_ARG 2

static Oid
grouping_function_oid(const char *name)
{
	return uldp_function(name, lengthof(lookup_argtypes), lookup_argtypes);
}

/* slot, k, registry, user: the grouping functions' first arguments */
static List *
grouping_args(int64 slot, int k, Node *registry, Expr *user)
{
	return list_make4(makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
								Int64GetDatum(slot), false, FLOAT8PASSBYVAL),
					  makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								Int32GetDatum(k), false, true),
					  registry, copyObject(user));
}

/* uldp.group_member(s, k, registry, user, keys...) */
static Expr *
member_call(int64 slot, int k, Node *registry, Expr *user, List *keys)
{
	return (Expr *) makeFuncExpr(grouping_function_oid("group_member"), exprType((Node *) user),
								 list_concat(grouping_args(slot, k, registry, user), copyObject(keys)),
								 exprCollation((Node *) user), InvalidOid, COERCE_EXPLICIT_CALL);
}

typedef struct UldpAggrefs
{
	Oid			extension;
	List	   *aggrefs;
} UldpAggrefs;

/* The uldp aggregates of one query level (not of its subqueries). */
static bool
collect_aggrefs(Node *node, UldpAggrefs *found)
{
	if (node == NULL || IsA(node, Query))
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *aggref = (Aggref *) node;

		if (aggref->agglevelsup == 0 &&
			getExtensionOfObject(ProcedureRelationId, aggref->aggfnoid) == found->extension)
			found->aggrefs = lappend(found->aggrefs, aggref);
		return false;
	}
	return expression_tree_walker(node, collect_aggrefs, (void *) found);
}

/* The user argument's entry of a uldp aggregate. */
static TargetEntry *
user_entry(Aggref *aggref)
{
	return list_nth_node(TargetEntry, aggref->args, uldp_user_argument(aggref->aggfnoid));
}

static void
refuse(const char *message, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s", message),
			 errhint("%s", hint)));
}

/*
 * The oid of the partition selection aggregate, uldp.group_selected, or
 * InvalidOid in an extension older than 0.9 (statement.c refuses an older
 * one's calls)
 */
static Oid
uldp_selection_oid(void)
{
	return lookup_uldp_function("group_selected", lengthof(selection_argtypes), selection_argtypes, true);
}

/*
 * Refuses a level whose rows could differ between two readings: the rows a
 * grouped release aggregates must be the rows it registered (groupbound.c
 * keeps every pair that registration did not drop), so the level's FROM
 * and WHERE, read twice under one snapshot, must give the same rows: no
 * volatile function, no sample, no foreign table (which another server may
 * answer differently).
 */
static void
refuse_unrepeatable(Query *query)
{
	bool		found = contain_volatile_functions((Node *) query->jointree) ||
		contain_volatile_functions((Node *) query->cteList);
	ListCell   *lc;

	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->tablesample != NULL ||
			(rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_FOREIGN_TABLE))
			refuse("a grouped uldp release cannot read a sample or a foreign table",
				   "A grouped release reads its rows twice, and both readings must give the same rows: release over local tables, without TABLESAMPLE.");
		found = found || contain_volatile_functions((Node *) rte->securityQuals) ||
			(rte->rtekind == RTE_SUBQUERY && contain_volatile_functions((Node *) rte->subquery)) ||
			(rte->rtekind == RTE_FUNCTION && contain_volatile_functions((Node *) rte->functions)) ||
			(rte->rtekind == RTE_VALUES && contain_volatile_functions((Node *) rte->values_lists));
	}
	if (found)
		refuse("the rows of a grouped uldp release cannot depend on volatile functions",
			   "A grouped release reads its rows twice, and both readings must give the same rows: filter and join with stable expressions, without random() or other volatile functions.");
}

/* uldp.group_selected(s, k, registry, user, epsilon, delta, keys...) */
static Aggref *
selection_aggref(int64 slot, int k, Node *registry, Expr *user, List *keys)
{
	List	   *args = grouping_args(slot, k, registry, user);

	args = lappend(args, makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
								   Float8GetDatum(uldp_group_selection_epsilon), false, FLOAT8PASSBYVAL));
	args = lappend(args, makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
								   Float8GetDatum(uldp_group_selection_delta), false, FLOAT8PASSBYVAL));
	return uldp_make_aggref(uldp_function("group_selected", lengthof(selection_argtypes), selection_argtypes),
							BOOLOID, list_concat(args, copyObject(keys)), NULL, InvalidOid);
}

/* uldp.group_registry(slot, k, key, user, VARIADIC keys), or InvalidOid */
static Oid
registry_oid(bool missing_ok)
{
	return lookup_uldp_function("group_registry", lengthof(lookup_argtypes), lookup_argtypes,
								missing_ok);
}

/* (SELECT uldp.group_key(s)) */
static Node *
key_reference(int64 slot)
{
	Query	   *read = makeNode(Query);
	SubLink    *link = makeNode(SubLink);
	Expr	   *key = (Expr *) makeFuncExpr(uldp_function("group_key", 1, (Oid[]) {INT8OID}),
											BYTEAOID,
											list_make1(makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
																 Int64GetDatum(slot), false,
																 FLOAT8PASSBYVAL)),
											InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);

	read->commandType = CMD_SELECT;
	read->querySource = QSRC_ORIGINAL;
	read->canSetTag = true;
	read->jointree = makeFromExpr(NIL, NULL);
	read->targetList = list_make1(makeTargetEntry(key, 1, pstrdup("key"), false));
	link->subLinkType = EXPR_SUBLINK;
	link->subselect = (Node *) read;
	link->location = -1;
	return (Node *) link;
}

/* The CTE "name" of query's own WITH list. */
static CommonTableExpr *
level_cte(Query *query, const char *name)
{
	ListCell   *lc;

	foreach(lc, query->cteList)
		if (strcmp(lfirst_node(CommonTableExpr, lc)->ctename, name) == 0)
			return lfirst(lc);
	elog(ERROR, "CTE \"%s\" of a grouped uldp release not found", name);
	return NULL;
}

typedef struct CteReferences
{
	Query	   *level;			/* whose CTEs are referenced */
	int			depth;			/* of the query being walked, below the copy */
} CteReferences;

/*
 * In the copy of a level's FROM and WHERE that its registration reads, one
 * level below it, the references to the level's own CTEs (those that point
 * at the copy's own query level, which holds none) go one level further up,
 * and count as references of the CTE: a CTE read more than once is
 * materialized, so both readings see the same rows.
 */
static bool
level_cte_references(Node *node, CteReferences *references)
{
	bool		result;

	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_CTE && rte->ctelevelsup == references->depth)
		{
			rte->ctelevelsup++;
			level_cte(references->level, rte->ctename)->cterefcount++;
		}
		return false;
	}
	if (!IsA(node, Query))
		return expression_tree_walker(node, level_cte_references, (void *) references);
	references->depth++;
	result = query_tree_walker((Query *) node, level_cte_references, (void *) references,
							   QTW_EXAMINE_RTES_BEFORE);
	references->depth--;
	return result;
}

/*
 * WITH uldp_groups_<s> AS MATERIALIZED (
 *	SELECT uldp.group_registry(s, k, (SELECT uldp.group_key(s)), user, keys)
 *	AS registry FROM <the level's FROM> WHERE <its WHERE>
 *	[AND key = ANY(public keys)])
 */
static CommonTableExpr *
registration(Query *query, int64 slot, int k, Expr *user, List *keys, Const *public)
{
	Query	   *scan = makeNode(Query);
	CommonTableExpr *cte = makeNode(CommonTableExpr);
	Node	   *quals;
	List	   *args;
	Aggref	   *registry;
	CteReferences references;

	scan->commandType = CMD_SELECT;
	scan->querySource = QSRC_ORIGINAL;
	scan->canSetTag = true;
	scan->rtable = copyObject(query->rtable);
	scan->jointree = copyObject(query->jointree);
	quals = scan->jointree->quals;
	if (public != NULL)
	{
		ScalarArrayOpExpr *any = makeNode(ScalarArrayOpExpr);
		Var		   *key = linitial(keys);

		any->opno = lookup_type_cache(key->vartype, TYPECACHE_EQ_OPR)->eq_opr;
		any->useOr = true;
		any->inputcollid = key->varcollid;
		any->args = list_make2(copyObject(key), copyObject(public));
		any->location = -1;
		quals = make_and_qual(quals, (Node *) any);
	}
	scan->jointree->quals = quals;
	args = list_make3(makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(slot),
								false, FLOAT8PASSBYVAL),
					  makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(k), false, true),
					  key_reference(slot));
	args = lappend(args, copyObject(user));
	args = list_concat(args, copyObject(keys));
	registry = uldp_make_aggref(registry_oid(false), BYTEAOID, args, NULL, InvalidOid);
	scan->targetList = list_make1(makeTargetEntry((Expr *) registry, 1, pstrdup("registry"), false));
	scan->hasAggs = true;
	scan->hasSubLinks = true;
	/* references to enclosing queries are one level further away in it */
	IncrementVarSublevelsUp((Node *) scan, 1, 1);
	/* and so are the level's own CTEs, which precede it */
	references.level = query;
	references.depth = 0;
	query_tree_walker(scan, level_cte_references, (void *) &references, QTW_EXAMINE_RTES_BEFORE);

	cte->ctename = psprintf("uldp_groups_%lld", (long long) slot);
	cte->ctematerialized = CTEMaterializeAlways;
	cte->ctequery = (Node *) scan;
	cte->location = -1;
	cte->ctecolnames = list_make1(makeString(pstrdup("registry")));
	cte->ctecoltypes = list_make1_oid(BYTEAOID);
	cte->ctecoltypmods = list_make1_int(-1);
	cte->ctecolcollations = list_make1_oid(InvalidOid);
	return cte;
}

/*
 * (SELECT registry FROM uldp_groups_<s>): the registry's snapshot, read once
 * by an initplan, which PostgreSQL evaluates before the first row that
 * needs it and passes to parallel workers.
 */
static Node *
registry_reference(CommonTableExpr *cte)
{
	Query	   *read = makeNode(Query);
	RangeTblRef *ref = makeNode(RangeTblRef);
	SubLink    *link = makeNode(SubLink);

	ref->rtindex = 1;
	read->commandType = CMD_SELECT;
	read->querySource = QSRC_ORIGINAL;
	read->canSetTag = true;
	read->rtable = list_make1(uldp_make_cte_entry(cte, 1, cte->ctename));
	read->jointree = makeFromExpr(list_make1(ref), NULL);
	read->targetList = list_make1(makeTargetEntry((Expr *) makeVar(1, 1, BYTEAOID, -1, InvalidOid, 0),
												  1, pstrdup("registry"), false));

	link->subLinkType = EXPR_SUBLINK;
	link->subselect = (Node *) read;
	link->location = -1;
	return (Node *) link;
}

/*
 * The public keys of the level's grouping key, if it is one column of a
 * table whose keys were declared public, or a column of a subquery or of
 * the level's CTE that returns such a column as it is (its origin: the
 * pairs of a release over shards, shardgroups.c); else NULL.
 */
static Const *
public_keys(Query *query, List *keys)
{
	Var		   *var = linitial(keys);
	RangeTblEntry *rte;
	Oid			relid;
	AttrNumber	attnum;
	Datum		array;

	if (list_length(keys) != 1 || !IsA(var, Var) || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	rte = rt_fetch(var->varno, query->rtable);
	relid = rte->rtekind == RTE_RELATION ? rte->relid : InvalidOid;
	attnum = var->varattno;
	if (rte->rtekind == RTE_SUBQUERY || (rte->rtekind == RTE_CTE && rte->ctelevelsup == 0))
	{
		Query	   *subquery = rte->rtekind == RTE_SUBQUERY ? rte->subquery :
			(Query *) level_cte(query, rte->ctename)->ctequery;
		TargetEntry *column = get_tle_by_resno(subquery->targetList, var->varattno);

		if (column != NULL && !column->resjunk && IsA(column->expr, Var) &&
			OidIsValid(column->resorigtbl))
		{
			relid = column->resorigtbl;
			attnum = column->resorigcol;
		}
	}
	if (!OidIsValid(relid) || !uldp_public_group_keys(relid, attnum, &array))
		return NULL;
	return makeConst(get_array_type(var->vartype), -1, InvalidOid, -1, array, false, false);
}

typedef struct KeyReplacement
{
	List	   *keys;
	List	   *replacements;	/* of each key */
} KeyReplacement;

/* The grouping keys replaced, outside aggregate calls, the outermost first. */
static Node *
replace_key(Node *node, KeyReplacement *context)
{
	ListCell   *key;
	ListCell   *replacement;

	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
		return node;
	forboth(key, context->keys, replacement, context->replacements)
		if (equal(node, lfirst(key)))
			return copyObject(lfirst(replacement));
	return expression_tree_mutator(node, replace_key, (void *) context);
}

/*
 * The level's grouping keys replaced, in its output and its HAVING (where
 * PostgreSQL finds the keys that it computes once per row, below the
 * aggregation, and the expressions over them)
 */
static void
replace_keys(Query *query, List *keys, List *replacements)
{
	KeyReplacement replacement = {keys, replacements};
	ListCell   *lc;

	foreach(lc, query->targetList)
		lfirst_node(TargetEntry, lc)->expr =
			(Expr *) replace_key((Node *) lfirst_node(TargetEntry, lc)->expr, &replacement);
	query->havingQual = replace_key(query->havingQual, &replacement);
}

/*
 * The jointree of a release grouped by public keys (see the file's header).
 */
static void
join_public_keys(Query *query, Var *key, Const *array)
{
	RangeTblEntry *values = makeNode(RangeTblEntry);
	ArrayType  *keys = DatumGetArrayTypeP(array->constvalue);
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Var		   *column;
	JoinExpr   *join = makeNode(JoinExpr);
	FromExpr   *from = query->jointree;
	List	   *row_clauses = NIL;
	List	   *once = NIL;
	ListCell   *lc;

	get_typlenbyvalalign(key->vartype, &typlen, &typbyval, &typalign);
	deconstruct_array(keys, key->vartype, typlen, typbyval, typalign, &elements, &nulls, &n);
	for (int i = 0; i < n; i++)
		values->values_lists = lappend(values->values_lists,
									   list_make1(makeConst(key->vartype, key->vartypmod,
															key->varcollid, typlen, elements[i],
															false, typbyval)));
	values->rtekind = RTE_VALUES;
	values->coltypes = list_make1_oid(key->vartype);
	values->coltypmods = list_make1_int(key->vartypmod);
	values->colcollations = list_make1_oid(key->varcollid);
	values->eref = makeAlias("uldp_public_groups", list_make1(makeString("key")));
	values->inFromCl = true;
	query->rtable = lappend(query->rtable, values);
	column = makeVar(list_length(query->rtable), 1, key->vartype, key->vartypmod, key->varcollid, 0);

	/* clauses that read rows join; the others stay evaluated once */
	foreach(lc, make_ands_implicit((Expr *) from->quals))
	{
		if (contain_vars_of_level(lfirst(lc), 0))
			row_clauses = lappend(row_clauses, lfirst(lc));
		else
			once = lappend(once, lfirst(lc));
	}
	row_clauses = lcons(make_opclause(lookup_type_cache(key->vartype, TYPECACHE_EQ_OPR)->eq_opr,
									  BOOLOID, false, (Expr *) copyObject(key), (Expr *) column,
									  InvalidOid, key->varcollid),
						row_clauses);

	join->jointype = JOIN_LEFT;
	join->larg = (Node *) makeNode(RangeTblRef);
	((RangeTblRef *) join->larg)->rtindex = list_length(query->rtable);
	join->rarg = linitial(from->fromlist);
	for_each_from(lc, from->fromlist, 1)
	{
		JoinExpr   *cross = makeNode(JoinExpr);

		cross->jointype = JOIN_INNER;
		cross->larg = join->rarg;
		cross->rarg = lfirst(lc);
		join->rarg = (Node *) cross;
	}
	join->quals = (Node *) make_ands_explicit(row_clauses);
	query->jointree = makeFromExpr(list_make1(join),
								   once == NIL ? NULL : (Node *) make_ands_explicit(once));

	replace_keys(query, list_make1(key), list_make1(column));
}

/*
 * CASE WHEN <selected> THEN <having> ELSE false END: the query's own HAVING
 * is evaluated only on groups that passed selection.  It may compute on the
 * group's releases and fail (1 / (user_dp_count(...) - 5)); on a group that
 * is not released, that failure would tell its value.  A CASE keeps the
 * order, which a plain AND leaves to the planner.
 */
static Node *
selected_first(Aggref *selection, Node *having)
{
	CaseExpr   *when = makeNode(CaseExpr);
	CaseWhen   *selected = makeNode(CaseWhen);

	selected->expr = (Expr *) selection;
	selected->result = having ? (Expr *) having : (Expr *) makeBoolConst(true, false);
	selected->location = -1;
	when->casetype = BOOLOID;
	when->casecollid = InvalidOid;
	when->args = list_make1(selected);
	when->defresult = (Expr *) makeBoolConst(false, false);
	when->location = -1;
	return (Node *) when;
}

/*
 * Rewrites a query level if it is a grouped release (see the file's header).
 */
void
uldp_grouping_rewrite(Query *query)
{
	UldpAggrefs found = {get_extension_oid("uldp", true), NIL};
	Expr	   *user = NULL;
	List	   *keys = NIL;
	List	   *memoized = NIL;
	int64		slot;
	int			k = uldp_max_groups_per_user;
	Const	   *public;
	CommonTableExpr *registered;
	ListCell   *lc;

	if (!OidIsValid(found.extension) || query->groupClause == NIL || query->groupingSets != NIL)
		return;
	collect_aggrefs((Node *) query->targetList, &found);
	collect_aggrefs(query->havingQual, &found);
	if (found.aggrefs == NIL)
		return;

	foreach(lc, found.aggrefs)
	{
		Expr	   *aggref_user = user_entry(lfirst(lc))->expr;

		if (user != NULL && !equal(user, aggref_user))
			refuse("the uldp aggregates of a grouped query must all take the same user argument",
				   "Contributions are bounded per user across groups; group the releases of each privacy unit in their own query.");
		user = aggref_user;
	}
	foreach(lc, query->groupClause)
	{
		Node	   *key = get_sortgroupclause_expr(lfirst_node(SortGroupClause, lc), query->targetList);

		if (contain_volatile_functions(key))
			refuse("the grouping keys of a uldp release cannot be volatile",
				   "Group by columns and expressions that give the same key for the same row every time.");
		if (equal(key, user))
			refuse("a uldp release cannot be grouped by its user argument",
				   "Each group would hold one user: group by a property that many users share.");
		keys = lappend(keys, key);
	}

	if (!OidIsValid(registry_oid(true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("grouped uldp releases need the functions of uldp 0.9"),
				 errhint("Update the extension: ALTER EXTENSION uldp UPDATE.")));
	refuse_unrepeatable(query);
	slot = uldp_group_bound_next_slot();
	public = public_keys(query, keys);
	/* both readings compute a key of one column once per distinct value (keymemo.c) */
	foreach(lc, keys)
		memoized = lappend(memoized, uldp_key_memo_wrap(copyObject(lfirst(lc)), slot,
														foreach_current_index(lc)));
	registered = registration(query, slot, k, user, memoized, public);
	query->cteList = lappend(query->cteList, registered);
	if (public != NULL)
		join_public_keys(query, linitial(keys), public);
	else
	{
		replace_keys(query, keys, memoized);
		keys = memoized;
	}
	query->hasSubLinks = true;
	foreach(lc, found.aggrefs)
	{
		TargetEntry *entry = user_entry(lfirst(lc));

		entry->expr = member_call(slot, k, registry_reference(registered), entry->expr, keys);
	}
	if (public == NULL)
		query->havingQual = selected_first(selection_aggref(slot, k, registry_reference(registered),
															user, keys),
										   query->havingQual);
}

/*
 * The grouping arguments (slot, k, registry, user, keys...) of "aggref" (its
 * user argument is its argument number user_arg), if uldp's rewrite made
 * them; else NIL.  Partition selection (uldp.group_selected) takes them
 * itself, with its epsilon and delta before the keys; every other uldp
 * aggregate reads its users through group_member, which takes them.
 */
static List *
grouped_args(Aggref *aggref, int user_arg)
{
	List	   *args = NIL;
	Const	   *slot_arg;
	Const	   *k_arg;
	ListCell   *lc;

	if (aggref->aggfnoid == uldp_selection_oid())
	{
		foreach(lc, aggref->args)
		{
			TargetEntry *entry = lfirst_node(TargetEntry, lc);

			if (!entry->resjunk && entry->resno - 1 != ULDP_SELECTION_EPSILON_ARG &&
				entry->resno - 1 != ULDP_SELECTION_DELTA_ARG)
				args = lappend(args, entry->expr);
		}
	}
	else
	{
		FuncExpr   *call;

		if (user_arg < 0 || user_arg >= list_length(aggref->args))
			return NIL;
		call = (FuncExpr *) list_nth_node(TargetEntry, aggref->args, user_arg)->expr;
		if (!IsA(call, FuncExpr) || call->funcid != grouping_function_oid("group_member"))
			return NIL;
		args = call->args;
	}
	if (list_length(args) < REGISTRY_ARG + 2)
		return NIL;
	slot_arg = linitial(args);
	k_arg = lsecond(args);
	if (!IsA(slot_arg, Const) || !IsA(k_arg, Const) || slot_arg->constisnull || k_arg->constisnull ||
		DatumGetInt32(k_arg->constvalue) < 1 ||
		DatumGetInt32(k_arg->constvalue) > ULDP_MAX_GROUPS_PER_USER)
		return NIL;
	return args;
}

/*
 * Was "aggref" (whose user argument is its argument number user_arg)
 * rewritten by uldp_grouping_rewrite()?  Then *slot and *k receive its
 * release's slot and bound, and *key_types the types of its grouping keys
 * (each may be NULL when not wanted).
 */
bool
uldp_grouped_call(Aggref *aggref, int user_arg, int64 *slot, int *k, List **key_types)
{
	List	   *args = grouped_args(aggref, user_arg);
	ListCell   *lc;

	if (args == NIL)
		return false;
	if (slot != NULL)
		*slot = DatumGetInt64(((Const *) linitial(args))->constvalue);
	if (k != NULL)
		*k = DatumGetInt32(((Const *) lsecond(args))->constvalue);
	if (key_types != NULL)
	{
		*key_types = NIL;
		for_each_from(lc, args, REGISTRY_ARG + 2)
			*key_types = lappend_oid(*key_types, exprType(lfirst(lc)));
	}
	return true;
}

/* Is "cte" the plan of a registration: the aggregate uldp.group_registry alone, finished? */
bool
uldp_grouping_is_registration_plan(Plan *cte)
{
	TargetEntry *entry;
	Oid			registry;

	if (cte == NULL || !IsA(cte, Agg) || ((Agg *) cte)->aggstrategy != AGG_PLAIN ||
		DO_AGGSPLIT_SKIPFINAL(((Agg *) cte)->aggsplit) || list_length(cte->targetlist) != 1)
		return false;
	entry = linitial_node(TargetEntry, cte->targetlist);
	registry = registry_oid(true);
	return IsA(entry->expr, Aggref) && OidIsValid(registry) &&
		((Aggref *) entry->expr)->aggfnoid == registry;
}

/* Does "scan" read a registration? */
bool
uldp_grouping_reads_registration(CteScan *scan, EState *estate)
{
	if (scan->ctePlanId < 1 || scan->ctePlanId > list_length(estate->es_plannedstmt->subplans))
		return false;
	return uldp_grouping_is_registration_plan(list_nth(estate->es_plannedstmt->subplans,
													   scan->ctePlanId - 1));
}

/*
 * Is "registry" the output of an initplan that reads the registration of
 * slot "slot": (SELECT registry FROM uldp_groups_<s>), whose CTE is the
 * aggregate uldp.group_registry(slot, ...) over every row of the level?
 * Then every call that takes it runs after the registration: PostgreSQL
 * evaluates an initplan before the first expression that reads its output
 * (or, in a parallel plan, before the workers start).
 */
static bool
reads_registration(Node *registry, int64 slot, EState *estate)
{
	Param	   *param = (Param *) registry;
	SubPlanState *initplan;
	CteScan    *scan;
	Plan	   *cte;
	TargetEntry *entry;
	Aggref	   *aggref;
	Const	   *aggref_slot;

	if (!IsA(param, Param) || param->paramkind != PARAM_EXEC ||
		param->paramid < 0 || param->paramid >= list_length(estate->es_plannedstmt->paramExecTypes))
		return false;
	initplan = (SubPlanState *) estate->es_param_exec_vals[param->paramid].execPlan;
	if (initplan == NULL || !IsA(initplan, SubPlanState) || initplan->planstate == NULL ||
		!IsA(initplan->planstate->plan, CteScan))
		return false;
	scan = (CteScan *) initplan->planstate->plan;
	if (!uldp_grouping_reads_registration(scan, estate))
		return false;
	cte = list_nth(estate->es_plannedstmt->subplans, scan->ctePlanId - 1);
	entry = linitial_node(TargetEntry, cte->targetlist);
	aggref = uldp_original_aggref(cte, (Aggref *) entry->expr);
	aggref_slot = (Const *) linitial_node(TargetEntry, aggref->args)->expr;
	return IsA(aggref_slot, Const) && !aggref_slot->constisnull &&
		DatumGetInt64(aggref_slot->constvalue) == slot;
}

/* Is "query" a registration that uldp_grouping_rewrite made? */
bool
uldp_grouping_is_registration(Query *query)
{
	TargetEntry *entry;

	if (query->commandType != CMD_SELECT || list_length(query->targetList) != 1 ||
		query->groupClause != NIL)
		return false;
	entry = linitial_node(TargetEntry, query->targetList);
	return IsA(entry->expr, Aggref) && OidIsValid(registry_oid(true)) &&
		((Aggref *) entry->expr)->aggfnoid == registry_oid(true);
}

/* uldp.group_registry, or InvalidOid in an extension older than 0.9 */
Oid
uldp_registry_oid(void)
{
	return registry_oid(true);
}

/*
 * Is "agg" the registration of a grouped release (uldp.group_registry)?
 * Then *k and *key_types receive its bound and the types of its keys.
 */
bool
uldp_grouping_registration(AggState *agg, int *k, List **key_types)
{
	Oid			registry = registry_oid(true);

	for (int i = 0; i < agg->numaggs; i++)
	{
		Aggref	   *aggref = uldp_original_aggref(agg->ss.ps.plan, agg->peragg[i].aggref);
		Const	   *k_arg;
		ListCell   *lc;

		if (!OidIsValid(registry) || aggref->aggfnoid != registry)
			continue;
		k_arg = (Const *) lsecond_node(TargetEntry, aggref->args)->expr;
		if (!IsA(k_arg, Const) || k_arg->constisnull)
			return false;
		*k = DatumGetInt32(k_arg->constvalue);
		*key_types = NIL;
		for_each_from(lc, aggref->args, REGISTRY_ARG + 2)
			*key_types = lappend_oid(*key_types, exprType((Node *) lfirst_node(TargetEntry, lc)->expr));
		return true;
	}
	return false;
}

/*
 * Are all the rows that the grouped release "agg" (of slot "slot")
 * registered before the first of them is aggregated?  Every uldp aggregate
 * of it reads its users through group_member (or, for partition selection,
 * takes the grouping arguments itself), whose registry must be the
 * registration's output (in a
 * parallel worker, the value the leader passed: the leader checked its
 * plan).
 */
bool
uldp_grouping_registered_first(AggState *agg, int64 slot, Oid extension)
{
	if (IsParallelWorker())
		return true;
	for (int i = 0; i < agg->numaggs; i++)
	{
		Aggref	   *aggref = uldp_original_aggref(agg->ss.ps.plan, agg->peragg[i].aggref);
		List	   *args;

		if (getExtensionOfObject(ProcedureRelationId, aggref->aggfnoid) != extension)
			continue;
		args = grouped_args(aggref, uldp_user_argument(aggref->aggfnoid));
		if (args == NIL ||
			!reads_registration(list_nth(args, REGISTRY_ARG), slot, agg->ss.ps.state))
			return false;
	}
	return true;
}

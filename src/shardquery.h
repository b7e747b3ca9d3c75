/*-------------------------------------------------------------------------
 *
 * shardquery.h
 *	  The pieces of the queries that releases over shards become: what a
 *	  release reads, what the shards can run, one branch per partition.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDQUERY_H
#define ULDP_SHARDQUERY_H

#include "nodes/parsenodes.h"
#include "utils/relcache.h"

/* uldp_shard.user_sums(value, user_id, lower, upper, average, modulus, remainder, max_rows) */
#define ULDP_SUMS_MODULUS_ARG 5

/* How the shards clamp the rows that one release reads. */
typedef enum UldpShardClamp
{
	ULDP_CLAMP_TO_BOUNDS,		/* means and ranges: to their bounds */
	ULDP_CLAMP_TO_MAGNITUDE,	/* sums: to +-ULDP_MAX_MAGNITUDE */
	ULDP_CLAMP_COUNT			/* counts: no value */
} UldpShardClamp;

/* What the expressions of the branches need to run on the shards. */
typedef struct UldpShipping
{
	Oid			uldp;			/* the extension's OID */
	bool		sublinks;		/* values were hoisted into subqueries */
} UldpShipping;

/* The output columns of every branch, over the protected table's columns. */
typedef struct UldpShardColumns
{
	List	   *exprs;			/* expressions over entry 1, the table */
	List	   *names;			/* their names, char * */
	Bitmapset  *grouped;		/* the numbers (from 1) of those grouped by */
} UldpShardColumns;

extern Oid	uldp_shard_function(const char *extension, const char *schema, const char *name,
								const Oid *argtypes, int nargs);
extern bool uldp_shard_aggregate_named(Oid aggfnoid, const char *name);
extern bool uldp_shard_release(Aggref *release, Index varno, Var **user, UldpShardClamp *clamp,
							   List **params, const char **reason);
extern Expr *uldp_shard_clamp_bound(Expr *given, double absent);
extern Const *uldp_shard_float8(double value);
extern Const *uldp_shard_int8(int64 value);
extern Node *uldp_shard_shippable(Node *node, UldpShipping *shipping);
extern List *uldp_shard_leaves(Oid relid);
extern bool uldp_shard_users_disjoint(Oid relid, AttrNumber user);
extern const char *uldp_shard_remote_estimate_reason(Oid relid);
extern Query *uldp_shard_union_all(List *branches, List *entry_names);
extern Query *uldp_shard_union(Relation parent, const UldpShardColumns *columns, Node *quals,
							   bool sublinks, Oid owner);
extern RangeTblEntry *uldp_shard_subquery_entry(Query *subquery, const char *name, List *colnames);
extern CommonTableExpr *uldp_shard_cte(Query *query, Query *subquery, const char *ctename,
									   List *colnames);
extern RangeTblEntry *uldp_shard_cte_entry(Query *query, Query *subquery, const char *ctename,
										   const char *alias, List *colnames);
extern Node *uldp_shard_size_check(Relation parent, int max_rows);
extern void uldp_shard_replace_entry(Query *query, Index varno, RangeTblEntry *entry);

#endif							/* ULDP_SHARDQUERY_H */

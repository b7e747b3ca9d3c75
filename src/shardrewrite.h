/*-------------------------------------------------------------------------
 *
 * shardrewrite.h
 *	  Releases over tables whose rows live on postgres_fdw shards,
 *	  rewritten into releases over what the shards compute.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDREWRITE_H
#define ULDP_SHARDREWRITE_H

#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

/* The rewrites made while one statement is planned. */
typedef struct UldpShardRewrites
{
	bool		enabled;		/* may releases be rewritten at all */
	List	   *state_aggs;		/* OIDs of the state aggregates pushed down */
	const char *table;			/* a table whose releases were rewritten */
	const char *gated;			/* one rewritten for a role that may not read it */
	bool		ship_rows;		/* gated releases read the partitions' rows */
	const char *why;			/* why they do (shardrows.c) */
} UldpShardRewrites;

extern int	uldp_max_partition_rows;

extern void uldp_shard_rewrite_init(void);
extern bool uldp_query_reads_shards(Query *query);
extern bool uldp_table_sharded(Oid relid);
extern bool uldp_shard_rewrite(Query *query, Index varno, List *checks, bool gated,
							   UldpShardRewrites *rewrites, const char **reason);
extern const char *uldp_shard_unpushed(PlannedStmt *stmt, const UldpShardRewrites *rewrites);
extern bool uldp_shard_state_scan(ForeignScan *scan, double *max_rows);
extern bool uldp_shard_size_checked(ForeignScan *scan, double *max_rows);

#endif							/* ULDP_SHARDREWRITE_H */

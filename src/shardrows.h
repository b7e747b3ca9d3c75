/*-------------------------------------------------------------------------
 *
 * shardrows.h
 *	  Releases over shards that read the partitions' rows, for roles that
 *	  may not read them, when the shards cannot compute the release's part.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDROWS_H
#define ULDP_SHARDROWS_H

#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"

#include "shardrewrite.h"

extern bool uldp_shard_ship_rows(Query *query, Index varno, List *checks, const char *why,
								 UldpShardRewrites *rewrites, const char **reason);
extern double uldp_shard_checked_rows(EState *estate);

#endif							/* ULDP_SHARDROWS_H */

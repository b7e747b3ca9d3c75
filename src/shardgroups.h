/*-------------------------------------------------------------------------
 *
 * shardgroups.h
 *	  Grouped releases over shards: releases over the per-(user, group)
 *	  values that the shards compute.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDGROUPS_H
#define ULDP_SHARDGROUPS_H

#include "nodes/parsenodes.h"

extern bool uldp_shard_rewrite_grouped(Query *query, Index varno, List *checks, int max_rows,
									   List **shard_aggs, const char **reason);

#endif							/* ULDP_SHARDGROUPS_H */

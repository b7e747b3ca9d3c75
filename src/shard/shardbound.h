/*-------------------------------------------------------------------------
 *
 * shardbound.h
 *	  What every aggregate of uldp_shard checks: its call, and the rows its
 *	  partition may hold.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDBOUND_H
#define ULDP_SHARDBOUND_H

#include "fmgr.h"
#include "nodes/pg_list.h"

extern MemoryContext uldp_shard_aggregate_context(FunctionCallInfo fcinfo, const char *function);
extern List *uldp_shard_call_args(FunctionCallInfo fcinfo);
extern void uldp_shard_check_rows(FunctionCallInfo fcinfo, int arg);

#endif							/* ULDP_SHARDBOUND_H */

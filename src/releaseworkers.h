/*-------------------------------------------------------------------------
 *
 * releaseworkers.h
 *	  The workers of parallel plans over releases, capped at the CPUs the
 *	  leader leaves free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RELEASEWORKERS_H
#define ULDP_RELEASEWORKERS_H

#include "nodes/plannodes.h"

/* uldp.max_parallel_workers_per_gather: -1, the CPUs the leader leaves */
extern int	uldp_max_parallel_workers_per_gather;

extern void uldp_release_workers_init(void);
extern bool uldp_release_workers_begin(void);
extern void uldp_release_workers_end(bool outer);
extern void uldp_cap_release_workers(PlannedStmt *plan);

#endif							/* ULDP_RELEASEWORKERS_H */

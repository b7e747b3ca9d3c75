/*-------------------------------------------------------------------------
 *
 * groupjit.h
 *	  JIT for a statement with grouped releases.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPJIT_H
#define ULDP_GROUPJIT_H

#include "nodes/plannodes.h"

extern void uldp_group_jit(PlannedStmt *plan);

#endif							/* ULDP_GROUPJIT_H */

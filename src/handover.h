/*-------------------------------------------------------------------------
 *
 * handover.h
 *	  Partial aggregate states handed over, within their process, to the
 *	  final aggregation, by a handle instead of serialized.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_HANDOVER_H
#define ULDP_HANDOVER_H

#include "fmgr.h"

extern bool uldp_can_hand_over(FunctionCallInfo fcinfo);
extern bytea *uldp_hand_over(void *state, MemoryContext context);
extern void *uldp_take_handed_over(const bytea *value);

#endif							/* ULDP_HANDOVER_H */

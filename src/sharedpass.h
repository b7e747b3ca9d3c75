/*-------------------------------------------------------------------------
 *
 * sharedpass.h
 *	  Serialized partial aggregate states that parallel workers pass to the
 *	  leader in the parallel query's shared memory, not through its tuple
 *	  queue.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHAREDPASS_H
#define ULDP_SHAREDPASS_H

#include "fmgr.h"
#include "utils/dsa.h"

/*
 * The value that names a state in shared memory starts with this; no
 * serialized state of uldp does (a user state and a partial registry start
 * with their own magic numbers, a quantile state with a bool).
 */
#define ULDP_PASS_MAGIC 0x554c5031	/* "ULP1" */

/* A serialized state found in shared memory, to free once it is read. */
typedef struct UldpPassed
{
	dsa_area   *area;			/* NULL: the state was not in shared memory */
	dsa_pointer pointer;
} UldpPassed;

extern bytea *uldp_pass_alloc(FunctionCallInfo fcinfo, Size size);
extern bytea *uldp_pass_finish(FunctionCallInfo fcinfo, bytea *serialized);
extern bytea *uldp_pass_open(FunctionCallInfo fcinfo, bytea *value, UldpPassed *passed);
extern void uldp_pass_release(UldpPassed *passed);

#endif							/* ULDP_SHAREDPASS_H */

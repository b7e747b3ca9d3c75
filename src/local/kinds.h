/*-------------------------------------------------------------------------
 *
 * kinds.h
 *	  The two properties of a round's kind that decide what a report is:
 *	  range or mean, scalar or vector.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_KINDS_H
#define ULDP_LOCAL_KINDS_H

#include <stdbool.h>

#include "uldp_local.h"

/* range kinds report a Hadamard row and a sign, mean kinds a level */
static inline bool
uldp_local_is_range(UldpLocalKind kind)
{
	return kind == ULDP_LOCAL_RANGE || kind == ULDP_LOCAL_VECTOR_RANGE;
}

/* vector kinds rotate their summary and report one coordinate of it */
static inline bool
uldp_local_is_vector(UldpLocalKind kind)
{
	return kind != ULDP_LOCAL_RANGE && kind != ULDP_LOCAL_MEAN;
}

#endif							/* ULDP_LOCAL_KINDS_H */

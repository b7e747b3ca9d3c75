/*-------------------------------------------------------------------------
 *
 * userstate.h
 *	  The aggregate state shared by the uldp aggregates: one entry per user
 *	  (the privacy unit) with the running sum and count of its rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_USERSTATE_H
#define ULDP_USERSTATE_H

#include "params.h"

/* working memory of a release, per user: 4 arrays of doubles or keys and
 * one byte per segment of the exponential mechanism */
#define ULDP_RELEASE_BYTES_PER_USER (4 * sizeof(double) + 2)

/* uldp.max_state_memory, in kB */
extern int	uldp_max_state_memory;

typedef struct UldpState UldpState;

extern double *uldp_state_user_means(UldpState *state, int64 *nusers);

#endif							/* ULDP_USERSTATE_H */

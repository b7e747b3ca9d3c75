/*-------------------------------------------------------------------------
 *
 * summary.h
 *	  A user's summary: the one value (scalar rounds) or rotated vector
 *	  (vector rounds) that the user's report privatizes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_SUMMARY_H
#define ULDP_LOCAL_SUMMARY_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "uldp_local.h"

/*
 * The largest magnitude of any entry, bound or sum the library works with:
 * samples are clipped to it first, and rounds' bounds may not exceed it,
 * so that a difference or the sum of two such numbers stays finite.
 */
#define ULDP_LOCAL_LARGEST (DBL_MAX / 4)

/*
 * summary (length round->padded) <- the summary of the m rows of samples;
 * false only when out of memory.
 */
extern bool uldp_local_summary(const UldpLocalRound *round, const double *samples,
							   int64_t m, double *summary, UldpLocalError *error);

#endif							/* ULDP_LOCAL_SUMMARY_H */

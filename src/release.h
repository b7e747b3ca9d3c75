/*-------------------------------------------------------------------------
 *
 * release.h
 *	  The scalar releases: user_dp_mean, user_dp_sum, user_dp_range and
 *	  user_dp_count (count.c), and their _ci twins.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RELEASE_H
#define ULDP_RELEASE_H

#include "statement.h"

extern void uldp_scalar_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_RELEASE_H */

/*-------------------------------------------------------------------------
 *
 * release.h
 *	  The scalar releases: user_dp_mean and user_dp_range.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RELEASE_H
#define ULDP_RELEASE_H

#include "statement.h"

extern void uldp_scalar_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_RELEASE_H */

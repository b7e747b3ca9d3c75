/*-------------------------------------------------------------------------
 *
 * quantile.h
 *	  user_dp_quantile: a quantile in which every user weighs one.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_QUANTILE_H
#define ULDP_QUANTILE_H

#include "statement.h"

extern void uldp_quantile_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_QUANTILE_H */

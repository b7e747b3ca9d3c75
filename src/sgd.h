/*-------------------------------------------------------------------------
 *
 * sgd.h
 *	  user_dp_sgd: models trained with user-level DP.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGD_H
#define ULDP_SGD_H

#include "statement.h"

extern void uldp_sgd_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_SGD_H */

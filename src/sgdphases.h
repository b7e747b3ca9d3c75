/*-------------------------------------------------------------------------
 *
 * sgdphases.h
 *	  Phases of disjoint users for the localized methods of user_dp_sgd
 *	  (phased_erm, accelerated): who is in which phase, each phase's
 *	  regularization, and the budget every phase gets.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGDPHASES_H
#define ULDP_SGDPHASES_H

#include "sgdmethod.h"

extern int8 *uldp_sgd_draw_phases(int64 nusers, int phases);
extern int64 uldp_sgd_phase_members(const int8 *phase_of, int64 nusers,
									int phase, int64 *members);
extern double uldp_sgd_phase_lambda(const SgdProblem *problem,
									const UldpUserCount *count, int phase);
extern double uldp_sgd_phase_rho_steps(double rho);
extern void uldp_sgd_phases_check_budget(const SgdOptions *options, int width,
										 double epsilon, double delta,
										 double rho_count, double rho_steps);

#endif							/* ULDP_SGDPHASES_H */

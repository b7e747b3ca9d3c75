/*-------------------------------------------------------------------------
 *
 * vecrelease.h
 *	  What the releases accounted in zCDP share: the budget, the noisy
 *	  count of users and the threshold below which nothing is released,
 *	  and private scales.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_VECRELEASE_H
#define ULDP_VECRELEASE_H

#include "highdim.h"
#include "params.h"
#include "statement.h"

extern double uldp_release_rho(double epsilon, double delta);
extern int	uldp_vector_dimension(const char *function, int dimension,
								  const char *how);
extern void uldp_vector_mean_plan(const UldpReleaseCall *call,
								  UldpReleasePlan *plan);
extern UldpUserCount uldp_noisy_count(int64 n, double rho);
extern bool uldp_enough_users(const UldpUserCount *count, double rho,
							  double delta);
extern void uldp_rho_validate(const char *function, double epsilon,
							  double delta, double rho_count,
							  double rho_highdim, const char *hint);
extern void uldp_refuse_budget(const char *function, double epsilon,
							   double delta, const char *hint);
extern double uldp_private_scale(const double *statistics, int64 n,
								 double floor, double ceiling, double rho);
extern double uldp_private_scale_miss(double users, double floor,
									  double ceiling, double rho);
extern double uldp_private_scale_users(double floor, double ceiling,
									   double rho, double failure);

#endif							/* ULDP_VECRELEASE_H */

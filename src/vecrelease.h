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

#include "params.h"

extern double uldp_release_rho(const char *function, double epsilon,
							   double delta);
extern double uldp_noisy_count(int64 n, double rho);
extern bool uldp_enough_users(double noisy_count, double rho, double delta);
extern void uldp_rho_validate(const char *function, double epsilon,
							  double delta, double rho_count,
							  double rho_highdim, const char *hint);
extern void uldp_vector_mean_validate(const UldpVectorParams *params);
extern double uldp_private_scale(const double *statistics, int64 n,
								 double floor, double ceiling, double rho);

#endif							/* ULDP_VECRELEASE_H */

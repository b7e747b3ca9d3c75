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

extern double uldp_release_rho(const char *function, double epsilon,
							   double delta);
extern double uldp_noisy_count(int64 n, double rho);
extern bool uldp_enough_users(double noisy_count, double rho, double delta);
extern double uldp_private_scale(const double *statistics, int64 n,
								 double rho);

#endif							/* ULDP_VECRELEASE_H */

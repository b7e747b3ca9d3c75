/*-------------------------------------------------------------------------
 *
 * concentration.h
 *	  Outlier removal over a set of user vectors: neighbour counts, the
 *	  inlier weights and the inlier mean, with their sensitivities.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_CONCENTRATION_H
#define ULDP_CONCENTRATION_H

/* floor of the total inlier weight: its change when a user is added */
#define ULDP_INLIER_WEIGHT_SENSITIVITY 3
extern void uldp_neighbour_counts(const double *points, int64 n, int dim,
								  double radius, int64 *counts);
extern int64 uldp_inlier_mean(const double *points, int64 n, int dim,
							  double tau, double bound, int64 *counts,
							  double *mean);
extern double uldp_inlier_mean_sensitivity(double tau, double bound, int dim,
										   double least_weight);

#endif							/* ULDP_CONCENTRATION_H */

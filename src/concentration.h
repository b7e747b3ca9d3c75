/*-------------------------------------------------------------------------
 *
 * concentration.h
 *	  Outlier removal over a set of user vectors (or of groups' models):
 *	  neighbour counts, the inlier weights and the inlier mean, with their
 *	  sensitivities.
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

/*
 * The groups' variant: the weight in units of 1 / ULDP_GROUP_INLIER_WEIGHT_UNIT
 * of a point, and its change when a point moves, is added or removed.
 */
#define ULDP_GROUP_INLIER_WEIGHT_UNIT 1024
#define ULDP_GROUP_INLIER_WEIGHT_SENSITIVITY (3 * ULDP_GROUP_INLIER_WEIGHT_UNIT + 1)
extern int64 uldp_group_inlier_mean(const double *points, int64 n, int dim,
									double r, double bound, int64 *counts,
									double *mean);
extern double uldp_group_inlier_mean_sensitivity(double r, double bound, int dim,
												 double least_weight);
extern void uldp_pairs_within_ladder(const double *points, int64 n, int dim,
									 double top, int rungs_per_binade,
									 int nradii, int64 *pairs);

#endif							/* ULDP_CONCENTRATION_H */

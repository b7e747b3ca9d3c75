/*-------------------------------------------------------------------------
 *
 * inliers.h
 *	  Outlier removal among points one of which a user can move, add or
 *	  remove: neighbour counts, the inlier weight and mean, and their
 *	  sensitivities.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_INLIERS_H
#define ULDP_INLIERS_H

/*
 * The inlier weight is an integer in units of 1 / ULDP_INLIERS_WEIGHT_UNIT
 * of a point; its sensitivity, in those units.
 */
#define ULDP_INLIERS_WEIGHT_UNIT 1024
#define ULDP_INLIERS_WEIGHT_SENSITIVITY (3 * ULDP_INLIERS_WEIGHT_UNIT + 1)

extern void uldp_inlier_pairs_within(const double *points, int64 n, int dim,
									 double top, int rungs_per_binade,
									 int nradii, int64 *pairs);
extern void uldp_inlier_neighbours(const double *points, int64 n, int dim,
								   double radius, int64 *counts);
extern int64 uldp_inliers_mean(const double *points, int64 n, int dim,
							  const int64 *counts, double *mean);
extern double uldp_inliers_mean_sensitivity(double radius, double weight);

#endif							/* ULDP_INLIERS_H */

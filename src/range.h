/*-------------------------------------------------------------------------
 *
 * range.h
 *	  Private estimation of the interval that holds the user averages.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RANGE_H
#define ULDP_RANGE_H

#include "grid.h"
#include "params.h"

typedef struct UldpInterval
{
	double		lower;
	double		upper;
} UldpInterval;

/*
 * The probability, whatever the data, that a selection used after a
 * decision from the noisy count of users (see uldp_selection_miss) misses.
 */
#define ULDP_SELECTION_FAILURE 1e-6

extern double uldp_private_median(const double *values, int64 n, bool sorted,
								  double lower, double upper,
								  double min_magnitude, double epsilon);
extern double uldp_grid_median(const double *values, int64 n,
							   const UldpGrid *grid, double epsilon);
extern double uldp_selection_miss(double keys, double epsilon, double users,
								  double margin);
extern double uldp_selection_users(double keys, double epsilon, double margin,
								   double failure);
extern double *uldp_distances(const double *values, int64 n, bool sorted,
							  double centre, double atom, int64 *k);
extern double uldp_private_deviation(const double *values, int64 n, bool sorted,
									  double centre, double width,
									  double min_magnitude, double epsilon);
extern bool uldp_range_is_public(const UldpParams *params);
extern UldpInterval uldp_private_range(const double *means, int64 n, bool sorted,
									   const UldpParams *params,
									   double epsilon);

#endif							/* ULDP_RANGE_H */

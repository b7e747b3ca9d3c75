/*-------------------------------------------------------------------------
 *
 * range.c
 *	  PrivateRange (Levy et al. 2021, Algorithm 6) and its tau-free variant.
 *
 * Both work on a grid: an order-preserving map from user averages to
 * integer keys in [0, domain), and back from a key to a representative
 * value.  The exponential mechanism selects a key (noise.c); its cost grows
 * with the number of users, never with the number of keys.
 *
 *	- tau given (linear grid): bins of width 2 tau from the lower bound.  The
 *	  mechanism selects a bin near the median (score max(#below, #above));
 *	  the range is the bin centre +- 2 tau, as in the paper.
 *	- tau not given (floating-point grid): keys are doubles with their
 *	  mantissa cut to ULDP_FLOAT_GRID_BITS bits, restricted to the bounds
 *	  (+-1e300 without bounds).  The grid is scale free: its resolution is
 *	  relative, and the whole of [-1e300, 1e300] is only about 2^36 keys,
 *	  so the mechanism needs n epsilon of a few dozen, not a known scale.
 *	  Half of epsilon selects the median m, half the median absolute
 *	  deviation (MAD) of the averages from m, on the same kind of grid.
 *	  tau = 3.5 MAD, so the range m +- 2 tau = m +- 7 MAD: about +-4.7
 *	  standard deviations for normal data, like Tukey's outer fences.
 *
 * All the scores are monotone with sensitivity 1 under adding or removing
 * one user, so each selection is epsilon-DP for its share of epsilon.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "grid.h"
#include "noise.h"
#include "range.h"

/* with bounds, magnitudes below 2^-FLOAT_GRID_FLOOR_BITS of their width
 * are not told apart */
#define FLOAT_GRID_FLOOR_BITS 40
/* range = median +- 2 tau with tau = TAU_PER_MAD * MAD */
#define TAU_PER_MAD 3.5

/* The value of the private median of "values" on "grid". */
static double
private_median(const UldpGrid *grid, const double *values, int64 n, bool sorted,
			   double epsilon)
{
	uint64	   *keys = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	double		median;

	/* a grid's keys are monotone: sorted values give sorted keys */
	for (int64 i = 0; i < n; i++)
		keys[i] = uldp_grid_key(grid, values[i]);
	if (!sorted)
		keys = uldp_sort_keys(keys, n);
	median = uldp_grid_value(grid, uldp_exponential_median(keys, n, grid->domain, epsilon));
	pfree(keys);
	return median;
}

/*
 * The private median of "values" on a floating-point grid over the public
 * interval [lower, upper]: relative resolution 2^-ULDP_FLOAT_GRID_BITS, and
 * magnitudes below "min_magnitude" not told apart from zero (a fraction of
 * the width when the scale is known; 0 for a scale-free search).
 * epsilon-DP (and epsilon-bounded-range) under adding or removing one value.
 */
double
uldp_private_median(const double *values, int64 n, bool sorted, double lower,
					double upper, double min_magnitude, double epsilon)
{
	UldpGrid	grid = uldp_float_grid(lower, upper, min_magnitude);

	return private_median(&grid, values, n, sorted, epsilon);
}

/*
 * The private median of "values" on a public grid (the vector releases
 * choose its bits): epsilon-DP (and epsilon-bounded-range) under adding or
 * removing one value.
 */
double
uldp_grid_median(const double *values, int64 n, const UldpGrid *grid, double epsilon)
{
	return private_median(grid, values, n, false, epsilon);
}

/*
 * A bound, for every input of at least "users" values, on the probability
 * that a private median (epsilon, over "keys" keys) misses by "margin":
 * that at least (1/2 + margin) of the values lie strictly on one side of
 * the key it selects.  With margin 1/2 the key lies outside the span of
 * the values; with margin 1/4, outside their central half.
 *
 * The score of such a key is at least (1/2 + margin) n, and that of the
 * key of the lower median at most n / 2; the mechanism draws a key whose
 * score exceeds the least by t with probability at most exp(-epsilon t)
 * times that of the best key, so the keys that miss have probability at
 * most keys exp(-epsilon margin n) together.  The mechanism runs with
 * epsilon (1 - 2^-24), within a rounding of 2^-27 epsilon (noise.c):
 * epsilon (1 - 2^-20) covers both.  The bound falls as n grows.
 */
double
uldp_selection_miss(double keys, double epsilon, double users, double margin)
{
	return exp(log(keys) - epsilon * (1 - 0x1p-20) * margin * Max(users, 0));
}

/* The least number of users for which uldp_selection_miss is at most "failure". */
double
uldp_selection_users(double keys, double epsilon, double margin, double failure)
{
	return ceil((log(keys) - log(failure)) / (epsilon * (1 - 0x1p-20) * margin));
}

/*
 * The distances |value - centre| greater than "atom" (negative: all), *k of
 * them.  When the values are sorted, so are the distances, in ascending
 * order: they are merged outward from the centre (|v - centre| rounds alike
 * on both sides of it and does not shrink as v moves away from it).
 */
double *
uldp_distances(const double *values, int64 n, bool sorted, double centre,
			   double atom, int64 *k)
{
	double	   *distances = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	int64		below;
	int64		above;

	*k = 0;
	if (!sorted)
	{
		for (int64 i = 0; i < n; i++)
		{
			double		distance = fabs(values[i] - centre);

			if (distance > atom)
				distances[(*k)++] = distance;
		}
		return distances;
	}
	/* values[below] is the last one under the centre, values[above] the first not */
	above = 0;
	for (int64 step = n; step > 0; step /= 2)
		while (above + step <= n && values[above + step - 1] < centre)
			above += step;
	below = above - 1;
	while (below >= 0 || above < n)
	{
		double		left = below >= 0 ? centre - values[below] : INFINITY;
		double		right = above < n ? values[above] - centre : INFINITY;
		double		distance;

		if (left <= right)
		{
			distance = left;
			below--;
		}
		else
		{
			distance = right;
			above++;
		}
		if (distance > atom)
			distances[(*k)++] = distance;
	}
	return distances;
}

/*
 * The private median of |value - centre| over the users, on a floating-point
 * grid over [0, width] (the values' interval's width): the median absolute
 * deviation, a scale of the data that a few users cannot move.
 */
double
uldp_private_deviation(const double *values, int64 n, bool sorted, double centre,
					   double width, double min_magnitude, double epsilon)
{
	UldpGrid	grid = uldp_float_grid(0, width, min_magnitude);
	int64		k;
	double	   *distances = uldp_distances(values, n, sorted, centre, -1, &k);
	double		deviation;

	deviation = private_median(&grid, distances, k, sorted, epsilon);
	pfree(distances);
	return deviation;
}

/*
 * With tau, the range is a window of 4 tau inside the bounds; when that is
 * as wide as the bounds, the bounds themselves are the range, for free.
 */
bool
uldp_range_is_public(const UldpParams *params)
{
	return params->has_tau && 4 * params->tau >= params->upper - params->lower;
}

UldpInterval
uldp_private_range(const double *means, int64 n, bool sorted,
				   const UldpParams *params, double epsilon)
{
	UldpInterval range;
	double		centre;
	double		tau;

	if (uldp_range_is_public(params))
		return (UldpInterval) {params->lower, params->upper};
	if (params->has_tau)
	{
		UldpGrid	grid = uldp_linear_grid(params->lower, params->upper, 2 * params->tau);

		centre = private_median(&grid, means, n, sorted, epsilon);
		tau = params->tau;
	}
	else
	{
		double		width = params->upper - params->lower;
		double		min_magnitude = params->has_bounds ? ldexp(width, -FLOAT_GRID_FLOOR_BITS) : 0;
		UldpGrid	grid = uldp_float_grid(params->lower, params->upper, min_magnitude);

		centre = private_median(&grid, means, n, sorted, epsilon / 2);
		tau = TAU_PER_MAD * uldp_private_deviation(means, n, sorted, centre, width,
												   min_magnitude, epsilon / 2);
		/* at least the half-width of the centre's bin, so that users who
		 * share the centre's bin stay inside the range */
		tau = Max(tau, Max(ldexp(fabs(centre), -ULDP_FLOAT_GRID_BITS), min_magnitude));
	}
	range.lower = Max(centre - 2 * tau, params->lower);
	range.upper = Min(centre + 2 * tau, params->upper);
	/* keep the range non-empty when the centre falls just outside a bound */
	range.lower = Min(range.lower, params->upper);
	range.upper = Max(range.upper, params->lower);
	return range;
}

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
 *	  mantissa cut to FLOAT_GRID_BITS bits, restricted to the bounds
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

#include "noise.h"
#include "range.h"

/* mantissa bits kept by the floating-point grid: relative resolution 2^-24 */
#define FLOAT_GRID_BITS 24
#define FLOAT_GRID_SHIFT (52 - FLOAT_GRID_BITS)
/* with bounds, magnitudes below 2^-FLOAT_GRID_FLOOR_BITS of their width
 * are not told apart */
#define FLOAT_GRID_FLOOR_BITS 40
/* range = median +- 2 tau with tau = TAU_PER_MAD * MAD */
#define TAU_PER_MAD 3.5

typedef struct Grid
{
	bool		linear;
	double		origin;			/* linear: left end of bin 0 */
	double		width;			/* linear: width of a bin */
	double		min_magnitude;	/* floating point: smallest distinct magnitude */
	uint64		first;			/* floating point: raw key of the lowest value */
	uint64		domain;
} Grid;

/*
 * Sorts keys in place: a least-significant-digit radix sort, 8 bits a pass,
 * that skips the passes in which every key has the same digit (the high
 * bytes of keys near one another).  Linear time: with a million users it
 * is several times faster than a comparison sort.
 */
static void
sort_keys(uint64 *keys, int64 n)
{
	uint64	   *buffer = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	uint64	   *from = keys;
	uint64	   *to = buffer;

	for (int shift = 0; shift < 64; shift += 8)
	{
		int64		offsets[256] = {0};
		int64		position = 0;
		uint64	   *swap;

		for (int64 i = 0; i < n; i++)
			offsets[(from[i] >> shift) & 0xFF]++;
		if (n == 0 || offsets[(from[0] >> shift) & 0xFF] == n)
			continue;
		for (int digit = 0; digit < 256; digit++)
		{
			int64		count = offsets[digit];

			offsets[digit] = position;
			position += count;
		}
		for (int64 i = 0; i < n; i++)
			to[offsets[(from[i] >> shift) & 0xFF]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != keys)
		memcpy(keys, from, n * sizeof(uint64));
	pfree(buffer);
}

static uint64
magnitude_bits(double magnitude)
{
	uint64		bits;

	memcpy(&bits, &magnitude, sizeof(bits));
	return bits >> FLOAT_GRID_SHIFT;
}

/*
 * The magnitude key of |x| on a floating-point grid: 0 below the grid's
 * minimum magnitude, then one key per cut-mantissa double.  Monotone in |x|.
 */
static uint64
magnitude_key(const Grid *grid, double x)
{
	double		magnitude = fabs(x);

	if (magnitude < grid->min_magnitude)
		return 0;
	return magnitude_bits(magnitude) - magnitude_bits(grid->min_magnitude) + 1;
}

/* The raw key of x: zero_key + or - its magnitude key.  Monotone in x. */
static uint64
float_raw_key(const Grid *grid, double x)
{
	uint64		zero_key = magnitude_key(grid, ULDP_MAX_MAGNITUDE);

	return x >= 0 ? zero_key + magnitude_key(grid, x) : zero_key - magnitude_key(grid, x);
}

static double
float_raw_value(const Grid *grid, uint64 raw)
{
	uint64		zero_key = magnitude_key(grid, ULDP_MAX_MAGNITUDE);
	uint64		key = raw >= zero_key ? raw - zero_key : zero_key - raw;
	uint64		bits;
	double		magnitude;

	if (key == 0)
		return 0;
	/* the middle of the bin */
	bits = ((key - 1 + magnitude_bits(grid->min_magnitude)) << FLOAT_GRID_SHIFT) |
		(UINT64CONST(1) << (FLOAT_GRID_SHIFT - 1));
	memcpy(&magnitude, &bits, sizeof(bits));
	return raw >= zero_key ? magnitude : -magnitude;
}

static Grid
linear_grid(double lower, double upper, double width)
{
	Grid		grid = {0};

	grid.linear = true;
	grid.origin = lower;
	grid.width = width;
	grid.domain = (uint64) Max(ceil((upper - lower) / width), 1);
	return grid;
}

/*
 * A floating-point grid over [lower, upper].  Magnitudes below
 * "min_magnitude" share one key, so that a grid over bounds does not spend
 * most of its keys on numbers too small to matter at the bounds' scale.
 */
static Grid
float_grid(double lower, double upper, double min_magnitude)
{
	Grid		grid = {0};

	grid.min_magnitude = min_magnitude;
	grid.first = float_raw_key(&grid, lower);
	grid.domain = float_raw_key(&grid, upper) - grid.first + 1;
	return grid;
}

static uint64
grid_key(const Grid *grid, double x)
{
	uint64		raw;

	if (grid->linear)
	{
		double		bin = floor((x - grid->origin) / grid->width);

		/*
		 * Clamp in integers: above 2^53, (double) (domain - 1) may round up
		 * to domain, and a key equal to the domain would break the
		 * monotonicity of the scores.  The domain is at most 2^62, so a bin
		 * below 2^63 converts exactly.
		 */
		if (!(bin > 0))
			return 0;
		if (bin >= 0x1p63)
			return grid->domain - 1;
		return Min((uint64) bin, grid->domain - 1);
	}
	raw = float_raw_key(grid, x);
	return Min(raw - Min(raw, grid->first), grid->domain - 1);
}

static double
grid_value(const Grid *grid, uint64 key)
{
	if (grid->linear)
		return grid->origin + ((double) key + 0.5) * grid->width;
	return float_raw_value(grid, grid->first + key);
}

/* The value of the private median of "values" on "grid". */
static double
private_median(const Grid *grid, const double *values, int64 n, double epsilon)
{
	uint64	   *keys = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	double		median;

	for (int64 i = 0; i < n; i++)
		keys[i] = grid_key(grid, values[i]);
	sort_keys(keys, n);
	median = grid_value(grid, uldp_exponential_median(keys, n, grid->domain, epsilon));
	pfree(keys);
	return median;
}

/*
 * The private median of "values" on a floating-point grid over the public
 * interval [lower, upper]: relative resolution 2^-FLOAT_GRID_BITS, and
 * magnitudes below "min_magnitude" not told apart from zero (a fraction of
 * the width when the scale is known; 0 for a scale-free search).
 * epsilon-DP (and epsilon-bounded-range) under adding or removing one value.
 */
double
uldp_private_median(const double *values, int64 n, double lower, double upper,
					double min_magnitude, double epsilon)
{
	Grid		grid = float_grid(lower, upper, min_magnitude);

	return private_median(&grid, values, n, epsilon);
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
uldp_private_range(const double *means, int64 n, const UldpParams *params,
				   double epsilon)
{
	UldpInterval range;
	double		centre;
	double		tau;

	if (uldp_range_is_public(params))
		return (UldpInterval) {params->lower, params->upper};
	if (params->has_tau)
	{
		Grid		grid = linear_grid(params->lower, params->upper, 2 * params->tau);

		centre = private_median(&grid, means, n, epsilon);
		tau = params->tau;
	}
	else
	{
		double		width = params->upper - params->lower;
		double		min_magnitude = params->has_bounds ? ldexp(width, -FLOAT_GRID_FLOOR_BITS) : 0;
		Grid		grid = float_grid(params->lower, params->upper, min_magnitude);
		Grid		distance_grid = float_grid(0, width, min_magnitude);
		double	   *distances = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);

		centre = private_median(&grid, means, n, epsilon / 2);
		for (int64 i = 0; i < n; i++)
			distances[i] = fabs(means[i] - centre);
		tau = TAU_PER_MAD * private_median(&distance_grid, distances, n, epsilon / 2);
		pfree(distances);
		/* at least the half-width of the centre's bin, so that users who
		 * share the centre's bin stay inside the range */
		tau = Max(tau, Max(ldexp(fabs(centre), -FLOAT_GRID_BITS), min_magnitude));
	}
	range.lower = Max(centre - 2 * tau, params->lower);
	range.upper = Min(centre + 2 * tau, params->upper);
	/* keep the range non-empty when the centre falls just outside a bound */
	range.lower = Min(range.lower, params->upper);
	range.upper = Max(range.upper, params->lower);
	return range;
}

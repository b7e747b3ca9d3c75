/*-------------------------------------------------------------------------
 *
 * grid.c
 *	  Order-preserving maps from doubles to integer keys, for the
 *	  exponential mechanism (noise.c), which selects a key.
 *
 *	- linear grid: bins of one width from a lower bound;
 *	- floating-point grid: keys are doubles with their mantissa cut to
 *	  ULDP_FLOAT_GRID_BITS bits, restricted to an interval.  Its resolution
 *	  is relative (scale free): the whole of [-1e300, 1e300] is only about
 *	  2^36 keys.  The vector releases keep fewer bits (highdim.c,
 *	  vecrelease.c): a centre or a scale right to a few per cent needs far
 *	  fewer keys, and the users a selection needs to land among the data
 *	  grow with the log of the number of keys (uldp_selection_miss).
 *
 * A key maps back to a representative value (the middle of its bin).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "grid.h"
#include "params.h"
#include "radixsort.h"

/*
 * Sorts n keys allocated with palloc, and returns them sorted in an
 * allocation that replaces "keys" (freed, unless it is the one returned):
 * no copy back after an odd number of passes.
 */
uint64 *
uldp_sort_keys(uint64 *keys, int64 n)
{
	uint64	   *buffer = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	uint64	   *sorted = uldp_radix_sort(keys, buffer, n, sizeof(uint64));

	pfree(sorted == keys ? buffer : keys);
	return sorted;
}

static uint64
magnitude_bits(const UldpGrid *grid, double magnitude)
{
	uint64		bits;

	memcpy(&bits, &magnitude, sizeof(bits));
	return bits >> grid->shift;
}

/*
 * The magnitude key of |x| on a floating-point grid: 0 below the grid's
 * minimum magnitude, then one key per cut-mantissa double.  Monotone in |x|.
 */
static uint64
magnitude_key(const UldpGrid *grid, double x)
{
	double		magnitude = fabs(x);

	if (magnitude < grid->min_magnitude)
		return 0;
	return magnitude_bits(grid, magnitude) - magnitude_bits(grid, grid->min_magnitude) + 1;
}

/* The raw key of x: zero_key + or - its magnitude key.  Monotone in x. */
static uint64
float_raw_key(const UldpGrid *grid, double x)
{
	uint64		zero_key = magnitude_key(grid, ULDP_MAX_MAGNITUDE);

	return x >= 0 ? zero_key + magnitude_key(grid, x) : zero_key - magnitude_key(grid, x);
}

static double
float_raw_value(const UldpGrid *grid, uint64 raw)
{
	uint64		zero_key = magnitude_key(grid, ULDP_MAX_MAGNITUDE);
	uint64		key = raw >= zero_key ? raw - zero_key : zero_key - raw;
	uint64		bits;
	double		magnitude;

	if (key == 0)
		return 0;
	/* the middle of the bin */
	bits = ((key - 1 + magnitude_bits(grid, grid->min_magnitude)) << grid->shift) |
		(UINT64CONST(1) << (grid->shift - 1));
	memcpy(&magnitude, &bits, sizeof(bits));
	return raw >= zero_key ? magnitude : -magnitude;
}

UldpGrid
uldp_linear_grid(double lower, double upper, double width)
{
	UldpGrid	grid = {0};

	grid.linear = true;
	grid.origin = lower;
	grid.width = width;
	grid.domain = (uint64) Max(ceil((upper - lower) / width), 1);
	return grid;
}

/*
 * A floating-point grid over [lower, upper] that keeps "bits" bits of the
 * mantissa.  Magnitudes below "min_magnitude" share one key, so that a grid
 * over bounds does not spend most of its keys on numbers too small to
 * matter at the bounds' scale.
 */
UldpGrid
uldp_float_grid_bits(double lower, double upper, double min_magnitude, int bits)
{
	UldpGrid	grid = {0};

	grid.min_magnitude = min_magnitude;
	grid.shift = 52 - bits;
	grid.first = float_raw_key(&grid, lower);
	grid.domain = float_raw_key(&grid, upper) - grid.first + 1;
	return grid;
}

/* The same with ULDP_FLOAT_GRID_BITS bits. */
UldpGrid
uldp_float_grid(double lower, double upper, double min_magnitude)
{
	return uldp_float_grid_bits(lower, upper, min_magnitude, ULDP_FLOAT_GRID_BITS);
}

uint64
uldp_grid_key(const UldpGrid *grid, double x)
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

double
uldp_grid_value(const UldpGrid *grid, uint64 key)
{
	if (grid->linear)
		return grid->origin + ((double) key + 0.5) * grid->width;
	return float_raw_value(grid, grid->first + key);
}


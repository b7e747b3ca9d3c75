/*-------------------------------------------------------------------------
 *
 * highdim.c
 *	  WinsorizedMeanHighD (Levy et al. 2021, Algorithm 2), accounted in zCDP.
 *
 * Input: n points (user averages: of rows, or of gradients) in R^d, each
 * clipped here to the public l2 ball of "radius"; a budget rho; and a
 * noisy count of the users, already paid for by the caller.  Under adding
 * or removing one user (one point), the release is rho-zCDP.
 *
 *	1. Rotate: Y_i = U X_i with the randomized Hadamard rotation (rotation.c),
 *	   padded to P = 2^k >= d.  Every coordinate of Y_i - Y_j is then about
 *	   |X_i - X_j| sqrt(2 ln(2P/b) / P) at most (b = ROTATION_FAILURE).
 *	2. Per-coordinate range [c_j - h, c_j + h], by one of
 *	   - tau given: PrivateRange (Algorithm 6, range.c) on each coordinate
 *	     with tau' = tau sqrt(2 ln(2P/b) / P): bins of 2 tau', h = 2 tau';
 *	   - tau chosen privately: c_j = private median of coordinate j on a
 *	     floating-point grid, tau = private median of |Y_i - c| over users,
 *	     h = 2 tau sqrt(2 ln(2P/b) / P).
 *	   A quarter of rho pays for the P selections (and the tau selection),
 *	   each e-bounded-range, so e^2 / 8-zCDP.
 *	   There is no range, c = 0 and the ball alone bounds each user, with
 *	   all of rho for the sum, when tau is ULDP_TAU_NONE; when a given tau's
 *	   box would add more noise with 3/4 of rho than the ball with all of
 *	   it (public); and when the noisy count cannot rule out that a
 *	   selection misses the data (ranges_reliable): the exponential
 *	   mechanism needs n e of a few dozen, and a range that misses the data
 *	   winsorizes every user to the wrong box.  Then the mean is the naive
 *	   one: the ball and Gaussian noise.
 *	3. Winsorize: z_i = clip(Y_i, box) - c.  Since c lies in the box and
 *	   clipping to a box is a projection, |z_i| <= |Y_i - c| <= radius + |c|;
 *	   also |z_i| <= |h|_2.  So the l2 sensitivity of sum z_i is
 *	   S = min(|h|_2, radius + |c|), or radius without a range; and radius
 *	   when the range turns out no smaller than the ball.
 *	4. Sum in fixed point: z_i is rounded to a grid of step g = S / K,
 *	   K = floor(sqrt(2 rho_sum) 2^20), then scaled (in integers) into the
 *	   l2 ball of K steps; the integer sum gets discrete Gaussian noise of
 *	   variance 2^40 per coordinate: K^2 / 2^41 <= rho_sum zCDP (gaussvec.c).
 *	   K >= 1 needs rho_sum >= 2^-41: releases check it before the charge
 *	   (uldp_highdim_rho_suffices).
 *	5. Post-processing: mean_j = c_j + g noisy_j / count, clamped to
 *	   [-radius, radius] (where every rotated point's coordinates lie, so the
 *	   true mean's too; it also keeps the noisy estimate finite), rotated
 *	   back and clipped to the ball.
 *
 * Radius.  Callers keep radius within [ULDP_HIGHDIM_MIN_RADIUS, 1e300]: the
 * half-widths are then at least radius 2^-60 (the bins of ranges_with_tau,
 * the floor of the private tau), so S >= radius 2^-60, and the grid
 * g >= radius 2^-92 is a normal double; every coordinate, centre and
 * half-width is at most a few times radius.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"

#include "accountant.h"
#include "gaussvec.h"
#include "highdim.h"
#include "range.h"
#include "rotation.h"
#include "vecstate.h"

/* probability that the rotation lets a point's coordinate escape its range */
#define ROTATION_FAILURE 0.01
/* share of rho spent on the per-coordinate ranges */
#define RANGE_SHARE 0.25
/*
 * Mantissa bits of the grids of the private centres and of the private
 * tau.  A centre must be told apart from its neighbours at the scale of
 * tau, rarely below 2^-12 of its magnitude; tau only sets a width that is
 * doubled anyway, so a quarter of a binade is enough.  Fewer keys let the
 * selections land on the data with fewer users (uldp_selection_miss).
 */
#define CENTRE_BITS 12
#define TAU_BITS 2
/* magnitudes below radius 2^-RESOLUTION_BITS count as zero */
#define RESOLUTION_BITS 40

/*
 * Whether a budget of rho gives the sum at least one grid step, however
 * the range is chosen (a range leaves the sum 1 - RANGE_SHARE of rho).
 */
bool
uldp_highdim_rho_suffices(double rho)
{
	return uldp_gaussian_steps(rho * (1 - RANGE_SHARE)) >= 1;
}

/* the working memory the mechanism needs per point, for the limit check */
Size
uldp_highdim_bytes_per_point(int dim)
{
	return (pg_nextpower2_32((uint32) dim) + 4) * sizeof(double);
}

/*
 * and the working memory it needs whatever the number of points: a few
 * arrays of the padded dimension (centres, half-widths, the integer sum,
 * the rotation's signs, the result), generously
 */
Size
uldp_highdim_fixed_bytes(int dim)
{
	return 16 * pg_nextpower2_32((uint32) dim) * sizeof(double);
}

/* the factor by which rotation shrinks an l2 radius to a coordinate's */
static double
coordinate_factor(int padded)
{
	return Min(1.0, sqrt(2 * log(2 * padded / ROTATION_FAILURE) / padded));
}

/* the half-width of the bins of a given tau */
static double
coordinate_tau(double tau, int padded, double radius)
{
	/* at most 2^60 bins, well within the grid's limit */
	return Max(tau * coordinate_factor(padded), radius * 0x1p-60);
}

/*
 * Whether a given tau's box pays for its ranges: with 3/4 of rho its
 * sensitivity |h|_2 = 2 tau' sqrt(P) adds less noise than the ball with
 * all of rho.
 */
static bool
box_pays(double tau, int padded, double radius)
{
	return 2 * tau * coordinate_factor(padded) * sqrt(padded) <
		radius * sqrt(1 - RANGE_SHARE);
}

/* the grids of the private centres and of the private tau */
static UldpGrid
centre_grid(double radius)
{
	return uldp_float_grid_bits(-radius, radius, ldexp(radius, -RESOLUTION_BITS), CENTRE_BITS);
}

static UldpGrid
tau_grid(double radius)
{
	return uldp_float_grid_bits(0, 2 * radius, ldexp(radius, -RESOLUTION_BITS), TAU_BITS);
}

/*
 * The parameters of the selections out of rho: with tau, P equal shares;
 * without, the P centres share two thirds and tau takes one third.
 */
static double
bin_epsilon(double rho, int padded)
{
	return uldp_selection_epsilon(rho / padded);
}

static double
centre_epsilon(double rho, int padded)
{
	return uldp_selection_epsilon(rho * 2 / 3 / padded);
}

static double
tau_epsilon(double rho)
{
	return uldp_selection_epsilon(rho / 3);
}

/*
 * Whether, for every input of at least "users" users, every selection of
 * the ranges lands where it should except with probability
 * ULDP_SELECTION_FAILURE in all: each bin (tau given) or centre inside the
 * span of its coordinate, and the private tau at or above the distance of
 * a quarter of the users (uldp_selection_miss).  A bin outside the data,
 * or a tau below it, would winsorize every user to the wrong box.
 * "users" is a lower bound from the noisy count, so the decision depends
 * on the data only through that count (doc/privacy.md).
 */
static bool
ranges_reliable(double users, int padded, double radius, double tau, double rho)
{
	double		miss;

	if (tau == ULDP_TAU_PRIVATE)
	{
		UldpGrid	centres = centre_grid(radius);
		UldpGrid	taus = tau_grid(radius);

		miss = padded * uldp_selection_miss((double) centres.domain,
											centre_epsilon(rho, padded), users, 0.5) +
			uldp_selection_miss((double) taus.domain, tau_epsilon(rho), users, 0.25);
	}
	else
	{
		UldpGrid	bins = uldp_linear_grid(-radius, radius, 2 * coordinate_tau(tau, padded, radius));

		miss = padded * uldp_selection_miss((double) bins.domain, bin_epsilon(rho, padded),
											users, 0.5);
	}
	return miss <= ULDP_SELECTION_FAILURE;
}

static void
column(const double *rotated, int64 n, int padded, int j, double *out)
{
	for (int64 i = 0; i < n; i++)
		out[i] = rotated[i * padded + j];
}

/*
 * Step 2 with tau given: PrivateRange on each coordinate.  Fills centre and
 * half (the half-widths).
 */
static void
ranges_with_tau(const double *rotated, int64 n, int padded, double radius,
				double tau, double rho, double *centre, double *half)
{
	UldpParams	params = {0};
	double	   *values = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	double		epsilon = bin_epsilon(rho, padded);

	params.has_lower = params.has_upper = params.has_bounds = params.has_tau = true;
	params.lower = -radius;
	params.upper = radius;
	params.tau = coordinate_tau(tau, padded, radius);
	for (int j = 0; j < padded; j++)
	{
		UldpInterval range;

		column(rotated, n, padded, j, values);
		range = uldp_private_range(values, n, false, &params, epsilon);
		centre[j] = range.lower / 2 + range.upper / 2;
		half[j] = range.upper / 2 - range.lower / 2;
	}
	pfree(values);
}

/* Step 2 without tau: private per-coordinate medians, then a private tau. */
static void
ranges_private(const double *rotated, int64 n, int padded, double radius,
			   double rho, double *centre, double *half)
{
	double	   *values = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	double	   *offset = palloc(padded * sizeof(double));
	UldpGrid	centres = centre_grid(radius);
	UldpGrid	taus = tau_grid(radius);
	double		tau;

	for (int j = 0; j < padded; j++)
	{
		column(rotated, n, padded, j, values);
		centre[j] = uldp_grid_median(values, n, &centres, centre_epsilon(rho, padded));
	}
	for (int64 i = 0; i < n; i++)
	{
		for (int j = 0; j < padded; j++)
			offset[j] = rotated[i * padded + j] - centre[j];
		values[i] = uldp_l2_norm(offset, padded);
	}
	tau = uldp_grid_median(values, n, &taus, tau_epsilon(rho));
	/* the grid does not tell tau from zero below its resolution */
	tau = Max(tau, taus.min_magnitude);
	for (int j = 0; j < padded; j++)
		half[j] = 2 * tau * coordinate_factor(padded);
	pfree(values);
	pfree(offset);
}

/*
 * Rounds a winsorized, centred point to the grid and scales it, in
 * integers, into the l2 ball of "steps": the rounded steps times a factor,
 * truncated toward zero, the factor lowered until the norm fits.
 */
static void
to_grid(const double *z, int padded, double grid, int64 steps, int64 *out)
{
	double		factor = 1;

	for (;;)
	{
		int128		norm2 = 0;

		for (int j = 0; j < padded; j++)
		{
			double		step = Min(Max(rint(z[j] / grid), -(double) steps), (double) steps);

			out[j] = (int64) trunc(step * factor);
			norm2 += (int128) out[j] * out[j];
		}
		if (norm2 <= (int128) steps * steps)
			return;
		factor = Min(factor, (double) steps / sqrt((double) norm2)) * (1 - 0x1p-30);
	}
}

void
uldp_highdim_mean(double *points, int64 n, int dim, double radius, double tau,
				  double rho, const UldpUserCount *count, double *result)
{
	UldpRotation rotation = uldp_rotation_random(dim);
	int			padded = rotation.padded;
	double	   *rotated = palloc_extended(Max(n, 1) * padded * sizeof(double), MCXT_ALLOC_HUGE);
	double	   *centre = palloc0(padded * sizeof(double));
	double	   *half = palloc(padded * sizeof(double));
	double	   *z = palloc(padded * sizeof(double));
	int64	   *steps_of = palloc(padded * sizeof(int64));
	int128	   *sum = palloc0(padded * sizeof(int128));
	double		rho_sum = rho;
	double		sensitivity = radius;
	bool		winsorize = false;
	double		grid;
	int64		steps;

	for (int64 i = 0; i < n; i++)
	{
		uldp_clip_to_ball(&points[i * dim], dim, radius);
		uldp_rotate(&rotation, &points[i * dim], &rotated[i * padded]);
	}

	if (!isinf(tau) &&
		(tau == ULDP_TAU_PRIVATE || box_pays(tau, padded, radius)) &&
		ranges_reliable(count->at_least, padded, radius, tau, rho * RANGE_SHARE))
	{
		rho_sum = rho * (1 - RANGE_SHARE);
		if (tau == ULDP_TAU_PRIVATE)
			ranges_private(rotated, n, padded, radius, rho * RANGE_SHARE, centre, half);
		else
			ranges_with_tau(rotated, n, padded, radius, tau, rho * RANGE_SHARE, centre, half);
		sensitivity = Min(uldp_l2_norm(half, padded), radius + uldp_l2_norm(centre, padded));
		winsorize = sensitivity < radius;
		if (!winsorize)
		{
			memset(centre, 0, padded * sizeof(double));
			sensitivity = radius;
		}
	}

	/*
	 * Unreachable once the release has passed its validation before the
	 * charge (uldp_highdim_rho_suffices); refuse rather than release
	 * without noise.
	 */
	steps = uldp_gaussian_steps(rho_sum);
	if (steps < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon is too small for this release"),
				 errhint("Raise epsilon or delta, or lower the number of iterations.")));
	grid = sensitivity / (double) steps;

	for (int64 i = 0; i < n; i++)
	{
		for (int j = 0; j < padded; j++)
		{
			double		y = rotated[i * padded + j];

			if (winsorize)
				y = Min(Max(y, centre[j] - half[j]), centre[j] + half[j]);
			z[j] = y - centre[j];
		}
		to_grid(z, padded, grid, steps, steps_of);
		for (int j = 0; j < padded; j++)
			sum[j] += steps_of[j];
	}

	for (int j = 0; j < padded; j++)
	{
		int128		noisy = sum[j] + uldp_gaussian_grid_noise();

		double		estimate = centre[j] + grid * ((double) noisy / Max(count->noisy, 1));

		z[j] = Min(Max(estimate, -radius), radius);
	}
	uldp_rotate_back(&rotation, z, result);
	uldp_clip_to_ball(result, dim, radius);

	pfree(rotated);
	pfree(centre);
	pfree(half);
	pfree(z);
	pfree(steps_of);
	pfree(sum);
	pfree(rotation.signs);
}

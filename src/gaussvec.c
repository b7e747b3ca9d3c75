/*-------------------------------------------------------------------------
 *
 * gaussvec.c
 *	  Gaussian noise for vectors, in fixed point.
 *
 * A vector query of l2 sensitivity S is released rho-zCDP by rounding it
 * to a grid of step g and adding, to each integer coordinate, discrete
 * Gaussian noise of variance 2^40 (Canonne, Kamath and Steinke 2020): an
 * integer query of l2 sensitivity K costs K^2 / 2^41 (their Theorem 14,
 * the same as the continuous Gaussian), so K = floor(sqrt(2 rho) 2^20)
 * steps per unit of sensitivity keep it within rho.  The noise never meets
 * a floating-point value of the data: the data become integers first, and
 * the noisy integers are scaled back only when released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "gaussvec.h"
#include "noise.h"

/* steps of the grid per standard deviation of the noise */
#define NOISE_STEPS 0x1p20
/*
 * uldp_gaussian_perturb's grid step is at least bound / 2^GRID_BITS, so
 * that every coordinate's image has at most GRID_BITS + 1 bits.
 */
#define GRID_BITS 40
/*
 * What floating-point arithmetic may add to a coordinate's image, in grid
 * steps, beyond rounding: its own error (the quotient of magnitude at most
 * 2^GRID_BITS, in a 64-bit mantissa, is off by at most 2^-24) and the
 * caller's (below bound 2^-52, i.e. 2^-12 steps, see uldp_gaussian_perturb),
 * on either side.
 */
#define ROUNDING_SLACK 0x1p-9

/*
 * The number of grid steps K per unit of sensitivity that a budget of rho
 * pays for (0: too small a budget for one step).
 */
int64
uldp_gaussian_steps(double rho)
{
	return (int64) floor(sqrt(2 * rho) * NOISE_STEPS);
}

/* The noise of one integer coordinate. */
int128
uldp_gaussian_grid_noise(void)
{
	return uldp_gaussian_noise(NOISE_STEPS * NOISE_STEPS);
}

/*
 * The steps of l2 sensitivity that rounding a vector of "dim" coordinates
 * to the grid may add: at most 1 + ROUNDING_SLACK per coordinate.
 */
static int64
rounding_steps(int dim)
{
	return (int64) ceil(sqrt((double) dim) * (1 + ROUNDING_SLACK));
}

/*
 * Whether uldp_gaussian_perturb can release a vector of "dim" coordinates
 * with rho (public parameters only): rounding costs rounding_steps(dim)
 * steps of sensitivity, so the budget must pay for at least twice that.
 */
bool
uldp_gaussian_perturb_supports(int dim, double rho)
{
	return uldp_gaussian_steps(rho) >= 2 * rounding_steps(dim);
}

/* the grid step of uldp_gaussian_perturb (see there) */
static double
perturb_grid(int dim, double sensitivity, double bound, double rho)
{
	Assert(uldp_gaussian_perturb_supports(dim, rho));
	return Max(sensitivity / (double) (uldp_gaussian_steps(rho) - rounding_steps(dim)),
			   ldexp(bound, -GRID_BITS));
}

/*
 * v <- v + Gaussian noise, rho-zCDP when v, as a function of the data, has
 * l2 sensitivity at most "sensitivity" and every coordinate within
 * [-bound, bound] (public: both must not depend on the data; the caller's
 * floating-point error in v must stay below bound 2^-52 a coordinate).
 * The grid step g is S / (K - rounding_steps(dim)), or bound 2^-40 if that
 * is larger (a coarser grid only adds noise): every coordinate's image
 * then has at most 41 bits, so its quotient is computed in long double to
 * within 2^-24 of a step, and with the caller's error and rounding to the
 * nearest step, two neighbouring vectors' images differ by at most
 * |v - v'| / g + 1 + ROUNDING_SLACK steps a coordinate, at most
 * S / g + rounding_steps(dim) <= K steps in l2.  (Without the floor on g,
 * a sensitivity far below bound made the images exceed 2^64 steps, where
 * the quotient's own rounding error, thousands of steps, escaped that
 * bound.)  The noisy vector is clamped to [-bound, bound]
 * (post-processing).
 */
void
uldp_gaussian_perturb(double *v, int dim, double sensitivity, double bound,
					  double rho)
{
	double		grid = perturb_grid(dim, sensitivity, bound, rho);

	for (int j = 0; j < dim; j++)
	{
		double		clamped = Min(Max(v[j], -bound), bound);
		int128		image = (int128) rintl((long double) clamped / grid);
		int128		noisy = image + uldp_gaussian_grid_noise();

		v[j] = Min(Max((double) ((long double) noisy * grid), -bound), bound);
	}
}

/*
 * The standard deviation of the noise uldp_gaussian_perturb adds to each
 * coordinate (before clamping), for callers that decide from it whether a
 * release is worth making (from public parameters and released values).
 */
double
uldp_gaussian_perturb_sd(int dim, double sensitivity, double bound, double rho)
{
	return perturb_grid(dim, sensitivity, bound, rho) * NOISE_STEPS;
}

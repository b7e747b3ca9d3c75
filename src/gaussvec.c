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
/* the smallest sensitivity uldp_gaussian_perturb assumes, relative to bound */
#define MIN_SENSITIVITY_BITS 60

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
	return uldp_discrete_gaussian(NOISE_STEPS * NOISE_STEPS);
}

/*
 * Whether uldp_gaussian_perturb can release a vector of "dim" coordinates
 * with rho (public parameters only): rounding costs up to sqrt(dim) steps
 * of sensitivity, so the budget must pay for at least twice that.
 */
bool
uldp_gaussian_perturb_supports(int dim, double rho)
{
	return uldp_gaussian_steps(rho) >= 2 * ceil(sqrt((double) dim));
}

/*
 * v <- v + Gaussian noise, rho-zCDP when v, as a function of the data, has
 * l2 sensitivity at most "sensitivity" and every coordinate within
 * [-bound, bound] (public: both must not depend on the data).  The grid has
 * step g = S / (K - ceil(sqrt(dim))): rounding moves each coordinate by at
 * most half a step, so two neighbouring vectors' integer images differ by
 * at most S / g + sqrt(dim) <= K steps in l2.  S is taken to be at least
 * bound 2^-60 (a larger sensitivity only adds noise), so that every
 * coordinate's image, at most 2^60 K < 2^81 steps, is exact in an int128
 * and in a long double.  The noisy vector is clamped to [-bound, bound]
 * (post-processing).
 */
void
uldp_gaussian_perturb(double *v, int dim, double sensitivity, double bound,
					  double rho)
{
	int64		steps = uldp_gaussian_steps(rho);
	double		grid;

	Assert(uldp_gaussian_perturb_supports(dim, rho));
	sensitivity = Max(sensitivity, ldexp(bound, -MIN_SENSITIVITY_BITS));
	grid = sensitivity / (double) (steps - (int64) ceil(sqrt((double) dim)));
	for (int j = 0; j < dim; j++)
	{
		double		clamped = Min(Max(v[j], -bound), bound);
		int128		image = (int128) rintl((long double) clamped / grid);
		int128		noisy = image + uldp_gaussian_grid_noise();

		v[j] = Min(Max((double) ((long double) noisy * grid), -bound), bound);
	}
}

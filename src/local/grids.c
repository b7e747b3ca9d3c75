/*-------------------------------------------------------------------------
 *
 * grids.c
 *	  Range bins and mean levels, in both directions, and the variance of
 *	  one report's value.
 *
 * Range kinds cut [-bound, bound] into k = ceil(bound / tau) bins of width
 * 2 tau (Algorithm 3): bin j is [-bound + 2 j tau, -bound + 2 (j + 1) tau)
 * with midpoint -bound + (2 j + 1) tau, and the last bin also takes the
 * values at and above its top (k 2 tau may exceed 2 bound, and rounding
 * may put bound itself at k).  Mean kinds map [lower, upper] of each
 * coordinate onto the levels 0..G, G = ULDP_LOCAL_GRID_LEVELS, so that
 * level r stands for lower + r (upper - lower) / G; noise moves a report's
 * level outside [0, G], and the value formula holds there too.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "exactnoise.h"
#include "grids.h"
#include "kinds.h"

int64_t
uldp_local_bin_of(const UldpLocalRound *round, double value)
{
	double		bin = floor((value + round->bound) / (2 * round->tau));

	if (!(bin >= 0))
		return 0;
	if (bin >= (double) round->bins)
		return round->bins - 1;
	return (int64_t) bin;
}

double
uldp_local_bin_midpoint(const UldpLocalRound *round, int64_t bin)
{
	return -round->bound + (2 * (double) bin + 1) * round->tau;
}

double
uldp_local_level_position(const UldpLocalRound *round, int coordinate, double value)
{
	double		lower = round->lower[coordinate];
	double		upper = round->upper[coordinate];
	double		projected = fmin(fmax(value, lower), upper);
	double		u = (projected - lower) / (upper - lower) * ULDP_LOCAL_GRID_LEVELS;

	return fmin(u, ULDP_LOCAL_GRID_LEVELS);
}

double
uldp_local_level_value(const UldpLocalRound *round, int coordinate, double level)
{
	double		lower = round->lower[coordinate];

	return lower + level * ((round->upper[coordinate] - lower) / ULDP_LOCAL_GRID_LEVELS);
}

/*
 * The variance, in levels squared, of the discrete Laplace noise of a mean
 * report at this epsilon: P(z) proportional to q^|z|, q = e^(-eps / G),
 * has variance 2 q / (1 - q)^2.
 */
double
uldp_local_laplace_variance(double epsilon)
{
	double		rate = epsilon / ULDP_LOCAL_GRID_LEVELS;
	double		one_minus_q = -expm1(-rate);

	return 2 * exp(-rate) / (one_minus_q * one_minus_q);
}

/*
 * An upper bound on the variance of one report's value.
 *
 * Range kinds: the variance of the unbiased estimate that one report
 * (j, s) gives of any bin a's indicator, c s H(j, a) with
 * c = (e^eps + 1) / (e^eps - 1): c^2 minus the squared indicator, at most
 * c^2.  Mean kinds: the value's variance given the user's summary, in
 * value units: the random rounding's, at most 1/4 level^2, plus the
 * noise's, uldp_local_laplace_variance, or at most sigma2 for the
 * discrete Gaussian (Canonne, Kamath and Steinke 2020), times the level's
 * width squared.  Both samplers round epsilon down to 24 significant bits
 * (exactnoise.c), which only adds noise, so the bounds use
 * eps (1 - 2^-22) below that; the Gaussian's sigma2 is the one the sampler
 * rounds up to.  For vector kinds the value is the chosen rotated
 * coordinate's, before any scaling by the padded dimension.
 */
double
uldp_local_report_variance(const UldpLocalRound *round, int coordinate)
{
	double		epsilon = round->epsilon * (1 - 0x1p-22);
	double		step;
	double		noise;

	if (uldp_local_is_range(round->kind))
	{
		double		c = 1 / tanh(epsilon / 2);

		return c * c;
	}
	step = (round->upper[coordinate] - round->lower[coordinate]) / ULDP_LOCAL_GRID_LEVELS;
	if (round->noise == ULDP_LOCAL_GAUSSIAN)
		noise = uldp_discrete_gaussian_variance(round->noise_scale);
	else
		noise = uldp_local_laplace_variance(epsilon);
	return (noise + 0.25) * step * step;
}

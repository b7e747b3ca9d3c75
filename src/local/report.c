/*-------------------------------------------------------------------------
 *
 * report.c
 *	  The privatizer: one user's report for one round, from all of their
 *	  samples (Girgis, Data and Diggavi, Algorithms 2, 4 and 5).
 *
 * The report depends on the samples only through their summary
 * (summary.c), and each mechanism below is epsilon-LDP (or (epsilon,
 * delta)-LDP) for any two summaries whatever, hence for any two sample
 * sets: the user-level guarantee (doc/privacy.md has the proofs).  All
 * randomness is exact: uniform integers and Bernoulli trials from the
 * host's random bits, and the discrete samplers of exactnoise.c; no
 * floating-point uniform is ever compared with a probability.
 *
 * Vector rounds report one rotated coordinate l, drawn uniformly and
 * independently of the data, with the full epsilon.  That is what
 * Algorithm 5's mean step does; its range step instead sends all d
 * coordinates at epsilon / (2 d) each.  The choice of l reveals nothing, so
 * one coordinate at epsilon is as private, and since the variance of the
 * Hadamard response grows as 1 / epsilon^2 (about 4 / epsilon^2), a
 * coordinate's estimate from n / d reports at epsilon has about d times
 * less variance than from n reports at epsilon / d.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "error.h"
#include "exactnoise.h"
#include "grids.h"
#include "host.h"
#include "kinds.h"
#include "summary.h"
#include "uldp_local.h"

/*
 * True with probability p / (1 + p), p = exp(-epsilon'), epsilon' the
 * sampler's epsilon rounded down (uldp_bernoulli_exp).  Each pass keeps
 * the sign with probability 1/2, flips it with probability p / 2 and
 * otherwise draws again, so P[flip] = (p / 2) / (1/2 + p / 2); rounding
 * epsilon down only adds privacy.
 */
static bool
randomized_response_flip(double epsilon)
{
	for (;;)
	{
		if (!uldp_bernoulli(1, 2))
			return false;
		if (uldp_bernoulli_exp(epsilon))
			return true;
	}
}

/*
 * Bernoulli(p) for a double p in [0, 1), exactly: p is a finite binary
 * fraction 0.b1 b2 ..., and a uniform U = 0.r1 r2 ... is below it iff at
 * the first position where they differ r = 0 and b = 1.  Doubling and
 * subtracting 1 are exact in floating point; the loop ends once p's bits
 * run out, after two random bits on average.
 */
static bool
bernoulli_double(double p)
{
	uint64_t	bits = 0;
	int			left = 0;

	while (p > 0)
	{
		bool		p_bit;
		bool		u_bit;

		if (left == 0)
		{
			bits = uldp_random_u64();
			left = 64;
		}
		p *= 2;
		p_bit = p >= 1;
		if (p_bit)
			p -= 1;
		u_bit = (bits & 1) != 0;
		bits >>= 1;
		left--;
		if (u_bit != p_bit)
			return p_bit;
	}
	return false;
}

/*
 * Algorithm 4 (Hadamard response): nu the bin of the summary, j a uniform
 * Hadamard row in [0, K); the sign H(j, nu) = (-1)^popcount(j AND nu) is
 * kept with probability e^eps / (e^eps + 1).
 */
static void
range_report(const UldpLocalRound *round, double value, UldpLocalReport *report)
{
	uint64_t	nu = (uint64_t) uldp_local_bin_of(round, value);
	uint64_t	j = uldp_uniform_u64((uint64_t) round->hadamard_size);
	int32_t		sign = (__builtin_popcountll(j & nu) & 1) ? -1 : 1;

	report->index = (int64_t) j;
	report->sign = randomized_response_flip(round->epsilon) ? -sign : sign;
}

/*
 * Algorithm 2 on the grid of levels: the summary projected onto
 * [lower, upper] sits at u in [0, G]; it is rounded to floor(u) + 1 with
 * probability u - floor(u), else to floor(u), so that the grid adds no
 * bias; then discrete Laplace (sensitivity G, pure epsilon-LDP) or
 * discrete Gaussian noise (variance parameter from round.c, (epsilon,
 * delta)-LDP) is added, and the level clamped to +-ULDP_LOCAL_MAX_LEVEL
 * (post-processing).
 */
static void
mean_report(const UldpLocalRound *round, int coordinate, double value,
			UldpLocalReport *report)
{
	double		u = uldp_local_level_position(round, coordinate, value);
	double		whole = floor(u);
	uldp_int128 level = (uldp_int128) whole + (bernoulli_double(u - whole) ? 1 : 0);

	if (round->noise == ULDP_LOCAL_GAUSSIAN)
		level += uldp_discrete_gaussian(round->noise_scale);
	else
		level += uldp_discrete_laplace(ULDP_LOCAL_GRID_LEVELS, round->epsilon);
	if (level > ULDP_LOCAL_MAX_LEVEL)
		level = ULDP_LOCAL_MAX_LEVEL;
	if (level < -ULDP_LOCAL_MAX_LEVEL)
		level = -ULDP_LOCAL_MAX_LEVEL;
	report->level = (int64_t) level;
}

bool
uldp_local_report(const UldpLocalRound *round, const double *samples, int64_t m,
				  UldpLocalReport *report, UldpLocalError *error)
{
	double	   *summary;
	int			coordinate;
	double		value;

	if (m < 0 || (m > 0 && samples == NULL))
	{
		uldp_local_fail(error, "invalid sample count %lld", (long long) m);
		return uldp_local_hint(error, "Pass m >= 0 rows of the round's row width.");
	}
	summary = uldp_local_alloc(round->padded * sizeof(double));
	if (summary == NULL)
	{
		uldp_local_fail(error, "out of memory making a report");
		return uldp_local_hint(error, "Free some memory and try again.");
	}
	if (!uldp_local_summary(round, samples, m, summary, error))
	{
		uldp_local_free(summary);
		return false;
	}
	/* 0 for scalar rounds, whose padded dimension is 1 */
	coordinate = (int) uldp_uniform_u64((uint64_t) round->padded);
	value = summary[coordinate];
	uldp_local_free(summary);

	report->round = round->id;
	report->coordinate = coordinate;
	report->index = 0;
	report->sign = 0;
	report->level = 0;
	if (uldp_local_is_range(round->kind))
		range_report(round, value, report);
	else
		mean_report(round, coordinate, value, report);
	return true;
}

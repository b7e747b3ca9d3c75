/*-------------------------------------------------------------------------
 *
 * shuffle.c
 *	  Privacy amplification by shuffling: the central epsilon of n shuffled
 *	  epsilon0-LDP reports.
 *
 * Feldman, McMillan and Talwar, "Hiding Among the Clones: A Simple and
 * Nearly Optimal Analysis of Privacy Amplification by Shuffling" (FOCS
 * 2021), Theorem 3.1: for any delta in (0, 1) and epsilon0 <=
 * ln(n / (16 ln(2 / delta))), the shuffled output of n reports of an
 * epsilon0-LDP randomizer (each user's own data) is (epsilon, delta)-DP
 * for replacing one user's data, with
 *	epsilon = ln(1 + (e^eps0 - 1) / (e^eps0 + 1)
 *				* (8 sqrt(e^eps0 ln(4 / delta)) / sqrt(n) + 8 e^eps0 / n)).
 * Outside that condition the theorem says nothing, and the reports are
 * still epsilon0-DP without a shuffler, so epsilon0 is returned; the same
 * holds when the bound exceeds epsilon0.  It needs pure LDP reports: range
 * rounds and Laplace mean rounds, not Gaussian ones.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "uldp_local.h"

/*
 * NaN unless epsilon0 >= 0 and n >= 1 are finite and 0 < delta < 1.
 */
double
uldp_local_shuffle_epsilon(double epsilon0, double n, double delta)
{
	double		e0;
	double		amplified;

	if (!(epsilon0 >= 0 && isfinite(epsilon0) && n >= 1 && isfinite(n) &&
		  delta > 0 && delta < 1))
		return NAN;
	if (epsilon0 > log(n / (16 * log(2 / delta))))
		return epsilon0;
	e0 = exp(epsilon0);
	amplified = log1p((e0 - 1) / (e0 + 1) *
					  (8 * sqrt(e0 * log(4 / delta)) / sqrt(n) + 8 * e0 / n));
	return fmin(amplified, epsilon0);
}

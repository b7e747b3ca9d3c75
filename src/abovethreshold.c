/*-------------------------------------------------------------------------
 *
 * abovethreshold.c
 *	  AboveThreshold (Dwork and Roth 2014, Algorithm 1; the "Algorithm 4"
 *	  of Ghazi et al. 2025 and of Lowy et al. 2024) over integer queries,
 *	  with discrete Laplace noise.
 *
 * A stream of queries q_1, q_2, ..., each of sensitivity at most Delta
 * (adding or removing a user moves every q_i by at most Delta, the q_i
 * chosen adaptively from earlier answers): the threshold gets noise of
 * scale 2 Delta / epsilon once, each query noise of scale 4 Delta /
 * epsilon, and the answers are "below" until the first noisy query reaches
 * the noisy threshold, "above" then, after which the test has halted and
 * must not be asked again.  The whole stream of answers is epsilon-DP,
 * whatever its length: the proof (Dwork and Roth, Theorem 3.23) shifts the
 * threshold's noise by Delta and the halting query's by 2 Delta, and only
 * uses that a shift by k of a Laplace variable of scale b changes its
 * density by at most exp(|k| / b).  Discrete Laplace noise on integers of
 * parameter epsilon / (2 Delta) and epsilon / (4 Delta) has exactly that
 * property for the integer shifts Delta and 2 Delta, so the same proof
 * holds with sums instead of integrals, and no floating-point value of the
 * data ever meets the noise.  In zCDP: epsilon^2 / 2.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "abovethreshold.h"
#include "noise.h"
#include "params.h"

/*
 * Starts a test of the queries against "threshold" (public), with
 * "sensitivity" the largest change of a query when a user is added or
 * removed.
 */
void
uldp_above_threshold_start(UldpAboveThreshold *test, int64 threshold,
						   uint64 sensitivity, double epsilon)
{
	Assert(uldp_above_threshold_supports(sensitivity, epsilon));
	test->noisy_threshold = threshold + uldp_discrete_laplace(2 * sensitivity, epsilon);
	test->sensitivity = sensitivity;
	test->epsilon = epsilon;
	test->halted = false;
}

/*
 * Whether the noisy query is at or above the noisy threshold.  The first
 * "true" halts the test; asking again is a bug (its answers would no
 * longer be covered by epsilon).
 */
bool
uldp_above_threshold(UldpAboveThreshold *test, int64 query)
{
	Assert(!test->halted);
	if (query + uldp_discrete_laplace(4 * test->sensitivity, test->epsilon) >=
		test->noisy_threshold)
		test->halted = true;
	return test->halted;
}

/* Whether the sampler supports the test's noise (public parameters only). */
bool
uldp_above_threshold_supports(uint64 sensitivity, double epsilon)
{
	return sensitivity >= 1 && sensitivity <= (UINT64CONST(1) << 44) &&
		epsilon >= ULDP_MIN_EPSILON / 20 && epsilon <= ULDP_MAX_EPSILON;
}

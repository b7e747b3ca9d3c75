/*-------------------------------------------------------------------------
 *
 * release.c
 *	  Final functions of user_dp_mean, user_dp_range and user_dp_count.
 *
 * Privacy model: neighbouring tables differ by all the rows of one user
 * (add or remove); the number of users is private.  Each release's whole
 * epsilon is charged with its statement, before any row is read
 * (statement.c), and it returns a value for every input, including an
 * empty one.
 *
 * user_dp_mean spends part of epsilon on the range and splits the rest 3:1
 * between a centred clipped sum and the number of users.  With tau the
 * range (PrivateRange) gets epsilon / 2, as in the paper.  Without tau it
 * gets 2 epsilon / 3 (the private median and MAD a third each): a range
 * that misses the data ruins the release, and the chance of a miss falls
 * exponentially with the range's share, while the sum's noise only grows
 * in proportion (doc/accuracy.md measures both).  When 4 tau covers the
 * bounds, the range is the bounds and costs nothing.  Centring the sum on the private
 * range makes the error of the noisy count scale with |mean - centre|,
 * which is small whenever the range is good.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"

#include "budget.h"
#include "noise.h"
#include "range.h"
#include "release.h"
#include "userstate.h"

/* the grid of the fixed-point sum has 2^GRID_BITS steps per half-width */
#define GRID_BITS 40


PG_FUNCTION_INFO_V1(uldp_mean_finalfn);
PG_FUNCTION_INFO_V1(uldp_range_finalfn);
PG_FUNCTION_INFO_V1(uldp_count_finalfn);
PG_FUNCTION_INFO_V1(uldp_count_ci_finalfn);

/*
 * The plan of user_dp_mean and user_dp_range: (epsilon [, lower, upper
 * [, tau]]) validated; epsilon is their whole cost.
 */
void
uldp_scalar_plan(const UldpReleaseCall *call, UldpReleasePlan *plan)
{
	UldpParams	params;

	uldp_params_set(&params, call->nparams, call->params, call->nulls);
	plan->epsilon = params.epsilon;
	plan->bytes_per_row = uldp_user_state_bytes_per_row();
	plan->fixed_bytes = uldp_user_state_fixed_bytes();
}

/*
 * Reads the parameters of a release its statement paid for, and returns the
 * user averages.  Arguments 0, 1 and 2 of the aggregate are value, user_id
 * and epsilon.
 */
static double *
begin_release(FunctionCallInfo fcinfo, UldpParams *params, int64 *nusers)
{
	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	uldp_params_from_aggref(fcinfo, 2, params);

	if (PG_ARGISNULL(0))
	{
		*nusers = 0;
		return NULL;
	}
	return uldp_state_user_means((UldpState *) PG_GETARG_POINTER(0), nusers);
}

/*
 * The winsorized mean of Levy et al. (Algorithm 1, step 2), for unknown n:
 * the averages are clipped to the range and summed, centred on the range,
 * as integers on a power-of-two grid; discrete Laplace noise is added to
 * the integer sum (sensitivity: the half-width in grid steps) and to the
 * user count (sensitivity 1).  Everything after the noise is
 * post-processing of two noisy integers.
 */
static double
winsorized_mean(const double *means, int64 n, UldpInterval range,
				double epsilon_sum, double epsilon_count)
{
	double		centre = range.lower / 2 + range.upper / 2;
	double		half_width = range.upper / 2 - range.lower / 2;
	double		grid;
	int64		steps;
	int128		sum = 0;
	int128		noisy_sum;
	int128		noisy_count;
	double		estimate;

	/* a range of (almost) zero width: every clipped average is the centre */
	if (!(half_width >= ldexp(1.0, -1000)))
		return centre;

	grid = ldexp(1.0, ilogb(half_width) - GRID_BITS);
	steps = (int64) ceil(half_width / grid);
	for (int64 i = 0; i < n; i++)
	{
		double		clipped = Min(Max(means[i], range.lower), range.upper);
		int64		step = (int64) rint((clipped - centre) / grid);

		sum += Min(Max(step, -steps), steps);
	}

	noisy_sum = sum + uldp_discrete_laplace(steps, epsilon_sum);
	noisy_count = n + uldp_discrete_laplace(1, epsilon_count);
	estimate = centre + grid * ((double) noisy_sum / (double) Max(noisy_count, 1));
	return Min(Max(estimate, range.lower), range.upper);
}

Datum
uldp_mean_finalfn(PG_FUNCTION_ARGS)
{
	UldpParams	params;
	int64		n;
	double	   *means = begin_release(fcinfo, &params, &n);
	double		epsilon = params.epsilon * ULDP_SPEND_MARGIN;
	/* a public range costs nothing: the sum and the count get all of epsilon */
	double		epsilon_range = uldp_range_is_public(&params) ? 0 :
		params.has_tau ? epsilon / 2 : epsilon * 2 / 3;
	double		epsilon_rest = epsilon - epsilon_range;
	UldpInterval range = uldp_private_range(means, n, &params, epsilon_range);

	PG_RETURN_FLOAT8(winsorized_mean(means, n, range,
									 epsilon_rest * 3 / 4, epsilon_rest / 4));
}

Datum
uldp_range_finalfn(PG_FUNCTION_ARGS)
{
	UldpParams	params;
	int64		n;
	double	   *means = begin_release(fcinfo, &params, &n);
	UldpInterval range = uldp_private_range(means, n, &params,
											params.epsilon * ULDP_SPEND_MARGIN);
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "user_dp_range must return a composite type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Float8GetDatum(range.lower);
	values[1] = Float8GetDatum(range.upper);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * user_dp_count: the number of distinct users plus discrete Laplace noise of
 * sensitivity 1 (adding or removing a user changes it by one): epsilon-DP.
 * The count is an integer, so the noise is exact and needs no grid.
 * Returns the noisy count; *half_width receives the half-width of a 95%
 * interval around it.  The arguments of the aggregate are user_id and
 * epsilon.
 */
static int128
noisy_user_count(FunctionCallInfo fcinfo, int64 *half_width)
{
	UldpParams	params;
	int64		n;
	double		epsilon;
	double		sampled;

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	uldp_params_from_aggref(fcinfo, 1, &params);
	n = PG_ARGISNULL(0) ? 0 : uldp_state_users((UldpState *) PG_GETARG_POINTER(0));
	epsilon = params.epsilon * ULDP_SPEND_MARGIN;

	/*
	 * P(|Z| > k) = 2 q^(k+1) / (1 + q), q = exp(-epsilon'), for the noise
	 * P(Z = z) ~ q^|z|; epsilon' is epsilon rounded down to 24 significant
	 * bits by the sampler, so computing k with a slightly smaller epsilon
	 * (and rounding the quotient up) can only widen the interval.
	 */
	sampled = epsilon * (1 - 0x1p-22);
	*half_width = (int64) Max(ceil(log(40 / (1 + exp(-sampled))) / sampled * (1 + 1e-12)) - 1, 0);
	return n + uldp_discrete_laplace(1, epsilon);
}

/* A count as released: never negative (post-processing: n >= 0) */
static int64
release_count(int128 count)
{
	return (int64) Min(Max(count, 0), (int128) PG_INT64_MAX);
}

Datum
uldp_count_finalfn(PG_FUNCTION_ARGS)
{
	int64		half_width;

	PG_RETURN_INT64(release_count(noisy_user_count(fcinfo, &half_width)));
}

/*
 * user_dp_count_ci: the same release, and [count - k, count + k] cut at 0,
 * which holds the true number of users with probability at least 95%
 * (it is computed from the noise's law alone: no extra charge).
 */
Datum
uldp_count_ci_finalfn(PG_FUNCTION_ARGS)
{
	int64		half_width;
	int128		count = noisy_user_count(fcinfo, &half_width);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "user_dp_count_ci must return a composite type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int64GetDatum(release_count(count));
	values[1] = Int64GetDatum(release_count(count - half_width));
	values[2] = Int64GetDatum(release_count(count + half_width));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

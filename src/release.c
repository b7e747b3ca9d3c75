/*-------------------------------------------------------------------------
 *
 * release.c
 *	  Final functions of user_dp_mean and user_dp_range.
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

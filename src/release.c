/*-------------------------------------------------------------------------
 *
 * release.c
 *	  Final functions of user_dp_mean, user_dp_sum (and their _ci twins)
 *	  and user_dp_range.
 *
 * Privacy model: neighbouring tables differ by all the rows of one user
 * (add or remove); the number of users is private.  Each release's whole
 * epsilon is charged with its statement, before any row is read
 * (statement.c), and it returns a value for every input, including an
 * empty one.
 *
 * Each user contributes one value: the average of its rows (mean) or their
 * total (sum).  A share of epsilon chooses the interval the values are
 * clipped to and, for a mean, the centre the sum is taken around
 * (clipping.c: nothing with both bounds, PrivateRange with tau, a private
 * median and ladder otherwise).  The rest pays for a fixed-point sum of the
 * clipped values with discrete Laplace noise and, for a mean, a noisy user
 * count with discrete Laplace noise of sensitivity 1.  Everything after the noise is
 * post-processing of noisy integers and public values, including the 95%
 * intervals of the _ci twins, which are computed from the noise's law: no
 * extra charge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"

#include "budget.h"
#include "clipping.h"
#include "fixedsum.h"
#include "noise.h"
#include "range.h"
#include "release.h"
#include "userstate.h"

/* each of the two noises of an interval misses with at most this chance */
#define CI_ALPHA 0.025

PG_FUNCTION_INFO_V1(uldp_mean_finalfn);
PG_FUNCTION_INFO_V1(uldp_mean_ci_finalfn);
PG_FUNCTION_INFO_V1(uldp_sum_finalfn);
PG_FUNCTION_INFO_V1(uldp_sum_ci_finalfn);
PG_FUNCTION_INFO_V1(uldp_range_finalfn);

/* A released estimate and its 95% interval */
typedef struct ScalarRelease
{
	double		estimate;
	double		ci_lower;
	double		ci_upper;
} ScalarRelease;

/*
 * What a release reads: the users' values (averages or totals), or, over
 * shards whose users are their own, the users and the fixed-point sum of
 * their values that the shards sent, merged (fixedsum.c).
 */
typedef struct ReleaseInput
{
	double	   *values;			/* NULL with sums */
	int64		n;
	bool		sorted;			/* values in ascending order */
	const UldpPartitionSums *sums;
} ReleaseInput;

/*
 * The plan of user_dp_mean, user_dp_sum and user_dp_range: (epsilon
 * [, lower, upper [, tau]]) validated; epsilon is their whole cost.
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
 * Reads the parameters of a release its statement paid for, and what it
 * releases from.  Arguments 0, 1 and 2 of the aggregate are value (or,
 * merging shards' states, the state), user_id and epsilon.  A boolean value
 * is 0 or 1, so its mean has the public bounds [0, 1] when none are given.
 * Shards send sums only for releases with both bounds and no tau
 * (shardrewrite.c); anything else is refused whatever the sums hold.
 */
static ReleaseInput
begin_release(FunctionCallInfo fcinfo, UldpParams *params, bool average)
{
	Aggref	   *aggref;
	UldpState  *state;
	ReleaseInput input = {NULL, 0, false, NULL};

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	uldp_release_params(fcinfo, uldp_release_first_param(fcinfo), params);
	aggref = AggGetAggref(fcinfo);
	/* aggargtypes, unlike args, survives the finalize step of a parallel
	 * aggregation, whose args are the partial states */
	if (average && !params->has_lower && !params->has_upper &&
		linitial_oid(aggref->aggargtypes) == BOOLOID)
	{
		params->has_lower = params->has_upper = params->has_bounds = true;
		params->lower = 0;
		params->upper = 1;
	}

	if (PG_ARGISNULL(0))
		return input;
	state = (UldpState *) PG_GETARG_POINTER(0);
	input.sums = uldp_state_partition_sums(state);
	if (input.sums == NULL)
	{
		input.values = average ? uldp_state_user_means(state, &input.n, &input.sorted) :
			uldp_state_user_totals(state, &input.n, &input.sorted);
		return input;
	}
	if (!params->has_lower || !params->has_upper || params->has_tau ||
		input.sums->average != average)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partitions' sums need a release with both bounds and no tau"),
				 errhint("Release over per-user states (uldp_shard.user_rows) instead.")));
	input.n = input.sums->users;
	return input;
}

/*
 * The fixed-point sum of the values of input over an empty sum that says
 * how to clip them; shards' sums must have been clipped alike.
 */
static UldpFixedSum
input_sum(const ReleaseInput *input, UldpFixedSum empty)
{
	if (input->sums != NULL)
	{
		if (!uldp_fixed_sum_same_grid(&input->sums->sum, &empty))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("partitions' sums were clipped to other bounds than the release's"),
					 errhint("Pass the release's bounds to uldp_shard.user_sums.")));
		return input->sums->sum;
	}
	for (int64 i = 0; i < input->n; i++)
		uldp_fixed_sum_add(&empty, input->values[i]);
	return empty;
}

/* [lower, upper] products of two intervals' ends, sign-aware */
static void
interval_ratio(double s_low, double s_high, double n_low, double n_high,
			   double *low, double *high)
{
	*low = Min(s_low / n_low, s_low / n_high);
	*high = Max(s_high / n_low, s_high / n_high);
}

/* A noisy count of the users: discrete Laplace noise of sensitivity 1 */
typedef struct NoisyCount
{
	int128		value;
	double		epsilon;
} NoisyCount;

static NoisyCount
noisy_count(int64 n, double epsilon)
{
	NoisyCount	count = {n + uldp_discrete_laplace(1, epsilon), epsilon};

	return count;
}

/*
 * The winsorized mean of Levy et al. (Algorithm 1, step 2), for unknown n:
 * the values clipped to the interval, summed around its centre as integers,
 * with discrete Laplace noise on the integer sum (sensitivity: the steps of
 * a half-width), divided by the noisy user count.
 *
 * The interval: the true mean of the clipped values is centre + grid S / n
 * for the exact sum S and count n >= 1.  |noisy S - S| <= k_s and
 * |noisy n - n| <= k_c each hold with probability 1 - CI_ALPHA, so both
 * with at least 95%; S / n over that box is at its extremes at the corners.
 */
static ScalarRelease
winsorized_mean(const ReleaseInput *input, UldpClipping clipping,
				double epsilon_sum, NoisyCount count)
{
	UldpFixedSum fixed = input_sum(input, uldp_fixed_sum_empty(clipping.lower, clipping.upper,
															   clipping.centre));
	int128		noisy_sum = fixed.sum + uldp_discrete_laplace(fixed.steps, epsilon_sum);
	double		k_sum = uldp_discrete_laplace_tail(fixed.steps, epsilon_sum, CI_ALPHA);
	double		k_count = uldp_discrete_laplace_tail(1, count.epsilon, CI_ALPHA);
	double		low;
	double		high;
	ScalarRelease release;

	release.estimate = fixed.centre +
		fixed.grid * ((double) noisy_sum / (double) Max(count.value, 1));
	interval_ratio((double) noisy_sum - k_sum, (double) noisy_sum + k_sum,
				   Max((double) count.value - k_count, 1),
				   Max((double) count.value + k_count, 1), &low, &high);
	release.ci_lower = fixed.centre + fixed.grid * low;
	release.ci_upper = fixed.centre + fixed.grid * high;

	release.estimate = Min(Max(release.estimate, clipping.lower), clipping.upper);
	release.ci_lower = Min(Max(release.ci_lower, clipping.lower), clipping.upper);
	release.ci_upper = Min(Max(release.ci_upper, clipping.lower), clipping.upper);
	return release;
}

/*
 * Without bounds and with too few users (by the noisy count) for a private
 * interval, the release says so: 0 (within the bounds given) and an
 * interval as wide as the values can be.
 */
static ScalarRelease
too_few_users(const UldpParams *params)
{
	ScalarRelease release;

	release.estimate = Min(Max(0, params->lower), params->upper);
	release.ci_lower = -ULDP_MAX_MAGNITUDE;
	release.ci_upper = ULDP_MAX_MAGNITUDE;
	return release;
}

/*
 * Without bounds, a noisy count comes first: it sets the shares of the
 * interval (clipping.c) and is the mean's denominator.  With bounds (or
 * tau) the rest of epsilon is split 3:1 between the sum and the count,
 * since the count's noise moves the estimate by |mean - centre| / n per
 * unit, up to the half-width around the middle of public bounds.
 */
static ScalarRelease
release_mean(FunctionCallInfo fcinfo)
{
	UldpParams	params;
	ReleaseInput input = begin_release(fcinfo, &params, true);
	double		epsilon = params.epsilon * ULDP_SPEND_MARGIN;
	UldpClipping clipping;
	NoisyCount	count;
	double		rest;

	if (params.has_bounds)
	{
		clipping = uldp_private_clipping(input.values, input.n, input.sorted, &params, epsilon, 0);
		rest = epsilon - clipping.epsilon;
		count = noisy_count(input.n, rest / 4);
		return winsorized_mean(&input, clipping, rest * 3 / 4, count);
	}
	count = noisy_count(input.n, epsilon * ULDP_CLIPPING_COUNT_SHARE);
	if (!uldp_clipping_possible(&params, epsilon, count.value))
		return too_few_users(&params);
	clipping = uldp_private_clipping(input.values, input.n, input.sorted, &params, epsilon,
									 count.value);
	rest = epsilon - count.epsilon - clipping.epsilon;
	return winsorized_mean(&input, clipping, rest, count);
}

/*
 * The sum of the users' clipped totals, around 0: 0 need not lie within
 * the clipping interval, and the sum of values in [lower, upper] moves by
 * at most s0 = max(|lower|, |upper|) when a user comes or goes.  Taking it
 * around a centre c instead would need a count: with public bounds
 * (s0 = s1 + |c| for the half-width s1 around the middle) no split of
 * epsilon between the two beats the plain sum
 * ((s1^(2/3) + |c|^(2/3))^3 >= (s1 + |c|)^2), and without bounds the
 * interval is chosen around 0 (clipping.c).
 */
static ScalarRelease
clipped_sum(const ReleaseInput *input, UldpClipping clipping, double epsilon)
{
	UldpFixedSum fixed = input_sum(input, uldp_fixed_sum_public(clipping.lower, clipping.upper,
																false));
	int128		noisy;
	double		k;
	ScalarRelease release;

	noisy = fixed.sum + uldp_discrete_laplace(fixed.steps, epsilon);
	k = uldp_discrete_laplace_tail(fixed.steps, epsilon, 2 * CI_ALPHA);
	release.estimate = fixed.grid * (double) noisy;
	release.ci_lower = fixed.grid * ((double) noisy - k);
	release.ci_upper = fixed.grid * ((double) noisy + k);
	return release;
}

static ScalarRelease
release_sum(FunctionCallInfo fcinfo)
{
	UldpParams	params;
	ReleaseInput input = begin_release(fcinfo, &params, false);
	double		epsilon = params.epsilon * ULDP_SPEND_MARGIN;
	UldpClipping clipping;

	if (params.has_bounds)
		clipping = uldp_private_clipping(input.values, input.n, input.sorted, &params, epsilon, 0);
	else if (!uldp_private_sum_clipping(input.values, input.n, input.sorted, &params, epsilon,
										&clipping))
		return too_few_users(&params);
	return clipped_sum(&input, clipping, epsilon - clipping.epsilon);
}

static Datum
release_tuple(FunctionCallInfo fcinfo, ScalarRelease release)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "a uldp release with an interval must return a composite type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Float8GetDatum(release.estimate);
	values[1] = Float8GetDatum(release.ci_lower);
	values[2] = Float8GetDatum(release.ci_upper);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

Datum
uldp_mean_finalfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(release_mean(fcinfo).estimate);
}

Datum
uldp_mean_ci_finalfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(release_tuple(fcinfo, release_mean(fcinfo)));
}

Datum
uldp_sum_finalfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(release_sum(fcinfo).estimate);
}

Datum
uldp_sum_ci_finalfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(release_tuple(fcinfo, release_sum(fcinfo)));
}

Datum
uldp_range_finalfn(PG_FUNCTION_ARGS)
{
	UldpParams	params;
	ReleaseInput input = begin_release(fcinfo, &params, true);
	UldpInterval range;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (input.sums != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("user_dp_range needs per-user states, not partitions' sums"),
				 errhint("Release over per-user states (uldp_shard.user_rows) instead.")));
	range = uldp_private_range(input.values, input.n, input.sorted, &params,
							   params.epsilon * ULDP_SPEND_MARGIN);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "user_dp_range must return a composite type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Float8GetDatum(range.lower);
	values[1] = Float8GetDatum(range.upper);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

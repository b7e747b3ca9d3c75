/*-------------------------------------------------------------------------
 *
 * count.c
 *	  Final functions of user_dp_count and user_dp_count_ci.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"

#include "budget.h"
#include "noise.h"
#include "params.h"
#include "statement.h"
#include "userstate.h"

PG_FUNCTION_INFO_V1(uldp_count_finalfn);
PG_FUNCTION_INFO_V1(uldp_count_ci_finalfn);

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

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	uldp_release_params(fcinfo, uldp_release_first_param(fcinfo), &params);
	n = PG_ARGISNULL(0) ? 0 : uldp_state_users((UldpState *) PG_GETARG_POINTER(0));
	epsilon = params.epsilon * ULDP_SPEND_MARGIN;

	*half_width = (int64) uldp_discrete_laplace_tail(1, epsilon, 0.05);
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

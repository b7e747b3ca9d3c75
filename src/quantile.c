/*-------------------------------------------------------------------------
 *
 * quantile.c
 *	  user_dp_quantile: the q-quantile of the rows, where the rows of each
 *	  user together weigh one.
 *
 * A user with r rows gives each of them the weight floor(2^32 / r), in
 * units of 2^-32 user: a user's rows weigh at most one user together,
 * exactly, and every sum below is an exact integer, whatever the order of
 * the rows or how parallel workers split them.
 *
 * The release spends epsilon / 10 on a noisy number of users n' (discrete
 * Laplace, sensitivity 1) and the rest on an exponential mechanism over the
 * keys of a floating-point grid (grid.c) with the score
 *
 *		s(b) = distance from q n' to [W(< b), W(<= b)]
 *
 * in users, W(< b) being the weight of the rows whose key is below b: the
 * score is 0 where the weighted rank of b brackets q n'.  Adding or removing
 * a user moves both ends of every interval by at most one user in the same
 * direction, so s has sensitivity 1; but it falls for some keys and rises
 * for others, so the mechanism runs with half its share (the general case of
 * McSherry and Talwar 2007).  Given n', which is computed from the noise
 * alone, the target q n' is a constant; the two steps compose to epsilon.
 * doc/privacy.md has the proof and the accuracy.
 *
 * The keys are cut, as for the median (noise.c), into the gaps between the
 * distinct keys of the rows and those keys: at most 2 rows + 1 segments,
 * whose scores are recomputed from the sorted rows at each pass.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "budget.h"
#include "grid.h"
#include "noise.h"
#include "params.h"
#include "quantile.h"
#include "quantstate.h"
#include "radixsort.h"

/* a user's weight: 2^32 units */
#define WEIGHT_ONE (UINT64CONST(1) << 32)
/* with both bounds, magnitudes below 2^-FLOAT_GRID_FLOOR_BITS of their
 * width share one key, as for the median (range.c) */
#define FLOAT_GRID_FLOOR_BITS 40

PG_FUNCTION_INFO_V1(uldp_quantile_finalfn);

/* The public parameters: (epsilon, q [, lower, upper]). */
typedef struct QuantileParams
{
	double		epsilon;
	double		q;
	bool		has_lower;
	bool		has_upper;
	double		lower;			/* the bound, or -ULDP_MAX_MAGNITUDE */
	double		upper;			/* the bound, or +ULDP_MAX_MAGNITUDE */
} QuantileParams;

/*
 * Reads and validates the parameters.  epsilon and q are required; NULL for
 * a bound means that it is not given, so that one bound can be given alone.
 */
static void
quantile_params_set(QuantileParams *params, int nvalues, const Datum *values,
					const bool *nulls)
{
	static const char *const names[] = {"epsilon", "q"};

	Assert(nvalues == 2 || nvalues == 4);
	uldp_check_not_null(2, names, nulls);
	params->epsilon = DatumGetFloat8(values[0]);
	params->q = DatumGetFloat8(values[1]);
	params->has_lower = nvalues >= 4 && !nulls[2];
	params->has_upper = nvalues >= 4 && !nulls[3];
	params->lower = params->has_lower ? DatumGetFloat8(values[2]) : -ULDP_MAX_MAGNITUDE;
	params->upper = params->has_upper ? DatumGetFloat8(values[3]) : ULDP_MAX_MAGNITUDE;

	uldp_check_epsilon(params->epsilon);
	if (!(params->q > 0 && params->q < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("q must be a number strictly between 0 and 1, not %g", params->q),
				 errhint("q is the fraction of users below the quantile: 0.5 for the median, 0.9 for the 90th percentile.")));
	uldp_check_bounds(params->lower, params->upper);
}

/*
 * The plan of user_dp_quantile: its parameters validated; epsilon is its
 * whole cost.
 */
void
uldp_quantile_plan(const UldpReleaseCall *call, UldpReleasePlan *plan)
{
	QuantileParams params;

	quantile_params_set(&params, call->nparams, call->params, call->nulls);
	plan->epsilon = params.epsilon;
	plan->bytes_per_row = uldp_quantile_state_bytes_per_row();
	plan->fixed_bytes = uldp_quantile_state_fixed_bytes();
}

/*
 * Replaces each row (user key, value) by (grid key of the value clamped to
 * the bounds, weight of the row): floor(WEIGHT_ONE / r) for a user with r
 * rows, an integer of at most 2^32, exact in the double.  Returns the number
 * of users.
 */
static int64
weigh_rows(UldpQuantileRow *rows, UldpQuantileRow *buffer, int64 n,
		   const UldpGrid *grid, const QuantileParams *params)
{
	int64		nusers = 0;
	int64		first = 0;

	uldp_sort_records(rows, buffer, n, sizeof(UldpQuantileRow));
	while (first < n)
	{
		int64		end = first;
		double		weight;

		while (end < n && rows[end].key == rows[first].key)
			end++;
		weight = (double) (WEIGHT_ONE / (uint64) (end - first));
		for (int64 i = first; i < end; i++)
		{
			rows[i].key = uldp_grid_key(grid, Min(Max(rows[i].value, params->lower), params->upper));
			rows[i].value = weight;
		}
		nusers++;
		first = end;
	}
	return nusers;
}

/*
 * q times the noisy number of users, in weight units, rounded down, exactly.
 * The count is cut to [0, 2^32] first (post-processing), and
 * q = m 2^(e - 53) with m < 2^53 an integer, so the target is
 * floor(m users / 2^(21 - e)), with m users < 2^85, and below 2^64.
 */
static uint128
quantile_target(double q, int128 noisy_users)
{
	int			exponent;
	uint64		mantissa = (uint64) ldexp(frexp(q, &exponent), 53);
	uint128		users = (uint128) Min(Max(noisy_users, 0), (int128) WEIGHT_ONE);
	int			shift = 21 - exponent;

	return shift >= 128 ? 0 : ((uint128) mantissa * users) >> shift;
}

/*
 * The distance from the target (*arg, q n' in weight units) to the
 * weights [below, below + at] of a candidate, in users.  It is capped at
 * 2^32 users, which keeps its sensitivity 1 (a cap is 1-Lipschitz) and
 * makes the conversion exact: an integer below 2^64 is exact in a long
 * double, and so is its scaling by 2^-32.  The exponential mechanism takes
 * scores up to 2^34.
 */
static long double
interval_score(uint128 below, uint128 at, uint128 total, const void *arg)
{
	uint128		target = *(const uint128 *) arg;
	uint128		high = below + at;
	uint128		distance = target < below ? below - target :
		target > high ? target - high : 0;

	if (distance >= ((uint128) 1) << 64)
		return ldexpl(1.0L, 32);
	return ldexpl((long double) (uint64) distance, -32);
}

/*
 * user_dp_quantile(value, user_id, epsilon, q [, lower, upper]): see the
 * file's header.  Returns a value for every input, an empty one included.
 */
Datum
uldp_quantile_finalfn(PG_FUNCTION_ARGS)
{
	QuantileParams params;
	Datum		values[4];
	bool		nulls[4];
	int			nvalues;
	double		epsilon;
	UldpGrid	grid;
	UldpQuantileRow *rows;
	UldpQuantileRow *buffer;
	int64		nrows = 0;
	int64		nusers;
	uint128		target;
	UldpKeyWalk walk = {0};
	UldpSegmentSource source;
	uint64		key;
	double		quantile;

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	nvalues = uldp_release_constants(fcinfo, 2, values, nulls, 4);
	quantile_params_set(&params, nvalues, values, nulls);
	epsilon = params.epsilon * ULDP_SPEND_MARGIN;
	grid = uldp_float_grid(params.lower, params.upper,
						   params.has_lower && params.has_upper ?
						   ldexp(params.upper - params.lower, -FLOAT_GRID_FLOOR_BITS) : 0);

	if (PG_ARGISNULL(0))
		rows = palloc(sizeof(UldpQuantileRow));
	else
		rows = uldp_quantile_state_rows((UldpQuantileState *) PG_GETARG_POINTER(0), &nrows);
	buffer = palloc_extended(Max(nrows, 1) * sizeof(UldpQuantileRow), MCXT_ALLOC_HUGE);
	nusers = weigh_rows(rows, buffer, nrows, &grid, &params);
	uldp_sort_records(rows, buffer, nrows, sizeof(UldpQuantileRow));
	pfree(buffer);

	target = quantile_target(params.q, nusers + uldp_discrete_laplace(1, epsilon / 10));
	walk.keys = (const char *) &rows[0].key;
	walk.weights = (const char *) &rows[0].value;
	walk.stride = sizeof(UldpQuantileRow);
	walk.n = nrows;
	walk.domain = grid.domain;
	walk.score = interval_score;
	walk.score_arg = &target;
	source = uldp_key_walk_source(&walk);
	/* the score has sensitivity 1 but is not monotone: half the share */
	key = uldp_exponential_select(&source, epsilon * 9 / 10 / 2);
	pfree(rows);

	/*
	 * A key stands for the middle of its bin, except the bin that holds 0,
	 * which stands for 0 (its middle is a subnormal number on the scale-free
	 * grid): a quantile of booleans, or of counts, at 0 is 0.
	 */
	if (params.lower <= 0 && params.upper >= 0 && key == uldp_grid_key(&grid, 0))
		quantile = 0;
	else
		quantile = uldp_grid_value(&grid, key);
	PG_RETURN_FLOAT8(Min(Max(quantile, params.lower), params.upper));
}

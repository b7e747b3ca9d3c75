/*-------------------------------------------------------------------------
 *
 * shardpairs.c
 *	  The aggregates of uldp_shard for grouped releases: one value per
 *	  (user, group) pair of a partition.
 *
 * A grouped release over shards (doc/scale-out.md) sends each shard
 *
 *	SELECT uldp_shard.pair_user(user_id, max_rows), <keys>,
 *		   uldp_shard.user_mean(value, lower, upper) FILTER (WHERE ...), ...
 *	FROM partition WHERE ... GROUP BY user_id, <keys>
 *
 * and releases over these pairs on the coordinator exactly as over rows:
 * a user's value in a group is the mean of its clamped rows there (for a
 * mean), or their total (for a sum), which is what the coordinator's own
 * transition functions would compute from the rows.  Like them, these
 * skip NULL and NaN values and never raise an error that depends on a row
 * (PostgreSQL's avg and sum of float8 raise one on overflow); a pair
 * without such values gets NULL, which the release skips.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "params.h"
#include "shardbound.h"

typedef struct PairValue
{
	double		sum;
	int64		rows;
	double		lower;			/* rows are clamped to [lower, upper] */
	double		upper;
} PairValue;

PG_FUNCTION_INFO_V1(uldp_shard_mean_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_mean_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_total_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_total_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_mean_finalfn);
PG_FUNCTION_INFO_V1(uldp_shard_total_finalfn);
PG_FUNCTION_INFO_V1(uldp_shard_pair_user_transfn);

/*
 * Adds one row to a pair's value; the bounds are arguments 2 and 3 (a
 * mean's, checked at its first row) or none (a total's, +-ULDP_MAX_MAGNITUDE).
 */
static Datum
add_value(FunctionCallInfo fcinfo, double value, bool bounded)
{
	PairValue  *pair = PG_ARGISNULL(0) ? NULL : (PairValue *) PG_GETARG_POINTER(0);

	if (pair == NULL)
	{
		MemoryContext aggcontext = uldp_shard_aggregate_context(fcinfo, bounded ? "uldp_shard.user_mean" :
																"uldp_shard.user_total");

		pair = MemoryContextAllocZero(aggcontext, sizeof(PairValue));
		pair->lower = -ULDP_MAX_MAGNITUDE;
		pair->upper = ULDP_MAX_MAGNITUDE;
		if (bounded)
		{
			if (PG_ARGISNULL(2) || PG_ARGISNULL(3) ||
				isnan(pair->lower = PG_GETARG_FLOAT8(2)) || isnan(pair->upper = PG_GETARG_FLOAT8(3)) ||
				pair->lower > pair->upper)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("uldp_shard.user_mean needs bounds lower <= upper"),
						 errhint("Pass the clamping bounds as two numbers, lower first.")));
		}
	}
	if (!isnan(value))
	{
		pair->sum += Min(Max(value, pair->lower), pair->upper);
		pair->rows++;
	}
	PG_RETURN_POINTER(pair);
}

/* mean_transfn(state, value float8, lower, upper) */
Datum
uldp_shard_mean_transfn(PG_FUNCTION_ARGS)
{
	return add_value(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), true);
}

/* mean_bool_transfn(state, value boolean, lower, upper): 1 or 0 */
Datum
uldp_shard_mean_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_value(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, true);
}

/* total_transfn(state, value float8) */
Datum
uldp_shard_total_transfn(PG_FUNCTION_ARGS)
{
	return add_value(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), false);
}

/* total_bool_transfn(state, value boolean): 1 or 0 */
Datum
uldp_shard_total_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_value(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, false);
}

/* The mean of the pair's clamped rows, or NULL without rows. */
Datum
uldp_shard_mean_finalfn(PG_FUNCTION_ARGS)
{
	PairValue  *pair = PG_ARGISNULL(0) ? NULL : (PairValue *) PG_GETARG_POINTER(0);

	if (pair == NULL || pair->rows == 0)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(pair->sum / pair->rows);
}

/* The total of the pair's clamped rows, or NULL without rows. */
Datum
uldp_shard_total_finalfn(PG_FUNCTION_ARGS)
{
	PairValue  *pair = PG_ARGISNULL(0) ? NULL : (PairValue *) PG_GETARG_POINTER(0);

	if (pair == NULL || pair->rows == 0)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(pair->sum);
}

/*
 * pair_user(user_id, max_rows): the user id of the pair (the branch groups
 * by it), after checking, at the scan's first row, that the partition may
 * hold no more than max_rows rows (the coordinator checks it without rows
 * too: shardgroups.c).  The coordinator's registration of users in groups
 * reads this column, so it is computed by every query of the pairs.
 */
Datum
uldp_shard_pair_user_transfn(PG_FUNCTION_ARGS)
{
	/* once per scan: the call and the bound are the same for every pair */
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		uldp_shard_aggregate_context(fcinfo, "uldp_shard.pair_user");
		uldp_shard_check_rows(fcinfo, 1);
		fcinfo->flinfo->fn_extra = fcinfo->flinfo;
	}
	/* the pair's id, from its first row (the executor keeps a copy) */
	if (!PG_ARGISNULL(0))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(1));
}

/*-------------------------------------------------------------------------
 *
 * shardstate.c
 *	  The state aggregates of uldp_shard: a partition's rows grouped by user,
 *	  each user's row count and sum, serialized for the coordinator
 *	  (user_rows), only their number and the fixed-point sum of their
 *	  clipped values (user_sums), or their values, sorted (user_values).
 *
 * A coordinator that releases over a table partitioned by its privacy unit
 * into postgres_fdw partitions pushes one of these aggregates down to each
 * shard, merges the states by user id (a user found in two partitions is
 * still one user) and releases exactly as over a local table
 * (doc/scale-out.md).  Here nothing is private: the state is exact and is
 * read only by the coordinator's user mapping, so the aggregates check only
 * what keeps them well defined.  Rows are never refused, only skipped (a
 * NULL or NaN value, a NULL user id or one longer than ULDP_MAX_ID_BYTES),
 * as the coordinator's own transition functions skip them.  The bounds are
 * checked at the first row (without rows the state is empty and has none
 * to apply): the coordinator ships only bounds it validated before it
 * charged the release.
 *
 * The coordinator bounds the memory of its merge, before it charges and
 * asks any shard for a state, by the rows each partition may hold: the
 * aggregate's last argument.  Each state checks that bound
 * (shardbound.c) at its first row and, without rows, in the final
 * function, so that the error a too large partition raises depends on its
 * size, never on its rows.  The bound is also what keeps a state within
 * the 1 GB a value may take.
 *
 * user_sums serves releases with public bounds over shards that keep only
 * their own users (the coordinator filters each partition's rows to the
 * user ids that hash to it: partition_member): the coordinator then needs
 * no user, only each partition's number of users and the exact
 * fixed-point sum of their clipped averages or totals (fixedsum.c), which
 * add up to those of the whole table.  Its work no longer grows with the
 * users.
 *
 * user_values serves the releases that choose their interval from the
 * users' values (without both bounds, or with tau), over the same shards:
 * each user's value, finished here since the user is the partition's own,
 * all of them sorted (partvalues.c), so that the coordinator merges sorted
 * runs instead of users by id and sorts nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "fixedsum.h"
#include "params.h"
#include "partvalues.h"
#include "shardbound.h"
#include "shardmember.h"
#include "usertable.h"

PG_MODULE_MAGIC;

/* users a new state has room for: a partition has many, it grows anyway */
#define INITIAL_USERS 1024

typedef struct ShardState
{
	UldpUserTable table;
	double		lower;			/* rows are clamped to [lower, upper] */
	double		upper;
	bool		key_byval;
	int16		key_typlen;
	/* user_sums of ids that are not by value: the partition's, row by row */
	bool		check_rows;
	UldpPartitionMember member;
} ShardState;

PG_FUNCTION_INFO_V1(uldp_shard_rows_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_sums_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_sums_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_sums_finalfn);
PG_FUNCTION_INFO_V1(uldp_shard_values_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_values_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_values_finalfn);
PG_FUNCTION_INFO_V1(uldp_shard_rows_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_rows_finalfn);
PG_FUNCTION_INFO_V1(uldp_shard_rows_combinefn);
PG_FUNCTION_INFO_V1(uldp_shard_rows_serialfn);
PG_FUNCTION_INFO_V1(uldp_shard_rows_deserialfn);
PG_FUNCTION_INFO_V1(uldp_shard_state_summary);

static ShardState *
state_create(MemoryContext context, Oid user_type, double lower, double upper)
{
	ShardState *state = MemoryContextAllocZero(context, sizeof(ShardState));

	state->lower = lower;
	state->upper = upper;
	get_typlenbyval(user_type, &state->key_typlen, &state->key_byval);
	uldp_user_table_init(&state->table, context, INITIAL_USERS, NULL, NULL);
	return state;
}

static void
check_bounds(double lower, double upper, const char *function)
{
	if (isnan(lower) || isnan(upper) || lower > upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uldp_shard.%s needs bounds lower <= upper", function),
				 errhint("Pass the clamping bounds as two numbers, lower first.")));
}

/* The state aggregates, which differ in what their final functions make */
typedef enum ShardKind
{
	SHARD_ROWS,					/* user_rows */
	SHARD_SUMS,					/* user_sums */
	SHARD_VALUES				/* user_values */
} ShardKind;

static const char *const shard_kind_names[] = {"user_rows", "user_sums", "user_values"};

/*
 * What user_sums(value, user_id, lower, upper, average, modulus, remainder,
 * max_rows) sums, or user_values sorts: the users of the hash partition
 * (modulus, remainder).
 */
typedef struct SumsArgs
{
	double		lower;
	double		upper;
	bool		average;
	int32		modulus;
	int32		remainder;
} SumsArgs;

/*
 * The constant arguments of user_sums or user_values ("kind"), read from
 * the call (uldp_shard_call_args: the final function of a partition
 * without rows has no state, and a parallel partial state none of them):
 * constants the coordinator writes into the query it ships.
 */
static SumsArgs
sums_args(FunctionCallInfo fcinfo, ShardKind kind)
{
	List	   *call = uldp_shard_call_args(fcinfo);
	Const	   *args[5];
	SumsArgs	result;

	for (int i = 0; i < 5; i++)
	{
		args[i] = (Const *) lfirst_node(TargetEntry, list_nth_cell(call, 2 + i))->expr;
		if (!IsA(args[i], Const) || args[i]->constisnull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the bounds, average and partition of uldp_shard.%s must be constants",
							shard_kind_names[kind])));
	}
	result.lower = DatumGetFloat8(args[0]->constvalue);
	result.upper = DatumGetFloat8(args[1]->constvalue);
	result.average = DatumGetBool(args[2]->constvalue);
	result.modulus = DatumGetInt32(args[3]->constvalue);
	result.remainder = DatumGetInt32(args[4]->constvalue);
	check_bounds(result.lower, result.upper, shard_kind_names[kind]);
	/* checked here, whatever the rows, not only where a row needs it */
	uldp_partition_bound_check(result.modulus, result.remainder);
	return result;
}

/*
 * The state of the first row.  user_rows: the bounds are arguments 3 and
 * 4, public constants that the coordinator writes into the query it ships,
 * and its rows are clamped to them.  user_sums and user_values (sums): a
 * mean's rows are clamped to its bounds, a sum's only to
 * +-ULDP_MAX_MAGNITUDE, as the coordinator's transition functions clamp
 * them; rows of users of other partitions are skipped here when their ids
 * are not by value (the final function skips the others' users, one hash
 * per user).
 */
static ShardState *
first_state(FunctionCallInfo fcinfo, ShardKind kind)
{
	const char *function = shard_kind_names[kind];
	bool		sums = kind != SHARD_ROWS;
	MemoryContext aggcontext = uldp_shard_aggregate_context(fcinfo,
															psprintf("uldp_shard.%s", function));
	Oid			user_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	ShardState *state;
	SumsArgs	args = {0};
	double		lower;
	double		upper;

	uldp_shard_check_rows(fcinfo, sums ? 7 : 4);
	if (sums)
	{
		args = sums_args(fcinfo, kind);
		lower = args.average ? args.lower : -ULDP_MAX_MAGNITUDE;
		upper = args.average ? args.upper : ULDP_MAX_MAGNITUDE;
	}
	else
	{
		lower = PG_ARGISNULL(3) ? NAN : PG_GETARG_FLOAT8(3);
		upper = PG_ARGISNULL(4) ? NAN : PG_GETARG_FLOAT8(4);
		check_bounds(lower, upper, function);
	}
	state = state_create(aggcontext, user_type, lower, upper);
	if (sums && args.modulus != 1 && !state->key_byval)
	{
		uldp_partition_member_init(&state->member, user_type, PG_GET_COLLATION(), args.modulus,
								   args.remainder, aggcontext);
		state->check_rows = true;
	}
	return state;
}

static Datum
add_row(FunctionCallInfo fcinfo, double value, ShardKind kind)
{
	ShardState *state = PG_ARGISNULL(0) ? first_state(fcinfo, kind) :
		(ShardState *) PG_GETARG_POINTER(0);
	uint64		id;

	if (PG_ARGISNULL(2) || isnan(value) ||
		!uldp_user_key(PG_GETARG_DATUM(2), state->key_byval, state->key_typlen, &id) ||
		(state->check_rows && !uldp_partition_member(&state->member, PG_GETARG_DATUM(2))))
		PG_RETURN_POINTER(state);
	uldp_user_table_add(&state->table, id,
						Min(Max(value, state->lower), state->upper), 1);
	PG_RETURN_POINTER(state);
}

/* rows_transfn(state, value float8, user_id, lower, upper, max_rows) */
Datum
uldp_shard_rows_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), SHARD_ROWS);
}

/* rows_bool_transfn(state, value boolean, user_id, lower, upper, max_rows): 1 or 0 */
Datum
uldp_shard_rows_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, SHARD_ROWS);
}

/* sums_transfn(state, value float8, user_id, lower, upper, average, modulus, remainder, max_rows) */
Datum
uldp_shard_sums_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), SHARD_SUMS);
}

/* sums_bool_transfn(state, value boolean, user_id, lower, upper, average, modulus, remainder, max_rows) */
Datum
uldp_shard_sums_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, SHARD_SUMS);
}

/* values_transfn(state, value float8, user_id, lower, upper, average, modulus, remainder, max_rows) */
Datum
uldp_shard_values_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), SHARD_VALUES);
}

/* values_bool_transfn(state, value boolean, user_id, lower, upper, average, modulus, remainder, max_rows) */
Datum
uldp_shard_values_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, SHARD_VALUES);
}

/*
 * The state as a value.  Without rows there is no state yet: an empty one
 * is made, keyed by the user id's type (FINALFUNC_EXTRA passes the
 * aggregate's argument types), so that every partition answers a state.
 */
Datum
uldp_shard_rows_finalfn(PG_FUNCTION_ARGS)
{
	ShardState *state;

	if (PG_ARGISNULL(0))
	{
		uldp_shard_check_rows(fcinfo, 4);
		state = state_create(CurrentMemoryContext,
							 get_fn_expr_argtype(fcinfo->flinfo, 2), 0, 0);
	}
	else
		state = (ShardState *) PG_GETARG_POINTER(0);
	uldp_user_table_flush(&state->table);
	PG_RETURN_BYTEA_P(uldp_user_table_to_bytea(&state->table, state->key_byval,
											   state->key_typlen));
}

/*
 * The values of the partition's users: each user's average (or total),
 * clamped to the bounds as the coordinator's release clamps it
 * (userstate.c, a NaN from +Inf + -Inf being 0).  Users of other
 * partitions are skipped: by value, an id is its key.
 */
static double *
partition_values(FunctionCallInfo fcinfo, ShardState *state, const SumsArgs *args, int64 *n)
{
	double	   *values = palloc_extended(Max(uldp_user_table_users(&state->table), 1) * sizeof(double),
										 MCXT_ALLOC_HUGE);
	UldpPartitionMember member;
	bool		check_users = args->modulus != 1 && state->key_byval;
	users_iterator iterator;
	UldpUser   *user;

	if (check_users)
		uldp_partition_member_init(&member, get_fn_expr_argtype(fcinfo->flinfo, 2), PG_GET_COLLATION(),
								   args->modulus, args->remainder, CurrentMemoryContext);
	*n = 0;
	users_start_iterate(state->table.users, &iterator);
	while ((user = users_iterate(state->table.users, &iterator)) != NULL)
	{
		double		value = args->average ? user->sum / (double) user->count : user->sum;

		if (check_users && !uldp_partition_member(&member, (Datum) user->id))
			continue;
		if (isnan(value))
			value = 0;
		values[(*n)++] = Min(Max(value, args->lower), args->upper);
	}
	return values;
}

/*
 * The state of a partition's final function, NULL without rows (after the
 * check of the partition's size that a first row makes).
 */
static ShardState *
final_state(FunctionCallInfo fcinfo)
{
	ShardState *state;

	if (PG_ARGISNULL(0))
	{
		uldp_shard_check_rows(fcinfo, 7);
		return NULL;
	}
	state = (ShardState *) PG_GETARG_POINTER(0);
	uldp_user_table_flush(&state->table);
	return state;
}

/*
 * The partition's users and the fixed-point sum of their values, on the
 * grid of the release with these bounds (fixedsum.c).
 */
Datum
uldp_shard_sums_finalfn(PG_FUNCTION_ARGS)
{
	SumsArgs	args = sums_args(fcinfo, SHARD_SUMS);
	ShardState *state = final_state(fcinfo);
	UldpPartitionSums sums;
	double	   *values;

	sums.users = 0;
	sums.average = args.average;
	sums.sum = uldp_fixed_sum_public(args.lower, args.upper, args.average);
	if (state == NULL)
	{
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, 2), &sums.key_typlen,
						&sums.key_byval);
		PG_RETURN_BYTEA_P(uldp_partition_sums_to_bytea(&sums));
	}
	sums.key_byval = state->key_byval;
	sums.key_typlen = state->key_typlen;
	values = partition_values(fcinfo, state, &args, &sums.users);
	for (int64 i = 0; i < sums.users; i++)
		uldp_fixed_sum_add(&sums.sum, values[i]);
	PG_RETURN_BYTEA_P(uldp_partition_sums_to_bytea(&sums));
}

/* The values of the partition's users, sorted (partvalues.c). */
Datum
uldp_shard_values_finalfn(PG_FUNCTION_ARGS)
{
	SumsArgs	args = sums_args(fcinfo, SHARD_VALUES);
	ShardState *state = final_state(fcinfo);
	UldpPartitionValues partition;
	double	   *values = NULL;

	partition.users = 0;
	partition.average = args.average;
	partition.lower = args.lower;
	partition.upper = args.upper;
	if (state == NULL)
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, 2), &partition.key_typlen,
						&partition.key_byval);
	else
	{
		partition.key_byval = state->key_byval;
		partition.key_typlen = state->key_typlen;
		values = partition_values(fcinfo, state, &args, &partition.users);
	}
	PG_RETURN_BYTEA_P(uldp_partition_values_to_bytea(&partition, values));
}

Datum
uldp_shard_rows_combinefn(PG_FUNCTION_ARGS)
{
	ShardState *state1 = PG_ARGISNULL(0) ? NULL : (ShardState *) PG_GETARG_POINTER(0);
	ShardState *state2 = PG_ARGISNULL(1) ? NULL : (ShardState *) PG_GETARG_POINTER(1);

	uldp_shard_aggregate_context(fcinfo, "uldp_shard.rows_combinefn");
	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	/* deserialized states live in the aggregate context: adopt the first */
	if (state1 == NULL)
		PG_RETURN_POINTER(state2);
	uldp_user_table_flush(&state2->table);
	uldp_user_table_add_table(&state1->table, &state2->table);
	PG_RETURN_POINTER(state1);
}

/* The bounds were applied to every row already: the value needs the users. */
Datum
uldp_shard_rows_serialfn(PG_FUNCTION_ARGS)
{
	ShardState *state = (ShardState *) PG_GETARG_POINTER(0);

	uldp_user_table_flush(&state->table);
	PG_RETURN_BYTEA_P(uldp_user_table_to_bytea(&state->table, state->key_byval,
											   state->key_typlen));
}

Datum
uldp_shard_rows_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *value = PG_GETARG_BYTEA_PP(0);
	MemoryContext aggcontext = uldp_shard_aggregate_context(fcinfo, "uldp_shard.rows_deserialfn");
	UldpTableHeader header;
	const char *users = uldp_user_table_read_header(value, &header);
	ShardState *state = MemoryContextAllocZero(aggcontext, sizeof(ShardState));

	state->key_byval = header.key_byval;
	state->key_typlen = header.key_typlen;
	uldp_user_table_init(&state->table, aggcontext, INITIAL_USERS, NULL, NULL);
	uldp_user_table_merge(&state->table, users, header.nusers);
	PG_RETURN_POINTER(state);
}

/*
 * state_summary(state bytea, OUT users bigint, OUT rows numeric, OUT total float8):
 * for a partition's sums (user_sums), its users, no rows and the sum of
 * their clipped values as its grid holds it; for its sorted values
 * (user_values), its users, no rows and the sum of their values, added in
 * ascending order.
 */
Datum
uldp_shard_state_summary(PG_FUNCTION_ARGS)
{
	bytea	   *value = PG_GETARG_BYTEA_PP(0);
	UldpTableHeader header;
	UldpPartitionSums sums;
	UldpPartitionValues partition;
	const char *cursor;
	uint64		rows = 0;
	double		total = 0;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (uldp_partition_sums_from_bytea(value, &sums))
	{
		values[0] = Int64GetDatum(sums.users);
		nulls[1] = true;
		values[2] = Float8GetDatum(sums.sum.centre * (double) sums.users +
								   sums.sum.grid * (double) sums.sum.sum);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
														  values, nulls)));
	}
	if (uldp_partition_values_from_bytea(value, &partition))
	{
		values[0] = Int64GetDatum(partition.users);
		nulls[1] = true;
		for (int64 i = 0; i < partition.users; i++)
			total += uldp_partition_value(&partition, i);
		values[2] = Float8GetDatum(total);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
														  values, nulls)));
	}
	cursor = uldp_user_table_read_header(value, &header);
	for (int64 i = 0; i < header.nusers; i++)
	{
		uint32		count;
		double		sum;

		uldp_user_entry_read(cursor, &count, &sum);
		cursor += ULDP_SERIALIZED_USER_BYTES;
		rows += count;
		total += sum;
	}
	values[0] = Int64GetDatum(header.nusers);
	values[1] = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) rows));
	values[2] = Float8GetDatum(total);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

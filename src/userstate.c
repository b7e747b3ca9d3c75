/*-------------------------------------------------------------------------
 *
 * userstate.c
 *	  Transition, combine, serialize and deserialize functions of the uldp
 *	  aggregates.
 *
 * The transition function groups rows by user id in an open-addressing hash
 * table and keeps each user's running sum and row count; it adds no noise
 * and clips nothing per user, so partial states from parallel workers can
 * be merged exactly and all per-user clipping happens in the final
 * function, after combining.
 *
 * The users are kept in a table of usertable.c, which also says how users
 * are identified.
 *
 * Memory.  A release over a protected table had its worst case
 * (uldp_user_state_bytes_per_row() per row the table can hold) checked
 * against uldp.max_state_memory before any row was read (statement.c), and
 * is not checked again: an error while reading would depend on the rows.
 * Other releases, whose callers may read the rows anyway, check the limit
 * before every growth of the table.
 *
 * Serialized partial states are kept as they are until the final function
 * merges them all at once (state_settle).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/lsyscache.h"

#include "fixedsum.h"
#include "statement.h"
#include "userstate.h"

int			uldp_max_state_memory = 1024 * 1024;	/* 1 GB */

/* working memory of a release, per user: 4 arrays of doubles or keys
 * (range.c) and one byte per segment of the exponential mechanism */
#define RELEASE_BYTES_PER_USER (4 * sizeof(double) + 2)
/*
 * users a new table has room for: few, since a grouped release makes one
 * state per group, and many groups have few users (a big table grows in a
 * few doublings)
 */
#define INITIAL_USERS 64

struct UldpState
{
	UldpParams	params;
	bool		key_byval;
	int16		key_typlen;
	bool		bounded;		/* memory bounded before reading: no checks */
	MemoryContext context;
	UldpUserTable table;
	/* serialized partial states not merged yet (see uldp_user_combinefn) */
	List	   *chunks;
	Size		chunk_bytes;
	/* shards' sums merged instead of users (uldp_user_merge_transfn) */
	bool		has_sums;
	UldpPartitionSums sums;
};

/* Serialized form: this header, then per user count, sum and id */
typedef struct UldpStateHeader
{
	UldpParams	params;
	bool		key_byval;
	int16		key_typlen;
	int64		nusers;
	bool		has_sums;
	UldpPartitionSums sums;
} UldpStateHeader;

PG_FUNCTION_INFO_V1(uldp_user_transfn);
PG_FUNCTION_INFO_V1(uldp_user_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_user_sum_transfn);
PG_FUNCTION_INFO_V1(uldp_user_bool_sum_transfn);
PG_FUNCTION_INFO_V1(uldp_user_count_transfn);
PG_FUNCTION_INFO_V1(uldp_user_merge_transfn);
PG_FUNCTION_INFO_V1(uldp_user_combinefn);
PG_FUNCTION_INFO_V1(uldp_user_serialfn);
PG_FUNCTION_INFO_V1(uldp_user_deserialfn);

/* Bytes held with the table grown to "users_size" entries, plus "extra". */
static Size
state_memory(const UldpState *state, uint64 users_size, Size extra)
{
	return sizeof(UldpState) + users_size * sizeof(UldpUser) +
		state->chunk_bytes + extra;
}

/*
 * Raises the error of an aggregate that would need "bytes" of memory, over
 * uldp.max_state_memory; "hint" says how much each user or row takes.
 */
void
uldp_check_state_memory(Size bytes, const char *hint)
{
	if (bytes > (Size) uldp_max_state_memory * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("uldp aggregate state would exceed uldp.max_state_memory (%d kB)",
						uldp_max_state_memory),
				 errhint("%s; a superuser can raise uldp.max_state_memory.", hint)));
}

static void
check_memory_extra(const UldpState *state, uint64 users_size, Size extra)
{
	if (!state->bounded)
		uldp_check_state_memory(state_memory(state, users_size, extra),
								"Each user takes 27 to 53 bytes, and the release needs 34 more");
}

static void
check_memory(const UldpState *state, uint64 users_size)
{
	check_memory_extra(state, users_size, 0);
}

/*
 * The most memory a release over a protected table may need per row it
 * reads: the table's entry, at most 2 / ULDP_HASH_FILLFACTOR entries a user
 * (the table doubles when 90% full); the serialized copies of parallel
 * workers' states, one user entry per row at most; and the release's
 * working memory.
 */
double
uldp_user_state_bytes_per_row(void)
{
	return 2 / ULDP_HASH_FILLFACTOR * sizeof(UldpUser) + ULDP_SERIALIZED_USER_BYTES +
		RELEASE_BYTES_PER_USER;
}

/* The memory a state may hold whatever the rows: its table's first size. */
double
uldp_user_state_fixed_bytes(void)
{
	return sizeof(UldpState) + 2 * INITIAL_USERS / ULDP_HASH_FILLFACTOR * sizeof(UldpUser);
}

/* Asks, unless bounded before reading, whether the table may grow. */
static void
check_table_growth(void *arg, uint64 entries)
{
	check_memory((UldpState *) arg, entries);
}

static UldpState *
state_create(MemoryContext context, const UldpParams *params, bool key_byval,
			 int16 key_typlen, bool bounded, uint32 expected_users)
{
	UldpState  *state = MemoryContextAllocZero(context, sizeof(UldpState));

	state->params = *params;
	state->key_byval = key_byval;
	state->key_typlen = key_typlen;
	state->bounded = bounded;
	state->context = context;
	uldp_user_table_init(&state->table, context, expected_users,
						 check_table_growth, state);
	return state;
}

/* Merges one serialized state (uldp_user_serialfn's format, no header). */
static void
merge_chunk(UldpState *state, const char *chunk)
{
	UldpStateHeader header;

	memcpy(&header, chunk, sizeof(header));
	uldp_user_table_merge(&state->table, chunk + sizeof(header), header.nusers);
}

/*
 * Brings a state up to date: merges its serialized chunks and its buffered
 * rows.  Every reader of a state calls it first.  It does not change what
 * the state holds, only where, so final functions that call it are still
 * read-only in the sense of FINALFUNC_MODIFY.
 */
static void
state_settle(UldpState *state)
{
	ListCell   *cell;

	foreach(cell, state->chunks)
	{
		merge_chunk(state, lfirst(cell));
		pfree(lfirst(cell));
	}
	list_free(state->chunks);
	state->chunks = NIL;
	state->chunk_bytes = 0;
	uldp_user_table_flush(&state->table);
}

/*
 * uldp_user_transfn(state, value, user_id, epsilon [, lower, upper [, tau]])
 *
 * Rows with a NULL user id, a NULL value, a NaN or a user id longer than
 * ULDP_MAX_ID_BYTES are skipped; infinite values and values outside the
 * bounds are clamped to the bounds (to +-ULDP_MAX_MAGNITUDE without
 * bounds).  Nothing here depends on other rows, raises a data-dependent
 * error or emits a notice.
 */
/*
 * The state a transition function starts with, on its first row: the user id
 * is argument "user_arg", the privacy parameters follow it.  Counts read
 * only epsilon: what follows it (partition selection's delta) is not a bound.
 */
static UldpState *
transition_state(FunctionCallInfo fcinfo, int user_arg, bool epsilon_only)
{
	MemoryContext aggcontext;
	UldpParams	params;
	int16		typlen;
	bool		typbyval;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		uldp_refuse_window(fcinfo);
	if (epsilon_only)
		uldp_params_set(&params, 1, &PG_GETARG_DATUM(user_arg + 1), &PG_ARGISNULL(user_arg + 1));
	else
		uldp_params_from_args(fcinfo, user_arg + 1, &params);
	get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, user_arg), &typlen, &typbyval);
	return state_create(aggcontext, &params, typbyval, typlen,
						uldp_release_bounded(fcinfo), INITIAL_USERS);
}

/*
 * Adds one row's value to its user.  NaN values, NULL ids and ids longer
 * than ULDP_MAX_ID_BYTES are skipped.  user_dp_mean clamps each row to the
 * bounds (its user contributes the average of clamped rows); user_dp_sum
 * clamps only each user's total, in the final function, so its rows are
 * kept whole (within +-ULDP_MAX_MAGNITUDE).
 */
static Datum
add_row(FunctionCallInfo fcinfo, double value, bool clamp_rows)
{
	UldpState  *state = PG_ARGISNULL(0) ? transition_state(fcinfo, 2, false) :
		(UldpState *) PG_GETARG_POINTER(0);
	uint64		id;

	if (PG_ARGISNULL(2) || isnan(value) ||
		!uldp_user_key(PG_GETARG_DATUM(2), state->key_byval, state->key_typlen, &id))
		PG_RETURN_POINTER(state);
	if (clamp_rows)
		value = Min(Max(value, state->params.lower), state->params.upper);
	else
		value = Min(Max(value, -ULDP_MAX_MAGNITUDE), ULDP_MAX_MAGNITUDE);

	uldp_user_table_add(&state->table, id, value, 1);
	PG_RETURN_POINTER(state);
}

/* uldp_user_transfn(state, value float8, user_id, epsilon [, ...]) */
Datum
uldp_user_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), true);
}

/* uldp_user_bool_transfn(state, value boolean, user_id, epsilon [, ...]) */
Datum
uldp_user_bool_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, true);
}

/* uldp_user_sum_transfn(state, value float8, user_id, epsilon [, ...]) */
Datum
uldp_user_sum_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_FLOAT8(1), false);
}

/* uldp_user_bool_sum_transfn(state, value boolean, user_id, epsilon [, ...]) */
Datum
uldp_user_bool_sum_transfn(PG_FUNCTION_ARGS)
{
	return add_row(fcinfo, PG_ARGISNULL(1) ? NAN : PG_GETARG_BOOL(1) ? 1 : 0, false);
}

/*
 * uldp_user_count_transfn(state, user_id, epsilon): the transition of
 * user_dp_count, whose only per-user fact is that the user has a row.  Rows
 * with a NULL user id, or one longer than ULDP_MAX_ID_BYTES, are skipped.
 */
Datum
uldp_user_count_transfn(PG_FUNCTION_ARGS)
{
	UldpState  *state = PG_ARGISNULL(0) ? transition_state(fcinfo, 1, true) :
		(UldpState *) PG_GETARG_POINTER(0);
	uint64		id;

	if (!PG_ARGISNULL(1) &&
		uldp_user_key(PG_GETARG_DATUM(1), state->key_byval, state->key_typlen, &id))
		uldp_user_table_add(&state->table, id, 0, 1);
	PG_RETURN_POINTER(state);
}

/* Adds one partition's sums (or a partial state's) to a state's. */
static void
add_sums(UldpState *state, const UldpPartitionSums *sums)
{
	if (!state->has_sums)
	{
		state->sums = *sums;
		state->has_sums = true;
		return;
	}
	if (sums->average != state->sums.average ||
		!uldp_fixed_sum_same_grid(&sums->sum, &state->sums.sum))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partitions' sums clipped to different bounds cannot be added"),
				 errhint("Pass the same bounds to uldp_shard.user_sums on every shard.")));
	state->sums.users += sums->users;
	state->sums.sum.sum += sums->sum.sum;
}

/*
 * uldp_user_merge_transfn(state, shard_state bytea, user_id, epsilon [, ...]):
 * the transition of the releases over shards (doc/scale-out.md).  Each
 * input is one partition's per-user state, made by uldp_shard.user_rows
 * with the release's own clamping of rows, so merging them (a user found in
 * two is one user) gives the state the local transition function would have
 * made from the same rows.  user_id is a NULL of the table's user id type:
 * a state keyed by another type (another byte order, version, or id type)
 * is refused, whatever its users; a NULL state adds nothing.  An input may
 * instead be a partition's sums (uldp_shard.user_sums), from shards that
 * keep only their own users: they add up, and the state holds only them.
 */
Datum
uldp_user_merge_transfn(PG_FUNCTION_ARGS)
{
	UldpState  *state = PG_ARGISNULL(0) ? transition_state(fcinfo, 2, false) :
		(UldpState *) PG_GETARG_POINTER(0);
	UldpTableHeader header;
	UldpPartitionSums sums;
	const char *users;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	if (uldp_partition_sums_from_bytea(PG_GETARG_BYTEA_PP(1), &sums))
	{
		header.key_byval = sums.key_byval;
		header.key_typlen = sums.key_typlen;
		users = NULL;
	}
	else
		users = uldp_user_table_read_header(PG_GETARG_BYTEA_PP(1), &header);
	if (header.key_byval != state->key_byval || header.key_typlen != state->key_typlen)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("per-user state keyed by another user id type"),
				 errhint("Make the shards' user id column the same type as the coordinator's.")));
	if (users == NULL)
		add_sums(state, &sums);
	else
		uldp_user_table_merge(&state->table, users, header.nusers);
	PG_RETURN_POINTER(state);
}

Datum
uldp_user_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpState  *state1 = PG_ARGISNULL(0) ? NULL : (UldpState *) PG_GETARG_POINTER(0);
	UldpState  *state2 = PG_ARGISNULL(1) ? NULL : (UldpState *) PG_GETARG_POINTER(1);

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_combinefn called in non-aggregate context");
	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	/* deserialized states live in the aggregate context: adopt the first */
	if (state1 == NULL)
		PG_RETURN_POINTER(state2);

	/* serialized chunks are merged later, all at once */
	if (state2->chunks != NIL)
	{
		MemoryContext old_context = MemoryContextSwitchTo(state1->context);

		state1->chunks = list_concat(state1->chunks, state2->chunks);
		state1->chunk_bytes += state2->chunk_bytes;
		MemoryContextSwitchTo(old_context);
		state2->chunks = NIL;
		state2->chunk_bytes = 0;
	}
	uldp_user_table_flush(&state2->table);
	uldp_user_table_add_table(&state1->table, &state2->table);
	if (state2->has_sums)
		add_sums(state1, &state2->sums);
	PG_RETURN_POINTER(state1);
}

Datum
uldp_user_serialfn(PG_FUNCTION_ARGS)
{
	UldpState  *state = (UldpState *) PG_GETARG_POINTER(0);
	UldpStateHeader header;
	Size		size = VARHDRSZ + sizeof(UldpStateHeader);
	bytea	   *result;
	char	   *cursor;

	state_settle(state);
	size += uldp_user_table_serialized_bytes(&state->table);
	result = palloc_extended(size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(result, size);
	memset(&header, 0, sizeof(header));
	header.params = state->params;
	header.key_byval = state->key_byval;
	header.key_typlen = state->key_typlen;
	header.nusers = uldp_user_table_users(&state->table);
	header.has_sums = state->has_sums;
	header.sums = state->sums;
	cursor = VARDATA(result);
	memcpy(cursor, &header, sizeof(header));
	cursor += sizeof(header);

	cursor = uldp_user_table_write(&state->table, cursor);
	Assert(cursor == (char *) result + size);
	PG_RETURN_BYTEA_P(result);
}

/*
 * Keeps a copy of the serialized state: the users are merged into a table
 * only when the state is read (state_settle), once for all the partial
 * states that the leader combines, instead of once per partial state.
 */
Datum
uldp_user_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	Size		size = VARSIZE_ANY_EXHDR(serialized);
	MemoryContext aggcontext;
	MemoryContext old_context;
	UldpStateHeader header;
	UldpState  *state;
	char	   *chunk;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_deserialfn called in non-aggregate context");
	memcpy(&header, VARDATA_ANY(serialized), sizeof(header));
	state = state_create(aggcontext, &header.params, header.key_byval,
						 header.key_typlen, uldp_release_bounded(fcinfo), INITIAL_USERS);
	state->chunk_bytes = size;
	state->has_sums = header.has_sums;
	state->sums = header.sums;
	check_memory(state, state->table.users->size);
	chunk = MemoryContextAllocHuge(aggcontext, size);
	memcpy(chunk, VARDATA_ANY(serialized), size);
	old_context = MemoryContextSwitchTo(aggcontext);
	state->chunks = list_make1(chunk);
	MemoryContextSwitchTo(old_context);
	PG_RETURN_POINTER(state);
}

/*
 * The shards' sums a state merged, or NULL if it holds users.  A state
 * that merged both is refused: no rewrite makes one.
 */
const UldpPartitionSums *
uldp_state_partition_sums(UldpState *state)
{
	state_settle(state);
	if (!state->has_sums)
		return NULL;
	if (uldp_user_table_users(&state->table) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a release cannot merge both per-user states and partitions' sums"),
				 errhint("Merge the states of uldp_shard.user_rows or the sums of uldp_shard.user_sums, not both.")));
	return &state->sums;
}

/* The number of distinct users in a state. */
int64
uldp_state_users(UldpState *state)
{
	const UldpPartitionSums *sums = uldp_state_partition_sums(state);

	return sums != NULL ? sums->users : uldp_user_table_users(&state->table);
}

/*
 * Each user's value, clamped to the parameters' bounds: the average of its
 * rows, or their total.  A sum can overflow only when bounds are absent and
 * a user has rows near ULDP_MAX_MAGNITUDE; such a value is clamped like any
 * other (a NaN from +Inf + -Inf partial sums becomes 0): the mechanisms
 * only rely on every user's value lying within the bounds.  A user with
 * more than 2^32 - 1 rows had its sum halved (user_add), which keeps its
 * average but halves its total: a total so large is clipped anyway.
 */
static double *
user_values(UldpState *state, int64 *nusers, bool average)
{
	double	   *values;
	users_iterator iterator;
	UldpUser   *user;
	int64		n = 0;

	state_settle(state);
	/* the release needs the values and, in range.c, up to three more
	 * arrays of 8 bytes and two bytes of segments per user */
	check_memory_extra(state, state->table.users->size,
					   (Size) uldp_user_table_users(&state->table) * RELEASE_BYTES_PER_USER);
	values = palloc_extended(Max(uldp_user_table_users(&state->table), 1) * sizeof(double),
							 MCXT_ALLOC_HUGE);

	users_start_iterate(state->table.users, &iterator);
	while ((user = users_iterate(state->table.users, &iterator)) != NULL)
	{
		double		value = average ? user->sum / (double) user->count : user->sum;

		if (isnan(value))
			value = 0;
		values[n++] = Min(Max(value, state->params.lower), state->params.upper);
	}
	*nusers = n;
	return values;
}

double *
uldp_state_user_means(UldpState *state, int64 *nusers)
{
	return user_values(state, nusers, true);
}

double *
uldp_state_user_totals(UldpState *state, int64 *nusers)
{
	return user_values(state, nusers, false);
}

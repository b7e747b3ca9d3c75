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
 * Serialized partial states (parallel workers', shards') are kept as they
 * are, as runs of users, until the state is read: the reader then merges
 * them all at once, a partition of users at a time (usermerge.c), instead
 * of inserting each into one table of all users, a cache miss per user in
 * the serial part of the plan, and growing that table.  A run whose users
 * are mostly in the combined state's table already (a parallel plan's
 * processes all meet nearly every user of an ungrouped release) is added
 * to it instead, when the table holds them without growing: a prefetched
 * lookup per user, where keeping it would have the reader write the table
 * out as a run too.  The leader's own partial state is handed over
 * (handover.c), with its table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/lsyscache.h"

#include "fixedsum.h"
#include "groupcalls.h"
#include "handover.h"
#include "partvalues.h"
#include "sharedpass.h"
#include "statement.h"
#include "usermerge.h"
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
	/* serialized users not merged yet (UldpUserRun, see the file's head) */
	List	   *runs;
	Size		run_bytes;
	/* deserialized: its runs are the value it was read from, not copies */
	bool		borrowed;
	/* that value, when a worker passed it in shared memory */
	UldpPassed	passed;
	/* a grouped release's: the users registered in its group, else -1 */
	int64		group_users;
	/* shards' sums merged instead of users (uldp_user_merge_transfn) */
	bool		has_sums;
	UldpPartitionSums sums;
	/* or their users' sorted values (UldpPartitionValues *), in run_bytes */
	List	   *partition_values;
};

/*
 * Serialized form: this header, then per user count, sum and id, then the
 * shards' values merged into one sorted run
 */
typedef struct UldpStateHeader
{
	uint32		magic;			/* STATE_MAGIC, never ULDP_PASS_MAGIC */
	UldpParams	params;
	bool		key_byval;
	int16		key_typlen;
	int64		nusers;
	bool		has_sums;
	UldpPartitionSums sums;
	int64		nvalues;		/* -1: a state without shards' values */
	bool		values_average;
} UldpStateHeader;

#define STATE_MAGIC 0x554c5331	/* "ULS1" */

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
		state->run_bytes + extra;
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
 * (the table doubles when 90% full), or, reading kept runs, the merge's
 * (usermerge.c: a user and at most two int32 slots per serialized user of
 * a partition, fewer bytes); the serialized copies of parallel workers'
 * states, one user entry per row at most; and the release's working
 * memory.
 */
double
uldp_user_state_bytes_per_row(void)
{
	return 2 / ULDP_HASH_FILLFACTOR * sizeof(UldpUser) + ULDP_SERIALIZED_USER_BYTES +
		RELEASE_BYTES_PER_USER;
}

/*
 * The memory a state may hold whatever the rows: its table's first size (a
 * grouped release's table, when it first grows, may grow at once to its
 * group's users, or half of them in each process of a parallel plan, memory
 * that the rows of those users account for: every process's bound counts
 * all the rows it could read).
 */
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
	state->group_users = -1;
	uldp_user_table_init(&state->table, context, expected_users,
						 check_table_growth, state);
	return state;
}

/*
 * A copy of "bytes" bytes of "source" in the state's context, counted in
 * its memory: what it keeps of an input until it is read.
 */
static char *
keep_bytes(UldpState *state, const char *source, Size bytes)
{
	char	   *copy;

	state->run_bytes += bytes;
	check_memory(state, state->table.users->size);
	copy = MemoryContextAllocExtended(state->context, Max(bytes, 1), MCXT_ALLOC_HUGE);
	if (bytes > 0)
		memcpy(copy, source, bytes);
	return copy;
}

/*
 * Keeps a copy of "nusers" serialized users, to be merged when the state is
 * read.
 */
static void
keep_run(UldpState *state, const char *users, int64 nusers)
{
	UldpUserRun *run = MemoryContextAlloc(state->context, sizeof(UldpUserRun));
	MemoryContext old_context;

	run->users = keep_bytes(state, users, nusers * ULDP_SERIALIZED_USER_BYTES);
	run->nusers = nusers;
	old_context = MemoryContextSwitchTo(state->context);
	state->runs = lappend(state->runs, run);
	MemoryContextSwitchTo(old_context);
}

/*
 * Keeps "nusers" serialized users of the value a state is deserialized
 * from, without copying them: the combine function, called on the state
 * while the value lasts, adds them to its table or copies them
 * (own_runs).
 */
static void
borrow_run(UldpState *state, const char *users, int64 nusers)
{
	UldpUserRun *run = MemoryContextAlloc(state->context, sizeof(UldpUserRun));
	MemoryContext old_context = MemoryContextSwitchTo(state->context);

	run->users = users;
	run->nusers = nusers;
	state->runs = lappend(state->runs, run);
	state->borrowed = true;
	MemoryContextSwitchTo(old_context);
}

/*
 * Copies the runs of a state that borrowed them (uldp_user_deserialfn), so
 * that it keeps them after the value they were read from is gone.
 */
static void
own_runs(UldpState *state)
{
	ListCell   *cell;

	if (!state->borrowed)
		return;
	foreach(cell, state->runs)
	{
		UldpUserRun *run = lfirst(cell);

		run->users = keep_bytes(state, run->users, run->nusers * ULDP_SERIALIZED_USER_BYTES);
	}
	state->borrowed = false;
}

/*
 * Whether the partitions' values are averages (or totals): all of them
 * alike, or the state is refused.
 */
static bool
partition_values_average(List *partitions)
{
	bool		average = ((UldpPartitionValues *) linitial(partitions))->average;
	ListCell   *cell;

	foreach(cell, partitions)
		if (((UldpPartitionValues *) lfirst(cell))->average != average)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a release cannot merge partitions' averages and totals"),
					 errhint("Pass the same average argument to uldp_shard.user_values on every shard.")));
	return average;
}

/*
 * Keeps a copy of a partition's sorted values, to be merged with the
 * others' when the state is read.
 */
static void
keep_values(UldpState *state, const UldpPartitionValues *partition)
{
	UldpPartitionValues *copy = MemoryContextAlloc(state->context, sizeof(UldpPartitionValues));
	MemoryContext old_context;

	*copy = *partition;
	copy->values = keep_bytes(state, partition->values, partition->users * sizeof(double));
	old_context = MemoryContextSwitchTo(state->context);
	state->partition_values = lappend(state->partition_values, copy);
	MemoryContextSwitchTo(old_context);
}

/* The users a state holds, counting a user in two runs twice. */
static int64
state_entries(UldpState *state)
{
	int64		entries;
	ListCell   *cell;

	uldp_user_table_flush(&state->table);
	entries = uldp_user_table_users(&state->table);
	foreach(cell, state->runs)
		entries += ((UldpUserRun *) lfirst(cell))->nusers;
	return entries;
}

/*
 * A reading of a state's distinct users, each once with all its rows: its
 * table's, or, when it kept runs, the merge of its table's users with
 * them.
 */
typedef struct StateReader
{
	UldpState  *state;
	bool		merging;
	users_iterator iterator;
	UldpUserRun *runs;
	UldpUserMerge merge;
} StateReader;

/*
 * Starts reading a state.  Unless the state was bounded before reading,
 * checks that the reading's memory, and "extra" bytes per user entry on
 * top, fit in the limit.  It does not change what the state holds, so
 * final functions that read it are read-only in the sense of
 * FINALFUNC_MODIFY.
 */
static void
reader_begin(StateReader *reader, UldpState *state, Size extra)
{
	int64		entries = state_entries(state);
	int64		table_users = uldp_user_table_users(&state->table);
	int			nruns = 0;
	ListCell   *cell;

	reader->state = state;
	reader->merging = state->runs != NIL;
	if (!reader->merging)
	{
		check_memory_extra(state, state->table.users->size, entries * extra);
		users_start_iterate(state->table.users, &reader->iterator);
		return;
	}
	check_memory_extra(state, state->table.users->size,
					   entries * extra + table_users * ULDP_SERIALIZED_USER_BYTES);
	reader->runs = palloc((list_length(state->runs) + 1) * sizeof(UldpUserRun));
	if (table_users > 0)
	{
		char	   *users = palloc_extended(table_users * ULDP_SERIALIZED_USER_BYTES,
											MCXT_ALLOC_HUGE);

		uldp_user_table_write(&state->table, users);
		reader->runs[nruns].users = users;
		reader->runs[nruns++].nusers = table_users;
	}
	foreach(cell, state->runs)
		reader->runs[nruns++] = *(UldpUserRun *) lfirst(cell);
	uldp_user_merge_begin(&reader->merge, reader->runs, nruns);
	check_memory_extra(state, state->table.users->size,
					   entries * extra + table_users * ULDP_SERIALIZED_USER_BYTES +
					   reader->merge.working_bytes);
}

/* The next distinct user, or NULL after the last. */
static UldpUser *
reader_next(StateReader *reader)
{
	if (reader->merging)
		return uldp_user_merge_next(&reader->merge);
	return users_iterate(reader->state->table.users, &reader->iterator);
}

static void
reader_end(StateReader *reader)
{
	if (!reader->merging)
		return;
	uldp_user_merge_end(&reader->merge);
	if (uldp_user_table_users(&reader->state->table) > 0)
		pfree((char *) reader->runs[0].users);
	pfree(reader->runs);
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
	UldpState  *state;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		uldp_refuse_window(fcinfo);
	if (epsilon_only)
		uldp_params_set(&params, 1, &PG_GETARG_DATUM(user_arg + 1), &PG_ARGISNULL(user_arg + 1));
	else
		uldp_params_from_args(fcinfo, user_arg + 1, &params);
	get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, user_arg), &typlen, &typbyval);
	state = state_create(aggcontext, &params, typbyval, typlen, uldp_release_bounded(fcinfo),
						 INITIAL_USERS);

	/*
	 * A group's table grows at once to the size its users, counted at
	 * registration, need, but only when it first grows: a table that took
	 * that memory on the group's first row would put a hashed GROUP BY past
	 * its memory limit before it had met the other groups, and it would
	 * write their rows to disk and read them again, group by group.
	 */
	state->group_users = uldp_group_member_users(fcinfo, user_arg);

	/*
	 * A parallel plan's partial aggregate expects half of them: each of its
	 * two or more processes reads part of the rows, so part of the group's
	 * users (most of them when their rows are spread over the table), and
	 * their tables together grow at once to at most the size the serial
	 * plan's ends at.
	 */
	uldp_user_table_expect(&state->table,
						   state->group_users >= 0 &&
						   DO_AGGSPLIT_SKIPFINAL(AggGetAggref(fcinfo)->aggsplit) ?
						   state->group_users / 2 : state->group_users);
	return state;
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
 * Replaces a state's table by a run of its users: a state that keeps runs
 * has its table written out as one when it is read anyway (reader_begin).
 */
static void
write_out_table(UldpState *state)
{
	int64		nusers = state_entries(state);
	UldpUserRun *run = MemoryContextAlloc(state->context, sizeof(UldpUserRun));
	MemoryContext old_context;
	char	   *users;

	state->run_bytes += nusers * ULDP_SERIALIZED_USER_BYTES;
	check_memory(state, state->table.users->size);
	users = MemoryContextAllocExtended(state->context, Max(nusers, 1) * ULDP_SERIALIZED_USER_BYTES,
									   MCXT_ALLOC_HUGE);
	uldp_user_table_write_out(&state->table, users);
	run->users = users;
	run->nusers = nusers;
	old_context = MemoryContextSwitchTo(state->context);
	state->runs = lappend(state->runs, run);
	MemoryContextSwitchTo(old_context);
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
	UldpPartitionValues values;
	bool		is_sums = false;
	bool		is_values = false;
	const char *users = NULL;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	if (uldp_partition_sums_from_bytea(PG_GETARG_BYTEA_PP(1), &sums))
	{
		is_sums = true;
		header.key_byval = sums.key_byval;
		header.key_typlen = sums.key_typlen;
	}
	else if (uldp_partition_values_from_bytea(PG_GETARG_BYTEA_PP(1), &values))
	{
		is_values = true;
		header.key_byval = values.key_byval;
		header.key_typlen = values.key_typlen;
	}
	else
		users = uldp_user_table_read_header(PG_GETARG_BYTEA_PP(1), &header);
	if (header.key_byval != state->key_byval || header.key_typlen != state->key_typlen)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("per-user state keyed by another user id type"),
				 errhint("Make the shards' user id column the same type as the coordinator's.")));
	if (is_sums)
		add_sums(state, &sums);
	else if (is_values)
		keep_values(state, &values);
	else
		keep_run(state, users, header.nusers);
	PG_RETURN_POINTER(state);
}

Datum
uldp_user_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpState  *state1 = PG_ARGISNULL(0) ? NULL : (UldpState *) PG_GETARG_POINTER(0);
	UldpState  *state2 = PG_ARGISNULL(1) ? NULL : (UldpState *) PG_GETARG_POINTER(1);
	ListCell   *cell;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_combinefn called in non-aggregate context");
	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	/*
	 * Deserialized states live in the aggregate context, and handed-over
	 * ones as long as it needs them: adopt the first.
	 */
	if (state1 == NULL)
	{
		own_runs(state2);
		uldp_pass_release(&state2->passed);
		PG_RETURN_POINTER(state2);
	}
	/* the users of the smaller table go into the larger (a handed-over one) */
	uldp_user_table_flush(&state1->table);
	uldp_user_table_flush(&state2->table);
	if (uldp_user_table_users(&state2->table) > uldp_user_table_users(&state1->table))
	{
		UldpState  *larger = state2;

		state2 = state1;
		state1 = larger;
	}
	own_runs(state1);

	/*
	 * A run that the larger table holds without growing (most of its users
	 * are in it already, as when a parallel plan's processes all see nearly
	 * every user) is added to it now, a prefetched lookup per user, and a
	 * borrowed one is never copied; the others are kept, and merged when
	 * the state is read, all at once.
	 */
	foreach(cell, state2->runs)
	{
		UldpUserRun *run = lfirst(cell);
		Size		bytes = run->nusers * ULDP_SERIALIZED_USER_BYTES;
		MemoryContext old_context;

		if (uldp_user_table_merge_fits(&state1->table, run->users, run->nusers))
		{
			uldp_user_table_merge(&state1->table, run->users, run->nusers);
			if (!state2->borrowed)
			{
				pfree((char *) run->users);
				state2->run_bytes -= bytes;
			}
			continue;
		}
		/*
		 * The larger table is written out as a run now, not when the state
		 * is read: in a hashed final aggregation the next worker's state
		 * is still on its way (a grouped release's groups come one by one)
		 */
		if (state1->runs == NIL && uldp_user_table_users(&state1->table) > 0)
			write_out_table(state1);
		if (state2->borrowed)
			run->users = keep_bytes(state1, run->users, bytes);
		else
		{
			state1->run_bytes += bytes;
			state2->run_bytes -= bytes;
		}
		old_context = MemoryContextSwitchTo(state1->context);
		state1->runs = lappend(state1->runs, run);
		MemoryContextSwitchTo(old_context);
	}
	state2->runs = NIL;
	state2->borrowed = false;
	uldp_pass_release(&state2->passed);
	if (state2->partition_values != NIL)
	{
		MemoryContext old_context = MemoryContextSwitchTo(state1->context);

		state1->partition_values = list_concat(state1->partition_values,
											   state2->partition_values);
		state1->run_bytes += state2->run_bytes;
		MemoryContextSwitchTo(old_context);
		state2->partition_values = NIL;
		state2->run_bytes = 0;
	}
	uldp_user_table_add_table(&state1->table, &state2->table);
	if (state2->has_sums)
		add_sums(state1, &state2->sums);
	PG_RETURN_POINTER(state1);
}

/*
 * A state's users, in partition order: its table's, or, when it kept runs,
 * their merge with them; then the shards' values it kept, merged into one
 * sorted run (nvalues -1: none kept); a worker's large state is written
 * into shared memory (sharedpass.c).  In the leader, whose final
 * aggregation combines it, a state is handed over instead (handover.c).
 */
Datum
uldp_user_serialfn(PG_FUNCTION_ARGS)
{
	UldpState  *state = (UldpState *) PG_GETARG_POINTER(0);
	List	   *partitions = state->partition_values;
	UldpStateHeader header;
	int64		entries;
	int64		nvalues = 0;
	double	   *values = NULL;
	bytea	   *result;
	char	   *users;
	char	   *cursor;

	if (uldp_can_hand_over(fcinfo))
		PG_RETURN_BYTEA_P(uldp_hand_over(state, state->context));
	entries = state_entries(state);
	memset(&header, 0, sizeof(header));
	header.magic = STATE_MAGIC;
	header.nvalues = -1;
	if (partitions != NIL)
	{
		header.values_average = partition_values_average(partitions);
		values = uldp_merge_partition_values(partitions, &nvalues);
		header.nvalues = nvalues;
	}
	result = uldp_pass_alloc(fcinfo, VARHDRSZ + sizeof(header) +
							 entries * ULDP_SERIALIZED_USER_BYTES + nvalues * sizeof(double));
	users = VARDATA(result) + sizeof(header);
	if (state->runs == NIL)
		cursor = uldp_user_table_write(&state->table, users);
	else
	{
		StateReader reader;
		UldpUser   *user;

		reader_begin(&reader, state, 0);
		cursor = users;
		while ((user = reader_next(&reader)) != NULL)
		{
			uldp_user_entry_write(cursor, user);
			cursor += ULDP_SERIALIZED_USER_BYTES;
		}
		reader_end(&reader);
	}
	header.nusers = (cursor - users) / ULDP_SERIALIZED_USER_BYTES;
	if (values != NULL)
	{
		memcpy(cursor, values, nvalues * sizeof(double));
		cursor += nvalues * sizeof(double);
		pfree(values);
	}
	SET_VARSIZE(result, cursor - (char *) result);
	header.params = state->params;
	header.key_byval = state->key_byval;
	header.key_typlen = state->key_typlen;
	header.has_sums = state->has_sums;
	header.sums = state->sums;
	memcpy(VARDATA(result), &header, sizeof(header));
	PG_RETURN_BYTEA_P(uldp_pass_finish(fcinfo, result));
}

/*
 * Reads a serialized state, borrowing its users (borrow_run): the combine
 * function adds them to its table, or keeps a copy, merged only when the
 * state is read, once for all the partial states that the leader
 * combines.  A handed-over state is taken as it is.
 */
Datum
uldp_user_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	MemoryContext aggcontext;
	UldpStateHeader header;
	UldpState  *state;
	UldpPassed	passed;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_deserialfn called in non-aggregate context");
	state = uldp_take_handed_over(serialized);
	if (state != NULL)
		PG_RETURN_POINTER(state);
	serialized = uldp_pass_open(fcinfo, serialized, &passed);
	memcpy(&header, VARDATA_ANY(serialized), sizeof(header));
	if (header.magic != STATE_MAGIC)
		elog(ERROR, "uldp_user_deserialfn received a value that is not a user state");
	state = state_create(aggcontext, &header.params, header.key_byval,
						 header.key_typlen, uldp_release_bounded(fcinfo), INITIAL_USERS);
	state->has_sums = header.has_sums;
	state->sums = header.sums;
	state->passed = passed;
	borrow_run(state, VARDATA_ANY(serialized) + sizeof(header), header.nusers);
	if (header.nvalues >= 0)
	{
		UldpPartitionValues values;

		values.users = header.nvalues;
		values.average = header.values_average;
		values.key_byval = header.key_byval;
		values.key_typlen = header.key_typlen;
		values.lower = header.params.lower;
		values.upper = header.params.upper;
		values.values = VARDATA_ANY(serialized) + sizeof(header) +
			header.nusers * ULDP_SERIALIZED_USER_BYTES;
		keep_values(state, &values);
	}
	PG_RETURN_POINTER(state);
}

/*
 * The shards' sums a state merged, or NULL if it holds users.  A state
 * that merged sums and anything else is refused: no rewrite makes one.
 */
const UldpPartitionSums *
uldp_state_partition_sums(UldpState *state)
{
	if (!state->has_sums)
		return NULL;
	if (state_entries(state) > 0 || state->partition_values != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a release cannot merge both per-user states and partitions' sums"),
				 errhint("Merge the states of uldp_shard.user_rows or the sums of uldp_shard.user_sums, not both.")));
	return &state->sums;
}

/*
 * The shards' sorted values a state merged, or NIL if it holds users; a
 * state with both is refused, as above.
 */
static List *
state_partition_values(UldpState *state)
{
	if (state->partition_values != NIL && state_entries(state) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a release cannot merge both per-user states and partitions' values"),
				 errhint("Merge the states of uldp_shard.user_rows or the values of uldp_shard.user_values, not both.")));
	return state->partition_values;
}

/* The number of distinct users in a state. */
int64
uldp_state_users(UldpState *state)
{
	const UldpPartitionSums *sums = uldp_state_partition_sums(state);
	List	   *partitions = state_partition_values(state);
	StateReader reader;
	ListCell   *cell;
	int64		n = 0;

	if (sums != NULL)
		return sums->users;
	foreach(cell, partitions)
		n += ((UldpPartitionValues *) lfirst(cell))->users;
	if (partitions != NIL)
		return n;
	if (state->runs == NIL)
		return state_entries(state);
	reader_begin(&reader, state, 0);
	while (reader_next(&reader) != NULL)
		n++;
	reader_end(&reader);
	return n;
}

/*
 * The shards' values merged into one ascending array: the same values,
 * clamped to the release's bounds, as the users' would be.  The shards
 * finished each user's value as an average or a total; a state of the
 * other kind is refused.
 */
static double *
merged_partition_values(UldpState *state, List *partitions, int64 *nusers, bool average)
{
	ListCell   *cell;
	double	   *values;
	int64		total = 0;

	if (partition_values_average(partitions) != average)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partitions' values are %s, the release needs %s",
						average ? "totals" : "averages", average ? "averages" : "totals"),
				 errhint("Pass average => %s to uldp_shard.user_values.", average ? "true" : "false")));
	foreach(cell, partitions)
		total += ((UldpPartitionValues *) lfirst(cell))->users;
	check_memory_extra(state, state->table.users->size, total * RELEASE_BYTES_PER_USER);
	values = uldp_merge_partition_values(partitions, nusers);
	/* clamping is monotone: the values stay sorted */
	for (int64 i = 0; i < *nusers; i++)
		values[i] = Min(Max(values[i], state->params.lower), state->params.upper);
	return values;
}

/*
 * Each user's value, clamped to the parameters' bounds: the average of its
 * rows, or their total.  A sum can overflow only when bounds are absent and
 * a user has rows near ULDP_MAX_MAGNITUDE; such a value is clamped like any
 * other (a NaN from +Inf + -Inf partial sums becomes 0): the mechanisms
 * only rely on every user's value lying within the bounds.  A user with
 * more than 2^32 - 1 rows had its sum halved (uldp_user_add_rows), which
 * keeps its average but halves its total: a total so large is clipped
 * anyway.  *sorted: whether the values come in ascending order (from
 * shards' sorted values).
 */
static double *
user_values(UldpState *state, int64 *nusers, bool average, bool *sorted)
{
	List	   *partitions = state_partition_values(state);
	StateReader reader;
	double	   *values;
	UldpUser   *user;
	int64		n = 0;

	*sorted = partitions != NIL;
	if (partitions != NIL)
		return merged_partition_values(state, partitions, nusers, average);
	/* the release needs the values and, in range.c, up to three more
	 * arrays of 8 bytes and two bytes of segments per user */
	reader_begin(&reader, state, RELEASE_BYTES_PER_USER);
	values = palloc_extended(Max(state_entries(state), 1) * sizeof(double),
							 MCXT_ALLOC_HUGE);
	while ((user = reader_next(&reader)) != NULL)
	{
		double		value = average ? user->sum / (double) user->count : user->sum;

		if (isnan(value))
			value = 0;
		values[n++] = Min(Max(value, state->params.lower), state->params.upper);
	}
	reader_end(&reader);
	*nusers = n;
	return values;
}

double *
uldp_state_user_means(UldpState *state, int64 *nusers, bool *sorted)
{
	return user_values(state, nusers, true, sorted);
}

double *
uldp_state_user_totals(UldpState *state, int64 *nusers, bool *sorted)
{
	return user_values(state, nusers, false, sorted);
}

/*-------------------------------------------------------------------------
 *
 * quantstate.c
 *	  Transition, combine, serialize and deserialize functions of
 *	  user_dp_quantile.
 *
 * Each row of a user with r rows weighs 1/r, and r is only known once every
 * partial state has been combined, so the state keeps every row: its user's
 * key (uldp_user_key, as in userstate.c) and its value, 16 bytes.  The final
 * function (quantile.c) groups them.  Combining two states links the second
 * one's rows to the first without copying them, and the release does not
 * depend on how parallel workers split the rows (the final function sorts
 * them).  The leader's own partial state is handed to its final
 * aggregation as it is (handover.c), not serialized.
 *
 * Rows with a NULL value, a NULL user id, a NaN or a user id longer than
 * ULDP_MAX_ID_BYTES are skipped; infinite values are kept, and clamped to the
 * bounds by the final function.  Nothing here depends on other rows, raises a
 * data-dependent error or emits a notice.
 *
 * Memory.  As for the other releases (userstate.c): a release over a
 * protected table had its worst case, uldp_quantile_state_bytes_per_row()
 * a row the table can hold, checked against uldp.max_state_memory before
 * reading (statement.c), and checks nothing while it reads, since an error
 * then would depend on the rows.  Other releases, whose callers may read the
 * rows anyway, check the limit before every growth.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"

#include "handover.h"
#include "params.h"
#include "quantstate.h"
#include "sharedpass.h"
#include "statement.h"
#include "userstate.h"

/* rows the first array holds: 16 kB */
#define INITIAL_ROWS 1024
/*
 * The most rows a release may read: the exponential mechanism takes at most
 * 2^36 segments (noise.c), and there are at most two per row and one more.
 * A release over protected tables reads at most 2^31 rows (statement.c).
 */
#define MAX_RELEASE_ROWS ((INT64CONST(1) << 35) - 1)

/* the rows of a state combined into another one */
typedef struct QuantilePart
{
	UldpQuantileRow *rows;
	int64		nrows;
} QuantilePart;

struct UldpQuantileState
{
	bool		key_byval;
	int16		key_typlen;
	bool		bounded;		/* memory bounded before reading: no checks */
	MemoryContext context;
	UldpQuantileRow *rows;		/* this state's own rows */
	int64		nrows;
	int64		capacity;
	List	   *parts;			/* QuantilePart *: the rows of combined states */
	int64		part_rows;
	Size		part_bytes;		/* the memory of the combined states */
};

/* Serialized form: this header, then the rows */
typedef struct QuantileStateHeader
{
	bool		key_byval;
	int16		key_typlen;
	int64		nrows;
} QuantileStateHeader;

/*
 * The memory of a state besides its rows, when it is a parallel partial
 * state: the state, its serialized header, the part that links it to the
 * leader's state, and the allocations' headers and list cells.
 */
#define STATE_OVERHEAD 512
StaticAssertDecl(sizeof(UldpQuantileState) + sizeof(QuantileStateHeader) +
				 sizeof(QuantilePart) + VARHDRSZ <= STATE_OVERHEAD / 2,
				 "half of STATE_OVERHEAD leaves room for allocation headers and list cells");

PG_FUNCTION_INFO_V1(uldp_quantile_transfn);
PG_FUNCTION_INFO_V1(uldp_quantile_bool_transfn);
PG_FUNCTION_INFO_V1(uldp_quantile_combinefn);
PG_FUNCTION_INFO_V1(uldp_quantile_serialfn);
PG_FUNCTION_INFO_V1(uldp_quantile_deserialfn);

/*
 * The most memory a release over a protected table may need per row it
 * reads: the row's entry in its state's array, which doubles when full, so
 * that while it grows the old array and the new one, twice as large, hold
 * three entries a row; the serialized copy of a partial state (parallel
 * plans) and its deserialized copy, two more; and the final function's
 * working memory.  The terms do not all coexist, so their sum is an upper
 * bound: 114 bytes.
 */
double
uldp_quantile_state_bytes_per_row(void)
{
	return (3 + 2) * sizeof(UldpQuantileRow) + ULDP_QUANTILE_RELEASE_BYTES_PER_ROW;
}

/*
 * The memory a release may hold whatever the rows: its first array, the
 * final function's arrays for an empty input (one row, one segment), and
 * the overhead of the partial states of a parallel plan, one per process.
 */
double
uldp_quantile_state_fixed_bytes(void)
{
	return INITIAL_ROWS * sizeof(UldpQuantileRow) + ULDP_QUANTILE_RELEASE_BYTES_PER_ROW + 1 +
		(1.0 + max_worker_processes) * STATE_OVERHEAD;
}

/* Bytes held by the state, plus "extra". */
static Size
state_memory(const UldpQuantileState *state, Size extra)
{
	return sizeof(UldpQuantileState) + state->capacity * sizeof(UldpQuantileRow) +
		state->part_bytes + extra;
}

static void
check_memory(const UldpQuantileState *state, Size extra)
{
	if (!state->bounded)
		uldp_check_state_memory(state_memory(state, extra),
								"user_dp_quantile keeps every row: 16 bytes a row, up to 114 while it grows and releases");
}

static UldpQuantileState *
state_create(MemoryContext context, bool key_byval, int16 key_typlen, bool bounded)
{
	UldpQuantileState *state = MemoryContextAllocZero(context, sizeof(UldpQuantileState));

	state->key_byval = key_byval;
	state->key_typlen = key_typlen;
	state->bounded = bounded;
	state->context = context;
	return state;
}

/* Doubles the state's array; while the rows are copied both arrays exist. */
static void
state_grow(UldpQuantileState *state)
{
	int64		capacity = state->capacity == 0 ? INITIAL_ROWS : 2 * state->capacity;
	Size		bytes = capacity * sizeof(UldpQuantileRow);

	check_memory(state, bytes);
	if (state->rows == NULL)
		state->rows = MemoryContextAllocHuge(state->context, bytes);
	else
		state->rows = repalloc_huge(state->rows, bytes);
	state->capacity = capacity;
}

/*
 * The state a transition function continues, or starts on its first row;
 * the user id is argument 2.  The array is allocated with the first row
 * kept, so a state that keeps none (a parallel worker that saw only NULLs)
 * holds no array.
 */
static UldpQuantileState *
transition_state(FunctionCallInfo fcinfo)
{
	MemoryContext aggcontext;
	int16		typlen;
	bool		typbyval;

	if (!PG_ARGISNULL(0))
		return (UldpQuantileState *) PG_GETARG_POINTER(0);
	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		uldp_refuse_window(fcinfo);
	get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, 2), &typlen, &typbyval);
	return state_create(aggcontext, typbyval, typlen, uldp_release_bounded(fcinfo));
}

/* Keeps a row of "value", unless its user id is NULL or too long, or it is NaN. */
static void
state_add(FunctionCallInfo fcinfo, UldpQuantileState *state, double value)
{
	uint64		key;

	if (PG_ARGISNULL(2) || isnan(value) ||
		!uldp_user_key(PG_GETARG_DATUM(2), state->key_byval, state->key_typlen, &key))
		return;
	if (unlikely(state->nrows == state->capacity))
		state_grow(state);
	state->rows[state->nrows].key = key;
	state->rows[state->nrows].value = value;
	state->nrows++;
}

/*
 * uldp_quantile_transfn(state, value float8, user_id, epsilon, q
 * [, lower, upper]).  The privacy parameters were validated before any row
 * was read (statement.c) and are read again by the final function; the
 * transition only keeps the row.
 */
Datum
uldp_quantile_transfn(PG_FUNCTION_ARGS)
{
	UldpQuantileState *state = transition_state(fcinfo);

	if (!PG_ARGISNULL(1))
		state_add(fcinfo, state, PG_GETARG_FLOAT8(1));
	PG_RETURN_POINTER(state);
}

/* The same for a boolean value: true is 1, false is 0. */
Datum
uldp_quantile_bool_transfn(PG_FUNCTION_ARGS)
{
	UldpQuantileState *state = transition_state(fcinfo);

	if (!PG_ARGISNULL(1))
		state_add(fcinfo, state, PG_GETARG_BOOL(1) ? 1.0 : 0.0);
	PG_RETURN_POINTER(state);
}

/*
 * Links the rows of state2 to state1, without copying them: both live in
 * the aggregate context, and state2 is not used again.
 */
Datum
uldp_quantile_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpQuantileState *state1 = PG_ARGISNULL(0) ? NULL : (UldpQuantileState *) PG_GETARG_POINTER(0);
	UldpQuantileState *state2 = PG_ARGISNULL(1) ? NULL : (UldpQuantileState *) PG_GETARG_POINTER(1);
	MemoryContext old_context;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_quantile_combinefn called in non-aggregate context");
	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (state1 == NULL)
		PG_RETURN_POINTER(state2);

	check_memory(state1, state_memory(state2, sizeof(QuantilePart)));
	old_context = MemoryContextSwitchTo(state1->context);
	if (state2->nrows > 0)
	{
		QuantilePart *part = palloc(sizeof(QuantilePart));

		part->rows = state2->rows;
		part->nrows = state2->nrows;
		state1->parts = lappend(state1->parts, part);
	}
	state1->parts = list_concat(state1->parts, state2->parts);
	MemoryContextSwitchTo(old_context);
	state1->part_rows += state2->nrows + state2->part_rows;
	state1->part_bytes += state_memory(state2, sizeof(QuantilePart));
	state2->parts = NIL;
	PG_RETURN_POINTER(state1);
}

Datum
uldp_quantile_serialfn(PG_FUNCTION_ARGS)
{
	UldpQuantileState *state = (UldpQuantileState *) PG_GETARG_POINTER(0);
	QuantileStateHeader header;
	Size		size;
	bytea	   *result;
	char	   *cursor;
	ListCell   *lc;

	/* the leader's, which its own final aggregation combines (handover.c) */
	if (uldp_can_hand_over(fcinfo))
		PG_RETURN_BYTEA_P(uldp_hand_over(state, state->context));
	memset(&header, 0, sizeof(header));
	header.key_byval = state->key_byval;
	header.key_typlen = state->key_typlen;
	header.nrows = state->nrows + state->part_rows;
	size = VARHDRSZ + sizeof(header) + header.nrows * sizeof(UldpQuantileRow);
	result = uldp_pass_alloc(fcinfo, size);
	SET_VARSIZE(result, size);
	cursor = VARDATA(result);
	memcpy(cursor, &header, sizeof(header));
	cursor += sizeof(header);
	if (state->nrows > 0)
		memcpy(cursor, state->rows, state->nrows * sizeof(UldpQuantileRow));
	cursor += state->nrows * sizeof(UldpQuantileRow);
	foreach(lc, state->parts)
	{
		QuantilePart *part = lfirst(lc);

		memcpy(cursor, part->rows, part->nrows * sizeof(UldpQuantileRow));
		cursor += part->nrows * sizeof(UldpQuantileRow);
	}
	Assert(cursor == (char *) result + size);
	PG_RETURN_BYTEA_P(uldp_pass_finish(fcinfo, result));
}

/* A state whose own array is a copy of the serialized rows. */
Datum
uldp_quantile_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	MemoryContext aggcontext;
	QuantileStateHeader header;
	UldpQuantileState *state;
	Size		bytes;
	UldpPassed	passed;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_quantile_deserialfn called in non-aggregate context");
	state = uldp_take_handed_over(serialized);
	if (state != NULL)
		PG_RETURN_POINTER(state);
	serialized = uldp_pass_open(fcinfo, serialized, &passed);
	memcpy(&header, VARDATA_ANY(serialized), sizeof(header));
	state = state_create(aggcontext, header.key_byval, header.key_typlen,
						 uldp_release_bounded(fcinfo));
	if (header.nrows > 0)
	{
		bytes = header.nrows * sizeof(UldpQuantileRow);
		check_memory(state, bytes);
		state->rows = MemoryContextAllocHuge(aggcontext, bytes);
		memcpy(state->rows, VARDATA_ANY(serialized) + sizeof(header), bytes);
		state->nrows = state->capacity = header.nrows;
	}
	uldp_pass_release(&passed);
	PG_RETURN_POINTER(state);
}

/*
 * A copy of all the rows of a state, in the current memory context, for
 * the final function to sort.  A release over tables its caller may read
 * checks the memory it is about to need, the copy included
 * (ULDP_QUANTILE_RELEASE_BYTES_PER_ROW), and the number of rows the
 * exponential mechanism can take; a release over protected tables was
 * bounded before it read rows.
 */
UldpQuantileRow *
uldp_quantile_state_rows(UldpQuantileState *state, int64 *nrows)
{
	int64		n = state->nrows + state->part_rows;
	UldpQuantileRow *rows;
	UldpQuantileRow *cursor;
	ListCell   *lc;

	if (!state->bounded)
	{
		if (n > MAX_RELEASE_ROWS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("user_dp_quantile can read at most %lld rows, not %lld",
							(long long) MAX_RELEASE_ROWS, (long long) n),
					 errhint("Release over a part of the rows, with a WHERE condition.")));
		check_memory(state, n * ULDP_QUANTILE_RELEASE_BYTES_PER_ROW);
	}
	rows = palloc_extended(Max(n, 1) * sizeof(UldpQuantileRow), MCXT_ALLOC_HUGE);
	if (state->nrows > 0)
		memcpy(rows, state->rows, state->nrows * sizeof(UldpQuantileRow));
	cursor = rows + state->nrows;
	foreach(lc, state->parts)
	{
		QuantilePart *part = lfirst(lc);

		memcpy(cursor, part->rows, part->nrows * sizeof(UldpQuantileRow));
		cursor += part->nrows;
	}
	*nrows = n;
	return rows;
}

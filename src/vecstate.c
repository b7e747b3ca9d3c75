/*-------------------------------------------------------------------------
 *
 * vecstate.c
 *	  Transition functions of the vector releases.
 *
 * Rows are grouped by user id in a hash table that maps each user to a
 * dense number.  user_dp_mean on vectors keeps each user's running sum
 * and row count (8 dim + 4 bytes a user); user_dp_sgd must evaluate each
 * row's gradient at every step, so it keeps every row, packed as
 * dim + 1 doubles (the features, then the label) plus the 4-byte number of
 * its user.  The hash table costs 16 bytes a user in addition, at a load
 * factor of at most 0.9.
 *
 * Users are keyed as by the scalar aggregates (uldp_user_key): two ids whose
 * 64-bit hashes collide would share one bounded contribution, which never
 * weakens the privacy of either.
 *
 * The dimension of the vectors is public, like the column's type: the
 * statement read it from the plan before reading rows (dimension.c).  A row
 * whose vector does not have exactly that many elements, has a NULL element
 * or a NaN, or whose label or user is NULL, is skipped; its size is checked
 * before the array is read into memory.  Infinite elements are clamped.
 * Nothing else depends on the data.  Memory is checked as for the scalar
 * aggregates (userstate.c): before reading, from the table's size, for a
 * release over a protected table; at every growth otherwise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "params.h"
#include "statement.h"
#include "tablemem.h"
#include "userstate.h"
#include "vecstate.h"

typedef struct UldpUserIndex
{
	uint64		key;
	uint32		number;
	char		status;
} UldpUserIndex;

#define SH_PREFIX		userindex
#define SH_ELEMENT_TYPE UldpUserIndex
#define SH_KEY_TYPE		uint64
#define SH_KEY			key
#define SH_HASH_KEY(tb, key) ((uint32) uldp_mix64(key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		static inline
#define SH_USE_NONDEFAULT_ALLOCATOR
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"
ULDP_TABLE_ALLOCATOR(userindex)

struct UldpVecState
{
	MemoryContext context;
	bool		keep_rows;		/* user_dp_sgd: every row; else per-user sums */
	bool		boolean_label;	/* user_dp_sgd: the label is a boolean */
	bool		bounded;		/* memory bounded before reading: no checks */
	double		row_radius;		/* mean: rows are clipped to this l2 norm */
	int			dim;			/* the public dimension */
	bool		key_byval;
	int16		key_typlen;
	userindex_hash *users;
	/* per user */
	int64		nusers;
	int64		user_capacity;
	double	   *sums;			/* mean: nusers x dim */
	uint32	   *counts;			/* mean: rows of each user */
	/* per row (keep_rows) */
	int64		nrows;
	int64		row_capacity;
	double	   *rows;			/* nrows x (dim + 1) */
	uint32	   *row_user;
	double	   *scratch;		/* one row */
};

/* users the hash table has room for at first */
#define INITIAL_USERS 1024
/* the most the per-user or per-row arrays take at first */
#define INITIAL_ARRAY_BYTES (64 * 1024)

PG_FUNCTION_INFO_V1(uldp_vector_transfn);
PG_FUNCTION_INFO_V1(uldp_sgd_transfn);

/* bytes a user (mean) or a row (user_dp_sgd) takes in the arrays */
static Size
element_bytes(bool keep_rows, int dim)
{
	return keep_rows ? (dim + 1) * sizeof(double) + sizeof(uint32) :
		dim * sizeof(double) + sizeof(uint32);
}

static Size
state_bytes(const UldpVecState *state, uint64 table_size, int64 user_capacity,
			int64 row_capacity)
{
	return sizeof(UldpVecState) + table_size * sizeof(UldpUserIndex) +
		(state->keep_rows ? row_capacity : user_capacity) *
		element_bytes(state->keep_rows, state->dim);
}

static const char *
memory_hint(const UldpVecState *state)
{
	return state->keep_rows
		? "Each row takes 8 (dimension + 1) + 4 bytes and each user 18 more; the release needs 8 (dimension + 1) + 4 more a row and 8 (padded dimension + 6) more a user"
		: "Each user takes 8 dimension + 22 bytes, and the release needs 8 (dimension + padded dimension + 4) more";
}

static void
check_memory(const UldpVecState *state, uint64 table_size,
			 int64 user_capacity, int64 row_capacity)
{
	if (!state->bounded)
		uldp_check_state_memory(state_bytes(state, table_size, user_capacity,
											row_capacity), memory_hint(state));
}

/*
 * The first capacity of the per-user or per-row arrays: INITIAL_ARRAY_BYTES
 * at most (and at least one element), whatever the dimension, so that the
 * first row never allocates more than a bounded release planned for.
 */
static int64
initial_capacity(const UldpVecState *state)
{
	return Max(1, INITIAL_ARRAY_BYTES / element_bytes(state->keep_rows, state->dim));
}

/*
 * The memory a state may hold whatever the rows: its hash table's first
 * size, the arrays' first capacity and one row of scratch.
 */
double
uldp_vec_state_fixed_bytes(bool keep_rows, int dim)
{
	return sizeof(UldpVecState) + 2 * INITIAL_USERS / ULDP_HASH_FILLFACTOR * sizeof(UldpUserIndex) +
		INITIAL_ARRAY_BYTES + element_bytes(keep_rows, dim) + (dim + 1) * sizeof(double);
}

/*
 * The most memory the state of a release over a protected table may need
 * per row it reads (the release's own working memory comes on top): arrays
 * at most twice their content, and at most 2 / ULDP_HASH_FILLFACTOR table
 * entries a user.
 */
double
uldp_vec_state_bytes_per_row(bool keep_rows, int dim)
{
	return 2 / ULDP_HASH_FILLFACTOR * sizeof(UldpUserIndex) + 2 * element_bytes(keep_rows, dim);
}

static UldpVecState *
state_create(FunctionCallInfo fcinfo, int id_arg, bool keep_rows,
			 double row_radius)
{
	MemoryContext aggcontext;
	UldpVecState *state;
	Oid			key_type = get_fn_expr_argtype(fcinfo->flinfo, id_arg);
	bool		typbyval;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		uldp_refuse_window(fcinfo);
	state = MemoryContextAllocZero(aggcontext, sizeof(UldpVecState));
	state->context = aggcontext;
	state->keep_rows = keep_rows;
	state->bounded = uldp_release_bounded(fcinfo);
	state->row_radius = row_radius;
	state->dim = uldp_release_plan(fcinfo)->dimension;
	state->scratch = MemoryContextAlloc(aggcontext, (state->dim + 1) * sizeof(double));
	get_typlenbyval(key_type, &state->key_typlen, &typbyval);
	state->key_byval = typbyval;
	state->users = userindex_create(aggcontext, INITIAL_USERS, NULL);
	return state;
}

static void *
grow(const UldpVecState *state, void *array, Size new_bytes)
{
	return array ? repalloc_huge(array, new_bytes)
		: MemoryContextAllocHuge(state->context, new_bytes);
}

/* The dense number of the user whose key is "key", added if new. */
static uint32
user_number(UldpVecState *state, uint64 key)
{
	bool		found;
	UldpUserIndex *entry;

	if (unlikely(state->users->members + 1 >= state->users->grow_threshold))
		check_memory(state, 2 * state->users->size, state->user_capacity,
					 state->row_capacity);
	entry = userindex_insert(state->users, key, &found);
	if (found)
		return entry->number;

	if (!state->keep_rows && state->nusers == state->user_capacity)
	{
		int64		capacity = Max(initial_capacity(state), 2 * state->user_capacity);

		check_memory(state, state->users->size, capacity, state->row_capacity);
		state->sums = grow(state, state->sums, capacity * state->dim * sizeof(double));
		state->counts = grow(state, state->counts, capacity * sizeof(uint32));
		state->user_capacity = capacity;
	}
	if (!state->keep_rows)
	{
		memset(&state->sums[state->nusers * state->dim], 0, state->dim * sizeof(double));
		state->counts[state->nusers] = 0;
	}
	entry->number = (uint32) state->nusers++;
	return entry->number;
}

/*
 * |v| / largest, where "largest" receives the largest magnitude (0 for the
 * zero vector).  The squares are summed as they are when the largest
 * magnitude lies within 2^-500 .. 2^500 (they can neither overflow nor
 * lose the norm to underflow there); otherwise each element is scaled by
 * the largest first, which keeps them finite for elements up to the largest
 * double, at the cost of a division an element.  Elements must be finite.
 */
static double
scaled_norm(const double *v, int dim, double *largest)
{
	double		norm = 0;

	*largest = 0;
	for (int j = 0; j < dim; j++)
	{
		*largest = Max(*largest, fabs(v[j]));
		norm += v[j] * v[j];
	}
	if (*largest == 0)
		return 0;
	if (*largest >= 0x1p-500 && *largest <= 0x1p500 && isfinite(norm))
		return sqrt(norm) / *largest;
	norm = 0;
	for (int j = 0; j < dim; j++)
		norm += (v[j] / *largest) * (v[j] / *largest);
	return sqrt(norm);
}

/*
 * The l2 norm of a finite vector, without overflow in the squares (it is
 * infinite only when the norm itself exceeds the largest double).
 */
double
uldp_l2_norm(const double *v, int dim)
{
	double		largest;
	double		norm = scaled_norm(v, dim, &largest);

	return norm * largest;
}

/*
 * Scales v to the l2 ball of "radius" if it lies outside.  Infinite
 * elements keep their direction (the finite ones count as zero next to
 * them).
 */
void
uldp_clip_to_ball(double *v, int dim, double radius)
{
	double		largest;
	double		norm;

	for (int j = 0; j < dim; j++)
		if (isinf(v[j]))
		{
			for (int k = 0; k < dim; k++)
				v[k] = isinf(v[k]) ? (v[k] > 0 ? 1 : -1) : 0;
			break;
		}
	norm = scaled_norm(v, dim, &largest);
	if (largest == 0 || norm * largest <= radius)
		return;
	for (int j = 0; j < dim; j++)
		v[j] = (v[j] / largest) / norm * radius;
}

/*
 * The elements of a vector argument, or NULL when the row is to be skipped:
 * not exactly dim elements in one dimension, a NULL element, or a NaN.  The
 * stored size is checked first, so that no array larger than a valid one is
 * ever read into memory.
 */
static const double *
vector_elements(const UldpVecState *state, Datum datum)
{
	ArrayType  *array;
	const double *elements;

	if (toast_raw_datum_size(datum) != ARR_OVERHEAD_NONULLS(1) + state->dim * sizeof(float8))
		return NULL;
	array = DatumGetArrayTypeP(datum);
	if (ARR_NDIM(array) != 1 || ARR_HASNULL(array) ||
		ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) != state->dim)
		return NULL;
	elements = (const double *) ARR_DATA_PTR(array);
	for (int j = 0; j < state->dim; j++)
		if (isnan(elements[j]))
			return NULL;
	return elements;
}

/* The key of a row's user, or false when the row is to be skipped. */
static bool
row_user(const UldpVecState *state, Datum id, uint64 *key)
{
	return uldp_user_key(id, state->key_byval, state->key_typlen, key);
}

/*
 * uldp_vector_transfn(state, value float8[], user_id, epsilon, delta
 *					   [, radius [, tau]])
 */
Datum
uldp_vector_transfn(PG_FUNCTION_ARGS)
{
	UldpVecState *state = PG_ARGISNULL(0) ? NULL : (UldpVecState *) PG_GETARG_POINTER(0);
	const double *elements;
	double	   *sum;
	uint32		number;
	uint64		key;

	if (state == NULL)
	{
		double		radius = PG_NARGS() > 5 && !PG_ARGISNULL(5) ? PG_GETARG_FLOAT8(5) : 0;

		state = state_create(fcinfo, 2, false,
							 radius > 0 && radius < ULDP_VECTOR_MAX_NORM ? radius : ULDP_VECTOR_MAX_NORM);
	}
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || !row_user(state, PG_GETARG_DATUM(2), &key))
		PG_RETURN_POINTER(state);
	elements = vector_elements(state, PG_GETARG_DATUM(1));
	if (elements == NULL)
		PG_RETURN_POINTER(state);

	memcpy(state->scratch, elements, state->dim * sizeof(double));
	uldp_clip_to_ball(state->scratch, state->dim, state->row_radius);
	number = user_number(state, key);
	sum = &state->sums[(int64) number * state->dim];
	for (int j = 0; j < state->dim; j++)
		sum[j] += state->scratch[j];
	/* past 2^32 - 1 rows, halve: the average stays, to one row in 2^32 */
	if (unlikely(++state->counts[number] == PG_UINT32_MAX))
	{
		state->counts[number] /= 2;
		for (int j = 0; j < state->dim; j++)
			sum[j] /= 2;
	}
	PG_RETURN_POINTER(state);
}

/*
 * uldp_sgd_transfn(state, features float8[], label float8 or boolean,
 *					user_id, epsilon, delta [, options])
 *
 * A boolean label is 1 (true) or 0 (false), the labels of logistic
 * regression; the aggregates differ only in the label's type.
 */
Datum
uldp_sgd_transfn(PG_FUNCTION_ARGS)
{
	UldpVecState *state = PG_ARGISNULL(0) ? NULL : (UldpVecState *) PG_GETARG_POINTER(0);
	const double *elements;
	double		label;
	double	   *row;
	uint64		key;

	if (state == NULL)
	{
		state = state_create(fcinfo, 3, true, 0);
		state->boolean_label = get_fn_expr_argtype(fcinfo->flinfo, 2) == BOOLOID;
	}
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3) ||
		!row_user(state, PG_GETARG_DATUM(3), &key))
		PG_RETURN_POINTER(state);
	label = state->boolean_label ? (PG_GETARG_BOOL(2) ? 1 : 0) : PG_GETARG_FLOAT8(2);
	elements = vector_elements(state, PG_GETARG_DATUM(1));
	if (elements == NULL || isnan(label))
		PG_RETURN_POINTER(state);

	if (state->nrows == state->row_capacity)
	{
		int64		capacity = Max(initial_capacity(state), 2 * state->row_capacity);

		check_memory(state, state->users->size, state->user_capacity, capacity);
		state->rows = grow(state, state->rows, capacity * (state->dim + 1) * sizeof(double));
		state->row_user = grow(state, state->row_user, capacity * sizeof(uint32));
		state->row_capacity = capacity;
	}
	row = &state->rows[state->nrows * (state->dim + 1)];
	for (int j = 0; j < state->dim; j++)
		row[j] = Min(Max(elements[j], -ULDP_MAX_MAGNITUDE), ULDP_MAX_MAGNITUDE);
	row[state->dim] = Min(Max(label, -ULDP_MAX_MAGNITUDE), ULDP_MAX_MAGNITUDE);
	state->row_user[state->nrows++] = user_number(state, key);
	PG_RETURN_POINTER(state);
}

/*
 * The average of each user's vectors, nusers x dim; "per_user_extra" is the
 * working memory the release will need per user, checked against the limit
 * first.
 */
double *
uldp_vec_user_means(UldpVecState *state, int64 *nusers, Size per_user_extra)
{
	double	   *means;

	if (!state->bounded)
		uldp_check_state_memory(state_bytes(state, state->users->size, state->user_capacity, 0) +
								state->nusers * (state->dim * sizeof(double) + per_user_extra),
								memory_hint(state));
	means = palloc_extended(Max(state->nusers * state->dim, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < state->nusers; i++)
		for (int j = 0; j < state->dim; j++)
		{
			double		mean = state->sums[i * state->dim + j] / state->counts[i];

			means[i * state->dim + j] = isnan(mean) ? 0 : mean;
		}
	*nusers = state->nusers;
	return means;
}

/*
 * One stable pass of grouping: the rows and their users' numbers from
 * (from_rows, from_users) to (to_rows, to_users), ordered by the digit of
 * the user number at "shift" of "bits" bits, into "offsets" (2^bits).
 */
static void
group_pass(const UldpVecState *state, const double *from_rows, const uint32 *from_users,
		   double *to_rows, uint32 *to_users, int shift, int bits, int64 *offsets)
{
	int			width = state->dim + 1;
	uint32		mask = (UINT64CONST(1) << bits) - 1;
	int64		position = 0;

	memset(offsets, 0, (Size) (mask + 1) * sizeof(int64));
	for (int64 r = 0; r < state->nrows; r++)
		offsets[(from_users[r] >> shift) & mask]++;
	for (uint32 digit = 0; digit <= mask; digit++)
	{
		int64		count = offsets[digit];

		offsets[digit] = position;
		position += count;
	}
	for (int64 r = 0; r < state->nrows; r++)
	{
		int64		to = offsets[(from_users[r] >> shift) & mask]++;

		memcpy(&to_rows[to * width], &from_rows[r * width], width * sizeof(double));
		to_users[to] = from_users[r];
	}
}

/*
 * Each user's rows, contiguous: nusers entries pointing into the state's
 * own rows, which this groups by user: a least-significant-digit radix
 * sort of the user numbers in two passes (half their bits each), through a
 * second copy and back.  Each pass scatters to at most 2^16 places, so its
 * writes stay in the cache, where one scatter to every user's run missed
 * it on every row.  The grouping, and the release's clipping of the rows,
 * change the state: user_dp_sgd's final function is declared READ_WRITE,
 * so PostgreSQL never hands the state to a second final call (no window
 * use, no state shared with another aggregate; identical calls in one query
 * are one aggregate, finalized once).
 */
UldpUserRows *
uldp_vec_user_rows(UldpVecState *state, int64 *nusers, Size per_user_extra)
{
	int			width = state->dim + 1;
	int			bits = 1;
	UldpUserRows *users;

	if (!state->bounded)
		uldp_check_state_memory(state_bytes(state, state->users->size, 0, state->row_capacity) +
								state->nrows * element_bytes(true, state->dim) +
								state->nusers * (sizeof(UldpUserRows) + per_user_extra),
								memory_hint(state));
	users = palloc_extended(Max(state->nusers, 1) * sizeof(UldpUserRows),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	while (bits < 32 && (UINT64CONST(1) << bits) < (uint64) state->nusers)
		bits++;
	if (state->nusers > 1)
	{
		double	   *rows = palloc_extended(state->nrows * width * sizeof(double),
										   MCXT_ALLOC_HUGE);
		uint32	   *row_user = palloc_extended(state->nrows * sizeof(uint32), MCXT_ALLOC_HUGE);
		int64	   *offsets = palloc(((Size) 1 << (bits - bits / 2)) * sizeof(int64));

		group_pass(state, state->rows, state->row_user, rows, row_user, 0, bits - bits / 2,
				   offsets);
		group_pass(state, rows, row_user, state->rows, state->row_user, bits - bits / 2,
				   bits / 2, offsets);
		pfree(rows);
		pfree(row_user);
		pfree(offsets);
	}
	for (int64 r = 0; r < state->nrows; r++)
		users[state->row_user[r]].count++;
	for (int64 i = 0, position = 0; i < state->nusers; i++)
	{
		users[i].rows = &state->rows[position * width];
		position += users[i].count;
	}
	*nusers = state->nusers;
	return users;
}

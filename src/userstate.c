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
 * A user is identified by the binary image of its id.  By-value ids (int2,
 * int4, int8, date, ...) are used as the key directly; other ids (text, uuid,
 * numeric, ...) are hashed and their bytes are kept in a bump arena for exact
 * comparison, so two different users can never be merged by a collision.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/lsyscache.h"

#include "userstate.h"

int			uldp_max_state_memory = 1024 * 1024;	/* 1 GB */

typedef struct UldpUserKey
{
	uint64		id;				/* the by-value datum, or a hash of the bytes */
	const char *bytes;			/* NULL for by-value ids */
	uint32		len;
} UldpUserKey;

typedef struct UldpUser
{
	UldpUserKey key;
	char		status;
	int64		count;
	double		sum;
} UldpUser;

static inline uint64
mix64(uint64 x)
{
	/* the splitmix64 finaliser: every input bit reaches every output bit */
	x = (x ^ (x >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

static inline bool
user_key_equal(const UldpUserKey *a, const UldpUserKey *b)
{
	return a->id == b->id &&
		(a->bytes == NULL ||
		 (a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0));
}

#define SH_PREFIX		users
#define SH_ELEMENT_TYPE UldpUser
#define SH_KEY_TYPE		UldpUserKey
#define SH_KEY			key
#define SH_HASH_KEY(tb, k) mix64((k).id)
#define SH_EQUAL(tb, a, b) user_key_equal(&(a), &(b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#define ARENA_BLOCK_SIZE (64 * 1024)

struct UldpState
{
	UldpParams	params;
	bool		key_byval;
	int16		key_typlen;
	MemoryContext context;
	users_hash *users;
	char	   *arena;			/* free space for key bytes */
	Size		arena_free;
	Size		arena_total;
};

/* Serialized form: this header, then per user id, count, sum, [len, bytes] */
typedef struct UldpStateHeader
{
	UldpParams	params;
	bool		key_byval;
	int16		key_typlen;
	int64		nusers;
} UldpStateHeader;

PG_FUNCTION_INFO_V1(uldp_user_transfn);
PG_FUNCTION_INFO_V1(uldp_user_combinefn);
PG_FUNCTION_INFO_V1(uldp_user_serialfn);
PG_FUNCTION_INFO_V1(uldp_user_deserialfn);

const UldpParams *
uldp_state_params(const UldpState *state)
{
	return &state->params;
}

static UldpState *
state_create(MemoryContext context, const UldpParams *params, bool key_byval,
			 int16 key_typlen)
{
	UldpState  *state = MemoryContextAllocZero(context, sizeof(UldpState));

	state->params = *params;
	state->key_byval = key_byval;
	state->key_typlen = key_typlen;
	state->context = context;
	state->users = users_create(context, 1024, NULL);
	return state;
}

static Size
state_memory(const UldpState *state, uint64 table_size)
{
	return table_size * sizeof(UldpUser) + state->arena_total + sizeof(UldpState);
}

static void
check_memory(const UldpState *state, uint64 table_size)
{
	if (state_memory(state, table_size) > (Size) uldp_max_state_memory * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("uldp aggregate state would exceed uldp.max_state_memory (%d kB)",
						uldp_max_state_memory),
				 errhint("Each user takes about %d bytes plus the bytes of its id; a superuser can raise uldp.max_state_memory.",
						 (int) (2 * sizeof(UldpUser)))));
}

static const char *
arena_copy(UldpState *state, const char *bytes, uint32 len)
{
	char	   *copy;

	if (len > state->arena_free)
	{
		Size		block = Max(ARENA_BLOCK_SIZE, len);

		state->arena_total += block;
		check_memory(state, state->users->size);
		state->arena = MemoryContextAlloc(state->context, block);
		state->arena_free = block;
	}
	copy = state->arena;
	memcpy(copy, bytes, len);
	state->arena += len;
	state->arena_free -= len;
	return copy;
}

static void
state_accumulate(UldpState *state, UldpUserKey key, double sum, int64 count)
{
	UldpUser   *user;
	bool		found;

	/* an insert at the threshold doubles the table: refuse before that */
	if (state->users->members >= state->users->grow_threshold)
		check_memory(state, 2 * (uint64) state->users->size);
	user = users_insert(state->users, key, &found);
	if (!found)
	{
		if (key.bytes != NULL)
			user->key.bytes = arena_copy(state, key.bytes, key.len);
		user->count = 0;
		user->sum = 0;
	}
	user->count += count;
	user->sum += sum;
}

static UldpUserKey
user_key(const UldpState *state, Datum id)
{
	UldpUserKey key;

	if (state->key_byval)
	{
		key.id = (uint64) id;
		key.bytes = NULL;
		key.len = 0;
		return key;
	}
	if (state->key_typlen == -1)
	{
		struct varlena *value = PG_DETOAST_DATUM_PACKED(id);

		key.bytes = VARDATA_ANY(value);
		key.len = VARSIZE_ANY_EXHDR(value);
	}
	else if (state->key_typlen == -2)
	{
		key.bytes = DatumGetCString(id);
		key.len = strlen(key.bytes);
	}
	else
	{
		key.bytes = DatumGetPointer(id);
		key.len = state->key_typlen;
	}
	key.id = hash_bytes_extended((const unsigned char *) key.bytes, key.len, 0);
	return key;
}

/*
 * uldp_user_transfn(state, value, user_id, epsilon [, lower, upper [, tau]])
 *
 * Rows with a NULL user id, a NULL value or a NaN are skipped; infinite
 * values and values outside the bounds are clamped to the bounds (to
 * +-ULDP_MAX_MAGNITUDE without bounds).  Nothing here depends on other rows,
 * raises a data-dependent error or emits a notice.
 */
Datum
uldp_user_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpState  *state = PG_ARGISNULL(0) ? NULL : (UldpState *) PG_GETARG_POINTER(0);
	double		value;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE)
		uldp_refuse_window(fcinfo, "uldp aggregate");

	if (state == NULL)
	{
		UldpParams	params;
		Oid			key_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
		int16		typlen;
		bool		typbyval;

		uldp_params_from_args(fcinfo, 3, &params);
		get_typlenbyval(key_type, &typlen, &typbyval);
		state = state_create(aggcontext, &params, typbyval, typlen);
	}

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_POINTER(state);
	value = PG_GETARG_FLOAT8(1);
	if (isnan(value))
		PG_RETURN_POINTER(state);
	value = Min(Max(value, state->params.lower), state->params.upper);

	state_accumulate(state, user_key(state, PG_GETARG_DATUM(2)), value, 1);
	PG_RETURN_POINTER(state);
}

Datum
uldp_user_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpState  *state1 = PG_ARGISNULL(0) ? NULL : (UldpState *) PG_GETARG_POINTER(0);
	UldpState  *state2 = PG_ARGISNULL(1) ? NULL : (UldpState *) PG_GETARG_POINTER(1);
	users_iterator iterator;
	UldpUser   *user;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_combinefn called in non-aggregate context");
	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (state1 == NULL)
		state1 = state_create(aggcontext, &state2->params, state2->key_byval,
							  state2->key_typlen);

	users_start_iterate(state2->users, &iterator);
	while ((user = users_iterate(state2->users, &iterator)) != NULL)
		state_accumulate(state1, user->key, user->sum, user->count);
	PG_RETURN_POINTER(state1);
}

Datum
uldp_user_serialfn(PG_FUNCTION_ARGS)
{
	UldpState  *state = (UldpState *) PG_GETARG_POINTER(0);
	UldpStateHeader header;
	users_iterator iterator;
	UldpUser   *user;
	Size		size = VARHDRSZ + sizeof(UldpStateHeader);
	bytea	   *result;
	char	   *cursor;

	users_start_iterate(state->users, &iterator);
	while ((user = users_iterate(state->users, &iterator)) != NULL)
		size += sizeof(uint64) + sizeof(int64) + sizeof(double) +
			(user->key.bytes ? sizeof(uint32) + user->key.len : 0);

	result = palloc_extended(size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(result, size);
	memset(&header, 0, sizeof(header));
	header.params = state->params;
	header.key_byval = state->key_byval;
	header.key_typlen = state->key_typlen;
	header.nusers = state->users->members;
	cursor = VARDATA(result);
	memcpy(cursor, &header, sizeof(header));
	cursor += sizeof(header);

#define PUT(value) (memcpy(cursor, &(value), sizeof(value)), cursor += sizeof(value))
	users_start_iterate(state->users, &iterator);
	while ((user = users_iterate(state->users, &iterator)) != NULL)
	{
		PUT(user->key.id);
		PUT(user->count);
		PUT(user->sum);
		if (user->key.bytes)
		{
			PUT(user->key.len);
			memcpy(cursor, user->key.bytes, user->key.len);
			cursor += user->key.len;
		}
	}
#undef PUT
	Assert(cursor == (char *) result + size);
	PG_RETURN_BYTEA_P(result);
}

Datum
uldp_user_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	MemoryContext aggcontext;
	UldpStateHeader header;
	UldpState  *state;
	const char *cursor = VARDATA_ANY(serialized);

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp_user_deserialfn called in non-aggregate context");
	memcpy(&header, cursor, sizeof(header));
	cursor += sizeof(header);
	state = state_create(aggcontext, &header.params, header.key_byval,
						 header.key_typlen);

#define GET(value) (memcpy(&(value), cursor, sizeof(value)), cursor += sizeof(value))
	for (int64 i = 0; i < header.nusers; i++)
	{
		UldpUserKey key = {0};
		int64		count;
		double		sum;

		GET(key.id);
		GET(count);
		GET(sum);
		if (!header.key_byval)
		{
			GET(key.len);
			key.bytes = cursor;
			cursor += key.len;
		}
		state_accumulate(state, key, sum, count);
	}
#undef GET
	PG_RETURN_POINTER(state);
}

/*
 * The average of each user's rows, clamped to the parameters' bounds.  A sum
 * can overflow only when bounds are absent and a user has rows near
 * ULDP_MAX_MAGNITUDE; such an average is clamped like any other (a NaN from
 * +Inf + -Inf partial sums becomes 0): the mechanisms only rely on every
 * user's value lying within the bounds.
 */
double *
uldp_state_user_means(UldpState *state, int64 *nusers)
{
	double	   *means = palloc_extended(Max(state->users->members, 1) * sizeof(double),
										MCXT_ALLOC_HUGE);
	users_iterator iterator;
	UldpUser   *user;
	int64		n = 0;

	users_start_iterate(state->users, &iterator);
	while ((user = users_iterate(state->users, &iterator)) != NULL)
	{
		double		mean = user->sum / (double) user->count;

		if (isnan(mean))
			mean = 0;
		means[n++] = Min(Max(mean, state->params.lower), state->params.upper);
	}
	*nusers = n;
	return means;
}

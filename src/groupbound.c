/*-------------------------------------------------------------------------
 *
 * groupbound.c
 *	  The bound on the groups each user contributes to in a grouped release:
 *	  a user found in more than k = uldp.max_groups_per_user groups keeps a
 *	  uniformly random k of them.
 *
 * The grouped rewrite (grouping.c) adds two calls to a grouped release's
 * query, both given the release's slot (a constant that names it), k, the
 * user id and the grouping keys:
 *
 *	- uldp.group_register(...) in WHERE, evaluated on every row that passes
 *	  the query's filters, while the rows are read, records the row's group
 *	  for its user;
 *	- uldp.group_member(...) replaces the user argument of every uldp
 *	  aggregate of the query level: it returns the user id when the row's
 *	  group is one its user keeps, and NULL otherwise, which every uldp
 *	  aggregate skips;
 *	- uldp.group_first(...) is the user argument of the level's partition
 *	  selection (selection.c): the user id on the first row of each kept
 *	  (user, group) pair of the run, NULL on every other row, so that
 *	  selection counts the users that keep each group by counting rows,
 *	  without a table of users of its own.
 *
 * The executor runs the aggregates only after every row was registered:
 * registration is a subquery of its own, run once before the first row is
 * aggregated, which ends with uldp.group_registered() (grouping.c; the plan
 * is checked before the statement runs, statement.c).  Until then
 * group_member keeps nobody.
 *
 * Which groups a user keeps: a keyed pseudorandom function (SipHash-2-4,
 * with a key drawn from uldp's random source for every run) gives each
 * (user, group) pair a 64-bit value; a user keeps the k groups of smallest
 * value, so a uniformly random k-subset of its groups.  Only the k smallest
 * values of each user are stored.  A group is named by the bytes of its
 * keys, so two keys that GROUP BY holds equal but whose bytes differ (1.0
 * and 1.00, or 0 and -0) count as two groups here: the user then keeps at
 * most k of these finer groups, so at most k of the real ones.  Users are
 * named by uldp_user_key(); two ids with the same key share one set of k
 * groups, which only lowers what each contributes.
 *
 * Whatever the registry holds, every user keeps at most k groups:
 * group_member() answers from the set of at most k values, and
 * group_first() returns a user at most once for each of them in a run
 * (a stored value's lowest bit marks it seen; the values themselves have
 * it clear).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "port/pg_bitutils.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "groupbound.h"
#include "random.h"
#include "userstate.h"

int			uldp_max_groups_per_user = 1;

static inline uint32
bound_user_hash(uint64 id)
{
	return (uint32) uldp_mix64(id);
}

/*
 * One user's entry, 24 bytes: for k = 1 the smallest value itself, for k > 1
 * the number of its row in the values array, which holds the user's count
 * of values and then room for k of them.  Registration costs a cache miss
 * or two per row once the users outgrow the CPU caches, so the entry is kept
 * small and the rows are registered a few at a time (register_pair).
 */
typedef struct BoundUser
{
	uint64		id;
	uint64		smallest;		/* k = 1 */
	uint32		row;			/* k > 1 */
	char		status;
} BoundUser;

#define SH_PREFIX		bound_users
#define SH_ELEMENT_TYPE BoundUser
#define SH_KEY_TYPE		uint64
#define SH_KEY			id
#define SH_HASH_KEY(tb, key) bound_user_hash(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* pairs buffered while their user's bucket is prefetched */
#define PENDING_PAIRS 8
/* users the values array has room for at first */
#define INITIAL_VALUE_ROWS 1024

struct UldpGroupBound
{
	int64		slot;
	int			groups_per_user;
	MemoryContext owner;		/* the executor's memory this registry serves */
	MemoryContext context;		/* the registry's, emptied for every run */
	bound_users_hash *users;
	/* k > 1: per user, its count of values, then k values */
	uint64	   *values;
	uint32		value_rows;		/* rows in use */
	uint32		value_capacity; /* rows allocated */
	/* registered pairs not yet added (see register_pair) */
	int			npending;
	struct
	{
		uint64		user;
		uint64		value;
		uint32		hash;
	}			pending[PENDING_PAIRS];
	bool		complete;		/* every row registered */
	uint64		key[2];			/* of the pseudorandom function */
	/*
	 * group_member's last answer: the aggregates of a row (and its partition
	 * selection) ask about the same pair one after the other
	 */
	StringInfoData last_pair;
	uint64	   *last_kept;		/* its stored value, or NULL if not kept */
	UldpGroupBound *next;
};

/* every prepared grouped release of this backend, newest first */
static UldpGroupBound *bounds = NULL;
static int64 last_slot = 0;

/* A slot for a grouped release being planned. */
int64
uldp_group_bound_next_slot(void)
{
	return ++last_slot;
}

/*
 * Worst-case memory per row read: a row may bring a new user, its entry
 * (with the hash table's slack: up to twice the entries over the fill
 * factor, just after a doubling) and, for k > 1, its row of the values array
 * (up to twice the rows in use, and while the array doubles, the old one
 * too).
 */
double
uldp_group_bound_bytes_per_row(int groups_per_user)
{
	return sizeof(BoundUser) / ULDP_HASH_FILLFACTOR * 2 +
		(groups_per_user > 1 ? 3.0 * (groups_per_user + 1) * sizeof(uint64) : 0);
}

static void
forget_bound(void *arg)
{
	UldpGroupBound **link = &bounds;

	while (*link != NULL && *link != (UldpGroupBound *) arg)
		link = &(*link)->next;
	if (*link != NULL)
		*link = (*link)->next;
}

/* Empties the registry, with a new key (before reading rows). */
static void
bound_reset(UldpGroupBound *bound)
{
	MemoryContextReset(bound->context);
	bound->users = bound_users_create(bound->context, 1024, NULL);
	bound->values = NULL;
	bound->value_rows = 0;
	bound->value_capacity = 0;
	bound->npending = 0;
	bound->complete = false;
	/* the memo starts empty: no pair has a negative length */
	{
		MemoryContext old = MemoryContextSwitchTo(bound->context);

		initStringInfo(&bound->last_pair);
		MemoryContextSwitchTo(old);
	}
	bound->last_pair.len = -1;
	bound->last_kept = NULL;
	bound->key[0] = uldp_random_u64();
	bound->key[1] = uldp_random_u64();
}

/*
 * The registry of a grouped release, for the executor state whose memory
 * is "context"; forgotten when that memory goes away.
 */
UldpGroupBound *
uldp_group_bound_create(int64 slot, int groups_per_user, MemoryContext context)
{
	UldpGroupBound *bound = MemoryContextAllocZero(context, sizeof(UldpGroupBound));
	MemoryContextCallback *callback = MemoryContextAlloc(context, sizeof(MemoryContextCallback));

	bound->slot = slot;
	bound->groups_per_user = groups_per_user;
	bound->owner = context;
	bound->context = AllocSetContextCreate(context, "uldp group bound", ALLOCSET_DEFAULT_SIZES);
	bound->next = bounds;
	bounds = bound;
	callback->func = forget_bound;
	callback->arg = bound;
	MemoryContextRegisterResetCallback(context, callback);
	bound_reset(bound);
	return bound;
}

/*
 * The registry of "slot" that serves the execution a grouping function is
 * part of: the one made for the executor memory that holds the function's
 * call (or an ancestor of it).  Two runs of one plan (two cursors of one
 * prepared statement) share the slot, never a registry.
 */
static UldpGroupBound *
find_bound(int64 slot, MemoryContext call_context)
{
	for (MemoryContext context = call_context; context != NULL; context = context->parent)
		for (UldpGroupBound *bound = bounds; bound != NULL; bound = bound->next)
			if (bound->slot == slot && bound->owner == context)
				return bound;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uldp grouped release %lld was not prepared", (long long) slot),
			 errhint("The grouping functions of uldp only run inside the grouped releases that uldp rewrites.")));
	return NULL;
}

/* SipHash-2-4 (Aumasson and Bernstein) of "data" under "key" */
#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND \
	do { \
		v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32); \
		v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32); \
	} while (0)

static uint64
siphash24(const uint64 key[2], const unsigned char *data, size_t len)
{
	uint64		v0 = key[0] ^ UINT64CONST(0x736f6d6570736575);
	uint64		v1 = key[1] ^ UINT64CONST(0x646f72616e646f6d);
	uint64		v2 = key[0] ^ UINT64CONST(0x6c7967656e657261);
	uint64		v3 = key[1] ^ UINT64CONST(0x7465646279746573);
	uint64		last = (uint64) len << 56;
	size_t		full = len - len % 8;

	for (size_t i = 0; i < full; i += 8)
	{
		uint64		m;

		/* the message is read as little-endian words */
#ifdef WORDS_BIGENDIAN
		m = 0;
		for (int b = 0; b < 8; b++)
			m |= (uint64) data[i + b] << (8 * b);
#else
		memcpy(&m, data + i, sizeof(m));
#endif
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t b = 0; b < len % 8; b++)
		last |= (uint64) data[full + b] << (8 * b);
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* What a call site of group_register or group_member keeps between rows. */
typedef struct CallCache
{
	UldpGroupBound *bound;
	int16		user_typlen;
	bool		user_byval;
	int			nkeys;
	int16	   *typlen;
	bool	   *byval;
	StringInfoData bytes;
} CallCache;

/* Arguments: slot, k, user id, then the grouping keys. */
#define FIRST_KEY_ARG 3

static CallCache *
call_cache(FunctionCallInfo fcinfo)
{
	CallCache  *cache = fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		if (PG_ARGISNULL(0))
			elog(ERROR, "uldp grouping function called without a slot");
		cache = palloc0(sizeof(CallCache));
		cache->bound = find_bound(PG_GETARG_INT64(0), fcinfo->flinfo->fn_mcxt);
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, 2),
						&cache->user_typlen, &cache->user_byval);
		cache->nkeys = PG_NARGS() - FIRST_KEY_ARG;
		cache->typlen = palloc(Max(cache->nkeys, 1) * sizeof(int16));
		cache->byval = palloc(Max(cache->nkeys, 1) * sizeof(bool));
		for (int i = 0; i < cache->nkeys; i++)
			get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, FIRST_KEY_ARG + i),
							&cache->typlen[i], &cache->byval[i]);
		initStringInfo(&cache->bytes);
		fcinfo->flinfo->fn_extra = cache;
		MemoryContextSwitchTo(old);
	}
	return cache;
}

/* appendBinaryStringInfo, inline while the buffer has room (once per key of every row) */
static inline void
append_bytes(StringInfo bytes, const void *data, int length)
{
	if (bytes->len + length >= bytes->maxlen)
		enlargeStringInfo(bytes, length);
	memcpy(bytes->data + bytes->len, data, length);
	bytes->len += length;
}

/* keys up to this many bytes name a group as they are; longer ones by a hash */
#define INLINE_KEY_BYTES 64

/*
 * Appends a key of variable length: its length, then its bytes, or for a
 * long key their SipHash under the run's key.  The buffer stays short
 * whatever the keys' sizes, so appending cannot fail on a long value (a
 * failure that would depend on the rows); two long keys of one length
 * share a name with probability 2^-64 under the secret key.
 */
static void
append_variable(StringInfo bytes, const UldpGroupBound *bound, const char *data, uint32 length)
{
	append_bytes(bytes, &length, sizeof(length));
	if (length <= INLINE_KEY_BYTES)
		append_bytes(bytes, data, length);
	else
	{
		uint64		hash = siphash24(bound->key, (const unsigned char *) data, length);

		append_bytes(bytes, &hash, sizeof(hash));
	}
}

/*
 * The bytes that name the row's (user, group) in cache->bytes, or false when
 * the row has no user (NULL, or an id that uldp skips).
 */
static bool
pair_bytes(FunctionCallInfo fcinfo, CallCache *cache, uint64 *user)
{
	StringInfo	bytes = &cache->bytes;

	if (PG_ARGISNULL(2) ||
		!uldp_user_key(PG_GETARG_DATUM(2), cache->user_byval, cache->user_typlen, user))
		return false;
	bytes->len = 0;
	append_bytes(bytes, user, sizeof(uint64));
	for (int i = 0; i < cache->nkeys; i++)
	{
		Datum		key = PG_GETARG_DATUM(FIRST_KEY_ARG + i);
		char		isnull = PG_ARGISNULL(FIRST_KEY_ARG + i);

		append_bytes(bytes, &isnull, 1);
		if (isnull)
			continue;
		if (cache->byval[i])
			append_bytes(bytes, &key, sizeof(Datum));
		else if (cache->typlen[i] > 0)
			append_bytes(bytes, DatumGetPointer(key), cache->typlen[i]);
		else if (cache->typlen[i] == -1)
		{
			struct varlena *value = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(key));

			append_variable(bytes, cache->bound, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
		}
		else
			append_variable(bytes, cache->bound, DatumGetCString(key),
							strlen(DatumGetCString(key)) + 1);
	}
	return true;
}

/* a stored value's mark: group_first returned its pair in this run */
#define SEEN_MARK UINT64CONST(1)

/* The pseudorandom value of a pair named by "bytes" (its lowest bit clear) */
static inline uint64
pair_value(const UldpGroupBound *bound, StringInfo bytes)
{
	return siphash24(bound->key, (const unsigned char *) bytes->data, bytes->len) & ~SEEN_MARK;
}

/* A user's row of the values array (k > 1): its count of values, then k values. */
static inline uint64 *
value_row(const UldpGroupBound *bound, uint32 row)
{
	return bound->values + (Size) row * (bound->groups_per_user + 1);
}

/* A new, empty row of the values array, for a new user (k > 1). */
static uint32
new_value_row(UldpGroupBound *bound)
{
	if (bound->value_rows == bound->value_capacity)
	{
		Size		capacity = Max((Size) bound->value_capacity * 2, INITIAL_VALUE_ROWS);
		Size		bytes = capacity * (bound->groups_per_user + 1) * sizeof(uint64);

		bound->values = bound->values == NULL ?
			MemoryContextAllocHuge(bound->context, bytes) :
			repalloc_huge(bound->values, bytes);
		bound->value_capacity = capacity;
	}
	value_row(bound, bound->value_rows)[0] = 0;
	return bound->value_rows++;
}

/* Keeps "value" in a user's row if it is among its k smallest (distinct) values. */
static void
keep_value(uint64 *row, int k, uint64 value)
{
	uint64	   *values = row + 1;
	uint64		n = row[0];
	uint64		largest = 0;

	for (uint64 i = 0; i < n; i++)
	{
		if ((values[i] & ~SEEN_MARK) == value)
			return;
		if (values[i] > values[largest])
			largest = i;
	}
	if (n < (uint64) k)
	{
		values[n] = value;
		row[0] = n + 1;
	}
	else if (value < values[largest])
		values[largest] = value;
}

/*
 * Adds the buffered pairs.  Their users' buckets were prefetched when they
 * were buffered; for k > 1 the users' rows of the values array are
 * prefetched together before any is changed.
 */
static void
register_flush(UldpGroupBound *bound)
{
	int			k = bound->groups_per_user;
	uint32		rows[PENDING_PAIRS];

	for (int i = 0; i < bound->npending; i++)
	{
		uint64		value = bound->pending[i].value;
		bool		found;
		BoundUser  *entry = bound_users_insert_hash(bound->users, bound->pending[i].user,
												   bound->pending[i].hash, &found);

		if (k == 1)
			entry->smallest = found && entry->smallest <= value ? entry->smallest : value;
		else
		{
			if (!found)
				entry->row = new_value_row(bound);
			rows[i] = entry->row;
			__builtin_prefetch(value_row(bound, rows[i]));
		}
	}
	if (k > 1)
		for (int i = 0; i < bound->npending; i++)
			keep_value(value_row(bound, rows[i]), k, bound->pending[i].value);
	bound->npending = 0;
	/* group_member's last answer may point at a value just moved */
	bound->last_pair.len = -1;
}

PG_FUNCTION_INFO_V1(uldp_group_register);

/*
 * uldp.group_register(slot bigint, k int, user_id anyelement, VARIADIC keys
 * "any") returns boolean: records the row's group for its user; always true.
 * The pair is buffered while its user's bucket is prefetched: once the users
 * outgrow the CPU caches, each pair costs a cache miss, and buffering a few
 * overlaps them.  group_registered adds what is still buffered.
 */
Datum
uldp_group_register(PG_FUNCTION_ARGS)
{
	CallCache  *cache = call_cache(fcinfo);
	UldpGroupBound *bound = cache->bound;
	uint64		user;

	if (pair_bytes(fcinfo, cache, &user))
	{
		uint32		hash = bound_user_hash(user);

		__builtin_prefetch(&bound->users->data[hash & bound->users->sizemask]);
		bound->pending[bound->npending].user = user;
		bound->pending[bound->npending].value = pair_value(bound, &cache->bytes);
		bound->pending[bound->npending].hash = hash;
		if (++bound->npending == PENDING_PAIRS)
			register_flush(bound);
	}
	PG_RETURN_BOOL(true);
}

/*
 * The stored value of the row's (user, group) pair if its user keeps the
 * group, else NULL; nobody keeps any group before registration is complete.
 * The aggregates of a row (and its partition selection) ask about the same
 * pair one after the other: the last answer is kept.
 */
static uint64 *
kept_value(FunctionCallInfo fcinfo)
{
	CallCache  *cache = call_cache(fcinfo);
	UldpGroupBound *bound = cache->bound;
	uint64		user;
	uint64	   *kept = NULL;
	BoundUser  *entry;

	if (!bound->complete || !pair_bytes(fcinfo, cache, &user))
		return NULL;
	if (bound->last_pair.len == cache->bytes.len &&
		memcmp(bound->last_pair.data, cache->bytes.data, cache->bytes.len) == 0)
		return bound->last_kept;
	entry = bound_users_lookup(bound->users, user);
	if (entry != NULL)
	{
		uint64		value = pair_value(bound, &cache->bytes);

		if (bound->groups_per_user == 1)
			kept = (entry->smallest & ~SEEN_MARK) == value ? &entry->smallest : NULL;
		else
		{
			uint64	   *row = value_row(bound, entry->row);

			for (uint64 i = 1; i <= row[0] && kept == NULL; i++)
				if ((row[i] & ~SEEN_MARK) == value)
					kept = &row[i];
		}
	}
	bound->last_pair.len = 0;
	append_bytes(&bound->last_pair, cache->bytes.data, cache->bytes.len);
	bound->last_kept = kept;
	return kept;
}

PG_FUNCTION_INFO_V1(uldp_group_member);

/*
 * uldp.group_member(slot bigint, k int, user_id anyelement, VARIADIC keys
 * "any") returns anyelement: the user id if its user keeps the row's group,
 * else NULL.
 */
Datum
uldp_group_member(PG_FUNCTION_ARGS)
{
	if (kept_value(fcinfo) == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(2));
}

PG_FUNCTION_INFO_V1(uldp_group_first);

/*
 * uldp.group_first(slot bigint, k int, user_id anyelement, VARIADIC keys
 * "any") returns anyelement: the user id on the first row of the run whose
 * user keeps the row's group, else NULL.
 */
Datum
uldp_group_first(PG_FUNCTION_ARGS)
{
	uint64	   *kept = kept_value(fcinfo);

	if (kept == NULL || (*kept & SEEN_MARK) != 0)
		PG_RETURN_NULL();
	*kept |= SEEN_MARK;
	PG_RETURN_DATUM(PG_GETARG_DATUM(2));
}

/*
 * A new run of the grouped release (a rescan): the registry stays, every
 * pair is unseen again.
 */
void
uldp_group_bound_restart(UldpGroupBound *bound)
{
	bound_users_iterator iterator;
	BoundUser  *entry;

	bound_users_start_iterate(bound->users, &iterator);
	while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
		entry->smallest &= ~SEEN_MARK;
	for (Size i = 0; i < (Size) bound->value_rows * (bound->groups_per_user + 1); i++)
		if (i % (bound->groups_per_user + 1) != 0)
			bound->values[i] &= ~SEEN_MARK;
}

PG_FUNCTION_INFO_V1(uldp_group_registered);

/*
 * uldp.group_registered(slot bigint, rows bigint) returns boolean: marks the
 * registration of the grouped release complete (its argument, a count of
 * the registered rows, was computed by reading them all); always true.
 */
Datum
uldp_group_registered(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound;

	if (PG_ARGISNULL(0))
		elog(ERROR, "uldp.group_registered called without a slot");
	bound = find_bound(PG_GETARG_INT64(0), fcinfo->flinfo->fn_mcxt);
	register_flush(bound);
	bound->complete = true;
	PG_RETURN_BOOL(true);
}

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
 *	  aggregate of the query level (and of its partition selection): it
 *	  returns the user id when the row's group is one its user keeps, and
 *	  NULL otherwise, which every uldp aggregate skips.
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
 * Whatever the registry holds (even rows registered by another run of the
 * same plan, with cursors interleaved), every user keeps at most k groups:
 * group_member() answers from the set of at most k values.
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

/* One user's smallest pair values: k of them inline for k = 1, else an array. */
typedef struct BoundUser
{
	uint64		id;
	uint64		smallest;		/* k = 1 */
	uint64	   *values;			/* k > 1: groups_per_user entries */
	uint32		n;
	char		status;
} BoundUser;

#define SH_PREFIX		bound_users
#define SH_ELEMENT_TYPE BoundUser
#define SH_KEY_TYPE		uint64
#define SH_KEY			id
#define SH_HASH_KEY(tb, key) ((uint32) uldp_mix64(key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

struct UldpGroupBound
{
	int64		slot;
	int			groups_per_user;
	MemoryContext context;		/* the registry's, emptied for every run */
	bound_users_hash *users;
	bool		complete;		/* every row registered */
	uint64		key[2];			/* of the pseudorandom function */
	/*
	 * group_member's last answer: the aggregates of a row (and its partition
	 * selection) ask about the same pair one after the other
	 */
	StringInfoData last_pair;
	bool		last_kept;
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
 * factor, just after a doubling) and, for k > 1, its array of k values, a
 * chunk of the memory context (rounded up to a power of two, below the
 * 8 kB chunk limit for k <= ULDP_MAX_GROUPS_PER_USER, plus a header).
 */
double
uldp_group_bound_bytes_per_row(int groups_per_user)
{
	return sizeof(BoundUser) / ULDP_HASH_FILLFACTOR * 2 +
		(groups_per_user > 1 ?
		 (double) pg_nextpower2_32(groups_per_user * sizeof(uint64)) + 2 * sizeof(void *) : 0);
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
	bound->complete = false;
	bound->last_pair.data = NULL;
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
	bound->context = AllocSetContextCreate(context, "uldp group bound", ALLOCSET_DEFAULT_SIZES);
	bound->next = bounds;
	bounds = bound;
	callback->func = forget_bound;
	callback->arg = bound;
	MemoryContextRegisterResetCallback(context, callback);
	bound_reset(bound);
	return bound;
}

static UldpGroupBound *
find_bound(int64 slot)
{
	for (UldpGroupBound *bound = bounds; bound != NULL; bound = bound->next)
		if (bound->slot == slot)
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
		cache->bound = find_bound(PG_GETARG_INT64(0));
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

/* The pseudorandom value of a pair named by "bytes" */
static inline uint64
pair_value(const UldpGroupBound *bound, StringInfo bytes)
{
	return siphash24(bound->key, (const unsigned char *) bytes->data, bytes->len);
}

static inline uint64 *
user_values(const UldpGroupBound *bound, BoundUser *user)
{
	return bound->groups_per_user == 1 ? &user->smallest : user->values;
}

/* Keeps "value" if it is among the user's k smallest (distinct) values. */
static void
register_value(UldpGroupBound *bound, BoundUser *user, bool found, uint64 value)
{
	int			k = bound->groups_per_user;
	uint64	   *values;
	uint32		largest = 0;

	if (!found)
	{
		user->n = 0;
		user->values = k > 1 ? MemoryContextAlloc(bound->context, k * sizeof(uint64)) : NULL;
	}
	values = user_values(bound, user);
	for (uint32 i = 0; i < user->n; i++)
	{
		if (values[i] == value)
			return;
		if (values[i] > values[largest])
			largest = i;
	}
	if (user->n < (uint32) k)
		values[user->n++] = value;
	else if (value < values[largest])
		values[largest] = value;
}

PG_FUNCTION_INFO_V1(uldp_group_register);

/*
 * uldp.group_register(slot bigint, k int, user_id anyelement, VARIADIC keys
 * "any") returns boolean: records the row's group for its user; always true.
 */
Datum
uldp_group_register(PG_FUNCTION_ARGS)
{
	CallCache  *cache = call_cache(fcinfo);
	UldpGroupBound *bound = cache->bound;
	uint64		user;
	bool		found;
	BoundUser  *entry;

	if (pair_bytes(fcinfo, cache, &user))
	{
		entry = bound_users_insert(bound->users, user, &found);
		register_value(bound, entry, found, pair_value(bound, &cache->bytes));
	}
	PG_RETURN_BOOL(true);
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
	CallCache  *cache = call_cache(fcinfo);
	UldpGroupBound *bound = cache->bound;
	uint64		user;
	bool		kept = false;

	if (!bound->complete || !pair_bytes(fcinfo, cache, &user))
		PG_RETURN_NULL();
	if (bound->last_pair.data != NULL && bound->last_pair.len == cache->bytes.len &&
		memcmp(bound->last_pair.data, cache->bytes.data, cache->bytes.len) == 0)
		kept = bound->last_kept;
	else
	{
		BoundUser  *entry = bound_users_lookup(bound->users, user);

		if (entry != NULL)
		{
			uint64		value = pair_value(bound, &cache->bytes);
			uint64	   *values = user_values(bound, entry);

			for (uint32 i = 0; i < entry->n && !kept; i++)
				kept = values[i] == value;
		}
		if (bound->last_pair.data == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(bound->context);

			initStringInfo(&bound->last_pair);
			MemoryContextSwitchTo(old);
		}
		bound->last_pair.len = 0;
		append_bytes(&bound->last_pair, cache->bytes.data, cache->bytes.len);
		bound->last_kept = kept;
	}
	if (!kept)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(2));
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
	if (PG_ARGISNULL(0))
		elog(ERROR, "uldp.group_registered called without a slot");
	find_bound(PG_GETARG_INT64(0))->complete = true;
	PG_RETURN_BOOL(true);
}

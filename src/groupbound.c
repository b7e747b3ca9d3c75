/*-------------------------------------------------------------------------
 *
 * groupbound.c
 *	  The bound on the groups each user contributes to in a grouped release:
 *	  a user found in more than k = uldp.max_groups_per_user groups keeps a
 *	  uniformly random k of them.
 *
 * The grouped rewrite (grouping.c) adds three calls to a grouped release's
 * query, each given the release's slot (a constant that names it), k, the
 * user id and the grouping keys:
 *
 *	- the aggregate uldp.group_registry(...), over the level's rows in a CTE
 *	  of its own, records each row's group for its user and returns the
 *	  registry's snapshot;
 *	- uldp.group_member(...) replaces the user argument of every uldp
 *	  aggregate of the query level: it returns the user id when the row's
 *	  group is one its user keeps, and NULL otherwise, which every uldp
 *	  aggregate skips;
 *	- uldp.group_users(...) is the argument of the level's partition
 *	  selection (selection.c): the number of users that keep the row's group.
 *
 * group_member and group_users take the snapshot as an argument (an
 * initplan that reads the CTE), so they run only after every row was
 * registered (grouping.c; the plan is checked before the statement runs,
 * statement.c).  The leader reads its registry itself; parallel workers
 * read the snapshot, which then holds the key, the dropped values and each
 * group's count of users.  In a parallel registration every process
 * records its rows into a partial registry under the registry's key (which
 * uldp.group_key passes to the workers), and the leader merges them into
 * the registry: a user's k smallest values are the k smallest of its
 * partial k smallest, and a value a process dropped had k smaller ones of
 * the same user there, so it is dropped in the merge too.
 *
 * Which groups a user keeps: a keyed pseudorandom function (SipHash-2-4,
 * with a key drawn from uldp's random source for every run) gives each
 * (user, group) pair a 64-bit value; a user keeps the k groups of smallest
 * value, so a uniformly random k-subset of its groups.  A group is named by
 * the bytes of its keys, so two keys that GROUP BY holds equal but whose
 * bytes differ (1.0 and 1.00, or 0 and -0) count as two groups here: the
 * user then keeps at most k of these finer groups, so at most k of the real
 * ones.  Users are named by uldp_user_key(); two ids with the same key share
 * one set of k groups, which only lowers what each contributes.
 *
 * What is stored: for each user, its k smallest values and the numbers of
 * their groups (groupnames.c), and the set of dropped values: every value
 * that was not, or stopped being, among its user's k smallest.  A value is
 * dropped for good (a user's k smallest only ever get smaller), so after
 * registration the dropped values are exactly the pairs that their users do
 * not keep.  group_member keeps a row unless its pair's value is dropped:
 * when no user has more than k groups (the common case) it needs no lookup
 * at all.  That is exact because the aggregated rows are the registered
 * rows: the same FROM and WHERE, read under the same snapshot, with no
 * volatile function and nothing read twice differently (grouping.c refuses
 * such levels before planning).  A dropped value shared by a kept pair of
 * another user (probability 2^-64 per pair) only makes that user lose a
 * group.  The users that keep each group are counted once, when
 * registration completes, from the stored group numbers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "port/pg_bitutils.h"
#include "access/parallel.h"
#include "executor/nodeAgg.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "groupbound.h"
#include "groupnames.h"
#include "params.h"
#include "radixsort.h"
#include "random.h"
#include "siphash.h"
#include "tablemem.h"
#include "userstate.h"

int			uldp_max_groups_per_user = 1;

static inline uint32
bound_user_hash(uint64 id)
{
	return (uint32) uldp_mix64(id);
}

/*
 * One user's entry, 24 bytes: for k = 1 its smallest value and the number of
 * that value's group; for k > 1 the number of its row in the values array
 * (value_row).  Registration costs a cache miss or two per row once the
 * users outgrow the CPU caches, so the entry is kept small and the rows are
 * registered a few at a time (group_register).
 */
typedef struct BoundUser
{
	uint64		id;
	uint64		smallest;		/* k = 1 */
	uint32		group_or_row;	/* k = 1: smallest's group; k > 1: the row */
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
#define SH_USE_NONDEFAULT_ALLOCATOR
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"
ULDP_TABLE_ALLOCATOR(bound_users)

/* A dropped value: pseudorandom already, so its own bits are its hash. */
typedef struct DroppedValue
{
	uint64		value;
	char		status;
} DroppedValue;

#define SH_PREFIX		dropped_values
#define SH_ELEMENT_TYPE DroppedValue
#define SH_KEY_TYPE		uint64
#define SH_KEY			value
#define SH_HASH_KEY(tb, key) ((uint32) (key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		static inline
#define SH_USE_NONDEFAULT_ALLOCATOR
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"
ULDP_TABLE_ALLOCATOR(dropped_values)

/* pairs buffered while their user's bucket is prefetched */
#define PENDING_PAIRS 8
/* users the values array has room for at first */
#define INITIAL_VALUE_ROWS 1024

struct UldpGroupBound
{
	int64		slot;
	int			groups_per_user;
	MemoryContext owner;		/* the executor's memory this registry serves */
	MemoryContext context;		/* the registry's */
	bound_users_hash *users;
	UldpGroupNames *names;
	dropped_values_hash *dropped;
	/* k > 1: per user, its count of values, k values and k group numbers */
	uint64	   *values;
	Size		row_words;
	Size		value_rows;		/* rows in use */
	Size		value_capacity; /* rows allocated */
	/* registered pairs not yet added (see group_register) */
	int			npending;
	struct
	{
		uint64		user;
		uint64		value;
		uint32		group;
		uint32		hash;
	}			pending[PENDING_PAIRS];
	/* k > 1: added pairs whose rows are being prefetched (register_flush) */
	int			ndeferred;
	struct
	{
		uint32		row;
		uint32		group;
		uint64		value;
	}			deferred[PENDING_PAIRS];
	bool		complete;		/* every row registered */
	int64	   *group_users;	/* once complete: per group number, its users */
	bool		for_workers;	/* parallel workers read it: snapshot in full */
	bytea	   *snapshot;		/* once complete: group_registered's result */
	uint64		key[2];			/* of the pseudorandom function */
	/*
	 * group_member's last answer: the aggregates of a row ask about the same
	 * pair one after the other
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

/* keys up to this many bytes name a group as they are; longer ones by a hash */
#define INLINE_KEY_BYTES 64

/*
 * The longest name of a group with keys of these types (see pair_bytes):
 * per key a NULL flag and its bytes, a variable-length key its length and at
 * most INLINE_KEY_BYTES.
 */
double
uldp_group_bound_name_bytes(List *key_types)
{
	double		bytes = 0;
	ListCell   *lc;

	foreach(lc, key_types)
	{
		int16		typlen;
		bool		byval;

		get_typlenbyval(lfirst_oid(lc), &typlen, &byval);
		bytes += 1 + (byval ? sizeof(Datum) :
					  typlen > 0 ? typlen : sizeof(uint32) + INLINE_KEY_BYTES);
	}
	return bytes;
}

/*
 * Worst-case memory per row read: a row may bring a new user, its entry
 * (with the hash table's slack: up to twice the entries over the fill
 * factor, just after a doubling) and, for k > 1, its row of the values array
 * (up to twice the rows in use, and while the array doubles, the old one
 * too); a new group name with its count of users; and a dropped value.
 */
double
uldp_group_bound_bytes_per_row(int groups_per_user, double name_bytes)
{
	return sizeof(BoundUser) / ULDP_HASH_FILLFACTOR * 2 +
		(groups_per_user > 1 ?
		 3.0 * (1 + groups_per_user + (groups_per_user + 1) / 2) * sizeof(uint64) : 0) +
		uldp_group_names_bytes_per_name(name_bytes) + sizeof(int64) +
		sizeof(DroppedValue) / ULDP_HASH_FILLFACTOR * 2;
}

/*
 * Worst-case bytes per row read of the snapshot that a parallel plan's
 * workers receive: a row adds at most one dropped value and one group.
 */
double
uldp_group_bound_snapshot_bytes_per_row(void)
{
	return sizeof(uint64) + sizeof(uint64) + sizeof(int64);
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

/*
 * An empty registry (before reading rows), whose names are hashed with
 * "names_seed".
 */
static void
bound_init(UldpGroupBound *bound, uint64 names_seed)
{
	bound->users = bound_users_create(bound->context, 1024, NULL);
	bound->names = uldp_group_names_create(bound->context, names_seed);
	bound->dropped = dropped_values_create(bound->context, 64, NULL);
	bound->values = NULL;
	bound->row_words = 1 + bound->groups_per_user + (bound->groups_per_user + 1) / 2;
	bound->value_rows = 0;
	bound->value_capacity = 0;
	bound->npending = 0;
	bound->ndeferred = 0;
	bound->complete = false;
	bound->group_users = NULL;
	/* the memo starts empty: no pair has a negative length */
	{
		MemoryContext old = MemoryContextSwitchTo(bound->context);

		initStringInfo(&bound->last_pair);
		MemoryContextSwitchTo(old);
	}
	bound->last_pair.len = -1;
	bound->last_kept = false;
}

/*
 * The registry of a grouped release, for the executor state whose memory
 * is "context"; forgotten when that memory goes away.
 */
static UldpGroupBound *
uldp_group_bound_create(int64 slot, int groups_per_user, MemoryContext context)
{
	static bool checked = false;
	UldpGroupBound *bound = MemoryContextAllocZero(context, sizeof(UldpGroupBound));
	MemoryContextCallback *callback = MemoryContextAlloc(context, sizeof(MemoryContextCallback));

	/* the pseudorandom function, once per backend, before it picks groups */
	if (!checked)
	{
		if (!uldp_siphash24_selftest())
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("uldp's pseudorandom function does not match its reference vectors"),
					 errhint("The build of uldp is broken on this platform: rebuild it and report the compiler and platform.")));
		checked = true;
	}

	bound->slot = slot;
	bound->groups_per_user = groups_per_user;
	bound->owner = context;
	bound->context = AllocSetContextCreate(context, "uldp group bound", ALLOCSET_DEFAULT_SIZES);
	bound->next = bounds;
	bounds = bound;
	callback->func = forget_bound;
	callback->arg = bound;
	MemoryContextRegisterResetCallback(context, callback);
	bound_init(bound, uldp_random_u64());
	bound->key[0] = uldp_random_u64();
	bound->key[1] = uldp_random_u64();
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

/* entries of a call site's memo of group numbers */
#define GROUP_MEMO_SIZE 16

/* a by-value key and its group's number */
typedef struct GroupMemo
{
	bool		valid;
	Datum		key;
	uint32		group;
	int64		users;			/* group_users: the users that keep it */
} GroupMemo;

/*
 * A registry's snapshot: group_registered's result, the value that
 * group_member and group_users receive.  The leader reads its registry
 * itself, so its snapshot only names it (ndropped = -1); in a parallel plan
 * the snapshot holds what the workers need (PostgreSQL passes the values of
 * initplans to them): after this header, the dropped values, sorted, then
 * one SnapshotGroup per group, sorted by the value of its name under the
 * key.  Unaligned: read with memcpy.
 */
typedef struct SnapshotHeader
{
	uint32		magic;			/* SNAPSHOT_MAGIC */
	uint16		version;		/* SNAPSHOT_VERSION */
	uint16		unused;
	int32		groups_per_user;
	int32		unused2;
	int64		slot;
	uint64		key[2];
	int64		ndropped;		/* -1: only the leader reads it */
	int64		ngroups;
} SnapshotHeader;

typedef struct SnapshotGroup
{
	uint64		name;			/* SipHash of the group's name under the key */
	int64		users;
} SnapshotGroup;

#define SNAPSHOT_MAGIC 0x554c4731	/* "ULG1" */
#define SNAPSHOT_VERSION 1

/* What a call site of a grouping function keeps between rows. */
typedef struct CallCache
{
	UldpGroupBound *bound;		/* the leader's registry, or NULL in a worker */
	const uint64 *key;			/* of the pseudorandom function */
	/* in a worker: the snapshot it reads, and where its parts are */
	const char *snapshot;
	SnapshotHeader header;
	const char *dropped;
	const char *groups;
	StringInfoData last_pair;	/* group_member's last answer, as the registry's */
	bool		last_kept;
	int			user_arg;
	int			first_key_arg;
	int16		user_typlen;
	bool		user_byval;
	int			nkeys;
	int16	   *typlen;
	bool	   *byval;
	StringInfoData bytes;
	/*
	 * One by-value key (a date, an integer): the group numbers of the last
	 * keys seen, so that most rows find their group without naming it; the
	 * names of two equal by-value keys are equal.
	 */
	bool		memo_usable;
	GroupMemo	memo[GROUP_MEMO_SIZE];
} CallCache;

/*
 * A grouping function declared by an older version of the extension's SQL
 * than this library's (before ALTER EXTENSION uldp UPDATE).
 */
static void
refuse_old_version(void) pg_attribute_noreturn();

static void
refuse_old_version(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the grouping functions of uldp are older than its library"),
			 errhint("Update the extension: ALTER EXTENSION uldp UPDATE.")));
}

/*
 * The arguments of group_member and group_users: slot, k, the registry's
 * snapshot, user id, then the grouping keys; group_registry's, after its
 * state, are the same with the key of the pseudorandom function in place
 * of the snapshot.
 */
#define SLOT_ARG 0
#define K_ARG 1
#define SNAPSHOT_ARG 2
#define USER_ARG 3
#define FIRST_KEY_ARG 4

/* "first": 0 for a function, 1 for group_registry's transition (its state) */
static CallCache *
call_cache(FunctionCallInfo fcinfo, int first)
{
	CallCache  *cache = fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		if (PG_ARGISNULL(first + SLOT_ARG) || PG_ARGISNULL(first + K_ARG))
			elog(ERROR, "uldp grouping function called without a slot");
		/* group_member and group_users of uldp 0.8 took no registry */
		if (get_func_nargs(fcinfo->flinfo->fn_oid) != first + FIRST_KEY_ARG + 1)
			refuse_old_version();
		cache = palloc0(sizeof(CallCache));
		/* parallel workers have no registry: they read its snapshot */
		if (!IsParallelWorker())
		{
			cache->bound = find_bound(PG_GETARG_INT64(first + SLOT_ARG), fcinfo->flinfo->fn_mcxt);
			cache->key = cache->bound->key;
		}
		cache->user_arg = first + USER_ARG;
		cache->first_key_arg = first + FIRST_KEY_ARG;
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, cache->user_arg),
						&cache->user_typlen, &cache->user_byval);
		cache->nkeys = PG_NARGS() - cache->first_key_arg;
		cache->typlen = palloc(Max(cache->nkeys, 1) * sizeof(int16));
		cache->byval = palloc(Max(cache->nkeys, 1) * sizeof(bool));
		for (int i = 0; i < cache->nkeys; i++)
			get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, cache->first_key_arg + i),
							&cache->typlen[i], &cache->byval[i]);
		initStringInfo(&cache->bytes);
		initStringInfo(&cache->last_pair);
		cache->last_pair.len = -1;
		cache->memo_usable = cache->nkeys == 1 && cache->byval[0];
		fcinfo->flinfo->fn_extra = cache;
		MemoryContextSwitchTo(old);
	}
	return cache;
}

static void
snapshot_invalid(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid uldp group registry"),
			 errhint("The grouping functions of uldp only run inside the grouped releases that uldp rewrites.")));
}

/*
 * Reads the snapshot that a call of group_member or group_users received
 * (once per value).  The leader checks that it is its own registry's,
 * complete; a worker, that it is whole, and keeps where its parts are.
 */
static void
read_snapshot(FunctionCallInfo fcinfo, CallCache *cache)
{
	bytea	   *value;
	const char *data;
	Size		length;
	SnapshotHeader header;

	if (PG_ARGISNULL(SNAPSHOT_ARG))
		snapshot_invalid();
	value = PG_GETARG_BYTEA_PP(SNAPSHOT_ARG);
	data = VARDATA_ANY(value);
	if (data == cache->snapshot)
		return;
	length = VARSIZE_ANY_EXHDR(value);
	if (length < sizeof(header))
		snapshot_invalid();
	memcpy(&header, data, sizeof(header));
	if (header.magic != SNAPSHOT_MAGIC || header.version != SNAPSHOT_VERSION ||
		header.slot != PG_GETARG_INT64(SLOT_ARG) || header.groups_per_user != PG_GETARG_INT32(K_ARG) ||
		header.ndropped < -1 || header.ngroups < 0 ||
		(header.ndropped >= 0 &&
		 ((uint64) header.ndropped > length / sizeof(uint64) ||
		  (uint64) header.ngroups > length / sizeof(SnapshotGroup) ||
		  length != sizeof(header) + header.ndropped * sizeof(uint64) +
		  header.ngroups * sizeof(SnapshotGroup))))
		snapshot_invalid();
	if (cache->bound != NULL)
	{
		if (!cache->bound->complete ||
			memcmp(cache->bound->key, header.key, sizeof(header.key)) != 0)
			snapshot_invalid();
	}
	else
	{
		if (header.ndropped < 0)
			snapshot_invalid();
		cache->header = header;
		cache->key = cache->header.key;
		cache->dropped = data + sizeof(header);
		cache->groups = cache->dropped + header.ndropped * sizeof(uint64);
		cache->last_pair.len = -1;
	}
	cache->snapshot = data;
}

/*
 * The index of "value" in a sorted array of n unaligned records of "stride"
 * bytes, each starting with its uint64 value, or -1.
 */
static int64
sorted_find(const char *array, int64 n, Size stride, uint64 value)
{
	int64		low = 0;
	int64		high = n;
	uint64		element;

	/* the first element not below "value" is in [low, high] */
	while (low < high)
	{
		int64		middle = low + (high - low) / 2;

		memcpy(&element, array + middle * stride, sizeof(element));
		if (element < value)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == n)
		return -1;
	memcpy(&element, array + low * stride, sizeof(element));
	return element == value ? low : -1;
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
append_variable(StringInfo bytes, const uint64 *key, const char *data, uint32 length)
{
	append_bytes(bytes, &length, sizeof(length));
	if (length <= INLINE_KEY_BYTES)
		append_bytes(bytes, data, length);
	else
	{
		uint64		hash = uldp_siphash24(key, data, length);

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

	if (PG_ARGISNULL(cache->user_arg) ||
		!uldp_user_key(PG_GETARG_DATUM(cache->user_arg), cache->user_byval, cache->user_typlen,
					   user))
		return false;
	bytes->len = 0;
	append_bytes(bytes, user, sizeof(uint64));
	for (int i = 0; i < cache->nkeys; i++)
	{
		Datum		key = PG_GETARG_DATUM(cache->first_key_arg + i);
		char		isnull = PG_ARGISNULL(cache->first_key_arg + i);

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

			append_variable(bytes, cache->key, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
		}
		else
			append_variable(bytes, cache->key, DatumGetCString(key),
							strlen(DatumGetCString(key)) + 1);
	}
	return true;
}

/* The pseudorandom value of a pair named by "bytes" */
static inline uint64
pair_value(const uint64 *key, StringInfo bytes)
{
	return uldp_siphash24(key, bytes->data, bytes->len);
}

/* The group's part of a pair's name: what follows the user's key. */
#define GROUP_NAME(bytes) ((bytes)->data + sizeof(uint64))
#define GROUP_NAME_LENGTH(bytes) ((bytes)->len - sizeof(uint64))

/*
 * The memo entry for the row's key, when the call site has a memo and the
 * key is not NULL; else NULL.
 */
static inline GroupMemo *
group_memo(FunctionCallInfo fcinfo, CallCache *cache)
{
	Datum		key;

	if (!cache->memo_usable || PG_ARGISNULL(cache->first_key_arg))
		return NULL;
	key = PG_GETARG_DATUM(cache->first_key_arg);
	return &cache->memo[(uint32) uldp_mix64((uint64) key) % GROUP_MEMO_SIZE];
}

/*
 * A user's row of the values array (k > 1): its count of values n, then k
 * values, then k group numbers (two to a word); the first n of each are set.
 */
static inline uint64 *
value_row(const UldpGroupBound *bound, uint32 row)
{
	return bound->values + (Size) row * bound->row_words;
}

static inline uint32 *
row_groups(const UldpGroupBound *bound, uint64 *row)
{
	return (uint32 *) (row + 1 + bound->groups_per_user);
}

/* Prefetches every cache line of a user's row (k > 1). */
static inline void
prefetch_row(const UldpGroupBound *bound, const uint64 *row)
{
	for (Size word = 0; word < bound->row_words; word += 64 / sizeof(uint64))
		__builtin_prefetch(row + word);
}

/* A new, empty row of the values array, for a new user (k > 1). */
static uint32
new_value_row(UldpGroupBound *bound)
{
	if (bound->value_rows == bound->value_capacity)
	{
		Size		capacity = Max(bound->value_capacity * 2, INITIAL_VALUE_ROWS);
		Size		bytes = capacity * bound->row_words * sizeof(uint64);

		bound->values = bound->values == NULL ?
			MemoryContextAllocHuge(bound->context, bytes) :
			repalloc_huge(bound->values, bytes);
		bound->value_capacity = capacity;
	}
	value_row(bound, bound->value_rows)[0] = 0;
	return bound->value_rows++;
}

static inline void
drop_value(UldpGroupBound *bound, uint64 value)
{
	bool		found;

	dropped_values_insert(bound->dropped, value, &found);
}

/*
 * Keeps the pair of "value" in a user's row if it is among its k smallest
 * (distinct) values; what is not kept, or no longer, is dropped.
 */
static void
keep_value(UldpGroupBound *bound, uint64 *row, uint64 value, uint32 group)
{
	int			k = bound->groups_per_user;
	uint64	   *values = row + 1;
	uint32	   *groups = row_groups(bound, row);
	uint64		n = row[0];
	uint64		largest = 0;

	for (uint64 i = 0; i < n; i++)
	{
		if (values[i] == value)
			return;
		if (values[i] > values[largest])
			largest = i;
	}
	if (n < (uint64) k)
	{
		values[n] = value;
		groups[n] = group;
		row[0] = n + 1;
	}
	else if (value < values[largest])
	{
		drop_value(bound, values[largest]);
		values[largest] = value;
		groups[largest] = group;
	}
	else
		drop_value(bound, value);
}

/*
 * Adds the buffered pairs.  Their users' buckets were prefetched when they
 * were buffered.  For k > 1 each pair also needs its user's row of the
 * values array: the rows are prefetched here and the pairs deferred to the
 * next flush, so that the prefetches have a batch of rows' time to land.
 * The pairs of a user are still added in the order they were read.
 */
static void
register_flush(UldpGroupBound *bound)
{
	int			k = bound->groups_per_user;

	for (int i = 0; i < bound->ndeferred; i++)
		keep_value(bound, value_row(bound, bound->deferred[i].row), bound->deferred[i].value,
				   bound->deferred[i].group);
	bound->ndeferred = 0;
	for (int i = 0; i < bound->npending; i++)
	{
		uint64		value = bound->pending[i].value;
		bool		found;
		BoundUser  *entry = bound_users_insert_hash(bound->users, bound->pending[i].user,
												   bound->pending[i].hash, &found);

		if (k > 1)
		{
			if (!found)
				entry->group_or_row = new_value_row(bound);
			prefetch_row(bound, value_row(bound, entry->group_or_row));
			bound->deferred[bound->ndeferred].row = entry->group_or_row;
			bound->deferred[bound->ndeferred].value = value;
			bound->deferred[bound->ndeferred].group = bound->pending[i].group;
			bound->ndeferred++;
		}
		else if (!found || value < entry->smallest)
		{
			if (found)
				drop_value(bound, entry->smallest);
			entry->smallest = value;
			entry->group_or_row = bound->pending[i].group;
		}
		else if (value > entry->smallest)
			drop_value(bound, value);
	}
	bound->npending = 0;
}

/*
 * Records the row's group for its user in "bound".  The pair is buffered
 * while its user's bucket is prefetched: once the users outgrow the CPU
 * caches, each pair costs a cache miss, and buffering a few overlaps them.
 * complete_registry adds what is still buffered.
 */
static void
register_row(FunctionCallInfo fcinfo, CallCache *cache, UldpGroupBound *bound)
{
	uint64		user;

	if (!bound->complete && pair_bytes(fcinfo, cache, &user))
	{
		uint32		hash = bound_user_hash(user);
		GroupMemo  *memo = group_memo(fcinfo, cache);
		uint32		group;

		__builtin_prefetch(&bound->users->data[hash & bound->users->sizemask]);
		if (memo != NULL && memo->valid && memo->key == PG_GETARG_DATUM(cache->first_key_arg))
			group = memo->group;
		else
		{
			group = uldp_group_names_add(bound->names, GROUP_NAME(&cache->bytes),
										 GROUP_NAME_LENGTH(&cache->bytes));
			if (memo != NULL)
			{
				memo->valid = true;
				memo->key = PG_GETARG_DATUM(cache->first_key_arg);
				memo->group = group;
			}
		}
		bound->pending[bound->npending].user = user;
		bound->pending[bound->npending].value = pair_value(bound->key, &cache->bytes);
		bound->pending[bound->npending].group = group;
		bound->pending[bound->npending].hash = hash;
		if (++bound->npending == PENDING_PAIRS)
			register_flush(bound);
	}
}

/* Counts, for every group, the users that keep it (registration complete). */
static void
count_group_users(UldpGroupBound *bound)
{
	uint32		ngroups = uldp_group_names_count(bound->names);

	bound->group_users = MemoryContextAllocExtended(bound->context, Max(ngroups, 1) * sizeof(int64),
													MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	if (bound->groups_per_user == 1)
	{
		bound_users_iterator iterator;
		BoundUser  *entry;

		bound_users_start_iterate(bound->users, &iterator);
		while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
			bound->group_users[entry->group_or_row]++;
	}
	else
		for (Size r = 0; r < bound->value_rows; r++)
		{
			uint64	   *row = value_row(bound, r);
			uint32	   *groups = row_groups(bound, row);

			for (uint64 i = 0; i < row[0]; i++)
				bound->group_users[groups[i]]++;
		}
}

PG_FUNCTION_INFO_V1(uldp_group_member);

/*
 * uldp.group_member(slot bigint, k int, registry bytea, user_id anyelement,
 * VARIADIC keys "any") returns anyelement: the user id if its user keeps the
 * row's group, else NULL.  "registry" is the snapshot that group_registered
 * returned once every row was registered: a call waits for it (it is an
 * argument), so nobody keeps a group before registration is complete.
 */
Datum
uldp_group_member(PG_FUNCTION_ARGS)
{
	CallCache  *cache = call_cache(fcinfo, 0);
	UldpGroupBound *bound = cache->bound;
	StringInfo	last_pair = bound != NULL ? &bound->last_pair : &cache->last_pair;
	bool	   *last_kept = bound != NULL ? &bound->last_kept : &cache->last_kept;
	uint64		user;

	read_snapshot(fcinfo, cache);
	if (PG_ARGISNULL(USER_ARG))
		PG_RETURN_NULL();
	/* no user has more than k groups: every registered pair is kept */
	if (bound != NULL ? bound->dropped->members == 0 : cache->header.ndropped == 0)
		PG_RETURN_DATUM(PG_GETARG_DATUM(USER_ARG));
	if (!pair_bytes(fcinfo, cache, &user))
		PG_RETURN_NULL();
	if (last_pair->len != cache->bytes.len ||
		memcmp(last_pair->data, cache->bytes.data, cache->bytes.len) != 0)
	{
		uint64		value = pair_value(cache->key, &cache->bytes);

		*last_kept = bound != NULL ?
			dropped_values_lookup(bound->dropped, value) == NULL :
			sorted_find(cache->dropped, cache->header.ndropped, sizeof(uint64), value) < 0;
		last_pair->len = 0;
		append_bytes(last_pair, cache->bytes.data, cache->bytes.len);
	}
	if (!*last_kept)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(USER_ARG));
}

/*
 * The users that keep the group named in cache->bytes; false if no row was
 * registered in it.
 */
static bool
named_group_users(CallCache *cache, int64 *users)
{
	int64		found;
	SnapshotGroup entry;

	*users = 0;
	if (cache->bound != NULL)
	{
		uint32		group = uldp_group_names_find(cache->bound->names, GROUP_NAME(&cache->bytes),
												  GROUP_NAME_LENGTH(&cache->bytes));

		if (group == ULDP_NO_GROUP)
			return false;
		*users = cache->bound->group_users[group];
		return true;
	}
	found = sorted_find(cache->groups, cache->header.ngroups, sizeof(SnapshotGroup),
						uldp_siphash24(cache->key, GROUP_NAME(&cache->bytes),
									   GROUP_NAME_LENGTH(&cache->bytes)));
	if (found < 0)
		return false;
	memcpy(&entry, cache->groups + found * sizeof(SnapshotGroup), sizeof(entry));
	*users = entry.users;
	return true;
}

PG_FUNCTION_INFO_V1(uldp_group_users);

/*
 * uldp.group_users(slot bigint, k int, registry bytea, user_id anyelement,
 * VARIADIC keys "any") returns bigint: the number of users that keep the
 * row's group, or NULL on a row without a user.
 */
Datum
uldp_group_users(PG_FUNCTION_ARGS)
{
	CallCache  *cache = call_cache(fcinfo, 0);
	GroupMemo  *memo;
	uint64		user;
	int64		users;

	read_snapshot(fcinfo, cache);
	memo = group_memo(fcinfo, cache);
	if (memo != NULL && memo->valid && memo->key == PG_GETARG_DATUM(cache->first_key_arg))
	{
		if (PG_ARGISNULL(USER_ARG) ||
			!uldp_user_key(PG_GETARG_DATUM(USER_ARG), cache->user_byval,
						   cache->user_typlen, &user))
			PG_RETURN_NULL();
		PG_RETURN_INT64(memo->users);
	}
	if (!pair_bytes(fcinfo, cache, &user))
		PG_RETURN_NULL();
	if (named_group_users(cache, &users) && memo != NULL)
	{
		memo->valid = true;
		memo->key = PG_GETARG_DATUM(cache->first_key_arg);
		memo->users = users;
	}
	PG_RETURN_INT64(users);
}

/* build_snapshot's visitor: a group's entry, by its number */
typedef struct SnapshotGroups
{
	UldpGroupBound *bound;
	SnapshotGroup *groups;
} SnapshotGroups;

static void
snapshot_group(void *arg, uint32 number, const char *name, uint32 length)
{
	SnapshotGroups *groups = arg;

	groups->groups[number].name = uldp_siphash24(groups->bound->key, name, length);
	groups->groups[number].users = groups->bound->group_users[number];
}

/*
 * The snapshot of a complete registry (see SnapshotHeader): in full when
 * parallel workers read it, else only its name.
 */
static bytea *
build_snapshot(UldpGroupBound *bound)
{
	SnapshotHeader header;
	int64		ndropped = bound->for_workers ? (int64) bound->dropped->members : -1;
	int64		ngroups = bound->for_workers ? (int64) uldp_group_names_count(bound->names) : 0;
	Size		bytes = VARHDRSZ + sizeof(header) + Max(ndropped, 0) * sizeof(uint64) +
		ngroups * sizeof(SnapshotGroup);
	bytea	   *snapshot = MemoryContextAllocHuge(bound->context, bytes);
	char	   *cursor = VARDATA(snapshot) + sizeof(header);

	memset(&header, 0, sizeof(header));
	header.magic = SNAPSHOT_MAGIC;
	header.version = SNAPSHOT_VERSION;
	header.groups_per_user = bound->groups_per_user;
	header.slot = bound->slot;
	memcpy(header.key, bound->key, sizeof(header.key));
	header.ndropped = ndropped;
	header.ngroups = ngroups;
	if (ndropped > 0)
	{
		uint64	   *values = (uint64 *) cursor;
		uint64	   *buffer = MemoryContextAllocHuge(bound->context, ndropped * sizeof(uint64));
		dropped_values_iterator iterator;
		DroppedValue *entry;
		int64		n = 0;

		dropped_values_start_iterate(bound->dropped, &iterator);
		while ((entry = dropped_values_iterate(bound->dropped, &iterator)) != NULL)
			memcpy(&values[n++], &entry->value, sizeof(uint64));
		uldp_sort_records(values, buffer, n, sizeof(uint64));
		pfree(buffer);
		cursor += n * sizeof(uint64);
	}
	if (ngroups > 0)
	{
		SnapshotGroups groups = {bound, MemoryContextAllocHuge(bound->context,
															   ngroups * sizeof(SnapshotGroup))};
		SnapshotGroup *buffer = MemoryContextAllocHuge(bound->context,
													   ngroups * sizeof(SnapshotGroup));

		uldp_group_names_each(bound->names, snapshot_group, &groups);
		uldp_sort_records(groups.groups, buffer, ngroups, sizeof(SnapshotGroup));
		memcpy(cursor, groups.groups, ngroups * sizeof(SnapshotGroup));
		cursor += ngroups * sizeof(SnapshotGroup);
		pfree(buffer);
		pfree(groups.groups);
	}
	memcpy(VARDATA(snapshot), &header, sizeof(header));
	SET_VARSIZE(snapshot, cursor - (char *) snapshot);
	return snapshot;
}

/* Completes a registry: every row was registered. */
static void
complete_registry(UldpGroupBound *bound)
{
	if (bound->complete)
		return;
	/* the buffered pairs, then the pairs that this defers */
	register_flush(bound);
	register_flush(bound);
	count_group_users(bound);
	bound->complete = true;
	bound->snapshot = build_snapshot(bound);
}

/*
 * A partial registry of a parallel plan's registration: one process's rows,
 * with the registry's key (which the leader passes to the workers), to be
 * merged into the registry by registry_combinefn.
 */
static UldpGroupBound *
partial_registry(int groups_per_user, const char *key, MemoryContext context)
{
	UldpGroupBound *bound = MemoryContextAllocZero(context, sizeof(UldpGroupBound));

	bound->groups_per_user = groups_per_user;
	bound->owner = context;
	bound->context = AllocSetContextCreate(context, "uldp partial group bound",
										   ALLOCSET_DEFAULT_SIZES);
	memcpy(bound->key, key, sizeof(bound->key));
	/* secret as the key is, drawing nothing (the leader's draws stay those of a serial plan) */
	bound_init(bound, bound->key[0] ^ bound->key[1]);
	return bound;
}

/*
 * The slot's registry for a call of group_registry's support functions:
 * the slot is the first argument of the aggregate call (for a combining or
 * final call, of the partial aggregate's call below it).
 */
static UldpGroupBound *
call_registry(FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	Const	   *slot;

	if (aggref == NULL || fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	aggref = uldp_original_aggref(((AggState *) fcinfo->context)->ss.ps.plan, aggref);
	slot = (Const *) linitial_node(TargetEntry, aggref->args)->expr;
	if (!IsA(slot, Const) || slot->constisnull)
		elog(ERROR, "uldp.group_registry called without a slot");
	return find_bound(DatumGetInt64(slot->constvalue), fcinfo->flinfo->fn_mcxt);
}

PG_FUNCTION_INFO_V1(uldp_registry_transfn);

/*
 * uldp.group_registry's transition (slot bigint, k int, key bytea, user_id
 * anyelement, VARIADIC keys "any"): records the row's group for its user.
 * A plain aggregation records into the slot's registry; a parallel plan's
 * partial aggregations (in the leader and in every worker) each into a
 * partial registry of their own, under the registry's key, which "key"
 * passes to the workers.
 */
Datum
uldp_registry_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	CallCache  *cache;
	UldpGroupBound *bound;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	cache = call_cache(fcinfo, 1);
	bound = PG_ARGISNULL(0) ? NULL : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (bound == NULL)
	{
		if (DO_AGGSPLIT_SKIPFINAL(((AggState *) fcinfo->context)->aggsplit))
		{
			bytea	   *key;

			if (PG_ARGISNULL(1 + SNAPSHOT_ARG))
				snapshot_invalid();
			key = PG_GETARG_BYTEA_PP(1 + SNAPSHOT_ARG);
			if (VARSIZE_ANY_EXHDR(key) != sizeof(bound->key) ||
				(cache->bound != NULL &&
				 memcmp(VARDATA_ANY(key), cache->bound->key, sizeof(bound->key)) != 0))
				snapshot_invalid();
			bound = partial_registry(PG_GETARG_INT32(1 + K_ARG), VARDATA_ANY(key), aggcontext);
		}
		else if (cache->bound == NULL)
			elog(ERROR, "uldp.group_registry can only finish in the leader");
		else
			bound = cache->bound;
		cache->key = bound->key;
	}
	register_row(fcinfo, cache, bound);
	PG_RETURN_POINTER(bound);
}

/*
 * A partial registry, serialized: this header, then the names of its
 * groups in the order of their numbers (each its length, uint32, and its
 * bytes), its users (each its id, the count n of its values, then n pairs
 * of a value and a group number), and its dropped values.  Unaligned.
 */
typedef struct PartialHeader
{
	uint32		magic;			/* PARTIAL_MAGIC */
	uint16		version;		/* PARTIAL_VERSION */
	uint16		unused;
	int32		groups_per_user;
	uint32		ngroups;
	int64		slot;
	int64		nusers;
	int64		ndropped;
	int64		name_bytes;
} PartialHeader;

#define PARTIAL_MAGIC 0x554c5231	/* "ULR1" */
#define PARTIAL_VERSION 1
/* a user's entry: id and n, then at most k values and group numbers */
#define PARTIAL_USER_BYTES(k) (sizeof(uint64) + sizeof(uint32) + \
							   (k) * (sizeof(uint64) + sizeof(uint32)))

/*
 * Worst-case bytes per row read of a serialized partial registry: a new
 * user with its pair, a new group's name and a dropped value.
 */
double
uldp_group_bound_partial_bytes_per_row(double name_bytes)
{
	return PARTIAL_USER_BYTES(1) + sizeof(uint32) + name_bytes + sizeof(uint64);
}

/* uldp_group_names_each's visitor: where each name goes, by its number */
typedef struct NameSlots
{
	const char **names;
	uint32	   *lengths;
	int64		bytes;
} NameSlots;

static void
name_slot(void *arg, uint32 number, const char *name, uint32 length)
{
	NameSlots  *slots = arg;

	slots->names[number] = name;
	slots->lengths[number] = length;
	slots->bytes += sizeof(uint32) + length;
}

static inline char *
put(char *cursor, const void *data, Size length)
{
	memcpy(cursor, data, length);
	return cursor + length;
}

PG_FUNCTION_INFO_V1(uldp_registry_serialfn);

Datum
uldp_registry_serialfn(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound = (UldpGroupBound *) PG_GETARG_POINTER(0);
	uint32		ngroups = uldp_group_names_count(bound->names);
	NameSlots	slots;
	PartialHeader header;
	bytea	   *result;
	char	   *cursor;
	bound_users_iterator iterator;
	BoundUser  *entry;
	dropped_values_iterator dropped;
	DroppedValue *value;
	int			k = bound->groups_per_user;

	register_flush(bound);
	register_flush(bound);
	slots.names = palloc_extended(Max(ngroups, 1) * sizeof(char *), MCXT_ALLOC_HUGE);
	slots.lengths = palloc_extended(Max(ngroups, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	slots.bytes = 0;
	uldp_group_names_each(bound->names, name_slot, &slots);

	memset(&header, 0, sizeof(header));
	header.magic = PARTIAL_MAGIC;
	header.version = PARTIAL_VERSION;
	header.groups_per_user = k;
	header.ngroups = ngroups;
	header.nusers = bound->users->members;
	header.ndropped = bound->dropped->members;
	header.name_bytes = slots.bytes;
	result = palloc_extended(VARHDRSZ + sizeof(header) + slots.bytes +
							 header.nusers * PARTIAL_USER_BYTES(k) +
							 header.ndropped * sizeof(uint64), MCXT_ALLOC_HUGE);
	cursor = put(VARDATA(result), &header, sizeof(header));
	for (uint32 g = 0; g < ngroups; g++)
	{
		cursor = put(cursor, &slots.lengths[g], sizeof(uint32));
		cursor = put(cursor, slots.names[g], slots.lengths[g]);
	}
	bound_users_start_iterate(bound->users, &iterator);
	while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
	{
		cursor = put(cursor, &entry->id, sizeof(uint64));
		if (k == 1)
		{
			uint32		n = 1;

			cursor = put(cursor, &n, sizeof(n));
			cursor = put(cursor, &entry->smallest, sizeof(uint64));
			cursor = put(cursor, &entry->group_or_row, sizeof(uint32));
		}
		else
		{
			uint64	   *row = value_row(bound, entry->group_or_row);
			uint32	   *groups = row_groups(bound, row);
			uint32		n = (uint32) row[0];

			cursor = put(cursor, &n, sizeof(n));
			for (uint32 i = 0; i < n; i++)
			{
				cursor = put(cursor, &row[1 + i], sizeof(uint64));
				cursor = put(cursor, &groups[i], sizeof(uint32));
			}
		}
	}
	dropped_values_start_iterate(bound->dropped, &dropped);
	while ((value = dropped_values_iterate(bound->dropped, &dropped)) != NULL)
		cursor = put(cursor, &value->value, sizeof(uint64));
	SET_VARSIZE(result, cursor - (char *) result);
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(uldp_registry_deserialfn);

/* Keeps the serialized partial registry; the combine function reads it. */
Datum
uldp_registry_deserialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	bytea	   *copy;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	copy = MemoryContextAllocHuge(aggcontext, VARSIZE_ANY(serialized));
	memcpy(copy, serialized, VARSIZE_ANY(serialized));
	PG_RETURN_POINTER(copy);
}

static void
partial_invalid(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid uldp partial group registry"),
			 errhint("Partial registries are made by uldp.group_registry itself, in a parallel plan.")));
}

/* Reads "length" bytes at *cursor, within "end". */
static inline void
take(const char **cursor, const char *end, void *data, Size length)
{
	if (end - *cursor < (ptrdiff_t) length)
		partial_invalid();
	memcpy(data, *cursor, length);
	*cursor += length;
}

/* Grows the users' (or the dropped values') table to hold "entries". */
static void
grow_for(uint64 entries, uint64 threshold, UldpGroupBound *bound, bool users)
{
	uint64		size;

	if (entries <= threshold)
		return;
	size = pg_nextpower2_64((uint64) (entries / ULDP_HASH_FILLFACTOR) + 1);
	if (users)
		bound_users_grow(bound->users, size);
	else
		dropped_values_grow(bound->dropped, size);
}

/*
 * Adds a serialized partial registry to "bound": its groups by name, each
 * user's values as if its rows were registered here (a user's k smallest
 * values of all its pairs are the k smallest of its partial k smallest),
 * and its dropped values, dropped here too (a value one process dropped
 * had k smaller ones of the same user there, which reach "bound" too).
 */
static void
merge_partial(UldpGroupBound *bound, const bytea *serialized)
{
	const char *cursor = VARDATA_ANY(serialized);
	const char *end = cursor + VARSIZE_ANY_EXHDR(serialized);
	PartialHeader header;
	uint32	   *numbers;
	int			k = bound->groups_per_user;

	take(&cursor, end, &header, sizeof(header));
	if (header.magic != PARTIAL_MAGIC || header.version != PARTIAL_VERSION ||
		header.groups_per_user != k || header.nusers < 0 || header.ndropped < 0)
		partial_invalid();
	/*
	 * The partial's users and dropped values come in the order of their
	 * hash: inserted so into a smaller table they would pile up in long
	 * probe runs, so the tables first grow to hold them all.
	 */
	grow_for(bound->users->members + header.nusers, bound->users->grow_threshold,
			 bound, true);
	grow_for(bound->dropped->members + header.ndropped, bound->dropped->grow_threshold,
			 bound, false);
	numbers = palloc_extended(Max(header.ngroups, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	for (uint32 g = 0; g < header.ngroups; g++)
	{
		uint32		length;

		take(&cursor, end, &length, sizeof(length));
		if (end - cursor < (ptrdiff_t) length)
			partial_invalid();
		numbers[g] = uldp_group_names_add(bound->names, cursor, length);
		cursor += length;
	}
	for (int64 u = 0; u < header.nusers; u++)
	{
		uint64		user;
		uint32		n;

		take(&cursor, end, &user, sizeof(user));
		take(&cursor, end, &n, sizeof(n));
		if (n < 1 || n > (uint32) k)
			partial_invalid();
		for (uint32 i = 0; i < n; i++)
		{
			uint64		value;
			uint32		group;

			take(&cursor, end, &value, sizeof(value));
			take(&cursor, end, &group, sizeof(group));
			if (group >= header.ngroups)
				partial_invalid();
			bound->pending[bound->npending].user = user;
			bound->pending[bound->npending].value = value;
			bound->pending[bound->npending].group = numbers[group];
			bound->pending[bound->npending].hash = bound_user_hash(user);
			if (++bound->npending == PENDING_PAIRS)
				register_flush(bound);
		}
	}
	for (int64 d = 0; d < header.ndropped; d++)
	{
		uint64		value;

		take(&cursor, end, &value, sizeof(value));
		drop_value(bound, value);
	}
	if (cursor != end)
		partial_invalid();
	pfree(numbers);
}

PG_FUNCTION_INFO_V1(uldp_registry_combinefn);

/*
 * Merges a deserialized partial registry into the slot's registry, which
 * is the combined state (the final aggregation runs in the leader).
 */
Datum
uldp_registry_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpGroupBound *bound;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	bound = PG_ARGISNULL(0) ? call_registry(fcinfo) : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1))
	{
		merge_partial(bound, (bytea *) PG_GETARG_POINTER(1));
		pfree(PG_GETARG_POINTER(1));
	}
	PG_RETURN_POINTER(bound);
}

PG_FUNCTION_INFO_V1(uldp_registry_finalfn);

/*
 * uldp.group_registry's final function: completes the slot's registry
 * (every row was registered: a plain aggregation's, or the merge of the
 * partial ones), counts the users of every group, and returns the
 * registry's snapshot.
 */
Datum
uldp_registry_finalfn(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound;

	if (IsParallelWorker())
		elog(ERROR, "uldp.group_registry can only finish in the leader");
	bound = PG_ARGISNULL(0) ? call_registry(fcinfo) : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (bound->slot == 0)
		elog(ERROR, "uldp.group_registry finished a partial registry");
	complete_registry(bound);
	PG_RETURN_BYTEA_P(bound->snapshot);
}

/*
 * uldp 0.8's group_register and group_registered, which its SQL declares
 * (and the update to 0.9 drops): this library registers through
 * group_registry, so they refuse.
 */
PG_FUNCTION_INFO_V1(uldp_group_register);

Datum
uldp_group_register(PG_FUNCTION_ARGS)
{
	refuse_old_version();
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(uldp_group_registered);

Datum
uldp_group_registered(PG_FUNCTION_ARGS)
{
	refuse_old_version();
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(uldp_group_key);

/*
 * uldp.group_key(slot bigint) returns bytea: the key of the slot's
 * registry, which a parallel registration's workers need (the leader
 * evaluates it, as an initplan, and passes its value to them).
 */
Datum
uldp_group_key(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound;
	bytea	   *key = palloc(VARHDRSZ + sizeof(bound->key));

	if (PG_ARGISNULL(0))
		elog(ERROR, "uldp.group_key called without a slot");
	bound = find_bound(PG_GETARG_INT64(0), fcinfo->flinfo->fn_mcxt);
	SET_VARSIZE(key, VARHDRSZ + sizeof(bound->key));
	memcpy(VARDATA(key), bound->key, sizeof(bound->key));
	PG_RETURN_BYTEA_P(key);
}

/*
 * The registry of "slot" for the executor memory "context": the one made
 * for it already (a parallel plan's partial and final aggregations share
 * it), or a new one.  "for_workers": parallel workers read it.
 */
UldpGroupBound *
uldp_group_bound_for(int64 slot, int groups_per_user, MemoryContext context, bool for_workers)
{
	UldpGroupBound *bound;

	for (bound = bounds; bound != NULL; bound = bound->next)
		if (bound->slot == slot && bound->owner == context)
			break;
	if (bound == NULL)
		bound = uldp_group_bound_create(slot, groups_per_user, context);
	bound->for_workers = bound->for_workers || for_workers;
	return bound;
}

/*-------------------------------------------------------------------------
 *
 * groupbound.c
 *	  The bound on the groups each user contributes to in a grouped release:
 *	  a user found in more than k = uldp.max_groups_per_user groups keeps a
 *	  uniformly random k of them.
 *
 * The registry of a grouped release (its calls are in groupcalls.c): the
 * pairs of users and groups that registration recorded, and which of them
 * each user keeps.  It is made when the statement starts (statement.c),
 * filled by the aggregate uldp.group_registry and completed by its final
 * function, then read by group_member and group_selected: in the leader
 * itself, in parallel workers through its snapshot, which then holds the
 * key, the dropped values and each group's count of users.  In a parallel
 * registration every process records its rows into a partial registry
 * under the registry's key, and the leader merges them into the registry
 * once all are in, taking its own over as it is (uldp_group_bound_hand_over)
 * and adding the workers' to it: a user's k smallest values are the k
 * smallest of its partial k smallest, and a value a process dropped had k
 * smaller ones of the same user there, so it is dropped in the merge too.
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
 * What is stored: for each user, the numbers of its groups (groupnames.c),
 * at most k of them (as bits of its entry while they are numbered low, as
 * they are when there are few groups), and the set of dropped values: every
 * value that was not, or stopped being, among its user's k smallest.  A
 * user's values are computed only once it has more than k groups (from its
 * key and its groups' names, which the registry keeps): until then it keeps
 * all its groups, whatever their values, so registering a row costs a lookup
 * of its user and no pseudorandom function.  A value is dropped for good (a
 * user's k smallest only ever get smaller), so after registration the
 * dropped values are exactly the pairs that their users do not keep.
 * group_member keeps a row unless its pair's value is dropped: when no user
 * has more than k groups (the common case) it needs no lookup at all.  That
 * is exact because the aggregated rows are the registered rows: the same
 * FROM and WHERE, read under the same snapshot, with no volatile function
 * and nothing read twice differently (grouping.c refuses such levels before
 * planning).  A dropped value shared by a kept pair of another user
 * (probability 2^-64 per pair) only makes that user lose a group.  The users
 * that keep each group are counted once, when registration completes, from
 * the stored group numbers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "groupbound.h"
#include "groupnames.h"
#include "handover.h"
#include "radixsort.h"
#include "random.h"
#include "sharedpass.h"
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
 * One user's entry, 24 bytes: for k = 1 the number of its group and, once
 * it has had a second one, that group's value; for k > 1 its groups as bits
 * (group g is bit g) while they are all numbered below BIT_GROUPS and at
 * most k, and from then on the number of its row (user_row).  Registration
 * costs a cache miss or two per row once the users outgrow the CPU caches,
 * so the entry is kept small, a grouping of few groups (by month, by
 * country) needs no row and so no second miss, and the rows are registered
 * a few at a time (uldp_group_bound_add).
 */
typedef struct BoundUser
{
	uint64		id;
	union
	{
		uint64		smallest;	/* k = 1, once extended: its group's value */
		uint64		bits;		/* k > 1, until extended: its groups */
	}			held;
	uint32		group_or_row;	/* k = 1: its group; k > 1, once extended: its row */
	char		status;
	bool		extended;		/* k = 1: is held.smallest set?  k > 1: has it a row? */
} BoundUser;

/* k > 1: groups numbered below this can be a user's bits */
#define BIT_GROUPS 64

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
/* users the rows have room for at first */
#define INITIAL_ROWS_BITS 10
#define INITIAL_ROWS (1 << INITIAL_ROWS_BITS)
/* chunks of rows: the first INITIAL_ROWS, then each as many as all before */
#define ROW_CHUNKS (32 - INITIAL_ROWS_BITS + 1)
/* rows, and so the hot part of every row, start on cache lines */
#define CACHE_LINE 64

struct UldpGroupBound
{
	int64		slot;
	int			groups_per_user;
	MemoryContext owner;		/* the executor's memory this registry serves */
	MemoryContext context;		/* the registry's */
	bound_users_hash *users;
	UldpGroupNames *names;
	dropped_values_hash *dropped;
	/*
	 * k > 1: per user a row of row_stride uint32: its count n of groups (at
	 * most k), the number of its values (0: none yet; see user_values), and
	 * k group numbers, the first n set.  The stride is a power of two of at
	 * most a cache line, or whole cache lines, so that a row of up to 14
	 * groups is one cache line.  The rows are in chunks that double (see
	 * user_row): more rows take a new chunk, and the rows in use are never
	 * copied, so no more memory is touched than they fill.
	 */
	uint32	   *row_chunks[ROW_CHUNKS];
	void	   *row_allocations[ROW_CHUNKS];	/* each chunk before it was aligned */
	int			nchunks;
	Size		row_stride;
	Size		nrows;			/* rows in use */
	Size		rows_capacity;	/* rows allocated */
	/* k > 1: the values of the users with more than k groups, k each */
	uint64	   *values;
	Size		nvalues;		/* users with values */
	Size		values_capacity;
	/* a pair's name, to compute its value: a user's key, then its group's */
	char	   *pair_name;
	Size		pair_name_capacity;
	/* registered pairs not yet added (see uldp_group_bound_add) */
	int			npending;
	struct
	{
		uint64		user;
		uint32		group;
		uint32		hash;
	}			pending[PENDING_PAIRS];
	/* k > 1: added pairs whose rows are being prefetched (register_flush) */
	int			ndeferred;
	struct
	{
		uint64		user;
		uint32		row;
		uint32		group;
	}			deferred[PENDING_PAIRS];
	bool		complete;		/* every row registered */
	int64	   *group_users;	/* once complete: per group number, its users */
	bool		for_workers;	/* parallel workers read it: snapshot in full */
	bytea	   *snapshot;		/* once complete: group_registered's result */
	uint64		key[2];			/* of the pseudorandom function */
	/* a registry: partial registries received, merged when it completes */
	List	   *received;
	UldpGroupBound *next;		/* in "bounds" */
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
 * The longest name of a group with keys of these types (see pair_bytes):
 * per key a NULL flag and its bytes, a variable-length key its length and at
 * most ULDP_GROUP_INLINE_KEY_BYTES.
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
					  typlen > 0 ? typlen : sizeof(uint32) + ULDP_GROUP_INLINE_KEY_BYTES);
	}
	return bytes;
}

/* The uint32 words of a user's row (k > 1): see UldpGroupBound.rows. */
static Size
row_stride(int groups_per_user)
{
	Size		words = 2 + groups_per_user;
	Size		line = CACHE_LINE / sizeof(uint32);

	return words <= line ? pg_nextpower2_32((uint32) words) : TYPEALIGN(line, words);
}

/*
 * Worst-case memory per row read: a row may bring a new user, its entry
 * (with the hash table's slack: up to twice the entries over the fill
 * factor, just after a doubling) and, for k > 1, its row (up to twice the
 * rows in use, the last chunk holding as many as all before it; counted
 * three times, a margin for the first chunk's INITIAL_ROWS) and k values
 * for every k + 1 rows (as many again, and the old ones); a new group name
 * with its count of users; and a dropped value.
 */
double
uldp_group_bound_bytes_per_row(int groups_per_user, double name_bytes)
{
	return sizeof(BoundUser) / ULDP_HASH_FILLFACTOR * 2 +
		(groups_per_user > 1 ?
		 3.0 * row_stride(groups_per_user) * sizeof(uint32) +
		 3.0 * groups_per_user * sizeof(uint64) / (groups_per_user + 1) : 0) +
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
 * An empty registry (before reading rows) in memory of its own under
 * "context", with bound k and the key of its pseudorandom function, whose
 * names are hashed with "names_seed"; "partial": a parallel registration's.
 */
static UldpGroupBound *
bound_new(int groups_per_user, const uint64 key[2], uint64 names_seed, MemoryContext context,
		  bool partial)
{
	UldpGroupBound *bound = MemoryContextAllocZero(context, sizeof(UldpGroupBound));

	bound->groups_per_user = groups_per_user;
	bound->owner = context;
	/* memory context names must be constant strings */
	if (partial)
		bound->context = AllocSetContextCreate(context, "uldp partial group bound",
											   ALLOCSET_DEFAULT_SIZES);
	else
		bound->context = AllocSetContextCreate(context, "uldp group bound", ALLOCSET_DEFAULT_SIZES);
	bound->key[0] = key[0];
	bound->key[1] = key[1];
	bound->users = bound_users_create(bound->context, 1024, NULL);
	bound->names = uldp_group_names_create(bound->context, names_seed);
	bound->dropped = dropped_values_create(bound->context, 64, NULL);
	bound->row_stride = row_stride(groups_per_user);
	return bound;
}

/*
 * The registry of a grouped release, for the executor state whose memory
 * is "context"; forgotten when that memory goes away.
 */
static UldpGroupBound *
uldp_group_bound_create(int64 slot, int groups_per_user, MemoryContext context)
{
	static bool checked = false;
	MemoryContextCallback *callback = MemoryContextAlloc(context, sizeof(MemoryContextCallback));
	UldpGroupBound *bound;
	uint64		names_seed;
	uint64		key[2];

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

	/* drawn in this order since uldp 0.8: seeded releases stay as they were */
	names_seed = uldp_random_u64();
	key[0] = uldp_random_u64();
	key[1] = uldp_random_u64();
	bound = bound_new(groups_per_user, key, names_seed, context, false);
	bound->slot = slot;
	bound->next = bounds;
	bounds = bound;
	callback->func = forget_bound;
	callback->arg = bound;
	MemoryContextRegisterResetCallback(context, callback);
	return bound;
}

/*
 * The registry of "slot" that serves the execution a grouping function is
 * part of: the one made for the executor memory that holds the function's
 * call (or an ancestor of it).  Two runs of one plan (two cursors of one
 * prepared statement) share the slot, never a registry.
 */
UldpGroupBound *
uldp_group_bound_find(int64 slot, MemoryContext call_context)
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

/*
 * A registry's snapshot: what uldp_group_bound_complete returns, the value
 * that group_member and group_selected receive.  The leader reads its registry
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

/*
 * The first row of chunk "chunk": chunk 0 holds INITIAL_ROWS rows, chunk
 * c > 0 the INITIAL_ROWS << (c - 1) rows from INITIAL_ROWS << (c - 1).
 */
static inline Size
chunk_first_row(int chunk)
{
	return chunk == 0 ? 0 : (Size) INITIAL_ROWS << (chunk - 1);
}

/* A user's row (k > 1): see UldpGroupBound.row_chunks. */
static inline uint32 *
user_row(const UldpGroupBound *bound, uint32 row)
{
	int			chunk = row < INITIAL_ROWS ? 0 :
		pg_leftmost_one_pos32(row >> INITIAL_ROWS_BITS) + 1;

	return bound->row_chunks[chunk] + (row - chunk_first_row(chunk)) * bound->row_stride;
}

#define ROW_GROUPS(row) ((row) + 2)

/* Prefetches every cache line of a user's row (k > 1). */
static inline void
prefetch_row(const UldpGroupBound *bound, const uint32 *row)
{
	for (Size word = 0; word < bound->row_stride; word += CACHE_LINE / sizeof(uint32))
		__builtin_prefetch(row + word);
}

/* A new, empty row, for a new user (k > 1). */
static uint32
new_row(UldpGroupBound *bound)
{
	if (bound->nrows == bound->rows_capacity)
	{
		int			chunk = bound->nchunks++;
		Size		rows = chunk == 0 ? INITIAL_ROWS : chunk_first_row(chunk);
		char	   *allocation = uldp_alloc_pages(bound->context, rows * bound->row_stride *
												  sizeof(uint32) + CACHE_LINE);

		bound->row_allocations[chunk] = allocation;
		bound->row_chunks[chunk] = (uint32 *) TYPEALIGN(CACHE_LINE, allocation);
		bound->rows_capacity += rows;
	}
	user_row(bound, bound->nrows)[0] = 0;
	user_row(bound, bound->nrows)[1] = 0;
	return bound->nrows++;
}

/*
 * The pseudorandom value of the pair of "user" and group "group": the
 * function of the bytes that name the pair, the user's key then the
 * group's name, under the registry's key.  group_member names a row's pair
 * by the same bytes (pair_bytes, groupcalls.c) and looks its value up among
 * the dropped ones: the two must stay the same bytes.
 */
static uint64
pair_value(UldpGroupBound *bound, uint64 user, uint32 group)
{
	uint32		length;
	const char *name = uldp_group_names_name(bound->names, group, &length);
	Size		bytes = sizeof(uint64) + length;

	if (bytes > bound->pair_name_capacity)
	{
		if (bound->pair_name != NULL)
			pfree(bound->pair_name);
		bound->pair_name_capacity = Max(bytes, 2 * bound->pair_name_capacity);
		bound->pair_name = MemoryContextAllocHuge(bound->context, bound->pair_name_capacity);
	}
	memcpy(bound->pair_name, &user, sizeof(uint64));
	memcpy(bound->pair_name + sizeof(uint64), name, length);
	return uldp_siphash24(bound->key, bound->pair_name, bytes);
}

/*
 * The values of the k groups in a user's row (k > 1), computed the first
 * time it needs them: when it has more than k groups.
 */
static uint64 *
user_values(UldpGroupBound *bound, uint64 user, uint32 *row)
{
	int			k = bound->groups_per_user;
	uint64	   *values;

	if (row[1] == 0)
	{
		if (bound->nvalues == bound->values_capacity)
		{
			Size		capacity = Max(bound->values_capacity * 2, INITIAL_ROWS);
			Size		bytes = capacity * k * sizeof(uint64);

			bound->values = bound->values == NULL ?
				MemoryContextAllocHuge(bound->context, bytes) :
				repalloc_huge(bound->values, bytes);
			bound->values_capacity = capacity;
		}
		row[1] = (uint32) ++bound->nvalues;
		values = bound->values + (Size) (row[1] - 1) * k;
		for (int i = 0; i < k; i++)
			values[i] = pair_value(bound, user, ROW_GROUPS(row)[i]);
	}
	return bound->values + (Size) (row[1] - 1) * k;
}

static inline void
drop_value(UldpGroupBound *bound, uint64 value)
{
	bool		found;

	dropped_values_insert(bound->dropped, value, &found);
}

/*
 * Adds a group to a user's row (k > 1): a new group is kept while the user
 * has fewer than k; then the k of smallest value are kept, and what is not
 * kept, or no longer, is dropped.
 */
static void
keep_group(UldpGroupBound *bound, uint64 user, uint32 *row, uint32 group)
{
	int			k = bound->groups_per_user;
	uint32	   *groups = ROW_GROUPS(row);
	uint32		n = row[0];
	uint64	   *values;
	uint64		value;
	int			largest = 0;

	for (uint32 i = 0; i < n; i++)
		if (groups[i] == group)
			return;
	if (n < (uint32) k)
	{
		groups[n] = group;
		row[0] = n + 1;
		return;
	}
	values = user_values(bound, user, row);
	value = pair_value(bound, user, group);
	for (int i = 0; i < k; i++)
	{
		/* another group of the same value (2^-64): as if the same pair */
		if (values[i] == value)
			return;
		if (values[i] > values[largest])
			largest = i;
	}
	if (value < values[largest])
	{
		drop_value(bound, values[largest]);
		values[largest] = value;
		groups[largest] = group;
	}
	else
		drop_value(bound, value);
}

/*
 * Adds a group to the bits of a user without a row (k > 1), as keep_group
 * would to its row: false when it does not fit (a group numbered
 * BIT_GROUPS or more, or a (k + 1)-th group), and the user needs its row.
 */
static inline bool
keep_group_bit(BoundUser *entry, uint32 group, int k)
{
	uint64		bit;

	if (group >= BIT_GROUPS)
		return false;
	bit = UINT64CONST(1) << group;
	if (entry->held.bits & bit)
		return true;
	if (pg_popcount64(entry->held.bits) >= k)
		return false;
	entry->held.bits |= bit;
	return true;
}

/*
 * The number of groups of a user (k > 1) and, into "groups", their numbers
 * (room for k).
 */
static uint32
user_groups(const UldpGroupBound *bound, const BoundUser *entry, uint32 *groups)
{
	uint32		n = 0;

	if (entry->extended)
	{
		uint32	   *row = user_row(bound, entry->group_or_row);

		memcpy(groups, ROW_GROUPS(row), row[0] * sizeof(uint32));
		return row[0];
	}
	for (uint64 bits = entry->held.bits; bits != 0; bits &= bits - 1)
		groups[n++] = pg_rightmost_one_pos64(bits);
	return n;
}

/* Moves the groups of a user's bits to a new row of its own, for good. */
static void
extend_user(UldpGroupBound *bound, BoundUser *entry)
{
	uint32		number = new_row(bound);
	uint32	   *row = user_row(bound, number);

	row[0] = user_groups(bound, entry, ROW_GROUPS(row));
	entry->group_or_row = number;
	entry->extended = true;
}

/* A new user's entry (k > 1): no groups yet, in its bits. */
static inline void
new_user(BoundUser *entry)
{
	entry->held.bits = 0;
	entry->extended = false;
}

/* Adds a group to a user's entry (k = 1), as keep_group does. */
static void
keep_only_group(UldpGroupBound *bound, BoundUser *entry, bool found, uint32 group)
{
	uint64		value;

	if (!found)
	{
		entry->group_or_row = group;
		entry->extended = false;
		return;
	}
	if (entry->group_or_row == group)
		return;
	if (!entry->extended)
	{
		entry->held.smallest = pair_value(bound, entry->id, entry->group_or_row);
		entry->extended = true;
	}
	value = pair_value(bound, entry->id, group);
	if (value < entry->held.smallest)
	{
		drop_value(bound, entry->held.smallest);
		entry->held.smallest = value;
		entry->group_or_row = group;
	}
	else if (value > entry->held.smallest)
		drop_value(bound, value);
}

/*
 * Adds the buffered pairs.  Their users' buckets were prefetched when they
 * were buffered.  For k > 1 a pair whose group its user's bits do not take
 * needs the user's row: the rows are prefetched here and such pairs
 * deferred to the next flush, so that the prefetches have a batch of rows'
 * time to land.  The pairs of a user are still added in the order they
 * were read (a user with a row never goes back to bits).
 */
static void
register_flush(UldpGroupBound *bound)
{
	int			k = bound->groups_per_user;

	for (int i = 0; i < bound->ndeferred; i++)
		keep_group(bound, bound->deferred[i].user, user_row(bound, bound->deferred[i].row),
				   bound->deferred[i].group);
	bound->ndeferred = 0;
	for (int i = 0; i < bound->npending; i++)
	{
		bool		found;
		BoundUser  *entry = bound_users_insert_hash(bound->users, bound->pending[i].user,
												   bound->pending[i].hash, &found);

		if (k > 1)
		{
			if (!found)
				new_user(entry);
			if (!entry->extended)
			{
				if (keep_group_bit(entry, bound->pending[i].group, k))
					continue;
				extend_user(bound, entry);
			}
			prefetch_row(bound, user_row(bound, entry->group_or_row));
			bound->deferred[bound->ndeferred].user = bound->pending[i].user;
			bound->deferred[bound->ndeferred].row = entry->group_or_row;
			bound->deferred[bound->ndeferred].group = bound->pending[i].group;
			bound->ndeferred++;
		}
		else
			keep_only_group(bound, entry, found, bound->pending[i].group);
	}
	bound->npending = 0;
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
	{
		bound_users_iterator iterator;
		BoundUser  *entry;

		for (Size r = 0; r < bound->nrows; r++)
		{
			uint32	   *row = user_row(bound, r);

			for (uint32 i = 0; i < row[0]; i++)
				bound->group_users[ROW_GROUPS(row)[i]]++;
		}
		bound_users_start_iterate(bound->users, &iterator);
		while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
		{
			uint32		groups[BIT_GROUPS];

			if (entry->extended)
				continue;
			for (uint32 i = user_groups(bound, entry, groups); i > 0; i--)
				bound->group_users[groups[i - 1]]++;
		}
	}
}

/* The key of the registry's pseudorandom function. */
const uint64 *
uldp_group_bound_key(const UldpGroupBound *bound)
{
	return bound->key;
}

/* Is this a parallel registration's partial registry? */
bool
uldp_group_bound_is_partial(const UldpGroupBound *bound)
{
	return bound->slot == 0;
}

/* Has every row been registered? */
bool
uldp_group_bound_is_complete(const UldpGroupBound *bound)
{
	return bound->complete;
}

/* The number of the group named "name" (a new number for a new name). */
uint32
uldp_group_bound_group(UldpGroupBound *bound, const char *name, uint32 length)
{
	return uldp_group_names_add(bound->names, name, length);
}

/*
 * Registers a pair: its user and its group's number, in a registry not yet
 * complete.  The pair is buffered while its user's bucket is prefetched:
 * once the users outgrow the CPU caches, each pair costs a cache miss, and
 * buffering a few overlaps them.  Completing the registry adds what is
 * still buffered.
 */
void
uldp_group_bound_add(UldpGroupBound *bound, uint64 user, uint32 group)
{
	uint32		hash = bound_user_hash(user);

	Assert(!bound->complete);
	__builtin_prefetch(&bound->users->data[hash & bound->users->sizemask]);
	bound->pending[bound->npending].user = user;
	bound->pending[bound->npending].group = group;
	bound->pending[bound->npending].hash = hash;
	if (++bound->npending == PENDING_PAIRS)
		register_flush(bound);
}

/* Does any user have more than k groups (a complete registry)? */
bool
uldp_group_bound_drops_any(const UldpGroupBound *bound)
{
	return bound->dropped->members > 0;
}

/* Is the pair of pseudorandom value "value" kept (a complete registry)? */
bool
uldp_group_bound_kept(UldpGroupBound *bound, uint64 value)
{
	return dropped_values_lookup(bound->dropped, value) == NULL;
}

/*
 * The users that keep the group named "name" (a complete registry): 0 if no
 * row was registered in it.
 */
int64
uldp_group_bound_users(UldpGroupBound *bound, const char *name, uint32 length)
{
	uint32		group = uldp_group_names_find(bound->names, name, length);

	return group == ULDP_NO_GROUP ? 0 : bound->group_users[group];
}

/*
 * Reads a snapshot, for a parallel worker: false unless it is a whole
 * snapshot of the registry of "slot" with bound k.
 */
bool
uldp_group_snapshot_read(const char *data, Size length, int64 slot, int k,
						 UldpGroupSnapshot *snapshot)
{
	SnapshotHeader header;

	if (length < sizeof(header))
		return false;
	memcpy(&header, data, sizeof(header));
	if (header.magic != SNAPSHOT_MAGIC || header.version != SNAPSHOT_VERSION ||
		header.slot != slot || header.groups_per_user != k ||
		header.ndropped < 0 || header.ngroups < 0 ||
		(uint64) header.ndropped > length / sizeof(uint64) ||
		(uint64) header.ngroups > length / sizeof(SnapshotGroup) ||
		length != sizeof(header) + header.ndropped * sizeof(uint64) +
		header.ngroups * sizeof(SnapshotGroup))
		return false;
	memcpy(snapshot->key, header.key, sizeof(snapshot->key));
	snapshot->ndropped = header.ndropped;
	snapshot->dropped = data + sizeof(header);
	snapshot->ngroups = header.ngroups;
	snapshot->groups = snapshot->dropped + header.ndropped * sizeof(uint64);
	return true;
}

/*
 * Does a snapshot belong to "bound", complete?  (The leader's check of the
 * value its calls receive: its registry is what they read.)
 */
bool
uldp_group_snapshot_names(const char *data, Size length, const UldpGroupBound *bound)
{
	SnapshotHeader header;

	if (length < sizeof(header))
		return false;
	memcpy(&header, data, sizeof(header));
	return header.magic == SNAPSHOT_MAGIC && header.version == SNAPSHOT_VERSION &&
		bound->complete && header.slot == bound->slot &&
		header.groups_per_user == bound->groups_per_user &&
		memcmp(header.key, bound->key, sizeof(header.key)) == 0;
}

/* Is the pair of pseudorandom value "value" kept, by a worker's snapshot? */
bool
uldp_group_snapshot_kept(const UldpGroupSnapshot *snapshot, uint64 value)
{
	return sorted_find(snapshot->dropped, snapshot->ndropped, sizeof(uint64), value) < 0;
}

/*
 * The users that keep the group named "name", by a worker's snapshot: 0 if
 * no row was registered in it.
 */
int64
uldp_group_snapshot_users(const UldpGroupSnapshot *snapshot, const char *name, uint32 length)
{
	int64		found = sorted_find(snapshot->groups, snapshot->ngroups, sizeof(SnapshotGroup),
									uldp_siphash24(snapshot->key, name, length));
	SnapshotGroup entry;

	if (found < 0)
		return 0;
	memcpy(&entry, snapshot->groups + found * sizeof(SnapshotGroup), sizeof(entry));
	return entry.users;
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
 * Refuses a value of "bytes" that PostgreSQL could not pass between
 * processes (a varlena holds at most 1 GB).  Over a protected table
 * statement.c refused such a plan before reading, from the table's size;
 * over a table the caller may read, the error tells nothing new.
 */
static void
check_passable(Size bytes, const char *what)
{
	if (bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a grouped release's %s would take %zu MB, more than the 1 GB PostgreSQL can pass to or from a parallel worker",
						what, bytes / (1024 * 1024)),
				 errhint("Run it without parallel workers (SET max_parallel_workers_per_gather = 0).")));
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
	bytea	   *snapshot;
	char	   *cursor;

	check_passable(bytes, "registry of groups");
	snapshot = MemoryContextAllocHuge(bound->context, bytes);
	cursor = VARDATA(snapshot) + sizeof(header);

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

/*
 * A partial registry of a parallel plan's registration: one process's rows,
 * with the registry's key (which the leader passes to the workers), to be
 * merged into the registry by registry_combinefn.
 */
UldpGroupBound *
uldp_group_bound_partial(int groups_per_user, const uint64 key[2], MemoryContext context)
{
	/* secret as the key is, drawing nothing (the leader's draws stay those of a serial plan) */
	return bound_new(groups_per_user, key, key[0] ^ key[1], context, true);
}

/*
 * A partial registry, serialized: this header, then the names of its
 * groups in the order of their numbers (each its length, uint32, and its
 * bytes), its users (each its id, its count n of groups, then their n
 * numbers), and its dropped values.  Unaligned.
 */
typedef struct PartialHeader
{
	uint32		magic;			/* PARTIAL_MAGIC */
	uint16		version;		/* PARTIAL_VERSION */
	uint16		unused;
	int32		groups_per_user;
	uint32		ngroups;
	int64		nusers;
	int64		ndropped;
	int64		name_bytes;
} PartialHeader;

#define PARTIAL_MAGIC 0x554c5231	/* "ULR1" */
#define PARTIAL_VERSION 2
/* a user's entry: id and n, then n group numbers */
#define PARTIAL_USER_BYTES(n) (sizeof(uint64) + sizeof(uint32) + (n) * sizeof(uint32))

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

/*
 * A partial registry, serialized (see PartialHeader), in the room of
 * uldp_pass_alloc for the serialization function called with "fcinfo", or
 * NULL: in the current memory context.
 */
bytea *
uldp_group_bound_serialize(UldpGroupBound *bound, FunctionCallInfo fcinfo)
{
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
	Size		user_bytes = 0;
	uint32	   *groups = palloc(k * sizeof(uint32));

	register_flush(bound);
	register_flush(bound);
	/* each user's entry: its id, n, and n groups */
	bound_users_start_iterate(bound->users, &iterator);
	while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
		user_bytes += PARTIAL_USER_BYTES(k == 1 ? 1 :
										 entry->extended ? user_row(bound, entry->group_or_row)[0] :
										 pg_popcount64(entry->held.bits));
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
	check_passable(VARHDRSZ + sizeof(header) + slots.bytes + user_bytes +
				   header.ndropped * sizeof(uint64), "partial registry of groups");
	result = uldp_pass_alloc(fcinfo, VARHDRSZ + sizeof(header) + slots.bytes + user_bytes +
							 header.ndropped * sizeof(uint64));
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
			cursor = put(cursor, &entry->group_or_row, sizeof(uint32));
		}
		else
		{
			uint32		n = user_groups(bound, entry, groups);

			cursor = put(cursor, &n, sizeof(uint32));
			cursor = put(cursor, groups, n * sizeof(uint32));
		}
	}
	dropped_values_start_iterate(bound->dropped, &dropped);
	while ((value = dropped_values_iterate(bound->dropped, &dropped)) != NULL)
		cursor = put(cursor, &value->value, sizeof(uint64));
	SET_VARSIZE(result, cursor - (char *) result);
	pfree(groups);
	return result;
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

/* users of a partial registry merged at a time (merge_users) */
#define MERGE_BATCH 8

/* a user of a partial registry, and where its groups are (unaligned) */
typedef struct MergedUser
{
	uint64		user;
	uint32		hash;
	uint32		n;
	uint32	   *groups;			/* its n groups, by their numbers in "bound" */
	uint32		first;			/* k > 1: its first group its bits did not take */
	uint32		row;			/* k > 1, if first < n: its row in "bound" */
} MergedUser;

/*
 * Adds a batch of a partial registry's users, each with all its groups:
 * their buckets were prefetched; for k > 1 the groups go to a user's bits
 * as long as they fit, and the rows of the users whose groups do not are
 * prefetched here, after the batch's lookups, before the rest of their
 * groups are added.  Each user comes once in a partial registry.
 */
static void
merge_users(UldpGroupBound *bound, MergedUser *batch, int count)
{
	int			k = bound->groups_per_user;

	for (int i = 0; i < count; i++)
	{
		bool		found;
		BoundUser  *entry = bound_users_insert_hash(bound->users, batch[i].user,
												   batch[i].hash, &found);

		if (k == 1)
		{
			keep_only_group(bound, entry, found, batch[i].groups[0]);
			continue;
		}
		if (!found)
			new_user(entry);
		batch[i].first = 0;
		if (!entry->extended)
		{
			while (batch[i].first < batch[i].n &&
				   keep_group_bit(entry, batch[i].groups[batch[i].first], k))
				batch[i].first++;
			if (batch[i].first == batch[i].n)
				continue;
			extend_user(bound, entry);
		}
		batch[i].row = entry->group_or_row;
	}
	if (k == 1)
		return;
	for (int i = 0; i < count; i++)
		if (batch[i].first < batch[i].n)
			prefetch_row(bound, user_row(bound, batch[i].row));
	for (int i = 0; i < count; i++)
		for (uint32 j = batch[i].first; j < batch[i].n; j++)
			keep_group(bound, batch[i].user, user_row(bound, batch[i].row), batch[i].groups[j]);
}

/*
 * Adds a serialized partial registry to "bound": its groups by name, each
 * user's groups as if its rows were registered here (a user's k groups of
 * smallest value among all its groups are the k smallest among its partial
 * k smallest), and its dropped values, dropped here too (a value one
 * process dropped had k smaller ones of the same user there, which reach
 * "bound" too).
 */
static void
merge_serialized(UldpGroupBound *bound, const bytea *serialized)
{
	const char *cursor = VARDATA_ANY(serialized);
	const char *end = cursor + VARSIZE_ANY_EXHDR(serialized);
	PartialHeader header;
	uint32	   *numbers;
	uint32	   *groups;
	int			k = bound->groups_per_user;

	take(&cursor, end, &header, sizeof(header));
	if (header.magic != PARTIAL_MAGIC || header.version != PARTIAL_VERSION ||
		header.groups_per_user != k || header.nusers < 0 || header.ndropped < 0)
		partial_invalid();
	/*
	 * The partial's users and dropped values come in the order of their
	 * hash: inserted so into a smaller table than the partial's they would
	 * pile up in long probe runs, so the tables first grow to hold as many
	 * as the partial holds (a table at least as large keeps them in order).
	 * Most of a partial's users are usually the registry's already (a user's
	 * rows are spread over the processes): growing for the sum of both would
	 * double a large table for nothing.  The dropped values of two processes
	 * are distinct pairs, so that table grows for both.
	 */
	grow_for(Max(bound->users->members, header.nusers), bound->users->grow_threshold,
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
	groups = palloc_extended(MERGE_BATCH * k * sizeof(uint32), MCXT_ALLOC_HUGE);
	/* pairs that this registry buffered, if any, come first */
	register_flush(bound);
	register_flush(bound);
	for (int64 u = 0; u < header.nusers;)
	{
		MergedUser	batch[MERGE_BATCH];
		int			count = 0;

		for (; count < MERGE_BATCH && u < header.nusers; count++, u++)
		{
			MergedUser *merged = &batch[count];

			take(&cursor, end, &merged->user, sizeof(merged->user));
			take(&cursor, end, &merged->n, sizeof(merged->n));
			if (merged->n < 1 || merged->n > (uint32) k)
				partial_invalid();
			merged->groups = groups + count * k;
			for (uint32 i = 0; i < merged->n; i++)
			{
				uint32		group;

				take(&cursor, end, &group, sizeof(group));
				if (group >= header.ngroups)
					partial_invalid();
				merged->groups[i] = numbers[group];
			}
			merged->hash = bound_user_hash(merged->user);
			__builtin_prefetch(&bound->users->data[merged->hash & bound->users->sizemask]);
		}
		merge_users(bound, batch, count);
	}
	pfree(groups);
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

/*
 * A partial registry for the final aggregation of its own process: a
 * handle (handover.c).  The registry that receives it takes it over as its
 * own content (uldp_group_bound_complete), where a serialized one is added
 * user by user.
 */
bytea *
uldp_group_bound_hand_over(UldpGroupBound *bound)
{
	return uldp_hand_over(bound, bound->owner);
}

/*
 * Takes a handed-over partial registry as the registry's own content: the
 * registry has received nothing yet, so its users, groups and dropped values
 * are exactly the partial's, and its memory becomes the registry's.
 */
static void
adopt(UldpGroupBound *bound, UldpGroupBound *partial)
{
	if (partial->groups_per_user != bound->groups_per_user ||
		memcmp(partial->key, bound->key, sizeof(bound->key)) != 0)
		partial_invalid();
	register_flush(partial);
	register_flush(partial);
	bound_users_destroy(bound->users);
	dropped_values_destroy(bound->dropped);
	bound->users = partial->users;
	bound->names = partial->names;
	bound->dropped = partial->dropped;
	memcpy(bound->row_chunks, partial->row_chunks, sizeof(bound->row_chunks));
	memcpy(bound->row_allocations, partial->row_allocations, sizeof(bound->row_allocations));
	bound->nchunks = partial->nchunks;
	bound->nrows = partial->nrows;
	bound->rows_capacity = partial->rows_capacity;
	bound->values = partial->values;
	bound->nvalues = partial->nvalues;
	bound->values_capacity = partial->values_capacity;
	MemoryContextSetParent(partial->context, bound->context);
}

/*
 * Keeps a partial registry received by the final aggregation (serialized,
 * or a handle), which "bound" now owns: it is merged when the registration
 * completes, after all are received, so that a handed-over one can be taken
 * over whatever the order they arrive in.
 */
void
uldp_group_bound_receive(UldpGroupBound *bound, bytea *received)
{
	MemoryContext old_context;

	if (bound->complete)
		elog(ERROR, "uldp received a partial registry of groups after its registration completed");
	old_context = MemoryContextSwitchTo(bound->context);
	bound->received = lappend(bound->received, received);
	MemoryContextSwitchTo(old_context);
}

/*
 * Merges the received partial registries: the first handed-over one is
 * taken over, then the others are added to it (handed-over ones serialized
 * first).
 */
static void
merge_received(UldpGroupBound *bound)
{
	ListCell   *cell;
	bool		adopted = false;

	foreach(cell, bound->received)
	{
		bytea	   *received = lfirst(cell);
		UldpGroupBound *partial = uldp_take_handed_over(received);

		if (partial == NULL)
			continue;
		if (!adopted)
		{
			adopt(bound, partial);
			adopted = true;
			lfirst(cell) = NULL;
		}
		else
			lfirst(cell) = uldp_group_bound_serialize(partial, NULL);
		pfree(received);
	}
	foreach(cell, bound->received)
	{
		if (lfirst(cell) == NULL)
			continue;
		merge_serialized(bound, lfirst(cell));
		pfree(lfirst(cell));
	}
	list_free(bound->received);
	bound->received = NIL;
}

/*
 * Frees what only registration reads, once the registry is complete: its
 * users, their rows and their values.  What it answers from then on is in
 * its groups' names and counts of users and in its dropped values; the
 * aggregation that follows can take the memory again.
 */
static void
free_users(UldpGroupBound *bound)
{
	bound_users_destroy(bound->users);
	bound->users = NULL;
	for (int chunk = 0; chunk < bound->nchunks; chunk++)
		pfree(bound->row_allocations[chunk]);
	bound->nchunks = 0;
	bound->nrows = bound->rows_capacity = 0;
	if (bound->values != NULL)
		pfree(bound->values);
	bound->values = NULL;
	bound->nvalues = bound->values_capacity = 0;
}

/*
 * Completes a registry (every row was registered, or every partial registry
 * received): merges what it received, counts the users of every group;
 * returns its snapshot.
 */
bytea *
uldp_group_bound_complete(UldpGroupBound *bound)
{
	if (!bound->complete)
	{
		merge_received(bound);
		/* the buffered pairs, then the pairs that this defers */
		register_flush(bound);
		register_flush(bound);
		count_group_users(bound);
		bound->complete = true;
		bound->snapshot = build_snapshot(bound);
		free_users(bound);
	}
	return bound->snapshot;
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

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
 * under the registry's key, and the leader merges them into the registry:
 * a user's k smallest values are the k smallest of its partial k smallest,
 * and a value a process dropped had k smaller ones of the same user there,
 * so it is dropped in the merge too.
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

#include "port/pg_bitutils.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "groupbound.h"
#include "groupnames.h"
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
	bound->row_words = 1 + bound->groups_per_user + (bound->groups_per_user + 1) / 2;
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
 * Registers a pair: its user, its pseudorandom value and its group's
 * number, in a registry not yet complete.  The pair is buffered while its
 * user's bucket is prefetched: once the users outgrow the CPU caches, each
 * pair costs a cache miss, and buffering a few overlaps them.  Completing
 * the registry adds what is still buffered.
 */
void
uldp_group_bound_add(UldpGroupBound *bound, uint64 user, uint64 value, uint32 group)
{
	uint32		hash = bound_user_hash(user);

	Assert(!bound->complete);
	__builtin_prefetch(&bound->users->data[hash & bound->users->sizemask]);
	bound->pending[bound->npending].user = user;
	bound->pending[bound->npending].value = value;
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
 * Completes a registry (every row was registered): counts the users of every
 * group; returns its snapshot.
 */
bytea *
uldp_group_bound_complete(UldpGroupBound *bound)
{
	if (!bound->complete)
	{
		/* the buffered pairs, then the pairs that this defers */
		register_flush(bound);
		register_flush(bound);
		count_group_users(bound);
		bound->complete = true;
		bound->snapshot = build_snapshot(bound);
	}
	return bound->snapshot;
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
	int64		nusers;
	int64		ndropped;
	int64		name_bytes;
} PartialHeader;

#define PARTIAL_MAGIC 0x554c5231	/* "ULR1" */
#define PARTIAL_VERSION 1
/* a user's entry: id and n, then n values and group numbers */
#define PARTIAL_USER_BYTES(n) (sizeof(uint64) + sizeof(uint32) + \
							   (n) * (sizeof(uint64) + sizeof(uint32)))

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

/* A partial registry, serialized (see PartialHeader). */
bytea *
uldp_group_bound_serialize(UldpGroupBound *bound)
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

	register_flush(bound);
	register_flush(bound);
	/* each user's entry: its id, n, and n values with their groups */
	bound_users_start_iterate(bound->users, &iterator);
	while ((entry = bound_users_iterate(bound->users, &iterator)) != NULL)
		user_bytes += PARTIAL_USER_BYTES(k == 1 ? 1 : value_row(bound, entry->group_or_row)[0]);
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
	result = palloc_extended(VARHDRSZ + sizeof(header) + slots.bytes + user_bytes +
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

/*
 * Adds a serialized partial registry to "bound": its groups by name, each
 * user's values as if its rows were registered here (a user's k smallest
 * values of all its pairs are the k smallest of its partial k smallest),
 * and its dropped values, dropped here too (a value one process dropped
 * had k smaller ones of the same user there, which reach "bound" too).
 */
void
uldp_group_bound_merge(UldpGroupBound *bound, const bytea *serialized)
{
	const char *cursor = VARDATA_ANY(serialized);
	const char *end = cursor + VARSIZE_ANY_EXHDR(serialized);
	PartialHeader header;
	uint32	   *numbers;
	int			k = bound->groups_per_user;

	if (bound->complete)
		elog(ERROR, "uldp merged a partial registry of groups after its registration completed");
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
			uldp_group_bound_add(bound, user, value, numbers[group]);
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

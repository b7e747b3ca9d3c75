/*-------------------------------------------------------------------------
 *
 * groupnames.c
 *	  The names of the groups of a grouped release, each given a number.
 *
 * A grouped release names a group by the bytes of its keys (groupbound.c).
 * The registry of kept groups stores, for each kept (user, group) pair, the
 * group's number instead of its name, so that after registration the users
 * that keep each group can be counted in an array (partition selection,
 * selection.c) without storing a name per pair.  Numbers are given in the
 * order names are first added: 0, 1, 2, ...
 *
 * The names are kept end to end in one growing buffer, and a hash table
 * (simplehash) finds a name's number; an array finds a number's name (the
 * registry computes a pair's pseudorandom value from it only when a user
 * has more than k groups).  Names are hashed with a seed drawn
 * for every run, so that keys chosen to collide are hard to find.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

#include "groupnames.h"
#include "tablemem.h"
#include "userstate.h"

/* where a name is in the buffer; PROBE: the name being looked up */
typedef struct NameRef
{
	Size		offset;
	uint32		length;
} NameRef;

#define PROBE SIZE_MAX

typedef struct GroupName
{
	NameRef		name;
	uint32		hash;
	uint32		number;
	char		status;
} GroupName;

static inline uint32 name_hash(void *private_data, NameRef name);
static inline bool name_equal(void *private_data, NameRef a, NameRef b);

#define SH_PREFIX		group_names
#define SH_ELEMENT_TYPE GroupName
#define SH_KEY_TYPE		NameRef
#define SH_KEY			name
#define SH_HASH_KEY(tb, key) name_hash((tb)->private_data, key)
#define SH_EQUAL(tb, a, b) name_equal((tb)->private_data, a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		static inline
#define SH_USE_NONDEFAULT_ALLOCATOR
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"
ULDP_TABLE_ALLOCATOR(group_names)

/* bytes of names the buffer has room for at first */
#define INITIAL_NAME_BYTES 1024

struct UldpGroupNames
{
	MemoryContext context;
	group_names_hash *table;
	char	   *bytes;			/* the names, end to end */
	Size		used;
	Size		allocated;
	uint32		count;
	NameRef    *by_number;		/* each name, by its number */
	Size		numbers_allocated;
	uint64		seed;			/* of the names' hash */
	const char *probe;			/* the name being looked up (PROBE) */
};

static inline const char *
name_bytes(UldpGroupNames *names, NameRef name)
{
	return name.offset == PROBE ? names->probe : names->bytes + name.offset;
}

static inline uint32
name_hash(void *private_data, NameRef name)
{
	UldpGroupNames *names = private_data;

	return (uint32) hash_bytes_extended((const unsigned char *) name_bytes(names, name),
										name.length, names->seed);
}

static inline bool
name_equal(void *private_data, NameRef a, NameRef b)
{
	UldpGroupNames *names = private_data;

	return a.length == b.length &&
		memcmp(name_bytes(names, a), name_bytes(names, b), a.length) == 0;
}

/*
 * Worst-case memory per name: its entry (with the hash table's slack, as for
 * users) and its bytes (the buffer doubles as it grows: up to twice the bytes
 * in use, and while it doubles the old buffer too).
 */
double
uldp_group_names_bytes_per_name(double name_bytes)
{
	return sizeof(GroupName) / ULDP_HASH_FILLFACTOR * 2 + 3 * sizeof(NameRef) + 3 * name_bytes;
}

/*
 * An empty set of names, hashed with a secret "seed" (so that no choice of
 * keys can make their lookups slow).
 */
UldpGroupNames *
uldp_group_names_create(MemoryContext context, uint64 seed)
{
	UldpGroupNames *names = MemoryContextAllocZero(context, sizeof(UldpGroupNames));

	names->context = context;
	names->table = group_names_create(context, 64, names);
	names->seed = seed;
	return names;
}

/* Copies a new name to the end of the buffer. */
static Size
append_name(UldpGroupNames *names, const char *name, uint32 length)
{
	Size		offset = names->used;

	if (names->used + length > names->allocated)
	{
		Size		allocated = Max(names->allocated, INITIAL_NAME_BYTES);

		while (allocated < names->used + length)
			allocated *= 2;
		names->bytes = names->bytes == NULL ?
			MemoryContextAllocHuge(names->context, allocated) :
			repalloc_huge(names->bytes, allocated);
		names->allocated = allocated;
	}
	memcpy(names->bytes + offset, name, length);
	names->used += length;
	return offset;
}

/* The number of a name, given the next number if it is new. */
uint32
uldp_group_names_add(UldpGroupNames *names, const char *name, uint32 length)
{
	NameRef		probe = {PROBE, length};
	bool		found;
	GroupName  *entry;

	names->probe = name;
	entry = group_names_insert(names->table, probe, &found);
	if (!found)
	{
		entry->name.offset = append_name(names, name, length);
		if (names->count == names->numbers_allocated)
		{
			names->numbers_allocated = Max(2 * names->numbers_allocated, 64);
			names->by_number = names->by_number == NULL ?
				MemoryContextAllocHuge(names->context,
									   names->numbers_allocated * sizeof(NameRef)) :
				repalloc_huge(names->by_number, names->numbers_allocated * sizeof(NameRef));
		}
		names->by_number[names->count] = entry->name;
		entry->number = names->count++;
	}
	return entry->number;
}

/* The name of number "number" (one that was given), and its length. */
const char *
uldp_group_names_name(const UldpGroupNames *names, uint32 number, uint32 *length)
{
	Assert(number < names->count);
	*length = names->by_number[number].length;
	return names->bytes + names->by_number[number].offset;
}

/* The number of a name, or ULDP_NO_GROUP if it was never added. */
uint32
uldp_group_names_find(UldpGroupNames *names, const char *name, uint32 length)
{
	NameRef		probe = {PROBE, length};
	GroupName  *entry;

	names->probe = name;
	entry = group_names_lookup(names->table, probe);
	return entry == NULL ? ULDP_NO_GROUP : entry->number;
}

/* how many names were added */
uint32
uldp_group_names_count(const UldpGroupNames *names)
{
	return names->count;
}

/* Calls "each" with every name and its number, in no particular order. */
void
uldp_group_names_each(UldpGroupNames *names, UldpGroupNameVisitor each, void *arg)
{
	group_names_iterator iterator;
	GroupName  *entry;

	group_names_start_iterate(names->table, &iterator);
	while ((entry = group_names_iterate(names->table, &iterator)) != NULL)
		each(arg, entry->number, names->bytes + entry->name.offset, entry->name.length);
}

/*-------------------------------------------------------------------------
 *
 * usertable.h
 *	  A table of users (the privacy unit), each with the running sum and
 *	  count of its rows, and its serialized form.  It holds no privacy
 *	  parameter and adds no noise: the uldp aggregates (userstate.c) keep
 *	  one, and so do the shards' state aggregates (extension uldp_shard),
 *	  whose serialized tables the coordinator merges.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_USERTABLE_H
#define ULDP_USERTABLE_H

/* user ids longer than this many bytes are skipped */
#define ULDP_MAX_ID_BYTES 1024
/* per-user hash tables double when this full, and only then */
#define ULDP_HASH_FILLFACTOR 0.9
/* a serialized user: count, sum, id */
#define ULDP_SERIALIZED_USER_BYTES (sizeof(uint32) + sizeof(double) + sizeof(uint64))
/* additions buffered while their user's bucket is prefetched */
#define ULDP_PENDING_USERS 8
/* serialized users come in this many partitions (usermerge.c) */
#define ULDP_USER_PARTITION_BITS 11
#define ULDP_USER_PARTITIONS (1 << ULDP_USER_PARTITION_BITS)

/* the splitmix64 finaliser: every input bit reaches every output bit */
static inline uint64
uldp_mix64(uint64 x)
{
	x = (x ^ (x >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

/*
 * One entry per user, 24 bytes: adding a row costs about one cache miss
 * once the users outgrow the CPU caches, so the smaller the table the
 * faster the aggregate.  "id" is the user's key (uldp_user_key).
 */
typedef struct UldpUser
{
	uint64		id;
	double		sum;
	uint32		count;
	char		status;
} UldpUser;

#define SH_PREFIX		users
#define SH_ELEMENT_TYPE UldpUser
#define SH_KEY_TYPE		uint64
#define SH_SCOPE		extern
#define SH_DECLARE
#include "lib/simplehash.h"

/*
 * Called before the table grows to "entries" entries, with the argument
 * given at creation: raises an error if that is too much memory.
 */
typedef void (*UldpTableGrowthCheck) (void *arg, uint64 entries);

typedef struct UldpUserTable
{
	users_hash *users;
	UldpTableGrowthCheck check_growth;	/* or NULL */
	void	   *check_arg;
	/* the users its first growth makes room for (uldp_user_table_expect) */
	uint64		expected_users;
	/* additions whose user entry is being prefetched */
	int			npending;
	struct
	{
		uint64		id;
		double		sum;
		uint64		count;
		uint32		hash;
	}			pending[ULDP_PENDING_USERS];
} UldpUserTable;

/*
 * A serialized table as a value (bytea): this header, then the users.  The
 * magic number is written in the writer's byte order, so a reader on a
 * machine of the other order refuses it instead of misreading it.
 */
typedef struct UldpTableHeader
{
	uint32		magic;			/* ULDP_TABLE_MAGIC */
	uint16		version;		/* ULDP_TABLE_VERSION */
	bool		key_byval;		/* the user id type's, see uldp_user_key */
	int16		key_typlen;
	int64		nusers;
} UldpTableHeader;

#define ULDP_TABLE_MAGIC 0x554c5431	/* "ULT1" */
#define ULDP_TABLE_VERSION 2

/* the most users a serialized table holds: a value takes at most 1 GB */
#define ULDP_MAX_SERIALIZED_USERS \
	((MaxAllocSize - VARHDRSZ - sizeof(UldpTableHeader)) / ULDP_SERIALIZED_USER_BYTES)

extern bool uldp_user_key(Datum id, bool byval, int16 typlen, uint64 *key);
extern void uldp_user_table_init(UldpUserTable *table, MemoryContext context,
								 uint32 expected_users,
								 UldpTableGrowthCheck check_growth, void *check_arg);
extern void uldp_user_table_expect(UldpUserTable *table, int64 users);
extern void uldp_user_table_flush(UldpUserTable *table);
extern char *uldp_user_table_write(UldpUserTable *table, char *cursor);
extern char *uldp_user_table_write_out(UldpUserTable *table, char *cursor);
extern bool uldp_user_table_merge_fits(UldpUserTable *table, const char *cursor,
									   int64 nusers);
extern const char *uldp_user_table_merge(UldpUserTable *table, const char *cursor,
										 int64 nusers);
extern void uldp_user_table_add_table(UldpUserTable *table, UldpUserTable *source);
extern bytea *uldp_user_table_to_bytea(UldpUserTable *table, bool key_byval,
									   int16 key_typlen);
extern const char *uldp_user_table_read_header(bytea *value, UldpTableHeader *header);
extern void uldp_user_state_invalid(void) pg_attribute_noreturn();

static inline uint32
uldp_user_hash(uint64 id)
{
	return (uint32) uldp_mix64(id);
}

/*
 * The partition of a user's serialized entry: the top bits of its hash, so
 * that the table's buckets, which its low bits choose, spread over all of
 * them.
 */
static inline int
uldp_user_partition(uint64 id)
{
	return (int) (uldp_user_hash(id) >> (32 - ULDP_USER_PARTITION_BITS));
}

/*
 * Adds "count" rows, whose values sum to "sum", to a user.  A user with more
 * than 2^32 - 1 rows has its sum and count halved, which keeps the average
 * it contributes (up to one row in 2^32) without a wider counter in every
 * entry.
 */
static inline void
uldp_user_add_rows(UldpUser *user, double sum, uint64 count)
{
	uint64		total = user->count + count;

	user->sum += sum;
	while (unlikely(total > PG_UINT32_MAX))
	{
		total /= 2;
		user->sum /= 2;
	}
	user->count = (uint32) total;
}

/*
 * Adds "count" rows of a user, whose values sum to "sum".  Once the users
 * outgrow the CPU caches, each addition costs a cache miss on the user's
 * bucket; buffering a few additions and prefetching their buckets overlaps
 * those misses with other work (the executor's, on the next rows, or the
 * next entries of a table being merged).  Readers of the table flush it
 * first.
 */
static inline void
uldp_user_table_add(UldpUserTable *table, uint64 id, double sum, uint64 count)
{
	uint32		hash = uldp_user_hash(id);

	__builtin_prefetch(&table->users->data[hash & table->users->sizemask]);
	table->pending[table->npending].id = id;
	table->pending[table->npending].sum = sum;
	table->pending[table->npending].count = count;
	table->pending[table->npending].hash = hash;
	if (++table->npending == ULDP_PENDING_USERS)
		uldp_user_table_flush(table);
}

/*
 * A serialized user: count (uint32), sum (double), key (uint64), unaligned,
 * in the machine's byte order.
 */
#define ULDP_ENTRY_SUM_OFFSET sizeof(uint32)
#define ULDP_ENTRY_ID_OFFSET (sizeof(uint32) + sizeof(double))

static inline void
uldp_user_entry_write(char *entry, const UldpUser *user)
{
	memcpy(entry, &user->count, sizeof(uint32));
	memcpy(entry + ULDP_ENTRY_SUM_OFFSET, &user->sum, sizeof(double));
	memcpy(entry + ULDP_ENTRY_ID_OFFSET, &user->id, sizeof(uint64));
}

static inline uint64
uldp_user_entry_id(const char *entry)
{
	uint64		id;

	memcpy(&id, entry + ULDP_ENTRY_ID_OFFSET, sizeof(id));
	return id;
}

static inline void
uldp_user_entry_read(const char *entry, uint32 *count, double *sum)
{
	memcpy(count, entry, sizeof(uint32));
	memcpy(sum, entry + ULDP_ENTRY_SUM_OFFSET, sizeof(double));
}

/* The number of users of a flushed table. */
static inline uint64
uldp_user_table_users(const UldpUserTable *table)
{
	return table->users->members;
}

/* The bytes a flushed table's users take serialized. */
static inline Size
uldp_user_table_serialized_bytes(const UldpUserTable *table)
{
	return table->users->members * ULDP_SERIALIZED_USER_BYTES;
}

#endif							/* ULDP_USERTABLE_H */

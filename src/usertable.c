/*-------------------------------------------------------------------------
 *
 * usertable.c
 *	  A table of users with the running sum and count of their rows.
 *
 * A user is identified by the binary image of its id (uldp_user_key):
 * by-value ids (int2, int4, int8, date, ...) are the key directly; other ids
 * (text, uuid, numeric, ...) are keyed by a 64-bit hash of their bytes, so
 * that every user takes the same memory whatever its id.  Two ids that
 * collide (about n^2 / 2^65 for n users) would count as one user: their
 * rows share one bounded contribution, which never weakens the privacy of
 * either.  Ids longer than ULDP_MAX_ID_BYTES are skipped, before they are
 * read into memory.  The key depends only on the id's type and bytes, so a
 * shard and the coordinator key a user alike.
 *
 * The open-addressing table grows only when it is 90% full, never on long
 * probe sequences, so its size depends on the number of users alone; its
 * owner decides, before every growth, whether the memory may be taken.
 *
 * Serialized, a table is its users one after another: count (uint32), sum
 * (double), key (uint64), in the machine's byte order, in partition order
 * (uldp_user_partition; usermerge.c merges runs so written); as a value
 * (bytea) it is preceded by an UldpTableHeader.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"

#include "tablemem.h"
#include "usertable.h"

#define SH_PREFIX		users
#define SH_ELEMENT_TYPE UldpUser
#define SH_KEY_TYPE		uint64
#define SH_KEY			id
#define SH_HASH_KEY(tb, key) uldp_user_hash(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_GROW_MIN_FILLFACTOR ULDP_HASH_FILLFACTOR
#define SH_SCOPE		extern
#define SH_USE_NONDEFAULT_ALLOCATOR
#define SH_DEFINE
#include "lib/simplehash.h"
ULDP_TABLE_ALLOCATOR(users)

/*
 * The 64-bit key of a user id datum (see above), or false when the id is
 * longer than ULDP_MAX_ID_BYTES and its row is to be skipped.
 */
bool
uldp_user_key(Datum id, bool byval, int16 typlen, uint64 *key)
{
	const char *bytes;
	Size		len;

	if (byval)
	{
		*key = (uint64) id;
		return true;
	}
	if (typlen == -1)
	{
		struct varlena *varlena;

		if (toast_raw_datum_size(id) - VARHDRSZ > ULDP_MAX_ID_BYTES)
			return false;
		varlena = PG_DETOAST_DATUM_PACKED(id);
		bytes = VARDATA_ANY(varlena);
		len = VARSIZE_ANY_EXHDR(varlena);
	}
	else if (typlen == -2)
	{
		bytes = DatumGetCString(id);
		len = strlen(bytes);
		if (len > ULDP_MAX_ID_BYTES)
			return false;
	}
	else
	{
		bytes = DatumGetPointer(id);
		len = typlen;
	}
	*key = hash_bytes_extended((const unsigned char *) bytes, len, 0);
	return true;
}

/*
 * Makes an empty table in "context" with room for "expected_users";
 * "check_growth", unless NULL, is asked before the table takes memory.
 */
void
uldp_user_table_init(UldpUserTable *table, MemoryContext context,
					 uint32 expected_users,
					 UldpTableGrowthCheck check_growth, void *check_arg)
{
	table->check_growth = check_growth;
	table->check_arg = check_arg;
	table->npending = 0;
	table->expected_users = 0;
	if (check_growth)
		check_growth(check_arg, expected_users / ULDP_HASH_FILLFACTOR);
	table->users = users_create(context, expected_users, NULL);
}

/*
 * Makes the table's first growth, if it has not grown yet, take it at once
 * to room for "users" (no doubling and rehashing on the way), when that is
 * more than a doubling would give (at most PG_INT32_MAX users, as a table
 * created for its users was).  The memory is taken when the table would
 * grow anyway, not before: its owner may be asked for it then.
 */
void
uldp_user_table_expect(UldpUserTable *table, int64 users)
{
	table->expected_users = Min(Max(users, 0), PG_INT32_MAX);
}

/*
 * Writes a flushed table's users at "cursor" (uldp_user_table_write) and
 * empties it, freeing its entries.
 */
char *
uldp_user_table_write_out(UldpUserTable *table, char *cursor)
{
	MemoryContext context = table->users->ctx;

	cursor = uldp_user_table_write(table, cursor);
	users_destroy(table->users);
	table->users = users_create(context, 0, NULL);
	table->expected_users = 0;
	return cursor;
}

/* Grows the table at once to room for "users", if it has less. */
static void
table_reserve(UldpUserTable *table, uint64 users)
{
	uint64		size_needed = (uint64) (users / ULDP_HASH_FILLFACTOR) + 1;

	if (size_needed <= table->users->size)
		return;
	if (table->check_growth)
		table->check_growth(table->check_arg, pg_nextpower2_64(size_needed));
	users_grow(table->users, size_needed);
}

static void
table_accumulate(UldpUserTable *table, uint64 id, uint32 hash, double sum,
				 uint64 count)
{
	UldpUser   *user;
	bool		found;

	if (unlikely(table->users->members + 1 >= table->users->grow_threshold))
	{
		if (table->expected_users > 2 * (uint64) table->users->grow_threshold)
			table_reserve(table, table->expected_users);
		else if (table->check_growth)
			table->check_growth(table->check_arg, 2 * table->users->size);
		table->expected_users = 0;
	}
	user = users_insert_hash(table->users, id, hash, &found);
	if (!found)
	{
		user->count = 0;
		user->sum = 0;
	}
	uldp_user_add_rows(user, sum, count);
}

/* Adds the buffered additions, whose buckets were prefetched. */
void
uldp_user_table_flush(UldpUserTable *table)
{
	for (int i = 0; i < table->npending; i++)
		table_accumulate(table, table->pending[i].id, table->pending[i].hash,
						 table->pending[i].sum, table->pending[i].count);
	table->npending = 0;
}

/*
 * Writes a flushed table's users at "cursor", which has room for
 * uldp_user_table_serialized_bytes(), in partition order (a counting sort
 * on the partition); returns the end of what it wrote.
 */
char *
uldp_user_table_write(UldpUserTable *table, char *cursor)
{
	int64	   *offsets = palloc0(ULDP_USER_PARTITIONS * sizeof(int64));
	int64		position = 0;
	users_iterator iterator;
	UldpUser   *user;

	users_start_iterate(table->users, &iterator);
	while ((user = users_iterate(table->users, &iterator)) != NULL)
		offsets[uldp_user_partition(user->id)]++;
	for (int p = 0; p < ULDP_USER_PARTITIONS; p++)
	{
		int64		count = offsets[p];

		offsets[p] = position;
		position += count;
	}
	users_start_iterate(table->users, &iterator);
	while ((user = users_iterate(table->users, &iterator)) != NULL)
	{
		uldp_user_entry_write(cursor + offsets[uldp_user_partition(user->id)]++ *
							  ULDP_SERIALIZED_USER_BYTES, user);
	}
	pfree(offsets);
	return cursor + position * ULDP_SERIALIZED_USER_BYTES;
}

/* users of a serialized table looked up to estimate how many are new */
#define MERGE_SAMPLE 256

static inline bool
table_has(UldpUserTable *table, uint64 id)
{
	return users_lookup_hash(table->users, id, uldp_user_hash(id)) != NULL;
}

/*
 * The users the table would hold with the new ones among "incoming", of
 * which "found" of the first "sample" are in it already.
 */
static uint64
users_with_new(UldpUserTable *table, int64 incoming, int64 sample, int64 found)
{
	return uldp_user_table_users(table) + incoming - incoming * found / sample;
}

/*
 * Grows the table to room for its users and the new ones among "incoming",
 * of which "found" of the first "sample" are in it already.
 */
static void
reserve_for_new(UldpUserTable *table, int64 incoming, int64 sample, int64 found)
{
	if (sample > 0)
		table_reserve(table, users_with_new(table, incoming, sample, found));
}

/*
 * How many of the first "sample" of "nusers" serialized users at "cursor"
 * the table holds already.
 */
static int64
sample_found(UldpUserTable *table, const char *cursor, int64 sample)
{
	int64		found = 0;

	for (int64 i = 0; i < sample; i++)
		found += table_has(table, uldp_user_entry_id(cursor + i * ULDP_SERIALIZED_USER_BYTES));
	return found;
}

/*
 * Would the flushed table hold "nusers" serialized users read from "cursor"
 * without growing?  Estimated from the first MERGE_SAMPLE of them, as
 * uldp_user_table_merge grows it.
 */
bool
uldp_user_table_merge_fits(UldpUserTable *table, const char *cursor, int64 nusers)
{
	int64		sample = Min(nusers, MERGE_SAMPLE);

	return sample == 0 ||
		users_with_new(table, nusers, sample, sample_found(table, cursor, sample)) <
		table->users->grow_threshold;
}

/*
 * Adds "nusers" serialized users read from "cursor" (a user found in both
 * is one user, with both its sums and counts); returns the end of what it
 * read.
 *
 * Users new to a table close to its 90% growth point, added in the order
 * of their buckets, would pile up behind one another (each shifting the
 * entries after it), which made merging shards' disjoint users take
 * quadratic time when serialized tables followed their buckets.  So the
 * table first grows to room for the users it already has and the new ones
 * among "nusers", estimated from the first MERGE_SAMPLE of them: never
 * more than their total, so within the memory a release reserved for them.
 */
const char *
uldp_user_table_merge(UldpUserTable *table, const char *cursor, int64 nusers)
{
	int64		sample = Min(nusers, MERGE_SAMPLE);

	reserve_for_new(table, nusers, sample, sample_found(table, cursor, sample));

	for (int64 i = 0; i < nusers; i++)
	{
		uint32		count;
		double		sum;

		uldp_user_entry_read(cursor, &count, &sum);
		uldp_user_table_add(table, uldp_user_entry_id(cursor), sum, count);
		cursor += ULDP_SERIALIZED_USER_BYTES;
	}
	uldp_user_table_flush(table);
	return cursor;
}

/*
 * Adds every user of the flushed table "source" to "table", in bucket
 * order, after growing "table" as uldp_user_table_merge does.
 */
void
uldp_user_table_add_table(UldpUserTable *table, UldpUserTable *source)
{
	users_hash *users = source->users;
	users_iterator iterator;
	UldpUser   *user;
	int64		sample = 0;
	int64		found = 0;

	users_start_iterate(users, &iterator);
	while (sample < MERGE_SAMPLE && (user = users_iterate(users, &iterator)) != NULL)
	{
		sample++;
		found += table_has(table, user->id);
	}
	reserve_for_new(table, users->members, sample, found);

	users_start_iterate(users, &iterator);
	while ((user = users_iterate(users, &iterator)) != NULL)
		uldp_user_table_add(table, user->id, user->sum, user->count);
	uldp_user_table_flush(table);
}

/*
 * A flushed table as a value: the header, with the user ids' type's
 * "key_byval" and "key_typlen", then its users.
 */
bytea *
uldp_user_table_to_bytea(UldpUserTable *table, bool key_byval, int16 key_typlen)
{
	UldpTableHeader header;
	Size		size = VARHDRSZ + sizeof(header) + uldp_user_table_serialized_bytes(table);
	bytea	   *result = palloc_extended(size, MCXT_ALLOC_HUGE);
	char	   *cursor PG_USED_FOR_ASSERTS_ONLY;

	SET_VARSIZE(result, size);
	memset(&header, 0, sizeof(header));
	header.magic = ULDP_TABLE_MAGIC;
	header.version = ULDP_TABLE_VERSION;
	header.key_byval = key_byval;
	header.key_typlen = key_typlen;
	header.nusers = uldp_user_table_users(table);
	memcpy(VARDATA(result), &header, sizeof(header));
	cursor = uldp_user_table_write(table, VARDATA(result) + sizeof(header));
	Assert(cursor == (char *) result + size);
	return result;
}

/*
 * Reads the header of a table's value (uldp_user_table_to_bytea) into
 * "header" and returns where its users start, or raises an error if the
 * value is not one, was written by another version or on a machine of the
 * other byte order, or is cut short.  A value made by the state aggregates
 * fails none of these whatever the rows.
 */
const char *
uldp_user_table_read_header(bytea *value, UldpTableHeader *header)
{
	Size		size = VARSIZE_ANY_EXHDR(value);

	if (size >= sizeof(*header))
		memcpy(header, VARDATA_ANY(value), sizeof(*header));
	if (size < sizeof(*header) || header->magic != ULDP_TABLE_MAGIC ||
		header->version != ULDP_TABLE_VERSION || header->nusers < 0 ||
		(uint64) header->nusers != (size - sizeof(*header)) / ULDP_SERIALIZED_USER_BYTES ||
		(size - sizeof(*header)) % ULDP_SERIALIZED_USER_BYTES != 0)
		uldp_user_state_invalid();
	return VARDATA_ANY(value) + sizeof(*header);
}

/*
 * Raises the error of a value that is not a serialized table of this
 * version and byte order.
 */
void
uldp_user_state_invalid(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid per-user state"),
			 errdetail("The value is not a per-user state of uldp_shard version %d written on a machine of this byte order.",
					   ULDP_TABLE_VERSION),
			 errhint("Install the same uldp_shard version on every shard, on machines of the coordinator's architecture.")));
}

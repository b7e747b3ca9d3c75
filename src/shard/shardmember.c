/*-------------------------------------------------------------------------
 *
 * shardmember.c
 *	  partition_member: does a user id belong to a hash partition?
 *
 * A coordinator's foreign partition shows whatever rows its shard's table
 * holds: postgres_fdw checks no partition bound, so rows written on a shard
 * directly may belong, by their user id, to another partition.  Releases
 * that add up the shards' sums (shardstate.c, user_sums) need each user in
 * one partition only, or one user could count once per shard: each shard
 * keeps only the user ids that hash to its partition, the way PostgreSQL
 * routes a row of a table partitioned by hash on one column (the key
 * type's extended hash with the partitioning seed, combined as for the
 * first column), so that the shards' users are disjoint.
 * partition_member(user_id, modulus, remainder) exposes the same test in
 * SQL, for a DBA looking for rows written on the wrong shard.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "shardmember.h"

PG_FUNCTION_INFO_V1(uldp_shard_partition_member);

/* Refuses a bound that is no hash partition's. */
void
uldp_partition_bound_check(int32 modulus, int32 remainder)
{
	if (modulus <= 0 || remainder < 0 || remainder >= modulus)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a hash partition needs 0 <= remainder < modulus"),
				 errhint("Pass the partition's bound: FOR VALUES WITH (MODULUS m, REMAINDER r).")));
}

/*
 * The partition FOR VALUES WITH (MODULUS modulus, REMAINDER remainder) of
 * ids of "type" under "collation"; the hash function's state lives in
 * "context".
 */
void
uldp_partition_member_init(UldpPartitionMember *member, Oid type, Oid collation,
						   int32 modulus, int32 remainder, MemoryContext context)
{
	TypeCacheEntry *entry;

	uldp_partition_bound_check(modulus, remainder);
	entry = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	if (!OidIsValid(entry->hash_extended_proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("type %s has no extended hash function", format_type_be(type)),
				 errhint("Partition by a user id of a type with a default hash operator class.")));
	fmgr_info_copy(&member->hash, &entry->hash_extended_proc_finfo, context);
	member->collation = collation;
	member->modulus = (uint64) modulus;
	member->remainder = (uint64) remainder;
}

/* Does PostgreSQL route a row with this (non-NULL) id to the partition? */
bool
uldp_partition_member(UldpPartitionMember *member, Datum id)
{
	uint64		row_hash = hash_combine64(0, DatumGetUInt64(FunctionCall2Coll(&member->hash,
																			   member->collation, id,
																			   UInt64GetDatum(HASH_PARTITION_SEED))));

	return row_hash % member->modulus == member->remainder;
}

/* partition_member(user_id anyelement, modulus integer, remainder integer) */
Datum
uldp_shard_partition_member(PG_FUNCTION_ARGS)
{
	UldpPartitionMember *member = (UldpPartitionMember *) fcinfo->flinfo->fn_extra;
	int32		modulus = PG_GETARG_INT32(1);
	int32		remainder = PG_GETARG_INT32(2);

	if (member == NULL || member->modulus != (uint64) modulus || member->remainder != (uint64) remainder)
	{
		if (member == NULL)
			member = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(UldpPartitionMember));
		uldp_partition_member_init(member, get_fn_expr_argtype(fcinfo->flinfo, 0), PG_GET_COLLATION(),
								   modulus, remainder, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = member;
	}
	PG_RETURN_BOOL(uldp_partition_member(member, PG_GETARG_DATUM(0)));
}

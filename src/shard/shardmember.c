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
 * keeps, by this filter, only the user ids that hash to its partition, the
 * way PostgreSQL routes a row of a table partitioned by hash on one column
 * (the key type's extended hash with the partitioning seed, combined as
 * for the first column), so that the shards' users are disjoint.
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

PG_FUNCTION_INFO_V1(uldp_shard_partition_member);

/* partition_member(user_id anyelement, modulus integer, remainder integer) */
Datum
uldp_shard_partition_member(PG_FUNCTION_ARGS)
{
	FmgrInfo   *hash = (FmgrInfo *) fcinfo->flinfo->fn_extra;
	int32		modulus = PG_GETARG_INT32(1);
	int32		remainder = PG_GETARG_INT32(2);
	uint64		row_hash;

	if (modulus <= 0 || remainder < 0 || remainder >= modulus)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a hash partition needs 0 <= remainder < modulus"),
				 errhint("Pass the partition's bound: FOR VALUES WITH (MODULUS m, REMAINDER r).")));
	if (hash == NULL)
	{
		Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
		TypeCacheEntry *entry = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC_FINFO);

		if (!OidIsValid(entry->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("type %s has no extended hash function", format_type_be(type)),
					 errhint("Partition by a user id of a type with a default hash operator class.")));
		hash = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(FmgrInfo));
		fmgr_info_copy(hash, &entry->hash_extended_proc_finfo, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = hash;
	}
	row_hash = hash_combine64(0, DatumGetUInt64(FunctionCall2Coll(hash, PG_GET_COLLATION(),
																	PG_GETARG_DATUM(0),
																	UInt64GetDatum(HASH_PARTITION_SEED))));
	PG_RETURN_BOOL(row_hash % (uint64) modulus == (uint64) remainder);
}

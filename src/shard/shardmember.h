/*-------------------------------------------------------------------------
 *
 * shardmember.h
 *	  Which user ids PostgreSQL routes to a hash partition.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SHARDMEMBER_H
#define ULDP_SHARDMEMBER_H

#include "fmgr.h"

/* The user ids of one hash partition: FOR VALUES WITH (MODULUS m, REMAINDER r) */
typedef struct UldpPartitionMember
{
	FmgrInfo	hash;			/* the id type's extended hash function */
	Oid			collation;
	uint64		modulus;
	uint64		remainder;
} UldpPartitionMember;

extern void uldp_partition_bound_check(int32 modulus, int32 remainder);
extern void uldp_partition_member_init(UldpPartitionMember *member, Oid type, Oid collation,
									   int32 modulus, int32 remainder, MemoryContext context);
extern bool uldp_partition_member(UldpPartitionMember *member, Datum id);

#endif							/* ULDP_SHARDMEMBER_H */

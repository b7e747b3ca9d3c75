/*-------------------------------------------------------------------------
 *
 * pairwire.h
 *	  The value that uldp_shard.user_pairs sends for one group of a
 *	  partition: every user with rows in the group, and for each of the
 *	  grouped releases ("slots") the user's value there.
 *
 * A header, then the users' keys (uint64, uldp_user_key), then for each
 * slot one double per user, in the users' order: the value the coordinator
 * releases over (NaN: none, which it reads as NULL).  Columns rather than
 * rows, so that each of the coordinator's readers (pairunpack.c) reads its
 * own column in order.  In the writer's byte order: the magic number, so
 * written, makes a reader of the other order refuse it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_PAIRWIRE_H
#define ULDP_PAIRWIRE_H

#include "utils/memutils.h"

typedef struct UldpPairsHeader
{
	uint32		magic;			/* ULDP_PAIRS_MAGIC */
	uint16		version;		/* ULDP_PAIRS_VERSION */
	uint16		nslots;
	int64		nusers;
} UldpPairsHeader;

#define ULDP_PAIRS_MAGIC 0x554c5031	/* "ULP1" */
#define ULDP_PAIRS_VERSION 1

/* the most slots one call carries (5 arguments each) */
#define ULDP_PAIRS_MAX_SLOTS 16

/* bytes of a group's value, header included */
#define ULDP_PAIRS_BYTES(nusers, nslots) \
	(sizeof(UldpPairsHeader) + (Size) (nusers) * (1 + (nslots)) * sizeof(uint64))

/*
 * The most users a group's value can hold: a value takes at most 1 GB.
 * The coordinator asks for user_pairs only where a partition's rows, its
 * most users in one group, fit (shardgroups.c).
 */
#define ULDP_PAIRS_MAX_USERS(nslots) \
	((MaxAllocSize - VARHDRSZ - sizeof(UldpPairsHeader)) / ((1 + (nslots)) * sizeof(uint64)))

#endif							/* ULDP_PAIRWIRE_H */

/*-------------------------------------------------------------------------
 *
 * groupbound.h
 *	  The bound on the groups each user contributes to in a grouped release.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPBOUND_H
#define ULDP_GROUPBOUND_H

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/palloc.h"

/* uldp.max_groups_per_user */
extern int	uldp_max_groups_per_user;

/* the largest value uldp.max_groups_per_user takes */
#define ULDP_MAX_GROUPS_PER_USER 1000

/* keys up to this many bytes name a group as they are; longer ones by a hash */
#define ULDP_GROUP_INLINE_KEY_BYTES 64

typedef struct UldpGroupBound UldpGroupBound;

/* a registry's snapshot, as a parallel worker reads it */
typedef struct UldpGroupSnapshot
{
	uint64		key[2];			/* of the pseudorandom function */
	int64		ndropped;
	const char *dropped;		/* sorted, unaligned */
	int64		ngroups;
	const char *groups;			/* name values and users, sorted, unaligned */
} UldpGroupSnapshot;

/* planning and preparing a grouped release (grouping.c, statement.c) */

extern double uldp_group_bound_name_bytes(List *key_types);
extern UldpGroupBound *uldp_group_bound_for(int64 slot, int groups_per_user,
											MemoryContext context, bool for_workers);
extern double uldp_group_bound_bytes_per_row(int groups_per_user, double name_bytes);
extern double uldp_group_bound_snapshot_bytes_per_row(void);
extern double uldp_group_bound_partial_bytes_per_row(double name_bytes);
extern int64 uldp_group_bound_next_slot(void);

/* running one (groupcalls.c) */
extern UldpGroupBound *uldp_group_bound_find(int64 slot, MemoryContext call_context);
extern UldpGroupBound *uldp_group_bound_partial(int groups_per_user, const uint64 key[2],
												MemoryContext context);
extern const uint64 *uldp_group_bound_key(const UldpGroupBound *bound);
extern bool uldp_group_bound_is_partial(const UldpGroupBound *bound);
extern bool uldp_group_bound_is_complete(const UldpGroupBound *bound);
extern uint32 uldp_group_bound_group(UldpGroupBound *bound, const char *name, uint32 length);
extern void uldp_group_bound_add(UldpGroupBound *bound, uint64 user, uint32 group);
extern bytea *uldp_group_bound_serialize(UldpGroupBound *bound, FunctionCallInfo fcinfo);
extern bytea *uldp_group_bound_hand_over(UldpGroupBound *bound);
extern void uldp_group_bound_receive(UldpGroupBound *bound, bytea *received);
extern bytea *uldp_group_bound_complete(UldpGroupBound *bound);
extern bool uldp_group_bound_drops_any(const UldpGroupBound *bound);
extern bool uldp_group_bound_kept(UldpGroupBound *bound, uint64 value);
extern int64 uldp_group_bound_users(UldpGroupBound *bound, const char *name, uint32 length);
extern bool uldp_group_snapshot_names(const char *data, Size length, const UldpGroupBound *bound);
extern bool uldp_group_snapshot_read(const char *data, Size length, int64 slot, int k,
									 UldpGroupSnapshot *snapshot);
extern bool uldp_group_snapshot_kept(const UldpGroupSnapshot *snapshot, uint64 value);
extern int64 uldp_group_snapshot_users(const UldpGroupSnapshot *snapshot, const char *name,
									   uint32 length);

#endif							/* ULDP_GROUPBOUND_H */

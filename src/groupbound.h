/*-------------------------------------------------------------------------
 *
 * groupbound.h
 *	  The bound on the groups each user contributes to in a grouped release.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPBOUND_H
#define ULDP_GROUPBOUND_H

#include "nodes/pg_list.h"
#include "utils/palloc.h"

/* uldp.max_groups_per_user */
extern int	uldp_max_groups_per_user;

/* the largest value uldp.max_groups_per_user takes */
#define ULDP_MAX_GROUPS_PER_USER 1000

typedef struct UldpGroupBound UldpGroupBound;

extern double uldp_group_bound_name_bytes(List *key_types);
extern UldpGroupBound *uldp_group_bound_for(int64 slot, int groups_per_user,
											MemoryContext context, bool for_workers);
extern double uldp_group_bound_bytes_per_row(int groups_per_user, double name_bytes);
extern double uldp_group_bound_snapshot_bytes_per_row(void);
extern double uldp_group_bound_partial_bytes_per_row(double name_bytes);
extern int64 uldp_group_bound_next_slot(void);

#endif							/* ULDP_GROUPBOUND_H */

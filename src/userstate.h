/*-------------------------------------------------------------------------
 *
 * userstate.h
 *	  The aggregate state shared by the uldp aggregates: one entry per user
 *	  (the privacy unit) with the running sum and count of its rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_USERSTATE_H
#define ULDP_USERSTATE_H

#include "fixedsum.h"
#include "params.h"
#include "usertable.h"

/* uldp.max_state_memory, in kB */
extern int	uldp_max_state_memory;

typedef struct UldpState UldpState;

extern void uldp_check_state_memory(Size bytes, const char *hint);
extern double uldp_user_state_bytes_per_row(void);
extern double uldp_user_state_fixed_bytes(void);
extern double *uldp_state_user_means(UldpState *state, int64 *nusers, bool *sorted);
extern double *uldp_state_user_totals(UldpState *state, int64 *nusers, bool *sorted);
extern int64 uldp_state_users(UldpState *state);
extern const UldpPartitionSums *uldp_state_partition_sums(UldpState *state);

#endif							/* ULDP_USERSTATE_H */

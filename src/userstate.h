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

#include "params.h"

/* uldp.max_state_memory, in kB */
extern int	uldp_max_state_memory;

/* user ids longer than this many bytes are skipped */
#define ULDP_MAX_ID_BYTES 1024
/* per-user hash tables double when this full, and only then */
#define ULDP_HASH_FILLFACTOR 0.9

typedef struct UldpState UldpState;

/* the splitmix64 finaliser: every input bit reaches every output bit */
static inline uint64
uldp_mix64(uint64 x)
{
	x = (x ^ (x >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

extern void uldp_check_state_memory(Size bytes, const char *hint);
extern bool uldp_user_key(Datum id, bool byval, int16 typlen, uint64 *key);
extern double uldp_user_state_bytes_per_row(void);
extern double uldp_user_state_fixed_bytes(void);
extern double *uldp_state_user_means(UldpState *state, int64 *nusers);
extern double *uldp_state_user_totals(UldpState *state, int64 *nusers);
extern int64 uldp_state_users(UldpState *state);

#endif							/* ULDP_USERSTATE_H */

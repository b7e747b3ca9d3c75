/*-------------------------------------------------------------------------
 *
 * random.h
 *	  Randomness for uldp: a cryptographically secure per-backend source,
 *	  and a seeded reproducible stream that only a superuser can enable.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RANDOM_H
#define ULDP_RANDOM_H

/* uldp.test_seed: 0 means "secure randomness" (the only production mode) */
extern int	uldp_test_seed;

extern void uldp_test_seed_assign(int newval, void *extra);

/* the host's random bits for src/local/ (host.h) */
extern uint64 uldp_random_u64(void);

/* exact uniform integers and Bernoulli trials from these bits */
#include "local/exactnoise.h"

#endif							/* ULDP_RANDOM_H */

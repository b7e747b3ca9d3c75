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

extern uint64 uldp_random_u64(void);
extern uint64 uldp_uniform_u64(uint64 bound);
extern uint128 uldp_uniform_u128(uint128 bound);
extern bool uldp_bernoulli(uint128 num, uint128 den);

#endif							/* ULDP_RANDOM_H */

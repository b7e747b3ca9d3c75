/*-------------------------------------------------------------------------
 *
 * xoshiro.h
 *	  A seeded, deterministic stream of 64-bit words: xoshiro256** whose
 *	  state is filled by splitmix64 from a 64-bit seed (Blackman and
 *	  Vigna).  Not a secret source: it draws public randomness that two
 *	  parties must reproduce, such as a round's rotation signs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_XOSHIRO_H
#define ULDP_LOCAL_XOSHIRO_H

#include <stdint.h>

typedef struct UldpXoshiro
{
	uint64_t	s[4];
} UldpXoshiro;

extern void uldp_xoshiro_seed(UldpXoshiro *state, uint64_t seed);
extern uint64_t uldp_xoshiro_next(UldpXoshiro *state);

#endif							/* ULDP_LOCAL_XOSHIRO_H */

/*-------------------------------------------------------------------------
 *
 * xoshiro.c
 *	  xoshiro256** seeded through splitmix64, as in Vigna's reference code
 *	  (https://prng.di.unimi.it): the words are part of the local format,
 *	  since client and server derive the same rotation from a round's seed.
 *
 *-------------------------------------------------------------------------
 */
#include "xoshiro.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
uldp_xoshiro_seed(UldpXoshiro *state, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		state->s[i] = splitmix64(&seed);
}

uint64_t
uldp_xoshiro_next(UldpXoshiro *state)
{
	uint64_t   *s = state->s;
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

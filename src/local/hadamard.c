/*-------------------------------------------------------------------------
 *
 * hadamard.c
 *	  The fast Walsh-Hadamard transform and the public rotation of vector
 *	  rounds, U = H D / sqrt(P) (Algorithm 5, lines 2-3).
 *
 * P is the power of two the round's vectors are padded to with zeros, H the
 * P x P Hadamard matrix (entries (-1)^popcount(j AND k)) and D a diagonal of
 * signs.  Unlike the extension's central rotation (src/rotation.c), whose
 * signs are secret and fresh, a local round's signs are public: the client
 * rotates its summary and the server rotates the average back, so both
 * draw them from the round's rotation_seed.  Sign k is bit k % 64 of word
 * k / 64 of uldp_xoshiro seeded with rotation_seed, +1 for a set bit and
 * -1 otherwise.
 *
 * U is orthogonal (H H = P I), so the inverse is D H / sqrt(P), and a
 * vector of l2 norm at most R has every rotated coordinate in [-R, R]:
 * the range bins of vector rounds cover [-bound, bound].
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "uldp_local.h"
#include "xoshiro.h"

/*
 * x <- H x in place, for a length that is a power of two: length log2
 * length additions, no normalization.
 */
void
uldp_local_hadamard_transform(double *x, int64_t length)
{
	for (int64_t half = 1; half < length; half *= 2)
		for (int64_t block = 0; block < length; block += 2 * half)
			for (int64_t j = block; j < block + half; j++)
			{
				double		a = x[j];
				double		b = x[j + half];

				x[j] = a + b;
				x[j + half] = a - b;
			}
}

/* x <- D x with the round's public signs */
static void
apply_signs(const UldpLocalRound *round, double *x)
{
	UldpXoshiro stream;

	uldp_xoshiro_seed(&stream, round->rotation_seed);
	for (int k = 0; k < round->padded; k += 64)
	{
		uint64_t	bits = uldp_xoshiro_next(&stream);

		for (int j = k; j < k + 64 && j < round->padded; j++, bits >>= 1)
			if ((bits & 1) == 0)
				x[j] = -x[j];
	}
}

/*
 * vector (length round->padded) <- U vector, or U^-1 vector if inverse.
 * The scale 1/sqrt(P) is applied before the transform, so that every
 * intermediate sum is at most the vector's norm in absolute value
 * (Cauchy-Schwarz): nothing overflows that a finite norm does not.
 */
void
uldp_local_rotate(const UldpLocalRound *round, double *vector, bool inverse)
{
	double		scale = 1 / sqrt((double) round->padded);

	if (!inverse)
		apply_signs(round, vector);
	for (int j = 0; j < round->padded; j++)
		vector[j] *= scale;
	uldp_local_hadamard_transform(vector, round->padded);
	if (inverse)
		apply_signs(round, vector);
}

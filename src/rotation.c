/*-------------------------------------------------------------------------
 *
 * rotation.c
 *	  The randomized Hadamard rotation U = H D / sqrt(P) of Levy et al.
 *	  (Algorithm 2, after Ailon and Chazelle): D a diagonal of independent
 *	  random signs, H the P x P Walsh-Hadamard matrix, P the power of two
 *	  that the vectors are padded to with zeros.
 *
 * U is orthogonal, so it keeps l2 norms, and it spreads a vector evenly:
 * each coordinate of U v is a sum of P terms +-v_k / sqrt(P) with
 * independent signs, so |(U v)_j| <= |v| sqrt(2 ln(2P / b) / P) for all j
 * with probability 1 - b (Hoeffding and a union bound).  Per-coordinate
 * ranges are then narrow whatever the direction of the data.  The signs
 * come from the secure random source, and are drawn afresh for every use:
 * they are not data, and they are never released.  H H = P I, so the inverse
 * is D H / sqrt(P).  The fast transform takes P log2 P additions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"

#include "local/uldp_local.h"
#include "random.h"
#include "rotation.h"

UldpRotation
uldp_rotation_random(int dim)
{
	UldpRotation rotation;

	Assert(dim >= 1);
	rotation.dim = dim;
	rotation.padded = (int) pg_nextpower2_32((uint32) dim);
	rotation.signs = palloc(rotation.padded);
	for (int k = 0; k < rotation.padded; k += 64)
	{
		uint64		bits = uldp_random_u64();

		for (int j = k; j < Min(k + 64, rotation.padded); j++, bits >>= 1)
			rotation.signs[j] = (bits & 1) ? 1 : -1;
	}
	return rotation;
}

/* x <- H x / sqrt(P), in place, for x of length P (a power of two) */
static void
hadamard(double *x, int padded)
{
	double		scale = 1 / sqrt((double) padded);

	uldp_local_hadamard_transform(x, padded);
	for (int j = 0; j < padded; j++)
		x[j] *= scale;
}

/* out (length padded) <- U in (length dim, zero-padded) */
void
uldp_rotate(const UldpRotation *rotation, const double *in, double *out)
{
	for (int j = 0; j < rotation->padded; j++)
		out[j] = j < rotation->dim ? rotation->signs[j] * in[j] : 0;
	hadamard(out, rotation->padded);
}

/* out (length dim) <- the first dim coordinates of U^-1 in_out; in_out
 * (length padded) is overwritten */
void
uldp_rotate_back(const UldpRotation *rotation, double *in_out, double *out)
{
	hadamard(in_out, rotation->padded);
	for (int j = 0; j < rotation->dim; j++)
		out[j] = rotation->signs[j] * in_out[j];
}

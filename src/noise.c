/*-------------------------------------------------------------------------
 *
 * noise.c
 *	  Discrete Laplace noise and the exponential mechanism.
 *
 * Discrete Laplace.  uldp never adds floating-point noise to a statistic.
 * Sums are accumulated as integers on a power-of-two grid (see release.c)
 * and perturbed by integer noise Z with P(Z = z) proportional to
 * exp(-|z| * epsilon / sensitivity), drawn with the exact rejection sampler
 * of Canonne, Kamath and Steinke ("The Discrete Gaussian for Differential
 * Privacy", 2020, Algorithms 1 and 2).  It needs only uniform integers and
 * Bernoulli trials with rational parameters, so its output distribution is
 * exactly the stated one: no logarithm of a floating-point uniform, hence no
 * gaps or bias in the low-order bits (Mironov 2012).
 *
 * Epsilon is a double, i.e. a dyadic rational; it is rounded *down* to 24
 * significant bits so the Laplace parameter is a ratio of integers that fits
 * in 128 bits.  Rounding down only adds noise.
 *
 * Exponential mechanism.  uldp_exponential_quantile() selects one integer
 * of a domain of up to 2^64 candidates with probability proportional to
 * exp(-epsilon * score / sensitivity), where the score of a candidate b is
 * max(below_weight * #{keys < b}, above_weight * #{keys > b}).  The score is
 * constant between consecutive distinct keys, so the domain splits into at
 * most 2n + 1 segments; a segment is selected with probability
 * proportional to (length * weight) and a candidate uniformly inside it.
 * Cost is O(n) after sorting, whatever the domain size.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "noise.h"
#include "params.h"
#include "random.h"

/* significant bits kept of epsilon */
#define DYADIC_BITS 24

UldpDyadic
uldp_dyadic_floor(double x)
{
	UldpDyadic	result;
	int			exponent;
	double		mantissa = frexp(x, &exponent);

	Assert(x > 0 && isfinite(x));
	result.num = (uint64) floor(ldexp(mantissa, DYADIC_BITS));
	result.shift = DYADIC_BITS - exponent;
	/* strip factors of two so that the numbers stay small */
	while ((result.num & 1) == 0 && result.shift > 0)
	{
		result.num >>= 1;
		result.shift--;
	}
	return result;
}

/* Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1). */
static bool
bernoulli_exp_fraction(uint128 num, uint128 den)
{
	uint64		k = 1;

	/* Bernoulli(gamma / k) is Bernoulli(gamma) and Bernoulli(1 / k) */
	while (uldp_bernoulli(num, den) && uldp_uniform_u64(k) == 0)
		k++;
	return (k % 2) == 1;
}

/*
 * Integer Z with P(Z = z) proportional to exp(-|z| * s / t)
 * (CKS Algorithm 2), t, s >= 1.
 */
static int128
discrete_laplace_ts(uint128 t, uint128 s)
{
	for (;;)
	{
		uint128		u = uldp_uniform_u128(t);
		uint128		v = 0;
		uint128		y;
		bool		negative;

		if (!bernoulli_exp_fraction(u, t))
			continue;
		while (bernoulli_exp_fraction(1, 1))
			v++;
		y = (u + t * v) / s;
		negative = uldp_bernoulli(1, 2);
		if (negative && y == 0)
			continue;
		return negative ? -(int128) y : (int128) y;
	}
}

/*
 * Discrete Laplace noise for an integer query of the given sensitivity:
 * P(Z = z) proportional to exp(-|z| * epsilon' / sensitivity), where
 * epsilon' <= epsilon is epsilon rounded down to a dyadic rational.
 * Callers keep epsilon within [ULDP_MIN_EPSILON / 8, ULDP_MAX_EPSILON]
 * and sensitivity below 2^48, so that the shift is non-negative and
 * t = sensitivity * 2^shift fits in 128 bits.
 */
int128
uldp_discrete_laplace(uint64 sensitivity, double epsilon)
{
	UldpDyadic	eps = uldp_dyadic_floor(epsilon);

	Assert(sensitivity > 0 && eps.shift >= 0);
	return discrete_laplace_ts(((uint128) sensitivity) << eps.shift, eps.num);
}

typedef struct Segment
{
	uint64		start;
	uint64		length;
	long double weight;		/* log-weight until normalised */
} Segment;

static int
add_segment(Segment *segments, int nsegments, uint64 start, uint64 length,
			int64 score, long double epsilon_per_unit)
{
	if (length == 0)
		return nsegments;
	segments[nsegments].start = start;
	segments[nsegments].length = length;
	segments[nsegments].weight = logl((long double) length) -
		epsilon_per_unit * (long double) score;
	return nsegments + 1;
}

uint64
uldp_exponential_quantile(const uint64 *sorted_keys, int64 n, uint64 domain,
						  int below_weight, int above_weight, double epsilon)
{
	Segment    *segments = palloc(sizeof(Segment) * (2 * n + 1));
	int			nsegments = 0;
	long double epsilon_per_unit;
	long double max_log_weight = -INFINITY;
	long double total = 0;
	long double target;
	int64		below = 0;
	uint64		previous_end = 0;
	uint64		result;
	int			i;

	/*
	 * Adding one user raises every score by 0 or by at most
	 * max(below_weight, above_weight) and never lowers one: the scores are
	 * monotone, so exp(-epsilon * score / sensitivity) gives epsilon-DP
	 * (McSherry and Talwar 2007, monotone case).
	 */
	epsilon_per_unit = (long double) epsilon / Max(below_weight, above_weight);

	for (int64 j = 0; j < n;)
	{
		uint64		key = sorted_keys[j];
		int64		count = 0;

		while (j < n && sorted_keys[j] == key)
		{
			j++;
			count++;
		}
		/* the gap before this key, then the key itself */
		nsegments = add_segment(segments, nsegments, previous_end, key - previous_end,
								Max(below_weight * below, above_weight * (n - below)),
								epsilon_per_unit);
		nsegments = add_segment(segments, nsegments, key, 1,
								Max(below_weight * below, above_weight * (n - below - count)),
								epsilon_per_unit);
		below += count;
		previous_end = key + 1;
	}
	nsegments = add_segment(segments, nsegments, previous_end, domain - previous_end,
							(int64) below_weight * n, epsilon_per_unit);

	for (i = 0; i < nsegments; i++)
		max_log_weight = Max(max_log_weight, segments[i].weight);
	/* weights relative to the heaviest segment: no overflow, and the
	 * heaviest is exactly 1 */
	for (i = 0; i < nsegments; i++)
	{
		segments[i].weight = expl(segments[i].weight - max_log_weight);
		total += segments[i].weight;
	}

	/* a 64-bit uniform is exact in the 64-bit mantissa of a long double */
	target = ldexpl((long double) uldp_random_u64(), -64) * total;
	for (i = 0; i < nsegments - 1; i++)
	{
		if (target < segments[i].weight)
			break;
		target -= segments[i].weight;
	}
	result = segments[i].start + uldp_uniform_u64(segments[i].length);
	pfree(segments);
	return result;
}

PG_FUNCTION_INFO_V1(uldp_sample_discrete_laplace);

/*
 * uldp._sample_discrete_laplace(sensitivity, epsilon, n): n draws of the
 * noise that a release adds, for the statistical tests of the sampler.  It
 * reads no data, so it releases nothing; it is revoked from PUBLIC all the
 * same, because a caller able to set uldp.test_seed could otherwise learn
 * the stream.
 */
Datum
uldp_sample_discrete_laplace(PG_FUNCTION_ARGS)
{
	int64		sensitivity = PG_GETARG_INT64(0);
	double		epsilon = PG_GETARG_FLOAT8(1);
	int32		n = PG_GETARG_INT32(2);
	ArrayType  *result;
	Datum	   *draws;

	if (sensitivity < 1 || sensitivity > (INT64CONST(1) << 41) ||
		!(epsilon >= ULDP_MIN_EPSILON / 8 && epsilon <= ULDP_MAX_EPSILON) ||
		n < 0 || n > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid arguments for uldp._sample_discrete_laplace"),
				 errhint("sensitivity in [1, 2^41], epsilon in [1.25e-7, 1e6], n in [0, 1e8].")));
	draws = palloc_extended(Max(n, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int32 i = 0; i < n; i++)
		draws[i] = Int64GetDatum((int64) uldp_discrete_laplace(sensitivity, epsilon));
	result = construct_array(draws, n, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
	PG_RETURN_ARRAYTYPE_P(result);
}

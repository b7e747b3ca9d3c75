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
 * The discrete Gaussian (CKS Algorithm 3) is built from the same parts and
 * serves the releases accounted in zCDP (accountant.c).
 *
 * Epsilon is a double, i.e. a dyadic rational; it is rounded *down* to 24
 * significant bits so the Laplace parameter is a ratio of integers that fits
 * in 128 bits.  Rounding down only adds noise.
 *
 * Exponential mechanism.  uldp_exponential_select() selects one integer of
 * a domain of up to 2^64 candidates, cut into segments of candidates that
 * share a score (from the data, sensitivity 1) and a prior weight (not from
 * the data), with probability proportional to prior * exp(-epsilon * score).
 * A segment is selected with probability proportional to length * prior *
 * weight and a candidate uniformly inside it.  Cost is linear in the number
 * of segments, whatever the domain size.  The median (score
 * max(#{keys < b}, #{keys > b})) has at most 2n + 1 segments for n users.
 *
 * The selection is exact for weights 2^-y_u, where y_u is the segment's
 * negated log2-weight relative to the heaviest segment, computed in 80-bit
 * extended precision: a proposal proportional to 2^-min(floor(y_u), 90) is
 * drawn with exact 128-bit integer arithmetic and accepted with probability
 * 2^-(y_u - that exponent), itself an exact dyadic Bernoulli trial plus fair
 * coins.  Nothing overflows or underflows, however small a weight.  The only
 * inexact step is y_u.  With |score| <= 2^34, priors in [-256, 0] and
 * epsilon >= 2^-29 (every release's share is above 1e-8), its absolute
 * error is below epsilon * 2^-27 in log2 units for every possible input;
 * the prior's part is computed identically for neighbouring inputs, and
 * the error changes any probability ratio by at most a factor 2^(4 error),
 * so the mechanism runs with epsilon * (1 - 2^-24), which keeps it
 * epsilon-DP.
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

/* A positive dyadic rational num / 2^shift, used for epsilon. */
typedef struct Dyadic
{
	uint64		num;
	int			shift;
} Dyadic;

/* The largest dyadic rational with DYADIC_BITS significant bits <= x. */
static Dyadic
dyadic_floor(double x)
{
	Dyadic		result;
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
 * Callers keep epsilon within [ULDP_MIN_EPSILON / 20, ULDP_MAX_EPSILON]
 * and sensitivity below 2^48, so that the shift is non-negative (epsilon
 * < 2^24) and t = sensitivity * 2^shift < 2^48 * 2^48 fits in 128 bits.
 */
int128
uldp_discrete_laplace(uint64 sensitivity, double epsilon)
{
	Dyadic		eps = dyadic_floor(epsilon);

	Assert(sensitivity > 0 && eps.shift >= 0);
	return discrete_laplace_ts(((uint128) sensitivity) << eps.shift, eps.num);
}

/*
 * The smallest k with P(|Z| > k) <= alpha for the noise Z of
 * uldp_discrete_laplace(sensitivity, epsilon), as a double (k may exceed
 * 2^63).  With q = exp(-epsilon' / sensitivity), P(|Z| > k) =
 * 2 q^(k + 1) / (1 + q), which grows with q; epsilon' is epsilon rounded
 * down to 24 significant bits by the sampler, so computing k with a
 * slightly smaller epsilon (and rounding the quotient up) can only widen
 * the interval [-k, k].
 */
double
uldp_discrete_laplace_tail(uint64 sensitivity, double epsilon, double alpha)
{
	double		rate = epsilon * (1 - 0x1p-22) / (double) sensitivity;

	return Max(ceil(log(2 / (alpha * (1 + exp(-rate)))) / rate * (1 + 1e-12)) - 1, 0);
}

/* Bernoulli(exp(-num/den)) for any num >= 0 (CKS Algorithm 1, gamma > 1) */
static bool
bernoulli_exp(uint128 num, uint128 den)
{
	for (uint128 whole = num / den; whole > 0; whole--)
		if (!bernoulli_exp_fraction(1, 1))
			return false;
	return bernoulli_exp_fraction(num % den, den);
}

/*
 * Bernoulli(exp(-d^2/den)) for d < 2^126 and 0 < den <= 2^124, exactly,
 * although d^2 may not fit in 128 bits.  With d = n 2^j + r, r < 2^j, and
 * j chosen so that d 2^j fits:
 *		d^2 / den = n (d 2^j / den) + d r / den,
 * so the trial is n trials of Bernoulli(exp(-d 2^j / den)) and one of
 * Bernoulli(exp(-d r / den)), all of which must succeed.  When n > 0,
 * d 2^j >= 2^125 >= 2 den, so each of the n trials fails with probability
 * at least 1 - exp(-2): the loop stops after a couple of trials.
 */
static bool
bernoulli_exp_square(uint128 d, uint128 den)
{
	int			j = 126;
	uint128		n;

	for (uint128 rest = d; rest > 0; rest >>= 1)
		j--;
	for (n = d >> j; n > 0; n--)
		if (!bernoulli_exp(d << j, den))
			return false;
	return bernoulli_exp(d * (d & ((((uint128) 1) << j) - 1)), den);
}

/* sigma2 rounded up to DYADIC_BITS significant bits: num / 2^shift */
static Dyadic
dyadic_ceil(double sigma2)
{
	Dyadic		result;
	int			exponent;
	double		mantissa = frexp(sigma2, &exponent);

	result.num = (uint64) ceil(ldexp(mantissa, DYADIC_BITS));
	result.shift = DYADIC_BITS - exponent;
	return result;
}

/*
 * The variance parameter that uldp_discrete_gaussian(sigma2) actually uses:
 * sigma2 rounded up to DYADIC_BITS significant bits (a double, exactly).
 * Thresholds that rely on the noise's tail must use this value.
 */
double
uldp_discrete_gaussian_variance(double sigma2)
{
	Dyadic		s = dyadic_ceil(sigma2);

	return ldexp((double) s.num, -s.shift);
}

/* Whether uldp_discrete_gaussian can draw with this variance. */
bool
uldp_discrete_gaussian_supports(double sigma2)
{
	return sigma2 >= ULDP_GAUSSIAN_MIN_VARIANCE && sigma2 <= ULDP_GAUSSIAN_MAX_VARIANCE;
}

/*
 * Discrete Gaussian noise: P(Z = z) proportional to exp(-z^2 / (2 sigma2'))
 * (CKS Algorithm 3), where sigma2' = uldp_discrete_gaussian_variance(sigma2)
 * >= sigma2 (rounding up only adds noise).  With sigma2' = num / den and
 * t = floor(sqrt(sigma2')) + 1, a discrete Laplace draw Y of scale t is kept
 * with probability exp(-(|Y| t den - num)^2 / (2 num den t^2)).
 *
 * Range.  For sigma2 in [2^-64, 2^60] (ULDP_GAUSSIAN_*_VARIANCE), the
 * denominator 2 num den t^2 is at most 2^124: below 1, den <= 2^87,
 * num < 2^24 and t = 1 (2^112); from 1 to 2^24, num den < 2^49 and
 * t^2 <= 4 sigma2' (2^75); above 2^24, den = 1 and num, t^2 <= 2^60 (2^122).
 * The acceptance trial is exact for every distance below 2^126
 * (bernoulli_exp_square).  Only a proposal with |Y| t den >= 2^125 is
 * rejected without a trial, so that the products fit: the output is the
 * discrete Gaussian conditioned on |Z| < 2^125 / (t den), which leaves out
 * a mass below exp(-2^120) (there z^2 / (2 sigma2') >= 2^249 / 2^124).
 * That is a statistical distance far below the 2^-40 delta that every
 * release keeps in reserve (ULDP_SPEND_MARGIN: 2^-40 * 1e-100).
 * Every variance a release can request lies in the range (doc/privacy.md);
 * outside it the sampler refuses rather than clamp, since a clamped
 * variance would no longer be the one the release accounts for.
 */
int128
uldp_discrete_gaussian(double sigma2)
{
	Dyadic		s;
	uint128		num;
	uint128		den = 1;
	uint128		t;

	if (!uldp_discrete_gaussian_supports(sigma2))
		elog(ERROR, "discrete Gaussian variance %g is outside the sampler's range", sigma2);
	s = dyadic_ceil(sigma2);
	num = s.num;
	if (s.shift >= 0)
		den <<= s.shift;
	else
		num <<= -s.shift;
	t = (uint128) floor(sqrt(ldexp((double) s.num, -s.shift))) + 1;
	for (;;)
	{
		int128		y = discrete_laplace_ts(t, 1);
		uint128		magnitude = y < 0 ? -y : y;
		uint128		scaled;

		if (magnitude >= (((uint128) 1) << 125) / (t * den))
			continue;
		scaled = magnitude * t * den;
		if (bernoulli_exp_square(scaled > num ? scaled - num : num - scaled,
								 2 * num * den * t * t))
			return y;
	}
}

/* shrinks epsilon to absorb the rounding of the log-weights (see above) */
#define EM_EPSILON_SLACK (1.0L - 0x1p-24L)
/*
 * proposal exponents are capped so that the total proposal weight, at most
 * 2^36 segments of at most 2^EM_PROPOSAL_BITS, fits in 128 bits
 */
#define EM_PROPOSAL_BITS 90

static long double
log2_weight(const UldpSegment *segment, long double log2_per_score)
{
	long double log2_length = segment->length == 1 ? 0 : log2l((long double) segment->length);

	return log2_length + segment->prior_log2 - log2_per_score * segment->score;
}

/* Exact Bernoulli(p) for a long double p in (0, 1]. */
static bool
bernoulli_long_double(long double p)
{
	int			exponent;
	long double mantissa = frexpl(p, &exponent);	/* p = mantissa * 2^exponent */

	if (p >= 1)
		return true;
	/* p < 2^exponent: the first -exponent bits of a uniform must be zero */
	for (int zeros = -exponent; zeros > 0; zeros -= 64)
	{
		uint64		bits = uldp_random_u64();

		if (zeros < 64)
			bits &= (UINT64CONST(1) << zeros) - 1;
		if (bits != 0)
			return false;
	}
	/* then the next 64 bits must fall below the 64-bit mantissa */
	return uldp_random_u64() < (uint64) ldexpl(mantissa, 64);
}

/* true with probability 2^-count */
static bool
fair_coins_all_heads(uint64 count)
{
	for (; count > 0; count -= Min(count, 64))
	{
		uint64		bits = uldp_random_u64();

		if (count < 64)
			bits &= (UINT64CONST(1) << count) - 1;
		if (bits != 0)
			return false;
	}
	return true;
}

/*
 * Selects one candidate of the source's segments with probability
 * proportional to 2^prior_log2 exp(-epsilon score).  The caller guarantees
 * that the scores have sensitivity 1 (and says, by its epsilon, whether they
 * are monotone), that |score| <= 2^34 and that the priors, which must not
 * depend on the data, lie in [-ULDP_EM_MAX_PRIOR_BITS, 0].
 */
uint64
uldp_exponential_select(const UldpSegmentSource *source, double epsilon)
{
	long double log2_per_score = (long double) epsilon * EM_EPSILON_SLACK * M_LOG2El;
	long double max_log2_weight = -INFINITY;
	uint8	   *proposal_exponents = palloc_extended(Max(source->max_segments, 1), MCXT_ALLOC_HUGE);
	int64		nsegments = 0;
	uint128		total = 0;
	UldpSegment segment;

	source->start(source->walk);
	while (source->next(source->walk, &segment))
		max_log2_weight = Max(max_log2_weight, log2_weight(&segment, log2_per_score));

	source->start(source->walk);
	while (source->next(source->walk, &segment))
	{
		uint64		whole = (uint64) floorl(max_log2_weight - log2_weight(&segment, log2_per_score));
		int			exponent = (int) Min(whole, EM_PROPOSAL_BITS);

		Assert(nsegments < source->max_segments);
		proposal_exponents[nsegments++] = exponent;
		total += ((uint128) 1) << (EM_PROPOSAL_BITS - exponent);
	}

	for (;;)
	{
		uint128		target = uldp_uniform_u128(total);
		uint128		cumulative = 0;
		int64		chosen = 0;
		long double gap;
		long double whole;

		/* the first segment whose cumulative proposal weight exceeds the target */
		for (;; chosen++)
		{
			cumulative += ((uint128) 1) << (EM_PROPOSAL_BITS - proposal_exponents[chosen]);
			if (cumulative > target)
				break;
		}
		source->start(source->walk);
		for (int64 i = 0; i <= chosen; i++)
			source->next(source->walk, &segment);

		gap = max_log2_weight - log2_weight(&segment, log2_per_score);
		whole = floorl(gap);
		if (bernoulli_long_double(exp2l(-(gap - whole))) &&
			fair_coins_all_heads((uint64) whole - proposal_exponents[chosen]))
			break;
	}
	pfree(proposal_exponents);
	return segment.start + uldp_uniform_u64(segment.length);
}

static uint64
walk_key(const UldpKeyWalk *walk, int64 i)
{
	return *(const uint64 *) (walk->keys + i * walk->stride);
}

static uint128
walk_weight(const UldpKeyWalk *walk, int64 i)
{
	return walk->weights == NULL ? 1 :
		(uint64) *(const double *) (walk->weights + i * walk->stride);
}

static void
key_walk_start(void *arg)
{
	UldpKeyWalk *walk = (UldpKeyWalk *) arg;

	walk->next = 0;
	walk->below = 0;
	walk->position = 0;
	walk->at_key = false;
}

/*
 * Segments are recomputed rather than stored, so the mechanism needs one
 * byte per segment whatever the number of entries.
 */
static bool
key_walk_next(void *arg, UldpSegment *segment)
{
	UldpKeyWalk *walk = (UldpKeyWalk *) arg;
	uint64		key;
	uint128		weight = 0;

	segment->prior_log2 = 0;
	if (walk->next >= walk->n)
	{
		if (walk->position >= walk->domain)
			return false;
		segment->start = walk->position;
		segment->length = walk->domain - walk->position;
		segment->score = walk->score(walk->below, 0, walk->total, walk->score_arg);
		walk->position = walk->domain;
		return true;
	}
	key = walk_key(walk, walk->next);
	if (!walk->at_key)
	{
		walk->at_key = true;
		if (key > walk->position)
		{
			segment->start = walk->position;
			segment->length = key - walk->position;
			segment->score = walk->score(walk->below, 0, walk->total, walk->score_arg);
			return true;
		}
	}
	while (walk->next < walk->n && walk_key(walk, walk->next) == key)
		weight += walk_weight(walk, walk->next++);
	segment->start = key;
	segment->length = 1;
	segment->score = walk->score(walk->below, weight, walk->total, walk->score_arg);
	walk->below += weight;
	walk->position = key + 1;
	walk->at_key = false;
	return true;
}

/*
 * The segments of walk's keys, which must be sorted; fills in the walk's
 * total weight.
 */
UldpSegmentSource
uldp_key_walk_source(UldpKeyWalk *walk)
{
	UldpSegmentSource source = {key_walk_start, key_walk_next, walk, 2 * walk->n + 1};

	walk->total = 0;
	for (int64 i = 0; i < walk->n; i++)
		walk->total += walk_weight(walk, i);
	return source;
}

static void
candidate_walk_start(void *arg)
{
	((UldpCandidateWalk *) arg)->next = 0;
}

static bool
candidate_walk_next(void *arg, UldpSegment *segment)
{
	UldpCandidateWalk *walk = (UldpCandidateWalk *) arg;
	int64		j = walk->next;

	if (j >= walk->count)
		return false;
	segment->start = j;
	segment->length = 1;
	segment->score = walk->scores[j];
	segment->prior_log2 = walk->prior_log2_step * j;
	walk->next++;
	return true;
}

/* The segments of walk's candidates. */
UldpSegmentSource
uldp_candidate_walk_source(UldpCandidateWalk *walk)
{
	UldpSegmentSource source = {candidate_walk_start, candidate_walk_next, walk, walk->count};

	return source;
}

/* A candidate's median score: max(#{keys < b}, #{keys > b}) */
static long double
median_score(uint128 below, uint128 at, uint128 total, const void *arg)
{
	return (long double) (uint64) Max(below, total - below - at);
}

uint64
uldp_exponential_median(const uint64 *sorted_keys, int64 n, uint64 domain,
						double epsilon)
{
	UldpKeyWalk walk = {(const char *) sorted_keys, NULL, sizeof(uint64), n, domain,
	median_score, NULL};
	UldpSegmentSource source = uldp_key_walk_source(&walk);

	/*
	 * Adding one user raises every score by 0 or 1 and lowers none: the
	 * scores are monotone with sensitivity 1, so exp(-epsilon * score) gives
	 * epsilon-DP (McSherry and Talwar 2007, monotone case).
	 */
	return uldp_exponential_select(&source, epsilon);
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

PG_FUNCTION_INFO_V1(uldp_sample_discrete_gaussian);

/*
 * uldp._sample_discrete_gaussian(sigma2, n): n draws of the discrete
 * Gaussian noise of the vector releases, for the statistical tests; like
 * the Laplace sampler, it reads no data and is revoked from PUBLIC.
 */
Datum
uldp_sample_discrete_gaussian(PG_FUNCTION_ARGS)
{
	double		sigma2 = PG_GETARG_FLOAT8(0);
	int32		n = PG_GETARG_INT32(1);
	ArrayType  *result;
	Datum	   *draws;

	if (!uldp_discrete_gaussian_supports(sigma2) || n < 0 || n > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid arguments for uldp._sample_discrete_gaussian"),
				 errhint("sigma2 in [2^-64, 2^60], n in [0, 1e8].")));
	draws = palloc_extended(Max(n, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int32 i = 0; i < n; i++)
		draws[i] = Int64GetDatum((int64) uldp_discrete_gaussian(sigma2));
	result = construct_array(draws, n, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
	PG_RETURN_ARRAYTYPE_P(result);
}

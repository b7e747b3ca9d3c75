/*-------------------------------------------------------------------------
 *
 * exactnoise.c
 *	  Exact uniform integers, Bernoulli trials, and the discrete Laplace and
 *	  Gaussian distributions.
 *
 * uldp never adds floating-point noise.  A statistic is an integer on a
 * grid (release.c for the central releases, report.c for the local
 * reports) and is perturbed by integer noise Z with P(Z = z) proportional
 * to exp(-|z| * epsilon / sensitivity), drawn with the exact rejection
 * sampler of Canonne, Kamath and Steinke ("The Discrete Gaussian for
 * Differential Privacy", 2020, Algorithms 1 and 2).  It needs only uniform
 * integers and Bernoulli trials with rational parameters, so its output
 * distribution is exactly the stated one: no logarithm of a floating-point
 * uniform, hence no gaps or bias in the low-order bits (Mironov 2012).  The
 * discrete Gaussian (CKS Algorithm 3) is built from the same parts.
 *
 * Epsilon is a double, i.e. a dyadic rational; it is rounded *down* to 24
 * significant bits so the Laplace parameter is a ratio of integers that fits
 * in 128 bits.  Rounding down only adds noise.
 *
 * This file includes no PostgreSQL header: the extension and the client
 * library (libuldp_local.a) share it.  Random bits come from the host
 * (host.h).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "exactnoise.h"
#include "host.h"

/* Uniform integer in [0, bound), bound > 0, by rejection: no modulo bias. */
uint64_t
uldp_uniform_u64(uint64_t bound)
{
	uint64_t	mask;
	uint64_t	r;

	if (bound <= 1)
		return 0;
	mask = ~UINT64_C(0) >> __builtin_clzll(bound - 1);
	do
		r = uldp_random_u64() & mask;
	while (r >= bound);
	return r;
}

uldp_uint128
uldp_uniform_u128(uldp_uint128 bound)
{
	uint64_t	hi = (uint64_t) (bound >> 64);
	uldp_uint128	mask;
	uldp_uint128	r;

	if (hi == 0)
		return uldp_uniform_u64((uint64_t) bound);
	mask = (((uldp_uint128) (~UINT64_C(0) >> __builtin_clzll(hi))) << 64) |
		~UINT64_C(0);
	do
		r = ((((uldp_uint128) uldp_random_u64()) << 64) | uldp_random_u64()) & mask;
	while (r >= bound);
	return r;
}

/* Exact Bernoulli(num / den) for 0 <= num <= den, den > 0. */
bool
uldp_bernoulli(uldp_uint128 num, uldp_uint128 den)
{
	return uldp_uniform_u128(den) < num;
}

/* significant bits kept of epsilon */
#define DYADIC_BITS 24

/* A positive dyadic rational num / 2^shift, used for epsilon. */
typedef struct Dyadic
{
	uint64_t	num;
	int			shift;
} Dyadic;

/* The largest dyadic rational with DYADIC_BITS significant bits <= x. */
static Dyadic
dyadic_floor(double x)
{
	Dyadic		result;
	int			exponent;
	double		mantissa = frexp(x, &exponent);

	result.num = (uint64_t) floor(ldexp(mantissa, DYADIC_BITS));
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
bernoulli_exp_fraction(uldp_uint128 num, uldp_uint128 den)
{
	uint64_t	k = 1;

	/* Bernoulli(gamma / k) is Bernoulli(gamma) and Bernoulli(1 / k) */
	while (uldp_bernoulli(num, den) && uldp_uniform_u64(k) == 0)
		k++;
	return (k % 2) == 1;
}

/*
 * Integer Z with P(Z = z) proportional to exp(-|z| * s / t)
 * (CKS Algorithm 2), t, s >= 1.
 */
static uldp_int128
discrete_laplace_ts(uldp_uint128 t, uldp_uint128 s)
{
	for (;;)
	{
		uldp_uint128	u = uldp_uniform_u128(t);
		uldp_uint128	v = 0;
		uldp_uint128	y;
		bool		negative;

		if (!bernoulli_exp_fraction(u, t))
			continue;
		while (bernoulli_exp_fraction(1, 1))
			v++;
		y = (u + t * v) / s;
		negative = uldp_bernoulli(1, 2);
		if (negative && y == 0)
			continue;
		return negative ? -(uldp_int128) y : (uldp_int128) y;
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
uldp_int128
uldp_discrete_laplace(uint64_t sensitivity, double epsilon)
{
	Dyadic		eps = dyadic_floor(epsilon);

	return discrete_laplace_ts(((uldp_uint128) sensitivity) << eps.shift, eps.num);
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
uldp_discrete_laplace_tail(uint64_t sensitivity, double epsilon, double alpha)
{
	double		rate = epsilon * (1 - 0x1p-22) / (double) sensitivity;

	double		k = ceil(log(2 / (alpha * (1 + exp(-rate)))) / rate * (1 + 1e-12)) - 1;

	return k > 0 ? k : 0;
}

/* Bernoulli(exp(-num/den)) for any num >= 0 (CKS Algorithm 1, gamma > 1) */
static bool
bernoulli_exp(uldp_uint128 num, uldp_uint128 den)
{
	for (uldp_uint128 whole = num / den; whole > 0; whole--)
		if (!bernoulli_exp_fraction(1, 1))
			return false;
	return bernoulli_exp_fraction(num % den, den);
}

/*
 * Bernoulli(exp(-gamma')) with gamma' = gamma rounded down to DYADIC_BITS
 * significant bits: the probability can only be larger than exp(-gamma).
 * Randomized response uses it for the chance exp(-epsilon) of a flip.
 */
bool
uldp_bernoulli_exp(double gamma)
{
	Dyadic		g;

	if (!(gamma > 0))
		return true;
	g = dyadic_floor(gamma);
	if (g.shift >= 0)
		return bernoulli_exp(g.num, ((uldp_uint128) 1) << g.shift);
	return bernoulli_exp(((uldp_uint128) g.num) << -g.shift, 1);
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
bernoulli_exp_square(uldp_uint128 d, uldp_uint128 den)
{
	int			j = 126;
	uldp_uint128	n;

	for (uldp_uint128 rest = d; rest > 0; rest >>= 1)
		j--;
	for (n = d >> j; n > 0; n--)
		if (!bernoulli_exp(d << j, den))
			return false;
	return bernoulli_exp(d * (d & ((((uldp_uint128) 1) << j) - 1)), den);
}

/* sigma2 rounded up to DYADIC_BITS significant bits: num / 2^shift */
static Dyadic
dyadic_ceil(double sigma2)
{
	Dyadic		result;
	int			exponent;
	double		mantissa = frexp(sigma2, &exponent);

	result.num = (uint64_t) ceil(ldexp(mantissa, DYADIC_BITS));
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
 * central release keeps in reserve (ULDP_SPEND_MARGIN in the extension).
 * Callers check uldp_discrete_gaussian_supports first: the extension's
 * uldp_gaussian_noise refuses with an error, the client library refuses the
 * round.
 */
uldp_int128
uldp_discrete_gaussian(double sigma2)
{
	Dyadic		s;
	uldp_uint128	num;
	uldp_uint128	den = 1;
	uldp_uint128	t;

	s = dyadic_ceil(sigma2);
	num = s.num;
	if (s.shift >= 0)
		den <<= s.shift;
	else
		num <<= -s.shift;
	t = (uldp_uint128) floor(sqrt(ldexp((double) s.num, -s.shift))) + 1;
	for (;;)
	{
		uldp_int128	y = discrete_laplace_ts(t, 1);
		uldp_uint128	magnitude = y < 0 ? -y : y;
		uldp_uint128	scaled;

		if (magnitude >= (((uldp_uint128) 1) << 125) / (t * den))
			continue;
		scaled = magnitude * t * den;
		if (bernoulli_exp_square(scaled > num ? scaled - num : num - scaled,
								 2 * num * den * t * t))
			return y;
	}
}

/*-------------------------------------------------------------------------
 *
 * exactnoise.h
 *	  Exact uniform integers, Bernoulli trials and the discrete Laplace and
 *	  Gaussian distributions, sampled with integer arithmetic only from the
 *	  host's random bits (host.h).  Shared by the extension's central
 *	  releases and the client library's local reports.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_EXACTNOISE_H
#define ULDP_EXACTNOISE_H

#include <stdbool.h>
#include <stdint.h>

typedef __int128 uldp_int128;
typedef unsigned __int128 uldp_uint128;

extern uint64_t uldp_uniform_u64(uint64_t bound);
extern uldp_uint128 uldp_uniform_u128(uldp_uint128 bound);
extern bool uldp_bernoulli(uldp_uint128 num, uldp_uint128 den);
/* Bernoulli(exp(-gamma')), gamma' = gamma >= 0 rounded down to 24 bits */
extern bool uldp_bernoulli_exp(double gamma);

extern uldp_int128 uldp_discrete_laplace(uint64_t sensitivity, double epsilon);
extern double uldp_discrete_laplace_tail(uint64_t sensitivity, double epsilon,
										 double alpha);

/* the variances the discrete Gaussian sampler can draw with, exactly */
#define ULDP_GAUSSIAN_MIN_VARIANCE 0x1p-64
#define ULDP_GAUSSIAN_MAX_VARIANCE 0x1p60

extern bool uldp_discrete_gaussian_supports(double sigma2);
extern double uldp_discrete_gaussian_variance(double sigma2);
/* requires uldp_discrete_gaussian_supports(sigma2) */
extern uldp_int128 uldp_discrete_gaussian(double sigma2);

#endif							/* ULDP_EXACTNOISE_H */

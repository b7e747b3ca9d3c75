/*-------------------------------------------------------------------------
 *
 * noise.h
 *	  Noise that floating-point arithmetic cannot betray: the discrete
 *	  Laplace and Gaussian distributions sampled with integer arithmetic
 *	  only, and the exponential mechanism over a huge integer domain.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_NOISE_H
#define ULDP_NOISE_H

extern int128 uldp_discrete_laplace(uint64 sensitivity, double epsilon);
/* the variances the discrete Gaussian sampler can draw with, exactly */
#define ULDP_GAUSSIAN_MIN_VARIANCE 0x1p-64
#define ULDP_GAUSSIAN_MAX_VARIANCE 0x1p60

extern int128 uldp_discrete_gaussian(double sigma2);
extern double uldp_discrete_gaussian_variance(double sigma2);
extern bool uldp_discrete_gaussian_supports(double sigma2);
extern uint64 uldp_exponential_median(const uint64 *sorted_keys, int64 n,
									  uint64 domain, double epsilon);

#endif							/* ULDP_NOISE_H */

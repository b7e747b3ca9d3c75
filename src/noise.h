/*-------------------------------------------------------------------------
 *
 * noise.h
 *	  Noise that floating-point arithmetic cannot betray: the discrete
 *	  Laplace distribution sampled with integer arithmetic only, and the
 *	  exponential mechanism over a huge integer domain.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_NOISE_H
#define ULDP_NOISE_H

/* A positive dyadic rational num / 2^shift, used for epsilon. */
typedef struct UldpDyadic
{
	uint64		num;
	int			shift;
} UldpDyadic;

extern UldpDyadic uldp_dyadic_floor(double x);
extern int128 uldp_discrete_laplace(uint64 sensitivity, double epsilon);
extern uint64 uldp_exponential_median(const uint64 *sorted_keys, int64 n,
									  uint64 domain, double epsilon);

#endif							/* ULDP_NOISE_H */

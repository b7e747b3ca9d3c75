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
extern double uldp_discrete_laplace_tail(uint64 sensitivity, double epsilon,
										 double alpha);
/* the variances the discrete Gaussian sampler can draw with, exactly */
#define ULDP_GAUSSIAN_MIN_VARIANCE 0x1p-64
#define ULDP_GAUSSIAN_MAX_VARIANCE 0x1p60

extern int128 uldp_discrete_gaussian(double sigma2);
extern double uldp_discrete_gaussian_variance(double sigma2);
extern bool uldp_discrete_gaussian_supports(double sigma2);
/*
 * The exponential mechanism over a domain of integers cut into segments of
 * candidates that share a score and a prior (see uldp_exponential_select).
 */
typedef struct UldpSegment
{
	uint64		start;			/* first candidate */
	uint64		length;			/* number of candidates */
	long double score;			/* from the data: sensitivity 1 */
	long double prior_log2;		/* not from the data: log2 of a prior weight */
} UldpSegment;

/* the smallest prior_log2 a segment may have */
#define ULDP_EM_MAX_PRIOR_BITS 256

typedef struct UldpSegmentSource
{
	void		(*start) (void *walk);	/* back to the first segment */
	bool		(*next) (void *walk, UldpSegment *segment); /* false at the end */
	void	   *walk;
	int64		max_segments;
} UldpSegmentSource;

extern uint64 uldp_exponential_select(const UldpSegmentSource *source,
									  double epsilon);
extern uint64 uldp_exponential_median(const uint64 *sorted_keys, int64 n,
									  uint64 domain, double epsilon);

#endif							/* ULDP_NOISE_H */

/*-------------------------------------------------------------------------
 *
 * noise.h
 *	  Noise that floating-point arithmetic cannot betray: the discrete
 *	  Laplace and Gaussian distributions sampled with integer arithmetic
 *	  only (src/local/exactnoise.c, shared with the client library), and
 *	  the exponential mechanism over a huge integer domain.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_NOISE_H
#define ULDP_NOISE_H

#include "local/exactnoise.h"

extern int128 uldp_gaussian_noise(double sigma2);

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

/*
 * Sorted weighted keys as segments of the exponential mechanism: the gap
 * before each distinct key, the key itself, and the gap after the last
 * key.  A segment's score is score(below, at, total, arg): the weight of
 * the keys before it, on it (0 on a gap) and in all.
 */
typedef long double (*UldpKeyScore) (uint128 below, uint128 at, uint128 total,
									 const void *arg);

typedef struct UldpKeyWalk
{
	const char *keys;			/* a uint64 key every "stride" bytes */
	const char *weights;		/* a double holding an integer weight every
								 * "stride" bytes; NULL: each weighs 1 */
	Size		stride;
	int64		n;
	uint64		domain;
	UldpKeyScore score;
	const void *score_arg;
	/* where the walk starts: 0 but for a window of a larger walk (noise.c) */
	uint128		start_below;
	uint64		start_position;
	/* where the walk is */
	uint128		total;
	int64		next;			/* index of the next distinct key's first entry */
	uint128		below;			/* weight of the keys before "position" */
	uint64		position;		/* first candidate not yet walked */
	bool		at_key;			/* the gap before the next key is done */
} UldpKeyWalk;

extern UldpSegmentSource uldp_key_walk_source(UldpKeyWalk *walk);

/*
 * Candidates 0 ... count - 1, one segment each: candidate j scores
 * scores[j] and has the prior 2^(j prior_log2_step).
 */
typedef struct UldpCandidateWalk
{
	const long double *scores;
	int64		count;
	double		prior_log2_step;
	int64		next;
} UldpCandidateWalk;

extern UldpSegmentSource uldp_candidate_walk_source(UldpCandidateWalk *walk);
extern uint64 uldp_exponential_median(const uint64 *sorted_keys, int64 n,
									  uint64 domain, double epsilon);

#endif							/* ULDP_NOISE_H */

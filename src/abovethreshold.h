/*-------------------------------------------------------------------------
 *
 * abovethreshold.h
 *	  AboveThreshold (the sparse vector technique) over integer queries.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_ABOVETHRESHOLD_H
#define ULDP_ABOVETHRESHOLD_H

typedef struct UldpAboveThreshold
{
	int128		noisy_threshold;
	uint64		sensitivity;
	double		epsilon;
	bool		halted;			/* a query was found above: stop asking */
} UldpAboveThreshold;

extern void uldp_above_threshold_start(UldpAboveThreshold *test, int64 threshold,
									   uint64 sensitivity, double epsilon);
extern bool uldp_above_threshold(UldpAboveThreshold *test, int64 query);
extern bool uldp_above_threshold_supports(uint64 sensitivity, double epsilon);

#endif							/* ULDP_ABOVETHRESHOLD_H */

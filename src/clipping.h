/*-------------------------------------------------------------------------
 *
 * clipping.h
 *	  The clipping intervals of user_dp_mean and user_dp_sum.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_CLIPPING_H
#define ULDP_CLIPPING_H

#include "params.h"

typedef struct UldpClipping
{
	double		lower;
	double		upper;
	double		centre;			/* within [lower, upper] */
	double		epsilon;		/* spent on choosing them */
} UldpClipping;

/* the share of a release's epsilon for its noisy count of users, when the
 * interval is chosen privately without bounds */
#define ULDP_CLIPPING_COUNT_SHARE 0.05

extern bool uldp_clipping_possible(const UldpParams *params, double epsilon,
								   int128 noisy_users);
extern UldpClipping uldp_private_clipping(const double *values, int64 n, bool sorted,
										  const UldpParams *params,
										  double epsilon, int128 noisy_users);
extern bool uldp_private_sum_clipping(const double *values, int64 n, bool sorted,
									  const UldpParams *params, double epsilon,
									  UldpClipping *clipping);

#endif							/* ULDP_CLIPPING_H */

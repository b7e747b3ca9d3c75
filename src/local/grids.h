/*-------------------------------------------------------------------------
 *
 * grids.h
 *	  The two grids reports are given on, in the client's direction: the
 *	  bin of a summary (range kinds) and the position of a summary on the
 *	  levels of [lower, upper] (mean kinds).  The server's direction is
 *	  uldp_local_bin_midpoint and uldp_local_level_value (uldp_local.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_GRIDS_H
#define ULDP_LOCAL_GRIDS_H

#include <stdint.h>

#include "uldp_local.h"

/* the bin in [0, bins) of a value; the last bin takes the top */
extern int64_t uldp_local_bin_of(const UldpLocalRound *round, double value);

/* a value projected onto coordinate's [lower, upper], as u in [0, G] */
extern double uldp_local_level_position(const UldpLocalRound *round,
										int coordinate, double value);

/* the variance in levels^2 of discrete Laplace noise at this epsilon */
extern double uldp_local_laplace_variance(double epsilon);

#endif							/* ULDP_LOCAL_GRIDS_H */

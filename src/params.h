/*-------------------------------------------------------------------------
 *
 * params.h
 *	  The public parameters of a release: epsilon, bounds, tau.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_PARAMS_H
#define ULDP_PARAMS_H

#include "fmgr.h"

/* largest magnitude a value may take; keeps every width and sum finite */
#define ULDP_MAX_MAGNITUDE 1e300
#define ULDP_MIN_EPSILON 1e-6
#define ULDP_MAX_EPSILON 1e6
/* most bins of width 2 * tau that a range may be cut into */
#define ULDP_MAX_BINS ((double) (UINT64CONST(1) << 62))

typedef struct UldpParams
{
	double		epsilon;
	bool		has_bounds;
	bool		has_tau;
	double		lower;			/* the bounds, or -ULDP_MAX_MAGNITUDE */
	double		upper;			/* the bounds, or +ULDP_MAX_MAGNITUDE */
	double		tau;			/* 0 unless has_tau */
} UldpParams;

extern void uldp_params_from_args(FunctionCallInfo fcinfo, int first,
								  UldpParams *params);
extern void uldp_params_from_aggref(FunctionCallInfo fcinfo, int first,
									UldpParams *params);
extern void uldp_refuse_window(FunctionCallInfo fcinfo);

#endif							/* ULDP_PARAMS_H */

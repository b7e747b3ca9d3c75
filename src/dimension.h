/*-------------------------------------------------------------------------
 *
 * dimension.h
 *	  The public dimension of a vector argument, read from the plan.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_DIMENSION_H
#define ULDP_DIMENSION_H

#include "nodes/plannodes.h"

extern int	uldp_public_dimension(Expr *expr, Plan *agg, List *rtable);

#endif							/* ULDP_DIMENSION_H */

/*-------------------------------------------------------------------------
 *
 * sgdwinsorized.h
 *	  Winsorized first-order optimization (Levy et al. 2021, Algorithm 3),
 *	  also the inner loop of Phased ERM.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGDWINSORIZED_H
#define ULDP_SGDWINSORIZED_H

#include "sgdmethod.h"

extern void uldp_sgd_winsorized_descent(const SgdProblem *problem,
										const int64 *members, int64 nmembers,
										const UldpUserCount *count,
										double rho_step, double lambda,
										const double *anchor, double *theta);
extern Size uldp_sgd_winsorized_bytes_per_row(int width);

#endif							/* ULDP_SGDWINSORIZED_H */

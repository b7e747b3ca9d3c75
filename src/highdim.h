/*-------------------------------------------------------------------------
 *
 * highdim.h
 *	  The high-dimensional winsorized mean (Levy et al. 2021, Algorithm 2)
 *	  under zCDP, shared by vector means and gradient steps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_HIGHDIM_H
#define ULDP_HIGHDIM_H

/* tau for a mean without winsorization: the l2 ball alone bounds a user */
#define ULDP_TAU_NONE INFINITY
/* tau to be chosen privately */
#define ULDP_TAU_PRIVATE 0.0

/* the smallest radius for which the fixed-point grid stays normal */
#define ULDP_HIGHDIM_MIN_RADIUS 1e-250

/* a noisy count of the users, already paid for */
typedef struct UldpUserCount
{
	double		noisy;			/* n + Z: what the sums are divided by */
	double		at_least;		/* n >= at_least but with probability
								 * ULDP_SELECTION_FAILURE */
} UldpUserCount;

extern Size uldp_highdim_bytes_per_point(int dim);
extern Size uldp_highdim_fixed_bytes(int dim);
extern bool uldp_highdim_rho_suffices(double rho);
extern void uldp_highdim_mean(double *points, int64 n, int dim, double radius,
							  double tau, double rho,
							  const UldpUserCount *count, double *result);

#endif							/* ULDP_HIGHDIM_H */

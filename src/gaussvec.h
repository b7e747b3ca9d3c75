/*-------------------------------------------------------------------------
 *
 * gaussvec.h
 *	  Gaussian noise for vectors, in fixed point: the grid that the vector
 *	  releases share, and output perturbation of one vector.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GAUSSVEC_H
#define ULDP_GAUSSVEC_H

extern int64 uldp_gaussian_steps(double rho);
extern int128 uldp_gaussian_grid_noise(void);
extern bool uldp_gaussian_perturb_supports(int dim, double rho);
extern void uldp_gaussian_perturb(double *v, int dim, double sensitivity,
								  double bound, double rho);
extern double uldp_gaussian_perturb_sd(int dim, double sensitivity,
									   double bound, double rho);

#endif							/* ULDP_GAUSSVEC_H */

/*-------------------------------------------------------------------------
 *
 * accountant.h
 *	  Zero-concentrated differential privacy (zCDP) accounting for the
 *	  releases that compose many mechanisms: vector means and models.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_ACCOUNTANT_H
#define ULDP_ACCOUNTANT_H

extern double uldp_zcdp_delta(double rho, double epsilon);
extern double uldp_zcdp_rho(double epsilon, double delta);
extern double uldp_selection_epsilon(double rho);

#endif							/* ULDP_ACCOUNTANT_H */

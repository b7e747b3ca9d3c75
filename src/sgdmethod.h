/*-------------------------------------------------------------------------
 *
 * sgdmethod.h
 *	  The methods of user_dp_sgd, one file each, behind one interface.
 *
 * sgd.c pays for the release's noisy count and the private scales, clips
 * the rows and hands the rest of the budget, rho (zCDP), to the method's
 * fit.  A method reads each user's rows only through
 * uldp_sgd_user_gradient (a user's average gradient) or
 * uldp_sgd_row_residual (a row's), must be rho-zCDP under adding or
 * removing one user for every input (doc/privacy.md), and reports public
 * facts only: what it planned from public parameters and released values.
 *
 * A method whose noise is calibrated by a test that holds only with high
 * probability (outlier removal) keeps a share of delta for it
 * (tests_delta_share): sgd.c converts the rest into rho, and the method
 * must then be, for every pair of neighbours D, D + u, equal to a
 * rho-zCDP mechanism on D and differ from it on D + u (and vice versa)
 * with probability at most problem->test_delta = delta' / e^epsilon,
 * delta' the share kept: (epsilon, delta)-DP in all (doc/privacy.md).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGDMETHOD_H
#define ULDP_SGDMETHOD_H

#include "sgdproblem.h"
#include "vecrelease.h"

/* Public facts about a fit, released with the model. */
typedef struct SgdReport
{
	int			phases;
	int			steps;			/* gradient steps, over all phases */
	int			passes;			/* gradients evaluated per row */
	double		gradient_evaluations;	/* user gradients, planned from
										 * released counts */
	bool		test_failed;	/* a concentration test failed: theta is the
								 * initial point */
} SgdReport;

/* the iterations of the methods that take them, by default, and at most */
#define ULDP_SGD_DEFAULT_ITERATIONS 50
#define ULDP_SGD_MAX_ITERATIONS 10000

typedef struct SgdMethod
{
	const char *name;
	/* iterations and phases when not given (0: derived by the fit) */
	int			default_iterations;
	int			default_phases;
	/*
	 * Refuses, before the charge, a budget the method cannot honour whatever
	 * the data (uldp_rho_validate): rho_count is the rho of the release's
	 * noisy count, rho_steps the least the fit gets, width the model's
	 * (the features' public dimension plus the intercept).
	 */
	void		(*check_budget) (const SgdOptions *options, int width,
								 double epsilon, double delta,
								 double rho_count, double rho_steps);
	/* working memory per row (an upper bound per user), for the plan */
	Size		(*bytes_per_row) (int width);
	/*
	 * theta (zero on entry) <- the model, rho-zCDP; count is the release's
	 * noisy user count, already paid for.
	 */
	void		(*fit) (const SgdProblem *problem, const UldpUserCount *count,
						double rho, double *theta, SgdReport *report);
	/* the share of delta kept for the tests (NULL: none, rho-zCDP) */
	double		(*tests_delta_share) (const SgdOptions *options);
} SgdMethod;

extern const SgdMethod uldp_sgd_winsorized;
extern const SgdMethod uldp_sgd_phased_erm;
extern const SgdMethod uldp_sgd_accelerated;
extern const SgdMethod uldp_sgd_robust;
extern const SgdMethod uldp_sgd_outlier_removal;

#endif							/* ULDP_SGDMETHOD_H */

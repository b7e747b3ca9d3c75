/*-------------------------------------------------------------------------
 *
 * sgdproblem.h
 *	  What every user_dp_sgd method works on: the options, the users'
 *	  clipped rows, and the gradient of one user's average loss.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGDPROBLEM_H
#define ULDP_SGDPROBLEM_H

#include "vecstate.h"

/*
 * Every scale option lies in [ULDP_SGD_SCALE_MIN, ULDP_SGD_SCALE_MAX], and
 * so does every private scale (the public search domain of
 * uldp_private_scale).  Then every quantity computed from them stays finite
 * for any data: the radius (at most 10 * 3e50 * 1e50 by default), the
 * gradient clip (1e100), a row's gradient (at most (R |x| + label) |x| <
 * 1e203), the curvature (1e100), lambda (1e150 times 4^20) and the steps.
 * Data outside the domain is clipped as any other: only the model's
 * accuracy suffers.
 */
#define ULDP_SGD_SCALE_MIN 1e-50
#define ULDP_SGD_SCALE_MAX 1e50
/* the share of rho of a noisy user count (the release's, or a phase's) */
#define ULDP_SGD_COUNT_SHARE 0.125

typedef enum SgdLoss
{
	LOSS_SQUARED,
	LOSS_LOGISTIC
} SgdLoss;

struct SgdMethod;

/* the options; a value of 0 means "not given" for the optional scales */
typedef struct SgdOptions
{
	SgdLoss		loss;
	const struct SgdMethod *method;
	int			iterations;
	int			phases;
	int			passes;			/* accelerated: 0 means every step */
	double		step_size;
	double		radius;
	double		l2;
	double		feature_radius;
	double		label_bound;
	double		gradient_clip;
	double		tau;
	int			dimension;		/* of the features, when the plan cannot tell */
} SgdOptions;

/* A training problem: the users' rows, already clipped, and the bounds. */
typedef struct SgdProblem
{
	UldpUserRows *users;
	int64		nusers;
	int			dim;			/* features; the model has dim + 1 weights */
	SgdOptions	options;
	double		smoothness;		/* bound on the curvature of the average loss */
	double		test_delta;		/* what the method's tests may fail with, for
								 * a pair of neighbours (sgdmethod.h) */
} SgdProblem;

extern double uldp_sgd_linear(const double *theta, const double *row, int dim);
extern double uldp_sgd_row_residual(const SgdProblem *problem, const double *row,
									const double *theta);
extern void uldp_sgd_user_gradient(const SgdProblem *problem, const UldpUserRows *user,
								   const double *theta, double *out);
extern double uldp_sgd_step(const SgdProblem *problem, double lambda);
extern int	uldp_sgd_random_phase(int phases);

#endif							/* ULDP_SGDPROBLEM_H */

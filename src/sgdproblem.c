/*-------------------------------------------------------------------------
 *
 * sgdproblem.c
 *	  The losses of user_dp_sgd and their gradients, shared by its methods.
 *
 * A row (x, y) has its features clipped to the l2 ball of feature_radius
 * and its label clamped (sgd.c); the model theta = (weights, intercept)
 * scores it theta.x + intercept.  The loss of a row is
 * log(1 + exp(theta.x)) - y theta.x (logistic) or (theta.x - y)^2 / 2
 * (squared): both have the gradient (prediction - y) (x, 1).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "local/sigmoid.h"
#include "random.h"
#include "sgdproblem.h"

double
uldp_sgd_linear(const double *theta, const double *row, int dim)
{
	double		z = theta[dim];

	for (int j = 0; j < dim; j++)
		z += theta[j] * row[j];
	return z;
}

/*
 * The prediction minus the label of one row (features, then label) at
 * theta: the row's gradient is that times (x, 1).
 */
double
uldp_sgd_row_residual(const SgdProblem *problem, const double *row,
					  const double *theta)
{
	double		z = uldp_sgd_linear(theta, row, problem->dim);

	return (problem->options.loss == LOSS_LOGISTIC ? uldp_sigmoid(z) : z) -
		row[problem->dim];
}

/* out (dim + 1) <- the average gradient of a user's losses at theta */
void
uldp_sgd_user_gradient(const SgdProblem *problem, const UldpUserRows *user,
					   const double *theta, double *out)
{
	int			dim = problem->dim;

	memset(out, 0, (dim + 1) * sizeof(double));
	for (int64 r = 0; r < user->count; r++)
	{
		const double *row = &user->rows[r * (dim + 1)];
		double		residual = uldp_sgd_row_residual(problem, row, theta);

		for (int j = 0; j < dim; j++)
			out[j] += residual * row[j];
		out[dim] += residual;
	}
	for (int j = 0; j <= dim; j++)
		out[j] /= (double) Max(user->count, 1);
}

/*
 * The step of gradient descent on the objective plus
 * lambda |theta - anchor|^2 / 2: the step_size option, or 1 / (its
 * curvature bound).
 */
double
uldp_sgd_step(const SgdProblem *problem, double lambda)
{
	return problem->options.step_size > 0 ? problem->options.step_size :
		1 / (problem->smoothness + problem->options.l2 + lambda);
}

/*
 * A user's phase among "phases", drawn from the secure source independently
 * of the data: phase k < phases with probability 2^-k, the last phase the
 * remainder (the number of leading ones + 1).
 */
int
uldp_sgd_random_phase(int phases)
{
	uint64		bits = uldp_random_u64();
	int			phase = 1;

	while (phase < phases && (bits & 1))
	{
		bits >>= 1;
		phase++;
	}
	return phase;
}

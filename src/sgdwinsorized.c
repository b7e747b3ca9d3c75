/*-------------------------------------------------------------------------
 *
 * sgdwinsorized.c
 *	  user_dp_sgd's "winsorized" method: winsorized first-order optimization
 *	  (Levy et al. 2021, Algorithm 3).
 *
 * At each of T steps, every user's average gradient at theta_t is one
 * point; their mean is released by WinsorizedMeanHighD (highdim.c), the
 * gradient of the regularizer (which reads no data) is added, and theta
 * takes a projected gradient step.  The model is the average of the second
 * half of the iterates.
 *
 * Privacy: each step is rho / T-zCDP (highdim.c; each user's point is its
 * gradient clipped to the l2 ball of gradient_clip), T steps compose to
 * rho.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "highdim.h"
#include "sgdwinsorized.h"

/*
 * Algorithm 3 on the users listed in "members" (all users if NULL):
 * "iterations" private gradient steps of rho_step each, from theta (which
 * receives the model), regularized by lambda |theta - anchor|^2 / 2.
 */
void
uldp_sgd_winsorized_descent(const SgdProblem *problem, const int64 *members,
							int64 nmembers, const UldpUserCount *count,
							double rho_step, double lambda,
							const double *anchor, double *theta)
{
	int			width = problem->dim + 1;
	const SgdOptions *options = &problem->options;
	double	   *points = palloc_extended(Max(nmembers, 1) * width * sizeof(double), MCXT_ALLOC_HUGE);
	double	   *gradient = palloc(width * sizeof(double));
	double	   *average = palloc0(width * sizeof(double));
	double		step = uldp_sgd_step(problem, lambda);
	int			averaged = 0;

	for (int t = 0; t < options->iterations; t++)
	{
		for (int64 i = 0; i < nmembers; i++)
			uldp_sgd_user_gradient(problem, &problem->users[members ? members[i] : i],
								   theta, &points[i * width]);
		uldp_highdim_mean(points, nmembers, width, options->gradient_clip,
						  options->tau, rho_step, count, gradient);
		for (int j = 0; j < width; j++)
			theta[j] -= step * (gradient[j] + options->l2 * theta[j] +
								lambda * (theta[j] - anchor[j]));
		uldp_clip_to_ball(theta, width, options->radius);
		if (2 * t >= options->iterations - 1)
		{
			for (int j = 0; j < width; j++)
				average[j] += theta[j];
			averaged++;
		}
	}
	for (int j = 0; j < width; j++)
		theta[j] = average[j] / averaged;
	pfree(points);
	pfree(gradient);
	pfree(average);
}

/* per user: its gradient and the mechanism's working memory */
Size
uldp_sgd_winsorized_bytes_per_row(int width)
{
	return width * sizeof(double) + uldp_highdim_bytes_per_point(width);
}

static void
winsorized_check_budget(const SgdOptions *options, int width, double epsilon,
						double delta, double rho_count, double rho_steps)
{
	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_count,
					  rho_steps / options->iterations,
					  "Raise epsilon or delta, or lower iterations.");
}

static void
winsorized_fit(const SgdProblem *problem, const UldpUserCount *count,
			   double rho, double *theta, SgdReport *report)
{
	uldp_sgd_winsorized_descent(problem, NULL, problem->nusers, count,
								rho / problem->options.iterations, 0, theta, theta);
	report->phases = 1;
	report->steps = problem->options.iterations;
	report->passes = problem->options.iterations;
	report->gradient_evaluations = (double) problem->options.iterations *
		Max(rint(count->noisy), 0);
}

const SgdMethod uldp_sgd_winsorized = {
	"winsorized",
	ULDP_SGD_DEFAULT_ITERATIONS,
	1,
	winsorized_check_budget,
	uldp_sgd_winsorized_bytes_per_row,
	winsorized_fit
};

/*-------------------------------------------------------------------------
 *
 * sgdphased.c
 *	  user_dp_sgd's "phased_erm" method: Phased ERM (Levy et al. 2021,
 *	  Algorithm 4).
 *
 * Every user joins one of K phases, phase k with probability 2^-k (the
 * last phase takes the remainder), drawn independently per user.  Phase k
 * runs Algorithm 3 (sgdwinsorized.c) on its users for the objective plus
 * lambda_k |theta - theta_(k-1)|^2 / 2, lambda_k = 4^k lambda, starting
 * from the previous phase's model; lambda = G / (R sqrt(n)) with n the
 * noisy count of users and G the gradient clip.
 *
 * Privacy: each user's rows are read by one phase only, and the phases are
 * drawn independently of the data, so by parallel composition (Renyi
 * divergence is jointly quasi-convex) every phase may use all of rho: its
 * own noisy count (rho / 8) and T steps of 7 rho / 8T.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "sgdwinsorized.h"

/* The rho of one gradient step in every phase. */
static double
phase_rho_per_step(const SgdOptions *options, double rho)
{
	return rho * (1 - ULDP_SGD_COUNT_SHARE) / options->iterations;
}

static void
phased_check_budget(const SgdOptions *options, int width, double epsilon,
					double delta, double rho_count, double rho_steps)
{
	static const char *hint = "Raise epsilon or delta, or lower iterations.";
	double		rho_step = phase_rho_per_step(options, rho_steps);

	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_count, rho_step, hint);
	/* each phase's own noisy count */
	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_steps * ULDP_SGD_COUNT_SHARE,
					  rho_step, hint);
}

/* per user: its phase and its index in a phase, then Algorithm 3's */
static Size
phased_bytes_per_row(int width)
{
	return sizeof(int8) + sizeof(int64) + uldp_sgd_winsorized_bytes_per_row(width);
}

static void
phased_fit(const SgdProblem *problem, const UldpUserCount *count, double rho,
		   double *theta, SgdReport *report)
{
	int			width = problem->dim + 1;
	int			phases = problem->options.phases;
	int64	   *members = palloc_extended(Max(problem->nusers, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	int8	   *phase_of = palloc_extended(Max(problem->nusers, 1), MCXT_ALLOC_HUGE);
	double	   *anchor = palloc0(width * sizeof(double));
	double		lambda = problem->options.gradient_clip /
		(problem->options.radius * sqrt(Max(count->noisy, 1)));

	for (int64 i = 0; i < problem->nusers; i++)
		phase_of[i] = (int8) uldp_sgd_random_phase(phases);

	report->phases = phases;
	report->steps = phases * problem->options.iterations;
	report->passes = problem->options.iterations;
	report->gradient_evaluations = 0;
	for (int phase = 1; phase <= phases; phase++)
	{
		int64		nmembers = 0;
		UldpUserCount phase_count;

		for (int64 i = 0; i < problem->nusers; i++)
			if (phase_of[i] == phase)
				members[nmembers++] = i;
		phase_count = uldp_noisy_count(nmembers, rho * ULDP_SGD_COUNT_SHARE);
		memcpy(anchor, theta, width * sizeof(double));
		uldp_sgd_winsorized_descent(problem, members, nmembers, &phase_count,
									phase_rho_per_step(&problem->options, rho),
									ldexp(lambda, 2 * phase), anchor, theta);
		report->gradient_evaluations += (double) problem->options.iterations *
			Max(rint(phase_count.noisy), 0);
	}
	pfree(members);
	pfree(phase_of);
	pfree(anchor);
}

const SgdMethod uldp_sgd_phased_erm = {
	"phased_erm",
	ULDP_SGD_DEFAULT_ITERATIONS,
	3,
	phased_check_budget,
	phased_bytes_per_row,
	phased_fit
};

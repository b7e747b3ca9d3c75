/*-------------------------------------------------------------------------
 *
 * sgdphased.c
 *	  user_dp_sgd's "phased_erm" method: Phased ERM (Levy et al. 2021,
 *	  Algorithm 4).
 *
 * The users are drawn into phases (sgdphases.c); phase k runs Algorithm 3
 * (sgdwinsorized.c) on its users for the objective plus
 * lambda_k |theta - theta_(k-1)|^2 / 2, starting from the previous phase's
 * model.
 *
 * Privacy: by parallel composition over the phases (sgdphases.c), every
 * phase may use all of rho: its own noisy count (rho / 8) and T steps of
 * 7 rho / 8T.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "sgdphases.h"
#include "sgdwinsorized.h"

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
	int8	   *phase_of = uldp_sgd_draw_phases(problem->nusers, phases);
	double	   *anchor = palloc0(width * sizeof(double));

	report->phases = phases;
	report->steps = phases * problem->options.iterations;
	report->passes = problem->options.iterations;
	report->gradient_evaluations = 0;
	for (int phase = 1; phase <= phases; phase++)
	{
		int64		nmembers = uldp_sgd_phase_members(phase_of, problem->nusers, phase, members);
		UldpUserCount phase_count = uldp_noisy_count(nmembers, rho * ULDP_SGD_COUNT_SHARE);

		memcpy(anchor, theta, width * sizeof(double));
		uldp_sgd_winsorized_descent(problem, members, nmembers, &phase_count,
									uldp_sgd_phase_rho_steps(rho) / problem->options.iterations,
									uldp_sgd_phase_lambda(problem, count, phase), anchor, theta);
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
	uldp_sgd_phases_check_budget,
	phased_bytes_per_row,
	phased_fit
};

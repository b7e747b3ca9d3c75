/*-------------------------------------------------------------------------
 *
 * sgdphases.c
 *	  Phases of disjoint users for the localized methods of user_dp_sgd.
 *
 * Every user joins one of K phases, phase k with probability 2^-k (the
 * last phase takes the remainder), drawn independently per user from the
 * secure source.  Phase k solves the objective plus
 * lambda_k |theta - theta_(k-1)|^2 / 2 from the previous phase's model:
 * lambda_k = 4^k lambda for phased_erm (accelerated takes 4^(k-1) lambda),
 * lambda = G / (R sqrt(n)) with n the release's noisy count of users and G
 * the gradient clip.
 *
 * Privacy (doc/privacy.md): each user's rows are read in one phase only,
 * and the phases are drawn independently of the data, so by parallel
 * composition every phase may spend all of rho: its own noisy count of
 * users (rho / 8) and its steps (the rest).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "sgdphases.h"

/* The phase (1 ... phases) of each of nusers users (uldp_sgd_random_phase) */
int8 *
uldp_sgd_draw_phases(int64 nusers, int phases)
{
	int8	   *phase_of = palloc_extended(Max(nusers, 1), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < nusers; i++)
		phase_of[i] = (int8) uldp_sgd_random_phase(phases);
	return phase_of;
}

/* members <- the indexes of the users of "phase"; returns their number */
int64
uldp_sgd_phase_members(const int8 *phase_of, int64 nusers, int phase,
					   int64 *members)
{
	int64		nmembers = 0;

	for (int64 i = 0; i < nusers; i++)
		if (phase_of[i] == phase)
			members[nmembers++] = i;
	return nmembers;
}

/* lambda_k, from the release's noisy count of users */
double
uldp_sgd_phase_lambda(const SgdProblem *problem, const UldpUserCount *count,
					  int phase)
{
	double		lambda = problem->options.gradient_clip /
		(problem->options.radius * sqrt(Max(count->noisy, 1)));

	return ldexp(lambda, 2 * phase);
}

/* What a phase's steps get once its noisy count is paid for. */
double
uldp_sgd_phase_rho_steps(double rho)
{
	return rho * (1 - ULDP_SGD_COUNT_SHARE);
}

/*
 * Refuses, before the charge, a budget too small for a phase: its noisy
 * count, and steps that each get at least 1 / iterations of the phase's
 * steps' share (uldp_rho_validate).
 */
void
uldp_sgd_phases_check_budget(const SgdOptions *options, int width,
							 double epsilon, double delta, double rho_count,
							 double rho_steps)
{
	static const char *hint = "Raise epsilon or delta, or lower iterations.";
	double		rho_step = uldp_sgd_phase_rho_steps(rho_steps) / options->iterations;

	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_count, rho_step, hint);
	/* each phase's own noisy count */
	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_steps * ULDP_SGD_COUNT_SHARE,
					  rho_step, hint);
}

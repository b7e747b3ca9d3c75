/*-------------------------------------------------------------------------
 *
 * sgdaccelerated.c
 *	  user_dp_sgd's "accelerated" method: accelerated phased ERM with
 *	  outlier gradient removal (Lowy, Liu and Asi 2024, Algorithm 3), whose
 *	  phases run user-level DP accelerated minibatch SGD (their Algorithm 2).
 *
 * The users are drawn into phases (sgdphases.c): at most "phases", and as
 * many as leave the last one MIN_PHASE_USERS users by the noisy count.
 * Phase k minimizes the objective plus lambda_k |theta - theta_(k-1)|^2 / 2,
 * lambda_k = 4^(k-1) G / (R sqrt(n)) (a quarter of phased_erm's: phase 1
 * starts from theta = 0, and less shrinkage towards it was more accurate
 * from 1000 to 100000 users), which is mu = l2 + lambda_k strongly convex
 * and L = H + l2 + lambda_k smooth (H the curvature bound of sgdproblem.c,
 * or 1 / step_size), by T_k steps of AC-SA (Ghadimi and Lan 2012),
 * T_k = ceil(4 sqrt(L / mu)) but at most "iterations": the accelerated rate
 * needs about sqrt(L / mu) steps, where plain gradient descent needs L / mu.
 *
 * Minibatches.  The T_k steps are cut into passes of B consecutive steps;
 * at the start of each pass every user of the phase draws one of its B
 * steps, uniformly and independently of the data.  So a user is read by
 * one step per pass, by at most P = ceil(T_k / B) steps in all, and a step
 * reads about n_k / B users.  B = 1 (every step reads the whole phase) by
 * default; the option "passes" asks for P passes, B = ceil(T_k / P).
 *
 * A step's gradient.  Each user's average gradient at the query point is
 * scaled into the ball of gradient_clip G.  Then, by a decision on public
 * facts only (the options and the phase's noisy count), either
 *	- the clipped mean: the sum of the batch's gradients over the planned
 *	  batch size n^_k / B, with Gaussian noise for sensitivity G / (n^_k / B)
 *	  (highdim.c without ranges), 7 rho / 8P per step (the phase's noisy
 *	  count takes rho / 8); or
 *	- outlier removal, when "tau" is given and it adds less noise: the
 *	  inlier mean of the batch (concentration.c), released only if a noisy
 *	  test shows a total inlier weight W near the planned batch (the
 *	  threshold lets a concentrated batch pass every test of a phase but
 *	  with probability 10^-3; the paper's is 4/5 of the batch); its
 *	  sensitivity is then 12 tau / W_min, W_min the threshold minus the
 *	  test's noise margin.  A failed test halts the fit: theta = 0 and
 *	  "test_failed".
 * The gradient of the penalties (which reads no data) is added and AC-SA
 * takes its step; the phase's model is AC-SA's aggregated point.
 *
 * Privacy (doc/privacy.md).  Phases: parallel composition (sgdphases.c).
 * Within a phase a user is read by at most P steps, and each step is
 * rho_phase / P-zCDP in the users it reads (the clipped mean; or the test,
 * epsilon_t-DP for a query of sensitivity 3, and the inlier mean): P-fold
 * composition.  No amplification by subsampling is claimed.  Outlier
 * removal's sensitivity bound needs W >= W_min, which the test shows only
 * with high probability: for a pair of neighbours the fit equals a
 * rho-zCDP one except when, at one of the added user's steps, the test
 * passes although W < W_min, which has probability at most test_delta
 * (sgdmethod.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "concentration.h"
#include "gaussvec.h"
#include "noise.h"
#include "random.h"
#include "sgdphases.h"

/* AC-SA steps per sqrt(L / mu) */
#define STEPS_PER_ROOT 4
/*
 * At most this many steps per phase unless "iterations" says otherwise:
 * accelerated methods accumulate the noise of their gradients (their late
 * steps are long), and the data's own curvature, which no public fact
 * tells, usually makes far fewer steps than sqrt(L / lambda_k) enough
 * (doc/privacy.md: 20 is a compromise between the two losses).
 */
#define DEFAULT_STEPS 20
/*
 * At most this many phases unless "phases" says otherwise, and fewer when
 * the last, smallest phase would have fewer than MIN_PHASE_USERS users by
 * the noisy count.  Each phase learns from half the users of the one
 * before; at epsilon 1 a second phase divided the excess loss by up to 3.5
 * at 30000 and 100000 users, multiplied it by 1.3 to 4 at 1000 to 10000, and
 * a third did not help (doc/privacy.md).
 */
#define DEFAULT_PHASES 2
#define MIN_PHASE_USERS 10000
/*
 * The planned batch of outlier removal is at most this many users: the
 * inlier mean compares every pair of a batch.
 */
#define MAX_REMOVAL_BATCH 4096
/* a step's share of its rho for the test, with outlier removal */
#define TEST_SHARE 0.25
/* the share of delta kept for the tests when tau is given */
#define TESTS_DELTA_SHARE 0.25
/*
 * The probability, per phase, that a test fails although every batch is
 * concentrated (and holds its planned users but for 5 standard deviations):
 * the threshold is set just low enough.
 */
#define REMOVAL_FAILURE 1e-3

/* A phase's plan: public facts only. */
typedef struct PhasePlan
{
	int			steps;
	int			batches;		/* B: steps per pass */
	int			passes;			/* P: the steps that read a user, at most */
	double		batch_users;	/* the planned batch, n^_k / B */
	double		rho_step;
	bool		removal;
	/* with outlier removal */
	double		test_epsilon;
	int64		threshold;
	double		sensitivity;
	double		rho_mean;
} PhasePlan;

static int
ceil_div(int a, int b)
{
	return (a + b - 1) / b;
}

/* the clipped mean's plan with B steps per pass */
static PhasePlan
clipped_plan(int steps, int batches, double users, double rho)
{
	PhasePlan	plan = {0};

	plan.steps = steps;
	plan.batches = Min(batches, steps);
	plan.passes = ceil_div(steps, plan.batches);
	plan.batch_users = users / plan.batches;
	plan.rho_step = rho / plan.passes;
	return plan;
}

/*
 * Outlier removal with B steps per pass, if the sampler supports its test
 * and mean, its threshold leaves W_min > 3 and its sensitivity is not
 * below G 2^-20; plan.removal says whether it does.  "least_users" is the
 * phase's count's lower bound.
 */
static PhasePlan
removal_plan(const SgdProblem *problem, int steps, int batches, double users,
			 double least_users, double rho)
{
	PhasePlan	plan = clipped_plan(steps, batches, users, rho);
	double		margin;
	double		least_batch;
	double		least_weight;

	plan.test_epsilon = sqrt(2 * plan.rho_step * TEST_SHARE);
	plan.rho_mean = plan.rho_step * (1 - TEST_SHARE);
	if (!(problem->test_delta > 0) ||
		!(plan.test_epsilon >= ULDP_MIN_EPSILON / 20 && plan.test_epsilon <= ULDP_MAX_EPSILON) ||
		!uldp_gaussian_perturb_supports(problem->dim + 1, plan.rho_mean))
		return plan;
	/*
	 * A concentrated batch has W = its size, at least least_batch but with
	 * probability 3e-7 (binomial tail), and must pass every test of the phase
	 * but with probability REMOVAL_FAILURE.
	 */
	least_batch = least_users / plan.batches - 5 * sqrt(plan.batch_users);
	plan.threshold = (int64) floor(least_batch -
								   uldp_discrete_laplace_tail(ULDP_INLIER_WEIGHT_SENSITIVITY,
															  plan.test_epsilon,
															  REMOVAL_FAILURE / plan.steps));
	/* P(noise > margin) <= test_delta / P at each of a user's steps */
	margin = uldp_discrete_laplace_tail(ULDP_INLIER_WEIGHT_SENSITIVITY, plan.test_epsilon,
										problem->test_delta / plan.passes);
	least_weight = plan.threshold - margin;
	if (!(least_weight > ULDP_INLIER_WEIGHT_SENSITIVITY))
		return plan;
	plan.sensitivity = uldp_inlier_mean_sensitivity(problem->options.tau,
													problem->options.gradient_clip,
													problem->dim + 1, least_weight);
	/*
	 * uldp_gaussian_perturb rounds the mean to a grid of about S / K: with S
	 * at least bound 2^-20 every image has at most 51 bits and its long
	 * double quotient is exact to far below a step
	 */
	plan.removal = plan.sensitivity >= ldexp(problem->options.gradient_clip, -20);
	return plan;
}

/* the standard deviation of a step's noise, per unit of gradient */
static double
noise_scale(const PhasePlan *plan, double gradient_clip)
{
	return plan->removal ? plan->sensitivity / sqrt(plan->rho_mean) :
		gradient_clip / plan->batch_users / sqrt(plan->rho_step);
}

/*
 * The plan of a phase with its noisy count, lambda_k and rho: outlier
 * removal when tau is given, its batches are small enough and it adds less
 * noise than the clipped mean.
 */
static PhasePlan
plan_phase(const SgdProblem *problem, const UldpUserCount *count, double lambda,
		   double rho)
{
	const SgdOptions *options = &problem->options;
	double		smooth = 1 / uldp_sgd_step(problem, lambda);
	double		root = sqrt(smooth / (options->l2 + lambda));
	int			steps = (int) Min(Max(ceil(STEPS_PER_ROOT * root), 1), options->iterations);
	int			batches = options->passes > 0 ? ceil_div(steps, Min(options->passes, steps)) : 1;
	double		users = Max(count->noisy, 1);
	PhasePlan	clipped;
	PhasePlan	removal;

	clipped = clipped_plan(steps, batches, users, rho);
	if (isinf(options->tau))
		return clipped;
	/* at least as many batches as MAX_REMOVAL_BATCH needs, if fewer steps */
	removal = removal_plan(problem, steps,
						   (int) Min(Max(batches, ceil(users / MAX_REMOVAL_BATCH)), steps),
						   users, count->at_least, rho);
	if (removal.removal && removal.batch_users <= MAX_REMOVAL_BATCH &&
		noise_scale(&removal, options->gradient_clip) <
		noise_scale(&clipped, options->gradient_clip))
		return removal;
	return clipped;
}

/*
 * One step's noisy gradient of the data term at the query point, from the
 * users of the batch (their gradients in points, overwritten); false if
 * the test failed.
 */
static bool
noisy_gradient(const SgdProblem *problem, const PhasePlan *plan,
			   double *points, int64 nbatch, int64 *counts, double *gradient)
{
	int			width = problem->dim + 1;
	double		clip = problem->options.gradient_clip;

	if (plan->removal)
	{
		int64		weight;

		for (int64 i = 0; i < nbatch; i++)
			uldp_clip_to_ball(&points[i * width], width, clip);
		weight = uldp_inlier_mean(points, nbatch, width, problem->options.tau, clip,
								  counts, gradient);
		if (weight + uldp_discrete_laplace(ULDP_INLIER_WEIGHT_SENSITIVITY, plan->test_epsilon) <
			plan->threshold)
			return false;
		uldp_gaussian_perturb(gradient, width, plan->sensitivity, clip, plan->rho_mean);
	}
	else
	{
		UldpUserCount batch = {plan->batch_users, 0};

		uldp_highdim_mean(points, nbatch, width, clip, ULDP_TAU_NONE, plan->rho_step,
						  &batch, gradient);
	}
	return true;
}

/*
 * Algorithm 2 on the users listed in members: AC-SA from anchor (theta),
 * for the objective plus lambda |theta - anchor|^2 / 2; theta receives the
 * model.  Returns the steps taken, fewer than planned if a test failed.
 * batch_of, batch and counts are working memory for nmembers users,
 * points for nmembers gradients.
 */
static int
accelerated_descent(const SgdProblem *problem, const PhasePlan *plan,
					const int64 *members, int64 nmembers, double lambda,
					double *theta, int32 *batch_of, int64 *batch,
					int64 *counts, double *points, bool *failed)
{
	int			width = problem->dim + 1;
	const SgdOptions *options = &problem->options;
	double		smooth = 1 / uldp_sgd_step(problem, lambda);
	double		strong = options->l2 + lambda;
	double	   *anchor = palloc(width * sizeof(double));
	double	   *x = palloc(width * sizeof(double));
	double	   *query = palloc(width * sizeof(double));
	double	   *gradient = palloc(width * sizeof(double));
	int			t;

	memcpy(anchor, theta, width * sizeof(double));
	memcpy(x, theta, width * sizeof(double));
	*failed = false;
	for (t = 0; t < plan->steps; t++)
	{
		int			step = t % plan->batches;
		int64		nbatch = 0;
		/* AC-SA's parameters for strongly convex objectives, t from 1 */
		double		alpha = 2.0 / (t + 2);
		double		gamma = 4 * smooth / ((t + 1.0) * (t + 2));
		double		prox = (1 - alpha) * strong + gamma;

		if (step == 0)
			for (int64 i = 0; i < nmembers; i++)
				batch_of[i] = plan->batches > 1 ? (int32) uldp_uniform_u64(plan->batches) : 0;
		for (int64 i = 0; i < nmembers; i++)
			if (batch_of[i] == step)
				batch[nbatch++] = members[i];

		/* the query point, between the aggregate (theta) and x */
		for (int j = 0; j < width; j++)
			query[j] = ((1 - alpha) * (strong + gamma) * theta[j] + alpha * prox * x[j]) /
				(gamma + (1 - alpha * alpha) * strong);
		for (int64 i = 0; i < nbatch; i++)
			uldp_sgd_user_gradient(problem, &problem->users[batch[i]], query,
								   &points[i * width]);
		if (!noisy_gradient(problem, plan, points, nbatch, counts, gradient))
		{
			*failed = true;
			t++;
			break;
		}
		for (int j = 0; j < width; j++)
		{
			gradient[j] += options->l2 * query[j] + lambda * (query[j] - anchor[j]);
			x[j] = (alpha * strong * query[j] + prox * x[j] - alpha * gradient[j]) /
				(strong + gamma);
		}
		uldp_clip_to_ball(x, width, options->radius);
		for (int j = 0; j < width; j++)
			theta[j] = alpha * x[j] + (1 - alpha) * theta[j];
	}
	pfree(anchor);
	pfree(x);
	pfree(query);
	pfree(gradient);
	return t;
}

static double
accelerated_tests_delta_share(const SgdOptions *options)
{
	return isinf(options->tau) ? 0 : TESTS_DELTA_SHARE;
}

/*
 * per user: its phase, its index in the phase, its batch in a pass, its
 * place in a batch, its neighbour count, its gradient and the clipped
 * mean's working memory
 */
static Size
accelerated_bytes_per_row(int width)
{
	return sizeof(int8) + sizeof(int64) + sizeof(int32) + 2 * sizeof(int64) +
		width * sizeof(double) + uldp_highdim_bytes_per_point(width);
}

static void
accelerated_fit(const SgdProblem *problem, const UldpUserCount *count,
				double rho, double *theta, SgdReport *report)
{
	int64		nusers = Max(problem->nusers, 1);
	int			width = problem->dim + 1;
	int			phases = problem->options.phases;
	int8	   *phase_of;
	int64	   *members = palloc_extended(nusers * sizeof(int64), MCXT_ALLOC_HUGE);
	int32	   *batch_of = palloc_extended(nusers * sizeof(int32), MCXT_ALLOC_HUGE);
	int64	   *batch = palloc_extended(nusers * sizeof(int64), MCXT_ALLOC_HUGE);
	int64	   *counts = palloc_extended(nusers * sizeof(int64), MCXT_ALLOC_HUGE);
	double	   *points = palloc_extended(nusers * width * sizeof(double), MCXT_ALLOC_HUGE);

	/* the last phase has n^ 2^-(phases - 1) users */
	while (phases > 1 && ldexp(count->noisy, 1 - phases) < MIN_PHASE_USERS)
		phases--;
	phase_of = uldp_sgd_draw_phases(problem->nusers, phases);
	report->phases = phases;
	report->steps = 0;
	report->passes = 0;
	report->gradient_evaluations = 0;
	for (int phase = 1; phase <= phases && !report->test_failed; phase++)
	{
		int64		nmembers = uldp_sgd_phase_members(phase_of, problem->nusers, phase, members);
		UldpUserCount phase_count = uldp_noisy_count(nmembers, rho * ULDP_SGD_COUNT_SHARE);
		/* lambda_k = 4^(k-1) lambda, a quarter of phased_erm's (measured) */
		double		lambda = uldp_sgd_phase_lambda(problem, count, phase - 1);
		PhasePlan	plan = plan_phase(problem, &phase_count, lambda,
									  uldp_sgd_phase_rho_steps(rho));
		int			steps = accelerated_descent(problem, &plan, members, nmembers, lambda,
												theta, batch_of, batch, counts, points,
												&report->test_failed);

		report->steps += steps;
		report->passes = Max(report->passes, plan.passes);
		report->gradient_evaluations += steps * Max(rint(phase_count.noisy), 0) / plan.batches;
	}
	/* the paper's output when a concentration test fails */
	if (report->test_failed)
		memset(theta, 0, width * sizeof(double));
	pfree(phase_of);
	pfree(members);
	pfree(batch_of);
	pfree(batch);
	pfree(counts);
	pfree(points);
}

const SgdMethod uldp_sgd_accelerated = {
	"accelerated",
	DEFAULT_STEPS,
	DEFAULT_PHASES,
	uldp_sgd_phases_check_budget,
	accelerated_bytes_per_row,
	accelerated_fit,
	accelerated_tests_delta_share
};

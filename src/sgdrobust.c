/*-------------------------------------------------------------------------
 *
 * sgdrobust.c
 *	  user_dp_sgd's "robust" method: one pass of SGD over the users, each
 *	  step's gradient a coordinate-wise robust statistic with projection
 *	  around it, after Ghazi, Kumar, Liu and Manurangsi 2025 ("Linear-time
 *	  user-level DP-SCO via robust statistics", Algorithms 1-5), made
 *	  private by noise on every step.
 *
 * Every user is read once: it joins one phase (phase k < K with
 * probability 2^-k, the last the remainder, as in Algorithm 5) and, in its
 * phase, either the calibration batch or one of the phase's T steps, all
 * drawn from the secure source independently of the data.  So a fit
 * evaluates each user's average gradient once: n gradients over mn rows.
 * Without the phases option, K is 2 when the noisy count shows enough
 * users for the second phase to calibrate its boxes (near the optimum,
 * where the users' gradients concentrate), else 1.
 *
 * A phase, from the model theta_0 and a public centre c (0, then the mean
 * of the previous phase's released gradients over its second half):
 *	1. Calibration (without tau): the private median, over the calibration
 *	   users, of the l-infinity distance from the user's gradient at theta_0
 *	   (clipped to the l2 ball of gradient_clip G) to c; the box half-width
 *	   s is twice it, at most G / sqrt(w) (w = d + 1 weights).  With tau,
 *	   s = tau.  Without enough users for the selection to land in the
 *	   users' central half, s stays as it was (G / sqrt(w) at first).
 *	2. T steps, T from Lemma A.6 of the paper and measurement (see
 *	   steps_for).  Step t:
 *	   each of its users' gradients at theta_t, clipped to G, is projected
 *	   coordinate-wise onto the box of half-width s around the centre (the
 *	   step's public centre: the previous step's released estimate); per
 *	   coordinate, the mean of the box-projected gradients is projected
 *	   onto [m - s, m + s], m their trimmed mean (Algorithm 2 with the
 *	   trimmed mean as the robust statistic, Remark 3.4); Gaussian noise is
 *	   added on a fixed-point grid; theta takes a projected step.
 *	3. The phase's model is the average of its second half of iterates,
 *	   and the step size halves for the next phase.
 * Finally the concentration test (Algorithm 3 through AboveThreshold,
 * Algorithm 4): one query per phase, the number of its users whose
 * gradient left the box, against a third of its expected users (the
 * break point).  If the test fails, the model is the initial point, 0.
 *
 * Privacy, for adding or removing a user u (doc/privacy.md proves it).
 * Fix u's phase, role and step: u's rows are read by one mechanism only,
 * and every other one runs identically on both inputs given what was
 * released before it.  A step's release is an integer vector that moves
 * by at most K in l2 when u is added or removed, plus the Gaussian
 * noise of gaussvec.c: rho_steps-zCDP; the calibration is one private
 * median with rho_steps.  The actual run is the mixture of these over u's
 * assignment, with the same weights for both inputs, and Renyi divergence
 * is jointly quasi-convex: rho_steps-zCDP in all (parallel composition, as
 * in sgdphased.c).  The test is epsilon_test-DP (each query has
 * sensitivity 1): epsilon_test^2 / 2.  rho_steps + epsilon_test^2 / 2 =
 * rho.  Unlike the paper, privacy never relies on the test, on
 * contractivity of the steps (its Assumption 2.5), or on the data
 * concentrating: every step's sensitivity is bounded by construction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "abovethreshold.h"
#include "gaussvec.h"
#include "noise.h"
#include "radixsort.h"
#include "random.h"
#include "range.h"
#include "sgdmethod.h"
#include "vecrelease.h"

/*
 * Grid steps per box half-width of a user's box-projected gradient (its
 * rounding, a 2^-21 of the box per user, is far below the noise).
 */
#define BOX_STEPS INT64CONST(0x100000)
/*
 * The trimmed mean drops a tenth of a step's expected users on each side
 * of each coordinate: its sensitivity, and the noise, grow by 1 / (1 - 2 *
 * 0.1) = 1.25 over the mean's.
 */
#define TRIM_FRACTION 0.1
/* the box is twice the users' median distance to the centre */
#define BOX_PER_MEDIAN 2.0
/* the calibration's grid reaches down to 2^-30 of the widest box */
#define BOX_RESOLUTION 0x1p-30
/*
 * The probability, whatever the data, that a calibration runs and misses
 * the central half of its users' distances (as SCALE_FAILURE in sgd.c): a
 * box too narrow costs accuracy, never privacy.
 */
#define CALIBRATION_FAILURE 1e-3
/* a calibration takes at most this share of a phase's users */
#define CALIBRATION_SHARE 0.25
/* the test's share of rho, when it runs */
#define TEST_SHARE 0.125
/* the test fails when a third of a phase's expected users left the box */
#define BREAK_POINT (1.0 / 3)
/* the step size of each phase, relative to the one before */
#define PHASE_STEP_DECAY 0.5

/* a user's place in the fit: its phase, then its role or step */
typedef struct Assignment
{
	uint64		key;
	int64		user;
} Assignment;

/* what the fit decides before reading data, from options and the count */
typedef struct RobustPlan
{
	const SgdProblem *problem;
	int			width;
	int			phases;
	double		users;			/* the noisy count of users */
	double		rho_steps;		/* each step, and each calibration */
	double		epsilon_test;	/* 0: no test */
	int64		output_steps;	/* lambda: grid steps of a step's release
								 * per s / D */
	double		widest;			/* the widest box, G / sqrt(w) */
	double		calibration_users;	/* expected users of a calibration */
} RobustPlan;

/* working memory, sized for all users: a step reads at most all of them */
typedef struct RobustWork
{
	Assignment *assignment;
	Assignment *spare;
	double	   *gradient;
	int64	   *boxed;			/* a step's users' box-projected gradients */
	uint64	   *column;
	uint64	   *buffer;
	double	   *distances;
	int128	   *release;
} RobustWork;

static double
phase_share(int phase, int phases)
{
	return phases == 1 ? 1 : ldexp(1, -Min(phase, phases - 1));
}

/*
 * The expected users a calibration needs: the selection needs
 * uldp_private_scale_users to land in the users' central half but with
 * probability CALIBRATION_FAILURE / 2, and the binomial number of users it
 * gets, of mean x, falls short of that, a, but with probability
 * CALIBRATION_FAILURE / 2 (Chernoff: P(X <= a) <= exp(-(x - a)^2 / (2x))).
 */
static double
calibration_users(const RobustPlan *plan)
{
	double		needed = uldp_private_scale_users(plan->widest * BOX_RESOLUTION, plan->widest,
												  plan->rho_steps, CALIBRATION_FAILURE / 2);
	double		slack = log(2 / CALIBRATION_FAILURE);

	return needed + slack + sqrt(2 * needed * slack + slack * slack);
}

/*
 * The steps of a phase whose steps get "users" users with boxes of
 * half-width "half".  The optimum of the bound of Lemma A.6 of the paper,
 * (beta + 1 / eta) R^2 / T + eta sigma^2 / 2 with eta = 1 / beta, where
 * sigma^2 = w^2 s^2 T^2 / (2 rho (0.8 users)^2) is the noise of a step
 * (its sensitivity is sqrt(w) s / D, D = 0.8 users / T), is
 * T_A6^3 = 4 beta^2 R^2 rho (0.8 users)^2 / (w^2 s^2); with R = G / (2 beta)
 * (the distance from the start to the optimum is unknown), T_A6^3 =
 * rho (0.8 users)^2 G^2 / (w^2 s^2).  That bound assumes only convexity:
 * its optimisation error falls as 1 / T.  Where the loss curves, as the
 * regularised losses here do near their optimum, the averaged iterates'
 * error falls geometrically in T while the noise still grows as T, so the
 * best T grows far more slowly with the users and the narrowness of the
 * boxes: measured (doc/learning.md, section 5) on logistic and linear data
 * (d = 8, 1k to 100k users of 10 or 100 rows), the best number of steps per
 * phase lay between 0.5 and 1.4 times STEPS_PER_ROOT sqrt(T_A6), while
 * T_A6 itself took up to 4.3 times too many at 100k users.
 */
#define STEPS_PER_ROOT 5.0

static int
steps_for(const RobustPlan *plan, double users, double half)
{
	const SgdOptions *options = &plan->problem->options;
	double		trimmed = (1 - 2 * TRIM_FRACTION) * users;
	double		steps;

	if (options->iterations > 0)
		return options->iterations;
	steps = STEPS_PER_ROOT *
		pow(plan->rho_steps * trimmed * trimmed * options->gradient_clip * options->gradient_clip /
			((double) plan->width * plan->width * half * half), 1.0 / 6);
	return (int) Min(Max(rint(steps), 1), ULDP_SGD_MAX_ITERATIONS);
}

/*
 * The largest lambda with w lambda^2 <= K^2, K the grid steps the Gaussian
 * mechanism allows with rho_steps: a step's release moves by at most lambda
 * per coordinate, so by at most K in l2.
 */
static int64
output_steps(double rho_steps, int width)
{
	int128		k = uldp_gaussian_steps(rho_steps);
	int64		lambda = (int64) floor((double) k / sqrt(width));

	while ((int128) (lambda + 1) * (lambda + 1) * width <= k * k)
		lambda++;
	while (lambda > 0 && (int128) lambda * lambda * width > k * k)
		lambda--;
	return lambda;
}

/*
 * Whether the test, with its margin, can pass on good data: for every
 * phase, the noise of AboveThreshold (threshold and query) stays below
 * half the break point of its step users (at least 1 - CALIBRATION_SHARE
 * of its users) but with probability ULDP_SELECTION_FAILURE.  Below that,
 * the test would fail good fits; it is not run and its share goes to the
 * steps (a decision from the noisy count: post-processing).
 */
static bool
test_reliable(double epsilon, double users, int phases)
{
	double		margin;

	if (!uldp_above_threshold_supports(1, epsilon))
		return false;
	margin = uldp_discrete_laplace_tail(2, epsilon, ULDP_SELECTION_FAILURE / 2) +
		uldp_discrete_laplace_tail(4, epsilon, ULDP_SELECTION_FAILURE / (2 * phases)) + 1;
	for (int phase = 1; phase <= phases; phase++)
		if (BREAK_POINT * (1 - CALIBRATION_SHARE) * users * phase_share(phase, phases) / 2 < margin)
			return false;
	return true;
}

/* Whether phase "phase" of "phases" can calibrate its boxes. */
static bool
calibrates(const RobustPlan *plan, const UldpUserCount *count, int phase, int phases)
{
	return isinf(plan->problem->options.tau) &&
		plan->calibration_users <= CALIBRATION_SHARE * count->at_least * phase_share(phase, phases);
}

static RobustPlan
robust_plan(const SgdProblem *problem, const UldpUserCount *count, double rho)
{
	RobustPlan	plan = {0};

	plan.problem = problem;
	plan.width = problem->dim + 1;
	plan.users = Max(count->noisy, 1);
	plan.widest = problem->options.gradient_clip / sqrt(plan.width);
	/* the same expression as robust_check_budget's, so lambda >= 1 here too */
	plan.rho_steps = rho * (1 - TEST_SHARE);
	plan.calibration_users = calibration_users(&plan);
	/*
	 * Two phases when the second can calibrate even with the test's share
	 * taken (the test is decided for the phases chosen, and can only leave
	 * the calibration more budget).
	 */
	plan.phases = problem->options.phases > 0 ? problem->options.phases :
		calibrates(&plan, count, 2, 2) ? 2 : 1;
	plan.epsilon_test = sqrt(2 * TEST_SHARE * rho);
	if (!test_reliable(plan.epsilon_test, plan.users, plan.phases))
	{
		plan.epsilon_test = 0;
		plan.rho_steps = rho;
	}
	plan.output_steps = output_steps(plan.rho_steps, plan.width);
	plan.calibration_users = calibration_users(&plan);
	return plan;
}

static int128
floor_div(int128 a, int128 d)
{
	int128		q = a / d;

	return q * d > a ? q - 1 : q;
}

/*
 * A step: the estimate (Algorithm 2) of the gradient at theta from the
 * step's "members" users, "planned" expected, with boxes of half-width
 * "half" around "centre", released with noise into "estimate".  Returns
 * the number of users whose gradient left the box.
 *
 * In units of s / BOX_STEPS (L) a user's box-projected gradient minus the
 * centre is an integer vector a_i with |a_ij| <= L.  With B = planned, k =
 * trimmed users per side and D = B - 2k, per coordinate j:
 *		S = sum_i a_ij,		M = the sum of the a_ij of ranks k+1 .. n-k,
 *		Y = clamp(D S, B M - L B D, B M + L B D),
 * that is B D times the mean S / B projected onto the trimmed mean M / D
 * plus or minus L.  Adding a user adds its a_uj to S and one value of
 * [-L, L] to the middle ranks (whatever the ranks of the others), so S
 * moves by at most L, M by at most L, and Y, which is 1-Lipschitz in
 * (D S, B M) in the max norm, by at most L B.  The release
 * R = floor(lambda Y / (L B)) moves by at most lambda per coordinate, so by
 * at most sqrt(w) lambda <= K in l2: the Gaussian noise of gaussvec.c.
 * All in exact integer arithmetic (below 2^101 for up to 2^40 users), so
 * no rounding of the data's floating-point values meets the noise.
 */
static int64
robust_step(const RobustPlan *plan, const Assignment *batch, int64 members,
			int64 planned, double half, const double *theta,
			const double *centre, RobustWork *work, double *estimate)
{
	const SgdProblem *problem = plan->problem;
	int			width = plan->width;
	double		clip = problem->options.gradient_clip;
	int64		trimmed = (int64) floor(planned * TRIM_FRACTION);
	int64		kept = planned - 2 * trimmed;
	int128		scale = (int128) BOX_STEPS * planned;
	int64		lambda = plan->output_steps;
	int64		outside = 0;

	for (int64 i = 0; i < members; i++)
	{
		bool		left = false;

		uldp_sgd_user_gradient(problem, &problem->users[batch[i].user], theta, work->gradient);
		uldp_clip_to_ball(work->gradient, width, clip);
		for (int j = 0; j < width; j++)
		{
			double		offset = work->gradient[j] - centre[j];

			if (fabs(offset) > half)
			{
				offset = offset > 0 ? half : -half;
				left = true;
			}
			/* |offset / half| <= 1 exactly, so |a_ij| <= L */
			work->boxed[i * width + j] = (int64) rint(offset / half * (double) BOX_STEPS);
		}
		outside += left;
	}
	for (int j = 0; j < width; j++)
	{
		int128		sum = 0;
		int128		middle = 0;
		int128		projected;

		for (int64 i = 0; i < members; i++)
		{
			sum += work->boxed[i * width + j];
			work->column[i] = (uint64) (work->boxed[i * width + j] + BOX_STEPS);
		}
		uldp_sort_records(work->column, work->buffer, members, sizeof(uint64));
		for (int64 i = trimmed; i < members - trimmed; i++)
			middle += (int64) work->column[i] - BOX_STEPS;
		projected = Min(Max(sum * kept, middle * planned - scale * kept),
						middle * planned + scale * kept);
		/* floor(lambda Y / (L B)) without overflowing */
		work->release[j] = floor_div(projected, scale) * lambda +
			(projected - floor_div(projected, scale) * scale) * lambda / scale;
	}
	for (int j = 0; j < width; j++)
		work->release[j] += uldp_gaussian_grid_noise();

	/*
	 * Post-processing: back to a gradient, and into the ball of G where
	 * every user's gradient lies (it also keeps the next centre bounded).
	 */
	for (int j = 0; j < width; j++)
		estimate[j] = centre[j] + half * ((double) work->release[j] / ((double) lambda * kept));
	uldp_clip_to_ball(estimate, width, clip);
	return outside;
}

/*
 * The calibration: twice the private median, over the batch, of the
 * l-infinity distance of each user's clipped gradient at theta to the
 * centre (one selection with rho_steps; each distance is one user's), on a
 * grid of a quarter of a binade over [0, widest].
 */
static double
calibrate(const RobustPlan *plan, const Assignment *batch, int64 members,
		  const double *theta, const double *centre, RobustWork *work)
{
	const SgdProblem *problem = plan->problem;
	double		floor = plan->widest * BOX_RESOLUTION;
	double		median;

	for (int64 i = 0; i < members; i++)
	{
		double		distance = 0;

		uldp_sgd_user_gradient(problem, &problem->users[batch[i].user], theta, work->gradient);
		uldp_clip_to_ball(work->gradient, plan->width, problem->options.gradient_clip);
		for (int j = 0; j < plan->width; j++)
			distance = Max(distance, fabs(work->gradient[j] - centre[j]));
		work->distances[i] = Min(distance, plan->widest);
	}
	median = uldp_private_scale(work->distances, members, floor, plan->widest, plan->rho_steps);
	return Min(Max(BOX_PER_MEDIAN * median, floor), plan->widest);
}

/* Draws, for the users of assignment[0 .. n), keys below "keys", and sorts them. */
static void
draw_keys(Assignment *assignment, int64 n, uint64 keys, Assignment *spare)
{
	for (int64 i = 0; i < n; i++)
		assignment[i].key = uldp_uniform_u64(keys);
	uldp_sort_records(assignment, spare, n, sizeof(Assignment));
}

/* the end of the run of entries with "key" from "start" */
static int64
run_end(const Assignment *assignment, int64 start, int64 end, uint64 key)
{
	while (start < end && assignment[start].key == key)
		start++;
	return start;
}

static void
robust_check_budget(const SgdOptions *options, int width, double epsilon,
					double delta, double rho_count, double rho_steps)
{
	static const char *hint = "Raise epsilon or delta, or use fewer features.";

	/* the least rho_steps: with the test; lambda >= 1 */
	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_count, rho_steps, hint);
	if (output_steps(rho_steps * (1 - TEST_SHARE), width) < 1)
		uldp_refuse_budget("user_dp_sgd", epsilon, delta, hint);
}

/*
 * per user: its assignment (twice, for sorting), its box-projected
 * gradient and the sorting of a coordinate, its calibration distance and
 * the private median's keys (twice)
 */
static Size
robust_bytes_per_row(int width)
{
	return 2 * sizeof(Assignment) + width * sizeof(int64) + 2 * sizeof(uint64) +
		sizeof(double) + 2 * sizeof(uint64);
}

static void
robust_fit(const SgdProblem *problem, const UldpUserCount *count, double rho,
		   double *theta, SgdReport *report)
{
	RobustPlan	plan = robust_plan(problem, count, rho);
	const SgdOptions *options = &problem->options;
	int			width = plan.width;
	int			phases = plan.phases;
	int64		n = problem->nusers;
	int64		size = Max(n, 1);
	RobustWork	work;
	double	   *centre = palloc0(width * sizeof(double));
	double	   *estimate = palloc(width * sizeof(double));
	double	   *average = palloc(width * sizeof(double));
	double	   *average_estimate = palloc(width * sizeof(double));
	int64	   *outside = palloc0(phases * sizeof(int64));
	int64	   *breaks = palloc0(phases * sizeof(int64));
	double		step = uldp_sgd_step(problem, 0);
	double		half = isinf(options->tau) ? plan.widest : options->tau;
	int64		first = 0;

	work.assignment = palloc_extended(size * sizeof(Assignment), MCXT_ALLOC_HUGE);
	work.spare = palloc_extended(size * sizeof(Assignment), MCXT_ALLOC_HUGE);
	work.gradient = palloc(width * sizeof(double));
	work.boxed = palloc_extended(size * width * sizeof(int64), MCXT_ALLOC_HUGE);
	work.column = palloc_extended(size * sizeof(uint64), MCXT_ALLOC_HUGE);
	work.buffer = palloc_extended(size * sizeof(uint64), MCXT_ALLOC_HUGE);
	work.distances = palloc_extended(size * sizeof(double), MCXT_ALLOC_HUGE);
	work.release = palloc(width * sizeof(int128));

	for (int64 i = 0; i < n; i++)
	{
		work.assignment[i].key = uldp_sgd_random_phase(phases) - 1;
		work.assignment[i].user = i;
	}
	uldp_sort_records(work.assignment, work.spare, n, sizeof(Assignment));

	report->steps = 0;
	for (int phase = 0; phase < phases; phase++)
	{
		double		share = phase_share(phase + 1, phases);
		double		phase_users = plan.users * share;
		int64		last = run_end(work.assignment, first, n, phase);
		uint64		calibration_key = 0;
		int64		calibrated;
		double		step_users;
		int			steps;
		int64		next;
		int			averaged = 0;

		/*
		 * calibration: key 0 with probability p, from a lower bound on the
		 * phase's users (the count's), in units of 2^-32
		 */
		if (calibrates(&plan, count, phase + 1, phases))
			calibration_key = (uint64) ceil(plan.calibration_users / (count->at_least * share) * 0x1p32);
		for (int64 i = first; i < last; i++)
			work.assignment[i].key = uldp_uniform_u64(UINT64CONST(1) << 32) < calibration_key ? 0 : 1;
		uldp_sort_records(&work.assignment[first], work.spare, last - first, sizeof(Assignment));
		calibrated = run_end(work.assignment, first, last, 0);
		if (calibration_key > 0)
			half = calibrate(&plan, &work.assignment[first], calibrated - first, theta, centre, &work);

		/* the steps, from the box just released */
		step_users = phase_users * (1 - (double) calibration_key * 0x1p-32);
		steps = steps_for(&plan, step_users, half);
		breaks[phase] = (int64) ceil(BREAK_POINT * step_users);
		draw_keys(&work.assignment[calibrated], last - calibrated, steps, work.spare);

		memset(average, 0, width * sizeof(double));
		memset(average_estimate, 0, width * sizeof(double));
		next = calibrated;
		for (int t = 0; t < steps; t++)
		{
			int64		begin = next;

			next = run_end(work.assignment, begin, last, t);
			outside[phase] += robust_step(&plan, &work.assignment[begin], next - begin,
										  Max((int64) rint(step_users / steps), 1),
										  half, theta, centre, &work, estimate);
			for (int j = 0; j < width; j++)
				theta[j] -= step * (estimate[j] + options->l2 * theta[j]);
			uldp_clip_to_ball(theta, width, options->radius);
			if (2 * t >= steps - 1)
			{
				for (int j = 0; j < width; j++)
				{
					average[j] += theta[j];
					average_estimate[j] += estimate[j];
				}
				averaged++;
			}
			memcpy(centre, estimate, width * sizeof(double));
		}
		/* the phase's model, and the centre of the next phase's boxes */
		for (int j = 0; j < width; j++)
		{
			theta[j] = average[j] / averaged;
			centre[j] = average_estimate[j] / averaged;
		}
		step *= PHASE_STEP_DECAY;
		report->steps += steps;
		first = last;
	}

	report->phases = phases;
	report->passes = 1;
	report->gradient_evaluations = Max(rint(count->noisy), 0);
	if (plan.epsilon_test > 0)
	{
		UldpAboveThreshold test;

		uldp_above_threshold_start(&test, 0, 1, plan.epsilon_test);
		for (int phase = 0; phase < phases && !report->test_failed; phase++)
			report->test_failed = uldp_above_threshold(&test, outside[phase] - breaks[phase]);
	}
	if (report->test_failed)
		memset(theta, 0, width * sizeof(double));
}

const SgdMethod uldp_sgd_robust = {
	"robust",
	0,
	0,
	robust_check_budget,
	robust_bytes_per_row,
	robust_fit
};

/*-------------------------------------------------------------------------
 *
 * sgdoutlier.c
 *	  user_dp_sgd's "outlier_removal" method: phased one-pass SGD with
 *	  outlier iterate removal and output perturbation (Lowy, Liu and Asi
 *	  2024, Algorithm 1).
 *
 * Every user draws, independently of the data, one of K phases and one of
 * the C groups of its phase; the users of a group, and each user's rows, are
 * taken in a uniformly random order.  Phase k, from the previous phase's
 * model x (0 at first):
 *	1. every group with users runs one pass of projected SGD over its
 *	   users' rows from x, with step eta / 2^k (each row's gradient clipped
 *	   to gradient_clip, the l2 penalty, the ball of radius R); its point is
 *	   the average of its iterates over the second half of its rows;
 *	2. a radius r: RADIUS_PER_MEDIAN times a rung of a ladder of radii,
 *	   chosen by the exponential mechanism to split the pairs of points into
 *	   those within it and those beyond as evenly as it can (the median
 *	   distance between two groups' points); the ladder and r end at the
 *	   smaller of 2R and the paper's tau (see TAU_BOUND);
 *	3. the inlier weight W of the points at r (concentration.c: a point weighs
 *	   between 0 and 1, 1 when all others lie within r), with discrete
 *	   Gaussian noise, and its lower bound W- = noisy W - m (m a tail bound
 *	   of the noise); below a public floor the test fails: the fit stops and
 *	   releases 0, its initial point, as the paper does (also when the
 *	   noise of step 4 would spread the model over the ball);
 *	4. the inlier mean at r, which moves by at most 8 r / W- when one
 *	   group's point does, with Gaussian noise for that sensitivity (output
 *	   perturbation, gaussvec.c), projected onto the ball: the next phase's
 *	   model.
 * The model is the last phase's.  Each row's gradient is evaluated once.
 *
 * Plan, from public parameters and released values only (doc/privacy.md
 * says how it departs from the paper's):
 *	- users per group: about ROWS_PER_GROUP rows, from the private median of
 *	  the users' row counts (ROWS_SHARE of rho), or 1 when the noisy count
 *	  is too small for it;
 *	- phases: the phases option, lowered until each phase expects enough
 *	  groups with users (the noisy count over K C) for the weight's margin m
 *	  to be at most a quarter of them; failing that, one phase with smaller
 *	  groups;
 *	- groups: at most MAX_GROUPS, and fewer for wide models, to bound the
 *	  C^2 distances.
 *
 * Privacy (doc/privacy.md proves it).  Adding or removing a user moves,
 * adds or removes the point of its group only, in its phase only, whatever
 * the other users and the randomness: by parallel composition every phase
 * may spend all of what the rows per user leave, rho': the radius
 * RADIUS_SHARE rho' (its scores have sensitivity 1 and are not monotone),
 * the weight WEIGHT_SHARE rho' (sensitivity 3), the mean the rest.  The
 * mean's noise is calibrated for the pair of neighbours unless W- exceeds
 * both of their weights, which happens with probability at most
 * problem->test_delta, from TESTS_DELTA_SHARE of delta (sgdmethod.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "concentration.h"
#include "gaussvec.h"
#include "noise.h"
#include "radixsort.h"
#include "random.h"
#include "sgdmethod.h"
#include "vecstate.h"

/*
 * A group's SGD needs rows to move: groups are planned to hold about this
 * many (at 10 or 100 rows per user, fewer made the phases' models lag
 * behind, more left too few groups).
 */
#define ROWS_PER_GROUP 64
/* the typical rows per user: its share of rho, domain and reliability */
#define ROWS_SHARE 0.0625
#define ROWS_CEILING 0x1p40
#define ROWS_FAILURE 1e-3
/* at most this many phases by default (the plan may take fewer) */
#define DEFAULT_PHASES 3
/* the share of delta for the tests, and the shares of rho in a phase */
#define TESTS_DELTA_SHARE 0.1
#define RADIUS_SHARE 0.1
#define WEIGHT_SHARE 0.15
#define MEAN_SHARE (1 - RADIUS_SHARE - WEIGHT_SHARE)
/* the ladder of radii: 2R 2^(-k / RUNGS_PER_BINADE), BINADES binades */
#define RUNGS_PER_BINADE 4
#define BINADES 40
#define RUNGS (BINADES * RUNGS_PER_BINADE + 1)
/*
 * The radius is this many times the median distance between two groups'
 * points: far enough for most points to see most others when they are
 * concentrated (at 1.5, groups of a dozen rows saw three quarters of the
 * others and failed the test; the noise grows as r / W, no faster).  It is
 * at most TAU_BOUND eta G sqrt(T), the paper's tau_i (Lemma 2.3: two runs
 * of T steps of size eta on i.i.d. data, gradients bounded by G, end within
 * eta G sqrt(T log(d T / zeta)) up to a constant), with the planned rows of
 * a group for T: points spread wider than that do not come from similar
 * users, and at any radius they would concentrate.
 */
#define RADIUS_PER_MEDIAN 2.0
#define TAU_BOUND 4
/*
 * The groups of a phase: at most MAX_GROUPS, and at most PAIR_WORK / width
 * squared (the coordinates of their pairwise distances, twice).
 */
#define MAX_GROUPS 4096
#define PAIR_WORK 0x1p33
/*
 * A phase plans for the noisy inlier weight's margin to be at most
 * 1 / MARGIN_GROUPS of the groups with users it expects, and its test
 * fails below 1 / FAILED_WEIGHT of them (and below 4 > 3, concentration.c).
 */
#define MARGIN_GROUPS 4
#define FAILED_WEIGHT 2
/*
 * The test also fails when the model's noise would have an expected norm
 * above this share of the radius (at 1000 users a model that passed the
 * weight's floor with a wide radius could be worse than the initial point).
 */
#define NOISE_FAILURE 0.5

/* one user in the draw: its phase and group, and itself */
typedef struct Member
{
	uint64		key;			/* (phase C + group) 2^32 */
	int64		user;
} Member;

/* what a fit plans from public parameters and released values */
typedef struct OutlierPlan
{
	double		rho;			/* of every phase */
	int			phases;
	int64		groups;			/* C, in every phase */
	double		group_rows;		/* rows of a group, as planned */
	double		least_weight;	/* the test fails below it */
	double		weight_variance;	/* of the inlier weight's noise */
	double		margin;			/* the noise exceeds it with probability
								 * test_delta at most, in points */
} OutlierPlan;


static double
weight_variance(double rho)
{
	return (double) ULDP_GROUP_INLIER_WEIGHT_SENSITIVITY * ULDP_GROUP_INLIER_WEIGHT_SENSITIVITY /
		(2 * WEIGHT_SHARE * rho);
}

/*
 * The tail bound of the weight's noise, in points: the discrete Gaussian of
 * variance s^2 is s^2-subgaussian (Canonne, Kamath and Steinke 2020,
 * Corollary 9), so it exceeds s sqrt(2 ln(1 / test_delta)) with probability
 * at most test_delta; the factor covers the ulps of sqrt and log.
 */
static double
weight_margin(double variance, double test_delta)
{
	return sqrt(uldp_discrete_gaussian_variance(variance) * 2 * log(1 / test_delta)) *
		(1 + 0x1p-40) / ULDP_GROUP_INLIER_WEIGHT_UNIT;
}

static int64
max_groups(int width)
{
	return Max(2, Min(MAX_GROUPS, (int64) floor(sqrt(PAIR_WORK / width))));
}

/* the expected number of groups with users when "users" draw among C */
static double
groups_with_users(double groups, double users)
{
	return groups * -expm1(-users / groups);
}

/*
 * The typical number of rows per user, with rho: the private median of the
 * users' row counts (at least 1), when the noisy count shows enough users
 * for it to land in their central half but with probability ROWS_FAILURE;
 * else 0, unknown, and it costs nothing: a decision from the count alone.
 */
static double
typical_rows(const SgdProblem *problem, const UldpUserCount *count, double rho)
{
	double	   *rows;
	double		median;

	if (uldp_private_scale_miss(count->at_least, 1, ROWS_CEILING, rho) > ROWS_FAILURE)
		return 0;
	rows = palloc_extended(Max(problem->nusers, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < problem->nusers; i++)
		rows[i] = (double) problem->users[i].count;
	median = uldp_private_scale(rows, problem->nusers, 1, ROWS_CEILING, rho);
	pfree(rows);
	/* paid for: at least one row, so that the plan counts the share spent
	 * (the grid's key 0 can be drawn) */
	return Max(median, 1);
}

/* The plan of a fit (see the top of the file). */
static OutlierPlan
plan_fit(const SgdProblem *problem, const UldpUserCount *count, double rho)
{
	OutlierPlan plan;
	double		users = Max(count->noisy, 0);
	double		rows = typical_rows(problem, count, ROWS_SHARE * rho);
	double		group_users = rows > 0 ? ROWS_PER_GROUP / rows : 1;
	int64		most = max_groups(problem->dim + 1);

	plan.rho = rows > 0 ? (1 - ROWS_SHARE) * rho : rho;
	plan.weight_variance = weight_variance(plan.rho);
	plan.margin = weight_margin(plan.weight_variance, problem->test_delta);
	for (plan.phases = problem->options.phases; plan.phases > 0; plan.phases--)
	{
		plan.groups = (int64) Max(2, Min(most, floor(users / plan.phases / group_users)));
		if (groups_with_users(plan.groups, users / plan.phases) >= MARGIN_GROUPS * plan.margin)
			break;
	}
	if (plan.phases == 0)
	{
		plan.phases = 1;
		while (plan.groups < most &&
			   groups_with_users(plan.groups, users) < MARGIN_GROUPS * plan.margin)
			plan.groups = Min(most, 2 * plan.groups);
	}
	plan.least_weight = Max(4, groups_with_users(plan.groups, users / plan.phases) /
							FAILED_WEIGHT);
	plan.group_rows = users / plan.phases / plan.groups * Max(rows, 1);
	return plan;
}

/*
 * The radius of step 2, at most top, from the ladder of radii below top,
 * with RADIUS_SHARE of rho: rho-zCDP as the exponential mechanism with
 * parameter sqrt(2 rho) over scores of sensitivity 1 that a moved point may
 * raise or lower (2 sqrt(2 rho) bounded range).
 */
static double
choose_radius(const double *points, int64 npoints, int width, int64 groups,
			  double top, double rho)
{
	int64		pairs[RUNGS];
	long double scores[RUNGS];
	long double half = (long double) npoints * (npoints - 1) / 4;
	UldpCandidateWalk walk = {scores, RUNGS, 0};
	UldpSegmentSource source = uldp_candidate_walk_source(&walk);
	uint64		rung;

	uldp_pairs_within_ladder(points, npoints, width, top, RUNGS_PER_BINADE, RUNGS, pairs);
	/*
	 * Rung k: how far its pairs within are from half of the c (c - 1) / 2
	 * pairs of the c points, over C - 1: a point moved changes the pairs
	 * within by at most c - 1 <= C - 1, one added (c < C) by at most c and
	 * half of the pairs by c / 2, so the difference by at most c / 2.
	 */
	for (int k = 0; k < RUNGS; k++)
		scores[k] = fabsl(pairs[k] - half) / (groups - 1);
	rung = uldp_exponential_select(&source, sqrt(2 * RADIUS_SHARE * rho));
	return Min(RADIUS_PER_MEDIAN * top * exp2(-(double) rung / RUNGS_PER_BINADE), top);
}

/*
 * Shuffles a user's rows in place (Fisher-Yates from the secure source), so
 * that one-pass SGD sees them in a uniformly random order, not in the order
 * they arrived; "spare" holds one row.
 */
static void
shuffle_rows(const UldpUserRows *user, int width, double *spare)
{
	double	   *rows = (double *) user->rows;
	Size		size = width * sizeof(double);

	for (int64 r = user->count - 1; r > 0; r--)
	{
		int64		k = (int64) uldp_uniform_u64((uint64) r + 1);

		memcpy(spare, &rows[r * width], size);
		memcpy(&rows[r * width], &rows[k * width], size);
		memcpy(&rows[k * width], spare, size);
	}
}

/*
 * out <- one pass of projected SGD over the rows of the "nmembers" users,
 * in their (random) order, each user's rows shuffled, from start: the
 * average of the iterates over the second half of the rows (the paper averages all of them, which left the model far
 * behind when a group has few rows).
 */
static void
group_iterate(const SgdProblem *problem, const Member *members, int64 nmembers,
			  const double *start, double step, double *out)
{
	int			width = problem->dim + 1;
	const SgdOptions *options = &problem->options;
	double	   *theta = palloc(width * sizeof(double));
	double	   *spare = palloc(width * sizeof(double));
	long double *sum = palloc0(width * sizeof(long double));
	int64		rows = 0;
	int64		done = 0;

	for (int64 i = 0; i < nmembers; i++)
		rows += problem->users[members[i].user].count;
	memcpy(theta, start, width * sizeof(double));
	for (int64 i = 0; i < nmembers; i++)
	{
		const UldpUserRows *user = &problem->users[members[i].user];

		shuffle_rows(user, width, spare);
		for (int64 r = 0; r < user->count; r++)
		{
			const double *row = &user->rows[r * width];
			double		residual = uldp_sgd_row_residual(problem, row, theta);
			double		features = uldp_l2_norm(row, problem->dim);
			/* the gradient is residual (x, 1): its norm, then its clip */
			double		norm = fabs(residual) * sqrt(features * features + 1);
			double		scale = residual * (norm > options->gradient_clip ?
											options->gradient_clip / norm : 1);

			for (int j = 0; j < problem->dim; j++)
				theta[j] -= step * (scale * row[j] + options->l2 * theta[j]);
			theta[problem->dim] -= step * (scale + options->l2 * theta[problem->dim]);
			uldp_clip_to_ball(theta, width, options->radius);
			if (2 * ++done > rows)
				for (int j = 0; j < width; j++)
					sum[j] += theta[j];
		}
	}
	/* every user has a row */
	Assert(rows > 0);
	for (int j = 0; j < width; j++)
		out[j] = (double) (sum[j] / (rows - rows / 2));
	pfree(theta);
	pfree(spare);
	pfree(sum);
}

static double
outlier_tests_delta_share(const SgdOptions *options)
{
	return TESTS_DELTA_SHARE;
}

static void
outlier_check_budget(const SgdOptions *options, int width, double epsilon,
					 double delta, double rho_count, double rho_steps)
{
	static const char *hint = "Raise epsilon or delta.";
	/* the least a phase gets: the rows per user may be paid for */
	double		rho = (1 - ROWS_SHARE) * rho_steps;

	uldp_rho_validate("user_dp_sgd", epsilon, delta, rho_count, MEAN_SHARE * rho, hint);
	if (!uldp_gaussian_perturb_supports(width, MEAN_SHARE * rho) ||
		!uldp_discrete_gaussian_supports(weight_variance(rho)) ||
		sqrt(2 * RADIUS_SHARE * rho) < 0x1p-29)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %g is too small for user_dp_sgd with delta %g", epsilon, delta),
				 errhint("%s", hint)));
}

/*
 * per user: its row count, its draw (and the sort's buffer), its group's
 * point and neighbour count
 */
static Size
outlier_bytes_per_row(int width)
{
	return sizeof(double) + 2 * sizeof(Member) + width * sizeof(double) +
		sizeof(int64);
}

static void
outlier_fit(const SgdProblem *problem, const UldpUserCount *count, double rho,
			double *theta, SgdReport *report)
{
	int			width = problem->dim + 1;
	double		radius = problem->options.radius;
	double		step = uldp_sgd_step(problem, 0);
	OutlierPlan plan = plan_fit(problem, count, rho);
	int64		nusers = problem->nusers;
	Member	   *members = palloc_extended(Max(nusers, 1) * sizeof(Member), MCXT_ALLOC_HUGE);
	Member	   *buffer = palloc_extended(Max(nusers, 1) * sizeof(Member), MCXT_ALLOC_HUGE);
	double	   *points = palloc_extended(Max(nusers, 1) * width * sizeof(double), MCXT_ALLOC_HUGE);
	int64	   *counts = palloc_extended(Max(nusers, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	double	   *start = palloc0(width * sizeof(double));
	int64		next = 0;

	for (int64 i = 0; i < nusers; i++)
	{
		members[i].key = uldp_uniform_u64((uint64) plan.phases * plan.groups) << 32;
		members[i].user = i;
	}
	/*
	 * Users in a uniformly random order within each group: shuffled, then
	 * sorted by group with a stable sort.  So a group's point depends on its
	 * users' rows and the secure source only, not on the order in which
	 * rows arrived, which other users' presence can change (parallel or
	 * synchronized scans).
	 */
	for (int64 i = nusers - 1; i > 0; i--)
	{
		int64		j = (int64) uldp_uniform_u64((uint64) i + 1);
		Member		swap = members[i];

		members[i] = members[j];
		members[j] = swap;
	}
	uldp_sort_records(members, buffer, nusers, sizeof(Member));

	report->phases = plan.phases;
	report->steps = plan.phases;
	report->passes = 1;
	report->gradient_evaluations = Max(rint(count->noisy), 0);
	report->test_failed = false;
	for (int phase = 0; phase < plan.phases; phase++)
	{
		int64		npoints = 0;
		double		r;
		double		weight_low;
		double		sensitivity;

		/* 1. the points of the groups with users */
		while (next < nusers && (members[next].key >> 32) / plan.groups == phase)
		{
			int64		first = next;

			while (next < nusers && members[next].key >> 32 == members[first].key >> 32)
				next++;
			group_iterate(problem, &members[first], next - first, start,
						  ldexp(step, -phase), &points[npoints++ * width]);
		}

		/* 2. the radius; 3. the inlier weight and the test */
		r = choose_radius(points, npoints, width, plan.groups,
						  Min(2 * radius, TAU_BOUND * ldexp(step, -phase) *
							  problem->options.gradient_clip * sqrt(plan.group_rows)),
						  plan.rho);
		weight_low = (double) (uldp_group_inlier_mean(points, npoints, width, r, radius,
													  counts, theta) +
							   uldp_gaussian_noise(plan.weight_variance)) /
			ULDP_GROUP_INLIER_WEIGHT_UNIT - plan.margin;
		if (weight_low < plan.least_weight)
		{
			report->test_failed = true;
			break;
		}

		/*
		 * 4. the inlier mean, perturbed; a model whose noise alone would
		 * spread it over the ball is not worth releasing either
		 */
		sensitivity = uldp_group_inlier_mean_sensitivity(r, radius, width, weight_low);
		if (uldp_gaussian_perturb_sd(width, sensitivity, radius, MEAN_SHARE * plan.rho) *
			sqrt(width) > NOISE_FAILURE * radius)
		{
			report->test_failed = true;
			break;
		}
		uldp_gaussian_perturb(theta, width, sensitivity, radius, MEAN_SHARE * plan.rho);
		uldp_clip_to_ball(theta, width, radius);
		memcpy(start, theta, width * sizeof(double));
	}
	if (report->test_failed)
		memset(theta, 0, width * sizeof(double));
	pfree(members);
	pfree(buffer);
	pfree(points);
	pfree(counts);
	pfree(start);
}

const SgdMethod uldp_sgd_outlier_removal = {
	"outlier_removal",
	0,							/* iterations: not used */
	DEFAULT_PHASES,
	outlier_check_budget,
	outlier_bytes_per_row,
	outlier_fit,
	outlier_tests_delta_share
};

/*-------------------------------------------------------------------------
 *
 * vecrelease.c
 *	  The release of user_dp_mean on vectors, and what it shares with
 *	  user_dp_sgd.
 *
 * Privacy model: as for every uldp release, neighbouring tables differ by
 * all the rows of one user (added or removed), and the number of users is
 * private.  The dimension of the vectors is public, like the column's type
 * (dimension.c).  The release is charged (epsilon, delta) with its
 * statement, before any row is read (statement.c); its mechanisms share
 * rho = uldp_zcdp_rho(epsilon, delta).
 *
 * Too few users.  A release over too few users would be mostly noise, and
 * one over none must look like one over a single user.  So every vector
 * release first
 * draws a noisy count of the users (discrete Gaussian, rho / 8) and
 * releases an empty array unless the noisy count reaches
 * T = 1 + sigma sqrt(2 ln(1 / delta)).  For one user against none the
 * vector appears with probability at most delta (the discrete Gaussian is
 * sigma^2-subgaussian), and otherwise the decision is post-processing of
 * the noisy count: the release is (epsilon, delta)-DP for every pair of
 * neighbours.
 *
 * Small n.  The private selections of a release (a private radius or
 * scale, the per-coordinate ranges) land on the data only once n epsilon
 * is a few dozen; below, they pick garbage.  So each is used only when the
 * noisy count shows enough users for it to miss with probability at most
 * ULDP_SELECTION_FAILURE whatever the data (uldp_selection_miss, with the
 * count's own error: UldpUserCount.at_least; user_dp_sgd's scales allow
 * more, see sgd.c).  That decision is
 * post-processing of the noisy count and of public parameters, and the
 * budget it saves goes to the mechanisms that follow (doc/privacy.md).
 *
 * user_dp_mean(value float8[], user_id, epsilon, delta [, radius [, tau]])
 *	- rows are clipped to the l2 ball of radius and averaged per user;
 *	  without radius, the user averages are clipped to a private radius:
 *	  twice the private median of their norms (rho / 8), and nothing
 *	  ("{}") is released when there are too few users for it: there is no
 *	  public scale to fall back to;
 *	- the rest of rho goes to WinsorizedMeanHighD (highdim.c), with tau
 *	  given or chosen privately.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "accountant.h"
#include "budget.h"
#include "highdim.h"
#include "noise.h"
#include "params.h"
#include "range.h"
#include "statement.h"
#include "vecrelease.h"
#include "vecstate.h"

/* share of rho for the noisy count of users, and for a private scale */
#define COUNT_SHARE 0.125
#define SCALE_SHARE 0.125
/* a private radius is this many times the median norm */
#define RADIUS_PER_MEDIAN 2.0
/* the private radius's search domain: smaller data counts as zero */
#define SCALE_FLOOR 1e-250
/*
 * Mantissa bits of the grid of private scales: a quarter of a binade.  A
 * scale within 25% is as good as an exact one (it is multiplied by a
 * safety factor anyway), and the few keys (about 4 per binade) let the
 * median land among the data with few users.
 */
#define SCALE_BITS 2

PG_FUNCTION_INFO_V1(uldp_vector_mean_finalfn);

/* The rho that the mechanisms of a release charged (epsilon, delta) may share. */
double
uldp_release_rho(double epsilon, double delta)
{
	return uldp_zcdp_rho(epsilon * ULDP_SPEND_MARGIN, delta * ULDP_SPEND_MARGIN);
}

/*
 * The public dimension of a vector release (see dimension.c), or an error
 * when the statement does not fix it; "how" says how else to give it.
 */
int
uldp_vector_dimension(const char *function, int dimension, const char *how)
{
	if (dimension == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the dimension of the vectors of %s must be public", function),
				 errdetail("It decides the release, so it is read from the query before any row, never from the rows."),
				 errhint("Declare CHECK (cardinality(column) = dimension) on the vector column, or build the vector with ARRAY[...]%s.",
						 how)));
	if (dimension > ULDP_MAX_DIMENSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s takes vectors of at most %d elements, not %d",
						function, ULDP_MAX_DIMENSION, dimension),
				 errhint("Project the vectors to fewer dimensions.")));
	return dimension;
}

static void vector_mean_validate(const UldpVectorParams *params);

/*
 * The plan of user_dp_mean on vectors: (epsilon, delta [, radius [, tau]])
 * validated, also against what its mechanisms can honour, and the public
 * dimension.
 */
void
uldp_vector_mean_plan(const UldpReleaseCall *call, UldpReleasePlan *plan)
{
	UldpVectorParams params;

	uldp_vector_params_set(&params, call->nparams, call->params, call->nulls);
	vector_mean_validate(&params);
	plan->epsilon = params.epsilon;
	plan->delta = params.delta;
	plan->dimension = uldp_vector_dimension(call->function, call->dimension, "");
	/* the state, each user's mean and the mechanism's working memory */
	plan->bytes_per_row = uldp_vec_state_bytes_per_row(false, plan->dimension) +
		(plan->dimension + 1) * sizeof(double) +
		uldp_highdim_bytes_per_point(plan->dimension);
	plan->fixed_bytes = uldp_vec_state_fixed_bytes(false, plan->dimension) +
		uldp_highdim_fixed_bytes(plan->dimension);
}

static double
count_variance(double rho)
{
	return 1 / (2 * rho);
}

/* the standard deviation of the noise the sampler adds to a count */
static double
count_sigma(double rho)
{
	return sqrt(uldp_discrete_gaussian_variance(count_variance(rho)));
}

/*
 * n plus discrete Gaussian noise: rho-zCDP (sensitivity 1); and the lower
 * bound on n it gives: the noise is sigma^2-subgaussian (CKS, Corollary 9),
 * so it exceeds sigma sqrt(2 ln(1 / b)) with probability at most b.
 */
UldpUserCount
uldp_noisy_count(int64 n, double rho)
{
	UldpUserCount count;

	count.noisy = (double) (n + uldp_gaussian_noise(count_variance(rho)));
	count.at_least = count.noisy -
		count_sigma(rho) * sqrt(2 * log(1 / ULDP_SELECTION_FAILURE)) * (1 + 0x1p-40);
	return count;
}

/*
 * Whether a noisy count drawn with "rho" reaches the threshold (see above).
 * The tail bound holds for the variance the sampler actually used, which
 * is the requested one rounded up; the factor 1 + 2^-40 covers the few
 * ulps of error of sqrt and log.
 */
bool
uldp_enough_users(const UldpUserCount *count, double rho, double delta)
{
	return count->noisy >= 1 + count_sigma(rho) * sqrt(2 * log(1 / delta)) * (1 + 0x1p-40);
}

/*
 * Refuses, before the charge, the (epsilon, delta) of a release whose noisy
 * count of users gets rho_count and whose high-dimensional means get at
 * least rho_highdim each: the sampler must support the count's variance,
 * and the means need at least one grid step (highdim.c).
 */
void
uldp_rho_validate(const char *function, double epsilon, double delta,
				  double rho_count, double rho_highdim, const char *hint)
{
	if (!uldp_discrete_gaussian_supports(count_variance(rho_count)) ||
		!uldp_highdim_rho_suffices(rho_highdim))
		uldp_refuse_budget(function, epsilon, delta, hint);
}

/* The error of a budget that a release's mechanisms cannot honour. */
void
uldp_refuse_budget(const char *function, double epsilon, double delta,
				   const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("epsilon %g is too small for %s with delta %g", epsilon, function, delta),
			 errhint("%s", hint)));
}

/*
 * Refuses, before the charge, the parameters of user_dp_mean on vectors
 * that its mechanisms cannot honour whatever the data (see
 * uldp_rho_validate; and a radius too small for the fixed-point grid).
 */
static void
vector_mean_validate(const UldpVectorParams *params)
{
	double		rho = uldp_release_rho(params->epsilon, params->delta);

	if (params->has_radius && params->radius < ULDP_HIGHDIM_MIN_RADIUS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("radius %g is too small for user_dp_mean", params->radius),
				 errhint("radius must be at least %g; rescale the vectors, or omit radius to let uldp choose it privately.",
						 ULDP_HIGHDIM_MIN_RADIUS)));
	uldp_rho_validate("user_dp_mean", params->epsilon, params->delta, rho * COUNT_SHARE,
					  rho * (1 - COUNT_SHARE - (params->has_radius ? 0 : SCALE_SHARE)),
					  "Raise epsilon or delta.");
}

static UldpGrid
scale_grid(double floor, double ceiling)
{
	return uldp_float_grid_bits(0, ceiling, floor, SCALE_BITS);
}

/*
 * The private median of one non-negative statistic per user (a norm, an
 * absolute label), on a grid of SCALE_BITS over the public domain
 * [0, ceiling], where values below "floor" count as 0: rho-zCDP.  The
 * domain is public: callers choose it so that everything they compute from
 * the scale stays finite.
 */
double
uldp_private_scale(const double *statistics, int64 n, double floor,
				   double ceiling, double rho)
{
	UldpGrid	grid = scale_grid(floor, ceiling);
	double		median = uldp_grid_median(statistics, n, &grid, uldp_selection_epsilon(rho));

	/* the middle of the top key may lie above the ceiling */
	return Min(median, ceiling);
}

/*
 * A bound, for every input of at least "users" users, on the probability
 * that uldp_private_scale with the same domain and rho misses the central
 * half of the users' statistics (uldp_selection_miss).  A scale below it
 * would clip most users to a fraction of their size.
 */
double
uldp_private_scale_miss(double users, double floor, double ceiling, double rho)
{
	UldpGrid	grid = scale_grid(floor, ceiling);

	return uldp_selection_miss((double) grid.domain, uldp_selection_epsilon(rho), users, 0.25);
}

/*
 * The least number of users for which uldp_private_scale_miss, with the
 * same domain and rho, is at most "failure".
 */
double
uldp_private_scale_users(double floor, double ceiling, double rho, double failure)
{
	UldpGrid	grid = scale_grid(floor, ceiling);

	return uldp_selection_users((double) grid.domain, uldp_selection_epsilon(rho), 0.25, failure);
}

static ArrayType *
float8_array(const double *values, int n)
{
	Datum	   *datums = palloc(Max(n, 1) * sizeof(Datum));

	for (int j = 0; j < n; j++)
		datums[j] = Float8GetDatum(values[j]);
	return construct_array(datums, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
						   TYPALIGN_DOUBLE);
}

Datum
uldp_vector_mean_finalfn(PG_FUNCTION_ARGS)
{
	UldpVecState *state = PG_ARGISNULL(0) ? NULL : (UldpVecState *) PG_GETARG_POINTER(0);
	UldpVectorParams params;
	Datum		values[4];
	bool		nulls[4];
	int			dim;
	double		rho;
	double		rho_rest;
	double	   *means = NULL;
	double	   *result;
	UldpUserCount count;
	double		radius;
	int64		n = 0;

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	uldp_vector_params_set(&params, uldp_release_constants(fcinfo, 2, values, nulls, 4),
						   values, nulls);
	rho = uldp_release_rho(params.epsilon, params.delta);
	dim = uldp_release_plan(fcinfo)->dimension;

	if (state != NULL)
		means = uldp_vec_user_means(state, &n, uldp_highdim_bytes_per_point(dim));
	count = uldp_noisy_count(n, rho * COUNT_SHARE);
	rho_rest = rho * (1 - COUNT_SHARE);
	if (!uldp_enough_users(&count, rho * COUNT_SHARE, params.delta * ULDP_SPEND_MARGIN))
		PG_RETURN_ARRAYTYPE_P(float8_array(NULL, 0));

	radius = params.radius;
	if (!params.has_radius)
	{
		double	   *norms;

		if (uldp_private_scale_miss(count.at_least, SCALE_FLOOR, ULDP_VECTOR_MAX_NORM,
									rho * SCALE_SHARE) > ULDP_SELECTION_FAILURE)
			PG_RETURN_ARRAYTYPE_P(float8_array(NULL, 0));
		norms = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < n; i++)
			norms[i] = Min(uldp_l2_norm(&means[i * dim], dim), ULDP_VECTOR_MAX_NORM);
		radius = uldp_private_scale(norms, n, SCALE_FLOOR, ULDP_VECTOR_MAX_NORM, rho * SCALE_SHARE);
		radius = RADIUS_PER_MEDIAN * Max(radius, SCALE_FLOOR);
		rho_rest -= rho * SCALE_SHARE;
		pfree(norms);
	}

	result = palloc(dim * sizeof(double));
	uldp_highdim_mean(means, n, dim, radius,
					  params.has_tau ? params.tau : ULDP_TAU_PRIVATE,
					  rho_rest, &count, result);
	PG_RETURN_ARRAYTYPE_P(float8_array(result, dim));
}

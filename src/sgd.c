/*-------------------------------------------------------------------------
 *
 * sgd.c
 *	  user_dp_sgd: linear and logistic regression with user-level DP, by
 *	  winsorized first-order optimization (Levy et al. 2021, Algorithm 3),
 *	  Phased ERM (Algorithm 4), one pass of robust SGD (after Ghazi et al.
 *	  2025), accelerated phased ERM (Lowy et al. 2024, Algorithm 3) or
 *	  phased SGD with outlier iterate removal (their Algorithm 1); and
 *	  uldp.predict.
 *
 * The model is theta = (weights, intercept) in R^(d+1), fit to rows
 * (x, y): features x clipped to the l2 ball of feature_radius X, then
 * extended by a constant 1 for the intercept, and labels clamped to [0, 1]
 * (logistic) or [-label_bound, label_bound] (squared).  The objective is
 * the average over users of each user's average loss (sgdproblem.c), plus
 * l2 |theta|^2 / 2, over the ball |theta| <= radius R.  Each method has its
 * own file behind sgdmethod.h: sgdwinsorized.c, sgdphased.c, sgdrobust.c,
 * sgdaccelerated.c, sgdoutlier.c.
 *
 * The default step is 1 / H, H a bound on the curvature of the average
 * loss: the largest eigenvalue of E[x x^T] (times 1/4 for logistic) is at
 * most E|x|^2 + 1, and the typical |x|^2 is the private median of the users'
 * mean squared norms when feature_radius is chosen privately, feature_radius^2
 * when it is given.
 *
 * Private scales.  The typical feature norm (label) is the private median,
 * over users, of the root mean square norm of each user's non-zero feature
 * rows (non-zero labels): clipping leaves zero rows alone, so only the
 * others say how large rows are, and one-hot or sparse features, where
 * most rows or most users are zero, keep the norm of their non-zero rows.
 * When the noisy count shows too few users for the median to land in the
 * users' central half but with probability SCALE_FAILURE (vecrelease.c),
 * or when it is zero (most users have no non-zero row), the typical norm
 * (label) is 1, that of a one-hot row (a unit label), and a scale not
 * chosen privately costs nothing: its share goes to the steps.  Every
 * default is then finite and moderate: a garbage median at small n made
 * feature_radius 1e-50 (a constant model) or radius 1e51 (squared loss).
 *
 * Privacy (doc/privacy.md proves it).  rho = uldp_zcdp_rho(epsilon, delta),
 * or of epsilon and the part of delta a method does not keep for its
 * tests (sgdmethod.h).
 * Sequentially: the noisy count of users (rho / 8, also the threshold
 * below which no model is released, see vecrelease.c), the private feature
 * radius and label bound when not given and the count allows (rho / 8
 * each); the rest, rho', goes to the method's fit, which is rho'-zCDP
 * (sgdmethod.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "accountant.h"
#include "budget.h"
#include "local/sigmoid.h"
#include "params.h"
#include "sgd.h"
#include "sgdmethod.h"
#include "vecrelease.h"
#include "vecstate.h"

#define SCALE_SHARE 0.125
/*
 * Private scales: the median over users of the root mean square feature
 * norm (or label) is the typical norm (label); feature_radius is 1.5
 * (logistic: a score is robust to shrinking outlying rows) or 2.5 (squared:
 * shrinking rows biases the slopes) times it, label_bound 3 times it.
 */
#define FEATURE_RADIUS_PER_MEDIAN(loss) ((loss) == LOSS_LOGISTIC ? 1.5 : 2.5)
#define LABEL_BOUND_PER_MEDIAN 3.0
/*
 * The typical feature norm and label when they cannot be chosen privately
 * (see above): the norm of a one-hot row, a label on the unit scale.
 */
#define FALLBACK_SCALE 1.0
/*
 * The probability, whatever the data, that the private scales are chosen
 * and one misses the users' central half.  A scale in an outer quarter is
 * still one of the users' own and costs accuracy, not sanity: where this
 * bound holds, keys exp(-e n / 4) <= 1e-3, the bound on leaving the users'
 * span, keys exp(-e n / 2), is its square over keys, below 1e-9 (and
 * below 1e-6 in all, with the count's error).  1e-6 here would need 1.5
 * times the users.
 */
#define SCALE_FAILURE 1e-3
#define SCALE_MIN ULDP_SGD_SCALE_MIN
#define SCALE_MAX ULDP_SGD_SCALE_MAX
#define DEFAULT_L2 1e-3
#define MAX_PHASES 20

/* the methods, by name; the first is the default */
static const SgdMethod *const methods[] = {
	&uldp_sgd_winsorized,
	&uldp_sgd_phased_erm,
	&uldp_sgd_robust,
	&uldp_sgd_accelerated,
	&uldp_sgd_outlier_removal
};

PG_FUNCTION_INFO_V1(uldp_sgd_finalfn);
PG_FUNCTION_INFO_V1(uldp_predict);

static void
refuse_option(const char *key, const char *problem, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid user_dp_sgd option \"%s\": %s", key, problem),
			 errhint("%s", hint)));
}

static double
option_number(const char *key, const JsonbValue *value)
{
	if (value->type != jbvNumeric)
		refuse_option(key, "not a number", "Pass a JSON number.");
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8,
											  NumericGetDatum(value->val.numeric)));
}

static double
option_scale(const char *key, const JsonbValue *value)
{
	double		number = option_number(key, value);

	if (!(number > 0 && number <= ULDP_MAX_MAGNITUDE))
		refuse_option(key, "must be a positive finite number", "See doc/functions.md for what each option means.");
	if (!(number >= SCALE_MIN && number <= SCALE_MAX))
		refuse_option(key, psprintf("must lie between %g and %g", SCALE_MIN, SCALE_MAX),
					  "Rescale the features or labels so that their scales lie well inside that range.");
	return number;
}

static int
option_count(const char *key, const JsonbValue *value, int max)
{
	double		number = option_number(key, value);

	if (!(number >= 1 && number <= max && number == floor(number)))
		refuse_option(key, psprintf("must be an integer between 1 and %d", max),
					  "See doc/functions.md for the defaults.");
	return (int) number;
}

static bool
option_is(const JsonbValue *value, const char *word)
{
	return value->type == jbvString && value->val.string.len == strlen(word) &&
		memcmp(value->val.string.val, word, value->val.string.len) == 0;
}

/* "Use "a", "b" or "c"." */
static const char *
method_hint(void)
{
	StringInfoData hint;

	initStringInfo(&hint);
	appendStringInfoString(&hint, "Use");
	for (int i = 0; i < lengthof(methods); i++)
		appendStringInfo(&hint, "%s \"%s\"",
						 i == 0 ? "" : i == lengthof(methods) - 1 ? " or" : ",",
						 methods[i]->name);
	appendStringInfoChar(&hint, '.');
	return hint.data;
}

/* The options with iterations and phases, when not given, the method's. */
static SgdOptions
method_defaults(SgdOptions options)
{
	if (options.iterations == 0)
		options.iterations = options.method->default_iterations;
	if (options.phases == 0)
		options.phases = options.method->default_phases;
	return options;
}

/* The options of a jsonb object (NULL: all defaults). */
static SgdOptions
parse_options(Jsonb *jsonb)
{
	SgdOptions	options = {0};
	JsonbIterator *it;
	JsonbValue	value;
	JsonbIteratorToken token;
	char	   *key = NULL;

	options.method = methods[0];
	options.l2 = DEFAULT_L2;
	options.tau = ULDP_TAU_NONE;
	if (jsonb == NULL)
		return method_defaults(options);
	if (!JB_ROOT_IS_OBJECT(jsonb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("user_dp_sgd options must be a JSON object"),
				 errhint("For example '{\"loss\": \"logistic\", \"iterations\": 100}'.")));

	it = JsonbIteratorInit(&jsonb->root);
	while ((token = JsonbIteratorNext(&it, &value, true)) != WJB_DONE)
	{
		if (token == WJB_KEY)
		{
			key = pnstrdup(value.val.string.val, value.val.string.len);
			continue;
		}
		if (token != WJB_VALUE)
			continue;
		if (strcmp(key, "loss") == 0)
		{
			if (option_is(&value, "squared"))
				options.loss = LOSS_SQUARED;
			else if (option_is(&value, "logistic"))
				options.loss = LOSS_LOGISTIC;
			else
				refuse_option(key, "unknown loss", "Use \"squared\" (linear regression) or \"logistic\".");
		}
		else if (strcmp(key, "method") == 0)
		{
			options.method = NULL;
			for (int i = 0; i < lengthof(methods); i++)
				if (option_is(&value, methods[i]->name))
					options.method = methods[i];
			if (options.method == NULL)
				refuse_option(key, "unknown method", method_hint());
		}
		else if (strcmp(key, "iterations") == 0)
			options.iterations = option_count(key, &value, ULDP_SGD_MAX_ITERATIONS);
		else if (strcmp(key, "phases") == 0)
			options.phases = option_count(key, &value, MAX_PHASES);
		else if (strcmp(key, "passes") == 0)
			options.passes = option_count(key, &value, ULDP_SGD_MAX_ITERATIONS);
		else if (strcmp(key, "step_size") == 0)
			options.step_size = option_scale(key, &value);
		else if (strcmp(key, "radius") == 0)
			options.radius = option_scale(key, &value);
		else if (strcmp(key, "feature_radius") == 0)
			options.feature_radius = option_scale(key, &value);
		else if (strcmp(key, "label_bound") == 0)
			options.label_bound = option_scale(key, &value);
		else if (strcmp(key, "gradient_clip") == 0)
			options.gradient_clip = option_scale(key, &value);
		else if (strcmp(key, "tau") == 0)
			options.tau = option_scale(key, &value);
		else if (strcmp(key, "l2") == 0)
		{
			options.l2 = option_number(key, &value);
			if (!(options.l2 >= 0 && options.l2 <= ULDP_MAX_MAGNITUDE))
				refuse_option(key, "must be a non-negative finite number", "l2 is the weight of the ridge penalty l2 |theta|^2 / 2.");
			if (options.l2 > SCALE_MAX)
				refuse_option(key, psprintf("must be at most %g", SCALE_MAX), "l2 is the weight of the ridge penalty l2 |theta|^2 / 2.");
		}
		else if (strcmp(key, "dimension") == 0)
			options.dimension = option_count(key, &value, ULDP_MAX_DIMENSION);
		else
			refuse_option(key, "unknown option",
						  "Options are loss, method, iterations, phases, passes, step_size, radius, l2, feature_radius, label_bound, gradient_clip, tau and dimension.");
	}
	return method_defaults(options);
}

/* The number of scales that the options leave to be chosen privately. */
static int
scales_not_given(const SgdOptions *options)
{
	return (options->feature_radius == 0) +
		(options->loss == LOSS_SQUARED && options->label_bound == 0);
}

/*
 * What is left of rho for the gradient steps once the noisy count and
 * "scales" private scales are paid for.
 */
static double
rho_for_steps(double rho, int scales)
{
	return rho * (1 - ULDP_SGD_COUNT_SHARE - scales * SCALE_SHARE);
}

/* The share of delta that the method keeps for its tests (sgdmethod.h). */
static double
tests_delta_share(const SgdOptions *options)
{
	return options->method->tests_delta_share != NULL ?
		options->method->tests_delta_share(options) : 0;
}

/* The rho of a release: epsilon and the rest of delta. */
static double
release_rho(const SgdOptions *options, double epsilon, double delta)
{
	return uldp_release_rho(epsilon, delta * (1 - tests_delta_share(options)));
}

/*
 * What the method's tests may fail with, for a pair of neighbours: the
 * share of delta they keep, over e^epsilon (doc/privacy.md); 0 when
 * e^epsilon overflows.
 */
static double
tests_delta(const SgdOptions *options, double epsilon, double delta)
{
	return delta * ULDP_SPEND_MARGIN * tests_delta_share(options) / exp(epsilon);
}

/*
 * Refuses, before the charge, a budget that the mechanisms of user_dp_sgd
 * cannot honour whatever the data.  The options' ranges (parse_options) keep
 * every computation finite; the budget must give every noisy count a
 * variance the sampler supports and every step at least one grid step
 * (uldp_rho_validate).
 */
static void
check_budget(const SgdOptions *options, int width, double epsilon, double delta)
{
	double		rho = release_rho(options, epsilon, delta);

	/* the least the fit can get: every scale not given is paid for */
	options->method->check_budget(options, width, epsilon, delta, rho * ULDP_SGD_COUNT_SHARE,
								  rho_for_steps(rho, scales_not_given(options)));
}

/* The epsilon, delta and options of a call, validated. */
static SgdOptions
call_options(int nvalues, const Datum *values, const bool *nulls,
			 double *epsilon, double *delta)
{
	static const char *const names[] = {"epsilon", "delta"};

	uldp_check_not_null(2, names, nulls);
	*epsilon = DatumGetFloat8(values[0]);
	*delta = DatumGetFloat8(values[1]);
	uldp_check_epsilon(*epsilon);
	uldp_check_delta(*delta);
	return parse_options(nvalues > 2 && !nulls[2] ? DatumGetJsonbP(values[2]) : NULL);
}

/*
 * The plan of user_dp_sgd: the parameters and options validated, also
 * against what its mechanisms can honour, and the public dimension of the
 * features, from the plan or the "dimension" option.
 */
void
uldp_sgd_plan(const UldpReleaseCall *call, UldpReleasePlan *plan)
{
	SgdOptions	options = call_options(call->nparams, call->params, call->nulls,
									   &plan->epsilon, &plan->delta);
	int			dimension = call->dimension;
	int			width;

	if (options.dimension != 0)
	{
		if (dimension != 0 && dimension != options.dimension)
			refuse_option("dimension", psprintf("the features have %d elements", dimension),
						  "Omit the option: the features' dimension is known from the query.");
		dimension = options.dimension;
	}
	plan->dimension = uldp_vector_dimension(call->function, dimension,
											", or give the \"dimension\" option");
	width = plan->dimension + 1;
	check_budget(&options, width, plan->epsilon, plan->delta);
	/*
	 * the state, and a second copy of its rows to group them by user; per
	 * user its rows' place, its scale and the method's working memory
	 */
	plan->bytes_per_row = uldp_vec_state_bytes_per_row(true, plan->dimension) +
		width * sizeof(double) + sizeof(uint32) + sizeof(UldpUserRows) + sizeof(double) +
		options.method->bytes_per_row(width);
	/*
	 * and the model's vectors: theta and at most 7 more (accelerated: AC-SA's
	 * x, query point and gradient, the anchor, and the inlier mean's 128-bit
	 * sum, which counts twice)
	 */
	plan->fixed_bytes = uldp_vec_state_fixed_bytes(true, plan->dimension) +
		uldp_highdim_fixed_bytes(width) + 8 * width * sizeof(double);
}

/*
 * Per user, the root mean square of |x| (label: of |y|) over its rows
 * where it is not zero, and 0 for a user without such rows.
 */
static double *
user_rms(const SgdProblem *problem, bool label)
{
	double	   *rms = palloc_extended(Max(problem->nusers, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	int			dim = problem->dim;

	for (int64 i = 0; i < problem->nusers; i++)
	{
		const UldpUserRows *user = &problem->users[i];
		double		total = 0;
		int64		nonzero = 0;

		for (int64 r = 0; r < user->count; r++)
		{
			const double *row = &user->rows[r * (dim + 1)];

			/*
			 * the grid ends at SCALE_MAX: clamping keeps the sum of squares
			 * finite (below 2^32 rows of 1e100)
			 */
			double		size = Min(label ? fabs(row[dim]) : uldp_l2_norm(row, dim),
								   SCALE_MAX);

			if (size > 0)
			{
				total += size * size;
				nonzero++;
			}
		}
		rms[i] = nonzero > 0 ? Min(sqrt(total / nonzero), SCALE_MAX) : 0;
	}
	return rms;
}

/*
 * The typical feature norm (or label) of the users, with rho: the private
 * median of user_rms, or FALLBACK_SCALE when it is zero.
 */
static double
typical_scale(const SgdProblem *problem, bool label, double rho)
{
	double	   *rms = user_rms(problem, label);
	double		median = uldp_private_scale(rms, problem->nusers, SCALE_MIN, SCALE_MAX, rho);

	pfree(rms);
	return median > 0 ? median : FALLBACK_SCALE;
}

/* Clips every row (features to X, label to its range), in place. */
static void
clip_rows(SgdProblem *problem)
{
	int			dim = problem->dim;
	double		low = problem->options.loss == LOSS_LOGISTIC ? 0 : -problem->options.label_bound;
	double		high = problem->options.loss == LOSS_LOGISTIC ? 1 : problem->options.label_bound;

	for (int64 i = 0; i < problem->nusers; i++)
		for (int64 r = 0; r < problem->users[i].count; r++)
		{
			double	   *row = (double *) &problem->users[i].rows[r * (dim + 1)];

			uldp_clip_to_ball(row, dim, problem->options.feature_radius);
			row[dim] = Min(Max(row[dim], low), high);
		}
}

/*
 * Fills in the defaults that depend on the (private) scales; typical_norm
 * is the typical feature norm.
 */
static void
complete_options(SgdOptions *options, double typical_norm)
{
	if (options->loss == LOSS_LOGISTIC)
	{
		/* |sigmoid - y| <= 1: the exact bound of a row's gradient */
		if (options->radius == 0)
			options->radius = 10;
		if (options->gradient_clip == 0)
			options->gradient_clip = sqrt(options->feature_radius * options->feature_radius + 1);
	}
	else
	{
		if (options->radius == 0)
			options->radius = 10 * options->label_bound * Max(1, 1 / options->feature_radius);
		/*
		 * A user's average gradient is its average residual times x; its
		 * worst case (residuals of twice the largest label at the largest
		 * norm) is rarely approached, and the typical one, a typical label
		 * at a typical norm, is clipped little while adding far less noise.
		 */
		if (options->gradient_clip == 0)
			options->gradient_clip = options->label_bound / LABEL_BOUND_PER_MEDIAN *
				sqrt(typical_norm * typical_norm + 1);
	}
}

/* ", key: value", unless value is 0: a scale that was never determined */
static void
append_number(StringInfo out, const char *key, double value)
{
	if (value != 0)
		appendStringInfo(out, ", \"%s\": %s", key, float8out_internal(value));
}

/*
 * The released model: its weights, the options it was fit with and the
 * report of the fit (NULL: too few users, no fit)
 */
static Datum
model_jsonb(const SgdOptions *options, const SgdReport *report,
			const double *theta, int width, double epsilon, double delta)
{
	StringInfoData out;

	initStringInfo(&out);
	appendStringInfo(&out, "{\"loss\": \"%s\", \"method\": \"%s\", \"weights\": [",
					 options->loss == LOSS_LOGISTIC ? "logistic" : "squared",
					 options->method->name);
	for (int j = 0; j < width; j++)
		appendStringInfo(&out, "%s%s", j > 0 ? ", " : "", float8out_internal(theta[j]));
	appendStringInfoString(&out, "]");
	append_number(&out, "epsilon", epsilon);
	append_number(&out, "delta", delta);
	append_number(&out, "iterations", options->iterations);
	if (report != NULL)
	{
		appendStringInfo(&out, ", \"phases\": %d, \"steps\": %d, \"passes\": %d",
						 report->phases, report->steps, report->passes);
		appendStringInfo(&out, ", \"gradient_evaluations\": %s, \"test_failed\": %s",
						 float8out_internal(report->gradient_evaluations),
						 report->test_failed ? "true" : "false");
	}
	append_number(&out, "step_size", options->step_size);
	append_number(&out, "radius", options->radius);
	appendStringInfo(&out, ", \"l2\": %s", float8out_internal(options->l2));
	append_number(&out, "feature_radius", options->feature_radius);
	if (options->loss == LOSS_SQUARED)
		append_number(&out, "label_bound", options->label_bound);
	append_number(&out, "gradient_clip", options->gradient_clip);
	if (!isinf(options->tau))
		append_number(&out, "tau", options->tau);
	appendStringInfoChar(&out, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data));
}

Datum
uldp_sgd_finalfn(PG_FUNCTION_ARGS)
{
	UldpVecState *state = PG_ARGISNULL(0) ? NULL : (UldpVecState *) PG_GETARG_POINTER(0);
	Datum		values[3];
	bool		nulls[3];
	int			nvalues;
	double		epsilon;
	double		delta;
	double		rho;
	double		rho_rest;
	UldpUserCount count;
	int			scales;
	bool		private_scales;
	double		typical_norm;
	double		typical_label;
	double	   *theta;
	SgdProblem	problem = {0};
	SgdReport	report = {0};

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	nvalues = uldp_release_constants(fcinfo, 3, values, nulls, 3);
	problem.options = call_options(nvalues, values, nulls, &epsilon, &delta);
	rho = release_rho(&problem.options, epsilon, delta);
	problem.test_delta = tests_delta(&problem.options, epsilon, delta);

	problem.dim = uldp_release_plan(fcinfo)->dimension;
	if (state != NULL)
		problem.users = uldp_vec_user_rows(state, &problem.nusers,
										   sizeof(double) +
										   problem.options.method->bytes_per_row(problem.dim + 1));
	count = uldp_noisy_count(problem.nusers, rho * ULDP_SGD_COUNT_SHARE);
	if (!uldp_enough_users(&count, rho * ULDP_SGD_COUNT_SHARE, delta * ULDP_SPEND_MARGIN))
		PG_RETURN_DATUM(model_jsonb(&problem.options, NULL, NULL, 0, epsilon, delta));

	/* private scales only if they all land in the users' central half */
	scales = scales_not_given(&problem.options);
	private_scales = scales > 0 &&
		scales * uldp_private_scale_miss(count.at_least, SCALE_MIN, SCALE_MAX,
										 rho * SCALE_SHARE) <= SCALE_FAILURE;
	rho_rest = rho_for_steps(rho, private_scales ? scales : 0);
	typical_norm = problem.options.feature_radius;
	if (problem.options.feature_radius == 0)
	{
		typical_norm = private_scales ? typical_scale(&problem, false, rho * SCALE_SHARE) :
			FALLBACK_SCALE;
		problem.options.feature_radius = FEATURE_RADIUS_PER_MEDIAN(problem.options.loss) * typical_norm;
	}
	if (problem.options.loss == LOSS_SQUARED && problem.options.label_bound == 0)
	{
		typical_label = private_scales ? typical_scale(&problem, true, rho * SCALE_SHARE) :
			FALLBACK_SCALE;
		problem.options.label_bound = LABEL_BOUND_PER_MEDIAN * typical_label;
	}
	complete_options(&problem.options, typical_norm);
	clip_rows(&problem);
	problem.smoothness = (typical_norm * typical_norm + 1) *
		(problem.options.loss == LOSS_LOGISTIC ? 0.25 : 1);

	theta = palloc0((problem.dim + 1) * sizeof(double));
	problem.options.method->fit(&problem, &count, rho_rest, theta, &report);
	if (problem.options.step_size == 0)
		problem.options.step_size = 1 / (problem.smoothness + problem.options.l2);
	PG_RETURN_DATUM(model_jsonb(&problem.options, &report, theta, problem.dim + 1,
								epsilon, delta));
}

/* A released model, as uldp.predict reads it. */
typedef struct PredictModel
{
	bool		logistic;
	int			width;
	double		feature_radius;
	double	   *weights;
	Size		jsonb_size;
	char		jsonb[FLEXIBLE_ARRAY_MEMBER];	/* to recognise it again */
} PredictModel;

static void
refuse_model(const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid uldp model: %s", problem),
			 errhint("Pass a model released by user_dp_sgd.")));
}

static JsonbValue *
model_field(Jsonb *model, const char *key)
{
	return getKeyJsonValueFromContainer(&model->root, key, strlen(key), NULL);
}

static PredictModel *
read_model(Jsonb *jsonb, MemoryContext context)
{
	PredictModel *model = MemoryContextAllocZero(context, offsetof(PredictModel, jsonb) + VARSIZE(jsonb));
	JsonbValue *loss = JB_ROOT_IS_OBJECT(jsonb) ? model_field(jsonb, "loss") : NULL;
	JsonbValue *radius = JB_ROOT_IS_OBJECT(jsonb) ? model_field(jsonb, "feature_radius") : NULL;
	JsonbValue *weights = JB_ROOT_IS_OBJECT(jsonb) ? model_field(jsonb, "weights") : NULL;
	JsonbIterator *it;
	JsonbValue	value;
	JsonbIteratorToken token;

	if (loss == NULL || !(option_is(loss, "logistic") || option_is(loss, "squared")))
		refuse_model("no loss \"logistic\" or \"squared\"");
	if (weights == NULL || weights->type != jbvBinary)
		refuse_model("no weights");
	model->logistic = option_is(loss, "logistic");
	model->weights = MemoryContextAlloc(context, Max(JsonContainerSize(weights->val.binary.data), 1) * sizeof(double));
	it = JsonbIteratorInit(weights->val.binary.data);
	while ((token = JsonbIteratorNext(&it, &value, true)) != WJB_DONE)
		if (token == WJB_ELEM)
		{
			if (value.type != jbvNumeric)
				refuse_model("a weight is not a number");
			model->weights[model->width++] = option_number("weights", &value);
		}
	if (model->width < 2)
		refuse_model("no weights: the release had too few users");
	if (radius == NULL || radius->type != jbvNumeric)
		refuse_model("no feature_radius");
	model->feature_radius = option_number("feature_radius", radius);
	if (!(model->feature_radius > 0))
		refuse_model("feature_radius must be positive");
	model->jsonb_size = VARSIZE(jsonb);
	memcpy(model->jsonb, jsonb, VARSIZE(jsonb));
	return model;
}

/*
 * uldp.predict(model jsonb, features float8[]): the probability of label 1
 * (logistic) or the predicted value (squared), with the features clipped
 * to feature_radius as in training.  It reads only the released model; the
 * parsed model is cached for the next row.
 */
Datum
uldp_predict(PG_FUNCTION_ARGS)
{
	Jsonb	   *jsonb = PG_GETARG_JSONB_P(0);
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(1);
	PredictModel *model = (PredictModel *) fcinfo->flinfo->fn_extra;
	int			n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	double	   *features;
	double		z;

	if (model == NULL || model->jsonb_size != VARSIZE(jsonb) ||
		memcmp(model->jsonb, jsonb, VARSIZE(jsonb)) != 0)
	{
		if (model != NULL)
			pfree(model);
		model = read_model(jsonb, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = model;
	}
	if (n != model->width - 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("the model has %d features, not %d", model->width - 1, n),
				 errhint("Pass the features in the order and number used for training.")));
	if (ARR_HASNULL(array))
		PG_RETURN_NULL();
	features = palloc(Max(n, 1) * sizeof(double));
	memcpy(features, ARR_DATA_PTR(array), n * sizeof(double));
	uldp_clip_to_ball(features, n, model->feature_radius);
	z = uldp_sgd_linear(model->weights, features, n);
	pfree(features);
	PG_RETURN_FLOAT8(model->logistic ? uldp_sigmoid(z) : z);
}

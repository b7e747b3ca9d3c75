/*-------------------------------------------------------------------------
 *
 * round.c
 *	  Reading and checking a round's JSON, and deriving what the reports
 *	  need: padded dimension, row width, bins, noise.
 *
 * The client trusts nothing in a round but what it checks here.  A round
 * cannot make a report less private than its epsilon (every mechanism is
 * private for any summary, doc/privacy.md), but it can ask for parameters
 * that the samplers cannot draw exactly or that make no sense, and those
 * are refused with a message naming the field.  The server parses its own
 * rounds with the same code, so both sides derive the same bins, grid and
 * rotation.
 *
 * Keys: every kind has "v", "id", "kind" and "epsilon"; the keys of each
 * kind are listed in key_rules.  The server's own bookkeeping keys
 * ("learning_rate", "radius", "range_round", "created") are accepted with
 * any value and ignored; any other key is an error, so that a misspelt
 * parameter is never silently defaulted.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "error.h"
#include "exactnoise.h"
#include "grids.h"
#include "host.h"
#include "json.h"
#include "kinds.h"
#include "uldp_local.h"

#define KEYS_HINT "See doc/local.md for the keys of each kind of round."

#define MIN_EPSILON 1e-6
#define MAX_EPSILON 1e6

#define RANGE (1 << ULDP_LOCAL_RANGE)
#define MEAN (1 << ULDP_LOCAL_MEAN)
#define VECTOR_RANGE (1 << ULDP_LOCAL_VECTOR_RANGE)
#define VECTOR_MEAN (1 << ULDP_LOCAL_VECTOR_MEAN)
#define GRADIENT (1 << ULDP_LOCAL_GRADIENT)
#define ANY_KIND (RANGE | MEAN | VECTOR_RANGE | VECTOR_MEAN | GRADIENT)
#define IGNORED 0				/* the server's keys, any kind, any value */

static const char *const kind_names[] = {
	"range", "mean", "vector_range", "vector_mean", "gradient"
};

#define KIND_COUNT ((int) (sizeof(kind_names) / sizeof(kind_names[0])))

typedef struct KeyRule
{
	const char *key;
	int			kinds;			/* where the key may appear */
} KeyRule;

static const KeyRule key_rules[] = {
	{"v", ANY_KIND},
	{"id", ANY_KIND},
	{"kind", ANY_KIND},
	{"epsilon", ANY_KIND},
	{"delta", MEAN | VECTOR_MEAN | GRADIENT},
	{"noise", MEAN | VECTOR_MEAN | GRADIENT},
	{"bound", RANGE | VECTOR_RANGE | VECTOR_MEAN | GRADIENT},
	{"tau", RANGE | VECTOR_RANGE},
	{"lower", MEAN | VECTOR_MEAN | GRADIENT},
	{"upper", MEAN | VECTOR_MEAN | GRADIENT},
	{"dimension", VECTOR_RANGE | VECTOR_MEAN | GRADIENT},
	{"rotation_seed", VECTOR_RANGE | VECTOR_MEAN | GRADIENT},
	{"model", VECTOR_RANGE | GRADIENT},
	{"clip", VECTOR_RANGE | GRADIENT},
	{"learning_rate", IGNORED},
	{"radius", IGNORED},
	{"range_round", IGNORED},
	{"created", IGNORED}
};

/* every key of the round is known and belongs to its kind */
static bool
check_keys(const UldpJson *json, UldpLocalKind kind, UldpLocalError *error)
{
	for (int i = 0; i < json->count; i++)
	{
		const KeyRule *rule = NULL;
		char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];

		for (size_t r = 0; r < sizeof(key_rules) / sizeof(key_rules[0]); r++)
			if (strcmp(key_rules[r].key, json->keys[i]) == 0)
				rule = &key_rules[r];
		if (rule == NULL)
		{
			uldp_local_fail(error, "unknown key \"%s\" in a round", uldp_local_excerpt(json->keys[i], excerpt));
			return uldp_local_hint(error, KEYS_HINT);
		}
		if (rule->kinds != IGNORED && (rule->kinds & (1 << kind)) == 0)
		{
			uldp_local_fail(error, "key \"%s\" does not apply to %s rounds",
							rule->key, kind_names[kind]);
			return uldp_local_hint(error, KEYS_HINT);
		}
	}
	return true;
}

static bool
missing(const char *key, const char *where, UldpLocalError *error)
{
	uldp_local_fail(error, "%s has no \"%s\"", where, key);
	return uldp_local_hint(error, KEYS_HINT);
}

/*
 * A number member: true if it is absent and not required (result is left
 * as it is) or present and finite.
 */
static bool
read_double(const UldpJson *object, const char *key, bool required,
			double *result, UldpLocalError *error)
{
	const UldpJson *value = uldp_json_member(object, key);

	if (value == NULL)
		return required ? missing(key, "the round", error) : true;
	if (!uldp_json_double(value, result))
	{
		uldp_local_fail(error, "\"%s\" must be a finite number", key);
		return uldp_local_hint(error, "Give \"%s\" as a JSON number.", key);
	}
	return true;
}

static bool
read_int64(const UldpJson *object, const char *key, bool required,
		   int64_t *result, UldpLocalError *error)
{
	const UldpJson *value = uldp_json_member(object, key);

	if (value == NULL)
		return required ? missing(key, "the round", error) : true;
	if (!uldp_json_int64(value, result))
	{
		uldp_local_fail(error, "\"%s\" must be an integer", key);
		return uldp_local_hint(error, "Give \"%s\" as a JSON number without fraction or exponent.", key);
	}
	return true;
}

/* a string member, or NULL if absent (error set if present but no string) */
static const char *
read_string(const UldpJson *object, const char *key, bool *ok, UldpLocalError *error)
{
	const UldpJson *value = uldp_json_member(object, key);

	*ok = true;
	if (value == NULL)
		return NULL;
	if (value->type != ULDP_JSON_STRING)
	{
		*ok = false;
		uldp_local_fail(error, "\"%s\" must be a string", key);
		uldp_local_hint(error, "Give \"%s\" as a JSON string.", key);
		return NULL;
	}
	return value->text;
}

/* a positive magnitude: bound, tau, clip, feature_radius */
static bool
check_positive(const char *key, double value, UldpLocalError *error)
{
	if (value > 0 && value <= ULDP_LOCAL_MAX_MAGNITUDE)
		return true;
	uldp_local_fail(error, "%s %g is out of range", key, value);
	return uldp_local_hint(error, "The %s must be positive and at most %g.",
						   key, ULDP_LOCAL_MAX_MAGNITUDE);
}

/*
 * An array member of exactly length finite numbers, or NULL (absent, or
 * *ok false with the error set).  The caller frees it.
 */
static double *
read_array(const UldpJson *object, const char *key, int length,
		   const char *length_name, bool *ok, UldpLocalError *error)
{
	const UldpJson *value = uldp_json_member(object, key);
	double	   *array;

	*ok = false;
	if (value == NULL)
	{
		*ok = true;
		return NULL;
	}
	if (value->type != ULDP_JSON_ARRAY || value->count != length)
	{
		uldp_local_fail(error, "\"%s\" must be an array of %d numbers", key, length);
		uldp_local_hint(error, "Give \"%s\" one entry per %s.", key, length_name);
		return NULL;
	}
	array = uldp_local_alloc(length * sizeof(double));
	if (array == NULL)
	{
		uldp_local_fail(error, "out of memory reading a round");
		uldp_local_hint(error, "Free some memory and try again.");
		return NULL;
	}
	for (int i = 0; i < length; i++)
		if (!uldp_json_double(&value->items[i], &array[i]))
		{
			uldp_local_free(array);
			uldp_local_fail(error, "entry %d of \"%s\" is not a finite number", i, key);
			uldp_local_hint(error, "Give \"%s\" as an array of JSON numbers.", key);
			return NULL;
		}
	*ok = true;
	return array;
}

/*
 * "12345678901234567890": a decimal uint64 in a string (JSON numbers are
 * doubles to many readers, which would lose the low bits).
 */
static bool
read_seed(const UldpJson *json, uint64_t *seed, UldpLocalError *error)
{
	bool		ok;
	const char *text = read_string(json, "rotation_seed", &ok, error);
	const char *p;
	char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];

	if (!ok)
		return false;
	if (text == NULL)
		return missing("rotation_seed", "the round", error);
	*seed = 0;
	for (p = text; *p >= '0' && *p <= '9'; p++)
	{
		if (*seed > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
			break;
		*seed = *seed * 10 + (uint64_t) (*p - '0');
	}
	if (*p != '\0' || p == text)
	{
		uldp_local_fail(error, "rotation_seed \"%s\" is not an unsigned 64-bit integer", uldp_local_excerpt(text, excerpt));
		return uldp_local_hint(error, "Give the seed as a string of decimal digits below 2^64.");
	}
	return true;
}

static int
next_power_of_two(int64_t n)
{
	int64_t		p = 1;

	while (p < n)
		p *= 2;
	return (int) p;
}

/* bins and Hadamard size of a range round, from bound and tau */
static bool
derive_bins(UldpLocalRound *round, UldpLocalError *error)
{
	double		bins = ceil(round->bound / round->tau);

	if (bins > ULDP_LOCAL_MAX_BINS)
	{
		uldp_local_fail(error, "too many bins: the bound over tau is %g", round->bound / round->tau);
		return uldp_local_hint(error, "Bins are 2 tau wide across [-bound, bound]; at most %d are allowed, so raise tau.",
							   ULDP_LOCAL_MAX_BINS);
	}
	round->bins = (int64_t) bins;
	round->hadamard_size = next_power_of_two(round->bins);
	return true;
}

/*
 * The variance parameter (in levels) of the discrete Gaussian that makes a
 * mean report (epsilon, delta)-LDP.  Any two summaries' levels are at most
 * G apart, and the discrete Gaussian with variance parameter sigma2 is
 * G^2 / (2 sigma2)-zCDP at sensitivity G, like the continuous one
 * (Canonne, Kamath and Steinke 2020).  rho-zCDP implies
 * (rho + 2 sqrt(rho L), delta)-DP with L = ln(1/delta) (Bun and Steinke
 * 2016, Proposition 1.3), which equals epsilon exactly for
 * sqrt(rho) = sqrt(L + epsilon) - sqrt(L) = epsilon / (sqrt(L + epsilon)
 * + sqrt(L)), the form computed (no cancellation).  The factor 1 + 2^-40
 * covers the rounding of these few operations, so that sigma2 is never
 * below the exact value; the sampler rounds it up further.
 */
static double
gaussian_sigma2(double epsilon, double delta)
{
	double		l = -log(delta);
	double		root_rho = epsilon / (sqrt(l + epsilon) + sqrt(l));
	double		g = ULDP_LOCAL_GRID_LEVELS;

	return g * g / (2 * root_rho * root_rho) * (1 + 0x1p-40);
}

/* noise of a mean kind: the round's choice, or the smaller variance */
static bool
derive_noise(const UldpJson *json, UldpLocalRound *round, UldpLocalError *error)
{
	bool		ok;
	const char *noise = read_string(json, "noise", &ok, error);
	double		sigma2;
	bool		supported;
	char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];

	if (!ok)
		return false;
	if (noise != NULL && strcmp(noise, "laplace") != 0 && strcmp(noise, "gaussian") != 0)
	{
		uldp_local_fail(error, "unknown noise \"%s\"", uldp_local_excerpt(noise, excerpt));
		return uldp_local_hint(error, "The noise is \"laplace\" or \"gaussian\".");
	}
	round->noise = ULDP_LOCAL_LAPLACE;
	round->noise_scale = ULDP_LOCAL_GRID_LEVELS / round->epsilon;
	if (round->delta == 0)
	{
		if (noise != NULL && strcmp(noise, "gaussian") == 0)
		{
			uldp_local_fail(error, "gaussian noise needs a positive delta");
			return uldp_local_hint(error, "Give the round a delta in (0, 1), or use Laplace noise.");
		}
		return true;
	}
	sigma2 = gaussian_sigma2(round->epsilon, round->delta);
	supported = uldp_discrete_gaussian_supports(sigma2);
	if (noise != NULL && strcmp(noise, "gaussian") == 0 && !supported)
	{
		uldp_local_fail(error, "the Gaussian variance %g is beyond the sampler's range", sigma2);
		return uldp_local_hint(error, "Raise epsilon or delta, or use Laplace noise.");
	}
	if (noise != NULL ? strcmp(noise, "gaussian") == 0 :
		supported && uldp_discrete_gaussian_variance(sigma2) < uldp_local_laplace_variance(round->epsilon))
	{
		round->noise = ULDP_LOCAL_GAUSSIAN;
		round->noise_scale = sigma2;
	}
	return true;
}

/*
 * The intervals of a mean kind: [lower, upper] per coordinate, non-empty
 * and of finite width, or the default [-clip, clip] of gradient rounds.
 */
static bool
read_intervals(const UldpJson *json, UldpLocalRound *round, UldpLocalError *error)
{
	bool		ok;

	if (round->kind == ULDP_LOCAL_MEAN)
	{
		double		lower,
					upper;

		if (!read_double(json, "lower", true, &lower, error) ||
			!read_double(json, "upper", true, &upper, error))
			return false;
		round->lower = uldp_local_alloc(sizeof(double));
		round->upper = uldp_local_alloc(sizeof(double));
		if (round->lower != NULL && round->upper != NULL)
		{
			round->lower[0] = lower;
			round->upper[0] = upper;
		}
	}
	else
	{
		round->lower = read_array(json, "lower", round->padded, "padded rotated coordinate", &ok, error);
		if (!ok)
			return false;
		round->upper = read_array(json, "upper", round->padded, "padded rotated coordinate", &ok, error);
		if (!ok)
			return false;
		if ((round->lower == NULL) != (round->upper == NULL))
			return missing(round->lower == NULL ? "lower" : "upper", "the round", error);
		if (round->lower == NULL && round->kind == ULDP_LOCAL_VECTOR_MEAN)
			return missing("lower", "the round", error);
		if (round->lower == NULL)
		{
			round->lower = uldp_local_alloc(round->padded * sizeof(double));
			round->upper = uldp_local_alloc(round->padded * sizeof(double));
			for (int i = 0; round->lower != NULL && round->upper != NULL && i < round->padded; i++)
			{
				round->lower[i] = -round->clip;
				round->upper[i] = round->clip;
			}
		}
	}
	if (round->lower == NULL || round->upper == NULL)
	{
		uldp_local_fail(error, "out of memory reading a round");
		return uldp_local_hint(error, "Free some memory and try again.");
	}
	for (int i = 0; i < round->padded; i++)
		if (!(round->lower[i] < round->upper[i]) ||
			!(fabs(round->lower[i]) <= ULDP_LOCAL_MAX_MAGNITUDE &&
			  fabs(round->upper[i]) <= ULDP_LOCAL_MAX_MAGNITUDE))
		{
			uldp_local_fail(error, "interval %d [%g, %g] is empty or too wide", i,
							round->lower[i], round->upper[i]);
			return uldp_local_hint(error, "Each lower must be below its upper, both within +-%g.",
								   ULDP_LOCAL_MAX_MAGNITUDE);
		}
	return true;
}

/*
 * The model of a gradient round, or of a vector_range round that bounds
 * gradients: {"loss": "logistic" | "squared", "weights": [w, b],
 * "feature_radius": r}; it sets the dimension to the number of weights.
 */
static bool
read_model(const UldpJson *model, UldpLocalRound *round, UldpLocalError *error)
{
	static const char *const model_keys[] = {"loss", "weights", "feature_radius"};
	const UldpJson *weights = uldp_json_member(model, "weights");
	const char *loss;
	bool		ok;
	char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];

	if (model->type != ULDP_JSON_OBJECT)
	{
		uldp_local_fail(error, "\"model\" must be an object");
		return uldp_local_hint(error, "See doc/local.md for the model object.");
	}
	for (int i = 0; i < model->count; i++)
	{
		bool		known = false;

		for (int k = 0; k < 3; k++)
			known = known || strcmp(model->keys[i], model_keys[k]) == 0;
		if (!known)
		{
			uldp_local_fail(error, "unknown key \"%s\" in the model", uldp_local_excerpt(model->keys[i], excerpt));
			return uldp_local_hint(error, "A model has \"loss\", \"weights\" and \"feature_radius\".");
		}
	}
	loss = read_string(model, "loss", &ok, error);
	if (!ok)
		return false;
	if (loss == NULL)
		return missing("loss", "the model", error);
	if (strcmp(loss, "logistic") == 0)
		round->loss = ULDP_LOCAL_LOGISTIC;
	else if (strcmp(loss, "squared") == 0)
		round->loss = ULDP_LOCAL_SQUARED;
	else
	{
		uldp_local_fail(error, "unknown loss \"%s\"", uldp_local_excerpt(loss, excerpt));
		return uldp_local_hint(error, "The loss is \"logistic\" or \"squared\".");
	}
	if (uldp_json_member(model, "feature_radius") == NULL)
		return missing("feature_radius", "the model", error);
	if (!read_double(model, "feature_radius", true, &round->feature_radius, error) ||
		!check_positive("feature_radius", round->feature_radius, error))
		return false;
	if (weights == NULL)
		return missing("weights", "the model", error);
	if (weights->type != ULDP_JSON_ARRAY || weights->count < 1 ||
		weights->count > ULDP_LOCAL_MAX_DIMENSION)
	{
		uldp_local_fail(error, "\"weights\" must be an array of 1 to %d numbers",
						ULDP_LOCAL_MAX_DIMENSION);
		return uldp_local_hint(error, "The weights are the features' then the intercept.");
	}
	if (round->dimension != 0 && round->dimension != weights->count)
	{
		uldp_local_fail(error, "dimension %d does not match the model's %d weights",
						round->dimension, weights->count);
		return uldp_local_hint(error, "A model round's dimension is the number of features plus one.");
	}
	round->dimension = weights->count;
	round->weights = read_array(model, "weights", round->dimension, "feature and the intercept", &ok, error);
	return ok;
}

/* the fields of round's kind, after v, id, kind and epsilon */
static bool
read_kind(const UldpJson *json, UldpLocalRound *round, UldpLocalError *error)
{
	const UldpJson *model = uldp_json_member(json, "model");
	int64_t		dimension = 0;

	if (round->kind == ULDP_LOCAL_MEAN || round->kind == ULDP_LOCAL_RANGE)
		round->dimension = 1;
	else
	{
		if (!read_int64(json, "dimension", model == NULL, &dimension, error))
			return false;
		if (uldp_json_member(json, "dimension") != NULL &&
			(dimension < 1 || dimension > ULDP_LOCAL_MAX_DIMENSION))
		{
			uldp_local_fail(error, "dimension %lld is out of range", (long long) dimension);
			return uldp_local_hint(error, "The dimension must be between 1 and %d.",
								   ULDP_LOCAL_MAX_DIMENSION);
		}
		round->dimension = (int) dimension;
		if (!read_seed(json, &round->rotation_seed, error))
			return false;
	}
	if (round->kind == ULDP_LOCAL_GRADIENT && model == NULL)
		return missing("model", "a gradient round", error);
	if (model != NULL)
	{
		if (!read_model(model, round, error) ||
			!read_double(json, "clip", true, &round->clip, error) ||
			!check_positive("clip", round->clip, error))
			return false;
	}
	else if (uldp_json_member(json, "clip") != NULL)
	{
		uldp_local_fail(error, "\"clip\" needs a \"model\"");
		return uldp_local_hint(error, "Only rounds over a model clip gradients.");
	}
	round->padded = next_power_of_two(round->dimension);
	round->row_width = round->dimension;

	/*
	 * bound is the l2 radius of the rows that the summary averages, and so
	 * the half-width of the range bins' span.  Over a model those rows are
	 * the gradients, clipped to clip: bound may be left out, or must be the
	 * same number.
	 */
	if (round->kind != ULDP_LOCAL_MEAN &&
		!read_double(json, "bound", model == NULL, &round->bound, error))
		return false;
	if (model != NULL)
	{
		if (uldp_json_member(json, "bound") != NULL && round->bound != round->clip)
		{
			uldp_local_fail(error, "bound %g differs from clip %g", round->bound, round->clip);
			return uldp_local_hint(error, "Over a model, the rows are gradients clipped to clip: leave bound out, or give the same number.");
		}
		round->bound = round->clip;
	}
	else if (round->kind != ULDP_LOCAL_MEAN && !check_positive("bound", round->bound, error))
		return false;
	if (uldp_local_is_range(round->kind))
		return read_double(json, "tau", true, &round->tau, error) &&
			check_positive("tau", round->tau, error) &&
			derive_bins(round, error);
	if (!read_double(json, "delta", false, &round->delta, error))
		return false;
	if (!(round->delta >= 0 && round->delta < 1))
	{
		uldp_local_fail(error, "delta %g is out of range", round->delta);
		return uldp_local_hint(error, "Delta must be at least 0 and below 1.");
	}
	return derive_noise(json, round, error) && read_intervals(json, round, error);
}

bool
uldp_local_round_parse(const char *text, UldpLocalRound *round, UldpLocalError *error)
{
	UldpJson   *json = uldp_json_parse(text, "round", error);
	int64_t		version = 0;
	bool		ok;
	const char *kind;
	int			k;
	char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];
	bool		result = false;

	memset(round, 0, sizeof(UldpLocalRound));
	if (json == NULL)
		return false;
	if (json->type != ULDP_JSON_OBJECT)
	{
		uldp_local_fail(error, "a round must be a JSON object");
		uldp_local_hint(error, "See doc/local.md for the round object.");
		goto done;
	}
	if (!read_int64(json, "v", true, &version, error))
		goto done;
	if (version != ULDP_LOCAL_FORMAT)
	{
		uldp_local_fail(error, "unsupported round format %lld", (long long) version);
		uldp_local_hint(error, "This client reads format %d; update the client or the server so that they agree.",
						ULDP_LOCAL_FORMAT);
		goto done;
	}
	kind = read_string(json, "kind", &ok, error);
	if (!ok)
		goto done;
	if (kind == NULL)
	{
		missing("kind", "the round", error);
		goto done;
	}
	for (k = 0; k < KIND_COUNT; k++)
		if (strcmp(kind, kind_names[k]) == 0)
			break;
	if (k == KIND_COUNT)
	{
		uldp_local_fail(error, "unknown round kind \"%s\"", uldp_local_excerpt(kind, excerpt));
		uldp_local_hint(error, "The kind is range, mean, vector_range, vector_mean or gradient.");
		goto done;
	}
	round->kind = (UldpLocalKind) k;
	if (!check_keys(json, round->kind, error) ||
		!read_int64(json, "id", true, &round->id, error) ||
		!read_double(json, "epsilon", true, &round->epsilon, error))
		goto done;
	if (!(round->epsilon >= MIN_EPSILON && round->epsilon <= MAX_EPSILON))
	{
		uldp_local_fail(error, "epsilon %g is out of range", round->epsilon);
		uldp_local_hint(error, "Epsilon must be at least %g and at most %g.", MIN_EPSILON, MAX_EPSILON);
		goto done;
	}
	result = read_kind(json, round, error);
done:
	uldp_json_free(json);
	if (!result)
		uldp_local_round_free(round);
	return result;
}

void
uldp_local_round_free(UldpLocalRound *round)
{
	if (round->lower != NULL)
		uldp_local_free(round->lower);
	if (round->upper != NULL)
		uldp_local_free(round->upper);
	if (round->weights != NULL)
		uldp_local_free(round->weights);
	round->lower = round->upper = round->weights = NULL;
}

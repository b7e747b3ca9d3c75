/*-------------------------------------------------------------------------
 *
 * ldpdecode.c
 *	  The result of a round of the local protocol, from its reports
 *	  (Girgis, Data and Diggavi, "Distributed User-Level Private Mean
 *	  Estimation").  Reports are added one at a time, in any order: every
 *	  sum is exact (integers), so the result does not depend on the order.
 *
 * Range rounds (Algorithm 3).  A report (j, s) says s = +-H(j, bin); its
 * vector is z = c_eps * s * H(j, .), with c_eps = (e^eps + 1)/(e^eps - 1),
 * so the average report is z(a) = c_eps * (H h)(a) / n, where h(j) is the
 * sum of the signs of the reports with row j and H h its Walsh-Hadamard
 * transform.  z(a) estimates the fraction of users whose mean lies in bin
 * a.  a_max is the bin a < k with the largest z(a), the lowest of equal
 * ones: as c_eps / n > 0, the argmax of H h.  The range is a_max's
 * midpoint +-3 tau, within [-bound, bound], if a_max is "found": if its
 * estimate stands out from the noise, so that some user's mean lies in
 * it except with probability RANGE_FAILURE.  Otherwise (too few users for
 * this epsilon) a_max may be noise, a range around it could leave every
 * user out, and the result is the whole [-bound, bound]: the mean round
 * that follows is then the naive one, never worse.  The test: each
 * report's s H(j, a) lies in [-1, 1] and has mean f(a) / c' (f(a) the
 * users' share in bin a, c' = c_eps' at the sampler's epsilon' <= eps),
 * so by Hoeffding and a union bound over the k bins (of every coordinate),
 * |(H h)(a) / n - f(a) / c'| < u = sqrt(2 ln(2 cells / RANGE_FAILURE) / n)
 * for all of them except with probability RANGE_FAILURE; (H h)(a_max) > n u
 * then implies f(a_max) > 0.
 *
 * Vector range rounds do the same per rotated coordinate, over the reports
 * of that coordinate (Algorithm 5; each report carries one coordinate, see
 * doc/privacy.md).
 *
 * Mean rounds (Algorithm 2).  A report is a level of the grid over the
 * round's interval plus integer noise of mean 0; the estimate is the value
 * of the average level, which is unbiased for the average of the users'
 * projected means, and its 95% interval is +-1.959964 standard errors of
 * that average: sqrt(variance of one report / n).  The interval covers the
 * noise only; it says nothing of how far the projection moved the users'
 * means (none, when the range round succeeded).
 *
 * Vector mean and gradient rounds (Algorithm 5).  Per rotated coordinate
 * l, z_l is the average value of the reports with coordinate l; the
 * estimate is U^-1 z, truncated to the round's dimension.  The inverse
 * rotation gives every coordinate the weight 1/P of each z_l's variance,
 * so each coordinate's 95% half-width is 1.959964 sqrt(sum_l var_l / n_l
 * / P).  A coordinate without reports takes its interval's centre, whose
 * error is at most half the interval: its square stands for var_l / n_l.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "common/shortest_dec.h"
#include "lib/stringinfo.h"

#include "ldpdecode.h"
#include "local/kinds.h"

/* the standard normal's 97.5% quantile: two-sided 95% intervals */
#define Z_95 1.959964
/*
 * the probability, whatever the users' data, that a range round publishes
 * a range around a bin that holds no user's mean
 */
#define RANGE_FAILURE 1e-6

struct UldpLdpDecoder
{
	const UldpLocalRound *round;
	int			coordinates;	/* 1 for scalar rounds, else padded */
	int64		reports;
	int64	   *counts;			/* reports per coordinate */
	double	   *signs;			/* range kinds: h of each coordinate, K each */
	int128	   *levels;			/* mean kinds: sum of the levels */
};

UldpLdpDecoder *
uldp_ldp_decoder_create(const UldpLocalRound *round)
{
	UldpLdpDecoder *decoder = palloc0(sizeof(UldpLdpDecoder));

	decoder->round = round;
	decoder->coordinates = uldp_local_is_vector(round->kind) ? round->padded : 1;
	decoder->counts = palloc0(decoder->coordinates * sizeof(int64));
	if (uldp_local_is_range(round->kind))
	{
		/* uldp.ldp_round refused rounds above ULDP_LDP_MAX_RANGE_CELLS */
		Assert(decoder->coordinates * round->hadamard_size <= ULDP_LDP_MAX_RANGE_CELLS);
		decoder->signs = palloc_extended(decoder->coordinates * round->hadamard_size * sizeof(double),
										 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
	else
		decoder->levels = palloc0(decoder->coordinates * sizeof(int128));
	return decoder;
}

/* Adds one report, as uldp_local_report_parse accepted it for the round. */
void
uldp_ldp_decoder_add(UldpLdpDecoder *decoder, const UldpLocalReport *report)
{
	int			l = uldp_local_is_vector(decoder->round->kind) ? report->coordinate : 0;

	Assert(l >= 0 && l < decoder->coordinates);
	decoder->reports++;
	decoder->counts[l]++;
	if (decoder->signs != NULL)
	{
		Assert(report->index >= 0 && report->index < decoder->round->hadamard_size);
		decoder->signs[l * decoder->round->hadamard_size + report->index] += report->sign;
	}
	else
		decoder->levels[l] += report->level;
}

/* "key": [v1, v2, ...] */
static void
append_array(StringInfo out, const char *key, const double *values, int count)
{
	appendStringInfo(out, "\"%s\": [", key);
	for (int i = 0; i < count; i++)
		appendStringInfo(out, "%s%s", i > 0 ? ", " : "", double_to_shortest_decimal(values[i]));
	appendStringInfoChar(out, ']');
}

/*
 * The range of coordinate l: the midpoint of the heavy-hitter bin +-3 tau,
 * within [-bound, bound], if the bin is found; otherwise all of
 * [-bound, bound].  Returns whether it was found.
 */
static bool
decode_range(UldpLdpDecoder *decoder, int l, double *lower, double *upper)
{
	const UldpLocalRound *round = decoder->round;
	double	   *h = &decoder->signs[l * round->hadamard_size];
	double		n = (double) decoder->counts[l];
	double		cells = (double) decoder->coordinates * round->bins;
	int64		best = 0;
	double		middle;

	*lower = -round->bound;
	*upper = round->bound;
	if (n == 0)
		return false;
	uldp_local_hadamard_transform(h, round->hadamard_size);
	for (int64 a = 1; a < round->bins; a++)
		if (h[a] > h[best])
			best = a;
	if (!(h[best] > 0 && h[best] * h[best] > 2 * n * log(2 * cells / RANGE_FAILURE)))
		return false;
	middle = uldp_local_bin_midpoint(round, best);
	*lower = Max(*lower, middle - 3 * round->tau);
	*upper = Min(*upper, middle + 3 * round->tau);
	return true;
}

/* The average level of coordinate l (which has reports), without rounding the sum. */
static double
mean_level(const UldpLdpDecoder *decoder, int l)
{
	int64		n = decoder->counts[l];

	return (double) (decoder->levels[l] / n) + (double) (decoder->levels[l] % n) / n;
}

static void
range_result(UldpLdpDecoder *decoder, StringInfo out)
{
	int			coordinates = decoder->coordinates;
	double	   *lower = palloc(coordinates * sizeof(double));
	double	   *upper = palloc(coordinates * sizeof(double));
	bool	   *found = palloc(coordinates * sizeof(bool));

	for (int l = 0; l < coordinates; l++)
		found[l] = decode_range(decoder, l, &lower[l], &upper[l]);
	if (decoder->round->kind == ULDP_LOCAL_RANGE)
		appendStringInfo(out, "{\"lower\": %s, \"upper\": %s, \"found\": %s",
						 double_to_shortest_decimal(lower[0]), double_to_shortest_decimal(upper[0]),
						 found[0] ? "true" : "false");
	else
	{
		appendStringInfoChar(out, '{');
		append_array(out, "lower", lower, coordinates);
		appendStringInfoString(out, ", ");
		append_array(out, "upper", upper, coordinates);
		appendStringInfoString(out, ", \"found\": [");
		for (int l = 0; l < coordinates; l++)
			appendStringInfo(out, "%s%s", l > 0 ? ", " : "", found[l] ? "true" : "false");
		appendStringInfoChar(out, ']');
	}
}

static void
scalar_mean_result(UldpLdpDecoder *decoder, StringInfo out)
{
	const UldpLocalRound *round = decoder->round;
	double		estimate;
	double		half_width;

	if (decoder->reports == 0)
	{
		estimate = (round->lower[0] + round->upper[0]) / 2;
		half_width = (round->upper[0] - round->lower[0]) / 2;
	}
	else
	{
		estimate = uldp_local_level_value(round, 0, mean_level(decoder, 0));
		half_width = Z_95 * sqrt(uldp_local_report_variance(round, 0) / decoder->reports);
	}
	appendStringInfo(out, "{\"estimate\": %s, \"ci_lower\": %s, \"ci_upper\": %s",
					 double_to_shortest_decimal(estimate),
					 double_to_shortest_decimal(estimate - half_width),
					 double_to_shortest_decimal(estimate + half_width));
}

static void
vector_mean_result(UldpLdpDecoder *decoder, StringInfo out)
{
	const UldpLocalRound *round = decoder->round;
	int			padded = round->padded;
	int			dimension = round->dimension;
	double	   *z = palloc(padded * sizeof(double));
	double	   *ci_lower = palloc(dimension * sizeof(double));
	double	   *ci_upper = palloc(dimension * sizeof(double));
	double		variance = 0;
	double		half_width;

	for (int l = 0; l < padded; l++)
	{
		double		half_interval = (round->upper[l] - round->lower[l]) / 2;

		if (decoder->counts[l] == 0)
		{
			z[l] = round->lower[l] + half_interval;
			variance += half_interval * half_interval;
		}
		else
		{
			z[l] = uldp_local_level_value(round, l, mean_level(decoder, l));
			variance += uldp_local_report_variance(round, l) / decoder->counts[l];
		}
	}
	uldp_local_rotate(round, z, true);
	half_width = Z_95 * sqrt(variance / padded);
	for (int k = 0; k < dimension; k++)
	{
		ci_lower[k] = z[k] - half_width;
		ci_upper[k] = z[k] + half_width;
	}
	appendStringInfoChar(out, '{');
	append_array(out, "estimate", z, dimension);
	appendStringInfoString(out, ", ");
	append_array(out, "ci_lower", ci_lower, dimension);
	appendStringInfoString(out, ", ");
	append_array(out, "ci_upper", ci_upper, dimension);
}

/*
 * The round's result as JSON text:
 *	range: {"lower", "upper", "found", "reports"}
 *	vector_range: {"lower": [padded], "upper": [padded], "found": [padded],
 *				   "reports"}
 *	mean: {"estimate", "ci_lower", "ci_upper", "reports"}
 *	vector_mean, gradient: the same with arrays of the round's dimension
 * (the gradient round's estimate is the users' mean clipped gradient).
 * The decoder's memory is not freed (range kinds transform it in place).
 */
char *
uldp_ldp_decoder_result(UldpLdpDecoder *decoder)
{
	StringInfoData out;

	initStringInfo(&out);
	switch (decoder->round->kind)
	{
		case ULDP_LOCAL_RANGE:
		case ULDP_LOCAL_VECTOR_RANGE:
			range_result(decoder, &out);
			break;
		case ULDP_LOCAL_MEAN:
			scalar_mean_result(decoder, &out);
			break;
		case ULDP_LOCAL_VECTOR_MEAN:
		case ULDP_LOCAL_GRADIENT:
			vector_mean_result(decoder, &out);
			break;
	}
	appendStringInfo(&out, ", \"reports\": " INT64_FORMAT "}", decoder->reports);
	return out.data;
}

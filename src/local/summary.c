/*-------------------------------------------------------------------------
 *
 * summary.c
 *	  A user's summary of their m sample rows: the one number or vector
 *	  that the report privatizes.
 *
 * The summary is defined for every input, since a report must exist (and
 * be private) whatever the user's data: rows with a NaN are dropped,
 * entries are clipped to +-ULDP_LOCAL_LARGEST (so infinities become large
 * numbers), then
 *	- mean rounds: nothing more; the report projects the mean onto
 *	  [lower, upper] (Algorithm 2);
 *	- range and vector rounds: each row is clipped to the l2 ball of radius
 *	  bound (for one number, the interval [-bound, bound]);
 *	- model rounds: each row (features, label) becomes the gradient of the
 *	  loss at the round's model, clipped to the l2 ball of radius clip
 *	  (Algorithm 6).
 * The rows are averaged with a running mean, which cannot overflow: each
 * step adds (row - mean) / count, and both terms are at most LARGEST in
 * absolute value.  With no usable row (m = 0, or only NaN rows) the summary
 * is 0, which the report projects onto the round's interval like any other
 * mean.  Vector summaries are padded with zeros and rotated by the round's
 * U (hadamard.c).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "error.h"
#include "host.h"
#include "kinds.h"
#include "sigmoid.h"
#include "summary.h"

static double
clip_entry(double x)
{
	return x > ULDP_LOCAL_LARGEST ? ULDP_LOCAL_LARGEST :
		x < -ULDP_LOCAL_LARGEST ? -ULDP_LOCAL_LARGEST : x;
}

/*
 * x (n entries, each finite) <- its projection onto the l2 ball of the
 * given radius.  The norm is computed as scale * ratio, scale the largest
 * magnitude, so that squaring overflows nothing; x / scale * (radius /
 * ratio) has norm radius and no intermediate above max(|x_i|, radius).
 */
static void
clip_l2(double *x, int n, double radius)
{
	double		scale = 0;
	double		sum = 0;
	double		ratio;

	for (int i = 0; i < n; i++)
		scale = fmax(scale, fabs(x[i]));
	if (scale == 0)
		return;
	for (int i = 0; i < n; i++)
		sum += (x[i] / scale) * (x[i] / scale);
	ratio = sqrt(sum);
	if (ratio <= radius / scale)
		return;
	for (int i = 0; i < n; i++)
		x[i] = x[i] / scale * (radius / ratio);
}

/*
 * row (features, label) <- the gradient at the round's model (weights w,
 * intercept b) of the loss of that sample, with the features first clipped
 * to the l2 ball of feature_radius and the gradient then to that of clip.
 * With z = w.x + b, the residual r is sigmoid(z) - label (logistic loss,
 * label clipped to [0, 1]) or z - label (squared loss, (z - label)^2 / 2),
 * and the gradient is r (x, 1).  Every product and partial sum is clipped
 * to +-LARGEST, so that no weight, however large, makes an infinity or a
 * NaN (whose difference would be undefined).
 */
static void
gradient(const UldpLocalRound *round, double *row)
{
	int			features = round->dimension - 1;
	double		label = row[features];
	double		z = clip_entry(round->weights[features]);
	double		residual;

	clip_l2(row, features, round->feature_radius);
	for (int i = 0; i < features; i++)
		z = clip_entry(z + clip_entry(round->weights[i] * row[i]));
	if (round->loss == ULDP_LOCAL_LOGISTIC)
		residual = uldp_sigmoid(z) - fmin(fmax(label, 0), 1);
	else
		residual = clip_entry(z - label);
	for (int i = 0; i < features; i++)
		row[i] = clip_entry(residual * row[i]);
	row[features] = residual;
	clip_l2(row, features + 1, round->clip);
}

bool
uldp_local_summary(const UldpLocalRound *round, const double *samples,
				   int64_t m, double *summary, UldpLocalError *error)
{
	int			width = round->row_width;
	double	   *row = uldp_local_alloc(width * sizeof(double));
	int64_t		used = 0;

	if (row == NULL)
	{
		uldp_local_fail(error, "out of memory summarizing samples");
		return uldp_local_hint(error, "Free some memory and try again.");
	}
	memset(summary, 0, round->padded * sizeof(double));
	for (int64_t s = 0; s < m; s++)
	{
		const double *in = samples + s * width;
		bool		has_nan = false;

		for (int i = 0; i < width; i++)
		{
			has_nan = has_nan || isnan(in[i]);
			row[i] = clip_entry(in[i]);
		}
		if (has_nan)
			continue;
		if (round->loss != ULDP_LOCAL_NO_MODEL)
			gradient(round, row);
		else if (round->kind != ULDP_LOCAL_MEAN)
			clip_l2(row, width, round->bound);
		used++;
		for (int i = 0; i < width; i++)
			summary[i] += (row[i] - summary[i]) / (double) used;
	}
	uldp_local_free(row);
	if (uldp_local_is_vector(round->kind))
		uldp_local_rotate(round, summary, false);
	return true;
}

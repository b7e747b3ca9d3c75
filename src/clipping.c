/*-------------------------------------------------------------------------
 *
 * clipping.c
 *	  The interval that user_dp_mean and user_dp_sum clip each user's value
 *	  to, and the centre their sums are taken around.
 *
 * With both bounds and no tau the interval is the bounds: the naive
 * mechanism, for free.  Narrowing public bounds from the data would pay
 * twice: its share of epsilon adds noise everywhere, and a mechanism that
 * narrows [L, U] to exclude U with probability p on some data must, being
 * epsilon'-DP, still narrow with probability p exp(-epsilon' k) once k
 * users are moved to U, where its bias, k (U - L) / n, is k epsilon units
 * of the naive noise.  Never being worse than naive on every input leaves
 * it little to gain (doc/accuracy.md), so the bounds are kept as given.
 *
 * With tau (and both bounds), the interval is PrivateRange's (range.c).
 *
 * Otherwise (one bound or none):
 *	1. a centre m and a scale s: for a mean, m is the private median
 *	   (range.c, a floating-point grid, scale free); for a sum, m is 0 (or
 *	   the bound nearest to it), since a sum is taken around 0 anyway and
 *	   its noise, of sensitivity max(|lower|, |upper|), gains nothing from
 *	   a centre elsewhere.  s is the private median distance from m of the
 *	   users that do not share m's value (off_atom_scale);
 *	2. a ladder of half-widths t_j = s 2^(j / 2), j = 0, 1, ..., up to
 *	   LADDER_OCTAVES octaves (or the values' width), and one selection by
 *	   the exponential mechanism with score #{users with |x - m| > t_j}
 *	   (monotone, sensitivity 1) and a prior exp(-LADDER_DECAY) per octave.
 *	   The score counts the users a half-width clips; the prior stands for
 *	   the noise a wider interval costs, so the selection settles where the
 *	   users beyond fall below about LADDER_DECAY / epsilon per octave:
 *	   clipping the top few users of a heavy tail, as the best fixed
 *	   clipping in hindsight does (doc/accuracy.md), and never far above the
 *	   farthest user, since each further octave loses a factor
 *	   exp(LADDER_DECAY).
 *	The interval is [m - t, m + t] within the bounds.  One half-width serves
 *	both sides: the sum's sensitivity is the larger of the two distances
 *	from the centre anyway, so clipping the lighter tail closer would only
 *	add bias.
 *
 * Each step is epsilon-DP for its share; the shares, which depend only on
 * public parameters and an already released noisy count, add up to at most
 * the release's epsilon (adaptive basic composition).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "clipping.h"
#include "fixedsum.h"
#include "noise.h"
#include "range.h"

/*
 * Shares of a release's epsilon spent on the interval, without bounds.
 *
 * A mean's interval: at most two counts (ULDP_CLIPPING_COUNT_SHARE each),
 * two medians (MAX_SHARE_MEDIAN each) and the ladder, together at most
 * MAX_SHARE_INTERVAL, so that the sum always keeps 0.3 of epsilon,
 * whatever the noisy counts say.  The median and the scale each get
 * between MIN_SHARE_MEDIAN and MAX_SHARE_MEDIAN of epsilon, enough for
 * MEDIAN_USERS_EPSILON / (noisy count of users): the exponential mechanism
 * beats the 2^36 keys of a scale-free grid (e^25) when n epsilon / 2, the
 * score gap between the median and values beyond all users, is well above
 * 25: 40 leaves a chance of e^-15 to land away from the data.  Neither
 * needs more: the centre only has to lie among the users and the scale
 * only anchors the ladder, which spans 64 octaves.  The ladder gets
 * SHARE_LADDER, or what the cap leaves when few users made the medians
 * dear: with many users the interval costs 0.44 of epsilon, and the
 * selection is the share that pays (doc/accuracy.md has the tuning).
 *
 * A sum's interval: one count, the scale and the ladder, at most 0.5 of
 * epsilon.  Its ladder gets SUM_SHARE_LADDER: a sum's error grows with
 * every clipped user's excess, so it pays to clip fewer users (the best
 * fixed clipping of a sum clips about 1.4 / epsilon users), and a sharper
 * selection of the same prior clips fewer; the sum keeps at least 0.5 of
 * epsilon for its noise.
 */
#define SHARE_LADDER 0.3
#define MAX_SHARE_INTERVAL 0.7
#define MIN_SHARE_MEDIAN 0.02
#define MAX_SHARE_MEDIAN 0.2
#define MEDIAN_USERS_EPSILON 80.0
#define SUM_SHARE_LADDER 0.25

#define LADDER_STEPS_PER_OCTAVE 2
#define LADDER_OCTAVES 64
#define LADDER_CANDIDATES (LADDER_OCTAVES * LADDER_STEPS_PER_OCTAVE + 1)
/* log of the prior's decay per octave of the ladder */
#define LADDER_DECAY 2.5

/* The half-widths, in order: scale 2^(j / 2), up to "widest". */
static int
ladder(double scale, double widest, double *candidates)
{
	int			count = 0;

	for (int j = 0; j < LADDER_CANDIDATES; j++)
	{
		double		candidate = ldexp(scale, j / LADDER_STEPS_PER_OCTAVE) *
			(j % LADDER_STEPS_PER_OCTAVE ? M_SQRT2 : 1);

		/* the widest half-width is the last candidate */
		if (!(candidate < widest))
		{
			candidates[count++] = widest;
			break;
		}
		candidates[count++] = candidate;
	}
	return count;
}

/*
 * Selects the half-width: adding or removing a user changes each
 * candidate's count of users beyond it by 0 or 1, in the same direction,
 * so the selection is epsilon-DP.
 */
static double
private_half_width(const double *values, int64 n, double centre, double scale,
				   double widest, double epsilon)
{
	double		candidates[LADDER_CANDIDATES];
	int64		histogram[LADDER_CANDIDATES + 1] = {0};
	long double beyond[LADDER_CANDIDATES];
	int			count = ladder(scale, widest, candidates);
	UldpCandidateWalk walk = {beyond, count,
	-LADDER_DECAY * M_LOG2E / LADDER_STEPS_PER_OCTAVE};
	UldpSegmentSource source = uldp_candidate_walk_source(&walk);

	/*
	 * histogram[k]: users beyond exactly the first k half-widths.  The
	 * ladder's steps are half-octaves from the scale, so the binary
	 * exponent of distance / scale names the step to within one, and a
	 * comparison or two with the candidates themselves settles it.
	 */
	for (int64 i = 0; i < n; i++)
	{
		double		distance = fabs(values[i] - centre);
		int			exponent;
		double		mantissa = frexp(distance / scale, &exponent);
		int			k = 2 * (exponent - 1) + (mantissa > M_SQRT1_2);

		k = Min(Max(k, 0), count);
		while (k < count && distance > candidates[k])
			k++;
		while (k > 0 && !(distance > candidates[k - 1]))
			k--;
		histogram[k]++;
	}
	/* users beyond each candidate: exact in a long double (below 2^63) */
	beyond[count - 1] = histogram[count];
	for (int j = count - 2; j >= 0; j--)
		beyond[j] = beyond[j + 1] + histogram[j + 1];
	return candidates[uldp_exponential_select(&source, epsilon)];
}

/*
 * Whether a release of "epsilon" with "noisy_users" can choose an interval
 * without bounds: the median needs MEDIAN_USERS_EPSILON / epsilon users
 * with its largest share; with fewer it would land anywhere on its grid.
 * Post-processing of a released count.
 */
bool
uldp_clipping_possible(const UldpParams *params, double epsilon, int128 noisy_users)
{
	return params->has_bounds ||
		(double) noisy_users * epsilon * MAX_SHARE_MEDIAN >= MEDIAN_USERS_EPSILON;
}

/* The share of epsilon of a scale-free median over "noisy_users" users */
static double
median_share(int128 noisy_users, double epsilon)
{
	double		share = MEDIAN_USERS_EPSILON / (double) Max(noisy_users, 1);

	return Min(Max(share, epsilon * MIN_SHARE_MEDIAN), epsilon * MAX_SHARE_MEDIAN);
}

/*
 * The scale of the users' spread: the median distance from the centre of
 * the users that do not share its value.  For continuous data that is the
 * median absolute deviation; when most users share the centre's value (a
 * rare flag, zero-inflated amounts), the MAD would be 0, or, worse, a
 * selection from the gap of tiny magnitudes below the smallest positive
 * distance, which the exponential mechanism favours for its 2^30 keys,
 * while the other users' distances keep their scale.  A noisy count of the
 * users farther than "atom" from the centre sets the median's share and
 * decides whether they are enough for a scale-free median
 * (post-processing of a released count).  Returns 0 when they are too
 * few; *spent receives the epsilon spent.  Adding or removing a user
 * changes the count by at most one and the set of distances by at most one
 * element, so each step is DP for its share.
 */
static double
off_atom_scale(const double *values, int64 n, bool sorted, double centre, double atom,
			   double width, double epsilon, double *spent)
{
	double		count_epsilon = epsilon * ULDP_CLIPPING_COUNT_SHARE;
	int64		k;
	double	   *distances = uldp_distances(values, n, sorted, centre, atom, &k);
	int128		noisy;
	double		share;
	double		scale = 0;

	noisy = k + uldp_discrete_laplace(1, count_epsilon);
	*spent = count_epsilon;
	if ((double) noisy * epsilon * MAX_SHARE_MEDIAN >= MEDIAN_USERS_EPSILON)
	{
		share = median_share(noisy, epsilon);
		scale = uldp_private_median(distances, k, sorted, 0, width, 0, share);
		*spent += share;
	}
	pfree(distances);
	return scale;
}

/*
 * The interval for a release of "epsilon" in all; "noisy_users" is a noisy
 * count of the users the release has already drawn (it sets the shares: a
 * function of a released value).  clipping.epsilon is what the interval
 * spent.
 */
UldpClipping
uldp_private_clipping(const double *values, int64 n, bool sorted,
					  const UldpParams *params, double epsilon, int128 noisy_users)
{
	UldpClipping clipping;
	double		share;
	double		width;
	double		scale;
	double		atom;
	double		spent;
	double		ladder_epsilon;
	double		half_width;

	if (params->has_tau)
	{
		double		range_epsilon = uldp_range_is_public(params) ? 0 : epsilon / 2;
		UldpInterval range = uldp_private_range(values, n, sorted, params, range_epsilon);

		clipping.lower = range.lower;
		clipping.upper = range.upper;
		clipping.centre = uldp_bounds_centre(range.lower, range.upper);
		clipping.epsilon = range_epsilon;
		return clipping;
	}
	if (params->has_bounds)
	{
		clipping.lower = params->lower;
		clipping.upper = params->upper;
		clipping.centre = uldp_bounds_centre(params->lower, params->upper);
		clipping.epsilon = 0;
		return clipping;
	}

	share = median_share(noisy_users, epsilon);
	clipping.epsilon = share;

	clipping.centre = uldp_private_median(values, n, sorted, params->lower, params->upper,
										  0, share);
	clipping.centre = Min(Max(clipping.centre, params->lower), params->upper);
	width = params->upper - params->lower;
	/* users within the centre's grid bin (relative 2^-25) share its value */
	atom = Max(ldexp(fabs(clipping.centre), -22), DBL_MIN);
	scale = off_atom_scale(values, n, sorted, clipping.centre, atom, width, epsilon,
						   &spent);
	clipping.epsilon += spent;
	/* the count of users was drawn before, with its share */
	ladder_epsilon = Min(epsilon * SHARE_LADDER,
						 epsilon * (MAX_SHARE_INTERVAL - ULDP_CLIPPING_COUNT_SHARE) -
						 clipping.epsilon);
	clipping.epsilon += ladder_epsilon;
	/* with no scale (too few users away from the centre), the ladder starts
	 * at the atom: users away from the centre are clipped onto it */
	scale = Max(scale, atom);
	Assert(ladder_epsilon > 0);
	half_width = private_half_width(values, n, clipping.centre, Min(scale, width),
									width, ladder_epsilon);
	clipping.lower = Max(clipping.centre - half_width, params->lower);
	clipping.upper = Min(clipping.centre + half_width, params->upper);
	return clipping;
}

/*
 * The interval of a sum without both bounds, around the public centre 0
 * (or the bound nearest to it): the scale of the users away from the
 * centre, then the ladder.  Returns false when a noisy count shows too few
 * users away from the centre for a scale-free median (post-processing of a
 * released count); clipping->epsilon is what was spent either way.
 */
bool
uldp_private_sum_clipping(const double *values, int64 n, bool sorted,
						  const UldpParams *params, double epsilon, UldpClipping *clipping)
{
	double		width = params->upper - params->lower;
	double		scale;
	double		half_width;

	clipping->centre = Min(Max(0, params->lower), params->upper);
	scale = off_atom_scale(values, n, sorted, clipping->centre, 0, width, epsilon,
						   &clipping->epsilon);
	if (!(scale > 0))
		return false;
	clipping->epsilon += epsilon * SUM_SHARE_LADDER;
	Assert(clipping->epsilon <= 0.5 * epsilon);
	half_width = private_half_width(values, n, clipping->centre, Min(scale, width),
									width, epsilon * SUM_SHARE_LADDER);
	clipping->lower = Max(clipping->centre - half_width, params->lower);
	clipping->upper = Min(clipping->centre + half_width, params->upper);
	return true;
}

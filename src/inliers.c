/*-------------------------------------------------------------------------
 *
 * inliers.c
 *	  Outlier removal among points one of which a user can move, add or
 *	  remove (the iterates of groups of users, a user in one group, a
 *	  group without users absent): the inlier weight and mean of Lowy, Liu
 *	  and Asi (2024, Algorithm 1, after Asi and Liu 2024 and FriendlyCore,
 *	  Tsfadia et al. 2022), with deterministic weights.
 *
 * For n >= 2 points and a radius r, h(j) is the number of points within r
 * of point j, j itself included, and point j weighs
 *
 *		w(j) = max(0, 2 h(j) - n - 1) / (n - 1),
 *
 * 0 unless at least n / 2 + 1 points are its neighbours, 1 when all are.
 * The inlier weight is W = sum w(j) (n when every pair lies within r) and
 * the inlier mean is mu = sum w(j) x_j / W.
 *
 * Lemma.  Let X' be X with one point moved, added or removed.
 *	(a) |W(X) - W(X')| <= 3.
 *	(b) If W(X) > 3, then |mu(X) - mu(X')| <= 8 r / W(X).
 *
 * Proof.  Write v(j) = (n - 1) w(j) = max(0, 2 h(j) - n - 1), an integer,
 * and V = sum v(j) = (n - 1) W.
 * (a) Moved, n fixed: every other point's h changes by at most 1, so its v
 * by at most 2, and the moved point's v lies in [0, n - 1] before and
 * after: |V - V'| <= 3 (n - 1).  Added, n + 1 points in X': every old
 * point's h rises by 0 or 1 while n + 1 rises by 1, so its v moves by at
 * most 1, and the new point's v' lies in [0, n]; with V = (n - 1) W and
 * V' = n W', W' - W = (V' - V - W) / n lies in [(-n - W) / n, (2 n - W) / n],
 * within [-2, 2] since 0 <= W <= n.  Removed: the same, exchanged.
 * (b) Any two points of positive weight, in X or in X', lie within 2 r:
 * they have more neighbours between them than there are points, so they
 * share one.  Within X (or X') each has at least n / 2 + 1; a point u of
 * both, of positive weight in X, keeps at least n / 2 neighbours in X'
 * when a point moves (n / 2 + 1 when one is added, of n + 1), which with
 * the n / 2 + 1 of a point of positive weight in X' (n / 2 + 3 / 2 of
 * n + 1) make more than n (n + 1); a moved point's old and new positions
 * each have at least n / 2 neighbours among the n - 1 others, more than
 * n - 1 together.  mu is a convex combination of the points of positive
 * weight in X, so every such point of X or X' lies within 2 r of mu.  By
 * (a) W(X') > 0, and with sum v'(j) (x'_j - mu') = 0 = sum v(j) (x_j - mu),
 * mu' - mu = sum_j (v'(j) x'_j - v(j) x_j - (v'(j) - v(j)) mu) / V' over the
 * points of X and X', where only points of positive weight in X or X'
 * contribute, at most 2 r times sum |v'(j) - v(j)| over the points of both
 * plus v' and v of the point that differs: 4 (n - 1) when a point moves
 * (|mu' - mu| <= 8 r (n - 1) / V' = 8 r / W'), 2 n when one is added
 * (4 r n / V' = 4 r / W').  Exchanging the roles of X and X' bounds it by
 * 8 r / W, which (a) lets us apply.  (With a threshold of n / 2 instead of
 * n / 2 + 1, as in the paper and FriendlyCore, a point of X and one of X'
 * need not share a neighbour when a point moves, and the bound grows by
 * more than half.)  Unlike the paper's random inclusion of each point with
 * probability w(j), which bounds the change only with high probability,
 * these weights bound it always.
 *
 * Numbers.  W is released as the integer floor(1024 V / (n - 1)), which
 * moves by at most 3 * 1024 + 1 (ULDP_INLIERS_WEIGHT_SENSITIVITY).  Each
 * pair's distance is computed once and compared with r once, so h is a
 * function of the points and "within r" means within r up to the rounding
 * of a sum of squares: uldp_inliers_mean_sensitivity widens r by 2^-30 for
 * it.  The mean is summed in long double and rounded once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "inliers.h"

/* the relative error allowed for a distance compared with the radius */
#define DISTANCE_SLACK 0x1p-30

static double
distance2(const double *a, const double *b, int dim)
{
	double		sum = 0;

	for (int j = 0; j < dim; j++)
		sum += (a[j] - b[j]) * (a[j] - b[j]);
	return sum;
}

/*
 * pairs[k] <- the number of pairs of the n points within
 * top 2^(-k / rungs_per_binade) of each other, for k < nradii (radii
 * decreasing from top): a pair counts for the radii down to its
 * distance's rung.  O(n^2 dim).
 */
void
uldp_inlier_pairs_within(const double *points, int64 n, int dim, double top,
						 int rungs_per_binade, int nradii, int64 *pairs)
{
	double		log2_top = log2(top);

	memset(pairs, 0, nradii * sizeof(int64));
	for (int64 i = 0; i < n; i++)
		for (int64 k = i + 1; k < n; k++)
		{
			double		d2 = distance2(&points[i * dim], &points[k * dim], dim);
			double		rung = d2 > 0 ?
				floor(rungs_per_binade * (log2_top - 0.5 * log2(d2))) : nradii - 1;

			if (rung >= 0)
				pairs[(int) Min(rung, nradii - 1)]++;
		}
	/* a pair whose rung is k lies within radii 0 ... k */
	for (int k = nradii - 2; k >= 0; k--)
		pairs[k] += pairs[k + 1];
}

/*
 * counts[i] <- h of point i: the number of the n points within "radius"
 * of it, itself included.  O(n^2 dim).
 */
void
uldp_inlier_neighbours(const double *points, int64 n, int dim, double radius,
					   int64 *counts)
{
	double		limit = radius * radius;

	for (int64 i = 0; i < n; i++)
		counts[i] = 1;
	for (int64 i = 0; i < n; i++)
		for (int64 k = i + 1; k < n; k++)
			if (distance2(&points[i * dim], &points[k * dim], dim) <= limit)
			{
				counts[i]++;
				counts[k]++;
			}
}

/*
 * mean (dim) <- the inlier mean of the n points for their neighbour counts
 * (0 when no point weighs anything); returns the inlier weight in units of
 * 1 / ULDP_INLIERS_WEIGHT_UNIT (0 for fewer than 2 points).
 */
int64
uldp_inliers_mean(const double *points, int64 n, int dim, const int64 *counts,
				 double *mean)
{
	long double *sum = palloc0(dim * sizeof(long double));
	int64		total = 0;		/* V = (n - 1) W */

	for (int64 i = 0; i < n; i++)
	{
		int64		weight = Max(2 * counts[i] - n - 1, 0);

		total += weight;
		for (int j = 0; j < dim && weight > 0; j++)
			sum[j] += (long double) weight * points[i * dim + j];
	}
	for (int j = 0; j < dim; j++)
		mean[j] = total > 0 ? (double) (sum[j] / total) : 0;
	pfree(sum);
	return n >= 2 ? total * ULDP_INLIERS_WEIGHT_UNIT / (n - 1) : 0;
}

/*
 * (b): how far the inlier mean moves when one point moves, appears or
 * disappears, given that the inlier weight (in points) is at least
 * "weight" > 3 on one side.
 */
double
uldp_inliers_mean_sensitivity(double radius, double weight)
{
	Assert(weight > 3);
	return 8 * radius * (1 + DISTANCE_SLACK) / weight;
}

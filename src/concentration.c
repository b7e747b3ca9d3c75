/*-------------------------------------------------------------------------
 *
 * concentration.c
 *	  Outlier removal over a set of user vectors (Asi and Liu 2024, after
 *	  FriendlyCore, Tsfadia et al. 2022), with deterministic weights.
 *
 * Given n points q_1 ... q_n (one per user) and a concentration radius tau,
 * h(u) is the number of points within 2 tau of q_u, q_u itself included.
 * A point is an inlier to the degree
 *
 *		w(u) = clamp(2 h(u) / n - 1, 0, 1),
 *
 * that is, 0 unless more than half of the points are its neighbours, and 1
 * when all of them are.  The total weight W = sum w(u) is n when every pair
 * lies within 2 tau, and the inlier mean is sum w(u) q_u / W.
 *
 * Lemma (sensitivity).  Let D' be D with one more point x (n + 1 points).
 *	(a) |W(D') - W(D)| < 3, so floor(W) moves by at most 3.
 *	(b) If W(D) > 0 and W(D') > 0, the inlier means differ by at most
 *		12 tau / max(W(D), W(D')) in l2.
 *
 * Proof.  (a) Adding x raises each h(u) by 0 or 1 and n by 1; since
 * 1 <= h(u) <= n, 2 h'/(n + 1) - 2 h / n lies in (-2 / (n + 1), 2 / (n + 1)),
 * and clamping does not increase a change: the n old weights move by less
 * than 2 in all, and x adds w(x) <= 1.
 * (b) Any two points of positive weight, in D or in D', lie within 4 tau:
 * two points of D with h > n/2 each share a neighbour among the n points
 * (pigeonhole), so do two of D' among n + 1; and for u of D, v of D',
 * h'(u) >= floor(n/2) + 1 and h'(v) >= floor((n+1)/2) + 1 add up to
 * n + 2 > n + 1.  The mean mu of D is a convex combination of D's points
 * of positive weight, so every such point of D or D' is within 4 tau of
 * it.  With sum w(u) (q_u - mu) = 0,
 *		mu' - mu = [sum_u (w'(u) - w(u)) (q_u - mu) + w'(x) (q_x - mu)] / W',
 * where only points of positive weight in D or D' contribute: at most
 * (2 + 1) 4 tau / W'.  The same with the roles exchanged gives
 * 12 tau / W.  Unlike the paper's random inclusion with probability
 * w(u), which bounds the change only with high probability, these
 * weights bound it always.
 *
 * Exactness.  The weights are integers over n, clamp(2 h - n, 0, n), so
 * W and floor(W) are exact.  Distances are compared in floating point, the
 * same way for (u, v) and (v, u): a computed distance of at most 2 tau is
 * at most 2 tau (1 + 2^-30) exactly (d < 2^22 terms).  The weighted sum is
 * taken over the points rounded to a grid of step g = bound 2^-40 (each
 * moves by at most g sqrt(d) / 2, so the diameter grows by 2 g sqrt(d)), in
 * 128-bit integers, so it does not depend on the order of the points; only
 * the final division is rounded, by at most 2^-51 bound per coordinate in
 * each of the two means.  So (b) holds with
 * (12 tau (1 + 2^-30) + 6 g sqrt(d)) / W + 2^-50 bound sqrt(d), which
 * uldp_inlier_mean_sensitivity rounds up.
 *
 * Groups' points.  When the points are the models of groups of users (a
 * user in one group, a group without users absent, C groups at most), a
 * user added or removed moves one point, or adds or removes one.  A point
 * then weighs, with h(u) the number of points within r of q_u,
 *
 *		v(u) / (n - 1),  v(u) = max(0, 2 h(u) - n - 1),
 *
 * (a threshold of n/2 + 1 neighbours rather than n/2: with n/2, a point of
 * D and one of D' need not share a neighbour when a point moves), the
 * total weight W = V / (n - 1) with V = sum v(u), and the group inlier mean
 * is sum v(u) q_u / V.
 *
 * Lemma (groups).  Let D' be D with one point moved, added or removed.
 *	(a) |W(D) - W(D')| <= 3, so floor(1024 W) moves by at most 3073.
 *	(b) If W(D) > 3, the group inlier means differ by at most 8 r / W(D).
 *
 * Proof.  (a) Moved, n fixed: every other point's h changes by at most 1,
 * so its v by at most 2, and the moved point's v lies in [0, n - 1] before
 * and after: |V - V'| <= 3 (n - 1).  Added, n + 1 points in D': every old
 * point's h rises by 0 or 1 while n + 1 rises by 1, so its v moves by at
 * most 1, and the new point's lies in [0, n]; with V = (n - 1) W and
 * V' = n W', W' - W = (V' - V - W) / n lies in [(-n - W) / n, (2 n - W) / n],
 * within [-2, 2] since 0 <= W <= n.  Removed: the same, exchanged.
 * (b) Any two points of positive weight, in D or in D', have more
 * neighbours between them than there are points, so they share one and lie
 * within 2 r: within D (or D') each has at least n/2 + 1; a point u of
 * both, of positive weight in D, keeps at least n/2 neighbours in D' when
 * a point moves (n/2 + 1 of n + 1 when one is added), which with the
 * n/2 + 1 (n/2 + 3/2) of a point of positive weight in D' make more than n
 * (n + 1); a moved point's old and new places each have at least n/2
 * neighbours among the n - 1 others, more than n - 1 together.  mu is a
 * convex combination of D's points of positive weight, so every point of
 * positive weight of D or D' lies within 2 r of it.  With
 * sum v'(u) (q'_u - mu') = 0 = sum v(u) (q_u - mu), mu' - mu is
 * sum (v'(u) - v(u)) (q_u - mu) / V' over the points of both, where only
 * points of positive weight contribute and sum |v' - v| is at most
 * 4 (n - 1) (moved) or 2 n (added): |mu' - mu| <= 8 r / W' (4 r / W' when
 * added).  Exchanging D and D' gives 8 r / W, and by (a) W(D') > 0.
 * With the same rounding as above (distances within r (1 + 2^-30), points
 * on the grid g, one division), (b) holds with
 * (8 r (1 + 2^-30) + 4 g sqrt(d)) / W + 2^-50 bound sqrt(d), which
 * uldp_group_inlier_mean_sensitivity rounds up.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "concentration.h"

/* the grid of the weighted sum: bound 2^-GRID_BITS */
#define GRID_BITS 40

/*
 * counts[u] <- the number of points within l2 distance "radius" of point u,
 * itself included: n^2 / 2 distances.
 */
void
uldp_neighbour_counts(const double *points, int64 n, int dim, double radius,
					  int64 *counts)
{
	double		limit = radius * radius;

	for (int64 u = 0; u < n; u++)
		counts[u] = 1;
	for (int64 u = 0; u < n; u++)
		for (int64 v = u + 1; v < n; v++)
		{
			const double *a = &points[u * dim];
			const double *b = &points[v * dim];
			double		distance2 = 0;

			for (int j = 0; j < dim && distance2 <= limit; j++)
				distance2 += (a[j] - b[j]) * (a[j] - b[j]);
			if (distance2 <= limit)
			{
				counts[u]++;
				counts[v]++;
			}
		}
}

/*
 * sum (dim) <- the sum of weight[u] times point u rounded to the grid of
 * step bound 2^-GRID_BITS, in integers (so that it does not depend on the
 * order of the points); returns the total weight.
 */
static int64
grid_weighted_sum(const double *points, int64 n, int dim, double bound,
				  const int64 *weights, int128 *sum)
{
	double		grid = ldexp(bound, -GRID_BITS);
	int64		total = 0;

	memset(sum, 0, dim * sizeof(int128));
	for (int64 u = 0; u < n; u++)
	{
		total += weights[u];
		for (int j = 0; j < dim && weights[u] > 0; j++)
			sum[j] += (int128) weights[u] * (int64) rint(points[u * dim + j] / grid);
	}
	return total;
}

/* mean (dim) <- a sum of grid_weighted_sum over its total weight (0 if none) */
static void
grid_weighted_mean(const int128 *sum, int64 total, int dim, double bound, double *mean)
{
	double		grid = ldexp(bound, -GRID_BITS);

	for (int j = 0; j < dim; j++)
		mean[j] = total > 0 ? (double) ((long double) sum[j] / total * grid) : 0;
}

/*
 * mean (dim) <- the inlier mean of the n points for tau (0 when no point
 * has weight); returns floor(W).  Every point must lie within [-bound,
 * bound] in each coordinate (a public bound).  counts is working memory
 * for n counts.
 */
int64
uldp_inlier_mean(const double *points, int64 n, int dim, double tau,
				 double bound, int64 *counts, double *mean)
{
	int128	   *sum = palloc(dim * sizeof(int128));
	int64		total;			/* n W */

	uldp_neighbour_counts(points, n, dim, 2 * tau, counts);
	for (int64 u = 0; u < n; u++)
		counts[u] = Min(Max(2 * counts[u] - n, 0), n);
	total = grid_weighted_sum(points, n, dim, bound, counts, sum);
	grid_weighted_mean(sum, total, dim, bound, mean);
	pfree(sum);
	return n > 0 ? total / n : 0;
}

/*
 * The l2 sensitivity of uldp_inlier_mean when the larger of the two total
 * weights is at least least_weight (> ULDP_INLIER_WEIGHT_SENSITIVITY):
 * part (b) of the lemma with the rounding above, rounded up.
 */
double
uldp_inlier_mean_sensitivity(double tau, double bound, int dim,
							 double least_weight)
{
	double		spread = bound * sqrt((double) dim);

	return (12 * tau * (1 + 0x1p-30) + ldexp(spread, 3 - GRID_BITS)) / least_weight +
		ldexp(spread, -49);
}

/*
 * mean (dim) <- the group inlier mean of the n points for the radius r (0
 * when no point has weight); returns floor(1024 W), 0 for fewer than two
 * points.  Every point must lie within [-bound, bound] in each coordinate
 * (a public bound).  counts is working memory for n counts.
 */
int64
uldp_group_inlier_mean(const double *points, int64 n, int dim, double r,
					   double bound, int64 *counts, double *mean)
{
	int128	   *sum = palloc(dim * sizeof(int128));
	int64		total;			/* (n - 1) W */

	uldp_neighbour_counts(points, n, dim, r, counts);
	for (int64 u = 0; u < n; u++)
		counts[u] = Max(2 * counts[u] - n - 1, 0);
	total = grid_weighted_sum(points, n, dim, bound, counts, sum);
	grid_weighted_mean(sum, total, dim, bound, mean);
	pfree(sum);
	return n >= 2 ? total * ULDP_GROUP_INLIER_WEIGHT_UNIT / (n - 1) : 0;
}

/*
 * The l2 sensitivity of uldp_group_inlier_mean when the larger of the two
 * weights (in points) is at least least_weight (> 3): part (b) of the
 * groups' lemma with the rounding, rounded up.
 */
double
uldp_group_inlier_mean_sensitivity(double r, double bound, int dim,
								   double least_weight)
{
	double		spread = bound * sqrt((double) dim);

	Assert(least_weight > 3);
	return (8 * r * (1 + 0x1p-30) + ldexp(spread, 2 - GRID_BITS)) / least_weight +
		ldexp(spread, -49);
}

/*
 * pairs[k] <- the number of pairs of the n points within
 * top 2^(-k / rungs_per_binade) of each other, for k < nradii (radii
 * decreasing from top): a pair counts for the radii down to its distance's
 * rung.  When one point moves, is added or removed, every count moves by
 * at most n.  O(n^2 dim).
 */
void
uldp_pairs_within_ladder(const double *points, int64 n, int dim, double top,
						 int rungs_per_binade, int nradii, int64 *pairs)
{
	double		log2_top = log2(top);

	memset(pairs, 0, nradii * sizeof(int64));
	for (int64 u = 0; u < n; u++)
		for (int64 v = u + 1; v < n; v++)
		{
			const double *a = &points[u * dim];
			const double *b = &points[v * dim];
			double		distance2 = 0;
			double		rung;

			for (int j = 0; j < dim; j++)
				distance2 += (a[j] - b[j]) * (a[j] - b[j]);
			rung = distance2 > 0 ?
				floor(rungs_per_binade * (log2_top - 0.5 * log2(distance2))) : nradii - 1;
			if (rung >= 0)
				pairs[(int) Min(rung, nradii - 1)]++;
		}
	/* a pair whose rung is k lies within radii 0 ... k */
	for (int k = nradii - 2; k >= 0; k--)
		pairs[k] += pairs[k + 1];
}

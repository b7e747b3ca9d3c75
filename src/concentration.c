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
 * mean (dim) <- the inlier mean of the n points for tau (0 when no point
 * has weight); returns floor(W).  Every point must lie within [-bound,
 * bound] in each coordinate (a public bound).  counts is working memory
 * for n counts.
 */
int64
uldp_inlier_mean(const double *points, int64 n, int dim, double tau,
				 double bound, int64 *counts, double *mean)
{
	int128	   *sum = palloc0(dim * sizeof(int128));
	double		grid = ldexp(bound, -GRID_BITS);
	int64		total = 0;		/* n W */

	uldp_neighbour_counts(points, n, dim, 2 * tau, counts);
	for (int64 u = 0; u < n; u++)
	{
		int64		weight = Min(Max(2 * counts[u] - n, 0), n);

		total += weight;
		for (int j = 0; j < dim && weight > 0; j++)
			sum[j] += (int128) weight * (int64) rint(points[u * dim + j] / grid);
	}
	for (int j = 0; j < dim; j++)
		mean[j] = total > 0 ? (double) ((long double) sum[j] / total * grid) : 0;
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

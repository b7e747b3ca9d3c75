/*-------------------------------------------------------------------------
 *
 * accountant.c
 *	  The zCDP accountant: how much of a release's (epsilon, delta) each of
 *	  its mechanisms may use.
 *
 * A release that runs many mechanisms (one selection per coordinate, one
 * Gaussian sum per gradient step) is accounted in zero-concentrated DP
 * (Bun and Steinke 2016), where composition is additive: mechanisms that
 * are rho_1-, ..., rho_k-zCDP together are (rho_1 + ... + rho_k)-zCDP.  The
 * release computes the largest rho whose conversion to (epsilon, delta)
 * stays within what was charged, and splits that rho.  The conversion is
 * that of Canonne, Kamath and Steinke (2020, Corollary 13): rho-zCDP
 * implies (epsilon, delta)-DP for
 *
 *		delta = inf over a > 1 of exp((a-1)(a rho - epsilon)) (1-1/a)^(a-1) / a,
 *
 * which is tighter than both the strong composition theorem used by Levy
 * et al. and the classical delta = exp(-(epsilon - rho)^2 / (4 rho)).  Any a
 * gives a valid bound, so the numerical minimisation can only cost
 * accuracy, never privacy; the chosen rho is checked at the a found, with a
 * relative margin that dwarfs the rounding errors of exp and log.
 *
 * The mechanisms and their zCDP cost (doc/privacy.md proves each):
 *	- the discrete Gaussian with l2 sensitivity D and variance s^2:
 *	  D^2 / (2 s^2) (Canonne, Kamath and Steinke, Theorem 14);
 *	- uldp's exponential mechanism with parameter e, whose monotone scores
 *	  make it e-bounded-range: e^2 / 8 (Cesar and Rogers 2021, Lemma 3.2).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "accountant.h"
#include "params.h"

/* the conversion must hold with this relative slack on delta */
#define DELTA_MARGIN (1.0 - 1e-9)

/* log of the conversion's delta at order a (a > 1) */
static double
log_delta_at(double rho, double epsilon, double a)
{
	return (a - 1) * (a * rho - epsilon) + (a - 1) * log1p(-1 / a) - log(a);
}

/*
 * The order a > 1 that (nearly) minimises log_delta_at: the function is
 * convex in a, so a golden-section search over log(a - 1) finds it.
 */
static double
best_order(double rho, double epsilon)
{
	const double golden = (sqrt(5.0) - 1) / 2;
	double		lo = -30;
	double		hi = 30;

	for (int i = 0; i < 200; i++)
	{
		double		x1 = hi - golden * (hi - lo);
		double		x2 = lo + golden * (hi - lo);

		if (log_delta_at(rho, epsilon, 1 + exp(x1)) <
			log_delta_at(rho, epsilon, 1 + exp(x2)))
			hi = x2;
		else
			lo = x1;
	}
	return 1 + exp((lo + hi) / 2);
}

/* The delta at which rho-zCDP gives epsilon-DP (capped at 1). */
double
uldp_zcdp_delta(double rho, double epsilon)
{
	if (rho <= 0)
		return 0;
	return Min(1.0, exp(log_delta_at(rho, epsilon, best_order(rho, epsilon))));
}

/*
 * The largest rho (to a relative 1e-12) such that rho-zCDP implies
 * (epsilon, delta)-DP, for 0 < delta < 1.
 */
double
uldp_zcdp_rho(double epsilon, double delta)
{
	double		target = log(delta * DELTA_MARGIN);
	double		lo = 0;
	double		hi = epsilon;	/* rho-zCDP is never epsilon-DP for rho >= epsilon */

	Assert(epsilon > 0 && delta > 0 && delta < 1);
	while (hi - lo > hi * 1e-12)
	{
		double		mid = (lo + hi) / 2;

		if (log_delta_at(mid, epsilon, best_order(mid, epsilon)) <= target)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The parameter of an exponential mechanism (bounded range) that costs rho:
 * e^2 / 8 = rho.
 */
double
uldp_selection_epsilon(double rho)
{
	return sqrt(8 * rho);
}

PG_FUNCTION_INFO_V1(uldp_zcdp_rho_sql);
PG_FUNCTION_INFO_V1(uldp_zcdp_delta_sql);

/* uldp.zcdp_rho(epsilon, delta) */
Datum
uldp_zcdp_rho_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = PG_GETARG_FLOAT8(0);
	double		delta = PG_GETARG_FLOAT8(1);

	uldp_check_epsilon(epsilon);
	uldp_check_delta(delta);
	PG_RETURN_FLOAT8(uldp_zcdp_rho(epsilon, delta));
}

/* uldp.zcdp_delta(rho, epsilon) */
Datum
uldp_zcdp_delta_sql(PG_FUNCTION_ARGS)
{
	double		rho = PG_GETARG_FLOAT8(0);
	double		epsilon = PG_GETARG_FLOAT8(1);

	uldp_check_epsilon(epsilon);
	if (!(rho >= 0 && rho <= ULDP_MAX_EPSILON))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rho must be a finite number between 0 and %g, not %g", ULDP_MAX_EPSILON, rho),
				 errhint("rho is the zCDP parameter; uldp.zcdp_rho(epsilon, delta) gives the rho of a release.")));
	PG_RETURN_FLOAT8(uldp_zcdp_delta(rho, epsilon));
}

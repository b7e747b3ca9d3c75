/*-------------------------------------------------------------------------
 *
 * selection.c
 *	  Private partition selection: which groups of a grouped release appear.
 *
 * Without public keys, a group's very presence depends on its users.  The
 * grouped rewrite (grouping.c) adds to the query's HAVING clause
 *
 *	uldp.group_selected(<slot, k, registry, user id>, epsilon, delta, <keys>)
 *
 * an aggregate that is true when the group's users that keep it, n, plus
 * discrete Laplace noise exceed a threshold T; a group with n = 0 never
 * appears.  Its epsilon and delta are the statement's (uldp.group_selection_
 * epsilon and _delta, charged once), and each group uses epsilon / k and
 * delta / k of them (statement.c), k = uldp.max_groups_per_user.  Its
 * transition (groupcalls.c) reads n from the registry, which counted the
 * users that keep each group when registration completed: selection needs
 * no table of users.  A group that GROUP BY holds equal but whose rows
 * have keys of different bytes (1.0 and 1.00) is several groups there; n
 * is the largest of their counts, which changes by at most one with a user
 * (fewer users than keep the group in all: only less likely to appear).
 * statement.c refuses group_selected outside the rewrite.
 *
 * Privacy.  Adding or removing a user changes n by one in at most k groups,
 * those it keeps, and nothing else: in the groups it does not keep its rows
 * are skipped, and a group that only its rows make exist has n = 0 and does
 * not appear either way.  In a group that has other users, "n + Z >= T" is
 * post-processing of a discrete Laplace count, (epsilon / k)-DP.  A group
 * that the user alone keeps appears with the user with probability
 * P(1 + Z >= T) <= delta / k (T is chosen so), and never without it.  So
 * selection is (epsilon, delta)-DP, and the releases in the selected groups,
 * each over users that keep the group, compose with it (doc/privacy.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "budget.h"
#include "noise.h"
#include "params.h"
#include "selection.h"
#include "statement.h"

double		uldp_group_selection_epsilon = 0.25;
double		uldp_group_selection_delta = 1e-8;

/*
 * The least threshold T with P(1 + Z >= T) <= delta for Z discrete Laplace
 * of parameter epsilon (P(Z = z) proportional to exp(-epsilon |z|)):
 * P(Z >= m) = exp(-epsilon m) / (1 + exp(-epsilon)) for m >= 1, which
 * grows as epsilon shrinks.  The sampler rounds epsilon down to 24
 * significant bits, so T is computed for a slightly smaller epsilon, as
 * uldp_discrete_laplace_tail() does.
 */
static double
selection_threshold(double epsilon, double delta)
{
	double		m;

	epsilon *= 1 - 0x1p-22;
	m = ceil((-log(delta) - log1p(exp(-epsilon))) / epsilon);

	m = Max(m, 1);
	/* the floating-point logarithms may round m one step too low */
	while (exp(-epsilon * m) / (1 + exp(-epsilon)) > delta)
		m++;
	return 1 + m;
}

/*
 * The plan of uldp.group_selected: (epsilon, delta), both required, are its
 * cost over all groups.
 */
void
uldp_selection_plan(const UldpReleaseCall *call, UldpReleasePlan *plan)
{
	static const char *const names[] = {"epsilon", "delta"};

	uldp_check_not_null(2, names, call->nulls);
	plan->epsilon = DatumGetFloat8(call->params[0]);
	plan->delta = DatumGetFloat8(call->params[1]);
	uldp_check_epsilon(plan->epsilon);
	uldp_check_delta(plan->delta);
	if (!(plan->delta > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the delta of partition selection must be positive"),
				 errhint("Set uldp.group_selection_delta to a small positive number such as 1e-8, or declare the grouping keys public with uldp.set_public_groups.")));
	plan->bytes_per_row = 0;
	plan->fixed_bytes = sizeof(int64);
}

PG_FUNCTION_INFO_V1(uldp_selection_combinefn);

/* Combines two partial states of a parallel plan: the larger count. */
Datum
uldp_selection_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	int64	   *users;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_selected called in a non-aggregate context");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	users = PG_ARGISNULL(0) ? MemoryContextAllocZero(aggcontext, sizeof(int64)) :
		(int64 *) PG_GETARG_POINTER(0);
	*users = Max(*users, *(int64 *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(users);
}

PG_FUNCTION_INFO_V1(uldp_selection_serialfn);

Datum
uldp_selection_serialfn(PG_FUNCTION_ARGS)
{
	bytea	   *result = palloc(VARHDRSZ + sizeof(int64));

	SET_VARSIZE(result, VARHDRSZ + sizeof(int64));
	memcpy(VARDATA(result), PG_GETARG_POINTER(0), sizeof(int64));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(uldp_selection_deserialfn);

Datum
uldp_selection_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	MemoryContext aggcontext;
	int64	   *users;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_selected called in a non-aggregate context");
	if (VARSIZE_ANY_EXHDR(serialized) != sizeof(int64))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid uldp partition selection state"),
				 errhint("States are made by uldp.group_selected itself, in a parallel plan.")));
	users = MemoryContextAlloc(aggcontext, sizeof(int64));
	memcpy(users, VARDATA_ANY(serialized), sizeof(int64));
	PG_RETURN_POINTER(users);
}

PG_FUNCTION_INFO_V1(uldp_selection_finalfn);

/* uldp.group_selected's final function: does the group appear? */
Datum
uldp_selection_finalfn(PG_FUNCTION_ARGS)
{
	Datum		values[2];
	bool		nulls[2];
	int64		n;
	double		epsilon;
	double		delta;

	uldp_refuse_window(fcinfo);
	uldp_release_begin(fcinfo);
	if (uldp_release_constants(fcinfo, ULDP_SELECTION_USER_ARG + 1, values, nulls, 2) != 2 ||
		nulls[0] || nulls[1])
		elog(ERROR, "uldp.group_selected needs epsilon and delta");
	epsilon = DatumGetFloat8(values[0]) * ULDP_SPEND_MARGIN;
	delta = DatumGetFloat8(values[1]) * ULDP_SPEND_MARGIN;
	n = PG_ARGISNULL(0) ? 0 : *(int64 *) PG_GETARG_POINTER(0);
	if (n == 0)
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(n + uldp_discrete_laplace(1, epsilon) >=
				   (int128) selection_threshold(epsilon, delta));
}

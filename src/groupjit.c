/*-------------------------------------------------------------------------
 *
 * groupjit.c
 *	  JIT for a statement with grouped releases, decided as PostgreSQL
 *	  decides it for the statement without their registrations.
 *
 * A grouped release reads its rows twice: registration, an initplan of the
 * statement's top level (grouping.c), then the aggregation.  PostgreSQL's
 * JIT compares the plan's whole cost with jit_optimize_above_cost and
 * jit_inline_above_cost, and the second reading can double it: the
 * statement then crosses them where the query written would not, and
 * every process inlines and optimizes the expressions of both readings.
 * For a key of date_trunc that took 130-160 ms serially and 420-490 ms
 * summed over the two processes of a parallel plan, which the readings did
 * not win back (months GROUP BY, 1 worker: 4.2-4.5 s optimized, 3.4-4.1 s
 * not; doc/benchmark-grouped.md).  So the two thresholds are compared with
 * the plan's cost less its registrations'; whether JIT runs at all, and
 * everything else, stays PostgreSQL's decision.  Only the speed changes,
 * never what is released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jit/jit.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"

#include "groupjit.h"
#include "grouping.h"

void
uldp_group_jit(PlannedStmt *plan)
{
	Cost		registrations = 0;
	Cost		cost;
	ListCell   *lc;

	if (!(plan->jitFlags & PGJIT_PERFORM) || plan->planTree == NULL)
		return;
	foreach(lc, plan->planTree->initPlan)
	{
		SubPlan    *initplan = (SubPlan *) lfirst(lc);
		Plan	   *cte;

		if (!IsA(initplan, SubPlan) || initplan->subLinkType != CTE_SUBLINK ||
			initplan->plan_id < 1 || initplan->plan_id > list_length(plan->subplans))
			continue;
		cte = list_nth(plan->subplans, initplan->plan_id - 1);
		if (uldp_grouping_is_registration_plan(cte))
			registrations += cte->total_cost;
	}
	if (registrations == 0)
		return;
	cost = plan->planTree->total_cost - registrations;
	plan->jitFlags &= ~(PGJIT_OPT3 | PGJIT_INLINE);
	if (jit_optimize_above_cost >= 0 && cost > jit_optimize_above_cost)
		plan->jitFlags |= PGJIT_OPT3;
	if (jit_inline_above_cost >= 0 && cost > jit_inline_above_cost)
		plan->jitFlags |= PGJIT_INLINE;
}

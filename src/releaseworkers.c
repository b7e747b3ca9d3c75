/*-------------------------------------------------------------------------
 *
 * releaseworkers.c
 *	  The workers of parallel plans over releases, capped at the CPUs the
 *	  leader leaves free.
 *
 * PostgreSQL plans a parallel scan's workers by the table's size, up to
 * max_parallel_workers_per_gather (2 by default), whatever the machine's
 * CPUs.  For its own aggregates a process beyond the CPUs costs little: a
 * partial state is a few numbers.  A release's partial state is a table of
 * the users its process met, nearly all of them when a user's rows are
 * spread over the table, so a process beyond the CPUs adds a table of all
 * the users (memory first touched, slow on virtual machines), a
 * serialization and a merge in the leader, and no CPU to pay for them: on
 * 2 cores, 2 workers were slower than 1 for 7 of the 8 releases of
 * doc/benchmark-grouped.md, by up to 25%.  So a Gather (or Gather Merge)
 * whose workers aggregate releases, or register a grouped release's groups,
 * starts at most uldp.max_parallel_workers_per_gather workers: by default
 * (-1) one fewer than the CPUs online, the leader reading rows too, or as
 * many when parallel_leader_participation is off, and at least one.  Only
 * how many processes read the rows changes, never what is released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "optimizer/optimizer.h"

#include "grouping.h"
#include "releasekind.h"
#include "releaseworkers.h"

int			uldp_max_parallel_workers_per_gather = -1;

/* The plans directly beneath "plan". */
static List *
child_plans(Plan *plan)
{
	List	   *children = NIL;

	if (plan->lefttree != NULL)
		children = lappend(children, plan->lefttree);
	if (plan->righttree != NULL)
		children = lappend(children, plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			children = list_concat(children, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			children = list_concat(children, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			children = list_concat(children, ((BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			children = list_concat(children, ((BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			children = lappend(children, ((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			children = list_concat(children, ((CustomScan *) plan)->custom_plans);
			break;
		default:
			break;
	}
	return children;
}

/*
 * Caps the Gathers in "plan" whose workers aggregate releases (all of them
 * when "all"); returns whether "plan" aggregates a release.
 */
static bool
cap_gathers(Plan *plan, int cap, bool all)
{
	bool		release = IsA(plan, Agg) &&
		(uldp_contains_release((Node *) plan->targetlist) ||
		 uldp_contains_release((Node *) plan->qual));
	List	   *children = child_plans(plan);
	ListCell   *lc;

	foreach(lc, children)
		release = cap_gathers(lfirst(lc), cap, all) || release;
	list_free(children);
	if (release || all)
	{
		if (IsA(plan, Gather))
			((Gather *) plan)->num_workers = Min(((Gather *) plan)->num_workers, cap);
		else if (IsA(plan, GatherMerge))
			((GatherMerge *) plan)->num_workers = Min(((GatherMerge *) plan)->num_workers, cap);
	}
	return release;
}

/* Caps the workers of the statement's Gathers over releases (see above). */
void
uldp_cap_release_workers(PlannedStmt *plan)
{
	int			cap = uldp_max_parallel_workers_per_gather;
	ListCell   *lc;

	if (plan->planTree == NULL || !plan->parallelModeNeeded)
		return;
	if (cap < 0)
	{
		long		cpus = sysconf(_SC_NPROCESSORS_ONLN);

		if (cpus < 1)
			return;
		cap = Max(1, (int) Min(cpus, INT_MAX) - (parallel_leader_participation ? 1 : 0));
	}
	(void) cap_gathers(plan->planTree, cap, false);
	foreach(lc, plan->subplans)
	{
		Plan	   *subplan = lfirst(lc);

		if (subplan != NULL)
			(void) cap_gathers(subplan, cap, uldp_grouping_is_registration_plan(subplan));
	}
}

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
 * spread over the table; with many users a process beyond the CPUs adds a
 * table too large for the caches (memory first touched, slow on virtual
 * machines), its serialization and its merge in the leader, and no CPU to
 * pay for them.  On 2 cores, 2 workers were slower than 1 with 1M users (by
 * 10-60%: doc/benchmark.md, doc/benchmark-grouped.md) and faster with 40k
 * (by about 15%, as for PostgreSQL's own aggregates).  So when the planner
 * estimates, from the user column's statistics, at least MANY_USERS users
 * for a release or a grouped release's registration, a Gather (or Gather
 * Merge) whose workers aggregate releases, or register groups, starts at
 * most uldp.max_parallel_workers_per_gather workers: by default (-1) one
 * fewer than the CPUs online, the leader reading rows too, or as many when
 * parallel_leader_participation is off, and at least one.  A setting of 0
 * or more applies whatever the users.  Only how many processes read the
 * rows changes, never what is released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "utils/selfuncs.h"

#include "grouping.h"
#include "params.h"
#include "releasekind.h"
#include "releaseworkers.h"

/*
 * The users from which the default cap applies: tables of 7 MB a process
 * (24-byte entries, at most 90% full), between the 40k users that gained
 * from a process beyond the CPUs and the 1M that lost.
 */
#define MANY_USERS 262144

int			uldp_max_parallel_workers_per_gather = -1;

static create_upper_paths_hook_type previous_upper_paths_hook = NULL;

/* whether the statement being planned releases over MANY_USERS or more */
static bool many_users_planned = false;

typedef struct UserEstimate
{
	PlannerInfo *root;
	double		input_rows;
} UserEstimate;

/*
 * Does "node" hold a release or a registration whose user argument, a
 * plain column, the planner estimates at MANY_USERS distinct values or
 * more?  (A grouped release's user argument is wrapped in group_member;
 * its registration, planned in the same statement, takes the column.)
 */
static bool
has_many_users(Node *node, UserEstimate *estimate)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *aggref = (Aggref *) node;
		int			user_arg;
		Expr	   *user;

		if (!uldp_is_release(aggref->aggfnoid) && aggref->aggfnoid != uldp_registry_oid())
			return false;
		user_arg = uldp_user_argument(aggref->aggfnoid);
		if (user_arg >= list_length(aggref->args))
			return false;
		user = list_nth_node(TargetEntry, aggref->args, user_arg)->expr;
		return IsA(user, Var) &&
			estimate_num_groups(estimate->root, list_make1(user), estimate->input_rows,
								NULL, NULL) >= MANY_USERS;
	}
	return expression_tree_walker(node, has_many_users, estimate);
}

static void
release_workers_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
							RelOptInfo *output_rel, void *extra)
{
	if (previous_upper_paths_hook)
		previous_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage == UPPERREL_GROUP_AGG && !many_users_planned && input_rel->rows >= MANY_USERS)
	{
		UserEstimate estimate = {root, input_rel->rows};

		many_users_planned =
			has_many_users((Node *) output_rel->reltarget->exprs, &estimate) ||
			(extra != NULL && has_many_users(((GroupPathExtraData *) extra)->havingQual, &estimate));
	}
}

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

/*
 * Starts a statement's planning afresh; returns what the planning it may
 * be nested in (a function evaluated while planning) had found so far, for
 * uldp_release_workers_end.
 */
bool
uldp_release_workers_begin(void)
{
	bool		outer = many_users_planned;

	many_users_planned = false;
	return outer;
}

/* Back to the enclosing planning, after uldp_cap_release_workers. */
void
uldp_release_workers_end(bool outer)
{
	many_users_planned = outer;
}

/* Caps the workers of the statement's Gathers over releases (see above). */
void
uldp_cap_release_workers(PlannedStmt *plan)
{
	int			cap = uldp_max_parallel_workers_per_gather;
	ListCell   *lc;

	if (plan->planTree == NULL || !plan->parallelModeNeeded ||
		(cap < 0 && !many_users_planned))
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

void
uldp_release_workers_init(void)
{
	previous_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = release_workers_upper_paths;
}

/*-------------------------------------------------------------------------
 *
 * finalagg.c
 *	  The final aggregation of a parallel GROUP BY over releases: hashed,
 *	  over Gather, rather than sorted, over Gather Merge.
 *
 * A parallel GROUP BY that hashes its rows into partial states finishes in
 * one of two ways: every process sorts its states by group and the leader
 * merges them in order (Sort, Gather Merge, a sorted Finalize), or every
 * process sends its states as they come and the leader combines them in a
 * hash table of the groups (Gather, a hashed Finalize).  PostgreSQL costs a
 * partial state as a few bytes, so the two cost about the same and the
 * sorted one wins on its ordered output.  A release's partial state is its
 * table of users, megabytes per group: each worker's Sort copies all of its
 * states, writes them to disk past work_mem and reads them back before the
 * leader sees its first group, while the hashed Finalize combines each
 * state as it arrives (1M users in 12 groups, 1 worker: about 0.5 s of a
 * 4 s release, doc/benchmark-grouped.md).  So when the grouping's outputs
 * include a release, the final paths over sorted states that cost no less
 * than the hashed one, within add_path's fuzz, give way to it; a query that
 * orders its output then sorts the groups released, not their states.  A
 * plan that sorts rows, not states, and aggregates them group by group
 * streams its states and is left as it is.  Which plan runs never changes
 * what is released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"

#include "finalagg.h"
#include "releasekind.h"

/* add_path's fuzz factor for costs (STD_FUZZ_FACTOR, pathnode.c) */
#define COST_FUZZ 1.01

static create_upper_paths_hook_type previous_upper_paths_hook = NULL;

/*
 * A final aggregation of partial states that every process sorted and
 * Gather Merge brings in, in order: what a Sort under the Gather Merge of a
 * final aggregation sorts are partial states (of each partition's partial
 * aggregation, under partitionwise aggregation)
 */
static bool
is_sorted_states_final(Path *path)
{
	Path	   *merged;

	if (!IsA(path, AggPath) || ((AggPath *) path)->aggsplit != AGGSPLIT_FINAL_DESERIAL)
		return false;
	merged = ((AggPath *) path)->subpath;
	return IsA(merged, GatherMergePath) &&
		(IsA(((GatherMergePath *) merged)->subpath, SortPath) ||
		 IsA(((GatherMergePath *) merged)->subpath, IncrementalSortPath));
}

/* The partial grouping of "grouped", made before it, if any */
static RelOptInfo *
partial_grouping(PlannerInfo *root, RelOptInfo *grouped)
{
	ListCell   *lc;

	foreach(lc, root->upper_rels[UPPERREL_PARTIAL_GROUP_AGG])
	{
		RelOptInfo *rel = (RelOptInfo *) lfirst(lc);

		if (bms_equal(rel->relids, grouped->relids))
			return rel;
	}
	return NULL;
}

/*
 * The hashed final aggregation over Gather of the cheapest partial
 * grouping, as PostgreSQL makes both (generate_gather_paths,
 * add_paths_to_grouping_rel): its own hashed final path takes the
 * partial grouping's cheapest path, which is the Gather Merge whenever that
 * costs about the same as the Gather.
 */
static Path *
hashed_final(PlannerInfo *root, RelOptInfo *grouped, GroupPathExtraData *extra,
			 RelOptInfo *partial, double groups)
{
	Path	   *cheapest = (Path *) linitial(partial->partial_pathlist);
	double		rows = cheapest->rows * cheapest->parallel_workers;
	Path	   *gather = (Path *) create_gather_path(root, partial, cheapest,
													 partial->reltarget, NULL, &rows);

	return (Path *) create_agg_path(root, grouped, gather, grouped->reltarget, AGG_HASHED,
									AGGSPLIT_FINAL_DESERIAL, root->parse->groupClause,
									(List *) extra->havingQual, &extra->agg_final_costs,
									groups);
}

static void
prefer_hashed_final(PlannerInfo *root, RelOptInfo *grouped, GroupPathExtraData *extra)
{
	AggPath    *sorted = NULL;
	RelOptInfo *partial;
	Path	   *hashed;
	List	   *kept = NIL;
	ListCell   *lc;

	foreach(lc, grouped->pathlist)
	{
		if (is_sorted_states_final((Path *) lfirst(lc)))
		{
			sorted = (AggPath *) lfirst(lc);
			break;
		}
	}
	/* as PostgreSQL's own hashed final path requires */
	if (sorted == NULL || !extra->partial_costs_set ||
		extra->patype == PARTITIONWISE_AGGREGATE_PARTIAL ||
		root->parse->groupingSets != NIL || root->numOrderedAggs > 0 ||
		!grouping_is_hashable(root->parse->groupClause))
		return;
	partial = partial_grouping(root, grouped);
	if (partial == NULL || partial->partial_pathlist == NIL)
		return;
	if (!uldp_contains_release((Node *) grouped->reltarget->exprs) &&
		!uldp_contains_release(extra->havingQual))
		return;

	hashed = hashed_final(root, grouped, extra, partial, sorted->numGroups);
	foreach(lc, grouped->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (!(is_sorted_states_final(path) && hashed->total_cost <= path->total_cost * COST_FUZZ))
			kept = lappend(kept, path);
	}
	grouped->pathlist = kept;
	add_path(grouped, hashed);
}

static void
final_agg_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
					  RelOptInfo *output_rel, void *extra)
{
	if (previous_upper_paths_hook)
		previous_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage == UPPERREL_GROUP_AGG && extra != NULL)
		prefer_hashed_final(root, output_rel, (GroupPathExtraData *) extra);
}

void
uldp_final_agg_init(void)
{
	previous_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = final_agg_upper_paths;
}

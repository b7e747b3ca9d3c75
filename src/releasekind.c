/*-------------------------------------------------------------------------
 *
 * releasekind.c
 *	  The releases uldp knows, by their final functions: what the gate
 *	  accepts and what a statement charges.
 *
 * Each module registers the final functions of its releases at load time
 * (uldp.c), with the function that validates a call's public parameters
 * and tells what it costs and needs (statement.c calls it).  A release is
 * then recognised by identity: an aggregate of extension uldp whose final
 * function is registered and whose transition function reads rows.  Being
 * a function of the extension is not enough: the aggregates that merge
 * shards' states (uldp.user_dp_mean over bytea and its siblings) share the
 * releases' final functions, but read states, not rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"

#include "params.h"
#include "releasekind.h"

#define MAX_RELEASE_KINDS 16

static UldpReleaseKind release_kinds[MAX_RELEASE_KINDS];
static int	nrelease_kinds = 0;

void
uldp_register_release(const char *finalfn, UldpPlanRelease plan, int delta_param)
{
	if (nrelease_kinds >= MAX_RELEASE_KINDS)
		elog(ERROR, "too many uldp release kinds");
	release_kinds[nrelease_kinds].finalfn = finalfn;
	release_kinds[nrelease_kinds].plan = plan;
	release_kinds[nrelease_kinds].delta_param = delta_param;
	nrelease_kinds++;
}

/* The kind of a uldp aggregate, by its final function's name, or NULL. */
const UldpReleaseKind *
uldp_release_kind(Oid aggfnoid)
{
	char	   *name = uldp_aggregate_support_name(aggfnoid, true);

	for (int i = 0; name && i < nrelease_kinds; i++)
		if (strcmp(release_kinds[i].finalfn, name) == 0)
			return &release_kinds[i];
	return NULL;
}

/* Is aggfnoid one of uldp's releases over rows? */
bool
uldp_is_release(Oid aggfnoid)
{
	Oid			extension = get_extension_oid("uldp", true);
	char	   *transfn;

	if (!OidIsValid(extension) ||
		getExtensionOfObject(ProcedureRelationId, aggfnoid) != extension ||
		get_func_prokind(aggfnoid) != PROKIND_AGGREGATE ||
		uldp_release_kind(aggfnoid) == NULL)
		return false;
	transfn = uldp_aggregate_support_name(aggfnoid, false);
	return transfn != NULL && strcmp(transfn, "user_merge_transfn") != 0;
}

static bool
contains_release_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && uldp_is_release(((Aggref *) node)->aggfnoid))
		return true;
	return expression_tree_walker(node, contains_release_walker, context);
}

/* Does the expression "node" hold a release (an Aggref of one)? */
bool
uldp_contains_release(Node *node)
{
	return contains_release_walker(node, NULL);
}

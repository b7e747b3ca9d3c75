/*-------------------------------------------------------------------------
 *
 * uldp.c
 *	  Module entry point: configuration parameters and hooks.
 *
 * Releases need no shared_preload_libraries: a statement that loads the
 * library is still prepared and charged before it reads rows
 * (statement.c), and budget charges run in dynamic background workers that
 * load the library by name.  Protected tables do: the query gate's hooks
 * exist only in sessions that loaded the library before their first query,
 * and without them roles that may not read a protected table cannot query
 * it at all.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "dropguard.h"
#include "finalagg.h"
#include "groupbound.h"
#include "gate.h"
#include "protect.h"
#include "quantile.h"
#include "releasekind.h"
#include "releaseworkers.h"
#include "random.h"
#include "release.h"
#include "selection.h"
#include "sgd.h"
#include "shardrewrite.h"
#include "statement.h"
#include "userstate.h"
#include "usertable.h"
#include "vecrelease.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("uldp.test_seed",
							"Seed of the reproducible random stream used by tests (0: secure randomness).",
							"Any value but 0 makes every release predictable and destroys its privacy; "
							"only superusers can set it, and only test databases should.",
							&uldp_test_seed,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, uldp_test_seed_assign, NULL);

	DefineCustomIntVariable("uldp.max_state_memory",
							"Largest per-user table one uldp aggregate may build.",
							"An aggregate that would exceed it fails with an error instead of exhausting memory.",
							&uldp_max_state_memory,
							1024 * 1024, 64, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("uldp.max_partition_rows",
							"Most rows one foreign partition of a protected table may hold, by its size on disk.",
							"A release over shards bounds its memory by this many users per partition before it reads; "
							"a shard whose tables could hold more rows refuses, whatever its rows.",
							&uldp_max_partition_rows,
							3 * 1000 * 1000, 1, (int) ULDP_MAX_SERIALIZED_USERS,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("uldp.allow_drop",
							 "Allows dropping the uldp extension, budgets and ledger while they hold rows.",
							 "Off, DROP EXTENSION uldp and anything else that would drop uldp.budget_data "
							 "or uldp.ledger_data are refused while they hold rows.",
							 &uldp_allow_drop,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("uldp.max_groups_per_user",
							"Most groups of a grouped release that one user contributes to.",
							"A user found in more groups contributes to a uniformly random subset of this many; "
							"each group's noise is calibrated to it.",
							&uldp_max_groups_per_user,
							1, 1, ULDP_MAX_GROUPS_PER_USER,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomRealVariable("uldp.group_selection_epsilon",
							 "Epsilon that a grouped release without public keys spends choosing its groups.",
							 "Charged once per grouped release, on top of its aggregates.",
							 &uldp_group_selection_epsilon,
							 0.25, 1e-6, 100,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("uldp.group_selection_delta",
							 "Delta that a grouped release without public keys spends choosing its groups.",
							 "A group of one user appears with at most this probability.",
							 &uldp_group_selection_delta,
							 1e-8, 1e-15, 0.01,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("uldp.max_parallel_workers_per_gather",
							"Most workers a Gather over uldp releases starts (-1: one fewer than the CPUs online, over many users).",
							"Every process of a parallel release holds a table of the users it meets; "
							"over many users a process beyond the CPUs only adds one. -1 caps releases whose "
							"users the planner estimates at 262144 or more; PostgreSQL's "
							"max_parallel_workers_per_gather still caps it.",
							&uldp_max_parallel_workers_per_gather,
							-1, -1, 1024,	/* MAX_PARALLEL_WORKER_LIMIT */
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("uldp");

	uldp_protect_init();
	uldp_gate_init();
	uldp_shard_rewrite_init();
	uldp_dropguard_init();
	uldp_final_agg_init();
	uldp_release_workers_init();
	/* after the gate, so that its refusals come before any charge */
	uldp_statement_init();
	uldp_register_release("mean_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("mean_ci_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("sum_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("sum_ci_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("range_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("count_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("count_ci_finalfn", uldp_scalar_plan, -1);
	uldp_register_release("quantile_finalfn", uldp_quantile_plan, -1);
	uldp_register_release("vector_mean_finalfn", uldp_vector_mean_plan, 1);
	uldp_register_release("sgd_finalfn", uldp_sgd_plan, 1);
	uldp_register_release("selection_finalfn", uldp_selection_plan, 1);
}

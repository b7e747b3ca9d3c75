/*-------------------------------------------------------------------------
 *
 * grouping.h
 *	  Grouped releases: GROUP BY over uldp aggregates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPING_H
#define ULDP_GROUPING_H

#include "nodes/parsenodes.h"
#include "nodes/execnodes.h"

extern void uldp_grouping_rewrite(Query *query);
extern Oid	uldp_registry_oid(void);
extern bool uldp_grouping_is_registration(Query *query);
extern bool uldp_grouped_call(Aggref *aggref, int user_arg, int64 *slot, int *k,
							  List **key_types);
extern bool uldp_grouping_registered_first(AggState *agg, int64 slot, Oid extension);
extern bool uldp_grouping_registration(AggState *agg, int *k, List **key_types);
extern bool uldp_grouping_is_registration_plan(Plan *cte);
extern bool uldp_grouping_reads_registration(CteScan *scan, EState *estate);

#endif							/* ULDP_GROUPING_H */

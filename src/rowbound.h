/*-------------------------------------------------------------------------
 *
 * rowbound.h
 *	  The most rows a table can hold, from its size on disk.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_ROWBOUND_H
#define ULDP_ROWBOUND_H

#include "nodes/plannodes.h"
#include "utils/rel.h"

extern bool uldp_table_row_bound(Relation rel, double *rows);
extern bool uldp_plan_is_scan(Plan *plan);
extern List *uldp_plan_children(Plan *plan);

#endif							/* ULDP_ROWBOUND_H */

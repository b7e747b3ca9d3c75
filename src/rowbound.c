/*-------------------------------------------------------------------------
 *
 * rowbound.c
 *	  The most rows a table can hold, from its size on disk.
 *
 * A release must know, before it reads a row, how much memory its rows
 * could need, from public facts only.  The size of a table on disk is one:
 * the rows a statement's snapshot sees lie in pages that existed when the
 * snapshot was taken, so the current number of pages bounds them.  uldp
 * bounds its releases over protected tables with it (statement.c), and
 * uldp_shard bounds a partition's state with it on the shard
 * (shard/shardbound.c), so this file includes no other uldp header.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "nodes/plannodes.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "rowbound.h"

/*
 * The most rows a heap page can hold that a release reads: a row that
 * reaches a release has a non-null user id, so its tuple has a header
 * (padded to MAXALIGN) and at least one byte of data, stored MAXALIGNed,
 * plus its line pointer: 226 rows per 8 kB page.
 */
#define ROWS_PER_PAGE \
	((BLCKSZ - SizeOfPageHeaderData) / \
	 (MAXALIGN(MAXALIGN(SizeofHeapTupleHeader) + 1) + sizeof(ItemIdData)))

/*
 * Sets *rows to the most rows "rel" can hold; false if it is not a table
 * stored here (a foreign table, a view), whose size says nothing.
 */
bool
uldp_table_row_bound(Relation rel, double *rows)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_MATVIEW)
		return false;
	*rows = (double) RelationGetNumberOfBlocks(rel) * ROWS_PER_PAGE;
	return true;
}

/*
 * Is plan a scan: a node that reads the rows of one range table entry
 * (Scan->scanrelid), or, for a foreign or custom scan with scanrelid 0,
 * what a remote server or an extension computed?
 */
bool
uldp_plan_is_scan(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_TableFuncScan:
		case T_ValuesScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_ForeignScan:
		case T_CustomScan:
			return true;
		default:
			return false;
	}
}

/*
 * The children of a plan node other than its left and right trees: an
 * Append's or MergeAppend's, a subquery scan's plan, a custom scan's.
 */
List *
uldp_plan_children(Plan *plan)
{
	if (IsA(plan, Append))
		return ((Append *) plan)->appendplans;
	if (IsA(plan, MergeAppend))
		return ((MergeAppend *) plan)->mergeplans;
	if (IsA(plan, SubqueryScan))
		return list_make1(((SubqueryScan *) plan)->subplan);
	if (IsA(plan, CustomScan))
		return ((CustomScan *) plan)->custom_plans;
	return NIL;
}

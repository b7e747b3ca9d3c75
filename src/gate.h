/*-------------------------------------------------------------------------
 *
 * gate.h
 *	  The query gate: what roles without SELECT privilege may run on a
 *	  protected table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GATE_H
#define ULDP_GATE_H

#include "nodes/parsenodes.h"

extern void uldp_gate_init(void);
extern bool uldp_gate_reads_protected(RangeTblEntry *rte);
extern bool uldp_gate_reads_protected_as(RangeTblEntry *rte, Oid userid);
pg_attribute_noreturn() extern void uldp_gate_refuse(const char *table, const char *detail);
pg_attribute_noreturn() extern void uldp_gate_refuse_hint(const char *table, const char *detail,
													   const char *hint);

#endif							/* ULDP_GATE_H */

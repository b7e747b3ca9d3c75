/*-------------------------------------------------------------------------
 *
 * safe_expr.h
 *	  The expressions a query on a protected table may evaluate per row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SAFE_EXPR_H
#define ULDP_SAFE_EXPR_H

#include "nodes/primnodes.h"

extern Node *uldp_safe_expr(Node *expr, const char *table, List **checks);

#endif							/* ULDP_SAFE_EXPR_H */

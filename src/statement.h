/*-------------------------------------------------------------------------
 *
 * statement.h
 *	  Charging a statement's releases before it reads any row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_STATEMENT_H
#define ULDP_STATEMENT_H

#include "fmgr.h"

#include "params.h"
#include "releasekind.h"

extern void uldp_statement_init(void);
extern const UldpReleasePlan *uldp_release_plan(FunctionCallInfo fcinfo);
extern bool uldp_release_bounded(FunctionCallInfo fcinfo);
extern void uldp_release_begin(FunctionCallInfo fcinfo);
extern void uldp_release_params(FunctionCallInfo fcinfo, int first, UldpParams *params);
extern int	uldp_release_first_param(FunctionCallInfo fcinfo);
extern int	uldp_release_constants(FunctionCallInfo fcinfo, int first, Datum *values,
								   bool *nulls, int max);

#endif							/* ULDP_STATEMENT_H */

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

/* most arguments a release takes after its user argument */
#define ULDP_MAX_RELEASE_PARAMS 4

/* A release as the statement writes it: its public arguments. */
typedef struct UldpReleaseCall
{
	const char *function;		/* the aggregate's name */
	int			nparams;		/* the arguments after the user argument */
	Datum		params[ULDP_MAX_RELEASE_PARAMS];
	bool		nulls[ULDP_MAX_RELEASE_PARAMS];
	int			dimension;		/* of the value argument, when public; else 0 */
} UldpReleaseCall;

/* What one run of a release costs and needs, known before reading rows. */
typedef struct UldpReleasePlan
{
	double		epsilon;
	double		delta;
	int			dimension;		/* vector releases: the public dimension */
	double		bytes_per_row;	/* worst-case state and working memory per input row */
	double		fixed_bytes;	/* and whatever the rows, at most */
} UldpReleasePlan;

/*
 * Validates a release's public parameters and fills its plan, raising an
 * error (which depends on public parameters only) if it cannot run.
 */
typedef void (*UldpPlanRelease) (const UldpReleaseCall *call, UldpReleasePlan *plan);

extern void uldp_statement_init(void);
extern void uldp_register_release(const char *finalfn, UldpPlanRelease plan,
								  int delta_param);
extern const UldpReleasePlan *uldp_release_plan(FunctionCallInfo fcinfo);
extern bool uldp_release_bounded(FunctionCallInfo fcinfo);
extern void uldp_release_begin(FunctionCallInfo fcinfo);
extern void uldp_release_params(FunctionCallInfo fcinfo, int first, UldpParams *params);
extern int	uldp_release_first_param(FunctionCallInfo fcinfo);
extern int	uldp_release_constants(FunctionCallInfo fcinfo, int first, Datum *values,
								   bool *nulls, int max);

#endif							/* ULDP_STATEMENT_H */

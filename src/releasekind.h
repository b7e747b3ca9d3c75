/*-------------------------------------------------------------------------
 *
 * releasekind.h
 *	  The releases uldp knows, by their final functions: what the gate
 *	  accepts and what a statement charges.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RELEASEKIND_H
#define ULDP_RELEASEKIND_H

#include "postgres.h"

#include "nodes/nodes.h"

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

/* A kind of release: its final function's name, and how to plan a call. */
typedef struct UldpReleaseKind
{
	const char *finalfn;
	UldpPlanRelease plan;
	int			delta_param;	/* delta's place after epsilon's, or -1 */
} UldpReleaseKind;

extern void uldp_register_release(const char *finalfn, UldpPlanRelease plan,
								  int delta_param);
extern const UldpReleaseKind *uldp_release_kind(Oid aggfnoid);
extern bool uldp_is_release(Oid aggfnoid);
extern bool uldp_contains_release(Node *node);

#endif							/* ULDP_RELEASEKIND_H */

/*-------------------------------------------------------------------------
 *
 * params.h
 *	  The public parameters of a release: epsilon, bounds, tau.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_PARAMS_H
#define ULDP_PARAMS_H

#include "fmgr.h"
#include "nodes/execnodes.h"

/* largest magnitude a value may take; keeps every width and sum finite */
#define ULDP_MAX_MAGNITUDE 1e300
#define ULDP_MIN_EPSILON 1e-6
#define ULDP_MAX_EPSILON 1e6
#define ULDP_MIN_DELTA 1e-100
#define ULDP_MAX_DELTA 0.5
/* most bins of width 2 * tau that a range may be cut into */
#define ULDP_MAX_BINS ((double) (UINT64CONST(1) << 62))

typedef struct UldpParams
{
	double		epsilon;
	bool		has_lower;
	bool		has_upper;
	bool		has_bounds;		/* both */
	bool		has_tau;
	double		lower;			/* the bound, or -ULDP_MAX_MAGNITUDE */
	double		upper;			/* the bound, or +ULDP_MAX_MAGNITUDE */
	double		tau;			/* 0 unless has_tau */
} UldpParams;

/* the parameters of vector releases: user_dp_mean(float8[], ...) */
typedef struct UldpVectorParams
{
	double		epsilon;
	double		delta;
	bool		has_radius;
	bool		has_tau;
	double		radius;			/* 0 unless has_radius */
	double		tau;			/* 0 unless has_tau */
} UldpVectorParams;

extern void uldp_check_not_null(int nvalues, const char *const *names,
								const bool *nulls);
extern void uldp_check_epsilon(double epsilon);
extern void uldp_check_delta(double delta);
extern void uldp_check_bounds(double lower, double upper);
extern void uldp_check_scale(const char *name, double value, const char *hint);
extern void uldp_vector_params_set(UldpVectorParams *params, int nvalues,
								   const Datum *values, const bool *nulls);
extern void uldp_params_set(UldpParams *params, int nvalues,
							const Datum *values, const bool *nulls);
extern int	uldp_call_constants(AggState *aggstate, Aggref *aggref, int first,
								Datum *values, bool *nulls, int max);
extern int	uldp_aggref_constants(FunctionCallInfo fcinfo, int first,
								  Datum *values, bool *nulls, int max);
extern void uldp_params_from_args(FunctionCallInfo fcinfo, int first,
								  UldpParams *params);
extern Aggref *uldp_original_aggref(Plan *plan, Aggref *aggref);
extern int	uldp_user_argument(Oid aggfnoid);
extern char *uldp_aggregate_support_name(Oid aggfnoid, bool final);
extern Aggref *uldp_make_aggref(Oid aggfnoid, Oid result_type, List *args, Expr *filter,
								Oid inputcollid);
extern RangeTblEntry *uldp_make_cte_entry(CommonTableExpr *cte, Index levelsup, const char *alias);
extern void uldp_refuse_window(FunctionCallInfo fcinfo);

#endif							/* ULDP_PARAMS_H */

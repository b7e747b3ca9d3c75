/*-------------------------------------------------------------------------
 *
 * vecstate.h
 *	  The aggregate state of the vector releases: per-user sums of vectors
 *	  (user_dp_mean on float8[]) or every row kept (user_dp_sgd).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_VECSTATE_H
#define ULDP_VECSTATE_H

#include "params.h"

/* largest vector dimension the aggregates accept */
#define ULDP_MAX_DIMENSION 65536
/*
 * Vectors are clipped to this l2 norm when no radius is given, so that a sum
 * of up to 2^32 of them stays finite.
 */
#define ULDP_VECTOR_MAX_NORM (ULDP_MAX_MAGNITUDE * 0x1p-33)

typedef struct UldpVecState UldpVecState;

/* one user's rows, contiguous: count rows of (dim features, label) */
typedef struct UldpUserRows
{
	const double *rows;
	int64		count;
} UldpUserRows;

extern double uldp_vec_state_bytes_per_row(bool keep_rows, int dim);
extern double uldp_vec_state_fixed_bytes(bool keep_rows, int dim);
extern double *uldp_vec_user_means(UldpVecState *state, int64 *nusers,
								   Size per_user_extra);
extern UldpUserRows *uldp_vec_user_rows(UldpVecState *state, int64 *nusers,
										Size per_user_extra);
extern double uldp_l2_norm(const double *v, int dim);
extern void uldp_clip_to_ball(double *v, int dim, double radius);

#endif							/* ULDP_VECSTATE_H */

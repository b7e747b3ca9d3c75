/*-------------------------------------------------------------------------
 *
 * quantstate.h
 *	  The aggregate state of user_dp_quantile: every row's user and value.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_QUANTSTATE_H
#define ULDP_QUANTSTATE_H

/*
 * A row as the state keeps it.  The final function sorts copies of these
 * by "key" (radix sort, quantile.c): first the user's key, then the grid
 * key of the value.
 */
typedef struct UldpQuantileRow
{
	uint64		key;
	double		value;
} UldpQuantileRow;

/*
 * Working memory of the release, per row: a copy of the rows and a buffer
 * for the radix sort, and at most two segments of the exponential
 * mechanism (one byte each) per distinct key.
 */
#define ULDP_QUANTILE_RELEASE_BYTES_PER_ROW (2 * sizeof(UldpQuantileRow) + 2)

typedef struct UldpQuantileState UldpQuantileState;

extern double uldp_quantile_state_bytes_per_row(void);
extern double uldp_quantile_state_fixed_bytes(void);
extern UldpQuantileRow *uldp_quantile_state_rows(UldpQuantileState *state,
												 int64 *nrows);

#endif							/* ULDP_QUANTSTATE_H */

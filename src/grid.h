/*-------------------------------------------------------------------------
 *
 * grid.h
 *	  Order-preserving maps from doubles to integer keys.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GRID_H
#define ULDP_GRID_H

/* mantissa bits kept by the floating-point grid: relative resolution 2^-24 */
#define ULDP_FLOAT_GRID_BITS 24

typedef struct UldpGrid
{
	bool		linear;
	double		origin;			/* linear: left end of bin 0 */
	double		width;			/* linear: width of a bin */
	double		min_magnitude;	/* floating point: smallest distinct magnitude */
	int			shift;			/* floating point: mantissa bits dropped */
	uint64		first;			/* floating point: raw key of the lowest value */
	uint64		domain;			/* keys are 0 .. domain - 1 */
} UldpGrid;

extern UldpGrid uldp_linear_grid(double lower, double upper, double width);
extern UldpGrid uldp_float_grid(double lower, double upper, double min_magnitude);
extern UldpGrid uldp_float_grid_bits(double lower, double upper,
									 double min_magnitude, int bits);
extern uint64 uldp_grid_key(const UldpGrid *grid, double x);
extern double uldp_grid_value(const UldpGrid *grid, uint64 key);
extern uint64 *uldp_sort_keys(uint64 *keys, int64 n);

#endif							/* ULDP_GRID_H */

/*-------------------------------------------------------------------------
 *
 * rotation.h
 *	  The randomized Hadamard rotation of Levy et al. (Algorithm 2).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_ROTATION_H
#define ULDP_ROTATION_H

typedef struct UldpRotation
{
	int			dim;			/* of the vectors rotated */
	int			padded;			/* the power of two they are padded to */
	int8	   *signs;			/* the random diagonal, padded entries */
} UldpRotation;

extern UldpRotation uldp_rotation_random(int dim);
extern void uldp_rotate(const UldpRotation *rotation, const double *in,
						double *out);
extern void uldp_rotate_back(const UldpRotation *rotation, double *in_out,
							 double *out);

#endif							/* ULDP_ROTATION_H */

/*-------------------------------------------------------------------------
 *
 * sigmoid.h
 *	  The logistic function, shared by the extension's central SGD and the
 *	  client library's gradient summaries.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SIGMOID_H
#define ULDP_SIGMOID_H

#include <math.h>

/* 1 / (1 + e^-z), without overflow for either sign of z */
static inline double
uldp_sigmoid(double z)
{
	return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z));
}

#endif							/* ULDP_SIGMOID_H */

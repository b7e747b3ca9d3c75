/*-------------------------------------------------------------------------
 *
 * sgd.h
 *	  user_dp_sgd: what must be checked before its release is charged.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SGD_H
#define ULDP_SGD_H

#include "utils/jsonb.h"

extern void uldp_sgd_validate(double epsilon, double delta, Jsonb *options);

#endif							/* ULDP_SGD_H */

/*-------------------------------------------------------------------------
 *
 * siphash.h
 *	  SipHash-2-4, the keyed pseudorandom function of grouped releases.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SIPHASH_H
#define ULDP_SIPHASH_H

#include "c.h"

extern uint64 uldp_siphash24(const uint64 key[2], const void *data, size_t len);
extern bool uldp_siphash24_selftest(void);

#endif							/* ULDP_SIPHASH_H */

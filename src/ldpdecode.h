/*-------------------------------------------------------------------------
 *
 * ldpdecode.h
 *	  The server's decoding of a round's reports into its result (Girgis,
 *	  Data and Diggavi, Algorithms 1, 3 and 5).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LDPDECODE_H
#define ULDP_LDPDECODE_H

#include "local/uldp_local.h"

/*
 * The most cells (padded coordinates times Hadamard rows K) a range round
 * may have: decoding holds one double per cell, so at most 128 MB.  Both
 * are public parameters, so uldp.ldp_round refuses a larger round before
 * any report exists.
 */
#define ULDP_LDP_MAX_RANGE_CELLS (INT64CONST(1) << 24)

typedef struct UldpLdpDecoder UldpLdpDecoder;

extern UldpLdpDecoder *uldp_ldp_decoder_create(const UldpLocalRound *round);
extern void uldp_ldp_decoder_add(UldpLdpDecoder *decoder,
								 const UldpLocalReport *report);
extern char *uldp_ldp_decoder_result(UldpLdpDecoder *decoder);

#endif							/* ULDP_LDPDECODE_H */

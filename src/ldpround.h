/*-------------------------------------------------------------------------
 *
 * ldpround.h
 *	  Rounds of the local protocol as the server stores them
 *	  (uldp.ldp_rounds): loading one, and the library's refusals as
 *	  PostgreSQL errors.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LDPROUND_H
#define ULDP_LDPROUND_H

#include "utils/jsonb.h"

#include "local/uldp_local.h"

/* A stored round; the functions below need an SPI connection. */
typedef struct UldpLdpRound
{
	int64		id;
	char	   *json;			/* the round JSON, as clients read it */
	Jsonb	   *jsonb;			/* the same, for the server's own keys */
	Jsonb	   *result;			/* NULL while the round is open */
	UldpLocalRound local;		/* parsed by the client library */
} UldpLdpRound;

/* row locks uldp_ldp_load_round can take on the round's row */
typedef enum UldpLdpLock
{
	ULDP_LDP_NO_LOCK,
	ULDP_LDP_SHARE,				/* submits: the round cannot close meanwhile */
	ULDP_LDP_UPDATE				/* closing it */
} UldpLdpLock;

extern const char *uldp_ldp_kind_name(UldpLocalKind kind);
extern void uldp_ldp_load_round(int64 id, UldpLdpLock lock, UldpLdpRound *round);
extern void uldp_ldp_refuse(const UldpLocalError *error) pg_attribute_noreturn();
extern Jsonb *uldp_ldp_jsonb(const char *json);
extern double uldp_ldp_number(Jsonb *object, const char *key);

#endif							/* ULDP_LDPROUND_H */

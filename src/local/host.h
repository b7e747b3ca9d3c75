/*-------------------------------------------------------------------------
 *
 * host.h
 *	  What the code under src/local/ needs from the program it is linked
 *	  into.  The extension provides these from PostgreSQL (random.c: the
 *	  secure per-backend source or the superuser-only seeded stream;
 *	  ldphost.c: palloc), the client library from the operating system
 *	  (client_host.c: getrandom(2), malloc).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_HOST_H
#define ULDP_LOCAL_HOST_H

#include <stddef.h>
#include <stdint.h>

/* 64 uniformly random bits from a cryptographically secure source */
extern uint64_t uldp_random_u64(void);

/* memory; uldp_local_alloc returns NULL when there is none */
extern void *uldp_local_alloc(size_t size);
extern void uldp_local_free(void *pointer);

#endif							/* ULDP_LOCAL_HOST_H */

/*-------------------------------------------------------------------------
 *
 * client_host.c
 *	  The host of libuldp_local.a outside PostgreSQL: random bits from
 *	  getrandom(2) and memory from malloc.
 *
 * Random bits are the only secret of a report, so they come from the
 * kernel's cryptographically secure source, never from a seeded stream.
 * They are read in blocks into a per-thread buffer; each word is wiped from
 * the buffer when it is used, so that a later memory dump cannot replay a
 * report's coins, and the buffer remembers the process that filled it, so
 * that a child of fork() never reuses its parent's bytes.  If the kernel
 * cannot provide randomness the program aborts: there is no safe fallback,
 * and a report made without randomness would not be private.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "host.h"

#define BUFFER_SIZE 512

static __thread unsigned char buffer[BUFFER_SIZE];
static __thread size_t used = BUFFER_SIZE;
static __thread pid_t owner = 0;

static void
refill(void)
{
	size_t		filled = 0;

	while (filled < BUFFER_SIZE)
	{
		ssize_t		got = getrandom(buffer + filled, BUFFER_SIZE - filled, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
		{
			fprintf(stderr, "uldp client library: could not read random bytes from the operating system: %s\n",
					got < 0 ? strerror(errno) : "no bytes");
			abort();
		}
		filled += (size_t) got;
	}
	used = 0;
	owner = getpid();
}

uint64_t
uldp_random_u64(void)
{
	uint64_t	result;

	if (used + sizeof(result) > BUFFER_SIZE || owner != getpid())
		refill();
	memcpy(&result, buffer + used, sizeof(result));
	memset(buffer + used, 0, sizeof(result));
	used += sizeof(result);
	return result;
}

void *
uldp_local_alloc(size_t size)
{
	/* malloc(0) may return NULL, which would read as out of memory */
	return malloc(size > 0 ? size : 1);
}

void
uldp_local_free(void *pointer)
{
	free(pointer);
}

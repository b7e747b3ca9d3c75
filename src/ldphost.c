/*-------------------------------------------------------------------------
 *
 * ldphost.c
 *	  The memory the client library (src/local/) uses when it is linked
 *	  into the extension: palloc in the current memory context, so that an
 *	  error anywhere frees it with the context.  (Its random bits are
 *	  random.c's uldp_random_u64.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "local/host.h"

/* NULL when there is no memory: the library reports that as its error */
void *
uldp_local_alloc(size_t size)
{
	return palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

void
uldp_local_free(void *pointer)
{
	if (pointer != NULL)
		pfree(pointer);
}

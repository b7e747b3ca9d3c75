/*-------------------------------------------------------------------------
 *
 * tablemem.c
 *	  Memory for the entries of the per-user hash tables, and for the rows
 *	  of a grouped release's registry (groupbound.c).
 *
 * Once a table of users outgrows the CPU caches, each row's lookup costs a
 * cache miss, and with 4 kB pages a TLB miss as well.  An allocation of
 * more than a few megabytes therefore asks for transparent huge pages,
 * where the kernel grants them on request (transparent_hugepage = madvise,
 * Debian's default): the lookups then stay within the TLB's reach, and the
 * table is faulted in 2 MB at a time instead of 4 kB.  This changes only
 * how the memory is mapped, never how much is held, so the memory bounds of
 * the aggregates are unaffected; measured in doc/benchmark-grouped.md.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "tablemem.h"

/* the size of a transparent huge page with 4 kB pages (x86-64, arm64) */
#define HUGE_PAGE_BYTES ((uintptr_t) 2 * 1024 * 1024)

/*
 * "size" bytes in "context", on transparent huge pages where the kernel
 * grants them, not zeroed: pages not yet touched cost nothing.
 */
void *
uldp_alloc_pages(MemoryContext context, Size size)
{
	char	   *data = MemoryContextAllocExtended(context, size, MCXT_ALLOC_HUGE);

#ifdef MADV_HUGEPAGE
	if (size >= 2 * HUGE_PAGE_BYTES)
	{
		uintptr_t	start = TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) data);
		uintptr_t	end = TYPEALIGN_DOWN(HUGE_PAGE_BYTES, (uintptr_t) data + size);

		/* a refusal only leaves the table on ordinary pages */
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
	}
#endif
	return data;
}

/* Zeroed memory for "size" bytes of table entries in "context". */
void *
uldp_alloc_table(MemoryContext context, Size size)
{
	/* zeroed after the advice, so that the first touch maps huge pages */
	return memset(uldp_alloc_pages(context, size), 0, size);
}

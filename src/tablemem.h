/*-------------------------------------------------------------------------
 *
 * tablemem.h
 *	  Memory for the entries of the per-user hash tables (simplehash), and
 *	  other large arrays read at random.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_TABLEMEM_H
#define ULDP_TABLEMEM_H

extern void *uldp_alloc_pages(MemoryContext context, Size size);
extern void *uldp_alloc_table(MemoryContext context, Size size);

/*
 * Defines the allocator of a simplehash table "prefix", declared with
 * SH_USE_NONDEFAULT_ALLOCATOR, so that its entries come from
 * uldp_alloc_table.
 */
#define ULDP_TABLE_ALLOCATOR(prefix) \
static inline void * \
prefix##_allocate(prefix##_hash *table, Size size) \
{ \
	return uldp_alloc_table(table->ctx, size); \
} \
static inline void \
prefix##_free(prefix##_hash *table, void *pointer) \
{ \
	pfree(pointer); \
}

#endif							/* ULDP_TABLEMEM_H */

/*-------------------------------------------------------------------------
 *
 * groupnames.h
 *	  The names of the groups of a grouped release, each given a number.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPNAMES_H
#define ULDP_GROUPNAMES_H

#include "utils/palloc.h"

typedef struct UldpGroupNames UldpGroupNames;

/* what uldp_group_names_find returns for a name never added */
#define ULDP_NO_GROUP PG_UINT32_MAX

extern UldpGroupNames *uldp_group_names_create(MemoryContext context, uint64 seed);
extern uint32 uldp_group_names_add(UldpGroupNames *names, const char *name, uint32 length);
extern uint32 uldp_group_names_find(UldpGroupNames *names, const char *name, uint32 length);
extern uint32 uldp_group_names_count(const UldpGroupNames *names);
extern const char *uldp_group_names_name(const UldpGroupNames *names, uint32 number,
										 uint32 *length);

typedef void (*UldpGroupNameVisitor) (void *arg, uint32 number, const char *name, uint32 length);
extern void uldp_group_names_each(UldpGroupNames *names, UldpGroupNameVisitor each, void *arg);
extern double uldp_group_names_bytes_per_name(double name_bytes);

#endif							/* ULDP_GROUPNAMES_H */

/*-------------------------------------------------------------------------
 *
 * usermerge.h
 *	  Merging serialized runs of users (usertable.h's format, in partition
 *	  order) into one stream of distinct users, without a table of them all.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_USERMERGE_H
#define ULDP_USERMERGE_H

#include "usertable.h"

/* serialized users: "nusers" entries of ULDP_SERIALIZED_USER_BYTES */
typedef struct UldpUserRun
{
	const char *users;
	int64		nusers;
} UldpUserRun;

typedef struct UldpUserMerge
{
	UldpUserRun *runs;
	int			nruns;
	int64	   *read;			/* entries of each run merged so far */
	int			partition;		/* the partition in "merged" */
	/* the partition's distinct users, in the order first met */
	UldpUser   *merged;
	int64		nmerged;
	int64		next;			/* the next of them to return */
	/* slot -> 1 + index in "merged", or 0 when free */
	int32	   *slots;
	uint32		slot_mask;
	/* the working memory the merge allocates on its first step */
	Size		working_bytes;
} UldpUserMerge;

extern void uldp_user_merge_begin(UldpUserMerge *merge, UldpUserRun *runs, int nruns);
extern UldpUser *uldp_user_merge_next(UldpUserMerge *merge);
extern void uldp_user_merge_end(UldpUserMerge *merge);

#endif							/* ULDP_USERMERGE_H */

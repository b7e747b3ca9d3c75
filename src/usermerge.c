/*-------------------------------------------------------------------------
 *
 * usermerge.c
 *	  Merging serialized runs of users into one stream of distinct users.
 *
 * A release over partial states (parallel workers', or shards') reads each
 * user once, with the sums and counts of all its rows.  Inserting every
 * serialized user into one table of all users costs a cache miss per user
 * once they outgrow the CPU caches, and that work is serial: the leader of
 * a parallel plan, or the coordinator of shards, does it alone.  But
 * serialized users come in partition order (usertable.h: the top bits of
 * their hash), so a user's entries in every run fall in the same partition,
 * and a partition of all runs holds about users / ULDP_USER_PARTITIONS of
 * them: the merge takes one partition at a time, in a small table that
 * stays in the cache, and the runs are read once, front to back.
 *
 * Within a partition, users are returned in the order they were first
 * met, run by run, and a user's sums are added in the order of the runs:
 * the same additions, in the same order, as merging the runs one after
 * another into a table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"

#include "usermerge.h"

/*
 * Prepares to merge "runs", each in partition order (a run out of order,
 * which no uldp writer makes, is refused as an invalid state).  Sets
 * merge->working_bytes: the memory the merge will take, for the largest
 * partition of all runs together.
 */
void
uldp_user_merge_begin(UldpUserMerge *merge, UldpUserRun *runs, int nruns)
{
	int64	   *sizes = palloc0(ULDP_USER_PARTITIONS * sizeof(int64));
	int64		largest = 0;

	for (int r = 0; r < nruns; r++)
	{
		int			previous = 0;

		for (int64 i = 0; i < runs[r].nusers; i++)
		{
			int			partition = uldp_user_partition(uldp_user_entry_id(runs[r].users + i * ULDP_SERIALIZED_USER_BYTES));

			if (partition < previous)
				uldp_user_state_invalid();
			sizes[partition]++;
			previous = partition;
		}
	}
	for (int p = 0; p < ULDP_USER_PARTITIONS; p++)
		largest = Max(largest, sizes[p]);
	pfree(sizes);

	memset(merge, 0, sizeof(*merge));
	merge->runs = runs;
	merge->nruns = nruns;
	merge->read = palloc0(Max(nruns, 1) * sizeof(int64));
	merge->partition = -1;
	/* at most half the slots taken: short probes */
	merge->slot_mask = (uint32) pg_nextpower2_64(Max(2 * largest, 2)) - 1;
	merge->working_bytes = largest * sizeof(UldpUser) +
		((Size) merge->slot_mask + 1) * sizeof(int32);
}

/*
 * Frees the slots of the partition merged last: each user's, found by its
 * probe (which passes over slots freed already, as it looks for the user's
 * number, not for a free slot).  Clearing the whole table instead would
 * cost its size for every partition, empty ones too.
 */
static void
free_slots(UldpUserMerge *merge)
{
	for (int64 i = 0; i < merge->nmerged; i++)
	{
		uint32		slot = uldp_user_hash(merge->merged[i].id) & merge->slot_mask;

		while (merge->slots[slot] != i + 1)
			slot = (slot + 1) & merge->slot_mask;
		merge->slots[slot] = 0;
	}
}

/* Merges the next partition that has users into merge->merged. */
static void
merge_partition(UldpUserMerge *merge)
{
	free_slots(merge);
	merge->nmerged = 0;
	merge->next = 0;
	while (merge->nmerged == 0 && ++merge->partition < ULDP_USER_PARTITIONS)
	{
		for (int r = 0; r < merge->nruns; r++)
		{
			UldpUserRun *run = &merge->runs[r];
			int64		i;

			for (i = merge->read[r]; i < run->nusers; i++)
			{
				const char *entry = run->users + i * ULDP_SERIALIZED_USER_BYTES;
				uint32		count;
				double		sum;
				uint64		id;
				uint32		slot;
				UldpUser   *user;

				id = uldp_user_entry_id(entry);
				if (uldp_user_partition(id) != merge->partition)
					break;
				uldp_user_entry_read(entry, &count, &sum);
				/* the low bits: the partition took the high ones */
				slot = uldp_user_hash(id) & merge->slot_mask;
				while (merge->slots[slot] != 0 &&
					   merge->merged[merge->slots[slot] - 1].id != id)
					slot = (slot + 1) & merge->slot_mask;
				if (merge->slots[slot] == 0)
				{
					user = &merge->merged[merge->nmerged++];
					merge->slots[slot] = (int32) merge->nmerged;
					user->id = id;
					user->sum = 0;
					user->count = 0;
				}
				else
					user = &merge->merged[merge->slots[slot] - 1];
				uldp_user_add_rows(user, sum, count);
			}
			merge->read[r] = i;
		}
	}
}

/*
 * The next distinct user of the runs, with the sums and counts of all its
 * entries, or NULL after the last.  The user is valid until the next call.
 */
UldpUser *
uldp_user_merge_next(UldpUserMerge *merge)
{
	if (merge->slots == NULL)
	{
		merge->merged = palloc_extended(merge->working_bytes,
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		merge->slots = (int32 *) ((char *) merge->merged +
								  merge->working_bytes -
								  ((Size) merge->slot_mask + 1) * sizeof(int32));
	}
	if (merge->next == merge->nmerged)
	{
		if (merge->partition == ULDP_USER_PARTITIONS)
			return NULL;
		merge_partition(merge);
		if (merge->nmerged == 0)
			return NULL;
	}
	return &merge->merged[merge->next++];
}

/* Frees the merge's working memory. */
void
uldp_user_merge_end(UldpUserMerge *merge)
{
	if (merge->merged != NULL)
		pfree(merge->merged);
	pfree(merge->read);
}

/*-------------------------------------------------------------------------
 *
 * partvalues.c
 *	  A partition's users' values, sorted: what a shard whose users are
 *	  its own sends for a release without both bounds (or with tau), and
 *	  their merge on the coordinator.
 *
 * Such a release chooses its clipping interval from every user's value
 * (clipping.c: private medians and the ladder), which takes sorting them.
 * When each shard keeps only the user ids that hash to its partition
 * (shardmember.c), its users are its own: it can finish each user's value
 * and sort them, in parallel with the other shards, and the coordinator
 * only merges sorted runs, in linear time, instead of merging users by id
 * and sorting their values twice.  A value is 8 bytes, against the 20 of a
 * user's id, count and sum (uldp_shard.user_rows).
 *
 * The coordinator refuses a serialized form that is not exactly what this
 * file writes: another version or size, a NaN, a value outside its bounds
 * or out of order.  Nothing it reads then depends on trusting the shard
 * beyond its values, which it trusts as it trusts per-user states
 * (doc/scale-out.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "lib/binaryheap.h"
#include "nodes/pg_list.h"

#include "partvalues.h"
#include "radixsort.h"

/* The serialized header; the values follow it. */
typedef struct ValuesWire
{
	uint32		magic;
	uint32		version;
	int64		users;
	double		lower;
	double		upper;
	bool		average;
	bool		key_byval;
	int16		key_typlen;
} ValuesWire;

/*
 * The serialized form of partition's header with its "users" values,
 * which are sorted here, in place.
 */
bytea *
uldp_partition_values_to_bytea(const UldpPartitionValues *partition, double *values)
{
	Size		bytes = sizeof(ValuesWire) + partition->users * sizeof(double);
	bytea	   *result = palloc_extended(VARHDRSZ + bytes, MCXT_ALLOC_HUGE);
	ValuesWire	wire;

	if (partition->users > 0)
		uldp_sort_doubles(values, partition->users);
	memset(&wire, 0, sizeof(wire));
	wire.magic = ULDP_VALUES_MAGIC;
	wire.version = ULDP_VALUES_VERSION;
	wire.users = partition->users;
	wire.lower = partition->lower;
	wire.upper = partition->upper;
	wire.average = partition->average;
	wire.key_byval = partition->key_byval;
	wire.key_typlen = partition->key_typlen;
	SET_VARSIZE(result, VARHDRSZ + bytes);
	memcpy(VARDATA(result), &wire, sizeof(wire));
	if (partition->users > 0)
		memcpy(VARDATA(result) + sizeof(wire), values, partition->users * sizeof(double));
	return result;
}

/*
 * Reads a partition's values; false if value is not sorted values at all
 * (another kind of state).  partition->values points into value.
 */
bool
uldp_partition_values_from_bytea(bytea *value, UldpPartitionValues *partition)
{
	Size		size = VARSIZE_ANY_EXHDR(value);
	ValuesWire	wire;
	uint32		magic;
	bool		valid;

	if (size < sizeof(magic))
		return false;
	memcpy(&magic, VARDATA_ANY(value), sizeof(magic));
	if (magic != ULDP_VALUES_MAGIC)
		return false;
	memset(&wire, 0, sizeof(wire));
	if (size >= sizeof(wire))
		memcpy(&wire, VARDATA_ANY(value), sizeof(wire));
	valid = wire.version == ULDP_VALUES_VERSION && wire.users >= 0 &&
		wire.users <= (int64) ((size - sizeof(wire)) / sizeof(double)) &&
		size == sizeof(wire) + wire.users * sizeof(double) &&
		wire.lower <= wire.upper;
	partition->users = wire.users;
	partition->average = wire.average;
	partition->key_byval = wire.key_byval;
	partition->key_typlen = wire.key_typlen;
	partition->lower = wire.lower;
	partition->upper = wire.upper;
	partition->values = VARDATA_ANY(value) + sizeof(wire);
	/* in order, within the bounds (so no NaN) */
	for (int64 i = 0; valid && i < partition->users; i++)
	{
		double		v = uldp_partition_value(partition, i);

		valid = v >= partition->lower && v <= partition->upper &&
			(i == 0 || uldp_partition_value(partition, i - 1) <= v);
	}
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("not a partition's sorted values of uldp_shard version %d", ULDP_VALUES_VERSION),
				 errhint("Install the same uldp_shard version on every shard, on machines of the coordinator's architecture.")));
	return true;
}

/* The runs of a merge and where each one is. */
typedef struct MergeRuns
{
	UldpPartitionValues **partitions;
	int64	   *next;
} MergeRuns;

/* binaryheap keeps the greatest first: the run whose head is least */
static int
head_order(Datum a, Datum b, void *arg)
{
	MergeRuns  *runs = arg;
	int			run_a = DatumGetInt32(a);
	int			run_b = DatumGetInt32(b);
	double		head_a = uldp_partition_value(runs->partitions[run_a], runs->next[run_a]);
	double		head_b = uldp_partition_value(runs->partitions[run_b], runs->next[run_b]);

	return head_a < head_b ? 1 : head_a > head_b ? -1 : 0;
}

/*
 * The values of "partitions" (a list of UldpPartitionValues *), merged
 * into one ascending array of *n values, in O(n log(partitions)) time: a
 * heap of the runs by their heads.
 */
double *
uldp_merge_partition_values(List *partitions, int64 *n)
{
	int			nruns = list_length(partitions);
	MergeRuns	runs;
	binaryheap *heap = binaryheap_allocate(Max(nruns, 1), head_order, &runs);
	int64		total = 0;
	double	   *merged;

	runs.partitions = palloc(Max(nruns, 1) * sizeof(UldpPartitionValues *));
	runs.next = palloc0(Max(nruns, 1) * sizeof(int64));
	for (int run = 0; run < nruns; run++)
	{
		runs.partitions[run] = list_nth(partitions, run);
		total += runs.partitions[run]->users;
		if (runs.partitions[run]->users > 0)
			binaryheap_add_unordered(heap, Int32GetDatum(run));
	}
	binaryheap_build(heap);
	merged = palloc_extended(Max(total, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < total; i++)
	{
		int			run = DatumGetInt32(binaryheap_first(heap));

		merged[i] = uldp_partition_value(runs.partitions[run], runs.next[run]++);
		if (runs.next[run] == runs.partitions[run]->users)
			binaryheap_remove_first(heap);
		else
			binaryheap_replace_first(heap, Int32GetDatum(run));
	}
	binaryheap_free(heap);
	pfree(runs.partitions);
	pfree(runs.next);
	*n = total;
	return merged;
}

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

#include "nodes/pg_list.h"

#include "partvalues.h"
#include "radixsort.h"
#include "wire.h"

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
	bool		valid;

	if (!uldp_wire_header(value, ULDP_VALUES_MAGIC, &wire, sizeof(wire)))
		return false;
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

/*
 * Merges the ascending runs a and b into out, without a branch on the
 * values (runs interleave at random: a branch would be mispredicted half
 * the time).
 */
static void
merge_two(const double *a, int64 na, const double *b, int64 nb, double *out)
{
	int64		i = 0;
	int64		j = 0;

	while (i < na && j < nb)
	{
		double		x = a[i];
		double		y = b[j];
		bool		from_b = y < x;

		*out++ = from_b ? y : x;
		j += from_b;
		i += !from_b;
	}
	memcpy(out, a + i, (na - i) * sizeof(double));
	memcpy(out + (na - i), b + j, (nb - j) * sizeof(double));
}

/*
 * The values of "partitions" (a list of UldpPartitionValues *), merged
 * into one ascending array of *n values, in O(n log(partitions)) time:
 * the runs laid end to end, then adjacent runs merged two by two, one
 * sequential pass over all values per halving of their number.
 */
double *
uldp_merge_partition_values(List *partitions, int64 *n)
{
	int			nruns = list_length(partitions);
	int64	   *starts = palloc((nruns + 1) * sizeof(int64));
	double	   *current;
	double	   *next;
	ListCell   *cell;

	starts[0] = 0;
	foreach(cell, partitions)
		starts[foreach_current_index(cell) + 1] =
			starts[foreach_current_index(cell)] + ((UldpPartitionValues *) lfirst(cell))->users;
	*n = starts[nruns];
	current = palloc_extended(Max(*n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	next = palloc_extended(Max(*n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	foreach(cell, partitions)
	{
		UldpPartitionValues *partition = lfirst(cell);

		if (partition->users > 0)
			memcpy(current + starts[foreach_current_index(cell)], partition->values,
				   partition->users * sizeof(double));
	}
	while (nruns > 1)
	{
		int			merged = 0;
		double	   *swap;

		for (int run = 0; run < nruns; run += 2)
		{
			if (run + 1 < nruns)
				merge_two(current + starts[run], starts[run + 1] - starts[run],
						  current + starts[run + 1], starts[run + 2] - starts[run + 1],
						  next + starts[run]);
			else
				memcpy(next + starts[run], current + starts[run],
					   (starts[run + 1] - starts[run]) * sizeof(double));
			starts[merged++] = starts[run];
		}
		starts[merged] = starts[nruns];
		nruns = merged;
		swap = current;
		current = next;
		next = swap;
	}
	pfree(next);
	pfree(starts);
	return current;
}

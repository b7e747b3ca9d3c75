/*-------------------------------------------------------------------------
 *
 * partvalues.h
 *	  What one partition of a table partitioned by its users sends for a
 *	  release that chooses its interval from the users' values: those
 *	  values, sorted.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_PARTVALUES_H
#define ULDP_PARTVALUES_H

/*
 * A partition's users' values (averages or totals, each clamped to
 * [lower, upper]), in ascending order, without their users: the shards'
 * users are disjoint, so the coordinator needs no id.  "values" points
 * into the serialized form, with no alignment: read it with
 * uldp_partition_value.
 */
typedef struct UldpPartitionValues
{
	int64		users;
	bool		average;
	bool		key_byval;		/* the user id type's, see uldp_user_key */
	int16		key_typlen;
	double		lower;
	double		upper;
	const char *values;
} UldpPartitionValues;

#define ULDP_VALUES_MAGIC 0x554c5631	/* "ULV1" */
#define ULDP_VALUES_VERSION 1

static inline double
uldp_partition_value(const UldpPartitionValues *partition, int64 i)
{
	double		value;

	memcpy(&value, partition->values + i * sizeof(double), sizeof(value));
	return value;
}

extern bytea *uldp_partition_values_to_bytea(const UldpPartitionValues *partition,
											 double *values);
extern bool uldp_partition_values_from_bytea(bytea *value, UldpPartitionValues *partition);
extern double *uldp_merge_partition_values(List *partitions, int64 *n);

#endif							/* ULDP_PARTVALUES_H */

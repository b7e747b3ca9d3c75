/*-------------------------------------------------------------------------
 *
 * fixedsum.h
 *	  The fixed-point sum of clipped user values that user_dp_mean and
 *	  user_dp_sum add noise to, and the form in which a shard sends its
 *	  part of it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_FIXEDSUM_H
#define ULDP_FIXEDSUM_H

/*
 * A sum of values clipped to [lower, upper] around a centre, on a
 * power-of-two grid: each value becomes an integer number of steps in
 * [-steps, steps], so the sum is exact, does not depend on the order of
 * the values, and one user moves it by at most "steps".
 */
typedef struct UldpFixedSum
{
	double		lower;
	double		upper;
	double		centre;
	double		grid;
	int64		steps;
	int128		sum;
} UldpFixedSum;

/*
 * What one partition of a table partitioned by its users sends for a
 * release with public bounds: its users and the fixed-point sum of their
 * values (averages or totals).
 */
typedef struct UldpPartitionSums
{
	int64		users;
	bool		average;
	bool		key_byval;		/* the user id type's, see uldp_user_key */
	int16		key_typlen;
	UldpFixedSum sum;
} UldpPartitionSums;

#define ULDP_SUMS_MAGIC 0x554c5331	/* "ULS1" */
#define ULDP_SUMS_VERSION 1

extern double uldp_bounds_centre(double lower, double upper);
extern UldpFixedSum uldp_fixed_sum_empty(double lower, double upper, double centre);
extern UldpFixedSum uldp_fixed_sum_public(double lower, double upper, bool average);
extern void uldp_fixed_sum_add(UldpFixedSum *sum, double value);
extern bool uldp_fixed_sum_same_grid(const UldpFixedSum *a, const UldpFixedSum *b);
extern bytea *uldp_partition_sums_to_bytea(const UldpPartitionSums *sums);
extern bool uldp_partition_sums_from_bytea(bytea *value, UldpPartitionSums *sums);

#endif							/* ULDP_FIXEDSUM_H */

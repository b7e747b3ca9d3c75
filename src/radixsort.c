/*-------------------------------------------------------------------------
 *
 * radixsort.c
 *	  Sorting records by a 64-bit key in linear time: the keys of the
 *	  exponential mechanism's grids (grid.c), and the values a shard sends
 *	  sorted (partvalues.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "radixsort.h"

/*
 * Sorts n records of "size" bytes by the uint64 key each starts with, in
 * place, with "buffer" room for as many: a least-significant-digit radix
 * sort of SORT_DIGIT_BITS bits a pass.  One pass over the keys counts
 * every digit; then each digit in which the keys differ takes one
 * scattering pass (the high digits of keys near one another are all
 * alike and cost nothing).  Linear time: with a million users it is
 * several times faster than a comparison sort, and 11-bit digits (2048
 * buckets, whose write positions stay in the cache) take 3 scattering
 * passes where bytes take 4 for the 27 bits that a grid's keys of values
 * within a few octaves span.
 */
#define SORT_DIGIT_BITS 11
#define SORT_BUCKETS (1 << SORT_DIGIT_BITS)
#define SORT_DIGITS ((64 + SORT_DIGIT_BITS - 1) / SORT_DIGIT_BITS)

/* The sort; returns where the sorted records are: "records" or "buffer". */
void *
uldp_radix_sort(void *records, void *buffer, int64 n, Size size)
{
	int64		(*counts)[SORT_BUCKETS] = palloc0(SORT_DIGITS * sizeof(*counts));
	char	   *from = records;
	char	   *to = buffer;
	uint64		first;

	if (n == 0)
	{
		pfree(counts);
		return records;
	}
	for (int64 i = 0; i < n; i++)
	{
		uint64		key = *(uint64 *) (from + i * size);

		for (int digit = 0; digit < SORT_DIGITS; digit++)
			counts[digit][(key >> (digit * SORT_DIGIT_BITS)) & (SORT_BUCKETS - 1)]++;
	}
	first = *(uint64 *) from;
	for (int digit = 0; digit < SORT_DIGITS; digit++)
	{
		int			shift = digit * SORT_DIGIT_BITS;
		int64	   *offsets = counts[digit];
		int64		position = 0;
		char	   *swap;

		if (offsets[(first >> shift) & (SORT_BUCKETS - 1)] == n)
			continue;
		for (int bucket = 0; bucket < SORT_BUCKETS; bucket++)
		{
			int64		count = offsets[bucket];

			offsets[bucket] = position;
			position += count;
		}
		for (int64 i = 0; i < n; i++)
			memcpy(to + (offsets[(*(uint64 *) (from + i * size) >> shift) & (SORT_BUCKETS - 1)]++) * size,
				   from + i * size, size);
		swap = from;
		from = to;
		to = swap;
	}
	pfree(counts);
	return from;
}

void
uldp_sort_records(void *records, void *buffer, int64 n, Size size)
{
	void	   *sorted = uldp_radix_sort(records, buffer, n, size);

	if (sorted != records)
		memcpy(records, sorted, n * size);
}

/*
 * The key of a double that orders as the double does (a NaN aside): the
 * sign bit set for positive numbers, every bit flipped for negative ones.
 */
static inline uint64
double_order_key(double value)
{
	uint64		bits;

	memcpy(&bits, &value, sizeof(bits));
	return (bits >> 63) ? ~bits : bits | (UINT64CONST(1) << 63);
}

static inline double
double_from_order_key(uint64 key)
{
	uint64		bits = (key >> 63) ? key & ~(UINT64CONST(1) << 63) : ~key;
	double		value;

	memcpy(&value, &bits, sizeof(value));
	return value;
}

/*
 * Sorts n doubles, none NaN, in ascending order, in place: each becomes its
 * order key where it is, so that only the sort's buffer is allocated.
 */
void
uldp_sort_doubles(double *values, int64 n)
{
	uint64	   *buffer = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	char	   *sorted;

	for (int64 i = 0; i < n; i++)
	{
		uint64		key = double_order_key(values[i]);

		memcpy(&values[i], &key, sizeof(key));
	}
	sorted = uldp_radix_sort(values, buffer, n, sizeof(uint64));
	for (int64 i = 0; i < n; i++)
	{
		uint64		key;

		memcpy(&key, sorted + i * sizeof(key), sizeof(key));
		values[i] = double_from_order_key(key);
	}
	pfree(buffer);
}

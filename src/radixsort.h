/*-------------------------------------------------------------------------
 *
 * radixsort.h
 *	  Sorting records by a 64-bit key in linear time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_RADIXSORT_H
#define ULDP_RADIXSORT_H

extern void *uldp_radix_sort(void *records, void *buffer, int64 n, Size size);
extern void uldp_sort_records(void *records, void *buffer, int64 n, Size size);
extern void uldp_sort_doubles(double *values, int64 n);

#endif							/* ULDP_RADIXSORT_H */

/*-------------------------------------------------------------------------
 *
 * safe_time.h
 *	  Error-free date and time functions for queries on protected tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SAFE_TIME_H
#define ULDP_SAFE_TIME_H

extern void uldp_check_time_field(Oid func, Datum field, Oid type);

#endif							/* ULDP_SAFE_TIME_H */

/*-------------------------------------------------------------------------
 *
 * safe_time.c
 *	  Date and time arithmetic that returns NULL where PostgreSQL's raises
 *	  errors, and the validation of date/time fields.
 *
 * Timestamps range from 4714-11-24 BC to 294276-12-31, dates to 5874897
 * AD, and both have -infinity and infinity.  Arithmetic near these ends fails
 * ("timestamp out of range", "date out of range for timestamp", "cannot
 * subtract infinite dates"), and so does age() of -infinity and date_trunc()
 * of the first years: whether a filter fails would reveal that a row holds
 * such a value.  The query gate (safe_expr.c) replaces each of these
 * functions by the one here of the same arguments: same result wherever the
 * built-in succeeds, NULL where it raises an error.  Where PostgreSQL 15
 * overflows 64-bit microseconds without noticing (timestamp + interval of
 * more than 250,000 years' worth of hours, timestamp - timestamp of dates
 * 290,000 years apart) and returns a wrong value, these return NULL too.
 *
 * Most of them check their arguments and then call the built-in, which can
 * no longer fail.  Two compute themselves: timestamp + interval, whose three
 * steps (months, then days, then time) can each leave the range, and
 * date_trunc, which calls the built-in on the same instant 2000 years away
 * (five Gregorian cycles of 400 years, whole weeks: months, leap years,
 * weekdays, decades, centuries and millennia all fall on the same days, and
 * the time zone library repeats its rules every 400 years) and moves the
 * result back.
 *
 * extract(), date_part() and date_trunc() fail on an invalid field name:
 * that is a constant of the query, checked when the gate sees it
 * (uldp_check_time_field), against a finite value and both infinities,
 * which take different paths through the built-ins.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "pgtime.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "safe_time.h"

/* 2000 Gregorian years in microseconds: 5 cycles of 146097 days (20871 weeks) each */
#define CALENDAR_SHIFT (INT64CONST(5) * 146097 * USECS_PER_DAY)

PG_FUNCTION_INFO_V1(uldp_safe_timestamp_add);
PG_FUNCTION_INFO_V1(uldp_safe_timestamp_sub);
PG_FUNCTION_INFO_V1(uldp_safe_timestamptz_add);
PG_FUNCTION_INFO_V1(uldp_safe_timestamptz_sub);
PG_FUNCTION_INFO_V1(uldp_safe_date_add_interval);
PG_FUNCTION_INFO_V1(uldp_safe_date_sub_interval);
PG_FUNCTION_INFO_V1(uldp_safe_date_add_days);
PG_FUNCTION_INFO_V1(uldp_safe_date_sub_days);
PG_FUNCTION_INFO_V1(uldp_safe_date_sub_date);
PG_FUNCTION_INFO_V1(uldp_safe_timestamp_sub_timestamp);
PG_FUNCTION_INFO_V1(uldp_safe_interval_add);
PG_FUNCTION_INFO_V1(uldp_safe_interval_sub);
PG_FUNCTION_INFO_V1(uldp_safe_interval_neg);
PG_FUNCTION_INFO_V1(uldp_safe_date_trunc);
PG_FUNCTION_INFO_V1(uldp_safe_date_trunc_tz);
PG_FUNCTION_INFO_V1(uldp_safe_date_part_date);
PG_FUNCTION_INFO_V1(uldp_safe_age);
PG_FUNCTION_INFO_V1(uldp_safe_age_tz);
PG_FUNCTION_INFO_V1(uldp_safe_age_today);
PG_FUNCTION_INFO_V1(uldp_safe_age_today_tz);
PG_FUNCTION_INFO_V1(uldp_safe_date_timestamp);
PG_FUNCTION_INFO_V1(uldp_safe_date_timestamptz);
PG_FUNCTION_INFO_V1(uldp_safe_timestamp_timestamptz);
PG_FUNCTION_INFO_V1(uldp_safe_timestamptz_timestamp);

/*
 * ts + span (sign 1) or ts - span (sign -1), as timestamp_pl_interval
 * (with_zone false) or timestamptz_pl_interval (true, in the session's time
 * zone) compute it: the months in the calendar, the day of the month cut to
 * the month's length; then the days; then the time.  False where a step
 * leaves the range of timestamps.  The amounts are widened to 64 bits, so
 * negating them cannot overflow (except the time's most negative value,
 * which is past either end anyway).
 */
static bool
add_interval(Timestamp ts, const Interval *span, int sign, bool with_zone,
			 Timestamp *result)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	int		   *tzp = with_zone ? &tz : NULL;
	int64		usecs = span->time;

	if (TIMESTAMP_NOT_FINITE(ts))
	{
		*result = ts;
		return true;
	}
	if (sign < 0 && pg_sub_s64_overflow(0, usecs, &usecs))
		return false;
	if (span->month != 0)
	{
		int64		months;
		int64		year;

		if (timestamp2tm(ts, tzp, &tm, &fsec, NULL, NULL) != 0)
			return false;
		/* at most 2^31 + 12 * 294277 months: the year fits an int */
		months = (int64) tm.tm_year * MONTHS_PER_YEAR + (tm.tm_mon - 1) +
			sign * (int64) span->month;
		year = months / MONTHS_PER_YEAR - (months % MONTHS_PER_YEAR < 0);
		tm.tm_year = (int) year;
		tm.tm_mon = (int) (months - year * MONTHS_PER_YEAR) + 1;
		if (tm.tm_mday > day_tab[isleap(tm.tm_year)][tm.tm_mon - 1])
			tm.tm_mday = day_tab[isleap(tm.tm_year)][tm.tm_mon - 1];
		if (with_zone)
			tz = DetermineTimeZoneOffset(&tm, session_timezone);
		if (tm2timestamp(&tm, fsec, tzp, &ts) != 0)
			return false;
	}
	if (span->day != 0)
	{
		int64		julian;

		if (timestamp2tm(ts, tzp, &tm, &fsec, NULL, NULL) != 0)
			return false;
		julian = date2j(tm.tm_year, tm.tm_mon, tm.tm_mday) + sign * (int64) span->day;
		if (julian < PG_INT32_MIN || julian > PG_INT32_MAX)
			return false;
		j2date((int) julian, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
		if (with_zone)
			tz = DetermineTimeZoneOffset(&tm, session_timezone);
		if (tm2timestamp(&tm, fsec, tzp, &ts) != 0)
			return false;
	}
	if (pg_add_s64_overflow(ts, usecs, &ts) || !IS_VALID_TIMESTAMP(ts))
		return false;
	*result = ts;
	return true;
}

/* timestamp[tz] + or - interval (sign 1 or -1) */
static Datum
timestamp_interval(FunctionCallInfo fcinfo, int sign, bool with_zone)
{
	Timestamp	result;

	if (!add_interval(PG_GETARG_TIMESTAMP(0), PG_GETARG_INTERVAL_P(1), sign, with_zone, &result))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMP(result);
}

/* uldp._safe_time_add(timestamp, interval) returns timestamp */
Datum
uldp_safe_timestamp_add(PG_FUNCTION_ARGS)
{
	return timestamp_interval(fcinfo, 1, false);
}

/* uldp._safe_time_sub(timestamp, interval) returns timestamp */
Datum
uldp_safe_timestamp_sub(PG_FUNCTION_ARGS)
{
	return timestamp_interval(fcinfo, -1, false);
}

/* uldp._safe_time_add(timestamptz, interval) returns timestamptz */
Datum
uldp_safe_timestamptz_add(PG_FUNCTION_ARGS)
{
	return timestamp_interval(fcinfo, 1, true);
}

/* uldp._safe_time_sub(timestamptz, interval) returns timestamptz */
Datum
uldp_safe_timestamptz_sub(PG_FUNCTION_ARGS)
{
	return timestamp_interval(fcinfo, -1, true);
}

/* date ± interval: the date as a timestamp (date_pl_interval), then as above */
static Datum
date_interval(FunctionCallInfo fcinfo, int sign)
{
	int			overflow;
	Timestamp	ts = date2timestamp_opt_overflow(PG_GETARG_DATEADT(0), &overflow);
	Timestamp	result;

	if (overflow != 0 || !add_interval(ts, PG_GETARG_INTERVAL_P(1), sign, false, &result))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMP(result);
}

/* uldp._safe_time_add(date, interval) returns timestamp */
Datum
uldp_safe_date_add_interval(PG_FUNCTION_ARGS)
{
	return date_interval(fcinfo, 1);
}

/* uldp._safe_time_sub(date, interval) returns timestamp */
Datum
uldp_safe_date_sub_interval(PG_FUNCTION_ARGS)
{
	return date_interval(fcinfo, -1);
}

/* date ± days (date_pli, date_mii): infinite dates stay, others stay in range */
static Datum
date_days(FunctionCallInfo fcinfo, int sign)
{
	DateADT		date = PG_GETARG_DATEADT(0);
	int64		result = date + sign * (int64) PG_GETARG_INT32(1);

	if (DATE_NOT_FINITE(date))
		PG_RETURN_DATEADT(date);
	if (!IS_VALID_DATE(result))
		PG_RETURN_NULL();
	PG_RETURN_DATEADT((DateADT) result);
}

/* uldp._safe_time_add(date, integer) returns date */
Datum
uldp_safe_date_add_days(PG_FUNCTION_ARGS)
{
	return date_days(fcinfo, 1);
}

/* uldp._safe_time_sub(date, integer) returns date */
Datum
uldp_safe_date_sub_days(PG_FUNCTION_ARGS)
{
	return date_days(fcinfo, -1);
}

/* uldp._safe_time_sub(date, date) returns integer: NULL for infinite dates */
Datum
uldp_safe_date_sub_date(PG_FUNCTION_ARGS)
{
	DateADT		a = PG_GETARG_DATEADT(0);
	DateADT		b = PG_GETARG_DATEADT(1);

	/* finite dates are less than 2^31 days apart */
	if (DATE_NOT_FINITE(a) || DATE_NOT_FINITE(b))
		PG_RETURN_NULL();
	PG_RETURN_INT32(a - b);
}

/*
 * uldp._safe_time_sub(timestamp, timestamp) and (timestamptz, timestamptz)
 * return interval: NULL for infinite timestamps, and where the microseconds
 * between them do not fit 64 bits.
 */
Datum
uldp_safe_timestamp_sub_timestamp(PG_FUNCTION_ARGS)
{
	Timestamp	a = PG_GETARG_TIMESTAMP(0);
	Timestamp	b = PG_GETARG_TIMESTAMP(1);
	int64		difference;

	if (TIMESTAMP_NOT_FINITE(a) || TIMESTAMP_NOT_FINITE(b) ||
		pg_sub_s64_overflow(a, b, &difference))
		PG_RETURN_NULL();
	return DirectFunctionCall2(timestamp_mi, TimestampGetDatum(a), TimestampGetDatum(b));
}

/* interval ± interval, field by field (interval_pl, interval_mi) */
static Datum
interval_interval(FunctionCallInfo fcinfo, int sign)
{
	Interval   *a = PG_GETARG_INTERVAL_P(0);
	Interval   *b = PG_GETARG_INTERVAL_P(1);
	Interval   *result = palloc(sizeof(Interval));
	bool		overflow;

	if (sign == 1)
		overflow = pg_add_s32_overflow(a->month, b->month, &result->month) ||
			pg_add_s32_overflow(a->day, b->day, &result->day) ||
			pg_add_s64_overflow(a->time, b->time, &result->time);
	else
		overflow = pg_sub_s32_overflow(a->month, b->month, &result->month) ||
			pg_sub_s32_overflow(a->day, b->day, &result->day) ||
			pg_sub_s64_overflow(a->time, b->time, &result->time);
	if (overflow)
		PG_RETURN_NULL();
	PG_RETURN_INTERVAL_P(result);
}

/* uldp._safe_time_add(interval, interval) returns interval */
Datum
uldp_safe_interval_add(PG_FUNCTION_ARGS)
{
	return interval_interval(fcinfo, 1);
}

/* uldp._safe_time_sub(interval, interval) returns interval */
Datum
uldp_safe_interval_sub(PG_FUNCTION_ARGS)
{
	return interval_interval(fcinfo, -1);
}

/* uldp._safe_time_neg(interval) returns interval: NULL if a field is its type's minimum */
Datum
uldp_safe_interval_neg(PG_FUNCTION_ARGS)
{
	Interval   *span = PG_GETARG_INTERVAL_P(0);
	Interval   *result;

	if (span->month == PG_INT32_MIN || span->day == PG_INT32_MIN || span->time == PG_INT64_MIN)
		PG_RETURN_NULL();
	result = palloc(sizeof(Interval));
	result->month = -span->month;
	result->day = -span->day;
	result->time = -span->time;
	PG_RETURN_INTERVAL_P(result);
}

/*
 * date_trunc(units, ts) by the built-in "trunc", computed 2000 years away
 * from either end (see the file's header); NULL where the result leaves the
 * range, where the built-in fails.  Infinities are returned as they are.
 */
static Datum
date_trunc_shifted(FunctionCallInfo fcinfo, PGFunction trunc)
{
	Datum		units = PG_GETARG_DATUM(0);
	Timestamp	ts = PG_GETARG_TIMESTAMP(1);
	int64		shift = 0;
	Timestamp	result;

	if (TIMESTAMP_NOT_FINITE(ts))
		PG_RETURN_TIMESTAMP(ts);
	if (ts < MIN_TIMESTAMP + CALENDAR_SHIFT)
		shift = CALENDAR_SHIFT;
	else if (ts >= END_TIMESTAMP - CALENDAR_SHIFT)
		shift = -CALENDAR_SHIFT;
	result = DatumGetTimestamp(DirectFunctionCall2(trunc, units, TimestampGetDatum(ts + shift))) - shift;
	if (!IS_VALID_TIMESTAMP(result))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMP(result);
}

/* uldp._safe_date_trunc(text, timestamp) returns timestamp */
Datum
uldp_safe_date_trunc(PG_FUNCTION_ARGS)
{
	return date_trunc_shifted(fcinfo, timestamp_trunc);
}

/* uldp._safe_date_trunc(text, timestamptz) returns timestamptz, in the session's time zone */
Datum
uldp_safe_date_trunc_tz(PG_FUNCTION_ARGS)
{
	return date_trunc_shifted(fcinfo, timestamptz_trunc);
}

/*
 * uldp._safe_date_part(text, date) returns float8: date_part(text, date) is
 * date_part(field, date::timestamp), NULL for dates after the last timestamp
 * (and, as the built-in, for fields that infinities do not have).
 */
Datum
uldp_safe_date_part_date(PG_FUNCTION_ARGS)
{
	int			overflow;
	Timestamp	ts = date2timestamp_opt_overflow(PG_GETARG_DATEADT(1), &overflow);
	Datum		result;

	LOCAL_FCINFO(part, 2);

	if (overflow != 0)
		PG_RETURN_NULL();
	InitFunctionCallInfoData(*part, NULL, 2, InvalidOid, NULL, NULL);
	part->args[0].value = PG_GETARG_DATUM(0);
	part->args[0].isnull = false;
	part->args[1].value = TimestampGetDatum(ts);
	part->args[1].isnull = false;
	result = timestamp_part(part);
	if (part->isnull)
		PG_RETURN_NULL();
	return result;
}

/*
 * age(a, b) takes the calendar fields of both (timestamp_age,
 * timestamptz_age), and -infinity has none: the only value it fails on.
 */
static bool
age_defined(Timestamp a, Timestamp b)
{
	return !TIMESTAMP_IS_NOBEGIN(a) && !TIMESTAMP_IS_NOBEGIN(b);
}

/* uldp._safe_age(timestamp, timestamp) returns interval */
Datum
uldp_safe_age(PG_FUNCTION_ARGS)
{
	if (!age_defined(PG_GETARG_TIMESTAMP(0), PG_GETARG_TIMESTAMP(1)))
		PG_RETURN_NULL();
	return DirectFunctionCall2(timestamp_age, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

/* uldp._safe_age(timestamptz, timestamptz) returns interval */
Datum
uldp_safe_age_tz(PG_FUNCTION_ARGS)
{
	if (!age_defined(PG_GETARG_TIMESTAMPTZ(0), PG_GETARG_TIMESTAMPTZ(1)))
		PG_RETURN_NULL();
	return DirectFunctionCall2(timestamptz_age, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

/* uldp._safe_age(timestamp) returns interval: age(current_date::timestamp, ts) */
Datum
uldp_safe_age_today(PG_FUNCTION_ARGS)
{
	Timestamp	today = date2timestamp_opt_overflow(GetSQLCurrentDate(), NULL);

	if (!age_defined(today, PG_GETARG_TIMESTAMP(0)))
		PG_RETURN_NULL();
	return DirectFunctionCall2(timestamp_age, TimestampGetDatum(today), PG_GETARG_DATUM(0));
}

/* uldp._safe_age(timestamptz) returns interval: age(current_date::timestamptz, ts) */
Datum
uldp_safe_age_today_tz(PG_FUNCTION_ARGS)
{
	TimestampTz today = date2timestamptz_opt_overflow(GetSQLCurrentDate(), NULL);

	if (!age_defined(today, PG_GETARG_TIMESTAMPTZ(0)))
		PG_RETURN_NULL();
	return DirectFunctionCall2(timestamptz_age, TimestampTzGetDatum(today), PG_GETARG_DATUM(0));
}

/* uldp._safe_cast_timestamp(date) returns timestamp: NULL after 294276 AD */
Datum
uldp_safe_date_timestamp(PG_FUNCTION_ARGS)
{
	int			overflow;
	Timestamp	result = date2timestamp_opt_overflow(PG_GETARG_DATEADT(0), &overflow);

	if (overflow != 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMP(result);
}

/* uldp._safe_cast_timestamptz(date) returns timestamptz: midnight in the session's time zone */
Datum
uldp_safe_date_timestamptz(PG_FUNCTION_ARGS)
{
	int			overflow;
	TimestampTz result = date2timestamptz_opt_overflow(PG_GETARG_DATEADT(0), &overflow);

	if (overflow != 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(result);
}

/* uldp._safe_cast_timestamptz(timestamp) returns timestamptz: the local time in the session's zone */
Datum
uldp_safe_timestamp_timestamptz(PG_FUNCTION_ARGS)
{
	int			overflow;
	TimestampTz result = timestamp2timestamptz_opt_overflow(PG_GETARG_TIMESTAMP(0), &overflow);

	if (overflow != 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(result);
}

/*
 * uldp._safe_cast_timestamp(timestamptz) returns timestamp: the session's
 * local time, NULL where it is outside the range of timestamps.
 */
Datum
uldp_safe_timestamptz_timestamp(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	Timestamp	result;

	if (TIMESTAMP_NOT_FINITE(ts))
		PG_RETURN_TIMESTAMP(ts);
	if (timestamp2tm(ts, &tz, &tm, &fsec, NULL, NULL) != 0 ||
		tm2timestamp(&tm, fsec, NULL, &result) != 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMP(result);
}

/*
 * Raises the error that "func" (extract, date_part or date_trunc) raises
 * for the field name "field" on values of type "type", if it raises one:
 * it is called on a finite value and on both infinities, which take
 * different paths through the built-ins (and may return NULL).  Where it
 * succeeds on these, it succeeds on every value of the type.
 */
void
uldp_check_time_field(Oid func, Datum field, Oid type)
{
	Datum		values[3];
	int			nvalues = 3;
	Interval	zero = {0};
	FmgrInfo	flinfo;

	LOCAL_FCINFO(fcinfo, 2);

	switch (type)
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			values[0] = TimestampGetDatum(0);
			values[1] = TimestampGetDatum(DT_NOBEGIN);
			values[2] = TimestampGetDatum(DT_NOEND);
			break;
		case DATEOID:
			values[0] = DateADTGetDatum(0);
			values[1] = DateADTGetDatum(DATEVAL_NOBEGIN);
			values[2] = DateADTGetDatum(DATEVAL_NOEND);
			break;
		case INTERVALOID:
			values[0] = IntervalPGetDatum(&zero);
			nvalues = 1;
			break;
		default:
			elog(ERROR, "uldp: no date/time field check for type %u", type);
	}
	fmgr_info(func, &flinfo);
	for (int i = 0; i < nvalues; i++)
	{
		InitFunctionCallInfoData(*fcinfo, &flinfo, 2, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = field;
		fcinfo->args[0].isnull = false;
		fcinfo->args[1].value = values[i];
		fcinfo->args[1].isnull = false;
		(void) FunctionCallInvoke(fcinfo);
	}
}

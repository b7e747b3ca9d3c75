/*-------------------------------------------------------------------------
 *
 * reportjson.c
 *	  A report as JSON, written by the client and read back by the server.
 *
 * The keys depend only on the round's kind, and all of them are required:
 *	range			{"v":1,"round":7,"index":12,"sign":-1}
 *	mean			{"v":1,"round":8,"level":-123}
 *	vector_range	{"v":1,"round":9,"coordinate":2,"index":5,"sign":1}
 *	vector_mean, gradient {"v":1,"round":10,"coordinate":2,"level":77}
 * The server reads reports from untrusted clients, so parsing is strict:
 * integers only (no fraction or exponent, no strings), every value in the
 * range the round allows, no missing or extra key.  A report that passes
 * is one that an honest client could have sent, so a malicious client can
 * shift the estimate by no more than one extreme report.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "kinds.h"
#include "uldp_local.h"

/*
 * Writes the report's JSON (no white space) into buffer, and returns its
 * length like snprintf: the text is complete iff the result is below size;
 * ULDP_LOCAL_REPORT_SIZE is always enough.
 */
size_t
uldp_local_report_format(const UldpLocalRound *round, const UldpLocalReport *report,
						 char *buffer, size_t size)
{
	char		coordinate[32] = "";
	int			length;

	if (uldp_local_is_vector(round->kind))
		snprintf(coordinate, sizeof(coordinate), "\"coordinate\":%d,",
				 (int) report->coordinate);
	if (uldp_local_is_range(round->kind))
		length = snprintf(buffer, size, "{\"v\":%d,\"round\":%lld,%s\"index\":%lld,\"sign\":%d}",
						  ULDP_LOCAL_FORMAT, (long long) report->round, coordinate,
						  (long long) report->index, (int) report->sign);
	else
		length = snprintf(buffer, size, "{\"v\":%d,\"round\":%lld,%s\"level\":%lld}",
						  ULDP_LOCAL_FORMAT, (long long) report->round, coordinate,
						  (long long) report->level);
	return length < 0 ? 0 : (size_t) length;
}

static bool
report_hint(const UldpLocalRound *round, UldpLocalError *error)
{
	return uldp_local_hint(error, "A report of this round has the keys \"v\", \"round\"%s%s, and nothing else.",
						   uldp_local_is_vector(round->kind) ? ", \"coordinate\"" : "",
						   uldp_local_is_range(round->kind) ? ", \"index\", \"sign\"" : ", \"level\"");
}

/* the integer member key, within [low, high] */
static bool
read_integer(const UldpLocalRound *round, const UldpJson *json, const char *key,
			 int64_t low, int64_t high, int64_t *result, UldpLocalError *error)
{
	const UldpJson *value = uldp_json_member(json, key);

	if (value == NULL)
	{
		uldp_local_fail(error, "the report has no \"%s\"", key);
		return report_hint(round, error);
	}
	if (!uldp_json_int64(value, result))
	{
		uldp_local_fail(error, "the report's \"%s\" is not an integer", key);
		return uldp_local_hint(error, "Give \"%s\" as a JSON number without fraction or exponent.", key);
	}
	if (*result < low || *result > high)
	{
		uldp_local_fail(error, "the report's \"%s\" %lld is outside [%lld, %lld]", key,
						(long long) *result, (long long) low, (long long) high);
		return uldp_local_hint(error, "The report does not belong to this round, or was altered.");
	}
	return true;
}

/* whether a report of this round may carry key */
static bool
allowed_key(const UldpLocalRound *round, const char *key)
{
	bool		range = uldp_local_is_range(round->kind);

	return strcmp(key, "v") == 0 || strcmp(key, "round") == 0 ||
		(uldp_local_is_vector(round->kind) && strcmp(key, "coordinate") == 0) ||
		(range && (strcmp(key, "index") == 0 || strcmp(key, "sign") == 0)) ||
		(!range && strcmp(key, "level") == 0);
}

/* every key allowed, and every key of the round read (so all are there) */
static bool
read_fields(const UldpLocalRound *round, const UldpJson *json, UldpLocalReport *report,
			UldpLocalError *error)
{
	int64_t		version;
	int64_t		value;

	if (json->type != ULDP_JSON_OBJECT)
	{
		uldp_local_fail(error, "a report must be a JSON object");
		return report_hint(round, error);
	}
	for (int i = 0; i < json->count; i++)
		if (!allowed_key(round, json->keys[i]))
		{
			char		excerpt[ULDP_LOCAL_EXCERPT_SIZE];

			uldp_local_fail(error, "unexpected key \"%s\" in a report",
							uldp_local_excerpt(json->keys[i], excerpt));
			return report_hint(round, error);
		}
	if (!read_integer(round, json, "v", INT64_MIN, INT64_MAX, &version, error))
		return false;
	if (version != ULDP_LOCAL_FORMAT)
	{
		uldp_local_fail(error, "unsupported report format %lld", (long long) version);
		return uldp_local_hint(error, "This library reads format %d; update the client or the server so that they agree.",
							   ULDP_LOCAL_FORMAT);
	}
	if (!read_integer(round, json, "round", INT64_MIN, INT64_MAX, &report->round, error))
		return false;
	if (report->round != round->id)
	{
		uldp_local_fail(error, "the report is for round %lld, not %lld",
						(long long) report->round, (long long) round->id);
		return uldp_local_hint(error, "Submit each report to the round it was made for.");
	}
	if (uldp_local_is_vector(round->kind))
	{
		if (!read_integer(round, json, "coordinate", 0, round->padded - 1, &value, error))
			return false;
		report->coordinate = (int32_t) value;
	}
	if (!uldp_local_is_range(round->kind))
		return read_integer(round, json, "level", -ULDP_LOCAL_MAX_LEVEL, ULDP_LOCAL_MAX_LEVEL,
							&report->level, error);
	if (!read_integer(round, json, "index", 0, round->hadamard_size - 1, &report->index, error) ||
		!read_integer(round, json, "sign", -1, 1, &value, error))
		return false;
	if (value == 0)
	{
		uldp_local_fail(error, "the report's \"sign\" is 0");
		return uldp_local_hint(error, "A range report's sign is 1 or -1.");
	}
	report->sign = (int32_t) value;
	return true;
}

bool
uldp_local_report_parse(const UldpLocalRound *round, const char *text,
						UldpLocalReport *report, UldpLocalError *error)
{
	UldpJson   *json = uldp_json_parse(text, "report", error);
	bool		ok;

	if (json == NULL)
		return false;
	memset(report, 0, sizeof(UldpLocalReport));
	ok = read_fields(round, json, report, error);
	uldp_json_free(json);
	return ok;
}

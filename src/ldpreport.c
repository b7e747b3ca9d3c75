/*-------------------------------------------------------------------------
 *
 * ldpreport.c
 *	  Reports of the local protocol: uldp.ldp_report makes one user's report
 *	  with the client library's own code, uldp.ldp_submit stores a report
 *	  that a client sent.
 *
 * uldp.ldp_report is for clients that are databases themselves, and for
 * the ingestion trigger uldp.ldp_ingest: the samples are its arguments and
 * are never stored.  It charges no budget (the report is the user's to
 * give; doc/privacy.md).
 *
 * uldp.ldp_submit accepts exactly what uldp_local_report_parse accepts for
 * the round (what uldp.ldp_report and the uldp-local tool write), into an
 * open round, once per user key; anything else is refused and changes
 * nothing.  The report is stored as the library formats it, so that the
 * stored reports are canonical.  The round's row is share-locked until the
 * submitting transaction ends, so uldp.ldp_result, which closes the round
 * under an update lock, counts every report that was accepted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"

#include "ldpround.h"

PG_FUNCTION_INFO_V1(uldp_ldp_report);
PG_FUNCTION_INFO_V1(uldp_ldp_submit);

/*
 * The samples of an array as rows of "width" numbers: a two-dimensional
 * array has one row per sample; a one-dimensional one is one sample, or for
 * scalar rounds (width 1) one sample per element.  NULL elements are NaN,
 * which the library treats as missing (it drops the row).
 */
static double *
array_samples(ArrayType *array, int64 round, int width, int64 *m)
{
	int			ndim = ARR_NDIM(array);
	int		   *dims = ARR_DIMS(array);
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	double	   *samples;

	if (ndim > 2)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("samples must be a one- or two-dimensional array, not %d-dimensional", ndim),
				 errhint("Pass one row per sample.")));
	if ((ndim == 2 && dims[1] != width) || (ndim == 1 && width > 1 && dims[0] != width))
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("uldp round " INT64_FORMAT " takes samples of %d numbers, not %d",
						round, width, dims[ndim - 1]),
				 errhint("Pass one sample as an array of %d numbers, or several as a two-dimensional array with one row per sample (uldp.ldp_report(round, array_agg(sample)) makes one from one row per sample).",
						 width)));
	deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elements, &nulls, &n);
	samples = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
		samples[i] = nulls[i] ? get_float8_nan() : DatumGetFloat8(elements[i]);
	*m = n / width;
	return samples;
}

/*
 * uldp.ldp_report(round bigint, samples float8[]) RETURNS jsonb: one user's
 * report for the round, made from all of the user's samples.
 */
Datum
uldp_ldp_report(PG_FUNCTION_ARGS)
{
	int64		id;
	UldpLdpRound round;
	double	   *samples;
	int64		m;
	UldpLocalReport report;
	UldpLocalError error;
	char	   *json;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("round and samples must not be null"),
				 errhint("Pass the round's id and the user's samples; an empty array stands for a user without samples.")));
	id = PG_GETARG_INT64(0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	uldp_ldp_load_round(id, ULDP_LDP_NO_LOCK, &round);
	samples = array_samples(PG_GETARG_ARRAYTYPE_P(1), id, round.local.row_width, &m);
	if (!uldp_local_report(&round.local, samples, m, &report, &error))
		uldp_ldp_refuse(&error);
	json = SPI_palloc(ULDP_LOCAL_REPORT_SIZE);
	uldp_local_report_format(&round.local, &report, json, ULDP_LOCAL_REPORT_SIZE);
	SPI_finish();
	PG_RETURN_JSONB_P(uldp_ldp_jsonb(json));
}

/*
 * uldp.ldp_submit(round bigint, user_key text, report jsonb) RETURNS void:
 * stores a user's report in an open round.
 */
Datum
uldp_ldp_submit(PG_FUNCTION_ARGS)
{
	int64		id;
	text	   *user_key;
	Jsonb	   *submitted;
	UldpLdpRound round;
	UldpLocalReport report;
	UldpLocalError error;
	char		canonical[ULDP_LOCAL_REPORT_SIZE];
	Oid			argtypes[3] = {INT8OID, TEXTOID, JSONBOID};
	Datum		args[3];

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("round, user_key and report must not be null"),
				 errhint("Pass the round's id, the key of the user who sent the report, and the report.")));
	id = PG_GETARG_INT64(0);
	user_key = PG_GETARG_TEXT_PP(1);
	submitted = PG_GETARG_JSONB_P(2);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	uldp_ldp_load_round(id, ULDP_LDP_SHARE, &round);
	if (round.result != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uldp round " INT64_FORMAT " is closed", id),
				 errhint("Its result is computed and no report can change it; send reports to a round that is open.")));
	if (!uldp_local_report_parse(&round.local,
								 JsonbToCString(NULL, &submitted->root, VARSIZE(submitted)),
								 &report, &error))
		uldp_ldp_refuse(&error);
	uldp_local_report_format(&round.local, &report, canonical, sizeof(canonical));

	args[0] = Int64GetDatum(id);
	args[1] = PointerGetDatum(user_key);
	args[2] = JsonbPGetDatum(uldp_ldp_jsonb(canonical));
	if (SPI_execute_with_args("INSERT INTO uldp.ldp_reports (round_id, user_key, report) "
							  "VALUES ($1, $2, $3) ON CONFLICT (round_id, user_key) DO NOTHING",
							  3, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store a report in uldp round " INT64_FORMAT, id);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("user \"%s\" has already submitted a report to uldp round " INT64_FORMAT,
						text_to_cstring(user_key), id),
				 errhint("Each user sends one report per round: a second one would count the user twice.")));
	SPI_finish();
	PG_RETURN_VOID();
}

/*-------------------------------------------------------------------------
 *
 * ldpresult.c
 *	  Results of the local protocol: uldp.ldp_result closes a round and
 *	  decodes its reports (ldpdecode.c), uldp.ldp_sgd_step turns a gradient
 *	  round's result into the next model (ULDP-SGD, Girgis, Data and
 *	  Diggavi, Algorithm 6).
 *
 * A result is computed once, under an update lock on the round's row (which
 * waits for the transactions that submitted reports, ldpreport.c), stored
 * with the time the round closed, and returned as stored ever after: no
 * report can be added to a closed round, so nothing changes a result.
 * Reports are already private, so results charge no central budget.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "ldpdecode.h"
#include "ldpround.h"
#include "vecstate.h"

/* reports read from the table at a time */
#define REPORT_BATCH 1000

PG_FUNCTION_INFO_V1(uldp_ldp_result);
PG_FUNCTION_INFO_V1(uldp_ldp_sgd_step);

/* Decodes every stored report of the round. */
static char *
decode_reports(const UldpLdpRound *round)
{
	UldpLdpDecoder *decoder = uldp_ldp_decoder_create(&round->local);
	MemoryContext batch = AllocSetContextCreate(CurrentMemoryContext, "uldp reports",
												ALLOCSET_DEFAULT_SIZES);
	Oid			argtypes[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(round->id)};
	Portal		portal;

	portal = SPI_cursor_open_with_args(NULL, "SELECT report::text FROM uldp.ldp_reports WHERE round_id = $1",
									   1, argtypes, args, NULL, false, 0);
	for (;;)
	{
		MemoryContext outer;

		SPI_cursor_fetch(portal, true, REPORT_BATCH);
		if (SPI_processed == 0)
			break;
		outer = MemoryContextSwitchTo(batch);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			UldpLocalReport report;
			UldpLocalError error;

			if (!uldp_local_report_parse(&round->local,
										 SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
										 &report, &error))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a stored report of uldp round " INT64_FORMAT " is invalid: %s",
								round->id, error.message),
						 errhint("uldp.ldp_submit stores only valid reports: a row of uldp.ldp_reports was changed by hand.")));
			uldp_ldp_decoder_add(decoder, &report);
		}
		MemoryContextSwitchTo(outer);
		MemoryContextReset(batch);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	MemoryContextDelete(batch);
	return uldp_ldp_decoder_result(decoder);
}

/*
 * The result of a round loaded with ULDP_LDP_UPDATE: the stored one, or
 * computed now from its reports and stored, which closes the round.
 */
static Jsonb *
round_result(UldpLdpRound *round)
{
	Oid			argtypes[2] = {INT8OID, JSONBOID};
	Datum		args[2];

	if (round->result != NULL)
		return round->result;
	round->result = uldp_ldp_jsonb(decode_reports(round));
	args[0] = Int64GetDatum(round->id);
	args[1] = JsonbPGetDatum(round->result);
	if (SPI_execute_with_args("UPDATE uldp.ldp_rounds SET closed_at = clock_timestamp(), result = $2 "
							  "WHERE id = $1",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "could not store the result of uldp round " INT64_FORMAT, round->id);
	return round->result;
}

/*
 * uldp.ldp_result(round bigint) RETURNS jsonb: the round's result; the first
 * call closes the round.
 */
Datum
uldp_ldp_result(PG_FUNCTION_ARGS)
{
	UldpLdpRound round;
	Datum		result;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	uldp_ldp_load_round(PG_GETARG_INT64(0), ULDP_LDP_UPDATE, &round);
	result = SPI_datumTransfer(JsonbPGetDatum(round_result(&round)), false, -1);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/* The "count" numbers of the array under "key" of a result. */
static double *
result_numbers(Jsonb *result, const char *key, int count)
{
	JsonbValue *array = getKeyJsonValueFromContainer(&result->root, key, strlen(key), NULL);
	double	   *numbers = palloc(count * sizeof(double));
	JsonbIterator *it;
	JsonbValue	value;
	JsonbIteratorToken token;
	int			n = 0;

	if (array == NULL || array->type != jbvBinary)
		elog(ERROR, "the result of a gradient round has no \"%s\" array", key);
	it = JsonbIteratorInit(array->val.binary.data);
	while ((token = JsonbIteratorNext(&it, &value, true)) != WJB_DONE)
		if (token == WJB_ELEM)
		{
			if (value.type != jbvNumeric || n == count)
				elog(ERROR, "the \"%s\" array of a gradient round's result is not %d numbers", key, count);
			numbers[n++] = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
															  NumericGetDatum(value.val.numeric)));
		}
	if (n != count)
		elog(ERROR, "the \"%s\" array of a gradient round's result is not %d numbers", key, count);
	return numbers;
}

/*
 * uldp.ldp_sgd_step(round bigint) RETURNS jsonb: the model after one step
 * of ULDP-SGD from a gradient round,
 *	weights - learning_rate * (the round's mean gradient),
 * projected onto the l2 ball of the round's "radius" if it has one, as
 * {"loss", "weights", "feature_radius"}: what uldp.predict reads and the
 * "model" of the next gradient round.  It closes the round if it is open.
 */
Datum
uldp_ldp_sgd_step(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	UldpLdpRound round;
	int			width;
	double	   *gradient;
	double	   *weights;
	double		learning_rate;
	double		radius;
	StringInfoData out;
	Datum		model;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	uldp_ldp_load_round(id, ULDP_LDP_UPDATE, &round);
	if (round.local.kind != ULDP_LOCAL_GRADIENT)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("uldp round " INT64_FORMAT " is a %s round, not a gradient round",
						id, uldp_ldp_kind_name(round.local.kind)),
				 errhint("Steps of ULDP-SGD are taken from gradient rounds: create one with uldp.ldp_round('gradient', ...).")));
	width = round.local.dimension;
	gradient = result_numbers(round_result(&round), "estimate", width);
	learning_rate = uldp_ldp_number(round.jsonb, "learning_rate");
	radius = uldp_ldp_number(round.jsonb, "radius");

	weights = palloc(width * sizeof(double));
	for (int j = 0; j < width; j++)
		weights[j] = round.local.weights[j] - learning_rate * gradient[j];
	if (!isnan(radius))
		uldp_clip_to_ball(weights, width, radius);
	for (int j = 0; j < width; j++)
		if (!isfinite(weights[j]))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("the step of uldp round " INT64_FORMAT " leaves the weights infinite", id),
					 errhint("Use a smaller learning_rate, or give the gradient rounds a radius.")));

	initStringInfo(&out);
	appendStringInfo(&out, "{\"loss\": \"%s\", \"weights\": [",
					 round.local.loss == ULDP_LOCAL_LOGISTIC ? "logistic" : "squared");
	for (int j = 0; j < width; j++)
		appendStringInfo(&out, "%s%s", j > 0 ? ", " : "", double_to_shortest_decimal(weights[j]));
	appendStringInfo(&out, "], \"feature_radius\": %s}",
					 double_to_shortest_decimal(round.local.feature_radius));
	model = SPI_datumTransfer(JsonbPGetDatum(uldp_ldp_jsonb(out.data)), false, -1);
	SPI_finish();
	PG_RETURN_DATUM(model);
}

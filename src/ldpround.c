/*-------------------------------------------------------------------------
 *
 * ldpround.c
 *	  Rounds of the local protocol: uldp.ldp_round creates one,
 *	  uldp.ldp_round_info shows it as clients read it.
 *
 * A round is the JSON object of src/local/uldp_local.h's format version 1
 * (doc/local.md): the caller's parameters plus "v", "id" and "kind", and
 * for vector kinds the public "rotation_seed", drawn here with
 * uldp_random_u64 (the seeded stream in the test mode).  It is validated
 * by the client library's own parser, so the server and every client agree
 * on what a round means, and stored in uldp.ldp_rounds with its epsilon
 * and delta.
 *
 * "range_round": R in the parameters of a round takes its interval(s) from
 * the result of the closed round R (Algorithm 1: range, then mean): a mean
 * round from a range round, a vector_mean round from a vector_range round
 * without a model, a gradient round from a vector_range round over a model
 * (the range of the mean clipped gradients).  Vector rounds also take R's
 * rotation, in whose coordinates the intervals are, and what R summarised
 * (vector_mean: dimension and bound; gradient: model and clip) unless the
 * parameters give it: a gradient round may so keep the range of an earlier
 * model's gradients for a later model.
 *
 * The keys the library ignores are the server's own and are checked here:
 * "learning_rate" (required) and "radius" (optional) of gradient rounds,
 * for uldp.ldp_sgd_step, and "range_round".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "ldpdecode.h"
#include "ldpround.h"
#include "local/kinds.h"
#include "random.h"

PG_FUNCTION_INFO_V1(uldp_ldp_round);
PG_FUNCTION_INFO_V1(uldp_ldp_round_info);

/* by UldpLocalKind */
static const char *const kind_names[] = {
	"range", "mean", "vector_range", "vector_mean", "gradient"
};

/* keys only the server writes */
static const char *const server_keys[] = {"v", "id", "kind", "rotation_seed"};

/*
 * what vector_mean and gradient rounds take from their range round besides
 * the intervals and the rotation, unless their parameters give them
 */
static const char *const vector_mean_keys[] = {"dimension", "bound"};
static const char *const gradient_keys[] = {"model", "clip"};

const char *
uldp_ldp_kind_name(UldpLocalKind kind)
{
	return kind_names[kind];
}

void
uldp_ldp_refuse(const UldpLocalError *error)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", error->message),
			 error->hint[0] != '\0' ? errhint("%s", error->hint) : 0));
	pg_unreachable();
}

Jsonb *
uldp_ldp_jsonb(const char *json)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/*
 * Reads round "id" (with the row lock asked for) and parses it; an unknown
 * round is an error.
 */
void
uldp_ldp_load_round(int64 id, UldpLdpLock lock, UldpLdpRound *round)
{
	static const char *const lock_clauses[] = {"", " FOR SHARE", " FOR UPDATE"};
	Oid			argtypes[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;
	Datum		result;
	UldpLocalError error;

	if (SPI_execute_with_args(psprintf("SELECT round::text, round, result FROM uldp.ldp_rounds WHERE id = $1%s",
									   lock_clauses[lock]),
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read uldp round " INT64_FORMAT, id);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("uldp round " INT64_FORMAT " does not exist", id),
				 errhint("Create rounds with uldp.ldp_round(kind, params); the table uldp.ldp_rounds lists them.")));
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	round->id = id;
	round->json = SPI_getvalue(tuple, desc, 1);
	round->jsonb = DatumGetJsonbP(SPI_getbinval(tuple, desc, 2, &isnull));
	result = SPI_getbinval(tuple, desc, 3, &isnull);
	round->result = isnull ? NULL : DatumGetJsonbP(result);
	if (!uldp_local_round_parse(round->json, &round->local, &error))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stored uldp round " INT64_FORMAT " is invalid: %s", id, error.message),
				 errhint("uldp.ldp_round stores only valid rounds: the row was changed by hand.")));
}

static void
refuse_parameter(const char *key, const char *problem, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid round parameter \"%s\": %s", key, problem),
			 errhint("%s", hint)));
}

static JsonbValue *
find_key(Jsonb *jsonb, const char *key)
{
	return getKeyJsonValueFromContainer(&jsonb->root, key, strlen(key), NULL);
}

/* The number under "key" of a JSON object, or NaN when the key is absent. */
double
uldp_ldp_number(Jsonb *object, const char *key)
{
	JsonbValue *value = find_key(object, key);

	if (value == NULL)
		return get_float8_nan();
	if (value->type != jbvNumeric)
		refuse_parameter(key, "not a number", "Pass a JSON number.");
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8,
											  NumericGetDatum(value->val.numeric)));
}

/*
 * Checks the server's own keys in the parameters of a round of "kind";
 * returns the range round's id, or 0 when there is none.
 */
static int64
check_server_parameters(UldpLocalKind kind, Jsonb *params)
{
	double		learning_rate = uldp_ldp_number(params, "learning_rate");
	double		radius = uldp_ldp_number(params, "radius");
	double		range_round = uldp_ldp_number(params, "range_round");

	for (int i = 0; i < lengthof(server_keys); i++)
		if (find_key(params, server_keys[i]) != NULL)
			refuse_parameter(server_keys[i], "set by the server",
							 "Leave it out: uldp.ldp_round adds it to the round.");
	if (kind == ULDP_LOCAL_GRADIENT)
	{
		if (isnan(learning_rate))
			refuse_parameter("learning_rate", "missing",
							 "Gradient rounds give the step size of uldp.ldp_sgd_step, e.g. \"learning_rate\": 0.5.");
		if (!(learning_rate > 0 && isfinite(learning_rate)))
			refuse_parameter("learning_rate", "must be a positive finite number",
							 "uldp.ldp_sgd_step moves the weights by -learning_rate times the mean gradient.");
		if (!isnan(radius) && !(radius > 0 && isfinite(radius)))
			refuse_parameter("radius", "must be a positive finite number",
							 "uldp.ldp_sgd_step projects the next weights onto the l2 ball of this radius; leave it out for no projection.");
	}
	else
	{
		if (!isnan(learning_rate))
			refuse_parameter("learning_rate", "only gradient rounds take it",
							 "Leave it out, or create a gradient round.");
		if (!isnan(radius))
			refuse_parameter("radius", "only gradient rounds take it",
							 "Leave it out, or create a gradient round.");
	}
	if (isnan(range_round))
		return 0;
	if (uldp_local_is_range(kind))
		refuse_parameter("range_round", "only mean, vector_mean and gradient rounds take it",
						 "Leave it out: range rounds need no earlier round.");
	if (!(range_round >= 1 && range_round < 0x1p63 && range_round == floor(range_round)))
		refuse_parameter("range_round", "not a round id",
						 "Pass the id of a closed range round, as uldp.ldp_round returned it.");
	return (int64) range_round;
}

/* Loads range round "id", checked to be closed and to fit a round of "kind". */
static void
load_range_round(int64 id, UldpLocalKind kind, UldpLdpRound *range)
{
	UldpLocalKind wanted = kind == ULDP_LOCAL_MEAN ? ULDP_LOCAL_RANGE : ULDP_LOCAL_VECTOR_RANGE;

	uldp_ldp_load_round(id, ULDP_LDP_NO_LOCK, range);
	if (range->local.kind != wanted)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uldp round " INT64_FORMAT " is a %s round, not a %s round",
						id, kind_names[range->local.kind], kind_names[wanted]),
				 errhint("A %s round takes its intervals from a %s round.",
						 kind_names[kind], kind_names[wanted])));
	if (kind == ULDP_LOCAL_VECTOR_MEAN && range->local.loss != ULDP_LOCAL_NO_MODEL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uldp round " INT64_FORMAT " ranges the gradients of a model", id),
				 errhint("Use it for a gradient round; a vector_mean round takes its intervals from a vector_range round without a model.")));
	if (kind == ULDP_LOCAL_GRADIENT && range->local.loss == ULDP_LOCAL_NO_MODEL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uldp round " INT64_FORMAT " ranges vectors, not the gradients of a model", id),
				 errhint("A gradient round takes its intervals from a vector_range round with a \"model\" and a \"clip\".")));
	if (range->result == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uldp round " INT64_FORMAT " is still open", id),
				 errhint("Close it with uldp.ldp_result(" INT64_FORMAT ") once its users have reported.", id)));
}

static void
push_key(JsonbParseState **state, const char *key)
{
	JsonbValue	value;

	value.type = jbvString;
	value.val.string.val = (char *) key;
	value.val.string.len = strlen(key);
	pushJsonbValue(state, WJB_KEY, &value);
}

static void
push_string(JsonbParseState **state, const char *key, const char *string)
{
	JsonbValue	value;

	push_key(state, key);
	value.type = jbvString;
	value.val.string.val = (char *) string;
	value.val.string.len = strlen(string);
	pushJsonbValue(state, WJB_VALUE, &value);
}

static void
push_int64(JsonbParseState **state, const char *key, int64 number)
{
	JsonbValue	value;

	push_key(state, key);
	value.type = jbvNumeric;
	value.val.numeric = int64_to_numeric(number);
	pushJsonbValue(state, WJB_VALUE, &value);
}

/* "key" and its value in "from", if it is there */
static void
push_copy(JsonbParseState **state, Jsonb *from, const char *key)
{
	JsonbValue *value = find_key(from, key);

	if (value != NULL)
	{
		push_key(state, key);
		pushJsonbValue(state, WJB_VALUE, value);
	}
}

/* the keys of "from" that "params" does not give */
static void
push_defaults(JsonbParseState **state, Jsonb *params, Jsonb *from,
			  const char *const *keys, int count)
{
	for (int i = 0; i < count; i++)
		if (find_key(params, keys[i]) == NULL)
			push_copy(state, from, keys[i]);
}

/*
 * The round JSON: the parameters, the server's keys, and what the range
 * round gives (range may be NULL).
 */
static Jsonb *
build_round(int64 id, UldpLocalKind kind, Jsonb *params, UldpLdpRound *range)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbValue	value;
	JsonbIteratorToken token;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_int64(&state, "v", ULDP_LOCAL_FORMAT);
	push_int64(&state, "id", id);
	push_string(&state, "kind", kind_names[kind]);
	it = JsonbIteratorInit(&params->root);
	while ((token = JsonbIteratorNext(&it, &value, true)) != WJB_DONE)
	{
		if (token == WJB_KEY && range != NULL &&
			((value.val.string.len == 5 && memcmp(value.val.string.val, "lower", 5) == 0) ||
			 (value.val.string.len == 5 && memcmp(value.val.string.val, "upper", 5) == 0)))
			refuse_parameter(pnstrdup(value.val.string.val, value.val.string.len),
							 "given by the range round",
							 "Leave it out, or leave out range_round and give both bounds.");
		if (token == WJB_KEY || token == WJB_VALUE)
			pushJsonbValue(&state, token, &value);
	}
	if (range != NULL)
	{
		push_copy(&state, range->result, "lower");
		push_copy(&state, range->result, "upper");
		if (uldp_local_is_vector(kind))
			push_copy(&state, range->jsonb, "rotation_seed");
		if (kind == ULDP_LOCAL_VECTOR_MEAN)
			push_defaults(&state, params, range->jsonb, vector_mean_keys, lengthof(vector_mean_keys));
		if (kind == ULDP_LOCAL_GRADIENT)
			push_defaults(&state, params, range->jsonb, gradient_keys, lengthof(gradient_keys));
	}
	else if (uldp_local_is_vector(kind))
		push_string(&state, "rotation_seed", psprintf(UINT64_FORMAT, uldp_random_u64()));
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

static UldpLocalKind
parse_kind(const char *name)
{
	for (int kind = 0; kind < lengthof(kind_names); kind++)
		if (strcmp(name, kind_names[kind]) == 0)
			return (UldpLocalKind) kind;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown kind of round \"%s\"", name),
			 errhint("Use \"range\", \"mean\", \"vector_range\", \"vector_mean\" or \"gradient\".")));
	pg_unreachable();
}

/*
 * uldp.ldp_round(kind text, params jsonb) RETURNS bigint: creates a round
 * and returns its id.
 */
Datum
uldp_ldp_round(PG_FUNCTION_ARGS)
{
	UldpLocalKind kind;
	Jsonb	   *params;
	int64		range_id;
	UldpLdpRound range;
	int64		id;
	Jsonb	   *round;
	char	   *json;
	UldpLocalRound local;
	UldpLocalError error;
	Oid			argtypes[4] = {INT8OID, TEXTOID, JSONBOID, BOOLOID};
	Datum		args[4];
	bool		isnull;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kind and params must not be null"),
				 errhint("For example uldp.ldp_round('range', '{\"bound\": 100, \"tau\": 2, \"epsilon\": 0.5}').")));
	kind = parse_kind(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	params = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_OBJECT(params))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params must be a JSON object"),
				 errhint("For example '{\"bound\": 100, \"tau\": 2, \"epsilon\": 0.5}'.")));
	range_id = check_server_parameters(kind, params);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (range_id != 0)
		load_range_round(range_id, kind, &range);
	if (SPI_execute("SELECT nextval('uldp.ldp_rounds_id_seq')", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not draw a uldp round id");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	round = build_round(id, kind, params, range_id != 0 ? &range : NULL);
	json = JsonbToCString(NULL, &round->root, VARSIZE(round));
	if (!uldp_local_round_parse(json, &local, &error))
		uldp_ldp_refuse(&error);
	if (uldp_local_is_range(kind) &&
		(int64) local.padded * local.hadamard_size > ULDP_LDP_MAX_RANGE_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a range round of %d coordinates and " INT64_FORMAT " Hadamard rows is too large",
						local.padded, local.hadamard_size),
				 errhint("Decoding holds one number per coordinate and row, at most " INT64_FORMAT ": use a larger tau or a smaller dimension.",
						 ULDP_LDP_MAX_RANGE_CELLS)));

	/*
	 * epsilon as published; delta is what the reports' guarantee spends: 0
	 * unless they carry Gaussian noise
	 */
	args[0] = Int64GetDatum(id);
	args[1] = CStringGetTextDatum(kind_names[kind]);
	args[2] = JsonbPGetDatum(round);
	args[3] = BoolGetDatum(!uldp_local_is_range(kind) && local.noise == ULDP_LOCAL_GAUSSIAN);
	if (SPI_execute_with_args("INSERT INTO uldp.ldp_rounds (id, kind, round, epsilon, delta) "
							  "VALUES ($1, $2, $3, ($3->>'epsilon')::numeric, "
							  "CASE WHEN $4 THEN ($3->>'delta')::numeric ELSE 0 END)",
							  4, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store uldp round " INT64_FORMAT, id);
	SPI_finish();
	PG_RETURN_INT64(id);
}

/* uldp.ldp_round_info(round bigint) RETURNS jsonb: the round's JSON. */
Datum
uldp_ldp_round_info(PG_FUNCTION_ARGS)
{
	UldpLdpRound round;
	Datum		result;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	uldp_ldp_load_round(PG_GETARG_INT64(0), ULDP_LDP_NO_LOCK, &round);
	result = SPI_datumTransfer(JsonbPGetDatum(round.jsonb), false, -1);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

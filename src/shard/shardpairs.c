/*-------------------------------------------------------------------------
 *
 * shardpairs.c
 *	  The aggregate of uldp_shard for grouped releases: for one group of a
 *	  partition, every user with rows there and its value for each release.
 *
 * A grouped release over shards (doc/scale-out.md) sends each shard
 *
 *	SELECT <keys>, uldp_shard.user_pairs(user_id, max_rows,
 *			   'mean', value, filter, lower, upper, 'any', true, filter2, NULL, NULL, ...)
 *	FROM partition WHERE ... GROUP BY <keys>
 *
 * PostgreSQL groups the rows by the keys (few groups, or spilled as its
 * hash aggregation does), and each group's state is a table of its users,
 * so the shard never groups by (user, keys) pairs.  The coordinator unpacks
 * each group's value into one row per user (pairunpack.c) and releases
 * over these pairs exactly as over rows.
 *
 * Each release but a count without FILTER (which reads only the users) is
 * a slot of five arguments: its kind, its value (float8
 * or boolean as 1 or 0), its filter (true without one), and the bounds of
 * a mean.  A user's value in a slot, over its rows in the group that pass
 * the slot's filter and have a value (not NULL, not NaN), is
 *	- 'mean': the mean of those rows clamped to [lower, upper];
 *	- 'total': their total (rows clamped to +-ULDP_MAX_MAGNITUDE);
 *	- 'any': 1 if any row passes the filter (a count's FILTER);
 * and none (NaN on the wire, NULL on the coordinator) without such rows,
 * which the release skips: what the coordinator's own transition
 * functions would compute from the rows.  A row is never refused, only
 * skipped (a NULL user id, or one longer than ULDP_MAX_ID_BYTES); the kinds
 * and bounds are checked at a group's first row.
 *
 * Memory: at most one entry per row of the partition, which the shard
 * checks against max_rows at the scan's first row (shardbound.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "pairwire.h"
#include "params.h"
#include "shardbound.h"
#include "usertable.h"

/* arguments after the state: user_id, max_rows, then the slots */
#define USER_ARG 1
#define MAX_ROWS_ARG 2
#define FIRST_SLOT_ARG 3
#define SLOT_ARGS 5

/* a group's tables start this small: most groups may have few users */
#define INITIAL_USERS 8

/* odd, so that multiples of it visit every bucket of a power-of-two table */
#define SCATTER_STRIDE UINT64CONST(0x9E3779B97F4A7C15)

typedef enum PairKind
{
	PAIR_MEAN,
	PAIR_TOTAL,
	PAIR_ANY
} PairKind;

typedef struct PairSlot
{
	PairKind	kind;
	bool		boolean;		/* its value is a boolean */
	double		lower;			/* rows are clamped to [lower, upper] */
	double		upper;
} PairSlot;

/*
 * A group's users, one table per slot (usertable.c: a user's sum and row
 * count, each addition prefetched, so that a row costs about one overlapped
 * cache miss per slot): every user with a row in the group is in every
 * table, with 0 rows in a slot where none of its rows counts.  Without
 * slots, table 0 holds only the users.
 */
typedef struct PairsState
{
	bool		key_byval;
	int16		key_typlen;
	int			nslots;
	PairSlot   *slots;			/* nslots */
	UldpUserTable *tables;		/* nslots, or 1 without slots */
} PairsState;

PG_FUNCTION_INFO_V1(uldp_shard_pairs_transfn);
PG_FUNCTION_INFO_V1(uldp_shard_pairs_finalfn);

static void
refuse_slots(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("uldp_shard.user_pairs needs slots of five arguments: kind, value, filter, lower, upper"),
			 errdetail("%s", detail),
			 errhint("A kind is 'mean' (with bounds lower <= upper), 'total' or 'any'; a value is float8 or boolean.")));
}

/* The slots of the call, from the group's first row, kept in "context". */
static void
read_slots(FunctionCallInfo fcinfo, PairsState *state, MemoryContext context)
{
	int			nargs = PG_NARGS() - FIRST_SLOT_ARG;

	if (nargs < 0 || nargs % SLOT_ARGS != 0 || nargs / SLOT_ARGS > ULDP_PAIRS_MAX_SLOTS)
		refuse_slots(psprintf("It has %d arguments after max_rows, for at most %d slots.",
							  nargs, ULDP_PAIRS_MAX_SLOTS));
	state->nslots = nargs / SLOT_ARGS;
	state->slots = MemoryContextAllocZero(context, Max(state->nslots, 1) * sizeof(PairSlot));
	for (int s = 0; s < state->nslots; s++)
	{
		int			arg = FIRST_SLOT_ARG + s * SLOT_ARGS;
		PairSlot   *slot = &state->slots[s];
		Oid			value_type = get_fn_expr_argtype(fcinfo->flinfo, arg + 1);
		Oid			kind_type = get_fn_expr_argtype(fcinfo->flinfo, arg);
		char	   *kind;

		if (PG_ARGISNULL(arg) || (kind_type != TEXTOID && kind_type != UNKNOWNOID))
			refuse_slots(psprintf("Slot %d has no kind.", s + 1));
		if (value_type != FLOAT8OID && value_type != BOOLOID)
			refuse_slots(psprintf("Slot %d's value is of type %s.", s + 1, format_type_be(value_type)));
		if (get_fn_expr_argtype(fcinfo->flinfo, arg + 2) != BOOLOID)
			refuse_slots(psprintf("Slot %d's filter is not a boolean.", s + 1));
		slot->boolean = value_type == BOOLOID;
		slot->lower = -ULDP_MAX_MAGNITUDE;
		slot->upper = ULDP_MAX_MAGNITUDE;
		/* a literal passed as "any" keeps its type unknown: a C string */
		kind = kind_type == TEXTOID ? TextDatumGetCString(PG_GETARG_DATUM(arg)) :
			DatumGetCString(PG_GETARG_DATUM(arg));
		if (strcmp(kind, "total") == 0)
			slot->kind = PAIR_TOTAL;
		else if (strcmp(kind, "any") == 0)
			slot->kind = PAIR_ANY;
		else if (strcmp(kind, "mean") == 0)
		{
			slot->kind = PAIR_MEAN;
			if (PG_ARGISNULL(arg + 3) || PG_ARGISNULL(arg + 4) ||
				get_fn_expr_argtype(fcinfo->flinfo, arg + 3) != FLOAT8OID ||
				get_fn_expr_argtype(fcinfo->flinfo, arg + 4) != FLOAT8OID ||
				isnan(slot->lower = PG_GETARG_FLOAT8(arg + 3)) ||
				isnan(slot->upper = PG_GETARG_FLOAT8(arg + 4)) || slot->lower > slot->upper)
				refuse_slots(psprintf("Slot %d is a mean without float8 bounds lower <= upper.", s + 1));
		}
		else
			refuse_slots(psprintf("Slot %d's kind is \"%s\".", s + 1, kind));
	}
}

static PairsState *
pairs_create(FunctionCallInfo fcinfo)
{
	MemoryContext aggcontext = uldp_shard_aggregate_context(fcinfo, "uldp_shard.user_pairs");
	PairsState *state;

	/* once per scan: the bound is the same for every group */
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		uldp_shard_check_rows(fcinfo, MAX_ROWS_ARG - 1);
		fcinfo->flinfo->fn_extra = fcinfo->flinfo;
	}
	state = MemoryContextAllocZero(aggcontext, sizeof(PairsState));
	get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, USER_ARG), &state->key_typlen,
					&state->key_byval);
	read_slots(fcinfo, state, aggcontext);
	state->tables = MemoryContextAlloc(aggcontext, Max(state->nslots, 1) * sizeof(UldpUserTable));
	for (int s = 0; s < Max(state->nslots, 1); s++)
		uldp_user_table_init(&state->tables[s], aggcontext, INITIAL_USERS, NULL, NULL);
	return state;
}

/*
 * user_pairs(user_id, max_rows, VARIADIC slots): adds one row of the group
 * to its user's values.
 */
Datum
uldp_shard_pairs_transfn(PG_FUNCTION_ARGS)
{
	PairsState *state = PG_ARGISNULL(0) ? NULL : (PairsState *) PG_GETARG_POINTER(0);
	uint64		key;

	if (state == NULL)
		state = pairs_create(fcinfo);
	if (PG_ARGISNULL(USER_ARG) ||
		!uldp_user_key(PG_GETARG_DATUM(USER_ARG), state->key_byval, state->key_typlen, &key))
		PG_RETURN_POINTER(state);
	if (state->nslots == 0)
		uldp_user_table_add(&state->tables[0], key, 0, 0);
	for (int s = 0; s < state->nslots; s++)
	{
		int			arg = FIRST_SLOT_ARG + s * SLOT_ARGS;
		const PairSlot *slot = &state->slots[s];
		double		value = NAN;

		if (!PG_ARGISNULL(arg + 2) && PG_GETARG_BOOL(arg + 2))
		{
			if (slot->kind == PAIR_ANY)
				value = 1;
			else if (!PG_ARGISNULL(arg + 1))
				value = slot->boolean ? (PG_GETARG_BOOL(arg + 1) ? 1 : 0) : PG_GETARG_FLOAT8(arg + 1);
		}
		/* a row that does not count still makes its user one of the group's */
		if (isnan(value))
			uldp_user_table_add(&state->tables[s], key, 0, 0);
		else
			uldp_user_table_add(&state->tables[s], key, Min(Max(value, slot->lower), slot->upper), 1);
	}
	PG_RETURN_POINTER(state);
}

/* The group's value: its users, then each slot's value per user. */
Datum
uldp_shard_pairs_finalfn(PG_FUNCTION_ARGS)
{
	PairsState *state = PG_ARGISNULL(0) ? NULL : (PairsState *) PG_GETARG_POINTER(0);
	UldpPairsHeader header = {ULDP_PAIRS_MAGIC, ULDP_PAIRS_VERSION, 0, 0};
	users_hash *table;
	bytea	   *result;
	char	   *keys;
	int64		nusers;

	if (state == NULL)
		PG_RETURN_NULL();
	for (int s = 0; s < Max(state->nslots, 1); s++)
		uldp_user_table_flush(&state->tables[s]);
	nusers = uldp_user_table_users(&state->tables[0]);
	if (nusers > ULDP_PAIRS_MAX_USERS(state->nslots))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("uldp_shard.user_pairs cannot hold %lld users in one value", (long long) nusers),
				 errhint("Pass a max_rows that keeps a group within 1 GB.")));
	header.nslots = state->nslots;
	header.nusers = nusers;
	result = palloc(VARHDRSZ + ULDP_PAIRS_BYTES(nusers, state->nslots));
	SET_VARSIZE(result, VARHDRSZ + ULDP_PAIRS_BYTES(nusers, state->nslots));
	memcpy(VARDATA(result), &header, sizeof(header));
	keys = VARDATA(result) + sizeof(header);

	/*
	 * The users in a scattered order of table 0's buckets, each slot's value
	 * looked up in its table.  In the buckets' own order the users would
	 * come sorted by their hash, which the coordinator's tables share: each
	 * user inserted there would land behind the ones before it, in one long
	 * run (a probe sequence growing with every user).  Visiting bucket
	 * (i * an odd constant) mod the size visits every bucket once, with
	 * successive ones far apart.
	 */
	table = state->tables[0].users;
	for (uint64 b = 0, i = 0; b < table->size; b++)
	{
		UldpUser   *user = &table->data[(b * SCATTER_STRIDE) & table->sizemask];

		if (user->status != users_SH_IN_USE)
			continue;
		memcpy(keys + i * sizeof(uint64), &user->id, sizeof(uint64));
		for (int s = 0; s < state->nslots; s++)
		{
			UldpUser   *entry = s == 0 ? user : users_lookup(state->tables[s].users, user->id);
			double		out = NAN;

			if (entry != NULL && entry->count > 0)
				out = state->slots[s].kind == PAIR_MEAN ? entry->sum / entry->count :
					state->slots[s].kind == PAIR_TOTAL ? entry->sum : 1;
			memcpy(keys + ((s + 1) * nusers + i) * sizeof(double), &out, sizeof(double));
		}
		i++;
	}
	PG_RETURN_BYTEA_P(result);
}

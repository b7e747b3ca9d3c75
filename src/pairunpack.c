/*-------------------------------------------------------------------------
 *
 * pairunpack.c
 *	  The (user, group) pairs of a grouped release over shards, unpacked on
 *	  the coordinator from the groups' values the shards send.
 *
 * Each shard returns, for each group of its partition, one value
 * (uldp_shard.user_pairs, pairwire.h) that holds the group's users and
 * their values; shardgroups.c reads it back as one row per user:
 *
 *	SELECT uldp.pair_users(p.pairs), p.key_1, uldp.pair_values(p.pairs, 1), ...
 *	FROM (<the shards' groups>) p
 *
 * set-returning functions in one target list, which PostgreSQL runs in
 * step: the n-th row of each belongs to the n-th user.  Nothing here is
 * private by itself (a value holds whatever its writer put in it); the
 * values that hold users' data come only from the shards, through the table
 * owner's user mapping, into the statement uldp rewrote.  A value that is
 * not one the shards write is refused before any row is returned.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"

#include "pairwire.h"

PG_FUNCTION_INFO_V1(uldp_pair_users);
PG_FUNCTION_INFO_V1(uldp_pair_values);

/* Where a reader is in a group's value. */
typedef struct PairCursor
{
	const char *column;			/* its first entry */
	int64		nusers;
	int64		next;
} PairCursor;

/* The header of a group's value, checked against its size. */
static UldpPairsHeader
read_header(bytea *pairs)
{
	UldpPairsHeader header = {0};
	Size		size = VARSIZE_ANY_EXHDR(pairs);

	if (size >= sizeof(header))
		memcpy(&header, VARDATA_ANY(pairs), sizeof(header));
	if (header.magic != ULDP_PAIRS_MAGIC || header.version != ULDP_PAIRS_VERSION ||
		header.nusers < 0 || header.nslots > ULDP_PAIRS_MAX_SLOTS ||
		header.nusers > ULDP_PAIRS_MAX_USERS(header.nslots) ||
		size != ULDP_PAIRS_BYTES(header.nusers, header.nslots))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("not a group's pairs that this version of uldp_shard writes"),
				 errhint("Install the same version of uldp_shard on every shard, on machines of the coordinator's architecture.")));
	return header;
}

/*
 * The cursor of a call: over column "column" of the value (0: the users'
 * keys, s: slot s), at the first call for each value.
 */
static FuncCallContext *
pair_cursor(FunctionCallInfo fcinfo, int column_arg)
{
	FuncCallContext *funcctx;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext oldcontext;
		PairCursor *cursor;
		UldpPairsHeader header;
		bytea	   *pairs;
		int			column = 0;

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		/* kept for every row: detoasted (if it must be) in the call's context */
		pairs = PG_GETARG_BYTEA_PP(0);
		header = read_header(pairs);
		if (column_arg >= 0)
		{
			column = PG_GETARG_INT32(column_arg);
			if (column < 1 || column > header.nslots)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("slot %d is not among the %d of the group's pairs", column, header.nslots),
						 errhint("Number the slots from 1.")));
		}
		cursor = palloc(sizeof(PairCursor));
		cursor->column = VARDATA_ANY(pairs) + sizeof(header) + column * header.nusers * sizeof(uint64);
		cursor->nusers = header.nusers;
		cursor->next = 0;
		funcctx->user_fctx = cursor;
		MemoryContextSwitchTo(oldcontext);
	}
	return SRF_PERCALL_SETUP();
}

/* pair_users(pairs bytea): the key of each user of the group, in order */
Datum
uldp_pair_users(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx = pair_cursor(fcinfo, -1);
	PairCursor *cursor = funcctx->user_fctx;
	int64		key;

	if (cursor->next == cursor->nusers)
		SRF_RETURN_DONE(funcctx);
	memcpy(&key, cursor->column + cursor->next++ * sizeof(key), sizeof(key));
	SRF_RETURN_NEXT(funcctx, Int64GetDatum(key));
}

/* pair_values(pairs bytea, slot int): each user's value in the slot, or NULL */
Datum
uldp_pair_values(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx = pair_cursor(fcinfo, 1);
	PairCursor *cursor = funcctx->user_fctx;
	double		value;

	if (cursor->next == cursor->nusers)
		SRF_RETURN_DONE(funcctx);
	memcpy(&value, cursor->column + cursor->next++ * sizeof(value), sizeof(value));
	if (isnan(value))
		SRF_RETURN_NEXT_NULL(funcctx);
	SRF_RETURN_NEXT(funcctx, Float8GetDatum(value));
}

/*-------------------------------------------------------------------------
 *
 * groupcalls.c
 *	  The SQL-callable functions of grouped releases' contribution bound:
 *	  what the grouped rewrite (grouping.c) adds to a query, over the
 *	  registry of groupbound.c.
 *
 *	- the aggregate uldp.group_registry(slot, k, key, user_id, VARIADIC
 *	  keys), over the level's rows in a CTE of its own, records each row's
 *	  group for its user and returns the registry's snapshot;
 *	- uldp.group_member(slot, k, registry, user_id, VARIADIC keys) replaces
 *	  the user argument of every uldp aggregate of the level: it returns the
 *	  user id when the row's group is one its user keeps, and NULL
 *	  otherwise, which every uldp aggregate skips;
 *	- the transition of the level's partition selection (selection.c),
 *	  uldp.group_selected(slot, k, registry, user_id, epsilon, delta,
 *	  VARIADIC keys), reads the number of users that keep its group: once
 *	  per group when equal keys have equal bytes (integers, dates, text of a
 *	  deterministic collation, ...), else on every row, the largest.
 *
 * group_member and group_selected take the snapshot as an argument (an
 * initplan that reads the CTE), so they run only after every row was
 * registered.  The leader reads its registry itself; parallel workers read
 * the snapshot.  A parallel registration records each process's rows in a
 * partial registry, under the registry's key (which uldp.group_key passes
 * to the workers), and the leader merges them.
 *
 * A row's group is named by the bytes of its keys (and their NULL flags; a
 * key of variable length over ULDP_GROUP_INLINE_KEY_BYTES by its length and
 * its SipHash under the registry's key, so that naming a group never needs
 * more than a few hundred bytes, and cannot fail on a long value: a failure
 * that would depend on the rows); a (user, group) pair by the user's key
 * (uldp_user_key) followed by its group's name, and its pseudorandom value
 * is the SipHash of that under the registry's key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/nodeAgg.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "groupbound.h"
#include "groupcalls.h"
#include "handover.h"
#include "params.h"
#include "selection.h"
#include "sharedpass.h"
#include "siphash.h"
#include "usertable.h"

/* entries of a call site's memo of group numbers (registration) */
#define GROUP_MEMO_SIZE 16

/* a by-value key and its group's number */
typedef struct GroupMemo
{
	bool		valid;
	Datum		key;
	uint32		group;
} GroupMemo;

/* What a call site of a grouping function keeps between rows. */
typedef struct CallCache
{
	UldpGroupBound *bound;		/* the leader's registry, or NULL in a worker */
	const uint64 *key;			/* of the pseudorandom function */
	/* the snapshot it received last (as passed, and read), and in a worker what it holds */
	Datum		passed;
	const char *source;
	UldpGroupSnapshot snapshot;
	/* group_member's last answer: a row's pair asked again */
	StringInfoData last_pair;
	bool		last_kept;
	int			first;			/* the argument that is the slot */
	int			user_arg;
	int			first_key_arg;
	int16		user_typlen;
	bool		user_byval;
	int			nkeys;
	int16	   *typlen;
	bool	   *byval;
	StringInfoData bytes;
	/* do equal keys always have equal bytes, and their group one name? */
	bool		names_canonical;
	/*
	 * One by-value key (a date, an integer): the group numbers of the last
	 * keys seen, so that most rows find their group without naming it; the
	 * names of two equal by-value keys are equal.
	 */
	bool		memo_usable;
	GroupMemo	memo[GROUP_MEMO_SIZE];
	bool		forgets_member; /* group_member: see last_member */
} CallCache;

/*
 * The call of group_member that ran last in this backend, while its memory
 * lasts: the uldp aggregate whose user argument it computed runs next, on
 * the same row (uldp_group_member_users).
 */
static FunctionCallInfo last_member = NULL;

/*
 * The arguments of group_member: slot, k, the registry's snapshot, user id,
 * then the grouping keys; group_registry's, after its state, are the same
 * with the key of the pseudorandom function in place of the snapshot;
 * group_selected's, after its state, the same as group_member's with its
 * parameters (epsilon, delta: selection.h) before the keys.
 */
#define SLOT_ARG 0
#define K_ARG 1
#define SNAPSHOT_ARG 2
#define USER_ARG 3
#define FIRST_KEY_ARG 4
#define SELECTION_PARAMS (ULDP_SELECTION_DELTA_ARG - ULDP_SELECTION_USER_ARG)

/*
 * A grouping function declared by an older version of the extension's SQL
 * than this library's (before ALTER EXTENSION uldp UPDATE).
 */
static void
refuse_old_version(void) pg_attribute_noreturn();

static void
refuse_old_version(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the grouping functions of uldp are older than its library"),
			 errhint("Update the extension: ALTER EXTENSION uldp UPDATE.")));
}

/*
 * Do two equal keys of this type and collation always have equal bytes (in
 * the names of pair_bytes)?  GROUP BY compares keys with their type's
 * default equality, which for these is equality of bytes.
 */
static bool
key_bytes_canonical(Oid type, Oid collation)
{
	type = getBaseType(type);
	switch (type)
	{
		case BOOLOID:
		case CHAROID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
		case BYTEAOID:
			return true;
		case TEXTOID:
		case VARCHAROID:
			return OidIsValid(collation) && get_collation_isdeterministic(collation);
		default:
			return type_is_enum(type);
	}
}

/*
 * Do the grouping keys of the aggregate call "fcinfo" (from its argument
 * number first_key_arg, after its state) have canonical bytes?
 */
static bool
aggregate_keys_canonical(FunctionCallInfo fcinfo, int first_key_arg)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	ListCell   *lc;

	if (aggref == NULL)
		return false;
	foreach(lc, aggref->args)
	{
		TargetEntry *entry = lfirst_node(TargetEntry, lc);

		/* the aggregate's argument i is the transition's i + 1 */
		if (!entry->resjunk && entry->resno >= first_key_arg &&
			!key_bytes_canonical(exprType((Node *) entry->expr), exprCollation((Node *) entry->expr)))
			return false;
	}
	return true;
}

/*
 * "first": 0 for a function, 1 for an aggregate's transition (its state);
 * "params": the arguments between the user id and the keys
 */
static CallCache *
call_cache(FunctionCallInfo fcinfo, int first, int params)
{
	CallCache  *cache = fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		if (PG_ARGISNULL(first + SLOT_ARG) || PG_ARGISNULL(first + K_ARG))
			elog(ERROR, "uldp grouping function called without a slot");
		/* group_member and group_selected of uldp 0.8 took no registry */
		if (get_func_nargs(fcinfo->flinfo->fn_oid) != first + FIRST_KEY_ARG + params + 1)
			refuse_old_version();
		cache = palloc0(sizeof(CallCache));
		/* parallel workers have no registry: they read its snapshot */
		if (!IsParallelWorker())
		{
			cache->bound = uldp_group_bound_find(PG_GETARG_INT64(first + SLOT_ARG),
												 fcinfo->flinfo->fn_mcxt);
			cache->key = uldp_group_bound_key(cache->bound);
		}
		cache->first = first;
		cache->user_arg = first + USER_ARG;
		cache->first_key_arg = first + FIRST_KEY_ARG + params;
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, cache->user_arg),
						&cache->user_typlen, &cache->user_byval);
		cache->nkeys = PG_NARGS() - cache->first_key_arg;
		cache->typlen = palloc(Max(cache->nkeys, 1) * sizeof(int16));
		cache->byval = palloc(Max(cache->nkeys, 1) * sizeof(bool));
		for (int i = 0; i < cache->nkeys; i++)
			get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, cache->first_key_arg + i),
							&cache->typlen[i], &cache->byval[i]);
		initStringInfo(&cache->bytes);
		initStringInfo(&cache->last_pair);
		/* the memo starts empty: no pair has a negative length */
		cache->last_pair.len = -1;
		cache->memo_usable = cache->nkeys == 1 && cache->byval[0];
		fcinfo->flinfo->fn_extra = cache;
		MemoryContextSwitchTo(old);
	}
	return cache;
}

static void
snapshot_invalid(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid uldp group registry"),
			 errhint("The grouping functions of uldp only run inside the grouped releases that uldp rewrites.")));
}

/*
 * Reads the snapshot that a call of group_member or group_selected received
 * (once per value).  The leader checks that it is its own registry's,
 * complete; a worker, that it is whole, and keeps where its parts are.
 */
static void
read_snapshot(FunctionCallInfo fcinfo, CallCache *cache)
{
	int			snapshot_arg = cache->first + SNAPSHOT_ARG;
	bytea	   *value;

	if (PG_ARGISNULL(snapshot_arg))
		snapshot_invalid();
	/* the same value as on the last row: read already */
	if (cache->source != NULL && PG_GETARG_DATUM(snapshot_arg) == cache->passed)
		return;
	value = PG_GETARG_BYTEA_PP(snapshot_arg);
	if (VARDATA_ANY(value) == cache->source)
		return;
	if (cache->bound != NULL ?
		!uldp_group_snapshot_names(VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value), cache->bound) :
		!uldp_group_snapshot_read(VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value),
								  PG_GETARG_INT64(cache->first + SLOT_ARG),
								  PG_GETARG_INT32(cache->first + K_ARG),
								  &cache->snapshot))
		snapshot_invalid();
	if (cache->bound == NULL)
		cache->key = cache->snapshot.key;
	cache->last_pair.len = -1;
	cache->source = VARDATA_ANY(value);
	cache->passed = PG_GETARG_DATUM(snapshot_arg);
}

/* appendBinaryStringInfo, inline while the buffer has room (once per key of every row) */
static inline void
append_bytes(StringInfo bytes, const void *data, int length)
{
	if (bytes->len + length >= bytes->maxlen)
		enlargeStringInfo(bytes, length);
	memcpy(bytes->data + bytes->len, data, length);
	bytes->len += length;
}

/*
 * Appends a key of variable length: its length, then its bytes, or for a
 * long key their SipHash under the run's key.  The buffer stays short
 * whatever the keys' sizes; two long keys of one length share a name with
 * probability 2^-64 under the secret key.
 */
static void
append_variable(StringInfo bytes, const uint64 *key, const char *data, uint32 length)
{
	append_bytes(bytes, &length, sizeof(length));
	if (length <= ULDP_GROUP_INLINE_KEY_BYTES)
		append_bytes(bytes, data, length);
	else
	{
		uint64		hash = uldp_siphash24(key, data, length);

		append_bytes(bytes, &hash, sizeof(hash));
	}
}

/* Appends the row's keys, each its NULL flag and its bytes, to cache->bytes. */
static void
append_keys(FunctionCallInfo fcinfo, CallCache *cache)
{
	StringInfo	bytes = &cache->bytes;

	for (int i = 0; i < cache->nkeys; i++)
	{
		Datum		key = PG_GETARG_DATUM(cache->first_key_arg + i);
		char		isnull = PG_ARGISNULL(cache->first_key_arg + i);

		append_bytes(bytes, &isnull, 1);
		if (isnull)
			continue;
		if (cache->byval[i])
			append_bytes(bytes, &key, sizeof(Datum));
		else if (cache->typlen[i] > 0)
			append_bytes(bytes, DatumGetPointer(key), cache->typlen[i]);
		else if (cache->typlen[i] == -1)
		{
			struct varlena *value = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(key));

			append_variable(bytes, cache->key, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
		}
		else
			append_variable(bytes, cache->key, DatumGetCString(key),
							strlen(DatumGetCString(key)) + 1);
	}
}

/*
 * The bytes that name the row's (user, group) in cache->bytes, or false when
 * the row has no user (NULL, or an id that uldp skips).
 */
static bool
pair_bytes(FunctionCallInfo fcinfo, CallCache *cache, uint64 *user)
{
	if (PG_ARGISNULL(cache->user_arg) ||
		!uldp_user_key(PG_GETARG_DATUM(cache->user_arg), cache->user_byval, cache->user_typlen,
					   user))
		return false;
	cache->bytes.len = 0;
	append_bytes(&cache->bytes, user, sizeof(uint64));
	append_keys(fcinfo, cache);
	return true;
}

/*
 * The row's group's name in cache->bytes, after a user key that no user
 * reads (GROUP_NAME skips it), whether the row has a user or not.
 */
static void
group_bytes(FunctionCallInfo fcinfo, CallCache *cache)
{
	uint64		nobody = 0;

	cache->bytes.len = 0;
	append_bytes(&cache->bytes, &nobody, sizeof(uint64));
	append_keys(fcinfo, cache);
}

/* The pseudorandom value of a pair named by "bytes" */
static inline uint64
pair_value(const uint64 *key, StringInfo bytes)
{
	return uldp_siphash24(key, bytes->data, bytes->len);
}

/* The group's part of a pair's name: what follows the user's key. */
#define GROUP_NAME(bytes) ((bytes)->data + sizeof(uint64))
#define GROUP_NAME_LENGTH(bytes) ((bytes)->len - sizeof(uint64))

/*
 * The memo entry for the row's key, when the call site has a memo and the
 * key is not NULL; else NULL.
 */
static inline GroupMemo *
group_memo(FunctionCallInfo fcinfo, CallCache *cache)
{
	Datum		key;

	if (!cache->memo_usable || PG_ARGISNULL(cache->first_key_arg))
		return NULL;
	key = PG_GETARG_DATUM(cache->first_key_arg);
	return &cache->memo[(uint32) uldp_mix64((uint64) key) % GROUP_MEMO_SIZE];
}

static void
forget_member(void *arg)
{
	if (last_member == (FunctionCallInfo) arg)
		last_member = NULL;
}

/*
 * For the transition function of a uldp aggregate, on a row: when its
 * argument "user_arg" is a call of group_member, which computed it on this
 * row, the number of users that keep the row's group, so that the
 * aggregate's table of users can grow at once to its full size when it
 * first grows; else -1.  An aggregate that reads all the rows would grow its
 * table to that size anyway; a parallel plan's partial aggregate reads part
 * of them (see uldp_user_transfn).
 */
int64
uldp_group_member_users(FunctionCallInfo fcinfo, int user_arg)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	TargetEntry *argument;
	CallCache  *cache;
	int64		users;

	if (last_member == NULL || aggref == NULL ||
		(aggref->aggsplit != AGGSPLIT_SIMPLE && aggref->aggsplit != AGGSPLIT_INITIAL_SERIAL) ||
		user_arg < 1 || user_arg > list_length(aggref->args))
		return -1;
	argument = list_nth_node(TargetEntry, aggref->args, user_arg - 1);
	if ((Node *) argument->expr != last_member->flinfo->fn_expr)
		return -1;
	cache = last_member->flinfo->fn_extra;
	group_bytes(last_member, cache);
	users = cache->bound != NULL ?
		uldp_group_bound_users(cache->bound, GROUP_NAME(&cache->bytes),
							   GROUP_NAME_LENGTH(&cache->bytes)) :
		uldp_group_snapshot_users(&cache->snapshot, GROUP_NAME(&cache->bytes),
								  GROUP_NAME_LENGTH(&cache->bytes));
	return users;
}

PG_FUNCTION_INFO_V1(uldp_group_member);

/*
 * uldp.group_member(slot bigint, k int, registry bytea, user_id anyelement,
 * VARIADIC keys "any") returns anyelement: the user id if its user keeps the
 * row's group, else NULL.  "registry" is the snapshot that group_registry
 * returned once every row was registered: a call waits for it (it is an
 * argument), so nobody keeps a group before registration is complete.
 */
Datum
uldp_group_member(PG_FUNCTION_ARGS)
{
	CallCache  *cache = call_cache(fcinfo, 0, 0);
	uint64		user;

	if (!cache->forgets_member)
	{
		MemoryContextCallback *callback = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt,
															 sizeof(MemoryContextCallback));

		callback->func = forget_member;
		callback->arg = fcinfo;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, callback);
		cache->forgets_member = true;
	}
	last_member = fcinfo;
	read_snapshot(fcinfo, cache);
	if (PG_ARGISNULL(USER_ARG))
		PG_RETURN_NULL();
	/* no user has more than k groups: every registered pair is kept */
	if (cache->bound != NULL ? !uldp_group_bound_drops_any(cache->bound) :
		cache->snapshot.ndropped == 0)
		PG_RETURN_DATUM(PG_GETARG_DATUM(USER_ARG));
	if (!pair_bytes(fcinfo, cache, &user))
		PG_RETURN_NULL();
	if (cache->last_pair.len != cache->bytes.len ||
		memcmp(cache->last_pair.data, cache->bytes.data, cache->bytes.len) != 0)
	{
		uint64		value = pair_value(cache->key, &cache->bytes);

		cache->last_kept = cache->bound != NULL ?
			uldp_group_bound_kept(cache->bound, value) :
			uldp_group_snapshot_kept(&cache->snapshot, value);
		cache->last_pair.len = 0;
		append_bytes(&cache->last_pair, cache->bytes.data, cache->bytes.len);
	}
	if (!cache->last_kept)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(USER_ARG));
}

PG_FUNCTION_INFO_V1(uldp_selection_transfn);

/*
 * uldp.group_selected's transition (slot bigint, k int, registry bytea,
 * user_id anyelement, epsilon float8, delta float8, VARIADIC keys "any"):
 * the number of users that keep the group, from the registry's counts.  A
 * group's keys that GROUP BY holds equal may differ in bytes (1.0 and 1.00)
 * and so name several groups of the registry; the state is the largest of
 * their counts, read on every row, unless equal keys of the level's types
 * have equal bytes, and the count of the group's first row is its only one.
 */
Datum
uldp_selection_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	CallCache  *cache;
	int64	   *users;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_selected called in a non-aggregate context");
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		cache = call_cache(fcinfo, 1, SELECTION_PARAMS);
		cache->names_canonical = aggregate_keys_canonical(fcinfo, cache->first_key_arg);
	}
	cache = fcinfo->flinfo->fn_extra;
	if (!PG_ARGISNULL(0) && cache->names_canonical)
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	users = PG_ARGISNULL(0) ? MemoryContextAllocZero(aggcontext, sizeof(int64)) :
		(int64 *) PG_GETARG_POINTER(0);
	read_snapshot(fcinfo, cache);
	group_bytes(fcinfo, cache);
	*users = Max(*users, cache->bound != NULL ?
				 uldp_group_bound_users(cache->bound, GROUP_NAME(&cache->bytes),
										GROUP_NAME_LENGTH(&cache->bytes)) :
				 uldp_group_snapshot_users(&cache->snapshot, GROUP_NAME(&cache->bytes),
										   GROUP_NAME_LENGTH(&cache->bytes)));
	PG_RETURN_POINTER(users);
}

/* Records the row's group for its user in "bound". */
static void
register_row(FunctionCallInfo fcinfo, CallCache *cache, UldpGroupBound *bound)
{
	uint64		user;
	GroupMemo  *memo;
	uint32		group;

	if (uldp_group_bound_is_complete(bound) || PG_ARGISNULL(cache->user_arg) ||
		!uldp_user_key(PG_GETARG_DATUM(cache->user_arg), cache->user_byval, cache->user_typlen,
					   &user))
		return;
	memo = group_memo(fcinfo, cache);
	if (memo != NULL && memo->valid && memo->key == PG_GETARG_DATUM(cache->first_key_arg))
		group = memo->group;
	else
	{
		group_bytes(fcinfo, cache);
		group = uldp_group_bound_group(bound, GROUP_NAME(&cache->bytes),
									   GROUP_NAME_LENGTH(&cache->bytes));
		if (memo != NULL)
		{
			memo->valid = true;
			memo->key = PG_GETARG_DATUM(cache->first_key_arg);
			memo->group = group;
		}
	}
	uldp_group_bound_add(bound, user, group);
}

/*
 * The slot's registry for a call of group_registry's support functions:
 * the slot is the first argument of the aggregate call (for a combining or
 * final call, of the partial aggregate's call below it).
 */
static UldpGroupBound *
call_registry(FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	Const	   *slot;

	if (aggref == NULL || fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	aggref = uldp_original_aggref(((AggState *) fcinfo->context)->ss.ps.plan, aggref);
	slot = (Const *) linitial_node(TargetEntry, aggref->args)->expr;
	if (!IsA(slot, Const) || slot->constisnull)
		elog(ERROR, "uldp.group_registry called without a slot");
	return uldp_group_bound_find(DatumGetInt64(slot->constvalue), fcinfo->flinfo->fn_mcxt);
}

PG_FUNCTION_INFO_V1(uldp_registry_transfn);

/*
 * uldp.group_registry's transition (slot bigint, k int, key bytea, user_id
 * anyelement, VARIADIC keys "any"): records the row's group for its user.
 * A plain aggregation records into the slot's registry; a parallel plan's
 * partial aggregations (in the leader and in every worker) each into a
 * partial registry of their own, under the registry's key, which "key"
 * passes to the workers.
 */
Datum
uldp_registry_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	CallCache  *cache;
	UldpGroupBound *bound;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	cache = call_cache(fcinfo, 1, 0);
	bound = PG_ARGISNULL(0) ? NULL : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (bound == NULL)
	{
		if (DO_AGGSPLIT_SKIPFINAL(((AggState *) fcinfo->context)->aggsplit))
		{
			bytea	   *key;
			uint64		words[2];

			if (PG_ARGISNULL(1 + SNAPSHOT_ARG))
				snapshot_invalid();
			key = PG_GETARG_BYTEA_PP(1 + SNAPSHOT_ARG);
			if (VARSIZE_ANY_EXHDR(key) != sizeof(words))
				snapshot_invalid();
			memcpy(words, VARDATA_ANY(key), sizeof(words));
			if (cache->bound != NULL &&
				memcmp(words, uldp_group_bound_key(cache->bound), sizeof(words)) != 0)
				snapshot_invalid();
			bound = uldp_group_bound_partial(PG_GETARG_INT32(1 + K_ARG), words, aggcontext);
		}
		else if (cache->bound == NULL)
			elog(ERROR, "uldp.group_registry can only finish in the leader");
		else
			bound = cache->bound;
		/*
		 * A complete registry has freed its users; a grouped release that
		 * runs again is refused before (statement.c).
		 */
		if (uldp_group_bound_is_complete(bound))
			elog(ERROR, "uldp.group_registry registered rows after its registration completed");
		cache->key = uldp_group_bound_key(bound);
	}
	register_row(fcinfo, cache, bound);
	PG_RETURN_POINTER(bound);
}

PG_FUNCTION_INFO_V1(uldp_registry_serialfn);

/*
 * A worker's partial registry, serialized (into shared memory when large:
 * sharedpass.c); the leader's, whose final aggregation runs in the leader
 * too, handed over (handover.c).
 */
Datum
uldp_registry_serialfn(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound = (UldpGroupBound *) PG_GETARG_POINTER(0);

	if (uldp_can_hand_over(fcinfo))
		PG_RETURN_BYTEA_P(uldp_group_bound_hand_over(bound));
	PG_RETURN_BYTEA_P(uldp_pass_finish(fcinfo, uldp_group_bound_serialize(bound, fcinfo)));
}

PG_FUNCTION_INFO_V1(uldp_registry_deserialfn);

/* Keeps the serialized partial registry; the combine function reads it. */
Datum
uldp_registry_deserialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	bytea	   *serialized = PG_GETARG_BYTEA_PP(0);
	bytea	   *copy;
	UldpPassed	passed;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	serialized = uldp_pass_open(fcinfo, serialized, &passed);
	copy = MemoryContextAllocHuge(aggcontext, VARSIZE_ANY(serialized));
	memcpy(copy, serialized, VARSIZE_ANY(serialized));
	uldp_pass_release(&passed);
	PG_RETURN_POINTER(copy);
}

PG_FUNCTION_INFO_V1(uldp_registry_combinefn);

/*
 * Gives a deserialized partial registry to the slot's registry, which is
 * the combined state (the final aggregation runs in the leader) and merges
 * them when it completes.
 */
Datum
uldp_registry_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	UldpGroupBound *bound;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "uldp.group_registry called in a non-aggregate context");
	bound = PG_ARGISNULL(0) ? call_registry(fcinfo) : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1))
		uldp_group_bound_receive(bound, (bytea *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(bound);
}

PG_FUNCTION_INFO_V1(uldp_registry_finalfn);

/*
 * uldp.group_registry's final function: completes the slot's registry
 * (every row was registered: a plain aggregation's, or the merge of the
 * partial ones), counts the users of every group, and returns the
 * registry's snapshot.
 */
Datum
uldp_registry_finalfn(PG_FUNCTION_ARGS)
{
	UldpGroupBound *bound;

	if (IsParallelWorker())
		elog(ERROR, "uldp.group_registry can only finish in the leader");
	bound = PG_ARGISNULL(0) ? call_registry(fcinfo) : (UldpGroupBound *) PG_GETARG_POINTER(0);
	if (uldp_group_bound_is_partial(bound))
		elog(ERROR, "uldp.group_registry finished a partial registry");
	PG_RETURN_BYTEA_P(uldp_group_bound_complete(bound));
}

/*
 * uldp 0.8's group_register, group_registered and group_users, which its
 * SQL declares (and the update to 0.9 drops): this library registers
 * through group_registry, and partition selection reads the registry
 * itself, so they refuse.
 */
PG_FUNCTION_INFO_V1(uldp_group_register);

Datum
uldp_group_register(PG_FUNCTION_ARGS)
{
	refuse_old_version();
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(uldp_group_registered);

Datum
uldp_group_registered(PG_FUNCTION_ARGS)
{
	refuse_old_version();
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(uldp_group_users);

Datum
uldp_group_users(PG_FUNCTION_ARGS)
{
	refuse_old_version();
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(uldp_group_key);

/*
 * uldp.group_key(slot bigint) returns bytea: the key of the slot's
 * registry, which a parallel registration's workers need (the leader
 * evaluates it, as an initplan, and passes its value to them).
 */
Datum
uldp_group_key(PG_FUNCTION_ARGS)
{
	bytea	   *key = palloc(VARHDRSZ + 2 * sizeof(uint64));

	if (PG_ARGISNULL(0))
		elog(ERROR, "uldp.group_key called without a slot");
	SET_VARSIZE(key, VARHDRSZ + 2 * sizeof(uint64));
	memcpy(VARDATA(key),
		   uldp_group_bound_key(uldp_group_bound_find(PG_GETARG_INT64(0), fcinfo->flinfo->fn_mcxt)),
		   2 * sizeof(uint64));
	PG_RETURN_BYTEA_P(key);
}

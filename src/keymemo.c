/*-------------------------------------------------------------------------
 *
 * keymemo.c
 *	  A grouping key computed once per distinct input, in both readings of
 *	  a grouped release.
 *
 * A grouped release reads its rows twice (grouping.c): the registration,
 * then the aggregation, and both compute the grouping keys.  A key such as
 * date_trunc('month', d) costs a time zone lookup per row, more than the
 * rest of the registration's work on the row, and dates, like most columns
 * that keys bucket, repeat: a year of them is 365 values.  So both
 * readings compute such a key through a memo of the key's values by the one
 * column it reads:
 *
 *	CASE WHEN uldp.key_memo_lookup(s, i, d)
 *		 THEN uldp.key_memo_value(s, i, NULL::<key type>)
 *		 ELSE uldp.key_memo_store(s, i, <key>) END
 *
 * (s the release's slot, i the key's position, d the column).  PostgreSQL
 * evaluates a CASE's branches only when chosen: the key is computed only
 * for an input that the memo does not hold.  The three calls share the memo of the
 * lookup that ran last in the backend (the branch runs right after it, on
 * the same row), checked by its slot and position.
 *
 * Only a key that the same input always maps to the same value is
 * memoized: one column, no volatile function, no parameter, subquery or
 * column of an enclosing query, whose values could change while the
 * column's does not.  An input of a type passed by value (dates,
 * timestamps, numbers) is looked up by its value, one passed by reference
 * (numeric, text, uuid) by its bytes when it has at most 32 (a varlena by
 * its data, whatever its header), and is computed every time when longer.
 * A stable function (a time zone's rules) returns the same value for the
 * same arguments within a statement, and the memo lives for one execution
 * of the plan.  The memo holds a fixed number of values, allocated when the
 * first row is looked up, and values of a type passed by reference only up
 * to a few bytes (others are computed every time): its memory does not
 * depend on the rows.  When most lookups miss (the column's values rarely
 * repeat, as timestamps to the microsecond), it turns itself off, and the
 * key costs two calls more per row than without it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "keymemo.h"
#include "usertable.h"

/* values held: sets of two, the one used last kept on a miss (lookup's replacement is for two) */
#define KEY_MEMO_SETS 512
#define KEY_MEMO_WAYS 2
StaticAssertDecl(KEY_MEMO_WAYS == 2, "the memo replaces the other of two entries");
#define KEY_MEMO_ENTRIES (KEY_MEMO_SETS * KEY_MEMO_WAYS)
/* the largest value of a type passed by reference that the memo holds */
#define KEY_MEMO_VALUE_BYTES 32
/* the longest input of a type passed by reference that it looks up */
#define KEY_MEMO_INPUT_BYTES 32
/* lookups between checks of the rate of hits, which must be half or more */
#define KEY_MEMO_CHECK_EVERY 4096

typedef struct KeyMemoEntry
{
	bool		used;
	bool		value_null;
	uint8		input_length;	/* an input passed by reference: its length */
	Datum		input;			/* by value, or the hash of its bytes */
	Datum		value;			/* by value, or its copy in the memo's values */
} KeyMemoEntry;

/* an input passed by reference: its bytes (the data of a varlena) */
typedef struct KeyMemoInput
{
	char		bytes[KEY_MEMO_INPUT_BYTES];
} KeyMemoInput;

typedef struct KeyMemo
{
	int64		slot;
	int32		keyno;
	bool		off;			/* too few hits: every key is computed */
	int16		input_typlen;	/* of a type passed by reference, or 0 */
	Oid			value_type;		/* the key's, once a value was stored */
	int16		value_typlen;
	bool		value_byval;
	uint64		lookups;
	uint64		hits;
	/* the last lookup: its entry on a hit, else the entry for its input */
	KeyMemoEntry *found;
	KeyMemoEntry *vacant;
	Datum		pending;
	uint8		pending_length;
	KeyMemoInput pending_bytes;
	uint8		last_used[KEY_MEMO_SETS];
	KeyMemoEntry entries[KEY_MEMO_ENTRIES];
	char		values[KEY_MEMO_ENTRIES][KEY_MEMO_VALUE_BYTES];
	KeyMemoInput *inputs;		/* of each entry, for inputs passed by reference */
} KeyMemo;

/* the memo of the lookup that ran last in this backend, while it lasts */
static KeyMemo *current_memo = NULL;

static void
forget_memo(void *arg)
{
	if (current_memo == (KeyMemo *) arg)
		current_memo = NULL;
}

/* The memo of a lookup's call site, made on its first call. */
static KeyMemo *
call_memo(FunctionCallInfo fcinfo)
{
	KeyMemo    *memo = fcinfo->flinfo->fn_extra;

	if (memo == NULL)
	{
		MemoryContextCallback *callback;
		Oid			input_type;
		bool		input_byval = false;

		memo = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(KeyMemo));
		memo->slot = PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0);
		memo->keyno = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
		input_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
		if (OidIsValid(input_type))
			get_typlenbyval(input_type, &memo->input_typlen, &input_byval);
		if (input_byval)
			memo->input_typlen = 0;
		else if (memo->input_typlen != -1 &&
				 (memo->input_typlen <= 0 || memo->input_typlen > KEY_MEMO_INPUT_BYTES))
			memo->off = true;
		else
			memo->inputs = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
												  KEY_MEMO_ENTRIES * sizeof(KeyMemoInput));
		memo->off = memo->off || PG_ARGISNULL(0) || PG_ARGISNULL(1) || !OidIsValid(input_type);
		callback = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(MemoryContextCallback));
		callback->func = forget_memo;
		callback->arg = memo;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, callback);
		fcinfo->flinfo->fn_extra = memo;
	}
	return memo;
}

/* The type of a value or store call's third argument, looked up on its first call. */
static Oid
call_type(FunctionCallInfo fcinfo)
{
	Oid		   *type = fcinfo->flinfo->fn_extra;

	if (type == NULL)
	{
		type = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(Oid));
		*type = get_fn_expr_argtype(fcinfo->flinfo, 2);
		fcinfo->flinfo->fn_extra = type;
	}
	return *type;
}

/*
 * The memo of the last lookup, if it is the one of slot and keyno (the
 * first two arguments) and holds keys of type "type"; else NULL.
 */
static KeyMemo *
matching_memo(FunctionCallInfo fcinfo, Oid type)
{
	KeyMemo    *memo = current_memo;

	if (memo == NULL || !OidIsValid(type) || PG_ARGISNULL(0) || PG_ARGISNULL(1) ||
		memo->slot != PG_GETARG_INT64(0) || memo->keyno != PG_GETARG_INT32(1) ||
		(OidIsValid(memo->value_type) && memo->value_type != type))
		return NULL;
	return memo;
}

/*
 * The bytes of a value passed by reference, or 0 if the memo cannot hold it
 * (a pointer to a value stored elsewhere: toasted, or expanded in memory)
 */
static Size
value_bytes(const KeyMemo *memo, Datum value)
{
	if (memo->value_typlen > 0)
		return memo->value_typlen;
	if (memo->value_typlen == -1)
		return VARATT_IS_EXTERNAL(DatumGetPointer(value)) ? 0 :
			VARSIZE_ANY(DatumGetPointer(value));
	return strlen(DatumGetCString(value)) + 1;
}

/*
 * The bytes of an input passed by reference into memo->pending_bytes, and
 * their hash into memo->pending; false when longer than the memo holds.  A
 * varlena is named by its data, whatever its header.
 */
static bool
pending_input(KeyMemo *memo, Datum input)
{
	const char *bytes;
	Size		length;

	if (memo->input_typlen > 0)
	{
		bytes = DatumGetPointer(input);
		length = memo->input_typlen;
	}
	else
	{
		struct varlena *varlena;

		if (toast_raw_datum_size(input) - VARHDRSZ > KEY_MEMO_INPUT_BYTES)
			return false;
		varlena = PG_DETOAST_DATUM_PACKED(input);
		bytes = VARDATA_ANY(varlena);
		length = VARSIZE_ANY_EXHDR(varlena);
	}
	memcpy(memo->pending_bytes.bytes, bytes, length);
	memo->pending_length = length;
	memo->pending = (Datum) hash_bytes_extended((const unsigned char *) bytes, length, 0);
	return true;
}

/* Does entry "entry" hold the pending input? */
static inline bool
holds_pending(const KeyMemo *memo, const KeyMemoEntry *entry)
{
	if (!entry->used || entry->input != memo->pending)
		return false;
	return memo->input_typlen == 0 ||
		(entry->input_length == memo->pending_length &&
		 memcmp(memo->inputs[entry - memo->entries].bytes, memo->pending_bytes.bytes,
				memo->pending_length) == 0);
}

PG_FUNCTION_INFO_V1(uldp_key_memo_lookup);

/*
 * uldp.key_memo_lookup(slot bigint, keyno int, input anyelement) returns
 * boolean: does the memo hold the key of this input?
 */
Datum
uldp_key_memo_lookup(PG_FUNCTION_ARGS)
{
	KeyMemo    *memo = call_memo(fcinfo);
	KeyMemoEntry *set;
	int			set_number;

	current_memo = memo;
	memo->found = NULL;
	memo->vacant = NULL;
	if (memo->off || PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	if (++memo->lookups % KEY_MEMO_CHECK_EVERY == 0 && memo->hits * 2 < memo->lookups)
	{
		memo->off = true;
		PG_RETURN_BOOL(false);
	}
	if (memo->input_typlen == 0)
		memo->pending = PG_GETARG_DATUM(2);
	else if (!pending_input(memo, PG_GETARG_DATUM(2)))
		PG_RETURN_BOOL(false);
	set_number = (uint32) uldp_mix64((uint64) memo->pending) % KEY_MEMO_SETS;
	set = &memo->entries[set_number * KEY_MEMO_WAYS];
	for (int way = 0; way < KEY_MEMO_WAYS; way++)
		if (holds_pending(memo, &set[way]))
		{
			memo->found = &set[way];
			memo->last_used[set_number] = way;
			memo->hits++;
			PG_RETURN_BOOL(true);
		}
	/* a free entry, else the one of the set used least recently */
	memo->vacant = !set[0].used ? &set[0] : !set[1].used ? &set[1] :
		&set[1 - memo->last_used[set_number]];
	memo->last_used[set_number] = memo->vacant - set;
	PG_RETURN_BOOL(false);
}

PG_FUNCTION_INFO_V1(uldp_key_memo_value);

/*
 * uldp.key_memo_value(slot bigint, keyno int, type anyelement) returns
 * anyelement: the key that the last lookup found (NULL if it found none).
 */
Datum
uldp_key_memo_value(PG_FUNCTION_ARGS)
{
	KeyMemo    *memo = matching_memo(fcinfo, call_type(fcinfo));
	KeyMemoEntry *entry;
	Size		bytes;
	char	   *copy;

	if (memo == NULL || memo->found == NULL)
		PG_RETURN_NULL();
	entry = memo->found;
	memo->found = NULL;
	if (entry->value_null)
		PG_RETURN_NULL();
	if (memo->value_byval)
		PG_RETURN_DATUM(entry->value);
	/* a copy: the entry may hold another key before the row is done with this one */
	bytes = value_bytes(memo, entry->value);
	copy = palloc(bytes);
	memcpy(copy, DatumGetPointer(entry->value), bytes);
	PG_RETURN_POINTER(copy);
}

PG_FUNCTION_INFO_V1(uldp_key_memo_store);

/*
 * uldp.key_memo_store(slot bigint, keyno int, value anyelement) returns
 * anyelement: "value", the key of the input that the last lookup missed,
 * which the memo now holds.
 */
Datum
uldp_key_memo_store(PG_FUNCTION_ARGS)
{
	Oid			type = call_type(fcinfo);
	KeyMemo    *memo = matching_memo(fcinfo, type);
	KeyMemoEntry *entry;

	if (memo == NULL || memo->vacant == NULL)
	{
		if (PG_ARGISNULL(2))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(2));
	}
	if (!OidIsValid(memo->value_type))
	{
		memo->value_type = type;
		get_typlenbyval(type, &memo->value_typlen, &memo->value_byval);
	}
	entry = memo->vacant;
	memo->vacant = NULL;
	entry->used = false;
	if (PG_ARGISNULL(2))
		entry->value_null = true;
	else
	{
		Datum		value = PG_GETARG_DATUM(2);

		entry->value_null = false;
		if (memo->value_byval)
			entry->value = value;
		else
		{
			Size		bytes = value_bytes(memo, value);
			char	   *copy = memo->values[entry - memo->entries];

			if (bytes == 0 || bytes > KEY_MEMO_VALUE_BYTES)
				PG_RETURN_DATUM(value);
			memcpy(copy, DatumGetPointer(value), bytes);
			entry->value = PointerGetDatum(copy);
		}
	}
	entry->input = memo->pending;
	if (memo->input_typlen != 0)
	{
		entry->input_length = memo->pending_length;
		memcpy(memo->inputs[entry - memo->entries].bytes, memo->pending_bytes.bytes,
			   memo->pending_length);
	}
	entry->used = true;
	if (PG_ARGISNULL(2))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(2));
}

/* uldp.<name>(slot bigint, keyno int, anyelement), or InvalidOid before uldp 0.9 */
static Oid
memo_function(const char *name)
{
	static const Oid argtypes[] = {INT8OID, INT4OID, ANYELEMENTOID};

	return LookupFuncName(list_make2(makeString("uldp"), makeString(pstrdup(name))),
						  lengthof(argtypes), argtypes, true);
}

typedef struct KeyInput
{
	Var		   *column;			/* the one column read, so far */
	bool		other;			/* something else that could change the key */
} KeyInput;

static bool
key_input_walker(Node *node, KeyInput *input)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (var->varlevelsup != 0 || (input->column != NULL && !equal(var, input->column)))
			input->other = true;
		input->column = var;
		return input->other;
	}
	if (IsA(node, Param) || IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, Aggref) ||
		IsA(node, WindowFunc) || IsA(node, GroupingFunc) || IsA(node, PlaceHolderVar))
	{
		input->other = true;
		return true;
	}
	return expression_tree_walker(node, key_input_walker, (void *) input);
}

static Expr *
memo_call(const char *name, int64 slot, int keyno, Expr *arg, Oid type, Oid collation)
{
	List	   *args = list_make3(makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
											Int64GetDatum(slot), false, FLOAT8PASSBYVAL),
								  makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
											Int32GetDatum(keyno), false, true),
								  arg);

	return (Expr *) makeFuncExpr(memo_function(name), type, args, collation, collation,
								 COERCE_EXPLICIT_CALL);
}

/*
 * The key "key" (the keyno'th of the release of slot "slot") computed
 * through a memo by the column it reads, if it is a computation on one
 * column that the memo can hold (see the file's header); else "key".
 */
Expr *
uldp_key_memo_wrap(Expr *key, int64 slot, int keyno)
{
	KeyInput	input = {NULL, false};
	Oid			type = exprType((Node *) key);
	Oid			collation = exprCollation((Node *) key);
	CaseExpr   *when;
	CaseWhen   *found;

	if (IsA(key, Var) || IsA(key, Const) || exprTypmod((Node *) key) != -1 ||
		!OidIsValid(memo_function("key_memo_lookup")) ||
		key_input_walker((Node *) key, &input) || input.column == NULL ||
		get_typlen(input.column->vartype) == -2 || contain_volatile_functions((Node *) key) ||
		expression_returns_set((Node *) key))
		return key;

	found = makeNode(CaseWhen);
	found->expr = memo_call("key_memo_lookup", slot, keyno, (Expr *) copyObject(input.column),
							BOOLOID, InvalidOid);
	found->result = memo_call("key_memo_value", slot, keyno,
							  (Expr *) makeNullConst(type, -1, collation),
							  type, collation);
	found->location = -1;
	when = makeNode(CaseExpr);
	when->casetype = type;
	when->casecollid = collation;
	when->args = list_make1(found);
	when->defresult = memo_call("key_memo_store", slot, keyno, key, type, collation);
	when->location = -1;
	return (Expr *) when;
}

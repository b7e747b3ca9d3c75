/*-------------------------------------------------------------------------
 *
 * handover.c
 *	  Partial aggregate states handed over within their process.
 *
 * A parallel plan's leader aggregates its share of the rows partially too,
 * and its final aggregation, in the same process, combines those partial
 * states with the workers'.  PostgreSQL passes every partial state
 * serialized: the leader's own users would be written out, copied into a
 * tuple (and sorted, and written to disk, by a Sort over a grouped partial
 * aggregation) and copied in again, several times over in memory that the
 * kernel supplies fresh, and that is much of the time a parallel release
 * takes.  So the leader's serialization functions return a handle, a small
 * value that names the state, and its deserialization functions take the
 * state back by it, as it is.
 *
 * A state is handed over only where it outlives the final aggregation's
 * use of it: from a plain partial aggregation, whose state lives until its
 * node is rescanned or ends, or a hashed one that never spilled, whose table
 * of groups lives as long.  (A hashed aggregation that spilled frees a
 * batch's states when it loads the next; a sorted one frees a group's at
 * the next group: their states are serialized.)  A handle names nothing
 * once it is taken, or once the memory of its state is reset: taking such a
 * handle is an internal error, never a read of freed memory.  Whether a
 * state is handed over changes what the plan copies, never what is
 * released.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "handover.h"

/*
 * A handle as a value: 24 bytes, a length no serialized state of uldp has
 * (a user state's and a partial registry's are longer, a quantile state's
 * 16 bytes and then 16 per row).
 */
typedef struct HandleValue
{
	uint32		magic;			/* HANDLE_MAGIC */
	uint16		version;		/* HANDLE_VERSION */
	uint16		unused;
	int32		pid;			/* of the process that handed it over */
	int32		unused2;
	int64		handle;
} HandleValue;

#define HANDLE_MAGIC 0x554c4831	/* "ULH1" */
#define HANDLE_VERSION 1

typedef struct HandedOver
{
	int64		handle;			/* the key */
	void	   *state;
} HandedOver;

/* the states handed over in this backend and not yet taken */
static HTAB *handed_over = NULL;
static int64 last_handle = 0;

/*
 * May the serialization function called with "fcinfo" hand its state over
 * instead (see above)?
 */
bool
uldp_can_hand_over(FunctionCallInfo fcinfo)
{
	AggState   *aggstate;

	if (IsParallelWorker() || fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return false;
	aggstate = (AggState *) fcinfo->context;
	return aggstate->aggstrategy == AGG_PLAIN ||
		(aggstate->aggstrategy == AGG_HASHED && !aggstate->hash_ever_spilled);
}

/* The memory of a handed-over state is reset: its handle names nothing. */
static void
forget_handle(void *arg)
{
	if (handed_over != NULL)
		(void) hash_search(handed_over, arg, HASH_REMOVE, NULL);
}

/*
 * A handle for "state", whose memory is "context" (or is freed with it),
 * for the final aggregation of this process to take.
 */
bytea *
uldp_hand_over(void *state, MemoryContext context)
{
	MemoryContextCallback *callback = MemoryContextAlloc(context, sizeof(MemoryContextCallback));
	int64	   *handle = MemoryContextAlloc(context, sizeof(int64));
	bytea	   *result = palloc(VARHDRSZ + sizeof(HandleValue));
	HandedOver *entry;
	HandleValue value;

	if (handed_over == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(HandedOver);
		ctl.hcxt = TopMemoryContext;
		handed_over = hash_create("uldp handed-over states", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	*handle = ++last_handle;
	entry = hash_search(handed_over, handle, HASH_ENTER, NULL);
	entry->state = state;
	callback->func = forget_handle;
	callback->arg = handle;
	MemoryContextRegisterResetCallback(context, callback);

	memset(&value, 0, sizeof(value));
	value.magic = HANDLE_MAGIC;
	value.version = HANDLE_VERSION;
	value.pid = MyProcPid;
	value.handle = *handle;
	SET_VARSIZE(result, VARHDRSZ + sizeof(value));
	memcpy(VARDATA(result), &value, sizeof(value));
	return result;
}

/*
 * The state that "value" hands over, taken (its handle names nothing
 * afterwards), or NULL if "value" is not a handle but a serialized state.
 */
void *
uldp_take_handed_over(const bytea *value)
{
	HandleValue handle;
	HandedOver *entry = NULL;
	void	   *state;

	if (VARSIZE_ANY_EXHDR(value) != sizeof(handle))
		return NULL;
	memcpy(&handle, VARDATA_ANY(value), sizeof(handle));
	if (handle.magic != HANDLE_MAGIC || handle.version != HANDLE_VERSION)
		return NULL;
	if (handle.pid != MyProcPid)
		elog(ERROR, "uldp received a partial aggregate state handed over in another process");
	if (handed_over != NULL)
		entry = hash_search(handed_over, &handle.handle, HASH_FIND, NULL);
	if (entry == NULL)
		elog(ERROR, "uldp received a partial aggregate state that is gone");
	state = entry->state;
	(void) hash_search(handed_over, &handle.handle, HASH_REMOVE, NULL);
	return state;
}

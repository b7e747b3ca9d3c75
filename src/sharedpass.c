/*-------------------------------------------------------------------------
 *
 * sharedpass.c
 *	  Serialized partial states passed from parallel workers to the leader
 *	  in the parallel query's shared memory.
 *
 * A worker returns its partial states serialized, and PostgreSQL sends
 * them to the leader through a tuple queue of 64 kB: the worker fills it,
 * waits for the leader to empty a quarter of it, and so on, two process
 * wake-ups per 16 kB.  A release's partial state is a table of users, tens
 * of megabytes with a million users, and its passage took longer than its
 * serialization and its merge together (20 MB: 50 to 100 ms, at a tenth of
 * memory speed).  So a worker serializes a large state into the dynamic
 * shared memory area that PostgreSQL makes for each parallel query
 * (es_query_dsa, also the home of Parallel Hash's tables), and sends only
 * a small value that names it; the leader reads the state where it is and
 * frees it once it has read it.
 *
 * The leader finds the area from the final aggregation: the Gather (or
 * Gather Merge) beneath it whose workers ran the partial aggregation that
 * the value names by plan node.  The area lives until that Gather ends,
 * which is after the final aggregation has combined every state it
 * received; a combine function reads a passed state before it returns, as
 * it would read a value from the queue, and keeps a copy of what it keeps.
 * A state the leader never reads (a LIMIT above it) is freed with the area.
 *
 * Shared memory holds at once what the worker has passed and the leader
 * not yet read: at most the worker's partial states, which the memory
 * bound checked before reading counts already (they were copied into
 * tuples before).  Dynamic shared memory is a tmpfs (/dev/shm) that may
 * be small (64 MB in a default container); a state passes there only when
 * the file system has twice its size free, and through the queue
 * otherwise, so that where it passes changes how long the passage takes,
 * never what is released nor whether an error is raised.  A failure of
 * the file system after that check (another process filling it in the
 * meantime) is the environment's, as an out-of-memory failure is.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "access/parallel.h"
#include "executor/execParallel.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "storage/dsm_impl.h"

#include "sharedpass.h"

/* a smaller state passes through the queue in one step anyway */
#define PASS_MIN_BYTES (64 * 1024)

/*
 * The length of the value that names a passed state: a quarter of the
 * tuple queue.  A worker's tuple queue makes what it was sent visible to
 * the leader only once more than a quarter of it is pending, or when the
 * worker ends; a smaller value would wait there, and the leader would
 * combine a grouped release's passed states only after the worker had
 * serialized its last one, not while it serializes the next.
 */
#define TUPLE_QUEUE_BYTES 65536	/* PARALLEL_TUPLE_QUEUE_SIZE, execParallel.c */
#define PASS_VALUE_BYTES (TUPLE_QUEUE_BYTES / 4)

/* where POSIX shared memory lives on Linux (glibc's shm_open) */
#define POSIX_SHM_DIRECTORY "/dev/shm"

/* The value a worker returns for a state it put in shared memory, padded. */
typedef struct PassValue
{
	uint32		magic;			/* ULDP_PASS_MAGIC */
	uint16		version;		/* PASS_VERSION */
	uint16		unused;
	int32		plan_node_id;	/* of the worker's partial aggregation */
	int32		unused2;
	dsa_pointer pointer;		/* the serialized state */
	uint64		size;			/* its length, varlena header included */
	uint64		unused3;
} PassValue;

#define PASS_VERSION 1

/* the last room taken by uldp_pass_alloc in this worker, if in shared memory */
static struct
{
	void	   *address;
	dsa_pointer pointer;
}			last_room;

/* The parallel query's shared memory, in a worker's aggregation; or NULL. */
static dsa_area *
worker_area(FunctionCallInfo fcinfo)
{
	if (!IsParallelWorker() || fcinfo == NULL || fcinfo->context == NULL ||
		!IsA(fcinfo->context, AggState))
		return NULL;
	return ((PlanState *) fcinfo->context)->state->es_query_dsa;
}

/* Has dynamic shared memory room for twice "size" bytes now? */
static bool
shared_memory_has_room(Size size)
{
	struct statvfs fs;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX ||
		statvfs(POSIX_SHM_DIRECTORY, &fs) != 0)
		return false;
	return (double) fs.f_bavail * fs.f_frsize >= 2.0 * size;
}

/*
 * Room for a serialized state of "size" bytes, its varlena header
 * included, that the serialization function called with "fcinfo" (or
 * NULL: none) fills and passes to uldp_pass_finish: in shared memory when
 * a parallel worker's large state can go there, else in the current memory
 * context.
 */
bytea *
uldp_pass_alloc(FunctionCallInfo fcinfo, Size size)
{
	dsa_area   *area = worker_area(fcinfo);

	last_room.address = NULL;
	if (area != NULL && size >= PASS_MIN_BYTES && shared_memory_has_room(size))
	{
		dsa_pointer pointer = dsa_allocate_extended(area, size,
													DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);

		if (DsaPointerIsValid(pointer))
		{
			last_room.address = dsa_get_address(area, pointer);
			last_room.pointer = pointer;
			return (bytea *) last_room.address;
		}
	}
	return palloc_extended(size, MCXT_ALLOC_HUGE);
}

/*
 * The value to return for "serialized", filled in the room of the last
 * uldp_pass_alloc: itself, or the small value that names it in shared
 * memory.
 */
bytea *
uldp_pass_finish(FunctionCallInfo fcinfo, bytea *serialized)
{
	bytea	   *result;
	PassValue	value;

	if (last_room.address == NULL || (void *) serialized != last_room.address)
		return serialized;
	memset(&value, 0, sizeof(value));
	value.magic = ULDP_PASS_MAGIC;
	value.version = PASS_VERSION;
	value.plan_node_id = ((PlanState *) fcinfo->context)->plan->plan_node_id;
	value.pointer = last_room.pointer;
	value.size = VARSIZE(serialized);
	last_room.address = NULL;
	result = palloc0(VARHDRSZ + PASS_VALUE_BYTES);
	SET_VARSIZE(result, VARHDRSZ + PASS_VALUE_BYTES);
	memcpy(VARDATA(result), &value, sizeof(value));
	return result;
}

/* Does the subtree of "planstate" hold the plan node "*plan_node_id"? */
static bool
holds_node(PlanState *planstate, void *plan_node_id)
{
	if (planstate->plan->plan_node_id == *(int *) plan_node_id)
		return true;
	return planstate_tree_walker(planstate, holds_node, plan_node_id);
}

typedef struct AreaSearch
{
	int			plan_node_id;	/* the workers' partial aggregation */
	dsa_area   *area;			/* found: the area of their Gather */
} AreaSearch;

static bool
find_area(PlanState *planstate, void *context)
{
	AreaSearch *search = (AreaSearch *) context;
	ParallelExecutorInfo *pei = NULL;

	if (IsA(planstate, GatherState))
		pei = ((GatherState *) planstate)->pei;
	else if (IsA(planstate, GatherMergeState))
		pei = ((GatherMergeState *) planstate)->pei;
	if (pei != NULL && pei->area != NULL &&
		holds_node(outerPlanState(planstate), &search->plan_node_id))
	{
		search->area = pei->area;
		return true;
	}
	return planstate_tree_walker(planstate, find_area, context);
}

/*
 * In a deserialization function: the serialized state that "value" names
 * in shared memory, with "passed" set for uldp_pass_release, or "value"
 * itself when it is a serialized state.
 */
bytea *
uldp_pass_open(FunctionCallInfo fcinfo, bytea *value, UldpPassed *passed)
{
	PassValue	pass;
	AreaSearch	search;
	bytea	   *serialized;

	passed->area = NULL;
	if (VARSIZE_ANY_EXHDR(value) != PASS_VALUE_BYTES)
		return value;
	memcpy(&pass, VARDATA_ANY(value), sizeof(pass));
	if (pass.magic != ULDP_PASS_MAGIC)
		return value;
	if (pass.version != PASS_VERSION)
		elog(ERROR, "uldp received a partial aggregate state in shared memory of another version");
	search.plan_node_id = pass.plan_node_id;
	search.area = NULL;
	if (IsParallelWorker() || fcinfo->context == NULL || !IsA(fcinfo->context, AggState) ||
		!planstate_tree_walker((PlanState *) fcinfo->context, find_area, &search))
		elog(ERROR, "uldp received a partial aggregate state in shared memory that it cannot find");
	serialized = dsa_get_address(search.area, pass.pointer);
	if (VARSIZE(serialized) != pass.size)
		elog(ERROR, "uldp received a partial aggregate state in shared memory that is not what it was");
	passed->area = search.area;
	passed->pointer = pass.pointer;
	return serialized;
}

/* Frees a state that uldp_pass_open found in shared memory, once read. */
void
uldp_pass_release(UldpPassed *passed)
{
	if (passed->area != NULL)
		dsa_free(passed->area, passed->pointer);
	passed->area = NULL;
}

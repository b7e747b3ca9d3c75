/*-------------------------------------------------------------------------
 *
 * dropguard.c
 *	  Refusing to drop the budgets and the ledger while they hold rows.
 *
 * DROP EXTENSION uldp would silently destroy every budget and the whole
 * ledger.  While uldp.budget_data or uldp.ledger_data holds a row, dropping
 * either table is refused, whatever command drops it: DROP EXTENSION uldp
 * (with or without CASCADE), a cascade from another object (DROP SCHEMA
 * public CASCADE, DROP LANGUAGE plpgsql CASCADE reach the extension through
 * its members), DROP OWNED BY its owner, or a DROP TABLE after ALTER
 * EXTENSION ... DROP TABLE.  A superuser confirms with SET uldp.allow_drop
 * = on.
 *
 * The check is an object access hook (OAT_DROP), called for each object just
 * before it is deleted, while the tables can still be read.  Hooks exist only
 * in backends that loaded the library, and uldp needs no
 * shared_preload_libraries; so the extension script also creates an event
 * trigger on ddl_command_start for the DROP commands, whose C function
 * (uldp._drop_guard) loads the library, and with it the hook, before the
 * command runs.  The event trigger also refuses DROP EXTENSION uldp itself
 * up front, before anything is deleted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "commands/event_trigger.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "dropguard.h"

PG_FUNCTION_INFO_V1(uldp_drop_guard);

bool		uldp_allow_drop = false;

static object_access_hook_type prev_object_access_hook = NULL;

static const char *const guarded_tables[] = {"budget_data", "ledger_data"};

/* true iff the table has at least one row visible to a fresh snapshot */
static bool
table_has_rows(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	bool		found = table_scan_getnextslot(scan, ForwardScanDirection, slot);

	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
	return found;
}

/* the oid of uldp.<guarded table number i>, or InvalidOid */
static Oid
guarded_table(int i)
{
	Oid			namespace = get_namespace_oid("uldp", true);

	if (!OidIsValid(namespace))
		return InvalidOid;
	return get_relname_relid(guarded_tables[i], namespace);
}

static void
refuse_if_holds_rows(Oid relid)
{
	if (uldp_allow_drop || !OidIsValid(relid) || !table_has_rows(relid))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
			 errmsg("cannot drop extension uldp while it holds privacy budgets or ledger rows"),
			 errdetail("Table uldp.%s has rows; dropping it would destroy the budgets and the record of every release.",
					   get_rel_name(relid)),
			 errhint("Back them up first (pg_dump, see doc/administration.md). To drop them anyway, a superuser runs SET uldp.allow_drop = on and repeats the command.")));
}

static void
uldp_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				   int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		!uldp_allow_drop)
	{
		int			i;

		for (i = 0; i < lengthof(guarded_tables); i++)
			if (objectId == guarded_table(i))
				refuse_if_holds_rows(objectId);
	}
}

void
uldp_dropguard_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = uldp_object_access;
}

/*
 * Event trigger function (ddl_command_start, DROP commands): by being called
 * it has loaded the library, and so the hook; DROP EXTENSION uldp is refused
 * here already.
 */
Datum
uldp_drop_guard(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("uldp._drop_guard() can only be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;

	if (!uldp_allow_drop && IsA(trigdata->parsetree, DropStmt) &&
		((DropStmt *) trigdata->parsetree)->removeType == OBJECT_EXTENSION)
	{
		ListCell   *lc;

		foreach(lc, ((DropStmt *) trigdata->parsetree)->objects)
		{
			if (strcmp(strVal(lfirst(lc)), "uldp") == 0)
			{
				int			i;

				for (i = 0; i < lengthof(guarded_tables); i++)
					refuse_if_holds_rows(guarded_table(i));
			}
		}
	}
	PG_RETURN_NULL();
}

/*-------------------------------------------------------------------------
 *
 * protect.c
 *	  Protected tables, recorded as security labels of provider "uldp".
 *
 * uldp.protect_table(t, c) labels table t 'protected' and its column c
 * 'privacy_unit'.  Security labels are catalog entries owned by the labelled
 * object: they disappear with the table or column, survive renames, and are
 * dumped and restored by pg_dump.  The query gate (gate.c) reads them.
 *
 * Protection grants nothing by itself to roles that may already read the
 * table; it lets roles that may not read it run differentially private
 * releases over it.  That is a grant, so only the table's owner (or a
 * superuser) may protect or unprotect a table, as for SECURITY LABEL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_seclabel.h"
#include "commands/seclabel.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "protect.h"

#define LABEL_PROVIDER "uldp"
#define LABEL_TABLE "protected"
#define LABEL_UNIT "privacy_unit"

PG_FUNCTION_INFO_V1(uldp_protect_table);
PG_FUNCTION_INFO_V1(uldp_unprotect_table);

static void
check_protectable(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errhint("Only tables and partitioned tables can be protected.")));
}

/* SECURITY LABEL FOR uldp accepts exactly the labels protect_table writes. */
static void
check_label(const ObjectAddress *object, const char *label)
{
	if (label == NULL)
		return;
	if (object->classId == RelationRelationId && object->objectSubId == 0 &&
		strcmp(label, LABEL_TABLE) == 0)
	{
		check_protectable(object->objectId);
		return;
	}
	if (object->classId == RelationRelationId && object->objectSubId > 0 &&
		strcmp(label, LABEL_UNIT) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("\"%s\" is not a valid uldp security label for %s",
					label, getObjectDescription(object, false)),
			 errhint("Use uldp.protect_table(table, privacy_unit) and uldp.unprotect_table(table).")));
}

void
uldp_protect_init(void)
{
	register_label_provider(LABEL_PROVIDER, check_label);
}

/*
 * Is relid protected?  If so, *privacy_unit is the column labelled as its
 * privacy unit, or InvalidAttrNumber if there is not exactly one (which the
 * gate treats as "nothing may be released": fail closed).
 */
bool
uldp_table_protection(Oid relid, AttrNumber *privacy_unit)
{
	Relation	seclabels;
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		protected = false;
	int			units = 0;

	*privacy_unit = InvalidAttrNumber;
	ScanKeyInit(&keys[0], Anum_pg_seclabel_objoid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	ScanKeyInit(&keys[1], Anum_pg_seclabel_classoid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationRelationId));
	seclabels = table_open(SecLabelRelationId, AccessShareLock);
	scan = systable_beginscan(seclabels, SecLabelObjectIndexId, true, NULL, 2, keys);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		FormData_pg_seclabel *form = (FormData_pg_seclabel *) GETSTRUCT(tuple);
		bool		isnull;
		Datum		provider = heap_getattr(tuple, Anum_pg_seclabel_provider,
											RelationGetDescr(seclabels), &isnull);
		Datum		label = heap_getattr(tuple, Anum_pg_seclabel_label,
										 RelationGetDescr(seclabels), &isnull);
		char	   *provider_name = TextDatumGetCString(provider);
		char	   *label_text = TextDatumGetCString(label);

		if (strcmp(provider_name, LABEL_PROVIDER) == 0)
		{
			if (form->objsubid == 0 && strcmp(label_text, LABEL_TABLE) == 0)
				protected = true;
			else if (form->objsubid > 0 && strcmp(label_text, LABEL_UNIT) == 0)
			{
				*privacy_unit = form->objsubid;
				units++;
			}
		}
	}
	systable_endscan(scan);
	table_close(seclabels, AccessShareLock);
	if (units != 1)
		*privacy_unit = InvalidAttrNumber;
	return protected;
}

static void
check_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
}

/* Remove the privacy unit label from every column of rel. */
static void
clear_unit_labels(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	ObjectAddress column;

	for (AttrNumber attnum = 1; attnum <= RelationGetNumberOfAttributes(rel); attnum++)
	{
		ObjectAddressSubSet(column, RelationRelationId, relid, attnum);
		SetSecurityLabel(&column, LABEL_PROVIDER, NULL);
	}
}

/* Is "uldp" in one of the *_preload_libraries settings of this session? */
static bool
preloaded(void)
{
	const char *settings[] = {"shared_preload_libraries", "session_preload_libraries"};

	for (int i = 0; i < lengthof(settings); i++)
	{
		const char *value = GetConfigOption(settings[i], true, false);

		if (value && strstr(value, "uldp"))
			return true;
	}
	return false;
}

/*
 * uldp.protect_table(tab regclass, privacy_unit name)
 */
Datum
uldp_protect_table(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *unit_name = NameStr(*PG_GETARG_NAME(1));
	AttrNumber	unit;
	ObjectAddress table;
	ObjectAddress column;
	Relation	rel;

	/* the lock SECURITY LABEL takes: no concurrent relabelling or DDL */
	rel = relation_open(relid, ShareUpdateExclusiveLock);
	check_protectable(relid);
	check_owner(relid);
	unit = get_attnum(relid, unit_name);
	if (unit == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist", unit_name, get_rel_name(relid)),
				 errhint("Name the column that identifies the person each row belongs to.")));
	if (unit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("system column \"%s\" cannot be a privacy unit", unit_name),
				 errhint("Name the column that identifies the person each row belongs to.")));

	clear_unit_labels(rel);
	ObjectAddressSet(table, RelationRelationId, relid);
	ObjectAddressSubSet(column, RelationRelationId, relid, unit);
	SetSecurityLabel(&table, LABEL_PROVIDER, LABEL_TABLE);
	SetSecurityLabel(&column, LABEL_PROVIDER, LABEL_UNIT);
	/* cached plans of queries on the table were gated (or not) by the old labels */
	CacheInvalidateRelcache(rel);

	if (!preloaded())
		ereport(WARNING,
				(errmsg("roles without SELECT privilege cannot query \"%s\" until uldp is preloaded",
						get_rel_name(relid)),
				 errhint("Add uldp to shared_preload_libraries and restart, or to session_preload_libraries.")));
	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * uldp.unprotect_table(tab regclass)
 */
Datum
uldp_unprotect_table(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	AttrNumber	unit;
	ObjectAddress table;
	Relation	rel = relation_open(relid, ShareUpdateExclusiveLock);

	check_owner(relid);
	if (!uldp_table_protection(relid, &unit))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not protected", get_rel_name(relid)),
				 errhint("uldp.protected_tables lists the protected tables.")));
	clear_unit_labels(rel);
	ObjectAddressSet(table, RelationRelationId, relid);
	SetSecurityLabel(&table, LABEL_PROVIDER, NULL);
	CacheInvalidateRelcache(rel);
	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

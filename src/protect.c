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
 * uldp.set_public_groups(t, c, keys) labels column c 'public_groups {...}'
 * with the keys, in their text form: the table's owner declares that these
 * values of c are public, so a release grouped by c shows exactly these
 * groups, empty ones included, without spending on choosing them
 * (grouping.c).  It is a statement about the data that uldp cannot check,
 * so it too is the owner's.
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
#include "catalog/pg_type.h"
#include "commands/seclabel.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
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
#define LABEL_PUBLIC_GROUPS "public_groups "

PG_FUNCTION_INFO_V1(uldp_protect_table);
PG_FUNCTION_INFO_V1(uldp_unprotect_table);
PG_FUNCTION_INFO_V1(uldp_set_public_groups);

/* The keys of a public groups label, as a text[] (NULL if it is not one). */
static Datum
label_public_keys(const char *label)
{
	size_t		prefix = strlen(LABEL_PUBLIC_GROUPS);

	if (strncmp(label, LABEL_PUBLIC_GROUPS, prefix) != 0)
		return (Datum) 0;
	return OidInputFunctionCall(F_ARRAY_IN, (char *) label + prefix, TEXTOID, -1);
}

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
		(strcmp(label, LABEL_UNIT) == 0 || label_public_keys(label) != (Datum) 0))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("\"%s\" is not a valid uldp security label for %s",
					label, getObjectDescription(object, false)),
			 errhint("Use uldp.protect_table(table, privacy_unit), uldp.unprotect_table(table) and uldp.set_public_groups(table, column, keys).")));
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

/* Remove the privacy unit label from every column of rel (not public keys). */
static void
clear_unit_labels(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	ObjectAddress column;

	for (AttrNumber attnum = 1; attnum <= RelationGetNumberOfAttributes(rel); attnum++)
	{
		char	   *label;

		ObjectAddressSubSet(column, RelationRelationId, relid, attnum);
		label = GetSecurityLabel(&column, LABEL_PROVIDER);
		if (label != NULL && strcmp(label, LABEL_UNIT) == 0)
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

/*
 * uldp.set_public_groups(tab regclass, col name, keys anyarray): declares the
 * keys of column col public (NULL keys: no longer).  The keys must have the
 * column's type; duplicates and NULLs are dropped.
 */
Datum
uldp_set_public_groups(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column_name;
	AttrNumber	attnum;
	Oid			column_type;
	Relation	rel;
	ObjectAddress column;
	char	   *label = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the table and the column must not be null"),
				 errhint("Call uldp.set_public_groups('orders', 'country', ARRAY['DE', 'FR']).")));
	relid = PG_GETARG_OID(0);
	column_name = NameStr(*PG_GETARG_NAME(1));
	rel = relation_open(relid, ShareUpdateExclusiveLock);
	check_protectable(relid);
	check_owner(relid);
	attnum = get_attnum(relid, column_name);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist", column_name, get_rel_name(relid)),
				 errhint("Name the column whose values are the public group keys.")));
	column_type = get_atttype(relid, attnum);
	ObjectAddressSubSet(column, RelationRelationId, relid, attnum);
	label = GetSecurityLabel(&column, LABEL_PROVIDER);
	if (label != NULL && strcmp(label, LABEL_UNIT) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column \"%s\" is the privacy unit of \"%s\"", column_name, get_rel_name(relid)),
				 errhint("Releases are never grouped by the privacy unit.")));
	label = NULL;
	if (!PG_ARGISNULL(2))
	{
		ArrayType  *keys = PG_GETARG_ARRAYTYPE_P(2);
		Oid			output;
		bool		varlena;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *elements;
		bool	   *nulls;
		int			n;
		ArrayBuildState *texts = initArrayResult(TEXTOID, CurrentMemoryContext, false);
		List	   *seen = NIL;

		if (ARR_ELEMTYPE(keys) != column_type)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the keys are of type %s, the column \"%s\" of type %s",
							format_type_be(ARR_ELEMTYPE(keys)), column_name, format_type_be(column_type)),
					 errhint("Cast the keys to the column's type: ARRAY[...]::%s[].", format_type_be(column_type))));
		getTypeOutputInfo(column_type, &output, &varlena);
		get_typlenbyvalalign(column_type, &typlen, &typbyval, &typalign);
		deconstruct_array(keys, column_type, typlen, typbyval, typalign, &elements, &nulls, &n);
		for (int i = 0; i < n; i++)
		{
			char	   *text;
			ListCell   *lc;
			bool		duplicate = false;

			if (nulls[i])
				continue;
			text = OidOutputFunctionCall(output, elements[i]);
			foreach(lc, seen)
				duplicate = duplicate || strcmp(lfirst(lc), text) == 0;
			if (duplicate)
				continue;
			seen = lappend(seen, text);
			accumArrayResult(texts, CStringGetTextDatum(text), false, TEXTOID, CurrentMemoryContext);
		}
		if (seen == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no public group keys given"),
					 errhint("Pass at least one key, or NULL to declare the column's keys private again.")));
		label = psprintf("%s%s", LABEL_PUBLIC_GROUPS,
						 OidOutputFunctionCall(F_ARRAY_OUT, makeArrayResult(texts, CurrentMemoryContext)));
	}
	SetSecurityLabel(&column, LABEL_PROVIDER, label);
	/* cached plans grouped by the column chose their groups by the old label */
	CacheInvalidateRelcache(rel);
	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * The public group keys of column attnum of relid, as an array of the
 * column's type (each key read with the type's input function), or false.
 */
bool
uldp_public_group_keys(Oid relid, AttrNumber attnum, Datum *keys)
{
	ObjectAddress column;
	char	   *label;
	Datum		texts;
	Oid			column_type = get_atttype(relid, attnum);
	Oid			input;
	Oid			ioparam;
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	ArrayBuildState *values;

	ObjectAddressSubSet(column, RelationRelationId, relid, attnum);
	label = GetSecurityLabel(&column, LABEL_PROVIDER);
	if (label == NULL || (texts = label_public_keys(label)) == (Datum) 0)
		return false;
	getTypeInputInfo(column_type, &input, &ioparam);
	deconstruct_array(DatumGetArrayTypeP(texts), TEXTOID, -1, false, TYPALIGN_INT,
					  &elements, &nulls, &n);
	values = initArrayResult(column_type, CurrentMemoryContext, false);
	for (int i = 0; i < n; i++)
		accumArrayResult(values,
						 OidInputFunctionCall(input, TextDatumGetCString(elements[i]), ioparam, -1),
						 false, column_type, CurrentMemoryContext);
	*keys = makeArrayResult(values, CurrentMemoryContext);
	return true;
}

/*-------------------------------------------------------------------------
 *
 * budgetadmin.c
 *	  uldp.set_budget and uldp.reset_budget: who may change a budget.
 *
 * Both are revoked from PUBLIC; a superuser may grant EXECUTE on them to
 * delegate budget administration.  A delegate must not be able to raise or
 * reset its own budget.  A SECURITY DEFINER function cannot see the current
 * user of its caller (SET ROLE, or a SECURITY DEFINER function of the
 * delegate's own in between), so these are ordinary (SECURITY INVOKER) C
 * functions: they check the caller's session user and current user, then
 * run the internal PL/pgSQL function (uldp._set_budget, uldp._reset_budget,
 * revoked from PUBLIC) as that function's owner, the way fmgr runs a
 * SECURITY DEFINER function.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(uldp_set_budget);
PG_FUNCTION_INFO_V1(uldp_reset_budget);

/*
 * The name of the role a budget function was given, after checking that the
 * caller may change its budget: superusers may change any; anyone else none
 * of a role that its current user or its session user is, or is a member of
 * (and so could SET ROLE to).
 */
static char *
budget_role_name(Oid role, const char *function)
{
	char	   *name = GetUserNameFromId(role, true);
	Oid			caller = InvalidOid;

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", role),
				 errhint("Pass the name of an existing role, e.g. uldp.%s('analyst', ...).", function)));

	if (superuser())
		return name;
	if (is_member_of_role(GetUserId(), role))
		caller = GetUserId();
	else if (!superuser_arg(GetSessionUserId()) &&
			 is_member_of_role(GetSessionUserId(), role))
		caller = GetSessionUserId();

	if (OidIsValid(caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to change the privacy budget of role \"%s\"", name),
				 errdetail("Role \"%s\" is role \"%s\" or a member of it, and no role but a superuser may change its own budget.",
						   GetUserNameFromId(caller, false), name),
				 errhint("Ask a superuser, or another role granted EXECUTE on uldp.%s, to change it.",
						 function)));
	return name;
}

/* Calls uldp.<function>(args) as the owner of that function. */
static void
call_as_owner(const char *function, int nargs, Oid *argtypes, Datum *args, bool *nulls)
{
	List	   *qualified = list_make2(makeString("uldp"), makeString(pstrdup(function)));
	Oid			fnoid = LookupFuncName(qualified, nargs, argtypes, false);
	HeapTuple	tuple;
	Oid			owner;
	Oid			save_userid;
	int			save_sec_context;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	int			i;

	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for function %u", fnoid);
	owner = ((Form_pg_proc) GETSTRUCT(tuple))->proowner;
	ReleaseSysCache(tuple);

	fmgr_info(fnoid, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, nargs, InvalidOid, NULL, NULL);
	for (i = 0; i < nargs; i++)
	{
		fcinfo->args[i].value = args[i];
		fcinfo->args[i].isnull = nulls[i];
	}

	/* an error restores the user id when the (sub)transaction aborts */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	(void) FunctionCallInvoke(fcinfo);
	SetUserIdAndSecContext(save_userid, save_sec_context);
}

/* uldp.set_budget(role regrole, epsilon float8, delta float8) */
Datum
uldp_set_budget(PG_FUNCTION_ARGS)
{
	Oid			argtypes[3] = {NAMEOID, FLOAT8OID, FLOAT8OID};
	Datum		args[3];
	bool		nulls[3];

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role must not be null"),
				 errhint("Pass the role whose budget to set, e.g. uldp.set_budget('analyst', 3.0, 1e-6).")));
	args[0] = DirectFunctionCall1(namein,
								  CStringGetDatum(budget_role_name(PG_GETARG_OID(0), "set_budget")));
	nulls[0] = false;
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	nulls[1] = PG_ARGISNULL(1);
	args[2] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2);
	call_as_owner("_set_budget", 3, argtypes, args, nulls);
	PG_RETURN_VOID();
}

/* uldp.reset_budget(role regrole) */
Datum
uldp_reset_budget(PG_FUNCTION_ARGS)
{
	Oid			argtypes[1] = {NAMEOID};
	Datum		args[1];
	bool		nulls[1] = {false};

	args[0] = DirectFunctionCall1(namein,
								  CStringGetDatum(budget_role_name(PG_GETARG_OID(0), "reset_budget")));
	call_as_owner("_reset_budget", 1, argtypes, args, nulls);
	PG_RETURN_VOID();
}

/*-------------------------------------------------------------------------
 *
 * budget.c
 *	  Charging releases to the privacy budget.
 *
 * A charge is recorded by a dynamic background worker in a transaction of
 * its own, committed with synchronous_commit = on, before the releasing
 * function computes anything.  The caller waits for the worker to exit and
 * reads the outcome from a small dynamic shared memory segment.  Because the
 * charge is not part of the caller's transaction:
 *
 *	- the caller's ROLLBACK, a failed savepoint, an error after the release
 *	  or a disconnect cannot undo it;
 *	- releases work in read-only transactions and inside parallel queries,
 *	  where the caller itself may not write;
 *	- concurrent charges serialise on the budget row (SELECT ... FOR
 *	  UPDATE in uldp._charge), so a budget can never be overspent.
 *
 * The charged role is the session user: SET ROLE and SECURITY DEFINER
 * functions change the current user but not whose budget pays.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "mb/pg_wchar.h"

#include "budget.h"

typedef enum ChargeStatus
{
	CHARGE_PENDING = 0,
	CHARGE_OK,
	CHARGE_NO_BUDGET,
	CHARGE_OVER_BUDGET,
	CHARGE_FAILED
} ChargeStatus;

/* the statement text recorded in the ledger is cut to this many bytes */
#define STATEMENT_MAX_BYTES 8192

typedef struct ChargeRequest
{
	/* filled by the releasing backend */
	Oid			database;
	char		role[NAMEDATALEN];
	double		epsilon;
	double		delta;
	char		functions[256];
	/* filled by the worker */
	ChargeStatus status;
	char		epsilon_remaining[64];
	char		delta_remaining[64];
	char		message[512];
	/* filled by the releasing backend; the segment is sized for the text */
	char		statement[FLEXIBLE_ARRAY_MEMBER];
} ChargeRequest;

PGDLLEXPORT void uldp_charge_worker_main(Datum main_arg);

/*
 * Charges (epsilon, delta) to the session user's budget for the releases
 * "functions" (a list of names) of "statement", in one ledger row.
 */
void
uldp_charge(const char *functions, double epsilon, double delta,
			const char *statement)
{
	dsm_segment *segment;
	ChargeRequest *request;
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	ChargeRequest outcome;
	const char *role = GetUserNameFromId(GetSessionUserId(), false);
	Size		statement_bytes = pg_mbcliplen(statement ? statement : "",
											   strlen(statement ? statement : ""),
											   STATEMENT_MAX_BYTES);

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s cannot release results on a hot standby", functions),
				 errhint("Run the query on the primary server: the privacy ledger can only be written there.")));

	segment = dsm_create(offsetof(ChargeRequest, statement) + statement_bytes + 1, 0);
	request = dsm_segment_address(segment);
	memset(request, 0, offsetof(ChargeRequest, statement) + statement_bytes + 1);
	request->database = MyDatabaseId;
	strlcpy(request->role, role, NAMEDATALEN);
	request->epsilon = epsilon;
	request->delta = delta;
	strlcpy(request->functions, functions, sizeof(request->functions));
	if (statement_bytes > 0)
		memcpy(request->statement, statement, statement_bytes);

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "uldp", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "uldp_charge_worker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "uldp budget charge", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "uldp budget charge", BGW_MAXLEN);
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(segment));
	worker.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the uldp budget worker for %s", functions),
				 errhint("Raise max_worker_processes (each release briefly needs one background worker slot).")));
	if (WaitForBackgroundWorkerShutdown(handle) == BGWH_POSTMASTER_DIED)
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("postmaster exited while uldp was charging the privacy budget")));

	memcpy(&outcome, request, offsetof(ChargeRequest, statement));
	dsm_detach(segment);

	switch (outcome.status)
	{
		case CHARGE_OK:
			return;
		case CHARGE_NO_BUDGET:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("role \"%s\" has no privacy budget", role),
					 errhint("An administrator can grant one with SELECT uldp.set_budget('%s', epsilon, delta).",
							 role)));
			break;
		case CHARGE_OVER_BUDGET:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("%s with epsilon %g and delta %g exceeds the privacy budget of role \"%s\"",
							functions, epsilon, delta, role),
					 errdetail("Remaining budget: epsilon %s, delta %s.",
							   outcome.epsilon_remaining, outcome.delta_remaining),
					 errhint("Use a smaller epsilon, or ask an administrator to raise the budget with uldp.set_budget.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not charge the privacy budget for %s: %s", functions,
							outcome.message[0] ? outcome.message : "the budget worker exited early"),
					 errhint("Check that the uldp extension is installed in this database and see the server log.")));
	}
}

static void
record_charge(ChargeRequest *request)
{
	Oid			argtypes[5] = {NAMEOID, TEXTOID, FLOAT8OID, FLOAT8OID, TEXTOID};
	Datum		args[5];
	char	   *status;

	args[0] = DirectFunctionCall1(namein, CStringGetDatum(request->role));
	args[1] = CStringGetTextDatum(request->functions);
	args[2] = Float8GetDatum(request->epsilon);
	args[3] = Float8GetDatum(request->delta);
	args[4] = CStringGetTextDatum(request->statement);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT status, epsilon_remaining::text, delta_remaining::text "
							  "FROM uldp._charge($1, $2, $3, $4, $5)",
							  5, argtypes, args, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "uldp._charge did not return a status");

	status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (strcmp(status, "ok") == 0)
		request->status = CHARGE_OK;
	else if (strcmp(status, "no_budget") == 0)
		request->status = CHARGE_NO_BUDGET;
	else
	{
		request->status = CHARGE_OVER_BUDGET;
		strlcpy(request->epsilon_remaining,
				SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2), 64);
		strlcpy(request->delta_remaining,
				SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3), 64);
	}
	SPI_finish();
}

/*
 * Entry point of the budget worker.  The status is published only after the
 * commit has been flushed, so the releasing backend never releases on the
 * strength of a charge that could still be lost.
 */
void
uldp_charge_worker_main(Datum main_arg)
{
	dsm_segment *segment;
	ChargeRequest *request;
	ChargeStatus status;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	CurrentResourceOwner = ResourceOwnerCreate(NULL, "uldp budget charge");
	segment = dsm_attach(DatumGetUInt32(main_arg));
	if (segment == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uldp budget worker could not attach to its request")));
	request = dsm_segment_address(segment);

	BackgroundWorkerInitializeConnectionByOid(request->database, BOOTSTRAP_SUPERUSERID, 0);
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	/* a caller holding the budget row would otherwise wait for us forever */
	SetConfigOption("lock_timeout", "10s", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);
	/* the ledger is written even where sessions default to read-only */
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);

	PG_TRY();
	{
		/* the outcome is published only after the commit */
		ChargeRequest *scratch = palloc(offsetof(ChargeRequest, statement) +
										strlen(request->statement) + 1);

		memcpy(scratch, request, offsetof(ChargeRequest, statement) + strlen(request->statement) + 1);
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		record_charge(scratch);
		PopActiveSnapshot();
		CommitTransactionCommand();

		status = scratch->status;
		memcpy(request->epsilon_remaining, scratch->epsilon_remaining, 64);
		memcpy(request->delta_remaining, scratch->delta_remaining, 64);
		request->status = status;
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(TopMemoryContext);
		error = CopyErrorData();
		strlcpy(request->message, error->message, sizeof(request->message));
		request->status = CHARGE_FAILED;
		PG_RE_THROW();
	}
	PG_END_TRY();

	dsm_detach(segment);
	proc_exit(0);
}

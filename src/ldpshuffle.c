/*-------------------------------------------------------------------------
 *
 * ldpshuffle.c
 *	  uldp.shuffle_epsilon: the central (epsilon, delta) that n shuffled
 *	  epsilon0-LDP reports amount to (Feldman, McMillan and Talwar 2021,
 *	  computed by the client library's uldp_local_shuffle_epsilon), so that
 *	  a DBA can compare the local and central models.  It reads no data.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "local/uldp_local.h"

PG_FUNCTION_INFO_V1(uldp_shuffle_epsilon);

/* uldp.shuffle_epsilon(epsilon0 float8, n bigint, delta float8) RETURNS float8 */
Datum
uldp_shuffle_epsilon(PG_FUNCTION_ARGS)
{
	double		epsilon0 = PG_GETARG_FLOAT8(0);
	int64		n = PG_GETARG_INT64(1);
	double		delta = PG_GETARG_FLOAT8(2);

	if (!(epsilon0 > 0 && isfinite(epsilon0)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon0 must be a positive finite number"),
				 errhint("Pass the epsilon of each report, e.g. 1.0.")));
	if (n <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be positive"),
				 errhint("Pass the number of reports that are shuffled together.")));
	if (!(delta > 0 && delta < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must lie strictly between 0 and 1"),
				 errhint("Pass the delta of the central guarantee, e.g. 1e-6.")));
	PG_RETURN_FLOAT8(uldp_local_shuffle_epsilon(epsilon0, (double) n, delta));
}

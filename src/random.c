/*-------------------------------------------------------------------------
 *
 * random.c
 *	  Random bits: the source of the extension and of the exact samplers in
 *	  src/local/exactnoise.c (host.h).
 *
 * Production randomness comes from pg_strong_random() (OpenSSL or
 * /dev/urandom), buffered per backend.  The buffer remembers the process id
 * that filled it, so bytes drawn before a fork (for example by a library
 * preloaded into the postmaster) are never reused by a child.
 *
 * The seeded mode (uldp.test_seed <> 0, PGC_SUSET) replaces the source by
 * xoshiro256** seeded through splitmix64 (src/local/xoshiro.c, which also
 * draws the local rounds' public rotations), so that regression tests have
 * exact expected outputs.  Setting the parameter restarts the stream.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "local/xoshiro.h"
#include "random.h"

int			uldp_test_seed = 0;

#define STRONG_BUFFER_SIZE 512

static uint8 strong_buffer[STRONG_BUFFER_SIZE];
static int	strong_used = STRONG_BUFFER_SIZE;
static int	strong_owner_pid = 0;

static UldpXoshiro test_state;
static bool test_state_ready = false;

void
uldp_test_seed_assign(int newval, void *extra)
{
	test_state_ready = false;
}

static uint64
test_stream_next(void)
{
	if (!test_state_ready)
	{
		uldp_xoshiro_seed(&test_state, (uint64) uldp_test_seed);
		test_state_ready = true;
	}
	return uldp_xoshiro_next(&test_state);
}

uint64
uldp_random_u64(void)
{
	uint64		result;

	if (uldp_test_seed != 0)
		return test_stream_next();

	if (strong_owner_pid != MyProcPid || strong_used + sizeof(uint64) > STRONG_BUFFER_SIZE)
	{
		if (!pg_strong_random(strong_buffer, STRONG_BUFFER_SIZE))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate secure random numbers"),
					 errhint("Check that the operating system's random source is available to the server.")));
		strong_owner_pid = MyProcPid;
		strong_used = 0;
	}
	memcpy(&result, strong_buffer + strong_used, sizeof(uint64));
	/* consumed bytes are wiped so a memory dump cannot replay them */
	memset(strong_buffer + strong_used, 0, sizeof(uint64));
	strong_used += sizeof(uint64);
	return result;
}

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
 * xoshiro256** seeded through splitmix64, so that regression tests have
 * exact expected outputs.  Setting the parameter restarts the stream.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "random.h"

int			uldp_test_seed = 0;

#define STRONG_BUFFER_SIZE 512

static uint8 strong_buffer[STRONG_BUFFER_SIZE];
static int	strong_used = STRONG_BUFFER_SIZE;
static int	strong_owner_pid = 0;

static uint64 test_state[4];
static bool test_state_ready = false;

void
uldp_test_seed_assign(int newval, void *extra)
{
	test_state_ready = false;
}

static uint64
splitmix64(uint64 *x)
{
	uint64		z = (*x += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64
rotl(uint64 x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64
test_stream_next(void)
{
	uint64		result;
	uint64		t;

	if (!test_state_ready)
	{
		uint64		seed = (uint64) uldp_test_seed;

		for (int i = 0; i < 4; i++)
			test_state[i] = splitmix64(&seed);
		test_state_ready = true;
	}
	result = rotl(test_state[1] * 5, 7) * 9;
	t = test_state[1] << 17;
	test_state[2] ^= test_state[0];
	test_state[3] ^= test_state[1];
	test_state[1] ^= test_state[2];
	test_state[0] ^= test_state[3];
	test_state[2] ^= t;
	test_state[3] = rotl(test_state[3], 45);
	return result;
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

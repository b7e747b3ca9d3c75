/*-------------------------------------------------------------------------
 *
 * siphash.c
 *	  SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 *	  PRF", 2012): a pseudorandom function of short messages under a 128-bit
 *	  key.  Grouped releases use it, under a key drawn for every run, to give
 *	  each (user, group) pair a value that the rows cannot predict
 *	  (groupbound.c).  Checked against the paper's reference vectors.
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "siphash.h"

/* SipHash-2-4 (Aumasson and Bernstein) of "data" under "key" */
#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND \
	do { \
		v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32); \
		v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32); \
	} while (0)

uint64
uldp_siphash24(const uint64 key[2], const void *message, size_t len)
{
	const unsigned char *data = message;
	uint64		v0 = key[0] ^ UINT64CONST(0x736f6d6570736575);
	uint64		v1 = key[1] ^ UINT64CONST(0x646f72616e646f6d);
	uint64		v2 = key[0] ^ UINT64CONST(0x6c7967656e657261);
	uint64		v3 = key[1] ^ UINT64CONST(0x7465646279746573);
	uint64		last = (uint64) len << 56;
	size_t		full = len - len % 8;

	for (size_t i = 0; i < full; i += 8)
	{
		uint64		m;

		/* the message is read as little-endian words */
#ifdef WORDS_BIGENDIAN
		m = 0;
		for (int b = 0; b < 8; b++)
			m |= (uint64) data[i + b] << (8 * b);
#else
		memcpy(&m, data + i, sizeof(m));
#endif
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t b = 0; b < len % 8; b++)
		last |= (uint64) data[full + b] << (8 * b);
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}


/*
 * Checks the implementation against the reference vectors of the paper
 * (appendix A, and the first of its vectors.h): key 00 01 ... 0f, messages of
 * 15 bytes 00 01 ... 0e and of no byte.
 */
bool
uldp_siphash24_selftest(void)
{
	unsigned char bytes[16];
	uint64		key[2];

	for (int i = 0; i < 16; i++)
		bytes[i] = (unsigned char) i;
	key[0] = key[1] = 0;
	for (int i = 0; i < 8; i++)
	{
		key[0] |= (uint64) bytes[i] << (8 * i);
		key[1] |= (uint64) bytes[8 + i] << (8 * i);
	}
	return uldp_siphash24(key, bytes, 15) == UINT64CONST(0xa129ca6149be45e5) &&
		uldp_siphash24(key, bytes, 0) == UINT64CONST(0x726fdb47dd0e0e31);
}

/*-------------------------------------------------------------------------
 *
 * fixedsum.c
 *	  The fixed-point sum of clipped user values that user_dp_mean and
 *	  user_dp_sum add noise to, and the form in which a shard sends its
 *	  part of it.
 *
 * The sum is exact (integers), so parts computed apart add up to the sum
 * of the whole: a shard whose users are its own (shard/shardstate.c)
 * sends its users and its part, and the coordinator adds the parts and
 * releases as over local rows (release.c), with the same noise.  Compiled
 * into uldp and uldp_shard; it needs nothing of the server but palloc.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fixedsum.h"
#include "wire.h"

/* the grid has 2^GRID_BITS steps per half-width */
#define GRID_BITS 40

/* What a shard sends: this header, nothing else. */
typedef struct SumsWire
{
	uint32		magic;			/* ULDP_SUMS_MAGIC */
	uint16		version;		/* ULDP_SUMS_VERSION */
	bool		average;
	bool		key_byval;
	int16		key_typlen;
	int64		users;
	double		lower;
	double		upper;
	double		centre;
	double		grid;
	int64		steps;
	uint64		sum_low;		/* the int128 sum, in two halves */
	int64		sum_high;
} SumsWire;

/* The centre of the sum of a mean with public bounds: their middle. */
double
uldp_bounds_centre(double lower, double upper)
{
	return lower / 2 + upper / 2;
}

/* An empty sum over [lower, upper] around centre, which lies within. */
UldpFixedSum
uldp_fixed_sum_empty(double lower, double upper, double centre)
{
	UldpFixedSum result = {lower, upper, centre, 0, 0, 0};
	double		half_width = Max(upper - centre, centre - lower);

	/* at least one step, however narrow the interval */
	half_width = Max(half_width, ldexp(1.0, -1000));
	result.grid = ldexp(1.0, ilogb(half_width) - GRID_BITS);
	result.steps = (int64) ceil(half_width / result.grid);
	return result;
}

/*
 * The empty sum of a release with public bounds: a mean's values around the
 * bounds' middle; a sum's around 0, over the bounds widened to hold 0
 * (release.c says why).
 */
UldpFixedSum
uldp_fixed_sum_public(double lower, double upper, bool average)
{
	if (average)
		return uldp_fixed_sum_empty(lower, upper, uldp_bounds_centre(lower, upper));
	return uldp_fixed_sum_empty(Min(lower, 0), Max(upper, 0), 0);
}

void
uldp_fixed_sum_add(UldpFixedSum *sum, double value)
{
	double		clipped = Min(Max(value, sum->lower), sum->upper);
	int64		step = (int64) rint((clipped - sum->centre) / sum->grid);

	sum->sum += Min(Max(step, -sum->steps), sum->steps);
}

/* Do two sums clip and count their values alike? */
bool
uldp_fixed_sum_same_grid(const UldpFixedSum *a, const UldpFixedSum *b)
{
	return a->lower == b->lower && a->upper == b->upper && a->centre == b->centre &&
		a->grid == b->grid && a->steps == b->steps;
}

bytea *
uldp_partition_sums_to_bytea(const UldpPartitionSums *sums)
{
	bytea	   *result = palloc0(VARHDRSZ + sizeof(SumsWire));
	SumsWire	wire;

	memset(&wire, 0, sizeof(wire));
	wire.magic = ULDP_SUMS_MAGIC;
	wire.version = ULDP_SUMS_VERSION;
	wire.average = sums->average;
	wire.key_byval = sums->key_byval;
	wire.key_typlen = sums->key_typlen;
	wire.users = sums->users;
	wire.lower = sums->sum.lower;
	wire.upper = sums->sum.upper;
	wire.centre = sums->sum.centre;
	wire.grid = sums->sum.grid;
	wire.steps = sums->sum.steps;
	wire.sum_low = (uint64) sums->sum.sum;
	wire.sum_high = (int64) (sums->sum.sum >> 64);
	SET_VARSIZE(result, VARHDRSZ + sizeof(SumsWire));
	memcpy(VARDATA(result), &wire, sizeof(wire));
	return result;
}

/*
 * Reads a partition's sums; false if value is not sums at all (another
 * kind of state).  Sums of another version or size are refused.
 */
bool
uldp_partition_sums_from_bytea(bytea *value, UldpPartitionSums *sums)
{
	SumsWire	wire;

	if (!uldp_wire_header(value, ULDP_SUMS_MAGIC, &wire, sizeof(wire)))
		return false;
	if (VARSIZE_ANY_EXHDR(value) != sizeof(wire) ||
		wire.version != ULDP_SUMS_VERSION || wire.users < 0 || wire.steps < 0 ||
		!(wire.lower <= wire.upper))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("not a partition's sums of uldp_shard version %d", ULDP_SUMS_VERSION),
				 errhint("Install the same uldp_shard version on every shard, on machines of the coordinator's architecture.")));
	sums->average = wire.average;
	sums->key_byval = wire.key_byval;
	sums->key_typlen = wire.key_typlen;
	sums->users = wire.users;
	sums->sum.lower = wire.lower;
	sums->sum.upper = wire.upper;
	sums->sum.centre = wire.centre;
	sums->sum.grid = wire.grid;
	sums->sum.steps = wire.steps;
	sums->sum.sum = ((int128) wire.sum_high << 64) | (int128) wire.sum_low;
	return true;
}

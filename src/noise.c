/*-------------------------------------------------------------------------
 *
 * noise.c
 *	  The exponential mechanism, and the server's entry to the exact
 *	  discrete Gaussian sampler.
 *
 * The discrete Laplace and Gaussian samplers live in src/local/exactnoise.c,
 * free of PostgreSQL so that the client library draws its local reports'
 * noise with the same code.  Here the Gaussian refuses variances outside
 * its exact range with a PostgreSQL error.
 *
 * Exponential mechanism.  uldp_exponential_select() selects one integer of
 * a domain of up to 2^64 candidates, cut into segments of candidates that
 * share a score (from the data, sensitivity 1) and a prior weight (not from
 * the data), with probability proportional to prior * exp(-epsilon * score).
 * A segment is selected with probability proportional to length * prior *
 * weight and a candidate uniformly inside it.  Cost is linear in the number
 * of segments, whatever the domain size.  The median (score
 * max(#{keys < b}, #{keys > b})) has at most 2n + 1 segments for n users,
 * of which it weighs only those near the middle (uldp_exponential_median).
 *
 * The selection is exact for weights 2^-y_u, where y_u is the segment's
 * negated log2-weight relative to the heaviest segment's, computed in 80-bit extended precision: a proposal proportional to
 * 2^-min(p_u, 90) is drawn with exact 128-bit integer arithmetic and
 * accepted with probability 2^-(y_u - that exponent), itself an exact dyadic
 * Bernoulli trial plus fair coins.  Any integer p_u <= y_u would do; it is
 * floor(y_u) but for an error margin, from log2-weights in double precision
 * (the 80-bit logarithm of every segment's length, twice, was most of the
 * time of a median over a million users; y_u is computed exactly only for
 * the proposals, and the heaviest weight only among near-heaviest ones).  Nothing overflows or underflows, however small a weight.
 * The only inexact step is y_u.  With |score| <= 2^34, priors in [-256, 0] and
 * epsilon >= 2^-29 (every release's share is above 1e-8), its absolute
 * error is below epsilon * 2^-27 in log2 units for every possible input;
 * the prior's part is computed identically for neighbouring inputs, and
 * the error changes any probability ratio by at most a factor 2^(4 error),
 * so the mechanism runs with epsilon * (1 - 2^-24), which keeps it
 * epsilon-DP.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "noise.h"
#include "params.h"
#include "random.h"

/*
 * Discrete Gaussian noise of variance parameter sigma2 (exactnoise.c).
 * Every variance a release can request lies in the sampler's range
 * (doc/privacy.md); outside it the sampler refuses rather than clamp, since
 * a clamped variance would no longer be the one the release accounts for.
 */
int128
uldp_gaussian_noise(double sigma2)
{
	if (!uldp_discrete_gaussian_supports(sigma2))
		elog(ERROR, "discrete Gaussian variance %g is outside the sampler's range", sigma2);
	return uldp_discrete_gaussian(sigma2);
}

/* shrinks epsilon to absorb the rounding of the log-weights (see above) */
#define EM_EPSILON_SLACK (1.0L - 0x1p-24L)
/*
 * proposal exponents are capped so that the total proposal weight, at most
 * 2^36 segments of at most 2^EM_PROPOSAL_BITS, fits in 128 bits
 */
#define EM_PROPOSAL_BITS 90

/*
 * A segment's log2-weight, in extended precision when "exact", otherwise
 * with the length's log2 in double precision (absolute error below 2^-40,
 * and four times faster): the proposal needs no more (see
 * uldp_exponential_select).
 */
static inline long double
log2_weight(const UldpSegment *segment, long double log2_per_score, bool exact)
{
	long double log2_length = segment->length == 1 ? 0 :
		exact ? log2l((long double) segment->length) : log2((double) segment->length);

	return log2_length + segment->prior_log2 - log2_per_score * segment->score;
}

/* more than the approximate log2-weights' error */
#define EM_APPROXIMATION_MARGIN 0x1p-30L

/* Exact Bernoulli(p) for a long double p in (0, 1]. */
static bool
bernoulli_long_double(long double p)
{
	int			exponent;
	long double mantissa = frexpl(p, &exponent);	/* p = mantissa * 2^exponent */

	if (p >= 1)
		return true;
	/* p < 2^exponent: the first -exponent bits of a uniform must be zero */
	for (int zeros = -exponent; zeros > 0; zeros -= 64)
	{
		uint64		bits = uldp_random_u64();

		if (zeros < 64)
			bits &= (UINT64CONST(1) << zeros) - 1;
		if (bits != 0)
			return false;
	}
	/* then the next 64 bits must fall below the 64-bit mantissa */
	return uldp_random_u64() < (uint64) ldexpl(mantissa, 64);
}

/* true with probability 2^-count */
static bool
fair_coins_all_heads(uint64 count)
{
	for (; count > 0; count -= Min(count, 64))
	{
		uint64		bits = uldp_random_u64();

		if (count < 64)
			bits &= (UINT64CONST(1) << count) - 1;
		if (bits != 0)
			return false;
	}
	return true;
}

/*
 * The segments of a selection: "window", between "before" segments ahead
 * of it and "after" segments behind it, all of whose y_u are known to be
 * at least EM_PROPOSAL_BITS, however the heaviest segment of the window
 * weighs (so that their proposal weight is one unit each, as the full
 * walk would find).  "all" walks them all, for a proposal among them.
 */
typedef struct SegmentWindow
{
	const UldpSegmentSource *window;
	int64		before;
	int64		after;
	const UldpSegmentSource *all;
} SegmentWindow;

/* The segment at "index" of a source's walk. */
static void
walk_to(const UldpSegmentSource *source, int64 index, UldpSegment *segment)
{
	source->start(source->walk);
	for (int64 i = 0; i <= index; i++)
		source->next(source->walk, segment);
}

static uint64
select_in_window(const SegmentWindow *segments, double epsilon)
{
	const UldpSegmentSource *source = segments->window;
	long double log2_per_score = (long double) epsilon * EM_EPSILON_SLACK * M_LOG2El;
	long double approximate_max = -INFINITY;
	long double max_log2_weight = -INFINITY;
	uint8	   *proposal_exponents = palloc_extended(Max(source->max_segments, 1), MCXT_ALLOC_HUGE);
	int64		nsegments = 0;
	uint128		window_total = 0;
	uint128		total;
	UldpSegment segment;

	/*
	 * The weights are taken relative to the heaviest, whose exact log2-weight
	 * is found among the segments whose approximate one is near the
	 * approximate maximum; each proposal exponent is at most the floor of
	 * its segment's exact y_u, as the acceptance step requires, however the
	 * approximate log2-weights err (by less than the margin).
	 */
	source->start(source->walk);
	while (source->next(source->walk, &segment))
		approximate_max = Max(approximate_max, log2_weight(&segment, log2_per_score, false));

	source->start(source->walk);
	while (source->next(source->walk, &segment))
	{
		long double approximate = log2_weight(&segment, log2_per_score, false);
		long double lower = approximate_max - approximate - 2 * EM_APPROXIMATION_MARGIN;
		uint64		whole = lower > 0 ? (uint64) floorl(lower) : 0;
		int			exponent = (int) Min(whole, EM_PROPOSAL_BITS);

		if (approximate >= approximate_max - EM_APPROXIMATION_MARGIN)
			max_log2_weight = Max(max_log2_weight,
								  log2_weight(&segment, log2_per_score, true));
		Assert(nsegments < source->max_segments);
		proposal_exponents[nsegments++] = exponent;
		window_total += ((uint128) 1) << (EM_PROPOSAL_BITS - exponent);
	}
	total = window_total + (uint128) segments->before + (uint128) segments->after;

	for (;;)
	{
		uint128		target = uldp_uniform_u128(total);
		int			exponent = EM_PROPOSAL_BITS;
		long double gap;
		long double whole;

		/* the first segment whose cumulative proposal weight exceeds the target */
		if (target < (uint128) segments->before)
			walk_to(segments->all, (int64) target, &segment);
		else if (target - segments->before >= window_total)
			walk_to(segments->all, (int64) (target - window_total) + nsegments, &segment);
		else
		{
			uint128		cumulative = segments->before;
			int64		chosen = 0;

			for (;; chosen++)
			{
				cumulative += ((uint128) 1) << (EM_PROPOSAL_BITS - proposal_exponents[chosen]);
				if (cumulative > target)
					break;
			}
			walk_to(source, chosen, &segment);
			exponent = proposal_exponents[chosen];
		}

		gap = max_log2_weight - log2_weight(&segment, log2_per_score, true);
		whole = floorl(gap);
		Assert(whole >= exponent);
		if (bernoulli_long_double(exp2l(-(gap - whole))) &&
			fair_coins_all_heads((uint64) whole - exponent))
			break;
	}
	pfree(proposal_exponents);
	return segment.start + uldp_uniform_u64(segment.length);
}

/*
 * Selects one candidate of the source's segments with probability
 * proportional to 2^prior_log2 exp(-epsilon score).  The caller guarantees
 * that the scores have sensitivity 1 (and says, by its epsilon, whether they
 * are monotone), that |score| <= 2^34 and that the priors, which must not
 * depend on the data, lie in [-ULDP_EM_MAX_PRIOR_BITS, 0].
 */
uint64
uldp_exponential_select(const UldpSegmentSource *source, double epsilon)
{
	SegmentWindow segments = {source, 0, 0, source};

	return select_in_window(&segments, epsilon);
}

static uint64
walk_key(const UldpKeyWalk *walk, int64 i)
{
	return *(const uint64 *) (walk->keys + i * walk->stride);
}

static uint128
walk_weight(const UldpKeyWalk *walk, int64 i)
{
	return walk->weights == NULL ? 1 :
		(uint64) *(const double *) (walk->weights + i * walk->stride);
}

static void
key_walk_start(void *arg)
{
	UldpKeyWalk *walk = (UldpKeyWalk *) arg;

	walk->next = 0;
	walk->below = walk->start_below;
	walk->position = walk->start_position;
	walk->at_key = false;
}

/*
 * Segments are recomputed rather than stored, so the mechanism needs one
 * byte per segment whatever the number of entries.
 */
static bool
key_walk_next(void *arg, UldpSegment *segment)
{
	UldpKeyWalk *walk = (UldpKeyWalk *) arg;
	uint64		key;
	uint128		weight = 0;

	segment->prior_log2 = 0;
	if (walk->next >= walk->n)
	{
		if (walk->position >= walk->domain)
			return false;
		segment->start = walk->position;
		segment->length = walk->domain - walk->position;
		segment->score = walk->score(walk->below, 0, walk->total, walk->score_arg);
		walk->position = walk->domain;
		return true;
	}
	key = walk_key(walk, walk->next);
	if (!walk->at_key)
	{
		walk->at_key = true;
		if (key > walk->position)
		{
			segment->start = walk->position;
			segment->length = key - walk->position;
			segment->score = walk->score(walk->below, 0, walk->total, walk->score_arg);
			return true;
		}
	}
	while (walk->next < walk->n && walk_key(walk, walk->next) == key)
		weight += walk_weight(walk, walk->next++);
	segment->start = key;
	segment->length = 1;
	segment->score = walk->score(walk->below, weight, walk->total, walk->score_arg);
	walk->below += weight;
	walk->position = key + 1;
	walk->at_key = false;
	return true;
}

/*
 * The segments of walk's keys, which must be sorted; fills in the walk's
 * total weight.
 */
UldpSegmentSource
uldp_key_walk_source(UldpKeyWalk *walk)
{
	UldpSegmentSource source = {key_walk_start, key_walk_next, walk, 2 * walk->n + 1};

	walk->total = 0;
	for (int64 i = 0; i < walk->n; i++)
		walk->total += walk_weight(walk, i);
	return source;
}

static void
candidate_walk_start(void *arg)
{
	((UldpCandidateWalk *) arg)->next = 0;
}

static bool
candidate_walk_next(void *arg, UldpSegment *segment)
{
	UldpCandidateWalk *walk = (UldpCandidateWalk *) arg;
	int64		j = walk->next;

	if (j >= walk->count)
		return false;
	segment->start = j;
	segment->length = 1;
	segment->score = walk->scores[j];
	segment->prior_log2 = walk->prior_log2_step * j;
	walk->next++;
	return true;
}

/* The segments of walk's candidates. */
UldpSegmentSource
uldp_candidate_walk_source(UldpCandidateWalk *walk)
{
	UldpSegmentSource source = {candidate_walk_start, candidate_walk_next, walk, walk->count};

	return source;
}

/* A candidate's median score: max(#{keys < b}, #{keys > b}) */
static long double
median_score(uint128 below, uint128 at, uint128 total, const void *arg)
{
	return (long double) (uint64) Max(below, total - below - at);
}

/*
 * The number of segments a walk of unit weights makes of keys[from, to),
 * starting at candidate "position", with the gap up to "end" after the
 * last key.
 */
static int64
count_segments(const uint64 *keys, int64 from, int64 to, uint64 position, uint64 end)
{
	int64		count;

	if (from >= to)
		return end > position;
	count = (keys[from] > position) + 1;
	position = keys[from] + 1;
	/*
	 * After the first key, position is the previous key + 1: a repeated key
	 * (position - 1) adds nothing, a new one itself and, past position, the
	 * gap before it.  No branch on the keys.
	 */
	for (int64 i = from + 1; i < to; i++)
	{
		count += (keys[i] >= position) + (keys[i] > position);
		position = keys[i] + 1;
	}
	return count + (end > position);
}

/*
 * The median of sorted keys of weight one: the exponential mechanism with
 * score max(#{keys < b}, #{keys > b}).
 *
 * Only the segments within W ranks of the middle are walked one by one.
 * The segment holding the middle rank scores at most n / 2 with a length of
 * at least one, so the heaviest weighs at least 2^(-c n / 2) (c: log2 of
 * the weight per unit of score); a segment scoring n / 2 + W or more weighs
 * at most 2^(64 - c (n / 2 + W)), so its y_u is at least c W - 64, which W
 * makes at least EM_PROPOSAL_BITS + 2: its proposal weight is one unit, as
 * the full walk would find, and only their number is needed.  The keys
 * before the window (ranks below n / 2 - W) and after it (ranks from
 * n / 2 + W) score that much, so the selection is the one of the full
 * walk, with the same draws, at the cost of the window (a few thousand
 * segments for a release over a million users).
 */
uint64
uldp_exponential_median(const uint64 *sorted_keys, int64 n, uint64 domain,
						double epsilon)
{
	long double log2_per_score = (long double) epsilon * EM_EPSILON_SLACK * M_LOG2El;
	long double window = ceill((EM_PROPOSAL_BITS + 64 + 2) / log2_per_score);
	int64		lo = 0;
	int64		hi = n;
	UldpKeyWalk all = {(const char *) sorted_keys, NULL, sizeof(uint64), n, domain,
	median_score, NULL};
	UldpSegmentSource all_source = uldp_key_walk_source(&all);
	UldpKeyWalk part = all;
	UldpSegmentSource part_source;
	SegmentWindow segments = {&all_source, 0, 0, &all_source};

	/*
	 * Adding one user raises every score by 0 or 1 and lowers none: the
	 * scores are monotone with sensitivity 1, so exp(-epsilon * score) gives
	 * epsilon-DP (McSherry and Talwar 2007, monotone case).
	 */
	if (window < n / 2.0L)
	{
		lo = (int64) floorl(n / 2.0L - window);
		hi = (int64) ceill(n / 2.0L + window);
		/* a run of equal keys is one segment: keep it whole in the window */
		while (lo > 0 && sorted_keys[lo - 1] == sorted_keys[lo])
			lo--;
		while (hi < n && sorted_keys[hi] == sorted_keys[hi - 1])
			hi++;
	}
	if (lo == 0 && hi == n)
		return select_in_window(&segments, epsilon);

	part.keys = (const char *) (sorted_keys + lo);
	part.n = hi - lo;
	part.start_below = lo;
	part.start_position = lo > 0 ? sorted_keys[lo - 1] + 1 : 0;
	part.domain = hi < n ? sorted_keys[hi - 1] + 1 : domain;
	part_source = uldp_key_walk_source(&part);
	part.total = n;
	segments.window = &part_source;
	segments.before = count_segments(sorted_keys, 0, lo, 0, 0);
	segments.after = hi < n ?
		count_segments(sorted_keys, hi, n, sorted_keys[hi - 1] + 1, domain) : 0;
	return select_in_window(&segments, epsilon);
}

PG_FUNCTION_INFO_V1(uldp_sample_discrete_laplace);

/*
 * uldp._sample_discrete_laplace(sensitivity, epsilon, n): n draws of the
 * noise that a release adds, for the statistical tests of the sampler.  It
 * reads no data, so it releases nothing; it is revoked from PUBLIC all the
 * same, because a caller able to set uldp.test_seed could otherwise learn
 * the stream.
 */
Datum
uldp_sample_discrete_laplace(PG_FUNCTION_ARGS)
{
	int64		sensitivity = PG_GETARG_INT64(0);
	double		epsilon = PG_GETARG_FLOAT8(1);
	int32		n = PG_GETARG_INT32(2);
	ArrayType  *result;
	Datum	   *draws;

	if (sensitivity < 1 || sensitivity > (INT64CONST(1) << 41) ||
		!(epsilon >= ULDP_MIN_EPSILON / 8 && epsilon <= ULDP_MAX_EPSILON) ||
		n < 0 || n > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid arguments for uldp._sample_discrete_laplace"),
				 errhint("sensitivity in [1, 2^41], epsilon in [1.25e-7, 1e6], n in [0, 1e8].")));
	draws = palloc_extended(Max(n, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int32 i = 0; i < n; i++)
		draws[i] = Int64GetDatum((int64) uldp_discrete_laplace(sensitivity, epsilon));
	result = construct_array(draws, n, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
	PG_RETURN_ARRAYTYPE_P(result);
}

PG_FUNCTION_INFO_V1(uldp_sample_discrete_gaussian);

/*
 * uldp._sample_discrete_gaussian(sigma2, n): n draws of the discrete
 * Gaussian noise of the vector releases, for the statistical tests; like
 * the Laplace sampler, it reads no data and is revoked from PUBLIC.
 */
Datum
uldp_sample_discrete_gaussian(PG_FUNCTION_ARGS)
{
	double		sigma2 = PG_GETARG_FLOAT8(0);
	int32		n = PG_GETARG_INT32(1);
	ArrayType  *result;
	Datum	   *draws;

	if (!uldp_discrete_gaussian_supports(sigma2) || n < 0 || n > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid arguments for uldp._sample_discrete_gaussian"),
				 errhint("sigma2 in [2^-64, 2^60], n in [0, 1e8].")));
	draws = palloc_extended(Max(n, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int32 i = 0; i < n; i++)
		draws[i] = Int64GetDatum((int64) uldp_discrete_gaussian(sigma2));
	result = construct_array(draws, n, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*-------------------------------------------------------------------------
 *
 * uldp_local.h
 *	  The uldp client library: user-level local differential privacy after
 *	  Girgis, Data and Diggavi, "Distributed User-Level Private Mean
 *	  Estimation".  Each user turns all of their samples into one report
 *	  that is epsilon-LDP (or (epsilon, delta)-LDP) with respect to the
 *	  whole sample set; an untrusted server only ever sees reports.
 *
 * This header and everything under src/local/ include no PostgreSQL
 * header: the same code is linked into the extension (uldp.ldp_report,
 * the server's decoding) and into libuldp_local.a and the uldp-local
 * command-line tool.  The host provides randomness and memory
 * (src/local/host.h).
 *
 * Rounds and reports travel as JSON objects, format version
 * ULDP_LOCAL_FORMAT ("v"); doc/local.md documents every field.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_H
#define ULDP_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the "v" of every round and report this library reads and writes */
#define ULDP_LOCAL_FORMAT 1

/* largest Hadamard response size K (bins padded to a power of two) */
#define ULDP_LOCAL_MAX_BINS (1 << 24)
/* largest dimension of a vector round (before padding) */
#define ULDP_LOCAL_MAX_DIMENSION 65536
/* levels of the grid a mean report is rounded to, across [lower, upper] */
#define ULDP_LOCAL_GRID_LEVELS 1048576
/* reports' levels lie within +-ULDP_LOCAL_MAX_LEVEL (noise included) */
#define ULDP_LOCAL_MAX_LEVEL (INT64_C(1) << 62)
/*
 * the largest bound, tau, clip or feature_radius of a round, and the largest
 * magnitude of an interval's ends: with levels within +-2^62 and epsilon at
 * least 1e-6, every value, variance and sum the decoding computes stays
 * below 2^1000, so results are finite for every round and every report
 */
#define ULDP_LOCAL_MAX_MAGNITUDE 0x1p400
/* room for any error message or hint */
#define ULDP_LOCAL_ERROR_SIZE 256
/* a report's JSON fits in this many bytes */
#define ULDP_LOCAL_REPORT_SIZE 160

typedef enum UldpLocalKind
{
	ULDP_LOCAL_RANGE,			/* Algorithms 3-4: heavy-hitter bin of the mean */
	ULDP_LOCAL_MEAN,			/* Algorithm 2: projected mean plus noise */
	ULDP_LOCAL_VECTOR_RANGE,	/* Algorithm 5, range step, rotated coordinates */
	ULDP_LOCAL_VECTOR_MEAN,		/* Algorithm 5, mean step */
	ULDP_LOCAL_GRADIENT			/* Algorithm 6: vector mean of clipped gradients */
} UldpLocalKind;

typedef enum UldpLocalNoise
{
	ULDP_LOCAL_LAPLACE,			/* discrete Laplace: pure epsilon-LDP */
	ULDP_LOCAL_GAUSSIAN			/* discrete Gaussian: (epsilon, delta)-LDP */
} UldpLocalNoise;

typedef enum UldpLocalLoss
{
	ULDP_LOCAL_NO_MODEL,		/* the summary is the mean of the samples */
	ULDP_LOCAL_SQUARED,			/* the summary is the mean clipped gradient */
	ULDP_LOCAL_LOGISTIC
} UldpLocalLoss;

/*
 * A round's public parameters, as parsed and checked by
 * uldp_local_round_parse (which also derives the fields marked "derived").
 * Arrays are allocated with the host's allocator; uldp_local_round_free
 * releases them.
 */
typedef struct UldpLocalRound
{
	int64_t		id;
	UldpLocalKind kind;
	double		epsilon;		/* of one report */
	double		delta;			/* 0: pure */
	int			dimension;		/* entries of the summary vector: 1 for
								 * scalars, features + 1 for gradients */
	int			padded;			/* derived: power of two >= dimension */
	int			row_width;		/* derived: numbers per sample */
	/* range kinds */
	double		bound;			/* scalars: samples clipped to [-bound,
								 * bound]; vectors: to the l2 ball */
	double		tau;			/* bins are 2 tau wide */
	int64_t		bins;			/* derived: k = ceil(bound / tau) */
	int64_t		hadamard_size;	/* derived: K, power of two >= bins */
	/* mean kinds: one interval per (rotated, padded) coordinate */
	double	   *lower;
	double	   *upper;
	UldpLocalNoise noise;		/* derived when the round leaves it open */
	double		noise_scale;	/* derived, in levels: Laplace b or Gaussian
								 * variance */
	/* vector kinds */
	uint64_t	rotation_seed;	/* public: the signs of the rotation */
	/* gradient rounds and vector rounds over a model */
	UldpLocalLoss loss;
	double	   *weights;		/* features + 1 (intercept last) */
	double		clip;			/* l2 bound of each sample's gradient */
	double		feature_radius; /* features clipped to this l2 ball */
} UldpLocalRound;

/* One user's report for one round. */
typedef struct UldpLocalReport
{
	int64_t		round;
	int32_t		coordinate;		/* vector kinds: the rotated coordinate */
	int64_t		index;			/* range kinds: Hadamard row j */
	int32_t		sign;			/* range kinds: +1 or -1 */
	int64_t		level;			/* mean kinds: lower + level * step */
} UldpLocalReport;

typedef struct UldpLocalError
{
	char		message[ULDP_LOCAL_ERROR_SIZE];
	char		hint[ULDP_LOCAL_ERROR_SIZE];
} UldpLocalError;

/* rounds */
extern bool uldp_local_round_parse(const char *json, UldpLocalRound *round,
								   UldpLocalError *error);
extern void uldp_local_round_free(UldpLocalRound *round);

/* the privatizer: samples are m rows of round->row_width numbers */
extern bool uldp_local_report(const UldpLocalRound *round, const double *samples,
							  int64_t m, UldpLocalReport *report,
							  UldpLocalError *error);
extern size_t uldp_local_report_format(const UldpLocalRound *round,
									   const UldpLocalReport *report,
									   char *buffer, size_t size);
extern bool uldp_local_report_parse(const UldpLocalRound *round, const char *json,
									UldpLocalReport *report, UldpLocalError *error);

/* decoding helpers (the server's side) */
extern void uldp_local_hadamard_transform(double *x, int64_t length);
extern double uldp_local_bin_midpoint(const UldpLocalRound *round, int64_t bin);
extern double uldp_local_level_value(const UldpLocalRound *round, int coordinate,
									 double level);
extern double uldp_local_report_variance(const UldpLocalRound *round, int coordinate);
extern void uldp_local_rotate(const UldpLocalRound *round, double *vector,
							  bool inverse);

/* privacy amplification by shuffling (Feldman, McMillan, Talwar 2021) */
extern double uldp_local_shuffle_epsilon(double epsilon0, double n, double delta);

#endif							/* ULDP_LOCAL_H */

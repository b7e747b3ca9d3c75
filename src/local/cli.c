/*-------------------------------------------------------------------------
 *
 * cli.c
 *	  uldp-local: the client library as a command-line tool.
 *
 *	uldp-local report [--ledger FILE --budget EPSILON] ROUND.json < SAMPLES
 *	uldp-local report [...] --round-json 'TEXT' < SAMPLES
 *	uldp-local shuffle-epsilon EPSILON0 N DELTA
 *
 * "report" reads one sample row per line on standard input (numbers
 * separated by spaces, tabs or commas; blank lines ignored; nan and inf
 * accepted, since the summary is defined for them) and prints the user's
 * report for the round.  The round cannot come from standard input, which
 * carries the samples.
 *
 * The ledger is the user's own record of what they have released: lines
 * "ROUND_ID EPSILON".  With --ledger, a round already in the file, or one
 * that would bring the sum of the file's epsilons above --budget, is
 * refused; otherwise its line is appended and synced to disk *before* the
 * report is printed, so that a crash can waste budget but never release a
 * report the ledger does not count.  The file is locked (flock) while it
 * is read and written, so concurrent runs cannot both spend the last of a
 * budget.
 *
 * Exit status: 0 report printed; 1 system error (I/O, memory); 2 bad
 * usage, round or samples; 3 refused by the ledger (or a ledger that
 * cannot be read as one).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uldp_local.h"

#define EXIT_SYSTEM 1
#define EXIT_INPUT 2
#define EXIT_LEDGER 3

/* between the numbers of a sample line (and its end) */
#define SEPARATORS " \t,\r\n"

static const char *usage_text =
"uldp-local: user-level local differential privacy reports (uldp " ULDP_VERSION ")\n"
"\n"
"Usage:\n"
"  uldp-local report [--ledger FILE --budget EPSILON] ROUND.json < SAMPLES\n"
"  uldp-local report [--ledger FILE --budget EPSILON] --round-json TEXT < SAMPLES\n"
"  uldp-local shuffle-epsilon EPSILON0 N DELTA\n"
"  uldp-local --help | --version\n"
"\n"
"report: prints one JSON report of all the samples for the round (a file\n"
"written by the server, or its text). SAMPLES: one row per line, numbers\n"
"separated by spaces, tabs or commas (1 per row for scalar rounds, the\n"
"dimension for vector rounds, the features then the label for model rounds);\n"
"blank lines are ignored; nan and inf are accepted.\n"
"  --ledger FILE    the user's ledger, lines \"ROUND_ID EPSILON\": refuses a round\n"
"                   already answered or one that would exceed the budget, and\n"
"                   records the round (synced) before printing the report\n"
"  --budget EPSILON the user's total epsilon across the ledger's rounds\n"
"\n"
"shuffle-epsilon: the central epsilon of N shuffled EPSILON0-LDP reports\n"
"(Feldman, McMillan, Talwar 2021, Theorem 3.1), at the given DELTA.\n"
"\n"
"Exit status: 0 done, 1 system error, 2 bad usage or input, 3 refused by the ledger.\n";

static void complain(const char *hint, const char *format,...)
			__attribute__((format(printf, 2, 3)));

static void
complain(const char *hint, const char *format,...)
{
	va_list		args;

	fputs("uldp-local: error: ", stderr);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	if (hint != NULL && hint[0] != '\0')
		fprintf(stderr, "uldp-local: hint: %s\n", hint);
}

/* a whole argument as a double, or false */
static bool
parse_number(const char *text, double *result)
{
	char	   *end;

	errno = 0;
	*result = strtod(text, &end);
	return end != text && *end == '\0' && errno != ERANGE;
}

/* x with the fewest digits that read back as x */
static void
format_double(char *buffer, size_t size, double x)
{
	for (int precision = 1; precision <= 17; precision++)
	{
		snprintf(buffer, size, "%.*g", precision, x);
		if (strtod(buffer, NULL) == x)
			return;
	}
}

/* the rest of an open file, NUL-terminated, and its length; or NULL */
static char *
read_fd(int fd, size_t *result_length)
{
	size_t		capacity = 4096;
	size_t		length = 0;
	char	   *text = malloc(capacity);

	while (text != NULL)
	{
		ssize_t		got;

		if (length + 1 == capacity)
		{
			char	   *grown = realloc(text, capacity * 2);

			if (grown == NULL)
				break;
			text = grown;
			capacity *= 2;
		}
		got = read(fd, text + length, capacity - 1 - length);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		if (got == 0)
		{
			text[length] = '\0';
			*result_length = length;
			return text;
		}
		length += (size_t) got;
	}
	free(text);
	return NULL;
}

/* the round file as a NUL-terminated string, or NULL (complained) */
static char *
read_round_file(const char *path)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	char	   *text;
	size_t		length;

	if (fd < 0)
	{
		complain(NULL, "could not open round file \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	text = read_fd(fd, &length);
	if (text == NULL)
		complain(NULL, "could not read round file \"%s\": %s", path, strerror(errno));
	else if (memchr(text, '\0', length) != NULL)
	{
		complain("A round file holds the JSON text the server wrote, and nothing else.",
				 "round file \"%s\" contains a NUL byte", path);
		free(text);
		text = NULL;
	}
	close(fd);
	return text;
}

typedef struct Samples
{
	double	   *values;
	size_t		count;			/* numbers read */
	size_t		capacity;
} Samples;

static bool
add_sample(Samples *samples, double value)
{
	if (samples->count == samples->capacity)
	{
		size_t		grown = samples->capacity == 0 ? 1024 : samples->capacity * 2;
		double	   *values = realloc(samples->values, grown * sizeof(double));

		if (values == NULL)
			return false;
		samples->values = values;
		samples->capacity = grown;
	}
	samples->values[samples->count++] = value;
	return true;
}

/*
 * All of standard input as rows of width numbers.  Returns 0 or the exit
 * status of the failure (complained).
 */
static int
read_samples(int width, Samples *samples)
{
	char	   *line = NULL;
	size_t		line_size = 0;
	ssize_t		length;
	long		number = 0;
	int			status = 0;

	while (status == 0 && (length = getline(&line, &line_size, stdin)) >= 0)
	{
		char	   *p = line;
		int			fields = 0;

		number++;
		if (memchr(line, '\0', (size_t) length) != NULL)
		{
			complain("Give one row of numbers per line.", "line %ld of the samples contains a NUL byte", number);
			status = EXIT_INPUT;
			break;
		}
		for (;;)
		{
			char	   *start = p + strspn(p, SEPARATORS);
			char	   *end = start + strcspn(start, SEPARATORS);
			double		value;

			if (start == end)
				break;
			value = strtod(start, &p);
			if (p != end)
			{
				complain("Samples are decimal numbers, nan or inf, separated by spaces, tabs or commas.",
						 "line %ld of the samples: \"%.*s\" is not a number", number,
						 (int) (end - start > 40 ? 40 : end - start), start);
				status = EXIT_INPUT;
				break;
			}
			if (!add_sample(samples, value))
			{
				complain(NULL, "out of memory reading the samples");
				status = EXIT_SYSTEM;
				break;
			}
			fields++;
		}
		if (status == 0 && fields != 0 && fields != width)
		{
			complain("Each line is one sample: 1 number for scalar rounds, the dimension for vector rounds, the features then the label for model rounds.",
					 "line %ld of the samples has %d numbers, the round needs %d", number, fields, width);
			status = EXIT_INPUT;
		}
	}
	if (status == 0 && ferror(stdin))
	{
		complain(NULL, "could not read the samples: %s", strerror(errno));
		status = EXIT_SYSTEM;
	}
	free(line);
	return status;
}

/*
 * One ledger line "ROUND_ID EPSILON" (an integer, white space, a finite
 * epsilon >= 0); false if it is anything else.
 */
static bool
parse_ledger_line(char *line, long long *id, double *epsilon)
{
	char	   *p;

	errno = 0;
	*id = strtoll(line, &p, 10);
	if (p == line || errno == ERANGE || (*p != ' ' && *p != '\t'))
		return false;
	*epsilon = strtod(p, &p);
	p += strspn(p, " \t");
	return *p == '\0' && isfinite(*epsilon) && *epsilon >= 0;
}

/* makes a new file's directory entry durable */
static bool
sync_directory(const char *path)
{
	char	   *copy = strdup(path);
	int			fd;
	bool		ok;

	if (copy == NULL)
		return false;
	fd = open(dirname(copy), O_RDONLY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return false;
	ok = fsync(fd) == 0;
	close(fd);
	return ok;
}

/* opens the ledger for appending, creating it (mode 0600) if need be */
static int
open_ledger(const char *path, bool *created)
{
	int			fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);

	*created = false;
	if (fd < 0 && errno == ENOENT)
	{
		fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	}
	return fd;
}

/*
 * Checks the round against the ledger and records it.  Returns 0 when the
 * round is recorded (and synced), or the exit status of the refusal or
 * failure (complained).
 */
static int
spend(const char *path, double budget, const UldpLocalRound *round)
{
	bool		created;
	int			fd = open_ledger(path, &created);
	char	   *text;
	char	   *line;
	char	   *next;
	long		number = 0;
	double		spent = 0;
	char		epsilon[32];
	char		entry[64];
	size_t		length;
	int			status = 0;

	if (fd < 0)
	{
		complain(NULL, "could not open ledger \"%s\": %s", path, strerror(errno));
		return EXIT_SYSTEM;
	}
	/* held until close(): concurrent runs see each other's lines */
	if (flock(fd, LOCK_EX) != 0 || (text = read_fd(fd, &length)) == NULL)
	{
		complain(NULL, "could not read ledger \"%s\": %s", path, strerror(errno));
		close(fd);
		return EXIT_SYSTEM;
	}
	if (memchr(text, '\0', length) != NULL)
	{
		complain("A ledger holds lines \"ROUND_ID EPSILON\" and nothing else; check the file.",
				 "ledger \"%s\" contains a NUL byte", path);
		status = EXIT_LEDGER;
	}
	for (line = text; status == 0 && *line != '\0'; line = next)
	{
		long long	id;
		double		line_epsilon;

		number++;
		next = strchr(line, '\n');
		if (next == NULL)
		{
			complain("The last line was not completed, perhaps by a crash; check the file and end it with a newline.",
					 "ledger \"%s\" line %ld has no newline", path, number);
			status = EXIT_LEDGER;
			break;
		}
		*next++ = '\0';
		if (line[strspn(line, " \t")] == '\0')
			continue;
		if (!parse_ledger_line(line, &id, &line_epsilon))
		{
			complain("Each ledger line is a round id and the epsilon spent on it, separated by a space.",
					 "ledger \"%s\" line %ld is not \"ROUND_ID EPSILON\"", path, number);
			status = EXIT_LEDGER;
		}
		else if (id == round->id)
		{
			complain("Each round is answered once: a second report would spend the round's epsilon again.",
					 "round %lld is already in ledger \"%s\" (line %ld)", id, path, number);
			status = EXIT_LEDGER;
		}
		else
			spent += line_epsilon;
	}
	free(text);
	if (status == 0 && spent + round->epsilon > budget)
	{
		complain("The user's budget is the total epsilon of all the rounds they answer; this round would exceed it.",
				 "round %lld costs epsilon %g, and ledger \"%s\" has spent %g of the budget %g",
				 (long long) round->id, round->epsilon, path, spent, budget);
		status = EXIT_LEDGER;
	}
	if (status == 0)
	{
		format_double(epsilon, sizeof(epsilon), round->epsilon);
		length = (size_t) snprintf(entry, sizeof(entry), "%lld %s\n", (long long) round->id, epsilon);
		if (write(fd, entry, length) != (ssize_t) length || fsync(fd) != 0 ||
			(created && !sync_directory(path)))
		{
			complain("Check the ledger's file system; the round may or may not be recorded, and no report was printed.",
					 "could not record the round in ledger \"%s\": %s", path, strerror(errno));
			status = EXIT_SYSTEM;
		}
	}
	close(fd);
	return status;
}

static int
command_report(int argc, char **argv)
{
	const char *round_path = NULL;
	const char *round_text = NULL;
	const char *ledger = NULL;
	const char *budget_text = NULL;
	char	   *file_text = NULL;
	double		budget = 0;
	UldpLocalRound round;
	UldpLocalReport report;
	UldpLocalError error;
	Samples		samples = {NULL, 0, 0};
	char		json[ULDP_LOCAL_REPORT_SIZE];
	int			status;

	for (int i = 0; i < argc; i++)
	{
		const char **option = NULL;

		if (strcmp(argv[i], "--ledger") == 0)
			option = &ledger;
		else if (strcmp(argv[i], "--budget") == 0)
			option = &budget_text;
		else if (strcmp(argv[i], "--round-json") == 0)
			option = &round_text;
		if (option != NULL)
		{
			if (i + 1 == argc || *option != NULL)
			{
				complain("Run uldp-local --help for the usage.", "%s needs one value, given once", argv[i]);
				return EXIT_INPUT;
			}
			*option = argv[++i];
		}
		else if (round_path == NULL && (argv[i][0] != '-' || argv[i][1] == '\0'))
			round_path = argv[i];
		else
		{
			complain("Run uldp-local --help for the usage.", "unexpected argument \"%s\"", argv[i]);
			return EXIT_INPUT;
		}
	}
	if ((round_path == NULL) == (round_text == NULL))
	{
		complain("Give the round as a file or with --round-json, not both.", "report needs one round");
		return EXIT_INPUT;
	}
	if (round_path != NULL && strcmp(round_path, "-") == 0)
	{
		complain("Save the round to a file, or pass its text with --round-json.",
				 "the round cannot be read from standard input, which carries the samples");
		return EXIT_INPUT;
	}
	if ((ledger == NULL) != (budget_text == NULL))
	{
		complain("A ledger is checked against a budget: give both.", "--ledger and --budget go together");
		return EXIT_INPUT;
	}
	if (budget_text != NULL && !(parse_number(budget_text, &budget) && isfinite(budget) && budget >= 0))
	{
		complain("The budget is a finite epsilon, 0 or more.", "invalid budget \"%s\"", budget_text);
		return EXIT_INPUT;
	}
	if (round_path != NULL)
	{
		round_text = file_text = read_round_file(round_path);
		if (round_text == NULL)
			return EXIT_INPUT;
	}
	if (!uldp_local_round_parse(round_text, &round, &error))
	{
		complain(error.hint, "%s", error.message);
		free(file_text);
		return EXIT_INPUT;
	}
	free(file_text);
	status = read_samples(round.row_width, &samples);
	if (status == 0 &&
		!uldp_local_report(&round, samples.values, (int64_t) (samples.count / round.row_width),
						   &report, &error))
	{
		complain(error.hint, "%s", error.message);
		status = EXIT_SYSTEM;
	}
	free(samples.values);
	if (status == 0 && ledger != NULL)
		status = spend(ledger, budget, &round);
	if (status == 0)
	{
		uldp_local_report_format(&round, &report, json, sizeof(json));
		if (printf("%s\n", json) < 0 || fflush(stdout) != 0)
		{
			complain(ledger != NULL ? "The round is recorded in the ledger: its epsilon is spent." : NULL,
					 "could not write the report: %s", strerror(errno));
			status = EXIT_SYSTEM;
		}
	}
	uldp_local_round_free(&round);
	return status;
}

static int
command_shuffle_epsilon(int argc, char **argv)
{
	double		epsilon0;
	double		n;
	double		delta;
	double		epsilon;
	char		text[32];

	if (argc != 3)
	{
		complain("Run uldp-local --help for the usage.", "shuffle-epsilon needs EPSILON0 N DELTA");
		return EXIT_INPUT;
	}
	if (!parse_number(argv[0], &epsilon0) || !parse_number(argv[1], &n) ||
		!parse_number(argv[2], &delta) ||
		isnan(epsilon = uldp_local_shuffle_epsilon(epsilon0, n, delta)))
	{
		complain("EPSILON0 is a finite number >= 0, N a number of reports >= 1, DELTA in (0, 1).",
				 "invalid arguments \"%s\" \"%s\" \"%s\"", argv[0], argv[1], argv[2]);
		return EXIT_INPUT;
	}
	format_double(text, sizeof(text), epsilon);
	printf("%s\n", text);
	return fflush(stdout) == 0 ? 0 : EXIT_SYSTEM;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return command_report(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "shuffle-epsilon") == 0)
		return command_shuffle_epsilon(argc - 2, argv + 2);
	if (argc == 2 && strcmp(argv[1], "--help") == 0)
	{
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0)
	{
		printf("uldp-local %s (format %d)\n", ULDP_VERSION, ULDP_LOCAL_FORMAT);
		return 0;
	}
	if (argc < 2)
		complain("Run uldp-local --help for the usage.", "no command");
	else
		complain("Run uldp-local --help for the usage.", "unknown command \"%s\"", argv[1]);
	return EXIT_INPUT;
}

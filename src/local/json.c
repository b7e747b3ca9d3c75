/*-------------------------------------------------------------------------
 *
 * json.c
 *	  A small strict JSON reader (RFC 8259) for rounds and reports.
 *
 * Rounds come from the server and reports from the clients, and each side
 * distrusts the other, so the reader accepts only well-formed text: one
 * value and white space, valid UTF-8, no duplicate keys, no literal
 * control characters in strings.  It builds a tree with the host's
 * allocator; numbers keep their literal so that integers are read exactly
 * (uldp_json_int64) and doubles with a single rounding (uldp_json_double,
 * in the "C" locale whatever the program's LC_NUMERIC).
 *
 * Objects have at most MAX_MEMBERS members: neither format needs more, and
 * the duplicate check is quadratic.  Nesting is limited to MAX_DEPTH.
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* strtod_l */
#endif

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "host.h"
#include "json.h"

#define MAX_DEPTH 16
#define MAX_MEMBERS 64

typedef struct Parser
{
	const char *start;
	const char *p;
	const char *what;			/* "round" or "report", for messages */
	UldpLocalError *error;
} Parser;

static bool parse_value(Parser *parser, UldpJson *value, int depth);

static bool
syntax_error(Parser *parser, const char *problem)
{
	uldp_local_fail(parser->error, "invalid %s JSON at byte %zu: %s",
					parser->what, (size_t) (parser->p - parser->start), problem);
	return uldp_local_hint(parser->error,
						   "A %s must be one JSON object as doc/local.md describes it.",
						   parser->what);
}

static bool
out_of_memory(Parser *parser)
{
	uldp_local_fail(parser->error, "out of memory reading a %s", parser->what);
	return uldp_local_hint(parser->error, "Free some memory and try again.");
}

static void
skip_space(Parser *parser)
{
	while (*parser->p == ' ' || *parser->p == '\t' || *parser->p == '\n' ||
		   *parser->p == '\r')
		parser->p++;
}

static void
free_contents(UldpJson *value)
{
	for (int i = 0; i < value->count; i++)
	{
		free_contents(&value->items[i]);
		if (value->keys != NULL)
			uldp_local_free(value->keys[i]);
	}
	/* the host's free need not accept NULL (pfree does not) */
	if (value->items != NULL)
		uldp_local_free(value->items);
	if (value->keys != NULL)
		uldp_local_free(value->keys);
	if (value->text != NULL)
		uldp_local_free(value->text);
}

/*
 * The length of the UTF-8 sequence at s (1 to 4 bytes), or 0 if it is not
 * a well-formed one: no overlong forms, surrogates or values above
 * U+10FFFF (RFC 3629).
 */
static int
utf8_length(const unsigned char *s)
{
	int			length;
	unsigned int code;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xE0) == 0xC0)
	{
		length = 2;
		code = s[0] & 0x1F;
	}
	else if ((s[0] & 0xF0) == 0xE0)
	{
		length = 3;
		code = s[0] & 0x0F;
	}
	else if ((s[0] & 0xF8) == 0xF0)
	{
		length = 4;
		code = s[0] & 0x07;
	}
	else
		return 0;
	for (int i = 1; i < length; i++)
	{
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		code = (code << 6) | (s[i] & 0x3F);
	}
	if ((length == 2 && code < 0x80) || (length == 3 && code < 0x800) ||
		(length == 4 && code < 0x10000) || code > 0x10FFFF ||
		(code >= 0xD800 && code <= 0xDFFF))
		return 0;
	return length;
}

/* four hexadecimal digits at s, or -1 */
static long
hex4(const char *s)
{
	long		code = 0;

	for (int i = 0; i < 4; i++)
	{
		char		c = s[i];
		int			digit;

		if (c >= '0' && c <= '9')
			digit = c - '0';
		else if (c >= 'a' && c <= 'f')
			digit = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			digit = c - 'A' + 10;
		else
			return -1;
		code = code * 16 + digit;
	}
	return code;
}

static char *
put_utf8(char *out, long code)
{
	if (code < 0x80)
		*out++ = (char) code;
	else if (code < 0x800)
	{
		*out++ = (char) (0xC0 | (code >> 6));
		*out++ = (char) (0x80 | (code & 0x3F));
	}
	else if (code < 0x10000)
	{
		*out++ = (char) (0xE0 | (code >> 12));
		*out++ = (char) (0x80 | ((code >> 6) & 0x3F));
		*out++ = (char) (0x80 | (code & 0x3F));
	}
	else
	{
		*out++ = (char) (0xF0 | (code >> 18));
		*out++ = (char) (0x80 | ((code >> 12) & 0x3F));
		*out++ = (char) (0x80 | ((code >> 6) & 0x3F));
		*out++ = (char) (0x80 | (code & 0x3F));
	}
	return out;
}

/*
 * Decodes the string at parser->p (on the opening quote, its end known to
 * be there) into out, and moves past it.  "\u0000" is refused: keys are C
 * strings.
 */
static bool
decode_string(Parser *parser, char *out)
{
	const char *p;

	for (p = parser->p + 1; *p != '"';)
	{
		unsigned char c = (unsigned char) *p;

		parser->p = p;
		if (c < 0x20)
			return syntax_error(parser, "control character in a string");
		if (c != '\\')
		{
			int			length = utf8_length((const unsigned char *) p);

			if (length == 0)
				return syntax_error(parser, "invalid UTF-8");
			memcpy(out, p, length);
			out += length;
			p += length;
			continue;
		}
		p++;
		switch (*p)
		{
			case '"':
			case '\\':
			case '/':
				*out++ = *p;
				break;
			case 'b':
				*out++ = '\b';
				break;
			case 'f':
				*out++ = '\f';
				break;
			case 'n':
				*out++ = '\n';
				break;
			case 'r':
				*out++ = '\r';
				break;
			case 't':
				*out++ = '\t';
				break;
			case 'u':
				{
					long		code = hex4(p + 1);

					if (code < 0)
						return syntax_error(parser, "invalid \\u escape");
					p += 4;
					if (code >= 0xDC00 && code <= 0xDFFF)
						return syntax_error(parser, "unpaired surrogate");
					if (code >= 0xD800 && code <= 0xDBFF)
					{
						long		low = (p[1] == '\\' && p[2] == 'u') ? hex4(p + 3) : -1;

						if (low < 0xDC00 || low > 0xDFFF)
							return syntax_error(parser, "unpaired surrogate");
						code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
						p += 6;
					}
					if (code == 0)
						return syntax_error(parser, "\\u0000 in a string");
					out = put_utf8(out, code);
				}
				break;
			default:
				return syntax_error(parser, "invalid escape");
		}
		p++;
	}
	*out = '\0';
	parser->p = p + 1;
	return true;
}

/*
 * A string at parser->p (on the opening quote), decoded into a new
 * NUL-terminated buffer.  Decoding never lengthens the text (an escape of
 * 6 or 12 characters gives at most 3 or 4 bytes), so the buffer is sized
 * by the raw length.
 */
static bool
parse_string(Parser *parser, char **result)
{
	const char *p = parser->p + 1;
	char	   *buffer;

	while (*p != '"')
	{
		if (*p == '\0')
		{
			parser->p = p;
			return syntax_error(parser, "unterminated string");
		}
		p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
	}
	buffer = uldp_local_alloc((size_t) (p - parser->p));
	if (buffer == NULL)
		return out_of_memory(parser);
	if (!decode_string(parser, buffer))
	{
		uldp_local_free(buffer);
		return false;
	}
	*result = buffer;
	return true;
}

/* RFC 8259's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool
parse_number(Parser *parser, UldpJson *value)
{
	const char *p = parser->p;
	size_t		length;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return syntax_error(parser, "invalid number");
	if (*p == '.')
	{
		if (!(*++p >= '0' && *p <= '9'))
			return syntax_error(parser, "invalid number");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return syntax_error(parser, "invalid number");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	length = (size_t) (p - parser->p);
	value->type = ULDP_JSON_NUMBER;
	value->text = uldp_local_alloc(length + 1);
	if (value->text == NULL)
		return out_of_memory(parser);
	memcpy(value->text, parser->p, length);
	value->text[length] = '\0';
	parser->p = p;
	return true;
}

/* makes room for one more member of value (array or object) */
static bool
add_member(Parser *parser, UldpJson *value, int *capacity)
{
	int			grown;
	UldpJson   *items;
	char	  **keys = NULL;

	if (value->count < *capacity)
		return true;
	if (value->type == ULDP_JSON_OBJECT && value->count >= MAX_MEMBERS)
		return syntax_error(parser, "too many members in an object");
	if (*capacity > INT_MAX / 2)
		return out_of_memory(parser);
	grown = *capacity == 0 ? 8 : *capacity * 2;
	items = uldp_local_alloc(grown * sizeof(UldpJson));
	if (value->type == ULDP_JSON_OBJECT)
		keys = uldp_local_alloc(grown * sizeof(char *));
	if (items == NULL || (value->type == ULDP_JSON_OBJECT && keys == NULL))
	{
		if (items != NULL)
			uldp_local_free(items);
		if (keys != NULL)
			uldp_local_free(keys);
		return out_of_memory(parser);
	}
	if (*capacity > 0)
	{
		memcpy(items, value->items, value->count * sizeof(UldpJson));
		uldp_local_free(value->items);
		if (keys != NULL)
		{
			memcpy(keys, value->keys, value->count * sizeof(char *));
			uldp_local_free(value->keys);
		}
	}
	value->items = items;
	if (keys != NULL)
		value->keys = keys;
	*capacity = grown;
	return true;
}

/* an array or object at parser->p, on its opening bracket */
static bool
parse_container(Parser *parser, UldpJson *value, int depth)
{
	bool		object = *parser->p == '{';
	char		close = object ? '}' : ']';
	int			capacity = 0;

	value->type = object ? ULDP_JSON_OBJECT : ULDP_JSON_ARRAY;
	if (depth >= MAX_DEPTH)
		return syntax_error(parser, "too deeply nested");
	parser->p++;
	skip_space(parser);
	if (*parser->p == close)
	{
		parser->p++;
		return true;
	}
	for (;;)
	{
		UldpJson   *member;

		if (!add_member(parser, value, &capacity))
			return false;
		member = &value->items[value->count];
		memset(member, 0, sizeof(UldpJson));
		if (object)
		{
			char	   *key;

			if (*parser->p != '"')
				return syntax_error(parser, "expected a string key");
			if (!parse_string(parser, &key))
				return false;
			value->keys[value->count] = key;
			/* the member counts from here, so that its key is freed */
			value->count++;
			for (int i = 0; i < value->count - 1; i++)
				if (strcmp(value->keys[i], key) == 0)
					return syntax_error(parser, "duplicate key");
			skip_space(parser);
			if (*parser->p != ':')
				return syntax_error(parser, "expected ':'");
			parser->p++;
			skip_space(parser);
		}
		else
			value->count++;
		if (!parse_value(parser, member, depth + 1))
			return false;
		skip_space(parser);
		if (*parser->p == close)
		{
			parser->p++;
			return true;
		}
		if (*parser->p != ',')
			return syntax_error(parser, object ? "expected ',' or '}'" : "expected ',' or ']'");
		parser->p++;
		skip_space(parser);
	}
}

static bool
parse_value(Parser *parser, UldpJson *value, int depth)
{
	switch (*parser->p)
	{
		case '{':
		case '[':
			return parse_container(parser, value, depth);
		case '"':
			value->type = ULDP_JSON_STRING;
			return parse_string(parser, &value->text);
		case '\0':
			return syntax_error(parser, "unexpected end");
		case 't':
		case 'f':
		case 'n':
			return syntax_error(parser, "true, false and null are not used");
		default:
			return parse_number(parser, value);
	}
}

UldpJson *
uldp_json_parse(const char *text, const char *what, UldpLocalError *error)
{
	Parser		parser;
	UldpJson   *value = uldp_local_alloc(sizeof(UldpJson));

	parser.start = parser.p = text;
	parser.what = what;
	parser.error = error;
	if (value == NULL)
	{
		out_of_memory(&parser);
		return NULL;
	}
	memset(value, 0, sizeof(UldpJson));
	skip_space(&parser);
	if (parse_value(&parser, value, 0))
	{
		skip_space(&parser);
		if (*parser.p == '\0')
			return value;
		syntax_error(&parser, "text after the value");
	}
	uldp_json_free(value);
	return NULL;
}

void
uldp_json_free(UldpJson *value)
{
	if (value == NULL)
		return;
	free_contents(value);
	uldp_local_free(value);
}

const UldpJson *
uldp_json_member(const UldpJson *object, const char *key)
{
	for (int i = 0; i < object->count; i++)
		if (strcmp(object->keys[i], key) == 0)
			return &object->items[i];
	return NULL;
}

bool
uldp_json_int64(const UldpJson *value, int64_t *result)
{
	const char *p = value->text;
	bool		negative = false;
	uint64_t	magnitude = 0;

	if (value->type != ULDP_JSON_NUMBER)
		return false;
	if (*p == '-')
	{
		negative = true;
		p++;
	}
	for (; *p != '\0'; p++)
	{
		if (*p < '0' || *p > '9')
			return false;		/* a fraction or an exponent */
		if (magnitude > (UINT64_C(1) << 63) / 10)
			return false;
		magnitude = magnitude * 10 + (uint64_t) (*p - '0');
		if (magnitude > (UINT64_C(1) << 63))
			return false;
	}
	if (!negative && magnitude > (uint64_t) INT64_MAX)
		return false;
	/* -2^63 is the one magnitude that does not fit as a positive int64 */
	*result = negative ? (int64_t) (0 - magnitude) : (int64_t) magnitude;
	return true;
}

/*
 * The "C" locale, created once: strtod_l then reads '.' as the decimal
 * point even in a program that has called setlocale().  Threads that race
 * to create it keep the first and free their own.
 */
static locale_t
c_locale(void)
{
	static locale_t shared = (locale_t) 0;
	locale_t	mine = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
	locale_t	expected = (locale_t) 0;

	if (mine != (locale_t) 0)
		return mine;
	mine = newlocale(LC_NUMERIC_MASK, "C", (locale_t) 0);
	if (mine == (locale_t) 0)
		return mine;
	if (__atomic_compare_exchange_n(&shared, &expected, mine, false,
									__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return mine;
	freelocale(mine);
	return expected;
}

bool
uldp_json_double(const UldpJson *value, double *result)
{
	locale_t	locale;
	char	   *end;
	double		x;

	if (value->type != ULDP_JSON_NUMBER)
		return false;
	locale = c_locale();
	if (locale == (locale_t) 0)
		return false;
	x = strtod_l(value->text, &end, locale);
	if (*end != '\0' || !isfinite(x))
		return false;			/* a literal beyond DBL_MAX */
	*result = x;
	return true;
}

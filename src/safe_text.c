/*-------------------------------------------------------------------------
 *
 * safe_text.c
 *	  LIKE, ILIKE, lower and upper that return NULL where PostgreSQL's raise
 *	  errors.
 *
 * PostgreSQL's LIKE raises "LIKE pattern must not end with escape
 * character" only when the match reaches the end of the pattern, which
 * depends on the text ('abc' LIKE 'x\' is false, 'xbc' LIKE 'x\' an error),
 * and it recurses once for every '%' a match goes through, checking the stack
 * depth each time: whether a row makes it recurse deep enough depends on the
 * row.  ILIKE, lower() and upper() in a locale other than C convert the text
 * to wide characters (libc) or UTF-16 (ICU), and fail on texts of a few
 * hundred megabytes ("invalid memory alloc request size").  The query gate
 * (safe_expr.c) replaces them by these:
 *
 *	- uldp._safe_like(text, pattern): the same match, without recursion: the
 *	  classic wildcard algorithm, which backtracks to the last '%' only; NULL
 *	  for a pattern that ends in an escape.  The gate lets only constants and
 *	  parameters be patterns, and checks them before any row is read
 *	  (uldp._like_pattern_check), so such a pattern is an error of the query;
 *	- uldp._safe_ilike(text, pattern): the same on both lowered, as ILIKE
 *	  does;
 *	- uldp._safe_lower(text), uldp._safe_upper(text): the built-ins, NULL for
 *	  a text of more than 32 MB in a locale other than C.  libc takes 4 bytes
 *	  of wide characters per byte of text, ICU converts to UTF-16 and back,
 *	  and a case mapping can triple a string: 32 MB keeps every allocation
 *	  far below the 1 GB limit.
 *
 * Patterns use the default escape character, backslash: LIKE ... ESCAPE
 * '#' is LIKE like_escape(pattern, '#'), a pattern rewritten to it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/fmgrprotos.h"
#include "utils/pg_locale.h"

#define CASE_MAP_MAX_BYTES ((Size) 32 * 1024 * 1024)

PG_FUNCTION_INFO_V1(uldp_safe_like);
PG_FUNCTION_INFO_V1(uldp_safe_ilike);
PG_FUNCTION_INFO_V1(uldp_like_pattern_check);
PG_FUNCTION_INFO_V1(uldp_safe_lower);
PG_FUNCTION_INFO_V1(uldp_safe_upper);

/* Does every escape of the pattern have a character to escape? */
static bool
pattern_is_valid(const char *p, int plen)
{
	for (int i = 0; i < plen; i++)
		if (p[i] == '\\' && ++i == plen)
			return false;
	return true;
}

/* The length of the character at s, cut to the rest of the text. */
static inline int
char_length(const char *s, int rest)
{
	return Min(pg_mblen(s), rest);
}

/*
 * Does the text match the pattern, a valid one?  '%' matches any sequence
 * of characters, '_' one character, a backslash makes the next byte a
 * literal, every other byte matches itself: MatchText's semantics, bytes
 * compared as bytes and wildcards taking whole characters.  On a mismatch,
 * the last '%' takes one more character and the match resumes after it;
 * a '%' seen later makes the earlier ones irrelevant, so nothing else needs
 * to be retried.
 */
static bool
like_match(const char *t, int tlen, const char *p, int plen)
{
	int			ti = 0;
	int			pi = 0;
	int			star = -1;		/* pattern position after the last '%' */
	int			resume = 0;		/* where the text resumes after it */

	while (ti < tlen)
	{
		if (pi < plen && p[pi] == '%')
		{
			star = ++pi;
			resume = ti;
		}
		else if (pi < plen && p[pi] == '_')
		{
			pi++;
			ti += char_length(t + ti, tlen - ti);
		}
		else if (pi < plen && p[pi + (p[pi] == '\\')] == t[ti])
		{
			pi += 1 + (p[pi] == '\\');
			ti++;
		}
		else if (star >= 0)
		{
			CHECK_FOR_INTERRUPTS();
			resume += char_length(t + resume, tlen - resume);
			ti = resume;
			pi = star;
		}
		else
			return false;
	}
	while (pi < plen && p[pi] == '%')
		pi++;
	return pi == plen;
}

/* The pattern's match of the text, or NULL (false *valid) for an invalid pattern. */
static bool
like(text *t, text *p, bool *valid)
{
	*valid = pattern_is_valid(VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p));
	return *valid && like_match(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
								VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p));
}

/* map (lower or upper) of value in the collation, or NULL if it is too long for it */
static text *
case_mapped(PGFunction map, Datum value, Oid collation)
{
	if (!lc_ctype_is_c(collation) &&
		toast_raw_datum_size(value) - VARHDRSZ > CASE_MAP_MAX_BYTES)
		return NULL;
	return DatumGetTextPP(DirectFunctionCall1Coll(map, collation, value));
}

/* uldp._safe_like(value text, pattern text) returns boolean */
Datum
uldp_safe_like(PG_FUNCTION_ARGS)
{
	bool		valid;
	bool		result = like(PG_GETARG_TEXT_PP(0), PG_GETARG_TEXT_PP(1), &valid);

	if (!valid)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(result);
}

/* uldp._safe_ilike(value text, pattern text) returns boolean */
Datum
uldp_safe_ilike(PG_FUNCTION_ARGS)
{
	text	   *t = case_mapped(lower, PG_GETARG_DATUM(0), PG_GET_COLLATION());
	text	   *p = case_mapped(lower, PG_GETARG_DATUM(1), PG_GET_COLLATION());
	bool		valid;
	bool		result;

	if (t == NULL || p == NULL)
		PG_RETURN_NULL();
	result = like(t, p, &valid);
	if (!valid)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(result);
}

/*
 * uldp._like_pattern_check(pattern text) returns boolean: true, or the error
 * PostgreSQL's LIKE raises for the pattern (the gate evaluates it before
 * reading any row).
 */
Datum
uldp_like_pattern_check(PG_FUNCTION_ARGS)
{
	text	   *p;

	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(true);
	p = PG_GETARG_TEXT_PP(0);
	if (!pattern_is_valid(VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_ESCAPE_SEQUENCE),
				 errmsg("LIKE pattern must not end with escape character"),
				 errhint("Double a backslash to match one: LIKE 'a\\\\'.")));
	PG_RETURN_BOOL(true);
}

/* uldp._safe_lower(text) returns text */
Datum
uldp_safe_lower(PG_FUNCTION_ARGS)
{
	text	   *result = case_mapped(lower, PG_GETARG_DATUM(0), PG_GET_COLLATION());

	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(result);
}

/* uldp._safe_upper(text) returns text */
Datum
uldp_safe_upper(PG_FUNCTION_ARGS)
{
	text	   *result = case_mapped(upper, PG_GETARG_DATUM(0), PG_GET_COLLATION());

	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(result);
}

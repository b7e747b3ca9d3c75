/*-------------------------------------------------------------------------
 *
 * json.h
 *	  A small strict JSON reader for rounds and reports: objects with
 *	  string keys, arrays, strings and numbers (no true, false or null,
 *	  which neither format uses).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_JSON_H
#define ULDP_LOCAL_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "uldp_local.h"

typedef enum UldpJsonType
{
	ULDP_JSON_NUMBER,
	ULDP_JSON_STRING,
	ULDP_JSON_ARRAY,
	ULDP_JSON_OBJECT
} UldpJsonType;

typedef struct UldpJson
{
	UldpJsonType type;
	char	   *text;			/* number: its literal; string: its value */
	int			count;			/* array, object: number of members */
	struct UldpJson *items;		/* array, object: the members' values */
	char	  **keys;			/* object: the members' keys, all distinct */
} UldpJson;

/*
 * Parses a whole text (one value, surrounded only by white space), or
 * returns NULL with an error whose message names "what" ("round",
 * "report").
 */
extern UldpJson *uldp_json_parse(const char *text, const char *what,
								 UldpLocalError *error);
extern void uldp_json_free(UldpJson *value);

/* the member of an object called key, or NULL */
extern const UldpJson *uldp_json_member(const UldpJson *object, const char *key);

/* a number literal without fraction or exponent that fits in int64 */
extern bool uldp_json_int64(const UldpJson *value, int64_t *result);
/* a number whose value is a finite double (rounded to nearest) */
extern bool uldp_json_double(const UldpJson *value, double *result);

#endif							/* ULDP_LOCAL_JSON_H */

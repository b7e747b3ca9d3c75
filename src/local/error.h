/*-------------------------------------------------------------------------
 *
 * error.h
 *	  Filling in a UldpLocalError: a lower-case message without a trailing
 *	  period, and a hint that is a full sentence.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_LOCAL_ERROR_H
#define ULDP_LOCAL_ERROR_H

#include <stdbool.h>

#include "uldp_local.h"

/* sets the message, clears the hint; returns false for "return fail(...)" */
extern bool uldp_local_fail(UldpLocalError *error, const char *format,...)
			__attribute__((format(printf, 2, 3)));
/* sets the hint; returns false */
extern bool uldp_local_hint(UldpLocalError *error, const char *format,...)
			__attribute__((format(printf, 2, 3)));

/*
 * Text from a round or report, made fit to quote in a message: printable
 * ASCII only (anything else becomes '?', so that a message is valid in
 * any encoding), cut to ULDP_LOCAL_EXCERPT_SIZE - 4 characters plus "...".
 */
#define ULDP_LOCAL_EXCERPT_SIZE 40

/* returns buffer, of ULDP_LOCAL_EXCERPT_SIZE bytes */
extern const char *uldp_local_excerpt(const char *text, char *buffer);

#endif							/* ULDP_LOCAL_ERROR_H */

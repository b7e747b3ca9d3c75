/*-------------------------------------------------------------------------
 *
 * error.c
 *	  Messages and hints of the client library's errors.
 *
 * Every function of the library that can fail returns false and describes
 * the failure in the caller's UldpLocalError, which may be NULL when the
 * caller only wants to know whether it failed.  The extension turns the
 * pair into ereport's errmsg and errhint, the command-line tool prints it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

bool
uldp_local_fail(UldpLocalError *error, const char *format,...)
{
	va_list		args;

	if (error == NULL)
		return false;
	va_start(args, format);
	vsnprintf(error->message, sizeof(error->message), format, args);
	va_end(args);
	error->hint[0] = '\0';
	return false;
}

bool
uldp_local_hint(UldpLocalError *error, const char *format,...)
{
	va_list		args;

	if (error == NULL)
		return false;
	va_start(args, format);
	vsnprintf(error->hint, sizeof(error->hint), format, args);
	va_end(args);
	return false;
}

const char *
uldp_local_excerpt(const char *text, char *buffer)
{
	size_t		length = 0;

	for (; *text != '\0' && length < ULDP_LOCAL_EXCERPT_SIZE - 4; text++)
		buffer[length++] = (*text >= ' ' && *text <= '~') ? *text : '?';
	if (*text != '\0')
		for (int i = 0; i < 3; i++)
			buffer[length++] = '.';
	buffer[length] = '\0';
	return buffer;
}

/*-------------------------------------------------------------------------
 *
 * wire.h
 *	  Reading the header of a value a shard sends: a magic number that says
 *	  which kind of value it is, then a fixed header.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_WIRE_H
#define ULDP_WIRE_H

/*
 * Whether "value" starts with "magic" (false: another kind of value).  If
 * it does, *header receives its first "header_size" bytes, or zeros when
 * the value is shorter, which leaves a version of 0 that the reader
 * refuses.
 */
static inline bool
uldp_wire_header(bytea *value, uint32 magic, void *header, Size header_size)
{
	Size		size = VARSIZE_ANY_EXHDR(value);
	uint32		found;

	if (size < sizeof(found))
		return false;
	memcpy(&found, VARDATA_ANY(value), sizeof(found));
	if (found != magic)
		return false;
	memset(header, 0, header_size);
	if (size >= header_size)
		memcpy(header, VARDATA_ANY(value), header_size);
	return true;
}

#endif							/* ULDP_WIRE_H */

/*-------------------------------------------------------------------------
 *
 * protect.h
 *	  Protected tables: which tables analysts may query only through uldp.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_PROTECT_H
#define ULDP_PROTECT_H

#include "access/attnum.h"

extern void uldp_protect_init(void);
extern bool uldp_table_protection(Oid relid, AttrNumber *privacy_unit);
extern bool uldp_public_group_keys(Oid relid, AttrNumber attnum, Datum *keys);

#endif							/* ULDP_PROTECT_H */

/*-------------------------------------------------------------------------
 *
 * keymemo.h
 *	  A grouping key computed once per distinct input, in both readings of
 *	  a grouped release.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_KEYMEMO_H
#define ULDP_KEYMEMO_H

#include "nodes/primnodes.h"

extern Expr *uldp_key_memo_wrap(Expr *key, int64 slot, int keyno);

#endif							/* ULDP_KEYMEMO_H */

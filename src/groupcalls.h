/*-------------------------------------------------------------------------
 *
 * groupcalls.h
 *	  What the uldp aggregates may ask of the grouping function that
 *	  computes their user argument in a grouped release.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_GROUPCALLS_H
#define ULDP_GROUPCALLS_H

#include "fmgr.h"

extern int64 uldp_group_member_users(FunctionCallInfo fcinfo, int user_arg);

#endif							/* ULDP_GROUPCALLS_H */

/*-------------------------------------------------------------------------
 *
 * selection.h
 *	  Private partition selection: which groups of a grouped release appear.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SELECTION_H
#define ULDP_SELECTION_H

#include "statement.h"

/* uldp.group_selection_epsilon and uldp.group_selection_delta */
extern double uldp_group_selection_epsilon;
extern double uldp_group_selection_delta;

/*
 * The arguments of uldp.group_selected: slot, k, registry and user id, as
 * the grouping functions' (groupcalls.c), then its parameters epsilon and
 * delta, then the grouping keys (VARIADIC "any")
 */
#define ULDP_SELECTION_USER_ARG 3
#define ULDP_SELECTION_EPSILON_ARG 4
#define ULDP_SELECTION_DELTA_ARG 5

extern void uldp_selection_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_SELECTION_H */

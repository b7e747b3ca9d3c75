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

extern void uldp_selection_plan(const UldpReleaseCall *call, UldpReleasePlan *plan);

#endif							/* ULDP_SELECTION_H */

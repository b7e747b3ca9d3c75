/*-------------------------------------------------------------------------
 *
 * budget.h
 *	  Charging a release to the privacy budget of the logged-in role.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_BUDGET_H
#define ULDP_BUDGET_H

extern void uldp_charge(const char *function, double epsilon, double delta);

#endif							/* ULDP_BUDGET_H */

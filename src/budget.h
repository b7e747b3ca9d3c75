/*-------------------------------------------------------------------------
 *
 * budget.h
 *	  Charging a release to the privacy budget of the logged-in role.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_BUDGET_H
#define ULDP_BUDGET_H

/*
 * The ledger records epsilon and delta as numerics of 15 significant
 * digits, which can be below the float8 values by 5e-16 of them.  The
 * mechanisms spend epsilon * ULDP_SPEND_MARGIN (and delta likewise), so they
 * never spend more than was charged.
 */
#define ULDP_SPEND_MARGIN (1.0 - 0x1p-40)

extern void uldp_charge(const char *functions, double epsilon, double delta,
						const char *statement);

#endif							/* ULDP_BUDGET_H */

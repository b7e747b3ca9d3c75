/*-------------------------------------------------------------------------
 *
 * dropguard.h
 *	  Refusing to drop the budgets and the ledger while they hold rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_DROPGUARD_H
#define ULDP_DROPGUARD_H

extern bool uldp_allow_drop;

extern void uldp_dropguard_init(void);

#endif							/* ULDP_DROPGUARD_H */

/*-------------------------------------------------------------------------
 *
 * finalagg.h
 *	  The final aggregation of a parallel GROUP BY over releases.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_FINALAGG_H
#define ULDP_FINALAGG_H

extern void uldp_final_agg_init(void);

#endif							/* ULDP_FINALAGG_H */

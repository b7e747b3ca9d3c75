/*-------------------------------------------------------------------------
 *
 * safe_arith.h
 *	  Error-free arithmetic and casts for queries on protected tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ULDP_SAFE_ARITH_H
#define ULDP_SAFE_ARITH_H

/*
 * The operation, passed as the first argument of uldp._safe_arith_<type>.
 * The unary operations read only the second operand.
 */
typedef enum SafeArithOp
{
	SAFE_ADD = 1,
	SAFE_SUB,
	SAFE_MUL,
	SAFE_DIV,
	SAFE_MOD,
	SAFE_NEG,
	SAFE_ABS
} SafeArithOp;

#endif							/* ULDP_SAFE_ARITH_H */

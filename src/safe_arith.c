/*-------------------------------------------------------------------------
 *
 * safe_arith.c
 *	  Arithmetic and casts that return NULL where PostgreSQL's raise errors.
 *
 * A query on a protected table may filter and transform rows before they
 * reach a uldp aggregate, and that happens before any budget is charged.
 * If a built-in operator could fail on some row (1 / (x - 4), an integer
 * overflow, a numeric too large for float8), whether the query fails would
 * reveal a value.  The query gate (safe_expr.c) therefore replaces every such
 * operator and cast by one of these functions: same result type, same result
 * whenever the built-in succeeds, NULL where it would raise an error.  NULL
 * then behaves as any NULL does: the filter is not true, and the row's value
 * is skipped by the aggregate.
 *
 * The semantics follow PostgreSQL 15's float.h, int.c, int8.c and numeric.c
 * operation by operation; the comments name what differs (only errors do).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <errno.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/regproc.h"

#include "safe_arith.h"

PG_FUNCTION_INFO_V1(uldp_safe_arith);
PG_FUNCTION_INFO_V1(uldp_safe_cast);

#define SAFE_INTERNAL_HINT \
	"uldp._safe_arith_* and uldp._safe_cast_* are internal functions of the query gate; use the built-in operators and casts, which the gate rewrites to them."

/*
 * The result and argument types of this call site, looked up once: "any"
 * arguments make them a property of the expression, not of the function.
 */
typedef struct CallTypes
{
	Oid			result;
	Oid			arg[3];
} CallTypes;

/* The types that safe arithmetic on a result of type "result" reads. */
static bool
is_operand_type(Oid type, Oid result)
{
	switch (result)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return type == INT2OID || type == INT4OID || type == INT8OID;
		case FLOAT4OID:
		case FLOAT8OID:
			return type == FLOAT4OID || type == FLOAT8OID;
		case NUMERICOID:
			return type == NUMERICOID;
	}
	return false;
}

/*
 * The types of a call of uldp._safe_arith_<type> or uldp._safe_cast_<type>
 * are those of the gate's rewritten operators: anything else (they are
 * callable by anyone, with "any" arguments) would have the datums read as
 * the wrong type.  Checked once per call site, before any argument is read.
 */
static void
check_call_types(FunctionCallInfo fcinfo, const CallTypes *types, bool cast)
{
	bool		valid;

	if (cast)
		valid = (types->result == INT2OID || types->result == INT4OID ||
				 types->result == INT8OID || types->result == FLOAT4OID ||
				 types->result == FLOAT8OID) &&
			(is_operand_type(types->arg[0], INT8OID) ||
			 is_operand_type(types->arg[0], FLOAT8OID) ||
			 is_operand_type(types->arg[0], NUMERICOID));
	else
		/* a unary operation's first operand is the gate's int4 placeholder */
		valid = types->arg[0] == INT4OID &&
			(is_operand_type(types->arg[1], types->result) || types->arg[1] == INT4OID) &&
			is_operand_type(types->arg[2], types->result);
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("function %s cannot take arguments of type %s",
						format_procedure(fcinfo->flinfo->fn_oid),
						cast ? format_type_be(types->arg[0])
						: psprintf("%s, %s and %s", format_type_be(types->arg[0]),
								   format_type_be(types->arg[1]),
								   format_type_be(types->arg[2]))),
				 errhint(SAFE_INTERNAL_HINT)));
}

static CallTypes *
call_types(FunctionCallInfo fcinfo, bool cast)
{
	CallTypes  *types = (CallTypes *) fcinfo->flinfo->fn_extra;

	if (types == NULL)
	{
		CallTypes	found;

		found.result = get_fn_expr_rettype(fcinfo->flinfo);
		for (int i = 0; i < lengthof(found.arg); i++)
			found.arg[i] = i < PG_NARGS() ? get_fn_expr_argtype(fcinfo->flinfo, i) : InvalidOid;
		check_call_types(fcinfo, &found, cast);
		types = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(CallTypes));
		*types = found;
		fcinfo->flinfo->fn_extra = types;
	}
	return types;
}

/* An integer argument of type int2, int4 or int8, widened. */
static int64
int_arg(FunctionCallInfo fcinfo, int argno, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return PG_GETARG_INT16(argno);
		case INT4OID:
			return PG_GETARG_INT32(argno);
		case INT8OID:
			return PG_GETARG_INT64(argno);
	}
	elog(ERROR, "uldp: unexpected argument type for integer arithmetic");
	return 0;
}

/* A float argument of type float4 or float8, widened (exactly). */
static float8
float_arg(FunctionCallInfo fcinfo, int argno, Oid type)
{
	switch (type)
	{
		case FLOAT4OID:
			return PG_GETARG_FLOAT4(argno);
		case FLOAT8OID:
			return PG_GETARG_FLOAT8(argno);
	}
	elog(ERROR, "uldp: unexpected argument type for float arithmetic");
	return 0;
}

/* Does v fit the integer type? */
static bool
int_fits(int64 v, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return v >= PG_INT16_MIN && v <= PG_INT16_MAX;
		case INT4OID:
			return v >= PG_INT32_MIN && v <= PG_INT32_MAX;
		default:
			return true;
	}
}

static Datum
int_datum(int64 v, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		default:
			return Int64GetDatum(v);
	}
}

/*
 * a op b in 64 bits; false on overflow or division by zero.  Mixed and
 * narrow types widen exactly, so the caller's range check on the result type
 * is where int2 and int4 overflow show.
 */
static bool
int_arith(SafeArithOp op, int64 a, int64 b, int64 *result)
{
	switch (op)
	{
		case SAFE_ADD:
			return !__builtin_add_overflow(a, b, result);
		case SAFE_SUB:
			return !__builtin_sub_overflow(a, b, result);
		case SAFE_MUL:
			return !__builtin_mul_overflow(a, b, result);
		case SAFE_DIV:
			if (b == 0)
				return false;
			if (b == -1)		/* INT64_MIN / -1 overflows */
				return !__builtin_sub_overflow((int64) 0, a, result);
			*result = a / b;
			return true;
		case SAFE_MOD:
			if (b == 0)
				return false;
			*result = (b == -1) ? 0 : a % b;	/* as int4mod: INT_MIN % -1 is 0 */
			return true;
		case SAFE_NEG:
			return !__builtin_sub_overflow((int64) 0, b, result);
		case SAFE_ABS:
			if (b < 0)
				return !__builtin_sub_overflow((int64) 0, b, result);
			*result = b;
			return true;
	}
	return false;
}

/*
 * a op b in double; false where float.h raises overflow, underflow or
 * division by zero.  For float4 operands the caller rounds the result to
 * float4 and checks again: with 53 >= 2 * 24 + 2 bits, rounding the double
 * result gives exactly the float4 operation's result.
 */
static bool
float_arith(SafeArithOp op, float8 a, float8 b, float8 *result)
{
	switch (op)
	{
		case SAFE_ADD:
			*result = a + b;
			break;
		case SAFE_SUB:
			*result = a - b;
			break;
		case SAFE_MUL:
			*result = a * b;
			break;
		case SAFE_DIV:
			if (b == 0.0 && !isnan(a))	/* NaN / 0 is NaN */
				return false;
			*result = a / b;
			break;
		case SAFE_NEG:
			*result = -b;
			return true;
		case SAFE_ABS:
			*result = fabs(b);
			return true;
		default:
			elog(ERROR, "uldp: operation %d is not defined for floats", op);
	}
	return true;
}

/* Would float.h have raised an error for a op b = r (r in the result type)? */
static bool
float_result_ok(SafeArithOp op, float8 a, float8 b, float8 r)
{
	switch (op)
	{
		case SAFE_ADD:
		case SAFE_SUB:
			return !(isinf(r) && !isinf(a) && !isinf(b));
		case SAFE_MUL:
			return !(isinf(r) && !isinf(a) && !isinf(b)) &&
				!(r == 0.0 && a != 0.0 && b != 0.0);
		case SAFE_DIV:
			return !(isinf(r) && !isinf(a)) &&
				!(r == 0.0 && a != 0.0 && !isinf(b));
		default:
			return true;
	}
}

/*
 * Is op an operation of uldp._safe_arith_<type> on these types?  The unary
 * operations read only the second operand.
 */
static bool
is_valid_operation(SafeArithOp op, const CallTypes *types)
{
	switch (op)
	{
		case SAFE_ADD:
		case SAFE_SUB:
		case SAFE_MUL:
		case SAFE_DIV:
			return is_operand_type(types->arg[1], types->result);
		case SAFE_MOD:
			/* as in PostgreSQL, there is no float modulo */
			return is_operand_type(types->arg[1], types->result) &&
				types->result != FLOAT4OID && types->result != FLOAT8OID;
		case SAFE_NEG:
		case SAFE_ABS:
			return true;
	}
	return false;
}

/*
 * uldp._safe_arith_<type>(op integer, a "any", b "any") returns <type>
 */
Datum
uldp_safe_arith(PG_FUNCTION_ARGS)
{
	SafeArithOp op = (SafeArithOp) PG_GETARG_INT32(0);
	const CallTypes *types = call_types(fcinfo, false);
	Oid			rettype = types->result;
	bool		unary = op == SAFE_NEG || op == SAFE_ABS;

	/* op need not be a constant: check it on every call */
	if (!is_valid_operation(op, types))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("function %s has no operation %d on arguments of type %s and %s",
						format_procedure(fcinfo->flinfo->fn_oid), (int) op,
						format_type_be(types->arg[1]), format_type_be(types->arg[2])),
				 errhint(SAFE_INTERNAL_HINT)));

	switch (rettype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			{
				int64		a = unary ? 0 : int_arg(fcinfo, 1, types->arg[1]);
				int64		b = int_arg(fcinfo, 2, types->arg[2]);
				int64		result;

				if (!int_arith(op, a, b, &result) || !int_fits(result, rettype))
					PG_RETURN_NULL();
				return int_datum(result, rettype);
			}
		case FLOAT4OID:
		case FLOAT8OID:
			{
				float8		a = unary ? 0 : float_arg(fcinfo, 1, types->arg[1]);
				float8		b = float_arg(fcinfo, 2, types->arg[2]);
				float8		result;

				if (!float_arith(op, a, b, &result))
					PG_RETURN_NULL();
				if (rettype == FLOAT4OID)
					result = (float4) result;
				if (!float_result_ok(op, a, b, result))
					PG_RETURN_NULL();
				return rettype == FLOAT4OID ? Float4GetDatum((float4) result) : Float8GetDatum(result);
			}
		case NUMERICOID:
			{
				Numeric		a = unary ? NULL : PG_GETARG_NUMERIC(1);
				Numeric		b = PG_GETARG_NUMERIC(2);
				Numeric		result = NULL;
				bool		failed = false;

				switch (op)
				{
					case SAFE_ADD:
						result = numeric_add_opt_error(a, b, &failed);
						break;
					case SAFE_SUB:
						result = numeric_sub_opt_error(a, b, &failed);
						break;
					case SAFE_MUL:
						result = numeric_mul_opt_error(a, b, &failed);
						break;
					case SAFE_DIV:
						result = numeric_div_opt_error(a, b, &failed);
						break;
					case SAFE_MOD:
						result = numeric_mod_opt_error(a, b, &failed);
						break;
					case SAFE_NEG:
						return DirectFunctionCall1(numeric_uminus, NumericGetDatum(b));
					case SAFE_ABS:
						return DirectFunctionCall1(numeric_abs, NumericGetDatum(b));
				}
				if (failed || result == NULL)
					PG_RETURN_NULL();
				PG_RETURN_NUMERIC(result);
			}
	}
	elog(ERROR, "uldp: unexpected result type for safe arithmetic");
	PG_RETURN_NULL();
}

/* numeric to int64 as numeric_int8 rounds it; false if out of range, NaN or infinite */
static bool
numeric_to_int64(Numeric num, int64 *result)
{
	Datum		rounded;

	if (numeric_is_nan(num) || numeric_is_inf(num))
		return false;
	rounded = DirectFunctionCall2(numeric_round, NumericGetDatum(num), Int32GetDatum(0));
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, rounded,
										  NumericGetDatum(int64_to_numeric(PG_INT64_MIN)))) < 0 ||
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, rounded,
										  NumericGetDatum(int64_to_numeric(PG_INT64_MAX)))) > 0)
		return false;
	*result = DatumGetInt64(DirectFunctionCall1(numeric_int8, rounded));
	return true;
}

/*
 * uldp._safe_cast_<type>(value "any") returns <type>: the built-in cast from
 * int2/int4/int8/float4/float8/numeric, NULL where it would raise an error.
 */
Datum
uldp_safe_cast(PG_FUNCTION_ARGS)
{
	const CallTypes *types = call_types(fcinfo, true);
	Oid			target = types->result;
	Oid			source = types->arg[0];

	if (target == INT2OID || target == INT4OID || target == INT8OID)
	{
		int64		v;

		switch (source)
		{
			case INT2OID:
			case INT4OID:
			case INT8OID:
				v = int_arg(fcinfo, 0, source);
				break;
			case FLOAT4OID:
			case FLOAT8OID:
				{
					/* as dtoi4 and ftoi4: round to nearest even, then range check */
					float8		f = rint(float_arg(fcinfo, 0, source));

					if (isnan(f) || !FLOAT8_FITS_IN_INT64(f))
						PG_RETURN_NULL();
					v = (int64) f;
					break;
				}
			case NUMERICOID:
				if (!numeric_to_int64(PG_GETARG_NUMERIC(0), &v))
					PG_RETURN_NULL();
				break;
			default:
				elog(ERROR, "uldp: unexpected source type for a safe cast");
				v = 0;
		}
		if (!int_fits(v, target))
			PG_RETURN_NULL();
		return int_datum(v, target);
	}

	if (target == FLOAT4OID || target == FLOAT8OID)
	{
		float8		v;

		switch (source)
		{
			case INT2OID:
			case INT4OID:
			case INT8OID:
				/* int8 to float4 rounds once, directly, as i8tof does */
				if (target == FLOAT4OID)
					return Float4GetDatum((float4) int_arg(fcinfo, 0, source));
				return Float8GetDatum((float8) int_arg(fcinfo, 0, source));
			case FLOAT4OID:
			case FLOAT8OID:
				v = float_arg(fcinfo, 0, source);
				break;
			case NUMERICOID:
				{
					Numeric		num = PG_GETARG_NUMERIC(0);
					char	   *text;
					bool		failed = false;

					if (numeric_is_nan(num))
						v = get_float8_nan();
					else if (numeric_is_inf(num))
						v = DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(num)));
					else if (target == FLOAT4OID)
					{
						/* as float4in: strtof, out of range if it over- or underflows */
						float4		f;

						text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
						errno = 0;
						f = strtof(text, NULL);
						if (errno == ERANGE && (f == 0.0f || isinf(f)))
							PG_RETURN_NULL();
						return Float4GetDatum(f);
					}
					else
					{
						text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
						v = float8in_internal_opt_error(text, NULL, "double precision", text, &failed);
						if (failed)
							PG_RETURN_NULL();
					}
					break;
				}
			default:
				elog(ERROR, "uldp: unexpected source type for a safe cast");
				v = 0;
		}
		if (target == FLOAT4OID)
		{
			/* as dtof: overflow and underflow are errors */
			float4		f = (float4) v;

			if ((isinf(f) && !isinf(v)) || (f == 0.0f && v != 0.0))
				PG_RETURN_NULL();
			return Float4GetDatum(f);
		}
		return Float8GetDatum(v);
	}
	elog(ERROR, "uldp: unexpected target type for a safe cast");
	PG_RETURN_NULL();
}

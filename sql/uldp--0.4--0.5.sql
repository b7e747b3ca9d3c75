-- uldp 0.4 -> 0.5: the questions analysts ask.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.5'" to load this file. \quit

-- user_dp_count ----------------------------------------------------------------
--
-- The number of distinct users, with discrete Laplace noise (sensitivity 1),
-- never negative; user_dp_count_ci adds a 95% interval computed from the same
-- noise (no extra charge).  Their state is the scalar aggregates' per-user
-- table, so they combine and serialize the same way.

CREATE TYPE uldp.count_estimate AS (estimate bigint, ci_lower bigint, ci_upper bigint);

CREATE FUNCTION uldp.user_count_transfn(internal, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_count_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.count_finalfn(internal)
	RETURNS bigint AS 'MODULE_PATHNAME', 'uldp_count_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.count_ci_finalfn(internal)
	RETURNS uldp.count_estimate AS 'MODULE_PATHNAME', 'uldp_count_ci_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_count(user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_count_transfn, STYPE = internal, FINALFUNC = uldp.count_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_count_ci(user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_count_transfn, STYPE = internal, FINALFUNC = uldp.count_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

-- user_dp_quantile (issue 12) ------------------------------------------------
--
-- The q-quantile of the rows, where the rows of each user together weigh one:
-- a noisy user count (epsilon / 10), then an exponential mechanism on a
-- floating-point grid (the rest).  The state keeps every row (user key and
-- value, src/quantstate.c): a user's weight is known only once all partial
-- states are combined.  Booleans count as 0 and 1; NULL for a bound means
-- that it is not given.

CREATE FUNCTION uldp.quantile_transfn(internal, float8, anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_transfn(internal, float8, anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_transfn(internal, boolean, anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_bool_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_transfn(internal, boolean, anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_bool_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_combinefn(internal, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_combinefn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_serialfn(internal)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_quantile_serialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_deserialfn(bytea, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_quantile_deserialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.quantile_finalfn(internal)
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_quantile_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_quantile(value float8, user_id anyelement, epsilon float8, q float8) (
	SFUNC = uldp.quantile_transfn, STYPE = internal, FINALFUNC = uldp.quantile_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.quantile_combinefn,
	SERIALFUNC = uldp.quantile_serialfn, DESERIALFUNC = uldp.quantile_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_quantile(value float8, user_id anyelement, epsilon float8, q float8,
								  lower float8, upper float8) (
	SFUNC = uldp.quantile_transfn, STYPE = internal, FINALFUNC = uldp.quantile_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.quantile_combinefn,
	SERIALFUNC = uldp.quantile_serialfn, DESERIALFUNC = uldp.quantile_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_quantile(value boolean, user_id anyelement, epsilon float8, q float8) (
	SFUNC = uldp.quantile_transfn, STYPE = internal, FINALFUNC = uldp.quantile_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.quantile_combinefn,
	SERIALFUNC = uldp.quantile_serialfn, DESERIALFUNC = uldp.quantile_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_quantile(value boolean, user_id anyelement, epsilon float8, q float8,
								  lower float8, upper float8) (
	SFUNC = uldp.quantile_transfn, STYPE = internal, FINALFUNC = uldp.quantile_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.quantile_combinefn,
	SERIALFUNC = uldp.quantile_serialfn, DESERIALFUNC = uldp.quantile_deserialfn, PARALLEL = SAFE);

-- uldp.cost -------------------------------------------------------------------
--
-- What a query would charge, without running it: planned and prepared as
-- when it runs (so it is refused the same way), nothing read.

CREATE FUNCTION uldp.cost(query text, OUT epsilon float8, OUT delta float8)
	AS 'MODULE_PATHNAME', 'uldp_cost' LANGUAGE C STRICT VOLATILE;

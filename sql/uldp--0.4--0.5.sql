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

-- user_dp_sum, the _ci twins, boolean values ---------------------------------
--
-- user_dp_sum releases the sum of the users' totals (each user's rows added
-- up, then clipped: to [lower, upper] when given, to a privately chosen
-- interval otherwise).  The _ci twins release the same estimate with a 95%
-- interval computed from the noise's law (no extra charge).  Boolean values
-- count as 0 and 1 (a boolean mean has the bounds [0, 1] when none are
-- given); integers, numeric and real values cast to float8 implicitly.
-- NULL for lower, upper or tau means "not given".

CREATE TYPE uldp.estimate AS (estimate float8, ci_lower float8, ci_upper float8);

CREATE FUNCTION uldp.user_bool_transfn(internal, boolean, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_bool_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_bool_transfn(internal, boolean, anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_bool_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_bool_transfn(internal, boolean, anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_bool_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_sum_transfn(internal, float8, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_sum_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_sum_transfn(internal, float8, anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_sum_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_bool_sum_transfn(internal, boolean, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_bool_sum_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_bool_sum_transfn(internal, boolean, anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_bool_sum_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.mean_ci_finalfn(internal)
	RETURNS uldp.estimate AS 'MODULE_PATHNAME', 'uldp_mean_ci_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.sum_finalfn(internal)
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_sum_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.sum_ci_finalfn(internal)
	RETURNS uldp.estimate AS 'MODULE_PATHNAME', 'uldp_sum_ci_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_mean(value boolean, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value boolean, user_id anyelement, epsilon float8,
                              lower float8, upper float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value boolean, user_id anyelement, epsilon float8,
                              lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value float8, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value float8, user_id anyelement, epsilon float8,
                                 lower float8, upper float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value float8, user_id anyelement, epsilon float8,
                                 lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value boolean, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value boolean, user_id anyelement, epsilon float8,
                                 lower float8, upper float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean_ci(value boolean, user_id anyelement, epsilon float8,
                                 lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_bool_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum(value float8, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum(value float8, user_id anyelement, epsilon float8,
                             lower float8, upper float8) (
	SFUNC = uldp.user_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum(value boolean, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_bool_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum(value boolean, user_id anyelement, epsilon float8,
                             lower float8, upper float8) (
	SFUNC = uldp.user_bool_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum_ci(value float8, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum_ci(value float8, user_id anyelement, epsilon float8,
                                lower float8, upper float8) (
	SFUNC = uldp.user_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum_ci(value boolean, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_bool_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sum_ci(value boolean, user_id anyelement, epsilon float8,
                                lower float8, upper float8) (
	SFUNC = uldp.user_bool_sum_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

-- uldp.cost -------------------------------------------------------------------
--
-- What a query would charge, without running it: planned and prepared as
-- when it runs (so it is refused the same way), nothing read.

CREATE FUNCTION uldp.cost(query text, OUT epsilon float8, OUT delta float8)
	AS 'MODULE_PATHNAME', 'uldp_cost' LANGUAGE C STRICT VOLATILE;

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

-- gate: the filters analysts write (issue 12) ---------------------------------
--
-- uldp._public_check(value) is true: the query gate adds it to the WHERE
-- clause of a release for each cast of a constant or parameter the release
-- makes, so that PostgreSQL evaluates the cast once, before the first row is
-- read: a cast that fails fails whatever the rows (src/safe_expr.c).

CREATE FUNCTION uldp._public_check(value anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_public_check' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

-- The gate rewrites the date and time arithmetic, date_trunc, date_part of a
-- date, age and the casts between dates and timestamps of releases on
-- protected tables to these: the built-in's result wherever it succeeds,
-- NULL where it would raise an error (src/safe_time.c).  Like the other
-- _safe_ functions they are internal, and executable by everyone.

CREATE FUNCTION uldp._safe_time_add(value timestamp, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_add(value timestamptz, span interval) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_add' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_add(value date, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_add_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_add(value date, days integer) RETURNS date
	AS 'MODULE_PATHNAME', 'uldp_safe_date_add_days' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_add(value interval, span interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value timestamp, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value timestamptz, span interval) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_sub' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value date, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value date, days integer) RETURNS date
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_days' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value interval, span interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value date, other date) RETURNS integer
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value timestamp, other timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_sub(value timestamptz, other timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_time_neg(value interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_neg' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uldp._safe_date_trunc(field text, value timestamp) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_trunc' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_date_trunc(field text, value timestamptz) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_date_trunc_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_date_part(field text, value date) RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_date_part_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_age(value timestamp, other timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_age(value timestamptz, other timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_age(value timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_today' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_age(value timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_today_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uldp._safe_cast_timestamp(value date) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_timestamp(value timestamptz) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_timestamptz(value date) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_date_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_timestamptz(value timestamp) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- And LIKE, ILIKE, lower and upper to these (src/safe_text.c); the gate adds
-- uldp._like_pattern_check(pattern) to the WHERE clause as it adds
-- _public_check: it raises LIKE's error for a pattern that ends in an escape.

CREATE FUNCTION uldp._like_pattern_check(pattern text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_like_pattern_check' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_like(value text, pattern text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_safe_like' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_ilike(value text, pattern text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_safe_ilike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_lower(value text) RETURNS text
	AS 'MODULE_PATHNAME', 'uldp_safe_lower' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_upper(value text) RETURNS text
	AS 'MODULE_PATHNAME', 'uldp_safe_upper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- learning: small n, one-hot features, boolean labels (issue 12) ---------------
--
-- user_dp_sgd with a boolean label (true = 1, false = 0: the labels of logistic
-- regression).  The transition function reads the label by its declared type;
-- the final function, and so the release's plan, are those of user_dp_sgd.

CREATE FUNCTION uldp.sgd_transfn(internal, float8[], boolean, anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_sgd_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.sgd_transfn(internal, float8[], boolean, anyelement, float8, float8, jsonb)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_sgd_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_sgd(features float8[], label boolean, user_id anyelement,
							 epsilon float8, delta float8) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sgd(features float8[], label boolean, user_id anyelement,
							 epsilon float8, delta float8, options jsonb) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);

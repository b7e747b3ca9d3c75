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

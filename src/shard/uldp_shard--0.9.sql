/* src/shard/uldp_shard--0.9.sql */

\echo Use "CREATE EXTENSION uldp_shard" to load this file. \quit

-- What a shard runs for a uldp coordinator (doc/scale-out.md): aggregates
-- that group a partition's rows by user and return each user's row count
-- and sum, serialized, for the coordinator to merge and release.  Nothing
-- here adds noise, charges a budget or releases anything: the per-user
-- state is exact, so only the coordinator's user mapping may reach it.

REVOKE ALL ON SCHEMA uldp_shard FROM PUBLIC;

CREATE FUNCTION uldp_shard.rows_transfn(internal, float8, anyelement, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_transfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_bool_transfn(internal, boolean, anyelement, float8, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_bool_transfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_finalfn(internal, float8, anyelement, float8, float8)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_rows_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_bool_finalfn(internal, boolean, anyelement, float8, float8)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_rows_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_combinefn(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_combinefn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_serialfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_rows_serialfn'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_deserialfn(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_deserialfn'
LANGUAGE C STRICT PARALLEL SAFE;

-- user_rows(value, user_id, lower, upper): each user's number of rows and
-- the sum of its values clamped to [lower, upper] (rows whose value or user
-- id is NULL, or whose value is NaN, are skipped), as a per-user state:
-- the input of the coordinator's merge.  Empty input gives a state with no
-- users, never NULL.
CREATE AGGREGATE uldp_shard.user_rows(float8, anyelement, float8, float8) (
    SFUNC = uldp_shard.rows_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.rows_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

CREATE AGGREGATE uldp_shard.user_rows(boolean, anyelement, float8, float8) (
    SFUNC = uldp_shard.rows_bool_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.rows_bool_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

-- state_summary(state): what a per-user state holds, for the DBA checking a
-- shard: its users, their rows and the sum of their sums.
CREATE FUNCTION uldp_shard.state_summary(state bytea,
    OUT users bigint, OUT rows numeric, OUT total float8)
AS 'MODULE_PATHNAME', 'uldp_shard_state_summary'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA uldp_shard FROM PUBLIC;

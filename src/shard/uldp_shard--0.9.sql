/* src/shard/uldp_shard--0.9.sql */

\echo Use "CREATE EXTENSION uldp_shard" to load this file. \quit

-- What a shard runs for a uldp coordinator (doc/scale-out.md): aggregates
-- that group a partition's rows by user and return each user's row count
-- and sum, serialized, for the coordinator to merge and release.  Nothing
-- here adds noise, charges a budget or releases anything: the per-user
-- state is exact, so only the coordinator's user mapping may reach it.

REVOKE ALL ON SCHEMA uldp_shard FROM PUBLIC;

CREATE FUNCTION uldp_shard.rows_transfn(internal, float8, anyelement, float8, float8, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_transfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_bool_transfn(internal, boolean, anyelement, float8, float8, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_rows_bool_transfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_finalfn(internal, float8, anyelement, float8, float8, bigint)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_rows_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION uldp_shard.rows_bool_finalfn(internal, boolean, anyelement, float8, float8, bigint)
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

-- user_rows(value, user_id, lower, upper, max_rows): each user's number of
-- rows and the sum of its values clamped to [lower, upper] (rows whose
-- value or user id is NULL, or whose value is NaN, are skipped), as a
-- per-user state: the input of the coordinator's merge.  Empty input gives
-- a state with no users, never NULL.  Unless max_rows is NULL, it fails,
-- whatever the rows, when the tables it reads could hold more than max_rows
-- rows by their size on disk: the coordinator's bound of its memory.
CREATE AGGREGATE uldp_shard.user_rows(float8, anyelement, float8, float8, bigint) (
    SFUNC = uldp_shard.rows_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.rows_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

CREATE AGGREGATE uldp_shard.user_rows(boolean, anyelement, float8, float8, bigint) (
    SFUNC = uldp_shard.rows_bool_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.rows_bool_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

-- user_sums(value, user_id, lower, upper, average, modulus, remainder,
-- max_rows): for releases with public bounds, the number of users of the
-- hash partition FOR VALUES WITH (MODULUS modulus, REMAINDER remainder)
-- (modulus 1: every user) and the exact fixed-point sum of their values,
-- each user's average (average true: rows clamped to [lower, upper]) or
-- total (rows kept whole), clamped to [lower, upper], on the grid of a
-- release with these bounds; NULL and NaN values are skipped, and so are
-- the users PostgreSQL routes to other partitions (see partition_member).
-- It is all the coordinator needs, since the shards' users are then
-- disjoint, and it does not grow with the users.  Every argument but the
-- value and the user id must be a constant; max_rows is user_rows'.
CREATE FUNCTION uldp_shard.sums_transfn(internal, float8, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_sums_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.sums_bool_transfn(internal, boolean, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_sums_bool_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.sums_finalfn(internal, float8, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_sums_finalfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.sums_bool_finalfn(internal, boolean, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_sums_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE uldp_shard.user_sums(float8, anyelement, float8, float8, boolean, integer, integer, bigint) (
    SFUNC = uldp_shard.sums_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.sums_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

CREATE AGGREGATE uldp_shard.user_sums(boolean, anyelement, float8, float8, boolean, integer, integer, bigint) (
    SFUNC = uldp_shard.sums_bool_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.sums_bool_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

-- user_values(value, user_id, lower, upper, average, modulus, remainder,
-- max_rows): for releases that choose their interval from the users' values
-- (without both bounds, or with tau), the values of the users of the hash
-- partition (as user_sums keeps them), each user's average (average true:
-- rows clamped to [lower, upper]) or total, clamped to [lower, upper], in
-- ascending order and without ids (the shards' users are disjoint): the
-- coordinator merges these sorted runs.  Arguments as user_sums'.
CREATE FUNCTION uldp_shard.values_transfn(internal, float8, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_values_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.values_bool_transfn(internal, boolean, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_values_bool_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.values_finalfn(internal, float8, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_values_finalfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.values_bool_finalfn(internal, boolean, anyelement, float8, float8, boolean, integer, integer, bigint)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_values_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE uldp_shard.user_values(float8, anyelement, float8, float8, boolean, integer, integer, bigint) (
    SFUNC = uldp_shard.values_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.values_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

CREATE AGGREGATE uldp_shard.user_values(boolean, anyelement, float8, float8, boolean, integer, integer, bigint) (
    SFUNC = uldp_shard.values_bool_transfn,
    STYPE = internal,
    FINALFUNC = uldp_shard.values_bool_finalfn,
    FINALFUNC_EXTRA,
    COMBINEFUNC = uldp_shard.rows_combinefn,
    SERIALFUNC = uldp_shard.rows_serialfn,
    DESERIALFUNC = uldp_shard.rows_deserialfn,
    PARALLEL = SAFE
);

-- partition_member(user_id, modulus, remainder): whether PostgreSQL routes
-- user_id to the hash partition FOR VALUES WITH (MODULUS modulus, REMAINDER
-- remainder) of a table partitioned by hash on that one column (with the
-- type's default hash operator class): the test user_sums applies, for a
-- DBA looking for rows written on the wrong shard.
CREATE FUNCTION uldp_shard.partition_member(user_id anyelement, modulus integer, remainder integer)
RETURNS boolean AS 'MODULE_PATHNAME', 'uldp_shard_partition_member'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- For grouped releases, grouped by the coordinator's query on the keys:
-- user_pairs(user_id, max_rows, VARIADIC slots) is, for one group, every
-- user with rows there and its value for each slot, five arguments per
-- release: kind ('mean', 'total' or 'any'), value (float8 or boolean),
-- filter (boolean), lower and upper (a mean's bounds).  A mean is the mean
-- of the user's rows that pass the filter, clamped to [lower, upper]; a
-- total their total (rows clamped to +-1e300); 'any' whether a row passes.
-- NULL and NaN values are skipped, and no error depends on a row; the
-- aggregate fails, at the first row, when the tables it reads could hold
-- more than max_rows rows.  Its value is read by the coordinator only.
-- Without slots (counts without FILTER), only the users.
CREATE FUNCTION uldp_shard.pairs_transfn(internal, anyelement, bigint, VARIADIC "any")
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_pairs_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.pairs_transfn(internal, anyelement, bigint)
RETURNS internal AS 'MODULE_PATHNAME', 'uldp_shard_pairs_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.pairs_finalfn(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_shard_pairs_finalfn'
LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE uldp_shard.user_pairs(user_id anyelement, max_rows bigint, VARIADIC slots "any") (
    SFUNC = uldp_shard.pairs_transfn, STYPE = internal, FINALFUNC = uldp_shard.pairs_finalfn,
    PARALLEL = SAFE);
CREATE AGGREGATE uldp_shard.user_pairs(user_id anyelement, max_rows bigint) (
    SFUNC = uldp_shard.pairs_transfn, STYPE = internal, FINALFUNC = uldp_shard.pairs_finalfn,
    PARALLEL = SAFE);

-- partition_check(max_rows): 0, or an error when the tables it reads could
-- hold more than max_rows rows; the coordinator runs it over no rows, so
-- that the check never depends on them.
CREATE FUNCTION uldp_shard.partition_check_transfn(bigint, bigint)
RETURNS bigint AS 'MODULE_PATHNAME', 'uldp_shard_partition_check_transfn'
LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION uldp_shard.partition_check_finalfn(bigint)
RETURNS bigint AS 'MODULE_PATHNAME', 'uldp_shard_partition_check_finalfn'
LANGUAGE C PARALLEL SAFE;
CREATE AGGREGATE uldp_shard.partition_check(max_rows bigint) (
    SFUNC = uldp_shard.partition_check_transfn, STYPE = bigint,
    FINALFUNC = uldp_shard.partition_check_finalfn, PARALLEL = SAFE);

-- state_summary(state): what a per-user state holds, for the DBA checking a
-- shard: its users, their rows and the sum of their sums; for a partition's
-- sums (user_sums), its users, NULL rows and the sum of their clipped values;
-- for its sorted values (user_values), its users, NULL rows and the sum of
-- their values.
CREATE FUNCTION uldp_shard.state_summary(state bytea,
    OUT users bigint, OUT rows numeric, OUT total float8)
AS 'MODULE_PATHNAME', 'uldp_shard_state_summary'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- The filter functions of uldp's query gate (uldp's src/safe_*.c, compiled
-- here too): what a release's filter and values become on the coordinator,
-- so that they ship to the shards, where they return the same values.  Each
-- returns NULL where the built-in it replaces would raise an error.
CREATE FUNCTION uldp_shard._safe_arith_int2(integer, "any", "any") RETURNS int2
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_arith_int4(integer, "any", "any") RETURNS int4
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_arith_int8(integer, "any", "any") RETURNS int8
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_arith_float4(integer, "any", "any") RETURNS float4
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_arith_float8(integer, "any", "any") RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_arith_numeric(integer, "any", "any") RETURNS numeric
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_int2("any") RETURNS int2
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_int4("any") RETURNS int4
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_int8("any") RETURNS int8
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_float4("any") RETURNS float4
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_float8("any") RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_add(value timestamp, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_add(value timestamptz, span interval) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_add' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_add(value date, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_add_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_add(value date, days integer) RETURNS date
	AS 'MODULE_PATHNAME', 'uldp_safe_date_add_days' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_add(value interval, span interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value timestamp, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value timestamptz, span interval) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_sub' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value date, span interval) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value date, days integer) RETURNS date
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_days' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value interval, span interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value date, other date) RETURNS integer
	AS 'MODULE_PATHNAME', 'uldp_safe_date_sub_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value timestamp, other timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_sub(value timestamptz, other timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_sub_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_time_neg(value interval) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_interval_neg' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_date_trunc(field text, value timestamp) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_trunc' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_date_trunc(field text, value timestamptz) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_date_trunc_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_date_part(field text, value date) RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_date_part_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_age(value timestamp, other timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_age(value timestamptz, other timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_age(value timestamp) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_today' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_age(value timestamptz) RETURNS interval
	AS 'MODULE_PATHNAME', 'uldp_safe_age_today_tz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_timestamp(value date) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_date_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_timestamp(value timestamptz) RETURNS timestamp
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamptz_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_timestamptz(value date) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_date_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_cast_timestamptz(value timestamp) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uldp_safe_timestamp_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_like(value text, pattern text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_safe_like' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_ilike(value text, pattern text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'uldp_safe_ilike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_lower(value text) RETURNS text
	AS 'MODULE_PATHNAME', 'uldp_safe_lower' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp_shard._safe_upper(value text) RETURNS text
	AS 'MODULE_PATHNAME', 'uldp_safe_upper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA uldp_shard FROM PUBLIC;

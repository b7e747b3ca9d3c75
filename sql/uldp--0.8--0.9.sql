-- uldp 0.8 -> 0.9: releases over shards (doc/scale-out.md).  A table
-- partitioned by its privacy unit into postgres_fdw partitions keeps its
-- rows on shards that run the extension uldp_shard; each shard returns its
-- partition's per-user state (uldp_shard.user_rows), or for counts and
-- releases with bounds only its users and the sum of their clipped values
-- (uldp_shard.user_sums), and these aggregates merge the states by user id
-- (or add the sums) and release exactly as the aggregates of the same name
-- release over local rows: same final functions, same charge.
-- Their first argument is a shard's state, their second a NULL of the
-- table's user id type, then the release's own parameters.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.9'" to load this file. \quit

CREATE FUNCTION uldp.user_merge_transfn(internal, bytea, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_merge_transfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_merge_transfn(internal, bytea, anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_merge_transfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_merge_transfn(internal, bytea, anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_merge_transfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE uldp.user_dp_mean(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_mean(state bytea, user_id anyelement, epsilon float8,
								   lower float8, upper float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_mean(state bytea, user_id anyelement, epsilon float8,
								   lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE uldp.user_dp_sum(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_sum(state bytea, user_id anyelement, epsilon float8,
								  lower float8, upper float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.sum_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE uldp.user_dp_count(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.count_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

-- The _ci twins and user_dp_range over states: the same final functions
-- as over rows (their intervals and ranges are computed from what the
-- release paid for, as locally).
CREATE AGGREGATE uldp.user_dp_mean_ci(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_mean_ci(state bytea, user_id anyelement, epsilon float8,
									  lower float8, upper float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_mean_ci(state bytea, user_id anyelement, epsilon float8,
									  lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.mean_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE uldp.user_dp_sum_ci(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_sum_ci(state bytea, user_id anyelement, epsilon float8,
									 lower float8, upper float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.sum_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE uldp.user_dp_count_ci(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.count_ci_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE uldp.user_dp_range(state bytea, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_range(state bytea, user_id anyelement, epsilon float8,
									lower float8, upper float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE uldp.user_dp_range(state bytea, user_id anyelement, epsilon float8,
									lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_merge_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

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

-- Grouped releases over shards (src/shardgroups.c): each shard returns,
-- for each group of its partition, its users and their values
-- (uldp_shard.user_pairs), read back as one row per user by these
-- set-returning functions, called in one target list: the n-th row of each
-- is the n-th user's.  pair_users gives the users' keys, pair_values
-- (pairs, slot) their values in a slot, NULL for none.
CREATE FUNCTION uldp.pair_users(pairs bytea) RETURNS SETOF bigint
	AS 'MODULE_PATHNAME', 'uldp_pair_users' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.pair_values(pairs bytea, slot integer) RETURNS SETOF float8
	AS 'MODULE_PATHNAME', 'uldp_pair_values' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Grouped releases in parallel plans (src/grouping.c): the registration of
-- each user's groups is an aggregate, uldp.group_registry, in a CTE that
-- returns the registry's snapshot; group_member and group_selected take it as
-- an argument, which PostgreSQL evaluates before the first row that needs
-- it and passes to parallel workers.  Both the registration and the
-- aggregation may run in parallel.
DROP AGGREGATE uldp.group_selected(anyelement, float8, float8);
DROP FUNCTION uldp.group_member(bigint, int, anyelement, "any");
DROP FUNCTION uldp.group_users(bigint, int, anyelement, "any");
DROP FUNCTION uldp.group_registered(bigint, boolean);
DROP FUNCTION uldp.group_register(bigint, int, anyelement, "any");

-- The key of a grouped release's pseudorandom function, which a parallel
-- registration's workers need: read from the leader's registry.
CREATE FUNCTION uldp.group_key(slot bigint)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_group_key'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED;

-- Registers every row's group for its user: partial registries (one per
-- process of a parallel plan) merge into the leader's, whose snapshot is
-- the result.
CREATE FUNCTION uldp.registry_transfn(internal, bigint, int, bytea, anyelement, VARIADIC "any")
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_registry_transfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.registry_combinefn(internal, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_registry_combinefn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.registry_serialfn(internal)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_registry_serialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.registry_deserialfn(bytea, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_registry_deserialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.registry_finalfn(internal)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_registry_finalfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE AGGREGATE uldp.group_registry(slot bigint, k int, key bytea, user_id anyelement,
									 VARIADIC keys "any") (
	SFUNC = uldp.registry_transfn, STYPE = internal, FINALFUNC = uldp.registry_finalfn,
	FINALFUNC_MODIFY = READ_WRITE, COMBINEFUNC = uldp.registry_combinefn,
	SERIALFUNC = uldp.registry_serialfn, DESERIALFUNC = uldp.registry_deserialfn,
	PARALLEL = SAFE);

-- The user id if its user keeps the row's group, else NULL.
CREATE FUNCTION uldp.group_member(slot bigint, k int, registry bytea, user_id anyelement,
								  VARIADIC keys "any")
	RETURNS anyelement AS 'MODULE_PATHNAME', 'uldp_group_member'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

-- A registration computes a grouping key on one column (date_trunc('month',
-- d)) once per distinct value of the column: CASE WHEN key_memo_lookup(...)
-- THEN key_memo_value(...) ELSE key_memo_store(..., <key>) END.
CREATE FUNCTION uldp.key_memo_lookup(slot bigint, keyno int, input anyelement)
	RETURNS boolean AS 'MODULE_PATHNAME', 'uldp_key_memo_lookup'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.key_memo_value(slot bigint, keyno int, type anyelement)
	RETURNS anyelement AS 'MODULE_PATHNAME', 'uldp_key_memo_value'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.key_memo_store(slot bigint, keyno int, value anyelement)
	RETURNS anyelement AS 'MODULE_PATHNAME', 'uldp_key_memo_store'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

-- Partition selection reads the number of users that keep its group from
-- the registry itself (once per group, where equal keys have equal bytes),
-- and runs in parallel: partial states keep the largest count seen.
DROP FUNCTION uldp.selection_transfn(internal, anyelement, float8, float8);
CREATE FUNCTION uldp.selection_transfn(internal, bigint, int, bytea, anyelement, float8, float8,
									   VARIADIC "any")
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_selection_transfn'
	LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.selection_combinefn(internal, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_selection_combinefn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.selection_serialfn(internal)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_selection_serialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.selection_deserialfn(bytea, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_selection_deserialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE AGGREGATE uldp.group_selected(slot bigint, k int, registry bytea, user_id anyelement,
									 epsilon float8, delta float8, VARIADIC keys "any") (
	SFUNC = uldp.selection_transfn, STYPE = internal, FINALFUNC = uldp.selection_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.selection_combinefn,
	SERIALFUNC = uldp.selection_serialfn, DESERIALFUNC = uldp.selection_deserialfn,
	PARALLEL = SAFE);

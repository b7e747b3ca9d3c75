-- uldp 0.7 -> 0.8: GROUP BY and joins.  A grouped release is rewritten
-- before it is planned (src/grouping.c): every user keeps at most
-- uldp.max_groups_per_user groups, chosen at random, and a group appears only
-- if it passes private partition selection.  These are the functions the
-- rewrite adds; they are not meant to be called by hand.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.8'" to load this file. \quit

-- Records the row's group for its user (in the WHERE of the registration
-- subquery, run before any row is aggregated); always true.  Parallel unsafe: the registry lives in one process.
CREATE FUNCTION uldp.group_register(slot bigint, k int, user_id anyelement, VARIADIC keys "any")
	RETURNS boolean AS 'MODULE_PATHNAME', 'uldp_group_register'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE COST 1000;

-- The user id if its user keeps the row's group, else NULL.
CREATE FUNCTION uldp.group_member(slot bigint, k int, user_id anyelement, VARIADIC keys "any")
	RETURNS anyelement AS 'MODULE_PATHNAME', 'uldp_group_member'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

-- The number of users that keep the row's group (NULL on a row without a
-- user): what partition selection compares with its threshold.
CREATE FUNCTION uldp.group_users(slot bigint, k int, user_id anyelement, VARIADIC keys "any")
	RETURNS bigint AS 'MODULE_PATHNAME', 'uldp_group_users'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

-- Partition selection: does the group appear?  Charged (epsilon, delta) once
-- per statement, epsilon / k and delta / k per group.  It reads the users of
-- each group from group_users: refused over anything else.
CREATE FUNCTION uldp.selection_transfn(internal, anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_selection_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL UNSAFE;
CREATE FUNCTION uldp.selection_finalfn(internal)
	RETURNS boolean AS 'MODULE_PATHNAME', 'uldp_selection_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE AGGREGATE uldp.group_selected(user_id anyelement, epsilon float8, delta float8) (
	SFUNC = uldp.selection_transfn, STYPE = internal, FINALFUNC = uldp.selection_finalfn,
	FINALFUNC_MODIFY = READ_ONLY);

-- Public group keys: the table's owner declares that these values of a column
-- are public (a security label on the column, kept by pg_dump); a release
-- grouped by that column shows exactly these groups, empty ones included, and
-- spends nothing on choosing them.  NULL keys: the column's keys are private
-- again.
CREATE FUNCTION uldp.set_public_groups(tab regclass, col name, keys anyarray)
	RETURNS void AS 'MODULE_PATHNAME', 'uldp_set_public_groups' LANGUAGE C CALLED ON NULL INPUT;
REVOKE ALL ON FUNCTION uldp.set_public_groups(regclass, name, anyarray) FROM PUBLIC;

-- Marks a grouped release's registration complete: the last step of the
-- subquery that registers every row before the first one is aggregated (its
-- argument is the result of the scan that registered them).
CREATE FUNCTION uldp.group_registered(slot bigint, read_all boolean)
	RETURNS boolean AS 'MODULE_PATHNAME', 'uldp_group_registered'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

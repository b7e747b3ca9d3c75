-- uldp 0.5 -> 0.6: the faster learners of user_dp_sgd.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.6'" to load this file. \quit

-- user_dp_sgd ------------------------------------------------------------------
--
-- The methods "robust", "outlier_removal" and "accelerated" are options of the
-- existing aggregates (no new SQL objects).  The final function now groups the
-- state's rows by user in place and clips them there, instead of copying every
-- row: it changes the state, so the aggregates are declared READ_WRITE, and
-- PostgreSQL never hands one state to a second final call.  CREATE AGGREGATE is
-- the only way to change that declaration: the four aggregates are created
-- anew, with the same signatures.  So a view or function that uses
-- user_dp_sgd blocks the update (drop it first, recreate it after), and
-- privileges granted or revoked on the aggregates return to the defaults.

DROP AGGREGATE user_dp_sgd(float8[], float8, anyelement, float8, float8);
DROP AGGREGATE user_dp_sgd(float8[], float8, anyelement, float8, float8, jsonb);
DROP AGGREGATE user_dp_sgd(float8[], boolean, anyelement, float8, float8);
DROP AGGREGATE user_dp_sgd(float8[], boolean, anyelement, float8, float8, jsonb);

CREATE AGGREGATE user_dp_sgd(features float8[], label float8, user_id anyelement,
							 epsilon float8, delta float8) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sgd(features float8[], label float8, user_id anyelement,
							 epsilon float8, delta float8, options jsonb) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sgd(features float8[], label boolean, user_id anyelement,
							 epsilon float8, delta float8) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sgd(features float8[], label boolean, user_id anyelement,
							 epsilon float8, delta float8, options jsonb) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_WRITE, PARALLEL = SAFE);

-- uldp 0.3: vector means, model training and prediction
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.3'" to load this file. \quit

-- user_dp_mean on vectors -----------------------------------------------------

CREATE FUNCTION uldp.vector_transfn(internal, float8[], anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_vector_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.vector_transfn(internal, float8[], anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_vector_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.vector_transfn(internal, float8[], anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_vector_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.vector_mean_finalfn(internal)
	RETURNS float8[] AS 'MODULE_PATHNAME', 'uldp_vector_mean_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_mean(value float8[], user_id anyelement, epsilon float8, delta float8) (
	SFUNC = uldp.vector_transfn, STYPE = internal, FINALFUNC = uldp.vector_mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value float8[], user_id anyelement, epsilon float8, delta float8,
							  radius float8) (
	SFUNC = uldp.vector_transfn, STYPE = internal, FINALFUNC = uldp.vector_mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value float8[], user_id anyelement, epsilon float8, delta float8,
							  radius float8, tau float8) (
	SFUNC = uldp.vector_transfn, STYPE = internal, FINALFUNC = uldp.vector_mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);

-- user_dp_sgd and uldp.predict ------------------------------------------------

CREATE FUNCTION uldp.sgd_transfn(internal, float8[], float8, anyelement, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_sgd_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.sgd_transfn(internal, float8[], float8, anyelement, float8, float8, jsonb)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_sgd_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.sgd_finalfn(internal)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'uldp_sgd_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_sgd(features float8[], label float8, user_id anyelement,
							 epsilon float8, delta float8) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_sgd(features float8[], label float8, user_id anyelement,
							 epsilon float8, delta float8, options jsonb) (
	SFUNC = uldp.sgd_transfn, STYPE = internal, FINALFUNC = uldp.sgd_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, PARALLEL = SAFE);

-- Reads only a released model: no budget.
CREATE FUNCTION uldp.predict(model jsonb, features float8[])
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_predict' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Testing ------------------------------------------------------------------

-- Draws of the discrete Gaussian noise the vector releases add; reads no data.
CREATE FUNCTION uldp._sample_discrete_gaussian(sigma2 float8, n integer)
	RETURNS bigint[] AS 'MODULE_PATHNAME', 'uldp_sample_discrete_gaussian' LANGUAGE C STRICT VOLATILE;
REVOKE ALL ON FUNCTION uldp._sample_discrete_gaussian(float8, integer) FROM PUBLIC;

-- The zCDP budget rho of a release charged (epsilon, delta), and the delta
-- at which rho-zCDP gives epsilon-DP: for checking doc/privacy.md.
CREATE FUNCTION uldp.zcdp_rho(epsilon float8, delta float8)
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_zcdp_rho_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.zcdp_delta(rho float8, epsilon float8)
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_zcdp_delta_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

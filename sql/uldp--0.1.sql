-- uldp 0.1: user-level differentially private aggregates and budgets
\echo Use "CREATE EXTENSION uldp" to load this file. \quit

CREATE SCHEMA uldp;
COMMENT ON SCHEMA uldp IS 'uldp administration: budgets, ledger and support functions';

-- Budgets and ledger ------------------------------------------------------

CREATE TABLE uldp.budget_data (
	role oid PRIMARY KEY,
	epsilon_limit numeric NOT NULL CHECK (epsilon_limit >= 0),
	delta_limit numeric NOT NULL CHECK (delta_limit >= 0 AND delta_limit <= 1),
	epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (epsilon_spent >= 0),
	delta_spent numeric NOT NULL DEFAULT 0 CHECK (delta_spent >= 0)
);

CREATE TABLE uldp.ledger_data (
	id bigserial PRIMARY KEY,
	at timestamptz NOT NULL DEFAULT clock_timestamp(),
	role oid NOT NULL,
	function text NOT NULL,
	epsilon numeric NOT NULL,
	delta numeric NOT NULL
);

REVOKE ALL ON uldp.budget_data, uldp.ledger_data FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('uldp.budget_data', '');
SELECT pg_catalog.pg_extension_config_dump('uldp.ledger_data', '');
SELECT pg_catalog.pg_extension_config_dump('uldp.ledger_data_id_seq', '');

-- Everyone sees their own budget and releases; whoever may read the
-- underlying tables (superusers, or roles a DBA granted SELECT) sees all.
CREATE VIEW uldp.budget WITH (security_barrier) AS
	SELECT b.role::regrole AS role, b.epsilon_limit, b.delta_limit,
		   b.epsilon_spent, b.delta_spent
	FROM uldp.budget_data b
	WHERE b.role = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = session_user)
	   OR pg_catalog.has_table_privilege('uldp.budget_data', 'SELECT');

CREATE VIEW uldp.ledger WITH (security_barrier) AS
	SELECT l.at, l.role::regrole AS role, l.function, l.epsilon, l.delta
	FROM uldp.ledger_data l
	WHERE l.role = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = session_user)
	   OR pg_catalog.has_table_privilege('uldp.ledger_data', 'SELECT');

GRANT USAGE ON SCHEMA uldp TO PUBLIC;
GRANT SELECT ON uldp.budget, uldp.ledger TO PUBLIC;

CREATE FUNCTION uldp.set_budget(role regrole, epsilon float8, delta float8)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF epsilon IS NULL OR NOT (epsilon >= 0 AND epsilon < 'infinity') THEN
		RAISE EXCEPTION 'epsilon limit must be a non-negative finite number'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Pass the total epsilon the role may spend, e.g. 3.0.';
	END IF;
	IF delta IS NULL OR NOT (delta >= 0 AND delta <= 1) THEN
		RAISE EXCEPTION 'delta limit must be between 0 and 1'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Pass the total delta the role may spend, e.g. 1e-6.';
	END IF;
	INSERT INTO uldp.budget_data AS b (role, epsilon_limit, delta_limit)
	VALUES (set_budget.role, set_budget.epsilon::numeric, set_budget.delta::numeric)
	ON CONFLICT ON CONSTRAINT budget_data_pkey DO UPDATE
		SET epsilon_limit = excluded.epsilon_limit, delta_limit = excluded.delta_limit;
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta)
	VALUES (set_budget.role, 'uldp.set_budget', 0, 0);
END
$$;

CREATE FUNCTION uldp.reset_budget(role regrole)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	spent record;
BEGIN
	UPDATE uldp.budget_data b SET epsilon_spent = 0, delta_spent = 0
	FROM (SELECT epsilon_spent, delta_spent FROM uldp.budget_data
		  WHERE budget_data.role = reset_budget.role FOR UPDATE) old
	WHERE b.role = reset_budget.role
	RETURNING old.epsilon_spent, old.delta_spent INTO spent;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'role "%" has no privacy budget', reset_budget.role
			USING ERRCODE = 'undefined_object',
				  HINT = 'Grant one with uldp.set_budget(role, epsilon, delta).';
	END IF;
	-- the reset is logged with the amounts it gave back, negated
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta)
	VALUES (reset_budget.role, 'uldp.reset_budget', -spent.epsilon_spent, -spent.delta_spent);
END
$$;

REVOKE ALL ON FUNCTION uldp.set_budget(regrole, float8, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp.reset_budget(regrole) FROM PUBLIC;

-- Called only by the budget worker (src/budget.c), as superuser, in a
-- transaction of its own.  The row lock serialises concurrent charges.
CREATE FUNCTION uldp._charge(role oid, function text, epsilon float8, delta float8,
	OUT status text, OUT epsilon_remaining numeric, OUT delta_remaining numeric)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	b uldp.budget_data%ROWTYPE;
BEGIN
	SELECT * INTO b FROM uldp.budget_data WHERE budget_data.role = _charge.role FOR UPDATE;
	IF NOT FOUND THEN
		status := 'no_budget';
		RETURN;
	END IF;
	epsilon_remaining := b.epsilon_limit - b.epsilon_spent;
	delta_remaining := b.delta_limit - b.delta_spent;
	IF _charge.epsilon::numeric > epsilon_remaining OR _charge.delta::numeric > delta_remaining THEN
		status := 'over_budget';
		RETURN;
	END IF;
	UPDATE uldp.budget_data
	SET epsilon_spent = epsilon_spent + _charge.epsilon::numeric,
		delta_spent = delta_spent + _charge.delta::numeric
	WHERE budget_data.role = _charge.role;
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta)
	VALUES (_charge.role, _charge.function, _charge.epsilon::numeric, _charge.delta::numeric);
	status := 'ok';
	epsilon_remaining := epsilon_remaining - _charge.epsilon::numeric;
	delta_remaining := delta_remaining - _charge.delta::numeric;
END
$$;
REVOKE ALL ON FUNCTION uldp._charge(oid, text, float8, float8) FROM PUBLIC;

-- Aggregates -----------------------------------------------------------------

CREATE TYPE uldp.range AS (lower float8, upper float8);

CREATE FUNCTION uldp.user_transfn(internal, float8, anyelement, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_transfn(internal, float8, anyelement, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_transfn(internal, float8, anyelement, float8, float8, float8, float8)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_combinefn(internal, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_combinefn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.user_serialfn(internal)
	RETURNS bytea AS 'MODULE_PATHNAME', 'uldp_user_serialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.user_deserialfn(bytea, internal)
	RETURNS internal AS 'MODULE_PATHNAME', 'uldp_user_deserialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION uldp.mean_finalfn(internal)
	RETURNS float8 AS 'MODULE_PATHNAME', 'uldp_mean_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION uldp.range_finalfn(internal)
	RETURNS uldp.range AS 'MODULE_PATHNAME', 'uldp_range_finalfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE user_dp_mean(value float8, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value float8, user_id anyelement, epsilon float8,
							  lower float8, upper float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_mean(value float8, user_id anyelement, epsilon float8,
							  lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.mean_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

CREATE AGGREGATE user_dp_range(value float8, user_id anyelement, epsilon float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_range(value float8, user_id anyelement, epsilon float8,
							   lower float8, upper float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);
CREATE AGGREGATE user_dp_range(value float8, user_id anyelement, epsilon float8,
							   lower float8, upper float8, tau float8) (
	SFUNC = uldp.user_transfn, STYPE = internal, FINALFUNC = uldp.range_finalfn,
	FINALFUNC_MODIFY = READ_ONLY, COMBINEFUNC = uldp.user_combinefn,
	SERIALFUNC = uldp.user_serialfn, DESERIALFUNC = uldp.user_deserialfn, PARALLEL = SAFE);

-- Testing ------------------------------------------------------------------

-- Draws of the discrete Laplace noise a release adds; reads no data.
CREATE FUNCTION uldp._sample_discrete_laplace(sensitivity bigint, epsilon float8, n integer)
	RETURNS bigint[] AS 'MODULE_PATHNAME', 'uldp_sample_discrete_laplace' LANGUAGE C STRICT VOLATILE;
REVOKE ALL ON FUNCTION uldp._sample_discrete_laplace(bigint, float8, integer) FROM PUBLIC;

-- uldp 0.3 -> 0.4: pay before reading.  A statement's releases are charged,
-- in one ledger row, before it reads its first row; budgets follow role
-- names; the ledger records the statement and survives dump and restore.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.4'" to load this file. \quit

-- Budgets and ledger -----------------------------------------------------------

-- Called only by the budget worker (src/budget.c), as superuser, in a
-- transaction of its own: one call per statement, before it reads rows.
DROP FUNCTION uldp._charge(oid, text, float8, float8);
CREATE FUNCTION uldp._charge(role name, function text, epsilon float8, delta float8,
	statement text, OUT status text, OUT epsilon_remaining numeric, OUT delta_remaining numeric)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	b uldp.budget_data%ROWTYPE;
	role_oid oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = _charge.role);
BEGIN
	SELECT * INTO b FROM uldp.budget_data WHERE budget_data.role = role_oid FOR UPDATE;
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
	WHERE budget_data.role = role_oid;
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta)
	VALUES (role_oid, _charge.function, _charge.epsilon::numeric, _charge.delta::numeric);
	status := 'ok';
	epsilon_remaining := epsilon_remaining - _charge.epsilon::numeric;
	delta_remaining := delta_remaining - _charge.delta::numeric;
END
$$;
REVOKE ALL ON FUNCTION uldp._charge(name, text, float8, float8, text) FROM PUBLIC;


-- Internal functions -----------------------------------------------------------


-- Releases ---------------------------------------------------------------------


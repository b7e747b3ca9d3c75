-- uldp 0.3 -> 0.4: pay before reading.  A statement's releases are charged,
-- in one ledger row, before it reads its first row; budgets follow role
-- names; the ledger records the statement and survives dump and restore.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.4'" to load this file. \quit

-- Budgets and ledger -----------------------------------------------------------
--
-- Budgets follow role names, not oids: a dump restored into another cluster,
-- or a role dropped and created again under the same name, keeps what was
-- spent.  Ledger rows from 0.4 on record the role's name and the statement,
-- and are chained with encoding version 2, which covers both; rows written
-- before keep version 1 (the oid encoding of 0.2) and keep verifying.

-- The name a role oid had when this update ran; rows of roles that no longer
-- exist keep a name no CREATE ROLE is likely to take by accident.
CREATE FUNCTION uldp._role_name_at_update(role oid) RETURNS name
LANGUAGE sql STABLE STRICT
RETURN coalesce((SELECT r.rolname FROM pg_catalog.pg_roles r WHERE r.oid = role),
				pg_catalog.format('(dropped role %s)', role)::name);

DROP VIEW uldp.budget;
DROP VIEW uldp.ledger;

ALTER TABLE uldp.budget_data
	ALTER COLUMN role TYPE name USING uldp._role_name_at_update(role);

-- role_oid: the 0.1-0.3 column, covered by the version 1 hashes; NULL from 0.4
-- on.  role: the name, filled in here for the earlier rows (their hashes do
-- not cover it; verify_ledger checks that no version 1 row follows a version
-- 2 row, so rows cannot be added under the old encoding).
ALTER TABLE uldp.ledger_data RENAME COLUMN role TO role_oid;
ALTER TABLE uldp.ledger_data ALTER COLUMN role_oid DROP NOT NULL;
ALTER TABLE uldp.ledger_data ADD COLUMN role name;
ALTER TABLE uldp.ledger_data ALTER COLUMN role TYPE name USING uldp._role_name_at_update(role_oid);
ALTER TABLE uldp.ledger_data ALTER COLUMN role SET NOT NULL;
ALTER TABLE uldp.ledger_data ADD COLUMN statement text;
ALTER TABLE uldp.ledger_data ADD COLUMN hash_version smallint NOT NULL DEFAULT 1;
ALTER TABLE uldp.ledger_data ALTER COLUMN hash_version SET DEFAULT 2;
ALTER TABLE uldp.ledger_data ADD CONSTRAINT ledger_data_hash_version_check CHECK (
	(hash_version = 1 AND role_oid IS NOT NULL)
	OR (hash_version = 2 AND role_oid IS NULL AND statement IS NOT NULL));
CREATE INDEX ledger_data_role_idx ON uldp.ledger_data (role);

DROP FUNCTION uldp._role_name_at_update(oid);

-- Encoding version 2: a version tag, then every field, free text and names
-- length-prefixed, time as integer microseconds since 1970.
CREATE FUNCTION uldp._ledger_hash_v2(previous bytea, id bigint, at timestamptz, role name,
									 function text, epsilon numeric, delta numeric, statement text)
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.sha256(previous || pg_catalog.convert_to(pg_catalog.concat_ws('|',
	'uldp ledger v2', id, (EXTRACT(epoch FROM at) * 1000000)::bigint,
	pg_catalog.octet_length(role), role, pg_catalog.octet_length(function), function,
	epsilon, delta, pg_catalog.octet_length(statement), statement), 'UTF8'));
REVOKE ALL ON FUNCTION uldp._ledger_hash_v2(bytea, bigint, timestamptz, name, text, numeric, numeric, text) FROM PUBLIC;

-- A row inserted without a hash (every row uldp writes) is numbered, stamped
-- and chained under the lock on uldp.ledger_head, as before.  A row that
-- arrives with its hash (pg_restore's COPY of a dumped ledger, in whatever
-- order the dump holds the rows) is stored verbatim and does not move the
-- head, which is restored from the dump too: a restore reproduces the ledger
-- byte for byte, a tampered one included.  This gives a superuser no new
-- power (one can disable the triggers anyway) and loses no evidence: a row
-- whose hash does not continue the chain, or that the head does not cover,
-- is reported by uldp.verify_ledger().  Only superusers may insert.
CREATE OR REPLACE FUNCTION uldp._ledger_append() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous bytea;
	last_id bigint;
BEGIN
	IF NEW.hash IS NOT NULL THEN
		RETURN NEW;
	END IF;
	SELECT h.hash INTO previous FROM uldp.ledger_head h FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO uldp.ledger_head (hash) VALUES ('\x') ON CONFLICT DO NOTHING;
		SELECT h.hash INTO STRICT previous FROM uldp.ledger_head h FOR UPDATE;
	END IF;
	-- numbered and stamped under the lock, so id order is chain order; after
	-- rows copied in with their own ids the sequence may lag: skip past them
	SELECT max(l.id) INTO last_id FROM uldp.ledger_data l;
	NEW.id := nextval('uldp.ledger_data_id_seq');
	IF NEW.id <= last_id THEN
		NEW.id := setval('uldp.ledger_data_id_seq', last_id + 1);
	END IF;
	NEW.at := clock_timestamp();
	NEW.role_oid := NULL;
	NEW.statement := coalesce(NEW.statement, '');
	NEW.hash_version := 2;
	NEW.hash := uldp._ledger_hash_v2(previous, NEW.id, NEW.at, NEW.role, NEW.function,
									 NEW.epsilon, NEW.delta, NEW.statement);
	UPDATE uldp.ledger_head SET id = NEW.id, hash = NEW.hash;
	RETURN NEW;
END
$$;

-- Everyone sees their own budget and releases (by role name); whoever may
-- read the underlying tables sees all, and only they see the statements
-- (a budget change's statement may name other roles).
CREATE VIEW uldp.budget WITH (security_barrier) AS
	SELECT b.role, b.epsilon_limit, b.delta_limit, b.epsilon_spent, b.delta_spent
	FROM uldp.budget_data b
	WHERE b.role = session_user
	   OR pg_catalog.has_table_privilege('uldp.budget_data', 'SELECT');

CREATE VIEW uldp.ledger WITH (security_barrier) AS
	SELECT l.at, l.role, l.function, l.epsilon, l.delta,
		   CASE WHEN pg_catalog.has_table_privilege('uldp.ledger_data', 'SELECT')
				THEN l.statement END AS statement
	FROM uldp.ledger_data l
	WHERE l.role = session_user
	   OR pg_catalog.has_table_privilege('uldp.ledger_data', 'SELECT');

GRANT SELECT ON uldp.budget, uldp.ledger TO PUBLIC;

-- The budget of the role named "role" (a budget created for a name that
-- already has ledger rows starts from what they spent: a budget always equals
-- the sum of its ledger rows, and only reset_budget, logged, gives back).
CREATE FUNCTION uldp._set_budget(role name, epsilon float8, delta float8)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
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
	INSERT INTO uldp.budget_data AS b (role, epsilon_limit, delta_limit, epsilon_spent, delta_spent)
	SELECT _set_budget.role, _set_budget.epsilon::numeric, _set_budget.delta::numeric,
		   coalesce(sum(l.epsilon), 0), coalesce(sum(l.delta), 0)
	FROM uldp.ledger_data l WHERE l.role = _set_budget.role
	ON CONFLICT ON CONSTRAINT budget_data_pkey DO UPDATE
		SET epsilon_limit = excluded.epsilon_limit, delta_limit = excluded.delta_limit;
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta, statement)
	VALUES (_set_budget.role, 'uldp.set_budget', 0, 0, coalesce(pg_catalog.current_query(), ''));
END
$$;

CREATE FUNCTION uldp._reset_budget(role name)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	spent record;
BEGIN
	UPDATE uldp.budget_data b SET epsilon_spent = 0, delta_spent = 0
	FROM (SELECT epsilon_spent, delta_spent FROM uldp.budget_data
		  WHERE budget_data.role = _reset_budget.role FOR UPDATE) old
	WHERE b.role = _reset_budget.role
	RETURNING old.epsilon_spent, old.delta_spent INTO spent;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'role "%" has no privacy budget', _reset_budget.role
			USING ERRCODE = 'undefined_object',
				  HINT = 'Grant one with uldp.set_budget(role, epsilon, delta).';
	END IF;
	-- the reset is logged with the amounts it gave back, negated
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta, statement)
	VALUES (_reset_budget.role, 'uldp.reset_budget', -spent.epsilon_spent, -spent.delta_spent,
			coalesce(pg_catalog.current_query(), ''));
END
$$;
REVOKE ALL ON FUNCTION uldp._set_budget(name, float8, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp._reset_budget(name) FROM PUBLIC;

-- set_budget and reset_budget keep their signatures (the role must exist) and
-- their grants; they are C so that they see who really calls them (a
-- SECURITY DEFINER function cannot see its caller's current_user): a role
-- other than a superuser may not change the budget of a role it is, or is a
-- member of, whether as session user or current user (src/budgetadmin.c).
-- The C function runs the internal one above as its owner.
CREATE OR REPLACE FUNCTION uldp.set_budget(role regrole, epsilon float8, delta float8)
RETURNS void AS 'MODULE_PATHNAME', 'uldp_set_budget' LANGUAGE C SECURITY INVOKER;
CREATE OR REPLACE FUNCTION uldp.reset_budget(role regrole)
RETURNS void AS 'MODULE_PATHNAME', 'uldp_reset_budget' LANGUAGE C STRICT SECURITY INVOKER;

-- Called only by the budget worker (src/budget.c), as superuser, in a
-- transaction of its own: one call per statement, before it reads rows.  The
-- budget is looked up by the session user's name; the row lock serialises
-- concurrent charges.
DROP FUNCTION uldp._charge(oid, text, float8, float8);
CREATE FUNCTION uldp._charge(role name, function text, epsilon float8, delta float8,
	statement text, OUT status text, OUT epsilon_remaining numeric, OUT delta_remaining numeric)
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
	INSERT INTO uldp.ledger_data (role, function, epsilon, delta, statement)
	VALUES (_charge.role, _charge.function, _charge.epsilon::numeric, _charge.delta::numeric,
			coalesce(_charge.statement, ''));
	status := 'ok';
	epsilon_remaining := epsilon_remaining - _charge.epsilon::numeric;
	delta_remaining := delta_remaining - _charge.delta::numeric;
END
$$;
REVOKE ALL ON FUNCTION uldp._charge(name, text, float8, float8, text) FROM PUBLIC;

-- Recomputes the chain (each row with its encoding version) and compares it
-- with the stored hashes, the head, the optional head a DBA recorded earlier,
-- and every budget's spent amounts with the sum of the ledger rows of the
-- same role name.
CREATE OR REPLACE FUNCTION uldp.verify_ledger(known_head bytea DEFAULT NULL,
	OUT valid boolean, OUT entries bigint, OUT head bytea, OUT problem text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous bytea := '\x';
	last_id bigint;
	known_seen boolean := known_head IS NULL;
	seen_v2 boolean := false;
	r record;
BEGIN
	valid := false;
	entries := 0;
	FOR r IN SELECT * FROM uldp.ledger_data ORDER BY id LOOP
		IF r.hash_version = 2 THEN
			previous := uldp._ledger_hash_v2(previous, r.id, r.at, r.role, r.function,
											 r.epsilon, r.delta, r.statement);
			seen_v2 := true;
		ELSIF r.hash_version = 1 AND NOT seen_v2 THEN
			previous := uldp._ledger_hash(previous, r.id, r.at, r.role_oid, r.function,
										  r.epsilon, r.delta);
		ELSE
			problem := format('ledger row %s has encoding version %s after a version 2 row, or an unknown one: it was inserted or changed',
							  r.id, r.hash_version);
			RETURN;
		END IF;
		IF r.hash IS DISTINCT FROM previous THEN
			problem := format('ledger row %s does not match the hash chain: it, or a row before it, was changed, inserted or removed', r.id);
			RETURN;
		END IF;
		known_seen := known_seen OR previous = known_head;
		entries := entries + 1;
		last_id := r.id;
	END LOOP;
	head := previous;
	IF NOT (EXISTS (SELECT FROM uldp.ledger_head h WHERE h.hash = previous AND h.id = last_id)
			OR (entries = 0 AND NOT EXISTS (SELECT FROM uldp.ledger_head h WHERE h.id IS NOT NULL))) THEN
		problem := 'uldp.ledger_head does not point at the last ledger row: rows were removed from the end';
		RETURN;
	END IF;
	IF NOT known_seen THEN
		problem := 'the known head is not in the ledger: the ledger was rewritten or truncated since it was recorded';
		RETURN;
	END IF;
	SELECT format('the budget of role %I records epsilon %s and delta %s spent, the ledger %s and %s',
				  b.role, b.epsilon_spent, b.delta_spent,
				  coalesce(l.epsilon, 0), coalesce(l.delta, 0))
	INTO problem
	FROM uldp.budget_data b
	LEFT JOIN (SELECT role, sum(epsilon) AS epsilon, sum(delta) AS delta
			   FROM uldp.ledger_data GROUP BY role) l USING (role)
	WHERE b.epsilon_spent <> coalesce(l.epsilon, 0) OR b.delta_spent <> coalesce(l.delta, 0)
	ORDER BY b.role LIMIT 1;
	valid := problem IS NULL;
END
$$;


-- DROP EXTENSION uldp, and anything else that would drop uldp.budget_data
-- or uldp.ledger_data, is refused while they hold rows, unless a superuser
-- has SET uldp.allow_drop = on (src/dropguard.c).  The check is in the
-- library, which needs no shared_preload_libraries: this event trigger loads
-- it before every DROP command that can reach the extension (directly, by
-- CASCADE from a schema, language, type or function its members depend on,
-- or by DROP OWNED), and refuses DROP EXTENSION uldp up front.
CREATE FUNCTION uldp._drop_guard() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'uldp_drop_guard' LANGUAGE C;
REVOKE ALL ON FUNCTION uldp._drop_guard() FROM PUBLIC;
CREATE EVENT TRIGGER uldp_drop_guard ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED', 'DROP LANGUAGE',
				 'DROP TYPE', 'DROP DOMAIN', 'DROP FUNCTION', 'DROP AGGREGATE',
				 'DROP PROCEDURE', 'DROP ROUTINE', 'DROP OPERATOR', 'DROP CAST',
				 'DROP TABLE', 'DROP VIEW', 'DROP SEQUENCE', 'DROP TRIGGER')
	EXECUTE FUNCTION uldp._drop_guard();

-- Internal functions -----------------------------------------------------------


-- Releases ---------------------------------------------------------------------


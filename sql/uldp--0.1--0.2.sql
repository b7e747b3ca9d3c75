-- uldp 0.1 -> 0.2: a tamper-evident ledger, protected tables, and the
-- error-free arithmetic that queries on protected tables are rewritten to.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.2'" to load this file. \quit

-- Tamper-evident ledger ------------------------------------------------------
--
-- Every ledger row carries hash = sha256(previous row's hash || encoding of
-- the row), so rewriting, deleting or inserting a row anywhere breaks the
-- chain from that row on; uldp.verify_ledger() recomputes it.  uldp.ledger_head
-- holds the newest hash: locking it serialises appends, so the chain order is
-- the id order, and a DBA who keeps a copy of it elsewhere can later prove
-- that no row up to it was removed.

CREATE TABLE uldp.ledger_head (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	id bigint,
	hash bytea NOT NULL
);
REVOKE ALL ON uldp.ledger_head FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('uldp.ledger_head', '');

ALTER TABLE uldp.ledger_data ADD COLUMN hash bytea;

-- The encoding is unambiguous (the only free text is length-prefixed) and
-- independent of session settings (time as integer microseconds since 1970,
-- role as oid, amounts as exact numerics).
CREATE FUNCTION uldp._ledger_hash(previous bytea, id bigint, at timestamptz, role oid,
								  function text, epsilon numeric, delta numeric)
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.sha256(previous || pg_catalog.convert_to(pg_catalog.concat_ws('|',
	id, (EXTRACT(epoch FROM at) * 1000000)::bigint, role::bigint,
	pg_catalog.octet_length(function), function, epsilon, delta), 'UTF8'));

-- Chain the existing rows, in id order.
DO $$
DECLARE
	previous bytea := '\x';
	r record;
BEGIN
	FOR r IN SELECT * FROM uldp.ledger_data ORDER BY id LOOP
		previous := uldp._ledger_hash(previous, r.id, r.at, r.role, r.function, r.epsilon, r.delta);
		UPDATE uldp.ledger_data SET hash = previous WHERE id = r.id;
	END LOOP;
	-- only when there is a chain: a head row made by this script would
	-- collide with the dumped one when a dump is restored
	IF FOUND THEN
		INSERT INTO uldp.ledger_head (id, hash) SELECT max(id), previous FROM uldp.ledger_data;
	END IF;
END
$$;
ALTER TABLE uldp.ledger_data ALTER COLUMN hash SET NOT NULL;

CREATE FUNCTION uldp._ledger_append() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous bytea;
BEGIN
	SELECT h.hash INTO previous FROM uldp.ledger_head h FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO uldp.ledger_head (hash) VALUES ('\x') ON CONFLICT DO NOTHING;
		SELECT h.hash INTO STRICT previous FROM uldp.ledger_head h FOR UPDATE;
	END IF;
	-- numbered and stamped under the lock, so id order is chain order
	NEW.id := nextval('uldp.ledger_data_id_seq');
	NEW.at := clock_timestamp();
	NEW.hash := uldp._ledger_hash(previous, NEW.id, NEW.at, NEW.role, NEW.function,
								  NEW.epsilon, NEW.delta);
	UPDATE uldp.ledger_head SET id = NEW.id, hash = NEW.hash;
	RETURN NEW;
END
$$;

CREATE FUNCTION uldp._ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
	RAISE EXCEPTION 'the uldp ledger is append-only'
		USING ERRCODE = 'insufficient_privilege',
			  HINT = 'Releases and budget changes add rows; nothing may change or remove them.';
END
$$;

CREATE TRIGGER ledger_append BEFORE INSERT ON uldp.ledger_data
	FOR EACH ROW EXECUTE FUNCTION uldp._ledger_append();
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON uldp.ledger_data
	FOR EACH ROW EXECUTE FUNCTION uldp._ledger_refuse_change();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON uldp.ledger_data
	FOR EACH STATEMENT EXECUTE FUNCTION uldp._ledger_refuse_change();
CREATE TRIGGER ledger_head_no_truncate BEFORE TRUNCATE ON uldp.ledger_head
	FOR EACH STATEMENT EXECUTE FUNCTION uldp._ledger_refuse_change();

-- Recomputes the chain and compares it with the stored hashes, the head, the
-- optional head a DBA recorded earlier, and every budget's spent amounts
-- (which must equal the sum of that role's ledger rows).
CREATE FUNCTION uldp.verify_ledger(known_head bytea DEFAULT NULL,
	OUT valid boolean, OUT entries bigint, OUT head bytea, OUT problem text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous bytea := '\x';
	last_id bigint;
	known_seen boolean := known_head IS NULL;
	r record;
BEGIN
	valid := false;
	entries := 0;
	FOR r IN SELECT * FROM uldp.ledger_data ORDER BY id LOOP
		previous := uldp._ledger_hash(previous, r.id, r.at, r.role, r.function, r.epsilon, r.delta);
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
	SELECT format('the budget of role %s records epsilon %s and delta %s spent, the ledger %s and %s',
				  b.role::regrole, b.epsilon_spent, b.delta_spent,
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
REVOKE ALL ON FUNCTION uldp.verify_ledger(bytea) FROM PUBLIC;

-- Protected tables -------------------------------------------------------------
--
-- Protection is a pair of security labels of provider "uldp" ('protected' on
-- the table, 'privacy_unit' on the column), so it is dropped with the table,
-- follows renames, and is dumped and restored by pg_dump.

CREATE FUNCTION uldp.protect_table(tab regclass, privacy_unit name)
	RETURNS void AS 'MODULE_PATHNAME', 'uldp_protect_table' LANGUAGE C STRICT;
CREATE FUNCTION uldp.unprotect_table(tab regclass)
	RETURNS void AS 'MODULE_PATHNAME', 'uldp_unprotect_table' LANGUAGE C STRICT;
REVOKE ALL ON FUNCTION uldp.protect_table(regclass, name) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp.unprotect_table(regclass) FROM PUBLIC;

CREATE VIEW uldp.protected_tables AS
	SELECT t.objoid::regclass AS "table", a.attname AS privacy_unit
	FROM pg_catalog.pg_seclabel t
	LEFT JOIN pg_catalog.pg_seclabel u
		ON u.objoid = t.objoid AND u.classoid = t.classoid AND u.objsubid > 0
	   AND u.provider = 'uldp' AND u.label = 'privacy_unit'
	LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = u.objoid AND a.attnum = u.objsubid
	WHERE t.classoid = 'pg_catalog.pg_class'::regclass AND t.objsubid = 0
	  AND t.provider = 'uldp' AND t.label = 'protected';
GRANT SELECT ON uldp.protected_tables TO PUBLIC;

-- Error-free arithmetic ----------------------------------------------------------
--
-- Queries on a protected table are rewritten to call these in place of the
-- built-in operators and casts that can raise errors: they return NULL where
-- the built-in would fail (overflow, division by zero, out of range), so no
-- error can reveal a value.  The first argument is the operation (see
-- src/safe_arith.h); the result type is the built-in's.

CREATE FUNCTION uldp._safe_arith_int2(integer, "any", "any") RETURNS int2
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_arith_int4(integer, "any", "any") RETURNS int4
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_arith_int8(integer, "any", "any") RETURNS int8
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_arith_float4(integer, "any", "any") RETURNS float4
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_arith_float8(integer, "any", "any") RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_arith_numeric(integer, "any", "any") RETURNS numeric
	AS 'MODULE_PATHNAME', 'uldp_safe_arith' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_int2("any") RETURNS int2
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_int4("any") RETURNS int4
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_int8("any") RETURNS int8
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_float4("any") RETURNS float4
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uldp._safe_cast_float8("any") RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_safe_cast' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

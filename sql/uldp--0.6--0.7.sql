-- uldp 0.6 -> 0.7: local user-level DP (Girgis, Data and Diggavi): clients
-- privatize all of their samples into one report, the server runs rounds and
-- stores only reports.
\echo Use "ALTER EXTENSION uldp UPDATE TO '0.7'" to load this file. \quit

-- Rounds and reports --------------------------------------------------------------
--
-- A round is the JSON object clients read (format version 1, doc/local.md):
-- public parameters only.  Its epsilon and delta are those of one report (delta
-- is 0 unless the reports carry Gaussian noise): a user who answers rounds
-- spends their sum.  result is NULL while the round is open; uldp.ldp_result
-- sets it and closed_at, and no report is accepted after.  Reports are stored
-- as the client library formats them, one per user key and round.  No raw
-- value is ever stored.

CREATE TABLE uldp.ldp_rounds (
	id bigserial PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('range', 'mean', 'vector_range', 'vector_mean', 'gradient')),
	round jsonb NOT NULL,
	epsilon numeric NOT NULL CHECK (epsilon > 0),
	delta numeric NOT NULL DEFAULT 0 CHECK (delta >= 0 AND delta < 1),
	created_by name NOT NULL DEFAULT session_user,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	closed_at timestamptz,
	result jsonb,
	CHECK ((closed_at IS NULL) = (result IS NULL))
);

CREATE TABLE uldp.ldp_reports (
	round_id bigint NOT NULL REFERENCES uldp.ldp_rounds (id) ON DELETE CASCADE,
	user_key text NOT NULL,
	report jsonb NOT NULL,
	PRIMARY KEY (round_id, user_key)
);

-- Rounds are public (clients read their parameters, results are private
-- already): everyone may read them.  Reports are read and written only through
-- the functions below (and by superusers).
REVOKE ALL ON uldp.ldp_rounds, uldp.ldp_reports FROM PUBLIC;
GRANT SELECT ON uldp.ldp_rounds TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('uldp.ldp_rounds', '');
SELECT pg_catalog.pg_extension_config_dump('uldp.ldp_rounds_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('uldp.ldp_reports', '');

-- Creating a round asks every participating user to spend its epsilon, and
-- closing one publishes its result: both are the round operator's, revoked from
-- PUBLIC (grant EXECUTE to delegate).  Submitting writes reports: revoked too,
-- granted to the role that receives the clients' reports.  These run as the
-- extension's owner with a safe search_path (SECURITY DEFINER).
CREATE FUNCTION uldp.ldp_round(kind text, params jsonb) RETURNS bigint
	AS 'MODULE_PATHNAME', 'uldp_ldp_round' LANGUAGE C VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
CREATE FUNCTION uldp.ldp_submit(round bigint, user_key text, report jsonb) RETURNS void
	AS 'MODULE_PATHNAME', 'uldp_ldp_submit' LANGUAGE C VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
CREATE FUNCTION uldp.ldp_result(round bigint) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'uldp_ldp_result' LANGUAGE C VOLATILE STRICT
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
-- closes the round too, as ldp_result
CREATE FUNCTION uldp.ldp_sgd_step(round bigint) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'uldp_ldp_sgd_step' LANGUAGE C VOLATILE STRICT
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION uldp.ldp_round(text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp.ldp_submit(bigint, text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp.ldp_result(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION uldp.ldp_sgd_step(bigint) FROM PUBLIC;

-- What clients need, executable by everyone: a round's JSON, and the report of
-- the samples given (the client library's code; it reads the round and nothing
-- else, stores nothing and charges nothing).  Samples: an array of numbers for
-- scalar rounds; for vector and gradient rounds one row per sample in a
-- two-dimensional array (uldp.ldp_report(round, array_agg(row)) makes it from
-- a table with one row per sample), or one sample as a one-dimensional array.
-- NULL elements are missing values (the library drops their rows).
CREATE FUNCTION uldp.ldp_round_info(round bigint) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'uldp_ldp_round_info' LANGUAGE C STABLE STRICT;
CREATE FUNCTION uldp.ldp_report(round bigint, samples float8[]) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'uldp_ldp_report' LANGUAGE C VOLATILE;

-- The ingestion trigger: a table that receives samples stores only reports.
--
--	CREATE TABLE incoming (user_key text, samples float8[], report jsonb);
--	CREATE TRIGGER report BEFORE INSERT ON incoming
--		FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest('7');
--
-- For each inserted row it makes the report of the row's samples for the round
-- given as the trigger's argument, submits it under the row's user_key (of any
-- type, as text) with uldp.ldp_submit's checks, stores it in the column
-- "report" if the table has one (jsonb), and sets "samples" to NULL.  It runs
-- as the inserting role, which needs EXECUTE on uldp.ldp_submit.
CREATE FUNCTION uldp.ldp_ingest() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	round bigint;
	report jsonb;
BEGIN
	IF TG_WHEN <> 'BEFORE' OR TG_LEVEL <> 'ROW' OR TG_OP <> 'INSERT'
	   OR TG_NARGS <> 1 OR TG_ARGV[0] !~ '^[0-9]{1,18}$' THEN
		RAISE EXCEPTION 'uldp.ldp_ingest must be a BEFORE INSERT ... FOR EACH ROW trigger with a round id as its argument'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'CREATE TRIGGER t BEFORE INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION uldp.ldp_ingest(''7'').';
	END IF;
	IF NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = TG_RELID AND a.attname = 'user_key'
				   AND a.attnum > 0 AND NOT a.attisdropped)
	   OR NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = TG_RELID AND a.attname = 'samples'
					  AND a.atttypid = 'float8[]'::regtype AND a.attnum > 0 AND NOT a.attisdropped) THEN
		RAISE EXCEPTION 'table % has no column user_key, or no column samples of type float8[]', TG_RELID::regclass
			USING ERRCODE = 'undefined_column',
				  HINT = 'uldp.ldp_ingest reads the user''s key from user_key and the samples from samples (float8[]).';
	END IF;
	round := TG_ARGV[0]::bigint;
	report := uldp.ldp_report(round, NEW.samples);
	PERFORM uldp.ldp_submit(round, NEW.user_key::text, report);
	-- keys that are not columns are ignored: "report" is stored only if the table has it
	NEW := jsonb_populate_record(NEW, jsonb_build_object('samples', NULL, 'report', report));
	RETURN NEW;
END
$$;

-- Shuffling ------------------------------------------------------------------------
--
-- The central (epsilon, delta) that n shuffled epsilon0-LDP reports amount to
-- (Feldman, McMillan and Talwar 2021, Theorem 3.1; doc/privacy.md).  Reads no
-- data.
CREATE FUNCTION uldp.shuffle_epsilon(epsilon0 float8, n bigint, delta float8) RETURNS float8
	AS 'MODULE_PATHNAME', 'uldp_shuffle_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

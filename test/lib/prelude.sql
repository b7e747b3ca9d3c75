-- test/lib/prelude.sql -- common start of the pgTAP and statistical test files:
-- psql settings, the extension, and a clean slate for the objects of the file.
-- Usage, at the top of a test file:
--     \set prefix uldp_tap_errors_
--     \ir ../lib/prelude.sql
-- Every role, table and function of the file must start with :prefix, so that
-- test/lib/cleanup.sql can remove them (also those left by an interrupted run).
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
\pset pager off
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS uldp;
\ir cleanup.sql

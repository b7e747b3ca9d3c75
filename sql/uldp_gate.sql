-- the query gate refuses the allowed constructs that could still fail on some row:
-- the failure would tell whether such a row exists, before anything is charged
SET extra_float_digits = 0;
CREATE ROLE uldp_gate_analyst LOGIN;
CREATE TABLE gate_visits AS
	SELECT u AS user_id, ((u * 37 + j * 11) % 100)::float8 AS amount,
		   ('note ' || u) COLLATE "C" AS note_c, ('note ' || j) COLLATE "POSIX" AS note_posix,
		   point(u, j) AS spot, ARRAY[point(u, j)] AS spots, ARRAY[u, j] AS pair,
		   '\x00'::bytea AS blob
	FROM generate_series(1, 200) u, generate_series(1, 3) j;
SELECT uldp.protect_table('gate_visits', 'user_id');
SELECT uldp.set_budget('uldp_gate_analyst', 100, 1e-6);
SET uldp.test_seed = 42;

SET SESSION AUTHORIZATION uldp_gate_analyst;
-- two columns of conflicting implicit collations: PostgreSQL raises "could not determine
-- which collation to use" only when a row reaches the comparison
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE note_c = note_posix;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE note_c < note_posix;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE note_c IS DISTINCT FROM note_posix;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE NULLIF(note_c, note_posix) IS NULL;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE GREATEST(note_c, note_posix) = 'x' COLLATE "C";
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE note_c = ANY (ARRAY[note_posix]);
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits
WHERE CASE note_c WHEN note_posix THEN true END;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits
WHERE ARRAY[note_c] = ARRAY[note_posix];
-- arrays of a type without an ordering: array_eq raises "could not identify an equality
-- operator for type point" on the first pair of rows it compares
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE spots = spots;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE spots IS DISTINCT FROM NULL::point[];
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE spots < ARRAY[point(1, 1)];
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE spots IN (ARRAY[point(1, 1)]);
-- ARRAY[...] of variable-length values from rows can exceed the 1 GB limit of a value
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE ARRAY[note_c, note_c] IS NOT NULL;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits WHERE 'x' = ANY (ARRAY[note_c, 'y']);
-- the releases over shards' states would read a row's bytea as a state: one user's row as
-- many users (and an invalid one fails while reading)
SELECT uldp.user_dp_count(blob, user_id, 0.5) FROM gate_visits;
SELECT uldp.user_dp_mean(blob, user_id, 0.5, 0, 100) FROM gate_visits;
RESET SESSION AUTHORIZATION;
-- nothing was charged for the refused queries
SELECT epsilon_spent FROM uldp.budget WHERE role = 'uldp_gate_analyst';

-- the allowed forms still work: an explicit COLLATE decides the comparison, arrays of
-- ordered types compare, and ARRAY[...] of constants or of fixed-length values is fine
SET SESSION AUTHORIZATION uldp_gate_analyst;
SELECT round(user_dp_mean(amount, user_id, 0.5, 0, 100)::numeric, 6) AS explicit_collate
FROM gate_visits WHERE note_c = note_posix COLLATE "C";
SELECT round(user_dp_mean(amount, user_id, 0.5, 0, 100)::numeric, 6) AS collations_agree
FROM gate_visits WHERE note_c >= 'note 1' AND note_posix IN ('note 1', 'note 2')
	AND GREATEST(note_c, 'a') <> 'b' AND NULLIF(note_posix, 'note 3') IS NOT NULL;
SELECT round(user_dp_mean(amount, user_id, 0.5, 0, 100)::numeric, 6) AS ordered_arrays
FROM gate_visits WHERE pair <> ARRAY[1, 1] AND ARRAY[user_id, 2] > ARRAY[3, 4]
	AND ARRAY[1.5, amount] IS NOT NULL AND note_c = ANY (ARRAY['note 5', 'note 6']) IS NOT TRUE;
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent FROM uldp.budget WHERE role = 'uldp_gate_analyst';

-- the collation of LIKE, ILIKE, lower and upper must be determinate, and LIKE's deterministic
RESET SESSION AUTHORIZATION;
CREATE COLLATION gate_nondeterministic (provider = icu, locale = 'und', deterministic = false);
SET SESSION AUTHORIZATION uldp_gate_analyst;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits
WHERE lower(CASE WHEN amount > 50 THEN note_c ELSE note_posix END) IS NOT NULL;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM gate_visits
WHERE note_c COLLATE gate_nondeterministic LIKE 'note%';
SELECT round(user_dp_mean(amount, user_id, 0.5, 0, 100)::numeric, 6) AS nondeterministic_lower
FROM gate_visits WHERE upper(note_c COLLATE gate_nondeterministic) = 'NOTE 1';
RESET SESSION AUTHORIZATION;
DROP COLLATION gate_nondeterministic;

-- The filters analysts write: dates and times, casts of constants and parameters, LIKE,
-- lower, upper, length.  Whatever can fail on some row is replaced by a function that
-- returns NULL there, so a row with extreme values changes nothing but its own result.
SELECT uldp.set_budget('uldp_gate_analyst', 100000, 1e-6);
CREATE TABLE gate_events AS
	SELECT u AS user_id,
		   timestamp '2001-01-01 08:00' + (u * 7 + j) * interval '1 day 1 hour' AS at,
		   timestamptz '2001-01-01 08:00+00' + (u * 7 + j) * interval '1 day 1 hour' AS at_tz,
		   date '2001-01-01' + (u * 11 + j) AS day,
		   (u * 13 + j) * interval '1 minute' AS span,
		   format('Note %s-%s', u, j) AS note,
		   format('N%s', u % 10)::char(4) AS code,
		   u % 3 = 0 AS flag,
		   ((u * 37 + j * 11) % 100)::float8 AS amount,
		   jsonb_build_object('kind', u % 4) AS doc
	FROM generate_series(1, 40) u, generate_series(1, 3) j;
SELECT uldp.protect_table('gate_events', 'user_id');
SET SESSION AUTHORIZATION uldp_gate_analyst;
-- each filter releases the number of users with eps = 50 (the noise is 0 but with
-- probability 2e-22): the users it selects, or an error
CREATE TEMP TABLE gate_filters (n int, filter text);
INSERT INTO gate_filters VALUES
	(1, $$date_trunc('month', at) = '2001-03-01'$$),
	(2, $$date_trunc('week', at_tz) < '2001-06-01 00:00+00'::timestamptz$$),
	(3, $$extract(dow FROM at) IN (0, 6)$$),
	(4, $$extract(year FROM day) = 2001 AND date_part('month', day) BETWEEN 3 AND 5$$),
	(5, $$date_part('hour', at_tz) >= 12 AND extract(epoch FROM span) > 600$$),
	(6, $$date_trunc('hour', span) = interval '2 hours'$$),
	(7, $$at + interval '1 month' > '2001-06-01' AND at - interval '2 days' <= '2001-09-01'$$),
	(8, $$interval '1 year' + at < '2002-03-01' AND at_tz + interval '1 day' > now() - interval '100 years'$$),
	(9, $$day + 30 > '2001-06-01' AND day - 7 < '2001-09-01' AND 7 + day > '2001-03-01'$$),
	(10, $$day - date '2001-01-01' < 100 AND day + interval '12 hours' > '2001-02-01 06:00'$$),
	(11, $$at_tz - timestamptz '2001-01-01 00:00+00' > interval '100 days' AND at - day < interval '1 year'$$),
	(12, $$-span < interval '-2 hours' AND span + span > interval '5 hours' AND span - interval '1 hour' > interval '0'$$),
	(13, $$age(at) > interval '20 years' AND age(timestamp '2002-01-01', at) > interval '6 months'$$),
	(14, $$day::timestamp < '2001-04-01' AND at::date > '2001-02-02' AND day::timestamptz > at_tz - interval '1 year'$$),
	(15, $$day <= current_date AND at < localtimestamp AND at_tz < now() AND at_tz <= statement_timestamp()$$),
	(16, $$date_trunc('day', at) = at::date$$),
	(17, $$note LIKE 'Note 1%' AND note NOT LIKE '%-2'$$),
	(18, $$note ILIKE 'note 3_-%' OR note NOT ILIKE '%\-_' OR note LIKE 'Note 2#%' ESCAPE '#'$$),
	(19, $$code LIKE 'N1%' OR code ILIKE 'n2  '$$),
	(20, $$lower(note) = 'note 7-1' OR upper(note) LIKE 'NOTE 1_-1' OR length(note) = 8$$),
	(21, $$char_length(note) > 8 AND octet_length(note) = character_length(note)$$),
	(22, $$flag::int = 1 AND (amount > 50)::int + 1 = 2$$),
	(23, $$COALESCE(amount, 0) BETWEEN 10 AND 30 AND NULLIF(amount, 11) IS NOT NULL$$),
	(24, $$amount::int IN (11, 48, 85) OR user_id::numeric IN (1.0, 2.0)$$),
	(25, $$user_id::text LIKE '1%' AND day::text LIKE '%2001' AND amount::text <> '11'$$),
	(26, $$day >= '2001-03-01'::text::date AND doc = '{"kind": 1}'::text::jsonb$$),
	(27, $$at < '2001-01-01'::text::timestamp + interval '60 days'$$);
CREATE FUNCTION pg_temp.release_all(aggregate text) RETURNS TABLE (n int, users text)
LANGUAGE plpgsql AS $f$
DECLARE
	f record;
BEGIN
	FOR f IN SELECT * FROM gate_filters ORDER BY 1 LOOP
		n := f.n;
		BEGIN
			EXECUTE format('SELECT %s::text FROM gate_events WHERE %s', aggregate, f.filter) INTO users;
		EXCEPTION WHEN others THEN
			users := 'ERROR: ' || SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END
$f$;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_gate_analyst;
CREATE TEMP TABLE gate_before AS SELECT * FROM pg_temp.release_all('user_dp_count(user_id, 50)');
-- rows at the ends of every range: infinities, the first and last timestamps, the last
-- date, the largest intervals, a pattern's escape character, NULLs
RESET SESSION AUTHORIZATION;
INSERT INTO gate_events (user_id, at, at_tz, day, span, note, code, flag, amount, doc) VALUES
	(101, 'infinity', 'infinity', 'infinity', '178956970 years 7 months', 'x\', 'N1\', NULL, 'Infinity', NULL),
	(102, '-infinity', '-infinity', '-infinity', '-178956970 years -8 months', NULL, NULL, true, 'NaN', '{}'),
	(103, '294276-12-31 23:59:59.999999', '294276-12-31 23:59:59.999999+00', '5874897-12-31',
	 '2147483647 days 2562047788:00:54.775807', repeat('é', 10000), 'ééé', false, -1e308, 'null'),
	(104, '4714-11-24 00:00:00 BC', '4714-11-24 00:00:00+00 BC', '4714-11-24 BC',
	 '-2147483648 days -2562047788:00:54.775807', '', '', NULL, NULL, NULL),
	(105, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
-- the owner, whose queries the gate leaves alone, counts the same users with PostgreSQL's
-- own functions, which fail on these rows
CREATE TEMP TABLE gate_owner AS SELECT * FROM pg_temp.release_all('count(DISTINCT user_id)');
GRANT SELECT ON gate_owner TO uldp_gate_analyst;
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_gate_analyst;
-- the same releases: no error before or after, and the extreme rows count only where
-- their values satisfy the filter
SELECT b.n, f.filter, b.users AS before, a.users AS after, o.users AS owner_after
FROM gate_before b JOIN pg_temp.release_all('user_dp_count(user_id, 50)') a USING (n)
	JOIN gate_owner o USING (n) JOIN gate_filters f USING (n) ORDER BY b.n;

-- A cast of values from rows that can fail, a field name or a LIKE pattern taken from the
-- rows, and functions outside the list are refused, saying what works instead
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE note::int > 3;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE note::date > '2001-01-01';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE at::timestamp(0) = at;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount::numeric(4, 1) = 1;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE doc::text LIKE '%1%';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE date_trunc(note, at) = at;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE note LIKE code;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE substr(note, 1, 4) = 'Note';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE to_char(at, 'YYYY') = '2001';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE date_trunc('month', at_tz, 'UTC') = at_tz;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE span * 2 > interval '1 hour';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE note LIKE $$x$$ ESCAPE code;

-- Public values that fail do so whatever the rows: before the first row is read (here no
-- row has amount > 1000), or when the query is planned
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND note LIKE 'Note\';
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND day < 'soon'::text::date;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND note LIKE 'a' ESCAPE 'ab';
-- a field is checked on a finite value and both infinities (extract(timezone FROM at) is
-- NULL on infinity, an error on every other timestamp)
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND extract(timezone FROM at) = 0;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND extract(hour FROM day) = 0;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND date_trunc('fortnight', at) = at;
SELECT user_dp_count(user_id, 1) FROM gate_events WHERE amount > 1000 AND date_trunc('week', span) = span;
-- parameters as JDBC sends them (varchar), in a generic plan: evaluated before reading
PREPARE gate_jdbc(varchar, varchar, varchar) AS
	SELECT user_dp_count(user_id, 50) FROM gate_events
	WHERE doc = $1::jsonb AND day >= $2::date AND note LIKE $3;
SET plan_cache_mode = force_generic_plan;
EXECUTE gate_jdbc('{"kind": 1}', '2001-03-01', 'Note %');
EXECUTE gate_jdbc('{"kind": 1', '2001-03-01', 'Note %');
EXECUTE gate_jdbc('{"kind": 1}', 'March', 'Note %');
EXECUTE gate_jdbc('{"kind": 1}', '2001-03-01', 'Note \');
RESET plan_cache_mode;
DEALLOCATE gate_jdbc;
DROP TABLE gate_filters, gate_before;
DROP FUNCTION pg_temp.release_all(text);
RESET SESSION AUTHORIZATION;
DROP TABLE gate_owner;
SELECT uldp.unprotect_table('gate_events');
DROP TABLE gate_events;

SELECT uldp.unprotect_table('gate_visits');
DROP TABLE gate_visits;
DELETE FROM uldp.budget_data WHERE role = 'uldp_gate_analyst';
DROP ROLE uldp_gate_analyst;

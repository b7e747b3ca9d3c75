-- the query gate refuses the allowed constructs that could still fail on some row:
-- the failure would tell whether such a row exists, before anything is charged
SET extra_float_digits = 0;
CREATE ROLE uldp_gate_analyst LOGIN;
CREATE TABLE gate_visits AS
	SELECT u AS user_id, ((u * 37 + j * 11) % 100)::float8 AS amount,
		   ('note ' || u) COLLATE "C" AS note_c, ('note ' || j) COLLATE "POSIX" AS note_posix,
		   point(u, j) AS spot, ARRAY[point(u, j)] AS spots, ARRAY[u, j] AS pair
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

SELECT uldp.unprotect_table('gate_visits');
DROP TABLE gate_visits;
DELETE FROM uldp.budget_data WHERE role = 'uldp_gate_analyst';
DROP ROLE uldp_gate_analyst;

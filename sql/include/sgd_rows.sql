-- sql/include/sgd_rows.sql -- shared by the user_dp_sgd regression tests (\i it after
-- \set users N and \set rows_table name): model_round, and a table of N users with 1 + u % 4 rows
-- each: x in [-1, 1]^2, y = 2 x1 - x2 + 0.5 (+ a small wobble), a logistic label c = 1 if
-- x1 > x2, and one-hot features of the user's class u % 3 (class 0 is the reference: all zeros)
-- with a label bought.

-- a model with its numbers rounded (weights to "digits" decimals, the rest to 6 significant)
CREATE OR REPLACE FUNCTION model_round(m jsonb, digits int DEFAULT 4) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT jsonb_object_agg(key, CASE
		WHEN key = 'weights' THEN coalesce((SELECT jsonb_agg(round(w::numeric, digits) ORDER BY i)
											FROM jsonb_array_elements_text(value) WITH ORDINALITY t(w, i)), '[]')
		WHEN jsonb_typeof(value) = 'number' THEN to_jsonb(round((value::text)::numeric, 6))
		ELSE value END)
	FROM jsonb_each(m) $$;

CREATE TABLE :"rows_table" AS
	SELECT u AS user_id, j AS row_no, x,
		   2 * x[1] - x[2] + 0.5 + ((u * 7 + j * 3) % 5 - 2) * 0.05 AS y,
		   (x[1] > x[2])::int::float8 AS c,
		   ARRAY[(u % 3 = 1)::int, (u % 3 = 2)::int]::float8[] AS onehot,
		   (u % 3 = 1 AND j % 2 = 0) OR (u % 3 = 2 AND j % 4 = 0) AS bought
	FROM generate_series(1, :users) u, generate_series(0, 3) j,
		 LATERAL (SELECT ARRAY[((u * 13 + j * 29) % 41) / 20.0 - 1,
							   ((u * 17 + j * 11) % 37) / 18.0 - 1]::float8[] AS x) xx
	WHERE j <= u % 4;
-- the dimensions are public: the table declares them
ALTER TABLE :"rows_table" ADD CHECK (cardinality(x) = 2), ADD CHECK (cardinality(onehot) = 2);
SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM :"rows_table";

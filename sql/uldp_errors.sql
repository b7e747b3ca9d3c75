-- public parameters raise clear errors; private data never does
SET uldp.test_seed = 3;

SELECT user_dp_mean(amount, user_id, 0) FROM visits;
SELECT user_dp_mean(amount, user_id, -1) FROM visits;
SELECT user_dp_mean(amount, user_id, 'NaN') FROM visits;
SELECT user_dp_mean(amount, user_id, 'Infinity') FROM visits;
SELECT user_dp_mean(amount, user_id, NULL) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, 10, 10) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, 10, 0) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, '-Infinity', 0) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, 0, 10, 0) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, 0, 10, -1) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, -1e12, 1e12, 1e-9) FROM visits;
SELECT user_dp_range(amount, user_id, 0) FROM visits;
-- the same errors on empty input
SELECT user_dp_mean(amount, user_id, 0) FROM visits WHERE false;

-- parameters must be known before any row is read
SELECT user_dp_mean(amount, user_id, visit + 1) FROM visits;
SELECT user_dp_mean(amount, user_id, 1, 0, amount) FROM visits;
SELECT user_dp_mean(amount, user_id, random() + 1) FROM visits;
SELECT user_dp_mean(amount, user_id, (SELECT 1.0)) FROM visits;
-- constant expressions and query parameters are fine
SELECT user_dp_mean(amount, user_id, 0.5 + 0.5, 0, 10 * 100) IS NOT NULL AS ok FROM visits;
-- ordering the input does not disturb the parameters
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000 ORDER BY amount * 2) IS NOT NULL AS ok FROM visits;
PREPARE release(float8) AS SELECT user_dp_mean(amount, user_id, $1, 0, 1000) IS NOT NULL AS ok FROM visits;
EXECUTE release(0.5);
EXECUTE release(0);
DEALLOCATE release;

-- not a window function
SELECT user_dp_mean(amount, user_id, 1) OVER () FROM visits LIMIT 1;
SELECT user_dp_range(amount, user_id, 1) OVER () FROM visits LIMIT 1;

-- the seeded mode is for superusers only
CREATE ROLE uldp_plain;
SET SESSION AUTHORIZATION uldp_plain;
SET uldp.test_seed = 1;
SET uldp.max_state_memory = '10GB';
RESET SESSION AUTHORIZATION;
DROP ROLE uldp_plain;

-- the per-user table has a configurable limit: an error, not an OOM kill
SET uldp.max_state_memory = '64kB';
SELECT user_dp_mean(x, user_id, 1.0) FROM big;
RESET uldp.max_state_memory;

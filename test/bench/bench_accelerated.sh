#!/usr/bin/env bash
# test/bench/bench_accelerated.sh -- user_dp_sgd's methods side by side on synthetic data:
# excess loss, agreement with the true model, gradient evaluations and wall time of
# "winsorized", "phased_erm" and "accelerated" (defaults otherwise), logistic and linear.
#
# Data (the logistic model of doc/learning.md): 8 features; every user u has a shift
# s_u ~ N(0, 0.75^2 I) and m rows x = s_u + N(0, I); the logistic label is
# Bernoulli(sigmoid(w.x + b)), the linear one w.x + b + N(0, 1), with
# w = (1, -1, 0.75, -0.5, 0.5, -0.25, 0.25, 0), b = 0.25.  The test set is 3000 other users.
# Excess loss is measured against the true model, which minimises the population loss:
# E[KL(sigmoid(z) || prediction)] (logistic) or E[(prediction - z)^2] / 2 (linear), z = w.x + b;
# agreement is the share of test rows where the prediction and z are on the same side
# (0.5 or 0). Each figure is the mean (± its standard error) over the releases.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54343 unless ULDP_PORT is set).
#
# Usage: bash test/bench/bench_accelerated.sh
#   ULDP_NO_BUILD=1    skip dependency install and build (measure what is installed)
#   ULDP_ACC_USERS     numbers of users (default "1000 10000 100000")
#   ULDP_ACC_ROWS      rows per user (default 10)
#   ULDP_ACC_REPS      releases per method and configuration (default 5)
#   ULDP_ACC_EPSILON   epsilon (default 1; delta is 1e-6)
#   ULDP_ACC_METHODS   methods (default "winsorized phased_erm accelerated")
set -euo pipefail

: "${ULDP_PORT:=54343}"
export ULDP_PORT
USERS="${ULDP_ACC_USERS:-1000 10000 100000}"
ROWS="${ULDP_ACC_ROWS:-10}"
REPS="${ULDP_ACC_REPS:-5}"
EPSILON="${ULDP_ACC_EPSILON:-1}"
METHODS="${ULDP_ACC_METHODS:-winsorized phased_erm accelerated}"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

uldp_prepare
uldp_start_cluster
uldp_psql -d postgres -q -c "CREATE DATABASE uldp_bench_accel"
uldp_psql -d uldp_bench_accel -q >/dev/null <<'SQL'
CREATE EXTENSION uldp;
SELECT uldp.set_budget(current_user::regrole, 1e9, 0.5) IS NULL AS budget;
SELECT setseed(0.42);
CREATE FUNCTION gauss() RETURNS float8 LANGUAGE sql VOLATILE AS
$$ SELECT sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) $$;
CREATE TABLE truth AS SELECT ARRAY[1, -1, 0.75, -0.5, 0.5, -0.25, 0.25, 0]::float8[] AS w, 0.25::float8 AS b;
-- users with their rows: z = w.x + b, a logistic label c and a linear label y
CREATE FUNCTION users(first int, last int, rows int)
RETURNS TABLE (user_id int, x float8[], z float8, c boolean, y float8) LANGUAGE sql VOLATILE AS $$
	SELECT u, x, z, random() < 1 / (1 + exp(-z)), z + gauss()
	FROM (SELECT u, ARRAY(SELECT 0.75 * gauss() FROM generate_series(1, 8) WHERE u IS NOT NULL) AS s
		  FROM generate_series(first, last) u) us,
		 generate_series(1, rows) j,
		 LATERAL (SELECT array_agg(s[k] + gauss() ORDER BY k) AS x FROM generate_series(1, 8) k WHERE j > 0) xx,
		 LATERAL (SELECT (SELECT sum(x[k] * t.w[k]) FROM generate_series(1, 8) k) + t.b AS z FROM truth t) zz $$;
CREATE TABLE test AS SELECT * FROM users(-3000, -1, 15);
CREATE FUNCTION excess(m jsonb) RETURNS TABLE (excess float8, agreement float8) LANGUAGE sql AS $$
	SELECT CASE WHEN m ->> 'loss' = 'logistic'
				THEN avg(p * ln(p / greatest(q, 1e-300)) + (1 - p) * ln((1 - p) / greatest(1 - q, 1e-300)))
				ELSE avg((q - z) ^ 2) / 2 END,
		   avg(((q > CASE WHEN m ->> 'loss' = 'logistic' THEN 0.5 ELSE 0 END) = (z > 0))::int)
	FROM (SELECT z, 1 / (1 + exp(-z)) AS p, uldp.predict(m, x) AS q FROM test) t $$;
CREATE TABLE results (users int, loss text, method text, excess float8, agreement float8,
					  gradient_evaluations float8, seconds float8);
-- one release: its figures in results
CREATE PROCEDURE release(users int, loss text, method text, epsilon float8) LANGUAGE plpgsql AS $$
DECLARE
	m jsonb;
	started timestamptz := clock_timestamp();
	seconds float8;
BEGIN
	EXECUTE format('SELECT user_dp_sgd(x, %s, user_id, %s, 1e-6, %L) FROM train',
				   CASE loss WHEN 'logistic' THEN 'c' ELSE 'y' END, epsilon,
				   jsonb_build_object('loss', loss, 'method', method)) INTO m;
	seconds := extract(epoch FROM clock_timestamp() - started);
	INSERT INTO results SELECT users, loss, method, e.excess, e.agreement,
							   (m ->> 'gradient_evaluations')::float8, seconds
	FROM excess(m) e;
END $$;
SQL

for n in $USERS; do
    uldp_log "$n users x $ROWS rows"
    uldp_psql -d uldp_bench_accel -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS train" \
        -c "CREATE TABLE train AS SELECT * FROM users(1, $n, $ROWS)" \
        -c "ALTER TABLE train ADD CHECK (cardinality(x) = 8)" -c "VACUUM ANALYZE train"
    for loss in logistic squared; do
        for method in $METHODS; do
            for _ in $(seq "$REPS"); do
                uldp_psql -d uldp_bench_accel -q -c "CALL release($n, '$loss', '$method', $EPSILON)"
            done
        done
    done
done

echo
echo "epsilon $EPSILON, delta 1e-6, $ROWS rows per user, $REPS releases each"
echo
echo "| users | loss | method | excess loss | agreement | gradient evaluations | seconds |"
echo "|---|---|---|---|---|---|---|"
uldp_psql -d uldp_bench_accel -qAt -F ' | ' -c "
	SELECT users, loss, method,
		   format('%s ± %s', round(avg(excess)::numeric, 5), round((stddev_samp(excess) / sqrt(count(*)))::numeric, 5)),
		   round(avg(agreement)::numeric, 4), round(avg(gradient_evaluations)), round(avg(seconds)::numeric, 2)
	FROM results GROUP BY users, loss, method
	ORDER BY users, loss, array_position(string_to_array('$METHODS', ' '), method)" | sed 's/^/| /; s/$/ |/'

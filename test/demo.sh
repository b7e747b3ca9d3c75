#!/usr/bin/env bash
# test/demo.sh -- a guided tour of uldp: installs deps, builds + installs the extension, starts a
# throwaway cluster (port 54330 unless ULDP_PORT is set), loads a demo table of 200k visits by
# 2000 users, protects it (analyst has no SELECT privilege on it: only releases are allowed), gives
# role "analyst" a privacy budget of (epsilon=5, delta=1e-6) and replays a short analyst session. On a terminal (and without CI) it then leaves you in psql as analyst; the
# cluster is stopped and deleted when you quit. ULDP_KEEP=1 keeps the temp dir.
set -euo pipefail

: "${ULDP_PORT:=54330}"
export ULDP_PORT

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

uldp_prepare
uldp_start_cluster

uldp_log "creating database demo, role analyst and table visits (200k rows, 2000 users)"
uldp_psql -d postgres -q -c 'CREATE DATABASE demo'
uldp_psql -d demo -q <<'SQL'
CREATE EXTENSION uldp;
CREATE ROLE analyst LOGIN;

-- Each user has a personal mean around 50 and between 1 and 199 visits (about 100 on average);
-- individual amounts are noisy around the user's mean. Normal draws use Box-Muller.
SELECT setseed(0.42) \g /dev/null
CREATE TABLE visits (user_id int, amount float8, region int,
                     features float8[] CHECK (cardinality(features) = 2), returned float8);
WITH users AS (
    SELECT u AS user_id,
           50 + 3 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS mu,
           1 + floor(random() * 199)::int AS n_visits
    FROM generate_series(1, 2000) AS u
)
INSERT INTO visits (user_id, amount, region)
SELECT users.user_id,
       greatest(0, users.mu + 5 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())),
       1 + floor(random() * 8)::int
FROM users, LATERAL generate_series(1, users.n_visits) AS v;
-- a feature vector per visit, and whether the purchase was returned (a logistic model of it)
UPDATE visits SET features = ARRAY[(amount - 50) / 5, (region - 4.5) / 2.3];
UPDATE visits SET returned = (random() < 1 / (1 + exp(-(1.5 * features[1] - features[2] - 1))))::int;
ANALYZE visits;
SQL
uldp_psql -d demo -qAt -c "SELECT format('visits: %s rows, %s users', count(*), count(DISTINCT user_id)) FROM visits"

echo
echo "================ as superuser postgres: protect visits, give analyst a budget ================"
uldp_psql -d demo -e <<'SQL'
\echo '-- visits is private and user_id is its privacy unit; analyst gets no SELECT privilege on it'
SELECT uldp.protect_table('visits', 'user_id');
SELECT uldp.set_budget('analyst', 6.0, 1e-6);
\echo '-- the non-private answers, for comparison: the mean over rows, and the'
\echo '-- mean of the user averages, which user_dp_mean estimates'
SELECT avg(amount) FROM visits;
SELECT avg(m) AS mean_of_user_means FROM (SELECT avg(amount) m FROM visits GROUP BY user_id) s;
SQL

echo "================ analyst session (budget: epsilon = 5.0, delta = 1e-6) ================"
uldp_psql -d demo -U analyst -e 2>&1 <<'SQL'
\echo '-- mean with user-level DP, epsilon = 0.5, no bounds given'
SELECT user_dp_mean(amount, user_id, 0.5) FROM visits;
\echo '-- mean with epsilon = 0.5 and public bounds [0, 1000]'
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) FROM visits;
\echo '-- same, with an explicit tau = 12.5 (sixth argument)'
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000, 12.5) FROM visits;
\echo '-- a private range (lower, upper) of the amounts, epsilon = 0.5'
SELECT (r).lower, (r).upper FROM (SELECT user_dp_range(amount, user_id, 0.5, 0, 1000) r FROM visits) s;
\echo '-- how many users visited, epsilon = 0.2, with a 95% interval (never negative)'
SELECT (e).estimate AS users, (e).ci_lower, (e).ci_upper FROM (SELECT user_dp_count_ci(user_id, 0.2) e FROM visits) s;
\echo '-- a filtered release: the mean in region 3, epsilon = 0.5'
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) FROM visits WHERE region = 3;
\echo '-- per region, one charge for all 8 (0.2 + 0.5, plus 0.25 to choose the regions privately):'
\echo '-- each user counts in one of its regions, chosen at random (uldp.max_groups_per_user = 1)'
SELECT region, user_dp_count(user_id, 0.2) AS users,
       round(user_dp_mean(amount, user_id, 0.5, 0, 100)::numeric, 1) AS mean
FROM visits GROUP BY region ORDER BY region;
\echo '-- the mean of a vector column (rows of l2 norm at most 4), epsilon = 0.5, delta = 1e-7'
SELECT user_dp_mean(features, user_id, 0.5, 1e-7, 4.0) FROM visits;
\echo '-- a logistic regression of returned on the features, epsilon = 1.0, delta = 1e-7'
SELECT user_dp_sgd(features, returned, user_id, 1.0, 1e-7, '{"loss": "logistic"}') AS model FROM visits \gset
SELECT jsonb_pretty(:'model');
\echo '-- the model is public once released: predicting costs no budget'
SELECT f AS features, round(uldp.predict(:'model', f)::numeric, 3) AS p_returned
FROM (VALUES (ARRAY[0, 0]::float8[]), (ARRAY[2, -1]::float8[]), (ARRAY[-2, 1]::float8[])) v(f);
\echo '-- raw rows, ordinary aggregates and filters that could raise errors are refused: these must fail'
\set ON_ERROR_STOP off
SELECT * FROM visits LIMIT 5;
SELECT count(*) FROM visits WHERE region = 3;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) FROM visits WHERE length(region::text) > 0;
\set ON_ERROR_STOP on
\echo '-- what is left of the budget, and what was spent'
SELECT * FROM uldp.budget;
SELECT * FROM uldp.ledger;
\echo '-- asking for epsilon = 2.0 now exceeds the remaining budget: this must fail'
\set ON_ERROR_STOP off
SELECT user_dp_mean(amount, user_id, 2.0) FROM visits;
\set ON_ERROR_STOP on
SQL

if [ -t 0 ] && [ -z "${CI:-}" ]; then
    echo
    echo "You are now in psql as role 'analyst' on database 'demo' (table: visits, protected)."
    echo "Try:  SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) FROM visits;"
    echo "      SELECT user_dp_sgd(features, returned, user_id, 0.5, 1e-7, '{\"loss\": \"logistic\"}') FROM visits;"
    echo "      SELECT * FROM uldp.budget;"
    echo "From another terminal (as root):  runuser -u postgres -- psql -h $PGHOST -p $PGPORT -U analyst demo"
    echo "Quit with \\q (or Ctrl-D); the throwaway cluster is then stopped and deleted."
    echo
    trap '' INT # Ctrl-C belongs to psql (cancels a query) and must not end this script
    uldp_as_pg "$ULDP_PGBIN/psql" -X -d demo -U analyst || true
    trap 'exit 130' INT
fi
exit 0

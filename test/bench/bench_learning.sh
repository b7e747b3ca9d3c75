#!/usr/bin/env bash
# test/bench/bench_learning.sh -- the learning experiment of doc/learning.md: accuracy of
# user_dp_sgd (logistic and linear regression) against a non-private fit and against row-level
# DP gradient descent made user-level by group privacy; l2 error of the vector user_dp_mean
# against the rate of Levy et al. (2021); time of both against built-in aggregates.
#
# Starts a throwaway PostgreSQL 15 cluster (port 54342 unless ULDP_PORT is set) and runs
# test/bench/learning.py (pure Python standard library), which writes doc/learning.md,
# doc/img/learning_*.svg (drawn by gnuplot) and test/bench/learning_results.json (raw numbers).
# About 8 minutes on 2 cores (ULDP_LEARN_JOBS=2 processes for the naive simulation).
#
# Usage: bash test/bench/bench_learning.sh
#   ULDP_NO_BUILD=1      skip dependency install and build (measure what is installed)
#   ULDP_PORT            cluster port (default 54342)
#   ULDP_LEARN_REPS      private releases per method and configuration (default 10)
#   ULDP_LEARN_RUNS      timed runs per query (default 3)
#   ULDP_LEARN_OUT       output directory (default doc/)
#   ULDP_LEARN_JOBS      processes for the Python simulation of the naive baseline (default 2)
set -euo pipefail

: "${ULDP_PORT:=54342}"
export ULDP_PORT
export ULDP_PG_CONF_EXTRA="shared_buffers = 1GB"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
START_TIME=$SECONDS

uldp_prepare
if ! command -v gnuplot >/dev/null 2>&1; then
    uldp_log "installing gnuplot-nox (for the SVG figures)"
    _uldp_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnuplot-nox \
        || uldp_die "gnuplot missing: apt-get install gnuplot-nox"
fi
PYTHON=/usr/bin/python3

uldp_start_cluster

# psql as OS user postgres unless we are root (root can reach the cluster's private socket dir)
if [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = postgres ]; then
    export ULDP_LEARN_PSQL="$ULDP_PGBIN/psql"
else
    export ULDP_LEARN_PSQL="sudo -n -u postgres env PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=$PGUSER $ULDP_PGBIN/psql"
fi
export ULDP_LEARN_SETUP_SECONDS=$((SECONDS - START_TIME))

uldp_log "running test/bench/learning.py"
"$PYTHON" "$ULDP_REPO/test/bench/learning.py" --reps "${ULDP_LEARN_REPS:-10}" \
    --runs "${ULDP_LEARN_RUNS:-3}" --out-dir "${ULDP_LEARN_OUT:-$ULDP_REPO/doc}" "$@"
uldp_log "done in $((SECONDS - START_TIME)) s: ${ULDP_LEARN_OUT:-$ULDP_REPO/doc}/learning.md and img/learning_*.svg"

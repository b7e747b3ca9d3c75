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
# Section 5 of doc/learning.md (every user_dp_sgd method on the same data: excess risk, test
# accuracy or MSE, gradient evaluations and time) has its own run, which needs numpy and leaves
# the other sections alone (and they leave it alone):
#   bash test/bench/bench_learning.sh --parts methods            the full grid: about 25 minutes
#         with the two methods of uldp 0.5, at most about 50 with five (15 releases per method and cell)
#   bash test/bench/bench_learning.sh --parts methods --quick    small n, about a minute
#   ... --methods winsorized,phased_erm                         another list (default: all five)
# It writes test/bench/learning_methods.json and doc/img/learning_methods_*.svg; see
# python3 test/bench/learning.py --help for its other options.
#
# Usage: bash test/bench/bench_learning.sh [learning.py options]
#   ULDP_NO_BUILD=1      skip dependency install and build (measure what is installed)
#   ULDP_PORT            cluster port (default 54342)
#   ULDP_LEARN_REPS      private releases per method and configuration (default 10)
#   ULDP_LEARN_RUNS      timed runs per query (default 3)
#   ULDP_LEARN_OUT       output directory (default doc/)
#   ULDP_LEARN_JOBS      processes for the Python simulation of the naive baseline (default 2)
set -euo pipefail

# the exact command, for the page's header
ULDP_LEARN_COMMAND=""
for v in ULDP_NO_BUILD ULDP_PG_ROOT ULDP_PORT ULDP_LEARN_REPS ULDP_LEARN_RUNS; do
    if [ -n "${!v+x}" ]; then ULDP_LEARN_COMMAND+="$v=$(printf '%q' "${!v}") "; fi
done
ULDP_LEARN_COMMAND+="bash test/bench/bench_learning.sh"
for a in "$@"; do ULDP_LEARN_COMMAND+=" $(printf '%q' "$a")"; done
export ULDP_LEARN_COMMAND
if [ "${ULDP_NO_BUILD:-0}" = 1 ]; then export ULDP_LEARN_BUILT=0; else export ULDP_LEARN_BUILT=1; fi
: "${ULDP_PORT:=54342}"
export ULDP_PORT
export ULDP_PG_CONF_EXTRA="shared_buffers = 1GB"

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
START_TIME=$SECONDS

export ULDP_PG_CONFIG

uldp_prepare
if ! command -v gnuplot >/dev/null 2>&1; then
    uldp_log "installing gnuplot-nox (for the SVG figures)"
    _uldp_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnuplot-nox \
        || uldp_die "gnuplot missing: apt-get install gnuplot-nox"
fi
PYTHON=/usr/bin/python3

uldp_start_cluster

ULDP_LEARN_PSQL="$(uldp_bench_psql)"
export ULDP_LEARN_PSQL
export ULDP_LEARN_SETUP_SECONDS=$((SECONDS - START_TIME))

uldp_log "running test/bench/learning.py"
"$PYTHON" "$ULDP_REPO/test/bench/learning.py" --reps "${ULDP_LEARN_REPS:-10}" \
    --runs "${ULDP_LEARN_RUNS:-3}" --out-dir "${ULDP_LEARN_OUT:-$ULDP_REPO/doc}" "$@"
uldp_log "done in $((SECONDS - START_TIME)) s: ${ULDP_LEARN_OUT:-$ULDP_REPO/doc}/learning.md and img/learning_*.svg"

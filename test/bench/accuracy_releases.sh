#!/usr/bin/env bash
# test/bench/accuracy_releases.sh -- the accuracy of the releases of issue 12 (user_dp_mean and
# user_dp_sum against the naive mechanism and the best fixed clipping, the 0/1 example, the
# intervals of the _ci twins, user_dp_count) for doc/accuracy.md: starts a throwaway PostgreSQL 15
# cluster (port 54342 unless ULDP_PORT is set) and runs test/bench/accuracy_releases.py, which
# writes test/bench/accuracy_releases.json and its block of doc/accuracy.md.  About 10 minutes on
# 2 cores, most of it the grid at n = 1,000,000.  Not run in CI.
#
# Usage: bash test/bench/accuracy_releases.sh [PYTHON-ARGS...]
#   ULDP_NO_BUILD=1   skip dependency install and build (measure what is installed)
#   ULDP_PORT         cluster port (default 54342)
#   ULDP_ACC_PARTS    comma-separated parts: grid,tails,share,intervals,count (default all)
#   ULDP_ACC_SCALE    multiplies the releases per cell (default 1)
# The "before" row of the 0/1 example comes from an older build, installed under its own root:
#   source test/lib/common.sh && uldp_private_pg /opt/pg-before
#   git archive 9bbd3dc | tar -x -C /tmp/uldp-before    # uldp 0.4, before issue 12
#   make -C /tmp/uldp-before PG_CONFIG=/opt/pg-before/lib/postgresql/15/bin/pg_config install
#   ULDP_NO_BUILD=1 ULDP_PG_ROOT=/opt/pg-before ULDP_ACC_PARTS=share \
#       bash test/bench/accuracy_releases.sh --tag before --built-from 9bbd3dc
set -euo pipefail

: "${ULDP_PORT:=54342}"
export ULDP_PORT

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

uldp_prepare
# Debian's python: a pyenv or venv python3 first in PATH may lack numpy
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import numpy' 2>/dev/null \
    || uldp_die "$PYTHON cannot import numpy (apt-get install python3-numpy)"

uldp_start_cluster

ULDP_ACC_PSQL="$(uldp_bench_psql)"
export ULDP_ACC_PSQL
export ULDP_PG_CONFIG

COMMAND="bash test/bench/accuracy_releases.sh"
[ -z "${ULDP_ACC_PARTS:-}" ] || COMMAND="ULDP_ACC_PARTS=$ULDP_ACC_PARTS $COMMAND"
[ -z "${ULDP_ACC_SCALE:-}" ] || COMMAND="ULDP_ACC_SCALE=$ULDP_ACC_SCALE $COMMAND"
[ "$ULDP_PG_ROOT" = /usr ] || COMMAND="ULDP_NO_BUILD=${ULDP_NO_BUILD:-0} ULDP_PG_ROOT=$ULDP_PG_ROOT $COMMAND"
[ "$#" -eq 0 ] || COMMAND="$COMMAND $*"
uldp_log "running test/bench/accuracy_releases.py"
"$PYTHON" "$ULDP_REPO/test/bench/accuracy_releases.py" --parts "${ULDP_ACC_PARTS:-grid,tails,share,intervals,count}" \
    --scale "${ULDP_ACC_SCALE:-1}" --command "$COMMAND" "$@"
uldp_log "wrote test/bench/accuracy_releases.json and its block of doc/accuracy.md"

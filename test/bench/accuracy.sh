#!/usr/bin/env bash
# test/bench/accuracy.sh -- the accuracy experiment of doc/accuracy.md: starts a throwaway
# PostgreSQL 15 cluster (port 54341 unless ULDP_PORT is set) and runs test/bench/accuracy.py,
# which writes doc/accuracy.png, doc/accuracy.md and test/bench/accuracy.json (the raw numbers).
# About 3 minutes on 2 cores.
#
# Usage: bash test/bench/accuracy.sh
#   ULDP_NO_BUILD=1   skip dependency install and build (measure what is installed)
#   ULDP_PORT         cluster port (default 54341)
#   ULDP_ACC_REPS     releases per method and configuration (default 100)
#   ULDP_ACC_OUT      output directory (default doc/)
set -euo pipefail

: "${ULDP_PORT:=54341}"
export ULDP_PORT

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

uldp_prepare
# Debian's python: a pyenv or venv python3 first in PATH may lack numpy and matplotlib
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import numpy, matplotlib' 2>/dev/null \
    || uldp_die "$PYTHON cannot import numpy and matplotlib (apt-get install python3-numpy python3-matplotlib)"

uldp_start_cluster

ULDP_ACC_PSQL="$(uldp_bench_psql)"
export ULDP_ACC_PSQL

uldp_log "running test/bench/accuracy.py"
"$PYTHON" "$ULDP_REPO/test/bench/accuracy.py" --reps "${ULDP_ACC_REPS:-100}" \
    --out-dir "${ULDP_ACC_OUT:-$ULDP_REPO/doc}"
uldp_log "wrote ${ULDP_ACC_OUT:-$ULDP_REPO/doc}/accuracy.{png,md}"

#!/usr/bin/env bash
# test/bench/local_accuracy.sh -- the accuracy of the local protocol of uldp 0.7 for doc/accuracy.md:
# starts a throwaway PostgreSQL 15 cluster (port 54343 unless ULDP_PORT is set) and runs
# test/bench/local_accuracy.py, which writes test/bench/local_accuracy.json and its block of
# doc/accuracy.md. Not run in CI.
#
# Usage: bash test/bench/local_accuracy.sh [--parts scalar,vector] [--scale S]
#   ULDP_NO_BUILD=1   skip dependency install and build (measure what is installed)
#   ULDP_PORT         cluster port (default 54343)
set -euo pipefail

: "${ULDP_PORT:=54343}"
export ULDP_PORT

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

uldp_prepare
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import numpy' 2>/dev/null \
    || uldp_die "$PYTHON cannot import numpy (apt-get install python3-numpy)"

uldp_start_cluster

ULDP_ACC_PSQL="$(uldp_bench_psql)"
export ULDP_ACC_PSQL

COMMAND="bash test/bench/local_accuracy.sh"
[ "$ULDP_PG_ROOT" = /usr ] || COMMAND="ULDP_NO_BUILD=${ULDP_NO_BUILD:-0} ULDP_PG_ROOT=$ULDP_PG_ROOT $COMMAND"
[ "$#" -eq 0 ] || COMMAND="$COMMAND $*"
BUILD="uldp $(git -C "$ULDP_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown), run on $(date -u '+%Y-%m-%d %H:%M UTC')"
"$PYTHON" "$ULDP_REPO/test/bench/local_accuracy.py" --command "$COMMAND" --build "$BUILD" "$@"
uldp_log "wrote test/bench/local_accuracy.json and its block of doc/accuracy.md"

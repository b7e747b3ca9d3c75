# shellcheck shell=bash
# test/attack/lib/attack.sh -- helpers for the shell-driven attack tests test/attack/*.sh
# (source it at the top of a test file, after `set -uo pipefail`).
#
# The files are run by the "attack" stage of test/run.sh, as root, against the running throwaway
# cluster, each in a fresh database of its own that the stage creates (with the uldp extension)
# and drops afterwards. From the stage's environment they need
#   PGHOST PGPORT PGUSER ULDP_PGDATA ULDP_PGTMP ULDP_PGLOG   (exported by uldp_start_cluster)
#   ULDP_ATTACK_DB                                          (the file's database)
# This file sources test/lib/common.sh for uldp_as_pg / uldp_psql (keeping those variables).
#
# It defines, for a file test/attack/NAME.sh:
#   ATTACK_NAME ATTACK_DB     NAME and its database
#   ATTACK_PREFIX             uldp_attack_NAME_ : every role of the file starts with it
#   ATTACK_DIR                a scratch directory owned by postgres (removed at exit)
#   sql ARGS...               psql -qAt as superuser postgres in ATTACK_DB (autocommit), ON_ERROR_STOP
#   sql_as ROLE ARGS...       the same, connected as ROLE (so ROLE is the session user)
#   ok STATUS DESC            TAP line "ok N - DESC" if STATUS is 0, else "not ok N - DESC"
#   ok_if DESC CMD...         TAP line: ok iff CMD succeeds (CMD is run each time: pass a function,
#                             not "$(...)", to anything that polls)
#   is GOT EXPECTED DESC      TAP line: string equality, with a diagnostic on failure
#   diag TEXT...              "# TEXT" lines
#   wait_for SECONDS DESC CMD...  poll CMD every 0.05 s until it succeeds; false after SECONDS
#   attack_at_exit 'code'     run code (eval, in reverse order) when the file exits
#   attack_track PID          a background job to kill (SIGTERM) at exit if it is still running
#   attack_drop_roles         delete the budget rows of, and drop, every role starting with ATTACK_PREFIX
#                             (never ledger rows: the ledger is append-only)
#   attack_setup_visits ROLE...   table public.visits(user_id int, amount float8), 20 users x 3
#                             rows, amounts in [11, 203], readable by the ROLEs
#   epsilon_spent ROLE, ledger_rows ROLE [PSQL-ARGS]   the role's epsilon_spent / release rows
#   grew_by BEFORE AFTER AMOUNT, numeric_eq A B        exact numeric comparisons (by the server)
#   nonempty STRING
#   sqlstate_as ROLE SQL      the SQLSTATE ROLE gets for SQL in a fresh session ("" if none)
#   attack_restore_preload    reset shared_preload_libraries and restart the cluster
#   RELEASED_RE, NUMBER_RE    extended regexps: a released value on a line of psql -At output
#   attack_done               print the plan "1..N", and exit 0 iff every test passed
# Roles, tables and budgets are created by superuser postgres in autocommit mode: the budget
# worker cannot see uncommitted rows. Every test file should end with attack_done.

export LC_ALL=C LANG=C
unset LANGUAGE

if [ -z "${ULDP_ATTACK_DB:-}" ] || [ -z "${ULDP_PGTMP:-}" ] || [ -z "${PGPORT:-}" ]; then
    echo "Bail out! run this file through the attack stage: bash test/run.sh attack" >&2
    exit 2
fi

# common.sh resets ULDP_PGTMP (it is normally set by uldp_start_cluster): keep the stage's.
_attack_saved_pgtmp="$ULDP_PGTMP"
# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"
ULDP_PGTMP="$_attack_saved_pgtmp"
export ULDP_PGTMP

ATTACK_NAME="$(basename "$0" .sh)"
ATTACK_DB="$ULDP_ATTACK_DB"
ATTACK_PREFIX="uldp_attack_${ATTACK_NAME}_"
ATTACK_DIR="$ULDP_PGTMP/attack_$ATTACK_NAME"
rm -rf "$ATTACK_DIR"
mkdir -p "$ATTACK_DIR"
chown postgres:postgres "$ATTACK_DIR"
chmod 700 "$ATTACK_DIR"

_ATTACK_N=0
_ATTACK_FAILED=0
_ATTACK_CLEANUPS=("rm -rf '$ATTACK_DIR'")
_ATTACK_BG=()

attack_at_exit() { _ATTACK_CLEANUPS+=("$*"); }

_attack_exit_trap() {
    local rc=$? i p
    set +e
    trap - EXIT
    trap '' INT TERM HUP # finish the cleanup (timeout(1) signals the whole process group)
    for p in "${_ATTACK_BG[@]}"; do
        kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
    for p in "${_ATTACK_BG[@]}"; do wait "$p" 2>/dev/null; done
    for ((i = ${#_ATTACK_CLEANUPS[@]} - 1; i >= 0; i--)); do
        eval "${_ATTACK_CLEANUPS[i]}"
    done
    exit "$rc"
}
trap _attack_exit_trap EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

attack_track() { _ATTACK_BG+=("$1"); }

sql() { uldp_psql -d "$ATTACK_DB" -qAt "$@"; }
sql_as() {
    local role="$1"; shift
    uldp_psql -d "$ATTACK_DB" -U "$role" -qAt "$@"
}

diag() {
    local line
    # shellcheck disable=SC2068
    while IFS= read -r line; do printf '# %s\n' "$line"; done <<<"$*"
}

ok() { # ok STATUS DESC
    _ATTACK_N=$((_ATTACK_N + 1))
    if [ "$1" -eq 0 ]; then
        printf 'ok %d - %s\n' "$_ATTACK_N" "$2"
    else
        printf 'not ok %d - %s\n' "$_ATTACK_N" "$2"
        _ATTACK_FAILED=$((_ATTACK_FAILED + 1))
    fi
    return "$1"
}

ok_if() { # ok_if DESC CMD...
    local desc="$1" rc=0
    shift
    "$@" || rc=$?
    ok "$rc" "$desc"
}

is() { # is GOT EXPECTED DESC
    if [ "$1" == "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3" || true
        diag "     got: '$1'" "expected: '$2'"
        return 1
    fi
}

wait_for() { # wait_for SECONDS DESC CMD...: poll CMD until it succeeds
    local limit="$1" desc="$2" end
    shift 2
    end=$((SECONDS + limit))
    while ! "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$end" ]; then
            diag "timed out after ${limit}s waiting for: $desc"
            return 1
        fi
        sleep 0.05
    done
}

# attack_drop_roles: remove every role starting with ATTACK_PREFIX, with its budget (never its
# ledger rows: the ledger is append-only; they go with the database, which the stage drops).
# The SQL is the one the pgTAP files use, test/lib/cleanup.sql.
attack_drop_roles() {
    PGOPTIONS="-c client_min_messages=warning" sql -v prefix="$ATTACK_PREFIX" \
        <"$ULDP_REPO/test/lib/cleanup.sql"
}

# attack_setup_visits ROLE...: table public.visits (20 users x 3 rows), readable by the ROLEs.
attack_setup_visits() {
    local r
    sql -c 'CREATE TABLE public.visits (user_id int, amount float8)' \
        -c 'INSERT INTO public.visits SELECT u, 10 * u + r FROM generate_series(1, 20) u, generate_series(1, 3) r' || return 1
    for r in "$@"; do
        sql -c "GRANT SELECT ON public.visits TO $r" || return 1
    done
}

# A released value on a line of its own in psql -At output: a number (user_dp_mean) or a
# "(lower,upper)" pair (user_dp_range).
NUMBER_RE='(-?([0-9]+(\.[0-9]*)?|\.[0-9]+)(e[-+]?[0-9]+)?|-?Infinity|NaN)'
# shellcheck disable=SC2034 # used by the test files
RELEASED_RE="^($NUMBER_RE|\($NUMBER_RE,$NUMBER_RE\))\$"

# Budget bookkeeping of ROLE, as the superuser sees it (numeric, as stored).
epsilon_spent() { sql -v role="$1" <<<"SELECT epsilon_spent FROM uldp.budget_data WHERE role = :'role'"; }
ledger_rows() { # ledger_rows ROLE [SERVER-ARGS...]: number of release rows of ROLE
    local role="$1"; shift
    sql "$@" -c "SELECT count(*) FROM uldp.ledger_data WHERE role = '$role' AND function LIKE 'user\\_dp\\_%'"
}

# numeric_eq A B: true iff A = B as numerics (compared by the server).
numeric_eq() {
    [ "$(sql -v a="$1" -v b="$2" <<<"SELECT (:'a')::numeric = (:'b')::numeric" 2>&1)" = t ]
}
# grew_by BEFORE AFTER AMOUNT: true iff AFTER - BEFORE = AMOUNT exactly, as numerics.
grew_by() {
    [ "$(sql -v a="$1" -v b="$2" -v d="$3" \
        <<<"SELECT (:'b')::numeric - (:'a')::numeric = (:'d')::numeric" 2>&1)" = t ]
}

nonempty() { [ -n "$1" ]; }

# Charges of one role, $CHARGE_ROLE, between a snapshot and a check:
#   charge_snapshot                  remembers its epsilon_spent and release ledger rows
#   check_charged LABEL EPS [N]      charged exactly N x EPS (default 1) in exactly N rows since
#   check_not_charged LABEL          charged nothing since
CHARGE_ROLE=""
SPENT0=""
ROWS0=""
charge_snapshot() {
    SPENT0="$(epsilon_spent "$CHARGE_ROLE")"
    ROWS0="$(ledger_rows "$CHARGE_ROLE")"
}
check_charged() {
    local n="${3:-1}" spent rows
    spent="$(epsilon_spent "$CHARGE_ROLE")"
    rows="$(ledger_rows "$CHARGE_ROLE")"
    ok_if "$1: epsilon_spent grew by exactly $n x $2 ($SPENT0 -> $spent)" \
        grew_by "$SPENT0" "$spent" "$(sql -c "SELECT $n * $2::numeric")"
    is "$rows" "$((ROWS0 + n))" "$1: the ledger gained exactly $n release row(s)"
}
check_not_charged() {
    is "$(epsilon_spent "$CHARGE_ROLE")" "$SPENT0" "$1: nothing was charged (epsilon_spent)"
    is "$(ledger_rows "$CHARGE_ROLE")" "$ROWS0" "$1: nothing was charged (ledger)"
}

# sqlstate_as ROLE SQL: the SQLSTATE that ROLE gets for SQL in a fresh session ("" if none)
sqlstate_as() {
    sql_as "$1" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "$2" 2>&1 \
        | sed -n 's/^ERROR: *\([0-9A-Z]\{5\}\):.*/\1/p' | head -1
}

# attack_restore_preload: shared_preload_libraries back to the cluster's setting, and a restart
# (for files that restart the cluster without uldp)
attack_restore_preload() {
    uldp_psql -d postgres -qAt -c 'ALTER SYSTEM RESET shared_preload_libraries' >/dev/null \
        && uldp_cluster_ctl restart -m fast || echo "# could not restore shared_preload_libraries" >&2
}

attack_done() {
    printf '1..%d\n' "$_ATTACK_N"
    if [ "$_ATTACK_FAILED" -ne 0 ]; then
        printf '# failed %d of %d tests\n' "$_ATTACK_FAILED" "$_ATTACK_N"
        exit 1
    fi
    exit 0
}

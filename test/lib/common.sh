# shellcheck shell=bash
# test/lib/common.sh -- helpers shared by test/run.sh, test/demo.sh and test/bench/*.sh (source it).
#
#   uldp_install_deps    install the Debian packages the tests need (only if something is missing)
#   uldp_build_install   make clean && make (with -Werror) && make install, against PostgreSQL 15
#   uldp_prepare         both of the above, unless ULDP_NO_BUILD=1
#   uldp_start_cluster   initdb + start a throwaway cluster in /tmp/uldp_pg.XXXXXX as OS user postgres;
#                        exports PGHOST PGPORT PGUSER ULDP_PGDATA ULDP_PGTMP ULDP_PGLOG and
#                        installs an EXIT trap that stops the cluster and deletes the temp dir
#   uldp_cluster_running true if the cluster's postmaster is up
#   uldp_cluster_ctl start|restart [PG_CTL-ARGS...]   pg_ctl on it (waits, same server log)
#   uldp_psql ARGS...    psql -X -v ON_ERROR_STOP=1 -P pager=off as OS user postgres, against it
#   uldp_as_pg CMD...    run any command as OS user postgres with the cluster's environment
#   uldp_bench_psql      the psql command line the Python benches run (test/bench/bench_psql.py)
#   uldp_private_pg DIR  copy Debian's PostgreSQL 15 under DIR (once), for ULDP_PG_ROOT=DIR
#
# Knobs: ULDP_PORT (default 54329), ULDP_KEEP=1 (keep the temp dir), CI=true (always apt-get update),
#        ULDP_PG_CONF_EXTRA (extra lines for postgresql.conf); test/postgresql.extra.conf, if it
#        exists, is appended to postgresql.conf as well.
# Do not install your own EXIT trap after uldp_start_cluster; use uldp_add_cleanup instead.

ULDP_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# ULDP_PG_ROOT: where PostgreSQL 15 is installed (default /usr, Debian's packages). A copy of
# /usr/lib/postgresql/15 and /usr/share/postgresql/15 under another root is relocatable, so
# several work trees can each build, install and test uldp against a private copy at once.
ULDP_PG_ROOT="${ULDP_PG_ROOT:-/usr}"
ULDP_PGBIN="$ULDP_PG_ROOT/lib/postgresql/15/bin"
ULDP_PG_CONFIG="$ULDP_PGBIN/pg_config"
ULDP_PG_REGRESS="$ULDP_PG_ROOT/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress"
ULDP_DEB_PACKAGES=(
    build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
    libtap-parser-sourcehandler-pgtap-perl python3 python3-numpy python3-matplotlib
)

ULDP_PGTMP=""   # set by uldp_start_cluster
_ULDP_CLEANUPS=()
_ULDP_LOG_SHOWN=0

uldp_log() { printf '==> %s\n' "$*"; }
uldp_warn() { printf 'WARNING: %s\n' "$*" >&2; }
uldp_die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# Run a command as root (directly, or through sudo when we are not root).
_uldp_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        uldp_die "need root (or sudo) to run: $*"
    fi
}

# ---------------------------------------------------------------------------------------------
# Dependencies
# ---------------------------------------------------------------------------------------------
uldp_install_deps() {
    command -v dpkg >/dev/null 2>&1 || uldp_die "dpkg not found: these scripts expect Debian 12"
    local p missing=()
    for p in "${ULDP_DEB_PACKAGES[@]}"; do
        dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed$' || missing+=("$p")
    done
    if [ "${CI:-}" = true ] || [ "${#missing[@]}" -gt 0 ]; then
        uldp_log "apt-get update"
        _uldp_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        uldp_log "installing packages (missing: ${missing[*]})"
        # Installing postgresql-15 creates and may start Debian's own "main" cluster on port 5432
        # with its socket in /var/run/postgresql. We never touch it: our cluster has its own
        # socket directory (a temp dir) and port, and every client gets PGHOST/PGPORT explicitly.
        _uldp_as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends "${ULDP_DEB_PACKAGES[@]}"
    else
        uldp_log "all Debian packages present"
    fi
    [ -x "$ULDP_PG_CONFIG" ] || uldp_die "$ULDP_PG_CONFIG missing after package install"
    [ -x "$ULDP_PG_REGRESS" ] || uldp_die "$ULDP_PG_REGRESS missing after package install"
    command -v pg_prove >/dev/null 2>&1 || uldp_die "pg_prove missing after package install"
    id postgres >/dev/null 2>&1 || uldp_die "OS user 'postgres' does not exist"
}

# uldp_private_pg DIR: a private, relocatable copy of the installed PostgreSQL 15 under DIR
# (DIR/lib/postgresql/15, DIR/share/postgresql/15, DIR/include/postgresql); then
# ULDP_PG_ROOT=DIR uses it.
uldp_private_pg() {
    local root="$1"
    [ -x "$root/lib/postgresql/15/bin/postgres" ] && return 0
    mkdir -p "$root/lib/postgresql" "$root/share/postgresql" "$root/include"
    cp -a /usr/lib/postgresql/15 "$root/lib/postgresql/"
    cp -a /usr/share/postgresql/15 "$root/share/postgresql/"
    cp -a /usr/include/postgresql "$root/include/"
}

# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
uldp_build_install() {
    uldp_log "building uldp in $ULDP_REPO"
    (
        cd "$ULDP_REPO" \
            && make PG_CONFIG="$ULDP_PG_CONFIG" clean \
            && make PG_CONFIG="$ULDP_PG_CONFIG" PG_CFLAGS="-Werror" \
            && _uldp_as_root make PG_CONFIG="$ULDP_PG_CONFIG" install
    ) 2>&1
}

uldp_prepare() {
    if [ "${ULDP_NO_BUILD:-0}" != 1 ]; then
        uldp_install_deps
        uldp_build_install || uldp_die "build failed"
    fi
}

# ---------------------------------------------------------------------------------------------
# Running things as the postgres OS user
# ---------------------------------------------------------------------------------------------
# uldp_as_pg_in DIR CMD...: run CMD as OS user postgres with working directory DIR.
uldp_as_pg_in() {
    local dir="$1"; shift
    local v assigns=("PATH=$ULDP_PGBIN:/usr/local/bin:/usr/bin:/bin")
    for v in PGHOST PGPORT PGUSER ULDP_PGDATA ULDP_PGTMP ULDP_PGLOG PSQL_HISTORY \
             PGOPTIONS PGTZ PGDATESTYLE LANG LC_ALL CI; do
        if [ -n "${!v+x}" ]; then assigns+=("$v=${!v}"); fi
    done
    (
        cd "$dir" || exit 1
        if [ "$(id -un)" = postgres ]; then
            env "${assigns[@]}" "$@"
        elif [ "$(id -u)" -eq 0 ]; then
            runuser -u postgres -- env "${assigns[@]}" "$@"
        else
            sudo -n -u postgres -- env "${assigns[@]}" "$@"
        fi
    )
}

# uldp_as_pg CMD...: run CMD as OS user postgres (cwd = the cluster temp dir, or /tmp).
# Give it absolute paths.
uldp_as_pg() { uldp_as_pg_in "${ULDP_PGTMP:-/tmp}" "$@"; }

# uldp_psql ARGS...: psql against the throwaway cluster, as OS user postgres (never pages output).
uldp_psql() { uldp_as_pg "$ULDP_PGBIN/psql" -X -v ON_ERROR_STOP=1 -P pager=off "$@"; }

# uldp_bench_psql: psql against the cluster, as a command line for the Python benches: root and
# postgres reach the cluster's private socket directory directly, anyone else through sudo
uldp_bench_psql() {
    if [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = postgres ]; then
        echo "$ULDP_PGBIN/psql"
    else
        echo "sudo -n -u postgres env PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=$PGUSER $ULDP_PGBIN/psql"
    fi
}

# uldp_pg_can_read PATH: true if OS user postgres can read everything below PATH.
uldp_pg_can_read() {
    local bad
    bad="$(uldp_as_pg find "$1" \( ! -readable -o -type d ! -executable \) -print -quit 2>/dev/null)" \
        && [ -z "$bad" ]
}

# uldp_pg_copy SRC DEST: copy SRC to DEST, owned by postgres (DEST is replaced).
uldp_pg_copy() {
    mkdir -p "$(dirname "$2")"
    rm -rf "$2"
    cp -R "$1" "$2"
    _uldp_as_root chown -R postgres:postgres "$2"
}

# ---------------------------------------------------------------------------------------------
# Throwaway cluster
# ---------------------------------------------------------------------------------------------
# uldp_add_cleanup 'shell code': run it (eval, in reverse order) from the EXIT trap.
uldp_add_cleanup() { _ULDP_CLEANUPS+=("$*"); }

uldp_show_server_log() {
    if [ "$_ULDP_LOG_SHOWN" = 0 ] && [ -n "${ULDP_PGLOG:-}" ] && [ -s "$ULDP_PGLOG" ]; then
        _ULDP_LOG_SHOWN=1
        {
            echo "----- last 50 lines of $ULDP_PGLOG -----"
            tail -n 50 "$ULDP_PGLOG"
            echo "----- end of server log -----"
        } >&2
    fi
}

# uldp_conf_common PORT SOCKET_DIR: the postgresql.conf lines of every throwaway cluster: its
# port and unix socket only (no TCP), workers for parallel plans, 256MB of shared buffers, and the
# log in the file given to pg_ctl.
uldp_conf_common() {
    echo "port = $1"
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$2'"
    echo "max_worker_processes = 32"
    echo "max_parallel_workers = 8"
    echo "max_parallel_workers_per_gather = 2"
    echo "shared_buffers = 256MB"
    echo "logging_collector = off"
}

# uldp_conf_extra: the caller's extra settings, test/postgresql.extra.conf and then
# $ULDP_PG_CONF_EXTRA (later lines win), for the cluster that runs uldp.
uldp_conf_extra() {
    if [ -f "$ULDP_REPO/test/postgresql.extra.conf" ]; then
        echo "# --- test/postgresql.extra.conf ---"
        cat "$ULDP_REPO/test/postgresql.extra.conf"
    fi
    if [ -n "${ULDP_PG_CONF_EXTRA:-}" ]; then
        echo "# --- \$ULDP_PG_CONF_EXTRA ---"
        printf '%s\n' "$ULDP_PG_CONF_EXTRA"
    fi
}

# uldp_initdb DATA LOG WHAT: a new throwaway cluster in DATA, as postgres (trust, UTF8, C
# locale); initdb's output goes to LOG, and is shown if it fails ("initdb of WHAT failed").
uldp_initdb() {
    uldp_as_pg "$ULDP_PGBIN/initdb" -D "$1" -U postgres --no-sync -A trust -E UTF8 --locale=C \
        >"$2" 2>&1 || { cat "$2" >&2; uldp_die "initdb of $3 failed"; }
}

# uldp_stop_cluster_in DATA DIR LOG: stop the cluster whose data directory is DATA (fast, then
# immediate) and delete DIR, its temp dir, unless ULDP_KEEP=1 (then say where DIR and LOG are).
uldp_stop_cluster_in() {
    local data="$1" dir="$2" log="$3"
    if [ -f "$data/postmaster.pid" ]; then
        uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1 \
            || uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 \
            || uldp_warn "could not stop the cluster in $data"
    fi
    if [ "${ULDP_KEEP:-0}" = 1 ]; then
        echo "ULDP_KEEP=1: keeping $dir (server log: $log)" >&2
    else
        rm -rf "$dir"
    fi
}

uldp_stop_cluster() {
    [ -n "${ULDP_PGTMP:-}" ] || return 0
    uldp_stop_cluster_in "$ULDP_PGDATA" "$ULDP_PGTMP" "$ULDP_PGLOG"
    ULDP_PGTMP=""
}

_uldp_exit_trap() {
    local rc=$? i
    set +e
    trap - EXIT
    for ((i = ${#_ULDP_CLEANUPS[@]} - 1; i >= 0; i--)); do
        eval "${_ULDP_CLEANUPS[i]}"
    done
    if [ "$rc" -ne 0 ]; then uldp_show_server_log; fi
    uldp_stop_cluster
    exit "$rc"
}

uldp_cluster_running() { uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$ULDP_PGDATA" status >/dev/null 2>&1; }

uldp_cluster_ctl() {
    local action="$1"; shift
    uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$ULDP_PGDATA" -l "$ULDP_PGLOG" -w -t 60 "$@" "$action" >/dev/null
}

uldp_start_cluster() {
    [ -z "${ULDP_PGTMP:-}" ] || uldp_die "a cluster is already running in $ULDP_PGTMP"
    [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = postgres ] || command -v sudo >/dev/null 2>&1 \
        || uldp_die "run as root (the server itself runs as OS user postgres)"

    ULDP_PGTMP="$(mktemp -d /tmp/uldp_pg.XXXXXX)"
    ULDP_PGDATA="$ULDP_PGTMP/data"
    ULDP_PGLOG="$ULDP_PGTMP/server.log"
    export ULDP_PGTMP ULDP_PGDATA ULDP_PGLOG
    trap _uldp_exit_trap EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    _uldp_as_root chown postgres:postgres "$ULDP_PGTMP"
    chmod 700 "$ULDP_PGTMP" 2>/dev/null || true

    # Client environment: only our socket directory + port, never Debian's default cluster.
    unset PGHOSTADDR PGSERVICE PGSERVICEFILE PGDATABASE PGPASSWORD PGCLUSTER PGDATA
    export PGHOST="$ULDP_PGTMP" PGPORT="${ULDP_PORT:-54329}" PGUSER=postgres
    export PSQL_HISTORY="$ULDP_PGTMP/psql_history"

    uldp_log "initdb in $ULDP_PGDATA"
    uldp_initdb "$ULDP_PGDATA" "$ULDP_PGTMP/initdb.log" "the cluster"

    {
        echo ""
        echo "# --- added by test/lib/common.sh ---"
        uldp_conf_common "$PGPORT" "$ULDP_PGTMP"
        echo "synchronous_commit = on"
        echo "shared_preload_libraries = 'uldp'   # the query gate of protected tables"
        uldp_conf_extra
    } >>"$ULDP_PGDATA/postgresql.conf"

    uldp_log "starting cluster (socket dir $PGHOST, port $PGPORT)"
    if ! uldp_cluster_ctl start; then
        uldp_show_server_log
        uldp_die "pg_ctl start failed"
    fi
    uldp_psql -d postgres -qAtc 'SELECT version()'
}

# ---------------------------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------------------------
# uldp_bench_start: builds uldp (unless ULDP_NO_BUILD=1), starts the throwaway cluster and
# creates database "bench" with uldp and an unlimited budget for the benchmarking role.
# ULDP_SO: the library that runs.
uldp_bench_start() {
    uldp_prepare
    uldp_start_cluster
    ULDP_SO="$("$ULDP_PG_CONFIG" --pkglibdir)/uldp.so"
    uldp_psql -d postgres -q -c 'CREATE DATABASE bench'
    bpsql -q -c 'CREATE EXTENSION uldp' \
        -c 'SELECT uldp.set_budget(current_user::regrole, 1e9, 1)' >/dev/null
}

# bpsql ARGS...: psql against the benchmarks' database
bpsql() { uldp_psql -d bench "$@"; }

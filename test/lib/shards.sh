# shellcheck shell=bash
# test/lib/shards.sh -- a throwaway coordinator + N shards, wired with postgres_fdw the way a DBA
# would for uldp's scale-out design (source it after test/lib/common.sh).
#
#   uldp_shards_start [N]          initdb + start a coordinator and N shards (default 3), each in
#                                  its own temp dir /tmp/uldp_shard.XXXXXX (data dir, server log,
#                                  and the cluster's unix socket directory), as OS user postgres,
#                                  on consecutive ports: coordinator ULDP_SHARD_PORT_BASE, shard i
#                                  ULDP_SHARD_PORT_BASE + 1 + i. Creates database coord (with
#                                  postgres_fdw, servers shard_0.. and user mappings) on the
#                                  coordinator, database shard on every shard, and the login role
#                                  uldp_owner everywhere. Registers cleanups (uldp_add_cleanup) that
#                                  stop every cluster and delete its dir on exit.
#   cpsql ARGS...                  psql on the coordinator's database coord (as postgres; a later
#                                  -U/-d in ARGS wins)
#   spsql I ARGS...                psql on shard I's database shard (I = 0..N-1)
#   uldp_shards_create_table NAME  on the coordinator: NAME (user_id bigint, amount float8,
#                                  country text, ordered_at date) PARTITION BY HASH (user_id) with
#                                  foreign partitions NAME_p0.. (MODULUS N, REMAINDER i) on server
#                                  shard_i, pointing at public.NAME on shard i, and the ordinary
#                                  table NAME_local with the same columns; on every shard: the
#                                  plain table NAME. Everything is owned by uldp_owner.
#   uldp_shards_load NAME USERS ROWS
#                                  ROWS deterministic rows over USERS users, inserted through the
#                                  coordinator (tuple routing sends each row to the shard its
#                                  user_id hashes to, in batches) and into NAME_local; ANALYZE on
#                                  the shards and of NAME_local. Prints the timings.
#   uldp_shards_stop               stop every cluster and delete the dirs now (the EXIT trap does
#                                  it otherwise)
#
# After uldp_shards_start: ULDP_SHARDS_N, ULDP_SHARD_DIRS (coordinator first, then shard 0..),
# ULDP_SHARD_PORTS (same order); cluster k's socket dir is ULDP_SHARD_DIRS[k] and its server log
# ULDP_SHARD_DIRS[k]/server.log.
#
# Knobs: ULDP_SHARD_PORT_BASE (default 55100), ULDP_KEEP=1 (keep the dirs),
#        ULDP_SHARD_PRELOAD (shared_preload_libraries of the shards, default empty),
#        ULDP_SHARD_FDW_EXTENSIONS (postgres_fdw's "extensions" server option: extensions whose
#        functions and operators may be shipped to the shards; default empty = option omitted),
#        ULDP_SHARD_BATCH_SIZE (postgres_fdw batch_size, default 1000),
#        ULDP_SHARDS_AT_EXIT (the function that registers an exit cleanup, default
#        uldp_add_cleanup; test/attack files set attack_at_exit),
#        ULDP_PG_CONF_EXTRA and test/postgresql.extra.conf (coordinator only, as for
#        uldp_start_cluster), ULDP_SHARD_CONF_EXTRA (extra postgresql.conf lines, shards only).
#
# Role model. Every cluster trusts local connections (initdb -A trust), which postgres_fdw does
# not accept for a role that is not a superuser: it insists the remote server ask for a password
# unless a superuser set password_required 'false' on that role's user mapping. So each server
# shard_i gets two mappings: postgres -> postgres (superusers need no password) and
# uldp_owner -> uldp_owner with password_required 'false', so the table owner can be an ordinary
# role. Any other role (an analyst) has no user mapping: postgres_fdw refuses its queries on the
# foreign partitions until the DBA creates one.
#
# The coordinator is independent of uldp_start_cluster's cluster (PGHOST/PGPORT/ULDP_PGTMP are
# left alone), so a script may run both; it does not need one.

ULDP_SHARDS_N=0
ULDP_SHARD_DIRS=()
ULDP_SHARD_PORTS=()

# _uldp_shards_ident WHAT NAME: NAME is spliced into SQL and file names unquoted, so accept only
# plain lower-case identifiers (which also need no quoting in postgres_fdw's table_name).
_uldp_shards_ident() {
    [[ "$2" =~ ^[a-z_][a-z0-9_]*$ ]] || uldp_die "$1 must be a lower-case SQL identifier: '$2'"
}

# _uldp_shards_psql K ARGS...: psql on cluster K (0 = coordinator, 1 + i = shard i).
_uldp_shards_psql() {
    local k="$1"; shift
    if [ "$k" -lt 0 ] || [ "$k" -ge "${#ULDP_SHARD_DIRS[@]}" ]; then
        uldp_die "no cluster number $k (run uldp_shards_start first)"
    fi
    uldp_psql -h "${ULDP_SHARD_DIRS[k]}" -p "${ULDP_SHARD_PORTS[k]}" -U postgres "$@"
}

cpsql() { _uldp_shards_psql 0 -d coord "$@"; }

spsql() {
    local i="$1"; shift
    if ! [[ "$i" =~ ^[0-9]+$ ]] || [ "$i" -ge "$ULDP_SHARDS_N" ]; then
        uldp_die "spsql: no shard '$i' (there are $ULDP_SHARDS_N)"
    fi
    _uldp_shards_psql $((i + 1)) -d shard "$@"
}

# _uldp_shards_stop_one DIR: stop the cluster in DIR (fast, then immediate) and delete DIR.
# Registered as a cleanup as soon as DIR exists, so a half-started set is removed too.
_uldp_shards_stop_one() {
    [ -d "$1" ] || return 0
    uldp_stop_cluster_in "$1/data" "$1" "$1/server.log"
}

# _uldp_shards_init_one PORT ROLE: initdb + start one cluster (ROLE = coordinator or shard) in a
# new temp dir; appends it to ULDP_SHARD_DIRS / ULDP_SHARD_PORTS.
_uldp_shards_init_one() {
    local port="$1" role="$2" dir
    dir="$(mktemp -d /tmp/uldp_shard.XXXXXX)"
    "${ULDP_SHARDS_AT_EXIT:-uldp_add_cleanup}" "_uldp_shards_stop_one '$dir'"
    ULDP_SHARD_DIRS+=("$dir")
    ULDP_SHARD_PORTS+=("$port")
    _uldp_as_root chown postgres:postgres "$dir"
    chmod 700 "$dir" 2>/dev/null || true

    uldp_initdb "$dir/data" "$dir/initdb.log" "the $role"
    {
        echo ""
        echo "# --- added by test/lib/shards.sh ($role) ---"
        # the socket dir doubles as the foreign servers' host option (a path = unix socket)
        uldp_conf_common "$port" "$dir"
        if [ "$role" = coordinator ]; then
            echo "shared_preload_libraries = 'uldp'   # the query gate of protected tables"
            uldp_conf_extra
        else
            # shards run no uldp unless asked: they only store rows and run what is pushed down
            echo "shared_preload_libraries = '${ULDP_SHARD_PRELOAD:-}'"
            if [ -n "${ULDP_SHARD_CONF_EXTRA:-}" ]; then
                echo "# --- \$ULDP_SHARD_CONF_EXTRA ---"
                printf '%s\n' "$ULDP_SHARD_CONF_EXTRA"
            fi
        fi
    } | uldp_as_pg tee -a "$dir/data/postgresql.conf" >/dev/null

    if ! uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
            >/dev/null; then
        tail -n 50 "$dir/server.log" >&2 || true
        uldp_die "pg_ctl start of the $role (port $port, $dir) failed"
    fi
}

uldp_shards_start() {
    local n="${1:-3}" base="${ULDP_SHARD_PORT_BASE:-55100}" i k host port ext_opt="" sql
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || uldp_die "uldp_shards_start: N must be a positive integer: '$n'"
    [ "${#ULDP_SHARD_DIRS[@]}" -eq 0 ] || uldp_die "shards are already running (${ULDP_SHARD_DIRS[0]})"
    [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = postgres ] || command -v sudo >/dev/null 2>&1 \
        || uldp_die "run as root (the servers run as OS user postgres)"
    [ -f "$("$ULDP_PG_CONFIG" --pkglibdir)/postgres_fdw.so" ] \
        || uldp_die "postgres_fdw is not installed under $ULDP_PG_ROOT"

    # The clusters are stopped at exit by the caller's cleanups: common.sh's (uldp_add_cleanup,
    # run by the EXIT trap that uldp_start_cluster installs, installed here if the script started
    # no cluster of its own), or those named by ULDP_SHARDS_AT_EXIT (an attack file sets
    # attack_at_exit: common.sh's trap would also stop the attack stage's own cluster).
    if [ "${ULDP_SHARDS_AT_EXIT:-uldp_add_cleanup}" = uldp_add_cleanup ]; then
        trap _uldp_exit_trap EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
        trap 'exit 129' HUP
    fi
    # a PGDATABASE/PGSERVICE of the caller must not redirect our psql calls
    unset PGHOSTADDR PGSERVICE PGSERVICEFILE PGDATABASE PGPASSWORD PGCLUSTER

    ULDP_SHARDS_N="$n"
    uldp_log "starting a coordinator (port $base) and $n shards (ports $((base + 1))..$((base + n)))"
    _uldp_shards_init_one "$base" coordinator
    for ((i = 0; i < n; i++)); do
        _uldp_shards_init_one $((base + 1 + i)) shard
    done

    for ((k = 0; k <= n; k++)); do
        _uldp_shards_psql "$k" -d postgres -q -c 'CREATE ROLE uldp_owner LOGIN'
    done
    _uldp_shards_psql 0 -d postgres -q -c 'CREATE DATABASE coord'
    for ((i = 0; i < n; i++)); do
        # the owner of the shards' tables creates them in public (PG15 revokes CREATE from PUBLIC)
        _uldp_shards_psql $((i + 1)) -d postgres -q -c 'CREATE DATABASE shard OWNER uldp_owner'
    done

    if [ -n "${ULDP_SHARD_FDW_EXTENSIONS:-}" ]; then
        ext_opt=", extensions '$ULDP_SHARD_FDW_EXTENSIONS'"
    fi
    sql="CREATE EXTENSION postgres_fdw;
GRANT CREATE ON SCHEMA public TO uldp_owner;"
    for ((i = 0; i < n; i++)); do
        host="${ULDP_SHARD_DIRS[i + 1]}"
        port="${ULDP_SHARD_PORTS[i + 1]}"
        # async_capable: an Append over several shards starts every remote scan at once;
        # fetch_size: fewer round trips when rows come back; batch_size: fewer when rows go out
        sql+="
CREATE SERVER shard_$i FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '$host', port '$port', dbname 'shard', async_capable 'true',
             fetch_size '10000', batch_size '${ULDP_SHARD_BATCH_SIZE:-1000}'$ext_opt);
GRANT USAGE ON FOREIGN SERVER shard_$i TO uldp_owner;
CREATE USER MAPPING FOR postgres SERVER shard_$i OPTIONS (user 'postgres');
-- trust auth asks no password, which postgres_fdw refuses for non-superusers unless told
CREATE USER MAPPING FOR uldp_owner SERVER shard_$i
    OPTIONS (user 'uldp_owner', password_required 'false');"
    done
    cpsql -q <<<"$sql"
}

uldp_shards_stop() {
    local k
    for ((k = ${#ULDP_SHARD_DIRS[@]} - 1; k >= 0; k--)); do
        _uldp_shards_stop_one "${ULDP_SHARD_DIRS[k]}"
    done
    ULDP_SHARD_DIRS=()
    ULDP_SHARD_PORTS=()
    ULDP_SHARDS_N=0
}

# The columns of every table uldp_shards_create_table makes.
_ULDP_SHARDS_COLUMNS='user_id bigint, amount float8, country text, ordered_at date'

uldp_shards_create_table() {
    local name="$1" i sql
    _uldp_shards_ident "table name" "$name"
    [ "$ULDP_SHARDS_N" -gt 0 ] || uldp_die "uldp_shards_create_table: run uldp_shards_start first"
    for ((i = 0; i < ULDP_SHARDS_N; i++)); do
        spsql "$i" -q -U uldp_owner -c "CREATE TABLE public.$name ($_ULDP_SHARDS_COLUMNS)"
    done
    sql="CREATE TABLE $name ($_ULDP_SHARDS_COLUMNS) PARTITION BY HASH (user_id);
ALTER TABLE $name OWNER TO uldp_owner;
CREATE TABLE ${name}_local ($_ULDP_SHARDS_COLUMNS);
ALTER TABLE ${name}_local OWNER TO uldp_owner;"
    for ((i = 0; i < ULDP_SHARDS_N; i++)); do
        # remainder i lives on shard i: uldp_shards_load relies on that to know where rows went
        sql+="
CREATE FOREIGN TABLE ${name}_p$i PARTITION OF $name
    FOR VALUES WITH (MODULUS $ULDP_SHARDS_N, REMAINDER $i)
    SERVER shard_$i OPTIONS (schema_name 'public', table_name '$name');
ALTER FOREIGN TABLE ${name}_p$i OWNER TO uldp_owner;"
    done
    cpsql -q <<<"$sql"
}

uldp_shards_load() {
    local name="$1" users="$2" rows="$3" t0 t1 t2 t3 i
    _uldp_shards_ident "table name" "$name"
    if ! [[ "$users" =~ ^[1-9][0-9]*$ ]] || ! [[ "$rows" =~ ^[0-9]+$ ]]; then
        uldp_die "uldp_shards_load NAME USERS ROWS: USERS and ROWS must be integers"
    fi
    [ "$ULDP_SHARDS_N" -gt 0 ] || uldp_die "uldp_shards_load: run uldp_shards_start first"
    # Deterministic rows (same for every run and both tables): row g of generate_series is
    # user (hash(g) mod USERS), an amount in [0, 100) with 2 decimals, one of 50 countries
    # (fixed per user) and a day of 2026.
    local gen="SELECT (hashint4(g) & 2147483647) % $users AS user_id,
       ((hashint4(g + 1) & 2147483647) % 10000) / 100.0 AS amount,
       'C' || ((hashint4(g) & 2147483647) % $users) % 50 AS country,
       date '2026-01-01' + (hashint4(g + 2) & 2147483647) % 365 AS ordered_at
FROM generate_series(1, $rows) g"

    uldp_log "loading $rows rows over $users users into $name ($ULDP_SHARDS_N shards) and ${name}_local"
    t0="$(date +%s.%N)"
    # tuple routing sends each row to the foreign partition of its remainder, i.e. to shard i,
    # batch_size rows per remote INSERT; one remote transaction per shard, committed with ours
    cpsql -q -c "INSERT INTO $name $gen"
    t1="$(date +%s.%N)"
    for ((i = 0; i < ULDP_SHARDS_N; i++)); do
        spsql "$i" -q -c "ANALYZE public.$name"
    done
    t2="$(date +%s.%N)"
    cpsql -q -c "INSERT INTO ${name}_local $gen" -c "ANALYZE ${name}_local"
    t3="$(date +%s.%N)"
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$rows" -v t="$name" 'BEGIN {
        printf "    %s: %d rows through the coordinator in %.2f s (%.0f rows/s), ANALYZE on the shards %.2f s; %s_local %.2f s\n",
            t, n, b - a, (b > a ? n / (b - a) : 0), c - b, t, d - c }'
}

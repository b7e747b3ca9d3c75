#!/usr/bin/env bash
# test/attack/standby.sh -- releasing on a hot standby: a standby cannot write the ledger, so a
# release there would be free (and could be repeated on every standby without limit).
#
# A hot standby of the test cluster is made with pg_basebackup -R -X stream (in $ULDP_PGTMP,
# port PGPORT + 1, its own socket directory) and started; the roles, table and budget are then
# created on the primary, and the file waits until the standby has replayed them. On the standby,
# a role with a budget (and SELECT on the table) tries user_dp_mean and user_dp_range, in
# autocommit and in a read-only transaction.
#
# Expected outcome: every release on the standby is refused with SQLSTATE 25006
# (read_only_sql_transaction) and "<function> cannot release results on a hot standby", no value
# is shown, and neither the standby's nor the primary's ledger and budget change. As a control,
# a release on the primary is charged and the standby replays that charge. The standby is
# stopped and removed when the file exits (also on failure).
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
SDATA="$ULDP_PGTMP/attack_standby_data"
SSOCK="$ULDP_PGTMP/attack_standby_sock"
SLOG="$ULDP_PGTMP/attack_standby.log"
SPORT=$((PGPORT + 1))

standby_stop() {
    if [ -f "$SDATA/postmaster.pid" ]; then
        uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$SDATA" -m fast -w -t 30 stop >/dev/null 2>&1 \
            || uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$SDATA" -m immediate -w stop >/dev/null 2>&1 \
            || echo "# could not stop the standby in $SDATA" >&2
    fi
}
standby_remove() {
    standby_stop
    if [ "${ULDP_KEEP:-0}" = 1 ]; then
        echo "# ULDP_KEEP=1: keeping the standby's data in $SDATA (log: $SLOG)"
    else
        rm -rf "$SDATA" "$SSOCK" "$SLOG"
    fi
}
ssql() { uldp_psql -h "$SSOCK" -p "$SPORT" -d "$ATTACK_DB" -qAt "$@"; }

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
standby_remove
attack_at_exit standby_remove

# ---------------------------------------------------------------------------------------------
# the standby
uldp_as_pg mkdir -p "$SSOCK"
if ! out="$(uldp_as_pg "$ULDP_PGBIN/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U postgres \
        -D "$SDATA" -R -X stream -c fast --no-sync 2>&1)"; then
    ok 1 "pg_basebackup -R -X stream"
    diag "$out"
    attack_done
fi
ok 0 "pg_basebackup -R -X stream"
uldp_as_pg tee -a "$SDATA/postgresql.conf" >/dev/null <<CONF

# --- standby of test/attack/standby.sh ---
port = $SPORT
listen_addresses = ''
unix_socket_directories = '$SSOCK'
hot_standby = on
shared_buffers = 32MB
CONF
standby_start() {
    uldp_as_pg "$ULDP_PGBIN/pg_ctl" -D "$SDATA" -l "$SLOG" -w -t 60 start >/dev/null
}
if ! ok_if "the hot standby starts on port $SPORT" standby_start; then
    diag "$(tail -n 20 "$SLOG" 2>/dev/null)"
    attack_done
fi
is "$(ssql -c 'SELECT pg_is_in_recovery()')" t "the standby is in recovery"

# ---------------------------------------------------------------------------------------------
# on the primary: the analyst, the table, the budget; then wait until the standby replayed them
sql -c "CREATE ROLE $A LOGIN" || exit 1
attack_setup_visits "$A" || exit 1
sql -c "SELECT uldp.set_budget('$A', 10, 0)" >/dev/null || exit 1
# replayed: the standby has replayed up to the primary's current WAL position
replayed() {
    local lsn
    lsn="$(sql -c 'SELECT pg_current_wal_lsn()')" || return 1
    [ "$(ssql -v lsn="$lsn" <<<"SELECT pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn")" = t ]
}
ok_if "the standby replays the table and the budget created on the primary" \
    wait_for 30 "replay on the standby" replayed
is "$(ssql -c "SELECT count(*) FROM visits")" 60 "the standby has the table (60 rows)"
is "$(ssql -c "SELECT epsilon_limit FROM uldp.budget_data WHERE role = '$A'")" 10 \
    "the standby has the analyst's budget"

ledger_state() { # the whole ledger and budget table, as a fingerprint
    "$@" -c "SELECT (SELECT count(*) || '/' || coalesce(max(id), 0) FROM uldp.ledger_data) || ' '
                 || (SELECT string_agg(role || ':' || epsilon_spent || ':' || delta_spent, ',' ORDER BY role)
                     FROM uldp.budget_data)"
}
S0="$(ledger_state ssql)"
P0="$(ledger_state sql)"

# ---------------------------------------------------------------------------------------------
# releases on the standby
# refused FUNCTION LABEL SQL...: the statements (as the analyst, on the standby) fail with the
# hot-standby error of FUNCTION and show no value
refused() {
    local fn="$1" label="$2" out rc=0
    shift 2
    out="$(uldp_psql -h "$SSOCK" -p "$SPORT" -d "$ATTACK_DB" -U "$A" -qAt -v VERBOSITY=verbose "$@" 2>&1)" || rc=$?
    if [ "$rc" -ne 0 ] \
        && grep -Fq "ERROR:  25006: $fn cannot release results on a hot standby" <<<"$out" \
        && ! grep -Eq "$RELEASED_RE" <<<"$out"; then
        ok 0 "$label"
    else
        ok 1 "$label"
        diag "psql (status $rc):" "$out"
    fi
}
refused user_dp_mean "user_dp_mean/5 on the standby is refused (25006, hot standby)" \
    -c 'SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM visits'
refused user_dp_mean "user_dp_mean/3 on the standby is refused" \
    -c 'SELECT user_dp_mean(amount, user_id, 0.5) FROM visits'
refused user_dp_range "user_dp_range/5 on the standby is refused" \
    -c 'SELECT user_dp_range(amount, user_id, 0.5, 0, 300) FROM visits'
refused user_dp_mean "user_dp_mean on empty input on the standby is refused" \
    -c 'SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM visits WHERE false'
refused user_dp_mean "user_dp_mean in a read-only transaction on the standby is refused" \
    -c 'BEGIN READ ONLY' -c 'SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM visits' -c 'COMMIT'
refused "user_dp_mean, user_dp_range" "a statement of two releases on the standby is refused" \
    -c 'SELECT user_dp_mean(amount, user_id, 0.5, 0, 300), user_dp_range(amount, user_id, 0.5) FROM visits'

is "$(ledger_state ssql)" "$S0" "the standby's ledger and budgets are unchanged"
is "$(ledger_state sql)" "$P0" "the primary's ledger and budgets are unchanged"
is "$(ledger_rows "$A")" 0 "the primary's ledger has no release row for the analyst"

# control: a release on the primary is charged, and the standby sees that charge once replayed
ok_if "control: a release on the primary works" \
    nonempty "$(sql_as "$A" -c 'SELECT user_dp_mean(amount, user_id, 0.5, 0, 300) FROM visits')"
ok_if "control: the standby replays the charge" wait_for 30 "replay of the charge" replayed
is "$(ssql -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" 0.5 \
    "control: the standby shows epsilon_spent 0.5"
is "$(ledger_rows "$A" -h "$SSOCK" -p "$SPORT")" 1 "control: the standby shows one release row"

attack_done

#!/usr/bin/env bash
# test/attack/crash.sh -- crash right after a release: can a charge whose release was already
# answered be lost in a crash (so that the analyst got a value for free)?
#
# Each case: the analyst releases, and in the same psql session, right after the answer,
# `\! pg_ctl -m immediate stop` crashes the server (no shutdown checkpoint, no WAL flush); the
# cluster is restarted with pg_ctl -w start (same log file) and goes through crash recovery.
#   a. the analyst's session has SET synchronous_commit = off
#   b. the analyst's session has synchronous_commit = on
#   c. synchronous_commit = off in the session and for the database (ALTER DATABASE ... SET),
#      which is also the default of the budget worker's own connection
# wal_writer_delay is raised to 10 s for the file, so a commit that was not flushed at commit
# time stays unflushed until the crash. As a control, case a and c also commit an INSERT of
# their own with synchronous_commit = off after the release: whether it survived is reported
# (a diagnostic, not a test) to show that the crash really loses unflushed commits.
#
# Expected outcome: after each restart, the release's charge is there: epsilon_spent grew by
# exactly its epsilon and the ledger has exactly one more release row. The cluster is running
# again (with the file's settings undone) when the file exits.
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"

cluster_down() { ! uldp_cluster_running; }
log_since() { tail -c +"$(($1 + 1))" "$ULDP_PGLOG" | grep -Fq "$2"; } # log_since OFFSET TEXT
# at exit: the cluster runs again, without the file's settings
restore_cluster() {
    uldp_cluster_running || uldp_cluster_ctl start || echo "# could not restart the cluster" >&2
    uldp_psql -d postgres -qAt -c 'ALTER SYSTEM RESET wal_writer_delay' -c 'SELECT pg_reload_conf()' >/dev/null
}

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
attack_at_exit restore_cluster
sql -c "CREATE ROLE $A LOGIN" || exit 1
attack_setup_visits "$A" || exit 1
sql -c 'CREATE TABLE public.control (n int)' -c "GRANT INSERT ON public.control TO $A" || exit 1
sql -c "SELECT uldp.set_budget('$A', 100, 0)" >/dev/null || exit 1
sql -c 'ALTER SYSTEM SET wal_writer_delay = 10000' -c 'SELECT pg_reload_conf()' >/dev/null || exit 1

# crash_case LABEL EPS SYNC CONTROL: release EPS with synchronous_commit = SYNC in the session,
# (if CONTROL = 1) insert a control row, then crash the server and restart it.
crash_case() {
    local label="$1" eps="$2" sync="$3" control="$4"
    local spent0 rows0 spent rows out rc=0 logsize
    spent0="$(epsilon_spent "$A")"
    rows0="$(ledger_rows "$A")"
    logsize="$(stat -c %s "$ULDP_PGLOG")"
    out="$(sql_as "$A" -v VERBOSITY=verbose 2>&1 <<SQL
SET synchronous_commit = $sync;
SELECT user_dp_mean(amount, user_id, $eps, 0, 300) FROM visits;
$([ "$control" = 1 ] && echo "INSERT INTO control VALUES (1);")
\\! pg_ctl -D "$ULDP_PGDATA" -m immediate stop
SQL
)" || rc=$?
    ok_if "$label: the release was answered before the crash" \
        grep -Eq "$RELEASED_RE" <<<"$out" || diag "psql (status $rc):" "$out"
    ok_if "$label: the server was stopped with -m immediate right after it" cluster_down \
        || diag "psql (status $rc):" "$out"
    if ! uldp_cluster_running && ! ok_if "$label: the cluster restarts" uldp_cluster_ctl start; then
        return 1
    fi
    ok_if "$label: the restart went through crash recovery" log_since "$logsize" \
        "database system was not properly shut down; automatic recovery in progress"
    spent="$(epsilon_spent "$A")"
    rows="$(ledger_rows "$A")"
    ok_if "$label: after the restart, epsilon_spent grew by exactly $eps ($spent0 -> $spent)" \
        grew_by "$spent0" "$spent" "$eps"
    is "$rows" "$((rows0 + 1))" "$label: after the restart, the ledger has exactly one more release row"
    if [ "$control" = 1 ]; then
        if [ "$(sql -c 'SELECT count(*) FROM control')" = 0 ]; then
            diag "$label: control: the session's own INSERT (synchronous_commit = off) was lost in the crash"
        else
            diag "$label: control: the session's own INSERT (synchronous_commit = off) survived the crash"
            sql -c 'TRUNCATE control'
        fi
    fi
}

crash_case "a. session synchronous_commit = off" 0.3 off 1
crash_case "b. session synchronous_commit = on" 0.4 on 0
sql -c "ALTER DATABASE $ATTACK_DB SET synchronous_commit = off" || exit 1
crash_case "c. synchronous_commit = off for the session and the database" 0.5 off 1
sql -c "ALTER DATABASE $ATTACK_DB RESET synchronous_commit" || exit 1

# after all that, releases still work and the totals add up
ok_if "after the crashes, a release still works" \
    nonempty "$(sql_as "$A" -c 'SELECT user_dp_mean(amount, user_id, 0.01, 0, 300) FROM visits')"
is "$(epsilon_spent "$A")" "1.21" "total: epsilon_spent is 0.3 + 0.4 + 0.5 + 0.01"
is "$(ledger_rows "$A")" "4" "total: four release rows in the ledger"

attack_done

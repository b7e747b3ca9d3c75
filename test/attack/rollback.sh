#!/usr/bin/env bash
# test/attack/rollback.sh -- the rollback family: can an analyst see a release and then undo its
# charge by undoing the transaction around it?
#
# Attacks, each by a role with a budget, each with an epsilon of its own:
#   1. BEGIN; SELECT user_dp_mean(...); ROLLBACK;
#   2. a release inside a savepoint, then ROLLBACK TO SAVEPOINT (and COMMIT)
#   3. a DO block that RAISE NOTICEs the result of a release, then raises an error
#   4. a DO block whose release is in a BEGIN ... EXCEPTION block that raises and catches an error
#      (a PL/pgSQL subtransaction rolled back)
#   5. an error later in the same statement, after the release was computed (1 / (m - m))
#   6. DECLARE c CURSOR FOR SELECT user_dp_mean(...); FETCH c; then an error aborts the transaction
#   7. a client killed (SIGKILL to psql) while idle in the transaction right after a release
#   8. a session ended with pg_terminate_backend (from another session) in the same situation
# and two releases that must work although the caller may not write:
#   9. a release in a BEGIN READ ONLY transaction (committed)
#  10. a release with default_transaction_read_only = on
#
# Expected outcome: every release is answered (the analyst sees the value), and every one is
# charged exactly once whatever happens to the analyst's transaction afterwards: epsilon_spent
# grows by exactly that release's epsilon (numeric equality) and uldp.ledger_data gains exactly
# one row for the role. A case that is not charged means the budget can be bypassed.
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $A LOGIN" || exit 1
attack_setup_visits "$A" || exit 1
sql -c "SELECT uldp.set_budget('$A', 100, 0)" >/dev/null || exit 1

CHARGE_ROLE="$A"

# run_as_analyst: run the psql script on stdin as the analyst (errors do not stop it);
# sets OUT (stdout + stderr) and RC.
OUT=""
RC=0
run_as_analyst() {
    RC=0
    OUT="$(sql_as "$A" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1)" || RC=$?
}

# released: OUT shows a released value (a number on a line of its own, or in a NOTICE)
released() { grep -Eq "$RELEASED_RE|released $NUMBER_RE\$" <<<"$OUT"; }

show_out() { diag "psql output (exit status $RC):" "$OUT"; }

MEAN="user_dp_mean(amount, user_id, :eps, 0, 300)"

# ---------------------------------------------------------------------------------------------
# 1. BEGIN; release; ROLLBACK
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.11
BEGIN;
SELECT $MEAN FROM visits;
ROLLBACK;
SQL
ok_if "1 rollback: the release was answered inside the transaction" released || show_out
check_charged "1 rollback" 0.11

# 2. savepoint rolled back
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.12
BEGIN;
SAVEPOINT s;
SELECT $MEAN FROM visits;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SQL
ok_if "2 savepoint: the release was answered inside the savepoint" released || show_out
check_charged "2 savepoint" 0.12

# 3. DO block: RAISE NOTICE the release, then an error
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.13
DO \$\$
BEGIN
    RAISE NOTICE 'released %', (SELECT user_dp_mean(amount, user_id, 0.13, 0, 300) FROM visits);
    RAISE EXCEPTION 'undo it';
END
\$\$;
SQL
ok_if "3 DO + error: the block failed after the notice" \
    grep -q 'ERROR:  P0001: undo it' <<<"$OUT" || show_out
ok_if "3 DO + error: the notice carried the released value" released || show_out
check_charged "3 DO + error" 0.13

# 4. DO block: the release in a subtransaction (BEGIN ... EXCEPTION) that is rolled back
charge_snapshot
run_as_analyst <<SQL
DO \$\$
BEGIN
    BEGIN
        RAISE NOTICE 'released %', (SELECT user_dp_mean(amount, user_id, 0.14, 0, 300) FROM visits);
        RAISE EXCEPTION 'undo it';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
END
\$\$;
SQL
ok_if "4 PL/pgSQL exception block: the block succeeded" [ "$RC" -eq 0 ] || show_out
ok_if "4 PL/pgSQL exception block: the notice carried the released value" released || show_out
check_charged "4 PL/pgSQL exception block" 0.14

# 5. an error later in the same statement
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.15
SELECT m, 1 / (m - m) FROM (SELECT $MEAN AS m FROM visits) s;
SQL
ok_if "5 error in the same statement: the statement failed with division_by_zero" \
    grep -q 'ERROR:  22012: division by zero' <<<"$OUT" || show_out
check_charged "5 error in the same statement" 0.15

# 6. cursor fetched, then the transaction aborted
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.16
BEGIN;
DECLARE c CURSOR FOR SELECT $MEAN FROM visits;
FETCH c;
SELECT 1 / 0;
ROLLBACK;
SQL
ok_if "6 cursor: FETCH answered the release" released || show_out
ok_if "6 cursor: the transaction was aborted (division by zero)" \
    grep -q 'ERROR:  22012: division by zero' <<<"$OUT" || show_out
check_charged "6 cursor" 0.16

# 7./8. a session that disappears while idle in the transaction, right after a release.
# The session reads its commands from a FIFO, so that it stays open; after the release it
# writes its psql pid to a file (\! runs sh -c, whose parent is psql).
# disconnect_case LABEL EPS HOW (HOW = kill | terminate)
disconnect_case() {
    local label="$1" eps="$2" how="$3" app="uldp_attack_rollback_$3"
    local fifo="$ATTACK_DIR/$how.in" pidfile="$ATTACK_DIR/$how.pid" out="$ATTACK_DIR/$how.out"
    local bgpid psqlpid
    rm -f "$fifo" "$pidfile"
    mkfifo "$fifo"
    uldp_as_pg "$ULDP_PGBIN/psql" -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose \
        -d "dbname=$ATTACK_DB application_name=$app" -U "$A" <"$fifo" >"$out" 2>&1 &
    bgpid=$!
    attack_track "$bgpid"
    exec 3>"$fifo"
    charge_snapshot
    printf '%s\n' 'BEGIN;' \
        "SELECT user_dp_mean(amount, user_id, $eps, 0, 300) FROM visits;" \
        "\\! echo \$PPID > $pidfile" >&3
    if ! wait_for 30 "the release in the open transaction" test -s "$pidfile"; then
        exec 3>&-
        ok 1 "$label: the session released inside its transaction"
        diag "$(cat "$out")"
        return
    fi
    psqlpid="$(cat "$pidfile")"
    ok_if "$label: the session is idle in transaction after the release" \
        test "$(sql -c "SELECT state FROM pg_stat_activity WHERE application_name = '$app'")" = 'idle in transaction'
    case "$how" in
        kill) kill -KILL "$psqlpid" ;;
        terminate) sql -c "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = '$app'" >/dev/null ;;
    esac
    exec 3>&- # psql, if still alive, reads EOF and exits
    wait "$bgpid" 2>/dev/null
    backend_gone() { [ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app'")" = 0 ]; }
    ok_if "$label: the backend is gone" wait_for 30 "the backend of the $how case to exit" backend_gone
    OUT="$(cat "$out")"
    RC=0
    check_charged "$label" "$eps"
}
disconnect_case "7 client killed in the transaction" 0.17 kill
disconnect_case "8 backend terminated in the transaction" 0.18 terminate

# 9. BEGIN READ ONLY
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.19
BEGIN READ ONLY;
SELECT $MEAN FROM visits;
COMMIT;
SQL
ok_if "9 read-only transaction: the release works" test "$RC" -eq 0 || show_out
ok_if "9 read-only transaction: the release was answered" released || show_out
check_charged "9 read-only transaction" 0.19

# 10. default_transaction_read_only = on
charge_snapshot
run_as_analyst <<SQL
\\set eps 0.21
SET default_transaction_read_only = on;
SELECT $MEAN FROM visits;
SQL
ok_if "10 default_transaction_read_only: the release works" test "$RC" -eq 0 || show_out
ok_if "10 default_transaction_read_only: the release was answered" released || show_out
check_charged "10 default_transaction_read_only" 0.21

# all of it together: 0.11 + 0.12 + ... + 0.19 + 0.21
is "$(epsilon_spent "$A")" "1.56" "total: epsilon_spent is the sum of the ten releases (1.56)"
is "$(ledger_rows "$A")" "10" "total: ten release rows in the ledger"

attack_done

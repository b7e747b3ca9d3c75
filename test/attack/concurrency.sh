#!/usr/bin/env bash
# test/attack/concurrency.sh -- racing sessions: can many sessions that release at the same
# moment spend more than the budget between them (a check-then-charge race)?
#
# A role gets a budget of exactly k = 5 releases (epsilon 1.0, releases of 0.2). 16 sessions of
# that role connect and block on pg_advisory_lock_shared while a controller session holds the
# exclusive advisory lock; once all 16 are waiting, the controller lets go and they all release
# at once. Round 1: 16 x user_dp_mean; round 2 (a fresh role): user_dp_mean and user_dp_range
# alternating. Two rounds make flakiness visible.
#
# Expected outcome, per round: exactly 5 sessions get a value; the other 11 fail with SQLSTATE
# 53000 ("... exceeds the privacy budget of role ..."); epsilon_spent is exactly 1.0 (numeric);
# uldp.ledger_data holds exactly 5 release rows for the role, of 0.2 each. More than 5 successes
# means the budget was overspent; fewer, or another error, means the charging is not robust
# under concurrency.
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

SESSIONS=16
K=5

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
ROLES=("${ATTACK_PREFIX}r1" "${ATTACK_PREFIX}r2")
for r in "${ROLES[@]}"; do
    sql -c "CREATE ROLE $r LOGIN" || exit 1
done
attack_setup_visits "${ROLES[@]}" || exit 1

# waiting_sessions KEY: number of sessions blocked on advisory lock KEY in this database
waiting_sessions() {
    sql -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
              AND classid = 0 AND objid = $1 AND objsubid = 1
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
}

# round N ROLE FUNCTION...: SESSIONS sessions of ROLE, session i releasing with FUNCTION[i % #]
round() {
    local n="$1" role="$2"
    shift 2
    local funcs=("$@") key=$((7150 + n)) dir="$ATTACK_DIR/round$n"
    local i rc fn line pids=() ctlfifo="$ATTACK_DIR/round$n.ctl" ctlpid
    local okays=0 refused=0 other=0 spent
    mkdir -p "$dir"
    chown postgres:postgres "$dir" # the controller's \! writes there
    sql -c "SELECT uldp.set_budget('$role', 1.0, 0)" >/dev/null || { ok 1 "round $n: set_budget"; return; }

    # the controller takes the exclusive lock and keeps its session open on a FIFO
    mkfifo "$ctlfifo"
    uldp_as_pg "$ULDP_PGBIN/psql" -X -qAt -v ON_ERROR_STOP=1 -d "$ATTACK_DB" \
        <"$ctlfifo" >"$dir/controller.out" 2>&1 &
    ctlpid=$!
    attack_track "$ctlpid"
    exec 3>"$ctlfifo"
    printf '%s\n' "SELECT pg_advisory_lock($key);" "\\! echo locked > $dir/controller.locked" >&3
    if ! wait_for 30 "the controller's lock" test -s "$dir/controller.locked"; then
        exec 3>&-
        ok 1 "round $n: the controller holds the exclusive lock"
        diag "$(cat "$dir/controller.out")"
        return
    fi

    for ((i = 0; i < SESSIONS; i++)); do
        fn="${funcs[i % ${#funcs[@]}]}"
        echo "$fn" >"$dir/$i.function"
        uldp_as_pg "$ULDP_PGBIN/psql" -X -qAt -v ON_ERROR_STOP=1 -d "$ATTACK_DB" -U "$role" \
            >"$dir/$i.out" 2>&1 <<SQL &
\\set VERBOSITY verbose
SELECT 'locked' FROM pg_advisory_lock_shared($key);
SELECT $fn(amount, user_id, 0.2, 0, 300) FROM visits;
SQL
        pids+=("$!")
        attack_track "$!"
    done
    all_waiting() { [ "$(waiting_sessions "$key")" = "$SESSIONS" ]; }
    ok_if "round $n: all $SESSIONS sessions are waiting on the advisory lock" \
        wait_for 30 "$SESSIONS sessions waiting" all_waiting
    printf '%s\n' "SELECT pg_advisory_unlock($key);" >&3 # go!
    exec 3>&-
    wait "$ctlpid" 2>/dev/null

    # collect the outcomes (each session has 60 s)
    local end=$((SECONDS + 60))
    for ((i = 0; i < SESSIONS; i++)); do
        while kill -0 "${pids[i]}" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.05; done
        if kill -0 "${pids[i]}" 2>/dev/null; then
            other=$((other + 1))
            diag "session $i did not finish within 60 s"
            continue
        fi
        rc=0
        wait "${pids[i]}" || rc=$?
        fn="$(cat "$dir/$i.function")"
        if [ "$rc" -eq 0 ] && grep -Eq "$RELEASED_RE" "$dir/$i.out"; then
            okays=$((okays + 1))
        elif [ "$rc" -ne 0 ] && grep -Fq "ERROR:  53000: $fn with epsilon 0.2 and delta 0 exceeds the privacy budget of role \"$role\"" "$dir/$i.out"; then
            refused=$((refused + 1))
        else
            other=$((other + 1))
            diag "session $i ($fn) exited with status $rc:" "$(cat "$dir/$i.out")"
        fi
    done
    is "$okays" "$K" "round $n: exactly $K of $SESSIONS racing sessions got a release"
    is "$refused" "$((SESSIONS - K))" "round $n: the other $((SESSIONS - K)) were refused with SQLSTATE 53000"
    is "$other" 0 "round $n: no session ended any other way"
    spent="$(epsilon_spent "$role")"
    ok_if "round $n: epsilon_spent is exactly 1.0 (got $spent)" numeric_eq "$spent" 1.0
    is "$(ledger_rows "$role")" "$K" "round $n: the ledger holds exactly $K release rows"
    is "$(sql -c "SELECT count(*) FILTER (WHERE epsilon = 0.2) || ' ' || coalesce(sum(epsilon), 0)
                  FROM uldp.ledger_data WHERE role = '$role' AND function LIKE 'user\\_dp\\_%'")" \
        "$K 1.0" "round $n: each ledger row charges 0.2, 1.0 in all"
    line="$(sql -c "SELECT round(extract(epoch FROM max(at) - min(at)) * 1000, 1)
                    FROM uldp.ledger_data WHERE role = '$role' AND function LIKE 'user\\_dp\\_%'")"
    diag "round $n: the $K charges were committed within $line ms of each other"
}

round 1 "${ROLES[0]}" user_dp_mean
round 2 "${ROLES[1]}" user_dp_mean user_dp_range

attack_done

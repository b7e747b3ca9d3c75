#!/usr/bin/env bash
# test/attack/local_rounds.sh -- racing sessions on a local round (uldp 0.7): can a report slip into
# a round after its result was computed, be left out of a result that was computed after it was
# accepted, or be stored twice for one user?
#
# Each case holds one session's transaction open at a chosen point (it waits on an advisory lock
# that a holder session keeps until it is terminated), starts the racing session, checks that it
# waits on a lock, then lets the first commit:
#   1. a submit is in progress when ldp_result is called: ldp_result waits for it and counts it;
#   2. ldp_result is in progress when a report is submitted: the submit waits, then is refused
#      ("closed"), and nothing is stored;
#   3. two reports of one user key at once: the second waits, then is refused, and one is stored.
# shellcheck disable=SC2317 # functions called through wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

OUT="$ATTACK_DIR"

new_round() {
    sql -c "SELECT uldp.ldp_round('mean', '{\"lower\": 0, \"upper\": 10, \"epsilon\": 1}')"
}
# waiting NAME: the session with application_name NAME waits on a lock
waiting() {
    [ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1'
                  AND wait_event_type = 'Lock' AND datname = current_database()")" = 1 ]
}
# holding KEY: advisory lock KEY is held in this database
holding() {
    [ "$(sql -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                  AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")" = 1 ]
}
# hold KEY: a session that keeps advisory lock KEY until release terminates it
hold() {
    sql -c "SET application_name = 'holder'" -c "SELECT pg_advisory_lock($1)" -c "SELECT pg_sleep(600)" \
        >/dev/null 2>&1 &
    attack_track $!
    wait_for 20 "the holder takes advisory lock $1" holding "$1"
}
release() {
    sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'holder' AND datname = current_database()" >/dev/null
}
# session NAME FILE SQL...: a background session, its output (and errors) in FILE
session() {
    local name="$1" file="$2"
    shift 2
    sql -v ON_ERROR_STOP=0 -c "SET application_name = '$name'" "$@" >"$file" 2>&1 &
    attack_track $!
}
report() { echo "uldp.ldp_report($1, ARRAY[5.0])"; }

# 1. ldp_result waits for a submit in progress, and counts it
r="$(new_round)"
hold 1 || exit 1
session A "$OUT/a" -c "BEGIN" -c "SELECT uldp.ldp_submit($r, 'a', $(report "$r"))" \
    -c "SELECT pg_advisory_lock_shared(1)" -c "COMMIT"
ok_if "a submit holds its transaction open" wait_for 20 "A waits on the holder" waiting A
session B "$OUT/b" -c "SELECT uldp.ldp_result($r) ->> 'reports'"
ok_if "ldp_result waits for the submitting transaction" wait_for 20 "B waits on A" waiting B
release
wait
is "$(tail -1 "$OUT/b")" "1" "and its result counts the report that was accepted"

# 2. a submit waits for a result in progress, and is refused
r="$(new_round)"
hold 2 || exit 1
session C "$OUT/c" -c "BEGIN" -c "SELECT uldp.ldp_result($r) ->> 'reports'" \
    -c "SELECT pg_advisory_lock_shared(2)" -c "COMMIT"
ok_if "ldp_result holds its transaction open" wait_for 20 "C waits on the holder" waiting C
session D "$OUT/d" -c "SELECT uldp.ldp_submit($r, 'd', $(report "$r"))"
ok_if "a submit waits for the closing transaction" wait_for 20 "D waits on C" waiting D
release
wait
ok_if "then it is refused: the round is closed" grep -q "uldp round $r is closed" "$OUT/d" || diag "$(cat "$OUT/d")"
is "$(sql -c "SELECT count(*) FROM uldp.ldp_reports WHERE round_id = $r")" "0" "nothing was stored"
is "$(sql -c "SELECT uldp.ldp_result($r) ->> 'reports'")" "0" "the result is unchanged"

# 3. two reports of one user at once
r="$(new_round)"
hold 3 || exit 1
session E "$OUT/e" -c "BEGIN" -c "SELECT uldp.ldp_submit($r, 'same', $(report "$r"))" \
    -c "SELECT pg_advisory_lock_shared(3)" -c "COMMIT"
ok_if "a first report holds its transaction open" wait_for 20 "E waits on the holder" waiting E
session F "$OUT/f" -c "SELECT uldp.ldp_submit($r, 'same', $(report "$r"))"
ok_if "a second report of the same user waits for it" wait_for 20 "F waits on E" waiting F
release
wait
ok_if "then it is refused: one report per user" grep -q 'user "same" has already submitted' "$OUT/f" \
    || diag "$(cat "$OUT/f")"
is "$(sql -c "SELECT count(*) FROM uldp.ldp_reports WHERE round_id = $r")" "1" "one report is stored"

attack_done

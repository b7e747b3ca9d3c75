#!/usr/bin/env bash
# test/attack/dumprestore.sh -- the backup and restore procedure of doc/administration.md keeps
# budgets and ledger identical, and budgets follow role names across clusters and role re-creation.
#
# Two analysts with budgets release (and one is reset), so the ledger holds releases, set_budget
# and reset_budget rows. The database is dumped exactly as the documentation says
# (pg_dump -Fc -f FILE DB; createdb NEW; pg_restore -d NEW FILE), and, to show the order of the
# restored rows does not matter, also restored with pg_restore -j 4. Between dump and restore the
# first analyst's role is dropped and created again (roles are cluster-global: a new oid, as in
# another cluster). Checked: pg_restore reports no error; every column of every row of
# uldp.budget_data, uldp.ledger_data and uldp.ledger_head, and the ledger sequence, are identical
# in the restored databases; verify_ledger() is valid there with the same head, and the head
# recorded before the dump is in the restored chain; the re-created role keeps its spent budget
# (a release over what is left is refused, one within is charged by name on top), in the source
# database and in the restored one, and again after a second DROP ROLE + CREATE ROLE.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
B="${ATTACK_PREFIX}other"
NEW="${ATTACK_DB}_restored"
PAR="${ATTACK_DB}_parallel"
DUMP="$ATTACK_DIR/uldp.dump"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
drop_dbs() { uldp_psql -d postgres -q -c "DROP DATABASE IF EXISTS $NEW WITH (FORCE)" \
    -c "DROP DATABASE IF EXISTS $PAR WITH (FORCE)"; }
drop_dbs || exit 1
attack_at_exit drop_dbs

sqldb() { local db="$1"; shift; uldp_psql -d "$db" -qAt "$@"; }
sqldb_as() { local db="$1" role="$2"; shift 2; uldp_psql -d "$db" -U "$role" -qAt "$@"; }
release() { # release DB ROLE EPSILON: a release as ROLE; prints the value
    sqldb_as "$1" "$2" -c "SELECT user_dp_mean(amount, user_id, $3, 0, 300) FROM visits"
}
# every column of every row, in a fixed order, as text (hashes in hex, times with microseconds)
snapshot() {
    sqldb "$1" -c "SET TimeZone = 'UTC'" \
        -c "SELECT 'budget ' || b::text FROM uldp.budget_data b ORDER BY role" \
        -c "SELECT 'ledger ' || l::text FROM uldp.ledger_data l ORDER BY id" \
        -c "SELECT 'head ' || h::text FROM uldp.ledger_head h" \
        -c "SELECT 'sequence ' || last_value || ' ' || is_called FROM uldp.ledger_data_id_seq"
}

sql -c "CREATE ROLE $A LOGIN" -c "CREATE ROLE $B LOGIN" || exit 1
attack_setup_visits "$A" "$B" || exit 1
sql -c "SELECT uldp.set_budget('$A', 2, 0)" -c "SELECT uldp.set_budget('$B', 5, 0)" >/dev/null || exit 1
for eps in 0.25 0.25 0.5; do release "$ATTACK_DB" "$A" "$eps" >/dev/null || exit 1; done
sql -c "SELECT uldp.reset_budget('$A')" >/dev/null || exit 1
release "$ATTACK_DB" "$A" 1.25 >/dev/null || exit 1
release "$ATTACK_DB" "$B" 0.5 >/dev/null || exit 1
is "$(sql -c "SELECT string_agg(function, ',' ORDER BY id) FROM uldp.ledger_data WHERE role = '$A'")" \
    "uldp.set_budget,user_dp_mean,user_dp_mean,user_dp_mean,uldp.reset_budget,user_dp_mean" \
    "the ledger holds set_budget, releases and a reset of the analyst"
is "$(sql -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the source ledger is valid"
before="$(snapshot "$ATTACK_DB")"
known_head="$(sql -c "SELECT encode(hash, 'hex') FROM uldp.ledger_head")"

# --- the documented procedure: pg_dump -Fc, createdb, pg_restore
uldp_as_pg "$ULDP_PGBIN/pg_dump" -Fc -f "$DUMP" "$ATTACK_DB"
ok $? "pg_dump -Fc -f FILE DB" || exit 1

# roles are cluster-global: drop the analyst and create it again (a new oid)
old_oid="$(sql -c "SELECT oid FROM pg_roles WHERE rolname = '$A'")"
sql -c "REVOKE SELECT ON visits FROM $A" -c "DROP ROLE $A" -c "CREATE ROLE $A LOGIN" \
    -c "GRANT SELECT ON visits TO $A" || exit 1
isnt_old() { [ "$(sql -c "SELECT oid FROM pg_roles WHERE rolname = '$A'")" != "$old_oid" ]; }
ok_if "the analyst's role was dropped and created again (new oid)" isnt_old

uldp_as_pg "$ULDP_PGBIN/createdb" "$NEW"
ok $? "createdb NEW" || exit 1
out="$(uldp_as_pg "$ULDP_PGBIN/pg_restore" -d "$NEW" "$DUMP" 2>&1)"
rc=$?
is "$rc:$out" "0:" "pg_restore -d NEW FILE: exit status 0, no error"
after="$(snapshot "$NEW")"
is "$after" "$before" "budget_data, ledger_data, ledger_head and the sequence are identical after the restore"
is "$(sqldb "$NEW" -c "SELECT valid, entries, encode(head, 'hex'), problem IS NULL FROM uldp.verify_ledger()")" \
    "t|$(sql -c 'SELECT count(*) FROM uldp.ledger_data')|$known_head|t" \
    "verify_ledger() in the restored database: valid, every row, the same head"
is "$(sqldb "$NEW" -c "SELECT valid FROM uldp.verify_ledger('\\x$known_head')")" "t" \
    "the head recorded before the dump is in the restored chain"

uldp_as_pg "$ULDP_PGBIN/createdb" "$PAR" && out="$(uldp_as_pg "$ULDP_PGBIN/pg_restore" -j 4 -d "$PAR" "$DUMP" 2>&1)"
rc=$?
is "$rc:$out" "0:" "pg_restore -j 4 (tables restored in parallel): no error"
is "$(snapshot "$PAR")" "$before" "identical after the parallel restore too"
is "$(sqldb "$PAR" -c 'SELECT valid FROM uldp.verify_ledger()')" "t" "and valid"

# --- budgets follow the name: the re-created role has spent what the old one did
for db in "$ATTACK_DB" "$NEW"; do
    is "$(sqldb "$db" -c "SELECT epsilon_spent FROM uldp.budget WHERE role = '$A'")" "1.25" \
        "$db: the re-created analyst's budget shows epsilon 1.25 spent"
    out="$(release "$db" "$A" 1 2>&1)"
    if grep -q 'exceeds the privacy budget' <<<"$out"; then ok 0 "$db: a release over the 0.75 left is refused"; else
        ok 1 "$db: a release over the 0.75 left is refused"
        diag "$out"
    fi
    ok_if "$db: a release within it works" grep -Eq "$RELEASED_RE" <<<"$(release "$db" "$A" 0.5 2>&1)"
    is "$(sqldb "$db" -c "SELECT epsilon_spent FROM uldp.budget_data WHERE role = '$A'")" "1.75" \
        "$db: charged by name on top of what was spent"
    is "$(sqldb "$db" -c "SELECT role || ' ' || function || ' ' || epsilon || ' ' || hash_version || ' ' || (statement IS NOT NULL)
        FROM uldp.ledger_data ORDER BY id DESC LIMIT 1")" "$A user_dp_mean 0.5 2 true" \
        "$db: the new ledger row names the role, has a statement column (encoding version 2)"
    is "$(sqldb "$db" -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "$db: the ledger is valid"
done

# and once more in the restored database: drop and create the role again
sql -c "REVOKE SELECT ON visits FROM $A" && sqldb "$NEW" -c "REVOKE SELECT ON visits FROM $A" \
    && sqldb "$PAR" -c "REVOKE SELECT ON visits FROM $A" \
    && sql -c "DROP ROLE $A" -c "CREATE ROLE $A LOGIN" && sqldb "$NEW" -c "GRANT SELECT ON visits TO $A" || exit 1
is "$(sqldb "$NEW" -c "SELECT epsilon_limit || ' ' || epsilon_spent FROM uldp.budget WHERE role = '$A'")" "2 1.75" \
    "after another DROP ROLE + CREATE ROLE the budget still applies, spent not reset"
out="$(release "$NEW" "$A" 0.5 2>&1)"
if grep -q 'exceeds the privacy budget' <<<"$out"; then ok 0 "a release over the 0.25 left is refused"; else
    ok 1 "a release over the 0.25 left is refused"
    diag "$out"
fi
is "$(sqldb "$NEW" -c 'SELECT valid, problem IS NULL FROM uldp.verify_ledger()')" "t|t" "the restored ledger is still valid"

attack_done

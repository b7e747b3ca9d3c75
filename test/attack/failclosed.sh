#!/usr/bin/env bash
# test/attack/failclosed.sh -- fail closed: when the query gate is not loaded, an analyst without
# SELECT privilege has no access at all to a protected table, releases included.
#
# The cluster preloads uldp (shared_preload_libraries). The file checks that the analyst's release
# works there, then restarts the cluster without the preload: in a fresh session the same release,
# SELECT * and COPY all fail with "permission denied" (SQLSTATE 42501), nothing is charged, and the
# analyst still cannot read the rows after calling a uldp function that loads the library late
# (the gate then applies: releases only). Without the preload, a release on a table the analyst may
# read loads the library while its statement starts: it is still charged before any row is read
# (a filter that fails on every row fails after the charge; a role without budget is refused before
# it). Finally it restores the preload, restarts, and checks the release works again. The cluster
# runs with its usual settings when the file exits.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
N="${ATTACK_PREFIX}nobudget"
RELEASE="SELECT user_dp_mean(amount, user_id, 0.25, 0, 300) FROM visits"
# on a table the analyst may read, with a filter that fails on every row it reaches
FAILING="SELECT user_dp_mean(amount, user_id, 0.125, 0, 300) FROM visits_open WHERE 1 / (amount - amount) > 0"


attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $A LOGIN" -c "CREATE ROLE $N LOGIN" || exit 1
# shellcheck disable=SC2119 # no role is granted SELECT: the table is protected instead
attack_setup_visits || exit 1
sql -c "CREATE TABLE visits_open AS SELECT * FROM visits" -c "GRANT SELECT ON visits_open TO $A, $N" \
    || exit 1
sql -c "SELECT uldp.protect_table('visits', 'user_id')" -c "SELECT uldp.set_budget('$A', 10, 0)" >/dev/null \
    || exit 1

is "$(sql -c 'SHOW shared_preload_libraries')" "uldp" "the cluster preloads uldp"
ok_if "preloaded: the analyst's release on the protected table works" \
    nonempty "$(sql_as "$A" -c "$RELEASE" 2>/dev/null)"
is "$(sqlstate_as "$A" 'SELECT * FROM visits')" "42501" "preloaded: SELECT * is refused (42501)"
spent0="$(epsilon_spent "$A")"

attack_at_exit attack_restore_preload
# (an empty list cannot be written with ALTER SYSTEM: preload plpgsql instead, which is harmless)
sql -c "ALTER SYSTEM SET shared_preload_libraries = 'plpgsql'" >/dev/null && uldp_cluster_ctl restart -m fast
is "$(sql -c 'SHOW shared_preload_libraries')" "plpgsql" "restarted without preloading uldp"
for q in "$RELEASE" "SELECT * FROM visits" "SELECT count(*) FROM visits" "COPY visits TO STDOUT" \
    "EXPLAIN $RELEASE"; do
    out="$(sql_as "$A" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "$q" 2>&1)"
    if grep -q '^ERROR: *42501: permission denied for table visits' <<<"$out"; then
        ok 0 "not preloaded: '$q' is denied by PostgreSQL"
    else
        ok 1 "not preloaded: '$q' is denied by PostgreSQL"
        diag "$out"
    fi
done
is "$(epsilon_spent "$A")" "$spent0" "not preloaded: nothing was charged"
# a session that loads the library late (by calling a uldp function) gets the gate from then on:
# releases only, never rows
out="$(sql_as "$A" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1 <<SQL
SELECT uldp._safe_arith_int4(1, 1, 1);
SELECT * FROM visits;
SQL
)"
if grep -q '^ERROR: *42501:' <<<"$out" && ! grep -Eq '^[0-9]+\|' <<<"$out"; then
    ok 0 "loaded late: raw rows are still refused"
else
    ok 1 "loaded late: raw rows are still refused"
    diag "$out"
fi

# releases on a readable table in sessions that load the library while the statement starts
is "$(sqlstate_as "$A" "$FAILING")" "22012" "not preloaded: the failing filter is reached (division by zero)"
ok_if "not preloaded: ... after the statement was charged (0.125)" \
    grew_by "$spent0" "$(epsilon_spent "$A")" 0.125
is "$(sqlstate_as "$N" "$FAILING")" "42501" \
    "not preloaded: a role without budget is refused before any row is read"

attack_restore_preload
is "$(sql -c 'SHOW shared_preload_libraries')" "uldp" "preload restored"
ok_if "preloaded again: the release works" nonempty "$(sql_as "$A" -c "$RELEASE" 2>/dev/null)"
ok_if "0.375 was charged in all (0.25 before, 0.125 not preloaded, 0.25 now)" \
    grew_by "$spent0" "$(epsilon_spent "$A")" 0.375

attack_done

#!/usr/bin/env bash
# test/attack/dropguard.sh -- DROP EXTENSION uldp is refused while budgets or ledger rows exist,
# without shared_preload_libraries, and a superuser can confirm with SET uldp.allow_drop = on.
#
# The cluster is restarted without preloading uldp (it preloads plpgsql instead: an empty list
# cannot be written with ALTER SYSTEM). In fresh sessions (the library not loaded,
# checked), with a budget and ledger rows: DROP EXTENSION uldp, DROP EXTENSION uldp CASCADE,
# DROP SCHEMA public CASCADE (reaches the extension through its aggregates) and DROP OWNED BY the
# extension's owner are refused with the documented message and leave everything in place; a
# non-superuser cannot set uldp.allow_drop; a superuser who sets it drops the extension. With an
# empty ledger and no budget, DROP EXTENSION needs no confirmation. The preload is restored.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

A="${ATTACK_PREFIX}analyst"
S="${ATTACK_PREFIX}owner"
MSG='cannot drop extension uldp while it holds privacy budgets or ledger rows'

refused() { # refused DESC SQL: SQL (as superuser, fresh session) fails with the guard's message
    local out
    out="$(sql -v ON_ERROR_STOP=0 -c "$2" 2>&1)"
    if grep -q "$MSG" <<<"$out"; then ok 0 "$1"; else
        ok 1 "$1"
        diag "$out"
    fi
}
state() { sql -c "SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'uldp') || ' ' ||
    (SELECT count(*) FROM uldp.ledger_data) || ' ' || (SELECT count(*) FROM uldp.budget_data)"; }

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
# the extension is owned by a superuser other than postgres (DROP OWNED BY postgres is refused
# by PostgreSQL itself)
sql -c "CREATE ROLE $A LOGIN" -c "CREATE ROLE $S SUPERUSER LOGIN" -c 'DROP EXTENSION uldp' || exit 1
sql_as "$S" -c 'CREATE EXTENSION uldp' || exit 1
sql -c "SELECT uldp.set_budget('$A', 1, 0)" >/dev/null || exit 1

sql -c "ALTER SYSTEM SET shared_preload_libraries = 'plpgsql'" >/dev/null && uldp_cluster_ctl restart -m fast || exit 1
attack_at_exit attack_restore_preload
is "$(sql -c 'SHOW shared_preload_libraries')" "plpgsql" "the cluster does not preload uldp"
is "$(sql -c "SELECT count(*) FROM pg_settings WHERE name = 'uldp.allow_drop'")" "0" \
    "a fresh session has not loaded the library"
before="$(state)"
is "$before" "1 1 1" "the extension, one ledger row and one budget"

refused "DROP EXTENSION uldp is refused" 'DROP EXTENSION uldp'
refused "DROP EXTENSION uldp CASCADE is refused" 'DROP EXTENSION uldp CASCADE'
refused "DROP EXTENSION IF EXISTS other, uldp is refused" 'DROP EXTENSION IF EXISTS no_such_extension, uldp'
refused "DROP SCHEMA public CASCADE (cascading to the extension) is refused" 'DROP SCHEMA public CASCADE'
refused "DROP OWNED BY the extension's owner is refused" "DROP OWNED BY $S"
out="$(sql -v ON_ERROR_STOP=0 -c 'DROP EXTENSION uldp' 2>&1)"
ok_if "the error says how to confirm" grep -q 'SET uldp.allow_drop = on' <<<"$out"
is "$(state)" "$before" "everything is still there"
is "$(sql -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'public'")" "1" "schema public is still there"

out="$(sql_as "$A" -v ON_ERROR_STOP=0 -c 'SELECT uldp.zcdp_rho(1, 1e-6) > 0' -c 'SET uldp.allow_drop = on' 2>&1)"
ok_if "a non-superuser cannot set uldp.allow_drop" grep -q 'permission denied to set parameter "uldp.allow_drop"' <<<"$out" \
    || diag "$out"

sql -c 'SET uldp.allow_drop = on' -c 'DROP EXTENSION uldp'
ok $? "a superuser who sets uldp.allow_drop drops the extension"
is "$(sql -c "SELECT count(*) FROM pg_extension WHERE extname = 'uldp'")" "0" "the extension is gone"
sql -c 'CREATE EXTENSION uldp' || exit 1
sql -c 'DROP EXTENSION uldp'
ok $? "with no budget and no ledger row, DROP EXTENSION needs no confirmation"
sql -c 'CREATE EXTENSION uldp' || exit 1

attack_done

#!/usr/bin/env bash
# test/run.sh -- the whole uldp test suite: install Debian deps, build + install the extension,
# start a throwaway PostgreSQL 15 cluster, then run
#   1. pg_regress  on the tests named by the Makefile's REGRESS line (sql/*.sql vs expected/*.out)
#   2. pgTAP       test/pgtap/*.sql (sorted) with pg_prove, in database uldp_tap
#   3. statistical test/stat/*.sql  (sorted) with pg_prove, in database uldp_stat
#   4. attack      test/attack/*.sh (sorted) with bash, each in a fresh database uldp_attack_<name>:
#                  shell-driven tests that need several sessions or server restarts
#                  (a file passes iff it exits 0; see test/attack/lib/attack.sh)
#   5. docs        test/docs/*.sh (sorted) with bash, each with a database uldp_docs_<name>: the
#                  documentation's SQL runs (test/docs/cookbook.sh runs every block of doc/cookbook.md)
#   6. client      test/local/*.sh (sorted) with bash, no database: the installed client tool
#                  uldp-local on its own (ULDP_LOCAL_CLI), as a client machine runs it
# and print "N passed, N failed" (N = test files). Exits non-zero if anything failed.
#
# Usage: bash test/run.sh [regress] [pgtap] [stat] [attack] [docs] [client]   (default: all six)
#   ULDP_NO_BUILD=1  skip dependency install and build (use what is installed)
#   ULDP_KEEP=1      keep the temp dir (cluster, server.log, regression.diffs) for inspection
#   ULDP_PORT        cluster port (default 54329)
#   ULDP_FILTER=text run only the test files (and regression tests) whose name contains text,
#                    e.g. ULDP_FILTER=neighbours_sgd bash test/run.sh stat
set -euo pipefail

# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

PASSED=0
FAILED=0
STAGE_SUMMARY=()

header() {
    echo
    echo "======================================================================"
    echo "== $*"
    echo "======================================================================"
}

record() { # record LABEL NPASS NFAIL
    PASSED=$((PASSED + $2))
    FAILED=$((FAILED + $3))
    STAGE_SUMMARY+=("$(printf '%-12s %3d ok, %3d not ok' "$1:" "$2" "$3")")
}

# makefile_var NAME: the value of a variable in the Makefile (REGRESS, REGRESS_OPTS), read with
# awk (handles "=", ":=", "+=", "?=", backslash continuations and comments). If the value uses
# make expansions ($(...)), ask make itself instead.
makefile_var() {
    local var="$1" val
    [ -f "$ULDP_REPO/Makefile" ] || return 0
    val="$(awk -v var="$var" '
        !grab && $0 ~ ("^[[:space:]]*" var "[[:space:]]*[:+?]?=") { grab = 1; sub(/^[^=]*=/, "") }
        grab { sub(/#.*/, ""); cont = sub(/\\[[:space:]]*$/, ""); printf "%s ", $0; if (!cont) grab = 0 }
    ' "$ULDP_REPO/Makefile")"
    if [[ "$val" == *'$'* ]]; then
        # shellcheck disable=SC2016 # $(%s) is for make, not for the shell
        val="$(cd "$ULDP_REPO" && printf '_uldp_print_var:\n\t@echo $(%s)\n' "$var" \
            | make -s --no-print-directory -f Makefile -f - PG_CONFIG="$ULDP_PG_CONFIG" _uldp_print_var)"
    fi
    printf '%s\n' "$val"
}

# filter_tests ARRAY: keep the elements of the array named ARRAY whose base name contains
# $ULDP_FILTER (all of them when it is unset)
filter_tests() {
    local -n list="$1"
    local kept=() t
    [ -n "${ULDP_FILTER:-}" ] || return 0
    for t in "${list[@]}"; do
        if [[ "$(basename "$t")" == *"$ULDP_FILTER"* ]]; then kept+=("$t"); fi
    done
    list=("${kept[@]}")
}

# ---------------------------------------------------------------------------------------------
stage_regress() {
    header "pg_regress"
    local tests=() opts=() extra=() o t
    read -r -a tests <<<"$(makefile_var REGRESS)"
    if [ "${#tests[@]}" -eq 0 ] && [ -d "$ULDP_REPO/sql" ]; then
        uldp_warn "no REGRESS line in the Makefile; using sql/*.sql"
        mapfile -t tests < <(cd "$ULDP_REPO/sql" && find . -maxdepth 1 -name '*.sql' -printf '%f\n' \
            | sed 's/\.sql$//' | LC_ALL=C sort)
    fi
    filter_tests tests
    if [ "${#tests[@]}" -eq 0 ]; then
        echo "no regression tests found: skipping"
        return
    fi
    read -r -a opts <<<"$(makefile_var REGRESS_OPTS)"
    for o in "${opts[@]}"; do
        case "$o" in
            --inputdir=. | --inputdir=./) ;; # that is what we pass anyway
            --inputdir* | --outputdir* | --bindir* | --host* | --port* | --dbname* | --temp-instance* | --use-existing)
                uldp_warn "ignoring REGRESS_OPTS option $o" ;;
            *) extra+=("$o") ;;
        esac
    done

    # pg_regress runs as postgres and reads <inputdir>/sql and <inputdir>/expected.
    local indir="$ULDP_REPO" d readable=1
    for d in sql expected input output data; do
        if [ -d "$ULDP_REPO/$d" ] && ! uldp_pg_can_read "$ULDP_REPO/$d"; then readable=0; fi
    done
    if [ "$readable" = 0 ]; then
        indir="$ULDP_PGTMP/regress_in"
        echo "(repo not readable by postgres: copying test inputs to $indir)"
        for d in sql expected input output data; do
            if [ -d "$ULDP_REPO/$d" ]; then uldp_pg_copy "$ULDP_REPO/$d" "$indir/$d"; fi
        done
    fi
    local outdir="$ULDP_PGTMP/regress_out"
    mkdir -p "$outdir"
    chown postgres:postgres "$outdir"

    # pg_regress deletes regression.out when everything passed, so parse a copy of its stdout.
    local log="$ULDP_PGTMP/pg_regress.log" rc=0
    uldp_as_pg "$ULDP_PG_REGRESS" \
        --inputdir="$indir" --outputdir="$outdir" --bindir="$ULDP_PGBIN" \
        --host="$PGHOST" --port="$PGPORT" --dbname=contrib_regression \
        "${extra[@]}" "${tests[@]}" 2>&1 | tee "$log" || rc=$?
    if [ "$rc" -eq 130 ]; then exit 130; fi # runuser reports a Ctrl-C'd child as status 130

    local npass=0 nfail=0
    for t in "${tests[@]}"; do
        if awk -v t="$t" '
                ($1 == "test" && $2 == t && $3 == "..." && $4 == "ok") ||
                ($1 == t && $2 == "..." && $3 == "ok") { found = 1 }
                END { exit !found }' "$log"; then
            npass=$((npass + 1))
        else
            nfail=$((nfail + 1))
        fi
    done
    if [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
        uldp_warn "pg_regress exited with status $rc although every test reported ok"
        nfail=1
    fi
    if [ -s "$outdir/regression.diffs" ]; then
        echo "----- regression.diffs -----"
        cat "$outdir/regression.diffs"
        echo "----- end of regression.diffs -----"
    fi
    record pg_regress "$npass" "$nfail"
}

# ---------------------------------------------------------------------------------------------
# stage_prove LABEL SUBDIR DB: run test/SUBDIR/*.sql with pg_prove in a fresh database DB
stage_prove() {
    local label="$1" subdir="$2" db="$3"
    header "$label: test/$subdir/*.sql (database $db)"
    local files=()
    if [ -d "$ULDP_REPO/test/$subdir" ]; then
        mapfile -d '' -t files < <(cd "$ULDP_REPO/test" \
            && find "$subdir" -maxdepth 1 -type f -name '*.sql' -print0 | LC_ALL=C sort -z)
    fi
    filter_tests files
    if [ "${#files[@]}" -eq 0 ]; then
        echo "no test/$subdir/*.sql files yet: skipping"
        return
    fi

    # pg_prove runs as postgres from a directory where the files are named test/<subdir>/x.sql
    # relative to it (so \ir includes work); copy them if postgres cannot read the repo.
    local cwd="$ULDP_REPO/test"
    if ! uldp_pg_can_read "$ULDP_REPO/test/$subdir"; then
        cwd="$ULDP_PGTMP/test"
        if [ ! -d "$cwd" ]; then
            echo "(repo not readable by postgres: copying test/ to $cwd)"
            uldp_pg_copy "$ULDP_REPO/test" "$cwd"
        fi
    fi

    if ! uldp_psql -d postgres -q -c 'SET client_min_messages = warning' \
            -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" \
        || ! uldp_psql -d "$db" -q -c 'CREATE EXTENSION pgtap'; then
        echo "could not set up database $db: counting all ${#files[@]} files as failed"
        record "$label" 0 "${#files[@]}"
        return
    fi

    local log="$ULDP_PGTMP/prove_$subdir.log" rc=0
    uldp_as_pg_in "$cwd" pg_prove --psql-bin "$ULDP_PGBIN/psql" \
        --host "$PGHOST" --port "$PGPORT" --username postgres --dbname "$db" --timer \
        "${files[@]}" 2>&1 | tee "$log" || rc=$?
    if [ "$rc" -eq 130 ]; then exit 130; fi

    # Failed files are the ones listed in pg_prove's "Test Summary Report" as "<file>   (Wstat: ...".
    local f npass=0 nfail=0
    for f in "${files[@]}"; do
        if awk -v f="$f" '
                /^Test Summary Report/ { report = 1; next }
                report && index($0, f) == 1 && substr($0, length(f) + 1) ~ /^ +\(Wstat: / { found = 1 }
                END { exit !found }' "$log"; then
            nfail=$((nfail + 1))
        else
            npass=$((npass + 1))
        fi
    done
    if [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
        echo "pg_prove exited with status $rc without a per-file report: counting all files as failed"
        npass=0
        nfail="${#files[@]}"
    fi
    record "$label" "$npass" "$nfail"
}

# ---------------------------------------------------------------------------------------------
# stage_scripts LABEL SUBDIR DBVAR: run test/SUBDIR/*.sh (sorted) with bash, as root, in the cluster's
# environment; each file gets a fresh database uldp_SUBDIR_<name> with the uldp extension, named to
# it in the environment variable DBVAR (dropped afterwards unless ULDP_KEEP=1), and counts as one
# test: it passes iff it exits 0 within ULDP_ATTACK_TIMEOUT seconds (default 300) and leaves the
# cluster running.
#   attack: test/attack/*.sh, ULDP_ATTACK_DB (see test/attack/lib/attack.sh)
#   docs:   test/docs/*.sh, ULDP_DOCS_DB (the SQL of the documentation runs)
stage_scripts() {
    local label="$1" subdir="$2" dbvar="$3"
    header "$label: test/$subdir/*.sh"
    local files=() f name db rc t0 npass=0 nfail=0 timeout="${ULDP_ATTACK_TIMEOUT:-300}"
    if [ -d "$ULDP_REPO/test/$subdir" ]; then
        mapfile -d '' -t files < <(find "$ULDP_REPO/test/$subdir" -maxdepth 1 -type f -name '*.sh' -print0 \
            | LC_ALL=C sort -z)
    fi
    filter_tests files
    if [ "${#files[@]}" -eq 0 ]; then
        echo "no test/$subdir/*.sh files yet: skipping"
        return
    fi
    export PGHOST PGPORT PGUSER ULDP_PGDATA ULDP_PGTMP ULDP_PGLOG ULDP_PGBIN ULDP_KEEP
    for f in "${files[@]}"; do
        name="$(basename "$f" .sh)"
        db="uldp_${subdir}_$name"
        echo
        echo "--- test/$subdir/$name.sh (database $db)"
        t0=$SECONDS
        if ! uldp_psql -d postgres -q -c 'SET client_min_messages = warning' \
                -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" \
            || ! uldp_psql -d "$db" -q -c 'CREATE EXTENSION uldp'; then
            echo "--- test/$subdir/$name.sh: could not set up database $db: failed"
            nfail=$((nfail + 1))
            continue
        fi
        rc=0
        env "$dbvar=$db" timeout -k 10 "$timeout" bash "$f" </dev/null 2>&1 || rc=$?
        if [ "$rc" -eq 130 ]; then exit 130; fi
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "--- timed out after ${timeout}s"; fi
        if ! uldp_cluster_running; then
            echo "--- the cluster is not running after test/$subdir/$name.sh: restarting it"
            [ "$rc" -ne 0 ] || rc=1
            uldp_cluster_ctl start \
                || uldp_die "could not restart the cluster"
        fi
        if [ "$rc" -eq 0 ]; then
            npass=$((npass + 1))
            echo "--- test/$subdir/$name.sh: ok ($((SECONDS - t0))s)"
        else
            nfail=$((nfail + 1))
            echo "--- test/$subdir/$name.sh: FAILED (exit status $rc, $((SECONDS - t0))s)"
        fi
        if [ "${ULDP_KEEP:-0}" != 1 ]; then
            uldp_psql -d postgres -q -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
                || uldp_warn "could not drop database $db"
        fi
    done
    record "$label" "$npass" "$nfail"
}

# ---------------------------------------------------------------------------------------------
# stage_client: run test/local/*.sh (sorted) with bash against the installed uldp-local; each file
# counts as one test and passes iff it exits 0. No database: the client library needs none.
stage_client() {
    header "client: test/local/*.sh"
    local files=() f npass=0 nfail=0
    mapfile -d '' -t files < <(find "$ULDP_REPO/test/local" -maxdepth 1 -type f -name '*.sh' -print0 \
        | LC_ALL=C sort -z)
    filter_tests files
    for f in "${files[@]}"; do
        echo
        echo "--- test/local/$(basename "$f")"
        if ULDP_LOCAL_CLI="$ULDP_PGBIN/uldp-local" timeout -k 10 300 bash "$f" </dev/null 2>&1; then
            npass=$((npass + 1))
        else
            nfail=$((nfail + 1))
            echo "--- test/local/$(basename "$f"): FAILED"
        fi
    done
    record client "$npass" "$nfail"
}

# ---------------------------------------------------------------------------------------------
main() {
    local stages=("$@") s
    [ "${#stages[@]}" -gt 0 ] || stages=(regress pgtap stat attack docs client)
    for s in "${stages[@]}"; do
        case "$s" in
            regress | pgtap | stat | attack | docs | client) ;;
            *) uldp_die "unknown stage '$s' (regress, pgtap, stat, attack, docs, client)" ;;
        esac
    done

    if [ "${ULDP_NO_BUILD:-0}" = 1 ]; then
        echo "ULDP_NO_BUILD=1: skipping dependency install and build"
    else
        header "dependencies"
        uldp_install_deps
        header "build + install"
        uldp_build_install || uldp_die "build failed"
    fi
    header "throwaway cluster"
    uldp_start_cluster

    for s in "${stages[@]}"; do
        SECONDS=0
        case "$s" in
            regress) stage_regress ;;
            pgtap) stage_prove pgTAP pgtap uldp_tap ;;
            stat) stage_prove statistical stat uldp_stat ;;
            attack) stage_scripts attack attack ULDP_ATTACK_DB ;;
            docs) stage_scripts docs docs ULDP_DOCS_DB ;;
            client) stage_client ;;
        esac
        echo "(stage $s took ${SECONDS}s)"
    done

    header "summary"
    if [ "${#STAGE_SUMMARY[@]}" -gt 0 ]; then printf '%s\n' "${STAGE_SUMMARY[@]}"; fi
    local status=0
    if [ "$FAILED" -ne 0 ]; then
        status=1
        uldp_show_server_log
    elif [ $((PASSED + FAILED)) -eq 0 ]; then
        echo "no tests were found at all" >&2
        status=1
    fi
    printf '%d passed, %d failed\n' "$PASSED" "$FAILED"
    return "$status"
}

main "$@"

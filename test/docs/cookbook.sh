#!/usr/bin/env bash
# test/docs/cookbook.sh -- doc/cookbook.md works: every ```sql block of it is run, in order, against
# the table it describes, filled with synthetic data.
#
# Blocks whose first line is "-- as the DBA" run as superuser postgres; every other block runs as
# role analyst, the cookbook's analyst, who has no SELECT privilege on orders and the budget a DBA
# block gives it. Right after the DBA block that creates the table orders, this file fills it with
# synthetic data: 4000 customers with log-normal baskets (median about 33, a long tail up to
# several hundred) and 1 to about 40 orders each over January to June 2026, a share of them
# returned (more often for large, discounted, weekday orders), and the three features of the
# cookbook's model.
#
# A block passes iff psql runs it without an error (ON_ERROR_STOP), and, for an analyst block, if
# every number it prints is finite: no NaN, no +-Infinity, no NULL, no magnitude of 1e300 or more
# (what a release without bounds prints when it found too few users to choose an interval), no
# model without weights and no empty array (what models and vector means release for too few
# users). Each block runs in a psql session of its own (psql variables set by \gset do not carry
# over to the next block). One TAP line per block; the file exits 1 if any block failed, after
# running them all, and names them.
#
# Run by the "docs" stage of test/run.sh (bash test/run.sh docs), which passes its running cluster
# (PGHOST PGPORT PGUSER ULDP_PGDATA ULDP_PGTMP ULDP_PGLOG) and the database name ULDP_DOCS_DB. Alone,
# `bash test/docs/cookbook.sh` starts a throwaway cluster of its own (test/lib/common.sh; uldp
# must be installed, e.g. by test/run.sh). Either way the cluster must be a throwaway one: this
# file creates the role analyst, and drops it (and its database) when it ends, unless
# ULDP_KEEP=1 (then both are kept for inspection).
set -uo pipefail
export LC_ALL=C LANG=C
unset LANGUAGE

if [ -n "${ULDP_DOCS_DB:-}" ]; then
    # run by the docs stage: common.sh resets ULDP_PGTMP (set by the stage's uldp_start_cluster)
    _docs_saved_pgtmp="${ULDP_PGTMP:?the docs stage exports ULDP_PGTMP}"
    # shellcheck source=test/lib/common.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
    ULDP_PGTMP="$_docs_saved_pgtmp"
    export ULDP_PGTMP
    DB="$ULDP_DOCS_DB"
else
    # shellcheck source=test/lib/common.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
    [ -x "$ULDP_PGBIN/postgres" ] || uldp_die "no PostgreSQL 15 in $ULDP_PGBIN"
    uldp_start_cluster >/dev/null
    DB=uldp_docs_cookbook
fi

DOC="$ULDP_REPO/doc/cookbook.md"
ANALYST=analyst        # the role of the cookbook's analyst blocks
DBA_MARK='-- as the DBA' # the first line of a block run as superuser
WORK="$ULDP_PGTMP/docs_cookbook"

[ -f "$DOC" ] || uldp_die "$DOC not found"
rm -rf "$WORK"
mkdir -p "$WORK"
chown postgres:postgres "$WORK"
chmod 700 "$WORK"

su_sql() { uldp_psql -d "$DB" -qAt "$@"; }

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
    if [ "${ULDP_KEEP:-0}" = 1 ]; then
        echo "# ULDP_KEEP=1: keeping database $DB and role $ANALYST"
    else
        uldp_psql -d postgres -qAt -c 'SET client_min_messages = warning' \
            -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "DROP ROLE IF EXISTS $ANALYST" >/dev/null \
            || echo "# could not drop database $DB or role $ANALYST" >&2
    fi
    rm -rf "$WORK"
}
if [ -n "${ULDP_DOCS_DB:-}" ]; then
    trap 'cleanup' EXIT
else
    uldp_add_cleanup cleanup # before common.sh stops the cluster
fi

# A fresh database (the docs stage created one with the extension: start from nothing, as the
# cookbook's reader does after CREATE EXTENSION) and no leftover analyst from an interrupted run.
uldp_psql -d postgres -qAt -c 'SET client_min_messages = warning' \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "DROP ROLE IF EXISTS $ANALYST" \
    -c "CREATE DATABASE $DB" >/dev/null || uldp_die "could not create database $DB"
su_sql -c 'CREATE EXTENSION uldp' >/dev/null || uldp_die "could not create extension uldp in $DB"

# ---------------------------------------------------------------------------------------------
# The blocks: block_N.sql, and one line "N<TAB>line<TAB>dba|analyst<TAB>heading" each in blocks.tsv
awk -v dir="$WORK" -v mark="$DBA_MARK" '
    /^#+ / && !inblock { heading = $0; sub(/^#+ +/, "", heading) }
    /^```sql[[:space:]]*$/ && !inblock { inblock = 1; n++; start = NR + 1; first = 1; file = dir "/block_" n ".sql"; next }
    /^```[[:space:]]*$/ && inblock {
        inblock = 0; close(file)
        printf "%d\t%d\t%s\t%s\n", n, start, role, heading
        next
    }
    inblock {
        if (first) { role = (index($0, mark) == 1) ? "dba" : "analyst"; first = 0 }
        print > file
    }
    END { if (inblock) { print "unterminated ```sql block at line " start > "/dev/stderr"; exit 1 } }
' "$DOC" >"$WORK/blocks.tsv" || uldp_die "could not read the blocks of $DOC"
chown -R postgres:postgres "$WORK"
[ -s "$WORK/blocks.tsv" ] || uldp_die "no \`\`\`sql blocks in $DOC"

# ---------------------------------------------------------------------------------------------
# The synthetic orders, loaded once the cookbook has created the table.
load_orders() {
    su_sql >/dev/null <<'SQL'
SELECT setseed(0.12);
WITH customers AS (
    SELECT c AS user_id,
           exp(3.5 + 0.8 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())) AS basket,
           1 + floor(-4 * ln(1 - random()))::int AS n_orders
    FROM generate_series(1, 4000) c),
rows AS (
    SELECT user_id,
           timestamptz '2026-01-01' + random() ^ 0.8 * interval '181 days' AS ordered_at,
           round((basket * exp(0.4 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())))::numeric,
                 2) AS amount,
           CASE WHEN random() < 0.3 THEN round(random()::numeric * 0.5, 2) ELSE 0 END AS discount
    FROM customers, generate_series(1, n_orders)),
featured AS (
    SELECT *, ARRAY[ln(1 + amount::float8) - 3.5, (extract(isodow FROM ordered_at) >= 6)::int,
                    10 * discount]::float8[] AS f
    FROM rows)
INSERT INTO orders (order_id, user_id, ordered_at, amount, returned, features)
SELECT row_number() OVER (ORDER BY ordered_at), user_id, ordered_at, amount,
       random() < 1 / (1 + exp(-(1.2 * f[1] - 0.5 * f[2] + 0.3 * f[3] - 2.2))), f
FROM featured;
ANALYZE orders;
SQL
}

# check_numbers FILE: every number printed (psql -At, tab-separated, NULL shown as "(null)") is finite
check_numbers() {
    awk -F '\t' '
        function bad(why) { printf "#   line %d of the output: %s: %s\n", NR, why, $0; failed = 1 }
        {
            for (i = 1; i <= NF; i++) {
                if ($i == "(null)") { bad("NULL"); continue }
                if (index($i, "\"weights\": []") || $i == "[]" || $i == "{}")
                    bad("an empty model or vector (too few users)")
                n = split($i, token, /[^-+.0-9A-Za-z]+/)
                for (j = 1; j <= n; j++) {
                    t = token[j]
                    if (t ~ /^[-+]?(Infinity|NaN|inf|nan)$/) bad("not finite: " t)
                    else if (t ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ \
                             && (t + 0 >= 1e300 || t + 0 <= -1e300)) bad("a magnitude of 1e300 or more: " t)
                }
            }
        }
        END { exit failed }' "$1"
}

N=0
FAILED=()
LOADED=0  # 1 once the synthetic data are in orders, -1 if that failed
CHECKED=0 # 1 once the setup was checked, before the first analyst block
while IFS=$'\t' read -r -u 3 n line role heading; do
    file="$WORK/block_$n.sql"
    out="$WORK/block_$n.out"
    err="$WORK/block_$n.err"
    user=postgres
    [ "$role" = dba ] || user="$ANALYST"
    if [ "$role" = analyst ] && [ "$CHECKED" = 0 ]; then
        CHECKED=1
        N=$((N + 1))
        if [ "$LOADED" = 1 ]; then
            echo "ok $N - synthetic data loaded into orders: $(su_sql -c \
                "SELECT format('%s orders of %s customers', count(*), count(DISTINCT user_id)) FROM orders")"
        else
            echo "not ok $N - synthetic data loaded into orders, created by a DBA block before the first analyst block"
            FAILED+=("the table orders (before line $line)")
        fi
        N=$((N + 1))
        if [ "$(su_sql -c "SELECT has_table_privilege('$ANALYST', 'orders', 'SELECT')" 2>&1)" = f ]; then
            echo "ok $N - $ANALYST has no SELECT privilege on orders"
        else
            echo "not ok $N - $ANALYST has no SELECT privilege on orders"
            FAILED+=("the privileges of $ANALYST")
        fi
    fi
    rc=0
    uldp_psql -d "$DB" -U "$user" -qAt -F $'\t' -P null='(null)' -f "$file" >"$out" 2>"$err" || rc=$?
    if [ "$rc" -eq 0 ] && [ "$role" = analyst ]; then
        check_numbers "$out" >"$err" || rc=1
    fi
    N=$((N + 1))
    desc="block $n (doc/cookbook.md line $line, as $user): $heading"
    if [ "$rc" -eq 0 ]; then
        echo "ok $N - $desc"
    else
        echo "not ok $N - $desc"
        FAILED+=("block $n (line $line)")
        sed 's/^/#   | /' "$file"
        sed 's/^/# /' "$err"
    fi
    if [ "$role" = dba ] && [ "$LOADED" = 0 ] \
        && [ "$(su_sql -c "SELECT to_regclass('orders') IS NOT NULL")" = t ]; then
        if load_orders; then
            LOADED=1
        else
            echo "# could not load the synthetic data into orders (the columns of the cookbook's table?)"
            LOADED=-1
        fi
    fi
done 3<"$WORK/blocks.tsv"

echo "1..$N"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "# failed: ${FAILED[*]}"
    exit 1
fi
exit 0

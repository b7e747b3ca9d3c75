#!/usr/bin/env bash
# test/docs/local.sh -- doc/local.md works: its ```sql blocks run, in order, in one session, as the
# superuser, on the tables the page assumes, filled with synthetic data:
#   visits(user_id, amount)           5000 users x 50 amounts N(4, 1) (the quick start's rounds)
#   examples(user_id, x1, x2, label)  10000 users x 20 rows, x ~ N(0, 1), label 1 iff
#                                     x1 - x2 + N(0, 0.5^2) > 0 (the ULDP-SGD example; the best
#                                     linear rule is right 89% of the time)
# in the seeded mode (uldp.test_seed = 7, superuser only), so that the checks after the blocks
# are exact: the quick start's mean round lands within 0.1 of the mean amount, the trigger's
# table holds reports and no samples, and the trained model is right on at least 80% of the
# examples. The ```sh and ```c blocks are for clients and are not run here (test/local/cli.sh and
# test/attack/local_protocol.sh run the tool).
#
# Run by the "docs" stage of test/run.sh, which passes its running cluster and ULDP_DOCS_DB.
set -uo pipefail
export LC_ALL=C LANG=C
unset LANGUAGE

_docs_saved_pgtmp="${ULDP_PGTMP:?run this file through the docs stage: bash test/run.sh docs}"
# shellcheck source=test/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
ULDP_PGTMP="$_docs_saved_pgtmp"
export ULDP_PGTMP
DB="${ULDP_DOCS_DB:?}"
WORK="$ULDP_PGTMP/docs_local"
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

N=0
FAILED=0
ok() { # ok STATUS DESC
    N=$((N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $N - $2"; else echo "not ok $N - $2"; FAILED=1; fi
}
q() { uldp_psql -d "$DB" -qAt -c "$1"; }

awk '/^```sql[[:space:]]*$/ { inblock = 1; next } /^```[[:space:]]*$/ && inblock { inblock = 0; print ""; next }
     inblock { print }' "$ULDP_REPO/doc/local.md" >"$WORK/blocks.sql"
chmod -R a+rX "$WORK"

uldp_psql -d "$DB" -qAt >/dev/null <<'SQL'
SELECT setseed(0.3);
CREATE TABLE visits AS
SELECT u AS user_id, 4 + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS amount
FROM generate_series(1, 5000) u, generate_series(1, 50);
CREATE TABLE examples AS
SELECT user_id, x1, x2, (x1 - x2 + 0.5 * e > 0)::int AS label
FROM (SELECT u AS user_id,
             sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS x1,
             sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS x2,
             sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS e
      FROM generate_series(1, 10000) u, generate_series(1, 20)) s;
SQL

PGOPTIONS="-c uldp.test_seed=7" uldp_psql -d "$DB" -X -v ON_ERROR_STOP=1 -qAt -f "$WORK/blocks.sql" \
    >"$WORK/out" 2>&1
ok $? "every sql block of doc/local.md runs"
grep -v "^$" "$WORK/out" | tail -20 | sed "s/^/# /"

ok "$(q "SELECT CASE WHEN abs((uldp.ldp_result(2) ->> 'estimate')::float8 - avg(amount)) < 0.1 THEN 0 ELSE 1 END
        FROM visits")" "the quick start's mean round is within 0.1 of the mean amount"
ok "$(q "SELECT CASE WHEN count(*) = 1 AND bool_and(samples IS NULL AND report IS NOT NULL) THEN 0 ELSE 1 END
        FROM incoming")" "the ingestion trigger's table stores the report and no samples"
ok "$(q "SELECT CASE WHEN avg(((uldp.predict(m.model, ARRAY[x1, x2]) > 0.5)::int = label)::int) >= 0.8 THEN 0 ELSE 1 END
        FROM examples, (SELECT model FROM models ORDER BY step DESC LIMIT 1) m")" \
    "the ULDP-SGD example's model is right on at least 80% of the examples"
echo "1..$N"
exit "$FAILED"

#!/usr/bin/env bash
# test/attack/oracles.sh -- pay before reading: nothing that happens while a release reads rows may
# tell an analyst anything for free.
#
# Two states of the same protected tables that differ only in the rows of user 7 (a neighbouring
# pair): in state A user 7 has visits of 10, 20 and 30; in state B the visit of 30 is one of 45
# whose vector v is '{{1},{2}}' (two elements, so it satisfies CHECK (cardinality(v) = 2), but
# two-dimensional). "user 7 has a visit above 40" is false in A and true in B. The tables have the
# same number of rows and the same size on disk in both states (fillfactor 90: the update stays
# on its page; checked). Every attack below runs in state A, then in state B, as two analysts
# without SELECT on the tables:
#   nobudget  no privacy budget at all
#   rich      a large budget (1000, 0.5)
# The attacks (each predicate "user_id = 7 AND amount > 40" is the secret bit):
#   1. error oracle, vector dimension: user_dp_mean(CASE WHEN <bit> THEN ARRAY[1,2,3] ELSE
#      ARRAY[1,2] END, ...)                            (0.3: nobudget saw "all vectors must have
#      the same dimension" in B and "no privacy budget" in A)
#   2. error oracle, empty array in user_dp_sgd: CASE WHEN <bit> THEN '{}' ELSE v END, without and
#      with the option {"dimension": 2} (then the empty row is skipped: rich gets a model)
#   3. error oracle, collation: WHERE CASE WHEN <bit> THEN name < label ELSE true END, name and
#      label of conflicting implicit collations ("C", "POSIX"): PostgreSQL raises "could not
#      determine which collation to use" only when a row reaches the comparison
#   4. division by zero in the filter (regression guard: the gate's error-free arithmetic)
#   5. cancel oracle: statement_timeout (1 s) shorter than a release over big (3M rows, no
#      parallel workers, a filter slow on every row): rich is cancelled AND charged; nobudget gets the budget error at once;
#      and a release whose input is only the target's rows (WHERE <bit>) is charged whatever its
#      outcome (timing is not defended, so its outcome class is not compared)
#   6. memory oracle: user_dp_sgd over ARRAY[amount x 10000] WHERE <bit>, with
#      uldp.max_state_memory = 64kB (set by the superuser for the two roles): on 0.3 the failure
#      depended on the number of matching rows; now the bound comes from the table's size on disk.
#      Also with the default limit and 100 features (rich gets a model in both states).
#   7. the stored two-dimensional vector of state B: user_dp_mean(v) and user_dp_sgd(v) over the
#      whole table (it must be skipped, never an error)
#   8. rescans and parallel plans (rich, on an unprotected copy it may read, and on the protected
#      table): a correlated SubPlan and a LATERAL subquery run 3 times are charged 3 x 0.1, in 3
#      ledger rows; releases under force_parallel_mode, and a parallel partial aggregate over big,
#      are charged exactly once.
#
# Expected outcome, for every attack:
#   - nobudget: the complete psql output (stdout + stderr, VERBOSITY verbose, SQLSTATE included) is
#     byte-identical in A and B, and is the budget error (42501) or a public refusal;
#   - rich: the same outcome class in A and B (a released value in both, or the same error), and
#     every statement charged exactly what it should: its epsilon, in exactly one new ledger row,
#     if it released or was cancelled after the charge; nothing if it was refused up front.
# On uldp 0.3 (which charged in the final function, after reading) attacks 1, 2, 3, 5 and 6 fail:
# nobudget saw a data error in state B and the budget error in state A (1, 2, 3, 6: "all vectors
# must have the same dimension", "could not determine which collation to use", "uldp aggregate
# state would exceed uldp.max_state_memory"), and a cancel instead of the budget error (5); rich was
# cancelled without being charged (5). Attacks 4, 7 and 8 pass on 0.3 too (regression guards).
# shellcheck disable=SC2317 # functions called through ok_if / wait_for
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

NOBUDGET="${ATTACK_PREFIX}nobudget"
RICH="${ATTACK_PREFIX}rich"
ROLES=("$NOBUDGET" "$RICH")
BIT="user_id = 7 AND amount > 40"

attack_drop_roles || exit 1
attack_at_exit attack_drop_roles
sql -c "CREATE ROLE $NOBUDGET LOGIN" -c "CREATE ROLE $RICH LOGIN" || exit 1
sql -c "SELECT uldp.set_budget('$RICH', 1000, 0.5)" >/dev/null || exit 1

# visits: 300 users x 3 visits; big: 3M rows of 100000 users (user 7 has 30 of them, all of 30)
sql >/dev/null <<SQL || exit 1
CREATE TABLE public.visits (user_id int, amount float8, name text COLLATE "C", label text COLLATE "POSIX",
                            v float8[] CHECK (cardinality(v) = 2)) WITH (fillfactor = 90);
INSERT INTO public.visits
SELECT u, CASE WHEN u = 7 THEN 10 * r ELSE (u * 7 + r * 13) % 97 END, 'n' || u, 'l' || r,
       ARRAY[u % 5, r]::float8[]
FROM generate_series(1, 300) u, generate_series(1, 3) r;
SELECT uldp.protect_table('public.visits', 'user_id');
CREATE TABLE public.big (user_id int, amount float8) WITH (fillfactor = 90);
INSERT INTO public.big
SELECT i % 100000, CASE WHEN i % 100000 = 7 THEN 30 ELSE (i * 7) % 97 END FROM generate_series(1, 3000000) i;
SELECT uldp.protect_table('public.big', 'user_id');
CREATE TABLE public.visits_copy (LIKE public.visits);
GRANT SELECT ON public.visits_copy TO $RICH;
VACUUM ANALYZE public.visits, public.big;
SQL

sizes() { sql -c "SELECT pg_relation_size('public.visits') || ' ' || pg_relation_size('public.big') || ' ' || (SELECT count(*) FROM public.visits) || ' ' || (SELECT count(*) FROM public.big)"; }
# state A -> B: only user 7's rows change
to_state_b() {
    sql -c "UPDATE public.visits SET amount = 45, v = '{{1},{2}}' WHERE user_id = 7 AND amount = 30" \
        -c "UPDATE public.big SET amount = 45 WHERE user_id = 7" \
        -c "VACUUM ANALYZE public.visits, public.big" >/dev/null
}
refresh_copy() {
    sql -c "TRUNCATE public.visits_copy" -c "INSERT INTO public.visits_copy SELECT * FROM public.visits" \
        -c "ANALYZE public.visits_copy" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# The attacks: NAME, SQL (a psql script run as the analyst), the epsilon a release charges, and
# whether an error of the statement still charges it (cancel: the charge came first).
FEATURES100="$(printf 'amount, %.0s' $(seq 99))amount"
FEATURES10000="$(printf 'amount, %.0s' $(seq 9999))amount"
NAMES=()
declare -A Q EPS CHARGED_ON_ERROR
attack() { # attack NAME EPS CHARGED_ON_ERROR SQL
    NAMES+=("$1")
    EPS[$1]="$2"
    CHARGED_ON_ERROR[$1]="$3"
    Q[$1]="$4"
}
attack 1-dimension 0.5 no \
    "SELECT user_dp_mean(CASE WHEN $BIT THEN ARRAY[1,2,3]::float8[] ELSE ARRAY[1,2]::float8[] END, user_id, 0.5, 1e-7, 4.0) FROM visits;"
attack 2-sgd-empty 0.5 no \
    "SELECT user_dp_sgd(CASE WHEN $BIT THEN '{}'::float8[] ELSE v END, amount, user_id, 0.5, 1e-6) FROM visits;"
attack 2-sgd-empty-dimension 0.5 no \
    "SELECT user_dp_sgd(CASE WHEN $BIT THEN '{}'::float8[] ELSE v END, amount, user_id, 0.5, 1e-6, '{\"dimension\": 2}') FROM visits;"
attack 3-collation 0.5 no \
    "SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits WHERE CASE WHEN $BIT THEN name < label ELSE true END;"
attack 4-division 0.5 no \
    "SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM visits WHERE 1 / (CASE WHEN $BIT THEN 0 ELSE 1 END) = 1;"
# The timeout (1 s) is far above the time a charge takes (a background worker's commit, ~15 ms),
# so that the outcome is never a cancel of the charge itself (that would not depend on the rows
# either, but would make the test flaky). The first release is slow on every row (numeric
# arithmetic of 100-digit numbers, which the gate allows; several seconds over 3M rows without
# parallel workers), so that it is cancelled in both states however fast the machine is.
CANCEL="SET max_parallel_workers_per_gather = 0;
SET statement_timeout = '1s';"
attack 5-cancel 0.5 yes \
    "$CANCEL
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM big WHERE amount::numeric * 1e100 / 3 / 7 > -1;"
attack 5-cancel-target 0.5 yes \
    "$CANCEL
SELECT user_dp_mean(amount, user_id, 0.5, 0, 100) FROM big WHERE $BIT;"
attack 6-memory-small-limit 0.5 no \
    "SELECT user_dp_sgd(ARRAY[$FEATURES10000], amount, user_id, 0.5, 1e-6) FROM visits WHERE $BIT;"
attack 6-memory-default-limit 0.5 no \
    "SELECT user_dp_sgd(ARRAY[$FEATURES100], amount, user_id, 0.5, 1e-6) FROM visits WHERE $BIT;"
attack 7-stored-2d-mean 0.5 no \
    "SELECT user_dp_mean(v, user_id, 0.5, 1e-7, 4.0) FROM visits;"
attack 7-stored-2d-sgd 0.5 no \
    "SELECT user_dp_sgd(v, amount, user_id, 0.5, 1e-6) FROM visits;"

# the superuser sets a small memory limit for the two analysts around 6-memory-small-limit
# (uldp.max_state_memory is PGC_SUSET: they cannot set it themselves)
before_attack() {
    local r
    if [ "$1" = 6-memory-small-limit ]; then
        for r in "${ROLES[@]}"; do sql -c "ALTER ROLE $r SET uldp.max_state_memory = '64kB'" >/dev/null; done
    fi
}
after_attack() {
    local r
    if [ "$1" = 6-memory-small-limit ]; then
        for r in "${ROLES[@]}"; do sql -c "ALTER ROLE $r RESET uldp.max_state_memory" >/dev/null; done
    fi
}

# run_as ROLE: the psql script on stdin as ROLE (errors do not stop it); prints stdout + stderr
run_as() { sql_as "$1" -v ON_ERROR_STOP=0 -v VERBOSITY=verbose 2>&1; }

# outcome_class OUTPUT: "ERROR <sqlstate>: <message>" of the first error, else "value" if a
# released value (a number, a vector, a model) is on a line of its own, else "nothing"
outcome_class() {
    local err
    err="$(grep -m1 -E '^(psql:[^ ]* )?ERROR:  ' <<<"$1" | sed -E 's/^(psql:[^ ]* )?ERROR:  /ERROR /')"
    if [ -n "$err" ]; then
        printf '%s\n' "$err"
    elif grep -Eq "$RELEASED_RE|^\\{.*\\}\$" <<<"$1"; then
        echo value
    else
        echo nothing
    fi
}

charge_arrived() { [ "$(ledger_rows "$RICH")" -ge "$1" ]; }

OUT_DIR="$ATTACK_DIR/out"
mkdir -p "$OUT_DIR"

# run_state STATE: every attack as both roles; rich's charges are checked at once
run_state() {
    local state="$1" name r out cls spent0 rows0 spent rows eps
    for name in "${NAMES[@]}"; do
        before_attack "$name"
        out="$(run_as "$NOBUDGET" <<<"${Q[$name]}")"
        printf '%s\n' "$out" >"$OUT_DIR/$state.nobudget.$name"
        spent0="$(epsilon_spent "$RICH")"
        rows0="$(ledger_rows "$RICH")"
        out="$(run_as "$RICH" <<<"${Q[$name]}")"
        printf '%s\n' "$out" >"$OUT_DIR/$state.rich.$name"
        cls="$(outcome_class "$out")"
        printf '%s\n' "$cls" >"$OUT_DIR/$state.richclass.$name"
        after_attack "$name"
        if [ "$cls" = value ] || [ "${CHARGED_ON_ERROR[$name]}" = yes ]; then
            eps="${EPS[$name]}"
            # a cancel may come while the worker commits the charge: it commits anyway
            wait_for 10 "the charge of $name" charge_arrived "$((rows0 + 1))"
        else
            eps=0
        fi
        spent="$(epsilon_spent "$RICH")"
        rows="$(ledger_rows "$RICH")"
        ok_if "$name, state $state: rich ($cls) charged exactly $eps ($spent0 -> $spent)" \
            grew_by "$spent0" "$spent" "$eps" || diag "rich's output:" "$(head -c 600 <<<"$out")"
        is "$rows" "$((rows0 + $([ "$eps" = 0 ] && echo 0 || echo 1)))" \
            "$name, state $state: rich's ledger rows grew by $([ "$eps" = 0 ] && echo 0 || echo 1)"
    done
}

# ---------------------------------------------------------------------------------------------
# 8. rescans and parallel plans (rich; visits_copy is an unprotected copy rich may read)
SUBPLAN="SELECT g, (SELECT user_dp_mean(amount, user_id, 0.1, 0, 100) FROM visits_copy WHERE user_id > g - g) FROM generate_series(1, 3) g"
LATERAL="SELECT g, m FROM generate_series(1, 3) g, LATERAL (SELECT user_dp_mean(amount, user_id, 0.1, 0, 100) AS m FROM visits_copy WHERE user_id > g - g) s"
PARALLEL_COPY="SELECT user_dp_mean(amount, user_id, 0.1, 0, 100) FROM visits_copy"
PARALLEL_PROTECTED="SELECT user_dp_mean(amount, user_id, 0.1, 0, 100) FROM visits"
PARTIAL_BIG="SELECT user_dp_mean(amount, user_id, 0.1, 0, 100) FROM big"
FORCE="SET force_parallel_mode = on;"

explain() { sql -c "${1:-SELECT}" -c "EXPLAIN (COSTS OFF) $2" | grep -v "^\$"; }
plan_has() { # plan_has DESC PATTERN SETTINGS QUERY
    local plan
    plan="$(explain "$3" "$4" 2>&1)"
    ok_if "$1" grep -Eq "$2" <<<"$plan" || diag "$plan"
}

# rescan_case LABEL SETTINGS QUERY EPS ROWS RESULT-LINES [WORKER]
# WORKER=1: the release may run in a parallel worker, which charges its own run; the leader's
# charge for its copy is then unused, so there may be one more charge of EPS/ROWS (never fewer).
rescan_case() {
    local label="$1" settings="$2" query="$3" eps="$4" nrows="$5" nlines="$6" worker="${7:-0}" spent0 rows0 out rows
    spent0="$(epsilon_spent "$RICH")"
    rows0="$(ledger_rows "$RICH")"
    out="$(run_as "$RICH" <<<"$settings
$query;")"
    is "$(grep -cE "^([0-9]+\|)?$NUMBER_RE\$" <<<"$out")" "$nlines" "$label: $nlines released value(s)" \
        || diag "$out"
    rows="$(ledger_rows "$RICH")"
    if [ "$worker" = 1 ] && [ "$rows" = "$((rows0 + nrows + 1))" ]; then
        diag "$label: the release ran in a worker, which charged its own run"
        eps="$(sql -c "SELECT $eps + $eps / $nrows")"
        nrows=$((nrows + 1))
    fi
    ok_if "$label: epsilon_spent grew by exactly $eps" grew_by "$spent0" "$(epsilon_spent "$RICH")" "$eps"
    is "$rows" "$((rows0 + nrows))" "$label: $nrows new ledger row(s)"
}

# run_rescans STATE: the rescan and parallel cases on the tables as they are (copy refreshed)
run_rescans() {
    refresh_copy
    rescan_case "8 state $1: correlated subquery run 3 times" "" "$SUBPLAN" 0.3 3 3
    rescan_case "8 state $1: LATERAL subquery run 3 times" "" "$LATERAL" 0.3 3 3
    rescan_case "8 state $1: force_parallel_mode, unprotected copy" "$FORCE" "$PARALLEL_COPY" 0.1 1 1 1
    rescan_case "8 state $1: force_parallel_mode, protected table" "$FORCE" "$PARALLEL_PROTECTED" 0.1 1 1 1
    rescan_case "8 state $1: parallel partial aggregate over big" "" "$PARTIAL_BIG" 0.1 1 1
}

# ---------------------------------------------------------------------------------------------
SIZES_A="$(sizes)"
diag "state A: visits, big: size on disk and rows: $SIZES_A"
run_state A
run_rescans A
to_state_b || exit 1
SIZES_B="$(sizes)"
is "$SIZES_B" "$SIZES_A" "states A and B have the same sizes on disk and the same numbers of rows"
is "$(sql -c "SELECT string_agg(amount || ' ' || v::text, ', ' ORDER BY amount) FROM visits WHERE user_id = 7")" \
    "10 {2,1}, 20 {2,2}, 45 {{1},{2}}" "state B: only user 7's visit of 30 changed (45, a 2-D vector)"
run_state B
run_rescans B

# ---------------------------------------------------------------------------------------------
# A versus B
BUDGET_ERROR="ERROR:  42501: role \"$NOBUDGET\" has no privacy budget"
for name in "${NAMES[@]}"; do
    a="$(cat "$OUT_DIR/A.nobudget.$name")"
    b="$(cat "$OUT_DIR/B.nobudget.$name")"
    if [ "$a" = "$b" ]; then
        ok 0 "$name: nobudget's outcome is byte-identical in A and B"
    else
        ok 1 "$name: nobudget's outcome is byte-identical in A and B" || true
        diag "state A:" "$a" "state B:" "$b"
    fi
    ok_if "$name: nobudget gets the budget error or a public refusal, never a value" \
        grep -Eq "^(psql:[^ ]* )?ERROR:  (42501|22023|54000): " <<<"$a" || diag "$a"
    # timing is not defended: whether a release of the target's rows alone beats the timeout
    # may vary with the machine's load; what matters is that it was charged (above)
    [ "$name" = 5-cancel-target ] && continue
    is "$(cat "$OUT_DIR/B.richclass.$name")" "$(cat "$OUT_DIR/A.richclass.$name")" \
        "$name: rich's outcome class is the same in A and B" \
        || diag "state A:" "$(head -c 600 "$OUT_DIR/A.rich.$name")" "state B:" "$(head -c 600 "$OUT_DIR/B.rich.$name")"
done

# What each attack must be, beyond A = B (so that "the same error in both" cannot pass for a
# refusal of everything).
expect_class() { # expect_class NAME STATE PATTERN
    ok_if "$1, state $2: rich's outcome is $3" grep -Eq "^$3" "$OUT_DIR/$2.richclass.$1" \
        || diag "$(cat "$OUT_DIR/$2.richclass.$1")"
}
for s in A B; do
    expect_class 1-dimension $s 'ERROR 22023: the dimension of the vectors of user_dp_mean must be public'
    expect_class 2-sgd-empty $s 'ERROR 22023: the dimension of the vectors of user_dp_sgd must be public'
    expect_class 2-sgd-empty-dimension $s value
    expect_class 3-collation $s 'ERROR 42501: table "visits" is protected by uldp'
    grep -q 'DETAIL:  The collation of a comparison of text values is indeterminate' "$OUT_DIR/$s.rich.3-collation"
    ok $? "3-collation, state $s: refused by the gate for its indeterminate collation"
    expect_class 4-division $s value
    expect_class 5-cancel $s 'ERROR 57014: canceling statement due to statement timeout'
    expect_class 6-memory-small-limit $s 'ERROR 54000: user_dp_sgd could need [0-9]+ MB of memory on "visits"'
    expect_class 6-memory-default-limit $s value
    expect_class 7-stored-2d-mean $s value
    expect_class 7-stored-2d-sgd $s value
    diag "5-cancel-target, state $s: rich's outcome: $(cat "$OUT_DIR/$s.richclass.5-cancel-target")"
    ok_if "5-cancel, state $s: nobudget gets the budget error, not a cancel" \
        grep -qF "$BUDGET_ERROR" "$OUT_DIR/$s.nobudget.5-cancel"
done

# ---------------------------------------------------------------------------------------------
# 8. the plans: a SubPlan, a rescanned nested loop, Gather nodes
refresh_copy
plan_has "8 subplan: the release is a SubPlan run per outer row (not an InitPlan)" \
    'SubPlan 1' "" "$SUBPLAN"
plan_has "8 lateral: the release is the inner side of a nested loop (rescanned)" \
    'Nested Loop' "" "$LATERAL"
plan_has "8 force_parallel_mode: a Gather over the release (copy)" 'Gather' "$FORCE" "$PARALLEL_COPY"
plan_has "8 force_parallel_mode: a Gather over the release (protected)" 'Gather' "$FORCE" "$PARALLEL_PROTECTED"
plan_has "8 big: a parallel partial aggregate" 'Partial Aggregate' "" "$PARTIAL_BIG"

attack_done

#!/usr/bin/env bash
# test/attack/local_protocol.sh -- the local protocol of uldp 0.7 end to end (doc/local.md): the two
# rounds of Girgis et al.'s Algorithm 1 (range, then mean), with simulated clients that use
#   A. the command-line tool uldp-local (one process per user, fed the round's JSON and the
#      user's samples on stdin, as any client stack would), and
#   B. uldp.ldp_report in SQL (the same library code, for clients that are databases),
# then bad reports, which uldp.ldp_submit must refuse without changing the result.
#
# Data: n users, each with 50 samples N(3.5, 1) (a user's mean has SD 1/sqrt(50) = 0.14); bound
# 50, tau 0.5: bins of width 1, and the users' means all lie in the bin [3, 4) except about
# 2 P(Z > 3.5) = 5e-4 of them. Range round at epsilon 1: each report adds +-c, c = (e+1)/(e-1)
# = 2.164, to every bin's estimate, so by Hoeffding and a union bound over the K = 128 bins every
# estimate is within t = c sqrt(2 ln(2 K / 1e-7) / n) of the true share, with probability
# 1 - 1e-7: t = 0.20 for n = 3000 (B) and 0.25 for n = 2000 (A). The bin [3, 4) has share
# >= 0.99, every other <= 0.01, so the published range is [3.5 - 1.5, 3.5 + 1.5] = [2, 5].
# Mean round at epsilon 1 on [2, 5]: the error of the estimate is the average of n discrete
# Laplace draws (plus the random rounding, at most one level of 3/2^20 each); test/lib's
# local_tolerance.py gives its exact Chernoff bound for a false failure of 1e-7. Both paths
# together fail by chance with probability below 1e-6.
set -uo pipefail
# shellcheck source=test/attack/lib/attack.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/attack.sh"

CLI="$ULDP_PGBIN/uldp-local"
TOL="$ULDP_REPO/test/lib/local_tolerance.py"

ok_if "the client tool is installed with the extension" test -x "$CLI"

sql <<'SQL'
CREATE TABLE samples (u int, x float8);
-- deterministic data: Box-Muller on a hash, so both runs of the file see the same samples
INSERT INTO samples
SELECT u, 3.5 + sqrt(-2 * ln(h1)) * cos(2 * pi() * h2)
FROM generate_series(1, 3000) u, generate_series(1, 50) s,
     LATERAL (SELECT (abs(hashint8(u * 1000 + s)::float8) + 1) / 2147483650.0 AS h1,
                     (abs(hashint8(u * 1000 + s + 500))::float8) / 2147483650.0 AS h2) h;
SQL

# the non-private value the mean round estimates: the mean of the users' means (all in [2, 5])
truth() { sql -c "SELECT avg(m) FROM (SELECT avg(x) m FROM samples WHERE u <= $1 GROUP BY u) s"; }
in_range() { sql -c "SELECT bool_and(m BETWEEN 2 AND 5) FROM (SELECT avg(x) m FROM samples GROUP BY u) s"; }
is "$(in_range)" "t" "every user's mean lies in [2, 5]"

# within PATH ESTIMATE TRUTH N: |estimate - truth| within the exact Chernoff bound
within() {
    local tol
    tol="$(/usr/bin/python3 "$TOL" --epsilon 1 --lower 2 --upper 5 --users "$4" --failure 1e-7)"
    diag "$1: estimate $2, non-private $3, tolerance $tol"
    /usr/bin/python3 -c "import sys; sys.exit(0 if abs($2 - ($3)) <= $tol else 1)"
}

# ---------------------------------------------------------------- A. clients run uldp-local
range_a="$(sql -c "SELECT uldp.ldp_round('range', '{\"bound\": 50, \"tau\": 0.5, \"epsilon\": 1}')")"
sql -c "SELECT uldp.ldp_round_info($range_a)" >"$ATTACK_DIR/range.json"
mkdir -p "$ATTACK_DIR/users"
sql -F ' ' -c "SELECT u, x FROM samples WHERE u <= 2000 ORDER BY u" |
    awk -v dir="$ATTACK_DIR/users" '{ print $2 > (dir "/" $1) }'

# client ROUND-FILE REPORTS-FILE: every user's report, as "user<TAB>report" lines
clients() {
    local f
    : >"$2"
    for f in "$ATTACK_DIR"/users/*; do
        printf '%s\t%s\n' "$(basename "$f")" "$("$CLI" report "$1" <"$f")" >>"$2" || return 1
    done
}
submit_file() { # submit_file ROUND FILE: ldp_submit every line of FILE
    sql -v round="$1" <<SQL
CREATE TEMP TABLE incoming (user_key text, report jsonb);
\\copy incoming FROM '$2'
SELECT count(uldp.ldp_submit(:round, user_key, report)) FROM incoming;
SQL
}
ok_if "2000 clients make range reports with uldp-local" clients "$ATTACK_DIR/range.json" "$ATTACK_DIR/range.reports"
is "$(submit_file "$range_a" "$ATTACK_DIR/range.reports" | tail -1)" "2000" "the server stores 2000 range reports"
is "$(sql -c "SELECT uldp.ldp_result($range_a) ->> 'lower', uldp.ldp_result($range_a) ->> 'upper'" | tr '|' ' ')" \
    "2 5" "the range round publishes [2, 5] (CLI clients)"
mean_a="$(sql -c "SELECT uldp.ldp_round('mean', '{\"range_round\": $range_a, \"epsilon\": 1}')")"
sql -c "SELECT uldp.ldp_round_info($mean_a)" >"$ATTACK_DIR/mean.json"
is "$(sql -c "SELECT (uldp.ldp_round_info($mean_a) ->> 'lower')::float8, (uldp.ldp_round_info($mean_a) ->> 'upper')::float8" | tr '|' ' ')" \
    "2 5" "the mean round takes the published range"
ok_if "2000 clients make mean reports with uldp-local" clients "$ATTACK_DIR/mean.json" "$ATTACK_DIR/mean.reports"
submit_file "$mean_a" "$ATTACK_DIR/mean.reports" >/dev/null
estimate_a="$(sql -c "SELECT uldp.ldp_result($mean_a) ->> 'estimate'")"
is "$(sql -c "SELECT uldp.ldp_result($mean_a) ->> 'reports'")" "2000" "the mean result counts 2000 reports"
ok_if "the mean of 2000 CLI reports is within the stated error" within CLI "$estimate_a" "$(truth 2000)" 2000

# ---------------------------------------------------------------- B. clients use uldp.ldp_report
range_b="$(sql -c "SELECT uldp.ldp_round('range', '{\"bound\": 50, \"tau\": 0.5, \"epsilon\": 1}')")"
# sql_clients ROUND: every user makes a report with uldp.ldp_report and submits it
sql_clients() {
    sql -c "SELECT count(uldp.ldp_submit($1, u::text, report))
            FROM (SELECT u, uldp.ldp_report($1, array_agg(x)) AS report FROM samples GROUP BY u) s"
}
is "$(sql_clients "$range_b")" "3000" "3000 users report through uldp.ldp_report"
is "$(sql -c "SELECT uldp.ldp_result($range_b) ->> 'lower', uldp.ldp_result($range_b) ->> 'upper'" | tr '|' ' ')" \
    "2 5" "the range round publishes [2, 5] (SQL clients)"
mean_b="$(sql -c "SELECT uldp.ldp_round('mean', '{\"range_round\": $range_b, \"epsilon\": 1}')")"
sql_clients "$mean_b" >/dev/null

# ---------------------------------------------------------------- C. bad reports
refused() { # refused DESC SQL: the statement fails, and the result is unchanged afterwards
    local out
    if out="$(sql -c "$2" 2>&1)"; then
        ok 1 "refused: $1"
        diag "it was accepted: $out"
    else
        ok 0 "refused: $1"
        diag "$(printf '%s' "$out" | head -1)"
    fi
}
good="$(sql -c "SELECT uldp.ldp_report($mean_b, ARRAY[3.5])")"
refused "an unknown round" "SELECT uldp.ldp_submit(987654, 'x', '$good')"
refused "a second report from one user" "SELECT uldp.ldp_submit($mean_b, '17', '$good')"
refused "a report of another round" "SELECT uldp.ldp_submit($mean_b, 'new1', '$(sql -c "SELECT uldp.ldp_report($range_b, ARRAY[3.5])")')"
refused "a level that is not an integer" "SELECT uldp.ldp_submit($mean_b, 'new2', '{\"v\": 1, \"round\": $mean_b, \"level\": 1.5}')"
refused "a level given as a string" "SELECT uldp.ldp_submit($mean_b, 'new3', '{\"v\": 1, \"round\": $mean_b, \"level\": \"7\"}')"
refused "an unknown format version" "SELECT uldp.ldp_submit($mean_b, 'new4', '{\"v\": 2, \"round\": $mean_b, \"level\": 7}')"
refused "an extra key" "SELECT uldp.ldp_submit($mean_b, 'new5', '{\"v\": 1, \"round\": $mean_b, \"level\": 7, \"x\": 1}')"
refused "a closed round" "SELECT uldp.ldp_submit($range_b, 'new6', '{\"v\": 1, \"round\": $range_b, \"index\": 3, \"sign\": 1}')"
range_c="$(sql -c "SELECT uldp.ldp_round('range', '{\"bound\": 50, \"tau\": 0.5, \"epsilon\": 1}')")"
refused "an index outside the Hadamard rows" "SELECT uldp.ldp_submit($range_c, 'u', '{\"v\": 1, \"round\": $range_c, \"index\": 128, \"sign\": 1}')"
refused "a negative index" "SELECT uldp.ldp_submit($range_c, 'u', '{\"v\": 1, \"round\": $range_c, \"index\": -1, \"sign\": 1}')"
refused "a sign other than +-1" "SELECT uldp.ldp_submit($range_c, 'u', '{\"v\": 1, \"round\": $range_c, \"index\": 3, \"sign\": 0}')"
vector="$(sql -c "SELECT uldp.ldp_round('vector_range', '{\"dimension\": 3, \"bound\": 10, \"tau\": 0.5, \"epsilon\": 1}')")"
refused "a coordinate outside the dimension" "SELECT uldp.ldp_submit($vector, 'u', '{\"v\": 1, \"round\": $vector, \"coordinate\": 4, \"index\": 3, \"sign\": 1}')"
refused "samples of the wrong dimension" "SELECT uldp.ldp_report($vector, ARRAY[[1, 2], [3, 4]]::float8[])"
is "$(sql -c "SELECT count(*) FROM uldp.ldp_reports WHERE round_id IN ($mean_b, $range_c, $vector)")" "3000" \
    "no refused report was stored"

estimate_b="$(sql -c "SELECT uldp.ldp_result($mean_b) ->> 'estimate'")"
is "$(sql -c "SELECT uldp.ldp_result($mean_b) ->> 'reports'")" "3000" "the mean result counts 3000 reports"
ok_if "the mean of 3000 SQL reports is within the stated error" within SQL "$estimate_b" "$(truth 3000)" 3000
is "$(sql -c "SELECT abs((r->>'ci_upper')::float8 + (r->>'ci_lower')::float8 - 2 * (r->>'estimate')::float8) < 1e-9
                     AND (r->>'ci_upper')::float8 > (r->>'estimate')::float8
              FROM uldp.ldp_result($mean_b) r")" "t" "the 95% interval is the estimate +- 1.96 report SDs / sqrt(n)"
attack_done

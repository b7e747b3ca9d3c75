#!/usr/bin/env bash
# test/local/cli.sh -- the client tool uldp-local on its own, without PostgreSQL: the reports' format
# for every kind of round, the refusal of bad rounds, samples and arguments, the ledger, the shuffle
# bound, and two statistical checks of the reports' distribution. It builds nothing: run `make` first
# (the tool is src/local/uldp-local in the tree; ULDP_LOCAL_CLI overrides the path).
#
# Statistics (real randomness, so each can fail by chance: three checks at a = 3e-7, together below
# 1e-6):
#   - range: 20000 reports of one fixed summary at epsilon 1. Each report's sign equals H(j, nu)
#     independently with probability p = e/(1+e) (epsilon = 1 is exact in the sampler), so by
#     Hoeffding the fraction of agreeing signs is within sqrt(ln(2/a)/(2n)) of p.
#   - mean: 5000 Laplace reports at epsilon 1 over [0, 10] of the samples 3, 4, 5 (summary 4,
#     u = 0.4 G): the average report value is within test/lib/local_tolerance.py's exact Chernoff
#     bound of 4.
#   - noise scale: in the same reports, the fraction of levels at least k = G ln 2 from 0.4 G, a
#     Bernoulli mean; discrete Laplace noise has P(|Z| >= k) = 2 q^k / (1 + q), q = e^(-1/G), and the
#     random rounding moves a level by less than 1, so the fraction is within Hoeffding's
#     sqrt(ln(2/a)/(2n)) of [P(|Z| >= k + 1), P(|Z| >= k - 1)]. Too little noise fails here.
#
# Usage: bash test/local/cli.sh          prints TAP ("ok N - ...") and exits 0 iff all passed
set -uo pipefail
export LC_ALL=C

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLI="${ULDP_LOCAL_CLI:-$REPO/src/local/uldp-local}"
PYTHON=/usr/bin/python3
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

N=0
FAILED=0
ok() { # ok STATUS DESC
    N=$((N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $N - $2"; else echo "not ok $N - $2"; FAILED=$((FAILED + 1)); fi
}
ok_if() { local desc="$1"; shift; "$@"; ok $? "$desc"; }
diag() { printf '# %s\n' "$@"; }

if [ ! -x "$CLI" ]; then
    echo "Bail out! $CLI is not built (run make)"
    exit 2
fi

RANGE='{"v": 1, "id": 7, "kind": "range", "epsilon": 1, "bound": 100, "tau": 2}'
MEAN='{"v": 1, "id": 8, "kind": "mean", "epsilon": 1, "lower": 0, "upper": 10}'
VRANGE='{"v":1,"id":9,"kind":"vector_range","epsilon":1,"dimension":3,"bound":10,"tau":0.5,"rotation_seed":"12345678901234567890"}'
VMEAN='{"v":1,"id":10,"kind":"vector_mean","epsilon":1,"dimension":3,"bound":10,"lower":[-9,-9,-9,-9],"upper":[9,9,9,9],"rotation_seed":"7","delta":1e-6,"noise":"gaussian"}'
GRADIENT='{"v":1,"id":11,"kind":"gradient","epsilon":1,"clip":1,"model":{"loss":"logistic","weights":[0.5,-0.5,0.1],"feature_radius":1},"rotation_seed":"99","learning_rate":0.5,"range_round":3,"radius":2,"created":"now"}'
printf '%s\n' "$RANGE" >"$TMP/range.json"
printf '%s\n' "$MEAN" >"$TMP/mean.json"

# report ROUND-TEXT: the report of stdin's samples (stderr kept in $TMP/err)
report() { "$CLI" report --round-json "$1" 2>"$TMP/err"; }
# matches TEXT ERE
matches() { [[ "$1" =~ $2 ]]; }
# fails_with STATUS CMD...: CMD exits with STATUS, prints nothing on stdout and a message on stderr
fails_with() {
    local want="$1" out status
    shift
    out="$("$@" 2>"$TMP/err")"
    status=$?
    [ "$status" -eq "$want" ] && [ -z "$out" ] && grep -q '^uldp-local: error: ' "$TMP/err" && return 0
    diag "status $status (wanted $want), stdout '$out', stderr: $(cat "$TMP/err")"
    return 1
}

# ------------------------------------------------------------------ usage
version="$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$REPO/uldp.control")"
ok_if "--version prints the extension's version and the format" \
    test "$("$CLI" --version)" = "uldp-local $version (format 1)"
ok_if "--help prints the usage" matches "$("$CLI" --help)" "uldp-local report"

# ------------------------------------------------------------------ formats
INT='-?(0|[1-9][0-9]*)'
r="$(printf '3\n' | "$CLI" report "$TMP/range.json")"
ok_if "range report: v, round, index in [0, 64), sign" \
    matches "$r" '^\{"v":1,"round":7,"index":([0-9]|[1-5][0-9]|6[0-3]),"sign":(1|-1)\}$'
r="$(printf '3\n4\n5\n' | report "$MEAN")"
ok_if "mean report: v, round, level" matches "$r" "^\{\"v\":1,\"round\":8,\"level\":$INT\}$"
r="$(printf '1 2 3\n2,3,4\n\n 3\t4 , 5 \n' | report "$VRANGE")"
ok_if "vector_range report: coordinate in [0, 4), index in [0, 32), sign (mixed separators, blank line)" \
    matches "$r" '^\{"v":1,"round":9,"coordinate":[0-3],"index":([0-9]|[12][0-9]|3[01]),"sign":(1|-1)\}$'
r="$(printf '1 2 3\nnan 1 1\ninf -inf 1e308\n' | report "$VMEAN")"
ok_if "vector_mean report (Gaussian noise; nan and inf samples)" \
    matches "$r" "^\{\"v\":1,\"round\":10,\"coordinate\":[0-3],\"level\":$INT\}$"
r="$(printf '0.5 0.5 1\n-1 2 0\n' | report "$GRADIENT")"
ok_if "gradient report, the server's own keys ignored" \
    matches "$r" "^\{\"v\":1,\"round\":11,\"coordinate\":[0-3],\"level\":$INT\}$"
r="$(report "$MEAN" </dev/null)"
ok_if "no samples at all still give a report" matches "$r" "^\{\"v\":1,\"round\":8,\"level\":$INT\}$"
r="$(printf 'nan\n' | report "$RANGE")"
ok_if "only NaN samples give a report" matches "$r" '^\{"v":1,"round":7,"index":[0-9]+,"sign":(1|-1)\}$'

# ------------------------------------------------------------------ refusals (exit 2)
ok_if "refuses a sample that is not a number" fails_with 2 report "$RANGE" <<<"3 abc"
ok_if "refuses 3x"                             fails_with 2 report "$RANGE" <<<"3x"
ok_if "refuses a row of the wrong width"      fails_with 2 report "$VRANGE" <<<"1 2"
ok_if "refuses a scalar row with two numbers" fails_with 2 report "$RANGE" <<<"1 2"
ok_if "refuses the round on standard input"   fails_with 2 "$CLI" report - <<<"1"
ok_if "refuses a missing round file"          fails_with 2 "$CLI" report "$TMP/none.json" <<<"1"
ok_if "refuses two rounds"                    fails_with 2 "$CLI" report "$TMP/range.json" --round-json "$RANGE" <<<"1"
ok_if "refuses no round"                      fails_with 2 "$CLI" report <<<"1"
ok_if "refuses malformed JSON"                fails_with 2 report '{"v": 1, "id": 7,' <<<"1"
ok_if "refuses an unknown key"                fails_with 2 report '{"v":1,"id":7,"kind":"range","epsilon":1,"bound":100,"tau":2,"taux":1}' <<<"1"
ok_if "refuses a duplicate key"               fails_with 2 report '{"v":1,"id":7,"kind":"range","epsilon":1,"epsilon":9,"bound":100,"tau":2}' <<<"1"
ok_if "refuses another format version"        fails_with 2 report '{"v":2,"id":7,"kind":"range","epsilon":1,"bound":100,"tau":2}' <<<"1"
ok_if "refuses epsilon 0"                     fails_with 2 report '{"v":1,"id":7,"kind":"range","epsilon":0,"bound":100,"tau":2}' <<<"1"
ok_if "refuses lower >= upper"                fails_with 2 report '{"v":1,"id":8,"kind":"mean","epsilon":1,"lower":3,"upper":3}' <<<"1"
ok_if "refuses Gaussian noise without delta"  fails_with 2 report '{"v":1,"id":8,"kind":"mean","epsilon":1,"lower":0,"upper":1,"noise":"gaussian"}' <<<"1"
ok_if "refuses too many bins"                 fails_with 2 report '{"v":1,"id":7,"kind":"range","epsilon":1,"bound":1e9,"tau":1}' <<<"1"
ok_if "refuses intervals of the wrong length" fails_with 2 report '{"v":1,"id":10,"kind":"vector_mean","epsilon":1,"dimension":3,"bound":1,"lower":[0,0,0],"upper":[1,1,1],"rotation_seed":"7"}' <<<"1 1 1"
ok_if "refuses a non-integer id"              fails_with 2 report '{"v":1,"id":7.5,"kind":"range","epsilon":1,"bound":100,"tau":2}' <<<"1"
ok_if "refuses an unknown command"            fails_with 2 "$CLI" frobnicate
msg="$(printf '1 2\n' | report "$VRANGE" 2>&1; cat "$TMP/err")"
ok_if "a refusal says what is wrong and gives a hint" \
    matches "$msg" "error: line 1 of the samples has 2 numbers, the round needs 3.*hint: "

# ------------------------------------------------------------------ ledger (exit 3)
L="$TMP/ledger"
spend() { "$CLI" report --ledger "$L" --budget 1 --round-json "$1" <<<"3" 2>"$TMP/err"; }
round_eps() { printf '{"v":1,"id":%s,"kind":"range","epsilon":%s,"bound":100,"tau":2}' "$1" "$2"; }
r="$(spend "$(round_eps 21 0.5)")"
ok_if "a round within the budget is answered" matches "$r" '^\{"v":1,"round":21,'
ok_if "and recorded in the ledger" test "$(cat "$L")" = "21 0.5"
ok_if "the same round again is refused" fails_with 3 spend "$(round_eps 21 0.5)"
ok_if "a round beyond the budget is refused" fails_with 3 spend "$(round_eps 22 0.6)"
ok_if "refused rounds are not recorded" test "$(cat "$L")" = "21 0.5"
r="$(spend "$(round_eps 23 0.5)")"
ok_if "a round that spends exactly the rest is answered" matches "$r" '^\{"v":1,"round":23,'
ok_if "the ledger has both rounds" test "$(cat "$L")" = "$(printf '21 0.5\n23 0.5')"
ok_if "nothing is left" fails_with 3 spend "$(round_eps 24 1e-6)"
printf '25 zero\n' >>"$L"
ok_if "a malformed ledger refuses every round" fails_with 3 spend "$(round_eps 26 1e-6)"
ok_if "--ledger needs --budget" fails_with 2 "$CLI" report --ledger "$L" --round-json "$RANGE" <<<"1"
ok_if "a bad sample spends nothing" fails_with 2 "$CLI" report --ledger "$TMP/l2" --budget 1 --round-json "$RANGE" <<<"x"
ok_if "(no ledger was written)" test ! -s "$TMP/l2"

# ------------------------------------------------------------------ shuffle-epsilon
got="$("$CLI" shuffle-epsilon 1 100000 1e-6)"
want="$($PYTHON -c 'import math
e0, n, d = 1.0, 100000.0, 1e-6
e = math.exp(e0)
print(math.log1p((e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / d)) / math.sqrt(n) + 8 * e / n)))')"
ok_if "shuffle-epsilon 1 100000 1e-6 = Theorem 3.1's bound ($got)" \
    $PYTHON -c "import sys; sys.exit(0 if abs($got - $want) <= 1e-12 * $want else 1)"
ok_if "no amplification when epsilon0 > ln(n / (16 ln(2/delta)))" test "$("$CLI" shuffle-epsilon 5 100 1e-6)" = "5"
ok_if "shuffle-epsilon refuses delta 0" fails_with 2 "$CLI" shuffle-epsilon 1 100 0

# ------------------------------------------------------------------ statistics
# many REPORTS ROUND-FILE SAMPLES: that many reports of the samples, one line each, in parallel
many() {
    printf '%s\n' "$3" >"$TMP/samples"
    seq "$1" | xargs -P "$(nproc)" -n 250 bash -c \
        'cli=$0 round=$1 samples=$2; shift 2; for i; do "$cli" report "$round" <"$samples" || exit 255; done' \
        "$CLI" "$2" "$TMP/samples" 2>"$TMP/err"
}
# the reports are read by python; each check prints its figures and 1 iff within the bound
many 20000 "$TMP/range.json" 3 >"$TMP/range.reports"
check="$($PYTHON - "$TMP/range.reports" <<'PY'
import json, math, sys
n, agree = 0, 0
nu = int((3 + 100) // 4)        # the bin of 3 in [-100, 100], bins 4 wide
for line in open(sys.argv[1]):
    r = json.loads(line)
    n += 1
    agree += r["sign"] == (-1) ** bin(r["index"] & nu).count("1")
p = math.e / (1 + math.e)
t = math.sqrt(math.log(2 / 3e-7) / (2 * n))
print(f"{n} {agree / n:.4f} {p:.4f} {t:.4f} {int(n == 20000 and abs(agree / n - p) <= t)}")
PY
)"
read -r n frac p t pass <<<"$check"
diag "range: $n reports, signs agreeing with H(j, nu): $frac, expected $p +- $t"
ok_if "range reports keep the sign with probability e^eps/(e^eps+1)" test "$pass" = 1

many 5000 "$TMP/mean.json" "$(printf '3\n4\n5')" >"$TMP/mean.reports"
tol="$($PYTHON "$REPO/test/lib/local_tolerance.py" --epsilon 1 --lower 0 --upper 10 --users 5000 --failure 3e-7)"
check="$($PYTHON - "$TMP/mean.reports" "$tol" <<'PY'
import json, math, sys
G = 2 ** 20
levels = [json.loads(line)["level"] for line in open(sys.argv[1])]
n = len(levels)
estimate = 0 + sum(levels) / n * 10 / G
print(f"{n} {estimate:.4f} {int(n == 5000 and abs(estimate - 4) <= float(sys.argv[2]))}")
k = round(G * math.log(2))
q = math.exp(-1 / G)
tail = lambda k: 2 * q ** k / (1 + q)
far = sum(abs(level - 0.4 * G) >= k for level in levels) / n
t = math.sqrt(math.log(2 / 3e-7) / (2 * n))
print(f"{far:.4f} {tail(k):.4f} {t:.4f} {int(tail(k + 1) - t <= far <= tail(k - 1) + t)}")
PY
)"
{ read -r n estimate pass; read -r far tail t pass2; } <<<"$check"
diag "mean: $n reports, average value $estimate, expected 4 +- $tol"
ok_if "mean reports average to the samples' mean" test "$pass" = 1
diag "noise: fraction of levels at least G ln 2 away $far, expected $tail +- $t"
ok_if "mean reports carry discrete Laplace noise of scale G/epsilon" test "$pass2" = 1

echo "1..$N"
[ "$FAILED" -eq 0 ]

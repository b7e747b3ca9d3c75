#!/usr/bin/python3
"""test/bench/accuracy_releases.py -- the accuracy of user_dp_mean, user_dp_sum and their _ci twins and
of user_dp_count (issue 12), for doc/accuracy.md.

Run it through test/bench/accuracy_releases.sh, which starts a throwaway cluster and calls
    /usr/bin/python3 test/bench/accuracy_releases.py
with PGHOST/PGPORT/PGUSER pointing at it (any superuser connection: the script creates database
uldp_accuracy_releases, the extension and a budget). Needs Debian's python3-numpy and psql.
Releases use secure randomness (uldp.test_seed = 0); the data are fixed.

Parts (--parts, default all):
  grid       "never worse than naive": the grid of test/stat/never_worse.sql (12 data shapes,
             public bounds, eps = 1) at n = 50, 1000, 20000 and 1,000,000 users; the RMSE of
             user_dp_mean and user_dp_sum over R releases against the naive mechanism's RMSE,
             computed exactly from its noise laws (test/bench/naive_law.py).
  tails      no bounds, heavy tails: log-normal (sigma 1, 2) and Pareto (alpha 1.5, 2.5) user
             values, n = 10,000 and 100,000, eps = 1: the RMSE of user_dp_mean(x, u, 1) and
             user_dp_sum(x, u, 1) against the best fixed clipping, the naive bounded mechanism with
             the [L, U] of smallest RMSE (exact, searched over a grid of bounds knowing the data).
  share      the 0/1 example of issue 12: user_dp_mean(CASE WHEN amount > 63 THEN 1.0 ELSE 0.0
             END, user_id, 0.3, 0, 1) on the demo table of test/demo.sh (true value 0.0121).
             --tag before runs it on an older build (see accuracy_releases.sh).
  intervals  coverage and width of the 95% intervals of user_dp_mean_ci, user_dp_sum_ci and
             user_dp_count_ci, with and without bounds.
  count      the spread of user_dp_count at several epsilons.

The raw numbers go to test/bench/accuracy_releases.json (merged: a run of some parts keeps the
others); the tables go to doc/accuracy.md between the markers RELEASES_START and RELEASES_END
(test/bench/accuracy.py keeps that block when it rewrites the file). --results redraws the tables
from the JSON without a database.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

import bench_psql
import doc_block
import naive_law

DB = "uldp_accuracy_releases"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
RELEASES_START = "<!-- releases: written by test/bench/accuracy_releases.py -->"
RELEASES_END = "<!-- /releases -->"
PARTS = ["grid", "tails", "share", "intervals", "count"]


def psql(script, db=DB):
    return bench_psql.psql(script, db, "ULDP_ACC_PSQL")


def rows(output):
    return [line.split("|") for line in output.splitlines() if line.strip()]


def build_stamp(built_from=None):
    try:
        commit = built_from or subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], text=True,
                                              capture_output=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    try:
        pg_config = os.environ.get("ULDP_PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
        libdir = subprocess.run([pg_config, "--pkglibdir"], text=True,
                                capture_output=True).stdout.strip()
        so = time.strftime("%Y-%m-%d %H:%M UTC",
                           time.gmtime(os.path.getmtime(os.path.join(libdir, "uldp.so"))))
        version = psql("SELECT extversion FROM pg_extension WHERE extname = 'uldp'").strip()
    except OSError:
        so, version = "unknown", "unknown"
    return "uldp %s (commit %s, uldp.so of %s), run on %s" % (
        version, commit, so, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def releases(table, calls, reps, per_statement, where="true"):
    """reps releases of each call (a format string with {j}, which must make the aggregates
    distinct), per_statement in one statement; returns {call index: [values]}.  Each statement
    is charged once per run of its correlated subquery ("WHERE g = g")."""
    lines = ["SET uldp.test_seed = 0;", "SET max_parallel_workers_per_gather = 0;"]
    for i, call in enumerate(calls):
        aggregates = ", ".join(call.format(j=j) for j in range(1, per_statement + 1))
        lines.append("SELECT %d, unnest((SELECT ARRAY[%s] FROM %s WHERE (%s) AND g = g)) "
                     "FROM generate_series(1, %d) g;" % (i, aggregates, table, where,
                                                          reps // per_statement))
    got = {}
    for i, value in rows(psql("\n".join(lines))):
        got.setdefault(int(i), []).append(value)
    return got


def rmse(errors):
    errors = np.asarray(errors, dtype=float)
    return float(np.sqrt(np.mean(errors ** 2)))


# --------------------------------------------------------------------------------------------
# grid: the shapes of test/stat/never_worse.sql
SHAPES = [
    ("constant", 0, 10, "7"),
    ("share_0_1", 0, 1, "(u <= round(0.001 * n))::int"),
    ("share_5", 0, 1, "(u <= round(0.05 * n))::int"),
    ("share_50", 0, 1, "(u <= round(0.5 * n))::int"),
    ("share_95", 0, 1, "(u <= round(0.95 * n))::int"),
    ("share_99_9", 0, 1, "(u <= round(0.999 * n))::int"),
    ("zero_inflated", 0, 500,
     "CASE WHEN bench_unif(u, 1) < 0.8 THEN 0 ELSE least(exp(3 + bench_normal(u, 2)), 500) END"),
    ("bimodal", 0, 100,
     "least(greatest(CASE WHEN u % 2 = 0 THEN 20 ELSE 80 END + 3 * bench_normal(u, 4), 0), 100)"),
    ("lognormal", 0, 100, "least(exp(2 * bench_normal(u, 6)), 100)"),
    ("pareto", 0, 1000, "least((1 - bench_unif(u, 8)) ^ (-1 / 1.5), 1000)"),
    ("one_huge", 0, 1e6, "CASE WHEN u = 1 THEN 1e6 ELSE 1 END"),
    ("signed", -100, 100, "least(greatest(30 * bench_normal(u, 10), -100), 100)"),
]
GRID_SIZES = {50: (400, 200), 1000: (400, 100), 20000: (200, 50), 1000000: (60, 5)}
GRID_FUNCTIONS = """
CREATE OR REPLACE FUNCTION bench_unif(u int, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT ((hashint8(u::bigint * 1000003 + salt) & 2147483647)::float8 + 0.5) / 2147483648
$$;
CREATE OR REPLACE FUNCTION bench_normal(u int, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT sqrt(-2 * ln(bench_unif(u, salt))) * cos(2 * pi() * bench_unif(u, salt + 1))
$$;
"""


def run_grid(scale, ns=None):
    psql(GRID_FUNCTIONS)
    results = []
    for n, (reps, per_statement) in GRID_SIZES.items():
        if ns and n not in ns:
            continue
        reps = max(per_statement, int(reps * scale) // per_statement * per_statement)
        t0 = time.time()
        for shape, lower, upper, value in SHAPES:
            table = "g_%d_%s" % (n, shape)
            psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s AS SELECT u, v AS x FROM (SELECT u, (%s)::float8 AS v "
                 "FROM generate_series(1, %d) u, LATERAL (SELECT %d AS n) p) s, "
                 "generate_series(1, CASE WHEN u %% 5 = 0 THEN 2 ELSE 1 END) r; ANALYZE %s;"
                 % (table, table, value, n, n, table))
            bounds = {"mean": (lower, upper),
                      "sum": (min(lower, 2 * lower), max(upper, 2 * upper))}
            users, mean_target = map(float, rows(psql(
                "SELECT count(*), avg(t) FROM (SELECT avg(least(greatest(x, %r), %r)) t FROM %s GROUP BY u) s"
                % (lower, upper, table)))[0])
            sum_target = float(rows(psql(
                "SELECT sum(least(greatest(t, %r), %r)) FROM (SELECT sum(x) t FROM %s GROUP BY u) s"
                % (bounds["sum"] + (table,))))[0][0])
            calls = ["user_dp_mean(x, u + {j} - {j}, 1.0, %r, %r)" % bounds["mean"],
                     "user_dp_sum(x, u + {j} - {j}, 1.0, %r, %r)" % bounds["sum"]]
            got = releases(table, calls, reps, per_statement)
            for i, fn in enumerate(["mean", "sum"]):
                target = mean_target if fn == "mean" else sum_target
                values = np.array([float(v) for v in got[i]])
                if fn == "mean":
                    naive = naive_law.mean_rmse(int(users), mean_target, *bounds["mean"], 1.0)
                else:
                    naive = naive_law.sum_noise_sd(*bounds["sum"], 1.0)
                measured = rmse(values - target)
                results.append(dict(n=n, shape=shape, fn=fn, lower=bounds[fn][0], upper=bounds[fn][1],
                                    target=target, reps=len(values), rmse=measured, naive=naive,
                                    ratio=measured / naive))
            psql("DROP TABLE %s;" % table)
        print("grid n=%d: %.0f s" % (n, time.time() - t0), flush=True)
    return results


# --------------------------------------------------------------------------------------------
# tails: no bounds, against the best fixed clipping
TAIL_DISTRIBUTIONS = [("lognormal", 1.0), ("lognormal", 2.0), ("pareto", 1.5), ("pareto", 2.5)]
TAIL_NS = {10000: (100, 50), 100000: (100, 10)}


def tail_values(dist, param, n):
    rng = np.random.default_rng(1200 + int(10 * param) + n)
    if dist == "lognormal":
        return np.exp(param * rng.standard_normal(n))
    return (1 - rng.random(n)) ** (-1 / param)   # Pareto, x_m = 1


def best_mean_clipping(x, eps, lowers=(0.0,)):
    """The naive bounded mean's smallest RMSE about the true mean over [L, U], L in lowers and U
    on a geometric grid from the median to the largest value.  The values are positive, so L = 0
    clips nothing below; a higher L would let the oracle cancel the bias of the top against the
    bottom, which says nothing about clipping a tail."""
    mu = float(x.mean())
    uppers = np.geomspace(float(np.quantile(x, 0.5)), float(x.max()) * 1.001, 120)
    best = None
    for lower in lowers:
        for upper in uppers:
            if upper <= lower:
                continue
            clamped = float(np.clip(x, lower, upper).mean())
            value = naive_law.mean_rmse(len(x), clamped, lower, float(upper), eps, mu_true=mu)
            if best is None or value < best[0]:
                best = (value, lower, float(upper))
    return best


def best_sum_clipping(x, eps):
    total = float(x.sum())
    uppers = np.geomspace(float(np.quantile(x, 0.5)), float(x.max()) * 1.001, 400)
    best = None
    for upper in uppers:
        value = naive_law.sum_rmse(float(np.clip(x, 0, upper).sum()) - total, 0.0, float(upper), eps)
        if best is None or value < best[0]:
            best = (value, 0.0, float(upper))
    return best


def run_tails(scale):
    results = []
    for n, (reps, per_statement) in TAIL_NS.items():
        reps = max(per_statement, int(reps * scale) // per_statement * per_statement)
        for dist, param in TAIL_DISTRIBUTIONS:
            t0 = time.time()
            x = tail_values(dist, param, n)
            table = "t_%s_%d_%d" % (dist, int(10 * param), n)
            psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (u int, x float8);\nCOPY %s FROM STDIN;\n%s\n\\.\nANALYZE %s;"
                 % (table, table, table, "\n".join("%d\t%r" % (i + 1, float(v)) for i, v in enumerate(x)), table))
            got = releases(table, ["user_dp_mean(x, u + {j} - {j}, 1.0)",
                                   "user_dp_sum(x, u + {j} - {j}, 1.0)"], reps, per_statement)
            for i, fn in enumerate(["mean", "sum"]):
                target = float(x.mean()) if fn == "mean" else float(x.sum())
                values = np.array([float(v) for v in got[i]])
                errors = values - target
                best = best_mean_clipping(x, 1.0) if fn == "mean" else best_sum_clipping(x, 1.0)
                results.append(dict(dist=dist, param=param, n=n, fn=fn, target=target, reps=len(values),
                                    rmse=rmse(errors), bias=float(errors.mean()),
                                    median_abs=float(np.median(np.abs(errors))),
                                    best=best[0], best_lower=best[1], best_upper=best[2],
                                    max_value=float(x.max()), ratio=rmse(errors) / best[0]))
            psql("DROP TABLE %s;" % table)
            print("tails %s %.1f n=%d: %.0f s" % (dist, param, n, time.time() - t0), flush=True)
    return results


# --------------------------------------------------------------------------------------------
# share: the demo table of test/demo.sh (kept identical to it) and the 0/1 example of issue 12
DEMO_TABLE = """
SELECT setseed(0.42) \\g /dev/null
DROP TABLE IF EXISTS visits;
CREATE TABLE visits (user_id int, amount float8, region int,
                     features float8[] CHECK (cardinality(features) = 2), returned float8);
WITH users AS (
    SELECT u AS user_id,
           50 + 3 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS mu,
           1 + floor(random() * 199)::int AS n_visits
    FROM generate_series(1, 2000) AS u
)
INSERT INTO visits (user_id, amount, region)
SELECT users.user_id,
       greatest(0, users.mu + 5 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())),
       1 + floor(random() * 8)::int
FROM users, LATERAL generate_series(1, users.n_visits) AS v;
ANALYZE visits;
"""
SHARE_QUERY = "user_dp_mean(CASE WHEN amount > 63 THEN 1.0 ELSE 0.0 END, user_id{plus}, 0.3, 0, 1)"


def run_share(scale):
    psql(DEMO_TABLE)
    true_value, users = map(float, rows(psql(
        "SELECT avg(m), count(*) FROM (SELECT avg(CASE WHEN amount > 63 THEN 1.0 ELSE 0.0 END) m "
        "FROM visits GROUP BY user_id) s"))[0])
    reps = max(100, int(1000 * scale) // 100 * 100)
    got = releases("visits", [SHARE_QUERY.format(plus=" + {j} - {j}")], reps, 100)
    values = np.array([float(v) for v in got[0]])
    errors = values - true_value
    return dict(true=true_value, users=users, reps=len(values), mean=float(values.mean()),
                rmse=rmse(errors), median_abs=float(np.median(np.abs(errors))),
                within_half=float(np.mean(np.abs(errors) <= 0.5 * true_value)),
                zero=float(np.mean(values == 0)),
                naive=naive_law.mean_rmse(int(users), true_value, 0.0, 1.0, 0.3),
                query="SELECT " + SHARE_QUERY.format(plus="") + " FROM visits")


# --------------------------------------------------------------------------------------------
# intervals
INTERVAL_DATA = [("normal", 1000), ("normal", 10000), ("lognormal", 10000)]
INTERVAL_CALLS = [
    ("user_dp_mean_ci(x, u, 1, 0, 100)", "user_dp_mean_ci(x, u + {j} - {j}, 1.0, 0, 100)", "mean"),
    ("user_dp_mean_ci(x, u, 1)", "user_dp_mean_ci(x, u + {j} - {j}, 1.0)", "mean"),
    ("user_dp_sum_ci(x, u, 1, 0, 100)", "user_dp_sum_ci(x, u + {j} - {j}, 1.0, 0, 100)", "sum"),
    ("user_dp_sum_ci(x, u, 1)", "user_dp_sum_ci(x, u + {j} - {j}, 1.0)", "sum"),
    ("user_dp_count_ci(u, 1)", "user_dp_count_ci(u + {j} - {j}, 1.0)", "count"),
]


def interval_values(dist, n):
    rng = np.random.default_rng(1300 + n)
    if dist == "normal":
        return np.clip(50 + 10 * rng.standard_normal(n), 0, 100)
    return np.minimum(10 * np.exp(rng.standard_normal(n)), 100)


def run_intervals(scale):
    results = []
    for dist, n in INTERVAL_DATA:
        t0 = time.time()
        x = interval_values(dist, n)
        table = "i_%s_%d" % (dist, n)
        psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (u int, x float8);\nCOPY %s FROM STDIN;\n%s\n\\.\nANALYZE %s;"
             % (table, table, table, "\n".join("%d\t%r" % (i + 1, float(v)) for i, v in enumerate(x)), table))
        targets = {"mean": float(x.mean()), "sum": float(x.sum()), "count": float(n)}
        reps = max(100, int(1000 * scale) // 100 * 100)
        per_statement = 100 if n <= 1000 else 20
        lines = ["SET uldp.test_seed = 0;", "SET max_parallel_workers_per_gather = 0;"]
        for i, (_, call, _) in enumerate(INTERVAL_CALLS):
            aggregates = ", ".join(call.format(j=j) for j in range(1, per_statement + 1))
            lines.append("SELECT %d, (e).estimate, (e).ci_lower, (e).ci_upper FROM (SELECT unnest((SELECT ARRAY[%s] "
                         "FROM %s WHERE g = g)) AS e FROM generate_series(1, %d) g) s;"
                         % (i, aggregates, table, reps // per_statement))
        got = {}
        for i, e, lo, hi in rows(psql("\n".join(lines))):
            got.setdefault(int(i), []).append((float(e), float(lo), float(hi)))
        for i, (label, _, kind) in enumerate(INTERVAL_CALLS):
            values = np.array(got[i])
            target = targets[kind]
            covered = (values[:, 1] <= target) & (target <= values[:, 2])
            widths = values[:, 2] - values[:, 1]
            results.append(dict(dist=dist, n=n, call=label, target=target, reps=len(values),
                                coverage=float(covered.mean()), median_width=float(np.median(widths)),
                                rmse=rmse(values[:, 0] - target),
                                width_ratio=float(np.median(widths)) / (2 * 1.96 * rmse(values[:, 0] - target))
                                if rmse(values[:, 0] - target) > 0 else float("nan")))
        psql("DROP TABLE %s;" % table)
        print("intervals %s n=%d: %.0f s" % (dist, n, time.time() - t0), flush=True)
    return results


# --------------------------------------------------------------------------------------------
# count
COUNT_EPSILONS = [0.1, 0.5, 1.0, 2.0]


def run_count(scale):
    psql("DROP TABLE IF EXISTS c_1000; CREATE TABLE c_1000 AS SELECT u FROM generate_series(1, 1000) u;")
    reps = max(200, int(2000 * scale) // 200 * 200)
    got = releases("c_1000", ["user_dp_count(u + {j} - {j}, %r)" % eps for eps in COUNT_EPSILONS],
                   reps, 200)
    results = []
    for i, eps in enumerate(COUNT_EPSILONS):
        values = np.array([float(v) for v in got[i]])
        q = math.exp(-naive_law.dl(eps * naive_law.MARGIN))
        results.append(dict(eps=eps, reps=len(values), bias=float(values.mean() - 1000),
                            sd=float(values.std(ddof=1)), law_sd=math.sqrt(2 * q) / (1 - q),
                            bound=1.5 / eps))
    return results


# --------------------------------------------------------------------------------------------
def fmt(v):
    if v is None or not math.isfinite(v):
        return str(v)
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e5 or a < 1e-3:
        return "%.3g" % v
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    return "%.3g" % v


def markdown(saved):
    out = [RELEASES_START, "## The releases of issue 12: never worse than naive, heavy tails, intervals, counts", ""]
    out.append("Regenerate with `bash test/bench/accuracy_releases.sh` (parts: `ULDP_ACC_PARTS`, default all; "
               "`ULDP_ACC_SCALE` multiplies the releases per cell). The raw numbers are in "
               "`test/bench/accuracy_releases.json`; `/usr/bin/python3 test/bench/accuracy_releases.py --results "
               "test/bench/accuracy_releases.json` rewrites this block from them. Releases use secure randomness; "
               "the data are fixed. Every error is measured against the non-private value.")
    out.append("")
    grid = saved.get("grid")
    if grid:
        out += ["### Never worse than naive (public bounds)", "",
                "%s. `%s`." % (grid["build"], grid["command"]), "",
                "The grid of `test/stat/never_worse.sql` (12 data shapes, each user's value within the "
                "bounds; `user_dp_sum` gets `[min(L, 2L), max(U, 2U)]`), eps = 1, with n = 1,000,000 "
                "added. \"naive\" is the RMSE of the naive mechanism computed exactly from its noise laws "
                "(`test/bench/naive_law.py`: for the mean, the clamped ratio of a noisy sum at 3/4 eps and a "
                "noisy count at 1/4 eps; for the sum, Laplace noise of scale max(|L|, |U|) / eps); with both "
                "bounds uldp runs exactly these, so the ratio measures only the sampling error of R releases "
                "(a relative standard error of about 1/sqrt(R) to 2/sqrt(R): R = %s)."
                % (", ".join("%d at n = %s" % (r, "{:,}".format(n)) for n, r in
                             sorted({(row["n"], row["reps"]) for row in grid["results"]}))), ""]
        ns = sorted({r["n"] for r in grid["results"]})
        out.append("| shape | bounds (mean) | " + " | ".join("mean n=%s" % "{:,}".format(n) for n in ns)
                   + " | " + " | ".join("sum n=%s" % "{:,}".format(n) for n in ns) + " |")
        out.append("|---|---|" + "---|" * (2 * len(ns)))
        by = {(r["shape"], r["fn"], r["n"]): r for r in grid["results"]}
        for shape, lower, upper, _ in SHAPES:
            cells = []
            for fn in ["mean", "sum"]:
                for n in ns:
                    r = by.get((shape, fn, n))
                    cells.append("%s / %s = **%.2f**" % (fmt(r["rmse"]), fmt(r["naive"]), r["ratio"]) if r else "")
            out.append("| %s | [%s, %s] | %s |" % (shape, fmt(lower), fmt(upper), " | ".join(cells)))
        ratios = [r["ratio"] for r in grid["results"]]
        out += ["", "Each cell: uldp's RMSE / the naive RMSE = ratio. Ratios %.2f to %.2f over the %d cells "
                "(median %.2f): uldp is the naive mechanism with public bounds, and the 0.1%% and 99.9%% "
                "shares come out as well as the bounds allow."
                % (min(ratios), max(ratios), len(ratios), float(np.median(ratios))), ""]
    tails = saved.get("tails")
    if tails:
        out += ["### No bounds, heavy tails: against the best fixed clipping", "",
                "%s. `%s`." % (tails["build"], tails["command"]), "",
                "One row per user, values log-normal `exp(sigma N(0, 1))` or Pareto (x_m = 1, alpha), "
                "eps = 1, no bounds: `user_dp_mean(x, u, 1)` and `user_dp_sum(x, u, 1)`, R releases each. "
                "\"best fixed\" is the smallest RMSE (about the true, unclipped value) of the naive bounded "
                "mechanism over bounds [0, U] chosen knowing the data (U on 120 geometric steps from the "
                "median to the largest value for the mean, 400 for the sum), "
                "computed exactly (`test/bench/naive_law.py`, bias included). It is an oracle: no "
                "mechanism that does not know the data can promise it.", ""]
        out.append("| values | n | release | R | uldp RMSE | uldp bias | best fixed RMSE | its [L, U] | "
                   "largest value | ratio |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in tails["results"]:
            out.append("| %s %s | %s | %s | %d | %s | %s | %s | [%s, %s] | %s | **%.2f** |" % (
                r["dist"], ("sigma %g" if r["dist"] == "lognormal" else "alpha %g") % r["param"],
                "{:,}".format(r["n"]), r["fn"], r["reps"], fmt(r["rmse"]), fmt(r["bias"]), fmt(r["best"]),
                fmt(r["best_lower"]), fmt(r["best_upper"]), fmt(r["max_value"]), r["ratio"]))
        worst = max(tails["results"], key=lambda r: r["ratio"])
        above = [r for r in tails["results"] if r["ratio"] > 2]
        out += ["", "The goal is a ratio of at most 2. %s" % (
            "All %d cells meet it (largest %.2f)." % (len(tails["results"]), worst["ratio"]) if not above else
            "%d of the %d cells miss it; the worst is %s %g, n = %s, %s: %.2f times the best fixed clipping."
            % (len(above), len(tails["results"]), worst["dist"], worst["param"], "{:,}".format(worst["n"]),
               worst["fn"], worst["ratio"])), ""]
    share = saved.get("share")
    if share:
        out += ["### The 0/1 example of issue 12", "",
                "`%s` on the demo table of `test/demo.sh` (%d users; the true mean of the users' shares "
                "is %.4f). %d releases per build." % (share["after"]["query"], share["after"]["users"],
                                                       share["after"]["true"], share["after"]["reps"]), ""]
        out.append("| build | mean of the releases | RMSE | relative RMSE | median abs error | "
                   "within +-50% | command |")
        out.append("|---|---|---|---|---|---|---|")
        for tag in ["before", "after"]:
            r = share.get(tag)
            if r:
                out.append("| %s: %s | %.4f | %.4f | %.0f%% | %.4f | %.0f%% | `%s` |" % (
                    tag, r["build"], r["mean"], r["rmse"], 100 * r["rmse"] / r["true"], r["median_abs"],
                    100 * r["within_half"], r["command"]))
        out += ["", "The naive mechanism's RMSE there, computed exactly: %.4f." % share["after"]["naive"], ""]
    intervals = saved.get("intervals")
    if intervals:
        out += ["### Intervals", "", "%s. `%s`." % (intervals["build"], intervals["command"]), "",
                "User values N(50, 10^2) cut to [0, 100] (normal) or 10 exp(N(0, 1)) cut at 100 "
                "(log-normal), one row per user, eps = 1. Coverage: the share of the intervals that hold "
                "the non-private value (nominal: at least 95%); width: the median width; width / (3.92 RMSE): "
                "how much wider the interval is than a normal 95% interval of the same RMSE would be.", ""]
        out.append("| data | n | release | R | coverage | median width | RMSE | width / (3.92 RMSE) |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in intervals["results"]:
            out.append("| %s | %s | `%s` | %d | %.1f%% | %s | %s | %.2f |" % (
                r["dist"], "{:,}".format(r["n"]), r["call"], r["reps"], 100 * r["coverage"],
                fmt(r["median_width"]), fmt(r["rmse"]), r["width_ratio"]))
        out.append("")
    count = saved.get("count")
    if count:
        out += ["### user_dp_count", "", "%s. `%s`." % (count["build"], count["command"]), "",
                "1,000 users; the standard deviation of the releases against the noise's law "
                "sqrt(2q) / (1 - q), q = exp(-eps), and the documented bound 1.5 / eps.", ""]
        out.append("| eps | R | mean - n | sd | law sd | 1.5 / eps |")
        out.append("|---|---|---|---|---|---|")
        for r in count["results"]:
            out.append("| %g | %d | %.3f | %.3f | %.3f | %.2f |" % (r["eps"], r["reps"], r["bias"], r["sd"],
                                                                  r["law_sd"], r["bound"]))
        out.append("")
    out.append(RELEASES_END)
    return "\n".join(out)


def write_markdown(saved, md_path):
    doc_block.splice(md_path, RELEASES_START, RELEASES_END, markdown(saved), before="## Reading")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--tag", default="after", help="share: which build this is (before/after)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the releases per cell")
    parser.add_argument("--json", default=os.path.join(HERE, "accuracy_releases.json"))
    parser.add_argument("--md", default=os.path.join(REPO, "doc", "accuracy.md"))
    parser.add_argument("--results", help="skip the experiment: rewrite the block from this JSON")
    parser.add_argument("--grid-ns", help="grid: only these numbers of users (comma-separated)")
    parser.add_argument("--built-from", help="the commit the installed uldp.so was built from, when it "
                        "is not this repository's (the \"before\" build)")
    parser.add_argument("--command", default="bash test/bench/accuracy_releases.sh",
                        help="the command to quote in the report")
    args = parser.parse_args()
    try:
        with open(args.results or args.json) as f:
            saved = json.load(f)
    except FileNotFoundError:
        saved = {}
    if not args.results:
        bench_psql.prepare_database(DB, "ULDP_ACC_PSQL")
        build = build_stamp(args.built_from)
        for part in args.parts.split(","):
            t0 = time.time()
            if part == "grid" and args.grid_ns:
                result = run_grid(args.scale, [int(v) for v in args.grid_ns.split(",")])
            else:
                result = globals()["run_" + part](args.scale)
            entry = dict(build=build, command=args.command, seconds=round(time.time() - t0))
            if part == "share":
                result.update(entry)
                saved.setdefault("share", {})[args.tag] = result
            else:
                entry["results"] = result
                saved[part] = entry
            with open(args.json, "w") as f:
                json.dump(saved, f, indent=1)
            print("%s: %.0f s" % (part, time.time() - t0), flush=True)
    write_markdown(saved, args.md)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""test/bench/accuracy.py -- accuracy of user_dp_mean against the naive mechanism and the paper's rate.

Run it through test/bench/accuracy.sh, which starts a throwaway cluster and calls
    /usr/bin/python3 test/bench/accuracy.py --reps 100
with PGHOST/PGPORT/PGUSER pointing at it (any superuser connection works: the script creates
database uldp_accuracy, the extension and a budget itself). Needs Debian's python3-numpy and
python3-matplotlib (use /usr/bin/python3: a pyenv or venv python may lack them) and psql; it talks
to the server only through psql subprocesses (no psycopg2).

Data, for each n in {100, 1000, 10000} users and m in {1, 10} rows per user: user u's mean
mu_u ~ N(50, 2^2), its rows mu_u + N(0, 5^2), rows loaded once into a table in random order (fixed
numpy seed, so the data are the same on every run; the releases use secure randomness,
uldp.test_seed = 0). The target is the mean of the n user averages.

For each (n, m), epsilon in {0.1, 1.0} and bounds [0, 100] (narrow) or [-1e6, 1e6] (wide), it
measures the RMSE over R releases of
  (1) tau     user_dp_mean(x, user_id, eps, lower, upper, tau), tau = ceil(max_u |avg_u - target|)
              (the data's concentration radius: the assumption of Levy et al. 2021)
  (2) bounds  user_dp_mean(x, user_id, eps, lower, upper): the naive mechanism with a noisy count
  (3) none    user_dp_mean(x, user_id, eps)  (does not use the bounds; run for both widths)
  (4) naive   clamp the user averages to [lower, upper], add Laplace((upper - lower) / (n eps)) to
              their mean, clamp the result to [lower, upper]; simulated in numpy with n known and
              replace-one sensitivity (optimistic for the naive mechanism)
  (5) paper   the rate of Levy et al.: RMSE of Lap(8 tau / (n eps)) = sqrt(2) 8 tau / (n eps)
and writes doc/accuracy.png, doc/accuracy.md (table) and test/bench/accuracy.json (raw numbers).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import bench_psql

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NS = [100, 1000, 10000]
MS = [1, 10]
EPSILONS = [0.1, 1.0]
WIDTHS = {"narrow": (0.0, 100.0), "wide": (-1e6, 1e6)}
MODES = ["tau", "bounds", "none"]
LABELS = {
    "tau": "(1) user_dp_mean, tau given",
    "bounds": "(2) user_dp_mean, bounds, no tau (naive, noisy n)",
    "none": "(3) user_dp_mean, no bounds",
    "naive": "(4) naive: clamp + Laplace((U-L)/(n eps))",
    "paper": "(5) paper rate sqrt(2) 8 tau/(n eps)",
}
STYLES = {
    "tau": dict(color="C0", marker="o"),
    "bounds": dict(color="C1", marker="s"),
    "none": dict(color="C2", marker="^"),
    "naive": dict(color="C3", marker="x", linestyle="--"),
    "paper": dict(color="black", marker="", linestyle=":"),
}
DB = "uldp_accuracy"
NAIVE_REPS = 200000


def psql(script, db=DB):
    return bench_psql.psql(script, db, "ULDP_ACC_PSQL")


def build_stamp():
    """The repository commit and the installed uldp.so's time stamp (to tell builds apart)."""
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    try:
        commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], text=True,
                                capture_output=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    try:
        pg_config = os.environ.get("ULDP_PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
        libdir = subprocess.run([pg_config, "--pkglibdir"], text=True,
                                capture_output=True).stdout.strip()
        so = time.strftime("%Y-%m-%d %H:%M:%S UTC",
                           time.gmtime(os.path.getmtime(os.path.join(libdir, "uldp.so"))))
    except OSError:
        so = "unknown"
    return commit, so


def make_data(n, m):
    rng = np.random.default_rng(20210000 + 10 * n + m)
    mu = rng.normal(50.0, 2.0, size=n)
    users = np.repeat(np.arange(n), m)
    x = mu[users] + rng.normal(0.0, 5.0, size=n * m)
    order = rng.permutation(n * m)
    users, x = users[order], x[order]
    averages = np.bincount(users, weights=x, minlength=n) / np.bincount(users, minlength=n)
    return users, x, averages


def release_script(n, m, users, x, tau, reps):
    """Loads the table and runs reps releases per (eps, width, mode); every result line is
    'eps|width|mode|value'."""
    lines = [
        "SET uldp.test_seed = 0;",
        "SET max_parallel_workers_per_gather = 0;",
        "DROP TABLE IF EXISTS d;",
        "CREATE TABLE d (user_id int, x float8);",
        "COPY d FROM STDIN;",
    ]
    lines += ["%d\t%r" % (u, float(v)) for u, v in zip(users.tolist(), x.tolist())]
    lines += ["\\.", "ANALYZE d;"]
    for eps in EPSILONS:
        for width, (lower, upper) in WIDTHS.items():
            calls = {
                "tau": "user_dp_mean(x, user_id, %r, %r, %r, %r)" % (eps, lower, upper, float(tau)),
                "bounds": "user_dp_mean(x, user_id, %r, %r, %r)" % (eps, lower, upper),
                "none": "user_dp_mean(x, user_id, %r)" % eps,
            }
            for mode in MODES:
                query = "SELECT '%r|%s|%s', %s FROM d;" % (eps, width, mode, calls[mode])
                lines += [query] * reps
    return "\n".join(lines) + "\n"


def rmse(errors):
    errors = np.abs(np.asarray(errors, dtype=float))
    scale = float(errors.max()) if len(errors) else 0.0
    if scale == 0 or not math.isfinite(scale):
        return scale
    # scaled, so that errors near 1e300 (failed releases without bounds) do not overflow
    return scale * float(np.sqrt(np.mean((errors / scale) ** 2)))


def naive_rmse(averages, target, eps, lower, upper, rng):
    n = len(averages)
    clamped_mean = np.clip(averages, lower, upper).mean()
    noise = rng.laplace(0.0, (upper - lower) / (n * eps), size=NAIVE_REPS)
    return rmse(np.clip(clamped_mean + noise, lower, upper) - target)


def run(reps):
    results = []
    rng = np.random.default_rng(7)
    for n in NS:
        for m in MS:
            t0 = time.time()
            users, x, averages = make_data(n, m)
            target = float(averages.mean())
            radius = float(np.max(np.abs(averages - target)))
            tau = math.ceil(radius)
            out = psql(release_script(n, m, users, x, tau, reps))
            values = {}
            for line in out.splitlines():
                if not line.strip():
                    continue
                eps, width, mode, value = line.split("|")
                values.setdefault((float(eps), width, mode), []).append(float(value))
            for eps in EPSILONS:
                for width, (lower, upper) in WIDTHS.items():
                    row = dict(n=n, m=m, eps=eps, width=width, lower=lower, upper=upper,
                               tau_value=tau, radius=radius, target=target, reps=reps)
                    for mode in MODES:
                        got = values.get((eps, width, mode), [])
                        if len(got) != reps:
                            sys.exit("expected %d releases for %s, got %d"
                                     % (reps, (n, m, eps, width, mode), len(got)))
                        errors = np.array(got) - target
                        row[mode] = rmse(errors)
                        row[mode + "_median_abs"] = float(np.median(np.abs(errors)))
                        row[mode + "_gross"] = float(np.mean(np.abs(errors) > tau))
                    row["naive"] = naive_rmse(averages, target, eps, lower, upper, rng)
                    row["paper"] = math.sqrt(2) * 8 * tau / (n * eps)
                    results.append(row)
            print("n=%-5d m=%-2d tau=%-3d (radius %.2f): %d releases in %.1f s"
                  % (n, m, tau, radius, 2 * 2 * 3 * reps, time.time() - t0), flush=True)
    return results


PLOT_CAP = 1e7  # RMSEs above this (failed releases) are drawn at the cap, with a hollow marker


def plot(results, path):
    panels = [(eps, width) for eps in EPSILONS for width in WIDTHS]
    fig, axes = plt.subplots(len(MS), len(panels), figsize=(4.2 * len(panels), 3.9 * len(MS)),
                             squeeze=False)
    for i, m in enumerate(MS):
        for j, (eps, width) in enumerate(panels):
            ax = axes[i][j]
            rows = sorted((r for r in results if r["m"] == m and r["eps"] == eps
                           and r["width"] == width), key=lambda r: r["n"])
            ns = [r["n"] for r in rows]
            for method in ["tau", "bounds", "none", "naive", "paper"]:
                ys = [min(r[method], PLOT_CAP) for r in rows]
                ax.plot(ns, ys, label=LABELS[method], **STYLES[method])
                capped = [(n, y) for n, y, r in zip(ns, ys, rows) if r[method] > PLOT_CAP]
                if capped:
                    ax.plot(*zip(*capped), linestyle="", marker=STYLES[method]["marker"] or "o",
                            markersize=11, markerfacecolor="none",
                            markeredgecolor=STYLES[method]["color"])
            lower, upper = WIDTHS[width]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(NS)
            ax.set_xticklabels([str(n) for n in NS])
            ax.set_title("m=%d rows/user, eps=%g, bounds [%g, %g]" % (m, eps, lower, upper),
                         fontsize=9.5)
            ax.grid(True, which="both", alpha=0.3)
            if i == len(MS) - 1:
                ax.set_xlabel("n (users)")
            if j == 0:
                ax.set_ylabel("RMSE vs mean of user averages")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=9, frameon=False)
    fig.suptitle("uldp user_dp_mean accuracy: user means ~ N(50, 2^2), rows = user mean + N(0, 5^2), "
                 "tau = ceil(max |user avg - mean|); hollow markers: RMSE > 1e7, drawn at 1e7",
                 fontsize=10.5)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt(v):
    if not math.isfinite(v):
        return str(v)
    if v >= 1000:
        return "%.2g" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 0.1:
        return "%.3f" % v
    return "%.2g" % v


def fmt_ratio(v):
    return "%.2f" % v if 0.1 <= v < 100 else "%.2g" % v


def sorted_rows(results):
    return sorted(results, key=lambda r: (r["m"], r["eps"], r["width"] != "narrow", r["n"]))


def config_cells(r):
    return "%d | %d | %g | [%g, %g] | %d" % (r["n"], r["m"], r["eps"], r["lower"], r["upper"],
                                             r["tau_value"])


def rmse_table(results):
    out = [
        "| n | m | eps | bounds | tau | (1) tau | (2) bounds | (3) none | (4) naive | (5) paper "
        "| (1)/(5) | (2)/(5) | (3)/(5) | (1)/(4) | (2)/(4) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted_rows(results):
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            config_cells(r), fmt(r["tau"]), fmt(r["bounds"]), fmt(r["none"]), fmt(r["naive"]),
            fmt(r["paper"]), fmt_ratio(r["tau"] / r["paper"]), fmt_ratio(r["bounds"] / r["paper"]),
            fmt_ratio(r["none"] / r["paper"]), fmt_ratio(r["tau"] / r["naive"]),
            fmt_ratio(r["bounds"] / r["naive"])))
    return "\n".join(out)


def robust_table(results):
    out = [
        "| n | m | eps | bounds | tau | median abs err (1) | (2) | (3) "
        "| P(abs err > tau) (1) | (2) | (3) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted_rows(results):
        out.append("| %s | %s | %s | %s | %.2f | %.2f | %.2f |" % (
            config_cells(r), fmt(r["tau_median_abs"]), fmt(r["bounds_median_abs"]),
            fmt(r["none_median_abs"]), r["tau_gross"], r["bounds_gross"], r["none_gross"]))
    return "\n".join(out)


READING_START = "<!-- reading: kept when the file is regenerated -->"
READING_END = "<!-- /reading -->"
# the block of test/bench/accuracy_releases.py, kept as is too
RELEASES_START = "<!-- releases: written by test/bench/accuracy_releases.py -->"
RELEASES_END = "<!-- /releases -->"


def old_block(path, start=READING_START, end=READING_END):
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    if start in text and end in text:
        return text[text.index(start):text.index(end) + len(end)]
    return None


def old_reading(path):
    return old_block(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100, help="releases per mode and config")
    parser.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "..", "..", "doc"))
    parser.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "accuracy.json"),
                        help="where to save the raw results")
    parser.add_argument("--results", help="skip the experiment: re-plot this accuracy.json")
    args = parser.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    os.makedirs(out_dir, exist_ok=True)

    if args.results:
        with open(args.results) as f:
            saved = json.load(f)
        results, reps, seconds = saved["results"], saved["reps"], saved["seconds"]
        build = saved.get("build", "build unknown")
    else:
        t0 = time.time()
        commit, so_start = build_stamp()
        if not psql("SELECT 1 FROM pg_database WHERE datname = '%s'" % DB, db="postgres").strip():
            psql("CREATE DATABASE %s;" % DB, db="postgres")
        psql("CREATE EXTENSION IF NOT EXISTS uldp;\n"
             "SELECT uldp.set_budget(current_user::regrole, 1e9, 1);\n")
        results = run(args.reps)
        reps, seconds = args.reps, time.time() - t0
        build = "uldp commit %s, installed uldp.so of %s" % (commit, so_start)
        date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        so_end = build_stamp()[1]
        if so_end != so_start:
            build += (" (**WARNING: uldp.so was reinstalled during the run, at %s: the results"
                      " mix two builds**)" % so_end)
            print("WARNING: uldp.so was reinstalled during the run", file=sys.stderr)
        build += ", run on %s" % date
        with open(args.json, "w") as f:
            json.dump(dict(reps=reps, seconds=round(seconds), build=build, results=results),
                      f, indent=1)

    plot(results, os.path.join(out_dir, "accuracy.png"))
    md_path = os.path.join(out_dir, "accuracy.md")
    text = markdown(results, reps, seconds, build, old_reading(md_path),
                    old_block(md_path, RELEASES_START, RELEASES_END))
    with open(md_path, "w") as f:
        f.write(text)
    print(rmse_table(results))


def markdown(results, reps, seconds, build, reading, releases=None):
    ratios = [r["tau"] / r["paper"] for r in results]
    good = [x for x in ratios if x <= 2.5]
    bad = ["n=%d m=%d eps=%g [%g, %g]: %s" % (r["n"], r["m"], r["eps"], r["lower"], r["upper"],
                                             fmt_ratio(r["tau"] / r["paper"]))
           for r in sorted_rows(results) if r["tau"] / r["paper"] > 2.5]
    summary = "at most 2.5 in %d of the %d configurations" % (len(good), len(ratios))
    if good:
        summary += " (%.2f-%.2f among them)" % (min(good), max(good))
    if bad:
        summary += "; above it: " + "; ".join(bad)
    if reading is None:
        reading = READING_START + "\n(reading of the results: to be written)\n" + READING_END
    return """# uldp accuracy

Regenerate with `bash test/bench/accuracy.sh` (%s on 2 cores; %d releases per method and
configuration, `ULDP_ACC_REPS` changes that). These numbers: %s.
The raw numbers are saved to `test/bench/accuracy.json`; `/usr/bin/python3 test/bench/accuracy.py --results test/bench/accuracy.json`
redraws the figure and this file from them without a database. The section "Reading" and the
block of `test/bench/accuracy_releases.py` (the releases of issue 12) are kept as they are when
the file is regenerated: check the reading against the new numbers.

## Setup

- n users, m rows each: user u's mean mu_u ~ N(50, 2^2), its rows mu_u + N(0, 5^2), in random order
  (one fixed data set per (n, m)). The target is the mean of the n user averages; every error is
  measured against it.
- tau (for method 1) is the data's concentration radius max_u |avg_u - target|, rounded up to an
  integer: the assumption of Levy et al. (2021) that all user averages lie within tau of the mean.
- Methods: (1) `user_dp_mean(x, user_id, eps, L, U, tau)` (PrivateRange with eps/2, then the
  winsorized mean); (2) `user_dp_mean(x, user_id, eps, L, U)`, which is the naive mechanism with
  the number of users private: the averages clamped to [L, U], their sum around (L + U)/2 with
  discrete Laplace noise at 3/4 eps, a noisy count at 1/4 eps; (3) `user_dp_mean(x, user_id, eps)`,
  which ignores the bounds (a noisy count, a private median and deviation, a half-width from the
  exponential mechanism; measured separately for both widths); (4) the naive mechanism with n
  known: clamp the user averages to [L, U], add Laplace noise of scale (U - L) / (n eps) to their
  mean, clamp to [L, U] (simulated in numpy, %d draws, replace-one sensitivity: optimistic for
  it, and (2) pays for the count it does not know); (5) the rate of Levy et al.,
  RMSE of Lap(8 tau / (n eps)) = sqrt(2) 8 tau / (n eps).
- Releases use secure randomness (`uldp.test_seed = 0`). With %d releases per cell an RMSE has a
  relative standard error of about 7%% when errors are roughly normal, far more when a few
  failed releases dominate it (see the second table).

![RMSE against n](accuracy.png)

## RMSE

%s

(1)/(5), the error with tau given relative to the paper's rate: median %.2f, %s.

## Typical error and failures

Where the RMSE is far above the typical error, rare failed releases dominate it (a range or an
interval far from the data). The median absolute error, and the fraction of releases whose error
exceeds tau (an estimate outside the cloud of user averages):

%s

%s## Reading

%s
""" % ("%d s" % seconds if seconds < 120 else "about %d minutes" % round(seconds / 60), reps,
       build, NAIVE_REPS, reps, rmse_table(results), float(np.median(ratios)), summary,
       robust_table(results), (releases + "\n\n") if releases else "", reading)


if __name__ == "__main__":
    main()

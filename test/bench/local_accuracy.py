"""test/bench/local_accuracy.py -- the accuracy of the local protocol (doc/local.md) for doc/accuracy.md.

Each cell has n users with m samples each, N(3, 1) clipped to the public bound [-B, B], B = 50
(= 50 sigma: wide public bounds, the usual case). A repetition runs, on the same data:
  * the two rounds of Girgis et al.'s Algorithm 1: a range round at eps0 / 2 (tau =
    sigma sqrt(2 ln(2 n / gamma) / m), gamma = 0.01, doc/local.md "Choosing tau"), then a mean
    round at eps0 / 2 on the published range: a user who answers both spends eps0;
  * the naive local mechanism at eps0: a mean round on [-B, B] (each user clamps their mean and
    adds discrete Laplace noise of scale 2B / eps0);
  * central user_dp_mean(x, u, eps0) on the rows (no bounds), to show what local privacy costs.
The error is the estimate minus the mean of all samples (Theorem 1's target). The predicted RMSE
of the two rounds (when the range round finds the users' bin) is that of the mean round's
noise: a report's Laplace noise has variance 2 (6 tau / (eps0 / 2))^2, so the RMSE is
12 sqrt(2) tau / (eps0 sqrt(n)) -- Theorem 1's O(tau / (eps0 sqrt(n))) with our constants.
Clients are simulated with uldp.ldp_report, which runs the client library's code.

Vectors (Algorithm 5, Theorem 2): n users in dimension d, each user's mean drawn directly as
N(mu, I / m) (the law of the mean of m samples N(mu, I); the protocol only uses the mean),
public l2 bound B = 50 sqrt(d).  A vector_range round at eps0 / 2 (tau per rotated coordinate
= sqrt(2 ln(2 n P / gamma) / m), P the padded dimension), a vector_mean round at eps0 / 2, the
naive vector_mean round on [-B, B] per rotated coordinate at eps0, and central user_dp_mean on
vectors at (eps0, 1e-6).  The error is the l2 distance to the users' average mean; predicted:
each of the P coordinates gets n / P reports of variance 2 (12 tau / eps0)^2, and the inverse
rotation keeps l2 norms, so the RMSE is 12 sqrt(2) tau P / (eps0 sqrt(n)) -- Theorem 2's
O(tau sqrt(d log(d n / gamma)) / (eps0 sqrt(n))) with tau the l2 radius, with our constants.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

import bench_psql
import doc_block

DB = "uldp_local_accuracy"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
START = "<!-- local: written by test/bench/local_accuracy.py -->"
VECTOR_CELLS = [(10000, 4, 100, 1.0, 10), (100000, 4, 100, 1.0, 5), (100000, 16, 100, 1.0, 5)]
END = "<!-- /local -->"
BOUND = 50.0
MU = 3.0
GAMMA = 0.01
# (n, m, eps0, repetitions): n at m = 100, eps0 = 1; m at n = 10,000; eps0 at n = 10,000, m = 100
CELLS = [(1000, 100, 1.0, 30), (3000, 100, 1.0, 30), (10000, 100, 1.0, 20), (100000, 100, 1.0, 8),
         (10000, 10, 1.0, 20), (10000, 1000, 1.0, 10),
         (10000, 100, 0.5, 20), (10000, 100, 2.0, 20), (10000, 100, 4.0, 20)]


def psql(script, db=DB):
    return bench_psql.psql(script, db, "ULDP_ACC_PSQL")


def tau_for(n, m):
    return math.sqrt(2 * math.log(2 * n / GAMMA) / m)


def make_data(n, m):
    psql("""
DROP TABLE IF EXISTS users, rows_;
CREATE TABLE users AS
SELECT u, ARRAY(SELECT least(greatest(%(mu)s + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()),
                                      -%(b)s), %(b)s)
                FROM generate_series(1, %(m)d) WHERE u > 0) AS samples
FROM generate_series(1, %(n)d) u;
CREATE TABLE rows_ AS SELECT u, unnest(samples) AS x FROM users;
ANALYZE users; ANALYZE rows_;
""" % dict(mu=MU, b=BOUND, m=m, n=n))
    return float(psql("SELECT avg(x) FROM rows_").strip())


def repetition(eps0, tau):
    half = eps0 / 2
    out = psql("""
SET uldp.test_seed = 0;
SELECT uldp.ldp_round('range', '{"bound": %(b)s, "tau": %(tau)r, "epsilon": %(half)r}') AS r \\gset
SELECT count(uldp.ldp_submit(:r, u::text, uldp.ldp_report(:r, samples))) FROM users \\g /dev/null
SELECT uldp.ldp_result(:r) AS range_result \\gset
SELECT uldp.ldp_round('mean', jsonb_build_object('range_round', :r, 'epsilon', %(half)r)) AS mr \\gset
SELECT count(uldp.ldp_submit(:mr, u::text, uldp.ldp_report(:mr, samples))) FROM users \\g /dev/null
SELECT uldp.ldp_round('mean', '{"lower": -%(b)s, "upper": %(b)s, "epsilon": %(eps)r}') AS nr \\gset
SELECT count(uldp.ldp_submit(:nr, u::text, uldp.ldp_report(:nr, samples))) FROM users \\g /dev/null
SELECT :'range_result',
       uldp.ldp_result(:mr) ->> 'estimate', uldp.ldp_result(:nr) ->> 'estimate',
       (SELECT user_dp_mean(x, u, %(eps)r) FROM rows_);
""" % dict(b=BOUND, tau=tau, half=half, eps=eps0))
    range_result, local, naive, central = out.strip().split("|")
    return json.loads(range_result), float(local), float(naive), float(central)


def make_vector_data(n, d, m):
    psql("""
DROP TABLE IF EXISTS vusers;
CREATE TABLE vusers AS
SELECT u, ARRAY(SELECT %(mu)s + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) / sqrt(%(m)d)
                FROM generate_series(1, %(d)d) WHERE u > 0) AS mean
FROM generate_series(1, %(n)d) u;
ALTER TABLE vusers ADD CHECK (cardinality(mean) = %(d)d);   -- user_dp_mean's public dimension
ANALYZE vusers;
""" % dict(mu=MU, m=m, d=d, n=n))
    return json.loads(psql("""
SELECT json_agg(v ORDER BY k) FROM (SELECT k, avg(mean[k]) AS v FROM vusers, generate_series(1, %d) k
GROUP BY k) s""" % d).strip())


def vector_repetition(d, padded, eps0, tau):
    half = eps0 / 2
    bound = BOUND * math.sqrt(d)
    out = psql("""
SET uldp.test_seed = 0;
SELECT uldp.ldp_round('vector_range', jsonb_build_object('dimension', %(d)d, 'bound', %(b)r, 'tau', %(tau)r,
                      'epsilon', %(half)r)) AS r \\gset
SELECT count(uldp.ldp_submit(:r, u::text, uldp.ldp_report(:r, mean))) FROM vusers \\g /dev/null
SELECT uldp.ldp_result(:r) AS range_result \\gset
SELECT uldp.ldp_round('vector_mean', jsonb_build_object('range_round', :r, 'epsilon', %(half)r)) AS mr \\gset
SELECT count(uldp.ldp_submit(:mr, u::text, uldp.ldp_report(:mr, mean))) FROM vusers \\g /dev/null
SELECT uldp.ldp_round('vector_mean', jsonb_build_object('dimension', %(d)d, 'bound', %(b)r,
                      'lower', (SELECT jsonb_agg(-%(b)r) FROM generate_series(1, %(p)d)),
                      'upper', (SELECT jsonb_agg(%(b)r) FROM generate_series(1, %(p)d)),
                      'epsilon', %(eps)r)) AS nr \\gset
SELECT count(uldp.ldp_submit(:nr, u::text, uldp.ldp_report(:nr, mean))) FROM vusers \\g /dev/null
SELECT :'range_result', uldp.ldp_result(:mr) -> 'estimate', uldp.ldp_result(:nr) -> 'estimate',
       (SELECT to_json(user_dp_mean(mean, u, %(eps)r, 1e-6, %(b)r)) FROM vusers);
""" % dict(d=d, b=bound, tau=tau, half=half, eps=eps0, p=padded))
    range_result, local, naive, central = out.strip().split("|")
    return (json.loads(range_result), json.loads(local), json.loads(naive), json.loads(central))


def run_vector(scale):
    results = []
    for n, d, m, eps0, reps in VECTOR_CELLS:
        reps = max(2, int(round(reps * scale)))
        t0 = time.time()
        truth = np.array(make_vector_data(n, d, m))
        padded = 1 << (d - 1).bit_length()
        tau = math.sqrt(2 * math.log(2 * n * padded / GAMMA) / m)
        found, _, errors = repeat(reps, lambda: vector_repetition(d, padded, eps0, tau),
                                  lambda rng: all(rng["found"]),
                                  lambda est: float(np.linalg.norm(np.array(est, dtype=float) - truth)))
        row = dict(n=n, d=d, m=m, eps0=eps0, reps=reps, tau=tau, padded=padded, found=found,
                   predicted=12 * math.sqrt(2) * tau * padded / (eps0 * math.sqrt(n)),
                   seconds=round(time.time() - t0))
        row.update(errors)
        results.append(row)
        print(json.dumps(row), flush=True)
    return results


def repeat(reps, repetition, found_in, error_of):
    """Runs a cell's repetitions; returns how many found their range, the ranges' widths (scalar
    ranges) and the RMSE of each mechanism's estimate (error_of: an estimate's error)."""
    found, widths, errors = 0, [], {"local": [], "naive": [], "central": []}
    for _ in range(reps):
        rng, *estimates = repetition()
        found += bool(found_in(rng))
        if not isinstance(rng["upper"], list):
            widths.append(float(rng["upper"]) - float(rng["lower"]))
        for key, estimate in zip(("local", "naive", "central"), estimates):
            errors[key].append(error_of(estimate))
    return found, widths, {key: float(np.sqrt(np.mean(np.square(e)))) for key, e in errors.items()}


def run(scale):
    results = []
    for n, m, eps0, reps in CELLS:
        reps = max(2, int(round(reps * scale)))
        t0 = time.time()
        truth = make_data(n, m)
        tau = tau_for(n, m)
        found, widths, errors = repeat(reps, lambda: repetition(eps0, tau),
                                       lambda rng: rng.get("found", True), lambda est: est - truth)
        row = dict(n=n, m=m, eps0=eps0, reps=reps, tau=tau, found=found,
                   width=float(np.median(widths)),
                   predicted=12 * math.sqrt(2) * tau / (eps0 * math.sqrt(n)),
                   naive_predicted=2 * math.sqrt(2) * BOUND / (eps0 * math.sqrt(n)),
                   seconds=round(time.time() - t0))
        row.update(errors)
        results.append(row)
        print(json.dumps(row), flush=True)
    return results


def fmt(v):
    return "%.3g" % v


def markdown(saved):
    lines = [START, "",
             "Command: `%s`; %s, %d s." % (saved["command"], saved["build"], saved["seconds"]), "",
             "Scalars (Algorithm 1, Theorem 1):", "",
             "| n | m | ε0 | R | τ | range found | range width | two rounds RMSE | predicted | naive local RMSE | "
             "naive / two rounds | central `user_dp_mean` RMSE |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in saved["results"]:
        lines.append("| {:,} | {} | {} | {} | {} | {}/{} | {} | {} | {} | {} | **{:.1f}** | {} |".format(
            r["n"], r["m"], r["eps0"], r["reps"], fmt(r["tau"]), r["found"], r["reps"], fmt(r["width"]),
            fmt(r["local"]), fmt(r["predicted"]), fmt(r["naive"]), r["naive"] / r["local"],
            fmt(r["central"])))
    if saved.get("vector"):
        lines += ["", "Vectors (Algorithm 5, Theorem 2; l2 errors, B = 50 √d):", "",
                  "| n | d | m | ε0 | R | τ (rotated coordinate) | ranges found | two rounds RMSE | predicted | "
                  "naive local RMSE | naive / two rounds | central `user_dp_mean` RMSE (δ = 1e-6) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in saved["vector"]:
            lines.append("| {:,} | {} | {} | {} | {} | {} | {}/{} | {} | {} | {} | **{:.1f}** | {} |".format(
                r["n"], r["d"], r["m"], r["eps0"], r["reps"], fmt(r["tau"]), r["found"], r["reps"],
                fmt(r["local"]), fmt(r["predicted"]), fmt(r["naive"]), r["naive"] / r["local"],
                fmt(r["central"])))
    lines += ["", END]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="scalar,vector")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the repetitions per cell")
    parser.add_argument("--json", default=os.path.join(HERE, "local_accuracy.json"))
    parser.add_argument("--md", default=os.path.join(REPO, "doc", "accuracy.md"))
    parser.add_argument("--results", help="skip the experiment: rewrite the block from this JSON")
    parser.add_argument("--build", default="", help="the build stamp to quote")
    parser.add_argument("--command", default="bash test/bench/local_accuracy.sh")
    args = parser.parse_args()
    try:
        with open(args.results or args.json) as f:
            saved = json.load(f)
    except FileNotFoundError:
        saved = {}
    if not args.results:
        bench_psql.prepare_database(DB, "ULDP_ACC_PSQL")
        t0 = time.time()
        parts = args.parts.split(",")
        if "scalar" in parts:
            saved["results"] = run(args.scale)
        if "vector" in parts:
            saved["vector"] = run_vector(args.scale)
        saved.update(command=args.command, build=args.build,
                     seconds=round(time.time() - t0) + (saved.get("seconds", 0) if len(parts) < 2 else 0))
        with open(args.json, "w") as f:
            json.dump(saved, f, indent=1)
    doc_block.splice(args.md, START, END, markdown(saved), before="## Reading")


if __name__ == "__main__":
    sys.exit(main())

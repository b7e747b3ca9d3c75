#!/usr/bin/python3
"""test/bench/sgd_quick.py -- one cell of section 5 of doc/learning.md, quickly: the excess risk,
test metric and median time of some user_dp_sgd methods on the same synthetic data (the data,
objective, minimiser and timing of test/bench/learning_methods.py).

Usage, against a running cluster with uldp (ULDP_QUICK_PSQL is the psql command, default
/usr/lib/postgresql/15/bin/psql with the usual PG* variables; the role needs a budget):
    /usr/bin/python3 test/bench/sgd_quick.py --n 10000 --m 10 --loss logistic --reps 10 \\
        --methods outlier_removal,winsorized,phased_erm
The table b_<loss>_<n>_<m> is created once in database --db (default postgres) and reused.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import learning_methods as lm  # noqa: E402

# the model of doc/learning.md section 1
SPEC = dict(w=[1.0, -1.0, 0.75, -0.5, 0.5, -0.25, 0.25, 0.0], b=0.25, shift=0.75, noise=1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--loss", default="logistic", choices=lm.LOSSES)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--methods", default="outlier_removal,winsorized,phased_erm")
    ap.add_argument("--eps", type=float, default=lm.EPSILON)
    ap.add_argument("--delta", type=float, default=lm.DELTA)
    ap.add_argument("--db", default="postgres")
    ap.add_argument("--options", default="{}",
                    help="more user_dp_sgd options, a JSON object (e.g. '{\"phases\": 3}')")
    args = ap.parse_args()

    psql = lm.Psql(args.db, "ULDP_QUICK_PSQL", print)
    table = "b_%s_%d_%d" % (args.loss[:3], args.n, args.m)
    data = lm.generate(args.n, args.m, args.loss, 1, SPEC)
    if psql.script("SELECT to_regclass('%s') IS NULL;" % table).strip() == "t":
        lm.load(psql, table, data, 2)
    held = lm.generate(lm.TEST_USERS, lm.TEST_M, args.loss, 3, SPEC)
    test = (held.x, held.y, held.norm)
    minima = {}
    for method in args.methods.split(","):
        sql = lm.release_sql(table, args.loss, method, args.eps, args.delta,
                             json.loads(args.options))
        excess, metric, ms, failed = [], [], [], 0
        for r in psql.statements(lm.SESSION % "off", [sql] * args.reps):
            if r["error"]:
                sys.exit("%s: %s" % (method, r["error"]))
            model = json.loads(r["out"][0])
            if not model.get("weights"):
                continue
            theta = np.asarray(model["weights"], float)
            sc = lm.scales_of(model, args.loss)
            if sc not in minima:
                best, _ = lm.minimiser(data, sc)
                minima[sc] = (lm.objective(data, best, sc), best)
            excess.append(lm.objective(data, theta, sc) - minima[sc][0])
            metric.append(lm.test_metric(theta, sc[1], test, args.loss))
            ms.append(r["ms"])
            failed += bool(model.get("test_failed"))
            report = {k: model.get(k) for k in ("phases", "steps", "tau", "step_size")}
        if excess:
            best = minima[lm.scales_of(model, args.loss)][1]
            print("%-16s n=%d m=%d %s: excess %.5f +- %.5f, test %.4f (minimiser %.4f), "
                  "median %.0f ms, %d of %d tests failed"
                  % (method, args.n, args.m, args.loss, np.mean(excess),
                     np.std(excess) / np.sqrt(len(excess)), np.mean(metric),
                     lm.test_metric(best, lm.scales_of(model, args.loss)[1], test, args.loss),
                     np.median(ms), failed, len(excess)), report)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""test/bench/learning.py -- accuracy and speed of user_dp_sgd and of the vector user_dp_mean.

Run it through test/bench/bench_learning.sh, which starts a throwaway cluster and calls
    /usr/bin/python3 test/bench/learning.py --out-dir doc
with PGHOST/PGPORT/PGUSER pointing at it (any superuser connection works: the script creates the
database uldp_learning, the extension and a budget itself). Pure standard library (no numpy); it
talks to the server only through psql subprocesses; the plots are SVGs drawn by gnuplot.

Parts (doc/learning.md explains them to analysts):
  1. logistic regression on synthetic users (d = 8 features, every user with its own feature shift,
     a varying number of rows per user): held-out classification accuracy of
       nonpriv   logistic regression fit by Newton's method (l2 = 1e-6) on the clipped rows
       uldp      user_dp_sgd(..., '{"loss": "logistic"}')                (winsorized, defaults)
       phased    user_dp_sgd(..., '{"loss": "logistic", "method": "phased_erm"}')
       naive     row-level DP gradient descent made user-level by group privacy (Python)
     across users n, rows per user m and epsilon; plus a linear regression sweep (MSE vs OLS).
  2. l2 error of user_dp_mean on vectors against the rate of Levy et al. (2021), Corollary 1.
  3. time of user_dp_sgd and of the vector user_dp_mean against built-in aggregates.
  4. small n and one-hot features: the vector user_dp_mean against the naive mean (the ball and
     Gaussian noise) from 150 users up, user_dp_sgd's defaults at 150 to 500 users against the
     same mechanism with a public feature bound, and one-hot features where most users have
     only the reference category.
  5. (--parts methods, on its own: learning_methods.py, which needs numpy) every user_dp_sgd
     method on the same data and (epsilon, delta): excess risk against the non-private optimum,
     test accuracy or MSE, gradient evaluations and time, at n up to 100k users and m up to 100
     rows each; --quick for about a minute at small n.
Writes doc/learning.md, doc/img/learning_*.svg and test/bench/learning_results.json; part 5
writes only its section of doc/learning.md, doc/img/learning_methods_*.svg and
test/bench/learning_methods.json, and the other parts keep its section.
"""
import argparse
import json
import multiprocessing
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import bench_psql
import learning_methods

DB = "uldp_learning"
EPS_DELTA = 1e-6
D = 8
TRUE_W = [1.0, -1.0, 0.75, -0.5, 0.5, -0.25, 0.25, 0.0]
TRUE_B = 0.25
SHIFT_SD = 0.75       # per-user feature shift
NOISE_SD = 1.0        # per-row feature noise around the user's shift
NS = [500, 1000, 2000, 4000, 8000]
MS = [1, 5, 15, 50]
EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0]
BASE_N, BASE_M, BASE_EPS = 2000, 15, 1.0
TEST_USERS = 3000
NAIVE_STEPS = 25
JOBS = int(os.environ.get("ULDP_LEARN_JOBS", "2"))  # processes for the naive simulation

T0 = time.time()


def log(msg):
    print("[%6.1fs] %s" % (time.time() - T0, msg), flush=True)


# ------------------------------------------------------------------------------------------------
# psql
# ------------------------------------------------------------------------------------------------
def psql(script, db=DB):
    return bench_psql.psql(script, db, "ULDP_LEARN_PSQL")


def fmt_array(v):
    return "{" + ",".join("%.6g" % x for x in v) + "}"


def load_table(name, rows, with_label=True):
    """rows: list of (user_id, features, label)."""
    lines = []
    for uid, x, y in rows:
        if with_label:
            lines.append("%d\t%s\t%.6g" % (uid, fmt_array(x), y))
        else:
            lines.append("%d\t%s" % (uid, fmt_array(x)))
    cols = "(user_id, x, y)" if with_label else "(user_id, x)"
    # the dimension is public: uldp reads it from the constraint
    d = len(rows[0][1]) if rows else 1
    ddl = ("CREATE TABLE %s (user_id int, x float8[] CHECK (cardinality(x) = %d), y float8);"
           if with_label
           else "CREATE TABLE %s (user_id int, x float8[] CHECK (cardinality(x) = %d));") % (name, d)
    psql("DROP TABLE IF EXISTS %s;\n%s\nCOPY %s %s FROM stdin;\n%s\n\\.\nANALYZE %s;\n"
         % (name, ddl, name, cols, "\n".join(lines), name))


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def dot(w, x):
    return sum(a * b for a, b in zip(w, x))


def rows_per_user(rng, m):
    """Rows per user: uniform on {1, ..., 2m - 1} (mean m); the public cap is k = 2m - 1."""
    return rng.randint(1, 2 * m - 1)


def gen_users(n, m, seed, loss="logistic", first_uid=0):
    rng = random.Random(seed)
    rows = []
    for u in range(n):
        shift = [rng.gauss(0, SHIFT_SD) for _ in range(D)]
        for _ in range(rows_per_user(rng, m)):
            x = [s + rng.gauss(0, NOISE_SD) for s in shift]
            z = dot(TRUE_W, x) + TRUE_B
            if loss == "logistic":
                y = 1.0 if rng.random() < sigmoid(z) else 0.0
            else:
                y = z + rng.gauss(0, 1.0)
            rows.append((first_uid + u, x, y))
    rng.shuffle(rows)
    return rows


def clip(x, r):
    s = math.sqrt(sum(a * a for a in x))
    return x if s <= r or s == 0 else [a * r / s for a in x]


def feature_radius_nonprivate(rows):
    """2.5 x the median over users of the root mean square feature norm (uldp's rule, no noise)."""
    acc = {}
    for uid, x, _ in rows:
        a = acc.setdefault(uid, [0.0, 0])
        a[0] += sum(v * v for v in x)
        a[1] += 1
    rms = sorted(math.sqrt(s / c) for s, c in acc.values())
    return 2.5 * rms[len(rms) // 2]


# ------------------------------------------------------------------------------------------------
# linear algebra (tiny, pure Python)
# ------------------------------------------------------------------------------------------------
def solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c] / m[c][c]
                mr, mc = m[r], m[c]
                for k in range(c, n + 1):
                    mr[k] -= f * mc[k]
    return [m[i][n] / m[i][i] for i in range(n)]


def newton_logistic(xs, ys, l2=1e-6, iters=12):
    """Non-private logistic regression: rows xs already extended by 1."""
    w = len(xs[0])
    theta = [0.0] * w
    n = len(xs)
    for _ in range(iters):
        g = [0.0] * w
        h = [[0.0] * w for _ in range(w)]
        for x, y in zip(xs, ys):
            p = sigmoid(dot(theta, x))
            r = p - y
            s = p * (1 - p)
            for i in range(w):
                xi = x[i]
                g[i] += r * xi
                sxi = s * xi
                hi = h[i]
                for j in range(i + 1):
                    hi[j] += sxi * x[j]
        for i in range(w):
            for j in range(i + 1):
                h[i][j] = h[i][j] / n + (l2 if i == j else 0)
                h[j][i] = h[i][j]
            g[i] = g[i] / n + l2 * theta[i]
        step = solve(h, g)
        theta = [t - s for t, s in zip(theta, step)]
        if max(abs(s) for s in step) < 1e-8:
            break
    return theta


def ols(xs, ys, l2=1e-9):
    w = len(xs[0])
    a = [[0.0] * w for _ in range(w)]
    b = [0.0] * w
    for x, y in zip(xs, ys):
        for i in range(w):
            xi = x[i]
            b[i] += xi * y
            ai = a[i]
            for j in range(i + 1):
                ai[j] += xi * x[j]
    for i in range(w):
        a[i][i] += l2
        for j in range(i):
            a[j][i] = a[i][j]
    return solve(a, b)


def naive_dp_gd(xs, ys, k, rho, rng=None, steps=NAIVE_STEPS, radius=10.0, l2=1e-3, loss="logistic",
                label_bound=None):
    """Row-level DP full-batch gradient descent, made user-level by group privacy.

    Every row's gradient is bounded by C: logistic, features clipped to X, so
    |(sigmoid - y)(x, 1)| <= sqrt(X^2 + 1) = C; squared, each row's gradient is clipped to the l2
    ball of C = 2 label_bound sqrt(X^2 + 1) (uldp's default gradient_clip); the sum of the
    gradients gets N(0, sigma^2 I), sigma = C / sqrt(2 rho_step): rho_step-zCDP per row and step,
    T steps: T rho_step per row; a user of at most k rows: k^2 T rho_step (group privacy of zCDP),
    which we set to rho. The number of rows N is treated as public (generous to this method).
    Step 1 / H with H the same curvature bound uldp uses, the model is the average of the second
    half of the iterates, projected to the ball of `radius` (as uldp)."""
    w = len(xs[0])
    n = len(xs)
    xn = [math.sqrt(sum(v * v for v in x)) for x in xs]
    cnorm = max(xn)  # = sqrt(X^2 + 1) at most
    c = cnorm if loss == "logistic" else 2 * label_bound * cnorm
    rho_step = rho / (k * k * steps)
    sigma = c / math.sqrt(2 * rho_step)
    ex2 = sum(sum(v * v for v in x) for x in xs) / n
    h = ex2 / 4 if loss == "logistic" else ex2
    eta = 1.0 / (h + l2)
    theta = [0.0] * w
    avg = [0.0] * w
    navg = 0
    for t in range(steps):
        g = [0.0] * w
        for x, y, nx in zip(xs, ys, xn):
            z = dot(theta, x)
            if loss == "logistic":
                r = sigmoid(z) - y
            else:
                r = z - y
                if abs(r) * nx > c:  # per-row gradient clipping
                    r *= c / (abs(r) * nx)
            for i in range(w):
                g[i] += r * x[i]
        theta = [th - eta * ((gi + rng.gauss(0, sigma)) / n + l2 * th) for th, gi in zip(theta, g)]
        nrm = math.sqrt(sum(v * v for v in theta))
        if nrm > radius:
            theta = [v * radius / nrm for v in theta]
        if 2 * t >= steps - 1:
            avg = [a + v for a, v in zip(avg, theta)]
            navg += 1
    return [a / navg for a in avg]


_NAIVE = {}


def _naive_job(job):
    seed, kwargs = job
    return naive_dp_gd(_NAIVE["xs"], _NAIVE["ys"], rng=random.Random(seed), **kwargs)


def naive_runs(xs, ys, seeds, **kwargs):
    """naive_dp_gd once per seed, in JOBS forked processes (the data are inherited, not sent)."""
    _NAIVE["xs"], _NAIVE["ys"] = xs, ys
    jobs = [(sd, kwargs) for sd in seeds]
    if JOBS <= 1:
        return [_naive_job(j) for j in jobs]
    with multiprocessing.get_context("fork").Pool(JOBS) as pool:
        return pool.map(_naive_job, jobs)


def accuracy(theta, feature_radius, test):
    ok = 0
    for x, y in test:
        xx = clip(x, feature_radius) + [1.0]
        ok += (dot(theta, xx) > 0) == (y > 0.5)
    return ok / len(test)


def mse(theta, feature_radius, test):
    s = 0.0
    for x, y in test:
        xx = clip(x, feature_radius) + [1.0]
        s += (dot(theta, xx) - y) ** 2
    return s / len(test)


def mean_sd(v):
    v = [x for x in v if x is not None]
    if not v:
        return None, None
    mu = sum(v) / len(v)
    sd = math.sqrt(sum((x - mu) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return mu, sd


# ------------------------------------------------------------------------------------------------
# part 1: learning
# ------------------------------------------------------------------------------------------------
def dp_models(table, eps, reps, options_list):
    """reps releases of user_dp_sgd per options; returns {name: [model or None]}."""
    stmts = []
    names = []
    for name, opts in options_list:
        for _ in range(reps):
            stmts.append("SELECT user_dp_sgd(x, y, user_id, %r, %r, '%s'::jsonb) FROM %s;"
                         % (eps, EPS_DELTA, json.dumps(opts), table))
            names.append(name)
    out = psql("\n".join(stmts)).strip().splitlines()
    res = {}
    for name, line in zip(names, out):
        model = json.loads(line) if line.strip() else None
        res.setdefault(name, []).append(model)
    return res


def learning_point(key, n, m, eps, seed, reps, rho_of, test, cache, loss="logistic"):
    """One configuration: accuracy (logistic) or MSE (squared) of every method."""
    dkey = (n, m, seed, loss)
    if dkey not in cache:
        rows = gen_users(n, m, seed, loss)
        table = "train_%s_%d_%d" % (loss[:3], n, m)
        t = time.time()
        load_table(table, rows)
        xr = feature_radius_nonprivate(rows)
        xs = [clip(x, xr) + [1.0] for _, x, _ in rows]
        ys = [y for _, _, y in rows]
        if loss == "logistic":
            base = newton_logistic(xs, ys)
        else:
            base = ols(xs, ys)
        cache.clear()  # keep one data set in memory
        cache[dkey] = dict(rows=len(rows), table=table, xr=xr, xs=xs, ys=ys, base=base,
                           lb=3 * math.sqrt(sorted(y * y for y in ys)[len(ys) // 2]))
        log("  data n=%d m=%d (%d rows) loaded + non-private fit in %.1fs"
            % (n, m, len(rows), time.time() - t))
    data = cache[dkey]
    metric = accuracy if loss == "logistic" else mse
    point = dict(key=key, n=n, m=m, eps=eps, rows=data["rows"], loss=loss,
                 nonpriv=metric(data["base"], data["xr"], test))
    methods = [("uldp", {"loss": loss})]
    if loss == "logistic":
        methods.append(("phased", {"loss": loss, "method": "phased_erm"}))
    t = time.time()
    models = dp_models(data["table"], eps, reps, methods)
    point["dp_seconds"] = (time.time() - t) / (reps * len(methods))
    for name, ms in models.items():
        vals = [metric(md["weights"], md["feature_radius"], test) if md and md.get("weights") else None
                for md in ms]
        point[name] = mean_sd(vals)
        point[name + "_all"] = vals
        point[name + "_unreleased"] = sum(1 for v in vals if v is None)
        if ms and ms[0]:
            point[name + "_model0"] = {k: v for k, v in ms[0].items() if k != "weights"}
    seeds = [seed * 7919 + int(eps * 1000) * 31 + i for i in range(reps)]
    k = 2 * m - 1
    t = time.time()
    if loss == "logistic":
        thetas = naive_runs(data["xs"], data["ys"], seeds, k=k, rho=rho_of[eps])
    else:
        ys = [max(-data["lb"], min(data["lb"], y)) for y in data["ys"]]
        thetas = naive_runs(data["xs"], ys, seeds, k=k, rho=rho_of[eps], loss="squared",
                            label_bound=data["lb"], radius=10 * data["lb"] * max(1, 1 / data["xr"]))
    vals = [metric(th, data["xr"], test) for th in thetas]
    point["naive"] = mean_sd(vals)
    point["naive_all"] = vals
    point["naive_seconds"] = (time.time() - t) / reps
    log("  %s n=%d m=%d eps=%g: nonpriv %.4f uldp %s phased %s naive %s"
        % (key, n, m, eps, point["nonpriv"], point["uldp"], point.get("phased"), point["naive"]))
    return point


def part_learning(reps, rho_of):
    log("part 1: logistic regression")
    test_rows = gen_users(TEST_USERS, BASE_M, 999, "logistic", first_uid=10 ** 7)
    test = [(x, y) for _, x, y in test_rows]
    bayes = sum((dot(TRUE_W, x) + TRUE_B > 0) == (y > 0.5) for x, y in test) / len(test)
    cache = {}
    points = []
    configs = []
    for n in NS:
        configs.append(("users", n, BASE_M, BASE_EPS))
    for m in MS:
        configs.append(("rows", BASE_N, m, BASE_EPS))
    for e in EPSILONS:
        configs.append(("epsilon", BASE_N, BASE_M, e))
    # group by data set so that each is generated and loaded once
    configs.sort(key=lambda c: (c[1], c[2]))
    done = {}
    for key, n, m, e in configs:
        if (n, m, e) in done:
            p = dict(done[(n, m, e)])
            p["key"] = key
        else:
            p = learning_point(key, n, m, e, 1000 + n + m, reps, rho_of, test, cache)
            done[(n, m, e)] = p
        points.append(p)
    log("part 1b: linear regression")
    test_lin = [(x, y) for _, x, y in gen_users(TEST_USERS, BASE_M, 998, "squared", 10 ** 7)]
    lin = []
    cache = {}
    for n in NS:
        lin.append(learning_point("linear", n, BASE_M, BASE_EPS, 2000 + n, reps, rho_of,
                                  test_lin, cache, loss="squared"))
    psql("DO $$DECLARE r record; BEGIN FOR r IN SELECT tablename FROM pg_tables "
         "WHERE tablename LIKE 'train_%' LOOP EXECUTE 'DROP TABLE ' || r.tablename; END LOOP; END$$;")
    return dict(bayes=bayes, test_rows=len(test), points=points, linear=lin)


OPTION_SETS = {
    "logistic": [{}, {"iterations": 20}, {"feature_radius": 4}, {"feature_radius": 6},
                 {"method": "phased_erm"}, {"method": "phased_erm", "phases": 2}],
    "squared": [{}, {"iterations": 20}, {"gradient_clip": 10}, {"gradient_clip": 20},
                {"feature_radius": 5, "gradient_clip": 10}],
}
OPTION_NS = [500, 1000, 2000]


def part_options(reps):
    """user_dp_sgd with a few non-default options (m = 15, eps = 1): which defaults cost accuracy."""
    log("part 1c: options")
    out = []
    for loss in ("logistic", "squared"):
        test = [(x, y) for _, x, y in gen_users(TEST_USERS, BASE_M, 999 if loss == "logistic" else 998,
                                                loss, 10 ** 7)]
        metric = accuracy if loss == "logistic" else mse
        for n in OPTION_NS:
            rows = gen_users(n, BASE_M, (1000 + n + BASE_M) if loss == "logistic" else (2000 + n), loss)
            load_table("probe", rows)
            xr = feature_radius_nonprivate(rows)
            xs = [clip(x, xr) + [1.0] for _, x, _ in rows]
            ys = [y for _, _, y in rows]
            base = newton_logistic(xs, ys) if loss == "logistic" else ols(xs, ys)
            nonpriv = metric(base, xr, test)
            for o in OPTION_SETS[loss]:
                oo = dict(o, loss=loss)
                models = dp_models("probe", BASE_EPS, reps, [("x", oo)])["x"]
                vals = [metric(md["weights"], md["feature_radius"], test)
                        for md in models if md and md.get("weights")]
                md = next((md for md in models if md and md.get("weights")), {})
                mu, sd = mean_sd(vals)
                out.append(dict(loss=loss, n=n, options=o, nonpriv=nonpriv, value=(mu, sd),
                                released=len(vals), step=md.get("step_size"),
                                feature_radius=md.get("feature_radius"),
                                gradient_clip=md.get("gradient_clip")))
                log("  %s n=%d %s: %s (non-private %.4f)" % (loss, n, json.dumps(o), (mu, sd), nonpriv))
    psql("DROP TABLE IF EXISTS probe;")
    return out


# ------------------------------------------------------------------------------------------------
# part 2: vector mean
# ------------------------------------------------------------------------------------------------
MEAN_NS = [500, 1000, 2000, 4000, 8000]
MEAN_DS = [4, 16, 64]
MEAN_M = 10
MEAN_B = 1.0


def part_mean(reps, rho_of):
    log("part 2: vector mean")
    out = []
    for d in MEAN_DS:
        mu = [0.5 / math.sqrt(d)] * d
        radius = math.sqrt(sum(v * v for v in mu)) + MEAN_B
        for n in MEAN_NS:
            rng = random.Random(d * 100003 + n)
            rows = []
            sums = {}
            a = MEAN_B / math.sqrt(d)
            for u in range(n):
                s = [0.0] * d
                for _ in range(MEAN_M):
                    x = [mu[j] + (a if rng.random() < 0.5 else -a) for j in range(d)]
                    rows.append((u, x, None))
                    s = [p + q for p, q in zip(s, x)]
                sums[u] = [v / MEAN_M for v in s]
            rng.shuffle(rows)
            target = [sum(sums[u][j] for u in sums) / n for j in range(d)]
            tau = max(math.sqrt(sum((p - q) ** 2 for p, q in zip(avg, target)))
                      for avg in sums.values())
            load_table("vmean", rows, with_label=False)
            res = {}
            for mode, extra in (("private_tau", ""), ("tau", ", %r" % tau)):
                q = ["SELECT user_dp_mean(x, user_id, 1.0, %r, %r%s) FROM vmean;"
                     % (EPS_DELTA, radius, extra)] * reps
                errs = []
                for line in psql("\n".join(q)).strip().splitlines():
                    v = [float(t) for t in line.strip("{}").split(",") if t]
                    if len(v) != d:
                        errs.append(None)
                        continue
                    errs.append(math.sqrt(sum((p - q2) ** 2 for p, q2 in zip(v, target))))
                good = [e for e in errs if e is not None]
                res[mode] = dict(rmse=math.sqrt(sum(e * e for e in good) / len(good)) if good else None,
                                 unreleased=len(errs) - len(good), all=errs)
            term = math.sqrt(d) * MEAN_B / (n * 1.0 * math.sqrt(MEAN_M))
            sampling = MEAN_B / math.sqrt(MEAN_M * n)  # sqrt(Var/(mn)), Var = E|x - mu|^2 = B^2
            p = dict(d=d, n=n, m=MEAN_M, radius=radius, tau_value=tau, term=term, sampling=sampling,
                     **{k: v for k, v in res.items()})
            log("  d=%d n=%d: rmse private tau %.4g, tau given %.4g, term %.4g"
                % (d, n, res["private_tau"]["rmse"] or float("nan"),
                   res["tau"]["rmse"] or float("nan"), term))
            out.append(p)
    # fitted constant: least squares of log(rmse) = log(c) + log(term), i.e. geometric mean ratio
    fits = {}
    for mode in ("private_tau", "tau"):
        r = [math.log(p[mode]["rmse"] / p["term"]) for p in out if p[mode]["rmse"]]
        fits[mode] = math.exp(sum(r) / len(r))
        # spread of the ratio
        ratios = [p[mode]["rmse"] / p["term"] for p in out if p[mode]["rmse"]]
        fits[mode + "_range"] = (min(ratios), max(ratios))
    psql("DROP TABLE IF EXISTS vmean;")
    return dict(points=out, fits=fits)


# ------------------------------------------------------------------------------------------------
# part 3: time
# ------------------------------------------------------------------------------------------------
TIME_ROWS = [10000, 100000, 300000, 1000000]
TIME_DS = [2, 8, 16, 32, 64]
TIME_DS_ROWS = 100000


def timed(queries, runs):
    """Median ms of each query over `runs` interleaved runs after a warm-up, one session."""
    script = ["SET max_parallel_workers_per_gather = 0;"]
    for q in queries:
        script.append(q + " \\g /dev/null")
    script.append("\\timing on")
    for _ in range(runs):
        for q in queries:
            script.append(q + " \\g /dev/null")
    out = psql("\n".join(script))
    times = [float(t) for t in re.findall(r"Time: ([0-9.]+) ms", out)]
    res = []
    for i in range(len(queries)):
        ts = sorted(times[i::len(queries)])
        res.append(ts[len(ts) // 2])
    return res


def make_time_table(rows, d):
    users = max(rows // 15, 1)
    psql("""DROP TABLE IF EXISTS tt;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE tt AS
  SELECT (hashint4(i) & 2147483647) %% %d AS user_id, x,
         (random() < 1 / (1 + exp(-x[1] + x[2])))::int::float8 AS y
  FROM (SELECT i, ARRAY(SELECT random() * 2 - 1 + 0 * i FROM generate_series(1, %d)) AS x
        FROM generate_series(1, %d) i) s;
ALTER TABLE tt ADD CHECK (cardinality(x) = %d);
VACUUM (FREEZE, ANALYZE) tt;""" % (users, d, rows, d))


def part_time(runs):
    log("part 3: time")
    out = []
    cases = [(r, 8) for r in TIME_ROWS] + [(TIME_DS_ROWS, d) for d in TIME_DS if d != 8]
    for rows, d in sorted(set(cases)):
        make_time_table(rows, d)
        avgs = ", ".join("avg(x[%d])" % (j + 1) for j in range(d))
        q = ["SELECT avg(y), count(*) FROM tt",
             "SELECT user_dp_sgd(x, y, user_id, 1.0, 1e-6, '{\"loss\": \"logistic\"}') FROM tt",
             "SELECT %s FROM tt" % avgs,
             "SELECT user_dp_mean(x, user_id, 1.0, 1e-6, %r) FROM tt" % math.sqrt(d)]
        t = timed(q, runs)
        p = dict(rows=rows, d=d, users=max(rows // 15, 1), avg_label=t[0], sgd=t[1], avg_coords=t[2],
                 vmean=t[3])
        log("  rows=%d d=%d: avg %.1f ms, sgd %.1f ms (x%.1f), coord avgs %.1f ms, vmean %.1f ms (x%.1f)"
            % (rows, d, t[0], t[1], t[1] / t[0], t[2], t[3], t[3] / t[2]))
        out.append(p)
    psql("DROP TABLE IF EXISTS tt;")
    return out


# ------------------------------------------------------------------------------------------------
# part 4: small n and one-hot features
# ------------------------------------------------------------------------------------------------
SMALL_MEAN_NS = [150, 500, 1000, 2000, 4000]
SMALL_MEAN_MU = [0.5, -0.3, 0.2, 0.1]
SMALL_MEAN_B = 0.2          # |z|: the users are concentrated ...
SMALL_MEAN_RADIUS = 4.0     # ... far inside the public ball
SMALL_MEAN_M = 5
SMALL_SGD_NS = [150, 300, 500]
ONEHOT_NS = [150, 2000]
ONEHOT_K = 5                # categories besides the reference one (the zero row)
ONEHOT_LOGIT = [-1.0, 1.5, 0.5, -0.5, 2.0, 0.0]   # per category, the reference first
ONEHOT_REFERENCE_USERS = 0.7                       # users with only reference rows


def naive_mean_rmse(rho, n, d, radius, mean_norm):
    """The naive mean's RMSE to first order: Gaussian noise of variance r^2 / (2 rho_sum) on each
    coordinate of the sum, a count with noise of variance 1 / (2 rho_count), divided: the error
    is (N - m Z) / n.  uldp's split: rho_count = rho / 8, rho_sum = 7 rho / 8."""
    return math.sqrt(d * radius ** 2 / (2 * rho * 7 / 8) + mean_norm ** 2 / (2 * rho / 8)) / n


def vector_rmse(table, n, d, args_sql, target, reps):
    q = ["SELECT user_dp_mean(x, user_id, 1.0, %r, %s) FROM %s;" % (EPS_DELTA, args_sql, table)] * reps
    errs = []
    for line in psql("\n".join(q)).strip().splitlines():
        v = [float(t) for t in line.strip("{}").split(",") if t]
        errs.append(math.sqrt(sum((p - q2) ** 2 for p, q2 in zip(v, target))) if len(v) == d else None)
    good = [e for e in errs if e is not None]
    return dict(rmse=math.sqrt(sum(e * e for e in good) / len(good)) if good else None,
                unreleased=len(errs) - len(good))


def gen_onehot(n, seed, first_uid=0):
    """Users with 1 to 3 rows of one-hot features (the reference category is the zero row); a
    share ONEHOT_REFERENCE_USERS of the users have only reference rows, the others a uniformly
    random other category in each row; the label is Bernoulli(sigmoid(ONEHOT_LOGIT[category]))."""
    rng = random.Random(seed)
    rows = []
    for u in range(n):
        reference = rng.random() < ONEHOT_REFERENCE_USERS
        for _ in range(rng.randint(1, 3)):
            k = 0 if reference else rng.randint(1, ONEHOT_K)
            x = [1.0 if j + 1 == k else 0.0 for j in range(ONEHOT_K)]
            rows.append((first_uid + u, x, 1.0 if rng.random() < sigmoid(ONEHOT_LOGIT[k]) else 0.0))
    rng.shuffle(rows)
    return rows


def part_small(reps, rho_of):
    log("part 4: small n and one-hot features")
    out = dict(mean=[], sgd=[], onehot=[])
    d = len(SMALL_MEAN_MU)
    mean_norm = math.sqrt(sum(v * v for v in SMALL_MEAN_MU))
    for n in SMALL_MEAN_NS:
        rng = random.Random(4000 + n)
        rows, sums = [], {}
        a = SMALL_MEAN_B / math.sqrt(d)
        for u in range(n):
            s = [0.0] * d
            for _ in range(SMALL_MEAN_M):
                x = [m + (a if rng.random() < 0.5 else -a) for m in SMALL_MEAN_MU]
                rows.append((u, x, None))
                s = [p + q for p, q in zip(s, x)]
            sums[u] = [v / SMALL_MEAN_M for v in s]
        target = [sum(sums[u][j] for u in sums) / n for j in range(d)]
        tau = max(math.sqrt(sum((p - q) ** 2 for p, q in zip(avg, target))) for avg in sums.values())
        load_table("smallmean", rows, with_label=False)
        # tau 1e6: the box never beats the ball, so no range: the naive mean, as uldp computes it
        p = dict(n=n, tau_value=tau,
                 theory=naive_mean_rmse(rho_of[1.0], n, d, SMALL_MEAN_RADIUS, mean_norm),
                 naive=vector_rmse("smallmean", n, d, "%r, 1e6" % SMALL_MEAN_RADIUS, target, 2 * reps),
                 private_tau=vector_rmse("smallmean", n, d, "%r" % SMALL_MEAN_RADIUS, target, 2 * reps),
                 tau=vector_rmse("smallmean", n, d, "%r, %r" % (SMALL_MEAN_RADIUS, tau), target, 2 * reps))
        log("  mean n=%d: naive theory %.4f, no range %s, private tau %s, tau given %s"
            % (n, p["theory"], p["naive"]["rmse"], p["private_tau"]["rmse"], p["tau"]["rmse"]))
        out["mean"].append(p)
    psql("DROP TABLE IF EXISTS smallmean;")

    test = [(x, y) for _, x, y in gen_users(TEST_USERS, BASE_M, 999, "logistic", first_uid=10 ** 7)]
    for n in SMALL_SGD_NS:
        rows = gen_users(n, BASE_M, 3000 + n)
        load_table("smallsgd", rows)
        xr = feature_radius_nonprivate(rows)
        base = newton_logistic([clip(x, xr) + [1.0] for _, x, _ in rows], [y for _, _, y in rows])
        models = dp_models("smallsgd", BASE_EPS, reps,
                           [("default", {"loss": "logistic"}),
                            ("public", {"loss": "logistic", "feature_radius": round(xr, 3)})])
        p = dict(n=n, rows=len(rows), xr=xr, nonpriv=accuracy(base, xr, test))
        for name, ms_ in models.items():
            p[name] = mean_sd([accuracy(md["weights"], md["feature_radius"], test)
                               for md in ms_ if md and md.get("weights")])
            p[name + "_feature_radius"] = sorted(set(md["feature_radius"] for md in ms_ if md))
            p[name + "_largest_weight_norm"] = max(math.sqrt(sum(w * w for w in md["weights"]))
                                                   for md in ms_ if md and md.get("weights"))
        log("  sgd n=%d: non-private %.4f, defaults %s (feature_radius %s), public bound %.2f %s"
            % (n, p["nonpriv"], p["default"], p["default_feature_radius"], xr, p["public"]))
        out["sgd"].append(p)
    psql("DROP TABLE IF EXISTS smallsgd;")

    test = [(x, y) for _, x, y in gen_onehot(TEST_USERS, 997, first_uid=10 ** 7)]
    majority = max(sum(y for _, y in test), sum(1 - y for _, y in test)) / len(test)
    for n in ONEHOT_NS:
        rows = gen_onehot(n, 5000 + n)
        load_table("onehot", rows)
        base = newton_logistic([x + [1.0] for _, x, _ in rows], [y for _, _, y in rows])
        models = dp_models("onehot", BASE_EPS, reps, [("default", {"loss": "logistic"})])["default"]
        p = dict(n=n, rows=len(rows), nonpriv=accuracy(base, 1.0, test), constant=majority,
                 default=mean_sd([accuracy(md["weights"], md["feature_radius"], test)
                                  for md in models if md and md.get("weights")]),
                 feature_radius=sorted(set(md["feature_radius"] for md in models if md)))
        log("  one-hot n=%d: non-private %.4f, defaults %s (feature_radius %s), constant %.4f"
            % (n, p["nonpriv"], p["default"], p["feature_radius"], majority))
        out["onehot"].append(p)
    psql("DROP TABLE IF EXISTS onehot;")
    return out


# ------------------------------------------------------------------------------------------------
# plots (gnuplot) and the page
# ------------------------------------------------------------------------------------------------
SVG_TERM = "set terminal svg size 640,420 dynamic enhanced font 'Helvetica,12' background rgb 'white'"
COLORS = {"nonpriv": "#000000", "uldp": "#1f77b4", "phased": "#ff7f0e", "naive": "#d62728",
          "bayes": "#7f7f7f"}
LABEL = {"nonpriv": "non-private", "uldp": "user\\_dp\\_sgd (winsorized)",
         "phased": "user\\_dp\\_sgd phased\\_erm", "naive": "naive row-level DP-GD + group privacy"}


def gnuplot(script, tmp):
    path = os.path.join(tmp, "plot.gp")
    with open(path, "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", path], check=True)


def plot_sweep(points, key, xname, xlabel, ylabel, outfile, tmp, logx, methods, bayes=None,
               title="", logy=False, keypos="bottom right"):
    pts = sorted([p for p in points if p["key"] == key], key=lambda p: p[xname])
    dat = os.path.join(tmp, "%s.dat" % key)
    with open(dat, "w") as f:
        for p in pts:
            cols = [p[xname], p["nonpriv"], 0]
            for mth in methods[1:]:
                mu, sd = p[mth] if p.get(mth) else (None, None)
                cols += [mu if mu is not None else "NaN", sd if sd is not None else "NaN"]
            f.write(" ".join(str(c) for c in cols) + "\n")
    plots = ["'%s' u 1:2 w lp lw 2 pt 7 lc rgb '%s' t '%s'" % (dat, COLORS["nonpriv"], LABEL["nonpriv"])]
    for i, mth in enumerate(methods[1:]):
        c = 4 + 2 * i
        plots.append("'%s' u 1:%d:%d w yerrorlines lw 2 pt %d lc rgb '%s' t '%s'"
                     % (dat, c, c + 1, 5 + 2 * i, COLORS[mth], LABEL[mth]))
    if bayes is not None:
        plots.append("%r w l dt 3 lc rgb '%s' t 'Bayes (true model)'" % (bayes, COLORS["bayes"]))
    script = "\n".join([
        SVG_TERM, "set output '%s'" % outfile,
        "set logscale x" if logx else "",
        "set logscale y" if logy else "",
        "set xrange [%g:%g]" % (pts[0][xname] / 1.4, pts[-1][xname] * 1.4),
        "set xlabel '%s'" % xlabel, "set ylabel '%s'" % ylabel,
        "set title '%s'" % title, "set grid", "set key %s" % keypos,
        "set xtics (%s)" % ", ".join("'%g' %g" % (p[xname], p[xname]) for p in pts),
        "plot " + ", ".join(plots), ""])
    gnuplot(script, tmp)


def plot_mean(mean, outfile, tmp):
    dat = os.path.join(tmp, "mean.dat")
    lines = []
    for d in MEAN_DS:
        lines.append("# d=%d" % d)
        for p in mean["points"]:
            if p["d"] == d:
                lines.append("%g %s %s %g" % (p["term"], p["private_tau"]["rmse"] or "NaN",
                                              p["tau"]["rmse"] or "NaN", p["sampling"]))
        lines.append("\n")
    with open(dat, "w") as f:
        f.write("\n".join(lines))
    plots = []
    pal = ["#1f77b4", "#2ca02c", "#9467bd"]
    for i, d in enumerate(MEAN_DS):
        plots.append("'%s' index %d u 1:2 w lp lw 2 pt 7 lc rgb '%s' t 'd=%d, private tau'"
                     % (dat, i, pal[i], d))
        plots.append("'%s' index %d u 1:3 w lp lw 2 dt 2 pt 6 lc rgb '%s' t 'd=%d, tau given'"
                     % (dat, i, pal[i], d))
    c1, c2 = mean["fits"]["private_tau"], mean["fits"]["tau"]
    plots.append("%g*x w l lc rgb 'black' dt 1 t 'fit %.0f x term (private tau)'" % (c1, c1))
    plots.append("%g*x w l lc rgb 'gray' dt 2 t 'fit %.0f x term (tau given)'" % (c2, c2))
    script = "\n".join([
        SVG_TERM, "set output '%s'" % outfile, "set logscale xy", "set format x '10^{%L}'",
        "set format y '10^{%L}'",
        "set xlabel 'sqrt(d) B / (n eps sqrt(m))'", "set ylabel 'RMS l2 error of the mean'",
        "set title 'user\\_dp\\_mean on vectors, eps=1, delta=1e-6, m=%d, B=%g'" % (MEAN_M, MEAN_B),
        "set grid", "set key top left font ',10'", "plot " + ", ".join(plots), ""])
    gnuplot(script, tmp)


def plot_time(times, outfile, tmp):
    dat1 = os.path.join(tmp, "time_rows.dat")
    dat2 = os.path.join(tmp, "time_d.dat")
    with open(dat1, "w") as f:
        for p in sorted(times, key=lambda p: p["rows"]):
            if p["d"] == 8:
                f.write("%d %g %g %g %g\n" % (p["rows"], p["avg_label"], p["sgd"], p["avg_coords"], p["vmean"]))
    with open(dat2, "w") as f:
        for p in sorted(times, key=lambda p: p["d"]):
            if p["rows"] == TIME_DS_ROWS:
                f.write("%d %g %g %g %g\n" % (p["d"], p["avg_label"], p["sgd"], p["avg_coords"], p["vmean"]))
    series = ("u 1:3 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'user\\_dp\\_sgd (logistic, 50 steps)', "
              "'%s' u 1:5 w lp lw 2 pt 5 lc rgb '#2ca02c' t 'user\\_dp\\_mean (vector)', "
              "'%s' u 1:2 w lp lw 2 dt 2 pt 6 lc rgb 'black' t 'avg(y), count(*)', "
              "'%s' u 1:4 w lp lw 2 dt 2 pt 4 lc rgb 'gray' t 'avg(x[j]) for every j'")
    script = "\n".join([
        "set terminal svg size 900,400 dynamic enhanced font 'Helvetica,11' background rgb 'white'",
        "set output '%s'" % outfile, "set multiplot layout 1,2", "set grid",
        "set logscale xy", "set xlabel 'rows (d = 8, 15 rows per user)'", "set ylabel 'ms (median)'",
        "set key top left font ',9'", "set title 'time vs rows'",
        ("plot '%s' " % dat1) + series % (dat1, dat1, dat1),
        "set xlabel 'features d (%d rows)'" % TIME_DS_ROWS, "set title 'time vs dimension'",
        "set logscale x 2",
        ("plot '%s' " % dat2) + series % (dat2, dat2, dat2), "unset multiplot", ""])
    gnuplot(script, tmp)


def f4(v):
    return "—" if v is None else "%.4f" % v


def ms(p, k):
    v = p.get(k)
    if not v or v[0] is None:
        return "—"
    return "%.4f ± %.4f" % (v[0], v[1])


def write_page(path, res, args):
    L = res["learning"]
    mean = res["mean"]
    times = res["time"]
    pts = L["points"]

    def table(key, xname, xlabel):
        rows = ["| %s | rows | non-private | user_dp_sgd | phased_erm | naive group-DP | gap (user_dp_sgd) |"
                % xlabel, "|---|---|---|---|---|---|---|"]
        for p in sorted([p for p in pts if p["key"] == key], key=lambda p: p[xname]):
            gap = p["nonpriv"] - p["uldp"][0] if p["uldp"][0] is not None else None
            unrel = p.get("uldp_unreleased", 0) + p.get("phased_unreleased", 0)
            rows.append("| %g | %d | %.4f | %s | %s | %s | %s%s |"
                        % (p[xname], p["rows"], p["nonpriv"], ms(p, "uldp"), ms(p, "phased"),
                           ms(p, "naive"), f4(gap), " (%d not released)" % unrel if unrel else ""))
        return "\n".join(rows)

    base = [p for p in pts if p["key"] == "users"]
    target_rows = []
    for p in sorted(base, key=lambda p: p["n"]):
        gap_u = p["nonpriv"] - p["uldp"][0]
        gap_p = p["nonpriv"] - p["phased"][0] if p["phased"][0] is not None else None
        target_rows.append((p["n"], gap_u, gap_p))
    met = [n for n, g, _ in target_rows if n >= 2000 and g <= 0.03]
    big = [(n, g, gp) for n, g, gp in target_rows if n >= 2000]

    lin_rows = ["| users n | rows | OLS test MSE | user_dp_sgd squared | naive group-DP |",
                "|---|---|---|---|---|"]
    for p in res["learning"]["linear"]:
        lin_rows.append("| %d | %d | %.4f | %s | %s |" % (p["n"], p["rows"], p["nonpriv"],
                                                         ms(p, "uldp"), ms(p, "naive")))

    mean_rows = ["| d | users n | term sqrt(d)B/(n eps sqrt(m)) | sampling sqrt(Var/(mn)) | RMSE, private tau | RMSE, tau given | tau |",
                 "|---|---|---|---|---|---|---|"]
    for p in mean["points"]:
        mean_rows.append("| %d | %d | %.2e | %.2e | %s%s | %s%s | %.3f |" % (
            p["d"], p["n"], p["term"], p["sampling"], f4(p["private_tau"]["rmse"]),
            " (%d/%d not released)" % (p["private_tau"]["unreleased"], args.reps) if p["private_tau"]["unreleased"] else "",
            f4(p["tau"]["rmse"]),
            " (%d/%d not released)" % (p["tau"]["unreleased"], args.reps) if p["tau"]["unreleased"] else "",
            p["tau_value"]))

    time_rows = ["| rows | d | users | avg(y), count(*) ms | user_dp_sgd ms | ratio | avg(x[j]) all j ms | user_dp_mean ms | ratio |",
                 "|---|---|---|---|---|---|---|---|---|"]
    for p in sorted(times, key=lambda p: (p["d"] != 8, p["d"], p["rows"])):
        time_rows.append("| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            p["rows"], p["d"], p["users"], p["avg_label"], p["sgd"], p["sgd"] / p["avg_label"],
            p["avg_coords"], p["vmean"], p["vmean"] / p["avg_coords"]))

    pm = [p for p in pts if p["key"] == "rows"]
    m1 = [p for p in pm if p["m"] == 1]
    ph_small = [p for p in base if p["phased"][0] is not None and p["nonpriv"] - p["phased"][0] > 0.03]
    model0 = next((p.get("uldp_model0") for p in base if p["n"] == BASE_N), None)

    text = """# Learning with user-level privacy: accuracy and speed

This page measures how good the models of `user_dp_sgd` are compared with a
non-private fit and with the naive way of getting user-level privacy from a
row-level algorithm, how close the vector `user_dp_mean` gets to the rate of
Levy et al. (2021), and what both cost in time compared with built-in
aggregates; section 5 compares the methods of `user_dp_sgd` with one
another. Sections 1 to 4 — numbers, tables and the SVG figures — were
produced by one command:

```
ULDP_NO_BUILD=1 bash test/bench/bench_learning.sh
```

(leave out `ULDP_NO_BUILD=1` to build and install the extension first). It
starts a throwaway PostgreSQL 15 cluster, runs `test/bench/learning.py` (pure
Python standard library, plots by gnuplot) and rewrites this page,
`doc/img/learning_*.svg` and the raw numbers in
`test/bench/learning_results.json`. This run: %(when)s, %(reps)d releases per
private method and configuration, %(runtime).0f s in all, on %(machine)s.
Section 5 has its own command, header and raw numbers
(`bash test/bench/bench_learning.sh --parts methods`,
`test/bench/learning_methods.json`); each command leaves the other's
sections alone.

## 1. Logistic regression

**Data.** %(d)d features. Every user `u` has a shift `s_u ~ N(0, %(shift)g² I)`; each
of its rows has features `x = s_u + N(0, I)` and label `y ~ Bernoulli(sigmoid(w·x + b))`
with fixed true weights `w = %(w)s`, `b = %(b)g`. Users do not have the same
number of rows: with "m rows per user" a user has uniformly 1 to `2m − 1` rows
(mean `m`, public cap `k = 2m − 1`). The test set is %(test_rows)d rows of
%(test_users)d other users (m = 15); the true model classifies %(bayes).4f of
them correctly (the best any method can hope for).

**Methods.**

* *non-private*: logistic regression fit to convergence by Newton's method
  (ridge 1e-6) on the rows with features clipped to 2.5 × the median of the
  users' root mean square feature norm (computed without noise; uldp's rule
  for squared loss, looser than the 1.5 × that `user_dp_sgd` uses for
  logistic loss).
  Every row counts once, the usual analyst's fit.
* *user_dp_sgd*: `user_dp_sgd(x, y, user_id, eps, 1e-6, '{"loss": "logistic"}')`,
  every other option at its default (winsorized gradient means, 50 steps,
  private feature radius once the noisy count shows enough users for it,
  about 430 at ε = 1, and the typical norm 1 below: see section 4).
* *phased_erm*: the same with `"method": "phased_erm"` (3 phases).
* *naive*: row-level differentially private full-batch gradient descent,
  made user-level by group privacy: per-row gradients are bounded by
  `C = sqrt(X² + 1)` (features clipped to `X` as for the non-private fit), the
  sum of the gradients gets Gaussian noise `N(0, C²/(2 ρ_step))`, %(T)d steps
  (a fixed choice, not tuned per configuration; simulated in Python).
  A row-level `ρ_row`-zCDP algorithm is `k² ρ_row`-zCDP for users of at most
  `k` rows, so to spend the same user-level budget `ρ = uldp.zcdp_rho(ε, 1e-6)`
  as `user_dp_sgd` each step gets `ρ / (k² T)`, with `k = 2m − 1`. The row count
  is treated as public and the step size, projection radius (10) and iterate
  averaging are uldp's: this is generous to the naive method.

Every private point is the mean ± standard deviation over %(reps)d releases
(the noise differs, the data are the same); the accuracy is on the held-out test users.

![accuracy vs users](img/learning_users.svg)

%(table_users)s

![accuracy vs rows per user](img/learning_rows.svg)

%(table_rows)s

![accuracy vs epsilon](img/learning_epsilon.svg)

%(table_eps)s

**The target** (a few thousand users, about 15 rows each, ε = 1: accuracy
within 0.03 of the non-private model): %(target)s

**Reading the figures.**

%(reading)s

Model released at n = %(basen)d, m = 15, ε = 1 (first release; weights left out):
`%(model0)s`.

### Linear regression

Same features and users (m = 15, ε = 1), labels `y = w·x + b + N(0, 1)`;
`user_dp_sgd(..., '{"loss": "squared"}')` with defaults (private label
bound) against ordinary least squares on the clipped rows, and the naive
method with labels clamped to the same (non-private) bound `lb = 3 × median |y|` and
each row's gradient clipped to `2·lb·sqrt(X² + 1)`, a worst case (the largest
residual at the largest norm; `user_dp_sgd` clips each user's average gradient
at `lb/3 · sqrt(s² + 1)`, a typical label at the typical norm `s`, and the
naive method was not re-tuned to a tighter per-row clip, which flatters
`user_dp_sgd` here). Test MSE
on %(test_users)d other users (the noise variance, 1, is the floor):

![linear regression](img/learning_linear.svg)

%(table_lin)s

### Which defaults cost accuracy

The same data (m = 15, ε = 1, %(reps)d releases each) trained with a few
non-default options; test accuracy (logistic, higher is better) and test MSE
(squared, lower is better). The first row of each block is the non-private fit.

%(table_opts)s

%(opts_reading)s

## 2. Vector mean against the rate of Levy et al.

Each user has m = %(mm)d rows `x = μ + z`, `z` uniform on the corners of the
cube `{±B/sqrt(d)}^d` (so `|z| = B = %(B)g`), `μ = (0.5/sqrt(d), …)`; the
release is `user_dp_mean(x, user_id, 1.0, 1e-6, radius)` with `radius = |μ| + B`
(no row is clipped), with and without `tau` (given: the largest distance of a
user average from the mean of the user averages, listed below; the typical
distance is `B/sqrt(m)` = 0.32), and the
error is the l2 distance to the mean of the user averages (the sampling error
`sqrt(Var/(mn))` of Corollary 1 is therefore not part of it; it is listed for
scale). Corollary 1 of Levy et al. (2021) bounds the privacy part of the squared
error by `Õ(d B² / (m n² ε²))`, i.e. the RMS error by a constant (and log factors)
times `sqrt(d) B / (n ε sqrt(m))`. RMS over %(reps)d releases:

![vector mean error](img/learning_mean.svg)

%(table_mean)s

Least-squares fit in log-log space with slope 1 (the geometric mean of
error / term): **RMSE ≈ %(c1).1f × sqrt(d) B / (n ε sqrt(m))** with private
`tau` (ratio range %(c1lo).1f–%(c1hi).1f over the points) and **≈ %(c2).1f ×** with `tau`
given (range %(c2lo).1f–%(c2hi).1f). %(mean_reading)s

## 3. Time

Tables of random features in [−1, 1]^d with about 15 rows per user (user id
`hash(i) mod rows/15`), all cached; median of %(runs)d runs after a warm-up, in
one session, interleaved, serial (`max_parallel_workers_per_gather = 0`: the
uldp aggregates have no combine function, so they always run in one process,
while `avg` could use parallel workers). The vector `user_dp_mean` is faster than the d
separate `avg(x[j])` because those take the array apart once per coordinate.
`user_dp_sgd` is logistic with the
default 50 steps; `user_dp_mean` gets `radius = sqrt(d)`. The built-in
comparisons are `SELECT avg(y), count(*) FROM t` and
`SELECT avg(x[1]), …, avg(x[d]) FROM t`.

![time](img/learning_time.svg)

%(table_time)s

%(time_reading)s

## 4. Small n and one-hot features

The private choices of these releases — the per-coordinate ranges of the
vector mean, its radius when none is given, and the scales of `user_dp_sgd`
— are selections that land on the data only once `n·ε` is a few dozen.
Each is therefore used only when the noisy count of users (already paid
for) shows enough users for it to miss the data with probability at most
10^-6 (the scales of `user_dp_sgd`: to leave the users' central half with
probability at most 10^-3), whatever the data
([privacy.md](privacy.md#small-n-decisions-from-the-noisy-count) derives
this and lists the users needed). Below that, the vector mean is the
naive mean (each user clipped to the public ball, Gaussian noise on the sum,
a noisy count), `user_dp_sgd` takes the typical feature norm and label to be
1, and what those selections would have cost goes to the sum or the steps.

**Vector mean.** Dimension %(sm_d)d, m = %(sm_m)d rows per user `x = μ + z`,
`μ = %(sm_mu)s`, `z` uniform on the corners of the cube of radius
`B = %(sm_b)g`, so the users are concentrated far inside the public ball
`radius = %(sm_r)g`; ε = 1, δ = 1e-6, %(sm_reps)d releases per point. The naive
RMSE is computed from the noise scales, `sqrt(d r² / (2 ρ_sum) + |μ|² / (2 ρ_count)) / n`
with uldp's split (ρ_count = ρ/8, ρ_sum = 7ρ/8); "no range" is the release
with `tau` = 10^6, whose box never beats the ball, measured.

%(table_small_mean)s

%(small_mean_reading)s

**user_dp_sgd at small n.** The logistic data of section 1 (m = 15, ε = 1),
%(reps)d releases each: the defaults against the same mechanism given the
public feature bound `X` of the non-private fit (`"feature_radius": X`; with
it and without `tau`, `user_dp_sgd` is the naive mechanism: per-user average
gradients clipped to `sqrt(X² + 1)`, Gaussian noise, full-batch descent).

%(table_small_sgd)s

%(small_sgd_reading)s

**One-hot features.** %(oh_k)d categories one-hot encoded, the reference
category the zero row; %(oh_ref).0f%% of the users have only reference rows,
the others a random other category in each of their 1 to 3 rows; the label is
Bernoulli(sigmoid(%(oh_logit)s)) by category (the reference first). The median over users of
their feature norm is therefore 0; `user_dp_sgd` takes it over each user's
non-zero rows and falls back to 1 (a one-hot row's norm) when it is still 0,
so the default feature radius is 1.5 where it used to be 10^-50 and the model
a constant (which classifies %(oh_const).4f of the test rows correctly).

%(table_onehot)s

## Caveats

* Synthetic data with a known, well-specified logistic model; real data are
  messier, and the private feature radius and default step may suit them less.
* The naive baseline is simulated in Python with a public row count; it is an
  optimistic version of what one would get by running a row-level DP-SGD
  library and multiplying its budget by group privacy.
* The timings are of one machine (%(machine)s) with other work possibly
  running; ratios within one run are more meaningful than absolute numbers.
"""
    # reading paragraphs
    reading = []
    b2 = next(p for p in base if p["n"] == BASE_N)
    reading.append("* At n = %d, m = 15, ε = 1 the non-private model reaches %.4f, "
                   "`user_dp_sgd` %.4f (gap %.4f), phased_erm %s and the naive method %s."
                   % (BASE_N, b2["nonpriv"], b2["uldp"][0], b2["nonpriv"] - b2["uldp"][0],
                      f4(b2["phased"][0]), f4(b2["naive"][0])))
    uniq = list({(p["n"], p["m"], p["eps"]): p for p in pts}.values())
    ph_below = [p for p in uniq if p["phased"][0] is not None and p["uldp"][0] is not None
                and p["phased"][0] < p["uldp"][0]]
    reading.append("* phased_erm is below the default method in %d of the %d configurations "
                   "measured; its gap to non-private exceeds 0.03 at n = %s (m = 15, ε = 1). "
                   "Each phase trains on a random part of the users only (half, a quarter, ...), "
                   "with its own noisy count, so it needs many more users than the default "
                   "method to reach the same accuracy; it is not the method to use at these sizes."
                   % (len(ph_below), len(uniq), ", ".join(str(p["n"]) for p in ph_small) or "none"))
    if m1:
        p = m1[0]
        reading.append("* With one row per user (m = 1) user-level and row-level privacy coincide "
                       "(k = 1): there the naive method is %s against %s for `user_dp_sgd` "
                       "(plain Gaussian noise on the rows' gradients in %d steps against uldp's private "
                       "scales, count and 50 winsorized steps)."
                       % (f4(p["naive"][0]), f4(p["uldp"][0]), NAIVE_STEPS))
    def cfgs(lst):
        return ", ".join("(n = %d, m = %d, ε = %g)" % (p["n"], p["m"], p["eps"]) for p in lst) or "none"

    naive_above = [p for p in uniq if p["naive"][0] > p["uldp"][0]]
    naive_below = [p for p in uniq if p["naive"][0] < p["uldp"][0] - 0.01]
    pm50 = [p for p in pm if p["m"] == 50]
    if pm50:
        p = pm50[0]
        reading.append("* With m = 50 (k = 99) the naive method is at %s and `user_dp_sgd` at %s. "
                       "The naive method's noise on the mean gradient is proportional to k / N ≈ "
                       "(2m − 1) / (n m) ≈ 2 / n, about twice that of a user-level method whose noise "
                       "is proportional to 1 / n, for every m: with these rows-per-user counts "
                       "(at most twice the mean) group privacy costs about a factor 4 in budget, "
                       "which is not much: the naive method is above `user_dp_sgd` at %s, and "
                       "below it by more than 0.01 at %s. With heavier-tailed counts (a few users "
                       "with very many rows, k ≫ m) the naive method would lose more."
                       % (f4(p["naive"][0]), f4(p["uldp"][0]), cfgs(naive_above), cfgs(naive_below)))
    pe = sorted([p for p in pts if p["key"] == "epsilon"], key=lambda p: p["eps"])
    reading.append("* Across ε (n = %d): `user_dp_sgd` gap to non-private %s."
                   % (BASE_N, ", ".join("%.4f at ε = %g" % (p["nonpriv"] - p["uldp"][0], p["eps"])
                                        for p in pe if p["uldp"][0] is not None)))

    if met:
        target = ("**met** for n ≥ %d: the gaps of `user_dp_sgd` (default options) are %s."
                  % (min(met), ", ".join("%.4f at n = %d" % (g, n) for n, g, _ in big)))
    else:
        target = ("**not met** at n ≥ 2000 with the default options: gaps %s."
                  % ", ".join("%.4f at n = %d" % (g, n) for n, g, _ in big))
    target += (" phased_erm: %s." % ", ".join("%s at n = %d" % (f4(gp), n) for n, _, gp in big))

    r1 = mean["fits"]["private_tau_range"]
    r2 = mean["fits"]["tau_range"]
    fr = mean["fits"]["private_tau"] / mean["fits"]["tau"]
    mean_reading = ("Below the users the private ranges need (the noisy count must show about "
                    "740 users for d = 4, 1460 for d = 16 and 2980 for d = 64 at ε = 1, see section 4), "
                    "and wherever the box is not smaller than the ball, the release is the naive mean "
                    "with or without `tau`. ")
    mean_reading += (("Giving `tau` changes the error little here (private / given = %.2f on "
                     "average): the privately chosen range is about as tight as the given one. "
                     % fr) if fr < 1.2 else
                    ("Giving `tau` lowers the error by a factor of about %.1f on average. " % fr))
    mean_reading += ("The ratio of error to term stays within a band of %.1f to %.1f across "
                     "d = 4 to 64 and n = 500 to 8000, so the error scales like the rate; the constant "
                     "includes the log factors the Õ hides and the share of the budget spent on the "
                     "private count and range. The privacy error (private tau) is above the sampling error "
                     "`sqrt(Var/(mn))` (the table's fourth column) in %d of the %d points: at "
                     "ε = 1 and m = 10 privacy, not sampling, dominates the error of the mean."
                     % (min(r1[0], r2[0]), max(r1[1], r2[1]),
                        sum(1 for p in mean["points"] if (p["private_tau"]["rmse"] or 0) > p["sampling"]),
                        len(mean["points"])))

    t8 = sorted([p for p in times if p["d"] == 8], key=lambda p: p["rows"])
    tl = t8[-1]
    td = sorted([p for p in times if p["rows"] == TIME_DS_ROWS], key=lambda p: p["d"])
    time_reading = ("At %d rows (d = 8) `user_dp_sgd` takes %.0f ms, %.1f × `avg(y), count(*)`; "
                    "`user_dp_mean` takes %.0f ms, %.1f × the %d coordinate averages. "
                    "At %d rows, from d = %d to d = %d `user_dp_sgd` goes from %.0f to %.0f ms "
                    "and `user_dp_mean` from %.0f to %.0f ms."
                    % (tl["rows"], tl["sgd"], tl["sgd"] / tl["avg_label"], tl["vmean"],
                       tl["vmean"] / tl["avg_coords"], 8, TIME_DS_ROWS, td[0]["d"], td[-1]["d"],
                       td[0]["sgd"], td[-1]["sgd"], td[0]["vmean"], td[-1]["vmean"]))

    opts = res["options"]
    opt_rows = []
    for loss in ("logistic", "squared"):
        sub = [o for o in opts if o["loss"] == loss]
        ns = sorted(set(o["n"] for o in sub))
        opt_rows.append("| %s: options | %s |" % (loss, " | ".join("n = %d" % n for n in ns)))
        opt_rows.append("|---|" + "---|" * len(ns))
        opt_rows.append("| non-private | %s |" % " | ".join(
            "%.4f" % next(o["nonpriv"] for o in sub if o["n"] == n) for n in ns))
        seen = []
        for o in sub:
            if o["options"] not in seen:
                seen.append(o["options"])
        for op in seen:
            cells = []
            for n in ns:
                o = next(o for o in sub if o["n"] == n and o["options"] == op)
                cells.append("%.4f ± %.4f" % tuple(o["value"]) if o["value"][0] is not None else "—")
            opt_rows.append("| `%s` | %s |" % (json.dumps(op) if op else "defaults", " | ".join(cells)))
        opt_rows.append("")

    def optval(loss, n, op):
        return next(o["value"][0] for o in opts if o["loss"] == loss and o["n"] == n and o["options"] == op)

    dflt_lg = next(o for o in opts if o["loss"] == "logistic" and o["options"] == {})
    dflt_sq = next(o for o in opts if o["loss"] == "squared" and o["options"] == {})
    opts_reading = "\n".join([
        "* Logistic: the private default feature radius is 1.5 × the median root mean square "
        "feature norm (here X ≈ %.1f), and per-user gradients are clipped at %.1f. "
        "`\"feature_radius\": 4` gives %.4f at n = 500 against %.4f by default, and %.4f "
        "against %.4f at n = 1000."
        % (dflt_lg["feature_radius"], dflt_lg["gradient_clip"],
           optval("logistic", 500, {"feature_radius": 4}), optval("logistic", 500, {}),
           optval("logistic", 1000, {"feature_radius": 4}), optval("logistic", 1000, {})),
        "* Squared loss: the default gradient clip, a typical label at the typical feature "
        "norm (%.1f here), against `\"gradient_clip\": 10`: test MSE %.3f against %.3f at "
        "n = 500, %.4f against %.4f at n = 2000 (OLS: 1.00). (An earlier default, the worst "
        "case `2·label_bound·sqrt(feature_radius² + 1)`, about 120 here, gave 18 at n = 500.)"
        % (dflt_sq["gradient_clip"], optval("squared", 500, {}),
           optval("squared", 500, {"gradient_clip": 10}), optval("squared", 2000, {}),
           optval("squared", 2000, {"gradient_clip": 10})),
        "* `\"iterations\": 20` instead of 50, logistic: %s. phased_erm against the default "
        "method: %s; with 2 phases instead of 3: %s."
        % (", ".join("%.4f vs %.4f at n = %d" % (optval("logistic", n, {"iterations": 20}),
                                                 optval("logistic", n, {}), n) for n in OPTION_NS),
           ", ".join("%.4f vs %.4f at n = %d" % (optval("logistic", n, {"method": "phased_erm"}),
                                                 optval("logistic", n, {}), n) for n in OPTION_NS),
           ", ".join("%.4f at n = %d" % (optval("logistic", n, {"method": "phased_erm", "phases": 2}), n)
                     for n in OPTION_NS)),
    ])

    small = res["small"]
    sm_rows = ["| users n | naive RMSE (from its noise) | no range, measured | private tau | tau given (value) |",
               "|---|---|---|---|---|"]
    for p in small["mean"]:
        sm_rows.append("| %d | %.4f | %s | %s | %s (%.3f) |" % (
            p["n"], p["theory"], f4(p["naive"]["rmse"]), f4(p["private_tau"]["rmse"]),
            f4(p["tau"]["rmse"]), p["tau_value"]))
    worse = [p for p in small["mean"] if max(p["private_tau"]["rmse"], p["tau"]["rmse"]) > 1.5 * p["theory"]]
    gain = [p for p in small["mean"] if p["private_tau"]["rmse"] < 0.5 * p["theory"]]
    small_mean_reading = (
        "With private or given `tau` the error is never more than 1.5 × the naive RMSE (%s). "
        "At %s users private `tau` is the naive mean (the ranges need about 740 users here); "
        "from %s users the ranges are used and the error drops to %s, "
        "because the box that winsorizes each coordinate is far smaller than the ball. "
        "A given `tau` needs fewer users (its bins are fewer keys than the private centres)."
        % ("exceptions: " + ", ".join("n = %d" % p["n"] for p in worse) if worse else "no exception",
           ", ".join(str(p["n"]) for p in small["mean"] if p["private_tau"]["rmse"] >= 0.5 * p["theory"]),
           gain[0]["n"] if gain else "no n measured",
           ", ".join("%.0f%% of the naive RMSE at n = %d" % (100 * p["private_tau"]["rmse"] / p["theory"], p["n"])
                     for p in gain) or "—"))
    ss_rows = ["| users n | rows | non-private | defaults | their feature_radius | public bound X | with X | largest weight norm (defaults) |",
               "|---|---|---|---|---|---|---|---|"]
    for p in small["sgd"]:
        ss_rows.append("| %d | %d | %.4f | %s | %s | %.2f | %s | %.2f |" % (
            p["n"], p["rows"], p["nonpriv"], ms(p, "default"),
            ", ".join("%g" % v for v in p["default_feature_radius"]), p["xr"], ms(p, "public"),
            p["default_largest_weight_norm"]))
    fallback = [p for p in small["sgd"] if p["default_feature_radius"] == [1.5]]
    private = [p for p in small["sgd"] if p not in fallback]
    small_sgd_reading = (
        "At n = %s, below the users the private feature radius needs (about 430 at ε = 1, "
        "δ = 1e-6), the defaults clip rows to 1.5, a stronger clip than the public bound, which "
        "means less noise: %s against %s with the public bound. At n = %s they choose it "
        "privately: %s against %s. Every weight vector lies in the ball of radius 10."
        % (", ".join(str(p["n"]) for p in fallback) or "none",
           ", ".join(f4(p["default"][0]) for p in fallback) or "—",
           ", ".join(f4(p["public"][0]) for p in fallback) or "—",
           ", ".join(str(p["n"]) for p in private) or "none",
           ", ".join(f4(p["default"][0]) for p in private) or "—",
           ", ".join(f4(p["public"][0]) for p in private) or "—"))
    oh_rows = ["| users n | rows | non-private | defaults | their feature_radius | constant model |",
               "|---|---|---|---|---|---|"]
    for p in small["onehot"]:
        oh_rows.append("| %d | %d | %.4f | %s | %s | %.4f |" % (
            p["n"], p["rows"], p["nonpriv"], ms(p, "default"),
            ", ".join("%g" % v for v in p["feature_radius"]), p["constant"]))

    vals = dict(
        table_small_mean="\n".join(sm_rows), small_mean_reading=small_mean_reading,
        sm_d=len(SMALL_MEAN_MU), sm_m=SMALL_MEAN_M, sm_mu="(" + ", ".join("%g" % v for v in SMALL_MEAN_MU) + ")",
        sm_b=SMALL_MEAN_B, sm_r=SMALL_MEAN_RADIUS, sm_reps=2 * res["reps"],
        table_small_sgd="\n".join(ss_rows), small_sgd_reading=small_sgd_reading,
        table_onehot="\n".join(oh_rows), oh_k=ONEHOT_K, oh_ref=100 * ONEHOT_REFERENCE_USERS,
        oh_logit="(" + ", ".join("%g" % v for v in ONEHOT_LOGIT) + ")",
        oh_const=small["onehot"][0]["constant"],
        table_opts="\n".join(opt_rows), opts_reading=opts_reading,
        when=res["when"], reps=res["reps"],
        runtime=res["runtime"], machine=res["machine"], d=D, shift=SHIFT_SD,
        w="(" + ", ".join("%g" % v for v in TRUE_W) + ")", b=TRUE_B,
        test_rows=L["test_rows"], test_users=TEST_USERS, bayes=L["bayes"], T=NAIVE_STEPS,
        table_users=table("users", "n", "users n"), table_rows=table("rows", "m", "rows per user m"),
        table_eps=table("epsilon", "eps", "ε"), target=target, reading="\n".join(reading),
        basen=BASE_N, model0=json.dumps(model0), table_lin="\n".join(lin_rows), mm=MEAN_M, B=MEAN_B,
        table_mean="\n".join(mean_rows), c1=mean["fits"]["private_tau"], c2=mean["fits"]["tau"],
        c1lo=r1[0], c1hi=r1[1], c2lo=r2[0], c2hi=r2[1], mean_reading=mean_reading,
        runs=args.runs, table_time="\n".join(time_rows), time_reading=time_reading)
    with open(path, "w") as f:
        f.write(text % vals)


def machine_facts():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ver = psql("SELECT current_setting('server_version')", db="postgres").strip()
    return "%d cores (%s), PostgreSQL %s, Python %s" % (os.cpu_count() or 0, cpu, ver,
                                                         platform.python_version())


OLD_PARTS = ["learning", "options", "mean", "time", "small"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "doc"))
    ap.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "learning_results.json"))
    ap.add_argument("--parts", default=",".join(OLD_PARTS),
                    help="comma-separated: %s (the default) and methods (section 5, run on its "
                         "own: at most about 50 minutes with five methods)" % ",".join(OLD_PARTS))
    ap.add_argument("--replot", action="store_true", help="only redraw (and rewrite the page) "
                    "from --json, or from --methods-json for the methods part")
    g = ap.add_argument_group("the methods part (section 5)")
    g.add_argument("--methods", default=",".join(learning_methods.ALL_METHODS),
                   help="user_dp_sgd methods to compare (default: %(default)s); one the server "
                        "does not know is reported as absent")
    g.add_argument("--quick", action="store_true",
                   help="development run: n = %s, m = %s, %d releases per cell (about a minute)"
                        % (learning_methods.QUICK["ns"], learning_methods.QUICK["ms"],
                           learning_methods.QUICK["reps"]))
    g.add_argument("--method-reps", type=int, default=0,
                   help="releases per method and cell (default %d, %d with --quick)"
                        % (learning_methods.FULL["reps"], learning_methods.QUICK["reps"]))
    g.add_argument("--method-runs", type=int, default=3, help="runs per query with jit on")
    g.add_argument("--jit", choices=["auto", "always", "never"], default="auto",
                   help="time with jit on too: where the plan reaches jit_above_cost (auto), "
                        "everywhere, or nowhere")
    g.add_argument("--ns", help="users, comma-separated (default %s)" % learning_methods.FULL["ns"])
    g.add_argument("--ms", help="mean rows per user, comma-separated (default %s)"
                   % learning_methods.FULL["ms"])
    g.add_argument("--losses", default="logistic,squared")
    g.add_argument("--counts", choices=["uniform", "fixed"], default="uniform",
                   help="rows per user: uniform on 1..2m-1 (as section 1) or exactly m")
    g.add_argument("--methods-json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "learning_methods.json"))
    args = ap.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    bad = [p for p in parts if p not in OLD_PARTS + ["methods"]]
    if bad:
        sys.exit("unknown part(s) %s: use %s or methods" % (",".join(bad), ",".join(OLD_PARTS)))
    old = [p for p in parts if p in OLD_PARTS]
    if shutil.which("gnuplot") is None:
        sys.exit("gnuplot not found (apt-get install gnuplot-nox)")
    out_dir = os.path.abspath(args.out_dir)
    img = os.path.join(out_dir, "img")
    os.makedirs(img, exist_ok=True)

    res = mres = None
    if args.replot:
        if old:
            with open(args.json) as f:
                res = json.load(f)
        if "methods" in parts:
            with open(args.methods_json) as f:
                mres = json.load(f)
    else:
        psql("DROP DATABASE IF EXISTS %s;" % DB, db="postgres")
        psql("CREATE DATABASE %s;" % DB, db="postgres")
        psql("CREATE EXTENSION uldp;\nSELECT uldp.set_budget(current_user::regrole, 1e9, 1);")
        machine = machine_facts()
        if old:
            rho_of = {}
            for e in sorted(set(EPSILONS + [BASE_EPS])):
                rho_of[e] = float(psql("SELECT uldp.zcdp_rho(%r, %r);" % (e, EPS_DELTA)).strip())
            res = dict(rho=rho_of, machine=machine, reps=args.reps, runs=args.runs,
                       when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
            if "learning" in parts:
                res["learning"] = part_learning(args.reps, rho_of)
            if "options" in parts:
                res["options"] = part_options(args.reps)
            if "mean" in parts:
                res["mean"] = part_mean(args.reps, rho_of)
            if "time" in parts:
                res["time"] = part_time(args.runs)
            if "small" in parts:
                res["small"] = part_small(args.reps, rho_of)
            res["runtime"] = time.time() - T0 + float(os.environ.get("ULDP_LEARN_SETUP_SECONDS", "0"))
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        if "methods" in parts:
            mres = learning_methods.part_methods(
                args, DB, "ULDP_LEARN_PSQL", log,
                dict(w=TRUE_W, b=TRUE_B, shift=SHIFT_SD, noise=NOISE_SD), machine)
            with open(args.methods_json, "w") as f:
                json.dump(mres, f, indent=1)
        psql("DROP DATABASE IF EXISTS %s;" % DB, db="postgres")

    with tempfile.TemporaryDirectory() as tmp:
        L = res.get("learning") if res else None
        if L:
            meths = ["nonpriv", "uldp", "phased", "naive"]
            plot_sweep(L["points"], "users", "n", "users n (m = 15, eps = 1)", "test accuracy",
                       os.path.join(img, "learning_users.svg"), tmp, True, meths, L["bayes"],
                       "logistic regression: accuracy vs users")
            plot_sweep(L["points"], "rows", "m", "rows per user m (n = 2000, eps = 1)", "test accuracy",
                       os.path.join(img, "learning_rows.svg"), tmp, True, meths, L["bayes"],
                       "logistic regression: accuracy vs rows per user")
            plot_sweep(L["points"], "epsilon", "eps", "epsilon (n = 2000, m = 15)", "test accuracy",
                       os.path.join(img, "learning_epsilon.svg"), tmp, True, meths, L["bayes"],
                       "logistic regression: accuracy vs epsilon")
            plot_sweep(L["linear"], "linear", "n", "users n (m = 15, eps = 1)", "test MSE",
                       os.path.join(img, "learning_linear.svg"), tmp, True,
                       ["nonpriv", "uldp", "naive"], None, "linear regression: test MSE vs users",
                       logy=True, keypos="top right")
        if res and res.get("mean"):
            plot_mean(res["mean"], os.path.join(img, "learning_mean.svg"), tmp)
        if res and res.get("time"):
            plot_time(res["time"], os.path.join(img, "learning_time.svg"), tmp)
        if mres:
            learning_methods.plot_methods(mres, img, tmp, gnuplot, SVG_TERM)
    page = os.path.join(out_dir, "learning.md")
    if res and all(k in res for k in OLD_PARTS):
        args.reps = res.get("reps", args.reps)
        args.runs = res.get("runs", args.runs)
        kept = learning_methods.old_block(page)  # section 5 has its own command: keep it
        write_page(page, res, args)
        if kept:
            learning_methods.splice(page, kept)
        log("wrote %s" % page)
    if mres:
        learning_methods.splice(page, learning_methods.section(mres))
        log("wrote section 5 of %s" % page)


if __name__ == "__main__":
    main()

"""test/bench/ladder_law.py -- the expected error of user_dp_mean and user_dp_sum without bounds,
computed from the law of the ladder's selection instead of measured from releases.

For the data of accuracy_releases.py's heavy tails (and three light-tailed shapes), the centre and
the scale are taken at their non-private values (the median, the median distance); every ladder
step j then has its exact selection probability (prior exp(-decay j) times exp(-eps_ladder B_j),
B_j the users beyond it), its clipping bias and the noise the rest of eps puts on the clipped sum
(and, for the mean, on the count), and the RMSE is the root of the probability-weighted mean
square error.  The ratio is against the same best fixed clipping as accuracy_releases.py.  It
tunes shares and priors in seconds where measuring 1000 releases per cell takes minutes, and
its ratios do not move between runs (measured ones do: a rare selection far above the data
dominates a measured RMSE).

Usage: /usr/bin/python3 test/bench/ladder_law.py [--ladder 0.3] [--median 0.02] [--decay 1.25]
           [--sum-ladder 0.25] [--steps 2] [--sum-multiplier 1]
(decay: the prior's log-decay per half-octave; steps: ladder steps per octave; sum-multiplier:
the sum clips at this multiple of the selected step; the defaults are uldp's)
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import naive_law  # noqa: E402
from accuracy_releases import (TAIL_DISTRIBUTIONS, best_mean_clipping,  # noqa: E402
                               best_sum_clipping, tail_values)

COUNT_SHARE = 0.05      # ULDP_CLIPPING_COUNT_SHARE
SUM_SCALE_SHARE = 0.02  # the sum's scale at these n


def values(dist, param, n):
    if dist in ("lognormal", "pareto"):
        return tail_values(dist, param, n)
    rng = np.random.default_rng(1300 + n)
    if dist == "normal":
        return np.clip(50 + 10 * rng.standard_normal(n), 0, None)
    if dist == "exponential":
        return rng.exponential(10, n)
    return rng.random(n) * 100   # uniform


def selection(beyond, decay, eps_ladder):
    log_weight = -eps_ladder * beyond - decay * np.arange(len(beyond))
    weight = np.exp(log_weight - log_weight.max())
    return weight / weight.sum()


def ladder(scale, steps):
    return scale * 2.0 ** (np.arange(64 * steps + 1) / steps)


def sum_rmse(x, a):
    eps_ladder = a.sum_ladder
    rest = 1 - COUNT_SHARE - SUM_SCALE_SHARE - eps_ladder
    magnitude = np.sort(np.abs(x))
    t = ladder(float(np.median(magnitude)), a.steps)
    beyond = len(x) - np.searchsorted(magnitude, t, side="right")
    # the sum clips at a multiple of the selected step (uldp: 1)
    u = t * a.sum_multiplier
    clipped = len(x) - np.searchsorted(magnitude, u, side="right")
    top = np.concatenate([[0.0], np.cumsum(magnitude[::-1])])
    bias = top[clipped] - clipped * u
    p = selection(beyond, a.decay, eps_ladder)
    noise = np.array([naive_law.sum_noise_sd(0.0, float(v), rest) for v in u])
    return math.sqrt(float((p * (bias ** 2 + noise ** 2)).sum()))


def mean_rmse(x, a):
    n = len(x)
    mu = float(x.mean())
    centre = float(np.median(x))
    eps_ladder = min(a.ladder, 0.7 - COUNT_SHARE - 2 * a.median - COUNT_SHARE)
    rest = 1 - COUNT_SHARE - 2 * a.median - COUNT_SHARE - eps_ladder
    distance = np.sort(np.abs(x - centre))
    t = ladder(float(np.median(distance)), a.steps)
    beyond = n - np.searchsorted(distance, t, side="right")
    p = selection(beyond, a.decay, eps_ladder)
    total = 0.0
    for j in np.nonzero(p > 1e-12)[0]:
        clipped = np.clip(x, centre - t[j], centre + t[j])
        # the noisy centred sum (rest) over the count drawn first (COUNT_SHARE)
        sum_sd = naive_law.sum_noise_sd(0.0, float(t[j]), rest)
        count_sd = math.sqrt(2) / COUNT_SHARE
        error2 = ((clipped.mean() - mu) ** 2 + (sum_sd / n) ** 2
                  + (count_sd * (clipped.mean() - centre) / n) ** 2)
        total += p[j] * error2
    return math.sqrt(total)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", type=float, default=0.3)
    parser.add_argument("--median", type=float, default=0.02)
    parser.add_argument("--decay", type=float, default=1.25)
    parser.add_argument("--sum-ladder", type=float, default=0.25)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--sum-multiplier", type=float, default=1.0)
    a = parser.parse_args()
    a.decay *= 2 / a.steps
    print("| values | n | mean ratio | sum ratio |\n|---|---|---|---|")
    for n in (10000, 100000):
        for dist, param in TAIL_DISTRIBUTIONS + [("normal", 0), ("exponential", 0), ("uniform", 0)]:
            x = values(dist, param, n)
            mean = mean_rmse(x, a) / best_mean_clipping(x, 1.0)[0]
            total = sum_rmse(x, a) / best_sum_clipping(x, 1.0)[0]
            name = dist + (" %g" % param if param else "")
            print("| %s | %d | %.2f | %.2f |" % (name, n, mean, total), flush=True)


if __name__ == "__main__":
    main()

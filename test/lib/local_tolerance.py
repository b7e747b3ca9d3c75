#!/usr/bin/python3
"""The error bound of a local mean round (doc/local.md), for tests.

The estimate of a scalar mean round is the average of n reports; a report is the user's projected
mean, randomly rounded to a grid of G = 2^20 levels across [lower, upper] (an error of less than
one level, mean zero), plus discrete Laplace noise Z with P(Z = z) proportional to
exp(-|z| eps' / G), eps' >= eps (1 - 2^-23) (the sampler rounds eps down to 24 bits).
With q = exp(-eps'/G), Z's moment generating function is
    M(l) = (1 - q)^2 / ((1 - q e^l) (1 - q e^-l)),  0 <= l < eps'/G,
so by Chernoff, P(|sum Z| >= s) <= 2 exp(n ln M(l) - l s) for every such l.  This prints the
smallest s/n + 1 (in value units) over l for which that bound is the given failure probability:
|estimate - mean of the projected means| exceeds it with at most that probability.

usage: local_tolerance.py --epsilon E --lower A --upper B --users N --failure P
"""
import argparse
import math

LEVELS = 2 ** 20


def tolerance(epsilon, lower, upper, users, failure):
    a = epsilon * (1 - 2 ** -23) / LEVELS
    log_one_minus_q = math.log(-math.expm1(-a))

    def s_over_n(t):
        lam = a * t
        log_m = 2 * log_one_minus_q - math.log(-math.expm1(lam - a)) - math.log(-math.expm1(-lam - a))
        return (users * log_m - math.log(failure / 2)) / (lam * users)

    # s_over_n is convex in t on (0, 1): golden-section search
    lo, hi = 1e-9, 1 - 1e-9
    for _ in range(200):
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if s_over_n(m1) < s_over_n(m2):
            hi = m2
        else:
            lo = m1
    levels = s_over_n((lo + hi) / 2) + 1
    return levels * (upper - lower) / LEVELS


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--lower", type=float, required=True)
    p.add_argument("--upper", type=float, required=True)
    p.add_argument("--users", type=int, required=True)
    p.add_argument("--failure", type=float, required=True)
    o = p.parse_args()
    print(f"{tolerance(o.epsilon, o.lower, o.upper, o.users, o.failure):.6g}")

"""test/bench/naive_law.py -- the exact error law of uldp's bounded (naive) mean and sum.

The same derivation as test/stat/never_worse.sql (which computes it in SQL), for the benchmarks:
with both bounds [L, U] and no tau, user_dp_mean releases clamp(c + g (S + Z) / max(n + Z', 1),
L, U), Z discrete Laplace of K steps at dl(3 eps' / 4), Z' of 1 step at dl(eps' / 4), c the middle
of the bounds, eps' = eps (1 - 2^-40), dl() = rounded down to 24 significant bits (src/noise.c).
Its error about the mean mu of the clamped user values is, up to the grid (2^-40 of the
half-width), E0 = clamp(A_z + B_z W, L - mu, U - mu) given Z' = z, W standard Laplace,
A_z = (mu - c) (n / m - 1), B_z = g K / (dl(e_s) m), m = max(n + z, 1).  user_dp_sum with bounds
releases the sum of the clamped totals plus discrete Laplace noise of scale max(|L|, |U|) / dl(eps')
(the plain form: with bounds the centred one never has the smaller variance).
"""
import math

MARGIN = 1 - 2.0 ** -40


def dl(x):
    """x rounded down to 24 significant bits, as the sampler does (dyadic_floor)."""
    mantissa, exponent = math.frexp(x)
    return math.floor(mantissa * 2 ** 24) * 2.0 ** (exponent - 24)


def grid(half_width):
    """The grid step and the steps of a half-width (src/release.c, fixed_sum)."""
    g = 2.0 ** (math.frexp(half_width)[1] - 1 - 40)
    return g, math.ceil(half_width / g)


def _exp(x):
    return math.exp(x) if x > -700 else 0.0


def _cdf(t, a, b):
    return 0.5 * _exp((t - a) / b) if t <= a else 1 - 0.5 * _exp(-(t - a) / b)


def _sf(t, a, b):
    return 0.5 * _exp(-(t - a) / b) if t >= a else 1 - 0.5 * _exp((t - a) / b)


def _antiderivative(k, a, b, x, right):
    """of x^k e^(-|x - a| / b) / (2 b), on the side of a that "right" says."""
    e = _exp(-(x - a) / b if right else (x - a) / b)
    if e == 0:
        return 0.0
    s = b if right else -b
    p, coefficient = 0.0, 1.0
    for j in range(k + 1):
        p += coefficient * x ** (k - j)
        coefficient *= (k - j) * s
    return (-0.5 if right else 0.5) * e * p


def clamped_moment(k, a, b, lo, hi):
    """E[clamp(X, lo, hi)^k] for X Laplace of location a and scale b (lo, hi may be None)."""
    total = 0.0
    if lo is not None:
        total += lo ** k * _cdf(lo, a, b)
    if hi is not None:
        total += hi ** k * _sf(hi, a, b)
    x2 = a if hi is None else min(hi, a)
    if lo is None or lo < x2:
        total += _antiderivative(k, a, b, x2, False)
        if lo is not None:
            total -= _antiderivative(k, a, b, lo, False)
    x1 = a if lo is None else max(lo, a)
    if hi is None or x1 < hi:
        if hi is not None:
            total += _antiderivative(k, a, b, hi, True)
        total -= _antiderivative(k, a, b, x1, True)
    return total


def mean_law(n, mu, lower, upper, eps):
    """Components (weight, A, B) of E0 and its clamp (lo, hi), in value units."""
    e = eps * MARGIN
    e_c, e_s = dl(e / 4), dl(e * 3 / 4)
    c = lower / 2 + upper / 2
    g, steps = grid(max(max(upper - c, c - lower), 2.0 ** -1000))
    q = math.exp(-e_c)
    zmax = math.ceil(69 / e_c)
    components = []
    for z in range(-zmax, zmax + 1):
        m = max(n + z, 1)
        components.append(((1 - q) / (1 + q) * q ** abs(z), (mu - c) * (n / m - 1),
                           g * steps / (e_s * m)))
    return components, lower - mu, upper - mu


def mean_moments(n, mu, lower, upper, eps):
    """E[E0] and E[E0^2] of the naive mean's error about mu (the mean of the clamped values)."""
    components, lo, hi = mean_law(n, mu, lower, upper, eps)
    m1 = sum(w * clamped_moment(1, a, b, lo, hi) for w, a, b in components)
    m2 = sum(w * clamped_moment(2, a, b, lo, hi) for w, a, b in components)
    return m1, m2


def mean_rmse(n, mu_clamped, lower, upper, eps, mu_true=None):
    """RMSE of the naive mean about mu_true (default: the clamped mean, i.e. noise only)."""
    m1, m2 = mean_moments(n, mu_clamped, lower, upper, eps)
    bias = 0.0 if mu_true is None else mu_clamped - mu_true
    return math.sqrt(max(m2 + 2 * bias * m1 + bias * bias, 0.0))


def sum_noise_sd(lower, upper, eps):
    """The standard deviation of the naive (plain) sum's noise, in value units."""
    s0 = max(abs(lower), abs(upper))
    g, steps = grid(s0)
    rate = dl(eps * MARGIN) / steps
    return g * math.sqrt(2 * math.exp(-rate)) / -math.expm1(-rate)


def sum_rmse(bias, lower, upper, eps):
    return math.sqrt(sum_noise_sd(lower, upper, eps) ** 2 + bias * bias)

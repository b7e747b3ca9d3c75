#!/usr/bin/env python3
"""test/stat/thresholds.py -- derives every constant hard-coded in test/stat/*.sql.

Pure Python 3 (no scipy here): the chi-square tail is the regularized upper incomplete
gamma function Q(df/2, x/2), computed by its series / continued fraction (Numerical Recipes
6.2) in double precision and checked against the closed forms for df = 1 (erfc) and even df
(Poisson sum) to ~1e-14 relative; quantiles by bisection.  Run:  python3 test/stat/thresholds.py
"""
import bisect
import functools
import math
import struct
from fractions import Fraction

# ---------------------------------------------------------------------------------------------
# distributions


def gammaq(a, x):
    """Regularized upper incomplete gamma Q(a, x)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        ap, s, d = a, 1.0 / a, 1.0 / a
        for _ in range(100000):
            ap += 1
            d *= x / ap
            s += d
            if abs(d) < abs(s) * 1e-17:
                break
        return 1.0 - s * math.exp(-x + a * math.log(x) - gln)
    b = x + 1 - a
    c = 1e300
    d = 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = d if abs(d) > 1e-300 else 1e-300
        c = b + an / c
        c = c if abs(c) > 1e-300 else 1e-300
        d = 1 / d
        de = d * c
        h *= de
        if abs(de - 1) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


def chi2_sf(x, df):
    return gammaq(df / 2, x / 2)


def chi2_isf(p, df):
    """x with P(chi2_df > x) = p (rounded up)."""
    lo, hi = 0.0, 10.0 * df + 400
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
    return hi


def up(x, digits=4):
    """x rounded up to the given number of decimals (thresholds are only ever loosened)"""
    return math.ceil(x * 10 ** digits) / 10 ** digits


def up_sig(x, sig=6):
    """x > 0 rounded up to sig significant digits"""
    e = math.floor(math.log10(x)) - sig + 1
    return math.ceil(x / 10 ** e) * 10 ** e


def self_check():
    for df in (1, 2, 4, 10, 16, 40):
        for x in (5.0, 30.0, 60.0, 100.0):
            if df == 1:
                ref = math.erfc(math.sqrt(x / 2))
            else:
                k = df // 2
                ref = math.exp(-x / 2) * sum((x / 2) ** j / math.factorial(j) for j in range(k))
            assert abs(chi2_sf(x, df) / ref - 1) < 1e-12, (df, x)


def log_binom_pmf(n, k, p):
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def binom_prob_open(n, p, lo, hi):
    """P(lo < X < hi) for X ~ Binomial(n, p)."""
    s = 0.0
    for k in range(max(0, math.floor(lo) + 1), min(n, math.ceil(hi) - 1) + 1):
        s += math.exp(log_binom_pmf(n, k, p))
    return s


def binom_tail_ge(n, p, k0):
    """P(X >= k0) for X ~ Binomial(n, p)."""
    return sum(math.exp(log_binom_pmf(n, k, p)) for k in range(max(k0, 0), n + 1))


def median_of_means_delta(kurt, block, blocks, alpha):
    """The smallest relative tolerance delta (from 0.05, in steps of 0.01) for the median of
    "blocks" block means of z^2, each over "block" draws: a block mean is off by >= delta times
    its expectation with probability <= pb = kurt / (block delta^2) (Chebyshev, kurt =
    Var(z^2) / E[z^2]^2), and the median only if half the blocks are.  Returns (delta, pb)."""
    delta = 0.05
    while True:
        pb = kurt / (block * delta ** 2)
        if pb < 0.5 and binom_tail_ge(blocks, pb, blocks // 2) <= alpha:
            return delta, pb
        delta += 0.01


def pearson_power_failure(n, p_true, p_null, crit):
    """Upper bound on P(X^2 < crit) when counts ~ Multinomial(n, p_true) and X^2 is Pearson's
    statistic against p_null.  For any set A of categories, Cauchy-Schwarz gives
    X^2 >= (O_A - E_A)^2 / E_A, so X^2 < crit implies |O_A - n p_null(A)| < sqrt(crit n p_null(A)),
    whose probability is an exact binomial sum; minimised over single categories, their
    complements and symmetric central runs."""
    k = len(p_true)
    sets = [[j] for j in range(k)] + [[i for i in range(k) if i != j] for j in range(k)]
    mid = k // 2
    sets += [list(range(mid - m, mid + m + 1)) for m in range(0, mid)]
    best = 1.0
    for s in sets:
        a = sum(p_true[j] for j in s)
        b = sum(p_null[j] for j in s)
        if not 0 < b < 1 or not 0 < a < 1:
            continue
        w = math.sqrt(crit * n * b)
        best = min(best, binom_prob_open(n, a, n * b - w, n * b + w))
    return best


def dyadic_floor(x):
    """epsilon rounded down to 24 significant bits, as src/noise.c does."""
    m, e = math.frexp(x)
    return math.floor(math.ldexp(m, 24)) * 2.0 ** (e - 24)


# ---------------------------------------------------------------------------------------------
# noise.sql: discrete Laplace P(z) = (1-q)/(1+q) q^|z|, q = exp(-eps/s)

NOISE_N = 200000
NOISE_SETTINGS = [(1, 1.0, 1), (10, 1.0, 5), (1000, 0.5, 401), (1, 5.0, 1)]  # (s, eps, bin width)
NOISE_ALPHA_GOF = 1e-7
NOISE_ALPHA_MOMENT = 1e-8
NOISE_BLOCKS, NOISE_BLOCK = 100, 2000   # median of means of z^2


def dl_cdf(z, q):
    """P(Z <= z)."""
    return 1 - q ** (z + 1) / (1 + q) if z >= 0 else q ** (-z) / (1 + q)


def dl_categories(q, w, M):
    """category k in [-M, M]: z nearest to k w (w odd), the two ends take the tails."""
    h = (w - 1) // 2
    ps = []
    for k in range(-M, M + 1):
        hi = 1.0 if k == M else dl_cdf(k * w + h, q)
        lo = 0.0 if k == -M else dl_cdf(k * w - h - 1, q)
        ps.append(hi - lo)
    return ps


def dl_mean_threshold(q, n, alpha):
    """a with P(|mean of n draws| >= a) <= alpha, by Chernoff: P(S >= n a) <= exp(-n I(a)),
    I(a) = sup_t (t a - log M(t)), M(t) = (1-q)^2 / ((1 - q e^t)(1 - q e^-t)), both tails."""
    lq = math.log(q)

    def log_mgf(t):
        return 2 * math.log(-math.expm1(lq)) - math.log(-math.expm1(t + lq)) - math.log(-math.expm1(-t + lq))

    def rate(a):
        lo, hi = 0.0, -lq * (1 - 1e-12)
        for _ in range(200):  # t a - log M(t) is concave in t: ternary search
            m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            if m1 * a - log_mgf(m1) < m2 * a - log_mgf(m2):
                lo = m1
            else:
                hi = m2
        t = (lo + hi) / 2
        return t * a - log_mgf(t)

    target = math.log(2 / alpha) / n
    lo, hi = 0.0, 1.0
    while rate(hi) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if rate(mid) < target:
            lo = mid
        else:
            hi = mid
    return hi


def dl_var(q):
    return 2 * q / (1 - q) ** 2


def dl_fourth(q):
    return 2 * q * (1 + 11 * q + 11 * q * q + q ** 3) / ((1 + q) * (1 - q) ** 4)


def noise():
    print("== noise.sql: N = %d draws per setting" % NOISE_N)
    for s, eps, w in NOISE_SETTINGS:
        q = math.exp(-eps / s)
        M = 0
        while min(NOISE_N * p for p in dl_categories(q, w, M + 1)) >= 20:
            M += 1
        p0 = dl_categories(q, w, M)
        df = len(p0) - 1
        crit = chi2_isf(NOISE_ALPHA_GOF, df)
        print("s=%d eps=%g: width %d, categories k in [-%d, %d], df %d, min expected %.1f, crit(1e-7) %.4f"
              % (s, eps, w, M, M, df, NOISE_N * min(p0), up(crit)))
        for f, label in ((1.1, "eps*1.1"), (1 / 1.1, "eps/1.1")):
            q1 = math.exp(-dyadic_floor(eps * f) / s)
            p1 = dl_categories(q1, w, M)
            lam = NOISE_N * sum((a - b) ** 2 / b for a, b in zip(p1, p0))
            print("    power, draws at %s: noncentrality %.0f, P(not rejected) <= %.2g"
                  % (label, lam, pearson_power_failure(NOISE_N, p1, p0, crit)))
        sigma2 = dl_var(q)
        a = dl_mean_threshold(q, NOISE_N, NOISE_ALPHA_MOMENT)
        print("    mean: |mean| < %.6g (= %.3f sd of the mean), P(false failure) <= %g"
              % (up_sig(a), a / math.sqrt(sigma2 / NOISE_N), NOISE_ALPHA_MOMENT))
        # median of NOISE_BLOCKS block means of z^2: a block is off by >= delta sigma^2 with
        # probability <= p0 = Var(z^2) / (B delta^2 sigma^4) (Chebyshev); the median is off only
        # if >= half the blocks are: P <= P(Bin(blocks, p0) >= blocks/2)
        kurt = dl_fourth(q) / sigma2 ** 2 - 1  # Var(z^2) / sigma^4
        delta, pb = median_of_means_delta(kurt, NOISE_BLOCK, NOISE_BLOCKS, NOISE_ALPHA_MOMENT)
        print("    variance %.10g: median of %d block means of z^2 within (1 +- %.2f) sigma^2;"
              " block miss prob %.3f, P(false failure) <= %.2g"
              % (sigma2, NOISE_BLOCKS, delta, pb, binom_tail_ge(NOISE_BLOCKS, pb, NOISE_BLOCKS // 2)))


# ---------------------------------------------------------------------------------------------
# exponential_mechanism.sql

EM_K = 2000
EM_BINS = [6, 7, 7, 8, 8, 8, 9, 10]  # bin of each user's average
EM_L = 16
EM_EPS = 1.0


def em_probs(bins, L, eps):
    score = [max(sum(1 for u in bins if u < b), sum(1 for u in bins if u > b)) for b in range(L)]
    w = [math.exp(-eps * x) for x in score]
    z = sum(w)
    return [x / z for x in w], score


def em():
    p, score = em_probs(EM_BINS, EM_L, EM_EPS)
    keep = [b for b in range(EM_L) if EM_K * p[b] >= 20]
    rest = [b for b in range(EM_L) if b not in keep]

    def cats(pp):
        return [pp[b] for b in keep] + ([sum(pp[b] for b in rest)] if rest else [])

    p0 = cats(p)
    df = len(p0) - 1
    crit = chi2_isf(1e-7, df)
    print("== exponential_mechanism.sql: K = %d, eps = %g, scores %s" % (EM_K, EM_EPS, score))
    print("   bins kept %s, pooled %s (expected %.1f), df %d, crit(1e-7) %.4f"
          % (keep, rest, EM_K * sum(p[b] for b in rest), df, up(crit)))
    print("   probabilities %s" % ["%.5f" % x for x in p])
    for alt, label in ((EM_EPS / 2, "exp(-eps score / 2)"),):
        pa = cats(em_probs(EM_BINS, EM_L, alt)[0])
        lam = EM_K * sum((a - b) ** 2 / a for a, b in zip(pa, p0))
        print("   power vs %s: noncentrality %.0f, P(not rejected) <= %.2g"
              % (label, lam, pearson_power_failure(EM_K, p0, pa, crit)))


# ---------------------------------------------------------------------------------------------
# neighbours.sql: Chernoff (KL) confidence bounds for binomial proportions
#   upper(k, n): largest p >= k/n with n KL(k/n || p) <= log(1/alpha); P(p > upper) <= alpha
#   lower(k, n): smallest p <= k/n with n KL(k/n || p) <= log(1/alpha); P(p < lower) <= alpha


def kl(a, p):
    if p <= 0 or p >= 1:
        return math.inf
    r = 0.0
    if a > 0:
        r += a * math.log(a / p)
    if a < 1:
        r += (1 - a) * math.log((1 - a) / (1 - p))
    return r


def kl_bound(k, n, lnia, upper):
    """Chernoff (KL) confidence bound of the proportion k/n, by bisection: the largest p above
    k/n (upper) or the smallest p below it (lower) with n KL(k/n || p) <= lnia, rounded
    outwards (the side of the bisection where the bound is exceeded)."""
    a = k / n
    if (upper and a >= 1) or (not upper and a <= 0):
        return a
    inside, outside = a, (1.0 if upper else 0.0)
    for _ in range(60):
        mid = (inside + outside) / 2
        if kl(a, mid) > lnia / n:
            outside = mid
        else:
            inside = mid
    return outside


def kl_upper(k, n, lnia):
    return kl_bound(k, n, lnia, True)


def kl_lower(k, n, lnia):
    return kl_bound(k, n, lnia, False)


@functools.lru_cache(maxsize=None)
def kl_bound_table(k, lnia):
    """the upper and the lower bounds of every count 0..k of k (both nondecreasing in the count)"""
    return ([kl_upper(m, k, lnia) for m in range(k + 1)], [kl_lower(m, k, lnia) for m in range(k + 1)])


def loss_lcb(n1, n2, k, lnia):
    """lower confidence bound of |log(p1/p2)| from counts n1, n2 out of k each"""
    v = 0.0
    a, b = kl_lower(n1, k, lnia), kl_upper(n2, k, lnia)
    if a > 0:
        v = max(v, math.log(a / b))
    a, b = kl_lower(n2, k, lnia), kl_upper(n1, k, lnia)
    if a > 0:
        v = max(v, math.log(a / b))
    return v


def lcb_fail_prob(a, b, k, lnia, thr):
    """P(log(lower(n1) / upper(n2)) <= thr) for n1 ~ Bin(k, a), n2 ~ Bin(k, b), exactly: the
    probability that the one-sided lower confidence bound of log(a / b) does not exceed thr"""
    up_, lo_ = kl_bound_table(k, lnia)
    cum = [0.0]
    for n in range(k + 1):
        cum.append(cum[-1] + math.exp(log_binom_pmf(k, n, b)))
    total = 0.0
    for n1 in range(k + 1):
        w1 = math.exp(log_binom_pmf(k, n1, a))
        if lo_[n1] <= 0:
            total += w1
            continue
        j = bisect.bisect_left(up_, lo_[n1] * math.exp(-thr))  # n2 < j: bound exceeds thr
        total += w1 * (1.0 - cum[j])
    return total


NB_K = 2000
NB_D = [0, 1, 2, 3, 4]  # bins of D's users
NB_ADD = 3              # bin of the user D' adds
NB_L = 6
NB_EPS = 1.0
NB_ALPHA = 1e-8         # each one-sided KL bound


def neighbours():
    lnia = math.log(1 / NB_ALPHA)
    print("== neighbours.sql: K = %d per table, D bins %s, D' adds bin %d, L = %d, eps = %g"
          % (NB_K, NB_D, NB_ADD, NB_L, NB_EPS))
    print("   log(1/alpha) = %.15g; main test: %d bins x 4 bounds x %g = %.2g"
          % (lnia, NB_L, NB_ALPHA, 4 * NB_L * NB_ALPHA))
    for mult, thr in ((1, 0.0), (4, NB_EPS)):
        e = mult * NB_EPS
        p = em_probs(NB_D, NB_L, e)[0]
        pp = em_probs(NB_D + [NB_ADD], NB_L, e)[0]
        print("   at eps %g: p_D %s" % (e, ["%.4f" % x for x in p]))
        print("              p_D' %s" % ["%.4f" % x for x in pp])
        print("              loss %s" % ["%+.3f" % math.log(a / b) for a, b in zip(p, pp)])
        best = min((lcb_fail_prob(max(a, b), min(a, b), NB_K, lnia, thr), i) for i, (a, b) in enumerate(zip(p, pp)))
        print("              P(no bin has LCB > %g) <= P(bin %d has not) = %.2g" % (thr, best[1], best[0]))


# ---------------------------------------------------------------------------------------------
# discrete_gaussian.sql: P(z) proportional to exp(-z^2 / (2 s)), s = sigma2 rounded UP to 24
# significant bits (src/noise.c)

DG_N = 200000
DG_SETTINGS = [(0.5, 1), (3.0, 1), (1000.7, 7)]  # (sigma2, bin width)
DG_ALPHA_GOF = 1e-7
DG_ALPHA_MOMENT = 1e-8
DG_BLOCKS, DG_BLOCK = 100, 2000


def dyadic_ceil(x):
    """x rounded up to 24 significant bits, as src/noise.c rounds sigma2."""
    m, e = math.frexp(x)
    return math.ceil(math.ldexp(m, 24)) * 2.0 ** (e - 24)


def dg_pmf(s):
    """{z: P(z)} over |z| <= L, L = 40 sd + 2 (the mass beyond is < exp(-800))."""
    L = int(40 * math.sqrt(s)) + 2
    w = {z: math.exp(-z * z / (2 * s)) for z in range(-L, L + 1)}
    t = sum(w.values())
    return {z: v / t for z, v in w.items()}


def dg_categories(pmf, w, M):
    """category k in [-M, M]: z nearest to k w (w odd), the two ends take the tails."""
    h = (w - 1) // 2
    ps = [0.0] * (2 * M + 1)
    for z, p in pmf.items():
        k = max(-M, min(M, math.floor((z + h) / w)))
        ps[k + M] += p
    return ps


def discrete_gaussian():
    print("== discrete_gaussian.sql: N = %d draws per setting" % DG_N)
    for sigma2, w in DG_SETTINGS:
        s = dyadic_ceil(sigma2)
        pmf = dg_pmf(s)
        M = 0
        while min(DG_N * p for p in dg_categories(pmf, w, M + 1)) >= 20:
            M += 1
        p0 = dg_categories(pmf, w, M)
        df = len(p0) - 1
        crit = chi2_isf(DG_ALPHA_GOF, df)
        print("sigma2=%r (rounded up: %.17g): width %d, categories k in [-%d, %d], df %d, min expected %.1f,"
              " crit(1e-7) %.4f" % (sigma2, s, w, M, M, df, DG_N * min(p0), up(crit)))
        for f, label in ((1.2, "sigma2*1.2"), (1 / 1.2, "sigma2/1.2")):
            p1 = dg_categories(dg_pmf(dyadic_ceil(sigma2 * f)), w, M)
            lam = DG_N * sum((a - b) ** 2 / b for a, b in zip(p1, p0))
            print("    power, draws at %s: noncentrality %.0f, P(not rejected) <= %.2g"
                  % (label, lam, pearson_power_failure(DG_N, p1, p0, crit)))
        # the discrete Gaussian is s-subgaussian (Canonne, Kamath, Steinke 2020, Cor. 9):
        # P(|mean| >= a) <= 2 exp(-N a^2 / (2 s))
        a = math.sqrt(2 * s * math.log(2 / DG_ALPHA_MOMENT) / DG_N)
        var = sum(z * z * p for z, p in pmf.items())
        fourth = sum(z ** 4 * p for z, p in pmf.items())
        print("    mean: |mean| < %.6g (subgaussian), P(false failure) <= %g" % (up_sig(a), DG_ALPHA_MOMENT))
        kurt = fourth / var ** 2 - 1  # Var(z^2) / var^2
        delta, pb = median_of_means_delta(kurt, DG_BLOCK, DG_BLOCKS, DG_ALPHA_MOMENT)
        print("    variance %.12g (exact; sigma2' %.12g): median of %d block means of z^2 within (1 +- %.2f) var;"
              " block miss prob %.3f, P(false failure) <= %.2g"
              % (var, s, DG_BLOCKS, delta, pb, binom_tail_ge(DG_BLOCKS, pb, DG_BLOCKS // 2)))


DG_LARGE = (2.0 ** 52, 2.0 ** 59, 2.0 ** 60)   # exact dyadic variances: sd 2^26 to 2^30
DG_LARGE_M = 12                        # categories floor(4 z / sd) clamped to [-12, 11]


def dg_large_categories(f=1.0):
    """P(category c), c = floor(4 z / sd) in [-M, M-1] (the ends take the tails), for draws of
    variance f sd^2 judged at sd: the continuous normal law.  The bin edges are integers and the
    discrete Gaussian with sd >= 2^26 gives each bin the normal mass to a relative 1e-7 (a half
    step at each edge; the normaliser differs from sqrt(2 pi s) by exp(-2 pi^2 s))."""
    M = DG_LARGE_M
    cdf = lambda x: 1 - phi_sf(x / math.sqrt(f))
    edges = [-math.inf] + [c / 4 for c in range(-M + 1, M)] + [math.inf]
    return [cdf(b) - cdf(a) for a, b in zip(edges, edges[1:])]


def discrete_gaussian_large():
    p0 = dg_large_categories()
    df = len(p0) - 1
    crit = chi2_isf(DG_ALPHA_GOF, df)
    print("== discrete_gaussian.sql, large variances %s: %d categories, df %d, min expected %.1f, crit(1e-7) %.4f"
          % (DG_LARGE, len(p0), df, DG_N * min(p0), up(crit)))
    print("    probabilities: " + ", ".join("%.12g" % p for p in p0))
    for f, label in ((1.2, "sigma2*1.2"), (1 / 1.2, "sigma2/1.2")):
        p1 = dg_large_categories(f)
        lam = DG_N * sum((a - b) ** 2 / b for a, b in zip(p1, p0))
        print("    power, draws at %s: noncentrality %.0f, P(not rejected) <= %.2g"
              % (label, lam, pearson_power_failure(DG_N, p1, p0, crit)))
    # tiny variances: P(Z != 0) = 2 sum exp(-z^2 / 2s) / C <= 3 exp(-1 / 2s)
    for s in (2.0 ** -64, 4.0e-6):
        print("    sigma2 %g: P(some of %d draws != 0) <= %.3g" % (s, DG_N, DG_N * 3 * math.exp(-1 / (2 * s))))
    q = 2 * math.exp(-10) / (1 + 2 * math.exp(-10))
    print("    power: sigma2 0.05, P(all %d draws 0) <= %.3g" % (DG_N, (1 - q) ** DG_N))


# ---------------------------------------------------------------------------------------------
# vector_mean.sql

VM_RHO = {1: 0.024355970357362366, 8: 1.0523580044900882,  # uldp.zcdp_rho(eps, 1e-6)
          16: 3.3504647039844713}
VM_ACC_RELEASES = 200
VM_ACC_ALPHA = 2e-10    # each of the 5 tail bounds of one release
VM_NB_K = 2000          # releases of D and of D' at eps = 1
VM_NB_POWER_K = 1000    # releases of D and of D' at 16 eps
VM_NB_ALPHA = 1e-8      # each one-sided KL bound
VM_NB_N = 100           # users of D, all at 0; D' adds one at 1 (radius 1, dimension 1)
VM_NB_EVENTS = [-0.05, 0.0, 0.05, 0.1]   # E_c = {released and x > c}; also "empty"


def phi_sf(x):
    return 0.5 * math.erfc(x / math.sqrt(2))


def vm_event_probs(rho, n, radius, cs, delta=1e-6):
    """P_D and P_D' of {released and x > c} (and of "empty": c = None), the sum noise taken as
    continuous Gaussian (its sd is 2^20 grid steps, so the discreteness is invisible)."""
    s2c = 4 / rho
    T = 1 + math.sqrt(dyadic_ceil(s2c)) * math.sqrt(2 * math.log(1 / delta)) * (1 + 2 ** -40)
    K = math.floor(math.sqrt(2 * rho * 7 / 8) * 2 ** 20)
    sn = radius / K * 2 ** 20
    L = int(math.sqrt(s2c) * 40) + 2
    w = {z: math.exp(-z * z / (2 * s2c)) for z in range(-L, L + 1)}
    t = sum(w.values())
    out = []
    for c in cs:
        pd = pd1 = 0.0
        for z, wz in w.items():
            for cnt, shift, is_d in ((n + z, 0.0, True), (n + 1 + z, radius, False)):
                if c is None:
                    q = 1.0 if cnt < T else 0.0
                else:
                    q = phi_sf((c * cnt - shift) / sn) if cnt >= T else 0.0
                if is_d:
                    pd += wz / t * q
                else:
                    pd1 += wz / t * q
        out.append((c, pd, pd1))
    return out, T, sn / n


def dp_test_fail_prob(a, b, k, lnia, eps, delta):
    """P(lower(n1) <= e^eps upper(n2) + delta) for n1 ~ Bin(k, a), n2 ~ Bin(k, b): the
    probability that the test does NOT detect a violation of (eps, delta) on this event.  The
    upper bound grows with n2, so for each n1 the n2 that miss are those from the first whose
    bound reaches (lower(n1) - delta) e^-eps."""
    up_, lo_ = kl_bound_table(k, lnia)
    tail = [0.0] * (k + 2)   # tail[m] = P(n2 >= m)
    for m in range(k, -1, -1):
        tail[m] = tail[m + 1] + math.exp(log_binom_pmf(k, m, b))
    total = 0.0
    for n1 in range(k + 1):
        w1 = math.exp(log_binom_pmf(k, n1, a))
        if w1 < 1e-300:
            continue
        total += w1 * tail[bisect.bisect_left(up_, (lo_[n1] - delta) * math.exp(-eps))]
    return total


def vector_mean():
    print("== vector_mean.sql")
    # (a) accuracy: 400 users, radius 4, dimension 3 (padded to 4), eps 1, delta 1e-6, no range
    rho = VM_RHO[1] * (1 - 1e-11)   # the release uses zcdp_rho(eps (1-2^-40), delta (1-2^-40))
    n, radius, mnorm = 400, 4.0, math.sqrt(1 + 4 + 0.25)
    s2c = 4 / rho * (1 + 2 ** -22)
    z = math.sqrt(2 * math.log(2 / VM_ACC_ALPHA))
    tc = math.sqrt(s2c) * z
    K = math.floor(math.sqrt(2 * rho * 7 / 8) * 2 ** 20)
    g = radius / K
    t1 = 2 ** 20 * z
    bound = (mnorm * tc + 8 * n * g + 2 * g * t1) / (n - tc)
    print("   accuracy: rho %.6g, count sd %.4f, tc %.3f, K %d steps, grid %.4g, noise sd per coordinate of the"
          " mean %.5f" % (rho, math.sqrt(s2c), tc, K, g, g * 2 ** 20 / n))
    print("   bound (|m| tc + 8 n g + 2 g t1) / (n - tc) = %.6f -> %.4f; P(false failure) <= %d x 5 x %g = %.2g"
          % (bound, up(bound, 3), VM_ACC_RELEASES, VM_ACC_ALPHA, VM_ACC_RELEASES * 5 * VM_ACC_ALPHA))
    # (b) neighbours
    lnia = math.log(1 / VM_NB_ALPHA)
    cs = [None] + VM_NB_EVENTS
    for e, k in ((1, VM_NB_K), (16, VM_NB_POWER_K)):
        out, T, sd = vm_event_probs(VM_RHO[e], VM_NB_N, 1.0, cs)
        print("   neighbours at eps %g: threshold %.2f users, sd of the mean %.5f, K %d" % (e, T, sd, k))
        for c, a, b in out:
            print("      event %s: p_D %.5f p_D' %.5f loss %+.3f" % ("empty" if c is None else "x > %g" % c, a, b,
                  math.log(b / a) if a > 0 and b > 0 else float('nan')))
    out, _, _ = vm_event_probs(VM_RHO[16], VM_NB_N, 1.0, [0.005])
    a, b = out[0][1], out[0][2]
    print("   power: releases at eps 16 judged at eps 1 on x > 0.005: p_D %.4f p_D' %.4f; P(not detected) <= %.3g"
          % (a, b, dp_test_fail_prob(b, a, VM_NB_POWER_K, lnia, 1.0, 1e-6)))
    print("   main test: %d events x 4 bounds x %g = %.2g" % (len(cs), VM_NB_ALPHA, len(cs) * 4 * VM_NB_ALPHA))


# ---------------------------------------------------------------------------------------------
# quantile.sql: user_dp_quantile (src/quantile.c), with the floating-point grid of src/grid.c

Q_SHIFT = 52 - 24          # ULDP_FLOAT_GRID_BITS = 24 mantissa bits kept
Q_MAXMAG = 1e300


def q_mag_bits(m):
    return struct.unpack('<Q', struct.pack('<d', m))[0] >> Q_SHIFT


class FloatGrid:
    """src/grid.c's floating-point grid over [lower, upper]"""

    def __init__(self, lower, upper, minmag):
        self.minmag = minmag
        self.zero = self.mag_key(Q_MAXMAG)
        self.first = self.raw_key(lower)
        self.domain = self.raw_key(upper) - self.first + 1

    def mag_key(self, x):
        m = abs(x)
        return 0 if m < self.minmag else q_mag_bits(m) - q_mag_bits(self.minmag) + 1

    def raw_key(self, x):
        return self.zero + self.mag_key(x) if x >= 0 else self.zero - self.mag_key(x)

    def key(self, x):
        raw = self.raw_key(x)
        return min(raw - min(raw, self.first), self.domain - 1)

    def value(self, key):
        raw = self.first + key
        k = raw - self.zero if raw >= self.zero else self.zero - raw
        if k == 0:
            return 0.0
        b = ((k - 1 + q_mag_bits(self.minmag)) << Q_SHIFT) | (1 << (Q_SHIFT - 1))
        m = struct.unpack('<d', struct.pack('<Q', b))[0]
        return m if raw >= self.zero else -m


def q_grid(lower, upper):
    """the grid of a release with these bounds (None: not given)"""
    lo = -Q_MAXMAG if lower is None else lower
    hi = Q_MAXMAG if upper is None else upper
    both = lower is not None and upper is not None
    return FloatGrid(lo, hi, math.ldexp(hi - lo, -40) if both else 0.0), lo, hi


def q_shares(eps):
    """(count epsilon as the sampler rounds it, exponential mechanism parameter): noise.c runs
    the selection with epsilon (1 - 2^-24), and every release spends epsilon (1 - 2^-40)"""
    spent = eps * (1 - 2.0 ** -40)
    return dyadic_floor(spent / 10), spent * 9 / 10 / 2 * (1 - 2.0 ** -24)


def quantile_law(rows, q, eps, lower, upper, cuts, em_scale=1.0, row_weights=False):
    """The exact law of user_dp_quantile(v, u, eps, q, lower, upper) on rows [(u, v)] over the
    bins (-inf, cuts[0]), [cuts[0], cuts[1]), ..., [cuts[-1], inf) of its output, summed over
    the noisy count (|z| <= 60 / eps_count; the rest has mass < e^-60).  em_scale multiplies the
    selection's parameter and row_weights gives every row the weight of a user: the
    alternatives of the power computations."""
    g, lo, hi = q_grid(lower, upper)
    users = {}
    for i, (u, v) in enumerate(rows):
        users.setdefault(i if row_weights else u, []).append(v)
    one = 1 << 32
    weight = {}
    for vs in users.values():
        for v in vs:
            k = g.key(min(max(v, lo), hi))
            weight[k] = weight.get(k, 0) + one // len(vs)
    zero_key = g.key(0.0) if lo <= 0 <= hi else None

    def output(k):
        return min(max(0.0 if k == zero_key else g.value(k), lo), hi)

    def first_key(c):
        a, b = 0, g.domain
        while a < b:
            mid = (a + b) // 2
            if output(mid) >= c:
                b = mid
            else:
                a = mid + 1
        return a

    edges = [0] + [first_key(c) for c in cuts] + [g.domain]
    segments, position, below = [], 0, 0
    for k in sorted(weight):
        if k > position:
            segments.append((position, k - position, below, below))
        segments.append((k, 1, below, below + weight[k]))
        below += weight[k]
        position = k + 1
    if position < g.domain:
        segments.append((position, g.domain - position, below, below))
    pieces = []
    for start, length, low, high in segments:
        for b in range(len(edges) - 1):
            x0, x1 = max(start, edges[b]), min(start + length, edges[b + 1])
            if x1 > x0:
                pieces.append((b, math.log(x1 - x0), low, high))
    eps_count, e = q_shares(eps)
    e *= em_scale
    p = math.exp(-eps_count)
    law = [0.0] * (len(edges) - 1)
    zmax = int(60 / eps_count) + 1
    for z in range(-zmax, zmax + 1):
        pz = (1 - p) / (1 + p) * p ** abs(z)
        target = math.floor(Fraction(q) * min(max(len(users) + z, 0), one) * one)
        logs = [(b, lw - e * min(max(low - target, target - high, 0), 1 << 64) / one)
                for b, lw, low, high in pieces]
        top = max(lw for _, lw in logs)
        w = [0.0] * len(law)
        for b, lw in logs:
            w[b] += math.exp(lw - top)
        total = sum(w)
        for b in range(len(law)):
            law[b] += pz * w[b] / total
    return law


def quantile_rank_failure(q, n, t, slack, keys, eps):
    """An upper bound on P(|W(< x) - q n| > t users) for the release x: with Z the count's noise
    and s the selected key's score, |W(< x) - q n| <= s + w_b + q |Z| (w_b the weight of the
    selected key, at most "slack" with the fixed-point roundings), and given Z with
    q (n + Z) in [0, n] some key scores 0, so P(s >= a | Z) <= keys e^(-e a)."""
    eps_count, e = q_shares(eps)
    p = math.exp(-eps_count)
    zmax = int(n * (1 - q) / q) - 1
    total = 2 * p ** (zmax + 1) / (1 + p)   # P(|Z| > zmax): counted as failures
    for z in range(zmax + 1):
        pz = (1 - p) / (1 + p) * (1 if z == 0 else 2) * p ** z
        total += pz * math.exp(min(0.0, math.log(keys) - e * (t - slack - q * z)))
    return total


Q_N = 10000
Q_TOL = 0.02
Q_SLACK = 3
Q_W_N = 1001
Q_W_TOL = 0.2
Q_K = 1000
Q_NB_Q = 0.1
Q_NB_CUTS = [2.0 ** j for j in (-35, -33, -31, -29)]
Q_NB_ALPHA = 1e-8
Q_NB_FIT = 1e-7


def q_audit_rows():
    """D: 40 users, user i with 1 + i % 4 rows in binade [2^(i - 36), 2^(i - 35)); D' adds a user
    with one row in binade 3"""
    d = [(i, 2.0 ** (i - 36) * (1.1 + 0.2 * j)) for i in range(40) for j in range(1 + i % 4)]
    return d, d + [(99, 2.0 ** -33 * 1.25)]


def quantile():
    print("== quantile.sql")
    total = 0.0
    for lower, upper in ((None, None), (0, 1e5)):
        keys = q_grid(lower, upper)[0].domain
        for q in (0.1, 0.5, 0.9):
            f = quantile_rank_failure(q, Q_N, Q_TOL * Q_N, Q_SLACK, keys, 1.0)
            total += f
            print("   accuracy, bounds %s, %d keys, q %g: P(|rank - q| > %g) <= %.3g"
                  % ((lower, upper), keys, q, Q_TOL, f))
    keys = q_grid(None, None)[0].domain
    f = quantile_rank_failure(0.5, Q_W_N, Q_W_TOL * Q_W_N, 2, keys, 1.0)
    total += 2 * f
    print("   weighting, %d users, q 0.5: P(|rank - 0.5| > %g) <= %.3g (each of 2)" % (Q_W_N, Q_W_TOL, f))
    d, dp = q_audit_rows()
    law_d = quantile_law(d, Q_NB_Q, 1.0, 0, 8, Q_NB_CUTS)
    law_dp = quantile_law(dp, Q_NB_Q, 1.0, 0, 8, Q_NB_CUTS)
    print("   audit: K = %d, p_D  %s" % (Q_K, ", ".join("%.6f" % x for x in law_d)))
    print("                     p_D' %s" % ", ".join("%.6f" % x for x in law_dp))
    print("          loss %s; min expected count %.1f"
          % (["%+.3f" % math.log(a / b) for a, b in zip(law_d, law_dp)], Q_K * min(law_d + law_dp)))
    bins = len(law_d)
    crit = chi2_isf(Q_NB_FIT, bins - 1)
    print("          privacy: %d bins x 4 bounds x %g = %.2g; fit: crit(%g, df %d) = %.4f, 2 tables"
          % (bins, Q_NB_ALPHA, 4 * bins * Q_NB_ALPHA, Q_NB_FIT, bins - 1, up(crit)))
    total += 4 * bins * Q_NB_ALPHA + 2 * Q_NB_FIT
    for label, kw in (("the selection with its whole share (not halved)", {"em_scale": 2.0}),
                      ("every row weighing one user", {"row_weights": True})):
        alt = quantile_law(d, Q_NB_Q, 1.0, 0, 8, Q_NB_CUTS, **kw)
        lam = Q_K * sum((a - b) ** 2 / b for a, b in zip(alt, law_d))
        print("          power vs %s: noncentrality %.0f, P(not rejected) <= %.2g"
              % (label, lam, pearson_power_failure(Q_K, alt, law_d, crit)))
    print("   false failures of the file <= %.2g" % total)


# ---------------------------------------------------------------------------------------------
# small_n.sql

SN_N = 150                         # users
SN_RADIUS = 2.0
SN_MEAN = (0.5, -0.3, 0.2, 0.1)    # the mean of the user averages, dimension 4 (no padding)
SN_VM_K = 200                      # releases of each vector mean
SN_RATIO = 1.5                     # RMSE at most 1.5 x the naive mechanism's
SN_SGD_K = 200                     # models of each kind
SN_SGD_RANK = 10                   # the 10th smallest naive accuracy (its 5% quantile)
SN_SGD_ALPHA = 5e-7


def log_choose(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def sn_vector_mean():
    """RMSE threshold and the Chernoff bound on a false failure of the vector mean test."""
    delta = 1e-6 * (1 - 2 ** -40)
    rho = VM_RHO[1] * (1 - 1e-11)
    rho_c, rho_sum, P, n, r = rho / 8, 7 * rho / 8, len(SN_MEAN), SN_N, SN_RADIUS
    m = math.sqrt(sum(x * x for x in SN_MEAN))
    naive_mse = (P * r * r / (2 * rho_sum) + m * m / (2 * rho_c)) / (n * n)
    c = SN_RATIO ** 2 * naive_mse
    s_c = dyadic_ceil(1 / (2 * rho_c))
    T = 1 + math.sqrt(s_c) * math.sqrt(2 * math.log(1 / delta)) * (1 + 2 ** -40)
    steps = math.floor(math.sqrt(2 * rho_sum) * 2 ** 20)
    g = r / steps
    s = g * g * 2.0 ** 40          # variance of the sum's noise per coordinate, in values
    R = 8 * n * g                  # rounding of the sum: at most 8 grid steps a user (l2)
    pmf = dg_pmf(s_c)
    p_empty = sum(p for z, p in pmf.items() if n + z < T)

    def log_mgf(lam):
        """log E[exp(lam e^2); released], e the error before post-processing (see small_n.sql)"""
        total = 0.0
        for z, p in pmf.items():
            if n + z < T:
                continue
            lz = lam / (n + z) ** 2
            a = R + m * abs(z)
            total += p * (1 - 2 * lz * s) ** (-P / 2) * math.exp(lz * a * a / (1 - 2 * lz * s))
        return math.log(total)

    lam_max = (T * T) / (2 * s)
    best = min((SN_VM_K * (log_mgf(lam) - lam * c), lam)
               for lam in (lam_max * f / 1000 for f in range(1, 1000)))
    chernoff = math.exp(best[0])
    print("   vector mean: rho %.6g, count variance %.4f, threshold %.2f users, %d grid steps, noise sd per"
          " coordinate of the mean %.5f" % (rho, s_c, T, steps, math.sqrt(s) / n))
    print("   naive RMSE sqrt((P r^2 / (2 rho_sum) + |m|^2 / (2 rho_count)) / n^2) = %.6f; threshold on the mean"
          " squared error (1.5 x RMSE)^2 = %.6f" % (math.sqrt(naive_mse), c))
    print("   Chernoff at lambda %.4g: P(mean of %d squared errors > threshold) <= %.3g; P(an empty release) <= %d x"
          " %.3g = %.3g; per release kind %.3g" % (best[1], SN_VM_K, chernoff, SN_VM_K, p_empty,
                                                  SN_VM_K * p_empty, chernoff + SN_VM_K * p_empty))
    return 2 * (chernoff + SN_VM_K * p_empty)


def sn_sgd():
    """Critical count of the accuracy test: C = #{i : A_i + m < B_(k)} has, when A + m dominates B,
    at most the law of the number of K exchangeable draws below the k-th smallest of K more."""
    K, k = SN_SGD_K, SN_SGD_RANK
    pmf = [math.exp(log_choose(j + k - 1, j) + log_choose(2 * K - j - k, K - j) - log_choose(2 * K, K))
           for j in range(K + 1)]
    tail, crit = 0.0, K + 1
    while crit > 0 and tail + pmf[crit - 1] <= SN_SGD_ALPHA:
        crit -= 1
        tail += pmf[crit]
    print("   sgd: %d models of each kind, the naive's %dth smallest accuracy; mean count under H0 %.2f;"
          " fail at C >= %d: P <= %.3g" % (K, k, sum(j * p for j, p in enumerate(pmf)), crit, tail))
    return tail


def small_n():
    print("== small_n.sql")
    total = sn_vector_mean() + sn_sgd()
    print("   P(false failure) <= %.3g" % total)


# ---------------------------------------------------------------------------------------------
# neighbours_sgd.sql: user_dp_sgd between D (NG_N users whose average gradient at theta = 0 is
# zero) and D' = D plus one extreme user, the outcome s = the model's prediction at that user's
# features, bucketed at quantiles of a pilot sample of D

NG_N = 200                       # users of D
NG_K = 4000                      # audited releases of D and of D' per method and loss
NG_PILOT = 400                   # releases of D whose quantiles are the edges of the buckets
NG_LEVELS = [0.05, 0.2, 0.5, 0.8, 0.95]
NG_BUCKETS = len(NG_LEVELS) + 1 + 2   # the s-buckets, "no weights" and "test failed"
NG_ALPHA = 1e-10                 # each one-sided KL bound
NG_EPS, NG_POWER_EPS, NG_DELTA = 1, 8, 1e-6
NG_DG_SLACK = 1e-6               # the sum's discrete Gaussian noise (sd 2^20) against the normal law


def ng_law(eps):
    """The law of one release of user_dp_sgd(x, y, u, eps, 1e-6, options with iterations 1, method
    winsorized, feature_radius 1, label_bound 1, gradient_clip c) on D and on D'.  The noisy count
    c' = n + Z (Z discrete Gaussian, variance 4 / rho rounded up) must reach the threshold T
    (vecrelease.c); the fit gets rho_fit = 7 rho / 8 (no private scales), and its one step is
    WinsorizedMeanHighD without a range: K = floor(sqrt(2 rho_fit) 2^20) grid steps per c.  The users
    of D have the average gradient 0 at theta = 0; the extreme user's, -(1, 1) (squared) or
    -(1, 1) / 2 (logistic), is clipped to c (1, 1) / sqrt(2) and rotates onto one axis of the
    Hadamard rotation (padded dimension 2), as K steps exactly, and the model's prediction at
    (1, 1) reads that axis only: s = eta sqrt(2) g (K [D'] + N) / c', N the axis's discrete
    Gaussian noise of variance 2^40, or its sigmoid (logistic).  In units w = s / (eta sqrt(2) g
    2^20): w = (mu [D'] + N / 2^20) / c', mu = K / 2^20.  Returns sf(t, added) = P(released and
    w >= t) on D (added 0) or D' (added 1), P(D's release has no weights), mu and T."""
    rho = VM_RHO[eps] * (1 - 1e-11)   # the release uses zcdp_rho(eps (1-2^-40), delta (1-2^-40))
    s_c = dyadic_ceil(4 / rho)
    T = 1 + math.sqrt(s_c) * math.sqrt(2 * math.log(1 / (NG_DELTA * (1 - 2 ** -40)))) * (1 + 2 ** -40)
    mu = math.floor(math.sqrt(2 * rho * 7 / 8) * 2 ** 20) / 2 ** 20
    pz = dg_pmf(s_c)

    def sf(t, added):
        return sum(p * phi_sf(t * max(NG_N + added + z, 1) - added * mu)
                   for z, p in pz.items() if NG_N + added + z >= T)

    return sf, sum(p for z, p in pz.items() if NG_N + z < T), mu, T


def ng_quantile(sf, level):
    """t with P_D(w < t) = level"""
    lo, hi = -1.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 1 - sf(mid, 0) < level:
            lo = mid
        else:
            hi = mid
    return hi


def ng_power_failure(eps):
    """An upper bound on P(the releases at eps, judged at NG_EPS, show no bucket with a loss above
    NG_EPS): P(the top bucket {s >= e} does not), e the pilot's 95% quantile, the 380th smallest of
    its 400 values.  On a grid t_0 < ... < t_J of D's quantiles, e <= t with probability
    P(Bin(400, P_D(w < t)) >= 380); given t_j < e <= t_j+1, p_D' >= sf'(t_j+1) and
    p_D <= sf(t_j), and the test misses with probability at most dp_test_fail_prob at those
    (it detects more often the larger p_D' and the smaller p_D); outside the grid, count a miss.
    The normal law stands for the discrete Gaussian within NG_DG_SLACK."""
    sf, _, _, _ = ng_law(eps)
    lnia = math.log(1 / NG_ALPHA)
    r = math.ceil(NG_LEVELS[-1] * NG_PILOT)
    ts = [ng_quantile(sf, 0.8 + 0.001 * j) for j in range(0, 200)]
    below = [binom_tail_ge(NG_PILOT, 1 - sf(t, 0), r) for t in ts]   # P(e <= t)
    total = below[0] + (1 - below[-1])
    for j in range(len(ts) - 1):
        a = sf(ts[j + 1], 1) - NG_DG_SLACK
        b = sf(ts[j], 0) + NG_DG_SLACK
        total += (below[j + 1] - below[j]) * dp_test_fail_prob(a, b, NG_K, lnia, NG_EPS, NG_DELTA)
    return total, max(0.0, below[0] + (1 - below[-1]))


# outlier_removal's audit: a larger D (its test needs more groups than 200 users form), fewer releases
NG_OUTLIER_USERS = 4000
NG_OUTLIER_K = 1000


def neighbours_sgd():
    print("== neighbours_sgd.sql: D %d users, K = %d, pilot %d, edges at %s, alpha %g"
          % (NG_N, NG_K, NG_PILOT, NG_LEVELS, NG_ALPHA))
    per_loss = NG_PILOT + 2 * NG_K   # releases of one method (or of the power check) and loss
    empty = {}
    for eps in (NG_EPS, NG_POWER_EPS):
        sf, empty[eps], mu, T = ng_law(eps)
        print("   winsorized at eps %g: threshold %.2f users, P(D's release has no weights) %.3g; the extreme"
              " user moves w by mu = %.6f noise sd" % (eps, T, empty[eps], mu))
        edges = [-math.inf] + [ng_quantile(sf, q) for q in NG_LEVELS] + [math.inf]
        pd = [sf(lo, 0) - (sf(hi, 0) if hi < math.inf else 0) for lo, hi in zip(edges, edges[1:])]
        pd1 = [sf(lo, 1) - (sf(hi, 1) if hi < math.inf else 0) for lo, hi in zip(edges, edges[1:])]
        print("      at the true quantiles: p_D %s" % ["%.4f" % x for x in pd])
        print("                             p_D' %s" % ["%.4f" % x for x in pd1])
        print("                             loss %s" % ["%+.3f" % math.log(y / x) for x, y in zip(pd, pd1)])
    lnia = math.log(1 / NG_ALPHA)
    print("   the largest loss lower bound %d releases of each table can show: %.3f"
          % (NG_K, math.log(kl_lower(NG_K, NG_K, lnia) / kl_upper(0, NG_K, lnia))))
    fail, edge = ng_power_failure(NG_POWER_EPS)
    print("   power: releases at eps %g judged at eps %g show no loss above it with probability <= %.3g"
          " (the pilot's edge off the grid: %.3g), for each loss" % (NG_POWER_EPS, NG_EPS, fail, edge))
    method = 2 * (NG_BUCKETS * 4 * NG_ALPHA + per_loss * empty[NG_EPS])
    fixed = 2 * (fail + per_loss * empty[NG_POWER_EPS])
    print("   each method, 2 losses x (%d buckets x 4 bounds x %g + %d releases x P(no weights)) = %.3g;"
          " the power check %.3g" % (NG_BUCKETS, NG_ALPHA, per_loss, method, fixed))
    print("   P(false failure) <= M x %.3g + %.3g: %.3g for M = 5 methods, <= 1e-6 up to M = %d"
          % (method, fixed, 5 * method + fixed, math.floor((1e-6 - fixed) / method)))
    k, per_loss = NG_OUTLIER_K, NG_PILOT + 2 * NG_OUTLIER_K
    half = per_loss * (0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75))
    print("   outlier_removal (D of %d users, K = %d): the largest loss lower bound it can show %.3f;"
          " a test failing on D with probability <= 1/4 fails 'at most half' of %d releases with"
          " probability <= e^-%.0f" % (NG_OUTLIER_USERS, k, math.log(kl_lower(k, k, lnia) / kl_upper(0, k, lnia)),
                                      per_loss, half))


if __name__ == "__main__":
    self_check()
    noise()
    em()
    neighbours()
    discrete_gaussian()
    discrete_gaussian_large()
    vector_mean()
    quantile()
    small_n()
    neighbours_sgd()

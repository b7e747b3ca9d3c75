-- test/stat/noise.sql -- the discrete Laplace sampler against its exact law.
--
-- uldp._sample_discrete_laplace(s, eps, n): n draws Z with P(Z = z) = (1-q)/(1+q) q^|z|,
-- q = exp(-eps'/s), eps' = eps rounded down to 24 significant bits (exact for the eps used
-- here: 1, 0.5, 5).  Four settings (s, eps), N = 200000 draws each.  Every constant below is
-- printed by test/stat/thresholds.py (pure Python; scipy is not installed here, so the
-- chi-square quantiles come from its incomplete-gamma code, checked there against closed forms).
--
-- Per setting:
--  * goodness of fit: categories k = z rounded to a multiple of an odd width w, the two ends
--    taking the tails, |k| <= M with M the largest giving every expected count >= 20 (asserted).
--    Pearson's X^2 < crit, crit = the chi-square (df = 2M) quantile at 1 - 1e-7; P(false failure)
--    is 1e-7 in the chi-square limit of X^2 (the usual approximation, expected counts >= 20).
--  * power: draws at eps*1.1 and at eps/1.1, tested against the law at eps, must give X^2 > crit.
--    Expected noncentralities are 417..2225 (df 2..70) and thresholds.py bounds each
--    P(X^2 <= crit) by an exact binomial sum (X^2 >= (O_A-E_A)^2/E_A for any set A of
--    categories, by Cauchy-Schwarz): <= 1e-34 for every one.
--  * mean: |mean| < a, a from the Chernoff bound with the exact moment generating function
--    (1-q)^2/((1-qe^t)(1-qe^-t)): P(false failure) <= 1e-8.
--  * variance 2q/(1-q)^2: the median of 100 block means of z^2 (blocks of 2000 draws) lies
--    within (1 +- d) sigma^2; a block misses with probability <= Var(z^2)/(2000 d^2 sigma^4)
--    (Chebyshev) and the median misses only if 50 blocks do: P(false failure) <= 1e-8 (binomial).
-- Seeded mode: uldp.test_seed restarts a reproducible stream; 0 is secure randomness (two
-- calls of 1000 draws coincide with probability < 0.3^1000).
--
-- False failures of the whole file (Bonferroni): 4 x 1e-7 (fit) + 8 x 1e-8 (mean, variance)
-- + 8 x 1e-34 (power) < 4.9e-7 <= 1e-6.
\set prefix uldp_stat_noise_
\ir ../lib/prelude.sql

BEGIN;
SELECT plan(33);

-- id, sensitivity s, eps, bin width w, categories -M..M, chi-square crit for df = 2M at 1e-7,
-- Chernoff bound on |mean| at 1e-8, relative half-width d of the variance band at 1e-8
CREATE TEMP TABLE settings (id int, s bigint, eps float8, w int, m int, crit float8, mean_bound float8, var_d float8);
INSERT INTO settings VALUES
    (1,    1, 1.0,   1,  8,  64.2275, 0.018761,   0.11),
    (2,   10, 1.0,   5, 16,  92.0845, 0.195443,   0.11),
    (3, 1000, 0.5, 401, 35, 149.7027, 39.1048,    0.11),
    (4,    1, 5.0,   1,  1,  32.2362, 0.00161679, 0.41);

-- the draws: at eps (variant 'exact') and at eps * 1.1 and eps / 1.1 (power checks)
CREATE TEMP TABLE draws AS
    SELECT st.id, v.variant, d.i, d.z
    FROM settings st,
         (VALUES ('exact', 1.0::float8), ('eps*1.1', 1.1), ('eps/1.1', 1 / 1.1)) v(variant, f),
         LATERAL unnest(uldp._sample_discrete_laplace(st.s, st.eps * v.f, 200000)) WITH ORDINALITY d(z, i);

-- the exact law at eps: P(Z <= z) = 1 - q^(z+1)/(1+q) for z >= 0, q^-z/(1+q) for z < 0
CREATE FUNCTION pg_temp.dl_cdf(z float8, s float8, eps float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN z >= 0 THEN 1 - exp(-eps / s * (z + 1)) / (1 + exp(-eps / s))
                ELSE exp(eps / s * z) / (1 + exp(-eps / s)) END
$$;
-- expected probability of each category k (z nearest to k w; k = -M and M take the tails)
CREATE TEMP TABLE expected AS
    SELECT st.id, k,
           CASE WHEN k = st.m THEN 1 ELSE pg_temp.dl_cdf(k * st.w + (st.w - 1) / 2, st.s, st.eps) END
         - CASE WHEN k = -st.m THEN 0 ELSE pg_temp.dl_cdf(k * st.w - (st.w - 1) / 2 - 1, st.s, st.eps) END AS p
    FROM settings st, generate_series(-st.m, st.m) k;
CREATE TEMP TABLE observed AS
    SELECT id, variant, least(greatest(floor((z + (w - 1) / 2)::float8 / w), -m), m)::int AS k, count(*) AS n
    FROM draws JOIN settings USING (id) GROUP BY 1, 2, 3;
-- Pearson's statistic per setting and variant
CREATE TEMP TABLE pearson AS
    SELECT e.id, v.variant, sum((coalesce(o.n, 0) - 200000 * e.p) ^ 2 / (200000 * e.p)) AS x2
    FROM expected e CROSS JOIN (VALUES ('exact'), ('eps*1.1'), ('eps/1.1')) v(variant)
    LEFT JOIN observed o ON o.id = e.id AND o.variant = v.variant AND o.k = e.k
    GROUP BY 1, 2;

SELECT is(count(*), 2400000::bigint, '3 x 200000 draws for each of the 4 settings') FROM draws;
SELECT ok(min(200000 * e.p) >= 20 AND abs(sum(e.p) - 1) < 1e-12,
          format('setting (s=%s, eps=%s): %s categories, every expected count >= 20 (min %s)',
                 st.s, st.eps, count(*), round(min(200000 * e.p)::numeric, 1)))
FROM expected e JOIN settings st USING (id) GROUP BY st.id, st.s, st.eps ORDER BY st.id;
SELECT ok(p.x2 < st.crit, format('goodness of fit (s=%s, eps=%s): X^2 = %s < %s (df %s, 1e-7)',
                                 st.s, st.eps, round(p.x2::numeric, 2), st.crit, 2 * st.m))
FROM pearson p JOIN settings st USING (id) WHERE p.variant = 'exact' ORDER BY st.id;
SELECT ok(p.x2 > st.crit, format('power (s=%s, eps=%s): draws at %s are rejected, X^2 = %s > %s',
                                 st.s, st.eps, p.variant, round(p.x2::numeric, 1), st.crit))
FROM pearson p JOIN settings st USING (id) WHERE p.variant <> 'exact' ORDER BY st.id, p.variant;
SELECT ok(abs(avg(d.z)) < st.mean_bound, format('mean (s=%s, eps=%s): |%s| < %s',
                                                st.s, st.eps, round(avg(d.z), 6), st.mean_bound))
FROM draws d JOIN settings st USING (id) WHERE d.variant = 'exact' GROUP BY st.id, st.s, st.eps, st.mean_bound
ORDER BY st.id;
SELECT ok(abs(b.med / b.var - 1) < b.var_d,
          format('variance (s=%s, eps=%s): median of block means of z^2 = %s, 2q/(1-q)^2 = %s, within %s%%',
                 b.s, b.eps, round(b.med::numeric, 6), round(b.var::numeric, 6), 100 * b.var_d))
FROM (SELECT st.id, st.s, st.eps, st.var_d,
             2 * exp(-st.eps / st.s) / (1 - exp(-st.eps / st.s)) ^ 2 AS var,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY blk.m2) AS med
      FROM settings st,
           LATERAL (SELECT avg(d.z::float8 ^ 2) AS m2 FROM draws d
                    WHERE d.id = st.id AND d.variant = 'exact' GROUP BY (d.i - 1) / 2000) blk
      GROUP BY st.id, st.s, st.eps, st.var_d) b
ORDER BY b.id;

-- ---------------------------------------------------------------------------
-- seeded and secure modes
SET uldp.test_seed = 5;
CREATE TEMP TABLE seeded AS SELECT 'a' AS run, uldp._sample_discrete_laplace(1, 1.0, 1000) AS z;
INSERT INTO seeded SELECT 'a2', uldp._sample_discrete_laplace(1, 1.0, 1000);
SET uldp.test_seed = 5;
INSERT INTO seeded SELECT 'b', uldp._sample_discrete_laplace(1, 1.0, 1000);
SET uldp.test_seed = 6;
INSERT INTO seeded SELECT 'c', uldp._sample_discrete_laplace(1, 1.0, 1000);
SET uldp.test_seed = 0;
INSERT INTO seeded SELECT 'd', uldp._sample_discrete_laplace(1, 1.0, 1000);
INSERT INTO seeded SELECT 'e', uldp._sample_discrete_laplace(1, 1.0, 1000);
RESET uldp.test_seed;
SELECT is((SELECT z FROM seeded WHERE run = 'b'), (SELECT z FROM seeded WHERE run = 'a'),
    'test_seed = 5: setting the seed again restarts the same stream');
SELECT isnt((SELECT z FROM seeded WHERE run = 'a2'), (SELECT z FROM seeded WHERE run = 'a'),
    'test_seed = 5: the stream continues between calls');
SELECT isnt((SELECT z FROM seeded WHERE run = 'c'), (SELECT z FROM seeded WHERE run = 'a'),
    'test_seed = 6 gives another stream');
SELECT isnt((SELECT z FROM seeded WHERE run = 'e'), (SELECT z FROM seeded WHERE run = 'd'),
    'test_seed = 0 (secure randomness): two calls differ');

-- argument checks of the hook
SELECT is(cardinality(uldp._sample_discrete_laplace(1, 1.0, 0)), 0, 'n = 0 gives an empty array');
SELECT throws_ok($$SELECT uldp._sample_discrete_laplace(0, 1.0, 10)$$, '22023',
    'invalid arguments for uldp._sample_discrete_laplace', 'sensitivity 0 is refused');
SELECT throws_ok($$SELECT uldp._sample_discrete_laplace(1, 0, 10)$$, '22023',
    'invalid arguments for uldp._sample_discrete_laplace', 'epsilon 0 is refused');
SELECT throws_ok($$SELECT uldp._sample_discrete_laplace(1, 1.0, -1)$$, '22023',
    'invalid arguments for uldp._sample_discrete_laplace', 'a negative n is refused');

SELECT * FROM finish();
ROLLBACK;

-- test/stat/discrete_gaussian.sql -- the discrete Gaussian sampler of the vector releases
-- against its exact law.
--
-- uldp._sample_discrete_gaussian(sigma2, n): n draws Z with P(Z = z) = exp(-z^2 / (2 s)) / C,
-- C = sum over all integers, s = sigma2 rounded UP to 24 significant bits (src/noise.c): exact
-- for 0.5 and 3; 1000.7 becomes 16395469 / 2^14 = 1000.70001220703125.  Three settings,
-- N = 200000 draws each.  Every constant below is printed by test/stat/thresholds.py
-- (discrete_gaussian(); pure Python, no scipy).  The exact pmf is computed here in SQL over
-- |z| <= 40 sd + 2 (the mass beyond is below exp(-800); weights below exp(-700) count as 0).
--
-- Per setting:
--  * goodness of fit: categories k = z rounded to a multiple of an odd width w (1, 1, 7), the two
--    ends taking the tails, |k| <= M with M the largest giving every expected count >= 20
--    (asserted; M = 2, 6, 17).  Pearson's X^2 < crit, the chi-square (df = 2M) quantile at
--    1 - 1e-7: P(false failure) = 1e-7 in the chi-square limit of X^2 (expected counts >= 26).
--  * power: draws at sigma2 * 1.2 and sigma2 / 1.2, tested against the law at sigma2, must give
--    X^2 > crit.  Noncentralities 2814..4075; thresholds.py bounds each P(X^2 <= crit) by an exact
--    binomial sum (X^2 >= (O_A - E_A)^2 / E_A for any set A of categories): <= 1.6e-130.
--  * mean: the discrete Gaussian with parameter s is s-subgaussian (Canonne, Kamath and Steinke
--    2020, Corollary 9: E exp(tZ) <= exp(t^2 s / 2)), so P(|mean| >= a) <= 2 exp(-N a^2 / (2 s));
--    a = sqrt(2 s ln(2e8) / N) gives P(false failure) <= 1e-8.
--  * variance: the exact variance v = sum z^2 P(z) (0.49898 for sigma2 = 0.5: slightly below s
--    for small s; s to 1e-12 for the others).  The median of 100 block means of z^2 (blocks of
--    2000 draws) lies within (1 +- 0.07) v: a block misses with probability
--    <= Var(z^2) / (2000 (0.07 v)^2) <= 0.208 (Chebyshev, exact fourth moment), and the median
--    misses only if 50 blocks do: P(false failure) <= 9.7e-11 (binomial).
-- The ends of the sampler's range (src/noise.c: [2^-64, 2^60], every variance a release requests;
-- the count of users alone needs 4e-6 to 5.4e15):
--  * sigma2 = 2^52, 2^59 and 2^60 (sd 2^26 to 2^30; exact dyadic): categories floor(4 z / sd) in [-12, 11],
--    the ends taking the tails, expected from the normal law (the bin edges are integers, and at
--    sd >= 2^26 each bin's discrete mass is the normal one to a relative 1e-7, far below what
--    200000 draws resolve); min expected count 596; X^2 < 76.9030 (df 23, 1e-7).  Power: draws at
--    sigma2 * 1.2 and / 1.2 (2^52 and 2^59: 1.2 * 2^60 is out of range), noncentralities 3917 and
--    2802, P(not rejected) <= 1.3e-147.
--  * sigma2 = 2^-64 and 4e-6 (the smallest count variance): every draw is 0; P(false failure)
--    <= 200000 * 3 exp(-1 / (2 sigma2)) < 1e-300.  Power: at sigma2 = 0.05 some draw is not 0,
--    P(not) <= 1.3e-8.
-- Also: seeded mode reproduces draws; 0 (secure randomness) gives fresh ones (two calls of 1000
-- draws at sigma2 = 3 coincide with probability < 0.23^1000).
--
-- False failures of the whole file (Bonferroni): 6 x 1e-7 (fit) + 3 x 1e-8 (mean)
-- + 3 x 9.7e-11 (variance) + 2 x 1e-300 (zeros) < 6.4e-7 <= 1e-6.
\set prefix uldp_stat_dg_
\ir ../lib/prelude.sql

BEGIN;
SELECT plan(38);
SET LOCAL uldp.test_seed = 0;

-- id, sigma2, s (sigma2 rounded up to 24 bits), bin width w, categories -M..M,
-- chi-square crit for df = 2M at 1e-7, subgaussian bound on |mean| at 1e-8
CREATE TEMP TABLE settings (id int, sigma2 float8, s float8, w int, m int, crit float8, mean_bound float8);
INSERT INTO settings VALUES
    (1,    0.5,    0.5,                  1,  2, 38.2397, 0.00977595),
    (2,    3.0,    3.0,                  1,  6, 56.4337, 0.0239461),
    (3, 1000.7, 1000.70001220703125,     7, 17, 95.3385, 0.437347);

CREATE TEMP TABLE draws AS
    SELECT st.id, v.variant, d.i, d.z
    FROM settings st,
         (VALUES ('exact', 1.0::float8), ('sigma2*1.2', 1.2), ('sigma2/1.2', 1 / 1.2)) v(variant, f),
         LATERAL unnest(uldp._sample_discrete_gaussian(st.sigma2 * v.f, 200000)) WITH ORDINALITY d(z, i);

-- the exact law: P(z) = exp(-z^2 / (2 s)) / C over |z| <= L
CREATE TEMP TABLE pmf AS
    SELECT st.id, z, CASE WHEN z::float8 * z / (2 * st.s) > 700 THEN 0 ELSE exp(-(z::float8 * z) / (2 * st.s)) END AS w
    FROM settings st, generate_series(-(40 * sqrt(st.s))::int - 2, (40 * sqrt(st.s))::int + 2) z;
CREATE TEMP TABLE law AS
    SELECT p.id, p.z, p.w / t.c AS p FROM pmf p JOIN (SELECT id, sum(w) AS c FROM pmf GROUP BY id) t USING (id);
CREATE TEMP TABLE expected AS
    SELECT l.id, least(greatest(floor((l.z + (st.w - 1) / 2)::float8 / st.w), -st.m), st.m)::int AS k, sum(l.p) AS p
    FROM law l JOIN settings st USING (id) GROUP BY 1, 2;
CREATE TEMP TABLE observed AS
    SELECT id, variant, least(greatest(floor((z + (w - 1) / 2)::float8 / w), -m), m)::int AS k, count(*) AS n
    FROM draws JOIN settings USING (id) GROUP BY 1, 2, 3;
CREATE TEMP TABLE pearson AS
    SELECT e.id, v.variant, sum((coalesce(o.n, 0) - 200000 * e.p) ^ 2 / (200000 * e.p)) AS x2
    FROM expected e CROSS JOIN (VALUES ('exact'), ('sigma2*1.2'), ('sigma2/1.2')) v(variant)
    LEFT JOIN observed o ON o.id = e.id AND o.variant = v.variant AND o.k = e.k
    GROUP BY 1, 2;

SELECT is(count(*), 1800000::bigint, '3 x 200000 draws for each of the 3 settings') FROM draws;
SELECT ok(count(*) = 0, 'no draw falls outside the support the law is computed on')
FROM draws d JOIN settings st USING (id) WHERE abs(d.z) > (40 * sqrt(st.s))::int + 2;
SELECT ok(min(200000 * e.p) >= 20 AND abs(sum(e.p) - 1) < 1e-12 AND count(*) = 2 * st.m + 1,
          format('sigma2 = %s: %s categories, every expected count >= 20 (min %s)',
                 st.sigma2, count(*), round(min(200000 * e.p)::numeric, 1)))
FROM expected e JOIN settings st USING (id) GROUP BY st.id, st.sigma2, st.m ORDER BY st.id;
SELECT ok(p.x2 < st.crit, format('goodness of fit (sigma2 = %s): X^2 = %s < %s (df %s, 1e-7)',
                                 st.sigma2, round(p.x2::numeric, 2), st.crit, 2 * st.m))
FROM pearson p JOIN settings st USING (id) WHERE p.variant = 'exact' ORDER BY st.id;
SELECT ok(p.x2 > st.crit, format('power (sigma2 = %s): draws at %s are rejected, X^2 = %s > %s',
                                 st.sigma2, p.variant, round(p.x2::numeric, 1), st.crit))
FROM pearson p JOIN settings st USING (id) WHERE p.variant <> 'exact' ORDER BY st.id, p.variant;
SELECT ok(abs(avg(d.z)) < st.mean_bound, format('mean (sigma2 = %s): |%s| < %s',
                                                st.sigma2, round(avg(d.z), 6), st.mean_bound))
FROM draws d JOIN settings st USING (id) WHERE d.variant = 'exact' GROUP BY st.id, st.sigma2, st.mean_bound
ORDER BY st.id;
SELECT ok(abs(b.med / b.var - 1) < 0.07,
          format('variance (sigma2 = %s): median of block means of z^2 = %s, exact variance %s, within 7%%',
                 b.sigma2, round(b.med::numeric, 6), round(b.var::numeric, 6)))
FROM (SELECT st.id, st.sigma2, (SELECT sum(l.z::float8 ^ 2 * l.p) FROM law l WHERE l.id = st.id) AS var,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY blk.m2) AS med
      FROM settings st,
           LATERAL (SELECT avg(d.z::float8 ^ 2) AS m2 FROM draws d
                    WHERE d.id = st.id AND d.variant = 'exact' GROUP BY (d.i - 1) / 2000) blk
      GROUP BY st.id, st.sigma2) b
ORDER BY b.id;
SELECT ok(abs((SELECT sum(l.z::float8 ^ 2 * l.p) FROM law l WHERE l.id = 1) - 0.498979130833) < 1e-9,
          'the exact variance at sigma2 = 0.5 is 0.498979130833 (thresholds.py)');

-- ---------------------------------------------------------------------------
-- the ends of the range
CREATE TEMP TABLE large_law (k int, p float8);
INSERT INTO large_law SELECT k - 13, p FROM unnest(ARRAY[
    0.00297976323505, 0.00322990209072, 0.00601480732927, 0.0105256592931, 0.0173090249156,
    0.026748044405, 0.038842572398, 0.0530054802646, 0.0679720984454, 0.0819101863491,
    0.0927561355911, 0.0987063256829, 0.0987063256829, 0.0927561355911, 0.0819101863491,
    0.0679720984454, 0.0530054802646, 0.038842572398, 0.026748044405, 0.0173090249156,
    0.0105256592931, 0.00601480732927, 0.00322990209072, 0.00297976323505]::float8[]) WITH ORDINALITY l(p, k);
CREATE TEMP TABLE large_pearson AS
    SELECT st.sigma2, v.variant,
           (SELECT sum((coalesce(o.n, 0) - 200000 * l.p) ^ 2 / (200000 * l.p))
            FROM large_law l LEFT JOIN
                 (SELECT least(greatest(floor(4 * z / sqrt(st.sigma2)), -12), 11)::int AS k, count(*) AS n
                  FROM unnest(uldp._sample_discrete_gaussian(st.sigma2 * v.f, 200000)) z GROUP BY 1) o
                 ON o.k = l.k) AS x2
    FROM (VALUES (2 ^ 52), (2 ^ 59), (2 ^ 60)) st(sigma2),
         (VALUES ('exact', 1.0::float8), ('sigma2*1.2', 1.2), ('sigma2/1.2', 1 / 1.2)) v(variant, f)
    WHERE st.sigma2 < 2 ^ 60 OR v.variant = 'exact';
SELECT ok(abs((SELECT sum(p) FROM large_law) - 1) < 1e-10, 'the 24 normal bin probabilities sum to 1');
SELECT ok(x2 < 76.9030, format('goodness of fit (sigma2 = 2^%s): X^2 = %s < 76.9030 (df 23, 1e-7)',
                               log(2, sigma2::numeric)::int, round(x2::numeric, 2)))
FROM large_pearson WHERE variant = 'exact' ORDER BY sigma2;
SELECT ok(x2 > 76.9030, format('power (sigma2 = 2^%s): draws at %s are rejected, X^2 = %s > 76.9030',
                               log(2, sigma2::numeric)::int, variant, round(x2::numeric, 1)))
FROM large_pearson WHERE variant <> 'exact' ORDER BY sigma2, variant;
SELECT ok(z = ARRAY(SELECT 0::bigint FROM generate_series(1, 200000)), format('sigma2 = %s: every draw is 0', sigma2))
FROM (VALUES (2 ^ (-64)), (4e-6)) st(sigma2), LATERAL (SELECT uldp._sample_discrete_gaussian(st.sigma2, 200000) AS z) d;
SELECT ok(EXISTS (SELECT FROM unnest(uldp._sample_discrete_gaussian(0.05, 200000)) z WHERE z <> 0),
    'power: at sigma2 = 0.05 some draw is not 0');

-- ---------------------------------------------------------------------------
-- seeded and secure modes
SET LOCAL uldp.test_seed = 5;
CREATE TEMP TABLE seeded AS SELECT 'a' AS run, uldp._sample_discrete_gaussian(3, 1000) AS z;
INSERT INTO seeded SELECT 'a2', uldp._sample_discrete_gaussian(3, 1000);
SET LOCAL uldp.test_seed = 5;
INSERT INTO seeded SELECT 'b', uldp._sample_discrete_gaussian(3, 1000);
SET LOCAL uldp.test_seed = 0;
INSERT INTO seeded SELECT 'd', uldp._sample_discrete_gaussian(3, 1000);
INSERT INTO seeded SELECT 'e', uldp._sample_discrete_gaussian(3, 1000);
SELECT is((SELECT z FROM seeded WHERE run = 'b'), (SELECT z FROM seeded WHERE run = 'a'),
    'test_seed = 5: setting the seed again restarts the same stream');
SELECT isnt((SELECT z FROM seeded WHERE run = 'a2'), (SELECT z FROM seeded WHERE run = 'a'),
    'test_seed = 5: the stream continues between calls');
SELECT isnt((SELECT z FROM seeded WHERE run = 'e'), (SELECT z FROM seeded WHERE run = 'd'),
    'test_seed = 0 (secure randomness): two calls differ');

-- argument checks
SELECT is(cardinality(uldp._sample_discrete_gaussian(1, 0)), 0, 'n = 0 gives an empty array');
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(2 ^ (-65), 10)$$, '22023',
    'invalid arguments for uldp._sample_discrete_gaussian', 'sigma2 below 2^-64 is refused');
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(2 ^ 61, 10)$$, '22023',
    'invalid arguments for uldp._sample_discrete_gaussian', 'sigma2 above 2^60 is refused');

SELECT * FROM finish();
ROLLBACK;

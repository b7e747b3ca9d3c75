-- test/stat/count.sql -- user_dp_count and user_dp_count_ci: the privacy loss between neighbouring
-- tables, unbiasedness and the interval's coverage, measured through SQL with real randomness.
--
-- D: 100 users; D' = D plus a 101st user.  The release is n + Z, Z discrete Laplace with
-- P(Z = z) ~ q^|z|, q = exp(-eps) (cut at 0, which never happens here: P(Z <= -100) < 1e-43).
-- Releases of user_dp_count_ci, whose estimate is user_dp_count's release (the same function
-- computes both, src/release.c), K = 1000 of each table at eps = 1 and at eps = 4.
--
-- (a) Privacy.  Events E_k = {estimate <= k}, k = 99, 100, 101.  p_D(E_100) = 1 / (1 + q) and
-- p_D'(E_100) = q / (1 + q): the ratio is exactly e^eps, the largest any event can have.  For a
-- count n of K, the Chernoff (KL) bounds (test/lib/chernoff.sql) satisfy P(p > upper) <= alpha
-- and P(p < lower) <= alpha, alpha = 1e-8.  eps-DP requires p_D(E) <= e^eps p_D'(E) and the
-- other way round; the test fails on an event only if lower_D > e^eps upper_D' (or the other way
-- round), which for an eps-DP release needs one of the 4 bounds to fail: at eps = 1 and at
-- eps = 4 (each judged against its own eps), P(false failure) <= 2 x 3 x 4 x 1e-8 = 2.4e-7.
-- (b) Power.  The eps = 4 releases judged as if they were eps = 1 must violate it on E_100
-- (true loss 4): p_D = 0.982, p_D' = 0.018, and the test must find lower_D > e upper_D';
-- P(not) < 1e-100 (the exact binomial sum underflows).
-- (c) Unbiasedness.  The mean of the K estimates of D at eps = 1 lies within 0.3 of 100:
-- E[Z] = 0, and a Chernoff bound with the discrete Laplace's moment generating function,
-- E[e^(tZ)] = (1 - q)^2 / ((1 - q e^t)(1 - q e^-t)), gives P(|mean - 100| >= 0.3) <= 6.9e-11.
-- (The sd of one release is sqrt(2q) / (1 - q) = 1.357 <= 1.5 / eps.)
-- (d) Coverage.  The 95% interval [estimate - 3, estimate + 3] at eps = 1 holds n with
-- probability 1 - 2 q^4 / (1 + q) = 0.9732; the test requires at least 93% of the K intervals
-- of D to hold 100: P(false failure) <= exp(-K KL(0.93 || 0.9732)) = 1.4e-11.
-- False failures of the whole file: 2.4e-7 + 1e-100 + 6.9e-11 + 1.4e-11 < 2.5e-7 <= 1e-6.
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.  4000 releases.
\set prefix uldp_stat_count_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_count_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_count_analyst', 1e9, 1) IS NULL AS budget_set \gset
-- D is u <= 100, D' is every row; users have 1 to 3 rows
CREATE TABLE public.uldp_stat_count_data (u int, r int);
INSERT INTO public.uldp_stat_count_data SELECT u, r FROM generate_series(1, 101) u, generate_series(1, 3) r WHERE r <= 1 + u % 3;
GRANT SELECT ON public.uldp_stat_count_data TO uldp_stat_count_analyst;

\ir ../lib/chernoff.sql

SET uldp.test_seed = 0;
SET SESSION AUTHORIZATION uldp_stat_count_analyst;
SELECT plan(11);

-- "WHERE g = g" makes the subquery correlated, so it releases (and is charged) once per g
CREATE TEMP TABLE releases (eps float8, tbl text, e uldp.count_estimate);
INSERT INTO releases SELECT 1, 'D', (SELECT user_dp_count_ci(u, 1.0) FROM uldp_stat_count_data WHERE u <= 100 AND g = g)
    FROM generate_series(1, 1000) g;
INSERT INTO releases SELECT 1, 'D''', (SELECT user_dp_count_ci(u, 1.0) FROM uldp_stat_count_data WHERE g = g)
    FROM generate_series(1, 1000) g;
INSERT INTO releases SELECT 4, 'D', (SELECT user_dp_count_ci(u, 4.0) FROM uldp_stat_count_data WHERE u <= 100 AND g = g)
    FROM generate_series(1, 1000) g;
INSERT INTO releases SELECT 4, 'D''', (SELECT user_dp_count_ci(u, 4.0) FROM uldp_stat_count_data WHERE g = g)
    FROM generate_series(1, 1000) g;
SELECT is((SELECT count(*) FROM releases WHERE (e).estimate IS NOT NULL), 4000::bigint, '4000 releases');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function = 'user_dp_count_ci'), 4000::bigint,
    'each release was charged');

CREATE TEMP TABLE bounds AS
    SELECT eps, k, n_d, n_d1,
           pg_temp.kl_bound(n_d, 1000, ln(1e8), false) AS lo_d, pg_temp.kl_bound(n_d, 1000, ln(1e8), true) AS up_d,
           pg_temp.kl_bound(n_d1, 1000, ln(1e8), false) AS lo_d1, pg_temp.kl_bound(n_d1, 1000, ln(1e8), true) AS up_d1
    FROM (SELECT r.eps, k.k,
                 count(*) FILTER (WHERE r.tbl = 'D' AND (r.e).estimate <= k.k) AS n_d,
                 count(*) FILTER (WHERE r.tbl = 'D''' AND (r.e).estimate <= k.k) AS n_d1
          FROM releases r CROSS JOIN (VALUES (99), (100), (101)) k(k)
          GROUP BY 1, 2) c;

-- (a) privacy, each eps against itself
SELECT ok(lo_d <= exp(eps) * up_d1 AND lo_d1 <= exp(eps) * up_d,
          format('%s-DP on estimate <= %s: counts D %s, D'' %s of 1000; p_D in [%s, %s], p_D'' in [%s, %s]',
                 eps, k, n_d, n_d1, round(lo_d::numeric, 4), round(up_d::numeric, 4),
                 round(lo_d1::numeric, 4), round(up_d1::numeric, 4)))
FROM bounds ORDER BY eps, k;
-- (b) power
SELECT ok(lo_d > exp(1.0) * up_d1,
          format('power: releases at eps 4 violate eps = 1 detectably on estimate <= 100: '
                 'lower p_D %s > e upper p_D'' = %s', round(lo_d::numeric, 4), round((exp(1.0) * up_d1)::numeric, 4)))
FROM bounds WHERE eps = 4 AND k = 100;
-- (c) unbiasedness
SELECT ok(abs(avg((e).estimate) - 100) < 0.3,
          format('unbiased: the mean of 1000 releases of 100 users at eps 1 is %s (within 0.3 of 100); sd %s',
                 round(avg((e).estimate), 3), round(stddev((e).estimate), 3)))
FROM releases WHERE eps = 1 AND tbl = 'D';
-- (d) coverage
SELECT ok(count(*) FILTER (WHERE (e).ci_lower <= 100 AND 100 <= (e).ci_upper) >= 930,
          format('coverage: %s of 1000 intervals at eps 1 hold the 100 users (at least 930)',
                 count(*) FILTER (WHERE (e).ci_lower <= 100 AND 100 <= (e).ci_upper)))
FROM releases WHERE eps = 1 AND tbl = 'D';

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;
RESET uldp.test_seed;

\ir ../lib/cleanup.sql

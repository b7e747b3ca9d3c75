-- test/stat/vector_mean.sql -- user_dp_mean on vectors: accuracy against a known mean, and the
-- privacy loss between neighbouring tables, measured through SQL with real randomness.
-- Every constant below is printed by test/stat/thresholds.py (vector_mean()).
--
-- (a) Accuracy.  400 users, one row each, in dimension 3; the mean is exactly m = (1, -2, 0.5)
-- (|m| = 2.2913) and every row has norm < 4 (both asserted).  200 releases of
-- user_dp_mean(v, u, 1, 1e-6, radius 4, tau 100): with that tau the box is not smaller than the
-- ball, so there is no range (src/highdim.c): rho = zcdp_rho(1, 1e-6) = 0.024356; the noisy count
-- c' = n + Zc, Zc discrete Gaussian of variance s_c = 4 / rho (rounded up by < 2^-22); the rest,
-- rho_sum = 7 rho / 8, pays for the sum: K = floor(sqrt(2 rho_sum) 2^20) = 216481 grid steps of
-- g = 4 / K per radius, and each of the P = 4 rotated coordinates of the integer sum gets discrete
-- Gaussian noise N_j of variance 2^40.  In the rotated domain (orthonormal), with the user points
-- Y_i (unclipped: |Y_i| < 4) and the rounding r of the sum (at most 8 grid steps a user, l2:
-- rounding to the grid moves a point by sqrt(P)/2 = 1 step, the rescaling into the ball of K steps
-- by at most 1 + sqrt(P) more per pass),
--     release - m = m (n - c') / c' + (r + g N) / c',
-- and rotating back, dropping the padding and clipping to the ball (which holds m) do not move the
-- release away from m.  Discrete Gaussians are subgaussian with their parameter (Canonne, Kamath
-- and Steinke 2020, Cor. 9), so |Zc| <= tc = sqrt(2 s_c ln(2 / 2e-10)) = 86.97 and every
-- |N_j| <= t1 = 2^20 sqrt(2 ln(2 / 2e-10)) except with probability 2e-10 each (5 bounds), and then
--     |release - m| <= (|m| tc + 8 n g + 2 g t1) / (n - tc) = 1.47680 < 1.477.
-- (The noise sd of one coordinate of the mean is 0.048, so a typical error is about 0.1; the
-- bound catches a release that is off by a scale error, a wrong sign or a lost user count.)
-- P(false failure) <= 200 releases x 5 x 2e-10 = 2e-7.
--
-- (b) Neighbours.  D: 100 users, each with the one row {0}; D' = D plus a user with {1}.
-- Releases user_dp_mean(v, u, eps, 1e-6, radius 1, tau 100) (dimension 1, no range); the added
-- user moves the noiseless sum by the full radius, in the direction of the only coordinate.
-- Events: "empty" (the noisy count is below the threshold, 68.4 users at eps = 1) and
-- "released and x > c" for c = -0.05, 0, 0.05, 0.1.  K = 2000 releases of each table at eps = 1.
-- For a count k of K, the Chernoff (KL) bounds
--   upper = max {p >= k/K : K KL(k/K || p) <= ln(1/alpha)}, lower likewise below k/K,
-- satisfy P(p > upper) <= alpha and P(p < lower) <= alpha.  (eps, delta)-DP requires
-- p_D(E) <= e^eps p_D'(E) + delta and p_D'(E) <= e^eps p_D(E) + delta; the test fails on an
-- event only if lower_D > e^eps upper_D' + delta (or the other way round), which for a
-- DP release needs one of the 4 bounds to fail: alpha = 1e-8, so
-- P(false failure) <= 5 events x 4 x 1e-8 = 2e-7.
-- The exact event probabilities at eps = 1 (thresholds.py, the sum noise as continuous
-- Gaussian): empty 0.00697 / 0.00560, x > 0: 0.4965 / 0.5785 (loss 0.15), x > 0.1:
-- 0.0223 / 0.0339 (loss 0.42) -- the zCDP accounting leaves these losses well below eps.
-- Power: the same test catches a release that is not eps-DP.  K = 1000 releases of each table
-- at eps = 16 (noise sd 0.0041 against a shift of 1/101), judged as if they were eps = 1:
-- p_D(x > 0.005) = 0.113, p_D'(x > 0.005) = 0.885 (loss 2.06 > 1), and the test must find
-- lower_D' > e upper_D + 1e-6; P(not) <= 2.2e-18 (exact binomial sum, thresholds.py).  (At 4 eps
-- the largest loss on an event of probability >= 0.01 is about 1.6, too close to 1 for K = 2000
-- at alpha = 1e-8: confidence bounds this tight would need some 10^5 releases.)
--
-- False failures of the whole file: 2e-7 + 2e-7 + 2.2e-18 < 4.1e-7 <= 1e-6.
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.  About 6200 releases.
\set prefix uldp_stat_vm_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_vm_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_vm_analyst', 1e9, 1) IS NULL AS budget_set \gset
CREATE TABLE public.uldp_stat_vm_acc (u int, v float8[] CHECK (cardinality(v) = 3));
INSERT INTO public.uldp_stat_vm_acc
    SELECT u, ARRAY[1 + ((u % 4) - 1.5) * 0.5, -2 + ((u % 5) - 2) * 0.5, 0.5 + ((u % 8) - 3.5) * 0.25]
    FROM generate_series(1, 400) u;
-- D is u <= 100, D' is every row
CREATE TABLE public.uldp_stat_vm_nb (u int, v float8[] CHECK (cardinality(v) = 1));
INSERT INTO public.uldp_stat_vm_nb SELECT u, ARRAY[0::float8] FROM generate_series(1, 100) u;
INSERT INTO public.uldp_stat_vm_nb VALUES (101, ARRAY[1::float8]);
GRANT SELECT ON public.uldp_stat_vm_acc, public.uldp_stat_vm_nb TO uldp_stat_vm_analyst;

\ir ../lib/chernoff.sql

SET uldp.test_seed = 0;
SET SESSION AUTHORIZATION uldp_stat_vm_analyst;
SELECT plan(13);

-- ---------------------------------------------------------------------------
-- (a) accuracy
SELECT is((SELECT array_agg(round(m::numeric, 12) ORDER BY k)
           FROM (SELECT k, avg(v[k]) AS m FROM uldp_stat_vm_acc, generate_series(1, 3) k GROUP BY k) s),
    ARRAY[1, -2, 0.5]::numeric[], 'the accuracy data has mean (1, -2, 0.5)');
SELECT ok(max(sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)) < 4, 'and every row lies inside the radius 4')
FROM uldp_stat_vm_acc;
CREATE TEMP TABLE acc AS
    SELECT g, (SELECT user_dp_mean(v, u, 1.0, 1e-6, 4, 100) FROM uldp_stat_vm_acc WHERE g = g) AS r
    FROM generate_series(1, 200) g;
SELECT is((SELECT count(*) FROM acc WHERE cardinality(r) = 3), 200::bigint, '200 releases, each of dimension 3');
SELECT ok(max(err) < 1.477, format('accuracy: the largest l2 error of 200 releases, %s, is below 1.477 (median %s)',
                                   round(max(err)::numeric, 4),
                                   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY err))::numeric, 4)))
FROM (SELECT sqrt((r[1] - 1) ^ 2 + (r[2] + 2) ^ 2 + (r[3] - 0.5) ^ 2) AS err FROM acc) s;

-- ---------------------------------------------------------------------------
-- (b) neighbours; "WHERE g = g" makes the subquery correlated, so it releases once per g
CREATE TEMP TABLE releases (eps float8, tbl text, r float8[]);
INSERT INTO releases SELECT 1, 'D', (SELECT user_dp_mean(v, u, 1.0, 1e-6, 1, 100) FROM uldp_stat_vm_nb WHERE u <= 100 AND g = g)
    FROM generate_series(1, 2000) g;
INSERT INTO releases SELECT 1, 'D''', (SELECT user_dp_mean(v, u, 1.0, 1e-6, 1, 100) FROM uldp_stat_vm_nb WHERE g = g)
    FROM generate_series(1, 2000) g;
INSERT INTO releases SELECT 16, 'D', (SELECT user_dp_mean(v, u, 16.0, 1e-6, 1, 100) FROM uldp_stat_vm_nb WHERE u <= 100 AND g = g)
    FROM generate_series(1, 1000) g;
INSERT INTO releases SELECT 16, 'D''', (SELECT user_dp_mean(v, u, 16.0, 1e-6, 1, 100) FROM uldp_stat_vm_nb WHERE g = g)
    FROM generate_series(1, 1000) g;
SELECT is((SELECT count(*) FROM releases WHERE cardinality(r) IN (0, 1) AND r IS NOT NULL), 6000::bigint,
    'every one of the 6000 releases is empty or of dimension 1');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function = 'user_dp_mean'), 6200::bigint, 'each release was charged');

-- events: 'empty', or 'released and x > c'
CREATE TEMP TABLE events (name text, c float8);
INSERT INTO events VALUES ('empty', NULL), ('x > -0.05', -0.05), ('x > 0', 0), ('x > 0.05', 0.05), ('x > 0.1', 0.1),
                          ('x > 0.005', 0.005);
CREATE TEMP TABLE counts AS
    SELECT k.eps, e.name, k.k,
           count(*) FILTER (WHERE r.tbl = 'D' AND (CASE WHEN e.c IS NULL THEN cardinality(r.r) = 0 ELSE r.r[1] > e.c END)) AS n_d,
           count(*) FILTER (WHERE r.tbl = 'D''' AND (CASE WHEN e.c IS NULL THEN cardinality(r.r) = 0 ELSE r.r[1] > e.c END)) AS n_d1
    FROM (VALUES (1::float8, 2000), (16, 1000)) k(eps, k) CROSS JOIN events e
    JOIN releases r ON r.eps = k.eps
    GROUP BY 1, 2, 3;
CREATE TEMP TABLE bounds AS
    SELECT eps, name, k, n_d, n_d1,
           pg_temp.kl_bound(n_d, k, ln(1e8), false) AS lo_d, pg_temp.kl_bound(n_d, k, ln(1e8), true) AS up_d,
           pg_temp.kl_bound(n_d1, k, ln(1e8), false) AS lo_d1, pg_temp.kl_bound(n_d1, k, ln(1e8), true) AS up_d1
    FROM counts;

SELECT ok(lo_d <= exp(1.0) * up_d1 + 1e-6 AND lo_d1 <= exp(1.0) * up_d + 1e-6,
          format('(1, 1e-6)-DP on event %s: counts D %s, D'' %s of 2000; p_D in [%s, %s], p_D'' in [%s, %s]',
                 name, n_d, n_d1, round(lo_d::numeric, 4), round(up_d::numeric, 4),
                 round(lo_d1::numeric, 4), round(up_d1::numeric, 4)))
FROM bounds WHERE eps = 1 AND name <> 'x > 0.005'
ORDER BY CASE name WHEN 'empty' THEN -1 ELSE (SELECT c FROM events e WHERE e.name = bounds.name) END;
SELECT ok(lo_d1 > exp(1.0) * up_d + 1e-6,
          format('power: releases at eps 16 violate eps = 1 detectably on x > 0.005: counts D %s, D'' %s of 1000; '
                 'lower p_D'' %s > e upper p_D + 1e-6 = %s',
                 n_d, n_d1, round(lo_d1::numeric, 4), round((exp(1.0) * up_d + 1e-6)::numeric, 4)))
FROM bounds WHERE eps = 16 AND name = 'x > 0.005';
SELECT ok((SELECT n_d + n_d1 FROM counts WHERE eps = 16 AND name = 'empty') = 0,
    'at eps 16 (threshold 6.7 users) every release of 100 users is a vector');

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;
RESET uldp.test_seed;

\ir ../lib/cleanup.sql

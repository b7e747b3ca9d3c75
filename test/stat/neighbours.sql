-- test/stat/neighbours.sql -- the privacy loss of user_dp_range between neighbouring tables,
-- measured through SQL.
--
-- D: 5 users whose averages lie in bins 0, 1, 2, 3, 4 of [0, 6) (tau = 0.5, bin width 1, L = 6);
-- D' = D plus all the rows of a 6th user, in bin 3.  K = 2000 releases of
-- user_dp_range(v, u, eps, 0, 6, 0.5) on each, eps = 1; each output interval identifies its bin.
-- For the exponential mechanism with the score max(#below, #above), adding a user raises the
-- score of the bins at and below the median by 1 and leaves bin 3 (just above it) unchanged,
-- so bin 3 carries the largest loss: log(p_D/p_D') = -0.732 there, +0.268 on every other bin
-- (exact values, thresholds.py).  (An added user far from the median gives at most 0.62 eps.)
--
-- Confidence bounds: for a count n of K, the Chernoff (KL) bounds
--   upper = max {p >= n/K : K KL(n/K || p) <= log(1/alpha)}, lower likewise below n/K,
-- satisfy P(p > upper) <= alpha and P(p < lower) <= alpha (Chernoff-Hoeffding, KL form).
-- The lower confidence bound of |log(p_D(b)/p_D'(b))| is
--   LCB(b) = max(0, log(lower_D / upper_D'), log(lower_D' / upper_D)),
-- which exceeds the true |loss| only if one of its 4 bounds fails.
--  * privacy: LCB(b) <= eps for all 6 bins; alpha = 1e-8, so P(false failure) <= 6 x 4 x 1e-8
--    = 2.4e-7.
--  * power at eps: some bin has LCB > 0 (the loss is detectable at all); P(not) <= P(bin 3 has
--    not) = 6.5e-8, an exact sum over the two binomial counts (thresholds.py).
--  * power against a 4-fold violation: K releases of D and D' at 4 eps, read as if they were
--    eps-DP, must give LCB(b) > eps for some bin (true loss 3.33 at bin 3); P(not) <= 8.2e-13
--    (exact, thresholds.py); and LCB(b) <= 4 eps for all bins, as above: <= 2.4e-7.
-- False failures of the whole file: 2 x 2.4e-7 + 6.5e-8 + 8.2e-13 < 5.5e-7 <= 1e-6.
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.
\set prefix uldp_stat_nb_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_nb_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_nb_analyst', 1e9, 1) IS NULL AS budget_set \gset
-- D is u <> 6, D' is every row
CREATE TABLE public.uldp_stat_nb_data (u int, v float8);
INSERT INTO public.uldp_stat_nb_data VALUES
    (1, 0.5), (1, 0.25), (1, 0.75),   -- bin 0
    (2, 1.5),                         -- bin 1
    (3, 2.1), (3, 2.9),               -- bin 2
    (4, 3.5),                         -- bin 3
    (5, 4.5), (5, 4.6), (5, 4.4),     -- bin 4
    (6, 3.2), (6, 3.8);               -- the added user: bin 3
GRANT SELECT ON public.uldp_stat_nb_data TO uldp_stat_nb_analyst;

\ir ../lib/chernoff.sql

SET SESSION AUTHORIZATION uldp_stat_nb_analyst;
SELECT plan(11);

-- K = 2000 releases on D and on D', at eps and at 4 eps; "WHERE g = g" makes the subquery
-- correlated, so it runs (and releases) once per g
CREATE TEMP TABLE releases (eps float8, tbl text, r uldp.range);
INSERT INTO releases SELECT 1, 'D', (SELECT user_dp_range(v, u, 1.0, 0, 6, 0.5) FROM uldp_stat_nb_data WHERE u <> 6 AND g = g)
    FROM generate_series(1, 2000) g;
INSERT INTO releases SELECT 1, 'D''', (SELECT user_dp_range(v, u, 1.0, 0, 6, 0.5) FROM uldp_stat_nb_data WHERE g = g)
    FROM generate_series(1, 2000) g;
INSERT INTO releases SELECT 4, 'D', (SELECT user_dp_range(v, u, 4.0, 0, 6, 0.5) FROM uldp_stat_nb_data WHERE u <> 6 AND g = g)
    FROM generate_series(1, 2000) g;
INSERT INTO releases SELECT 4, 'D''', (SELECT user_dp_range(v, u, 4.0, 0, 6, 0.5) FROM uldp_stat_nb_data WHERE g = g)
    FROM generate_series(1, 2000) g;

-- bin b's output: centre = (b + 0.5) * 2 tau, centre -+ 2 tau clipped to [0, 6]
CREATE TEMP TABLE bins AS
    SELECT b, greatest((b + 0.5::float8) * 1.0::float8 - 1.0::float8, 0::float8) AS lower,
              least((b + 0.5::float8) * 1.0::float8 + 1.0::float8, 6::float8) AS upper
    FROM generate_series(0, 5) b;
SELECT is((SELECT count(*) FROM releases r JOIN bins b ON (r.r).lower = b.lower AND (r.r).upper = b.upper),
    8000::bigint, 'every one of the 4 x 2000 releases is the interval of one of the 6 bins');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function = 'user_dp_range'), 8000::bigint, 'each was charged');

CREATE TEMP TABLE loss AS
    SELECT e.eps, b.b, c.n_d, c.n_d1,
           CASE WHEN c.n_d > 0 AND c.n_d1 > 0 THEN ln(c.n_d::float8 / c.n_d1) END AS estimate,
           greatest(0,
               ln(nullif(pg_temp.kl_bound(c.n_d, 2000, ln(1e8), false), 0) / pg_temp.kl_bound(c.n_d1, 2000, ln(1e8), true)),
               ln(nullif(pg_temp.kl_bound(c.n_d1, 2000, ln(1e8), false), 0) / pg_temp.kl_bound(c.n_d, 2000, ln(1e8), true))
           ) AS lcb
    FROM (VALUES (1::float8), (4)) e(eps) CROSS JOIN bins b,
         LATERAL (SELECT count(*) FILTER (WHERE r.tbl = 'D') AS n_d, count(*) FILTER (WHERE r.tbl = 'D''') AS n_d1
                  FROM releases r WHERE r.eps = e.eps AND (r.r).lower = b.lower AND (r.r).upper = b.upper) c;

SELECT ok(lcb <= 1.0, format('privacy, bin %s: counts D %s, D'' %s, loss estimate %s, lower bound %s <= eps = 1',
                             b, n_d, n_d1, round(estimate::numeric, 3), round(lcb::numeric, 3)))
FROM loss WHERE eps = 1 ORDER BY b;
SELECT ok(max(lcb) > 0, format('power: the loss at eps = 1 is detectable (largest lower bound %s > 0)',
                               round(max(lcb)::numeric, 3)))
FROM loss WHERE eps = 1;
SELECT ok(max(lcb) > 1.0, format('power: releases at 4 eps violate eps = 1 detectably (largest lower bound %s > 1; %s)',
                                 round(max(lcb)::numeric, 3),
                                 string_agg(format('bin %s: %s/%s', b, n_d, n_d1), ', ' ORDER BY b)))
FROM loss WHERE eps = 4;
SELECT ok(max(lcb) <= 4.0, format('and their loss stays within their own epsilon, 4 (largest lower bound %s)',
                                  round(max(lcb)::numeric, 3)))
FROM loss WHERE eps = 4;

SELECT * FROM finish();

\ir ../lib/cleanup.sql

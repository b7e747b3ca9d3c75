-- test/stat/quantile.sql -- user_dp_quantile with real randomness: accuracy of the rank, user
-- weighting, and the privacy loss between neighbouring tables.  Every constant is derived in
-- test/stat/thresholds.py (quantile()).
--
-- The release x's user-weighted rank is W(< x) / n, W(< x) the total weight of the rows below x,
-- each row of a user with r rows weighing 1 / r.  With Z the noise of the user count and s the
-- score of the selected key (doc/privacy.md), |W(< x) - q n| <= s + w + q |Z|, where w, the
-- weight of the selected key, is at most 2 users here (no grid bin holds rows of more than two
-- users), and the fixed-point weights and the rounded target add less than one: 3 users in all.
-- Given Z, some key scores 0 whenever q (n + Z) lies in [0, n], and then the exponential
-- mechanism gives P(s >= a) <= keys exp(-e a), e = 0.45 (1 - 2^-24) the selection's parameter
-- at eps = 1; summing over the exact law of Z (eps / 10, as the sampler rounds it):
--
-- (a) Accuracy: n = 10,000 users (1 to 7 rows each, 40,000 rows, continuous values: user u's rows
--     lie in [exp(p / 1000), exp((p + 1) / 1000)), p a permutation of the users), eps = 1,
--     q = 0.1, 0.5, 0.9, without bounds (6.8e10 keys) and with bounds (0, 1e5) (6.7e8 keys): the
--     rank lies within 0.02 of q, the accuracy promised at n >= 10,000 and eps = 1.
--     P(false failure) <= 1.95e-7 (q = 0.9 without bounds) + 6.25e-8 (q = 0.9 with bounds)
--     + 9.1e-13 + 1.2e-13 + 4e-28 + 4e-30 < 2.6e-7.
-- (b) Weighting: 1000 users with one row each at 0.5, 1.5, ..., 999.5, and one user with 1000 rows
--     above them all (2001 ... 3000) or below them all (-3000 ... -2001).  Row-weighted (2000
--     rows, half of them the heavy user's), the median would lie between the two groups, above
--     or below every one-row user; user-weighted it is near 500.  The median's user-weighted rank (n = 1001) lies within 0.2 of 0.5,
--     i.e. it lies among the one-row users: P(false failure) <= 2 x 7.2e-13.
-- (c) Neighbours.  D: 40 users, user i with 1 + i % 4 rows in [2^(i - 36), 2^(i - 35)); D' = D plus
--     a user with one row at 1.25 x 2^-33.  K = 1000 releases of
--     user_dp_quantile(v, u, 1, 0.1, 0, 8) on each (q = 0.1 keeps the count's noise on the target,
--     0.1 Z, below the selection's own spread, so that the law depends on its parameter), binned
--     at 2^-35, 2^-33, 2^-31, 2^-29 (5 bins).  The exact laws (computed from the mechanism,
--     thresholds.py) have losses log(p_D / p_D') of -0.121, -0.145, -0.032, +0.176, +0.234.
--      * privacy: the Chernoff (KL) lower confidence bound of |log(p_D(b) / p_D'(b))| (as in
--        neighbours.sql, alpha = 1e-8 per one-sided bound) is at most eps = 1 for every bin:
--        P(false failure) <= 5 x 4 x 1e-8 = 2e-7.
--      * fit: each table's counts fit its exact law, Pearson's X^2 < 38.2397 (chi-square df 4 at
--        1e-7): P(false failure) <= 2 x 1e-7.  Power: against a selection run with its whole
--        share (exp(-0.9 s), 1.9-DP for this non-monotone score), P(not rejected) <= 0.063;
--        against every row weighing one user, <= 3.6e-29.
-- False failures of the whole file: 2.6e-7 + 1.5e-12 + 2e-7 + 2e-7 < 6.6e-7 <= 1e-6.
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.  2008 releases.
\set prefix uldp_stat_q_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_q_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_q_analyst', 1e9, 1) IS NULL AS budget_set \gset
CREATE TABLE public.uldp_stat_q_data AS
    SELECT u, exp((((u * 7919) % 10000) + ((u * 31 + r * 17) % 1000 + 0.5) / 1000.0) / 1000.0)::float8 AS v
    FROM generate_series(1, 10000) u, generate_series(1, 7) r WHERE r <= 1 + u % 7;
CREATE TABLE public.uldp_stat_q_weight (side text, u int, v float8);
INSERT INTO public.uldp_stat_q_weight
    SELECT side, u, u - 0.5 FROM (VALUES ('high'), ('low')) s(side), generate_series(1, 1000) u;
INSERT INTO public.uldp_stat_q_weight
    SELECT 'high', 0, 2000 + r FROM generate_series(1, 1000) r
    UNION ALL SELECT 'low', 0, -2000 - r FROM generate_series(1, 1000) r;
CREATE TABLE public.uldp_stat_q_nb (u int, v float8);
INSERT INTO public.uldp_stat_q_nb
    SELECT i, 2.0::float8 ^ (i - 36) * (1.1 + 0.2 * j) FROM generate_series(0, 39) i, generate_series(0, 3) j
    WHERE j <= i % 4;
INSERT INTO public.uldp_stat_q_nb VALUES (99, 1.25 * 2.0::float8 ^ -33);
GRANT SELECT ON public.uldp_stat_q_data, public.uldp_stat_q_weight, public.uldp_stat_q_nb TO uldp_stat_q_analyst;

\ir ../lib/chernoff.sql

SET uldp.test_seed = 0;
SET SESSION AUTHORIZATION uldp_stat_q_analyst;
SELECT plan(17);

-- (a) accuracy: the user-weighted rank of each release
CREATE TEMP TABLE weighted AS
    SELECT v, 1.0 / count(*) OVER (PARTITION BY u) AS w FROM uldp_stat_q_data;
CREATE TEMP TABLE accuracy (q float8, bounds text, x float8);
INSERT INTO accuracy SELECT 0.1, 'none', user_dp_quantile(v, u, 1.0, 0.1) FROM uldp_stat_q_data;
INSERT INTO accuracy SELECT 0.5, 'none', user_dp_quantile(v, u, 1.0, 0.5) FROM uldp_stat_q_data;
INSERT INTO accuracy SELECT 0.9, 'none', user_dp_quantile(v, u, 1.0, 0.9) FROM uldp_stat_q_data;
INSERT INTO accuracy SELECT 0.1, '(0, 1e5)', user_dp_quantile(v, u, 1.0, 0.1, 0, 1e5) FROM uldp_stat_q_data;
INSERT INTO accuracy SELECT 0.5, '(0, 1e5)', user_dp_quantile(v, u, 1.0, 0.5, 0, 1e5) FROM uldp_stat_q_data;
INSERT INTO accuracy SELECT 0.9, '(0, 1e5)', user_dp_quantile(v, u, 1.0, 0.9, 0, 1e5) FROM uldp_stat_q_data;
SELECT ok(abs(rank - q) <= 0.02,
          format('accuracy, q = %s, bounds %s: released %s, user-weighted rank %s (within 0.02 of q)',
                 q, bounds, round(x::numeric, 3), round(rank, 5)))
FROM (SELECT a.q, a.bounds, a.x,
             coalesce((SELECT sum(w) FROM weighted WHERE v < a.x), 0) / 10000 AS rank
      FROM accuracy a) r
ORDER BY bounds DESC, q;

-- (b) weighting: a user with 1000 rows weighs one user
CREATE TEMP TABLE weighting AS
    SELECT side, (SELECT user_dp_quantile(v, u, 1.0, 0.5) FROM uldp_stat_q_weight w WHERE w.side = s.side) AS x
    FROM (VALUES ('high'), ('low')) s(side);
SELECT ok(abs(user_rank - 0.5) <= 0.2,
          format('weighting, the heavy user %s the others: median %s, user-weighted rank %s (within 0.2 of 0.5), '
                 'row-weighted rank %s', CASE side WHEN 'high' THEN 'above' ELSE 'below' END,
                 round(x::numeric, 3), round(user_rank, 4), round(row_rank, 4)))
FROM (SELECT side, x,
             (SELECT sum(w) FROM (SELECT v, 1.0 / count(*) OVER (PARTITION BY u) AS w
                                  FROM uldp_stat_q_weight WHERE side = g.side) t WHERE v < g.x) / 1001 AS user_rank,
             (SELECT count(*) FILTER (WHERE v < g.x)::numeric / count(*) FROM uldp_stat_q_weight WHERE side = g.side) AS row_rank
      FROM weighting g) r
ORDER BY side;

-- (c) neighbours: K = 1000 releases on D and on D'; "WHERE g = g" makes the subquery correlated,
-- so it runs (and releases) once per g
CREATE TEMP TABLE releases (tbl text, x float8);
INSERT INTO releases SELECT 'D', (SELECT user_dp_quantile(v, u, 1.0, 0.1, 0, 8) FROM uldp_stat_q_nb WHERE u <> 99 AND g = g)
    FROM generate_series(1, 1000) g;
INSERT INTO releases SELECT 'D''', (SELECT user_dp_quantile(v, u, 1.0, 0.1, 0, 8) FROM uldp_stat_q_nb WHERE g = g)
    FROM generate_series(1, 1000) g;
SELECT is((SELECT count(*) FROM releases WHERE x BETWEEN 0 AND 8), 2000::bigint, '2000 releases, all within the bounds');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function = 'user_dp_quantile'), 2008::bigint,
    'each release was charged');

-- the exact laws (thresholds.py) of the bins (-inf, 2^-35), [2^-35, 2^-33), ..., [2^-29, inf)
CREATE TEMP TABLE law (b int, p_d float8, p_d1 float8);
INSERT INTO law VALUES (0, 0.122630, 0.138375), (1, 0.233107, 0.269442), (2, 0.304192, 0.314142),
                       (3, 0.190740, 0.159883), (4, 0.149331, 0.118157);
CREATE TEMP TABLE counts AS
    SELECT l.b, l.p_d, l.p_d1,
           count(r.x) FILTER (WHERE r.tbl = 'D') AS n_d, count(r.x) FILTER (WHERE r.tbl = 'D''') AS n_d1
    FROM law l LEFT JOIN releases r
      ON width_bucket(r.x, ARRAY[2.0::float8 ^ -35, 2.0::float8 ^ -33, 2.0::float8 ^ -31, 2.0::float8 ^ -29]) = l.b
    GROUP BY l.b, l.p_d, l.p_d1;
SELECT ok(lcb <= 1.0, format('privacy, bin %s: counts D %s, D'' %s (exact loss %s), loss estimate %s, lower bound %s <= eps = 1',
                             b, n_d, n_d1, round(ln(p_d / p_d1)::numeric, 3),
                             round(ln(nullif(n_d, 0)::float8 / nullif(n_d1, 0))::numeric, 3), round(lcb::numeric, 3)))
FROM (SELECT *, greatest(0,
                  ln(nullif(pg_temp.kl_bound(n_d, 1000, ln(1e8), false), 0) / pg_temp.kl_bound(n_d1, 1000, ln(1e8), true)),
                  ln(nullif(pg_temp.kl_bound(n_d1, 1000, ln(1e8), false), 0) / pg_temp.kl_bound(n_d, 1000, ln(1e8), true))
              ) AS lcb
      FROM counts) c
ORDER BY b;
SELECT ok(x2 < 38.2397, format('fit, %s: X^2 = %s < 38.2397 (chi-square df 4, 1e-7); counts/expected %s', tbl, round(x2::numeric, 2), detail))
FROM (SELECT 'D' AS tbl, sum((n_d - 1000 * p_d) ^ 2 / (1000 * p_d)) AS x2,
             string_agg(format('%s/%s', n_d, round((1000 * p_d)::numeric, 1)), ', ' ORDER BY b) AS detail FROM counts
      UNION ALL
      SELECT 'D''', sum((n_d1 - 1000 * p_d1) ^ 2 / (1000 * p_d1)),
             string_agg(format('%s/%s', n_d1, round((1000 * p_d1)::numeric, 1)), ', ' ORDER BY b) FROM counts) f
ORDER BY tbl;

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;
RESET uldp.test_seed;

\ir ../lib/cleanup.sql

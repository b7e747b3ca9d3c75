-- test/stat/intervals.sql -- the 95% intervals of user_dp_mean_ci, user_dp_sum_ci and
-- user_dp_count_ci: coverage, that their estimates follow the plain releases' law, their widths,
-- and the count's spread; real randomness (the seeded equality of estimate and plain release is in
-- sql/uldp_sum.sql; count.sql has the count's bias, its coverage at eps = 1 and its privacy loss).
--
-- (a) Coverage.  R = 5000 releases per configuration; a release "misses" when its interval does
-- not hold the non-private value.  Each interval holds the value of the clipped data with
-- probability at least 95% by construction (src/release.c: the box of two 97.5% discrete Laplace
-- quantiles, or one 95% quantile), so the number of misses is dominated by Binomial(R, 0.05); the
-- test requires at most 350 misses (coverage >= 93%): P(Binomial(5000, 0.05) >= 351) <=
-- exp(-5000 KL(351/5000 || 0.05)) = 4.6e-9 (Chernoff).  Configurations:
--   1. user_dp_mean_ci(x, u, 1, 0, 10), 300 users with values 0..10 (every fifth user two rows);
--   2. user_dp_mean_ci(x, u, 0.5, 0, 1), 300 users, 15 ones (a share of 5%: the count's noise
--      matters, the mean is near a bound);
--   3. user_dp_mean_ci(x, u, 1, 0, 10), 20 users (the count's noise is large, the count near 1);
--   4. user_dp_mean_ci(x, u, 1), no bounds, 2000 users in 5 clusters of 400 at 40, 45, ..., 60;
--   5. user_dp_sum_ci(x, u, 1, 0, 20), the users of 1 (totals 0..20);
--   6. user_dp_sum_ci(x, u, 1), no bounds, the users of 4;
--   7. user_dp_count_ci(u, 0.1), 100 users (k = 30; count.sql checks eps = 1).
-- Without bounds the interval is about the values clipped to the private interval [m - t, m + t]
-- (src/clipping.c), so configurations 4 and 6 use data that it does not clip, except with
-- probability below 1e-15 per release: the median m is a key outside [40, 60] with probability
-- at most 2^36 exp(-(eps/10) 1200) (2^36 keys, score 2000 there against 800 at the key 50, share
-- >= eps/10); the deviation s < 1 given m in [40, 60] at most 2^36 exp(-(eps/10) 600) (at least
-- 1600 of the distances exceed 1, the best key scores <= 1000); and given both, a half-width that
-- clips a cluster (at least 400 users beyond, score >= 400) against the first one that covers
-- them all (at most 9 steps of the ladder up from s >= 1 to 20, prior e^(-1.25 j)) at most
-- 9 e^(11.25) exp(-(eps/4) 400); the noisy count (eps/20) falls below the 240 users it needs with
-- probability below e^(-88).  Total < 1e-15, 5e-12 over 5000 releases, added to those cells.
-- (b) The estimate of each _ci twin has the law of the plain release (the same final function
-- computes both).  5000 plain releases against the 5000 estimates of configurations 1, 4, 5, 6,
-- and 6000 of user_dp_count(u, 1) against user_dp_count_ci(u, 1) (the releases of (d)).
-- Two-sample Kolmogorov-Smirnov: by the DKW inequality with Massart's constant, each empirical
-- CDF of R draws is within d = sqrt(ln(4 / 1e-8) / (2 R)) of the common CDF except with
-- probability 2 e^(-2 R d^2) = 5e-9, so D = sup |F1 - F2| <= 2 d (0.0890 at R = 5000, 0.0812
-- at 6000) except with probability 1e-8.  Power: plain releases at eps = 4 against the estimates of
-- configuration 1 (eps = 1), two Laplace laws of scales b and b / 4 (the count's part is
-- negligible there), whose CDFs differ by up to (e^(-x) - e^(-4x)) / 2 = 0.236 at x = ln(4) / 3;
-- the test must find D > 0.0890, which fails only if an empirical CDF is off by
-- (0.236 - 0.089) / 2 > 0.07: P <= 4 e^(-2 5000 0.07^2) = 2e-21.
-- (c) Widths.  With bounds, user_dp_sum_ci's interval is the estimate +- g k with k the 95%
-- quantile of |Z| (src/noise.c, uldp_discrete_laplace_tail), the same for every release: checked
-- exactly (to 1e-9) against that formula, and user_dp_count_ci's half-width against k = 30 at
-- eps = 0.1 (doc/functions.md).  The median widths of the others are printed.
-- (d) The count's spread.  6000 releases of user_dp_count_ci(u, 1) on 100 users: the root mean
-- square error about 100 is at most 1.5 / eps (so is the standard deviation).  The error is a
-- discrete Laplace Z, q = exp(-eps') (cut at 0 only beyond -100: probability < 1e-43), with
-- E Z^2 = 2q/(1-q)^2 = 1.842 < 2.25.  Chernoff with truncation at T = z_T^2:
--   P(mean Z^2 > 2.25) <= R P(|Z| > z_T) + exp(-R (2.25 lambda - ln E e^(lambda min(Z^2, T)))),
-- the expectation an exact finite sum; computed below for z_T in 20..60 and lambda in
-- 0.001..0.04, and asserted <= 1e-8.  Power: 2000 releases at eps = 1/2 (E Z^2 = 7.84) must fail
-- it; for nonnegative Y, e^(-x) <= 1 - x + x^2/2 gives P(mean Y <= a) <= exp(-R (E Y - a)^2 /
-- (2 E Y^2)), computed below (about 1e-86).
--
-- False failures of the whole file: 7 x (4.6e-9 + 5e-12) + 5 x 1e-8 + 2e-21 + 1e-8 + 1e-86
-- < 1.1e-7 <= 1e-6.  Releases are charged by a background worker that cannot see uncommitted rows:
-- the role, its budget and the data are committed first and removed at the end.  About 73,000
-- releases, up to 250 in one statement.
\set prefix uldp_stat_iv_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_iv_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_iv_analyst', 1e9, 1) IS NULL AS budget_set \gset
CREATE TABLE public.uldp_stat_iv_b300 AS
    SELECT u, (u % 11)::float8 AS x FROM generate_series(1, 300) u, generate_series(1, 2) r
    WHERE r = 1 OR u % 5 = 0;
CREATE TABLE public.uldp_stat_iv_s300 AS SELECT u, (u <= 15)::int::float8 AS x FROM generate_series(1, 300) u;
CREATE TABLE public.uldp_stat_iv_b20 AS SELECT u, (u % 11)::float8 AS x FROM generate_series(1, 20) u;
CREATE TABLE public.uldp_stat_iv_c2000 AS SELECT u, (40 + 5 * (u % 5))::float8 AS x FROM generate_series(1, 2000) u;
CREATE TABLE public.uldp_stat_iv_n100 AS SELECT u, 0::float8 AS x FROM generate_series(1, 100) u;
GRANT SELECT ON public.uldp_stat_iv_b300, public.uldp_stat_iv_s300, public.uldp_stat_iv_b20,
    public.uldp_stat_iv_c2000, public.uldp_stat_iv_n100 TO uldp_stat_iv_analyst;

\ir ../lib/chernoff.sql

-- the configurations: kind 'ci' (coverage), 'plain' (law of the estimate), 'count' (spread)
CREATE TEMP TABLE configs (id int, kind text, call text, tbl text, reps int, per_statement int,
                           target float8, versus int, note text);
INSERT INTO configs VALUES
    (1, 'ci', 'user_dp_mean_ci(x, u + %1$s - %1$s, 1.0, 0, 10)', 'b300', 5000, 250, NULL, NULL, 'mean [0, 10], 300 users'),
    (2, 'ci', 'user_dp_mean_ci(x, u + %1$s - %1$s, 0.5, 0, 1)', 's300', 5000, 250, NULL, NULL, 'mean [0, 1] at eps 0.5, share 5% of 300 users'),
    (3, 'ci', 'user_dp_mean_ci(x, u + %1$s - %1$s, 1.0, 0, 10)', 'b20', 5000, 250, NULL, NULL, 'mean [0, 10], 20 users'),
    (4, 'ci', 'user_dp_mean_ci(x, u + %1$s - %1$s, 1.0)', 'c2000', 5000, 100, NULL, NULL, 'mean without bounds, 2000 users'),
    (5, 'ci', 'user_dp_sum_ci(x, u + %1$s - %1$s, 1.0, 0, 20)', 'b300', 5000, 250, NULL, NULL, 'sum [0, 20], 300 users'),
    (6, 'ci', 'user_dp_sum_ci(x, u + %1$s - %1$s, 1.0)', 'c2000', 5000, 100, NULL, NULL, 'sum without bounds, 2000 users'),
    (7, 'ci', 'uldp.count_estimate_as_estimate(user_dp_count_ci(u + %1$s - %1$s, 0.1))', 'n100', 5000, 250, NULL, NULL, 'count at eps 0.1, 100 users'),
    (8, 'count', 'uldp.count_estimate_as_estimate(user_dp_count_ci(u + %1$s - %1$s, 1.0))', 'n100', 6000, 250, NULL, NULL, 'count at eps 1'),
    (9, 'count', 'uldp.count_estimate_as_estimate(user_dp_count_ci(u + %1$s - %1$s, 0.5))', 'n100', 2000, 250, NULL, NULL, 'count at eps 0.5'),
    (11, 'plain', 'user_dp_mean(x, u + %1$s - %1$s, 1.0, 0, 10)', 'b300', 5000, 250, NULL, 1, 'user_dp_mean(x, u, 1, 0, 10)'),
    (14, 'plain', 'user_dp_mean(x, u + %1$s - %1$s, 1.0)', 'c2000', 5000, 100, NULL, 4, 'user_dp_mean(x, u, 1)'),
    (15, 'plain', 'user_dp_sum(x, u + %1$s - %1$s, 1.0, 0, 20)', 'b300', 5000, 250, NULL, 5, 'user_dp_sum(x, u, 1, 0, 20)'),
    (16, 'plain', 'user_dp_sum(x, u + %1$s - %1$s, 1.0)', 'c2000', 5000, 100, NULL, 6, 'user_dp_sum(x, u, 1)'),
    (18, 'plain', 'user_dp_count(u + %1$s - %1$s, 1.0)', 'n100', 6000, 250, NULL, 8, 'user_dp_count(u, 1)'),
    (21, 'power', 'user_dp_mean(x, u + %1$s - %1$s, 4.0, 0, 10)', 'b300', 5000, 250, NULL, 1, 'user_dp_mean(x, u, 4, 0, 10)');
-- the non-private values: the mean of the user averages, the sum of the user totals, the users
UPDATE configs c SET target = t.v FROM (
    SELECT 'b300' AS tbl, 'mean' AS fn, avg(m) AS v FROM (SELECT avg(x) m FROM uldp_stat_iv_b300 GROUP BY u) s
    UNION ALL SELECT 'b300', 'sum', sum(t) FROM (SELECT sum(x) t FROM uldp_stat_iv_b300 GROUP BY u) s
    UNION ALL SELECT 's300', 'mean', avg(x) FROM uldp_stat_iv_s300
    UNION ALL SELECT 'b20', 'mean', avg(x) FROM uldp_stat_iv_b20
    UNION ALL SELECT 'c2000', 'mean', avg(x) FROM uldp_stat_iv_c2000
    UNION ALL SELECT 'c2000', 'sum', sum(x) FROM uldp_stat_iv_c2000
    UNION ALL SELECT 'n100', 'count', count(DISTINCT u) FROM uldp_stat_iv_n100) t
    WHERE t.tbl = c.tbl AND t.fn = CASE WHEN c.call LIKE '%count%' THEN 'count' WHEN c.call LIKE '%sum%' THEN 'sum' ELSE 'mean' END;
GRANT SELECT ON configs TO uldp_stat_iv_analyst;

-- user_dp_count_ci's bigint triple as a uldp.estimate, so that one table holds every release
CREATE FUNCTION pg_temp.as_estimate(e uldp.count_estimate) RETURNS uldp.estimate LANGUAGE sql IMMUTABLE AS $$
    SELECT ROW((e).estimate, (e).ci_lower, (e).ci_upper)::uldp.estimate
$$;
UPDATE configs SET call = replace(call, 'uldp.count_estimate_as_estimate', 'pg_temp.as_estimate');

-- (d): the Chernoff bound on the count's mean square error at eps = 1 (q as the sampler uses it),
-- and the power bound at eps = 1/2; the exact law of Z
CREATE FUNCTION pg_temp.ilogb(x float8) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE e int := floor(ln(x) / ln(2));
BEGIN
    WHILE 2::float8 ^ e > x LOOP e := e - 1; END LOOP;
    WHILE 2::float8 ^ (e + 1) <= x LOOP e := e + 1; END LOOP;
    RETURN e;
END $$;
CREATE FUNCTION pg_temp.q(eps float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT exp(-floor(e * 2::float8 ^ (23 - pg_temp.ilogb(e))) * 2::float8 ^ (pg_temp.ilogb(e) - 23))
    FROM (SELECT eps * (1 - 2::float8 ^ -40) AS e) s
$$;
CREATE TEMP TABLE count_bound AS
    SELECT min(least(1, 6000 * 2 * q ^ (zt + 1) / (1 + q)
                        + CASE WHEN 2.25 * lam > ln(phi) THEN exp(-6000 * (2.25 * lam - ln(phi))) ELSE 1 END)) AS bound
    FROM (SELECT zt, lam, q,
                 (1 - q) / (1 + q) * (1 + 2 * (SELECT sum(q ^ z * exp(lam * z * z)) FROM generate_series(1, zt) z))
                 + 2 * q ^ (zt + 1) / (1 + q) * exp(lam * zt * zt) AS phi
          FROM generate_series(20, 60) zt, generate_series(1, 40) l, LATERAL (SELECT l / 1000.0::float8 AS lam) p,
               LATERAL (SELECT pg_temp.q(1) AS q) qq
          WHERE lam * zt * zt <= 600) s;
CREATE TEMP TABLE count_power AS
    SELECT exp(-2000 * (m2 - 2.25) ^ 2 / (2 * m4)) AS bound, m2
    FROM (SELECT sum(p * z ^ 2) AS m2, sum(p * z ^ 4) AS m4
          FROM (SELECT z, (1 - pg_temp.q(0.5)) / (1 + pg_temp.q(0.5)) * pg_temp.q(0.5) ^ abs(z) AS p
                FROM generate_series(-400, 400) z) d) s;
GRANT SELECT ON count_bound, count_power TO uldp_stat_iv_analyst;

SET SESSION AUTHORIZATION uldp_stat_iv_analyst;
SET max_parallel_workers_per_gather = 0;
SELECT plan(20);

-- the releases: reps per configuration, per_statement in each statement; "WHERE g = g" makes the
-- subquery correlated, so it releases (and is charged) once per g; the user argument "u + j - j"
-- makes the aggregates distinct (identical ones would be computed once)
CREATE TEMP TABLE ci (id int, e uldp.estimate);
CREATE TEMP TABLE plain (id int, value float8);
SELECT format('INSERT INTO %s SELECT %s, unnest((SELECT ARRAY[%s] FROM uldp_stat_iv_%s WHERE g = g)) FROM generate_series(1, %s) g',
              CASE WHEN kind IN ('ci', 'count') THEN 'ci' ELSE 'plain' END, id,
              string_agg(format(call, j), ', '), tbl, reps / per_statement)
FROM configs CROSS JOIN LATERAL generate_series(1, per_statement) j
GROUP BY id, kind, call, tbl, reps, per_statement ORDER BY id \gexec
SELECT is((SELECT count(*) FROM ci WHERE (e).estimate IS NOT NULL AND (e).ci_lower <= (e).ci_upper)
          + (SELECT count(*) FROM plain WHERE value IS NOT NULL), (SELECT sum(reps) FROM configs),
          format('%s releases, each a number (and an interval)', (SELECT sum(reps) FROM configs)));

-- (a) coverage
SELECT ok(m.misses <= 350,
          format('coverage, %s: %s of 5000 intervals hold %s (%s%%, at least 93%%); median width %s, estimate +%s/-%s',
                 c.note, 5000 - m.misses, c.target::real, round(100 - m.misses / 50.0, 2), m.width::real,
                 m.up::real, m.down::real))
FROM configs c JOIN (
    SELECT id, count(*) FILTER (WHERE NOT ((e).ci_lower <= c.target AND c.target <= (e).ci_upper)) AS misses,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY (e).ci_upper - (e).ci_lower) AS width,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY (e).ci_upper - (e).estimate) AS up,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY (e).estimate - (e).ci_lower) AS down
    FROM ci JOIN configs c USING (id) GROUP BY id) m USING (id)
WHERE c.kind = 'ci' ORDER BY c.id;
SELECT ok(exp(-5000 * pg_temp.kl(351 / 5000.0, 0.05)) < 4.7e-9,
          format('the Chernoff bound of 351 misses or more of 5000 at 5%%: %s', exp(-5000 * pg_temp.kl(351 / 5000.0, 0.05))::real));

-- (b) the law of the estimates: two-sample Kolmogorov-Smirnov
CREATE TEMP TABLE ks AS
    SELECT p.id AS plain_id, p.versus, p.kind, p.note,
           (SELECT max(abs(f1 - f2)) FROM (
                SELECT count(*) FILTER (WHERE side = 1) OVER w / p.reps::float8 AS f1,
                       count(*) FILTER (WHERE side = 2) OVER w / v.reps::float8 AS f2
                FROM (SELECT 1 AS side, value FROM plain WHERE id = p.id
                      UNION ALL SELECT 2, (e).estimate FROM ci WHERE id = p.versus) s
                WINDOW w AS (ORDER BY value RANGE UNBOUNDED PRECEDING)) f) AS d,
           2 * sqrt(ln(4 / 1e-8) / (2 * least(p.reps, v.reps))) AS threshold
    FROM configs p JOIN configs v ON v.id = p.versus
    WHERE p.kind IN ('plain', 'power');
SELECT ok(k.d <= k.threshold, format('the estimates of %s follow the law of %s: KS distance %s <= %s',
                                     v.note, k.note, k.d::real, k.threshold::real))
FROM ks k JOIN configs v ON v.id = k.versus WHERE k.kind = 'plain' ORDER BY k.plain_id;
SELECT ok(d > threshold, format('power: %s against the estimates at eps 1: KS distance %s > %s',
                                note, d::real, threshold::real))
FROM ks WHERE kind = 'power';

-- (c) widths
SELECT ok(max(abs(((e).ci_upper - (e).estimate) / w.half - 1)) < 1e-9 AND max(abs(((e).estimate - (e).ci_lower) / w.half - 1)) < 1e-9,
          format('user_dp_sum_ci(x, u, 1, 0, 20): every interval is the estimate +- %s (95%% quantile of the noise)', w.half))
FROM ci, (SELECT g * (greatest(ceil(ln(2 / (0.05 * (1 + exp(-rate)))) / rate * (1 + 1e-12)) - 1, 0)) AS half
          FROM (SELECT g, eps * (1 - 2::float8 ^ -22) / ceil(20 / g) AS rate
                FROM (SELECT 2::float8 ^ (pg_temp.ilogb(20) - 40) AS g, 1 * (1 - 2::float8 ^ -40) AS eps) s) t) w
WHERE id = 5 GROUP BY w.half;
SELECT ok(count(*) FILTER (WHERE NOT ok) = 0,
          format('user_dp_count_ci(u, 0.1): every interval is [estimate - 30, estimate + 30] cut at 0 (%s not; %s)',
                 count(*) FILTER (WHERE NOT ok), string_agg(e::text, ' ') FILTER (WHERE NOT ok)))
FROM (SELECT e, CASE WHEN (e).estimate > 0 THEN (e).ci_upper = (e).estimate + 30 AND (e).ci_lower = greatest((e).estimate - 30, 0)
                     ELSE (e).ci_lower = 0 AND (e).ci_upper <= 30 END AS ok
      FROM ci WHERE id = 7) s;

-- (d) the count's spread
SELECT ok((SELECT bound FROM count_bound) <= 1e-8,
          format('the Chernoff bound of the count''s spread test at eps 1, 6000 releases: %s <= 1e-8',
                 (SELECT bound FROM count_bound)::real));
SELECT ok(sqrt(avg(((e).estimate - 100) ^ 2)) <= 1.5,
          format('user_dp_count_ci(u, 1): root mean square error %s <= 1.5 / eps (sd %s, mean %s; the law: sqrt(2q)/(1-q) = %s)',
                 sqrt(avg(((e).estimate - 100) ^ 2))::real, stddev((e).estimate)::real, avg((e).estimate)::real,
                 (sqrt(2 * pg_temp.q(1)) / (1 - pg_temp.q(1)))::real))
FROM ci WHERE id = 8;
SELECT ok(sqrt(avg(((e).estimate - 100) ^ 2)) > 1.5,
          format('power: at eps 0.5 the root mean square error %s > 1.5 (E Z^2 = %s; P(not) <= %s)',
                 sqrt(avg(((e).estimate - 100) ^ 2))::real, (SELECT m2 FROM count_power)::real,
                 (SELECT bound FROM count_power)))
FROM ci WHERE id = 9;

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;

\ir ../lib/cleanup.sql

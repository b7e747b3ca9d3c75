-- test/stat/neighbours_sum.sql -- the privacy loss of user_dp_sum (with and without bounds) and of
-- user_dp_mean_ci between neighbouring tables, measured through SQL with real randomness (the
-- approach of neighbours.sql: events of the output, Chernoff (KL) confidence bounds on their
-- frequencies, test/lib/chernoff.sql).
--
-- For a count k of K releases, the bounds upper = max {p >= k/K : K KL(k/K || p) <= ln(1/alpha)}
-- and lower likewise satisfy P(p > upper) <= alpha and P(p < lower) <= alpha; alpha = 1e-9 here.
-- eps-DP requires p_D(E) <= e^eps p_D'(E) and the other way round for every event E; a test fails
-- on E only if lower_D > e^eps upper_D' (or the other way round), which for an eps-DP release
-- needs one of its 4 bounds to fail: P(false failure) <= 4e-9 per event and table pair.
-- K = 10000 releases of every table at eps = 1, 2000 at eps = 4 (the power checks).
--
-- (A) user_dp_sum(x, u, eps, 0, 10).  D: 20 users, values 0..10 (one row each), true sum S = 100;
-- D' = D plus a user at 10, the largest move a user can make (the sensitivity s0 = 10).  The
-- release is S + Z, Z discrete Laplace of scale s0 / eps on a grid of 2^-36: for t <= S,
-- P_D(out <= t) / P_D'(out <= t) = e^eps (both laws are exponential left of S), and for t >= S + 10,
-- P_D'(out > t) / P_D(out > t) = e^eps: the events below carry the largest loss there is.
-- Events: out <= S - 10, S - 5, S, S + 5 and out > S + 10, S + 15, S + 20 (7).
-- Power: releases at eps = 4 judged as eps = 1 must violate it on out <= S (p_D = 0.5, p_D' =
-- e^-4 / 2 = 0.0092, loss 4): P(not) <= 3.3e-53 (exact binomial sums); and they stay within their
-- own epsilon 4 on all 7 events.
-- (B) user_dp_sum(x, u, 1) without bounds.  D: 250 users, values 40..60 (one row each), S its sum;
-- D+ = D plus a user at 1e6 (clipped to the private interval, and beyond every half-width of the
-- ladder but the widest), D- = D minus user 1.  Near 240 users the release often says "too few"
-- (0 exactly, when the noisy count at eps/20 is below 240): that is one bin; the others split the
-- nonzero releases at S -+ 200 and S -+ 600 (the noise of the sum has a scale of about 300).
-- 6 bins, the pairs (D, D+) and (D, D-).
-- (C) user_dp_mean_ci(x, u, eps, 0, 10): the estimate and the interval together.  D: 20 users,
-- values 4, 5, 6 (mean 5.05); D' = D plus a user at 10 (it moves the sum by the half-width 5, the
-- sensitivity, and the count by 1).  Bins: the estimate in (-inf, 4.55], (4.55, 5.05], (5.05, 5.55],
-- (5.55, inf), times the interval's width at most or above w0 = 2 k_s / (20 - k_c) (k_s, k_c the
-- 97.5% quantiles of the sum's and the count's noise at eps = 1, in value units and users: the
-- typical width), 8 bins.  Power: releases at eps = 4 judged as eps = 1: on the bin (4.55, 5.05]
-- (every width is below w0 at eps = 4) p_D = 0.499 and p_D' = 0.026 (the exact law, as in
-- never_worse.sql), loss 2.96, and the test must find lower_D > e upper_D': P(not) <= 1e-21
-- (binomial sums at 0.49 and 0.03); and at eps = 4 every bin stays within 4.
--
-- False failures of the whole file: 4e-9 x (7 + 7 + 2 x 6 + 8 + 8) + 3.3e-53 + 1e-21 < 1.7e-7
-- <= 1e-6.  Releases are charged by a background worker that cannot see uncommitted rows: the role,
-- its budget and the data are committed first and removed at the end.  78,000 releases.
\set prefix uldp_stat_nbs_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_nbs_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_nbs_analyst', 1e9, 1) IS NULL AS budget_set \gset
-- part, table, user, value; every user one row
CREATE TABLE public.uldp_stat_nbs_data (part text, tbl text, u int, x float8);
INSERT INTO public.uldp_stat_nbs_data
    SELECT 'A', t, u, u % 11 FROM generate_series(1, 20) u, unnest(ARRAY['D', 'D''']) t;
INSERT INTO public.uldp_stat_nbs_data VALUES ('A', 'D''', 21, 10);
INSERT INTO public.uldp_stat_nbs_data
    SELECT 'B', t, u, 40 + u % 21 FROM generate_series(1, 250) u, unnest(ARRAY['D', 'D+', 'D-']) t
    WHERE NOT (t = 'D-' AND u = 1);
INSERT INTO public.uldp_stat_nbs_data VALUES ('B', 'D+', 251, 1e6);
INSERT INTO public.uldp_stat_nbs_data
    SELECT 'C', t, u, 4 + u % 3 FROM generate_series(1, 20) u, unnest(ARRAY['D', 'D''']) t;
INSERT INTO public.uldp_stat_nbs_data VALUES ('C', 'D''', 21, 10);
CREATE INDEX ON public.uldp_stat_nbs_data (part, tbl);
GRANT SELECT ON public.uldp_stat_nbs_data TO uldp_stat_nbs_analyst;

\ir ../lib/chernoff.sql

-- the true sums of D in A and B
SELECT sum(x) AS s_a FROM public.uldp_stat_nbs_data WHERE part = 'A' AND tbl = 'D' \gset
SELECT sum(x) AS s_b FROM public.uldp_stat_nbs_data WHERE part = 'B' AND tbl = 'D' \gset

-- w0 of (C): k_s and k_c as src/noise.c computes them (uldp_discrete_laplace_tail at alpha 0.025),
-- the sum's in steps of the grid of the half-width 5
CREATE FUNCTION pg_temp.tail(steps float8, eps float8, alpha float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT greatest(ceil(ln(2 / (alpha * (1 + exp(-r)))) / r * (1 + 1e-12)) - 1, 0)
    FROM (SELECT eps * (1 - 2::float8 ^ -22) / steps AS r) s
$$;
SELECT 2 * g * pg_temp.tail(ceil(5 / g), e * 3 / 4, 0.025) / (20 - pg_temp.tail(1, e / 4, 0.025)) AS w0
FROM (SELECT 2::float8 ^ (2 - 40) AS g, 1 - 2::float8 ^ -40 AS e) s \gset

-- the events: out in (est_lo, est_hi], width in (width_lo, width_hi], zero: out = 0 (or not)
CREATE TEMP TABLE events (part text, name text, est_lo float8, est_hi float8,
                          width_lo float8 DEFAULT '-Infinity', width_hi float8 DEFAULT 'Infinity', zero boolean);
INSERT INTO events (part, name, est_lo, est_hi)
    SELECT 'A', format('out <= S %s %s', CASE WHEN t < 0 THEN '-' ELSE '+' END, abs(t)), '-Infinity'::float8, :s_a + t
    FROM unnest(ARRAY[-10, -5, 0, 5]) t
    UNION ALL
    SELECT 'A', format('out > S + %s', t), :s_a + t, 'Infinity'::float8 FROM unnest(ARRAY[10, 15, 20]) t;
INSERT INTO events (part, name, est_lo, est_hi, zero) VALUES
    ('B', 'too few users (0)', '-Infinity', 'Infinity', true),
    ('B', 'out <= S - 600', '-Infinity', :s_b - 600, false),
    ('B', 'S - 600 < out <= S - 200', :s_b - 600, :s_b - 200, false),
    ('B', 'S - 200 < out <= S + 200', :s_b - 200, :s_b + 200, false),
    ('B', 'S + 200 < out <= S + 600', :s_b + 200, :s_b + 600, false),
    ('B', 'out > S + 600', :s_b + 600, 'Infinity', false);
INSERT INTO events (part, name, est_lo, est_hi, width_lo, width_hi)
    SELECT 'C', format('estimate in (%s, %s], width %s', lo, hi, CASE WHEN w_lo < 0 THEN '<= w0' ELSE '> w0' END),
           lo, hi, w_lo, w_hi
    FROM (VALUES ('-Infinity'::float8, 4.55::float8), (4.55, 5.05), (5.05, 5.55), (5.55, 'Infinity')) e(lo, hi),
         (VALUES ('-Infinity'::float8, :w0::float8), (:w0, 'Infinity')) w(w_lo, w_hi);
GRANT SELECT ON events TO uldp_stat_nbs_analyst;

SET SESSION AUTHORIZATION uldp_stat_nbs_analyst;
SET max_parallel_workers_per_gather = 0;
SELECT plan(45);

-- K releases of each table, 100 per statement; "WHERE g = g" makes the subquery
-- correlated, so it releases (and is charged) once per g; "u + j - j" makes the aggregates distinct
CREATE TEMP TABLE releases (part text, eps float8, tbl text, out float8, width float8);
CREATE TEMP TABLE runs (part text, eps float8, tbl text, call text, k int GENERATED ALWAYS AS (CASE WHEN eps = 1 THEN 10000 ELSE 2000 END) STORED);
INSERT INTO runs (part, eps, tbl, call) VALUES
    ('A', 1, 'D', 'user_dp_sum(x, u + %1$s - %1$s, 1.0, 0, 10)'), ('A', 1, 'D''', 'user_dp_sum(x, u + %1$s - %1$s, 1.0, 0, 10)'),
    ('A', 4, 'D', 'user_dp_sum(x, u + %1$s - %1$s, 4.0, 0, 10)'), ('A', 4, 'D''', 'user_dp_sum(x, u + %1$s - %1$s, 4.0, 0, 10)'),
    ('B', 1, 'D', 'user_dp_sum(x, u + %1$s - %1$s, 1.0)'), ('B', 1, 'D+', 'user_dp_sum(x, u + %1$s - %1$s, 1.0)'),
    ('B', 1, 'D-', 'user_dp_sum(x, u + %1$s - %1$s, 1.0)'),
    ('C', 1, 'D', 'user_dp_mean_ci(x, u + %1$s - %1$s, 1.0, 0, 10)'), ('C', 1, 'D''', 'user_dp_mean_ci(x, u + %1$s - %1$s, 1.0, 0, 10)'),
    ('C', 4, 'D', 'user_dp_mean_ci(x, u + %1$s - %1$s, 4.0, 0, 10)'), ('C', 4, 'D''', 'user_dp_mean_ci(x, u + %1$s - %1$s, 4.0, 0, 10)');
SELECT format('INSERT INTO releases SELECT %L, %s, %L, %s FROM (SELECT unnest((SELECT ARRAY[%s] FROM uldp_stat_nbs_data '
              'WHERE part = %L AND tbl = %L AND g = g)) AS r FROM generate_series(1, %s) g) s',
              part, eps, tbl, CASE part WHEN 'C' THEN '(r).estimate, (r).ci_upper - (r).ci_lower' ELSE 'r, NULL' END,
              string_agg(format(call, j), ', '), part, tbl, k / 100)
FROM runs CROSS JOIN LATERAL generate_series(1, 100) j GROUP BY part, eps, tbl, call, k \gexec
SELECT is((SELECT count(*) FROM releases WHERE out IS NOT NULL), 78000::bigint, '78000 releases, each a number');

-- the frequencies of each event in each table, and the lower confidence bound of the loss
-- between D and each neighbour
CREATE TEMP TABLE loss AS
    SELECT e.part, e.name, n.eps, n.tbl AS neighbour, n.k, c.n_d, c.n_n,
           greatest(0,
               ln(nullif(pg_temp.kl_bound(c.n_d, n.k, ln(1e9), false), 0) / pg_temp.kl_bound(c.n_n, n.k, ln(1e9), true)),
               ln(nullif(pg_temp.kl_bound(c.n_n, n.k, ln(1e9), false), 0) / pg_temp.kl_bound(c.n_d, n.k, ln(1e9), true))
           ) AS lcb
    FROM events e
    JOIN (SELECT part, eps, tbl, k FROM runs WHERE tbl <> 'D') n ON n.part = e.part,
    LATERAL (SELECT count(*) FILTER (WHERE r.tbl = 'D') AS n_d, count(*) FILTER (WHERE r.tbl = n.tbl) AS n_n
             FROM releases r
             WHERE r.part = e.part AND r.eps = n.eps AND r.out > e.est_lo AND r.out <= e.est_hi
               AND (e.zero IS NULL OR (r.out = 0) = e.zero)
               AND (r.width IS NULL OR (r.width > e.width_lo AND r.width <= e.width_hi))) c;

SELECT ok(lcb <= eps,
          format('%s, %s-DP, D against %s, %s: counts %s and %s of %s, loss lower bound %s',
                 CASE part WHEN 'A' THEN 'user_dp_sum(x, u, eps, 0, 10)' WHEN 'B' THEN 'user_dp_sum(x, u, 1)'
                           ELSE 'user_dp_mean_ci(x, u, eps, 0, 10)' END,
                 eps, neighbour, name, n_d, n_n, k, round(lcb::numeric, 3)))
FROM loss ORDER BY part, eps, neighbour, name;
SELECT ok(max(lcb) > 1, format('power, %s: releases at eps 4 violate eps = 1 detectably (largest lower bound %s > 1)',
                               CASE part WHEN 'A' THEN 'user_dp_sum' ELSE 'user_dp_mean_ci' END, round(max(lcb)::numeric, 3)))
FROM loss WHERE eps = 4 GROUP BY part ORDER BY part;

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;

\ir ../lib/cleanup.sql

-- test/stat/exponential_mechanism.sql -- user_dp_range with tau follows the exact law of the
-- exponential mechanism.
--
-- With tau, PrivateRange selects bin b of width 2 tau (b = 0 .. L-1 from the lower bound,
-- L = ceil((upper - lower) / (2 tau))) with probability proportional to exp(-eps score(b)),
-- score(b) = max(#users whose average lies in a bin < b, # in a bin > b), and returns
-- [centre - 2 tau, centre + 2 tau] clipped to the bounds, centre = lower + (b + 0.5) 2 tau.
-- Every bin gives a different interval (clipping only moves bins 0 and L-1, and differently),
-- so the output identifies the bin.
--
-- Data: 8 users (several rows each, with clamped, NULL and NaN rows and a NULL user id) whose
-- averages lie in bins 6, 7, 7, 8, 8, 8, 9, 10 of [0, 16) with tau = 0.5 (L = 16), eps = 1.
-- K = 2000 releases.  The law is computed here from the data and its scores are asserted to be
-- [8,8,8,8,8,8,7,5,3,6,7,8,8,8,8,8]; bins 6..10 have expected counts 28..1543 and are kept,
-- the 11 others (expected 10.4 each) are pooled into one category (expected 114), so df = 5.
--  * fit: Pearson's X^2 < 40.8631, the chi-square(5) quantile at 1 - 1e-7 (thresholds.py);
--    P(false failure) = 1e-7 in the chi-square limit (every expected count >= 20, asserted).
--  * power: the same counts tested against the law with exp(-eps score / 2) (the normalisation
--    of the non-monotone mechanism) give X^2 > 40.8631; noncentrality 1529, P(not rejected)
--    <= 1.2e-214 (exact binomial bound, thresholds.py).
-- False failures of the whole file: 1e-7 + 1.2e-214 <= 1e-6.
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.
\set prefix uldp_stat_em_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_em_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_em_analyst', 1e9, 1) IS NULL AS budget_set \gset
CREATE TABLE public.uldp_stat_em_data (u int, v float8);
INSERT INTO public.uldp_stat_em_data VALUES
    (1, 6.5),                       -- bin 6
    (2, 7.25), (2, 7.75),           -- average 7.5: bin 7
    (3, 7.1), (3, 7.9), (3, NULL),  -- NULL rows are skipped: bin 7
    (4, 8.5),                       -- bin 8
    (5, 8.0), (5, 9.0),             -- rows in bins 8 and 9, average 8.5: bin 8
    (6, 20), (6, 1),                -- 20 is clamped to 16 before averaging: 8.5, bin 8
    (7, 9.5), (7, 'NaN'),           -- NaN rows are skipped: bin 9
    (8, 10.5),                      -- bin 10
    (NULL, 3.0);                    -- no user: skipped
GRANT SELECT ON public.uldp_stat_em_data TO uldp_stat_em_analyst;

SET SESSION AUTHORIZATION uldp_stat_em_analyst;
SELECT plan(7);

-- the exact law, from the data: users' averages of their clamped non-NULL non-NaN rows
CREATE TEMP TABLE em AS
WITH users AS (
    SELECT u, least(greatest(floor(avg(least(greatest(v, 0), 16))), 0), 15)::int AS bin
    FROM uldp_stat_em_data WHERE u IS NOT NULL AND v IS NOT NULL AND v <> 'NaN' GROUP BY u
), scores AS (
    SELECT b, greatest((SELECT count(*) FROM users WHERE bin < b), (SELECT count(*) FROM users WHERE bin > b)) AS score
    FROM generate_series(0, 15) b
)
SELECT b, score,
       -- centre = lower + (b + 0.5) * 2 tau; the interval centre -+ 2 tau, clipped to [0, 16]
       greatest(0::float8 + (b + 0.5::float8) * 1.0::float8 - 1.0::float8, 0::float8) AS lower,
       least(0::float8 + (b + 0.5::float8) * 1.0::float8 + 1.0::float8, 16::float8) AS upper,
       exp(-1.0 * score) / sum(exp(-1.0 * score)) OVER () AS p,
       exp(-0.5 * score) / sum(exp(-0.5 * score)) OVER () AS p_half
FROM scores;
SELECT is((SELECT array_agg(score ORDER BY b) FROM em)::int[], ARRAY[8,8,8,8,8,8,7,5,3,6,7,8,8,8,8,8],
    'the data give the designed scores (so the categories and df below hold)');

-- K = 2000 releases; the correlated "WHERE g = g" makes the subquery run once per g
CREATE TEMP TABLE releases AS
    SELECT g, (SELECT user_dp_range(v, u, 1.0, 0, 16, 0.5) FROM uldp_stat_em_data WHERE g = g) AS r
    FROM generate_series(1, 2000) g;
CREATE TEMP TABLE outcome AS
    SELECT r.g, e.b FROM releases r LEFT JOIN em e ON (r.r).lower = e.lower AND (r.r).upper = e.upper;
SELECT is((SELECT count(*) FROM outcome WHERE b IS NOT NULL), 2000::bigint,
    'every release is one of the 16 intervals [centre - 2 tau, centre + 2 tau] clipped to [0, 16]');
SELECT is((SELECT count(*) FROM uldp.ledger WHERE function = 'user_dp_range'), 2000::bigint,
    'and each was charged');

-- categories: bins with expected count >= 20, the rest pooled into category -1
CREATE TEMP TABLE categories AS
    SELECT e.cat, sum(e.p) AS p, sum(e.p_half) AS p_half, sum(coalesce(c.n, 0)) AS n
    FROM (SELECT *, CASE WHEN 2000 * p >= 20 THEN b ELSE -1 END AS cat FROM em) e
    LEFT JOIN (SELECT b, count(*) AS n FROM outcome GROUP BY b) c USING (b)
    GROUP BY e.cat;
SELECT is((SELECT array_agg(cat ORDER BY cat) FROM categories), ARRAY[-1, 6, 7, 8, 9, 10],
    'categories: bins 6..10 and the pooled rest (df 5)');
SELECT ok((SELECT min(2000 * p) FROM categories) >= 20, 'every expected count is >= 20');
SELECT ok(x2 < 40.8631, format('fit: X^2 = %s < 40.8631 (chi-square df 5, 1e-7); counts %s', round(x2::numeric, 2), counts))
FROM (SELECT sum((n - 2000 * p) ^ 2 / (2000 * p)) AS x2,
             string_agg(format('%s: %s/%s', cat, n, round((2000 * p)::numeric, 1)), ', ' ORDER BY cat) AS counts
      FROM categories) s;
SELECT ok(x2 > 40.8631, format('power: against exp(-eps score / 2), X^2 = %s > 40.8631', round(x2::numeric, 1)))
FROM (SELECT sum((n - 2000 * p_half) ^ 2 / (2000 * p_half)) AS x2 FROM categories) s;

SELECT * FROM finish();

\ir ../lib/cleanup.sql

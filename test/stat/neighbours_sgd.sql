-- test/stat/neighbours_sgd.sql -- the privacy loss of user_dp_sgd between neighbouring tables, for
-- each method in the list below and both losses, measured through SQL with real randomness (the
-- approach of neighbours.sql: events of the output, Chernoff (KL) confidence bounds on their
-- frequencies, test/lib/chernoff.sql).  Every constant is printed by test/stat/thresholds.py
-- (neighbours_sgd()).  Adding a method is one line of the list; with K = 4000 it adds 16,800
-- releases (about 10 s on 200 users) and 6.4e-9 to the false-failure probability.
--
-- Tables.  D: 200 users (4000 for outlier_removal, see the list of methods), user u with the two
-- rows (x_u, -1) and (x_u, +1), x_u = (u % 21 - 10) / 10 in [-1, 1].  At theta = 0 every user's average gradient is exactly zero under both losses
-- (residuals +1 and -1, squared; +1/2 and -1/2, logistic), and theta = 0 is D's optimum.  D' = D
-- plus user 0 with three rows (1e6, 1e6), clipped to the feature radius 1 and the label bound 1
-- (logistic: label 1): the largest pull one user can have, where D's users pull nowhere.  Its
-- gradient at 0, -(1, 1) (squared) or -(1, 1) / 2 (logistic), is 141 and 71 times the gradient
-- clip 0.01, so it moves the release by the whole sensitivity (and a method that forgot to clip it
-- would move it by 71 to 141 times that).
-- Releases.  user_dp_sgd(x, y, u, 1, 1e-6, options): feature_radius 1 and label_bound 1 (public:
-- no private scale, all of rho' to the fit), gradient_clip 0.01, iterations 1 (the fit's whole
-- budget in one step: no averaging or contraction blurs the loss, and it is cheap), the method and
-- the loss; a method's line below may add or override options.
-- Outcome.  Each release falls in one of 8 buckets: "no weights" (the noisy count below the
-- threshold), "test failed" (the method's concentration test failed), or the bucket of
-- s = uldp.predict(model, ARRAY[1e6]), the model's prediction at the added user's features (where
-- it pulls), among 6 cut at the 5%, 20%, 50%, 80% and 95% quantiles (percentile_disc) of a pilot:
-- 400 releases of D with the same method and loss, made before and independently of the audited
-- ones, so that the buckets are fixed events for them; the edges follow each method's own scale,
-- so a new method needs no tuning.
-- Test.  K = 4000 releases of D and of D' (1000 for outlier_removal).  For a count k of K, the bounds
--   upper = max {p >= k/K : K KL(k/K || p) <= ln(1/alpha)}, lower likewise below k/K,
-- satisfy P(p > upper) <= alpha and P(p < lower) <= alpha; alpha = 1e-10.  (eps, delta)-DP requires
-- p_D(b) <= e^eps p_D'(b) + delta and p_D'(b) <= e^eps p_D(b) + delta for every bucket b
-- (eps = 1, delta = 1e-6); the test fails on b only if lower_D(b) > e^eps upper_D'(b) + delta (or
-- the other way round), which for an (eps, delta)-DP release needs one of the 4 bounds to fail:
-- P <= 4 alpha per bucket, 32 alpha = 3.2e-9 per method and loss.  The loss lower bound reported
-- is max(0, ln((lower_D - delta) / upper_D'), ln((lower_D' - delta) / upper_D)); K = 4000 can show
-- at most 5.16.
-- What a correct release shows (the exact law of winsorized, thresholds.py): the added user moves
-- s by mu = sqrt(2 (7/8) rho) = 0.2065 standard deviations of its noise (rho = 0.02436), and the
-- buckets' true losses are -0.46 to +0.39: zCDP at delta = 1e-6 leaves the Gaussian's loss far
-- below eps on every event this K can resolve.  phased_erm's model carries the noise of its three
-- phases and shows less (measured: a shift of about 0.06 sd).
-- Not trivial.  Every release must have weights: the noisy count of users (variance 4 / rho,
-- 164.2) reaches the threshold of 68.36 users except with probability 5.1e-25 on D's 200 users
-- (exact sum, thresholds.py), below 1e-20 for all releases.  And at least half of the releases of
-- each method and loss must be fitted models (test_failed false): winsorized and phased_erm have no
-- test; a method whose test fails on D with probability at most 1/4 fails this check with
-- probability at most exp(-8400 KL(1/2 || 1/4)) = e^-1208, and one whose test fails more often than
-- not would leave its audit nearly trivial: give it options, in its line, under which it fits.
-- Power.  winsorized at eps = 8 (rho 43 times larger, noise 6.6 times smaller: mu = 1.357) judged
-- as eps = 1 by the same procedure (pilot, buckets, K, alpha), for each loss: some bucket must show
-- a loss lower bound above 1.  True losses: +2.04 on the top bucket, -3.65 on the bottom one.
-- P(not) <= 1.7e-11 per loss, from the top bucket {s >= e} alone, e the pilot's 95% quantile (its
-- 380th value of 400): on a grid of D's quantiles, the binomial chance that e falls in a cell
-- times the exact binomial sum of a miss with p_D' at the cell's top and p_D at its bottom (the
-- test detects more often the larger p_D' and the smaller p_D); the normal law stands for the
-- sum's discrete Gaussian noise (sd 2^20 grid steps) within 1e-6 (thresholds.py).  At 4 eps the
-- largest bucket loss is 1.78 (the bottom 5%): K = 4000 would miss it with probability 0.999999,
-- and 40,000 releases per table would be needed.  Measured, as a check of the whole file: with the
-- step's rho multiplied by 100 in sgdwinsorized.c (noise 10 times smaller), the two winsorized
-- privacy tests failed (loss lower bounds 2.1 and 2.4, on the bucket q5 <= s < q20).
-- False failures of the whole file, with M methods: M x 2 x 3.2e-9 (privacy) + 2 x 1.7e-11 (power)
-- + 1e-20 (no weights) = 3.2e-8 for M = 5, and <= 1e-6 up to M = 156.
-- Run time: 16,800 releases per method on 200 users (100 per statement, about 1700 a second), the
-- power check as many: about 50 to 80 s for the four such methods; outlier_removal's 4800 about
-- 30 s more.  Releases are charged by a background worker that cannot see
-- uncommitted rows: the role, its budget and the data are committed first and removed at the end.
\set prefix uldp_stat_nbg_
\ir ../lib/prelude.sql

-- the methods audited, one line each: the method, the options it adds (see Releases above), the
-- users of its D and its K.  outlier_removal needs more users: at eps = 1 the margin of its test's
-- noisy weight is about 214 groups' worth, more than the 200 groups 200 users can form, so its
-- test would fail on every release of D (8399 of 8400 measured) and the audit would only see "test
-- failed".  On 4000 users (the same rows, user u as above) it fits: its test failed in 234 and 228
-- of 2400 releases (logistic, squared; measured).  Its releases read 20 times the rows and compare
-- its groups pairwise, so it gets K = 1000 (2400 releases a loss, about half a minute for both):
-- the largest loss lower bound that K = 1000 can show is 3.8, the false-failure probability per
-- loss is the same 32 alpha, and a test that fails on D with probability at most 1/4 fails the "at
-- most half" check with probability at most exp(-2400 KL(1/2 || 1/4)) = e^-345.
CREATE TEMP TABLE methods (method text PRIMARY KEY, options jsonb NOT NULL, users int NOT NULL, k int NOT NULL);
INSERT INTO methods VALUES
    ('winsorized', '{}', 200, 4000),
    ('phased_erm', '{}', 200, 4000),
    ('accelerated', '{}', 200, 4000),
    ('robust', '{}', 200, 4000),
    ('outlier_removal', '{}', 4000, 1000);

\set pilot 400
CREATE ROLE uldp_stat_nbg_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_nbg_analyst', 1e9, 1) IS NULL AS budget_set \gset
-- a method's D is 1 <= u <= its users, D' adds the user u = 0
CREATE TABLE public.uldp_stat_nbg_data (u int, x float8[] CHECK (cardinality(x) = 1), y float8);
INSERT INTO public.uldp_stat_nbg_data
    SELECT u, ARRAY[(u % 21 - 10) / 10.0], y FROM generate_series(1, 4000) u, unnest(ARRAY[-1, 1]) y;
INSERT INTO public.uldp_stat_nbg_data SELECT 0, ARRAY[1e6], 1e6 FROM generate_series(1, 3);
GRANT SELECT ON public.uldp_stat_nbg_data TO uldp_stat_nbg_analyst;
GRANT SELECT ON methods TO uldp_stat_nbg_analyst;

\ir ../lib/chernoff.sql

SET SESSION AUTHORIZATION uldp_stat_nbg_analyst;
SET max_parallel_workers_per_gather = 0;
SELECT plan((4 * (SELECT count(*) FROM methods) + 4)::int);

-- the runs: every method and loss at eps = 1, and the power check (winsorized at eps = 8); each a
-- pilot of D and K releases of D and of D'
CREATE TEMP TABLE runs (method text, loss text, eps float8, options jsonb, users int, k int);
INSERT INTO runs
    SELECT method, loss, eps,
           '{"feature_radius": 1, "label_bound": 1, "gradient_clip": 0.01, "iterations": 1}'::jsonb || options
           || jsonb_build_object('method', method, 'loss', loss), users, k
    FROM (SELECT method, 1 AS eps, options, users, k FROM methods
          UNION ALL SELECT 'winsorized', 8, '{}', 200, 4000) m,
         unnest(ARRAY['squared', 'logistic']) loss;
-- "WHERE g = g" makes the subquery correlated, so it releases (and is charged) once per g;
-- "u + j - j" makes the 100 aggregates of a statement distinct
CREATE TEMP TABLE releases (method text, loss text, eps float8, tbl text, pilot boolean,
                            released boolean, test_failed boolean, s float8);
SELECT format('INSERT INTO releases SELECT %L, %L, %s, %L, %L, jsonb_array_length(r -> ''weights'') > 0, '
              '(r ->> ''test_failed'')::boolean, CASE WHEN jsonb_array_length(r -> ''weights'') > 0 '
              'THEN uldp.predict(r, ARRAY[1e6::float8]) END '
              'FROM (SELECT unnest((SELECT ARRAY[%s] FROM uldp_stat_nbg_data WHERE u BETWEEN %s AND %s AND g = g)) AS r '
              'FROM generate_series(1, %s) g) s',
              method, loss, eps, tbl, pilot,
              string_agg(format('user_dp_sgd(x, y, u + %s - %s, %s, 1e-6, %L)', j, j, eps, options), ', '),
              CASE tbl WHEN 'D' THEN 1 ELSE 0 END, users, CASE WHEN pilot THEN :pilot ELSE k END / 100)
FROM runs CROSS JOIN (VALUES ('D', true), ('D', false), ('D''', false)) t(tbl, pilot)
     CROSS JOIN generate_series(1, 100) j
GROUP BY method, loss, eps, options, users, k, tbl, pilot ORDER BY eps, method, loss, pilot DESC, tbl \gexec

-- the buckets' edges, from the pilot; the audited releases' buckets and their counts
CREATE TEMP TABLE edges AS
    SELECT method, loss, eps, percentile_disc(ARRAY[0.05, 0.2, 0.5, 0.8, 0.95]) WITHIN GROUP (ORDER BY s) AS e
    FROM releases WHERE pilot AND released AND NOT test_failed GROUP BY method, loss, eps;
CREATE TEMP TABLE loss AS
    SELECT *, greatest(0,
               ln(nullif(greatest(lo_d - 1e-6, 0), 0) / up_d1),
               ln(nullif(greatest(lo_d1 - 1e-6, 0), 0) / up_d)) AS lcb
    FROM (SELECT method, loss, eps, bucket, min_s, n_d, n_d1,
                 pg_temp.kl_bound(n_d, k, ln(1e10), false) AS lo_d, pg_temp.kl_bound(n_d, k, ln(1e10), true) AS up_d,
                 pg_temp.kl_bound(n_d1, k, ln(1e10), false) AS lo_d1, pg_temp.kl_bound(n_d1, k, ln(1e10), true) AS up_d1
          FROM (SELECT method, loss, eps,
                       CASE WHEN NOT released THEN 'no weights' WHEN test_failed THEN 'test failed'
                            ELSE (ARRAY['s < q5', 'q5 <= s < q20', 'q20 <= s < q50', 'q50 <= s < q80',
                                        'q80 <= s < q95', 's >= q95'])[width_bucket(s, e) + 1] END AS bucket,
                       min(s) AS min_s, count(*) FILTER (WHERE tbl = 'D') AS n_d,
                       count(*) FILTER (WHERE tbl = 'D''') AS n_d1
                FROM releases LEFT JOIN edges USING (method, loss, eps)
                WHERE NOT pilot GROUP BY 1, 2, 3, 4) c JOIN runs USING (method, loss, eps)) b;

SELECT ok(n = 2 * k + :pilot AND with_weights = n AND test_failed <= n / 2,
          format('%s, %s, eps = %s: %s releases, %s with weights (all), %s whose test failed (at most half)',
                 method, loss, eps, n, with_weights, test_failed))
FROM (SELECT method, loss, eps, count(*) AS n, count(*) FILTER (WHERE released) AS with_weights,
             count(*) FILTER (WHERE test_failed) AS test_failed
      FROM releases GROUP BY method, loss, eps) r JOIN runs USING (method, loss, eps)
ORDER BY eps, method, loss;
SELECT ok(max(lcb) <= 1,
          format('%s, %s, (1, 1e-6)-DP: largest loss lower bound %s%s; largest |log ratio| of the counts %s;'
                 ' counts D/D'': %s',
                 method, loss, round(max(lcb)::numeric, 3),
                 CASE WHEN max(lcb) > 0 THEN format(' (%s)', (array_agg(bucket ORDER BY lcb DESC, bucket))[1]) END,
                 round(max(abs(ln(greatest(n_d, 1)::float8 / greatest(n_d1, 1))))::numeric, 3),
                 string_agg(format('%s %s/%s', bucket, n_d, n_d1), ', ' ORDER BY min_s NULLS LAST)))
FROM loss WHERE eps = 1 GROUP BY method, loss ORDER BY method, loss;
SELECT ok(max(lcb) > 1,
          format('power, %s: winsorized at eps = 8 judged as eps = 1 shows a loss lower bound above 1: %s (%s);'
                 ' counts D/D'': %s',
                 loss, round(max(lcb)::numeric, 3), (array_agg(bucket ORDER BY lcb DESC, bucket))[1],
                 string_agg(format('%s %s/%s', bucket, n_d, n_d1), ', ' ORDER BY min_s NULLS LAST)))
FROM loss WHERE eps = 8 GROUP BY loss ORDER BY loss;

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;

\ir ../lib/cleanup.sql

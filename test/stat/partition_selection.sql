-- test/stat/partition_selection.sql -- grouped releases (src/grouping.c, groupbound.c,
-- selection.c): which groups appear, and the noise of the counts released per group, measured
-- through SQL with real randomness.
--
-- Notation: Z is discrete Laplace, P(Z = z) ~ q^|z|, q = exp(-e) at the epsilon e a group runs
-- with (the statement's epsilon / k, k = uldp.max_groups_per_user); P(Z >= m) = q^m / (1 + q)
-- for m >= 1.  A group of n users that keep it appears iff n + Z >= T, Z drawn at the selection
-- epsilon / k, T the least 1 + m with P(Z >= m) <= delta / k (selection_threshold).  uldp runs
-- every mechanism at epsilon x (1 - 2^-40) (ULDP_SPEND_MARGIN); the exact probabilities below
-- are computed with it.
--
-- (a) Groups of one user.  uldp.group_selection_delta = 0.01 (its maximum), selection epsilon
-- 0.25, k = 1: T = 18, and a key held by one user appears with probability p = P(Z >= 17) =
-- 0.00802 <= 0.01.  5 statements, each over 20000 keys held by one user each: K = 100000
-- independent trials.  The count n of appearances must satisfy lower <= p <= upper, the Chernoff
-- (KL) bounds of n / K at alpha = 1e-8 each (test/lib/chernoff.sql): each side fails with
-- probability <= 1e-8.  This is also the power check: a rate above the bound delta allows, or a
-- rate of zero (expected count 802), is outside them.
-- (b) A key held by 500 users appears in each of those 5 statements: P(miss) = P(Z <= -483) at
-- q = exp(-0.25) < 1e-52 each.
-- (c) Accuracy with k = 1: 100 groups of 200 users, user_dp_count at epsilon 1, 10 statements:
-- K = 1000 releases n + Z, q = exp(-1).  All 1000 groups appear (default selection, T = 73:
-- P(a group misses) = P(Z <= -128) at q = exp(-0.25) < 1e-14; < 1e-11 for the 1000).
-- The mean of release - n lies within 0.3 of 0: Chernoff with the moment generating function
-- E[e^(tZ)] = (1 - q)^2 / ((1 - q e^t)(1 - q e^-t)) gives P(|mean| >= 0.3) <= 6.9e-11.  The
-- frequency of |release - n| <= 1, whose probability is (1 - q)(1 + 2q) / (1 + q) = 0.8021,
-- lies within its Chernoff bounds at alpha = 1e-8 each side: 2e-8.  (sd of one release:
-- sqrt(2q) / (1 - q) = 1.357.)
-- (d) k = 2: 20000 users, user u in groups u % 100 and (u + 1) % 100, so 100 groups of 400 users,
-- each of whom keeps both groups; user_dp_count at epsilon 2, so epsilon 1 per group; 10
-- statements, K = 1000 releases.  All appear (selection epsilon 0.125 per group, T = 149:
-- P(Z <= -252) < 1e-13 per group).  As in (c), the mean of release - 400 within 0.3 (6.9e-11;
-- a user keeping one of its groups would give 300) and the frequency of |release - 400| <= 1
-- against 0.8021 (2e-8).  Power: noise at epsilon 2 per group (k not applied) gives 0.9677, at
-- epsilon 0.5 (k applied twice) 0.5420.  The check passes only for 723 to 874 of 1000 (the counts
-- whose bounds hold 0.8021): at 0.9677 that has probability <= exp(-1000 KL(0.874 || 0.9677))
-- < 1e-35, at 0.5420 <= exp(-1000 KL(0.723 || 0.5420)) < 1e-29.  The file also checks that
-- both scales lie outside the bounds of the count observed; for counts 723 to 874 they do
-- (the upper bound is at most 0.9284, the lower at least 0.6324), so that check adds no false
-- failure of its own.
-- False failures of the whole file: 2e-8 + 1e-52 + (1e-11 + 6.9e-11 + 2e-8) + (1e-11 + 6.9e-11
-- + 2e-8) < 6.1e-8 <= 1e-6.
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.  25 grouped statements.
\set prefix uldp_stat_partsel_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_partsel_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_partsel_analyst', 1e9, 1) IS NULL AS budget_set \gset
-- (a), (b): users 1..20000 hold key u each, users 20001..20500 share key 0
CREATE TABLE public.uldp_stat_partsel_keys (u int, key int);
INSERT INTO public.uldp_stat_partsel_keys
    SELECT u, CASE WHEN u <= 20000 THEN u ELSE 0 END FROM generate_series(1, 20500) u;
-- (c): 100 groups of 200 users
CREATE TABLE public.uldp_stat_partsel_one (u int, grp int);
INSERT INTO public.uldp_stat_partsel_one SELECT u, u % 100 FROM generate_series(1, 20000) u;
-- (d): every user in two groups, 400 users per group
CREATE TABLE public.uldp_stat_partsel_two (u int, grp int);
INSERT INTO public.uldp_stat_partsel_two
    SELECT u, (u + s) % 100 FROM generate_series(1, 20000) u, generate_series(0, 1) s;
GRANT SELECT ON public.uldp_stat_partsel_keys, public.uldp_stat_partsel_one,
    public.uldp_stat_partsel_two TO uldp_stat_partsel_analyst;

\ir ../lib/chernoff.sql

-- P(Z >= m), Z discrete Laplace at epsilon e, and the threshold T of selection_threshold
CREATE FUNCTION pg_temp.tail(e float8, m int) RETURNS float8 LANGUAGE sql IMMUTABLE
    AS $$ SELECT exp(-e * m) / (1 + exp(-e)) $$;
CREATE FUNCTION pg_temp.threshold(e float8, d float8) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE m int := greatest(1, ceil((-ln(d) - ln(1 + exp(-e))) / e));
BEGIN
    WHILE pg_temp.tail(e, m) > d LOOP m := m + 1; END LOOP;
    RETURN 1 + m;
END $$;
-- P(|Z| <= 1) at epsilon e
CREATE FUNCTION pg_temp.within1(e float8) RETURNS float8 LANGUAGE sql IMMUTABLE
    AS $$ SELECT (1 - exp(-e)) * (1 + 2 * exp(-e)) / (1 + exp(-e)) $$;
SELECT 1 - 2 ^ (-40)::float8 AS margin \gset

SELECT count(*) AS ledger0 FROM uldp.ledger_data WHERE role = 'uldp_stat_partsel_analyst' AND function LIKE '%group_selected' \gset
SET uldp.test_seed = 0;
SET SESSION AUTHORIZATION uldp_stat_partsel_analyst;
SELECT plan(12);

-- (a), (b)
SET uldp.group_selection_delta = 0.01;
CREATE TEMP TABLE keys_out (run int, key int, c bigint);
INSERT INTO keys_out SELECT 1, key, user_dp_count(u, 1.0) FROM uldp_stat_partsel_keys GROUP BY key;
INSERT INTO keys_out SELECT 2, key, user_dp_count(u, 1.0) FROM uldp_stat_partsel_keys GROUP BY key;
INSERT INTO keys_out SELECT 3, key, user_dp_count(u, 1.0) FROM uldp_stat_partsel_keys GROUP BY key;
INSERT INTO keys_out SELECT 4, key, user_dp_count(u, 1.0) FROM uldp_stat_partsel_keys GROUP BY key;
INSERT INTO keys_out SELECT 5, key, user_dp_count(u, 1.0) FROM uldp_stat_partsel_keys GROUP BY key;
RESET uldp.group_selection_delta;

SELECT is(pg_temp.threshold(0.25 * :margin, 0.01 * :margin), 18, 'threshold at epsilon 0.25, delta 0.01 is 18');
SELECT ok(lo <= p AND p <= up,
          format('(a) keys of one user: %s of 100000 appeared; P = %s (<= delta 0.01) lies in the Chernoff bounds [%s, %s]',
                 n, round(p::numeric, 6), round(lo::numeric, 6), round(up::numeric, 6)))
FROM (SELECT n, pg_temp.tail(0.25 * :margin, pg_temp.threshold(0.25 * :margin, 0.01 * :margin) - 1) AS p,
             pg_temp.kl_bound(n, 100000, ln(1e8), false) AS lo, pg_temp.kl_bound(n, 100000, ln(1e8), true) AS up
      FROM (SELECT count(*) AS n FROM keys_out WHERE key <> 0) c) s;
SELECT is((SELECT count(*) FROM keys_out WHERE key = 0), 5::bigint,
          '(b) the key of 500 users appeared in each of the 5 statements');
SELECT is((SELECT count(*) FROM keys_out WHERE key <> 0 AND c IS NULL), 0::bigint,
          '(a) every group that appeared has a released count');

-- (c) k = 1, groups of 200 users, epsilon 1
CREATE TEMP TABLE counts (k int, n int, c bigint);
-- one statement per run: a grouping key such as a run number would put every user in 10 groups
SELECT format('INSERT INTO counts SELECT 1, 200, user_dp_count(u, 1.0) FROM uldp_stat_partsel_one GROUP BY grp -- %s', r)
FROM generate_series(1, 10) r \gexec
-- (d) k = 2, groups of 400 users, epsilon 2 (1 per group)
SET uldp.max_groups_per_user = 2;
SELECT format('INSERT INTO counts SELECT 2, 400, user_dp_count(u, 2.0) FROM uldp_stat_partsel_two GROUP BY grp -- %s', r)
FROM generate_series(1, 10) r \gexec
RESET uldp.max_groups_per_user;

SELECT is((SELECT count(*) FROM counts WHERE k = 1 AND c IS NOT NULL), 1000::bigint,
          '(c) k = 1: all 1000 groups of 200 users appeared');
SELECT is((SELECT count(*) FROM counts WHERE k = 2 AND c IS NOT NULL), 1000::bigint,
          '(d) k = 2: all 1000 groups of 400 users appeared');
SELECT ok(abs(avg(c - n)) < 0.3,
          format('(%s) k = %s: the mean of release - n over 1000 groups is %s (within 0.3 of 0); sd %s (one release at epsilon 1: 1.357)',
                 CASE k WHEN 1 THEN 'c' ELSE 'd' END, k, round(avg(c - n), 3), round(stddev(c - n), 3)))
FROM counts GROUP BY k ORDER BY k;
SELECT ok(lo <= p AND p <= up,
          format('(%s) k = %s: |release - n| <= 1 in %s of 1000; P = %s at epsilon 1 per group lies in [%s, %s]',
                 CASE k WHEN 1 THEN 'c' ELSE 'd' END, k, m, round(p::numeric, 4), round(lo::numeric, 4), round(up::numeric, 4)))
FROM (SELECT k, m, pg_temp.within1(1 * :margin) AS p,
             pg_temp.kl_bound(m, 1000, ln(1e8), false) AS lo, pg_temp.kl_bound(m, 1000, ln(1e8), true) AS up
      FROM (SELECT k, count(*) FILTER (WHERE abs(c - n) <= 1) AS m FROM counts GROUP BY k) c) s ORDER BY k;
-- the power of (d)'s scale check: the scales of epsilon 2 and 0.5 per group are outside its bounds
SELECT ok(pg_temp.within1(2) > up AND pg_temp.within1(0.5) < lo,
          format('(d) power: P(|Z| <= 1) at epsilon 2 (%s) and 0.5 (%s) per group lie outside [%s, %s]',
                 round(pg_temp.within1(2)::numeric, 4), round(pg_temp.within1(0.5)::numeric, 4),
                 round(lo::numeric, 4), round(up::numeric, 4)))
FROM (SELECT pg_temp.kl_bound(m, 1000, ln(1e8), false) AS lo, pg_temp.kl_bound(m, 1000, ln(1e8), true) AS up
      FROM (SELECT count(*) FILTER (WHERE abs(c - n) <= 1) AS m FROM counts WHERE k = 2) c) s;

RESET SESSION AUTHORIZATION;
SELECT is((SELECT count(*) FROM uldp.ledger_data WHERE role = 'uldp_stat_partsel_analyst' AND function LIKE '%group_selected') - :ledger0, 25::bigint,
          'each of the 25 grouped statements was charged once');

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;
RESET uldp.test_seed;

\ir ../lib/cleanup.sql

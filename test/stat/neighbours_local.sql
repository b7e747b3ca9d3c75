-- test/stat/neighbours_local.sql -- the privatizers of the local protocol (uldp 0.7) against their
-- exact laws, on the two most distant inputs a user can have, through uldp.ldp_report (the
-- client library's code; real randomness).  In the local model every two sample sets are
-- neighbours; each check below compares an observed frequency over N = 40000 reports with its
-- exact probability, so it fails if a report is less private than its epsilon (a ratio above
-- e^eps) and also if the mechanism differs from its definition in either direction.
--
--  * range round, bound 1, tau 0.5, eps 1: k = K = 2 bins; A's mean (-0.45) is in bin 0, B's
--    (0.9) in bin 1.  A report (j, s) has P = p/2 when s = H(j, bin) and (1-p)/2 otherwise,
--    p = e/(1+e); H(j, 0) = 1, H(1, 1) = -1.  For the report (1, +1) the ratio P_A/P_B is
--    exactly e: the largest a 1-LDP report may have.  8 checks (4 reports x 2 inputs).
--  * mean round on [0, 1], eps 1, Laplace: A = {0} reports level Z, B = {1} reports 2^20 + Z
--    (no rounding: both lie on the grid), Z discrete Laplace with q = exp(-1/2^20):
--    P(Z <= z) = 1 - q^(z+1)/(1+q) for z >= 0, q^-z/(1+q) for z < 0.  The event "level <= 0"
--    has P_A/P_B = e exactly.  10 checks (5 events x 2 inputs).
--  * vector range round, dimension 2: the reported coordinate is uniform whatever the data
--    (A = {(1, 0)}, B = {(0, 1)}): 2 checks.
-- Each check: |frequency - P| <= t = sqrt(ln(2/alpha) / (2N)) (Hoeffding), alpha = 1e-8:
-- t = 0.015447.  False failures of the file: 20 x 1e-8 = 2e-7 <= 1e-6.
-- Power: a report with the flip probability of eps = 1.1 moves p by 0.018 > t, for example.
\set prefix uldp_stat_nlocal_
\ir ../lib/prelude.sql

BEGIN;
SELECT plan(20);

SELECT uldp.ldp_round('range', '{"bound": 1, "tau": 0.5, "epsilon": 1}') AS range_round \gset
SELECT uldp.ldp_round('mean', '{"lower": 0, "upper": 1, "epsilon": 1, "noise": "laplace"}') AS mean_round \gset
SELECT uldp.ldp_round('vector_range', '{"dimension": 2, "bound": 1, "tau": 0.5, "epsilon": 1}') AS vector_round \gset

CREATE TEMP TABLE reports AS
    SELECT 'range' AS kind, input, uldp.ldp_report(:range_round, samples) AS r
    FROM (VALUES ('A', '{-0.5,-0.4}'::float8[]), ('B', '{0.9}')) i(input, samples), generate_series(1, 40000)
    UNION ALL
    SELECT 'mean', input, uldp.ldp_report(:mean_round, samples)
    FROM (VALUES ('A', '{0}'::float8[]), ('B', '{1}')) i(input, samples), generate_series(1, 40000)
    UNION ALL
    SELECT 'vector', input, uldp.ldp_report(:vector_round, samples)
    FROM (VALUES ('A', '{{1,0}}'::float8[]), ('B', '{{0,1}}')) i(input, samples), generate_series(1, 40000);

CREATE FUNCTION pg_temp.within(observed bigint, p float8, what text) RETURNS text LANGUAGE sql AS $$
    SELECT ok(abs(observed / 40000.0 - p) <= 0.015447,
              format('%s: frequency %s, exact probability %s', what, round(observed / 40000.0, 5), round(p::numeric, 5)))
$$;

-- range reports
WITH exact(input, j, s, p) AS (
    SELECT i, j, s,
           CASE WHEN s = CASE WHEN i = 'B' AND j = 1 THEN -1 ELSE 1 END
                THEN exp(1) / (1 + exp(1)) / 2 ELSE 1 / (1 + exp(1)) / 2 END
    FROM (VALUES ('A'), ('B')) i(i), generate_series(0, 1) j, (VALUES (1), (-1)) s(s))
SELECT pg_temp.within((SELECT count(*) FROM reports
                       WHERE kind = 'range' AND input = e.input
                         AND (r ->> 'index')::int = e.j AND (r ->> 'sign')::int = e.s),
                      e.p, format('range report (%s, %s) of input %s', e.j, e.s, e.input))
FROM exact e ORDER BY input, j, s DESC;

-- mean reports: P(level <= c)
CREATE FUNCTION pg_temp.dl_cdf(z float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN z >= 0 THEN 1 - exp(-(z + 1) / 1048576.0) / (1 + exp(-1 / 1048576.0))
                ELSE exp(z / 1048576.0) / (1 + exp(-1 / 1048576.0)) END
$$;
SELECT pg_temp.within((SELECT count(*) FROM reports
                       WHERE kind = 'mean' AND input = i.input AND (r ->> 'level')::bigint <= c.c),
                      pg_temp.dl_cdf(c.c - CASE WHEN i.input = 'B' THEN 1048576 ELSE 0 END),
                      format('mean report level <= %s of input %s', c.c, i.input))
FROM (VALUES ('A'), ('B')) i(input), (VALUES (-1048576), (0), (524288), (1048576), (2097152)) c(c)
ORDER BY i.input, c.c;

-- vector reports: the coordinate
SELECT pg_temp.within((SELECT count(*) FROM reports
                       WHERE kind = 'vector' AND input = i.input AND (r ->> 'coordinate')::int = 0),
                      0.5, format('vector report on coordinate 0 for input %s', i.input))
FROM (VALUES ('A'), ('B')) i(input) ORDER BY i.input;

SELECT * FROM finish();
ROLLBACK;

-- test/pgtap/calibration.sql -- a charged release never ends in NaN, Infinity or an unexpected
-- error: extreme accepted parameters and extreme data, for the vector mean, user_dp_sgd (both
-- losses, every method) and the scalar releases.
--
-- Every case must give either a clean 22023 error (parameters the mechanisms cannot honour:
-- refused by the validation functions before the charge, or until those run at statement start,
-- by the release itself) or a result whose every number is finite.  A NaN in a model makes
-- jsonb_in fail (22P02), so it counts as a failure too.  Seeded mode (uldp.test_seed = 7) makes
-- the run reproducible; the cases do not depend on the seed.
--
-- Also: the discrete Gaussian's range covers every variance a release requests (the noisy count
-- of users gets rho / 8 of rho in [1.2e-15, 1e6]: variances in [4e-6, 5.4e15]), the threshold
-- uses the variance actually sampled, and the linear grid at 2^62 bins keeps its keys in range.
--
-- Budget charges are committed by a background worker that cannot see uncommitted rows: the
-- roles, tables and budgets are created outside any transaction and removed at the end.
\set prefix uldp_tap_calibration_
\ir ../lib/prelude.sql

CREATE ROLE uldp_tap_calibration_analyst LOGIN;
-- delta = 0.5 releases: each role's delta limit (1) holds two of them
CREATE ROLE uldp_tap_calibration_half1 LOGIN;
CREATE ROLE uldp_tap_calibration_half2 LOGIN;
CREATE ROLE uldp_tap_calibration_half3 LOGIN;
-- data sets, by name: 60 ordinary users; extreme values; one user; NaN and infinities
CREATE TABLE public.uldp_tap_calibration_rows (set text, u int, v float8[] CHECK (cardinality(v) = 3), y float8, c float8, x float8);
INSERT INTO public.uldp_tap_calibration_rows
    SELECT 'normal', u, ARRAY[(u % 10) / 5.0 - 1, (j % 3) - 1.0, u / 60.0],
           (u % 10) / 5.0 - (j % 3) + 0.5, (u % 2)::float8, (u % 10)::float8
    FROM generate_series(1, 60) u, generate_series(0, 2) j WHERE j <= u % 3;
INSERT INTO public.uldp_tap_calibration_rows
    SELECT 'huge', u, ARRAY[s * 1e300, -s * 1e300, 1e300], s * 1e300, (u % 2)::float8, s * 1e300
    FROM generate_series(1, 60) u, LATERAL (SELECT CASE WHEN u % 2 = 0 THEN 1 ELSE -1 END AS s) s;
INSERT INTO public.uldp_tap_calibration_rows
    SELECT 'tiny', u, ARRAY[u * 1e-300, 5e-324, -u * 1e-310], u * 1e-300, 1, u * 1e-300
    FROM generate_series(1, 60) u;
INSERT INTO public.uldp_tap_calibration_rows VALUES ('one', 1, ARRAY[1, 2, 3], 4, 1, 5);
INSERT INTO public.uldp_tap_calibration_rows
    SELECT 'special', u, ARRAY[CASE u % 3 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' ELSE '-Infinity' END::float8, 1, -1],
           CASE u % 2 WHEN 0 THEN 'Infinity' ELSE '-Infinity' END::float8, 1,
           CASE u % 3 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' ELSE '-Infinity' END::float8
    FROM generate_series(1, 60) u;
GRANT SELECT ON public.uldp_tap_calibration_rows TO uldp_tap_calibration_analyst,
    uldp_tap_calibration_half1, uldp_tap_calibration_half2, uldp_tap_calibration_half3;
SELECT uldp.set_budget('uldp_tap_calibration_analyst', 1e12, 1) IS NULL AS budget_set \gset
SELECT uldp.set_budget('uldp_tap_calibration_half1', 1e12, 1) IS NULL AS budget_set \gset
SELECT uldp.set_budget('uldp_tap_calibration_half2', 1e12, 1) IS NULL AS budget_set \gset
SELECT uldp.set_budget('uldp_tap_calibration_half3', 1e12, 1) IS NULL AS budget_set \gset

-- 'finite', or 'error SQLSTATE: message', or 'not finite: result' for the release "call" over
-- the data set "set" (a release of an empty set reads no row of the table)
CREATE FUNCTION public.uldp_tap_calibration_outcome(call text, set text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    result jsonb;
BEGIN
    EXECUTE format('SELECT to_jsonb(%s) FROM public.uldp_tap_calibration_rows WHERE set = %L', call, set)
        INTO result;
    -- to_jsonb writes a non-finite float8 as a string
    IF result IS NULL OR jsonb_path_exists(result,
            'strict $.** ? (@.type() == "string" && (@ == "NaN" || @ == "Infinity" || @ == "-Infinity"))') THEN
        RETURN 'not finite: ' || coalesce(result::text, 'NULL');
    END IF;
    RETURN 'finite';
EXCEPTION WHEN OTHERS THEN
    RETURN 'error ' || SQLSTATE || ': ' || SQLERRM;
END
$$;
GRANT EXECUTE ON FUNCTION public.uldp_tap_calibration_outcome(text, text) TO PUBLIC;

CREATE TABLE public.uldp_tap_calibration_cases (id serial, role text, call text, set text);
GRANT SELECT ON public.uldp_tap_calibration_cases TO PUBLIC;
-- vector means: epsilon and delta at their extremes, radius and tau tiny and huge, every data set
INSERT INTO public.uldp_tap_calibration_cases (role, call, set)
    SELECT 'analyst', format('user_dp_mean(v, u, %s, %s%s)', e, d, p), s
    FROM unnest(ARRAY['1e-6', '1e6', '1']) e, unnest(ARRAY['1e-100', '1e-6']) d,
         unnest(ARRAY['', ', 1e-300', ', 1e-250', ', 1e300', ', 1, 1e-300', ', 1e300, 1e300', ', 1e-250, 1e-250', ', 1e300, 1e-300']) p,
         unnest(ARRAY['normal', 'huge', 'tiny', 'one', 'special', 'none']) s;
INSERT INTO public.uldp_tap_calibration_cases (role, call, set) VALUES
    ('half1', 'user_dp_mean(v, u, 1e-6, 0.5)', 'normal'),
    ('half1', 'user_dp_mean(v, u, 1e6, 0.5, 1e300)', 'huge');
-- user_dp_sgd: both losses and methods, iterations and phases at their maxima, scales at the
-- ends of their range
INSERT INTO public.uldp_tap_calibration_cases (role, call, set)
    SELECT 'analyst', format('user_dp_sgd(v, %s, u, %s, %s, %L)', CASE WHEN l = 'logistic' THEN 'c' ELSE 'y' END,
                             e, d, format('{"loss": "%s", "method": "%s"%s}', l, m, o)), s
    FROM unnest(ARRAY['squared', 'logistic']) l, unnest(ARRAY['winsorized', 'phased_erm', 'robust']) m,
         unnest(ARRAY['1e-6', '1e6']) e, unnest(ARRAY['1e-100', '1e-6']) d,
         unnest(ARRAY['', ', "feature_radius": 1e-50, "label_bound": 1e50, "l2": 1e50',
                      ', "feature_radius": 1e50, "label_bound": 1e-50, "radius": 1e50, "step_size": 1e50',
                      ', "radius": 1e-50, "gradient_clip": 1e50, "tau": 1e-50',
                      ', "radius": 1e50, "gradient_clip": 1e-50, "tau": 1e50, "l2": 0, "step_size": 1e-50']) o,
         unnest(ARRAY['normal', 'huge', 'tiny', 'special']) s;
INSERT INTO public.uldp_tap_calibration_cases (role, call, set)
    SELECT 'analyst', format('user_dp_sgd(v, y, u, %s, 1e-6, %L)', e, o), s
    FROM unnest(ARRAY['1e-6', '1e6']) e,
         unnest(ARRAY['{"iterations": 10000}', '{"method": "phased_erm", "phases": 20, "iterations": 200}',
                      '{"loss": "logistic", "method": "phased_erm", "phases": 20}',
                      '{"method": "robust", "phases": 20, "iterations": 10000}']) o,
         unnest(ARRAY['normal', 'one', 'none']) s;
INSERT INTO public.uldp_tap_calibration_cases (role, call, set) VALUES
    ('half2', 'user_dp_sgd(v, y, u, 1e-6, 0.5, ''{"method": "phased_erm", "phases": 20}'')', 'normal'),
    ('half2', 'user_dp_sgd(v, c, u, 1e6, 0.5, ''{"loss": "logistic", "iterations": 10000}'')', 'huge'),
    ('half3', 'user_dp_sgd(v, y, u, 1e6, 0.5, ''{"feature_radius": 1e50, "label_bound": 1e50, "radius": 1e50}'')', 'huge'),
    ('half3', 'user_dp_mean(v, u, 1e-6, 0.5, 1e-250, 1e-250)', 'tiny');
-- scalar releases: epsilon at its extremes, bounds at +-1e300, tau giving 2^62 bins
INSERT INTO public.uldp_tap_calibration_cases (role, call, set)
    SELECT 'analyst', format('%s(x, u, %s%s)', f, e, p), s
    FROM unnest(ARRAY['user_dp_mean', 'user_dp_range']) f, unnest(ARRAY['1e-6', '1e6']) e,
         unnest(ARRAY['', ', -1e300, 1e300', ', -1e300, 1e300, 1e300', ', -1e300, 1e300, 2.2e281',
                      ', 0, 2^62, 0.5', ', -5e-324, 5e-324', ', -5e-324, 5e-324, 5e-324']) p,
         unnest(ARRAY['normal', 'huge', 'tiny', 'one', 'special', 'none']) s;

SELECT plan((SELECT count(*)::int FROM public.uldp_tap_calibration_cases) + 14);

-- ---------------------------------------------------------------------------
-- the sampler's range and the variance it uses
SELECT ok(uldp.zcdp_rho(1e-6, 1e-100) > 1e-15 AND uldp.zcdp_rho(1e6, 0.5) < 1e6,
    'rho lies in (1e-15, 1e6) for every accepted (epsilon, delta)');
SELECT ok(4 / uldp.zcdp_rho(1e6, 0.5) > 2 ^ (-64)
          AND 6.4 / uldp.zcdp_rho(1e-6, 1e-100) < 2 ^ 60,
    'every noisy count''s variance (4 / rho to 6.4 / rho) lies in the sampler''s range [2^-64, 2^60]');
SELECT is(cardinality(uldp._sample_discrete_gaussian(2 ^ (-64), 100)), 100, 'the sampler draws at 2^-64');
SELECT is(cardinality(uldp._sample_discrete_gaussian(2 ^ 60, 100)), 100, 'the sampler draws at 2^60');
SELECT is(cardinality(uldp._sample_discrete_gaussian(4 / uldp.zcdp_rho(1e-6, 1e-100), 100)), 100,
    'the sampler draws at the largest count variance, above the old limit 2^48');
SELECT throws_ok($$SELECT uldp._sample_discrete_gaussian(2 ^ 61, 1)$$, '22023', NULL, 'above 2^60 is refused, not clamped');

-- the threshold at the small end of the range: epsilon = 1e6, delta = 1e-100 give the count a
-- variance of 4.1e-6 (the old sampler clamped it to 2^-8, more noise than the threshold assumed:
-- P(Z >= 1) = 1e-56 > delta); the threshold is 1.04, so one user never gets a vector and 60 users
-- always do (P(Z != 0) < exp(-1e5))
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_tap_calibration_analyst;
SELECT is(user_dp_mean(v, u, 1e6, 1e-100), '{}'::float8[], 'epsilon 1e6, delta 1e-100, one user: no vector')
FROM uldp_tap_calibration_rows WHERE set = 'one';
SELECT is(cardinality(user_dp_mean(v, u, 1e6, 1e-100)), 3, 'epsilon 1e6, delta 1e-100, 60 users: a vector')
FROM uldp_tap_calibration_rows WHERE set = 'normal';
SELECT is(user_dp_sgd(v, y, u, 1e6, 1e-100)->'weights', '[]'::jsonb, 'epsilon 1e6, delta 1e-100, one user: no model')
FROM uldp_tap_calibration_rows WHERE set = 'one';

-- the linear grid at 2^62 bins: every user at the upper bound, whose bin index 2^62 equals the
-- domain; the key is clamped in integers to 2^62 - 1 (in double, 2^62 - 1 rounds up to 2^62)
SELECT ok(r.lower <= r.upper AND r.lower >= 0 AND r.upper <= 2 ^ 62,
    format('user_dp_range with 2^62 bins and every user at the upper bound: [%s, %s] within the bounds', r.lower, r.upper))
FROM (SELECT (user_dp_range(2 ^ 62, u, 1e6, 0, 2 ^ 62, 0.5)).* FROM uldp_tap_calibration_rows WHERE set = 'normal') r;
SELECT ok(m BETWEEN 0 AND 2 ^ 62, format('user_dp_mean with 2^62 bins at the upper bound: %s within the bounds', m))
FROM (SELECT user_dp_mean(2 ^ 62, u, 1e6, 0, 2 ^ 62, 0.5) AS m FROM uldp_tap_calibration_rows WHERE set = 'normal') s;
SELECT ok(r.lower <= r.upper AND r.lower >= -(2 ^ 62) AND r.upper <= 0,
    format('user_dp_range with 2^62 bins below 0, every user at 0: [%s, %s] within the bounds', r.lower, r.upper))
FROM (SELECT (user_dp_range(0, u, 1e6, -(2 ^ 62), 0, 0.5)).* FROM uldp_tap_calibration_rows WHERE set = 'normal') r;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- the sweep
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_tap_calibration_analyst;
SELECT ok(o = 'finite' OR o LIKE 'error 22023:%', format('%s on %s: %s', c.call, c.set, o))
FROM public.uldp_tap_calibration_cases c,
     LATERAL (SELECT public.uldp_tap_calibration_outcome(c.call, c.set) AS o) x
WHERE c.role = 'analyst'
ORDER BY c.id;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_tap_calibration_half1;
SELECT ok(o = 'finite' OR o LIKE 'error 22023:%', format('%s on %s: %s', c.call, c.set, o))
FROM public.uldp_tap_calibration_cases c,
     LATERAL (SELECT public.uldp_tap_calibration_outcome(c.call, c.set) AS o) x
WHERE c.role = 'half1'
ORDER BY c.id;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_tap_calibration_half2;
SELECT ok(o = 'finite' OR o LIKE 'error 22023:%', format('%s on %s: %s', c.call, c.set, o))
FROM public.uldp_tap_calibration_cases c,
     LATERAL (SELECT public.uldp_tap_calibration_outcome(c.call, c.set) AS o) x
WHERE c.role = 'half2'
ORDER BY c.id;
RESET SESSION AUTHORIZATION;
SET uldp.test_seed = 7;
SET SESSION AUTHORIZATION uldp_tap_calibration_half3;
SELECT ok(o = 'finite' OR o LIKE 'error 22023:%', format('%s on %s: %s', c.call, c.set, o))
FROM public.uldp_tap_calibration_cases c,
     LATERAL (SELECT public.uldp_tap_calibration_outcome(c.call, c.set) AS o) x
WHERE c.role = 'half3'
ORDER BY c.id;
RESET SESSION AUTHORIZATION;

-- the options' new range is checked before anything is read or charged
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"radius": 1e51}') FROM uldp_tap_calibration_rows$$,
    '22023', 'invalid user_dp_sgd option "radius": must lie between 1e-50 and 1e+50', 'a radius above 1e50 is refused');
SELECT throws_ok($$SELECT user_dp_sgd(v, y, u, 1, 1e-6, '{"l2": 1e51}') FROM uldp_tap_calibration_rows$$,
    '22023', 'invalid user_dp_sgd option "l2": must be at most 1e+50', 'an l2 above 1e50 is refused');

SELECT * FROM finish();

\ir ../lib/cleanup.sql

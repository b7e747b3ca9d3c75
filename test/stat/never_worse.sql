-- test/stat/never_worse.sql -- "never worse than naive" (issue 12): with public bounds, the RMSE of
-- user_dp_mean and user_dp_sum over R releases is at most 1.5 times the naive mechanism's RMSE,
-- computed exactly from its noise laws, on a grid of data shapes and sizes; real randomness.
--
-- Grid.  12 shapes, each user one value v_u, one row (every fifth user two rows of v_u, so that its
-- average is v_u and its total 2 v_u), n = 50, 1000 and 20000 users, eps = 1:
--   constant 7 in [0, 10]; 0/1 shares of 0.1%, 5%, 50%, 95%, 99.9% in [0, 1] (round(p n) ones: at
--   n = 50 the 0.1% share has no one and 99.9% everyone, means on the bounds); zero-inflated (80%
--   zeros, the rest exp(3 + N(0, 1)) cut at 500) in [0, 500]; bimodal (20 or 80, + N(0, 3^2)) in
--   [0, 100]; log-normal exp(2 N(0, 1)) cut at 100 in [0, 100]; Pareto (alpha 1.5, x_m 1) cut at
--   1000 in [0, 1000]; one huge user (1e6, everyone else 1) in [0, 1e6]; signed 30 N(0, 1) cut to
--   [-100, 100].  The values come from a hash of the user number, so the data are the same on every
--   run.  user_dp_mean gets the bounds [L, U]; user_dp_sum, whose users contribute totals, gets
--   [min(L, 2L), max(U, 2U)]: every value lies within its bounds, so the non-private target (mean
--   of the user averages, sum of the user totals) is what the naive mechanism estimates.
--   R = 3000 releases per cell at n = 50, 1000 at n = 1000, 400 at n = 20000, doubled (or
--   quadrupled) where the concentration bound below needs it (the one huge user's mean at
--   n = 20000: 800); 72 cells, 110,000 releases with the power checks, 50 to 250 in one
--   statement; about a minute on 2 cores.  n = 1M is measured in the accuracy benchmark
--   (test/bench/never_worse.py, doc/accuracy.md), not here.
--
-- The naive mechanisms (src/release.c; with both bounds uldp runs exactly these, so the test
-- guards that it stays so: any data-dependent narrowing of the bounds would fail some cell).
-- eps' = eps (1 - 2^-40) (ULDP_SPEND_MARGIN); the sampler rounds each epsilon e down to 24
-- significant bits, dl(e); a discrete Laplace Z of sensitivity K steps has P(Z = z) ~ q^|z|,
-- q = exp(-dl(e) / K), variance 2q / (1 - q)^2.
--  * mean: c = (L + U) / 2, half-width h = (U - L) / 2, grid g = 2^(ilogb(h) - 40), K = ceil(h / g).
--    S = sum of rint((v_u - c) / g) (exact integer), Z at e_s = 3 eps' / 4 (K steps), user count
--    n + Z', Z' at e_c = eps' / 4 (1 step, q_c = exp(-dl(e_c))); release clamp(c + g (S + Z) / m,
--    L, U), m = max(n + Z', 1).  With d = mu - c (mu the target) the error is
--        E = clamp(d (n/m - 1) + g Z / m + r, L - mu, U - mu),  |r| <= g n / (2 m) (rounding).
--    Delta method (for reading, not used): MSE ~ 2 (h / e_s)^2 / n^2 + d^2 2 q_c / (1 - q_c)^2 / n^2.
--  * sum: the plain form, S0 = sum of rint(t_u / g0) on the grid of s0 = max(|L|, |U|), Z at all
--    of eps' (K0 = ceil(s0 / g0) steps): E = g0 Z + r, |r| <= n g0 / 2; no clamp.  (With bounds the
--    centred form never has the smaller variance: (s1^(2/3) + |c|^(2/3))^3 >= (s1 + |c|)^2 >= s0^2;
--    at c = 0 a rounding tie can pick it, and it is then the same sum plus 0 times a count.)
-- Exact law.  Z = floor(Y1) - floor(Y2) with Y1, Y2 independent exponentials of rate dl(e) / K
-- (a geometric is the floor of an exponential), and Y1 - Y2 is Laplace of scale K / dl(e): so
-- g Z = g W K / dl(e) + eta, W standard Laplace, |eta| < g.  Let E0 be E with eta = r = 0:
--        E0 = clamp(A_z + B_z W, lo, hi),  A_z = d (n/m - 1),  B_z = g K / (dl(e_s) m)
-- given Z' = z (weight (1 - q_c)/(1 + q_c) q_c^|z|), lo = L - mu, hi = U - mu; for the sum
-- E0 = B W, B = g0 K0 / dl(eps').  |E - E0| <= delta = g (1 + n) (+ 1e-12 of the bounds for the
-- floating-point target).  sigma0^2 = E[E0^2] is computed exactly: a sum over |z| <= 69 / dl(e_c)
-- (the mass beyond, <= 1e-30, counted at the largest square, (hi - lo)^2) of closed forms of
-- E[clamp(A + B W, lo, hi)^2] (antiderivatives of x^k e^(-|x - A| / B)).  sigma0 is "the naive
-- RMSE" of the output; the true one lies within delta of it.
--
-- Test, per cell: RMSE = sqrt(mean of (release - target)^2) <= 1.5 sigma0 + delta.
-- Concentration.  If the releases follow the naive law, RMSE > 1.5 sigma0 + delta implies (by
-- Minkowski, |E - E0| <= delta) that the mean of the R values E0^2 exceeds a = 2.25 sigma0^2.
-- E0^2 has no exponential moment worth using (a square of a Laplace), so it is truncated at T:
--   P(sum E0_r^2 > R a) <= R P(E0^2 > T) + exp(-R (lambda a - ln Phi(lambda))),
--   Phi(lambda) = E exp(lambda min(E0^2, T)) = 1 + int_0^T lambda e^(lambda y) P(E0^2 > y) dy
-- (Markov on exp(lambda sum min(E0_r^2, T)), independent releases).  P(E0^2 > y) is a sum over z of
-- Laplace tails (cut where the clamp makes it 0), nonincreasing in y, so on the grid
-- sqrt(y_i) = sigma0 (0, 0.1, ..., 10, 10.5, ..., 60) the upper sum
--   Phi <= 1 + sum_i P(E0^2 > y_i) (e^(lambda y_(i+1)) - e^(lambda y_i))
-- is a bound.  Each cell takes the best of T in sigma0^2 {10, 15, 20, 25, 30, 40, 50, 60}^2 and
-- lambda sigma0^2 in {0.005, ..., 0.15} (with lambda T <= 50); a test below asserts that the bounds
-- of the 72 cells and of the power checks add up to at most 1e-6.
-- Power.  n = 1000, shares of 50%, 2000 releases at eps = 1/2 judged against the naive RMSE at
-- eps = 1 (they are twice as far off) must fail the test; for E0' of that law (mean m1, fourth
-- moment m4, exact), e^(-x) <= 1 - x + x^2/2 gives P(mean of E0'^2 <= a') <=
-- exp(-R (m1 - a')^2 / (2 m4)), a' = (1.5 sigma0 + 2 delta)^2; these bounds are added in too.
-- False failures of the whole file: the sum of the 74 bounds, asserted <= 1e-6 and printed (about
-- 1e-7: the cells at n = 20000 have about 5e-9 each, the others far less).
--
-- Releases are charged by a background worker that cannot see uncommitted rows: the role, its
-- budget and the data are committed first and removed at the end.
\set prefix uldp_stat_nw_
\ir ../lib/prelude.sql

CREATE ROLE uldp_stat_nw_analyst LOGIN;
SELECT uldp.set_budget('uldp_stat_nw_analyst', 1e9, 1) IS NULL AS budget_set \gset

-- ---------------------------------------------------------------------------
-- the data: a uniform in (0, 1) and a normal from a hash of the user number (Box-Muller)
CREATE FUNCTION pg_temp.unif(u int, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT ((hashint8(u::bigint * 1000003 + salt) & 2147483647)::float8 + 0.5) / 2147483648
$$;
CREATE FUNCTION pg_temp.normal(u int, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT sqrt(-2 * ln(pg_temp.unif(u, salt))) * cos(2 * pi() * pg_temp.unif(u, salt + 1))
$$;
CREATE TEMP TABLE shapes (shape text, lower float8, upper float8, value text);
INSERT INTO shapes VALUES
    ('constant',      0, 10,   '7'),
    ('share_0_1',     0, 1,    '(u <= round(0.001 * n))::int'),
    ('share_5',       0, 1,    '(u <= round(0.05 * n))::int'),
    ('share_50',      0, 1,    '(u <= round(0.5 * n))::int'),
    ('share_95',      0, 1,    '(u <= round(0.95 * n))::int'),
    ('share_99_9',    0, 1,    '(u <= round(0.999 * n))::int'),
    ('zero_inflated', 0, 500,  'CASE WHEN pg_temp.unif(u, 1) < 0.8 THEN 0 ELSE least(exp(3 + pg_temp.normal(u, 2)), 500) END'),
    ('bimodal',       0, 100,  'least(greatest(CASE WHEN u % 2 = 0 THEN 20 ELSE 80 END + 3 * pg_temp.normal(u, 4), 0), 100)'),
    ('lognormal',     0, 100,  'least(exp(2 * pg_temp.normal(u, 6)), 100)'),
    ('pareto',        0, 1000, 'least((1 - pg_temp.unif(u, 8)) ^ (-1 / 1.5), 1000)'),
    ('one_huge',      0, 1e6,  'CASE WHEN u = 1 THEN 1e6 ELSE 1 END'),
    ('signed',     -100, 100,  'least(greatest(30 * pg_temp.normal(u, 10), -100), 100)');
CREATE TEMP TABLE sizes (n int, reps int, per_statement int);
INSERT INTO sizes VALUES (50, 3000, 250), (1000, 1000, 100), (20000, 400, 50);

-- one table per (n, shape): every fifth user has two rows of its value
SELECT format('CREATE TABLE public.uldp_stat_nw_%s_%s AS SELECT u, v AS x FROM (SELECT u, (%s)::float8 AS v '
              'FROM generate_series(1, %s) u, LATERAL (SELECT %s AS n) p) s, '
              'generate_series(1, CASE WHEN u %% 5 = 0 THEN 2 ELSE 1 END) r',
              z.n, s.shape, s.value, z.n, z.n)
FROM sizes z CROSS JOIN shapes s \gexec
SELECT format('GRANT SELECT ON public.uldp_stat_nw_%s_%s TO uldp_stat_nw_analyst', z.n, s.shape)
FROM sizes z CROSS JOIN shapes s \gexec

-- ---------------------------------------------------------------------------
-- the cells, with their targets
CREATE TEMP TABLE cells (id serial, n int, shape text, fn text, eps float8, lower float8, upper float8,
                         reps int, per_statement int, power boolean DEFAULT false,
                         users bigint, target float8);
INSERT INTO cells (n, shape, fn, eps, lower, upper, reps, per_statement)
    SELECT z.n, s.shape, f.fn, 1, CASE f.fn WHEN 'mean' THEN s.lower ELSE least(s.lower, 2 * s.lower) END,
           CASE f.fn WHEN 'mean' THEN s.upper ELSE greatest(s.upper, 2 * s.upper) END, z.reps, z.per_statement
    FROM sizes z CROSS JOIN shapes s CROSS JOIN (VALUES ('mean'), ('sum')) f(fn)
    ORDER BY z.n, s.shape, f.fn;
-- power: at eps = 1/2, judged against the naive RMSE at eps = 1 (cell of the same n, shape, fn)
INSERT INTO cells (n, shape, fn, eps, lower, upper, reps, per_statement, power)
    SELECT n, shape, fn, 0.5, lower, upper, 2000, 100, true FROM cells WHERE n = 1000 AND shape = 'share_50';
SELECT format('UPDATE cells SET (users, target) = (SELECT count(*), %s FROM (SELECT %s(least(greatest(x, %s), %s)) AS t '
              'FROM public.uldp_stat_nw_%s_%s GROUP BY u) s) WHERE id = %s',
              CASE fn WHEN 'mean' THEN 'avg(t)' ELSE 'sum(least(greatest(t, ' || lower || '), ' || upper || '))' END,
              CASE fn WHEN 'mean' THEN 'avg' ELSE 'sum' END,
              CASE fn WHEN 'mean' THEN lower ELSE '-1e300' END, CASE fn WHEN 'mean' THEN upper ELSE '1e300' END,
              n, shape, id)
FROM cells \gexec

-- ---------------------------------------------------------------------------
-- the naive law.  PostgreSQL raises an error on float8 underflow: exponentials below e^-600 are 0.
CREATE FUNCTION pg_temp.sexp(x float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN x < -600 THEN 0::float8 ELSE exp(x) END
$$;
-- the exponent of the largest power of two <= x (C's ilogb), exactly
CREATE FUNCTION pg_temp.ilogb(x float8) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE e int := floor(ln(x) / ln(2));
BEGIN
    WHILE 2::float8 ^ e > x LOOP e := e - 1; END LOOP;
    WHILE 2::float8 ^ (e + 1) <= x LOOP e := e + 1; END LOOP;
    RETURN e;
END $$;
-- epsilon as the sampler uses it: rounded down to 24 significant bits (src/noise.c, dyadic_floor)
CREATE FUNCTION pg_temp.dl(x float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT floor(x * 2::float8 ^ (23 - pg_temp.ilogb(x))) * 2::float8 ^ (pg_temp.ilogb(x) - 23)
$$;
-- P(X > t) and P(X < t) for X Laplace of location a and scale b
CREATE FUNCTION pg_temp.lap_sf(t float8, a float8, b float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN t >= a THEN 0.5 * pg_temp.sexp(-(t - a) / b) ELSE 1 - 0.5 * pg_temp.sexp((t - a) / b) END
$$;
CREATE FUNCTION pg_temp.lap_cdf(t float8, a float8, b float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN t <= a THEN 0.5 * pg_temp.sexp((t - a) / b) ELSE 1 - 0.5 * pg_temp.sexp(-(t - a) / b) END
$$;
-- E[clamp(X, lo, hi)^k], X Laplace(a, b), lo <= 0 <= hi (NULL: no clamp), k = 2 or 4.  With
-- P_k(x) = sum_j k!/(k-j)! x^(k-j) s^j: int x^k e^(-(x-a)/b) / (2b) = -e^(-(x-a)/b) P_k(x) / 2 (s = b)
-- for x >= a, and int x^k e^((x-a)/b) / (2b) = e^((x-a)/b) P_k(x) / 2 (s = -b) for x <= a.
CREATE FUNCTION pg_temp.moment(k int, a float8, b float8, lo float8, hi float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    total float8 := 0;
    x1 float8;
    x2 float8;
BEGIN
    IF lo IS NOT NULL THEN total := total + lo ^ k * pg_temp.lap_cdf(lo, a, b); END IF;
    IF hi IS NOT NULL THEN total := total + hi ^ k * pg_temp.lap_sf(hi, a, b); END IF;
    -- [lo, hi] left of a
    x2 := CASE WHEN hi IS NULL THEN a ELSE least(hi, a) END;
    IF lo IS NULL OR lo < x2 THEN
        total := total + pg_temp.antiderivative(k, a, b, x2, false)
                       - CASE WHEN lo IS NULL THEN 0 ELSE pg_temp.antiderivative(k, a, b, lo, false) END;
    END IF;
    -- and right of a
    x1 := CASE WHEN lo IS NULL THEN a ELSE greatest(lo, a) END;
    IF hi IS NULL OR x1 < hi THEN
        total := total + CASE WHEN hi IS NULL THEN 0 ELSE pg_temp.antiderivative(k, a, b, hi, true) END
                       - pg_temp.antiderivative(k, a, b, x1, true);
    END IF;
    RETURN total;
END $$;
CREATE FUNCTION pg_temp.antiderivative(k int, a float8, b float8, x float8, is_right boolean) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    s float8 := CASE WHEN is_right THEN b ELSE -b END;
    e float8 := pg_temp.sexp(CASE WHEN is_right THEN -(x - a) / b ELSE (x - a) / b END);
    p float8 := 0;
    coefficient float8 := 1;
BEGIN
    IF e = 0 THEN RETURN 0; END IF;
    FOR j IN 0..k LOOP   -- coefficient = k!/(k-j)! s^j
        p := p + coefficient * x ^ (k - j);
        coefficient := coefficient * (k - j) * s;
    END LOOP;
    RETURN CASE WHEN is_right THEN -0.5 ELSE 0.5 END * e * p;
END $$;

-- per cell, in units of "unit" (the half-width for a mean, s0 for a sum): the Laplace components
-- (weight w, location a, scale b), the clamp [lo, hi], the mass left out, delta
ALTER TABLE cells ADD COLUMN unit float8, ADD COLUMN lo float8, ADD COLUMN hi float8,
    ADD COLUMN dropped float8, ADD COLUMN delta float8;
CREATE TEMP TABLE law (id int, w float8, a float8, b float8);
UPDATE cells SET unit = CASE fn WHEN 'mean' THEN greatest(upper - (lower / 2 + upper / 2), (lower / 2 + upper / 2) - lower)
                                ELSE greatest(abs(lower), abs(upper)) END;
UPDATE cells SET lo = CASE fn WHEN 'mean' THEN (lower - target) / unit END,
                 hi = CASE fn WHEN 'mean' THEN (upper - target) / unit END,
                 delta = 2::float8 ^ (pg_temp.ilogb(unit) - 40) * (1 + users) + 1e-12 * (abs(lower) + abs(upper)) * users;
-- the sum: one component, scale g0 K0 / dl(eps')
INSERT INTO law
    SELECT id, 1, 0, p.g * ceil(unit / p.g) / pg_temp.dl(eps * (1 - 2::float8 ^ -40)) / unit
    FROM cells, LATERAL (SELECT 2::float8 ^ (pg_temp.ilogb(unit) - 40) AS g) p WHERE fn = 'sum';
UPDATE cells SET dropped = 0 WHERE fn = 'sum';
-- the mean: one component per count noise z, |z| <= Z = ceil(69 / dl(e_c))
INSERT INTO law
    SELECT c.id, (1 - p.qc) / (1 + p.qc) * pg_temp.sexp(-p.ec * abs(z)),
           (c.target - (c.lower / 2 + c.upper / 2)) * (c.users::float8 / greatest(c.users + z, 1) - 1) / c.unit,
           p.g * ceil(c.unit / p.g) / (p.es * greatest(c.users + z, 1)) / c.unit
    FROM cells c,
         LATERAL (SELECT pg_temp.dl(c.eps * (1 - 2::float8 ^ -40) / 4) AS ec,
                         pg_temp.dl(c.eps * (1 - 2::float8 ^ -40) * 3 / 4) AS es,
                         exp(-pg_temp.dl(c.eps * (1 - 2::float8 ^ -40) / 4)) AS qc,
                         2::float8 ^ (pg_temp.ilogb(c.unit) - 40) AS g) p,
         generate_series(-ceil(69 / p.ec)::int, ceil(69 / p.ec)::int) z
    WHERE c.fn = 'mean';
UPDATE cells c SET dropped = 2 * exp(-p.ec * (ceil(69 / p.ec) + 1)) / (1 + exp(-p.ec))
    FROM (SELECT id, pg_temp.dl(eps * (1 - 2::float8 ^ -40) / 4) AS ec FROM cells) p
    WHERE p.id = c.id AND c.fn = 'mean';

-- sigma0^2 (and the fourth moment, for the power checks), in units^2
ALTER TABLE cells ADD COLUMN sigma float8, ADD COLUMN m4 float8, ADD COLUMN delta_method float8;
UPDATE cells c SET sigma = sqrt(s.m2 + c.dropped * coalesce((c.hi - c.lo) ^ 2, 0)),
                   m4 = s.m4 + c.dropped * coalesce((c.hi - c.lo) ^ 4, 0)
    FROM (SELECT l.id, sum(l.w * pg_temp.moment(2, l.a, l.b, c.lo, c.hi)) AS m2,
                 sum(l.w * pg_temp.moment(4, l.a, l.b, c.lo, c.hi)) AS m4
          FROM law l JOIN cells c USING (id) GROUP BY l.id) s
    WHERE s.id = c.id;
-- the delta method, for comparison only
UPDATE cells SET delta_method = CASE fn WHEN 'sum' THEN sigma ELSE
    sqrt(2 * (1 / (eps * 3 / 4)) ^ 2 + ((target - (lower / 2 + upper / 2)) / unit) ^ 2
         * 2 * exp(-eps / 4) / (1 - exp(-eps / 4)) ^ 2) / users END;

-- the tail P(E0^2 > y) on the grid sqrt(y) = sigma0 s_i
CREATE TEMP TABLE grid AS
    SELECT i, CASE WHEN i <= 100 THEN 0.1 * i ELSE 10 + 0.5 * (i - 100) END::float8 AS s
    FROM generate_series(0, 200) i;
CREATE TEMP TABLE tail AS
    SELECT c.id, g.i, g.s,
           sum(l.w * (CASE WHEN c.hi IS NULL OR g.s * c.sigma < c.hi THEN pg_temp.lap_sf(g.s * c.sigma, l.a, l.b) ELSE 0 END
                    + CASE WHEN c.lo IS NULL OR -g.s * c.sigma > c.lo THEN pg_temp.lap_cdf(-g.s * c.sigma, l.a, l.b) ELSE 0 END))
               + c.dropped AS p
    FROM cells c JOIN law l USING (id) CROSS JOIN grid g
    WHERE NOT c.power
    GROUP BY c.id, g.i, g.s, c.dropped;
-- Phi at T = (sigma0 s_i)^2: 1 + the sum over the grid steps below s_i
CREATE TEMP TABLE chernoff AS
    SELECT * FROM (
        SELECT t.id, t.s AS s_t, lam, t.p AS p_t,
               1 + coalesce(sum(t.p * (exp(lam * t.s_next ^ 2) - exp(lam * t.s ^ 2)))
                            OVER (PARTITION BY t.id, lam ORDER BY t.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS phi
        FROM (SELECT *, lead(s) OVER (PARTITION BY id ORDER BY i) AS s_next FROM tail) t
             CROSS JOIN unnest(ARRAY[0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.06,
                                     0.07, 0.08, 0.1, 0.12, 0.15]::float8[]) lam) h
    WHERE s_t IN (10, 15, 20, 25, 30, 40, 50, 60) AND lam * s_t ^ 2 <= 50;
-- each cell takes the smallest R of (R, 2R, 4R) whose bound is at most 1e-8 (the data decide, not
-- the releases: only the one huge user's mean at n = 20000 needs more)
ALTER TABLE cells ADD COLUMN bound float8;
UPDATE cells c SET reps = b.reps, bound = b.bound
    FROM (SELECT DISTINCT ON (id) id, reps, bound
          FROM (SELECT h.id, r AS reps,
                       min(least(1, r * h.p_t + CASE WHEN h.lam * 2.25 > ln(h.phi)
                                                     THEN pg_temp.sexp(-r * (h.lam * 2.25 - ln(h.phi))) ELSE 1 END)) AS bound
                FROM chernoff h JOIN cells c USING (id) CROSS JOIN unnest(ARRAY[c.reps, 2 * c.reps, 4 * c.reps]) r
                GROUP BY h.id, r) x
          ORDER BY id, bound > 1e-8, CASE WHEN bound > 1e-8 THEN -reps ELSE reps END) b
    WHERE b.id = c.id;
-- power: P(the test passes) for releases at eps/2 judged against sigma0 at eps
UPDATE cells p SET bound = CASE WHEN p.sigma ^ 2 > a.a THEN pg_temp.sexp(-p.reps * (p.sigma ^ 2 - a.a) ^ 2 / (2 * p.m4)) ELSE 1 END
    FROM (SELECT n, shape, fn, (1.5 * sigma + 2 * delta / unit) ^ 2 AS a FROM cells WHERE NOT power) a
    WHERE p.power AND a.n = p.n AND a.shape = p.shape AND a.fn = p.fn;

-- ---------------------------------------------------------------------------
GRANT SELECT ON cells TO uldp_stat_nw_analyst;
SET SESSION AUTHORIZATION uldp_stat_nw_analyst;
SET max_parallel_workers_per_gather = 0;
SELECT plan(77);

SELECT is((SELECT count(*) FROM cells WHERE users = n), 74::bigint, 'every table has its n users');
SELECT ok((SELECT sum(bound) FROM cells) <= 1e-6,
          format('the concentration bounds of the 72 cells and of the 2 power checks add up to %s <= 1e-6 '
                 '(largest %s)', (SELECT sum(bound) FROM cells)::real, (SELECT max(bound) FROM cells)::real));

-- R releases per cell, per_statement of them in each statement; "WHERE g = g" makes the subquery
-- correlated, so it releases (and is charged) once per g.  The user argument "u + j - j" makes
-- the aggregates distinct (identical ones would be computed once).
CREATE TEMP TABLE releases (id int, value float8);
SELECT format('INSERT INTO releases SELECT %s, unnest((SELECT ARRAY[%s] FROM uldp_stat_nw_%s_%s WHERE g = g)) '
              'FROM generate_series(1, %s) g',
              id, string_agg(format('user_dp_%s(x, u + %s - %s, %s, %s, %s)', fn, j, j, eps, lower, upper), ', '),
              n, shape, reps / per_statement)
FROM cells CROSS JOIN LATERAL generate_series(1, per_statement) j
GROUP BY id, fn, n, shape, reps, per_statement ORDER BY id \gexec
SELECT is((SELECT count(*) FROM releases r JOIN cells c USING (id) WHERE r.value IS NOT NULL), (SELECT sum(reps) FROM cells),
          'every release of every cell returned a number');

SELECT ok(e.rmse <= 1.5 * c.sigma * c.unit + c.delta,
          format('%s %s, n = %s: RMSE %s <= 1.5 x naive %s (ratio %s; delta method %s; %s releases; bound %s)',
                 c.fn, c.shape, c.n, e.rmse::real, (c.sigma * c.unit)::real, (e.rmse / (c.sigma * c.unit))::numeric(5, 3),
                 (c.delta_method * c.unit)::real, c.reps, c.bound::real))
FROM cells c JOIN (SELECT id, sqrt(avg((r.value - c.target) ^ 2)) AS rmse
                   FROM releases r JOIN cells c USING (id) GROUP BY id) e USING (id)
WHERE NOT c.power ORDER BY c.n, c.fn, c.shape;

SELECT ok(e.rmse > 1.5 * b.sigma * b.unit + b.delta,
          format('power: %s %s, n = %s at eps = %s: RMSE %s > 1.5 x naive at eps = 1, %s (ratio %s; P(not) <= %s)',
                 c.fn, c.shape, c.n, c.eps, e.rmse::real, (b.sigma * b.unit)::real,
                 (e.rmse / (b.sigma * b.unit))::numeric(5, 3), c.bound::real))
FROM cells c JOIN cells b ON b.n = c.n AND b.shape = c.shape AND b.fn = c.fn AND NOT b.power
     JOIN (SELECT id, sqrt(avg((r.value - c.target) ^ 2)) AS rmse
           FROM releases r JOIN cells c USING (id) GROUP BY id) e ON e.id = c.id
WHERE c.power ORDER BY c.fn;

SELECT * FROM finish();
RESET SESSION AUTHORIZATION;

\ir ../lib/cleanup.sql

-- test/lib/chernoff.sql -- shared by the statistical tests that compare two frequencies.
--
-- Chernoff (KL) confidence bound of a binomial proportion n/k: upper if is_upper, else lower
CREATE FUNCTION pg_temp.kl(a float8, p float8) RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE r float8 := 0;
BEGIN
    IF p <= 0 OR p >= 1 THEN RETURN 'Infinity'; END IF;
    IF a > 0 THEN r := r + a * ln(a / p); END IF;
    IF a < 1 THEN r := r + (1 - a) * ln((1 - a) / (1 - p)); END IF;
    RETURN r;
END $$;
CREATE FUNCTION pg_temp.kl_bound(n bigint, k bigint, log_inv_alpha float8, is_upper boolean)
RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE a float8 := n::float8 / k; lo float8; hi float8; mid float8;
BEGIN
    IF is_upper AND a >= 1 THEN RETURN 1; END IF;
    IF NOT is_upper AND a <= 0 THEN RETURN 0; END IF;
    IF is_upper THEN lo := a; hi := 1; ELSE lo := 0; hi := a; END IF;
    FOR i IN 1..100 LOOP   -- the bound lies between lo and hi; KL(a || p) grows away from a
        mid := (lo + hi) / 2;
        IF (pg_temp.kl(a, mid) > log_inv_alpha / k) = is_upper THEN hi := mid; ELSE lo := mid; END IF;
    END LOOP;
    RETURN CASE WHEN is_upper THEN hi ELSE lo END;   -- the conservative end
END $$;

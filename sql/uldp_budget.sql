-- budgets: charged before release, refused when exhausted, never refunded
SET uldp.test_seed = 1;
CREATE ROLE uldp_analyst LOGIN;
GRANT SELECT ON visits TO uldp_analyst;

-- a role without a budget cannot release anything
SET SESSION AUTHORIZATION uldp_analyst;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) FROM visits;
-- nor change budgets
SELECT uldp.set_budget('uldp_analyst', 100, 1);
SELECT uldp.reset_budget('uldp_analyst');
UPDATE uldp.budget_data SET epsilon_spent = 0;
INSERT INTO uldp.ledger_data (role, function, epsilon, delta) VALUES ('uldp_analyst', 'x', -1, 0);
-- nor call the charging function
SELECT uldp._charge('uldp_analyst', 'x', -1, 0, '');
SELECT * FROM uldp.budget;
RESET SESSION AUTHORIZATION;

SELECT uldp.set_budget('uldp_analyst', 1.0, 1e-6);
SET SESSION AUTHORIZATION uldp_analyst;
SELECT user_dp_mean(amount, user_id, 0.25, 0, 1000) IS NOT NULL AS released FROM visits;
-- a rolled-back transaction keeps its charge
BEGIN;
SELECT user_dp_mean(amount, user_id, 0.25, 0, 1000) IS NOT NULL AS released FROM visits;
ROLLBACK;
SELECT * FROM uldp.budget;
RESET SESSION AUTHORIZATION;

-- SET ROLE does not move a release onto another role's budget: the
-- session user pays
CREATE TEMP TABLE spent AS
	SELECT epsilon_spent FROM uldp.budget_data WHERE role = session_user;
SET ROLE uldp_analyst;
SELECT user_dp_mean(amount, user_id, 0.125, 0, 1000) IS NOT NULL AS released FROM visits;
RESET ROLE;
SELECT b.epsilon_spent - s.epsilon_spent AS charged_to_session_user
FROM uldp.budget_data b, spent s WHERE b.role = session_user;
SET SESSION AUTHORIZATION uldp_analyst;
-- 0.5 spent: 0.5 remains; 0.75 is refused and charges nothing
SELECT user_dp_mean(amount, user_id, 0.75, 0, 1000) FROM visits;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) IS NOT NULL AS released FROM visits;
SELECT user_dp_mean(amount, user_id, 0.1, 0, 1000) FROM visits;
SELECT role, epsilon_limit, delta_limit, epsilon_spent, delta_spent FROM uldp.budget;
SELECT role, function, epsilon, delta FROM uldp.ledger ORDER BY at;
RESET SESSION AUTHORIZATION;

-- read-only transactions release too (the charge is written elsewhere)
SELECT uldp.reset_budget('uldp_analyst');
SET SESSION AUTHORIZATION uldp_analyst;
BEGIN READ ONLY;
SELECT user_dp_mean(amount, user_id, 0.5, 0, 1000) IS NOT NULL AS released FROM visits;
COMMIT;
RESET SESSION AUTHORIZATION;

-- the administrator sees every role's budget and the whole ledger
SELECT role, epsilon_limit, epsilon_spent FROM uldp.budget WHERE role = 'uldp_analyst';
SELECT role, function, epsilon, delta FROM uldp.ledger
WHERE role = 'uldp_analyst' ORDER BY at;

-- invalid budgets
SELECT uldp.set_budget('uldp_analyst', -1, 0);
SELECT uldp.set_budget('uldp_analyst', 'Infinity', 0);
SELECT uldp.set_budget('uldp_analyst', 1, 2);
SELECT uldp.set_budget('no_such_role', 1, 0);
SELECT uldp.reset_budget('postgres');

-- the ledger is append-only, even for a superuser
DELETE FROM uldp.ledger_data WHERE role = 'uldp_analyst';
UPDATE uldp.ledger_data SET epsilon = 0 WHERE role = 'uldp_analyst';
TRUNCATE uldp.ledger_data;
SELECT valid, entries > 0 AS has_entries, problem FROM uldp.verify_ledger();
-- the administrator sees the statements, the analyst does not
SELECT role, function, statement FROM uldp.ledger
WHERE role = 'uldp_analyst' AND function LIKE 'uldp.%' ORDER BY at;
SET SESSION AUTHORIZATION uldp_analyst;
SELECT count(*) AS rows, count(statement) AS statements FROM uldp.ledger;
RESET SESSION AUTHORIZATION;

-- budgets follow the role's name: dropping the role and creating it again
-- does not give back what was spent
REVOKE SELECT ON visits FROM uldp_analyst;
DROP ROLE uldp_analyst;
SELECT role, epsilon_limit, epsilon_spent FROM uldp.budget WHERE role = 'uldp_analyst';
CREATE ROLE uldp_analyst LOGIN;
GRANT SELECT ON visits TO uldp_analyst;
SET SESSION AUTHORIZATION uldp_analyst;
SELECT role, epsilon_spent FROM uldp.budget;
SELECT user_dp_mean(amount, user_id, 0.75, 0, 1000) FROM visits;
RESET SESSION AUTHORIZATION;
-- nor does deleting the budget and granting a new one
DELETE FROM uldp.budget_data WHERE role = 'uldp_analyst';
SELECT uldp.set_budget('uldp_analyst', 1.0, 0);
SELECT role, epsilon_limit, epsilon_spent FROM uldp.budget WHERE role = 'uldp_analyst';
SELECT valid, problem FROM uldp.verify_ledger();

-- a role granted set_budget and reset_budget (here through a group) cannot
-- change its own budget, as session user, after SET ROLE, or through a
-- SECURITY DEFINER function another role calls; it can change others'
CREATE ROLE uldp_budget_admin LOGIN;
CREATE ROLE uldp_budget_group;
GRANT uldp_budget_group TO uldp_budget_admin;
GRANT EXECUTE ON FUNCTION uldp.set_budget(regrole, float8, float8),
	uldp.reset_budget(regrole) TO uldp_budget_group;
SELECT uldp.set_budget('uldp_budget_admin', 1, 0);
SELECT uldp.set_budget('uldp_budget_group', 1, 0);
SET SESSION AUTHORIZATION uldp_budget_admin;
SELECT uldp.set_budget('uldp_analyst', 2, 0);
SELECT uldp.set_budget('uldp_budget_admin', 100, 1);
SELECT uldp.reset_budget('uldp_budget_admin');
SELECT uldp.set_budget('uldp_budget_group', 100, 1);
SET ROLE uldp_budget_group;
SELECT uldp.reset_budget('uldp_budget_group');
RESET ROLE;
RESET SESSION AUTHORIZATION;
CREATE FUNCTION public.uldp_raise_admin() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog
AS $$ SELECT uldp.set_budget('uldp_budget_admin', 100, 1) $$;
ALTER FUNCTION public.uldp_raise_admin() OWNER TO uldp_budget_admin;
SET SESSION AUTHORIZATION uldp_analyst;
SELECT public.uldp_raise_admin();
RESET SESSION AUTHORIZATION;
SELECT role, epsilon_limit, delta_limit FROM uldp.budget
WHERE role IN ('uldp_analyst', 'uldp_budget_admin', 'uldp_budget_group') ORDER BY role;
-- a superuser may change its own
SELECT uldp.set_budget(session_user::regrole, 1000, 1e-3);
DROP FUNCTION public.uldp_raise_admin();
REVOKE EXECUTE ON FUNCTION uldp.set_budget(regrole, float8, float8),
	uldp.reset_budget(regrole) FROM uldp_budget_group;
DROP ROLE uldp_budget_admin;
DROP ROLE uldp_budget_group;
SELECT valid, problem FROM uldp.verify_ledger();
REVOKE SELECT ON visits FROM uldp_analyst;
DROP ROLE uldp_analyst;

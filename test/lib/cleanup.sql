-- test/lib/cleanup.sql -- removes the budgets, tables, functions and roles whose
-- names start with :prefix (see prelude.sql).  The ledger is append-only: its
-- rows stay, under the roles' names.  Budgets follow names and a new budget
-- starts from what the name's ledger rows spent, so budgets are reset (logged)
-- before they are deleted: a later run starts from zero.  Releases are charged by
-- a background worker that cannot see uncommitted rows, so test files that release
-- commit their objects and must remove them explicitly.
RESET SESSION AUTHORIZATION;
SELECT set_config('uldp_test.prefix', :'prefix', false) IS NULL AS prefix_unset \gset
DO $$
DECLARE
    prefix text := current_setting('uldp_test.prefix');
    object record;
BEGIN
    IF to_regprocedure('uldp._reset_budget(name)') IS NOT NULL THEN
        FOR object IN SELECT b.role FROM uldp.budget_data b
                      WHERE starts_with(b.role, prefix) AND (b.epsilon_spent <> 0 OR b.delta_spent <> 0) LOOP
            PERFORM uldp._reset_budget(object.role);
        END LOOP;
        DELETE FROM uldp.budget_data WHERE starts_with(role::text, prefix);
    ELSE -- uldp before 0.4 (test/attack/upgrade.sh): budgets by oid
        EXECUTE 'DELETE FROM uldp.budget_data
                 WHERE role::oid IN (SELECT oid FROM pg_roles WHERE starts_with(rolname, $1))' USING prefix;
    END IF;
    FOR object IN SELECT oid::regprocedure AS name FROM pg_proc
                  WHERE pronamespace = 'public'::regnamespace AND starts_with(proname, prefix) LOOP
        EXECUTE format('DROP FUNCTION %s', object.name);
    END LOOP;
    FOR object IN SELECT oid::regclass AS name FROM pg_class
                  WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
                    AND starts_with(relname, prefix) LOOP
        EXECUTE format('DROP TABLE IF EXISTS %s CASCADE', object.name);
    END LOOP;
    FOR object IN SELECT rolname FROM pg_roles WHERE starts_with(rolname, prefix) LOOP
        EXECUTE format('DROP OWNED BY %I', object.rolname);
        EXECUTE format('DROP ROLE %I', object.rolname);
    END LOOP;
END
$$;

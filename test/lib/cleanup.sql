-- test/lib/cleanup.sql -- removes the budgets, tables, functions and roles whose
-- names start with :prefix (see prelude.sql).  The ledger is append-only: its
-- rows stay, naming the dropped roles by oid.  Releases are charged by
-- a background worker that cannot see uncommitted rows, so test files that release
-- commit their objects and must remove them explicitly.
RESET SESSION AUTHORIZATION;
SELECT set_config('uldp_test.prefix', :'prefix', false) IS NULL AS prefix_unset \gset
DO $$
DECLARE
    prefix text := current_setting('uldp_test.prefix');
    object record;
BEGIN
    DELETE FROM uldp.budget_data
    WHERE role IN (SELECT oid FROM pg_roles WHERE starts_with(rolname, prefix));
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

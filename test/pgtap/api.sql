-- test/pgtap/api.sql -- the SQL surface of uldp: objects, signatures, types, privileges, GUCs.
-- Releases nothing, so everything runs in one transaction that is rolled back.
\set prefix uldp_tap_api_
\ir ../lib/prelude.sql

BEGIN;
-- the GUCs exist only once the library is loaded
LOAD 'uldp';
-- a role with nothing but PUBLIC's privileges
CREATE ROLE uldp_tap_api_nobody NOLOGIN;

SELECT plan(154);

-- ---------------------------------------------------------------------------
-- aggregates (public schema): 3 arities x 2, polymorphic user id
SELECT is_aggregate('public', 'user_dp_mean', ARRAY['double precision', 'anyelement', 'double precision'],
    'user_dp_mean(value, user_id, epsilon) is an aggregate');
SELECT is_aggregate('public', 'user_dp_mean',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'user_dp_mean(value, user_id, epsilon, lower, upper) is an aggregate');
SELECT is_aggregate('public', 'user_dp_mean',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'user_dp_mean(value, user_id, epsilon, lower, upper, tau) is an aggregate');
SELECT is_aggregate('public', 'user_dp_range', ARRAY['double precision', 'anyelement', 'double precision'],
    'user_dp_range(value, user_id, epsilon) is an aggregate');
SELECT is_aggregate('public', 'user_dp_range',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'user_dp_range(value, user_id, epsilon, lower, upper) is an aggregate');
SELECT is_aggregate('public', 'user_dp_range',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'user_dp_range(value, user_id, epsilon, lower, upper, tau) is an aggregate');

SELECT function_returns('public', 'user_dp_mean', ARRAY['double precision', 'anyelement', 'double precision'],
    'double precision', 'user_dp_mean/3 returns double precision');
SELECT function_returns('public', 'user_dp_mean',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'double precision', 'user_dp_mean/5 returns double precision');
SELECT function_returns('public', 'user_dp_mean',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'double precision', 'user_dp_mean/6 returns double precision');
SELECT function_returns('public', 'user_dp_range', ARRAY['double precision', 'anyelement', 'double precision'],
    'uldp.range', 'user_dp_range/3 returns uldp.range');
SELECT function_returns('public', 'user_dp_range',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'uldp.range', 'user_dp_range/5 returns uldp.range');
SELECT function_returns('public', 'user_dp_range',
    ARRAY['double precision', 'anyelement', 'double precision', 'double precision', 'double precision', 'double precision'],
    'uldp.range', 'user_dp_range/6 returns uldp.range');

SELECT is(
    (SELECT array_agg(p.oid::regprocedure::text ORDER BY p.oid::regprocedure::text)
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
       AND p.proname IN ('user_dp_mean', 'user_dp_range', 'user_dp_sgd')),
    ARRAY['user_dp_mean(boolean,anyelement,double precision)',
          'user_dp_mean(boolean,anyelement,double precision,double precision,double precision)',
          'user_dp_mean(boolean,anyelement,double precision,double precision,double precision,double precision)',
          'user_dp_mean(double precision,anyelement,double precision)',
          'user_dp_mean(double precision,anyelement,double precision,double precision,double precision)',
          'user_dp_mean(double precision,anyelement,double precision,double precision,double precision,double precision)',
          'user_dp_mean(double precision[],anyelement,double precision,double precision)',
          'user_dp_mean(double precision[],anyelement,double precision,double precision,double precision)',
          'user_dp_mean(double precision[],anyelement,double precision,double precision,double precision,double precision)',
          'user_dp_range(double precision,anyelement,double precision)',
          'user_dp_range(double precision,anyelement,double precision,double precision,double precision)',
          'user_dp_range(double precision,anyelement,double precision,double precision,double precision,double precision)',
          'user_dp_sgd(double precision[],boolean,anyelement,double precision,double precision)',
          'user_dp_sgd(double precision[],boolean,anyelement,double precision,double precision,jsonb)',
          'user_dp_sgd(double precision[],double precision,anyelement,double precision,double precision)',
          'user_dp_sgd(double precision[],double precision,anyelement,double precision,double precision,jsonb)'],
    'exactly these aggregates of user_dp_mean, user_dp_range and user_dp_sgd are created in the current schema');

SELECT is(
    (SELECT array_agg(DISTINCT format('%s/%s/%s/%s/%s/%s/%s', a.aggtranstype::regtype, a.aggtransfn,
                                      a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggfinalmodify,
                                      p.proparallel))
     FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname IN ('user_dp_mean', 'user_dp_range')
       AND p.proargtypes[0] = 'float8'::regtype),
    ARRAY['internal/uldp.user_transfn/uldp.user_combinefn/uldp.user_serialfn/uldp.user_deserialfn/r/s'],
    'all six scalar ones: internal state, combine/serialize/deserialize (partial aggregation), read-only final function, parallel safe');
SELECT is(
    (SELECT array_agg(DISTINCT a.aggfinalfn::text ORDER BY a.aggfinalfn::text)
     FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_mean'
       AND p.proargtypes[0] = 'float8'::regtype),
    ARRAY['uldp.mean_finalfn'], 'user_dp_mean on float8 finishes with uldp.mean_finalfn');
SELECT is(
    (SELECT array_agg(DISTINCT a.aggfinalfn::text ORDER BY a.aggfinalfn::text)
     FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_range'),
    ARRAY['uldp.range_finalfn'], 'user_dp_range finishes with uldp.range_finalfn');
SELECT is(
    (SELECT array_agg(p.oid::regprocedure::text || ' -> ' || p.prorettype::regtype::text ORDER BY p.proname)
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'user\_dp\_count%'),
    ARRAY['user_dp_count(anyelement,double precision) -> bigint',
          'user_dp_count_ci(anyelement,double precision) -> uldp.count_estimate'],
    'user_dp_count returns a bigint, user_dp_count_ci an estimate with its interval');
SELECT is(
    (SELECT array_agg(DISTINCT format('%s/%s/%s/%s/%s/%s/%s', a.aggtranstype::regtype, a.aggtransfn,
                                      a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggfinalmodify,
                                      p.proparallel))
     FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'user\_dp\_count%'),
    ARRAY['internal/uldp.user_count_transfn/uldp.user_combinefn/uldp.user_serialfn/uldp.user_deserialfn/r/s'],
    'both counts: the scalar per-user state, partial aggregation, read-only final function, parallel safe');

SELECT is(
    (SELECT array_agg(p.oid::regprocedure::text || ' -> ' || p.prorettype::regtype::text ORDER BY p.oid::regprocedure::text)
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_quantile'),
    ARRAY['user_dp_quantile(boolean,anyelement,double precision,double precision) -> double precision',
          'user_dp_quantile(boolean,anyelement,double precision,double precision,double precision,double precision) -> double precision',
          'user_dp_quantile(double precision,anyelement,double precision,double precision) -> double precision',
          'user_dp_quantile(double precision,anyelement,double precision,double precision,double precision,double precision) -> double precision'],
    'user_dp_quantile(value, user_id, epsilon, q [, lower, upper]) on float8 and boolean returns float8');
SELECT is(
    (SELECT array_agg(DISTINCT format('%s/%s/%s/%s/%s/%s/%s/%s', a.aggtranstype::regtype, a.aggtransfn,
                                      a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggfinalfn,
                                      a.aggfinalmodify, p.proparallel))
     FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
     WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_quantile'),
    ARRAY['internal/uldp.quantile_transfn/uldp.quantile_combinefn/uldp.quantile_serialfn/uldp.quantile_deserialfn/uldp.quantile_finalfn/r/s'],
    'user_dp_quantile: its own state (every row), partial aggregation, read-only final function, parallel safe');
SELECT is(
    (SELECT array_agg(p.oid::regprocedure::text || ' ' || p.prosrc || '/' || p.proparallel::text
                      ORDER BY p.oid::regprocedure::text) FROM pg_proc p
     WHERE p.pronamespace = 'uldp'::regnamespace AND p.proname LIKE 'quantile\_%'
       AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')),
    ARRAY['uldp.quantile_combinefn(internal,internal) uldp_quantile_combinefn/s',
          'uldp.quantile_deserialfn(bytea,internal) uldp_quantile_deserialfn/s',
          'uldp.quantile_finalfn(internal) uldp_quantile_finalfn/s',
          'uldp.quantile_serialfn(internal) uldp_quantile_serialfn/s',
          'uldp.quantile_transfn(internal,boolean,anyelement,double precision,double precision) uldp_quantile_bool_transfn/s',
          'uldp.quantile_transfn(internal,boolean,anyelement,double precision,double precision,double precision,double precision) uldp_quantile_bool_transfn/s',
          'uldp.quantile_transfn(internal,double precision,anyelement,double precision,double precision) uldp_quantile_transfn/s',
          'uldp.quantile_transfn(internal,double precision,anyelement,double precision,double precision,double precision,double precision) uldp_quantile_transfn/s'],
    'the support functions of user_dp_quantile are C and parallel safe; booleans have their own transition');

-- polymorphic resolution for common user id types: the type of a view column is resolved at
-- parse time, so this checks the signatures without releasing anything
CREATE TEMP VIEW api_resolved AS SELECT
    user_dp_mean(1.0, 'a'::text, 1.0) AS mean_text,
    user_dp_mean(1.0, 1::bigint, 1.0, 0, 1) AS mean_bigint,
    user_dp_mean(1.0, gen_random_uuid(), 1.0, 0, 1, 0.5) AS mean_uuid,
    user_dp_mean(1.0, 1::int, 1.0) AS mean_int,
    user_dp_range(1.0, 'a'::text, 1.0) AS range_text,
    user_dp_range(1.0, 1::bigint, 1.0, 0, 1) AS range_bigint,
    user_dp_range(1.0, gen_random_uuid(), 1.0, 0, 1, 0.5) AS range_uuid,
    user_dp_range(1.0, 1::numeric, 1.0) AS range_numeric,
    user_dp_quantile(1, 'a'::text, 1.0, 0.5) AS quantile_int_text,
    user_dp_quantile(1.5::numeric, 1::bigint, 1.0, 0.5, 0, NULL) AS quantile_numeric_bigint,
    user_dp_quantile(1.5::real, gen_random_uuid(), 1.0, 0.5, NULL, 1) AS quantile_real_uuid,
    user_dp_quantile(true, 1, 1.0, 0.5) AS quantile_bool_int;
SELECT is((SELECT array_agg(format('%s %s', attname, atttypid::regtype) ORDER BY attnum)
           FROM pg_attribute WHERE attrelid = 'api_resolved'::regclass AND attnum > 0),
    ARRAY['mean_text double precision', 'mean_bigint double precision', 'mean_uuid double precision',
          'mean_int double precision', 'range_text uldp.range', 'range_bigint uldp.range',
          'range_uuid uldp.range', 'range_numeric uldp.range', 'quantile_int_text double precision',
          'quantile_numeric_bigint double precision', 'quantile_real_uuid double precision',
          'quantile_bool_int double precision'],
    'text, bigint, uuid, int and numeric user ids resolve; mean -> float8, range -> uldp.range; '
    'quantile takes int, numeric, real and boolean values without casts -> float8');
SELECT ok(to_regprocedure('public.user_dp_mean(float8, text, float8)') IS NULL
          AND to_regprocedure('public.user_dp_mean(float8, anyelement)') IS NULL,
    'there is no non-polymorphic or epsilon-free overload');

-- ---------------------------------------------------------------------------
-- type uldp.range
SELECT has_composite('uldp', 'range', 'composite type uldp.range exists');
SELECT columns_are('uldp', 'range', ARRAY['lower', 'upper'], 'uldp.range has columns lower, upper');
SELECT col_type_is('uldp', 'range', 'lower', 'double precision', 'uldp.range.lower is float8');
SELECT col_type_is('uldp', 'range', 'upper', 'double precision', 'uldp.range.upper is float8');
SELECT is((ROW(1, 2)::uldp.range).upper, 2::float8, 'uldp.range can be constructed and read');

-- ---------------------------------------------------------------------------
-- schema uldp
SELECT has_schema('uldp', 'schema uldp exists');
SELECT tables_are('uldp', ARRAY['budget_data', 'ledger_data', 'ledger_head', 'ldp_rounds', 'ldp_reports'],
    'schema uldp has tables budget_data, ledger_data, ledger_head, ldp_rounds, ldp_reports');
SELECT views_are('uldp', ARRAY['budget', 'ledger', 'protected_tables'],
    'schema uldp has views budget, ledger, protected_tables');
SELECT functions_are('uldp', ARRAY['set_budget', 'reset_budget', '_charge', '_sample_discrete_laplace',
                                   'user_transfn', 'user_combinefn', 'user_serialfn', 'user_deserialfn',
                                   'mean_finalfn', 'range_finalfn', 'verify_ledger', 'protect_table',
                                   'unprotect_table', '_ledger_hash', '_ledger_append', '_ledger_refuse_change',
                                   '_safe_arith_int2', '_safe_arith_int4', '_safe_arith_int8',
                                   '_safe_arith_float4', '_safe_arith_float8', '_safe_arith_numeric',
                                   '_safe_cast_int2', '_safe_cast_int4', '_safe_cast_int8',
                                   '_safe_cast_float4', '_safe_cast_float8',
                                   '_sample_discrete_gaussian', 'vector_transfn', 'vector_mean_finalfn',
                                   'sgd_transfn', 'sgd_finalfn', 'predict', 'zcdp_rho', 'zcdp_delta',
                                   '_ledger_hash_v2', '_set_budget', '_reset_budget', '_drop_guard',
                                   'user_count_transfn', 'count_finalfn', 'count_ci_finalfn', 'cost',
                                   'user_bool_transfn', 'user_sum_transfn', 'user_bool_sum_transfn',
                                   'mean_ci_finalfn', 'sum_finalfn', 'sum_ci_finalfn',
                                   '_public_check',
                                   '_safe_time_add', '_safe_time_sub', '_safe_time_neg', '_safe_date_trunc',
                                   '_safe_date_part', '_safe_age', '_safe_cast_timestamp', '_safe_cast_timestamptz',
                                   '_like_pattern_check', '_safe_like', '_safe_ilike', '_safe_lower', '_safe_upper',

                                   'quantile_transfn', 'quantile_combinefn', 'quantile_serialfn',
                                   'quantile_deserialfn', 'quantile_finalfn',
                                   'ldp_round', 'ldp_round_info', 'ldp_report', 'ldp_submit', 'ldp_result',
                                   'ldp_sgd_step', 'ldp_ingest', 'shuffle_epsilon',
                                   'group_key', 'registry_transfn', 'registry_combinefn', 'registry_serialfn',
                                   'registry_deserialfn', 'registry_finalfn', 'group_registry',
                                   'group_member', 'key_memo_lookup', 'key_memo_value', 'key_memo_store',
                                   'selection_transfn',
                                   'selection_combinefn', 'selection_serialfn', 'selection_deserialfn',
                                   'selection_finalfn', 'group_selected',
                                   'set_public_groups',
                                   'user_merge_transfn', 'user_dp_mean', 'user_dp_sum', 'user_dp_count',
                                   'user_dp_mean_ci', 'user_dp_sum_ci', 'user_dp_count_ci', 'user_dp_range',
                                   'pair_users', 'pair_values'],
    'schema uldp has exactly the expected functions');
-- the releases over shards (0.9): the same final functions as the local releases, over
-- merged per-user states (bytea), keyed by a NULL of the user id type
SELECT is_aggregate('uldp', 'user_dp_mean',
    ARRAY['bytea', 'anyelement', 'double precision', 'double precision', 'double precision'],
    'uldp.user_dp_mean(state, user_id, epsilon, lower, upper) is an aggregate');
SELECT is((SELECT count(*) FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.pronamespace = 'uldp'::regnamespace AND p.proname IN ('user_dp_mean', 'user_dp_sum', 'user_dp_count')
             AND a.aggtransfn::regproc::text = 'uldp.user_merge_transfn'
             AND a.aggfinalfn::regproc::text IN ('uldp.mean_finalfn', 'uldp.sum_finalfn', 'uldp.count_finalfn')
             AND p.proargtypes[0] = 'bytea'::regtype AND p.proargtypes[1] = 'anyelement'::regtype), 6::bigint,
    'six aggregates merge states: user_dp_mean (3 arities), user_dp_sum (2), user_dp_count, with the local final functions');
-- the grouped rewrite's functions (0.8, 0.9): called in every role's rewritten grouped releases,
-- so executable by PUBLIC and volatile; registration writes the leader's registry (parallel
-- restricted), the calls that read its snapshot run in parallel workers too (parallel safe)
SELECT is_aggregate('uldp', 'group_registry', ARRAY['bigint', 'integer', 'bytea', 'anyelement', '"any"'],
    'uldp.group_registry(slot, k, key, user_id, VARIADIC keys) is an aggregate');
SELECT is((SELECT a.aggtransfn::regproc::text || ' ' || a.aggcombinefn::regproc::text || ' ' || a.aggfinalfn::regproc::text
                  || ' ' || a.aggfinalmodify::text || ' ' || p.proparallel::text || ' ' || p.prorettype::regtype::text
           FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.oid = 'uldp.group_registry(bigint, int, bytea, anyelement, "any")'::regprocedure),
    'uldp.registry_transfn uldp.registry_combinefn uldp.registry_finalfn w s bytea',
    'uldp.group_registry registers in parallel (partial registries merged in the leader) and returns the registry''s snapshot');
SELECT has_function('uldp', 'group_member', ARRAY['bigint', 'integer', 'bytea', 'anyelement', '"any"'],
    'uldp.group_member(slot, k, registry, user_id, VARIADIC keys) exists');
SELECT function_returns('uldp', 'group_member', ARRAY['bigint', 'integer', 'bytea', 'anyelement', '"any"'], 'anyelement',
    'uldp.group_member returns the user id (or NULL)');
SELECT is((SELECT array_agg(p.proname || '/' || p.provolatile::text || p.proparallel::text || '/' || p.provariadic::regtype::text
                            ORDER BY p.proname)
           FROM pg_proc p WHERE p.pronamespace = 'uldp'::regnamespace
             AND p.proname IN ('group_member', 'selection_transfn')),
    ARRAY['group_member/vs/"any"', 'selection_transfn/vs/"any"'],
    'group_member and partition selection''s transition are volatile, parallel safe (they read the snapshot their argument passes) and variadic "any"');
SELECT is((SELECT array_agg(p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' ||
                            p.prorettype::regtype::text || ' ' || p.provolatile::text || p.proparallel::text ||
                            p.proisstrict::text || ' ' ||
                            has_function_privilege('uldp_tap_api_nobody', p.oid, 'EXECUTE')::text
                            ORDER BY p.proname)
           FROM pg_proc p WHERE p.pronamespace = 'uldp'::regnamespace AND p.proname LIKE 'key\_memo\_%'),
    ARRAY['key_memo_lookup(slot bigint, keyno integer, input anyelement) boolean vsfalse true',
          'key_memo_store(slot bigint, keyno integer, value anyelement) anyelement vsfalse true',
          'key_memo_value(slot bigint, keyno integer, type anyelement) anyelement vsfalse true'],
    'the memo of grouping keys (0.9): three calls of one CASE in every role''s rewritten grouped releases, so executable by PUBLIC, volatile (they share a memo), parallel safe (each process has its own) and called on NULL (a NULL input or key)');
SELECT is_aggregate('uldp', 'group_selected',
    ARRAY['bigint', 'integer', 'bytea', 'anyelement', 'double precision', 'double precision', '"any"'],
    'uldp.group_selected(slot, k, registry, user_id, epsilon, delta, VARIADIC keys) is an aggregate');
SELECT is((SELECT a.aggtransfn::regproc::text || ' ' || a.aggfinalfn::regproc::text || ' ' || a.aggfinalmodify::text
                  || ' ' || a.aggcombinefn::regproc::text || ' ' || p.proparallel::text
           FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE a.aggfnoid = 'uldp.group_selected(bigint, int, bytea, anyelement, float8, float8, "any")'::regprocedure),
    'uldp.selection_transfn uldp.selection_finalfn r uldp.selection_combinefn s',
    'uldp.group_selected reads the users of each group from the registry, combines partial states in parallel plans and decides in a read-only final function');
SELECT throws_ok($$SELECT uldp.group_selected(1, 1, NULL, 1, 1, 1e-8, 'a')$$, NULL,
    'uldp.group_selected runs only inside the grouped releases that uldp rewrites',
    'uldp.group_selected called by hand, where it would read a registry, is refused before reading');
SELECT ok(has_function_privilege('uldp_tap_api_nobody', 'uldp.group_registry(bigint, int, bytea, anyelement, "any")', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.group_key(bigint)', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.group_member(bigint, int, bytea, anyelement, "any")', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.group_selected(bigint, int, bytea, anyelement, float8, float8, "any")', 'EXECUTE'),
    'PUBLIC can execute the functions of the grouped rewrite');
SELECT throws_ok($$SELECT uldp.group_member(123456789, 1, NULL, 1, 'a')$$, NULL,
    'uldp grouped release 123456789 was not prepared', 'uldp.group_member refuses a slot that no grouped release prepared');
SELECT throws_ok($$SELECT uldp.group_registry(123456789, 1, NULL, 1, 'a')$$, NULL,
    'uldp grouped release 123456789 was not prepared', 'uldp.group_registry refuses a slot that no grouped release prepared');
SELECT throws_ok($$SELECT uldp.group_registry(1, 1, NULL, 1, 'a'), user_dp_count(1, 1.0)$$, NULL,
    'uldp.group_registry runs only inside the grouped releases that uldp rewrites',
    'uldp.group_registry beside a release is refused before reading');
SELECT throws_ok($$SELECT uldp.group_key(123456789)$$, NULL,
    'uldp grouped release 123456789 was not prepared', 'uldp.group_key refuses a slot that no grouped release prepared');
SELECT is((SELECT p.provolatile::text || p.proparallel::text || ' ' || p.prorettype::regtype::text
           FROM pg_proc p WHERE p.oid = 'uldp.group_key(bigint)'::regprocedure),
    'vr bytea', 'uldp.group_key, the key the registration passes to parallel workers, is volatile and parallel restricted');
-- public keys are the table owner's declaration: revoked from PUBLIC, like protect_table
SELECT has_function('uldp', 'set_public_groups', ARRAY['regclass', 'name', 'anyarray'],
    'uldp.set_public_groups(tab, col, keys) exists');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.set_public_groups(regclass, name, anyarray)', 'EXECUTE'),
    'PUBLIC cannot declare public group keys');
SELECT columns_are('uldp', 'budget_data',
    ARRAY['role', 'epsilon_limit', 'delta_limit', 'epsilon_spent', 'delta_spent'], 'budget_data columns');
SELECT col_type_is('uldp', 'budget_data', 'role', 'name', 'budget_data.role is a role name');
SELECT col_type_is('uldp', 'budget_data', 'epsilon_spent', 'numeric', 'budget_data.epsilon_spent is numeric (exact sums)');
SELECT col_is_pk('uldp', 'budget_data', 'role', 'budget_data is keyed by role');
SELECT columns_are('uldp', 'ledger_data', ARRAY['id', 'at', 'role_oid', 'role', 'function', 'epsilon', 'delta', 'hash', 'statement', 'hash_version'], 'ledger_data columns');
SELECT col_type_is('uldp', 'ledger_data', 'role', 'name', 'ledger_data.role is a role name');
SELECT col_type_is('uldp', 'ledger_data', 'epsilon', 'numeric', 'ledger_data.epsilon is numeric');
SELECT columns_are('uldp', 'budget',
    ARRAY['role', 'epsilon_limit', 'delta_limit', 'epsilon_spent', 'delta_spent'], 'view budget columns');
SELECT col_type_is('uldp', 'budget', 'role', 'name', 'view budget shows role names');
SELECT columns_are('uldp', 'ledger', ARRAY['at', 'role', 'function', 'epsilon', 'delta', 'statement'], 'view ledger columns');
SELECT col_type_is('uldp', 'ledger', 'role', 'name', 'view ledger shows role names');
SELECT ok((SELECT 'security_barrier=true' = ANY (reloptions) FROM pg_class WHERE oid = 'uldp.budget'::regclass),
    'view uldp.budget is a security barrier');
SELECT ok((SELECT 'security_barrier=true' = ANY (reloptions) FROM pg_class WHERE oid = 'uldp.ledger'::regclass),
    'view uldp.ledger is a security barrier');
SELECT set_eq(
    $$SELECT unnest(extconfig)::regclass::text FROM pg_extension WHERE extname = 'uldp'$$,
    ARRAY['uldp.budget_data', 'uldp.ledger_data', 'uldp.ledger_data_id_seq', 'uldp.ledger_head',
          'uldp.ldp_rounds', 'uldp.ldp_rounds_id_seq', 'uldp.ldp_reports'],
    'budgets, ledger, its sequence and its head, local rounds, their sequence and reports are dumped by pg_dump (extension config tables)');
SELECT columns_are('uldp', 'ldp_rounds',
    ARRAY['id', 'kind', 'round', 'epsilon', 'delta', 'created_by', 'created_at', 'closed_at', 'result'],
    'ldp_rounds columns');
SELECT columns_are('uldp', 'ldp_reports', ARRAY['round_id', 'user_key', 'report'], 'ldp_reports columns');
SELECT col_is_pk('uldp', 'ldp_reports', ARRAY['round_id', 'user_key'], 'one report per user and round');

-- support and admin functions
SELECT has_function('uldp', 'set_budget', ARRAY['regrole', 'double precision', 'double precision'],
    'uldp.set_budget(regrole, float8, float8) exists');
SELECT function_returns('uldp', 'set_budget', ARRAY['regrole', 'double precision', 'double precision'], 'void',
    'uldp.set_budget returns void');
SELECT has_function('uldp', 'reset_budget', ARRAY['regrole'], 'uldp.reset_budget(regrole) exists');
SELECT function_returns('uldp', 'reset_budget', ARRAY['regrole'], 'void', 'uldp.reset_budget returns void');
SELECT has_function('uldp', '_charge', ARRAY['name', 'text', 'double precision', 'double precision', 'text'],
    'uldp._charge(name, text, float8, float8, text) exists');
SELECT function_returns('uldp', '_charge', ARRAY['name', 'text', 'double precision', 'double precision', 'text'], 'record',
    'uldp._charge returns a record (status, epsilon_remaining, delta_remaining)');
SELECT has_function('uldp', '_sample_discrete_laplace', ARRAY['bigint', 'double precision', 'integer'],
    'uldp._sample_discrete_laplace(bigint, float8, int) exists');
SELECT function_returns('uldp', '_sample_discrete_laplace', ARRAY['bigint', 'double precision', 'integer'],
    'bigint[]', 'uldp._sample_discrete_laplace returns bigint[]');
SELECT volatility_is('uldp', '_sample_discrete_laplace', ARRAY['bigint', 'double precision', 'integer'],
    'volatile', 'the sampler is volatile (never folded or cached)');
SELECT is_strict('uldp', '_sample_discrete_laplace', ARRAY['bigint', 'double precision', 'integer'],
    'the sampler is strict');
SELECT isnt_definer('uldp', 'set_budget', ARRAY['regrole', 'double precision', 'double precision'],
    'set_budget is not SECURITY DEFINER (C: it checks its caller, then runs uldp._set_budget as its owner)');
SELECT isnt_definer('uldp', 'reset_budget', ARRAY['regrole'], 'reset_budget is not SECURITY DEFINER (likewise)');
SELECT isnt_definer('uldp', '_charge', ARRAY['name', 'text', 'double precision', 'double precision', 'text'],
    '_charge is not SECURITY DEFINER (only the budget worker calls it, as superuser)');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'uldp._set_budget(name, float8, float8)'::regprocedure),
    ARRAY['search_path=pg_catalog, pg_temp'], '_set_budget pins its search_path');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'uldp._reset_budget(name)'::regprocedure),
    ARRAY['search_path=pg_catalog, pg_temp'], '_reset_budget pins its search_path');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'uldp._charge(name, text, float8, float8, text)'::regprocedure),
    ARRAY['search_path=pg_catalog, pg_temp'], '_charge pins its search_path');
SELECT is(
    (SELECT array_agg(p.proname || '/' || p.proparallel::text ORDER BY p.proname) FROM pg_proc p
     WHERE p.pronamespace = 'uldp'::regnamespace AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
       AND (p.proname IN ('mean_finalfn', 'mean_ci_finalfn', 'sum_finalfn', 'sum_ci_finalfn',
                          'range_finalfn', 'count_finalfn', 'count_ci_finalfn', 'selection_finalfn')
            OR p.proname LIKE 'user\_%')),
    ARRAY['count_ci_finalfn/s', 'count_finalfn/s', 'mean_ci_finalfn/s', 'mean_finalfn/s', 'range_finalfn/s',
          'selection_finalfn/s', 'sum_ci_finalfn/s', 'sum_finalfn/s',
          'user_bool_sum_transfn/s', 'user_bool_sum_transfn/s',
          'user_bool_transfn/s', 'user_bool_transfn/s', 'user_bool_transfn/s', 'user_combinefn/s',
          'user_count_transfn/s', 'user_deserialfn/s',
          'user_merge_transfn/s', 'user_merge_transfn/s', 'user_merge_transfn/s', 'user_serialfn/s',
          'user_sum_transfn/s', 'user_sum_transfn/s',
          'user_transfn/s', 'user_transfn/s', 'user_transfn/s'],
    'the aggregate support functions are C and parallel safe');

-- ---------------------------------------------------------------------------
-- privileges of PUBLIC (a role that has nothing else)
SELECT ok(has_function_privilege('uldp_tap_api_nobody', 'uldp.cost(text)', 'EXECUTE'),
    'PUBLIC may price a query with uldp.cost (it reads and charges nothing)');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.set_budget(regrole, float8, float8)', 'EXECUTE'),
    'PUBLIC cannot execute uldp.set_budget');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.reset_budget(regrole)', 'EXECUTE'),
    'PUBLIC cannot execute uldp.reset_budget');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp._charge(name, text, float8, float8, text)', 'EXECUTE'),
    'PUBLIC cannot execute uldp._charge');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp._set_budget(name, float8, float8)', 'EXECUTE')
          AND NOT has_function_privilege('uldp_tap_api_nobody', 'uldp._reset_budget(name)', 'EXECUTE'),
    'PUBLIC cannot execute uldp._set_budget and uldp._reset_budget');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp._drop_guard()', 'EXECUTE')
          AND NOT has_function_privilege('uldp_tap_api_nobody',
                'uldp._ledger_hash_v2(bytea, bigint, timestamptz, name, text, numeric, numeric, text)', 'EXECUTE'),
    'PUBLIC cannot execute uldp._drop_guard and uldp._ledger_hash_v2');
SELECT is((SELECT evtevent || ' ' || evtenabled::text || ' ' || evtfoid::regproc::text FROM pg_event_trigger
           WHERE evtname = 'uldp_drop_guard'), 'ddl_command_start O uldp._drop_guard',
    'the drop guard is an enabled ddl_command_start event trigger');
SELECT is((SELECT extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
           WHERE d.classid = 'pg_event_trigger'::regclass AND d.deptype = 'e'
             AND d.objid = (SELECT oid FROM pg_event_trigger WHERE evtname = 'uldp_drop_guard')), 'uldp',
    'the event trigger belongs to the extension (not dumped, cannot be dropped alone)');
SELECT is((SELECT boot_val || ' ' || context FROM pg_settings WHERE name = 'uldp.allow_drop'), 'off superuser',
    'uldp.allow_drop is off by default and superuser-only');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp._sample_discrete_laplace(bigint, float8, integer)', 'EXECUTE'),
    'PUBLIC cannot execute uldp._sample_discrete_laplace');
SELECT ok((SELECT bool_and(has_function_privilege('uldp_tap_api_nobody', p.oid, 'EXECUTE'))
           FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
             AND p.proname IN ('user_dp_mean', 'user_dp_range')),
    'PUBLIC can execute all six aggregates');
SELECT ok((SELECT bool_and(has_function_privilege('uldp_tap_api_nobody', p.oid, 'EXECUTE')) AND count(*) = 4
           FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname = 'user_dp_quantile'),
    'PUBLIC can execute the four user_dp_quantile aggregates');
SELECT ok(NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_round(text, jsonb)', 'EXECUTE')
          AND NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_submit(bigint, text, jsonb)', 'EXECUTE')
          AND NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_result(bigint)', 'EXECUTE')
          AND NOT has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_sgd_step(bigint)', 'EXECUTE'),
    'PUBLIC cannot open, submit to or close local rounds');
SELECT ok((SELECT bool_and(p.prosecdef AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp']) AND count(*) = 4
           FROM pg_proc p WHERE p.pronamespace = 'uldp'::regnamespace
             AND p.proname IN ('ldp_round', 'ldp_submit', 'ldp_result', 'ldp_sgd_step')),
    'the four functions that write local rounds are SECURITY DEFINER with a pinned search_path');
SELECT ok(has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_round_info(bigint)', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_report(bigint, float8[])', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.ldp_ingest()', 'EXECUTE')
          AND has_function_privilege('uldp_tap_api_nobody', 'uldp.shuffle_epsilon(float8, bigint, float8)', 'EXECUTE'),
    'PUBLIC may read rounds, make reports, use the ingestion trigger and compute shuffle_epsilon');
SELECT ok(has_table_privilege('uldp_tap_api_nobody', 'uldp.ldp_rounds', 'SELECT')
          AND NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.ldp_rounds', 'INSERT, UPDATE, DELETE, TRUNCATE'),
    'PUBLIC may read uldp.ldp_rounds (public parameters and private results) and not write it');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.ldp_reports', 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE'),
    'PUBLIC can neither read nor write uldp.ldp_reports');
SELECT ok(has_schema_privilege('uldp_tap_api_nobody', 'uldp', 'USAGE'), 'PUBLIC has USAGE on schema uldp');
SELECT ok(NOT has_schema_privilege('uldp_tap_api_nobody', 'uldp', 'CREATE'), 'PUBLIC cannot CREATE in schema uldp');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.budget_data', 'SELECT'), 'PUBLIC cannot read uldp.budget_data');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.ledger_data', 'SELECT'), 'PUBLIC cannot read uldp.ledger_data');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.budget_data', 'INSERT, UPDATE, DELETE, TRUNCATE'),
    'PUBLIC cannot write uldp.budget_data');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.ledger_data', 'INSERT, UPDATE, DELETE, TRUNCATE'),
    'PUBLIC cannot write uldp.ledger_data');
SELECT ok(NOT has_sequence_privilege('uldp_tap_api_nobody', 'uldp.ledger_data_id_seq', 'USAGE, SELECT, UPDATE'),
    'PUBLIC cannot use the ledger sequence');
SELECT ok(has_table_privilege('uldp_tap_api_nobody', 'uldp.budget', 'SELECT'), 'PUBLIC can read the view uldp.budget');
SELECT ok(has_table_privilege('uldp_tap_api_nobody', 'uldp.ledger', 'SELECT'), 'PUBLIC can read the view uldp.ledger');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.budget', 'INSERT, UPDATE, DELETE'),
    'PUBLIC cannot write through the view uldp.budget');
SELECT ok(NOT has_table_privilege('uldp_tap_api_nobody', 'uldp.ledger', 'INSERT, UPDATE, DELETE'),
    'PUBLIC cannot write through the view uldp.ledger');

-- the same, exercised
SET LOCAL ROLE uldp_tap_api_nobody;
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 1, 0)$$, '42501',
    'permission denied for function set_budget', 'PUBLIC: calling set_budget is refused');
SELECT throws_ok($$SELECT uldp.reset_budget('uldp_tap_api_nobody')$$, '42501',
    'permission denied for function reset_budget', 'PUBLIC: calling reset_budget is refused');
SELECT throws_ok($$SELECT uldp._charge('x', 'x', 1, 0, '')$$, '42501',
    'permission denied for function _charge', 'PUBLIC: calling _charge is refused');
SELECT throws_ok($$SELECT uldp._sample_discrete_laplace(1, 1, 1)$$, '42501',
    'permission denied for function _sample_discrete_laplace', 'PUBLIC: calling the sampler is refused');
SELECT throws_ok($$SELECT * FROM uldp.budget_data$$, '42501',
    'permission denied for table budget_data', 'PUBLIC: reading budget_data is refused');
SELECT throws_ok($$SELECT * FROM uldp.ledger_data$$, '42501',
    'permission denied for table ledger_data', 'PUBLIC: reading ledger_data is refused');
SELECT lives_ok($$SELECT * FROM uldp.budget$$, 'PUBLIC: reading the view uldp.budget works');
SELECT lives_ok($$SELECT * FROM uldp.ledger$$, 'PUBLIC: reading the view uldp.ledger works');
SELECT throws_ok($$SET uldp.test_seed = 1$$, '42501',
    'permission denied to set parameter "uldp.test_seed"', 'PUBLIC: cannot set uldp.test_seed');
SELECT throws_ok($$SET uldp.max_state_memory = '1GB'$$, '42501',
    'permission denied to set parameter "uldp.max_state_memory"', 'PUBLIC: cannot set uldp.max_state_memory');
SELECT throws_ok($$SET uldp.no_such_setting = 1$$, '42602',
    'invalid configuration parameter name "uldp.no_such_setting"', 'the uldp. GUC prefix is reserved');
RESET ROLE;

-- ---------------------------------------------------------------------------
-- GUCs
SELECT is((SELECT context FROM pg_settings WHERE name = 'uldp.test_seed'), 'superuser',
    'uldp.test_seed can only be set by superusers');
SELECT is((SELECT vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.test_seed'), 'integer 0 0 2147483647',
    'uldp.test_seed is an integer, default 0 (secure randomness)');
SELECT is(current_setting('uldp.test_seed'), '0', 'uldp.test_seed is 0 unless set');
SELECT is((SELECT context FROM pg_settings WHERE name = 'uldp.max_state_memory'), 'superuser',
    'uldp.max_state_memory can only be set by superusers');
SELECT is((SELECT vartype || ' ' || unit || ' ' || boot_val || ' ' || min_val FROM pg_settings
           WHERE name = 'uldp.max_state_memory'), 'integer kB 1048576 64',
    'uldp.max_state_memory is in kB, default 1 GB, at least 64 kB');
SELECT is((SELECT context || ' ' || vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.max_groups_per_user'), 'user integer 1 1 1000',
    'uldp.max_groups_per_user: any role may set it, default 1, from 1 to 1000');
SELECT is((SELECT context || ' ' || vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.group_selection_epsilon'), 'user real 0.25 1e-06 100',
    'uldp.group_selection_epsilon: any role may set it, default 0.25');
SELECT is((SELECT context || ' ' || vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.group_selection_delta'), 'user real 1e-08 1e-15 0.01',
    'uldp.group_selection_delta: any role may set it, default 1e-8, positive');
SELECT is((SELECT context || ' ' || vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.max_partition_rows'), 'user integer 3000000 1 53687089',
    'uldp.max_partition_rows: any role may set it (uldp.max_state_memory bounds what it allows), default 3M, at most what a 1 GB state holds');
SELECT is((SELECT context || ' ' || vartype || ' ' || boot_val || ' ' || min_val || ' ' || max_val FROM pg_settings
           WHERE name = 'uldp.max_parallel_workers_per_gather'), 'user integer -1 -1 1024',
    'uldp.max_parallel_workers_per_gather: any role may set it, default -1 (one fewer than the CPUs)');
SELECT throws_ok($$SET LOCAL uldp.max_parallel_workers_per_gather = -2$$, '22023', NULL,
    'uldp.max_parallel_workers_per_gather is at least -1');
SELECT is((SELECT array_agg(name::text ORDER BY name) FROM pg_settings WHERE name LIKE 'uldp.%'),
    ARRAY['uldp.allow_drop', 'uldp.group_selection_delta', 'uldp.group_selection_epsilon',
          'uldp.max_groups_per_user', 'uldp.max_parallel_workers_per_gather', 'uldp.max_partition_rows',
          'uldp.max_state_memory', 'uldp.test_seed'],
    'uldp defines exactly these eight GUCs');
SELECT lives_ok($$SET LOCAL uldp.test_seed = 42$$, 'a superuser can set uldp.test_seed');
SELECT is(current_setting('uldp.test_seed'), '42', 'and it takes the value');
SELECT throws_ok($$SET LOCAL uldp.test_seed = -1$$, '22023', NULL, 'uldp.test_seed cannot be negative');
SELECT throws_ok($$SET LOCAL uldp.max_state_memory = 10$$, '22023', NULL, 'uldp.max_state_memory has a floor of 64 kB');
SELECT throws_ok($$SET LOCAL uldp.max_groups_per_user = 0$$, '22023', NULL, 'uldp.max_groups_per_user is at least 1');
SELECT throws_ok($$SET LOCAL uldp.group_selection_delta = 0$$, '22023', NULL, 'uldp.group_selection_delta cannot be 0');
SET ROLE uldp_tap_api_nobody;
SELECT lives_ok($$SET LOCAL uldp.max_groups_per_user = 3$$, 'any role can set uldp.max_groups_per_user');
SELECT is(current_setting('uldp.max_groups_per_user'), '3', 'and it takes the value');
RESET ROLE;

-- ---------------------------------------------------------------------------
-- budget / admin function argument checks (no release involved)
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', -1, 0)$$, '22023',
    'epsilon limit must be a non-negative finite number', 'set_budget refuses a negative epsilon');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 'Infinity', 0)$$, '22023',
    'epsilon limit must be a non-negative finite number', 'set_budget refuses an infinite epsilon');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 'NaN', 0)$$, '22023',
    'epsilon limit must be a non-negative finite number', 'set_budget refuses a NaN epsilon');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', NULL, 0)$$, '22023',
    'epsilon limit must be a non-negative finite number', 'set_budget refuses a NULL epsilon');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 1, 1.5)$$, '22023',
    'delta limit must be between 0 and 1', 'set_budget refuses delta > 1');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 1, -0.1)$$, '22023',
    'delta limit must be between 0 and 1', 'set_budget refuses a negative delta');
SELECT throws_ok($$SELECT uldp.set_budget('uldp_tap_no_such_role', 1, 0)$$, '42704',
    'role "uldp_tap_no_such_role" does not exist', 'set_budget refuses an unknown role');
SELECT throws_ok($$SELECT uldp.reset_budget('uldp_tap_api_nobody')$$, '42704',
    'role "uldp_tap_api_nobody" has no privacy budget', 'reset_budget of a role without budget fails');
SELECT lives_ok($$SELECT uldp.set_budget('uldp_tap_api_nobody', 0, 0)$$, 'a zero budget is valid');
SELECT is((SELECT epsilon_limit || ' ' || delta_limit || ' ' || epsilon_spent || ' ' || delta_spent
           FROM uldp.budget WHERE role = 'uldp_tap_api_nobody'), '0 0 0 0',
    'set_budget created the budget row with nothing spent');

SELECT * FROM finish();
ROLLBACK;

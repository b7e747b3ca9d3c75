-- parallel plans: partial aggregates are combined (serialize, deserialize,
-- combine) before the final function; the release equals the serial one
CREATE TABLE big AS
	SELECT i % 5000 AS user_id, (i % 97)::float8 AS x, (i % 5000)::text AS user_name
	FROM generate_series(1, 200000) i;
ANALYZE big;

SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) AS serial_int FROM big \gset
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_name, 1.0, 0, 100) AS serial_text FROM big \gset
SET uldp.test_seed = 5;
SELECT user_dp_range(x, user_id, 1.0) AS serial_range FROM big \gset
SET uldp.test_seed = 5;
SELECT user_dp_sum(x, user_id, 1.0) AS serial_sum FROM big \gset
SET uldp.test_seed = 5;
SELECT user_dp_sum_ci(x, user_id, 1.0, 0, 5000) AS serial_sum_ci FROM big \gset
SET uldp.test_seed = 5;
SELECT user_dp_mean_ci(x > 50, user_id, 1.0) AS serial_flag FROM big \gset

SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
-- the plans below start 2 workers on any number of CPUs (the default caps
-- a Gather over releases over many users at one fewer than the CPUs online)
SET uldp.max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) = :serial_int AS parallel_int_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_name, 1.0, 0, 100) = :serial_text AS parallel_text_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_range(x, user_id, 1.0)::text = :'serial_range' AS parallel_range_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_sum(x, user_id, 1.0) = :serial_sum AS parallel_sum_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_sum_ci(x, user_id, 1.0, 0, 5000)::text = :'serial_sum_ci' AS parallel_sum_ci_equal FROM big;
-- a boolean mean has the bounds [0, 1] in the parallel plan too
SET uldp.test_seed = 5;
SELECT user_dp_mean_ci(x > 50, user_id, 1.0)::text = :'serial_flag' AS parallel_flag_equal FROM big;
-- uldp.max_parallel_workers_per_gather caps the workers of a Gather over
-- releases, not of one over PostgreSQL's own aggregates; the releases are
-- the same with any number of workers
SET uldp.max_parallel_workers_per_gather = 1;
EXPLAIN (COSTS OFF) SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) FROM big;
EXPLAIN (COSTS OFF) SELECT avg(x) FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) = :serial_int AS one_worker_int_equal FROM big;
SET uldp.max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) = :serial_int AS no_worker_int_equal FROM big;
-- by default (-1) only releases over many users (262144 by the planner's
-- estimate) are capped: big's 5000 users keep 2 workers on any machine
SET uldp.max_parallel_workers_per_gather = -1;
EXPLAIN (COSTS OFF) SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) FROM big;
SET uldp.max_parallel_workers_per_gather = 2;
-- with the leader aggregating too, its partial state is handed over to its
-- final aggregation, not serialized (src/handover.c)
SET parallel_leader_participation = on;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100, 2) = :serial_int AS leader_int_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_name, 1.0, 0, 100) = :serial_text AS leader_text_equal FROM big;
SET uldp.test_seed = 5;
SELECT user_dp_range(x, user_id, 1.0)::text = :'serial_range' AS leader_range_equal FROM big;
SET parallel_leader_participation = off;

-- an empty parallel scan
SELECT user_dp_mean(x, user_id, 1.0, 0, 100) IS NOT NULL AS empty_parallel FROM big WHERE x < 0;
RESET ALL;
SET uldp.max_parallel_workers_per_gather = 2;	-- on any number of CPUs

-- grouped releases: the registration runs once, in the leader, and the
-- aggregation in every process, which read the registry's snapshot; users
-- are in up to 7 groups and keep 2.  With the groups finalized in the same
-- order (sorted), the releases equal the serial ones
\set grouped 'SELECT string_agg(g || '' '' || c || '' '' || round(m::numeric, 6), '', '' ORDER BY g) FROM (SELECT (user_id + x::int) % 7 AS g, user_dp_count(user_id, 1.0) AS c, user_dp_mean(x, user_id, 1.0, 0, 100) AS m FROM big GROUP BY 1) s'
\set counted 'SELECT count(*) AS groups, sum(c) AS users FROM (SELECT (user_id + x::int) % 7 AS g, user_dp_count(user_id, 1.0) AS c FROM big GROUP BY 1) s'
SET enable_hashagg = off;
SET uldp.max_groups_per_user = 2;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 5;
SELECT (:grouped) AS serial_grouped \gset
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT (user_id + x::int) % 7 AS g, user_dp_count(user_id, 1.0) AS c,
                           user_dp_mean(x, user_id, 1.0, 0, 100) AS m FROM big GROUP BY 1;
SET uldp.test_seed = 5;
SELECT (:grouped) = :'serial_grouped' AS parallel_grouped_equal;
-- every user counted in exactly 2 groups: 2 x 5000 users, give or take the noise
SET uldp.test_seed = 5;
SELECT groups, abs(users - 10000) < 100 AS users_twice FROM (:counted) s;
-- k = 1: a user's one group is its group of smallest value, whether the
-- registration ran serially or merged the processes' partial registries
SET uldp.max_groups_per_user = 1;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 6;
SELECT (:grouped) AS serial_grouped_1 \gset
SET max_parallel_workers_per_gather = 2;
SET uldp.test_seed = 6;
SELECT (:grouped) = :'serial_grouped_1' AS parallel_grouped_1_equal;
SET uldp.test_seed = 6;
SELECT groups, abs(users - 5000) < 100 AS users_once FROM (:counted) s;
-- a key of one column, computed once per distinct value of it through each
-- process's own memo (src/keymemo.c), in both readings
CREATE FUNCTION pg_temp.plan_lines(query text) RETURNS SETOF text LANGUAGE plpgsql
	AS $$ BEGIN RETURN QUERY EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query; END $$;
\set memoized 'SELECT string_agg(g || '' '' || c, '', '' ORDER BY g) FROM (SELECT x::int % 7 AS g, user_dp_count(user_id, 1.0) AS c FROM big GROUP BY 1) s'
SET uldp.max_groups_per_user = 2;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 7;
SELECT (:memoized) AS serial_memoized \gset
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FILTER (WHERE plan LIKE '%Gather%') > 0 AS memoized_parallel,
	   count(*) FILTER (WHERE plan LIKE '%uldp.key_memo_lookup%') >= 2 AS memoized_both
FROM (SELECT * FROM pg_temp.plan_lines(:'memoized')) p(plan);
SET uldp.test_seed = 7;
SELECT (:memoized) = :'serial_memoized' AS parallel_memoized_equal;
-- partitionwise, in one process: a partial registry per partition, both
-- handed over within the process; the registry takes over the first and
-- merges the other, serialized, as the serial registration would have
-- registered their rows
CREATE TABLE big_parts (user_id int, x float8) PARTITION BY HASH (user_id);
CREATE TABLE big_parts_0 PARTITION OF big_parts FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE big_parts_1 PARTITION OF big_parts FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO big_parts SELECT user_id, x FROM big;
ANALYZE big_parts;
\set parted 'SELECT string_agg(g || '' '' || c || '' '' || round(m::numeric, 6), '', '' ORDER BY g) FROM (SELECT (user_id + x::int) % 7 AS g, user_dp_count(user_id, 1.0) AS c, user_dp_mean(x, user_id, 1.0, 0, 100) AS m FROM big_parts GROUP BY 1) s'
SET enable_hashagg = off;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 8;
SELECT (:parted) AS serial_parted \gset
SET enable_partitionwise_aggregate = on;
SELECT count(*) FILTER (WHERE plan LIKE '%Partial Aggregate%') >= 2 AS partial_registries
FROM (SELECT * FROM pg_temp.plan_lines(:'parted')) p(plan);
SET uldp.test_seed = 8;
SELECT (:parted) = :'serial_parted' AS partitionwise_equal;
DROP TABLE big_parts;
RESET enable_partitionwise_aggregate;
RESET enable_hashagg;
-- the leader's partial states of a hashed grouped aggregation are handed
-- over to its final aggregation (src/handover.c): with both aggregations
-- hashed, the groups draw their noise in the serial plan's order and the
-- releases are the serial ones (k = 2 and parallel costs as above)
CREATE FUNCTION pg_temp.run_lines(query text) RETURNS SETOF text LANGUAGE plpgsql
	AS $$ BEGIN RETURN QUERY EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query; END $$;
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 9;
SELECT (:grouped) AS serial_hashed \gset
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FILTER (WHERE plan LIKE '%Partial HashAggregate%') = 1 AS hashed_partial
FROM (SELECT * FROM pg_temp.plan_lines(:'grouped')) p(plan);
SET uldp.test_seed = 9;
SELECT (:grouped) = :'serial_hashed' AS hashed_equal;
-- a parallel GROUP BY that hashes its rows finishes hashed, over Gather,
-- when its outputs include a release (src/finalagg.c): its processes send
-- their partial states as they come, where PostgreSQL's own GROUP BY of the
-- same shape sorts them for Gather Merge; ORDER BY sorts the released
-- groups.  The groups draw their noise in the order of PostgreSQL's hash
-- table: at epsilon 50 the counts are exact and the means within 0.01 of
-- the serial ones whatever the order (noise of scale 0.0013)
CREATE TABLE big_groups AS SELECT user_id, x, (user_id + x::int) % 7 AS g FROM big;
ANALYZE big_groups;
\set final 'SELECT g, user_dp_count(user_id, 50) AS c, user_dp_mean(x, user_id, 50, 0, 100) AS m FROM big_groups GROUP BY g ORDER BY g'
SET enable_sort = on;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 10;
CREATE TEMP TABLE serial_final AS :final;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FILTER (WHERE plan ~ '^ *(->  )?Finalize HashAggregate') = 1 AS final_hashed,
	   count(*) FILTER (WHERE plan LIKE '%Gather Merge%') = 0 AS states_unsorted,
	   count(*) FILTER (WHERE plan ~ '^ *(->  )?Partial HashAggregate') = 1 AS partial_hashed
FROM (SELECT * FROM pg_temp.plan_lines(:'final')) p(plan);
EXPLAIN (COSTS OFF) SELECT g, count(*), avg(x) FROM big_groups GROUP BY g ORDER BY g;
SET uldp.test_seed = 10;
SELECT count(*) AS groups, bool_and(p.c = s.c AND abs(p.m - s.m) < 0.01) AS final_equal,
	   bool_and(p.g = p.n - 1) AS final_ordered
FROM (SELECT f.*, row_number() OVER () AS n FROM (:final) f) p JOIN serial_final s USING (g);
-- so does partitionwise aggregation, whose Sort sorts each partition's
-- partial states (seeded alike: the same kept groups, the same counts)
CREATE TABLE big_groups_parts (user_id int, x float8, g int) PARTITION BY HASH (user_id);
CREATE TABLE big_groups_parts_0 PARTITION OF big_groups_parts FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE big_groups_parts_1 PARTITION OF big_groups_parts FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO big_groups_parts SELECT * FROM big_groups;
ANALYZE big_groups_parts;
\set parts_final 'SELECT string_agg(g || '' '' || round(c), '', '' ORDER BY g) FROM (SELECT g, user_dp_count(user_id, 50) AS c FROM big_groups_parts GROUP BY g) s'
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 11;
SELECT (:parts_final) AS serial_parts_final \gset
SET max_parallel_workers_per_gather = 2;
SET enable_partitionwise_aggregate = on;
SELECT count(*) FILTER (WHERE plan ~ '^ *(->  )?Finalize HashAggregate') = 1 AS parts_final_hashed,
	   count(*) FILTER (WHERE plan LIKE '%Gather Merge%') = 0 AS parts_states_unsorted,
	   count(*) FILTER (WHERE plan ~ '^ *(->  )?Partial HashAggregate') = 2 AS parts_partial_hashed
FROM (SELECT * FROM pg_temp.plan_lines(:'parts_final')) p(plan);
SET uldp.test_seed = 11;
SELECT (:parts_final) = :'serial_parts_final' AS parts_final_equal;
RESET enable_partitionwise_aggregate;
SET enable_sort = off;
DROP TABLE big_groups, serial_final, big_groups_parts;
-- a user's groups are bits of its registry entry while they are numbered
-- below 64 and at most k, then a row of its own (src/groupbound.c): with
-- 100 groups, users in 1 to 6 of them and k = 3, every user counts in
-- min(n, 3) groups, 49998 in all, serially and when the processes' partial
-- registries, of bits and rows, are merged (counts at epsilon 100 are exact
-- to their rounding)
CREATE TABLE many_groups AS
	SELECT u AS user_id, (u * 7 + j * 13) % 100 AS g
	FROM generate_series(0, 19999) u, generate_series(0, 5) j WHERE j <= u % 6
	ORDER BY hashint4(u * 8 + j);
ANALYZE many_groups;
\set many 'SELECT count(*) AS groups, sum(round(c)) AS users FROM (SELECT g, user_dp_count(user_id, 100) AS c FROM many_groups GROUP BY g) s'
SET uldp.max_groups_per_user = 3;
SET max_parallel_workers_per_gather = 0;
:many;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FILTER (WHERE plan LIKE '%Partial Aggregate%') = 1 AS many_partial_registries
FROM (SELECT * FROM pg_temp.plan_lines(:'many')) p(plan);
:many;
-- JIT's optimization and inlining thresholds compare a grouped release's
-- cost without its registration's (src/groupjit.c): just below the whole
-- plan's cost, PostgreSQL would optimize; from 0, it still does (both true
-- where PostgreSQL was built without JIT)
CREATE FUNCTION pg_temp.jit_optimized(query text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	-- JIT is shown with costs only
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO plan;
	RETURN (plan -> 0 -> 'JIT' -> 'Options' ->> 'Optimization')::boolean AND
		(plan -> 0 -> 'JIT' -> 'Options' ->> 'Inlining')::boolean;
END $$;
CREATE FUNCTION pg_temp.plan_cost(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
\set jitted 'SELECT g, user_dp_count(user_id, 1.0) FROM many_groups GROUP BY g'
SET max_parallel_workers_per_gather = 0;
SET jit = on;
SET jit_above_cost = 0;
SELECT set_config('jit_optimize_above_cost', (pg_temp.plan_cost(:'jitted') - 1)::text, false) IS NOT NULL AS set,
	   set_config('jit_inline_above_cost', (pg_temp.plan_cost(:'jitted') - 1)::text, false) IS NOT NULL AS set;
SELECT NOT pg_jit_available() OR NOT pg_temp.jit_optimized(:'jitted') AS registration_not_counted;
SET jit_optimize_above_cost = 0;
SET jit_inline_above_cost = 0;
SELECT NOT pg_jit_available() OR pg_temp.jit_optimized(:'jitted') AS reading_counted;
RESET jit; RESET jit_above_cost; RESET jit_optimize_above_cost; RESET jit_inline_above_cost;
SET uldp.max_groups_per_user = 2;
DROP TABLE many_groups;
-- unless it spilled: it frees a batch's states when it loads the next, so
-- they are serialized.  The final aggregation spills too, and its groups
-- draw their noise in another order: counts at epsilon 50 are exact to their
-- rounding whatever the order (noise of scale 2 / 50)
\set counts 'SELECT string_agg(g || '' '' || round(c), '', '' ORDER BY g) FROM (SELECT (user_id + x::int) % 7 AS g, user_dp_count(user_id, 50) AS c FROM big GROUP BY 1) s'
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 9;
SELECT (:counts) AS serial_counts \gset
SET max_parallel_workers_per_gather = 2;
SET work_mem = '64kB';
WITH plan AS MATERIALIZED (SELECT * FROM pg_temp.run_lines(:'counts') WITH ORDINALITY p(line, n))
SELECT bool_or(b.line ~ '^ +Batches: [2-9]') AS leader_spilled
FROM plan a JOIN plan b ON b.n IN (a.n + 1, a.n + 2) WHERE a.line LIKE '%Partial HashAggregate%';
SET uldp.test_seed = 9;
SELECT (:counts) = :'serial_counts' AS spilled_counts_equal;
RESET ALL;
SET uldp.max_parallel_workers_per_gather = 2;	-- on any number of CPUs

-- the merges of shards' parts (doc/scale-out.md): per-user states,
-- partitions' sums and their users' sorted values, here one part per user
-- of big (values: one part per 100 users), release what the rows release,
-- serially and in parallel (combine, serialize)
CREATE EXTENSION uldp_shard;
CREATE TABLE shard_parts AS
	SELECT uldp_shard.user_rows(x, user_id, 0, 100, NULL) AS states,
		   uldp_shard.user_sums(x, user_id, 0, 100, true, 1, 0, NULL) AS sums,
		   uldp_shard.user_sums(0::float8, user_id, 0, 0, false, 1, 0, NULL) AS counts
	FROM big GROUP BY user_id;
CREATE TABLE value_parts AS
	SELECT uldp_shard.user_values(x, user_id, -1e300, 1e300, true, 1, 0, NULL) AS means,
		   uldp_shard.user_values(x, user_id, -1e300, 1e300, false, 1, 0, NULL) AS totals
	FROM big GROUP BY user_id / 100;
ANALYZE value_parts;
ANALYZE shard_parts;
SET max_parallel_workers_per_gather = 0;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0, 0, 100) AS serial_rows FROM big \gset
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(states, NULL::int, 1.0, 0, 100) = :serial_rows AS states_equal FROM shard_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(sums, NULL::int, 1.0, 0, 100) = :serial_rows AS sums_equal FROM shard_parts;
SET uldp.test_seed = 5;
SELECT user_dp_mean(x, user_id, 1.0) AS serial_unbounded FROM big \gset
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(means, NULL::int, 1.0) = :serial_unbounded AS values_equal FROM value_parts;
SET uldp.test_seed = 5;
SELECT user_dp_sum(x, user_id, 1.0) AS serial_sum FROM big \gset
SET uldp.test_seed = 5;
SELECT uldp.user_dp_sum(totals, NULL::int, 1.0) = :serial_sum AS totals_equal FROM value_parts;
SELECT uldp.user_dp_sum(means, NULL::int, 1.0) FROM value_parts;
SET uldp.test_seed = 5;
SELECT user_dp_count_ci(user_id, 1.0) AS serial_count FROM big \gset
SET uldp.test_seed = 5;
SELECT uldp.user_dp_count_ci(counts, NULL::int, 1.0)::text = :'serial_count' AS counts_equal FROM shard_parts;
-- parts that share users (each user's rows spread over 7 parts): a user is
-- one user, with the rows of all its parts
CREATE TABLE shared_parts AS
	SELECT uldp_shard.user_rows(x, user_id, 0, 100, NULL) AS states
	FROM big GROUP BY x::int % 7;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(states, NULL::int, 1.0, 0, 100) = :serial_rows AS shared_equal FROM shared_parts;
-- a state whose users are not in partition order is no state of uldp_shard
-- (its 24-byte header, then users of 20 bytes, here in reverse order)
SELECT uldp.user_dp_mean(substr(s, 1, 24) ||
		(SELECT string_agg(substr(s, 25 + 20 * i, 20), ''::bytea ORDER BY i DESC)
		 FROM generate_series(0, (length(s) - 24) / 20 - 1) i), NULL::int, 1.0, 0, 100)
FROM (SELECT uldp_shard.user_rows(x, user_id, 0, 100, NULL) AS s FROM big WHERE user_id < 50) a;
-- and sorted values out of order (a 40-byte header, then 8 bytes a value,
-- here the first two swapped) are no values of uldp_shard
SELECT uldp.user_dp_mean(substr(s, 1, 40) || substr(s, 49, 8) || substr(s, 41, 8) || substr(s, 57),
		NULL::int, 1.0)
FROM (SELECT uldp_shard.user_values(x, user_id, -1e300, 1e300, true, 1, 0, NULL) AS s
	  FROM big WHERE user_id < 50) a;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT uldp.user_dp_mean(sums, NULL::int, 1.0, 0, 100) FROM shard_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(states, NULL::int, 1.0, 0, 100) = :serial_rows AS parallel_states_equal FROM shard_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(sums, NULL::int, 1.0, 0, 100) = :serial_rows AS parallel_sums_equal FROM shard_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_count_ci(counts, NULL::int, 1.0)::text = :'serial_count' AS parallel_counts_equal FROM shard_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(states, NULL::int, 1.0, 0, 100) = :serial_rows AS parallel_shared_equal FROM shared_parts;
EXPLAIN (COSTS OFF) SELECT uldp.user_dp_mean(means, NULL::int, 1.0) FROM value_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_mean(means, NULL::int, 1.0) = :serial_unbounded AS parallel_values_equal FROM value_parts;
SET uldp.test_seed = 5;
SELECT uldp.user_dp_sum(totals, NULL::int, 1.0) = :serial_sum AS parallel_totals_equal FROM value_parts;
RESET ALL;

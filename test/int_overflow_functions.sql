-- pgTAP: int_overflow_scan() against min()/max(), and the bad-input errors
-- of the int_overflow probes.
BEGIN;
SELECT plan(20);

CREATE SCHEMA iof;
CREATE TABLE iof.t (a int2, b int, c bigint, d text, e int);
INSERT INTO iof.t SELECT (g % 30000)::int2, g * 1000, -g, 'x', NULL
  FROM generate_series(1, 2000) g;
INSERT INTO iof.t VALUES (-32000, 5, 7, 'y', NULL);

SELECT results_eq(
  $$SELECT column_name, min_value, max_value FROM storagelab.int_overflow_scan('iof.t')$$,
  $$SELECT 'a'::name, min(a)::numeric, max(a)::numeric FROM iof.t
    UNION ALL SELECT 'b', min(b), max(b) FROM iof.t
    UNION ALL SELECT 'c', min(c), max(c) FROM iof.t
    UNION ALL SELECT 'e', min(e), max(e) FROM iof.t$$,
  'int_overflow_scan(): exact min and max of every integer column, in column order');
SELECT results_eq(
  $$SELECT current_value, limit_value, values_left, severity FROM storagelab.int_overflow_scan('iof.t')
     WHERE column_name = 'a'$$,
  $$VALUES (-32000::numeric, -32768::numeric, 768::numeric, 'critical')$$,
  'int_overflow_scan(): measured toward the closer bound');
SELECT results_eq(
  $$SELECT current_value, severity FROM storagelab.int_overflow_scan('iof.t') WHERE column_name = 'e'$$,
  $$VALUES (NULL::numeric, NULL::text)$$,
  'int_overflow_scan(): an all-NULL column has no value and no severity');

CREATE TABLE iof.p (k int, v int) PARTITION BY LIST (k);
CREATE TABLE iof.p1 PARTITION OF iof.p FOR VALUES IN (1);
CREATE TABLE iof.p2 PARTITION OF iof.p FOR VALUES IN (2);
INSERT INTO iof.p VALUES (1, 10), (2, 2000000000);
SELECT is((SELECT max_value FROM storagelab.int_overflow_scan('iof.p') WHERE column_name = 'v'),
          2000000000::numeric, 'int_overflow_scan(): a partitioned table includes its partitions');
SELECT is_empty($$SELECT * FROM storagelab.int_overflow_scan(NULL)$$,
                'int_overflow_scan(NULL): no rows');

CREATE VIEW iof.v AS SELECT * FROM iof.t;
SELECT throws_ok($$SELECT * FROM storagelab.int_overflow_scan('iof.v')$$, '42809', NULL,
                 'int_overflow_scan(): a view is rejected');

CREATE INDEX iof_t_d ON iof.t (d);
CREATE INDEX iof_t_expr ON iof.t ((b + 1));
CREATE INDEX iof_t_hash ON iof.t USING hash (b);
CREATE INDEX iof_t_b ON iof.t (b);
CREATE SEQUENCE iof.s;
SELECT throws_ok($$SELECT storagelab_internal.int_overflow_index_bounds('iof.t')$$, '42809', NULL,
                 'index_bounds(): a table is not an index');
SELECT throws_ok($$SELECT storagelab_internal.int_overflow_index_bounds('iof.iof_t_d')$$, '42804', NULL,
                 'index_bounds(): a text key is rejected');
SELECT throws_ok($$SELECT storagelab_internal.int_overflow_index_bounds('iof.iof_t_expr')$$, '42809', NULL,
                 'index_bounds(): an expression index is rejected');
SELECT throws_ok($$SELECT storagelab_internal.int_overflow_index_bounds('iof.iof_t_hash')$$, '42809', NULL,
                 'index_bounds(): a hash index is rejected');
SELECT throws_ok($$SELECT storagelab_internal.int_overflow_sequence_state('iof.t')$$, '42809', NULL,
                 'sequence_state(): a table is not a sequence');
SELECT ok(storagelab_internal.int_overflow_sequence_state(NULL) IS NULL, 'sequence_state(NULL) is NULL');

CREATE UNLOGGED SEQUENCE iof.u;
SELECT FROM nextval('iof.u');
SELECT is((storagelab_internal.int_overflow_sequence_state('iof.u')).last_value, 1::bigint,
          'an unlogged sequence is read on a primary');

-- The page is read by the relfilenode pg_class has now, not a cached one:
-- ALTER SEQUENCE ... RESTART gives the sequence a new relfilenode.
CREATE SEQUENCE iof.r;
SELECT FROM setval('iof.r', 5000);
SELECT pg_relation_filenode('iof.r') AS r_filenode \gset
ALTER SEQUENCE iof.r RESTART WITH 777;
SELECT isnt(pg_relation_filenode('iof.r'), :r_filenode::oid,
            'ALTER SEQUENCE RESTART gave the sequence a new relfilenode');
SELECT is((SELECT s::text FROM storagelab_internal.int_overflow_sequence_state('iof.r') s),
          (SELECT format('(%s,%s,ok)', last_value, is_called) FROM iof.r),
          'sequence_state() reads the new relfilenode, as SELECT FROM the sequence does');

-- Our own temporary sequence lives in local buffers, not shared ones.
CREATE TEMP SEQUENCE iof_temp_seq;
SELECT FROM setval('iof_temp_seq', 4242);
SELECT is((SELECT s::text FROM storagelab_internal.int_overflow_sequence_state('iof_temp_seq') s),
          '(4242,t,ok)', 'sequence_state() reads the session''s own temporary sequence');

-- The index probe reads keys from the index: an index-only oracle.
SELECT is((SELECT b::text FROM storagelab_internal.int_overflow_index_bounds('iof.iof_t_b') b),
          (SELECT format('(%s,%s,ok)', min(b), max(b)) FROM iof.t),
          'index_bounds() equals min()/max()');

ANALYZE iof.t;
SELECT is((SELECT b::text FROM storagelab_internal.int_overflow_stats_bounds('iof.t', 2::int2) b),
          (SELECT format('(%s,%s,ok)', min(b), max(b)) FROM iof.t),
          'stats_bounds(): histogram ends of a column ANALYZE saw whole');
SELECT is((storagelab_internal.int_overflow_stats_bounds('iof.t', 4::int2)).status, 'no statistics',
          'stats_bounds(): a non-integer column has no integer statistics');
SELECT is((storagelab_internal.int_overflow_stats_bounds(4000000000::oid::regclass, 1::int2)).status,
          'unavailable', 'stats_bounds(): a dropped table is unavailable, not an error');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: storagelab.int_overflow against other sessions' locks and temporary
-- tables (a second session through dblink).  The view must neither wait nor
-- fail: locked objects are reported, other sessions' temp tables skipped.
BEGIN;
SELECT plan(9);

CREATE EXTENSION IF NOT EXISTS dblink;
SELECT FROM dblink_connect('io_other',
  format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
         split_part(current_setting('unix_socket_directories'), ',', 1)));

-- Committed objects, then an open transaction in the other session that
-- holds ACCESS EXCLUSIVE: a running migration and an uncommitted DROP.
SELECT FROM dblink_exec('io_other', $$
  CREATE SCHEMA ioc;
  CREATE TABLE ioc.migrating (id serial, v int);
  CREATE INDEX ON ioc.migrating (v);
  INSERT INTO ioc.migrating (v) VALUES (42);
  SELECT setval('ioc.migrating_id_seq', 2147000000);
  CREATE SEQUENCE ioc.dropping_seq;
  CREATE TABLE ioc.dropping (id int DEFAULT nextval('ioc.dropping_seq'))
$$);
SELECT FROM dblink_exec('io_other', 'CREATE TEMP TABLE io_other_temp (id serial PRIMARY KEY, v int)');
SELECT FROM dblink_exec('io_other', 'BEGIN');
SELECT FROM dblink_exec('io_other', 'ALTER TABLE ioc.migrating ALTER COLUMN v TYPE bigint');
SELECT FROM dblink_exec('io_other', 'DROP TABLE ioc.dropping; DROP SEQUENCE ioc.dropping_seq');

-- Were the view to wait for a lock, this makes the test fail instead of hang.
SET LOCAL lock_timeout = '5s';
SELECT lives_ok('CREATE TEMP TABLE io_seen AS SELECT * FROM storagelab.int_overflow',
                'the view neither waits for nor fails on objects under ACCESS EXCLUSIVE');
SELECT results_eq(
  $$SELECT current_value, severity, status FROM io_seen
     WHERE relation = 'ioc.migrating'::regclass AND column_name = 'v'$$,
  $$VALUES (NULL::numeric, NULL::text, 'locked')$$,
  'a table a migration holds ACCESS EXCLUSIVE on: reported as locked, its index not read');
SELECT results_eq(
  $$SELECT current_value, status FROM io_seen
     WHERE relation = 'ioc.migrating'::regclass AND column_name = 'id'$$,
  $$VALUES (2147000000::numeric, 'ok')$$,
  'its sequence, not locked, is still read');
SELECT results_eq(
  $$SELECT current_value, status FROM io_seen WHERE relation = 'ioc.dropping'::regclass$$,
  $$VALUES (NULL::numeric, 'locked')$$,
  'a sequence being dropped in an open transaction: reported as locked');
SELECT is((SELECT count(*)::int FROM io_seen o JOIN pg_class c ON c.oid = o.relation
            WHERE c.relpersistence = 't' AND c.relnamespace <> pg_my_temp_schema()),
          0, 'other sessions'' temporary tables are skipped');

SELECT is((SELECT s.status FROM pg_class c, storagelab_internal.int_overflow_sequence_state(c.oid) s
            WHERE c.relname = 'io_other_temp_id_seq'),
          'unavailable', 'sequence_state(): another session''s temporary sequence is unavailable');
SELECT is((SELECT b.status FROM pg_class c, storagelab_internal.int_overflow_index_bounds(c.oid) b
            WHERE c.relname = 'io_other_temp_pkey'),
          'unavailable', 'index_bounds(): another session''s temporary table is unavailable');

SELECT FROM dblink_exec('io_other', 'ROLLBACK');
SELECT FROM dblink_exec('io_other', 'DROP SCHEMA ioc CASCADE');
SELECT FROM dblink_disconnect('io_other');

-- Objects gone since the catalog was read.
SELECT is((storagelab_internal.int_overflow_sequence_state(4000000000::oid::regclass)).status,
          'unavailable', 'sequence_state(): a dropped sequence is unavailable, not an error');
SELECT is((storagelab_internal.int_overflow_index_bounds(4000000000::oid::regclass)).status,
          'unavailable', 'index_bounds(): a dropped index is unavailable, not an error');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: storagelab.bytea_storage against other sessions' locks (a second
-- session through dblink).  The view must not queue behind a migration:
-- a table whose lock is not available at once (on the table, its TOAST
-- table or TOAST index) is reported with status 'locked', its catalog facts
-- shown and nothing read.
BEGIN;
SELECT plan(10);

CREATE EXTENSION IF NOT EXISTS dblink;
SELECT FROM dblink_connect('toast_other',
  format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
         split_part(current_setting('unix_socket_directories'), ',', 1)));

SELECT FROM dblink_exec('toast_other', $$
  CREATE SCHEMA tsc;
  CREATE TABLE tsc.migrating (id int, v bytea);
  CREATE TABLE tsc.reindexed (id int, v bytea);
  CREATE TABLE tsc.free (id int, v bytea);
  INSERT INTO tsc.migrating SELECT g, decode(repeat('ab', 3000), 'hex') FROM generate_series(1, 20) g;
  INSERT INTO tsc.reindexed SELECT g, decode(repeat('ab', 3000), 'hex') FROM generate_series(1, 20) g;
  INSERT INTO tsc.free SELECT g, decode(repeat('ab', 3000), 'hex') FROM generate_series(1, 20) g;
  ALTER TABLE tsc.migrating ALTER COLUMN v SET STORAGE EXTERNAL
$$);
SELECT c.reltoastrelid::regclass::text AS reindexed_toast,
       (SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = c.reltoastrelid) AS reindexed_toast_index
  FROM pg_class c WHERE c.oid = 'tsc.reindexed'::regclass \gset
-- The other session: ACCESS EXCLUSIVE on one table (an ALTER TABLE in an
-- open transaction) and on another table's TOAST index only (REINDEX INDEX
-- takes SHARE on the TOAST table, which does not conflict).
SELECT FROM dblink_exec('toast_other', 'BEGIN');
SELECT FROM dblink_exec('toast_other', 'ALTER TABLE tsc.migrating ADD COLUMN note text');
SELECT FROM dblink_exec('toast_other', format('REINDEX INDEX %s', :'reindexed_toast_index'));

-- The view runs in a third session (autocommit, so that it holds no lock
-- on the tables afterwards and the final DROP does not wait for this one).
-- Were it to wait for a lock, its lock_timeout makes the test fail instead
-- of hang.
SELECT FROM dblink_connect('toast_viewer',
  format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
         split_part(current_setting('unix_socket_directories'), ',', 1)));
SELECT FROM dblink_exec('toast_viewer', 'SET lock_timeout = ''5s''');
SELECT lives_ok($$CREATE TEMP TABLE ts_seen AS
  SELECT * FROM dblink('toast_viewer',
    'SELECT c.relname::text, status, sample_rows, advice, table_bytes, toast_bytes, storage,
            toast_relation IS NOT NULL
       FROM storagelab.bytea_storage b JOIN pg_class c ON c.oid = b.relation
      WHERE c.relnamespace = ''tsc''::regnamespace')
    AS t(table_name text, status text, sample_rows bigint, advice text, table_bytes bigint,
         toast_bytes bigint, storage text, has_toast boolean)$$,
  'bytea_storage neither waits for nor fails on tables under ACCESS EXCLUSIVE');
SELECT results_eq(
  $$SELECT status, sample_rows, advice, table_bytes, toast_bytes FROM ts_seen WHERE table_name = 'migrating'$$,
  $$VALUES ('locked'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint)$$,
  'a table under ACCESS EXCLUSIVE: status locked, nothing profiled, no size read');
SELECT results_eq(
  $$SELECT storage, has_toast FROM ts_seen WHERE table_name = 'migrating'$$,
  $$VALUES ('external'::text, true)$$,
  'a locked table still shows its catalog facts (the committed SET STORAGE EXTERNAL)');
SELECT results_eq(
  $$SELECT status, sample_rows FROM ts_seen WHERE table_name = 'reindexed'$$,
  $$VALUES ('locked'::text, NULL::bigint)$$,
  'a table whose TOAST index is under ACCESS EXCLUSIVE: status locked');
SELECT results_eq(
  $$SELECT status, sample_rows, table_bytes > 0 FROM ts_seen WHERE table_name = 'free'$$,
  $$VALUES ('ok'::text, 20::bigint, true)$$,
  'a table nobody locks is profiled');

SELECT FROM dblink_exec('toast_viewer', 'BEGIN');
SELECT is((SELECT s FROM dblink('toast_viewer', 'SELECT storagelab_internal.toast_lock_nowait(''tsc.reindexed'')') AS t(s text)),
          'locked', 'toast_lock_nowait(): locked, without waiting');
SELECT is((SELECT n FROM dblink('toast_viewer', format(
             'SELECT count(*)::int FROM pg_locks WHERE locktype = ''relation'' AND pid = pg_backend_pid()
                 AND relation IN (%L::regclass, %L::regclass)', 'tsc.reindexed', :'reindexed_toast')) AS t(n int)),
          0, 'toast_lock_nowait(): a failed attempt keeps none of the locks it took');
SELECT FROM dblink_exec('toast_viewer', 'COMMIT');

SELECT FROM dblink_exec('toast_other', 'ROLLBACK');
SELECT is((SELECT s FROM dblink('toast_viewer', 'SELECT storagelab_internal.toast_lock_nowait(''tsc.migrating'')') AS t(s text)),
          'ok', 'toast_lock_nowait(): ok once the other transaction ended');
SELECT FROM dblink_exec('toast_other', 'DROP SCHEMA tsc CASCADE');
SELECT FROM dblink_disconnect('toast_viewer');
SELECT FROM dblink_disconnect('toast_other');

SELECT is(storagelab_internal.toast_lock_nowait(4000000000::oid::regclass), 'unavailable',
          'toast_lock_nowait(): a dropped table is unavailable, not an error');
CREATE TABLE public.ts_plain (v bytea);
CREATE ROLE storagelab_toast_nolock;
GRANT SELECT ON public.ts_plain TO storagelab_toast_nolock;
SET LOCAL ROLE storagelab_toast_nolock;
SELECT throws_ok($$SELECT count(*) FROM storagelab.bytea_storage$$, '42501',
                 'permission denied to read table pages',
                 'bytea_storage without pg_stat_scan_tables: refused before any lock is taken');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

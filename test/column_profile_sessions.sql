-- pgTAP: two storagelab.column_profile() calls on the same table at once
-- (two more sessions through dblink).  The second must wait for the first
-- to commit and then replace its profile, not fail on the primary key of
-- storagelab_internal.column_profiles (as it did before the advisory lock).
BEGIN;
SELECT plan(4);

CREATE EXTENSION IF NOT EXISTS dblink;
SELECT format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
              split_part(current_setting('unix_socket_directories'), ',', 1)) AS conninfo \gset
SELECT FROM dblink_connect('cp_first', :'conninfo');
SELECT FROM dblink_connect('cp_second', :'conninfo');

SELECT FROM dblink_exec('cp_first', $$
  CREATE SCHEMA cps;
  CREATE TABLE cps.t (id int8, n numeric, s text);
  INSERT INTO cps.t SELECT g, g, g::text FROM generate_series(1, 1000) g
$$);

-- The first profile, left uncommitted: its rows are inserted, not visible.
SELECT FROM dblink_exec('cp_first', 'BEGIN');
SELECT is((SELECT n FROM dblink('cp_first', 'SELECT count(*)::int FROM storagelab.column_profile(''cps.t'')') AS t(n int)),
          3, 'the first profile covers the three columns');
SELECT set_config('cp.second_pid', (SELECT p::text FROM dblink('cp_second', 'SELECT pg_backend_pid()') AS t(p int)), false) \g /dev/null
-- The second starts while the first is open and must wait for it.
SELECT dblink_send_query('cp_second', 'SELECT count(*)::int, min(row_count) FROM storagelab.column_profile(''cps.t'')') \g /dev/null
-- Once the second waits on a lock (in either version: on the advisory lock,
-- or formerly on the first's uncommitted key), the first commits.
DO $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = current_setting('cp.second_pid')::int
                         AND wait_event_type = 'Lock');
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
-- The first commits; then the second's result comes.
SELECT FROM dblink_exec('cp_first', 'COMMIT');
SELECT lives_ok($$CREATE TEMP TABLE cp_second_result AS
                    SELECT * FROM dblink_get_result('cp_second') AS t(n int, rows int8)$$,
                'a second profile of the same table, started while the first was open, does not fail');
SELECT results_eq($$SELECT n, rows FROM cp_second_result$$, $$VALUES (3, 1000::int8)$$,
                  'the second profile returns the same three columns over 1000 rows');
SELECT is((SELECT count(*) FROM storagelab_internal.column_profiles WHERE relid = 'cps.t'::regclass), 3::bigint,
          'one stored profile row per column afterwards');

SELECT FROM dblink_exec('cp_first', 'DROP SCHEMA cps CASCADE');
SELECT FROM dblink_exec('cp_first', 'DELETE FROM storagelab_internal.column_profiles WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = relid)');
SELECT FROM dblink_disconnect('cp_first');
SELECT FROM dblink_disconnect('cp_second');

SELECT * FROM finish();
ROLLBACK;

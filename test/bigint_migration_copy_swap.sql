-- pgTAP: bigint_migration_script(mode => 'copy_swap') on the pgbench tables
-- with foreign keys (pgbench_accounts.aid and pgbench_history.aid, which has
-- no key: its log holds whole rows), every phase executed with psql
-- -v phase=... -f in a scratch database: writes between the phases, a copy
-- interrupted after one batch and resumed, a swap that gives up on a lock
-- (the lock held by another session, found in pg_locks) and is run again, a
-- rollback after the swap, then a second migration through cleanup.
-- Without the rewrite engine (parts 60-64) the mode refuses, and only that is
-- tested.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_copy_swap;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_copy_swap TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_copy_swap
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set pgbench_scale 1
\i test/fixtures/pgbench.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
SELECT to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NOT NULL AS engine \gset
\if :engine
SELECT plan(25);
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.cols_before AS
  SELECT c.relname, array_agg(a.attname ORDER BY a.attnum) AS cols FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE c.relname LIKE 'pgbench\_%' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname;
-- lock_timeout above deadlock_timeout (1 s): an autovacuum of a table a
-- phase locks gives way only once the phase has waited that long
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '100'), ('bigint_migration.backfill_pause', '0'),
  ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');
SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap') \g (format=unaligned tuples_only=on) :tmp/cs.sql

\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :tmp/cs.sql > :tmp/start.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'start');
SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap') \g (format=unaligned tuples_only=on) :tmp/other.sql
\set rc `for p in start rollback; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/other.sql >> :tmp/other.out 2>&1 && exit; done; grep -c 'another copy-and-swap migration' :tmp/other.out`
SELECT is(:'rc'::text, '2', 'a second script for the same tables refuses start and rollback while the first is under way');
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT 1, 1, g, g, now() FROM generate_series(1, 100) g;
UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid % 1000 = 0;
DELETE FROM pgbench_history WHERE aid = 50;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -v backfill_batches=1 -d :DBNAME -f :tmp/cs.sql > :tmp/copy1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy, stopped after one batch');
SELECT ok((SELECT bool_or(NOT done) FROM storagelab.bigint_migration_progress), 'the progress table records an unfinished copy');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :tmp/cs.sql > :tmp/index0.out 2>&1; echo $?`
\set msg `grep -o 'the copy is not complete' :tmp/index0.out | head -1`
SELECT is(:'msg'::text, 'the copy is not complete', 'index refuses to run before the copy is complete');
UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid BETWEEN 90000 AND 90100;
UPDATE pgbench_accounts SET aid = 100001 WHERE aid = 99999;
INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (100002, 1, 5, '');
DELETE FROM pgbench_accounts WHERE aid = 99998;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -d :DBNAME -f :tmp/cs.sql > :tmp/copy2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy resumed and finished');
SELECT ok((SELECT bool_and(done) FROM storagelab.bigint_migration_progress), 'the progress table says done');
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid < 50;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :tmp/cs.sql > :tmp/index.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'index');
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 7, 7, now());
-- pgbench_history has no key: whole rows, duplicates deleted one at a time
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 9, 9, '2020-01-01'), (1, 1, 9, 9, '2020-01-01');
UPDATE pgbench_history SET delta = delta + 1 WHERE aid = 7;
DELETE FROM pgbench_history WHERE ctid = (SELECT ctid FROM pgbench_history WHERE aid = 9 AND mtime = '2020-01-01' LIMIT 1);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :tmp/cs.sql > :tmp/replay.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'replay');
UPDATE pgbench_accounts SET abalance = abalance + 2 WHERE aid BETWEEN 10 AND 20;
CREATE TABLE snap.before_swap AS SELECT * FROM snap.data() WHERE rel LIKE '%pgbench%';

-- an interrupted swap: another session holds a lock on pgbench_accounts
-- (until this one releases advisory lock 4242); the swap gives up
SELECT pg_advisory_lock(4242);
\set bg `psql -X -q -d :DBNAME -c 'BEGIN' -c 'LOCK TABLE pgbench_accounts IN ACCESS SHARE MODE' -c 'SELECT pg_advisory_lock(4242)' -c 'COMMIT' > /dev/null 2>&1 & echo $!`
DO $$
DECLARE deadline timestamptz := clock_timestamp() + interval '60 s';
BEGIN
  -- (its ACCESS SHARE: an autovacuum's lock is SHARE UPDATE EXCLUSIVE)
  WHILE NOT EXISTS (SELECT 1 FROM pg_locks WHERE relation = 'pgbench_accounts'::regclass AND mode = 'AccessShareLock'
                       AND granted AND pid <> pg_backend_pid()) LOOP
    IF clock_timestamp() > deadline THEN RAISE EXCEPTION 'the other session did not lock pgbench_accounts'; END IF;
    PERFORM pg_stat_clear_snapshot();
  END LOOP;
END $$;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/cs.sql > :tmp/swap0.out 2>&1; echo $?`
SELECT isnt(:'rc'::text, '0', 'swap gives up while another session holds a lock');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'),
          'integer', '... and changes nothing');
SELECT pg_advisory_unlock(4242);
\set rc `wait :bg 2>/dev/null; echo 0`
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/cs.sql > :tmp/swap.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'swap run again');
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid IN ('pgbench_accounts'::regclass, 'pgbench_history'::regclass)
            AND attname = 'aid' AND atttypid = 'int8'::regtype), 2::bigint, 'aid is bigint in both tables');
SELECT set_eq('SELECT * FROM snap.data() WHERE rel LIKE ''%pgbench%''', 'SELECT * FROM snap.before_swap',
              'row counts and checksums unchanged by the copy, the replay and the swap');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=validate -d :DBNAME -f :tmp/cs.sql > :tmp/validate.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'validate');
SELECT set_eq('SELECT * FROM snap.catalog() WHERE name LIKE ''public.%'' AND name !~ ''storagelab_''',
              'SELECT * FROM snap.catalog_before WHERE name LIKE ''public.%''',
              'keys, foreign keys, indexes as they were (and validated)');

-- rollback after the swap: changes made since are replayed into the old tables
UPDATE pgbench_accounts SET abalance = abalance + 3 WHERE aid BETWEEN 30 AND 40;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (2, 1, 8, 8, now());
DELETE FROM pgbench_history WHERE aid = 60;
CREATE TABLE snap.before_rollback AS SELECT * FROM snap.data() WHERE rel LIKE '%pgbench%';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/cs.sql > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'rollback after the swap');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'),
          'integer', 'aid is integer again');
SELECT set_eq('SELECT * FROM snap.data() WHERE rel LIKE ''%pgbench%''', 'SELECT * FROM snap.before_rollback',
              'the old tables have every change made after the swap');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'storagelab\_%')
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint, 'no table, trigger or progress row is left');

-- a second migration, through cleanup
SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap') \g (format=unaligned tuples_only=on) :tmp/cs2.sql
CREATE TABLE snap.before2 AS SELECT * FROM snap.data() WHERE rel LIKE '%pgbench%';
\set rc `for p in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/cs2.sql >> :tmp/run2.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'start, copy, index, replay, swap, validate, cleanup');
SELECT set_eq('SELECT * FROM snap.data() WHERE rel LIKE ''%pgbench%''', 'SELECT * FROM snap.before2', 'data unchanged');
SELECT set_eq('SELECT relname, array_agg(a.attname ORDER BY a.attnum) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                WHERE c.relname LIKE ''pgbench\_%'' AND c.relkind = ''r'' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname',
              'SELECT * FROM snap.cols_before', 'columns in their original order');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'storagelab\_%')
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint, 'cleanup leaves no table, trigger or progress row');
SELECT lives_ok($$INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (3000000002, 1, 0, '')$$, 'aid past 2^31');
\else
SELECT plan(1);
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap')$$, '0A000', NULL,
                 'without the rewrite engine mode copy_swap is refused');
\endif
SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_copy_swap;
\set rc `rm -rf :tmp`

-- pgTAP: every phase of an online (copy-and-swap) INT -> BIGINT migration
-- interrupted and resumed, with writes between: each phase (start, copy,
-- index, replay, swap, validate, cleanup, and a rollback after a swap) is
-- started while another session holds a lock it needs, cancelled
-- (pg_cancel_backend) once pg_stat_activity shows it waiting, checked to
-- have changed nothing it should not have, and run again after more writes
-- (test/fixtures/cancel_phase.sh).  A swap that gives up on lock_timeout
-- changes nothing and the next attempt works.  Afterwards the data is what
-- the writes made it, every object is as it was, the columns are in their
-- order, the serial sequence is bigint and continues; a rollback after the
-- swap, with writes before and after the swap, gives back the int columns
-- with every write.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_phases;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_online_phases TEMPLATE :"origdb" STRATEGY file_copy;
-- The phases take their locks through script_lock, which waits at most half
-- the server's deadlock_timeout per attempt (500 ms by default) and gives up
-- after a few: under load the poller of test/fixtures/cancel_phase.sh could
-- miss the wait and see the phase already failed ("notwaiting").  With 60 s,
-- each wait lasts until the cancel (or scripts.lock_timeout where it is set
-- shorter); what is tested, a phase cancelled while waiting, is the same.
ALTER DATABASE storagelab_tap_bigint_online_phases SET deadlock_timeout = '60s';
\c storagelab_tap_bigint_online_phases
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
-- fixed batches of 4 blocks; a lock is waited for (the cancel comes first), except in the swap given up below
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '4'), ('bigint_migration.copy_batch_time', '0'),
  ('bigint_migration.backfill_pause', '0'), ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '120s');
CREATE SCHEMA ph;
CREATE TABLE ph.parent (id serial PRIMARY KEY, v text NOT NULL, n int);
CREATE TABLE ph.child (id serial PRIMARY KEY, parent_id int NOT NULL REFERENCES ph.parent ON DELETE CASCADE, w int);
CREATE INDEX child_parent ON ph.child (parent_id);
CREATE VIEW ph.totals AS SELECT p.id, p.v, count(c.id) AS children FROM ph.parent p LEFT JOIN ph.child c ON c.parent_id = p.id GROUP BY p.id, p.v;
INSERT INTO ph.parent (v, n) SELECT 'v' || g, g FROM generate_series(1, 3000) g;
INSERT INTO ph.child (parent_id, w) SELECT 1 + g % 3000, g FROM generate_series(1, 6000) g;
SELECT 'ph.parent'::regclass::oid AS parent_oid, 'ph.child'::regclass::oid AS child_oid \gset
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.cols_before AS
  SELECT c.relname, array_agg(a.attname ORDER BY a.attnum) AS cols FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE c.relnamespace = 'ph'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname;
-- the writes made between the steps: new parents and children, updates of both, deletes (cascading)
CREATE PROCEDURE snap.writes(k int) LANGUAGE sql AS $$
  INSERT INTO ph.parent (v, n) SELECT 'w' || k || '.' || g, g FROM generate_series(1, 20) g;
  INSERT INTO ph.child (parent_id, w) SELECT p.id, k FROM ph.parent p WHERE p.v LIKE 'w' || k || '.%';
  UPDATE ph.parent SET n = n + k WHERE id % 97 = k % 97;
  UPDATE ph.child SET w = -k WHERE id % 89 = k % 89;
  DELETE FROM ph.parent WHERE id = 100 + k;
$$;

SELECT plan(36);

SELECT storagelab.bigint_migration_script('ph.parent', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/m.sql
\set script :tmp/m.sql
\set cancel 'test/fixtures/cancel_phase.sh ' :DBNAME ' ' :script

-- start: waits for SHARE ROW EXCLUSIVE on ph.child (its log trigger) behind a writer's lock
\set res `:cancel start 'LOCK TABLE ph.child IN ROW EXCLUSIVE MODE' :tmp/start.out`
SELECT is(:'res'::text, '3 cancelled', 'start, waiting for a lock, is cancelled');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::bigint, '... and leaves nothing behind (one transaction)');
CALL snap.writes(1);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :script > :tmp/start2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'start run again');
CALL snap.writes(2);

-- copy: one batch per table, then a copy waiting for the new parent table
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -v backfill_batches=1 -d :DBNAME -f :script > :tmp/copy1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy, stopped after one batch');
-- the table the copy stopped in, and its new table
SELECT relation AS copied, next_block AS next_before, 'ph.storagelab_new_' || relation::regclass::oid AS copied_new
  FROM storagelab.bigint_migration_progress WHERE NOT done AND started_at IS NOT NULL \gset
CALL snap.writes(3);
\set res `:cancel copy 'LOCK TABLE ':copied_new' IN SHARE MODE' :tmp/copy.out`
SELECT is(:'res'::text, '3 cancelled', 'copy, waiting for a lock on the new table, is cancelled');
SELECT ok((SELECT NOT done AND next_block = :next_before FROM storagelab.bigint_migration_progress WHERE relation = :'copied'),
          '... the progress row is where the committed batches left it');
CALL snap.writes(4);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -d :DBNAME -f :script > :tmp/copy2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy resumed and finished');
SELECT ok((SELECT bool_and(done) AND sum(rows_copied) >= 9000 FROM storagelab.bigint_migration_progress), '... every table copied');
CALL snap.writes(5);

-- index: the log applied once, then the indexes
\set res `:cancel index 'LOCK TABLE ph.storagelab_new_':parent_oid' IN SHARE MODE' :tmp/index.out`
SELECT is(:'res'::text, '3 cancelled', 'index, waiting for a lock on the new table, is cancelled');
SELECT is((SELECT count(*) FROM pg_index WHERE indrelid IN (SELECT oid FROM pg_class WHERE relname LIKE 'storagelab\_new\_%')), 0::bigint,
          '... the new tables have no index yet');
CALL snap.writes(6);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :script > :tmp/index2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'index run again');
CALL snap.writes(7);

-- replay
\set res `:cancel replay 'LOCK TABLE ph.storagelab_new_':parent_oid' IN SHARE MODE' :tmp/replay.out`
SELECT is(:'res'::text, '3 cancelled', 'replay, waiting for a lock on the new table, is cancelled');
CALL snap.writes(8);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :script > :tmp/replay2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'replay run again');
CALL snap.writes(9);

-- swap: cancelled while it waits for ACCESS EXCLUSIVE, then given up on lock_timeout, then run
\set res `:cancel swap 'LOCK TABLE ph.parent IN ACCESS SHARE MODE' :tmp/swap.out`
SELECT is(:'res'::text, '3 cancelled', 'swap, waiting for its locks, is cancelled');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'ph.parent'::regclass AND attname = 'id'), 'integer',
          '... and changes nothing');
CALL snap.writes(10);
-- the script with a short lock_timeout: the swap gives up (55P03) instead of waiting
\set rc `sed 's/^SET lock_timeout = .*/SET lock_timeout = 100;/' :script > :tmp/m_short.sql; echo 0`
\set res `NOCANCEL=1 test/fixtures/cancel_phase.sh :DBNAME :tmp/m_short.sql swap 'LOCK TABLE ph.child IN ACCESS SHARE MODE' :tmp/swap_give_up.out`
\set msg `grep -o 'gave up after 1 lock timeouts or deadlocks' :tmp/swap_give_up.out | head -1`
SELECT is(:'res' || ' ' || :'msg', '3 uncancelled gave up after 1 lock timeouts or deadlocks', 'a swap under a short lock_timeout gives up (55P03)');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'ph.parent'::regclass AND attname = 'id'), 'integer',
          '... and changes nothing');
CALL snap.writes(11);
CREATE TABLE snap.before_swap AS SELECT * FROM snap.data('^ph\.') WHERE rel !~ 'storagelab_';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :script > :tmp/swap2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'swap run again');
SELECT set_eq($$SELECT * FROM snap.data('^ph\.') WHERE rel !~ 'storagelab_'$$, 'SELECT * FROM snap.before_swap',
              'after the swap the tables and the view have every write made before it');
SELECT is((SELECT string_agg(format('%s.%s %s', attrelid::regclass, attname, format_type(atttypid, NULL)), ', ' ORDER BY 1) FROM pg_attribute
            WHERE (attrelid, attname) IN (('ph.parent'::regclass, 'id'), ('ph.child'::regclass, 'parent_id'))),
          'ph.child.parent_id bigint, ph.parent.id bigint', 'the key and the foreign-key column are bigint');
CALL snap.writes(12);

-- validate
\set res `:cancel validate 'LOCK TABLE ph.child IN SHARE UPDATE EXCLUSIVE MODE' :tmp/validate.out`
SELECT is(:'res'::text, '3 cancelled', 'validate, waiting for a lock, is cancelled');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=validate -d :DBNAME -f :script > :tmp/validate2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'validate run again');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = 'ph'::regnamespace AND NOT convalidated), 0::bigint, '... every constraint is valid');
CALL snap.writes(13);

-- cleanup
\set res `:cancel cleanup 'LOCK TABLE ph.storagelab_old_':parent_oid' IN ACCESS SHARE MODE' :tmp/cleanup.out`
SELECT is(:'res'::text, '3 cancelled', 'cleanup, waiting for a lock on an old table, is cancelled');
SELECT ok(to_regclass('ph.storagelab_old_' || :parent_oid) IS NOT NULL, '... the old tables are still there');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=cleanup -d :DBNAME -f :script > :tmp/cleanup2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'cleanup run again');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'keys, foreign keys, indexes, the view, defaults as they were');
SELECT set_eq($$SELECT c.relname, array_agg(a.attname ORDER BY a.attnum) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                WHERE c.relnamespace = 'ph'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname$$,
              'SELECT * FROM snap.cols_before', 'columns in their original order');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM storagelab.bigint_migration_progress),
          0::bigint, 'no table of the migration and no progress row is left');
SELECT setval('ph.parent_id_seq', 2147483647 + 10::bigint) \g /dev/null
SELECT lives_ok($$WITH p AS (INSERT INTO ph.parent (v) VALUES ('big') RETURNING id) INSERT INTO ph.child (parent_id) SELECT id FROM p$$,
                'the serial sequence is bigint: a key past 2^31 through the parent and the child');

-- rollback after the swap, interrupted, with writes before and after the swap
DELETE FROM ph.parent WHERE v = 'big';
UPDATE storagelab.settings SET value = '120s' WHERE name = 'scripts.lock_timeout';
CREATE TABLE public.rb (id int PRIMARY KEY, v text);
CREATE TABLE public.rb_child (rb_id int REFERENCES public.rb, w int);
INSERT INTO public.rb SELECT g, 'r' || g FROM generate_series(1, 2000) g;
INSERT INTO public.rb_child SELECT 1 + g % 2000, g FROM generate_series(1, 4000) g;
CREATE TABLE snap.rb_catalog AS SELECT * FROM snap.catalog() WHERE name LIKE '%rb%';
SELECT storagelab.bigint_migration_script('public.rb', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/rb.sql
\set rc `for p in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/rb.sql >> :tmp/rb.out 2>&1 || { echo $p; exit; }; done; echo 0`
UPDATE public.rb SET v = 'before swap' WHERE id % 10 = 0;
\set rc2 `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/rb.sql >> :tmp/rb.out 2>&1; echo $?`
SELECT is(:'rc' || :'rc2', '00', 'a second migration: start, copy, index, replay, swap');
UPDATE public.rb SET v = 'after swap' WHERE id % 7 = 0;
INSERT INTO public.rb VALUES (5000, 'new');
INSERT INTO public.rb_child VALUES (5000, 1);
DELETE FROM public.rb_child WHERE rb_id = 3;
DELETE FROM public.rb WHERE id = 3;
\set res `test/fixtures/cancel_phase.sh :DBNAME :tmp/rb.sql rollback 'LOCK TABLE public.rb_child IN ACCESS SHARE MODE' :tmp/rb_cancel.out`
SELECT is(:'res'::text, '3 cancelled', 'rollback after the swap, waiting for its locks, is cancelled');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.rb'::regclass AND attname = 'id'), 'bigint',
          '... and changes nothing');
UPDATE public.rb SET v = 'after cancel' WHERE id % 11 = 0;
CREATE TABLE snap.rb_data AS SELECT * FROM snap.data('^public\.rb');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/rb.sql > :tmp/rb_rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'rollback run again');
SELECT set_eq($$SELECT * FROM snap.data('^public\.rb')$$, 'SELECT * FROM snap.rb_data',
              'the old tables have every write made before and after the swap');
SELECT set_eq($$SELECT * FROM snap.catalog() WHERE name LIKE '%rb%'$$, 'SELECT * FROM snap.rb_catalog',
              '... and their keys, foreign keys and indexes as they were (int columns again)');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_phases;
\set rc `rm -rf :tmp`

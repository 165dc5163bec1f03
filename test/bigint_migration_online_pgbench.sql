-- pgTAP: bigint_migration_group_script(mode => 'online', copy and swap) on
-- the pgbench tables with foreign keys (the seed article's twelve columns),
-- every phase executed with psql -v ON_ERROR_STOP=1 -v phase=... -f in a
-- scratch database, with writes between the phases and a copy interrupted
-- after one batch and resumed; afterwards the data, every key, index and
-- foreign key, the column order and the heap size (no dead copy left
-- behind) are as before.  Then a rollback of another online migration
-- before its swap leaves the tables as they were.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_pgbench;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_online_pgbench TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_online_pgbench
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set pgbench_scale 1
\i test/fixtures/pgbench.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.cols_before AS
  SELECT c.relname, array_agg(a.attname ORDER BY a.attnum) AS cols FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE c.relname LIKE 'pgbench\_%' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname;
CREATE TABLE snap.size_before AS SELECT c.relname, pg_relation_size(c.oid) AS heap FROM pg_class c WHERE c.relname LIKE 'pgbench\_%' AND c.relkind = 'r';
CREATE TABLE snap.twelve (rel text, col name);   -- names: the swap gives them to the new tables
INSERT INTO snap.twelve VALUES
  ('pgbench_history', 'tid'), ('pgbench_history', 'bid'), ('pgbench_history', 'aid'), ('pgbench_history', 'delta'),
  ('pgbench_tellers', 'tid'), ('pgbench_tellers', 'bid'), ('pgbench_tellers', 'tbalance'),
  ('pgbench_accounts', 'aid'), ('pgbench_accounts', 'bid'), ('pgbench_accounts', 'abalance'),
  ('pgbench_branches', 'bid'), ('pgbench_branches', 'bbalance');
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '200'), ('bigint_migration.backfill_pause', '0');

SELECT plan(26);

SELECT storagelab.bigint_migration_group_script(array_agg(rel::regclass), array_agg(col), 'online') FROM snap.twelve
\g (format=unaligned tuples_only=on) :tmp/online.sql
\set phases `grep -c '^.if :ph_' :tmp/online.sql`
SELECT is(:'phases'::text, '9', 'the script has its eight phases and the phase check');

\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :tmp/online.sql > :tmp/start.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'start');
-- writes after the log triggers: inserts, updates, deletes
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT 1, 1, g, g, now() FROM generate_series(1, 100) g;
UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid % 1000 = 0;
DELETE FROM pgbench_history WHERE aid = 50;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -v backfill_batches=1 -d :DBNAME -f :tmp/online.sql > :tmp/copy1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy, stopped after one batch');
SELECT ok((SELECT bool_or(NOT done) AND bool_or(next_block > 0) FROM storagelab.bigint_migration_progress),
          'the progress table records an unfinished copy');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :tmp/online.sql > :tmp/index0.out 2>&1; echo $?`
\set msg `grep -o 'the copy is not complete' :tmp/index0.out | head -1`
SELECT is(:'msg'::text, 'the copy is not complete', 'index refuses to run before the copy is complete');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/online.sql > :tmp/swap0.out 2>&1; echo $?`
\set msg `grep -o 'run phases copy, index and replay first' :tmp/swap0.out | head -1`
SELECT is(:'msg'::text, 'run phases copy, index and replay first', '... and so does swap');
-- more writes while the copy is half done
UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid BETWEEN 90000 AND 90100;
INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (100001, 1, 5, '');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -d :DBNAME -f :tmp/online.sql > :tmp/copy2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'copy resumed and finished');
SELECT ok((SELECT bool_and(done) FROM storagelab.bigint_migration_progress), 'the progress table says done');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :tmp/online.sql > :tmp/index.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'index');
UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid < 5;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :tmp/online.sql > :tmp/replay.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'replay');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :tmp/online.sql > :tmp/replay2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'replay again (phases can be re-run)');
UPDATE pgbench_branches SET bbalance = bbalance + 1;
CREATE TABLE snap.before AS SELECT * FROM snap.data() WHERE rel NOT LIKE 'snap.%' AND rel !~ 'storagelab_';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/online.sql > :tmp/swap.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'swap');
\set rc `for p in validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online.sql >> :tmp/end.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'validate and cleanup');

SELECT is((SELECT count(*) FROM snap.twelve t JOIN pg_attribute a ON a.attrelid = t.rel::regclass AND a.attname = t.col AND NOT a.attisdropped
            WHERE a.atttypid = 'int8'::regtype), 12::bigint, 'all twelve columns are bigint');
SELECT set_eq('SELECT * FROM snap.data() WHERE rel NOT LIKE ''snap.%''', 'SELECT * FROM snap.before',
              'row counts and checksums unchanged by the copy, the replay, the swap and cleanup');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'keys, foreign keys (names, actions, validated), indexes, storage options as they were');
SELECT set_eq('SELECT relname, array_agg(a.attname ORDER BY a.attnum) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                WHERE c.relname LIKE ''pgbench\_%'' AND c.relkind = ''r'' AND a.attnum > 0 AND NOT a.attisdropped GROUP BY c.relname',
              'SELECT * FROM snap.cols_before', 'columns in their original order');
-- pgbench_accounts: 100,000 rows of four columns, aid 4 bytes wider: the
-- rows are as many as before, so the heap is no larger than 1.1 times what
-- it was (an UPDATE of every row would leave it twice that)
SELECT ok((SELECT pg_relation_size('pgbench_accounts') <= 1.1 * heap FROM snap.size_before WHERE relname = 'pgbench_accounts'),
          'the table is compact: its heap is at most 1.1 times its size before');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'storagelab\_%')
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint, 'cleanup leaves no table, trigger or progress row');
SELECT lives_ok($$
  WITH b AS (INSERT INTO pgbench_branches (bid, bbalance) VALUES (3000000000, 3000000000) RETURNING bid),
       t AS (INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT 3000000001, bid, 3000000000 FROM b RETURNING tid, bid),
       a AS (INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT 3000000002, bid, 3000000000, '' FROM b RETURNING aid)
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT t.tid, t.bid, a.aid, 3000000000, now() FROM t, a$$,
  'inserts past 2^31 through branches -> tellers -> accounts -> history');
SELECT throws_ok($$INSERT INTO pgbench_history (tid, bid, aid) VALUES (1, 1, 3000000099)$$, '23503', NULL,
                 'the foreign keys still reject a missing parent');

-- Rollback before swap: start, copy, index, replay, then rollback leaves the
-- tables as they were.
CREATE TABLE public.rb_parent (id serial PRIMARY KEY, v text);
CREATE TABLE public.rb_child (parent_id int NOT NULL REFERENCES public.rb_parent ON DELETE CASCADE, w int);
CREATE INDEX rb_child_parent ON public.rb_child (parent_id) WHERE w > 0;
INSERT INTO public.rb_parent (v) SELECT 'v' || g FROM generate_series(1, 1000) g;
INSERT INTO public.rb_child SELECT g, g FROM generate_series(1, 1000) g;
CREATE TABLE snap.rb_catalog AS SELECT * FROM snap.catalog() WHERE name LIKE '%rb\_%';
SELECT storagelab.bigint_migration_script('rb_parent', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/rb.sql
\set rc `for p in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/rb.sql >> :tmp/rb.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'start, copy, index, replay');
DELETE FROM public.rb_child WHERE parent_id = 7;
UPDATE public.rb_parent SET v = 'changed' WHERE id = 8;
CREATE TABLE snap.rb_data AS SELECT * FROM snap.data('rb_') WHERE rel !~ 'storagelab_';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/rb.sql >> :tmp/rb.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'rollback before the swap, after writes');
SELECT set_eq($$SELECT * FROM snap.catalog() WHERE name LIKE '%rb\_%'$$, 'SELECT * FROM snap.rb_catalog',
              'after the rollback the tables, indexes and constraints are as they were');
SELECT set_eq($$SELECT * FROM snap.data('rb_')$$, 'SELECT * FROM snap.rb_data', '... and so is the data');
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid IN ('rb_parent'::regclass, 'rb_child'::regclass) AND attname LIKE 'storagelab\_%' AND NOT attisdropped)
          + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%storagelab%')
          + (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%')
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint,
          'no new table, log, trigger or progress row is left');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_pgbench;
\set rc `rm -rf :tmp`

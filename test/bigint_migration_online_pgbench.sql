-- pgTAP: bigint_migration_group_script(mode => 'online') on the pgbench
-- tables with foreign keys (the seed article's twelve columns), every phase
-- executed with psql -v ON_ERROR_STOP=1 -v phase=... -f in a scratch
-- database, with writes between the phases and a backfill interrupted after
-- one batch and resumed; then a rollback of another online migration before
-- its swap (rollback_prepare, rollback_expand).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_pgbench;
CREATE DATABASE storagelab_tap_bigint_online_pgbench;
\c storagelab_tap_bigint_online_pgbench
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
\set pgbench_scale 1
\i test/fixtures/pgbench.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.twelve (rel regclass, col name);
INSERT INTO snap.twelve VALUES
  ('pgbench_history', 'tid'), ('pgbench_history', 'bid'), ('pgbench_history', 'aid'), ('pgbench_history', 'delta'),
  ('pgbench_tellers', 'tid'), ('pgbench_tellers', 'bid'), ('pgbench_tellers', 'tbalance'),
  ('pgbench_accounts', 'aid'), ('pgbench_accounts', 'bid'), ('pgbench_accounts', 'abalance'),
  ('pgbench_branches', 'bid'), ('pgbench_branches', 'bbalance');
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '200'), ('bigint_migration.backfill_pause', '0');

SELECT plan(20);

SELECT storagelab.bigint_migration_group_script(array_agg(rel), array_agg(col), 'online') FROM snap.twelve
\g (format=unaligned tuples_only=on) :tmp/online.sql
\set phases `grep -c '^.if :ph_' :tmp/online.sql`
SELECT is(:'phases'::text, '8', 'the script has its five phases, two rollbacks and the phase check');

\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=expand -d :DBNAME -f :tmp/online.sql > :tmp/expand.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'expand');
-- writes after the sync trigger: inserts, updates of keys, deletes
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT 1, 1, g, g, now() FROM generate_series(1, 100) g;
UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid % 1000 = 0;
DELETE FROM pgbench_history WHERE aid = 50;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=backfill -v backfill_batches=1 -d :DBNAME -f :tmp/online.sql > :tmp/backfill1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'backfill, stopped after one batch per table');
SELECT ok((SELECT bool_or(NOT done) AND bool_or(next_block > 0) FROM storagelab.bigint_migration_progress),
          'the progress table records an unfinished backfill');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=prepare -d :DBNAME -f :tmp/online.sql > :tmp/prepare0.out 2>&1; echo $?`
\set msg `grep -o 'the backfill is not complete' :tmp/prepare0.out | head -1`
SELECT is(:'msg'::text, 'the backfill is not complete', 'prepare refuses to run before the backfill is complete');
-- more writes while the backfill is half done
UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid BETWEEN 90000 AND 90100;
INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (100001, 1, 5, '');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=backfill -d :DBNAME -f :tmp/online.sql > :tmp/backfill2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'backfill resumed and finished');
SELECT ok((SELECT bool_and(done) FROM storagelab.bigint_migration_progress), 'the progress table says done');
CREATE TABLE snap.before AS SELECT * FROM snap.data() WHERE rel NOT LIKE 'snap.%';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=prepare -d :DBNAME -f :tmp/online.sql > :tmp/prepare.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'prepare');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=prepare -d :DBNAME -f :tmp/online.sql > :tmp/prepare2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'prepare again (phases can be re-run)');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/online.sql > :tmp/swap.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'swap');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=cleanup -d :DBNAME -f :tmp/online.sql > :tmp/cleanup.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'cleanup');

SELECT is((SELECT count(*) FROM snap.twelve t JOIN pg_attribute a ON a.attrelid = t.rel AND a.attname = t.col AND NOT a.attisdropped
            WHERE a.atttypid = 'int8'::regtype), 12::bigint, 'all twelve columns are bigint');
SELECT set_eq('SELECT * FROM snap.data() WHERE rel NOT LIKE ''snap.%''', 'SELECT * FROM snap.before',
              'row counts and checksums unchanged by prepare, swap and cleanup');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'keys, foreign keys (names, actions), indexes, storage options as they were');
SELECT lives_ok($$
  WITH b AS (INSERT INTO pgbench_branches (bid, bbalance) VALUES (3000000000, 3000000000) RETURNING bid),
       t AS (INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT 3000000001, bid, 3000000000 FROM b RETURNING tid, bid),
       a AS (INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT 3000000002, bid, 3000000000, '' FROM b RETURNING aid)
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT t.tid, t.bid, a.aid, 3000000000, now() FROM t, a$$,
  'inserts past 2^31 through branches -> tellers -> accounts -> history (with column lists: the converted columns are now last)');
SELECT throws_ok($$INSERT INTO pgbench_history (tid, bid, aid) VALUES (1, 1, 3000000099)$$, '23503', NULL,
                 'the foreign keys still reject a missing parent');

-- Rollback before swap: expand, backfill, prepare, then rollback_prepare and
-- rollback_expand leave the tables as they were.
CREATE TABLE public.rb_parent (id serial PRIMARY KEY, v text);
CREATE TABLE public.rb_child (parent_id int NOT NULL REFERENCES public.rb_parent ON DELETE CASCADE, w int);
CREATE INDEX rb_child_parent ON public.rb_child (parent_id) WHERE w > 0;
INSERT INTO public.rb_parent (v) SELECT 'v' || g FROM generate_series(1, 1000) g;
INSERT INTO public.rb_child SELECT g, g FROM generate_series(1, 1000) g;
CREATE TABLE snap.rb_catalog AS SELECT * FROM snap.catalog() WHERE name LIKE '%rb\_%';
CREATE TABLE snap.rb_data AS SELECT * FROM snap.data() WHERE rel LIKE '%rb\_%';
SELECT storagelab.bigint_migration_script('rb_parent', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/rb.sql
\set rc `for p in expand backfill prepare rollback_prepare rollback_expand; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/rb.sql >> :tmp/rb.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'expand, backfill, prepare, rollback_prepare, rollback_expand all ran');
SELECT set_eq($$SELECT * FROM snap.catalog() WHERE name LIKE '%rb\_%'$$, 'SELECT * FROM snap.rb_catalog',
              'after the rollbacks the tables, indexes and constraints are as they were');
SELECT set_eq($$SELECT * FROM snap.data() WHERE rel LIKE '%rb\_%'$$, 'SELECT * FROM snap.rb_data', '... and so is the data');
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid IN ('rb_parent'::regclass, 'rb_child'::regclass) AND attname LIKE 'storagelab\_%' AND NOT attisdropped)
          + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'zz\_storagelab%')
          + (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::bigint,
          'no shadow column, sync trigger or shadow index is left');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_pgbench;
\set rc `rm -rf :tmp`

-- pgTAP: the backfill and prepare phases of bigint_migration_script(mode =>
-- 'shadow'), the shadow-column writer that was mode 'online' in 1.0, in
-- detail (the online mode, copy and swap, is tested by
-- test/bigint_migration_online_pgbench.sql, _phases.sql and _copy_swap*.sql): fixed and time-budgeted batches and the statistics
-- they leave in storagelab.bigint_migration_progress; tables whose columns
-- have the names of the backfill's PL/pgSQL variables; and the CHECK
-- constraint of prepare that proves the shadow columns exact: a write that
-- bypassed the sync trigger before prepare makes prepare refuse (and the
-- hint's recovery works), one after prepare fails; and a backfill by a role
-- without superuser rights, during which the sync trigger's function does not
-- run for the rows the copy makes equal; and that a role that may not
-- UPDATE a table cannot write the progress rows of its backfill.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_backfill;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_online_backfill TEMPLATE :"origdb";
\c storagelab_tap_bigint_online_backfill
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
DROP ROLE IF EXISTS storagelab_tap_backfiller;
CREATE ROLE storagelab_tap_backfiller;
DROP ROLE IF EXISTS storagelab_tap_intruder;
CREATE ROLE storagelab_tap_intruder;

-- columns named like the variables of the generated backfill block
CREATE TABLE public.b (b serial PRIMARY KEY, n int, ms int, rate int, target int, nrows int, maxb int, tries int);
CREATE TABLE public.c (id int PRIMARY KEY, b_id int NOT NULL REFERENCES public.b, pad text);
INSERT INTO public.b (n, ms, rate, target, nrows, maxb, tries) SELECT g, g, g, g, g, g, g FROM generate_series(1, 20000) g;
INSERT INTO public.c SELECT g, 1 + g % 20000, repeat('x', 100) FROM generate_series(1, 20000) g;
CREATE TABLE public.d (id int PRIMARY KEY, pad text);
INSERT INTO public.d SELECT g, repeat('y', 100) FROM generate_series(1, 30000) g;
ANALYZE;
-- fixed batches of 10 blocks
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_time', '0'), ('bigint_migration.backfill_batch_blocks', '10'),
                                       ('bigint_migration.backfill_pause', '0');

SELECT plan(34);

SELECT storagelab.bigint_migration_script('public.b', 'b', 'shadow') \g (format=unaligned tuples_only=on) :tmp/b.sql
\set rc `for p in expand backfill; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/b.sql >> :tmp/b.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'expand and backfill of a table whose columns are named b, n, ms, rate, target, nrows, maxb, tries');
SELECT results_eq($$SELECT relation, done, batches, rows_copied, batch_blocks FROM storagelab.bigint_migration_progress ORDER BY 1$$,
                  $$VALUES ('public.b', true, (SELECT max_block / 10 + 1 FROM storagelab.bigint_migration_progress WHERE relation = 'public.b'), 20000::bigint, 10::bigint),
                           ('public.c', true, (SELECT max_block / 10 + 1 FROM storagelab.bigint_migration_progress WHERE relation = 'public.c'), 20000::bigint, 10::bigint)$$,
                  'fixed batches: one per 10 blocks up to the size recorded by expand, every row copied once');
SELECT ok((SELECT bool_and(last_batch_ms >= 0 AND max_batch_ms >= last_batch_ms AND started_at <= updated_at) FROM storagelab.bigint_migration_progress),
          'the progress table records batch times');
SELECT is((SELECT count(*) FROM public.b WHERE storagelab_new_1 IS DISTINCT FROM b), 0::bigint, 'the shadow column of b is exact');

-- a write that bypasses the sync trigger (as logical replication's apply
-- does) leaves a shadow value behind: prepare must refuse.  (Its new row
-- version must stay within the blocks the backfill covers, up to max_block:
-- in the space pruning frees of the backfill's old versions, which another
-- session's older snapshot, an autovacuum ANALYZE's, would keep.)
\i test/fixtures/wait_for_snapshots.sql
SELECT pg_temp.wait_for_snapshots() \g /dev/null
SET session_replication_role = replica;
UPDATE public.c SET b_id = 5 WHERE id = 1;   -- was 2
-- and rows past the blocks the backfill covered (an apply worker's inserts
-- extend the table): the recovery must reach them too
INSERT INTO public.c SELECT g, 1 + g % 20000, repeat('x', 100) FROM generate_series(20001, 40000) g;
RESET session_replication_role;
SELECT ok(EXISTS (SELECT 1 FROM public.c
                   WHERE id > 20000 AND (ctid::text::point)[0] > (SELECT max_block FROM storagelab.bigint_migration_progress
                                                                   WHERE relation = 'public.c')),
          'the fixture: rows written around the sync trigger lie past max_block');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=prepare -d :DBNAME -f :tmp/b.sql > :tmp/prepare1.out 2>&1; echo $?`
SELECT isnt(:'rc'::text, '0', 'prepare fails after a write that bypassed the sync trigger');
\set msg `grep -o 'shadow columns of public.c differ from the originals' :tmp/prepare1.out | head -1`
SELECT is(:'msg'::text, 'shadow columns of public.c differ from the originals', '... saying which table');
\set hint `grep -c 'HINT:  Check that the sync trigger is enabled' :tmp/prepare1.out`
SELECT is(:'hint'::text, '1', '... with the recovery as its hint');
-- the hint's recovery, as the hint words it
\set recovery `sed -n 's/^HINT: .* then \(UPDATE .*\) and run phase backfill again\.$/\1/p' :tmp/prepare1.out | head -1`
:recovery;
\set rc `for p in backfill prepare; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/b.sql >> :tmp/b.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'backfill again, then prepare');
DELETE FROM public.c WHERE id > 20000;
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'storagelab\_eq\_%' AND convalidated AND contype = 'c'), 2::bigint,
          'prepare left one validated CHECK per table');
-- after prepare, a write that bypasses the trigger fails instead of
-- leaving a wrong value for the swap
SET session_replication_role = replica;
SELECT throws_ok($$UPDATE public.c SET b_id = 3 WHERE id = 1$$, '23514', NULL, 'after prepare, an UPDATE that bypasses the sync trigger fails');
SELECT throws_ok($$INSERT INTO public.b (n) VALUES (1)$$, '23514', NULL, '... and so does an INSERT');
RESET session_replication_role;
UPDATE public.c SET b_id = 4 WHERE id = 1;
\set rc `for p in swap cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/b.sql >> :tmp/b.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'swap and cleanup');
SELECT results_eq($$SELECT format_type(atttypid, NULL), attnotnull FROM pg_attribute WHERE (attrelid, attname) IN (('public.b'::regclass, 'b'), ('public.c'::regclass, 'b_id')) ORDER BY attrelid$$,
                  $$VALUES ('bigint', true), ('bigint', true)$$, 'both columns are bigint NOT NULL');
SELECT is((SELECT b_id FROM public.c WHERE id = 1), 4::bigint, 'the row written around the migration has its last value');
SELECT is((SELECT count(*) FROM public.c JOIN public.b ON b.b = c.b_id), 20000::bigint, 'every row of c still finds its b');
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'storagelab\_%'), 0::bigint, 'no storagelab constraint is left');

-- time-budgeted batches (the default), starting at 8 blocks.  The budget is
-- one that any machine meets (10 s a batch), so that the batches grow by
-- doubling.  With 50 ms, a loaded machine that copies 8 blocks more slowly
-- than that shrinks the batches, and there are more of them than fixed
-- 8-block ones would be: the test would measure the machine.
UPDATE storagelab.settings SET value = '10s' WHERE name = 'bigint_migration.backfill_batch_time';
UPDATE storagelab.settings SET value = '8' WHERE name = 'bigint_migration.backfill_batch_blocks';
SELECT storagelab.bigint_migration_script('public.d', 'id', 'shadow') \g (format=unaligned tuples_only=on) :tmp/d.sql
\set rc `for p in expand backfill prepare swap; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/d.sql >> :tmp/d.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'time-budgeted batches: expand, backfill, prepare and swap');
SELECT ok((SELECT rows_copied = 30000 AND batches BETWEEN 1 AND max_block / 8 + 1 AND batch_blocks >= 1
             FROM storagelab.bigint_migration_progress WHERE relation = 'public.d'),
          '... every row copied once, in at most as many batches as fixed 8-block ones would take');
SELECT results_eq($$SELECT count(*), sum(id), format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = 'public.d'::regclass AND attname = 'id'), NULL)
                      FROM public.d$$,
                  $$VALUES (30000::bigint, 450015000::numeric, 'bigint')$$, '... and the data is intact');

-- a backfill by a role that is not a superuser (it cannot set
-- session_replication_role, so the table's triggers fire for the copy):
-- the sync trigger's WHEN clause keeps its function from running for rows
-- the copy has already made equal; an INSERT afterwards still runs it
-- (pg_stat_user_functions counts the calls: track_functions = pl; each
-- session flushes its counts before it ends, pg_stat_force_next_flush(),
-- as a backend that exits flushes them only after its client has gone)
CREATE TABLE public.e (id int PRIMARY KEY, v int);
INSERT INTO public.e SELECT g, g FROM generate_series(1, 5000) g;
GRANT SELECT, INSERT, UPDATE ON public.e TO storagelab_tap_backfiller;
SELECT storagelab.bigint_migration_script('public.e', 'id', 'shadow') \g (format=unaligned tuples_only=on) :tmp/e.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=expand -d :DBNAME -f :tmp/e.sql > :tmp/e.out 2>&1 && PGOPTIONS='-c role=storagelab_tap_backfiller -c track_functions=pl' psql -X -q -v ON_ERROR_STOP=1 -v phase=backfill -d :DBNAME -f :tmp/e.sql -c 'SELECT pg_stat_force_next_flush()' >> :tmp/e.out 2>&1 && PGOPTIONS='-c role=storagelab_tap_backfiller -c track_functions=pl' psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'INSERT INTO public.e VALUES (5001, 1)' -c 'SELECT pg_stat_force_next_flush()' >> :tmp/e.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'a role without superuser rights runs the backfill');
SELECT is((SELECT count(*) FROM public.e WHERE storagelab_new_1 IS DISTINCT FROM id), 0::bigint, '... and the shadow column is exact');
SELECT pg_stat_clear_snapshot();
SELECT is((SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions
            WHERE funcid = (SELECT tgfoid FROM pg_trigger WHERE tgrelid = 'public.e'::regclass AND tgname LIKE 'zz\_storagelab\_sync\_%')),
          1::numeric, 'the sync function ran once: for the INSERT, not for the 5000 rows the backfill copied');

-- progress rows: every role reads them; only roles that may UPDATE the
-- table (and superusers) write them
SET ROLE storagelab_tap_intruder;
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_progress WHERE relation = 'public.e'), 1::bigint,
          'a role without privileges on the table reads its progress row');
SELECT lives_ok($$SELECT storagelab.bigint_migration_objects('public.e', 'id')$$,
                'a role without privileges reads the model of a migration (the public functions call storagelab_internal)');
WITH u AS (UPDATE storagelab.bigint_migration_progress SET done = false, next_block = 0 WHERE relation = 'public.e' RETURNING 1)
SELECT is((SELECT count(*) FROM u), 0::bigint, '... but cannot change it');
WITH d AS (DELETE FROM storagelab.bigint_migration_progress WHERE relation = 'public.e' RETURNING 1)
SELECT is((SELECT count(*) FROM d), 0::bigint, '... nor delete it');
SELECT throws_ok($$INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block) VALUES ('sl0', 'public.e', 0)$$,
                 '42501', NULL, '... nor add one');
RESET ROLE;
SELECT is((SELECT (done, next_block > 0) FROM storagelab.bigint_migration_progress WHERE relation = 'public.e'), (true, true),
          'the progress row is as the backfill left it');

-- a nextval() default written with a cast to integer: the swap moves it to
-- the bigint column without the cast, so that keys past 2^31 can be drawn
CREATE SEQUENCE public.f_id_seq;
CREATE TABLE public.f (id int PRIMARY KEY DEFAULT nextval('public.f_id_seq')::int, v text);
ALTER SEQUENCE public.f_id_seq OWNED BY public.f.id;
INSERT INTO public.f (v) VALUES ('a'), ('b');
SELECT storagelab.bigint_migration_script('public.f', 'id', 'shadow') \g (format=unaligned tuples_only=on) :tmp/f.sql
\set rc `for p in expand backfill prepare swap cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/f.sql >> :tmp/f.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'every phase runs on a table whose default is nextval()::integer');
SELECT setval('public.f_id_seq', 3000000000) \g /dev/null
SELECT results_eq($$INSERT INTO public.f (v) VALUES ('big') RETURNING id$$, $$VALUES (3000000001::bigint)$$,
          '... and afterwards its default gives keys past 2^31 (the cast to integer is gone)');

-- the case mode shadow is kept for: a converted column of an inheritance
-- child that its parent lacks (copy and swap rebuilds the tree from the
-- parent, and refuses it)
CREATE TABLE public.g (id serial PRIMARY KEY, v text);
CREATE TABLE public.g_base (a int, x text);
CREATE TABLE public.g_kid (ref int REFERENCES public.g) INHERITS (public.g_base);
INSERT INTO public.g (v) SELECT 'g' || n FROM generate_series(1, 100) n;
INSERT INTO public.g_kid (a, x, ref) SELECT n, 'k', 1 + n % 100 FROM generate_series(1, 500) n;
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('public.g', 'id', 'online')$$, '0A000',
                 'mode online does not convert a column of an inheritance child that its parent lacks',
                 'mode online refuses a converted column that an inheritance child has and its parent lacks');
SELECT storagelab.bigint_migration_script('public.g', 'id', 'shadow') \g (format=unaligned tuples_only=on) :tmp/g.sql
\set rc `for p in expand backfill prepare swap cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/g.sql >> :tmp/g.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'mode shadow converts it: every phase runs');
SELECT results_eq($$SELECT format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = 'public.g_kid'::regclass AND attname = 'ref'), NULL),
                           count(*), count(DISTINCT ref) FROM public.g_kid JOIN public.g ON g.id = g_kid.ref$$,
                  $$VALUES ('bigint', 500::bigint, 100::bigint)$$, '... the child''s column is bigint, every row still finds its parent');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_backfill;
DROP ROLE storagelab_tap_backfiller;
DROP ROLE storagelab_tap_intruder;
\set rc `rm -rf :tmp`

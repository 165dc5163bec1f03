-- pgTAP: bigint_migration_script(mode => 'copy_swap') on a table keyed by a
-- column named id (the change log's own columns have reserved names) that
-- has a second unique constraint, through which the application reorders
-- rows (two positions swapped via a temporary value in one transaction)
-- between the phases: the replay, the swap and the rollback after the swap
-- apply each batch as a set, so they converge; executed with psql
-- -v phase=... -f in a scratch database, the data checked after each.
-- A key column named like the log's sequence column is refused; so is a
-- publication FOR ALL TABLES or FOR TABLES IN SCHEMA of the table's schema
-- (by the generator, and by phase start when it appears afterwards).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_copy_swap_keys;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_copy_swap_keys TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_copy_swap_keys
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
SELECT to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NOT NULL AS engine \gset
\if :engine
SELECT plan(16);
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '1'), ('bigint_migration.backfill_pause', '0'),
  ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');
CREATE TABLE items (id int PRIMARY KEY, list_id int NOT NULL, pos int NOT NULL, title text, UNIQUE (list_id, pos));
INSERT INTO items SELECT i, 1 + i / 100, i % 100, 'item ' || i FROM generate_series(1, 1000) i;
SELECT storagelab.bigint_migration_script('items', 'id', 'copy_swap') \g (format=unaligned tuples_only=on) :tmp/cs.sql
\set rc `for p in start copy index; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/cs.sql >> :tmp/run.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'start, copy, index on a table keyed by a column named id');

-- reorders after the copy: positions of items 1 and 2, and of 510 and 550, swapped via -1
BEGIN;
UPDATE items SET pos = -1 WHERE id = 1;
UPDATE items SET pos = 1 WHERE id = 2;
UPDATE items SET pos = 2 WHERE id = 1;
COMMIT;
BEGIN;
UPDATE items SET pos = -1 WHERE id = 510;
UPDATE items SET pos = 10 WHERE id = 550;
UPDATE items SET pos = 50 WHERE id = 510;
COMMIT;
UPDATE items SET title = 'renamed' WHERE id = 3;
DELETE FROM items WHERE id = 4;
INSERT INTO items VALUES (1001, 1, 4, 'new');
SELECT is(storagelab_internal.rewrite_online_key('items'::regclass), ARRAY['id']::name[], 'the log is keyed by id');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :tmp/cs.sql > :tmp/replay.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'replay after reorders through the unique constraint (list_id, pos)');
SELECT set_eq(format('SELECT to_jsonb(t) FROM %s t', (SELECT c.oid::regclass FROM pg_class c WHERE c.relname = 'storagelab_new_' || 'items'::regclass::oid)),
              'SELECT to_jsonb(t) FROM items t', 'the new table has the rows of the old one');
BEGIN;
UPDATE items SET pos = -1 WHERE id = 1;
UPDATE items SET pos = 2 WHERE id = 1001;
UPDATE items SET pos = 4 WHERE id = 1;
COMMIT;
CREATE TABLE before_swap AS SELECT to_jsonb(t) AS j FROM items t;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/cs.sql > :tmp/swap.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'swap with a reorder in the rest of the log');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'items'::regclass AND attname = 'id'), 'bigint', 'id is bigint');
SELECT set_eq('SELECT to_jsonb(t) FROM items t', 'SELECT j FROM before_swap', 'the rows are those of before the swap');

-- rollback after the swap: a reorder made since is replayed into the old table
BEGIN;
UPDATE items SET pos = -1 WHERE id = 2;
UPDATE items SET pos = 1 WHERE id = 1001;
UPDATE items SET pos = 2 WHERE id = 2;
COMMIT;
CREATE TABLE before_rollback AS SELECT to_jsonb(t) AS j FROM items t;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/cs.sql > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'rollback after the swap, with a reorder in the back log');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'items'::regclass AND attname = 'id'), 'integer', 'id is integer again');
SELECT set_eq('SELECT to_jsonb(t) FROM items t', 'SELECT j FROM before_rollback', 'the old table has every change made after the swap');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::bigint, 'no table of the migration is left');

CREATE TABLE odd (storagelab_seq int PRIMARY KEY, v int);
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('odd', 'storagelab_seq', 'copy_swap')$$, '42701', NULL,
                 'a key column named like the change log''s sequence column is refused');
-- publications of all tables or of the tables' schema would publish the new tables and logs: refused
CREATE SCHEMA other;
CREATE PUBLICATION pub_other FOR TABLES IN SCHEMA other;
CREATE PUBLICATION pub_items FOR TABLE items;
SELECT lives_ok($$SELECT storagelab.bigint_migration_script('items', 'id', 'copy_swap')$$,
                'publications of other schemas and of the table itself are no obstacle');
SELECT storagelab.bigint_migration_script('items', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/pub.sql
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA public;
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('items', 'id', 'online')$$, '0A000',
                 'a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of an online migration',
                 'a publication FOR TABLES IN SCHEMA of the table''s schema: refused');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :tmp/pub.sql > :tmp/pub.out 2>&1; echo $?`
\set msg `grep -c 'would publish the new tables and change logs of this migration' :tmp/pub.out`
SELECT is(:'rc' || ' ' || :'msg' || ' ' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), '3 1 0',
          '... and phase start of a script written before it refuses too, creating nothing');
DROP PUBLICATION pub_schema;
CREATE PUBLICATION pub_all FOR ALL TABLES;
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('items', 'id', 'online')$$, '0A000', NULL,
                 'a publication FOR ALL TABLES: refused');
DROP PUBLICATION pub_all;
\else
SELECT plan(1);
SELECT pass('without the rewrite engine mode copy_swap is refused (test/bigint_migration_copy_swap.sql)');
\endif
SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_copy_swap_keys;
\set rc `rm -rf :tmp`

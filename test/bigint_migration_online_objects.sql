-- pgTAP: bigint_migration_script(mode => 'online', copy and swap) on the
-- fixture with every dependent-object kind and hostile identifiers
-- (test/fixtures/bigint_migration_objects.sql), whole: the stored generated
-- column that uses the key included; every
-- phase executed with psql -v ON_ERROR_STOP=1 -f in a scratch database,
-- then the database is compared with what it was (data as jsonb, every
-- object definition, privileges, comments, replica identity, clustering,
-- every table's columns in their order) and used past 2^31.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_objects;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_online_objects TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_online_objects
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_objects.sql
SET client_min_messages = warning;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.runs (tbl text, rc text);

SELECT plan(16);

CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.cols_before AS
  SELECT c.oid::regclass::text AS rel, array_agg(a.attname ORDER BY a.attnum) AS cols
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE c.relnamespace = '"Sch; --x"'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
   GROUP BY c.oid;

\set t '"Sch; --x"."Parent ""Q"" $storagelab$"'
\set col Id
\set file parent
\i test/fixtures/bigint_migration_run_online.sql
-- then the identity column of the child (custom MAXVALUE)
SELECT max("order") AS max_order_before FROM "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" \gset
\set t '"Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"'
\set col order
\set file child
\i test/fixtures/bigint_migration_run_online.sql

SELECT is((SELECT string_agg(tbl, ', ' ORDER BY tbl) FROM snap.runs WHERE rc <> '0'), NULL, 'start, copy, index, replay, swap, validate, cleanup ran, for both scripts');
SELECT is((SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = '"Sch; --x"'::regnamespace AND c.relkind IN ('r', 'p') AND NOT a.attisdropped
              AND a.attname IN ('Id', 'select', 'parent ID', 'parent_id', 'order') AND a.atttypid = 'int8'::regtype),
          9::bigint, 'the key, the self-reference, the composite FK column, the partitioned table and its partitions, the inheritance parent and child, and the identity column are bigint');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table, view and materialized view unchanged');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'every object as it was: views (options, owner, grants, comments, defaults), rule, triggers, policies, function, publications, statistics, column grants, comments, statistics targets, replica identity, clustering, FK names and actions');
SELECT is((SELECT seqtypid::regtype::text FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id')::regclass),
          'bigint', 'the serial sequence is bigint');
SELECT set_eq($$SELECT c.oid::regclass::text, array_agg(a.attname ORDER BY a.attnum)
                  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                 WHERE c.relnamespace = '"Sch; --x"'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
                 GROUP BY c.oid$$, 'SELECT * FROM snap.cols_before',
              'every table has its columns in their original order (the generated column too)');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%')
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint, 'no new, old or log table and no progress row left');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = '"Sch; --x"'::regnamespace AND NOT convalidated), 0::bigint,
          'all constraints valid');
SELECT setval(pg_get_serial_sequence('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id'), 2147483647::bigint + 10) \g /dev/null
SELECT lives_ok($$
  WITH p AS (INSERT INTO "Sch; --x"."Parent ""Q"" $storagelab$" (code, "select") VALUES ('big', 1) RETURNING "Id", code)
  INSERT INTO "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" ("parent ID", code)
  SELECT "Id", code FROM p$$,
  'insert past 2^31 through the parent and the composite FK (the serial default moved to the new column)');
SELECT lives_ok($$INSERT INTO "Sch; --x".inh_kid (parent_id, extra) SELECT max("Id"), 'big' FROM "Sch; --x"."Parent ""Q"" $storagelab$"$$,
                'insert past 2^31 into the inheritance child');
SELECT lives_ok($$INSERT INTO "Sch; --x".events (at, parent_id, n) SELECT date '2025-03-01', max("Id"), 1 FROM "Sch; --x"."Parent ""Q"" $storagelab$"$$,
                'insert past 2^31 into the partitioned table');
SELECT throws_ok($$INSERT INTO "Sch; --x".events (at, parent_id, n) VALUES (date '2025-03-01', 3000000000, 1)$$, '23503', NULL,
                 'the partitioned table''s foreign key (attached per partition) still rejects a missing parent');
SELECT is("Sch; --x"."count above"(2147483647), 1::bigint, 'the re-created BEGIN ATOMIC function sees it');
SELECT throws_ok($$SET CONSTRAINTS ALL IMMEDIATE; INSERT INTO "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" ("parent ID", code) VALUES (3000000000, 'x')$$,
                 '23503', NULL, 'the composite deferrable foreign key still rejects a missing parent');
SELECT is((SELECT seqtypid::regtype::text || ' ' || seqmax FROM pg_sequence
            WHERE seqrelid = pg_get_serial_sequence('"Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"', 'order')::regclass),
          'bigint 2000000000', 'the identity moved to the new column: bigint sequence, custom MAXVALUE kept');
SELECT cmp_ok((SELECT min("order") FROM "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" WHERE code = 'big'),
              '>', :max_order_before::bigint, '... and it continues after the values it had given');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_objects;
DROP ROLE "storagelab test ""owner""";
DROP ROLE storagelab_test_reader;
\set rc `rm -rf :tmp`

-- pgTAP: bigint_migration_script() on a schema with one instance of every
-- dependent-object kind and hostile identifiers
-- (test/fixtures/bigint_migration_objects.sql).  The generated scripts are
-- executed with psql -v ON_ERROR_STOP=1 -f in a scratch database; the checks
-- compare the database afterwards with what it was before (data as jsonb,
-- every object definition, privileges and comments) and insert past 2^31.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_objects;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_objects TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_objects
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_objects.sql
SET client_min_messages = warning;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.runs (tbl text, rc text);
CREATE TABLE snap.kinds AS
  SELECT DISTINCT kind FROM storagelab.bigint_migration_objects('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id');

SELECT plan(19);

SELECT set_eq('SELECT kind FROM snap.kinds',
  ARRAY['column', 'sequence', 'foreign_key', 'index', 'constraint', 'statistics', 'view', 'materialized_view',
        'rule', 'trigger', 'policy', 'function', 'generated_column', 'publication_table', 'default', 'trigger_function'],
  'the dependency model finds every object kind of the fixture');

-- the key of the parent: its whole component and every dependent object
\set t '"Sch; --x"."Parent ""Q"" $storagelab$"'
\set col Id
\set file parent
\i test/fixtures/bigint_migration_run.sql
-- then the identity column of the child (custom MAXVALUE)
\set t '"Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"'
\set col order
\set file child
\i test/fixtures/bigint_migration_run.sql

SELECT is((SELECT array_agg(rc ORDER BY tbl) FROM snap.runs), ARRAY['0', '0'], 'both generated scripts ran to COMMIT');
SELECT is((SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = '"Sch; --x"'::regnamespace AND c.relkind IN ('r', 'p')
              AND a.attname IN ('Id', 'select', 'parent ID', 'parent_id', 'order') AND a.atttypid = 'int8'::regtype),
          9::bigint, 'the key, the self-reference, the composite FK column, the partitioned and inherited children and the identity are bigint');
SELECT is((SELECT atttypid::regtype::text FROM pg_attribute WHERE attrelid = '"Sch; --x"."Parent ""Q"" $storagelab$"'::regclass AND attname = 'gen'),
          'bigint', 'the generated column is back');
SELECT is((SELECT count(*) FROM "Sch; --x"."Parent ""Q"" $storagelab$" WHERE gen <> "Id" * 2), 0::bigint,
          'the generated column holds the right values');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table, view and materialized view unchanged');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'every object re-created exactly: definitions, options, owners, privileges, comments, statistics targets, replica identity');
SELECT is((SELECT seqtypid::regtype::text || ' ' || seqmax FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id')::regclass),
          'bigint 9223372036854775807', 'the serial sequence is bigint with the bigint MAXVALUE');
SELECT is((SELECT seqtypid::regtype::text || ' ' || seqmax FROM pg_sequence
            WHERE seqrelid = pg_get_serial_sequence('"Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"', 'order')::regclass),
          'bigint 2000000000', 'the identity sequence is bigint and keeps its custom MAXVALUE');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = '"Sch; --x"'::regnamespace AND NOT convalidated), 0::bigint,
          'all constraints valid');
SELECT ok((SELECT relispopulated FROM pg_class WHERE oid = '"Sch; --x".mv'::regclass), 'the materialized view is populated again');
SELECT is((SELECT tgenabled FROM pg_trigger WHERE tgname = 'when trg'), 'D'::"char", 'the disabled trigger stays disabled');

-- past 2^31 through the FK chain
SELECT setval(pg_get_serial_sequence('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id'), 2147483647::bigint + 10) \g /dev/null
SELECT lives_ok($$
  WITH p AS (INSERT INTO "Sch; --x"."Parent ""Q"" $storagelab$" (code, "select") VALUES ('big', 1) RETURNING "Id", code),
       c AS (INSERT INTO "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" ("parent ID", code)
             SELECT "Id", code FROM p RETURNING "parent ID"),
       e AS (INSERT INTO "Sch; --x".events SELECT date '2025-02-01', "Id", 1 FROM p RETURNING parent_id)
  INSERT INTO "Sch; --x".inh_kid (parent_id, extra) SELECT "Id", 'big' FROM p$$,
  'insert past 2^31 through the parent, the composite FK, the partitioned and the inheritance child');
SELECT is((SELECT max("Id") FROM "Sch; --x"."v ""1"""), 2147483647::bigint + 11, 'the re-created view shows the new key');
SELECT is("Sch; --x"."count above"(2147483647), 1::bigint, 'the re-created BEGIN ATOMIC function sees it');
SELECT lives_ok($$INSERT INTO "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" ("order", "parent ID", code)
                  VALUES (2000000000, 1, 'c1')$$, 'the identity column accepts its custom MAXVALUE');
SELECT throws_ok($$INSERT INTO "Sch; --x".events VALUES (date '2025-02-01', 3000000000, 1)$$, '23503', NULL,
                 'the foreign key of the partitioned table still rejects a missing parent');
SELECT throws_ok($$SET CONSTRAINTS ALL IMMEDIATE; INSERT INTO "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo" ("parent ID", code) VALUES (3000000000, 'x')$$,
                 '23503', NULL, 'the composite deferrable foreign key still rejects a missing parent');
SELECT is((SELECT count(*) FROM "Sch; --x"."v2
DROP SCHEMA public; -- on v1"), 501::bigint, 'the view on the view (with a newline in its name) is back');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_objects;
DROP ROLE "storagelab test ""owner""";
DROP ROLE storagelab_test_reader;
\set rc `rm -rf :tmp`

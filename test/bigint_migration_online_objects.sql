-- pgTAP: bigint_migration_script(mode => 'online') on the fixture with every
-- dependent-object kind and hostile identifiers
-- (test/fixtures/bigint_migration_objects.sql), minus what the online mode
-- refuses (the stored generated column, which would need a table rewrite);
-- every phase executed with psql
-- -v ON_ERROR_STOP=1 -f in a scratch database, then the database is compared
-- with what it was (data as jsonb, every object definition, privileges,
-- comments, replica identity, clustering) and used past 2^31.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_objects;
CREATE DATABASE storagelab_tap_bigint_online_objects;
\c storagelab_tap_bigint_online_objects
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
\i test/fixtures/bigint_migration_objects.sql
SET client_min_messages = warning;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.runs (tbl text, rc text);

SELECT plan(16);

SELECT throws_ok($$SELECT storagelab.bigint_migration_script('"Sch; --x"."Parent ""Q"" $storagelab$"', 'Id', 'online')$$,
                 '0A000', NULL, 'the full fixture is refused in online mode (a stored generated column uses the key)');
-- Take out what the online mode refuses.
ALTER TABLE "Sch; --x"."Parent ""Q"" $storagelab$" DROP CONSTRAINT "gen check";
DROP POLICY "pol view" ON "Sch; --x".audit;
DROP VIEW "Sch; --x".vc;
DROP FUNCTION "Sch; --x"."rows of v1"();
DROP VIEW "Sch; --x"."v2
DROP SCHEMA public; -- on v1", "Sch; --x"."v ""1""";
ALTER TABLE "Sch; --x"."Parent ""Q"" $storagelab$" DROP COLUMN gen;
CREATE VIEW "Sch; --x"."v ""1""" WITH (security_barrier = true) AS
  SELECT p."Id", p.code FROM "Sch; --x"."Parent ""Q"" $storagelab$" p WHERE p."Id" > 0
  WITH LOCAL CHECK OPTION;
ALTER VIEW "Sch; --x"."v ""1""" OWNER TO "storagelab test ""owner""";
GRANT SELECT ON "Sch; --x"."v ""1""" TO storagelab_test_reader;
GRANT UPDATE (code) ON "Sch; --x"."v ""1""" TO storagelab_test_reader;
COMMENT ON VIEW "Sch; --x"."v ""1""" IS 'view one';
COMMENT ON COLUMN "Sch; --x"."v ""1"""."Id" IS 'view column';
ALTER VIEW "Sch; --x"."v ""1""" ALTER COLUMN code SET DEFAULT 'dflt';
CREATE VIEW "Sch; --x"."v2
DROP SCHEMA public; -- on v1" AS SELECT "Id" + 1 AS next_id FROM "Sch; --x"."v ""1""";
SET search_path = "Sch; --x", public;
CREATE FUNCTION "Sch; --x"."rows of v1"() RETURNS SETOF "Sch; --x"."v ""1""" LANGUAGE sql STABLE
  AS $f$ SELECT * FROM "v ""1""" $f$;
COMMENT ON FUNCTION "Sch; --x"."rows of v1"() IS 'plain SQL function on the view';
RESET search_path;
CREATE VIEW "Sch; --x".vc AS SELECT "Id", code FROM "Sch; --x"."v ""1""" WHERE "Id" > 10 WITH CASCADED CHECK OPTION;
CREATE TRIGGER "vc ins" INSTEAD OF INSERT ON "Sch; --x".vc FOR EACH ROW EXECUTE FUNCTION "Sch; --x".vc_ins();
CREATE RULE "vc upd" AS ON UPDATE TO "Sch; --x".vc DO INSTEAD
  UPDATE "Sch; --x"."Parent ""Q"" $storagelab$" SET code = new.code WHERE "Id" = old."Id";
CREATE POLICY "pol view" ON "Sch; --x".audit USING (id IN (SELECT "Id" FROM "Sch; --x".vc));

CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();

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

SELECT is((SELECT string_agg(tbl, ', ' ORDER BY tbl) FROM snap.runs WHERE rc <> '0'), NULL, 'expand, backfill, prepare, swap, cleanup ran, for both scripts');
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
SELECT is((SELECT count(*) FROM pg_attribute WHERE attname LIKE 'storagelab\_%' AND NOT attisdropped
             AND attrelid IN (SELECT oid FROM pg_class WHERE relkind = 'r')), 0::bigint, 'no shadow or old column left');
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

-- pgTAP: storage_migration_script() and bytea_storage on column types found
-- in schemas storagelab's authors did not write: a domain over bytea (and a
-- domain over that domain), jsonb moved to a compressed storage, and a
-- stored generated column.  Each generated script is run by psql in another
-- session, and the stored forms and the data are checked afterwards
-- (pg_column_compression, md5 of every value).  Before these were handled,
-- the domain column was missing from bytea_storage and refused (42804) by
-- the generator although toast_profile() advised on it; the jsonb rewrite
-- for extended, main or a method failed (octet_length(jsonb) does not exist);
-- and the generated column's rewrite failed (it can only be updated to
-- DEFAULT).
\set QUIET 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_toast_types;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_toast_types TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_toast_types
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
SET default_toast_compression = pglz;

-- A domain over bytea, and one over that domain; pglz-compressed values.
CREATE DOMAIN image_data AS bytea CHECK (octet_length(VALUE) < 1000000);
CREATE DOMAIN thumbnail AS image_data;
CREATE TABLE "Photo Store" (id int PRIMARY KEY, "Img" image_data, thumb thumbnail);
INSERT INTO "Photo Store"
  SELECT g, convert_to(repeat('photo ' || g, 800), 'UTF8'), convert_to(repeat('thumb ' || g, 600), 'UTF8')
    FROM generate_series(1, 50) g;
-- jsonb stored EXTERNAL (uncompressed) at first
CREATE TABLE docs (id int PRIMARY KEY, doc jsonb);
ALTER TABLE docs ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO docs SELECT g, jsonb_build_object('body', repeat('document text ' || g, 400)) FROM generate_series(1, 50) g;
-- json (its text kept as written: spaces, key order, duplicate keys), EXTERNAL
CREATE TABLE jdocs (id int PRIMARY KEY, doc json);
ALTER TABLE jdocs ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO jdocs SELECT g, ('{"b": 1,  "a": "' || repeat('json text ' || g, 400) || '", "b": 2}')::json
  FROM generate_series(1, 30) g;
-- a stored generated column, compressed
CREATE TABLE gen (id int PRIMARY KEY, b bytea,
                  g bytea GENERATED ALWAYS AS (b || '\x00'::bytea) STORED,
                  k bytea GENERATED ALWAYS AS ('\x01'::bytea) STORED);
-- generated from an identity column GENERATED ALWAYS (UPDATE can only set it
-- to DEFAULT, which would renumber the rows) and another column
CREATE TABLE gen_id (id int GENERATED ALWAYS AS IDENTITY, b bytea,
                     g bytea GENERATED ALWAYS AS (int4send(id) || b) STORED,
                     h bytea GENERATED ALWAYS AS (int4send(id)) STORED);
INSERT INTO gen_id (b) SELECT convert_to(repeat('identity ' || g, 600), 'UTF8') FROM generate_series(1, 20) g;
INSERT INTO gen (id, b) SELECT g, convert_to(repeat('generated ' || g, 600), 'UTF8') FROM generate_series(1, 50) g;
-- already-compressed content (random bytes) in a domain column, stored EXTENDED
CREATE TABLE scans (id int PRIMARY KEY, raw image_data);
INSERT INTO scans SELECT g, (SELECT string_agg(decode(md5(g::text || ':' || i), 'hex'), ''::bytea)
                               FROM generate_series(1, 300) i) FROM generate_series(1, 60) g;
INSERT INTO storagelab.settings VALUES ('findings.toast_min_size', '8kB');
CREATE TABLE sums AS
  SELECT (SELECT md5(string_agg(md5("Img") || md5(thumb), ',' ORDER BY id)) FROM "Photo Store") AS photos,
         (SELECT md5(string_agg(md5(doc::text), ',' ORDER BY id)) FROM docs) AS docs,
         (SELECT md5(string_agg(md5(doc::text), ',' ORDER BY id)) FROM jdocs) AS jdocs,
         (SELECT md5(string_agg(md5(b) || md5(g), ',' ORDER BY id)) FROM gen) AS gen;

SELECT plan(18);

SELECT is((SELECT string_agg(column_name, ',' ORDER BY column_name) FROM storagelab.bytea_storage
            WHERE relation = '"Photo Store"'::regclass),
          'Img,thumb', 'bytea_storage lists the columns of a domain over bytea and of a domain over that domain');
SELECT is((SELECT count(*) FROM "Photo Store" WHERE pg_column_compression("Img") = 'pglz'), 50::bigint,
          'the domain column''s values are pglz-compressed before');
SELECT is((SELECT string_agg(category || ' ' || column_name, ',') FROM storagelab.findings WHERE relation = 'scans'::regclass),
          'toast raw', 'findings samples a domain-over-bytea column too (already-compressed content stored EXTENDED)');

-- 1. a domain over bytea to EXTERNAL, rewriting the values
SELECT lives_ok($$SELECT storagelab.storage_migration_script('"Photo Store"', 'Img', 'external', true)$$,
                'storage_migration_script() generates for a domain over bytea');
SELECT storagelab.storage_migration_script('"Photo Store"', 'Img', 'external', true) \g (format=unaligned tuples_only=on) :tmp/domain.sql
SELECT storagelab.storage_migration_script('"Photo Store"', 'thumb', 'external', true) \g (format=unaligned tuples_only=on) :tmp/domain2.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/domain.sql > :tmp/domain.out 2>&1 && psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/domain2.sql >> :tmp/domain.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', '... its scripts run');
SELECT is((SELECT count(*) FROM "Photo Store" WHERE pg_column_compression("Img") IS NOT NULL OR pg_column_compression(thumb) IS NOT NULL),
          0::bigint, '... no value is compressed any more');
SELECT is((SELECT md5(string_agg(md5("Img") || md5(thumb), ',' ORDER BY id)) FROM "Photo Store"), (SELECT photos FROM sums),
          '... the data is the same');

-- 2. jsonb from EXTERNAL to EXTENDED, rewriting the values
SELECT storagelab.storage_migration_script('docs', 'doc', 'extended', true) \g (format=unaligned tuples_only=on) :tmp/jsonb.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/jsonb.sql > :tmp/jsonb.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'jsonb to EXTENDED with rewrite_existing: the script runs');
SELECT is((SELECT count(*) FROM docs WHERE pg_column_compression(doc) IS NOT NULL), 50::bigint,
          '... every value is compressed');
SELECT is((SELECT md5(string_agg(md5(doc::text), ',' ORDER BY id)) FROM docs), (SELECT docs FROM sums),
          '... the data is the same');

-- json to EXTENDED lz4 or pglz (lz4 where the server has it), rewriting the values
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS method
  FROM pg_settings WHERE name = 'default_toast_compression' \gset
SELECT storagelab.storage_migration_script('jdocs', 'doc', :'method', true) \g (format=unaligned tuples_only=on) :tmp/json.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/json.sql > :tmp/json.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || (SELECT count(*) FROM jdocs WHERE pg_column_compression(doc) = :'method'),
          '0 30', 'json to a compressed storage with rewrite_existing: the script runs, every value is compressed');
SELECT is((SELECT md5(string_agg(md5(doc::text), ',' ORDER BY id)) FROM jdocs), (SELECT jdocs FROM sums),
          '... its text is the same (spaces, key order, duplicate keys)');

-- 3. a stored generated column to EXTERNAL, rewriting the values
SELECT storagelab.storage_migration_script('gen', 'g', 'external', true) \g (format=unaligned tuples_only=on) :tmp/gen.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/gen.sql > :tmp/gen.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'a stored generated column with rewrite_existing: the script runs');
SELECT is((SELECT count(*) FILTER (WHERE pg_column_compression(g) IS NULL) || '/' ||
                  count(*) FILTER (WHERE pg_column_compression(b) = 'pglz') FROM gen),
          '50/50', '... the generated values are stored uncompressed, the column it reads is left as it was');
SELECT is((SELECT md5(string_agg(md5(b) || md5(g), ',' ORDER BY id)) FROM gen), (SELECT gen FROM sums),
          '... the data is the same');
SELECT throws_ok($$SELECT storagelab.storage_migration_script('gen', 'k', 'external', true)$$, '0A000', NULL,
                 'a generated column whose expression reads no column cannot be rewritten: 0A000');
SELECT storagelab.storage_migration_script('gen_id', 'g', 'external', true) \g (format=unaligned tuples_only=on) :tmp/gen_id.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/gen_id.sql > :tmp/gen_id.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || (SELECT count(*) FILTER (WHERE pg_column_compression(g) IS NULL AND g = int4send(id) || b) FROM gen_id),
          '0 20', 'a generated column that reads an identity column GENERATED ALWAYS: the script runs, assigns only the other column');
SELECT throws_ok($$SELECT storagelab.storage_migration_script('gen_id', 'h', 'external', true)$$, '0A000', NULL,
                 'one that reads only an identity column GENERATED ALWAYS cannot be rewritten: 0A000');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_toast_types;
\set rc `rm -rf :tmp`

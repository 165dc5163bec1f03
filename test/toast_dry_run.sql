-- pgTAP: storage_migration_script()'s scripts with -v dry_run=1 run every
-- step in one transaction and roll it back: the storage settings and the
-- stored values are as before, and the same script without it still
-- converts.  Before, the scripts ignored dry_run and converted (each step
-- commits).  Sized: a partitioned table with two partitions (two ALTER
-- steps and two rewrite steps), 20 pglz-compressed values in each.
-- The scripts pin search_path (an operator || of a schema the session
-- lists before pg_catalog does not run in the rewrite) and set the
-- session's back at their end.
\set QUIET 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_toast_dry_run;
CREATE DATABASE storagelab_tap_toast_dry_run;
\c storagelab_tap_toast_dry_run
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
\set tmp `mktemp -d`
SET default_toast_compression = pglz;

CREATE TABLE files (id int, part int, body text) PARTITION BY LIST (part);
CREATE TABLE files_1 PARTITION OF files FOR VALUES IN (1);
CREATE TABLE files_2 PARTITION OF files FOR VALUES IN (2);
INSERT INTO files SELECT g, 1 + g % 2, repeat('file body ' || g, 400) FROM generate_series(1, 40) g;
CREATE TEMP TABLE before AS
  SELECT (SELECT md5(string_agg(md5(body), ',' ORDER BY id)) FROM files) AS data;

SELECT plan(8);

-- storage and compressed values, over the tree
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(a.attrelid::regclass::text || ' ' || a.attstorage::text, ', ' ORDER BY a.attrelid::regclass::text)
         || '; compressed ' || (SELECT count(*) FROM files WHERE pg_column_compression(body) IS NOT NULL)
    FROM pg_attribute a WHERE a.attname = 'body' AND a.attrelid IN ('files'::regclass, 'files_1'::regclass, 'files_2'::regclass)
$$;
SELECT is(pg_temp.state(), 'files x, files_1 x, files_2 x; compressed 40', 'before: EXTENDED, every value compressed');

SELECT storagelab.storage_migration_script('files', 'body', 'external', true) \g (format=unaligned tuples_only=on) :tmp/rewrite.sql
SELECT storagelab.storage_migration_script('files', 'body', 'main', false) \g (format=unaligned tuples_only=on) :tmp/alter.sql

-- 1. with the rewrite: every step runs (the rewrite as one UPDATE), then ROLLBACK
\set out `psql -X -q -v ON_ERROR_STOP=1 -v dry_run=1 -d :DBNAME -f :tmp/rewrite.sql 2>&1; echo "rc $?"`
SELECT is(:'out'::text, E'dry run: rolled back\nrc 0', 'a dry run of the script with rewrite_existing runs and says it rolled back');
SELECT is(pg_temp.state(), 'files x, files_1 x, files_2 x; compressed 40', '... storage and stored values are as before');

-- 1b. the same under a search_path whose first schema has an operator || for text that raises:
-- the script's rewrite does not run it, and the session's search_path is set back at the end
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.cat(text, text) RETURNS text LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'hostile operator ran'; END $f$;
CREATE OPERATOR hostile.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.cat);
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -v dry_run=1 -d :DBNAME -c 'SET search_path = hostile, pg_catalog, public' -f :tmp/rewrite.sql -c 'SHOW search_path' 2>&1; echo "rc $?"`
SELECT is(:'out'::text, E'dry run: rolled back\nhostile, pg_catalog, public\nrc 0',
          'under a hostile search_path the script runs with its own, and sets the session''s back at its end');
DROP SCHEMA hostile CASCADE;

-- 2. without the rewrite
\set out `psql -X -q -v ON_ERROR_STOP=1 -v dry_run=1 -d :DBNAME -f :tmp/alter.sql 2>&1; echo "rc $?"`
SELECT is(:'out'::text, E'dry run: rolled back\nrc 0', 'a dry run of the script without rewrite_existing runs and says it rolled back');
SELECT is(pg_temp.state(), 'files x, files_1 x, files_2 x; compressed 40', '... storage is as before');

-- 3. the same script without dry_run converts
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/rewrite.sql > :tmp/rewrite.out 2>&1; echo $?`
SELECT is(:'rc' || '; ' || pg_temp.state(), '0; files e, files_1 e, files_2 e; compressed 0',
          'without dry_run the script sets EXTERNAL on the tree and rewrites every value');
SELECT is((SELECT md5(string_agg(md5(body), ',' ORDER BY id)) FROM files), (SELECT data FROM before),
          '... the data is the same');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_toast_dry_run;
\set rc `rm -rf :tmp`

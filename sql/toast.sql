-- toast_profile(), bytea_storage and storage_migration_script(): output
-- shape, errors, and behaviour on committed data in a scratch database
-- (hint bits, dirty buffers, executing generated scripts).
\set VERBOSITY terse

-- Output columns (names are part of the API).
SELECT string_agg(a.attname, ', ' ORDER BY a.attnum) AS toast_profile_columns
  FROM pg_proc p, unnest(p.proargnames, p.proargmodes) WITH ORDINALITY AS a(attname, mode, attnum)
 WHERE p.oid = 'storagelab.toast_profile(regclass,name,integer)'::regprocedure AND a.mode = 't';
SELECT count(*) AS bytea_storage_columns FROM pg_attribute
 WHERE attrelid = 'storagelab.bytea_storage'::regclass AND attnum > 0;

-- Errors.
CREATE TABLE toast_err (id int, v bytea, t text);
CREATE VIEW toast_err_v AS SELECT * FROM toast_err;
CREATE TABLE toast_err_p (id int, v bytea) PARTITION BY RANGE (id);
SELECT * FROM storagelab.toast_profile('toast_err', 'nope');
SELECT * FROM storagelab.toast_profile('toast_err', 'id');
SELECT * FROM storagelab.toast_profile('toast_err_v', 'v');
SELECT * FROM storagelab.toast_profile('toast_err_p', 'v');
SELECT * FROM storagelab.toast_profile('toast_err', 'v', -1);
SELECT * FROM storagelab.toast_profile('toast_err', NULL);
SELECT storagelab.storage_migration_script('toast_err', 'v', 'plain');
SELECT storagelab.storage_migration_script('toast_err', 'v', 'external lz4');
SELECT storagelab.storage_migration_script('toast_err', 'id');
SELECT storagelab.storage_migration_script('toast_err_v', 'v');
SELECT storagelab.storage_migration_script('toast_err', 'nope');
SELECT storagelab.storage_migration_script('toast_err', NULL) IS NULL AS null_input_gives_null;
-- An empty table: zero counts, no TOAST read, advice "keep".
SELECT rows_scanned, null_values, raw_bytes, stored_bytes, content_types, prefix_entropy,
       left(advice, 4) AS advice
  FROM storagelab.toast_profile('toast_err', 't');
DROP VIEW toast_err_v;
DROP TABLE toast_err, toast_err_p;

-- Committed data, in a scratch database.
CREATE DATABASE storagelab_toast_scratch;
\c storagelab_toast_scratch
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE EXTENSION pageinspect;
CREATE EXTENSION pg_buffercache;
RESET client_min_messages;
\set VERBOSITY terse
-- What is compressed, and how, must not depend on the major's default (19
-- defaults to lz4 where built with it, earlier majors to pglz).
SET default_toast_compression = pglz;
\i test/fixtures/toast.sql
-- A rolled-back insert and a committed delete: dead tuples on the pages.
BEGIN;
INSERT INTO toast_forms (v) SELECT pg_temp.noise(3000, g) FROM generate_series(50, 54) g;
ROLLBACK;
DELETE FROM toast_forms WHERE id IN (4, 8, 12);

-- Tuples nobody has read since they were committed carry no hint bits.
CREATE FUNCTION pg_temp.unhinted(rel regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM generate_series(0, pg_relation_size(rel) / current_setting('block_size')::int - 1) b,
         heap_page_items(get_raw_page(rel::text, b::int)) i
   WHERE i.lp_flags = 1 AND i.t_infomask & (256 | 512) = 0 $$;   -- no XMIN_COMMITTED/INVALID
SELECT reltoastrelid::regclass AS toast_rel FROM pg_class WHERE relname = 'toast_forms' \gset
CHECKPOINT;
SELECT pg_temp.unhinted('toast_forms') AS heap_unhinted_before \gset
SELECT pg_temp.unhinted(:'toast_rel') AS toast_unhinted_before \gset
SELECT :heap_unhinted_before > 0 AND :toast_unhinted_before > 0 AS fixture_is_unhinted;
SELECT rows_scanned = 24 AS counted_only_committed_live_rows, sniffed_values > 0 AS sniffed
  FROM storagelab.toast_profile('toast_forms', 'v');
SELECT pg_temp.unhinted('toast_forms') = :heap_unhinted_before AS heap_hint_bits_untouched,
       pg_temp.unhinted(:'toast_rel') = :toast_unhinted_before AS toast_hint_bits_untouched;
SELECT count(*) FILTER (WHERE isdirty) AS dirty_buffers_after_profile
  FROM pg_buffercache
 WHERE relfilenode IN (pg_relation_filenode('toast_forms'), pg_relation_filenode(:'toast_rel'))
   AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database());
-- The oracle: the same census value by value (a plain SELECT, which does set
-- hint bits), with core functions only; the form of each value (inline,
-- external) against toastinfo is in test/toast_profile.sql, which skips it
-- where toastinfo is not packaged.
SELECT (p.null_values, p.pglz_values, p.lz4_values, p.raw_bytes, p.stored_bytes)
     = (SELECT count(*) FILTER (WHERE v IS NULL),
                count(*) FILTER (WHERE c = 'pglz'), count(*) FILTER (WHERE c = 'lz4'),
                sum(octet_length(v))::bigint, sum(pg_column_size(v))::bigint
          FROM (SELECT v, pg_column_compression(v) AS c FROM toast_forms) s)
       AS census_equals_oracle
  FROM storagelab.toast_profile('toast_forms', 'v') p;
SELECT pg_temp.unhinted('toast_forms') < :heap_unhinted_before AS a_select_does_set_hint_bits;

-- bytea_storage on this database.
SELECT relation, column_name, storage, sample_rows, evidence, status
  FROM storagelab.bytea_storage ORDER BY 1, 2;

-- Generated scripts, executed by psql.
SELECT md5(string_agg(coalesce(md5(v), 'null'), ',' ORDER BY id)) AS checksum_before FROM toast_forms \gset
SELECT count(*) AS compressed_before FROM toast_forms WHERE pg_column_compression(v) IS NOT NULL \gset
SELECT '/tmp/storagelab_toast_' || pg_backend_pid() || '.sql' AS script_file \gset
\setenv STORAGELAB_TOAST_SCRIPT :script_file
\pset tuples_only on
\pset format unaligned
-- 1. SET STORAGE EXTERNAL only: the catalog changes, stored values do not.
\o :script_file
SELECT storagelab.storage_migration_script('toast_forms', 'v');
\o
\! psql -X -q -v ON_ERROR_STOP=1 -d storagelab_toast_scratch -f "$STORAGELAB_TOAST_SCRIPT" >/dev/null 2>&1 && echo 'script 1 ran' || echo 'script 1 FAILED'
\pset tuples_only off
\pset format aligned
SELECT attstorage AS attstorage_after FROM pg_attribute WHERE attrelid = 'toast_forms'::regclass AND attname = 'v';
SELECT count(*) = :compressed_before AND :compressed_before > 0 AS compressed_values_unchanged
  FROM toast_forms WHERE pg_column_compression(v) IS NOT NULL;
-- 2. With rewrite_existing: no compressed value left, data identical.
\pset tuples_only on
\pset format unaligned
\o :script_file
SELECT storagelab.storage_migration_script('toast_forms', 'v', 'external', rewrite_existing => true);
\o
\! psql -X -q -v ON_ERROR_STOP=1 -d storagelab_toast_scratch -f "$STORAGELAB_TOAST_SCRIPT" >/dev/null 2>&1 && echo 'script 2 ran' || echo 'script 2 FAILED'
\pset tuples_only off
\pset format aligned
SELECT count(*) AS compressed_after FROM toast_forms WHERE pg_column_compression(v) IS NOT NULL;
SELECT md5(string_agg(coalesce(md5(v), 'null'), ',' ORDER BY id)) = :'checksum_before' AS data_identical
  FROM toast_forms;
SELECT external_compressed, inline_compressed FROM storagelab.toast_profile('toast_forms', 'v');
-- 3. A partitioned table, text column, to EXTENDED lz4 with rewrite.
CREATE TABLE toast_parts (id int, t text) PARTITION BY RANGE (id);
CREATE TABLE toast_parts_1 PARTITION OF toast_parts FOR VALUES FROM (0) TO (100);
CREATE TABLE toast_parts_2 PARTITION OF toast_parts FOR VALUES FROM (100) TO (200);
INSERT INTO toast_parts SELECT g, repeat('partitioned text ' || g, 300) FROM generate_series(1, 199) g;
SELECT md5(string_agg(md5(t), ',' ORDER BY id)) AS parts_before FROM toast_parts \gset
SELECT count(*) FILTER (WHERE pg_column_compression(t) = 'pglz') AS pglz_before FROM toast_parts;
\pset tuples_only on
\pset format unaligned
\o :script_file
SELECT storagelab.storage_migration_script('toast_parts', 't', 'lz4', true);
\o
\! psql -X -q -v ON_ERROR_STOP=1 -d storagelab_toast_scratch -f "$STORAGELAB_TOAST_SCRIPT" >/dev/null 2>&1 && echo 'script 3 ran' || echo 'script 3 FAILED'
\pset tuples_only off
\pset format aligned
SELECT c.relname, a.attstorage, a.attcompression
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relname LIKE 'toast_parts%' AND a.attname = 't' ORDER BY 1;
SELECT count(*) FILTER (WHERE pg_column_compression(t) = 'pglz') AS pglz_after,
       count(*) FILTER (WHERE pg_column_compression(t) = 'lz4') AS lz4_after,
       md5(string_agg(md5(t), ',' ORDER BY id)) = :'parts_before' AS data_identical
  FROM toast_parts;
-- 4. Names with a line break, quotes and a dollar sign stay inside their quotes and comments.
CREATE TABLE "odd
name's $x" ("col ""q""
2" bytea);
INSERT INTO "odd
name's $x" SELECT convert_to(repeat('odd ', 2000), 'UTF8');
\pset tuples_only on
\pset format unaligned
\o :script_file
SELECT storagelab.storage_migration_script(c.oid, a.attname, 'external', true)
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1
 WHERE c.relname LIKE 'odd%';
\o
\! psql -X -q -v ON_ERROR_STOP=1 -d storagelab_toast_scratch -f "$STORAGELAB_TOAST_SCRIPT" >/dev/null 2>&1 && echo 'script 4 ran' || echo 'script 4 FAILED'
\pset tuples_only off
\pset format aligned
SELECT a.attstorage, (SELECT count(*) FROM pg_class WHERE relname LIKE 'odd%') AS tables,
       (SELECT count(*) FROM "odd
name's $x" WHERE pg_column_compression("col ""q""
2") IS NOT NULL) AS compressed_left,
       (SELECT count(*) FROM pg_tables WHERE schemaname = 'public') AS all_tables
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1
 WHERE c.relname LIKE 'odd%';
\! rm -f "$STORAGELAB_TOAST_SCRIPT"

\c contrib_regression
DROP DATABASE storagelab_toast_scratch;

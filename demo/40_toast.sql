-- How bytea values are stored in TOAST.  Pagila's only bytea
-- column is staff.picture; a temporary table of "uploads" (PNG/JPEG/gzip
-- files and compressible documents, 1,000 rows) shows the advice on both kinds.
\set QUIET on
CREATE TEMP TABLE demo_uploads (id serial PRIMARY KEY, kind text, body bytea);
INSERT INTO demo_uploads (kind, body)
  SELECT k, m || (SELECT decode(string_agg(md5((g * 1000 + i)::text), ''), 'hex')
                    FROM generate_series(1, 400) i)
    FROM generate_series(1, 200) g,
         (VALUES ('png', '\x89504e470d0a1a0a'::bytea), ('jpeg', '\xffd8ffe0'::bytea),
                 ('gzip', '\x1f8b0800'::bytea)) AS t(k, m);
CREATE TEMP TABLE demo_documents (id serial PRIMARY KEY, body bytea);
INSERT INTO demo_documents (body)
  SELECT convert_to(repeat('<p>Invoice ' || g || ': thank you for renting with us.</p>', 120), 'UTF8')
    FROM generate_series(1, 400) g;
\set QUIET off

\echo '-- SELECT relation, column_name, advice, storage, toast_pretty, table_pretty, sample_rows FROM storagelab.bytea_storage;'
SELECT relation, column_name, advice, storage, toast_pretty, table_pretty, sample_rows
  FROM storagelab.bytea_storage
 ORDER BY relation::text LIKE 'pg_temp%', relation::text, column_name;

\echo '-- SELECT * FROM storagelab.toast_profile(''demo_uploads'', ''body'');   (exact census)'
\x on
SELECT * FROM storagelab.toast_profile('demo_uploads', 'body');
\x off

\echo '-- SELECT advice, null_values, inline_uncompressed, inline_compressed, external_compressed, compression_ratio FROM storagelab.toast_profile(''demo_documents'', ''body'');'
SELECT advice, null_values, inline_uncompressed, inline_compressed, external_compressed,
       compression_ratio
  FROM storagelab.toast_profile('demo_documents', 'body');

\echo '-- SELECT storagelab.storage_migration_script(''staff'', ''picture'', ''external'', rewrite_existing => true);'
\pset tuples_only on
\pset format unaligned
SELECT storagelab.storage_migration_script('staff', 'picture', 'external', rewrite_existing => true);
\pset tuples_only off
\pset format aligned

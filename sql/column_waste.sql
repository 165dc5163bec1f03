-- column_waste, alignment_padding, column_profile: shape of the output and
-- the errors (pgTAP in test/column_waste*.sql checks the numbers).
\set VERBOSITY terse

-- The views' columns.
SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute WHERE attrelid = 'storagelab.alignment_padding'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute WHERE attrelid = 'storagelab.column_waste'::regclass AND attnum > 0
 ORDER BY attnum;

-- Fixed-width columns only: every number is deterministic.  Without
-- autovacuum: an autovacuum ANALYZE between the INSERT and the "never
-- analyzed" queries (seconds apart on a slow server) would give it statistics.
CREATE TABLE cw_shape (b bool NOT NULL, i int8 NOT NULL, s int2 NOT NULL, n int8 NOT NULL,
                       t text) WITH (autovacuum_enabled = off);
INSERT INTO cw_shape SELECT g % 2 = 0, g, 1, g % 100, 'x' FROM generate_series(1, 1000) g;

-- never analyzed
SELECT relation, suggested_order, saved_bytes, advice, status
  FROM storagelab.alignment_padding WHERE relation = 'cw_shape'::regclass;
SELECT column_name, column_type, suggested_type, advice
  FROM storagelab.column_waste WHERE relation = 'cw_shape'::regclass ORDER BY column_name;

ANALYZE cw_shape;
SELECT relation, row_bytes, padding_bytes_per_row, suggested_order, saved_bytes_per_row,
       saved_bytes > 0 AS saves_pages, evidence, status
  FROM storagelab.alignment_padding WHERE relation = 'cw_shape'::regclass;
SELECT column_name, column_type, suggested_type, advice, saved_bytes_per_row,
       saved_bytes_per_row_reordered, evidence, min_value, max_value
  FROM storagelab.column_waste WHERE relation = 'cw_shape'::regclass ORDER BY column_name;

-- one exact pass
SELECT column_name, column_type, row_count, null_frac, min_value, max_value, text_kind
  FROM storagelab.column_profile('cw_shape');
SELECT column_name, suggested_type, evidence
  FROM storagelab.column_waste WHERE relation = 'cw_shape'::regclass ORDER BY column_name;
SELECT count(*) AS profiled_columns FROM storagelab_internal.column_profiles
 WHERE relid = 'cw_shape'::regclass;

-- A retyped column's profile is ignored (and statistics are gone).
ALTER TABLE cw_shape ALTER COLUMN n TYPE int4;
SELECT source FROM storagelab_internal.column_facts WHERE relid = 'cw_shape'::regclass AND attname = 'n';

-- Errors, by SQLSTATE.
\set VERBOSITY sqlstate
SELECT * FROM storagelab.column_profile('pg_catalog.pg_class_oid_index');
CREATE VIEW cw_view AS SELECT 1 AS x;
SELECT * FROM storagelab.column_profile('cw_view');
SELECT count(*) FROM storagelab.column_profile(NULL);
SELECT storagelab_internal.heap_pages(10, 0, NULL, false);
SELECT storagelab_internal.heap_pages(10, 24, 5, false);
SELECT storagelab_internal.heap_tuple_bytes('{8,1}', '{d}', '{p,p}', '{8,1}', '{0,0}', '{0,0}', NULL,
                                   NULL, NULL, NULL, NULL, NULL, NULL);
\set VERBOSITY terse
SELECT storagelab_internal.text_kind('2024-02-29'), storagelab_internal.text_kind('007');

-- Profiles of dropped tables are removed by the next column_profile() call.
DROP VIEW cw_view;
DROP TABLE cw_shape;
CREATE TABLE cw_other (v int8);
SELECT count(*) FROM storagelab.column_profile('cw_other');
SELECT count(*) AS profiles_left FROM storagelab_internal.column_profiles p
 WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = p.relid);
DROP TABLE cw_other;
DELETE FROM storagelab_internal.column_profiles;

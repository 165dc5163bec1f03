-- pgTAP: layout_migration_script() and the rewrite engine behind it
-- (storagelab_internal.rewrite_statements).  Every generated script is
-- executed with psql -v ON_ERROR_STOP=1 -f in a scratch database.  Oracles:
--   * the object fixture of the INT->BIGINT tests (every dependent-object
--     kind, hostile identifiers): snap.catalog() and snap.data() equal before
--     and after a reorder of its tables, and after a swap undone by swap_back;
--   * seeded tables (a padded table, the jointly narrowable users table,
--     char(n), text holding UUIDs, numeric holding integers): the rebuilt
--     table's pg_relation_size (after VACUUM, which drops the pages a bulk
--     load preallocates on PostgreSQL 16+) within 5 % of the plan's
--     prediction, and every row equal to what it was, joined by key;
--   * refusals: SQLSTATEs and the value named; the in-transaction re-check.
-- Data sized to the oracle: the seeded tables have 10,000 rows (users
-- 20,000), not 50,000 (100,000): 60 to 160 pages each, so the 5 % margin
-- of the size check is still 3 to 8 pages while a prediction is off by at
-- most its last partly filled page; the integer values are spread (g * 5,
-- g * 10) to keep each column's range, hence the same planned types.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_layout;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_layout TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_layout
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_objects.sql
SET client_min_messages = warning;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.runs (name text, rc text);

SELECT plan(64);

-- 1. the engine: create, copy, index, swap, then swap_back and discard,
-- leave the object fixture as it was
\set parent '"Sch; --x"."Parent ""Q"" $storagelab$"'
\set child '"Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"'
CREATE TABLE snap.engine AS
SELECT jsonb_build_array(jsonb_build_object('relation', :'parent'::text, 'columns',
         '[{"column_name": "gen"}, {"column_name": "note"}, {"column_name": "Id"}, {"column_name": "select"}, {"column_name": "code"}]'::jsonb)) AS tables;
SELECT 'BEGIN;' UNION ALL
(SELECT r.statement || ';' FROM snap.engine e,
        unnest(ARRAY['create', 'copy', 'index', 'swap']) WITH ORDINALITY p(phase, n),
        storagelab_internal.rewrite_statements(e.tables, p.phase) r ORDER BY p.n, r.ord)
UNION ALL SELECT 'COMMIT;' UNION ALL SELECT 'BEGIN;' UNION ALL
(SELECT r.statement || ';' FROM snap.engine e,
        unnest(ARRAY['swap_back', 'validate', 'discard']) WITH ORDINALITY p(phase, n),
        storagelab_internal.rewrite_statements(e.tables, p.phase) r ORDER BY p.n, r.ord)
UNION ALL SELECT 'COMMIT;'
\g (format=unaligned tuples_only=on) :tmp/engine.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/engine.sql > :tmp/engine.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'engine: swap then swap_back ran');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'engine: after swap_back every object is as it was');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before', 'engine: after swap_back the data is as it was');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = :'parent'::regclass AND attnum > 0 AND NOT attisdropped),
          '{Id,code,select,gen,note}', 'engine: the original table is back in place');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::int8, 'engine: discard left nothing behind');
SELECT throws_ok($$SELECT * FROM storagelab_internal.rewrite_statements('[]', 'create')$$, '22023', NULL,
                 'engine: an empty table list is refused');
SELECT throws_ok($$SELECT * FROM storagelab_internal.rewrite_statements('[{"relation": "\"Sch; --x\".events_2024", "columns": [{"column_name": "at"}, {"column_name": "parent_id"}, {"column_name": "n"}]}]', 'create')$$,
                 '0A000', 'the rewrite engine rebuilds a partition only with its partitioned table', 'engine: a partition alone is refused');
SELECT throws_ok($$SELECT * FROM storagelab_internal.rewrite_statements('[{"relation": "\"Sch; --x\".events", "columns": []}]', 'nonsense')$$,
                 '22023', NULL, 'engine: an unknown phase is refused');

-- 2. layout scripts on the object fixture: both tables reordered; every
-- object re-created exactly, the data equal
\set file parent
SELECT storagelab.layout_migration_script(:'parent', column_order => '{gen,note,Id,select,code}')
\g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
\set file child
SELECT storagelab.layout_migration_script(:'child', column_order => ARRAY['code', E'new\nline', 'parent ID', 'order']::name[])
\g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
SELECT is((SELECT array_agg(rc ORDER BY name) FROM snap.runs), '{0,0}', 'both layout scripts ran to COMMIT');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = :'parent'::regclass AND attnum > 0 AND NOT attisdropped),
          '{gen,note,Id,select,code}', 'the parent has its new column order');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = :'child'::regclass AND attnum > 0 AND NOT attisdropped),
          ARRAY['code', E'new\nline', 'parent ID', 'order'], 'the child has its new column order');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'every object re-created exactly: indexes (expression, partial), constraints, foreign keys both ways, views, materialized views, rules, triggers, policies, functions, publications, statistics objects, grants, comments, replica identity, clustering');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table, view and materialized view unchanged');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::int8, 'no table, index or sequence left behind');
SELECT is((SELECT count(*) FROM pg_constraint WHERE NOT convalidated), 0::int8, 'every constraint is valid');
SELECT is(pg_get_serial_sequence(:'parent', 'Id')::regclass::text, '"Sch; --x"."Parent ""Q"" $storagelab$_Id_seq"',
          'the serial sequence is owned by the new table');
SELECT is((SELECT last_value FROM "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three_order_seq"), 500::int8,
          'the identity sequence has the old one''s name and position');
SELECT is((SELECT seqmax FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence(:'child', 'order')::regclass),
          2000000000::int8, 'the identity keeps its MAXVALUE');
SELECT lives_ok(format('INSERT INTO %s (code, note) VALUES (''c1'', ''new'')', :'parent'),
                'the serial default goes on from where it was');
SELECT is((SELECT max("Id") FROM "Sch; --x"."Parent ""Q"" $storagelab$"), 501, 'the next key is 501');
SELECT lives_ok(format('INSERT INTO %s ("parent ID", code) VALUES (501, ''c1'')', :'child'), 'the identity goes on');
SELECT is((SELECT max("order") FROM "Sch; --x"."chïld;-- of ""Parent"" with a name that is sixty-three bytes lo"), 501,
          'the next identity value is 501');
SELECT throws_ok($$INSERT INTO "Sch; --x".events VALUES (date '2025-02-01', 100000, 1)$$, '23503', NULL,
                 'the foreign key of the partitioned table points to the new parent');
SELECT throws_ok(format('DELETE FROM %s WHERE "Id" = 1', :'parent'), '23503', NULL,
                 'the new parent is referenced: it cannot lose a referenced row');

-- 3. prediction and data on seeded tables
CREATE TABLE public.lm_padded (id int8 PRIMARY KEY, a boolean, b int8, c boolean, d int8, e boolean, f int4, g int8);
INSERT INTO public.lm_padded
SELECT g, g % 2 = 0, g::int8 * 3000000000, true, g * 10, g % 3 = 0, g * 5, g * 5 FROM generate_series(1, 10000) g;
CREATE TABLE public.lm_users (uid bigint PRIMARY KEY, age bigint, gender bigint, lastvisit timestamp);
INSERT INTO public.lm_users
SELECT g, 13 + (g * 7) % 38, g % 3, timestamp '2026-01-01' + g * interval '1 minute' FROM generate_series(1, 20000) g;
CREATE TABLE public.lm_char (id int8 PRIMARY KEY, code char(40) NOT NULL, n int4);
INSERT INTO public.lm_char SELECT g, 'c' || g, g * 5 FROM generate_series(1, 10000) g;
CREATE TABLE public.lm_uuid (id int8 PRIMARY KEY, ref text, at timestamptz);
INSERT INTO public.lm_uuid
SELECT g, CASE WHEN g % 10 <> 0 THEN md5(g::text)::uuid::text END, timestamptz '2026-01-01' + g * interval '1 s'
  FROM generate_series(1, 10000) g;
CREATE TABLE public.lm_numeric (id int8 PRIMARY KEY, amount numeric, qty numeric NOT NULL, at timestamptz);
INSERT INTO public.lm_numeric
SELECT g, g * 10 % 100000 + 1000, g % 50, timestamptz '2026-01-01' + g * interval '1 s' FROM generate_series(1, 10000) g;
ANALYZE public.lm_padded, public.lm_users, public.lm_char, public.lm_uuid, public.lm_numeric;
SELECT count(*) FROM (VALUES ('public.lm_padded'), ('public.lm_users'), ('public.lm_char'), ('public.lm_uuid'), ('public.lm_numeric')) v(r),
       storagelab.column_profile(r::regclass) \g /dev/null

-- every row before, as jsonb keyed by its key; char(n) compared without its padding
CREATE TABLE snap.rows_before AS
SELECT 'public.lm_padded' AS rel, x.id::text AS key, to_jsonb(x) AS r FROM public.lm_padded x
UNION ALL SELECT 'public.lm_users', x.uid::text, to_jsonb(x) FROM public.lm_users x
UNION ALL SELECT 'public.lm_char', x.id::text, to_jsonb(x) || jsonb_build_object('code', rtrim(x.code)) FROM public.lm_char x
UNION ALL SELECT 'public.lm_uuid', x.id::text, to_jsonb(x) FROM public.lm_uuid x
UNION ALL SELECT 'public.lm_numeric', x.id::text, to_jsonb(x) FROM public.lm_numeric x;
CREATE TABLE snap.predicted AS
SELECT relation::text AS rel, column_changes, column_order, estimated_bytes_after
  FROM storagelab.table_rewrite_plan WHERE relation::text LIKE 'lm\_%';
SELECT is((SELECT array_agg(rel || ': ' || (SELECT string_agg(e->>'column_name' || ' ' || (e->>'to'), ', ' ORDER BY e->>'column_name')
                                           FROM jsonb_array_elements(column_changes) e) ORDER BY rel) FROM snap.predicted),
          ARRAY['lm_char: code character varying(40)', 'lm_numeric: amount integer, qty integer',
                'lm_padded: d integer, g integer', 'lm_users: age smallint, gender smallint',
                'lm_uuid: ref uuid'],
          'the plans narrow char(n), numeric, padded bigints, the jointly narrowable columns and UUID text');

-- layout_migration_plan(): the tables saving at least the threshold, with
-- their scripts; a partition (refused by the engine) gets advice, no script
CREATE TABLE public.lm_part (k int NOT NULL, a boolean, b int8, c boolean, d int8) PARTITION BY RANGE (k);
CREATE TABLE public.lm_part_1 PARTITION OF public.lm_part FOR VALUES FROM (0) TO (1000000);
INSERT INTO public.lm_part SELECT g, true, g, false, g FROM generate_series(1, 20000) g;
ANALYZE public.lm_part_1;
SELECT set_eq($$SELECT relation::text FROM storagelab.layout_migration_plan() WHERE relation::text LIKE 'lm\_%'$$,
              $$SELECT relation::text FROM storagelab.table_rewrite_plan
                 WHERE relation::text LIKE 'lm\_%' AND estimated_saved_bytes >= 0.1 * estimated_bytes_now$$,
              'plan: the tables whose plan saves at least 10 % of the table');
SELECT is((SELECT count(*) FROM storagelab.layout_migration_plan() p
            WHERE p.relation::text LIKE 'lm\_%' AND p.relation::text <> 'lm_part_1'
              AND p.script IS NOT DISTINCT FROM storagelab.layout_migration_script(p.relation)),
          (SELECT count(*) FROM storagelab.layout_migration_plan() p WHERE p.relation::text LIKE 'lm\_%' AND p.relation::text <> 'lm_part_1'),
          'plan: each row''s script is layout_migration_script() of its table');
SELECT is((SELECT advice || ' / ' || coalesce(script, 'no script') FROM storagelab.layout_migration_plan() WHERE relation = 'public.lm_part_1'::regclass),
          'the rewrite engine rebuilds a partition only with its partitioned table / no script',
          'plan: a partition is listed with the reason it gets no script');
INSERT INTO storagelab.settings VALUES ('layout_migration.min_saved_pct', '100'), ('layout_migration.min_saved_bytes', '1TB');
SELECT is((SELECT count(*) FROM storagelab.layout_migration_plan() WHERE relation::text LIKE 'lm\_%'), 0::int8,
          'plan: above every saving, nothing is listed (the settings are the threshold)');
UPDATE storagelab.settings SET value = '1kB' WHERE name = 'layout_migration.min_saved_bytes';
SELECT is((SELECT count(*) FROM storagelab.layout_migration_plan() WHERE relation::text LIKE 'lm\_%'),
          (SELECT count(*) FROM storagelab.table_rewrite_plan WHERE relation::text LIKE 'lm\_%' AND estimated_saved_bytes >= 1024),
          'plan: a saving of min_saved_bytes is enough whatever its percentage');
DELETE FROM storagelab.settings WHERE name LIKE 'layout_migration.%';
DROP TABLE public.lm_part;

\set file lm_padded
SELECT storagelab.layout_migration_script('public.lm_padded') \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
\set file lm_users
SELECT storagelab.layout_migration_script('public.lm_users') \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
\set file lm_char
SELECT storagelab.layout_migration_script('public.lm_char') \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
\set file lm_uuid
SELECT storagelab.layout_migration_script('public.lm_uuid') \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
\set file lm_numeric
SELECT storagelab.layout_migration_script('public.lm_numeric') \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES (:'file', :'rc');
SELECT is((SELECT array_agg(rc ORDER BY name) FROM snap.runs WHERE name LIKE 'lm\_%'), '{0,0,0,0,0}',
          'the five layout scripts ran to COMMIT');
VACUUM public.lm_padded, public.lm_users, public.lm_char, public.lm_uuid, public.lm_numeric;
SELECT ok(abs(pg_relation_size(rel) - estimated_bytes_after) <= 0.05 * estimated_bytes_after,
          format('%s: predicted %s bytes, measured %s (within 5 %%)', rel, estimated_bytes_after, pg_relation_size(rel)))
  FROM snap.predicted ORDER BY rel;
SELECT is((SELECT array_agg(rel || ': ' || (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                                            FROM pg_attribute a WHERE a.attrelid = rel::regclass AND a.attnum > 0 AND NOT a.attisdropped)
                                      ORDER BY rel) FROM snap.predicted),
          (SELECT array_agg(rel || ': ' || (SELECT string_agg(c || ' ' || coalesce((SELECT e->>'to' FROM jsonb_array_elements(column_changes) e
                                                                                     WHERE e->>'column_name' = c),
                                                                                    format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY n)
                                            FROM unnest(column_order) WITH ORDINALITY u(c, n)
                                            JOIN pg_attribute a ON a.attrelid = rel::regclass AND a.attname = c)
                            ORDER BY rel) FROM snap.predicted),
          'each table has the planned column order and types');
SELECT is((SELECT count(*) FROM snap.rows_before b
             JOIN (SELECT 'public.lm_padded' AS rel, x.id::text AS key, to_jsonb(x) AS r FROM public.lm_padded x
                   UNION ALL SELECT 'public.lm_users', x.uid::text, to_jsonb(x) FROM public.lm_users x
                   UNION ALL SELECT 'public.lm_char', x.id::text, to_jsonb(x) FROM public.lm_char x
                   UNION ALL SELECT 'public.lm_uuid', x.id::text, to_jsonb(x) FROM public.lm_uuid x
                   UNION ALL SELECT 'public.lm_numeric', x.id::text, to_jsonb(x) FROM public.lm_numeric x) a
               ON a.rel = b.rel AND a.key = b.key AND a.r = b.r),
          (SELECT count(*) FROM snap.rows_before), 'every row of every table is equal to what it was, joined by key');
SELECT is((SELECT count(*) FROM public.lm_padded) + (SELECT count(*) FROM public.lm_users) + (SELECT count(*) FROM public.lm_char)
          + (SELECT count(*) FROM public.lm_uuid) + (SELECT count(*) FROM public.lm_numeric),
          (SELECT count(*) FROM snap.rows_before), 'and no row more');
SELECT is((SELECT count(*) FROM storagelab.table_rewrite_plan WHERE relation::text LIKE 'lm\_%'), 0::int8,
          'after the rebuilds no plan is left for them (ANALYZE ran)');

-- 4. refusals
CREATE TABLE public.lm_bad (id int8 PRIMARY KEY, v int8, t text);
INSERT INTO public.lm_bad SELECT g, g, 'x' FROM generate_series(1, 10) g;
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"nope": "int"}')$$,
                 '42703', 'column nope of public.lm_bad does not exist', 'an unknown column in column_types: 42703');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_order => '{id,v}')$$,
                 '22023', 'columns of public.lm_bad are missing from the new order', 'a column missing from column_order: 22023');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_order => '{id,v,t,nope}')$$,
                 '42703', NULL, 'an unknown column in column_order: 42703');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"v": "int; DROP TABLE x"}')$$,
                 '22023', 'unknown type for column v', 'a type that is not a type name: 22023');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"v": "smallint"}', mode => 'sideways')$$,
                 '22023', NULL, 'an unknown mode is refused');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"id": "numeric"}')$$,
                 '0A000', NULL, 'a key column is not retyped to a type other than an integer (integer keys: test/layout_migration_keys.sql)');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('public.lm_bad')$$, '22023', NULL,
                 'no plan and no override: nothing to do');
UPDATE public.lm_bad SET v = 40000 WHERE id = 7;
SELECT throws_like($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"v": "smallint"}')$$,
                   'a value of column v of public.lm_bad does not fit type smallint',
                   'pre-flight: a value that does not fit refuses the script');
CREATE FUNCTION pg_temp.error_detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE d text;
BEGIN
  EXECUTE q;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RETURN d;
END $$;
SELECT is(pg_temp.error_detail($$SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"v": "smallint"}')$$),
          'The value ''40000'' would not be kept as it is.', 'pre-flight: the detail names the value');
UPDATE public.lm_bad SET v = 7 WHERE id = 7;
-- the script re-checks under its locks: a value written after generation stops it
\set file lm_bad
SELECT storagelab.layout_migration_script('public.lm_bad', column_types => '{"v": "smallint"}', column_order => '{id,t,v}')
\g (format=unaligned tuples_only=on) :tmp/:file.sql
UPDATE public.lm_bad SET v = 40000 WHERE id = 7;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
SELECT isnt(:'rc'::text, '0', 'the script stops when a value no longer fits');
\set out `grep -c "a value of column public.lm_bad.v does not fit type smallint" :tmp/:file.out`
SELECT is(:'out'::text, '1', 'and says which column');
SELECT is((SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'public.lm_bad'::regclass AND attname = 'v'),
          'bigint', 'the table is left as it was');
SELECT is(storagelab.layout_migration_script(NULL), NULL, 'NULL relation: NULL');

-- 5. every option of indexes, constraints, columns and the table, on a
-- table whose name contains " USING btree (": compared before and after
CREATE SCHEMA "lm opts";
CREATE UNLOGGED TABLE "lm opts"."o USING btree (v" (
  id int GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 3) PRIMARY KEY,
  name text COLLATE "C",
  v int,
  "a, b" text COMPRESSION pglz,
  payload text,
  rng int4range,
  big bigint NOT NULL DEFAULT 7,
  CONSTRAINT "u def" UNIQUE (v, id) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT u_nnd UNIQUE NULLS NOT DISTINCT (name, big),
  CONSTRAINT no_overlap EXCLUDE USING gist (rng WITH &&) WHERE (v > 0),
  CONSTRAINT v_small CHECK (v < 1000)
) WITH (fillfactor = 80, autovacuum_enabled = false, toast.autovacuum_enabled = false);
ALTER TABLE "lm opts"."o USING btree (v" ADD CONSTRAINT later_check CHECK (big > 0) NOT VALID;
ALTER TABLE "lm opts"."o USING btree (v" ALTER COLUMN payload SET STORAGE EXTERNAL;
ALTER TABLE "lm opts"."o USING btree (v" ALTER COLUMN v SET STATISTICS 42;
ALTER TABLE "lm opts"."o USING btree (v" ALTER COLUMN name SET (n_distinct = -0.5);
ALTER TABLE "lm opts"."o USING btree (v" REPLICA IDENTITY FULL;
INSERT INTO "lm opts"."o USING btree (v" (name, v, "a, b", payload, rng, big)
SELECT CASE WHEN g % 7 = 0 THEN NULL ELSE 'n' || g END, g % 100, 'ab' || g % 13, repeat('p', g % 50),
       int4range(g * 10, g * 10 + 5), g
  FROM generate_series(1, 3000) g;
CREATE INDEX t_desc ON "lm opts"."o USING btree (v" (name DESC, id);
CREATE INDEX t_nulls ON "lm opts"."o USING btree (v" (name NULLS FIRST, id DESC NULLS LAST);
CREATE INDEX t_opclass ON "lm opts"."o USING btree (v" (name text_pattern_ops, id);
CREATE INDEX t_collate ON "lm opts"."o USING btree (v" ((name::text) COLLATE "POSIX", id);
CREATE INDEX t_include ON "lm opts"."o USING btree (v" (id) INCLUDE (name, v);
CREATE UNIQUE INDEX t_unique ON "lm opts"."o USING btree (v" (name DESC NULLS LAST, id) WHERE v IS NOT NULL;
CREATE INDEX t_all ON "lm opts"."o USING btree (v" (name COLLATE "C" text_pattern_ops DESC NULLS LAST, id DESC)
  INCLUDE (v, "a, b") WITH (fillfactor = 70) WHERE v > 0;
CREATE INDEX t_literal ON "lm opts"."o USING btree (v" (coalesce(name, 'x, y) "z'), id) WHERE "a, b" <> ', )';
CREATE INDEX t_hash ON "lm opts"."o USING btree (v" USING hash (id);
CREATE INDEX t_expr ON "lm opts"."o USING btree (v" (lower(name), (v + 1));
ALTER INDEX "lm opts".t_expr ALTER COLUMN 2 SET STATISTICS 99;
COMMENT ON INDEX "lm opts".t_all IS 'every option';
COMMENT ON CONSTRAINT no_overlap ON "lm opts"."o USING btree (v" IS 'exclusion';
ANALYZE "lm opts"."o USING btree (v";
CREATE FUNCTION pg_temp.opts() RETURNS TABLE (k text, v text) LANGUAGE sql AS $$
  SELECT 'index ' || ic.relname, concat_ws(' | ', pg_get_indexdef(i.indexrelid), i.indisvalid, ic.reloptions::text,
                                           obj_description(i.indexrelid, 'pg_class'),
                                           (SELECT string_agg(a.attnum || ':' || a.attstattarget, ',') FROM pg_attribute a
                                             WHERE a.attrelid = i.indexrelid AND a.attstattarget > 0))
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = '"lm opts"."o USING btree (v"'::regclass
  UNION ALL
  SELECT 'constraint ' || c.conname, concat_ws(' | ', pg_get_constraintdef(c.oid), c.condeferrable, c.condeferred, c.convalidated,
                                               obj_description(c.oid, 'pg_constraint'))
    FROM pg_constraint c WHERE c.conrelid = '"lm opts"."o USING btree (v"'::regclass
  UNION ALL
  SELECT 'column ' || a.attname, concat_ws(' | ', format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attstorage, a.attcompression,
                                           a.attcollation::regcollation::text, a.attstattarget,
                                           (SELECT array_agg(o) FROM unnest(a.attoptions) o WHERE o LIKE 'n\_distinct%')::text,
                                           a.attidentity, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attrelid = '"lm opts"."o USING btree (v"'::regclass AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'table', concat_ws(' | ', c.relpersistence, c.relreplident, c.reloptions::text,
                            (SELECT t.reloptions::text FROM pg_class t WHERE t.oid = c.reltoastrelid))
    FROM pg_class c WHERE c.oid = '"lm opts"."o USING btree (v"'::regclass
  UNION ALL
  SELECT 'identity', concat_ws(' | ', s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle)
    FROM pg_sequence s WHERE s.seqrelid = pg_get_serial_sequence('"lm opts"."o USING btree (v"', 'id')::regclass
$$;
CREATE TABLE snap.opts_before AS SELECT * FROM pg_temp.opts();
\set file lm_opts
SELECT storagelab.layout_migration_script('"lm opts"."o USING btree (v"', column_order => '{rng,big,payload,"a, b",v,name,id}',
                                          column_types => '{"big": "bigint", "v": "int4"}')
\g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'options: the script ran to COMMIT');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = '"lm opts"."o USING btree (v"'::regclass AND attnum > 0 AND NOT attisdropped),
          '{rng,big,payload,"a, b",v,name,id}', 'options: the new column order');
SELECT set_eq('SELECT * FROM pg_temp.opts()', 'SELECT * FROM snap.opts_before',
              'options: every index (DESC, NULLS, operator class, collation, INCLUDE, predicate, expression, hash, reloptions, statistics target, comment), constraint (deferrable, NULLS NOT DISTINCT, exclusion, NOT VALID check), column (collation, compression, storage, statistics target, n_distinct, identity, default) and table option (UNLOGGED, reloptions, TOAST reloptions, replica identity) as it was');
SELECT throws_ok($$INSERT INTO "lm opts"."o USING btree (v" (name, v, rng) VALUES ('zz', 1, int4range(10, 12))$$, '23P01', NULL,
                 'options: the exclusion constraint is enforced');
SELECT is((SELECT max(id) FROM "lm opts"."o USING btree (v") , 10 + 3 * 2999, 'options: the identity values are kept');
INSERT INTO "lm opts"."o USING btree (v" (name, v) VALUES ('zz', 5);
SELECT is((SELECT max(id) FROM "lm opts"."o USING btree (v"), 10 + 3 * 3001, 'options: the identity goes on from its position (the failed insert above took one value)');

-- 6. online mode: every phase run with psql -v phase=..., writes between
-- them; the table ends as a twin that got the same writes without a rebuild
CREATE TABLE public.lm_online (uid bigint PRIMARY KEY, age bigint, gender bigint, lastvisit timestamp);
INSERT INTO public.lm_online
SELECT g, 13 + (g * 7) % 38, g % 3, timestamp '2026-01-01' + g * interval '1 minute' FROM generate_series(1, 20000) g;
CREATE TABLE public.lm_online_child (id int PRIMARY KEY, uid bigint REFERENCES public.lm_online);
INSERT INTO public.lm_online_child SELECT g, g FROM generate_series(1, 100) g;
CREATE VIEW public.lm_online_v AS SELECT uid, age FROM public.lm_online WHERE gender = 1;
CREATE TABLE public.lm_online_twin AS SELECT * FROM public.lm_online;
ANALYZE public.lm_online;
SELECT storagelab.column_profile('public.lm_online') \g /dev/null
CREATE TABLE snap.online_catalog AS SELECT * FROM snap.catalog() WHERE name LIKE '%lm\_online%' AND name NOT LIKE '%twin%';
SELECT storagelab.layout_migration_script('public.lm_online', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
CREATE FUNCTION pg_temp.writes(n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['public.lm_online', 'public.lm_online_twin'] LOOP
    EXECUTE format('INSERT INTO %s (uid, age, gender, lastvisit) VALUES (%s, 20, 1, timestamp ''2026-06-01'')', t, 100000 + n);
    EXECUTE format('UPDATE %s SET age = age + 1, lastvisit = timestamp ''2027-01-01'' WHERE uid %% 500 = %s', t, n);
    EXECUTE format('DELETE FROM %s WHERE uid = %s', t, 1000 + n);
  END LOOP;
END $$;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :tmp/online.sql > :tmp/online_start.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online start', :'rc');
SELECT pg_temp.writes(1);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=copy -d :DBNAME -f :tmp/online.sql > :tmp/online_copy.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online copy', :'rc');
SELECT pg_temp.writes(2);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=index -d :DBNAME -f :tmp/online.sql > :tmp/online_index.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online index', :'rc');
SELECT pg_temp.writes(3);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=replay -d :DBNAME -f :tmp/online.sql > :tmp/online_replay.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online replay', :'rc');
SELECT pg_temp.writes(4);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/online.sql > :tmp/online_swap.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online swap', :'rc');
SELECT pg_temp.writes(5);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=validate -d :DBNAME -f :tmp/online.sql > :tmp/online_validate.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online validate', :'rc');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=cleanup -d :DBNAME -f :tmp/online.sql > :tmp/online_cleanup.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('online cleanup', :'rc');
SELECT is((SELECT array_agg(name || ' ' || rc ORDER BY name) FROM snap.runs WHERE name LIKE 'online%'),
          '{"online cleanup 0","online copy 0","online index 0","online replay 0","online start 0","online swap 0","online validate 0"}',
          'online: every phase ran');
SELECT is((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
             FROM pg_attribute a WHERE a.attrelid = 'public.lm_online'::regclass AND a.attnum > 0 AND NOT a.attisdropped),
          'uid bigint, lastvisit timestamp without time zone, age smallint, gender smallint', 'online: the planned order and types');
SELECT set_eq('SELECT uid, age, gender, lastvisit FROM public.lm_online', 'SELECT uid, age, gender, lastvisit FROM public.lm_online_twin',
              'online: every row as in the twin that got the same writes');
SELECT set_eq($$SELECT * FROM snap.catalog() WHERE name LIKE '%lm\_online%' AND name NOT LIKE '%twin%'$$,
              'SELECT * FROM snap.online_catalog', 'online: the key, the foreign key of the child and the view as they were');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::int8, 'online: nothing left behind');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_layout;
DROP ROLE "storagelab test ""owner""";
DROP ROLE storagelab_test_reader;
\set rc `rm -rf :tmp`

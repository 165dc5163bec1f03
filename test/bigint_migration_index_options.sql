-- pgTAP: every option of an index's other columns survives the migration of
-- its integer column, in both modes: DESC, NULLS FIRST/LAST, operator
-- classes (text_pattern_ops), collations (COLLATE "C"), INCLUDE columns,
-- predicates, expressions, storage parameters, and column names and
-- literals that contain commas, quotes and parentheses, on a table whose
-- name contains " USING btree (".  The generated
-- scripts are executed (every phase in online mode) and pg_get_indexdef of
-- every index is compared before and after; the indexes are valid and used.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_index_options;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_index_options TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_index_options
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`

-- the same tables in two schemas: ixb for the blocking script, ixo for the online one
CREATE FUNCTION pg_temp.make(s name) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format($$
    CREATE SCHEMA %1$I;
    CREATE TABLE %1$I.t (id serial PRIMARY KEY, name text, v int, "a, b" text, "Q""(x" text);
    CREATE TABLE %1$I.child (id serial PRIMARY KEY, t_id int NOT NULL REFERENCES %1$I.t, name text);
    INSERT INTO %1$I.t (name, v, "a, b", "Q""(x")
      SELECT CASE WHEN g %% 7 = 0 THEN NULL ELSE 'n' || g END, g %% 100, 'ab' || g %% 13, 'q' || g %% 5 FROM generate_series(1, 3000) g;
    INSERT INTO %1$I.child (t_id, name) SELECT 1 + g %% 3000, 'c' || g FROM generate_series(1, 3000) g;
    CREATE INDEX t_desc ON %1$I.t (name DESC, id);
    CREATE INDEX t_nulls ON %1$I.t (name NULLS FIRST, id DESC NULLS LAST);
    CREATE INDEX t_desc_nulls_first ON %1$I.t (v DESC NULLS FIRST, id);
    CREATE INDEX t_opclass ON %1$I.t (name text_pattern_ops, id);
    CREATE INDEX t_collate ON %1$I.t (name COLLATE "C", id);
    CREATE INDEX t_include ON %1$I.t (id) INCLUDE (name, v);
    CREATE INDEX t_pred ON %1$I.t (v, id) WHERE v > 10 AND name <> '';
    CREATE UNIQUE INDEX t_unique ON %1$I.t (name DESC NULLS LAST, id) WHERE v IS NOT NULL;
    CREATE INDEX t_expr ON %1$I.t (lower(name), id);
    CREATE INDEX t_all ON %1$I.t (name COLLATE "C" text_pattern_ops DESC NULLS LAST, id DESC) INCLUDE (v, "a, b") WITH (fillfactor = 70) WHERE v > 0;
    CREATE INDEX t_names ON %1$I.t ("a, b" DESC, "Q""(x" COLLATE "C", id);
    CREATE INDEX t_literal ON %1$I.t (coalesce(name, 'x, y) "z'), id) WHERE "a, b" <> ', )';
    CREATE INDEX t_hash ON %1$I.t USING hash (id);
    CREATE INDEX child_opts ON %1$I.child (name text_pattern_ops DESC NULLS LAST, t_id) INCLUDE (id) WHERE name <> '';
    CREATE TABLE %1$I."u USING btree (v" (id int PRIMARY KEY, name text);
    INSERT INTO %1$I."u USING btree (v" SELECT g, 'u' || g FROM generate_series(1, 100) g;
    CREATE INDEX u_desc ON %1$I."u USING btree (v" (name DESC, id);
  $$, s);
END
$f$;
SELECT pg_temp.make('ixb'), pg_temp.make('ixo');
ANALYZE;
CREATE TABLE before AS
  SELECT n.nspname, c.relname, pg_get_indexdef(i.indexrelid) AS def
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname IN ('ixb', 'ixo');

SELECT plan(10);

SELECT is((SELECT count(*) FROM before WHERE nspname = 'ixo'), 18::bigint, 'the fixture has 18 indexes per schema');
SELECT storagelab.bigint_migration_group_script(ARRAY['ixb.t', 'ixb."u USING btree (v"']::regclass[], ARRAY['id', 'id']::name[])
\g (format=unaligned tuples_only=on) :tmp/b.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/b.sql > :tmp/b.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'blocking: the script runs to COMMIT');
SELECT storagelab.bigint_migration_group_script(ARRAY['ixo.t', 'ixo."u USING btree (v"']::regclass[], ARRAY['id', 'id']::name[], 'online')
\g (format=unaligned tuples_only=on) :tmp/o.sql
\set rc `for p in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/o.sql >> :tmp/o.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: every phase runs');
SELECT is(ARRAY(SELECT format('%s.%s %s', attrelid::regclass, attname, format_type(atttypid, NULL)) FROM pg_attribute
                 WHERE (attrelid IN ('ixb.t'::regclass, 'ixo.t'::regclass) AND attname = 'id')
                    OR (attrelid IN ('ixb.child'::regclass, 'ixo.child'::regclass) AND attname = 't_id') ORDER BY 1),
          ARRAY['ixb.child.t_id bigint', 'ixb.t.id bigint', 'ixo.child.t_id bigint', 'ixo.t.id bigint'],
          'both modes converted the key and its foreign key column');
CREATE TABLE after AS
  SELECT n.nspname, c.relname, pg_get_indexdef(i.indexrelid) AS def
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname IN ('ixb', 'ixo');
SELECT set_eq($$SELECT relname, def FROM after WHERE nspname = 'ixb'$$, $$SELECT relname, def FROM before WHERE nspname = 'ixb'$$,
              'blocking: every index has its name and its definition, every option of every column');
SELECT set_eq($$SELECT relname, def FROM after WHERE nspname = 'ixo'$$, $$SELECT relname, def FROM before WHERE nspname = 'ixo'$$,
              'online: every index has its name and its definition, every option of every column');
SELECT is((SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relnamespace IN ('ixb'::regnamespace, 'ixo'::regnamespace) AND NOT (i.indisvalid AND i.indisready)),
          0::bigint, 'every index is valid');
SELECT is((SELECT count(*) FROM pg_class WHERE relnamespace = 'ixo'::regnamespace AND relname LIKE 'storagelab%'), 0::bigint,
          'online: no new, old or log table is left');
-- the indexes work: index-only answers equal the table's
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT results_eq($$SELECT name, id FROM ixo.t WHERE name LIKE 'n12%' ORDER BY name, id$$,
                  $$SELECT name, id FROM ixb.t WHERE name LIKE 'n12%' ORDER BY name, id$$,
                  'online: the text_pattern_ops index answers as the blocking one');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT is((SELECT count(*) FROM ixo.t WHERE v > 0 AND name COLLATE "C" LIKE 'n2%'), (SELECT count(*) FROM ixb.t WHERE v > 0 AND name COLLATE "C" LIKE 'n2%'),
          'online: the table is intact');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_index_options;
\set rc `rm -rf :tmp`

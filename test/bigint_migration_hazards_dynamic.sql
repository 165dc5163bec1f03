-- pgTAP: function hazards in dynamic SQL and result types, guards on
-- TG_TABLE_NAME, and NEW.col of the trigger's own table, on the editing
-- application of test/fixtures/bigint_migration_hazards_dynamic.sql.
-- The model must list RETURN QUERY EXECUTE into an integer result column
-- (at once, 42804), EXECUTE ... INTO integer variables (a literal query and
-- one built with format(), past 2^31), list as unknown what it cannot read
-- (refused by default), and list nothing for a call guarded by
-- TG_TABLE_NAME LIKE 'l_url_%' on other tables nor for NEW.id of a table
-- whose id is not converted.  The oracle: the generated scripts executed
-- (blocking widen; online widen; accept), then the functions called with
-- keys past 2^31 (setval and explicit values).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_hazards_dyn;
DROP DATABASE IF EXISTS storagelab_tap_hazards_dyn_acc;
DROP DATABASE IF EXISTS storagelab_tap_hazards_dyn_onl;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_hazards_dyn TEMPLATE :"origdb" STRATEGY file_copy;
CREATE DATABASE storagelab_tap_hazards_dyn_acc;
CREATE DATABASE storagelab_tap_hazards_dyn_onl;
\c storagelab_tap_hazards_dyn
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_hazards_dynamic.sql
\set tmp `mktemp -d`

-- the SQLSTATE, message and hint of an error, or 'no error'
CREATE FUNCTION public.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; h text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, h = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg || ' | ' || h;
END $$;

SELECT plan(25);

-- the model
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_target, hazard_fails, sqlstate
      FROM storagelab.bigint_migration_objects('public.editor', 'id') WHERE kind = 'function_hazard'$$,
  $$VALUES ('edits_by_kind(integer)', 'result column 1 editor (integer)', 'immediately', '42804'),
           ('edit_log_editor()', 'variable last_editor (integer)', 'past 2^31', '22003'),
           ('editor_of(integer)', 'variable r (integer)', 'past 2^31', '22003'),
           ('pair_size(integer[],integer[])', 'parameter 1 a (integer[])', 'immediately', '42883'),
           ('pair_size(integer[],integer[])', 'parameter 2 b (integer[])', 'immediately', '42883'),
           ('pair_size(integer[],integer[])', 'variable ids (integer[])', 'past 2^31', '22003')$$,
  'editor.id: RETURN QUERY EXECUTE into an integer column, EXECUTE ... INTO integer variables (a literal query, a format() query), the integer[] helper and the integer[] variable its widened parameter reaches, nothing else');
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_objects('public.editor', 'id')
            WHERE kind = 'function_hazard' AND objid IN ('public.touch_urls(integer[])'::regprocedure, 'public.touch_other(integer)'::regprocedure,
                                                         'public.edit_noted()'::regprocedure)),
          0::bigint,
          'editor.id: no hazard for calls guarded by TG_TABLE_NAME that l_editor_editor cannot meet, nor for NEW.id of edit (not converted)');
-- a guard's parentheses: only those around the whole condition are dropped
SELECT is(storagelab_internal.bigint_migration_guard_value(
            $$(tg_table_name = 'l_url_url') or (tg_table_name like 'l_url_%')$$, 'public.l_editor_editor'::regclass),
          false, 'a guard of two parenthesized tests joined by OR is read: false on a table neither names');
SELECT is(storagelab_internal.bigint_migration_guard_value(
            $$((tg_table_name = 'l_editor_editor')) and (tg_table_schema = 'public')$$, 'public.l_editor_editor'::regclass),
          true, 'a guard with nested parentheses and AND is read: true on the table both name');
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_target, hazard_caller, hazard_fails
      FROM storagelab.bigint_migration_objects('public.url', 'id') WHERE kind = 'function_hazard'$$,
  $$VALUES ('touch_urls(integer[])', 'parameter 1 ids (integer[])', 'trigger link_changed on public.l_url_url', 'immediately'),
           ('touch_urls(integer[])', 'writes column public.url_touched.ids (integer[])', 'function public.touch_urls(integer[])', 'past 2^31')$$,
  'url.id: the guarded call is a hazard on l_url_url, which meets LIKE ''l_url_%'' (and so is the integer[] column the widened helper writes); the ELSIF after it is not reached there');
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_target, hazard_fails
      FROM storagelab.bigint_migration_objects('public.label', 'id') WHERE kind = 'function_hazard'$$,
  $$VALUES ('label_counts(text)', 'result column 1 label (integer)', 'unknown'),
           ('label_seen()', 'variable v (integer)', 'unknown')$$,
  'label.id: queries built at run time (a table name, a column name from TG_ARGV) are listed as unknown');
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_caller, drop_sql IS NULL
      FROM storagelab.bigint_migration_objects('public.editor', 'id') WHERE kind = 'widened_function'$$,
  $$VALUES ('edits_by_kind(integer)', 'result column 1', false), ('edit_log_editor()', 'variable last_editor', true),
           ('editor_of(integer)', 'variable r', true), ('pair_size(integer[],integer[])', 'parameter 1, parameter 2, variable ids', false)$$,
  'widened_function rows: the result column (DROP and CREATE), the variables (CREATE OR REPLACE in place), parameters and a variable together');

-- refuse, the default
SELECT matches(public.error_of($$SELECT storagelab.bigint_migration_script('public.editor', 'id')$$),
               '^2BP01: the migration would break .*function_hazards => ''widen''.*edits_by_kind',
               'editor.id: refused by default (RETURN QUERY EXECUTE fails at once)');
SELECT matches(public.error_of($$SELECT storagelab.bigint_migration_script('public.label', 'id')$$),
               '^2BP01: the migration would or may break .*unknown.*\| .*Hazards listed as unknown are in dynamic SQL',
               'label.id: unknown hazards refuse by default; message and hint say so');
SELECT matches(public.error_of($$SELECT storagelab.bigint_migration_script('public.label', 'id', function_hazards => 'widen')$$),
               '^2BP01: cannot widen',
               'label.id: widen refuses an unknown RETURN QUERY EXECUTE column (bigint could break it as surely as integer)');
SELECT is(public.error_of($$SELECT storagelab.bigint_migration_script('public.url', 'id', function_hazards => 'widen')$$), 'no error',
          'url.id: widen writes a script (touch_urls widened)');

-- widen, blocking mode: executed, then keys past 2^31
SELECT storagelab.bigint_migration_script('public.editor', 'id', function_hazards => 'widen') \g (format=unaligned tuples_only=on) :tmp/widen.sql
\set n `grep -c -e '^--   function .*: fails .*; widened: ' :tmp/widen.sql`
\set m `grep -c -e '^--   function .*; left as is$' :tmp/widen.sql`
SELECT is(:'n' || ' ' || :'m', '7 0', 'widen: the header says "widened" for the seven hazards it widens, and nothing is left as is');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/widen.sql > :tmp/widen.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'widen: the blocking script runs to COMMIT');
SELECT is((SELECT array[pg_get_function_result('public.edits_by_kind(integer)'::regprocedure), obj_description('public.edits_by_kind(integer)'::regprocedure, 'pg_proc'),
                        (SELECT proacl::text FROM pg_proc WHERE oid = 'public.edits_by_kind(integer)'::regprocedure)]),
          ARRAY['TABLE(editor bigint, edits bigint)', 'edits per editor of one kind', (SELECT format('{%s=X/%s}', current_user, current_user))],
          'widen: edits_by_kind() returns editor bigint, with its comment and privileges');
SELECT setval('public.editor_id_seq', 3000000000) AS s \gset
INSERT INTO public.editor (name) VALUES ('big');
INSERT INTO public.edit (editor, kind) VALUES (3000000001, 7);
INSERT INTO public.l_editor_editor (entity0, entity1) VALUES (3000000001, 1);
SELECT is((SELECT array[(SELECT editor FROM public.edit_log WHERE edit = (SELECT max(id) FROM public.edit)),
                        (SELECT editor FROM public.edits_by_kind(7)),
                        public.editor_of((SELECT max(id) FROM public.edit))]),
          ARRAY[3000000001, 3000000001, 3000000001]::bigint[],
          'widen: past 2^31 the triggers (EXECUTE ... INTO), RETURN QUERY EXECUTE and the format() query all work');
SELECT is((SELECT count(*) FROM public.edit_note WHERE note = 'by big'), 1::bigint,
          'the NEW.id trigger and the guarded link trigger work on the converted tables');
SELECT is(public.pair_size(ARRAY[3000000001], ARRAY[1]), 2,
          'widen: pair_size(bigint[], bigint[]) takes keys past 2^31 (its integer[] variable widened with it), as the link trigger did above');

-- url.id widened: the guarded call reaches touch_urls(bigint[]); the integer[] column it
-- writes is left as is, and the header says so
SELECT storagelab.bigint_migration_script('public.url', 'id', function_hazards => 'widen') \g (format=unaligned tuples_only=on) :tmp/url.sql
\set h `grep -e '^--   function public.touch_urls.* <- ' :tmp/url.sql | sed 's/^.*: fails //' | sort | tr '\n' '|'`
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/url.sql > :tmp/url.out 2>&1; echo $?`
INSERT INTO public.url (id, url) VALUES (2147483647, 'last'), (2147483648, 'big');
INSERT INTO public.l_url_url (entity0, entity1) VALUES (2147483647, 1);
SELECT is(ARRAY[:'rc', :'h', (SELECT ids::text FROM public.url_touched WHERE 2147483647 = ANY (ids)),
                split_part(public.error_of('INSERT INTO public.l_url_url (entity0, entity1) VALUES (2147483648, 1)'), ':', 1)],
          ARRAY['0', 'immediately; widened: parameter 1 made bigint in public.touch_urls(bigint[])|past 2^31; left as is|', '{2147483647,1}', '22003'],
          'url.id widen: the script runs, the guarded call reaches touch_urls(bigint[]); the integer[] column it writes, "left as is", fails past 2^31');

-- accept, in a second database: the hazards are real
\set adb storagelab_tap_hazards_dyn_acc
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :adb -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION storagelab' -f test/fixtures/bigint_migration_hazards_dynamic.sql > :tmp/acc_setup.out 2>&1 && psql -X -q -At -d :adb -c "SELECT storagelab.bigint_migration_script('public.editor', 'id', function_hazards => 'accept')" > :tmp/acc.sql && psql -X -q -v ON_ERROR_STOP=1 -d :adb -f :tmp/acc.sql > :tmp/acc.out 2>&1 && psql -X -q -At -d :adb -c "SELECT storagelab.bigint_migration_script('public.label', 'id', function_hazards => 'accept')" > :tmp/lacc.sql && psql -X -q -v ON_ERROR_STOP=1 -d :adb -f :tmp/lacc.sql > :tmp/lacc.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'accept: the scripts for editor.id and label.id run');
\set res `psql -X -q -At -d :adb -c "SELECT * FROM public.edits_by_kind(1)" 2>&1 | grep -o 'ERROR: .*'`
SELECT matches(:'res'::text, 'structure of query does not match function result type', 'accept: RETURN QUERY EXECUTE fails at once, with small keys (42804)');
\set res `psql -X -q -At -d :adb -c "SELECT setval('public.editor_id_seq', 3000000000)" -c "INSERT INTO public.editor (name) VALUES ('big')" -c "INSERT INTO public.edit (editor) VALUES (3000000001)" 2>&1 | grep -o 'ERROR: .*'`
SELECT matches(:'res'::text, 'integer out of range', 'accept: EXECUTE ... INTO the integer variable fails past 2^31 (22003)');
\set res `psql -X -q -At -d :adb -c "SELECT * FROM public.label_counts('label_edit')" 2>&1 | grep -o 'ERROR: .*'`
SELECT matches(:'res'::text, 'structure of query does not match function result type', 'accept: the unknown RETURN QUERY EXECUTE was a hazard');

-- online widen, in a third database
\set odb storagelab_tap_hazards_dyn_onl
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :odb -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION storagelab' -f test/fixtures/bigint_migration_hazards_dynamic.sql > :tmp/onl_setup.out 2>&1 && psql -X -q -At -v ON_ERROR_STOP=1 -d :odb -c "SELECT storagelab.bigint_migration_script('public.editor', 'id', 'online', 'widen')" > :tmp/onl.sql 2>&1 || { echo generate; exit; }; for ph in start copy index replay swap; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :odb -f :tmp/onl.sql > :tmp/onl.$ph.out 2>&1 || { echo $ph; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online widen: start, copy, index, replay and swap run');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :odb -f :tmp/onl.sql > :tmp/onl.rollback.out 2>&1; echo $?; psql -X -q -At -d :odb -c "SELECT pg_get_function_result('public.edits_by_kind(integer)'::regprocedure)" -c "SELECT prosrc ~ 'last_editor integer' FROM pg_proc WHERE proname = 'edit_log_editor'" 2>&1`
SELECT is(:'rc'::text, E'0\nTABLE(editor integer, edits bigint)\nt', 'online widen: a rollback after the swap gives the functions back as they were (the one replaced in place too)');
\set rc `psql -X -q -At -v ON_ERROR_STOP=1 -d :odb -c "SELECT storagelab.bigint_migration_script('public.editor', 'id', 'online', 'widen')" > :tmp/onl2.sql 2>&1 || { echo generate; exit; }; for ph in start copy index replay swap; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :odb -f :tmp/onl2.sql > :tmp/onl2.$ph.out 2>&1 || { echo $ph; exit; }; done; echo 0`
\set res `psql -X -q -At -d :odb -c "SELECT setval('public.editor_id_seq', 3000000000)" -c "INSERT INTO public.editor (name) VALUES ('big')" -c "INSERT INTO public.edit (editor, kind) VALUES (3000000001, 7)" -c "SELECT editor FROM public.edits_by_kind(7)" -c "SELECT editor FROM public.edit_log ORDER BY edit DESC LIMIT 1" 2>&1 | tr '\n' ' '`
SELECT is(:'rc' || ' ' || :'res', '0 3000000000 3000000001 3000000001 ', 'online widen, run again: past 2^31 the trigger and RETURN QUERY EXECUTE work after the swap');

SELECT * FROM finish();
\set rm_tmp `rm -rf :tmp`
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_hazards_dyn;
DROP DATABASE storagelab_tap_hazards_dyn_acc;
DROP DATABASE storagelab_tap_hazards_dyn_onl;

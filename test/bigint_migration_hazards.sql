-- pgTAP: function hazards of INT -> BIGINT migrations on the music catalogue
-- of test/fixtures/bigint_migration_hazards.sql (key recording.id, referenced
-- by track.recording; trigger functions call helpers with integer and
-- integer[] parameters).  The model must find every hazard; the generator
-- must refuse by default in both modes with a hint naming the functions;
-- function_hazards => 'widen' must migrate so that INSERTs keep working and
-- the data is intact; 'accept' must generate the script.  The blocking run
-- happens in a database without plpgsql_check, an online run in one with it
-- (when the package is installed), where an 'accept' script must roll back;
-- a second online (copy-and-swap) run widens in its swap and narrows again
-- in a rollback after the swap, in a third database.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_hazards;
DROP DATABASE IF EXISTS storagelab_tap_bigint_hazards_online;
DROP DATABASE IF EXISTS storagelab_tap_bigint_hazards_cs;
DROP ROLE IF EXISTS storagelab_hazard_app;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_hazards TEMPLATE :"origdb" STRATEGY file_copy;
CREATE DATABASE storagelab_tap_bigint_hazards_online;
CREATE DATABASE storagelab_tap_bigint_hazards_cs;
\c storagelab_tap_bigint_hazards
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_hazards.sql
\i test/fixtures/bigint_migration_helpers.sql
SET client_min_messages = warning;
\set tmp `mktemp -d`
CREATE TABLE snap.before AS SELECT * FROM snap.data();
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'plpgsql_check') AS no_plpgsql_check \gset

-- the SQLSTATE and hint of an error, or 'no error'
CREATE FUNCTION snap.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; h text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, h = PG_EXCEPTION_HINT;
  RETURN st || ': ' || h;
END $$;

SELECT plan(34);

-- the model
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_target, hazard_caller, hazard_fails
      FROM storagelab.bigint_migration_objects('public.recording', 'id') WHERE kind = 'function_hazard'$$,
  $$VALUES ('materialise_recording_length(integer)', 'parameter 1 recording_id (integer)', 'trigger a_ins_track on public.track', 'immediately'),
           ('materialise_recording_length(integer)', 'parameter 1 recording_id (integer)', 'trigger a_upd_track on public.track', 'immediately'),
           ('catalog.recording_tags_touch(integer[])', 'parameter 1 ids (integer[])', 'trigger a_ins_track on public.track', 'immediately'),
           ('touch_recording(integer)', 'parameter 1 rid (integer)', 'trigger a_ins_track on public.track', 'immediately'),
           ('log_recording_change(integer,text)', 'parameter 1 r (integer)', 'function public.touch_recording(integer)', 'immediately'),
           ('recording_name(integer)', 'parameter 1 (integer)', 'view public.track_names', 'immediately'),
           ('b_track_stats()', 'variable rec_id (integer)', 'trigger b_track_stats on public.track', 'past 2^31'),
           ('track_recording(integer)', 'return type integer', 'function public.track_recording(integer)', 'past 2^31'),
           ('catalog.recording_tags_touch(integer[])', 'writes column catalog.recording_tag_log.recording_ids (integer[])',
            'function catalog.recording_tags_touch(integer[])', 'past 2^31'),
           ('b_track_stats()', 'writes column public.recording_meta.id (integer)', 'trigger b_track_stats on public.track', 'past 2^31')$$,
  'the model finds the helpers called with the key (integer, integer[], through a %TYPE variable, passed on by a SQL function, called by a view), the integer variable, the integer return type, the integer[] column a widened helper writes and the integer column the variable is written to, and nothing else');
SELECT set_eq(
  $$SELECT hazard_target FROM storagelab.bigint_migration_objects('public.recording', 'id') WHERE kind = 'widened_function'$$,
  ARRAY['public.materialise_recording_length(bigint)', 'catalog.recording_tags_touch(bigint[])', 'public.touch_recording(bigint)',
        'public.log_recording_change(bigint, text)', 'public.recording_name(bigint)', 'public.b_track_stats()', 'public.track_recording(integer)'],
  'one widened_function row per function with something to widen (parameters, a variable, a return type), with its new signature');
SELECT is((SELECT string_agg(DISTINCT sqlstate, ',' ORDER BY sqlstate) FROM storagelab.bigint_migration_objects('public.recording', 'id')
            WHERE kind = 'function_hazard'), '22003,42883',
          'hazard rows carry the SQLSTATE they fail with: 42883 (no function matches) or 22003 (out of range)');

-- refused by default, in both modes, with a hint naming the function and the two options
SELECT matches(snap.error_of($$SELECT storagelab.bigint_migration_script('public.recording', 'id')$$),
               '^2BP01: .*function_hazards => ''widen''.*public\.materialise_recording_length\(integer\).*function_hazards => ''accept''',
               'blocking mode refuses, the hint names the function and both options');
SELECT matches(snap.error_of($$SELECT storagelab.bigint_migration_script('public.recording', 'id', 'online')$$),
               '^2BP01: .*function_hazards => ''widen''.*public\.materialise_recording_length\(integer\).*function_hazards => ''accept''',
               'online mode refuses, the hint names the function and both options');
SELECT matches(snap.error_of($$SELECT storagelab.bigint_migration_group_script(ARRAY['public.track'::regclass], ARRAY['recording'::name])$$),
               '^2BP01: .*catalog\.recording_tags_touch\(integer\[\]\)',
               'starting from the referencing column refuses too (same component)');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('public.recording', 'id', function_hazards => 'ignore')$$,
                 '22023', NULL, 'an unknown function_hazards value is refused');
SELECT throws_ok($$SELECT * FROM storagelab.bigint_migration_plan(function_hazards => 'ignore')$$,
                 '22023', NULL, 'the plan refuses an unknown function_hazards value');
-- the plan: recording.id near 2^31 makes int_overflow rate it critical
SELECT setval('public.recording_id_seq', 2100000000) AS seq_set \gset
SELECT matches((SELECT string_agg(coalesce(blockers, 'script'), ' ') FROM storagelab.bigint_migration_plan()
                 WHERE 'public.recording.id' = ANY (columns)),
               '^2BP01: .*materialise_recording_length',
               'the plan refuses the group by default: its blockers name the hazard');
SELECT ok((SELECT bool_and(blockers IS NULL AND strpos(script, 'DROP FUNCTION public.materialise_recording_length(integer)') > 0)
             FROM storagelab.bigint_migration_plan(function_hazards => 'widen') WHERE 'public.recording.id' = ANY (columns)),
          'the plan with function_hazards => widen writes a script that widens the helpers');
SELECT setval('public.recording_id_seq', 50) AS seq_set \gset

-- accept: the script is generated and lists the hazards
SELECT storagelab.bigint_migration_script('public.recording', 'id', function_hazards => 'accept') AS accept_script \gset
SELECT is((SELECT count(*) FROM regexp_split_to_table(:'accept_script', E'\n') l
            WHERE l ~ '^--   function .* <- .*: fails (immediately|past 2\^31); left as is$'), 10::bigint,
          'accept: the header lists the ten hazards, each left as is');
SELECT ok(strpos(:'accept_script', 'DROP FUNCTION') = 0, 'accept: no function is dropped');

-- widen, blocking mode, in a database without plpgsql_check
SELECT storagelab.bigint_migration_script('public.recording', 'id', function_hazards => 'widen') \g (format=unaligned tuples_only=on) :tmp/widen.sql
\set n `grep '^--   function .* <- .*: fails .*; widened: ' :tmp/widen.sql | sed 's/,.*//' | sort -u | wc -l`
\set m `grep -c -e '^--   function public.b_track_stats(), writes column public.recording_meta.id (integer) <- .*: fails past 2^31; left as is$' :tmp/widen.sql`
SELECT is(:'n' || ' ' || :'m', '7 1',
          'widen: the header names the seven functions it widens, and says "left as is" for the integer column b_track_stats() writes');
-- a function changed after generation would be re-created from the old text: the script stops
ALTER FUNCTION public.log_recording_change(integer, text) COST 101;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/widen.sql > :tmp/widen_changed.out 2>&1; echo $?`
ALTER FUNCTION public.log_recording_change(integer, text) COST 100;
\set out `tr '\n' ' ' < :tmp/widen_changed.out`
SELECT ok(:'rc' <> '0' AND :'out' ~ 'the database changed since this script was generated.*log_recording_change',
          'widen: a function changed since generation stops the script before it changes anything');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/widen.sql > :tmp/widen.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'widen: the blocking script runs to COMMIT');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before', 'widen: every row of every table and view is intact');
SELECT set_eq($$SELECT p.oid::regprocedure::text FROM pg_proc p
                 WHERE p.proname IN ('materialise_recording_length', 'recording_tags_touch', 'touch_recording', 'log_recording_change', 'recording_name')$$,
              ARRAY['materialise_recording_length(bigint)', 'catalog.recording_tags_touch(bigint[])', 'touch_recording(bigint)',
                    'log_recording_change(bigint,text)', 'recording_name(bigint)'],
              'widen: the helpers take bigint, and their old versions are gone');
SELECT is((SELECT array[obj_description('materialise_recording_length(bigint)'::regprocedure, 'pg_proc'),
                        proacl::text, (SELECT pg_get_function_arguments('log_recording_change(bigint,text)'::regprocedure))]
             FROM pg_proc WHERE oid = 'materialise_recording_length(bigint)'::regprocedure),
          ARRAY['recomputes recording.length from its tracks',
                (SELECT format('{%s=X/%s,storagelab_hazard_app=X/%s}', current_user, current_user, current_user)),
                'r bigint, note text DEFAULT ''changed''::text'],
          'widen: comment, privileges and parameter defaults are kept');
INSERT INTO public.track (recording, position, length) VALUES (1, 201, 200);
SELECT is((SELECT array[r.length, m.track_count, (SELECT count(*) FROM public.recording_change_log WHERE recording = 1)::int]
             FROM public.recording r JOIN public.recording_meta m ON m.id = r.id WHERE r.id = 1),
          ARRAY[(SELECT sum(length)::int FROM public.track WHERE recording = 1), 5, 5],
          'widen: an INSERT into track runs every trigger and helper (length materialised, stats and change log written)');
SELECT is((SELECT recording_name FROM public.track_names WHERE position = 201), 'recording 1',
          'widen: the view calls the widened function');
UPDATE public.track SET recording = 2 WHERE position = 201;
SELECT is((SELECT array_agg(r.length = (SELECT sum(t.length) FROM public.track t WHERE t.recording = r.id) ORDER BY r.id)
             FROM public.recording r WHERE r.id IN (1, 2)), ARRAY[true, true],
          'widen: an UPDATE of track.recording calls the helper through the %TYPE variable');
-- past 2^31: b_track_stats()'s variable is widened, but it writes the value into
-- recording_meta.id, an integer column outside the migration: listed, left as is
INSERT INTO public.recording (id, name) VALUES (2147483648, 'big');
SELECT throws_ok($$INSERT INTO public.track (recording, position) VALUES (2147483648, 1)$$, '22003', NULL,
                 'b_track_stats() still fails past 2^31, as the header says: recording_meta.id, written through its widened variable, is integer and left as is');

-- online mode (and accept rolled back by plpgsql_check) in a database with plpgsql_check
\set odb storagelab_tap_bigint_hazards_online
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :odb -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION storagelab' -f test/fixtures/bigint_migration_hazards.sql > :tmp/online_setup.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'online: the second database is set up');
\if :no_plpgsql_check
SELECT skip('plpgsql_check is not installed for this PostgreSQL: no check that catches an accepted hazard', 1);
\else
-- (without the view: its re-creation alone would make the accepted script fail)
\set rc `psql -X -q -d :odb -c 'CREATE EXTENSION plpgsql_check' -c 'DROP VIEW public.track_names' > /dev/null 2>&1; psql -X -q -At -d :odb -c "SELECT storagelab.bigint_migration_script('public.recording', 'id', function_hazards => 'accept')" > :tmp/accept.sql && psql -X -q -v ON_ERROR_STOP=1 -d :odb -f :tmp/accept.sql > :tmp/accept.out 2>&1; echo $?`
\set out `tr '\n' ' ' < :tmp/accept.out`
\set rc2 `psql -X -q -v ON_ERROR_STOP=1 -d :odb -c 'CREATE VIEW public.track_names AS SELECT t.id, t.position, public.recording_name(t.recording) AS recording_name FROM public.track t' -c 'GRANT SELECT ON public.track_names TO storagelab_hazard_app' -At -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" 2>&1`
SELECT ok(:'rc' <> '0' AND :'out' ~ 'plpgsql_check finds new errors.*materialise_recording_length\(bigint\) does not exist' AND :'rc2' = 'integer',
          'accept with plpgsql_check installed: the post-check finds the broken call and rolls back');
\endif
\set rc `psql -X -q -At -d :odb -c "SELECT storagelab.bigint_migration_script('public.recording', 'id', 'online', 'widen')" > :tmp/online.sql && for ph in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :odb -f :tmp/online.sql > :tmp/online.$ph.out 2>&1 || { echo $ph; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online widen, with plpgsql_check installed when it is: every phase runs');
\set res `psql -X -q -At -d :odb -c "INSERT INTO public.track (recording, position, length) VALUES (1, 201, 200)" -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" -c "SELECT r.length = (SELECT sum(length) FROM public.track WHERE recording = 1) AND m.track_count = 5 FROM public.recording r JOIN public.recording_meta m USING (id) WHERE id = 1" -c "SELECT recording_name FROM public.track_names WHERE position = 201" 2>&1 | tr '\n' ' '`
SELECT is(:'res'::text, 'bigint t recording 1 ', 'online widen: track.recording is bigint and an INSERT into track runs every trigger and helper');

-- online mode (copy and swap): the functions widened in the swap, narrowed
-- again by a rollback after the swap, widened again by a second run through
-- cleanup
\set cdb storagelab_tap_bigint_hazards_cs
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :cdb -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION storagelab' -f test/fixtures/bigint_migration_hazards.sql > :tmp/cs_setup.out 2>&1; echo $?`
-- with plpgsql_check: an accepted hazard makes the swap roll back (without the view, whose
-- re-creation alone would make it fail), then a rollback; the widening below runs the check too
\if :no_plpgsql_check
SELECT skip('plpgsql_check is not installed for this PostgreSQL: no check that catches an accepted hazard', 2);
\else
\set rc `psql -X -q -d :cdb -c 'CREATE EXTENSION plpgsql_check' -c 'DROP VIEW public.track_names' > /dev/null 2>&1; psql -X -q -At -v ON_ERROR_STOP=1 -d :cdb -c "SELECT storagelab.bigint_migration_script('public.recording', 'id', 'online', 'accept')" > :tmp/csa.sql 2>&1 || { echo generate; exit; }; for ph in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :cdb -f :tmp/csa.sql > :tmp/csa.$ph.out 2>&1 || { echo $ph; exit; }; done; psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :cdb -f :tmp/csa.sql > :tmp/csa.swap.out 2>&1; echo $?`
\set out `tr '\n' ' ' < :tmp/csa.swap.out`
\set rc2 `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :cdb -f :tmp/csa.sql > :tmp/csa.rollback.out 2>&1; printf '%s ' $?; psql -X -q -v ON_ERROR_STOP=1 -d :cdb -c 'CREATE VIEW public.track_names AS SELECT t.id, t.position, public.recording_name(t.recording) AS recording_name FROM public.track t' -c 'GRANT SELECT ON public.track_names TO storagelab_hazard_app' -At -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab%'" 2>&1 | tr '\n' ' '`
SELECT ok(:'rc' = '3' AND :'out' ~ 'plpgsql_check finds new errors.*materialise_recording_length\(bigint\) does not exist',
          'online accept with plpgsql_check installed: the swap finds the broken call and rolls back');
SELECT is(:'rc2'::text, '0 integer 0 ', '... the rollback then leaves the int column and nothing of the migration');
\endif
\set rc `psql -X -q -At -v ON_ERROR_STOP=1 -d :cdb -c "SELECT storagelab.bigint_migration_script('public.recording', 'id', 'online', 'widen')" > :tmp/cs.sql 2>&1 || { echo generate; exit; }; for ph in start copy index replay swap; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :cdb -f :tmp/cs.sql > :tmp/cs.$ph.out 2>&1 || { echo $ph; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online widen: start, copy, index, replay and swap run');
\set res `psql -X -q -At -d :cdb -c "INSERT INTO public.track (recording, position, length) VALUES (1, 201, 200)" -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" -c "SELECT r.length = (SELECT sum(length) FROM public.track WHERE recording = 1) AND m.track_count = 5 FROM public.recording r JOIN public.recording_meta m USING (id) WHERE id = 1" -c "SELECT recording_name FROM public.track_names WHERE position = 201" -c "SELECT string_agg(p.oid::regprocedure::text, ' ' ORDER BY p.oid::regprocedure::text) FROM pg_proc p WHERE p.proname IN ('materialise_recording_length', 'recording_tags_touch')" 2>&1 | tr '\n' ' '`
SELECT is(:'res'::text, 'bigint t recording 1 catalog.recording_tags_touch(bigint[]) materialise_recording_length(bigint) ',
          'online widen: after the swap track.recording is bigint, the helpers take bigint, an INSERT into track runs every trigger and helper, the view calls the widened function');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :cdb -f :tmp/cs.sql > :tmp/cs.rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'online widen: rollback after the swap');
\set res `psql -X -q -At -d :cdb -c "INSERT INTO public.track (recording, position, length) VALUES (1, 202, 300)" -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" -c "SELECT r.length = (SELECT sum(length) FROM public.track WHERE recording = 1) AND m.track_count = 6 FROM public.recording r JOIN public.recording_meta m USING (id) WHERE id = 1" -c "SELECT string_agg(recording_name, ',' ORDER BY position) FROM public.track_names WHERE position > 200" -c "SELECT string_agg(p.oid::regprocedure::text, ' ' ORDER BY p.oid::regprocedure::text) FROM pg_proc p WHERE p.proname IN ('materialise_recording_length', 'recording_tags_touch')" 2>&1 | tr '\n' ' '`
SELECT is(:'res'::text, 'integer t recording 1,recording 1 catalog.recording_tags_touch(integer[]) materialise_recording_length(integer) ',
          'online widen: after the rollback the helpers take integer again, the row written after the swap is there, an INSERT runs every trigger and helper');
\set rc `psql -X -q -At -v ON_ERROR_STOP=1 -d :cdb -c "SELECT storagelab.bigint_migration_script('public.recording', 'id', 'online', 'widen')" > :tmp/cs2.sql 2>&1 || { echo generate; exit; }; for ph in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$ph -d :cdb -f :tmp/cs2.sql > :tmp/cs2.$ph.out 2>&1 || { echo $ph; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online widen: a second script runs through cleanup');
\set res `psql -X -q -At -d :cdb -c "INSERT INTO public.track (recording, position, length) VALUES (2, 203, 100)" -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.track'::regclass AND attname = 'recording'" -c "SELECT r.length = (SELECT sum(length) FROM public.track WHERE recording = 2) FROM public.recording r WHERE id = 2" -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab%'" 2>&1 | tr '\n' ' '`
SELECT is(:'res'::text, 'bigint t 0 ', 'online widen: bigint after cleanup, the triggers and helpers work, nothing of the migration is left');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_hazards;
DROP DATABASE storagelab_tap_bigint_hazards_online;
DROP DATABASE storagelab_tap_bigint_hazards_cs;
DROP ROLE storagelab_hazard_app;

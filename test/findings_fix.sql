-- pgTAP: every storagelab.findings fix runs as written.  A fixture with a
-- problem of every category, each fix executed (psql -f, as a DBA would) and
-- the script it returns run (an online one phase by phase), then the data
-- checked:
--   - a hub key at 93 % of 2^31 with three referencing columns holding its
--     values: one finding, the columns in its evidence; a trigger passes a
--     referencing column to a PL/pgSQL function taking integer (a hazard
--     that fails at once): the fix says function_hazards => 'widen' and the
--     message names the function; a view over a function of the hub's rows
--     (f(t)), a policy and a rule of another table over it: mode online
--     converts them, the view's rows unchanged;
--   - a third hub's key returned by RETURN QUERY as integer (fails at once,
--     cannot be widened): function_hazards => 'accept', the function named;
--   - a smallint column referencing a second hub, near its own limit: a
--     finding of its own (an integer one folds into the hub's; these fixes
--     are not run: the hub's is the same kind);
--   - an inheritance child's key: online refuses it, the fix is blocking;
--   - a typed table's key: no mode converts it, fix NULL, the message says why;
--   - a padded table whose row type is a column of another table, a bytea
--     column of a table named with the storage script's dollar-quote tag:
--     their scripts are refused, fix NULL, the message says why;
--   - a bulk load never vacuumed (visibility), incompressible bytea (toast),
--     a narrowable table (column_width), a padded table with a view over a
--     function of its rows (alignment).
-- Own database: the scripts run in other sessions, so the tables are committed.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_findings_fix;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_findings_fix TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_findings_fix
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
\o /dev/null
CREATE SCHEMA fx;
-- a hub at 93 % of 2^31: three referencing columns holding its values, a
-- trigger passing one of them to a PL/pgSQL function taking integer (a
-- hazard that fails at once), a view over a function of the hub's rows
CREATE TABLE fx.hub (id serial PRIMARY KEY, name text NOT NULL);
SELECT setval('fx.hub_id_seq', 2000000000);
INSERT INTO fx.hub (name) SELECT 'h' || g FROM generate_series(1, 5) g;
CREATE TABLE fx.ref1 (id serial PRIMARY KEY, hub_id int NOT NULL REFERENCES fx.hub);
CREATE TABLE fx.ref2 (id int8 PRIMARY KEY, hub_id int REFERENCES fx.hub);
CREATE TABLE fx.ref3 (hub_id int PRIMARY KEY REFERENCES fx.hub, note text);
CREATE TABLE fx.audit (hub_id int8, n int);
CREATE FUNCTION fx.note_hub(p_hub integer) RETURNS void LANGUAGE plpgsql
  AS $$ BEGIN INSERT INTO fx.audit VALUES (p_hub, 1); END $$;
CREATE FUNCTION fx.ref1_audit() RETURNS trigger LANGUAGE plpgsql
  AS $$ BEGIN PERFORM fx.note_hub(NEW.hub_id); RETURN NEW; END $$;
CREATE TRIGGER ref1_audit AFTER INSERT ON fx.ref1 FOR EACH ROW EXECUTE FUNCTION fx.ref1_audit();
INSERT INTO fx.ref1 (hub_id) SELECT id FROM fx.hub;
INSERT INTO fx.ref2 SELECT id, id FROM fx.hub;
INSERT INTO fx.ref3 SELECT id, 'n' FROM fx.hub;
CREATE FUNCTION fx.label(h fx.hub) RETURNS text LANGUAGE sql STABLE AS $$ SELECT h.name || '#' || h.id $$;
CREATE VIEW fx.hub_labels AS SELECT h.id, fx.label(h) AS label FROM fx.hub h;
-- ... and a policy and a rule of another table over it
CREATE TABLE fx.notes (hub_id int8, body text);
ALTER TABLE fx.notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY labelled ON fx.notes USING (EXISTS (SELECT 1 FROM fx.hub h WHERE h.id = notes.hub_id AND fx.label(h) IS NOT NULL));
CREATE RULE notes_log AS ON INSERT TO fx.notes
  DO ALSO INSERT INTO fx.audit SELECT h.id, length(fx.label(h)) FROM fx.hub h WHERE h.id = NEW.hub_id;
-- a second hub: a smallint column referencing it near its own limit (its
-- own problem: a finding of its own), an integer one (folded)
CREATE TABLE fx.hub2 (id serial PRIMARY KEY);
SELECT setval('fx.hub2_id_seq', 2000000000);
INSERT INTO fx.hub2 VALUES (32000), (DEFAULT);
CREATE TABLE fx.narrow (id int8 PRIMARY KEY, hub2_id smallint REFERENCES fx.hub2);
INSERT INTO fx.narrow VALUES (1, 32000);
CREATE TABLE fx.wide (id int8 PRIMARY KEY, hub2_id int REFERENCES fx.hub2);
INSERT INTO fx.wide SELECT 1, max(id) FROM fx.hub2;
-- a third hub whose key a PL/pgSQL function returns by RETURN QUERY as
-- integer (fails at once; widen changes parameters only): accept
CREATE TABLE fx.hub3 (id serial PRIMARY KEY);
SELECT setval('fx.hub3_id_seq', 2000000000);
INSERT INTO fx.hub3 DEFAULT VALUES;
CREATE FUNCTION fx.hub3_ids(col text DEFAULT 'id') RETURNS TABLE (id integer) LANGUAGE plpgsql
  AS $$ BEGIN RETURN QUERY EXECUTE format('SELECT %I FROM fx.hub3', col); END $$;
-- a key of an inheritance child that its parent lacks: mode online refuses it
CREATE TABLE fx.base (note text);
CREATE TABLE fx.kid (id serial PRIMARY KEY) INHERITS (fx.base);
SELECT setval('fx.kid_id_seq', 2000000000);
INSERT INTO fx.kid (note) VALUES ('k');
-- a typed table: no mode converts it
CREATE TYPE fx.typed_row AS (id int, note text);
CREATE TABLE fx.typed OF fx.typed_row (PRIMARY KEY (id));
CREATE SEQUENCE fx.typed_id_seq OWNED BY fx.typed.id;
ALTER TABLE fx.typed ALTER COLUMN id SET DEFAULT nextval('fx.typed_id_seq');
SELECT setval('fx.typed_id_seq', 2000000000);
INSERT INTO fx.typed (note) VALUES ('t');
-- visibility: loaded, analyzed, never vacuumed
CREATE TABLE fx.loaded (id int8, pad text) WITH (autovacuum_enabled = off);
INSERT INTO fx.loaded SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g;
-- toast: incompressible values stored EXTENDED
CREATE TABLE fx.files (id int8 PRIMARY KEY, data bytea) WITH (autovacuum_enabled = off);
INSERT INTO fx.files SELECT g, (SELECT decode(string_agg(md5((i + 1000 * g)::text), ''), 'hex')
                                  FROM generate_series(1, 1000) i) FROM generate_series(1, 4) g;
-- alignment: padded, with a view over a function of its rows
CREATE TABLE fx.padded (a boolean, b int8, c boolean, d int8) WITH (autovacuum_enabled = off);
INSERT INTO fx.padded SELECT g % 2 = 0, g * 3000000000::int8, true, g * 3000000000::int8
  FROM generate_series(1, 2000) g;
CREATE FUNCTION fx.total(p fx.padded) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT p.b::numeric + p.d $$;
CREATE VIEW fx.padded_totals AS SELECT p.b, fx.total(p) AS total FROM fx.padded p;
-- toast again, but the table's name holds a dollar-quote tag of the storage
-- script: its generator refuses it (no fix)
CREATE TABLE fx."odd$step$" (id int8 PRIMARY KEY, data bytea) WITH (autovacuum_enabled = off);
INSERT INTO fx."odd$step$" SELECT * FROM fx.files;
-- a layout finding, but the table's row type is a column of another table: the
-- layout script refuses it (no fix)
CREATE TABLE fx.padded2 (a boolean, b int8, c boolean, d int8) WITH (autovacuum_enabled = off);
INSERT INTO fx.padded2 SELECT true, g, false, g FROM generate_series(1, 2000) g;
CREATE TABLE fx.holder (x fx.padded2);
-- column_width: narrowable
CREATE TABLE fx.users (uid int8 PRIMARY KEY, age int8, gender int8) WITH (autovacuum_enabled = off);
INSERT INTO fx.users SELECT g, 13 + (g * 7) % 38, g % 3 FROM generate_series(1, 5000) g;
ANALYZE fx.hub, fx.hub3, fx.ref1, fx.ref2, fx.ref3, fx.hub2, fx.narrow, fx.wide, fx.kid, fx.typed, fx.loaded, fx.files, fx.padded,
        fx.padded2, fx.users, fx."odd$step$";
INSERT INTO storagelab.settings VALUES ('findings.min_saved_size', '0'), ('findings.visibility_min_size', '16kB'),
  ('findings.toast_min_size', '8kB'), ('scripts.lock_timeout', '5s');
\o

SELECT plan(27);
CREATE TABLE pg_temp.found AS SELECT * FROM storagelab.findings WHERE relation::text LIKE 'fx.%';
CREATE TABLE pg_temp.labels AS SELECT * FROM fx.hub_labels;
CREATE TABLE pg_temp.totals AS SELECT * FROM fx.padded_totals;

-- one finding per problem
SELECT is((SELECT array_agg(format('%s.%s', relation, column_name) ORDER BY relation::text, column_name)
             FROM pg_temp.found WHERE category = 'int_overflow'),
          '{fx.hub.id,fx.hub2.id,fx.hub3.id,fx.kid.id,fx.narrow.hub2_id,fx.typed.id}',
          'one int_overflow finding per key; a column referencing a key folds into it unless narrower');
SELECT is((SELECT evidence FROM pg_temp.found WHERE relation = 'fx.hub'::regclass),
          'exact; 3 referencing columns: fx.ref1.hub_id, fx.ref2.hub_id, fx.ref3.hub_id',
          'the hub''s evidence counts and lists the columns referencing it');
SELECT is((SELECT evidence FROM pg_temp.found WHERE relation = 'fx.hub2'::regclass),
          'exact; 2 referencing columns: fx.narrow.hub2_id, fx.wide.hub2_id',
          'the second hub lists the smallint column too (its fix converts it)');
-- the fixes the generators accept
SELECT is((SELECT fix FROM pg_temp.found WHERE relation = 'fx.hub'::regclass),
          $$SELECT storagelab.bigint_migration_script('fx.hub', 'id', 'online', function_hazards => 'widen');$$,
          'a hazard that fails at once: the fix widens the function (online accepts the view over f(t))');
SELECT ok((SELECT message LIKE '%: migrate it to bigint; the script widens fx.note_hub(integer)' FROM pg_temp.found
            WHERE relation = 'fx.hub'::regclass), 'the message names the function widened');
SELECT is((SELECT fix || ' ' || message FROM pg_temp.found WHERE relation = 'fx.hub3'::regclass),
          $$SELECT storagelab.bigint_migration_script('fx.hub3', 'id', 'online', function_hazards => 'accept'); $$
          || 'integer column is running out of values: migrate it to bigint; check by hand, their dynamic SQL may break: fx.hub3_ids(text)',
          'a hazard storagelab cannot widen (a RETURN QUERY EXECUTE column it cannot read): accept, and the message names the function to check');
SELECT is((SELECT fix FROM pg_temp.found WHERE relation = 'fx.kid'::regclass),
          $$SELECT storagelab.bigint_migration_script('fx.kid', 'id', 'blocking');$$,
          'online refuses an inheritance child''s own key: the fix is blocking');
SELECT ok((SELECT message LIKE '%online refuses: mode online does not convert a column of an inheritance child%'
             FROM pg_temp.found WHERE relation = 'fx.kid'::regclass), 'the message says why not online');
SELECT ok((SELECT fix IS NULL AND message LIKE '%no script converts it: %typed table%' FROM pg_temp.found
            WHERE relation = 'fx.typed'::regclass), 'no mode converts a typed table: no fix, the message says what blocks it');
SELECT ok((SELECT fix IS NULL AND message LIKE '%; no script rebuilds it: the rewrite engine cannot rewrite a table whose row type is used elsewhere:%'
             FROM pg_temp.found WHERE relation = 'fx.padded2'::regclass AND category <> 'visibility'),
          'a layout finding on a table whose row type is a column elsewhere: the layout script refuses it, no fix, the message says why');
SELECT ok((SELECT fix IS NULL AND message LIKE '%; no script changes it: relation or column name contains a dollar-quote tag%'
             FROM pg_temp.found WHERE relation = 'fx."odd$step$"'::regclass AND category = 'toast'),
          'a toast finding whose storage script is refused: no fix, the message says why');
SELECT is((SELECT count(*) FROM pg_temp.found WHERE fix IS NULL), 3::int8, 'every other finding has a fix');
SELECT is((SELECT array_agg(DISTINCT format('%s %s', r.code, r.message))
             FROM unnest(ARRAY['online', 'blocking']) m,
                  storagelab_internal.bigint_migration_refusal(
                    storagelab_internal.bigint_migration_model('{fx.typed}', '{id}'), m, 'refuse') r),
          '{"0A000 cannot generate a correct INT to BIGINT migration: 1 blocker(s)"}',
          'what both modes refuse, they refuse with the same SQLSTATE and message');
SELECT is((SELECT array_agg(category ORDER BY category) FROM (SELECT DISTINCT category FROM pg_temp.found) c),
          '{alignment,column_width,int_overflow,toast,visibility}', 'every category is found');

-- each fix as written, and its script; the hub first
SELECT fix FROM pg_temp.found WHERE relation = 'fx.hub'::regclass \g (format=unaligned tuples_only=on) :tmp/hub.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/hub.sql :tmp/hub`
SELECT is(:'rc'::text, '0', 'int_overflow (hub): the fix and its online script, every phase');
SELECT is((SELECT array_agg(format_type(atttypid, NULL) ORDER BY attrelid::regclass::text) FROM pg_attribute
            WHERE (attrelid, attname) IN (('fx.hub'::regclass, 'id'), ('fx.ref1'::regclass, 'hub_id'),
                                          ('fx.ref2'::regclass, 'hub_id'), ('fx.ref3'::regclass, 'hub_id'))),
          '{bigint,bigint,bigint,bigint}', 'the hub and every referencing column are bigint');
SELECT set_eq('SELECT * FROM fx.hub_labels', 'SELECT * FROM pg_temp.labels', 'the view over f(t) is back, its rows unchanged');
INSERT INTO fx.notes VALUES (2000000001, 'x');
SELECT is((SELECT count(*) FROM pg_policy WHERE polname = 'labelled') + (SELECT count(*) FROM pg_rules WHERE rulename = 'notes_log')
          || ' ' || (SELECT n FROM fx.audit WHERE hub_id = 2000000001 AND n > 1),
          '2 13', 'the policy and the rule of another table over f(t) are back, and the rule runs');
SELECT lives_ok($$INSERT INTO fx.hub VALUES (3000000000, 'big'); INSERT INTO fx.ref1 (hub_id) VALUES (3000000000)$$,
                'past 2^31 the trigger calls the widened function');
SELECT is((SELECT max(hub_id) FROM fx.audit), 3000000000::int8, 'which received the value');
SELECT fix FROM pg_temp.found WHERE relation = 'fx.kid'::regclass \g (format=unaligned tuples_only=on) :tmp/kid.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/kid.sql :tmp/kid`
SELECT is(:'rc'::text, '0', 'int_overflow (inheritance child): the blocking fix and its script');
SELECT fix FROM pg_temp.found WHERE category = 'toast' AND relation = 'fx.files'::regclass \g (format=unaligned tuples_only=on) :tmp/toast.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/toast.sql :tmp/toast`
SELECT is(:'rc' || ' ' || (SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'fx.files'::regclass AND attname = 'data'),
          '0 e', 'toast: the fix and its script; the column is stored EXTERNAL');
SELECT fix FROM pg_temp.found WHERE category = 'visibility' AND relation = 'fx.loaded'::regclass
\g (format=unaligned tuples_only=on) :tmp/vis.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/vis.sql :tmp/vis`
SELECT is(:'rc' || ' ' || (SELECT count(*) FROM storagelab_internal.findings_visibility WHERE relation = 'fx.loaded'::regclass),
          '0 0', 'visibility: the VACUUM runs, the finding is gone');
SELECT fix FROM pg_temp.found WHERE category = 'column_width' \g (format=unaligned tuples_only=on) :tmp/width.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/width.sql :tmp/width`
SELECT is(:'rc' || ' ' || (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'fx.users'::regclass AND attname = 'age'),
          '0 smallint', 'column_width: the fix and its script; the column is narrower');
SELECT fix FROM pg_temp.found WHERE category = 'alignment' \g (format=unaligned tuples_only=on) :tmp/align.sql
\set rc `test/fixtures/run_fix.sh :DBNAME :tmp/align.sql :tmp/align`
SELECT is(:'rc'::text, '0', 'alignment (a view over a function of the table''s rows): the fix and its script');
SELECT set_eq('SELECT * FROM fx.padded_totals', 'SELECT * FROM pg_temp.totals', 'that view is back, its rows unchanged');
SELECT is((SELECT array_agg(format('%s.%s', relation, column_name) ORDER BY relation::text, column_name)
             FROM storagelab_internal.findings_int_overflow),
          '{fx.hub2.id,fx.hub3.id,fx.narrow.hub2_id,fx.typed.id}', 'int_overflow: the hub and the child are no finding any more');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_findings_fix;
\set rc `rm -rf :tmp`

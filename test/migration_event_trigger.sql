-- pgTAP: an event trigger that adds an audit trigger to every new table
-- (ddl_command_end on CREATE TABLE, a common pattern) does not leave a
-- migrated table audited twice.  The scripts create their new tables
-- (storagelab_new_<OID>) and change logs with CREATE TABLE: such an event
-- trigger gave them an audit trigger of their own, which fired for every
-- copied row (the audit table filled with rows nobody wrote) and which the
-- new table kept after the swap gave it the old table's audit trigger too.
-- The scripts now check the tables they created and refuse (0A000) naming
-- what was added and the event triggers; with the event trigger disabled
-- (or skipping storagelab_* tables) they run.  An event trigger that raises
-- on CREATE TABLE stops the script, which changes nothing.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_event_trigger;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_event_trigger TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_event_trigger
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
CREATE SCHEMA app;
CREATE TABLE app.audit_log (tbl text, op text);
CREATE FUNCTION app.audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO app.audit_log VALUES (TG_TABLE_NAME, TG_OP);
  RETURN NULL;
END
$$;
-- every new table gets an audit trigger named after it
CREATE FUNCTION app.add_audit() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' AND schema_name = 'app' LOOP
    IF r.object_identity <> 'app.audit_log' THEN
      EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION app.audit_row()',
                     'audit_' || split_part(r.object_identity, '.', 2), r.object_identity);
    END IF;
  END LOOP;
END
$$;
CREATE EVENT TRIGGER add_audit ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS') EXECUTE FUNCTION app.add_audit();
CREATE TABLE app.acct (id serial PRIMARY KEY, name text, v int);
INSERT INTO app.acct (name, v) SELECT 'n' || g, g FROM generate_series(1, 300) g;
TRUNCATE app.audit_log;
CREATE FUNCTION state() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT count(*) || ':' || sum(id) || ':' || sum(v) FROM app.acct) || ' audit ' || (SELECT count(*) FROM app.audit_log)
         || ' ' || (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = 'app.acct'::regclass AND NOT tgisinternal)
$$;
CREATE FUNCTION leftovers() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'
$$;
CREATE TABLE sums AS SELECT state() AS s;

SELECT plan(9);

SELECT is(state(), '300:45150:45150 audit 0 audit_acct', 'the table has its audit trigger, the audit table is empty');

-- 1. blocking layout script
SELECT storagelab.layout_migration_script('app.acct', 'blocking', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/blocking.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking.sql > :tmp/blocking.out 2>&1; echo $?`
\set out `cat :tmp/blocking.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%ERROR:  objects were added to the tables this script creates, as they were created: app.storagelab_new_% trigger audit_storagelab_new_%'),
          '3 true', 'blocking layout: the script stops, naming the trigger the event trigger added');
SELECT ok(:'out'::text LIKE '%DETAIL:  Enabled event triggers: add_audit (ddl_command_end).%', '... and the event trigger');
SELECT is(state() || ' ' || leftovers(), (SELECT s FROM sums) || ' 0', '... nothing changed: rows, audit table, triggers');

-- 2. INT -> BIGINT online: phase start stops (the new table and the change log got audit triggers)
SELECT storagelab.bigint_migration_script('app.acct', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online.sql
\set rc `:run -v phase=start > :tmp/online.out 2>&1; echo $?`
\set out `cat :tmp/online.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%ERROR:  objects were added to the tables this script creates, as they were created: app.storagelab_log_% trigger audit_storagelab_log_%; app.storagelab_new_% trigger audit_storagelab_new_%'),
          '3 true', 'online: phase start stops, naming the triggers added to the log and the new table');
SELECT is(state() || ' ' || leftovers(), (SELECT s FROM sums) || ' 0', '... nothing changed');

-- 3. with the event trigger disabled, every phase runs; the table keeps one audit trigger
ALTER EVENT TRIGGER add_audit DISABLE;
\set rc `for ph in start copy index replay swap validate cleanup; do :run -v phase=$ph >> :tmp/online2.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
ALTER EVENT TRIGGER add_audit ENABLE;
SELECT is(:'rc'::text || ' ' || state() || ' ' || leftovers(), '0 ' || (SELECT s FROM sums) || ' 0',
          'online with the event trigger disabled: every phase runs, no audit row, one audit trigger');

-- 4. an event trigger that raises on CREATE TABLE in the table's schema: the script stops, nothing changes
CREATE FUNCTION app.no_tables() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() WHERE schema_name = 'app') THEN
    RAISE EXCEPTION 'no new tables in schema app';
  END IF;
END
$$;
ALTER EVENT TRIGGER add_audit DISABLE;
SELECT storagelab.layout_migration_script('app.acct', 'blocking', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/blocking2.sql
CREATE EVENT TRIGGER no_tables ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION app.no_tables();
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking2.sql > :tmp/blocking2.out 2>&1; echo $?`
\set out `cat :tmp/blocking2.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%no new tables in schema app%') || ' ' || state() || ' ' || leftovers(),
          '3 true ' || (SELECT s FROM sums) || ' 0', 'an event trigger raising on CREATE TABLE: the blocking script stops, nothing changed');
SELECT storagelab.layout_migration_script('app.acct', 'online', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/online3.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -v phase=start -f :tmp/online3.sql > :tmp/online3.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || state() || ' ' || leftovers(), '3 ' || (SELECT s FROM sums) || ' 0',
          '... the online layout script''s phase start too');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_event_trigger;
\set rc `rm -rf :tmp`

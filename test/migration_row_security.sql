-- pgTAP: a generated script never copies part of a table because
-- row-level security hides rows from the role running it.  The table's
-- owner (not a superuser) sees only the rows its policies allow once the
-- table has FORCE ROW LEVEL SECURITY; an INSERT ... SELECT or UPDATE run as
-- that owner silently skips the others.  Every script that copies or
-- rewrites rows sets row_security = off, so PostgreSQL stops it with
-- 42501 instead, before anything is lost.  Checked for the online
-- INT -> BIGINT script (copy and swap: before this, the owner's run
-- dropped two thirds of the table at cleanup), the
-- blocking layout script and the TOAST storage script; and that a
-- superuser, or an owner with BYPASSRLS, still converts every row with the
-- policies and FORCE kept.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_row_security;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_row_security TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_row_security
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storagelab_rls_owner') THEN
    CREATE ROLE storagelab_rls_owner;
  END IF;
END
$$;
ALTER ROLE storagelab_rls_owner NOBYPASSRLS;
\set tmp `mktemp -d`
CREATE SCHEMA rls AUTHORIZATION storagelab_rls_owner;
-- what the owner's policy shows: tenant 1, a third of the rows
SET ROLE storagelab_rls_owner;
CREATE TABLE rls.t (id serial PRIMARY KEY, tenant int NOT NULL, v int, b bytea);
CREATE TABLE rls.c (id serial PRIMARY KEY, t_id int NOT NULL REFERENCES rls.t, tenant int NOT NULL);
INSERT INTO rls.t (tenant, v, b) SELECT g % 3, g, decode(repeat('ab', 10), 'hex') FROM generate_series(1, 300) g;
INSERT INTO rls.c (t_id, tenant) SELECT g, g % 3 FROM generate_series(1, 300) g;
CREATE POLICY tenant_one ON rls.t USING (tenant = 1);
CREATE POLICY tenant_one ON rls.c USING (tenant = 1);
ALTER TABLE rls.t ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE rls.c ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
SELECT count(*) AS owner_sees FROM rls.t \gset
RESET ROLE;
CREATE TABLE rls_sums AS
  SELECT (SELECT count(*) || ':' || sum(id) || ':' || sum(v) FROM rls.t) AS t, (SELECT count(*) || ':' || sum(t_id) FROM rls.c) AS c;
CREATE FUNCTION rls_state() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT count(*) || ':' || sum(id) || ':' || sum(v) FROM rls.t) || ' ' || (SELECT count(*) || ':' || sum(t_id) FROM rls.c)
$$;

SELECT plan(15);

SELECT is(:owner_sees::int, 100, 'the owner sees a third of the table through its policy (FORCE ROW LEVEL SECURITY)');

-- 1. online INT -> BIGINT (copy and swap), run by the owner: the copy stops
SELECT storagelab.bigint_migration_script('rls.t', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -c "SET ROLE storagelab_rls_owner" -f ' :tmp/online.sql
\set rc `for ph in start copy index replay swap validate cleanup; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
\set out `cat :tmp/online.out`
SELECT is(:'rc'::text, 'copy 3', 'online, as the owner: phase start runs, phase copy stops');
SELECT ok(:'out'::text LIKE '%would be affected by row-level security policy%', '... with PostgreSQL''s row-level security error (42501)');
\set rc `:run -v phase=rollback > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', '... and phase rollback, run by the owner, undoes the start');
SELECT is(rls_state(), (SELECT t || ' ' || c FROM rls_sums), '... every row is still there');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'rls.t'::regclass AND attname = 'id')
          || ' ' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 'integer 0',
          '... the key is integer and nothing of the migration is left');

-- 2. the blocking layout script (one transaction: INSERT ... SELECT)
SELECT storagelab.layout_migration_script('rls.t', 'blocking', column_order => '{tenant,id,v,b}') \g (format=unaligned tuples_only=on) :tmp/layout.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET ROLE storagelab_rls_owner' -f :tmp/layout.sql > :tmp/layout.out 2>&1; echo $?`
\set out `cat :tmp/layout.out`
SELECT is(:'rc'::text, '3', 'layout, blocking, as the owner: the script stops');
SELECT ok(:'out'::text LIKE '%would be affected by row-level security policy%', '... with the row-level security error');
SELECT is(rls_state() || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 'rls.t'::regclass AND attnum = 1),
          (SELECT t || ' ' || c FROM rls_sums) || ' id', '... nothing changed: every row, the old column order');

-- 3. the TOAST storage script rewriting existing values (UPDATE per batch)
SELECT storagelab.storage_migration_script('rls.t', 'b', 'external', true) \g (format=unaligned tuples_only=on) :tmp/toast.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET ROLE storagelab_rls_owner' -f :tmp/toast.sql > :tmp/toast.out 2>&1; echo $?`
\set out `cat :tmp/toast.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%would be affected by row-level security policy%'), '3 true',
          'storage script rewriting values, as the owner: stops with the row-level security error');

-- 4. an owner with BYPASSRLS: the layout script copies every row
ALTER ROLE storagelab_rls_owner BYPASSRLS;
SELECT storagelab.layout_migration_script('rls.t', 'blocking', column_order => '{tenant,id,v,b}') \g (format=unaligned tuples_only=on) :tmp/layout2.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET ROLE storagelab_rls_owner' -f :tmp/layout2.sql > :tmp/layout2.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || rls_state() || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 'rls.t'::regclass AND attnum = 1),
          '0 ' || (SELECT t || ' ' || c FROM rls_sums) || ' tenant', 'layout as an owner with BYPASSRLS: every row, the new column order');
ALTER ROLE storagelab_rls_owner NOBYPASSRLS;

-- 5. a superuser runs the online script: every row, policies and FORCE kept
SELECT storagelab.bigint_migration_script('rls.t', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online2.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online2.sql
\set rc `for ph in start copy index replay swap validate cleanup; do :run -v phase=$ph >> :tmp/online2.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online, as a superuser: every phase runs');
SELECT is(rls_state(), (SELECT t || ' ' || c FROM rls_sums), '... every row is there');
SELECT is((SELECT string_agg(format_type(atttypid, NULL), ',' ORDER BY attrelid) FROM pg_attribute
            WHERE (attrelid, attname) IN (('rls.t'::regclass, 'id'), ('rls.c'::regclass, 't_id'))), 'bigint,bigint',
          '... the key and the foreign key are bigint');
SET ROLE storagelab_rls_owner;
SELECT is((SELECT count(*) FROM rls.t)::text || ' ' || (SELECT relforcerowsecurity FROM pg_class WHERE oid = 'rls.t'::regclass),
          '100 true', '... and the owner still sees only its policy''s rows (policy and FORCE kept)');
RESET ROLE;

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_row_security;
DROP ROLE storagelab_rls_owner;
\set rc `rm -rf :tmp`

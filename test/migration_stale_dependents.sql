-- pgTAP: a copy-and-swap script never puts back an older definition of an
-- object it drops and re-creates.  The swap drops the views and BEGIN
-- ATOMIC functions over the table and creates them again from their
-- definitions (with owner, grants, comments) as they were when the script
-- was written.  One redefined in between (CREATE OR REPLACE VIEW, a grant
-- or comment on the view) was silently reverted; the check under the
-- locks only compared which objects depend on the table.  The fingerprint
-- now covers what the swap re-creates: the blocking layout script and the
-- online scripts (INT -> BIGINT and layout) refuse with 55000 naming the
-- table; the blocking INT -> BIGINT script's pre-flight names the view.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_stale_dependents;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_stale_dependents TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_stale_dependents
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
CREATE TABLE acct (id serial PRIMARY KEY, name text, v int);
INSERT INTO acct (name, v) SELECT 'n' || g, g FROM generate_series(1, 300) g;
CREATE VIEW acct_v AS SELECT id, name FROM acct;
CREATE FUNCTION acct_total() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT sum(v) FROM acct; END;

SELECT plan(9);

-- 1. blocking layout: the view redefined after generation
SELECT storagelab.layout_migration_script('acct', 'blocking', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/blocking.sql
CREATE OR REPLACE VIEW acct_v AS SELECT id, name, v FROM acct WHERE v > 10;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking.sql > :tmp/blocking.out 2>&1; echo $?`
\set out `cat :tmp/blocking.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%of table public.acct %changed since this script was written%'),
          '3 true', 'blocking layout, a view redefined after generation: the script stops');
SELECT is((SELECT count(*) FROM acct_v) || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attnum = 1),
          '290 id', '... the view keeps its new definition, the table its column order');

-- 2. INT -> BIGINT blocking: the view redefined again after generation
SELECT storagelab.bigint_migration_script('acct', 'id', 'blocking') \g (format=unaligned tuples_only=on) :tmp/bblocking.sql
CREATE OR REPLACE VIEW acct_v AS SELECT id, name, v FROM acct WHERE v > 20;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/bblocking.sql > :tmp/bblocking.out 2>&1; echo $?`
\set out `cat :tmp/bblocking.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%the database changed since this script was generated%view public.acct_v was redefined%'),
          '3 true', 'blocking INT -> BIGINT, a view redefined after generation: the script stops, naming the view');
SELECT is((SELECT count(*) FROM acct_v) || ' ' || format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attname = 'id'), NULL),
          '280 integer', '... the view keeps its new definition, the key is integer');

-- 3. INT -> BIGINT online: the function redefined, and a grant and a comment on the view, during the copy
SELECT storagelab.bigint_migration_script('acct', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online.sql
\set rc `for ph in start copy index; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
CREATE OR REPLACE FUNCTION acct_total() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT sum(v) + 1000000 FROM acct; END;
\set rc `for ph in replay swap; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
\set out `cat :tmp/online.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%of table public.acct %changed since this script was written%'),
          'swap 3 true', 'online, a BEGIN ATOMIC function redefined during the copy: phase swap stops');
\set rc `:run -v phase=rollback > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || acct_total(), '0 1045150', '... phase rollback runs, the function keeps its new body');
SELECT storagelab.layout_migration_script('acct', 'online', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/layout.sql
GRANT SELECT ON acct_v TO PUBLIC;
COMMENT ON VIEW acct_v IS 'accounts';
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -v phase=start -f :tmp/layout.sql > :tmp/layout.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), '3 0',
          'online layout, a grant and a comment on the view after generation: phase start stops, creates nothing');

-- 4. a script written after the changes keeps them
SELECT storagelab.layout_migration_script('acct', 'online', column_order => '{v,id,name}') \g (format=unaligned tuples_only=on) :tmp/layout2.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/layout2.sql
\set rc `for ph in start copy index replay swap validate cleanup; do :run -v phase=$ph >> :tmp/layout2.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attnum = 1), '0 v',
          'a script written after the changes: every phase runs');
SELECT is((SELECT count(*) FROM acct_v) || ' ' || acct_total() || ' ' || has_table_privilege('public', 'acct_v', 'SELECT')
          || ' ' || obj_description('acct_v'::regclass, 'pg_class'), '280 1045150 true accounts',
          '... the view''s definition, grant and comment and the function''s body are the new ones');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_stale_dependents;
\set rc `rm -rf :tmp`

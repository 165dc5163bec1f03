-- pgTAP: the privilege matrix of doc/privileges.md, cell by cell, with
-- SET ROLE.  Each public object has one or more probes (a statement that
-- uses it); each probe runs as five roles: one with no predefined role, and
-- one member each of pg_read_all_stats, pg_stat_scan_tables, pg_monitor and
-- pg_read_all_data.  Every role may SELECT priv.t; none is granted
-- anything on priv.secret or its sequence.
--
-- A cell is
--   ok      the statement succeeds
--   42501   it fails with SQLSTATE 42501 and a hint that names a role or a
--           grant (and no internal function)
--   denied  it fails with PostgreSQL's own 42501 on a table, which has no
--           hint (tables only)
--
-- The test fails when an object in schema storagelab has no probe, or a
-- probe names an object that is gone: add a row to the matrix below for
-- every new public object, and to doc/privileges.md.
BEGIN;
SET client_min_messages = warning;
SET LOCAL search_path = public, pg_catalog;

CREATE TEMP TABLE matrix (object text, probe text, plain text, read_all_stats text,
                          stat_scan_tables text, monitor text, read_all_data text);
INSERT INTO matrix VALUES
-- object                                       probe
--   plain     stats     scan      monitor   all_data
('storagelab.int_overflow', 'SELECT count(used_pct) FROM storagelab.int_overflow',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.int_overflow_scan(regclass)', 'SELECT count(*) FROM storagelab.int_overflow_scan(''priv.t'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.int_overflow_scan(regclass)', 'SELECT count(*) FROM storagelab.int_overflow_scan(''priv.secret'')',
  '42501',    '42501',  '42501',  '42501',  'ok'),
('storagelab.int_overflow_snapshot()', 'SELECT storagelab.int_overflow_snapshot()',
  '42501',    '42501',  '42501',  'ok',     '42501'),
('storagelab.snapshot()', 'SELECT storagelab.snapshot()',
  '42501',    '42501',  '42501',  'ok',     '42501'),
('storagelab.int_overflow_history', 'SELECT count(value) FROM storagelab.int_overflow_history',
  'denied',   'denied', 'denied', 'denied', 'ok'),
('storagelab.visibility', 'SELECT count(pages) FROM storagelab.visibility',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.heap_visibility(regclass,integer)', 'SELECT advice FROM storagelab.heap_visibility(''priv.t'')',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.heap_visibility(regclass,integer)', 'SELECT advice FROM storagelab.heap_visibility(''priv.secret'')',
  '42501',    '42501',  '42501',  '42501',  '42501'),
('storagelab.heap_visibility_toast(regclass,integer)', 'SELECT advice FROM storagelab.heap_visibility_toast(''priv.t'')',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.bytea_storage', 'SELECT count(advice) FROM storagelab.bytea_storage',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.toast_profile(regclass,name,integer)', 'SELECT advice FROM storagelab.toast_profile(''priv.t'', ''b'')',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.storage_migration_script(regclass,name,text,boolean)', 'SELECT storagelab.storage_migration_script(''priv.t'', ''b'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.column_waste', 'SELECT count(*) FROM storagelab.column_waste',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.alignment_padding', 'SELECT count(*) FROM storagelab.alignment_padding',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.table_rewrite_plan', 'SELECT count(*) FROM storagelab.table_rewrite_plan',
  'ok',       'ok',     'ok',     'ok',     'ok'),
-- findings: sources a role may not use are left out, never an error
('storagelab.findings', 'SELECT count(*) FROM storagelab.findings',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.report()', 'SELECT count(*) FROM storagelab.report()',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.report_html(jsonb)', 'SELECT length(storagelab.report_html())',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.column_profile(regclass)', 'SELECT count(*) FROM storagelab.column_profile(''priv.t'')',
  '42501',    '42501',  'ok',     'ok',     '42501'),
('storagelab.column_profile(regclass)', 'SELECT count(*) FROM storagelab.column_profile(''priv.secret'')',
  '42501',    '42501',  '42501',  '42501',  '42501'),
('storagelab.setting_values', 'SELECT count(*) FROM storagelab.setting_values',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.settings', 'SELECT count(*) FROM storagelab.settings',
  'ok',       'ok',     'ok',     'ok',     'ok'),
-- layout migrations: catalogs, the plan, and SELECT on the changed columns for the pre-flight
('storagelab.layout_migration_script(regclass,text,jsonb,name[])', 'SELECT storagelab.layout_migration_script(''priv.t'', column_order => ''{n,b,id}'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.layout_migration_plan()', 'SELECT count(*) FROM storagelab.layout_migration_plan()',
  'ok',       'ok',     'ok',     'ok',     'ok'),
-- INT->BIGINT migration generator
('storagelab.bigint_migration_object', 'SELECT NULL::storagelab.bigint_migration_object',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_progress', 'SELECT count(*) FROM storagelab.bigint_migration_progress',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_objects(regclass,name)', 'SELECT count(*) FROM storagelab.bigint_migration_objects(''priv.t'', ''id'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_script(regclass,name,text,text)', 'SELECT storagelab.bigint_migration_script(''priv.t'', ''id'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_group_script(regclass[],name[],text,text)', 'SELECT storagelab.bigint_migration_group_script(ARRAY[''priv.t''::regclass], ARRAY[''id''::name])',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_group_objects(regclass[],name[])', 'SELECT count(*) FROM storagelab.bigint_migration_group_objects(ARRAY[''priv.t''::regclass], ARRAY[''id''::name])',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.bigint_migration_plan(text,text)', 'SELECT count(*) FROM storagelab.bigint_migration_plan()',
  'ok',       'ok',     'ok',     'ok',     'ok'),
-- copy and swap: with no table given, nothing to copy or replay
('storagelab.rewrite_online_copy(text,jsonb,numeric,integer,interval)',
  'CALL storagelab.rewrite_online_copy(''slpriv'', ''[]'', 0, 1, ''0'')',
  'ok',       'ok',     'ok',     'ok',     'ok'),
('storagelab.rewrite_online_replay(text,jsonb,bigint,bigint,interval)',
  'CALL storagelab.rewrite_online_replay(''slpriv'', ''[]'', 0, 1, ''1 s'')',
  'ok',       'ok',     'ok',     'ok',     'ok');

-- The cells are matrix rows x these roles.
CREATE TEMP TABLE roles (col text, role name, member_of name);
INSERT INTO roles VALUES
  ('plain', 'priv_plain', NULL),
  ('read_all_stats', 'priv_stats', 'pg_read_all_stats'),
  ('stat_scan_tables', 'priv_scan', 'pg_stat_scan_tables'),
  ('monitor', 'priv_monitor', 'pg_monitor'),
  ('read_all_data', 'priv_data', 'pg_read_all_data');

SELECT plan((SELECT count(*)::int * 5 FROM matrix) + 16);

-- Every object of schema storagelab has a probe, and every probe's object exists.
CREATE TEMP VIEW public_objects AS
  SELECT p.oid::regprocedure::text AS object FROM pg_proc p
   WHERE p.pronamespace = 'storagelab'::regnamespace
  UNION ALL
  SELECT c.oid::regclass::text FROM pg_class c
   WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  UNION ALL
  SELECT t.oid::regtype::text FROM pg_type t
   WHERE t.typnamespace = 'storagelab'::regnamespace AND t.typtype IN ('c', 'd', 'e', 'r')
     AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c');
SELECT is_empty($$SELECT object FROM public_objects EXCEPT SELECT object FROM matrix$$,
                'every object in schema storagelab has a row in the privilege matrix');
SELECT is_empty($$SELECT object FROM matrix EXCEPT SELECT object FROM public_objects$$,
                'every row of the privilege matrix names an object in schema storagelab');

-- Fixtures: a table every test role may read, and one nobody may, whose
-- sequence stands at 99.7 % of its range.
CREATE SCHEMA priv;
GRANT USAGE ON SCHEMA priv TO PUBLIC;
CREATE TABLE priv.t (id serial PRIMARY KEY, n int, b bytea);
INSERT INTO priv.t (n, b) SELECT g, decode(repeat('ab', 3000), 'hex') FROM generate_series(1, 20) g;
CREATE TABLE priv.secret (id serial PRIMARY KEY, b bytea);
INSERT INTO priv.secret (b) VALUES ('\x00');
SELECT setval('priv.secret_id_seq', 2141041794);
-- a progress row of a copy of priv.t (read by every role, written only by
-- the roles that may UPDATE priv.t: tested at the end)
INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block, done) VALUES ('slpriv', 'priv.t', 0, true);
ANALYZE priv.t, priv.secret;
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT * FROM roles LOOP
    EXECUTE format('CREATE ROLE %I', r.role);
    IF r.member_of IS NOT NULL THEN
      EXECUTE format('GRANT %I TO %I', r.member_of, r.role);
    END IF;
    EXECUTE format('GRANT SELECT ON priv.t TO %I', r.role);
  END LOOP;
END
$$;

-- try(statement): 'ok', '42501' (with a hint naming a role or grant, and
-- no internal function named anywhere in the error), 'denied' (42501
-- without a hint), or the SQLSTATE and message of anything else.
CREATE FUNCTION priv.try(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  state text;
  msg text;
  detail text;
  hint text;
  internals text;
BEGIN
  EXECUTE statement;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
  SELECT string_agg(DISTINCT p.proname, '|') INTO internals
    FROM pg_proc p WHERE p.pronamespace = 'storagelab_internal'::regnamespace;
  IF concat_ws(' ', msg, detail, hint) ~ ('storagelab_internal|\m(' || internals || ')\(') THEN
    RETURN 'names an internal function: ' || concat_ws(' / ', msg, detail, hint);
  ELSIF state = '42501' AND coalesce(hint, '') ~ '(pg_[a-z_]+|GRANT|Grant)' THEN
    RETURN '42501';
  ELSIF state = '42501' AND coalesce(hint, '') = '' THEN
    RETURN 'denied';
  END IF;
  RETURN state || ': ' || concat_ws(' / ', msg, detail, hint);
END
$$;

CREATE TEMP TABLE cells (object text, probe text, col text, role name, expected text, got text);
GRANT INSERT ON cells TO PUBLIC;
DO $$
DECLARE
  m record;
  r record;
  got text;
BEGIN
  FOR m IN SELECT * FROM matrix LOOP
    FOR r IN SELECT * FROM roles LOOP
      EXECUTE format('SET LOCAL ROLE %I', r.role);
      got := priv.try(m.probe);
      RESET ROLE;
      INSERT INTO cells VALUES (m.object, m.probe, r.col, r.role, to_jsonb(m) ->> r.col, got);
    END LOOP;
  END LOOP;
END
$$;
SELECT is(got, expected, format('%s as %s', probe, col)) FROM cells ORDER BY object, probe, col;

-- int_overflow: a pg_monitor member with no grant on the sequence sees its
-- usage; a plain role sees the row, unreadable.
SET LOCAL ROLE priv_monitor;
CREATE TEMP TABLE seen_by_monitor AS
  SELECT used_pct, severity, status FROM storagelab.int_overflow
   WHERE relation = 'priv.secret'::regclass AND column_name = 'id';
RESET ROLE;
SELECT results_eq('SELECT used_pct, severity, status FROM seen_by_monitor',
                  $$VALUES (99.700::numeric, 'critical', 'ok')$$,
                  'pg_monitor reads the position of a sequence it has no grant on (99.7 %)');
SET LOCAL ROLE priv_plain;
CREATE TEMP TABLE seen_by_plain AS
  SELECT used_pct, severity, status FROM storagelab.int_overflow
   WHERE relation = 'priv.secret'::regclass AND column_name = 'id';
RESET ROLE;
SELECT results_eq('SELECT used_pct, severity, status FROM seen_by_plain',
                  $$VALUES (NULL::numeric, NULL::text, 'unreadable')$$,
                  'a role without grant or pg_read_all_stats: the row is there, unreadable');

-- A snapshot recorded by pg_monitor holds that value; pg_monitor cannot
-- read the value back from the table.
DELETE FROM storagelab.int_overflow_history;
SET LOCAL ROLE priv_monitor;
SELECT storagelab.int_overflow_snapshot() AS recorded \gset
RESET ROLE;
SELECT is((SELECT value FROM storagelab.int_overflow_history
            WHERE schema_name = 'priv' AND table_name = 'secret' AND column_name = 'id'),
          2141041794::numeric, 'pg_monitor''s snapshot records the sequence it may not read');

-- visibility: pg_read_all_stats lists every table, with its counts.
SET LOCAL ROLE priv_monitor;
CREATE TEMP TABLE vm_by_monitor AS
  SELECT pages FROM storagelab.visibility WHERE relation = 'priv.secret'::regclass;
RESET ROLE;
SELECT is((SELECT pages FROM vm_by_monitor), 1::bigint,
          'visibility: pg_monitor reads the visibility map of a table it may not SELECT');

-- The refusal says what to grant.
SET LOCAL ROLE priv_plain;
SELECT throws_like('SELECT * FROM storagelab.visibility', '%permission denied to read table pages%',
                   'visibility as a plain role: permission denied, not an internal function');
SELECT throws_ok('SELECT storagelab.int_overflow_snapshot()', '42501',
                 'permission denied to record int_overflow snapshots',
                 'int_overflow_snapshot() as a plain role: 42501');
RESET ROLE;

-- column profiles: a pg_stat_scan_tables member writes and deletes the
-- profiles of the tables it may read only (a planted profile would steer
-- another table's advice).
SELECT count(*) AS profiled FROM storagelab.column_profile('priv.secret') \gset
SET LOCAL ROLE priv_scan;
SELECT throws_ok($$INSERT INTO storagelab_internal.column_profiles
                   VALUES ('priv.secret'::regclass, 2, 'b', 'bytea'::regtype, -1, now(), 1, 0,
                           1, NULL, NULL, NULL, NULL, NULL, NULL)$$,
                 '42501', NULL, 'column_profiles: no row for a table the member may not read');
DELETE FROM storagelab_internal.column_profiles WHERE relid = 'priv.secret'::regclass;
SELECT lives_ok($$SELECT count(*) FROM storagelab.column_profile('priv.t')$$,
                'column_profile() of a table the member may read still stores its rows');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM storagelab_internal.column_profiles
            WHERE relid = 'priv.secret'::regclass), :profiled::int,
          'column_profiles: the member deleted none of another table''s rows');

-- progress rows of online copies (and of 1.0's backfills): every role reads
-- them; only roles that may UPDATE the table (and superusers) write them
SET LOCAL ROLE priv_plain;
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_progress WHERE relation = 'priv.t'), 1::bigint,
          'bigint_migration_progress: a role without UPDATE on the table reads its progress row');
WITH u AS (UPDATE storagelab.bigint_migration_progress SET done = false, next_block = 5 WHERE relation = 'priv.t' RETURNING 1)
SELECT is((SELECT count(*) FROM u), 0::bigint, '... but cannot change it');
WITH d AS (DELETE FROM storagelab.bigint_migration_progress WHERE relation = 'priv.t' RETURNING 1)
SELECT is((SELECT count(*) FROM d), 0::bigint, '... nor delete it');
SELECT throws_ok($$INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block) VALUES ('sl0', 'priv.t', 0)$$,
                 '42501', NULL, '... nor add one');
RESET ROLE;
SELECT is((SELECT (done, next_block) FROM storagelab.bigint_migration_progress WHERE relation = 'priv.t'), (true, 0::bigint),
          'bigint_migration_progress: the row is as its writer left it');

SELECT * FROM finish();
ROLLBACK;

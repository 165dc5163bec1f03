-- pgTAP: storagelab.findings and report() on Pagila plus pgbench with six
-- seeded problems: a serial at 95 %, a bytea column of incompressible 1 MB
-- values stored EXTENDED, a bulk-loaded table never vacuumed, a padded
-- table, a table narrowable only jointly, and an integer column without a
-- sequence holding 2147483647 (a sentinel).  Each must be listed once with
-- the right fix; the fixes run; the VACUUM fix makes its finding go away.
-- The seeds are committed (the visibility finding needs the statistics of a
-- committed load) in schema findings_seed, dropped at the end.
\set ECHO none
\i test/fixtures/pagila.sql
\i test/fixtures/wait_for_snapshots.sql
\set pgbench_scale 1
SELECT to_regclass('public.pgbench_accounts') IS NOT NULL AS pgbench_loaded \gset
\if :pgbench_loaded
\else
\i test/fixtures/pgbench.sql
\endif
\o /dev/null
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS findings_seed CASCADE;
CREATE SCHEMA findings_seed;
-- 1. a serial at 95 %
CREATE TABLE findings_seed.orders (id serial PRIMARY KEY, note text);
INSERT INTO findings_seed.orders (note) VALUES ('a'), ('b');
SELECT setval('findings_seed.orders_id_seq', (0.95 * 2147483647)::int8);
-- 2. incompressible 1 MB values, EXTENDED (the default)
CREATE TABLE findings_seed.files (id int8 PRIMARY KEY, data bytea);
INSERT INTO findings_seed.files
SELECT g, (SELECT decode(string_agg(md5((i + 100000 * g)::text), ''), 'hex')
             FROM generate_series(1, 65536) i)
  FROM generate_series(1, 6) g;
-- 3. bulk-loaded, never vacuumed nor analyzed
CREATE TABLE findings_seed.events (id int8, kind text, at timestamptz)
  WITH (autovacuum_enabled = off);
INSERT INTO findings_seed.events
SELECT g, 'event kind ' || g % 7, timestamptz '2026-01-01' + g * interval '1 second'
  FROM generate_series(1, 200000) g;
-- 4. padding: every bigint and timestamp after a boolean, nothing to narrow
CREATE TABLE findings_seed.padded (a boolean, b timestamptz, c boolean, d int8, e boolean,
                                   f timestamptz);
INSERT INTO findings_seed.padded
SELECT g % 2 = 0, timestamptz '2026-01-01' + g * interval '1 minute', g % 3 = 0,
       g::int8 * 5000000000, true, now()
  FROM generate_series(1, 100000) g;
-- 5. narrowable only together (age 13-50, gender 0-2)
CREATE TABLE findings_seed.users (uid bigint PRIMARY KEY, age bigint, gender bigint,
                                  lastvisit timestamp);
INSERT INTO findings_seed.users
SELECT g, 13 + (g * 7) % 38, g % 3, timestamp '2026-01-01' + g * interval '1 minute'
  FROM generate_series(1, 200000) g;
-- 6. no sequence: a legacy reference with the sentinel 2147483647 for "unknown", indexed
CREATE TABLE findings_seed.imports (id int8 PRIMARY KEY, legacy_ref int);
CREATE INDEX ON findings_seed.imports (legacy_ref);
INSERT INTO findings_seed.imports SELECT g, CASE WHEN g = 7 THEN 2147483647 ELSE g END FROM generate_series(1, 100) g;
-- (VACUUM freezes, and marks all-visible, only rows older than every other snapshot)
SELECT pg_temp.wait_for_snapshots();
VACUUM (FREEZE, ANALYZE) findings_seed.orders, findings_seed.files, findings_seed.padded,
                         findings_seed.users, findings_seed.imports;
ANALYZE public.pgbench_accounts;
SELECT pg_stat_force_next_flush();
\o
RESET client_min_messages;
-- the load's statistics reach the cumulative statistics (deadline 60 s)
DO $$
DECLARE deadline timestamptz := clock_timestamp() + interval '60 seconds';
BEGIN
  LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN pg_stat_get_ins_since_vacuum('findings_seed.events'::regclass) > 0
           OR clock_timestamp() > deadline;
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
\set ECHO all

SELECT plan(26);
CREATE TEMP TABLE seen AS
SELECT * FROM storagelab.findings WHERE relation::text LIKE 'findings_seed.%';

-- each seeded problem once, with the right fix
SELECT is((SELECT string_agg(concat_ws(' | ', relation, column_name, category, fix), E'\n'
                             ORDER BY relation::text) FROM seen),
          concat_ws(E'\n',
            'findings_seed.events | visibility | VACUUM (FREEZE, ANALYZE) findings_seed.events;',
            'findings_seed.files | data | toast | SELECT storagelab.storage_migration_script(''findings_seed.files'', ''data'', ''external'');',
            'findings_seed.imports | legacy_ref | int_overflow | SELECT storagelab.bigint_migration_script(''findings_seed.imports'', ''legacy_ref'', ''online'');',
            'findings_seed.orders | id | int_overflow | SELECT storagelab.bigint_migration_script(''findings_seed.orders'', ''id'', ''online'');',
            'findings_seed.padded | alignment | SELECT storagelab.layout_migration_script(''findings_seed.padded'');',
            'findings_seed.users | column_width | SELECT storagelab.layout_migration_script(''findings_seed.users'');'),
          'the six seeded problems, once each, with their fixes');
SELECT is((SELECT string_agg(concat_ws(' ', relation, severity, metric, unit, evidence), ', '
                             ORDER BY relation::text) FROM seen),
          'findings_seed.events warning hint_debt_pages pages exact, '
          'findings_seed.files warning large_incompressible_pct percent exact, '
          'findings_seed.imports critical used_pct percent exact, '
          'findings_seed.orders critical used_pct percent exact, '
          'findings_seed.padded info saved_bytes bytes statistics, '
          'findings_seed.users info saved_bytes bytes statistics',
          'severity, metric, unit and evidence of each');
SELECT is((SELECT value FROM seen WHERE category = 'int_overflow' AND relation = 'findings_seed.orders'::regclass), 95.0, 'the serial shows 95.0 % used');
SELECT is((SELECT string_agg(message, ' / ' ORDER BY relation::text) FROM seen WHERE category = 'int_overflow'),
          'integer column holds its type''s limit itself (a sentinel?): check its writers, then migrate / '
          'integer column is running out of values: migrate it to bigint',
          'a column without a sequence at its type''s bound itself is said to be maybe a sentinel; a serial is running out');
SELECT is((SELECT value FROM seen WHERE category = 'toast'), 100.0,
          'every sampled large value is incompressible');
SELECT is((SELECT sample_rows FROM seen WHERE category = 'toast'), 6::int8, 'the sample size is given (six rows: all of them, exact)');
SELECT cmp_ok((SELECT value FROM seen WHERE category = 'visibility'),
              '>=', (SELECT pg_relation_size('findings_seed.events') / 8192 * 0.9)::numeric,
              'hint debt: about every page of the load');
SELECT is((SELECT estimated_saved_bytes FROM seen WHERE category = 'column_width'),
          (SELECT estimated_saved_bytes FROM storagelab.table_rewrite_plan
            WHERE relation = 'findings_seed.users'::regclass),
          'column_width saving is the plan''s');
SELECT ok((SELECT estimated_saved_bytes > 0 FROM seen WHERE category = 'alignment'), 'padding saving > 0');

-- typed rows: messages short and free of numbers, one order
SELECT is((SELECT count(*) FROM storagelab.findings WHERE length(message) > 100), 0::int8,
          'every message fits 100 characters');
SELECT is((SELECT count(*) FROM storagelab.findings WHERE message ~ '[0-9]'), 0::int8,
          'no message carries a number');
SELECT is((SELECT count(*) FROM storagelab.findings
            WHERE category NOT IN ('int_overflow', 'visibility', 'toast', 'column_width', 'alignment')
               OR severity NOT IN ('critical', 'warning', 'info')
               OR evidence NOT IN ('exact', 'statistics', 'sampled', 'estimate') OR fix IS NULL), 0::int8,
          'categories, severities and evidence from their lists; every row has a fix');
SELECT is((SELECT count(*) FROM storagelab.findings
            WHERE relation = 'public.pgbench_accounts'::regclass AND category = 'column_width'
              AND NOT EXISTS (SELECT 1 FROM storagelab.table_rewrite_plan p,
                                     jsonb_array_elements(p.column_changes) e
                               WHERE p.relation = 'public.pgbench_accounts'::regclass
                                 AND e->>'column_name' IN ('abalance', 'bid'))), 
          (SELECT count(*) FROM storagelab.findings
            WHERE relation = 'public.pgbench_accounts'::regclass AND category = 'column_width'),
          'pgbench_accounts: a column_width finding never rests on narrowing abalance');

-- the fixes run
SELECT ok(storagelab.bigint_migration_script('findings_seed.orders', 'id', 'online') IS NOT NULL,
          'int_overflow fix returns a script');
SELECT ok(storagelab.storage_migration_script('findings_seed.files', 'data', 'external') LIKE '%SET STORAGE EXTERNAL%',
          'toast fix returns a SET STORAGE EXTERNAL script');

-- report(): summary first, every finding with its fix, 100 columns
CREATE TEMP TABLE rep AS SELECT row_number() OVER () AS n, r AS line FROM storagelab.report() r;
SELECT matches((SELECT line FROM rep WHERE n = 1),
               '^storagelab: [0-9]+ [kMG]?B database, [0-9]+ [kMG]?B to save, nearest overflow findings_seed\.imports\.legacy_ref \(100\.0',
               'summary line: size, saving, nearest overflow (the sentinel, at its bound already)');
SELECT is((SELECT line FROM rep WHERE n = 2), 'critical (' ||
          (SELECT count(*) FROM storagelab.findings WHERE severity = 'critical') || ')',
          'critical findings first');
SELECT is((SELECT count(*) FROM rep WHERE line IN (SELECT '    ' || fix FROM seen)), 6::int8,
          'each seeded fix is in the report');
SELECT is((SELECT count(*) FROM rep WHERE length(line) > 100 AND line NOT LIKE '    SELECT %'
                                                              AND line NOT LIKE '    VACUUM %'),
          0::int8, 'report lines fit 100 columns (fixes are printed whole)');
SELECT is((SELECT count(*) FROM rep), 1 + (SELECT count(DISTINCT severity) FROM storagelab.findings)
                                        + 3 * (SELECT count(*) FROM storagelab.findings),
          'one summary, one header per severity, three lines per finding');

-- a role that may read nothing: a clean database for it
CREATE ROLE findings_nobody;
SET ROLE findings_nobody;
SELECT is((SELECT count(*) FROM storagelab.findings), 0::int8, 'nothing readable: no finding');
SELECT matches((SELECT string_agg(r, E'\n') FROM storagelab.report() r),
               '^storagelab: nothing found in database [^\n]*\nnot read by role findings_nobody: [0-9]+ table\(s\), [0-9]+ sequence\(s\)[^\n]*\n    [^\n]*findings_seed\.',
               'nothing readable: nothing found, and it names what the role could not read');
RESET ROLE;
DROP ROLE findings_nobody;

-- the VACUUM fix removes its finding
\o /dev/null
SELECT fix FROM seen WHERE category = 'visibility' \gexec
\o
SELECT is((SELECT count(*) FROM storagelab.findings
            WHERE relation = 'findings_seed.events'::regclass), 0::int8,
          'after its VACUUM fix the load is no finding any more');
-- the bigint fix, run (psql -f, as a DBA would), removes the overflow finding
\set tmp `mktemp -d`
SELECT storagelab.bigint_migration_script('findings_seed.orders', 'id', 'blocking')
\g (format=unaligned tuples_only=on) :tmp/orders.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/orders.sql > :tmp/orders.out 2>&1; echo $?`
\! rm -rf :tmp
SELECT is(:'rc'::text, '0', 'the generated migration runs');
SELECT is((SELECT count(*) FROM storagelab.findings
            WHERE relation = 'findings_seed.orders'::regclass), 0::int8,
          'after the bigint migration the serial is no finding any more');
SELECT is((SELECT count(*) FROM findings_seed.orders), 2::int8, 'and its rows are kept');

SELECT * FROM finish();
\o /dev/null
SET client_min_messages = warning;
DROP SCHEMA findings_seed CASCADE;

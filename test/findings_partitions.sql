-- pgTAP: column_width and alignment findings of partitions and inheritance
-- children.  table_rewrite_plan lists them one by one, but the layout
-- script rebuilds them only with their topmost parent: a finding per
-- partition with fix layout_migration_script('<partition>') was refused
-- (0A000), and the parent, which has no plan of its own, could not be given
-- without column_order.  Each tree makes one finding on its parent now,
-- whose fix, run as written, writes a script that runs (a partitioned
-- table, an empty inheritance parent); partitions whose plans disagree (a
-- NOT NULL of one partition orders it differently) get their plans to
-- read, which runs too.
-- Own database: the scripts run in another session, so the tables are
-- committed.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_findings_parts;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_findings_parts TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_findings_parts
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`

CREATE SCHEMA fp;
-- padded only: every bigint after a boolean
CREATE TABLE fp.ev (a boolean, b int8, c boolean, d int8, k int NOT NULL) PARTITION BY LIST (k);
CREATE TABLE fp.ev1 PARTITION OF fp.ev FOR VALUES IN (1);
CREATE TABLE fp."ev 2" PARTITION OF fp.ev FOR VALUES IN (2);
INSERT INTO fp.ev SELECT g % 2 = 0, g * 3000000000::int8, true, g * 3000000000::int8, 1 + g % 2
  FROM generate_series(1, 20000) g;
-- plans that disagree: w is NOT NULL in one partition only (NOT NULL
-- columns come first in their alignment group)
CREATE TABLE fp.dis (a boolean, v int8, w int8, k int NOT NULL) PARTITION BY LIST (k);
CREATE TABLE fp.dis1 PARTITION OF fp.dis FOR VALUES IN (1);
CREATE TABLE fp.dis2 PARTITION OF fp.dis FOR VALUES IN (2);
ALTER TABLE fp.dis1 ALTER COLUMN w SET NOT NULL;
INSERT INTO fp.dis SELECT true, g * 3000000000::int8, g * 3000000000::int8, 1 + g % 2
  FROM generate_series(1, 20000) g;
-- inheritance: an empty parent, a child with a column of its own
CREATE TABLE fp.par (a boolean, b int8, c boolean, d int8);
CREATE TABLE fp.kid (note text) INHERITS (fp.par);
INSERT INTO fp.kid SELECT g % 2 = 0, g * 3000000000::int8, true, g * 3000000000::int8, 'n' || g % 9
  FROM generate_series(1, 20000) g;
ANALYZE fp.ev1, fp."ev 2", fp.dis1, fp.dis2, fp.par, fp.kid;
INSERT INTO storagelab.settings VALUES ('findings.min_saved_size', '0');

CREATE TABLE pg_temp.found AS
SELECT relation::text AS relation, category, message, fix FROM storagelab.findings
 WHERE category IN ('column_width', 'alignment') AND relation::text LIKE 'fp.%';
CREATE TABLE pg_temp.runs (relation text, rc int, how text);

-- run each fix as written; the scripts it writes run in their own session
SELECT relation AS rel, rtrim(fix, ';') AS fix, replace(relation, ' ', '_') AS file
  FROM pg_temp.found WHERE relation = 'fp.ev' \gset
:fix \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO pg_temp.runs VALUES (:'rel', :'rc', 'script');
SELECT relation AS rel, rtrim(fix, ';') AS fix, relation AS file FROM pg_temp.found WHERE relation = 'fp.par' \gset
:fix \g (format=unaligned tuples_only=on) :tmp/:file.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/:file.sql > :tmp/:file.out 2>&1; echo $?`
INSERT INTO pg_temp.runs VALUES (:'rel', :'rc', 'script');
SELECT relation AS rel, fix FROM pg_temp.found WHERE relation = 'fp.dis' \gset
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c :'fix' > :tmp/dis.out 2>&1; echo $?`
INSERT INTO pg_temp.runs VALUES (:'rel', :'rc', 'plans');

BEGIN;
SELECT plan(9);

SELECT is((SELECT array_agg(relation || ' ' || category ORDER BY relation) FROM pg_temp.found),
          '{"fp.dis alignment","fp.ev alignment","fp.par alignment"}',
          'one finding per tree, on its topmost parent; none on a partition or child');
SELECT is((SELECT fix FROM pg_temp.found WHERE relation = 'fp.ev'),
          $$SELECT storagelab.layout_migration_script('fp.ev', column_order => '{b,d,k,a,c}');$$,
          'the partitions agree: the fix gives the partitioned table their order');
SELECT is((SELECT fix FROM pg_temp.found WHERE relation = 'fp.dis'),
          $$SELECT relation, column_changes, column_order FROM storagelab.table_rewrite_plan WHERE relation IN ('fp.dis1'::regclass, 'fp.dis2'::regclass);$$,
          'the partitions disagree: the fix reads their plans');
SELECT is((SELECT message FROM pg_temp.found WHERE relation = 'fp.dis'),
          'its partitions or children plan differently: read their plans, choose for the parent',
          'the partitions disagree: the message says so');
SELECT is((SELECT array_agg(relation || ':' || rc ORDER BY relation) FROM pg_temp.runs),
          '{fp.dis:0,fp.ev:0,fp.par:0}', 'every fix ran as written, and the scripts to COMMIT');
SELECT is((SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = 'fp."ev 2"'::regclass AND attnum > 0 AND NOT attisdropped),
          'b,d,k,a,c', 'padded partitions: rebuilt in the planned order');
SELECT is((SELECT count(*) FROM fp.ev) + (SELECT count(*) FROM fp.par), 40000::int8,
          'every row is still there');
SELECT is((SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
            WHERE attrelid = 'fp.kid'::regclass AND attnum > 0 AND NOT attisdropped),
          'b,d,a,c,note', 'inheritance child: the parent''s columns in the planned order, then its own');
SELECT is((SELECT count(*) FROM storagelab.findings
            WHERE category IN ('column_width', 'alignment') AND relation::text LIKE 'fp.%'
              AND relation::text <> 'fp.dis'), 0::int8, 'after the scripts: nothing left to find but fp.dis');

SELECT * FROM finish();
ROLLBACK;

\set rc `rm -rf :tmp`
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_findings_parts;

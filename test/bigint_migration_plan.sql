-- pgTAP: bigint_migration_plan() in a scratch database with the pgbench
-- tables.  storagelab.int_overflow belongs to another part of storagelab;
-- when it is not installed, this test stands in a view with its documented
-- columns (relation, column_name, severity, referencing_columns) that rates the
-- twelve int4 columns, and checks the grouping, the order and that every
-- script runs.  With the real view installed it checks that the plan runs
-- and that its scripts execute.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_plan;
CREATE DATABASE storagelab_tap_bigint_plan;
\c storagelab_tap_bigint_plan
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
\set pgbench_scale 1
\i test/fixtures/pgbench.sql
CREATE TABLE public.other (id serial PRIMARY KEY);
CREATE TABLE public.other_child (other_id int REFERENCES public.other);
\set tmp `mktemp -d`
SELECT to_regclass('storagelab.int_overflow') IS NULL AS stand_in \gset
\if :stand_in
CREATE VIEW storagelab.int_overflow AS
  SELECT c.oid::regclass AS relation, a.attname AS column_name,
         CASE WHEN c.relname = 'other' THEN 'critical'
              WHEN a.attname IN ('aid', 'bid', 'tid', 'delta') THEN 'warning' ELSE 'ok' END AS severity,
         NULL::text[] AS referencing_columns
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE (c.relname LIKE 'pgbench%' OR c.relname LIKE 'other%') AND c.relkind = 'r' AND a.attnum > 0 AND a.atttypid = 'int4'::regtype;
\endif
CREATE TABLE plan AS SELECT * FROM storagelab.bigint_migration_plan();

SELECT plan(7);
SELECT ok((SELECT count(*) FROM plan WHERE blockers IS NOT NULL) = 0, 'no blockers on the pgbench tables');
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_plan('online') WHERE blockers IS NULL AND strpos(script, E'\\if :ph_swap') > 0),
          (SELECT count(*) FROM plan), 'in online mode the plan has an online script (with its swap phase) for every group');
\if :stand_in
SELECT is((SELECT count(*) FROM plan), 2::bigint,
          'two groups: the pgbench components share tables (one script, each table rewritten once), other.id is apart');
SELECT is((SELECT array[risk] || columns || tables FROM plan WHERE step = 1),
          ARRAY['critical', 'public.other.id', 'public.other', 'public.other_child'], 'the critical group comes first, with its component');
\else
SELECT pass('the real int_overflow view decides the grouping');
SELECT pass('the real int_overflow view decides the risk');
\endif
SELECT ok(NOT EXISTS (SELECT 1 FROM plan p, plan q WHERE p.step < q.step AND p.risk = 'warning' AND q.risk = 'critical'),
          'no warning group before a critical one');
-- Run every script of the plan, in order.
SELECT string_agg(script, E'\n' ORDER BY step) FROM plan \g (format=unaligned tuples_only=on) :tmp/plan.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/plan.sql > :tmp/plan.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'the plan''s scripts run to COMMIT one after the other');
SELECT is((SELECT count(*) FROM plan p, unnest(p.columns) col
            WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                               WHERE format('%I.%I.%I', c.relnamespace::regnamespace, c.relname, a.attname) = col
                                 AND a.atttypid = 'int8'::regtype)), 0::bigint,
          'every column the plan names is bigint afterwards');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_plan;
\set rc `rm -rf :tmp`

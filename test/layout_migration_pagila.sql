-- pgTAP: layout_migration_script() on Pagila.  Every table that
-- table_rewrite_plan proposes a rewrite for (after column_profile(): exact
-- evidence) is rebuilt by its generated script, executed with psql -v
-- ON_ERROR_STOP=1 -f in a scratch database; then: each heap's
-- pg_relation_size (after VACUUM) within 5 % of the plan's prediction, the
-- columns in the planned order, row counts and checksums of every table and
-- view unchanged, every object definition unchanged (snap.catalog()), every
-- constraint valid, foreign keys and sequences working.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_layout_pagila;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_layout_pagila TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_layout_pagila
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/pagila.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`

-- exact facts for every ordinary table of Pagila
SELECT count(*) FROM pg_class c, storagelab.column_profile(c.oid::regclass)
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' \g /dev/null
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.plans AS
SELECT relation::text AS rel, column_order, column_changes, estimated_bytes_after FROM storagelab.table_rewrite_plan;

SELECT plan(11);

SELECT cmp_ok((SELECT count(*) FROM snap.plans), '>=', 3::int8, 'the plan proposes to rebuild some of Pagila''s tables');
-- customer: rewards_report() returns SETOF customer (re-created with the new row type)
SELECT ok((SELECT 'customer' = ANY (array_agg(rel)) FROM snap.plans), 'customer is among them');

SELECT string_agg(storagelab.layout_migration_script(rel::regclass), E'\n' ORDER BY rel) FROM snap.plans
\g (format=unaligned tuples_only=on) :tmp/all.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/all.sql > :tmp/all.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'every script ran to COMMIT');
VACUUM;

SELECT is((SELECT array_agg(format('%s: predicted %s, measured %s', rel, estimated_bytes_after, pg_relation_size(rel::regclass)) ORDER BY rel)
             FROM snap.plans
            WHERE abs(pg_relation_size(rel::regclass) - estimated_bytes_after) > 0.05 * estimated_bytes_after),
          NULL, 'every rebuilt heap is within 5 % of its predicted size');
SELECT diag(string_agg(format('%s: predicted %s, measured %s', rel, estimated_bytes_after, pg_relation_size(rel::regclass)), ', ' ORDER BY rel))
  FROM snap.plans;
SELECT is((SELECT array_agg(rel ORDER BY rel) FROM snap.plans p
            WHERE p.column_order <> ARRAY(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = p.rel::regclass
                                           AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum)),
          NULL, 'every table has its planned column order');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table, view and materialized view unchanged');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'every object re-created exactly: indexes, constraints, foreign keys (to the partitioned payment too), views, triggers, functions, grants, comments');
SELECT is((SELECT count(*) FROM pg_constraint WHERE NOT convalidated), 0::int8, 'every constraint is valid');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::int8, 'nothing left behind');
SELECT lives_ok($$INSERT INTO public.rental (rental_date, inventory_id, customer_id, staff_id)
                  VALUES (now(), 1, 1, 1)$$, 'a new rental: its serial goes on, its foreign keys find their rows');
SELECT throws_ok($$INSERT INTO public.payment (customer_id, staff_id, rental_id, amount, payment_date)
                   VALUES (1, 1, -1, 1, timestamptz '2022-02-01')$$, '23503', NULL,
                 'the partitioned payment''s foreign key points to the new rental');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_layout_pagila;
\set rc `rm -rf :tmp`

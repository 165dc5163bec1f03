-- pgTAP: bigint_migration_script(mode => 'online', copy and swap) on
-- Pagila.  All thirteen int4 keys go through every phase (start, copy,
-- index, replay, swap, validate, cleanup), each executed with psql
-- -v ON_ERROR_STOP=1 -f in a scratch database; then: every column of those
-- components is bigint, row counts and checksums of every table and view
-- unchanged (the copy must not fire last_update triggers), every view,
-- trigger, constraint, index, comment as it was, every table's columns in
-- their order, no leftover new, old or log table, trigger or progress row.
-- customer_id, rental_id and staff_id reach the partitioned payment table
-- (rebuilt with its partitions: a log, a copy and a progress row per
-- partition); payment_id is in the partitioned table's primary key.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_online_pagila;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_online_pagila TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_online_pagila
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/pagila.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
-- Pagila's film_in_stock() passes inventory_id to inventory_in_stock(integer):
-- a real function hazard, refused by default (test/bigint_migration_hazards.sql
-- tests those); the scripts here accept it, so that every object stays exact.
\set hazards accept
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.runs (tbl text, rc text);
CREATE TABLE snap.cols_before AS
  SELECT c.oid::regclass::text AS rel, array_agg(a.attname ORDER BY a.attnum) AS cols
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
   WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
   GROUP BY c.oid;

SELECT plan(11);

\set t actor
\i test/fixtures/bigint_migration_run_online.sql
\set t address
\i test/fixtures/bigint_migration_run_online.sql
\set t category
\i test/fixtures/bigint_migration_run_online.sql
\set t city
\i test/fixtures/bigint_migration_run_online.sql
\set t country
\i test/fixtures/bigint_migration_run_online.sql
\set t customer
\i test/fixtures/bigint_migration_run_online.sql
\set t film
\i test/fixtures/bigint_migration_run_online.sql
\set t inventory
\i test/fixtures/bigint_migration_run_online.sql
\set t language
\i test/fixtures/bigint_migration_run_online.sql
\set t payment
\i test/fixtures/bigint_migration_run_online.sql
\set t rental
\i test/fixtures/bigint_migration_run_online.sql
\set t staff
\i test/fixtures/bigint_migration_run_online.sql
\set t store
\i test/fixtures/bigint_migration_run_online.sql

SELECT is((SELECT string_agg(tbl, ', ' ORDER BY tbl) FROM snap.runs WHERE rc <> '0'), NULL,
          'all seven phases of the thirteen online scripts ran without error');
SELECT is((SELECT count(*) FROM snap.runs WHERE rc = '0'), 91::bigint, '... 91 phase runs');
SELECT set_eq(
  $$SELECT format('%s.%s', c.relname, a.attname) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0
       AND NOT a.attisdropped AND a.atttypid = 'int4'::regtype$$,
  ARRAY['customer.active', 'store.manager_staff_id'],
  'only non-key int4 columns remain (the partitions of payment included)');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table and view unchanged');
-- actor_info's values are order-dependent (group_concat), so snap.data()
-- compares its rows as sorted words; a real change must still show
BEGIN;
UPDATE film SET title = title || ' II' WHERE film_id = (SELECT min(film_id) FROM film_actor);
SELECT isnt((SELECT checksum FROM snap.data('^public\.actor_info$')),
            (SELECT checksum FROM snap.before WHERE rel = 'public.actor_info'),
            '... and a changed film title changes actor_info''s checksum');
ROLLBACK;
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'views, triggers, constraints (names, actions), indexes, comments, privileges as they were');
SELECT set_eq($$SELECT c.oid::regclass::text, array_agg(a.attname ORDER BY a.attnum)
                  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
                 GROUP BY c.oid$$, 'SELECT * FROM snap.cols_before',
              'every table (partitions of payment included) has its columns in their original order');
SELECT is((SELECT count(*) FROM pg_attribute WHERE attname LIKE 'storagelab\_%' AND NOT attisdropped)
          + (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::bigint,
          'no new, old or log table and no shadow column left');
SELECT is((SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%storagelab%')
          + (SELECT count(*) FROM pg_proc WHERE proname LIKE 'storagelab\_%' AND pronamespace NOT IN ('storagelab'::regnamespace, 'storagelab_internal'::regnamespace))
          + (SELECT count(*) FROM storagelab.bigint_migration_progress), 0::bigint,
          'no log trigger, log function or progress row left');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND NOT convalidated), 0::bigint,
          'all constraints valid');
SELECT setval('film_film_id_seq', 2147483647::bigint + 5) \g /dev/null
SELECT setval('customer_customer_id_seq', 2147483647::bigint + 5) \g /dev/null
SELECT setval('rental_rental_id_seq', 2147483647::bigint + 5) \g /dev/null
SELECT setval('payment_payment_id_seq', 2147483647::bigint + 5) \g /dev/null
SELECT lives_ok($$WITH f AS (INSERT INTO film (title, language_id) VALUES ('Big', 1) RETURNING film_id),
                       i AS (INSERT INTO inventory (film_id, store_id) SELECT film_id, 1 FROM f RETURNING inventory_id),
                       c AS (INSERT INTO customer (store_id, first_name, last_name, address_id) VALUES (1, 'Big', 'C', 1) RETURNING customer_id),
                       r AS (INSERT INTO rental (rental_date, inventory_id, customer_id, staff_id) SELECT now(), inventory_id, customer_id, 1 FROM i, c
                             RETURNING rental_id, customer_id)
                  INSERT INTO payment (customer_id, staff_id, rental_id, amount, payment_date)
                  SELECT customer_id, 1, rental_id, 1.99, '2022-03-15 12:00+00' FROM r$$,
                'insert past 2^31 through film -> inventory -> rental -> payment (a partition, new payment_id) and customer');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_online_pagila;
\set rc `rm -rf :tmp`

-- pgTAP: bigint_migration_script() on Pagila.  Converts every int4 key
-- (actor, address, category, city, country, customer, film, inventory,
-- language, payment -- partitioned --, rental, staff, store), one generated
-- script after the other, each executed with psql -v ON_ERROR_STOP=1 -f in a
-- scratch database, then checks the database: every key and FK column is
-- bigint, row counts and per-table checksums unchanged, every view returns
-- the same rows, every constraint valid, and inserts succeed through the FK
-- chain after setval past 2^31.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_pagila;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_pagila TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_pagila
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

-- Generate and run one script per key, in the order a DBA might.
CREATE TABLE snap.keys (ord int, tbl text);
INSERT INTO snap.keys VALUES (1, 'actor'), (2, 'address'), (3, 'category'), (4, 'city'), (5, 'country'),
  (6, 'customer'), (7, 'film'), (8, 'inventory'), (9, 'language'), (10, 'payment'), (11, 'rental'),
  (12, 'staff'), (13, 'store');
CREATE TABLE snap.runs (tbl text, rc text);

SELECT plan(15);

\set t actor
\i test/fixtures/bigint_migration_run.sql
\set t address
\i test/fixtures/bigint_migration_run.sql
\set t category
\i test/fixtures/bigint_migration_run.sql
\set t city
\i test/fixtures/bigint_migration_run.sql
\set t country
\i test/fixtures/bigint_migration_run.sql
\set t customer
\i test/fixtures/bigint_migration_run.sql
\set t film
\i test/fixtures/bigint_migration_run.sql
\set t inventory
\i test/fixtures/bigint_migration_run.sql
\set t language
\i test/fixtures/bigint_migration_run.sql
\set t payment
\i test/fixtures/bigint_migration_run.sql
\set t rental
\i test/fixtures/bigint_migration_run.sql
\set t staff
\i test/fixtures/bigint_migration_run.sql
\set t store
\i test/fixtures/bigint_migration_run.sql

SELECT is((SELECT count(*) FROM snap.runs WHERE rc = '0'), 13::bigint, 'all 13 generated scripts ran to COMMIT');

-- Types: every *_id column that is a key or references one is bigint now;
-- the only int4 columns left are customer.active and store.manager_staff_id
-- (no FK is declared on it, so it is not part of any component).
SELECT set_eq(
  $$SELECT format('%s.%s', c.relname, a.attname) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0
       AND NOT a.attisdropped AND a.atttypid = 'int4'::regtype$$,
  ARRAY['customer.active', 'store.manager_staff_id'],
  'only non-key int4 columns remain');
SELECT is((SELECT count(*) FROM pg_constraint c, unnest(c.conkey) k, pg_attribute a
            WHERE c.contype IN ('p', 'f') AND c.connamespace = 'public'::regnamespace
              AND a.attrelid = c.conrelid AND a.attnum = k AND a.atttypid NOT IN ('int8'::regtype, 'timestamptz'::regtype)),
          0::bigint, 'every primary-key and foreign-key column is bigint (payment''s key also has payment_date)');
SELECT is((SELECT count(*) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
            WHERE c.relnamespace = 'public'::regnamespace AND s.seqtypid <> 'int8'::regtype), 0::bigint,
          'every sequence is bigint');
SELECT is((SELECT count(*) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
            WHERE c.relnamespace = 'public'::regnamespace AND s.seqmax <> 9223372036854775807), 0::bigint,
          'every sequence has the bigint MAXVALUE');

-- Data and views: same rows.
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
              'row counts and checksums of every table and view unchanged');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'views, triggers, constraints, indexes, comments, privileges as they were');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND NOT convalidated),
          0::bigint, 'all constraints valid');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype = 'f'),
          (SELECT count(*) FROM snap.catalog_before WHERE kind = 'constraint' AND def LIKE 'FOREIGN KEY%'), 'every foreign key is back');
SELECT ok((SELECT relispopulated = false FROM pg_class WHERE oid = 'public.rental_by_category'::regclass),
          'rental_by_category is re-created unpopulated, as it was');

-- Past 2^31 through the FK chain.
SELECT setval(s.seqrelid::regclass, 2147483647::bigint + 100) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
 WHERE c.relnamespace = 'public'::regnamespace \g /dev/null
SELECT lives_ok($$
  WITH co AS (INSERT INTO country (country) VALUES ('Bigland') RETURNING country_id),
       ci AS (INSERT INTO city (city, country_id) SELECT 'Big City', country_id FROM co RETURNING city_id),
       ad AS (INSERT INTO address (address, district, city_id, phone) SELECT '1 Long Road', 'D', city_id, '1' FROM ci RETURNING address_id)
  INSERT INTO store (manager_staff_id, address_id) SELECT 1000, address_id FROM ad$$,
  'insert country -> city -> address -> store past 2^31');
SELECT lives_ok($$
  WITH st AS (INSERT INTO staff (first_name, last_name, address_id, store_id, username)
              SELECT 'Big', 'Staff', (SELECT max(address_id) FROM address), (SELECT max(store_id) FROM store), 'big' RETURNING staff_id, store_id, address_id),
       la AS (INSERT INTO language (name) VALUES ('Bigspeak') RETURNING language_id),
       fi AS (INSERT INTO film (title, language_id) SELECT 'Big Film', language_id FROM la RETURNING film_id),
       ac AS (INSERT INTO actor (first_name, last_name) VALUES ('Big', 'Actor') RETURNING actor_id),
       fa AS (INSERT INTO film_actor (actor_id, film_id) SELECT actor_id, film_id FROM ac, fi RETURNING film_id),
       ca AS (INSERT INTO category (name) VALUES ('Big') RETURNING category_id),
       fc AS (INSERT INTO film_category (film_id, category_id) SELECT film_id, category_id FROM fi, ca RETURNING film_id),
       cu AS (INSERT INTO customer (store_id, first_name, last_name, address_id, active)
              SELECT store_id, 'Big', 'Customer', address_id, 1 FROM st RETURNING customer_id, store_id),
       iv AS (INSERT INTO inventory (film_id, store_id) SELECT film_id, store_id FROM fi, st RETURNING inventory_id),
       re AS (INSERT INTO rental (rental_date, inventory_id, customer_id, staff_id)
              SELECT now(), inventory_id, customer_id, staff_id FROM iv, cu, st RETURNING rental_id, customer_id, staff_id)
  INSERT INTO payment (customer_id, staff_id, rental_id, amount, payment_date)
  SELECT customer_id, staff_id, rental_id, 1.99, '2022-03-15 12:00+00' FROM re$$,
  'insert staff, language, film, actor, category, customer, inventory, rental, payment past 2^31');
SELECT is((SELECT min(payment_id) FROM payment WHERE amount = 1.99 AND payment_date = '2022-03-15 12:00+00'
            AND payment_id > 2147483647) > 2147483647, true, 'the new payment has an id past 2^31');
SELECT is((SELECT count(*) FROM customer_list WHERE id > 2147483647), 1::bigint,
          'the views show the new rows');
SELECT throws_ok($$INSERT INTO rental (rental_date, inventory_id, customer_id, staff_id) VALUES (now(), 3000000000, 1, 1)$$,
                 '23503', NULL, 'the foreign keys still reject a missing parent');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_pagila;
\set rc `rm -rf :tmp`

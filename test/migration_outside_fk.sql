-- pgTAP: between the swap and cleanup of an online (copy-and-swap) script,
-- the old table's foreign keys to tables outside the rewrite do not get in
-- the clients' way.  Before, the old table (storagelab_old_<OID>) kept
-- them: a client that deleted its rows and then the row they referenced in
-- the other table failed with "violates foreign key constraint ... on table
-- storagelab_old_<OID>" until cleanup, as the old table still held the
-- rows the clients had deleted from the new one.  The swap now moves those
-- foreign keys to the new table (it already added them there) and drops
-- them from the old one; a rollback gives them back (NOT VALID, then
-- validated with the rest).  Checked for the online layout script of the
-- referencing table and the INT -> BIGINT online script of a table with a
-- foreign key ON DELETE CASCADE to a table outside its component.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_outside_fk;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_outside_fk TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_outside_fk
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
CREATE TABLE customer (id int PRIMARY KEY);
INSERT INTO customer SELECT g FROM generate_series(1, 300) g;
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customer, amount int);
INSERT INTO orders SELECT g, g, g FROM generate_series(1, 300) g;
CREATE TABLE visit (id int PRIMARY KEY, customer_id int REFERENCES customer ON DELETE CASCADE);
INSERT INTO visit SELECT g, g FROM generate_series(1, 300) g;
CREATE FUNCTION fks() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(conrelid::regclass::text || ' ' || conname || ' ' || convalidated, ', ' ORDER BY conrelid::regclass::text, conname)
    FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace
$$;
CREATE FUNCTION state() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM customer) || ' ' || (SELECT count(*) || ':' || sum(amount) FROM orders) || ' ' || (SELECT count(*) FROM visit)
$$;

SELECT plan(8);

-- 1. online layout script of orders; INT -> BIGINT online of visit.id
SELECT storagelab.layout_migration_script('orders', 'online', column_order => '{amount,id,customer_id}') \g (format=unaligned tuples_only=on) :tmp/layout.sql
SELECT storagelab.bigint_migration_script('visit', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f '
\set rc `for f in layout online; do for ph in start copy index replay swap validate; do :run :tmp/$f.sql -v phase=$ph >> :tmp/$f.out 2>&1 || { echo "$f $ph $?"; exit; }; done; done; echo 0`
SELECT is(:'rc'::text, '0', 'both scripts: phases start to validate run');
SELECT ok((SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'storagelab\_old\_%') = 0
          AND fks() = 'orders orders_customer_id_fkey true, visit visit_customer_id_fkey true',
          'after the swap the foreign keys are on the new tables only, validated');

-- 2. the clients delete an order, then its customer; and a customer whose visit cascades
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'BEGIN; DELETE FROM orders WHERE customer_id = 3; DELETE FROM customer WHERE id = 3; COMMIT;' > :tmp/client.out 2>&1; echo $?`
\set out `cat :tmp/client.out`
SELECT is(:'rc'::text || ' ' || :'out', '0 ', 'between swap and cleanup, a customer whose order was deleted can be deleted');
SELECT throws_ok($$DELETE FROM customer WHERE id = 4$$, '23503', NULL, '... one still referenced by an order cannot');
SELECT is(state(), '299 299:45147 299', '... rows: the customer, its order and its cascaded visit are gone');

-- 3. rollback of both: the old tables get their foreign keys back, validated, and the changes since the swap
\set rc `for f in layout online; do :run :tmp/$f.sql -v phase=rollback >> :tmp/$f.rb 2>&1 || { echo "$f $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text || ' ' || state(), '0 299 299:45147 299', 'phase rollback of both runs; the rows are as the clients left them');
SELECT is(fks(), 'orders orders_customer_id_fkey true, visit visit_customer_id_fkey true',
          '... the old tables have their foreign keys again, validated');
SELECT is((SELECT attname FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum = 1) || ' '
          || format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = 'visit'::regclass AND attname = 'id'), NULL)
          || ' ' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'),
          'id integer 0', '... the old column order and types, nothing of the migrations left');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_outside_fk;
\set rc `rm -rf :tmp`

-- pgTAP: the rewrite engine on Pagila's partitioned payment (range
-- partitions by month, a serial key, foreign keys to customer, staff and
-- rental, views over it), through both of its users, every generated
-- script executed with psql in a scratch database:
--   1. layout_migration_script() mode blocking;
--   2. mode online, phase by phase with payments written between them;
--   3. bigint_migration_script(mode => 'copy_swap') of rental.rental_id,
--      whose component holds payment.
-- After each: rows per partition joined by key, the partition tree, every
-- object definition (snap.catalog()), row counts and checksums of every
-- table and view, every constraint and index valid, foreign keys enforced.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_parts_pagila;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_parts_pagila TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_parts_pagila
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/pagila.sql
\i test/fixtures/bigint_migration_helpers.sql
\i test/fixtures/rewrite_partitions.sql
\set tmp `mktemp -d`
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '4'), ('bigint_migration.backfill_pause', '0'),
  ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.tree_before AS SELECT * FROM snap.tree();
-- payments written between the phases: new ones in several months, amounts
-- changed, a payment moved to another month (another partition), deletes
CREATE FUNCTION snap.write(k int) RETURNS void LANGUAGE sql AS $$
  INSERT INTO public.payment (customer_id, staff_id, rental_id, amount, payment_date)
  SELECT 1 + g % 599, 1 + g % 2, 1 + (g * 97) % 16000, g % 10, timestamptz '2022-01-05' + g * interval '9 days'
    FROM generate_series(1, 20) g;
  UPDATE public.payment SET amount = amount + 1 WHERE payment_id % 97 = k;
  UPDATE public.payment SET payment_date = payment_date + interval '1 month' WHERE payment_id % 89 = k AND payment_date < '2022-06-01';
  DELETE FROM public.payment WHERE payment_id % 83 = k;
$$;
CREATE FUNCTION snap.diff(before text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM snap.part_rows() a FULL JOIN %s b USING (tree, part, key, checksum, n) WHERE a.key IS NULL OR b.key IS NULL', before)
    INTO n;
  RETURN n;
END $$;

SELECT plan(22);
SELECT cmp_ok((SELECT count(*) FROM snap.tree_before WHERE member LIKE 'payment%'), '>=', 7::int8, 'payment has its monthly partitions');

-- 1. blocking
CREATE TABLE snap.rows1 AS SELECT * FROM snap.part_rows();
CREATE TABLE snap.data1 AS SELECT * FROM snap.data();
SELECT storagelab.layout_migration_script('public.payment',
         column_order => '{payment_date,payment_id,amount,customer_id,staff_id,rental_id}')
\g (format=unaligned tuples_only=on) :tmp/blocking.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking.sql > :tmp/blocking.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'blocking: the script ran to COMMIT');
SELECT is(snap.diff('snap.rows1'), 0::int8, 'blocking: every payment in its partition, by key, with its values');
SELECT cmp_ok((SELECT count(DISTINCT part) FROM snap.rows1 WHERE tree = 'payment'), '>=', 7::int8, '... in every monthly partition');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.data1', 'blocking: row counts and checksums of every table and view');
SELECT set_eq('SELECT * FROM snap.tree()', 'SELECT * FROM snap.tree_before', 'blocking: the partition tree as it was');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', 'blocking: every object re-created exactly');
SELECT is((SELECT string_agg(DISTINCT (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_attribute a
                                        WHERE a.attrelid = m.relid AND a.attnum > 0 AND NOT a.attisdropped), ' | ')
             FROM pg_partition_tree('public.payment') m),
          'payment_date,payment_id,amount,customer_id,staff_id,rental_id', 'blocking: payment and its partitions in the new order');
SELECT throws_ok($$INSERT INTO public.payment (customer_id, staff_id, rental_id, amount, payment_date) VALUES (1, 1, -1, 1, '2022-02-01')$$,
                 '23503', NULL, 'blocking: payment''s foreign key to rental');
SELECT lives_ok($$INSERT INTO public.payment (customer_id, staff_id, rental_id, amount, payment_date) VALUES (1, 1, 1, 1, '2022-02-01')$$,
                'blocking: a new payment: the serial goes on, routed to its month');

-- 2. online, with payments written between the phases
SELECT storagelab.layout_migration_script('public.payment', 'online',
         column_order => '{payment_id,customer_id,staff_id,rental_id,amount,payment_date}')
\g (format=unaligned tuples_only=on) :tmp/online.sql
\set rc `for p in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online.sql >> :tmp/online.out 2>&1 || { echo $p; exit; }; psql -X -q -d :DBNAME -c "SELECT snap.write(3)" > /dev/null || { echo write; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: start, copy, index, replay, with payments written after each');
CREATE TABLE snap.rows2 AS SELECT * FROM snap.part_rows();
CREATE TABLE snap.data2 AS SELECT * FROM snap.data() WHERE rel !~ 'storagelab_';
\set rc `for p in swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online.sql >> :tmp/online.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: swap, validate, cleanup');
SELECT is(snap.diff('snap.rows2'), 0::int8, 'online: every payment in its partition, by key, with its values');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.data2', 'online: row counts and checksums of every table and view');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', 'online: every object re-created exactly');
SELECT set_eq('SELECT * FROM snap.tree()', 'SELECT * FROM snap.tree_before', 'online: the partition tree as it was');

-- 3. INT -> BIGINT of rental.rental_id by copy and swap: the component holds payment
SELECT snap.write(5);
CREATE TABLE snap.rows3 AS SELECT * FROM snap.part_rows();
CREATE TABLE snap.data3 AS SELECT * FROM snap.data();
SELECT storagelab.bigint_migration_script('public.rental', 'rental_id', 'copy_swap', function_hazards => 'accept')
\g (format=unaligned tuples_only=on) :tmp/cs.sql
\set rc `for p in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/cs.sql >> :tmp/cs.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'copy_swap: every phase through cleanup');
SELECT is((SELECT string_agg(DISTINCT format_type(a.atttypid, NULL), ',') FROM pg_partition_tree('public.payment') m
             JOIN pg_attribute a ON a.attrelid = m.relid AND a.attname = 'rental_id'), 'bigint',
          'copy_swap: payment.rental_id is bigint in payment and every partition');
SELECT is(snap.diff('snap.rows3'), 0::int8, 'copy_swap: every payment in its partition, by key, with its values');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.data3', 'copy_swap: row counts and checksums of every table and view');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', 'copy_swap: every object re-created exactly');
SELECT is((SELECT count(*) FROM pg_constraint WHERE NOT convalidated) + (SELECT count(*) FROM pg_index WHERE NOT indisvalid)
          + (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'storagelab\_%'),
          0::int8, 'every constraint and index valid, nothing left behind');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_parts_pagila;
\set rc `rm -rf :tmp`

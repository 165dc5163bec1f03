-- pgTAP: a key column named in layout_migration_script()'s column_types
-- is retyped with its whole foreign-key component.  Fixture: accounts
-- referenced by invoices and payments (ON DELETE CASCADE), payments
-- referencing invoices, a view over accounts and invoices, a
-- self-referencing tree.  Every generated script is executed with psql in a
-- scratch database; oracles: the columns' types, row counts and checksums of
-- every table and view (snap.data(), rows as jsonb) and every object
-- definition (snap.catalog(), nothing that names a type) before and after,
-- the foreign keys valid and enforced afterwards.
--   1. accounts.id bigint -> integer, blocking: invoices.account_id and
--      payments.account_id follow;
--   2. invoices.account_id integer -> smallint, online (every phase): the
--      key it references and the other reference follow;
--   3. a value of another table of the component that does not fit: refused
--      naming that table and the value;
--   4. a self-referencing key: both columns of the table together;
--   5. a component with a serial column: refused (0A000).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_layout_keys;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_layout_keys TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_layout_keys
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '2'), ('bigint_migration.backfill_pause', '0'),
  ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');


SELECT plan(22);

CREATE SCHEMA kc;
-- no statistics, no plan: the scripts change what column_types names
CREATE TABLE kc.account (id int8 PRIMARY KEY, name text NOT NULL) WITH (autovacuum_enabled = false);
CREATE TABLE kc.invoice (id int8 PRIMARY KEY, account_id int8 NOT NULL REFERENCES kc.account, amount numeric(12,2))
  WITH (autovacuum_enabled = false);
CREATE INDEX invoice_account ON kc.invoice (account_id);
CREATE TABLE kc.payment (id int8 PRIMARY KEY, account_id int8 REFERENCES kc.account ON DELETE CASCADE,
                         invoice_id int8 REFERENCES kc.invoice, paid_at timestamptz) WITH (autovacuum_enabled = false);
CREATE TABLE kc.node (id int8 PRIMARY KEY, parent_id int8 REFERENCES kc.node, label text) WITH (autovacuum_enabled = false);
INSERT INTO kc.account SELECT g, 'a' || g FROM generate_series(1, 2000) g;
INSERT INTO kc.invoice SELECT g, g % 2000 + 1, g * 1.5 FROM generate_series(1, 6000) g;
INSERT INTO kc.payment SELECT g, g % 2000 + 1, g % 6000 + 1, timestamptz '2026-01-01' + g * interval '1 h' FROM generate_series(1, 8000) g;
INSERT INTO kc.node SELECT g, CASE WHEN g > 1 THEN g / 2 END, 'n' || g FROM generate_series(1, 1000) g;
CREATE VIEW kc.balance AS SELECT a.id, sum(i.amount) AS billed FROM kc.account a JOIN kc.invoice i ON i.account_id = a.id GROUP BY a.id;
CREATE FUNCTION snap.types() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(format('%s.%s %s', attrelid::regclass, attname, format_type(atttypid, atttypmod)), ', '
                    ORDER BY attrelid::regclass::text, attname)
    FROM pg_attribute
   WHERE attrelid IN ('kc.account'::regclass, 'kc.invoice'::regclass, 'kc.payment'::regclass)
     AND attname IN ('id', 'account_id', 'invoice_id')
$$;
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();

-- 1. accounts.id bigint -> integer, blocking
SELECT storagelab.layout_migration_script('kc.account', column_types => '{"id": "integer"}') AS script \gset
SELECT matches(:'script'::text, E'-- With the foreign-key component of its retyped key[^\n]*\n[^\n]*\n'
                                 || E'--   kc.invoice.account_id integer \\(was bigint\\)\n--   kc.payment.account_id integer \\(was bigint\\)\n',
               '1. the header lists the other columns of the key''s component');
SELECT matches(:'script'::text, E'--   kc.invoice \\(rebuilt with the table: its foreign-key component\\)\n',
               '1. ... and locks their tables');
SELECT :'script' \g (format=unaligned tuples_only=on) :tmp/k1.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/k1.sql > :tmp/k1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', '1. the script runs to COMMIT');
SELECT is(snap.types(), 'kc.account.id integer, kc.invoice.account_id integer, kc.invoice.id bigint, kc.payment.account_id integer, '
                        'kc.payment.id bigint, kc.payment.invoice_id bigint', '1. the key and every column referencing it are integer, nothing else changed');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before', '1. every row of every table and view is as it was');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              '1. every index, constraint, foreign key and view is as it was');
SELECT is((SELECT count(*) FROM pg_constraint WHERE connamespace = 'kc'::regnamespace AND contype = 'f' AND convalidated), 4::int8,
          '1. the four foreign keys are valid');
SELECT throws_ok($$INSERT INTO kc.invoice VALUES (99999, 5000, 1)$$, '23503', NULL, '1. ... and enforced');
DELETE FROM kc.payment WHERE invoice_id IN (SELECT id FROM kc.invoice WHERE account_id = 7);
DELETE FROM kc.invoice WHERE account_id = 7;
SELECT ok((SELECT count(*) FROM kc.payment WHERE account_id = 7) > 0, '1. (payments of account 7 are left)');
DELETE FROM kc.account WHERE id = 7;
SELECT is((SELECT count(*) FROM kc.payment WHERE account_id = 7), 0::int8, '1. ON DELETE CASCADE still cascades');
DELETE FROM snap.before;
INSERT INTO snap.before SELECT * FROM snap.data();

-- 2. invoices.account_id integer -> smallint, online, phase by phase
SELECT storagelab.layout_migration_script('kc.invoice', 'online', column_types => '{"account_id": "smallint"}') \g (format=unaligned tuples_only=on) :tmp/k2.sql
\set rc `for p in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/k2.sql >> :tmp/k2.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', '2. online: every phase runs');
SELECT is(snap.types(), 'kc.account.id smallint, kc.invoice.account_id smallint, kc.invoice.id bigint, kc.payment.account_id smallint, '
                        'kc.payment.id bigint, kc.payment.invoice_id bigint', '2. the referenced key and the other reference are smallint too');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before', '2. every row is as it was');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', '2. every object is as it was');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'), 0::int8, '2. nothing left behind');

-- 3. a value of another table of the component that does not fit
INSERT INTO kc.node VALUES (40000, NULL, 'far');
SELECT throws_ok($$SELECT storagelab.layout_migration_script('kc.node', column_types => '{"parent_id": "smallint"}')$$,
                 '22000', 'a value of column id of kc.node does not fit type smallint',
                 '3. a value of the referenced key that does not fit: refused, naming column and table');
CREATE FUNCTION snap.hint_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
  RETURN h;
END
$$;
SELECT is(snap.hint_of($$SELECT storagelab.layout_migration_script('kc.node', column_types => '{"parent_id": "smallint"}')$$),
          'The column is in the foreign-key component of the key named in column_types: give that key a type that holds every value of its component, or leave it out.',
          '3. ... with a hint that says why that column changes');
DELETE FROM kc.node WHERE id = 40000;

-- 4. a self-referencing key: the table's own columns together
SELECT storagelab.layout_migration_script('kc.node', column_types => '{"parent_id": "integer"}') \g (format=unaligned tuples_only=on) :tmp/k4.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/k4.sql > :tmp/k4.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', '4. a self-referencing key: the script runs');
SELECT is((SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attname) FROM pg_attribute
            WHERE attrelid = 'kc.node'::regclass AND attname IN ('id', 'parent_id')), 'id integer, parent_id integer',
          '4. ... the key and the column referencing it are integer');
SELECT is((SELECT count(*) FROM kc.node n JOIN kc.node p ON p.id = n.parent_id), 999::int8, '4. ... every link is kept');

-- 4b. two keys of one component given two types: refused, not one of them chosen
SELECT throws_ok($$SELECT storagelab.layout_migration_script('kc.node', column_types => '{"id": "bigint", "parent_id": "smallint"}')$$,
                 '22023', 'column_types gives one foreign-key component two types',
                 '4b. the key and the column referencing it named with two types: refused');

-- 5. a serial column in the component
CREATE TABLE kc.s (id serial PRIMARY KEY);
CREATE TABLE kc.sref (id int PRIMARY KEY, s_id int REFERENCES kc.s);
SELECT throws_ok($$SELECT storagelab.layout_migration_script('kc.sref', column_types => '{"s_id": "smallint"}')$$,
                 '0A000', 'layout migrations do not change the type of a key whose foreign-key component holds identity or sequence-fed columns',
                 '5. a component with a serial column: refused');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_layout_keys;
\set rc `rm -rf :tmp`

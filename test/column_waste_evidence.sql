-- pgTAP: column_waste and table_rewrite_plan withhold a narrowing when the
-- evidence behind it is weak on data shaped like an application's, and say
-- what a change would break:
--   - a column of 6,000 rows with only twelve non-NULL values (a reference set
--     on a few rows): twelve values say nothing, however many rows are NULL;
--   - an integral numeric judged from ANALYZE's sample: a fractional value
--     the sample missed is rounded without an error by ALTER COLUMN ...
--     TYPE integer, so only column_profile() (which sees every value)
--     allows it;
--   - an order number assigned by the application (UNIQUE, no sequence),
--     1001 to 7000: a key that grows like any key, never narrowed; the same
--     values in a column that is no key still are;
--   - events.user_id and "accountId" without a foreign key (1 to 5000):
--     named as identifiers, they grow with the rows they refer to; a column
--     with the same values and another name is still narrowed;
--   - a total generated from qty * price: narrowing both to smallint (as
--     the plan did) computes the product in smallint, which overflows when
--     the rewrite copies the rows or on a later INSERT;
--   - char(n) -> varchar(n) and text of timestamps with offsets ->
--     timestamptz say what changes (trailing blanks compared, offsets lost),
--     as do text -> boolean, uuid and timestamp (read back as the type
--     prints them: 'TRUE' as true, upper-case UUIDs in lowercase),
--     and a new column order what statements without a column list see.
-- Own database: nothing of it is left for the tests that read every table.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_evidence;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_evidence TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_evidence
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;

CREATE SCHEMA ev;
-- autovacuum off: its ANALYZE would see the fraction added after ours
CREATE TABLE ev.sparse (id int8 PRIMARY KEY, ref int8, note text)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.sparse SELECT g, CASE WHEN g % 500 = 0 THEN g / 500 END, 'n' || g % 7
  FROM generate_series(1, 6000) g;
CREATE TABLE ev.amounts (id int8 PRIMARY KEY, amount numeric NOT NULL, n int4 NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.amounts SELECT g, 1000000 + g * 3, g * 100000 FROM generate_series(1, 20000) g;
CREATE TABLE ev.wholes (id int8 PRIMARY KEY, whole numeric NOT NULL, n int4 NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.wholes SELECT g, 1000000 + g * 3, g * 100000 FROM generate_series(1, 20000) g;
-- (qty is too wide for smallint: only the order numbers can save bytes)
CREATE TABLE ev.orders (id int8 PRIMARY KEY, order_no int8 NOT NULL UNIQUE, copy_no int8 NOT NULL,
                        qty int4 NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.orders SELECT g, 1000 + g, 1000 + g, g * 100000 FROM generate_series(1, 6000) g;
CREATE TABLE ev.lines (id int8 PRIMARY KEY, qty int8 NOT NULL, price int8 NOT NULL, note text,
                       total int8 GENERATED ALWAYS AS (qty * price) STORED, n int8 NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.lines (id, qty, price, note, n)
SELECT g, 1 + g % 100, 1 + (g * 7) % 300, 'x', 1 + g % 150 FROM generate_series(1, 6000) g;
CREATE TABLE ev.events (id int8 PRIMARY KEY, user_id int8 NOT NULL, "accountId" int8 NOT NULL,
                        n int8 NOT NULL, q int4 NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.events SELECT g, 1 + g % 5000, 1 + g % 5000, 1 + g % 5000, g * 100000
  FROM generate_series(1, 6000) g;
CREATE TABLE ev.flags (id int8 PRIMARY KEY, n int4 NOT NULL, flag text NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.flags SELECT g, g * 100000, CASE WHEN g % 3 = 0 THEN 'TRUE' ELSE 'FALSE' END
  FROM generate_series(1, 5000) g;
CREATE TABLE ev.padded (a boolean, b int8, c boolean, d int8) WITH (autovacuum_enabled = false);
INSERT INTO ev.padded SELECT g % 2 = 0, g * 3000000000::int8, true, g * 3000000000::int8
  FROM generate_series(1, 5000) g;
CREATE TABLE ev.texts (id int8 PRIMARY KEY, code char(12) NOT NULL, at text NOT NULL,
                       ext text NOT NULL, seen text NOT NULL)
  WITH (autovacuum_enabled = false);
INSERT INTO ev.texts SELECT g, 'C' || g % 700,
       to_char(timestamp '2026-01-01' + g * interval '1 minute', 'YYYY-MM-DD HH24:MI:SS')
       || CASE WHEN g % 2 = 0 THEN '+02' ELSE '-05' END,
       upper(md5(g::text)::uuid::text),
       to_char(timestamp '2026-01-01' + g * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI')
  FROM generate_series(1, 5000) g;
ANALYZE ev.sparse, ev.amounts, ev.wholes, ev.orders, ev.events, ev.lines, ev.flags, ev.padded, ev.texts;
-- after ANALYZE, as a sample can miss it: one fractional amount in 20,001
INSERT INTO ev.amounts VALUES (20001, 12.5, 7);

BEGIN;
SELECT plan(25);

CREATE FUNCTION pg_temp.waste(rel regclass, col name) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(suggested_type, '-') || ' / ' || advice FROM storagelab.column_waste
   WHERE relation = rel AND column_name = col
$$;
CREATE FUNCTION pg_temp.changed(rel regclass) RETURNS text[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(e->>'column_name' || ':' || (e->>'to') ORDER BY e->>'column_name'),
                  '{}')
    FROM storagelab.table_rewrite_plan p, jsonb_array_elements(p.column_changes) e
   WHERE p.relation = rel
$$;

-- 1. twelve non-NULL values in 6,000 rows
SELECT is(pg_temp.waste('ev.sparse', 'ref'),
          '- / too few non-NULL values to judge them (setting column_waste.min_rows)',
          'sparse: twelve non-NULL values are too few, whatever the row count');
SELECT is(pg_temp.changed('ev.sparse'), '{}', 'sparse: the plan does not narrow it either');

-- 2. integral numeric: statistics are not enough, the profile is
SELECT is(pg_temp.waste('ev.amounts', 'amount'),
          '- / integers only in ANALYZE''s sample: a cast rounds any fraction it missed; run storagelab.column_profile()',
          'numeric from statistics: no integer type (the sample missed 12.5)');
SELECT is(pg_temp.changed('ev.amounts'), '{}', 'numeric from statistics: no plan change');
SELECT is((SELECT amount::integer FROM ev.amounts WHERE id = 20001), 13,
          'what the withheld advice would have done: the cast rounds 12.5 to 13 without an error');
SELECT is(pg_temp.waste('ev.wholes', 'whole'),
          '- / integers only in ANALYZE''s sample: a cast rounds any fraction it missed; run storagelab.column_profile()',
          'numeric of integers from statistics: withheld too');
SELECT is((SELECT count(*) FROM storagelab.column_profile('ev.amounts')) +
          (SELECT count(*) FROM storagelab.column_profile('ev.wholes')), 6::int8, 'profiles');
SELECT is(pg_temp.waste('ev.amounts', 'amount'), NULL, 'numeric, exact: the fraction is seen, no rule');
SELECT is(pg_temp.waste('ev.wholes', 'whole'),
          'integer / only integers, from 1000003 to 1060000: integer holds them with headroom',
          'numeric, exact: integers only, narrowed');
SELECT is(pg_temp.changed('ev.wholes'), '{whole:integer}', 'numeric, exact: the plan narrows it');

-- 3. an application-assigned order number is a key
SELECT is(pg_temp.waste('ev.orders', 'order_no'), NULL, 'unique order number: never narrowed');
SELECT is(pg_temp.changed('ev.orders'), '{copy_no:smallint}',
          'unique order number: the plan leaves it, the same values in a plain column are narrowed');
SELECT is((SELECT why FROM storagelab_internal.protected_columns
            WHERE relid = 'ev.orders'::regclass AND attnum = 2), 'unique key',
          'protected_columns says why');

-- 3b. identifiers by name
SELECT is(pg_temp.waste('ev.events', 'user_id'),
          '- / named as an identifier: ids grow with the rows they count; narrow it with column_types if its source stays small',
          'user_id without a foreign key: not narrowed, and the advice says why');
SELECT is(pg_temp.waste('ev.events', 'accountId'),
          '- / named as an identifier: ids grow with the rows they count; narrow it with column_types if its source stays small',
          'camelCase accountId: the same');
SELECT is(pg_temp.changed('ev.events'), '{n:smallint}', 'events: the plan narrows only the column that is no identifier');

-- 4. the inputs of a generated column
SELECT is(pg_temp.changed('ev.lines'), '{n:smallint}',
          'generated total: qty and price stay bigint, the plain column is narrowed');
SELECT is((SELECT string_agg(a.attname || ': ' || p.why, ', ' ORDER BY a.attnum)
             FROM storagelab_internal.protected_columns p
             JOIN pg_attribute a ON a.attrelid = p.relid AND a.attnum = p.attnum
            WHERE p.relid = 'ev.lines'::regclass), 'id: primary key, qty: generated column input, price: generated column input',
          'protected_columns says why');
SELECT throws_ok($$SELECT 200::int2 * 200::int2$$, '22003', NULL,
                 'what the withheld plan risked: qty * price in smallint overflows at 200 * 200');

-- 5. what a change of type changes
SELECT alike(pg_temp.waste('ev.texts', 'code'),
          'character varying(12) / blank padding: % of 13.0 bytes per value; varchar compares trailing blanks, char(n) ignores them',
          'char(n) -> varchar(n) says trailing blanks start to count');
SELECT is(pg_temp.waste('ev.texts', 'at'),
          'timestamp with time zone / only timestamps with time zone: the offsets written are not kept',
          'text with offsets -> timestamptz says the offsets are lost');

-- 6. a new order changes what statements without a column list see
SELECT is((SELECT advice FROM storagelab.alignment_padding WHERE relation = 'ev.padded'::regclass),
          'rebuild in suggested_order: SELECT *, INSERT and COPY without a column list see the new order',
          'alignment_padding says that positional statements see the new order');

SELECT is(pg_temp.waste('ev.flags', 'flag'),
          'boolean / only booleans: read back as true or false, however they were written',
          'TRUE/FALSE text -> boolean says the spelling is not kept');
SELECT is(pg_temp.waste('ev.texts', 'ext'),
          'uuid / only UUIDs: read back as uuid prints them (lowercase, hyphenated)',
          'upper-case UUID text -> uuid says how they read back');
SELECT is(pg_temp.waste('ev.texts', 'seen'),
          'timestamp without time zone / only timestamps without time zone: read back as YYYY-MM-DD HH:MM:SS',
          'T-separated text -> timestamp says how they read back');

SELECT * FROM finish();
ROLLBACK;

\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_evidence;

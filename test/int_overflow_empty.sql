-- int_overflow: the status of columns of tables that are analyzed and empty.
-- Without an index or a sequence, the only evidence is what ANALYZE or
-- VACUUM recorded: pg_class.reltuples 0 says "empty" (pg_statistic keeps
-- the bounds of rows deleted since: ANALYZE of no rows writes none); a
-- table never analyzed (reltuples -1) has no data.  A sequence keeps its
-- value whether the table is empty or not.  reltuples 0 alone is not
-- trusted: a table loaded after its last ANALYZE keeps it until the next
-- one, so rows counted since (live tuples, or this transaction's inserts)
-- make it "no data".
BEGIN;
SELECT plan(9);

CREATE SCHEMA ioe;
CREATE TABLE ioe.plain (id int PRIMARY KEY, a int, b smallint);
CREATE TABLE ioe.emptied (a int);
INSERT INTO ioe.emptied VALUES (2000000000);
ANALYZE ioe.emptied;
DELETE FROM ioe.emptied;
CREATE TABLE ioe.never (a int);
CREATE TABLE ioe.fed (id serial, a int);
SELECT FROM setval('ioe.fed_id_seq', 2000000000);
CREATE TABLE ioe.part (k int, a int) PARTITION BY RANGE (k);
CREATE TABLE ioe.part1 PARTITION OF ioe.part FOR VALUES FROM (0) TO (10);
CREATE TABLE ioe.part2 PARTITION OF ioe.part FOR VALUES FROM (10) TO (20);
CREATE TABLE ioe.half (k int, a int) PARTITION BY RANGE (k);
CREATE TABLE ioe.half1 PARTITION OF ioe.half FOR VALUES FROM (0) TO (10);
CREATE TABLE ioe.half2 PARTITION OF ioe.half FOR VALUES FROM (10) TO (20);
CREATE TABLE ioe.full (a int);
INSERT INTO ioe.full SELECT g FROM generate_series(1, 100) g;
ANALYZE ioe.plain, ioe.emptied, ioe.fed, ioe.part, ioe.half1, ioe.full;
-- analyzed empty, then loaded (reltuples stays 0 until the next ANALYZE)
CREATE TABLE ioe.loaded (a int);
ANALYZE ioe.loaded;
INSERT INTO ioe.loaded SELECT 2000000000 FROM generate_series(1, 100);
CREATE TABLE ioe.ploaded (k int, a int) PARTITION BY RANGE (k);
CREATE TABLE ioe.ploaded1 PARTITION OF ioe.ploaded FOR VALUES FROM (0) TO (10);
CREATE TABLE ioe.ploaded2 PARTITION OF ioe.ploaded FOR VALUES FROM (10) TO (20);
ANALYZE ioe.ploaded;
INSERT INTO ioe.ploaded VALUES (15, 2000000000);

SELECT results_eq(
  $$SELECT column_name, source, status FROM storagelab.int_overflow
     WHERE relation = 'ioe.plain'::regclass ORDER BY 1$$,
  $$VALUES ('a'::name, 'statistics', 'empty'), ('b', 'statistics', 'empty'), ('id', 'index', 'empty')$$,
  'analyzed, empty: every column says empty, indexed or not');
SELECT results_eq(
  $$SELECT source, status, current_value, severity FROM storagelab.int_overflow
     WHERE relation = 'ioe.emptied'::regclass$$,
  $$VALUES ('statistics', 'empty', NULL::numeric, NULL::text)$$,
  'emptied and analyzed again: empty, not the bounds pg_statistic kept of the deleted rows');
SELECT results_eq(
  $$SELECT source, status FROM storagelab.int_overflow WHERE relation = 'ioe.never'::regclass$$,
  $$VALUES ('none', 'no data')$$,
  'never analyzed: no data');
SELECT results_eq(
  $$SELECT column_name, source, status, severity FROM storagelab.int_overflow
     WHERE relation = 'ioe.fed'::regclass ORDER BY 1$$,
  $$VALUES ('a'::name, 'statistics', 'empty', NULL::text), ('id', 'sequence', 'ok', 'critical')$$,
  'an empty table''s sequence-fed column keeps the sequence''s value and severity');
SELECT results_eq(
  $$SELECT column_name, status FROM storagelab.int_overflow
     WHERE relation = 'ioe.part'::regclass ORDER BY 1$$,
  $$VALUES ('a'::name, 'empty'), ('k', 'empty')$$,
  'partitioned, every partition analyzed and empty: empty');
SELECT results_eq(
  $$SELECT column_name, status FROM storagelab.int_overflow
     WHERE relation = 'ioe.half'::regclass ORDER BY 1$$,
  $$VALUES ('a'::name, 'no data'), ('k', 'no data')$$,
  'partitioned, a partition never analyzed: no data');
SELECT results_eq(
  $$SELECT source, status, current_value FROM storagelab.int_overflow
     WHERE relation = 'ioe.full'::regclass$$,
  $$VALUES ('statistics', 'estimate', 100::numeric)$$,
  'analyzed with rows: the statistics bounds');

SELECT is((SELECT reltuples FROM pg_class WHERE oid = 'ioe.loaded'::regclass), 0::real,
          'loaded after an ANALYZE that found it empty: reltuples still 0');
SELECT results_eq(
  $$SELECT relation::text, column_name, source, status FROM storagelab.int_overflow
     WHERE relation IN ('ioe.loaded'::regclass, 'ioe.ploaded'::regclass) ORDER BY 1, 2$$,
  $$VALUES ('ioe.loaded', 'a'::name, 'none', 'no data'), ('ioe.ploaded', 'a', 'none', 'no data'),
           ('ioe.ploaded', 'k', 'none', 'no data')$$,
  'analyzed empty, then loaded (a table; one partition of a partitioned one): no data, not empty');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: int_overflow_index_bounds() reads a btree's two ends by relfilenode,
-- without opening the table or the index, when each end leaf holds a visible
-- non-NULL entry; otherwise an index scan answers.  Both must give what a
-- pure-SQL oracle gives: min() and max() of an expression no index can serve
-- (k + 0), on tables whose index ends differ from the heap's visible rows:
-- committed deletes at both ends not yet vacuumed, HOT and non-HOT updates,
-- an aborted insert, another session's uncommitted insert and delete, rows
-- of this transaction, posting lists, NULLs, a domain key, an unlogged table.
-- Which way answered is told by the index scans counted in this transaction
-- (pg_stat_get_xact_numscans): none without the relation cache.
BEGIN;
SELECT plan(34);

CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
SELECT FROM dblink_connect('ie_other',
  format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
         split_part(current_setting('unix_socket_directories'), ',', 1)));

-- Committed in the other session, so that visibility goes through the
-- commit log and the snapshot, not through this transaction's own rows.
SELECT FROM dblink_exec('ie_other', $$
  CREATE SCHEMA ie;
  CREATE DOMAIN ie.small AS int2 CHECK (VALUE > -32000);

  CREATE TABLE ie.plain (k int, pad text);
  INSERT INTO ie.plain SELECT g, repeat('x', 20) FROM generate_series(1, 20000) g;
  CREATE INDEX ie_plain_k ON ie.plain (k);

  CREATE TABLE ie.deleted (k bigint);
  INSERT INTO ie.deleted SELECT g FROM generate_series(1, 20000) g;
  CREATE INDEX ie_deleted_k ON ie.deleted (k);
  DELETE FROM ie.deleted WHERE k > 19950 OR k < 40;

  CREATE TABLE ie.hot (k int, v int) WITH (fillfactor = 50);
  INSERT INTO ie.hot SELECT g, 0 FROM generate_series(1, 1000) g;
  CREATE INDEX ie_hot_k ON ie.hot (k);
  UPDATE ie.hot SET v = v + 1 WHERE k IN (1, 1000);
  UPDATE ie.hot SET v = v + 1 WHERE k IN (1, 1000);
  UPDATE ie.hot SET v = v + 1 WHERE k = 1000;

  CREATE TABLE ie.moved (k int2, v int);
  INSERT INTO ie.moved SELECT g, g FROM generate_series(1, 3000) g;
  CREATE INDEX ie_moved_k ON ie.moved (k);
  UPDATE ie.moved SET k = 30000 WHERE k = 1500;
  UPDATE ie.moved SET k = -30000 WHERE k = 1600;
  UPDATE ie.moved SET k = 2999 WHERE k = 3000;

  CREATE TABLE ie.aborted (k int);
  INSERT INTO ie.aborted SELECT g FROM generate_series(1, 1000) g;
  CREATE INDEX ie_aborted_k ON ie.aborted (k);

  CREATE TABLE ie.dups (k int);
  INSERT INTO ie.dups SELECT g % 7 FROM generate_series(1, 20000) g;
  CREATE INDEX ie_dups_k ON ie.dups (k);
  DELETE FROM ie.dups WHERE k = 6 AND random() < 0.9;

  CREATE TABLE ie.nulls (k int);
  INSERT INTO ie.nulls SELECT CASE WHEN g % 50 = 0 THEN NULL ELSE g END FROM generate_series(1, 3000) g;
  CREATE INDEX ie_nulls_k ON ie.nulls (k);
  CREATE INDEX ie_nulls_k_first ON ie.nulls (k NULLS FIRST);
  CREATE INDEX ie_nulls_k_wide ON ie.nulls (k, (k::text));
  CREATE INDEX ie_nulls_k_desc ON ie.nulls (k DESC);
  CREATE INDEX ie_deleted_k_desc ON ie.deleted (k DESC NULLS LAST);

  CREATE TABLE ie.dom (k ie.small);
  INSERT INTO ie.dom SELECT (g - 500)::int2 FROM generate_series(1, 1000) g;
  CREATE INDEX ie_dom_k ON ie.dom (k);

  CREATE UNLOGGED TABLE ie.unlogged (k int);
  INSERT INTO ie.unlogged SELECT g FROM generate_series(-50, 50) g;
  CREATE INDEX ie_unlogged_k ON ie.unlogged (k);

  CREATE TABLE ie.gone (k int);
  INSERT INTO ie.gone SELECT g FROM generate_series(1, 20000) g;
  CREATE INDEX ie_gone_k ON ie.gone (k);
  DELETE FROM ie.gone WHERE k > 15000 OR k < 5000;

  CREATE TABLE ie.locked (k int);
  CREATE INDEX ie_locked_k ON ie.locked (k);

  CREATE TABLE ie.emptied (k int);
  INSERT INTO ie.emptied SELECT g FROM generate_series(1, 100) g;
  CREATE INDEX ie_emptied_k ON ie.emptied (k);
  DELETE FROM ie.emptied
$$);
SELECT FROM dblink_exec('ie_other', 'BEGIN');
SELECT FROM dblink_exec('ie_other', 'INSERT INTO ie.aborted VALUES (5000000), (-5000000)');
SELECT FROM dblink_exec('ie_other', 'ROLLBACK');

-- Uncommitted in the other session while this one reads: a larger key
-- inserted and the largest row deleted (both invisible to this snapshot).
SELECT FROM dblink_exec('ie_other', 'BEGIN');
SELECT FROM dblink_exec('ie_other', 'INSERT INTO ie.plain VALUES (9000000, NULL), (-9000000, NULL)');
SELECT FROM dblink_exec('ie_other', 'DELETE FROM ie.plain WHERE k IN (1, 20000)');

-- probe(index): the probe's answer (its result row as text) and the way it
-- took; oracle(table): the same row from min() and max() over a sequential
-- scan.
CREATE FUNCTION pg_temp.probe(idx regclass, OUT answer text, OUT way text)
LANGUAGE plpgsql AS $$
DECLARE
  scans bigint := pg_stat_get_xact_numscans(idx);
BEGIN
  SELECT b::text INTO answer FROM storagelab_internal.int_overflow_index_bounds(idx) b;
  way := CASE WHEN pg_stat_get_xact_numscans(idx) = scans THEN 'without relcache' ELSE 'index scan' END;
END $$;
CREATE FUNCTION pg_temp.oracle(rel regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  EXECUTE format('SELECT CASE WHEN count(k) = 0 THEN ''(,,empty)''
                              ELSE format(''(%%s,%%s,ok)'', min(k + 0), max(k + 0)) END FROM %s', rel)
    INTO r;
  RETURN r;
END $$;

SELECT is((pg_temp.probe('ie.ie_plain_k')).answer, pg_temp.oracle('ie.plain'),
          'plain index: equals min()/max(), another session''s uncommitted insert and delete unseen');
SELECT is((pg_temp.probe('ie.ie_plain_k')).way, 'without relcache',
          'plain index: read without the relation cache');
SELECT is((pg_temp.probe('ie.ie_deleted_k')).answer, pg_temp.oracle('ie.deleted'),
          'deleted at both ends, not vacuumed: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_deleted_k')).way, 'without relcache',
          'deleted at both ends: the end leaves still hold visible entries');
SELECT is((pg_temp.probe('ie.ie_hot_k')).answer, pg_temp.oracle('ie.hot'),
          'HOT-updated end rows: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_hot_k')).way, 'without relcache', 'HOT chains followed without the relation cache');
SELECT is((pg_temp.probe('ie.ie_moved_k')).answer, pg_temp.oracle('ie.moved'),
          'non-HOT updates that moved both ends: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_aborted_k')).answer, pg_temp.oracle('ie.aborted'),
          'an aborted insert at both ends: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_aborted_k')).way, 'without relcache', 'aborted entries skipped without the relation cache');
SELECT is((pg_temp.probe('ie.ie_dups_k')).answer, pg_temp.oracle('ie.dups'),
          'posting lists, most of the top key deleted: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_nulls_k')).answer, pg_temp.oracle('ie.nulls'),
          'NULLs at the right end (NULLS LAST): equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_nulls_k_first')).answer, pg_temp.oracle('ie.nulls'),
          'NULLs at the left end (NULLS FIRST): equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_nulls_k_wide')).answer, pg_temp.oracle('ie.nulls'),
          'a two-column index: its first key only');
SELECT is((pg_temp.probe('ie.ie_nulls_k')).way, 'without relcache', 'NULL entries skipped without the relation cache');
SELECT is((pg_temp.probe('ie.ie_nulls_k_desc')).answer, pg_temp.oracle('ie.nulls'),
          'a DESC index (NULLs first): its first entry is the largest value');
SELECT is((pg_temp.probe('ie.ie_deleted_k_desc')).answer, pg_temp.oracle('ie.deleted'),
          'a DESC NULLS LAST index, deleted at both ends: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_dom_k')).answer, pg_temp.oracle('ie.dom'),
          'a domain over int2: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_unlogged_k')).answer, pg_temp.oracle('ie.unlogged'),
          'an unlogged table on a primary: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_unlogged_k')).way, 'without relcache', 'an unlogged table: read without the relation cache');

-- End leaves of dead entries only, and no visible entry at all: the index
-- scan answers.
SELECT is((pg_temp.probe('ie.ie_gone_k')).answer, pg_temp.oracle('ie.gone'),
          'end leaves of dead entries only: equals min()/max()');
SELECT is((pg_temp.probe('ie.ie_gone_k')).way, 'index scan', 'end leaves of dead entries only: the index scan answers');
SELECT is((pg_temp.probe('ie.ie_emptied_k')).answer, '(,,empty)', 'every row deleted: empty');

-- Rows of this transaction: inserted, then deleted, by earlier commands.
CREATE TABLE ie_mine (k int);
INSERT INTO ie_mine SELECT g FROM generate_series(1, 500) g;
CREATE INDEX ie_mine_k ON ie_mine (k);
SELECT is((pg_temp.probe('ie_mine_k')).answer, pg_temp.oracle('ie_mine'),
          'rows this transaction inserted: equals min()/max()');
DELETE FROM ie_mine WHERE k IN (1, 2, 499, 500);
INSERT INTO ie_mine VALUES (-7);
SELECT is((pg_temp.probe('ie_mine_k')).answer, pg_temp.oracle('ie_mine'),
          'rows this transaction deleted and inserted since: equals min()/max()');
SELECT is((pg_temp.probe('ie_mine_k')).way, 'without relcache', 'this transaction''s rows: read without the relation cache');
UPDATE ie.plain SET pad = 'y' WHERE k = 19999;
DELETE FROM ie.plain WHERE k = 2;
SELECT is((pg_temp.probe('ie.ie_plain_k')).answer, pg_temp.oracle('ie.plain'),
          'committed rows this transaction updated and deleted: equals min()/max()');

-- The view over a column whose only index is DESC: its largest value, not
-- its smallest, is the current value (no statistics: the index measures).
CREATE TABLE ie_desc (k int);
CREATE INDEX ie_desc_k ON ie_desc (k DESC);
INSERT INTO ie_desc SELECT g FROM generate_series(-100, 2000000000, 1000000) g;
SELECT results_eq(
  $$SELECT source, current_value, min_value, max_value FROM storagelab.int_overflow
     WHERE relation = 'ie_desc'::regclass$$,
  $$SELECT 'index', max(k + 0)::numeric, min(k + 0)::numeric, max(k + 0)::numeric FROM ie_desc$$,
  'int_overflow over a DESC index: current_value is the largest value');
SELECT is((SELECT severity FROM storagelab.int_overflow WHERE relation = 'ie_desc'::regclass),
          'critical', 'int_overflow over a DESC index: a column 93 % used is critical');

-- Our own temporary table lives in local buffers: the index scan reads it.
CREATE TEMP TABLE ie_temp (k int);
INSERT INTO ie_temp SELECT g FROM generate_series(3, 300) g;
CREATE INDEX ie_temp_k ON ie_temp (k);
SELECT is((pg_temp.probe('ie_temp_k')).answer, pg_temp.oracle('ie_temp'), 'a temporary table: equals min()/max()');
SELECT is((pg_temp.probe('ie_temp_k')).way, 'index scan', 'a temporary table: the index scan reads its local buffers');

-- Nothing written: no page of the tables read was dirtied (no hint bit, no
-- pruning), although the other session's rows had no hint bits yet.
SELECT FROM dblink_exec('ie_other', 'ROLLBACK');
SELECT FROM dblink_exec('ie_other', $$
  CREATE TABLE ie.unhinted (k int);
  INSERT INTO ie.unhinted SELECT g FROM generate_series(1, 2000) g;
  CREATE INDEX ie_unhinted_k ON ie.unhinted (k)
$$);
SELECT FROM dblink_exec('ie_other', 'CHECKPOINT');
SELECT is((pg_temp.probe('ie.ie_unhinted_k')).answer, '(1,2000,ok)', 'freshly committed rows: equals min()/max()');
SELECT is((SELECT count(*) FROM pg_buffercache b
            WHERE b.relfilenode = pg_relation_filenode('ie.unhinted') AND b.isdirty), 0::bigint,
          'the heap''s buffers stay clean: no hint bit set');
SELECT is((pg_temp.probe('ie.ie_unhinted_k')).way, 'without relcache', 'freshly committed rows: read without the relation cache');

-- A lock another session holds: reported, not waited for (a table this
-- transaction has not read, whose lock it would keep).
SELECT FROM dblink_exec('ie_other', 'BEGIN');
SELECT FROM dblink_exec('ie_other', 'LOCK TABLE ie.locked IN ACCESS EXCLUSIVE MODE');
SET LOCAL lock_timeout = '5s';
SELECT is((pg_temp.probe('ie.ie_locked_k')).answer, '(,,locked)', 'a table another session locked: locked');
SELECT FROM dblink_exec('ie_other', 'ROLLBACK');

SELECT FROM dblink_disconnect('ie_other');

SELECT * FROM finish();
ROLLBACK;

-- The other session's schema, once this transaction's locks on it are gone.
SET client_min_messages = warning;
DROP SCHEMA ie CASCADE;

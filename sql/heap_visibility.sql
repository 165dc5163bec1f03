-- storagelab.heap_visibility(): output shape, NULL and empty inputs,
-- relation kinds, privileges.  Behaviour against oracles is in
-- test/heap_visibility.sql (pgTAP).
\set VERBOSITY sqlstate
SET client_min_messages = warning;
CREATE SCHEMA hv_regress;
-- The SQLSTATE of a statement (error messages name relations with OIDs).
CREATE FUNCTION hv_regress.sqlstate(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
\set ECHO none
\i test/fixtures/wait_for_snapshots.sql
\set ECHO all
CREATE TABLE hv_regress.t (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_regress.t SELECT g, 'row ' || g FROM generate_series(1, 1000) g;
-- VACUUM (FREEZE) freezes only rows older than every other snapshot.
SELECT pg_temp.wait_for_snapshots();
VACUUM (FREEZE) hv_regress.t;

-- A frozen table: every tuple frozen, every page all-visible and all-frozen.
SELECT pages, scanned_pages, all_visible_pages = pages AS all_visible,
       all_frozen_pages = pages AS all_frozen, pd_all_visible_mismatches,
       tuples, xmin_frozen, xmin_committed, xmin_invalid, xmin_unhinted,
       xmax_committed, xmax_invalid, dead_items, redirect_items, unused_items,
       hint_debt_tuples, hint_debt_pages, hint_debt_wal_bytes,
       oldest_unfrozen_xid_age, advice, evidence, relations, ci95
  FROM storagelab.heap_visibility('hv_regress.t');

-- Deletes by a committed transaction: xmax debt, VACUUM advised.
DELETE FROM hv_regress.t WHERE id <= 300;
SELECT tuples, xmax_committed, deleted_tuples, hint_debt_tuples, oldest_unfrozen_xid_age > 0 AS has_unfrozen,
       advice LIKE 'VACUUM:%' AS advises_vacuum
  FROM storagelab.heap_visibility('hv_regress.t');

-- Sampling: a sample as large as the table reads it all, exactly.
SELECT evidence, scanned_pages = pages AS read_all, ci95 IS NULL AS no_interval
  FROM storagelab.heap_visibility('hv_regress.t', 1000000);
-- At least three pages per relation: its last page and two for the variance.
SELECT evidence, scanned_pages, jsonb_typeof(ci95 -> 'tuples') AS interval
  FROM storagelab.heap_visibility('hv_regress.t', 2);
SELECT storagelab.heap_visibility('hv_regress.t', 0);

-- NULL relation: NULL row.  NULL sample_pages: a full read.
SELECT storagelab.heap_visibility(NULL) IS NULL AS null_in_null_out;
SELECT evidence FROM storagelab.heap_visibility('hv_regress.t', NULL);

-- Empty table, table without TOAST, partitioned table without leaves.
CREATE TABLE hv_regress.empty (id int) WITH (autovacuum_enabled = off);
SELECT pages, tuples, hint_debt_pages, oldest_unfrozen_xid_age, advice, relations
  FROM storagelab.heap_visibility('hv_regress.empty');
SELECT pages, advice, relations FROM storagelab.heap_visibility_toast('hv_regress.empty');
CREATE TABLE hv_regress.parted (id int, v text) PARTITION BY RANGE (id);
SELECT pages, advice, relations FROM storagelab.heap_visibility('hv_regress.parted');
CREATE TABLE hv_regress.parted_1 PARTITION OF hv_regress.parted FOR VALUES FROM (0) TO (500)
  WITH (autovacuum_enabled = off);
CREATE TABLE hv_regress.parted_2 PARTITION OF hv_regress.parted FOR VALUES FROM (500) TO (1000)
  WITH (autovacuum_enabled = off);
INSERT INTO hv_regress.parted SELECT g, 'x' FROM generate_series(0, 999) g;
SELECT tuples, relations FROM storagelab.heap_visibility('hv_regress.parted');
SELECT relations FROM storagelab.heap_visibility_toast('hv_regress.parted');

-- Materialized views and TOAST tables are read too.
CREATE MATERIALIZED VIEW hv_regress.mv WITH (autovacuum_enabled = off) AS SELECT id FROM hv_regress.t;
-- Checked against oracles, not a count alone: the rows a query of the
-- view returns, its size on disk, and the hint-bit classes adding up.
SELECT h.tuples, h.tuples = (SELECT count(*) FROM hv_regress.mv) AS tuples_are_rows,
       h.pages = pg_relation_size('hv_regress.mv') / current_setting('block_size')::int AS pages_are_size,
       h.scanned_pages = h.pages AS read_whole,
       h.xmin_frozen + h.xmin_committed + h.xmin_invalid + h.xmin_unhinted = h.tuples AS xmin_classes_add_up,
       h.deleted_tuples = 0 AS none_deleted
  FROM storagelab.heap_visibility('hv_regress.mv') h;
SELECT relations FROM storagelab.heap_visibility(
  (SELECT reltoastrelid FROM pg_class WHERE oid = 'hv_regress.t'::regclass)::regclass);

-- Kinds that have no heap pages: 42809 / 0A000, with a hint.
\set VERBOSITY default
CREATE INDEX t_id ON hv_regress.t (id);
SELECT storagelab.heap_visibility('hv_regress.t_id');
\set VERBOSITY sqlstate
CREATE VIEW hv_regress.v AS SELECT 1 AS x;
SELECT storagelab.heap_visibility('hv_regress.v');
CREATE SEQUENCE hv_regress.s;
SELECT storagelab.heap_visibility('hv_regress.s');
CREATE TYPE hv_regress.c AS (a int);
SELECT storagelab.heap_visibility('hv_regress.c');
CREATE FOREIGN DATA WRAPPER hv_regress_fdw;
CREATE SERVER hv_regress_srv FOREIGN DATA WRAPPER hv_regress_fdw;
CREATE FOREIGN TABLE hv_regress.f (a int) SERVER hv_regress_srv;
SELECT storagelab.heap_visibility('hv_regress.f');
SELECT hv_regress.sqlstate(format('SELECT storagelab.heap_visibility_toast(%L)',
  (SELECT reltoastrelid FROM pg_class WHERE oid = 'hv_regress.t'::regclass)::regclass)) AS toast_of_toast;
CREATE ACCESS METHOD hv_regress_am TYPE TABLE HANDLER heap_tableam_handler;
CREATE TABLE hv_regress.other_am (a int) USING hv_regress_am;
SELECT storagelab.heap_visibility('hv_regress.other_am');
SELECT storagelab.heap_visibility(0::oid::regclass);

-- Privileges: pg_stat_scan_tables, and SELECT on the table.
CREATE ROLE hv_regress_nobody;
CREATE ROLE hv_regress_scanner IN ROLE pg_stat_scan_tables;
GRANT USAGE ON SCHEMA hv_regress TO hv_regress_nobody, hv_regress_scanner;
SET ROLE hv_regress_nobody;
SELECT storagelab.heap_visibility('hv_regress.t');
SELECT storagelab.heap_visibility_toast('hv_regress.t');
SELECT count(*) FROM storagelab.visibility;
SET ROLE hv_regress_scanner;
SELECT storagelab.heap_visibility('hv_regress.t');
SELECT storagelab.heap_visibility_toast('hv_regress.t');
-- The view lists only the tables the caller may SELECT.
SELECT count(*) FROM storagelab.visibility WHERE relation::text LIKE 'hv_regress.%';
RESET ROLE;
GRANT SELECT ON hv_regress.t, hv_regress.parted TO hv_regress_scanner;
SET ROLE hv_regress_scanner;
-- 700 once a read (CREATE MATERIALIZED VIEW's) has pruned the 300 deleted
-- rows; 1000 when another transaction's snapshot in this database (an
-- autovacuum ANALYZE) kept them then.
SELECT tuples IN (700, 1000) AS counted FROM storagelab.heap_visibility('hv_regress.t');
SELECT relations FROM storagelab.heap_visibility_toast('hv_regress.t');
-- SELECT on a partitioned parent is enough for its leaves, as in a query.
SELECT tuples FROM storagelab.heap_visibility('hv_regress.parted');
SELECT relation, pages > 0 AS has_pages FROM storagelab.visibility
 WHERE relation::text LIKE 'hv_regress.%' ORDER BY 1;
RESET ROLE;

-- The VM-only view.  Its advice depends on inserts_since_vacuum, which a
-- session's statistics reach when it flushes them: at most once a second
-- while idle, so a slow server (valgrind) had flushed the inserts above and
-- a fast one not.  Flush them now, so the result does not depend on timing.
SELECT pg_stat_force_next_flush();
SELECT relation, kind, all_visible_pages = pages AS all_visible, all_frozen_pct,
       inserts_since_vacuum IS NOT NULL AS has_stats, relfrozenxid_age IS NOT NULL AS has_age, advice
  FROM storagelab.visibility WHERE relation::text LIKE 'hv_regress.%' ORDER BY 1;

DROP SCHEMA hv_regress CASCADE;
DROP SERVER hv_regress_srv;
DROP FOREIGN DATA WRAPPER hv_regress_fdw;
DROP ACCESS METHOD hv_regress_am;
DROP ROLE hv_regress_nobody, hv_regress_scanner;
RESET client_min_messages;

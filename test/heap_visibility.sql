-- pgTAP: storagelab.heap_visibility() against oracles.
--
-- Tables are built into distinct states (committed, so this file runs
-- outside a transaction and drops its schema at the end).  For each state:
--   * heap_visibility() dirties no buffer (pg_buffercache) and leaves every
--     page byte-identical (pageinspect get_raw_page before/after);
--   * every count equals the aggregate of pageinspect's heap_page_items over
--     all pages, and the PD_ALL_VISIBLE/VM mismatches equal pg_visibility's;
--   * the VM counts equal pg_visibility_map_summary;
--   * hint_debt_pages equals the dirtied buffers of the SELECT count(*) that
--     follows (parallelism off; on 19 they include the visibility-map and
--     free-space-map pages its pruning dirties), and, where no page is pruned,
--     hint_debt_tuples equals the tuples whose infomask that read changed
--     and hint_debt_wal_bytes the WAL it wrote (0 unless data checksums or
--     wal_log_hints are on).
-- suite: alone -- the "dirty in shared buffers" state needs no checkpoint
-- between its two reads: another file's CHECKPOINT, CREATE or DROP DATABASE
-- would clean those pages (it failed once, 34 against 38, run beside them).
\set ECHO none
\o /dev/null
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP SCHEMA IF EXISTS hv_tap CASCADE;
CREATE SCHEMA hv_tap;

-- The relations holding pages: the relation, or a partitioned table's leaves.
CREATE FUNCTION hv_tap.leaves(rel regclass) RETURNS SETOF regclass LANGUAGE sql AS $$
  SELECT rel WHERE (SELECT relkind FROM pg_class WHERE oid = rel) <> 'p'
  UNION ALL
  SELECT relid FROM pg_partition_tree(rel) WHERE isleaf
$$;

-- Every line pointer of every page, from pageinspect.
CREATE FUNCTION hv_tap.items(rel regclass)
RETURNS TABLE (leaf regclass, blkno bigint, lp int, lp_flags int, t_infomask int,
               t_xmin xid, t_xmax xid)
LANGUAGE sql AS $$
  SELECT l, b, i.lp, i.lp_flags, i.t_infomask, i.t_xmin, i.t_xmax
    FROM hv_tap.leaves(rel) l,
         generate_series(0, pg_relation_size(l) / current_setting('block_size')::int - 1) b,
         heap_page_items(get_raw_page(l::text, b::int)) i
$$;

-- heap_visibility()'s result columns as a type, for variables and arguments.
CREATE TYPE hv_tap.result AS (
  advice text, evidence text, pages bigint, scanned_pages bigint, all_visible_pages bigint,
  all_frozen_pages bigint, pd_all_visible_mismatches bigint, tuples bigint, xmin_frozen bigint,
  xmin_committed bigint, xmin_invalid bigint, xmin_unhinted bigint, xmax_committed bigint,
  xmax_invalid bigint, deleted_tuples bigint, dead_items bigint, redirect_items bigint,
  unused_items bigint, hint_debt_tuples bigint, hint_debt_pages bigint, hint_debt_wal_bytes bigint,
  oldest_unfrozen_xid_age integer, relations integer, ci95 jsonb);

-- The oracle's figures, in the order hv_tap.mine() prints them.
CREATE FUNCTION hv_tap.oracle(rel regclass) RETURNS text LANGUAGE sql AS $$
  SELECT row(
    (SELECT count(*) FROM hv_tap.leaves(rel) l, pg_visibility(l) v
      WHERE v.all_visible <> v.pd_all_visible),
    count(*) FILTER (WHERE lp_flags = 1),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 768 = 768),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 768 = 256),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 768 = 512),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 768 = 0),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 1024 <> 0),
    count(*) FILTER (WHERE lp_flags = 1 AND t_infomask & 2048 <> 0),
    count(*) FILTER (WHERE lp_flags = 3),
    count(*) FILTER (WHERE lp_flags = 2),
    count(*) FILTER (WHERE lp_flags = 0),
    -- oldest unfrozen xid: xmin neither frozen nor invalid, plain valid xmax
    max(greatest(
      CASE WHEN lp_flags = 1 AND t_infomask & 768 NOT IN (768, 512)
                AND t_xmin::text::bigint > 2 THEN age(t_xmin) END,
      CASE WHEN lp_flags = 1 AND t_infomask & (2048 | 4096) = 0
                AND t_xmax::text::bigint > 2 THEN age(t_xmax) END)))::text
  FROM hv_tap.items(rel)
$$;

CREATE FUNCTION hv_tap.mine(h hv_tap.result) RETURNS text LANGUAGE sql AS $$
  SELECT row(h.pd_all_visible_mismatches, h.tuples, h.xmin_frozen, h.xmin_committed,
             h.xmin_invalid, h.xmin_unhinted, h.xmax_committed, h.xmax_invalid,
             h.dead_items, h.redirect_items, h.unused_items, h.oldest_unfrozen_xid_age)::text
$$;

CREATE FUNCTION hv_tap.vm_oracle(rel regclass) RETURNS text LANGUAGE sql AS $$
  SELECT row(coalesce(sum(s.all_visible), 0), coalesce(sum(s.all_frozen), 0))::text
    FROM hv_tap.leaves(rel) l, pg_visibility_map_summary(l) s
$$;

-- A digest of every page's bytes.
CREATE FUNCTION hv_tap.raw(rel regclass) RETURNS text LANGUAGE sql AS $$
  SELECT md5(string_agg(md5(get_raw_page(l::text, b::int)), '' ORDER BY l, b))
    FROM hv_tap.leaves(rel) l,
         generate_series(0, pg_relation_size(l) / current_setting('block_size')::int - 1) b
$$;

CREATE FUNCTION hv_tap.dirty_buffers(rel regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_buffercache b
   WHERE b.isdirty
     AND b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND b.relfilenode IN (SELECT pg_relation_filenode(l) FROM hv_tap.leaves(rel) l)
$$;

-- Buffers dirtied and WAL written by a sequential read of the whole
-- relation, now.
CREATE FUNCTION hv_tap.read_now(rel regclass, OUT dirtied bigint, OUT wal_bytes bigint)
LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  SET LOCAL max_parallel_workers_per_gather = 0;
  EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, WAL, TIMING OFF, FORMAT JSON) SELECT count(*) FROM %s', rel)
     INTO j;
  dirtied := (j->0->'Plan'->>'Shared Dirtied Blocks')::bigint
           + (j->0->'Plan'->>'Local Dirtied Blocks')::bigint;
  wal_bytes := (j->0->'Plan'->>'WAL Bytes')::bigint;
END $$;

CREATE UNLOGGED TABLE hv_tap.masks (leaf regclass, blkno bigint, lp int, t_infomask int);
CREATE UNLOGGED TABLE hv_tap.prune_xids (leaf regclass, blkno bigint, prune_xid xid);

-- All checks of one state.
-- With checkpoint false, the pages dirty in shared buffers stay dirty: a read
-- does not dirty them again, and hint_debt_pages must leave them out.
CREATE FUNCTION hv_tap.check(rel regclass, label text, no_pruning boolean DEFAULT true,
                             checkpoint boolean DEFAULT true)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  h hv_tap.result;
  raw_before text;
  dirty_before bigint;
  dirtied bigint;
  wal bigint;
  pruned bigint;
BEGIN
  -- age() and heap_visibility() both measure from this transaction's xid.
  PERFORM txid_current();
  IF checkpoint THEN
    CHECKPOINT;
  ELSE
    PERFORM pg_switch_wal();	-- flushes WAL (see hv_tap.hv), writes no page
  END IF;
  raw_before := hv_tap.raw(rel);
  dirty_before := hv_tap.dirty_buffers(rel);
  SELECT * INTO h FROM storagelab.heap_visibility(rel);

  RETURN NEXT is(hv_tap.dirty_buffers(rel), dirty_before,
                 label || ': heap_visibility() dirties no buffer (' || dirty_before || ' dirty before)');
  RETURN NEXT is(hv_tap.raw(rel), raw_before,
                 label || ': heap_visibility() leaves every page byte-identical');
  RETURN NEXT is(hv_tap.mine(h), hv_tap.oracle(rel),
                 label || ': counts equal pageinspect heap_page_items and pg_visibility');
  RETURN NEXT is(row(h.all_visible_pages, h.all_frozen_pages)::text, hv_tap.vm_oracle(rel),
                 label || ': VM counts equal pg_visibility_map_summary');
  RETURN NEXT is(h.scanned_pages, h.pages, label || ': a full read reads every page');

  DELETE FROM hv_tap.masks;
  INSERT INTO hv_tap.masks SELECT leaf, blkno, lp, t_infomask FROM hv_tap.items(rel)
   WHERE lp_flags = 1;
  DELETE FROM hv_tap.prune_xids;
  INSERT INTO hv_tap.prune_xids
  SELECT l, b, (page_header(get_raw_page(l::text, b::int))).prune_xid
    FROM hv_tap.leaves(rel) l,
         generate_series(0, pg_relation_size(l) / current_setting('block_size')::int - 1) b;
  SELECT * INTO dirtied, wal FROM hv_tap.read_now(rel);
  RETURN NEXT is(h.hint_debt_pages, dirtied,
                 label || ': hint_debt_pages equals the pages SELECT count(*) dirtied (' || dirtied || ')');
  -- Pages the read pruned (pruning resets pd_prune_xid and turns line
  -- pointers dead, redirected or unused): then its WAL and the tuples it
  -- changed are not all hint bits.  Up to 18 a page holding only inserts has
  -- no pd_prune_xid; 19 sets it on insert, and a read prunes full pages.
  pruned := (SELECT count(*) FROM (
               SELECT leaf, blkno FROM hv_tap.prune_xids p
                WHERE (page_header(get_raw_page(leaf::text, blkno::int))).prune_xid
                      IS DISTINCT FROM p.prune_xid
               UNION
               SELECT leaf, blkno FROM hv_tap.masks JOIN hv_tap.items(rel) i USING (leaf, blkno, lp)
                WHERE i.lp_flags <> 1) x);
  IF no_pruning AND pruned > 0 THEN
    RETURN NEXT skip(label || ': the read pruned ' || pruned
                     || ' pages, so its WAL and changed tuples are not hint bits alone', 2);
  ELSIF no_pruning THEN
    -- Full-page images for hints: only with data checksums or wal_log_hints.
    IF current_setting('wal_log_hints')::bool OR current_setting('data_checksums')::bool THEN
      RETURN NEXT ok(abs(wal - h.hint_debt_wal_bytes) <= 0.01 * wal,
                     label || ': hint_debt_wal_bytes ' || h.hint_debt_wal_bytes
                     || ' is within 1% of the WAL SELECT count(*) wrote, ' || wal);
    ELSE
      RETURN NEXT is(h.hint_debt_wal_bytes, 0::bigint,
                     label || ': hint_debt_wal_bytes is 0 without data checksums or wal_log_hints');
    END IF;
    RETURN NEXT is(h.hint_debt_tuples,
                   (SELECT count(*) FROM hv_tap.masks m JOIN hv_tap.items(rel) i USING (leaf, blkno, lp)
                     WHERE i.t_infomask <> m.t_infomask),
                   label || ': hint_debt_tuples equals the tuples SELECT count(*) hinted');
  END IF;
END $$;

-- The states.  autovacuum must not change them under the test.  A VACUUM
-- freezes, and marks all-visible, only rows older than every other snapshot.
\i test/fixtures/wait_for_snapshots.sql
CREATE TABLE hv_tap.loaded (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.loaded SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;

CREATE TABLE hv_tap.read_once (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.read_once SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
SELECT count(*) FROM hv_tap.read_once;

CREATE TABLE hv_tap.vacuumed (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.vacuumed SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
VACUUM hv_tap.vacuumed;

CREATE TABLE hv_tap.frozen (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.frozen SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
VACUUM (FREEZE) hv_tap.frozen;

BEGIN;
CREATE TABLE hv_tap.copy_frozen (id int) WITH (autovacuum_enabled = off);
COPY hv_tap.copy_frozen FROM PROGRAM 'seq 1 5000' WITH (FREEZE);
COMMIT;

CREATE TABLE hv_tap.aborted (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.aborted SELECT g, repeat('x', g % 50) FROM generate_series(1, 2500) g;
BEGIN;
INSERT INTO hv_tap.aborted SELECT g, repeat('y', g % 50) FROM generate_series(1, 2500) g;
ROLLBACK;

CREATE TABLE hv_tap.deleted (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.deleted SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
VACUUM hv_tap.deleted;
DELETE FROM hv_tap.deleted WHERE id % 3 = 0;

CREATE TABLE hv_tap.deleted_fresh (id int, v text) WITH (autovacuum_enabled = off, fillfactor = 70);
INSERT INTO hv_tap.deleted_fresh SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
DELETE FROM hv_tap.deleted_fresh WHERE id % 5 = 0;

CREATE TABLE hv_tap.delete_aborted (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.delete_aborted SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
SELECT count(*) FROM hv_tap.delete_aborted;
BEGIN;
DELETE FROM hv_tap.delete_aborted WHERE id % 2 = 0;
ROLLBACK;

CREATE TABLE hv_tap.hot (id int PRIMARY KEY, n int, v text) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO hv_tap.hot SELECT g, 0, repeat('x', g % 50) FROM generate_series(1, 5000) g;
VACUUM hv_tap.hot;
UPDATE hv_tap.hot SET n = n + 1 WHERE id % 4 = 0;
SELECT count(*) FROM hv_tap.hot;
UPDATE hv_tap.hot SET n = n + 1 WHERE id % 8 = 0;

CREATE TABLE hv_tap.half_vacuumed (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.half_vacuumed SELECT g, repeat('x', g % 50) FROM generate_series(1, 2500) g;
SELECT pg_temp.wait_for_snapshots();
VACUUM hv_tap.half_vacuumed;
INSERT INTO hv_tap.half_vacuumed SELECT g, repeat('x', g % 50) FROM generate_series(2501, 5000) g;

CREATE TABLE hv_tap.locked (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.locked SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
SELECT count(*) FROM hv_tap.locked;
SELECT count(*) FROM (SELECT * FROM hv_tap.locked WHERE id % 2 = 0 FOR UPDATE) l;

-- A multixact xmax: a row lock, then an update in a subtransaction.
CREATE TABLE hv_tap.multi (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.multi SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
SELECT count(*) FROM hv_tap.multi;
BEGIN;
SELECT count(*) FROM (SELECT * FROM hv_tap.multi WHERE id <= 400 FOR SHARE) l;
SAVEPOINT s;
UPDATE hv_tap.multi SET v = 'updated' WHERE id <= 200;
COMMIT;

CREATE TABLE hv_tap.toasted (id int, v text) WITH (autovacuum_enabled = off);
ALTER TABLE hv_tap.toasted ALTER v SET STORAGE EXTERNAL;
INSERT INTO hv_tap.toasted SELECT g, repeat(md5(g::text), 200) FROM generate_series(1, 300) g;
DELETE FROM hv_tap.toasted WHERE id % 10 = 0;

CREATE TABLE hv_tap.parted (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE hv_tap.parted_1 PARTITION OF hv_tap.parted FOR VALUES FROM (0) TO (2500)
  WITH (autovacuum_enabled = off);
CREATE TABLE hv_tap.parted_2 PARTITION OF hv_tap.parted FOR VALUES FROM (2500) TO (5001)
  WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.parted SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
VACUUM hv_tap.parted_1;

CREATE MATERIALIZED VIEW hv_tap.matview WITH (autovacuum_enabled = off) AS
  SELECT g AS id, repeat('x', g % 50) AS v FROM generate_series(1, 5000) g;

CREATE TEMP TABLE hv_temp (id int, v text);
INSERT INTO hv_temp SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;

-- A larger table for sampling: rows of varying width, the first pages read
-- once, some rows deleted.
CREATE TABLE hv_tap.big (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.big SELECT g, repeat('x', abs(hashint4(g)) % 300) FROM generate_series(1, 150000) g;
SELECT count(*) FROM hv_tap.big WHERE ctid < '(1000,1)';
DELETE FROM hv_tap.big WHERE id % 7 = 0 AND id > 100000;

-- heap_visibility() after flushing WAL.  A reader sets no COMMITTED hint
-- while the commit LSN of the xid's clog group is not flushed, and the
-- asynchronous commits of pgTAP's own temp-table writes can raise that LSN
-- for a moment; heap_visibility() follows the same rule, so the tests flush
-- first to make the figures deterministic.
CREATE FUNCTION hv_tap.hv(rel regclass, n int DEFAULT NULL)
RETURNS hv_tap.result LANGUAGE plpgsql AS $$
DECLARE
  h hv_tap.result;
BEGIN
  CHECKPOINT;
  SELECT * INTO h FROM storagelab.heap_visibility(rel, n);
  RETURN h;
END $$;

-- A sample's figures that its 95% intervals do not cover (NULL: none).
CREATE FUNCTION hv_tap.uncovered(rel regclass, n int) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN
  CHECKPOINT;
  RETURN (
  SELECT array_agg(f || '=' || (to_jsonb(e) ->> f) || ' not in ' || (s.ci95 -> f)::text ORDER BY f)
    FROM storagelab.heap_visibility(rel) e,
         storagelab.heap_visibility(rel, n) s,
         unnest(ARRAY['tuples', 'xmin_unhinted', 'xmin_committed', 'xmax_invalid', 'deleted_tuples',
                      'hint_debt_tuples', 'hint_debt_pages', 'unused_items']) f
   WHERE NOT (to_jsonb(e) ->> f)::bigint
             BETWEEN (s.ci95 -> f ->> 'low')::bigint AND (s.ci95 -> f ->> 'high')::bigint);
END $$;

CREATE UNLOGGED TABLE hv_tap.unlogged (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.unlogged SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;

CREATE TABLE hv_tap.vacuum_full (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.vacuum_full SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
DELETE FROM hv_tap.vacuum_full WHERE id % 4 = 0;
VACUUM FULL hv_tap.vacuum_full;

-- Uniform pages but a partly filled last one: a sample must not claim
-- certainty it does not have.
CREATE TABLE hv_tap.uniform (id int, filler char(80)) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.uniform SELECT g, '' FROM generate_series(1, 30017) g;

-- Transactions still in progress, in a second session (dblink over the
-- server's own socket; pg_virtualenv's password when peer auth is not used).
CREATE TABLE hv_tap.in_progress (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.in_progress SELECT g, repeat('x', g % 50) FROM generate_series(1, 2500) g;
SELECT count(*) FROM hv_tap.in_progress;
CREATE TABLE hv_tap.locked_away (id int) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.locked_away VALUES (1);
VACUUM hv_tap.locked_away;
-- Near multixact wraparound and locked: 9,000 multixacts (each row locked,
-- then locked again in a subtransaction of its own) against a table whose
-- storage parameter puts its limit 10,000 past its age after VACUUM.
CREATE TABLE hv_tap.wraparound (id int) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.wraparound VALUES (1);
VACUUM hv_tap.wraparound;
SELECT format('ALTER TABLE hv_tap.wraparound SET (autovacuum_multixact_freeze_max_age = %s)',
              10000 + mxid_age(relminmxid))
  FROM pg_class WHERE oid = 'hv_tap.wraparound'::regclass \gexec
SELECT mxid_age(relminmxid) AS wrap_age_before FROM pg_class WHERE oid = 'hv_tap.wraparound'::regclass \gset
CREATE TABLE hv_tap.mx (id int PRIMARY KEY);
INSERT INTO hv_tap.mx SELECT generate_series(1, 9000);
BEGIN;
SELECT count(*) FROM (SELECT * FROM hv_tap.mx FOR KEY SHARE) l;
DO $$
BEGIN
  FOR i IN 1 .. 9000 LOOP
    BEGIN
      PERFORM FROM hv_tap.mx WHERE id = i FOR UPDATE;
    EXCEPTION WHEN OTHERS THEN RAISE;
    END;
  END LOOP;
END $$;
COMMIT;
\getenv hv_password PGPASSWORD
\if :{?hv_password}
\else
\set hv_password ''
\endif
SELECT dblink_connect('hv_other', format('host=%s port=%s dbname=%s user=%s password=%s',
  split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'),
  current_database(), current_user, :'hv_password'));
SELECT dblink_exec('hv_other', 'CREATE TEMP TABLE hv_other_temp (a int)');
SELECT dblink_exec('hv_other', 'BEGIN');
SELECT dblink_exec('hv_other', $$INSERT INTO hv_tap.in_progress
  SELECT g, repeat('y', g % 50) FROM generate_series(2501, 5000) g$$);
SELECT dblink_exec('hv_other', 'DELETE FROM hv_tap.in_progress WHERE id % 10 = 0 AND id <= 2500');
SELECT dblink_exec('hv_other', 'LOCK TABLE hv_tap.locked_away, hv_tap.wraparound IN ACCESS EXCLUSIVE MODE');

CREATE FUNCTION hv_tap.sample_dirties(rel regclass, n int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  CHECKPOINT;
  PERFORM storagelab.heap_visibility(rel, n);
  RETURN hv_tap.dirty_buffers(rel);
END $$;
CHECKPOINT;
\o

SELECT plan(207);

-- What the states show, before any check below reads them.
SELECT ok(h.hint_debt_tuples = h.tuples
          AND h.xmin_unhinted = h.tuples AND h.pages > 0,
          'a fresh load is all hint-bit debt')
  FROM hv_tap.hv('hv_tap.loaded') h;
SELECT ok(h.hint_debt_pages = 0 AND h.xmin_committed = h.tuples,
          'a table read once has no debt left')
  FROM hv_tap.hv('hv_tap.read_once') h;
-- From PostgreSQL 16 on, a bulk insert extends the relation by a growing
-- number of pages at a time (hio.c, RelationAddBlocks), and COPY leaves the
-- unused rest of its last extension as all-zero pages: counted in pages but
-- never all-visible (VACUUM leaves new pages out of the VM).  So: every page
-- holding rows (pageinspect) is all-frozen, and pages counts all of them.
SELECT is(row(h.pages, h.all_frozen_pages, h.tuples, h.xmin_frozen, h.hint_debt_pages,
              h.oldest_unfrozen_xid_age, h.advice)::text,
          row(o.pages, o.with_rows, 5000, 5000, 0, NULL::int, 'nothing to do')::text,
          'COPY FREEZE rows are frozen and all-frozen, without debt or advice')
  FROM hv_tap.hv('hv_tap.copy_frozen') h,
       (SELECT count(DISTINCT b) AS pages,
               count(DISTINCT b) FILTER (WHERE lp IS NOT NULL) AS with_rows
          FROM generate_series(0, pg_relation_size('hv_tap.copy_frozen') / current_setting('block_size')::int - 1) b
               LEFT JOIN hv_tap.items('hv_tap.copy_frozen') i ON i.blkno = b) o;
SELECT is(h.hint_debt_tuples, 5000::bigint, 'both halves of an aborted load next to a committed one carry debt')
  FROM hv_tap.hv('hv_tap.aborted') h;
SELECT is(h.deleted_tuples, 1666::bigint, 'deleted_tuples counts committed deletes, hinted or not')
  FROM hv_tap.hv('hv_tap.deleted') h;
SELECT is(h.hint_debt_tuples, 0::bigint, 'a lock-only xmax is no hint debt for an MVCC reader')
  FROM hv_tap.hv('hv_tap.locked') h;
SELECT ok(h.all_visible_pages > 0 AND h.all_visible_pages < h.pages,
          'a half-vacuumed table is partly all-visible')
  FROM hv_tap.hv('hv_tap.half_vacuumed') h;

-- The TOAST companion: the table's TOAST relation, with SELECT on the table.
CHECKPOINT;
SELECT is((SELECT hv_tap.mine(row(h.*)::hv_tap.result) FROM storagelab.heap_visibility_toast('hv_tap.toasted') h),
          (SELECT hv_tap.mine(h) FROM hv_tap.hv(
             (SELECT reltoastrelid FROM pg_class WHERE oid = 'hv_tap.toasted'::regclass)::regclass) h),
          'heap_visibility_toast(table) reports its TOAST relation');
SELECT ok(h.tuples > 300, 'the TOAST relation holds the chunks')
  FROM storagelab.heap_visibility_toast('hv_tap.toasted') h;
SELECT is((SELECT h.relations FROM hv_tap.hv('hv_tap.parted') h), 2,
          'a partitioned table covers its two leaves');

-- Sampling.
SELECT is((SELECT row(h.*)::text FROM hv_tap.hv('hv_tap.big', 300) h),
          (SELECT row(h.*)::text FROM hv_tap.hv('hv_tap.big', 300) h),
          'a sample is reproducible');
-- The xid age is age()'s: two reads in one transaction agree while another
-- session consumes an xid between them.
CREATE FUNCTION hv_tap.ages_apart() RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
  a int[];
BEGIN
  a[1] := (storagelab.heap_visibility('hv_tap.loaded')).oldest_unfrozen_xid_age;
  PERFORM FROM dblink(format('host=%s port=%s dbname=%s user=%s password=%s',
    split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'),
    current_database(), current_user, current_setting('hv.password')), 'SELECT txid_current()') AS t(x bigint);
  a[2] := (storagelab.heap_visibility('hv_tap.loaded')).oldest_unfrozen_xid_age;
  RETURN a;
END $$;
SELECT set_config('hv.password', :'hv_password', false) \g /dev/null
SELECT is((SELECT a[1] = a[2] AND a[1] > 0 FROM hv_tap.ages_apart() a), true,
          'oldest_unfrozen_xid_age is stable within a transaction, as age() is');
SELECT ok(h.evidence = 'sampled' AND h.scanned_pages = 300 AND h.pages > 2000 AND h.ci95 IS NOT NULL,
          'sample_pages pages are read, and intervals given')
  FROM hv_tap.hv('hv_tap.big', 300) h;
SELECT is(hv_tap.uncovered('hv_tap.big', 300), NULL,
          'every 95% interval of a 300-page sample covers the full read''s figure');
SELECT is(hv_tap.uncovered('hv_tap.big', 1000), NULL,
          'every 95% interval of a 1000-page sample covers the full read''s figure');
SELECT is(hv_tap.uncovered('hv_tap.uniform', 20), NULL,
          'a sample of identical pages still covers the full read''s figures');
SELECT is(h.tuples, 30017::bigint, 'the last, partly filled page is read exactly')
  FROM hv_tap.hv('hv_tap.uniform', 20) h;
SELECT is(hv_tap.uncovered('hv_tap.parted', 10), NULL,
          'a stratified sample of a partitioned table covers the full read''s figures');
SELECT ok(h.scanned_pages BETWEEN 10 AND 12 AND h.relations = 2,
          'a partitioned table''s sample is shared among its leaves')
  FROM hv_tap.hv('hv_tap.parted', 10) h;
SELECT is(hv_tap.sample_dirties('hv_tap.big', 300), 0::bigint, 'a sample dirties no buffer');

-- Another session's open transaction: its inserts and deletes are no debt
-- yet; once it commits, they are.
SELECT * FROM hv_tap.check('hv_tap.in_progress', 'insert and delete in progress');
SELECT is(h.hint_debt_tuples, 0::bigint, 'rows of a transaction in progress are no hint debt')
  FROM hv_tap.hv('hv_tap.in_progress') h;
SELECT is((SELECT row(all_visible_pages, all_frozen_pages)::text FROM storagelab.visibility
            WHERE relation = 'hv_tap.locked_away'::regclass), '(,)',
          'storagelab.visibility does not wait for a locked table (NULL counts)');
SELECT is((SELECT advice FROM storagelab.visibility WHERE relation = 'hv_tap.locked_away'::regclass),
          'unknown: the table is locked', 'and says so');
SELECT is((SELECT row(severity, advice, pages)::text FROM storagelab.visibility
            WHERE relation = 'hv_tap.wraparound'::regclass),
          row('critical', 'VACUUM (FREEZE) now: relminmxid_age nears autovacuum_multixact_freeze_max_age',
              NULL::bigint)::text,
          'a locked table near multixact wraparound (its own storage parameter) is still critical');
SELECT ok(mxid_age(relminmxid) - :wrap_age_before >= 9000,
          'the fixture made its 9,000 multixacts')
  FROM pg_class WHERE oid = 'hv_tap.wraparound'::regclass;
SELECT throws_ok(format('SELECT storagelab.heap_visibility(%s)',
                         (SELECT oid FROM pg_class WHERE relname = 'hv_other_temp')),
                  '0A000', 'cannot access temporary tables of other sessions',
                  'another session''s temporary table is refused');
SELECT is(dblink_exec('hv_other', 'COMMIT'), 'COMMIT', 'the other session commits');
SELECT is(h.hint_debt_tuples, 2750::bigint, 'after the commit, its inserts and deletes are debt')
  FROM hv_tap.hv('hv_tap.in_progress') h;
SELECT * FROM hv_tap.check('hv_tap.in_progress', 'after the commit', false);
SELECT dblink_disconnect('hv_other') \g /dev/null

-- The view's VM counts equal pg_visibility_map_summary for every table.
SELECT is(
  (SELECT count(*) FROM storagelab.visibility v, pg_visibility_map_summary(v.relation) s
    WHERE (v.all_visible_pages, v.all_frozen_pages) IS DISTINCT FROM (s.all_visible, s.all_frozen)),
  0::bigint, 'storagelab.visibility''s VM counts equal pg_visibility_map_summary');

-- The view reads a table's size and map by relfilenode; the session's own
-- temporary table (local buffers) is opened instead, and a table of many
-- pages with a map only partly set counts the same as pg_visibility.
CREATE TEMP TABLE hv_own_temp AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, 5000) g;
VACUUM hv_own_temp;
DELETE FROM hv_own_temp WHERE id % 700 = 0;
CREATE TABLE hv_tap.partly_visible AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, 20000) g;
VACUUM (FREEZE) hv_tap.partly_visible;
DELETE FROM hv_tap.partly_visible WHERE id % 1500 = 0;
SELECT is((SELECT row(v.pages, v.all_visible_pages, v.all_frozen_pages)::text FROM storagelab.visibility v
            WHERE v.relation = 'hv_own_temp'::regclass),
          (SELECT row(pg_relation_size('hv_own_temp') / current_setting('block_size')::int, s.all_visible, s.all_frozen)::text
             FROM pg_visibility_map_summary('hv_own_temp') s),
          'own temporary table: pages and VM counts equal pg_relation_size and pg_visibility_map_summary');
SELECT is((SELECT row(v.pages, v.all_visible_pages, v.all_frozen_pages)::text FROM storagelab.visibility v
            WHERE v.relation = 'hv_tap.partly_visible'::regclass),
          (SELECT row(pg_relation_size('hv_tap.partly_visible') / current_setting('block_size')::int, s.all_visible, s.all_frozen)::text
             FROM pg_visibility_map_summary('hv_tap.partly_visible') s),
          'a table of many pages, partly all-visible: pages and VM counts equal pg_relation_size and pg_visibility_map_summary');

-- statement_timeout cancels a read (CHECK_FOR_INTERRUPTS per page).  pgTAP's
-- throws_ok() cannot catch a cancel, so this function does.
CREATE FUNCTION hv_tap.cancelled(rel regclass) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..1000 LOOP
    PERFORM storagelab.heap_visibility(rel);
  END LOOP;
  RETURN 'not cancelled';
EXCEPTION WHEN query_canceled THEN
  RETURN SQLSTATE;
END $$;
SET statement_timeout = '200ms';
SELECT is(hv_tap.cancelled('hv_tap.big'), '57014', 'statement_timeout cancels heap_visibility()');
RESET statement_timeout;

-- Every state against the oracles (each check then reads the table).
SELECT * FROM hv_tap.check('hv_tap.loaded', 'loaded, never read');
SELECT * FROM hv_tap.check('hv_tap.read_once', 'read once');
SELECT * FROM hv_tap.check('hv_tap.vacuumed', 'VACUUM');
SELECT * FROM hv_tap.check('hv_tap.frozen', 'VACUUM (FREEZE)');
SELECT * FROM hv_tap.check('hv_tap.copy_frozen', 'COPY FREEZE');
SELECT * FROM hv_tap.check('hv_tap.aborted', 'aborted load next to a committed one');
SELECT * FROM hv_tap.check('hv_tap.deleted', 'deletes after VACUUM', false);
SELECT * FROM hv_tap.check('hv_tap.deleted_fresh', 'deletes on a fresh load', false);
SELECT * FROM hv_tap.check('hv_tap.delete_aborted', 'aborted delete', false);
SELECT * FROM hv_tap.check('hv_tap.hot', 'HOT updates', false);
SELECT * FROM hv_tap.check('hv_tap.half_vacuumed', 'half-vacuumed');
SELECT * FROM hv_tap.check('hv_tap.locked', 'rows locked FOR UPDATE');
SELECT * FROM hv_tap.check('hv_tap.multi', 'multixact xmax', false);
SELECT * FROM hv_tap.check(
  (SELECT reltoastrelid FROM pg_class WHERE oid = 'hv_tap.toasted'::regclass)::regclass,
  'TOAST relation', false);
SELECT * FROM hv_tap.check('hv_tap.parted', 'partitioned table (sum over leaves)');
SELECT * FROM hv_tap.check('hv_tap.matview', 'materialized view');
SELECT * FROM hv_tap.check('pg_temp.hv_temp', 'own temporary table');
SELECT * FROM hv_tap.check('hv_tap.big', 'larger table with deletes', false);

-- Pages still dirty in shared buffers (the checks above checkpointed): all
-- of a fresh load, and a few pages updated after a checkpoint through a TID
-- scan, which reads no other page.
CREATE TABLE hv_tap.still_dirty (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.still_dirty SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
SELECT * FROM hv_tap.check('hv_tap.still_dirty', 'fresh load still dirty in shared buffers', true, false);
CREATE TABLE hv_tap.partly_dirty (id int, v text) WITH (autovacuum_enabled = off);
INSERT INTO hv_tap.partly_dirty SELECT g, repeat('x', g % 50) FROM generate_series(1, 5000) g;
CHECKPOINT;
UPDATE hv_tap.partly_dirty SET v = 'u' WHERE ctid = ANY (ARRAY['(3,1)', '(7,1)', '(20,2)']::tid[]);
SELECT * FROM hv_tap.check('hv_tap.partly_dirty', 'some pages dirty in shared buffers', false, false);
SELECT * FROM hv_tap.check('hv_tap.unlogged', 'unlogged table');
SELECT * FROM hv_tap.check('hv_tap.vacuum_full', 'after VACUUM FULL');
SELECT ok(h.redirect_items > 0, 'HOT updates left redirect line pointers')
  FROM storagelab.heap_visibility('hv_tap.hot') h;

SELECT * FROM finish();

\o /dev/null
DROP SCHEMA hv_tap CASCADE;
\o

-- storagelab install script, part 30: heap_visibility (issue 6).
-- Hint-bit, freeze and visibility-map state of tables, read from their pages
-- without changing them (C: src/heap_visibility.c, src/visibility_estimate.c,
-- src/visibility_map.c), and the VM-only view storagelab.visibility.

CREATE TYPE storagelab.heap_visibility_result AS (
  pages                     bigint,
  scanned_pages             bigint,
  all_visible_pages         bigint,
  all_frozen_pages          bigint,
  pd_all_visible_mismatches bigint,
  tuples                    bigint,
  xmin_frozen               bigint,
  xmin_committed            bigint,
  xmin_invalid              bigint,
  xmin_unhinted             bigint,
  xmax_committed            bigint,
  xmax_invalid              bigint,
  deleted_tuples            bigint,
  dead_items                bigint,
  redirect_items            bigint,
  unused_items              bigint,
  hint_debt_tuples          bigint,
  hint_debt_pages           bigint,
  hint_debt_wal_bytes       bigint,
  oldest_unfrozen_xid_age   integer,
  advice                    text,
  sampled                   boolean,
  relations                 integer,
  ci95                      jsonb
);
COMMENT ON TYPE storagelab.heap_visibility_result IS
  'one row of heap_visibility() / heap_visibility_toast(): page, tuple and hint-bit counts';
COMMENT ON COLUMN storagelab.heap_visibility_result.pages IS
  'pages of the relation (sum over leaf partitions) when the read started';
COMMENT ON COLUMN storagelab.heap_visibility_result.scanned_pages IS
  'pages read: all of them, or the sample';
COMMENT ON COLUMN storagelab.heap_visibility_result.all_visible_pages IS
  'pages marked all-visible in the visibility map (exact, also when sampling; as pg_visibility_map_summary)';
COMMENT ON COLUMN storagelab.heap_visibility_result.all_frozen_pages IS
  'pages marked all-frozen in the visibility map (exact, also when sampling)';
COMMENT ON COLUMN storagelab.heap_visibility_result.pd_all_visible_mismatches IS
  'pages whose PD_ALL_VISIBLE flag disagrees with their visibility-map bit';
COMMENT ON COLUMN storagelab.heap_visibility_result.tuples IS
  'LP_NORMAL line pointers (live, dead and not-yet-visible tuples)';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmin_frozen IS
  'tuples with both xmin hint bits set (frozen)';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmin_committed IS
  'tuples with only HEAP_XMIN_COMMITTED set';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmin_invalid IS
  'tuples with only HEAP_XMIN_INVALID set (inserted by an aborted transaction)';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmin_unhinted IS
  'tuples with neither xmin hint bit set';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmax_committed IS
  'tuples with HEAP_XMAX_COMMITTED set (deleted or updated by a committed transaction)';
COMMENT ON COLUMN storagelab.heap_visibility_result.xmax_invalid IS
  'tuples with HEAP_XMAX_INVALID set';
COMMENT ON COLUMN storagelab.heap_visibility_result.deleted_tuples IS
  'tuples deleted or updated by a committed transaction (hinted or not; plain xmax only), which VACUUM can remove once no snapshot needs them';
COMMENT ON COLUMN storagelab.heap_visibility_result.dead_items IS
  'LP_DEAD line pointers (pruned, waiting for VACUUM)';
COMMENT ON COLUMN storagelab.heap_visibility_result.redirect_items IS
  'LP_REDIRECT line pointers (HOT chain heads)';
COMMENT ON COLUMN storagelab.heap_visibility_result.unused_items IS
  'LP_UNUSED line pointers';
COMMENT ON COLUMN storagelab.heap_visibility_result.hint_debt_tuples IS
  'tuples whose hint bits the next MVCC reader would set (xmin or xmax ended but not hinted), decided without setting anything';
COMMENT ON COLUMN storagelab.heap_visibility_result.hint_debt_pages IS
  'pages a sequential read done now would dirty (hint bits or pruning): the dirtied= buffers of EXPLAIN (ANALYZE, BUFFERS) SELECT count(*)';
COMMENT ON COLUMN storagelab.heap_visibility_result.hint_debt_wal_bytes IS
  'full-page-image WAL bytes those hints would log (0 unless data checksums or wal_log_hints are on; before wal_compression)';
COMMENT ON COLUMN storagelab.heap_visibility_result.oldest_unfrozen_xid_age IS
  'age() of the oldest unfrozen xmin or plain xmax read (NULL when none; a lower bound when sampled)';
COMMENT ON COLUMN storagelab.heap_visibility_result.advice IS
  'what to do: VACUUM, VACUUM (FREEZE), COPY FREEZE for bulk loads, or nothing to do';
COMMENT ON COLUMN storagelab.heap_visibility_result.sampled IS
  'true when only a sample of pages was read and the counts are estimates';
COMMENT ON COLUMN storagelab.heap_visibility_result.relations IS
  'heap relations read: 1, the number of leaf partitions, or 0 (no TOAST table)';
COMMENT ON COLUMN storagelab.heap_visibility_result.ci95 IS
  '95% confidence interval of every estimated count, {"figure": {"low": n, "high": m}}; NULL when exact';

CREATE FUNCTION storagelab.heap_visibility(relation regclass, sample_pages integer DEFAULT NULL)
RETURNS storagelab.heap_visibility_result
AS 'MODULE_PATHNAME', 'storagelab_heap_visibility'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab.heap_visibility(regclass, integer) IS
  'hint-bit, freeze and visibility-map state of a table, materialized view, TOAST table or partitioned table (summed over leaves), read from its pages without changing them; sample_pages reads a reproducible random sample and estimates with 95% intervals';

CREATE FUNCTION storagelab.heap_visibility_toast(relation regclass, sample_pages integer DEFAULT NULL)
RETURNS storagelab.heap_visibility_result
AS 'MODULE_PATHNAME', 'storagelab_heap_visibility_toast'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab.heap_visibility_toast(regclass, integer) IS
  'heap_visibility() of the TOAST relation of a table (summed over the leaf partitions'' TOAST relations); needs SELECT on the table only';

CREATE FUNCTION storagelab.visibility_map_count(relation regclass,
  OUT pages bigint, OUT all_visible_pages bigint, OUT all_frozen_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_visibility_map_count'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab.visibility_map_count(regclass) IS
  'pages of a table and its all-visible and all-frozen pages from the visibility map (no heap read; never waits for a lock: NULL when the table is locked)';

REVOKE EXECUTE ON FUNCTION storagelab.heap_visibility(regclass, integer),
  storagelab.heap_visibility_toast(regclass, integer),
  storagelab.visibility_map_count(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storagelab.heap_visibility(regclass, integer),
  storagelab.heap_visibility_toast(regclass, integer),
  storagelab.visibility_map_count(regclass) TO pg_stat_scan_tables;

CREATE VIEW storagelab.visibility AS
  SELECT r.relation, r.kind, vm.pages,
         vm.pages * current_setting('block_size')::bigint AS size,
         pg_catalog.pg_size_pretty(vm.pages * current_setting('block_size')::bigint) AS size_pretty,
         vm.all_visible_pages, vm.all_frozen_pages,
         round(100.0 * vm.all_visible_pages / nullif(vm.pages, 0), 1) AS all_visible_pct,
         round(100.0 * vm.all_frozen_pages / nullif(vm.pages, 0), 1) AS all_frozen_pct,
         s.n_ins_since_vacuum AS inserts_since_vacuum,
         s.n_dead_tup AS dead_tuples,
         s.last_vacuum, s.last_autovacuum,
         r.relfrozenxid_age, r.relminmxid_age,
         CASE
           WHEN vm.pages IS NULL AND r.persistence = 'u' AND pg_catalog.pg_is_in_recovery() THEN
             'unknown: an unlogged table has no data on a standby'
           WHEN vm.pages IS NULL THEN 'unknown: the table is locked'
           WHEN r.relfrozenxid_age >= r.freeze_max_age * 0.8 THEN
             'VACUUM (FREEZE) now: relfrozenxid is ' || r.relfrozenxid_age
             || ' transactions old; an anti-wraparound autovacuum starts at ' || r.freeze_max_age
           WHEN vm.pages = 0 THEN 'nothing to do: empty'
           WHEN r.relfrozenxid_age >= r.freeze_table_age AND vm.all_frozen_pages < vm.pages THEN
             'VACUUM (FREEZE) at a quiet time: the next VACUUM is aggressive and reads the '
             || (vm.pages - vm.all_frozen_pages) || ' pages that are not all-frozen'
           WHEN vm.all_visible_pages < 0.5 * vm.pages AND coalesce(s.n_ins_since_vacuum, 0) > 0 THEN
             'VACUUM: only ' || round(100.0 * vm.all_visible_pages / vm.pages)
             || '% of pages are all-visible; storagelab.heap_visibility() shows the hint-bit debt of the new rows'
           WHEN vm.all_visible_pages < 0.5 * vm.pages THEN
             'VACUUM: only ' || round(100.0 * vm.all_visible_pages / vm.pages)
             || '% of pages are all-visible (index-only scans visit the heap)'
           ELSE 'nothing to do'
         END AS advice
    FROM (SELECT c.oid::regclass AS relation,
                 CASE c.relkind WHEN 'r' THEN 'table' ELSE 'materialized view' END AS kind,
                 c.relpersistence AS persistence,
                 CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS relfrozenxid_age,
                 CASE WHEN c.relminmxid <> '0' THEN pg_catalog.mxid_age(c.relminmxid) END AS relminmxid_age,
                 current_setting('autovacuum_freeze_max_age')::bigint AS freeze_max_age,
                 current_setting('vacuum_freeze_table_age')::bigint AS freeze_table_age,
                 c.oid
            FROM pg_catalog.pg_class c
           WHERE c.relkind IN ('r', 'm')
             AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
             AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
             AND pg_catalog.has_table_privilege(c.oid, 'SELECT')) r
    LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = r.oid
    LEFT JOIN LATERAL storagelab.visibility_map_count(r.relation) vm ON true;
GRANT SELECT ON storagelab.visibility TO PUBLIC;
COMMENT ON VIEW storagelab.visibility IS
  'visibility-map state of every table and materialized view the caller may read: VM counts, vacuum activity, freeze age, advice; reads no heap page (needs pg_stat_scan_tables for visibility_map_count())';
COMMENT ON COLUMN storagelab.visibility.relation IS 'the table or materialized view';
COMMENT ON COLUMN storagelab.visibility.kind IS 'table or materialized view';
COMMENT ON COLUMN storagelab.visibility.pages IS 'pages of the main fork (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.size IS 'bytes of the main fork';
COMMENT ON COLUMN storagelab.visibility.size_pretty IS 'size, human-readable';
COMMENT ON COLUMN storagelab.visibility.all_visible_pages IS 'pages all-visible in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pages IS 'pages all-frozen in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_visible_pct IS 'all_visible_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pct IS 'all_frozen_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.inserts_since_vacuum IS 'rows inserted since the last vacuum (pg_stat_all_tables.n_ins_since_vacuum)';
COMMENT ON COLUMN storagelab.visibility.dead_tuples IS 'estimated dead rows (pg_stat_all_tables.n_dead_tup)';
COMMENT ON COLUMN storagelab.visibility.last_vacuum IS 'last manual VACUUM';
COMMENT ON COLUMN storagelab.visibility.last_autovacuum IS 'last autovacuum';
COMMENT ON COLUMN storagelab.visibility.relfrozenxid_age IS 'age(relfrozenxid): transactions since the table was last frozen up to relfrozenxid';
COMMENT ON COLUMN storagelab.visibility.relminmxid_age IS 'mxid_age(relminmxid)';
COMMENT ON COLUMN storagelab.visibility.advice IS 'VACUUM (FREEZE), VACUUM, or nothing to do, with the reason';

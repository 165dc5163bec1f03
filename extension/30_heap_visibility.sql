-- storagelab install script, part 30: heap_visibility.
-- Hint-bit, freeze and visibility-map state of tables, read from their pages
-- without changing them (C: src/heap_visibility.c, src/visibility_estimate.c,
-- src/visibility_map.c), and the VM-only view storagelab.visibility.

-- The result columns (both functions): advice first, then the counts.
--   advice           what to do, at most 100 characters: the most urgent of
--                    VACUUM, VACUUM (FREEZE), COPY FREEZE for bulk loads, or
--                    nothing to do; its figures are the columns below
--   evidence         exact (every page read) or sampled (sample_pages)
--   pages            pages (sum over leaf partitions) when the read started
--   scanned_pages    pages read: all of them, or the sample
--   all_visible_pages, all_frozen_pages
--                    visibility-map bits (exact, also when sampling)
--   pd_all_visible_mismatches  pages whose PD_ALL_VISIBLE flag disagrees
--                    with their visibility-map bit
--   tuples .. unused_items     line pointers and hint-bit states
--   hint_debt_tuples, hint_debt_pages, hint_debt_wal_bytes  what the next
--                    MVCC reader would hint, dirty and WAL-log
--   oldest_unfrozen_xid_age    age() of the oldest unfrozen XID read
--   relations        heap relations read (1, leaf partitions, or 0)
--   ci95             95% interval of every estimated count; NULL when exact
CREATE FUNCTION storagelab.heap_visibility(relation regclass, sample_pages integer DEFAULT NULL,
    OUT advice text, OUT evidence text,
    OUT pages bigint, OUT scanned_pages bigint,
    OUT all_visible_pages bigint, OUT all_frozen_pages bigint,
    OUT pd_all_visible_mismatches bigint, OUT tuples bigint,
    OUT xmin_frozen bigint, OUT xmin_committed bigint, OUT xmin_invalid bigint,
    OUT xmin_unhinted bigint, OUT xmax_committed bigint, OUT xmax_invalid bigint,
    OUT deleted_tuples bigint, OUT dead_items bigint, OUT redirect_items bigint,
    OUT unused_items bigint, OUT hint_debt_tuples bigint, OUT hint_debt_pages bigint,
    OUT hint_debt_wal_bytes bigint, OUT oldest_unfrozen_xid_age integer,
    OUT relations integer, OUT ci95 jsonb)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_heap_visibility'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab.heap_visibility(regclass, integer) IS
  'hint-bit, freeze and visibility-map state of a table, materialized view, TOAST table or partitioned table (summed over leaves), read from its pages without changing them, with advice; sample_pages reads a reproducible random sample and estimates with 95% intervals (ci95)';

CREATE FUNCTION storagelab.heap_visibility_toast(relation regclass, sample_pages integer DEFAULT NULL,
    OUT advice text, OUT evidence text,
    OUT pages bigint, OUT scanned_pages bigint,
    OUT all_visible_pages bigint, OUT all_frozen_pages bigint,
    OUT pd_all_visible_mismatches bigint, OUT tuples bigint,
    OUT xmin_frozen bigint, OUT xmin_committed bigint, OUT xmin_invalid bigint,
    OUT xmin_unhinted bigint, OUT xmax_committed bigint, OUT xmax_invalid bigint,
    OUT deleted_tuples bigint, OUT dead_items bigint, OUT redirect_items bigint,
    OUT unused_items bigint, OUT hint_debt_tuples bigint, OUT hint_debt_pages bigint,
    OUT hint_debt_wal_bytes bigint, OUT oldest_unfrozen_xid_age integer,
    OUT relations integer, OUT ci95 jsonb)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_heap_visibility_toast'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab.heap_visibility_toast(regclass, integer) IS
  'heap_visibility() of the TOAST relation of a table (summed over the leaf partitions'' TOAST relations); needs SELECT on the table only';

CREATE FUNCTION storagelab_internal.visibility_map_count(relation regclass,
  OUT pages bigint, OUT all_visible_pages bigint, OUT all_frozen_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_visibility_map_count'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab_internal.visibility_map_count(regclass) IS
  'pages of a table and its all-visible and all-frozen pages from the visibility map (no heap read; never waits for a lock: NULL when the table is locked)';

-- The page readers check in C that the caller has the privileges of
-- pg_stat_scan_tables and may SELECT the table, and name what is missing in
-- their error's hint; EXECUTE alone would fail without one.
GRANT EXECUTE ON FUNCTION storagelab.heap_visibility(regclass, integer),
  storagelab.heap_visibility_toast(regclass, integer),
  storagelab_internal.visibility_map_count(regclass) TO PUBLIC;

-- visibility: the visibility map of every table, without reading a heap
-- page.  Lists the tables the caller may SELECT, or every table for a
-- member of pg_read_all_stats (VM counts are statistics, as
-- pg_class.relallvisible is); visibility_map_count() needs the privileges of
-- pg_stat_scan_tables (it locks each table, without waiting).
CREATE VIEW storagelab.visibility AS
  SELECT r.relation, a.severity, a.advice,
         round(100.0 * vm.all_visible_pages / nullif(vm.pages, 0), 1) AS all_visible_pct,
         round(100.0 * vm.all_frozen_pages / nullif(vm.pages, 0), 1) AS all_frozen_pct,
         r.relfrozenxid_age,
         vm.pages * current_setting('block_size')::bigint AS table_bytes,
         pg_catalog.pg_size_pretty(vm.pages * current_setting('block_size')::bigint) AS table_pretty,
         vm.pages, vm.all_visible_pages, vm.all_frozen_pages,
         s.n_ins_since_vacuum AS inserts_since_vacuum,
         s.n_dead_tup AS dead_tuples,
         s.last_vacuum, s.last_autovacuum,
         r.relminmxid_age,
         r.kind
    FROM (SELECT c.oid::regclass AS relation,
                 CASE c.relkind WHEN 'r' THEN 'table' ELSE 'materialized view' END AS kind,
                 c.relpersistence AS persistence,
                 -- the older of the table's and its TOAST table's (which
                 -- autovacuum, and VACUUM (PROCESS_TOAST false), treat on
                 -- their own): wraparound comes from either
                 CASE WHEN c.relfrozenxid <> '0'
                      THEN greatest(pg_catalog.age(c.relfrozenxid),
                                    CASE WHEN tt.relfrozenxid <> '0' THEN pg_catalog.age(tt.relfrozenxid) END) END
                   AS relfrozenxid_age,
                 CASE WHEN c.relminmxid <> '0'
                      THEN greatest(pg_catalog.mxid_age(c.relminmxid),
                                    CASE WHEN tt.relminmxid <> '0' THEN pg_catalog.mxid_age(tt.relminmxid) END) END
                   AS relminmxid_age,
                 -- as autovacuum uses them: a table's storage parameter
                 -- lowers the server's freeze_max_age, and replaces its
                 -- freeze_table_age
                 least(current_setting('autovacuum_freeze_max_age')::bigint,
                       pg_catalog.substring(pg_catalog.array_to_string(c.reloptions, ','),
                                           '(?:^|,)autovacuum_freeze_max_age=([0-9]+)')::bigint)
                   AS freeze_max_age,
                 least(current_setting('autovacuum_multixact_freeze_max_age')::bigint,
                       pg_catalog.substring(pg_catalog.array_to_string(c.reloptions, ','),
                                           '(?:^|,)autovacuum_multixact_freeze_max_age=([0-9]+)')::bigint)
                   AS mxid_freeze_max_age,
                 coalesce(pg_catalog.substring(pg_catalog.array_to_string(c.reloptions, ','),
                                           '(?:^|,)autovacuum_freeze_table_age=([0-9]+)')::bigint,
                          current_setting('vacuum_freeze_table_age')::bigint) AS freeze_table_age,
                 c.oid
            FROM pg_catalog.pg_class c
            LEFT JOIN pg_catalog.pg_class tt ON tt.oid = c.reltoastrelid
           WHERE c.relkind IN ('r', 'm')
             AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
             AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
             AND (pg_catalog.has_table_privilege(c.oid, 'SELECT')
                  OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE'))) r
    -- the four figures of pg_stat_all_tables used here, by the functions
    -- behind it: that view groups every table and TOAST table of the
    -- database with its indexes and looks up every one's statistics
    CROSS JOIN LATERAL (
      SELECT pg_catalog.pg_stat_get_ins_since_vacuum(r.oid) AS n_ins_since_vacuum,
             pg_catalog.pg_stat_get_dead_tuples(r.oid) AS n_dead_tup,
             pg_catalog.pg_stat_get_last_vacuum_time(r.oid) AS last_vacuum,
             pg_catalog.pg_stat_get_last_autovacuum_time(r.oid) AS last_autovacuum
    ) s
    LEFT JOIN LATERAL storagelab_internal.visibility_map_count(r.relation) vm ON true
   CROSS JOIN LATERAL (
     SELECT CASE
              WHEN r.relfrozenxid_age >= r.freeze_max_age * 0.8 THEN 'critical'
              WHEN r.relminmxid_age >= r.mxid_freeze_max_age * 0.8 THEN 'critical'
              WHEN vm.pages IS NULL THEN NULL
              WHEN vm.pages = 0 THEN 'ok'
              WHEN r.relfrozenxid_age >= r.freeze_table_age AND vm.all_frozen_pages < vm.pages THEN 'warning'
              WHEN vm.all_visible_pages < 0.5 * vm.pages THEN 'info'
              ELSE 'ok'
            END AS severity,
            CASE
              WHEN r.relfrozenxid_age >= r.freeze_max_age * 0.8 THEN
                'VACUUM (FREEZE) now: relfrozenxid_age nears autovacuum_freeze_max_age (anti-wraparound)'
              WHEN r.relminmxid_age >= r.mxid_freeze_max_age * 0.8 THEN
                'VACUUM (FREEZE) now: relminmxid_age nears autovacuum_multixact_freeze_max_age'
              WHEN vm.pages IS NULL AND r.persistence = 'u' AND pg_catalog.pg_is_in_recovery() THEN
                'unknown: an unlogged table has no data on a standby'
              WHEN vm.pages IS NULL THEN 'unknown: the table is locked'
              WHEN vm.pages = 0 THEN 'nothing to do: empty'
              WHEN r.relfrozenxid_age >= r.freeze_table_age AND vm.all_frozen_pages < vm.pages THEN
                'VACUUM (FREEZE) at a quiet time: the next VACUUM is aggressive (reads unfrozen pages)'
              WHEN vm.all_visible_pages < 0.5 * vm.pages AND coalesce(s.n_ins_since_vacuum, 0) > 0 THEN
                'VACUUM: few pages all-visible; heap_visibility() shows the new rows'' hint-bit debt'
              WHEN vm.all_visible_pages < 0.5 * vm.pages THEN
                'VACUUM: few pages are all-visible, so index-only scans visit the heap'
              ELSE 'nothing to do'
            END AS advice
   ) a;
GRANT SELECT ON storagelab.visibility TO PUBLIC;
COMMENT ON VIEW storagelab.visibility IS
  'visibility-map state of every table and materialized view the caller may read (every one for pg_read_all_stats): severity, advice, VM counts, vacuum activity, freeze age; reads no heap page; needs pg_stat_scan_tables';
COMMENT ON COLUMN storagelab.visibility.relation IS 'the table or materialized view';
COMMENT ON COLUMN storagelab.visibility.severity IS 'critical (wraparound near: 80 % of the table''s autovacuum_freeze_max_age or multixact one, even when locked), warning (next VACUUM aggressive), info, ok; else NULL when locked';
COMMENT ON COLUMN storagelab.visibility.advice IS 'VACUUM (FREEZE), VACUUM, or nothing to do, with the reason (the figures are the other columns)';
COMMENT ON COLUMN storagelab.visibility.all_visible_pct IS 'all_visible_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pct IS 'all_frozen_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.relfrozenxid_age IS 'age(relfrozenxid) of the table or of its TOAST table, whichever is older: transactions since it was last frozen up to relfrozenxid';
COMMENT ON COLUMN storagelab.visibility.table_bytes IS 'bytes of the main fork (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.table_pretty IS 'table_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.visibility.pages IS 'pages of the main fork (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_visible_pages IS 'pages all-visible in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pages IS 'pages all-frozen in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.inserts_since_vacuum IS 'rows inserted since the last vacuum (pg_stat_all_tables.n_ins_since_vacuum)';
COMMENT ON COLUMN storagelab.visibility.dead_tuples IS 'estimated dead rows (pg_stat_all_tables.n_dead_tup)';
COMMENT ON COLUMN storagelab.visibility.last_vacuum IS 'last manual VACUUM';
COMMENT ON COLUMN storagelab.visibility.last_autovacuum IS 'last autovacuum';
COMMENT ON COLUMN storagelab.visibility.relminmxid_age IS 'mxid_age(relminmxid) of the table or of its TOAST table, whichever is older';
COMMENT ON COLUMN storagelab.visibility.kind IS 'table or materialized view';

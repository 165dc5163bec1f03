-- storagelab upgrade 1.0 -> 1.1.  Each change to the install script
-- (extension/[0-9]*.sql) since 1.0 appears here too; scripts/upgrade-test.sh
-- proves that 1.0 + this script equals a fresh install of 1.1.

\echo Use "ALTER EXTENSION storagelab UPDATE TO '1.1'" to load this file. \quit

CREATE SCHEMA storagelab_internal;
COMMENT ON SCHEMA storagelab_internal IS
  'storagelab internals: helpers behind the public views and functions, no stable API';

-- ---------------------------------------------------------------------------
-- The API and its internals: helpers move to storagelab_internal, views and
-- functions say one word per concept (relation, column_name, severity,
-- evidence, advice, *_bytes + *_pretty), snapshot() becomes
-- int_overflow_snapshot() (the old name stays, deprecated), monitoring
-- roles get real values and hints, writers refuse on a standby.
-- ---------------------------------------------------------------------------

GRANT USAGE ON SCHEMA storagelab_internal TO PUBLIC;

-- What changes shape is dropped, and created again below.
DROP VIEW storagelab.int_overflow, storagelab.visibility, storagelab.bytea_storage,
          storagelab.column_waste, storagelab.alignment_padding;
DROP FUNCTION storagelab.int_overflow_scan(regclass);
DROP FUNCTION storagelab.toast_profile(regclass, name, integer);
DROP FUNCTION storagelab.heap_visibility(regclass, integer),
              storagelab.heap_visibility_toast(regclass, integer),
              storagelab.visibility_map_count(regclass);
DROP TYPE storagelab.heap_visibility_result;

-- Settings: the defaults table and setting() are internal; the functions
-- that call setting() (or read int_overflow.risk) are re-created with the
-- new names in their body.
ALTER TABLE storagelab.setting_defaults SET SCHEMA storagelab_internal;
COMMENT ON TABLE storagelab_internal.setting_defaults IS
  'storagelab settings with their shipped defaults (read them in storagelab.setting_values)';
ALTER FUNCTION storagelab.setting(text) SET SCHEMA storagelab_internal;
CREATE OR REPLACE FUNCTION storagelab_internal.setting(name text)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(s.value, d.default_value)
    FROM storagelab_internal.setting_defaults d
    LEFT JOIN storagelab.settings s USING (name)
   WHERE d.name = $1
$$;
COMMENT ON FUNCTION storagelab_internal.setting(text) IS
  'effective value of a storagelab setting: the override in storagelab.settings, else the default; NULL for an unknown name';
GRANT EXECUTE ON FUNCTION storagelab_internal.setting(text) TO PUBLIC;
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = 'storagelab'::pg_catalog.regnamespace
              AND (p.prosrc LIKE '%storagelab.setting(%'
                   OR p.prosrc LIKE '%o.risk FROM storagelab.int_overflow o%')
  LOOP
    -- int_overflow's risk is now called severity.
    EXECUTE pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
              pg_catalog.pg_get_functiondef(f),
              'storagelab.setting(', 'storagelab_internal.setting('),
              'o.risk FROM storagelab.int_overflow o', 'o.severity AS risk FROM storagelab.int_overflow o'),
              'WHERE o.risk IN', 'WHERE o.severity IN'),
              'ORDER BY (o.risk = ', 'ORDER BY (o.severity = ');
  END LOOP;
END
$$;
UPDATE storagelab_internal.setting_defaults d
   SET description = v.description
  FROM (VALUES
    ('int_overflow.warning_pct', 'int_overflow: severity is "warning" from this used_pct on'),
    ('int_overflow.critical_pct', 'int_overflow: severity is "critical" from this used_pct on'),
    ('int_overflow.warning_within', 'int_overflow: severity is "warning" when overflow_at is closer than this interval'),
    ('int_overflow.critical_within', 'int_overflow: severity is "critical" when overflow_at is closer than this interval'),
    ('int_overflow.growth_window', 'int_overflow: snapshots younger than this interval feed the growth rate behind overflow_at'),
    ('int_overflow.history_retention', 'int_overflow: int_overflow_snapshot() deletes history rows older than this interval')
  ) v(name, description)
 WHERE d.name = v.name;

-- require_primary(what): the first statement of every function that writes
-- (int_overflow_snapshot(), column_profile(), the migration progress
-- writers).  On a hot standby, where the write would fail with a bare
-- "cannot execute INSERT in a read-only transaction", it fails first with
-- the same SQLSTATE and says where to run the call instead.
CREATE FUNCTION storagelab_internal.require_primary(what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF pg_is_in_recovery() THEN
    RAISE EXCEPTION 'cannot run % on a standby', what
      USING ERRCODE = 'read_only_sql_transaction',
            DETAIL = 'It writes into storagelab''s tables, and a standby is read-only.',
            HINT = 'Run it on the primary; the views work on a standby.';
  END IF;
END
$$;
COMMENT ON FUNCTION storagelab_internal.require_primary(text) IS
  'raises SQLSTATE 25006 with a hint when called on a hot standby; "what" names the public function in the message';
GRANT EXECUTE ON FUNCTION storagelab_internal.require_primary(text) TO PUBLIC;

-- check_scan_role(): 42501 with a hint unless the caller has the privileges
-- of pg_stat_scan_tables, which every page reader needs (src/relation.c);
-- for PL/pgSQL functions that must refuse before touching anything.
CREATE FUNCTION storagelab_internal.check_scan_role()
RETURNS void
AS 'MODULE_PATHNAME', 'storagelab_check_scan_role_sql'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.check_scan_role() IS
  'raises SQLSTATE 42501, with a hint naming pg_stat_scan_tables, unless the caller has its privileges';
GRANT EXECUTE ON FUNCTION storagelab_internal.check_scan_role() TO PUBLIC;

-- int_overflow: the probes and the measurements are internal.
ALTER FUNCTION storagelab.int_overflow_sequence_state(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_index_bounds(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_stats_bounds(regclass, smallint) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_measurements() SET SCHEMA storagelab_internal;
REVOKE EXECUTE ON FUNCTION storagelab_internal.int_overflow_sequence_state(regclass),
                           storagelab_internal.int_overflow_index_bounds(regclass),
                           storagelab_internal.int_overflow_stats_bounds(regclass, smallint) FROM PUBLIC;
COMMENT ON FUNCTION storagelab_internal.int_overflow_measurements() IS
  'the measurements behind storagelab.int_overflow, one row per column';
-- The view and int_overflow_snapshot() run it as their caller.
GRANT EXECUTE ON FUNCTION storagelab_internal.int_overflow_measurements() TO PUBLIC;

-- The history keeps its rows: is_estimate becomes evidence.
ALTER TABLE storagelab.int_overflow_history ADD COLUMN evidence text NOT NULL DEFAULT 'exact';
UPDATE storagelab.int_overflow_history SET evidence = 'estimate' WHERE is_estimate;
ALTER TABLE storagelab.int_overflow_history DROP COLUMN is_estimate;
COMMENT ON TABLE storagelab.int_overflow_history IS
  'values recorded by storagelab.int_overflow_snapshot(), one row per int_overflow column per snapshot; int_overflow.overflow_at is projected from them; kept by pg_dump';
COMMENT ON COLUMN storagelab.int_overflow_history.taken_at IS 'when int_overflow_snapshot() ran';
COMMENT ON COLUMN storagelab.int_overflow_history.evidence IS 'int_overflow.evidence at taken_at: exact, statistics (pg_stats bounds) or estimate';
COMMENT ON INDEX storagelab.int_overflow_history_taken_at IS
  'history rows by time: the growth window the view reads, the rows int_overflow_snapshot() deletes past int_overflow.history_retention';

CREATE VIEW storagelab.int_overflow AS
WITH
cfg AS (
  SELECT storagelab_internal.setting('int_overflow.warning_pct')::numeric AS warning_pct,
         storagelab_internal.setting('int_overflow.critical_pct')::numeric AS critical_pct,
         storagelab_internal.setting('int_overflow.warning_within')::interval AS warning_within,
         storagelab_internal.setting('int_overflow.critical_within')::interval AS critical_within,
         storagelab_internal.setting('int_overflow.growth_window')::interval AS growth_window
),
-- Growth per second of each column's recorded values (least squares over
-- the snapshots in the growth window); at least two snapshots needed.
growth AS (
  SELECT h.schema_name, h.table_name, h.column_name,
         -- date_part() gives float8 directly (extract() goes through numeric)
         pg_catalog.regr_slope(h.value::float8, pg_catalog.date_part('epoch', h.taken_at)) AS per_second
    FROM storagelab.int_overflow_history h, cfg
   WHERE h.taken_at >= pg_catalog.now() - cfg.growth_window
   GROUP BY h.schema_name, h.table_name, h.column_name
  HAVING count(*) >= 2
)
-- The measurements are not put in a CTE (a volatile function would make it
-- materialized: one more copy of every row); the projection is a LATERAL
-- subquery, which the planner pulls up into the row's expressions.
SELECT m.row_rel::pg_catalog.regclass AS relation,
       m.attname AS column_name,
       m.used AS used_pct,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.cycles THEN 'ok'
            WHEN m.used >= cfg.critical_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.critical_within THEN 'critical'
            WHEN m.used >= cfg.warning_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.warning_within THEN 'warning'
            ELSE 'ok' END AS severity,
       p.overflow_at_ AS overflow_at,
       m.cur AS current_value,
       m.lim AS limit_value,
       m.left_ AS values_left,
       round((g.per_second * 86400)::numeric, 3) AS growth_per_day,
       m.source,
       m.seqid::pg_catalog.regclass AS sequence,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.exact THEN 'exact'
            WHEN m.source = 'statistics' THEN 'statistics'
            ELSE 'estimate' END AS evidence,
       CASE WHEN m.cur IS NOT NULL AND m.cycles THEN 'cycles' ELSE m.status END AS status,
       pg_catalog.format_type(m.atttypid, NULL) AS column_type,
       m.min_value,
       m.max_value,
       m.seq_increment AS increment,
       coalesce(m.cycles, false) AS cycling,
       m.referencing_columns
  FROM cfg
 CROSS JOIN storagelab_internal.int_overflow_measurements() m
  LEFT JOIN growth g
    ON m.cur IS NOT NULL
   AND g.schema_name = m.nspname AND g.table_name = m.relname AND g.column_name = m.attname
 CROSS JOIN LATERAL (
   SELECT CASE WHEN g.per_second IS NULL OR m.cur IS NULL OR m.cycles THEN NULL
               WHEN NOT (g.per_second * CASE WHEN m.lim >= m.cur THEN 1 ELSE -1 END > 0) THEN NULL
               WHEN abs(m.lim - m.cur) / abs(g.per_second)::numeric > 3153600000 THEN 'infinity'::timestamptz
               ELSE pg_catalog.now()
                    + pg_catalog.make_interval(secs => (abs(m.lim - m.cur) / abs(g.per_second)::numeric)::float8)
          END AS overflow_at_
 ) p;

COMMENT ON VIEW storagelab.int_overflow IS
  'every int2/int4 column and every sequence-fed integer column of the database: usage, severity, projected overflow time, current value and limit; one row per partitioned/inheritance parent';
COMMENT ON COLUMN storagelab.int_overflow.relation IS 'table (the partitioned or inheritance parent, aggregating its children)';
COMMENT ON COLUMN storagelab.int_overflow.column_name IS 'column';
COMMENT ON COLUMN storagelab.int_overflow.column_type IS 'declared type of the column, as format_type() prints it (a domain shows as itself)';
COMMENT ON COLUMN storagelab.int_overflow.source IS 'where current_value comes from: sequence (serial or nextval() default), identity, index (exact endpoints), statistics (pg_stats bounds, estimate), foreign key (the referenced wider key''s value), none';
COMMENT ON COLUMN storagelab.int_overflow.sequence IS 'the sequence behind current_value, if any (for source foreign key: the referenced key''s sequence)';
COMMENT ON COLUMN storagelab.int_overflow.current_value IS 'last value handed out by the sequence, or the column value closest to its bound; NULL when it could not be read';
COMMENT ON COLUMN storagelab.int_overflow.limit_value IS 'the bound current_value moves toward: the tighter of the column type''s and the sequence''s MAXVALUE (MINVALUE for descending sequences)';
COMMENT ON COLUMN storagelab.int_overflow.used_pct IS 'share of the range used, 0-100: sequences from START to limit_value, values from 0 to limit_value';
COMMENT ON COLUMN storagelab.int_overflow.values_left IS 'values (sequence steps of INCREMENT) left before limit_value';
COMMENT ON COLUMN storagelab.int_overflow.severity IS 'ok, warning or critical (settings int_overflow.warning_pct/critical_pct/warning_within/critical_within); NULL when current_value is unknown';
COMMENT ON COLUMN storagelab.int_overflow.referencing_columns IS 'int2/int4 foreign-key columns (schema.table.column, quoted) that must follow this column to bigint, transitively';
COMMENT ON COLUMN storagelab.int_overflow.overflow_at IS 'projected time current_value reaches limit_value from the growth recorded by storagelab.int_overflow_snapshot(); NULL when unknown or not growing toward the limit, infinity beyond 100 years';
COMMENT ON COLUMN storagelab.int_overflow.min_value IS 'smallest value (index or statistics sources)';
COMMENT ON COLUMN storagelab.int_overflow.max_value IS 'largest value (index or statistics sources)';
COMMENT ON COLUMN storagelab.int_overflow.increment IS 'the sequence''s INCREMENT (negative: descending)';
COMMENT ON COLUMN storagelab.int_overflow.cycling IS 'the sequence CYCLEs within the column''s range: it wraps around instead of overflowing';
COMMENT ON COLUMN storagelab.int_overflow.evidence IS 'where current_value comes from: exact (sequence, index end), statistics (pg_stats bounds), estimate (an index end past too many dead entries); NULL when unknown';
COMMENT ON COLUMN storagelab.int_overflow.growth_per_day IS 'recorded growth of current_value per day (least squares over the growth window)';
COMMENT ON COLUMN storagelab.int_overflow.status IS 'ok, estimate, cycles, empty (no non-NULL value), unreadable (no privilege: SELECT on the sequence or table, or pg_read_all_stats for sequences), locked (ACCESS EXCLUSIVE held elsewhere; skipped, not waited for), unavailable (dropped meanwhile, unlogged on a standby), no data (no sequence, index or statistics: ANALYZE or int_overflow_scan())';

GRANT SELECT ON storagelab.int_overflow TO PUBLIC;

CREATE FUNCTION storagelab.int_overflow_scan(relation regclass)
RETURNS TABLE (column_name name, column_type regtype,
               min_value numeric, max_value numeric,
               current_value numeric, limit_value numeric,
               used_pct numeric, values_left numeric, severity text)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  kind "char";
  cols record;
  exprs text[] := '{}';
  names name[] := '{}';
  types regtype[] := '{}';
  mins numeric[] := '{}';
  maxs numeric[] := '{}';
  result numeric[];
  tmin numeric;
  tmax numeric;
  i int;
BEGIN
  SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = relation;
  IF kind IS NULL THEN
    RAISE EXCEPTION 'relation with OID % does not exist', relation::oid
      USING ERRCODE = '42P01',
            HINT = 'Pass an existing table as a regclass, for example ''public.orders''::regclass.';
  END IF;
  IF kind NOT IN ('r', 'p', 'm') THEN
    RAISE EXCEPTION '"%" is not a table', relation
      USING ERRCODE = '42809',
            DETAIL = 'int_overflow_scan() scans tables, partitioned tables and materialized views.',
            HINT = 'Pass a table.';
  END IF;
  IF NOT has_table_privilege(relation, 'SELECT') THEN
    RAISE EXCEPTION 'permission denied for table %', relation
      USING ERRCODE = '42501',
            DETAIL = 'int_overflow_scan() reads the whole table.',
            HINT = 'Grant SELECT on the table, or the role pg_read_all_data, to the calling role.';
  END IF;

  FOR cols IN
    SELECT a.attname, a.atttypid::regtype AS typ,
           CASE coalesce(nullif(t.typbasetype, 0), t.oid)
             WHEN 'int2'::regtype THEN -32768::numeric
             WHEN 'int4'::regtype THEN -2147483648::numeric
             ELSE -9223372036854775808::numeric END AS tmin,
           CASE coalesce(nullif(t.typbasetype, 0), t.oid)
             WHEN 'int2'::regtype THEN 32767::numeric
             WHEN 'int4'::regtype THEN 2147483647::numeric
             ELSE 9223372036854775807::numeric END AS tmax
      FROM pg_attribute a
      JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped
       AND coalesce(nullif(t.typbasetype, 0), t.oid) IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
     ORDER BY a.attnum
  LOOP
    exprs := exprs || format('min(%1$I)::numeric, max(%1$I)::numeric', cols.attname);
    names := names || cols.attname;
    types := types || cols.typ;
    mins := mins || cols.tmin;
    maxs := maxs || cols.tmax;
  END LOOP;
  IF cardinality(names) = 0 THEN
    RETURN;
  END IF;

  -- One sequential scan for all columns (takes ACCESS SHARE and waits for it).
  EXECUTE format('SELECT ARRAY[%s] FROM %s', array_to_string(exprs, ', '), relation)
    INTO result;

  FOR i IN 1 .. cardinality(names) LOOP
    column_name := names[i];
    column_type := types[i];
    min_value := result[2 * i - 1];
    max_value := result[2 * i];
    tmin := mins[i];
    tmax := maxs[i];
    IF max_value IS NULL THEN
      current_value := NULL; limit_value := NULL; used_pct := NULL;
      values_left := NULL; severity := NULL;
    ELSE
      IF greatest(min_value / tmin, 0) > greatest(max_value / tmax, 0) THEN
        current_value := min_value; limit_value := tmin;
      ELSE
        current_value := max_value; limit_value := tmax;
      END IF;
      used_pct := round(greatest(current_value / limit_value, 0) * 100, 3);
      values_left := abs(limit_value - current_value);
      severity := CASE
                WHEN used_pct >= storagelab_internal.setting('int_overflow.critical_pct')::numeric THEN 'critical'
                WHEN used_pct >= storagelab_internal.setting('int_overflow.warning_pct')::numeric THEN 'warning'
                ELSE 'ok' END;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
COMMENT ON FUNCTION storagelab.int_overflow_scan(regclass) IS
  'exact min and max of every integer column of a table (partitions and inheritance children included) by scanning it once, with usage against the column type''s bounds; waits for its lock';

CREATE FUNCTION storagelab.int_overflow_snapshot()
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  recorded integer;
BEGIN
  PERFORM storagelab_internal.require_primary('int_overflow_snapshot()');
  IF NOT (has_table_privilege('storagelab.int_overflow_history', 'INSERT')
          AND has_table_privilege('storagelab.int_overflow_history', 'DELETE')) THEN
    RAISE EXCEPTION 'permission denied to record int_overflow snapshots'
      USING ERRCODE = 'insufficient_privilege',
            DETAIL = 'int_overflow_snapshot() writes into storagelab.int_overflow_history.',
            HINT = 'Grant pg_monitor to the calling role, or INSERT and DELETE on storagelab.int_overflow_history.';
  END IF;
  -- A second snapshot in one transaction (same now()) replaces the first.
  DELETE FROM storagelab.int_overflow_history WHERE taken_at = now();
  INSERT INTO storagelab.int_overflow_history
         (taken_at, schema_name, table_name, column_name,
          sequence_schema, sequence_name, value, evidence)
  -- The view's rows without its projection: current_value is cur, and
  -- evidence as the view computes it where cur is known.
  SELECT now(), m.nspname, m.relname, m.attname, sn.nspname, sc.relname,
         m.cur, CASE WHEN m.exact THEN 'exact'
                     WHEN m.source = 'statistics' THEN 'statistics'
                     ELSE 'estimate' END
    FROM storagelab_internal.int_overflow_measurements() m
    LEFT JOIN pg_class sc ON sc.oid = m.seqid
    LEFT JOIN pg_namespace sn ON sn.oid = sc.relnamespace
   WHERE m.cur IS NOT NULL;
  GET DIAGNOSTICS recorded = ROW_COUNT;

  DELETE FROM storagelab.int_overflow_history
   WHERE taken_at < now() - storagelab_internal.setting('int_overflow.history_retention')::interval;

  RETURN recorded;
END
$$;
COMMENT ON FUNCTION storagelab.int_overflow_snapshot() IS
  'records the current value of every int_overflow row the caller can read in storagelab.int_overflow_history (for overflow_at), deletes rows older than int_overflow.history_retention; returns the rows recorded; schedule it daily';

-- The old name, for one version.
CREATE OR REPLACE FUNCTION storagelab.snapshot()
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RAISE NOTICE 'storagelab.snapshot() is deprecated: call storagelab.int_overflow_snapshot()'
    USING DETAIL = 'The old name is removed in the next version.';
  RETURN storagelab.int_overflow_snapshot();
END
$$;
COMMENT ON FUNCTION storagelab.snapshot() IS
  'deprecated: the old name of storagelab.int_overflow_snapshot(), removed in the next version';

-- Who records snapshots: whoever may write the history (the owner, and
-- members of pg_monitor: a monitoring agent's role, which reads every
-- sequence's position through pg_read_all_stats and writes only into
-- storagelab's own history table).  The function runs as its caller and
-- checks that privilege first, so that a refusal says what to grant;
-- pg_monitor gets exactly the table privileges it needs: INSERT, and DELETE
-- by taken_at (past the retention, or this transaction's earlier
-- snapshot), which needs SELECT on taken_at; never on the values.
GRANT EXECUTE ON FUNCTION storagelab.int_overflow_snapshot(), storagelab.snapshot() TO PUBLIC;
GRANT SELECT (taken_at), INSERT, DELETE ON storagelab.int_overflow_history TO pg_monitor;

-- heap_visibility: result columns instead of a type, advice first.
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
                 CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS relfrozenxid_age,
                 CASE WHEN c.relminmxid <> '0' THEN pg_catalog.mxid_age(c.relminmxid) END AS relminmxid_age,
                 current_setting('autovacuum_freeze_max_age')::bigint AS freeze_max_age,
                 current_setting('autovacuum_multixact_freeze_max_age')::bigint AS mxid_freeze_max_age,
                 current_setting('vacuum_freeze_table_age')::bigint AS freeze_table_age,
                 c.oid
            FROM pg_catalog.pg_class c
           WHERE c.relkind IN ('r', 'm')
             AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
             AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
             AND (pg_catalog.has_table_privilege(c.oid, 'SELECT')
                  OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE'))) r
    LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = r.oid
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
COMMENT ON COLUMN storagelab.visibility.severity IS 'critical (wraparound near, even when locked), warning (next VACUUM aggressive), info, ok; else NULL when locked';
COMMENT ON COLUMN storagelab.visibility.advice IS 'VACUUM (FREEZE), VACUUM, or nothing to do, with the reason (the figures are the other columns)';
COMMENT ON COLUMN storagelab.visibility.all_visible_pct IS 'all_visible_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pct IS 'all_frozen_pages as a percentage of pages';
COMMENT ON COLUMN storagelab.visibility.relfrozenxid_age IS 'age(relfrozenxid): transactions since the table was last frozen up to relfrozenxid';
COMMENT ON COLUMN storagelab.visibility.table_bytes IS 'bytes of the main fork (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.table_pretty IS 'table_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.visibility.pages IS 'pages of the main fork (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_visible_pages IS 'pages all-visible in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.all_frozen_pages IS 'pages all-frozen in the visibility map (NULL when the table is locked)';
COMMENT ON COLUMN storagelab.visibility.inserts_since_vacuum IS 'rows inserted since the last vacuum (pg_stat_all_tables.n_ins_since_vacuum)';
COMMENT ON COLUMN storagelab.visibility.dead_tuples IS 'estimated dead rows (pg_stat_all_tables.n_dead_tup)';
COMMENT ON COLUMN storagelab.visibility.last_vacuum IS 'last manual VACUUM';
COMMENT ON COLUMN storagelab.visibility.last_autovacuum IS 'last autovacuum';
COMMENT ON COLUMN storagelab.visibility.relminmxid_age IS 'mxid_age(relminmxid)';
COMMENT ON COLUMN storagelab.visibility.kind IS 'table or materialized view';

-- TOAST: the census and the lock probe are internal.
ALTER FUNCTION storagelab.toast_census(regclass, name, integer) SET SCHEMA storagelab_internal;
REVOKE EXECUTE ON FUNCTION storagelab_internal.toast_census(regclass, name, integer) FROM pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab_internal.toast_census(regclass, name, integer) TO PUBLIC;
ALTER FUNCTION storagelab.toast_lock_nowait(regclass) SET SCHEMA storagelab_internal;
REVOKE EXECUTE ON FUNCTION storagelab_internal.toast_lock_nowait(regclass) FROM pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab_internal.toast_lock_nowait(regclass) TO PUBLIC;
CREATE FUNCTION storagelab.toast_profile(
    relation regclass, column_name name, sample_rows integer DEFAULT NULL)
RETURNS TABLE (
    advice text, expected_effect text,
    storage text, compression text, effective_compression text,
    evidence text, rows_scanned bigint, pages_scanned bigint, pages_total bigint,
    large_values bigint, large_compressed bigint, large_incompressible bigint,
    raw_bytes bigint, stored_bytes bigint,
    compressed_raw_bytes bigint, compressed_stored_bytes bigint,
    compression_ratio numeric, compression_ratio_histogram jsonb,
    null_values bigint, inline_uncompressed bigint, inline_short bigint,
    inline_compressed bigint, external_uncompressed bigint, external_compressed bigint,
    pglz_values bigint, lz4_values bigint,
    sniffed_values bigint, unsniffed_values bigint, incompressible_values bigint,
    content_types jsonb, prefix_entropy numeric,
    toast_values_fetched bigint, toast_buffers_accessed bigint,
    toast_relation regclass, toast_table_bytes bigint, toast_index_bytes bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
  -- plpgsql rather than SQL: the plan of this query is cached per session.
  RETURN QUERY
  WITH cat AS (
    SELECT CASE a.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                             WHEN 'm' THEN 'main' WHEN 'p' THEN 'plain' END AS storage,
           CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END AS compression,
           c.reltoastrelid,
           -- ALTER TABLE refuses system catalogs (pg_largeobject, say)
           c.relnamespace = 'pg_catalog'::regnamespace AS is_catalog
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE a.attrelid = $1 AND a.attname = $2 AND NOT a.attisdropped
  ), p AS (
    SELECT t.*, cat.*,
           coalesce(cat.compression, current_setting('default_toast_compression')) AS eff_compression
      FROM storagelab_internal.toast_census($1, $2, $3) t LEFT JOIN cat ON true
  )
  SELECT a.advice, a.expected_effect,
         p.storage, p.compression, p.eff_compression,
         CASE WHEN p.sampled THEN 'sampled' ELSE 'exact' END,
         p.rows_scanned, p.pages_scanned, p.pages_total,
         p.large_values, p.large_compressed, p.large_incompressible,
         p.raw_bytes, p.stored_bytes,
         p.compressed_raw_bytes, p.compressed_stored_bytes,
         round(p.compressed_raw_bytes::numeric / nullif(p.compressed_stored_bytes, 0), 2),
         jsonb_build_object('<=0.25', p.ratio_le_25, '0.25-0.50', p.ratio_le_50,
                            '0.50-0.75', p.ratio_le_75, '>0.75', p.ratio_gt_75),
         p.null_values, p.inline_uncompressed, p.inline_short,
         p.inline_compressed, p.external_uncompressed, p.external_compressed,
         p.pglz_values, p.lz4_values,
         p.sniffed_values, p.unsniffed_values, p.incompressible_values,
         p.content_types, round(p.prefix_entropy::numeric, 2),
         p.toast_values_fetched, p.toast_buffers_accessed,
         nullif(p.reltoastrelid, 0)::regclass,
         CASE WHEN p.reltoastrelid <> 0 THEN pg_relation_size(p.reltoastrelid) END,
         CASE WHEN p.reltoastrelid <> 0 THEN pg_indexes_size(p.reltoastrelid) END
    FROM p,
    LATERAL (
      SELECT CASE
        WHEN p.is_catalog THEN
          'keep: a system catalog, whose storage and compression cannot be changed'
        WHEN p.large_values = 0 THEN
          'keep: no value reaches the ~2 kB TOAST threshold'
        WHEN p.storage IN ('extended', 'main')
             AND p.large_incompressible >= 0.8 * p.large_values THEN
          'SET STORAGE EXTERNAL: most large values are compressed already (large_incompressible)'
        WHEN p.storage = 'external'
             AND p.large_incompressible <= 0.2 * p.large_values THEN
          'SET STORAGE EXTENDED: the large values look compressible but are stored uncompressed'
        WHEN p.storage IN ('extended', 'main') AND p.eff_compression = 'pglz'
             AND p.lz4_available AND p.pglz_values > 0
             AND p.large_compressed >= 0.2 * p.large_values THEN
          'SET COMPRESSION lz4: lz4 compresses and decompresses several times faster than pglz'
        -- the reasons to keep a setting, the state the advice above leads to
        WHEN p.storage = 'external'
             AND p.large_incompressible >= 0.8 * p.large_values THEN
          'keep: most large values are compressed already, and EXTERNAL stores them as they are'
        WHEN p.storage IN ('extended', 'main')
             AND p.large_incompressible <= 0.2 * p.large_values THEN
          'keep: the large values are compressible, and the column compresses new ones'
        ELSE
          'keep: the large values mix compressed and compressible content'
        END AS advice,
        CASE
        WHEN p.is_catalog OR p.large_values = 0 THEN 'none'
        WHEN p.storage IN ('extended', 'main')
             AND p.large_incompressible >= 0.8 * p.large_values THEN
          'writes skip compressing; substr() reads only its chunks; existing values change when rewritten'
        WHEN p.storage = 'external'
             AND p.large_incompressible <= 0.2 * p.large_values THEN
          'new values are compressed when that pays; substr() on them decompresses from the start'
        WHEN p.storage IN ('extended', 'main') AND p.eff_compression = 'pglz'
             AND p.lz4_available AND p.pglz_values > 0
             AND p.large_compressed >= 0.2 * p.large_values THEN
          'faster writes and reads of compressed values, similar size; existing values keep pglz'
        ELSE 'none'
        END AS expected_effect
    ) a;
END
$fn$;
COMMENT ON FUNCTION storagelab.toast_profile(regclass, name, integer) IS
  'how the values of one varlena column are stored (NULL, inline, compressed, out of line, method), sizes, content types by magic bytes, prefix entropy, and storage advice; exact census when sample_rows is NULL; needs pg_stat_scan_tables and SELECT on the table';
-- Executable by everyone: toast_census() checks pg_stat_scan_tables and
-- SELECT on the table, and names what is missing.
GRANT EXECUTE ON FUNCTION storagelab.toast_profile(regclass, name, integer) TO PUBLIC;

CREATE VIEW storagelab.bytea_storage AS
  SELECT c.oid::regclass AS relation,
         a.attname AS column_name,
         p.advice,
         CASE a.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                           WHEN 'm' THEN 'main' WHEN 'p' THEN 'plain' END AS storage,
         coalesce(CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END,
                  current_setting('default_toast_compression')) AS effective_compression,
         CASE WHEN l.status = 'ok'
              THEN coalesce(p.toast_table_bytes, 0) + coalesce(p.toast_index_bytes, 0) END AS toast_bytes,
         CASE WHEN l.status = 'ok'
              THEN pg_size_pretty(coalesce(p.toast_table_bytes, 0) + coalesce(p.toast_index_bytes, 0)) END AS toast_pretty,
         CASE WHEN l.status = 'ok' THEN pg_relation_size(c.oid) END AS table_bytes,
         CASE WHEN l.status = 'ok' THEN pg_size_pretty(pg_relation_size(c.oid)) END AS table_pretty,
         p.evidence,
         p.rows_scanned AS sample_rows,
         p.large_values,
         p.large_incompressible,
         p.pglz_values,
         p.lz4_values,
         p.compression_ratio,
         p.prefix_entropy,
         l.status,
         CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END AS compression,
         c.reltuples::bigint AS estimated_rows,
         nullif(c.reltoastrelid, 0)::regclass AS toast_relation,
         p.content_types
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
   CROSS JOIN LATERAL (SELECT storagelab_internal.toast_lock_nowait(c.oid) AS status OFFSET 0) l
    LEFT JOIN LATERAL (
          SELECT * FROM storagelab.toast_profile(
                   c.oid, a.attname, storagelab_internal.setting('toast.view_sample_rows')::integer)
           WHERE l.status = 'ok'
          OFFSET 0) p ON true
   WHERE a.atttypid IN (  -- bytea, and domains over it (over those too)
           WITH RECURSIVE bt(oid) AS (
             SELECT 'bytea'::regtype::oid
             UNION
             SELECT ty.oid FROM pg_type ty JOIN bt ON ty.typbasetype = bt.oid WHERE ty.typtype = 'd'
           ) SELECT bt.oid FROM bt)
     AND c.relkind IN ('r', 'm')
     AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'heap')
     -- an unlogged table has no data on a standby
     AND NOT (c.relpersistence = 'u' AND pg_is_in_recovery())
     AND (c.relpersistence <> 't' OR c.relnamespace = pg_my_temp_schema())
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
     AND has_table_privilege(c.oid, 'SELECT')
     -- as pg_stats: no profile of rows a policy hides from the caller
     AND NOT (c.relrowsecurity AND row_security_active(c.oid));
COMMENT ON VIEW storagelab.bytea_storage IS
  'every bytea column the caller may SELECT from: advice, sizes and the headline figures of a sampled toast_profile() (at most toast.view_sample_rows rows and value prefixes per column; a table locked by another session has status locked, not waited for; unlogged tables are left out on a standby); needs pg_stat_scan_tables';
COMMENT ON COLUMN storagelab.bytea_storage.relation IS 'the table or materialized view (partitions are listed one by one)';
COMMENT ON COLUMN storagelab.bytea_storage.column_name IS 'the bytea column (or column of a domain over bytea)';
COMMENT ON COLUMN storagelab.bytea_storage.advice IS 'SET STORAGE EXTERNAL / EXTENDED, SET COMPRESSION lz4, or keep, with the reason (figures in the other columns)';
COMMENT ON COLUMN storagelab.bytea_storage.storage IS 'storage strategy: extended, external, main or plain';
COMMENT ON COLUMN storagelab.bytea_storage.effective_compression IS 'method new values get: compression, else default_toast_compression';
COMMENT ON COLUMN storagelab.bytea_storage.toast_bytes IS 'size of the TOAST table and its index in bytes (all columns of the table; NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.toast_pretty IS 'toast_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.table_bytes IS 'size of the table''s main fork in bytes (NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.table_pretty IS 'table_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.evidence IS 'sampled (part of the table''s pages read) or exact (all of them)';
COMMENT ON COLUMN storagelab.bytea_storage.sample_rows IS 'rows profiled';
COMMENT ON COLUMN storagelab.bytea_storage.large_values IS 'profiled values of at least ~2 kB (TOAST_TUPLE_THRESHOLD) or stored compressed or out of line, the ones storage settings affect';
COMMENT ON COLUMN storagelab.bytea_storage.large_incompressible IS 'large values whose content is already compressed (magic bytes) or has a high-entropy prefix';
COMMENT ON COLUMN storagelab.bytea_storage.pglz_values IS 'profiled values compressed with pglz';
COMMENT ON COLUMN storagelab.bytea_storage.lz4_values IS 'profiled values compressed with lz4';
COMMENT ON COLUMN storagelab.bytea_storage.compression_ratio IS 'raw / stored bytes of the compressed profiled values';
COMMENT ON COLUMN storagelab.bytea_storage.prefix_entropy IS 'mean Shannon entropy of value prefixes, bits per byte (8 = random)';
COMMENT ON COLUMN storagelab.bytea_storage.status IS 'ok (profiled), locked (another session holds a conflicting lock such as ACCESS EXCLUSIVE: skipped, not waited for; profile and sizes NULL) or unavailable (dropped meanwhile)';
COMMENT ON COLUMN storagelab.bytea_storage.compression IS 'compression method set on the column, NULL when default_toast_compression applies';
COMMENT ON COLUMN storagelab.bytea_storage.estimated_rows IS 'pg_class.reltuples (-1: never analyzed)';
COMMENT ON COLUMN storagelab.bytea_storage.toast_relation IS 'the TOAST table, NULL if none';
COMMENT ON COLUMN storagelab.bytea_storage.content_types IS 'counts per content type detected from magic bytes of the first 1,024 bytes';
-- Everyone may query it; toast_lock_nowait() refuses (42501, with a hint)
-- a caller without the privileges of pg_stat_scan_tables.
GRANT SELECT ON storagelab.bytea_storage TO PUBLIC;

-- column_waste: the layout model, the walk, the profiles and the helper
-- views are internal.
ALTER TYPE storagelab.tuple_layout SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.heap_pages(float8, float8, int4, boolean) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.text_kind(text) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.column_profile_scan(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.column_statistics() SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.table_layouts() SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.column_candidates(oid[], int2[]) SET SCHEMA storagelab_internal;
ALTER TABLE storagelab.column_profiles SET SCHEMA storagelab_internal;
ALTER VIEW storagelab.protected_columns SET SCHEMA storagelab_internal;
ALTER VIEW storagelab.column_facts SET SCHEMA storagelab_internal;
REVOKE EXECUTE ON FUNCTION storagelab_internal.column_profile_scan(regclass) FROM pg_stat_scan_tables;
REVOKE EXECUTE ON FUNCTION storagelab.column_profile(regclass) FROM pg_stat_scan_tables;
COMMENT ON VIEW storagelab_internal.column_facts IS
  'per column of every ordinary table whose every live column the caller may SELECT (what pg_stats would show of it): layout facts (typlen, typalign, typstorage, NOT NULL, null fraction, average width) and the data facts the type rules use, from storagelab_internal.column_profiles when current, else pg_statistic (none under active row-level security); why a column is protected from narrowing';

CREATE VIEW storagelab.alignment_padding AS
SELECT relid::pg_catalog.regclass AS relation,
       (pages_now - pages_after) * current_setting('block_size')::int8 AS saved_bytes,
       pg_catalog.pg_size_pretty((pages_now - pages_after) * current_setting('block_size')::int8)
         AS saved_pretty,
       round((row_bytes - suggested_row_bytes)::numeric, 2) AS saved_bytes_per_row,
       CASE WHEN row_bytes IS NOT NULL
            THEN 'rebuild with the columns in suggested_order'
            -- never analyzed: the order can be judged from the catalog, its
            -- cost cannot
            ELSE 'not analyzed: run ANALYZE or storagelab.column_profile()' END AS advice,
       CASE WHEN row_bytes IS NULL THEN NULL
            WHEN all_exact THEN 'exact' ELSE 'statistics' END AS evidence,
       round(row_bytes::numeric, 2) AS row_bytes,
       round(padding_bytes::numeric, 2) AS padding_bytes_per_row,
       round(suggested_row_bytes::numeric, 2) AS suggested_row_bytes,
       CASE WHEN row_bytes IS NOT NULL THEN tuples::int8 END AS estimated_rows,
       pages_now,
       pages_after,
       CASE WHEN row_bytes IS NOT NULL THEN 'ok' ELSE 'not analyzed' END AS status,
       suggested_order,
       current_order
  FROM storagelab_internal.table_layouts()
 -- sizes are there when every column has facts and the row count is known
 WHERE CASE WHEN row_bytes IS NOT NULL
            THEN round((row_bytes - suggested_row_bytes)::numeric, 2) > 0
            ELSE tuples IS DISTINCT FROM 0 AND suggested_order IS DISTINCT FROM current_order END;
COMMENT ON VIEW storagelab.alignment_padding IS
  'one row per table whose column order wastes alignment padding: the pg_relation_size difference a rebuild in the suggested order would give (fixed width by alignment descending, then variable width; NOT NULL first), row bytes now and after; from catalogs and statistics only';
COMMENT ON COLUMN storagelab.alignment_padding.relation IS 'the table';
COMMENT ON COLUMN storagelab.alignment_padding.saved_bytes IS 'pg_relation_size now (as if freshly written) minus after a rebuild in the suggested order: whole pages, with fillfactor, line pointers and page header';
COMMENT ON COLUMN storagelab.alignment_padding.saved_pretty IS 'saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.alignment_padding.saved_bytes_per_row IS 'row_bytes minus suggested_row_bytes';
COMMENT ON COLUMN storagelab.alignment_padding.advice IS 'rebuild in suggested_order, or run ANALYZE first';
COMMENT ON COLUMN storagelab.alignment_padding.evidence IS 'exact when every column comes from column_profile(), else statistics; NULL when not analyzed';
COMMENT ON COLUMN storagelab.alignment_padding.row_bytes IS 'expected bytes per row on a page in the current order (tuple header, null bitmap, alignment, MAXALIGN; without the 4-byte line pointer)';
COMMENT ON COLUMN storagelab.alignment_padding.padding_bytes_per_row IS 'the part of row_bytes that is alignment padding';
COMMENT ON COLUMN storagelab.alignment_padding.suggested_row_bytes IS 'expected bytes per row in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_rows IS 'rows the estimate is for (pg_class.reltuples, or the rows column_profile() saw)';
COMMENT ON COLUMN storagelab.alignment_padding.pages_now IS 'heap pages the rows take in the current order when freshly written';
COMMENT ON COLUMN storagelab.alignment_padding.pages_after IS 'heap pages in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.status IS 'ok, or not analyzed (the numbers are NULL: some column has no statistics)';
COMMENT ON COLUMN storagelab.alignment_padding.suggested_order IS 'every live column, in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.current_order IS 'live columns in their current order';

CREATE VIEW storagelab.column_waste AS
SELECT c.relid::pg_catalog.regclass AS relation,
       c.attname AS column_name,
       pg_catalog.format_type(c.atttypid, c.atttypmod) AS column_type,
       c.suggested_type,
       c.saved_pages * current_setting('block_size')::int8 AS saved_bytes,
       pg_catalog.pg_size_pretty(c.saved_pages * current_setting('block_size')::int8) AS saved_pretty,
       CASE WHEN c.rule IS NOT NULL THEN c.reason
            -- never analyzed: reported, not guessed
            ELSE 'not analyzed: run ANALYZE or storagelab.column_profile()' END AS advice,
       c.source AS evidence,
       round(c.saved_bytes_per_row::numeric, 2) AS saved_bytes_per_row,
       round(c.saved_bytes_per_row_reordered::numeric, 2) AS saved_bytes_per_row_reordered,
       c.lo AS min_value,
       c.hi AS max_value,
       round(c.null_frac::numeric, 4) AS null_frac,
       c.profiled_at
  FROM (SELECT pg_catalog.array_agg(relid) AS relids, pg_catalog.array_agg(attnum) AS attnums
          FROM storagelab_internal.protected_columns) p
 CROSS JOIN LATERAL storagelab_internal.column_candidates(p.relids, p.attnums) c
 -- a rule with a saving, or no facts at all (then every number is NULL)
 WHERE CASE WHEN c.rule IS NOT NULL
            THEN round(c.saved_bytes_per_row::numeric, 2) > 0
                 OR round(c.saved_bytes_per_row_reordered::numeric, 2) > 0
            ELSE c.source IS NULL AND c.tuples IS DISTINCT FROM 0 END;
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; from pg_stats, or exact after storagelab.column_profile()';
COMMENT ON COLUMN storagelab.column_waste.relation IS 'the table';
COMMENT ON COLUMN storagelab.column_waste.column_name IS 'the column';
COMMENT ON COLUMN storagelab.column_waste.column_type IS 'its type with typmod, as format_type() prints it';
COMMENT ON COLUMN storagelab.column_waste.suggested_type IS 'the narrower type the data fits; NULL when the table was never analyzed';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes IS 'pg_relation_size difference after ALTER COLUMN ... TYPE suggested_type, in whole pages (fillfactor, line pointers, page header), for the current row count';
COMMENT ON COLUMN storagelab.column_waste.saved_pretty IS 'saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.column_waste.advice IS 'what in the data allows the change (its bounds are min_value and max_value), or what to run first';
COMMENT ON COLUMN storagelab.column_waste.evidence IS 'exact (from column_profile()) or statistics (from the pg_stats sample: bounds and values seen by ANALYZE); NULL when never analyzed';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row IS 'bytes per row saved by ALTER COLUMN ... TYPE alone (the column keeps its position; alignment and NULLs counted)';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row_reordered IS 'bytes per row saved by the change when the table is also laid out in the order alignment_padding suggests';
COMMENT ON COLUMN storagelab.column_waste.min_value IS 'smallest value the rule used (integer rules)';
COMMENT ON COLUMN storagelab.column_waste.max_value IS 'largest value the rule used (integer rules)';
COMMENT ON COLUMN storagelab.column_waste.null_frac IS 'fraction of NULLs in the column';
COMMENT ON COLUMN storagelab.column_waste.profiled_at IS 'when column_profile() saw the data (evidence exact)';

CREATE OR REPLACE FUNCTION storagelab.column_profile(relation regclass)
RETURNS TABLE (column_name name, column_type text, row_count int8, null_frac float8,
               avg_width float8, min_value numeric, max_value numeric,
               all_integers boolean, text_kind text, trimmed_avg_width float8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  PERFORM storagelab_internal.require_primary('column_profile()');
  PERFORM storagelab_internal.check_scan_role();
  -- column_profile_scan() checks existence, privilege, kind and row security.
  -- Profiles of dropped tables go too (their OIDs could be reused).
  -- Two profiles of one table at once: the second waits for the first to
  -- commit (an advisory lock on the table's OID in a key space of our own),
  -- then replaces its rows, instead of failing on the primary key.
  PERFORM pg_advisory_xact_lock(hashtext('storagelab.column_profile'),
                                (relation::oid::int8 - 2147483648)::int4);
  DELETE FROM storagelab_internal.column_profiles p
   WHERE p.relid = relation
      OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = p.relid);
  RETURN QUERY
    WITH scan AS (
      SELECT relation::oid AS relid, s.attnum, a.attname, a.atttypid, a.atttypmod,
             now() AS profiled_at, s.row_count, s.null_count, s.avg_width, s.min_value,
             s.max_value, s.all_integers, s.text_kind, s.trimmed_avg_width, s.width_stddev
        FROM storagelab_internal.column_profile_scan(relation) s
        JOIN pg_attribute a ON a.attrelid = relation AND a.attnum = s.attnum
    ),
    ins AS (
      INSERT INTO storagelab_internal.column_profiles SELECT * FROM scan
    )
    SELECT p.attname, format_type(p.atttypid, p.atttypmod), p.row_count,
           CASE WHEN p.row_count > 0 THEN p.null_count::float8 / p.row_count END,
           p.avg_width, p.min_value, p.max_value, p.all_integers, p.text_kind, p.trimmed_avg_width
      FROM scan p
     ORDER BY p.attnum;
END
$fn$;
COMMENT ON FUNCTION storagelab.column_profile(regclass) IS
  'one exact pass over an ordinary table for all its columns (NULLs, widths, bounds, integer-only numerics, text kinds, char(n) padding); stores the results, which column_waste and alignment_padding then use (evidence exact), and returns them; needs pg_stat_scan_tables and SELECT on the table; NULL argument: no rows';

-- Access: the views filter by the caller's privileges themselves, running
-- the walk as their caller.
GRANT SELECT ON storagelab.column_waste, storagelab.alignment_padding TO PUBLIC;
GRANT EXECUTE ON FUNCTION storagelab_internal.table_layouts(),
                          storagelab_internal.column_candidates(oid[], int2[]) TO PUBLIC;
REVOKE EXECUTE ON FUNCTION storagelab_internal.column_statistics(),
                           storagelab_internal.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4),
                           storagelab_internal.heap_pages(float8, float8, int4, boolean),
                           storagelab_internal.text_kind(text) FROM PUBLIC;
-- Profiles hold column bounds: nobody reads them directly but through the
-- views, which check the caller's privileges on each table.
REVOKE ALL ON storagelab_internal.column_profiles FROM PUBLIC;
-- column_profile() reads whole tables: like the page readers, it is for
-- pg_stat_scan_tables (plus SELECT on the table), which
-- column_profile_scan() checks in C, naming what is missing.  The function
-- runs as its caller, who needs to find and replace a table's rows only.
GRANT SELECT (relid), INSERT, DELETE ON storagelab_internal.column_profiles TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab_internal.column_profile_scan(regclass),
                          storagelab.column_profile(regclass) TO PUBLIC;
-- The internal views are read by the public ones only (as their owner).
REVOKE ALL ON storagelab_internal.column_facts, storagelab_internal.protected_columns FROM PUBLIC;

-- column_waste: no narrowing on thin evidence (settings column_waste.min_rows,
-- min_distinct, dense_below): column_candidates() takes the thresholds; new
-- view table_rewrite_plan (the changes judged together per table, with the
-- column order).
-- How much evidence a narrowing needs (src/column_rules.c, thin_evidence()).
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('column_waste.min_rows', '1000',
   'fewest rows (profiled, else reltuples) on which column_waste and table_rewrite_plan change a type'),
  ('column_waste.min_distinct', '3',
   'fewest distinct values (pg_statistic) on which an integer column is narrowed'),
  ('column_waste.dense_below', '100',
   'below this many distinct values, an integer column is narrowed only if they fill their range');

CREATE FUNCTION storagelab_internal.column_candidates(skip_relids oid[], skip_attnums int2[],
  min_rows float8, min_distinct float8, dense_below float8,
  OUT relid oid, OUT attnum int2, OUT attname name, OUT atttypid oid, OUT atttypmod int4,
  OUT attnotnull boolean, OUT source text, OUT null_frac float8, OUT profiled_at timestamptz,
  OUT tuples float8, OUT rule int4, OUT lo numeric, OUT hi numeric,
  OUT suggested_type text, OUT reason text, OUT saved_bytes_per_row float8,
  OUT saved_bytes_per_row_reordered float8, OUT saved_pages int8, OUT thin_evidence text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_column_candidates'
LANGUAGE C STABLE ROWS 10000;
COMMENT ON FUNCTION storagelab_internal.column_candidates(oid[], int2[], float8, float8, float8) IS
  'one row per int4, int8, numeric, text, varchar or char(n) column (not dropped, identity, generated or inherited, and not one of the (skip_relids[i], skip_attnums[i]) pairs) of the tables column_statistics() lists that has no facts (rule NULL) or to which a column_waste rule applies (rule 1-13, see the view): the bounds the rule used, the suggested type and the reason in words, the bytes per row the change saves in the current order and in the suggested one, the heap pages it saves (NULL when the row count is unknown), and why the evidence is too thin for it (fewer than min_rows rows; integer ranges: all values equal, fewer than min_distinct distinct values, or fewer than dense_below with gaps), NULL when it is enough';

CREATE FUNCTION storagelab_internal.table_rewrite_plans(skip_relids oid[], skip_attnums int2[],
  min_rows float8, min_distinct float8, dense_below float8,
  OUT relid oid, OUT tuples float8, OUT all_exact boolean, OUT current_order name[],
  OUT planned_order name[], OUT changes text, OUT changed_columns int4,
  OUT row_bytes float8, OUT planned_row_bytes float8, OUT pages_now int8,
  OUT pages_after int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_table_rewrite_plans'
LANGUAGE C STABLE ROWS 10000;
COMMENT ON FUNCTION storagelab_internal.table_rewrite_plans(oid[], int2[], float8, float8, float8) IS
  'one row per table column_statistics() lists whose every live column has facts and whose row count is known: the type changes column_candidates() allows on enough evidence, kept only where the saving needs them once all are made and the columns reordered, as a JSON array, the live columns now and in the planned order, row bytes now and planned, and heap pages now and after the rewrite';

CREATE OR REPLACE VIEW storagelab.column_waste AS
SELECT c.relid::pg_catalog.regclass AS relation,
       c.attname AS column_name,
       pg_catalog.format_type(c.atttypid, c.atttypmod) AS column_type,
       CASE WHEN c.thin_evidence IS NULL THEN c.suggested_type END AS suggested_type,
       CASE WHEN c.thin_evidence IS NULL
            THEN c.saved_pages * current_setting('block_size')::int8 END AS saved_bytes,
       CASE WHEN c.thin_evidence IS NULL
            THEN pg_catalog.pg_size_pretty(c.saved_pages * current_setting('block_size')::int8) END
         AS saved_pretty,
       CASE WHEN c.rule IS NULL
            -- never analyzed: reported, not guessed
            THEN 'not analyzed: run ANALYZE or storagelab.column_profile()'
            -- on thin evidence: what is missing, instead of a type
            ELSE coalesce(c.thin_evidence, c.reason) END AS advice,
       c.source AS evidence,
       CASE WHEN c.thin_evidence IS NULL
            THEN round(c.saved_bytes_per_row::numeric, 2) END AS saved_bytes_per_row,
       CASE WHEN c.thin_evidence IS NULL
            THEN round(c.saved_bytes_per_row_reordered::numeric, 2) END
         AS saved_bytes_per_row_reordered,
       c.lo AS min_value,
       c.hi AS max_value,
       round(c.null_frac::numeric, 4) AS null_frac,
       c.profiled_at
  FROM (SELECT pg_catalog.array_agg(relid) AS relids, pg_catalog.array_agg(attnum) AS attnums
          FROM storagelab_internal.protected_columns) p
 CROSS JOIN LATERAL storagelab_internal.column_candidates(p.relids, p.attnums,
         storagelab_internal.setting('column_waste.min_rows')::float8,
         storagelab_internal.setting('column_waste.min_distinct')::float8,
         storagelab_internal.setting('column_waste.dense_below')::float8) c
 -- a rule with a saving (on thin evidence: the row says what is missing,
 -- without sizes), or no facts at all (then every number is NULL)
 WHERE CASE WHEN c.rule IS NOT NULL
            THEN round(c.saved_bytes_per_row::numeric, 2) > 0
                 OR round(c.saved_bytes_per_row_reordered::numeric, 2) > 0
            ELSE c.source IS NULL AND c.tuples IS DISTINCT FROM 0 END;
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; on thin evidence (too few rows, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
COMMENT ON COLUMN storagelab.column_waste.suggested_type IS 'the narrower type the data fits; NULL when the table was never analyzed or the evidence is too thin (advice says what is missing)';
COMMENT ON COLUMN storagelab.column_waste.advice IS 'what in the data allows the change (its bounds are min_value and max_value), what evidence is missing (settings column_waste.min_rows, min_distinct, dense_below), or what to run first';
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; on thin evidence (too few rows, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
DROP FUNCTION storagelab_internal.column_candidates(oid[], int2[]);
GRANT EXECUTE ON FUNCTION storagelab_internal.column_candidates(oid[], int2[], float8, float8, float8),
                          storagelab_internal.table_rewrite_plans(oid[], int2[], float8, float8, float8)
                          TO PUBLIC;

-- table_rewrite_plan: column_waste's changes judged together per table, with
-- the column order, as one plan (the input of a layout migration).  Changes
-- alone can save nothing that together save a MAXALIGN step; the plan keeps
-- a change only when the saving needs it (src/column_rules.c,
-- storagelab_emit_plan()).
CREATE VIEW storagelab.table_rewrite_plan AS
SELECT p.relid::pg_catalog.regclass AS relation,
       round(p.row_bytes::numeric, 2) AS current_row_bytes,
       round(p.planned_row_bytes::numeric, 2) AS planned_row_bytes,
       (p.pages_now - p.pages_after) * current_setting('block_size')::int8 AS estimated_saved_bytes,
       pg_catalog.pg_size_pretty((p.pages_now - p.pages_after) * current_setting('block_size')::int8)
         AS estimated_saved_pretty,
       p.changes::jsonb AS column_changes,
       p.planned_order AS column_order,
       CASE WHEN p.all_exact THEN 'exact' ELSE 'statistics' END AS evidence,
       p.current_order,
       p.tuples::int8 AS estimated_rows,
       p.pages_now * current_setting('block_size')::int8 AS estimated_bytes_now,
       p.pages_after * current_setting('block_size')::int8 AS estimated_bytes_after
  FROM (SELECT pg_catalog.array_agg(relid) AS relids, pg_catalog.array_agg(attnum) AS attnums
          FROM storagelab_internal.protected_columns) k
 CROSS JOIN LATERAL storagelab_internal.table_rewrite_plans(k.relids, k.attnums,
         storagelab_internal.setting('column_waste.min_rows')::float8,
         storagelab_internal.setting('column_waste.min_distinct')::float8,
         storagelab_internal.setting('column_waste.dense_below')::float8) p
 WHERE round((p.row_bytes - p.planned_row_bytes)::numeric, 2) > 0;
COMMENT ON VIEW storagelab.table_rewrite_plan IS
  'one row per table a rewrite would shrink: the type changes column_waste allows on enough evidence, judged together (a change is kept only when the saving needs it), the new column order, row bytes now and planned, and the pg_relation_size difference of a fresh rewrite; from catalogs and statistics only';
COMMENT ON COLUMN storagelab.table_rewrite_plan.relation IS 'the table';
COMMENT ON COLUMN storagelab.table_rewrite_plan.current_row_bytes IS 'expected bytes per row on a page now (tuple header, null bitmap, alignment, MAXALIGN; without the 4-byte line pointer)';
COMMENT ON COLUMN storagelab.table_rewrite_plan.planned_row_bytes IS 'expected bytes per row with the changes, in column_order';
COMMENT ON COLUMN storagelab.table_rewrite_plan.estimated_saved_bytes IS 'estimated_bytes_now minus estimated_bytes_after: what rebuilding the table as planned saves, against a fresh rebuild as it is (bloat not counted)';
COMMENT ON COLUMN storagelab.table_rewrite_plan.estimated_saved_pretty IS 'estimated_saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.table_rewrite_plan.column_changes IS 'JSON array, one object per changed column: column_name, from and to (format_type), min and max (integer narrowings), evidence (exact or statistics); [] when only the order changes';
COMMENT ON COLUMN storagelab.table_rewrite_plan.column_order IS 'every live column, in the planned order';
COMMENT ON COLUMN storagelab.table_rewrite_plan.evidence IS 'exact when every column comes from column_profile(), else statistics';
COMMENT ON COLUMN storagelab.table_rewrite_plan.current_order IS 'live columns in their current order';
COMMENT ON COLUMN storagelab.table_rewrite_plan.estimated_rows IS 'rows the estimate is for (pg_class.reltuples, or the rows column_profile() saw)';
COMMENT ON COLUMN storagelab.table_rewrite_plan.estimated_bytes_now IS 'heap bytes the rows take as they are, freshly written (whole pages)';
COMMENT ON COLUMN storagelab.table_rewrite_plan.estimated_bytes_after IS 'heap bytes after the planned rewrite, freshly written';

GRANT SELECT ON storagelab.table_rewrite_plan TO PUBLIC;

-- int_overflow: the growth is fitted by int_overflow_snapshot() into
-- storagelab_internal.int_overflow_growth, which the view joins, instead of
-- at every query over the history; fitted here from the history the
-- database recorded.
CREATE TABLE storagelab_internal.int_overflow_growth (
  schema_name  name NOT NULL,
  table_name   name NOT NULL,
  column_name  name NOT NULL,
  per_second   float8 NOT NULL,
  snapshots    int4 NOT NULL,
  fitted_at    timestamptz NOT NULL,
  PRIMARY KEY (schema_name, table_name, column_name)
);
COMMENT ON TABLE storagelab_internal.int_overflow_growth IS
  'per int_overflow column, the least-squares growth of its recorded values over int_overflow.growth_window, as of the last snapshot; derived from storagelab.int_overflow_history by int_overflow_growth_refit() (not dumped: a restore refits at the next snapshot)';

-- Refit every column's growth from the history in the window.
-- SECURITY DEFINER, the one exception to the conventions: members of
-- pg_monitor record snapshots, and may write the history but never read
-- its values (int_overflow_snapshot()'s grants); the fit must read them.
-- It takes no argument and runs no SQL of the caller: it replaces derived
-- rows by what the history determines, which anyone may trigger; it
-- returns only how many columns it fitted.
CREATE FUNCTION storagelab_internal.int_overflow_growth_refit()
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fitted integer;
BEGIN
  DELETE FROM storagelab_internal.int_overflow_growth;
  INSERT INTO storagelab_internal.int_overflow_growth
  SELECT h.schema_name, h.table_name, h.column_name,
         -- date_part() gives float8 directly (extract() goes through numeric)
         regr_slope(h.value::float8, date_part('epoch', h.taken_at)), count(*), now()
    FROM storagelab.int_overflow_history h
   WHERE h.taken_at >= now() - storagelab_internal.setting('int_overflow.growth_window')::interval
   GROUP BY h.schema_name, h.table_name, h.column_name
  -- two snapshots at least, at two different times
  HAVING count(*) >= 2 AND regr_slope(h.value::float8, date_part('epoch', h.taken_at)) IS NOT NULL;
  GET DIAGNOSTICS fitted = ROW_COUNT;
  RETURN fitted;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.int_overflow_growth_refit() IS
  'replaces storagelab_internal.int_overflow_growth with the least-squares growth of every column over int_overflow.growth_window of the history; returns the number of columns fitted';

CREATE OR REPLACE VIEW storagelab.int_overflow AS
WITH
-- MATERIALIZED: the settings are read once per query, not once per row (an
-- inlined CTE would put the setting() calls into every row's expressions)
cfg AS MATERIALIZED (
  SELECT storagelab_internal.setting('int_overflow.warning_pct')::numeric AS warning_pct,
         storagelab_internal.setting('int_overflow.critical_pct')::numeric AS critical_pct,
         storagelab_internal.setting('int_overflow.warning_within')::interval AS warning_within,
         storagelab_internal.setting('int_overflow.critical_within')::interval AS critical_within
),
-- Growth per second of each column's recorded values, as fitted at the
-- last snapshot (extension/09_int_overflow_growth.sql): one row per column,
-- no history read here.
growth AS (
  SELECT g.schema_name, g.table_name, g.column_name, g.per_second
    FROM storagelab_internal.int_overflow_growth g
)
-- The measurements are not put in a CTE (a volatile function would make it
-- materialized: one more copy of every row); the projection is a LATERAL
-- subquery, which the planner pulls up into the row's expressions.
SELECT m.row_rel::pg_catalog.regclass AS relation,
       m.attname AS column_name,
       m.used AS used_pct,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.cycles THEN 'ok'
            WHEN m.used >= cfg.critical_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.critical_within THEN 'critical'
            WHEN m.used >= cfg.warning_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.warning_within THEN 'warning'
            ELSE 'ok' END AS severity,
       p.overflow_at_ AS overflow_at,
       m.cur AS current_value,
       m.lim AS limit_value,
       m.left_ AS values_left,
       round((g.per_second * 86400)::numeric, 3) AS growth_per_day,
       m.source,
       m.seqid::pg_catalog.regclass AS sequence,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.exact THEN 'exact'
            WHEN m.source = 'statistics' THEN 'statistics'
            ELSE 'estimate' END AS evidence,
       CASE WHEN m.cur IS NOT NULL AND m.cycles THEN 'cycles' ELSE m.status END AS status,
       pg_catalog.format_type(m.atttypid, NULL) AS column_type,
       m.min_value,
       m.max_value,
       m.seq_increment AS increment,
       coalesce(m.cycles, false) AS cycling,
       m.referencing_columns
  FROM cfg
 CROSS JOIN storagelab_internal.int_overflow_measurements() m
  LEFT JOIN growth g
    ON m.cur IS NOT NULL
   AND g.schema_name = m.nspname AND g.table_name = m.relname AND g.column_name = m.attname
 CROSS JOIN LATERAL (
   SELECT CASE WHEN g.per_second IS NULL OR m.cur IS NULL OR m.cycles THEN NULL
               WHEN NOT (g.per_second * CASE WHEN m.lim >= m.cur THEN 1 ELSE -1 END > 0) THEN NULL
               WHEN abs(m.lim - m.cur) / abs(g.per_second)::numeric > 3153600000 THEN 'infinity'::timestamptz
               ELSE pg_catalog.now()
                    + pg_catalog.make_interval(secs => (abs(m.lim - m.cur) / abs(g.per_second)::numeric)::float8)
          END AS overflow_at_
 ) p;

CREATE OR REPLACE FUNCTION storagelab.int_overflow_snapshot()
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  recorded integer;
BEGIN
  PERFORM storagelab_internal.require_primary('int_overflow_snapshot()');
  IF NOT (has_table_privilege('storagelab.int_overflow_history', 'INSERT')
          AND has_table_privilege('storagelab.int_overflow_history', 'DELETE')) THEN
    RAISE EXCEPTION 'permission denied to record int_overflow snapshots'
      USING ERRCODE = 'insufficient_privilege',
            DETAIL = 'int_overflow_snapshot() writes into storagelab.int_overflow_history.',
            HINT = 'Grant pg_monitor to the calling role, or INSERT and DELETE on storagelab.int_overflow_history.';
  END IF;
  -- A second snapshot in one transaction (same now()) replaces the first.
  DELETE FROM storagelab.int_overflow_history WHERE taken_at = now();
  INSERT INTO storagelab.int_overflow_history
         (taken_at, schema_name, table_name, column_name,
          sequence_schema, sequence_name, value, evidence)
  -- The view's rows without its projection: current_value is cur, and
  -- evidence as the view computes it where cur is known.
  SELECT now(), m.nspname, m.relname, m.attname, sn.nspname, sc.relname,
         m.cur, CASE WHEN m.exact THEN 'exact'
                     WHEN m.source = 'statistics' THEN 'statistics'
                     ELSE 'estimate' END
    FROM storagelab_internal.int_overflow_measurements() m
    LEFT JOIN pg_class sc ON sc.oid = m.seqid
    LEFT JOIN pg_namespace sn ON sn.oid = sc.relnamespace
   WHERE m.cur IS NOT NULL;
  GET DIAGNOSTICS recorded = ROW_COUNT;

  DELETE FROM storagelab.int_overflow_history
   WHERE taken_at < now() - storagelab_internal.setting('int_overflow.history_retention')::interval;

  -- the view reads the growth fitted here, not the history
  PERFORM storagelab_internal.int_overflow_growth_refit();

  RETURN recorded;
END
$$;
SELECT storagelab_internal.int_overflow_growth_refit();

-- findings and report(): every problem in one typed view, and a text report
-- (all new objects).
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('findings.min_saved_size', '1MB',
   'findings: column_width and alignment findings saving less than this are not listed'),
  ('findings.saved_warning_size', '1GB',
   'findings: column_width and alignment findings are warnings from this saving on'),
  ('findings.visibility_min_size', '8MB',
   'findings: a visibility finding needs at least this much of a table not all-visible'),
  ('findings.all_visible_warning_pct', '50',
   'findings: ... and fewer than this percentage of its pages all-visible'),
  ('findings.freeze_critical_pct', '80',
   'findings: critical when age(relfrozenxid) reaches this % of autovacuum_freeze_max_age'),
  ('findings.toast_min_size', '1MB',
   'findings: bytea columns are sampled only where the TOAST table is at least this large'),
  ('findings.toast_max_columns', '20',
   'findings: at most this many bytea columns sampled per query, largest TOAST tables first'),
  ('findings.toast_sample_rows', '200',
   'findings: rows sampled per bytea column');

-- int_overflow: the view's warning and critical rows.
CREATE VIEW storagelab_internal.findings_int_overflow AS
SELECT 'int_overflow'::text AS category, o.severity, o.relation, o.column_name,
       'used_pct'::text AS metric, round(o.used_pct, 1) AS value, 'percent'::text AS unit,
       'integer column is running out of values: migrate it to bigint'::text AS message,
       NULL::int8 AS estimated_saved_bytes, o.overflow_at,
       pg_catalog.format('SELECT storagelab.bigint_migration_script(%L, %L, ''online'');',
                         pg_catalog.format('%I.%I', n.nspname, c.relname), o.column_name) AS fix,
       o.evidence,
       NULL::int8 AS sample_rows
  FROM storagelab.int_overflow o
  JOIN pg_catalog.pg_class c ON c.oid = o.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE o.severity IN ('warning', 'critical');
COMMENT ON VIEW storagelab_internal.findings_int_overflow IS
  'storagelab.findings rows of category int_overflow';

-- The two sources behind pg_stat_scan_tables, which refuse a caller without
-- its privileges (42501): called only for those who have them, so that the
-- others get no rows instead of an error.
CREATE FUNCTION storagelab_internal.findings_visibility_map(relation regclass,
  OUT pages int8, OUT all_visible_pages int8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF pg_has_role('pg_stat_scan_tables', 'USAGE') THEN
    SELECT v.pages, v.all_visible_pages INTO pages, all_visible_pages
      FROM storagelab_internal.visibility_map_count(relation) v;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_visibility_map(regclass) IS
  'visibility_map_count() for storagelab.findings: NULLs when the caller lacks pg_stat_scan_tables or the table is locked';

CREATE FUNCTION storagelab_internal.findings_toast_sample(relation regclass, column_name name,
  sample_rows integer, OUT rows_scanned int8, OUT sampled boolean, OUT large_values int8,
  OUT large_incompressible int8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- a table locked by another session is skipped, not waited for; one
  -- whose policies hide rows from the caller too (toast_census refuses it)
  IF pg_has_role('pg_stat_scan_tables', 'USAGE')
     AND NOT row_security_active(relation)
     AND storagelab_internal.toast_lock_nowait(relation) = 'ok' THEN
    SELECT c.rows_scanned, c.sampled, c.large_values, c.large_incompressible
      INTO rows_scanned, sampled, large_values, large_incompressible
      FROM storagelab_internal.toast_census(relation, column_name, sample_rows) c;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_toast_sample(regclass, name, integer) IS
  'toast_census() counts for storagelab.findings: NULLs when the caller lacks pg_stat_scan_tables, the table is locked or row-level security is active for the caller';

-- visibility: the visibility map of the tables whose statistics show pages
-- that are not all-visible (or that were loaded and never analyzed), and
-- the freeze age of every table.
CREATE VIEW storagelab_internal.findings_visibility AS
-- MATERIALIZED: the settings once per query, not once per table
WITH cfg AS MATERIALIZED (
  SELECT pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.visibility_min_size'))
           / current_setting('block_size')::int8 AS min_pages,
         storagelab_internal.setting('findings.all_visible_warning_pct')::numeric AS warning_pct,
         current_setting('autovacuum_freeze_max_age')::int8
           * storagelab_internal.setting('findings.freeze_critical_pct')::numeric / 100 AS freeze_age
), t AS (
  SELECT c.oid, pg_catalog.format('%I.%I', n.nspname, c.relname) AS name,
         CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS xid_age,
         cfg.*
    FROM cfg, pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
     AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
     -- the visibility map is read for members of pg_stat_scan_tables, of
     -- the tables the visibility view lists
     AND pg_catalog.pg_has_role('pg_stat_scan_tables', 'USAGE')
     AND (pg_catalog.has_table_privilege(c.oid, 'SELECT')
          OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE'))
     AND (c.relpages - c.relallvisible >= cfg.min_pages
          OR (c.reltuples < 0 AND pg_catalog.pg_stat_get_ins_since_vacuum(c.oid) > 0)
          OR (c.relfrozenxid <> '0' AND pg_catalog.age(c.relfrozenxid) >= cfg.freeze_age))
)
SELECT 'visibility'::text AS category,
       CASE WHEN f.freeze THEN 'critical' ELSE 'warning' END AS severity,
       t.oid::pg_catalog.regclass AS relation, NULL::name AS column_name,
       CASE WHEN f.freeze THEN 'relfrozenxid_age' ELSE 'hint_debt_pages' END AS metric,
       CASE WHEN f.freeze THEN t.xid_age ELSE vm.pages - vm.all_visible_pages END::numeric AS value,
       CASE WHEN f.freeze THEN 'transactions' ELSE 'pages' END AS unit,
       CASE WHEN f.freeze THEN 'table nears its anti-wraparound vacuum: freeze it at a quiet time'
            ELSE 'most pages not all-visible: reads set hint bits, index-only scans visit the heap'
            END AS message,
       NULL::int8 AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       pg_catalog.format('VACUUM (FREEZE, ANALYZE) %s;', t.name) AS fix,
       'exact'::text AS evidence, NULL::int8 AS sample_rows
  FROM t
 CROSS JOIN LATERAL storagelab_internal.findings_visibility_map(t.oid::pg_catalog.regclass) vm
 CROSS JOIN LATERAL (SELECT t.xid_age >= t.freeze_age AS freeze) f
 WHERE f.freeze
    OR (vm.pages - vm.all_visible_pages >= t.min_pages
        AND 100.0 * vm.all_visible_pages < t.warning_pct * vm.pages);
COMMENT ON VIEW storagelab_internal.findings_visibility IS
  'storagelab.findings rows of category visibility';

-- toast: a sample of the bytea columns with the largest TOAST tables.
-- Cost bound: findings.toast_max_columns columns, findings.toast_sample_rows
-- rows and value prefixes each; a locked table is skipped, not waited for.
CREATE VIEW storagelab_internal.findings_toast AS
WITH cfg AS MATERIALIZED (
  SELECT pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.toast_min_size')) AS min_bytes,
         storagelab_internal.setting('findings.toast_max_columns')::int AS max_columns,
         storagelab_internal.setting('findings.toast_sample_rows')::int AS sample_rows
), bytea_col AS MATERIALIZED (
  -- the bytea columns first (one pass over pg_attribute), so that only
  -- their tables' TOAST tables are sized
  SELECT c.oid, c.reltoastrelid, a.attname, pg_catalog.format('%I.%I', n.nspname, c.relname) AS name
    FROM pg_catalog.pg_attribute a
    JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE a.atttypid IN (  -- bytea, and domains over it (over those too)
           WITH RECURSIVE bt(oid) AS (
             SELECT 'pg_catalog.bytea'::pg_catalog.regtype::pg_catalog.oid
             UNION
             SELECT ty.oid FROM pg_catalog.pg_type ty JOIN bt ON ty.typbasetype = bt.oid
              WHERE ty.typtype = 'd'
           ) SELECT bt.oid FROM bt)
     AND a.attnum > 0 AND NOT a.attisdropped AND a.attstorage IN ('x', 'm')
     AND c.relkind = 'r' AND c.reltoastrelid <> 0 AND c.relpersistence <> 't'
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
     AND pg_catalog.pg_has_role('pg_stat_scan_tables', 'USAGE')
     AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
), col AS (
  SELECT b.oid, b.attname, b.name, cfg.sample_rows
    FROM cfg, bytea_col b
   WHERE pg_catalog.pg_relation_size(b.reltoastrelid) >= cfg.min_bytes
   ORDER BY pg_catalog.pg_relation_size(b.reltoastrelid) DESC
   LIMIT (SELECT max_columns FROM cfg)
)
SELECT 'toast'::text AS category, 'warning'::text AS severity,
       col.oid::pg_catalog.regclass AS relation, col.attname AS column_name,
       'large_incompressible_pct'::text AS metric,
       round(100.0 * p.large_incompressible / p.large_values, 1) AS value, 'percent'::text AS unit,
       'large values are compressed already: store them EXTERNAL, skip compressing'::text AS message,
       NULL::int8 AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       pg_catalog.format('SELECT storagelab.storage_migration_script(%L, %L, ''external'');',
                         col.name, col.attname) AS fix,
       CASE WHEN p.sampled THEN 'sampled' ELSE 'exact' END AS evidence,
       p.rows_scanned AS sample_rows
  FROM col
 CROSS JOIN LATERAL storagelab_internal.findings_toast_sample(col.oid::pg_catalog.regclass,
                                                           col.attname, col.sample_rows) p
 WHERE p.large_values > 0 AND p.large_incompressible >= 0.8 * p.large_values;
COMMENT ON VIEW storagelab_internal.findings_toast IS
  'storagelab.findings rows of category toast';

-- column_width and alignment: the table_rewrite_plan rows worth a rewrite.
CREATE VIEW storagelab_internal.findings_layout AS
SELECT CASE WHEN p.column_changes = '[]'::jsonb THEN 'alignment' ELSE 'column_width' END AS category,
       CASE WHEN p.estimated_saved_bytes
                 >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.saved_warning_size'))
            THEN 'warning' ELSE 'info' END AS severity,
       p.relation, NULL::name AS column_name,
       'saved_bytes'::text AS metric, p.estimated_saved_bytes::numeric AS value,
       'bytes'::text AS unit,
       CASE WHEN p.column_changes = '[]'::jsonb
            THEN 'column order wastes alignment padding: rebuild in the planned order'
            ELSE 'narrower column types and a new column order shrink every row' END AS message,
       p.estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       pg_catalog.format('SELECT * FROM storagelab.table_rewrite_plan WHERE relation = %L::regclass;',
                         pg_catalog.format('%I.%I', n.nspname, c.relname)) AS fix,
       p.evidence, NULL::int8 AS sample_rows
  FROM storagelab.table_rewrite_plan p
  JOIN pg_catalog.pg_class c ON c.oid = p.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE p.estimated_saved_bytes >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.min_saved_size'));
COMMENT ON VIEW storagelab_internal.findings_layout IS
  'storagelab.findings rows of categories column_width and alignment';

CREATE VIEW storagelab.findings AS
SELECT f.category, f.severity, f.relation, f.column_name, f.metric, f.value, f.unit, f.message,
       f.estimated_saved_bytes, pg_catalog.pg_size_pretty(f.estimated_saved_bytes) AS estimated_saved_pretty,
       f.overflow_at, f.fix, f.evidence, f.sample_rows
  FROM (SELECT * FROM storagelab_internal.findings_int_overflow
        UNION ALL SELECT * FROM storagelab_internal.findings_visibility
        UNION ALL SELECT * FROM storagelab_internal.findings_toast
        UNION ALL SELECT * FROM storagelab_internal.findings_layout) f
 ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
          f.overflow_at NULLS LAST, f.estimated_saved_bytes DESC NULLS LAST, f.value DESC,
          f.relation::text, f.column_name;
COMMENT ON VIEW storagelab.findings IS
  'one row per problem storagelab finds (int_overflow, visibility, toast, column_width, alignment), most urgent first, each with the SQL to run next; from catalogs, statistics, the visibility map and sampled TOAST only (the last two need pg_stat_scan_tables)';
COMMENT ON COLUMN storagelab.findings.category IS 'int_overflow, visibility, toast, column_width or alignment';
COMMENT ON COLUMN storagelab.findings.severity IS 'critical, warning or info (settings int_overflow.* and findings.*)';
COMMENT ON COLUMN storagelab.findings.relation IS 'the table';
COMMENT ON COLUMN storagelab.findings.column_name IS 'the column; NULL for a table-level finding';
COMMENT ON COLUMN storagelab.findings.metric IS 'stable key of what value measures: used_pct, hint_debt_pages, relfrozenxid_age, large_incompressible_pct, saved_bytes';
COMMENT ON COLUMN storagelab.findings.value IS 'the measured number, in unit';
COMMENT ON COLUMN storagelab.findings.unit IS 'percent, pages, transactions or bytes';
COMMENT ON COLUMN storagelab.findings.message IS 'what is wrong and what to do, at most 100 characters, no number that is not in a typed column';
COMMENT ON COLUMN storagelab.findings.estimated_saved_bytes IS 'bytes the fix saves (column_width, alignment)';
COMMENT ON COLUMN storagelab.findings.estimated_saved_pretty IS 'estimated_saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.findings.overflow_at IS 'projected overflow time (int_overflow, from the recorded growth)';
COMMENT ON COLUMN storagelab.findings.fix IS 'the SQL to run next: a migration script generator, VACUUM, or the plan to read';
COMMENT ON COLUMN storagelab.findings.evidence IS 'exact, statistics or sampled';
COMMENT ON COLUMN storagelab.findings.sample_rows IS 'rows a sampled finding rests on';
GRANT SELECT ON storagelab.findings TO PUBLIC;

-- report(): the findings as lines of text for psql, at most 100 columns
-- except a fix, which is printed whole (it is SQL to copy).
CREATE FUNCTION storagelab.report()
RETURNS SETOF text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  f        record;
  saved    int8;
  nearest  record;
  shown    text := '';
  db       text := pg_size_pretty(pg_database_size(current_database()));
  fs       storagelab.findings[];
BEGIN
  -- the view once (it samples), in its order
  SELECT array_agg(v) INTO fs FROM storagelab.findings v;
  IF fs IS NULL THEN
    RETURN NEXT left(format('storagelab: nothing found in database %s (%s)',
                            current_database(), db), 100);
    RETURN;
  END IF;

  SELECT sum(r.estimated_saved_bytes) INTO saved FROM unnest(fs) r;
  SELECT format('%s.%s', r.relation, r.column_name) AS what, r.value, r.overflow_at
    INTO nearest FROM unnest(fs) r
   WHERE r.category = 'int_overflow'
   ORDER BY r.overflow_at NULLS LAST, r.value DESC LIMIT 1;
  RETURN NEXT left(format('storagelab: %s database, %s to save, %s', db,
                          pg_size_pretty(coalesce(saved, 0)),
                          CASE WHEN nearest IS NULL THEN 'no integer column near its limit'
                               ELSE format('nearest overflow %s (%s %%%s)', nearest.what,
                                           nearest.value,
                                           CASE WHEN nearest.overflow_at IS NOT NULL
                                                 AND nearest.overflow_at < 'infinity'
                                                THEN ', ' || to_char(nearest.overflow_at, 'YYYY-MM-DD')
                                                ELSE '' END) END), 100);
  FOR f IN
    SELECT r.*, count(*) OVER (PARTITION BY r.severity) AS n
      FROM unnest(fs) WITH ORDINALITY r
     ORDER BY r.ordinality
  LOOP
    IF f.severity <> shown THEN
      RETURN NEXT format('%s (%s)', f.severity, f.n);
      shown := f.severity;
    END IF;
    RETURN NEXT left(format('  %s %s%s: %s %s', f.category, f.relation,
                            coalesce('.' || quote_ident(f.column_name), ''), f.metric,
                            CASE f.unit WHEN 'percent' THEN f.value || ' %'
                                        WHEN 'bytes' THEN pg_size_pretty(f.value)
                                        ELSE f.value || ' ' || f.unit END), 100);
    RETURN NEXT left('    ' || f.message, 100);
    RETURN NEXT '    ' || f.fix;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.report() IS
  'storagelab.findings as text for psql: a summary line (database size, what could be saved, the nearest overflow), then the findings by severity, each with its message and fix; one line when nothing was found';

-- ---------------------------------------------------------------------------
-- INT -> BIGINT generator, restructured: one model built once, one function
-- per kind of object and per script section or phase, internals moved to
-- storagelab_internal, one lock-retry helper for every generated script
-- (also the storage script: storage_migration_script), the backfill an
-- installed procedure, index copies that keep every option.  The 1.0
-- generator is dropped and the 1.1 one created; the settings and the rows of
-- storagelab.bigint_migration_progress are kept.
DROP FUNCTION storagelab.bigint_migration_plan(text);
DROP FUNCTION storagelab.bigint_migration_script(regclass, name, text);
DROP FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text);
DROP FUNCTION storagelab.bigint_migration_online_script(regclass[], name[]);
DROP FUNCTION storagelab.bigint_migration_retry_block(text[], int);
DROP FUNCTION storagelab.bigint_migration_objects(regclass, name);
DROP FUNCTION storagelab.bigint_migration_group_objects(regclass[], name[]);
DROP FUNCTION storagelab.bigint_migration_relation_extras(oid);
DROP FUNCTION storagelab.bigint_migration_acl_sql(text, text, aclitem[], oid);
DROP FUNCTION storagelab.bigint_migration_dollar_quote(text);
DROP FUNCTION storagelab.bigint_migration_comment_text(text);
DROP FUNCTION storagelab.bigint_migration_not_null_name(oid, int2);
DROP FUNCTION storagelab.bigint_migration_qname(oid);
DROP TYPE storagelab.bigint_migration_object;
UPDATE storagelab_internal.setting_defaults
   SET description = 'retries after a script step first hit lock_timeout or a deadlock (pause +0.1 s each, up to 2 s)'
 WHERE name = 'scripts.lock_retries';
-- progress rows: written only by roles that may UPDATE the row's table
ALTER TABLE storagelab.bigint_migration_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON storagelab.bigint_migration_progress FOR SELECT USING (true);
CREATE POLICY table_writers_write ON storagelab.bigint_migration_progress FOR ALL
  USING (coalesce(pg_catalog.has_table_privilege(pg_catalog.to_regclass(relation), 'UPDATE'), false))
  WITH CHECK (coalesce(pg_catalog.has_table_privilege(pg_catalog.to_regclass(relation), 'UPDATE'), false));
COMMENT ON POLICY read_all ON storagelab.bigint_migration_progress IS
  'every role may read the progress of every migration';
COMMENT ON POLICY table_writers_write ON storagelab.bigint_migration_progress IS
  'a progress row is written only by roles that may UPDATE its table (who can run the backfill) and superusers';

-- The 1.1 generator, copied from the install parts by
--   scripts/upgrade-section.sh bigint extension/storagelab--1.0--1.1.sql \
--     extension/01_scripts.sql extension/20_bigint_common.sql extension/21_bigint_model.sql \
--     extension/22_bigint_objects.sql extension/23_bigint_blocking.sql extension/24_bigint_online_model.sql \
--     extension/25_bigint_online.sql extension/26_bigint_backfill.sql extension/27_bigint_script.sql \
--     extension/28_bigint_hazards.sql extension/40_toast.sql:storagelab.storage_migration_script
-- (run it again after changing any of them; add new generator files to it).
-- BEGIN generated section bigint
-- from extension/01_scripts.sql
-- storagelab install script, part 01: helpers of every generated migration
-- script (INT -> BIGINT, storage): dollar quoting and the one lock-retry
-- loop they all use.


-- A dollar-quoted string whose tag does not occur in body.
CREATE FUNCTION storagelab_internal.dollar_quote(body text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  tag text := '$storagelab$';
  i int := 0;
BEGIN
  WHILE position(tag IN body) > 0 LOOP
    i := i + 1;
    tag := format('$storagelab%s$', i);
  END LOOP;
  RETURN tag || body || tag;
END
$$;
COMMENT ON FUNCTION storagelab_internal.dollar_quote(text) IS
  'dollar-quotes a DO block body with a tag that does not occur in it';

-- The retry loop of generated scripts, as a PL/pgSQL block statement: body
-- runs in a subtransaction; when it fails on lock_timeout or a deadlock, it
-- is rolled back and run again, up to retries more times (retries = 0: one
-- attempt), with a pause of 0.1 s times the attempt number, at most 2 s.
-- other_handlers: further "WHEN ... THEN ..." clauses, checked first.
-- give_up_hint: the hint of the error raised after the last attempt.
CREATE FUNCTION storagelab_internal.retry_loop(body text, retries int, give_up_hint text,
                                               other_handlers text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT E'  DECLARE\n    attempt int := 0;\n  BEGIN\n    LOOP\n      BEGIN\n'
      || $1
      || E'        EXIT;\n'
      || E'      EXCEPTION\n'
      || coalesce($4, '')
      || E'        WHEN lock_not_available OR deadlock_detected THEN\n'
      || E'          attempt := attempt + 1;\n'
      || format(E'          IF attempt > %s THEN\n', greatest($2, 0))
      || E'            RAISE EXCEPTION ''gave up after % lock timeouts or deadlocks'', attempt\n'
      || format(E'              USING ERRCODE = ''lock_not_available'', DETAIL = SQLERRM, HINT = %L;\n', $3)
      || E'          END IF;\n'
      || E'          RAISE NOTICE ''lock attempt %: % (lock_timeout %), retrying'', attempt, SQLERRM, current_setting(''lock_timeout'');\n'
      || E'          PERFORM pg_catalog.pg_sleep(least(0.1 * attempt, 2));\n'
      || E'      END;\n    END LOOP;\n  END;\n'
$$;
COMMENT ON FUNCTION storagelab_internal.retry_loop(text, int, text, text) IS
  'PL/pgSQL block that runs body and retries it on lock_timeout or deadlock: retries more attempts after the first, back-off 0.1 s per attempt up to 2 s';

-- A DO statement running stmts in one subtransaction with retry_loop.
CREATE FUNCTION storagelab_internal.retry_block(stmts text[], retries int,
                                                give_up_hint text DEFAULT 'Run this phase again later; it is safe to re-run.')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(
    E'\nBEGIN\n'
    || storagelab_internal.retry_loop(
         (SELECT string_agg(format(E'        EXECUTE %L;\n', regexp_replace(s, ';\s*$', '')), '' ORDER BY n)
            FROM unnest($1) WITH ORDINALITY AS u(s, n)),
         $2, $3)
    || E'END\n') || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.retry_block(text[], int, text) IS
  'a DO statement running statements in one subtransaction, retried on lock_timeout or deadlock (storagelab_internal.retry_loop)';

-- from extension/20_bigint_common.sql
-- storagelab install script, part 20: INT -> BIGINT migration, what every
-- part of the generator shares: the row type of the model
-- (storagelab.bigint_migration_object) and small text helpers.
--
-- The generator, by file:
--   20_bigint_common.sql    the model's row type, helpers
--   20_bigint_settings.sql  the settings of the generator
--   21_bigint_model.sql     the model: component, dependency walk, depths
--                           (storagelab.bigint_migration_objects and _group_objects)
--   22_bigint_objects.sql   one function per kind of object in the model
--   23_bigint_blocking.sql  the blocking script, one function per section
--   24_bigint_online_model.sql  what the online phases need, derived once
--   25_bigint_online.sql    the online script, one function per phase
--   26_bigint_backfill.sql  the backfill procedure the online script calls
--   26_bigint_progress.sql  storagelab.bigint_migration_progress
--   27_bigint_script.sql    storagelab.bigint_migration_script / _group_script
--                           and storagelab.bigint_migration_plan
--   28_bigint_hazards.sql   function hazards: functions the converted values
--                           reach with a narrower type (refuse, widen, accept)
--
-- Written in PL/pgSQL: the work is catalog queries plus PostgreSQL's own
-- deparsers (pg_get_viewdef, pg_get_triggerdef, pg_get_constraintdef,
-- pg_get_indexdef, pg_get_functiondef, pg_get_ruledef, pg_get_expr), all of
-- which are SQL-callable; C would add nothing but risk.


-- The public generator functions run as their caller (no SECURITY DEFINER)
-- and call the helpers in storagelab_internal: every role may use them.
GRANT USAGE ON SCHEMA storagelab_internal TO PUBLIC;

-- One row of the dependency model.
CREATE TYPE storagelab.bigint_migration_object AS (
  kind        text,       -- column, sequence, identity, foreign_key, index, constraint,
                          -- default, statistics, view, materialized_view, rule, trigger,
                          -- policy, function, generated_column, publication_table,
                          -- trigger_function, blocker, function_hazard, widened_function (part 28)
  identity    text,       -- human-readable name (pg_describe_object style)
  relation    regclass,   -- table or view the object belongs to (NULL for functions, publications)
  column_name name,       -- the column, for kind column / generated_column / sequence
  depth       int,        -- 0: component columns and objects rebuilt with them; n: re-created objects, n+1 depends on n
  lock        text,       -- lock the blocking plan takes on it
  handling    text,       -- what the script does with it
  drop_sql    text,       -- statement(s) that drop it (NULL: nothing to drop, or dropped with its parent)
  create_sql  text,       -- statement(s) that re-create it exactly as it was (kinds column and
                          -- generated_column: ALTER TABLE clauses, run in one ALTER TABLE per table)
  post_sql    text,       -- statements run after create_sql (generated_column: comment, privileges, statistics target)
  check_sql   text,       -- boolean SQL expression, true when the object is in its expected final state
  blocker     text,       -- why no correct script can be produced (kind blocker only)
  sqlstate    text,       -- SQLSTATE of the blocker
  hint        text,       -- what the DBA can do about the blocker
  classid     oid,        -- catalog of the object (pg_class, pg_trigger, ...)
  objid       oid,        -- its OID
  objsubid    int,        -- column number for columns
  definition  text,       -- the object as PostgreSQL prints it (indexes: pg_get_indexdef), for writers that build a changed copy
  hazard_target text,     -- function_hazard: the parameter, variable or return type; widened_function: its bigint signature
  hazard_caller text,     -- function_hazard: who hands the converted value over (trigger, function, view)
  hazard_fails  text      -- function_hazard: 'immediately' (no function matches) or 'past 2^31' (integer out of range)
);
COMMENT ON TYPE storagelab.bigint_migration_object IS
  'one row of storagelab.bigint_migration_objects(): a column of the foreign-key component or an object depending on it';

-- Helpers --------------------------------------------------------------------

CREATE FUNCTION storagelab_internal.bigint_migration_qname(rel oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('%I.%I', n.nspname, c.relname)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_qname(oid) IS
  'schema-qualified, quoted name of a relation, for generated scripts';

-- PostgreSQL version differences of the INT -> BIGINT generator, in one place.
--
-- PostgreSQL 18 stores NOT NULL as a constraint: a pg_constraint row with
-- contype 'n', its own name (default <table>_<column>_not_null) and an auto
-- pg_depend entry on its column.  For the generator that means:
--   * ALTER COLUMN TYPE keeps the table's own NOT NULL constraint and its
--     name (blocking mode), but re-creates the inherited copies of the
--     partitions (and inheritance children) under the parent's name: an
--     inherited constraint cannot be renamed, so a partition's NOT NULL
--     name follows its parent's after the migration;
--   * the online swap's SET NOT NULL on the new column creates a new
--     constraint (named after the column, with a digit appended while the old
--     column's still holds the name); the swap renames it to the old name
--     once the old column's is dropped (a rename recurses to the partitions).
-- Before PostgreSQL 18, NOT NULL is only pg_attribute.attnotnull: nothing to
-- name, re-create or check beyond it.
CREATE FUNCTION storagelab_internal.bigint_migration_not_null_name(rel oid, attnum int2)
RETURNS name
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.conname
    FROM pg_constraint c
   WHERE current_setting('server_version_num')::int >= 180000
     AND c.conrelid = $1 AND c.contype = 'n' AND c.conkey = ARRAY[$2]
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_not_null_name(oid, int2) IS
  'name of the NOT NULL constraint of a column (PostgreSQL 18 and later); NULL when the column has none or NOT NULL is not a constraint (PostgreSQL 17 and earlier)';

CREATE FUNCTION storagelab_internal.bigint_migration_comment_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$ SELECT translate($1, E'\n\r\t', '   ') $$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_comment_text(text) IS
  'text made safe for a "--" comment line of a generated script (no line breaks)';

CREATE FUNCTION storagelab_internal.bigint_migration_acl_sql(objtype text, objname text, acl aclitem[], owner oid)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- objtype is TABLE (views, materialized views) or ROUTINE.  A re-created
  -- object starts with whatever ALTER DEFAULT PRIVILEGES gives the role that
  -- runs the script: every grantee of a default privilege of that object type
  -- is revoked too.  A NULL acl (the built-in default) needs no statement
  -- unless such default privileges exist; then it is restored as acldefault().
  WITH k AS (SELECT CASE WHEN $1 = 'TABLE' THEN 'r' ELSE 'f' END::"char" AS t),
  defs AS (
    SELECT string_agg(DISTINCT ', ' || quote_ident(pg_get_userbyid(x.grantee)), '') AS extra
      FROM k, pg_default_acl d, aclexplode(d.defaclacl) x
     WHERE d.defaclobjtype = k.t AND x.grantee NOT IN (0, $4)
  )
  SELECT CASE WHEN $3 IS NULL AND NOT EXISTS (SELECT 1 FROM k, pg_default_acl d WHERE d.defaclobjtype = k.t) THEN '' ELSE
    format(E'REVOKE ALL ON %s %s FROM PUBLIC, %I%s;\n', $1, $2, pg_get_userbyid($4), coalesce(defs.extra, '')) ||
    coalesce((SELECT string_agg(format(E'GRANT %s ON %s %s TO %s%s;\n',
                      a.privilege_type, $1, $2,
                      CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                      CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), '' ORDER BY a.grantee, a.privilege_type)
                FROM aclexplode(coalesce($3, acldefault(k.t, $4))) a), '')
  END
    FROM k, defs
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_acl_sql(text, text, aclitem[], oid) IS
  'GRANT/REVOKE statements that give a re-created object exactly the privileges in acl';

CREATE FUNCTION storagelab_internal.bigint_migration_relation_extras(rel oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  -- owner, privileges, column privileges, comments of a re-created view or
  -- materialized view (relation-level and column-level)
  SELECT format(E'ALTER %s %s OWNER TO %I;\n',
                CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END,
                storagelab_internal.bigint_migration_qname(c.oid), pg_get_userbyid(c.relowner))
      || storagelab_internal.bigint_migration_acl_sql('TABLE', storagelab_internal.bigint_migration_qname(c.oid), c.relacl, c.relowner)
      || coalesce((SELECT string_agg(format(E'GRANT %s (%I) ON TABLE %s TO %s%s;\n',
                           x.privilege_type, a.attname, storagelab_internal.bigint_migration_qname(c.oid),
                           CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
                           CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), '' ORDER BY a.attnum, x.grantee, x.privilege_type)
                     FROM pg_attribute a, aclexplode(a.attacl) x
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL), '')
      || CASE WHEN (obj_description(c.oid, 'pg_class')) IS NULL THEN '' ELSE format(E'COMMENT ON %s %s IS %L;\n', CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END, storagelab_internal.bigint_migration_qname(c.oid), obj_description(c.oid, 'pg_class')) END
      || coalesce((SELECT string_agg(format(E'COMMENT ON COLUMN %s.%I IS %L;\n',
                           storagelab_internal.bigint_migration_qname(c.oid), a.attname, d.description), '' ORDER BY a.attnum)
                     FROM pg_attribute a
                     JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
    FROM pg_class c WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_relation_extras(oid) IS
  'owner, privileges and comments of a view or materialized view, as statements that restore them';

-- from extension/21_bigint_model.sql
-- storagelab install script, part 21: the INT -> BIGINT dependency model.
--
--   storagelab.bigint_migration_group_objects(relations[], column_names[])
--   storagelab.bigint_migration_objects(relation, column_name)
--       every column of the foreign-key component of the requested columns
--       and every object that depends on them, with how a migration handles
--       it: one row per object (storagelab.bigint_migration_object), built
--       by the functions of part 22, one per kind.  The script writers
--       (parts 23 to 25) read only these rows, built once per script.


-- The requested columns exist and are integer columns of tables.
CREATE FUNCTION storagelab_internal.bigint_migration_check_columns(relations regclass[], column_names name[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r record;
  i int;
BEGIN
  IF relations IS NULL OR column_names IS NULL OR cardinality(relations) = 0
     OR cardinality(relations) <> cardinality(column_names)
     OR array_position(relations, NULL) IS NOT NULL OR array_position(column_names, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'relations and column names must be non-empty arrays of the same length without NULLs'
      USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Call storagelab.bigint_migration_group_objects(ARRAY[''schema.table''::regclass], ARRAY[''column''::name]).';
  END IF;
  FOR i IN 1 .. cardinality(relations) LOOP
    SELECT c.relkind, a.attnum INTO r
      FROM pg_class c LEFT JOIN pg_attribute a
        ON a.attrelid = c.oid AND a.attname = column_names[i] AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.oid = relations[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'relation with OID % does not exist', relations[i]::oid USING ERRCODE = 'undefined_table';
    ELSIF r.relkind NOT IN ('r', 'p') THEN
      RAISE EXCEPTION '"%" is not a table', relations[i]
        USING ERRCODE = 'wrong_object_type',
              DETAIL = 'Only columns of tables and partitioned tables can be converted to bigint.';
    ELSIF r.attnum IS NULL THEN
      RAISE EXCEPTION 'column "%" of relation "%" does not exist', column_names[i], relations[i]
        USING ERRCODE = 'undefined_column';
    ELSIF NOT EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                       WHERE a.attrelid = relations[i] AND a.attnum = r.attnum
                         AND (a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
                              OR (t.typtype = 'd' AND t.typbasetype IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)))) THEN
      RAISE EXCEPTION 'column "%" of relation "%" is not an integer column', column_names[i], relations[i]
        USING ERRCODE = 'datatype_mismatch',
              DETAIL = format('Its type is %s.', (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                                                   WHERE attrelid = relations[i] AND attnum = r.attnum)),
              HINT = 'Only smallint and integer columns (and their foreign-key components) are converted to bigint.';
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_check_columns(regclass[], name[]) IS
  'raises the error for a requested column that is missing or is not an integer column of a table';

-- The component: closure of the start columns over foreign keys (both
-- directions, composite keys pair by position) and inheritance/partitioning
-- (a column and the same-named column of every parent and child).
CREATE FUNCTION storagelab_internal.bigint_migration_component(relations regclass[], column_names name[],
                                                               OUT crel oid[], OUT catt int2[])
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
  WITH RECURSIVE edges(r1, a1, r2, a2) AS (
    SELECT c.conrelid, k.a1, c.confrelid, k.a2
      FROM pg_constraint c, unnest(c.conkey, c.confkey) AS k(a1, a2)
     WHERE c.contype = 'f'
    UNION ALL
    SELECT i.inhrelid, ca.attnum, i.inhparent, pa.attnum
      FROM pg_inherits i
      JOIN pg_attribute ca ON ca.attrelid = i.inhrelid AND ca.attnum > 0 AND NOT ca.attisdropped
      JOIN pg_attribute pa ON pa.attrelid = i.inhparent AND pa.attname = ca.attname AND NOT pa.attisdropped
  ), und AS (
    SELECT r1, a1, r2, a2 FROM edges UNION SELECT r2, a2, r1, a1 FROM edges
  ), intcols AS (
    -- only integer columns (and domains over them, reported as blockers)
    -- take part: a composite key's text column pairs are left alone
    SELECT a.attrelid, a.attnum
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attnum > 0 AND NOT a.attisdropped
       AND (a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
            OR (t.typtype = 'd' AND t.typbasetype IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)))
  ), comp(relid, attnum) AS (
    SELECT s.rel::oid, a.attnum
      FROM unnest(relations, column_names) AS s(rel, col)
      JOIN pg_attribute a ON a.attrelid = s.rel AND a.attname = s.col
    UNION
    SELECT u.r2, u.a2 FROM comp JOIN und u ON u.r1 = comp.relid AND u.a1 = comp.attnum
     WHERE EXISTS (SELECT 1 FROM intcols ic WHERE ic.attrelid = u.r2 AND ic.attnum = u.a2)
  )
  SELECT array_agg(relid ORDER BY relid, attnum), array_agg(attnum ORDER BY relid, attnum) FROM comp
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_component(regclass[], name[]) IS
  'the foreign-key and inheritance component of the given columns, as parallel arrays of relation OIDs and column numbers sorted by both';

-- The dependency walk: objects depending on the component's columns (the
-- level-0 frontier), then on every object that has to be dropped (views,
-- functions, generated columns), level by level.  One function per catalog
-- of the dependent object (part 22) says what it is and how it is handled.
-- prior: the rows found so far (columns, sequences, foreign keys, ...);
-- returns them with the walk's rows appended, and the "child>parent" links
-- between re-created objects that order them (bigint_migration_depths).
CREATE FUNCTION storagelab_internal.bigint_migration_walk(crel oid[], catt int2[], prior storagelab.bigint_migration_object[],
                                                          OUT res storagelab.bigint_migration_object[], OUT links text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o      storagelab.bigint_migration_object;
  r      record;
  dep    record;
  i      int;
  seen   text[];      -- classid:objid:subid of every object already in res
  work   text[];      -- classid:objid:subid of dropped objects whose dependents are still to find
  cur    text;
  wclass oid; wobj oid; wsub int;
  from_component boolean;
  auto   boolean;
  guard  int := 0;
BEGIN
  res := prior;
  links := '{}';
  work := ARRAY(SELECT format('%s:%s:%s', 'pg_class'::regclass::oid, x.r, x.a) FROM unnest(crel, catt) AS x(r, a));
  seen := work || ARRAY(SELECT format('%s:%s:0', p.classid, p.objid) FROM unnest(prior) p WHERE p.kind = 'foreign_key');
  WHILE cardinality(work) > 0 LOOP
    guard := guard + 1;
    IF guard > 10000 THEN
      RAISE EXCEPTION 'dependency walk did not terminate' USING ERRCODE = 'program_limit_exceeded';
    END IF;
    cur := work[1];
    work := work[2:];
    wclass := split_part(cur, ':', 1)::oid; wobj := split_part(cur, ':', 2)::oid; wsub := split_part(cur, ':', 3)::int;
    from_component := wclass = 'pg_class'::regclass AND wsub > 0
                      AND EXISTS (SELECT 1 FROM unnest(crel, catt) AS x(relid, attnum) WHERE x.relid = wobj AND x.attnum = wsub);

    FOR r IN
      SELECT DISTINCT d.classid, d.objid, d.deptype,
             CASE WHEN d.classid = 'pg_class'::regclass THEN d.objsubid ELSE 0 END AS objsubid
        FROM pg_depend d
       WHERE d.deptype IN ('n', 'a', 'i')
         AND (   (d.refclassid = wclass AND d.refobjid = wobj AND (wsub = 0 OR d.refobjsubid = wsub))
              OR (wclass = 'pg_class'::regclass AND wsub = 0 AND d.refclassid = 'pg_type'::regclass
                  AND d.refobjid IN (SELECT reltype FROM pg_class WHERE oid = wobj
                                     UNION SELECT t.typarray FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = wobj)))
       ORDER BY 1, 2
    LOOP
      CONTINUE WHEN r.classid = 'pg_type'::regclass AND r.deptype = 'i';   -- a view's own row type
      o := NULL; o.depth := 0; o.classid := r.classid; o.objid := r.objid; o.objsubid := r.objsubid;
      auto := CASE WHEN from_component THEN false ELSE r.deptype IN ('a', 'i') END;
      SELECT * INTO dep FROM storagelab_internal.bigint_migration_dependent(r.classid, r.objid, r.objsubid, r.deptype, wclass, wobj, wsub, o, auto);
      IF dep.follow IS NOT NULL AND dep.follow <> ALL (work) THEN
        work := work || dep.follow;
      END IF;
      IF dep.link IS NOT NULL THEN
        links := links || dep.link;
      END IF;
      o := dep.o; auto := dep.auto;
      CONTINUE WHEN o.kind IS NULL;                   -- nothing to do with it

      -- A component column's frontier: objects rebuilt in place are info
      -- rows; everything else is dropped and re-created (or a blocker).
      IF o.kind = 'blocker' THEN
        o.identity := coalesce(o.identity, pg_describe_object(r.classid, r.objid, 0));
        o.depth := 0;
        res := res || o;
        CONTINUE;
      END IF;

      -- the object's parent (for depth): the frontier object, if it is a re-created object
      IF NOT from_component THEN
        links := links || format('%s:%s:%s>%s', o.classid, o.objid, coalesce(o.objsubid, 0), cur);
      END IF;

      IF format('%s:%s:%s', o.classid, o.objid, coalesce(o.objsubid, 0)) = ANY (seen) THEN
        -- an index, constraint or statistics object on both a converted
        -- column and a dropped generated column: re-created, not rebuilt
        IF o.create_sql IS NOT NULL AND o.kind IN ('index', 'constraint', 'statistics') THEN
          FOR i IN 1 .. cardinality(res) LOOP
            IF res[i].classid = o.classid AND res[i].objid = o.objid AND res[i].create_sql IS NULL THEN
              o.drop_sql := NULL;
              o.depth := res[i].depth;
              res[i] := o;
            END IF;
          END LOOP;
        END IF;
        CONTINUE;
      END IF;
      seen := seen || format('%s:%s:%s', o.classid, o.objid, coalesce(o.objsubid, 0));
      IF auto AND o.kind NOT IN ('generated_column') THEN
        o.drop_sql := NULL;                           -- removed together with its parent
      END IF;
      res := res || o;
      -- objects that are dropped have dependents of their own
      IF o.kind IN ('view', 'materialized_view', 'function') THEN
        work := work || format('%s:%s:0', o.classid, o.objid);
      ELSIF o.kind = 'generated_column' THEN
        work := work || format('%s:%s:%s', 'pg_class'::regclass::oid, o.relation::oid,
                               (SELECT attnum FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name));
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_walk(oid[], int2[], storagelab.bigint_migration_object[]) IS
  'the dependency walk of the INT->BIGINT model: prior rows plus every object depending on the component, and the links that order re-created objects';

-- One dependent object found by the walk: the function of its catalog
-- (part 22) fills in o.  o.kind NULL: nothing to do with it.  follow: a
-- further frontier for the walk; link: a "child>parent" ordering link.
CREATE FUNCTION storagelab_internal.bigint_migration_dependent(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  d record;
BEGIN
  CASE p_classid
    WHEN 'pg_class'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_relation(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_attrdef'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_default(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_constraint'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_constraint(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_statistic_ext'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_statistics(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_rewrite'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_rewrite(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_trigger'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_trigger(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_policy'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_policy(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_proc'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_function(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    WHEN 'pg_publication_rel'::regclass THEN
      SELECT * INTO d FROM storagelab_internal.bigint_migration_dep_publication(p_classid, p_objid, p_objsubid, p_deptype, wclass, wobj, wsub, o, auto);
    ELSE
      o.kind := 'blocker';
      o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
      o.sqlstate := '0A000'; o.hint := 'storagelab cannot re-create this kind of object; drop it before the migration and re-create it afterwards.';
      RETURN;
  END CASE;
  o := d.o; auto := d.auto; follow := d.follow; link := d.link;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dependent(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'one object found by the dependency walk, handed to the function of its catalog';

-- Depths: a re-created object comes after everything it was found through
-- (longest path over the walk's links).
CREATE FUNCTION storagelab_internal.bigint_migration_depths(res storagelab.bigint_migration_object[], links text[])
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  i int;
  dep int;
  changed boolean;
  guard int := 0;
BEGIN
  LOOP
    changed := false;
    FOR i IN 1 .. cardinality(res) LOOP
      IF res[i].create_sql IS NULL OR res[i].kind IN ('column', 'sequence', 'identity', 'foreign_key') THEN
        CONTINUE;
      END IF;
      SELECT max(p.depth) + 1 INTO dep
        FROM unnest(links) l, unnest(res) p
       WHERE split_part(l, '>', 1) = format('%s:%s:%s', res[i].classid, res[i].objid, coalesce(res[i].objsubid, 0))
         AND split_part(l, '>', 2) = format('%s:%s:%s', p.classid, p.objid,
                                             CASE WHEN p.kind = 'generated_column'
                                                  THEN (SELECT attnum FROM pg_attribute WHERE attrelid = p.relation AND attname = p.column_name)
                                                  ELSE coalesce(p.objsubid, 0) END);
      dep := greatest(coalesce(dep, 1), 1);
      IF dep > res[i].depth THEN
        res[i].depth := dep;
        changed := true;
      END IF;
    END LOOP;
    EXIT WHEN NOT changed;
    guard := guard + 1;
    IF guard > 20000 THEN
      RAISE EXCEPTION 'dependency depths did not converge' USING ERRCODE = 'program_limit_exceeded';
    END IF;
  END LOOP;
  RETURN res;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_depths(storagelab.bigint_migration_object[], text[]) IS
  'the model rows with the depth of every re-created object set after everything it depends on';

-- The model: every row, built once; the script writers take it as is.
-- Rows come from one producer per kind (part 22), then the walk, then the
-- function hazards (part 28).  A new kind of row is one more producer here.
CREATE FUNCTION storagelab_internal.bigint_migration_model(relations regclass[], column_names name[])
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  c    record;
  res  storagelab.bigint_migration_object[];
  w    record;
BEGIN
  PERFORM storagelab_internal.bigint_migration_check_columns(relations, column_names);
  SELECT * INTO c FROM storagelab_internal.bigint_migration_component(relations, column_names);
  res := ARRAY(SELECT x FROM storagelab_internal.bigint_migration_column_rows(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_table_blockers(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_sequence_rows(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_foreign_key_rows(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_trigger_function_rows(c.crel) x);
  SELECT * INTO w FROM storagelab_internal.bigint_migration_walk(c.crel, c.catt, res);
  res := storagelab_internal.bigint_migration_depths(w.res, w.links);
  -- functions the converted values reach with a narrower type (part 28)
  RETURN res || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_function_hazards(res) x);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_model(regclass[], name[]) IS
  'the INT->BIGINT dependency model of several columns as one array of rows, built once per script';

CREATE FUNCTION storagelab.bigint_migration_group_objects(relations regclass[], column_names name[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM unnest(storagelab_internal.bigint_migration_model($1, $2)) $$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_objects(regclass[], name[]) IS
  'dependency model of an INT->BIGINT migration of several columns: the union of their foreign-key components and every dependent object, with lock, handling and DDL';

CREATE FUNCTION storagelab.bigint_migration_objects(relation regclass, column_name name)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM storagelab.bigint_migration_group_objects(ARRAY[$1], ARRAY[$2]) $$;
COMMENT ON FUNCTION storagelab.bigint_migration_objects(regclass, name) IS
  'dependency model of an INT->BIGINT migration: every column of the foreign-key component of relation.column_name and every object depending on it, with kind, lock, handling and the DDL to drop and re-create it';

-- from extension/22_bigint_objects.sql
-- storagelab install script, part 22: the rows of the INT -> BIGINT model,
-- one function per kind of object (part 21 calls them).  Each fills in
-- storagelab.bigint_migration_object: what the object is, the lock and
-- handling of a migration, the SQL that drops, re-creates and checks it, or
-- why it blocks a migration.
--
-- Producers (from the component):  bigint_migration_column_rows,
--   _table_blockers, _sequence_rows, _foreign_key_rows,
--   _trigger_function_rows.
-- Dependents (one per catalog of an object the walk finds): _dep_relation,
--   _dep_default, _dep_constraint, _dep_statistics, _dep_rewrite,
--   _dep_trigger, _dep_policy, _dep_function, _dep_publication.



-- One row per component column: ALTER COLUMN TYPE, or already bigint, or a blocker (another type).
CREATE FUNCTION storagelab_internal.bigint_migration_column_rows(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  FOR r IN
    SELECT c.oid AS relid, c.relkind, c.reloftype, a.attnum, a.attname, a.atttypid, a.attinhcount,
           t.typtype, format_type(a.atttypid, a.atttypmod) AS typ,
           storagelab_internal.bigint_migration_qname(c.oid) AS qn
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_class c ON c.oid = x.relid
      JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum
      JOIN pg_type t ON t.oid = a.atttypid
     ORDER BY 1, 4
  LOOP
    o := NULL;
    o.kind := 'column'; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('%s.%I', r.qn, r.attname);
    o.classid := 'pg_class'::regclass; o.objid := r.relid; o.objsubid := r.attnum;
    o.check_sql := format('(SELECT atttypid = %L::regtype FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L)',
                          'bigint', r.qn, r.attname);
    IF r.atttypid IN ('int2'::regtype, 'int4'::regtype) THEN
      IF r.attinhcount > 0 THEN
        o.handling := format('%s -> bigint: converted by the ALTER TABLE of its parent (recursive)', r.typ);
        o.lock := 'ACCESS EXCLUSIVE (through the parent)';
      ELSE
        o.handling := format('%s -> bigint: ALTER COLUMN TYPE (rewrites the table and its indexes)', r.typ);
        o.lock := 'ACCESS EXCLUSIVE';
        o.create_sql := format('ALTER COLUMN %I TYPE bigint', r.attname);
        -- a default "nextval(...)::integer" would keep failing past 2^31
        -- after the type change: it is set again without the cast
        SELECT substring(pg_get_expr(ad.adbin, ad.adrelid) FROM '^\((nextval\(''.*''::regclass\))\)::(?:integer|smallint)$') INTO v_sql
          FROM pg_attrdef ad WHERE ad.adrelid = r.relid AND ad.adnum = r.attnum;
        IF v_sql IS NOT NULL THEN
          o.handling := o.handling || '; its default drops the cast to ' || r.typ;
          o.create_sql := o.create_sql || format(E',\n  ALTER COLUMN %I SET DEFAULT %s', r.attname, v_sql);
        END IF;
      END IF;
    ELSIF r.atttypid = 'int8'::regtype THEN
      o.handling := 'already bigint: unchanged';
      o.lock := 'ACCESS EXCLUSIVE (held while its foreign keys are re-added)';
      o.check_sql := NULL;
    ELSE
      o.kind := 'blocker';
      o.blocker := format('column %s.%I has type %s, not smallint, integer or bigint', r.qn, r.attname, r.typ);
      o.sqlstate := '0A000';
      o.hint := CASE WHEN r.typtype = 'd'
                     THEN 'Converting a domain-typed column would drop the domain and its constraints; change the domain or the column by hand.'
                     ELSE 'Convert this column by hand.' END;
    END IF;
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_column_rows(oid[], int2[]) IS
  'One row per component column: ALTER COLUMN TYPE, or already bigint, or a blocker (another type).';

-- Blockers on the tables themselves: typed tables, row types stored elsewhere, partition keys, multiple inheritance.
CREATE FUNCTION storagelab_internal.bigint_migration_table_blockers(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  FOR r IN
    SELECT DISTINCT c.oid AS relid, c.reloftype, c.reltype, storagelab_internal.bigint_migration_qname(c.oid) AS qn
      FROM unnest(crel) AS x(relid) JOIN pg_class c ON c.oid = x.relid
  LOOP
    IF r.reloftype <> 0 THEN
      o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.identity := r.qn; o.depth := 0;
      o.blocker := format('table %s is a typed table (OF %s); its column types come from the type', r.qn, r.reloftype::regtype);
      o.sqlstate := '0A000';
      o.hint := 'Detach it from the type (ALTER TABLE ... NOT OF), convert, and change the type by hand.';
      RETURN NEXT o;
    END IF;
    FOR q IN
      SELECT a.attrelid, a.attname
        FROM pg_attribute a
       WHERE a.atttypid IN (SELECT r.reltype UNION SELECT t.typarray FROM pg_type t WHERE t.oid = r.reltype
                            UNION SELECT t.oid FROM pg_type t WHERE t.typbasetype = r.reltype)
         AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
      o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.identity := r.qn; o.depth := 0;
      o.blocker := format('the row type of %s is used by column %s.%I', r.qn, storagelab_internal.bigint_migration_qname(q.attrelid), q.attname);
      o.sqlstate := '0A000';
      o.hint := 'PostgreSQL cannot change a row type that is stored in another table or view column; drop or change that column first.';
      RETURN NEXT o;
    END LOOP;
  END LOOP;
  FOR r IN
    SELECT x.relid, x.attnum, a.attname, storagelab_internal.bigint_migration_qname(x.relid) AS qn
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum
     WHERE EXISTS (SELECT 1 FROM pg_partitioned_table p
                    WHERE p.partrelid = x.relid AND x.attnum = ANY (p.partattrs::int2[]))
        OR EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = x.relid AND d.objsubid = x.attnum
                      AND d.refclassid = 'pg_class'::regclass AND d.refobjid = x.relid AND d.refobjsubid = 0
                      AND d.deptype = 'i')
  LOOP
    o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('%s.%I', r.qn, r.attname);
    o.blocker := format('column %s.%I is part of the partition key of %s', r.qn, r.attname, r.qn);
    o.sqlstate := '0A000';
    o.hint := 'A partition-key column cannot be converted in place: use mode ''online'', which builds a new partitioned table with a bigint key and moves the data into it.';
    o.handling := 'partition key';   -- a blocker of ALTER COLUMN TYPE only: copy and swap builds new tables
    RETURN NEXT o;
  END LOOP;

  -- A column inherited from parents in separate inheritance trees
  -- (multiple inheritance): ALTER COLUMN TYPE on one parent fails with
  -- "cannot alter inherited column", whatever the order.
  FOR r IN
    WITH RECURSIVE up(child, anc) AS (
      SELECT i.inhrelid, i.inhparent FROM pg_inherits i
       WHERE i.inhrelid IN (SELECT x.relid FROM unnest(crel) AS x(relid))
      UNION
      SELECT up.child, i.inhparent FROM up JOIN pg_inherits i ON i.inhrelid = up.anc
    )
    SELECT x.relid, a.attname, storagelab_internal.bigint_migration_qname(x.relid) AS qn,
           string_agg(DISTINCT storagelab_internal.bigint_migration_qname(up.anc), ', ') AS roots
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum AND a.attinhcount > 1
      JOIN up ON up.child = x.relid AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = up.anc)
     GROUP BY x.relid, a.attname
    HAVING count(DISTINCT up.anc) > 1
  LOOP
    o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('%s.%I', r.qn, r.attname);
    o.blocker := format('column %s.%I is inherited from several inheritance trees (%s); ALTER COLUMN TYPE on one parent cannot change it',
                        r.qn, r.attname, r.roots);
    o.sqlstate := '0A000';
    o.hint := 'Detach the table from all but one parent (ALTER TABLE ... NO INHERIT), convert, and attach it again (INHERIT).';
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_table_blockers(oid[], int2[]) IS
  'Blockers on the tables themselves: typed tables, row types stored elsewhere, partition keys, multiple inheritance.';

-- Sequences feeding the component's columns: serial (OWNED BY), plain nextval() defaults, identity.
CREATE FUNCTION storagelab_internal.bigint_migration_sequence_rows(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  -- nextval() defaults, identity.
  FOR r IN
    WITH seqs AS (
      -- OWNED BY (serial, deptype a) and identity (deptype i): the sequence depends on the column
      SELECT d.objid AS seq, x.relid, x.attnum, d.deptype
        FROM unnest(crel, catt) AS x(relid, attnum)
        JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = x.relid
                        AND d.refobjsubid = x.attnum AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
      UNION ALL
      -- a nextval() default: the default expression depends on the sequence
      SELECT d.refobjid, x.relid, x.attnum, 'n'
        FROM unnest(crel, catt) AS x(relid, attnum)
        JOIN pg_attrdef ad ON ad.adrelid = x.relid AND ad.adnum = x.attnum
        JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                        AND d.refclassid = 'pg_class'::regclass
    )
    SELECT s.seq, min(s.deptype) AS deptype,
           (array_agg(s.relid ORDER BY s.relid, s.attnum))[1] AS relid,
           (array_agg(a.attname ORDER BY s.relid, s.attnum))[1] AS attname,
           sq.seqtypid, sq.seqmax, sq.seqmin, storagelab_internal.bigint_migration_qname(s.seq) AS sqn
      FROM seqs s
      JOIN pg_sequence sq ON sq.seqrelid = s.seq
      JOIN pg_attribute a ON a.attrelid = s.relid AND a.attnum = s.attnum
     GROUP BY s.seq, sq.seqtypid, sq.seqmax, sq.seqmin
     ORDER BY sqn
  LOOP
    o := NULL; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('sequence %s', r.sqn);
    o.classid := 'pg_class'::regclass; o.objid := r.seq; o.objsubid := 0;
    o.lock := 'SHARE ROW EXCLUSIVE on the sequence';
    o.check_sql := format('(SELECT seqtypid = %L::regtype FROM pg_sequence WHERE seqrelid = to_regclass(%L))', 'bigint', r.sqn);
    IF r.deptype = 'i' THEN
      o.kind := 'identity';
      o.handling := CASE WHEN r.seqtypid = 'int8'::regtype THEN 'identity sequence, already bigint'
                         ELSE format('identity sequence: ALTER COLUMN TYPE makes it bigint (MAXVALUE %s)',
                                     CASE WHEN r.seqmax IN (32767, 2147483647) THEN 'raised to the bigint maximum' ELSE 'kept at ' || r.seqmax END) END;
    ELSE
      o.kind := 'sequence';
      IF r.seqtypid = 'int8'::regtype THEN
        o.handling := 'already bigint';
      ELSE
        o.handling := format('ALTER SEQUENCE ... AS bigint (MAXVALUE %s)',
                             CASE WHEN r.seqmax IN (32767, 2147483647) THEN 'raised to the bigint maximum' ELSE 'kept at ' || r.seqmax END);
        o.create_sql := format(E'ALTER SEQUENCE %s AS bigint;\n', r.sqn);
      END IF;
    END IF;
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_sequence_rows(oid[], int2[]) IS
  'Sequences feeding the component''s columns: serial (OWNED BY), plain nextval() defaults, identity.';

-- Foreign keys of the component: dropped before the type change and re-added after it, so that each is validated exactly once.
CREATE FUNCTION storagelab_internal.bigint_migration_foreign_key_rows(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  -- re-added after it, so that each is validated exactly once.
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, c.confrelid, c.convalidated,
           pg_get_constraintdef(c.oid) AS def, obj_description(c.oid, 'pg_constraint') AS descr,
           storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, storagelab_internal.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c
     WHERE c.contype = 'f' AND c.conparentid = 0
       AND EXISTS (SELECT 1 FROM unnest(c.conkey) k, unnest(crel, catt) AS x(relid, attnum)
                    WHERE x.relid = c.conrelid AND x.attnum = k)
       -- only keys with a column that changes type (ALTER TYPE leaves the others alone)
       AND EXISTS (SELECT 1 FROM unnest(c.conkey, c.confkey) AS k(a1, a2), pg_attribute a
                    WHERE ((a.attrelid = c.conrelid AND a.attnum = k.a1) OR (a.attrelid = c.confrelid AND a.attnum = k.a2))
                      AND a.atttypid IN ('int2'::regtype, 'int4'::regtype))
     ORDER BY qn, c.conname
  LOOP
    o := NULL; o.kind := 'foreign_key'; o.relation := r.conrelid; o.depth := 0;
    o.identity := format('constraint %I on %s', r.conname, r.qn);
    o.classid := 'pg_constraint'::regclass; o.objid := r.oid;
    o.lock := 'ACCESS EXCLUSIVE on both tables (drop), SHARE ROW EXCLUSIVE (re-add)';
    o.handling := format('dropped before the type change, re-added after it (%s)',
                         CASE WHEN r.convalidated THEN 'validated once: one scan of ' || r.qn || ' joined to ' || r.fqn
                              ELSE 'NOT VALID, as it was' END);
    o.drop_sql := format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', r.qn, r.conname);
    o.create_sql := format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', r.qn, r.conname, r.def)
                    || CASE WHEN (r.descr) IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%L) AND conname = %L AND contype = %L AND convalidated = %L)',
                          r.qn, r.conname, 'f', r.convalidated);
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_foreign_key_rows(oid[], int2[]) IS
  'Foreign keys of the component: dropped before the type change and re-added after it, so that each is validated exactly once.';

-- Trigger functions of the converted tables, in languages that cache plans.
CREATE FUNCTION storagelab_internal.bigint_migration_trigger_function_rows(crel oid[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  -- plans (PL/pgSQL and others): a no-op ALTER FUNCTION makes every session
  -- re-plan them, instead of failing with "type of parameter N (bigint) does
  -- not match that when preparing the plan (integer)".  COST is set to its
  -- current value: RESET ALL would drop a SET search_path.
  FOR r IN
    SELECT DISTINCT p.oid, p.oid::regprocedure::text AS sig, p.procost, l.lanname
      FROM pg_trigger t
      JOIN pg_proc p ON p.oid = t.tgfoid
      JOIN pg_language l ON l.oid = p.prolang
     WHERE t.tgrelid IN (SELECT DISTINCT x.r FROM unnest(crel) AS x(r))
       AND NOT t.tgisinternal AND l.lanname NOT IN ('c', 'internal', 'sql')
     ORDER BY 2
  LOOP
    o := NULL; o.kind := 'trigger_function'; o.depth := 0;
    o.identity := format('function %s', r.sig);
    o.classid := 'pg_proc'::regclass; o.objid := r.oid; o.objsubid := 0;
    o.lock := 'none on tables (updates its pg_proc row)';
    o.handling := format('ALTER FUNCTION ... COST %s (unchanged) after the type change, so that sessions re-plan its cached %s statements', r.procost, r.lanname);
    o.create_sql := format(E'ALTER FUNCTION %s COST %s;\n', r.sig, r.procost);
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_trigger_function_rows(oid[]) IS
  'Trigger functions of the converted tables, in languages that cache plans.';

-- an index of a converted column or of a re-created object (pg_class); other relations are blockers
CREATE FUNCTION storagelab_internal.bigint_migration_dep_relation(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT c.relkind, c.oid, storagelab_internal.bigint_migration_qname(c.oid) AS qn, i.indrelid INTO q
    FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid WHERE c.oid = p_objid;
  IF q.relkind = 'S' THEN
    o := NULL; RETURN;                                   -- sequences: step 4
  ELSIF q.relkind = 't' AND p_deptype = 'i' THEN
    o := NULL; RETURN;                                   -- the TOAST table of a dropped materialized view
  ELSIF p_objid = wobj AND wclass = 'pg_class'::regclass THEN
    o := NULL; RETURN;                                   -- a relation's own parts (partition key: step 3)
  ELSIF q.relkind IN ('i', 'I') AND NOT (wclass = 'pg_class'::regclass AND q.indrelid = wobj AND wsub > 0
                                         AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = wobj AND a.attnum = wsub AND a.attgenerated = '')
                                         AND NOT EXISTS (SELECT 1 FROM pg_class v WHERE v.oid = wobj AND v.relkind = 'm')) THEN
    -- an index on a matview or on a generated column being re-created
    IF (SELECT indisprimary OR indisunique FROM pg_index WHERE indexrelid = p_objid)
       AND EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = p_objid AND contype IN ('p', 'u', 'x')) THEN
      o.kind := 'blocker';
      o.blocker := format('constraint index %s would be dropped with a re-created column', q.qn);
      o.sqlstate := '0A000'; o.hint := 'Convert this table by hand.';
    ELSE
      o.kind := 'index'; o.relation := q.indrelid; o.identity := format('index %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on its table';
      o.handling := 're-created with its table or column';
      -- a partition's index is attached to its parent's, which is
      -- re-created first (ON ONLY, as pg_get_indexdef prints it, and
      -- valid again once every partition's index is attached)
      SELECT i.inhparent, storagelab_internal.bigint_migration_qname(i.inhparent) AS pqn INTO v_sql, v_qn
        FROM pg_inherits i WHERE i.inhrelid = p_objid;
      IF v_sql IS NOT NULL THEN
        link := format('%s:%s:0>%s:%s:0', 'pg_class'::regclass::oid, p_objid, 'pg_class'::regclass::oid, v_sql);
      END IF;
      o.create_sql := pg_get_indexdef(p_objid) || E';\n'
                      || CASE WHEN v_sql IS NULL THEN '' ELSE format(E'ALTER INDEX %s ATTACH PARTITION %s;\n', v_qn, q.qn) END
                      -- CLUSTER ON and REPLICA IDENTITY USING INDEX go with the index
                      || coalesce((SELECT CASE WHEN i.indisclustered
                                               THEN format(E'ALTER %s %s CLUSTER ON %I;\n', CASE t.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
                                                           storagelab_internal.bigint_migration_qname(t.oid), ic.relname) ELSE '' END
                                          || CASE WHEN i.indisreplident
                                               THEN format(E'ALTER TABLE %s REPLICA IDENTITY USING INDEX %I;\n', storagelab_internal.bigint_migration_qname(t.oid), ic.relname) ELSE '' END
                                     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
                                    WHERE i.indexrelid = p_objid), '')
                      || coalesce((SELECT format(E'ALTER INDEX %s SET TABLESPACE %I;\n', q.qn, t.spcname)
                                     FROM pg_class ic JOIN pg_tablespace t ON t.oid = ic.reltablespace
                                    WHERE ic.oid = p_objid), '')
                      || CASE WHEN (obj_description(p_objid, 'pg_class')) IS NULL THEN '' ELSE format(E'COMMENT ON INDEX %s IS %L;\n', q.qn, obj_description(p_objid, 'pg_class')) END;
      o.check_sql := format('EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid)', q.qn);
      o.definition := pg_get_indexdef(p_objid);
      auto := true;
    END IF;
  ELSIF q.relkind IN ('i', 'I') AND EXISTS (
          SELECT 1 FROM pg_index i, generate_series(0, i.indnkeyatts - 1) k, pg_opclass oc
           WHERE i.indexrelid = p_objid AND oc.oid = i.indclass[k] AND (i.indkey[k] = wsub OR i.indkey[k] = 0)
             AND oc.opcintype IN ('int2'::regtype, 'int4'::regtype) AND NOT oc.opcdefault) THEN
    -- ALTER COLUMN TYPE rebuilds the index with its explicit operator
    -- class (int4_minmax_multi_ops, int4_bloom_ops, ...), which does
    -- not accept bigint: the rebuild would fail
    o.kind := 'blocker'; o.relation := q.indrelid; o.identity := format('index %s', q.qn);
    o.blocker := format('index %s uses operator class %s on %s, which does not accept bigint', q.qn,
                        (SELECT string_agg(DISTINCT format('%I', oc.opcname), ', ')
                           FROM pg_index i, generate_series(0, i.indnkeyatts - 1) k, pg_opclass oc
                          WHERE i.indexrelid = p_objid AND oc.oid = i.indclass[k] AND (i.indkey[k] = wsub OR i.indkey[k] = 0)
                            AND oc.opcintype IN ('int2'::regtype, 'int4'::regtype) AND NOT oc.opcdefault),
                        pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000';
    o.hint := format('Drop the index before the migration and create it again afterwards with the bigint operator class (%s).',
                     coalesce((SELECT string_agg(DISTINCT format('%I', o8.opcname), ', ')
                                 FROM pg_index i, generate_series(0, i.indnkeyatts - 1) k, pg_opclass oc, pg_opclass o8
                                WHERE i.indexrelid = p_objid AND oc.oid = i.indclass[k] AND (i.indkey[k] = wsub OR i.indkey[k] = 0)
                                  AND oc.opcintype IN ('int2'::regtype, 'int4'::regtype) AND NOT oc.opcdefault
                                  AND o8.opcfamily = oc.opcfamily AND o8.opcmethod = oc.opcmethod AND o8.opcintype = 'int8'::regtype),
                              'one in the same operator family'));
  ELSIF q.relkind IN ('i', 'I') THEN
    o.kind := 'index'; o.relation := q.indrelid; o.identity := format('index %s', q.qn);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 'rebuilt by ALTER COLUMN TYPE, definition kept';
    o.check_sql := format('to_regclass(%L) IS NOT NULL', q.qn);
    o.definition := pg_get_indexdef(p_objid);
  ELSE
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, p_objsubid), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'storagelab cannot re-create this object; drop it before the migration and re-create it afterwards.';
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_relation(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'an index of a converted column or of a re-created object (pg_class); other relations are blockers';

-- a column default or generated column expression (pg_attrdef) that uses the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_default(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT ad.adrelid, ad.adnum, a.attname, a.attgenerated, a.attinhcount, a.attnotnull, a.attstattarget,
         a.atttypid, a.atttypmod, a.attcollation, t.typcollation, a.attacl,
         pg_get_expr(ad.adbin, ad.adrelid) AS expr, c.relkind,
         storagelab_internal.bigint_migration_qname(ad.adrelid) AS qn,
         col_description(ad.adrelid, ad.adnum) AS descr
    INTO q
    FROM pg_attrdef ad
    JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
    JOIN pg_type t ON t.oid = a.atttypid
    JOIN pg_class c ON c.oid = ad.adrelid
   WHERE ad.oid = p_objid;
  IF q.adrelid = wobj AND q.adnum = wsub THEN
    o := NULL; RETURN;                                   -- the column's own default: kept by ALTER TYPE
  ELSIF q.attgenerated = 's' AND q.attinhcount > 0 THEN
    -- a partition's (or inheritance child's) copy: dropped and re-added
    -- by its parent's ALTER TABLE, which also drops the partition's own
    -- indexes and statistics objects on it: find those too
    follow := format('%s:%s:%s', 'pg_class'::regclass::oid, q.adrelid, q.adnum);
    o := NULL; RETURN;
  ELSIF q.attgenerated = 's' AND q.relkind IN ('r', 'p') THEN
    o.kind := 'generated_column'; o.relation := q.adrelid; o.column_name := q.attname;
    o.identity := format('generated column %s.%I', q.qn, q.attname);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 'dropped and re-added in the same ALTER TABLE as the type change (no extra rewrite); it moves to the last column position';
    o.drop_sql := format('DROP COLUMN %I', q.attname);
    o.create_sql := format('ADD COLUMN %I %s%s GENERATED ALWAYS AS (%s) STORED%s',
                           q.attname, format_type(q.atttypid, q.atttypmod),
                           CASE WHEN q.attcollation <> q.typcollation AND q.attcollation <> 0
                                THEN ' COLLATE ' || (SELECT format('%I.%I', n.nspname, co.collname) FROM pg_collation co
                                                      JOIN pg_namespace n ON n.oid = co.collnamespace WHERE co.oid = q.attcollation)
                                ELSE '' END,
                           q.expr, CASE WHEN q.attnotnull THEN ' NOT NULL' ELSE '' END);
    -- statements to run after the ALTER TABLE: comment, statistics target, column privileges
    o.post_sql := CASE WHEN (q.descr) IS NULL THEN '' ELSE format(E'COMMENT ON COLUMN %s.%I IS %L;\n', q.qn, q.attname, q.descr) END
              || CASE WHEN q.attstattarget >= 0 THEN format(E'ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s;\n', q.qn, q.attname, q.attstattarget) ELSE '' END
              || coalesce((SELECT string_agg(format(E'GRANT %s (%I) ON TABLE %s TO %s%s;\n', x.privilege_type, q.attname, q.qn,
                                  CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
                                  CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), '')
                             FROM aclexplode(q.attacl) x), '');
    o.check_sql := format('(SELECT attgenerated = %L FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped)',
                          's', q.qn, q.attname);
    auto := false;
  ELSIF q.relkind = 'v' THEN
    o.kind := 'default'; o.relation := q.adrelid; o.column_name := q.attname;
    o.identity := format('default of view column %s.%I', q.qn, q.attname);
    o.lock := 'ACCESS EXCLUSIVE on the view';
    o.handling := 're-created with its view';
    o.create_sql := format(E'ALTER VIEW %s ALTER COLUMN %I SET DEFAULT %s;\n', q.qn, q.attname, q.expr);
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_attrdef WHERE adrelid = to_regclass(%L) AND adnum = %s)', q.qn, q.adnum);
    auto := true;
  ELSE
    o.kind := 'blocker';
    o.blocker := format('the default of %s.%I uses %s', q.qn, q.attname, pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop the default before the migration and set it again afterwards.';
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_default(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a column default or generated column expression (pg_attrdef) that uses the column';

-- a constraint (pg_constraint) on the column: rebuilt in place, re-added, or a blocker; foreign keys are foreign_key rows
CREATE FUNCTION storagelab_internal.bigint_migration_dep_constraint(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT c.conname, c.contype, c.conrelid, c.conparentid, c.coninhcount, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn,
         (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1]) AS attname,
         pg_get_constraintdef(c.oid) AS def INTO q
    FROM pg_constraint c WHERE c.oid = p_objid;
  IF q.contype = 'f' OR q.conparentid <> 0 THEN
    o := NULL; RETURN;                                   -- foreign keys: step 5
  ELSIF q.contype = 'n' AND (auto OR NOT (wclass = 'pg_class'::regclass AND wsub > 0)) THEN
    o := NULL; RETURN;                                   -- NOT NULL of a re-created generated column: its ADD COLUMN has NOT NULL
  ELSIF q.contype = 'n' THEN
    -- PostgreSQL 18+: a NOT NULL constraint (see bigint_migration_not_null_name)
    o.kind := 'constraint'; o.relation := q.conrelid;
    o.identity := format('constraint %I on %s', q.conname, q.qn);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    IF q.coninhcount > 0 THEN
      o.handling := 'NOT NULL kept; inherited, so it takes the name of its parent''s NOT NULL constraint';
    ELSE
      o.handling := 'NOT NULL kept, with its name';
    END IF;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]'
                          ' WHERE c.conrelid = to_regclass(%L) AND c.contype = %L AND a.attname = %L AND a.attnotnull%s)',
                          q.qn, 'n', q.attname,
                          CASE WHEN q.coninhcount > 0 THEN '' ELSE format(' AND c.conname = %L', q.conname) END);
  ELSIF wclass = 'pg_class'::regclass AND wsub > 0 AND auto = false THEN
    o.kind := 'constraint'; o.relation := q.conrelid;
    o.identity := format('constraint %I on %s', q.conname, q.qn);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 'rebuilt by ALTER COLUMN TYPE, name and definition kept';
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%L) AND conname = %L)', q.qn, q.conname);
  ELSIF q.contype = 'c' AND auto THEN
    o.kind := 'constraint'; o.relation := q.conrelid;
    o.identity := format('constraint %I on %s', q.conname, q.qn);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 're-added after its generated column';
    o.create_sql := format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', q.qn, q.conname, q.def)
                    || CASE WHEN obj_description(p_objid, 'pg_constraint') IS NULL THEN ''
                            ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', q.conname, q.qn, obj_description(p_objid, 'pg_constraint')) END;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%L) AND conname = %L)', q.qn, q.conname);
  ELSE
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop the constraint before the migration and re-create it afterwards.';
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_constraint(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a constraint (pg_constraint) on the column: rebuilt in place, re-added, or a blocker; foreign keys are foreign_key rows';

-- an extended statistics object (pg_statistic_ext) on the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_statistics(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT s.stxname, s.stxrelid, format('%I.%I', n.nspname, s.stxname) AS qn, s.stxstattarget, s.stxowner INTO q
    FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE s.oid = p_objid;
  o.kind := 'statistics'; o.relation := q.stxrelid; o.identity := format('statistics object %s', q.qn);
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE format(%L, n.nspname, s.stxname) = %L)',
                        '%I.%I', q.qn);
  IF wclass = 'pg_class'::regclass AND wsub > 0 AND auto = false THEN
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 'rebuilt by ALTER COLUMN TYPE, definition kept';
  ELSE
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 're-created after its table or column';
    o.create_sql := pg_get_statisticsobjdef(p_objid) || E';\n'
                    || format(E'ALTER STATISTICS %s OWNER TO %I;\n', q.qn, pg_get_userbyid(q.stxowner))
                    || CASE WHEN q.stxstattarget >= 0 THEN format(E'ALTER STATISTICS %s SET STATISTICS %s;\n', q.qn, q.stxstattarget) ELSE '' END
                    || CASE WHEN (obj_description(p_objid, 'pg_statistic_ext')) IS NULL THEN '' ELSE format(E'COMMENT ON STATISTICS %s IS %L;\n', q.qn, obj_description(p_objid, 'pg_statistic_ext')) END;
    auto := true;
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_statistics(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'an extended statistics object (pg_statistic_ext) on the column';

-- a rule (pg_rewrite): the view or materialized view it defines, or a rule of a table
CREATE FUNCTION storagelab_internal.bigint_migration_dep_rewrite(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT w.rulename, w.ev_class, w.ev_enabled, c.relkind, c.relispopulated, c.reloptions, c.relam, c.reltablespace,
         storagelab_internal.bigint_migration_qname(w.ev_class) AS qn INTO q
    FROM pg_rewrite w JOIN pg_class c ON c.oid = w.ev_class WHERE w.oid = p_objid;
  IF q.ev_class = wobj AND wclass = 'pg_class'::regclass AND wsub = 0 THEN
    IF q.rulename = '_RETURN' THEN o := NULL; RETURN; END IF;   -- the view's own query
  END IF;
  IF q.rulename = '_RETURN' AND q.relkind IN ('v', 'm') THEN
    -- the object to drop is the view itself
    o.classid := 'pg_class'::regclass; o.objid := q.ev_class; o.objsubid := 0;
    o.relation := q.ev_class;
    auto := false;
    IF q.relkind = 'v' THEN
      o.kind := 'view'; o.identity := format('view %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on the view';
      o.handling := 'dropped and re-created with the same definition, options, owner, privileges and comments';
      o.drop_sql := format(E'DROP VIEW %s;\n', q.qn);
      o.create_sql := format(E'CREATE VIEW %s%s AS\n%s\n', q.qn,
                             CASE WHEN q.reloptions IS NOT NULL THEN
                               ' WITH (' || (SELECT string_agg(format('%I = %L', split_part(opt, '=', 1), substr(opt, strpos(opt, '=') + 1)), ', ')
                                               FROM unnest(q.reloptions) opt) || ')' ELSE '' END,
                             pg_get_viewdef(q.ev_class))
                      || storagelab_internal.bigint_migration_relation_extras(q.ev_class);
      o.check_sql := format('(SELECT relkind = %L FROM pg_class WHERE oid = to_regclass(%L))', 'v', q.qn);
    ELSE
      o.kind := 'materialized_view'; o.identity := format('materialized view %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on the materialized view';
      -- created WITH NO DATA and populated by REFRESH once it has its
      -- owner, as pg_dump does: the query then runs as the owner (row
      -- security, current_user), not as the role running the script
      o.handling := CASE WHEN q.relispopulated THEN 'dropped and re-created with the same definition, options, owner, privileges and comments; re-populated by REFRESH as its owner'
                         ELSE 'dropped and re-created WITH NO DATA, as it was' END;
      o.drop_sql := format(E'DROP MATERIALIZED VIEW %s;\n', q.qn);
      o.create_sql := format(E'CREATE MATERIALIZED VIEW %s%s%s%s AS\n%s\n  WITH %s;\n', q.qn,
                             CASE WHEN q.relam <> (SELECT oid FROM pg_am WHERE amname = 'heap')
                                  THEN format(' USING %I', (SELECT amname FROM pg_am WHERE oid = q.relam)) ELSE '' END,
                             CASE WHEN q.reloptions IS NOT NULL THEN
                               ' WITH (' || (SELECT string_agg(format('%I = %L', split_part(opt, '=', 1), substr(opt, strpos(opt, '=') + 1)), ', ')
                                               FROM unnest(q.reloptions) opt) || ')' ELSE '' END,
                             CASE WHEN q.reltablespace <> 0
                                  THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = q.reltablespace)) ELSE '' END,
                             regexp_replace(pg_get_viewdef(q.ev_class), ';\s*$', ''),
                             'NO DATA')
                      || storagelab_internal.bigint_migration_relation_extras(q.ev_class)
                      || CASE WHEN q.relispopulated THEN format(E'REFRESH MATERIALIZED VIEW %s;\n', q.qn) ELSE '' END;
      o.check_sql := format('(SELECT relkind = %L AND relispopulated = %L FROM pg_class WHERE oid = to_regclass(%L))',
                            'm', q.relispopulated, q.qn);
    END IF;
  ELSE
    o.kind := 'rule'; o.relation := q.ev_class;
    o.identity := format('rule %I on %s', q.rulename, q.qn);
    o.lock := 'ACCESS EXCLUSIVE on its table';
    o.handling := 'dropped and re-created with the same definition';
    o.drop_sql := format(E'DROP RULE %I ON %s;\n', q.rulename, q.qn);
    o.create_sql := pg_get_ruledef(p_objid) || E'\n'
                    || CASE q.ev_enabled WHEN 'D' THEN format(E'ALTER TABLE %s DISABLE RULE %I;\n', q.qn, q.rulename)
                                         WHEN 'R' THEN format(E'ALTER TABLE %s ENABLE REPLICA RULE %I;\n', q.qn, q.rulename)
                                         WHEN 'A' THEN format(E'ALTER TABLE %s ENABLE ALWAYS RULE %I;\n', q.qn, q.rulename)
                                         ELSE '' END
                    || CASE WHEN (obj_description(p_objid, 'pg_rewrite')) IS NULL THEN '' ELSE format(E'COMMENT ON RULE %I ON %s IS %L;\n', q.rulename, q.qn, obj_description(p_objid, 'pg_rewrite')) END;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_rewrite WHERE ev_class = to_regclass(%L) AND rulename = %L)', q.qn, q.rulename);
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_rewrite(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a rule (pg_rewrite): the view or materialized view it defines, or a rule of a table';

-- a trigger (pg_trigger) whose column list or WHEN clause uses the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_trigger(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT t.tgname, t.tgrelid, t.tgenabled, t.tgparentid, t.tgisinternal, storagelab_internal.bigint_migration_qname(t.tgrelid) AS qn INTO q
    FROM pg_trigger t WHERE t.oid = p_objid;
  IF q.tgparentid <> 0 OR q.tgisinternal THEN
    o := NULL; RETURN;                                   -- partition clones and FK triggers go with their parent
  END IF;
  o.kind := 'trigger'; o.relation := q.tgrelid;
  o.identity := format('trigger %I on %s', q.tgname, q.qn);
  o.lock := 'SHARE ROW EXCLUSIVE on its table (held ACCESS EXCLUSIVE anyway)';
  o.handling := 'dropped and re-created with the same definition and enabled state';
  o.drop_sql := format(E'DROP TRIGGER %I ON %s;\n', q.tgname, q.qn);
  o.create_sql := pg_get_triggerdef(p_objid) || E';\n'
                  || CASE q.tgenabled WHEN 'D' THEN format(E'ALTER TABLE %s DISABLE TRIGGER %I;\n', q.qn, q.tgname)
                                      WHEN 'R' THEN format(E'ALTER TABLE %s ENABLE REPLICA TRIGGER %I;\n', q.qn, q.tgname)
                                      WHEN 'A' THEN format(E'ALTER TABLE %s ENABLE ALWAYS TRIGGER %I;\n', q.qn, q.tgname)
                                      ELSE '' END
                  || CASE WHEN (obj_description(p_objid, 'pg_trigger')) IS NULL THEN '' ELSE format(E'COMMENT ON TRIGGER %I ON %s IS %L;\n', q.tgname, q.qn, obj_description(p_objid, 'pg_trigger')) END
                  -- the clones on partitions that were enabled or disabled on their own
                  || coalesce((WITH RECURSIVE cl(oid, tgrelid, tgname, tgenabled, lvl) AS (
                                 SELECT t.oid, t.tgrelid, t.tgname, t.tgenabled, 1 FROM pg_trigger t WHERE t.tgparentid = p_objid
                                 UNION ALL
                                 SELECT t.oid, t.tgrelid, t.tgname, t.tgenabled, cl.lvl + 1 FROM pg_trigger t JOIN cl ON t.tgparentid = cl.oid)
                               SELECT string_agg(format(E'ALTER TABLE %s %s TRIGGER %I;\n', storagelab_internal.bigint_migration_qname(cl.tgrelid),
                                                        CASE cl.tgenabled WHEN 'D' THEN 'DISABLE' WHEN 'R' THEN 'ENABLE REPLICA'
                                                                          WHEN 'A' THEN 'ENABLE ALWAYS' ELSE 'ENABLE' END, cl.tgname),
                                                 '' ORDER BY cl.lvl, cl.tgrelid)
                                 FROM cl
                                WHERE cl.tgenabled <> coalesce((SELECT p.tgenabled FROM pg_trigger c JOIN pg_trigger p ON p.oid = c.tgparentid
                                                                 WHERE c.oid = cl.oid), q.tgenabled)), '');
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%L) AND tgname = %L AND tgenabled = %L)',
                        q.qn, q.tgname, q.tgenabled);

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_trigger(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a trigger (pg_trigger) whose column list or WHEN clause uses the column';

-- a row-level security policy (pg_policy) using the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_policy(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT p.polname, p.polrelid, p.polpermissive, p.polcmd, p.polroles,
         pg_get_expr(p.polqual, p.polrelid) AS qual, pg_get_expr(p.polwithcheck, p.polrelid) AS wcheck,
         storagelab_internal.bigint_migration_qname(p.polrelid) AS qn INTO q
    FROM pg_policy p WHERE p.oid = p_objid;
  o.kind := 'policy'; o.relation := q.polrelid;
  o.identity := format('policy %I on %s', q.polname, q.qn);
  o.lock := 'ACCESS EXCLUSIVE on its table';
  o.handling := 'dropped and re-created with the same roles, command and expressions';
  o.drop_sql := format(E'DROP POLICY %I ON %s;\n', q.polname, q.qn);
  o.create_sql := format(E'CREATE POLICY %I ON %s AS %s FOR %s TO %s%s%s;\n',
                         q.polname, q.qn,
                         CASE WHEN q.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END,
                         CASE q.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
                                       WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                         (SELECT string_agg(CASE WHEN x = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x)) END, ', ' ORDER BY ord)
                            FROM unnest(q.polroles) WITH ORDINALITY AS u(x, ord)),
                         ' USING (' || q.qual || ')', ' WITH CHECK (' || q.wcheck || ')')
                  || CASE WHEN (obj_description(p_objid, 'pg_policy')) IS NULL THEN '' ELSE format(E'COMMENT ON POLICY %I ON %s IS %L;\n', q.polname, q.qn, obj_description(p_objid, 'pg_policy')) END;
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = to_regclass(%L) AND polname = %L)', q.qn, q.polname);

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_policy(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a row-level security policy (pg_policy) using the column';

-- a function or procedure (pg_proc) whose SQL-standard body uses the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_function(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT p.oid, p.prokind, p.proowner, p.proacl, p.oid::regprocedure::text AS sig,
         obj_description(p.oid, 'pg_proc') AS descr INTO q
    FROM pg_proc p WHERE p.oid = p_objid;
  IF q.prokind NOT IN ('f', 'p') THEN
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop it before the migration and re-create it afterwards.';
  ELSE
    o.kind := 'function';
    o.identity := format('%s %s', CASE q.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, q.sig);
    o.lock := 'ACCESS EXCLUSIVE on the function object';
    o.handling := 'dropped and re-created with the same definition, owner, privileges and comment';
    o.drop_sql := format(E'DROP %s %s;\n', CASE q.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, q.sig);
    o.create_sql := rtrim(pg_get_functiondef(p_objid), E'\n') || E';\n'
                    || format(E'ALTER %s %s OWNER TO %I;\n', CASE q.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                              q.sig, pg_get_userbyid(q.proowner))
                    || storagelab_internal.bigint_migration_acl_sql('ROUTINE', q.sig, q.proacl, q.proowner)
                    || CASE WHEN (q.descr) IS NULL THEN '' ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', q.sig, q.descr) END;
    o.check_sql := format('to_regprocedure(%L) IS NOT NULL', q.sig);
    o.objsubid := 0;
  END IF;

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_function(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a function or procedure (pg_proc) whose SQL-standard body uses the column';

-- a publication's row filter or column list (pg_publication_rel) naming the column
CREATE FUNCTION storagelab_internal.bigint_migration_dep_publication(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_sql  text;
  v_qn   text;
BEGIN
  SELECT p.pubname, pr.prrelid, pr.prattrs, pg_get_expr(pr.prqual, pr.prrelid) AS qual,
         storagelab_internal.bigint_migration_qname(pr.prrelid) AS qn INTO q
    FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.oid = p_objid;
  o.kind := 'publication_table'; o.relation := q.prrelid;
  o.identity := format('table %s in publication %I', q.qn, q.pubname);
  o.lock := 'SHARE UPDATE EXCLUSIVE on the table';
  o.handling := 'dropped from the publication and added back with the same column list and row filter';
  o.drop_sql := format(E'ALTER PUBLICATION %I DROP TABLE %s;\n', q.pubname, q.qn);
  o.create_sql := format(E'ALTER PUBLICATION %I ADD TABLE %s%s%s;\n', q.pubname, q.qn,
                         CASE WHEN q.prattrs IS NOT NULL THEN
                           ' (' || (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY u.ord)
                                      FROM unnest(q.prattrs::int2[]) WITH ORDINALITY AS u(n, ord)
                                      JOIN pg_attribute a ON a.attrelid = q.prrelid AND a.attnum = u.n) || ')' ELSE '' END,
                         ' WHERE (' || q.qual || ')');
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE p.pubname = %L AND pr.prrelid = to_regclass(%L))',
                        q.pubname, q.qn);

END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dep_publication(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a publication''s row filter or column list (pg_publication_rel) naming the column';

-- from extension/23_bigint_blocking.sql
-- storagelab install script, part 23: the blocking INT -> BIGINT script
-- (bigint_migration_script(..., mode => 'blocking')): one transaction, every
-- table locked in one order, each table rewritten once.  One function per
-- section of the script, in the order the script has them; each reads only
-- the model rows (part 21).
--
--   header      what the script does, to whom, how long it may take
--   preflight   the database still looks as the model says; privileges;
--               long transactions and anti-wraparound vacuums
--   locks       every table, one order, retried on lock_timeout
--   drops       dependents that would make ALTER COLUMN TYPE fail
--   convert     ALTER TABLE per table, sequences, foreign keys re-added
--   recreate    dropped objects, then trigger functions touched
--   postchecks  every row's check_sql; constraints valid
--   finish      COMMIT (or ROLLBACK on -v dry_run=1), ANALYZE


-- The comment header of a blocking script: columns, tables and sizes, locks, foreign keys, sequences, objects re-created, function hazards, estimated duration.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_header(objs storagelab.bigint_migration_object[], relations regclass[], column_names name[], lock_list text,
                                                                     function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
  heap_b     numeric;
  idx_b      numeric;
  est_bytes  numeric := 0;
  fk_bytes   numeric := 0;
  mbps       numeric := greatest(coalesce(nullif(storagelab_internal.setting('bigint_migration.rewrite_mb_per_second'), '')::numeric, 50), 1);
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode blocking)\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'));
  s := s || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(x.r), x.c), ', ')
                 FROM unnest(relations, column_names) AS x(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s (%s)\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_user)),
                   split_part(version(), ',', 1));
  s := s || E'-- run with: psql -v ON_ERROR_STOP=1 -f <this file>   (as the owner of the objects, or a superuser)\n'
         || E'-- dry run: add -v dry_run=1 to do everything and ROLLBACK (e.g. on a pg_dump --schema-only copy)\n'
         || E'-- One transaction: if any step fails, nothing is changed, and the script can simply be run again.\n--\n';
  s := s || E'-- Columns of the foreign-key component:\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
  END LOOP;

  s := s || E'-- Tables rewritten, with their indexes (partitions and inheritance children included):\n';
  FOR r IN
    SELECT x.relation, storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 2
  LOOP
    WITH RECURSIVE tree(oid) AS (
      SELECT r.relation::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid)
    SELECT coalesce(sum(pg_total_relation_size(tree.oid) - pg_indexes_size(tree.oid)), 0),
           coalesce(sum(pg_indexes_size(tree.oid)), 0)
      INTO heap_b, idx_b FROM tree;
    est_bytes := est_bytes + heap_b + idx_b;
    s := s || format(E'--   %s: %s table (with TOAST) + %s indexes\n',
                     storagelab_internal.bigint_migration_comment_text(r.qn), pg_size_pretty(heap_b), pg_size_pretty(idx_b));
  END LOOP;

  s := s || format(E'-- Locks: ACCESS EXCLUSIVE on these tables (and their partitions/children) until COMMIT,\n'
                   '-- taken in this one order with lock_timeout %s and up to %s retries:\n--   %s\n',
                   storagelab_internal.bigint_migration_comment_text(lt), retries,
                   storagelab_internal.bigint_migration_comment_text(lock_list));

  s := s || E'-- Foreign keys dropped before the type change and re-added after it (each re-validated once):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    SELECT coalesce(sum(pg_relation_size(t)), 0) INTO heap_b
      FROM pg_constraint c, LATERAL (VALUES (c.conrelid), (c.confrelid)) v(t) WHERE c.oid = o.objid;
    fk_bytes := fk_bytes + heap_b;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Sequences:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind IN ('sequence', 'identity') ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ' (' || o.relation::text || '.' || quote_ident(o.column_name) || '): ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Objects dropped and re-created inside the transaction:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;
  s := s || E'-- Trigger functions touched so that other sessions re-plan them:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;
  s := s || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards);   -- part 28

  s := s || E'-- Rebuilt in place by ALTER COLUMN TYPE (definitions, names, comments kept):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('index', 'constraint', 'statistics') AND x.create_sql IS NULL
            ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || format(E'-- Estimated duration: about %s s (%s of tables and indexes rewritten at an assumed %s MB/s,\n'
                   '-- plus %s of foreign-key validation scans at 4 times that rate; setting bigint_migration.rewrite_mb_per_second)\n\n',
                   ceil((est_bytes + fk_bytes / 4) / (mbps * 1048576)),
                   pg_size_pretty(est_bytes), mbps, pg_size_pretty(fk_bytes));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_header(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'The comment header of a blocking script: columns, tables and sizes, locks, foreign keys, sequences, objects re-created, function hazards, estimated duration.';

-- The session settings of a blocking script, and its BEGIN.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_settings()
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  s          text := '';
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
BEGIN
  s := s || E'\\set ON_ERROR_STOP on\n';
  s := s || format(E'SET lock_timeout = %L;\n', lt);
  s := s || E'SET statement_timeout = 0;     -- the rewrite may take long; lock waits are bounded by lock_timeout\n';
  s := s || E'SET check_function_bodies = off;   -- functions are re-created as they were, like pg_dump does\n\n';
  s := s || E'BEGIN;\nSET LOCAL search_path = pg_catalog, pg_temp;   -- every name below is schema-qualified; LOCAL: the session keeps its own\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_settings() IS
  'The session settings of a blocking script, and its BEGIN.';

-- The lines of a DO block that add to its array problems each view or
-- materialized view of objs that was redefined since generation (its
-- definition, options, owner, privileges or comment): the scripts drop
-- them and create them again from their definitions then, so a
-- CREATE OR REPLACE VIEW, a grant or a comment made since would be undone.
CREATE FUNCTION storagelab_internal.bigint_migration_view_checks(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(string_agg(format(E'  IF (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, %L)))\n'
                                    '        FROM pg_class c WHERE c.oid = to_regclass(%L)) IS DISTINCT FROM %L THEN\n'
                                    '    problems := problems || %L::text;\n  END IF;\n',
                                    'pg_class', storagelab_internal.bigint_migration_qname(x.relation),
                                    (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, 'pg_class')))
                                       FROM pg_class c WHERE c.oid = x.relation),
                                    x.identity || ' was redefined (its definition, owner, privileges or comment)'),
                             '' ORDER BY x.identity), '')
    FROM unnest($1) x WHERE x.kind IN ('view', 'materialized_view') AND x.drop_sql IS NOT NULL
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_view_checks(storagelab.bigint_migration_object[]) IS
  'lines of a DO block adding to its problems array each view or materialized view of objs redefined since generation (definition, options, owner, privileges, comment), which a script would re-create as it was';

-- The pre-flight DO block of a blocking script: the database still looks as it did at generation, the role may do every step, no long transaction or anti-wraparound vacuum holds the tables.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_preflight(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  body       text;
  max_age    text := storagelab_internal.setting('bigint_migration.max_blocking_transaction_age');
BEGIN
  body := E'\nDECLARE\n  problems text[] := ''{}'';\n  who text;\nBEGIN\n'
       || E'  -- the database must still look as it did when this script was generated\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped\n'
                           '                 AND atttypid = %L::regtype) THEN\n'
                           '    problems := problems || %L::text;\n  END IF;\n',
                           storagelab_internal.bigint_migration_qname(o.relation), o.column_name,
                           (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name),
                           format('column %s is no longer %s', o.identity,
                                  (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name)));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('foreign_key', 'view', 'materialized_view', 'rule', 'trigger', 'policy', 'function', 'publication_table', 'generated_column')
              AND x.check_sql IS NOT NULL AND x.drop_sql IS NOT NULL
            ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n',
                           o.check_sql, o.identity || ' is missing or changed');
  END LOOP;
  body := body || storagelab_internal.bigint_migration_view_checks(objs);
  -- objects that make ALTER COLUMN TYPE fail (views, rules, triggers,
  -- policies, publications, functions, generated columns) or that would be
  -- left out (foreign keys), created on the converted columns since generation
  body := body || format(E'  SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, 0), ''; '') INTO who\n'
                         '    FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid\n'
                         '   WHERE d.refclassid = ''pg_class''::regclass AND d.deptype IN (''n'', ''a'')\n'
                         '     AND (d.refobjid, a.attname) IN (%s)\n'
                         '     AND d.classid IN (''pg_rewrite''::regclass, ''pg_trigger''::regclass, ''pg_policy''::regclass, ''pg_publication_rel''::regclass,\n'
                         '                       ''pg_proc''::regclass, ''pg_attrdef''::regclass, ''pg_constraint''::regclass)\n'
                         '     AND NOT (d.classid = ''pg_constraint''::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = d.objid AND c.contype = ''f''))\n'
                         '     AND format(''%%s:%%s'', d.classid, d.objid) <> ALL (ARRAY[%s]::text[]);\n'
                         '  IF who IS NOT NULL THEN\n    problems := problems || (''new objects depend on the columns to convert: '' || who);\n  END IF;\n',
                         (SELECT string_agg(format('(to_regclass(%L)::oid, %L::name)', storagelab_internal.bigint_migration_qname(x.relation), x.column_name), ', ' ORDER BY x.identity)
                            FROM unnest(objs) x WHERE x.kind = 'column'),
                         coalesce((SELECT string_agg(DISTINCT format('%L', format('%s:%s', d.classid, d.objid)), ', ')
                                     FROM unnest(objs) x
                                     JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
                                     JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                                    WHERE x.kind = 'column' AND d.deptype IN ('n', 'a')), ''));
  body := body || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
       || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'            HINT = ''Generate the script again with storagelab.bigint_migration_script().'';\n  END IF;\n'
       || E'  -- the role running the script must be able to do every step: own (be a member of the owner of)\n'
       || E'  -- every object it alters, drops or re-creates, and have CREATE on the schemas it re-creates them in\n'
       || format(E'  SELECT string_agg(x, ''; '') INTO who FROM (\n'
                 '    SELECT format(''%%s (owner %%s)'', c.oid::regclass, pg_get_userbyid(c.relowner)) AS x\n'
                 '      FROM pg_class c WHERE c.oid = ANY (ARRAY[%s]::regclass[]) AND NOT pg_has_role(c.relowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''function %%s (owner %%s)'', p.oid::regprocedure, pg_get_userbyid(p.proowner))\n'
                 '      FROM pg_proc p WHERE p.oid = ANY (ARRAY[%s]::regprocedure[]) AND NOT pg_has_role(p.proowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''publication %%I (owner %%s)'', b.pubname, pg_get_userbyid(b.pubowner))\n'
                 '      FROM pg_publication b WHERE b.pubname = ANY (ARRAY[%s]::name[]) AND NOT pg_has_role(b.pubowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''schema %%I (no CREATE privilege)'', n.nspname)\n'
                 '      FROM pg_namespace n WHERE n.nspname = ANY (ARRAY[%s]::name[]) AND NOT has_schema_privilege(n.oid, ''CREATE'')) y;\n',
                 coalesce((SELECT string_agg(format('%L', q), ', ' ORDER BY q) FROM (
                             SELECT DISTINCT storagelab_internal.bigint_migration_qname(x.relation) AS q FROM unnest(objs) x WHERE x.relation IS NOT NULL
                             UNION
                             SELECT storagelab_internal.bigint_migration_qname(x.objid) FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL) z), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', x.objid::regprocedure::text), ', ')
                             FROM unnest(objs) x WHERE x.kind IN ('function', 'trigger_function', 'widened_function')), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', b.pubname), ', ')
                             FROM unnest(objs) x JOIN pg_publication_rel pr ON pr.oid = x.objid JOIN pg_publication b ON b.oid = pr.prpubid
                            WHERE x.kind = 'publication_table'), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', n.nspname), ', ')
                             FROM unnest(objs) x
                             JOIN pg_namespace n ON n.oid = CASE WHEN x.kind IN ('view', 'materialized_view') THEN (SELECT relnamespace FROM pg_class WHERE oid = x.objid)
                                                                 WHEN x.kind IN ('function', 'widened_function') THEN (SELECT pronamespace FROM pg_proc WHERE oid = x.objid)
                                                                 WHEN x.kind = 'statistics' THEN (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = x.objid) END
                            WHERE x.create_sql IS NOT NULL), ''))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''the role running this script cannot do every step of it''\n'
       || E'      USING ERRCODE = ''insufficient_privilege'', DETAIL = who,\n'
       || E'            HINT = ''Run the script as a superuser, or as a role that owns these objects (and may create objects in these schemas).'';\n  END IF;\n'
       || E'  -- a long-running transaction holding a lock on these tables would make every lock attempt time out\n'
       || format(E'  SELECT string_agg(DISTINCT format(''pid %%s (transaction started %%s ago, state %%s)'', a.pid, now() - a.xact_start, a.state), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid\n'
                 '   WHERE l.pid <> pg_backend_pid() AND l.relation = ANY (ARRAY[%s]::regclass[])\n'
                 '     AND a.xact_start < now() - %L::interval;\n',
                 (SELECT string_agg(format('%L', storagelab_internal.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x),
                 max_age)
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''long-running transactions hold locks on tables this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Wait for them to finish or end them (pg_cancel_backend / pg_terminate_backend), then run the script again.'';\n  END IF;\n'
       || E'  -- an anti-wraparound autovacuum does not give way to the ACCESS EXCLUSIVE lock\n'
       || format(E'  SELECT string_agg(format(''pid %%s on %%s'', v.pid, v.relid::regclass), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_stat_progress_vacuum v JOIN pg_stat_activity a ON a.pid = v.pid\n'
                 '   WHERE v.relid = ANY (ARRAY[%s]::regclass[]) AND a.query LIKE ''%%to prevent wraparound%%'';\n',
                 (SELECT string_agg(format('%L', storagelab_internal.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''an anti-wraparound autovacuum is running on a table this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Let it finish (it does not yield its lock), then run the script again.'';\n  END IF;\n'
       || E'END\n';
  s := s || E'-- Pre-flight checks (no locks taken yet beyond catalog reads).\n'
         || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_preflight(storagelab.bigint_migration_object[]) IS
  'The pre-flight DO block of a blocking script: the database still looks as it did at generation, the role may do every step, no long transaction or anti-wraparound vacuum holds the tables.';

-- Locks every table of a blocking script in one statement, retried on lock_timeout.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_locks(lock_list text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := E'-- Lock every table, in one order, all or none; retried on lock_timeout.\n'
       || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_locks(text) IS
  'Locks every table of a blocking script in one statement, retried on lock_timeout.';

-- Drops, dependents first, the objects that would make ALTER COLUMN TYPE fail, then the foreign keys of the component.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_drops(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'-- Drop the objects that would make ALTER COLUMN TYPE fail (dependents first).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key') AND x.drop_sql IS NOT NULL
            ORDER BY x.depth DESC, x.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.drop_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;
  s := s || E'\n-- Drop the foreign keys of the component (ACCESS EXCLUSIVE on both tables, held already).\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_drops(storagelab.bigint_migration_object[]) IS
  'Drops, dependents first, the objects that would make ALTER COLUMN TYPE fail, then the foreign keys of the component.';

-- The type changes (one ALTER TABLE per table, generated columns re-added in it), the sequences, and the foreign keys re-added.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_convert(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'\n-- Convert: one ALTER TABLE per table, so each table and its indexes are rewritten once.\n';
  FOR r IN
    SELECT x.relation, storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 2
  LOOP
    s := s || format(E'ALTER TABLE %s\n  ', r.qn)
           || (SELECT string_agg(c, E',\n  ' ORDER BY ord, c)
                 FROM (SELECT 1 AS ord, x.drop_sql AS c FROM unnest(objs) x WHERE x.kind = 'generated_column' AND x.relation = r.relation
                       UNION ALL
                       SELECT 2, x.create_sql FROM unnest(objs) x WHERE x.kind = 'column' AND x.relation = r.relation AND x.create_sql IS NOT NULL
                       UNION ALL
                       SELECT 3, x.create_sql FROM unnest(objs) x WHERE x.kind = 'generated_column' AND x.relation = r.relation) y)
           || E';\n'
           || coalesce((SELECT string_agg(x.post_sql, '' ORDER BY x.identity) FROM unnest(objs) x
                         WHERE x.kind = 'generated_column' AND x.relation = r.relation), '');
  END LOOP;

  s := s || E'\n-- Sequences (SHARE ROW EXCLUSIVE on each sequence).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity LOOP
    s := s || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none: identity sequences follow ALTER COLUMN TYPE)\n'; END IF;

  s := s || E'\n-- Re-add the foreign keys with their names, actions, deferrability and comments; each is validated once here.\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || o.create_sql;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_convert(storagelab.bigint_migration_object[]) IS
  'The type changes (one ALTER TABLE per table, generated columns re-added in it), the sequences, and the foreign keys re-added.';

-- Re-creates the dropped objects in dependency order, then touches the trigger functions so that other sessions re-plan them.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_recreate(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'\n-- Re-create the dropped objects exactly as they were (in dependency order).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;

  s := s || E'\n-- Make other sessions re-plan the trigger functions of the converted tables (their cached plans\n'
         || E'-- have integer parameters); COST is set to its current value, nothing else changes.\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity LOOP
    s := s || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_recreate(storagelab.bigint_migration_object[]) IS
  'Re-creates the dropped objects in dependency order, then touches the trigger functions so that other sessions re-plan them.';

-- The post-check DO block of a blocking script: every row's check_sql holds, no constraint on a converted table is left not valid; else the transaction rolls back.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(objs storagelab.bigint_migration_object[], all_tables text[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  body       text;
BEGIN
  body := E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.check_sql IS NOT NULL ORDER BY x.kind, x.identity LOOP
    body := body || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n',
                           o.check_sql,
                           CASE o.kind WHEN 'column' THEN o.identity || ' is not bigint'
                                       WHEN 'sequence' THEN o.identity || ' is not bigint'
                                       WHEN 'identity' THEN o.identity || ' is not bigint'
                                       ELSE o.identity || ' was not re-created as it was' END);
  END LOOP;
  body := body || format(E'  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ANY (ARRAY[%s]::regclass[]) AND NOT convalidated\n'
                         '               AND conname <> ALL (ARRAY[%s]::name[])) THEN\n'
                         '    problems := problems || ''a constraint on a converted table is not valid''::text;\n  END IF;\n',
                         (SELECT string_agg(format('%L', t), ', ') FROM unnest(all_tables) t),
                         coalesce((SELECT string_agg(format('%L', c.conname), ', ')
                                     FROM pg_constraint c
                                    WHERE c.conrelid IN (SELECT x.relation FROM unnest(objs) x) AND NOT c.convalidated), ''));
  body := body || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''post-migration check failed; rolling back''\n'
       || E'      USING ERRCODE = ''data_exception'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'            HINT = ''Nothing was changed.  Report this with the script and storagelab.bigint_migration_objects() output.'';\n  END IF;\nEND\n';
  s := s || E'\n-- Post-checks: every converted column and sequence is bigint, every object is back, constraints valid.\n'
         || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(storagelab.bigint_migration_object[], text[]) IS
  'The post-check DO block of a blocking script: every row''s check_sql holds, no constraint on a converted table is left not valid; else the transaction rolls back.';

-- COMMIT (ROLLBACK with -v dry_run=1), then ANALYZE of every rewritten table.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_finish(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
BEGIN
  -- -v dry_run=1: everything above, then ROLLBACK (try it on a schema-only copy first)
  s := s || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n';
  s := s || E'-- ALTER COLUMN TYPE discards the column statistics: gather them again (SHARE UPDATE EXCLUSIVE, no blocking of DML).\n';
  FOR r IN
    SELECT storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 1
  LOOP
    s := s || format(E'ANALYZE %s;\n', r.qn);
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_finish(storagelab.bigint_migration_object[]) IS
  'COMMIT (ROLLBACK with -v dry_run=1), then ANALYZE of every rewritten table.';

-- The blocking script of a model: refuses when the model has blockers or
-- nothing to convert, applies function_hazards (part 28: may refuse too),
-- else the sections above in order, with the plpgsql_check comparison
-- (part 28) after the locks and before COMMIT.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_script(objs storagelab.bigint_migration_object[],
                                                                     relations regclass[], column_names name[],
                                                                     function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  lock_list  text;
  all_tables text[];
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  -- Tables: every table whose columns change or that carries a re-created object.
  all_tables := ARRAY(SELECT DISTINCT storagelab_internal.bigint_migration_qname(x.relation)
                        FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  -- LOCK TABLE recurses to partitions and inheritance children: name only the others.
  lock_list := (SELECT string_agg(t, ', ' ORDER BY t) FROM unnest(all_tables) t
                 WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i
                                    WHERE i.inhrelid = t::regclass
                                      AND storagelab_internal.bigint_migration_qname(i.inhparent) = ANY (all_tables)));
  RETURN storagelab_internal.bigint_migration_blocking_header(objs, relations, column_names, lock_list, function_hazards)
      || storagelab_internal.bigint_migration_blocking_settings()
      || storagelab_internal.bigint_migration_blocking_preflight(objs)
      || storagelab_internal.bigint_migration_blocking_locks(lock_list)
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before')   -- part 28
      || storagelab_internal.bigint_migration_blocking_drops(objs)
      || storagelab_internal.bigint_migration_blocking_convert(objs)
      || storagelab_internal.bigint_migration_blocking_recreate(objs)
      || storagelab_internal.bigint_migration_blocking_postchecks(objs, all_tables)
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after')   -- part 28
      || storagelab_internal.bigint_migration_blocking_finish(objs);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the blocking INT->BIGINT script of a model under a choice of function_hazards: one transaction, sections header to finish';

-- Refuses, listing every blocker, when no correct script can be produced:
-- the model's blocker rows plus what the writer of that mode cannot do
-- (more_blockers); also when nothing is left to convert.
CREATE FUNCTION storagelab_internal.bigint_migration_refuse(objs storagelab.bigint_migration_object[], more_blockers text[], mode text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  blockers text[];
  codes    text[];
BEGIN
  blockers := ARRAY(SELECT format('%s (SQLSTATE %s): %s', b.blocker, b.sqlstate, b.hint)
                      FROM unnest(objs) b WHERE b.kind = 'blocker' ORDER BY b.identity, b.blocker);
  codes := ARRAY(SELECT DISTINCT b.sqlstate FROM unnest(objs) b WHERE b.kind = 'blocker');
  IF mode = 'blocking' AND cardinality(blockers) > 0 THEN
    RAISE EXCEPTION 'cannot generate a correct INT to BIGINT migration: % blocker(s)', cardinality(blockers)
      USING ERRCODE = CASE WHEN cardinality(codes) = 1 THEN codes[1] ELSE '0A000' END,
            DETAIL = array_to_string(blockers, E'\n'),
            HINT = 'Resolve each blocker listed in the detail (storagelab.bigint_migration_objects() shows them with kind ''blocker'') and generate the script again.';
  ELSIF cardinality(blockers || more_blockers) > 0 THEN
    RAISE EXCEPTION 'cannot generate a correct shadow-mode INT to BIGINT migration: % blocker(s)', cardinality(blockers || more_blockers)
      USING ERRCODE = 'feature_not_supported',
            DETAIL = array_to_string(blockers || more_blockers, E'\n'),
            HINT = 'Resolve each blocker listed in the detail, or use mode ''online'' (copy and swap) or ''blocking''.';
  END IF;
  IF mode = 'blocking' AND NOT EXISTS (SELECT 1 FROM unnest(objs) x
                                        WHERE x.kind IN ('column', 'sequence') AND x.create_sql IS NOT NULL) THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component and its sequences are already bigint'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'storagelab.bigint_migration_objects() lists the component.';
  ELSIF mode = 'online' AND NOT EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL) THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component is already bigint'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'storagelab.bigint_migration_objects() lists the component.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_refuse(storagelab.bigint_migration_object[], text[], text) IS
  'raises the error that lists every blocker of a model (and of the mode), or that nothing is left to convert';

-- from extension/24_bigint_online_model.sql
-- storagelab install script, part 24: what the online INT -> BIGINT phases
-- (part 25) need, derived once from the model rows of part 21: the
-- converted columns and their shadow columns, the trees of partitions and
-- inheritance children, the indexes and keys to build on the shadow columns,
-- and the reasons the online mode refuses.  Also the new index's DDL, from
-- the old index's definition in the model.


CREATE TYPE storagelab_internal.bigint_online_model AS (
  objs         storagelab.bigint_migration_object[],  -- the model rows
  relations    regclass[],   -- the requested columns
  column_names name[],
  mid          text,         -- migration id: sl + 12 hex digits of a hash of the converted columns
  c_rel        oid[],        -- per converted column: its table,
  c_att        int2[],       --   column number,
  c_name       name[],       --   name,
  c_new        name[],       --   shadow column,
  c_old        name[],       --   name of the old column after the swap,
  c_nn         boolean[],    --   NOT NULL
  tabs         oid[],        -- tables with converted columns (roots of their trees)
  tree         oid[],        -- those tables, their partitions and inheritance children
  leaves       oid[],        -- members of tree with storage (backfilled one by one)
  targets      oid[],        -- where the sync trigger is created (partitions get clones)
  t_rel        oid[],        -- per member of tree and converted column: relation,
  t_att        int2[],       --   its column number there,
  t_new        name[],       --   the shadow column,
  t_name       name[],       --   the column name,
  t_root       oid[],        --   the root whose ALTER converts it
  late_idx     oid[],        -- indexes using the column in an expression or predicate: re-built after the swap
  late_chk     oid[],        -- CHECK constraints on the column: re-added NOT VALID in the swap, validated in cleanup
  fk_oid       oid[],        -- per new foreign key: the old one (of the component),
  fk_rel       oid[],        --   the table it is added to (each partition, for a key on a partitioned table),
  fk_new       name[],       --   its name until the swap,
  fk_final     name[],       --   its name after the swap
  lock_list    text,         -- every table, for LOCK TABLE
  pre          text          -- PL/pgSQL statements that set "swapped" once the swap has happened
);
COMMENT ON TYPE storagelab_internal.bigint_online_model IS
  'what the phases of an online INT->BIGINT script need, derived once from the model';

-- The online model of mode 'shadow': refuses (with every reason) what the shadow mode cannot do.
CREATE FUNCTION storagelab_internal.bigint_migration_online_model(objs storagelab.bigint_migration_object[],
                                                                  relations regclass[], column_names name[])
RETURNS storagelab_internal.bigint_online_model
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m            storagelab_internal.bigint_online_model;
  o            storagelab.bigint_migration_object;
  r            record;
  q            record;
  i            int;
  blockers     text[] := '{}';
  all_tables   text[];
  mid          text;
  c_rel        oid[] := '{}';
  c_att        int2[] := '{}';
  c_name       name[] := '{}';
  c_new        name[] := '{}';
  c_old        name[] := '{}';
  c_nn         boolean[] := '{}';
  tabs         oid[] := '{}';
  tree         oid[] := '{}';
  leaves       oid[] := '{}';
  targets      oid[] := '{}';
  t_rel        oid[] := '{}';
  t_att        int2[] := '{}';
  t_new        name[] := '{}';
  t_name       name[] := '{}';
  t_root       oid[] := '{}';
  late_idx     oid[] := '{}';
  late_chk     oid[] := '{}';
  fk_oid       oid[] := '{}';
  fk_rel       oid[] := '{}';
  fk_new       name[] := '{}';
  fk_final     name[] := '{}';
  lock_list    text;
  pre          text;
BEGIN
  -- Blockers of the model itself, then what the online plan cannot do yet.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'blocker' LOOP
    blockers := blockers || format('%s (SQLSTATE %s): %s', o.blocker, o.sqlstate, o.hint);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind = 'generated_column'
               OR (b.kind = 'identity' AND (EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = b.relation OR h.inhparent = b.relation)
                                            OR (SELECT relkind FROM pg_class WHERE oid = b.relation) <> 'r'))
               OR (b.kind = 'constraint' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = b.objid AND c.contype NOT IN ('p', 'u', 'c', 'n')))   -- 'n': NOT NULL, PostgreSQL 18+
  LOOP
    blockers := blockers || format('%s: %s is not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', o.identity, o.kind);
  END LOOP;
  -- Converted columns.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'column' AND b.create_sql IS NOT NULL ORDER BY b.relation::oid, b.objsubid LOOP
    c_rel := c_rel || o.relation::oid; c_att := c_att || o.objsubid::int2; c_name := c_name || o.column_name;
    c_new := c_new || format('storagelab_new_%s', o.objsubid)::name;
    c_old := c_old || format('storagelab_old_%s', o.objsubid)::name;
    c_nn := c_nn || (SELECT attnotnull FROM pg_attribute WHERE attrelid = o.relation AND attnum = o.objsubid);
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = o.relation AND NOT attisdropped
                  AND attname IN (format('storagelab_new_%s', o.objsubid), format('storagelab_old_%s', o.objsubid))) THEN
      -- a previous run of this very migration left them: fine, phases are re-runnable
      NULL;
    END IF;
  END LOOP;
  tabs := ARRAY(SELECT DISTINCT u FROM unnest(c_rel) u ORDER BY 1);
  FOR i IN 1 .. cardinality(c_rel) LOOP
    FOR r IN
      WITH RECURSIVE tr(oid) AS (SELECT c_rel[i] UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
      SELECT tr.oid, a.attnum FROM tr JOIN pg_attribute a ON a.attrelid = tr.oid AND a.attname = c_name[i] AND NOT a.attisdropped
       ORDER BY 1
    LOOP
      t_rel := t_rel || r.oid; t_att := t_att || r.attnum; t_new := t_new || c_new[i]; t_name := t_name || c_name[i];
      t_root := t_root || c_rel[i];
    END LOOP;
  END LOOP;
  tree := ARRAY(SELECT DISTINCT u FROM unnest(t_rel) u ORDER BY 1);
  late_chk := ARRAY(SELECT c.oid FROM pg_constraint c
                     WHERE c.contype = 'c' AND c.conrelid = ANY (tree) AND c.coninhcount = 0
                       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
                     ORDER BY 1);
  leaves := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind = 'r' ORDER BY 1);
  targets := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1);
  FOR r IN SELECT c.oid, storagelab_internal.bigint_migration_qname(c.oid) AS qn FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind NOT IN ('r', 'p') LOOP
    blockers := blockers || format('%s is a foreign table in the tree of a converted table: not supported by the shadow mode (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, storagelab_internal.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.confrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') AND t.relkind = 'p'
  LOOP
    blockers := blockers || format('foreign key %I on %s references the partitioned table %s, whose new unique key exists only after the swap: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.conname, r.qn, r.fqn);
  END LOOP;
  -- the new foreign keys: PostgreSQL 15 cannot add one NOT VALID to a partitioned table, so a key
  -- of a partitioned table is added to each partition, and in the swap to the parent, which
  -- attaches the partitions' validated keys without a scan
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, t.relkind FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') ORDER BY 1
  LOOP
    IF r.relkind = 'p' THEN
      FOR q IN
        WITH RECURSIVE tr(oid) AS (SELECT r.conrelid UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
        SELECT tr.oid, (SELECT cc.conname FROM pg_constraint cc WHERE cc.conrelid = tr.oid AND cc.conparentid = r.oid) AS clone
          FROM tr JOIN pg_class k ON k.oid = tr.oid WHERE k.relkind = 'r' ORDER BY 1
      LOOP
        fk_oid := fk_oid || r.oid; fk_rel := fk_rel || q.oid;
        fk_new := fk_new || format('storagelab_new_%s_%s', r.oid, q.oid)::name; fk_final := fk_final || coalesce(q.clone, r.conname);
      END LOOP;
    ELSE
      fk_oid := fk_oid || r.oid; fk_rel := fk_rel || r.conrelid;
      fk_new := fk_new || format('storagelab_new_%s', r.oid)::name; fk_final := fk_final || r.conname;
    END IF;
  END LOOP;

  -- Indexes containing a converted column: their key columns must be plain
  -- columns (an expression or a predicate using the column cannot be moved
  -- by name).
  FOR r IN
    SELECT DISTINCT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn
      FROM pg_index i
      JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid AND d.refclassid = 'pg_class'::regclass
      JOIN unnest(t_rel, t_att) AS cc(r, a) ON cc.r = d.refobjid AND cc.a = d.refobjsubid
     WHERE i.indrelid = ANY (tree)
  LOOP
    IF (SELECT count(*) FROM pg_depend d, unnest(t_rel, t_att) AS cc(r, a)
         WHERE d.classid = 'pg_class'::regclass AND d.objid = r.indexrelid AND d.refobjid = cc.r AND d.refobjsubid = cc.a)
       > (SELECT count(*) FROM pg_index i, unnest(i.indkey::int2[]) AS kk(v), unnest(t_rel, t_att) AS cc(r, a)
           WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a = kk.v) THEN
      IF (SELECT i.indisunique OR i.indisreplident OR ic.relkind = 'I' FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indexrelid = r.indexrelid) THEN
        blockers := blockers || format('index %s uses a converted column in an expression or predicate and is unique, partitioned or the replica identity: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
      ELSE
        late_idx := late_idx || r.indexrelid;
      END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i, unnest(i.indkey::int2[], i.indclass::oid[]) WITH ORDINALITY AS u(a, opc, n), unnest(t_rel, t_att) AS cc(r, a2)
                WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a2 = u.a AND u.n <= i.indnkeyatts
                  AND NOT EXISTS (SELECT 1 FROM pg_opclass oc WHERE oc.oid = u.opc AND oc.opcdefault)) THEN
      blockers := blockers || format('index %s uses a non-default operator class on a converted column: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype = 'x') THEN
      blockers := blockers || format('index %s backs an exclusion constraint: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
    END IF;
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.contype = 'f' AND c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key')
       AND c.confdelsetcols IS NOT NULL
  LOOP
    blockers := blockers || format('foreign key %I on %s uses ON DELETE SET NULL/DEFAULT (columns): not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.conname, r.qn);
  END LOOP;

  PERFORM storagelab_internal.bigint_migration_refuse(objs, blockers, 'online');

  mid := 'sl' || left(md5(array_to_string(ARRAY(SELECT format('%s.%s', a, b) FROM unnest(c_rel, c_att) AS u(a, b) ORDER BY 1), ',')), 12);
  all_tables := ARRAY(SELECT DISTINCT storagelab_internal.bigint_migration_qname(x1.relation)
                        FROM unnest(objs) x1 JOIN pg_class c ON c.oid = x1.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  lock_list := array_to_string(all_tables, ', ');

  -- a state check used by several phases: has the swap happened?
  pre := '';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    pre := pre || format(E'  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped) THEN swapped := true; END IF;\n',
                         storagelab_internal.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;
  m := ROW(objs, relations, column_names, mid, c_rel, c_att, c_name, c_new, c_old, c_nn, tabs, tree, leaves, targets, t_rel, t_att, t_new, t_name, t_root, late_idx, late_chk, fk_oid, fk_rel, fk_new, fk_final, lock_list, pre);
  RETURN m;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_model(storagelab.bigint_migration_object[], regclass[], name[]) IS
  'derives what the online phases need from the model rows; refuses, listing every reason, what the shadow mode cannot do';

-- The elements of a parenthesized, comma-separated list that starts at
-- position pos of def (just after its "("), as PostgreSQL's deparsers print
-- it: commas inside parentheses, quoted identifiers and string literals do
-- not separate elements.  Returns the elements and the position just after
-- the closing ")".
CREATE FUNCTION storagelab_internal.bigint_migration_split_list(def text, pos int, OUT elems text[], OUT next_pos int)
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  depth int := 0;
  quote text := NULL;      -- '"' or '''' while inside one
  ch text;
  start int := pos;
  i int := pos;
BEGIN
  elems := '{}';
  WHILE i <= length(def) LOOP
    ch := substr(def, i, 1);
    IF quote IS NOT NULL THEN
      IF ch = quote THEN
        IF substr(def, i + 1, 1) = quote THEN
          i := i + 1;               -- a doubled quote inside the quoted text
        ELSE
          quote := NULL;
        END IF;
      END IF;
    ELSIF ch IN ('"', '''') THEN
      quote := ch;
    ELSIF ch = '(' OR ch = '[' THEN
      depth := depth + 1;
    ELSIF (ch = ')' OR ch = ']') AND depth > 0 THEN
      depth := depth - 1;
    ELSIF ch = ')' THEN
      elems := elems || substr(def, start, i - start);
      next_pos := i + 1;
      RETURN;
    ELSIF ch = ',' AND depth = 0 THEN
      elems := elems || substr(def, start, i - start);
      start := i + 2;               -- ", "
      i := i + 1;
    END IF;
    i := i + 1;
  END LOOP;
  RAISE EXCEPTION 'cannot read the column list of an index definition'
    USING ERRCODE = 'internal_error', DETAIL = def;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_split_list(text, int) IS
  'the top-level elements of a parenthesized list in a deparsed definition, and the position after it';

-- The DDL of a copy of index idx under the name new_name, from its
-- definition def (pg_get_indexdef, from the model): every column keeps its
-- ordering, NULLS FIRST/LAST, operator class, collation; INCLUDE columns,
-- NULLS NOT DISTINCT, storage parameters and the predicate are kept as
-- printed; the columns numbered renamed_atts become new_names.  With
-- concurrent, CREATE INDEX CONCURRENTLY.  The tablespace is added
-- (pg_get_indexdef does not print it).
CREATE FUNCTION storagelab_internal.bigint_migration_index_copy(def text, idx oid, new_name name, concurrent boolean,
                                                                renamed_atts int2[], new_names name[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix      record;
  head    text;
  mid     text;
  pos     int;
  keys    record;
  incl    record;
  elems   text[];
  k       int;
  att     int2;
  j       int;
  rest    text;
  pred    text;
BEGIN
  SELECT i.indisunique, i.indnkeyatts, i.indnatts, string_to_array(i.indkey::text, ' ')::int2[] AS indkey,
         ic.relname, ic.relkind, ic.reltablespace, am.amname, i.indrelid,
         pg_get_expr(i.indpred, i.indrelid) AS pred
    INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  head := format('CREATE %sINDEX %I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, ix.relname);
  -- "[ONLY ]table USING am (": the table is schema-qualified (search_path is
  -- pg_catalog, pg_temp here), except a temporary one; its name may contain
  -- anything, so it is matched whole where it can be
  mid := format('%s%s USING %I (', CASE WHEN ix.relkind = 'I' THEN 'ONLY ' ELSE '' END,
                storagelab_internal.bigint_migration_qname(ix.indrelid), ix.amname);
  IF substr(def, length(head) + 1, length(mid)) = mid THEN
    pos := length(head) + length(mid) + 1;
  ELSE
    pos := strpos(substr(def, length(head) + 1), format(' USING %I (', ix.amname));
    pos := CASE WHEN pos = 0 THEN 0 ELSE length(head) + pos + length(format(' USING %I (', ix.amname)) END;
  END IF;
  IF left(def, length(head)) <> head OR pos = 0 THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  SELECT * INTO keys FROM storagelab_internal.bigint_migration_split_list(def, pos);
  elems := keys.elems;
  rest := substr(def, keys.next_pos);
  IF starts_with(rest, ' INCLUDE (') THEN
    SELECT * INTO incl FROM storagelab_internal.bigint_migration_split_list(def, keys.next_pos + length(' INCLUDE ('));
    elems := elems || incl.elems;
    rest := substr(def, incl.next_pos);
  END IF;
  IF cardinality(elems) <> ix.indnatts THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  -- rename the plain columns that are converted: each element starts with the column's name
  FOR k IN 1 .. ix.indnatts LOOP
    att := ix.indkey[k];
    j := array_position(renamed_atts, att);
    CONTINUE WHEN att = 0 OR j IS NULL;
    pred := quote_ident((SELECT attname FROM pg_attribute WHERE attrelid = ix.indrelid AND attnum = att));
    IF NOT (elems[k] = pred OR starts_with(elems[k], pred || ' ')) THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    elems[k] := quote_ident(new_names[j]) || substr(elems[k], length(pred) + 1);
  END LOOP;
  -- the tablespace goes before the predicate
  IF ix.reltablespace <> 0 THEN
    pred := CASE WHEN ix.pred IS NULL THEN '' ELSE ' WHERE ' || ix.pred END;
    IF right(rest, length(pred)) <> pred THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    rest := left(rest, length(rest) - length(pred))
            || format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = ix.reltablespace)) || pred;
  END IF;
  RETURN format('CREATE %sINDEX %s%I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END,
                CASE WHEN concurrent THEN 'CONCURRENTLY ' ELSE '' END, new_name)
      || substr(def, length(head) + 1, pos - length(head) - 1)
      || array_to_string(elems[1:ix.indnkeyatts], ', ') || ')'
      || CASE WHEN ix.indnatts > ix.indnkeyatts
              THEN ' INCLUDE (' || array_to_string(elems[ix.indnkeyatts + 1:], ', ') || ')' ELSE '' END
      || rest;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_index_copy(text, oid, name, boolean, int2[], name[]) IS
  'DDL of a copy of an index under a new name, with some of its columns renamed, from its definition: every option of every column kept';

-- from extension/25_bigint_online.sql
-- storagelab install script, part 25: the shadow-column INT -> BIGINT
-- script (bigint_migration_script(..., mode => 'shadow'); it was mode
-- 'online' in 1.0, which is now copy and swap, part 63): one psql file in
-- phases, chosen with -v phase=..., one function per phase (or part of one):
--   expand    shadow bigint columns, a sync trigger, sequences AS bigint (brief locks)
--   backfill  CALLs of storagelab.bigint_migration_backfill (part 26), resumable
--   prepare   NOT NULL proofs, concurrent indexes, new FKs NOT VALID + VALIDATE
--   swap      one short transaction: renames, constraints USING INDEX, objects re-created
--   cleanup   drop the old columns
--   rollback_prepare, rollback_expand: undo, until swap
-- Every phase checks the state it needs and can be run again.  Each
-- function reads the online model (part 24) only.


-- The comment header and psql preamble of an online script: phases, columns, objects re-created, function hazards, phase selection.
CREATE FUNCTION storagelab_internal.bigint_migration_online_header(m storagelab_internal.bigint_online_model, function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  relations    regclass[] := m.relations;
  column_names name[] := m.column_names;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_old        name[] := m.c_old;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  i            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
BEGIN
  ------------------------------------------------------------------ header
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode shadow), migration id %s\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid);
  s := s || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
                 FROM unnest(relations, column_names) AS u(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_user)));
  s := s || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=expand   -f <this file>  -- shadow bigint columns, sync trigger, sequences AS bigint (brief ACCESS EXCLUSIVE, retried)\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=backfill -f <this file>  -- copy in batches (ROW EXCLUSIVE); resumes where it stopped; -v backfill_batches=N stops after N batches\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=prepare  -f <this file>  -- NOT NULL proofs, CREATE INDEX CONCURRENTLY, new FKs NOT VALID + VALIDATE (no blocking locks)\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE: the point of no return\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old int columns (brief ACCESS EXCLUSIVE)\n'
         || E'-- Before swap, undo with phase=rollback_prepare, then phase=rollback_expand.\n'
         || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n--\n';
  s := s || E'-- Columns converted (shadow column -> final name):\n';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(format('%s.%I via %I (old values kept in %I until cleanup)',
                storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i], c_new[i], c_old[i])) || E'\n';
  END LOOP;
  s := s || E'-- Objects dropped and re-created in the swap:\n';
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function')
                                          AND b.create_sql IS NOT NULL ORDER BY b.depth, b.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
  END LOOP;
  s := s || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards);   -- part 28
  s := s || E'\n\\set ON_ERROR_STOP on\n'
         || format(E'SET lock_timeout = %L;\n', lt)
         || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
         || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
         || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
         || E'SELECT :''phase'' = ''expand'' AS ph_expand, :''phase'' = ''backfill'' AS ph_backfill, :''phase'' = ''prepare'' AS ph_prepare,\n'
         || E'       :''phase'' = ''swap'' AS ph_swap, :''phase'' = ''cleanup'' AS ph_cleanup,\n'
         || E'       :''phase'' = ''rollback_prepare'' AS ph_rollback_prepare, :''phase'' = ''rollback_expand'' AS ph_rollback_expand \\gset\n'
         || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n';
  -- refuse an unknown phase
  s := s || E'SELECT :''phase'' NOT IN (''expand'', ''backfill'', ''prepare'', ''swap'', ''cleanup'', ''rollback_prepare'', ''rollback_expand'') AS ph_bad \\gset\n'
         || E'\\if :ph_bad\n\\echo ''choose a phase: psql -v ON_ERROR_STOP=1 -v phase=expand|backfill|prepare|swap|cleanup|rollback_prepare|rollback_expand -f <this file>''\n'
         || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=expand (then backfill, prepare, swap, cleanup).'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_header(storagelab_internal.bigint_online_model, text) IS
  'The comment header and psql preamble of an online script: phases, columns, objects re-created, function hazards, phase selection.';

-- Phase expand: shadow columns, sync function and trigger, backfill bounds, sequences AS bigint.
CREATE FUNCTION storagelab_internal.bigint_migration_online_expand(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  tabs         oid[] := m.tabs;
  leaves       oid[] := m.leaves;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_root       oid[] := m.t_root;
  pre          text := m.pre;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  x            text;
  k            int;
  stmts        text[];
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ expand
  s := s || E'\\if :ph_expand\n-- Phase expand.\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n'
            || (SELECT string_agg(format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND atttypid IN (''int2''::regtype, ''int4''::regtype)) THEN\n'
                                         '    RAISE EXCEPTION ''column %%.%% is not an integer column any more'', %L, %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n  END IF;\n',
                                         storagelab_internal.bigint_migration_qname(u.r), u.nm, storagelab_internal.bigint_migration_qname(u.r), u.nm), '')
                  FROM unnest(c_rel, c_name) AS u(r, nm))
            || E'END\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    stmts := ARRAY[format('ALTER TABLE %s %s', x,
                          (SELECT string_agg(format('ADD COLUMN IF NOT EXISTS %I bigint', u.nw), ', ')
                             FROM unnest(c_rel, c_new) AS u(r, nw) WHERE u.r = tabs[k])),
                   format(E'CREATE OR REPLACE FUNCTION %I.%I() RETURNS trigger LANGUAGE plpgsql AS %s',
                          (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                          format('storagelab_sync_%s_%s', mid, tabs[k]),
                          storagelab_internal.dollar_quote(
                            E'\nBEGIN\n'
                            || (SELECT string_agg(format(E'  NEW.%I := NEW.%I;\n', u.nw, u.nm), '')
                                  FROM unnest(c_rel, c_new, c_name) AS u(r, nw, nm) WHERE u.r = tabs[k])
                            || E'  RETURN NEW;\nEND\n'))];
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(x) || E': shadow columns (added to partitions and children too) and the sync function\n'
           || storagelab_internal.retry_block(stmts, retries);
  END LOOP;
  -- the sync trigger: on each table that is not a partition (partitions get
  -- clones of their parent's trigger); named zz_... so that it fires after
  -- the application's own BEFORE triggers.  Its WHEN clause (a shadow column
  -- differs from its original) is evaluated just before the function would
  -- run, on NEW as the earlier triggers left it, so the function runs only
  -- when it has something to copy: INSERTs, UPDATEs of the key, UPDATEs of a
  -- row not yet backfilled; not for the backfill's own UPDATEs (without
  -- superuser rights they fire triggers) or rows already in sync.  Either
  -- way NEW leaves the trigger with every shadow column equal to its original.
  FOR r IN
    SELECT DISTINCT u.r2, u.root FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.r2 = ANY (targets) ORDER BY 1, 2
  LOOP
    x := storagelab_internal.bigint_migration_qname(r.r2);
    s := s || storagelab_internal.retry_block(ARRAY[
                format('DROP TRIGGER IF EXISTS %I ON %s', format('zz_storagelab_sync_%s_%s', mid, r.root), x),
                format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW WHEN (%s) EXECUTE FUNCTION %I.%I()',
                       format('zz_storagelab_sync_%s_%s', mid, r.root), x,
                       (SELECT string_agg(format('NEW.%I IS DISTINCT FROM NEW.%I', u.nw, u.nm), ' OR ' ORDER BY u.nw)
                          FROM unnest(c_rel, c_new, c_name) AS u(r3, nw, nm) WHERE u.r3 = r.root),
                       (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = r.root)),
                       format('storagelab_sync_%s_%s', mid, r.root))], retries);
  END LOOP;
  -- the backfill bound of each table with storage: its size once the trigger exists
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(leaves))) LOOP
    x := storagelab_internal.bigint_migration_qname(leaves[k]);
    s := s || format(E'INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block)\n'
                     '  VALUES (%L, %L, pg_relation_size(%L) / current_setting(''block_size'')::bigint)\n'
                     '  ON CONFLICT (migration, relation) DO NOTHING;\n', mid, x, x);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'sequence' AND b.create_sql IS NOT NULL ORDER BY b.identity LOOP
    s := s || storagelab_internal.retry_block(ARRAY[o.create_sql], retries);
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_expand(storagelab_internal.bigint_online_model) IS
  'Phase expand: shadow columns, sync function and trigger, backfill bounds, sequences AS bigint.';

-- Phase backfill: one CALL of storagelab_internal.bigint_migration_backfill per table with storage.
CREATE FUNCTION storagelab_internal.bigint_migration_online_backfill(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  batch        int := greatest(storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int, 1);
  btime        numeric := greatest(round(extract(epoch FROM storagelab_internal.setting('bigint_migration.backfill_batch_time')::interval) * 1000), 0);
  pause        text := storagelab_internal.setting('bigint_migration.backfill_pause');
  mid          text := m.mid;
  leaves       oid[] := m.leaves;
  t_rel        oid[] := m.t_rel;
  t_new        name[] := m.t_new;
  t_name       name[] := m.t_name;
  r            record;
  s            text := '';
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := s || E'\\if :ph_backfill\n-- Phase backfill: one COMMIT per batch of heap blocks, bounded by the table size when the\n'
         || E'-- sync trigger was installed (later rows are written by the trigger); progress in\n'
         || E'-- storagelab.bigint_migration_progress, so an interrupted backfill resumes.  Each batch is\n'
         || CASE WHEN btime > 0 THEN format(E'-- sized so that its copy takes about %s ms (its row locks are held that long, plus the\n', btime)
                 ELSE format(E'-- %s heap blocks (backfill_batch_time = 0; its row locks are held until its\n', batch) END
         || E'-- COMMIT).  As a superuser the batches run with session_replication_role = replica, so that\n'
         || E'-- user triggers (last_update columns, audit) do not fire for the copy.\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(leaves))) LOOP
    s := s || format(E'CALL storagelab.bigint_migration_backfill(%L, %L, %L, %L, %s, %s, %L, %s);\n',
                     mid, storagelab_internal.bigint_migration_qname(leaves[k]),
                     ARRAY(SELECT u.nw FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k] ORDER BY u.nw),
                     ARRAY(SELECT u.nm FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k] ORDER BY u.nw),
                     btime, batch, pause, retries);
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_backfill(storagelab_internal.bigint_online_model) IS
  'Phase backfill: one CALL of storagelab_internal.bigint_migration_backfill per table with storage.';

-- Phase prepare, first part: the backfill is complete; the CHECK that proves the shadow columns exact (and NOT NULL), added NOT VALID and validated.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_checks(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_nn         boolean[] := m.c_nn;
  tabs         oid[] := m.tabs;
  leaves       oid[] := m.leaves;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  k            int;
  cols         text;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ prepare
  s := s || E'\\if :ph_prepare\n-- Phase prepare: nothing here blocks reads or writes for long.\n';
  -- the backfill must be complete and exact
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n'
            || format(E'  IF EXISTS (SELECT 1 FROM storagelab.bigint_migration_progress WHERE migration = %L AND NOT done)\n'
                      '     OR (SELECT count(*) FROM storagelab.bigint_migration_progress WHERE migration = %L) < %s THEN\n'
                      '    RAISE EXCEPTION ''the backfill is not complete'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase backfill (again).'';\n'
                      '  END IF;\n', mid, mid, cardinality(leaves))
            || E'END\n') || E';\n';
  -- The proof that the shadow columns are exact, and the NOT NULL proof, in
  -- one scan per table: a CHECK constraint (shadow = original, and shadow
  -- IS NOT NULL where the original is NOT NULL), added NOT VALID (brief
  -- ACCESS EXCLUSIVE, retried), then VALIDATEd (one scan under SHARE UPDATE
  -- EXCLUSIVE: reads and writes continue).  This replaces a separate
  -- comparison scan and is stronger: the comparison proved equality only at
  -- the moment it ran, while the constraint also holds every row written
  -- between prepare and swap, so a write that bypasses the sync trigger (a
  -- disabled trigger, session_replication_role = replica) fails instead of
  -- leaving a wrong value for the swap to keep.  The validated constraint
  -- also lets the swap's SET NOT NULL skip its scan (PostgreSQL proves
  -- NOT NULL from an AND of validated CHECK clauses).  The swap drops it.
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    cols := (SELECT string_agg(CASE WHEN u.nn THEN format('%I IS NOT NULL AND ', u.nw) ELSE '' END
                               || format('%I IS NOT DISTINCT FROM %I', u.nw, u.nm), ' AND ' ORDER BY u.nw)
               FROM unnest(c_rel, c_new, c_name, c_nn) AS u(r, nw, nm, nn) WHERE u.r = tabs[k]);
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(x) || E': the shadow columns equal the originals (and NOT NULL where they are)\n'
           || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                     x, format('storagelab_eq_%s', mid))
           || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s) NOT VALID', x, format('storagelab_eq_%s', mid), cols)], retries)
           || E'\\endif\n'
           || 'DO ' || storagelab_internal.dollar_quote(
                E'\nBEGIN\n'
                || storagelab_internal.retry_loop(
                     format(E'        EXECUTE %L;\n', format('ALTER TABLE %s VALIDATE CONSTRAINT %I', x, format('storagelab_eq_%s', mid))),
                     retries, 'Run this phase again later; it is safe to re-run.',
                     format(E'        WHEN check_violation THEN\n'
                            '          RAISE EXCEPTION ''shadow columns of %% differ from the originals'', %L USING ERRCODE = ''data_exception'', DETAIL = SQLERRM, HINT = %L;\n',
                            x, format('Check that the sync trigger is enabled and that no writer runs with session_replication_role = replica, then UPDATE storagelab.bigint_migration_progress SET done = false, next_block = 0, max_block = pg_relation_size(relation::regclass) / current_setting(''block_size'')::int WHERE migration = %L and run phase backfill again.', mid)))
                || E'END\n') || E';\n';
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_checks(storagelab_internal.bigint_online_model) IS
  'Phase prepare, first part: the backfill is complete; the CHECK that proves the shadow columns exact (and NOT NULL), added NOT VALID and validated.';

-- Phase prepare: the indexes of the shadow columns, concurrently, each a copy of its old index with every option.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_indexes(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  late_idx     oid[] := m.late_idx;
  r            record;
  q            record;
  s            text := '';
  x            text;
  i            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  -- indexes, concurrently
  FOR r IN
    SELECT i.indexrelid, i.indrelid, i.indisunique, i.indnkeyatts, i.indnatts,
           string_to_array(i.indkey::text, ' ')::int2[] AS keys, string_to_array(i.indoption::text, ' ')::int2[] AS opts,   -- 1-based
           i.indnullsnotdistinct, ic.reloptions, ic.reltablespace, am.amname,
           pg_get_expr(i.indpred, i.indrelid) AS pred,
           storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn, ic.relname,
           format('storagelab_new_%s', i.indexrelid) AS newname, ic.relkind,
           (SELECT nspname FROM pg_namespace WHERE oid = ic.relnamespace) AS nsp
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     -- indexes of tables with storage first, then partitioned ones, deepest first
     ORDER BY ic.relkind = 'I',
              (WITH RECURSIVE up(oid) AS (SELECT i.indrelid UNION SELECT h.inhparent FROM pg_inherits h JOIN up ON h.inhrelid = up.oid)
               SELECT count(*) FROM up) DESC, qn
  LOOP
    -- a copy of the old index on the shadow columns, from its definition in the model
    x := storagelab_internal.bigint_migration_index_copy(
           coalesce((SELECT b.definition FROM unnest(objs) b WHERE b.kind = 'index' AND b.objid = r.indexrelid LIMIT 1),
                    pg_get_indexdef(r.indexrelid)),
           r.indexrelid, r.newname::name, r.relkind <> 'I',
           ARRAY(SELECT u.a FROM unnest(t_rel, t_att) AS u(r2, a) WHERE u.r2 = r.indrelid ORDER BY u.a),
           ARRAY(SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.indrelid ORDER BY u.a));
    IF r.relkind = 'I' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype IN ('p', 'u')) THEN
      s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E': the partitioned key index is re-created by ADD PRIMARY KEY/UNIQUE in the swap, over its partitions'' new indexes\n';
    ELSIF r.relkind = 'I' THEN
      -- a partitioned index: created ON ONLY the parent (catalog only, brief SHARE lock), then
      -- the new indexes of its partitions are attached; it is valid once all are
      s := s || '-- for partitioned index ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E'\n'
             || format(E'SELECT to_regclass(%L) IS NULL AS need \\gset\n', format('%I.%I', r.nsp, r.newname))
             || E'\\if :need\n' || storagelab_internal.retry_block(ARRAY[x], retries) || E'\\endif\n';
      FOR q IN
        SELECT format('%I.%I', n.nspname, 'storagelab_new_' || h.inhrelid) AS child
          FROM pg_inherits h JOIN pg_class ci ON ci.oid = h.inhrelid JOIN pg_namespace n ON n.oid = ci.relnamespace
         WHERE h.inhparent = r.indexrelid
         ORDER BY ci.relkind = 'I', 1
      LOOP
        s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%L) AND inhparent = to_regclass(%L)) AS need \\gset\n',
                         q.child, format('%I.%I', r.nsp, r.newname))
               || E'\\if :need\n'
               || storagelab_internal.retry_block(ARRAY[format('ALTER INDEX %I.%I ATTACH PARTITION %s', r.nsp, r.newname, q.child)], retries)
               || E'\\endif\n';
      END LOOP;
    ELSE
      s := s || '-- for index ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
             || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) AS need \\gset\n',
                       format('%I.%I', r.nsp, r.newname))
             || E'\\if :need\n'
             || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;   -- an invalid leftover of an interrupted run\n', r.nsp, r.newname)
             -- no lock_timeout here: the build waits for older transactions to finish (lock waits),
             -- and its SHARE UPDATE EXCLUSIVE lock does not hold up reads or writes
             || E'SET lock_timeout = 0;\n'
             || x || E';\n'
             || format(E'SET lock_timeout = %L;\n', lt)
             || E'\\endif\n';
    END IF;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_indexes(storagelab_internal.bigint_online_model) IS
  'Phase prepare: the indexes of the shadow columns, concurrently, each a copy of its old index with every option.';

-- Phase prepare, last part: new foreign keys on the shadow columns, NOT VALID then VALIDATE.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_keys(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  fk_oid       oid[] := m.fk_oid;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  r            record;
  q            record;
  s            text := '';
  x            text;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  -- new foreign keys on the shadow columns, NOT VALID then VALIDATE
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, c.confrelid, c.conkey::int2[] AS ck, c.confkey::int2[] AS fk, c.confupdtype, c.confdeltype,
           c.confmatchtype, c.condeferrable, c.condeferred, c.convalidated,
           storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, storagelab_internal.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key')
     ORDER BY qn, c.conname
  LOOP
    x := format('FOREIGN KEY (%s) REFERENCES %s (%s)%s ON UPDATE %s ON DELETE %s%s NOT VALID',
                (SELECT string_agg(quote_ident(coalesce((SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.conrelid AND u.a = k1.a),
                                                        (SELECT attname FROM pg_attribute WHERE attrelid = r.conrelid AND attnum = k1.a))), ', ' ORDER BY k1.n)
                   FROM unnest(r.ck) WITH ORDINALITY AS k1(a, n)),
                r.fqn,
                (SELECT string_agg(quote_ident(coalesce((SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.confrelid AND u.a = k1.a),
                                                        (SELECT attname FROM pg_attribute WHERE attrelid = r.confrelid AND attnum = k1.a))), ', ' ORDER BY k1.n)
                   FROM unnest(r.fk) WITH ORDINALITY AS k1(a, n)),
                CASE r.confmatchtype WHEN 'f' THEN ' MATCH FULL' ELSE '' END,
                CASE r.confupdtype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                CASE r.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    s := s || '-- for foreign key ' || storagelab_internal.bigint_migration_comment_text(format('%I on %s', r.conname, r.qn)) || E'\n';
    FOR q IN SELECT u.rel, u.nn, storagelab_internal.bigint_migration_qname(u.rel) AS tq FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) WHERE u.o2 = r.oid ORDER BY 3 LOOP
      s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                       q.tq, q.nn)
             -- referenced table first, as applications do (parent row, then child rows):
             -- the other order deadlocks with them
             || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s, %s IN SHARE ROW EXCLUSIVE MODE', r.fqn, q.tq),
                                                              format('ALTER TABLE %s ADD CONSTRAINT %I %s', q.tq, q.nn, x)], retries)
             || E'\\endif\n';
      IF r.convalidated THEN
        s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', q.tq, q.nn)], retries);
      END IF;
    END LOOP;
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_keys(storagelab_internal.bigint_online_model) IS
  'Phase prepare, last part: new foreign keys on the shadow columns, NOT VALID then VALIDATE.';

-- Phase swap, first part: BEGIN, the state checks, every table locked.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_begin(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  late_idx     oid[] := m.late_idx;
  fk_oid       oid[] := m.fk_oid;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  lock_list    text := m.lock_list;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ swap
  s := s || E'\\if :ph_swap\n-- Phase swap: one transaction; every table locked at once (retried on lock_timeout), then\n'
         || E'-- only catalog work: no scan, no rewrite.\nBEGIN;\n';
  -- pre-checks: prepare complete
  x := E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
       || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n';
  FOR r IN
    SELECT format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = i.indexrelid),
                  format('storagelab_new_%s', i.indexrelid)) AS nq
      FROM pg_index i
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
       AND NOT ((SELECT relkind FROM pg_class WHERE oid = i.indexrelid) = 'I'
                AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')))
  LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) THEN\n'
                     '    RAISE EXCEPTION ''index %% is missing or invalid'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     r.nq, r.nq);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated) THEN\n'
                     '    RAISE EXCEPTION ''the check that the shadow columns of %% are exact is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid), storagelab_internal.bigint_migration_qname(tabs[k]));
  END LOOP;
  FOR r IN SELECT u.o2, u.rel, u.nn FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) ORDER BY 1, 2 LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated = (SELECT convalidated FROM pg_constraint WHERE oid = %s)) THEN\n'
                     '    RAISE EXCEPTION ''the new foreign key %% is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(r.rel), r.nn, r.o2, r.nn);
  END LOOP;
  x := x || E'END\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(x) || E';\n';
  s := s || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries);
  -- the views the swap drops and re-creates are as they were (one redefined since would be put back)
  x := storagelab_internal.bigint_migration_view_checks(m.objs);
  IF x <> '' THEN
    s := s || 'DO ' || storagelab_internal.dollar_quote(E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n' || x
                 || E'  IF cardinality(problems) > 0 THEN\n'
                 || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
                 || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
                 || E'            HINT = ''Redefine the view as it was and run this phase again (then redefine it after the swap), or roll back (phases rollback_prepare, rollback_expand) and generate the script again.'';\n'
                 || E'  END IF;\nEND\n') || E';\n';
  END IF;
  s := s || storagelab_internal.bigint_migration_plpgsql_check_sql(m.objs, 'before');   -- part 28
  s := s || E'-- the shadow columns are exact (the trigger kept them; nothing can write now)\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_begin(storagelab_internal.bigint_online_model) IS
  'Phase swap, first part: BEGIN, the state checks, every table locked.';

-- Phase swap: drop what names the old columns (dependent objects, statistics, old keys, CHECKs), old indexes renamed away.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_drop(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  i            int;
BEGIN
  -- drop dependent objects
  s := s || E'-- drop the objects that name the columns (re-created below on the new columns)\n';
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function', 'index', 'constraint', 'statistics')
              AND b.drop_sql IS NOT NULL ORDER BY b.depth DESC, b.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  FOR r IN
    SELECT DISTINCT s2.oid, format('%I.%I', n.nspname, s2.stxname) AS qn, pg_get_statisticsobjdef(s2.oid) AS def, s2.stxstattarget,
           obj_description(s2.oid, 'pg_statistic_ext') AS descr
      FROM pg_statistic_ext s2 JOIN pg_namespace n ON n.oid = s2.stxnamespace, unnest(t_rel, t_att) AS cc(r2, a)
     WHERE s2.stxrelid = cc.r2 AND cc.a = ANY (s2.stxkeys::int2[])
  LOOP
    s := s || format(E'DROP STATISTICS %s;\n', r.qn);
  END LOOP;
  -- old foreign keys, then old constraints
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'foreign_key' ORDER BY b.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn
      FROM pg_constraint c
     WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY (tree) AND c.conparentid = 0
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
     ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;   -- with its partitions'' copies\n', r.qn, r.conname);
  END LOOP;
  -- other old indexes on the columns: renamed out of the way, dropped with the old column in cleanup
  FOR r IN
    SELECT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn
      FROM pg_index i
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u'))
     ORDER BY 2
  LOOP
    s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', r.qn, format('storagelab_old_%s', r.indexrelid));
  END LOOP;
  -- indexes that use the column in an expression or predicate: the old ones out of the way
  -- (dropped with the old column); cleanup builds them again, concurrently, on the new column
  FOR r IN SELECT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn FROM pg_index i WHERE i.indexrelid = ANY (late_idx) ORDER BY 2 LOOP
    s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', r.qn, format('storagelab_old_%s', r.indexrelid));
  END LOOP;
  -- CHECK constraints on the column: dropped here, re-added NOT VALID after the renames (enforced
  -- for new rows at once, no scan), validated in cleanup
  FOR r IN SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1 LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', r.qn, r.conname);
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_drop(storagelab_internal.bigint_online_model) IS
  'Phase swap: drop what names the old columns (dependent objects, statistics, old keys, CHECKs), old indexes renamed away.';

-- Phase swap: the columns renamed, NOT NULL, defaults, identity, statistics targets, comments, privileges, sequence ownership.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_columns(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_att        int2[] := m.c_att;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_old        name[] := m.c_old;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_name       name[] := m.t_name;
  o            storagelab.bigint_migration_object;
  r            record;
  q            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
BEGIN
  -- columns: renames, NOT NULL, defaults, sequence ownership, properties
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab_internal.bigint_migration_qname(c_rel[i]);
    SELECT a.attnotnull, a.attstattarget, a.attacl, col_description(a.attrelid, a.attnum) AS descr,
           pg_get_expr(d.adbin, d.adrelid) AS dflt INTO q
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = c_rel[i] AND a.attnum = c_att[i];
    s := s || format(E'ALTER TABLE %s RENAME COLUMN %I TO %I;\n', x, c_name[i], c_old[i])
           || format(E'ALTER TABLE %s RENAME COLUMN %I TO %I;\n', x, c_new[i], c_name[i]);
    IF q.attnotnull THEN
      s := s || format(E'ALTER TABLE %s ALTER COLUMN %I SET NOT NULL;   -- proven by the validated CHECK: no scan\n',
                       x, c_name[i]);
    END IF;
    IF q.dflt IS NOT NULL THEN
      -- a default "nextval(...)::integer" would fail past 2^31 on the new
      -- bigint column: it moves without the cast (as in the blocking plan)
      q.dflt := coalesce(substring(q.dflt FROM '^\((nextval\(''.*''::regclass\))\)::(?:integer|smallint)$'), q.dflt);
      s := s || format(E'ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT, ALTER COLUMN %I SET DEFAULT %s;\n', x, c_old[i], c_name[i], q.dflt);
    END IF;
  END LOOP;
  -- prepare's CHECK (shadow = original) has done its work: the old columns stop being written now
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid));
  END LOOP;
  -- identity columns: the old column gives its identity up, the new one gets the same sequence
  -- name and options (AS bigint; a custom MAXVALUE kept) and continues where the old one was
  FOR r IN
    SELECT a.attrelid, a.attname, a.attidentity, sq.seqrelid, sq.seqstart, sq.seqincrement, sq.seqmin, sq.seqmax, sq.seqcache, sq.seqcycle,
           storagelab_internal.bigint_migration_qname(sq.seqrelid) AS sqn, storagelab_internal.bigint_migration_qname(a.attrelid) AS qn, u.od
      FROM unnest(c_rel, c_att, c_old) AS u(r2, a2, od)
      JOIN pg_attribute a ON a.attrelid = u.r2 AND a.attnum = u.a2
      JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                      AND d.classid = 'pg_class'::regclass AND d.deptype = 'i'
      JOIN pg_sequence sq ON sq.seqrelid = d.objid
     WHERE a.attidentity <> ''
  LOOP
    s := s || 'DO ' || storagelab_internal.dollar_quote(format(
      E'\nDECLARE\n  lv bigint;\n  called boolean;\nBEGIN\n'
      '  SELECT last_value, is_called INTO lv, called FROM %s;\n'
      '  ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY;\n'
      '  ALTER TABLE %s ALTER COLUMN %I ADD GENERATED %s AS IDENTITY (SEQUENCE NAME %s INCREMENT BY %s%s%s START WITH %s CACHE %s%s);\n'
      '  PERFORM setval(%L, lv, called);\n'
      'END\n',
      r.sqn, r.qn, r.od, r.qn, r.attname, CASE r.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END, r.sqn, r.seqincrement,
      CASE WHEN r.seqmin IN (-2147483648, -32768, 1) THEN '' ELSE ' MINVALUE ' || r.seqmin END,
      CASE WHEN r.seqmax IN (2147483647, 32767, -1) THEN '' ELSE ' MAXVALUE ' || r.seqmax END,
      r.seqstart, r.seqcache, CASE WHEN r.seqcycle THEN ' CYCLE' ELSE '' END, r.sqn)) || E';\n';
  END LOOP;
  -- statistics targets, comments, column privileges: each table of each tree has its own
  FOR i IN 1 .. cardinality(t_rel) LOOP
    x := storagelab_internal.bigint_migration_qname(t_rel[i]);
    SELECT a.attstattarget, a.attacl, col_description(a.attrelid, a.attnum) AS descr INTO q
      FROM pg_attribute a WHERE a.attrelid = t_rel[i] AND a.attnum = t_att[i];
    IF q.attstattarget >= 0 THEN
      s := s || format(E'ALTER TABLE ONLY %s ALTER COLUMN %I SET STATISTICS %s;\n', x, t_name[i], q.attstattarget);
    END IF;
    IF q.descr IS NOT NULL THEN
      s := s || format(E'COMMENT ON COLUMN %s.%I IS %L;\n', x, t_name[i], q.descr);
    END IF;
    s := s || coalesce((SELECT string_agg(format(E'GRANT %s (%I) ON TABLE %s TO %s%s;\n', g.privilege_type, t_name[i], x,
                                                 CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
                                                 CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), '')
                          FROM aclexplode(q.attacl) g), '');
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'sequence' ORDER BY b.identity LOOP
    IF EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = o.objid AND d.deptype = 'a'
                  AND d.refobjid = ANY (tree)) THEN
      SELECT d.refobjid, a.attname INTO q FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
       WHERE d.classid = 'pg_class'::regclass AND d.objid = o.objid AND d.deptype = 'a';
      s := s || format(E'ALTER SEQUENCE %s OWNED BY %s.%I;   -- else cleanup would drop it with the old column\n',
                       storagelab_internal.bigint_migration_qname(o.objid), storagelab_internal.bigint_migration_qname(q.refobjid), q.attname);
    END IF;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_columns(storagelab_internal.bigint_online_model) IS
  'Phase swap: the columns renamed, NOT NULL, defaults, identity, statistics targets, comments, privileges, sequence ownership.';

-- Phase swap: primary and unique keys on the new indexes, index names, replica identity, clustering, CHECKs re-added.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_keys(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  t_name       name[] := m.t_name;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  r            record;
  s            text := '';
  i            int;
  k            int;
  cols         text;
BEGIN
  -- constraints on the new indexes, index names, replica identity, clustering
  FOR r IN
    SELECT c.conname, c.contype, c.conindid, c.conrelid, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, c.condeferrable, c.condeferred,
           obj_description(c.oid, 'pg_constraint') AS descr, ic.relname AS idxname, t.relkind,
           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(a, n)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.a) AS cols
      FROM pg_constraint c JOIN pg_class ic ON ic.oid = c.conindid JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY (tree)
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
     -- partitions first, then their partitioned parents, deepest first
     ORDER BY t.relkind = 'p',
              (WITH RECURSIVE up(oid) AS (SELECT c.conrelid UNION SELECT h.inhparent FROM pg_inherits h JOIN up ON h.inhrelid = up.oid)
               SELECT count(*) FROM up) DESC, 3, 1
  LOOP
    IF r.relkind = 'p' THEN
      -- attaches the partitions' new constraints and indexes (no scan)
      s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s (%s)%s;\n', r.qn, r.conname,
                       CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, r.cols,
                       CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    ELSE
      s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', (SELECT format('%I.%I', n.nspname, 'storagelab_new_' || r.conindid)
                                                            FROM pg_class ic JOIN pg_namespace n ON n.oid = ic.relnamespace WHERE ic.oid = r.conindid), r.idxname)
             || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I%s;\n', r.qn, r.conname,
                       CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, r.idxname,
                       CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    END IF;
    s := s || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, ic.relname, n.nspname, i.indisreplident, i.indisclustered, storagelab_internal.bigint_migration_qname(i.indrelid) AS tqn,
           obj_description(i.indexrelid, 'pg_class') AS descr,
           EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')) AS iscon
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     ORDER BY 2
  LOOP
    IF NOT r.iscon THEN
      s := s || format(E'ALTER INDEX %I.%I RENAME TO %I;\n', r.nspname, 'storagelab_new_' || r.indexrelid, r.relname);
    END IF;
    IF r.descr IS NOT NULL THEN
      s := s || format(E'COMMENT ON INDEX %I.%I IS %L;\n', r.nspname, r.relname, r.descr);
    END IF;
    IF r.indisreplident THEN
      s := s || format(E'ALTER TABLE %s REPLICA IDENTITY USING INDEX %I;\n', r.tqn, r.relname);
    END IF;
    IF r.indisclustered THEN
      s := s || format(E'ALTER TABLE %s CLUSTER ON %I;\n', r.tqn, r.relname);
    END IF;
  END LOOP;
  -- index column names follow the table's (cosmetic: \d of the index)
  FOR r IN
    SELECT i.indexrelid, coalesce((SELECT c.conname FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')), ic.relname) AS finalname,
           n.nspname, u.nw, u.nm
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace,
           unnest(t_rel, t_att, t_new, t_name) AS u(r2, a, nw, nm)
     WHERE i.indrelid = u.r2 AND u.a = ANY (i.indkey::int2[]) AND NOT (i.indexrelid = ANY (late_idx))
       -- a partitioned key index is new from ADD PRIMARY KEY/UNIQUE, with the right names
       AND NOT (ic.relkind = 'I' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')))
       -- the partitions of another partitioned index are renamed with it
       AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid
                          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = h.inhparent AND c.contype IN ('p', 'u')))
     ORDER BY 2, 4
  LOOP
    s := s || format(E'ALTER TABLE %I.%I RENAME COLUMN %I TO %I;\n', r.nspname, r.finalname, r.nw, r.nm);
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, pg_get_constraintdef(c.oid) AS def, c.convalidated,
           obj_description(c.oid, 'pg_constraint') AS descr
      FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s%s;\n', r.qn, r.conname, r.def, CASE WHEN r.convalidated THEN ' NOT VALID' ELSE '' END)
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_keys(storagelab_internal.bigint_online_model) IS
  'Phase swap: primary and unique keys on the new indexes, index names, replica identity, clustering, CHECKs re-added.';

-- Phase swap: NOT NULL names, foreign key names, sync triggers dropped, statistics and dependent objects re-created, trigger functions touched.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_finish(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_att        int2[] := m.c_att;
  c_name       name[] := m.c_name;
  c_old        name[] := m.c_old;
  c_nn         boolean[] := m.c_nn;
  tabs         oid[] := m.tabs;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_root       oid[] := m.t_root;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  fk_final     name[] := m.fk_final;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
BEGIN
  -- the old columns stop being written: no NOT NULL on them (after the
  -- replica identity moved off their indexes)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    CONTINUE WHEN NOT c_nn[i];
    s := s || format(E'ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL;\n', storagelab_internal.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;
  -- PostgreSQL 18+: the new column's NOT NULL constraint takes the old one's
  -- name, now free (see bigint_migration_not_null_name; the rename reaches
  -- the partitions' inherited copies)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab_internal.bigint_migration_not_null_name(c_rel[i], c_att[i]);
    CONTINUE WHEN NOT c_nn[i] OR x IS NULL;
    s := s || 'DO ' || storagelab_internal.dollar_quote(format(
      E'\nDECLARE\n  cn name;\nBEGIN\n'
      '  SELECT c.conname INTO cn FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]\n'
      '   WHERE c.conrelid = %L::regclass AND c.contype = %L AND a.attname = %L;\n'
      '  IF cn IS DISTINCT FROM %L THEN\n'
      '    EXECUTE format(%L, %L, cn, %L);\n'
      '  END IF;\n'
      'END\n',
      storagelab_internal.bigint_migration_qname(c_rel[i]), 'n', c_name[i], x,
      'ALTER TABLE %s RENAME CONSTRAINT %I TO %I', storagelab_internal.bigint_migration_qname(c_rel[i]), x)) || E';\n';
  END LOOP;
  -- new foreign keys take the old names
  FOR r IN SELECT u.rel, u.nn, u.fin FROM unnest(fk_rel, fk_new, fk_final) AS u(rel, nn, fin) ORDER BY 1, 2 LOOP
    s := s || format(E'ALTER TABLE %s RENAME CONSTRAINT %I TO %I;\n', storagelab_internal.bigint_migration_qname(r.rel), r.nn, r.fin);
  END LOOP;
  FOR r IN
    SELECT c.oid, c.conname, t.relkind, pg_get_constraintdef(c.oid) AS def, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn,
           obj_description(c.oid, 'pg_constraint') AS descr
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') ORDER BY 5, 2
  LOOP
    IF r.relkind = 'p' THEN
      -- attaches the partitions' validated keys (no scan)
      s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', r.qn, r.conname, r.def);
    END IF;
    s := s || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  -- the sync triggers go now: never copy bigint values into the old int columns
  FOR r IN
    SELECT DISTINCT u.r2, u.root FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.r2 = ANY (targets) ORDER BY 1, 2
  LOOP
    s := s || format(E'DROP TRIGGER %I ON %s;\n', format('zz_storagelab_sync_%s_%s', mid, r.root), storagelab_internal.bigint_migration_qname(r.r2));
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || format(E'DROP FUNCTION %I.%I();\n',
                     (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                     format('storagelab_sync_%s_%s', mid, tabs[k]));
  END LOOP;
  -- statistics objects and the other dropped objects, re-created by name on the new columns
  FOR r IN
    SELECT DISTINCT s2.oid, format('%I.%I', n.nspname, s2.stxname) AS qn, pg_get_statisticsobjdef(s2.oid) AS def, s2.stxstattarget,
           obj_description(s2.oid, 'pg_statistic_ext') AS descr
      FROM pg_statistic_ext s2 JOIN pg_namespace n ON n.oid = s2.stxnamespace, unnest(t_rel, t_att) AS cc(r2, a)
     WHERE s2.stxrelid = cc.r2 AND cc.a = ANY (s2.stxkeys::int2[])
  LOOP
    s := s || r.def || E';\n'
           || CASE WHEN r.stxstattarget >= 0 THEN format(E'ALTER STATISTICS %s SET STATISTICS %s;\n', r.qn, r.stxstattarget) ELSE '' END
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON STATISTICS %s IS %L;\n', r.qn, r.descr) END;
  END LOOP;
  -- (index, constraint and statistics rows with create_sql are those that
  -- depend on a dropped object, e.g. the indexes of a materialized view)
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function')
              AND b.create_sql IS NOT NULL ORDER BY b.depth, b.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'trigger_function' ORDER BY b.identity LOOP
    s := s || o.create_sql;
  END LOOP;
  s := s || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after');   -- part 28
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_finish(storagelab_internal.bigint_online_model) IS
  'Phase swap: NOT NULL names, foreign key names, sync triggers dropped, statistics and dependent objects re-created, trigger functions touched.';

-- Phase swap, last part: the post-checks (roll back on any problem), COMMIT, ANALYZE.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_postchecks(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  tabs         oid[] := m.tabs;
  late_idx     oid[] := m.late_idx;
  o            storagelab.bigint_migration_object;
  s            text := '';
  x            text;
  i            int;
BEGIN
  -- post-checks
  x := E'\nDECLARE problems text[] := ''{}'';\nBEGIN\n';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := x || format(E'  IF NOT coalesce((SELECT atttypid = ''int8''::regtype FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped), false) THEN\n'
                     '    problems := problems || %L::text;\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i],
                     format('%s.%I is not bigint', storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i]));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.check_sql IS NOT NULL AND b.kind <> 'column'
                                          AND NOT (b.kind = 'index' AND b.objid = ANY (late_idx)) ORDER BY b.identity LOOP   -- those come back in cleanup
    x := x || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n', o.check_sql, o.identity || ' is not as it should be');
  END LOOP;
  x := x || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''post-swap check failed; rolling back'' USING ERRCODE = ''data_exception'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'          HINT = ''Nothing was changed by this phase.'';\n  END IF;\nEND\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(x) || E';\nCOMMIT;\n';
  s := s || (SELECT string_agg(format(E'ANALYZE %s;\n', storagelab_internal.bigint_migration_qname(t1)), '') FROM unnest(tabs) t1);
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_postchecks(storagelab_internal.bigint_online_model) IS
  'Phase swap, last part: the post-checks (roll back on any problem), COMMIT, ANALYZE.';

-- Phase cleanup: validate re-added CHECKs, rebuild expression and partial indexes, drop the old columns.
CREATE FUNCTION storagelab_internal.bigint_migration_online_cleanup(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_old        name[] := m.c_old;
  tabs         oid[] := m.tabs;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ cleanup
  s := s || E'\\if :ph_cleanup\n-- Phase cleanup: drop the old int columns (brief ACCESS EXCLUSIVE, no rewrite).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF NOT swapped AND EXISTS (SELECT 1 FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E') THEN\n'
            || E'    RAISE EXCEPTION ''the swap has not run yet'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase swap first.'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.oid = ANY (late_chk) AND c.convalidated ORDER BY 2, 1
  LOOP
    s := s || '-- validate ' || storagelab_internal.bigint_migration_comment_text(r.conname) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
           || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.qn, r.conname)], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, ic.relname, n.nspname, pg_get_indexdef(i.indexrelid) AS def, obj_description(i.indexrelid, 'pg_class') AS descr,
           i.indisclustered, storagelab_internal.bigint_migration_qname(i.indrelid) AS tqn
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indexrelid = ANY (late_idx) ORDER BY 2
  LOOP
    s := s || '-- re-build ' || storagelab_internal.bigint_migration_comment_text(r.relname) || E' on the new column, concurrently\n'
           || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) AS need \\gset\n',
                     format('%I.%I', r.nspname, r.relname))
           || E'\\if :need\n'
           || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;   -- an invalid leftover of an interrupted run\n', r.nspname, r.relname)
           || E'SET lock_timeout = 0;   -- waits for older transactions; does not hold up reads or writes\n'
           || regexp_replace(r.def, '^CREATE (UNIQUE )?INDEX ', 'CREATE \1INDEX CONCURRENTLY ') || E';\n'
           || format(E'SET lock_timeout = %L;\n', lt) || E'\\endif\n'
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON INDEX %I.%I IS %L;\n', r.nspname, r.relname, r.descr) END
           || CASE WHEN r.indisclustered THEN format(E'ALTER TABLE %s CLUSTER ON %I;\n', r.tqn, r.relname) ELSE '' END;
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s %s', x,
                 (SELECT string_agg(format('DROP COLUMN IF EXISTS %I', u.od), ', ') FROM unnest(c_rel, c_old) AS u(r2, od) WHERE u.r2 = tabs[k]))], retries);
  END LOOP;
  s := s || format(E'DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L;\n', mid);
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_cleanup(storagelab_internal.bigint_online_model) IS
  'Phase cleanup: validate re-added CHECKs, rebuild expression and partial indexes, drop the old columns.';

-- Phases rollback_prepare and rollback_expand: undo prepare, then expand and backfill (before the swap only).
CREATE FUNCTION storagelab_internal.bigint_migration_online_rollback(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_new        name[] := m.c_new;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_root       oid[] := m.t_root;
  late_idx     oid[] := m.late_idx;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ rollbacks
  s := s || E'\\if :ph_rollback_prepare\n-- Undo phase prepare (before swap only).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN SELECT u.rel, u.nn FROM unnest(fk_rel, fk_new) AS u(rel, nn) ORDER BY 1, 2 LOOP
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab_internal.bigint_migration_qname(r.rel), r.nn)], retries);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid))], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, n.nspname, ic.relkind
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     ORDER BY ic.relkind = 'I' DESC, 1     -- partitioned indexes first (that drops their partitions' too)
  LOOP
    IF r.relkind = 'I' THEN
      s := s || storagelab_internal.retry_block(ARRAY[format('DROP INDEX IF EXISTS %I.%I', r.nspname, 'storagelab_new_' || r.indexrelid)], retries);
    ELSE
      s := s || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;\n', r.nspname, 'storagelab_new_' || r.indexrelid);
    END IF;
  END LOOP;
  s := s || E'\\endif\n\n';
  s := s || E'\\if :ph_rollback_expand\n-- Undo phases expand and backfill (before swap only; run rollback_prepare first).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    s := s || storagelab_internal.retry_block(
                ARRAY(SELECT format('DROP TRIGGER IF EXISTS %I ON %s', format('zz_storagelab_sync_%s_%s', mid, u.root), storagelab_internal.bigint_migration_qname(u.r2))
                        FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.root = tabs[k] AND u.r2 = ANY (targets) ORDER BY 1) || ARRAY[
                format('DROP FUNCTION IF EXISTS %I.%I()', (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                       format('storagelab_sync_%s_%s', mid, tabs[k])),
                format('ALTER TABLE %s %s', x, (SELECT string_agg(format('DROP COLUMN IF EXISTS %I', u.nw), ', ') FROM unnest(c_rel, c_new) AS u(r2, nw) WHERE u.r2 = tabs[k]))],
              retries);
  END LOOP;
  s := s || format(E'DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L;\n', mid)
         || E'-- the sequences stay AS bigint (harmless: the columns are still integer, so they stop at 2^31-1 as before)\n';
  s := s || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_rollback(storagelab_internal.bigint_online_model) IS
  'Phases rollback_prepare and rollback_expand: undo prepare, then expand and backfill (before the swap only).';

-- The online script of a model: the online model (refuses what the mode
-- cannot do), function_hazards applied (part 28), the phases above in order.
CREATE FUNCTION storagelab_internal.bigint_migration_online_script(objs storagelab.bigint_migration_object[],
                                                                   relations regclass[], column_names name[],
                                                                   function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m storagelab_internal.bigint_online_model := storagelab_internal.bigint_migration_online_model(objs, relations, column_names);
BEGIN
  m.objs := storagelab_internal.bigint_migration_apply_hazards(m.objs, function_hazards);   -- part 28
  RETURN storagelab_internal.bigint_migration_online_header(m, function_hazards)
      || storagelab_internal.bigint_migration_online_expand(m)
      || storagelab_internal.bigint_migration_online_backfill(m)
      || storagelab_internal.bigint_migration_online_prepare_checks(m)
      || storagelab_internal.bigint_migration_online_prepare_indexes(m)
      || storagelab_internal.bigint_migration_online_prepare_keys(m)
      || storagelab_internal.bigint_migration_online_swap_begin(m)
      || storagelab_internal.bigint_migration_online_swap_drop(m)
      || storagelab_internal.bigint_migration_online_swap_columns(m)
      || storagelab_internal.bigint_migration_online_swap_keys(m)
      || storagelab_internal.bigint_migration_online_swap_finish(m)
      || storagelab_internal.bigint_migration_online_swap_postchecks(m)
      || storagelab_internal.bigint_migration_online_cleanup(m)
      || storagelab_internal.bigint_migration_online_rollback(m);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the online INT->BIGINT script of a model under a choice of function_hazards: phases expand, backfill, prepare, swap, cleanup, and rollbacks';

-- from extension/26_bigint_backfill.sql
-- storagelab install script, part 26: storagelab.bigint_migration_backfill,
-- the procedure that the phase backfill of an online INT -> BIGINT script
-- CALLs, one table at a time; its progress is in
-- storagelab.bigint_migration_progress (26_bigint_progress.sql).


-- The backfill of one table: copies old_columns into new_columns in batches
-- of heap blocks (TID range scans), one COMMIT each, from the progress row's
-- next_block up to its max_block (the table's size when the sync trigger
-- was installed: later rows are written by the trigger).
--
-- Batch sizing (when batch_time_ms > 0): after each batch, the next one gets
-- as many blocks as the measured copy rate (rows per ms of the last batch
-- that copied rows, which includes any wait for a client's row lock) fills
-- in the time budget, at the denser of the table's average density and the
-- last batch's; it at most doubles from one batch to the next, and does not
-- grow before a rate is known.  A batch that meets a client's row lock past
-- lock_timeout is rolled back and retried with half its blocks, up to
-- lock_retries more times (pause as in storagelab_internal.retry_loop).
--
-- A procedure with transaction control cannot pin search_path with a SET
-- clause: it sets it for each of its transactions (SET LOCAL, again after
-- every COMMIT; the caller's again before it returns) and qualifies the
-- functions it calls (but unnest(a, b), which is syntax).  The setting
-- storagelab.backfill_batches (the script's -v backfill_batches=N) stops it
-- after N batches.
CREATE PROCEDURE storagelab.bigint_migration_backfill(migration text, relation regclass,
                                                      new_columns name[], old_columns name[],
                                                      batch_time_ms numeric, batch_blocks int,
                                                      pause interval, lock_retries int)
LANGUAGE plpgsql
AS $fn$
DECLARE
  qn       text := (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)      -- as the script names it
                      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = relation);
  copy_sql text;
  b        bigint;
  maxb     bigint;
  isdone   boolean;
  n        bigint;             -- blocks per batch
  nbatch   int := 0;
  tries    int;
  nb       bigint;             -- blocks in this batch: n, or fewer at the end of the table
  nrows    bigint;
  repl     boolean := false;   -- session_replication_role was set (superusers only)
  t_start  timestamptz := pg_catalog.clock_timestamp();
  t0       timestamptz;
  ms       numeric;
  rate     numeric;            -- rows copied per ms by the last batch that copied rows
  avgdens  numeric;            -- rows per block, table average
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
  caller_rls  text := pg_catalog.current_setting('row_security');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  IF pg_catalog.cardinality(new_columns) IS DISTINCT FROM pg_catalog.cardinality(old_columns) OR pg_catalog.cardinality(new_columns) = 0 THEN
    RAISE EXCEPTION 'new_columns and old_columns must be non-empty arrays of the same length'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- dynamic, with parameters: no PL/pgSQL variable can be mistaken for a column of the table
  copy_sql := pg_catalog.format('UPDATE ONLY %s SET %s WHERE ctid >= $1 AND ctid < $2 AND (%s)', qn,
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I = %I', u.nw, u.od), ', ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)),
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I IS DISTINCT FROM %I', u.nw, u.od), ' OR ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)));
  SELECT p.next_block, p.max_block, p.done, coalesce(p.batch_blocks, bigint_migration_backfill.batch_blocks) INTO b, maxb, isdone, n
    FROM storagelab.bigint_migration_progress p
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'phase expand has not run for %', qn
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Run phase expand first.';
  END IF;
  IF isdone THEN
    PERFORM pg_catalog.set_config('search_path', caller_path, true);
    RETURN;
  END IF;
  SELECT CASE WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples / c.relpages ELSE 1 END INTO avgdens
    FROM pg_catalog.pg_class c WHERE c.oid = relation;
  IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
    SET session_replication_role = replica;
    repl := true;
  END IF;
  WHILE b <= maxb LOOP
    tries := 0;
    LOOP
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      BEGIN
        -- row_security off: a policy that hides rows from this role is an
        -- error here, not rows left without their new column's value
        PERFORM pg_catalog.set_config('row_security', 'off', true);
        EXECUTE copy_sql USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
        GET DIAGNOSTICS nrows = ROW_COUNT;
        PERFORM pg_catalog.set_config('row_security', caller_rls, true);
        EXIT;
      EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
        -- a row of this batch is locked by a client: give way, retry the batch with half its blocks
        tries := tries + 1;
        IF tries > lock_retries THEN RAISE; END IF;
        n := greatest(n / 2, 1);
        PERFORM pg_catalog.pg_sleep(least(0.1 * tries, 2));
      END;
    END LOOP;
    ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
    b := b + nb;
    IF batch_time_ms > 0 AND nrows > 0 THEN
      rate := nrows / greatest(ms, 0.01);
    END IF;
    IF batch_time_ms > 0 AND rate IS NOT NULL THEN
      n := greatest(1, least(2 * n, pg_catalog.floor(rate * batch_time_ms / greatest(avgdens, nrows::numeric / nb))));
    END IF;
    UPDATE storagelab.bigint_migration_progress p
       SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
           last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
           started_at = coalesce(p.started_at, t_start), updated_at = pg_catalog.now()
     WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
    COMMIT;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    nbatch := nbatch + 1;
    IF limit_batches > 0 AND nbatch >= limit_batches THEN
      RAISE NOTICE '% stopped after % batches at block % of %; run phase backfill again to resume', qn, nbatch, b, maxb;
      IF repl THEN RESET session_replication_role; END IF;
      PERFORM pg_catalog.set_config('search_path', caller_path, true);
      RETURN;
    END IF;
    IF nrows > 0 THEN
      PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
    END IF;
  END LOOP;
  IF repl THEN RESET session_replication_role; END IF;
  UPDATE storagelab.bigint_migration_progress p SET done = true, updated_at = pg_catalog.now()
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  COMMIT;
  PERFORM pg_catalog.set_config('search_path', caller_path, true);
END
$fn$;
COMMENT ON PROCEDURE storagelab.bigint_migration_backfill(text, regclass, name[], name[], numeric, int, interval, int) IS
  'backfill of one table of an online INT->BIGINT migration (its script''s phase backfill CALLs it): batches of heap blocks, one COMMIT each, resumable from storagelab.bigint_migration_progress';

-- from extension/27_bigint_script.sql
-- storagelab install script, part 27: the public INT -> BIGINT script
-- generators.
--
--   storagelab.bigint_migration_script(relation, column_name, mode, function_hazards)
--   storagelab.bigint_migration_group_script(relations[], column_names[], mode, function_hazards)
--       the model of part 21, built once, written by part 23 (mode
--       'blocking'), part 63 (mode 'online': copy and swap; 'copy_swap' is
--       its alias) or part 25 (mode 'shadow': the shadow-column writer of
--       1.0's mode 'online'); function_hazards 'refuse' | 'widen' |
--       'accept': part 28
--   storagelab.bigint_migration_plan(mode, function_hazards)
--       one script per group of columns that int_overflow rates warning or
--       critical


CREATE FUNCTION storagelab.bigint_migration_group_script(relations regclass[], column_names name[], mode text DEFAULT 'blocking',
                                                         function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF mode IS NULL THEN
    RAISE EXCEPTION 'mode must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use mode => ''blocking''.';
  ELSIF mode NOT IN ('blocking', 'online', 'copy_swap', 'shadow') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid modes are ''blocking'', ''online'' (alias ''copy_swap'') and ''shadow''.';
  END IF;
  RETURN storagelab_internal.bigint_migration_write(
           storagelab_internal.bigint_migration_model(relations, column_names), relations, column_names, mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text, text) IS
  'psql script converting several int columns (and their foreign-key components and everything depending on them) to bigint: mode blocking (one transaction, each table rewritten once), online (copy and swap, in phases; alias copy_swap) or shadow (shadow columns, in phases); function_hazards refuse, widen or accept';

CREATE FUNCTION storagelab.bigint_migration_script(relation regclass, column_name name, mode text DEFAULT 'blocking',
                                                   function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF relation IS NULL OR column_name IS NULL THEN
    RAISE EXCEPTION 'relation and column_name must not be NULL'
      USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Call storagelab.bigint_migration_script(''schema.table'', ''column'').';
  END IF;
  RETURN storagelab.bigint_migration_group_script(ARRAY[relation], ARRAY[column_name], mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_script(regclass, name, text, text) IS
  'psql script (run with psql -v ON_ERROR_STOP=1 -f) converting relation.column_name, its whole foreign-key component and every dependent object from int to bigint; mode blocking (one transaction), online (copy and swap; alias copy_swap) or shadow (shadow columns), both in phases chosen with -v phase=...; function_hazards refuse (default), widen or accept';

-- The script of a model in a mode (checked by the callers), under a choice
-- of function_hazards (checked by the writers, part 28).
CREATE FUNCTION storagelab_internal.bigint_migration_write(objs storagelab.bigint_migration_object[],
                                                           relations regclass[], column_names name[], mode text,
                                                           function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: the copy-and-swap writer is created later in the install script (part 63)
  RETURN CASE WHEN mode IN ('online', 'copy_swap') THEN storagelab_internal.bigint_migration_copy_swap_script(objs, relations, column_names, function_hazards)
              WHEN mode = 'shadow' THEN storagelab_internal.bigint_migration_online_script(objs, relations, column_names, function_hazards)
              ELSE storagelab_internal.bigint_migration_blocking_script(objs, relations, column_names, function_hazards) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'the INT->BIGINT script of a model, in mode blocking, online (copy and swap; alias copy_swap) or shadow (shadow columns), function_hazards refuse, widen or accept';

-- The plan ------------------------------------------------------------------

-- Columns that storagelab.int_overflow rates warning or critical, grouped so
-- that columns whose components share a table are converted by one script
-- (each table rewritten once): union-find by repeated relaxation.  Critical
-- groups first, then in the view's order.
CREATE FUNCTION storagelab_internal.bigint_migration_plan_groups(
    OUT grp int, OUT critical boolean, OUT relations regclass[], OUT column_names name[])
RETURNS SETOF record
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r        record;
  g        int[];
  rels     regclass[] := '{}';
  cols     name[] := '{}';
  sevs     text[] := '{}';
  tabs     text[] := '{}';    -- per row: its component's tables, comma-joined ('' when it has none)
  i int; j int; changed boolean;
  sevcol   text;
BEGIN
  -- storagelab.int_overflow (another part of storagelab) is resolved when
  -- this runs, not when it is created; its rating column is severity
  -- (risk in storagelab 1.0).
  IF to_regclass('storagelab.int_overflow') IS NULL THEN
    RAISE EXCEPTION 'storagelab.int_overflow does not exist'
      USING ERRCODE = 'undefined_table',
            HINT = 'Install the storagelab version that provides the int_overflow view.';
  END IF;
  sevcol := (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = 'storagelab.int_overflow'::regclass
              AND a.attname IN ('severity', 'risk') AND NOT a.attisdropped ORDER BY a.attname = 'risk' LIMIT 1);
  FOR r IN EXECUTE format(
    'SELECT o.relation::regclass AS relation, o.column_name::name AS column_name, o.%1$I::text AS severity
       FROM storagelab.int_overflow o
      WHERE o.%1$I IN (''warning'', ''critical'')
      ORDER BY (o.%1$I = ''critical'') DESC, o.relation::regclass::text, o.column_name', sevcol)
  LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.relation AND c.relkind IN ('r', 'p')) THEN
      CONTINUE;                                   -- sequences or views, if the view lists them
    END IF;
    rels := rels || r.relation; cols := cols || r.column_name; sevs := sevs || r.severity;
    BEGIN
      tabs := tabs || coalesce((SELECT string_agg(DISTINCT x::text, ',')
                                  FROM unnest((storagelab_internal.bigint_migration_component(ARRAY[r.relation], ARRAY[r.column_name])).crel) x), '');
    EXCEPTION WHEN OTHERS THEN
      tabs := tabs || ''::text;
    END;
  END LOOP;
  g := ARRAY(SELECT generate_series(1, cardinality(rels)));
  LOOP
    changed := false;
    FOR i IN 1 .. cardinality(rels) LOOP
      FOR j IN i + 1 .. cardinality(rels) LOOP
        IF g[i] <> g[j] AND tabs[i] <> '' AND tabs[j] <> ''
           AND string_to_array(tabs[i], ',') && string_to_array(tabs[j], ',') THEN
          g[j] := least(g[i], g[j]); g[i] := g[j]; changed := true;
        END IF;
      END LOOP;
    END LOOP;
    EXIT WHEN NOT changed;
  END LOOP;
  RETURN QUERY
    SELECT u.g, bool_or(u.sev = 'critical'), array_agg(u.rel ORDER BY u.ord), array_agg(u.col ORDER BY u.ord)
      FROM unnest(g, rels, cols, sevs) WITH ORDINALITY AS u(g, rel, col, sev, ord)
     GROUP BY u.g
     ORDER BY bool_or(u.sev = 'critical') DESC, min(u.ord);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_plan_groups() IS
  'the columns storagelab.int_overflow rates warning or critical, grouped by shared tables of their components, critical groups first';

CREATE FUNCTION storagelab.bigint_migration_plan(mode text DEFAULT 'blocking', function_hazards text DEFAULT 'refuse')
RETURNS TABLE (step int, severity text, columns text[], relations regclass[], script text, blockers text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  g    record;
  objs storagelab.bigint_migration_object[];
  msg text; det text; st text;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online', 'copy_swap', 'shadow') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid modes are ''blocking'', ''online'' (alias ''copy_swap'') and ''shadow''.';
  END IF;
  PERFORM storagelab_internal.bigint_migration_apply_hazards('{}', function_hazards);   -- checks the value
  step := 0;
  FOR g IN SELECT * FROM storagelab_internal.bigint_migration_plan_groups() LOOP
    step := step + 1;
    severity := CASE WHEN g.critical THEN 'critical' ELSE 'warning' END;
    columns := ARRAY(SELECT format('%s.%I', storagelab_internal.bigint_migration_qname(x.r), x.c)
                       FROM unnest(g.relations, g.column_names) AS x(r, c));
    relations := NULL; script := NULL; blockers := NULL;
    BEGIN
      objs := storagelab_internal.bigint_migration_model(g.relations, g.column_names);
      relations := ARRAY(SELECT d.rel FROM (SELECT DISTINCT x.relation AS rel FROM unnest(objs) x WHERE x.kind = 'column') d
                          ORDER BY storagelab_internal.bigint_migration_qname(d.rel));
      script := storagelab_internal.bigint_migration_write(objs, g.relations, g.column_names, mode, function_hazards);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
      script := NULL;
      blockers := format('%s: %s%s', st, msg, CASE WHEN det <> '' THEN E'\n' || det ELSE '' END);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_plan(text, text) IS
  'one INT->BIGINT migration script (mode blocking, online (alias copy_swap) or shadow; function_hazards refuse, widen or accept) per group of columns that storagelab.int_overflow rates warning or critical (columns whose foreign-key components share a table are grouped, so each table is rewritten once); critical groups first; blockers instead of a script when none can be produced';

-- from extension/28_bigint_hazards.sql
-- storagelab install script, part 28: function hazards of an INT -> BIGINT
-- migration.
--
-- After ALTER COLUMN ... TYPE bigint, the values of the converted columns
-- reach functions that were written for integer: a helper declared
-- f(integer) or f(integer[]) called with NEW.key no longer resolves
-- ("function f(bigint) does not exist": fails at once, with small ids); a
-- PL/pgSQL variable or a return type of integer receiving the key fails
-- with 22003 once the values pass 2^31.  This part finds them by reading the
-- function sources (PL/pgSQL and SQL) and the view definitions, adds one
-- model row of kind function_hazard per finding, and one row of kind
-- widened_function per function the generator can widen; the model (part
-- 21) appends these rows.  The script writers (parts 23 and 25, through
-- part 27) call bigint_migration_apply_hazards() with the DBA's choice
-- (function_hazards => 'refuse' | 'widen' | 'accept') and, when plpgsql_check
-- is installed in the database, compare its errors before and after the
-- change inside the migration's transaction (bigint_migration_plpgsql_check_sql).
--
-- The reading is textual (no PL/pgSQL parser is callable from SQL):
-- doc/bigint_migration.md, "Function hazards", says what it finds and what
-- it misses; the plpgsql_check comparison in the script is the safety net.


-- Source text with comments and string literals blanked out, lower case.
CREATE FUNCTION storagelab_internal.bigint_migration_scrub(src text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT lower(regexp_replace(regexp_replace(regexp_replace($1,
           '--[^\n]*', ' ', 'g'),
           '/\*[^*]*\*+([^/*][^*]*\*+)*/', ' ', 'g'),
           '''([^'']|'''')*''', '''''', 'g'))
$$;

-- Every call "name(arg, ...)" in a scrubbed source: the called name (maybe
-- schema-qualified), the number of its arguments, each argument's position
-- and text (blanks removed), and the statement (between semicolons) it is in.
CREATE FUNCTION storagelab_internal.bigint_migration_calls(src text)
RETURNS TABLE (stmt int, fname text, nargs int, argno int, arg text)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ch      text[] := string_to_array(src, NULL);
  i       int;
  st      int := 1;
  stack   int[] := '{}';      -- open frames, innermost last
  f_name  text[] := '{}';     -- per frame: called name (NULL: plain parenthesis or bracket)
  f_start int[] := '{}';      --   where its current argument starts
  f_stmt  int[] := '{}';
  f_n     int[] := '{}';      --   arguments closed so far
  a_f     int[] := '{}';      -- per argument: its frame, position, text
  a_no    int[] := '{}';
  a_txt   text[] := '{}';
  top     int;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(ch), 0) LOOP
    IF ch[i] IN ('(', '[') THEN
      f_name := f_name || CASE WHEN ch[i] = '(' THEN
                  substring(substr(src, greatest(1, i - 130), i - greatest(1, i - 130))
                            FROM '([a-z_][a-z0-9_$]*(?:\.[a-z_][a-z0-9_$]*)?)\s*$') END;
      f_start := f_start || (i + 1); f_stmt := f_stmt || st; f_n := f_n || 0;
      stack := stack || cardinality(f_name);
    ELSIF ch[i] IN (',', ')', ']') AND cardinality(stack) > 0 THEN
      top := stack[cardinality(stack)];
      IF f_name[top] IS NOT NULL THEN
        f_n[top] := f_n[top] + 1;
        a_f := a_f || top; a_no := a_no || f_n[top];
        a_txt := a_txt || regexp_replace(substr(src, f_start[top], i - f_start[top]), '[\s"]+', '', 'g');
      END IF;
      f_start[top] := i + 1;
      IF ch[i] <> ',' THEN
        stack := stack[1:cardinality(stack) - 1];
      END IF;
    ELSIF ch[i] = ';' THEN
      st := st + 1;
    END IF;
  END LOOP;
  RETURN QUERY
    SELECT f_stmt[a.f], f_name[a.f], f_n[a.f], a.no, a.txt
      FROM unnest(a_f, a_no, a_txt) AS a(f, no, txt)
     WHERE a.txt <> '' OR f_n[a.f] > 1;
END
$fn$;

-- How an argument carries a converted value: 'bigint' (the value, or
-- arithmetic on it), 'bigint[]' (an ARRAY[...] or array_agg() of it), 'cast'
-- (cast back to a narrower integer by the caller), or NULL (it does not, as
-- far as a textual reading can tell).  carrier is a regular expression that
-- matches the value's spellings (new.col, t.col, a parameter name, $1).
CREATE FUNCTION storagelab_internal.bigint_migration_arg_class(arg text, carrier text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE
    WHEN $1 !~ $2 THEN NULL                                   -- the common case, one test
    WHEN $1 ~ ('^\(*(' || $2 || ')\)*$') THEN 'bigint'
    WHEN $1 ~ ('^\(*(' || $2 || ')\)*::(int|integer|int4|smallint|int2)$')
      OR $1 ~ ('^cast\((' || $2 || ')as(int|integer|int4|smallint|int2)\)$') THEN 'cast'
    WHEN $1 ~ ('^array\[(.*,)?(' || $2 || ')(,.*)?\]$')
      OR $1 ~ ('^array_agg\((distinct)?(' || $2 || ')(orderby.*)?\)$') THEN 'bigint[]'
    WHEN $1 ~ ('^(coalesce|greatest|least|abs)\((' || $2 || '),')
      OR $1 ~ ('^(' || $2 || ')[-+*/%]') OR $1 ~ ('[-+*](' || $2 || ')$') THEN 'bigint'
  END
$$;

-- Whether a parameter of type typ accepts a value of class cls.
CREATE FUNCTION storagelab_internal.bigint_migration_accepts(typ oid, cls text)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE $2
    WHEN 'bigint' THEN $1 IN ('int8'::regtype, 'anyelement'::regtype, 'anynonarray'::regtype, 'anycompatible'::regtype,
                              'anycompatiblenonarray'::regtype, '"any"'::regtype)
                       OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = 'int8'::regtype AND c.casttarget = $1 AND c.castcontext = 'i')
    WHEN 'bigint[]' THEN $1 IN ('int8[]'::regtype, 'anyarray'::regtype, 'anycompatiblearray'::regtype, 'anyelement'::regtype,
                                'anycompatible'::regtype, '"any"'::regtype)
    ELSE true
  END
$$;

-- Whether storagelab may re-create a function: PL/pgSQL or SQL with a
-- string body, not built in, not a member of an extension.
CREATE FUNCTION storagelab_internal.bigint_migration_widenable(fn oid)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                  WHERE p.oid = $1 AND l.lanname IN ('plpgsql', 'sql') AND p.prokind IN ('f', 'p')
                    AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
                    AND p.prosqlbody IS NULL)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = $1 AND d.deptype = 'e')
$$;

-- One function_hazard row.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_row(fn oid, argno int, target text, caller text, fails text, via text)
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o storagelab.bigint_migration_object;
BEGIN
  o.kind := 'function_hazard'; o.depth := 0;
  o.classid := 'pg_proc'::regclass; o.objid := fn; o.objsubid := argno;
  o.identity := format('function %s, %s', fn::regprocedure, target);
  o.hazard_target := target; o.hazard_caller := caller; o.hazard_fails := fails;
  o.lock := 'none';
  IF fails = 'immediately' THEN
    o.sqlstate := '42883';
    o.handling := format('receives %s from %s: no function matches after the type change, so it fails at once', via, caller);
    o.hint := CASE WHEN storagelab_internal.bigint_migration_widenable(fn)
                   THEN 'function_hazards => ''widen'' re-creates it with bigint; ''accept'' leaves it as it is'
                   ELSE 'storagelab cannot re-create it: cast the argument in the caller, or change the function by hand' END;
  ELSE
    o.sqlstate := '22003';
    o.handling := format('receives %s from %s: works until the values pass 2^31, then fails with integer out of range', via, caller);
    o.hint := 'declare it bigint (not done by storagelab: it changes only signatures)';
  END IF;
  RETURN o;
END
$fn$;

-- Hazards in the calls of one source text: an argument that carries the
-- converted value (see bigint_migration_arg_class) passed to a function
-- whose parameter is smallint or integer (or an array of them), when no
-- function of that name takes the bigint value.  stmt_filter, when given,
-- limits the reading to statements that match it (those naming the table).
CREATE FUNCTION storagelab_internal.bigint_migration_call_hazards(src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  stmts text[] := string_to_array(src, ';');
  c     record;
  p     record;
BEGIN
  FOR c IN
    SELECT DISTINCT k.fname, k.nargs, k.argno, storagelab_internal.bigint_migration_arg_class(k.arg, carrier) AS cls
      FROM storagelab_internal.bigint_migration_calls(src) k
     WHERE (stmt_filter IS NULL OR stmts[k.stmt] ~ stmt_filter)
       AND storagelab_internal.bigint_migration_arg_class(k.arg, carrier) IS NOT NULL
  LOOP
    -- some function of that name takes the value as it is: not a hazard
    CONTINUE WHEN c.cls <> 'cast' AND EXISTS (
      SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
       WHERE f.proname = split_part(c.fname, '.', -1) AND (c.fname !~ '\.' OR n.nspname = split_part(c.fname, '.', 1))
         AND f.pronargs >= c.nargs AND f.pronargs - f.pronargdefaults <= c.nargs AND f.prokind IN ('f', 'p')
         AND storagelab_internal.bigint_migration_accepts(f.proargtypes[c.argno - 1], c.cls));
    FOR p IN
      SELECT f.oid, f.proargtypes[c.argno - 1] AS t,
             CASE WHEN f.proallargtypes IS NULL THEN f.proargnames[c.argno] END AS pname
        FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
       WHERE f.proname = split_part(c.fname, '.', -1) AND (c.fname !~ '\.' OR n.nspname = split_part(c.fname, '.', 1))
         AND f.pronargs >= c.nargs AND f.pronargs - f.pronargdefaults <= c.nargs AND f.prokind IN ('f', 'p')
         AND f.proargtypes[c.argno - 1] = ANY (CASE WHEN c.cls = 'bigint[]' THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                                    ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
       ORDER BY f.oid
    LOOP
      RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
        p.oid, c.argno,
        format('parameter %s%s (%s)', c.argno, coalesce(' ' || quote_ident(nullif(p.pname, '')), ''), format_type(p.t, NULL)),
        caller, CASE WHEN c.cls = 'cast' THEN 'past 2^31' ELSE 'immediately' END,
        CASE WHEN c.cls = 'cast' THEN via || ' cast to ' || format_type(p.t, NULL) ELSE via || ' as ' || c.cls END);
    END LOOP;
  END LOOP;
END
$fn$;

-- A list split at its top-level commas (not those inside parentheses or
-- brackets), each item trimmed.
CREATE FUNCTION storagelab_internal.bigint_migration_split(list text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  items text[] := '{}';
  piece text := '';
  depth int := 0;
  ch    text;
BEGIN
  FOREACH ch IN ARRAY coalesce(string_to_array(list, NULL), '{}') LOOP
    depth := depth + CASE WHEN ch IN ('(', '[') THEN 1 WHEN ch IN (')', ']') THEN -1 ELSE 0 END;
    IF ch = ',' AND depth = 0 THEN
      items := items || btrim(piece); piece := '';
    ELSE
      piece := piece || ch;
    END IF;
  END LOOP;
  IF btrim(piece) <> '' THEN items := items || btrim(piece); END IF;
  RETURN items;
END
$fn$;

-- The result columns of function fn, in order: its OUT, INOUT and TABLE
-- parameters; else the attributes of its composite return type when that
-- is a type made by CREATE TYPE ... AS (a table's row type changes with the
-- table); else its return type, as one column with an empty name.
CREATE FUNCTION storagelab_internal.function_result_columns(fn oid)
RETURNS TABLE (pos int, name text, typ oid)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT row_number() OVER (ORDER BY u.ord)::int, coalesce(p.proargnames[u.ord], ''), u.t
    FROM pg_proc p, unnest(p.proallargtypes) WITH ORDINALITY AS u(t, ord)
   WHERE p.oid = $1 AND p.proargmodes[u.ord] IN ('o', 'b', 't')
  UNION ALL
  SELECT row_number() OVER (ORDER BY a.attnum)::int, a.attname::text, a.atttypid
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype JOIN pg_class k ON k.oid = t.typrelid AND k.relkind = 'c'
    JOIN pg_attribute a ON a.attrelid = k.oid AND a.attnum > 0 AND NOT a.attisdropped
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
  UNION ALL
  SELECT 1, '', p.prorettype
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
     AND NOT EXISTS (SELECT 1 FROM pg_class k WHERE k.oid = t.typrelid AND k.relkind = 'c')
$$;

-- The items of each PL/pgSQL RETURN QUERY SELECT in a scrubbed source, by
-- position (blanks removed, column aliases dropped), with the statement.
CREATE FUNCTION storagelab_internal.return_query_items(src text)
RETURNS TABLE (stmt int, pos int, item text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT s.n::int, i.k::int,
         regexp_replace(regexp_replace(i.item, '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g')
    FROM unnest(string_to_array($1, ';')) WITH ORDINALITY AS s(st, n),
         regexp_match(regexp_replace(s.st, '\s+', ' ', 'g'),
                      '(^|[^a-z0-9_$.])return\s+query\s+(with\M.*?\)\s*)?select\s+(distinct\s+|all\s+)?(.*?)(\s+(from|where|group|order|limit|union|except|intersect)\M.*)?$') AS m,
         unnest(storagelab_internal.bigint_migration_split(m[4])) WITH ORDINALITY AS i(item, k)
$$;

-- Hazards inside one function: PL/pgSQL variables declared smallint or
-- integer (or arrays of them), OUT/INOUT/TABLE parameters among them, that
-- receive the converted value (v := value, or SELECT/RETURNING ... INTO
-- with the value at the variable's position), and result columns of type
-- smallint or integer receiving it: the return type (RETURN value, RETURN
-- NEXT value), a column of RETURNS TABLE, OUT parameters or a composite
-- type (CREATE TYPE ... AS) at the value's position in a PL/pgSQL RETURN
-- QUERY or a SQL function's output.  "The value" is an expression
-- bigint_migration_arg_class recognises.  Assignments fail only past 2^31
-- (the assignment casts); RETURN QUERY fails at once (42804: the query's
-- column type must match the declared one exactly).
CREATE FUNCTION storagelab_internal.bigint_migration_value_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  lang   name := (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = fn);
  -- per statement: the variables assigned, and the values at the same positions
  a_var  text[] := '{}';
  a_val  text[] := '{}';
  -- values at result positions: position, value, 'query' (RETURN QUERY) or 'assign'
  r_pos  int[] := '{}';
  r_val  text[] := '{}';
  r_how  text[] := '{}';
  -- the result columns: names and types (one unnamed column for a scalar return type)
  res_name text[];
  res_type oid[];
  st     text;
  m      text[];
  tg     text[];
  it     text[];
  k      int;
  v      record;
  o      storagelab.bigint_migration_object;
BEGIN
  SELECT array_agg(c.name ORDER BY c.pos), array_agg(c.typ ORDER BY c.pos) INTO res_name, res_type
    FROM storagelab_internal.function_result_columns(fn) c;

  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    m := regexp_match(st, '(^|[^a-z0-9_$.])([a-z_][a-z0-9_$]*)\s*:=\s*(.*)$');
    IF m IS NOT NULL THEN
      a_var := a_var || m[2]; a_val := a_val || regexp_replace(m[3], '[\s"]+', '', 'g');
    END IF;
    -- SELECT items INTO targets [FROM ...], or ... RETURNING items INTO targets
    m := regexp_match(st, '\m(select|returning)\s+(.*?)\s+into\s+(strict\s+)?(.*?)(\s+from\M.*)?$');
    IF m IS NOT NULL THEN
      it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
      tg := storagelab_internal.bigint_migration_split(m[4]);
      FOR k IN 1 .. least(cardinality(it), cardinality(tg)) LOOP
        a_var := a_var || tg[k]; a_val := a_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
      END LOOP;
    END IF;
    -- what a function returns: the items of its output at their positions
    m := NULL;
    IF lang = 'plpgsql' THEN
      m := regexp_match(st, '(^|[^a-z0-9_$.])return\s+(next\s+)?(.*)$');
      IF m IS NOT NULL AND m[3] ~ '^query\M' THEN
        FOR v IN SELECT q.pos, q.item FROM storagelab_internal.return_query_items(st) q ORDER BY q.pos LOOP
          r_pos := r_pos || v.pos; r_val := r_val || v.item; r_how := r_how || 'query'::text;
        END LOOP;
      ELSIF m IS NOT NULL AND btrim(m[3]) <> '' THEN
        r_pos := r_pos || 1; r_how := r_how || 'assign'::text; r_val := r_val || regexp_replace(m[3], '[\s"]+', '', 'g');
      END IF;
    ELSE
      m := regexp_match(st, '\m(select|returning)\s+(.*?)(\s+(from|where|group|order|limit)\M.*)?$');
      IF m IS NOT NULL THEN
        it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
        FOR k IN 1 .. cardinality(it) LOOP
          r_pos := r_pos || k; r_how := r_how || 'assign'::text;
          r_val := r_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
        END LOOP;
      END IF;
    END IF;
  END LOOP;

  IF lang = 'plpgsql' THEN
    FOR v IN
      SELECT DISTINCT m1[1] AS name, m1[3] || CASE WHEN m1[4] IS NULL THEN '' ELSE '[]' END AS typ, false AS param
        FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
             unnest(string_to_array(blk.b[1], ';')) AS d(decl),
             regexp_match(d.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?(integer|int4|int|smallint|int2)\s*(\[\s*\])?(\s|$|:|not\M|default\M)') AS m1
      UNION
      -- OUT and INOUT parameters are variables of the function too
      SELECT lower(u.n), format_type(u.t, NULL), true
        FROM unnest(res_name, res_type) AS u(n, t)
       WHERE u.n <> '' AND (SELECT p.proallargtypes IS NOT NULL FROM pg_proc p WHERE p.oid = fn)
         AND u.t IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       ORDER BY 1
    LOOP
      IF EXISTS (SELECT 1 FROM unnest(a_var, a_val) AS a(var, val)
                  WHERE a.var = v.name AND storagelab_internal.bigint_migration_arg_class(a.val, carrier) IN ('bigint', 'bigint[]')) THEN
        RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('%s %s (%s)', CASE WHEN v.param THEN 'OUT parameter' ELSE 'variable' END, v.name,
                        replace(replace(v.typ, 'int4', 'integer'), 'int2', 'smallint')),
          caller, 'past 2^31', via);
      END IF;
    END LOOP;
  END IF;
  -- result columns: an integer column at a position where the output has the value
  FOR v IN
    SELECT r.pos, r.how, res_name[r.pos] AS name, res_type[r.pos] AS typ,
           storagelab_internal.bigint_migration_arg_class(r.val, carrier) AS cls
      FROM unnest(r_pos, r_val, r_how) AS r(pos, val, how)
     WHERE r.pos <= cardinality(res_type)
       AND res_type[r.pos] IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       AND storagelab_internal.bigint_migration_arg_class(r.val, carrier) IS NOT NULL
     ORDER BY r.pos, r.how DESC
  LOOP
    CONTINUE WHEN (v.cls = 'bigint[]') <> (v.typ IN ('int2[]'::regtype, 'int4[]'::regtype));
    o := storagelab_internal.bigint_migration_hazard_row(
      fn, 0, CASE WHEN cardinality(res_type) = 1 AND res_name[1] = '' THEN format('return type %s', format_type(v.typ, NULL))
                  ELSE format('result column %s%s (%s)', v.pos, coalesce(' ' || quote_ident(nullif(v.name, '')), ''), format_type(v.typ, NULL)) END,
      caller, CASE WHEN v.how = 'query' AND v.cls <> 'cast' THEN 'immediately' ELSE 'past 2^31' END, via);
    IF o.hazard_fails = 'immediately' THEN
      -- not a call that no longer resolves: the query's row no longer matches the declared one
      o.sqlstate := '42804';
      o.handling := format('returns %s from %s in RETURN QUERY where the function declares %s: every call fails at once (structure of query does not match function result type)',
                           via, caller, format_type(v.typ, NULL));
      o.hint := 'declare the result column bigint (its callers then receive bigint), or cast the value in the query; storagelab does not change result types';
    END IF;
    RETURN NEXT o;
  END LOOP;
END
$fn$;

-- Hazards in what one function writes: INSERT INTO t (cols) VALUES (...) or
-- SELECT ..., INSERT INTO t VALUES/SELECT (t's columns in order) and UPDATE
-- t SET col = ..., where the converted value goes into a smallint or integer
-- column (or an array of them) of a table outside the migration: an audit
-- or log table without a foreign key.  The write fails past 2^31 (the
-- assignment cast).  The table is found by name (and schema when the source
-- gives one); every table of that name that has such a column is listed.
CREATE FUNCTION storagelab_internal.bigint_migration_write_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text,
                                                                  objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st    text;
  m     text[];
  tname text;
  cols  text[];
  vals  text[];
  k     int;
  depth int;
  t     record;
  o     storagelab.bigint_migration_object;
BEGIN
  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    cols := NULL; vals := NULL;
    m := regexp_match(st, '\minsert into ([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as [a-z_][a-z0-9_$]*)? ?(\(([^()]*)\))? ?(overriding [a-z]+ value )?(values ?\((.*)|select (.*))$');
    IF m IS NOT NULL THEN
      tname := m[1];
      cols := CASE WHEN m[5] IS NOT NULL THEN storagelab_internal.bigint_migration_split(regexp_replace(m[5], '[\s"]+', '', 'g')) END;
      IF m[8] IS NOT NULL THEN
        -- the first row of VALUES: up to its closing parenthesis
        depth := 1; k := 0;
        WHILE depth > 0 AND k < length(m[8]) LOOP
          k := k + 1;
          depth := depth + CASE substr(m[8], k, 1) WHEN '(' THEN 1 WHEN ')' THEN -1 ELSE 0 END;
        END LOOP;
        vals := storagelab_internal.bigint_migration_split(left(m[8], k - 1));
      ELSE
        vals := storagelab_internal.bigint_migration_split(regexp_replace(
                  (regexp_match(m[9], '^(distinct |all )?(.*?)( (from|where|group|order|limit|on conflict|returning)\M.*)?$'))[2], '\s+as\s+[a-z_0-9$]+(,|$)', '\1', 'g'));
      END IF;
    ELSE
      m := regexp_match(st, '\mupdate (only )?([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as)?( [a-z_][a-z0-9_$]*)? set (.*?)( (from|where|returning)\M.*)?$');
      IF m IS NOT NULL THEN
        tname := m[2];
        SELECT array_agg(split_part(x, '=', 1) ORDER BY n), array_agg(substr(x, strpos(x, '=') + 1) ORDER BY n) INTO cols, vals
          FROM unnest(storagelab_internal.bigint_migration_split(m[6])) WITH ORDINALITY AS u(x, n)
         WHERE x ~ '^[a-z_][a-z0-9_$]*\s*=';
        cols := ARRAY(SELECT btrim(c) FROM unnest(cols) c);
      END IF;
    END IF;
    CONTINUE WHEN vals IS NULL;
    FOR k IN 1 .. cardinality(vals) LOOP
      vals[k] := regexp_replace(vals[k], '[\s"]+', '', 'g');
      CONTINUE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint'
                AND storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint[]';
      FOR t IN
        SELECT c.oid AS relid, a.attname, a.atttypid
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relname = split_part(tname, '.', -1) AND (tname !~ '\.' OR n.nspname = split_part(tname, '.', 1))
           AND c.relkind IN ('r', 'p', 'f')
           AND CASE WHEN cols IS NULL
                    THEN a.attnum = (SELECT b.attnum FROM pg_attribute b WHERE b.attrelid = c.oid AND b.attnum > 0 AND NOT b.attisdropped
                                      ORDER BY b.attnum OFFSET k - 1 LIMIT 1)
                    ELSE a.attname = cols[k] END
           AND a.atttypid = ANY (CASE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) = 'bigint[]'
                                      THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                      ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
           AND NOT EXISTS (SELECT 1 FROM storagelab_internal.bigint_migration_converted(objs) v WHERE v.relid = c.oid AND v.attname = a.attname)
         ORDER BY 1
      LOOP
        o := storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('writes column %s.%I (%s)', storagelab_internal.bigint_migration_qname(t.relid), t.attname, format_type(t.atttypid, NULL)),
          caller, 'past 2^31', via);
        o.hint := format('convert %s.%I to bigint too (in the same script: bigint_migration_group_script() with both columns), or cast in the writer',
                         storagelab_internal.bigint_migration_qname(t.relid), t.attname);
        RETURN NEXT o;
      END LOOP;
    END LOOP;
  END LOOP;
END
$fn$;

-- The columns of a model that change type: smallint or integer now.
CREATE FUNCTION storagelab_internal.bigint_migration_converted(objs storagelab.bigint_migration_object[])
RETURNS TABLE (relid oid, attname name)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT a.attrelid, a.attname
    FROM unnest($1) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
   WHERE x.kind = 'column' AND a.atttypid IN ('int2'::regtype, 'int4'::regtype)
$$;

-- A word as a regular expression matching it literally.
CREATE FUNCTION storagelab_internal.bigint_migration_re(word text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT regexp_replace(lower($1), '([^a-z0-9_])', '\\\1', 'g') $$;

-- The row that widens one function: DROP and CREATE with bigint (bigint[])
-- for its smallint/integer parameters at positions argnos, the same body,
-- options, owner, privileges and comment.  Objects depending on the function
-- that the model does not re-create anyway make the widening impossible: the
-- row then carries them in blocker (SQLSTATE 2BP01).
CREATE FUNCTION storagelab_internal.bigint_migration_widened_row(fn oid, argnos int[], objs storagelab.bigint_migration_object[])
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  p       record;
  args    text[];            -- pg_get_function_arguments, split at top-level commas
  pos     int := 0;
  i       int;
  head    text;
  def     text;
  newsig  text;
  deps    text;
BEGIN
  SELECT f.proname, f.prokind, f.proowner, f.proacl, f.proargtypes::oid[] AS types, n.nspname,
         pg_get_function_arguments(f.oid) AS fargs, obj_description(f.oid, 'pg_proc') AS descr INTO p
    FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace WHERE f.oid = fn;
  args := storagelab_internal.bigint_migration_split(p.fargs);
  FOR i IN 1 .. cardinality(args) LOOP
    CONTINUE WHEN args[i] ~ '^(OUT|TABLE) ';
    pos := pos + 1;
    IF pos = ANY (argnos) THEN
      args[i] := regexp_replace(args[i], '\m(integer|smallint)(\[\])?( DEFAULT .*)?$', 'bigint\2\3');
    END IF;
  END LOOP;
  newsig := format('%I.%I(%s)', p.nspname, p.proname,
                   (SELECT string_agg(CASE WHEN u.ord = ANY (argnos) AND u.t IN ('int2'::regtype, 'int4'::regtype) THEN 'bigint'
                                           WHEN u.ord = ANY (argnos) THEN 'bigint[]'
                                           ELSE format_type(u.t, NULL) END, ', ' ORDER BY u.ord)
                      FROM unnest(p.types) WITH ORDINALITY AS u(t, ord)));
  head := format('CREATE OR REPLACE %s %I.%I(%s)', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                 p.nspname, p.proname, p.fargs);
  def := rtrim(pg_get_functiondef(fn), E'\n');

  o.kind := 'widened_function'; o.depth := 0;
  o.classid := 'pg_proc'::regclass; o.objid := fn; o.objsubid := 0;
  o.identity := format('%s %s', CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, fn::regprocedure);
  o.hazard_target := newsig;
  o.lock := 'ACCESS EXCLUSIVE on the function object';
  o.handling := format('with function_hazards => ''widen'': dropped and created again as %s, same body, options, owner, privileges and comment', newsig);
  o.drop_sql := format(E'DROP %s %s;\n', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, fn::regprocedure);
  o.create_sql := format('CREATE %s %I.%I(%s)', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                         p.nspname, p.proname, array_to_string(args, ', '))
                  || substr(def, length(head) + 1) || E';\n'
                  || format(E'ALTER ROUTINE %s OWNER TO %I;\n', newsig, pg_get_userbyid(p.proowner))
                  || storagelab_internal.bigint_migration_acl_sql('ROUTINE', newsig, p.proacl, p.proowner)
                  || CASE WHEN p.descr IS NULL THEN '' ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', newsig, p.descr) END;
  o.check_sql := format('to_regprocedure(%L) IS NOT NULL AND to_regprocedure(%L) IS NULL', newsig, fn::regprocedure::text);
  -- what depends on the function must be re-created around it: the views
  -- and functions of the model are (dropped before it, created after it);
  -- anything else blocks the widening
  SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), '; ') INTO deps
    FROM pg_depend d
   WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = fn AND d.deptype = 'n'
     AND NOT EXISTS (SELECT 1 FROM unnest(objs) x
                      WHERE x.drop_sql IS NOT NULL
                        AND ((d.classid = 'pg_rewrite'::regclass AND x.kind IN ('view', 'materialized_view')
                              AND x.objid = (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = d.objid))
                             OR (d.classid = 'pg_proc'::regclass AND x.kind = 'function' AND x.objid = d.objid)));
  IF deps IS NOT NULL THEN
    o.blocker := format('%s cannot be widened: %s depend(s) on it and storagelab does not re-create them', fn::regprocedure, deps);
    o.sqlstate := '2BP01';
  ELSIF left(def, length(head)) <> head THEN
    o.blocker := format('the definition of %s does not start as expected (%s)', fn::regprocedure, head);
    o.sqlstate := 'XX000';
  END IF;
  RETURN o;
END
$fn$;

-- Every function hazard of a migration, given the rest of its model: entry
-- points are the trigger functions of the converted tables (NEW.col,
-- OLD.col), PL/pgSQL and SQL functions that name a converted table (col and
-- t.col in statements naming it), and the views of the model; variables
-- declared table.col%TYPE carry the value too; a function that would be
-- widened passes its parameter on (followed up to 8 levels).
CREATE FUNCTION storagelab_internal.bigint_migration_function_hazards(objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  res      storagelab.bigint_migration_object[] := '{}';
  h        storagelab.bigint_migration_object;
  r        record;
  q_fn     oid[] := '{}';   -- work: function (NULL for a view),
  q_src    text[] := '{}';  --   scrubbed text,
  q_car    text[] := '{}';  --   carrier expression,
  q_filter text[] := '{}';  --   statement filter,
  q_caller text[] := '{}';  --   who hands the value over,
  q_via    text[] := '{}';  --   what the value is,
  q_lvl    int[] := '{}';
  seen     text[] := '{}';
  i        int := 0;
BEGIN
  -- (a) trigger functions of the converted tables
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs))
    SELECT t.tgfoid, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS caller,
           (SELECT string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS cols,
           (SELECT string_agg(format('NEW.%I', c.attname), ', ' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS via
      FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
     WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
       AND t.tgrelid IN (SELECT relid FROM conv)
     ORDER BY 2
  LOOP
    q_fn := q_fn || r.tgfoid; q_src := q_src || NULL::text; q_car := q_car || ('(new|old)\.(' || r.cols || ')');
    q_filter := q_filter || NULL::text; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;
  -- (b) functions that name a converted table, (c) views of the model
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs)),
    tabs AS (
      SELECT c.relid, storagelab_internal.bigint_migration_re(k.relname) AS rel_re,
             string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) AS cols,
             string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ' ORDER BY c.attname) AS via
        FROM conv c JOIN pg_class k ON k.oid = c.relid GROUP BY c.relid, k.relname),
    funcs AS MATERIALIZED (   -- each source scrubbed once
      SELECT p.oid, storagelab_internal.bigint_migration_scrub(p.prosrc) AS src
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
    SELECT f.oid AS fn, f.src, t.cols, '(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])' AS filter,
           format('function %s', f.oid::regprocedure) AS caller, t.via
      FROM funcs f JOIN tabs t ON f.src ~ ('(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])')
    UNION ALL
    SELECT NULL, storagelab_internal.bigint_migration_scrub(pg_get_viewdef(x.objid)), t.cols, NULL, x.identity, t.via
      FROM unnest(objs) x
      JOIN LATERAL (SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') AS cols,
                           string_agg(DISTINCT format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ') AS via
                      FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                      JOIN conv c ON c.relid = d.refobjid AND c.attname = (SELECT attname FROM pg_attribute WHERE attrelid = d.refobjid AND attnum = d.refobjsubid)
                     WHERE w.ev_class = x.objid) t ON t.cols IS NOT NULL
     WHERE x.kind IN ('view', 'materialized_view')
     ORDER BY 5
  LOOP
    q_fn := q_fn || r.fn; q_src := q_src || r.src; q_car := q_car || ('([a-z_][a-z0-9_$]*\.)?(' || r.cols || ')');
    q_filter := q_filter || r.filter; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;

  WHILE i < cardinality(q_fn) AND i < 10000 LOOP
    i := i + 1;
    IF q_src[i] IS NULL THEN
      q_src[i] := storagelab_internal.bigint_migration_scrub((SELECT prosrc FROM pg_proc WHERE oid = q_fn[i]));
    END IF;
    -- PL/pgSQL variables declared table.column%TYPE of a converted column
    -- become bigint with it: they carry the value too
    q_car[i] := q_car[i] || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                        FROM regexp_matches(q_src[i], '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                                       WHERE ('new.' || m[3]) ~ ('^(' || q_car[i] || ')$')), '');
    FOR h IN
      SELECT * FROM storagelab_internal.bigint_migration_call_hazards(q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_value_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
       WHERE q_fn[i] IS NOT NULL
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_write_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i], objs)
       WHERE q_fn[i] IS NOT NULL
    LOOP
      CONTINUE WHEN format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller) = ANY (seen);
      seen := seen || format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller);
      res := res || h;
      -- a widened function passes its (now bigint) parameter on
      IF h.hazard_fails = 'immediately' AND h.objsubid > 0 AND q_lvl[i] < 8 AND storagelab_internal.bigint_migration_widenable(h.objid)
         AND format('%s:%s', h.objid, h.objsubid) <> ALL (seen) THEN
        seen := seen || format('%s:%s', h.objid, h.objsubid);
        q_fn := q_fn || h.objid; q_src := q_src || NULL::text; q_filter := q_filter || NULL::text;
        q_car := q_car || (SELECT '(' || coalesce(storagelab_internal.bigint_migration_re(nullif(p.proargnames[h.objsubid], '')) || '|', '')
                                  || '\$' || h.objsubid || ')'
                             FROM pg_proc p WHERE p.oid = h.objid);
        q_caller := q_caller || format('function %s', h.objid::regprocedure);
        q_via := q_via || format('its parameter %s once widened', h.objsubid);
        q_lvl := q_lvl || (q_lvl[i] + 1);
      END IF;
    END LOOP;
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(res);
  -- one widening row per function that fails at once and can be re-created
  RETURN QUERY
    SELECT w.*
      FROM (SELECT x.objid, array_agg(DISTINCT x.objsubid) AS argnos FROM unnest(res) x
             WHERE x.hazard_fails = 'immediately' AND x.objsubid > 0 AND storagelab_internal.bigint_migration_widenable(x.objid)
             GROUP BY x.objid) g,
           LATERAL storagelab_internal.bigint_migration_widened_row(g.objid, g.argnos, objs) w;
END
$fn$;

-- The model as a script writer uses it under the DBA's choice:
--   refuse: error when a hazard fails at once (the default);
--   widen:  keep the widened_function rows (error if a function that fails
--           at once cannot be widened);
--   accept: drop the widened_function rows, leave the functions as they are.
-- The function_hazard rows stay in every case: the script header lists them.
CREATE FUNCTION storagelab_internal.bigint_migration_apply_hazards(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det  text;
  fns  text;   -- functions whose parameters must widen
  rets text;   -- functions whose result columns must widen (not done by storagelab)
BEGIN
  IF function_hazards IS NULL THEN
    RAISE EXCEPTION 'function_hazards must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use function_hazards => ''refuse'' (the default), ''widen'' or ''accept''.';
  ELSIF function_hazards NOT IN ('refuse', 'widen', 'accept') THEN
    RAISE EXCEPTION 'invalid function_hazards "%"', function_hazards USING ERRCODE = 'invalid_parameter_value',
      HINT = 'Valid values are ''refuse'', ''widen'' and ''accept''.';
  END IF;
  SELECT string_agg(x.identity || ' ' || x.handling, E'\n' ORDER BY x.identity, x.hazard_caller),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid > 0),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid = 0)
    INTO det, fns, rets
    FROM unnest(objs) x WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately';
  IF function_hazards = 'refuse' AND det IS NOT NULL THEN
    RAISE EXCEPTION 'the migration would break functions that receive the converted values'
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = det,
            HINT = CASE WHEN rets IS NULL
                        THEN format('Generate the script with function_hazards => ''widen'' to re-create %s with bigint parameters in the same transaction, '
                                    'or with function_hazards => ''accept'' to change them yourself.', fns)
                        ELSE format('Declare the result columns of %s bigint (or cast the value in the query) by hand, then generate the script again; '
                                    'or generate it with function_hazards => ''accept'' and change them in the same maintenance window.', rets) END;
  END IF;
  IF function_hazards = 'widen' THEN
    SELECT string_agg(d, E'\n' ORDER BY d) INTO det FROM (
      SELECT x.identity || ' (called by ' || x.hazard_caller || '): storagelab cannot re-create it (built in, in an extension, not PL/pgSQL or SQL, or with a SQL-standard body)' AS d
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid > 0
         AND NOT storagelab_internal.bigint_migration_widenable(x.objid)
      UNION ALL
      SELECT x.identity || ' (' || x.hazard_caller || '): widening changes parameters only, not what a function returns'
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid = 0
      UNION ALL
      SELECT x.blocker FROM unnest(objs) x WHERE x.kind = 'widened_function' AND x.blocker IS NOT NULL) y;
    IF det IS NOT NULL THEN
      RAISE EXCEPTION 'cannot widen every function that the converted values would break'
        USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
              HINT = 'Cast the argument in the caller, or change these functions by hand, then generate the script again.';
    END IF;
    RETURN objs;
  END IF;
  RETURN ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'widened_function');
END
$fn$;

-- Lines for a script header: every hazard and what the script does about it.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_header(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- Function hazards (function_hazards => %L): functions the converted values reach with a narrower type:\n', $2)
      || coalesce(string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(
                    format('%s <- %s: fails %s; %s', x.identity, x.hazard_caller, x.hazard_fails,
                           CASE WHEN w.hazard_target IS NOT NULL THEN 'widened to ' || w.hazard_target ELSE 'left as it is' END)) || E'\n',
                  '' ORDER BY x.hazard_fails, x.identity, x.hazard_caller), E'--   (none)\n')
      || E'-- (PL/pgSQL functions that use the converted tables are checked with plpgsql_check, when it is installed, before COMMIT)\n'
    FROM unnest($1) x
    LEFT JOIN unnest($1) w ON w.kind = 'widened_function' AND w.objid = x.objid
   WHERE x.kind = 'function_hazard'
$$;

-- DO blocks for the script: phase 'before' checks that the functions to
-- widen are unchanged since generation, and records the errors plpgsql_check
-- reports for every PL/pgSQL function that uses the converted tables (trigger
-- functions with their table, the functions of the hazard rows, functions
-- naming a converted table); phase 'after' (just before COMMIT) checks them
-- again and rolls back on any error that was not there before.  Nothing
-- happens when plpgsql_check is not installed in the database.  The checks
-- run with the sessions' default search_path (pg_settings.reset_val), as the
-- application's sessions would run the functions.
CREATE FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(objs storagelab.bigint_migration_object[], phase text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  vals text;
  q    text;
  pre  text;
BEGIN
  WITH conv AS (
    SELECT DISTINCT x.relation AS relid, k.relname
      FROM unnest(objs) x JOIN pg_class k ON k.oid = x.relation WHERE x.kind = 'column'),
  fns AS (
    SELECT t.tgfoid AS fn, storagelab_internal.bigint_migration_qname(t.tgrelid) AS rel
      FROM pg_trigger t JOIN conv ON conv.relid = t.tgrelid WHERE NOT t.tgisinternal AND t.tgparentid = 0
    UNION
    SELECT x.objid, NULL FROM unnest(objs) x WHERE x.kind IN ('function_hazard', 'widened_function')
    UNION
    SELECT p.oid, NULL FROM pg_proc p, conv
     WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql') AND p.prorettype <> 'trigger'::regtype
       AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(conv.relname) || '($|[^a-z0-9_$])'))
  SELECT string_agg(format('(%L, %L, %L)', f.fn::regprocedure::text,
                           CASE WHEN phase = 'after' THEN coalesce(w.hazard_target, f.fn::regprocedure::text) ELSE f.fn::regprocedure::text END,
                           f.rel), ', ' ORDER BY 1)
    INTO vals
    FROM fns f JOIN pg_proc p ON p.oid = f.fn JOIN pg_language l ON l.oid = p.prolang
    LEFT JOIN unnest(objs) w ON w.kind = 'widened_function' AND w.objid = f.fn
   WHERE l.lanname = 'plpgsql' AND (p.prorettype <> 'trigger'::regtype OR f.rel IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = f.fn AND d.deptype = 'e');
  -- the functions to widen must be as they were when the script was
  -- generated: it re-creates them from that text
  IF phase = 'before' THEN
    SELECT E'-- The functions to widen are unchanged since generation (they are re-created from their text then).\n'
           || 'DO ' || storagelab_internal.dollar_quote(
                E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n'
                || string_agg(format(E'  IF md5(coalesce(pg_get_functiondef(to_regprocedure(%L)), '''')) <> %L THEN\n'
                                     '    problems := problems || %L::text;\n  END IF;\n',
                                     x.objid::regprocedure, md5(pg_get_functiondef(x.objid)), x.identity || ' is missing or changed'),
                              '' ORDER BY x.identity)
                || E'  IF cardinality(problems) > 0 THEN\n'
                || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
                || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
                || E'            HINT = ''Generate the script again with storagelab.bigint_migration_script().'';\n  END IF;\nEND\n')
           || E';\n\n'
      INTO pre
      FROM unnest(objs) x WHERE x.kind = 'widened_function';
  END IF;
  IF vals IS NULL THEN
    RETURN coalesce(pre, '');
  END IF;
  -- %1$I: the schema of plpgsql_check, filled in when the script runs
  q := replace(format('SELECT f.k, c.sqlstate, c.message FROM (VALUES %s) f(k, sig, rel),'
                      ' LATERAL %s.plpgsql_check_function_tb(f.sig::regprocedure, coalesce(to_regclass(f.rel)::oid, 0)::regclass, fatal_errors => false) c'
                      ' WHERE c.level = ''error''', vals, '@@nsp@@'), '%', '%%');
  q := replace(q, '@@nsp@@', '%1$I');
  IF phase = 'before' THEN
    RETURN coalesce(pre, '')
        || E'-- plpgsql_check (when installed): the errors of the functions that use these tables, before the change\n'
        || 'DO ' || storagelab_internal.dollar_quote(format(
             E'\nDECLARE\n  nsp name;\nBEGIN\n'
             '  SELECT n.nspname INTO nsp FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ''plpgsql_check'';\n'
             '  IF nsp IS NULL THEN\n    RAISE NOTICE ''plpgsql_check is not installed in this database: functions are not checked'';\n    RETURN;\n  END IF;\n'
             '  -- the functions run with the sessions'' default search_path: check them with it\n'
             '  PERFORM set_config(''search_path'', (SELECT reset_val FROM pg_settings WHERE name = ''search_path''), true);\n'
             '  EXECUTE format(%L, nsp);\n'
             '  PERFORM set_config(''search_path'', ''pg_catalog, pg_temp'', true);\nEND\n',
             'CREATE TEMP TABLE storagelab_plpgsql_check_before ON COMMIT DROP AS ' || q)) || E';\n\n';
  END IF;
  RETURN E'-- plpgsql_check (when installed): no function that uses these tables has an error it did not have before\n'
      || 'DO ' || storagelab_internal.dollar_quote(format(
           E'\nDECLARE\n  nsp name;\n  bad text;\nBEGIN\n'
           '  SELECT n.nspname INTO nsp FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ''plpgsql_check'';\n'
           '  IF nsp IS NULL OR to_regclass(''pg_temp.storagelab_plpgsql_check_before'') IS NULL THEN\n    RETURN;\n  END IF;\n'
           '  PERFORM set_config(''search_path'', (SELECT reset_val FROM pg_settings WHERE name = ''search_path''), true);\n'
           '  EXECUTE format(%L, nsp) INTO bad;\n'
           '  PERFORM set_config(''search_path'', ''pg_catalog, pg_temp'', true);\n'
           '  IF bad IS NOT NULL THEN\n'
           '    RAISE EXCEPTION ''plpgsql_check finds new errors in functions that use the converted columns; rolling back''\n'
           '      USING ERRCODE = ''data_exception'', DETAIL = bad,\n'
           '            HINT = ''Nothing was changed.  Generate the script with function_hazards => ''''widen'''', or fix these functions first.'';\n'
           '  END IF;\nEND\n',
           'SELECT string_agg(a.k || '': '' || a.message, ''; '' ORDER BY a.k, a.message) FROM (' || q || ') a'
           ' WHERE NOT EXISTS (SELECT 1 FROM pg_temp.storagelab_plpgsql_check_before b'
           ' WHERE b.k = a.k AND b.sqlstate IS NOT DISTINCT FROM a.sqlstate AND b.message = a.message)')) || E';\n\n';
END
$fn$;

COMMENT ON FUNCTION storagelab_internal.bigint_migration_scrub(text) IS
  'function or view source with comments and string literals blanked out, lower case';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_calls(text) IS
  'every call name(arg, ...) in a scrubbed source: name, argument count, position and text of each argument, statement number';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_arg_class(text, text) IS
  'whether a call argument carries the converted value: bigint, bigint[], cast (to a narrower integer) or NULL';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_accepts(oid, text) IS
  'whether a parameter type takes a bigint (or bigint[]) argument without an explicit cast';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widenable(oid) IS
  'whether storagelab may re-create a function with bigint parameters: PL/pgSQL or SQL with a string body, not built in, not in an extension';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_row(oid, int, text, text, text, text) IS
  'one function_hazard row of the INT->BIGINT dependency model';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_call_hazards(text, text, text, text, text) IS
  'function hazards in the calls of one source: the converted value passed to a smallint/integer parameter';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_value_hazards(oid, text, text, text, text, text) IS
  'function hazards inside one function: smallint/integer PL/pgSQL variables, OUT parameters, return types and result columns (RETURNS TABLE, composite types, RETURN QUERY) that receive the converted value';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write_hazards(oid, text, text, text, text, text, storagelab.bigint_migration_object[]) IS
  'function hazards in what one function writes: the converted value inserted or updated into a smallint/integer column of a table outside the migration';
COMMENT ON FUNCTION storagelab_internal.function_result_columns(oid) IS
  'the result columns of a function in order: OUT/INOUT/TABLE parameters, else the attributes of a CREATE TYPE composite return type, else the return type';
COMMENT ON FUNCTION storagelab_internal.return_query_items(text) IS
  'the select-list items of each PL/pgSQL RETURN QUERY SELECT in a scrubbed source, by position';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_split(text) IS
  'a list split at its top-level commas, items trimmed';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_converted(storagelab.bigint_migration_object[]) IS
  'the columns of an INT->BIGINT model that change type (smallint or integer now)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_re(text) IS
  'a word as a regular expression that matches it literally (lower case)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widened_row(oid, int[], storagelab.bigint_migration_object[]) IS
  'the widened_function row of the INT->BIGINT model: DROP and CREATE of a function with bigint parameters';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_function_hazards(storagelab.bigint_migration_object[]) IS
  'function_hazard and widened_function rows of an INT->BIGINT migration, given the rest of its model';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_apply_hazards(storagelab.bigint_migration_object[], text) IS
  'the INT->BIGINT model under function_hazards refuse, widen or accept (refuse and unwidenable hazards raise errors)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_header(storagelab.bigint_migration_object[], text) IS
  'script header lines listing the function hazards and what the script does about them';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(storagelab.bigint_migration_object[], text) IS
  'DO block of a generated script: plpgsql_check errors of the functions using the converted tables, recorded before and compared after';

-- ---------------------------------------------------------------------------
-- Any type change, not only INT -> BIGINT: the layout scripts (part 61)
-- retype columns in every direction (int -> smallint, text -> uuid,
-- numeric -> integer, int -> bigint).  The same textual reading as above,
-- with the old and the new type as parameters: a call that passes the
-- value to a function no overload of which takes the new type, and a
-- comparison of the value with a parameter or variable for which no
-- operator takes the new type, fail at once after the change.

-- Whether a parameter (or operand) of type param takes a value of type typ
-- (an array of it when arr) without an explicit cast.
CREATE FUNCTION storagelab_internal.type_change_accepts(param oid, typ oid, arr boolean)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN NOT $3 THEN
           $1 = $2
           OR $1 IN ('anyelement'::regtype, 'anynonarray'::regtype, 'anycompatible'::regtype,
                     'anycompatiblenonarray'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = $1 AND c.castcontext = 'i')
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $2 AND t.typtype = 'd' AND t.typbasetype = $1)
         ELSE
           $1 IN ('anyarray'::regtype, 'anycompatiblearray'::regtype, 'anyelement'::regtype,
                  'anycompatible'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $1 AND t.typelem <> 0 AND t.typsubscript = 'array_subscript_handler'::regproc
                        AND (t.typelem = $2
                             OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = t.typelem AND c.castcontext = 'i')))
         END
$$;
COMMENT ON FUNCTION storagelab_internal.type_change_accepts(oid, oid, boolean) IS
  'whether a parameter or operand type takes a value of another type (or an array of it) without an explicit cast: same type, polymorphic, implicit cast, domain over it';

-- The function hazards of retyping columns of one table.  changes: the
-- layout plan's [{"column_name", "from", "to"}, ...].  Entry points: the
-- PL/pgSQL trigger functions of the table and of its partitions or children
-- (NEW.col, OLD.col), and the PL/pgSQL and SQL functions whose statements
-- name the table (col, x.col; variables declared table.col%TYPE too).  A
-- hazard: the value passed to a function (or an ARRAY[] of it) no overload
-- of which takes the new type while one took the old, or compared (=, <>,
-- <, ...) with a parameter or declared variable when no operator takes the
-- new type with it while one took the old (42883), or returned by a
-- PL/pgSQL RETURN QUERY in a result column declared with the old type
-- (42804).  All fail at once.
-- One row per function that reads a changed column, hazard NULL when none
-- was found in it.
CREATE FUNCTION storagelab_internal.type_change_function_hazards(relation regclass, changes jsonb)
RETURNS TABLE (fn regprocedure, caller text, column_name text, old_type text, new_type text, hazard text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e      jsonb;
  o_t    oid;
  n_t    oid;
  r      record;
  k      record;
  v      record;
  src    text;
  car    text;
  stmts  text[];
  found_one boolean;
  ops    text := '(=|<>|!=|<=|>=|<|>)';
  opnd   text := '(\$[0-9]+|[a-z_][a-z0-9_$]*)';
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    o_t := to_regtype(e->>'from'); n_t := to_regtype(e->>'to');
    CONTINUE WHEN o_t IS NULL OR n_t IS NULL OR o_t = n_t;
    column_name := e->>'column_name'; old_type := format_type(o_t, NULL); new_type := format_type(n_t, NULL);
    FOR r IN
      -- trigger functions of the table and of its partitions or children
      SELECT DISTINCT t.tgfoid AS f, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS who,
             '(?:new|old)\.(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')' AS carrier, NULL::text AS filter
        FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
         AND t.tgrelid IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[relation::oid]) m)
      UNION
      -- functions whose statements name the table
      SELECT p.oid, format('function %s', p.oid::regprocedure),
             '(?:[a-z_][a-z0-9_$]*\.)?(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')',
             '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])'
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k2
       WHERE k2.oid = relation AND l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.prorettype <> 'trigger'::regtype
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
         AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])')
      ORDER BY 2
    LOOP
      src := storagelab_internal.bigint_migration_scrub((SELECT p.prosrc FROM pg_proc p WHERE p.oid = r.f));
      car := r.carrier;
      -- PL/pgSQL variables declared table.column%TYPE of the column carry the value too
      car := car || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                FROM regexp_matches(src, '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                               WHERE m[3] = lower(e->>'column_name')), '');
      stmts := ARRAY(SELECT s FROM unnest(string_to_array(src, ';')) s WHERE r.filter IS NULL OR s ~ r.filter);
      CONTINUE WHEN NOT EXISTS (SELECT 1 FROM unnest(stmts) s WHERE s ~ ('(^|[^a-z0-9_$.])(' || car || ')($|[^a-z0-9_$])'));
      fn := r.f; caller := r.who; found_one := false;
      -- calls
      FOR k IN
        SELECT DISTINCT c.fname, c.nargs, c.argno, storagelab_internal.bigint_migration_arg_class(c.arg, car) = 'bigint[]' AS arr
          FROM storagelab_internal.bigint_migration_calls(array_to_string(stmts, ';')) c
         WHERE storagelab_internal.bigint_migration_arg_class(c.arg, car) IN ('bigint', 'bigint[]')
         ORDER BY 1, 3
      LOOP
        CONTINUE WHEN EXISTS (
          SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], n_t, k.arr));
        FOR v IN
          SELECT f.oid::regprocedure AS callee FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], o_t, k.arr)
           ORDER BY f.oid
        LOOP
          hazard := format('passes %s (%s) as argument %s of %s: no function of that name takes %s%s', column_name,
                           new_type || CASE WHEN k.arr THEN '[]' ELSE '' END, k.argno, v.callee,
                           new_type, CASE WHEN k.arr THEN '[]' ELSE '' END);
          found_one := true;
          RETURN NEXT;
        END LOOP;
      END LOOP;
      -- comparisons with a parameter or a declared variable
      FOR k IN
        WITH params AS (
          SELECT '$' || u.n AS name, u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n) WHERE p.oid = r.f
          UNION ALL
          SELECT lower(p.proargnames[u.n]), u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n)
           WHERE p.oid = r.f AND p.proallargtypes IS NULL AND coalesce(p.proargnames[u.n], '') <> ''
          UNION ALL
          SELECT d[1], to_regtype(btrim(d[3]))
            FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
                 unnest(string_to_array(blk.b[1], ';')) AS x(decl),
                 regexp_match(x.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?([a-z_][a-z0-9_ ]*?(\([0-9, ]+\))?)\s*(:=|default\M|not\s+null\M|$)') AS d
           WHERE to_regtype(btrim(d[3])) IS NOT NULL),
        cmp AS (
          SELECT m[3] AS op, m[4] AS other, true AS value_left
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])(' || car || ')\s*' || ops || '\s*' || opnd || '($|[^a-z0-9_$.(:])', 'g') m
          UNION ALL
          SELECT m[3], m[2], false
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])' || opnd || '\s*' || ops || '\s*(' || car || ')($|[^a-z0-9_$.(:])', 'g') m)
        SELECT DISTINCT c.op, c.other, c.value_left, p.t
          FROM cmp c JOIN params p ON p.name = c.other
         WHERE c.other !~ ('^(' || car || ')$')
         ORDER BY 2, 1
      LOOP
        CONTINUE WHEN k.t IS NULL OR EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, n_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, n_t, false) END);
        CONTINUE WHEN NOT EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, o_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, o_t, false) END);
        hazard := format('compares %s (%s) with %s (%s): no operator %s', column_name, new_type, k.other, format_type(k.t, NULL),
                         CASE WHEN k.value_left THEN format('%s %s %s', new_type, k.op, format_type(k.t, NULL))
                              ELSE format('%s %s %s', format_type(k.t, NULL), k.op, new_type) END);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      -- RETURN QUERY: each column of the query must have the declared type exactly
      FOR k IN
        SELECT DISTINCT q.pos, c.name
          FROM storagelab_internal.return_query_items(array_to_string(stmts, ';')) q
          JOIN storagelab_internal.function_result_columns(r.f) c ON c.pos = q.pos
         WHERE q.item ~ ('^\(*(' || car || ')\)*$') AND c.typ = o_t
         ORDER BY 1
      LOOP
        hazard := format('returns %s (%s) in RETURN QUERY as result column %s%s, declared %s: every call fails (structure of query does not match function result type)',
                         column_name, new_type, k.pos, coalesce(' ' || quote_ident(nullif(k.name, '')), ''), old_type);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      IF NOT found_one THEN
        hazard := NULL;
        RETURN NEXT;
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.type_change_function_hazards(regclass, jsonb) IS
  'functions reading retyped columns of a table (trigger functions with NEW/OLD, functions naming the table), each with the calls and comparisons that no function or operator takes with the new type and the RETURN QUERY columns declared with the old type (fail at once), hazard NULL when none';

-- from extension/40_toast.sql: storagelab.storage_migration_script
CREATE OR REPLACE FUNCTION storagelab.storage_migration_script(
    relation regclass, column_name name, storage text DEFAULT 'external',
    rewrite_existing boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel         pg_class;
  att         pg_attribute;
  words       text[];
  target      text;            -- external | extended | main
  method      text;            -- pglz | lz4 | NULL (unchanged)
  lock_to     text := storagelab_internal.setting('scripts.lock_timeout');
  retries     int  := storagelab_internal.setting('scripts.lock_retries')::int;
  typ         text;
  base_typ    oid;
  rewrite_expr text;
  set_list    text;            -- the rewrite's SET clause
  rewrite_cond text;
  col         text := quote_ident(column_name);
  out         text;
  step        int := 0;
  t           record;
  stmt        text;
BEGIN
  SELECT * INTO rel FROM pg_class WHERE oid = relation;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'relation with OID % does not exist', relation::oid
      USING ERRCODE = 'undefined_table',
            HINT = 'Pass an existing table as a regclass, for example ''public.files''::regclass.';
  END IF;
  IF rel.relkind NOT IN ('r', 'p') THEN
    RAISE EXCEPTION '"%" is not a table', relation
      USING ERRCODE = 'wrong_object_type',
            DETAIL = 'storage_migration_script() writes ALTER TABLE and UPDATE statements, which apply to tables and partitioned tables only.',
            HINT = 'For a materialized view, run ALTER MATERIALIZED VIEW ... ALTER COLUMN ... SET STORAGE, then REFRESH MATERIALIZED VIEW.';
  END IF;
  SELECT * INTO att FROM pg_attribute
   WHERE attrelid = relation AND attname = column_name AND attnum > 0 AND NOT attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of relation "%" does not exist', column_name, relation
      USING ERRCODE = 'undefined_column',
            HINT = 'Pass the name of one of the table''s columns, as stored (case-sensitive).';
  END IF;
  typ := format_type(att.atttypid, NULL);
  -- A domain is handled as the type it is built on (domains over domains
  -- too): the rewrite's value is of that type and is assigned back to the
  -- domain column, which checks the domain's constraints.
  WITH RECURSIVE d(oid, base) AS (
    SELECT ty.oid, ty.typbasetype FROM pg_type ty WHERE ty.oid = att.atttypid
    UNION ALL
    SELECT ty.oid, ty.typbasetype FROM pg_type ty JOIN d ON ty.oid = d.base
  )
  SELECT d.oid INTO base_typ FROM d WHERE d.base = 0;
  -- Names are interpolated into comment lines too: there, line breaks in a
  -- (quoted) name become spaces, so that no name can end a comment.
  rewrite_expr := CASE base_typ
    WHEN 'bytea'::regtype   THEN format('%s || ''''::bytea', col)
    WHEN 'text'::regtype    THEN format('%s || ''''::text', col)
    WHEN 'varchar'::regtype THEN format('%s || ''''::text', col)
    WHEN 'jsonb'::regtype   THEN format('%s::text::jsonb', col)
    WHEN 'json'::regtype    THEN format('%s::text::json', col)   -- json keeps its text as it is
    END;
  IF rewrite_expr IS NULL THEN
    RAISE EXCEPTION 'column "%" of relation "%" has type %, which storage_migration_script() does not handle', column_name, relation, typ
      USING ERRCODE = 'datatype_mismatch',
            DETAIL = 'Supported types are bytea, text, character varying, json and jsonb, and domains over them.',
            HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand for other types.';
  END IF;
  set_list := format('%s = %s', col, rewrite_expr);
  IF att.attgenerated <> '' THEN
    -- A generated column cannot be assigned: assigning the columns its
    -- expression reads to themselves makes PostgreSQL compute it anew (a new
    -- value, stored as the new setting says).
    SELECT string_agg(format('%1$I = %1$I', r.attname), ', ' ORDER BY r.attnum) INTO set_list
      FROM pg_attrdef ad
      JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
      JOIN pg_attribute r ON r.attrelid = dep.refobjid AND r.attnum = dep.refobjsubid
     WHERE ad.adrelid = relation AND ad.adnum = att.attnum
       AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = relation
       AND dep.refobjsubid > 0 AND dep.refobjsubid <> att.attnum AND NOT r.attisdropped
       AND r.attidentity <> 'a';  -- GENERATED ALWAYS AS IDENTITY can only be set to DEFAULT
    IF att.attgenerated <> 's' OR (rewrite_existing AND set_list IS NULL) THEN
      RAISE EXCEPTION 'column "%" of relation "%" is a generated column whose values storage_migration_script() cannot rewrite', column_name, relation
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'Only a stored generated column whose expression reads other columns (not identity columns GENERATED ALWAYS) is rewritten: the script assigns those columns to themselves.',
              HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand.';
    END IF;
  END IF;

  -- The DO blocks below are dollar-quoted; names must not end them early.
  IF relation::text ~ '\$(step|rewrite)\$' OR col ~ '\$(step|rewrite)\$' THEN
    RAISE EXCEPTION 'relation or column name contains a dollar-quote tag of the generated script'
      USING ERRCODE = 'invalid_name',
            HINT = 'Write the ALTER TABLE statements by hand for this object.';
  END IF;

  words := regexp_split_to_array(lower(btrim(storage)), '\s+');
  IF array_length(words, 1) = 1 AND words[1] IN ('pglz', 'lz4') THEN
    words := ARRAY['extended', words[1]];
  END IF;
  target := words[1];
  method := words[2];
  IF target NOT IN ('external', 'extended', 'main') OR array_length(words, 1) > 2
     OR (method IS NOT NULL AND method NOT IN ('pglz', 'lz4'))
     OR (target = 'external' AND method IS NOT NULL) THEN
    RAISE EXCEPTION 'invalid storage "%"', storage
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storage is one of external, extended or main, optionally followed by a compression method (pglz or lz4) for extended and main; lz4 alone means extended lz4.',
            HINT = 'PLAIN is not offered: it makes rows with large values fail to insert.';
  END IF;
  IF method = 'lz4' AND NOT (SELECT 'lz4' = ANY (enumvals) FROM pg_settings
                              WHERE name = 'default_toast_compression') THEN
    RAISE EXCEPTION 'this server was built without lz4 support'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Use pglz, or a server built with --with-lz4.';
  END IF;

  rewrite_cond := CASE
    WHEN target = 'external' THEN format('pg_catalog.pg_column_compression(%s) IS NOT NULL', col)
    -- pg_column_size(), not octet_length(): it takes any type (jsonb has no
    -- octet_length) and, like octet_length(), reads a value's header only.
    -- An uncompressed value's stored size is its length plus its header; a
    -- value compressed with the other method differs from the target at
    -- any size.
    WHEN method IS NOT NULL THEN format(
      '(pg_catalog.pg_column_compression(%1$s) IS DISTINCT FROM %2$L AND (pg_catalog.pg_column_compression(%1$s) IS NOT NULL OR pg_catalog.pg_column_size(%1$s) >= %3$s))',
      col, method, 2032)
    ELSE format('(pg_catalog.pg_column_compression(%1$s) IS NULL AND pg_catalog.pg_column_size(%1$s) >= %2$s)', col, 2032)
    END;

  out := format(E'-- storagelab %s: storage migration script\n'
                '-- generated %s by storagelab.storage_migration_script()\n'
                '-- table:   %s (%s)\n'
                '-- column:  %s %s, now STORAGE %s, COMPRESSION %s\n'
                '-- target:  STORAGE %s%s; rewrite existing values: %s\n'
                '--\n'
                '-- Run with psql outside a transaction block (each step commits):\n'
                '--   psql -v ON_ERROR_STOP=1 -f this_script.sql\n'
                '--\n'
                '-- ALTER TABLE ... SET STORAGE and SET COMPRESSION change the catalog only.\n'
                '-- Values already stored keep their form: SET STORAGE does not touch them, nor does\n'
                '-- UPDATE ... SET c = c (it reuses the same TOAST pointer and carries inline\n'
                '-- compressed values as they are), nor VACUUM FULL, nor CLUSTER.  Only new or\n'
                '-- rebuilt values (c = c || ''''), or the rewrite step below, follow the new setting.\n'
                '-- Plain ALTER TABLE recurses and takes ACCESS EXCLUSIVE on every partition at once;\n'
                '-- this script alters one table at a time with ALTER TABLE ONLY.\n',
                (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'),
                to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                translate(relation::text, E'\n\r', '  '), CASE rel.relkind WHEN 'p' THEN 'partitioned table' ELSE 'table' END,
                translate(col, E'\n\r', '  '), typ,
                upper(CASE att.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                                          WHEN 'm' THEN 'main' ELSE 'plain' END),
                coalesce(CASE att.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END,
                         'default (' || current_setting('default_toast_compression') || ')'),
                upper(target), coalesce(', COMPRESSION ' || method, ''),
                CASE WHEN rewrite_existing THEN 'yes' ELSE 'no' END);
  out := out || format(E'\n\\set ON_ERROR_STOP on\nSET lock_timeout = %L;\n', lock_to)
             || E'SET row_security = off;   -- a policy hiding rows from this role is an error, never a partial rewrite\n';

  -- The tree: the table, its partitions and inheritance children (the
  -- column has the same name in all of them), parents before children.
  FOR t IN
    WITH RECURSIVE tree(relid, depth) AS (
      SELECT relation::oid, 0
      UNION ALL
      SELECT i.inhrelid, tree.depth + 1 FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r, c.relkind, min(tree.depth) AS depth
      FROM tree JOIN pg_class c ON c.oid = tree.relid
     WHERE c.relkind IN ('r', 'p', 'f')
     GROUP BY tree.relid, c.relkind
     ORDER BY min(tree.depth), tree.relid::regclass::text
  LOOP
    CONTINUE WHEN t.relkind = 'f';
    stmt := format('ALTER TABLE ONLY %s ALTER COLUMN %s SET STORAGE %s', t.r, col, upper(target));
    IF method IS NOT NULL THEN
      stmt := stmt || format(', ALTER COLUMN %s SET COMPRESSION %s', col, method);
    END IF;
    step := step + 1;
    out := out || format(E'\n-- Step %s: %s on %s.  Takes ACCESS EXCLUSIVE on %s for a catalog update\n'
                         '-- only (no rewrite); retried up to %s more times when lock_timeout (%s) expires.\n',
                         step,
                         CASE WHEN method IS NULL THEN 'SET STORAGE ' || upper(target)
                              ELSE 'SET STORAGE ' || upper(target) || ' and SET COMPRESSION ' || method END,
                         translate(t.r::text, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), retries, lock_to);
    out := out || E'DO $step$\nBEGIN\n'
               || storagelab_internal.retry_loop(format(E'        EXECUTE %L;\n', stmt), retries,
                                                 'Other sessions keep using the table: run the script again when traffic is lower.')
               || E'END\n$step$;\n';
  END LOOP;

  IF NOT rewrite_existing THEN
    out := out || E'\n-- Existing values are left as they are (rewrite_existing => false).  To see how\n'
               || format(E'-- they are stored: SELECT * FROM storagelab.toast_profile(%L, %L);\n',
                         translate(relation::text, E'\n\r', '  '), translate(column_name::text, E'\n\r', '  '));
    RETURN out;
  END IF;

  -- The rewrite: per table that holds rows, walk it in ranges of pages,
  -- COMMIT after each batch; a rerun skips values already rewritten.
  FOR t IN
    WITH RECURSIVE tree(relid) AS (
      SELECT relation::oid
      UNION
      SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r
      FROM tree JOIN pg_class c ON c.oid = tree.relid
     WHERE c.relkind = 'r'
     ORDER BY tree.relid::regclass::text
  LOOP
    step := step + 1;
    out := out || format(E'\n-- Step %s: rewrite the values of %s in %s whose stored form differs from the\n'
                         '-- new setting (%s), 1,000 pages per transaction.  Takes ROW EXCLUSIVE on the\n'
                         '-- table and row locks on the rewritten rows; fires UPDATE triggers; writes WAL and\n'
                         '-- dead row versions (the table and its TOAST table grow until VACUUM).  Resumable:\n'
                         '-- run it again and values already rewritten are skipped%s\n',
                         step, translate(col, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), translate(rewrite_cond, E'\n\r', '  '),
                         -- a value compression does not shrink is stored uncompressed
                         -- again: it still looks like one to rewrite
                         CASE WHEN target = 'external' THEN '.' ELSE
                           E', except those that stay\n-- uncompressed (content compressed already, or that compression does not shrink):\n'
                           '-- they look unchanged, and every run rewrites them again.' END);
    out := out || format(
      E'DO $rewrite$\nDECLARE\n'
      '  batch_pages constant bigint := 1000;\n'
      '  last_page bigint := pg_catalog.pg_relation_size(%1$L::regclass) / current_setting(''block_size'')::bigint;\n'
      '  first_page bigint := 0;\n'
      '  n bigint;\n'
      '  total bigint := 0;\n'
      'BEGIN\n'
      '  WHILE first_page <= last_page LOOP\n',
      t.r::text)
      || storagelab_internal.retry_loop(format(
           E'        UPDATE ONLY %1$s SET %2$s\n'
           '         WHERE ctid >= pg_catalog.format(''(%%s,0)'', first_page)::tid\n'
           '           AND ctid < pg_catalog.format(''(%%s,0)'', first_page + batch_pages)::tid\n'
           '           AND %3$s;\n'
           '        GET DIAGNOSTICS n = ROW_COUNT;\n',
           t.r, set_list, rewrite_cond), retries,
           'Other sessions keep rows of the table locked: run the script again; rewritten values are skipped.')
      || format(
      E'    COMMIT;\n'
      '    total := total + n;\n'
      '    first_page := first_page + batch_pages;\n'
      '    RAISE NOTICE ''%%: pages < %% done, %% values rewritten'', %1$L, first_page, total;\n'
      '  END LOOP;\n'
      'END\n$rewrite$;\n',
      t.r::text);
    out := out || format(E'\n-- Then: VACUUM %s (SHARE UPDATE EXCLUSIVE; does not block reads or writes)\n'
                         '-- marks the old row versions and their TOAST chunks reusable; the files shrink\n'
                         '-- only with VACUUM FULL or pg_repack (ACCESS EXCLUSIVE / brief locks).\n'
                         'VACUUM (ANALYZE) %s;\n', translate(t.r::text, E'\n\r', '  '), t.r);
  END LOOP;
  RETURN out;
END
$fn$;
COMMENT ON FUNCTION storagelab.storage_migration_script(regclass, name, text, boolean) IS
  'psql script that sets a column''s STORAGE (external, extended, main; optionally with COMPRESSION pglz/lz4) table by table with lock_timeout and retries, and with rewrite_existing a batched, resumable rewrite of the values stored in the old form, then VACUUM';

-- END generated section bigint

-- The settings of the INT->BIGINT generator: descriptions of at most 100
-- characters (doc/settings.md has the details).
UPDATE storagelab_internal.setting_defaults
   SET description = 'scripts abort in pre-flight when an older transaction holds a lock on a table they convert'
 WHERE name = 'bigint_migration.max_blocking_transaction_age';
UPDATE storagelab_internal.setting_defaults
   SET description = 'heap plus index MB per second that scripts assume when they estimate a table rewrite''s duration'
 WHERE name = 'bigint_migration.rewrite_mb_per_second';
UPDATE storagelab_internal.setting_defaults
   SET description = 'shadow: target duration of a backfill batch, its size adapted after each; 0 = backfill_batch_blocks'
 WHERE name = 'bigint_migration.backfill_batch_time';
UPDATE storagelab_internal.setting_defaults
   SET description = 'online and shadow: heap blocks in the first copy or backfill batch (in every one when the time is 0)'
 WHERE name = 'bigint_migration.backfill_batch_blocks';
UPDATE storagelab_internal.setting_defaults
   SET description = 'shadow migrations: pause between backfill batches (skipped after a batch that copied no row)'
 WHERE name = 'bigint_migration.backfill_pause';

-- column_profiles: row security keeps a pg_stat_scan_tables member to the
-- tables it may read.
CREATE FUNCTION storagelab_internal.may_read_columns(relid oid)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = relid)
     AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                      WHERE a.attrelid = relid AND a.attnum > 0 AND NOT a.attisdropped
                        AND NOT has_column_privilege(relid, a.attnum, 'SELECT'))
$$;
COMMENT ON FUNCTION storagelab_internal.may_read_columns(oid) IS
  'the current role may SELECT every live column of the table (what column_profile() requires)';
ALTER TABLE storagelab_internal.column_profiles ENABLE ROW LEVEL SECURITY;
CREATE POLICY readable_tables ON storagelab_internal.column_profiles FOR ALL
  USING (storagelab_internal.may_read_columns(relid)
         OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = relid))
  WITH CHECK (storagelab_internal.may_read_columns(relid));

-- visibility: a table's storage parameters autovacuum_freeze_max_age,
-- autovacuum_multixact_freeze_max_age and autovacuum_freeze_table_age count,
-- as autovacuum uses them.
CREATE OR REPLACE VIEW storagelab.visibility AS
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
                 CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS relfrozenxid_age,
                 CASE WHEN c.relminmxid <> '0' THEN pg_catalog.mxid_age(c.relminmxid) END AS relminmxid_age,
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
           WHERE c.relkind IN ('r', 'm')
             AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
             AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
             AND (pg_catalog.has_table_privilege(c.oid, 'SELECT')
                  OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE'))) r
    LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = r.oid
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

COMMENT ON COLUMN storagelab.visibility.severity IS 'critical (wraparound near: 80 % of the table''s autovacuum_freeze_max_age or multixact one, even when locked), warning (next VACUUM aggressive), info, ok; else NULL when locked';

-- visibility: the figures of pg_stat_all_tables by its functions, per listed
-- table (the view grouped every table and TOAST table with its indexes).
CREATE OR REPLACE VIEW storagelab.visibility AS
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
                 CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS relfrozenxid_age,
                 CASE WHEN c.relminmxid <> '0' THEN pg_catalog.mxid_age(c.relminmxid) END AS relminmxid_age,
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

-- Copy and swap: the online machinery of a table rewrite (part 62) and
-- INT -> BIGINT mode 'copy_swap' (part 63); the generators accept the mode;
-- the setting bigint_migration.copy_batch_time.

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.copy_batch_time', '2s',
   'online: target duration of a copy batch (it holds no lock clients wait for); 0 = fixed batches');

CREATE OR REPLACE FUNCTION storagelab.bigint_migration_group_script(relations regclass[], column_names name[], mode text DEFAULT 'blocking',
                                                         function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF mode IS NULL THEN
    RAISE EXCEPTION 'mode must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use mode => ''blocking''.';
  ELSIF mode NOT IN ('blocking', 'online', 'copy_swap') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid modes are ''blocking'', ''online'' and ''copy_swap''.';
  END IF;
  RETURN storagelab_internal.bigint_migration_write(
           storagelab_internal.bigint_migration_model(relations, column_names), relations, column_names, mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text, text) IS
  'psql script converting several int columns (and their foreign-key components and everything depending on them) to bigint: mode blocking (one transaction, each table rewritten once) or online; function_hazards refuse, widen or accept';

CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_write(objs storagelab.bigint_migration_object[],
                                                           relations regclass[], column_names name[], mode text,
                                                           function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: the copy_swap writer is created later in the install script (part 63)
  RETURN CASE mode WHEN 'online' THEN storagelab_internal.bigint_migration_online_script(objs, relations, column_names, function_hazards)
                   WHEN 'copy_swap' THEN storagelab_internal.bigint_migration_copy_swap_script(objs, relations, column_names, function_hazards)
                   ELSE storagelab_internal.bigint_migration_blocking_script(objs, relations, column_names, function_hazards) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'the INT->BIGINT script of a model, in mode blocking, online or copy_swap, function_hazards refuse, widen or accept';

CREATE OR REPLACE FUNCTION storagelab.bigint_migration_plan(mode text DEFAULT 'blocking', function_hazards text DEFAULT 'refuse')
RETURNS TABLE (step int, severity text, columns text[], relations regclass[], script text, blockers text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  g    record;
  objs storagelab.bigint_migration_object[];
  msg text; det text; st text;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online', 'copy_swap') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid modes are ''blocking'', ''online'' and ''copy_swap''.';
  END IF;
  PERFORM storagelab_internal.bigint_migration_apply_hazards('{}', function_hazards);   -- checks the value
  step := 0;
  FOR g IN SELECT * FROM storagelab_internal.bigint_migration_plan_groups() LOOP
    step := step + 1;
    severity := CASE WHEN g.critical THEN 'critical' ELSE 'warning' END;
    columns := ARRAY(SELECT format('%s.%I', storagelab_internal.bigint_migration_qname(x.r), x.c)
                       FROM unnest(g.relations, g.column_names) AS x(r, c));
    relations := NULL; script := NULL; blockers := NULL;
    BEGIN
      objs := storagelab_internal.bigint_migration_model(g.relations, g.column_names);
      relations := ARRAY(SELECT d.rel FROM (SELECT DISTINCT x.relation AS rel FROM unnest(objs) x WHERE x.kind = 'column') d
                          ORDER BY storagelab_internal.bigint_migration_qname(d.rel));
      script := storagelab_internal.bigint_migration_write(objs, g.relations, g.column_names, mode, function_hazards);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
      script := NULL;
      blockers := format('%s: %s%s', st, msg, CASE WHEN det <> '' THEN E'\n' || det ELSE '' END);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_plan(text, text) IS
  'one INT->BIGINT migration script (mode blocking or online; function_hazards refuse, widen or accept) per group of columns that storagelab.int_overflow rates warning or critical (columns whose foreign-key components share a table are grouped, so each table is rewritten once); critical groups first; blockers instead of a script when none can be produced';

-- storagelab install script, part 62: the online machinery of a copy-and-swap
-- rewrite, around the statements of the rewrite engine (part 60): a change
-- log per table, the batched copy, the replay of the log, and the log's
-- triggers after the swap (old tables fed from the new ones until cleanup).
-- The script writers (INT -> BIGINT, part 63; layout rewrites) call these
-- with a "direction" object per table, written when the script is:
--
--   {"source": "s.t",                 the table the clients write (its original name)
--    "target": "s.storagelab_new_1",  the table kept in step with it
--    "log":    "s.storagelab_log_1",  the change log (s.storagelab_back_1 after the swap)
--    "key":    ["id"] | null,         primary key or unique NOT NULL index; null: whole rows
--    "copy":   "INSERT INTO target (...) SELECT ... FROM ONLY source"}
--
-- A table with a key logs the key of every row inserted, updated or deleted;
-- the replay deletes those keys from the target and copies them again from
-- the source, in sets (one statement per batch of log rows), so it repairs
-- whatever a batch of the copy saw half-way.  A table without a key logs
-- whole rows ('I' new row, 'D' old row, as jsonb); it is copied in one
-- snapshot, and its replay matches rows by value (a sequential scan of the
-- target per batch that has deletes: for append-mostly tables).


-- The key the change log of table rel uses: the primary key, else the
-- unique, valid, immediate, non-partial index on NOT NULL plain columns
-- with the fewest columns; NULL when it has neither.
CREATE FUNCTION storagelab_internal.rewrite_online_key(rel oid)
RETURNS name[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(att, n)
                 JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = k.att ORDER BY k.n)
    FROM pg_index i
   WHERE i.indrelid = $1 AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL
     AND i.indexprs IS NULL
     AND NOT EXISTS (SELECT 1 FROM unnest(i.indkey::int2[]) k(att) JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = k.att
                      WHERE NOT a.attnotnull)
   ORDER BY i.indisprimary DESC, i.indnatts, i.indexrelid
   LIMIT 1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_key(oid) IS
  'the key of a table''s change log: its primary key, else its narrowest unique non-partial index on NOT NULL columns; NULL when it has neither';

-- The statements that start logging the changes of d.source into d.log: the
-- log table, its trigger function (SECURITY DEFINER: the clients that write
-- the table need no privilege on the log) and the triggers, ENABLE ALWAYS
-- (they fire for logical replication's apply too); TRUNCATE is refused
-- while the log is kept.
CREATE FUNCTION storagelab_internal.rewrite_online_log_start(d jsonb)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  keys  text[] := ARRAY(SELECT jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END));
  fn    text := d->>'log';
  kl    text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) k);
  body  text;
BEGIN
  IF cardinality(keys) = 0 THEN
    body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (op, r) VALUES (''D'', pg_catalog.to_jsonb(OLD)); END IF;\n'
                   || E'  IF TG_OP <> ''DELETE'' THEN INSERT INTO %1$s (op, r) VALUES (''I'', pg_catalog.to_jsonb(NEW)); END IF;\n'
                   || E'  RETURN NULL;\nEND\n', d->>'log');
    RETURN ARRAY[
      format('CREATE TABLE %s (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, op "char" NOT NULL, r jsonb NOT NULL)', d->>'log'),
      format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %s',
             fn, storagelab_internal.dollar_quote(body))]
      || storagelab_internal.rewrite_online_log_triggers(d);
  END IF;
  body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (%2$s) VALUES (%3$s); END IF;\n'
                 || E'  IF TG_OP = ''INSERT'' OR (TG_OP = ''UPDATE'' AND (%4$s) IS DISTINCT FROM (%3$s)) THEN\n'
                 || E'    INSERT INTO %1$s (%2$s) VALUES (%4$s);\n  END IF;\n  RETURN NULL;\nEND\n',
                 d->>'log', kl,
                 (SELECT string_agg('OLD.' || quote_ident(k), ', ') FROM unnest(keys) k),
                 (SELECT string_agg('NEW.' || quote_ident(k), ', ') FROM unnest(keys) k));
  RETURN ARRAY[
    format('CREATE TABLE %s AS SELECT %s FROM ONLY %s WITH NO DATA', d->>'log', kl, d->>'source'),
    format('ALTER TABLE %s ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', d->>'log'),
    format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %s',
           fn, storagelab_internal.dollar_quote(body))]
    || storagelab_internal.rewrite_online_log_triggers(d);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_log_start(jsonb) IS
  'statements creating the change log of a copy-and-swap rewrite (log table, SECURITY DEFINER trigger function, triggers ENABLE ALWAYS) for one direction object';

-- The triggers that feed d.log from d.source (their names are the log's).
CREATE FUNCTION storagelab_internal.rewrite_online_log_triggers(d jsonb)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY[
    format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()',
           (parse_ident($1->>'log'))[2], $1->>'source', $1->>'log'),
    format('CREATE TRIGGER %I BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION storagelab_internal.rewrite_online_no_truncate()',
           (parse_ident($1->>'log'))[2] || '_truncate', $1->>'source'),
    format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', $1->>'source', (parse_ident($1->>'log'))[2]),
    format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', $1->>'source', (parse_ident($1->>'log'))[2] || '_truncate')]
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_log_triggers(jsonb) IS
  'the CREATE TRIGGER statements (row changes, TRUNCATE refused) feeding a copy-and-swap change log, enabled always';

-- The statements that stop logging (the triggers dropped; with the log and
-- its function when drop_log), each safe to run when already done.
CREATE FUNCTION storagelab_internal.rewrite_online_log_stop(d jsonb, drop_log boolean)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY[format('DROP TRIGGER IF EXISTS %I ON %s', (parse_ident($1->>'log'))[2], $1->>'source'),
               format('DROP TRIGGER IF EXISTS %I ON %s', (parse_ident($1->>'log'))[2] || '_truncate', $1->>'source')]
      || CASE WHEN $2 THEN ARRAY[format('DROP TABLE IF EXISTS %s', $1->>'log'),
                                 format('DROP FUNCTION IF EXISTS %s()', $1->>'log')] ELSE '{}' END
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_log_stop(jsonb, boolean) IS
  'the statements that drop the triggers of a copy-and-swap change log (and the log and its function), each with IF EXISTS';

CREATE FUNCTION storagelab_internal.rewrite_online_no_truncate()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RAISE EXCEPTION 'cannot truncate %.% while an online rewrite logs its changes', TG_TABLE_SCHEMA, TG_TABLE_NAME
    USING ERRCODE = 'object_in_use',
          HINT = 'Finish the rewrite (phase cleanup) or roll it back first.';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_no_truncate() IS
  'trigger function refusing TRUNCATE of a table whose changes a copy-and-swap rewrite logs (TRUNCATE fires no row trigger)';

-- One batch of the replay of d.log into d.target: the batch_rows oldest log
-- rows (all when NULL), applied in sets, then deleted; returns how many
-- there were.  Keyed: the rows with the logged keys are copied again from
-- the source as it is now (upserted; before the target has its unique
-- index, deleted and inserted), and those gone from the source deleted (the
-- log rows of a change not yet visible stay for the next batch).  Whole rows: the new rows inserted,
-- then one target row deleted per old row.
CREATE FUNCTION storagelab_internal.rewrite_online_apply(d jsonb, batch_rows bigint)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ids  bigint[];
  kl   text := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  cols text;
  ndel bigint;
  tk   text := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  lk   text := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
BEGIN
  EXECUTE format('SELECT array_agg(id ORDER BY id), count(*) FILTER (WHERE op = ''D'') FROM (SELECT id, %s AS op FROM %s ORDER BY id LIMIT $1) x',
                 CASE WHEN kl IS NULL THEN 'op' ELSE 'NULL::"char"' END, d->>'log')
    INTO ids, ndel USING batch_rows;
  IF ids IS NULL THEN
    RETURN 0;
  END IF;
  IF kl IS NOT NULL AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = (d->>'target')::regclass AND i.indisunique) THEN
    -- upsert, then delete the keys gone from the source: a row of the
    -- target that other tables reference is never deleted and inserted again
    SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
       AND a.attidentity <> 'a' AND NOT a.attname::text IN (SELECT jsonb_array_elements_text(d->'key'));
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE id = ANY ($1))\n ON CONFLICT (%s) DO %s',
                   d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING ids;
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE id = ANY ($1)) l WHERE (%s) = (%s) '
                   'AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))',
                   d->>'target', kl, d->>'log', tk, lk, d->>'source',
                   (SELECT string_agg('s.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k), lk)
      USING ids;
  ELSIF kl IS NOT NULL THEN
    -- no index yet (the pass before phase index): delete the keys, copy them again
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE id = ANY ($1)) l WHERE (%s) = (%s)',
                   d->>'target', kl, d->>'log', tk, lk)
      USING ids;
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE id = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING ids;
  ELSE
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.r) '
                   'WHERE l.id = ANY ($1) AND l.op = ''I'' ORDER BY l.id', d->>'target', cols, d->>'log')
      USING ids;
    IF ndel > 0 THEN
    EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                   'FROM %1$s t WHERE to_jsonb(t) IN (SELECT r FROM %2$s WHERE id = ANY ($1) AND op = ''D'')) c '
                   'JOIN (SELECT r, count(*) AS n FROM %2$s WHERE id = ANY ($1) AND op = ''D'' GROUP BY r) w ON w.r = c.j AND c.n <= w.n)',
                   d->>'target', d->>'log')
      USING ids;
    END IF;
  END IF;
  EXECUTE format('DELETE FROM %s WHERE id = ANY ($1)', d->>'log') USING ids;
  RETURN cardinality(ids);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply(jsonb, bigint) IS
  'one batch of the replay of a copy-and-swap change log into its target table, in sets (keys deleted and copied again, or whole rows inserted and deleted); returns the log rows applied';

-- The copy of a copy-and-swap rewrite: for each direction object of dirs
-- (a jsonb array), every row of source into target.  A table with a key is
-- copied in batches of heap blocks (TID range scans), one COMMIT each, from
-- its progress row's next_block to max_block (the table's size when the
-- copy started: later rows are in the log); the next batch gets as many
-- blocks as the last one's rate fills in batch_time_ms (at most twice as
-- many; fixed at batch_blocks when batch_time_ms is 0), with a pause after
-- each.  A table without a key is copied in one REPEATABLE READ
-- transaction, which also deletes the log rows its snapshot sees (they are
-- in the copy).  Progress rows: storagelab.bigint_migration_progress.  The
-- setting storagelab.backfill_batches stops it after that many batches.
--
-- A procedure with transaction control cannot pin search_path with a SET
-- clause: it sets it for each of its transactions and qualifies the
-- functions it calls.
CREATE PROCEDURE storagelab.rewrite_online_copy(migration text, dirs jsonb, batch_time_ms numeric,
                                                batch_blocks int, pause interval)
LANGUAGE plpgsql
AS $fn$
DECLARE
  d       jsonb;
  b       bigint;
  maxb    bigint;
  isdone  boolean;
  n       bigint;
  nb      bigint;
  nrows   bigint;
  nbatch  int := 0;
  t0      timestamptz;
  ms      numeric;
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
    INSERT INTO storagelab.bigint_migration_progress AS p (migration, relation, max_block, batch_blocks, started_at)
    SELECT rewrite_online_copy.migration, d->>'source',
           pg_catalog.pg_relation_size((d->>'source')::regclass) / pg_catalog.current_setting('block_size')::int,
           rewrite_online_copy.batch_blocks, pg_catalog.clock_timestamp()
    ON CONFLICT ON CONSTRAINT bigint_migration_progress_pkey DO NOTHING;
    SELECT p.next_block, p.max_block, p.done, p.batch_blocks INTO b, maxb, isdone, n
      FROM storagelab.bigint_migration_progress p
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    IF isdone THEN
      CONTINUE;
    ELSIF pg_catalog.jsonb_typeof(d->'key') IS DISTINCT FROM 'array' THEN
      COMMIT;
      SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;   -- first statement of the transaction: before any expression
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      t0 := pg_catalog.clock_timestamp();
      EXECUTE d->>'copy';
      GET DIAGNOSTICS nrows = ROW_COUNT;
      EXECUTE pg_catalog.format('DELETE FROM %s', d->>'log');
      maxb := -1;
    ELSE
      COMMIT;
    END IF;
    WHILE b <= maxb LOOP
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      EXECUTE d->>'copy' || E'\n WHERE ctid >= $1 AND ctid < $2'
        USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
      GET DIAGNOSTICS nrows = ROW_COUNT;
      ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
      b := b + nb;
      IF batch_time_ms > 0 THEN
        n := greatest(1, least(2 * n, pg_catalog.floor(nb * batch_time_ms / greatest(ms, 0.01))));
      END IF;
      UPDATE storagelab.bigint_migration_progress p
         SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
             last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
             updated_at = pg_catalog.now()
       WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
      COMMIT;
      nbatch := nbatch + 1;
      IF limit_batches > 0 AND nbatch >= limit_batches THEN
        RAISE NOTICE '% stopped after % batches at block % of %; run the copy again to resume', d->>'source', nbatch, b, maxb;
        PERFORM pg_catalog.set_config('search_path', caller_path, false);
        RETURN;
      END IF;
      PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    UPDATE storagelab.bigint_migration_progress p
       SET done = true, updated_at = pg_catalog.now(),
           rows_copied = p.rows_copied + CASE WHEN maxb = -1 THEN nrows ELSE 0 END,
           batches = p.batches + CASE WHEN maxb = -1 THEN 1 ELSE 0 END,
           last_batch_ms = CASE WHEN maxb = -1 THEN pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000, 1) ELSE p.last_batch_ms END
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    COMMIT;
  END LOOP;
  PERFORM pg_catalog.set_config('search_path', caller_path, false);
END
$fn$;
COMMENT ON PROCEDURE storagelab.rewrite_online_copy(text, jsonb, numeric, int, interval) IS
  'the copy phase of an online copy-and-swap rewrite (its script CALLs it): tables with a key in batches of heap blocks sized to a time budget, one COMMIT each, resumable from storagelab.bigint_migration_progress; tables without one in one snapshot';

-- The replay of a copy-and-swap rewrite: batches of batch_rows log rows per
-- table, one COMMIT per round that applied any, until at most max_lag log
-- rows are left in all; after time_limit it gives up with an error (running it again goes on
-- where it stopped).
CREATE PROCEDURE storagelab.rewrite_online_replay(migration text, dirs jsonb, max_lag bigint, batch_rows bigint,
                                                  time_limit interval)
LANGUAGE plpgsql
AS $fn$
DECLARE
  d      jsonb;
  lag    bigint;
  n      bigint;
  rounds bigint := 0;
  t0     timestamptz := pg_catalog.clock_timestamp();
  caller_path text := pg_catalog.current_setting('search_path');
BEGIN
  LOOP
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    n := 0;
    FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
      n := n + storagelab_internal.rewrite_online_apply(d, batch_rows);
    END LOOP;
    lag := 0;
    FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
      EXECUTE pg_catalog.format('SELECT %s + count(*) FROM %s', lag, d->>'log') INTO lag;
    END LOOP;
    IF n > 0 THEN
      COMMIT;
    END IF;
    rounds := rounds + 1;
    EXIT WHEN lag <= max_lag;
    IF pg_catalog.clock_timestamp() - t0 > time_limit THEN
      RAISE EXCEPTION 'the replay of migration % did not catch up within %', migration, time_limit
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = pg_catalog.format('%s log rows are left after %s rounds.', lag, rounds),
              HINT = 'Run the phase again when the tables are written less; it resumes where it stopped.';
    END IF;
  END LOOP;
  RAISE NOTICE 'migration %: % log rows left after % rounds', migration, lag, rounds;
  PERFORM pg_catalog.set_config('search_path', caller_path, false);
END
$fn$;
COMMENT ON PROCEDURE storagelab.rewrite_online_replay(text, jsonb, bigint, bigint, interval) IS
  'the replay phase of an online copy-and-swap rewrite (its script CALLs it): applies the change logs in sets, one COMMIT per round, until at most max_lag rows are left; gives up after time_limit';

-- storagelab install script, part 63: the INT -> BIGINT script in mode
-- 'copy_swap' (bigint_migration_script(..., mode => 'copy_swap')): the
-- component's tables rebuilt as new tables by the rewrite engine (part 60)
-- and kept in step by the online machinery (part 62), then swapped in.
-- One psql file in phases, chosen with -v phase=...:
--   start     new tables (no indexes), change logs and their triggers
--   copy      CALL storagelab.rewrite_online_copy: batches, resumable
--   index     log applied once (repairs rows a batch saw twice), indexes, ANALYZE
--   replay    CALL storagelab.rewrite_online_replay until the lag is small
--   swap      one transaction: lock, rest of the log, renames and objects
--             (engine), logs reversed (new tables feed the old ones)
--   validate  foreign keys added NOT VALID in the swap validated
--   cleanup   old tables, logs and progress rows dropped
--   rollback  any time before cleanup: swap back (after replaying the
--             changes made since the swap) and drop what start created


-- The engine's input for a model: every table with converted columns, all
-- its columns in their order, the converted ones bigint.
CREATE FUNCTION storagelab_internal.bigint_copy_swap_tables(objs storagelab.bigint_migration_object[])
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_agg(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname(t.rel),
           'columns', (SELECT jsonb_agg(jsonb_build_object('column_name', a.attname,
                                'type', CASE WHEN EXISTS (SELECT 1 FROM unnest($1) x WHERE x.kind = 'column' AND x.relation = t.rel
                                                             AND x.column_name = a.attname)
                                             THEN 'bigint' ELSE format_type(a.atttypid, a.atttypmod) END) ORDER BY a.attnum)
                         FROM pg_attribute a WHERE a.attrelid = t.rel AND a.attnum > 0 AND NOT a.attisdropped))
           ORDER BY storagelab_internal.bigint_migration_qname(t.rel))
    FROM (SELECT DISTINCT x.relation::oid AS rel FROM unnest($1) x WHERE x.kind = 'column') t
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_copy_swap_tables(storagelab.bigint_migration_object[]) IS
  'the rewrite engine''s input for an INT->BIGINT model: each table with converted columns, every column in its order, converted ones bigint';

-- The statement that copies rows of the new table rel (under rel's name
-- after the swap) back into the old one, storagelab_old_<rel>, cast to the
-- old types: the copy of the replay after a swap.
CREATE FUNCTION storagelab_internal.rewrite_online_copy_back(rel oid)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_name belongs to the rewrite engine, checked for when the script is written
  RETURN (SELECT format(E'INSERT INTO %I.%I (%s)%s\nSELECT %s\n  FROM ONLY %s', n.nspname, storagelab_internal.rewrite_name('old', $1),
                string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
                CASE WHEN bool_or(a.attidentity = 'a') THEN ' OVERRIDING SYSTEM VALUE' ELSE '' END,
                string_agg(format('%I::%s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum),
                storagelab_internal.bigint_migration_qname($1))
    FROM pg_attribute a JOIN pg_class c ON c.oid = $1 JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
   GROUP BY n.nspname);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_copy_back(oid) IS
  'INSERT ... SELECT copying rows of the table now under rel''s name into storagelab_old_<rel>, cast to its types (the replay after a swap)';

-- The direction objects of part 62 for the tables of an engine input:
-- forward (old -> new, before the swap) or back (new -> old, after it).
CREATE FUNCTION storagelab_internal.rewrite_online_dirs(tables jsonb, back boolean)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_statements and rewrite_name belong to the rewrite engine
  RETURN (SELECT jsonb_agg(jsonb_build_object(
           'source', storagelab_internal.bigint_migration_qname(r.rel),
           'target', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'old' ELSE 'new' END, r.rel)),
           'log', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'back' ELSE 'log' END, r.rel)),
           'key', to_jsonb(storagelab_internal.rewrite_online_key(r.rel)),
           'copy', CASE WHEN $2 THEN storagelab_internal.rewrite_online_copy_back(r.rel)
                        ELSE (SELECT s.statement FROM storagelab_internal.rewrite_statements(jsonb_build_array(r.t), 'copy') s) END)
           ORDER BY r.ord)
    FROM (SELECT to_regclass(t->>'relation')::oid AS rel, t, ord FROM jsonb_array_elements($1) WITH ORDINALITY x(t, ord)) r
    JOIN pg_class c ON c.oid = r.rel JOIN pg_namespace n ON n.oid = c.relnamespace);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_dirs(jsonb, boolean) IS
  'the direction objects (source, target, log, key, copy) of the online machinery for the tables of a rewrite: forward before the swap, back after it';

-- A DO statement (one transaction) that fails with require_error unless
-- require (an SQL boolean expression) holds, then says skip_notice instead
-- when skip_if holds, else runs stmts, retried on lock_timeout or deadlock
-- (retry_loop).
CREATE FUNCTION storagelab_internal.rewrite_online_do(stmts text[], skip_if text, skip_notice text,
                                                      require text, require_error text, retries int)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(
    E'\nBEGIN\n'
    || format(E'  IF NOT (%s) THEN\n    RAISE EXCEPTION %L USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\n', $4, $5)
    || format(E'  IF %s THEN\n    RAISE NOTICE %L;\n    RETURN;\n  END IF;\n', $2, $3)
    || storagelab_internal.retry_loop(
         coalesce((SELECT string_agg(format(E'        EXECUTE %L;\n', s), '' ORDER BY n) FROM unnest($1) WITH ORDINALITY u(s, n)), ''),
         $6, 'Run this phase again later; it is safe to re-run.')
    || E'END\n') || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_do(text[], text, text, text, text, int) IS
  'a DO statement running statements in one subtransaction retried on lock_timeout or deadlock, skipped with a notice when a condition holds, refused unless another holds';

-- The phases of a copy-and-swap script for the engine input tables
-- (part 62's machinery around the engine's statements), as psql \if
-- sections; mid is the migration id.
CREATE FUNCTION storagelab_internal.rewrite_online_phases(tables jsonb, mid text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(tables, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(tables, true);
  d       jsonb;
  retries int := storagelab_internal.setting('scripts.lock_retries')::int;
  created text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  ours    text := (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
                     FROM jsonb_array_elements(fwd) x);
  others  text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                     FROM jsonb_array_elements(fwd) x);
  swapped text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x);
  copied  text := format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                         mid, jsonb_array_length(fwd));
  indexed text := (SELECT string_agg(format('EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(%L))', x->>'target'), ' AND ')
                     FROM jsonb_array_elements(fwd) x WHERE x->'key' <> 'null');
  locks   text;
  s       text := '';
  apply_f text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x);
  apply_b text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(back) x);
  st      text[];
BEGIN
  indexed := coalesce(indexed, 'true');
  -- the component, the new tables and the tables whose foreign keys the swap re-points, locked in one statement
  locks := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', (SELECT string_agg(x, ', ' ORDER BY x) FROM (
             SELECT x->>'source' AS x FROM jsonb_array_elements(fwd) x
             UNION SELECT storagelab_internal.bigint_migration_qname(k.conrelid) FROM pg_constraint k
              WHERE k.contype = 'f' AND k.confrelid = ANY (SELECT to_regclass(x->>'source') FROM jsonb_array_elements(fwd) x)) y));
  -- start
  st := ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'create') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d) || format('COMMENT ON TABLE %s IS %L', d->>'log', tag);
  END LOOP;
  s := s || E'\\if :ph_start\n'
         || storagelab_internal.rewrite_online_do(st, created || ' AND ' || ours, 'phase start has run already', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', retries)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n'
         || storagelab_internal.rewrite_online_do('{}', 'false', '', created || ' AND ' || ours, 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, fwd,
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := apply_f || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n'
         || storagelab_internal.rewrite_online_do(st, '(' || indexed || ' AND ' || copied || ') OR (' || swapped || ')', 'phase index has run already',
                                                  copied, 'the copy is not complete: run phase copy first', retries)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(fwd) x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n'
         || storagelab_internal.rewrite_online_do('{}', 'false', '', indexed || ' AND ' || copied, 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, fwd,
                   1000 * jsonb_array_length(fwd));
  -- swap
  st := ARRAY[locks] || apply_f;
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'swap') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d);
  END LOOP;
  s := s || E'\\if :ph_swap\n'
         || storagelab_internal.rewrite_online_do(st, swapped, 'phase swap has run already',
                                                  '(' || swapped || ') OR (' || indexed || ' AND ' || copied || ')', 'run phases copy, index and replay first', retries)
         || E'\\endif\n';
  -- validate
  s := s || E'\\if :ph_validate\n';
  FOR d IN SELECT to_jsonb(r.statement) FROM storagelab_internal.rewrite_statements(tables, 'validate') r ORDER BY r.ord LOOP
    s := s || storagelab_internal.retry_block(ARRAY[d #>> '{}'], retries);
  END LOOP;
  s := s || E'\\endif\n';
  -- cleanup
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(back) x UNION ALL SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'cleanup') r ORDER BY r.ord)
           || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped, then drop what start created
  st := ARRAY[locks] || apply_b;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'swap_back') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  s := s || E'\\if :ph_rollback\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  -- one statement: the new tables may reference each other after a swap back
  st := st || (SELECT format('DROP TABLE IF EXISTS %s', string_agg(x->>'target', ', ')) FROM jsonb_array_elements(fwd) x);
  st := st || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
         || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text) IS
  'the phases start, copy, index, replay, swap, validate, cleanup and rollback of an online copy-and-swap script for a rewrite engine input, as psql \if sections';

-- The copy_swap script of a model: refusals as in the blocking mode (same
-- SQLSTATEs), the engine's own refusals, then the header and the phases.
CREATE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[],
                                                                      relations regclass[], column_names name[],
                                                                      function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables jsonb;
  mid    text;
  s      text;
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  IF EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'widened_function') THEN
    RAISE EXCEPTION 'mode copy_swap does not widen functions'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT string_agg(x.identity, ', ') FROM unnest(objs) x WHERE x.kind = 'widened_function'),
            HINT = 'Use mode ''blocking'' or ''online'', or function_hazards => ''accept'' after fixing the functions.';
  END IF;
  IF to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NULL THEN
    RAISE EXCEPTION 'mode copy_swap needs the rewrite engine, which this installation lacks'
      USING ERRCODE = 'feature_not_supported', HINT = 'Use mode ''online'' or ''blocking''.';
  END IF;
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  s := format(E'-- storagelab %s: INT to BIGINT migration (mode copy_swap), migration id %s\n',
              (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n\\set ON_ERROR_STOP on\n'
    || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
    || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
    || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
    || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
    || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
    || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
          FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
    || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
    || E'\\if :ph_bad\n'
    || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s || storagelab_internal.rewrite_online_phases(tables, mid);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_copy_swap_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the INT->BIGINT script in mode copy_swap: the component rebuilt by the rewrite engine beside the old tables, copied in batches, kept in step by change logs, swapped in one short transaction; phases start to cleanup, and rollback';

-- ---------------------------------------------------------------------------
-- Layout migrations: the copy-and-swap rewrite engine (part 60) and
-- layout_migration_script() / layout_migration_plan() (part 61), new in 1.1,
-- copied from the install parts by
--   scripts/upgrade-section.sh layout extension/storagelab--1.0--1.1.sql \
--     extension/60_rewrite_model.sql extension/60_rewrite_create.sql extension/60_rewrite_index.sql \
--     extension/60_rewrite_swap.sql extension/60_rewrite_statements.sql extension/61_layout_migration.sql
-- (run it again after changing any of them); then the findings' fix of
-- column_width and alignment rows, which is now the layout script.
-- BEGIN generated section layout
-- from extension/60_rewrite_model.sql
-- storagelab install script, part 60: the copy-and-swap rewrite engine,
-- its input and what it refuses.  The engine writes the statements that
-- rebuild a set of tables (a foreign-key component) as new tables beside
-- the old ones, with another column order and other column types, and swap
-- them in; doc/design/rewrite-engine.md is its interface.
--
--   60_rewrite_model.sql      input (rewrite_columns), names (rewrite_name),
--                             refusals (rewrite_refuse), the objects outside
--                             the tables that follow them (rewrite_dependents)
--   60_rewrite_create.sql     phases create and copy
--   60_rewrite_index.sql      phase index
--   60_rewrite_swap.sql       phases swap, validate, swap_back, cleanup, discard
--   60_rewrite_statements.sql storagelab_internal.rewrite_statements(), the entry point


-- The deterministic name of an object the engine creates or renames: the
-- new table of table t is storagelab_new_<t's OID>, t renamed out of the way
-- storagelab_old_<t's OID>; the same for indexes, constraints, identity
-- sequences and statistics objects (by the old object's OID).  At most 26
-- bytes.
CREATE FUNCTION storagelab_internal.rewrite_name(prefix text, obj oid)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$ SELECT ('storagelab_' || $1 || '_' || $2::text)::name $$;
COMMENT ON FUNCTION storagelab_internal.rewrite_name(text, oid) IS
  'storagelab_<prefix>_<oid>: the name of an object the rewrite engine creates (new) or moves out of the way (old)';

-- A type name given by the caller, checked before it is written into DDL:
-- only the characters a type name with a typmod is spelled with (letters,
-- digits, _, $, spaces, a dot, double-quoted names, a parenthesized list of
-- numbers, [] suffixes), and a type that exists.
CREATE FUNCTION storagelab_internal.rewrite_type_text(type_text text, column_name text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF type_text IS NULL
     OR type_text !~ '^\s*([A-Za-z_][A-Za-z0-9_$ ]*|"[^"]+")(\.([A-Za-z_][A-Za-z0-9_$]*|"[^"]+"))?(\s*\(\s*[0-9]+(\s*,\s*[0-9]+)?\s*\))?(\s+with(out)?\s+time\s+zone)?(\s*\[\s*\])*\s*$'
     OR to_regtype(type_text) IS NULL THEN
    RAISE EXCEPTION 'unknown type for column %', quote_ident(column_name)
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('The type given is %s.', coalesce(quote_literal(type_text), 'NULL')),
            HINT = 'Give a type as format_type() prints it, such as smallint, integer or character varying(20), schema-qualified unless it is built in.';
  END IF;
  -- spelled as format_type() does (schema-qualified where needed), unless a typmod is given
  RETURN CASE WHEN type_text ~ '\(' THEN btrim(type_text) ELSE format_type(to_regtype(type_text), NULL) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_type_text(text, text) IS
  'a caller''s type name, checked (the characters of a type name with typmod, and an existing type) before it goes into DDL; 22023 otherwise';

-- The engine's input, checked: one row per column of every table, in the
-- new order.  tables: [{"relation": "s.t", "columns": [{"column_name": "a",
-- "type": "bigint"}, ...]}, ...]; every live column exactly once.
CREATE FUNCTION storagelab_internal.rewrite_columns(tables jsonb)
RETURNS TABLE (relid oid, table_ord int, pos int, attnum int2, column_name name,
               old_type text, new_type text, changed boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      jsonb;
  tord   int := 0;
  rel    oid;
  c      jsonb;
  cpos   int;
  a      record;
  seen   int2[];
  rels   oid[] := '{}';
  missing text;
BEGIN
  IF jsonb_typeof(tables) IS DISTINCT FROM 'array' OR jsonb_array_length(tables) = 0 THEN
    RAISE EXCEPTION 'tables must be a non-empty JSON array'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Give [{"relation": "schema.table", "columns": [{"column_name": "a", "type": "bigint"}, ...]}].';
  END IF;
  FOR t IN SELECT x FROM jsonb_array_elements(tables) x LOOP
    tord := tord + 1;
    IF jsonb_typeof(t->'relation') IS DISTINCT FROM 'string' OR jsonb_typeof(t->'columns') IS DISTINCT FROM 'array' THEN
      RAISE EXCEPTION 'each table needs a relation and a columns array'
        USING ERRCODE = 'invalid_parameter_value', DETAIL = format('Element %s is %s.', tord, t::text),
              HINT = 'Give {"relation": "schema.table", "columns": [{"column_name": "a", "type": "bigint"}, ...]}.';
    END IF;
    rel := to_regclass(t->>'relation');
    IF rel IS NULL THEN
      RAISE EXCEPTION 'relation % does not exist', t->>'relation'
        USING ERRCODE = 'undefined_table', HINT = 'Give a schema-qualified table name.';
    END IF;
    IF rel = ANY (rels) THEN
      RAISE EXCEPTION 'table % is given twice', rel::regclass
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Give each table of the component once.';
    END IF;
    rels := rels || rel;
    PERFORM storagelab_internal.rewrite_refuse(ARRAY[rel]);
    seen := '{}';
    cpos := 0;
    FOR c IN SELECT x FROM jsonb_array_elements(t->'columns') x LOOP
      cpos := cpos + 1;
      SELECT att.attnum, att.attname, format_type(att.atttypid, att.atttypmod) AS typ INTO a
        FROM pg_attribute att
       WHERE att.attrelid = rel AND att.attname = c->>'column_name' AND att.attnum > 0 AND NOT att.attisdropped;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'column % of % does not exist', coalesce(quote_ident(c->>'column_name'), 'NULL'), rel::regclass
          USING ERRCODE = 'undefined_column', HINT = 'Name every live column of the table once, in the new order.';
      END IF;
      IF a.attnum = ANY (seen) THEN
        RAISE EXCEPTION 'column % of % is given twice', quote_ident(a.attname), rel::regclass
          USING ERRCODE = 'invalid_parameter_value', HINT = 'Name every live column of the table once, in the new order.';
      END IF;
      seen := seen || a.attnum;
      relid := rel; table_ord := tord; pos := cpos; attnum := a.attnum; column_name := a.attname;
      old_type := a.typ;
      new_type := CASE WHEN c ? 'type' THEN storagelab_internal.rewrite_type_text(c->>'type', a.attname) ELSE a.typ END;
      -- the same type spelled otherwise (int8 for bigint) is no change
      changed := to_regtype(new_type) <> to_regtype(old_type)
                 OR coalesce(replace(substring(new_type FROM '\(([0-9 ,]*)\)'), ' ', ''), '')
                    <> coalesce(replace(substring(old_type FROM '\(([0-9 ,]*)\)'), ' ', ''), '');
      IF NOT changed THEN new_type := old_type; END IF;
      RETURN NEXT;
    END LOOP;
    SELECT string_agg(quote_ident(att.attname), ', ' ORDER BY att.attnum) INTO missing
      FROM pg_attribute att
     WHERE att.attrelid = rel AND att.attnum > 0 AND NOT att.attisdropped AND att.attnum <> ALL (seen);
    IF missing IS NOT NULL THEN
      RAISE EXCEPTION 'columns of % are missing from the new order', rel::regclass
        USING ERRCODE = 'invalid_parameter_value', DETAIL = format('Missing: %s.', missing),
              HINT = 'Name every live column of the table once, in the new order.';
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_columns(jsonb) IS
  'the rewrite engine''s input, checked: one row per column of every table, in the new order, with its old and new type; 42P01 unknown table, 42703 unknown column, 22023 a column missing or twice, an unknown type, a malformed argument';

-- What the engine cannot rewrite: refused with 0A000 and a message naming
-- the object (42809 for a relation that is not a table).  The partitions
-- and inheritance children of a table, typed tables, extension members,
-- and tables whose row type is used by another object than a view or a
-- function (a column of another table, a type): the row type of the new
-- table is another type (views and functions are re-created with it).
CREATE FUNCTION storagelab_internal.rewrite_refuse(relids oid[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.oid, c.relkind, c.relispartition, c.reloftype, c.reltype, c.relpersistence,
           (SELECT t.typarray FROM pg_type t WHERE t.oid = c.reltype) AS arraytype
      FROM pg_class c WHERE c.oid = ANY (relids) ORDER BY c.oid
  LOOP
    IF r.relkind = 'p' OR r.relispartition
       OR EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = r.oid OR i.inhparent = r.oid) THEN
      RAISE EXCEPTION 'the rewrite engine does not support partitioned tables, partitions or inheritance'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s is %s.', r.oid::regclass,
                              CASE WHEN r.relkind = 'p' THEN 'a partitioned table'
                                   WHEN r.relispartition THEN 'a partition'
                                   ELSE 'an inheritance parent or child' END),
              HINT = 'Rebuild its partitions one by one, or change the types with ALTER TABLE.';
    END IF;
    IF r.relkind <> 'r' THEN
      RAISE EXCEPTION '% is not a table', r.oid::regclass
        USING ERRCODE = 'wrong_object_type', HINT = 'Give an ordinary table.';
    END IF;
    IF r.reloftype <> 0 THEN
      RAISE EXCEPTION 'the rewrite engine does not support typed tables'
        USING ERRCODE = 'feature_not_supported', DETAIL = format('%s is of type %s.', r.oid::regclass, r.reloftype::regtype),
              HINT = 'Change the types with ALTER TABLE.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = r.oid AND d.deptype = 'e') THEN
      RAISE EXCEPTION 'the rewrite engine does not rewrite tables of extensions'
        USING ERRCODE = 'feature_not_supported', DETAIL = format('%s belongs to an extension.', r.oid::regclass),
              HINT = 'Leave the extension''s tables to the extension.';
    END IF;
    -- the row type (and its array type) in another table's column, a type (functions: rewrite_dependents)
    FOR r IN
      SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, format_type(d.refobjid, NULL) AS typ
        FROM pg_depend d
       WHERE d.refclassid = 'pg_type'::regclass AND d.refobjid IN (r.reltype, r.arraytype)
         AND d.deptype = 'n' AND d.classid NOT IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
       ORDER BY 1 LIMIT 1
    LOOP
      RAISE EXCEPTION 'the rewrite engine cannot rewrite a table whose row type is used elsewhere'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s uses type %s; the new table has a row type of its own.', r.what, r.typ),
              HINT = 'Change the types with ALTER TABLE, or drop that object first and re-create it afterwards.';
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_refuse(oid[]) IS
  'raises 0A000 naming the object when the rewrite engine cannot rewrite one of the tables (partitioning, inheritance, typed table, extension member, row type used by a column or type), 42809 for a relation that is not a table';

-- The parts of a view or materialized view that go when it is dropped:
-- its triggers, rules, column defaults and (materialized) indexes, as
-- statements that re-create them after the view.
CREATE FUNCTION storagelab_internal.rewrite_view_parts(view oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce((SELECT string_agg(format(E'ALTER %s %s ALTER COLUMN %I SET DEFAULT %s;\n',
                                            CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END,
                                            storagelab_internal.bigint_migration_qname(c.oid), a.attname,
                                            pg_get_expr(ad.adbin, ad.adrelid)), '' ORDER BY a.attnum)
                    FROM pg_attrdef ad JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
                   WHERE ad.adrelid = c.oid), '')
      || coalesce((SELECT string_agg(storagelab_internal.bigint_migration_index_copy(pg_get_indexdef(i.indexrelid), i.indexrelid,
                                       ic.relname, false, '{}', '{}') || E';\n'
                                     || CASE WHEN obj_description(i.indexrelid, 'pg_class') IS NULL THEN ''
                                             ELSE format(E'COMMENT ON INDEX %s IS %L;\n',
                                                         storagelab_internal.bigint_migration_qname(i.indexrelid),
                                                         obj_description(i.indexrelid, 'pg_class')) END,
                                     '' ORDER BY i.indexrelid)
                     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = c.oid), '')
      || coalesce((SELECT string_agg((x.o).create_sql, '' ORDER BY t.oid)
                     FROM pg_trigger t,
                          storagelab_internal.bigint_migration_dep_trigger('pg_trigger'::regclass, t.oid, 0, 'n',
                            'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false) x
                    WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), '')
      || coalesce((SELECT string_agg((x.o).create_sql, '' ORDER BY w.oid)
                     FROM pg_rewrite w,
                          storagelab_internal.bigint_migration_dep_rewrite('pg_rewrite'::regclass, w.oid, 0, 'n',
                            'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false) x
                    WHERE w.ev_class = c.oid AND w.rulename <> '_RETURN'), '')
    FROM pg_class c WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_view_parts(oid) IS
  'statements re-creating what a view or materialized view loses when dropped: column defaults, indexes, triggers, rules, with their comments';

-- The objects outside the tables that follow a table by OID and so must be
-- dropped before the swap and re-created after it (their definitions name
-- the table by name, which is the new table's then): views and
-- materialized views (over the tables, and over those, level by level),
-- rules and policies of other tables, functions with an SQL-standard body
-- or taking or returning the rows of a table or view.
-- depth: re-create in ascending order, drop in descending order.  Any other
-- object depending on a table is refused (0A000, naming it).  The tables'
-- own objects (indexes, constraints, triggers, policies, rules, statistics,
-- publication membership) are the phases' business, not this function's.
CREATE FUNCTION storagelab_internal.rewrite_dependents(relids oid[])
RETURNS TABLE (depth int, classid oid, objid oid, identity text, drop_sql text, create_sql text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  frontier oid[] := relids;
  next_f   oid[];
  lvl      int := 0;
  d        record;
  o        storagelab.bigint_migration_object;
  found_rows storagelab.bigint_migration_object[] := '{}';
BEGIN
  WHILE cardinality(frontier) > 0 LOOP
    lvl := lvl + 1;
    IF lvl > 100 THEN
      RAISE EXCEPTION 'views nested too deep' USING ERRCODE = 'feature_not_supported',
        HINT = 'The engine follows at most 100 levels of views over views.';
    END IF;
    next_f := '{}';
    FOR d IN
      SELECT DISTINCT dep.classid, dep.objid, dep.refobjid,
             w.ev_class, w.rulename, p.polrelid, c.contype, c.conrelid, c.confrelid
        FROM pg_depend dep
        LEFT JOIN pg_rewrite w ON dep.classid = 'pg_rewrite'::regclass AND w.oid = dep.objid
        LEFT JOIN pg_policy p ON dep.classid = 'pg_policy'::regclass AND p.oid = dep.objid
        LEFT JOIN pg_constraint c ON dep.classid = 'pg_constraint'::regclass AND c.oid = dep.objid
       WHERE dep.deptype = 'n'
         AND (dep.refclassid = 'pg_class'::regclass AND dep.refobjid = ANY (frontier)
              -- a function taking or returning a table's or view's rows depends on its row type
              OR dep.refclassid = 'pg_type'::regclass AND dep.classid = 'pg_proc'::regclass
                 AND dep.refobjid IN (SELECT v.reltype FROM pg_class v WHERE v.oid = ANY (frontier)
                                      UNION ALL
                                      SELECT t.typarray FROM pg_class v JOIN pg_type t ON t.oid = v.reltype
                                       WHERE v.oid = ANY (frontier)))
         -- the tables' own objects (defaults and generated columns, constraints,
         -- triggers, indexes, statistics) depending on their columns
         AND NOT CASE dep.classid
                   WHEN 'pg_attrdef'::regclass THEN (SELECT x.adrelid FROM pg_attrdef x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_constraint'::regclass THEN c.conrelid = ANY (relids) AND c.contype <> 'f'
                   WHEN 'pg_trigger'::regclass THEN (SELECT x.tgrelid FROM pg_trigger x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_statistic_ext'::regclass THEN (SELECT x.stxrelid FROM pg_statistic_ext x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_class'::regclass THEN (SELECT x.indrelid FROM pg_index x WHERE x.indexrelid = dep.objid) = ANY (relids)
                   WHEN 'pg_publication_rel'::regclass THEN (SELECT x.prrelid FROM pg_publication_rel x WHERE x.oid = dep.objid) = ANY (relids)
                   ELSE false END
       ORDER BY dep.classid, dep.objid
    LOOP
      o := NULL;
      IF d.classid = 'pg_rewrite'::regclass THEN
        CONTINUE WHEN d.ev_class = ANY (relids) OR d.ev_class = d.refobjid;   -- a table's own rule, a view's own query
        o := (storagelab_internal.bigint_migration_dep_rewrite(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
        IF o.kind IN ('view', 'materialized_view') THEN
          next_f := next_f || d.ev_class;
          o.create_sql := o.create_sql || storagelab_internal.rewrite_view_parts(d.ev_class);
        END IF;
      ELSIF d.classid = 'pg_policy'::regclass THEN
        CONTINUE WHEN d.polrelid = ANY (relids);                               -- a table's own policy
        o := (storagelab_internal.bigint_migration_dep_policy(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
      ELSIF d.classid = 'pg_proc'::regclass THEN
        o := (storagelab_internal.bigint_migration_dep_function(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
      ELSIF d.classid = 'pg_constraint'::regclass AND d.contype = 'f' THEN
        CONTINUE;                                                              -- foreign keys: the swap phase
      END IF;
      IF o.kind IS NULL OR o.kind = 'blocker' THEN
        RAISE EXCEPTION 'the rewrite engine cannot move an object that depends on a table it rewrites'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s depends on %s.', pg_describe_object(d.classid, d.objid, 0),
                                pg_describe_object('pg_class'::regclass, d.refobjid, 0)),
                HINT = 'Drop it before the rewrite and re-create it afterwards.';
      END IF;
      IF o.kind IN ('view', 'materialized_view') THEN
        o.classid := 'pg_class'::regclass; o.objid := d.ev_class;
      ELSE
        o.classid := d.classid; o.objid := d.objid;
      END IF;
      o.depth := lvl;
      found_rows := found_rows || o;
    END LOOP;
    frontier := next_f;
  END LOOP;
  -- an object reached on several levels is re-created after the deepest;
  -- a rule of a view that is re-created goes with its view
  RETURN QUERY
    SELECT max(f.depth), f.classid, f.objid, min(f.identity), min(f.drop_sql), min(f.create_sql)
      FROM unnest(found_rows) f
     WHERE f.kind <> 'rule'
        OR (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = f.objid)
           NOT IN (SELECT v.objid FROM unnest(found_rows) v WHERE v.kind IN ('view', 'materialized_view'))
     GROUP BY f.classid, f.objid
     ORDER BY 1, 2, 3;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_dependents(oid[]) IS
  'objects outside the tables that follow them by OID (views and materialized views over them, level by level, rules and policies of other tables, functions with an SQL-standard body): depth, identity, the SQL that drops and re-creates each; refuses (0A000) any other dependent';

-- from extension/60_rewrite_create.sql
-- storagelab install script, part 60: the rewrite engine's phases create
-- and copy (see 60_rewrite_model.sql and doc/design/rewrite-engine.md).
--
--   create  the new table beside the old, storagelab_new_<OID>, in the new
--           column order and types, with everything a table has that does
--           not fire or constrain other tables: defaults, NOT NULL, valid
--           CHECK constraints, identity (own sequence, same options),
--           generated columns, collation, compression, storage, statistics
--           targets, column options, reloptions (TOAST's too), access
--           method, tablespace, persistence, owner, privileges, comments;
--           no indexes, foreign keys, triggers, rules or policies.
--   copy    INSERT ... SELECT FROM ONLY the old table in the new order.


-- A reloptions array as the list inside WITH (...), each key prefixed.
CREATE FUNCTION storagelab_internal.rewrite_options(opts text[], prefix text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT string_agg(format('%s%I = %L', $2, split_part(o, '=', 1), substr(o, strpos(o, '=') + 1)), ', ' ORDER BY n)
    FROM unnest($1) WITH ORDINALITY u(o, n)
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_options(text[], text) IS
  'a reloptions or attoptions array as the quoted list inside WITH (...) or SET (...), keys prefixed (toast.)';

-- The identity clause of a column of the new table: its own sequence,
-- named storagelab_new_<old sequence OID>, with the old one's options;
-- bounds that are the old type's defaults are left to the new type's.
CREATE FUNCTION storagelab_internal.rewrite_identity_clause(rel oid, att int2, identity "char", old_type oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(' GENERATED %s AS IDENTITY (SEQUENCE NAME %I.%I INCREMENT BY %s%s%s START WITH %s CACHE %s %s)',
                CASE $3 WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END,
                n.nspname, storagelab_internal.rewrite_name('new', s.seqrelid), s.seqincrement,
                CASE WHEN s.seqmin = CASE WHEN s.seqincrement > 0 THEN 1 ELSE lim.lo END THEN ''
                     ELSE ' MINVALUE ' || s.seqmin END,
                CASE WHEN s.seqmax = CASE WHEN s.seqincrement > 0 THEN lim.hi ELSE -1 END THEN ''
                     ELSE ' MAXVALUE ' || s.seqmax END,
                s.seqstart, s.seqcache, CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END)
    FROM pg_depend d
    JOIN pg_sequence s ON s.seqrelid = d.objid
    JOIN pg_class sc ON sc.oid = s.seqrelid
    JOIN pg_namespace n ON n.oid = sc.relnamespace
   CROSS JOIN LATERAL (SELECT CASE $4 WHEN 'int2'::regtype THEN -32768 WHEN 'int4'::regtype THEN -2147483648
                                      ELSE -9223372036854775808 END::int8 AS lo,
                              CASE $4 WHEN 'int2'::regtype THEN 32767 WHEN 'int4'::regtype THEN 2147483647
                                      ELSE 9223372036854775807 END::int8 AS hi) lim
   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
     AND d.refobjid = $1 AND d.refobjsubid = $2 AND d.deptype = 'i'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_identity_clause(oid, int2, "char", oid) IS
  'GENERATED ... AS IDENTITY clause of a column of the new table: a sequence of its own (storagelab_new_<old sequence OID>) with the old one''s increment, bounds, start, cache and cycle';

-- One column of the new table: name, type, collation, compression,
-- generated expression, identity or default, NOT NULL.
CREATE FUNCTION storagelab_internal.rewrite_column_def(rel oid, att int2, new_type text)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('%I %s', a.attname, $3)
      || CASE WHEN a.attcollation <> 0 AND nt.typcollation <> 0 AND a.attcollation <> nt.typcollation
              THEN (SELECT format(' COLLATE %I.%I', cn.nspname, co.collname)
                      FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                     WHERE co.oid = a.attcollation) ELSE '' END
      || CASE a.attcompression WHEN 'p' THEN ' COMPRESSION pglz' WHEN 'l' THEN ' COMPRESSION lz4' ELSE '' END
      || CASE WHEN a.attgenerated IN ('s', 'v')
              THEN format(' GENERATED ALWAYS AS (%s) %s', pg_get_expr(ad.adbin, ad.adrelid),
                          CASE a.attgenerated WHEN 's' THEN 'STORED' ELSE 'VIRTUAL' END)
              WHEN a.attidentity IN ('a', 'd')
              THEN storagelab_internal.rewrite_identity_clause($1, $2, a.attidentity, a.atttypid)
              WHEN ad.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid)
              ELSE '' END
      || CASE WHEN a.attnotnull
              THEN coalesce(' CONSTRAINT ' || quote_ident(storagelab_internal.bigint_migration_not_null_name($1, $2)), '')
                   || ' NOT NULL' ELSE '' END
    FROM pg_attribute a
    JOIN pg_type nt ON nt.oid = to_regtype($3)
    LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
   WHERE a.attrelid = $1 AND a.attnum = $2
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_column_def(oid, int2, text) IS
  'the definition of one column of the new table: type, collation, compression, generated expression, identity or default, NOT NULL (named as it is on PostgreSQL 18)';

-- Phase create for one table: columns are the attnums in the new order,
-- types their new types.
CREATE FUNCTION storagelab_internal.rewrite_create(rel oid, atts int2[], types text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  newq   text;
  defs   text[];
  stmts  text[];
  col    record;
BEGIN
  SELECT c.relname, n.nspname, c.relpersistence, c.reloptions, c.reltablespace, c.relowner, c.relacl,
         am.amname, (SELECT tc.reloptions FROM pg_class tc WHERE tc.oid = c.reltoastrelid) AS toastoptions,
         obj_description(c.oid, 'pg_class') AS descr
    INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am am ON am.oid = c.relam
   WHERE c.oid = rel;
  newq := format('%I.%I', t.nspname, storagelab_internal.rewrite_name('new', rel));
  SELECT array_agg(storagelab_internal.rewrite_column_def(rel, u.att, u.typ) ORDER BY u.n) INTO defs
    FROM unnest(atts, types) WITH ORDINALITY u(att, typ, n);
  -- valid CHECK constraints under their names (invalid ones: phase index, NOT VALID)
  SELECT defs || coalesce(array_agg(format('CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid)) ORDER BY k.conname), '{}')
    INTO defs
    FROM pg_constraint k WHERE k.conrelid = rel AND k.contype = 'c' AND k.convalidated;
  stmts := ARRAY[format(E'CREATE %sTABLE %s (\n    %s\n)%s%s%s',
                        CASE t.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END,
                        newq, array_to_string(defs, E',\n    '),
                        CASE WHEN t.amname <> 'heap' THEN format(' USING %I', t.amname) ELSE '' END,
                        CASE WHEN t.reloptions IS NOT NULL OR t.toastoptions IS NOT NULL
                             THEN ' WITH (' || concat_ws(', ', storagelab_internal.rewrite_options(t.reloptions),
                                                         storagelab_internal.rewrite_options(t.toastoptions, 'toast.')) || ')'
                             ELSE '' END,
                        CASE WHEN t.reltablespace <> 0
                             THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = t.reltablespace))
                             ELSE '' END)];
  -- per column: storage set by hand, statistics target, options, comment, privileges
  FOR col IN
    SELECT a.attname, a.attstorage, ot.typstorage AS old_default, nt.typstorage AS new_default, nt.typlen AS new_len,
           a.attstattarget::int AS stattarget, a.attacl, col_description(rel, a.attnum) AS descr,
           -- the options ALTER COLUMN SET takes (n_distinct, n_distinct_inherited)
           (SELECT array_agg(o ORDER BY o) FROM unnest(a.attoptions) o WHERE o ~ '^n_distinct(_inherited)?=') AS attoptions
      FROM unnest(atts, types) WITH ORDINALITY u(att, typ, n)
      JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = u.att
      JOIN pg_type ot ON ot.oid = a.atttypid
      JOIN pg_type nt ON nt.oid = to_regtype(u.typ)
     ORDER BY u.n
  LOOP
    IF col.attstorage <> col.old_default AND col.new_len = -1 AND col.new_default <> 'p' THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE %s', newq, col.attname,
                               CASE col.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL'
                                                 WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END);
    END IF;
    IF coalesce(col.stattarget, -1) >= 0 THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', newq, col.attname, col.stattarget);
    END IF;
    IF col.attoptions IS NOT NULL THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', newq, col.attname,
                               storagelab_internal.rewrite_options(col.attoptions));
    END IF;
    IF col.descr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON COLUMN %s.%I IS %L', newq, col.attname, col.descr);
    END IF;
  END LOOP;
  stmts := stmts || format('ALTER TABLE %s OWNER TO %I', newq, pg_get_userbyid(t.relowner));
  IF t.descr IS NOT NULL THEN
    stmts := stmts || format('COMMENT ON TABLE %s IS %L', newq, t.descr);
  END IF;
  -- privileges: the table's (the same statements as for a re-created view) and its columns'
  stmts := stmts || array_remove(regexp_split_to_array(rtrim(
             storagelab_internal.bigint_migration_acl_sql('TABLE', newq, t.relacl, t.relowner), E';\n'), E';\n'), '');
  SELECT stmts || coalesce(array_agg(format('GRANT %s (%I) ON TABLE %s TO %s%s', x.privilege_type, a.attname, newq,
                                            CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
                                            CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                                     ORDER BY a.attnum, x.grantee, x.privilege_type), '{}')
    INTO stmts
    FROM pg_attribute a, aclexplode(a.attacl) x
   WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_create(oid, int2[], text[]) IS
  'phase create of the rewrite engine for one table: CREATE TABLE storagelab_new_<OID> in the new order and types with every property of the old table that fires nothing, then its column settings, owner, comments and privileges';

-- Phase copy for one table: every row of the old table (not its children)
-- into the new one, cast where the type changes; generated columns are
-- computed again, identity values kept (OVERRIDING SYSTEM VALUE).
CREATE FUNCTION storagelab_internal.rewrite_copy(rel oid, atts int2[], types text[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'INSERT INTO %I.%I (%s)%s\nSELECT %s\n  FROM ONLY %s',
                n.nspname, storagelab_internal.rewrite_name('new', $1),
                string_agg(quote_ident(a.attname), ', ' ORDER BY u.n),
                CASE WHEN bool_or(a.attidentity = 'a') THEN ' OVERRIDING SYSTEM VALUE' ELSE '' END,
                string_agg(CASE WHEN format_type(a.atttypid, a.atttypmod) = u.typ THEN quote_ident(a.attname)
                                ELSE format('%I::%s', a.attname, u.typ) END, ', ' ORDER BY u.n),
                storagelab_internal.bigint_migration_qname($1))
    FROM unnest($2, $3) WITH ORDINALITY u(att, typ, n)
    JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = u.att
    JOIN pg_class c ON c.oid = $1
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE a.attgenerated = ''
   GROUP BY n.nspname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_copy(oid, int2[], text[]) IS
  'phase copy of the rewrite engine for one table: INSERT INTO the new table SELECT FROM ONLY the old one, in the new order, cast to the new types, generated columns left out, identity values kept';

-- from extension/60_rewrite_index.sql
-- storagelab install script, part 60: the rewrite engine's phase index
-- (see 60_rewrite_model.sql and doc/design/rewrite-engine.md): every valid
-- index of the old table, and its primary key, unique and exclusion
-- constraints, built on the new table under deterministic names
-- (storagelab_new_<OID of the old index or constraint>) that the swap
-- renames to the old ones; CHECK constraints that were NOT VALID; comments.


-- The DDL of index idx rebuilt on table new_table (schema-qualified,
-- quoted) under new_name, from pg_get_indexdef: every option kept (order,
-- NULLS FIRST/LAST, operator class and its options, collation, INCLUDE,
-- NULLS NOT DISTINCT, storage parameters, predicate, expressions, and the
-- tablespace, which pg_get_indexdef leaves out; see
-- bigint_migration_index_copy).  The definition names the old table once,
-- after ON: that name is checked, then replaced.
CREATE FUNCTION storagelab_internal.rewrite_index_def(idx oid, new_name name, new_table text)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix   record;
  def  text;
  head text;
BEGIN
  SELECT i.indisunique, i.indrelid, am.amname INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  def := storagelab_internal.bigint_migration_index_copy(pg_get_indexdef(idx), idx, new_name, false, '{}', '{}');
  head := format('CREATE %sINDEX %I ON %s USING %I (', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, new_name,
                 storagelab_internal.bigint_migration_qname(ix.indrelid), ix.amname);
  IF NOT starts_with(def, head) THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  RETURN format('CREATE %sINDEX %I ON %s USING %I (', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, new_name,
                new_table, ix.amname)
         || substr(def, length(head) + 1);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_def(oid, name, text) IS
  'DDL of an index rebuilt on another table under another name, every option kept (from pg_get_indexdef, the table name checked and replaced)';

-- Phase index for one table.
CREATE FUNCTION storagelab_internal.rewrite_index(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  nspq   text;
  newq   text;
  stmts  text[] := '{}';
  r      record;
  iname  name;
BEGIN
  SELECT format('%I', n.nspname), format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid))
    INTO nspq, newq
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  FOR r IN
    SELECT i.indexrelid, k.oid AS conoid, k.contype, k.condeferrable, k.condeferred,
           obj_description(i.indexrelid, 'pg_class') AS idescr, obj_description(k.oid, 'pg_constraint') AS cdescr
      FROM pg_index i
      LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = rel AND k.contype IN ('p', 'u', 'x')
     WHERE i.indrelid = rel AND i.indisvalid
     ORDER BY i.indexrelid
  LOOP
    IF r.contype = 'x' THEN
      iname := storagelab_internal.rewrite_name('new', r.conoid);
      stmts := stmts || format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, iname, pg_get_constraintdef(r.conoid));
    ELSIF r.contype IN ('p', 'u') THEN
      -- the index first, with every option, then the constraint on it (which renames the index to its own name)
      -- (named as the constraint: USING INDEX names the index after it)
      iname := storagelab_internal.rewrite_name('new', r.conoid);
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
      stmts := stmts || format('ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I%s', newq, iname,
                               CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, iname,
                               CASE WHEN r.condeferred THEN ' DEFERRABLE INITIALLY DEFERRED'
                                    WHEN r.condeferrable THEN ' DEFERRABLE' ELSE '' END);
    ELSE
      iname := storagelab_internal.rewrite_name('new', r.indexrelid);
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
    END IF;
    -- statistics targets of expression columns, comments
    SELECT stmts || coalesce(array_agg(format('ALTER INDEX %s.%I ALTER COLUMN %s SET STATISTICS %s',
                                              nspq, iname, a.attnum, a.attstattarget)
                                       ORDER BY a.attnum), '{}')
      INTO stmts
      FROM pg_attribute a WHERE a.attrelid = r.indexrelid AND coalesce(a.attstattarget::int, -1) >= 0;
    IF r.idescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON INDEX %s.%I IS %L', nspq, iname, r.idescr);
    END IF;
    IF r.cdescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON CONSTRAINT %I ON %s IS %L', iname, newq, r.cdescr);
    END IF;
  END LOOP;
  -- CHECK constraints that were not valid stay so; comments of the valid ones (created with the table)
  SELECT stmts || coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, k.conname, pg_get_constraintdef(k.oid))
                                     ORDER BY k.conname) FILTER (WHERE NOT k.convalidated), '{}')
               || coalesce(array_agg(format('COMMENT ON CONSTRAINT %I ON %s IS %L', k.conname, newq, obj_description(k.oid, 'pg_constraint'))
                                     ORDER BY k.conname) FILTER (WHERE obj_description(k.oid, 'pg_constraint') IS NOT NULL), '{}')
    INTO stmts
    FROM pg_constraint k WHERE k.conrelid = rel AND k.contype = 'c';
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index(oid) IS
  'phase index of the rewrite engine for one table: every valid index and primary key, unique and exclusion constraint of the old table on the new one (storagelab_new_<OID> names), NOT VALID CHECK constraints, statistics targets and comments';

-- from extension/60_rewrite_swap.sql
-- storagelab install script, part 60: the rewrite engine's phases swap,
-- swap_back, validate, cleanup and discard (see 60_rewrite_model.sql and
-- doc/design/rewrite-engine.md).  The caller runs swap (or swap_back) in
-- one transaction holding ACCESS EXCLUSIVE locks on the tables.
--
-- Every statement is written before the first phase runs, from the
-- catalogs as they are then: names are deterministic, and definitions name
-- the tables by their original names, which after the renames are the new
-- tables' (after swap_back the old ones' again).


-- The foreign keys the swap re-points: "from" (on a rewritten table; added
-- on the new table) and "to" (on another table, referencing a rewritten
-- one; dropped and added again).  Partition clones go with their parent.
CREATE FUNCTION storagelab_internal.rewrite_foreign_keys(relids oid[])
RETURNS TABLE (conoid oid, direction text, conrelid oid, conname name, qrel text, def text,
               validated boolean, partitioned boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT k.oid, CASE WHEN k.conrelid = ANY ($1) THEN 'from' ELSE 'to' END, k.conrelid, k.conname,
         storagelab_internal.bigint_migration_qname(k.conrelid),
         regexp_replace(pg_get_constraintdef(k.oid), ' NOT VALID$', ''), k.convalidated, c.relkind = 'p'
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
   WHERE k.contype = 'f' AND k.conparentid = 0 AND (k.conrelid = ANY ($1) OR k.confrelid = ANY ($1))
   ORDER BY k.conrelid, k.conname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_foreign_keys(oid[]) IS
  'the foreign keys from and to the rewritten tables that the swap re-points, with their definitions (NOT VALID left out) and whether they were validated';

-- The renames of one table's swap: the table, its indexes and constraints
-- with indexes, its identity sequences (with their position) and
-- statistics objects; back = true gives the renames of swap_back.
CREATE FUNCTION storagelab_internal.rewrite_renames(rel oid, back boolean)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  nspq   text;
  cur    text;   -- the table under the original name after the table renames
  other  text;   -- the other table (old after swap, new after swap_back)
  mine   text;   -- prefix of the objects moved out of the way: old (swap) or new (swap_back)
  theirs text;
  stmts  text[];
  r      record;
BEGIN
  SELECT c.relname, n.nspname INTO t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  nspq := quote_ident(t.nspname);
  mine := CASE WHEN back THEN 'new' ELSE 'old' END;
  theirs := CASE WHEN back THEN 'old' ELSE 'new' END;
  cur := format('%s.%I', nspq, t.relname);
  other := format('%s.%I', nspq, storagelab_internal.rewrite_name(mine, rel));
  stmts := ARRAY[format('ALTER TABLE %s RENAME TO %I', cur, storagelab_internal.rewrite_name(mine, rel)),
                 format('ALTER TABLE %s.%I RENAME TO %I', nspq, storagelab_internal.rewrite_name(theirs, rel), t.relname)];
  FOR r IN
    SELECT i.indexrelid, ic.relname AS iname, k.oid AS conoid, k.conname
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = rel AND k.contype IN ('p', 'u', 'x')
     WHERE i.indrelid = rel AND i.indisvalid
     ORDER BY i.indexrelid
  LOOP
    IF r.conoid IS NOT NULL THEN
      stmts := stmts || format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', other, r.conname, storagelab_internal.rewrite_name(mine, r.conoid))
                     || format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', cur, storagelab_internal.rewrite_name(theirs, r.conoid), r.conname);
    ELSE
      stmts := stmts || format('ALTER INDEX %s.%I RENAME TO %I', nspq, r.iname, storagelab_internal.rewrite_name(mine, r.indexrelid))
                     || format('ALTER INDEX %s.%I RENAME TO %I', nspq, storagelab_internal.rewrite_name(theirs, r.indexrelid), r.iname);
    END IF;
  END LOOP;
  -- identity sequences: renamed, and the one taking over continues where the other stopped
  FOR r IN
    SELECT sc.oid, sc.relname, format('%I', sn.nspname) AS nspq
      FROM pg_depend d JOIN pg_class sc ON sc.oid = d.objid JOIN pg_namespace sn ON sn.oid = sc.relnamespace
     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = rel
       AND d.deptype = 'i' AND sc.relkind = 'S'
     ORDER BY sc.oid
  LOOP
    stmts := stmts || format('ALTER SEQUENCE %s.%I RENAME TO %I', r.nspq, r.relname, storagelab_internal.rewrite_name(mine, r.oid))
                   || format('ALTER SEQUENCE %s.%I RENAME TO %I', r.nspq, storagelab_internal.rewrite_name(theirs, r.oid), r.relname)
                   || format('SELECT pg_catalog.setval(%L, s.last_value, s.is_called) FROM %s.%I s',
                             format('%s.%I', r.nspq, r.relname), r.nspq, storagelab_internal.rewrite_name(mine, r.oid));
  END LOOP;
  -- sequences owned by a column (serial): owned by the table now under the name
  SELECT stmts || coalesce(array_agg(format('ALTER SEQUENCE %s OWNED BY %s.%I', storagelab_internal.bigint_migration_qname(d.objid),
                                            cur, a.attname) ORDER BY d.objid), '{}')
    INTO stmts
    FROM pg_depend d JOIN pg_class sc ON sc.oid = d.objid
    JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = d.refobjsubid
   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = rel
     AND d.deptype = 'a' AND sc.relkind = 'S';
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_renames(oid, boolean) IS
  'the renames of one table''s swap (or swap_back): table, indexes, constraints with indexes, identity sequences with their position; serial sequences re-owned';

-- The table's own objects that the new table gets in the swap (they would
-- fire during the copy, or they are named in their schema): triggers,
-- rules, policies and row security, publication membership, statistics
-- objects, replica identity, CLUSTER ON.  Written for after the renames.
CREATE FUNCTION storagelab_internal.rewrite_own_objects(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  cur    text;
  stmts  text[] := '{}';
  r      record;
BEGIN
  SELECT c.relname, n.nspname, c.relrowsecurity, c.relforcerowsecurity, c.relreplident INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  cur := format('%I.%I', t.nspname, t.relname);
  FOR r IN
    SELECT x.create_sql FROM (
      SELECT 1 AS k, g.oid, (storagelab_internal.bigint_migration_dep_trigger('pg_trigger'::regclass, g.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_trigger g WHERE g.tgrelid = rel AND NOT g.tgisinternal
      UNION ALL
      SELECT 2, w.oid, (storagelab_internal.bigint_migration_dep_rewrite('pg_rewrite'::regclass, w.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_rewrite w WHERE w.ev_class = rel AND w.rulename <> '_RETURN'
      UNION ALL
      SELECT 3, p.oid, (storagelab_internal.bigint_migration_dep_policy('pg_policy'::regclass, p.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_policy p WHERE p.polrelid = rel
      UNION ALL
      SELECT 4, pr.oid, (storagelab_internal.bigint_migration_dep_publication('pg_publication_rel'::regclass, pr.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_publication_rel pr WHERE pr.prrelid = rel
      UNION ALL
      SELECT 5, s.oid, pg_get_statisticsobjdef(s.oid) || E';\n'
             || format(E'ALTER STATISTICS %I.%I OWNER TO %I;\n', sn.nspname, s.stxname, pg_get_userbyid(s.stxowner))
             || CASE WHEN coalesce(s.stxstattarget::int, -1) >= 0
                     THEN format(E'ALTER STATISTICS %I.%I SET STATISTICS %s;\n', sn.nspname, s.stxname, s.stxstattarget) ELSE '' END
             || CASE WHEN obj_description(s.oid, 'pg_statistic_ext') IS NULL THEN ''
                     ELSE format(E'COMMENT ON STATISTICS %I.%I IS %L;\n', sn.nspname, s.stxname,
                                 obj_description(s.oid, 'pg_statistic_ext')) END
        FROM pg_statistic_ext s JOIN pg_namespace sn ON sn.oid = s.stxnamespace WHERE s.stxrelid = rel
    ) x ORDER BY x.k, x.oid
  LOOP
    stmts := stmts || r.create_sql;
  END LOOP;
  IF t.relrowsecurity THEN stmts := stmts || format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', cur); END IF;
  IF t.relforcerowsecurity THEN stmts := stmts || format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', cur); END IF;
  stmts := stmts || CASE t.relreplident
                      WHEN 'f' THEN format('ALTER TABLE %s REPLICA IDENTITY FULL', cur)
                      WHEN 'n' THEN format('ALTER TABLE %s REPLICA IDENTITY NOTHING', cur)
                      WHEN 'i' THEN (SELECT format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', cur, ic.relname)
                                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                      WHERE i.indrelid = rel AND i.indisreplident) END;
  stmts := stmts || (SELECT format('ALTER TABLE %s CLUSTER ON %I', cur, ic.relname)
                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                      WHERE i.indrelid = rel AND i.indisclustered AND i.indisvalid);
  RETURN array_remove(stmts, NULL);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_own_objects(oid) IS
  'the statements that give the new table, once renamed, the old one''s triggers (enabled state, comments), rules, policies and row security, publication membership (column lists, row filters), statistics objects, replica identity and clustering index';

-- Phase swap (back = false) or swap_back (back = true) of a component.
CREATE FUNCTION storagelab_internal.rewrite_swap(relids oid[], back boolean)
RETURNS TABLE (relid oid, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel  oid;
  r    record;
  s    text;
BEGIN
  -- functions are re-created as they were, without checking their bodies (as pg_dump does)
  relid := NULL; statement := 'SET LOCAL check_function_bodies = off'; RETURN NEXT;
  -- 1. objects that follow the tables by OID, dependents first
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth DESC, classid, objid LOOP
    relid := NULL; statement := r.drop_sql; RETURN NEXT;
  END LOOP;
  -- 2. foreign keys of other tables referencing the component
  FOR r IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE direction = 'to' LOOP
    relid := r.conrelid; statement := format('ALTER TABLE %s DROP CONSTRAINT %I', r.qrel, r.conname); RETURN NEXT;
  END LOOP;
  -- 3. swap_back: what the new tables got in the swap and that is named in
  -- its schema (statistics objects) or lists them (publications)
  IF back THEN
    FOREACH rel IN ARRAY relids LOOP
      FOR r IN
        SELECT format('ALTER PUBLICATION %I DROP TABLE %s', p.pubname, storagelab_internal.bigint_migration_qname(rel)) AS sql
          FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.prrelid = rel
        UNION ALL
        SELECT format('DROP STATISTICS %I.%I', sn.nspname, s2.stxname)
          FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace WHERE s2.stxrelid = rel
      LOOP
        relid := rel; statement := r.sql; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 4. renames; statistics objects of the old tables out of the way
  FOREACH rel IN ARRAY relids LOOP
    FOREACH s IN ARRAY storagelab_internal.rewrite_renames(rel, back) LOOP
      relid := rel; statement := s; RETURN NEXT;
    END LOOP;
    FOR r IN SELECT s2.oid, sn.nspname, s2.stxname FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace
              WHERE s2.stxrelid = rel ORDER BY s2.oid LOOP
      relid := rel;
      statement := CASE WHEN back THEN format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, storagelab_internal.rewrite_name('old', r.oid), r.stxname)
                        ELSE format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, r.stxname, storagelab_internal.rewrite_name('old', r.oid)) END;
      RETURN NEXT;
    END LOOP;
  END LOOP;
  -- 5. foreign keys: the component's own on the new tables (swap only:
  -- the old tables keep theirs), then the other tables' again; NOT VALID
  -- (phase validate checks them) except on partitioned tables, which
  -- cannot have NOT VALID foreign keys
  FOR r IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE direction = 'to' OR NOT back LOOP
    relid := r.conrelid;
    statement := format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.qrel, r.conname, r.def,
                        CASE WHEN r.partitioned AND r.validated THEN '' ELSE ' NOT VALID' END);
    RETURN NEXT;
    IF obj_description(r.conoid, 'pg_constraint') IS NOT NULL THEN
      statement := format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.qrel, obj_description(r.conoid, 'pg_constraint'));
      RETURN NEXT;
    END IF;
  END LOOP;
  -- 6. the tables' own objects (swap only: the old tables keep theirs)
  IF NOT back THEN
    FOREACH rel IN ARRAY relids LOOP
      FOREACH s IN ARRAY storagelab_internal.rewrite_own_objects(rel) LOOP
        relid := rel; statement := s; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 7. the objects of step 1 again, on whichever tables now have the names
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth, classid, objid LOOP
    relid := NULL; statement := r.create_sql; RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_swap(oid[], boolean) IS
  'phase swap (or swap_back) of the rewrite engine: dependents dropped, foreign keys of other tables dropped, tables and their indexes, constraints, identity sequences and statistics objects renamed, foreign keys added NOT VALID, the tables'' own objects given to the new tables (swap), dependents re-created';

-- from extension/60_rewrite_statements.sql
-- storagelab install script, part 60: the rewrite engine's entry point,
-- storagelab_internal.rewrite_statements(tables, phase): the statements of
-- one phase, in order (doc/design/rewrite-engine.md).


CREATE FUNCTION storagelab_internal.rewrite_statements(tables jsonb, phase text)
RETURNS TABLE (ord int, relation regclass, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  relids oid[] := '{}';
  t      record;
  s      text;
  n      int := 0;
BEGIN
  IF phase IS NULL OR phase NOT IN ('create', 'copy', 'index', 'swap', 'validate', 'swap_back', 'cleanup', 'discard') THEN
    RAISE EXCEPTION 'unknown rewrite phase %', coalesce(quote_literal(phase), 'NULL')
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The phases are create, copy, index, swap, validate, swap_back, cleanup and discard.';
  END IF;
  FOR t IN
    SELECT c.relid, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
      FROM storagelab_internal.rewrite_columns(tables) c
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    relids := relids || t.relid;
  END LOOP;
  IF phase IN ('swap', 'swap_back') THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_swap(relids, phase = 'swap_back') LOOP
      n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(t.statement, ';\s*$', ''); RETURN NEXT;
    END LOOP;
  ELSIF phase = 'validate' THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE validated AND NOT partitioned LOOP
      n := n + 1; ord := n; relation := t.conrelid;
      statement := format('ALTER TABLE %s VALIDATE CONSTRAINT %I', t.qrel, t.conname);
      RETURN NEXT;
    END LOOP;
  ELSIF phase IN ('cleanup', 'discard') THEN
    ord := 1; relation := relids[1];
    SELECT format('DROP TABLE %s', string_agg(format('%I.%I', ns.nspname,
                    storagelab_internal.rewrite_name(CASE phase WHEN 'cleanup' THEN 'old' ELSE 'new' END, c.oid)), ', ' ORDER BY u.n))
      INTO statement
      FROM unnest(relids) WITH ORDINALITY u(r, n) JOIN pg_class c ON c.oid = u.r JOIN pg_namespace ns ON ns.oid = c.relnamespace;
    RETURN NEXT;
  ELSE
    FOR t IN
      SELECT c.relid, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
        FROM storagelab_internal.rewrite_columns(tables) c
       GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
    LOOP
      FOREACH s IN ARRAY CASE phase WHEN 'create' THEN storagelab_internal.rewrite_create(t.relid, t.atts, t.types)
                                    WHEN 'copy' THEN ARRAY[storagelab_internal.rewrite_copy(t.relid, t.atts, t.types)]
                                    ELSE storagelab_internal.rewrite_index(t.relid) END LOOP
        n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(s, ';\s*$', ''); RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_statements(jsonb, text) IS
  'the copy-and-swap rewrite engine: the statements of one phase (create, copy, index, swap, validate, swap_back, cleanup, discard) that rebuild the given tables in a new column order and types beside the old ones and swap them in, in order; write every phase before running the first (doc/design/rewrite-engine.md)';

-- from extension/61_layout_migration.sql
-- storagelab install script, part 61: layout migrations, the fix of what
-- column_waste and alignment_padding find.
--
--   storagelab.layout_migration_script(relation, mode, column_types, column_order)
--       a psql script that rebuilds the table in the planned column order
--       and types (storagelab.table_rewrite_plan, or the caller's), with
--       the rewrite engine of part 60
--   storagelab.layout_migration_plan()
--       one row per table whose plan saves at least the threshold
--       (settings layout_migration.min_saved_pct, .min_saved_bytes), with
--       its script


INSERT INTO storagelab_internal.setting_defaults VALUES
  ('layout_migration.min_saved_pct', '10',
   'layout_migration_plan() lists a table whose plan saves this percentage of it (or min_saved_bytes)'),
  ('layout_migration.min_saved_bytes', '1GB',
   'layout_migration_plan() lists a table whose plan saves this much (or min_saved_pct of it)');

-- A boolean SQL expression, true when the value of column col (quoted)
-- does not survive the change from old_type to new_type unchanged: out of
-- range, not an integer, not spelled as the new type prints it.  For type
-- pairs without a rule, the value cast there and back must be equal (a
-- value the cast rejects raises the cast's error).
CREATE FUNCTION storagelab_internal.layout_misfit(col text, old_type text, new_type text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o oid := to_regtype(old_type);
  n oid := to_regtype(new_type);
  range text;
BEGIN
  range := CASE n WHEN 'int2'::regtype THEN '-32768 AND 32767'
                  WHEN 'int4'::regtype THEN '-2147483648 AND 2147483647'
                  WHEN 'int8'::regtype THEN '-9223372036854775808 AND 9223372036854775807' END;
  IF range IS NOT NULL AND o IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
    RETURN format('%s NOT BETWEEN %s', col, range);
  ELSIF range IS NOT NULL AND o = 'numeric'::regtype THEN
    RETURN format('(%1$s <> trunc(%1$s) OR %1$s NOT BETWEEN %2$s)', col, range);
  ELSIF range IS NOT NULL AND o IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype) THEN
    RETURN format($$CASE WHEN %1$s::text ~ '^(0|-?[1-9][0-9]{0,18})$' THEN %1$s::text::numeric NOT BETWEEN %2$s ELSE true END$$,
                  col, range);
  ELSIF n = 'uuid'::regtype AND o IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype) THEN
    RETURN format($$%s::text !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'$$, col);
  ELSIF o = 'bpchar'::regtype AND n IN ('varchar'::regtype, 'text'::regtype) THEN
    -- char(n) compares without its trailing blanks: the value is the same
    RETURN CASE WHEN new_type ~ '\(' THEN format('length(%s) > %s', col, substring(new_type FROM '\(\s*([0-9]+)')) ELSE 'false' END;
  ELSIF o IN ('varchar'::regtype, 'text'::regtype) AND n = 'varchar'::regtype AND new_type ~ '\(' THEN
    RETURN format('length(%s) > %s', col, substring(new_type FROM '\(\s*([0-9]+)'));
  END IF;
  RETURN format('(%1$s::%2$s)::%3$s IS DISTINCT FROM %1$s', col, new_type, old_type);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_misfit(text, text, text) IS
  'SQL boolean expression true when a column''s value would not survive a type change unchanged (range, integrality, UUID or integer spelling, length; else cast there and back)';

-- Why a column is a key whose type a layout migration leaves alone:
-- primary or foreign key (either side), identity, fed by or owning a
-- sequence; NULL when it is none of these.
CREATE FUNCTION storagelab_internal.layout_key_reason(rel oid, att int2)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(
    (SELECT CASE k.contype WHEN 'p' THEN 'primary key' ELSE 'foreign key' END
       FROM pg_constraint k WHERE k.contype IN ('p', 'f') AND k.conrelid = $1 AND $2 = ANY (k.conkey) ORDER BY k.contype DESC LIMIT 1),
    (SELECT 'referenced by a foreign key' FROM pg_constraint k WHERE k.contype = 'f' AND k.confrelid = $1 AND $2 = ANY (k.confkey) LIMIT 1),
    (SELECT 'identity' FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum = $2 AND a.attidentity <> ''),
    (SELECT 'sequence' FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1 AND d.refobjsubid = $2 LIMIT 1),
    (SELECT 'sequence default' FROM pg_attrdef ad JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
       JOIN pg_class s ON s.oid = d.refobjid AND d.refclassid = 'pg_class'::regclass AND s.relkind = 'S'
      WHERE ad.adrelid = $1 AND ad.adnum = $2 LIMIT 1))
$$;
COMMENT ON FUNCTION storagelab_internal.layout_key_reason(oid, int2) IS
  'why a column is a key a layout migration does not retype (primary key, foreign key on either side, identity, sequence); NULL otherwise';

-- The plan of one table, checked: the rewrite engine's input (columns in
-- the new order with their new types) and the changed columns.
CREATE FUNCTION storagelab_internal.layout_plan(relation regclass, column_types jsonb, column_order name[], plan jsonb,
                                                OUT tables jsonb, OUT changes jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  types  jsonb := '{}';
  k      text;
  ord    name[];
  bad    text;
BEGIN
  IF plan IS NULL AND column_types IS NULL AND column_order IS NULL THEN
    RAISE EXCEPTION 'no layout plan for %', $1
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storagelab.table_rewrite_plan has no row for it: a rewrite saves nothing, or the table lacks statistics.',
            HINT = 'Run ANALYZE or storagelab.column_profile() on it, or give column_types or column_order.';
  END IF;
  IF plan IS NOT NULL THEN
    SELECT coalesce(jsonb_object_agg(e->>'column_name', e->>'to'), '{}') INTO types FROM jsonb_array_elements(plan->'column_changes') e;
  END IF;
  IF column_types IS NOT NULL THEN
    IF jsonb_typeof(column_types) <> 'object' THEN
      RAISE EXCEPTION 'column_types must be a JSON object'
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Give {"column_name": "type", ...}.';
    END IF;
    types := types || column_types;
  END IF;
  ord := coalesce(column_order,
                  CASE WHEN plan IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(plan->'column_order'))::name[] END,
                  ARRAY(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
                         ORDER BY a.attnum));
  FOR k IN SELECT jsonb_object_keys(types) LOOP
    IF k <> ALL (ord) AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = $1 AND a.attname = k
                                        AND a.attnum > 0 AND NOT a.attisdropped) THEN
      RAISE EXCEPTION 'column % of % does not exist', quote_ident(k), $1
        USING ERRCODE = 'undefined_column', HINT = 'column_types maps existing columns to their new types.';
    END IF;
  END LOOP;
  tables := jsonb_build_array(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname($1),
              'columns', (SELECT jsonb_agg(CASE WHEN types ? c THEN jsonb_build_object('column_name', c, 'type', types->>c)
                                                ELSE jsonb_build_object('column_name', c) END ORDER BY n)
                            FROM unnest(ord) WITH ORDINALITY u(c, n))));
  -- checked by the engine (every column once, known types) and compared with the table
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            ORDER BY c.pos) FILTER (WHERE c.changed), '[]')
    INTO changes
    FROM storagelab_internal.rewrite_columns(tables) c;
  -- keys stay as they are: narrowing them means narrowing their whole foreign-key component
  SELECT string_agg(format('%I (%s)', a.attname, storagelab_internal.layout_key_reason($1, a.attnum)), ', ') INTO bad
    FROM jsonb_array_elements(changes) e
    JOIN pg_attribute a ON a.attrelid = $1 AND a.attname = e->>'column_name'
   WHERE storagelab_internal.layout_key_reason($1, a.attnum) IS NOT NULL;
  IF bad <> '' THEN
    RAISE EXCEPTION 'layout migrations do not change the type of key columns'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Columns of %s: %s.', $1, bad),
            HINT = 'Leave them out of column_types; storagelab.bigint_migration_script() widens a key with its foreign-key component.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_plan(regclass, jsonb, name[], jsonb) IS
  'the layout plan of one table (its table_rewrite_plan row as jsonb, overridden by column_types and column_order), checked: the rewrite engine''s input and the changed columns; refuses type changes of key columns (0A000)';

-- Pre-flight: every changed column's values checked against the new type;
-- the first that does not fit refuses the script, naming column and value.
CREATE FUNCTION storagelab_internal.layout_preflight(relation regclass, changes jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e   jsonb;
  v   text;
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    BEGIN
      EXECUTE format('SELECT %1$I::text FROM ONLY %2$s WHERE %1$I IS NOT NULL AND %3$s LIMIT 1', e->>'column_name',
                     storagelab_internal.bigint_migration_qname(relation),
                     storagelab_internal.layout_misfit(quote_ident(e->>'column_name'), e->>'from', e->>'to'))
        INTO v;
    EXCEPTION WHEN data_exception THEN
      RAISE EXCEPTION 'values of column % of % do not fit type %', quote_ident(e->>'column_name'), relation, e->>'to'
        USING ERRCODE = SQLSTATE, DETAIL = SQLERRM, HINT = 'Give that column its current type in column_types.';
    END;
    IF v IS NOT NULL THEN
      RAISE EXCEPTION 'a value of column % of % does not fit type %', quote_ident(e->>'column_name'), relation, e->>'to'
        USING ERRCODE = 'data_exception', DETAIL = format('The value %s would not be kept as it is.', quote_literal(v)),
              HINT = 'The plan is older than the data: run ANALYZE or storagelab.column_profile() again, or give that column its current type in column_types.';
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_preflight(regclass, jsonb) IS
  'checks every changed column''s values against its new type (storagelab_internal.layout_misfit); raises 22000 naming column and value for the first that does not fit';

-- The in-transaction checks of a blocking script, run once its locks are
-- held: the table is still the one the script was written for (OID,
-- columns and types), and every changed column's values still fit.
CREATE FUNCTION storagelab_internal.layout_recheck(relation regclass, changes jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  qn    text := storagelab_internal.bigint_migration_qname(relation);
  cols  text;
  body  text;
  e     jsonb;
BEGIN
  SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum) INTO cols
    FROM pg_attribute a WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped;
  -- columns win over the block's variable (a column may be named v)
  body := format(E'#variable_conflict use_column\nDECLARE\n  v text;\nBEGIN\n'
                 '  IF to_regclass(%1$L) IS DISTINCT FROM %2$s::oid::regclass\n'
                 '     OR (SELECT string_agg(format(''%%I %%s'', a.attname, format_type(a.atttypid, a.atttypmod)), '', '' ORDER BY a.attnum)\n'
                 '           FROM pg_attribute a WHERE a.attrelid = %2$s AND a.attnum > 0 AND NOT a.attisdropped) IS DISTINCT FROM %3$L THEN\n'
                 '    RAISE EXCEPTION ''table %% changed since this script was written'', %1$L\n'
                 '      USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n'
                 '  END IF;\n', qn, relation::oid, cols);
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    body := body || format(E'  SELECT x.%1$I::text INTO v FROM ONLY %2$s x WHERE x.%1$I IS NOT NULL AND %3$s LIMIT 1;\n'
                           '  IF FOUND THEN\n'
                           '    RAISE EXCEPTION ''a value of column %%.%% does not fit type %%'', %2$L, %4$L, %5$L\n'
                           '      USING ERRCODE = ''data_exception'', DETAIL = format(''The value %%s would not be kept as it is.'', quote_literal(v)),\n'
                           '            HINT = ''Generate the script again: its pre-flight names the columns to leave as they are.'';\n'
                           '  END IF;\n',
                           e->>'column_name', qn, storagelab_internal.layout_misfit('x.' || quote_ident(e->>'column_name'), e->>'from', e->>'to'),
                           quote_ident(e->>'column_name'), e->>'to');
  END LOOP;
  RETURN E'-- The table is still as it was when this script was written; every value fits its new type.\n'
         || 'DO ' || storagelab_internal.dollar_quote(E'\n' || body || E'END\n') || E';\n\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_recheck(regclass, jsonb) IS
  'the DO block of a blocking layout script that checks, under its locks, that the table is unchanged (OID, columns, types) and every changed column''s values fit';

-- The header of a layout script: what it changes, what it locks, sizes.
CREATE FUNCTION storagelab_internal.layout_header(relation regclass, tables jsonb, changes jsonb, plan jsonb,
                                                  lock_list text, mid text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- storagelab layout migration of %s (mode %s%s), written %s\n', storagelab_internal.bigint_migration_qname($1),
                CASE WHEN $6 IS NULL THEN 'blocking' ELSE 'online' END, ', migration id ' || $6,
                to_char(now(), 'YYYY-MM-DD HH24:MI:SS TZ'))
      || E'--\n-- Rebuilds the table as a new table in this column order, swaps it in and drops the old one:\n'
      || (SELECT string_agg(format(E'--   %s %s\n', storagelab_internal.bigint_migration_comment_text(quote_ident(c->>'column_name')),
                                   storagelab_internal.bigint_migration_comment_text(
                                     coalesce((SELECT format('%s (was %s)', e->>'to', e->>'from') FROM jsonb_array_elements($3) e
                                                WHERE e->>'column_name' = c->>'column_name'), 'unchanged'))), '' ORDER BY n)
            FROM jsonb_array_elements($2->0->'columns') WITH ORDINALITY u(c, n))
      || E'-- Every index, constraint, foreign key (both ways), sequence, trigger, rule, policy, grant,\n'
      || E'-- comment, statistics object and publication membership follows; views and materialized\n'
      || E'-- views over the table are dropped and re-created (materialized views re-populated).\n--\n'
      || CASE WHEN $6 IS NULL THEN
           storagelab_internal.bigint_migration_comment_text(format('-- Locks: ACCESS EXCLUSIVE on %s until COMMIT: reads and writes of them wait for the whole run.', $5))
           || E'\n-- Disk: a second copy of the table and its indexes until COMMIT.\n'
         ELSE
           E'-- Run one phase at a time, in this order (each can be run again after a failure):\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new table, change log and triggers (brief lock, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); resumes\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new table (locks only it), ANALYZE\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old table and the logs\n'
           || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
           || E'-- A value written during the copy that does not fit its new type stops the copy or replay (roll back, or fix it).\n'
           || E'-- Disk: a second copy of the table and its indexes, and the change log, until cleanup.\n'
           || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal($6) || E';\n'
         END
      || coalesce(format(E'-- Heap now (freshly written): %s; after: %s (storagelab.table_rewrite_plan, evidence %s).\n',
                         pg_size_pretty(($4->>'estimated_bytes_now')::int8), pg_size_pretty(($4->>'estimated_bytes_after')::int8),
                         $4->>'evidence'), '')
      || format(E'-- Heap now on disk: %s (pg_relation_size).\n', pg_size_pretty(pg_relation_size($1)))
      || CASE WHEN $6 IS NULL THEN E'-- Run: psql -v ON_ERROR_STOP=1 -f this.sql   (-v dry_run=1: everything, then ROLLBACK)\n' ELSE '' END
      || E'\n'
$$;
COMMENT ON FUNCTION storagelab_internal.layout_header(regclass, jsonb, jsonb, jsonb, text, text) IS
  'the comment header of a layout script (mid: the online migration id, NULL for blocking): columns in their new order with their type changes, what follows the table, locks or phases, disk, sizes';

-- The online script: the copy-and-swap machinery of parts 62 and 63
-- (change log, batched copy, replay, swap under lock_timeout, rollback)
-- around the engine's statements, one phase per run (-v phase=...).
CREATE FUNCTION storagelab_internal.layout_online_script(relation regclass, tables jsonb, changes jsonb, plan jsonb,
                                                         lock_list text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid text := 'sllm' || substr(md5(tables::text || now()::text), 1, 10);
BEGIN
  RETURN storagelab_internal.layout_header(relation, tables, changes, plan, lock_list, mid)
      || E'\\set ON_ERROR_STOP on\n'
      || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
      || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
      || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
      || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
      || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
      || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
            FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
      || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
      || E'\\if :ph_bad\n'
      || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n')
      || E';\n\\endif\n\n'
      || storagelab_internal.rewrite_online_phases(tables, mid);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_online_script(regclass, jsonb, jsonb, jsonb, text) IS
  'the online layout script: phases start, copy, index, replay, swap, validate, cleanup and rollback of the copy-and-swap machinery (storagelab_internal.rewrite_online_phases) around the rewrite engine''s statements';

-- The script of one table; plan: its table_rewrite_plan row as jsonb (NULL: none).
CREATE FUNCTION storagelab_internal.layout_script(relation regclass, mode text, column_types jsonb,
                                                  column_order name[], plan jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p          record;
  lock_list  text;
  s          text;
  ph         text;
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'unknown mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'The modes are blocking and online.';
  END IF;
  PERFORM storagelab_internal.rewrite_refuse(ARRAY[relation::oid]);
  SELECT * INTO p FROM storagelab_internal.layout_plan(relation, column_types, column_order, plan);
  IF p.changes = '[]' AND (SELECT array_agg(c->>'column_name' ORDER BY n) FROM jsonb_array_elements(p.tables->0->'columns') WITH ORDINALITY u(c, n))
                          = (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                              WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped) THEN
    RAISE EXCEPTION 'nothing to change: the columns keep their order and types'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give column_types or column_order.';
  END IF;
  PERFORM storagelab_internal.layout_preflight(relation, p.changes);
  -- the table and every table whose foreign keys to it are re-pointed
  SELECT string_agg(q, ', ' ORDER BY q) INTO lock_list
    FROM (SELECT storagelab_internal.bigint_migration_qname(relation) AS q
          UNION SELECT f.qrel FROM storagelab_internal.rewrite_foreign_keys(ARRAY[relation::oid]) f WHERE f.direction = 'to') l;
  IF mode = 'online' THEN
    RETURN storagelab_internal.layout_online_script(relation, p.tables, p.changes,
                                                    CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list);
  END IF;
  s := storagelab_internal.layout_header(relation, p.tables, p.changes,
                                         CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list, NULL)
       || storagelab_internal.bigint_migration_blocking_settings()
       || E'-- Lock the table and the tables referencing it, all or none; retried on lock_timeout.\n'
       || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n' || storagelab_internal.layout_recheck(relation, p.changes);
  FOREACH ph IN ARRAY ARRAY['create', 'copy', 'index', 'swap', 'validate', 'cleanup'] LOOP
    s := s || CASE ph WHEN 'create' THEN E'-- The new table beside the old one.\n'
                      WHEN 'copy' THEN E'-- Every row, in the new column order.\n'
                      WHEN 'index' THEN E'-- Indexes and constraints, built once on the full table.\n'
                      WHEN 'swap' THEN E'-- The swap: dependents, renames, sequences, foreign keys, triggers, rules, policies.\n'
                      WHEN 'validate' THEN E'-- Foreign keys re-pointed NOT VALID, validated.\n'
                      ELSE E'-- The old table.\n' END
           || coalesce((SELECT string_agg(r.statement || E';\n', '' ORDER BY r.ord)
                          FROM storagelab_internal.rewrite_statements(p.tables, ph) r), '')
           || E'\n';
  END LOOP;
  s := s || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n'
         || E'-- Statistics of the new table (SHARE UPDATE EXCLUSIVE: reads and writes go on).\n'
         || format(E'ANALYZE %s;\n', storagelab_internal.bigint_migration_qname(relation));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_script(regclass, text, jsonb, name[], jsonb) IS
  'the layout script of one table, given its table_rewrite_plan row (as jsonb; NULL: none): storagelab.layout_migration_script() without looking the plan up';

CREATE FUNCTION storagelab.layout_migration_script(relation regclass, mode text DEFAULT 'blocking',
                                                   column_types jsonb DEFAULT NULL, column_order name[] DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN $1 IS NOT NULL THEN
           storagelab_internal.layout_script($1, $2, $3, $4,
             (SELECT to_jsonb(r) FROM storagelab.table_rewrite_plan r WHERE r.relation = $1)) END
$$;
COMMENT ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]) IS
  'a psql script that rebuilds a table in the column order and types of its storagelab.table_rewrite_plan row (column_types and column_order override it) by copy and swap, in one transaction (mode blocking) or in phases beside live traffic (mode online), with every dependent object; refuses key columns, partitioned tables and inheritance, and values that do not fit (checked before, and again under the locks); NULL relation: NULL';

CREATE FUNCTION storagelab.layout_migration_plan()
RETURNS TABLE (relation regclass, saved_bytes int8, saved_pretty text, saved_pct numeric, table_bytes int8,
               column_changes jsonb, column_order name[], evidence text, advice text, script text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p         record;
  min_pct   numeric := storagelab_internal.setting('layout_migration.min_saved_pct')::numeric;
  min_bytes int8 := pg_size_bytes(storagelab_internal.setting('layout_migration.min_saved_bytes'));
BEGIN
  FOR p IN
    SELECT r.*, round(100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0), 1) AS pct
      FROM storagelab.table_rewrite_plan r
     WHERE r.estimated_saved_bytes >= min_bytes
        OR 100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0) >= min_pct
     ORDER BY r.estimated_saved_bytes DESC, r.relation::oid
  LOOP
    relation := p.relation; saved_bytes := p.estimated_saved_bytes; saved_pretty := p.estimated_saved_pretty;
    saved_pct := p.pct; table_bytes := pg_relation_size(p.relation); column_changes := p.column_changes;
    column_order := p.column_order; evidence := p.evidence;
    BEGIN
      script := storagelab_internal.layout_script(p.relation, 'blocking', NULL, NULL, to_jsonb(p));
      advice := 'run the script in a maintenance window: it locks the table while it copies';
    EXCEPTION WHEN feature_not_supported OR data_exception OR wrong_object_type THEN
      script := NULL;
      advice := left(SQLERRM, 100);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.layout_migration_plan() IS
  'one row per table whose storagelab.table_rewrite_plan saves at least layout_migration.min_saved_pct of the table or layout_migration.min_saved_bytes (settings): the saving, the plan and its blocking layout_migration_script, or in advice why no script can be written';

GRANT EXECUTE ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]),
                          storagelab.layout_migration_plan() TO PUBLIC;

-- END generated section layout
CREATE OR REPLACE VIEW storagelab_internal.findings_layout AS
SELECT CASE WHEN p.column_changes = '[]'::jsonb THEN 'alignment' ELSE 'column_width' END AS category,
       CASE WHEN p.estimated_saved_bytes
                 >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.saved_warning_size'))
            THEN 'warning' ELSE 'info' END AS severity,
       p.relation, NULL::name AS column_name,
       'saved_bytes'::text AS metric, p.estimated_saved_bytes::numeric AS value,
       'bytes'::text AS unit,
       CASE WHEN p.column_changes = '[]'::jsonb
            THEN 'column order wastes alignment padding: rebuild in the planned order'
            ELSE 'narrower column types and a new column order shrink every row' END AS message,
       p.estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       pg_catalog.format('SELECT storagelab.layout_migration_script(%L);',
                         pg_catalog.format('%I.%I', n.nspname, c.relname)) AS fix,
       p.evidence, NULL::int8 AS sample_rows
  FROM storagelab.table_rewrite_plan p
  JOIN pg_catalog.pg_class c ON c.oid = p.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE p.estimated_saved_bytes >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.min_saved_size'));

-- copy-and-swap change logs: reserved names for the log's own columns
-- (storagelab_seq, storagelab_op, storagelab_row; a key column named id no
-- longer collides), and a keyed replay that deletes and copies again unless
-- foreign keys reference the target (swaps through another unique index replay).
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_log_start(d jsonb)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  keys  text[] := ARRAY(SELECT jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END));
  fn    text := d->>'log';
  kl    text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) k);
  body  text;
BEGIN
  IF 'storagelab_seq' = ANY (keys) THEN
    RAISE EXCEPTION 'cannot log the changes of table %: its key column "storagelab_seq" has the name of a column of the change log', d->>'source'
      USING ERRCODE = 'duplicate_column',
            HINT = 'Rename the column first.';
  END IF;
  IF cardinality(keys) = 0 THEN
    body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (storagelab_op, storagelab_row) VALUES (''D'', pg_catalog.to_jsonb(OLD)); END IF;\n'
                   || E'  IF TG_OP <> ''DELETE'' THEN INSERT INTO %1$s (storagelab_op, storagelab_row) VALUES (''I'', pg_catalog.to_jsonb(NEW)); END IF;\n'
                   || E'  RETURN NULL;\nEND\n', d->>'log');
    RETURN ARRAY[
      format('CREATE TABLE %s (storagelab_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, storagelab_op "char" NOT NULL, storagelab_row jsonb NOT NULL)', d->>'log'),
      format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %s',
             fn, storagelab_internal.dollar_quote(body))]
      || storagelab_internal.rewrite_online_log_triggers(d);
  END IF;
  body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (%2$s) VALUES (%3$s); END IF;\n'
                 || E'  IF TG_OP = ''INSERT'' OR (TG_OP = ''UPDATE'' AND (%4$s) IS DISTINCT FROM (%3$s)) THEN\n'
                 || E'    INSERT INTO %1$s (%2$s) VALUES (%4$s);\n  END IF;\n  RETURN NULL;\nEND\n',
                 d->>'log', kl,
                 (SELECT string_agg('OLD.' || quote_ident(k), ', ') FROM unnest(keys) k),
                 (SELECT string_agg('NEW.' || quote_ident(k), ', ') FROM unnest(keys) k));
  RETURN ARRAY[
    format('CREATE TABLE %s AS SELECT %s FROM ONLY %s WITH NO DATA', d->>'log', kl, d->>'source'),
    format('ALTER TABLE %s ADD COLUMN storagelab_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', d->>'log'),
    format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %s',
           fn, storagelab_internal.dollar_quote(body))]
    || storagelab_internal.rewrite_online_log_triggers(d);
END
$fn$;

CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_apply(d jsonb, batch_rows bigint)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ids  bigint[];
  kl   text := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  cols text;
  ndel bigint;
  tk   text := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  lk   text := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
BEGIN
  EXECUTE format('SELECT array_agg(storagelab_seq ORDER BY storagelab_seq), count(*) FILTER (WHERE op = ''D'') '
                 'FROM (SELECT storagelab_seq, %s AS op FROM %s ORDER BY storagelab_seq LIMIT $1) x',
                 CASE WHEN kl IS NULL THEN 'storagelab_op' ELSE 'NULL::"char"' END, d->>'log')
    INTO ids, ndel USING batch_rows;
  IF ids IS NULL THEN
    RETURN 0;
  END IF;
  IF kl IS NOT NULL AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.confrelid = (d->>'target')::regclass AND c.contype = 'f') THEN
    -- upsert, then delete the keys gone from the source: a row of the
    -- target that other tables reference is never deleted and inserted again
    SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
       AND a.attidentity <> 'a' AND NOT a.attname::text IN (SELECT jsonb_array_elements_text(d->'key'));
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))\n ON CONFLICT (%s) DO %s',
                   d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING ids;
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s) '
                   'AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))',
                   d->>'target', kl, d->>'log', tk, lk, d->>'source',
                   (SELECT string_agg('s.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k), lk)
      USING ids;
  ELSIF kl IS NOT NULL THEN
    -- nothing references the target: delete the keys, copy them again
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s)',
                   d->>'target', kl, d->>'log', tk, lk)
      USING ids;
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING ids;
  ELSE
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.storagelab_row) '
                   'WHERE l.storagelab_seq = ANY ($1) AND l.storagelab_op = ''I'' ORDER BY l.storagelab_seq', d->>'target', cols, d->>'log')
      USING ids;
    IF ndel > 0 THEN
    EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                   'FROM %1$s t WHERE to_jsonb(t) IN (SELECT storagelab_row FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')) c '
                   'JOIN (SELECT storagelab_row AS r, count(*) AS n FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'' GROUP BY storagelab_row) w ON w.r = c.j AND c.n <= w.n)',
                   d->>'target', d->>'log')
      USING ids;
    END IF;
  END IF;
  EXECUTE format('DELETE FROM %s WHERE storagelab_seq = ANY ($1)', d->>'log') USING ids;
  RETURN cardinality(ids);
END
$fn$;

-- copy_swap script header: a warning when a publication FOR ALL TABLES or FOR
-- TABLES IN SCHEMA would publish the new tables.
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[],
                                                                      relations regclass[], column_names name[],
                                                                      function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables jsonb;
  mid    text;
  s      text;
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  IF EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'widened_function') THEN
    RAISE EXCEPTION 'mode copy_swap does not widen functions'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT string_agg(x.identity, ', ') FROM unnest(objs) x WHERE x.kind = 'widened_function'),
            HINT = 'Use mode ''blocking'' or ''online'', or function_hazards => ''accept'' after fixing the functions.';
  END IF;
  IF to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NULL THEN
    RAISE EXCEPTION 'mode copy_swap needs the rewrite engine, which this installation lacks'
      USING ERRCODE = 'feature_not_supported', HINT = 'Use mode ''online'' or ''blocking''.';
  END IF;
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  s := format(E'-- storagelab %s: INT to BIGINT migration (mode copy_swap), migration id %s\n',
              (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || CASE WHEN EXISTS (SELECT 1 FROM pg_publication p
                          WHERE p.puballtables OR EXISTS (
                                  SELECT 1 FROM pg_publication_namespace pn JOIN pg_class c ON c.relnamespace = pn.pnnspid
                                   WHERE pn.pnpubid = p.oid AND c.oid IN (SELECT (t->>'relation')::regclass FROM jsonb_array_elements(tables) t)))
            THEN E'-- WARNING: a publication FOR ALL TABLES or FOR TABLES IN SCHEMA publishes the new tables storagelab_new_<OID>:\n'
              || E'--   the copy and the replay are sent as INSERTs into tables the subscribers lack, and their apply stops.\n'
              || E'--   Take the tables out of it first (see doc/bigint_migration.md, copy_swap caveats), or use mode online.\n'
            ELSE '' END
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n\\set ON_ERROR_STOP on\n'
    || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
    || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
    || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
    || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
    || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
    || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
          FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
    || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
    || E'\\if :ph_bad\n'
    || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s || storagelab_internal.rewrite_online_phases(tables, mid);
END
$fn$;

-- ---------------------------------------------------------------------------
-- Layout scripts: a fingerprint of the table's indexes, constraints, triggers,
-- policies, privileges and dependent objects, re-checked under the locks
-- (storagelab_internal.rewrite_fingerprint, layout_recheck).
-- ---------------------------------------------------------------------------

-- A fingerprint (md5) of everything a rewrite moves from a table to its
-- copy: indexes, constraints, triggers, policies, privileges, row security,
-- replica identity, storage options, comments, publications, and every
-- object that depends on the table (views, rules, functions of its row
-- type, other tables' foreign keys; by identity, not OID, so that another
-- table's rewrite re-creating them changes nothing; one line per object, as
-- a re-created view may depend on other columns).  A script records it when written and
-- compares it under its locks, so an object created in between is never
-- dropped silently.
CREATE FUNCTION storagelab_internal.rewrite_fingerprint(relation regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT md5(concat_ws(E'\n',
    (SELECT string_agg(DISTINCT pg_get_indexdef(i.indexrelid), E'\n') FROM pg_index i WHERE i.indrelid = $1),
    (SELECT string_agg(DISTINCT c.conname || ' ' || pg_get_constraintdef(c.oid), E'\n')
       FROM pg_constraint c WHERE c.conrelid = $1 OR c.confrelid = $1),
    (SELECT string_agg(DISTINCT pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text, E'\n') FROM pg_trigger t WHERE t.tgrelid = $1 AND NOT t.tgisinternal),
    (SELECT string_agg(DISTINCT concat_ws(' ', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                 pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)), E'\n')
       FROM pg_policy p WHERE p.polrelid = $1),
    (SELECT concat_ws(' ', c.relacl::text, c.relrowsecurity, c.relforcerowsecurity, c.relreplident, c.reloptions::text)
       FROM pg_class c WHERE c.oid = $1),
    (SELECT string_agg(DISTINCT a.attname || ' ' || a.attacl::text, E'\n')
       FROM pg_attribute a WHERE a.attrelid = $1 AND a.attacl IS NOT NULL),
    (SELECT string_agg(DISTINCT d.objsubid || ' ' || d.description, E'\n')
       FROM pg_description d WHERE d.objoid = $1 AND d.classoid = 'pg_class'::regclass),
    (SELECT string_agg(DISTINCT p.prpubid::text, E'\n') FROM pg_publication_rel p WHERE p.prrelid = $1),
    (SELECT string_agg(DISTINCT concat_ws(' ', o.type, o.identity, d.deptype), E'\n')
       FROM pg_depend d CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
      WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = $1
        -- foreign keys' own triggers are named by OID; their constraints are counted
        AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE d.classid = 'pg_trigger'::regclass AND t.oid = d.objid AND t.tgisinternal))))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_fingerprint(regclass) IS
  'md5 of everything a rewrite moves (indexes, constraints, triggers, policies, privileges, options, comments, publications, dependent objects): compared under a script''s locks with the value recorded when it was written';

-- The in-transaction checks of a blocking script, run once its locks are
-- held: the table is still the one the script was written for (OID,
-- columns and types), and every changed column's values still fit.
CREATE OR REPLACE FUNCTION storagelab_internal.layout_recheck(relation regclass, changes jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  qn    text := storagelab_internal.bigint_migration_qname(relation);
  cols  text;
  body  text;
  e     jsonb;
BEGIN
  SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum) INTO cols
    FROM pg_attribute a WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped;
  -- columns win over the block's variable (a column may be named v)
  body := format(E'#variable_conflict use_column\nDECLARE\n  v text;\nBEGIN\n'
                 '  IF to_regclass(%1$L) IS DISTINCT FROM %2$s::oid::regclass\n'
                 '     OR (SELECT string_agg(format(''%%I %%s'', a.attname, format_type(a.atttypid, a.atttypmod)), '', '' ORDER BY a.attnum)\n'
                 '           FROM pg_attribute a WHERE a.attrelid = %2$s AND a.attnum > 0 AND NOT a.attisdropped) IS DISTINCT FROM %3$L THEN\n'
                 '    RAISE EXCEPTION ''table %% changed since this script was written'', %1$L\n'
                 '      USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n'
                 '  END IF;\n'
                 '  IF storagelab_internal.rewrite_fingerprint(%2$s) IS DISTINCT FROM %4$L THEN\n'
                 '    RAISE EXCEPTION ''the indexes, constraints, triggers, policies, privileges or dependent objects of table %% changed since this script was written'', %1$L\n'
                 '      USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again: this one would drop what was added since.'';\n'
                 '  END IF;\n', qn, relation::oid, cols, storagelab_internal.rewrite_fingerprint(relation));
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    body := body || format(E'  SELECT x.%1$I::text INTO v FROM ONLY %2$s x WHERE x.%1$I IS NOT NULL AND %3$s LIMIT 1;\n'
                           '  IF FOUND THEN\n'
                           '    RAISE EXCEPTION ''a value of column %%.%% does not fit type %%'', %2$L, %4$L, %5$L\n'
                           '      USING ERRCODE = ''data_exception'', DETAIL = format(''The value %%s would not be kept as it is.'', quote_literal(v)),\n'
                           '            HINT = ''Generate the script again: its pre-flight names the columns to leave as they are.'';\n'
                           '  END IF;\n',
                           e->>'column_name', qn, storagelab_internal.layout_misfit('x.' || quote_ident(e->>'column_name'), e->>'from', e->>'to'),
                           quote_ident(e->>'column_name'), e->>'to');
  END LOOP;
  RETURN E'-- The table is still as it was when this script was written; every value fits its new type.\n'
         || 'DO ' || storagelab_internal.dollar_quote(E'\n' || body || E'END\n') || E';\n\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_recheck(regclass, jsonb) IS
  'the DO block of a blocking layout script that checks, under its locks, that the table is unchanged (OID, columns, types, storagelab_internal.rewrite_fingerprint) and every changed column''s values fit';

-- ---------------------------------------------------------------------------
-- The rewrite engine rebuilds partitioned tables with their partitions (any
-- depth, DEFAULT partitions, partition-only indexes, constraints, options;
-- partitioned indexes attached) and inheritance parents with their children;
-- online rewrites log, copy and replay each table of the tree, and disable
-- the old tables' triggers between swap and cleanup.
-- Copied from the install parts by
--   scripts/upgrade-section.sh partitions extension/storagelab--1.0--1.1.sql \
--     extension/60_rewrite_model.sql:storagelab_internal.rewrite_members \
--     extension/60_rewrite_model.sql:storagelab_internal.rewrite_member_columns \
--     extension/60_rewrite_model.sql:storagelab_internal.rewrite_refuse \
--     extension/60_rewrite_model.sql:storagelab_internal.rewrite_dependents \
--     extension/60_rewrite_create.sql:storagelab_internal.rewrite_table_settings \
--     extension/60_rewrite_create.sql:storagelab_internal.rewrite_storage_clause \
--     extension/60_rewrite_create.sql:storagelab_internal.rewrite_create_member \
--     extension/60_rewrite_create.sql:storagelab_internal.rewrite_create \
--     extension/60_rewrite_index.sql:storagelab_internal.rewrite_index_def \
--     extension/60_rewrite_index.sql:storagelab_internal.rewrite_index_name \
--     extension/60_rewrite_index.sql:storagelab_internal.rewrite_index_table \
--     extension/60_rewrite_index.sql:storagelab_internal.rewrite_index \
--     extension/60_rewrite_swap.sql:storagelab_internal.rewrite_foreign_keys \
--     extension/60_rewrite_swap.sql:storagelab_internal.rewrite_own_objects \
--     extension/23_bigint_blocking.sql:storagelab_internal.bigint_migration_view_checks \
--     extension/23_bigint_blocking.sql:storagelab_internal.bigint_migration_blocking_preflight \
--     extension/25_bigint_online.sql:storagelab_internal.bigint_migration_online_swap_begin \
--     extension/60_rewrite_swap.sql:storagelab_internal.rewrite_swap \
--     extension/60_rewrite_statements.sql:storagelab_internal.rewrite_statements \
--     extension/61_layout_migration.sql:storagelab_internal.layout_preflight \
--     extension/61_layout_migration.sql:storagelab_internal.rewrite_tree_fingerprint \
--     extension/61_layout_migration.sql:storagelab_internal.layout_recheck \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.bigint_copy_swap_tables \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_dirs \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_old_triggers \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_check_rollback \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_phases \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.bigint_migration_copy_swap_script
-- (run it again after changing any of them).
-- ---------------------------------------------------------------------------
-- BEGIN generated section partitions
-- from extension/60_rewrite_model.sql: storagelab_internal.rewrite_members
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_members(relids oid[])
RETURNS TABLE (root oid, relid oid, parent oid, level int, leaf boolean)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  WITH RECURSIVE tree(n, root, relid, parent, level) AS (
    SELECT r.n, r.root, r.root, NULL::oid, 0 FROM unnest($1) WITH ORDINALITY r(root, n)
    UNION ALL
    SELECT t.n, t.root, i.inhrelid, i.inhparent, t.level + 1
      FROM tree t JOIN pg_inherits i ON i.inhparent = t.relid JOIN pg_class c ON c.oid = i.inhrelid
     WHERE c.relkind IN ('r', 'p', 'f') AND t.level < 100
  )
  SELECT t.root, t.relid, t.parent, t.level, c.relkind <> 'p'
    FROM tree t JOIN pg_class c ON c.oid = t.relid
   ORDER BY t.n, t.level, t.relid
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_members(oid[]) IS
  'the tables a rewrite rebuilds: each table given and its partitions or inheritance children at every level, parents first (root, parent, level, leaf: holds rows)';

-- from extension/60_rewrite_model.sql: storagelab_internal.rewrite_member_columns
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_member_columns(member oid, root oid, atts int2[], types text[],
                                                           OUT atts int2[], OUT types text[])
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT array_agg(x.attnum ORDER BY x.n), array_agg(x.typ ORDER BY x.n)
    FROM (SELECT m.attnum, u.typ, u.n
            FROM unnest($3, $4) WITH ORDINALITY u(att, typ, n)
            JOIN pg_attribute r ON r.attrelid = $2 AND r.attnum = u.att
            JOIN pg_attribute m ON m.attrelid = $1 AND m.attname = r.attname AND NOT m.attisdropped
          UNION ALL
          SELECT a.attnum, format_type(a.atttypid, a.atttypmod), cardinality($3) + a.attnum
            FROM pg_attribute a
           WHERE $1 <> $2 AND a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
             AND NOT EXISTS (SELECT 1 FROM pg_attribute r WHERE r.attrelid = $2 AND r.attname = a.attname
                               AND r.attnum > 0 AND NOT r.attisdropped)) x
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_member_columns(oid, oid, int2[], text[]) IS
  'a partition''s or inheritance child''s attnums and new types for its root''s (matched by column name), then a child''s own columns with their types';

-- from extension/60_rewrite_model.sql: storagelab_internal.rewrite_refuse
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_refuse(relids oid[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r record;
  m record;
  x record;
BEGIN
  FOR r IN SELECT c.oid, c.relkind, c.relispartition FROM pg_class c WHERE c.oid = ANY (relids) ORDER BY c.oid LOOP
    IF r.relispartition THEN
      RAISE EXCEPTION 'the rewrite engine rebuilds a partition only with its partitioned table'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s is a partition of %s.', r.oid::regclass, pg_partition_root(r.oid)),
              HINT = format('Give the partitioned table %s: every partition is rebuilt with it.', pg_partition_root(r.oid));
    END IF;
    FOR x IN SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = r.oid ORDER BY i.inhseqno LIMIT 1 LOOP
      RAISE EXCEPTION 'the rewrite engine rebuilds an inheritance child only with its parent'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s inherits from %s.', r.oid::regclass, x.inhparent::regclass),
              HINT = 'Give the topmost parent: its children are rebuilt with it.';
    END LOOP;
    IF r.relkind NOT IN ('r', 'p') THEN
      RAISE EXCEPTION '% is not a table', r.oid::regclass
        USING ERRCODE = 'wrong_object_type', HINT = 'Give an ordinary or partitioned table.';
    END IF;
    FOR m IN
      SELECT c.oid, c.relkind, c.relispartition, c.reloftype, c.reltype, t.typarray AS arraytype, p.root
        FROM storagelab_internal.rewrite_members(ARRAY[r.oid]) p
        JOIN pg_class c ON c.oid = p.relid JOIN pg_type t ON t.oid = c.reltype
    LOOP
      IF m.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION 'the rewrite engine does not rewrite foreign partitions or children'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s, a %s of %s, is a foreign table.', m.oid::regclass,
                                CASE WHEN m.relispartition THEN 'partition' ELSE 'child' END, m.root::regclass),
                HINT = 'Detach it first and attach it to the new table after the rewrite, or change the types with ALTER TABLE.';
      END IF;
      IF (SELECT count(*) FROM pg_inherits i WHERE i.inhrelid = m.oid) > 1 THEN
        RAISE EXCEPTION 'the rewrite engine does not support multiple inheritance'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s inherits from %s.', m.oid::regclass,
                                (SELECT string_agg(i.inhparent::regclass::text, ', ' ORDER BY i.inhseqno) FROM pg_inherits i WHERE i.inhrelid = m.oid)),
                HINT = 'Change the types with ALTER TABLE (it recurses to the children).';
      END IF;
      IF m.reloftype <> 0 THEN
        RAISE EXCEPTION 'the rewrite engine does not support typed tables'
          USING ERRCODE = 'feature_not_supported', DETAIL = format('%s is of type %s.', m.oid::regclass, m.reloftype::regtype),
                HINT = 'Change the types with ALTER TABLE.';
      END IF;
      IF EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = m.oid AND d.deptype = 'e') THEN
        RAISE EXCEPTION 'the rewrite engine does not rewrite tables of extensions'
          USING ERRCODE = 'feature_not_supported', DETAIL = format('%s belongs to an extension.', m.oid::regclass),
                HINT = 'Leave the extension''s tables to the extension.';
      END IF;
      -- the row type (and its array type) in another table's column, a type (functions: rewrite_dependents)
      FOR x IN
        SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, format_type(d.refobjid, NULL) AS typ
          FROM pg_depend d
         WHERE d.refclassid = 'pg_type'::regclass AND d.refobjid IN (m.reltype, m.arraytype)
           AND d.deptype = 'n' AND d.classid NOT IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
         ORDER BY 1 LIMIT 1
      LOOP
        RAISE EXCEPTION 'the rewrite engine cannot rewrite a table whose row type is used elsewhere'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s uses type %s; the new table has a row type of its own.', x.what, x.typ),
                HINT = 'Change the types with ALTER TABLE, or drop that object first and re-create it afterwards.';
      END LOOP;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_refuse(oid[]) IS
  'raises 0A000 naming the object when the rewrite engine cannot rewrite one of the tables (a partition or inheritance child given alone, multiple inheritance, a foreign partition or child, typed table, extension member, row type used by a column or type), 42809 for a relation that is not a table';

-- from extension/60_rewrite_model.sql: storagelab_internal.rewrite_dependents
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_dependents(relids oid[])
RETURNS TABLE (depth int, classid oid, objid oid, identity text, drop_sql text, create_sql text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  frontier oid[] := relids;
  next_f   oid[];
  lvl      int := 0;
  d        record;
  fdep     record;
  o        storagelab.bigint_migration_object;
  found_rows storagelab.bigint_migration_object[] := '{}';
BEGIN
  -- the partitions too: objects that follow a partition, and its own objects
  relids := ARRAY(SELECT m.relid FROM storagelab_internal.rewrite_members(relids) m);
  frontier := relids;
  WHILE cardinality(frontier) > 0 LOOP
    lvl := lvl + 1;
    IF lvl > 100 THEN
      RAISE EXCEPTION 'views nested too deep' USING ERRCODE = 'feature_not_supported',
        HINT = 'The engine follows at most 100 levels of views over views.';
    END IF;
    next_f := '{}';
    FOR d IN
      SELECT DISTINCT dep.classid, dep.objid, dep.refclassid, dep.refobjid,
             w.ev_class, w.rulename, p.polrelid, c.contype, c.conrelid, c.confrelid
        FROM pg_depend dep
        LEFT JOIN pg_rewrite w ON dep.classid = 'pg_rewrite'::regclass AND w.oid = dep.objid
        LEFT JOIN pg_policy p ON dep.classid = 'pg_policy'::regclass AND p.oid = dep.objid
        LEFT JOIN pg_constraint c ON dep.classid = 'pg_constraint'::regclass AND c.oid = dep.objid
       WHERE dep.deptype = 'n'
         AND (dep.refclassid = 'pg_class'::regclass AND dep.refobjid = ANY (frontier)
              -- a function taking or returning a table's or view's rows depends on its row type
              OR dep.refclassid = 'pg_type'::regclass AND dep.classid = 'pg_proc'::regclass
                 AND dep.refobjid IN (SELECT v.reltype FROM pg_class v WHERE v.oid = ANY (frontier)
                                      UNION ALL
                                      SELECT t.typarray FROM pg_class v JOIN pg_type t ON t.oid = v.reltype
                                       WHERE v.oid = ANY (frontier)))
         -- the tables' own objects (defaults and generated columns, constraints,
         -- triggers, indexes, statistics) depending on their columns
         AND NOT CASE dep.classid
                   WHEN 'pg_attrdef'::regclass THEN (SELECT x.adrelid FROM pg_attrdef x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_constraint'::regclass THEN c.conrelid = ANY (relids) AND c.contype <> 'f'
                   WHEN 'pg_trigger'::regclass THEN (SELECT x.tgrelid FROM pg_trigger x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_statistic_ext'::regclass THEN (SELECT x.stxrelid FROM pg_statistic_ext x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_class'::regclass THEN (SELECT x.indrelid FROM pg_index x WHERE x.indexrelid = dep.objid) = ANY (relids)
                   WHEN 'pg_publication_rel'::regclass THEN (SELECT x.prrelid FROM pg_publication_rel x WHERE x.oid = dep.objid) = ANY (relids)
                   ELSE false END
       ORDER BY dep.classid, dep.objid
    LOOP
      o := NULL;
      IF d.classid = 'pg_rewrite'::regclass THEN
        CONTINUE WHEN d.ev_class = ANY (relids) OR d.ev_class = d.refobjid;   -- a table's own rule, a view's own query
        o := (storagelab_internal.bigint_migration_dep_rewrite(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
        IF o.kind IN ('view', 'materialized_view') THEN
          next_f := next_f || d.ev_class;
          o.create_sql := o.create_sql || storagelab_internal.rewrite_view_parts(d.ev_class);
        END IF;
      ELSIF d.classid = 'pg_policy'::regclass THEN
        CONTINUE WHEN d.polrelid = ANY (relids);                               -- a table's own policy
        o := (storagelab_internal.bigint_migration_dep_policy(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
      ELSIF d.classid = 'pg_proc'::regclass THEN
        o := (storagelab_internal.bigint_migration_dep_function(d.classid, d.objid, 0, 'n', 'pg_class'::regclass,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
        -- the function is dropped and re-created with the new row type: a
        -- view (or anything else) over it would make its DROP fail in the swap
        FOR fdep IN
          SELECT coalesce((SELECT CASE k.relkind WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' ELSE 'a rule of ' END
                                  || k.oid::regclass::text
                             FROM pg_rewrite w JOIN pg_class k ON k.oid = w.ev_class
                            WHERE fd.classid = 'pg_rewrite'::regclass AND w.oid = fd.objid),
                          pg_describe_object(fd.classid, fd.objid, fd.objsubid)) AS what
            FROM pg_depend fd
           WHERE fd.refclassid = 'pg_proc'::regclass AND fd.refobjid = d.objid AND fd.deptype = 'n'
           ORDER BY 1 LIMIT 1
        LOOP
          RAISE EXCEPTION 'the rewrite engine cannot move an object over a function of a table''s rows'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('%s uses function %s, which takes or returns the rows of %s; the function is re-created with the new table''s row type.',
                                  fdep.what, d.objid::regprocedure, CASE WHEN d.refclassid = 'pg_type'::regclass THEN format_type(d.refobjid, NULL)
                                                                      ELSE d.refobjid::regclass::text END),
                  HINT = format('Drop %s before the script and re-create it afterwards.', fdep.what);
        END LOOP;
      ELSIF d.classid = 'pg_constraint'::regclass AND d.contype = 'f' THEN
        CONTINUE;                                                              -- foreign keys: the swap phase
      END IF;
      IF o.kind IS NULL OR o.kind = 'blocker' THEN
        RAISE EXCEPTION 'the rewrite engine cannot move an object that depends on a table it rewrites'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s depends on %s.', pg_describe_object(d.classid, d.objid, 0),
                                pg_describe_object('pg_class'::regclass, d.refobjid, 0)),
                HINT = 'Drop it before the rewrite and re-create it afterwards.';
      END IF;
      IF o.kind IN ('view', 'materialized_view') THEN
        o.classid := 'pg_class'::regclass; o.objid := d.ev_class;
      ELSE
        o.classid := d.classid; o.objid := d.objid;
      END IF;
      o.depth := lvl;
      found_rows := found_rows || o;
    END LOOP;
    frontier := next_f;
  END LOOP;
  -- an object reached on several levels is re-created after the deepest;
  -- a rule of a view that is re-created goes with its view
  RETURN QUERY
    SELECT max(f.depth), f.classid, f.objid, min(f.identity), min(f.drop_sql), min(f.create_sql)
      FROM unnest(found_rows) f
     WHERE f.kind <> 'rule'
        OR (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = f.objid)
           NOT IN (SELECT v.objid FROM unnest(found_rows) v WHERE v.kind IN ('view', 'materialized_view'))
     GROUP BY f.classid, f.objid
     ORDER BY 1, 2, 3;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_dependents(oid[]) IS
  'objects outside the tables that follow them by OID (views and materialized views over them, level by level, rules and policies of other tables, functions with an SQL-standard body or of the tables'' rows): depth, identity, the SQL that drops and re-creates each; refuses (0A000) any other dependent, and a view or other object over such a function';

-- from extension/60_rewrite_create.sql: storagelab_internal.rewrite_table_settings
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_table_settings(rel oid, newq text, atts int2[], types text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  stmts  text[] := '{}';
  col    record;
BEGIN
  SELECT c.relowner, c.relacl, obj_description(c.oid, 'pg_class') AS descr INTO t FROM pg_class c WHERE c.oid = rel;
  FOR col IN
    SELECT a.attname, a.attstorage, ot.typstorage AS old_default, nt.typstorage AS new_default, nt.typlen AS new_len,
           a.attstattarget::int AS stattarget, a.attacl, col_description(rel, a.attnum) AS descr,
           -- the options ALTER COLUMN SET takes (n_distinct, n_distinct_inherited)
           (SELECT array_agg(o ORDER BY o) FROM unnest(a.attoptions) o WHERE o ~ '^n_distinct(_inherited)?=') AS attoptions
      FROM unnest(atts, types) WITH ORDINALITY u(att, typ, n)
      JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = u.att
      JOIN pg_type ot ON ot.oid = a.atttypid
      JOIN pg_type nt ON nt.oid = to_regtype(u.typ)
     ORDER BY u.n
  LOOP
    IF col.attstorage <> col.old_default AND col.new_len = -1 AND col.new_default <> 'p' THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE %s', newq, col.attname,
                               CASE col.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL'
                                                 WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END);
    END IF;
    IF coalesce(col.stattarget, -1) >= 0 THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', newq, col.attname, col.stattarget);
    END IF;
    IF col.attoptions IS NOT NULL THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', newq, col.attname,
                               storagelab_internal.rewrite_options(col.attoptions));
    END IF;
    IF col.descr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON COLUMN %s.%I IS %L', newq, col.attname, col.descr);
    END IF;
  END LOOP;
  stmts := stmts || format('ALTER TABLE %s OWNER TO %I', newq, pg_get_userbyid(t.relowner));
  IF t.descr IS NOT NULL THEN
    stmts := stmts || format('COMMENT ON TABLE %s IS %L', newq, t.descr);
  END IF;
  -- privileges: the table's (the same statements as for a re-created view) and its columns'
  stmts := stmts || array_remove(regexp_split_to_array(rtrim(
             storagelab_internal.bigint_migration_acl_sql('TABLE', newq, t.relacl, t.relowner), E';\n'), E';\n'), '');
  SELECT stmts || coalesce(array_agg(format('GRANT %s (%I) ON TABLE %s TO %s%s', x.privilege_type, a.attname, newq,
                                            CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
                                            CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                                     ORDER BY a.attnum, x.grantee, x.privilege_type), '{}')
    INTO stmts
    FROM pg_attribute a, aclexplode(a.attacl) x
   WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_table_settings(oid, text, int2[], text[]) IS
  'statements giving a new table the old one''s column settings (storage, statistics target, options, comments), owner, comment and privileges (table and columns)';

-- from extension/60_rewrite_create.sql: storagelab_internal.rewrite_storage_clause
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_storage_clause(rel oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN c.reloptions IS NOT NULL OR tc.reloptions IS NOT NULL
              THEN ' WITH (' || concat_ws(', ', storagelab_internal.rewrite_options(c.reloptions),
                                          storagelab_internal.rewrite_options(tc.reloptions, 'toast.')) || ')'
              ELSE '' END
      || CASE WHEN c.reltablespace <> 0
              THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
              WHEN c.relispartition AND EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                                                 WHERE i.inhrelid = c.oid AND p.reltablespace <> 0)
              THEN format(' TABLESPACE %I', (SELECT s.spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = d.dattablespace
                                              WHERE d.datname = current_database()))
              ELSE '' END
    FROM pg_class c LEFT JOIN pg_class tc ON tc.oid = c.reltoastrelid
   WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_storage_clause(oid) IS
  'the WITH (reloptions, toast.reloptions) and TABLESPACE clauses of a new table for an old one (a partition in the default tablespace under a parent in another names it)';

-- from extension/60_rewrite_create.sql: storagelab_internal.rewrite_create_member
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_create_member(member oid, root oid, atts int2[], types text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  cols   record;
  newq   text;
  stmts  text[];
  r      record;
BEGIN
  SELECT c.relkind, c.relpersistence, c.relispartition, n.nspname, am.amname, i.inhparent AS parent,
         format('%I.%I', pn.nspname, storagelab_internal.rewrite_name('new', i.inhparent)) AS parentq,
         pg_get_expr(c.relpartbound, c.oid) AS bound
    INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am am ON am.oid = c.relam
    JOIN pg_inherits i ON i.inhrelid = c.oid JOIN pg_class pc ON pc.oid = i.inhparent
    JOIN pg_namespace pn ON pn.oid = pc.relnamespace
   WHERE c.oid = member;
  newq := format('%I.%I', t.nspname, storagelab_internal.rewrite_name('new', member));
  SELECT * INTO cols FROM storagelab_internal.rewrite_member_columns(member, root, atts, types);
  stmts := ARRAY[format('CREATE %sTABLE %s %s%s%s%s',
                        CASE t.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END, newq,
                        CASE WHEN t.relispartition THEN format('PARTITION OF %s %s', t.parentq, t.bound)
                             -- a child: its own columns, after the inherited ones
                             ELSE format(E'(\n    %s\n) INHERITS (%s)',
                                         coalesce((SELECT string_agg(storagelab_internal.rewrite_column_def(member, a.attnum,
                                                                       format_type(a.atttypid, a.atttypmod)), E',\n    ' ORDER BY a.attnum)
                                                     FROM pg_attribute a WHERE a.attrelid = member AND a.attnum = ANY (cols.atts)
                                                      AND NOT EXISTS (SELECT 1 FROM pg_attribute pa WHERE pa.attrelid = t.parent
                                                                        AND pa.attname = a.attname AND NOT pa.attisdropped)), ''),
                                         t.parentq) END,
                        CASE WHEN t.relkind = 'p' THEN ' PARTITION BY ' || pg_get_partkeydef(member) ELSE '' END,
                        CASE WHEN t.relkind = 'r' AND t.amname <> 'heap' THEN format(' USING %I', t.amname) ELSE '' END,
                        storagelab_internal.rewrite_storage_clause(member))];
  -- NOT NULL and defaults of its own (a partition or child takes its parent's)
  FOR r IN
    SELECT a.attname, a.attnotnull AND NOT pa.attnotnull AS own_not_null,
           storagelab_internal.bigint_migration_not_null_name(member, a.attnum) AS not_null_name,
           pg_get_expr(d.adbin, d.adrelid) AS def, pg_get_expr(pd.adbin, pd.adrelid) AS parent_def
      FROM pg_attribute a
      JOIN pg_attribute pa ON pa.attrelid = t.parent AND pa.attname = a.attname AND NOT pa.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_attrdef pd ON pd.adrelid = pa.attrelid AND pd.adnum = pa.attnum
     WHERE a.attrelid = member AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' AND a.attidentity = ''
     ORDER BY a.attnum
  LOOP
    IF r.own_not_null THEN
      -- under its name where NOT NULL is a constraint (PostgreSQL 18)
      stmts := stmts || CASE WHEN r.not_null_name IS NOT NULL
                             THEN format('ALTER TABLE %s ADD CONSTRAINT %I NOT NULL %I', newq, r.not_null_name, r.attname)
                             ELSE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', newq, r.attname) END;
    END IF;
    IF r.def IS DISTINCT FROM r.parent_def THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I %s', newq, r.attname,
                               coalesce('SET DEFAULT ' || r.def, 'DROP DEFAULT'));
    END IF;
  END LOOP;
  -- valid CHECK constraints of its own (NOT VALID ones: phase index)
  SELECT stmts || coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, k.conname, pg_get_constraintdef(k.oid))
                                     ORDER BY k.conname), '{}')
    INTO stmts
    FROM pg_constraint k WHERE k.conrelid = member AND k.contype = 'c' AND k.convalidated AND k.coninhcount = 0;
  RETURN stmts || storagelab_internal.rewrite_table_settings(member, newq, cols.atts, cols.types);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_create_member(oid, oid, int2[], text[]) IS
  'phase create of the rewrite engine for one partition (PARTITION OF the new parent, the old bound and partition key) or inheritance child (its own columns, INHERITS the new parent): storagelab_new_<OID>, storage options, its own NOT NULL, defaults and CHECK constraints, settings, owner, comments, privileges';

-- from extension/60_rewrite_create.sql: storagelab_internal.rewrite_create
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_create(rel oid, atts int2[], types text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  newq   text;
  defs   text[];
  stmts  text[];
  m      record;
BEGIN
  SELECT c.relname, n.nspname, c.relpersistence, c.relkind, am.amname
    INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am am ON am.oid = c.relam
   WHERE c.oid = rel;
  newq := format('%I.%I', t.nspname, storagelab_internal.rewrite_name('new', rel));
  SELECT array_agg(storagelab_internal.rewrite_column_def(rel, u.att, u.typ) ORDER BY u.n) INTO defs
    FROM unnest(atts, types) WITH ORDINALITY u(att, typ, n);
  -- valid CHECK constraints under their names (invalid ones: phase index)
  SELECT defs || coalesce(array_agg(format('CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid)) ORDER BY k.conname), '{}')
    INTO defs
    FROM pg_constraint k WHERE k.conrelid = rel AND k.contype = 'c' AND k.convalidated;
  stmts := ARRAY[format(E'CREATE %sTABLE %s (\n    %s\n)%s%s%s',
                        CASE t.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END,
                        newq, array_to_string(defs, E',\n    '),
                        CASE WHEN t.relkind = 'p' THEN ' PARTITION BY ' || pg_get_partkeydef(rel) ELSE '' END,
                        CASE WHEN t.amname <> 'heap' THEN format(' USING %I', t.amname) ELSE '' END,
                        storagelab_internal.rewrite_storage_clause(rel))]
           || storagelab_internal.rewrite_table_settings(rel, newq, atts, types);
  FOR m IN SELECT p.relid FROM storagelab_internal.rewrite_members(ARRAY[rel]) p WHERE p.relid <> rel LOOP
    stmts := stmts || storagelab_internal.rewrite_create_member(m.relid, rel, atts, types);
  END LOOP;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_create(oid, int2[], text[]) IS
  'phase create of the rewrite engine for one table: CREATE TABLE storagelab_new_<OID> in the new order and types with every property of the old table that fires nothing (a partitioned table with its partition key, then its partitions; an inheritance parent, then its children), then its column settings, owner, comments and privileges';

-- from extension/60_rewrite_index.sql: storagelab_internal.rewrite_index_def
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_index_def(idx oid, new_name name, new_table text)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix   record;
  def  text;
  head text;
BEGIN
  SELECT i.indisunique, i.indrelid, am.amname, CASE WHEN ic.relkind = 'I' THEN 'ONLY ' ELSE '' END AS only INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  def := storagelab_internal.bigint_migration_index_copy(pg_get_indexdef(idx), idx, new_name, false, '{}', '{}');
  head := format('CREATE %sINDEX %I ON %s%s USING %I (', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, new_name,
                 ix.only, storagelab_internal.bigint_migration_qname(ix.indrelid), ix.amname);
  IF NOT starts_with(def, head) THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  RETURN format('CREATE %sINDEX %I ON %s%s USING %I (', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, new_name,
                ix.only, new_table, ix.amname)
         || substr(def, length(head) + 1);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_def(oid, name, text) IS
  'DDL of an index rebuilt on another table under another name, every option kept (from pg_get_indexdef, the table name checked and replaced; a partitioned index ON ONLY the table)';

-- from extension/60_rewrite_index.sql: storagelab_internal.rewrite_index_name
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_index_name(idx oid)
RETURNS name
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.rewrite_name('new', coalesce(
           (SELECT k.oid FROM pg_constraint k JOIN pg_index i ON i.indexrelid = $1
             WHERE k.conindid = $1 AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x')), $1))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_name(oid) IS
  'the name of the new copy of an index: storagelab_new_<OID of its constraint, or of the index>';

-- from extension/60_rewrite_index.sql: storagelab_internal.rewrite_index_table
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_index_table(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  nspq   text;
  newq   text;
  stmts  text[] := '{}';
  r      record;
  iname  name;
  partitioned boolean;
BEGIN
  SELECT format('%I', n.nspname), format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), c.relkind = 'p'
    INTO nspq, newq, partitioned
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  FOR r IN
    SELECT i.indexrelid, k.oid AS conoid, k.contype, k.condeferrable, k.condeferred,
           obj_description(i.indexrelid, 'pg_class') AS idescr, obj_description(k.oid, 'pg_constraint') AS cdescr
      FROM pg_index i
      LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = rel AND k.contype IN ('p', 'u', 'x')
     WHERE i.indrelid = rel AND i.indisvalid
     ORDER BY i.indexrelid
  LOOP
    IF r.contype = 'x' OR r.contype IS NOT NULL AND partitioned THEN
      -- a partitioned table's key takes no index (USING INDEX): its definition carries every option it can have
      iname := storagelab_internal.rewrite_name('new', r.conoid);
      stmts := stmts || format('ALTER TABLE %s%s ADD CONSTRAINT %I %s', CASE WHEN partitioned THEN 'ONLY ' ELSE '' END,
                               newq, iname, pg_get_constraintdef(r.conoid));
    ELSIF r.contype IN ('p', 'u') THEN
      -- the index first, with every option, then the constraint on it (which renames the index to its own name)
      -- (named as the constraint: USING INDEX names the index after it)
      iname := storagelab_internal.rewrite_name('new', r.conoid);
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
      stmts := stmts || format('ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I%s', newq, iname,
                               CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, iname,
                               CASE WHEN r.condeferred THEN ' DEFERRABLE INITIALLY DEFERRED'
                                    WHEN r.condeferrable THEN ' DEFERRABLE' ELSE '' END);
    ELSE
      iname := storagelab_internal.rewrite_name('new', r.indexrelid);
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
    END IF;
    -- statistics targets of expression columns, comments
    SELECT stmts || coalesce(array_agg(format('ALTER INDEX %s.%I ALTER COLUMN %s SET STATISTICS %s',
                                              nspq, iname, a.attnum, a.attstattarget)
                                       ORDER BY a.attnum), '{}')
      INTO stmts
      FROM pg_attribute a WHERE a.attrelid = r.indexrelid AND coalesce(a.attstattarget::int, -1) >= 0;
    IF r.idescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON INDEX %s.%I IS %L', nspq, iname, r.idescr);
    END IF;
    IF r.cdescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON CONSTRAINT %I ON %s IS %L', iname, newq, r.cdescr);
    END IF;
  END LOOP;
  -- CHECK constraints that were not valid stay so; comments of the valid ones (created with the table)
  SELECT stmts || coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, k.conname, pg_get_constraintdef(k.oid))
                                     ORDER BY k.conname) FILTER (WHERE NOT k.convalidated AND k.coninhcount = 0), '{}')
               || coalesce(array_agg(format('COMMENT ON CONSTRAINT %I ON %s IS %L', k.conname, newq, obj_description(k.oid, 'pg_constraint'))
                                     ORDER BY k.conname) FILTER (WHERE obj_description(k.oid, 'pg_constraint') IS NOT NULL), '{}')
    INTO stmts
    FROM pg_constraint k WHERE k.conrelid = rel AND k.contype = 'c';
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_table(oid) IS
  'phase index of the rewrite engine for one table or partition: every valid index and primary key, unique and exclusion constraint of the old table on the new one (storagelab_new_<OID> names; ON ONLY a partitioned table), NOT VALID CHECK constraints, statistics targets and comments';

-- from extension/60_rewrite_index.sql: storagelab_internal.rewrite_index
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_index(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  stmts  text[] := '{}';
  member oid;
BEGIN
  FOR member IN SELECT p.relid FROM storagelab_internal.rewrite_members(ARRAY[rel]) p LOOP
    stmts := stmts || storagelab_internal.rewrite_index_table(member);
  END LOOP;
  SELECT stmts || coalesce(array_agg(format('ALTER INDEX %I.%I ATTACH PARTITION %I.%I',
                                            pn.nspname, storagelab_internal.rewrite_index_name(h.inhparent),
                                            cn.nspname, storagelab_internal.rewrite_index_name(h.inhrelid))
                                     ORDER BY m.level DESC, h.inhrelid), '{}')
    INTO stmts
    FROM storagelab_internal.rewrite_members(ARRAY[rel]) m
    JOIN pg_index i ON i.indrelid = m.relid AND i.indisvalid
    JOIN pg_inherits h ON h.inhrelid = i.indexrelid
    JOIN pg_index pi ON pi.indexrelid = h.inhparent AND pi.indisvalid
    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
    JOIN pg_class pc ON pc.oid = h.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index(oid) IS
  'phase index of the rewrite engine for one table and its partitions: every valid index and primary key, unique and exclusion constraint on the new tables, partitions'' indexes attached to their parents'' (deepest first), NOT VALID CHECK constraints, statistics targets and comments';

-- from extension/60_rewrite_swap.sql: storagelab_internal.rewrite_foreign_keys
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_foreign_keys(relids oid[])
RETURNS TABLE (conoid oid, direction text, conrelid oid, conname name, qrel text, def text,
               validated boolean, partitioned boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH m AS (SELECT array_agg(x.relid) AS rels FROM storagelab_internal.rewrite_members($1) x)
  SELECT k.oid, CASE WHEN k.conrelid = ANY (m.rels) THEN 'from' ELSE 'to' END, k.conrelid, k.conname,
         storagelab_internal.bigint_migration_qname(k.conrelid),
         regexp_replace(pg_get_constraintdef(k.oid), ' NOT VALID$', ''), k.convalidated, c.relkind = 'p' OR fc.relkind = 'p'
    FROM m, pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class fc ON fc.oid = k.confrelid
   WHERE k.contype = 'f' AND k.conparentid = 0 AND (k.conrelid = ANY (m.rels) OR k.confrelid = ANY (m.rels))
   ORDER BY k.conrelid, k.conname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_foreign_keys(oid[]) IS
  'the foreign keys from and to the rewritten tables (and their partitions) that the swap re-points, with their definitions (NOT VALID left out), whether they were validated and whether either side is partitioned (then added valid)';

-- from extension/60_rewrite_swap.sql: storagelab_internal.rewrite_own_objects
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_own_objects(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  cur    text;
  stmts  text[] := '{}';
  r      record;
BEGIN
  SELECT c.relname, n.nspname, c.relrowsecurity, c.relforcerowsecurity, c.relreplident INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  cur := format('%I.%I', t.nspname, t.relname);
  FOR r IN
    SELECT x.create_sql FROM (
      SELECT 1 AS k, g.oid, (storagelab_internal.bigint_migration_dep_trigger('pg_trigger'::regclass, g.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_trigger g WHERE g.tgrelid = rel AND NOT g.tgisinternal AND g.tgparentid = 0
      UNION ALL
      SELECT 2, w.oid, (storagelab_internal.bigint_migration_dep_rewrite('pg_rewrite'::regclass, w.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_rewrite w WHERE w.ev_class = rel AND w.rulename <> '_RETURN'
      UNION ALL
      SELECT 3, p.oid, (storagelab_internal.bigint_migration_dep_policy('pg_policy'::regclass, p.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_policy p WHERE p.polrelid = rel
      UNION ALL
      SELECT 4, pr.oid, (storagelab_internal.bigint_migration_dep_publication('pg_publication_rel'::regclass, pr.oid, 0, 'n',
               'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false)).o.create_sql
        FROM pg_publication_rel pr WHERE pr.prrelid = rel
      UNION ALL
      SELECT 5, s.oid, pg_get_statisticsobjdef(s.oid) || E';\n'
             || format(E'ALTER STATISTICS %I.%I OWNER TO %I;\n', sn.nspname, s.stxname, pg_get_userbyid(s.stxowner))
             || CASE WHEN coalesce(s.stxstattarget::int, -1) >= 0
                     THEN format(E'ALTER STATISTICS %I.%I SET STATISTICS %s;\n', sn.nspname, s.stxname, s.stxstattarget) ELSE '' END
             || CASE WHEN obj_description(s.oid, 'pg_statistic_ext') IS NULL THEN ''
                     ELSE format(E'COMMENT ON STATISTICS %I.%I IS %L;\n', sn.nspname, s.stxname,
                                 obj_description(s.oid, 'pg_statistic_ext')) END
        FROM pg_statistic_ext s JOIN pg_namespace sn ON sn.oid = s.stxnamespace WHERE s.stxrelid = rel
    ) x ORDER BY x.k, x.oid
  LOOP
    stmts := stmts || r.create_sql;
  END LOOP;
  IF t.relrowsecurity THEN stmts := stmts || format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', cur); END IF;
  IF t.relforcerowsecurity THEN stmts := stmts || format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', cur); END IF;
  stmts := stmts || CASE t.relreplident
                      WHEN 'f' THEN format('ALTER TABLE %s REPLICA IDENTITY FULL', cur)
                      WHEN 'n' THEN format('ALTER TABLE %s REPLICA IDENTITY NOTHING', cur)
                      WHEN 'i' THEN (SELECT format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', cur, ic.relname)
                                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                      WHERE i.indrelid = rel AND i.indisreplident) END;
  stmts := stmts || (SELECT format('ALTER TABLE %s CLUSTER ON %I', cur, ic.relname)
                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                      WHERE i.indrelid = rel AND i.indisclustered AND i.indisvalid);
  RETURN array_remove(stmts, NULL);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_own_objects(oid) IS
  'the statements that give the new table, once renamed, the old one''s triggers (enabled state, comments), rules, policies and row security, publication membership (column lists, row filters), statistics objects, replica identity and clustering index';

-- from extension/60_rewrite_swap.sql: storagelab_internal.rewrite_swap
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_swap(relids oid[], back boolean)
RETURNS TABLE (relid oid, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel  oid;
  r    record;
  s    text;
  -- the tables and their partitions, parents first
  members oid[] := ARRAY(SELECT m.relid FROM storagelab_internal.rewrite_members(relids) m);
BEGIN
  -- functions are re-created as they were, without checking their bodies (as pg_dump does)
  relid := NULL; statement := 'SET LOCAL check_function_bodies = off'; RETURN NEXT;
  -- 1. objects that follow the tables by OID, dependents first
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth DESC, classid, objid LOOP
    relid := NULL; statement := r.drop_sql; RETURN NEXT;
  END LOOP;
  -- 2. foreign keys of other tables referencing the component
  FOR r IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE direction = 'to' LOOP
    relid := r.conrelid; statement := format('ALTER TABLE %s DROP CONSTRAINT %I', r.qrel, r.conname); RETURN NEXT;
  END LOOP;
  -- 3. swap_back: what the new tables got in the swap and that is named in
  -- its schema (statistics objects) or lists them (publications)
  IF back THEN
    FOREACH rel IN ARRAY members LOOP
      FOR r IN
        SELECT format('ALTER PUBLICATION %I DROP TABLE %s', p.pubname, storagelab_internal.bigint_migration_qname(rel)) AS sql
          FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.prrelid = rel
        UNION ALL
        SELECT format('DROP STATISTICS %I.%I', sn.nspname, s2.stxname)
          FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace WHERE s2.stxrelid = rel
      LOOP
        relid := rel; statement := r.sql; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 4. renames; statistics objects of the old tables out of the way
  FOREACH rel IN ARRAY members LOOP
    FOREACH s IN ARRAY storagelab_internal.rewrite_renames(rel, back) LOOP
      relid := rel; statement := s; RETURN NEXT;
    END LOOP;
    FOR r IN SELECT s2.oid, sn.nspname, s2.stxname FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace
              WHERE s2.stxrelid = rel ORDER BY s2.oid LOOP
      relid := rel;
      statement := CASE WHEN back THEN format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, storagelab_internal.rewrite_name('old', r.oid), r.stxname)
                        ELSE format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, r.stxname, storagelab_internal.rewrite_name('old', r.oid)) END;
      RETURN NEXT;
    END LOOP;
  END LOOP;
  -- 5. foreign keys: the component's own on the new tables (swap only:
  -- the old tables keep theirs), then the other tables' again; NOT VALID
  -- (phase validate checks them) except those of or to partitioned tables
  -- (rewrite_foreign_keys), added valid
  FOR r IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE direction = 'to' OR NOT back LOOP
    relid := r.conrelid;
    statement := format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.qrel, r.conname, r.def,
                        CASE WHEN r.partitioned AND r.validated THEN '' ELSE ' NOT VALID' END);
    RETURN NEXT;
    IF obj_description(r.conoid, 'pg_constraint') IS NOT NULL THEN
      statement := format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.qrel, obj_description(r.conoid, 'pg_constraint'));
      RETURN NEXT;
    END IF;
  END LOOP;
  -- 6. the tables' own objects (swap only: the old tables keep theirs)
  IF NOT back THEN
    FOREACH rel IN ARRAY members LOOP
      FOREACH s IN ARRAY storagelab_internal.rewrite_own_objects(rel) LOOP
        relid := rel; statement := s; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 7. the objects of step 1 again, on whichever tables now have the names
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth, classid, objid LOOP
    relid := NULL; statement := r.create_sql; RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_swap(oid[], boolean) IS
  'phase swap (or swap_back) of the rewrite engine: dependents dropped, foreign keys of other tables dropped, tables and their indexes, constraints, identity sequences and statistics objects renamed, foreign keys added NOT VALID, the tables'' own objects given to the new tables (swap), dependents re-created';

-- from extension/60_rewrite_statements.sql: storagelab_internal.rewrite_statements
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_statements(tables jsonb, phase text)
RETURNS TABLE (ord int, relation regclass, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  relids oid[] := '{}';
  t      record;
  s      text;
  n      int := 0;
BEGIN
  IF phase IS NULL OR phase NOT IN ('create', 'copy', 'index', 'swap', 'validate', 'swap_back', 'cleanup', 'discard') THEN
    RAISE EXCEPTION 'unknown rewrite phase %', coalesce(quote_literal(phase), 'NULL')
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The phases are create, copy, index, swap, validate, swap_back, cleanup and discard.';
  END IF;
  FOR t IN
    SELECT c.relid, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
      FROM storagelab_internal.rewrite_columns(tables) c
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    relids := relids || t.relid;
  END LOOP;
  IF phase IN ('swap', 'swap_back') THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_swap(relids, phase = 'swap_back') LOOP
      n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(t.statement, ';\s*$', ''); RETURN NEXT;
    END LOOP;
  ELSIF phase = 'validate' THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE validated AND NOT partitioned LOOP
      n := n + 1; ord := n; relation := t.conrelid;
      statement := format('ALTER TABLE %s VALIDATE CONSTRAINT %I', t.qrel, t.conname);
      RETURN NEXT;
    END LOOP;
  ELSIF phase IN ('cleanup', 'discard') THEN
    ord := 1; relation := relids[1];
    -- every table of a tree: an inheritance child is not dropped with its parent
    SELECT format('DROP TABLE %s', string_agg(format('%I.%I', ns.nspname,
                    storagelab_internal.rewrite_name(CASE phase WHEN 'cleanup' THEN 'old' ELSE 'new' END, c.oid)), ', ' ORDER BY u.n))
      INTO statement
      FROM storagelab_internal.rewrite_members(relids) WITH ORDINALITY u(root, r, parent, level, leaf, n)
      JOIN pg_class c ON c.oid = u.r JOIN pg_namespace ns ON ns.oid = c.relnamespace;
    RETURN NEXT;
  ELSIF phase = 'copy' THEN
    -- one statement per table that holds rows (each partition of a partitioned table, each table of an
    -- inheritance tree), relation: that table
    FOR t IN
      SELECT m.relid, storagelab_internal.rewrite_copy(m.relid, mc.atts, mc.types) AS statement
        FROM (SELECT c.relid, c.table_ord, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
                FROM storagelab_internal.rewrite_columns(tables) c GROUP BY c.relid, c.table_ord) c
       CROSS JOIN LATERAL storagelab_internal.rewrite_members(ARRAY[c.relid]) m
       CROSS JOIN LATERAL storagelab_internal.rewrite_member_columns(m.relid, c.relid, c.atts, c.types) mc
       WHERE m.leaf
       ORDER BY c.table_ord, m.level, m.relid
    LOOP
      n := n + 1; ord := n; relation := t.relid; statement := t.statement; RETURN NEXT;
    END LOOP;
  ELSE
    FOR t IN
      SELECT c.relid, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
        FROM storagelab_internal.rewrite_columns(tables) c
       GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
    LOOP
      FOREACH s IN ARRAY CASE phase WHEN 'create' THEN storagelab_internal.rewrite_create(t.relid, t.atts, t.types)
                                    ELSE storagelab_internal.rewrite_index(t.relid) END LOOP
        n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(s, ';\s*$', ''); RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_statements(jsonb, text) IS
  'the copy-and-swap rewrite engine: the statements of one phase (create, copy, index, swap, validate, swap_back, cleanup, discard) that rebuild the given tables in a new column order and types beside the old ones and swap them in, in order; write every phase before running the first (doc/design/rewrite-engine.md)';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_preflight
CREATE OR REPLACE FUNCTION storagelab_internal.layout_preflight(relation regclass, changes jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e   jsonb;
  v   text;
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    BEGIN
      EXECUTE format('SELECT %1$I::text FROM %2$s WHERE %1$I IS NOT NULL AND %3$s LIMIT 1', e->>'column_name',
                     storagelab_internal.bigint_migration_qname(relation),
                     storagelab_internal.layout_misfit(quote_ident(e->>'column_name'), e->>'from', e->>'to'))
        INTO v;
    EXCEPTION WHEN data_exception THEN
      RAISE EXCEPTION 'values of column % of % do not fit type %', quote_ident(e->>'column_name'), relation, e->>'to'
        USING ERRCODE = SQLSTATE, DETAIL = SQLERRM, HINT = 'Give that column its current type in column_types.';
    END;
    IF v IS NOT NULL THEN
      RAISE EXCEPTION 'a value of column % of % does not fit type %', quote_ident(e->>'column_name'), relation, e->>'to'
        USING ERRCODE = 'data_exception', DETAIL = format('The value %s would not be kept as it is.', quote_literal(v)),
              HINT = CASE WHEN e ? 'component'
                          THEN 'The column is in the foreign-key component of the key named in column_types: give that key a type that holds every value of its component, or leave it out.'
                          ELSE 'The plan is older than the data: run ANALYZE or storagelab.column_profile() again, or give that column its current type in column_types.' END;
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_preflight(regclass, jsonb) IS
  'checks every changed column''s values against its new type (storagelab_internal.layout_misfit); raises 22000 naming column and value for the first that does not fit';

-- from extension/61_layout_migration.sql: storagelab_internal.rewrite_tree_fingerprint
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_tree_fingerprint(relation regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN count(*) = 1 THEN min(storagelab_internal.rewrite_fingerprint(m.relid::regclass))
              ELSE md5(string_agg(m.relid::regclass::text || ' ' || storagelab_internal.rewrite_fingerprint(m.relid::regclass), E'\n'
                                  ORDER BY m.level, m.relid::regclass::text)) END
    FROM storagelab_internal.rewrite_members(ARRAY[$1::oid]) m
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_tree_fingerprint(regclass) IS
  'storagelab_internal.rewrite_fingerprint of a table, or of a partitioned table and each of its partitions together';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_recheck
CREATE OR REPLACE FUNCTION storagelab_internal.layout_recheck(relation regclass, changes jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  qn    text := storagelab_internal.bigint_migration_qname(relation);
  cols  text;
  body  text;
  e     jsonb;
BEGIN
  SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum) INTO cols
    FROM pg_attribute a WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped;
  -- columns win over the block's variable (a column may be named v)
  body := format(E'#variable_conflict use_column\nDECLARE\n  v text;\nBEGIN\n'
                 '  IF to_regclass(%1$L) IS DISTINCT FROM %2$s::oid::regclass\n'
                 '     OR (SELECT string_agg(format(''%%I %%s'', a.attname, format_type(a.atttypid, a.atttypmod)), '', '' ORDER BY a.attnum)\n'
                 '           FROM pg_attribute a WHERE a.attrelid = %2$s AND a.attnum > 0 AND NOT a.attisdropped) IS DISTINCT FROM %3$L THEN\n'
                 '    RAISE EXCEPTION ''table %% changed since this script was written'', %1$L\n'
                 '      USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n'
                 '  END IF;\n'
                 '  IF storagelab_internal.rewrite_tree_fingerprint(%2$s) IS DISTINCT FROM %4$L THEN\n'
                 '    RAISE EXCEPTION ''the indexes, constraints, triggers, policies, privileges or dependent objects of table %% (or of its partitions) changed since this script was written'', %1$L\n'
                 '      USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again: this one would drop what was added since.'';\n'
                 '  END IF;\n', qn, relation::oid, cols, storagelab_internal.rewrite_tree_fingerprint(relation));
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    body := body || format(E'  SELECT x.%1$I::text INTO v FROM %2$s x WHERE x.%1$I IS NOT NULL AND %3$s LIMIT 1;\n'
                           '  IF FOUND THEN\n'
                           '    RAISE EXCEPTION ''a value of column %%.%% does not fit type %%'', %2$L, %4$L, %5$L\n'
                           '      USING ERRCODE = ''data_exception'', DETAIL = format(''The value %%s would not be kept as it is.'', quote_literal(v)),\n'
                           '            HINT = ''Generate the script again: its pre-flight names the columns to leave as they are.'';\n'
                           '  END IF;\n',
                           e->>'column_name', qn, storagelab_internal.layout_misfit('x.' || quote_ident(e->>'column_name'), e->>'from', e->>'to'),
                           quote_ident(e->>'column_name'), e->>'to');
  END LOOP;
  RETURN E'-- The table is still as it was when this script was written; every value fits its new type.\n'
         || 'DO ' || storagelab_internal.dollar_quote(E'\n' || body || E'END\n') || E';\n\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_recheck(regclass, jsonb) IS
  'the DO block of a blocking layout script that checks, under its locks, that the table is unchanged (OID, columns, types, storagelab_internal.rewrite_fingerprint) and every changed column''s values fit';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.bigint_copy_swap_tables
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_copy_swap_tables(objs storagelab.bigint_migration_object[])
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_agg(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname(t.rel),
           'columns', (SELECT jsonb_agg(jsonb_build_object('column_name', a.attname,
                                'type', CASE WHEN EXISTS (SELECT 1 FROM unnest($1) x WHERE x.kind = 'column' AND x.relation = t.rel
                                                             AND x.column_name = a.attname)
                                             THEN 'bigint' ELSE format_type(a.atttypid, a.atttypmod) END) ORDER BY a.attnum)
                         FROM pg_attribute a WHERE a.attrelid = t.rel AND a.attnum > 0 AND NOT a.attisdropped))
           ORDER BY storagelab_internal.bigint_migration_qname(t.rel))
    FROM (SELECT DISTINCT x.relation::oid AS rel FROM unnest($1) x
           WHERE x.kind = 'column'
             -- partitions and inheritance children are rewritten with their parent
             AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)) t
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_copy_swap_tables(storagelab.bigint_migration_object[]) IS
  'the rewrite engine''s input for an INT->BIGINT model: each table with converted columns that is not a partition or inheritance child (those go with their parent), every column in its order, converted ones bigint';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_dirs
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_dirs(tables jsonb, back boolean)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_statements and rewrite_name belong to the rewrite engine
  RETURN (SELECT jsonb_agg(jsonb_build_object(
           'source', storagelab_internal.bigint_migration_qname(r.relation),
           'target', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'old' ELSE 'new' END, r.relation)),
           'log', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'back' ELSE 'log' END, r.relation)),
           'key', to_jsonb(storagelab_internal.rewrite_online_key(r.relation)),
           'copy', CASE WHEN $2 THEN storagelab_internal.rewrite_online_copy_back(r.relation) ELSE r.statement END)
           ORDER BY r.ord)
    FROM storagelab_internal.rewrite_statements($1, 'copy') r
    JOIN pg_class c ON c.oid = r.relation JOIN pg_namespace n ON n.oid = c.relnamespace);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_dirs(jsonb, boolean) IS
  'the direction objects (source, target, log, key, copy) of the online machinery for the tables of a rewrite, one per table holding rows (each partition of a partitioned table): forward before the swap, back after it';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_old_triggers
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_old_triggers(tables jsonb, enable boolean)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_members and rewrite_name belong to the rewrite engine
  RETURN (SELECT coalesce(array_agg(
            CASE WHEN enable THEN format('ALTER TABLE %I.%I %s TRIGGER %I', n.nspname, c.relname,
                                         CASE t.tgenabled WHEN 'A' THEN 'ENABLE ALWAYS' WHEN 'R' THEN 'ENABLE REPLICA'
                                                          WHEN 'D' THEN 'DISABLE' ELSE 'ENABLE' END, t.tgname)
                 ELSE format('ALTER TABLE %I.%I DISABLE TRIGGER %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), t.tgname) END
            ORDER BY m.level, m.relid, t.tgname), '{}')
    FROM storagelab_internal.rewrite_members(ARRAY(SELECT to_regclass(x->>'relation')::oid FROM jsonb_array_elements(tables) x)) m
    JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_trigger t ON t.tgrelid = c.oid AND NOT t.tgisinternal
   WHERE enable OR t.tgenabled <> 'D');
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_old_triggers(jsonb, boolean) IS
  'statements disabling the triggers of the old tables of a copy-and-swap rewrite in its swap (the back log''s replay must not fire them), or giving them their states back after a swap back';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_phases
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_phases(tables jsonb, mid text, swap_pre text[] DEFAULT '{}', swap_post text[] DEFAULT '{}',
                                                          back_pre text[] DEFAULT '{}', back_post text[] DEFAULT '{}',
                                                          swap_end text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(tables, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(tables, true);
  d       jsonb;
  retries int := storagelab_internal.setting('scripts.lock_retries')::int;
  created text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  ours    text := (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
                     FROM jsonb_array_elements(fwd) x);
  others  text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                     FROM jsonb_array_elements(fwd) x);
  swapped text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x);
  copied  text := format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                         mid, jsonb_array_length(fwd));
  indexed text := (SELECT string_agg(format('EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(%L))', x->>'target'), ' AND ')
                     FROM jsonb_array_elements(fwd) x WHERE x->'key' <> 'null');
  locks   text;
  s       text := '';
  apply_f text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x);
  apply_b text[] := ARRAY[format('SELECT storagelab_internal.rewrite_online_apply_back(%L::jsonb)', back)];
  st      text[];
  roots   oid[] := ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t);
  validate text := '';
  guard   text;
BEGIN
  -- a partitioned table without partitions has no rows to copy, log or replay
  IF EXISTS (SELECT 1 FROM unnest(roots) r WHERE NOT EXISTS (
               SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT format('The partitioned table %s has no partitions.', string_agg(r::regclass::text, ', '))
                        FROM unnest(roots) r
                       WHERE NOT EXISTS (SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)),
            HINT = 'Use the blocking mode.';
  END IF;
  indexed := coalesce(indexed, 'true');
  -- a publication of all tables or of these schemas would publish the new tables and logs: refused by every phase that writes them
  guard := storagelab_internal.rewrite_online_publication_guard(ARRAY(
             SELECT DISTINCT n.nspname FROM storagelab_internal.rewrite_members(roots) m
               JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1));
  -- the component, the new tables and the tables whose foreign keys the swap re-points, locked in one statement
  -- (a partitioned table's lock covers its partitions)
  locks := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', (SELECT string_agg(x, ', ' ORDER BY x) FROM (
             SELECT t->>'relation' AS x FROM jsonb_array_elements(tables) t
             UNION SELECT f.qrel FROM storagelab_internal.rewrite_foreign_keys(roots) f WHERE f.direction = 'to') y));
  -- start
  st := ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'create') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d) || format('COMMENT ON TABLE %s IS %L', d->>'log', tag);
  END LOOP;
  s := s || E'\\if :ph_start\n' || guard
         || storagelab_internal.rewrite_online_do(st, created || ' AND ' || ours, 'phase start has run already', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', retries)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', created || ' AND ' || ours, 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, fwd,
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := apply_f || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n' || guard
         || storagelab_internal.rewrite_online_do(st, '(' || indexed || ' AND ' || copied || ') OR (' || swapped || ')', 'phase index has run already',
                                                  copied, 'the copy is not complete: run phase copy first', retries)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(fwd) x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', indexed || ' AND ' || copied, 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, fwd,
                   1000 * jsonb_array_length(fwd));
  -- swap
  st := ARRAY[locks] || apply_f;
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap', swap_pre, swap_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, false) || swap_end;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d);
  END LOOP;
  s := s || E'\\if :ph_swap\n' || guard
         || storagelab_internal.rewrite_online_do(st, swapped, 'phase swap has run already',
                                                  '(' || swapped || ') OR (' || indexed || ' AND ' || copied || ')', 'run phases copy, index and replay first', retries)
         || E'\\endif\n';
  -- validate
  FOR d IN SELECT to_jsonb(r.statement) FROM storagelab_internal.rewrite_statements(tables, 'validate') r ORDER BY r.ord LOOP
    validate := validate || storagelab_internal.retry_block(ARRAY[d #>> '{}'], retries);
  END LOOP;
  s := s || E'\\if :ph_validate\n' || validate || E'\\endif\n';
  -- cleanup
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(back) x UNION ALL SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'cleanup') r ORDER BY r.ord)
           || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped, then drop what start created
  st := ARRAY[locks] || apply_b;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap_back', back_pre, back_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, true);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  s := s || E'\\if :ph_rollback\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  -- one statement: the new tables may reference each other after a swap back
  -- (every table of a tree: inheritance children are not dropped with their parent)
  st := st || (SELECT format('DROP TABLE IF EXISTS %s', string_agg(format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), ', '))
                 FROM storagelab_internal.rewrite_members(roots) m JOIN pg_class c ON c.oid = m.relid
                 JOIN pg_namespace n ON n.oid = c.relnamespace);
  st := st || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  -- the foreign keys a swap back re-pointed NOT VALID, validated (of those that were valid; a no-op before a swap)
  s := s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
         || validate || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text, text[], text[], text[], text[], text[]) IS
  'the phases start, copy, index, replay, swap, validate, cleanup and rollback of an online copy-and-swap script for a rewrite engine input, as psql \if sections; the caller''s statements run in the swap (swap_pre, swap_post) and the swap back (back_pre, back_post) around the dependent objects, and at the end of the swap (swap_end)';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.bigint_migration_copy_swap_script
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[],
                                                                      relations regclass[], column_names name[],
                                                                      function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables    jsonb;
  mid       text;
  s         text;
  swap_pre  text[] := '{}';
  swap_post text[] := '{}';
  back_pre  text[] := '{}';
  back_post text[] := '{}';
  swap_end  text[] := '{}';
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  -- in the swap, around the dependent objects: the functions to widen
  -- (checked unchanged since generation, dropped, created with bigint
  -- parameters) and the sequences' types; in the swap back, the reverse
  IF EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'widened_function') THEN
    SELECT array_agg(x.drop_sql ORDER BY x.identity),
           array_agg(x.create_sql ORDER BY x.identity),
           array_agg(format('DROP %s %s', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, x.hazard_target) ORDER BY x.identity),
           array_agg(pg_get_functiondef(x.objid) || E';\n'
                     || format(E'ALTER ROUTINE %s OWNER TO %I;\n', x.objid::regprocedure, pg_get_userbyid(p.proowner))
                     || storagelab_internal.bigint_migration_acl_sql('ROUTINE', x.objid::regprocedure::text, p.proacl, p.proowner)
                     || CASE WHEN obj_description(x.objid, 'pg_proc') IS NULL THEN ''
                             ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', x.objid::regprocedure, obj_description(x.objid, 'pg_proc')) END
                     ORDER BY x.identity)
      INTO swap_pre, swap_post, back_pre, back_post
      FROM unnest(objs) x JOIN pg_proc p ON p.oid = x.objid
     WHERE x.kind = 'widened_function';
  END IF;
  swap_post := swap_post || ARRAY(SELECT x.create_sql FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  -- first in the swap's own statements: the functions to widen are unchanged since generation (55000),
  -- and, with plpgsql_check installed, the errors of the PL/pgSQL functions that use these tables;
  -- last: no new error (22000, the swap rolls back)   (part 28)
  swap_pre := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before'), '')], NULL) || swap_pre;
  swap_end := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after'), '')], NULL);
  back_post := back_post || ARRAY(SELECT format('ALTER SEQUENCE %s AS %s', storagelab_internal.bigint_migration_qname(x.objid), format_type(q.seqtypid, NULL))
                                    FROM unnest(objs) x JOIN pg_sequence q ON q.seqrelid = x.objid
                                   WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  IF to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NULL THEN
    RAISE EXCEPTION 'mode online needs the rewrite engine, which this installation lacks'
      USING ERRCODE = 'feature_not_supported', HINT = 'Use mode ''shadow'' or ''blocking''.';
  END IF;
  -- a child's own column would not be converted with its parent's (the engine keeps a child's own columns' types)
  FOR s IN
    SELECT format('%s.%I', x.relation, x.column_name)
      FROM unnest(objs) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
     WHERE x.kind = 'column' AND a.attinhcount = 0 AND EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)
     ORDER BY 1 LIMIT 1
  LOOP
    RAISE EXCEPTION 'mode online does not convert a column of an inheritance child that its parent lacks'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Column %s.', s),
            HINT = 'Use mode ''blocking'' or ''shadow''.';
  END LOOP;
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  -- a publication of all tables, or of a schema of these tables, would publish the new tables and the logs
  -- (the subscribers lack them: their apply stops at the first copied row)
  IF cardinality(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) > 0 THEN
    RAISE EXCEPTION 'a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of an online migration'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('Publications: %s.', (SELECT string_agg(quote_ident(x), ', ')
                       FROM unnest(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) x)),
            HINT = 'Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), or use mode ''blocking''.';
  END IF;
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  s := format(E'-- storagelab %s: INT to BIGINT migration (mode online: copy and swap), migration id %s\n',
              (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || coalesce((SELECT E'-- Sequences made bigint in the swap (their type given back by a swap back):\n'
                        || string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.objid)) || E'\n', '' ORDER BY x.identity)
                   FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL), '')
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n\\set ON_ERROR_STOP on\n'
    || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
    || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
    || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
    || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
    || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
    || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
          FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
    || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
    || E'\\if :ph_bad\n'
    || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s || storagelab_internal.rewrite_online_phases(tables, mid, swap_pre, swap_post, back_pre, back_post, swap_end);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_copy_swap_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the INT->BIGINT script in mode online (alias copy_swap): the component rebuilt by the rewrite engine beside the old tables, copied in batches, kept in step by change logs, swapped in one short transaction; phases start to cleanup, and rollback';

-- END generated section partitions

-- layout_migration_script(): partitioned tables and inheritance trees are rebuilt, no longer refused
COMMENT ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]) IS
  'a psql script that rebuilds a table in the column order and types of its storagelab.table_rewrite_plan row (column_types and column_order override it) by copy and swap, in one transaction (mode blocking) or in phases beside live traffic (mode online), with every dependent object, a partitioned table with all its partitions, an inheritance parent with its children; refuses key columns, a partition or child alone, multiple inheritance, and values that do not fit (checked before, and again under the locks); NULL relation: NULL';

-- ---------------------------------------------------------------------------
-- Blocking scripts set search_path for their transaction only (SET LOCAL);
-- online layout scripts set the session's again at their end.  Blocking
-- layout scripts lock every relation the run changes before the copy.
-- Layout scripts refuse type changes that break functions reading the
-- columns, and check the functions again under their locks.  An integer
-- key named in column_types is retyped with its foreign-key component.
-- Copied from the install parts by
--   scripts/upgrade-section.sh layout_safety extension/storagelab--1.0--1.1.sql \
--     extension/23_bigint_blocking.sql:storagelab_internal.bigint_migration_blocking_settings \
--     extension/28_bigint_hazards.sql:storagelab_internal.type_change_accepts \
--     extension/28_bigint_hazards.sql:storagelab_internal.type_change_function_hazards \
--     extension/61_layout_migration.sql:storagelab_internal.layout_function_check \
--     extension/61_layout_migration.sql:storagelab_internal.layout_function_header \
--     extension/61_layout_migration.sql:storagelab_internal.layout_function_recheck \
--     extension/61_layout_migration.sql:storagelab_internal.layout_header \
--     extension/61_layout_migration.sql:storagelab_internal.layout_lock_targets \
--     extension/61_layout_migration.sql:storagelab_internal.layout_online_script \
--     extension/61_layout_migration.sql:storagelab_internal.layout_plan \
--     extension/61_layout_migration.sql:storagelab_internal.layout_key_component \
--     extension/61_layout_migration.sql:storagelab_internal.layout_script \
--     extension/61_layout_migration.sql:storagelab.layout_migration_script \
--     extension/61_layout_migration.sql:storagelab.layout_migration_plan
-- (run it again after changing any of them).
-- ---------------------------------------------------------------------------
-- BEGIN generated section layout_safety
-- from extension/23_bigint_blocking.sql: storagelab_internal.bigint_migration_blocking_settings
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_blocking_settings()
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  s          text := '';
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
BEGIN
  s := s || E'\\set ON_ERROR_STOP on\n';
  s := s || format(E'SET lock_timeout = %L;\n', lt);
  s := s || E'SET statement_timeout = 0;     -- the rewrite may take long; lock waits are bounded by lock_timeout\n';
  s := s || E'SET check_function_bodies = off;   -- functions are re-created as they were, like pg_dump does\n\n';
  s := s || E'BEGIN;\nSET LOCAL search_path = pg_catalog, pg_temp;   -- every name below is schema-qualified; LOCAL: the session keeps its own\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_settings() IS
  'The session settings of a blocking script, and its BEGIN.';

-- from extension/28_bigint_hazards.sql: storagelab_internal.type_change_accepts
CREATE OR REPLACE FUNCTION storagelab_internal.type_change_accepts(param oid, typ oid, arr boolean)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN NOT $3 THEN
           $1 = $2
           OR $1 IN ('anyelement'::regtype, 'anynonarray'::regtype, 'anycompatible'::regtype,
                     'anycompatiblenonarray'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = $1 AND c.castcontext = 'i')
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $2 AND t.typtype = 'd' AND t.typbasetype = $1)
         ELSE
           $1 IN ('anyarray'::regtype, 'anycompatiblearray'::regtype, 'anyelement'::regtype,
                  'anycompatible'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $1 AND t.typelem <> 0 AND t.typsubscript = 'array_subscript_handler'::regproc
                        AND (t.typelem = $2
                             OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = t.typelem AND c.castcontext = 'i')))
         END
$$;
COMMENT ON FUNCTION storagelab_internal.type_change_accepts(oid, oid, boolean) IS
  'whether a parameter or operand type takes a value of another type (or an array of it) without an explicit cast: same type, polymorphic, implicit cast, domain over it';

-- from extension/28_bigint_hazards.sql: storagelab_internal.type_change_function_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.type_change_function_hazards(relation regclass, changes jsonb)
RETURNS TABLE (fn regprocedure, caller text, column_name text, old_type text, new_type text, hazard text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e      jsonb;
  o_t    oid;
  n_t    oid;
  r      record;
  k      record;
  v      record;
  src    text;
  car    text;
  stmts  text[];
  found_one boolean;
  ops    text := '(=|<>|!=|<=|>=|<|>)';
  opnd   text := '(\$[0-9]+|[a-z_][a-z0-9_$]*)';
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    o_t := to_regtype(e->>'from'); n_t := to_regtype(e->>'to');
    CONTINUE WHEN o_t IS NULL OR n_t IS NULL OR o_t = n_t;
    column_name := e->>'column_name'; old_type := format_type(o_t, NULL); new_type := format_type(n_t, NULL);
    FOR r IN
      -- trigger functions of the table and of its partitions or children
      SELECT DISTINCT t.tgfoid AS f, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS who,
             '(?:new|old)\.(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')' AS carrier, NULL::text AS filter
        FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
         AND t.tgrelid IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[relation::oid]) m)
      UNION
      -- functions whose statements name the table
      SELECT p.oid, format('function %s', p.oid::regprocedure),
             '(?:[a-z_][a-z0-9_$]*\.)?(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')',
             '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])'
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k2
       WHERE k2.oid = relation AND l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.prorettype <> 'trigger'::regtype
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
         AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])')
      ORDER BY 2
    LOOP
      src := storagelab_internal.bigint_migration_scrub((SELECT p.prosrc FROM pg_proc p WHERE p.oid = r.f));
      car := r.carrier;
      -- PL/pgSQL variables declared table.column%TYPE of the column carry the value too
      car := car || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                FROM regexp_matches(src, '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                               WHERE m[3] = lower(e->>'column_name')), '');
      stmts := ARRAY(SELECT s FROM unnest(string_to_array(src, ';')) s WHERE r.filter IS NULL OR s ~ r.filter);
      CONTINUE WHEN NOT EXISTS (SELECT 1 FROM unnest(stmts) s WHERE s ~ ('(^|[^a-z0-9_$.])(' || car || ')($|[^a-z0-9_$])'));
      fn := r.f; caller := r.who; found_one := false;
      -- calls
      FOR k IN
        SELECT DISTINCT c.fname, c.nargs, c.argno, storagelab_internal.bigint_migration_arg_class(c.arg, car) = 'bigint[]' AS arr
          FROM storagelab_internal.bigint_migration_calls(array_to_string(stmts, ';')) c
         WHERE storagelab_internal.bigint_migration_arg_class(c.arg, car) IN ('bigint', 'bigint[]')
         ORDER BY 1, 3
      LOOP
        CONTINUE WHEN EXISTS (
          SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], n_t, k.arr));
        FOR v IN
          SELECT f.oid::regprocedure AS callee FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], o_t, k.arr)
           ORDER BY f.oid
        LOOP
          hazard := format('passes %s (%s) as argument %s of %s: no function of that name takes %s%s', column_name,
                           new_type || CASE WHEN k.arr THEN '[]' ELSE '' END, k.argno, v.callee,
                           new_type, CASE WHEN k.arr THEN '[]' ELSE '' END);
          found_one := true;
          RETURN NEXT;
        END LOOP;
      END LOOP;
      -- comparisons with a parameter or a declared variable
      FOR k IN
        WITH params AS (
          SELECT '$' || u.n AS name, u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n) WHERE p.oid = r.f
          UNION ALL
          SELECT lower(p.proargnames[u.n]), u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n)
           WHERE p.oid = r.f AND p.proallargtypes IS NULL AND coalesce(p.proargnames[u.n], '') <> ''
          UNION ALL
          SELECT d[1], to_regtype(btrim(d[3]))
            FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
                 unnest(string_to_array(blk.b[1], ';')) AS x(decl),
                 regexp_match(x.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?([a-z_][a-z0-9_ ]*?(\([0-9, ]+\))?)\s*(:=|default\M|not\s+null\M|$)') AS d
           WHERE to_regtype(btrim(d[3])) IS NOT NULL),
        cmp AS (
          SELECT m[3] AS op, m[4] AS other, true AS value_left
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])(' || car || ')\s*' || ops || '\s*' || opnd || '($|[^a-z0-9_$.(:])', 'g') m
          UNION ALL
          SELECT m[3], m[2], false
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])' || opnd || '\s*' || ops || '\s*(' || car || ')($|[^a-z0-9_$.(:])', 'g') m)
        SELECT DISTINCT c.op, c.other, c.value_left, p.t
          FROM cmp c JOIN params p ON p.name = c.other
         WHERE c.other !~ ('^(' || car || ')$')
         ORDER BY 2, 1
      LOOP
        CONTINUE WHEN k.t IS NULL OR EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, n_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, n_t, false) END);
        CONTINUE WHEN NOT EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, o_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, o_t, false) END);
        hazard := format('compares %s (%s) with %s (%s): no operator %s', column_name, new_type, k.other, format_type(k.t, NULL),
                         CASE WHEN k.value_left THEN format('%s %s %s', new_type, k.op, format_type(k.t, NULL))
                              ELSE format('%s %s %s', format_type(k.t, NULL), k.op, new_type) END);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      IF NOT found_one THEN
        hazard := NULL;
        RETURN NEXT;
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.type_change_function_hazards(regclass, jsonb) IS
  'functions reading retyped columns of a table (trigger functions with NEW/OLD, functions naming the table), each with the calls and comparisons that no function or operator takes with the new type (fail at once), hazard NULL when none';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_function_check
CREATE OR REPLACE FUNCTION storagelab_internal.layout_function_check(relation regclass, changes jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det text;
BEGIN
  SELECT string_agg(format('%s (%s): %s', h.fn, h.caller, h.hazard), E'\n' ORDER BY h.fn::text, h.hazard) INTO det
    FROM storagelab_internal.type_change_function_hazards(relation, changes) h
   WHERE h.hazard IS NOT NULL;
  IF det IS NOT NULL THEN
    RAISE EXCEPTION 'the type changes would break functions that use the changed columns of %', relation
      USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
            HINT = 'Change those functions first (cast the value where it is passed or compared, or add an overload for the new type), or give the column its current type in column_types.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_function_check(regclass, jsonb) IS
  'refuses (2BP01, naming them) a layout plan whose type changes break functions that read the changed columns: calls and comparisons no function or operator takes with the new type';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_function_header
CREATE OR REPLACE FUNCTION storagelab_internal.layout_function_header(relation regclass, changes jsonb)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN $2 IS NULL OR $2 = '[]' THEN '' ELSE
           E'-- Functions that read the changed columns (calls and comparisons checked against the new types;\n'
        || E'-- review them for arithmetic and output: numeric -> integer divides as integers, prints 1.0 as 1):\n'
        || coalesce((SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(
                                         format('%s (%s): %s %s -> %s', h.fn, h.caller, h.column_name, h.old_type, h.new_type)) || E'\n',
                                       '' ORDER BY h.fn::text, h.column_name)
                       FROM (SELECT coalesce((e->>'relation')::oid, $1::oid) AS rel, jsonb_agg(e - 'relation') AS ch
                               FROM jsonb_array_elements($2) e GROUP BY 1) g,
                            storagelab_internal.type_change_function_hazards(g.rel::regclass, g.ch) h), E'--   (none)\n')
        || E'-- Before COMMIT the script checks them again: SQL functions with their validator, PL/pgSQL functions\n'
        || E'-- with plpgsql_check when it is installed; an error they did not have before rolls everything back.\n--\n'
         END
$$;
COMMENT ON FUNCTION storagelab_internal.layout_function_header(regclass, jsonb) IS
  'layout script header lines: the functions that read the changed columns (storagelab_internal.type_change_function_hazards), and how the script checks them again';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_function_recheck
CREATE OR REPLACE FUNCTION storagelab_internal.layout_function_recheck(relation regclass, changes jsonb, phase text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o     storagelab.bigint_migration_object;
  objs  storagelab.bigint_migration_object[] := '{}';
  rels  oid[];
  r     oid;
  fns   text;
  body  text;
BEGIN
  IF changes IS NULL OR changes = '[]' THEN
    RETURN '';
  END IF;
  -- the table, and the other tables of its key's component (changes carrying a relation)
  rels := ARRAY(SELECT DISTINCT coalesce((e->>'relation')::oid, relation::oid) FROM jsonb_array_elements(changes) e);
  FOREACH r IN ARRAY rels LOOP
    o.kind := 'column'; o.relation := r;
    objs := objs || o;
  END LOOP;
  SELECT string_agg(DISTINCT format('%L', p.oid::regprocedure::text), ', ' ORDER BY format('%L', p.oid::regprocedure::text)) INTO fns
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k
   WHERE k.oid = ANY (rels) AND l.lanname = 'sql' AND p.prosqlbody IS NULL AND p.prokind = 'f'
     AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
     AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k.relname) || '($|[^a-z0-9_$])');
  IF fns IS NOT NULL THEN
    -- the validator parses each function with its own search_path (or the
    -- sessions' default); everything else runs with pg_catalog first
    body := E'\nDECLARE\n  f text;\n  fo oid;\n  sp text;\n  errs text[] := ''{}'';\n  bad text;\nBEGIN\n'
         || E'  PERFORM set_config(''check_function_bodies'', ''on'', true);\n'
         || format(E'  FOREACH f IN ARRAY ARRAY[%s]::text[] LOOP\n', fns)
         || E'    fo := to_regprocedure(f);\n'
         || E'    CONTINUE WHEN fo IS NULL;\n'
         || E'    SELECT substring(c FROM ''^search_path=(.*)$'') INTO sp FROM pg_proc p, unnest(p.proconfig) c\n'
         || E'     WHERE p.oid = fo AND c LIKE ''search\\_path=%'';\n'
         || E'    sp := coalesce(sp, (SELECT reset_val FROM pg_settings WHERE name = ''search_path''));\n'
         || E'    PERFORM pg_catalog.set_config(''search_path'', sp, true);\n'
         || E'    BEGIN\n      PERFORM pg_catalog.fmgr_sql_validator(fo);\n'
         || E'    EXCEPTION WHEN OTHERS THEN\n'
         || E'      PERFORM pg_catalog.set_config(''search_path'', ''pg_catalog, pg_temp'', true);\n'
         || E'      errs := pg_catalog.array_append(errs, pg_catalog.concat(f, '': '', SQLERRM));\n    END;\n'
         || E'    PERFORM pg_catalog.set_config(''search_path'', ''pg_catalog, pg_temp'', true);\n'
         || E'  END LOOP;\n'
         || E'  PERFORM set_config(''check_function_bodies'', ''off'', true);\n'
         || CASE WHEN phase = 'before' THEN
              E'  CREATE TEMP TABLE storagelab_sql_check_before ON COMMIT DROP AS SELECT unnest(errs) AS e;\n'
            ELSE
              E'  SELECT string_agg(x.e, ''; '' ORDER BY x.e) INTO bad FROM unnest(errs) x(e)\n'
              || E'   WHERE NOT EXISTS (SELECT 1 FROM pg_temp.storagelab_sql_check_before b WHERE b.e = x.e);\n'
              || E'  IF bad IS NOT NULL THEN\n'
              || E'    RAISE EXCEPTION ''SQL functions that use the table fail to validate after the change; rolling back''\n'
              || E'      USING ERRCODE = ''dependent_objects_still_exist'', DETAIL = bad,\n'
              || E'            HINT = ''Nothing was changed.  Change these functions for the new column types first, or keep the types.'';\n'
              || E'  END IF;\n' END
         || E'END\n';
    body := CASE WHEN phase = 'before' THEN E'-- The SQL functions that use the table: their validation errors before the change.\n'
                 ELSE E'-- The SQL functions that use the table: no validation error they did not have before.\n' END
            || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  END IF;
  RETURN coalesce(body, '') || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, phase);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_function_recheck(regclass, jsonb, text) IS
  'DO blocks of a blocking layout script: phase before records the validation errors of the SQL functions naming the table (and plpgsql_check''s of the PL/pgSQL ones when installed), phase after rolls back on a new one';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_header
CREATE OR REPLACE FUNCTION storagelab_internal.layout_header(relation regclass, tables jsonb, changes jsonb, plan jsonb,
                                                  lock_list text, mid text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- storagelab layout migration of %s (mode %s%s), written %s\n', storagelab_internal.bigint_migration_qname($1),
                CASE WHEN $6 IS NULL THEN 'blocking' ELSE 'online' END, ', migration id ' || $6,
                to_char(now(), 'YYYY-MM-DD HH24:MI:SS TZ'))
      || E'--\n-- Rebuilds the table as a new table in this column order, swaps it in and drops the old one:\n'
      || (SELECT string_agg(format(E'--   %s %s\n', storagelab_internal.bigint_migration_comment_text(quote_ident(c->>'column_name')),
                                   storagelab_internal.bigint_migration_comment_text(
                                     coalesce((SELECT format('%s (was %s)', e->>'to', e->>'from') FROM jsonb_array_elements($3) e
                                                WHERE e->>'column_name' = c->>'column_name' AND NOT e ? 'relation'), 'unchanged'))), '' ORDER BY n)
            FROM jsonb_array_elements($2->0->'columns') WITH ORDINALITY u(c, n))
      || coalesce(E'-- With the foreign-key component of its retyped key, each table rebuilt in its own column order in
'
                  || E'-- the same way (and the same transaction):
'
                  || (SELECT string_agg(format(E'--   %s\n', storagelab_internal.bigint_migration_comment_text(
                                          format('%s.%s %s (was %s)', (e->>'relation')::oid::regclass, quote_ident(e->>'column_name'), e->>'to', e->>'from'))),
                                        '' ORDER BY (e->>'relation')::oid::regclass::text, e->>'column_name')
                        FROM jsonb_array_elements($3) e WHERE e ? 'relation'), '')
      || E'-- Every index, constraint, foreign key (both ways), sequence, trigger, rule, policy, grant,\n'
      || E'-- comment, statistics object and publication membership follows; views and materialized\n'
      || E'-- views over the table are dropped and re-created (materialized views re-populated).\n--\n'
      || storagelab_internal.layout_function_header($1, $3)
      || CASE WHEN $6 IS NULL THEN
           E'-- Locks: ACCESS EXCLUSIVE until COMMIT on each of these, taken together before the copy, in this\n'
           || E'-- (OID) order (reads and writes of them wait for the whole run):\n'
           || $5
           || E'-- Disk: a second copy of the table and its indexes until COMMIT.\n'
         ELSE
           E'-- Run one phase at a time, in this order (each can be run again after a failure):\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new table, change log and triggers (brief lock, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); resumes\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new table (locks only it), ANALYZE\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old table and the logs\n'
           || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
           || E'-- A value written during the copy that does not fit its new type stops the copy or replay (roll back, or fix it).\n'
           || E'-- Disk: a second copy of the table and its indexes, and the change log, until cleanup.\n'
           || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal($6) || E';\n'
         END
      || CASE WHEN $4 IS NOT NULL THEN
           format(E'-- Heap now (freshly written): %s; after: %s (storagelab.table_rewrite_plan, evidence %s).\n',
                  pg_size_pretty(($4->>'estimated_bytes_now')::int8), pg_size_pretty(($4->>'estimated_bytes_after')::int8),
                  $4->>'evidence')
         ELSE E'-- Heap after: not predicted (storagelab.table_rewrite_plan predicts its own plan, not column_types\n'
              || E'-- or column_order): measure pg_relation_size after the run.\n' END
      || format(E'-- Heap now on disk: %s (pg_relation_size%s).\n',
                pg_size_pretty((SELECT sum(pg_relation_size(m.relid)) FROM storagelab_internal.rewrite_members(
                                  ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements($2) t)) m)),
                CASE WHEN EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = $1) THEN ', its partitions or children included' ELSE '' END
                || CASE WHEN jsonb_array_length($2) > 1 THEN ', the component''s tables included' ELSE '' END)
      || CASE WHEN $6 IS NULL THEN E'-- Run: psql -v ON_ERROR_STOP=1 -f this.sql   (-v dry_run=1: everything, then ROLLBACK)\n' ELSE '' END
      || E'\n'
$$;
COMMENT ON FUNCTION storagelab_internal.layout_header(regclass, jsonb, jsonb, jsonb, text, text) IS
  'the comment header of a layout script (mid: the online migration id, NULL for blocking): columns in their new order with their type changes, what follows the table, locks or phases, disk, sizes';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_lock_targets
CREATE OR REPLACE FUNCTION storagelab_internal.layout_lock_targets(relation regclass)
RETURNS TABLE (rel regclass, why text, lock_sql text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH members AS (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[$1::oid]) m),
  fks AS (SELECT f.direction, f.conrelid, k.confrelid
            FROM storagelab_internal.rewrite_foreign_keys(ARRAY[$1::oid]) f JOIN pg_constraint k ON k.oid = f.conoid),
  deps AS (SELECT d.classid, d.objid FROM storagelab_internal.rewrite_dependents(ARRAY[$1::oid]) d),
  l AS (
    SELECT $1::oid AS rel, 'the table' AS why
    UNION ALL
    SELECT f.conrelid, 'its foreign key to the table is dropped and added again' FROM fks f WHERE f.direction = 'to'
    UNION ALL
    SELECT f.confrelid, 'referenced by the table: the old table''s foreign-key triggers on it are dropped' FROM fks f WHERE f.direction = 'from'
    UNION ALL
    SELECT d.objid, CASE c.relkind WHEN 'm' THEN 'materialized view, dropped and re-created' ELSE 'view, dropped and re-created' END
      FROM deps d JOIN pg_class c ON c.oid = d.objid WHERE d.classid = 'pg_class'::regclass
    UNION ALL
    SELECT w.ev_class, 'its rule naming the table is dropped and re-created'
      FROM deps d JOIN pg_rewrite w ON w.oid = d.objid WHERE d.classid = 'pg_rewrite'::regclass
    UNION ALL
    SELECT p.polrelid, 'its policy naming the table is dropped and re-created'
      FROM deps d JOIN pg_policy p ON p.oid = d.objid WHERE d.classid = 'pg_policy'::regclass)
  SELECT l.rel::regclass, string_agg(DISTINCT l.why, '; '),
         -- LOCK TABLE takes no materialized view, and on a view it locks the
         -- tables the view reads too: a change of owner to the owner it has
         -- takes ACCESS EXCLUSIVE on the view alone and changes nothing
         CASE c.relkind WHEN 'v' THEN format('ALTER VIEW %s OWNER TO %I', storagelab_internal.bigint_migration_qname(c.oid), pg_get_userbyid(c.relowner))
                        WHEN 'm' THEN format('ALTER MATERIALIZED VIEW %s OWNER TO %I', storagelab_internal.bigint_migration_qname(c.oid), pg_get_userbyid(c.relowner))
                        ELSE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', storagelab_internal.bigint_migration_qname(c.oid)) END
    FROM l JOIN pg_class c ON c.oid = l.rel
   WHERE l.rel = $1::oid OR l.rel NOT IN (SELECT relid FROM members)
   GROUP BY l.rel, c.oid
   ORDER BY l.rel
$$;
COMMENT ON FUNCTION storagelab_internal.layout_lock_targets(regclass) IS
  'the relations a blocking layout script locks ACCESS EXCLUSIVE before its copy, with why and the statement that locks each (LOCK TABLE; for a view or materialized view ALTER ... OWNER TO its owner): the table, tables referencing it or referenced by it, dependent views and materialized views, tables whose rules or policies name it';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_online_script
CREATE OR REPLACE FUNCTION storagelab_internal.layout_online_script(relation regclass, tables jsonb, changes jsonb, plan jsonb,
                                                         lock_list text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid text := 'sllm' || substr(md5(tables::text || now()::text), 1, 10);
BEGIN
  RETURN storagelab_internal.layout_header(relation, tables, changes, plan, lock_list, mid)
      || E'\\set ON_ERROR_STOP on\n'
      || E'-- the session''s search_path, set again at the end (this script sets its own)\n'
      || E'SELECT current_setting(''search_path'') AS search_path_saved \\gset sl_\n'
      || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
      || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
      || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
      || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
      || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
      || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
            FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
      || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
      || E'\\if :ph_bad\n'
      || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n')
      || E';\n\\endif\n\n'
      || storagelab_internal.rewrite_online_phases(tables, mid)
      || E'\n-- The session''s own search_path again.\n'
      || E'SELECT set_config(''search_path'', :''sl_search_path_saved'', false) AS search_path_restored \\gset sl_\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_online_script(regclass, jsonb, jsonb, jsonb, text) IS
  'the online layout script: phases start, copy, index, replay, swap, validate, cleanup and rollback of the copy-and-swap machinery (storagelab_internal.rewrite_online_phases) around the rewrite engine''s statements';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_plan
CREATE OR REPLACE FUNCTION storagelab_internal.layout_plan(relation regclass, column_types jsonb, column_order name[], plan jsonb,
                                                OUT tables jsonb, OUT changes jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  types  jsonb := '{}';
  k      text;
  ord    name[];
  bad    text;
BEGIN
  IF plan IS NULL AND column_types IS NULL AND column_order IS NULL THEN
    RAISE EXCEPTION 'no layout plan for %', $1
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storagelab.table_rewrite_plan has no row for it: a rewrite saves nothing, or the table lacks statistics.',
            HINT = 'Run ANALYZE or storagelab.column_profile() on it, or give column_types or column_order.';
  END IF;
  IF plan IS NOT NULL THEN
    SELECT coalesce(jsonb_object_agg(e->>'column_name', e->>'to'), '{}') INTO types FROM jsonb_array_elements(plan->'column_changes') e;
  END IF;
  IF column_types IS NOT NULL THEN
    IF jsonb_typeof(column_types) <> 'object' THEN
      RAISE EXCEPTION 'column_types must be a JSON object'
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Give {"column_name": "type", ...}.';
    END IF;
    types := types || column_types;
  END IF;
  ord := coalesce(column_order,
                  CASE WHEN plan IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(plan->'column_order'))::name[] END,
                  ARRAY(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
                         ORDER BY a.attnum));
  FOR k IN SELECT jsonb_object_keys(types) LOOP
    IF k <> ALL (ord) AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = $1 AND a.attname = k
                                        AND a.attnum > 0 AND NOT a.attisdropped) THEN
      RAISE EXCEPTION 'column % of % does not exist', quote_ident(k), $1
        USING ERRCODE = 'undefined_column', HINT = 'column_types maps existing columns to their new types.';
    END IF;
  END LOOP;
  tables := jsonb_build_array(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname($1),
              'columns', (SELECT jsonb_agg(CASE WHEN types ? c THEN jsonb_build_object('column_name', c, 'type', types->>c)
                                                ELSE jsonb_build_object('column_name', c) END ORDER BY n)
                            FROM unnest(ord) WITH ORDINALITY u(c, n))));
  -- checked by the engine (every column once, known types) and compared with the table
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            ORDER BY c.pos) FILTER (WHERE c.changed), '[]')
    INTO changes
    FROM storagelab_internal.rewrite_columns(tables) c;
  -- keys stay as they are, unless named in column_types: a primary or
  -- foreign key column retyped from one integer type to another changes
  -- with its whole foreign-key component (storagelab_internal.layout_key_component)
  SELECT string_agg(format('%I (%s)', a.attname, storagelab_internal.layout_key_reason($1, a.attnum)), ', ') INTO bad
    FROM jsonb_array_elements(changes) e
    JOIN pg_attribute a ON a.attrelid = $1 AND a.attname = e->>'column_name'
   WHERE storagelab_internal.layout_key_reason($1, a.attnum) IS NOT NULL
     AND NOT (coalesce(column_types ? (e->>'column_name'), false)
              AND storagelab_internal.layout_key_reason($1, a.attnum) IN ('primary key', 'foreign key', 'referenced by a foreign key')
              AND to_regtype(e->>'from') IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
              AND to_regtype(e->>'to') IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype));
  IF bad <> '' THEN
    RAISE EXCEPTION 'layout migrations do not change the type of these key columns'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Columns of %s: %s.', $1, bad),
            HINT = 'A primary or foreign key column changes from one integer type to another only when named in column_types (with its whole foreign-key component); identity and sequence-fed columns, and keys of other types, keep their types.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_plan(regclass, jsonb, name[], jsonb) IS
  'the layout plan of one table (its table_rewrite_plan row as jsonb, overridden by column_types and column_order), checked: the rewrite engine''s input and the changed columns; refuses type changes of key columns (0A000) except integer primary and foreign keys named in column_types';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_key_component
CREATE OR REPLACE FUNCTION storagelab_internal.layout_key_component(relation regclass, changes jsonb)
RETURNS TABLE (relid oid, column_name name, old_type text, new_type text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e     jsonb;
  comp  record;
  bad   text;
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x ORDER BY x->>'column_name' LOOP
    CONTINUE WHEN coalesce((SELECT storagelab_internal.layout_key_reason(relation, a.attnum) FROM pg_attribute a
                             WHERE a.attrelid = relation AND a.attname = e->>'column_name'), '')
                  NOT IN ('primary key', 'foreign key', 'referenced by a foreign key');
    SELECT * INTO comp FROM storagelab_internal.bigint_migration_component(ARRAY[relation], ARRAY[(e->>'column_name')::name]);
    SELECT string_agg(DISTINCT format('%s.%I', u.rel::regclass, a.attname), ', ') INTO bad
      FROM unnest(comp.crel, comp.catt) u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
     WHERE a.attidentity <> ''
        OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
                    WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                      AND d.refobjid = u.rel AND d.refobjsubid = u.att)
        OR EXISTS (SELECT 1 FROM pg_attrdef ad JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                     JOIN pg_class s ON s.oid = d.refobjid AND d.refclassid = 'pg_class'::regclass AND s.relkind = 'S'
                    WHERE ad.adrelid = u.rel AND ad.adnum = u.att);
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION 'layout migrations do not change the type of a key whose foreign-key component holds identity or sequence-fed columns'
        USING ERRCODE = 'feature_not_supported', DETAIL = format('The component of %s.%I holds %s.', relation, e->>'column_name', bad),
              HINT = 'Leave the key out of column_types; storagelab.bigint_migration_script() widens such a component to bigint.';
    END IF;
    RETURN QUERY
      SELECT DISTINCT u.rel, a.attname, e->>'from', e->>'to'
        FROM unnest(comp.crel, comp.catt) u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
       WHERE NOT (u.rel = relation::oid AND a.attname = e->>'column_name')
         AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = u.rel)
         AND to_regtype(format_type(a.atttypid, NULL)) = to_regtype(e->>'from');
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_key_component(regclass, jsonb) IS
  'the other columns of the foreign-key component of the primary or foreign key columns a layout plan retypes (topmost tables only, those of the key''s old type), retyped with them; 0A000 when the component holds an identity or sequence-fed column';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_script
CREATE OR REPLACE FUNCTION storagelab_internal.layout_script(relation regclass, mode text, column_types jsonb,
                                                  column_order name[], plan jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p          record;
  tabs       jsonb;             -- the engine's input: the table, then the rest of its key's component
  comp       jsonb;
  self_types jsonb;
  ch         jsonb;             -- the table's changes
  allch      jsonb;             -- and the component's, each with its "relation" (OID)
  rels       oid[];
  tc         record;
  rechecks   text := '';
  lock_list  text;
  lock_stmt  text[];
  s          text;
  ph         text;
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'unknown mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'The modes are blocking and online.';
  END IF;
  PERFORM storagelab_internal.rewrite_refuse(ARRAY[relation::oid]);
  SELECT * INTO p FROM storagelab_internal.layout_plan(relation, column_types, column_order, plan);
  IF p.changes = '[]' AND (SELECT array_agg(c->>'column_name' ORDER BY n) FROM jsonb_array_elements(p.tables->0->'columns') WITH ORDINALITY u(c, n))
                          = (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                              WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped) THEN
    RAISE EXCEPTION 'nothing to change: the columns keep their order and types'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give column_types or column_order.';
  END IF;
  -- a retyped key: the rest of its foreign-key component changes with it,
  -- other tables (rebuilt with the table, in their own column order) and
  -- the table's own columns referencing the key
  WITH k AS MATERIALIZED (SELECT * FROM storagelab_internal.layout_key_component(relation, p.changes))
  SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname(t.relid),
                   'columns', (SELECT jsonb_agg(coalesce((SELECT jsonb_build_object('column_name', a.attname, 'type', k.new_type)
                                                            FROM k WHERE k.relid = t.relid AND k.column_name = a.attname LIMIT 1),
                                                         jsonb_build_object('column_name', a.attname)) ORDER BY a.attnum)
                                 FROM pg_attribute a WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped))
                   ORDER BY storagelab_internal.bigint_migration_qname(t.relid)), '[]')
            FROM (SELECT DISTINCT k.relid FROM k WHERE k.relid <> relation::oid) t),
         (SELECT jsonb_object_agg(k.column_name, k.new_type) FROM k WHERE k.relid = relation::oid)
    INTO comp, self_types;
  tabs := p.tables;
  IF self_types IS NOT NULL THEN
    tabs := jsonb_build_array(jsonb_build_object('relation', tabs->0->>'relation', 'columns',
              (SELECT jsonb_agg(CASE WHEN self_types ? (c->>'column_name') AND NOT c ? 'type'
                                     THEN c || jsonb_build_object('type', self_types->>(c->>'column_name')) ELSE c END ORDER BY n)
                 FROM jsonb_array_elements(tabs->0->'columns') WITH ORDINALITY u(c, n))));
  END IF;
  tabs := tabs || comp;
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            -- a column of the table that changes with the key named in column_types
                            || CASE WHEN coalesce(self_types ? c.column_name, false) AND NOT coalesce(column_types ? c.column_name, false)
                                    THEN '{"component": true}'::jsonb ELSE '{}' END ORDER BY c.pos)
                  FILTER (WHERE c.changed AND c.table_ord = 1), '[]'),
         array_agg(DISTINCT c.relid)
    INTO ch, rels
    FROM storagelab_internal.rewrite_columns(tabs) c;
  PERFORM storagelab_internal.layout_preflight(relation, ch);
  PERFORM storagelab_internal.layout_function_check(relation, ch);
  rechecks := storagelab_internal.layout_recheck(relation, ch);
  allch := ch;
  FOR tc IN
    SELECT c.relid, jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type, 'component', true)
                              ORDER BY c.pos) AS ch
      FROM storagelab_internal.rewrite_columns(tabs) c
     WHERE c.changed AND c.table_ord > 1
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    PERFORM storagelab_internal.layout_preflight(tc.relid::regclass, tc.ch);
    PERFORM storagelab_internal.layout_function_check(tc.relid::regclass, tc.ch);
    rechecks := rechecks || storagelab_internal.layout_recheck(tc.relid::regclass, tc.ch);
    allch := allch || (SELECT jsonb_agg(x || jsonb_build_object('relation', tc.relid::text)) FROM jsonb_array_elements(tc.ch) x);
  END LOOP;
  -- everything the run takes ACCESS EXCLUSIVE on, locked together before the copy
  SELECT array_agg(x.lock_sql ORDER BY x.rel::oid),
         string_agg(format(E'--   %s (%s)\n', storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.rel)),
                           x.why), '' ORDER BY x.rel::oid)
    INTO lock_stmt, lock_list
    FROM (SELECT l.rel, min(l.lock_sql) AS lock_sql,
                 CASE WHEN l.rel = relation THEN 'the table'
                      WHEN l.rel = ANY (rels) THEN 'rebuilt with the table: its foreign-key component'
                      ELSE string_agg(DISTINCT l.why, '; ') END AS why
            FROM unnest(rels) r(oid), storagelab_internal.layout_lock_targets(r.oid::regclass) l
           GROUP BY l.rel) x;
  IF mode = 'online' THEN
    RETURN storagelab_internal.layout_online_script(relation, tabs, allch,
                                                    CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list);
  END IF;
  s := storagelab_internal.layout_header(relation, tabs, allch,
                                         CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list, NULL)
       || storagelab_internal.bigint_migration_blocking_settings()
       || E'-- Lock the table and every relation the run changes (see the header), all or none, in OID order;\n'
       || E'-- retried on lock_timeout.\n'
       || storagelab_internal.retry_block(lock_stmt, retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n' || rechecks
       || storagelab_internal.layout_function_recheck(relation, allch, 'before');
  FOREACH ph IN ARRAY ARRAY['create', 'copy', 'index', 'swap', 'validate', 'cleanup'] LOOP
    s := s || CASE ph WHEN 'create' THEN E'-- The new table beside the old one.\n'
                      WHEN 'copy' THEN E'-- Every row, in the new column order.\n'
                      WHEN 'index' THEN E'-- Indexes and constraints, built once on the full table.\n'
                      WHEN 'swap' THEN E'-- The swap: dependents, renames, sequences, foreign keys, triggers, rules, policies.\n'
                      WHEN 'validate' THEN E'-- Foreign keys re-pointed NOT VALID, validated.\n'
                      ELSE E'-- The old table.\n' END
           || coalesce((SELECT string_agg(r.statement || E';\n', '' ORDER BY r.ord)
                          FROM storagelab_internal.rewrite_statements(tabs, ph) r), '')
           || E'\n';
  END LOOP;
  s := s || storagelab_internal.layout_function_recheck(relation, allch, 'after')
         || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n'
         || E'-- Statistics of the new tables (SHARE UPDATE EXCLUSIVE: reads and writes go on).\n'
         || (SELECT string_agg(format(E'ANALYZE %s;\n', t->>'relation'), '' ORDER BY n) FROM jsonb_array_elements(tabs) WITH ORDINALITY u(t, n));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_script(regclass, text, jsonb, name[], jsonb) IS
  'the layout script of one table (with the rest of the foreign-key component of a key it retypes), given its table_rewrite_plan row (as jsonb; NULL: none): storagelab.layout_migration_script() without looking the plan up';

-- from extension/61_layout_migration.sql: storagelab.layout_migration_script
CREATE OR REPLACE FUNCTION storagelab.layout_migration_script(relation regclass, mode text DEFAULT 'blocking',
                                                   column_types jsonb DEFAULT NULL, column_order name[] DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN $1 IS NOT NULL THEN
           storagelab_internal.layout_script($1, $2, $3, $4,
             (SELECT to_jsonb(r) FROM storagelab.table_rewrite_plan r WHERE r.relation = $1)) END
$$;
COMMENT ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]) IS
  'a psql script that rebuilds a table in the column order and types of its storagelab.table_rewrite_plan row (column_types and column_order override it) by copy and swap, in one transaction (mode blocking) or in phases beside live traffic (mode online), with every dependent object, a partitioned table with all its partitions, an inheritance parent with its children; retypes an integer primary or foreign key named in column_types with its whole foreign-key component (other keys refused), refuses a partition or child alone, multiple inheritance, type changes that break functions, and values that do not fit (checked before, and again under the locks); NULL relation: NULL';

-- from extension/61_layout_migration.sql: storagelab.layout_migration_plan
CREATE OR REPLACE FUNCTION storagelab.layout_migration_plan()
RETURNS TABLE (relation regclass, saved_bytes int8, saved_pretty text, saved_pct numeric, table_bytes int8,
               column_changes jsonb, column_order name[], evidence text, advice text, script text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p         record;
  min_pct   numeric := storagelab_internal.setting('layout_migration.min_saved_pct')::numeric;
  min_bytes int8 := pg_size_bytes(storagelab_internal.setting('layout_migration.min_saved_bytes'));
BEGIN
  FOR p IN
    SELECT r.*, round(100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0), 1) AS pct
      FROM storagelab.table_rewrite_plan r
     WHERE r.estimated_saved_bytes >= min_bytes
        OR 100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0) >= min_pct
     ORDER BY r.estimated_saved_bytes DESC, r.relation::oid
  LOOP
    relation := p.relation; saved_bytes := p.estimated_saved_bytes; saved_pretty := p.estimated_saved_pretty;
    saved_pct := p.pct; table_bytes := pg_relation_size(p.relation); column_changes := p.column_changes;
    column_order := p.column_order; evidence := p.evidence;
    BEGIN
      script := storagelab_internal.layout_script(p.relation, 'blocking', NULL, NULL, to_jsonb(p));
      advice := 'run the script in a maintenance window: it locks the table while it copies';
    EXCEPTION WHEN feature_not_supported OR data_exception OR wrong_object_type OR dependent_objects_still_exist THEN
      script := NULL;
      advice := left(SQLERRM, 100);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.layout_migration_plan() IS
  'one row per table whose storagelab.table_rewrite_plan saves at least layout_migration.min_saved_pct of the table or layout_migration.min_saved_bytes (settings): the saving, the plan and its blocking layout_migration_script, or in advice why no script can be written';

-- END generated section layout_safety

-- ---------------------------------------------------------------------------
-- Mode 'online' of the INT->BIGINT generators is copy and swap ('copy_swap'
-- is its alias); 1.0's shadow-column writer is mode 'shadow'.  Copy and swap
-- widens functions (function_hazards => 'widen') and makes the sequences
-- bigint in its swap, refuses publications FOR ALL TABLES or FOR TABLES IN
-- SCHEMA of the tables' schemas (generator and phases), and applies the
-- back logs of a rollback after the swap referenced tables first.
-- rewrite_online_phases takes the statements of the swap and swap back;
-- the swap runs the plpgsql_check checks of the blocking script.
DROP FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text);
-- Copied from the install parts by
--   scripts/upgrade-section.sh online extension/storagelab--1.0--1.1.sql \
--     extension/27_bigint_script.sql:storagelab.bigint_migration_group_script \
--     extension/27_bigint_script.sql:storagelab_internal.bigint_migration_write \
--     extension/27_bigint_script.sql:storagelab.bigint_migration_plan \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_apply_back \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_publications \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_publication_guard \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_swap_statements \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_phases \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.bigint_migration_copy_swap_script
-- (run it again after changing any of them).
-- BEGIN generated section online
-- from extension/27_bigint_script.sql: storagelab.bigint_migration_group_script
CREATE OR REPLACE FUNCTION storagelab.bigint_migration_group_script(relations regclass[], column_names name[], mode text DEFAULT 'blocking',
                                                         function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF mode IS NULL THEN
    RAISE EXCEPTION 'mode must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use mode => ''blocking''.';
  ELSIF mode NOT IN ('blocking', 'online', 'copy_swap', 'shadow') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid modes are ''blocking'', ''online'' (alias ''copy_swap'') and ''shadow''.';
  END IF;
  RETURN storagelab_internal.bigint_migration_write(
           storagelab_internal.bigint_migration_model(relations, column_names), relations, column_names, mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text, text) IS
  'psql script converting several int columns (and their foreign-key components and everything depending on them) to bigint: mode blocking (one transaction, each table rewritten once), online (copy and swap, in phases; alias copy_swap) or shadow (shadow columns, in phases); function_hazards refuse, widen or accept';

-- from extension/27_bigint_script.sql: storagelab_internal.bigint_migration_write
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_write(objs storagelab.bigint_migration_object[],
                                                           relations regclass[], column_names name[], mode text,
                                                           function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: the copy-and-swap writer is created later in the install script (part 63)
  RETURN CASE WHEN mode IN ('online', 'copy_swap') THEN storagelab_internal.bigint_migration_copy_swap_script(objs, relations, column_names, function_hazards)
              WHEN mode = 'shadow' THEN storagelab_internal.bigint_migration_online_script(objs, relations, column_names, function_hazards)
              ELSE storagelab_internal.bigint_migration_blocking_script(objs, relations, column_names, function_hazards) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'the INT->BIGINT script of a model, in mode blocking, online (copy and swap; alias copy_swap) or shadow (shadow columns), function_hazards refuse, widen or accept';

-- from extension/27_bigint_script.sql: storagelab.bigint_migration_plan
CREATE OR REPLACE FUNCTION storagelab.bigint_migration_plan(mode text DEFAULT 'blocking', function_hazards text DEFAULT 'refuse')
RETURNS TABLE (step int, severity text, columns text[], relations regclass[], script text, blockers text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  g    record;
  objs storagelab.bigint_migration_object[];
  msg text; det text; st text;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online', 'copy_swap', 'shadow') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid modes are ''blocking'', ''online'' (alias ''copy_swap'') and ''shadow''.';
  END IF;
  PERFORM storagelab_internal.bigint_migration_apply_hazards('{}', function_hazards);   -- checks the value
  step := 0;
  FOR g IN SELECT * FROM storagelab_internal.bigint_migration_plan_groups() LOOP
    step := step + 1;
    severity := CASE WHEN g.critical THEN 'critical' ELSE 'warning' END;
    columns := ARRAY(SELECT format('%s.%I', storagelab_internal.bigint_migration_qname(x.r), x.c)
                       FROM unnest(g.relations, g.column_names) AS x(r, c));
    relations := NULL; script := NULL; blockers := NULL;
    BEGIN
      objs := storagelab_internal.bigint_migration_model(g.relations, g.column_names);
      relations := ARRAY(SELECT d.rel FROM (SELECT DISTINCT x.relation AS rel FROM unnest(objs) x WHERE x.kind = 'column') d
                          ORDER BY storagelab_internal.bigint_migration_qname(d.rel));
      script := storagelab_internal.bigint_migration_write(objs, g.relations, g.column_names, mode, function_hazards);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
      script := NULL;
      blockers := format('%s: %s%s', st, msg, CASE WHEN det <> '' THEN E'\n' || det ELSE '' END);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_plan(text, text) IS
  'one INT->BIGINT migration script (mode blocking, online (alias copy_swap) or shadow; function_hazards refuse, widen or accept) per group of columns that storagelab.int_overflow rates warning or critical (columns whose foreign-key components share a table are grouped, so each table is rewritten once); critical groups first; blockers instead of a script when none can be produced';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_apply_back
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_apply_back(dirs jsonb)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  n      int := jsonb_array_length(dirs);
  idl    bigint[];
  ord    int[] := '{}';
  rest   int[] := ARRAY(SELECT generate_series(0, jsonb_array_length(dirs) - 1));
  ready  int[];
  i      int;
  d      jsonb;
  kl     text;
  tk     text;
  lk     text;
  sk     text;
  cols   text;
  refd   boolean;
  total  bigint := 0;
  logs   jsonb := '{}';
BEGIN
  -- each log's rows as they are now (the tables are locked: no more come)
  FOR i IN 0 .. n - 1 LOOP
    EXECUTE format('SELECT coalesce(array_agg(storagelab_seq ORDER BY storagelab_seq), ''{}'') FROM %s', dirs->i->>'log') INTO idl;
    logs := logs || jsonb_build_object(i::text, to_jsonb(idl));
    total := total + cardinality(idl);
  END LOOP;
  IF total = 0 THEN
    RETURN 0;
  END IF;
  -- referenced tables first (a table, or one of its ancestors if it is a partition, holds the foreign key)
  WHILE cardinality(rest) > 0 LOOP
    ready := ARRAY(SELECT r FROM unnest(rest) r
                    WHERE NOT EXISTS (
                      SELECT 1 FROM unnest(rest) o, pg_constraint c
                       WHERE o <> r AND c.contype = 'f'
                         AND c.conrelid IN (SELECT (dirs->r->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->r->>'target')::regclass) a)
                         AND c.confrelid IN (SELECT (dirs->o->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->o->>'target')::regclass) a))
                    ORDER BY r);
    IF cardinality(ready) = 0 THEN
      ready := rest;                                  -- a cycle: the component's order
    END IF;
    ord := ord || ready;
    rest := ARRAY(SELECT r FROM unnest(rest) r WHERE r <> ALL (ready) ORDER BY r);
  END LOOP;
  -- inserts and updates, referenced tables first
  FOREACH i IN ARRAY ord LOOP
    d := dirs->i;
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    kl := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    tk := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    lk := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    refd := EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f'
                       AND c.confrelid IN (SELECT (d->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((d->>'target')::regclass) a));
    IF kl IS NOT NULL AND refd THEN
      SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_attribute a
       WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         AND a.attidentity <> 'a' AND NOT a.attname::text IN (SELECT jsonb_array_elements_text(d->'key'));
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))\n ON CONFLICT (%s) DO %s',
                     d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING idl;
    ELSIF kl IS NOT NULL THEN
      EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s)',
                     d->>'target', kl, d->>'log', tk, lk) USING idl;
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING idl;
    ELSE
      SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_attribute a
       WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
      EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.storagelab_row) '
                     'WHERE l.storagelab_seq = ANY ($1) AND l.storagelab_op = ''I'' ORDER BY l.storagelab_seq', d->>'target', cols, d->>'log')
        USING idl;
    END IF;
  END LOOP;
  -- deletes, referencing tables first
  FOR i IN SELECT o FROM unnest(ord) WITH ORDINALITY u(o, k) ORDER BY k DESC LOOP
    d := dirs->i;
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    kl := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    refd := EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f'
                       AND c.confrelid IN (SELECT (d->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((d->>'target')::regclass) a));
    IF kl IS NOT NULL AND refd THEN
      tk := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      lk := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      sk := (SELECT string_agg('s.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s) '
                     'AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))',
                     d->>'target', kl, d->>'log', tk, lk, d->>'source', sk, lk) USING idl;
    ELSIF kl IS NULL THEN
      EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                     'FROM %1$s t WHERE to_jsonb(t) IN (SELECT storagelab_row FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')) c '
                     'JOIN (SELECT storagelab_row AS r, count(*) AS n FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'' GROUP BY storagelab_row) w ON w.r = c.j AND c.n <= w.n)',
                     d->>'target', d->>'log') USING idl;
    END IF;
    EXECUTE format('DELETE FROM %s WHERE storagelab_seq = ANY ($1)', d->>'log') USING idl;
  END LOOP;
  RETURN total;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply_back(jsonb) IS
  'the back logs of a rollback after a copy-and-swap swap applied whole into the old tables: inserts and updates with referenced tables first, then deletes with referencing tables first, so that the old tables'' foreign keys hold at each statement';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_publications
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_publications(roots oid[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_members belongs to the rewrite engine
  RETURN ARRAY(SELECT p.pubname::text FROM pg_publication p
                WHERE p.puballtables OR EXISTS (
                        SELECT 1 FROM pg_publication_namespace pn JOIN pg_class c ON c.relnamespace = pn.pnnspid
                         WHERE pn.pnpubid = p.oid AND c.oid IN (SELECT m.relid FROM storagelab_internal.rewrite_members($1) m))
                ORDER BY 1);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_publications(oid[]) IS
  'the publications FOR ALL TABLES or FOR TABLES IN SCHEMA that would publish the new tables and change logs of a copy-and-swap rewrite of these tables (and their partitions and children)';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_publication_guard
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_publication_guard(schemas name[])
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(format(
    E'\nDECLARE\n  pubs text := (SELECT string_agg(quote_ident(p.pubname), '', '' ORDER BY p.pubname) FROM pg_publication p\n'
    || E'                 WHERE p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_namespace pn JOIN pg_namespace n ON n.oid = pn.pnnspid\n'
    || E'                                                  WHERE pn.pnpubid = p.oid AND n.nspname = ANY (%L::name[])));\n'
    || E'BEGIN\n  IF pubs IS NOT NULL THEN\n'
    || E'    RAISE EXCEPTION ''a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of this migration''\n'
    || E'      USING ERRCODE = ''feature_not_supported'', DETAIL = format(''Publications: %%s.'', pubs),\n'
    || E'            HINT = ''Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), then run this phase again; or roll back and use the blocking mode.'';\n'
    || E'  END IF;\nEND\n', $1)) || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_publication_guard(name[]) IS
  'a DO statement refusing (0A000) a copy-and-swap phase while a publication FOR ALL TABLES or FOR TABLES IN SCHEMA of these schemas exists';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_swap_statements
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_swap_statements(tables jsonb, phase text, pre text[], post text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rels  regclass[];
  stmts text[];
  i     int;
  j     int;
BEGIN
  -- PL/pgSQL: rewrite_statements belongs to the rewrite engine
  SELECT array_agg(r.relation ORDER BY r.ord), array_agg(r.statement ORDER BY r.ord) INTO rels, stmts
    FROM storagelab_internal.rewrite_statements(tables, phase) r;
  i := (SELECT min(n) FROM generate_subscripts(rels, 1) n WHERE rels[n] IS NOT NULL);
  j := (SELECT max(n) FROM generate_subscripts(rels, 1) n WHERE rels[n] IS NOT NULL);
  IF i IS NULL THEN
    RETURN coalesce(stmts, '{}') || coalesce(pre, '{}') || coalesce(post, '{}');
  END IF;
  RETURN stmts[1:i - 1] || coalesce(pre, '{}') || stmts[i:j] || coalesce(post, '{}') || stmts[j + 1:];
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_swap_statements(jsonb, text, text[], text[]) IS
  'the rewrite engine''s swap or swap_back statements with the caller''s own after the dependent objects are dropped (pre) and before they are created again (post)';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_phases
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_phases(tables jsonb, mid text, swap_pre text[] DEFAULT '{}', swap_post text[] DEFAULT '{}',
                                                          back_pre text[] DEFAULT '{}', back_post text[] DEFAULT '{}',
                                                          swap_end text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(tables, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(tables, true);
  d       jsonb;
  retries int := storagelab_internal.setting('scripts.lock_retries')::int;
  created text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  ours    text := (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
                     FROM jsonb_array_elements(fwd) x);
  others  text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                     FROM jsonb_array_elements(fwd) x);
  swapped text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x);
  copied  text := format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                         mid, jsonb_array_length(fwd));
  indexed text := (SELECT string_agg(format('EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(%L))', x->>'target'), ' AND ')
                     FROM jsonb_array_elements(fwd) x WHERE x->'key' <> 'null');
  locks   text;
  s       text := '';
  apply_f text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x);
  apply_b text[] := ARRAY[format('SELECT storagelab_internal.rewrite_online_apply_back(%L::jsonb)', back)];
  st      text[];
  roots   oid[] := ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t);
  validate text := '';
  guard   text;
BEGIN
  -- a partitioned table without partitions has no rows to copy, log or replay
  IF EXISTS (SELECT 1 FROM unnest(roots) r WHERE NOT EXISTS (
               SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT format('The partitioned table %s has no partitions.', string_agg(r::regclass::text, ', '))
                        FROM unnest(roots) r
                       WHERE NOT EXISTS (SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)),
            HINT = 'Use the blocking mode.';
  END IF;
  indexed := coalesce(indexed, 'true');
  -- a publication of all tables or of these schemas would publish the new tables and logs: refused by every phase that writes them
  guard := storagelab_internal.rewrite_online_publication_guard(ARRAY(
             SELECT DISTINCT n.nspname FROM storagelab_internal.rewrite_members(roots) m
               JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1));
  -- the component, the new tables and the tables whose foreign keys the swap re-points, locked in one statement
  -- (a partitioned table's lock covers its partitions)
  locks := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', (SELECT string_agg(x, ', ' ORDER BY x) FROM (
             SELECT t->>'relation' AS x FROM jsonb_array_elements(tables) t
             UNION SELECT f.qrel FROM storagelab_internal.rewrite_foreign_keys(roots) f WHERE f.direction = 'to') y));
  -- start
  st := ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'create') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d) || format('COMMENT ON TABLE %s IS %L', d->>'log', tag);
  END LOOP;
  s := s || E'\\if :ph_start\n' || guard
         || storagelab_internal.rewrite_online_do(st, created || ' AND ' || ours, 'phase start has run already', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', retries)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', created || ' AND ' || ours, 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, fwd,
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := apply_f || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n' || guard
         || storagelab_internal.rewrite_online_do(st, '(' || indexed || ' AND ' || copied || ') OR (' || swapped || ')', 'phase index has run already',
                                                  copied, 'the copy is not complete: run phase copy first', retries)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(fwd) x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', indexed || ' AND ' || copied, 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, fwd,
                   1000 * jsonb_array_length(fwd));
  -- swap
  st := ARRAY[locks] || apply_f;
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap', swap_pre, swap_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, false) || swap_end;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d);
  END LOOP;
  s := s || E'\\if :ph_swap\n' || guard
         || storagelab_internal.rewrite_online_do(st, swapped, 'phase swap has run already',
                                                  '(' || swapped || ') OR (' || indexed || ' AND ' || copied || ')', 'run phases copy, index and replay first', retries)
         || E'\\endif\n';
  -- validate
  FOR d IN SELECT to_jsonb(r.statement) FROM storagelab_internal.rewrite_statements(tables, 'validate') r ORDER BY r.ord LOOP
    validate := validate || storagelab_internal.retry_block(ARRAY[d #>> '{}'], retries);
  END LOOP;
  s := s || E'\\if :ph_validate\n' || validate || E'\\endif\n';
  -- cleanup
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(back) x UNION ALL SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'cleanup') r ORDER BY r.ord)
           || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped, then drop what start created
  st := ARRAY[locks] || apply_b;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap_back', back_pre, back_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, true);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  s := s || E'\\if :ph_rollback\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  -- one statement: the new tables may reference each other after a swap back
  -- (every table of a tree: inheritance children are not dropped with their parent)
  st := st || (SELECT format('DROP TABLE IF EXISTS %s', string_agg(format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), ', '))
                 FROM storagelab_internal.rewrite_members(roots) m JOIN pg_class c ON c.oid = m.relid
                 JOIN pg_namespace n ON n.oid = c.relnamespace);
  st := st || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  -- the foreign keys a swap back re-pointed NOT VALID, validated (of those that were valid; a no-op before a swap)
  s := s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
         || validate || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text, text[], text[], text[], text[], text[]) IS
  'the phases start, copy, index, replay, swap, validate, cleanup and rollback of an online copy-and-swap script for a rewrite engine input, as psql \if sections; the caller''s statements run in the swap (swap_pre, swap_post) and the swap back (back_pre, back_post) around the dependent objects, and at the end of the swap (swap_end)';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.bigint_migration_copy_swap_script
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[],
                                                                      relations regclass[], column_names name[],
                                                                      function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables    jsonb;
  mid       text;
  s         text;
  swap_pre  text[] := '{}';
  swap_post text[] := '{}';
  back_pre  text[] := '{}';
  back_post text[] := '{}';
  swap_end  text[] := '{}';
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  -- in the swap, around the dependent objects: the functions to widen
  -- (checked unchanged since generation, dropped, created with bigint
  -- parameters) and the sequences' types; in the swap back, the reverse
  IF EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'widened_function') THEN
    SELECT array_agg(x.drop_sql ORDER BY x.identity),
           array_agg(x.create_sql ORDER BY x.identity),
           array_agg(format('DROP %s %s', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, x.hazard_target) ORDER BY x.identity),
           array_agg(pg_get_functiondef(x.objid) || E';\n'
                     || format(E'ALTER ROUTINE %s OWNER TO %I;\n', x.objid::regprocedure, pg_get_userbyid(p.proowner))
                     || storagelab_internal.bigint_migration_acl_sql('ROUTINE', x.objid::regprocedure::text, p.proacl, p.proowner)
                     || CASE WHEN obj_description(x.objid, 'pg_proc') IS NULL THEN ''
                             ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', x.objid::regprocedure, obj_description(x.objid, 'pg_proc')) END
                     ORDER BY x.identity)
      INTO swap_pre, swap_post, back_pre, back_post
      FROM unnest(objs) x JOIN pg_proc p ON p.oid = x.objid
     WHERE x.kind = 'widened_function';
  END IF;
  swap_post := swap_post || ARRAY(SELECT x.create_sql FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  -- first in the swap's own statements: the functions to widen are unchanged since generation (55000),
  -- and, with plpgsql_check installed, the errors of the PL/pgSQL functions that use these tables;
  -- last: no new error (22000, the swap rolls back)   (part 28)
  swap_pre := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before'), '')], NULL) || swap_pre;
  swap_end := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after'), '')], NULL);
  back_post := back_post || ARRAY(SELECT format('ALTER SEQUENCE %s AS %s', storagelab_internal.bigint_migration_qname(x.objid), format_type(q.seqtypid, NULL))
                                    FROM unnest(objs) x JOIN pg_sequence q ON q.seqrelid = x.objid
                                   WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  IF to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NULL THEN
    RAISE EXCEPTION 'mode online needs the rewrite engine, which this installation lacks'
      USING ERRCODE = 'feature_not_supported', HINT = 'Use mode ''shadow'' or ''blocking''.';
  END IF;
  -- a child's own column would not be converted with its parent's (the engine keeps a child's own columns' types)
  FOR s IN
    SELECT format('%s.%I', x.relation, x.column_name)
      FROM unnest(objs) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
     WHERE x.kind = 'column' AND a.attinhcount = 0 AND EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)
     ORDER BY 1 LIMIT 1
  LOOP
    RAISE EXCEPTION 'mode online does not convert a column of an inheritance child that its parent lacks'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Column %s.', s),
            HINT = 'Use mode ''blocking'' or ''shadow''.';
  END LOOP;
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  -- a publication of all tables, or of a schema of these tables, would publish the new tables and the logs
  -- (the subscribers lack them: their apply stops at the first copied row)
  IF cardinality(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) > 0 THEN
    RAISE EXCEPTION 'a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of an online migration'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('Publications: %s.', (SELECT string_agg(quote_ident(x), ', ')
                       FROM unnest(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) x)),
            HINT = 'Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), or use mode ''blocking''.';
  END IF;
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  s := format(E'-- storagelab %s: INT to BIGINT migration (mode online: copy and swap), migration id %s\n',
              (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || coalesce((SELECT E'-- Sequences made bigint in the swap (their type given back by a swap back):\n'
                        || string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.objid)) || E'\n', '' ORDER BY x.identity)
                   FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL), '')
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n\\set ON_ERROR_STOP on\n'
    || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
    || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
    || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
    || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
    || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
    || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
          FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
    || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
    || E'\\if :ph_bad\n'
    || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s || storagelab_internal.rewrite_online_phases(tables, mid, swap_pre, swap_post, back_pre, back_post, swap_end);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_copy_swap_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the INT->BIGINT script in mode online (alias copy_swap): the component rebuilt by the rewrite engine beside the old tables, copied in batches, kept in step by change logs, swapped in one short transaction; phases start to cleanup, and rollback';

-- END generated section online

-- ---------------------------------------------------------------------------
-- Row-level security: the statements of the generated scripts that copy or
-- rewrite rows run with row_security off, so a policy that would hide rows
-- from the role running them (FORCE ROW LEVEL SECURITY on a table its
-- owner migrates) stops the script with an error instead of leaving rows
-- out of the copy.
-- Copied from the install parts by
--   scripts/upgrade-section.sh row_security extension/storagelab--1.0--1.1.sql \
--     extension/26_bigint_backfill.sql:storagelab.bigint_migration_backfill \
--     extension/40_toast.sql:storagelab.storage_migration_script \
--     extension/61_layout_migration.sql:storagelab_internal.layout_script \
--     extension/62_rewrite_online.sql:storagelab_internal.rewrite_online_apply \
--     extension/62_rewrite_online.sql:storagelab.rewrite_online_copy \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_apply_back
-- (run it again after changing any of them).
-- BEGIN generated section row_security
-- from extension/26_bigint_backfill.sql: storagelab.bigint_migration_backfill
CREATE OR REPLACE PROCEDURE storagelab.bigint_migration_backfill(migration text, relation regclass,
                                                      new_columns name[], old_columns name[],
                                                      batch_time_ms numeric, batch_blocks int,
                                                      pause interval, lock_retries int)
LANGUAGE plpgsql
AS $fn$
DECLARE
  qn       text := (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)      -- as the script names it
                      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = relation);
  copy_sql text;
  b        bigint;
  maxb     bigint;
  isdone   boolean;
  n        bigint;             -- blocks per batch
  nbatch   int := 0;
  tries    int;
  nb       bigint;             -- blocks in this batch: n, or fewer at the end of the table
  nrows    bigint;
  repl     boolean := false;   -- session_replication_role was set (superusers only)
  t_start  timestamptz := pg_catalog.clock_timestamp();
  t0       timestamptz;
  ms       numeric;
  rate     numeric;            -- rows copied per ms by the last batch that copied rows
  avgdens  numeric;            -- rows per block, table average
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
  caller_rls  text := pg_catalog.current_setting('row_security');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  IF pg_catalog.cardinality(new_columns) IS DISTINCT FROM pg_catalog.cardinality(old_columns) OR pg_catalog.cardinality(new_columns) = 0 THEN
    RAISE EXCEPTION 'new_columns and old_columns must be non-empty arrays of the same length'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- dynamic, with parameters: no PL/pgSQL variable can be mistaken for a column of the table
  copy_sql := pg_catalog.format('UPDATE ONLY %s SET %s WHERE ctid >= $1 AND ctid < $2 AND (%s)', qn,
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I = %I', u.nw, u.od), ', ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)),
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I IS DISTINCT FROM %I', u.nw, u.od), ' OR ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)));
  SELECT p.next_block, p.max_block, p.done, coalesce(p.batch_blocks, bigint_migration_backfill.batch_blocks) INTO b, maxb, isdone, n
    FROM storagelab.bigint_migration_progress p
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'phase expand has not run for %', qn
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Run phase expand first.';
  END IF;
  IF isdone THEN
    PERFORM pg_catalog.set_config('search_path', caller_path, true);
    RETURN;
  END IF;
  SELECT CASE WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples / c.relpages ELSE 1 END INTO avgdens
    FROM pg_catalog.pg_class c WHERE c.oid = relation;
  IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
    SET session_replication_role = replica;
    repl := true;
  END IF;
  WHILE b <= maxb LOOP
    tries := 0;
    LOOP
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      BEGIN
        -- row_security off: a policy that hides rows from this role is an
        -- error here, not rows left without their new column's value
        PERFORM pg_catalog.set_config('row_security', 'off', true);
        EXECUTE copy_sql USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
        GET DIAGNOSTICS nrows = ROW_COUNT;
        PERFORM pg_catalog.set_config('row_security', caller_rls, true);
        EXIT;
      EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
        -- a row of this batch is locked by a client: give way, retry the batch with half its blocks
        tries := tries + 1;
        IF tries > lock_retries THEN RAISE; END IF;
        n := greatest(n / 2, 1);
        PERFORM pg_catalog.pg_sleep(least(0.1 * tries, 2));
      END;
    END LOOP;
    ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
    b := b + nb;
    IF batch_time_ms > 0 AND nrows > 0 THEN
      rate := nrows / greatest(ms, 0.01);
    END IF;
    IF batch_time_ms > 0 AND rate IS NOT NULL THEN
      n := greatest(1, least(2 * n, pg_catalog.floor(rate * batch_time_ms / greatest(avgdens, nrows::numeric / nb))));
    END IF;
    UPDATE storagelab.bigint_migration_progress p
       SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
           last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
           started_at = coalesce(p.started_at, t_start), updated_at = pg_catalog.now()
     WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
    COMMIT;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    nbatch := nbatch + 1;
    IF limit_batches > 0 AND nbatch >= limit_batches THEN
      RAISE NOTICE '% stopped after % batches at block % of %; run phase backfill again to resume', qn, nbatch, b, maxb;
      IF repl THEN RESET session_replication_role; END IF;
      PERFORM pg_catalog.set_config('search_path', caller_path, true);
      RETURN;
    END IF;
    IF nrows > 0 THEN
      PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
    END IF;
  END LOOP;
  IF repl THEN RESET session_replication_role; END IF;
  UPDATE storagelab.bigint_migration_progress p SET done = true, updated_at = pg_catalog.now()
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  COMMIT;
  PERFORM pg_catalog.set_config('search_path', caller_path, true);
END
$fn$;
COMMENT ON PROCEDURE storagelab.bigint_migration_backfill(text, regclass, name[], name[], numeric, int, interval, int) IS
  'backfill of one table of an online INT->BIGINT migration (its script''s phase backfill CALLs it): batches of heap blocks, one COMMIT each, resumable from storagelab.bigint_migration_progress';

-- from extension/40_toast.sql: storagelab.storage_migration_script
CREATE OR REPLACE FUNCTION storagelab.storage_migration_script(
    relation regclass, column_name name, storage text DEFAULT 'external',
    rewrite_existing boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel         pg_class;
  att         pg_attribute;
  words       text[];
  target      text;            -- external | extended | main
  method      text;            -- pglz | lz4 | NULL (unchanged)
  lock_to     text := storagelab_internal.setting('scripts.lock_timeout');
  retries     int  := storagelab_internal.setting('scripts.lock_retries')::int;
  typ         text;
  base_typ    oid;
  rewrite_expr text;
  set_list    text;            -- the rewrite's SET clause
  rewrite_cond text;
  col         text := quote_ident(column_name);
  out         text;
  step        int := 0;
  t           record;
  stmt        text;
BEGIN
  SELECT * INTO rel FROM pg_class WHERE oid = relation;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'relation with OID % does not exist', relation::oid
      USING ERRCODE = 'undefined_table',
            HINT = 'Pass an existing table as a regclass, for example ''public.files''::regclass.';
  END IF;
  IF rel.relkind NOT IN ('r', 'p') THEN
    RAISE EXCEPTION '"%" is not a table', relation
      USING ERRCODE = 'wrong_object_type',
            DETAIL = 'storage_migration_script() writes ALTER TABLE and UPDATE statements, which apply to tables and partitioned tables only.',
            HINT = 'For a materialized view, run ALTER MATERIALIZED VIEW ... ALTER COLUMN ... SET STORAGE, then REFRESH MATERIALIZED VIEW.';
  END IF;
  SELECT * INTO att FROM pg_attribute
   WHERE attrelid = relation AND attname = column_name AND attnum > 0 AND NOT attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of relation "%" does not exist', column_name, relation
      USING ERRCODE = 'undefined_column',
            HINT = 'Pass the name of one of the table''s columns, as stored (case-sensitive).';
  END IF;
  typ := format_type(att.atttypid, NULL);
  -- A domain is handled as the type it is built on (domains over domains
  -- too): the rewrite's value is of that type and is assigned back to the
  -- domain column, which checks the domain's constraints.
  WITH RECURSIVE d(oid, base) AS (
    SELECT ty.oid, ty.typbasetype FROM pg_type ty WHERE ty.oid = att.atttypid
    UNION ALL
    SELECT ty.oid, ty.typbasetype FROM pg_type ty JOIN d ON ty.oid = d.base
  )
  SELECT d.oid INTO base_typ FROM d WHERE d.base = 0;
  -- Names are interpolated into comment lines too: there, line breaks in a
  -- (quoted) name become spaces, so that no name can end a comment.
  rewrite_expr := CASE base_typ
    WHEN 'bytea'::regtype   THEN format('%s || ''''::bytea', col)
    WHEN 'text'::regtype    THEN format('%s || ''''::text', col)
    WHEN 'varchar'::regtype THEN format('%s || ''''::text', col)
    WHEN 'jsonb'::regtype   THEN format('%s::text::jsonb', col)
    WHEN 'json'::regtype    THEN format('%s::text::json', col)   -- json keeps its text as it is
    END;
  IF rewrite_expr IS NULL THEN
    RAISE EXCEPTION 'column "%" of relation "%" has type %, which storage_migration_script() does not handle', column_name, relation, typ
      USING ERRCODE = 'datatype_mismatch',
            DETAIL = 'Supported types are bytea, text, character varying, json and jsonb, and domains over them.',
            HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand for other types.';
  END IF;
  set_list := format('%s = %s', col, rewrite_expr);
  IF att.attgenerated <> '' THEN
    -- A generated column cannot be assigned: assigning the columns its
    -- expression reads to themselves makes PostgreSQL compute it anew (a new
    -- value, stored as the new setting says).
    SELECT string_agg(format('%1$I = %1$I', r.attname), ', ' ORDER BY r.attnum) INTO set_list
      FROM pg_attrdef ad
      JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
      JOIN pg_attribute r ON r.attrelid = dep.refobjid AND r.attnum = dep.refobjsubid
     WHERE ad.adrelid = relation AND ad.adnum = att.attnum
       AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = relation
       AND dep.refobjsubid > 0 AND dep.refobjsubid <> att.attnum AND NOT r.attisdropped
       AND r.attidentity <> 'a';  -- GENERATED ALWAYS AS IDENTITY can only be set to DEFAULT
    IF att.attgenerated <> 's' OR (rewrite_existing AND set_list IS NULL) THEN
      RAISE EXCEPTION 'column "%" of relation "%" is a generated column whose values storage_migration_script() cannot rewrite', column_name, relation
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'Only a stored generated column whose expression reads other columns (not identity columns GENERATED ALWAYS) is rewritten: the script assigns those columns to themselves.',
              HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand.';
    END IF;
  END IF;

  -- The DO blocks below are dollar-quoted; names must not end them early.
  IF relation::text ~ '\$(step|rewrite)\$' OR col ~ '\$(step|rewrite)\$' THEN
    RAISE EXCEPTION 'relation or column name contains a dollar-quote tag of the generated script'
      USING ERRCODE = 'invalid_name',
            HINT = 'Write the ALTER TABLE statements by hand for this object.';
  END IF;

  words := regexp_split_to_array(lower(btrim(storage)), '\s+');
  IF array_length(words, 1) = 1 AND words[1] IN ('pglz', 'lz4') THEN
    words := ARRAY['extended', words[1]];
  END IF;
  target := words[1];
  method := words[2];
  IF target NOT IN ('external', 'extended', 'main') OR array_length(words, 1) > 2
     OR (method IS NOT NULL AND method NOT IN ('pglz', 'lz4'))
     OR (target = 'external' AND method IS NOT NULL) THEN
    RAISE EXCEPTION 'invalid storage "%"', storage
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storage is one of external, extended or main, optionally followed by a compression method (pglz or lz4) for extended and main; lz4 alone means extended lz4.',
            HINT = 'PLAIN is not offered: it makes rows with large values fail to insert.';
  END IF;
  IF method = 'lz4' AND NOT (SELECT 'lz4' = ANY (enumvals) FROM pg_settings
                              WHERE name = 'default_toast_compression') THEN
    RAISE EXCEPTION 'this server was built without lz4 support'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Use pglz, or a server built with --with-lz4.';
  END IF;

  rewrite_cond := CASE
    WHEN target = 'external' THEN format('pg_catalog.pg_column_compression(%s) IS NOT NULL', col)
    -- pg_column_size(), not octet_length(): it takes any type (jsonb has no
    -- octet_length) and, like octet_length(), reads a value's header only.
    -- An uncompressed value's stored size is its length plus its header; a
    -- value compressed with the other method differs from the target at
    -- any size.
    WHEN method IS NOT NULL THEN format(
      '(pg_catalog.pg_column_compression(%1$s) IS DISTINCT FROM %2$L AND (pg_catalog.pg_column_compression(%1$s) IS NOT NULL OR pg_catalog.pg_column_size(%1$s) >= %3$s))',
      col, method, 2032)
    ELSE format('(pg_catalog.pg_column_compression(%1$s) IS NULL AND pg_catalog.pg_column_size(%1$s) >= %2$s)', col, 2032)
    END;

  out := format(E'-- storagelab %s: storage migration script\n'
                '-- generated %s by storagelab.storage_migration_script()\n'
                '-- table:   %s (%s)\n'
                '-- column:  %s %s, now STORAGE %s, COMPRESSION %s\n'
                '-- target:  STORAGE %s%s; rewrite existing values: %s\n'
                '--\n'
                '-- Run with psql outside a transaction block (each step commits):\n'
                '--   psql -v ON_ERROR_STOP=1 -f this_script.sql\n'
                '--\n'
                '-- ALTER TABLE ... SET STORAGE and SET COMPRESSION change the catalog only.\n'
                '-- Values already stored keep their form: SET STORAGE does not touch them, nor does\n'
                '-- UPDATE ... SET c = c (it reuses the same TOAST pointer and carries inline\n'
                '-- compressed values as they are), nor VACUUM FULL, nor CLUSTER.  Only new or\n'
                '-- rebuilt values (c = c || ''''), or the rewrite step below, follow the new setting.\n'
                '-- Plain ALTER TABLE recurses and takes ACCESS EXCLUSIVE on every partition at once;\n'
                '-- this script alters one table at a time with ALTER TABLE ONLY.\n',
                (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'),
                to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                translate(relation::text, E'\n\r', '  '), CASE rel.relkind WHEN 'p' THEN 'partitioned table' ELSE 'table' END,
                translate(col, E'\n\r', '  '), typ,
                upper(CASE att.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                                          WHEN 'm' THEN 'main' ELSE 'plain' END),
                coalesce(CASE att.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END,
                         'default (' || current_setting('default_toast_compression') || ')'),
                upper(target), coalesce(', COMPRESSION ' || method, ''),
                CASE WHEN rewrite_existing THEN 'yes' ELSE 'no' END);
  out := out || format(E'\n\\set ON_ERROR_STOP on\nSET lock_timeout = %L;\n', lock_to)
             || E'SET row_security = off;   -- a policy hiding rows from this role is an error, never a partial rewrite\n';

  -- The tree: the table, its partitions and inheritance children (the
  -- column has the same name in all of them), parents before children.
  FOR t IN
    WITH RECURSIVE tree(relid, depth) AS (
      SELECT relation::oid, 0
      UNION ALL
      SELECT i.inhrelid, tree.depth + 1 FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r, c.relkind, min(tree.depth) AS depth
      FROM tree JOIN pg_class c ON c.oid = tree.relid
     WHERE c.relkind IN ('r', 'p', 'f')
     GROUP BY tree.relid, c.relkind
     ORDER BY min(tree.depth), tree.relid::regclass::text
  LOOP
    CONTINUE WHEN t.relkind = 'f';
    stmt := format('ALTER TABLE ONLY %s ALTER COLUMN %s SET STORAGE %s', t.r, col, upper(target));
    IF method IS NOT NULL THEN
      stmt := stmt || format(', ALTER COLUMN %s SET COMPRESSION %s', col, method);
    END IF;
    step := step + 1;
    out := out || format(E'\n-- Step %s: %s on %s.  Takes ACCESS EXCLUSIVE on %s for a catalog update\n'
                         '-- only (no rewrite); retried up to %s more times when lock_timeout (%s) expires.\n',
                         step,
                         CASE WHEN method IS NULL THEN 'SET STORAGE ' || upper(target)
                              ELSE 'SET STORAGE ' || upper(target) || ' and SET COMPRESSION ' || method END,
                         translate(t.r::text, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), retries, lock_to);
    out := out || E'DO $step$\nBEGIN\n'
               || storagelab_internal.retry_loop(format(E'        EXECUTE %L;\n', stmt), retries,
                                                 'Other sessions keep using the table: run the script again when traffic is lower.')
               || E'END\n$step$;\n';
  END LOOP;

  IF NOT rewrite_existing THEN
    out := out || E'\n-- Existing values are left as they are (rewrite_existing => false).  To see how\n'
               || format(E'-- they are stored: SELECT * FROM storagelab.toast_profile(%L, %L);\n',
                         translate(relation::text, E'\n\r', '  '), translate(column_name::text, E'\n\r', '  '));
    RETURN out;
  END IF;

  -- The rewrite: per table that holds rows, walk it in ranges of pages,
  -- COMMIT after each batch; a rerun skips values already rewritten.
  FOR t IN
    WITH RECURSIVE tree(relid) AS (
      SELECT relation::oid
      UNION
      SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r
      FROM tree JOIN pg_class c ON c.oid = tree.relid
     WHERE c.relkind = 'r'
     ORDER BY tree.relid::regclass::text
  LOOP
    step := step + 1;
    out := out || format(E'\n-- Step %s: rewrite the values of %s in %s whose stored form differs from the\n'
                         '-- new setting (%s), 1,000 pages per transaction.  Takes ROW EXCLUSIVE on the\n'
                         '-- table and row locks on the rewritten rows; fires UPDATE triggers; writes WAL and\n'
                         '-- dead row versions (the table and its TOAST table grow until VACUUM).  Resumable:\n'
                         '-- run it again and values already rewritten are skipped%s\n',
                         step, translate(col, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), translate(rewrite_cond, E'\n\r', '  '),
                         -- a value compression does not shrink is stored uncompressed
                         -- again: it still looks like one to rewrite
                         CASE WHEN target = 'external' THEN '.' ELSE
                           E', except those that stay\n-- uncompressed (content compressed already, or that compression does not shrink):\n'
                           '-- they look unchanged, and every run rewrites them again.' END);
    out := out || format(
      E'DO $rewrite$\nDECLARE\n'
      '  batch_pages constant bigint := 1000;\n'
      '  last_page bigint := pg_catalog.pg_relation_size(%1$L::regclass) / current_setting(''block_size'')::bigint;\n'
      '  first_page bigint := 0;\n'
      '  n bigint;\n'
      '  total bigint := 0;\n'
      'BEGIN\n'
      '  WHILE first_page <= last_page LOOP\n',
      t.r::text)
      || storagelab_internal.retry_loop(format(
           E'        UPDATE ONLY %1$s SET %2$s\n'
           '         WHERE ctid >= pg_catalog.format(''(%%s,0)'', first_page)::tid\n'
           '           AND ctid < pg_catalog.format(''(%%s,0)'', first_page + batch_pages)::tid\n'
           '           AND %3$s;\n'
           '        GET DIAGNOSTICS n = ROW_COUNT;\n',
           t.r, set_list, rewrite_cond), retries,
           'Other sessions keep rows of the table locked: run the script again; rewritten values are skipped.')
      || format(
      E'    COMMIT;\n'
      '    total := total + n;\n'
      '    first_page := first_page + batch_pages;\n'
      '    RAISE NOTICE ''%%: pages < %% done, %% values rewritten'', %1$L, first_page, total;\n'
      '  END LOOP;\n'
      'END\n$rewrite$;\n',
      t.r::text);
    out := out || format(E'\n-- Then: VACUUM %s (SHARE UPDATE EXCLUSIVE; does not block reads or writes)\n'
                         '-- marks the old row versions and their TOAST chunks reusable; the files shrink\n'
                         '-- only with VACUUM FULL or pg_repack (ACCESS EXCLUSIVE / brief locks).\n'
                         'VACUUM (ANALYZE) %s;\n', translate(t.r::text, E'\n\r', '  '), t.r);
  END LOOP;
  RETURN out;
END
$fn$;
COMMENT ON FUNCTION storagelab.storage_migration_script(regclass, name, text, boolean) IS
  'psql script that sets a column''s STORAGE (external, extended, main; optionally with COMPRESSION pglz/lz4) table by table with lock_timeout and retries, and with rewrite_existing a batched, resumable rewrite of the values stored in the old form, then VACUUM';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_script
CREATE OR REPLACE FUNCTION storagelab_internal.layout_script(relation regclass, mode text, column_types jsonb,
                                                  column_order name[], plan jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p          record;
  tabs       jsonb;             -- the engine's input: the table, then the rest of its key's component
  comp       jsonb;
  self_types jsonb;
  ch         jsonb;             -- the table's changes
  allch      jsonb;             -- and the component's, each with its "relation" (OID)
  rels       oid[];
  tc         record;
  rechecks   text := '';
  lock_list  text;
  lock_stmt  text[];
  s          text;
  ph         text;
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'unknown mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'The modes are blocking and online.';
  END IF;
  PERFORM storagelab_internal.rewrite_refuse(ARRAY[relation::oid]);
  SELECT * INTO p FROM storagelab_internal.layout_plan(relation, column_types, column_order, plan);
  IF p.changes = '[]' AND (SELECT array_agg(c->>'column_name' ORDER BY n) FROM jsonb_array_elements(p.tables->0->'columns') WITH ORDINALITY u(c, n))
                          = (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                              WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped) THEN
    RAISE EXCEPTION 'nothing to change: the columns keep their order and types'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give column_types or column_order.';
  END IF;
  -- a retyped key: the rest of its foreign-key component changes with it,
  -- other tables (rebuilt with the table, in their own column order) and
  -- the table's own columns referencing the key
  WITH k AS MATERIALIZED (SELECT * FROM storagelab_internal.layout_key_component(relation, p.changes))
  SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname(t.relid),
                   'columns', (SELECT jsonb_agg(coalesce((SELECT jsonb_build_object('column_name', a.attname, 'type', k.new_type)
                                                            FROM k WHERE k.relid = t.relid AND k.column_name = a.attname LIMIT 1),
                                                         jsonb_build_object('column_name', a.attname)) ORDER BY a.attnum)
                                 FROM pg_attribute a WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped))
                   ORDER BY storagelab_internal.bigint_migration_qname(t.relid)), '[]')
            FROM (SELECT DISTINCT k.relid FROM k WHERE k.relid <> relation::oid) t),
         (SELECT jsonb_object_agg(k.column_name, k.new_type) FROM k WHERE k.relid = relation::oid)
    INTO comp, self_types;
  tabs := p.tables;
  IF self_types IS NOT NULL THEN
    tabs := jsonb_build_array(jsonb_build_object('relation', tabs->0->>'relation', 'columns',
              (SELECT jsonb_agg(CASE WHEN self_types ? (c->>'column_name') AND NOT c ? 'type'
                                     THEN c || jsonb_build_object('type', self_types->>(c->>'column_name')) ELSE c END ORDER BY n)
                 FROM jsonb_array_elements(tabs->0->'columns') WITH ORDINALITY u(c, n))));
  END IF;
  tabs := tabs || comp;
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            -- a column of the table that changes with the key named in column_types
                            || CASE WHEN coalesce(self_types ? c.column_name, false) AND NOT coalesce(column_types ? c.column_name, false)
                                    THEN '{"component": true}'::jsonb ELSE '{}' END ORDER BY c.pos)
                  FILTER (WHERE c.changed AND c.table_ord = 1), '[]'),
         array_agg(DISTINCT c.relid)
    INTO ch, rels
    FROM storagelab_internal.rewrite_columns(tabs) c;
  PERFORM storagelab_internal.layout_preflight(relation, ch);
  PERFORM storagelab_internal.layout_function_check(relation, ch);
  rechecks := storagelab_internal.layout_recheck(relation, ch);
  allch := ch;
  FOR tc IN
    SELECT c.relid, jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type, 'component', true)
                              ORDER BY c.pos) AS ch
      FROM storagelab_internal.rewrite_columns(tabs) c
     WHERE c.changed AND c.table_ord > 1
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    PERFORM storagelab_internal.layout_preflight(tc.relid::regclass, tc.ch);
    PERFORM storagelab_internal.layout_function_check(tc.relid::regclass, tc.ch);
    rechecks := rechecks || storagelab_internal.layout_recheck(tc.relid::regclass, tc.ch);
    allch := allch || (SELECT jsonb_agg(x || jsonb_build_object('relation', tc.relid::text)) FROM jsonb_array_elements(tc.ch) x);
  END LOOP;
  -- everything the run takes ACCESS EXCLUSIVE on, locked together before the copy
  SELECT array_agg(x.lock_sql ORDER BY x.rel::oid),
         string_agg(format(E'--   %s (%s)\n', storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.rel)),
                           x.why), '' ORDER BY x.rel::oid)
    INTO lock_stmt, lock_list
    FROM (SELECT l.rel, min(l.lock_sql) AS lock_sql,
                 CASE WHEN l.rel = relation THEN 'the table'
                      WHEN l.rel = ANY (rels) THEN 'rebuilt with the table: its foreign-key component'
                      ELSE string_agg(DISTINCT l.why, '; ') END AS why
            FROM unnest(rels) r(oid), storagelab_internal.layout_lock_targets(r.oid::regclass) l
           GROUP BY l.rel) x;
  IF mode = 'online' THEN
    RETURN storagelab_internal.layout_online_script(relation, tabs, allch,
                                                    CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list);
  END IF;
  s := storagelab_internal.layout_header(relation, tabs, allch,
                                         CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list, NULL)
       || storagelab_internal.bigint_migration_blocking_settings()
       || E'-- Lock the table and every relation the run changes (see the header), all or none, in OID order;\n'
       || E'-- retried on lock_timeout.\n'
       || storagelab_internal.retry_block(lock_stmt, retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n' || rechecks
       || storagelab_internal.layout_function_recheck(relation, allch, 'before');
  FOREACH ph IN ARRAY ARRAY['create', 'copy', 'index', 'swap', 'validate', 'cleanup'] LOOP
    s := s || CASE ph WHEN 'create' THEN E'-- The new table beside the old one.\n'
                      WHEN 'copy' THEN E'-- Every row, in the new column order (row_security off: a policy that would hide\n'
                                        '-- rows from this role stops the script instead of leaving them out).\n'
                                        'SET LOCAL row_security = off;\n'
                      WHEN 'index' THEN E'-- Indexes and constraints, built once on the full table.\n'
                      WHEN 'swap' THEN E'-- The swap: dependents, renames, sequences, foreign keys, triggers, rules, policies.\n'
                      WHEN 'validate' THEN E'-- Foreign keys re-pointed NOT VALID, validated.\n'
                      ELSE E'-- The old table.\n' END
           || coalesce((SELECT string_agg(r.statement || E';\n', '' ORDER BY r.ord)
                          FROM storagelab_internal.rewrite_statements(tabs, ph) r), '')
           || CASE ph WHEN 'copy' THEN E'SET LOCAL row_security = on;\n'
                      -- nothing (an event trigger) added objects to the new tables as they were created
                      WHEN 'create' THEN format(E'DO %s;\n', storagelab_internal.dollar_quote(format(
                                           'BEGIN PERFORM storagelab_internal.rewrite_check_created(%L); END', rels)))
                      ELSE '' END
           || E'\n';
  END LOOP;
  s := s || storagelab_internal.layout_function_recheck(relation, allch, 'after')
         || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n'
         || E'-- Statistics of the new tables (SHARE UPDATE EXCLUSIVE: reads and writes go on).\n'
         || (SELECT string_agg(format(E'ANALYZE %s;\n', t->>'relation'), '' ORDER BY n) FROM jsonb_array_elements(tabs) WITH ORDINALITY u(t, n));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_script(regclass, text, jsonb, name[], jsonb) IS
  'the layout script of one table (with the rest of the foreign-key component of a key it retypes), given its table_rewrite_plan row (as jsonb; NULL: none): storagelab.layout_migration_script() without looking the plan up';

-- from extension/62_rewrite_online.sql: storagelab_internal.rewrite_online_apply
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_apply(d jsonb, batch_rows bigint)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET row_security = off   -- a policy hiding rows of the source is an error, not rows lost
AS $fn$
DECLARE
  ids  bigint[];
  kl   text := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  cols text;
  ndel bigint;
  tk   text := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
  lk   text := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
BEGIN
  EXECUTE format('SELECT array_agg(storagelab_seq ORDER BY storagelab_seq), count(*) FILTER (WHERE op = ''D'') '
                 'FROM (SELECT storagelab_seq, %s AS op FROM %s ORDER BY storagelab_seq LIMIT $1) x',
                 CASE WHEN kl IS NULL THEN 'storagelab_op' ELSE 'NULL::"char"' END, d->>'log')
    INTO ids, ndel USING batch_rows;
  IF ids IS NULL THEN
    RETURN 0;
  END IF;
  IF kl IS NOT NULL AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.confrelid = (d->>'target')::regclass AND c.contype = 'f') THEN
    -- upsert, then delete the keys gone from the source: a row of the
    -- target that other tables reference is never deleted and inserted again
    SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
       AND a.attidentity <> 'a' AND NOT a.attname::text IN (SELECT jsonb_array_elements_text(d->'key'));
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))\n ON CONFLICT (%s) DO %s',
                   d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING ids;
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s) '
                   'AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))',
                   d->>'target', kl, d->>'log', tk, lk, d->>'source',
                   (SELECT string_agg('s.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k), lk)
      USING ids;
  ELSIF kl IS NOT NULL THEN
    -- nothing references the target: delete the keys, copy them again
    EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s)',
                   d->>'target', kl, d->>'log', tk, lk)
      USING ids;
    EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING ids;
  ELSE
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.storagelab_row) '
                   'WHERE l.storagelab_seq = ANY ($1) AND l.storagelab_op = ''I'' ORDER BY l.storagelab_seq', d->>'target', cols, d->>'log')
      USING ids;
    IF ndel > 0 THEN
    EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                   'FROM %1$s t WHERE to_jsonb(t) IN (SELECT storagelab_row FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')) c '
                   'JOIN (SELECT storagelab_row AS r, count(*) AS n FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'' GROUP BY storagelab_row) w ON w.r = c.j AND c.n <= w.n)',
                   d->>'target', d->>'log')
      USING ids;
    END IF;
  END IF;
  EXECUTE format('DELETE FROM %s WHERE storagelab_seq = ANY ($1)', d->>'log') USING ids;
  RETURN cardinality(ids);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply(jsonb, bigint) IS
  'one batch of the replay of a copy-and-swap change log into its target table, in sets (keys deleted and copied again, or whole rows inserted and deleted); returns the log rows applied';

-- from extension/62_rewrite_online.sql: storagelab.rewrite_online_copy
CREATE OR REPLACE PROCEDURE storagelab.rewrite_online_copy(migration text, dirs jsonb, batch_time_ms numeric,
                                                batch_blocks int, pause interval)
LANGUAGE plpgsql
AS $fn$
DECLARE
  d       jsonb;
  b       bigint;
  maxb    bigint;
  isdone  boolean;
  n       bigint;
  nb      bigint;
  nrows   bigint;
  nbatch  int := 0;
  t0      timestamptz;
  ms      numeric;
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
  caller_rls  text := pg_catalog.current_setting('row_security');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
    INSERT INTO storagelab.bigint_migration_progress AS p (migration, relation, max_block, batch_blocks, started_at)
    SELECT rewrite_online_copy.migration, d->>'source',
           pg_catalog.pg_relation_size((d->>'source')::regclass) / pg_catalog.current_setting('block_size')::int,
           rewrite_online_copy.batch_blocks, pg_catalog.clock_timestamp()
    ON CONFLICT ON CONSTRAINT bigint_migration_progress_pkey DO NOTHING;
    SELECT p.next_block, p.max_block, p.done, p.batch_blocks INTO b, maxb, isdone, n
      FROM storagelab.bigint_migration_progress p
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    IF isdone THEN
      CONTINUE;
    ELSIF pg_catalog.jsonb_typeof(d->'key') IS DISTINCT FROM 'array' THEN
      COMMIT;
      SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;   -- first statement of the transaction: before any expression
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      t0 := pg_catalog.clock_timestamp();
      PERFORM pg_catalog.set_config('row_security', 'off', true);
      EXECUTE d->>'copy';
      GET DIAGNOSTICS nrows = ROW_COUNT;
      PERFORM pg_catalog.set_config('row_security', caller_rls, true);
      EXECUTE pg_catalog.format('DELETE FROM %s', d->>'log');
      maxb := -1;
    ELSE
      COMMIT;
    END IF;
    WHILE b <= maxb LOOP
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      PERFORM pg_catalog.set_config('row_security', 'off', true);
      EXECUTE d->>'copy' || E'\n WHERE ctid >= $1 AND ctid < $2'
        USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
      GET DIAGNOSTICS nrows = ROW_COUNT;
      PERFORM pg_catalog.set_config('row_security', caller_rls, true);
      ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
      b := b + nb;
      IF batch_time_ms > 0 THEN
        n := greatest(1, least(2 * n, pg_catalog.floor(nb * batch_time_ms / greatest(ms, 0.01))));
      END IF;
      UPDATE storagelab.bigint_migration_progress p
         SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
             last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
             updated_at = pg_catalog.now()
       WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
      COMMIT;
      nbatch := nbatch + 1;
      IF limit_batches > 0 AND nbatch >= limit_batches THEN
        RAISE NOTICE '% stopped after % batches at block % of %; run the copy again to resume', d->>'source', nbatch, b, maxb;
        PERFORM pg_catalog.set_config('search_path', caller_path, false);
        RETURN;
      END IF;
      PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    UPDATE storagelab.bigint_migration_progress p
       SET done = true, updated_at = pg_catalog.now(),
           rows_copied = p.rows_copied + CASE WHEN maxb = -1 THEN nrows ELSE 0 END,
           batches = p.batches + CASE WHEN maxb = -1 THEN 1 ELSE 0 END,
           last_batch_ms = CASE WHEN maxb = -1 THEN pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000, 1) ELSE p.last_batch_ms END
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    COMMIT;
  END LOOP;
  PERFORM pg_catalog.set_config('search_path', caller_path, false);
END
$fn$;
COMMENT ON PROCEDURE storagelab.rewrite_online_copy(text, jsonb, numeric, int, interval) IS
  'the copy phase of an online copy-and-swap rewrite (its script CALLs it): tables with a key in batches of heap blocks sized to a time budget, one COMMIT each, resumable from storagelab.bigint_migration_progress; tables without one in one snapshot';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_apply_back
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_apply_back(dirs jsonb)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET row_security = off   -- a policy hiding rows of the source is an error, not rows lost
AS $fn$
DECLARE
  n      int := jsonb_array_length(dirs);
  idl    bigint[];
  ord    int[] := '{}';
  rest   int[] := ARRAY(SELECT generate_series(0, jsonb_array_length(dirs) - 1));
  ready  int[];
  i      int;
  d      jsonb;
  kl     text;
  tk     text;
  lk     text;
  sk     text;
  cols   text;
  refd   boolean;
  total  bigint := 0;
  logs   jsonb := '{}';
BEGIN
  -- each log's rows as they are now (the tables are locked: no more come)
  FOR i IN 0 .. n - 1 LOOP
    EXECUTE format('SELECT coalesce(array_agg(storagelab_seq ORDER BY storagelab_seq), ''{}'') FROM %s', dirs->i->>'log') INTO idl;
    logs := logs || jsonb_build_object(i::text, to_jsonb(idl));
    total := total + cardinality(idl);
  END LOOP;
  IF total = 0 THEN
    RETURN 0;
  END IF;
  -- referenced tables first (a table, or one of its ancestors if it is a partition, holds the foreign key)
  WHILE cardinality(rest) > 0 LOOP
    ready := ARRAY(SELECT r FROM unnest(rest) r
                    WHERE NOT EXISTS (
                      SELECT 1 FROM unnest(rest) o, pg_constraint c
                       WHERE o <> r AND c.contype = 'f'
                         AND c.conrelid IN (SELECT (dirs->r->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->r->>'target')::regclass) a)
                         AND c.confrelid IN (SELECT (dirs->o->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->o->>'target')::regclass) a))
                    ORDER BY r);
    IF cardinality(ready) = 0 THEN
      ready := rest;                                  -- a cycle: the component's order
    END IF;
    ord := ord || ready;
    rest := ARRAY(SELECT r FROM unnest(rest) r WHERE r <> ALL (ready) ORDER BY r);
  END LOOP;
  -- inserts and updates, referenced tables first
  FOREACH i IN ARRAY ord LOOP
    d := dirs->i;
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    kl := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    tk := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    lk := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    refd := EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f'
                       AND c.confrelid IN (SELECT (d->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((d->>'target')::regclass) a));
    IF kl IS NOT NULL AND refd THEN
      SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_attribute a
       WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         AND a.attidentity <> 'a' AND NOT a.attname::text IN (SELECT jsonb_array_elements_text(d->'key'));
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))\n ON CONFLICT (%s) DO %s',
                     d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING idl;
    ELSIF kl IS NOT NULL THEN
      EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s)',
                     d->>'target', kl, d->>'log', tk, lk) USING idl;
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING idl;
    ELSE
      SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_attribute a
       WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
      EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.storagelab_row) '
                     'WHERE l.storagelab_seq = ANY ($1) AND l.storagelab_op = ''I'' ORDER BY l.storagelab_seq', d->>'target', cols, d->>'log')
        USING idl;
    END IF;
  END LOOP;
  -- deletes, referencing tables first
  FOR i IN SELECT o FROM unnest(ord) WITH ORDINALITY u(o, k) ORDER BY k DESC LOOP
    d := dirs->i;
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    kl := (SELECT string_agg(quote_ident(k), ', ') FROM jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END) k);
    refd := EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f'
                       AND c.confrelid IN (SELECT (d->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((d->>'target')::regclass) a));
    IF kl IS NOT NULL AND refd THEN
      tk := (SELECT string_agg('t.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      lk := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      sk := (SELECT string_agg('s.' || quote_ident(k), ', ') FROM jsonb_array_elements_text(d->'key') k);
      EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s) '
                     'AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))',
                     d->>'target', kl, d->>'log', tk, lk, d->>'source', sk, lk) USING idl;
    ELSIF kl IS NULL THEN
      EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                     'FROM %1$s t WHERE to_jsonb(t) IN (SELECT storagelab_row FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')) c '
                     'JOIN (SELECT storagelab_row AS r, count(*) AS n FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'' GROUP BY storagelab_row) w ON w.r = c.j AND c.n <= w.n)',
                     d->>'target', d->>'log') USING idl;
    END IF;
    EXECUTE format('DELETE FROM %s WHERE storagelab_seq = ANY ($1)', d->>'log') USING idl;
  END LOOP;
  RETURN total;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply_back(jsonb) IS
  'the back logs of a rollback after a copy-and-swap swap applied whole into the old tables: inserts and updates with referenced tables first, then deletes with referencing tables first, so that the old tables'' foreign keys hold at each statement';

-- END generated section row_security

-- ---------------------------------------------------------------------------
-- Changes since generation: the online scripts' phases start and swap (under
-- its locks) compare each table's fingerprint with the one recorded when the
-- script was written (a column, index, grant, trigger, policy or comment
-- added in between was dropped with the old table at cleanup); the
-- fingerprint covers columns with their defaults, owner and persistence too
-- (the blocking layout script re-created the old ones).  Event triggers:
-- the scripts check the tables they create (an audit trigger an event
-- trigger added to the new table fired for every copied row and stayed
-- beside the old table's after the swap).  Rollback after the swap: the old
-- tables' rules are disabled with their triggers (the back log's replay
-- fired DO ALSO rules a second time); the old tables' foreign keys to
-- other tables are dropped in the swap, given back by a swap back (they
-- refused the clients' deletes until cleanup).  A view or BEGIN ATOMIC
-- function redefined since generation is refused, not put back as it was.
-- A rollback after the swap refuses while a column added since exists.
-- Copied from the install parts by
--   scripts/upgrade-section.sh stale extension/storagelab--1.0--1.1.sql \
--     extension/23_bigint_blocking.sql:storagelab_internal.bigint_migration_view_checks \
--     extension/23_bigint_blocking.sql:storagelab_internal.bigint_migration_blocking_preflight \
--     extension/25_bigint_online.sql:storagelab_internal.bigint_migration_online_swap_begin \
--     extension/60_rewrite_swap.sql:storagelab_internal.rewrite_swap \
--     extension/61_layout_migration.sql:storagelab_internal.rewrite_fingerprint \
--     extension/61_layout_migration.sql:storagelab_internal.rewrite_tree_fingerprint \
--     extension/61_layout_migration.sql:storagelab_internal.rewrite_check_unchanged \
--     extension/61_layout_migration.sql:storagelab_internal.rewrite_check_created \
--     extension/61_layout_migration.sql:storagelab_internal.layout_script \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_old_triggers \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_check_rollback \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_phases
-- (run it again after changing any of them).
-- BEGIN generated section stale
-- from extension/23_bigint_blocking.sql: storagelab_internal.bigint_migration_view_checks
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_view_checks(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(string_agg(format(E'  IF (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, %L)))\n'
                                    '        FROM pg_class c WHERE c.oid = to_regclass(%L)) IS DISTINCT FROM %L THEN\n'
                                    '    problems := problems || %L::text;\n  END IF;\n',
                                    'pg_class', storagelab_internal.bigint_migration_qname(x.relation),
                                    (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, 'pg_class')))
                                       FROM pg_class c WHERE c.oid = x.relation),
                                    x.identity || ' was redefined (its definition, owner, privileges or comment)'),
                             '' ORDER BY x.identity), '')
    FROM unnest($1) x WHERE x.kind IN ('view', 'materialized_view') AND x.drop_sql IS NOT NULL
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_view_checks(storagelab.bigint_migration_object[]) IS
  'lines of a DO block adding to its problems array each view or materialized view of objs redefined since generation (definition, options, owner, privileges, comment), which a script would re-create as it was';

-- from extension/23_bigint_blocking.sql: storagelab_internal.bigint_migration_blocking_preflight
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_blocking_preflight(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  body       text;
  max_age    text := storagelab_internal.setting('bigint_migration.max_blocking_transaction_age');
BEGIN
  body := E'\nDECLARE\n  problems text[] := ''{}'';\n  who text;\nBEGIN\n'
       || E'  -- the database must still look as it did when this script was generated\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped\n'
                           '                 AND atttypid = %L::regtype) THEN\n'
                           '    problems := problems || %L::text;\n  END IF;\n',
                           storagelab_internal.bigint_migration_qname(o.relation), o.column_name,
                           (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name),
                           format('column %s is no longer %s', o.identity,
                                  (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name)));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('foreign_key', 'view', 'materialized_view', 'rule', 'trigger', 'policy', 'function', 'publication_table', 'generated_column')
              AND x.check_sql IS NOT NULL AND x.drop_sql IS NOT NULL
            ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n',
                           o.check_sql, o.identity || ' is missing or changed');
  END LOOP;
  body := body || storagelab_internal.bigint_migration_view_checks(objs);
  -- objects that make ALTER COLUMN TYPE fail (views, rules, triggers,
  -- policies, publications, functions, generated columns) or that would be
  -- left out (foreign keys), created on the converted columns since generation
  body := body || format(E'  SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, 0), ''; '') INTO who\n'
                         '    FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid\n'
                         '   WHERE d.refclassid = ''pg_class''::regclass AND d.deptype IN (''n'', ''a'')\n'
                         '     AND (d.refobjid, a.attname) IN (%s)\n'
                         '     AND d.classid IN (''pg_rewrite''::regclass, ''pg_trigger''::regclass, ''pg_policy''::regclass, ''pg_publication_rel''::regclass,\n'
                         '                       ''pg_proc''::regclass, ''pg_attrdef''::regclass, ''pg_constraint''::regclass)\n'
                         '     AND NOT (d.classid = ''pg_constraint''::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = d.objid AND c.contype = ''f''))\n'
                         '     AND format(''%%s:%%s'', d.classid, d.objid) <> ALL (ARRAY[%s]::text[]);\n'
                         '  IF who IS NOT NULL THEN\n    problems := problems || (''new objects depend on the columns to convert: '' || who);\n  END IF;\n',
                         (SELECT string_agg(format('(to_regclass(%L)::oid, %L::name)', storagelab_internal.bigint_migration_qname(x.relation), x.column_name), ', ' ORDER BY x.identity)
                            FROM unnest(objs) x WHERE x.kind = 'column'),
                         coalesce((SELECT string_agg(DISTINCT format('%L', format('%s:%s', d.classid, d.objid)), ', ')
                                     FROM unnest(objs) x
                                     JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
                                     JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                                    WHERE x.kind = 'column' AND d.deptype IN ('n', 'a')), ''));
  body := body || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
       || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'            HINT = ''Generate the script again with storagelab.bigint_migration_script().'';\n  END IF;\n'
       || E'  -- the role running the script must be able to do every step: own (be a member of the owner of)\n'
       || E'  -- every object it alters, drops or re-creates, and have CREATE on the schemas it re-creates them in\n'
       || format(E'  SELECT string_agg(x, ''; '') INTO who FROM (\n'
                 '    SELECT format(''%%s (owner %%s)'', c.oid::regclass, pg_get_userbyid(c.relowner)) AS x\n'
                 '      FROM pg_class c WHERE c.oid = ANY (ARRAY[%s]::regclass[]) AND NOT pg_has_role(c.relowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''function %%s (owner %%s)'', p.oid::regprocedure, pg_get_userbyid(p.proowner))\n'
                 '      FROM pg_proc p WHERE p.oid = ANY (ARRAY[%s]::regprocedure[]) AND NOT pg_has_role(p.proowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''publication %%I (owner %%s)'', b.pubname, pg_get_userbyid(b.pubowner))\n'
                 '      FROM pg_publication b WHERE b.pubname = ANY (ARRAY[%s]::name[]) AND NOT pg_has_role(b.pubowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''schema %%I (no CREATE privilege)'', n.nspname)\n'
                 '      FROM pg_namespace n WHERE n.nspname = ANY (ARRAY[%s]::name[]) AND NOT has_schema_privilege(n.oid, ''CREATE'')) y;\n',
                 coalesce((SELECT string_agg(format('%L', q), ', ' ORDER BY q) FROM (
                             SELECT DISTINCT storagelab_internal.bigint_migration_qname(x.relation) AS q FROM unnest(objs) x WHERE x.relation IS NOT NULL
                             UNION
                             SELECT storagelab_internal.bigint_migration_qname(x.objid) FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL) z), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', x.objid::regprocedure::text), ', ')
                             FROM unnest(objs) x WHERE x.kind IN ('function', 'trigger_function', 'widened_function')), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', b.pubname), ', ')
                             FROM unnest(objs) x JOIN pg_publication_rel pr ON pr.oid = x.objid JOIN pg_publication b ON b.oid = pr.prpubid
                            WHERE x.kind = 'publication_table'), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', n.nspname), ', ')
                             FROM unnest(objs) x
                             JOIN pg_namespace n ON n.oid = CASE WHEN x.kind IN ('view', 'materialized_view') THEN (SELECT relnamespace FROM pg_class WHERE oid = x.objid)
                                                                 WHEN x.kind IN ('function', 'widened_function') THEN (SELECT pronamespace FROM pg_proc WHERE oid = x.objid)
                                                                 WHEN x.kind = 'statistics' THEN (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = x.objid) END
                            WHERE x.create_sql IS NOT NULL), ''))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''the role running this script cannot do every step of it''\n'
       || E'      USING ERRCODE = ''insufficient_privilege'', DETAIL = who,\n'
       || E'            HINT = ''Run the script as a superuser, or as a role that owns these objects (and may create objects in these schemas).'';\n  END IF;\n'
       || E'  -- a long-running transaction holding a lock on these tables would make every lock attempt time out\n'
       || format(E'  SELECT string_agg(DISTINCT format(''pid %%s (transaction started %%s ago, state %%s)'', a.pid, now() - a.xact_start, a.state), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid\n'
                 '   WHERE l.pid <> pg_backend_pid() AND l.relation = ANY (ARRAY[%s]::regclass[])\n'
                 '     AND a.xact_start < now() - %L::interval;\n',
                 (SELECT string_agg(format('%L', storagelab_internal.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x),
                 max_age)
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''long-running transactions hold locks on tables this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Wait for them to finish or end them (pg_cancel_backend / pg_terminate_backend), then run the script again.'';\n  END IF;\n'
       || E'  -- an anti-wraparound autovacuum does not give way to the ACCESS EXCLUSIVE lock\n'
       || format(E'  SELECT string_agg(format(''pid %%s on %%s'', v.pid, v.relid::regclass), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_stat_progress_vacuum v JOIN pg_stat_activity a ON a.pid = v.pid\n'
                 '   WHERE v.relid = ANY (ARRAY[%s]::regclass[]) AND a.query LIKE ''%%to prevent wraparound%%'';\n',
                 (SELECT string_agg(format('%L', storagelab_internal.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''an anti-wraparound autovacuum is running on a table this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Let it finish (it does not yield its lock), then run the script again.'';\n  END IF;\n'
       || E'END\n';
  s := s || E'-- Pre-flight checks (no locks taken yet beyond catalog reads).\n'
         || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_preflight(storagelab.bigint_migration_object[]) IS
  'The pre-flight DO block of a blocking script: the database still looks as it did at generation, the role may do every step, no long transaction or anti-wraparound vacuum holds the tables.';

-- from extension/25_bigint_online.sql: storagelab_internal.bigint_migration_online_swap_begin
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_online_swap_begin(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  late_idx     oid[] := m.late_idx;
  fk_oid       oid[] := m.fk_oid;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  lock_list    text := m.lock_list;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ swap
  s := s || E'\\if :ph_swap\n-- Phase swap: one transaction; every table locked at once (retried on lock_timeout), then\n'
         || E'-- only catalog work: no scan, no rewrite.\nBEGIN;\n';
  -- pre-checks: prepare complete
  x := E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
       || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n';
  FOR r IN
    SELECT format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = i.indexrelid),
                  format('storagelab_new_%s', i.indexrelid)) AS nq
      FROM pg_index i
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
       AND NOT ((SELECT relkind FROM pg_class WHERE oid = i.indexrelid) = 'I'
                AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')))
  LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) THEN\n'
                     '    RAISE EXCEPTION ''index %% is missing or invalid'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     r.nq, r.nq);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated) THEN\n'
                     '    RAISE EXCEPTION ''the check that the shadow columns of %% are exact is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid), storagelab_internal.bigint_migration_qname(tabs[k]));
  END LOOP;
  FOR r IN SELECT u.o2, u.rel, u.nn FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) ORDER BY 1, 2 LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated = (SELECT convalidated FROM pg_constraint WHERE oid = %s)) THEN\n'
                     '    RAISE EXCEPTION ''the new foreign key %% is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(r.rel), r.nn, r.o2, r.nn);
  END LOOP;
  x := x || E'END\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(x) || E';\n';
  s := s || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries);
  -- the views the swap drops and re-creates are as they were (one redefined since would be put back)
  x := storagelab_internal.bigint_migration_view_checks(m.objs);
  IF x <> '' THEN
    s := s || 'DO ' || storagelab_internal.dollar_quote(E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n' || x
                 || E'  IF cardinality(problems) > 0 THEN\n'
                 || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
                 || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
                 || E'            HINT = ''Redefine the view as it was and run this phase again (then redefine it after the swap), or roll back (phases rollback_prepare, rollback_expand) and generate the script again.'';\n'
                 || E'  END IF;\nEND\n') || E';\n';
  END IF;
  s := s || storagelab_internal.bigint_migration_plpgsql_check_sql(m.objs, 'before');   -- part 28
  s := s || E'-- the shadow columns are exact (the trigger kept them; nothing can write now)\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_begin(storagelab_internal.bigint_online_model) IS
  'Phase swap, first part: BEGIN, the state checks, every table locked.';

-- from extension/60_rewrite_swap.sql: storagelab_internal.rewrite_swap
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_swap(relids oid[], back boolean)
RETURNS TABLE (relid oid, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel  oid;
  r    record;
  s    text;
  -- the tables and their partitions, parents first
  members oid[] := ARRAY(SELECT m.relid FROM storagelab_internal.rewrite_members(relids) m);
BEGIN
  -- functions are re-created as they were, without checking their bodies (as pg_dump does)
  relid := NULL; statement := 'SET LOCAL check_function_bodies = off'; RETURN NEXT;
  -- 1. objects that follow the tables by OID, dependents first
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth DESC, classid, objid LOOP
    relid := NULL; statement := r.drop_sql; RETURN NEXT;
  END LOOP;
  -- 2. foreign keys of other tables referencing the component
  FOR r IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE direction = 'to' LOOP
    relid := r.conrelid; statement := format('ALTER TABLE %s DROP CONSTRAINT %I', r.qrel, r.conname); RETURN NEXT;
  END LOOP;
  -- 3. swap_back: what the new tables got in the swap and that is named in
  -- its schema (statistics objects) or lists them (publications)
  IF back THEN
    FOREACH rel IN ARRAY members LOOP
      FOR r IN
        SELECT format('ALTER PUBLICATION %I DROP TABLE %s', p.pubname, storagelab_internal.bigint_migration_qname(rel)) AS sql
          FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.prrelid = rel
        UNION ALL
        SELECT format('DROP STATISTICS %I.%I', sn.nspname, s2.stxname)
          FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace WHERE s2.stxrelid = rel
      LOOP
        relid := rel; statement := r.sql; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 4. renames; statistics objects of the old tables out of the way
  FOREACH rel IN ARRAY members LOOP
    FOREACH s IN ARRAY storagelab_internal.rewrite_renames(rel, back) LOOP
      relid := rel; statement := s; RETURN NEXT;
    END LOOP;
    FOR r IN SELECT s2.oid, sn.nspname, s2.stxname FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace
              WHERE s2.stxrelid = rel ORDER BY s2.oid LOOP
      relid := rel;
      statement := CASE WHEN back THEN format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, storagelab_internal.rewrite_name('old', r.oid), r.stxname)
                        ELSE format('ALTER STATISTICS %I.%I RENAME TO %I', r.nspname, r.stxname, storagelab_internal.rewrite_name('old', r.oid)) END;
      RETURN NEXT;
    END LOOP;
  END LOOP;
  -- 5. foreign keys: the component's own on the new tables (swap), then
  -- the other tables' again; NOT VALID (phase validate checks them) except
  -- those of or to partitioned tables (rewrite_foreign_keys), added valid.
  -- The old tables keep their foreign keys to each other (a rollback's
  -- replay relies on them), not those to other tables: until cleanup they
  -- would refuse a delete of a row the clients no longer reference (only
  -- the old table does); swap_back gives them back.
  FOR r IN SELECT f.*, k.confrelid <> ALL (members) AS outside
             FROM storagelab_internal.rewrite_foreign_keys(relids) f JOIN pg_constraint k ON k.oid = f.conoid
            WHERE f.direction = 'to' OR NOT back OR k.confrelid <> ALL (members) LOOP
    relid := r.conrelid;
    statement := format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.qrel, r.conname, r.def,
                        CASE WHEN r.partitioned AND r.validated THEN '' ELSE ' NOT VALID' END);
    RETURN NEXT;
    IF obj_description(r.conoid, 'pg_constraint') IS NOT NULL THEN
      statement := format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.qrel, obj_description(r.conoid, 'pg_constraint'));
      RETURN NEXT;
    END IF;
    IF r.direction = 'from' AND r.outside AND NOT back THEN
      statement := (SELECT format('ALTER TABLE %I.%I DROP CONSTRAINT %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), r.conname)
                      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = r.conrelid);
      RETURN NEXT;
    END IF;
  END LOOP;
  -- 6. the tables' own objects (swap only: the old tables keep theirs)
  IF NOT back THEN
    FOREACH rel IN ARRAY members LOOP
      FOREACH s IN ARRAY storagelab_internal.rewrite_own_objects(rel) LOOP
        relid := rel; statement := s; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 7. the objects of step 1 again, on whichever tables now have the names
  FOR r IN SELECT * FROM storagelab_internal.rewrite_dependents(relids) ORDER BY depth, classid, objid LOOP
    relid := NULL; statement := r.create_sql; RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_swap(oid[], boolean) IS
  'phase swap (or swap_back) of the rewrite engine: dependents dropped, foreign keys of other tables dropped, tables and their indexes, constraints, identity sequences and statistics objects renamed, foreign keys added NOT VALID (the old tables'' foreign keys to other tables moved to the new ones, given back by swap_back), the tables'' own objects given to the new tables (swap), dependents re-created';

-- from extension/61_layout_migration.sql: storagelab_internal.rewrite_fingerprint
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_fingerprint(relation regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT md5(concat_ws(E'\n',
    -- with the replica identity index and CLUSTER ON (the swap gives them to the new table's)
    (SELECT string_agg(DISTINCT concat_ws(' ', pg_get_indexdef(i.indexrelid), i.indisreplident, i.indisclustered), E'\n')
       FROM pg_index i WHERE i.indrelid = $1),
    (SELECT string_agg(DISTINCT c.conname || ' ' || pg_get_constraintdef(c.oid), E'\n')
       FROM pg_constraint c WHERE c.conrelid = $1 OR c.confrelid = $1),
    (SELECT string_agg(DISTINCT pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text, E'\n') FROM pg_trigger t WHERE t.tgrelid = $1 AND NOT t.tgisinternal),
    (SELECT string_agg(DISTINCT concat_ws(' ', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                 pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)), E'\n')
       FROM pg_policy p WHERE p.polrelid = $1),
    (SELECT concat_ws(' ', c.relacl::text, c.relrowsecurity, c.relforcerowsecurity, c.relreplident, c.reloptions::text,
                      c.relowner, c.relpersistence, c.reltablespace, c.relam)
       FROM pg_class c WHERE c.oid = $1),
    -- the columns with what the new table copies of them (a column added, a default or NOT NULL changed)
    (SELECT string_agg(concat_ws(' ', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, a.attgenerated,
                                 a.attcollation, a.attstorage, a.attcompression, a.attstattarget, pg_get_expr(d.adbin, d.adrelid)),
                       E'\n' ORDER BY a.attnum)
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped),
    (SELECT string_agg(DISTINCT pg_get_ruledef(r.oid), E'\n') FROM pg_rewrite r WHERE r.ev_class = $1 AND r.rulename <> '_RETURN'),
    -- identity sequences' options (the new table gets a new sequence with them)
    (SELECT string_agg(concat_ws(' ', s.seqrelid::regclass, s.seqtypid, s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle),
                       E'\n' ORDER BY s.seqrelid)
       FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1 AND d.deptype = 'i'),
    (SELECT string_agg(DISTINCT a.attname || ' ' || a.attacl::text, E'\n')
       FROM pg_attribute a WHERE a.attrelid = $1 AND a.attacl IS NOT NULL),
    (SELECT string_agg(DISTINCT d.objsubid || ' ' || d.description, E'\n')
       FROM pg_description d WHERE d.objoid = $1 AND d.classoid = 'pg_class'::regclass),
    (SELECT string_agg(DISTINCT p.prpubid::text, E'\n') FROM pg_publication_rel p WHERE p.prrelid = $1),
    (SELECT string_agg(DISTINCT concat_ws(' ', o.type, o.identity, d.deptype), E'\n')
       FROM pg_depend d CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
      WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = $1
        -- foreign keys' own triggers are named by OID; their constraints are counted
        AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE d.classid = 'pg_trigger'::regclass AND t.oid = d.objid AND t.tgisinternal))))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_fingerprint(regclass) IS
  'md5 of everything a rewrite moves (columns and their properties, owner, persistence, indexes, constraints, triggers, rules, policies, privileges, options, comments, publications, dependent objects): compared under a script''s locks with the value recorded when it was written';

-- from extension/61_layout_migration.sql: storagelab_internal.rewrite_tree_fingerprint
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_tree_fingerprint(relation regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT md5(concat_ws(E'\n',
           (SELECT CASE WHEN count(*) = 1 THEN min(storagelab_internal.rewrite_fingerprint(m.relid::regclass))
                        ELSE md5(string_agg(m.relid::regclass::text || ' ' || storagelab_internal.rewrite_fingerprint(m.relid::regclass), E'\n'
                                            ORDER BY m.level, m.relid::regclass::text)) END
              FROM storagelab_internal.rewrite_members(ARRAY[$1::oid]) m),
           (SELECT string_agg(d.create_sql, E'\n' ORDER BY d.depth, d.identity, d.create_sql)
              FROM storagelab_internal.rewrite_dependents(ARRAY[$1::oid]) d)))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_tree_fingerprint(regclass) IS
  'storagelab_internal.rewrite_fingerprint of a table, or of a partitioned table and each of its partitions together, with the definitions of the dependent objects its swap re-creates (storagelab_internal.rewrite_dependents)';

-- from extension/61_layout_migration.sql: storagelab_internal.rewrite_check_unchanged
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_check_unchanged(relation text, relid oid, fingerprint text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF to_regclass(relation) IS DISTINCT FROM relid::regclass
     OR storagelab_internal.rewrite_tree_fingerprint(relid::regclass) IS DISTINCT FROM fingerprint THEN
    RAISE EXCEPTION 'the columns, indexes, constraints, triggers, policies, privileges or dependent objects of table % (or of its partitions) changed since this script was written', relation
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Run phase rollback of this script, then generate the script again: this one would drop what was added since.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_unchanged(text, oid, text) IS
  'raises 55000 naming the table unless relation is still the table relid and storagelab_internal.rewrite_tree_fingerprint of it is fingerprint: the check of an online script''s phases start and swap';

-- from extension/61_layout_migration.sql: storagelab_internal.rewrite_check_created
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_check_created(relids oid[], logs text[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  what text;
BEGIN
  WITH tabs AS (
    SELECT o.oid AS old, to_regclass(format('%I.%I', ns.nspname, storagelab_internal.rewrite_name('new', o.oid)))::oid AS rel
      FROM storagelab_internal.rewrite_members(relids) m JOIN pg_class o ON o.oid = m.relid JOIN pg_namespace ns ON ns.oid = o.relnamespace
    UNION ALL
    SELECT NULL, to_regclass(l)::oid FROM unnest(logs) l
  )
  SELECT string_agg(format('%s: %s', t.rel::regclass, x.w), '; ' ORDER BY t.rel::regclass::text, x.w) INTO what
    FROM tabs t JOIN pg_class c ON c.oid = t.rel LEFT JOIN pg_class o ON o.oid = t.old
   CROSS JOIN LATERAL (
     SELECT format('trigger %I', g.tgname) FROM pg_trigger g WHERE g.tgrelid = t.rel AND NOT g.tgisinternal
     UNION ALL SELECT format('rule %I', r.rulename) FROM pg_rewrite r WHERE r.ev_class = t.rel
     UNION ALL SELECT format('policy %I', p.polname) FROM pg_policy p WHERE p.polrelid = t.rel
     UNION ALL SELECT 'row-level security' WHERE c.relrowsecurity OR c.relforcerowsecurity
     UNION ALL SELECT format('index %s', i.indexrelid::regclass) FROM pg_index i WHERE i.indrelid = t.rel AND t.old IS NOT NULL
     UNION ALL SELECT format('owner %s', c.relowner::regrole) WHERE t.old IS NOT NULL AND c.relowner <> o.relowner
     UNION ALL SELECT 'privileges' WHERE t.old IS NOT NULL
       AND (SELECT array_agg(DISTINCT (a.grantee, a.privilege_type, a.is_grantable)::text ORDER BY (a.grantee, a.privilege_type, a.is_grantable)::text)
              FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a)
           IS DISTINCT FROM
           (SELECT array_agg(DISTINCT (a.grantee, a.privilege_type, a.is_grantable)::text ORDER BY (a.grantee, a.privilege_type, a.is_grantable)::text)
              FROM aclexplode(coalesce(o.relacl, acldefault('r', o.relowner))) a)
     UNION ALL SELECT 'columns' WHERE t.old IS NOT NULL
       AND (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = t.rel AND a.attnum > 0 AND NOT a.attisdropped)
           <> (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = t.old AND a.attnum > 0 AND NOT a.attisdropped)
   ) x(w);
  IF what IS NOT NULL THEN
    RAISE EXCEPTION 'objects were added to the tables this script creates, as they were created: %', what
      USING ERRCODE = 'feature_not_supported',
            DETAIL = coalesce('Enabled event triggers: ' || (SELECT string_agg(quote_ident(e.evtname) || ' (' || e.evtevent || ')', ', ' ORDER BY e.evtname)
                                                              FROM pg_event_trigger e WHERE e.evtenabled <> 'D') || '.', 'No event trigger is enabled.'),
            HINT = 'The copy would fire what they add and the swap would give the tables the old ones'' objects too: disable those event triggers while the script runs (ALTER EVENT TRIGGER ... DISABLE), or make them skip tables named storagelab_*; then run the script (or the phase) again.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_created(oid[], text[]) IS
  'raises 0A000 when the new tables of a rewrite of relids (or the change logs named) got a trigger, rule, policy, row security, index, another owner, other privileges or columns as they were created (an event trigger): a script''s check after it created them';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_script
CREATE OR REPLACE FUNCTION storagelab_internal.layout_script(relation regclass, mode text, column_types jsonb,
                                                  column_order name[], plan jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p          record;
  tabs       jsonb;             -- the engine's input: the table, then the rest of its key's component
  comp       jsonb;
  self_types jsonb;
  ch         jsonb;             -- the table's changes
  allch      jsonb;             -- and the component's, each with its "relation" (OID)
  rels       oid[];
  tc         record;
  rechecks   text := '';
  lock_list  text;
  lock_stmt  text[];
  s          text;
  ph         text;
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'unknown mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'The modes are blocking and online.';
  END IF;
  PERFORM storagelab_internal.rewrite_refuse(ARRAY[relation::oid]);
  SELECT * INTO p FROM storagelab_internal.layout_plan(relation, column_types, column_order, plan);
  IF p.changes = '[]' AND (SELECT array_agg(c->>'column_name' ORDER BY n) FROM jsonb_array_elements(p.tables->0->'columns') WITH ORDINALITY u(c, n))
                          = (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                              WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped) THEN
    RAISE EXCEPTION 'nothing to change: the columns keep their order and types'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give column_types or column_order.';
  END IF;
  -- a retyped key: the rest of its foreign-key component changes with it,
  -- other tables (rebuilt with the table, in their own column order) and
  -- the table's own columns referencing the key
  WITH k AS MATERIALIZED (SELECT * FROM storagelab_internal.layout_key_component(relation, p.changes))
  SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('relation', storagelab_internal.bigint_migration_qname(t.relid),
                   'columns', (SELECT jsonb_agg(coalesce((SELECT jsonb_build_object('column_name', a.attname, 'type', k.new_type)
                                                            FROM k WHERE k.relid = t.relid AND k.column_name = a.attname LIMIT 1),
                                                         jsonb_build_object('column_name', a.attname)) ORDER BY a.attnum)
                                 FROM pg_attribute a WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped))
                   ORDER BY storagelab_internal.bigint_migration_qname(t.relid)), '[]')
            FROM (SELECT DISTINCT k.relid FROM k WHERE k.relid <> relation::oid) t),
         (SELECT jsonb_object_agg(k.column_name, k.new_type) FROM k WHERE k.relid = relation::oid)
    INTO comp, self_types;
  tabs := p.tables;
  IF self_types IS NOT NULL THEN
    tabs := jsonb_build_array(jsonb_build_object('relation', tabs->0->>'relation', 'columns',
              (SELECT jsonb_agg(CASE WHEN self_types ? (c->>'column_name') AND NOT c ? 'type'
                                     THEN c || jsonb_build_object('type', self_types->>(c->>'column_name')) ELSE c END ORDER BY n)
                 FROM jsonb_array_elements(tabs->0->'columns') WITH ORDINALITY u(c, n))));
  END IF;
  tabs := tabs || comp;
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            -- a column of the table that changes with the key named in column_types
                            || CASE WHEN coalesce(self_types ? c.column_name, false) AND NOT coalesce(column_types ? c.column_name, false)
                                    THEN '{"component": true}'::jsonb ELSE '{}' END ORDER BY c.pos)
                  FILTER (WHERE c.changed AND c.table_ord = 1), '[]'),
         array_agg(DISTINCT c.relid)
    INTO ch, rels
    FROM storagelab_internal.rewrite_columns(tabs) c;
  PERFORM storagelab_internal.layout_preflight(relation, ch);
  PERFORM storagelab_internal.layout_function_check(relation, ch);
  rechecks := storagelab_internal.layout_recheck(relation, ch);
  allch := ch;
  FOR tc IN
    SELECT c.relid, jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type, 'component', true)
                              ORDER BY c.pos) AS ch
      FROM storagelab_internal.rewrite_columns(tabs) c
     WHERE c.changed AND c.table_ord > 1
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    PERFORM storagelab_internal.layout_preflight(tc.relid::regclass, tc.ch);
    PERFORM storagelab_internal.layout_function_check(tc.relid::regclass, tc.ch);
    rechecks := rechecks || storagelab_internal.layout_recheck(tc.relid::regclass, tc.ch);
    allch := allch || (SELECT jsonb_agg(x || jsonb_build_object('relation', tc.relid::text)) FROM jsonb_array_elements(tc.ch) x);
  END LOOP;
  -- everything the run takes ACCESS EXCLUSIVE on, locked together before the copy
  SELECT array_agg(x.lock_sql ORDER BY x.rel::oid),
         string_agg(format(E'--   %s (%s)\n', storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.rel)),
                           x.why), '' ORDER BY x.rel::oid)
    INTO lock_stmt, lock_list
    FROM (SELECT l.rel, min(l.lock_sql) AS lock_sql,
                 CASE WHEN l.rel = relation THEN 'the table'
                      WHEN l.rel = ANY (rels) THEN 'rebuilt with the table: its foreign-key component'
                      ELSE string_agg(DISTINCT l.why, '; ') END AS why
            FROM unnest(rels) r(oid), storagelab_internal.layout_lock_targets(r.oid::regclass) l
           GROUP BY l.rel) x;
  IF mode = 'online' THEN
    RETURN storagelab_internal.layout_online_script(relation, tabs, allch,
                                                    CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list);
  END IF;
  s := storagelab_internal.layout_header(relation, tabs, allch,
                                         CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END, lock_list, NULL)
       || storagelab_internal.bigint_migration_blocking_settings()
       || E'-- Lock the table and every relation the run changes (see the header), all or none, in OID order;\n'
       || E'-- retried on lock_timeout.\n'
       || storagelab_internal.retry_block(lock_stmt, retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n' || rechecks
       || storagelab_internal.layout_function_recheck(relation, allch, 'before');
  FOREACH ph IN ARRAY ARRAY['create', 'copy', 'index', 'swap', 'validate', 'cleanup'] LOOP
    s := s || CASE ph WHEN 'create' THEN E'-- The new table beside the old one.\n'
                      WHEN 'copy' THEN E'-- Every row, in the new column order (row_security off: a policy that would hide\n'
                                        '-- rows from this role stops the script instead of leaving them out).\n'
                                        'SET LOCAL row_security = off;\n'
                      WHEN 'index' THEN E'-- Indexes and constraints, built once on the full table.\n'
                      WHEN 'swap' THEN E'-- The swap: dependents, renames, sequences, foreign keys, triggers, rules, policies.\n'
                      WHEN 'validate' THEN E'-- Foreign keys re-pointed NOT VALID, validated.\n'
                      ELSE E'-- The old table.\n' END
           || coalesce((SELECT string_agg(r.statement || E';\n', '' ORDER BY r.ord)
                          FROM storagelab_internal.rewrite_statements(tabs, ph) r), '')
           || CASE ph WHEN 'copy' THEN E'SET LOCAL row_security = on;\n'
                      -- nothing (an event trigger) added objects to the new tables as they were created
                      WHEN 'create' THEN format(E'DO %s;\n', storagelab_internal.dollar_quote(format(
                                           'BEGIN PERFORM storagelab_internal.rewrite_check_created(%L); END', rels)))
                      ELSE '' END
           || E'\n';
  END LOOP;
  s := s || storagelab_internal.layout_function_recheck(relation, allch, 'after')
         || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n'
         || E'-- Statistics of the new tables (SHARE UPDATE EXCLUSIVE: reads and writes go on).\n'
         || (SELECT string_agg(format(E'ANALYZE %s;\n', t->>'relation'), '' ORDER BY n) FROM jsonb_array_elements(tabs) WITH ORDINALITY u(t, n));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_script(regclass, text, jsonb, name[], jsonb) IS
  'the layout script of one table (with the rest of the foreign-key component of a key it retypes), given its table_rewrite_plan row (as jsonb; NULL: none): storagelab.layout_migration_script() without looking the plan up';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_old_triggers
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_old_triggers(tables jsonb, enable boolean)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: rewrite_members and rewrite_name belong to the rewrite engine
  RETURN (SELECT coalesce(array_agg(
            CASE WHEN enable THEN format('ALTER TABLE %I.%I %s TRIGGER %I', n.nspname, c.relname,
                                         CASE t.tgenabled WHEN 'A' THEN 'ENABLE ALWAYS' WHEN 'R' THEN 'ENABLE REPLICA'
                                                          WHEN 'D' THEN 'DISABLE' ELSE 'ENABLE' END, t.tgname)
                 ELSE format('ALTER TABLE %I.%I DISABLE TRIGGER %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), t.tgname) END
            ORDER BY m.level, m.relid, t.tgname), '{}')
    FROM storagelab_internal.rewrite_members(ARRAY(SELECT to_regclass(x->>'relation')::oid FROM jsonb_array_elements(tables) x)) m
    JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_trigger t ON t.tgrelid = c.oid AND NOT t.tgisinternal
   WHERE enable OR t.tgenabled <> 'D')
      || (SELECT coalesce(array_agg(
            CASE WHEN enable THEN format('ALTER TABLE %I.%I %s RULE %I', n.nspname, c.relname,
                                         CASE r.ev_enabled WHEN 'A' THEN 'ENABLE ALWAYS' WHEN 'R' THEN 'ENABLE REPLICA'
                                                           WHEN 'D' THEN 'DISABLE' ELSE 'ENABLE' END, r.rulename)
                 ELSE format('ALTER TABLE %I.%I DISABLE RULE %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), r.rulename) END
            ORDER BY m.level, m.relid, r.rulename), '{}')
    FROM storagelab_internal.rewrite_members(ARRAY(SELECT to_regclass(x->>'relation')::oid FROM jsonb_array_elements(tables) x)) m
    JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_rewrite r ON r.ev_class = c.oid AND r.rulename <> '_RETURN'
   WHERE enable OR r.ev_enabled <> 'D');
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_old_triggers(jsonb, boolean) IS
  'statements disabling the triggers and rules of the old tables of a copy-and-swap rewrite in its swap (the back log''s replay must not fire them), or giving them their states back after a swap back';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_check_rollback
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_check_rollback(relations text[], relids oid[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(format('%s.%I', r.rel, a.attname), ', ' ORDER BY r.rel, a.attnum) INTO cols
    FROM unnest(relations, relids) r(rel, old)
    JOIN pg_attribute a ON a.attrelid = to_regclass(r.rel) AND a.attnum > 0 AND NOT a.attisdropped
   WHERE to_regclass(r.rel)::oid IS DISTINCT FROM r.old
     AND NOT EXISTS (SELECT 1 FROM pg_attribute o WHERE o.attrelid = r.old AND o.attname = a.attname AND o.attnum > 0 AND NOT o.attisdropped);
  IF cols IS NOT NULL THEN
    RAISE EXCEPTION 'columns were added after the swap: %', cols
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'A rollback gives the old tables back, which lack them: their values would be lost.',
            HINT = 'Keep the swap (run phases validate and cleanup), or drop those columns and run phase rollback again.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_rollback(text[], oid[]) IS
  'raises 55000 naming the columns when, after the swap of an online rewrite, a table (its original name) has a column its old table (relids) lacks: the check of a rollback, which would lose them';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_phases
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_phases(tables jsonb, mid text, swap_pre text[] DEFAULT '{}', swap_post text[] DEFAULT '{}',
                                                          back_pre text[] DEFAULT '{}', back_post text[] DEFAULT '{}',
                                                          swap_end text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(tables, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(tables, true);
  d       jsonb;
  retries int := storagelab_internal.setting('scripts.lock_retries')::int;
  created text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  ours    text := (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
                     FROM jsonb_array_elements(fwd) x);
  others  text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                     FROM jsonb_array_elements(fwd) x);
  swapped text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x);
  copied  text := format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                         mid, jsonb_array_length(fwd));
  indexed text := (SELECT string_agg(format('EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(%L))', x->>'target'), ' AND ')
                     FROM jsonb_array_elements(fwd) x WHERE x->'key' <> 'null');
  locks   text;
  s       text := '';
  apply_f text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x);
  apply_b text[] := ARRAY[format('SELECT storagelab_internal.rewrite_online_apply_back(%L::jsonb)', back)];
  st      text[];
  roots   oid[] := ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t);
  validate text := '';
  guard   text;
  -- each table's fingerprint now: start and swap refuse when it changed (what was added since would be dropped)
  unchanged text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_check_unchanged(%L, %s, %L)', t->>'relation',
                                          to_regclass(t->>'relation')::oid,
                                          storagelab_internal.rewrite_tree_fingerprint(to_regclass(t->>'relation')))
                              FROM jsonb_array_elements(tables) WITH ORDINALITY u(t, n) ORDER BY n);
BEGIN
  -- a partitioned table without partitions has no rows to copy, log or replay
  IF EXISTS (SELECT 1 FROM unnest(roots) r WHERE NOT EXISTS (
               SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT format('The partitioned table %s has no partitions.', string_agg(r::regclass::text, ', '))
                        FROM unnest(roots) r
                       WHERE NOT EXISTS (SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)),
            HINT = 'Use the blocking mode.';
  END IF;
  indexed := coalesce(indexed, 'true');
  -- a publication of all tables or of these schemas would publish the new tables and logs: refused by every phase that writes them
  guard := storagelab_internal.rewrite_online_publication_guard(ARRAY(
             SELECT DISTINCT n.nspname FROM storagelab_internal.rewrite_members(roots) m
               JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1));
  -- the component, the new tables, the tables whose foreign keys the swap re-points and those the old tables'
  -- foreign keys reference (the swap drops those keys, which drops their triggers there), locked in one statement
  -- (a partitioned table's lock covers its partitions)
  locks := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', (SELECT string_agg(x, ', ' ORDER BY x) FROM (
             SELECT t->>'relation' AS x FROM jsonb_array_elements(tables) t
             UNION SELECT f.qrel FROM storagelab_internal.rewrite_foreign_keys(roots) f WHERE f.direction = 'to'
             UNION SELECT storagelab_internal.bigint_migration_qname(k.confrelid)
                     FROM storagelab_internal.rewrite_foreign_keys(roots) f JOIN pg_constraint k ON k.oid = f.conoid
                    WHERE f.direction = 'from'
                      AND k.confrelid NOT IN (SELECT m.relid FROM storagelab_internal.rewrite_members(roots) m)) y));
  -- start
  st := unchanged || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'create') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d) || format('COMMENT ON TABLE %s IS %L', d->>'log', tag);
  END LOOP;
  -- nothing (an event trigger) added objects to the new tables and logs as they were created
  st := st || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', roots,
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(fwd) x));
  s := s || E'\\if :ph_start\n' || guard
         || storagelab_internal.rewrite_online_do(st, created || ' AND ' || ours, 'phase start has run already', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', retries)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', created || ' AND ' || ours, 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, fwd,
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := apply_f || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n' || guard
         || storagelab_internal.rewrite_online_do(st, '(' || indexed || ' AND ' || copied || ') OR (' || swapped || ')', 'phase index has run already',
                                                  copied, 'the copy is not complete: run phase copy first', retries)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(fwd) x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', indexed || ' AND ' || copied, 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, fwd,
                   1000 * jsonb_array_length(fwd));
  -- swap
  st := ARRAY[locks] || apply_f;
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  -- under the locks, the log triggers gone: the tables are as they were when the script was written
  st := st || unchanged || storagelab_internal.rewrite_online_swap_statements(tables, 'swap', swap_pre, swap_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, false) || swap_end;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d);
  END LOOP;
  st := st || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', '{}'::oid[],
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(back) x));
  s := s || E'\\if :ph_swap\n' || guard
         || storagelab_internal.rewrite_online_do(st, swapped, 'phase swap has run already',
                                                  '(' || swapped || ') OR (' || indexed || ' AND ' || copied || ')', 'run phases copy, index and replay first', retries)
         || E'\\endif\n';
  -- validate
  FOR d IN SELECT to_jsonb(r.statement) FROM storagelab_internal.rewrite_statements(tables, 'validate') r ORDER BY r.ord LOOP
    validate := validate || storagelab_internal.retry_block(ARRAY[d #>> '{}'], retries);
  END LOOP;
  s := s || E'\\if :ph_validate\n' || validate || E'\\endif\n';
  -- cleanup
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(back) x UNION ALL SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'cleanup') r ORDER BY r.ord)
           || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped (unless columns were added since), then drop what start created
  st := ARRAY[locks]
        || (SELECT format('SELECT storagelab_internal.rewrite_check_rollback(%L, %L)',
                          array_agg(storagelab_internal.bigint_migration_qname(m.relid) ORDER BY m.level, m.relid),
                          array_agg(m.relid ORDER BY m.level, m.relid))
              FROM storagelab_internal.rewrite_members(roots) m)
        || apply_b;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap_back', back_pre, back_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, true);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  s := s || E'\\if :ph_rollback\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  -- one statement: the new tables may reference each other after a swap back
  -- (every table of a tree: inheritance children are not dropped with their parent)
  st := st || (SELECT format('DROP TABLE IF EXISTS %s', string_agg(format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), ', '))
                 FROM storagelab_internal.rewrite_members(roots) m JOIN pg_class c ON c.oid = m.relid
                 JOIN pg_namespace n ON n.oid = c.relnamespace);
  st := st || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  -- the foreign keys a swap back re-pointed NOT VALID, validated (of those that were valid; a no-op before a swap)
  s := s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
         || validate || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text, text[], text[], text[], text[], text[]) IS
  'the phases start, copy, index, replay, swap, validate, cleanup and rollback of an online copy-and-swap script for a rewrite engine input, as psql \if sections; the caller''s statements run in the swap (swap_pre, swap_post) and the swap back (back_pre, back_post) around the dependent objects, and at the end of the swap (swap_end)';

-- END generated section stale

-- ---------------------------------------------------------------------------
-- Column waste on application data: the key columns of unique constraints
-- and indexes are protected like primary keys (an order number the
-- application assigns was narrowed to smallint), and so are the columns a
-- generated column is computed from (qty * price computed in smallint);
-- the new thin-evidence reasons (too few non-NULL values, an integer-only
-- numeric seen in ANALYZE's sample only) are in the library, the comments
-- below name them.
-- Copied by hand from extension/50_column_waste.sql (a view and comments:
-- scripts/upgrade-section.sh copies files and functions only); change both.
CREATE OR REPLACE VIEW storagelab_internal.protected_columns AS
SELECT relid, attnum, min(why) AS why
  FROM (
  SELECT conrelid AS relid, unnest(conkey) AS attnum,
         CASE contype WHEN 'p' THEN 'primary key' ELSE 'foreign key' END AS why
    FROM pg_catalog.pg_constraint
   WHERE contype IN ('p', 'f')
  UNION ALL
  SELECT confrelid, unnest(confkey), 'referenced by a foreign key'
    FROM pg_catalog.pg_constraint
   WHERE contype = 'f'
  UNION ALL
  -- a default drawing from a sequence (serial, nextval(...))
  SELECT ad.adrelid, ad.adnum, 'sequence default'
    FROM pg_catalog.pg_attrdef ad
    JOIN pg_catalog.pg_depend d
      ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid = ad.oid
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
    JOIN pg_catalog.pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
  UNION ALL
  -- a sequence owned by the column
  SELECT d.refobjid, d.refobjsubid::int2, 'owns a sequence'
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
   WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refobjsubid > 0 AND d.deptype IN ('a', 'i')
  UNION ALL
  -- a column a generated column is computed from: narrowed, the expression
  -- would be computed in the narrower type (qty * price overflowing smallint
  -- when the rewrite copies the rows, or later on an INSERT)
  SELECT d.refobjid, d.refobjsubid::int2, 'generated column input'
    FROM pg_catalog.pg_attrdef ad
    JOIN pg_catalog.pg_depend d
      ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid = ad.oid
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid = ad.adrelid
     AND d.refobjsubid > 0 AND d.refobjsubid <> ad.adnum
  UNION ALL
  -- a key column of a unique constraint or unique index (partial ones too)
  SELECT i.indrelid, k.attnum, 'unique key'
    FROM pg_catalog.pg_index i
   CROSS JOIN LATERAL unnest(i.indkey[0:i.indnkeyatts - 1]) k(attnum)
   WHERE i.indisunique AND k.attnum > 0
  ) p
 GROUP BY relid, attnum;
COMMENT ON VIEW storagelab_internal.protected_columns IS
  'columns column_waste never suggests narrowing: primary keys, foreign keys on either side, columns fed by or owning a sequence, the columns a generated column is computed from, key columns of unique constraints and indexes (from pg_constraint, pg_attrdef, pg_depend and pg_index)';
COMMENT ON COLUMN storagelab_internal.protected_columns.relid IS 'table OID';
COMMENT ON COLUMN storagelab_internal.protected_columns.attnum IS 'column number';
COMMENT ON COLUMN storagelab_internal.protected_columns.why IS 'primary key, foreign key, referenced by a foreign key, sequence default, owns a sequence, generated column input or unique key (the first of them alphabetically)';
COMMENT ON FUNCTION storagelab_internal.column_candidates(oid[], int2[], float8, float8, float8) IS
  'one row per int4, int8, numeric, text, varchar or char(n) column (not dropped, identity, generated or inherited, and not one of the (skip_relids[i], skip_attnums[i]) pairs) of the tables column_statistics() lists that has no facts (rule NULL) or to which a column_waste rule applies (rule 1-13, see the view): the bounds the rule used, the suggested type and the reason in words, the bytes per row the change saves in the current order and in the suggested one, the heap pages it saves (NULL when the row count is unknown), and why the evidence is too thin for it (fewer than min_rows rows or non-NULL values; an integer-only numeric seen in ANALYZE''s sample only; integer ranges: a column named as an identifier, all values equal, fewer than min_distinct distinct values, or fewer than dense_below with gaps), NULL when it is enough';

COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, unique, foreign-key, identity, sequence-fed, generated or inherited columns nor the inputs of generated columns; on thin evidence (too few rows or non-NULL values, an integer-only numeric seen in ANALYZE''s sample only, a column named as an identifier, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
UPDATE storagelab_internal.setting_defaults
   SET description = 'fewest rows (profiled, else reltuples) and non-NULL values on which column_waste changes a type'
 WHERE name = 'column_waste.min_rows';

-- ---------------------------------------------------------------------------
-- Findings of partitions and inheritance children: one column_width or
-- alignment finding on their topmost parent, whose fix the layout script
-- accepts (a partition's own script is refused).
-- Copied by hand from extension/80_findings.sql (a view); change both.
CREATE OR REPLACE VIEW storagelab_internal.findings_layout AS
WITH RECURSIVE plan AS MATERIALIZED (
  SELECT p.relation::oid AS relid, p.estimated_saved_bytes, p.column_changes, p.column_order,
         p.evidence
    FROM storagelab.table_rewrite_plan p
), up AS (
  -- each planned table with itself and every ancestor
  SELECT plan.relid AS leaf, plan.relid AS anc FROM plan
  UNION
  SELECT up.leaf, i.inhparent FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.anc
), tops AS (
  -- its topmost ancestors (itself when it has no parent)
  SELECT up.leaf, up.anc AS root, pg_catalog.count(*) OVER (PARTITION BY up.leaf) AS roots FROM up
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = up.anc)
), leaf AS (
  SELECT t.root, pl.relid, pl.estimated_saved_bytes, pl.column_changes, pl.evidence,
         t.roots,
         -- the root's columns in the planned order
         ARRAY(SELECT u.c FROM pg_catalog.unnest(pl.column_order) WITH ORDINALITY u(c, o)
                WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                               WHERE a.attrelid = t.root AND a.attname = u.c AND a.attnum > 0
                                 AND NOT a.attisdropped)
                ORDER BY u.o) AS root_order,
         -- the changes as layout_migration_script's column_types
         (SELECT coalesce(pg_catalog.jsonb_object_agg(e->>'column_name', e->>'to'), '{}')
            FROM pg_catalog.jsonb_array_elements(pl.column_changes) e)::text AS types,
         -- every change is to a column of the root (not a child's own)
         NOT EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(pl.column_changes) e
                      WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                                         WHERE a.attrelid = t.root AND a.attname = e->>'column_name'
                                           AND a.attnum > 0 AND NOT a.attisdropped)) AS root_changes
    FROM tops t JOIN plan pl ON pl.relid = t.leaf
), grouped AS (
  SELECT l.root, pg_catalog.sum(l.estimated_saved_bytes)::int8 AS saved,
         pg_catalog.bool_or(l.column_changes <> '[]'::jsonb) AS narrows,
         CASE WHEN pg_catalog.bool_and(l.evidence = 'exact') THEN 'exact' ELSE 'statistics' END
           AS evidence,
         pg_catalog.bool_or(l.relid <> l.root) AS below,
         pg_catalog.bool_or(l.relid = l.root) AS root_planned,
         pg_catalog.count(DISTINCT l.root_order) = 1 AND pg_catalog.count(DISTINCT l.types) = 1
           AND pg_catalog.bool_and(l.root_changes) AND pg_catalog.max(l.roots) = 1 AS agree,
         pg_catalog.min(l.root_order) AS root_order, pg_catalog.min(l.types) AS types,
         pg_catalog.array_agg(l.relid ORDER BY l.relid) AS relids
    FROM leaf l
   GROUP BY l.root
)
SELECT CASE WHEN g.narrows THEN 'column_width' ELSE 'alignment' END AS category,
       CASE WHEN g.saved
                 >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.saved_warning_size'))
            THEN 'warning' ELSE 'info' END AS severity,
       g.root::pg_catalog.regclass AS relation, NULL::name AS column_name,
       'saved_bytes'::text AS metric, g.saved::numeric AS value,
       'bytes'::text AS unit,
       CASE WHEN g.below AND NOT g.root_planned AND NOT g.agree
            THEN 'its partitions or children plan differently: read their plans, choose for the parent'
            WHEN NOT g.narrows
            THEN 'column order wastes alignment padding: rebuild in the planned order'
            ELSE 'narrower column types and a new column order shrink every row' END AS message,
       g.saved AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       CASE WHEN g.root_planned
            THEN pg_catalog.format('SELECT storagelab.layout_migration_script(%L);',
                                   pg_catalog.format('%I.%I', n.nspname, c.relname))
            WHEN g.agree AND g.types <> '{}'
            THEN pg_catalog.format('SELECT storagelab.layout_migration_script(%L, column_types => %L, column_order => %L);',
                                   pg_catalog.format('%I.%I', n.nspname, c.relname), g.types, g.root_order)
            WHEN g.agree
            THEN pg_catalog.format('SELECT storagelab.layout_migration_script(%L, column_order => %L);',
                                   pg_catalog.format('%I.%I', n.nspname, c.relname), g.root_order)
            ELSE pg_catalog.format('SELECT relation, column_changes, column_order FROM storagelab.table_rewrite_plan WHERE relation IN (%s);',
                                   (SELECT pg_catalog.string_agg(pg_catalog.format('%L::regclass',
                                             pg_catalog.format('%I.%I', ln.nspname, lc.relname)), ', ' ORDER BY r.o)
                                      FROM pg_catalog.unnest(g.relids) WITH ORDINALITY r(relid, o)
                                      JOIN pg_catalog.pg_class lc ON lc.oid = r.relid
                                      JOIN pg_catalog.pg_namespace ln ON ln.oid = lc.relnamespace))
       END AS fix,
       g.evidence, NULL::int8 AS sample_rows
  FROM grouped g
  JOIN pg_catalog.pg_class c ON c.oid = g.root
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE g.saved >= pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.min_saved_size'));
COMMENT ON VIEW storagelab_internal.findings_layout IS
  'storagelab.findings rows of categories column_width and alignment: one per table_rewrite_plan row, except that the plans of partitions and inheritance children make one row on their topmost parent, with its script (following its own plan, else the changes and order the plans agree on) or the plans to read';

-- ---------------------------------------------------------------------------
-- alignment_padding: the advice says that statements without a column list
-- (SELECT *, INSERT ... VALUES, COPY) see the new order.
-- Copied by hand from extension/50_column_waste.sql (a view); change both.
CREATE OR REPLACE VIEW storagelab.alignment_padding AS
SELECT relid::pg_catalog.regclass AS relation,
       (pages_now - pages_after) * current_setting('block_size')::int8 AS saved_bytes,
       pg_catalog.pg_size_pretty((pages_now - pages_after) * current_setting('block_size')::int8)
         AS saved_pretty,
       round((row_bytes - suggested_row_bytes)::numeric, 2) AS saved_bytes_per_row,
       CASE WHEN row_bytes IS NOT NULL
            THEN 'rebuild in suggested_order: SELECT *, INSERT and COPY without a column list see the new order'
            -- never analyzed: the order can be judged from the catalog, its
            -- cost cannot
            ELSE 'not analyzed: run ANALYZE or storagelab.column_profile()' END AS advice,
       CASE WHEN row_bytes IS NULL THEN NULL
            WHEN all_exact THEN 'exact' ELSE 'statistics' END AS evidence,
       round(row_bytes::numeric, 2) AS row_bytes,
       round(padding_bytes::numeric, 2) AS padding_bytes_per_row,
       round(suggested_row_bytes::numeric, 2) AS suggested_row_bytes,
       CASE WHEN row_bytes IS NOT NULL THEN tuples::int8 END AS estimated_rows,
       pages_now,
       pages_after,
       CASE WHEN row_bytes IS NOT NULL THEN 'ok' ELSE 'not analyzed' END AS status,
       suggested_order,
       current_order
  FROM storagelab_internal.table_layouts()
 -- sizes are there when every column has facts and the row count is known
 WHERE CASE WHEN row_bytes IS NOT NULL
            THEN round((row_bytes - suggested_row_bytes)::numeric, 2) > 0
            ELSE tuples IS DISTINCT FROM 0 AND suggested_order IS DISTINCT FROM current_order END;
COMMENT ON COLUMN storagelab.alignment_padding.advice IS 'rebuild in suggested_order (statements without a column list see the new order), or run ANALYZE first';

-- Function hazards in what functions return: integer result columns (RETURNS
-- TABLE, OUT parameters, composite types; RETURN QUERY fails at once) and
-- OUT parameters assigned the converted value; and in what they write:
-- integer columns of tables outside the migration (audit and log tables).
-- Layout type changes: a RETURN QUERY column declared with the old type.  Copied from the install
-- parts by
--   scripts/upgrade-section.sh hazard_results extension/storagelab--1.0--1.1.sql \
--     extension/28_bigint_hazards.sql:storagelab_internal.function_result_columns \
--     extension/28_bigint_hazards.sql:storagelab_internal.return_query_items \
--     extension/28_bigint_hazards.sql:storagelab_internal.bigint_migration_value_hazards \
--     extension/28_bigint_hazards.sql:storagelab_internal.bigint_migration_write_hazards \
--     extension/28_bigint_hazards.sql:storagelab_internal.bigint_migration_function_hazards \
--     extension/28_bigint_hazards.sql:storagelab_internal.bigint_migration_apply_hazards \
--     extension/28_bigint_hazards.sql:storagelab_internal.type_change_function_hazards \
--     extension/61_layout_migration.sql:storagelab_internal.layout_function_check
-- (run it again after changing any of them; the comment after the section is
-- copied by hand: that file keeps its comments together at its end).
-- BEGIN generated section hazard_results
-- from extension/28_bigint_hazards.sql: storagelab_internal.function_result_columns
CREATE OR REPLACE FUNCTION storagelab_internal.function_result_columns(fn oid)
RETURNS TABLE (pos int, name text, typ oid)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT row_number() OVER (ORDER BY u.ord)::int, coalesce(p.proargnames[u.ord], ''), u.t
    FROM pg_proc p, unnest(p.proallargtypes) WITH ORDINALITY AS u(t, ord)
   WHERE p.oid = $1 AND p.proargmodes[u.ord] IN ('o', 'b', 't')
  UNION ALL
  SELECT row_number() OVER (ORDER BY a.attnum)::int, a.attname::text, a.atttypid
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype JOIN pg_class k ON k.oid = t.typrelid AND k.relkind = 'c'
    JOIN pg_attribute a ON a.attrelid = k.oid AND a.attnum > 0 AND NOT a.attisdropped
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
  UNION ALL
  SELECT 1, '', p.prorettype
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
     AND NOT EXISTS (SELECT 1 FROM pg_class k WHERE k.oid = t.typrelid AND k.relkind = 'c')
$$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.return_query_items
CREATE OR REPLACE FUNCTION storagelab_internal.return_query_items(src text)
RETURNS TABLE (stmt int, pos int, item text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT s.n::int, i.k::int,
         regexp_replace(regexp_replace(i.item, '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g')
    FROM unnest(string_to_array($1, ';')) WITH ORDINALITY AS s(st, n),
         regexp_match(regexp_replace(s.st, '\s+', ' ', 'g'),
                      '(^|[^a-z0-9_$.])return\s+query\s+(with\M.*?\)\s*)?select\s+(distinct\s+|all\s+)?(.*?)(\s+(from|where|group|order|limit|union|except|intersect)\M.*)?$') AS m,
         unnest(storagelab_internal.bigint_migration_split(m[4])) WITH ORDINALITY AS i(item, k)
$$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.bigint_migration_value_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_value_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  lang   name := (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = fn);
  -- per statement: the variables assigned, and the values at the same positions
  a_var  text[] := '{}';
  a_val  text[] := '{}';
  -- values at result positions: position, value, 'query' (RETURN QUERY) or 'assign'
  r_pos  int[] := '{}';
  r_val  text[] := '{}';
  r_how  text[] := '{}';
  -- the result columns: names and types (one unnamed column for a scalar return type)
  res_name text[];
  res_type oid[];
  st     text;
  m      text[];
  tg     text[];
  it     text[];
  k      int;
  v      record;
  o      storagelab.bigint_migration_object;
BEGIN
  SELECT array_agg(c.name ORDER BY c.pos), array_agg(c.typ ORDER BY c.pos) INTO res_name, res_type
    FROM storagelab_internal.function_result_columns(fn) c;

  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    m := regexp_match(st, '(^|[^a-z0-9_$.])([a-z_][a-z0-9_$]*)\s*:=\s*(.*)$');
    IF m IS NOT NULL THEN
      a_var := a_var || m[2]; a_val := a_val || regexp_replace(m[3], '[\s"]+', '', 'g');
    END IF;
    -- SELECT items INTO targets [FROM ...], or ... RETURNING items INTO targets
    m := regexp_match(st, '\m(select|returning)\s+(.*?)\s+into\s+(strict\s+)?(.*?)(\s+from\M.*)?$');
    IF m IS NOT NULL THEN
      it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
      tg := storagelab_internal.bigint_migration_split(m[4]);
      FOR k IN 1 .. least(cardinality(it), cardinality(tg)) LOOP
        a_var := a_var || tg[k]; a_val := a_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
      END LOOP;
    END IF;
    -- what a function returns: the items of its output at their positions
    m := NULL;
    IF lang = 'plpgsql' THEN
      m := regexp_match(st, '(^|[^a-z0-9_$.])return\s+(next\s+)?(.*)$');
      IF m IS NOT NULL AND m[3] ~ '^query\M' THEN
        FOR v IN SELECT q.pos, q.item FROM storagelab_internal.return_query_items(st) q ORDER BY q.pos LOOP
          r_pos := r_pos || v.pos; r_val := r_val || v.item; r_how := r_how || 'query'::text;
        END LOOP;
      ELSIF m IS NOT NULL AND btrim(m[3]) <> '' THEN
        r_pos := r_pos || 1; r_how := r_how || 'assign'::text; r_val := r_val || regexp_replace(m[3], '[\s"]+', '', 'g');
      END IF;
    ELSE
      m := regexp_match(st, '\m(select|returning)\s+(.*?)(\s+(from|where|group|order|limit)\M.*)?$');
      IF m IS NOT NULL THEN
        it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
        FOR k IN 1 .. cardinality(it) LOOP
          r_pos := r_pos || k; r_how := r_how || 'assign'::text;
          r_val := r_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
        END LOOP;
      END IF;
    END IF;
  END LOOP;

  IF lang = 'plpgsql' THEN
    FOR v IN
      SELECT DISTINCT m1[1] AS name, m1[3] || CASE WHEN m1[4] IS NULL THEN '' ELSE '[]' END AS typ, false AS param
        FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
             unnest(string_to_array(blk.b[1], ';')) AS d(decl),
             regexp_match(d.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?(integer|int4|int|smallint|int2)\s*(\[\s*\])?(\s|$|:|not\M|default\M)') AS m1
      UNION
      -- OUT and INOUT parameters are variables of the function too
      SELECT lower(u.n), format_type(u.t, NULL), true
        FROM unnest(res_name, res_type) AS u(n, t)
       WHERE u.n <> '' AND (SELECT p.proallargtypes IS NOT NULL FROM pg_proc p WHERE p.oid = fn)
         AND u.t IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       ORDER BY 1
    LOOP
      IF EXISTS (SELECT 1 FROM unnest(a_var, a_val) AS a(var, val)
                  WHERE a.var = v.name AND storagelab_internal.bigint_migration_arg_class(a.val, carrier) IN ('bigint', 'bigint[]')) THEN
        RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('%s %s (%s)', CASE WHEN v.param THEN 'OUT parameter' ELSE 'variable' END, v.name,
                        replace(replace(v.typ, 'int4', 'integer'), 'int2', 'smallint')),
          caller, 'past 2^31', via);
      END IF;
    END LOOP;
  END IF;
  -- result columns: an integer column at a position where the output has the value
  FOR v IN
    SELECT r.pos, r.how, res_name[r.pos] AS name, res_type[r.pos] AS typ,
           storagelab_internal.bigint_migration_arg_class(r.val, carrier) AS cls
      FROM unnest(r_pos, r_val, r_how) AS r(pos, val, how)
     WHERE r.pos <= cardinality(res_type)
       AND res_type[r.pos] IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       AND storagelab_internal.bigint_migration_arg_class(r.val, carrier) IS NOT NULL
     ORDER BY r.pos, r.how DESC
  LOOP
    CONTINUE WHEN (v.cls = 'bigint[]') <> (v.typ IN ('int2[]'::regtype, 'int4[]'::regtype));
    o := storagelab_internal.bigint_migration_hazard_row(
      fn, 0, CASE WHEN cardinality(res_type) = 1 AND res_name[1] = '' THEN format('return type %s', format_type(v.typ, NULL))
                  ELSE format('result column %s%s (%s)', v.pos, coalesce(' ' || quote_ident(nullif(v.name, '')), ''), format_type(v.typ, NULL)) END,
      caller, CASE WHEN v.how = 'query' AND v.cls <> 'cast' THEN 'immediately' ELSE 'past 2^31' END, via);
    IF o.hazard_fails = 'immediately' THEN
      -- not a call that no longer resolves: the query's row no longer matches the declared one
      o.sqlstate := '42804';
      o.handling := format('returns %s from %s in RETURN QUERY where the function declares %s: every call fails at once (structure of query does not match function result type)',
                           via, caller, format_type(v.typ, NULL));
      o.hint := 'declare the result column bigint (its callers then receive bigint), or cast the value in the query; storagelab does not change result types';
    END IF;
    RETURN NEXT o;
  END LOOP;
END
$fn$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.bigint_migration_write_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_write_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text,
                                                                  objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st    text;
  m     text[];
  tname text;
  cols  text[];
  vals  text[];
  k     int;
  depth int;
  t     record;
  o     storagelab.bigint_migration_object;
BEGIN
  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    cols := NULL; vals := NULL;
    m := regexp_match(st, '\minsert into ([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as [a-z_][a-z0-9_$]*)? ?(\(([^()]*)\))? ?(overriding [a-z]+ value )?(values ?\((.*)|select (.*))$');
    IF m IS NOT NULL THEN
      tname := m[1];
      cols := CASE WHEN m[5] IS NOT NULL THEN storagelab_internal.bigint_migration_split(regexp_replace(m[5], '[\s"]+', '', 'g')) END;
      IF m[8] IS NOT NULL THEN
        -- the first row of VALUES: up to its closing parenthesis
        depth := 1; k := 0;
        WHILE depth > 0 AND k < length(m[8]) LOOP
          k := k + 1;
          depth := depth + CASE substr(m[8], k, 1) WHEN '(' THEN 1 WHEN ')' THEN -1 ELSE 0 END;
        END LOOP;
        vals := storagelab_internal.bigint_migration_split(left(m[8], k - 1));
      ELSE
        vals := storagelab_internal.bigint_migration_split(regexp_replace(
                  (regexp_match(m[9], '^(distinct |all )?(.*?)( (from|where|group|order|limit|on conflict|returning)\M.*)?$'))[2], '\s+as\s+[a-z_0-9$]+(,|$)', '\1', 'g'));
      END IF;
    ELSE
      m := regexp_match(st, '\mupdate (only )?([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as)?( [a-z_][a-z0-9_$]*)? set (.*?)( (from|where|returning)\M.*)?$');
      IF m IS NOT NULL THEN
        tname := m[2];
        SELECT array_agg(split_part(x, '=', 1) ORDER BY n), array_agg(substr(x, strpos(x, '=') + 1) ORDER BY n) INTO cols, vals
          FROM unnest(storagelab_internal.bigint_migration_split(m[6])) WITH ORDINALITY AS u(x, n)
         WHERE x ~ '^[a-z_][a-z0-9_$]*\s*=';
        cols := ARRAY(SELECT btrim(c) FROM unnest(cols) c);
      END IF;
    END IF;
    CONTINUE WHEN vals IS NULL;
    FOR k IN 1 .. cardinality(vals) LOOP
      vals[k] := regexp_replace(vals[k], '[\s"]+', '', 'g');
      CONTINUE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint'
                AND storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint[]';
      FOR t IN
        SELECT c.oid AS relid, a.attname, a.atttypid
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relname = split_part(tname, '.', -1) AND (tname !~ '\.' OR n.nspname = split_part(tname, '.', 1))
           AND c.relkind IN ('r', 'p', 'f')
           AND CASE WHEN cols IS NULL
                    THEN a.attnum = (SELECT b.attnum FROM pg_attribute b WHERE b.attrelid = c.oid AND b.attnum > 0 AND NOT b.attisdropped
                                      ORDER BY b.attnum OFFSET k - 1 LIMIT 1)
                    ELSE a.attname = cols[k] END
           AND a.atttypid = ANY (CASE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) = 'bigint[]'
                                      THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                      ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
           AND NOT EXISTS (SELECT 1 FROM storagelab_internal.bigint_migration_converted(objs) v WHERE v.relid = c.oid AND v.attname = a.attname)
         ORDER BY 1
      LOOP
        o := storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('writes column %s.%I (%s)', storagelab_internal.bigint_migration_qname(t.relid), t.attname, format_type(t.atttypid, NULL)),
          caller, 'past 2^31', via);
        o.hint := format('convert %s.%I to bigint too (in the same script: bigint_migration_group_script() with both columns), or cast in the writer',
                         storagelab_internal.bigint_migration_qname(t.relid), t.attname);
        RETURN NEXT o;
      END LOOP;
    END LOOP;
  END LOOP;
END
$fn$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.bigint_migration_function_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_function_hazards(objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  res      storagelab.bigint_migration_object[] := '{}';
  h        storagelab.bigint_migration_object;
  r        record;
  q_fn     oid[] := '{}';   -- work: function (NULL for a view),
  q_src    text[] := '{}';  --   scrubbed text,
  q_car    text[] := '{}';  --   carrier expression,
  q_filter text[] := '{}';  --   statement filter,
  q_caller text[] := '{}';  --   who hands the value over,
  q_via    text[] := '{}';  --   what the value is,
  q_lvl    int[] := '{}';
  seen     text[] := '{}';
  i        int := 0;
BEGIN
  -- (a) trigger functions of the converted tables
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs))
    SELECT t.tgfoid, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS caller,
           (SELECT string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS cols,
           (SELECT string_agg(format('NEW.%I', c.attname), ', ' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS via
      FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
     WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
       AND t.tgrelid IN (SELECT relid FROM conv)
     ORDER BY 2
  LOOP
    q_fn := q_fn || r.tgfoid; q_src := q_src || NULL::text; q_car := q_car || ('(new|old)\.(' || r.cols || ')');
    q_filter := q_filter || NULL::text; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;
  -- (b) functions that name a converted table, (c) views of the model
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs)),
    tabs AS (
      SELECT c.relid, storagelab_internal.bigint_migration_re(k.relname) AS rel_re,
             string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) AS cols,
             string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ' ORDER BY c.attname) AS via
        FROM conv c JOIN pg_class k ON k.oid = c.relid GROUP BY c.relid, k.relname),
    funcs AS MATERIALIZED (   -- each source scrubbed once
      SELECT p.oid, storagelab_internal.bigint_migration_scrub(p.prosrc) AS src
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
    SELECT f.oid AS fn, f.src, t.cols, '(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])' AS filter,
           format('function %s', f.oid::regprocedure) AS caller, t.via
      FROM funcs f JOIN tabs t ON f.src ~ ('(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])')
    UNION ALL
    SELECT NULL, storagelab_internal.bigint_migration_scrub(pg_get_viewdef(x.objid)), t.cols, NULL, x.identity, t.via
      FROM unnest(objs) x
      JOIN LATERAL (SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') AS cols,
                           string_agg(DISTINCT format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ') AS via
                      FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                      JOIN conv c ON c.relid = d.refobjid AND c.attname = (SELECT attname FROM pg_attribute WHERE attrelid = d.refobjid AND attnum = d.refobjsubid)
                     WHERE w.ev_class = x.objid) t ON t.cols IS NOT NULL
     WHERE x.kind IN ('view', 'materialized_view')
     ORDER BY 5
  LOOP
    q_fn := q_fn || r.fn; q_src := q_src || r.src; q_car := q_car || ('([a-z_][a-z0-9_$]*\.)?(' || r.cols || ')');
    q_filter := q_filter || r.filter; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;

  WHILE i < cardinality(q_fn) AND i < 10000 LOOP
    i := i + 1;
    IF q_src[i] IS NULL THEN
      q_src[i] := storagelab_internal.bigint_migration_scrub((SELECT prosrc FROM pg_proc WHERE oid = q_fn[i]));
    END IF;
    -- PL/pgSQL variables declared table.column%TYPE of a converted column
    -- become bigint with it: they carry the value too
    q_car[i] := q_car[i] || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                        FROM regexp_matches(q_src[i], '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                                       WHERE ('new.' || m[3]) ~ ('^(' || q_car[i] || ')$')), '');
    FOR h IN
      SELECT * FROM storagelab_internal.bigint_migration_call_hazards(q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_value_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
       WHERE q_fn[i] IS NOT NULL
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_write_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i], objs)
       WHERE q_fn[i] IS NOT NULL
    LOOP
      CONTINUE WHEN format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller) = ANY (seen);
      seen := seen || format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller);
      res := res || h;
      -- a widened function passes its (now bigint) parameter on
      IF h.hazard_fails = 'immediately' AND h.objsubid > 0 AND q_lvl[i] < 8 AND storagelab_internal.bigint_migration_widenable(h.objid)
         AND format('%s:%s', h.objid, h.objsubid) <> ALL (seen) THEN
        seen := seen || format('%s:%s', h.objid, h.objsubid);
        q_fn := q_fn || h.objid; q_src := q_src || NULL::text; q_filter := q_filter || NULL::text;
        q_car := q_car || (SELECT '(' || coalesce(storagelab_internal.bigint_migration_re(nullif(p.proargnames[h.objsubid], '')) || '|', '')
                                  || '\$' || h.objsubid || ')'
                             FROM pg_proc p WHERE p.oid = h.objid);
        q_caller := q_caller || format('function %s', h.objid::regprocedure);
        q_via := q_via || format('its parameter %s once widened', h.objsubid);
        q_lvl := q_lvl || (q_lvl[i] + 1);
      END IF;
    END LOOP;
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(res);
  -- one widening row per function that fails at once and can be re-created
  RETURN QUERY
    SELECT w.*
      FROM (SELECT x.objid, array_agg(DISTINCT x.objsubid) AS argnos FROM unnest(res) x
             WHERE x.hazard_fails = 'immediately' AND x.objsubid > 0 AND storagelab_internal.bigint_migration_widenable(x.objid)
             GROUP BY x.objid) g,
           LATERAL storagelab_internal.bigint_migration_widened_row(g.objid, g.argnos, objs) w;
END
$fn$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.bigint_migration_apply_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_apply_hazards(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det  text;
  fns  text;   -- functions whose parameters must widen
  rets text;   -- functions whose result columns must widen (not done by storagelab)
BEGIN
  IF function_hazards IS NULL THEN
    RAISE EXCEPTION 'function_hazards must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use function_hazards => ''refuse'' (the default), ''widen'' or ''accept''.';
  ELSIF function_hazards NOT IN ('refuse', 'widen', 'accept') THEN
    RAISE EXCEPTION 'invalid function_hazards "%"', function_hazards USING ERRCODE = 'invalid_parameter_value',
      HINT = 'Valid values are ''refuse'', ''widen'' and ''accept''.';
  END IF;
  SELECT string_agg(x.identity || ' ' || x.handling, E'\n' ORDER BY x.identity, x.hazard_caller),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid > 0),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid = 0)
    INTO det, fns, rets
    FROM unnest(objs) x WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately';
  IF function_hazards = 'refuse' AND det IS NOT NULL THEN
    RAISE EXCEPTION 'the migration would break functions that receive the converted values'
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = det,
            HINT = CASE WHEN rets IS NULL
                        THEN format('Generate the script with function_hazards => ''widen'' to re-create %s with bigint parameters in the same transaction, '
                                    'or with function_hazards => ''accept'' to change them yourself.', fns)
                        ELSE format('Declare the result columns of %s bigint (or cast the value in the query) by hand, then generate the script again; '
                                    'or generate it with function_hazards => ''accept'' and change them in the same maintenance window.', rets) END;
  END IF;
  IF function_hazards = 'widen' THEN
    SELECT string_agg(d, E'\n' ORDER BY d) INTO det FROM (
      SELECT x.identity || ' (called by ' || x.hazard_caller || '): storagelab cannot re-create it (built in, in an extension, not PL/pgSQL or SQL, or with a SQL-standard body)' AS d
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid > 0
         AND NOT storagelab_internal.bigint_migration_widenable(x.objid)
      UNION ALL
      SELECT x.identity || ' (' || x.hazard_caller || '): widening changes parameters only, not what a function returns'
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid = 0
      UNION ALL
      SELECT x.blocker FROM unnest(objs) x WHERE x.kind = 'widened_function' AND x.blocker IS NOT NULL) y;
    IF det IS NOT NULL THEN
      RAISE EXCEPTION 'cannot widen every function that the converted values would break'
        USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
              HINT = 'Cast the argument in the caller, or change these functions by hand, then generate the script again.';
    END IF;
    RETURN objs;
  END IF;
  RETURN ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'widened_function');
END
$fn$;

-- from extension/28_bigint_hazards.sql: storagelab_internal.type_change_function_hazards
CREATE OR REPLACE FUNCTION storagelab_internal.type_change_function_hazards(relation regclass, changes jsonb)
RETURNS TABLE (fn regprocedure, caller text, column_name text, old_type text, new_type text, hazard text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e      jsonb;
  o_t    oid;
  n_t    oid;
  r      record;
  k      record;
  v      record;
  src    text;
  car    text;
  stmts  text[];
  found_one boolean;
  ops    text := '(=|<>|!=|<=|>=|<|>)';
  opnd   text := '(\$[0-9]+|[a-z_][a-z0-9_$]*)';
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    o_t := to_regtype(e->>'from'); n_t := to_regtype(e->>'to');
    CONTINUE WHEN o_t IS NULL OR n_t IS NULL OR o_t = n_t;
    column_name := e->>'column_name'; old_type := format_type(o_t, NULL); new_type := format_type(n_t, NULL);
    FOR r IN
      -- trigger functions of the table and of its partitions or children
      SELECT DISTINCT t.tgfoid AS f, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS who,
             '(?:new|old)\.(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')' AS carrier, NULL::text AS filter
        FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
         AND t.tgrelid IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[relation::oid]) m)
      UNION
      -- functions whose statements name the table
      SELECT p.oid, format('function %s', p.oid::regprocedure),
             '(?:[a-z_][a-z0-9_$]*\.)?(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')',
             '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])'
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k2
       WHERE k2.oid = relation AND l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.prorettype <> 'trigger'::regtype
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
         AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])')
      ORDER BY 2
    LOOP
      src := storagelab_internal.bigint_migration_scrub((SELECT p.prosrc FROM pg_proc p WHERE p.oid = r.f));
      car := r.carrier;
      -- PL/pgSQL variables declared table.column%TYPE of the column carry the value too
      car := car || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                FROM regexp_matches(src, '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                               WHERE m[3] = lower(e->>'column_name')), '');
      stmts := ARRAY(SELECT s FROM unnest(string_to_array(src, ';')) s WHERE r.filter IS NULL OR s ~ r.filter);
      CONTINUE WHEN NOT EXISTS (SELECT 1 FROM unnest(stmts) s WHERE s ~ ('(^|[^a-z0-9_$.])(' || car || ')($|[^a-z0-9_$])'));
      fn := r.f; caller := r.who; found_one := false;
      -- calls
      FOR k IN
        SELECT DISTINCT c.fname, c.nargs, c.argno, storagelab_internal.bigint_migration_arg_class(c.arg, car) = 'bigint[]' AS arr
          FROM storagelab_internal.bigint_migration_calls(array_to_string(stmts, ';')) c
         WHERE storagelab_internal.bigint_migration_arg_class(c.arg, car) IN ('bigint', 'bigint[]')
         ORDER BY 1, 3
      LOOP
        CONTINUE WHEN EXISTS (
          SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], n_t, k.arr));
        FOR v IN
          SELECT f.oid::regprocedure AS callee FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], o_t, k.arr)
           ORDER BY f.oid
        LOOP
          hazard := format('passes %s (%s) as argument %s of %s: no function of that name takes %s%s', column_name,
                           new_type || CASE WHEN k.arr THEN '[]' ELSE '' END, k.argno, v.callee,
                           new_type, CASE WHEN k.arr THEN '[]' ELSE '' END);
          found_one := true;
          RETURN NEXT;
        END LOOP;
      END LOOP;
      -- comparisons with a parameter or a declared variable
      FOR k IN
        WITH params AS (
          SELECT '$' || u.n AS name, u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n) WHERE p.oid = r.f
          UNION ALL
          SELECT lower(p.proargnames[u.n]), u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n)
           WHERE p.oid = r.f AND p.proallargtypes IS NULL AND coalesce(p.proargnames[u.n], '') <> ''
          UNION ALL
          SELECT d[1], to_regtype(btrim(d[3]))
            FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
                 unnest(string_to_array(blk.b[1], ';')) AS x(decl),
                 regexp_match(x.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?([a-z_][a-z0-9_ ]*?(\([0-9, ]+\))?)\s*(:=|default\M|not\s+null\M|$)') AS d
           WHERE to_regtype(btrim(d[3])) IS NOT NULL),
        cmp AS (
          SELECT m[3] AS op, m[4] AS other, true AS value_left
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])(' || car || ')\s*' || ops || '\s*' || opnd || '($|[^a-z0-9_$.(:])', 'g') m
          UNION ALL
          SELECT m[3], m[2], false
            FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])' || opnd || '\s*' || ops || '\s*(' || car || ')($|[^a-z0-9_$.(:])', 'g') m)
        SELECT DISTINCT c.op, c.other, c.value_left, p.t
          FROM cmp c JOIN params p ON p.name = c.other
         WHERE c.other !~ ('^(' || car || ')$')
         ORDER BY 2, 1
      LOOP
        CONTINUE WHEN k.t IS NULL OR EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, n_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, n_t, false) END);
        CONTINUE WHEN NOT EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, o_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, o_t, false) END);
        hazard := format('compares %s (%s) with %s (%s): no operator %s', column_name, new_type, k.other, format_type(k.t, NULL),
                         CASE WHEN k.value_left THEN format('%s %s %s', new_type, k.op, format_type(k.t, NULL))
                              ELSE format('%s %s %s', format_type(k.t, NULL), k.op, new_type) END);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      -- RETURN QUERY: each column of the query must have the declared type exactly
      FOR k IN
        SELECT DISTINCT q.pos, c.name
          FROM storagelab_internal.return_query_items(array_to_string(stmts, ';')) q
          JOIN storagelab_internal.function_result_columns(r.f) c ON c.pos = q.pos
         WHERE q.item ~ ('^\(*(' || car || ')\)*$') AND c.typ = o_t
         ORDER BY 1
      LOOP
        hazard := format('returns %s (%s) in RETURN QUERY as result column %s%s, declared %s: every call fails (structure of query does not match function result type)',
                         column_name, new_type, k.pos, coalesce(' ' || quote_ident(nullif(k.name, '')), ''), old_type);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      IF NOT found_one THEN
        hazard := NULL;
        RETURN NEXT;
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.type_change_function_hazards(regclass, jsonb) IS
  'functions reading retyped columns of a table (trigger functions with NEW/OLD, functions naming the table), each with the calls and comparisons that no function or operator takes with the new type and the RETURN QUERY columns declared with the old type (fail at once), hazard NULL when none';

-- from extension/61_layout_migration.sql: storagelab_internal.layout_function_check
CREATE OR REPLACE FUNCTION storagelab_internal.layout_function_check(relation regclass, changes jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det text;
BEGIN
  SELECT string_agg(format('%s (%s): %s', h.fn, h.caller, h.hazard), E'\n' ORDER BY h.fn::text, h.hazard) INTO det
    FROM storagelab_internal.type_change_function_hazards(relation, changes) h
   WHERE h.hazard IS NOT NULL;
  IF det IS NOT NULL THEN
    RAISE EXCEPTION 'the type changes would break functions that use the changed columns of %', relation
      USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
            HINT = 'Change those functions first (cast the value where it is passed, compared or returned, add an overload for the new type, or declare the result column with it), or give the column its current type in column_types.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_function_check(regclass, jsonb) IS
  'refuses (2BP01, naming them) a layout plan whose type changes break functions that read the changed columns: calls and comparisons no function or operator takes with the new type, RETURN QUERY columns declared with the old type';

-- END generated section hazard_results
COMMENT ON FUNCTION storagelab_internal.bigint_migration_value_hazards(oid, text, text, text, text, text) IS
  'function hazards inside one function: smallint/integer PL/pgSQL variables, OUT parameters, return types and result columns (RETURNS TABLE, composite types, RETURN QUERY) that receive the converted value';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write_hazards(oid, text, text, text, text, text, storagelab.bigint_migration_object[]) IS
  'function hazards in what one function writes: the converted value inserted or updated into a smallint/integer column of a table outside the migration';
COMMENT ON FUNCTION storagelab_internal.function_result_columns(oid) IS
  'the result columns of a function in order: OUT/INOUT/TABLE parameters, else the attributes of a CREATE TYPE composite return type, else the return type';
COMMENT ON FUNCTION storagelab_internal.return_query_items(text) IS
  'the select-list items of each PL/pgSQL RETURN QUERY SELECT in a scrubbed source, by position';

-- Mode online converts a partition-key column (a new partitioned table with
-- a bigint key); phase index of a copy-and-swap script knows it has run by
-- the indexes and NOT VALID CHECK constraints it builds (a component of
-- tables without keys skipped it).  Copied from the install parts by
--   scripts/upgrade-section.sh partition_key extension/storagelab--1.0--1.1.sql \
--     extension/22_bigint_objects.sql:storagelab_internal.bigint_migration_table_blockers \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.rewrite_online_phases \
--     extension/63_bigint_copy_swap.sql:storagelab_internal.bigint_migration_copy_swap_script
-- (run it again after changing any of them).
-- BEGIN generated section partition_key
-- from extension/22_bigint_objects.sql: storagelab_internal.bigint_migration_table_blockers
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_table_blockers(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  r       record;
  q       record;
  v_sql   text;
BEGIN
  FOR r IN
    SELECT DISTINCT c.oid AS relid, c.reloftype, c.reltype, storagelab_internal.bigint_migration_qname(c.oid) AS qn
      FROM unnest(crel) AS x(relid) JOIN pg_class c ON c.oid = x.relid
  LOOP
    IF r.reloftype <> 0 THEN
      o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.identity := r.qn; o.depth := 0;
      o.blocker := format('table %s is a typed table (OF %s); its column types come from the type', r.qn, r.reloftype::regtype);
      o.sqlstate := '0A000';
      o.hint := 'Detach it from the type (ALTER TABLE ... NOT OF), convert, and change the type by hand.';
      RETURN NEXT o;
    END IF;
    FOR q IN
      SELECT a.attrelid, a.attname
        FROM pg_attribute a
       WHERE a.atttypid IN (SELECT r.reltype UNION SELECT t.typarray FROM pg_type t WHERE t.oid = r.reltype
                            UNION SELECT t.oid FROM pg_type t WHERE t.typbasetype = r.reltype)
         AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
      o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.identity := r.qn; o.depth := 0;
      o.blocker := format('the row type of %s is used by column %s.%I', r.qn, storagelab_internal.bigint_migration_qname(q.attrelid), q.attname);
      o.sqlstate := '0A000';
      o.hint := 'PostgreSQL cannot change a row type that is stored in another table or view column; drop or change that column first.';
      RETURN NEXT o;
    END LOOP;
  END LOOP;
  FOR r IN
    SELECT x.relid, x.attnum, a.attname, storagelab_internal.bigint_migration_qname(x.relid) AS qn
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum
     WHERE EXISTS (SELECT 1 FROM pg_partitioned_table p
                    WHERE p.partrelid = x.relid AND x.attnum = ANY (p.partattrs::int2[]))
        OR EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = x.relid AND d.objsubid = x.attnum
                      AND d.refclassid = 'pg_class'::regclass AND d.refobjid = x.relid AND d.refobjsubid = 0
                      AND d.deptype = 'i')
  LOOP
    o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('%s.%I', r.qn, r.attname);
    o.blocker := format('column %s.%I is part of the partition key of %s', r.qn, r.attname, r.qn);
    o.sqlstate := '0A000';
    o.hint := 'A partition-key column cannot be converted in place: use mode ''online'', which builds a new partitioned table with a bigint key and moves the data into it.';
    o.handling := 'partition key';   -- a blocker of ALTER COLUMN TYPE only: copy and swap builds new tables
    RETURN NEXT o;
  END LOOP;

  -- A column inherited from parents in separate inheritance trees
  -- (multiple inheritance): ALTER COLUMN TYPE on one parent fails with
  -- "cannot alter inherited column", whatever the order.
  FOR r IN
    WITH RECURSIVE up(child, anc) AS (
      SELECT i.inhrelid, i.inhparent FROM pg_inherits i
       WHERE i.inhrelid IN (SELECT x.relid FROM unnest(crel) AS x(relid))
      UNION
      SELECT up.child, i.inhparent FROM up JOIN pg_inherits i ON i.inhrelid = up.anc
    )
    SELECT x.relid, a.attname, storagelab_internal.bigint_migration_qname(x.relid) AS qn,
           string_agg(DISTINCT storagelab_internal.bigint_migration_qname(up.anc), ', ') AS roots
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum AND a.attinhcount > 1
      JOIN up ON up.child = x.relid AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = up.anc)
     GROUP BY x.relid, a.attname
    HAVING count(DISTINCT up.anc) > 1
  LOOP
    o := NULL; o.kind := 'blocker'; o.relation := r.relid; o.column_name := r.attname; o.depth := 0;
    o.identity := format('%s.%I', r.qn, r.attname);
    o.blocker := format('column %s.%I is inherited from several inheritance trees (%s); ALTER COLUMN TYPE on one parent cannot change it',
                        r.qn, r.attname, r.roots);
    o.sqlstate := '0A000';
    o.hint := 'Detach the table from all but one parent (ALTER TABLE ... NO INHERIT), convert, and attach it again (INHERIT).';
    RETURN NEXT o;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_table_blockers(oid[], int2[]) IS
  'Blockers on the tables themselves: typed tables, row types stored elsewhere, partition keys, multiple inheritance.';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.rewrite_online_phases
CREATE OR REPLACE FUNCTION storagelab_internal.rewrite_online_phases(tables jsonb, mid text, swap_pre text[] DEFAULT '{}', swap_post text[] DEFAULT '{}',
                                                          back_pre text[] DEFAULT '{}', back_post text[] DEFAULT '{}',
                                                          swap_end text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(tables, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(tables, true);
  d       jsonb;
  retries int := storagelab_internal.setting('scripts.lock_retries')::int;
  created text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  ours    text := (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
                     FROM jsonb_array_elements(fwd) x);
  others  text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                     FROM jsonb_array_elements(fwd) x);
  swapped text := (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x);
  copied  text := format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                         mid, jsonb_array_length(fwd));
  indexed text;
  locks   text;
  s       text := '';
  apply_f text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x);
  apply_b text[] := ARRAY[format('SELECT storagelab_internal.rewrite_online_apply_back(%L::jsonb)', back)];
  st      text[];
  roots   oid[] := ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t);
  validate text := '';
  guard   text;
  -- each table's fingerprint now: start and swap refuse when it changed (what was added since would be dropped)
  unchanged text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_check_unchanged(%L, %s, %L)', t->>'relation',
                                          to_regclass(t->>'relation')::oid,
                                          storagelab_internal.rewrite_tree_fingerprint(to_regclass(t->>'relation')))
                              FROM jsonb_array_elements(tables) WITH ORDINALITY u(t, n) ORDER BY n);
BEGIN
  -- a partitioned table without partitions has no rows to copy, log or replay
  IF EXISTS (SELECT 1 FROM unnest(roots) r WHERE NOT EXISTS (
               SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT format('The partitioned table %s has no partitions.', string_agg(r::regclass::text, ', '))
                        FROM unnest(roots) r
                       WHERE NOT EXISTS (SELECT 1 FROM storagelab_internal.rewrite_members(ARRAY[r]) m WHERE m.leaf)),
            HINT = 'Use the blocking mode.';
  END IF;
  -- phase index has run when every index it builds exists (the copy of each valid index of every old
  -- table and partition, named by rewrite_index_name) and every NOT VALID CHECK constraint it adds
  indexed := coalesce((SELECT string_agg(c, ' AND ' ORDER BY c) FROM (
                 SELECT format('to_regclass(%L) IS NOT NULL', format('%I.%I', n.nspname, storagelab_internal.rewrite_index_name(i.indexrelid))) AS c
                   FROM storagelab_internal.rewrite_members(roots) m
                   JOIN pg_index i ON i.indrelid = m.relid AND i.indisvalid
                   JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_namespace n ON n.oid = x.relnamespace
                 UNION ALL
                 SELECT format('EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = to_regclass(%L) AND k.conname = %L)',
                               format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', m.relid)), k.conname)
                   FROM storagelab_internal.rewrite_members(roots) m
                   JOIN pg_constraint k ON k.conrelid = m.relid AND k.contype = 'c' AND NOT k.convalidated AND k.coninhcount = 0
                   JOIN pg_class x ON x.oid = m.relid JOIN pg_namespace n ON n.oid = x.relnamespace) q), 'true');
  -- a publication of all tables or of these schemas would publish the new tables and logs: refused by every phase that writes them
  guard := storagelab_internal.rewrite_online_publication_guard(ARRAY(
             SELECT DISTINCT n.nspname FROM storagelab_internal.rewrite_members(roots) m
               JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1));
  -- the component, the new tables, the tables whose foreign keys the swap re-points and those the old tables'
  -- foreign keys reference (the swap drops those keys, which drops their triggers there), locked in one statement
  -- (a partitioned table's lock covers its partitions)
  locks := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', (SELECT string_agg(x, ', ' ORDER BY x) FROM (
             SELECT t->>'relation' AS x FROM jsonb_array_elements(tables) t
             UNION SELECT f.qrel FROM storagelab_internal.rewrite_foreign_keys(roots) f WHERE f.direction = 'to'
             UNION SELECT storagelab_internal.bigint_migration_qname(k.confrelid)
                     FROM storagelab_internal.rewrite_foreign_keys(roots) f JOIN pg_constraint k ON k.oid = f.conoid
                    WHERE f.direction = 'from'
                      AND k.confrelid NOT IN (SELECT m.relid FROM storagelab_internal.rewrite_members(roots) m)) y));
  -- start
  st := unchanged || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'create') r ORDER BY r.ord);
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d) || format('COMMENT ON TABLE %s IS %L', d->>'log', tag);
  END LOOP;
  -- nothing (an event trigger) added objects to the new tables and logs as they were created
  st := st || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', roots,
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(fwd) x));
  s := s || E'\\if :ph_start\n' || guard
         || storagelab_internal.rewrite_online_do(st, created || ' AND ' || ours, 'phase start has run already', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', retries)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', created || ' AND ' || ours, 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, fwd,
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := apply_f || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n' || guard
         || storagelab_internal.rewrite_online_do(st, '(' || indexed || ' AND ' || copied || ') OR (' || swapped || ')', 'phase index has run already',
                                                  copied, 'the copy is not complete: run phase copy first', retries)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(fwd) x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n' || guard
         || storagelab_internal.rewrite_online_do('{}', 'false', '', indexed || ' AND ' || copied, 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, fwd,
                   1000 * jsonb_array_length(fwd));
  -- swap
  st := ARRAY[locks] || apply_f;
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  -- under the locks, the log triggers gone: the tables are as they were when the script was written
  st := st || unchanged || storagelab_internal.rewrite_online_swap_statements(tables, 'swap', swap_pre, swap_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, false) || swap_end;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_start(d);
  END LOOP;
  st := st || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', '{}'::oid[],
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(back) x));
  s := s || E'\\if :ph_swap\n' || guard
         || storagelab_internal.rewrite_online_do(st, swapped, 'phase swap has run already',
                                                  '(' || swapped || ') OR (' || indexed || ' AND ' || copied || ')', 'run phases copy, index and replay first', retries)
         || E'\\endif\n';
  -- validate
  FOR d IN SELECT to_jsonb(r.statement) FROM storagelab_internal.rewrite_statements(tables, 'validate') r ORDER BY r.ord LOOP
    validate := validate || storagelab_internal.retry_block(ARRAY[d #>> '{}'], retries);
  END LOOP;
  s := s || E'\\if :ph_validate\n' || validate || E'\\endif\n';
  -- cleanup
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(back) x UNION ALL SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  st := st || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_statements(tables, 'cleanup') r ORDER BY r.ord)
           || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped (unless columns were added since), then drop what start created
  st := ARRAY[locks]
        || (SELECT format('SELECT storagelab_internal.rewrite_check_rollback(%L, %L)',
                          array_agg(storagelab_internal.bigint_migration_qname(m.relid) ORDER BY m.level, m.relid),
                          array_agg(m.relid ORDER BY m.level, m.relid))
              FROM storagelab_internal.rewrite_members(roots) m)
        || apply_b;
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, false);
  END LOOP;
  st := st || storagelab_internal.rewrite_online_swap_statements(tables, 'swap_back', back_pre, back_post)
           || storagelab_internal.rewrite_online_old_triggers(tables, true);
  FOR d IN SELECT x FROM jsonb_array_elements(back) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  s := s || E'\\if :ph_rollback\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  st := '{}';
  FOR d IN SELECT x FROM jsonb_array_elements(fwd) x LOOP
    st := st || storagelab_internal.rewrite_online_log_stop(d, true);
  END LOOP;
  -- one statement: the new tables may reference each other after a swap back
  -- (every table of a tree: inheritance children are not dropped with their parent)
  st := st || (SELECT format('DROP TABLE IF EXISTS %s', string_agg(format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), ', '))
                 FROM storagelab_internal.rewrite_members(roots) m JOIN pg_class c ON c.oid = m.relid
                 JOIN pg_namespace n ON n.oid = c.relnamespace);
  st := st || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  -- the foreign keys a swap back re-pointed NOT VALID, validated (of those that were valid; a no-op before a swap)
  s := s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
         || validate || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases(jsonb, text, text[], text[], text[], text[], text[]) IS
  'the phases start, copy, index, replay, swap, validate, cleanup and rollback of an online copy-and-swap script for a rewrite engine input, as psql \if sections; the caller''s statements run in the swap (swap_pre, swap_post) and the swap back (back_pre, back_post) around the dependent objects, and at the end of the swap (swap_end)';

-- from extension/63_bigint_copy_swap.sql: storagelab_internal.bigint_migration_copy_swap_script
CREATE OR REPLACE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[],
                                                                      relations regclass[], column_names name[],
                                                                      function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables    jsonb;
  mid       text;
  s         text;
  swap_pre  text[] := '{}';
  swap_post text[] := '{}';
  back_pre  text[] := '{}';
  back_post text[] := '{}';
  swap_end  text[] := '{}';
BEGIN
  -- a partition-key column blocks ALTER COLUMN TYPE, not a new table
  PERFORM storagelab_internal.bigint_migration_refuse(
    ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'blocker' OR x.handling IS DISTINCT FROM 'partition key'), '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  -- in the swap, around the dependent objects: the functions to widen
  -- (checked unchanged since generation, dropped, created with bigint
  -- parameters) and the sequences' types; in the swap back, the reverse
  IF EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'widened_function') THEN
    SELECT array_agg(x.drop_sql ORDER BY x.identity),
           array_agg(x.create_sql ORDER BY x.identity),
           array_agg(format('DROP %s %s', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, x.hazard_target) ORDER BY x.identity),
           array_agg(pg_get_functiondef(x.objid) || E';\n'
                     || format(E'ALTER ROUTINE %s OWNER TO %I;\n', x.objid::regprocedure, pg_get_userbyid(p.proowner))
                     || storagelab_internal.bigint_migration_acl_sql('ROUTINE', x.objid::regprocedure::text, p.proacl, p.proowner)
                     || CASE WHEN obj_description(x.objid, 'pg_proc') IS NULL THEN ''
                             ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', x.objid::regprocedure, obj_description(x.objid, 'pg_proc')) END
                     ORDER BY x.identity)
      INTO swap_pre, swap_post, back_pre, back_post
      FROM unnest(objs) x JOIN pg_proc p ON p.oid = x.objid
     WHERE x.kind = 'widened_function';
  END IF;
  swap_post := swap_post || ARRAY(SELECT x.create_sql FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  -- first in the swap's own statements: the functions to widen are unchanged since generation (55000),
  -- and, with plpgsql_check installed, the errors of the PL/pgSQL functions that use these tables;
  -- last: no new error (22000, the swap rolls back)   (part 28)
  swap_pre := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before'), '')], NULL) || swap_pre;
  swap_end := array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after'), '')], NULL);
  back_post := back_post || ARRAY(SELECT format('ALTER SEQUENCE %s AS %s', storagelab_internal.bigint_migration_qname(x.objid), format_type(q.seqtypid, NULL))
                                    FROM unnest(objs) x JOIN pg_sequence q ON q.seqrelid = x.objid
                                   WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity);
  IF to_regprocedure('storagelab_internal.rewrite_statements(jsonb,text)') IS NULL THEN
    RAISE EXCEPTION 'mode online needs the rewrite engine, which this installation lacks'
      USING ERRCODE = 'feature_not_supported', HINT = 'Use mode ''shadow'' or ''blocking''.';
  END IF;
  -- a child's own column would not be converted with its parent's (the engine keeps a child's own columns' types)
  FOR s IN
    SELECT format('%s.%I', x.relation, x.column_name)
      FROM unnest(objs) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
     WHERE x.kind = 'column' AND a.attinhcount = 0 AND EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)
     ORDER BY 1 LIMIT 1
  LOOP
    RAISE EXCEPTION 'mode online does not convert a column of an inheritance child that its parent lacks'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Column %s.', s),
            HINT = 'Use mode ''blocking'' or ''shadow''.';
  END LOOP;
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  -- a publication of all tables, or of a schema of these tables, would publish the new tables and the logs
  -- (the subscribers lack them: their apply stops at the first copied row)
  IF cardinality(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) > 0 THEN
    RAISE EXCEPTION 'a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of an online migration'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('Publications: %s.', (SELECT string_agg(quote_ident(x), ', ')
                       FROM unnest(storagelab_internal.rewrite_online_publications(ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements(tables) t))) x)),
            HINT = 'Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), or use mode ''blocking''.';
  END IF;
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  s := format(E'-- storagelab %s: INT to BIGINT migration (mode online: copy and swap), migration id %s\n',
              (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || coalesce((SELECT E'-- Sequences made bigint in the swap (their type given back by a swap back):\n'
                        || string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(storagelab_internal.bigint_migration_qname(x.objid)) || E'\n', '' ORDER BY x.identity)
                   FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL), '')
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n\\set ON_ERROR_STOP on\n'
    || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
    || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
    || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
    || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
    || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
    || (SELECT 'SELECT ' || string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ') || E' \\gset\n'
          FROM unnest(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback']) p)
    || E'SELECT :''phase'' NOT IN (''start'', ''copy'', ''index'', ''replay'', ''swap'', ''validate'', ''cleanup'', ''rollback'') AS ph_bad \\gset\n'
    || E'\\if :ph_bad\n'
    || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s || storagelab_internal.rewrite_online_phases(tables, mid, swap_pre, swap_post, back_pre, back_post, swap_end);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_copy_swap_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the INT->BIGINT script in mode online (alias copy_swap): the component rebuilt by the rewrite engine beside the old tables, copied in batches, kept in step by change logs, swapped in one short transaction; phases start to cleanup, and rollback';

-- END generated section partition_key

-- The int_overflow findings say when no sequence feeds the column, and when a
-- value is the type's bound itself (a sentinel?).  Copied by hand from
-- extension/80_findings.sql (a view); change both.
CREATE OR REPLACE VIEW storagelab_internal.findings_int_overflow AS
SELECT 'int_overflow'::text AS category, o.severity, o.relation, o.column_name,
       'used_pct'::text AS metric, round(o.used_pct, 1) AS value, 'percent'::text AS unit,
       CASE WHEN o.source IN ('sequence', 'identity', 'foreign key') THEN 'integer column is running out of values: migrate it to bigint'
            -- no sequence: values the application writes; one at the type's bound itself is often a sentinel
            WHEN o.values_left = 0 THEN 'integer column holds its type''s limit itself (a sentinel?): check its writers, then migrate'
            ELSE 'integer column holds values near its limit, no sequence behind them: migrate it to bigint' END AS message,
       NULL::int8 AS estimated_saved_bytes, o.overflow_at,
       pg_catalog.format('SELECT storagelab.bigint_migration_script(%L, %L, ''online'');',
                         pg_catalog.format('%I.%I', n.nspname, c.relname), o.column_name) AS fix,
       o.evidence,
       NULL::int8 AS sample_rows
  FROM storagelab.int_overflow o
  JOIN pg_catalog.pg_class c ON c.oid = o.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE o.severity IN ('warning', 'critical');

-- Freeze ages of the table or of its TOAST table, whichever is older
-- (visibility view and its findings).  Copied by hand from
-- extension/30_heap_visibility.sql and extension/80_findings.sql (views);
-- change both.
CREATE OR REPLACE VIEW storagelab.visibility AS
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
COMMENT ON COLUMN storagelab.visibility.relfrozenxid_age IS 'age(relfrozenxid) of the table or of its TOAST table, whichever is older: transactions since it was last frozen up to relfrozenxid';
COMMENT ON COLUMN storagelab.visibility.relminmxid_age IS 'mxid_age(relminmxid) of the table or of its TOAST table, whichever is older';
CREATE OR REPLACE VIEW storagelab_internal.findings_visibility AS
-- MATERIALIZED: the settings once per query, not once per table
WITH cfg AS MATERIALIZED (
  SELECT pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.visibility_min_size'))
           / current_setting('block_size')::int8 AS min_pages,
         storagelab_internal.setting('findings.all_visible_warning_pct')::numeric AS warning_pct,
         current_setting('autovacuum_freeze_max_age')::int8
           * storagelab_internal.setting('findings.freeze_critical_pct')::numeric / 100 AS freeze_age
), t AS (
  SELECT c.oid, pg_catalog.format('%I.%I', n.nspname, c.relname) AS name,
         -- the older of the table's and its TOAST table's, as the visibility view
         CASE WHEN c.relfrozenxid <> '0'
              THEN greatest(pg_catalog.age(c.relfrozenxid),
                            CASE WHEN tt.relfrozenxid <> '0' THEN pg_catalog.age(tt.relfrozenxid) END) END AS xid_age,
         cfg.*
    FROM cfg, pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_catalog.pg_class tt ON tt.oid = c.reltoastrelid
   WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
     AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
     -- the visibility map is read for members of pg_stat_scan_tables, of
     -- the tables the visibility view lists
     AND pg_catalog.pg_has_role('pg_stat_scan_tables', 'USAGE')
     AND (pg_catalog.has_table_privilege(c.oid, 'SELECT')
          OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE'))
     AND (c.relpages - c.relallvisible >= cfg.min_pages
          OR (c.reltuples < 0 AND pg_catalog.pg_stat_get_ins_since_vacuum(c.oid) > 0)
          OR (c.relfrozenxid <> '0' AND pg_catalog.age(c.relfrozenxid) >= cfg.freeze_age)
          OR (tt.relfrozenxid <> '0' AND pg_catalog.age(tt.relfrozenxid) >= cfg.freeze_age))
)
SELECT 'visibility'::text AS category,
       CASE WHEN f.freeze THEN 'critical' ELSE 'warning' END AS severity,
       t.oid::pg_catalog.regclass AS relation, NULL::name AS column_name,
       CASE WHEN f.freeze THEN 'relfrozenxid_age' ELSE 'hint_debt_pages' END AS metric,
       CASE WHEN f.freeze THEN t.xid_age ELSE vm.pages - vm.all_visible_pages END::numeric AS value,
       CASE WHEN f.freeze THEN 'transactions' ELSE 'pages' END AS unit,
       CASE WHEN f.freeze THEN 'table nears its anti-wraparound vacuum: freeze it at a quiet time'
            ELSE 'most pages not all-visible: reads set hint bits, index-only scans visit the heap'
            END AS message,
       NULL::int8 AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       pg_catalog.format('VACUUM (FREEZE, ANALYZE) %s;', t.name) AS fix,
       'exact'::text AS evidence, NULL::int8 AS sample_rows
  FROM t
 CROSS JOIN LATERAL storagelab_internal.findings_visibility_map(t.oid::pg_catalog.regclass) vm
 CROSS JOIN LATERAL (SELECT t.xid_age >= t.freeze_age AS freeze) f
 WHERE f.freeze
    OR (vm.pages - vm.all_visible_pages >= t.min_pages
        AND 100.0 * vm.all_visible_pages < t.warning_pct * vm.pages);

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
              WHEN vm.pages IS NULL THEN NULL
              WHEN r.relfrozenxid_age >= r.freeze_max_age * 0.8 THEN 'critical'
              WHEN vm.pages = 0 THEN 'ok'
              WHEN r.relfrozenxid_age >= r.freeze_table_age AND vm.all_frozen_pages < vm.pages THEN 'warning'
              WHEN vm.all_visible_pages < 0.5 * vm.pages THEN 'info'
              ELSE 'ok'
            END AS severity,
            CASE
              WHEN vm.pages IS NULL AND r.persistence = 'u' AND pg_catalog.pg_is_in_recovery() THEN
                'unknown: an unlogged table has no data on a standby'
              WHEN vm.pages IS NULL THEN 'unknown: the table is locked'
              WHEN r.relfrozenxid_age >= r.freeze_max_age * 0.8 THEN
                'VACUUM (FREEZE) now: relfrozenxid_age nears autovacuum_freeze_max_age (anti-wraparound)'
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
COMMENT ON COLUMN storagelab.visibility.severity IS 'critical (anti-wraparound VACUUM near), warning (next VACUUM aggressive), info (VACUUM helps), ok; NULL when locked';
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
           c.reltoastrelid
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
        ELSE
          'keep: the large values mix compressed and compressible content'
        END AS advice,
        CASE
        WHEN p.large_values = 0 THEN 'none'
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
   WHERE a.atttypid = 'bytea'::regtype
     AND c.relkind IN ('r', 'm')
     AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'heap')
     -- an unlogged table has no data on a standby
     AND NOT (c.relpersistence = 'u' AND pg_is_in_recovery())
     AND (c.relpersistence <> 't' OR c.relnamespace = pg_my_temp_schema())
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
     AND has_table_privilege(c.oid, 'SELECT');
COMMENT ON VIEW storagelab.bytea_storage IS
  'every bytea column the caller may SELECT from: advice, sizes and the headline figures of a sampled toast_profile() (at most toast.view_sample_rows rows and value prefixes per column; a table locked by another session has status locked, not waited for; unlogged tables are left out on a standby); needs pg_stat_scan_tables';
COMMENT ON COLUMN storagelab.bytea_storage.relation IS 'the table or materialized view (partitions are listed one by one)';
COMMENT ON COLUMN storagelab.bytea_storage.column_name IS 'the bytea column';
COMMENT ON COLUMN storagelab.bytea_storage.advice IS 'SET STORAGE EXTERNAL / EXTENDED, SET COMPRESSION lz4, or keep, with the reason (figures in the other columns)';
COMMENT ON COLUMN storagelab.bytea_storage.storage IS 'storage strategy: extended, external, main or plain';
COMMENT ON COLUMN storagelab.bytea_storage.effective_compression IS 'method new values get: compression, else default_toast_compression';
COMMENT ON COLUMN storagelab.bytea_storage.toast_bytes IS 'size of the TOAST table and its index in bytes (all columns of the table; NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.toast_pretty IS 'toast_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.table_bytes IS 'size of the table''s main fork in bytes (NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.table_pretty IS 'table_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.evidence IS 'sampled (part of the table''s pages read) or exact (all of them)';
COMMENT ON COLUMN storagelab.bytea_storage.sample_rows IS 'rows profiled';
COMMENT ON COLUMN storagelab.bytea_storage.large_values IS 'profiled values of at least ~2 kB (TOAST_TUPLE_THRESHOLD), the ones storage settings affect';
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
  -- a table locked by another session is skipped, not waited for
  IF pg_has_role('pg_stat_scan_tables', 'USAGE')
     AND storagelab_internal.toast_lock_nowait(relation) = 'ok' THEN
    SELECT c.rows_scanned, c.sampled, c.large_values, c.large_incompressible
      INTO rows_scanned, sampled, large_values, large_incompressible
      FROM storagelab_internal.toast_census(relation, column_name, sample_rows) c;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_toast_sample(regclass, name, integer) IS
  'toast_census() counts for storagelab.findings: NULLs when the caller lacks pg_stat_scan_tables or the table is locked';

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
   WHERE a.atttypid = 'pg_catalog.bytea'::pg_catalog.regtype AND a.attnum > 0
     AND NOT a.attisdropped AND a.attstorage IN ('x', 'm')
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

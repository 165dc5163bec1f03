-- storagelab install script, part 10: integer overflow.
--
--   storagelab.int_overflow                view: every int2/int4 column and every
--                                          sequence-fed integer column, how close
--                                          it is to its limit, and when it gets there
--   storagelab.int_overflow_scan(regclass) exact min/max of a table's integer
--                                          columns by scanning it, on demand
--   storagelab.int_overflow_snapshot()     records current values for growth
--                                          projection (int_overflow_history)
--   storagelab.snapshot()                  its old name, deprecated
--
-- Internals (schema storagelab_internal): the C probes (src/int_overflow.c)
-- int_overflow_sequence_state(regclass), int_overflow_index_bounds(regclass)
-- and int_overflow_stats_bounds(); the catalog walk and measurements behind
-- the view (src/int_overflow_catalog.c, src/int_overflow_measure.c):
-- int_overflow_measurements().

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('int_overflow.warning_pct', '50',
   'int_overflow: severity is "warning" from this used_pct on'),
  ('int_overflow.critical_pct', '75',
   'int_overflow: severity is "critical" from this used_pct on'),
  ('int_overflow.warning_within', '1 year',
   'int_overflow: severity is "warning" when overflow_at is closer than this interval'),
  ('int_overflow.critical_within', '90 days',
   'int_overflow: severity is "critical" when overflow_at is closer than this interval'),
  ('int_overflow.growth_window', '30 days',
   'int_overflow: snapshots younger than this interval feed the growth rate behind overflow_at'),
  ('int_overflow.history_retention', '400 days',
   'int_overflow: int_overflow_snapshot() deletes history rows older than this interval');

-- ---------------------------------------------------------------------------
-- C probes
-- ---------------------------------------------------------------------------

CREATE FUNCTION storagelab_internal.int_overflow_sequence_state(seq regclass,
    OUT last_value bigint, OUT is_called boolean, OUT status text)
RETURNS record
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_sequence_state';
COMMENT ON FUNCTION storagelab_internal.int_overflow_sequence_state(regclass) IS
  'last_value and is_called of a sequence, never waiting or failing: status ok, unreadable (no SELECT/USAGE), locked (ACCESS EXCLUSIVE held elsewhere) or unavailable (dropped, other session''s temp, unlogged on a standby)';

CREATE FUNCTION storagelab_internal.int_overflow_index_bounds(index regclass,
    OUT min_value bigint, OUT max_value bigint, OUT status text)
RETURNS record
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_index_bounds';
COMMENT ON FUNCTION storagelab_internal.int_overflow_index_bounds(regclass) IS
  'smallest and largest visible non-NULL key of a btree index on an integer column, read from both ends of the index (no table scan, no waiting): status ok, empty, approximate, unreadable, locked or unavailable';

CREATE FUNCTION storagelab_internal.int_overflow_stats_bounds(rel regclass, attnum smallint,
    OUT min_value bigint, OUT max_value bigint, OUT status text)
RETURNS record
LANGUAGE c STABLE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_stats_bounds';
COMMENT ON FUNCTION storagelab_internal.int_overflow_stats_bounds(regclass, smallint) IS
  'smallest and largest value ANALYZE recorded for an integer column (histogram ends, most common values; whole inheritance tree when available), under the visibility rules of pg_stats: status ok, no statistics, unreadable';

-- The probes check the caller's privileges themselves and reveal no more
-- than "SELECT last_value FROM seq" / "SELECT min(col), max(col) FROM t"
-- would (a member of pg_read_all_stats reads every sequence's position, a
-- statistic).  int_overflow_measurements() calls them directly, not through
-- SQL, so that no role needs EXECUTE on them.
REVOKE EXECUTE ON FUNCTION storagelab_internal.int_overflow_sequence_state(regclass),
                           storagelab_internal.int_overflow_index_bounds(regclass),
                           storagelab_internal.int_overflow_stats_bounds(regclass, smallint) FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- History of values, for growth projection
-- ---------------------------------------------------------------------------

-- Objects are identified by name, not regclass: pg_upgrade refuses user
-- tables with reg* columns, and names survive dump/restore.
CREATE TABLE storagelab.int_overflow_history (
  taken_at        timestamptz NOT NULL,
  schema_name     name NOT NULL,
  table_name      name NOT NULL,
  column_name     name NOT NULL,
  sequence_schema name,
  sequence_name   name,
  value           numeric NOT NULL,
  evidence        text NOT NULL DEFAULT 'exact',
  PRIMARY KEY (schema_name, table_name, column_name, taken_at)
);
COMMENT ON TABLE storagelab.int_overflow_history IS
  'values recorded by storagelab.int_overflow_snapshot(), one row per int_overflow column per snapshot; int_overflow.overflow_at is projected from them; kept by pg_dump';
COMMENT ON COLUMN storagelab.int_overflow_history.taken_at IS 'when int_overflow_snapshot() ran';
COMMENT ON COLUMN storagelab.int_overflow_history.schema_name IS 'schema of the table';
COMMENT ON COLUMN storagelab.int_overflow_history.table_name IS 'table (the partitioned or inheritance parent for its children)';
COMMENT ON COLUMN storagelab.int_overflow_history.column_name IS 'column';
COMMENT ON COLUMN storagelab.int_overflow_history.sequence_schema IS 'schema of the sequence the value came from, if any';
COMMENT ON COLUMN storagelab.int_overflow_history.sequence_name IS 'sequence the value came from, if any';
COMMENT ON COLUMN storagelab.int_overflow_history.value IS 'int_overflow.current_value at taken_at';
COMMENT ON COLUMN storagelab.int_overflow_history.evidence IS 'int_overflow.evidence at taken_at: exact, statistics (pg_stats bounds) or estimate';
SELECT pg_catalog.pg_extension_config_dump('storagelab.int_overflow_history', '');
-- The view reads only the growth window and the snapshot deletes only what is
-- past the retention: both by taken_at, so that a year of history costs the
-- view no more than its window does.
CREATE INDEX int_overflow_history_taken_at ON storagelab.int_overflow_history (taken_at);
COMMENT ON INDEX storagelab.int_overflow_history_taken_at IS
  'history rows by time: the growth window the view reads, the rows int_overflow_snapshot() deletes past int_overflow.history_retention';

-- ---------------------------------------------------------------------------
-- The view
-- ---------------------------------------------------------------------------

-- The measurements behind the view, one row per column, gathered in C
-- (src/int_overflow_catalog.c walks the catalogs, src/int_overflow_measure.c
-- measures and chooses): each catalog read once, joined in hash
-- tables, the probes above called directly once per object, the usage
-- arithmetic exact.  It runs as the caller: the probes check the caller's
-- privileges on every sequence, table and column they read.
CREATE FUNCTION storagelab_internal.int_overflow_measurements()
RETURNS TABLE (row_rel oid, row_attnum smallint, nspname name, relname name,
               attname name, atttypid oid, source text, seqid oid,
               cur numeric, lim numeric, used numeric, left_ numeric,
               min_value numeric, max_value numeric, seq_increment bigint,
               cycles boolean, exact boolean, status text,
               referencing_columns text[])
LANGUAGE c VOLATILE
ROWS 10000
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_measurements';
COMMENT ON FUNCTION storagelab_internal.int_overflow_measurements() IS
  'the measurements behind storagelab.int_overflow, one row per column';
-- The view and int_overflow_snapshot() run it as their caller.
GRANT EXECUTE ON FUNCTION storagelab_internal.int_overflow_measurements() TO PUBLIC;

-- Whether a table that had no rows at its last ANALYZE or VACUUM
-- (pg_class.reltuples 0, what int_overflow_measurements() calls empty
-- without an index to read) has none now, as far as the cumulative
-- statistics tell: no live rows counted since (n_live_tup 0: inserts add to
-- it, ANALYZE and VACUUM set it), and none added by the caller's own
-- transaction, not yet counted there (its inserts beyond its deletes).  The
-- table and every table below it (partitions, inheritance children).  A
-- table bulk-loaded after its last ANALYZE keeps reltuples 0 until the next
-- one: this tells it apart.  Statistics only: no lock taken, no page read.
CREATE FUNCTION storagelab_internal.int_overflow_still_empty(relation oid)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  WITH RECURSIVE tree(oid) AS (
    SELECT $1
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid
  )
  SELECT NOT EXISTS (
    SELECT 1 FROM tree JOIN pg_class c ON c.oid = tree.oid
     WHERE c.relkind <> 'p'
       AND (pg_stat_get_live_tuples(c.oid) > 0
            OR pg_stat_get_xact_tuples_inserted(c.oid) > pg_stat_get_xact_tuples_deleted(c.oid)))
$$;
COMMENT ON FUNCTION storagelab_internal.int_overflow_still_empty(oid) IS
  'whether a table empty at its last ANALYZE or VACUUM (and every table below it) still has no rows by the cumulative statistics: no live tuples counted since, none inserted by this transaction beyond its deletes';

CREATE VIEW storagelab.int_overflow AS
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
       CASE WHEN e.loaded THEN 'none' ELSE m.source END AS source,
       m.seqid::pg_catalog.regclass AS sequence,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.exact THEN 'exact'
            WHEN m.source = 'statistics' THEN 'statistics'
            ELSE 'estimate' END AS evidence,
       CASE WHEN m.cur IS NOT NULL AND m.cycles THEN 'cycles'
            WHEN e.loaded THEN 'no data' ELSE m.status END AS status,
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
 ) p
 -- "empty" from statistics (reltuples 0) only while the cumulative
 -- statistics count no rows since: a table loaded after its last ANALYZE
 -- has no data until the next one
 CROSS JOIN LATERAL (
   SELECT m.status = 'empty' AND m.source = 'statistics'
          AND NOT storagelab_internal.int_overflow_still_empty(m.row_rel) AS loaded
 ) e;

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
COMMENT ON COLUMN storagelab.int_overflow.status IS 'ok, estimate, cycles, empty (no non-NULL value; without an index: no rows at the last ANALYZE or VACUUM, and none counted since by the cumulative statistics), unreadable (no privilege: SELECT on the sequence or table, or pg_read_all_stats for sequences), locked (ACCESS EXCLUSIVE held elsewhere; skipped, not waited for), unavailable (dropped meanwhile, unlogged on a standby), no data (no sequence, index or statistics, never analyzed or rows added since an ANALYZE that found none: ANALYZE or int_overflow_scan())';

GRANT SELECT ON storagelab.int_overflow TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Exact values on demand, and snapshots
-- ---------------------------------------------------------------------------

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
  PERFORM storagelab_internal.refuse_other_temp(relation, 'scan');
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

  -- the view reads the growth fitted here, not the history
  PERFORM storagelab_internal.int_overflow_growth_refit();

  RETURN recorded;
END
$$;
COMMENT ON FUNCTION storagelab.int_overflow_snapshot() IS
  'records the current value of every int_overflow row the caller can read in storagelab.int_overflow_history (for overflow_at), deletes rows older than int_overflow.history_retention; returns the rows recorded; schedule it daily';

-- The old name, for one version.
CREATE FUNCTION storagelab.snapshot()
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

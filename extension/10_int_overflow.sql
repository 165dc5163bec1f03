-- storagelab install script, part 10: integer overflow (issue 3).
--
--   storagelab.int_overflow               view: every int2/int4 column and every
--                                         sequence-fed integer column, how close
--                                         it is to its limit, and when it gets there
--   storagelab.int_overflow_scan(regclass) exact min/max of a table's integer
--                                         columns by scanning it, on demand
--   storagelab.snapshot()                 records current values for growth
--                                         projection (int_overflow_history)
--
-- C probes (src/int_overflow.c): int_overflow_sequence_state(regclass) and
-- int_overflow_index_bounds(regclass).

INSERT INTO storagelab.setting_defaults VALUES
  ('int_overflow.warning_pct', '50',
   'int_overflow: risk is "warning" from this used_pct on'),
  ('int_overflow.critical_pct', '75',
   'int_overflow: risk is "critical" from this used_pct on'),
  ('int_overflow.warning_within', '1 year',
   'int_overflow: risk is "warning" when overflow_at is closer than this interval'),
  ('int_overflow.critical_within', '90 days',
   'int_overflow: risk is "critical" when overflow_at is closer than this interval'),
  ('int_overflow.growth_window', '30 days',
   'int_overflow: snapshots younger than this interval feed the growth rate behind overflow_at'),
  ('int_overflow.history_retention', '400 days',
   'int_overflow: storagelab.snapshot() deletes history rows older than this interval');

-- ---------------------------------------------------------------------------
-- C probes
-- ---------------------------------------------------------------------------

CREATE FUNCTION storagelab.int_overflow_sequence_state(seq regclass,
    OUT last_value bigint, OUT is_called boolean, OUT status text)
RETURNS record
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_sequence_state';
COMMENT ON FUNCTION storagelab.int_overflow_sequence_state(regclass) IS
  'last_value and is_called of a sequence, never waiting or failing: status ok, unreadable (no SELECT/USAGE), locked (ACCESS EXCLUSIVE held elsewhere) or unavailable (dropped, other session''s temp, unlogged on a standby)';

CREATE FUNCTION storagelab.int_overflow_index_bounds(index regclass,
    OUT min_value bigint, OUT max_value bigint, OUT status text)
RETURNS record
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_index_bounds';
COMMENT ON FUNCTION storagelab.int_overflow_index_bounds(regclass) IS
  'smallest and largest visible non-NULL key of a btree index on an integer column, read from both ends of the index (no table scan, no waiting): status ok, empty, approximate, unreadable, locked or unavailable';

CREATE FUNCTION storagelab.int_overflow_stats_bounds(rel regclass, attnum smallint,
    OUT min_value bigint, OUT max_value bigint, OUT status text)
RETURNS record
LANGUAGE c STABLE STRICT
AS 'MODULE_PATHNAME', 'storagelab_int_overflow_stats_bounds';
COMMENT ON FUNCTION storagelab.int_overflow_stats_bounds(regclass, smallint) IS
  'smallest and largest value ANALYZE recorded for an integer column (histogram ends, most common values; whole inheritance tree when available), under the visibility rules of pg_stats: status ok, no statistics, unreadable';

-- The probes check the caller's privileges themselves and reveal no more
-- than "SELECT last_value FROM seq" / "SELECT min(col), max(col) FROM t"
-- would; the view, usable by everyone, calls them as the caller.
GRANT EXECUTE ON FUNCTION storagelab.int_overflow_sequence_state(regclass),
                          storagelab.int_overflow_index_bounds(regclass),
                          storagelab.int_overflow_stats_bounds(regclass, smallint) TO PUBLIC;

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
  is_estimate     boolean NOT NULL DEFAULT false,
  PRIMARY KEY (schema_name, table_name, column_name, taken_at)
);
COMMENT ON TABLE storagelab.int_overflow_history IS
  'values recorded by storagelab.snapshot(), one row per int_overflow column per snapshot; int_overflow.overflow_at is projected from them; kept by pg_dump';
COMMENT ON COLUMN storagelab.int_overflow_history.taken_at IS 'when storagelab.snapshot() ran';
COMMENT ON COLUMN storagelab.int_overflow_history.schema_name IS 'schema of the table';
COMMENT ON COLUMN storagelab.int_overflow_history.table_name IS 'table (the partitioned or inheritance parent for its children)';
COMMENT ON COLUMN storagelab.int_overflow_history.column_name IS 'column';
COMMENT ON COLUMN storagelab.int_overflow_history.sequence_schema IS 'schema of the sequence the value came from, if any';
COMMENT ON COLUMN storagelab.int_overflow_history.sequence_name IS 'sequence the value came from, if any';
COMMENT ON COLUMN storagelab.int_overflow_history.value IS 'int_overflow.current_value at taken_at';
COMMENT ON COLUMN storagelab.int_overflow_history.is_estimate IS 'whether the value was an estimate (pg_stats bounds)';
SELECT pg_catalog.pg_extension_config_dump('storagelab.int_overflow_history', '');

-- ---------------------------------------------------------------------------
-- The view
-- ---------------------------------------------------------------------------

-- The measurements behind the view, one row per column.  A function so
-- that it can run with enable_nestloop = off: the planner cannot estimate
-- the sizes of these CTEs over the catalogs (it guesses a handful of rows
-- where a large database has tens of thousands) and would otherwise join
-- them with nested loops, quadratic in the number of columns.  Lateral
-- calls of the probes stay nested loops (nothing else can run them).  JIT
-- is off: the disabled nested loops inflate the estimated cost past
-- jit_above_cost, and compiling this query costs seconds.
CREATE FUNCTION storagelab.int_overflow_measurements()
RETURNS TABLE (row_rel oid, row_attnum smallint, nspname name, relname name,
               attname name, atttypid oid, source text, seqid oid,
               cur numeric, lim numeric, used numeric, left_ numeric,
               min_value numeric, max_value numeric, seq_increment bigint,
               cycles boolean, exact boolean, status text,
               referencing_columns text[])
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
SET enable_nestloop = off
SET jit = off
ROWS 10000
AS $$
WITH RECURSIVE
int_types (typid, type_min, type_max) AS (
  VALUES ('pg_catalog.int2'::pg_catalog.regtype::oid, -32768::numeric, 32767::numeric),
         ('pg_catalog.int4'::pg_catalog.regtype::oid, -2147483648::numeric, 2147483647::numeric),
         ('pg_catalog.int8'::pg_catalog.regtype::oid, -9223372036854775808::numeric, 9223372036854775807::numeric)
),
-- Partitions and inheritance children with the root of their tree.
inh AS (
  SELECT i.inhrelid AS relid, i.inhparent AS root, 1 AS depth
    FROM pg_catalog.pg_inherits i
   WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_inherits p WHERE p.inhrelid = i.inhparent)
  UNION ALL
  SELECT i.inhrelid, h.root, h.depth + 1
    FROM inh h
    JOIN pg_catalog.pg_inherits i ON i.inhparent = h.relid
   WHERE h.depth < 100
),
roots AS (
  SELECT DISTINCT ON (relid) relid, root FROM inh ORDER BY relid, depth
),
-- Every integer column (domains over integers included) of the tables and
-- partitioned tables outside the system schemas; other sessions' temporary
-- tables are skipped (their pages cannot be read from here).  An inherited
-- column (every column of a partition) belongs to the row of the root's
-- column of the same name; a column of its own gets a row of its own.
cols AS (
  SELECT a.attrelid AS relid, a.attnum, c.relkind, n.nspname, c.relname, a.attname, a.atttypid,
         CASE WHEN ty.typbasetype <> 0 THEN ty.typbasetype ELSE ty.oid END AS basetype,
         ra.attnum IS NULL AS own_row,
         CASE WHEN ra.attnum IS NULL THEN a.attrelid ELSE r.root END AS row_rel,
         coalesce(ra.attnum, a.attnum) AS row_attnum
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_catalog.pg_attribute a
      ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     -- filtered while scanning, not by a join over every attribute
     AND a.atttypid = ANY (ARRAY(
           SELECT t.oid FROM pg_catalog.pg_type t
            WHERE (CASE WHEN t.typbasetype <> 0 THEN t.typbasetype ELSE t.oid END)
                  IN ('pg_catalog.int2'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
                      'pg_catalog.int8'::pg_catalog.regtype)))
    JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
    LEFT JOIN roots r ON r.relid = c.oid
    LEFT JOIN (SELECT x.attrelid, x.attname, x.attnum
                 FROM pg_catalog.pg_attribute x
                WHERE x.attrelid = ANY (ARRAY(SELECT root FROM roots))
                  AND NOT x.attisdropped) ra
      ON a.attinhcount > 0 AND ra.attrelid = r.root AND ra.attname = a.attname
   WHERE c.relkind IN ('r', 'p')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab')
     AND n.nspname !~ '^pg_toast'
     AND (c.relpersistence <> 't' OR c.relnamespace = pg_catalog.pg_my_temp_schema())
     AND (CASE WHEN ty.typbasetype <> 0 THEN ty.typbasetype ELSE ty.oid END)
         IN ('pg_catalog.int2'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
             'pg_catalog.int8'::pg_catalog.regtype)
),
-- Sequences feeding a column, from pg_depend only: serial ('a', sequence
-- owned by the column), identity ('i'), and any default expression that
-- references a sequence ('n' from pg_attrdef), e.g. nextval('s').
seqdeps AS (
  SELECT d.refobjid AS relid, d.refobjsubid::int2 AS attnum, d.objid AS seqid,
         CASE d.deptype WHEN 'i' THEN 'identity' ELSE 'sequence' END AS source
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_sequence s ON s.seqrelid = d.objid
   WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0
  UNION
  SELECT ad.adrelid, ad.adnum, d.refobjid, 'sequence'
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_attrdef ad ON ad.oid = d.objid
    JOIN pg_catalog.pg_sequence s ON s.seqrelid = d.refobjid
   WHERE d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.deptype = 'n'
),
rowseqs AS (
  SELECT DISTINCT c.row_rel, c.row_attnum, sd.seqid, sd.source
    FROM cols c
    JOIN seqdeps sd ON sd.relid = c.relid AND sd.attnum = c.attnum
),
seqstate AS MATERIALIZED (
  SELECT s.seqrelid, s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcycle,
         v.last_value, v.is_called, v.status
    FROM pg_catalog.pg_sequence s
    JOIN (SELECT DISTINCT seqid FROM rowseqs) u ON u.seqid = s.seqrelid
    CROSS JOIN LATERAL storagelab.int_overflow_sequence_state(s.seqrelid::pg_catalog.regclass) v
),
-- Foreign keys, one row per column pair, between rows.  Constraints that
-- PostgreSQL clones onto partitions (conparentid <> 0) are left out: the
-- parent's constraint stands for them.
fkpairs AS (
  SELECT cc.row_rel, cc.row_attnum, rc.row_rel AS ref_rel, rc.row_attnum AS ref_attnum,
         cc.basetype, rc.basetype AS ref_basetype
    FROM pg_catalog.pg_constraint con
    CROSS JOIN LATERAL pg_catalog.generate_subscripts(con.conkey, 1) k
    JOIN cols cc ON cc.relid = con.conrelid AND cc.attnum = con.conkey[k]
    JOIN cols rc ON rc.relid = con.confrelid AND rc.attnum = con.confkey[k]
   WHERE con.contype = 'f' AND con.conparentid = 0
),
-- FK columns narrower than the key they reference (type oids compare as
-- int2 21 < int4 23 < int8 20 would not, hence the explicit ranks).
narrowfk AS (
  SELECT f.row_rel, f.row_attnum, f.ref_rel, f.ref_attnum
    FROM fkpairs f
   WHERE (CASE f.basetype WHEN 'pg_catalog.int2'::pg_catalog.regtype THEN 1
                          WHEN 'pg_catalog.int4'::pg_catalog.regtype THEN 2 ELSE 3 END)
       < (CASE f.ref_basetype WHEN 'pg_catalog.int2'::pg_catalog.regtype THEN 1
                              WHEN 'pg_catalog.int4'::pg_catalog.regtype THEN 2 ELSE 3 END)
),
-- One row per reported column, with its type's bounds and what feeds it.
rowinfo AS (
  SELECT c.row_rel, c.row_attnum, c.nspname, c.relname, c.attname, c.atttypid,
         c.basetype, it.type_min, it.type_max,
         rs.row_rel IS NOT NULL AS has_seq,
         nf.ref_rel IS NOT NULL AS narrow_ref
    FROM cols c
    JOIN int_types it ON it.typid = c.basetype
    LEFT JOIN (SELECT DISTINCT row_rel, row_attnum FROM rowseqs) rs
      ON rs.row_rel = c.row_rel AND rs.row_attnum = c.row_attnum
    LEFT JOIN (SELECT DISTINCT ref_rel, ref_attnum FROM narrowfk) nf
      ON nf.ref_rel = c.row_rel AND nf.ref_attnum = c.row_attnum
   WHERE c.own_row
),
-- Rows whose values must come from an index or statistics: int2/int4
-- columns without a sequence, and keys that narrower FK columns reference.
valuerows AS (
  SELECT r.row_rel, r.row_attnum
    FROM rowinfo r
   WHERE (r.basetype <> 'pg_catalog.int8'::pg_catalog.regtype OR r.narrow_ref)
     AND NOT r.has_seq
),
-- One btree index per table and leading column: valid, not partial.
idx AS (
  SELECT DISTINCT ON (i.indrelid, i.indkey[0]) i.indrelid, i.indkey[0] AS attnum, i.indexrelid
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_catalog.pg_am am ON am.oid = ic.relam AND am.amname = 'btree'
   WHERE i.indisvalid AND i.indisready AND i.indislive AND i.indpred IS NULL
     AND i.indkey[0] <> 0
   ORDER BY i.indrelid, i.indkey[0], i.indisunique DESC, i.indnatts, i.indexrelid
),
-- Index endpoints of every leaf table (partitions, inheritance children and
-- the parent itself when it holds rows) of a value row.
leafprobe AS MATERIALIZED (
  SELECT c.row_rel, c.row_attnum, ix.indexrelid, b.min_value, b.max_value, b.status
    FROM valuerows v
    JOIN cols c ON c.row_rel = v.row_rel AND c.row_attnum = v.row_attnum
               AND c.relkind = 'r'
    LEFT JOIN idx ix ON ix.indrelid = c.relid AND ix.attnum = c.attnum
    LEFT JOIN LATERAL storagelab.int_overflow_index_bounds(ix.indexrelid::pg_catalog.regclass) b ON true
),
indexmeas AS (
  SELECT p.row_rel, p.row_attnum,
         min(p.min_value) FILTER (WHERE p.status IN ('ok', 'approximate')) AS min_value,
         max(p.max_value) FILTER (WHERE p.status IN ('ok', 'approximate')) AS max_value,
         bool_or(p.status = 'approximate') AS approximate,
         CASE WHEN bool_or(p.status = 'unreadable') THEN 'unreadable'
              WHEN bool_or(p.status = 'locked') THEN 'locked'
              WHEN bool_and(p.status = 'unavailable') THEN 'unavailable'
              ELSE 'ok' END AS status
    FROM leafprobe p
   GROUP BY p.row_rel, p.row_attnum
  HAVING bool_and(p.indexrelid IS NOT NULL)
),
-- Statistics bounds (histogram ends, most common values) for value rows
-- without an exact index measurement, visible as in pg_stats.
statmeas AS (
  SELECT v.row_rel, v.row_attnum, sb.min_value, sb.max_value, sb.status
    FROM valuerows v
    LEFT JOIN indexmeas im ON im.row_rel = v.row_rel AND im.row_attnum = v.row_attnum
    CROSS JOIN LATERAL storagelab.int_overflow_stats_bounds(v.row_rel::pg_catalog.regclass, v.row_attnum) sb
   WHERE im.status IS DISTINCT FROM 'ok'
),
-- A row's own measurements: sequence values, index endpoints, statistics.
-- seq_* are NULL for value measurements.
own AS (
  SELECT rs.row_rel, rs.row_attnum, rs.source, rs.seqid,
         ss.seqstart AS seq_start, ss.seqincrement AS seq_increment,
         ss.seqmin AS seq_min, ss.seqmax AS seq_max, ss.seqcycle AS seq_cycle,
         CASE WHEN ss.is_called THEN ss.last_value::numeric
              ELSE ss.last_value::numeric - ss.seqincrement END AS seq_value,
         NULL::numeric AS min_value, NULL::numeric AS max_value,
         true AS exact,
         ss.status,
         1 AS priority
    FROM rowseqs rs
    JOIN seqstate ss ON ss.seqrelid = rs.seqid
  UNION ALL
  SELECT im.row_rel, im.row_attnum, 'index', NULL::oid,
         NULL, NULL, NULL, NULL, NULL, NULL,
         CASE WHEN im.status = 'ok' THEN im.min_value END,
         CASE WHEN im.status = 'ok' THEN im.max_value END,
         NOT im.approximate,
         CASE WHEN im.status <> 'ok' THEN im.status
              WHEN im.approximate THEN 'estimate'
              WHEN im.max_value IS NULL THEN 'empty'
              ELSE 'ok' END,
         2
    FROM indexmeas im
  UNION ALL
  SELECT sm.row_rel, sm.row_attnum, 'statistics', NULL::oid,
         NULL, NULL, NULL, NULL, NULL, NULL,
         sm.min_value, sm.max_value, false, 'estimate', 3
    FROM statmeas sm
   WHERE sm.status = 'ok'
),
-- Every measurement of a row: its own, plus those of the keys it
-- references through a foreign key when its type is narrower (the child
-- breaks first).
meas AS (
  SELECT * FROM own
  UNION ALL
  SELECT f.row_rel, f.row_attnum, 'foreign key', o.seqid,
         o.seq_start, o.seq_increment, o.seq_min, o.seq_max, o.seq_cycle, o.seq_value,
         o.min_value, o.max_value, o.exact, o.status, 4
    FROM narrowfk f
    JOIN own o ON o.row_rel = f.ref_rel AND o.row_attnum = f.ref_attnum
),
-- Usage of each measurement against the row's type (and the sequence's
-- own bounds).  Sequences: measured from START toward the bound they move
-- to (MAXVALUE ascending, MINVALUE descending).  Values: toward whichever
-- of the type's bounds is relatively closer.
bounds AS (
  SELECT m.*, ri.basetype, ri.type_min, ri.type_max, ri.has_seq,
         CASE WHEN m.seq_increment IS NOT NULL
              THEN greatest(m.seq_min, ri.type_min) END AS lo,
         CASE WHEN m.seq_increment IS NOT NULL
              THEN least(m.seq_max, ri.type_max) END AS hi,
         -- value measurements: is the minimum relatively closer to its bound?
         (m.min_value::float8 / ri.type_min::float8
          > greatest(m.max_value::float8 / ri.type_max::float8, 0)) AS toward_min
    FROM meas m
    JOIN rowinfo ri ON ri.row_rel = m.row_rel AND ri.row_attnum = m.row_attnum
),
usage AS (
  SELECT b.*,
         CASE WHEN b.seq_increment IS NOT NULL THEN b.seq_value
              WHEN b.toward_min THEN b.min_value
              ELSE b.max_value END AS cur,
         CASE WHEN b.seq_increment > 0 THEN b.hi
              WHEN b.seq_increment < 0 THEN b.lo
              WHEN b.max_value IS NULL THEN NULL
              WHEN b.toward_min THEN b.type_min
              ELSE b.type_max END AS lim,
         CASE WHEN b.seq_increment IS NOT NULL
              THEN least(greatest(b.seq_start, b.lo), b.hi) END AS base,
         (b.seq_cycle AND b.seq_max <= b.type_max AND b.seq_min >= b.type_min) AS cycles
    FROM bounds b
),
-- Ratios in float8 (plenty for a percentage, and much cheaper than numeric
-- over tens of thousands of rows); values_left exact.
pct AS (
  SELECT u.*,
         CASE WHEN u.cur IS NOT NULL THEN
           round(least(greatest(
             CASE WHEN u.seq_increment IS NULL THEN u.cur::float8 / u.lim::float8
                  WHEN u.lim = u.base THEN CASE WHEN u.cur = u.lim THEN 1 ELSE 0 END
                  ELSE (u.cur::float8 - u.base::float8) / (u.lim::float8 - u.base::float8)
             END * 100, 0), 100)::numeric, 3) END AS used,
         CASE WHEN u.cur IS NOT NULL THEN
           greatest(0, floor((u.lim - u.cur) / coalesce(u.seq_increment, sign(u.lim)))) END AS left_
    FROM usage u
),
-- One row per column: the measurement closest to a limit, exact ones
-- first; a column without any measurement gets a row with source none.
-- bigint columns appear only when a sequence feeds them.
best AS (
  SELECT DISTINCT ON (p.row_rel, p.row_attnum) p.*
    FROM pct p
   WHERE p.basetype <> 'pg_catalog.int8'::pg_catalog.regtype OR p.has_seq
   ORDER BY p.row_rel, p.row_attnum, (p.cur IS NULL), p.exact DESC, p.used DESC, p.priority
),
unmeasured AS (
  SELECT r.row_rel, r.row_attnum, r.nspname, r.relname, r.attname, r.atttypid,
         CASE WHEN u.row_rel IS NOT NULL THEN 'unreadable' ELSE 'no data' END AS status
    FROM rowinfo r
    LEFT JOIN best b ON b.row_rel = r.row_rel AND b.row_attnum = r.row_attnum
    LEFT JOIN (SELECT row_rel, row_attnum FROM leafprobe WHERE status = 'unreadable'
                UNION
               SELECT row_rel, row_attnum FROM statmeas WHERE status = 'unreadable') u
      ON u.row_rel = r.row_rel AND u.row_attnum = r.row_attnum
   WHERE b.row_rel IS NULL AND r.basetype <> 'pg_catalog.int8'::pg_catalog.regtype
),
-- FK columns that must follow a column to bigint: narrower-than-bigint
-- columns referencing it, and those referencing them, transitively.
refclosure AS (
  SELECT f.ref_rel AS row_rel, f.ref_attnum AS row_attnum,
         f.row_rel AS col_rel, f.row_attnum AS col_attnum, 1 AS depth
    FROM fkpairs f
   WHERE f.basetype <> 'pg_catalog.int8'::pg_catalog.regtype
  UNION ALL
  SELECT r.row_rel, r.row_attnum, f.row_rel, f.row_attnum, r.depth + 1
    FROM refclosure r
    JOIN fkpairs f ON f.ref_rel = r.col_rel AND f.ref_attnum = r.col_attnum
   WHERE f.basetype <> 'pg_catalog.int8'::pg_catalog.regtype AND r.depth < 10
),
referencing AS (
  SELECT r.row_rel, r.row_attnum,
         array_agg(DISTINCT format('%I.%I.%I', n.nspname, c.relname, a.attname)) AS cols
    FROM refclosure r
    JOIN pg_catalog.pg_class c ON c.oid = r.col_rel
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_catalog.pg_attribute a ON a.attrelid = r.col_rel AND a.attnum = r.col_attnum
   WHERE (r.col_rel, r.col_attnum) <> (r.row_rel, r.row_attnum)
   GROUP BY r.row_rel, r.row_attnum
)
SELECT b.row_rel, b.row_attnum, ri.nspname, ri.relname, ri.attname, ri.atttypid,
       b.source, b.seqid, b.cur, b.lim, b.used, b.left_, b.min_value, b.max_value,
       b.seq_increment, b.cycles, b.exact, b.status,
       coalesce(r.cols, '{}')
  FROM best b
  JOIN rowinfo ri ON ri.row_rel = b.row_rel AND ri.row_attnum = b.row_attnum
  LEFT JOIN referencing r ON r.row_rel = b.row_rel AND r.row_attnum = b.row_attnum
UNION ALL
SELECT u.row_rel, u.row_attnum, u.nspname, u.relname, u.attname, u.atttypid,
       'none', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, u.status,
       coalesce(r.cols, '{}')
  FROM unmeasured u
  LEFT JOIN referencing r ON r.row_rel = u.row_rel AND r.row_attnum = u.row_attnum
$$;
COMMENT ON FUNCTION storagelab.int_overflow_measurements() IS
  'internal: the measurements behind storagelab.int_overflow, one row per column (use the view)';

CREATE VIEW storagelab.int_overflow AS
WITH
cfg AS (
  SELECT storagelab.setting('int_overflow.warning_pct')::numeric AS warning_pct,
         storagelab.setting('int_overflow.critical_pct')::numeric AS critical_pct,
         storagelab.setting('int_overflow.warning_within')::interval AS warning_within,
         storagelab.setting('int_overflow.critical_within')::interval AS critical_within,
         storagelab.setting('int_overflow.growth_window')::interval AS growth_window
),
-- Growth per second of each column's recorded values (least squares over
-- the snapshots in the growth window); at least two snapshots needed.
growth AS (
  SELECT h.schema_name, h.table_name, h.column_name,
         pg_catalog.regr_slope(h.value::float8, extract(epoch FROM h.taken_at)::float8) AS per_second
    FROM storagelab.int_overflow_history h, cfg
   WHERE h.taken_at >= pg_catalog.now() - cfg.growth_window
   GROUP BY h.schema_name, h.table_name, h.column_name
  HAVING count(*) >= 2
),
projected AS (
  SELECT m.*, g.per_second,
         g.per_second * CASE WHEN m.lim >= coalesce(m.cur, 0) THEN 1 ELSE -1 END AS toward
    FROM storagelab.int_overflow_measurements() m
    LEFT JOIN growth g
      ON m.cur IS NOT NULL
     AND g.schema_name = m.nspname AND g.table_name = m.relname AND g.column_name = m.attname
),
final AS (
  SELECT p.*,
         CASE WHEN p.cur IS NULL OR p.cycles OR NOT (p.toward > 0) THEN NULL
              WHEN abs(p.lim - p.cur) / p.toward::numeric > 3153600000 THEN 'infinity'::timestamptz
              ELSE pg_catalog.now()
                   + pg_catalog.make_interval(secs => (abs(p.lim - p.cur) / p.toward::numeric)::float8)
         END AS overflow_at_
    FROM projected p
)
SELECT f.row_rel::pg_catalog.regclass AS relation,
       f.attname AS column_name,
       f.atttypid::pg_catalog.regtype AS column_type,
       f.source,
       f.seqid::pg_catalog.regclass AS sequence,
       f.cur AS current_value,
       f.lim AS limit_value,
       round(f.used, 3) AS used_pct,
       f.left_ AS values_left,
       CASE WHEN f.cur IS NULL THEN NULL
            WHEN f.cycles THEN 'ok'
            WHEN f.used >= cfg.critical_pct
              OR f.overflow_at_ <= pg_catalog.now() + cfg.critical_within THEN 'critical'
            WHEN f.used >= cfg.warning_pct
              OR f.overflow_at_ <= pg_catalog.now() + cfg.warning_within THEN 'warning'
            ELSE 'ok' END AS risk,
       f.referencing_columns,
       f.overflow_at_ AS overflow_at,
       f.min_value,
       f.max_value,
       f.seq_increment AS increment,
       coalesce(f.cycles, false) AS cycling,
       (f.cur IS NOT NULL AND NOT f.exact) AS is_estimate,
       round((f.per_second * 86400)::numeric, 3) AS growth_per_day,
       CASE WHEN f.cur IS NOT NULL AND f.cycles THEN 'cycles' ELSE f.status END AS status
  FROM final f
  CROSS JOIN cfg;

COMMENT ON VIEW storagelab.int_overflow IS
  'every int2/int4 column and every sequence-fed integer column of the database: current value, limit, usage, risk and projected overflow time; one row per partitioned/inheritance parent';
COMMENT ON COLUMN storagelab.int_overflow.relation IS 'table (the partitioned or inheritance parent, aggregating its children)';
COMMENT ON COLUMN storagelab.int_overflow.column_name IS 'column';
COMMENT ON COLUMN storagelab.int_overflow.column_type IS 'declared type of the column (a domain shows as itself)';
COMMENT ON COLUMN storagelab.int_overflow.source IS 'where current_value comes from: sequence (serial or nextval() default), identity, index (exact endpoints), statistics (pg_stats bounds, estimate), foreign key (the referenced wider key''s value), none';
COMMENT ON COLUMN storagelab.int_overflow.sequence IS 'the sequence behind current_value, if any (for source foreign key: the referenced key''s sequence)';
COMMENT ON COLUMN storagelab.int_overflow.current_value IS 'last value handed out by the sequence, or the column value closest to its bound; NULL when it could not be read';
COMMENT ON COLUMN storagelab.int_overflow.limit_value IS 'the bound current_value moves toward: the tighter of the column type''s and the sequence''s MAXVALUE (MINVALUE for descending sequences)';
COMMENT ON COLUMN storagelab.int_overflow.used_pct IS 'share of the range used, 0-100: sequences from START to limit_value, values from 0 to limit_value';
COMMENT ON COLUMN storagelab.int_overflow.values_left IS 'values (sequence steps of INCREMENT) left before limit_value';
COMMENT ON COLUMN storagelab.int_overflow.risk IS 'ok, warning or critical (settings int_overflow.warning_pct/critical_pct/warning_within/critical_within); NULL when current_value is unknown';
COMMENT ON COLUMN storagelab.int_overflow.referencing_columns IS 'int2/int4 foreign-key columns (schema.table.column, quoted) that must follow this column to bigint, transitively';
COMMENT ON COLUMN storagelab.int_overflow.overflow_at IS 'projected time current_value reaches limit_value from the growth recorded by storagelab.snapshot(); NULL when unknown or not growing toward the limit, infinity beyond 100 years';
COMMENT ON COLUMN storagelab.int_overflow.min_value IS 'smallest value (index or statistics sources)';
COMMENT ON COLUMN storagelab.int_overflow.max_value IS 'largest value (index or statistics sources)';
COMMENT ON COLUMN storagelab.int_overflow.increment IS 'the sequence''s INCREMENT (negative: descending)';
COMMENT ON COLUMN storagelab.int_overflow.cycling IS 'the sequence CYCLEs within the column''s range: it wraps around instead of overflowing';
COMMENT ON COLUMN storagelab.int_overflow.is_estimate IS 'current_value is an estimate (pg_stats bounds, or an index end with too many dead entries)';
COMMENT ON COLUMN storagelab.int_overflow.growth_per_day IS 'recorded growth of current_value per day (least squares over the growth window)';
COMMENT ON COLUMN storagelab.int_overflow.status IS 'ok, estimate, cycles, empty (no non-NULL value), unreadable (no privilege), locked (ACCESS EXCLUSIVE held elsewhere; skipped, not waited for), unavailable (dropped meanwhile, unlogged on a standby), no data (no sequence, index or statistics: ANALYZE or int_overflow_scan())';

GRANT SELECT ON storagelab.int_overflow TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Exact values on demand, and snapshots
-- ---------------------------------------------------------------------------

CREATE FUNCTION storagelab.int_overflow_scan(relation regclass)
RETURNS TABLE (column_name name, column_type regtype,
               min_value numeric, max_value numeric,
               current_value numeric, limit_value numeric,
               used_pct numeric, values_left numeric, risk text)
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
      values_left := NULL; risk := NULL;
    ELSE
      IF greatest(min_value / tmin, 0) > greatest(max_value / tmax, 0) THEN
        current_value := min_value; limit_value := tmin;
      ELSE
        current_value := max_value; limit_value := tmax;
      END IF;
      used_pct := round(greatest(current_value / limit_value, 0) * 100, 3);
      values_left := abs(limit_value - current_value);
      risk := CASE
                WHEN used_pct >= storagelab.setting('int_overflow.critical_pct')::numeric THEN 'critical'
                WHEN used_pct >= storagelab.setting('int_overflow.warning_pct')::numeric THEN 'warning'
                ELSE 'ok' END;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
COMMENT ON FUNCTION storagelab.int_overflow_scan(regclass) IS
  'exact min and max of every integer column of a table (partitions and inheritance children included) by scanning it once, with usage against the column type''s bounds; waits for its lock';

CREATE FUNCTION storagelab.snapshot()
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  recorded integer;
BEGIN
  INSERT INTO storagelab.int_overflow_history AS h
         (taken_at, schema_name, table_name, column_name,
          sequence_schema, sequence_name, value, is_estimate)
  SELECT now(), n.nspname, c.relname, o.column_name, sn.nspname, sc.relname,
         o.current_value, o.is_estimate
    FROM storagelab.int_overflow o
    JOIN pg_class c ON c.oid = o.relation
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_class sc ON sc.oid = o.sequence
    LEFT JOIN pg_namespace sn ON sn.oid = sc.relnamespace
   WHERE o.current_value IS NOT NULL
  ON CONFLICT (schema_name, table_name, column_name, taken_at)
  DO UPDATE SET value = excluded.value, is_estimate = excluded.is_estimate,
                sequence_schema = excluded.sequence_schema,
                sequence_name = excluded.sequence_name;
  GET DIAGNOSTICS recorded = ROW_COUNT;

  DELETE FROM storagelab.int_overflow_history
   WHERE taken_at < now() - storagelab.setting('int_overflow.history_retention')::interval;

  RETURN recorded;
END
$$;
COMMENT ON FUNCTION storagelab.snapshot() IS
  'records the current value of every int_overflow row in storagelab.int_overflow_history (for overflow_at) and deletes rows older than int_overflow.history_retention; returns the number of rows recorded; schedule it daily';

REVOKE EXECUTE ON FUNCTION storagelab.snapshot() FROM PUBLIC;

-- storagelab install script, part 50: bytes lost to oversized column types
-- and to column order (issue 8).
--
--   storagelab.column_waste        one row per column whose type is wider
--                                  than its data (from pg_stats, or exact
--                                  after storagelab.column_profile())
--   storagelab.alignment_padding   one row per table whose column order
--                                  wastes alignment padding
--   storagelab.column_profile(t)   one exact pass over t for all its columns;
--                                  results in storagelab.column_profiles
--
-- The views read only catalogs, pg_statistic and storagelab.column_profiles
-- (never a table); the row model is in src/column_layout.c.

-- Layout model (src/column_layout.c).
CREATE TYPE storagelab.tuple_layout AS (
  tuple_bytes   float8,
  padding_bytes float8,
  size_varies   boolean
);
COMMENT ON TYPE storagelab.tuple_layout IS
  'result of heap_tuple_bytes(): expected bytes per tuple on a page, the padding among them, whether tuple sizes vary';

CREATE FUNCTION storagelab.heap_tuple_bytes(
  lens int2[], aligns "char"[], storages "char"[],
  widths float8[], null_fracs float8[], width_spreads float8[], sort_keys int4[],
  replace_index int4, replace_len int2, replace_align "char", replace_storage "char",
  replace_width float8, replace_key int4)
RETURNS storagelab.tuple_layout
AS 'MODULE_PATHNAME', 'storagelab_heap_tuple_bytes'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4) IS
  'expected bytes a heap tuple takes on a page (MAXALIGN''d, without line pointer), how many of them are alignment padding, and whether tuple sizes vary, from per-column typlen, typalign, typstorage, average stored width, null fraction and width spread (standard deviation; -1 unknown), in attnum order or, with sort_keys, in key order leaving out negative keys; replace_index lays one column out with another type''s storage (replace_len, _align, _storage, _width, _key); NULL arrays give NULL';

CREATE FUNCTION storagelab.heap_pages(tuples float8, tuple_bytes float8, fillfactor int4,
                                      size_varies boolean)
RETURNS int8
AS 'MODULE_PATHNAME', 'storagelab_heap_pages'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab.heap_pages(float8, float8, int4, boolean) IS
  'pages a freshly written heap of that many tuples of tuple_bytes each (on average) takes: page header, line pointers, fillfactor reserve (NULL: 100), and for tuples of varying size half a tuple left free per page';

-- Results of column_profile().  Not registered with pg_extension_config_dump:
-- the rows are keyed by table OID and attnum, which a restore does not keep,
-- and they describe data as it was when profiled; run column_profile() again
-- after a restore.
CREATE TABLE storagelab.column_profiles (
  relid             oid NOT NULL,
  attnum            int2 NOT NULL,
  attname           name NOT NULL,
  atttypid          oid NOT NULL,
  atttypmod         int4 NOT NULL,
  profiled_at       timestamptz NOT NULL,
  row_count         int8 NOT NULL,
  null_count        int8 NOT NULL,
  avg_width         float8,
  min_value         numeric,
  max_value         numeric,
  all_integers      boolean,
  text_kind         text,
  trimmed_avg_width float8,
  width_stddev      float8,
  PRIMARY KEY (relid, attnum)
);
COMMENT ON TABLE storagelab.column_profiles IS
  'exact per-column facts written by storagelab.column_profile(); used by column_waste and alignment_padding instead of pg_stats while the column keeps its name and type; not dumped by pg_dump (OIDs do not survive a restore)';
COMMENT ON COLUMN storagelab.column_profiles.relid IS 'OID of the profiled table';
COMMENT ON COLUMN storagelab.column_profiles.attnum IS 'column number';
COMMENT ON COLUMN storagelab.column_profiles.attname IS 'column name when profiled (a renamed column is profiled again)';
COMMENT ON COLUMN storagelab.column_profiles.atttypid IS 'column type when profiled (a retyped column is profiled again)';
COMMENT ON COLUMN storagelab.column_profiles.atttypmod IS 'column typmod when profiled';
COMMENT ON COLUMN storagelab.column_profiles.profiled_at IS 'when the pass ran';
COMMENT ON COLUMN storagelab.column_profiles.row_count IS 'rows the pass saw';
COMMENT ON COLUMN storagelab.column_profiles.null_count IS 'NULLs in the column';
COMMENT ON COLUMN storagelab.column_profiles.avg_width IS 'average stored width of non-NULL values in bytes (pg_column_size), variable-width types only';
COMMENT ON COLUMN storagelab.column_profiles.min_value IS 'smallest value: integer and numeric columns, and text columns holding only integers';
COMMENT ON COLUMN storagelab.column_profiles.max_value IS 'largest value, as min_value';
COMMENT ON COLUMN storagelab.column_profiles.all_integers IS 'numeric columns: every value is an integer';
COMMENT ON COLUMN storagelab.column_profiles.text_kind IS 'text, varchar and char(n) columns: uuid, integer, boolean, date, timestamp or timestamptz when every value is one; NULL otherwise';
COMMENT ON COLUMN storagelab.column_profiles.width_stddev IS 'standard deviation of the stored width of non-NULL values, variable-width types only';
COMMENT ON COLUMN storagelab.column_profiles.trimmed_avg_width IS 'char(n) columns: average stored width without the blank padding (as varchar), in bytes';

-- text_kind(value): the kind a text value is written as (src/column_profile.c);
-- column_profile() applies it to every value, the views to the values
-- ANALYZE sampled.
CREATE FUNCTION storagelab.text_kind(value text)
RETURNS text
AS 'MODULE_PATHNAME', 'storagelab_text_kind'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION storagelab.text_kind(text) IS
  'uuid, integer (no leading zeros, at most 20 bytes), boolean (t f true false y n yes no, any case), date (YYYY-MM-DD), timestamp (date, space or T, HH:MM[:SS[.ffffff]]) or timestamptz (the same with Z or +HH[[:]MM]) when the value is written as one; NULL otherwise';

-- sample_facts(stats, typid): the same facts from a pg_statistic row.
CREATE FUNCTION storagelab.sample_facts(stats pg_catalog.pg_statistic, typid oid,
  OUT mean_width float8, OUT width_stddev float8, OUT min_value numeric, OUT max_value numeric,
  OUT all_integers boolean, OUT text_kind text, OUT trimmed_avg_width float8)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_sample_facts'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab.sample_facts(pg_catalog.pg_statistic, oid) IS
  'the facts column_profile() measures, from the sample in a pg_statistic row (most common values by frequency, histogram bounds sharing the rest) of a column of type typid: mean and standard deviation of the stored width (variable-width types), bounds, integer-only numerics, the text kind shared by every value, char(n) width without padding';

-- column_profile_scan(relation): the pass itself (src/column_profile.c).
CREATE FUNCTION storagelab.column_profile_scan(relation regclass,
  OUT attnum int2, OUT row_count int8, OUT null_count int8, OUT avg_width float8,
  OUT min_value numeric, OUT max_value numeric, OUT all_integers boolean,
  OUT text_kind text, OUT trimmed_avg_width float8, OUT width_stddev float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_column_profile_scan'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION storagelab.column_profile_scan(regclass) IS
  'one MVCC pass over an ordinary table returning per live column: rows, NULLs, average stored width (variable width), bounds (integers, numerics, integer-holding text), whether a numeric holds only integers, the text kind shared by every value, char(n) width without padding; writes nothing (column_profile() stores the result)';

-- column_facts: one row per attribute (dropped ones included) of every
-- ordinary table the caller may read, with what the layout model and the
-- type rules need, from column_profiles when current, else pg_statistic.
-- Like pg_stats, it hides statistics of tables under active row security.
CREATE VIEW storagelab.column_facts AS
WITH protected AS (
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
),
protected_one AS (
  SELECT relid, attnum, min(why) AS why FROM protected GROUP BY relid, attnum
)
SELECT c.oid AS relid,
       c.reltuples,
       c.relpages,
       CASE WHEN c.reloptions IS NOT NULL THEN
         (SELECT o.option_value::int4 FROM pg_catalog.pg_options_to_table(c.reloptions) o
           WHERE o.option_name = 'fillfactor') END AS fillfactor,
       a.attnum,
       a.attname,
       a.attisdropped,
       a.atttypid,
       a.atttypmod,
       a.attlen,
       a.attalign,
       a.attstorage,
       a.attnotnull,
       -- the suggested order: fixed width by alignment descending, then
       -- variable width; NOT NULL first within each; then by position
       ((CASE WHEN a.attlen < 0 THEN 4 WHEN a.attalign = 'd' THEN 0
              WHEN a.attalign = 'i' THEN 1 WHEN a.attalign = 's' THEN 2 ELSE 3 END) * 2
        + (NOT a.attnotnull)::int4) * 2000 + a.attnum AS order_key,
       CASE WHEN a.attisdropped THEN NULL
            WHEN a.attidentity <> '' THEN 'identity'
            WHEN a.attgenerated <> '' THEN 'generated'
            WHEN a.attinhcount > 0 THEN 'inherited'
            ELSE p.why END AS protected_because,
       CASE WHEN a.attisdropped THEN NULL
            WHEN pr.relid IS NOT NULL THEN 'exact'
            WHEN s.starelid IS NOT NULL THEN 'statistics' END AS source,
       pr.profiled_at,
       pr.row_count AS profiled_rows,
       CASE WHEN a.attisdropped THEN 1.0::float8
            WHEN pr.relid IS NOT NULL
              THEN CASE WHEN pr.row_count > 0 THEN pr.null_count::float8 / pr.row_count END
            ELSE s.stanullfrac::float8 END AS null_frac,
       CASE WHEN a.attisdropped THEN 0.0::float8
            WHEN a.attlen > 0 THEN a.attlen::float8
            WHEN pr.relid IS NOT NULL THEN coalesce(pr.avg_width, 0.0)
            -- ANALYZE truncates the average to an integer: take the mean of
            -- the sampled values when it agrees, else add half a byte
            WHEN floor(sf.mean_width) = s.stawidth THEN sf.mean_width
            ELSE s.stawidth::float8 + 0.5 END AS avg_width,
       pr.min_value AS profile_min,
       pr.max_value AS profile_max,
       pr.all_integers AS profile_all_integers,
       pr.text_kind AS profile_text_kind,
       pr.trimmed_avg_width AS profile_trimmed_avg_width,
       sf.min_value AS sample_min,
       sf.max_value AS sample_max,
       sf.all_integers AS sample_all_integers,
       sf.text_kind AS sample_text_kind,
       sf.trimmed_avg_width AS sample_trimmed_avg_width,
       CASE WHEN a.attisdropped OR a.attlen > 0 THEN 0.0::float8
            WHEN pr.relid IS NOT NULL THEN coalesce(pr.width_stddev, 0.0)
            ELSE coalesce(sf.width_stddev, -1.0) END AS width_spread
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
  LEFT JOIN pg_catalog.pg_statistic s
         ON s.starelid = c.oid AND s.staattnum = a.attnum AND NOT s.stainherit
        AND NOT a.attisdropped
        AND (NOT c.relrowsecurity OR NOT pg_catalog.row_security_active(c.oid))
  LEFT JOIN storagelab.column_profiles pr
         ON pr.relid = c.oid AND pr.attnum = a.attnum AND pr.attname = a.attname
        AND pr.atttypid = a.atttypid AND pr.atttypmod = a.atttypmod
        AND NOT a.attisdropped
        AND (NOT c.relrowsecurity OR NOT pg_catalog.row_security_active(c.oid))
  LEFT JOIN protected_one p ON p.relid = c.oid AND p.attnum = a.attnum
  -- facts from the pg_statistic sample (MCVs with frequencies, histogram
  -- bounds), for variable-width columns and type-rule candidates
  -- facts from the pg_statistic sample, for variable-width columns and
  -- integer type-rule candidates
  LEFT JOIN LATERAL (
    SELECT * FROM storagelab.sample_facts(s, a.atttypid)
     WHERE pr.relid IS NULL AND s.starelid IS NOT NULL
       AND (a.attlen = -1
            OR (p.why IS NULL AND a.attinhcount = 0 AND a.attidentity = '' AND a.attgenerated = ''
                AND a.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype)))
  ) sf ON true
 WHERE c.relkind = 'r'
   AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab')
   AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'
   AND pg_catalog.has_table_privilege(c.oid, 'SELECT');
COMMENT ON VIEW storagelab.column_facts IS
  'per column of every ordinary table the caller may SELECT from: layout facts (typlen, typalign, typstorage, NOT NULL, null fraction, average width) and the data facts the type rules use, from storagelab.column_profiles when current, else pg_statistic; why a column is protected from narrowing';
COMMENT ON COLUMN storagelab.column_facts.relid IS 'table OID';
COMMENT ON COLUMN storagelab.column_facts.reltuples IS 'pg_class.reltuples (-1: never vacuumed or analyzed)';
COMMENT ON COLUMN storagelab.column_facts.relpages IS 'pg_class.relpages';
COMMENT ON COLUMN storagelab.column_facts.fillfactor IS 'fillfactor storage parameter (NULL: default 100)';
COMMENT ON COLUMN storagelab.column_facts.attnum IS 'column number';
COMMENT ON COLUMN storagelab.column_facts.attname IS 'column name';
COMMENT ON COLUMN storagelab.column_facts.attisdropped IS 'dropped column (stored as NULL once the table is rewritten)';
COMMENT ON COLUMN storagelab.column_facts.atttypid IS 'column type';
COMMENT ON COLUMN storagelab.column_facts.atttypmod IS 'column typmod';
COMMENT ON COLUMN storagelab.column_facts.attlen IS 'typlen (-1: varlena)';
COMMENT ON COLUMN storagelab.column_facts.attalign IS 'typalign';
COMMENT ON COLUMN storagelab.column_facts.attstorage IS 'storage strategy (p: never a 1-byte varlena header)';
COMMENT ON COLUMN storagelab.column_facts.attnotnull IS 'NOT NULL constraint';
COMMENT ON COLUMN storagelab.column_facts.order_key IS 'sort key of the suggested column order (alignment class, NOT NULL first, position)';
COMMENT ON COLUMN storagelab.column_facts.protected_because IS 'why no narrower type is ever suggested: primary key, foreign key, referenced by a foreign key, identity, sequence default, owns a sequence, generated, inherited; NULL when not protected';
COMMENT ON COLUMN storagelab.column_facts.source IS 'exact (column_profile) or statistics (pg_statistic); NULL: no facts (never analyzed)';
COMMENT ON COLUMN storagelab.column_facts.profiled_at IS 'when column_profile() saw the column; NULL when the facts come from statistics';
COMMENT ON COLUMN storagelab.column_facts.profiled_rows IS 'rows column_profile() saw';
COMMENT ON COLUMN storagelab.column_facts.null_frac IS 'fraction of rows where the column is NULL (dropped columns: 1)';
COMMENT ON COLUMN storagelab.column_facts.avg_width IS 'stored bytes of a non-NULL value: typlen, or the average varlena size with its header';
COMMENT ON COLUMN storagelab.column_facts.profile_min IS 'exact smallest value (integer, numeric, integer-holding text)';
COMMENT ON COLUMN storagelab.column_facts.profile_max IS 'exact largest value';
COMMENT ON COLUMN storagelab.column_facts.profile_all_integers IS 'numeric: every value is an integer (exact)';
COMMENT ON COLUMN storagelab.column_facts.profile_text_kind IS 'text kind shared by every value (exact)';
COMMENT ON COLUMN storagelab.column_facts.profile_trimmed_avg_width IS 'char(n): average width without blank padding (exact)';
COMMENT ON COLUMN storagelab.column_facts.sample_min IS 'smallest value in the pg_statistic sample (integer, numeric, integer-holding text)';
COMMENT ON COLUMN storagelab.column_facts.sample_max IS 'largest value in the sample';
COMMENT ON COLUMN storagelab.column_facts.sample_all_integers IS 'numeric: every sampled value is an integer';
COMMENT ON COLUMN storagelab.column_facts.sample_text_kind IS 'text kind shared by every sampled value';
COMMENT ON COLUMN storagelab.column_facts.sample_trimmed_avg_width IS 'char(n): average width without blank padding in the sample';
COMMENT ON COLUMN storagelab.column_facts.width_spread IS 'standard deviation of the stored width (0: fixed; -1: unknown, the layout model then takes the offset after the column as uniformly distributed)';

-- alignment_padding: tables whose column order wastes space.  "Now" is the
-- table rewritten in its current order (dropped columns stored as NULL, as
-- VACUUM FULL and new inserts do); "after" is a new table with the live
-- columns in the suggested order and the same rows.  One pass over
-- column_facts grouped by table; no join, so the cost grows linearly with
-- the number of columns.
CREATE VIEW storagelab.alignment_padding AS
WITH g AS (
  SELECT relid,
         CASE WHEN min(reltuples) >= 0 THEN min(reltuples)::float8
              ELSE max(profiled_rows)::float8 END AS tuples,
         min(fillfactor) AS fillfactor,
         bool_or(NOT attisdropped AND source IS NULL) AS missing_facts,
         bool_and(attisdropped OR source = 'exact') AS all_exact,
         array_agg(attname) FILTER (WHERE NOT attisdropped) AS current_order,
         array_agg(order_key) FILTER (WHERE NOT attisdropped) AS live_keys,
         array_agg(attlen) AS lens,
         array_agg(attalign) AS aligns,
         array_agg(attstorage) AS storages,
         array_agg(coalesce(avg_width, 0)) AS widths,
         array_agg(coalesce(null_frac, 0)) AS nfs,
         array_agg(width_spread) AS spreads,
         array_agg(CASE WHEN attisdropped THEN -1 ELSE order_key END) AS keys
    -- input in attnum order: the arrays are built in it (one sort, rather
    -- than one per aggregate and table).  No aggregate here may have an
    -- ORDER BY of its own: from PostgreSQL 16 on the planner then sorts the
    -- input by that aggregate's key for all of them (presorted aggregates),
    -- and the arrays would no longer be in attnum order.
    FROM (SELECT relid, reltuples, profiled_rows, fillfactor, attnum, attname, attisdropped,
                 attlen, attalign, attstorage, order_key, source, avg_width, null_frac,
                 width_spread
            FROM storagelab.column_facts ORDER BY relid, attnum) f
   GROUP BY relid
  HAVING count(*) FILTER (WHERE NOT attisdropped) > 0
),
-- the suggested order: the live columns sorted by their keys (unique, as
-- they end in attnum)
t AS (
  SELECT g.*,
         ARRAY(SELECT u.name FROM unnest(g.current_order, g.live_keys) u(name, key)
                ORDER BY u.key) AS suggested_order
    FROM g
),
m AS MATERIALIZED (
  SELECT t.*, l.now, l.after,
         storagelab.heap_pages(tuples, (l.now).tuple_bytes, fillfactor, (l.now).size_varies) AS pages_now,
         storagelab.heap_pages(tuples, (l.after).tuple_bytes, fillfactor, (l.after).size_varies) AS pages_after
    FROM t
    CROSS JOIN LATERAL (
      SELECT storagelab.heap_tuple_bytes(lens, aligns, storages, widths, nfs, spreads, NULL, NULL, NULL, NULL, NULL, NULL, NULL) AS now,
             storagelab.heap_tuple_bytes(lens, aligns, storages, widths, nfs, spreads, keys, NULL, NULL, NULL, NULL, NULL, NULL) AS after
   ) l
   WHERE NOT missing_facts AND tuples IS NOT NULL
)
SELECT relid::pg_catalog.regclass AS relation,
       round((now).tuple_bytes::numeric, 2) AS current_row_bytes,
       round((now).padding_bytes::numeric, 2) AS padding_bytes_per_row,
       suggested_order,
       round(((now).tuple_bytes - (after).tuple_bytes)::numeric, 2) AS saved_bytes_per_row,
       (pages_now - pages_after) * current_setting('block_size')::int8 AS estimated_saved_bytes,
       pg_catalog.pg_size_pretty((pages_now - pages_after) * current_setting('block_size')::int8)
         AS estimated_saved_pretty,
       current_order,
       round((after).tuple_bytes::numeric, 2) AS suggested_row_bytes,
       tuples::int8 AS estimated_rows,
       pages_now AS estimated_pages_now,
       pages_after AS estimated_pages_after,
       CASE WHEN all_exact THEN 'exact' ELSE 'statistics' END AS confidence,
       'ok'::text AS status
  FROM m
 WHERE round(((now).tuple_bytes - (after).tuple_bytes)::numeric, 2) > 0
UNION ALL
-- never analyzed: the order can be judged from the catalog, its cost cannot
SELECT relid::pg_catalog.regclass, NULL, NULL, suggested_order, NULL, NULL, NULL,
       current_order, NULL, NULL, NULL, NULL, NULL,
       'not analyzed: run ANALYZE or storagelab.column_profile()'
  FROM t
 WHERE (missing_facts OR tuples IS NULL) AND tuples IS DISTINCT FROM 0
   AND suggested_order IS DISTINCT FROM current_order;
COMMENT ON VIEW storagelab.alignment_padding IS
  'one row per table whose column order wastes alignment padding: row bytes now and in the suggested order (fixed width by alignment descending, then variable width; NOT NULL first), and the pg_relation_size difference a rebuild in that order would give; from catalogs and statistics only';
COMMENT ON COLUMN storagelab.alignment_padding.relation IS 'the table';
COMMENT ON COLUMN storagelab.alignment_padding.current_row_bytes IS 'expected bytes per row on a page in the current order (tuple header, null bitmap, alignment, MAXALIGN; without the 4-byte line pointer)';
COMMENT ON COLUMN storagelab.alignment_padding.padding_bytes_per_row IS 'the part of current_row_bytes that is alignment padding';
COMMENT ON COLUMN storagelab.alignment_padding.suggested_order IS 'every live column, in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.saved_bytes_per_row IS 'current_row_bytes minus suggested_row_bytes';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_saved_bytes IS 'pg_relation_size now (as if freshly written) minus after a rebuild in the suggested order: whole pages, with fillfactor, line pointers and page header';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_saved_pretty IS 'estimated_saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.alignment_padding.current_order IS 'live columns in their current order';
COMMENT ON COLUMN storagelab.alignment_padding.suggested_row_bytes IS 'expected bytes per row in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_rows IS 'rows the estimate is for (pg_class.reltuples, or the rows column_profile() saw)';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_pages_now IS 'heap pages the rows take in the current order when freshly written';
COMMENT ON COLUMN storagelab.alignment_padding.estimated_pages_after IS 'heap pages in the suggested order';
COMMENT ON COLUMN storagelab.alignment_padding.confidence IS 'exact when every column comes from column_profile(), else statistics';
COMMENT ON COLUMN storagelab.alignment_padding.status IS 'ok, or not analyzed (the numbers are NULL: some column has no statistics)';

-- column_waste: columns whose type is wider than their data.  The rules
-- run per column (what the data holds, from the profile or the pg_statistic
-- sample, then the first rule that applies); the sizes per table, with the
-- candidate's type substituted in the table's layout arrays.  No join
-- between columns and tables, so the cost grows linearly.
CREATE VIEW storagelab.column_waste AS
WITH f AS (
  SELECT c.relid, c.reltuples, c.profiled_rows, c.fillfactor, c.attnum, c.attname,
         c.attisdropped, c.atttypid, c.atttypmod, c.attlen, c.attalign, c.attstorage,
         c.attnotnull, c.order_key, c.source, c.null_frac, c.avg_width, c.width_spread,
         c.profiled_at,
         -- a column some rule may apply to
         (NOT c.attisdropped AND c.protected_because IS NULL
          AND c.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                             'numeric'::pg_catalog.regtype, 'text'::pg_catalog.regtype,
                             'varchar'::pg_catalog.regtype, 'bpchar'::pg_catalog.regtype)
          AND (c.atttypid <> 'bpchar'::pg_catalog.regtype OR c.atttypmod > 4)) AS candidate,
         rn.rule, x.lo, x.hi, x.trimmed
    FROM storagelab.column_facts c
    -- what the data holds: exact from the profile, else from the sample
    CROSS JOIN LATERAL (
      SELECT CASE WHEN c.source = 'exact' THEN c.profile_text_kind ELSE c.sample_text_kind END AS kind,
             CASE WHEN c.source = 'exact' THEN c.profile_min ELSE c.sample_min END AS lo,
             CASE WHEN c.source = 'exact' THEN c.profile_max ELSE c.sample_max END AS hi,
             CASE WHEN c.source = 'exact' THEN c.profile_all_integers
                  ELSE c.sample_all_integers END AS all_int,
             CASE WHEN c.source = 'exact' THEN c.profile_trimmed_avg_width
                  ELSE c.sample_trimmed_avg_width END AS trimmed
    ) x
    -- the rules, in order: the first that applies
    CROSS JOIN LATERAL (
      SELECT CASE WHEN c.source IS NULL OR c.attisdropped OR c.protected_because IS NOT NULL THEN NULL
                  WHEN c.atttypid IN ('int8'::pg_catalog.regtype, 'int4'::pg_catalog.regtype)
                    AND x.lo >= -16384 AND x.hi <= 16383 THEN 1
                  WHEN c.atttypid = 'int8'::pg_catalog.regtype
                    AND x.lo >= -1073741824 AND x.hi <= 1073741823 THEN 2
                  WHEN c.atttypid = 'numeric'::pg_catalog.regtype AND x.all_int
                    AND x.lo >= -1073741824 AND x.hi <= 1073741823 THEN 3
                  WHEN c.atttypid = 'numeric'::pg_catalog.regtype AND x.all_int
                    AND x.lo >= -4611686018427387904 AND x.hi <= 4611686018427387903 THEN 4
                  WHEN c.atttypid NOT IN ('text'::pg_catalog.regtype, 'varchar'::pg_catalog.regtype,
                                          'bpchar'::pg_catalog.regtype) THEN NULL
                  WHEN x.kind = 'uuid' THEN 5
                  WHEN x.kind = 'integer' AND x.lo >= -16384 AND x.hi <= 16383 THEN 6
                  WHEN x.kind = 'integer' AND x.lo >= -1073741824 AND x.hi <= 1073741823 THEN 7
                  WHEN x.kind = 'integer'
                    AND x.lo >= -4611686018427387904 AND x.hi <= 4611686018427387903 THEN 8
                  WHEN x.kind = 'boolean' THEN 9
                  WHEN x.kind = 'date' THEN 10
                  WHEN x.kind = 'timestamp' THEN 11
                  WHEN x.kind = 'timestamptz' THEN 12
                  WHEN c.atttypid = 'bpchar'::pg_catalog.regtype AND x.kind IS NULL
                    AND c.avg_width - x.trimmed >= 1 THEN 13
             END AS rule
    ) rn
),
t AS (
  SELECT relid,
         CASE WHEN min(reltuples) >= 0 THEN min(reltuples)::float8
              ELSE max(profiled_rows)::float8 END AS tuples,
         min(fillfactor) AS fillfactor,
         array_agg(attlen) AS lens,
         array_agg(attalign) AS aligns,
         array_agg(attstorage) AS storages,
         array_agg(coalesce(avg_width, 0)) AS widths,
         array_agg(coalesce(null_frac, 0)) AS nfs,
         array_agg(width_spread) AS spreads,
         array_agg(CASE WHEN attisdropped THEN -1 ELSE order_key END) AS keys,
         -- the candidates, as parallel arrays
         array_agg(attnum) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_attnum,
         array_agg(attname) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_name,
         array_agg(atttypid) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_typid,
         array_agg(atttypmod) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_typmod,
         array_agg(rule) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_rule,
         array_agg(lo) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_lo,
         array_agg(hi) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_hi,
         array_agg(trimmed) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_trimmed,
         array_agg(avg_width) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_avgw,
         array_agg(source) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_source,
         array_agg(null_frac) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_nf,
         array_agg(profiled_at) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_profiled,
         array_agg(attnotnull) FILTER (WHERE candidate AND (rule IS NOT NULL OR source IS NULL)) AS c_notnull
    -- input in attnum order: the arrays are built in it
    FROM (SELECT relid, reltuples, profiled_rows, fillfactor, attnum, attname, attisdropped,
                 atttypid, atttypmod, attlen, attalign, attstorage, attnotnull, order_key, source,
                 avg_width, null_frac, width_spread, profiled_at, candidate, rule, lo, hi,
                 trimmed
            FROM f ORDER BY relid, attnum) f
   GROUP BY relid
  HAVING bool_or(candidate AND (rule IS NOT NULL OR source IS NULL))
),
-- the table's rows now and in the suggested order, once per table
tl AS MATERIALIZED (
  SELECT t.*,
         storagelab.heap_tuple_bytes(t.lens, t.aligns, t.storages, t.widths, t.nfs, t.spreads,
                                     NULL, NULL, NULL, NULL, NULL, NULL, NULL) AS now,
         storagelab.heap_tuple_bytes(t.lens, t.aligns, t.storages, t.widths, t.nfs, t.spreads,
                                     t.keys, NULL, NULL, NULL, NULL, NULL, NULL) AS reordered
    FROM t
),
c AS MATERIALIZED (
  SELECT tl.relid, tl.tuples, tl.fillfactor, tl.now, tl.reordered, u.attnum, u.attname,
         u.atttypid, u.atttypmod, u.source, u.null_frac, u.profiled_at, r.*,
         CASE WHEN r.suggested_type IS NOT NULL THEN
         storagelab.heap_tuple_bytes(tl.lens, tl.aligns, tl.storages, tl.widths, tl.nfs, tl.spreads,
                                     NULL, u.attnum, r.new_len, r.new_align, r.new_storage,
                                     r.new_width, NULL) END AS changed,
         CASE WHEN r.suggested_type IS NOT NULL THEN
         storagelab.heap_tuple_bytes(tl.lens, tl.aligns, tl.storages, tl.widths, tl.nfs, tl.spreads,
                                     tl.keys, u.attnum, r.new_len, r.new_align, r.new_storage,
                                     r.new_width,
                                     -- the candidate's sort key with its new type
                                     ((CASE WHEN r.new_len < 0 THEN 4 WHEN r.new_align = 'd' THEN 0
                                            WHEN r.new_align = 'i' THEN 1 WHEN r.new_align = 's' THEN 2
                                            ELSE 3 END) * 2
                                      + (NOT u.is_notnull)::int4) * 2000 + u.attnum) END AS changed_reordered
    FROM tl
    CROSS JOIN LATERAL unnest(tl.c_attnum, tl.c_name, tl.c_typid, tl.c_typmod, tl.c_rule,
                              tl.c_lo, tl.c_hi, tl.c_trimmed, tl.c_avgw, tl.c_source, tl.c_nf,
                              tl.c_profiled, tl.c_notnull)
      AS u(attnum, attname, atttypid, atttypmod, rule, lo, hi, trimmed, avg_width, source,
           null_frac, profiled_at, is_notnull)
    CROSS JOIN LATERAL (SELECT u.lo, u.hi, u.trimmed) x
    CROSS JOIN LATERAL (SELECT u.rule) rn
    CROSS JOIN LATERAL (SELECT u.atttypmod, u.avg_width) c
    -- what the rule suggests, and the suggested type's storage
    CROSS JOIN LATERAL (
      SELECT CASE WHEN rn.rule IN (1, 6) THEN 'smallint'
                  WHEN rn.rule IN (2, 3, 7) THEN 'integer'
                  WHEN rn.rule IN (4, 8) THEN 'bigint'
                  WHEN rn.rule = 5 THEN 'uuid'
                  WHEN rn.rule = 9 THEN 'boolean'
                  WHEN rn.rule = 10 THEN 'date'
                  WHEN rn.rule = 11 THEN 'timestamp without time zone'
                  WHEN rn.rule = 12 THEN 'timestamp with time zone'
                  WHEN rn.rule = 13 THEN format('character varying(%s)', c.atttypmod - 4)
             END AS suggested_type,
             CASE WHEN rn.rule = 1 THEN format('values from %s to %s fit smallint with headroom (at most half its range)', x.lo, x.hi)
                  WHEN rn.rule = 2 THEN format('values from %s to %s fit integer with headroom (at most half its range)', x.lo, x.hi)
                  WHEN rn.rule IN (3, 4) THEN format('only integers, from %s to %s: %s holds them with headroom', x.lo, x.hi,
                                                     CASE rn.rule WHEN 3 THEN 'integer' ELSE 'bigint' END)
                  WHEN rn.rule = 5 THEN 'only UUIDs'
                  WHEN rn.rule IN (6, 7, 8) THEN format('only integers, from %s to %s', x.lo, x.hi)
                  WHEN rn.rule = 9 THEN 'only booleans'
                  WHEN rn.rule = 10 THEN 'only dates (YYYY-MM-DD)'
                  WHEN rn.rule = 11 THEN 'only timestamps without time zone'
                  WHEN rn.rule = 12 THEN 'only timestamps with time zone'
                  WHEN rn.rule = 13 THEN format('blank padding: %s of %s bytes per value',
                                                round((c.avg_width - x.trimmed)::numeric, 1),
                                                round(c.avg_width::numeric, 1))
             END AS reason,
             (CASE WHEN rn.rule IN (1, 6) THEN 2 WHEN rn.rule IN (2, 3, 7, 10) THEN 4
                   WHEN rn.rule IN (4, 8, 11, 12) THEN 8 WHEN rn.rule = 5 THEN 16
                   WHEN rn.rule = 9 THEN 1 WHEN rn.rule = 13 THEN -1 END)::int2 AS new_len,
             (CASE WHEN rn.rule IN (1, 6) THEN 's' WHEN rn.rule IN (2, 3, 7, 10, 13) THEN 'i'
                   WHEN rn.rule IN (4, 8, 11, 12) THEN 'd' WHEN rn.rule IN (5, 9) THEN 'c' END)::"char" AS new_align,
             (CASE WHEN rn.rule = 13 THEN 'x' WHEN rn.rule IS NOT NULL THEN 'p' END)::"char" AS new_storage,
             CASE WHEN rn.rule = 13 THEN x.trimmed
                  WHEN rn.rule IN (1, 6) THEN 2 WHEN rn.rule IN (2, 3, 7, 10) THEN 4
                  WHEN rn.rule IN (4, 8, 11, 12) THEN 8 WHEN rn.rule = 5 THEN 16
                  WHEN rn.rule = 9 THEN 1 END::float8 AS new_width
    ) r
),
z AS (
  SELECT * FROM c WHERE suggested_type IS NOT NULL
)
SELECT relid::pg_catalog.regclass AS relation,
       attname AS column_name,
       atttypid::pg_catalog.regtype AS current_type,
       suggested_type,
       reason,
       round(((now).tuple_bytes - (changed).tuple_bytes)::numeric, 2) AS saved_bytes_per_row,
       (storagelab.heap_pages(tuples, (now).tuple_bytes, fillfactor, (now).size_varies)
        - storagelab.heap_pages(tuples, (changed).tuple_bytes, fillfactor, (changed).size_varies))
         * current_setting('block_size')::int8 AS estimated_saved_bytes,
       source AS confidence,
       pg_catalog.format_type(atttypid, atttypmod) AS current_type_full,
       round(((reordered).tuple_bytes - (changed_reordered).tuple_bytes)::numeric, 2)
         AS saved_bytes_per_row_reordered,
       pg_catalog.pg_size_pretty((storagelab.heap_pages(tuples, (now).tuple_bytes, fillfactor, (now).size_varies)
        - storagelab.heap_pages(tuples, (changed).tuple_bytes, fillfactor, (changed).size_varies))
         * current_setting('block_size')::int8) AS estimated_saved_pretty,
       round(null_frac::numeric, 4) AS null_frac,
       profiled_at
  FROM z
 WHERE round(((now).tuple_bytes - (changed).tuple_bytes)::numeric, 2) > 0
    OR round(((reordered).tuple_bytes - (changed_reordered).tuple_bytes)::numeric, 2) > 0
UNION ALL
-- never analyzed: reported, not guessed
SELECT relid::pg_catalog.regclass, attname, atttypid::pg_catalog.regtype, NULL,
       'not analyzed: run ANALYZE or storagelab.column_profile()', NULL, NULL, NULL,
       pg_catalog.format_type(atttypid, atttypmod), NULL, NULL, NULL, NULL
  FROM c
 WHERE source IS NULL AND tuples IS DISTINCT FROM 0;
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; from pg_stats, or exact after storagelab.column_profile()';
COMMENT ON COLUMN storagelab.column_waste.relation IS 'the table';
COMMENT ON COLUMN storagelab.column_waste.column_name IS 'the column';
COMMENT ON COLUMN storagelab.column_waste.current_type IS 'its type (current_type_full shows the typmod)';
COMMENT ON COLUMN storagelab.column_waste.suggested_type IS 'the narrower type the data fits; NULL when the table was never analyzed';
COMMENT ON COLUMN storagelab.column_waste.reason IS 'what in the data allows it';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row IS 'bytes per row saved by ALTER COLUMN ... TYPE alone (the column keeps its position; alignment and NULLs counted)';
COMMENT ON COLUMN storagelab.column_waste.estimated_saved_bytes IS 'pg_relation_size difference after that rewrite, in whole pages (fillfactor, line pointers, page header), for the current row count';
COMMENT ON COLUMN storagelab.column_waste.confidence IS 'exact (from column_profile()) or statistics (from the pg_stats sample: bounds and values seen by ANALYZE)';
COMMENT ON COLUMN storagelab.column_waste.current_type_full IS 'current type with typmod, as format_type() prints it';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row_reordered IS 'bytes per row saved by the change when the table is also laid out in the order alignment_padding suggests';
COMMENT ON COLUMN storagelab.column_waste.estimated_saved_pretty IS 'estimated_saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.column_waste.null_frac IS 'fraction of NULLs in the column';
COMMENT ON COLUMN storagelab.column_waste.profiled_at IS 'when column_profile() saw the data (confidence exact)';

-- column_profile(relation): one pass over the table computing, for every
-- column at once, what column_waste needs; the results replace the table's
-- rows in storagelab.column_profiles.
CREATE FUNCTION storagelab.column_profile(relation regclass)
RETURNS TABLE (column_name name, column_type text, row_count int8, null_frac float8,
               avg_width float8, min_value numeric, max_value numeric,
               all_integers boolean, text_kind text, trimmed_avg_width float8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- column_profile_scan() checks existence, privilege, kind and row security.
  -- Profiles of dropped tables go too (their OIDs could be reused).
  DELETE FROM storagelab.column_profiles p
   WHERE p.relid = relation
      OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = p.relid);
  RETURN QUERY
    WITH scan AS (
      SELECT relation::oid AS relid, s.attnum, a.attname, a.atttypid, a.atttypmod,
             now() AS profiled_at, s.row_count, s.null_count, s.avg_width, s.min_value,
             s.max_value, s.all_integers, s.text_kind, s.trimmed_avg_width, s.width_stddev
        FROM storagelab.column_profile_scan(relation) s
        JOIN pg_attribute a ON a.attrelid = relation AND a.attnum = s.attnum
    ),
    ins AS (
      INSERT INTO storagelab.column_profiles SELECT * FROM scan
    )
    SELECT p.attname, format_type(p.atttypid, p.atttypmod), p.row_count,
           CASE WHEN p.row_count > 0 THEN p.null_count::float8 / p.row_count END,
           p.avg_width, p.min_value, p.max_value, p.all_integers, p.text_kind, p.trimmed_avg_width
      FROM scan p
     ORDER BY p.attnum;
END
$fn$;
COMMENT ON FUNCTION storagelab.column_profile(regclass) IS
  'one exact pass over an ordinary table for all its columns (NULLs, widths, bounds, integer-only numerics, text kinds, char(n) padding); stores the results in storagelab.column_profiles, which column_waste and alignment_padding then use (confidence exact), and returns them; NULL argument: no rows';

-- Access: the views filter by the caller's privileges themselves.
-- column_profile() reads whole tables: like the page readers, it is for
-- pg_stat_scan_tables (plus SELECT on the table, checked).
GRANT SELECT ON storagelab.column_facts, storagelab.column_waste,
                storagelab.alignment_padding TO PUBLIC;
REVOKE ALL ON storagelab.column_profiles FROM PUBLIC;
-- Profiles hold column bounds: nobody reads them directly but through the
-- views, which check the caller's privileges on each table.
-- column_profile() needs to find and replace a table's rows only.
GRANT SELECT (relid), INSERT, DELETE ON storagelab.column_profiles TO pg_stat_scan_tables;
REVOKE EXECUTE ON FUNCTION storagelab.column_profile(regclass) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION storagelab.column_profile_scan(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storagelab.column_profile_scan(regclass) TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab.column_profile(regclass) TO pg_stat_scan_tables;

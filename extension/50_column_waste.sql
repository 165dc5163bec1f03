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
CREATE FUNCTION storagelab.heap_tuple_bytes(
  lens int2[], aligns "char"[], storages "char"[],
  widths float8[], null_fracs float8[],
  OUT tuple_bytes float8, OUT padding_bytes float8, OUT size_varies boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_heap_tuple_bytes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION storagelab.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[]) IS
  'expected bytes a heap tuple takes on a page (MAXALIGN''d, without line pointer), how many of them are alignment padding, and whether tuple sizes vary, from per-column typlen, typalign, typstorage, average stored width and null fraction in column order';

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

-- column_profile_scan(relation): the pass itself (src/column_profile.c).
CREATE FUNCTION storagelab.column_profile_scan(relation regclass,
  OUT attnum int2, OUT row_count int8, OUT null_count int8, OUT avg_width float8,
  OUT min_value numeric, OUT max_value numeric, OUT all_integers boolean,
  OUT text_kind text, OUT trimmed_avg_width float8)
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
       (SELECT o.option_value::int4 FROM pg_catalog.pg_options_to_table(c.reloptions) o
         WHERE o.option_name = 'fillfactor') AS fillfactor,
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
            -- ANALYZE truncates the average to an integer: add half a byte
            ELSE s.stawidth::float8 + 0.5 END AS avg_width,
       pr.min_value AS profile_min,
       pr.max_value AS profile_max,
       pr.all_integers AS profile_all_integers,
       pr.text_kind AS profile_text_kind,
       pr.trimmed_avg_width AS profile_trimmed_avg_width,
       -- the pg_statistic sample (MCVs with frequencies, histogram bounds),
       -- decoded only for columns a type rule may apply to
       CASE WHEN pr.relid IS NULL AND p.why IS NULL
             AND a.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                                'numeric'::pg_catalog.regtype, 'text'::pg_catalog.regtype,
                                'varchar'::pg_catalog.regtype, 'bpchar'::pg_catalog.regtype)
       THEN CASE 1 WHEN s.stakind1 THEN s.stavalues1 WHEN s.stakind2 THEN s.stavalues2
                   WHEN s.stakind3 THEN s.stavalues3 WHEN s.stakind4 THEN s.stavalues4
                   WHEN s.stakind5 THEN s.stavalues5 END::text::text[] END AS mcv_values,
       CASE WHEN pr.relid IS NULL AND p.why IS NULL AND a.atttypid = 'bpchar'::pg_catalog.regtype
       THEN CASE 1 WHEN s.stakind1 THEN s.stanumbers1 WHEN s.stakind2 THEN s.stanumbers2
                   WHEN s.stakind3 THEN s.stanumbers3 WHEN s.stakind4 THEN s.stanumbers4
                   WHEN s.stakind5 THEN s.stanumbers5 END END AS mcv_freqs,
       CASE WHEN pr.relid IS NULL AND p.why IS NULL
             AND a.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                                'numeric'::pg_catalog.regtype, 'text'::pg_catalog.regtype,
                                'varchar'::pg_catalog.regtype, 'bpchar'::pg_catalog.regtype)
       THEN CASE 2 WHEN s.stakind1 THEN s.stavalues1 WHEN s.stakind2 THEN s.stavalues2
                   WHEN s.stakind3 THEN s.stavalues3 WHEN s.stakind4 THEN s.stavalues4
                   WHEN s.stakind5 THEN s.stavalues5 END::text::text[] END AS histogram_values
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
  LEFT JOIN protected_one p ON p.relid = c.oid AND p.attnum = a.attnum
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
COMMENT ON COLUMN storagelab.column_facts.mcv_values IS 'pg_statistic most common values as text (type-rule candidates only)';
COMMENT ON COLUMN storagelab.column_facts.mcv_freqs IS 'their frequencies (char(n) columns only)';
COMMENT ON COLUMN storagelab.column_facts.histogram_values IS 'pg_statistic histogram bounds as text (type-rule candidates only)';

-- alignment_padding: tables whose column order wastes space.  "Now" is the
-- table rewritten in its current order (dropped columns stored as NULL, as
-- VACUUM FULL and new inserts do); "after" is a new table with the live
-- columns in the suggested order and the same rows.
CREATE VIEW storagelab.alignment_padding AS
WITH f AS MATERIALIZED (
  SELECT * FROM storagelab.column_facts
),
t AS (
  SELECT relid,
         CASE WHEN min(reltuples) >= 0 THEN min(reltuples)::float8
              ELSE max(profiled_rows)::float8 END AS tuples,
         min(fillfactor) AS fillfactor,
         bool_or(NOT attisdropped AND source IS NULL) AS missing_facts,
         bool_and(attisdropped OR source = 'exact') AS all_exact,
         array_agg(attname ORDER BY attnum) FILTER (WHERE NOT attisdropped) AS current_order,
         array_agg(attname ORDER BY order_key) FILTER (WHERE NOT attisdropped) AS suggested_order,
         storagelab.heap_tuple_bytes(
           array_agg(attlen ORDER BY attnum), array_agg(attalign ORDER BY attnum),
           array_agg(attstorage ORDER BY attnum),
           array_agg(coalesce(avg_width, 0) ORDER BY attnum),
           array_agg(coalesce(null_frac, 0) ORDER BY attnum)) AS now,
         storagelab.heap_tuple_bytes(
           array_agg(attlen ORDER BY order_key) FILTER (WHERE NOT attisdropped),
           array_agg(attalign ORDER BY order_key) FILTER (WHERE NOT attisdropped),
           array_agg(attstorage ORDER BY order_key) FILTER (WHERE NOT attisdropped),
           array_agg(coalesce(avg_width, 0) ORDER BY order_key) FILTER (WHERE NOT attisdropped),
           array_agg(coalesce(null_frac, 0) ORDER BY order_key) FILTER (WHERE NOT attisdropped)) AS after
    FROM f
   GROUP BY relid
  HAVING count(*) FILTER (WHERE NOT attisdropped) > 0
),
m AS (
  SELECT t.*,
         storagelab.heap_pages(tuples, (now).tuple_bytes, fillfactor, (now).size_varies) AS pages_now,
         storagelab.heap_pages(tuples, (after).tuple_bytes, fillfactor, (after).size_varies) AS pages_after
    FROM t
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

-- column_waste: columns whose type is wider than their data.
CREATE VIEW storagelab.column_waste AS
WITH f AS MATERIALIZED (
  SELECT * FROM storagelab.column_facts
),
t AS (
  SELECT relid,
         CASE WHEN min(reltuples) >= 0 THEN min(reltuples)::float8
              ELSE max(profiled_rows)::float8 END AS tuples,
         min(fillfactor) AS fillfactor,
         bool_or(NOT attisdropped AND source IS NULL) AS missing_facts
    FROM f
   GROUP BY relid
),
-- unprotected columns of a type some rule applies to
cand AS (
  SELECT f.*
    FROM f
   WHERE NOT attisdropped AND protected_because IS NULL
     AND atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                      'numeric'::pg_catalog.regtype, 'text'::pg_catalog.regtype,
                      'varchar'::pg_catalog.regtype, 'bpchar'::pg_catalog.regtype)
     AND (atttypid <> 'bpchar'::pg_catalog.regtype OR atttypmod > 4)
),
-- what the data holds: exact from the profile, else from the pg_statistic
-- sample (most common values and histogram bounds)
facts AS (
  SELECT c.*,
         CASE WHEN c.source = 'exact' THEN
              CASE WHEN c.profile_text_kind IS NOT NULL
                   THEN c.profile_text_kind END
              ELSE tk.kind END AS kind,
         CASE WHEN c.source = 'exact' THEN c.profile_min
              WHEN c.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                                  'numeric'::pg_catalog.regtype) THEN num.lo
              ELSE tk.lo END AS lo,
         CASE WHEN c.source = 'exact' THEN c.profile_max
              WHEN c.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                                  'numeric'::pg_catalog.regtype) THEN num.hi
              ELSE tk.hi END AS hi,
         CASE WHEN c.source = 'exact' THEN c.profile_all_integers
              ELSE num.all_int END AS all_int,
         CASE WHEN c.source = 'exact' THEN c.profile_trimmed_avg_width
              ELSE bp.trimmed END AS trimmed_width
    FROM cand c
    LEFT JOIN LATERAL (
      SELECT min(x.n) AS lo, max(x.n) AS hi, bool_and(x.n = trunc(x.n)) AS all_int
        FROM unnest(c.mcv_values || c.histogram_values) v,
             LATERAL (SELECT v::numeric AS n) x
       WHERE c.source = 'statistics'
         AND c.atttypid IN ('int4'::pg_catalog.regtype, 'int8'::pg_catalog.regtype,
                            'numeric'::pg_catalog.regtype)
    ) num ON true
    LEFT JOIN LATERAL (
      -- text_kind() of every sampled value, once the first one has a kind
      SELECT CASE WHEN count(*) = count(k.kind) AND min(k.kind) = max(k.kind)
                  THEN min(k.kind) END AS kind,
             min(CASE WHEN k.kind = 'integer' THEN k.v::numeric END) AS lo,
             max(CASE WHEN k.kind = 'integer' THEN k.v::numeric END) AS hi
        FROM unnest(c.mcv_values || c.histogram_values) raw,
             LATERAL (SELECT CASE WHEN c.atttypid = 'bpchar'::pg_catalog.regtype
                                  THEN rtrim(raw) ELSE raw END AS v) tv,
             LATERAL (SELECT tv.v, storagelab.text_kind(tv.v) AS kind) k
       WHERE c.source = 'statistics'
         AND c.atttypid IN ('text'::pg_catalog.regtype, 'varchar'::pg_catalog.regtype,
                            'bpchar'::pg_catalog.regtype)
         AND coalesce(c.mcv_values[1], c.histogram_values[1]) IS NOT NULL
         AND storagelab.text_kind(rtrim(coalesce(c.mcv_values[1], c.histogram_values[1]))) IS NOT NULL
    ) tk ON true
    LEFT JOIN LATERAL (
      -- char(n): average width without the padding, weighting the most
      -- common values by their frequency and the histogram for the rest
      SELECT (coalesce(mc.w, 0) + greatest(1 - c.null_frac - coalesce(mc.fq, 0), 0) * coalesce(h.w, 0))
             / nullif(coalesce(mc.fq, 0)
                      + CASE WHEN h.w IS NULL THEN 0
                             ELSE greatest(1 - c.null_frac - coalesce(mc.fq, 0), 0) END, 0) AS trimmed
        FROM (SELECT sum(m.fq * (octet_length(rtrim(m.v))
                                 + CASE WHEN octet_length(rtrim(m.v)) < 127 THEN 1 ELSE 4 END)) AS w,
                     sum(m.fq) AS fq
                FROM unnest(c.mcv_values, c.mcv_freqs) AS m(v, fq)) mc,
             (SELECT avg(octet_length(rtrim(v))
                         + CASE WHEN octet_length(rtrim(v)) < 127 THEN 1 ELSE 4 END) AS w
                FROM unnest(c.histogram_values) v) h
       WHERE c.source = 'statistics' AND c.atttypid = 'bpchar'::pg_catalog.regtype
    ) bp ON true
   WHERE c.source IS NOT NULL
),
-- the rules; new_* describe the suggested type's storage
rule AS (
  SELECT x.*, s.suggested_type, s.reason, s.new_len, s.new_align, s.new_storage, s.new_width
    FROM facts x
    CROSS JOIN LATERAL (
      SELECT r.* FROM (VALUES
        -- integers with headroom: at most half of the narrower type's range
        (x.atttypid IN ('int8'::pg_catalog.regtype, 'int4'::pg_catalog.regtype)
           AND x.lo >= -16384 AND x.hi <= 16383,
         'smallint', format('values from %s to %s fit smallint with headroom (at most half its range)', x.lo, x.hi),
         2::int2, 's'::"char", 'p'::"char", 2::float8),
        (x.atttypid = 'int8'::pg_catalog.regtype AND x.lo >= -1073741824 AND x.hi <= 1073741823,
         'integer', format('values from %s to %s fit integer with headroom (at most half its range)', x.lo, x.hi),
         4::int2, 'i', 'p', 4),
        (x.atttypid = 'numeric'::pg_catalog.regtype AND x.all_int
           AND x.lo >= -1073741824 AND x.hi <= 1073741823,
         'integer', format('only integers, from %s to %s: integer holds them with headroom', x.lo, x.hi),
         4::int2, 'i', 'p', 4),
        (x.atttypid = 'numeric'::pg_catalog.regtype AND x.all_int
           AND x.lo >= -4611686018427387904 AND x.hi <= 4611686018427387903,
         'bigint', format('only integers, from %s to %s: bigint holds them with headroom', x.lo, x.hi),
         8::int2, 'd', 'p', 8),
        (x.kind = 'uuid', 'uuid', 'only UUIDs', 16::int2, 'c', 'p', 16),
        (x.kind = 'integer' AND x.lo >= -16384 AND x.hi <= 16383,
         'smallint', format('only integers, from %s to %s', x.lo, x.hi), 2::int2, 's', 'p', 2),
        (x.kind = 'integer' AND x.lo >= -1073741824 AND x.hi <= 1073741823,
         'integer', format('only integers, from %s to %s', x.lo, x.hi), 4::int2, 'i', 'p', 4),
        (x.kind = 'integer' AND x.lo >= -4611686018427387904 AND x.hi <= 4611686018427387903,
         'bigint', format('only integers, from %s to %s', x.lo, x.hi), 8::int2, 'd', 'p', 8),
        (x.kind = 'boolean', 'boolean', 'only booleans', 1::int2, 'c', 'p', 1),
        (x.kind = 'date', 'date', 'only dates (YYYY-MM-DD)', 4::int2, 'i', 'p', 4),
        (x.kind = 'timestamp', 'timestamp without time zone', 'only timestamps without time zone',
         8::int2, 'd', 'p', 8),
        (x.kind = 'timestamptz', 'timestamp with time zone', 'only timestamps with time zone',
         8::int2, 'd', 'p', 8),
        (x.atttypid = 'bpchar'::pg_catalog.regtype AND x.kind IS NULL
           AND x.avg_width - x.trimmed_width >= 1,
         format('character varying(%s)', x.atttypmod - 4),
         format('blank padding: %s of %s bytes per value', round((x.avg_width - x.trimmed_width)::numeric, 1),
                round(x.avg_width::numeric, 1)),
         -1::int2, 'i', 'x', x.trimmed_width)
      ) AS r(applies, suggested_type, reason, new_len, new_align, new_storage, new_width)
      WHERE r.applies
      LIMIT 1
    ) s
),
-- the row with that one column changed: in place (ALTER COLUMN ... TYPE
-- keeps the column order) and in the suggested order
sized AS (
  SELECT r.relid, r.attnum,
         storagelab.heap_tuple_bytes(
           array_agg(g.attlen ORDER BY g.attnum), array_agg(g.attalign ORDER BY g.attnum),
           array_agg(g.attstorage ORDER BY g.attnum),
           array_agg(coalesce(g.avg_width, 0) ORDER BY g.attnum),
           array_agg(coalesce(g.null_frac, 0) ORDER BY g.attnum)) AS now,
         storagelab.heap_tuple_bytes(
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_len ELSE g.attlen END ORDER BY g.attnum),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_align ELSE g.attalign END ORDER BY g.attnum),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_storage ELSE g.attstorage END ORDER BY g.attnum),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_width ELSE coalesce(g.avg_width, 0) END ORDER BY g.attnum),
           array_agg(coalesce(g.null_frac, 0) ORDER BY g.attnum)) AS changed,
         storagelab.heap_tuple_bytes(
           array_agg(g.attlen ORDER BY g.order_key) FILTER (WHERE NOT g.attisdropped),
           array_agg(g.attalign ORDER BY g.order_key) FILTER (WHERE NOT g.attisdropped),
           array_agg(g.attstorage ORDER BY g.order_key) FILTER (WHERE NOT g.attisdropped),
           array_agg(coalesce(g.avg_width, 0) ORDER BY g.order_key) FILTER (WHERE NOT g.attisdropped),
           array_agg(coalesce(g.null_frac, 0) ORDER BY g.order_key) FILTER (WHERE NOT g.attisdropped)) AS reordered,
         storagelab.heap_tuple_bytes(
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_len ELSE g.attlen END ORDER BY k.key) FILTER (WHERE NOT g.attisdropped),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_align ELSE g.attalign END ORDER BY k.key) FILTER (WHERE NOT g.attisdropped),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_storage ELSE g.attstorage END ORDER BY k.key) FILTER (WHERE NOT g.attisdropped),
           array_agg(CASE WHEN g.attnum = r.attnum THEN r.new_width ELSE coalesce(g.avg_width, 0) END ORDER BY k.key) FILTER (WHERE NOT g.attisdropped),
           array_agg(coalesce(g.null_frac, 0) ORDER BY k.key) FILTER (WHERE NOT g.attisdropped)) AS changed_reordered
    FROM rule r
    JOIN f g ON g.relid = r.relid
    CROSS JOIN LATERAL (
      SELECT CASE WHEN g.attnum <> r.attnum THEN g.order_key
                  ELSE ((CASE WHEN r.new_len < 0 THEN 4 WHEN r.new_align = 'd' THEN 0
                              WHEN r.new_align = 'i' THEN 1 WHEN r.new_align = 's' THEN 2 ELSE 3 END) * 2
                        + (NOT g.attnotnull)::int4) * 2000 + g.attnum END AS key) k
   GROUP BY r.relid, r.attnum
)
SELECT r.relid::pg_catalog.regclass AS relation,
       r.attname AS column_name,
       r.atttypid::pg_catalog.regtype AS current_type,
       r.suggested_type,
       r.reason,
       round(((z.now).tuple_bytes - (z.changed).tuple_bytes)::numeric, 2) AS saved_bytes_per_row,
       (storagelab.heap_pages(t.tuples, (z.now).tuple_bytes, t.fillfactor, (z.now).size_varies)
        - storagelab.heap_pages(t.tuples, (z.changed).tuple_bytes, t.fillfactor, (z.changed).size_varies))
         * current_setting('block_size')::int8 AS estimated_saved_bytes,
       r.source AS confidence,
       pg_catalog.format_type(r.atttypid, r.atttypmod) AS current_type_full,
       round(((z.reordered).tuple_bytes - (z.changed_reordered).tuple_bytes)::numeric, 2)
         AS saved_bytes_per_row_reordered,
       pg_catalog.pg_size_pretty((storagelab.heap_pages(t.tuples, (z.now).tuple_bytes, t.fillfactor, (z.now).size_varies)
        - storagelab.heap_pages(t.tuples, (z.changed).tuple_bytes, t.fillfactor, (z.changed).size_varies))
         * current_setting('block_size')::int8) AS estimated_saved_pretty,
       round(r.null_frac::numeric, 4) AS null_frac,
       r.profiled_at
  FROM rule r
  JOIN sized z ON z.relid = r.relid AND z.attnum = r.attnum
  JOIN t ON t.relid = r.relid
 WHERE round(((z.now).tuple_bytes - (z.changed).tuple_bytes)::numeric, 2) > 0
    OR round(((z.reordered).tuple_bytes - (z.changed_reordered).tuple_bytes)::numeric, 2) > 0
UNION ALL
-- never analyzed: reported, not guessed
SELECT c.relid::pg_catalog.regclass, c.attname, c.atttypid::pg_catalog.regtype, NULL,
       'not analyzed: run ANALYZE or storagelab.column_profile()', NULL, NULL, NULL,
       pg_catalog.format_type(c.atttypid, c.atttypmod), NULL, NULL, NULL, NULL
  FROM cand c
  JOIN t ON t.relid = c.relid
 WHERE c.source IS NULL AND t.tuples IS DISTINCT FROM 0;
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
  -- column_profile_scan() checks existence, privilege, kind and row security
  DELETE FROM storagelab.column_profiles p WHERE p.relid = relation;
  RETURN QUERY
    WITH ins AS (
      INSERT INTO storagelab.column_profiles
      SELECT relation, s.attnum, a.attname, a.atttypid, a.atttypmod, now(),
             s.row_count, s.null_count, s.avg_width, s.min_value, s.max_value,
             s.all_integers, s.text_kind, s.trimmed_avg_width
        FROM storagelab.column_profile_scan(relation) s
        JOIN pg_attribute a ON a.attrelid = relation AND a.attnum = s.attnum
      RETURNING *
    )
    SELECT p.attname, format_type(p.atttypid, p.atttypmod), p.row_count,
           CASE WHEN p.row_count > 0 THEN p.null_count::float8 / p.row_count END,
           p.avg_width, p.min_value, p.max_value, p.all_integers, p.text_kind, p.trimmed_avg_width
      FROM ins p
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
GRANT SELECT, INSERT, DELETE ON storagelab.column_profiles TO pg_stat_scan_tables;
REVOKE EXECUTE ON FUNCTION storagelab.column_profile(regclass) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION storagelab.column_profile_scan(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storagelab.column_profile_scan(regclass) TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab.column_profile(regclass) TO pg_stat_scan_tables;

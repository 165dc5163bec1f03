-- storagelab install script, part 50: bytes lost to oversized column types
-- and to column order.
--
--   storagelab.column_waste        one row per column whose type is wider
--                                  than its data (from pg_stats, or exact
--                                  after storagelab.column_profile())
--   storagelab.alignment_padding   one row per table whose column order
--                                  wastes alignment padding
--   storagelab.column_profile(t)   one exact pass over t for all its columns;
--                                  results in storagelab_internal.column_profiles
--
-- The views read only catalogs, pg_statistic and
-- storagelab_internal.column_profiles (never a table); the row model is in
-- src/column_layout.c.  Everything but the two views and column_profile() is
-- in storagelab_internal.

-- Layout model (src/column_layout.c).
CREATE TYPE storagelab_internal.tuple_layout AS (
  tuple_bytes   float8,
  padding_bytes float8,
  size_varies   boolean
);
COMMENT ON TYPE storagelab_internal.tuple_layout IS
  'result of heap_tuple_bytes(): expected bytes per tuple on a page, the padding among them, whether tuple sizes vary';

CREATE FUNCTION storagelab_internal.heap_tuple_bytes(
  lens int2[], aligns "char"[], storages "char"[],
  widths float8[], null_fracs float8[], width_spreads float8[], sort_keys int4[],
  replace_index int4, replace_len int2, replace_align "char", replace_storage "char",
  replace_width float8, replace_key int4)
RETURNS storagelab_internal.tuple_layout
AS 'MODULE_PATHNAME', 'storagelab_heap_tuple_bytes'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4) IS
  'expected bytes a heap tuple takes on a page (MAXALIGN''d, without line pointer), how many of them are alignment padding, and whether tuple sizes vary, from per-column typlen, typalign, typstorage, average stored width, null fraction and width spread (standard deviation; -1 unknown), in attnum order or, with sort_keys, in key order leaving out negative keys; replace_index lays one column out with another type''s storage (replace_len, _align, _storage, _width, _key); NULL arrays give NULL';

CREATE FUNCTION storagelab_internal.heap_pages(tuples float8, tuple_bytes float8, fillfactor int4,
                                      size_varies boolean)
RETURNS int8
AS 'MODULE_PATHNAME', 'storagelab_heap_pages'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.heap_pages(float8, float8, int4, boolean) IS
  'pages a freshly written heap of that many tuples of tuple_bytes each (on average) takes: page header, line pointers, fillfactor reserve (NULL: 100), and for tuples of varying size half a tuple left free per page';

-- Results of column_profile(), kept by pg_dump.  The table and the column
-- type are held as regclass and regtype: the same 4-byte OIDs the catalog
-- walk (src/column_stats.c) compares, but pg_dump writes them as qualified
-- names, which a restore reads back as the new OIDs; so the rows stay with
-- their table (and follow a rename).  pg_upgrade keeps OIDs and accepts both
-- types.  The dump leaves out rows of tables gone or temporary (whose OID
-- would be written as a number, or name no table in the restored database).
CREATE TABLE storagelab_internal.column_profiles (
  relid             regclass NOT NULL,
  attnum            int2 NOT NULL,
  attname           name NOT NULL,
  atttypid          regtype NOT NULL,
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
SELECT pg_catalog.pg_extension_config_dump('storagelab_internal.column_profiles',
  'WHERE EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = relid AND c.relpersistence <> ''t'')');
COMMENT ON TABLE storagelab_internal.column_profiles IS
  'exact per-column facts written by storagelab.column_profile(); used by column_waste and alignment_padding instead of pg_stats while the column keeps its name and type; kept by pg_dump (table and type written by name, so a restore attaches them to the same table)';
COMMENT ON COLUMN storagelab_internal.column_profiles.relid IS 'the profiled table (follows a rename; written by name by pg_dump)';
COMMENT ON COLUMN storagelab_internal.column_profiles.attnum IS 'column number';
COMMENT ON COLUMN storagelab_internal.column_profiles.attname IS 'column name when profiled (a renamed column is profiled again)';
COMMENT ON COLUMN storagelab_internal.column_profiles.atttypid IS 'column type when profiled (a retyped column is profiled again)';
COMMENT ON COLUMN storagelab_internal.column_profiles.atttypmod IS 'column typmod when profiled';
COMMENT ON COLUMN storagelab_internal.column_profiles.profiled_at IS 'when the pass ran';
COMMENT ON COLUMN storagelab_internal.column_profiles.row_count IS 'rows the pass saw';
COMMENT ON COLUMN storagelab_internal.column_profiles.null_count IS 'NULLs in the column';
COMMENT ON COLUMN storagelab_internal.column_profiles.avg_width IS 'average stored width of non-NULL values in bytes (pg_column_size), variable-width types only';
COMMENT ON COLUMN storagelab_internal.column_profiles.min_value IS 'smallest value: integer and numeric columns, and text columns holding only integers';
COMMENT ON COLUMN storagelab_internal.column_profiles.max_value IS 'largest value, as min_value';
COMMENT ON COLUMN storagelab_internal.column_profiles.all_integers IS 'numeric columns: every value is an integer';
COMMENT ON COLUMN storagelab_internal.column_profiles.text_kind IS 'text, varchar and char(n) columns: uuid, integer, boolean, date, timestamp or timestamptz when every value is one; NULL otherwise';
COMMENT ON COLUMN storagelab_internal.column_profiles.width_stddev IS 'standard deviation of the stored width of non-NULL values, variable-width types only';
COMMENT ON COLUMN storagelab_internal.column_profiles.trimmed_avg_width IS 'char(n) columns: average stored width without the blank padding (as varchar), in bytes';

-- text_kind(value): the kind a text value is written as (src/column_profile.c);
-- column_profile() applies it to every value, the views to the values
-- ANALYZE sampled.
CREATE FUNCTION storagelab_internal.text_kind(value text)
RETURNS text
AS 'MODULE_PATHNAME', 'storagelab_text_kind'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.text_kind(text) IS
  'uuid, integer (no leading zeros, at most 20 bytes), boolean (t f true false y n yes no, any case), date (YYYY-MM-DD), timestamp (date, space or T, HH:MM[:SS[.ffffff]]) or timestamptz (the same with Z or +HH[[:]MM]) when the value is written as one; NULL otherwise';

-- column_profile_scan(relation): the pass itself (src/column_profile.c).
CREATE FUNCTION storagelab_internal.column_profile_scan(relation regclass,
  OUT attnum int2, OUT row_count int8, OUT null_count int8, OUT avg_width float8,
  OUT min_value numeric, OUT max_value numeric, OUT all_integers boolean,
  OUT text_kind text, OUT trimmed_avg_width float8, OUT width_stddev float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_column_profile_scan'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION storagelab_internal.column_profile_scan(regclass) IS
  'one MVCC pass over an ordinary table returning per live column: rows, NULLs, average stored width (variable width), bounds (integers, numerics, integer-holding text), whether a numeric holds only integers, the text kind shared by every value, char(n) width without padding; writes nothing (column_profile() stores the result)';

-- The catalog walk (src/column_stats.c): pg_class, pg_attribute,
-- pg_statistic and storagelab_internal.column_profiles read once each, in the order
-- of their (relid, ...) indexes, with pg_stats's visibility rule.  Four
-- outputs of the same walk: per column (column_facts), per table
-- (alignment_padding), per column a type rule applies to (column_waste),
-- per table the changes judged together (table_rewrite_plan).
CREATE FUNCTION storagelab_internal.column_statistics(
  OUT relid oid, OUT reltuples float8, OUT relpages int4, OUT fillfactor int4,
  OUT attnum int2, OUT attname name, OUT attisdropped boolean, OUT atttypid oid,
  OUT atttypmod int4, OUT attlen int2, OUT attalign "char", OUT attstorage "char",
  OUT attnotnull boolean, OUT order_key int4, OUT protected_because text, OUT source text,
  OUT profiled_at timestamptz, OUT profiled_rows int8, OUT null_frac float8,
  OUT avg_width float8, OUT profile_min numeric, OUT profile_max numeric,
  OUT profile_all_integers boolean, OUT profile_text_kind text,
  OUT profile_trimmed_avg_width float8, OUT sample_min numeric, OUT sample_max numeric,
  OUT sample_all_integers boolean, OUT sample_text_kind text,
  OUT sample_trimmed_avg_width float8, OUT width_spread float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_column_statistics'
LANGUAGE C STABLE ROWS 100000;
COMMENT ON FUNCTION storagelab_internal.column_statistics() IS
  'one row per column (dropped ones included) of every ordinary table outside the system, TOAST, temporary and storagelab schemas whose every live column the caller may SELECT (what pg_stats would show), in (relid, attnum) order: the columns of column_facts, with protected_because only for identity, generated and inherited columns; facts from a current column_profiles row, else from the table''s own pg_statistic row (null fraction, width, and from the sample the width spread, bounds, integrality, text kind, unpadded width); no facts under active row-level security; reads catalogs only';

CREATE FUNCTION storagelab_internal.table_layouts(
  OUT relid oid, OUT tuples float8, OUT missing_facts boolean, OUT all_exact boolean,
  OUT current_order name[], OUT suggested_order name[], OUT row_bytes float8,
  OUT padding_bytes float8, OUT suggested_row_bytes float8, OUT pages_now int8,
  OUT pages_after int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storagelab_table_layouts'
LANGUAGE C STABLE ROWS 10000;
COMMENT ON FUNCTION storagelab_internal.table_layouts() IS
  'one row per table column_statistics() lists that has a live column: rows to estimate for (reltuples, else the rows column_profile() saw; NULL unknown), whether a live column has no facts, whether all are exact, the live columns in current and suggested order, and, when every column has facts and the row count is known, the expected row bytes and padding now, row bytes in the suggested order, and the heap pages of both when freshly written';

-- How much evidence a narrowing needs (src/column_rules.c, thin_evidence()).
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('column_waste.min_rows', '1000',
   'fewest rows (profiled, else reltuples) and non-NULL values on which column_waste changes a type'),
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
  'one row per int4, int8, numeric, text, varchar or char(n) column (not dropped, identity, generated or inherited, and not one of the (skip_relids[i], skip_attnums[i]) pairs) of the tables column_statistics() lists that has no facts (rule NULL) or to which a column_waste rule applies (rule 1-13, see the view): the bounds the rule used, the suggested type and the reason in words, the bytes per row the change saves in the current order and in the suggested one, the heap pages it saves (NULL when the row count is unknown), and why the evidence is too thin for it (fewer than min_rows rows or non-NULL values; an integer-only numeric seen in ANALYZE''s sample only; integer ranges: a column named as an identifier, all values equal, fewer than min_distinct distinct values, or fewer than dense_below with gaps), NULL when it is enough';

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

-- Columns never narrowed because keys stay wide on purpose: primary keys,
-- both sides of foreign keys, sequence-fed columns, and the columns of
-- unique constraints and indexes (an alternate key the application assigns,
-- such as an order number, grows like any key); and the inputs of
-- generated columns, whose expressions a narrower type would change.
CREATE VIEW storagelab_internal.protected_columns AS
-- the sequences once, hashed (a lookup per default or dependency took most
-- of the view's time at 10,000 tables)
WITH seqs AS MATERIALIZED (
  SELECT s.oid FROM pg_catalog.pg_class s WHERE s.relkind = 'S'
)
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
  -- one pass over the defaults' dependencies: a default drawing from a
  -- sequence (serial, nextval(...)), and a column a generated column is
  -- computed from: narrowed, the expression would be computed in the
  -- narrower type (qty * price overflowing smallint when the rewrite copies
  -- the rows, or later on an INSERT)
  SELECT CASE WHEN s.oid IS NOT NULL THEN ad.adrelid ELSE d.refobjid END,
         CASE WHEN s.oid IS NOT NULL THEN ad.adnum ELSE d.refobjsubid::int2 END,
         CASE WHEN s.oid IS NOT NULL THEN 'sequence default' ELSE 'generated column input' END
    FROM pg_catalog.pg_attrdef ad
    JOIN pg_catalog.pg_depend d
      ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid = ad.oid
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
    LEFT JOIN seqs s ON s.oid = d.refobjid
   WHERE s.oid IS NOT NULL
      OR (d.refobjid = ad.adrelid AND d.refobjsubid > 0 AND d.refobjsubid <> ad.adnum)
  UNION ALL
  -- a sequence owned by the column
  SELECT d.refobjid, d.refobjsubid::int2, 'owns a sequence'
    FROM pg_catalog.pg_depend d
    JOIN seqs s ON s.oid = d.objid
   WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refobjsubid > 0 AND d.deptype IN ('a', 'i')
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

-- column_facts: one row per attribute (dropped ones included) of every
-- ordinary table the caller may read, with what the layout model and the
-- type rules need, from column_profiles when current, else pg_statistic.
-- Like pg_stats, it hides statistics of tables under active row security
-- and of columns the caller may not read (such tables are left out).
CREATE VIEW storagelab_internal.column_facts AS
SELECT a.relid, a.reltuples, a.relpages, a.fillfactor, a.attnum, a.attname, a.attisdropped,
       a.atttypid, a.atttypmod, a.attlen, a.attalign, a.attstorage, a.attnotnull, a.order_key,
       CASE WHEN a.attisdropped THEN NULL
            ELSE coalesce(a.protected_because, p.why) END AS protected_because,
       a.source, a.profiled_at, a.profiled_rows, a.null_frac, a.avg_width,
       a.profile_min, a.profile_max, a.profile_all_integers, a.profile_text_kind,
       a.profile_trimmed_avg_width, a.sample_min, a.sample_max, a.sample_all_integers,
       a.sample_text_kind, a.sample_trimmed_avg_width, a.width_spread
  FROM storagelab_internal.column_statistics() a
  LEFT JOIN storagelab_internal.protected_columns p ON p.relid = a.relid AND p.attnum = a.attnum;
COMMENT ON VIEW storagelab_internal.column_facts IS
  'per column of every ordinary table whose every live column the caller may SELECT (what pg_stats would show of it): layout facts (typlen, typalign, typstorage, NOT NULL, null fraction, average width) and the data facts the type rules use, from storagelab_internal.column_profiles when current, else pg_statistic (none under active row-level security); why a column is protected from narrowing';
COMMENT ON COLUMN storagelab_internal.column_facts.relid IS 'table OID';
COMMENT ON COLUMN storagelab_internal.column_facts.reltuples IS 'pg_class.reltuples (-1: never vacuumed or analyzed)';
COMMENT ON COLUMN storagelab_internal.column_facts.relpages IS 'pg_class.relpages';
COMMENT ON COLUMN storagelab_internal.column_facts.fillfactor IS 'fillfactor storage parameter (NULL: default 100)';
COMMENT ON COLUMN storagelab_internal.column_facts.attnum IS 'column number';
COMMENT ON COLUMN storagelab_internal.column_facts.attname IS 'column name';
COMMENT ON COLUMN storagelab_internal.column_facts.attisdropped IS 'dropped column (stored as NULL once the table is rewritten)';
COMMENT ON COLUMN storagelab_internal.column_facts.atttypid IS 'column type';
COMMENT ON COLUMN storagelab_internal.column_facts.atttypmod IS 'column typmod';
COMMENT ON COLUMN storagelab_internal.column_facts.attlen IS 'typlen (-1: varlena)';
COMMENT ON COLUMN storagelab_internal.column_facts.attalign IS 'typalign';
COMMENT ON COLUMN storagelab_internal.column_facts.attstorage IS 'storage strategy (p: never a 1-byte varlena header)';
COMMENT ON COLUMN storagelab_internal.column_facts.attnotnull IS 'NOT NULL constraint';
COMMENT ON COLUMN storagelab_internal.column_facts.order_key IS 'sort key of the suggested column order (alignment class, NOT NULL first, position)';
COMMENT ON COLUMN storagelab_internal.column_facts.protected_because IS 'why no narrower type is ever suggested: primary key, foreign key, referenced by a foreign key, identity, sequence default, owns a sequence, generated, inherited; NULL when not protected';
COMMENT ON COLUMN storagelab_internal.column_facts.source IS 'exact (column_profile) or statistics (pg_statistic); NULL: no facts (never analyzed)';
COMMENT ON COLUMN storagelab_internal.column_facts.profiled_at IS 'when column_profile() saw the column; NULL when the facts come from statistics';
COMMENT ON COLUMN storagelab_internal.column_facts.profiled_rows IS 'rows column_profile() saw';
COMMENT ON COLUMN storagelab_internal.column_facts.null_frac IS 'fraction of rows where the column is NULL (dropped columns: 1)';
COMMENT ON COLUMN storagelab_internal.column_facts.avg_width IS 'stored bytes of a non-NULL value: typlen, or the average varlena size with its header';
COMMENT ON COLUMN storagelab_internal.column_facts.profile_min IS 'exact smallest value (integer, numeric, integer-holding text)';
COMMENT ON COLUMN storagelab_internal.column_facts.profile_max IS 'exact largest value';
COMMENT ON COLUMN storagelab_internal.column_facts.profile_all_integers IS 'numeric: every value is an integer (exact)';
COMMENT ON COLUMN storagelab_internal.column_facts.profile_text_kind IS 'text kind shared by every value (exact)';
COMMENT ON COLUMN storagelab_internal.column_facts.profile_trimmed_avg_width IS 'char(n): average width without blank padding (exact)';
COMMENT ON COLUMN storagelab_internal.column_facts.sample_min IS 'smallest value in the pg_statistic sample (integer, numeric, integer-holding text)';
COMMENT ON COLUMN storagelab_internal.column_facts.sample_max IS 'largest value in the sample';
COMMENT ON COLUMN storagelab_internal.column_facts.sample_all_integers IS 'numeric: every sampled value is an integer';
COMMENT ON COLUMN storagelab_internal.column_facts.sample_text_kind IS 'text kind shared by every sampled value';
COMMENT ON COLUMN storagelab_internal.column_facts.sample_trimmed_avg_width IS 'char(n): average width without blank padding in the sample';
COMMENT ON COLUMN storagelab_internal.column_facts.width_spread IS 'standard deviation of the stored width (0: fixed; -1: unknown, the layout model then takes the offset after the column as uniformly distributed)';

-- alignment_padding: tables whose column order wastes space.  "Now" is the
-- table rewritten in its current order (dropped columns stored as NULL, as
-- VACUUM FULL and new inserts do); "after" is a new table with the live
-- columns in the suggested order and the same rows.  One catalog walk
-- (table_layouts(), in C: one row per table, layouts computed there) and
-- one scan of its result: no join, no sort, so the cost grows linearly with
-- the number of columns.
CREATE VIEW storagelab.alignment_padding AS
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
COMMENT ON VIEW storagelab.alignment_padding IS
  'one row per table whose column order wastes alignment padding: the pg_relation_size difference a rebuild in the suggested order would give (fixed width by alignment descending, then variable width; NOT NULL first), row bytes now and after; from catalogs and statistics only';
COMMENT ON COLUMN storagelab.alignment_padding.relation IS 'the table';
COMMENT ON COLUMN storagelab.alignment_padding.saved_bytes IS 'pg_relation_size now (as if freshly written) minus after a rebuild in the suggested order: whole pages, with fillfactor, line pointers and page header';
COMMENT ON COLUMN storagelab.alignment_padding.saved_pretty IS 'saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.alignment_padding.saved_bytes_per_row IS 'row_bytes minus suggested_row_bytes';
COMMENT ON COLUMN storagelab.alignment_padding.advice IS 'rebuild in suggested_order (statements without a column list see the new order), or run ANALYZE first';
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

-- column_waste: columns whose type is wider than their data.  The rules
-- (the first that applies, numbered as below) and the sizes, with the
-- candidate's type substituted in the table's layout, and the words, are
-- computed per table in C (column_candidates(): one catalog walk, no join,
-- no sort), which is handed the protected columns (keys stay wide).
--   1  int8/int4 fitting smallint    6  text of integers fitting smallint
--   2  int8 fitting integer          7  ... fitting integer
--   3  integral numeric -> integer   8  ... fitting bigint
--   4  integral numeric -> bigint    9  boolean   10 date
--   5  text of UUIDs -> uuid         11 timestamp 12 timestamptz
--   13 char(n) with blank padding -> varchar(n)
CREATE VIEW storagelab.column_waste AS
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
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, unique, foreign-key, identity, sequence-fed, generated or inherited columns nor the inputs of generated columns; on thin evidence (too few rows or non-NULL values, an integer-only numeric seen in ANALYZE''s sample only, a column named as an identifier, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
COMMENT ON COLUMN storagelab.column_waste.relation IS 'the table';
COMMENT ON COLUMN storagelab.column_waste.column_name IS 'the column';
COMMENT ON COLUMN storagelab.column_waste.column_type IS 'its type with typmod, as format_type() prints it';
COMMENT ON COLUMN storagelab.column_waste.suggested_type IS 'the narrower type the data fits; NULL when the table was never analyzed or the evidence is too thin (advice says what is missing)';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes IS 'pg_relation_size difference after ALTER COLUMN ... TYPE suggested_type, in whole pages (fillfactor, line pointers, page header), for the current row count';
COMMENT ON COLUMN storagelab.column_waste.saved_pretty IS 'saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.column_waste.advice IS 'what in the data allows the change (its bounds are min_value and max_value), what evidence is missing (settings column_waste.min_rows, min_distinct, dense_below), or what to run first';
COMMENT ON COLUMN storagelab.column_waste.evidence IS 'exact (from column_profile()) or statistics (from the pg_stats sample: bounds and values seen by ANALYZE); NULL when never analyzed';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row IS 'bytes per row saved by ALTER COLUMN ... TYPE alone (the column keeps its position; alignment and NULLs counted)';
COMMENT ON COLUMN storagelab.column_waste.saved_bytes_per_row_reordered IS 'bytes per row saved by the change when the table is also laid out in the order alignment_padding suggests';
COMMENT ON COLUMN storagelab.column_waste.min_value IS 'smallest value the rule used (integer rules)';
COMMENT ON COLUMN storagelab.column_waste.max_value IS 'largest value the rule used (integer rules)';
COMMENT ON COLUMN storagelab.column_waste.null_frac IS 'fraction of NULLs in the column';
COMMENT ON COLUMN storagelab.column_waste.profiled_at IS 'when column_profile() saw the data (evidence exact)';

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

-- column_profile(relation): one pass over the table computing, for every
-- column at once, what column_waste needs; the results replace the table's
-- rows in storagelab_internal.column_profiles.
CREATE FUNCTION storagelab.column_profile(relation regclass)
RETURNS TABLE (column_name name, column_type text, row_count int8, null_frac float8,
               avg_width float8, min_value numeric, max_value numeric,
               all_integers boolean, text_kind text, trimmed_avg_width float8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e_detail text; e_hint text;
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
EXCEPTION WHEN OTHERS THEN   -- raised again from here: the CONTEXT does not show the query
  GET STACKED DIAGNOSTICS e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
  PERFORM storagelab_internal.reraise(SQLSTATE, SQLERRM, e_detail, e_hint);
END
$fn$;
COMMENT ON FUNCTION storagelab.column_profile(regclass) IS
  'one exact pass over an ordinary table for all its columns (NULLs, widths, bounds, integer-only numerics, text kinds, char(n) padding); stores the results, which column_waste and alignment_padding then use (evidence exact), and returns them; needs pg_stat_scan_tables and SELECT on the table; NULL argument: no rows';

-- Access: the views filter by the caller's privileges themselves, running
-- the walk as their caller.
GRANT SELECT ON storagelab.column_waste, storagelab.alignment_padding,
                storagelab.table_rewrite_plan TO PUBLIC;
GRANT EXECUTE ON FUNCTION storagelab_internal.table_layouts(),
                          storagelab_internal.column_candidates(oid[], int2[], float8, float8, float8),
                          storagelab_internal.table_rewrite_plans(oid[], int2[], float8, float8, float8)
                          TO PUBLIC;
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
-- A trigger keeps a member to the tables it may read: it cannot plant a
-- profile of another table (which would steer that table's advice) or
-- delete one; profiles of dropped tables may go.  Not row-level security:
-- pg_dump of a table with row security enabled fails for a role without
-- BYPASSRLS (a backup role in pg_read_all_data), and the table is dumped.
-- The views read the table in C (src/column_stats.c), as its owner.
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

-- The trigger: a row written names a table the role may read (else 42501);
-- a row deleted names one, or a dropped table (else it is left, as a row
-- security policy would leave it).  Runs as the role writing.
CREATE FUNCTION storagelab_internal.column_profiles_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF storagelab_internal.may_read_columns(OLD.relid)
       OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = OLD.relid) THEN
      RETURN OLD;
    END IF;
    RETURN NULL;
  END IF;
  IF NOT coalesce(storagelab_internal.may_read_columns(NEW.relid), false) THEN
    RAISE EXCEPTION 'cannot store a profile of table %', NEW.relid
      USING ERRCODE = 'insufficient_privilege',
            DETAIL = 'The role may not SELECT every column of that table.',
            HINT = 'Profile it with storagelab.column_profile() as a role that may read all its columns.';
  END IF;
  RETURN NEW;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.column_profiles_guard() IS
  'trigger of storagelab_internal.column_profiles: a role writes or deletes profiles only of tables whose every column it may SELECT (deletes of dropped tables'' profiles allowed)';
CREATE TRIGGER column_profiles_guard BEFORE INSERT OR UPDATE OR DELETE
  ON storagelab_internal.column_profiles
  FOR EACH ROW EXECUTE FUNCTION storagelab_internal.column_profiles_guard();
GRANT EXECUTE ON FUNCTION storagelab_internal.column_profile_scan(regclass),
                          storagelab.column_profile(regclass) TO PUBLIC;
-- The internal views are read by the public ones only (as their owner).
REVOKE ALL ON storagelab_internal.column_facts, storagelab_internal.protected_columns FROM PUBLIC;

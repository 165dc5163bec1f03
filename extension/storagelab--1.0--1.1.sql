-- storagelab upgrade 1.0 -> 1.1.  Each change to the install script
-- (extension/[0-9]*.sql) since 1.0 appears here too; scripts/upgrade-test.sh
-- proves that 1.0 + this script equals a fresh install of 1.1.

\echo Use "ALTER EXTENSION storagelab UPDATE TO '1.1'" to load this file. \quit

CREATE SCHEMA storagelab_internal;
COMMENT ON SCHEMA storagelab_internal IS
  'storagelab internals: helpers behind the public views and functions, no stable API';

-- column_waste: no narrowing on thin evidence (settings column_waste.min_rows,
-- min_distinct, dense_below); column_candidates() moves to
-- storagelab_internal with the thresholds as arguments; new view
-- table_rewrite_plan (changes judged together per table, with the order).
-- How much evidence a narrowing needs (src/column_rules.c, thin_evidence()).
INSERT INTO storagelab.setting_defaults VALUES
  ('column_waste.min_rows', '1000',
   'fewest rows (exact: profiled; else pg_class.reltuples) on which column_waste and table_rewrite_plan suggest a type change'),
  ('column_waste.min_distinct', '3',
   'fewest distinct values (pg_statistic) on which an integer column is narrowed: one value is a constant, two may be one flag of a bitmask'),
  ('column_waste.dense_below', '100',
   'an integer column with fewer distinct values than this is narrowed only when they fill their range without gaps (0, 1, 2), not when they look like codes or bit flags');

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
       c.atttypid::pg_catalog.regtype AS current_type,
       CASE WHEN c.thin_evidence IS NULL THEN c.suggested_type END AS suggested_type,
       CASE WHEN c.rule IS NULL
            -- never analyzed: reported, not guessed
            THEN 'not analyzed: run ANALYZE or storagelab.column_profile()'
            ELSE coalesce(c.thin_evidence, c.reason) END AS reason,
       CASE WHEN c.thin_evidence IS NULL
            THEN round(c.saved_bytes_per_row::numeric, 2) END AS saved_bytes_per_row,
       CASE WHEN c.thin_evidence IS NULL
            THEN c.saved_pages * current_setting('block_size')::int8 END AS estimated_saved_bytes,
       c.source AS confidence,
       pg_catalog.format_type(c.atttypid, c.atttypmod) AS current_type_full,
       CASE WHEN c.thin_evidence IS NULL
            THEN round(c.saved_bytes_per_row_reordered::numeric, 2) END
         AS saved_bytes_per_row_reordered,
       CASE WHEN c.thin_evidence IS NULL
            THEN pg_catalog.pg_size_pretty(c.saved_pages * current_setting('block_size')::int8) END
         AS estimated_saved_pretty,
       round(c.null_frac::numeric, 4) AS null_frac,
       c.profiled_at
  FROM (SELECT pg_catalog.array_agg(relid) AS relids, pg_catalog.array_agg(attnum) AS attnums
          FROM storagelab.protected_columns) p
 CROSS JOIN LATERAL storagelab_internal.column_candidates(p.relids, p.attnums,
         storagelab.setting('column_waste.min_rows')::float8,
         storagelab.setting('column_waste.min_distinct')::float8,
         storagelab.setting('column_waste.dense_below')::float8) c
 -- a rule with a saving (on thin evidence: the row says so, without numbers),
 -- or no facts at all (then every number is NULL)
 WHERE CASE WHEN c.rule IS NOT NULL
            THEN round(c.saved_bytes_per_row::numeric, 2) > 0
                 OR round(c.saved_bytes_per_row_reordered::numeric, 2) > 0
            ELSE c.source IS NULL AND c.tuples IS DISTINCT FROM 0 END;
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; on thin evidence (too few rows, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
COMMENT ON COLUMN storagelab.column_waste.suggested_type IS 'the narrower type the data fits; NULL when the table was never analyzed or the evidence is too thin (reason says what is missing)';
COMMENT ON COLUMN storagelab.column_waste.reason IS 'what in the data allows it, or what evidence is missing (settings column_waste.min_rows, min_distinct, dense_below)';
COMMENT ON VIEW storagelab.column_waste IS
  'one row per column whose type is wider than its data (integers with headroom in a narrower integer, integer-only numeric, text holding only UUIDs, integers, booleans, dates or timestamps, blank-padded char(n)), with the bytes a change would save; never for key, foreign-key, identity, sequence-fed, generated or inherited columns; on thin evidence (too few rows, all values equal, few distinct values or values with gaps) the row names what is missing instead of a type; from pg_stats, or exact after storagelab.column_profile()';
DROP FUNCTION storagelab.column_candidates(oid[], int2[]);

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
          FROM storagelab.protected_columns) k
 CROSS JOIN LATERAL storagelab_internal.table_rewrite_plans(k.relids, k.attnums,
         storagelab.setting('column_waste.min_rows')::float8,
         storagelab.setting('column_waste.min_distinct')::float8,
         storagelab.setting('column_waste.dense_below')::float8) p
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

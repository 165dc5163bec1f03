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

-- findings and report(): every problem in one typed view, and a text report
-- (all new objects).
INSERT INTO storagelab.setting_defaults VALUES
  ('findings.min_saved_size', '1MB',
   'findings: column_width and alignment findings saving less than this (pg_size_bytes) are not listed'),
  ('findings.saved_warning_size', '1GB',
   'findings: column_width and alignment findings are warnings from this saving on, info below'),
  ('findings.visibility_min_size', '8MB',
   'findings: a table is a visibility finding when at least this much of it is not all-visible'),
  ('findings.all_visible_warning_pct', '50',
   'findings: ... and fewer than this percentage of its pages are all-visible'),
  ('findings.freeze_critical_pct', '80',
   'findings: critical when age(relfrozenxid) reaches this percentage of autovacuum_freeze_max_age'),
  ('findings.toast_min_size', '1MB',
   'findings: bytea columns are sampled only in tables whose TOAST table is at least this large'),
  ('findings.toast_max_columns', '20',
   'findings: at most this many bytea columns are sampled per query (largest TOAST tables first)'),
  ('findings.toast_sample_rows', '200',
   'findings: rows sampled per bytea column (toast_census sample_rows)');

-- int_overflow: the view's warning and critical rows.
CREATE VIEW storagelab_internal.findings_int_overflow AS
SELECT 'int_overflow'::text AS category, o.risk AS severity, o.relation, o.column_name,
       'used_pct'::text AS metric, round(o.used_pct, 1) AS value, 'percent'::text AS unit,
       'integer column is running out of values: migrate it to bigint'::text AS message,
       NULL::int8 AS estimated_saved_bytes, o.overflow_at,
       pg_catalog.format('SELECT storagelab.bigint_migration_script(%L, %L, ''online'');',
                         pg_catalog.format('%I.%I', n.nspname, c.relname), o.column_name) AS fix,
       CASE WHEN o.is_estimate THEN 'statistics' ELSE 'exact' END AS evidence,
       NULL::int8 AS sample_rows
  FROM storagelab.int_overflow o
  JOIN pg_catalog.pg_class c ON c.oid = o.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE o.risk IN ('warning', 'critical');
COMMENT ON VIEW storagelab_internal.findings_int_overflow IS
  'storagelab.findings rows of category int_overflow';

-- The two sources behind pg_stat_scan_tables, called through PL/pgSQL so
-- that a caller without it gets no rows instead of an error (a function in
-- a view is checked for EXECUTE when the query starts, called or not).
CREATE FUNCTION storagelab_internal.findings_visibility_map(relation regclass,
  OUT pages int8, OUT all_visible_pages int8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF has_function_privilege('storagelab.visibility_map_count(regclass)', 'EXECUTE') THEN
    SELECT v.pages, v.all_visible_pages INTO pages, all_visible_pages
      FROM storagelab.visibility_map_count(relation) v;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_visibility_map(regclass) IS
  'visibility_map_count() for storagelab.findings: NULLs when the caller may not run it or the table is locked';

CREATE FUNCTION storagelab_internal.findings_toast_sample(relation regclass, column_name name,
  sample_rows integer, OUT rows_scanned int8, OUT sampled boolean, OUT large_values int8,
  OUT large_incompressible int8)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- a table locked by another session is skipped, not waited for
  IF has_function_privilege('storagelab.toast_census(regclass, name, integer)', 'EXECUTE')
     AND storagelab.toast_lock_nowait(relation) = 'ok' THEN
    SELECT c.rows_scanned, c.sampled, c.large_values, c.large_incompressible
      INTO rows_scanned, sampled, large_values, large_incompressible
      FROM storagelab.toast_census(relation, column_name, sample_rows) c;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_toast_sample(regclass, name, integer) IS
  'toast_census() counts for storagelab.findings: NULLs when the caller may not run it or the table is locked';

-- visibility: the visibility map of the tables whose statistics show pages
-- that are not all-visible (or that were loaded and never analyzed), and
-- the freeze age of every table.
CREATE VIEW storagelab_internal.findings_visibility AS
WITH cfg AS (
  SELECT pg_catalog.pg_size_bytes(storagelab.setting('findings.visibility_min_size'))
           / current_setting('block_size')::int8 AS min_pages,
         storagelab.setting('findings.all_visible_warning_pct')::numeric AS warning_pct,
         current_setting('autovacuum_freeze_max_age')::int8
           * storagelab.setting('findings.freeze_critical_pct')::numeric / 100 AS freeze_age
), t AS (
  SELECT c.oid, pg_catalog.format('%I.%I', n.nspname, c.relname) AS name,
         CASE WHEN c.relfrozenxid <> '0' THEN pg_catalog.age(c.relfrozenxid) END AS xid_age,
         cfg.*
    FROM cfg, pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
     AND c.relam = (SELECT a.oid FROM pg_catalog.pg_am a WHERE a.amname = 'heap')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
     -- the visibility map is read by a function for pg_stat_scan_tables
     AND pg_catalog.has_function_privilege('storagelab.visibility_map_count(regclass)', 'EXECUTE')
     AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
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
WITH cfg AS (
  SELECT pg_catalog.pg_size_bytes(storagelab.setting('findings.toast_min_size')) AS min_bytes,
         storagelab.setting('findings.toast_max_columns')::int AS max_columns,
         storagelab.setting('findings.toast_sample_rows')::int AS sample_rows
), col AS (
  SELECT c.oid, a.attname, pg_catalog.format('%I.%I', n.nspname, c.relname) AS name, cfg.sample_rows
    FROM cfg, pg_catalog.pg_attribute a
    JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE a.atttypid = 'pg_catalog.bytea'::pg_catalog.regtype AND a.attnum > 0
     AND NOT a.attisdropped AND a.attstorage IN ('x', 'm')
     AND c.relkind = 'r' AND c.reltoastrelid <> 0 AND c.relpersistence <> 't'
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
     AND pg_catalog.has_function_privilege('storagelab.toast_census(regclass, name, integer)', 'EXECUTE')
     AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
     AND pg_catalog.pg_relation_size(c.reltoastrelid) >= cfg.min_bytes
   ORDER BY pg_catalog.pg_relation_size(c.reltoastrelid) DESC
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
                 >= pg_catalog.pg_size_bytes(storagelab.setting('findings.saved_warning_size'))
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
 WHERE p.estimated_saved_bytes >= pg_catalog.pg_size_bytes(storagelab.setting('findings.min_saved_size'));
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

-- int_overflow: the growth is fitted by snapshot() into
-- storagelab_internal.int_overflow_growth, which the view joins, instead of
-- being fitted over the history at every query; fitted here from the
-- history a 1.0 database recorded.
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

-- Refit every column's growth from the history in the window.  Runs as its
-- caller (the snapshot function's): whoever may record snapshots may
-- replace these rows.
CREATE FUNCTION storagelab_internal.int_overflow_growth_refit()
RETURNS integer
LANGUAGE plpgsql VOLATILE
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
   WHERE h.taken_at >= now() - storagelab.setting('int_overflow.growth_window')::interval
   GROUP BY h.schema_name, h.table_name, h.column_name
  -- two snapshots at least, at two different times
  HAVING count(*) >= 2 AND regr_slope(h.value::float8, date_part('epoch', h.taken_at)) IS NOT NULL;
  GET DIAGNOSTICS fitted = ROW_COUNT;
  RETURN fitted;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.int_overflow_growth_refit() IS
  'replaces storagelab_internal.int_overflow_growth with the least-squares growth of every column over int_overflow.growth_window of the history; returns the number of columns fitted';

-- snapshot() runs as its caller: whoever records snapshots (pg_monitor
-- members among them) replaces the fitted rows.
GRANT USAGE ON SCHEMA storagelab_internal TO pg_monitor;
GRANT INSERT, DELETE ON storagelab_internal.int_overflow_growth TO pg_monitor;

CREATE OR REPLACE VIEW storagelab.int_overflow AS
WITH
cfg AS (
  SELECT storagelab.setting('int_overflow.warning_pct')::numeric AS warning_pct,
         storagelab.setting('int_overflow.critical_pct')::numeric AS critical_pct,
         storagelab.setting('int_overflow.warning_within')::interval AS warning_within,
         storagelab.setting('int_overflow.critical_within')::interval AS critical_within
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
       m.atttypid::pg_catalog.regtype AS column_type,
       m.source,
       m.seqid::pg_catalog.regclass AS sequence,
       m.cur AS current_value,
       m.lim AS limit_value,
       m.used AS used_pct,
       m.left_ AS values_left,
       CASE WHEN m.cur IS NULL THEN NULL
            WHEN m.cycles THEN 'ok'
            WHEN m.used >= cfg.critical_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.critical_within THEN 'critical'
            WHEN m.used >= cfg.warning_pct
              OR p.overflow_at_ <= pg_catalog.now() + cfg.warning_within THEN 'warning'
            ELSE 'ok' END AS risk,
       m.referencing_columns,
       p.overflow_at_ AS overflow_at,
       m.min_value,
       m.max_value,
       m.seq_increment AS increment,
       coalesce(m.cycles, false) AS cycling,
       (m.cur IS NOT NULL AND NOT m.exact) AS is_estimate,
       round((g.per_second * 86400)::numeric, 3) AS growth_per_day,
       CASE WHEN m.cur IS NOT NULL AND m.cycles THEN 'cycles' ELSE m.status END AS status
  FROM cfg
 CROSS JOIN storagelab.int_overflow_measurements() m
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

CREATE OR REPLACE FUNCTION storagelab.snapshot()
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
  -- The view's rows without its projection: current_value is cur, and
  -- is_estimate is NOT exact where cur is known.
  SELECT now(), m.nspname, m.relname, m.attname, sn.nspname, sc.relname,
         m.cur, NOT m.exact
    FROM storagelab.int_overflow_measurements() m
    LEFT JOIN pg_class sc ON sc.oid = m.seqid
    LEFT JOIN pg_namespace sn ON sn.oid = sc.relnamespace
   WHERE m.cur IS NOT NULL
  ON CONFLICT (schema_name, table_name, column_name, taken_at)
  DO UPDATE SET value = excluded.value, is_estimate = excluded.is_estimate,
                sequence_schema = excluded.sequence_schema,
                sequence_name = excluded.sequence_name;
  GET DIAGNOSTICS recorded = ROW_COUNT;

  DELETE FROM storagelab.int_overflow_history
   WHERE taken_at < now() - storagelab.setting('int_overflow.history_retention')::interval;

  -- the view reads the growth fitted here, not the history
  PERFORM storagelab_internal.int_overflow_growth_refit();

  RETURN recorded;
END
$$;
SELECT storagelab_internal.int_overflow_growth_refit();

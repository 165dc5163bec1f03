-- storagelab install script, part 80: every problem the other parts find,
-- one typed row each, ranked, with the SQL that fixes it.
--
--   storagelab.findings    one row per finding: int_overflow, visibility,
--                          toast, column_width, alignment
--   storagelab.report()    the findings as text for psql (100 columns)
--
-- Cheap sources only: catalogs, statistics, the visibility map (tables
-- whose statistics say they have pages that are not all-visible), and
-- sampled TOAST (at most findings.toast_max_columns bytea columns, the
-- largest TOAST tables first, findings.toast_sample_rows rows each).  No
-- source reads a whole table.  Sources behind pg_stat_scan_tables (the
-- visibility map, TOAST samples) are left out for callers without it.

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

-- The fix of an int_overflow finding on relation.column_name: the first
-- bigint_migration_script() call whose generator accepts the column's
-- component, asked through the generators' own pre-flight
-- (bigint_migration_refusal(), part 27): function_hazards 'refuse' (the
-- default), then 'widen', then 'accept', each in mode 'online' and then
-- 'blocking'.  'accept' only when no view calls a function that fails at
-- once (its script could not re-create the view).  note: what the message
-- adds, naming the functions widened or left to change by hand, the
-- functions that fail past 2^31, why online was refused; or, with no fix,
-- what blocks every script and what to do.
CREATE FUNCTION storagelab_internal.findings_bigint_fix(relation regclass, column_name name,
                                                        OUT fix text, OUT note text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
-- the model's and the checks' many catalog queries: JIT compiling them costs more than it saves
SET jit = off
AS $fn$
DECLARE
  objs    storagelab.bigint_migration_object[];
  fh      text;
  md      text;
  r       record;
  online  record;
  later   text;
  unread  text;
BEGIN
  BEGIN
    objs := storagelab_internal.bigint_migration_model(ARRAY[relation], ARRAY[column_name]);
  EXCEPTION WHEN OTHERS THEN
    IF SQLSTATE ~ '^(40|53|57|58)' OR SQLSTATE = '55P03' THEN RAISE; END IF;  -- passing: not an answer
    GET STACKED DIAGNOSTICS md = MESSAGE_TEXT, fh = PG_EXCEPTION_HINT;
    note := format('; no script converts it: %s. %s', rtrim(md, '.'), fh);
    RETURN;
  END;
  FOREACH fh IN ARRAY ARRAY['refuse', 'widen', 'accept'] LOOP
    CONTINUE WHEN fh = 'accept' AND EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind = 'function_hazard'
                                              AND x.hazard_fails = 'immediately'
                                              AND x.hazard_caller ~ '^(view|materialized view) ');
    FOREACH md IN ARRAY ARRAY['online', 'blocking'] LOOP
      r := storagelab_internal.bigint_migration_refusal(objs, md, fh);
      IF md = 'online' THEN online := r; END IF;
      IF r.code IS NULL THEN
        fix := format('SELECT storagelab.bigint_migration_script(%L, %L, %L%s);',
                      storagelab_internal.sql_qname(relation), column_name, md,
                      CASE WHEN fh <> 'refuse' THEN format(', function_hazards => %L', fh) ELSE '' END);
        SELECT string_agg(DISTINCT x.objid::regprocedure::text, ', ')
                 FILTER (WHERE x.hazard_fails NOT IN ('immediately', 'unknown')),
               string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.hazard_fails = 'unknown')
          INTO later, unread FROM unnest(objs) x WHERE x.kind = 'function_hazard';
        note := coalesce((SELECT CASE fh WHEN 'widen' THEN '; the script widens ' ELSE '; change by hand, they break: ' END
                                 || string_agg(DISTINCT x.objid::regprocedure::text, ', ')
                            FROM unnest(objs) x WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately'), '')
                || coalesce('; review, they keep integer values: ' || later, '')
                || coalesce('; check by hand, their dynamic SQL may break: ' || unread, '')
                || CASE WHEN md = 'blocking' THEN format('; online refuses: %s', online.message) ELSE '' END;
        RETURN;
      END IF;
    END LOOP;
  END LOOP;
  -- no script: what blocks the blocking one (else the online one), and what to do
  note := format('; no script converts it: %s. %s', rtrim(coalesce(nullif(r.detail, ''), r.message), '.'), r.hint);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_bigint_fix(regclass, name) IS
  'the fix of an int_overflow finding: the first bigint_migration_script() call (function_hazards refuse, widen, accept; mode online, blocking) the generator''s pre-flight accepts, and what the message adds (functions widened or to change, why online was refused, or what blocks every script); fix NULL when none';

-- int_overflow: the view's warning and critical rows; the message says
-- when no sequence feeds the column (the application writes the values),
-- and when a value is the type's bound itself (often a sentinel such as
-- 2147483647 for "unknown", not growth).  One finding per problem: a
-- column that references a key with a finding, holds no sequence of its own
-- and is not narrower than the key folds into the key's finding (the key's
-- fix converts it); that finding's evidence counts and lists the columns
-- that reference the key.
CREATE VIEW storagelab_internal.findings_int_overflow AS
WITH f AS MATERIALIZED (
  SELECT o.*, pg_catalog.format('%I.%I.%I', n.nspname, c.relname, o.column_name) AS qcol
    FROM storagelab.int_overflow o
    JOIN pg_catalog.pg_class c ON c.oid = o.relation
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE o.severity IN ('warning', 'critical')
), k AS (
  -- keys: findings with a sequence of their own, or that reference no other finding
  SELECT f.* FROM f
   WHERE f.source IN ('sequence', 'identity')
      OR NOT EXISTS (SELECT 1 FROM f o WHERE f.qcol = ANY (o.referencing_columns))
), kept AS (
  SELECT f.* FROM f
   WHERE f.source IN ('sequence', 'identity')
      OR NOT EXISTS (SELECT 1 FROM k WHERE f.qcol = ANY (k.referencing_columns) AND f.limit_value >= k.limit_value)
)
SELECT 'int_overflow'::text AS category, o.severity, o.relation, o.column_name,
       'used_pct'::text AS metric, round(o.used_pct, 1) AS value, 'percent'::text AS unit,
       CASE WHEN o.source IN ('sequence', 'identity', 'foreign key') THEN 'integer column is running out of values: migrate it to bigint'
            -- no sequence: values the application writes; one at the type's bound itself is often a sentinel
            WHEN o.values_left = 0 THEN 'integer column holds its type''s limit itself (a sentinel?): check its writers, then migrate'
            ELSE 'integer column holds values near its limit, no sequence behind them: migrate it to bigint' END
         || coalesce(x.note, '') AS message,
       NULL::int8 AS estimated_saved_bytes, o.overflow_at,
       x.fix,
       CASE WHEN pg_catalog.cardinality(o.referencing_columns) > 0
            THEN pg_catalog.format('%s; %s referencing column%s: %s', coalesce(o.evidence, 'unknown'),
                                   pg_catalog.cardinality(o.referencing_columns),
                                   CASE WHEN pg_catalog.cardinality(o.referencing_columns) > 1 THEN 's' ELSE '' END,
                                   pg_catalog.array_to_string(o.referencing_columns, ', '))
            ELSE o.evidence END AS evidence,
       NULL::int8 AS sample_rows
  FROM kept o
 CROSS JOIN LATERAL storagelab_internal.findings_bigint_fix(o.relation, o.column_name) x;
COMMENT ON VIEW storagelab_internal.findings_int_overflow IS
  'storagelab.findings rows of category int_overflow: one per key (the columns referencing it folded in, listed in evidence), with the fix its generator accepts';

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
COMMENT ON VIEW storagelab_internal.findings_visibility IS
  'storagelab.findings rows of category visibility';

-- A fix that calls a cheap generator (catalogs only: the storage script),
-- or a generator's checks, executed as written, its result discarded: NULL
-- when it runs, else the error's message, detail and hint.
CREATE FUNCTION storagelab_internal.findings_try(fix text)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m text;
  d text;
  h text;
BEGIN
  EXECUTE fix;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  IF SQLSTATE ~ '^(40|53|57|58)' OR SQLSTATE = '55P03' THEN RAISE; END IF;  -- passing: not an answer
  GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
  RETURN concat_ws(' ', m || ':', nullif(d, ''), nullif(h, ''));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.findings_try(text) IS
  'executes a findings fix that calls a catalog-only generator, discarding its script: NULL when it runs, else the error''s message, detail and hint';

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
       'large values are compressed already: store them EXTERNAL, skip compressing'
         || coalesce('; no script changes it: ' || x.refused, '') AS message,
       NULL::int8 AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       CASE WHEN x.refused IS NULL THEN x.fix END AS fix,
       CASE WHEN p.sampled THEN 'sampled' ELSE 'exact' END AS evidence,
       p.rows_scanned AS sample_rows
  FROM col
 CROSS JOIN LATERAL storagelab_internal.findings_toast_sample(col.oid::pg_catalog.regclass,
                                                           col.attname, col.sample_rows) p
 -- the fix asked as written (the generator refuses, for one, a name holding its dollar-quote tags)
 CROSS JOIN LATERAL (SELECT f.fix, storagelab_internal.findings_try(f.fix) AS refused
                       FROM (SELECT pg_catalog.format('SELECT storagelab.storage_migration_script(%L, %L, ''external'');',
                                                      col.name, col.attname) AS fix) f) x
 WHERE p.large_values > 0 AND p.large_incompressible >= 0.8 * p.large_values;
COMMENT ON VIEW storagelab_internal.findings_toast IS
  'storagelab.findings rows of category toast';

-- What the layout script would refuse for a table, from the catalogs only
-- (its check of the values against the new types reads the table: left to
-- the script): the rewrite engine's refusals of the table and of the objects
-- that follow it, and type changes that break functions (types: the new
-- type by column name).  NULL when none; else the error's message, detail
-- and hint (findings_try).
CREATE FUNCTION storagelab_internal.findings_layout_refusal(relation regclass, types jsonb)
RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.findings_try(format(
           'SELECT storagelab_internal.rewrite_refuse(ARRAY[%1$s::oid]), '
           '(SELECT count(*) FROM storagelab_internal.rewrite_dependents(ARRAY[%1$s::oid])), '
           'storagelab_internal.layout_function_check(%1$s::oid::regclass, %2$L::jsonb)',
           $1::oid,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', a.attname, 'from', format_type(a.atttypid, a.atttypmod),
                                                         'to', t.value)), '[]')
              FROM jsonb_each_text(coalesce($2, '{}')) t
              JOIN pg_attribute a ON a.attrelid = $1 AND a.attname = t.key AND NOT a.attisdropped)))
$$;
COMMENT ON FUNCTION storagelab_internal.findings_layout_refusal(regclass, jsonb) IS
  'what layout_migration_script() would refuse for a table, from the catalogs only (the rewrite engine''s refusals, type changes breaking functions): its message, detail and hint, NULL when none';

-- column_width and alignment: the table_rewrite_plan rows worth a rewrite.
-- The plan lists partitions and inheritance children one by one, but the
-- layout script rebuilds them only with their topmost parent (a partition's
-- own script is refused): their plans make one finding on that parent.  Its
-- fix follows the parent's own plan when it has one (an inheritance parent
-- with rows); else (a partitioned table, an empty parent) it gives the
-- script the changes and the order the plans agree on; plans that disagree,
-- or a child of several parents, get the plans to read instead.
CREATE VIEW storagelab_internal.findings_layout_rows AS
WITH RECURSIVE cfg AS MATERIALIZED (
  -- the settings once per query, not once per table
  SELECT pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.min_saved_size')) AS min_saved,
         pg_catalog.pg_size_bytes(storagelab_internal.setting('findings.saved_warning_size')) AS warning_saved
), plan AS MATERIALIZED (
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
       CASE WHEN g.saved >= cfg.warning_saved THEN 'warning' ELSE 'info' END AS severity,
       g.root::pg_catalog.regclass AS relation, NULL::name AS column_name,
       'saved_bytes'::text AS metric, g.saved::numeric AS value,
       'bytes'::text AS unit,
       CASE WHEN g.below AND NOT g.root_planned AND NOT g.agree
            THEN 'its partitions or children plan differently: read their plans, choose for the parent'
            WHEN NOT g.narrows
            THEN 'column order wastes alignment padding: rebuild in the planned order'
            ELSE 'narrower column types and a new column order shrink every row' END
         || coalesce('; no script rebuilds it: ' || rf.refused, '') AS message,
       g.saved AS estimated_saved_bytes, NULL::timestamptz AS overflow_at,
       CASE WHEN rf.refused IS NOT NULL AND (g.root_planned OR g.agree) THEN NULL
            WHEN g.root_planned
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
  FROM cfg, grouped g
  JOIN pg_catalog.pg_class c ON c.oid = g.root
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  -- what the script would refuse (its fix is then NULL): the root's own plan's type changes, else the agreed ones
 CROSS JOIN LATERAL (SELECT storagelab_internal.findings_layout_refusal(g.root::pg_catalog.regclass,
                              CASE WHEN g.root_planned
                                   THEN (SELECT l.types FROM leaf l WHERE l.relid = g.root)::jsonb
                                   WHEN g.agree THEN g.types::jsonb END) AS refused) rf
 WHERE g.saved >= cfg.min_saved;
COMMENT ON VIEW storagelab_internal.findings_layout_rows IS
  'storagelab.findings rows of categories column_width and alignment: one per table_rewrite_plan row, except that the plans of partitions and inheritance children make one row on their topmost parent, with its script (following its own plan, else the changes and order the plans agree on) or the plans to read; no script (fix NULL, the message says why) where the layout script would refuse the table';
-- Planned in the caller's session, the query above is estimated in the
-- millions (the plan's row counts are guesses) and would be JIT-compiled,
-- which takes seconds: findings reads it through a function that plans and
-- runs it with jit = off (extension/99_jit.sql).  The constant columns stay
-- in the view, so that a condition on metric or unit leaves it out.
CREATE FUNCTION storagelab_internal.findings_layout()
RETURNS SETOF storagelab_internal.findings_layout_rows
LANGUAGE sql STABLE ROWS 10
SET search_path = pg_catalog, pg_temp
SET jit = off
AS 'SELECT * FROM storagelab_internal.findings_layout_rows';
COMMENT ON FUNCTION storagelab_internal.findings_layout()
  IS 'the rows of storagelab_internal.findings_layout_rows, planned and run with jit = off';
-- The function runs as its caller, who reads the rows as the view over
-- them let it before (its sources run as the caller either way).
GRANT SELECT ON storagelab_internal.findings_layout_rows TO PUBLIC;
CREATE VIEW storagelab_internal.findings_layout AS
SELECT l.category, l.severity, l.relation, l.column_name, 'saved_bytes'::text AS metric, l.value,
       'bytes'::text AS unit, l.message, l.estimated_saved_bytes, l.overflow_at, l.fix, l.evidence,
       l.sample_rows
  FROM storagelab_internal.findings_layout() l;
COMMENT ON VIEW storagelab_internal.findings_layout IS
  'storagelab.findings rows of categories column_width and alignment (findings_layout_rows, run with jit = off)';

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
COMMENT ON COLUMN storagelab.findings.message IS 'what is wrong and what to do, at most 100 characters, no number that is not in a typed column; an int_overflow message may go on to name the functions its fix widens or leaves to change, why the fix is not online, or what blocks every script';
COMMENT ON COLUMN storagelab.findings.estimated_saved_bytes IS 'bytes the fix saves (column_width, alignment)';
COMMENT ON COLUMN storagelab.findings.estimated_saved_pretty IS 'estimated_saved_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.findings.overflow_at IS 'projected overflow time (int_overflow, from the recorded growth)';
COMMENT ON COLUMN storagelab.findings.fix IS 'the SQL to run next: a migration script generator (in a mode and with function_hazards its pre-flight accepts), VACUUM, or the plan to read; NULL when no script can fix it (the message says why)';
COMMENT ON COLUMN storagelab.findings.evidence IS 'exact, statistics or sampled; for an int_overflow key that other columns reference, followed by their count and list (N referencing columns: s.t.c, ...)';
COMMENT ON COLUMN storagelab.findings.sample_rows IS 'rows a sampled finding rests on';
GRANT SELECT ON storagelab.findings TO PUBLIC;

-- report(): the findings as lines of text for psql, at most 100 columns
-- except a fix, which is printed whole (it is SQL to copy), and a message
-- naming functions or what blocks a migration, printed whole too.
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
    RETURN QUERY SELECT * FROM storagelab_internal.report_unreadable();
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
    -- whole: a message may end naming functions, or what blocks a migration
    RETURN NEXT '    ' || f.message;
    RETURN NEXT '    ' || coalesce(f.fix, '(no fix: see the message)');
  END LOOP;
  RETURN QUERY SELECT * FROM storagelab_internal.report_unreadable();
END
$fn$;
COMMENT ON FUNCTION storagelab.report() IS
  'storagelab.findings as text for psql: a summary line (database size, what could be saved, the nearest overflow), then the findings by severity, each with its message and fix; one line when nothing was found';

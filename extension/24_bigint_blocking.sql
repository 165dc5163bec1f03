-- storagelab install script, part 24: the blocking INT -> BIGINT script
-- (bigint_migration_script(..., mode => 'blocking')): one transaction, every
-- table locked in one order, each table rewritten once.
--
-- First the run-time checks: installed procedures the script CALLs with the
-- state it expects, written from the model (bigint_preflight before the
-- locks, bigint_postcheck before COMMIT); the few facts the model does not
-- carry (a column's type, a view's fingerprint, the dependents of the
-- columns) are read at generation by the functions the checks call.  Then
-- one function per section of the script, in its order: header
-- (script_header, part 01), pre-flight, locks (retried on lock_timeout),
-- body (drops, one ALTER TABLE per table, sequences, foreign keys, objects
-- re-created, trigger functions touched), post-checks, COMMIT (ROLLBACK on
-- -v dry_run=1) and ANALYZE.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- Run-time checks -------------------------------------------------------------

-- The type of a column, as format_type prints it; NULL when it is gone.
CREATE FUNCTION storagelab_internal.bigint_preflight_column_type(rel regclass, col name)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format_type(a.atttypid, NULL) FROM pg_attribute a WHERE a.attrelid = $1 AND a.attname = $2 AND NOT a.attisdropped
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_preflight_column_type(regclass, name) IS
  'pre-flight of the blocking INT->BIGINT script: the type of a column (NULL when it is gone)';

-- A fingerprint of a view or materialized view: its definition, options,
-- owner, privileges and comment.  The scripts drop it and create it again
-- from its definition at generation, so a CREATE OR REPLACE VIEW, a grant
-- or a comment made since would be undone.
CREATE FUNCTION storagelab_internal.bigint_preflight_view_fingerprint(rel regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, 'pg_class')))
    FROM pg_class c WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_preflight_view_fingerprint(regclass) IS
  'pre-flight of the blocking INT->BIGINT script: md5 of a view''s definition, options, owner, privileges and comment';

-- The objects that depend on columns (rows: table, column) and make ALTER
-- COLUMN TYPE fail (views, rules, triggers, policies, publications,
-- functions, generated columns) or would be left out (foreign keys), as
-- classid:objid with their description.
CREATE FUNCTION storagelab_internal.bigint_preflight_dependents(columns text[], OUT dep text, OUT description text)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT DISTINCT format('%s:%s', d.classid, d.objid), pg_describe_object(d.classid, d.objid, 0)
    FROM generate_subscripts($1, 1) i
    JOIN pg_attribute a ON a.attrelid = to_regclass($1[i][1]) AND a.attname = $1[i][2]
    JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
   WHERE d.deptype IN ('n', 'a')
     AND d.classid IN ('pg_rewrite'::regclass, 'pg_trigger'::regclass, 'pg_policy'::regclass, 'pg_publication_rel'::regclass,
                       'pg_proc'::regclass, 'pg_attrdef'::regclass, 'pg_constraint'::regclass)
     AND NOT (d.classid = 'pg_constraint'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = d.objid AND c.contype = 'f'))
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_preflight_dependents(text[]) IS
  'pre-flight of the blocking INT->BIGINT script: objects depending on columns that make ALTER COLUMN TYPE fail or would be left out';

-- The pre-flight of the blocking script, before it locks anything.  Stops
-- it (55000) when the database no longer looks as it did at generation: a
-- column (rows: table, column, type) changed its type, a check of the model
-- (rows: expression, problem) fails, a view (rows: view, fingerprint,
-- identity) was redefined, or an object not among dependents
-- (classid:objid) depends on the columns; (42501) unless the running role
-- owns (is a member of the owner of) every table, sequence, routine and
-- publication it alters or re-creates, and may CREATE in the schemas of
-- the re-created objects; (55006) while a transaction older than max_age
-- holds a lock on one of tables, or an anti-wraparound autovacuum (which
-- does not give way) runs on one: every lock attempt would time out.
CREATE PROCEDURE storagelab_internal.bigint_preflight(columns text[], checks text[], views text[], dependents text[],
                                                      relations text[], routines text[], publications text[], schemas text[],
                                                      tables text[], max_age interval)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  who text := (SELECT string_agg(DISTINCT d.description, '; ')
                 FROM storagelab_internal.bigint_preflight_dependents(columns) d WHERE d.dep <> ALL (dependents));
BEGIN
  PERFORM storagelab_internal.script_check(
    ARRAY(SELECT format('column %s.%I is no longer %s', columns[i][1], columns[i][2], columns[i][3])
            FROM generate_subscripts(columns, 1) i
           WHERE storagelab_internal.bigint_preflight_column_type(to_regclass(columns[i][1]), columns[i][2]) IS DISTINCT FROM columns[i][3]
           ORDER BY i)
    || storagelab_internal.script_failed(checks)
    || ARRAY(SELECT views[i][3] || ' was redefined (its definition, owner, privileges or comment)'
               FROM generate_subscripts(views, 1) i
              WHERE storagelab_internal.bigint_preflight_view_fingerprint(to_regclass(views[i][1])) IS DISTINCT FROM views[i][2]
              ORDER BY i)
    || CASE WHEN who IS NOT NULL THEN ARRAY['new objects depend on the columns to convert: ' || who] ELSE '{}' END,
    'the database changed since this script was generated', 'object_not_in_prerequisite_state',
    'Generate the script again with storagelab.bigint_migration_script().');
  PERFORM storagelab_internal.script_check(ARRAY(
    SELECT format('%s (owner %s)', c.oid::regclass, pg_get_userbyid(c.relowner))
      FROM pg_class c WHERE c.oid = ANY (relations::regclass[]) AND NOT pg_has_role(c.relowner, 'USAGE')
    UNION ALL
    SELECT format('function %s (owner %s)', p.oid::regprocedure, pg_get_userbyid(p.proowner))
      FROM pg_proc p WHERE p.oid = ANY (routines::regprocedure[]) AND NOT pg_has_role(p.proowner, 'USAGE')
    UNION ALL
    SELECT format('publication %I (owner %s)', b.pubname, pg_get_userbyid(b.pubowner))
      FROM pg_publication b WHERE b.pubname = ANY (publications::name[]) AND NOT pg_has_role(b.pubowner, 'USAGE')
    UNION ALL
    SELECT format('schema %I (no CREATE privilege)', n.nspname)
      FROM pg_namespace n WHERE n.nspname = ANY (schemas::name[]) AND NOT has_schema_privilege(n.oid, 'CREATE')),
    'the role running this script cannot do every step of it', 'insufficient_privilege',
    'Run the script as a superuser, or as a role that owns these objects (and may create objects in these schemas).');
  PERFORM storagelab_internal.script_check(ARRAY(
    SELECT string_agg(DISTINCT format('pid %s (transaction started %s ago, state %s)', a.pid, now() - a.xact_start, a.state), '; ')
      FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.pid <> pg_backend_pid() AND l.relation = ANY (tables::regclass[]) AND a.xact_start < now() - max_age
    HAVING count(*) > 0),
    'long-running transactions hold locks on tables this migration converts', 'object_in_use',
    'Wait for them to finish or end them (pg_cancel_backend / pg_terminate_backend), then run the script again.');
  PERFORM storagelab_internal.script_check(ARRAY(
    SELECT string_agg(format('pid %s on %s', v.pid, v.relid::regclass), '; ')
      FROM pg_stat_progress_vacuum v JOIN pg_stat_activity a ON a.pid = v.pid
     WHERE v.relid = ANY (tables::regclass[]) AND a.query LIKE '%to prevent wraparound%'
    HAVING count(*) > 0),
    'an anti-wraparound autovacuum is running on a table this migration converts', 'object_in_use',
    'Let it finish (it does not yield its lock), then run the script again.');
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.bigint_preflight(text[], text[], text[], text[], text[], text[], text[], text[], text[], interval) IS
  'pre-flight of the blocking INT->BIGINT script: raises 55000 when the database changed since generation, 42501 unless the running role may do every step, 55006 while an old transaction or an anti-wraparound vacuum holds a table';

-- Rolls the script back (22000) unless every check of the model (rows:
-- expression, problem) holds and no constraint on tables is left not valid
-- but those named in invalid_before (not valid at generation).
CREATE PROCEDURE storagelab_internal.bigint_postcheck(checks text[], tables text[], invalid_before text[])
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  PERFORM storagelab_internal.script_check(
    storagelab_internal.script_failed(checks)
    || ARRAY(SELECT 'a constraint on a converted table is not valid'::text
               WHERE EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ANY (tables::regclass[]) AND NOT convalidated
                                                           AND conname <> ALL (invalid_before))),
    'post-migration check failed; rolling back', 'data_exception',
    'Nothing was changed.  Report this with the script and storagelab.bigint_migration_objects() output.');
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.bigint_postcheck(text[], text[], text[]) IS
  'post-check of the blocking INT->BIGINT script: raises 22000 (the transaction rolls back) when a check of the model fails or a constraint is left not valid';

-- Writer sections ------------------------------------------------------------

-- The comment header of a blocking script (storagelab_internal.script_header):
-- columns, tables and sizes, locks, foreign keys, sequences, objects
-- re-created, function hazards, estimated duration; and its settings.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_header(objs storagelab.bigint_migration_object[], relations regclass[], column_names name[], lock_list text,
                                                                     function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: part 28 is created later in the install script
  RETURN (
  -- the tables rewritten, with the bytes of their trees (partitions and
  -- inheritance children): heap with TOAST, and indexes
  WITH t AS (SELECT r.qn, z.heap_bytes, z.index_bytes
               FROM (SELECT DISTINCT x.relation, storagelab_internal.sql_qname(x.relation) AS qn
                       FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL) r,
                    LATERAL (WITH RECURSIVE tree(oid) AS (SELECT r.relation::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid)
                             SELECT coalesce(sum(pg_total_relation_size(tree.oid) - pg_indexes_size(tree.oid)), 0) AS heap_bytes,
                                    coalesce(sum(pg_indexes_size(tree.oid)), 0) AS index_bytes FROM tree) z),
  fk AS (SELECT coalesce(sum(pg_relation_size(v.t)), 0) AS bytes
           FROM unnest(objs) x JOIN pg_constraint c ON c.oid = x.objid, LATERAL (VALUES (c.conrelid), (c.confrelid)) v(t)
          WHERE x.kind = 'foreign_key'),
  est AS (SELECT (SELECT coalesce(sum(t.heap_bytes + t.index_bytes), 0) FROM t) AS bytes,
                 greatest(coalesce(nullif(storagelab_internal.setting('bigint_migration.rewrite_mb_per_second'), '')::numeric, 50), 1) AS mbps)
  SELECT storagelab_internal.script_header('INT to BIGINT migration (mode blocking)', ARRAY[
      'requested: ' || storagelab_internal.sql_comment_text(
         (SELECT string_agg(format('%s.%I', storagelab_internal.sql_qname(u.r), u.c), ', ') FROM unnest(relations, column_names) AS u(r, c)))
      || format(E'\ngenerated %s in database %s by %s (%s)\n', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                storagelab_internal.sql_comment_text(quote_ident(current_database())),
                storagelab_internal.sql_comment_text(quote_ident(current_user)), split_part(version(), ',', 1))
      || E'run with: psql -v ON_ERROR_STOP=1 -f <this file>   (as the owner of the objects, or a superuser)\n'
      || E'dry run: add -v dry_run=1 to do everything and ROLLBACK (e.g. on a pg_dump --schema-only copy)\n'
      || 'One transaction: if any step fails, nothing is changed, and the script can simply be run again.',
      storagelab_internal.script_list('Columns of the foreign-key component:',
        ARRAY(SELECT x.identity || ': ' || x.handling FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity), NULL)
      || storagelab_internal.script_list('Tables rewritten, with their indexes (partitions and inheritance children included):',
           ARRAY(SELECT format('%s: %s table (with TOAST) + %s indexes', t.qn, pg_size_pretty(t.heap_bytes), pg_size_pretty(t.index_bytes))
                   FROM t ORDER BY t.qn), NULL)
      || format(E'Locks: ACCESS EXCLUSIVE on these tables (and their partitions/children) until COMMIT,\n'
                'taken in this one order with lock_timeout %s and up to %s retries:\n  %s\n',
                storagelab_internal.sql_comment_text(storagelab_internal.setting('scripts.lock_timeout')),
                storagelab_internal.setting('scripts.lock_retries')::int, storagelab_internal.sql_comment_text(lock_list))
      || storagelab_internal.script_list('Foreign keys dropped before the type change and re-added after it (each re-validated once):',
           ARRAY(SELECT x.identity || ': ' || x.handling FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity))
      || storagelab_internal.script_list('Sequences:',
           ARRAY(SELECT x.identity || ' (' || x.relation::text || '.' || quote_ident(x.column_name) || '): ' || x.handling
                   FROM unnest(objs) x WHERE x.kind IN ('sequence', 'identity') ORDER BY x.identity))
      || storagelab_internal.script_list('Objects dropped and re-created inside the transaction:',
           ARRAY(SELECT x.identity || ': ' || x.handling FROM unnest(objs) x
                  WHERE x.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
                  ORDER BY x.depth, x.identity))
      || storagelab_internal.script_list('Trigger functions touched so that other sessions re-plan them:',
           ARRAY(SELECT x.identity FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity))
      -- part 28's lines are comment lines already
      || regexp_replace(storagelab_internal.bigint_migration_hazard_header(objs, function_hazards), '^-- ?', '', 'gn')
      || storagelab_internal.script_list('Rebuilt in place by ALTER COLUMN TYPE (definitions, names, comments kept):',
           ARRAY(SELECT x.identity FROM unnest(objs) x WHERE x.kind IN ('index', 'constraint', 'statistics') AND x.create_sql IS NULL
                  ORDER BY x.identity))
      || format(E'Estimated duration: about %s s (%s of tables and indexes rewritten at an assumed %s MB/s,\n'
                'plus %s of foreign-key validation scans at 4 times that rate; setting bigint_migration.rewrite_mb_per_second)\n',
                ceil((est.bytes + fk.bytes / 4) / (est.mbps * 1048576)), pg_size_pretty(est.bytes), est.mbps, pg_size_pretty(fk.bytes))],
    storagelab_internal.bigint_migration_blocking_settings())
    FROM est, fk);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_header(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'the header of a blocking script (storagelab_internal.script_header): columns, tables and sizes, locks, foreign keys, sequences, objects re-created, function hazards, estimated duration; its settings and BEGIN';

-- The session settings of a blocking script, and its BEGIN (the blocking
-- layout script, part 65, uses them too).
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_settings()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.script_settings(
           ARRAY['SET statement_timeout = 0;     -- the rewrite may take long; lock waits are bounded by lock_timeout',
                 'SET check_function_bodies = off;   -- functions are re-created as they were, like pg_dump does'], true)
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_settings() IS
  'the session settings of a blocking script, and its BEGIN';

-- The pre-flight of a blocking script: the CALL of the run-time check above
-- with the state the model describes.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_preflight(objs storagelab.bigint_migration_object[], all_tables text[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH c AS (SELECT ARRAY(SELECT format('[%L, %L, %L]', storagelab_internal.sql_qname(x.relation), x.column_name,
                                         storagelab_internal.bigint_preflight_column_type(x.relation, x.column_name))
                            FROM unnest($1) x WHERE x.kind = 'column' ORDER BY x.identity) AS rows,
                    ARRAY(SELECT ARRAY[storagelab_internal.sql_qname(x.relation), x.column_name::text]
                            FROM unnest($1) x WHERE x.kind = 'column' ORDER BY x.identity) AS cols)
  SELECT E'-- Pre-flight checks (no locks taken yet beyond catalog reads).\n'
      || E'CALL storagelab_internal.bigint_preflight(\n  columns => ' || storagelab_internal.script_array(c.rows)
      || E',\n  checks => ' || storagelab_internal.script_array(ARRAY(
           SELECT format('[%L, %L]', x.check_sql, x.identity || ' is missing or changed') FROM unnest($1) x
            WHERE x.kind IN ('foreign_key', 'view', 'materialized_view', 'rule', 'trigger', 'policy', 'function', 'publication_table', 'generated_column')
              AND x.check_sql IS NOT NULL AND x.drop_sql IS NOT NULL ORDER BY x.identity))
      || E',\n  views => ' || storagelab_internal.script_array(ARRAY(
           SELECT format('[%L, %L, %L]', storagelab_internal.sql_qname(x.relation),
                         storagelab_internal.bigint_preflight_view_fingerprint(x.relation), x.identity)
             FROM unnest($1) x WHERE x.kind IN ('view', 'materialized_view') AND x.drop_sql IS NOT NULL ORDER BY x.identity))
      || E',\n  dependents => ' || storagelab_internal.script_array(ARRAY(
           SELECT quote_literal(d.dep) FROM storagelab_internal.bigint_preflight_dependents(c.cols) d ORDER BY d.dep))
      || E',\n  relations => ' || storagelab_internal.script_array(ARRAY(
           SELECT quote_literal(q) FROM (SELECT storagelab_internal.sql_qname(x.relation) AS q FROM unnest($1) x WHERE x.relation IS NOT NULL
                                         UNION
                                         SELECT storagelab_internal.sql_qname(x.objid) FROM unnest($1) x
                                          WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL) z ORDER BY q))
      || E',\n  routines => ' || storagelab_internal.script_array(ARRAY(
           SELECT DISTINCT quote_literal(x.objid::regprocedure::text) FROM unnest($1) x
            WHERE x.kind IN ('function', 'trigger_function', 'widened_function') ORDER BY 1))
      || E',\n  publications => ' || storagelab_internal.script_array(ARRAY(
           SELECT DISTINCT quote_literal(b.pubname) FROM unnest($1) x
             JOIN pg_publication_rel pr ON pr.oid = x.objid JOIN pg_publication b ON b.oid = pr.prpubid
            WHERE x.kind = 'publication_table' ORDER BY 1))
      || E',\n  schemas => ' || storagelab_internal.script_array(ARRAY(
           SELECT DISTINCT quote_literal(n.nspname) FROM unnest($1) x
             JOIN pg_namespace n ON n.oid = CASE WHEN x.kind IN ('view', 'materialized_view') THEN (SELECT relnamespace FROM pg_class WHERE oid = x.objid)
                                                 WHEN x.kind IN ('function', 'widened_function') THEN (SELECT pronamespace FROM pg_proc WHERE oid = x.objid)
                                                 WHEN x.kind = 'statistics' THEN (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = x.objid) END
            WHERE x.create_sql IS NOT NULL ORDER BY 1))
      || format(E',\n  tables => %s,\n  max_age => %L);\n\n',
                storagelab_internal.script_array(ARRAY(SELECT quote_literal(t) FROM unnest($2) t)),
                storagelab_internal.setting('bigint_migration.max_blocking_transaction_age'))
    FROM c
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_preflight(storagelab.bigint_migration_object[], text[]) IS
  'the pre-flight of a blocking script: the CALL checking that the database still looks as at generation, that the role may do every step, and that no long transaction or anti-wraparound vacuum holds the tables';

-- The body of a blocking script after the locks, one section per row of
-- the table below: drops (dependents first, then the foreign keys), one
-- ALTER TABLE per table (generated columns re-added in it), sequences,
-- foreign keys re-added, dropped objects re-created in dependency order,
-- trigger functions touched so that other sessions re-plan them.  A section
-- is the drop or create statements (which) of the rows of kinds (NULL:
-- every kind but skip), in depth order when by_depth is 'asc' or 'desc',
-- then by identity, each under its identity when labelled; empty when none.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_body(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT string_agg(s.head || CASE WHEN s.which IS NOT NULL THEN coalesce(y.stmts, s.empty, '') ELSE
           coalesce((SELECT string_agg(format(E'ALTER TABLE %s\n  ', t.qn)
                     || (SELECT string_agg(c, E',\n  ' ORDER BY ord, c)
                           FROM (SELECT 1 AS ord, x.drop_sql AS c FROM unnest($1) x WHERE x.kind = 'generated_column' AND x.relation = t.rel
                                 UNION ALL
                                 SELECT 2, x.create_sql FROM unnest($1) x WHERE x.kind = 'column' AND x.relation = t.rel AND x.create_sql IS NOT NULL
                                 UNION ALL
                                 SELECT 3, x.create_sql FROM unnest($1) x WHERE x.kind = 'generated_column' AND x.relation = t.rel) p)
                     || E';\n'
                     || coalesce((SELECT string_agg(x.post_sql, '' ORDER BY x.identity) FROM unnest($1) x
                                   WHERE x.kind = 'generated_column' AND x.relation = t.rel), ''), '' ORDER BY t.qn)
                       FROM (SELECT DISTINCT x.relation AS rel, storagelab_internal.sql_qname(x.relation) AS qn
                               FROM unnest($1) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL) t), '') END,
           '' ORDER BY s.ord)
    FROM (VALUES
      (1, E'-- Drop the objects that would make ALTER COLUMN TYPE fail (dependents first).\n',
       'drop', NULL::text[], '{column,generated_column,foreign_key}'::text[], true, E'-- (none)\n', 'desc'),
      (2, E'\n-- Drop the foreign keys of the component (ACCESS EXCLUSIVE on both tables, held already).\n',
       'drop', '{foreign_key}', NULL, false, NULL, NULL),
      (3, E'\n-- Convert: one ALTER TABLE per table, so each table and its indexes are rewritten once.\n',
       NULL, NULL, NULL, NULL, NULL, NULL),
      (4, E'\n-- Sequences (SHARE ROW EXCLUSIVE on each sequence).\n',
       'create', '{sequence}', NULL, false, E'-- (none: identity sequences follow ALTER COLUMN TYPE)\n', NULL),
      (5, E'\n-- Re-add the foreign keys with their names, actions, deferrability and comments; each is validated once here.\n',
       'create', '{foreign_key}', NULL, false, NULL, NULL),
      (6, E'\n-- Re-create the dropped objects exactly as they were (in dependency order).\n',
       'create', NULL, '{column,generated_column,foreign_key,sequence,identity,trigger_function}', true, E'-- (none)\n', 'asc'),
      (7, E'\n-- Make other sessions re-plan the trigger functions of the converted tables (their cached plans\n'
          || E'-- have integer parameters); COST is set to its current value, nothing else changes.\n',
       'create', '{trigger_function}', NULL, false, E'-- (none)\n', NULL)
    ) AS s(ord, head, which, kinds, skip, labelled, empty, by_depth)
    LEFT JOIN LATERAL (
      SELECT string_agg(CASE WHEN s.labelled THEN '-- ' || storagelab_internal.sql_comment_text(z.identity) || E'\n' ELSE '' END || z.stmt,
                        '' ORDER BY CASE WHEN s.by_depth = 'desc' THEN z.depth END DESC, CASE WHEN s.by_depth = 'asc' THEN z.depth END, z.identity)
        FROM (SELECT x.identity, x.depth, CASE s.which WHEN 'drop' THEN x.drop_sql ELSE x.create_sql END AS stmt
                FROM unnest($1) x WHERE x.kind = ANY (s.kinds) OR (s.kinds IS NULL AND x.kind <> ALL (s.skip))) z
       WHERE z.stmt IS NOT NULL) y(stmts) ON true
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_body(storagelab.bigint_migration_object[]) IS
  'the statements of a blocking script between its locks and its post-checks: drops, type changes, sequences, foreign keys, objects re-created, trigger functions touched';

-- The post-check of a blocking script: every row's check_sql holds, no
-- constraint on a converted table is left not valid (but those not valid
-- at generation); else the transaction rolls back.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(objs storagelab.bigint_migration_object[], all_tables text[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT E'\n-- Post-checks: every converted column and sequence is bigint, every object is back, constraints valid.\n'
      || E'CALL storagelab_internal.bigint_postcheck(\n  checks => ' || storagelab_internal.script_array(ARRAY(
           SELECT format('[%L, %L]', x.check_sql,
                         x.identity || CASE WHEN x.kind IN ('column', 'sequence', 'identity') THEN ' is not bigint' ELSE ' was not re-created as it was' END)
             FROM unnest($1) x WHERE x.check_sql IS NOT NULL ORDER BY x.kind, x.identity))
      || E',\n  tables => ' || storagelab_internal.script_array(ARRAY(SELECT quote_literal(t) FROM unnest($2) t))
      || E',\n  invalid_before => ' || storagelab_internal.script_array(ARRAY(
           SELECT quote_literal(c.conname) FROM pg_constraint c WHERE c.conrelid = ANY ($2::regclass[]) AND NOT c.convalidated ORDER BY 1))
      || E');\n\n'
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(storagelab.bigint_migration_object[], text[]) IS
  'the post-check of a blocking script: a CALL that rolls the transaction back unless every row''s check_sql holds and no constraint is left not valid';

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
  objs := storagelab_internal.bigint_migration_preflight(objs, 'blocking', function_hazards);   -- part 27
  -- Tables: every table whose columns change or that carries a re-created object.
  all_tables := ARRAY(SELECT DISTINCT storagelab_internal.sql_qname(x.relation)
                        FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  -- LOCK TABLE recurses to partitions and inheritance children: name only the others.
  lock_list := (SELECT string_agg(t, ', ' ORDER BY t) FROM unnest(all_tables) t
                 WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i
                                    WHERE i.inhrelid = t::regclass
                                      AND storagelab_internal.sql_qname(i.inhparent) = ANY (all_tables)));
  RETURN storagelab_internal.bigint_migration_blocking_header(objs, relations, column_names, lock_list, function_hazards)
      || storagelab_internal.bigint_migration_blocking_preflight(objs, all_tables)
      || storagelab_internal.disk_preflight_sql('blocking', storagelab_internal.bigint_copy_swap_tables(objs))   -- part 68
      || E'-- Lock every table, in one order, all or none; retried on lock_timeout.\n'
      || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)],
                                         storagelab_internal.setting('scripts.lock_retries')::int,
                                         'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
      || E'\n'
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before')   -- part 28
      || storagelab_internal.bigint_migration_blocking_body(objs)
      || storagelab_internal.bigint_migration_blocking_postchecks(objs, all_tables)
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after')   -- part 28
      || storagelab_internal.script_end(true)
      || E'-- ALTER COLUMN TYPE discards the column statistics: gather them again (SHARE UPDATE EXCLUSIVE, no blocking of DML).\n'
      || (SELECT string_agg(format(E'ANALYZE %s;\n', t.qn), '' ORDER BY t.qn)
            FROM (SELECT DISTINCT storagelab_internal.sql_qname(x.relation) AS qn
                    FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL) t);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the blocking INT->BIGINT script of a model under a choice of function_hazards: one transaction, sections header to finish';

-- Refuses, listing every blocker, when no correct script can be produced:
-- the model's blocker rows plus more_blockers (SQLSTATE 0A000); also when
-- nothing is left to convert.  mode is not read (both callers, parts 27 and
-- 67, pass 'blocking' and no more_blockers since mode shadow was removed).
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
  blockers := blockers || more_blockers;
  IF cardinality(blockers) > 0 THEN
    RAISE EXCEPTION 'cannot generate a correct INT to BIGINT migration: % blocker(s)', cardinality(blockers)
      USING ERRCODE = CASE WHEN cardinality(codes) = 1 AND cardinality(more_blockers) = 0 THEN codes[1] ELSE '0A000' END,
            DETAIL = array_to_string(blockers, E'\n'),
            HINT = 'Resolve each blocker listed in the detail (storagelab.bigint_migration_objects() shows them with kind ''blocker'') and generate the script again.';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM unnest(objs) x WHERE x.kind IN ('column', 'sequence') AND x.create_sql IS NOT NULL) THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component and its sequences are already bigint'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'storagelab.bigint_migration_objects() lists the component.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_refuse(storagelab.bigint_migration_object[], text[], text) IS
  'raises the error that lists every blocker of a model (and of the mode), or that nothing is left to convert';

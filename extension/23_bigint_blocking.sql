-- storagelab install script, part 23: the blocking INT -> BIGINT script
-- (bigint_migration_script(..., mode => 'blocking')): one transaction, every
-- table locked in one order, each table rewritten once.  One function per
-- section of the script, in the order the script has them; each reads only
-- the model rows (part 21).
--
--   header      what the script does, to whom, how long it may take
--   preflight   the database still looks as the model says; privileges;
--               long transactions and anti-wraparound vacuums
--   locks       every table, one order, retried on lock_timeout
--   drops       dependents that would make ALTER COLUMN TYPE fail
--   convert     ALTER TABLE per table, sequences, foreign keys re-added
--   recreate    dropped objects, then trigger functions touched
--   postchecks  every row's check_sql; constraints valid
--   finish      COMMIT (or ROLLBACK on -v dry_run=1), ANALYZE

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The comment header of a blocking script: columns, tables and sizes, locks, foreign keys, sequences, objects re-created, function hazards, estimated duration.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_header(objs storagelab.bigint_migration_object[], relations regclass[], column_names name[], lock_list text,
                                                                     function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
  heap_b     numeric;
  idx_b      numeric;
  est_bytes  numeric := 0;
  fk_bytes   numeric := 0;
  mbps       numeric := greatest(coalesce(nullif(storagelab_internal.setting('bigint_migration.rewrite_mb_per_second'), '')::numeric, 50), 1);
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode blocking)\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'));
  s := s || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(x.r), x.c), ', ')
                 FROM unnest(relations, column_names) AS x(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s (%s)\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_user)),
                   split_part(version(), ',', 1));
  s := s || E'-- run with: psql -v ON_ERROR_STOP=1 -f <this file>   (as the owner of the objects, or a superuser)\n'
         || E'-- dry run: add -v dry_run=1 to do everything and ROLLBACK (e.g. on a pg_dump --schema-only copy)\n'
         || E'-- One transaction: if any step fails, nothing is changed, and the script can simply be run again.\n--\n';
  s := s || E'-- Columns of the foreign-key component:\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
  END LOOP;

  s := s || E'-- Tables rewritten, with their indexes (partitions and inheritance children included):\n';
  FOR r IN
    SELECT x.relation, storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 2
  LOOP
    WITH RECURSIVE tree(oid) AS (
      SELECT r.relation::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid)
    SELECT coalesce(sum(pg_total_relation_size(tree.oid) - pg_indexes_size(tree.oid)), 0),
           coalesce(sum(pg_indexes_size(tree.oid)), 0)
      INTO heap_b, idx_b FROM tree;
    est_bytes := est_bytes + heap_b + idx_b;
    s := s || format(E'--   %s: %s table (with TOAST) + %s indexes\n',
                     storagelab_internal.bigint_migration_comment_text(r.qn), pg_size_pretty(heap_b), pg_size_pretty(idx_b));
  END LOOP;

  s := s || format(E'-- Locks: ACCESS EXCLUSIVE on these tables (and their partitions/children) until COMMIT,\n'
                   '-- taken in this one order with lock_timeout %s and up to %s retries:\n--   %s\n',
                   storagelab_internal.bigint_migration_comment_text(lt), retries,
                   storagelab_internal.bigint_migration_comment_text(lock_list));

  s := s || E'-- Foreign keys dropped before the type change and re-added after it (each re-validated once):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    SELECT coalesce(sum(pg_relation_size(t)), 0) INTO heap_b
      FROM pg_constraint c, LATERAL (VALUES (c.conrelid), (c.confrelid)) v(t) WHERE c.oid = o.objid;
    fk_bytes := fk_bytes + heap_b;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Sequences:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind IN ('sequence', 'identity') ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ' (' || o.relation::text || '.' || quote_ident(o.column_name) || '): ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Objects dropped and re-created inside the transaction:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;
  s := s || E'-- Trigger functions touched so that other sessions re-plan them:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;
  s := s || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards);   -- part 28

  s := s || E'-- Rebuilt in place by ALTER COLUMN TYPE (definitions, names, comments kept):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('index', 'constraint', 'statistics') AND x.create_sql IS NULL
            ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || format(E'-- Estimated duration: about %s s (%s of tables and indexes rewritten at an assumed %s MB/s,\n'
                   '-- plus %s of foreign-key validation scans at 4 times that rate; setting bigint_migration.rewrite_mb_per_second)\n\n',
                   ceil((est_bytes + fk_bytes / 4) / (mbps * 1048576)),
                   pg_size_pretty(est_bytes), mbps, pg_size_pretty(fk_bytes));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_header(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'The comment header of a blocking script: columns, tables and sizes, locks, foreign keys, sequences, objects re-created, function hazards, estimated duration.';

-- The session settings of a blocking script, and its BEGIN.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_settings()
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  s          text := '';
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
BEGIN
  s := s || E'\\set ON_ERROR_STOP on\n';
  s := s || format(E'SET lock_timeout = %L;\n', lt);
  s := s || E'SET statement_timeout = 0;     -- the rewrite may take long; lock waits are bounded by lock_timeout\n';
  s := s || E'SET check_function_bodies = off;   -- functions are re-created as they were, like pg_dump does\n\n';
  s := s || E'BEGIN;\nSET LOCAL search_path = pg_catalog, pg_temp;   -- every name below is schema-qualified; LOCAL: the session keeps its own\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_settings() IS
  'The session settings of a blocking script, and its BEGIN.';

-- The lines of a DO block that add to its array problems each view or
-- materialized view of objs that was redefined since generation (its
-- definition, options, owner, privileges or comment): the scripts drop
-- them and create them again from their definitions then, so a
-- CREATE OR REPLACE VIEW, a grant or a comment made since would be undone.
CREATE FUNCTION storagelab_internal.bigint_migration_view_checks(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(string_agg(format(E'  IF (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, %L)))\n'
                                    '        FROM pg_class c WHERE c.oid = to_regclass(%L)) IS DISTINCT FROM %L THEN\n'
                                    '    problems := problems || %L::text;\n  END IF;\n',
                                    'pg_class', storagelab_internal.bigint_migration_qname(x.relation),
                                    (SELECT md5(concat_ws(chr(10), pg_get_viewdef(c.oid), c.relacl, c.reloptions, c.relowner, obj_description(c.oid, 'pg_class')))
                                       FROM pg_class c WHERE c.oid = x.relation),
                                    x.identity || ' was redefined (its definition, owner, privileges or comment)'),
                             '' ORDER BY x.identity), '')
    FROM unnest($1) x WHERE x.kind IN ('view', 'materialized_view') AND x.drop_sql IS NOT NULL
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_view_checks(storagelab.bigint_migration_object[]) IS
  'lines of a DO block adding to its problems array each view or materialized view of objs redefined since generation (definition, options, owner, privileges, comment), which a script would re-create as it was';

-- Lines of the pre-flight DO block (part of bigint_migration_blocking_preflight)
-- that stop the script with 42501 unless the running role owns (is a member
-- of the owner of) every table, sequence, function and publication it alters
-- or re-creates, and may CREATE in the schemas of re-created objects.
CREATE FUNCTION storagelab_internal.bigint_migration_role_check(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN E'  -- the role running the script must be able to do every step: own (be a member of the owner of)\n'
       || E'  -- every object it alters, drops or re-creates, and have CREATE on the schemas it re-creates them in\n'
       || format(E'  SELECT string_agg(x, ''; '') INTO who FROM (\n'
                 '    SELECT format(''%%s (owner %%s)'', c.oid::regclass, pg_get_userbyid(c.relowner)) AS x\n'
                 '      FROM pg_class c WHERE c.oid = ANY (ARRAY[%s]::regclass[]) AND NOT pg_has_role(c.relowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''function %%s (owner %%s)'', p.oid::regprocedure, pg_get_userbyid(p.proowner))\n'
                 '      FROM pg_proc p WHERE p.oid = ANY (ARRAY[%s]::regprocedure[]) AND NOT pg_has_role(p.proowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''publication %%I (owner %%s)'', b.pubname, pg_get_userbyid(b.pubowner))\n'
                 '      FROM pg_publication b WHERE b.pubname = ANY (ARRAY[%s]::name[]) AND NOT pg_has_role(b.pubowner, ''USAGE'')\n'
                 '    UNION ALL\n'
                 '    SELECT format(''schema %%I (no CREATE privilege)'', n.nspname)\n'
                 '      FROM pg_namespace n WHERE n.nspname = ANY (ARRAY[%s]::name[]) AND NOT has_schema_privilege(n.oid, ''CREATE'')) y;\n',
                 coalesce((SELECT string_agg(format('%L', q), ', ' ORDER BY q) FROM (
                             SELECT DISTINCT storagelab_internal.bigint_migration_qname(x.relation) AS q FROM unnest(objs) x WHERE x.relation IS NOT NULL
                             UNION
                             SELECT storagelab_internal.bigint_migration_qname(x.objid) FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL) z), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', x.objid::regprocedure::text), ', ')
                             FROM unnest(objs) x WHERE x.kind IN ('function', 'trigger_function', 'widened_function')), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', b.pubname), ', ')
                             FROM unnest(objs) x JOIN pg_publication_rel pr ON pr.oid = x.objid JOIN pg_publication b ON b.oid = pr.prpubid
                            WHERE x.kind = 'publication_table'), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', n.nspname), ', ')
                             FROM unnest(objs) x
                             JOIN pg_namespace n ON n.oid = CASE WHEN x.kind IN ('view', 'materialized_view') THEN (SELECT relnamespace FROM pg_class WHERE oid = x.objid)
                                                                 WHEN x.kind IN ('function', 'widened_function') THEN (SELECT pronamespace FROM pg_proc WHERE oid = x.objid)
                                                                 WHEN x.kind = 'statistics' THEN (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = x.objid) END
                            WHERE x.create_sql IS NOT NULL), ''))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''the role running this script cannot do every step of it''\n'
       || E'      USING ERRCODE = ''insufficient_privilege'', DETAIL = who,\n'
       || E'            HINT = ''Run the script as a superuser, or as a role that owns these objects (and may create objects in these schemas).'';\n  END IF;\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_role_check(storagelab.bigint_migration_object[]) IS
  'lines of the blocking pre-flight DO block raising 42501 unless the running role may do every step (owners, CREATE on schemas)';

-- Lines of the pre-flight DO block (part of bigint_migration_blocking_preflight)
-- that stop the script with 55006 while a transaction older than
-- bigint_migration.max_blocking_transaction_age holds a lock on a converted
-- table, or an anti-wraparound autovacuum (which does not give way) runs on
-- one: every lock attempt would time out behind them.
CREATE FUNCTION storagelab_internal.bigint_migration_activity_checks(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  max_age text := storagelab_internal.setting('bigint_migration.max_blocking_transaction_age');
  tabs    text := (SELECT string_agg(format('%L', storagelab_internal.bigint_migration_qname(x.relation)), ', '
                                ORDER BY storagelab_internal.bigint_migration_qname(x.relation))
                     FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                            WHERE c.relkind IN ('r', 'p')) x);   -- the converted tables with storage or partitions
BEGIN
  RETURN E'  -- a long-running transaction holding a lock on these tables would make every lock attempt time out\n'
       || format(E'  SELECT string_agg(DISTINCT format(''pid %%s (transaction started %%s ago, state %%s)'', a.pid, now() - a.xact_start, a.state), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid\n'
                 '   WHERE l.pid <> pg_backend_pid() AND l.relation = ANY (ARRAY[%s]::regclass[])\n'
                 '     AND a.xact_start < now() - %L::interval;\n',
                 tabs,
                 max_age)
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''long-running transactions hold locks on tables this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Wait for them to finish or end them (pg_cancel_backend / pg_terminate_backend), then run the script again.'';\n  END IF;\n'
       || E'  -- an anti-wraparound autovacuum does not give way to the ACCESS EXCLUSIVE lock\n'
       || format(E'  SELECT string_agg(format(''pid %%s on %%s'', v.pid, v.relid::regclass), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_stat_progress_vacuum v JOIN pg_stat_activity a ON a.pid = v.pid\n'
                 '   WHERE v.relid = ANY (ARRAY[%s]::regclass[]) AND a.query LIKE ''%%to prevent wraparound%%'';\n',
                 tabs)
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''an anti-wraparound autovacuum is running on a table this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Let it finish (it does not yield its lock), then run the script again.'';\n  END IF;\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_activity_checks(storagelab.bigint_migration_object[]) IS
  'lines of the blocking pre-flight DO block raising 55006 while an old transaction holds a lock on, or an anti-wraparound autovacuum runs on, a converted table';

-- The pre-flight DO block of a blocking script: the database still looks as it did at generation, the role may do every step, no long transaction or anti-wraparound vacuum holds the tables.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_preflight(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  s          text := '';
  body       text;
BEGIN
  body := E'\nDECLARE\n  problems text[] := ''{}'';\n  who text;\nBEGIN\n'
       || E'  -- the database must still look as it did when this script was generated\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped\n'
                           '                 AND atttypid = %L::regtype) THEN\n'
                           '    problems := problems || %L::text;\n  END IF;\n',
                           storagelab_internal.bigint_migration_qname(o.relation), o.column_name,
                           (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name),
                           format('column %s is no longer %s', o.identity,
                                  (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name)));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('foreign_key', 'view', 'materialized_view', 'rule', 'trigger', 'policy', 'function', 'publication_table', 'generated_column')
              AND x.check_sql IS NOT NULL AND x.drop_sql IS NOT NULL
            ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n',
                           o.check_sql, o.identity || ' is missing or changed');
  END LOOP;
  body := body || storagelab_internal.bigint_migration_view_checks(objs);
  -- objects that make ALTER COLUMN TYPE fail (views, rules, triggers,
  -- policies, publications, functions, generated columns) or that would be
  -- left out (foreign keys), created on the converted columns since generation
  body := body || format(E'  SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, 0), ''; '') INTO who\n'
                         '    FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid\n'
                         '   WHERE d.refclassid = ''pg_class''::regclass AND d.deptype IN (''n'', ''a'')\n'
                         '     AND (d.refobjid, a.attname) IN (%s)\n'
                         '     AND d.classid IN (''pg_rewrite''::regclass, ''pg_trigger''::regclass, ''pg_policy''::regclass, ''pg_publication_rel''::regclass,\n'
                         '                       ''pg_proc''::regclass, ''pg_attrdef''::regclass, ''pg_constraint''::regclass)\n'
                         '     AND NOT (d.classid = ''pg_constraint''::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = d.objid AND c.contype = ''f''))\n'
                         '     AND format(''%%s:%%s'', d.classid, d.objid) <> ALL (ARRAY[%s]::text[]);\n'
                         '  IF who IS NOT NULL THEN\n    problems := problems || (''new objects depend on the columns to convert: '' || who);\n  END IF;\n',
                         (SELECT string_agg(format('(to_regclass(%L)::oid, %L::name)', storagelab_internal.bigint_migration_qname(x.relation), x.column_name), ', ' ORDER BY x.identity)
                            FROM unnest(objs) x WHERE x.kind = 'column'),
                         coalesce((SELECT string_agg(DISTINCT format('%L', format('%s:%s', d.classid, d.objid)), ', ')
                                     FROM unnest(objs) x
                                     JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
                                     JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                                    WHERE x.kind = 'column' AND d.deptype IN ('n', 'a')), ''));
  body := body || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
       || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'            HINT = ''Generate the script again with storagelab.bigint_migration_script().'';\n  END IF;\n'
       || storagelab_internal.bigint_migration_role_check(objs)
       || storagelab_internal.bigint_migration_activity_checks(objs)
       || E'END\n';
  s := s || E'-- Pre-flight checks (no locks taken yet beyond catalog reads).\n'
         || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_preflight(storagelab.bigint_migration_object[]) IS
  'The pre-flight DO block of a blocking script: the database still looks as it did at generation, the role may do every step, no long transaction or anti-wraparound vacuum holds the tables.';

-- Locks every table of a blocking script in one statement, retried on lock_timeout.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_locks(lock_list text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := E'-- Lock every table, in one order, all or none; retried on lock_timeout.\n'
       || storagelab_internal.retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries,
                                          'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
       || E'\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_locks(text) IS
  'Locks every table of a blocking script in one statement, retried on lock_timeout.';

-- Drops, dependents first, the objects that would make ALTER COLUMN TYPE fail, then the foreign keys of the component.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_drops(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'-- Drop the objects that would make ALTER COLUMN TYPE fail (dependents first).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key') AND x.drop_sql IS NOT NULL
            ORDER BY x.depth DESC, x.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.drop_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;
  s := s || E'\n-- Drop the foreign keys of the component (ACCESS EXCLUSIVE on both tables, held already).\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_drops(storagelab.bigint_migration_object[]) IS
  'Drops, dependents first, the objects that would make ALTER COLUMN TYPE fail, then the foreign keys of the component.';

-- The type changes (one ALTER TABLE per table, generated columns re-added in it), the sequences, and the foreign keys re-added.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_convert(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'\n-- Convert: one ALTER TABLE per table, so each table and its indexes are rewritten once.\n';
  FOR r IN
    SELECT x.relation, storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 2
  LOOP
    s := s || format(E'ALTER TABLE %s\n  ', r.qn)
           || (SELECT string_agg(c, E',\n  ' ORDER BY ord, c)
                 FROM (SELECT 1 AS ord, x.drop_sql AS c FROM unnest(objs) x WHERE x.kind = 'generated_column' AND x.relation = r.relation
                       UNION ALL
                       SELECT 2, x.create_sql FROM unnest(objs) x WHERE x.kind = 'column' AND x.relation = r.relation AND x.create_sql IS NOT NULL
                       UNION ALL
                       SELECT 3, x.create_sql FROM unnest(objs) x WHERE x.kind = 'generated_column' AND x.relation = r.relation) y)
           || E';\n'
           || coalesce((SELECT string_agg(x.post_sql, '' ORDER BY x.identity) FROM unnest(objs) x
                         WHERE x.kind = 'generated_column' AND x.relation = r.relation), '');
  END LOOP;

  s := s || E'\n-- Sequences (SHARE ROW EXCLUSIVE on each sequence).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity LOOP
    s := s || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none: identity sequences follow ALTER COLUMN TYPE)\n'; END IF;

  s := s || E'\n-- Re-add the foreign keys with their names, actions, deferrability and comments; each is validated once here.\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || o.create_sql;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_convert(storagelab.bigint_migration_object[]) IS
  'The type changes (one ALTER TABLE per table, generated columns re-added in it), the sequences, and the foreign keys re-added.';

-- Re-creates the dropped objects in dependency order, then touches the trigger functions so that other sessions re-plan them.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_recreate(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  n          int;
BEGIN
  s := s || E'\n-- Re-create the dropped objects exactly as they were (in dependency order).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;

  s := s || E'\n-- Make other sessions re-plan the trigger functions of the converted tables (their cached plans\n'
         || E'-- have integer parameters); COST is set to its current value, nothing else changes.\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity LOOP
    s := s || o.create_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_recreate(storagelab.bigint_migration_object[]) IS
  'Re-creates the dropped objects in dependency order, then touches the trigger functions so that other sessions re-plan them.';

-- The post-check DO block of a blocking script: every row's check_sql holds, no constraint on a converted table is left not valid; else the transaction rolls back.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(objs storagelab.bigint_migration_object[], all_tables text[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  s          text := '';
  body       text;
BEGIN
  body := E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.check_sql IS NOT NULL ORDER BY x.kind, x.identity LOOP
    body := body || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n',
                           o.check_sql,
                           CASE o.kind WHEN 'column' THEN o.identity || ' is not bigint'
                                       WHEN 'sequence' THEN o.identity || ' is not bigint'
                                       WHEN 'identity' THEN o.identity || ' is not bigint'
                                       ELSE o.identity || ' was not re-created as it was' END);
  END LOOP;
  body := body || format(E'  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = ANY (ARRAY[%s]::regclass[]) AND NOT convalidated\n'
                         '               AND conname <> ALL (ARRAY[%s]::name[])) THEN\n'
                         '    problems := problems || ''a constraint on a converted table is not valid''::text;\n  END IF;\n',
                         (SELECT string_agg(format('%L', t), ', ') FROM unnest(all_tables) t),
                         coalesce((SELECT string_agg(format('%L', c.conname), ', ')
                                     FROM pg_constraint c
                                    WHERE c.conrelid IN (SELECT x.relation FROM unnest(objs) x) AND NOT c.convalidated), ''));
  body := body || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''post-migration check failed; rolling back''\n'
       || E'      USING ERRCODE = ''data_exception'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'            HINT = ''Nothing was changed.  Report this with the script and storagelab.bigint_migration_objects() output.'';\n  END IF;\nEND\n';
  s := s || E'\n-- Post-checks: every converted column and sequence is bigint, every object is back, constraints valid.\n'
         || 'DO ' || storagelab_internal.dollar_quote(body) || E';\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_postchecks(storagelab.bigint_migration_object[], text[]) IS
  'The post-check DO block of a blocking script: every row''s check_sql holds, no constraint on a converted table is left not valid; else the transaction rolls back.';

-- COMMIT (ROLLBACK with -v dry_run=1), then ANALYZE of every rewritten table.
CREATE FUNCTION storagelab_internal.bigint_migration_blocking_finish(objs storagelab.bigint_migration_object[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
BEGIN
  -- -v dry_run=1: everything above, then ROLLBACK (try it on a schema-only copy first)
  s := s || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n';
  s := s || E'-- ALTER COLUMN TYPE discards the column statistics: gather them again (SHARE UPDATE EXCLUSIVE, no blocking of DML).\n';
  FOR r IN
    SELECT storagelab_internal.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 1
  LOOP
    s := s || format(E'ANALYZE %s;\n', r.qn);
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_finish(storagelab.bigint_migration_object[]) IS
  'COMMIT (ROLLBACK with -v dry_run=1), then ANALYZE of every rewritten table.';

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
  all_tables := ARRAY(SELECT DISTINCT storagelab_internal.bigint_migration_qname(x.relation)
                        FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  -- LOCK TABLE recurses to partitions and inheritance children: name only the others.
  lock_list := (SELECT string_agg(t, ', ' ORDER BY t) FROM unnest(all_tables) t
                 WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i
                                    WHERE i.inhrelid = t::regclass
                                      AND storagelab_internal.bigint_migration_qname(i.inhparent) = ANY (all_tables)));
  RETURN storagelab_internal.bigint_migration_blocking_header(objs, relations, column_names, lock_list, function_hazards)
      || storagelab_internal.bigint_migration_blocking_settings()
      || storagelab_internal.bigint_migration_blocking_preflight(objs)
      || storagelab_internal.disk_preflight_sql('blocking', storagelab_internal.bigint_copy_swap_tables(objs))   -- part 64
      || storagelab_internal.bigint_migration_blocking_locks(lock_list)
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before')   -- part 28
      || storagelab_internal.bigint_migration_blocking_drops(objs)
      || storagelab_internal.bigint_migration_blocking_convert(objs)
      || storagelab_internal.bigint_migration_blocking_recreate(objs)
      || storagelab_internal.bigint_migration_blocking_postchecks(objs, all_tables)
      || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after')   -- part 28
      || storagelab_internal.bigint_migration_blocking_finish(objs);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_blocking_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the blocking INT->BIGINT script of a model under a choice of function_hazards: one transaction, sections header to finish';

-- Refuses, listing every blocker, when no correct script can be produced:
-- the model's blocker rows plus what the writer cannot do (more_blockers,
-- SQLSTATE 0A000); also when nothing is left to convert.  mode is not read:
-- both callers (the blocking pre-flight, part 27, and the online one, part
-- 63) pass 'blocking' and no more_blockers since mode shadow, whose writer
-- passed others, was removed.
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

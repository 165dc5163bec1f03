-- storagelab install script, part 21: INT -> BIGINT script writers on the
-- dependency model of part 20.
--
--   storagelab.bigint_migration_script(relation, column_name, mode)
--   storagelab.bigint_migration_group_script(relations[], column_names[], mode)
--       mode 'blocking': one transaction, written here; mode 'online': part 22
--   storagelab.bigint_migration_plan(mode)
--       one script per group of columns that int_overflow rates warning or
--       critical

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The script writer ----------------------------------------------------------

CREATE FUNCTION storagelab.bigint_migration_group_script(relations regclass[], column_names name[], mode text DEFAULT 'blocking')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs       storagelab.bigint_migration_object[];
  o          storagelab.bigint_migration_object;
  r          record;
  s          text := '';
  body       text;
  lock_list  text;
  all_tables text[];
  blockers   text;
  codes      text[];
  heap_b     numeric;
  idx_b      numeric;
  est_bytes  numeric := 0;
  fk_bytes   numeric := 0;
  mbps       numeric;
  lt         text := storagelab_internal.setting('scripts.lock_timeout');
  retries    int := storagelab_internal.setting('scripts.lock_retries')::int;
  max_age    text := storagelab_internal.setting('bigint_migration.max_blocking_transaction_age');
  n          int;
BEGIN
  IF mode IS NULL THEN
    RAISE EXCEPTION 'mode must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use mode => ''blocking''.';
  ELSIF mode = 'online' THEN
    -- part 22: phases expand, backfill, prepare, swap, cleanup on the same model
    RETURN storagelab.bigint_migration_online_script(relations, column_names);
  ELSIF mode <> 'blocking' THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid modes are ''blocking'' and ''online''.';
  END IF;
  mbps := greatest(coalesce(nullif(storagelab_internal.setting('bigint_migration.rewrite_mb_per_second'), '')::numeric, 50), 1);

  SELECT array_agg(x) INTO objs FROM storagelab.bigint_migration_group_objects(relations, column_names) x;

  -- Refuse, listing every blocker, when no correct script can be produced.
  SELECT string_agg(format('%s (SQLSTATE %s): %s', b.blocker, b.sqlstate, b.hint), E'\n' ORDER BY b.identity, b.blocker),
         array_agg(DISTINCT b.sqlstate), count(*)
    INTO blockers, codes, n
    FROM unnest(objs) b WHERE b.kind = 'blocker';
  IF n > 0 THEN
    RAISE EXCEPTION 'cannot generate a correct INT to BIGINT migration: % blocker(s)', n
      USING ERRCODE = CASE WHEN cardinality(codes) = 1 THEN codes[1] ELSE '0A000' END,
            DETAIL = blockers,
            HINT = 'Resolve each blocker listed in the detail (storagelab.bigint_migration_objects() shows them with kind ''blocker'') and generate the script again.';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM unnest(objs) x
                  WHERE x.kind IN ('column', 'sequence') AND x.create_sql IS NOT NULL) THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component and its sequences are already bigint'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'storagelab.bigint_migration_objects() lists the component.';
  END IF;

  -- Tables: every table whose columns change or that carries a re-created object.
  all_tables := ARRAY(SELECT DISTINCT storagelab.bigint_migration_qname(x.relation)
                        FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  -- LOCK TABLE recurses to partitions and inheritance children: name only the others.
  lock_list := (SELECT string_agg(t, ', ' ORDER BY t) FROM unnest(all_tables) t
                 WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i
                                    WHERE i.inhrelid = t::regclass
                                      AND storagelab.bigint_migration_qname(i.inhparent) = ANY (all_tables)));

  ---------------------------------------------------------------- header
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode blocking)\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'));
  s := s || '-- requested: ' || storagelab.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab.bigint_migration_qname(x.r), x.c), ', ')
                 FROM unnest(relations, column_names) AS x(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s (%s)\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab.bigint_migration_comment_text(quote_ident(current_user)),
                   split_part(version(), ',', 1));
  s := s || E'-- run with: psql -v ON_ERROR_STOP=1 -f <this file>   (as the owner of the objects, or a superuser)\n'
         || E'-- dry run: add -v dry_run=1 to do everything and ROLLBACK (e.g. on a pg_dump --schema-only copy)\n'
         || E'-- One transaction: if any step fails, nothing is changed, and the script can simply be run again.\n--\n';
  s := s || E'-- Columns of the foreign-key component:\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
  END LOOP;

  s := s || E'-- Tables rewritten, with their indexes (partitions and inheritance children included):\n';
  FOR r IN
    SELECT x.relation, storagelab.bigint_migration_qname(x.relation) AS qn
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
                     storagelab.bigint_migration_comment_text(r.qn), pg_size_pretty(heap_b), pg_size_pretty(idx_b));
  END LOOP;

  s := s || format(E'-- Locks: ACCESS EXCLUSIVE on these tables (and their partitions/children) until COMMIT,\n'
                   '-- taken in this one order with lock_timeout %s and up to %s retries:\n--   %s\n',
                   storagelab.bigint_migration_comment_text(lt), retries,
                   storagelab.bigint_migration_comment_text(lock_list));

  s := s || E'-- Foreign keys dropped before the type change and re-added after it (each re-validated once):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    SELECT coalesce(sum(pg_relation_size(t)), 0) INTO heap_b
      FROM pg_constraint c, LATERAL (VALUES (c.conrelid), (c.confrelid)) v(t) WHERE c.oid = o.objid;
    fk_bytes := fk_bytes + heap_b;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Sequences:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind IN ('sequence', 'identity') ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity || ' (' || o.relation::text || '.' || quote_ident(o.column_name) || '): ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Objects dropped and re-created inside the transaction:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity || ': ' || o.handling) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;
  s := s || E'-- Trigger functions touched so that other sessions re-plan them:\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'trigger_function' ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || E'-- Rebuilt in place by ALTER COLUMN TYPE (definitions, names, comments kept):\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind IN ('index', 'constraint', 'statistics') AND x.create_sql IS NULL
            ORDER BY x.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n';
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'--   (none)\n'; END IF;

  s := s || format(E'-- Estimated duration: about %s s (%s of tables and indexes rewritten at an assumed %s MB/s,\n'
                   '-- plus %s of foreign-key validation scans at 4 times that rate; setting bigint_migration.rewrite_mb_per_second)\n\n',
                   ceil((est_bytes + fk_bytes / 4) / (mbps * 1048576)),
                   pg_size_pretty(est_bytes), mbps, pg_size_pretty(fk_bytes));

  ---------------------------------------------------------------- settings
  s := s || E'\\set ON_ERROR_STOP on\n';
  s := s || format(E'SET lock_timeout = %L;\n', lt);
  s := s || E'SET statement_timeout = 0;     -- the rewrite may take long; lock waits are bounded by lock_timeout\n';
  s := s || E'SET search_path = pg_catalog, pg_temp;   -- every name below is schema-qualified\n';
  s := s || E'SET check_function_bodies = off;   -- functions are re-created as they were, like pg_dump does\n\n';
  s := s || E'BEGIN;\n\n';

  ---------------------------------------------------------------- pre-flight
  body := E'\nDECLARE\n  problems text[] := ''{}'';\n  who text;\nBEGIN\n'
       || E'  -- the database must still look as it did when this script was generated\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'column' ORDER BY x.identity LOOP
    body := body || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped\n'
                           '                 AND atttypid = %L::regtype) THEN\n'
                           '    problems := problems || %L::text;\n  END IF;\n',
                           storagelab.bigint_migration_qname(o.relation), o.column_name,
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
                         (SELECT string_agg(format('(to_regclass(%L)::oid, %L::name)', storagelab.bigint_migration_qname(x.relation), x.column_name), ', ' ORDER BY x.identity)
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
       || E'  -- the role running the script must be able to do every step: own (be a member of the owner of)\n'
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
                             SELECT DISTINCT storagelab.bigint_migration_qname(x.relation) AS q FROM unnest(objs) x WHERE x.relation IS NOT NULL
                             UNION
                             SELECT storagelab.bigint_migration_qname(x.objid) FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL) z), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', x.objid::regprocedure::text), ', ')
                             FROM unnest(objs) x WHERE x.kind IN ('function', 'trigger_function')), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', b.pubname), ', ')
                             FROM unnest(objs) x JOIN pg_publication_rel pr ON pr.oid = x.objid JOIN pg_publication b ON b.oid = pr.prpubid
                            WHERE x.kind = 'publication_table'), ''),
                 coalesce((SELECT string_agg(DISTINCT format('%L', n.nspname), ', ')
                             FROM unnest(objs) x
                             JOIN pg_namespace n ON n.oid = CASE WHEN x.kind IN ('view', 'materialized_view') THEN (SELECT relnamespace FROM pg_class WHERE oid = x.objid)
                                                                 WHEN x.kind = 'function' THEN (SELECT pronamespace FROM pg_proc WHERE oid = x.objid)
                                                                 WHEN x.kind = 'statistics' THEN (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = x.objid) END
                            WHERE x.create_sql IS NOT NULL), ''))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''the role running this script cannot do every step of it''\n'
       || E'      USING ERRCODE = ''insufficient_privilege'', DETAIL = who,\n'
       || E'            HINT = ''Run the script as a superuser, or as a role that owns these objects (and may create objects in these schemas).'';\n  END IF;\n'
       || E'  -- a long-running transaction holding a lock on these tables would make every lock attempt time out\n'
       || format(E'  SELECT string_agg(DISTINCT format(''pid %%s (transaction started %%s ago, state %%s)'', a.pid, now() - a.xact_start, a.state), ''; '')\n'
                 '    INTO who\n'
                 '    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid\n'
                 '   WHERE l.pid <> pg_backend_pid() AND l.relation = ANY (ARRAY[%s]::regclass[])\n'
                 '     AND a.xact_start < now() - %L::interval;\n',
                 (SELECT string_agg(format('%L', storagelab.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x),
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
                 (SELECT string_agg(format('%L', storagelab.bigint_migration_qname(x.relation)), ', ' ORDER BY 1)
                    FROM (SELECT DISTINCT x.relation FROM unnest(objs) x JOIN pg_class c ON c.oid = x.relation
                           WHERE c.relkind IN ('r', 'p')) x))
       || E'  IF who IS NOT NULL THEN\n'
       || E'    RAISE EXCEPTION ''an anti-wraparound autovacuum is running on a table this migration converts''\n'
       || E'      USING ERRCODE = ''object_in_use'', DETAIL = who,\n'
       || E'            HINT = ''Let it finish (it does not yield its lock), then run the script again.'';\n  END IF;\n'
       || E'END\n';
  s := s || E'-- Pre-flight checks (no locks taken yet beyond catalog reads).\n'
         || 'DO ' || storagelab.bigint_migration_dollar_quote(body) || E';\n\n';

  ---------------------------------------------------------------- locks
  body := format(E'\nDECLARE\n  attempt int := 0;\nBEGIN\n  LOOP\n    BEGIN\n      LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n      EXIT;\n'
                 '    EXCEPTION WHEN lock_not_available THEN\n'
                 '      attempt := attempt + 1;\n'
                 '      IF attempt > %s THEN\n'
                 '        RAISE EXCEPTION ''could not lock the tables to convert after %% attempts'', attempt\n'
                 '          USING ERRCODE = ''lock_not_available'',\n'
                 '                HINT = ''Other sessions keep using these tables: run the script when traffic is lower, or stop the application.'';\n'
                 '      END IF;\n'
                 '      RAISE NOTICE ''lock attempt %%: timed out after %%, retrying'', attempt, current_setting(''lock_timeout'');\n'
                 '      PERFORM pg_sleep(least(0.1 * attempt, 2));\n'
                 '    END;\n  END LOOP;\nEND\n', lock_list, retries);
  s := s || E'-- Lock every table, in one order, all or none; retried on lock_timeout.\n'
         || 'DO ' || storagelab.bigint_migration_dollar_quote(body) || E';\n\n';

  ---------------------------------------------------------------- drops
  s := s || E'-- Drop the objects that would make ALTER COLUMN TYPE fail (dependents first).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key') AND x.drop_sql IS NOT NULL
            ORDER BY x.depth DESC, x.identity LOOP
    s := s || '-- ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n' || o.drop_sql;
    n := n + 1;
  END LOOP;
  IF n = 0 THEN s := s || E'-- (none)\n'; END IF;
  s := s || E'\n-- Drop the foreign keys of the component (ACCESS EXCLUSIVE on both tables, held already).\n';
  FOR o IN SELECT * FROM unnest(objs) x WHERE x.kind = 'foreign_key' ORDER BY x.identity LOOP
    s := s || o.drop_sql;
  END LOOP;

  ---------------------------------------------------------------- type changes
  s := s || E'\n-- Convert: one ALTER TABLE per table, so each table and its indexes are rewritten once.\n';
  FOR r IN
    SELECT x.relation, storagelab.bigint_migration_qname(x.relation) AS qn
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

  s := s || E'\n-- Re-create the dropped objects exactly as they were (in dependency order).\n';
  n := 0;
  FOR o IN SELECT * FROM unnest(objs) x
            WHERE x.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function') AND x.create_sql IS NOT NULL
            ORDER BY x.depth, x.identity LOOP
    s := s || '-- ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
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

  ---------------------------------------------------------------- post-checks
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
         || 'DO ' || storagelab.bigint_migration_dollar_quote(body) || E';\n\n';
  -- -v dry_run=1: everything above, then ROLLBACK (try it on a schema-only copy first)
  s := s || E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n\\quit\n\\else\nCOMMIT;\n\\endif\n\n';
  s := s || E'-- ALTER COLUMN TYPE discards the column statistics: gather them again (SHARE UPDATE EXCLUSIVE, no blocking of DML).\n';
  FOR r IN
    SELECT storagelab.bigint_migration_qname(x.relation) AS qn
      FROM unnest(objs) x WHERE x.kind = 'column' AND x.create_sql IS NOT NULL
     GROUP BY x.relation ORDER BY 1
  LOOP
    s := s || format(E'ANALYZE %s;\n', r.qn);
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text) IS
  'psql script converting several int columns (and their foreign-key components and everything depending on them) to bigint: mode blocking (one transaction, each table rewritten once) or online';

CREATE FUNCTION storagelab.bigint_migration_script(relation regclass, column_name name, mode text DEFAULT 'blocking')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF relation IS NULL OR column_name IS NULL THEN
    RAISE EXCEPTION 'relation and column_name must not be NULL'
      USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Call storagelab.bigint_migration_script(''schema.table'', ''column'').';
  END IF;
  RETURN storagelab.bigint_migration_group_script(ARRAY[relation], ARRAY[column_name], mode);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_script(regclass, name, text) IS
  'psql script (run with psql -v ON_ERROR_STOP=1 -f) converting relation.column_name, its whole foreign-key component and every dependent object from int to bigint; mode blocking (one transaction) or online (phases chosen with -v phase=...)';

-- The plan ------------------------------------------------------------------

CREATE FUNCTION storagelab.bigint_migration_plan(mode text DEFAULT 'blocking')
RETURNS TABLE (step int, risk text, columns text[], tables text[], script text, blockers text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r        record;
  g        record;
  grp      int[];        -- group of every candidate row (union of components sharing a table)
  rels     regclass[] := '{}';
  cols     name[] := '{}';
  risks    text[] := '{}';
  tabsets  text[] := '{}';   -- per row: its component's tables, comma-joined
  i int; j int; changed boolean;
  msg text; det text; st text;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid modes are ''blocking'' and ''online''.';
  END IF;
  -- storagelab.int_overflow (another part of storagelab) is resolved when
  -- this runs, not when it is created.
  IF to_regclass('storagelab.int_overflow') IS NULL THEN
    RAISE EXCEPTION 'storagelab.int_overflow does not exist'
      USING ERRCODE = 'undefined_table',
            HINT = 'Install the storagelab version that provides the int_overflow view.';
  END IF;
  FOR r IN EXECUTE
    'SELECT o.relation, o.column_name, o.severity AS risk FROM storagelab.int_overflow o
      WHERE o.severity IN (''warning'', ''critical'')
      ORDER BY (o.severity = ''critical'') DESC, o.relation::text, o.column_name'
  LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.relation AND c.relkind IN ('r', 'p')) THEN
      CONTINUE;                                   -- sequences or views, if the view lists them
    END IF;
    rels := rels || r.relation::regclass; cols := cols || r.column_name::name; risks := risks || r.risk::text;
    BEGIN
      tabsets := tabsets || coalesce((SELECT string_agg(DISTINCT x.relation::oid::text, ',')
                                        FROM storagelab.bigint_migration_objects(r.relation, r.column_name) x
                                       WHERE x.kind = 'column'), '');
    EXCEPTION WHEN OTHERS THEN
      tabsets := tabsets || ''::text;
    END;
  END LOOP;
  IF cardinality(rels) = 0 THEN
    RETURN;
  END IF;

  -- Group the columns whose components share a table, so that every table
  -- is rewritten once: union-find by repeated relaxation.
  grp := ARRAY(SELECT generate_series(1, cardinality(rels)));
  LOOP
    changed := false;
    FOR i IN 1 .. cardinality(rels) LOOP
      FOR j IN i + 1 .. cardinality(rels) LOOP
        IF grp[i] <> grp[j] AND tabsets[i] <> '' AND tabsets[j] <> ''
           AND string_to_array(tabsets[i], ',') && string_to_array(tabsets[j], ',') THEN
          grp[j] := least(grp[i], grp[j]); grp[i] := grp[j]; changed := true;
        END IF;
      END LOOP;
    END LOOP;
    EXIT WHEN NOT changed;
  END LOOP;

  step := 0;
  FOR g IN
    SELECT u.grp AS id,
           array_agg(u.rel ORDER BY u.ord) AS grels, array_agg(u.col ORDER BY u.ord) AS gcols,
           bool_or(u.risk = 'critical') AS crit, min(u.ord) AS first
      FROM unnest(grp, rels, cols, risks) WITH ORDINALITY AS u(grp, rel, col, risk, ord)
     GROUP BY u.grp
     ORDER BY bool_or(u.risk = 'critical') DESC, min(u.ord)
  LOOP
    step := step + 1;
    risk := CASE WHEN g.crit THEN 'critical' ELSE 'warning' END;
    columns := ARRAY(SELECT format('%s.%I', storagelab.bigint_migration_qname(x.r), x.c)
                       FROM unnest(g.grels, g.gcols) AS x(r, c));
    tables := ARRAY(SELECT DISTINCT storagelab.bigint_migration_qname(x.relation)
                      FROM storagelab.bigint_migration_group_objects(g.grels, g.gcols) x
                     WHERE x.kind = 'column' ORDER BY 1);
    BEGIN
      script := storagelab.bigint_migration_group_script(g.grels, g.gcols, mode);
      blockers := NULL;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
      script := NULL;
      blockers := format('%s: %s%s', st, msg, CASE WHEN det <> '' THEN E'\n' || det ELSE '' END);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_plan(text) IS
  'one INT->BIGINT migration script (mode blocking or online) per group of columns that storagelab.int_overflow rates warning or critical (columns whose foreign-key components share a table are grouped, so each table is rewritten once); critical groups first; blockers instead of a script when none can be produced';

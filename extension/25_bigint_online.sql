-- storagelab install script, part 25: the shadow-column INT -> BIGINT
-- script (bigint_migration_script(..., mode => 'shadow'); it was mode
-- 'online' in 1.0, which is now copy and swap, part 63): one psql file in
-- phases, chosen with -v phase=..., one function per phase (or part of one):
--   expand    shadow bigint columns, a sync trigger, sequences AS bigint (brief locks)
--   backfill  CALLs of storagelab.bigint_migration_backfill (part 26), resumable
--   prepare   NOT NULL proofs, concurrent indexes, new FKs NOT VALID + VALIDATE
--   swap      one short transaction: renames, constraints USING INDEX, objects re-created
--   cleanup   drop the old columns
--   rollback_prepare, rollback_expand: undo, until swap
-- Every phase checks the state it needs and can be run again.  Each
-- function reads the online model (part 24) only.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The comment header and psql preamble of an online script: phases, columns, objects re-created, function hazards, phase selection.
CREATE FUNCTION storagelab_internal.bigint_migration_online_header(m storagelab_internal.bigint_online_model, function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  relations    regclass[] := m.relations;
  column_names name[] := m.column_names;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_old        name[] := m.c_old;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  i            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
BEGIN
  ------------------------------------------------------------------ header
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode shadow), migration id %s\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid);
  s := s || '-- requested: ' || storagelab_internal.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(u.r), u.c), ', ')
                 FROM unnest(relations, column_names) AS u(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab_internal.bigint_migration_comment_text(quote_ident(current_user)));
  s := s || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=expand   -f <this file>  -- shadow bigint columns, sync trigger, sequences AS bigint (brief ACCESS EXCLUSIVE, retried)\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=backfill -f <this file>  -- copy in batches (ROW EXCLUSIVE); resumes where it stopped; -v backfill_batches=N stops after N batches\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=prepare  -f <this file>  -- NOT NULL proofs, CREATE INDEX CONCURRENTLY, new FKs NOT VALID + VALIDATE (no blocking locks)\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE: the point of no return\n'
         || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old int columns (brief ACCESS EXCLUSIVE)\n'
         || E'-- Before swap, undo with phase=rollback_prepare, then phase=rollback_expand.\n'
         || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n--\n';
  s := s || E'-- Columns converted (shadow column -> final name):\n';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(format('%s.%I via %I (old values kept in %I until cleanup)',
                storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i], c_new[i], c_old[i])) || E'\n';
  END LOOP;
  s := s || E'-- Objects dropped and re-created in the swap:\n';
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function')
                                          AND b.create_sql IS NOT NULL ORDER BY b.depth, b.identity LOOP
    s := s || '--   ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n';
  END LOOP;
  s := s || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards);   -- part 28
  s := s || E'\n\\set ON_ERROR_STOP on\n'
         || format(E'SET lock_timeout = %L;\n', lt)
         || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
         || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
         || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
         || E'SELECT :''phase'' = ''expand'' AS ph_expand, :''phase'' = ''backfill'' AS ph_backfill, :''phase'' = ''prepare'' AS ph_prepare,\n'
         || E'       :''phase'' = ''swap'' AS ph_swap, :''phase'' = ''cleanup'' AS ph_cleanup,\n'
         || E'       :''phase'' = ''rollback_prepare'' AS ph_rollback_prepare, :''phase'' = ''rollback_expand'' AS ph_rollback_expand \\gset\n'
         || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n';
  -- refuse an unknown phase
  s := s || E'SELECT :''phase'' NOT IN (''expand'', ''backfill'', ''prepare'', ''swap'', ''cleanup'', ''rollback_prepare'', ''rollback_expand'') AS ph_bad \\gset\n'
         || E'\\if :ph_bad\n\\echo ''choose a phase: psql -v ON_ERROR_STOP=1 -v phase=expand|backfill|prepare|swap|cleanup|rollback_prepare|rollback_expand -f <this file>''\n'
         || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=expand (then backfill, prepare, swap, cleanup).'';\nEND\n') || E';\n\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_header(storagelab_internal.bigint_online_model, text) IS
  'The comment header and psql preamble of an online script: phases, columns, objects re-created, function hazards, phase selection.';

-- Phase expand: shadow columns, sync function and trigger, backfill bounds, sequences AS bigint.
CREATE FUNCTION storagelab_internal.bigint_migration_online_expand(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  tabs         oid[] := m.tabs;
  leaves       oid[] := m.leaves;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_root       oid[] := m.t_root;
  pre          text := m.pre;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  x            text;
  k            int;
  stmts        text[];
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ expand
  s := s || E'\\if :ph_expand\n-- Phase expand.\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n'
            || (SELECT string_agg(format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND atttypid IN (''int2''::regtype, ''int4''::regtype)) THEN\n'
                                         '    RAISE EXCEPTION ''column %%.%% is not an integer column any more'', %L, %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n  END IF;\n',
                                         storagelab_internal.bigint_migration_qname(u.r), u.nm, storagelab_internal.bigint_migration_qname(u.r), u.nm), '')
                  FROM unnest(c_rel, c_name) AS u(r, nm))
            || E'END\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    stmts := ARRAY[format('ALTER TABLE %s %s', x,
                          (SELECT string_agg(format('ADD COLUMN IF NOT EXISTS %I bigint', u.nw), ', ')
                             FROM unnest(c_rel, c_new) AS u(r, nw) WHERE u.r = tabs[k])),
                   format(E'CREATE OR REPLACE FUNCTION %I.%I() RETURNS trigger LANGUAGE plpgsql AS %s',
                          (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                          format('storagelab_sync_%s_%s', mid, tabs[k]),
                          storagelab_internal.dollar_quote(
                            E'\nBEGIN\n'
                            || (SELECT string_agg(format(E'  NEW.%I := NEW.%I;\n', u.nw, u.nm), '')
                                  FROM unnest(c_rel, c_new, c_name) AS u(r, nw, nm) WHERE u.r = tabs[k])
                            || E'  RETURN NEW;\nEND\n'))];
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(x) || E': shadow columns (added to partitions and children too) and the sync function\n'
           || storagelab_internal.retry_block(storagelab_internal.script_lock_sql(ARRAY[x], 'ACCESS EXCLUSIVE') || stmts, retries);
  END LOOP;
  -- the sync trigger: on each table that is not a partition (partitions get
  -- clones of their parent's trigger); named zz_... so that it fires after
  -- the application's own BEFORE triggers.  Its WHEN clause (a shadow column
  -- differs from its original) is evaluated just before the function would
  -- run, on NEW as the earlier triggers left it, so the function runs only
  -- when it has something to copy: INSERTs, UPDATEs of the key, UPDATEs of a
  -- row not yet backfilled; not for the backfill's own UPDATEs (without
  -- superuser rights they fire triggers) or rows already in sync.  Either
  -- way NEW leaves the trigger with every shadow column equal to its original.
  FOR r IN
    SELECT DISTINCT u.r2, u.root FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.r2 = ANY (targets) ORDER BY 1, 2
  LOOP
    x := storagelab_internal.bigint_migration_qname(r.r2);
    s := s || storagelab_internal.retry_block(ARRAY[
                format('DROP TRIGGER IF EXISTS %I ON %s', format('zz_storagelab_sync_%s_%s', mid, r.root), x),
                format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW WHEN (%s) EXECUTE FUNCTION %I.%I()',
                       format('zz_storagelab_sync_%s_%s', mid, r.root), x,
                       (SELECT string_agg(format('NEW.%I IS DISTINCT FROM NEW.%I', u.nw, u.nm), ' OR ' ORDER BY u.nw)
                          FROM unnest(c_rel, c_new, c_name) AS u(r3, nw, nm) WHERE u.r3 = r.root),
                       (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = r.root)),
                       format('storagelab_sync_%s_%s', mid, r.root))], retries);
  END LOOP;
  -- the backfill bound of each table with storage: its size once the trigger exists
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(leaves))) LOOP
    x := storagelab_internal.bigint_migration_qname(leaves[k]);
    s := s || format(E'INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block)\n'
                     '  VALUES (%L, %L, pg_relation_size(%L) / current_setting(''block_size'')::bigint)\n'
                     '  ON CONFLICT (migration, relation) DO NOTHING;\n', mid, x, x);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'sequence' AND b.create_sql IS NOT NULL ORDER BY b.identity LOOP
    s := s || storagelab_internal.retry_block(ARRAY[o.create_sql], retries);
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_expand(storagelab_internal.bigint_online_model) IS
  'Phase expand: shadow columns, sync function and trigger, backfill bounds, sequences AS bigint.';

-- Phase backfill: one CALL of storagelab_internal.bigint_migration_backfill per table with storage.
CREATE FUNCTION storagelab_internal.bigint_migration_online_backfill(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  batch        int := greatest(storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int, 1);
  btime        numeric := greatest(round(extract(epoch FROM storagelab_internal.setting('bigint_migration.backfill_batch_time')::interval) * 1000), 0);
  pause        text := storagelab_internal.setting('bigint_migration.backfill_pause');
  mid          text := m.mid;
  leaves       oid[] := m.leaves;
  t_rel        oid[] := m.t_rel;
  t_new        name[] := m.t_new;
  t_name       name[] := m.t_name;
  r            record;
  s            text := '';
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  s := s || E'\\if :ph_backfill\n-- Phase backfill: one COMMIT per batch of heap blocks, bounded by the table size when the\n'
         || E'-- sync trigger was installed (later rows are written by the trigger); progress in\n'
         || E'-- storagelab.bigint_migration_progress, so an interrupted backfill resumes.  Each batch is\n'
         || CASE WHEN btime > 0 THEN format(E'-- sized so that its copy takes about %s ms (its row locks are held that long, plus the\n', btime)
                 ELSE format(E'-- %s heap blocks (backfill_batch_time = 0; its row locks are held until its\n', batch) END
         || E'-- COMMIT).  As a superuser the batches run with session_replication_role = replica, so that\n'
         || E'-- user triggers (last_update columns, audit) do not fire for the copy.\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(leaves))) LOOP
    s := s || format(E'CALL storagelab.bigint_migration_backfill(%L, %L, %L, %L, %s, %s, %L, %s);\n',
                     mid, storagelab_internal.bigint_migration_qname(leaves[k]),
                     ARRAY(SELECT u.nw FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k] ORDER BY u.nw),
                     ARRAY(SELECT u.nm FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k] ORDER BY u.nw),
                     btime, batch, pause, retries);
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_backfill(storagelab_internal.bigint_online_model) IS
  'Phase backfill: one CALL of storagelab_internal.bigint_migration_backfill per table with storage.';

-- Phase prepare, first part: the backfill is complete; the CHECK that proves the shadow columns exact (and NOT NULL), added NOT VALID and validated.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_checks(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_nn         boolean[] := m.c_nn;
  tabs         oid[] := m.tabs;
  leaves       oid[] := m.leaves;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  k            int;
  cols         text;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ prepare
  s := s || E'\\if :ph_prepare\n-- Phase prepare: nothing here blocks reads or writes for long.\n';
  -- the backfill must be complete and exact
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n'
            || format(E'  IF EXISTS (SELECT 1 FROM storagelab.bigint_migration_progress WHERE migration = %L AND NOT done)\n'
                      '     OR (SELECT count(*) FROM storagelab.bigint_migration_progress WHERE migration = %L) < %s THEN\n'
                      '    RAISE EXCEPTION ''the backfill is not complete'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase backfill (again).'';\n'
                      '  END IF;\n', mid, mid, cardinality(leaves))
            || E'END\n') || E';\n';
  -- The proof that the shadow columns are exact, and the NOT NULL proof, in
  -- one scan per table: a CHECK constraint (shadow = original, and shadow
  -- IS NOT NULL where the original is NOT NULL), added NOT VALID (brief
  -- ACCESS EXCLUSIVE, retried), then VALIDATEd (one scan under SHARE UPDATE
  -- EXCLUSIVE: reads and writes continue).  This replaces a separate
  -- comparison scan and is stronger: the comparison proved equality only at
  -- the moment it ran, while the constraint also holds every row written
  -- between prepare and swap, so a write that bypasses the sync trigger (a
  -- disabled trigger, session_replication_role = replica) fails instead of
  -- leaving a wrong value for the swap to keep.  The validated constraint
  -- also lets the swap's SET NOT NULL skip its scan (PostgreSQL proves
  -- NOT NULL from an AND of validated CHECK clauses).  The swap drops it.
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    cols := (SELECT string_agg(CASE WHEN u.nn THEN format('%I IS NOT NULL AND ', u.nw) ELSE '' END
                               || format('%I IS NOT DISTINCT FROM %I', u.nw, u.nm), ' AND ' ORDER BY u.nw)
               FROM unnest(c_rel, c_new, c_name, c_nn) AS u(r, nw, nm, nn) WHERE u.r = tabs[k]);
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(x) || E': the shadow columns equal the originals (and NOT NULL where they are)\n'
           || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                     x, format('storagelab_eq_%s', mid))
           || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s) NOT VALID', x, format('storagelab_eq_%s', mid), cols)], retries)
           || E'\\endif\n'
           || 'DO ' || storagelab_internal.dollar_quote(
                E'\nBEGIN\n'
                || storagelab_internal.retry_loop(
                     format(E'        EXECUTE %L;\n', format('ALTER TABLE %s VALIDATE CONSTRAINT %I', x, format('storagelab_eq_%s', mid))),
                     retries, 'Run this phase again later; it is safe to re-run.',
                     format(E'        WHEN check_violation THEN\n'
                            '          RAISE EXCEPTION ''shadow columns of %% differ from the originals'', %L USING ERRCODE = ''data_exception'', DETAIL = SQLERRM, HINT = %L;\n',
                            x, format('Check that the sync trigger is enabled and that no writer runs with session_replication_role = replica, then UPDATE storagelab.bigint_migration_progress SET done = false, next_block = 0, max_block = pg_relation_size(relation::regclass) / current_setting(''block_size'')::int WHERE migration = %L and run phase backfill again.', mid)))
                || E'END\n') || E';\n';
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_checks(storagelab_internal.bigint_online_model) IS
  'Phase prepare, first part: the backfill is complete; the CHECK that proves the shadow columns exact (and NOT NULL), added NOT VALID and validated.';

-- Phase prepare: the indexes of the shadow columns, concurrently, each a copy of its old index with every option.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_indexes(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  late_idx     oid[] := m.late_idx;
  r            record;
  q            record;
  s            text := '';
  x            text;
  i            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  -- indexes, concurrently
  FOR r IN
    SELECT i.indexrelid, i.indrelid, i.indisunique, i.indnkeyatts, i.indnatts,
           string_to_array(i.indkey::text, ' ')::int2[] AS keys, string_to_array(i.indoption::text, ' ')::int2[] AS opts,   -- 1-based
           i.indnullsnotdistinct, ic.reloptions, ic.reltablespace, am.amname,
           pg_get_expr(i.indpred, i.indrelid) AS pred,
           storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn, ic.relname,
           format('storagelab_new_%s', i.indexrelid) AS newname, ic.relkind,
           (SELECT nspname FROM pg_namespace WHERE oid = ic.relnamespace) AS nsp
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     -- indexes of tables with storage first, then partitioned ones, deepest first
     ORDER BY ic.relkind = 'I',
              (WITH RECURSIVE up(oid) AS (SELECT i.indrelid UNION SELECT h.inhparent FROM pg_inherits h JOIN up ON h.inhrelid = up.oid)
               SELECT count(*) FROM up) DESC, qn
  LOOP
    -- a copy of the old index on the shadow columns, from its definition in the model
    x := storagelab_internal.bigint_migration_index_copy(
           coalesce((SELECT b.definition FROM unnest(objs) b WHERE b.kind = 'index' AND b.objid = r.indexrelid LIMIT 1),
                    pg_get_indexdef(r.indexrelid)),
           r.indexrelid, r.newname::name, r.relkind <> 'I',
           ARRAY(SELECT u.a FROM unnest(t_rel, t_att) AS u(r2, a) WHERE u.r2 = r.indrelid ORDER BY u.a),
           ARRAY(SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.indrelid ORDER BY u.a));
    IF r.relkind = 'I' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype IN ('p', 'u')) THEN
      s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E': the partitioned key index is re-created by ADD PRIMARY KEY/UNIQUE in the swap, over its partitions'' new indexes\n';
    ELSIF r.relkind = 'I' THEN
      -- a partitioned index: created ON ONLY the parent (catalog only, brief SHARE lock), then
      -- the new indexes of its partitions are attached; it is valid once all are
      s := s || '-- for partitioned index ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E'\n'
             || format(E'SELECT to_regclass(%L) IS NULL AS need \\gset\n', format('%I.%I', r.nsp, r.newname))
             || E'\\if :need\n' || storagelab_internal.retry_block(ARRAY[x], retries) || E'\\endif\n';
      FOR q IN
        SELECT format('%I.%I', n.nspname, 'storagelab_new_' || h.inhrelid) AS child
          FROM pg_inherits h JOIN pg_class ci ON ci.oid = h.inhrelid JOIN pg_namespace n ON n.oid = ci.relnamespace
         WHERE h.inhparent = r.indexrelid
         ORDER BY ci.relkind = 'I', 1
      LOOP
        s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%L) AND inhparent = to_regclass(%L)) AS need \\gset\n',
                         q.child, format('%I.%I', r.nsp, r.newname))
               || E'\\if :need\n'
               || storagelab_internal.retry_block(ARRAY[format('ALTER INDEX %I.%I ATTACH PARTITION %s', r.nsp, r.newname, q.child)], retries)
               || E'\\endif\n';
      END LOOP;
    ELSE
      s := s || '-- for index ' || storagelab_internal.bigint_migration_comment_text(r.qn) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
             || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) AS need \\gset\n',
                       format('%I.%I', r.nsp, r.newname))
             || E'\\if :need\n'
             || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;   -- an invalid leftover of an interrupted run\n', r.nsp, r.newname)
             -- no lock_timeout here: the build waits for older transactions to finish (lock waits),
             -- and its SHARE UPDATE EXCLUSIVE lock does not hold up reads or writes
             || E'SET lock_timeout = 0;\n'
             || x || E';\n'
             || format(E'SET lock_timeout = %L;\n', lt)
             || E'\\endif\n';
    END IF;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_indexes(storagelab_internal.bigint_online_model) IS
  'Phase prepare: the indexes of the shadow columns, concurrently, each a copy of its old index with every option.';

-- Phase prepare, last part: new foreign keys on the shadow columns, NOT VALID then VALIDATE.
CREATE FUNCTION storagelab_internal.bigint_migration_online_prepare_keys(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  fk_oid       oid[] := m.fk_oid;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  r            record;
  q            record;
  s            text := '';
  x            text;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  -- new foreign keys on the shadow columns, NOT VALID then VALIDATE
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, c.confrelid, c.conkey::int2[] AS ck, c.confkey::int2[] AS fk, c.confupdtype, c.confdeltype,
           c.confmatchtype, c.condeferrable, c.condeferred, c.convalidated,
           storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, storagelab_internal.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key')
     ORDER BY qn, c.conname
  LOOP
    x := format('FOREIGN KEY (%s) REFERENCES %s (%s)%s ON UPDATE %s ON DELETE %s%s NOT VALID',
                (SELECT string_agg(quote_ident(coalesce((SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.conrelid AND u.a = k1.a),
                                                        (SELECT attname FROM pg_attribute WHERE attrelid = r.conrelid AND attnum = k1.a))), ', ' ORDER BY k1.n)
                   FROM unnest(r.ck) WITH ORDINALITY AS k1(a, n)),
                r.fqn,
                (SELECT string_agg(quote_ident(coalesce((SELECT u.nw FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.confrelid AND u.a = k1.a),
                                                        (SELECT attname FROM pg_attribute WHERE attrelid = r.confrelid AND attnum = k1.a))), ', ' ORDER BY k1.n)
                   FROM unnest(r.fk) WITH ORDINALITY AS k1(a, n)),
                CASE r.confmatchtype WHEN 'f' THEN ' MATCH FULL' ELSE '' END,
                CASE r.confupdtype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                CASE r.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    s := s || '-- for foreign key ' || storagelab_internal.bigint_migration_comment_text(format('%I on %s', r.conname, r.qn)) || E'\n';
    FOR q IN SELECT u.rel, u.nn, storagelab_internal.bigint_migration_qname(u.rel) AS tq FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) WHERE u.o2 = r.oid ORDER BY 3 LOOP
      s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                       q.tq, q.nn)
             -- referenced table first, as applications do (parent row, then child rows):
             -- the other order deadlocks with them
             || storagelab_internal.retry_block(ARRAY[storagelab_internal.script_lock_sql(ARRAY[r.fqn, q.tq], 'SHARE ROW EXCLUSIVE'),
                                                              format('ALTER TABLE %s ADD CONSTRAINT %I %s', q.tq, q.nn, x)], retries)
             || E'\\endif\n';
      IF r.convalidated THEN
        s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', q.tq, q.nn)], retries);
      END IF;
    END LOOP;
  END LOOP;
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_prepare_keys(storagelab_internal.bigint_online_model) IS
  'Phase prepare, last part: new foreign keys on the shadow columns, NOT VALID then VALIDATE.';

-- Phase swap, first part: BEGIN, the state checks, every table locked.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_begin(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  late_idx     oid[] := m.late_idx;
  fk_oid       oid[] := m.fk_oid;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  lock_list    text := m.lock_list;
  lock_rels    text[];
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ swap
  s := s || E'\\if :ph_swap\n-- Phase swap: one transaction; every table locked at once (retried on lock_timeout), then\n'
         || E'-- only catalog work: no scan, no rewrite.\nBEGIN;\n';
  -- pre-checks: prepare complete
  x := E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
       || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n';
  FOR r IN
    SELECT format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = i.indexrelid),
                  format('storagelab_new_%s', i.indexrelid)) AS nq
      FROM pg_index i
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
       AND NOT ((SELECT relkind FROM pg_class WHERE oid = i.indexrelid) = 'I'
                AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')))
  LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) THEN\n'
                     '    RAISE EXCEPTION ''index %% is missing or invalid'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     r.nq, r.nq);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated) THEN\n'
                     '    RAISE EXCEPTION ''the check that the shadow columns of %% are exact is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid), storagelab_internal.bigint_migration_qname(tabs[k]));
  END LOOP;
  FOR r IN SELECT u.o2, u.rel, u.nn FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) ORDER BY 1, 2 LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated = (SELECT convalidated FROM pg_constraint WHERE oid = %s)) THEN\n'
                     '    RAISE EXCEPTION ''the new foreign key %% is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(r.rel), r.nn, r.o2, r.nn);
  END LOOP;
  x := x || E'END\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(x) || E';\n';
  -- one table at a time within a budget, giving way to clients in a wait cycle (storagelab_internal.script_lock),
  -- after the views and materialized views the swap drops (outermost first, as a client reading one locks it
  -- before the tables); lock_list is the model's "s.t, s.u" (each name quoted where needed)
  lock_rels := ARRAY(SELECT rx[1] FROM regexp_matches(lock_list, '((?:"(?:[^"]|"")*"|[^",. ]+)\.(?:"(?:[^"]|"")*"|[^",. ]+))', 'g') rx);
  s := s || storagelab_internal.retry_block(ARRAY[
              CASE WHEN array_to_string(lock_rels, ', ') = lock_list
                   THEN storagelab_internal.script_lock_sql(
                          ARRAY(SELECT storagelab_internal.bigint_migration_qname(x.objid) FROM unnest(m.objs) x
                                 WHERE x.kind IN ('view', 'materialized_view') GROUP BY x.objid ORDER BY max(x.depth) DESC, x.objid)
                          || lock_rels, 'ACCESS EXCLUSIVE')
                   ELSE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list) END], retries);
  -- the views the swap drops and re-creates are as they were (one redefined since would be put back)
  x := storagelab_internal.bigint_migration_view_checks(m.objs);
  IF x <> '' THEN
    s := s || 'DO ' || storagelab_internal.dollar_quote(E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n' || x
                 || E'  IF cardinality(problems) > 0 THEN\n'
                 || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
                 || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
                 || E'            HINT = ''Redefine the view as it was and run this phase again (then redefine it after the swap), or roll back (phases rollback_prepare, rollback_expand) and generate the script again.'';\n'
                 || E'  END IF;\nEND\n') || E';\n';
  END IF;
  s := s || storagelab_internal.bigint_migration_plpgsql_check_sql(m.objs, 'before');   -- part 28
  s := s || E'-- the shadow columns are exact (the trigger kept them; nothing can write now)\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_begin(storagelab_internal.bigint_online_model) IS
  'Phase swap, first part: BEGIN, the state checks, every table locked.';

-- Phase swap: drop what names the old columns (dependent objects, statistics, old keys, CHECKs), old indexes renamed away.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_drop(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  i            int;
BEGIN
  -- drop dependent objects
  s := s || E'-- drop the objects that name the columns (re-created below on the new columns)\n';
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function', 'index', 'constraint', 'statistics')
              AND b.drop_sql IS NOT NULL ORDER BY b.depth DESC, b.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  FOR r IN
    SELECT DISTINCT s2.oid, format('%I.%I', n.nspname, s2.stxname) AS qn, pg_get_statisticsobjdef(s2.oid) AS def, s2.stxstattarget,
           obj_description(s2.oid, 'pg_statistic_ext') AS descr
      FROM pg_statistic_ext s2 JOIN pg_namespace n ON n.oid = s2.stxnamespace, unnest(t_rel, t_att) AS cc(r2, a)
     WHERE s2.stxrelid = cc.r2 AND cc.a = ANY (s2.stxkeys::int2[])
  LOOP
    s := s || format(E'DROP STATISTICS %s;\n', r.qn);
  END LOOP;
  -- old foreign keys, then old constraints
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'foreign_key' ORDER BY b.identity LOOP
    s := s || o.drop_sql;
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn
      FROM pg_constraint c
     WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY (tree) AND c.conparentid = 0
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
     ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;   -- with its partitions'' copies\n', r.qn, r.conname);
  END LOOP;
  -- other old indexes on the columns: renamed out of the way, dropped with the old column in cleanup
  FOR r IN
    SELECT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn
      FROM pg_index i
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u'))
     ORDER BY 2
  LOOP
    s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', r.qn, format('storagelab_old_%s', r.indexrelid));
  END LOOP;
  -- indexes that use the column in an expression or predicate: the old ones out of the way
  -- (dropped with the old column); cleanup builds them again, concurrently, on the new column
  FOR r IN SELECT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn FROM pg_index i WHERE i.indexrelid = ANY (late_idx) ORDER BY 2 LOOP
    s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', r.qn, format('storagelab_old_%s', r.indexrelid));
  END LOOP;
  -- CHECK constraints on the column: dropped here, re-added NOT VALID after the renames (enforced
  -- for new rows at once, no scan), validated in cleanup
  FOR r IN SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1 LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', r.qn, r.conname);
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_drop(storagelab_internal.bigint_online_model) IS
  'Phase swap: drop what names the old columns (dependent objects, statistics, old keys, CHECKs), old indexes renamed away.';

-- Phase swap: the columns renamed, NOT NULL, defaults, identity, statistics targets, comments, privileges, sequence ownership.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_columns(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_att        int2[] := m.c_att;
  c_name       name[] := m.c_name;
  c_new        name[] := m.c_new;
  c_old        name[] := m.c_old;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_name       name[] := m.t_name;
  o            storagelab.bigint_migration_object;
  r            record;
  q            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
BEGIN
  -- columns: renames, NOT NULL, defaults, sequence ownership, properties
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab_internal.bigint_migration_qname(c_rel[i]);
    SELECT a.attnotnull, a.attstattarget, a.attacl, col_description(a.attrelid, a.attnum) AS descr,
           pg_get_expr(d.adbin, d.adrelid) AS dflt INTO q
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = c_rel[i] AND a.attnum = c_att[i];
    s := s || format(E'ALTER TABLE %s RENAME COLUMN %I TO %I;\n', x, c_name[i], c_old[i])
           || format(E'ALTER TABLE %s RENAME COLUMN %I TO %I;\n', x, c_new[i], c_name[i]);
    IF q.attnotnull THEN
      s := s || format(E'ALTER TABLE %s ALTER COLUMN %I SET NOT NULL;   -- proven by the validated CHECK: no scan\n',
                       x, c_name[i]);
    END IF;
    IF q.dflt IS NOT NULL THEN
      -- a default "nextval(...)::integer" would fail past 2^31 on the new
      -- bigint column: it moves without the cast (as in the blocking plan)
      q.dflt := coalesce(substring(q.dflt FROM '^\((nextval\(''.*''::regclass\))\)::(?:integer|smallint)$'), q.dflt);
      s := s || format(E'ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT, ALTER COLUMN %I SET DEFAULT %s;\n', x, c_old[i], c_name[i], q.dflt);
    END IF;
  END LOOP;
  -- prepare's CHECK (shadow = original) has done its work: the old columns stop being written now
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid));
  END LOOP;
  -- identity columns: the old column gives its identity up, the new one gets the same sequence
  -- name and options (AS bigint; a custom MAXVALUE kept) and continues where the old one was
  FOR r IN
    SELECT a.attrelid, a.attname, a.attidentity, sq.seqrelid, sq.seqstart, sq.seqincrement, sq.seqmin, sq.seqmax, sq.seqcache, sq.seqcycle,
           storagelab_internal.bigint_migration_qname(sq.seqrelid) AS sqn, storagelab_internal.bigint_migration_qname(a.attrelid) AS qn, u.od
      FROM unnest(c_rel, c_att, c_old) AS u(r2, a2, od)
      JOIN pg_attribute a ON a.attrelid = u.r2 AND a.attnum = u.a2
      JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                      AND d.classid = 'pg_class'::regclass AND d.deptype = 'i'
      JOIN pg_sequence sq ON sq.seqrelid = d.objid
     WHERE a.attidentity <> ''
  LOOP
    s := s || 'DO ' || storagelab_internal.dollar_quote(format(
      E'\nDECLARE\n  lv bigint;\n  called boolean;\nBEGIN\n'
      '  SELECT last_value, is_called INTO lv, called FROM %s;\n'
      '  ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY;\n'
      '  ALTER TABLE %s ALTER COLUMN %I ADD GENERATED %s AS IDENTITY (SEQUENCE NAME %s INCREMENT BY %s%s%s START WITH %s CACHE %s%s);\n'
      '  PERFORM setval(%L, lv, called);\n'
      'END\n',
      r.sqn, r.qn, r.od, r.qn, r.attname, CASE r.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END, r.sqn, r.seqincrement,
      CASE WHEN r.seqmin IN (-2147483648, -32768, 1) THEN '' ELSE ' MINVALUE ' || r.seqmin END,
      CASE WHEN r.seqmax IN (2147483647, 32767, -1) THEN '' ELSE ' MAXVALUE ' || r.seqmax END,
      r.seqstart, r.seqcache, CASE WHEN r.seqcycle THEN ' CYCLE' ELSE '' END, r.sqn)) || E';\n';
  END LOOP;
  -- statistics targets, comments, column privileges: each table of each tree has its own
  FOR i IN 1 .. cardinality(t_rel) LOOP
    x := storagelab_internal.bigint_migration_qname(t_rel[i]);
    SELECT a.attstattarget, a.attacl, col_description(a.attrelid, a.attnum) AS descr INTO q
      FROM pg_attribute a WHERE a.attrelid = t_rel[i] AND a.attnum = t_att[i];
    IF q.attstattarget >= 0 THEN
      s := s || format(E'ALTER TABLE ONLY %s ALTER COLUMN %I SET STATISTICS %s;\n', x, t_name[i], q.attstattarget);
    END IF;
    IF q.descr IS NOT NULL THEN
      s := s || format(E'COMMENT ON COLUMN %s.%I IS %L;\n', x, t_name[i], q.descr);
    END IF;
    s := s || coalesce((SELECT string_agg(format(E'GRANT %s (%I) ON TABLE %s TO %s%s;\n', g.privilege_type, t_name[i], x,
                                                 CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
                                                 CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END), '')
                          FROM aclexplode(q.attacl) g), '');
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'sequence' ORDER BY b.identity LOOP
    IF EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = o.objid AND d.deptype = 'a'
                  AND d.refobjid = ANY (tree)) THEN
      SELECT d.refobjid, a.attname INTO q FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
       WHERE d.classid = 'pg_class'::regclass AND d.objid = o.objid AND d.deptype = 'a';
      s := s || format(E'ALTER SEQUENCE %s OWNED BY %s.%I;   -- else cleanup would drop it with the old column\n',
                       storagelab_internal.bigint_migration_qname(o.objid), storagelab_internal.bigint_migration_qname(q.refobjid), q.attname);
    END IF;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_columns(storagelab_internal.bigint_online_model) IS
  'Phase swap: the columns renamed, NOT NULL, defaults, identity, statistics targets, comments, privileges, sequence ownership.';

-- Phase swap: primary and unique keys on the new indexes, index names, replica identity, clustering, CHECKs re-added.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_keys(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tree         oid[] := m.tree;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_new        name[] := m.t_new;
  t_name       name[] := m.t_name;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  r            record;
  s            text := '';
  i            int;
  k            int;
  cols         text;
BEGIN
  -- constraints on the new indexes, index names, replica identity, clustering
  FOR r IN
    SELECT c.conname, c.contype, c.conindid, c.conrelid, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, c.condeferrable, c.condeferred,
           obj_description(c.oid, 'pg_constraint') AS descr, ic.relname AS idxname, t.relkind,
           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(a, n)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.a) AS cols
      FROM pg_constraint c JOIN pg_class ic ON ic.oid = c.conindid JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY (tree)
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
     -- partitions first, then their partitioned parents, deepest first
     ORDER BY t.relkind = 'p',
              (WITH RECURSIVE up(oid) AS (SELECT c.conrelid UNION SELECT h.inhparent FROM pg_inherits h JOIN up ON h.inhrelid = up.oid)
               SELECT count(*) FROM up) DESC, 3, 1
  LOOP
    IF r.relkind = 'p' THEN
      -- attaches the partitions' new constraints and indexes (no scan)
      s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s (%s)%s;\n', r.qn, r.conname,
                       CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, r.cols,
                       CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    ELSE
      s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', (SELECT format('%I.%I', n.nspname, 'storagelab_new_' || r.conindid)
                                                            FROM pg_class ic JOIN pg_namespace n ON n.oid = ic.relnamespace WHERE ic.oid = r.conindid), r.idxname)
             || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I%s;\n', r.qn, r.conname,
                       CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, r.idxname,
                       CASE WHEN r.condeferrable THEN ' DEFERRABLE INITIALLY ' || CASE WHEN r.condeferred THEN 'DEFERRED' ELSE 'IMMEDIATE' END ELSE '' END);
    END IF;
    s := s || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, ic.relname, n.nspname, i.indisreplident, i.indisclustered, storagelab_internal.bigint_migration_qname(i.indrelid) AS tqn,
           obj_description(i.indexrelid, 'pg_class') AS descr,
           EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')) AS iscon
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     ORDER BY 2
  LOOP
    IF NOT r.iscon THEN
      s := s || format(E'ALTER INDEX %I.%I RENAME TO %I;\n', r.nspname, 'storagelab_new_' || r.indexrelid, r.relname);
    END IF;
    IF r.descr IS NOT NULL THEN
      s := s || format(E'COMMENT ON INDEX %I.%I IS %L;\n', r.nspname, r.relname, r.descr);
    END IF;
    IF r.indisreplident THEN
      s := s || format(E'ALTER TABLE %s REPLICA IDENTITY USING INDEX %I;\n', r.tqn, r.relname);
    END IF;
    IF r.indisclustered THEN
      s := s || format(E'ALTER TABLE %s CLUSTER ON %I;\n', r.tqn, r.relname);
    END IF;
  END LOOP;
  -- index column names follow the table's (cosmetic: \d of the index)
  FOR r IN
    SELECT i.indexrelid, coalesce((SELECT c.conname FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')), ic.relname) AS finalname,
           n.nspname, u.nw, u.nm
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace,
           unnest(t_rel, t_att, t_new, t_name) AS u(r2, a, nw, nm)
     WHERE i.indrelid = u.r2 AND u.a = ANY (i.indkey::int2[]) AND NOT (i.indexrelid = ANY (late_idx))
       -- a partitioned key index is new from ADD PRIMARY KEY/UNIQUE, with the right names
       AND NOT (ic.relkind = 'I' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u')))
       -- the partitions of another partitioned index are renamed with it
       AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid
                          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = h.inhparent AND c.contype IN ('p', 'u')))
     ORDER BY 2, 4
  LOOP
    s := s || format(E'ALTER TABLE %I.%I RENAME COLUMN %I TO %I;\n', r.nspname, r.finalname, r.nw, r.nm);
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, pg_get_constraintdef(c.oid) AS def, c.convalidated,
           obj_description(c.oid, 'pg_constraint') AS descr
      FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s%s;\n', r.qn, r.conname, r.def, CASE WHEN r.convalidated THEN ' NOT VALID' ELSE '' END)
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_keys(storagelab_internal.bigint_online_model) IS
  'Phase swap: primary and unique keys on the new indexes, index names, replica identity, clustering, CHECKs re-added.';

-- Phase swap: NOT NULL names, foreign key names, sync triggers dropped, statistics and dependent objects re-created, trigger functions touched.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_finish(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_att        int2[] := m.c_att;
  c_name       name[] := m.c_name;
  c_old        name[] := m.c_old;
  c_nn         boolean[] := m.c_nn;
  tabs         oid[] := m.tabs;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_root       oid[] := m.t_root;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  fk_final     name[] := m.fk_final;
  o            storagelab.bigint_migration_object;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
BEGIN
  -- the old columns stop being written: no NOT NULL on them (after the
  -- replica identity moved off their indexes)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    CONTINUE WHEN NOT c_nn[i];
    s := s || format(E'ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL;\n', storagelab_internal.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;
  -- PostgreSQL 18+: the new column's NOT NULL constraint takes the old one's
  -- name, now free (see bigint_migration_not_null_name; the rename reaches
  -- the partitions' inherited copies)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab_internal.bigint_migration_not_null_name(c_rel[i], c_att[i]);
    CONTINUE WHEN NOT c_nn[i] OR x IS NULL;
    s := s || 'DO ' || storagelab_internal.dollar_quote(format(
      E'\nDECLARE\n  cn name;\nBEGIN\n'
      '  SELECT c.conname INTO cn FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]\n'
      '   WHERE c.conrelid = %L::regclass AND c.contype = %L AND a.attname = %L;\n'
      '  IF cn IS DISTINCT FROM %L THEN\n'
      '    EXECUTE format(%L, %L, cn, %L);\n'
      '  END IF;\n'
      'END\n',
      storagelab_internal.bigint_migration_qname(c_rel[i]), 'n', c_name[i], x,
      'ALTER TABLE %s RENAME CONSTRAINT %I TO %I', storagelab_internal.bigint_migration_qname(c_rel[i]), x)) || E';\n';
  END LOOP;
  -- new foreign keys take the old names
  FOR r IN SELECT u.rel, u.nn, u.fin FROM unnest(fk_rel, fk_new, fk_final) AS u(rel, nn, fin) ORDER BY 1, 2 LOOP
    s := s || format(E'ALTER TABLE %s RENAME CONSTRAINT %I TO %I;\n', storagelab_internal.bigint_migration_qname(r.rel), r.nn, r.fin);
  END LOOP;
  FOR r IN
    SELECT c.oid, c.conname, t.relkind, pg_get_constraintdef(c.oid) AS def, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn,
           obj_description(c.oid, 'pg_constraint') AS descr
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') ORDER BY 5, 2
  LOOP
    IF r.relkind = 'p' THEN
      -- attaches the partitions' validated keys (no scan)
      s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', r.qn, r.conname, r.def);
    END IF;
    s := s || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  -- the sync triggers go now: never copy bigint values into the old int columns
  FOR r IN
    SELECT DISTINCT u.r2, u.root FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.r2 = ANY (targets) ORDER BY 1, 2
  LOOP
    s := s || format(E'DROP TRIGGER %I ON %s;\n', format('zz_storagelab_sync_%s_%s', mid, r.root), storagelab_internal.bigint_migration_qname(r.r2));
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || format(E'DROP FUNCTION %I.%I();\n',
                     (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                     format('storagelab_sync_%s_%s', mid, tabs[k]));
  END LOOP;
  -- statistics objects and the other dropped objects, re-created by name on the new columns
  FOR r IN
    SELECT DISTINCT s2.oid, format('%I.%I', n.nspname, s2.stxname) AS qn, pg_get_statisticsobjdef(s2.oid) AS def, s2.stxstattarget,
           obj_description(s2.oid, 'pg_statistic_ext') AS descr
      FROM pg_statistic_ext s2 JOIN pg_namespace n ON n.oid = s2.stxnamespace, unnest(t_rel, t_att) AS cc(r2, a)
     WHERE s2.stxrelid = cc.r2 AND cc.a = ANY (s2.stxkeys::int2[])
  LOOP
    s := s || r.def || E';\n'
           || CASE WHEN r.stxstattarget >= 0 THEN format(E'ALTER STATISTICS %s SET STATISTICS %s;\n', r.qn, r.stxstattarget) ELSE '' END
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON STATISTICS %s IS %L;\n', r.qn, r.descr) END;
  END LOOP;
  -- (index, constraint and statistics rows with create_sql are those that
  -- depend on a dropped object, e.g. the indexes of a materialized view)
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind NOT IN ('column', 'generated_column', 'foreign_key', 'sequence', 'identity', 'trigger_function')
              AND b.create_sql IS NOT NULL ORDER BY b.depth, b.identity LOOP
    s := s || '-- ' || storagelab_internal.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'trigger_function' ORDER BY b.identity LOOP
    s := s || o.create_sql;
  END LOOP;
  s := s || storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after');   -- part 28
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_finish(storagelab_internal.bigint_online_model) IS
  'Phase swap: NOT NULL names, foreign key names, sync triggers dropped, statistics and dependent objects re-created, trigger functions touched.';

-- Phase swap, last part: the post-checks (roll back on any problem), COMMIT, ANALYZE.
CREATE FUNCTION storagelab_internal.bigint_migration_online_swap_postchecks(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs         storagelab.bigint_migration_object[] := m.objs;
  c_rel        oid[] := m.c_rel;
  c_name       name[] := m.c_name;
  tabs         oid[] := m.tabs;
  late_idx     oid[] := m.late_idx;
  o            storagelab.bigint_migration_object;
  s            text := '';
  x            text;
  i            int;
BEGIN
  -- post-checks
  x := E'\nDECLARE problems text[] := ''{}'';\nBEGIN\n';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := x || format(E'  IF NOT coalesce((SELECT atttypid = ''int8''::regtype FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped), false) THEN\n'
                     '    problems := problems || %L::text;\n  END IF;\n',
                     storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i],
                     format('%s.%I is not bigint', storagelab_internal.bigint_migration_qname(c_rel[i]), c_name[i]));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.check_sql IS NOT NULL AND b.kind <> 'column'
                                          AND NOT (b.kind = 'index' AND b.objid = ANY (late_idx)) ORDER BY b.identity LOOP   -- those come back in cleanup
    x := x || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n', o.check_sql, o.identity || ' is not as it should be');
  END LOOP;
  x := x || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''post-swap check failed; rolling back'' USING ERRCODE = ''data_exception'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'          HINT = ''Nothing was changed by this phase.'';\n  END IF;\nEND\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(x) || E';\nCOMMIT;\n';
  s := s || (SELECT string_agg(format(E'ANALYZE %s;\n', storagelab_internal.bigint_migration_qname(t1)), '') FROM unnest(tabs) t1);
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_swap_postchecks(storagelab_internal.bigint_online_model) IS
  'Phase swap, last part: the post-checks (roll back on any problem), COMMIT, ANALYZE.';

-- Phase cleanup: validate re-added CHECKs, rebuild expression and partial indexes, drop the old columns.
CREATE FUNCTION storagelab_internal.bigint_migration_online_cleanup(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_old        name[] := m.c_old;
  tabs         oid[] := m.tabs;
  late_idx     oid[] := m.late_idx;
  late_chk     oid[] := m.late_chk;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  lt           text := storagelab_internal.setting('scripts.lock_timeout');
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ cleanup
  s := s || E'\\if :ph_cleanup\n-- Phase cleanup: drop the old int columns (brief ACCESS EXCLUSIVE, no rewrite).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF NOT swapped AND EXISTS (SELECT 1 FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E') THEN\n'
            || E'    RAISE EXCEPTION ''the swap has not run yet'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase swap first.'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.oid = ANY (late_chk) AND c.convalidated ORDER BY 2, 1
  LOOP
    s := s || '-- validate ' || storagelab_internal.bigint_migration_comment_text(r.conname) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
           || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.qn, r.conname)], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, ic.relname, n.nspname, pg_get_indexdef(i.indexrelid) AS def, obj_description(i.indexrelid, 'pg_class') AS descr,
           i.indisclustered, storagelab_internal.bigint_migration_qname(i.indrelid) AS tqn
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indexrelid = ANY (late_idx) ORDER BY 2
  LOOP
    s := s || '-- re-build ' || storagelab_internal.bigint_migration_comment_text(r.relname) || E' on the new column, concurrently\n'
           || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid) AS need \\gset\n',
                     format('%I.%I', r.nspname, r.relname))
           || E'\\if :need\n'
           || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;   -- an invalid leftover of an interrupted run\n', r.nspname, r.relname)
           || E'SET lock_timeout = 0;   -- waits for older transactions; does not hold up reads or writes\n'
           || regexp_replace(r.def, '^CREATE (UNIQUE )?INDEX ', 'CREATE \1INDEX CONCURRENTLY ') || E';\n'
           || format(E'SET lock_timeout = %L;\n', lt) || E'\\endif\n'
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON INDEX %I.%I IS %L;\n', r.nspname, r.relname, r.descr) END
           || CASE WHEN r.indisclustered THEN format(E'ALTER TABLE %s CLUSTER ON %I;\n', r.tqn, r.relname) ELSE '' END;
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s %s', x,
                 (SELECT string_agg(format('DROP COLUMN IF EXISTS %I', u.od), ', ') FROM unnest(c_rel, c_old) AS u(r2, od) WHERE u.r2 = tabs[k]))], retries);
  END LOOP;
  s := s || format(E'DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L;\n', mid);
  s := s || E'\\endif\n\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_cleanup(storagelab_internal.bigint_online_model) IS
  'Phase cleanup: validate re-added CHECKs, rebuild expression and partial indexes, drop the old columns.';

-- Phases rollback_prepare and rollback_expand: undo prepare, then expand and backfill (before the swap only).
CREATE FUNCTION storagelab_internal.bigint_migration_online_rollback(m storagelab_internal.bigint_online_model)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mid          text := m.mid;
  c_rel        oid[] := m.c_rel;
  c_new        name[] := m.c_new;
  tabs         oid[] := m.tabs;
  tree         oid[] := m.tree;
  targets      oid[] := m.targets;
  t_rel        oid[] := m.t_rel;
  t_att        int2[] := m.t_att;
  t_root       oid[] := m.t_root;
  late_idx     oid[] := m.late_idx;
  fk_rel       oid[] := m.fk_rel;
  fk_new       name[] := m.fk_new;
  pre          text := m.pre;
  r            record;
  s            text := '';
  x            text;
  i            int;
  k            int;
  retries      int := storagelab_internal.setting('scripts.lock_retries')::int;
BEGIN
  ------------------------------------------------------------------ rollbacks
  s := s || E'\\if :ph_rollback_prepare\n-- Undo phase prepare (before swap only).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN SELECT u.rel, u.nn FROM unnest(fk_rel, fk_new) AS u(rel, nn) ORDER BY 1, 2 LOOP
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab_internal.bigint_migration_qname(r.rel), r.nn)], retries);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || storagelab_internal.retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab_internal.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid))], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, n.nspname, ic.relkind
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     ORDER BY ic.relkind = 'I' DESC, 1     -- partitioned indexes first (that drops their partitions' too)
  LOOP
    IF r.relkind = 'I' THEN
      s := s || storagelab_internal.retry_block(ARRAY[format('DROP INDEX IF EXISTS %I.%I', r.nspname, 'storagelab_new_' || r.indexrelid)], retries);
    ELSE
      s := s || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;\n', r.nspname, 'storagelab_new_' || r.indexrelid);
    END IF;
  END LOOP;
  s := s || E'\\endif\n\n';
  s := s || E'\\if :ph_rollback_expand\n-- Undo phases expand and backfill (before swap only; run rollback_prepare first).\n';
  s := s || 'DO ' || storagelab_internal.dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab_internal.bigint_migration_qname(tabs[k]);
    s := s || storagelab_internal.retry_block(
                ARRAY(SELECT format('DROP TRIGGER IF EXISTS %I ON %s', format('zz_storagelab_sync_%s_%s', mid, u.root), storagelab_internal.bigint_migration_qname(u.r2))
                        FROM unnest(t_rel, t_root) AS u(r2, root) WHERE u.root = tabs[k] AND u.r2 = ANY (targets) ORDER BY 1) || ARRAY[
                format('DROP FUNCTION IF EXISTS %I.%I()', (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                       format('storagelab_sync_%s_%s', mid, tabs[k])),
                format('ALTER TABLE %s %s', x, (SELECT string_agg(format('DROP COLUMN IF EXISTS %I', u.nw), ', ') FROM unnest(c_rel, c_new) AS u(r2, nw) WHERE u.r2 = tabs[k]))],
              retries);
  END LOOP;
  s := s || format(E'DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L;\n', mid)
         || E'-- the sequences stay AS bigint (harmless: the columns are still integer, so they stop at 2^31-1 as before)\n';
  s := s || E'\\endif\n';
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_rollback(storagelab_internal.bigint_online_model) IS
  'Phases rollback_prepare and rollback_expand: undo prepare, then expand and backfill (before the swap only).';

-- The online script of a model: the online model (refuses what the mode
-- cannot do), function_hazards applied (part 28), the phases above in order.
CREATE FUNCTION storagelab_internal.bigint_migration_online_script(objs storagelab.bigint_migration_object[],
                                                                   relations regclass[], column_names name[],
                                                                   function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m storagelab_internal.bigint_online_model := storagelab_internal.bigint_migration_online_model(objs, relations, column_names);
BEGIN
  m.objs := storagelab_internal.bigint_migration_apply_hazards(m.objs, function_hazards);   -- part 28
  RETURN storagelab_internal.bigint_migration_online_header(m, function_hazards)
      || storagelab_internal.bigint_migration_online_expand(m)
      || storagelab_internal.bigint_migration_online_backfill(m)
      || storagelab_internal.bigint_migration_online_prepare_checks(m)
      || storagelab_internal.bigint_migration_online_prepare_indexes(m)
      || storagelab_internal.bigint_migration_online_prepare_keys(m)
      || storagelab_internal.bigint_migration_online_swap_begin(m)
      || storagelab_internal.bigint_migration_online_swap_drop(m)
      || storagelab_internal.bigint_migration_online_swap_columns(m)
      || storagelab_internal.bigint_migration_online_swap_keys(m)
      || storagelab_internal.bigint_migration_online_swap_finish(m)
      || storagelab_internal.bigint_migration_online_swap_postchecks(m)
      || storagelab_internal.bigint_migration_online_cleanup(m)
      || storagelab_internal.bigint_migration_online_rollback(m);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the online INT->BIGINT script of a model under a choice of function_hazards: phases expand, backfill, prepare, swap, cleanup, and rollbacks';

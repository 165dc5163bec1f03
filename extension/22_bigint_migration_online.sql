-- storagelab install script, part 22: the online INT -> BIGINT script writer
-- (bigint_migration_script(..., mode => 'online')), on the dependency model
-- of part 20 (storagelab.bigint_migration_group_objects).
--
-- The script is one psql file in phases, chosen with -v phase=...:
--   expand    shadow bigint columns, a sync trigger, sequences AS bigint (brief locks)
--   backfill  keyset batches over block ranges, one COMMIT each, resumable
--   prepare   NOT NULL proofs, concurrent indexes, new FKs NOT VALID + VALIDATE
--   swap      one short transaction: renames, constraints USING INDEX, objects re-created
--   cleanup   drop the old columns
--   rollback_prepare, rollback_expand: undo, until swap
-- Every phase checks the state it needs and can be run again.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.backfill_batch_time', '200ms',
   'online migrations: how long each backfill batch should take (its copy statement; its row locks are held that long plus the COMMIT); the batch size in blocks is adapted after every batch; 0 = fixed batches of backfill_batch_blocks'),
  ('bigint_migration.backfill_batch_blocks', '64',
   'online migrations: heap blocks in the first backfill batch (in every batch when backfill_batch_time is 0)'),
  ('bigint_migration.backfill_pause', '20ms',
   'online migrations: pause between backfill batches (skipped after a batch that copied no row)');

CREATE TABLE storagelab.bigint_migration_progress (
  migration   text NOT NULL,
  relation    text NOT NULL,
  next_block  bigint NOT NULL DEFAULT 0,
  max_block   bigint NOT NULL,
  done        boolean NOT NULL DEFAULT false,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  batches     bigint NOT NULL DEFAULT 0,
  rows_copied bigint NOT NULL DEFAULT 0,
  batch_blocks bigint,
  last_batch_ms numeric,
  max_batch_ms numeric,
  started_at  timestamptz,
  PRIMARY KEY (migration, relation)
);
COMMENT ON TABLE storagelab.bigint_migration_progress IS
  'progress of the backfill phase of online INT->BIGINT migrations: per table, the next heap block to copy and the last block that existed when the sync trigger was installed';
COMMENT ON COLUMN storagelab.bigint_migration_progress.migration IS 'the migration id (sl... in the script header)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.relation IS 'the table with storage being backfilled (schema-qualified, quoted)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.next_block IS 'first heap block of the next batch';
COMMENT ON COLUMN storagelab.bigint_migration_progress.max_block IS 'table size in blocks when the sync trigger was installed: the backfill stops there';
COMMENT ON COLUMN storagelab.bigint_migration_progress.done IS 'true once every block up to max_block is copied';
COMMENT ON COLUMN storagelab.bigint_migration_progress.updated_at IS 'time of the last committed batch';
COMMENT ON COLUMN storagelab.bigint_migration_progress.batches IS 'batches committed so far';
COMMENT ON COLUMN storagelab.bigint_migration_progress.rows_copied IS 'rows the batches updated (rows the sync trigger had already written are skipped)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.batch_blocks IS 'size in blocks of the next batch (adapted to bigint_migration.backfill_batch_time)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.last_batch_ms IS 'milliseconds the copy statement of the last batch took (row locks are held that long plus the COMMIT)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.max_batch_ms IS 'longest copy statement of any batch so far, in milliseconds';
COMMENT ON COLUMN storagelab.bigint_migration_progress.started_at IS 'when the first batch started';
GRANT SELECT, INSERT, UPDATE, DELETE ON storagelab.bigint_migration_progress TO PUBLIC;

CREATE FUNCTION storagelab.bigint_migration_retry_block(stmts text[], retries int)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab.bigint_migration_dollar_quote(
    E'\nDECLARE\n  attempt int := 0;\nBEGIN\n  LOOP\n    BEGIN\n'
    || (SELECT string_agg(format(E'      EXECUTE %L;\n', regexp_replace(s, ';\s*$', '')), '' ORDER BY n)
          FROM unnest($1) WITH ORDINALITY AS u(s, n))
    || E'      EXIT;\n'
    || E'    EXCEPTION WHEN lock_not_available OR deadlock_detected THEN\n'
    || E'      attempt := attempt + 1;\n'
    || format(E'      IF attempt > %s THEN\n', $2)
    || E'        RAISE EXCEPTION ''gave up after % lock timeouts or deadlocks'', attempt\n'
    || E'          USING ERRCODE = ''lock_not_available'', HINT = ''Run this phase again later; it is safe to re-run.'';\n'
    || E'      END IF;\n'
    || E'      RAISE NOTICE ''lock attempt %: % (lock_timeout %), retrying'', attempt, SQLERRM, current_setting(''lock_timeout'');\n'
    || E'      PERFORM pg_sleep(least(0.1 * attempt, 2));\n'
    || E'    END;\n  END LOOP;\nEND\n') || E';\n'
$$;
COMMENT ON FUNCTION storagelab.bigint_migration_retry_block(text[], int) IS
  'a DO block running statements in one subtransaction, retried on lock_timeout or deadlock (for generated online scripts)';

CREATE FUNCTION storagelab.bigint_migration_online_script(relations regclass[], column_names name[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs      storagelab.bigint_migration_object[];
  o         storagelab.bigint_migration_object;
  r         record;
  q         record;
  s         text := '';
  x         text;
  mid       text;
  lt        text := storagelab_internal.setting('scripts.lock_timeout');
  retries   int := storagelab_internal.setting('scripts.lock_retries')::int;
  batch     int := greatest(storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int, 1);
  btime     numeric := greatest(round(extract(epoch FROM storagelab_internal.setting('bigint_migration.backfill_batch_time')::interval) * 1000), 0);
  pause     text := storagelab_internal.setting('bigint_migration.backfill_pause');
  blockers  text[] := '{}';
  -- converted columns
  c_rel     oid[] := '{}';
  c_att     int2[] := '{}';
  c_name    name[] := '{}';
  c_new     name[] := '{}';
  c_old     name[] := '{}';
  c_nn      boolean[] := '{}';
  tabs      oid[];           -- tables with converted columns (roots of their trees)
  tree      oid[];           -- those tables, their partitions and inheritance children
  leaves    oid[];           -- members of tree with storage (backfilled one by one)
  targets   oid[];           -- where the sync trigger is created (partitions get clones)
  t_rel     oid[] := '{}';   -- per member of tree and converted column: relation,
  t_att     int2[] := '{}';  --   its attnum there,
  t_new     name[] := '{}';  --   the shadow column,
  t_name    name[] := '{}';  --   the column name,
  t_root    oid[] := '{}';   --   the root whose ALTER converts it
  late_idx  oid[] := '{}';   -- indexes using the column in an expression or predicate: re-built after the swap
  late_chk  oid[] := '{}';   -- CHECK constraints on the column: re-added NOT VALID in the swap, validated in cleanup
  fk_oid    oid[] := '{}';   -- per new foreign key: the old one (of the component),
  fk_rel    oid[] := '{}';   --   the table it is added to (each partition, for a key on a partitioned table),
  fk_new    name[] := '{}';  --   its name until the swap,
  fk_final  name[] := '{}';  --   its name after the swap
  i         int;
  k         int;
  stmts     text[];
  cols      text;
  pre       text;
  swap_body text;
  lock_list text;
  all_tables text[];
  ph        text;
BEGIN
  SELECT array_agg(x1) INTO objs FROM storagelab.bigint_migration_group_objects(relations, column_names) x1;

  -- Blockers of the model itself, then what the online plan cannot do yet.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'blocker' LOOP
    blockers := blockers || format('%s (SQLSTATE %s): %s', o.blocker, o.sqlstate, o.hint);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind = 'generated_column'
               OR (b.kind = 'identity' AND (EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = b.relation OR h.inhparent = b.relation)
                                            OR (SELECT relkind FROM pg_class WHERE oid = b.relation) <> 'r'))
               OR (b.kind = 'constraint' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = b.objid AND c.contype NOT IN ('p', 'u', 'c', 'n')))   -- 'n': NOT NULL, PostgreSQL 18+
  LOOP
    blockers := blockers || format('%s: %s is not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', o.identity, o.kind);
  END LOOP;
  -- Converted columns.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'column' AND b.create_sql IS NOT NULL ORDER BY b.relation::oid, b.objsubid LOOP
    c_rel := c_rel || o.relation::oid; c_att := c_att || o.objsubid::int2; c_name := c_name || o.column_name;
    c_new := c_new || format('storagelab_new_%s', o.objsubid)::name;
    c_old := c_old || format('storagelab_old_%s', o.objsubid)::name;
    c_nn := c_nn || (SELECT attnotnull FROM pg_attribute WHERE attrelid = o.relation AND attnum = o.objsubid);
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = o.relation AND NOT attisdropped
                  AND attname IN (format('storagelab_new_%s', o.objsubid), format('storagelab_old_%s', o.objsubid))) THEN
      -- a previous run of this very migration left them: fine, phases are re-runnable
      NULL;
    END IF;
  END LOOP;
  tabs := ARRAY(SELECT DISTINCT u FROM unnest(c_rel) u ORDER BY 1);
  FOR i IN 1 .. cardinality(c_rel) LOOP
    FOR r IN
      WITH RECURSIVE tr(oid) AS (SELECT c_rel[i] UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
      SELECT tr.oid, a.attnum FROM tr JOIN pg_attribute a ON a.attrelid = tr.oid AND a.attname = c_name[i] AND NOT a.attisdropped
       ORDER BY 1
    LOOP
      t_rel := t_rel || r.oid; t_att := t_att || r.attnum; t_new := t_new || c_new[i]; t_name := t_name || c_name[i];
      t_root := t_root || c_rel[i];
    END LOOP;
  END LOOP;
  tree := ARRAY(SELECT DISTINCT u FROM unnest(t_rel) u ORDER BY 1);
  late_chk := ARRAY(SELECT c.oid FROM pg_constraint c
                     WHERE c.contype = 'c' AND c.conrelid = ANY (tree) AND c.coninhcount = 0
                       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
                     ORDER BY 1);
  leaves := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind = 'r' ORDER BY 1);
  targets := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1);
  FOR r IN SELECT c.oid, storagelab.bigint_migration_qname(c.oid) AS qn FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind NOT IN ('r', 'p') LOOP
    blockers := blockers || format('%s is a foreign table in the tree of a converted table: not supported by the online mode (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn, storagelab.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.confrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') AND t.relkind = 'p'
  LOOP
    blockers := blockers || format('foreign key %I on %s references the partitioned table %s, whose new unique key exists only after the swap: not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', r.conname, r.qn, r.fqn);
  END LOOP;
  -- the new foreign keys: PostgreSQL 15 cannot add one NOT VALID to a partitioned table, so a key
  -- of a partitioned table is added to each partition, and in the swap to the parent, which
  -- attaches the partitions' validated keys without a scan
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, t.relkind FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') ORDER BY 1
  LOOP
    IF r.relkind = 'p' THEN
      FOR q IN
        WITH RECURSIVE tr(oid) AS (SELECT r.conrelid UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
        SELECT tr.oid, (SELECT cc.conname FROM pg_constraint cc WHERE cc.conrelid = tr.oid AND cc.conparentid = r.oid) AS clone
          FROM tr JOIN pg_class k ON k.oid = tr.oid WHERE k.relkind = 'r' ORDER BY 1
      LOOP
        fk_oid := fk_oid || r.oid; fk_rel := fk_rel || q.oid;
        fk_new := fk_new || format('storagelab_new_%s_%s', r.oid, q.oid)::name; fk_final := fk_final || coalesce(q.clone, r.conname);
      END LOOP;
    ELSE
      fk_oid := fk_oid || r.oid; fk_rel := fk_rel || r.conrelid;
      fk_new := fk_new || format('storagelab_new_%s', r.oid)::name; fk_final := fk_final || r.conname;
    END IF;
  END LOOP;

  -- Indexes containing a converted column: their key columns must be plain
  -- columns (an expression or a predicate using the column cannot be moved
  -- by name).
  FOR r IN
    SELECT DISTINCT i.indexrelid, storagelab.bigint_migration_qname(i.indexrelid) AS qn
      FROM pg_index i
      JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid AND d.refclassid = 'pg_class'::regclass
      JOIN unnest(t_rel, t_att) AS cc(r, a) ON cc.r = d.refobjid AND cc.a = d.refobjsubid
     WHERE i.indrelid = ANY (tree)
  LOOP
    IF (SELECT count(*) FROM pg_depend d, unnest(t_rel, t_att) AS cc(r, a)
         WHERE d.classid = 'pg_class'::regclass AND d.objid = r.indexrelid AND d.refobjid = cc.r AND d.refobjsubid = cc.a)
       > (SELECT count(*) FROM pg_index i, unnest(i.indkey::int2[]) AS kk(v), unnest(t_rel, t_att) AS cc(r, a)
           WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a = kk.v) THEN
      IF (SELECT i.indisunique OR i.indisreplident OR ic.relkind = 'I' FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indexrelid = r.indexrelid) THEN
        blockers := blockers || format('index %s uses a converted column in an expression or predicate and is unique, partitioned or the replica identity: not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
      ELSE
        late_idx := late_idx || r.indexrelid;
      END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i, unnest(i.indkey::int2[], i.indclass::oid[]) WITH ORDINALITY AS u(a, opc, n), unnest(t_rel, t_att) AS cc(r, a2)
                WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a2 = u.a AND u.n <= i.indnkeyatts
                  AND NOT EXISTS (SELECT 1 FROM pg_opclass oc WHERE oc.oid = u.opc AND oc.opcdefault)) THEN
      blockers := blockers || format('index %s uses a non-default operator class on a converted column: not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype = 'x') THEN
      blockers := blockers || format('index %s backs an exclusion constraint: not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
    END IF;
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.contype = 'f' AND c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key')
       AND c.confdelsetcols IS NOT NULL
  LOOP
    blockers := blockers || format('foreign key %I on %s uses ON DELETE SET NULL/DEFAULT (columns): not supported by the online mode yet (SQLSTATE 0A000): use mode ''blocking''.', r.conname, r.qn);
  END LOOP;

  IF cardinality(blockers) > 0 THEN
    RAISE EXCEPTION 'cannot generate a correct online INT to BIGINT migration: % blocker(s)', cardinality(blockers)
      USING ERRCODE = 'feature_not_supported',
            DETAIL = array_to_string(blockers, E'\n'),
            HINT = 'Resolve each blocker listed in the detail, or use mode ''blocking''.';
  END IF;
  IF cardinality(c_rel) = 0 THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component is already bigint'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'storagelab.bigint_migration_objects() lists the component.';
  END IF;

  mid := 'sl' || left(md5(array_to_string(ARRAY(SELECT format('%s.%s', a, b) FROM unnest(c_rel, c_att) AS u(a, b) ORDER BY 1), ',')), 12);
  all_tables := ARRAY(SELECT DISTINCT storagelab.bigint_migration_qname(x1.relation)
                        FROM unnest(objs) x1 JOIN pg_class c ON c.oid = x1.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  lock_list := array_to_string(all_tables, ', ');

  ------------------------------------------------------------------ header
  s := s || format(E'-- storagelab %s: INT to BIGINT migration (mode online), migration id %s\n',
                   (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid);
  s := s || '-- requested: ' || storagelab.bigint_migration_comment_text(
              (SELECT string_agg(format('%s.%I', storagelab.bigint_migration_qname(u.r), u.c), ', ')
                 FROM unnest(relations, column_names) AS u(r, c))) || E'\n';
  s := s || format(E'-- generated %s in database %s by %s\n',
                   to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                   storagelab.bigint_migration_comment_text(quote_ident(current_database())),
                   storagelab.bigint_migration_comment_text(quote_ident(current_user)));
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
    s := s || '--   ' || storagelab.bigint_migration_comment_text(format('%s.%I via %I (old values kept in %I until cleanup)',
                storagelab.bigint_migration_qname(c_rel[i]), c_name[i], c_new[i], c_old[i])) || E'\n';
  END LOOP;
  s := s || E'-- Objects dropped and re-created in the swap:\n';
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind NOT IN ('column', 'foreign_key', 'sequence', 'identity', 'trigger_function')
                                          AND b.create_sql IS NOT NULL ORDER BY b.depth, b.identity LOOP
    s := s || '--   ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n';
  END LOOP;
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
         || 'DO ' || storagelab.bigint_migration_dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=expand (then backfill, prepare, swap, cleanup).'';\nEND\n') || E';\n\\endif\n\n';

  -- a state check used by several phases: has the swap happened?
  pre := '';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    pre := pre || format(E'  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped) THEN swapped := true; END IF;\n',
                         storagelab.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;

  ------------------------------------------------------------------ expand
  s := s || E'\\if :ph_expand\n-- Phase expand.\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase cleanup.'';\n  END IF;\n'
            || (SELECT string_agg(format(E'  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND atttypid IN (''int2''::regtype, ''int4''::regtype)) THEN\n'
                                         '    RAISE EXCEPTION ''column %%.%% is not an integer column any more'', %L, %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Generate the script again.'';\n  END IF;\n',
                                         storagelab.bigint_migration_qname(u.r), u.nm, storagelab.bigint_migration_qname(u.r), u.nm), '')
                  FROM unnest(c_rel, c_name) AS u(r, nm))
            || E'END\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab.bigint_migration_qname(tabs[k]);
    stmts := ARRAY[format('ALTER TABLE %s %s', x,
                          (SELECT string_agg(format('ADD COLUMN IF NOT EXISTS %I bigint', u.nw), ', ')
                             FROM unnest(c_rel, c_new) AS u(r, nw) WHERE u.r = tabs[k])),
                   format(E'CREATE OR REPLACE FUNCTION %I.%I() RETURNS trigger LANGUAGE plpgsql AS %s',
                          (SELECT nspname FROM pg_namespace WHERE oid = (SELECT relnamespace FROM pg_class WHERE oid = tabs[k])),
                          format('storagelab_sync_%s_%s', mid, tabs[k]),
                          storagelab.bigint_migration_dollar_quote(
                            E'\nBEGIN\n'
                            || (SELECT string_agg(format(E'  NEW.%I := NEW.%I;\n', u.nw, u.nm), '')
                                  FROM unnest(c_rel, c_new, c_name) AS u(r, nw, nm) WHERE u.r = tabs[k])
                            || E'  RETURN NEW;\nEND\n'))];
    s := s || '-- ' || storagelab.bigint_migration_comment_text(x) || E': shadow columns (added to partitions and children too) and the sync function\n'
           || storagelab.bigint_migration_retry_block(stmts, retries);
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
    x := storagelab.bigint_migration_qname(r.r2);
    s := s || storagelab.bigint_migration_retry_block(ARRAY[
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
    x := storagelab.bigint_migration_qname(leaves[k]);
    s := s || format(E'INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block)\n'
                     '  VALUES (%L, %L, pg_relation_size(%L) / current_setting(''block_size'')::bigint)\n'
                     '  ON CONFLICT (migration, relation) DO NOTHING;\n', mid, x, x);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'sequence' AND b.create_sql IS NOT NULL ORDER BY b.identity LOOP
    s := s || storagelab.bigint_migration_retry_block(ARRAY[o.create_sql], retries);
  END LOOP;
  s := s || E'\\endif\n\n';

  ------------------------------------------------------------------ backfill
  s := s || E'\\if :ph_backfill\n-- Phase backfill: one COMMIT per batch of heap blocks, bounded by the table size when the\n'
         || E'-- sync trigger was installed (later rows are written by the trigger); progress in\n'
         || E'-- storagelab.bigint_migration_progress, so an interrupted backfill resumes.  Each batch is\n'
         || CASE WHEN btime > 0 THEN format(E'-- sized so that its copy takes about %s ms (its row locks are held that long, plus the\n', btime)
                 ELSE format(E'-- %s heap blocks (backfill_batch_time = 0; its row locks are held until its\n', batch) END
         || E'-- COMMIT).  As a superuser the batches run with session_replication_role = replica, so that\n'
         || E'-- user triggers (last_update columns, audit) do not fire for the copy.\n';
  -- Batch sizing (when backfill_batch_time > 0): after each batch, the next
  -- one gets as many blocks as the measured copy rate (rows per ms of the
  -- last batch that copied rows, which includes any wait for a client's row
  -- lock) fills in the time budget, at the denser of the table's average
  -- density and the last batch's; it at most doubles from one batch to the
  -- next, and does not grow before a rate is known.  A batch that meets a
  -- client's row lock past lock_timeout is rolled back and retried with half
  -- its blocks.
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(leaves))) LOOP
    x := storagelab.bigint_migration_qname(leaves[k]);
    cols := (SELECT string_agg(format('%I = %I', u.nw, u.nm), ', ') FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k]);
    s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(format(
      E'\nDECLARE\n  b bigint;\n  maxb bigint;\n  isdone boolean;\n  n bigint;         -- blocks per batch\n  nbatch int := 0;\n  tries int;\n'
      '  nb bigint;        -- blocks in this batch: n, or fewer at the end of the table\n  nrows bigint;\n  repl boolean := false;   -- session_replication_role was set (superusers only)\n  t_start timestamptz := clock_timestamp();\n  t0 timestamptz;\n  ms numeric;\n'
      '  rate numeric;      -- rows copied per ms by the last batch that copied rows\n'
      '  avgdens numeric;   -- rows per block, table average\n'
      '  target numeric := %s;   -- ms per batch (bigint_migration.backfill_batch_time); 0: fixed batches\n'
      '  limit_batches int := coalesce(nullif(current_setting(''storagelab.backfill_batches'', true), ''''), ''0'')::int;\n'
      'BEGIN\n'
      '  SELECT next_block, max_block, done, coalesce(batch_blocks, %s) INTO b, maxb, isdone, n FROM storagelab.bigint_migration_progress\n'
      '   WHERE migration = %L AND relation = %L;\n'
      '  IF NOT FOUND THEN\n'
      '    RAISE EXCEPTION ''phase expand has not run for %%'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase expand first.'';\n'
      '  END IF;\n'
      '  IF isdone THEN RETURN; END IF;\n'
      '  SELECT CASE WHEN relpages > 0 AND reltuples > 0 THEN reltuples / relpages ELSE 1 END INTO avgdens FROM pg_class WHERE oid = %L::regclass;\n'
      '  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN\n'
      '    SET session_replication_role = replica;\n'
      '    repl := true;\n'
      '  END IF;\n'
      '  WHILE b <= maxb LOOP\n'
      '    tries := 0;\n'
      '    LOOP\n'
      '      nb := greatest(least(n, maxb + 1 - b), 1);\n'
      '      t0 := clock_timestamp();\n'
      '      BEGIN\n'
      '        -- dynamic, with parameters: no PL/pgSQL variable can be mistaken for a column of the table\n'
      '        EXECUTE %L USING format(''(%%s,0)'', b)::tid, format(''(%%s,0)'', b + nb)::tid;\n'
      '        GET DIAGNOSTICS nrows = ROW_COUNT;\n'
      '        EXIT;\n'
      '      EXCEPTION WHEN lock_not_available OR deadlock_detected THEN\n'
      '        -- a row of this batch is locked by a client: give way, retry the batch with half its blocks\n'
      '        tries := tries + 1;\n'
      '        IF tries > %s THEN RAISE; END IF;\n'
      '        n := greatest(n / 2, 1);\n'
      '        PERFORM pg_sleep(least(0.1 * tries, 2));\n'
      '      END;\n'
      '    END LOOP;\n'
      '    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;\n'
      '    b := b + nb;\n'
      '    IF target > 0 AND nrows > 0 THEN\n'
      '      rate := nrows / greatest(ms, 0.01);\n'
      '    END IF;\n'
      '    IF target > 0 AND rate IS NOT NULL THEN\n'
      '      n := greatest(1, least(2 * n, floor(rate * target / greatest(avgdens, nrows::numeric / nb))));\n'
      '    END IF;\n'
      '    UPDATE storagelab.bigint_migration_progress\n'
      '       SET next_block = b, batch_blocks = n, batches = batches + 1, rows_copied = rows_copied + nrows,\n'
      '           last_batch_ms = round(ms, 1), max_batch_ms = greatest(max_batch_ms, round(ms, 1)),\n'
      '           started_at = coalesce(started_at, t_start), updated_at = now()\n'
      '     WHERE migration = %L AND relation = %L;\n'
      '    COMMIT;\n'
      '    nbatch := nbatch + 1;\n'
      '    IF limit_batches > 0 AND nbatch >= limit_batches THEN\n'
      '      RAISE NOTICE ''%% stopped after %% batches at block %% of %%; run phase backfill again to resume'', %L, nbatch, b, maxb;\n'
      '      IF repl THEN RESET session_replication_role; END IF;\n'
      '      RETURN;\n'
      '    END IF;\n'
      '    IF nrows > 0 THEN\n'
      '      PERFORM pg_sleep(extract(epoch FROM %L::interval));\n'
      '    END IF;\n'
      '  END LOOP;\n'
      '  IF repl THEN RESET session_replication_role; END IF;\n'
      '  UPDATE storagelab.bigint_migration_progress SET done = true, updated_at = now()\n'
      '   WHERE migration = %L AND relation = %L;\n'
      '  COMMIT;\n'
      'END\n',
      btime, batch, mid, x, x, x,
      format('UPDATE ONLY %s SET %s WHERE ctid >= $1 AND ctid < $2 AND (%s)', x, cols,
             (SELECT string_agg(format('%I IS DISTINCT FROM %I', u.nw, u.nm), ' OR ') FROM unnest(t_rel, t_new, t_name) AS u(r, nw, nm) WHERE u.r = leaves[k])),
      retries, mid, x, x, pause, mid, x)) || E';\n';
  END LOOP;
  s := s || E'\\endif\n\n';

  ------------------------------------------------------------------ prepare
  s := s || E'\\if :ph_prepare\n-- Phase prepare: nothing here blocks reads or writes for long.\n';
  -- the backfill must be complete and exact
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(
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
    x := storagelab.bigint_migration_qname(tabs[k]);
    cols := (SELECT string_agg(CASE WHEN u.nn THEN format('%I IS NOT NULL AND ', u.nw) ELSE '' END
                               || format('%I IS NOT DISTINCT FROM %I', u.nw, u.nm), ' AND ' ORDER BY u.nw)
               FROM unnest(c_rel, c_new, c_name, c_nn) AS u(r, nw, nm, nn) WHERE u.r = tabs[k]);
    s := s || '-- ' || storagelab.bigint_migration_comment_text(x) || E': the shadow columns equal the originals (and NOT NULL where they are)\n'
           || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                     x, format('storagelab_eq_%s', mid))
           || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s) NOT VALID', x, format('storagelab_eq_%s', mid), cols)], retries)
           || E'\\endif\n'
           || 'DO ' || storagelab.bigint_migration_dollar_quote(format(
                E'\nDECLARE\n  attempt int := 0;\nBEGIN\n  LOOP\n    BEGIN\n'
                '      EXECUTE %L;\n'
                '      EXIT;\n'
                '    EXCEPTION\n'
                '      WHEN check_violation THEN\n'
                '        RAISE EXCEPTION ''shadow columns of %% differ from the originals'', %L USING ERRCODE = ''data_exception'', DETAIL = SQLERRM, HINT = %L;\n'
                '      WHEN lock_not_available OR deadlock_detected THEN\n'
                '        attempt := attempt + 1;\n'
                '        IF attempt > %s THEN\n'
                '          RAISE EXCEPTION ''gave up after %% lock timeouts or deadlocks'', attempt\n'
                '            USING ERRCODE = ''lock_not_available'', HINT = ''Run this phase again later; it is safe to re-run.'';\n'
                '        END IF;\n'
                '        RAISE NOTICE ''lock attempt %%: %% (lock_timeout %%), retrying'', attempt, SQLERRM, current_setting(''lock_timeout'');\n'
                '        PERFORM pg_sleep(least(0.1 * attempt, 2));\n'
                '    END;\n'
                '  END LOOP;\n'
                'END\n',
                format('ALTER TABLE %s VALIDATE CONSTRAINT %I', x, format('storagelab_eq_%s', mid)), x,
                format('Check that the sync trigger is enabled and that no writer runs with session_replication_role = replica, then UPDATE storagelab.bigint_migration_progress SET done = false, next_block = 0 WHERE migration = %L and run phase backfill again.', mid),
                retries)) || E';\n';
  END LOOP;
  -- indexes, concurrently
  FOR r IN
    SELECT i.indexrelid, i.indrelid, i.indisunique, i.indnkeyatts, i.indnatts,
           string_to_array(i.indkey::text, ' ')::int2[] AS keys, string_to_array(i.indoption::text, ' ')::int2[] AS opts,   -- 1-based
           i.indnullsnotdistinct, ic.reloptions, ic.reltablespace, am.amname,
           pg_get_expr(i.indpred, i.indrelid) AS pred,
           storagelab.bigint_migration_qname(i.indexrelid) AS qn, ic.relname,
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
    cols := '';
    FOR k IN 1 .. r.indnatts LOOP
      IF k = r.indnkeyatts + 1 THEN cols := cols || ') INCLUDE ('; ELSIF k > 1 THEN cols := cols || ', '; END IF;
      SELECT u.nw INTO x FROM unnest(t_rel, t_att, t_new) AS u(r2, a, nw) WHERE u.r2 = r.indrelid AND u.a = r.keys[k];
      IF x IS NOT NULL THEN
        cols := cols || quote_ident(x)
                || CASE WHEN k <= r.indnkeyatts AND (r.opts[k] & 1) = 1 THEN ' DESC' ELSE '' END
                || CASE WHEN k <= r.indnkeyatts AND (r.opts[k] & 1) = 1 AND (r.opts[k] & 2) = 0 THEN ' NULLS LAST'
                        WHEN k <= r.indnkeyatts AND (r.opts[k] & 1) = 0 AND (r.opts[k] & 2) = 2 THEN ' NULLS FIRST' ELSE '' END;
      ELSE
        cols := cols || pg_get_indexdef(r.indexrelid, k, false);
      END IF;
    END LOOP;
    x := format('CREATE %sINDEX %s%I ON %s%s USING %I (%s)%s%s%s%s',
                CASE WHEN r.indisunique THEN 'UNIQUE ' ELSE '' END,
                CASE WHEN r.relkind = 'I' THEN '' ELSE 'CONCURRENTLY ' END, r.newname,
                CASE WHEN r.relkind = 'I' THEN 'ONLY ' ELSE '' END,
                storagelab.bigint_migration_qname(r.indrelid), r.amname, cols,
                CASE WHEN r.indnullsnotdistinct THEN ' NULLS NOT DISTINCT' ELSE '' END,
                CASE WHEN r.reloptions IS NOT NULL THEN ' WITH (' || array_to_string(r.reloptions, ', ') || ')' ELSE '' END,
                CASE WHEN r.reltablespace <> 0 THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = r.reltablespace)) ELSE '' END,
                CASE WHEN r.pred IS NOT NULL THEN ' WHERE ' || r.pred ELSE '' END);
    IF r.relkind = 'I' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype IN ('p', 'u')) THEN
      s := s || '-- ' || storagelab.bigint_migration_comment_text(r.qn) || E': the partitioned key index is re-created by ADD PRIMARY KEY/UNIQUE in the swap, over its partitions'' new indexes\n';
    ELSIF r.relkind = 'I' THEN
      -- a partitioned index: created ON ONLY the parent (catalog only, brief SHARE lock), then
      -- the new indexes of its partitions are attached; it is valid once all are
      s := s || '-- for partitioned index ' || storagelab.bigint_migration_comment_text(r.qn) || E'\n'
             || format(E'SELECT to_regclass(%L) IS NULL AS need \\gset\n', format('%I.%I', r.nsp, r.newname))
             || E'\\if :need\n' || storagelab.bigint_migration_retry_block(ARRAY[x], retries) || E'\\endif\n';
      FOR q IN
        SELECT format('%I.%I', n.nspname, 'storagelab_new_' || h.inhrelid) AS child
          FROM pg_inherits h JOIN pg_class ci ON ci.oid = h.inhrelid JOIN pg_namespace n ON n.oid = ci.relnamespace
         WHERE h.inhparent = r.indexrelid
         ORDER BY ci.relkind = 'I', 1
      LOOP
        s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%L) AND inhparent = to_regclass(%L)) AS need \\gset\n',
                         q.child, format('%I.%I', r.nsp, r.newname))
               || E'\\if :need\n'
               || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER INDEX %I.%I ATTACH PARTITION %s', r.nsp, r.newname, q.child)], retries)
               || E'\\endif\n';
      END LOOP;
    ELSE
      s := s || '-- for index ' || storagelab.bigint_migration_comment_text(r.qn) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
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
  -- new foreign keys on the shadow columns, NOT VALID then VALIDATE
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, c.confrelid, c.conkey::int2[] AS ck, c.confkey::int2[] AS fk, c.confupdtype, c.confdeltype,
           c.confmatchtype, c.condeferrable, c.condeferred, c.convalidated,
           storagelab.bigint_migration_qname(c.conrelid) AS qn, storagelab.bigint_migration_qname(c.confrelid) AS fqn
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
    s := s || '-- for foreign key ' || storagelab.bigint_migration_comment_text(format('%I on %s', r.conname, r.qn)) || E'\n';
    FOR q IN SELECT u.rel, u.nn, storagelab.bigint_migration_qname(u.rel) AS tq FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) WHERE u.o2 = r.oid ORDER BY 3 LOOP
      s := s || format(E'SELECT NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L) AS need \\gset\n\\if :need\n',
                       q.tq, q.nn)
             -- referenced table first, as applications do (parent row, then child rows):
             -- the other order deadlocks with them
             || storagelab.bigint_migration_retry_block(ARRAY[format('LOCK TABLE %s, %s IN SHARE ROW EXCLUSIVE MODE', r.fqn, q.tq),
                                                              format('ALTER TABLE %s ADD CONSTRAINT %I %s', q.tq, q.nn, x)], retries)
             || E'\\endif\n';
      IF r.convalidated THEN
        s := s || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', q.tq, q.nn)], retries);
      END IF;
    END LOOP;
  END LOOP;
  s := s || E'\\endif\n\n';

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
                     storagelab.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid), storagelab.bigint_migration_qname(tabs[k]));
  END LOOP;
  FOR r IN SELECT u.o2, u.rel, u.nn FROM unnest(fk_oid, fk_rel, fk_new) AS u(o2, rel, nn) ORDER BY 1, 2 LOOP
    x := x || format(E'  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = %L::regclass AND conname = %L AND convalidated = (SELECT convalidated FROM pg_constraint WHERE oid = %s)) THEN\n'
                     '    RAISE EXCEPTION ''the new foreign key %% is missing or not validated'', %L USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase prepare (again).'';\n  END IF;\n',
                     storagelab.bigint_migration_qname(r.rel), r.nn, r.o2, r.nn);
  END LOOP;
  x := x || E'END\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(x) || E';\n';
  s := s || storagelab.bigint_migration_retry_block(ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', lock_list)], retries);
  s := s || E'-- the shadow columns are exact (the trigger kept them; nothing can write now)\n';
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
    SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn
      FROM pg_constraint c
     WHERE c.contype IN ('p', 'u') AND c.conrelid = ANY (tree) AND c.conparentid = 0
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
     ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;   -- with its partitions'' copies\n', r.qn, r.conname);
  END LOOP;
  -- other old indexes on the columns: renamed out of the way, dropped with the old column in cleanup
  FOR r IN
    SELECT i.indexrelid, storagelab.bigint_migration_qname(i.indexrelid) AS qn
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
  FOR r IN SELECT i.indexrelid, storagelab.bigint_migration_qname(i.indexrelid) AS qn FROM pg_index i WHERE i.indexrelid = ANY (late_idx) ORDER BY 2 LOOP
    s := s || format(E'ALTER INDEX %s RENAME TO %I;\n', r.qn, format('storagelab_old_%s', r.indexrelid));
  END LOOP;
  -- CHECK constraints on the column: dropped here, re-added NOT VALID after the renames (enforced
  -- for new rows at once, no scan), validated in cleanup
  FOR r IN SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1 LOOP
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', r.qn, r.conname);
  END LOOP;
  -- columns: renames, NOT NULL, defaults, sequence ownership, properties
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab.bigint_migration_qname(c_rel[i]);
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
    s := s || format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', storagelab.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid));
  END LOOP;
  -- identity columns: the old column gives its identity up, the new one gets the same sequence
  -- name and options (AS bigint; a custom MAXVALUE kept) and continues where the old one was
  FOR r IN
    SELECT a.attrelid, a.attname, a.attidentity, sq.seqrelid, sq.seqstart, sq.seqincrement, sq.seqmin, sq.seqmax, sq.seqcache, sq.seqcycle,
           storagelab.bigint_migration_qname(sq.seqrelid) AS sqn, storagelab.bigint_migration_qname(a.attrelid) AS qn, u.od
      FROM unnest(c_rel, c_att, c_old) AS u(r2, a2, od)
      JOIN pg_attribute a ON a.attrelid = u.r2 AND a.attnum = u.a2
      JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
                      AND d.classid = 'pg_class'::regclass AND d.deptype = 'i'
      JOIN pg_sequence sq ON sq.seqrelid = d.objid
     WHERE a.attidentity <> ''
  LOOP
    s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(format(
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
    x := storagelab.bigint_migration_qname(t_rel[i]);
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
                       storagelab.bigint_migration_qname(o.objid), storagelab.bigint_migration_qname(q.refobjid), q.attname);
    END IF;
  END LOOP;
  -- constraints on the new indexes, index names, replica identity, clustering
  FOR r IN
    SELECT c.conname, c.contype, c.conindid, c.conrelid, storagelab.bigint_migration_qname(c.conrelid) AS qn, c.condeferrable, c.condeferred,
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
    SELECT i.indexrelid, ic.relname, n.nspname, i.indisreplident, i.indisclustered, storagelab.bigint_migration_qname(i.indrelid) AS tqn,
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
    SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn, pg_get_constraintdef(c.oid) AS def, c.convalidated,
           obj_description(c.oid, 'pg_constraint') AS descr
      FROM pg_constraint c WHERE c.oid = ANY (late_chk) ORDER BY 2, 1
  LOOP
    s := s || format(E'ALTER TABLE %s ADD CONSTRAINT %I %s%s;\n', r.qn, r.conname, r.def, CASE WHEN r.convalidated THEN ' NOT VALID' ELSE '' END)
           || CASE WHEN r.descr IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END;
  END LOOP;
  -- the old columns stop being written: no NOT NULL on them (after the
  -- replica identity moved off their indexes)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    CONTINUE WHEN NOT c_nn[i];
    s := s || format(E'ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL;\n', storagelab.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;
  -- PostgreSQL 18+: the new column's NOT NULL constraint takes the old one's
  -- name, now free (see bigint_migration_not_null_name; the rename reaches
  -- the partitions' inherited copies)
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := storagelab.bigint_migration_not_null_name(c_rel[i], c_att[i]);
    CONTINUE WHEN NOT c_nn[i] OR x IS NULL;
    s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(format(
      E'\nDECLARE\n  cn name;\nBEGIN\n'
      '  SELECT c.conname INTO cn FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]\n'
      '   WHERE c.conrelid = %L::regclass AND c.contype = %L AND a.attname = %L;\n'
      '  IF cn IS DISTINCT FROM %L THEN\n'
      '    EXECUTE format(%L, %L, cn, %L);\n'
      '  END IF;\n'
      'END\n',
      storagelab.bigint_migration_qname(c_rel[i]), 'n', c_name[i], x,
      'ALTER TABLE %s RENAME CONSTRAINT %I TO %I', storagelab.bigint_migration_qname(c_rel[i]), x)) || E';\n';
  END LOOP;
  -- new foreign keys take the old names
  FOR r IN SELECT u.rel, u.nn, u.fin FROM unnest(fk_rel, fk_new, fk_final) AS u(rel, nn, fin) ORDER BY 1, 2 LOOP
    s := s || format(E'ALTER TABLE %s RENAME CONSTRAINT %I TO %I;\n', storagelab.bigint_migration_qname(r.rel), r.nn, r.fin);
  END LOOP;
  FOR r IN
    SELECT c.oid, c.conname, t.relkind, pg_get_constraintdef(c.oid) AS def, storagelab.bigint_migration_qname(c.conrelid) AS qn,
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
    s := s || format(E'DROP TRIGGER %I ON %s;\n', format('zz_storagelab_sync_%s_%s', mid, r.root), storagelab.bigint_migration_qname(r.r2));
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
    s := s || '-- ' || storagelab.bigint_migration_comment_text(o.identity) || E'\n' || o.create_sql;
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'trigger_function' ORDER BY b.identity LOOP
    s := s || o.create_sql;
  END LOOP;
  -- post-checks
  x := E'\nDECLARE problems text[] := ''{}'';\nBEGIN\n';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    x := x || format(E'  IF NOT coalesce((SELECT atttypid = ''int8''::regtype FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped), false) THEN\n'
                     '    problems := problems || %L::text;\n  END IF;\n',
                     storagelab.bigint_migration_qname(c_rel[i]), c_name[i],
                     format('%s.%I is not bigint', storagelab.bigint_migration_qname(c_rel[i]), c_name[i]));
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.check_sql IS NOT NULL AND b.kind <> 'column'
                                          AND NOT (b.kind = 'index' AND b.objid = ANY (late_idx)) ORDER BY b.identity LOOP   -- those come back in cleanup
    x := x || format(E'  IF NOT coalesce(%s, false) THEN\n    problems := problems || %L::text;\n  END IF;\n', o.check_sql, o.identity || ' is not as it should be');
  END LOOP;
  x := x || E'  IF cardinality(problems) > 0 THEN\n'
       || E'    RAISE EXCEPTION ''post-swap check failed; rolling back'' USING ERRCODE = ''data_exception'', DETAIL = array_to_string(problems, ''; ''),\n'
       || E'          HINT = ''Nothing was changed by this phase.'';\n  END IF;\nEND\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(x) || E';\nCOMMIT;\n';
  s := s || (SELECT string_agg(format(E'ANALYZE %s;\n', storagelab.bigint_migration_qname(t1)), '') FROM unnest(tabs) t1);
  s := s || E'\\endif\n\n';

  ------------------------------------------------------------------ cleanup
  s := s || E'\\if :ph_cleanup\n-- Phase cleanup: drop the old int columns (brief ACCESS EXCLUSIVE, no rewrite).\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF NOT swapped AND EXISTS (SELECT 1 FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E') THEN\n'
            || E'    RAISE EXCEPTION ''the swap has not run yet'' USING ERRCODE = ''object_not_in_prerequisite_state'', HINT = ''Run phase swap first.'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN
    SELECT c.conname, storagelab.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.oid = ANY (late_chk) AND c.convalidated ORDER BY 2, 1
  LOOP
    s := s || '-- validate ' || storagelab.bigint_migration_comment_text(r.conname) || E' (SHARE UPDATE EXCLUSIVE: reads and writes continue)\n'
           || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.qn, r.conname)], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, ic.relname, n.nspname, pg_get_indexdef(i.indexrelid) AS def, obj_description(i.indexrelid, 'pg_class') AS descr,
           i.indisclustered, storagelab.bigint_migration_qname(i.indrelid) AS tqn
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indexrelid = ANY (late_idx) ORDER BY 2
  LOOP
    s := s || '-- re-build ' || storagelab.bigint_migration_comment_text(r.relname) || E' on the new column, concurrently\n'
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
    x := storagelab.bigint_migration_qname(tabs[k]);
    s := s || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s %s', x,
                 (SELECT string_agg(format('DROP COLUMN IF EXISTS %I', u.od), ', ') FROM unnest(c_rel, c_old) AS u(r2, od) WHERE u.r2 = tabs[k]))], retries);
  END LOOP;
  s := s || format(E'DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L;\n', mid);
  s := s || E'\\endif\n\n';

  ------------------------------------------------------------------ rollbacks
  s := s || E'\\if :ph_rollback_prepare\n-- Undo phase prepare (before swap only).\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOR r IN SELECT u.rel, u.nn FROM unnest(fk_rel, fk_new) AS u(rel, nn) ORDER BY 1, 2 LOOP
    s := s || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab.bigint_migration_qname(r.rel), r.nn)], retries);
  END LOOP;
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    s := s || storagelab.bigint_migration_retry_block(ARRAY[format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I',
                                                                   storagelab.bigint_migration_qname(tabs[k]), format('storagelab_eq_%s', mid))], retries);
  END LOOP;
  FOR r IN
    SELECT i.indexrelid, n.nspname, ic.relkind
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE i.indrelid = ANY (tree) AND NOT (i.indexrelid = ANY (late_idx))
       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = i.indrelid AND cc.a = ANY (i.indkey::int2[]))
     ORDER BY ic.relkind = 'I' DESC, 1     -- partitioned indexes first (that drops their partitions' too)
  LOOP
    IF r.relkind = 'I' THEN
      s := s || storagelab.bigint_migration_retry_block(ARRAY[format('DROP INDEX IF EXISTS %I.%I', r.nspname, 'storagelab_new_' || r.indexrelid)], retries);
    ELSE
      s := s || format(E'DROP INDEX CONCURRENTLY IF EXISTS %I.%I;\n', r.nspname, 'storagelab_new_' || r.indexrelid);
    END IF;
  END LOOP;
  s := s || E'\\endif\n\n';
  s := s || E'\\if :ph_rollback_expand\n-- Undo phases expand and backfill (before swap only; run rollback_prepare first).\n';
  s := s || 'DO ' || storagelab.bigint_migration_dollar_quote(
            E'\nDECLARE swapped boolean := false;\nBEGIN\n' || pre
            || E'  IF swapped THEN\n    RAISE EXCEPTION ''this migration is already swapped: it cannot be rolled back'' USING ERRCODE = ''object_not_in_prerequisite_state'';\n  END IF;\nEND\n') || E';\n';
  FOREACH k IN ARRAY ARRAY(SELECT generate_series(1, cardinality(tabs))) LOOP
    x := storagelab.bigint_migration_qname(tabs[k]);
    s := s || storagelab.bigint_migration_retry_block(
                ARRAY(SELECT format('DROP TRIGGER IF EXISTS %I ON %s', format('zz_storagelab_sync_%s_%s', mid, u.root), storagelab.bigint_migration_qname(u.r2))
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
COMMENT ON FUNCTION storagelab.bigint_migration_online_script(regclass[], name[]) IS
  'the online INT->BIGINT script (phases expand, backfill, prepare, swap, cleanup, and rollbacks), built on bigint_migration_group_objects(); called by bigint_migration_script(..., mode => ''online'')';

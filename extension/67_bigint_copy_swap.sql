-- storagelab install script, part 67: the INT -> BIGINT script in mode
-- 'online' (bigint_migration_script(..., mode => 'online'), alias
-- 'copy_swap'): copy and swap.  The component's tables rebuilt as new tables
-- by the rewrite engine (parts 60-64) and kept in step by the online
-- machinery (part 66), then swapped in.  The online skeleton the layout
-- writer (part 65) shares: rewrite_online_script, on one model (part 63).
-- One psql file in phases, chosen with -v phase=...:
--   start     new tables (no indexes), change logs and their triggers
--   copy      CALL storagelab.rewrite_online_copy: batches, resumable
--   index     log applied once (repairs rows a batch saw twice), indexes, ANALYZE
--   replay    CALL storagelab.rewrite_online_replay until the lag is small
--   swap      one transaction: lock, rest of the log, renames and objects
--             (engine), logs reversed (new tables feed the old ones)
--   validate  foreign keys added NOT VALID in the swap validated
--   cleanup   old tables, logs and progress rows dropped
--   rollback  any time before cleanup: swap back (after replaying the
--             changes made since the swap) and drop what start created,
--             then validate the foreign keys the swap back re-pointed

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The engine's input for a model: every table with converted columns, all
-- its columns in their order, the converted ones bigint.
CREATE FUNCTION storagelab_internal.bigint_copy_swap_tables(objs storagelab.bigint_migration_object[])
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_agg(jsonb_build_object('relation', storagelab_internal.sql_qname(t.rel),
           'columns', (SELECT jsonb_agg(jsonb_build_object('column_name', a.attname,
                                'type', CASE WHEN EXISTS (SELECT 1 FROM unnest($1) x WHERE x.kind = 'column' AND x.relation = t.rel
                                                             AND x.column_name = a.attname)
                                             THEN 'bigint' ELSE format_type(a.atttypid, a.atttypmod) END) ORDER BY a.attnum)
                         FROM pg_attribute a WHERE a.attrelid = t.rel AND a.attnum > 0 AND NOT a.attisdropped))
           ORDER BY storagelab_internal.sql_qname(t.rel))
    FROM (SELECT DISTINCT x.relation::oid AS rel FROM unnest($1) x
           WHERE x.kind = 'column'
             -- partitions and inheritance children are rewritten with their parent
             AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)) t
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_copy_swap_tables(storagelab.bigint_migration_object[]) IS
  'the rewrite engine''s input for an INT->BIGINT model: each table with converted columns that is not a partition or inheritance child (those go with their parent), every column in its order, converted ones bigint';

-- The statement that copies rows of the new table rel (under rel's name
-- after the swap) back into the old one, storagelab_old_<rel>, cast to the
-- old types: the copy of the replay after a swap.
CREATE FUNCTION storagelab_internal.rewrite_online_copy_back(rel oid)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'INSERT INTO %I.%I (%s)%s\nSELECT %s\n  FROM ONLY %s', n.nspname, storagelab_internal.rewrite_name('old', $1),
                string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
                CASE WHEN bool_or(a.attidentity = 'a') THEN ' OVERRIDING SYSTEM VALUE' ELSE '' END,
                string_agg(format('%I::%s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum),
                storagelab_internal.sql_qname($1))
    FROM pg_attribute a JOIN pg_class c ON c.oid = $1 JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
   GROUP BY n.nspname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_copy_back(oid) IS
  'INSERT ... SELECT copying rows of the table now under rel''s name into storagelab_old_<rel>, cast to its types (the replay after a swap)';

-- The direction objects of part 66 for the tables of a model (part 63):
-- forward (old -> new, before the swap) or back (new -> old, after it),
-- one per table that holds rows (each partition of a partitioned table:
-- the rows of a partition go to the same partition of the new table).
CREATE FUNCTION storagelab_internal.rewrite_online_dirs(model storagelab_internal.rewrite_model, back boolean)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_agg(jsonb_build_object(
           'source', storagelab_internal.sql_qname(m.relid),
           'target', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'old' ELSE 'new' END, m.relid)),
           'log', format('%I.%I', n.nspname, storagelab_internal.rewrite_name(CASE WHEN $2 THEN 'back' ELSE 'log' END, m.relid)),
           'key', to_jsonb(storagelab_internal.rewrite_online_key(m.relid)),
           'copy', CASE WHEN $2 THEN storagelab_internal.rewrite_online_copy_back(m.relid)
                        ELSE storagelab_internal.rewrite_copy(m.relid, m.atts, m.types) END)
           ORDER BY m.n)
    FROM unnest(($1).members) WITH ORDINALITY m(root, relid, parent, level, leaf, atts, types, n)
    JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE m.leaf
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_dirs(storagelab_internal.rewrite_model, boolean) IS
  'the direction objects (source, target, log, key, copy) of the online machinery for the tables of a rewrite, one per table holding rows (each partition of a partitioned table): forward before the swap, back after it';

-- The back logs of a rollback after the swap, applied whole into the old
-- tables (rewrite_online_apply_ids, part 66), which keep their foreign keys
-- to each other (the new tables get theirs only in the swap, after the
-- forward logs are applied): rows inserted and updated first, referenced
-- tables before the tables that reference them, then rows deleted,
-- referencing tables first.  So a row deleted after the swap together with
-- the rows that referenced it (in another table of the component), or
-- inserted with rows that reference it, goes back whatever the order of
-- the tables.
CREATE FUNCTION storagelab_internal.rewrite_online_apply_back(dirs jsonb)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  n      int := jsonb_array_length(dirs);
  idl    bigint[];
  ord    int[] := '{}';
  rest   int[] := ARRAY(SELECT generate_series(0, jsonb_array_length(dirs) - 1));
  ready  int[];
  i      int;
  total  bigint := 0;
  logs   jsonb := '{}';
BEGIN
  -- each log's rows as they are now (the tables are locked: no more come)
  FOR i IN 0 .. n - 1 LOOP
    EXECUTE format('SELECT coalesce(array_agg(storagelab_seq ORDER BY storagelab_seq), ''{}'') FROM %s', dirs->i->>'log') INTO idl;
    logs := logs || jsonb_build_object(i::text, to_jsonb(idl));
    total := total + cardinality(idl);
  END LOOP;
  IF total = 0 THEN
    RETURN 0;
  END IF;
  -- referenced tables first (a table, or one of its ancestors if it is a partition, holds the foreign key)
  WHILE cardinality(rest) > 0 LOOP
    ready := ARRAY(SELECT r FROM unnest(rest) r
                    WHERE NOT EXISTS (
                      SELECT 1 FROM unnest(rest) o, pg_constraint c
                       WHERE o <> r AND c.contype = 'f'
                         AND c.conrelid IN (SELECT (dirs->r->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->r->>'target')::regclass) a)
                         AND c.confrelid IN (SELECT (dirs->o->>'target')::regclass::oid UNION SELECT a.relid FROM pg_partition_ancestors((dirs->o->>'target')::regclass) a))
                    ORDER BY r);
    IF cardinality(ready) = 0 THEN
      ready := rest;                                  -- a cycle: the component's order
    END IF;
    ord := ord || ready;
    rest := ARRAY(SELECT r FROM unnest(rest) r WHERE r <> ALL (ready) ORDER BY r);
  END LOOP;
  -- inserts and updates, referenced tables first
  FOREACH i IN ARRAY ord LOOP
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    PERFORM storagelab_internal.rewrite_online_apply_ids(dirs->i, idl, true, false);
  END LOOP;
  -- deletes (and the log rows), referencing tables first
  FOR i IN SELECT o FROM unnest(ord) WITH ORDINALITY u(o, k) ORDER BY k DESC LOOP
    idl := ARRAY(SELECT jsonb_array_elements_text(logs->i::text)::bigint);
    CONTINUE WHEN cardinality(idl) = 0;
    PERFORM storagelab_internal.rewrite_online_apply_ids(dirs->i, idl, false, true);
  END LOOP;
  RETURN total;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply_back(jsonb) IS
  'the back logs of a rollback after a copy-and-swap swap applied whole into the old tables: inserts and updates with referenced tables first, then deletes with referencing tables first, so that the old tables'' foreign keys hold at each statement';

-- The triggers and rules of the old tables (and their partitions) between
-- the swap and cleanup: disabled in the swap (enable = false; the old tables
-- are then written only by the replay of the back log, which must not fire
-- an application's triggers or DO ALSO rules a second time), and given their
-- states back after a swap back (enable = true: each trigger and rule,
-- parents before partitions, as it was when the script was written, a
-- partition's clone too).
CREATE FUNCTION storagelab_internal.rewrite_online_old_triggers(model storagelab_internal.rewrite_model, enable boolean)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- the triggers first, then the rules
  SELECT coalesce(array_agg(
           CASE WHEN enable THEN format('ALTER TABLE %I.%I %s %s %I', n.nspname, c.relname,
                                        CASE o.state WHEN 'A' THEN 'ENABLE ALWAYS' WHEN 'R' THEN 'ENABLE REPLICA'
                                                     WHEN 'D' THEN 'DISABLE' ELSE 'ENABLE' END, o.kind, o.name)
                ELSE format('ALTER TABLE %I.%I DISABLE %s %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), o.kind, o.name) END
           ORDER BY o.kind DESC, m.level, m.relid, o.name), '{}')
    FROM unnest(model.members) m
    JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN (SELECT 'TRIGGER' AS kind, t.tgrelid AS rel, t.tgname AS name, t.tgenabled AS state FROM pg_trigger t WHERE NOT t.tgisinternal
          UNION ALL
          SELECT 'RULE', r.ev_class, r.rulename, r.ev_enabled FROM pg_rewrite r WHERE r.rulename <> '_RETURN') o ON o.rel = c.oid
   WHERE enable OR o.state <> 'D'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_old_triggers(storagelab_internal.rewrite_model, boolean) IS
  'statements disabling the triggers and rules of the old tables of a copy-and-swap rewrite in its swap (the back log''s replay must not fire them), or giving them their states back after a swap back';

-- The check of a rollback after the swap, under its locks: no table of the
-- rewrite (relations: the original names, now the new tables'; relids: the
-- old tables, storagelab_old_<OID> since the swap) has a column that its
-- old table lacks.  The swap back keeps the old tables and the replay
-- copies into them only their own columns: a column added after the swap
-- would be dropped with its values; so would a partition or inheritance
-- child attached to a new table after the swap, with its rows.  55000,
-- naming them.
CREATE FUNCTION storagelab_internal.rewrite_check_rollback(relations text[], relids oid[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  cols text;
  kids text;
BEGIN
  SELECT string_agg(format('%s.%I', r.rel, a.attname), ', ' ORDER BY r.rel, a.attnum) INTO cols
    FROM unnest(relations, relids) r(rel, old)
    JOIN pg_attribute a ON a.attrelid = to_regclass(r.rel) AND a.attnum > 0 AND NOT a.attisdropped
   WHERE to_regclass(r.rel)::oid IS DISTINCT FROM r.old
     AND NOT EXISTS (SELECT 1 FROM pg_attribute o WHERE o.attrelid = r.old AND o.attname = a.attname AND o.attnum > 0 AND NOT o.attisdropped);
  SELECT string_agg(i.inhrelid::regclass::text, ', ' ORDER BY i.inhrelid::regclass::text) INTO kids
    FROM unnest(relations, relids) r(rel, old) JOIN pg_inherits i ON i.inhparent = to_regclass(r.rel)
   WHERE to_regclass(r.rel)::oid IS DISTINCT FROM r.old
     AND i.inhrelid NOT IN (SELECT to_regclass(x)::oid FROM unnest(relations) x WHERE to_regclass(x) IS NOT NULL);
  IF cols IS NOT NULL OR kids IS NOT NULL THEN
    RAISE EXCEPTION '%', concat_ws('; ', 'columns were added after the swap: ' || cols,
                                   'partitions or inheritance children were added after the swap: ' || kids)
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'A rollback gives the old tables back, which lack them, and drops the new ones: their values and rows would be lost.',
            HINT = 'Keep the swap (run phases validate and cleanup), or drop those columns and detach those tables (DETACH PARTITION, NO INHERIT), then run phase rollback again.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_rollback(text[], oid[]) IS
  'raises 55000 naming them when, after the swap of an online rewrite, a table (its original name) has a column its old table (relids) lacks, or a partition or child attached since: the check of a rollback, which would lose them';

-- The CALL of storagelab_internal.rewrite_online_step (part 66; one
-- transaction) that fails with require_error unless require (an SQL
-- boolean expression) holds, then says skip_notice instead when skip_if
-- holds, else runs stmts, retried on lock_timeout or deadlock.  The
-- statements are its last argument, one literal a line.
CREATE FUNCTION storagelab_internal.rewrite_online_do(stmts text[], skip_if text, skip_notice text,
                                                      require text, require_error text, retries int)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'CALL storagelab_internal.rewrite_online_step(\n  require => %L,\n  require_error => %L,\n'
                || E'  skip_if => %L,\n  skip_notice => %L,\n  retries => %s,\n  stmts => %s);\n',
                $4, $5, $2, $3, $6,
                CASE WHEN cardinality($1) > 0
                     THEN E'ARRAY[\n' || (SELECT string_agg('    ' || quote_nullable(s), E',\n' ORDER BY n) FROM unnest($1) WITH ORDINALITY u(s, n)) || ']'
                     ELSE '''{}''::text[]' END)
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_do(text[], text, text, text, text, int) IS
  'the CALL of storagelab_internal.rewrite_online_step running statements in one subtransaction retried on lock_timeout or deadlock, skipped with a notice when a condition holds, refused unless another holds';

-- The publications FOR ALL TABLES or FOR TABLES IN SCHEMA that would
-- publish the new tables and change logs of a copy-and-swap rewrite of the
-- tables roots (and their partitions and children: each one's new table and
-- log are created in its own schema), by name.  A subscriber lacks those
-- tables: the first copied row stops its apply worker, on every retry, and
-- the slot retains WAL.
CREATE FUNCTION storagelab_internal.rewrite_online_publications(roots oid[])
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY(SELECT p.pubname::text FROM pg_publication p
                WHERE p.puballtables OR EXISTS (
                        SELECT 1 FROM pg_publication_namespace pn JOIN pg_class c ON c.relnamespace = pn.pnnspid
                         WHERE pn.pnpubid = p.oid AND c.oid IN (SELECT m.relid FROM storagelab_internal.rewrite_members($1) m))
                ORDER BY 1)
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_publications(oid[]) IS
  'the publications FOR ALL TABLES or FOR TABLES IN SCHEMA that would publish the new tables and change logs of a copy-and-swap rewrite of these tables (and their partitions and children)';

-- A DO statement that refuses (0A000) while a publication FOR ALL TABLES or
-- FOR TABLES IN SCHEMA of one of the schemas would publish what the
-- phase creates or writes: the phases that write the new tables and logs
-- check it again when they run (such a publication may be created after
-- the script was written).
CREATE FUNCTION storagelab_internal.rewrite_online_publication_guard(schemas name[])
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(format(
    E'\nDECLARE\n  pubs text := (SELECT string_agg(quote_ident(p.pubname), '', '' ORDER BY p.pubname) FROM pg_publication p\n'
    || E'                 WHERE p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_namespace pn JOIN pg_namespace n ON n.oid = pn.pnnspid\n'
    || E'                                                  WHERE pn.pnpubid = p.oid AND n.nspname = ANY (%L::name[])));\n'
    || E'BEGIN\n  IF pubs IS NOT NULL THEN\n'
    || E'    RAISE EXCEPTION ''a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of this migration''\n'
    || E'      USING ERRCODE = ''feature_not_supported'', DETAIL = format(''Publications: %%s.'', pubs),\n'
    || E'            HINT = ''Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), then run this phase again; or roll back and use the blocking mode.'';\n'
    || E'  END IF;\nEND\n', $1)) || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_publication_guard(name[]) IS
  'a DO statement refusing (0A000) a copy-and-swap phase while a publication FOR ALL TABLES or FOR TABLES IN SCHEMA of these schemas exists';

-- The engine's swap (or swap_back) statements with a caller's own around
-- the dependent objects: pre after the engine has dropped them (its
-- leading statements without a table: SET LOCAL and the drops), post
-- before it creates them again (its trailing statements without a table).
-- The INT->BIGINT script drops and re-creates the functions it widens there
-- (a view calling one is dropped before it and created after it) and
-- changes its sequences' types.
CREATE FUNCTION storagelab_internal.rewrite_online_swap_statements(model storagelab_internal.rewrite_model, phase text,
                                                                   pre text[], post text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rels  regclass[];
  stmts text[];
  i     int;
  j     int;
BEGIN
  SELECT array_agg(r.relation ORDER BY r.ord), array_agg(r.statement ORDER BY r.ord) INTO rels, stmts
    FROM storagelab_internal.rewrite_phase(model, phase) r;
  i := (SELECT min(n) FROM generate_subscripts(rels, 1) n WHERE rels[n] IS NOT NULL);
  j := (SELECT max(n) FROM generate_subscripts(rels, 1) n WHERE rels[n] IS NOT NULL);
  IF i IS NULL THEN
    RETURN coalesce(stmts, '{}') || coalesce(pre, '{}') || coalesce(post, '{}');
  END IF;
  RETURN stmts[1:i - 1] || coalesce(pre, '{}') || stmts[i:j] || coalesce(post, '{}') || stmts[j + 1:];
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_swap_statements(storagelab_internal.rewrite_model, text, text[], text[]) IS
  'the rewrite engine''s swap or swap_back statements with the caller''s own after the dependent objects are dropped (pre) and before they are created again (post)';

-- The statement that takes the locks of an online swap (and of a rollback
-- after it), through storagelab_internal.script_lock (one at a time within
-- a budget, giving way to clients in a wait cycle), ACCESS EXCLUSIVE: the
-- views and materialized views the swap drops and creates again, outermost
-- first (a client reading one locks it before the tables), then by name the
-- component, the tables whose foreign keys the swap re-points and those the
-- old tables' foreign keys reference (the swap drops those keys, which drops
-- their triggers there); a partitioned table's lock covers its partitions.
CREATE FUNCTION storagelab_internal.rewrite_online_swap_locks(tables jsonb, model storagelab_internal.rewrite_model)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.script_lock_sql(
           ARRAY(SELECT storagelab_internal.sql_qname(d.objid) FROM unnest(($2).deps) d
                  WHERE d.classid = 'pg_class'::regclass GROUP BY d.objid ORDER BY max(d.depth) DESC, d.objid)
           || (SELECT array_agg(x ORDER BY x) FROM (
                 SELECT t->>'relation' AS x FROM jsonb_array_elements(tables) t
                 UNION SELECT f.qrel FROM unnest(($2).fks) f WHERE f.direction = 'to'
                 UNION SELECT storagelab_internal.sql_qname(f.confrelid) FROM unnest(($2).fks) f
                        WHERE f.direction = 'from' AND f.confrelid NOT IN (SELECT m.relid FROM unnest(($2).members) m)) y),
           'ACCESS EXCLUSIVE')
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_swap_locks(jsonb, storagelab_internal.rewrite_model) IS
  'the statement taking the locks of an online copy-and-swap swap (and rollback) through storagelab_internal.script_lock: the views it drops and creates again, then the component and the tables its foreign keys join, ACCESS EXCLUSIVE';

-- The check that opens phase rollback: after cleanup (the tables under
-- their names are not the ones the script was written for, roots, and
-- neither the old nor the new ones are left beside them) there is nothing
-- to go back to: 55000, the migration is final.
CREATE FUNCTION storagelab_internal.rewrite_online_final_check(roots oid[], mid text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(format(
           E'\nBEGIN\n  IF %s THEN\n'
           || E'    RAISE EXCEPTION ''migration %s is final: phase cleanup has run'' USING ERRCODE = ''object_not_in_prerequisite_state'',\n'
           || E'      DETAIL = ''The old tables were dropped; the tables keep their new definitions.'',\n'
           || E'      HINT = ''Nothing can be rolled back after cleanup; to change the tables again, generate a new migration.'';\n'
           || E'  END IF;\nEND\n',
           (SELECT string_agg(format('(to_regclass(%L) IS NOT NULL AND to_regclass(%L)::oid <> %s AND to_regclass(%L) IS NULL AND to_regclass(%L) IS NULL)',
                                     storagelab_internal.sql_qname(r), storagelab_internal.sql_qname(r), r::oid,
                                     format('%I.%I', n.nspname, storagelab_internal.rewrite_name('old', r)),
                                     format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', r))), ' OR ' ORDER BY k)
              FROM unnest(roots) WITH ORDINALITY u(r, k) JOIN pg_class c ON c.oid = r JOIN pg_namespace n ON n.oid = c.relnamespace),
           mid)) || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_final_check(oid[], text) IS
  'the DO statement opening an online script''s phase rollback: 55000 when phase cleanup has run (the migration is final)';

-- What the phases of a copy-and-swap script share, as jsonb (mid: the
-- migration id): direction objects, lock retries, the SQL conditions telling
-- which phases have run, the logs' tag, the publication guard, the swap's
-- locks, the forward apply statements, and the checks that each table is
-- unchanged since the script was written (what was added since would be lost).
CREATE FUNCTION storagelab_internal.rewrite_online_phase_context(tables jsonb, model storagelab_internal.rewrite_model, mid text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := storagelab_internal.rewrite_online_dirs(model, false);
  back    jsonb := storagelab_internal.rewrite_online_dirs(model, true);
  -- the logs carry the migration id: a second script for the same tables (same names) is refused
  tag     text := format('storagelab copy-and-swap migration %s', mid);
  roots   oid[] := model.relids;
  unchanged text[] := ARRAY(SELECT format('SELECT storagelab_internal.rewrite_check_unchanged(%L, %s, %L)', t->>'relation',
                                          to_regclass(t->>'relation')::oid,
                                          storagelab_internal.rewrite_tree_fingerprint(to_regclass(t->>'relation')))
                              FROM jsonb_array_elements(tables) WITH ORDINALITY u(t, n) ORDER BY n);
BEGIN
  -- partitioned tables without partitions have no rows to copy, log or replay: one that holds rows is needed
  -- (a partitioned table without partitions beside it is created empty and swapped with it)
  IF NOT EXISTS (SELECT 1 FROM unnest(model.members) m WHERE m.leaf) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = (SELECT format('The partitioned table %s has no partitions.', string_agg(r::regclass::text, ', '))
                        FROM unnest(roots) r
                       WHERE NOT EXISTS (SELECT 1 FROM unnest(model.members) m WHERE m.root = r AND m.leaf)),
            HINT = 'Use the blocking mode.';
  END IF;
  RETURN jsonb_build_object(
    'fwd', fwd, 'back', back, 'tag', tag, 'unchanged', to_jsonb(unchanged),
    'retries', storagelab_internal.setting('scripts.lock_retries')::int,
    'created', (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(fwd) x),
    'ours', (SELECT string_agg(format('obj_description(to_regclass(%L), %L) IS NOT DISTINCT FROM %L', x->>'log', 'pg_class', tag), ' AND ')
               FROM jsonb_array_elements(fwd) x),
    'others', (SELECT string_agg(format('to_regclass(%L) IS NOT NULL OR to_regclass(%L) IS NOT NULL', x->>'target', x->>'log'), ' OR ')
                 FROM jsonb_array_elements(fwd) x),
    'swapped', (SELECT string_agg(format('to_regclass(%L) IS NOT NULL', x->>'target'), ' AND ') FROM jsonb_array_elements(back) x),
    'copied', format('(SELECT count(*) FROM storagelab.bigint_migration_progress p WHERE p.migration = %L AND p.done) = %s',
                     mid, jsonb_array_length(fwd)),
    -- phase index has run when every index it builds exists (the copy of each valid index of every old
    -- table and partition, named by rewrite_index_name) and every NOT VALID CHECK constraint it adds
    'indexed', coalesce((SELECT string_agg(c, ' AND ' ORDER BY c) FROM (
                 SELECT format('to_regclass(%L) IS NOT NULL', format('%I.%I', n.nspname, storagelab_internal.rewrite_index_name(i.indexrelid))) AS c
                   FROM unnest(model.members) m
                   JOIN pg_index i ON i.indrelid = m.relid AND i.indisvalid
                   JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_namespace n ON n.oid = x.relnamespace
                 UNION ALL
                 SELECT format('EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = to_regclass(%L) AND k.conname = %L)',
                               format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', m.relid)), k.conname)
                   FROM unnest(model.members) m
                   JOIN pg_constraint k ON k.conrelid = m.relid AND k.contype = 'c' AND NOT k.convalidated AND k.coninhcount = 0
                   JOIN pg_class x ON x.oid = m.relid JOIN pg_namespace n ON n.oid = x.relnamespace) q), 'true'),
    -- a publication of all tables or of these schemas would publish the new tables and logs: refused by every phase that writes them
    'guard', storagelab_internal.rewrite_online_publication_guard(ARRAY(
               SELECT DISTINCT n.nspname FROM unnest(model.members) m
                 JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace ORDER BY 1)),
    'locks', storagelab_internal.rewrite_online_swap_locks(tables, model),
    'apply_f', to_jsonb(ARRAY(SELECT format('SELECT storagelab_internal.rewrite_online_apply(%L::jsonb, NULL)', x) FROM jsonb_array_elements(fwd) x)));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phase_context(jsonb, storagelab_internal.rewrite_model, text) IS
  'what the phases of an online copy-and-swap script share, as jsonb: direction objects, lock retries, the conditions telling which phases have run, the logs'' tag, the publication guard, the swap''s locks, the forward apply statements, the unchanged-table checks; 0A000 when no table holds rows';

-- Phases start, copy, index and replay of a copy-and-swap script (ctx:
-- rewrite_online_phase_context), as psql \if sections: each refuses to run
-- out of order and says when it has run already.
CREATE FUNCTION storagelab_internal.rewrite_online_phases_fill(tables jsonb, model storagelab_internal.rewrite_model, mid text, ctx jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st text[];
  s  text := '';
BEGIN
  -- start
  -- (CREATE TRIGGER takes SHARE ROW EXCLUSIVE: every table's first, within the budget of script_lock)
  st := ARRAY[storagelab_internal.script_lock_sql(ARRAY(SELECT t->>'relation' FROM jsonb_array_elements(tables) t ORDER BY 1), 'SHARE ROW EXCLUSIVE')]
        || ARRAY(SELECT jsonb_array_elements_text(ctx->'unchanged'))
        || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_phase(model, 'create') r ORDER BY r.ord);
  st := st || storagelab_internal.rewrite_online_log_start(ctx->'fwd', ctx->>'tag');
  -- nothing (an event trigger) added objects to the new tables and logs as they were created
  st := st || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', model.relids,
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(ctx->'fwd') x));
  s := s || E'\\if :ph_start\n' || (ctx->>'guard')
         || storagelab_internal.disk_preflight_sql('start', tables)   -- part 68
         || storagelab_internal.rewrite_online_do(st, (ctx->>'created') || ' AND ' || (ctx->>'ours'), 'phase start has run already',
                                                  '(' || (ctx->>'ours') || ') OR NOT (' || (ctx->>'others') || ')',
                                                  'another copy-and-swap migration of these tables is under way (its storagelab_new_ or storagelab_log_ tables exist): finish it or roll it back', (ctx->>'retries')::int)
         || E'\\endif\n';
  -- copy
  s := s || E'\\if :ph_copy\n' || (ctx->>'guard')
         || storagelab_internal.rewrite_online_do('{}', 'false', '', (ctx->>'created') || ' AND ' || (ctx->>'ours'), 'run phase start of this script first', 0)
         || format(E'CALL storagelab.rewrite_online_copy(%L, %L, %s, %s, ''0'');\n\\endif\n', mid, ctx->'fwd',
                   extract(epoch FROM storagelab_internal.setting('bigint_migration.copy_batch_time')::interval) * 1000,
                   storagelab_internal.setting('bigint_migration.backfill_batch_blocks')::int);
  -- index: the log applied once (no index yet: a hash join), then the indexes
  st := ARRAY(SELECT jsonb_array_elements_text(ctx->'apply_f'))
        || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_phase(model, 'index') r ORDER BY r.ord);
  s := s || E'\\if :ph_index\n' || (ctx->>'guard')
         || storagelab_internal.disk_preflight_sql('index', tables)   -- part 68
         || storagelab_internal.rewrite_online_do(st, '(' || (ctx->>'indexed') || ' AND ' || (ctx->>'copied') || ') OR (' || (ctx->>'swapped') || ')',
                                                  'phase index has run already', ctx->>'copied', 'the copy is not complete: run phase copy first', (ctx->>'retries')::int)
         || (SELECT string_agg(format(E'ANALYZE %s;\n', x->>'target'), '') FROM jsonb_array_elements(ctx->'fwd') x)
         || E'\\endif\n';
  -- replay
  s := s || E'\\if :ph_replay\n' || (ctx->>'guard')
         || storagelab_internal.rewrite_online_do('{}', 'false', '', (ctx->>'indexed') || ' AND ' || (ctx->>'copied'), 'run phases copy and index first', 0)
         || format(E'CALL storagelab.rewrite_online_replay(%L, %L, %s, 10000, ''1 hour'');\n\\endif\n', mid, ctx->'fwd',
                   1000 * jsonb_array_length(ctx->'fwd'));
  RETURN s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases_fill(jsonb, storagelab_internal.rewrite_model, text, jsonb) IS
  'phases start, copy, index and replay of an online copy-and-swap script (new tables and change logs, batched copy, indexes, replay), as psql \if sections';

-- Phase swap of a copy-and-swap script (ctx: rewrite_online_phase_context):
-- one transaction under the locks, the forward logs applied and stopped,
-- the engine's swap with the caller's statements around the dependent
-- objects (pre, post) and at its end, the old tables' triggers disabled,
-- the back logs started.
CREATE FUNCTION storagelab_internal.rewrite_online_phase_swap(model storagelab_internal.rewrite_model, ctx jsonb,
                                                             pre text[], post text[], swap_end text[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st      text[];
BEGIN
  st := ARRAY[ctx->>'locks'] || ARRAY(SELECT jsonb_array_elements_text(ctx->'apply_f'))
        || storagelab_internal.rewrite_online_log_stop(ctx->'fwd', true, false);
  -- under the locks, the log triggers gone: the tables are as they were when the script was written
  st := st || ARRAY(SELECT jsonb_array_elements_text(ctx->'unchanged'))
           || storagelab_internal.rewrite_online_swap_statements(model, 'swap', pre, post)
           || storagelab_internal.rewrite_online_old_triggers(model, false) || swap_end
           || storagelab_internal.rewrite_online_log_start(ctx->'back', NULL)
           || format('SELECT storagelab_internal.rewrite_check_created(%L, %L)', '{}'::oid[],
                     ARRAY(SELECT x->>'log' FROM jsonb_array_elements(ctx->'back') x));
  RETURN E'\\if :ph_swap\n' || (ctx->>'guard')
         || storagelab_internal.rewrite_online_do(st, ctx->>'swapped', 'phase swap has run already',
                                                  '(' || (ctx->>'swapped') || ') OR (' || (ctx->>'indexed') || ' AND ' || (ctx->>'copied') || ')',
                                                  'run phases copy, index and replay first', (ctx->>'retries')::int)
         || E'\\endif\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phase_swap(storagelab_internal.rewrite_model, jsonb, text[], text[], text[]) IS
  'phase swap of an online copy-and-swap script, as a psql \if section: one transaction under ACCESS EXCLUSIVE applying the rest of the logs, swapping the tables and their objects, starting the back logs';

-- Phases validate, cleanup and rollback of a copy-and-swap script (ctx:
-- rewrite_online_phase_context), as psql \if sections.  The rollback is
-- refused after cleanup (rewrite_online_final_check); when swapped it swaps
-- back (unless columns were added since, rewrite_check_rollback) with the
-- caller's statements around the dependent objects (back_pre, back_post),
-- then drops what start created.
CREATE FUNCTION storagelab_internal.rewrite_online_phases_finish(tables jsonb, model storagelab_internal.rewrite_model, mid text, ctx jsonb,
                                                                 back_pre text[], back_post text[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fwd     jsonb := ctx->'fwd';
  back    jsonb := ctx->'back';
  retries int := (ctx->>'retries')::int;
  ours    text := ctx->>'ours';
  others  text := ctx->>'others';
  swapped text := ctx->>'swapped';
  st      text[];
  s       text := '';
  validate text;
BEGIN
  -- validate
  -- (SHARE UPDATE EXCLUSIVE on the referencing table, which no client's reads and writes conflict with, first
  -- through script_lock: an autovacuum of it gives way after the short deadlock_timeout)
  validate := coalesce((SELECT string_agg(storagelab_internal.retry_block(ARRAY[storagelab_internal.script_lock_sql(
                                             ARRAY[storagelab_internal.sql_qname(r.relation)], 'SHARE UPDATE EXCLUSIVE'), r.statement], retries), '' ORDER BY r.ord)
                          FROM storagelab_internal.rewrite_phase(model, 'validate') r), '');
  s := s || E'\\if :ph_validate\n' || validate || E'\\endif\n';
  -- cleanup
  -- (the tables, under their names the new ones since the swap, locked first through script_lock: dropping
  -- the back logs' triggers takes ACCESS EXCLUSIVE on them; the forward logs' triggers went in the swap)
  st := ARRAY[storagelab_internal.script_lock_sql(ARRAY(SELECT t->>'relation' FROM jsonb_array_elements(tables) t ORDER BY 1), 'ACCESS EXCLUSIVE')]
        || storagelab_internal.rewrite_online_log_stop(back, true, true) || storagelab_internal.rewrite_online_log_stop(fwd, false, true)
        || ARRAY(SELECT r.statement FROM storagelab_internal.rewrite_phase(model, 'cleanup') r ORDER BY r.ord)
        || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  s := s || E'\\if :ph_cleanup\n'
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'nothing to clean up: the old tables are gone (or the swap has not run)', 'true', '', retries)
         || E'\\endif\n';
  -- rollback: swap back when swapped, then drop what start created
  st := ARRAY[ctx->>'locks']
        || (SELECT format('SELECT storagelab_internal.rewrite_check_rollback(%L, %L)',
                          array_agg(storagelab_internal.sql_qname(m.relid) ORDER BY m.level, m.relid),
                          array_agg(m.relid ORDER BY m.level, m.relid))
              FROM unnest(model.members) m)
        || format('SELECT storagelab_internal.rewrite_online_apply_back(%L::jsonb)', back)
        || storagelab_internal.rewrite_online_log_stop(back, true, false)
        || storagelab_internal.rewrite_online_swap_statements(model, 'swap_back', back_pre, back_post)
        || storagelab_internal.rewrite_online_old_triggers(model, true)
        || storagelab_internal.rewrite_online_log_stop(back, true, true);
  s := s || E'\\if :ph_rollback\n' || storagelab_internal.rewrite_online_final_check(model.relids, mid)
         || storagelab_internal.rewrite_online_do(st, 'NOT (' || swapped || ')', 'not swapped: nothing to swap back',
                                                  '(' || ours || ') OR NOT (' || others || ')',
                                                  'another copy-and-swap migration is rewriting these tables: roll back with its script', retries);
  -- (the tables locked first through script_lock: dropping the logs' triggers takes ACCESS EXCLUSIVE on them)
  -- (the new tables in one statement, phase discard's: they may reference each other after a swap back)
  st := ARRAY[storagelab_internal.script_lock_sql(ARRAY(SELECT t->>'relation' FROM jsonb_array_elements(tables) t ORDER BY 1), 'ACCESS EXCLUSIVE')]
        || storagelab_internal.rewrite_online_log_stop(fwd, true, true)
        || (SELECT regexp_replace(r.statement, '^DROP TABLE ', 'DROP TABLE IF EXISTS ') FROM storagelab_internal.rewrite_phase(model, 'discard') r)
        || format('DELETE FROM storagelab.bigint_migration_progress WHERE migration = %L', mid);
  -- the foreign keys a swap back re-pointed NOT VALID, validated (of those that were valid; a no-op before a swap)
  RETURN s || storagelab_internal.rewrite_online_do(st, 'false', '', '(' || ours || ') OR NOT (' || others || ')',
                                                    'another copy-and-swap migration is rewriting these tables: roll back with its script', retries)
           || validate || E'\\endif\n';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_phases_finish(jsonb, storagelab_internal.rewrite_model, text, jsonb, text[], text[]) IS
  'phases validate, cleanup and rollback of an online copy-and-swap script, as psql \if sections';

-- An online (copy-and-swap) script after its comment header, for the
-- INT->BIGINT and layout writers: search_path saved and set back, settings,
-- -v phase=... (the phase list; "unknown or missing phase"), the phases as
-- psql \if sections, each detecting that it has run; the caller's statements
-- in the swap (swap_pre, swap_post around the dependent objects, swap_end)
-- and the swap back (back_pre, back_post).  No dry run: each phase commits.
CREATE FUNCTION storagelab_internal.rewrite_online_script(header text, tables jsonb, mid text,
                                                          swap_pre text[] DEFAULT '{}', swap_post text[] DEFAULT '{}',
                                                          back_pre text[] DEFAULT '{}', back_post text[] DEFAULT '{}',
                                                          swap_end text[] DEFAULT '{}')
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT $1
      || E'\\set ON_ERROR_STOP on\n'
      || E'-- the session''s search_path, set again at the end (this script sets its own)\n'
      || E'SELECT current_setting(''search_path'') AS search_path_saved \\gset sl_\n'
      || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
      || E'SET statement_timeout = 0;\nSET search_path = pg_catalog, pg_temp;\nSET check_function_bodies = off;\n'
      || E'\\if :{?phase}\n\\else\n\\set phase none\n\\endif\n'
      || E'\\if :{?backfill_batches}\n\\else\n\\set backfill_batches 0\n\\endif\n'
      || E'SELECT set_config(''storagelab.backfill_batches'', :''backfill_batches'', false) \\gset sl_\n'
      || 'SELECT ' || (SELECT string_agg(format(':''phase'' = %L AS ph_%s', p, p), ', ' ORDER BY n) FROM unnest(ph) WITH ORDINALITY u(p, n)) || E' \\gset\n'
      || format(E'SELECT :''phase'' NOT IN (%s) AS ph_bad \\gset\n', (SELECT string_agg(quote_literal(p), ', ' ORDER BY n) FROM unnest(ph) WITH ORDINALITY u(p, n)))
      || E'\\if :ph_bad\n'
      || 'DO ' || storagelab_internal.dollar_quote(E'\nBEGIN\n  RAISE EXCEPTION ''unknown or missing phase'' USING ERRCODE = ''invalid_parameter_value'',\n    HINT = ''Run with -v phase=start (then copy, index, replay, swap, validate, cleanup), or -v phase=rollback.'';\nEND\n')
      || E';\n\\endif\n\n'
      -- WAL before and after the phase: part 69
      || storagelab_internal.rewrite_online_wal_sql($3, ARRAY(SELECT x->>'source' FROM jsonb_array_elements(c.ctx->'fwd') x), false)
      || storagelab_internal.rewrite_online_phases_fill($2, c.model, $3, c.ctx)
      || storagelab_internal.rewrite_online_phase_swap(c.model, c.ctx, $4, $5, $8)
      || storagelab_internal.rewrite_online_phases_finish($2, c.model, $3, c.ctx, $6, $7)
      || storagelab_internal.rewrite_online_wal_sql($3, ARRAY(SELECT x->>'source' FROM jsonb_array_elements(c.ctx->'fwd') x), true)
      || E'\n-- The session''s own search_path again.\n'
      || E'SELECT set_config(''search_path'', :''sl_search_path_saved'', false) AS search_path_restored \\gset sl_\n'
    -- OFFSET 0: the subqueries stay subqueries, so the model (part 63) and the context are computed
    -- once (pulled up, each reference to them below would compute them again)
    FROM (SELECT ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback'] AS ph, x.model,
                 storagelab_internal.rewrite_online_phase_context($2, x.model, $3) AS ctx
            FROM (SELECT storagelab_internal.rewrite_model($2) AS model OFFSET 0) x OFFSET 0) c
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_script(text, jsonb, text, text[], text[], text[], text[], text[]) IS
  'an online copy-and-swap script: the comment header given, the session''s search_path saved, the settings, the phase framework (-v phase=..., unknown or missing phase refused), the phases start, copy, index, replay, swap, validate, cleanup and rollback with the caller''s statements in the swap and swap back, the search_path set back';

-- What mode online refuses, raised before anything is written: the model's
-- blockers as the blocking mode raises them (same SQLSTATEs; a
-- partition-key column blocks ALTER COLUMN TYPE, not a new table), the
-- function hazards under function_hazards (part 28), then what the rewrite
-- engine cannot rebuild: a converted column of an inheritance child that its
-- parent lacks, a publication that would publish the new tables, a key
-- column named storagelab_seq (42701: the change log's own column), the
-- engine's refusals of the tables (rewrite_refuse) and of the objects that
-- follow them (rewrite_dependents), a partitioned table without partitions.
-- Returns the model with function_hazards applied.  Shared by the script
-- and by storagelab_internal.bigint_migration_refusal() (findings).
CREATE FUNCTION storagelab_internal.bigint_copy_swap_refuse(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  s      text;
  roots  oid[];
  pubs   name[];
BEGIN
  PERFORM storagelab_internal.bigint_migration_refuse(
    ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'blocker' OR x.handling IS DISTINCT FROM 'partition key'), '{}', 'blocking');
  objs := storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  -- a child's own column would not be converted with its parent's (the engine keeps a child's own columns' types)
  FOR s IN
    SELECT format('%s.%I', x.relation, x.column_name)
      FROM unnest(objs) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
     WHERE x.kind = 'column' AND a.attinhcount = 0 AND EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.relation)
     ORDER BY 1 LIMIT 1
  LOOP
    RAISE EXCEPTION 'mode online does not convert a column of an inheritance child that its parent lacks'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Column %s.', s),
            HINT = 'Use mode ''blocking''.';
  END LOOP;
  roots := ARRAY(SELECT to_regclass(t->>'relation')::oid
                   FROM jsonb_array_elements(storagelab_internal.bigint_copy_swap_tables(objs)) t);
  -- a publication of all tables, or of a schema of these tables, would publish the new tables and the logs
  -- (the subscribers lack them: their apply stops at the first copied row)
  pubs := storagelab_internal.rewrite_online_publications(roots);
  IF cardinality(pubs) > 0 THEN
    RAISE EXCEPTION 'a publication FOR ALL TABLES or FOR TABLES IN SCHEMA would publish the new tables and change logs of an online migration'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('Publications: %s.', (SELECT string_agg(quote_ident(x), ', ') FROM unnest(pubs) x)),
            HINT = 'Name the published tables instead (ALTER PUBLICATION ... SET TABLE ...), or use mode ''blocking''.';
  END IF;
  -- a log keyed by a column named like its own sequence column (rewrite_online_log_start raises it too)
  FOR s IN SELECT m.relid::regclass::text FROM storagelab_internal.rewrite_members(roots) m
            WHERE m.leaf AND 'storagelab_seq' = ANY (storagelab_internal.rewrite_online_key(m.relid)) ORDER BY 1 LIMIT 1 LOOP
    RAISE EXCEPTION 'cannot log the changes of table %: its key column "storagelab_seq" has the name of a column of the change log', s
      USING ERRCODE = 'duplicate_column', HINT = 'Rename the column first, or use mode ''blocking''.';
  END LOOP;
  -- the engine: the tables (parts 60-64), the objects that follow them, rows to copy
  PERFORM storagelab_internal.rewrite_refuse(roots);
  PERFORM count(*) FROM storagelab_internal.rewrite_dependents(roots);
  -- (a partitioned table without partitions is created empty and swapped with the others; alone, or
  -- with others like it, there is nothing to copy: the blocking mode converts them without a rewrite)
  IF NOT EXISTS (SELECT 1 FROM storagelab_internal.rewrite_members(roots) m WHERE m.leaf) THEN
    RAISE EXCEPTION 'the online rewrite needs a table that holds rows'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('The partitioned table%s %s %s no partitions.', CASE WHEN cardinality(roots) > 1 THEN 's' ELSE '' END,
                            (SELECT string_agg(r::regclass::text, ', ' ORDER BY r::regclass::text) FROM unnest(roots) r),
                            CASE WHEN cardinality(roots) > 1 THEN 'have' ELSE 'has' END),
            HINT = 'Use the blocking mode: it converts tables without rows at once.';
  END IF;
  RETURN objs;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_copy_swap_refuse(storagelab.bigint_migration_object[], text) IS
  'raises what mode online refuses for a model (its blockers as the blocking mode, function hazards, the rewrite engine''s refusals), before anything is written; returns the model with function_hazards applied';

-- The online (copy-and-swap) script of a model: the refusals
-- (bigint_copy_swap_refuse), then the header and the phases
-- (rewrite_online_script) with the swap's own statements.
CREATE FUNCTION storagelab_internal.bigint_migration_copy_swap_script(objs storagelab.bigint_migration_object[], relations regclass[],
                                                                      column_names name[], function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  tables jsonb;
  mid    text;
  w      record;
BEGIN
  objs := storagelab_internal.bigint_copy_swap_refuse(objs, function_hazards);
  -- in the swap, around the dependent objects: the functions to widen
  -- (checked unchanged since generation, dropped, created with bigint
  -- parameters; one widened in place, CREATE OR REPLACE, has no drop_sql and
  -- is not dropped) and the sequences' types; in the swap back, the reverse
  SELECT coalesce(array_agg(x.drop_sql ORDER BY x.identity) FILTER (WHERE x.drop_sql IS NOT NULL), '{}') AS swap_pre,
         coalesce(array_agg(x.create_sql ORDER BY x.identity), '{}') AS swap_post,
         coalesce(array_agg(format('DROP %s %s', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, x.hazard_target) ORDER BY x.identity)
                    FILTER (WHERE x.drop_sql IS NOT NULL), '{}') AS back_pre,
         coalesce(array_agg(pg_get_functiondef(x.objid) || E';\n'
                            || format(E'ALTER ROUTINE %s OWNER TO %I;\n', x.objid::regprocedure, pg_get_userbyid(p.proowner))
                            || storagelab_internal.sql_acl('ROUTINE', x.objid::regprocedure::text, p.proacl, p.proowner)
                            || CASE WHEN obj_description(x.objid, 'pg_proc') IS NULL THEN ''
                                    ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', x.objid::regprocedure, obj_description(x.objid, 'pg_proc')) END
                            ORDER BY x.identity), '{}') AS back_post
    INTO w
    FROM unnest(objs) x JOIN pg_proc p ON p.oid = x.objid
   WHERE x.kind = 'widened_function';
  tables := storagelab_internal.bigint_copy_swap_tables(objs);
  mid := 'slcs' || substr(md5(tables::text || now()::text), 1, 10);
  RETURN storagelab_internal.rewrite_online_script(
    format(E'-- storagelab %s: INT to BIGINT migration (mode online: copy and swap), migration id %s\n',
           (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), mid)
    || '-- requested: ' || storagelab_internal.sql_comment_text(
          (SELECT string_agg(format('%s.%I', storagelab_internal.sql_qname(u.r), u.c), ', ')
             FROM unnest(relations, column_names) AS u(r, c))) || E'\n'
    || E'-- Tables rebuilt as new tables beside the old ones (one copy of them on disk until cleanup):\n'
    || (SELECT string_agg('--   ' || storagelab_internal.sql_comment_text(t->>'relation') || E'\n', '') FROM jsonb_array_elements(tables) t)
    || coalesce((SELECT E'-- Sequences made bigint in the swap (their type given back by a swap back):\n'
                        || string_agg('--   ' || storagelab_internal.sql_comment_text(storagelab_internal.sql_qname(x.objid)) || E'\n', '' ORDER BY x.identity)
                   FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL), '')
    || E'--\n-- Run one phase at a time, in this order (each can be run again after a failure):\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new tables, change logs and triggers (brief SHARE ROW EXCLUSIVE, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); -v backfill_batches=N stops after N batches; resumes\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new tables (locks only them), ANALYZE\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
    || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old tables and the logs\n'
    || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
    || E'-- Subscribers of a publication of these tables: ALTER SUBSCRIPTION ... REFRESH PUBLICATION WITH (copy_data = false).\n'
    || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal(mid) || E';\n'
    || storagelab_internal.bigint_migration_hazard_header(objs, function_hazards)   -- part 28
    || E'\n',
    tables, mid,
    -- first in the swap's own statements: the functions to widen are unchanged since generation (55000),
    -- and, with plpgsql_check installed, the errors of the PL/pgSQL functions that use these tables;
    -- last: no new error (22000, the swap rolls back)   (part 28)
    array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'before'), '')], NULL) || w.swap_pre,
    w.swap_post || ARRAY(SELECT x.create_sql FROM unnest(objs) x WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity),
    w.back_pre,
    w.back_post || ARRAY(SELECT format('ALTER SEQUENCE %s AS %s', storagelab_internal.sql_qname(x.objid), format_type(q.seqtypid, NULL))
                           FROM unnest(objs) x JOIN pg_sequence q ON q.seqrelid = x.objid
                          WHERE x.kind = 'sequence' AND x.create_sql IS NOT NULL ORDER BY x.identity),
    array_remove(ARRAY[nullif(storagelab_internal.bigint_migration_plpgsql_check_sql(objs, 'after'), '')], NULL));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_copy_swap_script(storagelab.bigint_migration_object[], regclass[], name[], text) IS
  'the INT->BIGINT script in mode online (alias copy_swap): the component rebuilt by the rewrite engine beside the old tables, copied in batches, kept in step by change logs, swapped in one short transaction; phases start to cleanup, and rollback';

-- storagelab install script, part 66: the online machinery of a copy-and-swap
-- rewrite, around the statements of the rewrite engine (parts 60-64): a change
-- log per table, the batched copy, the replay of the log, and the log's
-- triggers after the swap (old tables fed from the new ones until cleanup).
-- The script writers (INT -> BIGINT, part 67; layout rewrites) call these
-- with a "direction" object per table, written when the script is:
--
--   {"source": "s.t",                 the table the clients write (its original name)
--    "target": "s.storagelab_new_1",  the table kept in step with it
--    "log":    "s.storagelab_log_1",  the change log (s.storagelab_back_1 after the swap)
--    "key":    ["id"] | null,         primary key or unique NOT NULL index; null: whole rows
--    "copy":   "INSERT INTO target (...) SELECT ... FROM ONLY source"}
--
-- A table with a key logs the key of every row inserted, updated or deleted;
-- the replay deletes those keys from the target and copies them again from
-- the source, in sets (one statement per batch of log rows), so it repairs
-- whatever a batch of the copy saw half-way.  A table without a key logs
-- whole rows ('I' new row, 'D' old row, as jsonb); it is copied in one
-- snapshot, and its replay matches rows by value (a sequential scan of the
-- target per batch that has deletes: for append-mostly tables).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The key the change log of table rel uses: the primary key, else the
-- unique, valid, immediate, non-partial index on NOT NULL plain columns
-- with the fewest columns; NULL when it has neither.
CREATE FUNCTION storagelab_internal.rewrite_online_key(rel oid)
RETURNS name[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(att, n)
                 JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = k.att ORDER BY k.n)
    FROM pg_index i
   WHERE i.indrelid = $1 AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL
     AND i.indexprs IS NULL
     AND NOT EXISTS (SELECT 1 FROM unnest(i.indkey::int2[]) k(att) JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = k.att
                      WHERE NOT a.attnotnull)
   ORDER BY i.indisprimary DESC, i.indnatts, i.indexrelid
   LIMIT 1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_key(oid) IS
  'the key of a table''s change log: its primary key, else its narrowest unique non-partial index on NOT NULL columns; NULL when it has neither';

-- The statements that start logging the changes of each direction's
-- source into its log: the log table (commented tag, unless NULL), its
-- trigger function (SECURITY DEFINER: the clients that write the table need
-- no privilege on the log) and the triggers, named as the log, ENABLE
-- ALWAYS (they fire for logical replication's apply too); TRUNCATE is
-- refused while the log is kept.  The log's own columns have reserved names
-- (storagelab_seq, storagelab_op, storagelab_row) beside the key columns it
-- copies; a key column named storagelab_seq is refused (the INT->BIGINT
-- pre-flight refuses it first, part 67).
CREATE FUNCTION storagelab_internal.rewrite_online_log_start(dirs jsonb, tag text)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  d     jsonb;
  keys  text[];
  kl    text;
  trg   text;
  body  text;
  stmts text[] := '{}';
BEGIN
  FOR d IN SELECT x FROM jsonb_array_elements(dirs) x LOOP
    keys := ARRAY(SELECT jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END));
    kl := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) k);
    trg := (parse_ident(d->>'log'))[2];
    IF 'storagelab_seq' = ANY (keys) THEN
      RAISE EXCEPTION 'cannot log the changes of table %: its key column "storagelab_seq" has the name of a column of the change log', d->>'source'
        USING ERRCODE = 'duplicate_column',
              HINT = 'Rename the column first.';
    END IF;
    IF cardinality(keys) = 0 THEN
      body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (storagelab_op, storagelab_row) VALUES (''D'', pg_catalog.to_jsonb(OLD)); END IF;\n'
                     || E'  IF TG_OP <> ''DELETE'' THEN INSERT INTO %1$s (storagelab_op, storagelab_row) VALUES (''I'', pg_catalog.to_jsonb(NEW)); END IF;\n'
                     || E'  RETURN NULL;\nEND\n', d->>'log');
      stmts := stmts || format('CREATE TABLE %s (storagelab_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, storagelab_op "char" NOT NULL, storagelab_row jsonb NOT NULL)', d->>'log');
    ELSE
      body := format(E'BEGIN\n  IF TG_OP <> ''INSERT'' THEN INSERT INTO %1$s (%2$s) VALUES (%3$s); END IF;\n'
                     || E'  IF TG_OP = ''INSERT'' OR (TG_OP = ''UPDATE'' AND (%4$s) IS DISTINCT FROM (%3$s)) THEN\n'
                     || E'    INSERT INTO %1$s (%2$s) VALUES (%4$s);\n  END IF;\n  RETURN NULL;\nEND\n',
                     d->>'log', kl,
                     (SELECT string_agg('OLD.' || quote_ident(k), ', ') FROM unnest(keys) k),
                     (SELECT string_agg('NEW.' || quote_ident(k), ', ') FROM unnest(keys) k));
      stmts := stmts || format('CREATE TABLE %s AS SELECT %s FROM ONLY %s WITH NO DATA', d->>'log', kl, d->>'source')
                     || format('ALTER TABLE %s ADD COLUMN storagelab_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', d->>'log');
    END IF;
    stmts := stmts || format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS %s',
                             d->>'log', storagelab_internal.dollar_quote(body))
                   || format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()', trg, d->>'source', d->>'log')
                   || format('CREATE TRIGGER %I BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION storagelab_internal.rewrite_online_no_truncate()',
                             trg || '_truncate', d->>'source')
                   || format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', d->>'source', trg)
                   || format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', d->>'source', trg || '_truncate')
                   || CASE WHEN tag IS NOT NULL THEN ARRAY[format('COMMENT ON TABLE %s IS %L', d->>'log', tag)] ELSE '{}' END;
  END LOOP;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_log_start(jsonb, text) IS
  'statements creating the change logs of a copy-and-swap rewrite (log table, SECURITY DEFINER trigger function, triggers ENABLE ALWAYS, TRUNCATE refused) for direction objects';

-- The statements that stop logging for each direction: its triggers
-- dropped (triggers), its log and the log's function dropped (drop_log),
-- each safe to run when already done.
CREATE FUNCTION storagelab_internal.rewrite_online_log_stop(dirs jsonb, triggers boolean, drop_log boolean)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(array_agg(s ORDER BY u.n, v.k), '{}')
    FROM jsonb_array_elements($1) WITH ORDINALITY u(d, n),
         unnest(CASE WHEN $2 THEN ARRAY[format('DROP TRIGGER IF EXISTS %I ON %s', (parse_ident(d->>'log'))[2], d->>'source'),
                                        format('DROP TRIGGER IF EXISTS %I ON %s', (parse_ident(d->>'log'))[2] || '_truncate', d->>'source')]
                     ELSE '{}' END
                || CASE WHEN $3 THEN ARRAY[format('DROP TABLE IF EXISTS %s', d->>'log'), format('DROP FUNCTION IF EXISTS %s()', d->>'log')]
                        ELSE '{}' END) WITH ORDINALITY v(s, k)
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_log_stop(jsonb, boolean, boolean) IS
  'the statements that drop the triggers of copy-and-swap change logs and the logs with their functions, each with IF EXISTS';

CREATE FUNCTION storagelab_internal.rewrite_online_no_truncate()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RAISE EXCEPTION 'cannot truncate %.% while an online rewrite logs its changes', TG_TABLE_SCHEMA, TG_TABLE_NAME
    USING ERRCODE = 'object_in_use',
          HINT = 'Finish the rewrite (phase cleanup) or roll it back first.';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_no_truncate() IS
  'trigger function refusing TRUNCATE of a table whose changes a copy-and-swap rewrite logs (TRUNCATE fires no row trigger)';

-- Log rows ids of d.log applied to d.target in sets: the writes, the
-- deletes, or both (the back logs of a rollback apply all writes before
-- any delete: rewrite_online_apply_back, part 67).  Keyed: the logged keys
-- deleted from the target and copied again from the source as it is now
-- (writes; in the caller's transaction: the other unique indexes of the
-- target see the batch's end state, so rows that swapped values through
-- one, as a reorder does via a temporary value, replay).  When foreign keys
-- reference the target (or a partitioned table above it: the old tables
-- after the swap), a referenced row must not be deleted: the rows are
-- upserted (writes) and those gone from the source deleted (deletes, which
-- fails on such a swap: see doc/bigint_migration.md).  Whole rows: the new
-- rows inserted (writes), one target row deleted per old row (deletes).
-- deletes: the log rows too.
CREATE FUNCTION storagelab_internal.rewrite_online_apply_ids(d jsonb, ids bigint[], writes boolean, deletes boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET row_security = off   -- a policy hiding rows of the source is an error, not rows lost
AS $fn$
DECLARE
  keys text[] := ARRAY(SELECT jsonb_array_elements_text(CASE jsonb_typeof(d->'key') WHEN 'array' THEN d->'key' ELSE '[]' END));
  kl   text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(keys) k);
  lk   text := (SELECT string_agg('l.' || quote_ident(k), ', ') FROM unnest(keys) k);
  cols text;
  rcols text;
  olds boolean;   -- whole rows: old rows ('D') to delete
  refd boolean := EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f'
                           AND c.confrelid IN (SELECT (d->>'target')::regclass::oid
                                               UNION SELECT a.relid FROM pg_partition_ancestors((d->>'target')::regclass) a));
BEGIN
  IF kl IS NOT NULL THEN
    IF refd AND writes THEN
      SELECT string_agg(format('%1$I = EXCLUDED.%1$I', a.attname), ', ' ORDER BY a.attnum) INTO cols
        FROM pg_attribute a
       WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
         AND a.attidentity <> 'a' AND NOT a.attname::text = ANY (keys);
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))\n ON CONFLICT (%s) DO %s',
                     d->>'copy', kl, kl, d->>'log', kl, coalesce('UPDATE SET ' || cols, 'NOTHING')) USING ids;
    END IF;
    IF (refd AND deletes) OR (NOT refd AND writes) THEN
      EXECUTE format('DELETE FROM %s t USING (SELECT DISTINCT %s FROM %s WHERE storagelab_seq = ANY ($1)) l WHERE (%s) = (%s)%s',
                     d->>'target', kl, d->>'log', (SELECT string_agg('t.' || quote_ident(k), ', ') FROM unnest(keys) k), lk,
                     CASE WHEN refd THEN format(' AND NOT EXISTS (SELECT FROM ONLY %s s WHERE (%s) = (%s))', d->>'source',
                                                (SELECT string_agg('s.' || quote_ident(k), ', ') FROM unnest(keys) k), lk) ELSE '' END)
        USING ids;
    END IF;
    IF NOT refd AND writes THEN
      EXECUTE format(E'%s\n WHERE (%s) IN (SELECT %s FROM %s WHERE storagelab_seq = ANY ($1))', d->>'copy', kl, kl, d->>'log') USING ids;
    END IF;
  ELSE
    -- r.: the log has a storagelab_seq too
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum), string_agg('r.' || quote_ident(a.attname), ', ' ORDER BY a.attnum)
      INTO cols, rcols
      FROM pg_attribute a
     WHERE a.attrelid = (d->>'target')::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    IF writes THEN
      EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %4$s FROM %3$s l, jsonb_populate_record(NULL::%1$s, l.storagelab_row) r '
                     'WHERE l.storagelab_seq = ANY ($1) AND l.storagelab_op = ''I'' ORDER BY l.storagelab_seq', d->>'target', cols, d->>'log', rcols)
        USING ids;
    END IF;
    IF deletes THEN
      -- (a sequential scan of the target: only when there are old rows)
      EXECUTE format('SELECT EXISTS (SELECT FROM %s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')', d->>'log') INTO olds USING ids;
    END IF;
    IF deletes AND olds THEN
      EXECUTE format('DELETE FROM %1$s WHERE ctid IN (SELECT c.ctid FROM (SELECT t.ctid, to_jsonb(t) AS j, row_number() OVER (PARTITION BY to_jsonb(t)) AS n '
                     'FROM %1$s t WHERE to_jsonb(t) IN (SELECT storagelab_row FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'')) c '
                     'JOIN (SELECT storagelab_row AS r, count(*) AS n FROM %2$s WHERE storagelab_seq = ANY ($1) AND storagelab_op = ''D'' GROUP BY storagelab_row) w ON w.r = c.j AND c.n <= w.n)',
                     d->>'target', d->>'log')
        USING ids;
    END IF;
  END IF;
  IF deletes THEN
    EXECUTE format('DELETE FROM %s WHERE storagelab_seq = ANY ($1)', d->>'log') USING ids;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply_ids(jsonb, bigint[], boolean, boolean) IS
  'log rows of a copy-and-swap change log applied to its target in sets (keys deleted and copied again, or upserted and deleted when referenced; whole rows inserted and deleted): the writes, the deletes (and the log rows), or both';

-- One batch of the replay of d.log into d.target: the batch_rows oldest log
-- rows (all when NULL), applied (rewrite_online_apply_ids), then deleted;
-- returns how many there were.
CREATE FUNCTION storagelab_internal.rewrite_online_apply(d jsonb, batch_rows bigint)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ids bigint[];
BEGIN
  EXECUTE format('SELECT array_agg(storagelab_seq ORDER BY storagelab_seq) FROM (SELECT storagelab_seq FROM %s ORDER BY storagelab_seq LIMIT $1) x',
                 d->>'log')
    INTO ids USING batch_rows;
  IF ids IS NOT NULL THEN
    PERFORM storagelab_internal.rewrite_online_apply_ids(d, ids, true, true);
  END IF;
  RETURN coalesce(cardinality(ids), 0);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_apply(jsonb, bigint) IS
  'one batch of the replay of a copy-and-swap change log into its target table, in sets (keys deleted and copied again, or whole rows inserted and deleted); returns the log rows applied';

-- The copy of a copy-and-swap rewrite: for each direction object of dirs
-- (a jsonb array), every row of source into target.  A table with a key is
-- copied in batches of heap blocks (TID range scans), one COMMIT each, from
-- its progress row's next_block to max_block (the table's size when the
-- copy started: later rows are in the log); the next batch gets as many
-- blocks as the last one's rate fills in batch_time_ms (at most twice as
-- many; fixed at batch_blocks when batch_time_ms is 0), the pause and the
-- throttle (part 29) between them.  A table without a key is copied in one
-- REPEATABLE READ transaction, which also deletes the log rows its snapshot
-- sees (they are in the copy).  Progress rows:
-- storagelab.bigint_migration_progress (phase start's, part 69, filled in).
-- The setting storagelab.backfill_batches stops it after that many batches.
--
-- The copy reads the source with row_security off: a policy that would
-- hide rows from the role running it (FORCE ROW LEVEL SECURITY, its owner)
-- stops it with an error instead of leaving those rows behind.
--
-- A procedure with transaction control cannot pin search_path with a SET
-- clause: it sets it for each of its transactions and qualifies the
-- functions it calls.
CREATE PROCEDURE storagelab.rewrite_online_copy(migration text, dirs jsonb, batch_time_ms numeric,
                                                batch_blocks int, pause interval)
LANGUAGE plpgsql
AS $fn$
DECLARE
  d       jsonb;
  b       bigint;
  maxb    bigint;
  isdone  boolean;
  n       bigint;
  nb      bigint;
  nrows   bigint;
  nbatch  int := 0;
  t0      timestamptz;
  ms      numeric;
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
  caller_rls  text := pg_catalog.current_setting('row_security');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  PERFORM storagelab_internal.check_online_dirs('storagelab.rewrite_online_copy()', migration, dirs);
  PERFORM storagelab_internal.check_arg(batch_time_ms BETWEEN 0 AND 1e9, 'rewrite_online_copy()', 'batch_time_ms', '0 to 1e9 (ms)');
  PERFORM storagelab_internal.check_arg(batch_blocks >= 1, 'rewrite_online_copy()', 'batch_blocks', '>= 1 (blocks)');
  PERFORM storagelab_internal.check_arg(pause >= '0', 'rewrite_online_copy()', 'pause', '>= 0');
  FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
    INSERT INTO storagelab.bigint_migration_progress AS p (migration, relation, max_block, batch_blocks, started_at)
    SELECT rewrite_online_copy.migration, d->>'source',
           pg_catalog.pg_relation_size((d->>'source')::regclass) / pg_catalog.current_setting('block_size')::int,
           rewrite_online_copy.batch_blocks, pg_catalog.clock_timestamp()
    ON CONFLICT ON CONSTRAINT bigint_migration_progress_pkey
      DO UPDATE SET max_block = EXCLUDED.max_block, batch_blocks = EXCLUDED.batch_blocks, started_at = EXCLUDED.started_at
      WHERE p.started_at IS NULL;
    SELECT p.next_block, p.max_block, p.done, p.batch_blocks INTO b, maxb, isdone, n
      FROM storagelab.bigint_migration_progress p
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    CONTINUE WHEN isdone;
    CALL storagelab_internal.throttle_wait('the copy of migration ' || migration, migration, d->>'source');   -- part 29
    IF pg_catalog.jsonb_typeof(d->'key') IS DISTINCT FROM 'array' THEN
      COMMIT;   -- no key: the progress row committed, then the whole copy in one REPEATABLE READ transaction
      SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;   -- first statement of the transaction: before any expression
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      t0 := pg_catalog.clock_timestamp();
      PERFORM pg_catalog.set_config('row_security', 'off', true);
      EXECUTE d->>'copy';
      GET DIAGNOSTICS nrows = ROW_COUNT;
      PERFORM pg_catalog.set_config('row_security', caller_rls, true);
      EXECUTE pg_catalog.format('DELETE FROM %s', d->>'log');
      maxb := -1;
    END IF;
    WHILE b <= maxb LOOP
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      PERFORM pg_catalog.set_config('row_security', 'off', true);
      EXECUTE d->>'copy' || E'\n WHERE ctid >= $1 AND ctid < $2'
        USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
      GET DIAGNOSTICS nrows = ROW_COUNT;
      PERFORM pg_catalog.set_config('row_security', caller_rls, true);
      ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
      b := b + nb;
      IF batch_time_ms > 0 THEN
        n := greatest(1, least(2 * n, pg_catalog.floor(nb * batch_time_ms / greatest(ms, 0.01))));
      END IF;
      UPDATE storagelab.bigint_migration_progress p
         SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
             last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
             updated_at = pg_catalog.now()
       WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
      COMMIT;
      nbatch := nbatch + 1;
      IF limit_batches > 0 AND nbatch >= limit_batches THEN
        RAISE NOTICE '% stopped after % batches at block % of %; run the copy again to resume', d->>'source', nbatch, b, maxb;
        PERFORM pg_catalog.set_config('search_path', caller_path, false);
        RETURN;
      END IF;
      CALL storagelab_internal.throttle_wait('the copy of migration ' || migration, migration, d->>'source', pause);
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    UPDATE storagelab.bigint_migration_progress p
       SET done = true, updated_at = pg_catalog.now(),
           rows_copied = p.rows_copied + CASE WHEN maxb = -1 THEN nrows ELSE 0 END,
           batches = p.batches + CASE WHEN maxb = -1 THEN 1 ELSE 0 END,
           last_batch_ms = CASE WHEN maxb = -1 THEN pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000, 1) ELSE p.last_batch_ms END
     WHERE p.migration = rewrite_online_copy.migration AND p.relation = d->>'source';
    COMMIT;
  END LOOP;
  PERFORM pg_catalog.set_config('search_path', caller_path, false);
END
$fn$;
COMMENT ON PROCEDURE storagelab.rewrite_online_copy(text, jsonb, numeric, int, interval) IS
  'the copy phase of an online copy-and-swap rewrite (its script CALLs it): tables with a key in batches of heap blocks sized to a time budget, one COMMIT each, resumable from storagelab.bigint_migration_progress; tables without one in one snapshot';

-- The replay of a copy-and-swap rewrite: batches of batch_rows log rows per
-- table, one COMMIT per round that applied any, each after the throttle, until at most max_lag log
-- rows are left in all; after time_limit it gives up with an error (running it again goes on
-- where it stopped).
CREATE PROCEDURE storagelab.rewrite_online_replay(migration text, dirs jsonb, max_lag bigint, batch_rows bigint,
                                                  time_limit interval)
LANGUAGE plpgsql
AS $fn$
DECLARE
  d      jsonb;
  lag    bigint;
  n      bigint;
  rounds bigint := 0;
  t0     timestamptz := pg_catalog.clock_timestamp();
  caller_path text := pg_catalog.current_setting('search_path');
BEGIN
  PERFORM storagelab_internal.check_online_dirs('storagelab.rewrite_online_replay()', migration, dirs);
  PERFORM storagelab_internal.check_arg(max_lag >= 0, 'rewrite_online_replay()', 'max_lag', '>= 0 (rows)');
  PERFORM storagelab_internal.check_arg(batch_rows >= 1, 'rewrite_online_replay()', 'batch_rows', '>= 1 (rows)');
  PERFORM storagelab_internal.check_arg(time_limit > '0', 'rewrite_online_replay()', 'time_limit', '> 0');
  LOOP
    CALL storagelab_internal.throttle_wait('the replay of migration ' || migration, migration, NULL);   -- part 29
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    n := 0;
    FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
      n := n + storagelab_internal.rewrite_online_apply(d, batch_rows);
    END LOOP;
    lag := 0;
    FOR d IN SELECT x FROM pg_catalog.jsonb_array_elements(dirs) x LOOP
      EXECUTE pg_catalog.format('SELECT %s + count(*) FROM %s', lag, d->>'log') INTO lag;
    END LOOP;
    IF n > 0 THEN
      COMMIT;
    END IF;
    rounds := rounds + 1;
    EXIT WHEN lag <= max_lag;
    IF pg_catalog.clock_timestamp() - t0 > time_limit THEN
      RAISE EXCEPTION 'the replay of migration % did not catch up within %', migration, time_limit
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = pg_catalog.format('%s log rows are left after %s rounds.', lag, rounds),
              HINT = 'Run the phase again when the tables are written less; it resumes where it stopped.';
    END IF;
  END LOOP;
  RAISE NOTICE 'migration %: % log rows left after % rounds', migration, lag, rounds;
  PERFORM pg_catalog.set_config('search_path', caller_path, false);
END
$fn$;
COMMENT ON PROCEDURE storagelab.rewrite_online_replay(text, jsonb, bigint, bigint, interval) IS
  'the replay phase of an online copy-and-swap rewrite (its script CALLs it): applies the change logs in sets, one COMMIT per round, until at most max_lag rows are left; gives up after time_limit';

-- One step of an online script, which CALLs it (one transaction): 55000
-- unless the SQL condition require holds; a notice and nothing done when
-- skip_if holds (run already); else the statements, in a subtransaction
-- retried on lock_timeout or deadlock as storagelab_internal.retry_loop does.
CREATE PROCEDURE storagelab_internal.rewrite_online_step(require text, require_error text, skip_if text, skip_notice text,
                                                        retries int, stmts text[])
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  holds   boolean;
  attempt int := 0;
  s       text;
BEGIN
  EXECUTE 'SELECT (' || require || ')::boolean' INTO holds;
  IF NOT holds THEN
    RAISE EXCEPTION '%', require_error USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'Run the phases in the order the script''s header gives.';
  END IF;
  EXECUTE 'SELECT (' || skip_if || ')::boolean' INTO holds;
  IF holds THEN
    RAISE NOTICE '%', skip_notice;
    RETURN;
  END IF;
  LOOP
    BEGIN
      FOREACH s IN ARRAY coalesce(stmts, '{}') LOOP
        EXECUTE s;
      END LOOP;
      EXIT;
    EXCEPTION
      WHEN lock_not_available OR deadlock_detected THEN
        attempt := attempt + 1;
        IF attempt > greatest(retries, 0) THEN
          RAISE EXCEPTION 'gave up after % lock timeouts or deadlocks', attempt
            USING ERRCODE = 'lock_not_available', DETAIL = SQLERRM, HINT = 'Run this phase again later; it is safe to re-run.';
        END IF;
        RAISE NOTICE 'lock attempt %: % (lock_timeout %), retrying', attempt, SQLERRM, current_setting('lock_timeout');
        PERFORM pg_sleep(least(0.1 * attempt, 2));
    END;
  END LOOP;
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.rewrite_online_step(text, text, text, text, int, text[]) IS
  'one step of an online copy-and-swap script (its script CALLs it): refused (55000) unless a condition holds, skipped with a notice when another holds (run already), else the statements in one subtransaction retried on lock_timeout or deadlock';

-- storagelab install script, part 26: storagelab.bigint_migration_backfill,
-- the procedure that the phase backfill of an online INT -> BIGINT script
-- CALLs, one table at a time; its progress is in
-- storagelab.bigint_migration_progress (26_bigint_progress.sql).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The arguments of bigint_migration_backfill(), checked before it writes:
-- on a primary, the table there and not another session's temporary table
-- (qn is NULL when it does not exist), the column lists of one length
-- without NULLs naming columns the table has, and the numbers in range.
CREATE FUNCTION storagelab_internal.backfill_check(relation regclass, qn text, new_columns name[], old_columns name[],
                                                   batch_time_ms numeric, batch_blocks int, pause interval,
                                                   lock_retries int)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  b_missing name;              -- a column of new_columns or old_columns the table lacks
BEGIN
  PERFORM storagelab_internal.require_primary('storagelab.bigint_migration_backfill()');
  IF pg_catalog.cardinality(new_columns) IS DISTINCT FROM pg_catalog.cardinality(old_columns) OR pg_catalog.cardinality(new_columns) = 0
     OR pg_catalog.array_position(new_columns, NULL) IS NOT NULL OR pg_catalog.array_position(old_columns, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'new_columns and old_columns must be non-empty arrays of the same length without NULLs'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Run phase backfill from the script that storagelab generated: it passes the columns.';
  END IF;
  IF qn IS NULL THEN
    RAISE EXCEPTION 'relation with OID % does not exist', coalesce(relation::oid::text, 'NULL')
      USING ERRCODE = 'undefined_table', HINT = 'Run phase backfill from the script that storagelab generated: it names the table.';
  END IF;
  PERFORM storagelab_internal.refuse_other_temp(relation, 'backfill');
  SELECT u.c INTO b_missing FROM pg_catalog.unnest(new_columns || old_columns) u(c)
   WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid = relation AND a.attname = u.c
                        AND a.attnum > 0 AND NOT a.attisdropped) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'column "%" of relation % does not exist', b_missing, qn
      USING ERRCODE = 'undefined_column', HINT = 'Run phase expand first: it adds the new columns; then phase backfill from the same script.';
  END IF;
  PERFORM storagelab_internal.check_arg(batch_time_ms BETWEEN 0 AND 1e9, 'bigint_migration_backfill()', 'batch_time_ms', '0 to 1e9 (ms)');
  PERFORM storagelab_internal.check_arg(batch_blocks >= 1, 'bigint_migration_backfill()', 'batch_blocks', '>= 1 (blocks)');
  PERFORM storagelab_internal.check_arg(pause >= '0', 'bigint_migration_backfill()', 'pause', '>= 0');
  PERFORM storagelab_internal.check_arg(lock_retries >= 0, 'bigint_migration_backfill()', 'lock_retries', '>= 0');
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.backfill_check(regclass, text, name[], name[], numeric, integer, interval, integer) IS
  'the arguments of storagelab.bigint_migration_backfill(), checked before it writes (25006 on a standby, 42P01, 0A000, 22023, 42703)';

-- The backfill of one table: copies old_columns into new_columns in batches
-- of heap blocks (TID range scans), one COMMIT each, from the progress row's
-- next_block up to its max_block (the table's size when the sync trigger
-- was installed: later rows are written by the trigger).
--
-- Batch sizing (when batch_time_ms > 0): after each batch, the next one gets
-- as many blocks as the measured copy rate (rows per ms of the last batch
-- that copied rows, which includes any wait for a client's row lock) fills
-- in the time budget, at the denser of the table's average density and the
-- last batch's; it at most doubles from one batch to the next, and does not
-- grow before a rate is known.  A batch that meets a client's row lock past
-- lock_timeout is rolled back and retried with half its blocks, up to
-- lock_retries more times (pause as in storagelab_internal.retry_loop).
--
-- A procedure with transaction control cannot pin search_path with a SET
-- clause: it sets it for each of its transactions (SET LOCAL, again after
-- every COMMIT; the caller's again before it returns) and qualifies the
-- functions it calls (but unnest(a, b), which is syntax).  The setting
-- storagelab.backfill_batches (the script's -v backfill_batches=N) stops it
-- after N batches.
CREATE PROCEDURE storagelab.bigint_migration_backfill(migration text, relation regclass,
                                                      new_columns name[], old_columns name[],
                                                      batch_time_ms numeric, batch_blocks int,
                                                      pause interval, lock_retries int)
LANGUAGE plpgsql
AS $fn$
DECLARE
  qn       text := (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)      -- as the script names it
                      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = relation);
  copy_sql text;
  b        bigint;
  maxb     bigint;
  isdone   boolean;
  n        bigint;             -- blocks per batch
  nbatch   int := 0;
  tries    int;
  nb       bigint;             -- blocks in this batch: n, or fewer at the end of the table
  nrows    bigint;
  repl     boolean := false;   -- session_replication_role was set (superusers only)
  t_start  timestamptz := pg_catalog.clock_timestamp();
  t0       timestamptz;
  ms       numeric;
  rate     numeric;            -- rows copied per ms by the last batch that copied rows
  avgdens  numeric;            -- rows per block, table average
  limit_batches int := coalesce(nullif(pg_catalog.current_setting('storagelab.backfill_batches', true), ''), '0')::int;
  caller_path text := pg_catalog.current_setting('search_path');
  caller_rls  text := pg_catalog.current_setting('row_security');
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  PERFORM storagelab_internal.backfill_check(relation, qn, new_columns, old_columns, batch_time_ms, batch_blocks, pause, lock_retries);
  -- dynamic, with parameters: no PL/pgSQL variable can be mistaken for a column of the table
  copy_sql := pg_catalog.format('UPDATE ONLY %s SET %s WHERE ctid >= $1 AND ctid < $2 AND (%s)', qn,
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I = %I', u.nw, u.od), ', ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)),
                (SELECT pg_catalog.string_agg(pg_catalog.format('%I IS DISTINCT FROM %I', u.nw, u.od), ' OR ')
                   FROM unnest(new_columns, old_columns) AS u(nw, od)));
  SELECT p.next_block, p.max_block, p.done, coalesce(p.batch_blocks, bigint_migration_backfill.batch_blocks) INTO b, maxb, isdone, n
    FROM storagelab.bigint_migration_progress p
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'phase expand has not run for %', qn
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Run phase expand first.';
  END IF;
  IF isdone THEN
    PERFORM pg_catalog.set_config('search_path', caller_path, true);
    RETURN;
  END IF;
  SELECT CASE WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples / c.relpages ELSE 1 END INTO avgdens
    FROM pg_catalog.pg_class c WHERE c.oid = relation;
  IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
    SET session_replication_role = replica;
    repl := true;
  END IF;
  WHILE b <= maxb LOOP
    tries := 0;
    LOOP
      nb := greatest(least(n, maxb + 1 - b), 1);
      t0 := pg_catalog.clock_timestamp();
      BEGIN
        -- row_security off: a policy that hides rows from this role is an
        -- error here, not rows left without their new column's value
        PERFORM pg_catalog.set_config('row_security', 'off', true);
        EXECUTE copy_sql USING pg_catalog.format('(%s,0)', b)::tid, pg_catalog.format('(%s,0)', b + nb)::tid;
        GET DIAGNOSTICS nrows = ROW_COUNT;
        PERFORM pg_catalog.set_config('row_security', caller_rls, true);
        EXIT;
      EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
        -- a row of this batch is locked by a client: give way, retry the batch with half its blocks
        tries := tries + 1;
        IF tries > lock_retries THEN RAISE; END IF;
        n := greatest(n / 2, 1);
        PERFORM pg_catalog.pg_sleep(least(0.1 * tries, 2));
      END;
    END LOOP;
    ms := extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000;
    b := b + nb;
    IF batch_time_ms > 0 AND nrows > 0 THEN
      rate := nrows / greatest(ms, 0.01);
    END IF;
    IF batch_time_ms > 0 AND rate IS NOT NULL THEN
      n := greatest(1, least(2 * n, pg_catalog.floor(rate * batch_time_ms / greatest(avgdens, nrows::numeric / nb))));
    END IF;
    UPDATE storagelab.bigint_migration_progress p
       SET next_block = b, batch_blocks = n, batches = p.batches + 1, rows_copied = p.rows_copied + nrows,
           last_batch_ms = pg_catalog.round(ms, 1), max_batch_ms = greatest(p.max_batch_ms, pg_catalog.round(ms, 1)),
           started_at = coalesce(p.started_at, t_start), updated_at = pg_catalog.now()
     WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
    COMMIT;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    nbatch := nbatch + 1;
    IF limit_batches > 0 AND nbatch >= limit_batches THEN
      RAISE NOTICE '% stopped after % batches at block % of %; run phase backfill again to resume', qn, nbatch, b, maxb;
      IF repl THEN RESET session_replication_role; END IF;
      PERFORM pg_catalog.set_config('search_path', caller_path, true);
      RETURN;
    END IF;
    IF nrows > 0 THEN
      PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
    END IF;
  END LOOP;
  IF repl THEN RESET session_replication_role; END IF;
  UPDATE storagelab.bigint_migration_progress p SET done = true, updated_at = pg_catalog.now()
   WHERE p.migration = bigint_migration_backfill.migration AND p.relation = qn;
  COMMIT;
  PERFORM pg_catalog.set_config('search_path', caller_path, true);
END
$fn$;
COMMENT ON PROCEDURE storagelab.bigint_migration_backfill(text, regclass, name[], name[], numeric, int, interval, int) IS
  'backfill of one table of an online INT->BIGINT migration (its script''s phase backfill CALLs it): batches of heap blocks, one COMMIT each, resumable from storagelab.bigint_migration_progress';

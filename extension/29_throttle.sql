-- storagelab install script, part 29: the throttle of the batch loops that
-- write a copy of a table (the copy and the replay of a copy-and-swap
-- migration, part 66; the TOAST rewrite of a storage migration script, part
-- 40).  Before each batch they CALL storagelab_internal.throttle_wait(),
-- which waits while a physical standby replays too far behind, a logical
-- replication slot's consumer has not confirmed too much WAL, or the DBA's
-- throttle.query returns true; the reason shows in the progress row
-- (storagelab.bigint_migration_progress.status).  doc/bigint_migration.md,
-- "Throttle", says what is measured and why.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The columns of the progress rows (part 26) that the throttle writes.
COMMENT ON COLUMN storagelab.bigint_migration_progress.status IS 'NULL while batches run; ''throttled: <reason>'' while the copy or replay waits (throttle.* settings), ''stopped: ...'' after throttle.max_wait';
COMMENT ON COLUMN storagelab.bigint_migration_progress.throttled_seconds IS 'seconds the copy and replay of this table have waited for the throttle so far';

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('throttle.max_replica_lag', '10s',
   'migration batches wait while a physical standby''s replay lag is above this; off = not checked'),
  ('throttle.max_replica_lag_bytes', 'off',
   'migration batches wait while a physical standby has this much WAL left to replay; off = not checked'),
  ('throttle.max_slot_lag_bytes', '1GB',
   'migration batches wait while a logical slot has this much WAL unconfirmed; off = not checked');
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('throttle.query', '',
   'a read-only query run before each migration batch: true = wait; empty = none'),
  ('throttle.max_wait', '30min',
   'a throttle wait longer than this fails the phase (55000); running it again resumes it'),
  ('throttle.check_interval', '1s',
   'how often the limits are checked again while throttled (10ms to 1min)');

-- A throttle setting as a number (seconds for durations, bytes for sizes),
-- NULL when it is off (or empty); 22023 naming the setting when its value is
-- not a non-negative duration or size (throttle.check_interval: 10ms to
-- 1min).
CREATE FUNCTION storagelab_internal.throttle_limit(name text)
RETURNS numeric
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  v text := btrim(storagelab_internal.setting(name));
  n numeric;
BEGIN
  IF coalesce(lower(v), 'off') IN ('off', '') THEN
    RETURN NULL;
  END IF;
  BEGIN
    n := CASE WHEN name LIKE '%\_bytes' THEN pg_size_bytes(v) ELSE extract(epoch FROM v::interval) END;
  EXCEPTION WHEN data_exception OR invalid_parameter_value THEN
    n := -1;
  END;
  IF n < 0 OR (name = 'throttle.check_interval' AND n NOT BETWEEN 0.01 AND 60) THEN
    RAISE EXCEPTION 'setting % has the value %, which is not a %', name, quote_literal(v),
                    CASE WHEN name LIKE '%\_bytes' THEN 'size' WHEN name = 'throttle.check_interval' THEN 'duration from 10ms to 1min' ELSE 'duration' END
      USING ERRCODE = 'invalid_parameter_value',
            HINT = format('Set it in storagelab.settings to %s or to off.',
                          CASE WHEN name LIKE '%\_bytes' THEN 'a size such as 1GB' ELSE 'a duration such as 10s' END);
  END IF;
  RETURN n;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.throttle_limit(text) IS
  'a throttle.* setting as seconds or bytes; NULL when off; 22023 naming the setting when its value is bad';
GRANT EXECUTE ON FUNCTION storagelab_internal.throttle_limit(text) TO PUBLIC;

-- What the throttle measures: one row per physical standby streaming from
-- this server (replay lag in seconds and bytes) and per logical replication
-- slot (WAL its consumer has not confirmed, in bytes); none on a standby.
-- A standby's replay_lag, which the walsender estimates at each reply (it
-- grows while the replay is paused and WAL arrives), is counted only while
-- its replay_lsn is behind this server's flush position: after a pause it
-- stays at its last value until the next reply, although the standby has
-- caught up.  Walsenders without a replay position (pg_basebackup,
-- pg_receivewal) and those of logical slots are left out.  SECURITY
-- DEFINER: pg_stat_replication shows the lag columns only to members of
-- pg_read_all_stats, and the roles that run a migration need not be.
CREATE FUNCTION storagelab_internal.throttle_sources()
RETURNS TABLE (kind text, name text, lag_seconds numeric, lag_bytes numeric)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  flushed pg_lsn;
BEGIN
  IF pg_is_in_recovery() THEN
    RETURN;
  END IF;
  flushed := pg_current_wal_flush_lsn();
  RETURN QUERY
    SELECT 'standby', coalesce(nullif(r.application_name, ''), 'pid ' || r.pid),
           CASE WHEN r.replay_lsn >= flushed THEN 0 ELSE coalesce(extract(epoch FROM r.replay_lag), 0) END,
           greatest(pg_wal_lsn_diff(flushed, r.replay_lsn), 0)
      FROM pg_stat_replication r
     WHERE r.replay_lsn IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical')
    UNION ALL
    SELECT 'slot', s.slot_name::text, NULL::numeric,
           greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), coalesce(s.confirmed_flush_lsn, s.restart_lsn)), 0)
      FROM pg_replication_slots s
     WHERE s.slot_type = 'logical' AND s.wal_status IS DISTINCT FROM 'lost'
       AND coalesce(s.confirmed_flush_lsn, s.restart_lsn) IS NOT NULL;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.throttle_sources() IS
  'the throttle''s measures: per physical standby its replay lag (seconds; 0 once it has replayed all WAL) and bytes, per logical slot the WAL its consumer has not confirmed (SECURITY DEFINER: reads pg_stat_replication''s lag columns)';
GRANT EXECUTE ON FUNCTION storagelab_internal.throttle_sources() TO PUBLIC;

-- The DBA's throttle.query, run as the caller with search_path pg_catalog,
-- pg_temp, read-only and with a lock_timeout of 1 s, in a subtransaction
-- that is always rolled back; its one value as a boolean (NULL: false).
-- An error in it fails the batch loop, with the setting named.
CREATE FUNCTION storagelab_internal.throttle_query(q text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r boolean;
  msg text;
  st text;
BEGIN
  BEGIN
    PERFORM set_config('transaction_read_only', 'on', true);
    PERFORM set_config('lock_timeout', '1s', true);
    EXECUTE 'SELECT coalesce((' || regexp_replace(q, '[;[:space:]]+$', '') || E'\n)::boolean, false)' INTO r;
    RAISE EXCEPTION USING ERRCODE = 'SLT00';   -- undo whatever it did
  EXCEPTION
    WHEN SQLSTATE 'SLT00' THEN
      NULL;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
      RAISE EXCEPTION 'throttle.query failed: %', msg
        USING ERRCODE = st, DETAIL = format('The query: %s', q),
              HINT = 'Fix the setting throttle.query in storagelab.settings (one boolean; schema-qualified names; read-only), or delete it; then run the phase again.';
  END;
  RETURN r;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.throttle_query(text) IS
  'runs the setting throttle.query (read-only, lock_timeout 1s, always rolled back) and returns its boolean (NULL: false); errors name the setting';
GRANT EXECUTE ON FUNCTION storagelab_internal.throttle_query(text) TO PUBLIC;

-- Why a batch loop must wait now (e.g. 'replica lag 14.2 s on standby s1
-- (limit 10 s)'), NULL when it need not: the limits in the order
-- replica lag, replica bytes, slot bytes, throttle.query.
CREATE FUNCTION storagelab_internal.throttle_reason()
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  lag_s   numeric := storagelab_internal.throttle_limit('throttle.max_replica_lag');
  lag_b   numeric := storagelab_internal.throttle_limit('throttle.max_replica_lag_bytes');
  slot_b  numeric := storagelab_internal.throttle_limit('throttle.max_slot_lag_bytes');
  q       text := btrim(coalesce(storagelab_internal.setting('throttle.query'), ''));
  reason  text;
BEGIN
  IF lag_s IS NOT NULL OR lag_b IS NOT NULL OR slot_b IS NOT NULL THEN
    SELECT CASE WHEN s.kind = 'slot'
                THEN format('slot lag %s on logical slot %I (limit %s)', pg_size_pretty(s.lag_bytes), s.name, pg_size_pretty(slot_b))
                WHEN s.lag_seconds > lag_s
                THEN format('replica lag %s s on standby %I (limit %s s)', round(s.lag_seconds, 1), s.name, round(lag_s, 3)::float8)
                ELSE format('replica lag %s on standby %I (limit %s)', pg_size_pretty(s.lag_bytes), s.name, pg_size_pretty(lag_b)) END
      INTO reason
      FROM storagelab_internal.throttle_sources() s
     WHERE (s.kind = 'standby' AND (s.lag_seconds > lag_s OR s.lag_bytes > lag_b))
        OR (s.kind = 'slot' AND s.lag_bytes > slot_b)
     ORDER BY s.kind DESC, s.lag_seconds DESC NULLS LAST, s.lag_bytes DESC
     LIMIT 1;
    IF reason IS NOT NULL THEN
      RETURN reason;
    END IF;
  END IF;
  IF q <> '' AND storagelab_internal.throttle_query(q) THEN
    RETURN 'throttle.query returned true';
  END IF;
  RETURN NULL;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.throttle_reason() IS
  'why an online copy''s batch loop must wait now (replica lag, replica bytes, logical slot lag, throttle.query), NULL when it need not';
GRANT EXECUTE ON FUNCTION storagelab_internal.throttle_reason() TO PUBLIC;

-- throttle_wait(what, migration, relation, pause): CALLed by a batch loop
-- ("what" names it in notices and errors: 'the copy of migration sl...')
-- before each batch, at the start of a transaction.  It sleeps pause (the
-- copy's own pause between batches) first; then returns at once when no limit is
-- exceeded; else waits, checking every throttle.check_interval (pg_sleep,
-- which a cancel interrupts), and while it waits keeps the status and
-- throttled_seconds of the migration's progress rows (relation's, or all
-- when relation is NULL; none when migration is NULL: a NOTICE only)
-- current, each check COMMITted so that other sessions see it.  After
-- throttle.max_wait it sets the status to 'stopped: ...', commits, and
-- fails with 55000; the phase resumes when run again.  A status left by an
-- earlier wait is cleared (in the caller's transaction).  It restores the
-- caller's search_path, and commits only while throttled.
CREATE PROCEDURE storagelab_internal.throttle_wait(what text, migration text, relation text, pause interval DEFAULT '0')
LANGUAGE plpgsql
AS $fn$
DECLARE
  caller_path text := pg_catalog.current_setting('search_path');
  reason  text;
  t0      timestamptz;
  last    timestamptz;
  waited  numeric;
  step    numeric;
  max_wait numeric;
BEGIN
  PERFORM pg_catalog.pg_sleep(extract(epoch FROM pause));
  LOOP
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    reason := storagelab_internal.throttle_reason();
    EXIT WHEN reason IS NULL;
    step := coalesce(storagelab_internal.throttle_limit('throttle.check_interval'), 1);
    max_wait := storagelab_internal.throttle_limit('throttle.max_wait');
    IF t0 IS NULL THEN
      t0 := pg_catalog.clock_timestamp();
      last := t0;
      RAISE NOTICE '%: throttled: %; waiting (throttle.max_wait %)', what, reason, coalesce(storagelab_internal.setting('throttle.max_wait'), 'off');
    END IF;
    waited := extract(epoch FROM pg_catalog.clock_timestamp() - t0);
    IF migration IS NOT NULL THEN
      UPDATE storagelab.bigint_migration_progress p
         SET status = CASE WHEN waited > max_wait THEN 'stopped: throttled longer than throttle.max_wait: ' ELSE 'throttled: ' END || reason,
             throttled_seconds = p.throttled_seconds + pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - last)::numeric, 3)
       WHERE p.migration = throttle_wait.migration AND (throttle_wait.relation IS NULL OR p.relation = throttle_wait.relation);
      last := pg_catalog.clock_timestamp();
      COMMIT;
      PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    END IF;
    IF waited > max_wait THEN
      RAISE EXCEPTION '% was throttled for longer than throttle.max_wait (%)', what, storagelab_internal.setting('throttle.max_wait')
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('Waited %s s; the last reason: %s.', pg_catalog.round(waited, 1), reason),
              HINT = 'Run the phase again: it resumes where it stopped. Or raise throttle.max_wait, or the limit named, in storagelab.settings.';
    END IF;
    PERFORM pg_catalog.pg_sleep(step);
  END LOOP;
  IF migration IS NOT NULL THEN
    UPDATE storagelab.bigint_migration_progress p
       SET status = NULL,
           throttled_seconds = p.throttled_seconds + CASE WHEN last IS NULL THEN 0
                                 ELSE pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - last)::numeric, 3) END
     WHERE p.migration = throttle_wait.migration AND (throttle_wait.relation IS NULL OR p.relation = throttle_wait.relation)
       AND (p.status IS NOT NULL OR last IS NOT NULL);
  END IF;
  IF t0 IS NOT NULL THEN
    RAISE NOTICE '%: throttle lifted after % s', what, pg_catalog.round(extract(epoch FROM pg_catalog.clock_timestamp() - t0)::numeric, 1);
  END IF;
  PERFORM pg_catalog.set_config('search_path', caller_path, true);
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.throttle_wait(text, text, text, interval) IS
  'called by the batch loops of online copies before each batch: waits while a standby, a logical slot or throttle.query says so, showing the reason in the progress rows (committed); fails with 55000 after throttle.max_wait';
GRANT EXECUTE ON PROCEDURE storagelab_internal.throttle_wait(text, text, text, interval) TO PUBLIC;

-- storagelab install script, part 69: the WAL an online (copy-and-swap)
-- migration writes, per phase.  Each run of a phase of an online script
-- (INT -> BIGINT, part 67; layout, part 65) reads pg_current_wal_lsn()
-- before and after it; the difference (pg_wal_lsn_diff) is added to the
-- phase's figure in the column wal_bytes of the migration's rows of
-- storagelab.bigint_migration_progress (part 26), and the run ends with
-- the line "WAL written: start 12 MB, copy 3 GB, ... (this run of copy:
-- 1 GB)".  The figure is the server's WAL over the run, other sessions'
-- writes included: on a busy server, an upper bound of the phase's own.
-- A run that fails records nothing.  Phase start creates the migration's
-- progress rows (the copy fills them in when it starts); cleanup and
-- rollback delete them, and print the figures on their last line.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The column of part 26's table that this part fills (the update from 1.0 adds it).
COMMENT ON COLUMN storagelab.bigint_migration_progress.wal_bytes IS 'WAL bytes written by each phase of the migration that has run, by phase name (the same on each of its rows): pg_current_wal_lsn() differences around each run, summed over runs, other sessions'' WAL included';

-- The psql lines of an online script around its phase (mid: the migration
-- id; sources: the tables copied, as the copy names them in its progress
-- rows): before it (at_end false), the WAL position and the figures
-- recorded so far, into psql variables; after it, the record and the line.
CREATE FUNCTION storagelab_internal.rewrite_online_wal_sql(mid text, sources text[], at_end boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN NOT $3 THEN
    E'-- WAL written by this run of the phase: the WAL position before it, and the figures of earlier runs\n'
    || format(E'SELECT CASE WHEN pg_is_in_recovery() THEN '''' ELSE pg_current_wal_lsn()::text END AS wal_lsn0,\n'
              || E'       (SELECT coalesce(max(p.wal_bytes::text), ''{}'') FROM storagelab.bigint_migration_progress p WHERE p.migration = %L) AS wal_before \\gset sl_\n', $1)
  ELSE
    format(E'SELECT storagelab_internal.rewrite_online_wal_record(%L, :''phase'', :''sl_wal_lsn0'', :''sl_wal_before'', %L) AS wal_line \\gset sl_\n'
           || E'\\echo :sl_wal_line\n', $1, $2)
  END
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_wal_sql(text, text[], boolean) IS
  'the psql lines of an online script before its phase (the WAL position, the figures so far) or after it (rewrite_online_wal_record, and its line echoed)';

-- After a run of phase phase of migration mid: the WAL written since lsn0
-- added to the phase's figure in before (the figures at the run's start, a
-- jsonb object), recorded in the migration's progress rows (phase start
-- creates them, one per source, when missing); returns the line the script
-- prints.  On a standby (lsn0 empty) nothing is measured.
CREATE FUNCTION storagelab_internal.rewrite_online_wal_record(mid text, phase text, lsn0 text, before text, sources text[])
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  n   numeric;
  acc jsonb;
BEGIN
  IF nullif(lsn0, '') IS NULL OR pg_is_in_recovery() THEN
    RETURN 'WAL written: not measured (the server is in recovery)';
  END IF;
  n := pg_wal_lsn_diff(pg_current_wal_lsn(), lsn0::pg_lsn);
  acc := before::jsonb || jsonb_build_object(phase, coalesce((before::jsonb->>phase)::numeric, 0) + n);
  IF phase = 'start' THEN
    INSERT INTO storagelab.bigint_migration_progress AS p (migration, relation, max_block, wal_bytes)
    SELECT mid, s, 0, acc FROM unnest(sources) s
    ON CONFLICT ON CONSTRAINT bigint_migration_progress_pkey DO UPDATE SET wal_bytes = EXCLUDED.wal_bytes;
  ELSE
    UPDATE storagelab.bigint_migration_progress p SET wal_bytes = acc WHERE p.migration = mid;
  END IF;
  RETURN 'WAL written: '
         || (SELECT string_agg(format('%s %s', e.key, pg_size_pretty(e.value::text::numeric)), ', '
                               ORDER BY array_position(ARRAY['start', 'copy', 'index', 'replay', 'swap', 'validate', 'cleanup', 'rollback'], e.key), e.key)
               FROM jsonb_each(acc) e)
         || format(' (this run of %s: %s)', phase, pg_size_pretty(n));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_online_wal_record(text, text, text, text, text[]) IS
  'after a run of a phase of an online script: the WAL written since lsn0 added to that phase''s figure in the migration''s progress rows (wal_bytes; phase start creates the rows), and the line "WAL written: ..." the script prints';

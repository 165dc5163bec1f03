-- storagelab install script, part 09: the growth of every int_overflow
-- column, fitted when a snapshot is recorded rather than when the view is
-- read.
--
-- storagelab.int_overflow projects overflow_at from the growth of each
-- column's recorded values: the least-squares slope over the snapshots in
-- int_overflow.growth_window.  Fitting it over the raw history at query time
-- costs about 1 s with a month of daily snapshots of 30,000 columns, too much
-- for a view monitoring polls.  The snapshot function refits it once per
-- snapshot (a daily job) and stores one row per column here; the view joins
-- these rows.  The history stays the state (dumped, kept by upgrades); this
-- table is derived from it and rebuilt from it (int_overflow_growth_refit()),
-- and dumped beside it (a restore keeps overflow_at).

CREATE TABLE storagelab_internal.int_overflow_growth (
  schema_name  name NOT NULL,
  table_name   name NOT NULL,
  column_name  name NOT NULL,
  per_second   float8 NOT NULL,
  snapshots    int4 NOT NULL,
  fitted_at    timestamptz NOT NULL,
  PRIMARY KEY (schema_name, table_name, column_name)
);
COMMENT ON TABLE storagelab_internal.int_overflow_growth IS
  'per int_overflow column, the least-squares growth of its recorded values over int_overflow.growth_window, as of the last snapshot; derived from storagelab.int_overflow_history by int_overflow_growth_refit(); kept by pg_dump, so that overflow_at is the same straight after a restore';
-- Dumped with the history (whose fit it is, as of the last snapshot):
-- refitting at restore time would fit a window ending at the restore, not
-- at the snapshot.  Keyed by names, which a restore keeps.
SELECT pg_catalog.pg_extension_config_dump('storagelab_internal.int_overflow_growth', '');

-- Refit every column's growth from the history in the window.
-- SECURITY DEFINER, the one exception to the conventions: members of
-- pg_monitor record snapshots, and may write the history but never read
-- its values (int_overflow_snapshot()'s grants); the fit must read them.
-- It takes no argument and runs no SQL of the caller: it replaces derived
-- rows by what the history determines, which anyone may trigger; it
-- returns only how many columns it fitted.
CREATE FUNCTION storagelab_internal.int_overflow_growth_refit()
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fitted integer;
BEGIN
  DELETE FROM storagelab_internal.int_overflow_growth;
  INSERT INTO storagelab_internal.int_overflow_growth
  SELECT h.schema_name, h.table_name, h.column_name,
         -- date_part() gives float8 directly (extract() goes through numeric)
         regr_slope(h.value::float8, date_part('epoch', h.taken_at)), count(*), now()
    FROM storagelab.int_overflow_history h
   WHERE h.taken_at >= now() - storagelab_internal.setting('int_overflow.growth_window')::interval
   GROUP BY h.schema_name, h.table_name, h.column_name
  -- two snapshots at least, at two different times
  HAVING count(*) >= 2 AND regr_slope(h.value::float8, date_part('epoch', h.taken_at)) IS NOT NULL;
  GET DIAGNOSTICS fitted = ROW_COUNT;
  RETURN fitted;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.int_overflow_growth_refit() IS
  'replaces storagelab_internal.int_overflow_growth with the least-squares growth of every column over int_overflow.growth_window of the history; returns the number of columns fitted';

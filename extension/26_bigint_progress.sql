-- storagelab install script, part 26: storagelab.bigint_migration_progress,
-- one row per table that an online migration copies: made by phase start,
-- filled in by the copy (storagelab.rewrite_online_copy, part 66), with the
-- WAL of each phase (part 69); and by the backfill of 1.0's online scripts,
-- which carry their own code and need only this table and its columns (a 1.0
-- migration under way at the update still finishes: scripts/upgrade-test.sh).
--
-- Every role reads the rows (monitoring); only the roles that may UPDATE a
-- row's table, and superusers, write it (row-level security).  The other
-- phases need the table's owner.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

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
  wal_bytes   jsonb,
  status      text,                                -- the throttle's (part 29)
  throttled_seconds numeric NOT NULL DEFAULT 0,
  PRIMARY KEY (migration, relation)
);
COMMENT ON TABLE storagelab.bigint_migration_progress IS
  'progress of the copy of online migrations (and of the backfill of 1.0''s online INT->BIGINT scripts): per table, the next heap block to copy and the last block that existed when the copy started';
COMMENT ON COLUMN storagelab.bigint_migration_progress.migration IS 'the migration id (sl... in the script header)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.relation IS 'the table with storage being copied (schema-qualified, quoted)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.next_block IS 'first heap block of the next batch';
COMMENT ON COLUMN storagelab.bigint_migration_progress.max_block IS 'table size in blocks when the copy started (1.0: when the sync trigger was installed): the copy stops there, later rows come through the change log (1.0: the sync trigger)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.done IS 'true once every block up to max_block is copied';
COMMENT ON COLUMN storagelab.bigint_migration_progress.updated_at IS 'time of the last committed batch';
COMMENT ON COLUMN storagelab.bigint_migration_progress.batches IS 'batches committed so far';
COMMENT ON COLUMN storagelab.bigint_migration_progress.rows_copied IS 'rows the batches copied (1.0''s backfill: updated; rows the sync trigger had already written are skipped)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.batch_blocks IS 'size in blocks of the next batch (adapted to a time budget: bigint_migration.copy_batch_time)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.last_batch_ms IS 'milliseconds the copy statement of the last batch took (1.0''s backfill held its row locks that long plus the COMMIT)';
COMMENT ON COLUMN storagelab.bigint_migration_progress.max_batch_ms IS 'longest copy statement of any batch so far, in milliseconds';
COMMENT ON COLUMN storagelab.bigint_migration_progress.started_at IS 'when the first batch started (NULL: phase start has run, the copy has not)';
GRANT SELECT, INSERT, UPDATE, DELETE ON storagelab.bigint_migration_progress TO PUBLIC;
ALTER TABLE storagelab.bigint_migration_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON storagelab.bigint_migration_progress FOR SELECT USING (true);
CREATE POLICY table_writers_write ON storagelab.bigint_migration_progress FOR ALL
  USING (coalesce(pg_catalog.has_table_privilege(pg_catalog.to_regclass(relation), 'UPDATE'), false))
  WITH CHECK (coalesce(pg_catalog.has_table_privilege(pg_catalog.to_regclass(relation), 'UPDATE'), false));
COMMENT ON POLICY read_all ON storagelab.bigint_migration_progress IS
  'every role may read the progress of every migration';
COMMENT ON POLICY table_writers_write ON storagelab.bigint_migration_progress IS
  'a progress row is written only by roles that may UPDATE its table (who can run the copy) and superusers';

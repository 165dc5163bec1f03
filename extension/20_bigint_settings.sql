-- storagelab install script, part 20: the settings of the INT -> BIGINT
-- generator (storagelab.setting_values lists them with their meaning).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.max_blocking_transaction_age', '1min',
   'generated migration scripts abort in their pre-flight check when another transaction older than this holds a lock on a table they convert'),
  ('bigint_migration.rewrite_mb_per_second', '50',
   'throughput (heap plus index bytes per second, in MB) that generated scripts assume when they estimate the duration of a table rewrite');
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.backfill_batch_time', '200ms',
   'online migrations: how long each backfill batch should take (its copy statement; its row locks are held that long plus the COMMIT); the batch size in blocks is adapted after every batch; 0 = fixed batches of backfill_batch_blocks'),
  ('bigint_migration.backfill_batch_blocks', '64',
   'online migrations: heap blocks in the first backfill batch (in every batch when backfill_batch_time is 0)'),
  ('bigint_migration.backfill_pause', '20ms',
   'online migrations: pause between backfill batches (skipped after a batch that copied no row)');

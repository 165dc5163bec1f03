-- storagelab install script, part 21: the settings of the INT -> BIGINT
-- generator (storagelab.setting_values lists them with their meaning).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.max_blocking_transaction_age', '1min',
   'scripts abort in pre-flight when an older transaction holds a lock on a table they convert'),
  ('bigint_migration.rewrite_mb_per_second', '50',
   'heap plus index MB per second that scripts assume when they estimate a table rewrite''s duration');
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.backfill_batch_time', '200ms',
   'no effect since 1.1 (sized mode shadow''s batches; mode removed); kept for old overrides'),
  ('bigint_migration.backfill_batch_blocks', '64',
   'online (copy and swap): heap blocks in the first copy batch (in every one when copy_batch_time is 0)'),
  ('bigint_migration.backfill_pause', '20ms',
   'no effect since 1.1 (paused mode shadow''s backfill; mode removed); kept for old overrides');
INSERT INTO storagelab_internal.setting_defaults VALUES
  ('bigint_migration.copy_batch_time', '2s',
   'online: target duration of a copy batch (it holds no lock clients wait for); 0 = fixed batches');

-- State a user of storagelab 1.0 has, for scripts/upgrade-test.sh: run in a
-- database where CREATE EXTENSION storagelab VERSION '1.0' just ran, before
-- ALTER EXTENSION storagelab UPDATE.  Written against 1.0's API, which never
-- changes: do not edit it for later versions (a release of its own gets a
-- seed-<version>.sql of its own).
\set ON_ERROR_STOP 1

-- A user table with an int key fed by a sequence, a column to profile, and
-- some history for int_overflow's projection.
CREATE TABLE public.orders (id serial PRIMARY KEY, note text, qty int);
INSERT INTO public.orders (note, qty)
  SELECT repeat('x', g % 40), g FROM generate_series(1, 2000) g;
SELECT setval('public.orders_id_seq', 1500000000);
ANALYZE public.orders;

-- settings: a DBA's overrides.
INSERT INTO storagelab.settings (name, value) VALUES
  ('scripts.lock_timeout', '750ms'),
  ('scripts.lock_retries', '7');

-- int_overflow_history: recorded by snapshot(), plus rows from earlier days.
SELECT storagelab.snapshot() > 0 AS snapshot_recorded;
INSERT INTO storagelab.int_overflow_history
       (taken_at, schema_name, table_name, column_name, sequence_schema, sequence_name, value, is_estimate)
VALUES ('2026-10-01 00:00+00', 'public', 'orders', 'id', 'public', 'orders_id_seq', 1400000000, false),
       ('2026-11-01 00:00+00', 'public', 'orders', 'id', 'public', 'orders_id_seq', 1450000000, false),
       ('2026-11-01 00:00+00', 'public', 'orders', 'qty', NULL, NULL, 2000, true);

-- column_profiles: written by column_profile().
SELECT count(*) > 0 AS profiled FROM storagelab.column_profile('public.orders');

-- bigint_migration_progress: an online migration's backfill, half done.
INSERT INTO storagelab.bigint_migration_progress
       (migration, relation, next_block, max_block, done, batches, rows_copied,
        batch_blocks, last_batch_ms, max_batch_ms, started_at)
VALUES ('sl20261120a', 'public.orders', 6, 12, false, 3, 1000, 2, 12.5, 40.25,
        '2026-11-20 10:00+00');

-- storagelab.int_overflow on Pagila: the output's shape (stable values only).
\i test/fixtures/pagila.sql

-- The columns, in order, with their types.
SELECT attname, atttypid::regtype
  FROM pg_attribute
 WHERE attrelid = 'storagelab.int_overflow'::regclass AND attnum > 0
 ORDER BY attnum;

-- Pagila's rows by source and status.
SELECT source, status, count(*)
  FROM storagelab.int_overflow
 WHERE relation::text NOT LIKE 'storagelab.%'
 GROUP BY 1, 2 ORDER BY 1, 2;

-- Sequence-fed keys: Pagila's serials, far from their limits.
SELECT relation, column_name, column_type, sequence, limit_value, severity,
       referencing_columns
  FROM storagelab.int_overflow
 WHERE source IN ('sequence', 'identity')
 ORDER BY relation::text, column_name;

-- payment is partitioned: one row per column, none for its partitions.
SELECT count(*) FILTER (WHERE relation = 'payment'::regclass) AS parent_rows,
       count(*) FILTER (WHERE relation::text LIKE 'payment\_p%') AS partition_rows
  FROM storagelab.int_overflow;

-- Index-measured values agree with the table.
SELECT o.current_value = (SELECT max(inventory_id) FROM rental) AS exact
  FROM storagelab.int_overflow o
 WHERE o.relation = 'rental'::regclass AND o.column_name = 'inventory_id';

-- Settings.
SELECT name, value FROM storagelab.setting_values
 WHERE name LIKE 'int_overflow.%' ORDER BY name;

-- Near the limit: push one sequence, read the view, put it back (setval
-- is not undone by ROLLBACK).
SELECT last_value AS actor_last, is_called AS actor_called FROM actor_actor_id_seq \gset
SELECT setval('actor_actor_id_seq', 2000000000) AS pushed;
SELECT relation, column_name, used_pct, values_left, severity, referencing_columns
  FROM storagelab.int_overflow WHERE severity <> 'ok';
SELECT setval('actor_actor_id_seq', :actor_last, :'actor_called') = :actor_last AS restored;

-- The snapshot, and its deprecated old name (a NOTICE says which to call).
BEGIN;
SELECT storagelab.int_overflow_snapshot() > 0 AS recorded;
SELECT storagelab.snapshot() > 0 AS recorded_by_old_name;
SELECT count(DISTINCT taken_at) AS snapshots FROM storagelab.int_overflow_history;
ROLLBACK;

-- int_overflow_scan() on a table.
SELECT column_name, column_type, min_value, max_value, severity
  FROM storagelab.int_overflow_scan('film_actor');

-- Bad input.
\set VERBOSITY terse
SELECT * FROM storagelab.int_overflow_scan('actor_info');
SELECT storagelab_internal.int_overflow_index_bounds('actor');
\set VERBOSITY default

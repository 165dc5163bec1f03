-- pgTAP: bigint_migration_group_script() on the pgbench tables with foreign
-- keys: the seed article's twelve int4 columns in one generated script,
-- executed with psql -v ON_ERROR_STOP=1 -f in a scratch database; then the
-- script's safety nets: the pre-flight check refuses a database that changed
-- since generation, a long-running lock holder aborts it before it locks
-- anything, and a short one is waited out by the lock retries.  Other
-- sessions are synchronized through pg_locks and catalog state, polled with
-- a deadline, never by sleeping for a guessed time.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_pgbench;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_pgbench TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_pgbench
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set pgbench_scale 1
\i test/fixtures/pgbench.sql
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
-- For the sessions started below: hold_until_retried(rel), called by a
-- session that holds a lock on rel, returns once another session's request
-- for a lock on rel has waited and timed out (so that the waiter retries),
-- or after 60 s (false); wait_for_bigint(rel, col) returns once the column
-- is bigint, or after 60 s (false).
CREATE FUNCTION public.hold_until_retried(rel regclass) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '60 s';
  seen boolean := false;
BEGIN
  WHILE clock_timestamp() < deadline LOOP
    IF EXISTS (SELECT 1 FROM pg_locks WHERE relation = rel AND NOT granted) THEN
      seen := true;
    ELSIF seen THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN false;
END
$f$;
CREATE FUNCTION public.wait_for_bigint(rel regclass, col name) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '60 s';
BEGIN
  WHILE clock_timestamp() < deadline LOOP
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attname = col AND atttypid = 'int8'::regtype) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN false;
END
$f$;
CREATE TABLE snap.before AS SELECT * FROM snap.data();
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE TABLE snap.twelve (rel regclass, col name);
INSERT INTO snap.twelve VALUES
  ('pgbench_history', 'tid'), ('pgbench_history', 'bid'), ('pgbench_history', 'aid'), ('pgbench_history', 'delta'),
  ('pgbench_tellers', 'tid'), ('pgbench_tellers', 'bid'), ('pgbench_tellers', 'tbalance'),
  ('pgbench_accounts', 'aid'), ('pgbench_accounts', 'bid'), ('pgbench_accounts', 'abalance'),
  ('pgbench_branches', 'bid'), ('pgbench_branches', 'bbalance');

SELECT plan(20);

SELECT storagelab.bigint_migration_group_script(array_agg(rel), array_agg(col)) FROM snap.twelve
\g (format=unaligned tuples_only=on) :tmp/twelve.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/twelve.sql > :tmp/twelve.out 2>&1; echo $?`
\set alters `grep -c '^ALTER TABLE public.pgbench_[a-z]*$' :tmp/twelve.sql`
\set fkadds `grep -c '^ALTER TABLE .* ADD CONSTRAINT .* FOREIGN KEY' :tmp/twelve.sql`

SELECT is(:'rc'::text, '0', 'the generated script for the twelve columns ran to COMMIT');
SELECT is(:'alters'::text, '4', 'one ALTER TABLE per table: each of the four tables is rewritten once');
SELECT is(:'fkadds'::text, '5', 'each of the five foreign keys is re-added (validated) once');
SELECT is((SELECT count(*) FROM snap.twelve t JOIN pg_attribute a ON a.attrelid = t.rel AND a.attname = t.col
            WHERE a.atttypid = 'int8'::regtype), 12::bigint, 'all twelve columns are bigint');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before', 'row counts and checksums unchanged');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'keys, foreign keys (names, actions), indexes and storage options as they were');
SELECT is((SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated
            AND conrelid::regclass::text LIKE 'pgbench%'), 5::bigint, 'the five foreign keys are back and valid');
SELECT lives_ok($$
  WITH b AS (INSERT INTO pgbench_branches VALUES (3000000000, 3000000000) RETURNING bid),
       t AS (INSERT INTO pgbench_tellers SELECT 3000000001, bid, 3000000000 FROM b RETURNING tid, bid),
       a AS (INSERT INTO pgbench_accounts SELECT 3000000002, bid, 3000000000, '' FROM b RETURNING aid)
  INSERT INTO pgbench_history SELECT t.tid, t.bid, a.aid, 3000000000, now() FROM t, a$$,
  'inserts past 2^31 through branches -> tellers -> accounts -> history');
SELECT throws_ok($$INSERT INTO pgbench_history (tid, bid, aid) VALUES (1, 1, 3000000099)$$, '23503', NULL,
                 'the foreign keys still reject a missing parent');

-- Dry run: everything, then ROLLBACK.
CREATE TABLE public.t_dry (id int PRIMARY KEY);
CREATE TABLE public.t_dry_child (pid int REFERENCES public.t_dry);
SELECT storagelab.bigint_migration_script('t_dry', 'id') \g (format=unaligned tuples_only=on) :tmp/dry.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v dry_run=1 -d :DBNAME -f :tmp/dry.sql > :tmp/dry.out 2>&1; echo $?`
\set msg `grep -o 'dry run: rolled back' :tmp/dry.out`
SELECT is(:'rc' || ' ' || :'msg', '0 dry run: rolled back', 'a dry run (-v dry_run=1) runs every step and rolls back');
SELECT is((SELECT atttypid::regtype::text FROM pg_attribute WHERE attrelid = 'public.t_dry'::regclass AND attname = 'id'),
          'integer', '... leaving the column integer');

-- Pre-flight: the database changed after the script was generated.
CREATE TABLE public.t_pre (id int PRIMARY KEY);
CREATE TABLE public.t_pre_child (pid int REFERENCES public.t_pre);
\set t t_pre
\set col id
\set file pre
SELECT storagelab.bigint_migration_script(:'t'::regclass, :'col') \g (format=unaligned tuples_only=on) :tmp/pre.sql
ALTER TABLE public.t_pre_child ALTER COLUMN pid TYPE bigint;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/pre.sql > :tmp/pre.out 2>&1; echo $?`
\set msg `grep -o 'the database changed since this script was generated' :tmp/pre.out | head -1`
SELECT isnt(:'rc'::text, '0', 'a script whose database changed since generation stops');
SELECT is(:'msg'::text, 'the database changed since this script was generated', '... in its pre-flight check');
SELECT is((SELECT atttypid::regtype::text FROM pg_attribute WHERE attrelid = 'public.t_pre'::regclass AND attname = 'id'),
          'integer', '... without changing anything');

-- A transaction holding a lock for longer than bigint_migration.max_blocking_transaction_age.
ALTER TABLE public.t_pre_child ALTER COLUMN pid TYPE int;
INSERT INTO storagelab.settings VALUES ('bigint_migration.max_blocking_transaction_age', '0s'), ('scripts.lock_timeout', '100ms');
SELECT storagelab.bigint_migration_script('t_pre', 'id') \g (format=unaligned tuples_only=on) :tmp/long.sql
DELETE FROM storagelab.settings WHERE name = 'bigint_migration.max_blocking_transaction_age';
SELECT storagelab.bigint_migration_script('t_pre', 'id') \g (format=unaligned tuples_only=on) :tmp/retry.sql
-- The holder keeps its lock until this session releases advisory lock 4242.
SELECT pg_advisory_lock(4242) \gset
\set bg `(psql -X -q -d :DBNAME -c 'BEGIN' -c 'LOCK TABLE public.t_pre_child IN ACCESS SHARE MODE' -c 'SELECT pg_advisory_xact_lock(4242)' -c 'COMMIT' >/dev/null 2>&1 &); for i in $(seq 600); do [ "$(psql -X -At -d :DBNAME -c "SELECT count(*) FROM pg_locks WHERE relation = 'public.t_pre_child'::regclass AND granted AND pid <> pg_backend_pid()")" = 1 ] && break; sleep 0.1; done; echo started`
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/long.sql > :tmp/long.out 2>&1; echo $?`
SELECT pg_advisory_unlock(4242) \gset
\set bg `for i in $(seq 600); do [ "$(psql -X -At -d :DBNAME -c "SELECT count(*) FROM pg_locks WHERE relation = 'public.t_pre_child'::regclass AND pid <> pg_backend_pid()")" = 0 ] && break; sleep 0.1; done; echo done`
\set msg `grep -o 'long-running transactions hold locks' :tmp/long.out | head -1`
SELECT is(:'msg'::text, 'long-running transactions hold locks', 'a long-running lock holder aborts the script in its pre-flight check');
-- A short lock holder is waited out: lock_timeout 100ms, retried.  The
-- holder commits once the script's lock request has timed out once.
\set bg `(psql -X -q -d :DBNAME -c 'BEGIN' -c 'LOCK TABLE public.t_pre_child IN ACCESS SHARE MODE' -c "SELECT public.hold_until_retried('public.t_pre_child')" -c 'COMMIT' >/dev/null 2>&1 &); for i in $(seq 600); do [ "$(psql -X -At -d :DBNAME -c "SELECT count(*) FROM pg_locks WHERE relation = 'public.t_pre_child'::regclass AND granted AND pid <> pg_backend_pid()")" = 1 ] && break; sleep 0.1; done; echo started`
\set rc `psql -X -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/retry.sql > :tmp/retry.out 2>&1; echo $?`
\set retried `grep -c 'lock attempt' :tmp/retry.out`
SELECT ok(:'rc' = '0' AND :'retried'::int > 0, 'a short lock holder is waited out by the retries, and the script commits');

-- A session that cached a PL/pgSQL trigger function's plan before the
-- migration keeps working after it (without the script's ALTER FUNCTION it
-- fails: "type of parameter N (bigint) does not match that when preparing
-- the plan (integer)").
CREATE TABLE public.tf_t (id int PRIMARY KEY, v int);
CREATE TABLE public.tf_log (id int);
CREATE FUNCTION public.tf_trg() RETURNS trigger LANGUAGE plpgsql
  AS $f$ DECLARE x int; BEGIN x := NEW.id; INSERT INTO public.tf_log VALUES (NEW.id); RETURN NEW; END $f$;
CREATE TRIGGER tf AFTER INSERT ON public.tf_t FOR EACH ROW EXECUTE FUNCTION public.tf_trg();
SELECT storagelab.bigint_migration_script('tf_t', 'id') \g (format=unaligned tuples_only=on) :tmp/tf.sql
-- The session inserts (its plan cached), waits until the column is bigint, and inserts again.
\set bg `(psql -X -d :DBNAME -c 'INSERT INTO public.tf_t VALUES (1, 1)' -c "SELECT public.wait_for_bigint('public.tf_t', 'id')" -c 'INSERT INTO public.tf_t VALUES (2, 2)' > :tmp/tf_bg.out 2>&1 &); for i in $(seq 600); do [ "$(psql -X -At -d :DBNAME -c 'SELECT count(*) FROM public.tf_log')" = 1 ] && break; sleep 0.1; done; echo started`
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/tf.sql > :tmp/tf.out 2>&1; echo $?`
\set mismatch `for i in $(seq 600); do [ "$(grep -c 'INSERT 0 1\|ERROR' :tmp/tf_bg.out)" -ge 2 ] && break; sleep 0.1; done; grep -c 'does not match' :tmp/tf_bg.out`
\set waited `grep -c '^ t$' :tmp/tf_bg.out`
SELECT is(:'rc'::text, '0', 'the script for a table with a PL/pgSQL trigger ran to COMMIT');
SELECT is(:'waited'::text, '1', 'the session saw the column become bigint before its second insert');
SELECT is(:'mismatch'::text, '0', 'a session with the trigger function''s plan cached does not fail afterwards');
SELECT is((SELECT count(*) FROM public.tf_log), 2::bigint, '... and its insert after the migration fired the trigger');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_pgbench;
\set rc `rm -rf :tmp`

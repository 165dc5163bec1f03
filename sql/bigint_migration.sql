-- bigint_migration: the dependency model, the script's shape, and every
-- refusal (bad input, blockers, mode 'shadow' removed in 1.1).
-- Generated scripts are executed by the pgTAP tests (test/bigint_migration_*.sql).
SET client_min_messages = warning;
CREATE SCHEMA bm;
CREATE TABLE bm.parent (id serial PRIMARY KEY, label text);
CREATE TABLE bm.child (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                       parent_id int NOT NULL REFERENCES bm.parent ON DELETE CASCADE,
                       note text);
CREATE TABLE bm.grandchild (child_id int REFERENCES bm.child, parent_id int REFERENCES bm.parent);
CREATE VIEW bm.v AS SELECT p.id, c.id AS child_id FROM bm.parent p JOIN bm.child c ON c.parent_id = p.id;
CREATE VIEW bm.vv AS SELECT id FROM bm.v;
CREATE TRIGGER t_upd BEFORE UPDATE OF parent_id ON bm.child FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger();

-- The model: every column of the component, every dependent object.
-- (PostgreSQL 18 and later also list the columns' NOT NULL constraints,
-- which are pg_constraint rows there: left out, so that one expected output
-- fits every major; the TAP tests' snap.catalog() comparisons check them.)
SELECT kind, identity, depth, lock, handling
  FROM storagelab.bigint_migration_objects('bm.parent', 'id') o
 WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE o.classid = 'pg_constraint'::regclass AND c.oid = o.objid AND c.contype = 'n')
 ORDER BY depth, kind, identity;

-- The script: its statements in order (header comments carry sizes and a
-- timestamp, so only statement lines are shown, and no role names).
SELECT line
  FROM regexp_split_to_table(storagelab.bigint_migration_script('bm.parent', 'id'), E'\n') WITH ORDINALITY AS l(line, n)
 WHERE line ~ '^(SET|BEGIN|COMMIT|LOCK| +EXECUTE|DROP|ALTER|CREATE|ANALYZE|DO|CALL|\\set)' AND line !~ ' OWNER TO '
 ORDER BY n;

-- Several columns at once: the twelve-column case groups tables.
SELECT count(*) FILTER (WHERE line ~ '^ALTER TABLE bm\.[a-z]+$') AS alter_table_statements,
       count(*) FILTER (WHERE line ~ 'ADD CONSTRAINT .* FOREIGN KEY') AS foreign_keys_readded
  FROM regexp_split_to_table(storagelab.bigint_migration_group_script(
         ARRAY['bm.parent', 'bm.child']::regclass[], ARRAY['id', 'id']::name[]), E'\n') AS line;

\set VERBOSITY terse
-- Bad input.
SELECT storagelab.bigint_migration_script(NULL, 'id');
SELECT storagelab.bigint_migration_script('bm.parent', NULL);
SELECT storagelab.bigint_migration_script('bm.parent', 'id', NULL);
SELECT storagelab.bigint_migration_script('bm.parent', 'no_such_column');
SELECT storagelab.bigint_migration_script('bm.parent', 'label');
SELECT storagelab.bigint_migration_script('bm.v', 'id');
SELECT storagelab.bigint_migration_objects('bm.parent', 'ctid');
SELECT storagelab.bigint_migration_group_script(ARRAY['bm.parent']::regclass[], ARRAY['id', 'label']::name[]);
-- Modes: blocking, online (alias copy_swap); anything else is invalid.
SELECT storagelab.bigint_migration_script('bm.parent', 'id', 'fast');
\set VERBOSITY default
-- Mode shadow (1.0's online writer) was removed in 1.1: 22023, with a hint.
SET client_min_messages = notice;
DO $$
DECLARE msg text; hint text; st text;
BEGIN
  PERFORM storagelab.bigint_migration_script('bm.parent', 'id', 'shadow');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT, st = RETURNED_SQLSTATE;
  RAISE NOTICE E'%: %\nhint: %', st, msg, hint;
END $$;
SET client_min_messages = warning;
-- The online script: its phases (psql \if sections chosen with -v phase=...).
SELECT substring(line FROM '^\\if :ph_([a-z_]+)$') AS phase
  FROM regexp_split_to_table(storagelab.bigint_migration_script('bm.parent', 'id', 'online'), E'\n') WITH ORDINALITY AS l(line, n)
 WHERE line ~ '^\\if :ph_[a-z_]+$'
 ORDER BY n;
SELECT storagelab.bigint_migration_script('bm.parent', 'id', 'copy_swap') = storagelab.bigint_migration_script('bm.parent', 'id', 'online')
       AS copy_swap_is_online;

-- Blockers: a partition key, a domain-typed column and a row type stored in
-- another table, in one component: all listed in one error.
SET client_min_messages = warning;
CREATE TABLE bm.multi (id int PRIMARY KEY);
CREATE TABLE bm.pk_part (m_id int REFERENCES bm.multi, x int) PARTITION BY RANGE (m_id);
CREATE TABLE bm.pk_part_1 PARTITION OF bm.pk_part FOR VALUES FROM (0) TO (1000);
CREATE DOMAIN bm.posint AS int CHECK (VALUE > 0);
CREATE TABLE bm.dom (d bm.posint REFERENCES bm.multi);
CREATE TABLE bm.uses_row (r bm.multi);
CREATE TYPE bm.rowt AS (id int);
CREATE TABLE bm.typed OF bm.rowt (PRIMARY KEY (id));
SET client_min_messages = notice;
DO $$
DECLARE msg text; det text; hint text; st text;
BEGIN
  PERFORM storagelab.bigint_migration_script('bm.multi', 'id');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT, st = RETURNED_SQLSTATE;
  RAISE NOTICE E'%: %\n%\nhint: %', st, msg, det, hint;
END $$;
DO $$
DECLARE msg text; det text; st text;
BEGIN
  PERFORM storagelab.bigint_migration_script('bm.typed', 'id');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
  RAISE NOTICE E'%: %\n%', st, msg, det;
END $$;
SET client_min_messages = warning;
SELECT kind, identity, sqlstate FROM storagelab.bigint_migration_objects('bm.multi', 'id') WHERE kind = 'blocker' ORDER BY 2;

-- Nothing to do: an already-bigint key without int sequences.
CREATE TABLE bm.big (id bigint PRIMARY KEY);
\set VERBOSITY terse
SELECT storagelab.bigint_migration_script('bm.big', 'id');
-- The plan reads storagelab.int_overflow (another part of storagelab),
-- resolved at call time: it must run without error when the view exists.
SELECT CASE WHEN to_regclass('storagelab.int_overflow') IS NULL THEN true
            ELSE (SELECT count(*) >= 0 FROM storagelab.bigint_migration_plan()) END AS plan_callable;
\set VERBOSITY default

DROP SCHEMA bm CASCADE;
RESET client_min_messages;

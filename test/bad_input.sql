-- pgTAP: every public storagelab function and procedure survives bad input.
--
-- The routines are read from the catalog (every function and procedure of
-- schema storagelab), so a new one is swept without editing this file.  Each
-- is called once with valid arguments, then with each argument in turn bad
-- and the others valid, then, for each regclass argument, every odd relation
-- crossed with every bad value of each column, sample size or flag argument.
-- Valid arguments: a small table and what phases start and expand of a
-- migration "sl_sweep" leave.  A procedure that reaches its first COMMIT
-- (refused in this transaction block, 2D000) accepted its arguments: that
-- counts as success.  Bad values, by type: NULL; for relations a nonexistent OID, OID 0, a view, a materialized view,
-- a sequence, an index, a composite type, a partitioned parent and a
-- partition, a foreign table, another session's temporary table (a second
-- session through dblink), a TOAST table, a catalog and a shared catalog, an
-- unlogged, an empty and a dropped-column table, a typed table, an
-- inheritance parent and child, a table with row security forced, this
-- session's temporary table, and a table with a hostile name; for names missing, dropped, system and hostile columns; negative and
-- huge numbers; unknown modes; malformed jsonb.
--
-- A call may succeed (a documented result) or fail.  A failure must:
-- - have a SQLSTATE of the classes bad input can give (22, 42, 0A, 55, 25);
--   none is internal (XX), and the relation kinds have their own: a
--   nonexistent relation 42P01, another session's temporary table 0A000;
-- - carry a hint, or match a row of no_hint_needed (which says why);
-- - show no internal query in its CONTEXT: the frames below the test's own
--   EXECUTE may name PL/pgSQL functions and lines, and quote a statement only
--   on one line of at most 160 characters (a PERFORM of a check); a longer
--   or multi-line statement is an internal query leaking to the user.
-- The server must not crash: a crash ends this file early and pg_prove
-- counts it as a failure.  No call may wait on a lock (lock_timeout).
BEGIN;
SET client_min_messages = warning;
SET LOCAL lock_timeout = '2s';
-- Not a measurement: JIT would compile the larger queries of report() and
-- the generators on every call (25 s of this file's time on a busy machine).
SET LOCAL jit = off;

CREATE SCHEMA bad;
CREATE TABLE bad.plain (id int PRIMARY KEY, n int, t text, b bytea);
INSERT INTO bad.plain SELECT g, g, repeat('x', g), decode(repeat('ab', g), 'hex')
  FROM generate_series(1, 20) g;
CREATE TABLE bad.empty (id int);
CREATE UNLOGGED TABLE bad.unlogged (id int, b bytea);
INSERT INTO bad.unlogged VALUES (1, '\x00');
CREATE TABLE bad.dropped (id int, gone int, b bytea);
ALTER TABLE bad.dropped DROP COLUMN gone;
CREATE TABLE bad."x""; DROP TABLE bad.plain; --" (id int PRIMARY KEY, t text);
INSERT INTO bad."x""; DROP TABLE bad.plain; --" VALUES (1, 'a');
CREATE INDEX bad_idx ON bad.plain (n);
CREATE VIEW bad.v AS SELECT * FROM bad.plain;
CREATE MATERIALIZED VIEW bad.mv AS SELECT * FROM bad.plain;
CREATE SEQUENCE bad.seq;
CREATE TYPE bad.comp AS (x int);
CREATE FOREIGN DATA WRAPPER bad_fdw;
CREATE SERVER bad_srv FOREIGN DATA WRAPPER bad_fdw;
CREATE FOREIGN TABLE bad.ft (id int) SERVER bad_srv;
CREATE TABLE bad.parted (id int, b bytea) PARTITION BY RANGE (id);
CREATE TABLE bad.part1 PARTITION OF bad.parted FOR VALUES FROM (0) TO (100);
INSERT INTO bad.parted VALUES (1, '\x01');
CREATE TABLE bad.typed OF bad.comp;
CREATE TABLE bad.inh_parent (id int, b bytea);
CREATE TABLE bad.inh_child (n int) INHERITS (bad.inh_parent);
INSERT INTO bad.inh_child VALUES (1, '\x02', 1);
CREATE TABLE bad.secured (id int PRIMARY KEY, t text);
ALTER TABLE bad.secured ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
INSERT INTO bad.secured VALUES (1, 'a');
CREATE TEMP TABLE own_temp (id int PRIMARY KEY, t text);
INSERT INTO own_temp VALUES (1, 'a');
-- what phase start of a copy-and-swap migration sl_sweep leaves (the
-- procedures' valid arguments)
CREATE TABLE bad.plain_new (LIKE bad.plain);
CREATE TABLE bad.plain_log (storagelab_seq bigint, storagelab_op "char", storagelab_row jsonb);
COMMENT ON TABLE bad.plain_log IS 'storagelab copy-and-swap migration sl_sweep';
-- and what phase expand of an online INT -> BIGINT migration sl_sweep leaves
INSERT INTO storagelab.bigint_migration_progress (migration, relation, max_block) VALUES ('sl_sweep', 'bad.plain', 0);
ANALYZE bad.plain, bad.parted, bad.inh_parent, bad.inh_child, bad.secured, own_temp, bad."x""; DROP TABLE bad.plain; --";

-- Another session's temporary table: a second session through dblink keeps
-- it (and itself) alive until this file ends.
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT FROM dblink_connect('bad_other',
  format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
         split_part(current_setting('unix_socket_directories'), ',', 1)));
SELECT FROM dblink_exec('bad_other', 'CREATE TEMP TABLE other_temp (id int PRIMARY KEY, t text)');
SELECT FROM dblink_exec('bad_other', 'INSERT INTO other_temp VALUES (1, ''a'')');
SELECT FROM dblink_exec('bad_other', 'ANALYZE other_temp');
SELECT c.oid AS other_temp FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
 WHERE c.relname = 'other_temp' AND s.nspname LIKE 'pg_temp_%' \gset

SELECT quote_literal(jsonb_build_array(jsonb_build_object('source', 'bad.plain', 'target', 'bad.plain_new',
         'log', 'bad.plain_log', 'copy', 'INSERT INTO bad.plain_new SELECT * FROM ONLY bad.plain', 'key', '["id"]'::jsonb))) AS dirs \gset

-- Bad values per type, as SQL literals; label names the case.
CREATE TEMP TABLE bad_value (typ regtype, label text, val text);
INSERT INTO bad_value VALUES
  ('regclass', 'NULL', 'NULL'),
  ('regclass', 'nonexistent OID', '''4000000000'''), ('regclass', 'OID 0', '''0'''),
  ('regclass', 'empty table', '''bad.empty'''), ('regclass', 'unlogged table', '''bad.unlogged'''),
  ('regclass', 'dropped column', '''bad.dropped'''), ('regclass', 'hostile name', quote_literal('bad."x""; DROP TABLE bad.plain; --"')),
  ('regclass', 'index', '''bad.bad_idx'''), ('regclass', 'view', '''bad.v'''),
  ('regclass', 'materialized view', '''bad.mv'''), ('regclass', 'sequence', '''bad.seq'''),
  ('regclass', 'composite type', '''bad.comp'''), ('regclass', 'foreign table', '''bad.ft'''),
  ('regclass', 'partitioned parent', '''bad.parted'''), ('regclass', 'partition', '''bad.part1'''),
  ('regclass', 'TOAST table', (SELECT quote_literal(reltoastrelid::text) FROM pg_class WHERE oid = 'bad.plain'::regclass)),
  ('regclass', 'another session''s temp table', quote_literal(:'other_temp')),
  ('regclass', 'catalog table', '''pg_catalog.pg_class'''), ('regclass', 'shared catalog', '''pg_catalog.pg_database'''),
  ('regclass', 'typed table', '''bad.typed'''), ('regclass', 'inheritance parent', '''bad.inh_parent'''),
  ('regclass', 'inheritance child', '''bad.inh_child'''), ('regclass', 'row security forced', '''bad.secured'''),
  ('regclass', 'this session''s temp table', '''pg_temp.own_temp'''),
  ('regclass[]', 'NULL', 'NULL'), ('regclass[]', 'empty array', '''{}'''), ('regclass[]', 'NULL element', '''{NULL}'''),
  ('regclass[]', 'view', '''{bad.v}'''), ('regclass[]', 'nonexistent OID', '''{4000000000}'''),
  ('regclass[]', 'OID 0', '''{0}'''), ('regclass[]', 'duplicate', '''{bad.plain,bad.plain}'''),
  ('regclass[]', 'another session''s temp table', format('''{%s}''', :'other_temp'::text)),
  ('regclass[]', 'partitioned parent', '''{bad.parted}'''), ('regclass[]', 'catalog table', '''{pg_catalog.pg_class}'''),
  ('name', 'NULL', 'NULL'), ('name', 'empty', ''''''), ('name', 'missing column', '''no_such_column'''),
  ('name', 'dropped column', '''........pg.dropped.2........'''), ('name', 'system column', '''ctid'''),
  ('name', 'system column', '''xmin'''), ('name', 'text column', '''t'''), ('name', 'bytea column', '''b'''),
  ('name', 'hostile', quote_literal('x"; DROP TABLE bad.plain; --')),
  ('name', 'long', quote_literal(repeat('n', 100))),
  ('name[]', 'NULL', 'NULL'), ('name[]', 'empty array', '''{}'''), ('name[]', 'NULL element', '''{NULL}'''),
  ('name[]', 'missing column', '''{no_such_column}'''), ('name[]', 'system column', '''{ctid}'''),
  ('name[]', 'duplicate', '''{id,id}'''), ('name[]', 'hostile', quote_literal('{"x\"; DROP TABLE bad.plain; --"}')),
  ('text', 'NULL', 'NULL'), ('text', 'empty', ''''''), ('text', 'unknown', '''bogus'''),
  ('text', 'hostile', quote_literal('x''; DROP TABLE bad.plain; --')), ('text', 'online', '''online'''),
  ('text', 'copy_swap', '''copy_swap'''), ('text', 'plain', '''plain'''), ('text', 'allow', '''allow'''),
  ('integer', 'NULL', 'NULL'), ('integer', 'zero', '0'), ('integer', 'negative', '-1'),
  ('integer', 'huge', '2147483647'), ('integer', 'most negative', '(-2147483648)'),
  ('bigint', 'NULL', 'NULL'), ('bigint', 'zero', '0'), ('bigint', 'negative', '-1'),
  ('bigint', 'huge', '9223372036854775807'),
  ('numeric', 'NULL', 'NULL'), ('numeric', 'negative', '-1'), ('numeric', 'huge', '1e100'),
  ('numeric', 'NaN', '''NaN'''),
  ('interval', 'NULL', 'NULL'), ('interval', 'negative', '''-1 s'''), ('interval', 'huge', '''1000 years'''),
  ('boolean', 'NULL', 'NULL'), ('boolean', 'true', 'true'),
  ('jsonb', 'NULL', 'NULL'), ('jsonb', 'JSON null', '''null'''), ('jsonb', 'object', '''{}'''),
  ('jsonb', 'empty array', '''[]'''), ('jsonb', 'string', '''"x"'''), ('jsonb', 'array of numbers', '''[1]'''),
  ('jsonb', 'array of empty objects', '''[{}]'''), ('jsonb', 'array of null', '''[null]'''),
  ('jsonb', 'missing column', '''{"no_such_column": "bigint"}'''),
  ('jsonb', 'unknown type', '''{"n": "no_such_type"}'''), ('jsonb', 'hostile type', '''{"n": "int; DROP TABLE bad.plain"}'''),
  ('jsonb', 'number as type', '''{"n": 8}'''),
  ('jsonb', 'another migration''s log', replace(:'dirs', 'bad.plain_log', 'bad.empty')),
  ('jsonb', 'unknown tables', '''[{"source": "bad.no_such", "target": "bad.no_such2", "log": "bad.no_such3", "copy": "SELECT 1", "key": ["id"]}]'''),
  ('jsonb', 'hostile table', '''[{"source": "bad.plain; DROP TABLE bad.plain", "target": "x", "log": "y", "copy": "SELECT 1"}]''');

-- Valid values: per routine and argument, else per type.
CREATE TEMP TABLE valid_value (fn name, arg name, typ regtype, val text);
INSERT INTO valid_value VALUES
  (NULL, NULL, 'regclass', '''bad.plain'''), (NULL, NULL, 'regclass[]', '''{bad.plain}'''),
  (NULL, NULL, 'name', '''id'''), (NULL, NULL, 'name[]', '''{id}'''), (NULL, NULL, 'text', NULL),
  (NULL, NULL, 'integer', '1'), (NULL, NULL, 'bigint', '1'), (NULL, NULL, 'numeric', '10'),
  (NULL, NULL, 'interval', '''0'''), (NULL, NULL, 'boolean', 'false'), (NULL, NULL, 'jsonb', 'NULL'),
  (NULL, 'mode', 'text', '''blocking'''), (NULL, 'function_hazards', 'text', '''refuse'''),
  (NULL, 'storage', 'text', '''external'''), (NULL, 'migration', 'text', '''sl_sweep'''),
  ('toast_profile', 'column_name', 'name', '''t'''), ('storage_migration_script', 'column_name', 'name', '''t'''),
  ('layout_migration_script', 'column_types', 'jsonb', '''{"n": "bigint"}'''),
  ('layout_migration_script', 'column_order', 'name[]', 'NULL'),
  ('rewrite_online_replay', 'time_limit', 'interval', '''1 min'''),
  ('rewrite_online_copy', 'dirs', 'jsonb', :'dirs'), ('rewrite_online_replay', 'dirs', 'jsonb', :'dirs');

-- Errors that need no hint, and why; matched on SQLSTATE and message.  None
-- so far: every error the sweep meets carries one.  A row here needs its
-- reason (say, an error PostgreSQL raises for a literal before storagelab
-- runs).
CREATE TEMP TABLE no_hint_needed (sqlstate text, message_like text, reason text NOT NULL);

-- Allowed SQLSTATEs of a failure per relation case (any other case: the classes above).
CREATE TEMP TABLE relation_state (label text, allowed text[]);
INSERT INTO relation_state VALUES
  ('nonexistent OID', '{42P01}'), ('OID 0', '{42P01,22004,22023}'),
  ('another session''s temp table', '{0A000}');

CREATE TEMP TABLE outcome (fn text, arg text, label text, crossed boolean, call text, sqlstate text,
                           message text, hint text, context text, ms numeric);

-- The statement calling routine oid with the given argument literals.
CREATE FUNCTION pg_temp.call_text(fn oid, kind "char", types regtype[], args text[]) RETURNS text
LANGUAGE sql AS $$
  SELECT format(CASE kind WHEN 'p' THEN 'CALL %s(%s)' ELSE 'SELECT * FROM %s(%s)' END,
                fn::regproc, (SELECT string_agg(format('%s::%s', a, t), ', ' ORDER BY o)
                                FROM unnest(args, types) WITH ORDINALITY u(a, t, o)))
$$;

-- One call; its outcome is kept.  The context is cut at this function's own
-- frames (the part that names the call made here).
CREATE FUNCTION pg_temp.try(fn text, arg text, label text, crossed boolean, call text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; hnt text; ctx text;
  t0 timestamptz := clock_timestamp();
BEGIN
  BEGIN
    EXECUTE call;
    INSERT INTO outcome VALUES (fn, arg, label, crossed, call, NULL, NULL, NULL, NULL,
                                extract(epoch FROM clock_timestamp() - t0) * 1000);
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hnt = PG_EXCEPTION_HINT,
                            ctx = PG_EXCEPTION_CONTEXT;
    IF st = '2D000' AND call LIKE 'CALL %' THEN
      -- a procedure reached its first COMMIT, which this transaction block
      -- refuses: it accepted its arguments
      st := NULL; msg := NULL; ctx := NULL;
    END IF;
    ctx := split_part(ctx, 'SQL statement "' || call || '"', 1);
    INSERT INTO outcome VALUES (fn, arg, label, crossed, call, st, msg, hnt, ctx,
                                extract(epoch FROM clock_timestamp() - t0) * 1000);
  END;
END
$$;

-- Drive every routine.
DO $$
DECLARE
  f record; a record; b record; v record; w record;
  valid text[];
  args text[];
  n int;
BEGIN
  FOR f IN
    SELECT p.oid, p.proname, p.prokind, p.pronargs,
           (SELECT array_agg(t::regtype ORDER BY o) FROM unnest(p.proargtypes) WITH ORDINALITY u(t, o)) AS types,
           p.proargnames[1:p.pronargs] AS names
      FROM pg_proc p
     WHERE p.pronamespace = 'storagelab'::regnamespace AND p.prorettype <> 'trigger'::regtype
     ORDER BY p.proname, p.oid
  LOOP
    -- the valid arguments (an unlisted type is an error of this test: NULL is tried)
    valid := ARRAY(SELECT coalesce((SELECT vv.val FROM valid_value vv
                                     WHERE vv.typ = f.types[i] AND (vv.fn IS NULL OR vv.fn = f.proname)
                                       AND (vv.arg IS NULL OR vv.arg = f.names[i])
                                     ORDER BY vv.fn IS NULL, vv.arg IS NULL LIMIT 1), 'NULL')
                     FROM generate_series(1, f.pronargs) i ORDER BY i);
    PERFORM pg_temp.try(f.proname, NULL, 'valid', false, pg_temp.call_text(f.oid, f.prokind, f.types, valid));
    FOR i IN 1 .. f.pronargs LOOP
      FOR v IN SELECT * FROM bad_value WHERE typ = f.types[i] LOOP
        args := valid; args[i] := v.val;
        PERFORM pg_temp.try(f.proname, f.names[i], v.label, false, pg_temp.call_text(f.oid, f.prokind, f.types, args));
        CONTINUE WHEN f.types[i] NOT IN ('regclass'::regtype, 'regclass[]'::regtype);
        -- this odd relation crossed with every bad value of the arguments whose
        -- meaning depends on the relation (columns, sample sizes, flags)
        FOR j IN 1 .. f.pronargs LOOP
          CONTINUE WHEN j = i OR f.types[j] NOT IN ('name'::regtype, 'name[]'::regtype, 'integer'::regtype,
                                                    'boolean'::regtype);
          FOR w IN SELECT * FROM bad_value WHERE typ = f.types[j] LOOP
            args[j] := w.val;
            PERFORM pg_temp.try(f.proname, f.names[i], v.label, true,
                                pg_temp.call_text(f.oid, f.prokind, f.types, args));
          END LOOP;
          args[j] := valid[j];
        END LOOP;
      END LOOP;
    END LOOP;
  END LOOP;
END
$$;

SELECT plan(14);

SELECT diag(format('%s calls of %s routines: %s failed, %s with a hint; %s XX; %s without a hint beyond the listed ones',
  count(*), count(DISTINCT fn), count(sqlstate), count(sqlstate) FILTER (WHERE coalesce(hint, '') <> ''),
  count(*) FILTER (WHERE sqlstate LIKE 'XX%'),
  count(*) FILTER (WHERE sqlstate IS NOT NULL AND coalesce(hint, '') = ''
                     AND NOT EXISTS (SELECT FROM no_hint_needed x
                                      WHERE x.sqlstate = o.sqlstate AND o.message LIKE x.message_like))))
  FROM outcome o;

-- a floor that catches a sweep that shrank unseen: 2,172 calls of 19
-- routines (mode shadow's procedure, 8 arguments, went in 1.1; five odd
-- relations came: typed, inheritance parent and child, row security forced,
-- this session's temporary table)
SELECT cmp_ok((SELECT count(*)::int FROM outcome), '>=', 2000, 'the sweep made at least 2,000 calls');

SELECT is_empty($$SELECT fn, call, sqlstate, message FROM outcome WHERE label = 'valid' AND sqlstate IS NOT NULL$$,
                'every routine accepts the valid arguments (the others of each bad call)');

SELECT is((SELECT count(DISTINCT fn)::int FROM outcome),
          (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'storagelab'::regnamespace
              AND prorettype <> 'trigger'::regtype),
          'every public function and procedure was called');

SELECT is_empty(
  $$SELECT fn, call, sqlstate, message FROM outcome WHERE sqlstate LIKE 'XX%'$$,
  'no call fails with an internal error (class XX)');

SELECT is_empty(
  $$SELECT DISTINCT ON (fn, sqlstate, message) fn, call, sqlstate, message FROM outcome
     WHERE left(sqlstate, 2) NOT IN ('22', '42', '0A', '55', '25')$$,
  'every error has a SQLSTATE of a bad-input class (22, 42, 0A, 55, 25)');

SELECT is_empty(
  $$SELECT DISTINCT ON (fn, o.label, sqlstate) fn, o.label, call, sqlstate, message
      FROM outcome o JOIN relation_state r ON r.label = o.label
     WHERE NOT o.crossed AND o.sqlstate IS NOT NULL AND o.sqlstate <> ALL (r.allowed)$$,
  'a nonexistent relation fails with 42P01, another session''s temporary table with 0A000');

SELECT is_empty(
  $$SELECT DISTINCT ON (fn, sqlstate, message) fn, call, sqlstate, message FROM outcome o
     WHERE sqlstate IS NOT NULL AND coalesce(hint, '') = ''
       AND NOT EXISTS (SELECT FROM no_hint_needed x
                        WHERE x.sqlstate = o.sqlstate AND o.message LIKE x.message_like)$$,
  'every error carries a hint, or is listed in no_hint_needed with the reason');

SELECT is_empty(
  $$SELECT DISTINCT ON (fn, sqlstate, message) fn, call, sqlstate, message, context FROM outcome
     WHERE context ~ 'SQL statement "[^"\n]{161}' OR context ~ 'SQL statement "[^"]*\n'$$,
  'no error shows an internal query in its CONTEXT');

SELECT is_empty(
  $$SELECT fn, label FROM outcome WHERE label = 'hostile name' AND to_regclass('bad.plain') IS NULL$$,
  'no hostile name ran as SQL');

-- The cases of the field report, one by one.
SELECT results_eq(
  $$SELECT sqlstate, hint <> '' FROM outcome WHERE fn = 'bigint_migration_objects' AND NOT crossed
       AND arg = 'relation' AND label = 'view'$$,
  $$VALUES ('42809', true)$$,
  'bigint_migration_objects() of a view: 42809 with a hint');
SELECT results_eq(
  $$SELECT fn, sqlstate FROM outcome WHERE NOT crossed AND label = 'OID 0' AND sqlstate IS NOT NULL
       AND fn IN ('layout_migration_script', 'bigint_migration_script', 'storage_migration_script') ORDER BY fn$$,
  $$VALUES ('bigint_migration_script', '42P01'), ('layout_migration_script', '42P01'), ('storage_migration_script', '42P01')$$,
  'OID 0: the generators say the relation does not exist (42P01)');
SELECT results_eq(
  $$SELECT fn, sqlstate FROM outcome WHERE NOT crossed AND label = 'another session''s temp table'
       AND fn IN ('layout_migration_script', 'bigint_migration_script', 'storage_migration_script') ORDER BY fn$$,
  $$VALUES ('bigint_migration_script', '0A000'), ('layout_migration_script', '0A000'), ('storage_migration_script', '0A000')$$,
  'another session''s temporary table: no script is generated for it (0A000)');

-- a role that may not read an analyzed table with a layout plan, nor a
-- sequence at 99 %
CREATE TABLE bad.waste (a int, b bigint, c smallint, d text);
INSERT INTO bad.waste SELECT g, g, 1, 'x' FROM generate_series(1, 1000) g;
ANALYZE bad.waste;
CREATE SEQUENCE bad.seq99 AS integer;
SELECT setval('bad.seq99', 2126008811) \g /dev/null
CREATE ROLE bad_nobody;
GRANT USAGE ON SCHEMA bad TO bad_nobody;
SET ROLE bad_nobody;
SELECT throws_ok($$SELECT storagelab.layout_migration_script('bad.waste')$$, '42501', NULL,
                 'layout_migration_script() of a table the role may not read: 42501 (not "no plan")');
SELECT matches((SELECT string_agg(r, E'\n') FROM storagelab.report() r),
               'not read by role bad_nobody: [0-9]+ table\(s\), [0-9]+ sequence\(s\)[^\n]*\n    [^\n]*bad\.seq99',
               'report() names what the role could not read');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

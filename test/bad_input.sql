-- pgTAP: every public storagelab function survives odd input.
--
-- Each function is called with NULLs, and each function whose first
-- argument is a regclass with every kind of odd relation (index, view,
-- materialized view, sequence, foreign table, composite type, partitioned
-- parent and partition, TOAST table, catalog tables, unlogged, empty, a
-- table with a dropped column, a nonexistent OID) combined with odd values
-- for its other arguments (missing, dropped, system and wrong-type columns,
-- out-of-range sample sizes, unknown modes).  A call may succeed (a
-- documented result) or fail; a failure must carry a SQLSTATE that is not
-- an internal error (class XX) and a hint.  The server must not crash: a
-- crash ends this file early and pg_prove counts it as a failure.
BEGIN;
SET client_min_messages = warning;

CREATE SCHEMA bad;
CREATE TABLE bad.plain (id int PRIMARY KEY, n int, t text, b bytea);
INSERT INTO bad.plain SELECT g, g, repeat('x', g), decode(repeat('ab', g), 'hex')
  FROM generate_series(1, 200) g;
CREATE TABLE bad.empty (id int);
CREATE UNLOGGED TABLE bad.unlogged (id int, b bytea);
INSERT INTO bad.unlogged VALUES (1, '\x00');
CREATE TABLE bad.dropped (id int, gone int, b bytea);
ALTER TABLE bad.dropped DROP COLUMN gone;
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
ANALYZE bad.plain, bad.parted;

CREATE TEMP TABLE odd_relation (label text, rel oid);
INSERT INTO odd_relation VALUES
  ('plain table', 'bad.plain'::regclass), ('empty table', 'bad.empty'::regclass),
  ('unlogged table', 'bad.unlogged'::regclass), ('dropped column', 'bad.dropped'::regclass),
  ('index', 'bad.bad_idx'::regclass), ('view', 'bad.v'::regclass),
  ('materialized view', 'bad.mv'::regclass), ('sequence', 'bad.seq'::regclass),
  ('composite type', 'bad.comp'::regclass), ('foreign table', 'bad.ft'::regclass),
  ('partitioned parent', 'bad.parted'::regclass), ('partition', 'bad.part1'::regclass),
  ('TOAST table', (SELECT reltoastrelid FROM pg_class WHERE oid = 'bad.plain'::regclass)),
  ('catalog table', 'pg_catalog.pg_class'::regclass),
  ('shared catalog', 'pg_catalog.pg_database'::regclass),
  ('nonexistent OID', 4000000000::oid), ('invalid OID', 0::oid), ('NULL', NULL);

-- Values tried for arguments after the first, by type.
CREATE TEMP TABLE odd_value (typ regtype, val text);
INSERT INTO odd_value VALUES
  ('name', NULL), ('name', '''id'''), ('name', '''b'''), ('name', '''t'''),
  ('name', '''no_such_column'''), ('name', '''........pg.dropped.2........'''),
  ('name', '''ctid'''), ('name', '''xmin'''),
  ('integer', NULL), ('integer', '0'), ('integer', '-1'), ('integer', '1'),
  ('integer', '2147483647'),
  ('text', NULL), ('text', '''blocking'''), ('text', '''online'''), ('text', '''external'''),
  ('text', '''bogus'''), ('text', ''''''),
  ('boolean', NULL), ('boolean', 'true');

CREATE TEMP TABLE outcome (fn text, call text, sqlstate text, message text, hint text);

CREATE FUNCTION pg_temp.try(fn text, call text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; hnt text;
BEGIN
  BEGIN
    EXECUTE call;
    INSERT INTO outcome VALUES (fn, call, NULL, NULL, NULL);
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hnt = PG_EXCEPTION_HINT;
    INSERT INTO outcome VALUES (fn, call, st, msg, hnt);
  END;
END
$$;

-- Drive every function: all-NULL arguments, then odd relations x odd values.
DO $$
DECLARE
  f record;
  r record;
  rest text[];
  combos text[];
  i int;
  v text;
  next_combos text[];
  c text;
BEGIN
  FOR f IN
    SELECT p.oid, p.proname, p.pronargs, p.proargtypes::regtype[] AS types
      FROM pg_proc p
     WHERE p.pronamespace = 'storagelab'::regnamespace
       AND p.prokind = 'f'
       AND p.prorettype <> 'trigger'::regtype
       AND p.proname <> 'snapshot'          -- writes history; tested in its own file
     ORDER BY p.proname, p.oid
  LOOP
    -- all NULL
    PERFORM pg_temp.try(f.proname, format('SELECT * FROM %s(%s)', f.oid::regproc,
      (SELECT string_agg(format('NULL::%s', t), ', ') FROM unnest(f.types) t)));
    CONTINUE WHEN f.pronargs = 0 OR f.types[1] <> 'regclass'::regtype;
    FOR r IN SELECT * FROM odd_relation LOOP
      combos := ARRAY[CASE WHEN r.rel IS NULL THEN 'NULL::regclass'
                           ELSE format('%s::oid::regclass', r.rel) END];
      FOR i IN 2 .. f.pronargs LOOP
        next_combos := '{}';
        FOREACH c IN ARRAY combos LOOP
          FOR v IN SELECT coalesce(val, 'NULL') || '::' || typ::text FROM odd_value
                    WHERE typ = f.types[i]
                   UNION ALL SELECT 'NULL::' || f.types[i]::text
                    WHERE NOT EXISTS (SELECT FROM odd_value WHERE typ = f.types[i]) LOOP
            next_combos := next_combos || (c || ', ' || v);
          END LOOP;
        END LOOP;
        combos := next_combos;
      END LOOP;
      FOREACH c IN ARRAY combos LOOP
        PERFORM pg_temp.try(f.proname, format('SELECT * FROM %s(%s)', f.oid::regproc, c));
      END LOOP;
    END LOOP;
  END LOOP;
END
$$;

SELECT plan(3);

SELECT cmp_ok((SELECT count(DISTINCT fn)::int FROM outcome), '>=',
              (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'storagelab'::regnamespace
                  AND prokind = 'f' AND prorettype <> 'trigger'::regtype AND proname <> 'snapshot'),
              'every public function was called');

SELECT is_empty(
  $$SELECT fn, call, sqlstate, message FROM outcome WHERE sqlstate LIKE 'XX%'$$,
  'no call fails with an internal error (class XX)');

SELECT is_empty(
  $$SELECT fn, call, sqlstate, message FROM outcome
     WHERE sqlstate IS NOT NULL AND coalesce(hint, '') = ''$$,
  'every error carries a hint');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: nothing storagelab runs is JIT-compiled under PostgreSQL's default
-- settings (jit = on, jit_above_cost 100000), where compiling costs seconds
-- and running milliseconds (extension/99_jit.sql).
--   - every SQL and PL/pgSQL function of the extension has jit = off in its
--     settings: every statement planned while one runs (the functions it
--     calls too) is planned without JIT;
--   - every public view's own top-level plan (planned with the caller's
--     settings), every postgres_exporter query of doc/monitoring/queries.yaml
--     and every check_postgres query of doc/monitoring.md costs less than
--     jit_above_cost, so it is not compiled either;
-- on Pagila plus 100 tables with integer, text and bytea columns.
\set ECHO none
\i test/fixtures/pagila.sql
\set yaml `cat doc/monitoring/queries.yaml`
\set monitoring_md `cat doc/monitoring.md`
BEGIN;
SELECT plan(8);
\o /dev/null
SET client_min_messages = warning;
CREATE SCHEMA jit_fixture;
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXECUTE format('CREATE TABLE jit_fixture.t%s (id serial PRIMARY KEY, ref int, amount bigint, note text, doc bytea)', i);
    EXECUTE format('INSERT INTO jit_fixture.t%s (ref, amount, note, doc) VALUES (1, 10, %L, %L)', i, 'a', '\x00');
    EXECUTE format('ANALYZE jit_fixture.t%s', i);
  END LOOP;
END $$;
\o
-- PostgreSQL's defaults, whatever the test database says
SET jit = on;
RESET jit_above_cost;
RESET jit_inline_above_cost;
RESET jit_optimize_above_cost;

CREATE FUNCTION pg_temp.plan(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN j -> 0;
END $$;
-- a query is compiled when its top plan's cost passes jit_above_cost (EXPLAIN
-- then prints a JIT section)
CREATE FUNCTION pg_temp.compiled(q text) RETURNS boolean LANGUAGE sql AS $$
  SELECT (p -> 'Plan' ->> 'Total Cost')::float8 > current_setting('jit_above_cost')::float8
         OR p -> 'JIT' IS NOT NULL
    FROM pg_temp.plan(q) p
$$;

CREATE TEMP TABLE fn AS
  SELECT p.oid::regprocedure AS fn, coalesce('jit=off' = ANY (p.proconfig), false) AS jit_off
    FROM pg_proc p
    JOIN pg_language l ON l.oid = p.prolang
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                    AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'storagelab'
   WHERE l.lanname IN ('sql', 'plpgsql') AND p.prokind = 'f';
SELECT cmp_ok((SELECT count(*)::int FROM fn), '>=', 100,
              'the SQL and PL/pgSQL functions of the extension are found');
SELECT is((SELECT array_agg(fn::text ORDER BY fn::text) FROM fn WHERE NOT jit_off), NULL,
          'every SQL and PL/pgSQL function of the extension runs with jit = off');

CREATE TEMP TABLE q AS
  SELECT 'view ' || c.oid::regclass AS what, format('SELECT * FROM %s', c.oid::regclass) AS sql
    FROM pg_class c
    JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
                    AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'storagelab'
   WHERE c.relkind = 'v' AND c.relnamespace = 'storagelab'::regnamespace;
INSERT INTO q
  SELECT 'exporter query ' || m[1], regexp_replace(m[2], '^    ', '', 'gn')
    FROM regexp_matches(:'yaml', E'\\n(\\w+):\\n  query: \\|\\n((?:    [^\\n]*\\n)+)', 'g') r(m);
INSERT INTO q
  SELECT 'check_postgres query ' || n, m[1]
    FROM regexp_matches(:'monitoring_md', '--query="([^"]*)"', 'g') WITH ORDINALITY r(m, n);
SELECT cmp_ok((SELECT count(*)::int FROM q WHERE what LIKE 'view %'), '>=', 8,
              'the public views are found');
SELECT cmp_ok((SELECT count(*)::int FROM q WHERE what LIKE 'exporter %'), '>=', 4,
              'the exporter queries are found');
SELECT cmp_ok((SELECT count(*)::int FROM q WHERE what LIKE 'check_postgres %'), '>=', 4,
              'the check_postgres queries are found');
SELECT is((SELECT array_agg(what ORDER BY what) FROM q WHERE what LIKE 'view %' AND pg_temp.compiled(sql)),
          NULL, 'no public view''s top-level plan passes jit_above_cost');
SELECT is((SELECT array_agg(what ORDER BY what) FROM q WHERE what NOT LIKE 'view %' AND pg_temp.compiled(sql)),
          NULL, 'no monitoring query''s plan passes jit_above_cost');
-- the check itself can fail: a plain query of that cost is compiled
SELECT ok(pg_temp.compiled('SELECT count(*) FROM generate_series(1, 10000000) a, generate_series(1, 10) b'),
          'a query costlier than jit_above_cost is reported as compiled');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: the rewrite engine's walk of the objects that follow its tables
-- (storagelab_internal.rewrite_dependents), which asks the catalogs through
-- the query it shares with the INT -> BIGINT model (dependent_refs) and
-- hands what it finds to the same table of kinds (dependent_sql).
-- What it moves, with depths: a view over the table and one over that view,
-- a function of the table's rows and a view over the function, a policy of
-- another table reading the table.  What it refuses, naming the object: an
-- object it cannot re-create (an aggregate of the table's rows: the detail
-- names the row type) and one of the table's own objects over a function of
-- its rows (a policy).  Catalog objects only: no rows are needed.
\set QUIET 1
SET client_min_messages = warning;
BEGIN;
SELECT plan(5);

CREATE SCHEMA rd;
CREATE TABLE rd.t (id int PRIMARY KEY, v int);
CREATE TABLE rd.o (id int);
CREATE VIEW rd.v1 AS SELECT id, v FROM rd.t;
CREATE VIEW rd.v2 AS SELECT id FROM rd.v1;
CREATE FUNCTION rd.rows_of_t() RETURNS SETOF rd.t LANGUAGE sql STABLE AS 'SELECT * FROM rd.t';
CREATE VIEW rd.vf AS SELECT id FROM rd.rows_of_t();
CREATE POLICY po ON rd.o USING (id IN (SELECT id FROM rd.t));

SELECT is((SELECT string_agg(d.depth || ' ' || d.identity, '; ' ORDER BY d.depth, d.identity)
             FROM storagelab_internal.rewrite_dependents(ARRAY['rd.t'::regclass::oid]) d),
          '1 function rd.rows_of_t(); 1 policy po on rd.o; 1 view rd.v1; 2 view rd.v2; 2 view rd.vf',
          'the engine moves the views over the table (and over those), the functions of its rows (and the views over them), other tables'' policies');

SELECT ok((SELECT bool_and(d.drop_sql IS NOT NULL AND d.create_sql IS NOT NULL)
             FROM storagelab_internal.rewrite_dependents(ARRAY['rd.t'::regclass::oid]) d),
          'each object moved has the SQL that drops it and the SQL that re-creates it');

CREATE FUNCTION rd.pick(a rd.t, b rd.t) RETURNS rd.t LANGUAGE sql IMMUTABLE AS 'SELECT b';
CREATE AGGREGATE rd.last_row(rd.t) (sfunc = rd.pick, stype = rd.t);
SELECT throws_ok($$SELECT count(*) FROM storagelab_internal.rewrite_dependents(ARRAY['rd.t'::regclass::oid])$$,
                 '0A000', 'the rewrite engine cannot move an object that depends on a table it rewrites',
                 'an object the engine cannot re-create (an aggregate of the table''s rows) is refused');
-- the detail names what the object depends on: the table's row type (it
-- named nothing: "... depends on .", the type's OID described as a table)
CREATE FUNCTION pg_temp.refusal_detail() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  detail text;
BEGIN
  PERFORM count(*) FROM storagelab_internal.rewrite_dependents(ARRAY['rd.t'::regclass::oid]);
  RETURN NULL;
EXCEPTION WHEN feature_not_supported THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN detail;
END
$$;
SELECT is(pg_temp.refusal_detail(), 'function rd.last_row(rd.t) depends on type rd.t.',
          'the refusal''s detail names the object and the row type it depends on');
DROP AGGREGATE rd.last_row(rd.t);
DROP FUNCTION rd.pick(rd.t, rd.t);

CREATE POLICY own ON rd.t USING (id IN (SELECT r.id FROM rd.rows_of_t() r));
SELECT throws_ok($$SELECT count(*) FROM storagelab_internal.rewrite_dependents(ARRAY['rd.t'::regclass::oid])$$,
                 '0A000', 'the rewrite engine cannot move an object over a function of a table''s rows',
                 'the table''s own policy over a function of its rows is refused');

SELECT * FROM finish();
ROLLBACK;

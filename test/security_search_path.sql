-- pgTAP: a hostile schema ahead of pg_catalog in the caller's search_path
-- changes nothing.  The schema holds functions and an operator named like
-- the ones storagelab's SQL uses; each records its call in a log table.
-- Every storagelab view must return the same rows as under a normal
-- search_path, and none of the hostile objects may run.
BEGIN;
SET client_min_messages = warning;
\i test/fixtures/pagila.sql
SELECT plan((SELECT count(*)::int FROM pg_views WHERE schemaname = 'storagelab') + 2);

-- The two reads below must see the same tables: autovacuum may not vacuum
-- or analyze one in between (storagelab.visibility reports that state).  It
-- skips a table whose SHARE UPDATE EXCLUSIVE lock it cannot take, so this
-- transaction holds that lock on every table until the end (LOCK TABLE;
-- for a materialized view, which LOCK refuses, an ALTER that takes it).
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT c.oid::regclass AS t, c.relkind FROM pg_class c
            WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
              AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
  LOOP
    IF r.relkind = 'r' THEN
      EXECUTE format('LOCK TABLE %s IN SHARE UPDATE EXCLUSIVE MODE', r.t);
    ELSE
      EXECUTE format('ALTER MATERIALIZED VIEW %s SET (autovacuum_enabled = off)', r.t);
    END IF;
  END LOOP;
END
$$;

CREATE SCHEMA hostile;
CREATE TABLE hostile.calls (fn text);
GRANT INSERT ON hostile.calls TO PUBLIC;

-- Text functions and operators a generator or view might call unqualified.
DO $do$
DECLARE
  sig text;
BEGIN
  FOREACH sig IN ARRAY ARRAY[
    'quote_ident(text)', 'quote_literal(text)', 'quote_nullable(text)',
    'lower(text)', 'upper(text)', 'btrim(text)', 'length(text)',
    'textcat(text, text)', 'concat(text)', 'replace(text, text, text)',
    'pg_get_expr(pg_node_tree, oid)', 'pg_get_viewdef(oid)',
    'pg_get_indexdef(oid)', 'pg_get_constraintdef(oid)',
    'pg_get_triggerdef(oid)', 'pg_get_userbyid(oid)',
    'format_type(oid, integer)', 'obj_description(oid, name)',
    'has_table_privilege(oid, text)', 'pg_relation_size(regclass)',
    'pg_total_relation_size(regclass)', 'pg_size_pretty(bigint)',
    'array_to_string(text[], text)', 'string_agg(text, text)'
  ] LOOP
    CONTINUE WHEN sig = 'string_agg(text, text)';
    EXECUTE format($f$CREATE FUNCTION hostile.%s RETURNS text LANGUAGE plpgsql AS
      $b$BEGIN INSERT INTO hostile.calls VALUES (%L); RETURN NULL; END$b$$f$,
      sig, sig);
  END LOOP;
END
$do$;
CREATE FUNCTION hostile.format(text, VARIADIC text[]) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO hostile.calls VALUES ('format'); RETURN NULL; END$$;
CREATE FUNCTION hostile.catop(text, text) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO hostile.calls VALUES ('||'); RETURN NULL; END$$;
CREATE OPERATOR hostile.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.catop);

SELECT is((SELECT count(*) FROM hostile.calls), 0::bigint, 'hostile objects are in place and not yet called');

-- Each view's rows under a normal search_path, as text.  The hostile
-- schema is on both paths (after pg_catalog here), so that regclass output
-- names its table alike.  Rows about the catalogs and this test's own
-- tables are left out of the comparison: the test's DDL and captures
-- change their sizes between the two runs.
CREATE TEMP TABLE expected_rows (view_name text, row_text text);
CREATE TEMP TABLE actual_rows (view_name text, row_text text);
SET LOCAL search_path = public, pg_catalog, hostile, pg_temp;
DO $$
DECLARE v record;
BEGIN
  FOR v IN SELECT viewname FROM pg_catalog.pg_views WHERE schemaname = 'storagelab' ORDER BY 1 LOOP
    EXECUTE pg_catalog.format('INSERT INTO pg_temp.expected_rows SELECT %L, t::text FROM storagelab.%I t',
                              v.viewname, v.viewname);
  END LOOP;
END
$$;

-- The same views under the hostile search_path (pgTAP itself is not
-- search_path-safe, so compare afterwards).
SET LOCAL search_path = hostile, public, pg_catalog, pg_temp;
DO $$
DECLARE v record;
BEGIN
  FOR v IN SELECT viewname FROM pg_catalog.pg_views WHERE schemaname = 'storagelab' ORDER BY 1 LOOP
    EXECUTE pg_catalog.concat('INSERT INTO pg_temp.actual_rows SELECT ',
                              pg_catalog.quote_literal(v.viewname), ', t::text FROM storagelab.',
                              pg_catalog.quote_ident(v.viewname), ' t');
  END LOOP;
END
$$;
RESET search_path;

DELETE FROM actual_rows WHERE row_text ~ '^\((pg_|expected_rows|actual_rows|calls)';
DELETE FROM expected_rows WHERE row_text ~ '^\((pg_|expected_rows|actual_rows|calls)';
SELECT set_eq(
         format('SELECT row_text FROM actual_rows WHERE view_name = %L', viewname),
         format('SELECT row_text FROM expected_rows WHERE view_name = %L', viewname),
         format('view storagelab.%s gives the same rows with a hostile schema first in search_path', viewname))
  FROM pg_views WHERE schemaname = 'storagelab' ORDER BY viewname;

SELECT is((SELECT array_agg(DISTINCT fn) FROM hostile.calls), NULL, 'no hostile function or operator was called');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: output that fits a terminal.  Every human-readable text a public
-- view or function returns is at most 100 characters (the numbers in it are
-- typed columns too; doc/design/api-conventions.md).  Checked two ways: the
-- text literals of every view definition and of toast_profile(), and the
-- text columns of every view over Pagila and a few tables made to trigger
-- advice.
BEGIN;
SET client_min_messages = warning;
\i test/fixtures/pagila.sql

SELECT plan(3 + (SELECT count(*)::int FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                  WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind = 'v'
                    AND a.attnum > 0 AND a.atttypid = 'text'::regtype));

-- Tables that make the views advise: a bytea column of compressed content,
-- an unvacuumed bulk load, a column wider than its data.
CREATE TABLE public.ow_files (id serial PRIMARY KEY, body bytea);
INSERT INTO public.ow_files (body)
  SELECT '\x1f8b0800'::bytea || decode(repeat(md5(g::text), 200), 'hex') FROM generate_series(1, 50) g;
CREATE TABLE public.ow_wide (flag bool, n int8, code text);
INSERT INTO public.ow_wide SELECT g % 2 = 0, g % 100, (g % 7)::text FROM generate_series(1, 5000) g;
ANALYZE public.ow_files, public.ow_wide;

-- Literals of the view definitions and of toast_profile().
SELECT is_empty($$
  SELECT c.relname, m[1]
    FROM pg_class c, regexp_matches(pg_get_viewdef(c.oid), '''((?:[^'']|'''')*)''', 'g') m
   WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind = 'v' AND length(m[1]) > 100$$,
  'no text literal of a public view is longer than 100 characters');
SELECT is_empty($$
  SELECT m[1]
    FROM regexp_matches((SELECT prosrc FROM pg_proc
                          WHERE oid = 'storagelab.toast_profile(regclass,name,integer)'::regprocedure),
                        '''((?:[^'']|'''')*)''', 'g') m
   WHERE length(m[1]) > 100$$,
  'no text literal of toast_profile() is longer than 100 characters');
SELECT is_empty($$
  SELECT r.relation, h.advice
    FROM (VALUES ('public.ow_files'::regclass), ('public.ow_wide'), ('public.rental'), ('public.payment'),
                 ('public.film')) r(relation),
         storagelab.heap_visibility(r.relation) h
   WHERE length(h.advice) > 100$$,
  'heap_visibility(): advice of at most 100 characters');

-- Every text column of every view, over this database.
CREATE TEMP TABLE too_long (view_name text, column_name text, longest int, example text);
DO $$
DECLARE
  col record;
BEGIN
  FOR col IN SELECT c.relname, a.attname
               FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
              WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind = 'v'
                AND a.attnum > 0 AND a.atttypid = 'text'::regtype
  LOOP
    EXECUTE format($q$
      INSERT INTO too_long
      SELECT %1$L, %2$L, max(length(t.%2$I)), max(t.%2$I)
        FROM storagelab.%1$I t
       WHERE length(t.%2$I) > 100
      HAVING count(*) > 0$q$, col.relname, col.attname);
  END LOOP;
END
$$;
SELECT is((SELECT longest FROM too_long t WHERE t.view_name = c.relname AND t.column_name = a.attname),
          NULL, format('%s.%s: every value at most 100 characters', c.relname, a.attname))
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind = 'v'
   AND a.attnum > 0 AND a.atttypid = 'text'::regtype
 ORDER BY c.relname, a.attname;

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: the function-hazard reader splits lists at their top-level commas,
-- not at a comma inside a quoted literal.  Two places where that mattered:
-- the argument list of a function that function_hazards => 'widen'
-- re-creates (a default 'a,b' came back as 'a, b'), and the IN list of a
-- guard on TG_TABLE_NAME (a literal with a comma made the guard unreadable,
-- so a call under it that never runs for the table was listed).  One table,
-- three small functions, no rows: the model and the widened definition,
-- executed inside this transaction, are the oracle.
BEGIN;
SELECT plan(3);
SET client_min_messages = warning;

CREATE TABLE public.cm_parent (id integer PRIMARY KEY, note text);
CREATE FUNCTION public.cm_log(k integer, label text DEFAULT 'a,b') RETURNS text
LANGUAGE sql AS $$ SELECT label || k $$;
CREATE FUNCTION public.cm_only_other(k integer) RETURNS void
LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.cm_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.note := cm_log(NEW.id);
  IF TG_TABLE_NAME IN ('x,cm_parent', 'other') THEN
    PERFORM cm_only_other(NEW.id);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER cm_t BEFORE INSERT ON public.cm_parent FOR EACH ROW EXECUTE FUNCTION public.cm_trg();

CREATE TEMP TABLE m AS SELECT * FROM storagelab.bigint_migration_objects('public.cm_parent', 'id');

SELECT is((SELECT string_agg(identity, '; ' ORDER BY identity) FROM m WHERE kind = 'function_hazard'),
          'function public.cm_log(integer,text), parameter 1 k (integer)',
          'one hazard: cm_log; not cm_only_other, whose call is under a guard the table cannot meet');

-- the widening, as the script runs it
DO $$
DECLARE w record;
BEGIN
  SELECT * INTO w FROM m WHERE kind = 'widened_function';
  EXECUTE coalesce(w.drop_sql, '') || w.create_sql;
END $$;
SELECT is(pg_get_function_arguments('public.cm_log(bigint, text)'::regprocedure),
          'k bigint, label text DEFAULT ''a,b''::text',
          'the widened function keeps its default ''a,b''');
SELECT is(public.cm_log(3000000000), 'a,b3000000000', 'the widened function takes a key past 2^31');

SELECT * FROM finish();
ROLLBACK;

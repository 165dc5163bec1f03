-- storagelab install script, part 01: helpers of every generated migration
-- script (INT -> BIGINT, layout, storage): dollar quoting, the one
-- lock-retry loop and lock taking they all use; the one script header
-- (script_header, script_settings, script_end: what a script converts,
-- locks, sizes, hazards, how to run it; search_path pinned and given back;
-- -v dry_run=1) with its list and array writers; the run-time check
-- helpers the scripts' installed checks raise through (script_failed,
-- script_check).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- A dollar-quoted string whose tag does not occur in body.
CREATE FUNCTION storagelab_internal.dollar_quote(body text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  tag text := '$storagelab$';
  i int := 0;
BEGIN
  WHILE position(tag IN body) > 0 LOOP
    i := i + 1;
    tag := format('$storagelab%s$', i);
  END LOOP;
  RETURN tag || body || tag;
END
$$;
COMMENT ON FUNCTION storagelab_internal.dollar_quote(text) IS
  'dollar-quotes a DO block body with a tag that does not occur in it';

-- The retry loop of generated scripts, as a PL/pgSQL block statement: body
-- runs in a subtransaction; when it fails on lock_timeout or a deadlock, it
-- is rolled back and run again, up to retries more times (retries = 0: one
-- attempt), with a pause of 0.1 s times the attempt number, at most 2 s.
-- other_handlers: further "WHEN ... THEN ..." clauses, checked first.
-- give_up_hint: the hint of the error raised after the last attempt.
CREATE FUNCTION storagelab_internal.retry_loop(body text, retries int, give_up_hint text,
                                               other_handlers text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT E'  DECLARE\n    attempt int := 0;\n  BEGIN\n    LOOP\n      BEGIN\n'
      || $1
      || E'        EXIT;\n'
      || E'      EXCEPTION\n'
      || coalesce($4, '')
      || E'        WHEN lock_not_available OR deadlock_detected THEN\n'
      || E'          attempt := attempt + 1;\n'
      || format(E'          IF attempt > %s THEN\n', greatest($2, 0))
      || E'            RAISE EXCEPTION ''gave up after % lock timeouts or deadlocks'', attempt\n'
      || format(E'              USING ERRCODE = ''lock_not_available'', DETAIL = SQLERRM, HINT = %L;\n', $3)
      || E'          END IF;\n'
      || E'          RAISE NOTICE ''lock attempt %: % (lock_timeout %), retrying'', attempt, SQLERRM, current_setting(''lock_timeout'');\n'
      || E'          PERFORM pg_catalog.pg_sleep(least(0.1 * attempt, 2));\n'
      || E'      END;\n    END LOOP;\n  END;\n'
$$;
COMMENT ON FUNCTION storagelab_internal.retry_loop(text, int, text, text) IS
  'PL/pgSQL block that runs body and retries it on lock_timeout or deadlock: retries more attempts after the first, back-off 0.1 s per attempt up to 2 s';

-- A DO statement running stmts in one subtransaction with retry_loop.
CREATE FUNCTION storagelab_internal.retry_block(stmts text[], retries int,
                                                give_up_hint text DEFAULT 'Run this phase again later; it is safe to re-run.')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'DO ' || storagelab_internal.dollar_quote(
    E'\nBEGIN\n'
    || storagelab_internal.retry_loop(
         (SELECT string_agg(format(E'        EXECUTE %L;\n', regexp_replace(s, ';\s*$', '')), '' ORDER BY n)
            FROM unnest($1) WITH ORDINALITY AS u(s, n)),
         $2, $3)
    || E'END\n') || E';\n'
$$;
COMMENT ON FUNCTION storagelab_internal.retry_block(text[], int, text) IS
  'a DO statement running statements in one subtransaction, retried on lock_timeout or deadlock (storagelab_internal.retry_loop)';

-- The locks of one step of a generated script, taken so that when a wait
-- cycle forms between the step and the application's transactions, the
-- step gives way (and its retry loop tries again), never a client:
--   * each relation of rels (as written: 'ONLY s.t' leaves out partitions
--     and children; one that does not exist is skipped) locked in mode,
--     one at a time, as the step's first statement; a view or materialized
--     view in mode ACCESS EXCLUSIVE by ALTER ... OWNER TO its owner (LOCK
--     TABLE would lock the tables it reads too, and takes no materialized
--     view);
--   * every attempt within a budget counted from its first request: the
--     lower of the lock_timeout in force and half the server's
--     deadlock_timeout (its reset value: the clients' unless they changed
--     it); lock_timeout is set to what is left of it before each LOCK, and
--     stays at the budget for the rest of the transaction.  A client that
--     waits for one of these locks began waiting after it was granted, so
--     it runs its deadlock check (after its own deadlock_timeout) only once
--     the attempt holds every lock or has given up, releasing them;
--   * deadlock_timeout set to a tenth of the server's, at most 100 ms, for
--     the rest of the transaction, when this role may set it (superuser, or
--     GRANT SET ON PARAMETER deadlock_timeout): the session that has waited
--     its deadlock_timeout runs the check and, finding a cycle, is the one
--     cancelled (40P01); an autovacuum of a table gives way to a request
--     that has waited that long.  Without that right the budget alone keeps
--     clients from being cancelled, but an autovacuum holding a table makes
--     each attempt time out until it ends;
--   * an attempt that timed out or was cancelled by the deadlock check is
--     rolled back (its locks released) and the next one takes the relation
--     it waited for first, holding nothing else (so the order converges to
--     the clients'); after as many attempts as relations, plus one, the
--     error goes to the caller (the retry loop pauses and tries again).
CREATE FUNCTION storagelab_internal.script_lock(rels text[], mode text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  dt      numeric := (SELECT s.reset_val::numeric FROM pg_settings s WHERE s.name = 'deadlock_timeout');
  lt      numeric := (SELECT s.setting::numeric FROM pg_settings s WHERE s.name = 'lock_timeout');
  budget  numeric;
  t0      timestamptz;
  left_ms numeric;
  ord     text[] := ARRAY(SELECT r FROM unnest(rels) WITH ORDINALITY u(r, n)
                           WHERE to_regclass(regexp_replace(r, '^ONLY\s+', '')) IS NOT NULL ORDER BY n);
  tries   int := 0;
  r       text;
  cur     text;
  v       record;
BEGIN
  IF mode IS NULL OR upper(mode) NOT IN ('ACCESS SHARE', 'ROW SHARE', 'ROW EXCLUSIVE', 'SHARE UPDATE EXCLUSIVE', 'SHARE',
                                         'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE') THEN
    RAISE EXCEPTION 'unknown lock mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass a mode of LOCK TABLE, such as ''ACCESS EXCLUSIVE''.';
  END IF;
  budget := greatest(CASE WHEN lt > 0 THEN least(lt, dt / 2) ELSE dt / 2 END, 1);
  IF has_parameter_privilege('deadlock_timeout', 'SET') THEN
    PERFORM set_config('deadlock_timeout', greatest(1, least(100, floor(dt / 10)))::text || 'ms', true);
  END IF;
  LOOP
    tries := tries + 1;
    t0 := clock_timestamp();
    BEGIN
      FOREACH r IN ARRAY ord LOOP
        cur := r;
        left_ms := floor(budget - extract(epoch FROM clock_timestamp() - t0) * 1000);
        IF left_ms < 1 THEN
          RAISE EXCEPTION 'could not take the locks of this step within % ms', budget
            USING ERRCODE = 'lock_not_available', DETAIL = format('Waiting for %s.', r),
                  HINT = 'Other sessions hold locks on these tables; the step is retried.';
        END IF;
        PERFORM set_config('lock_timeout', left_ms::text || 'ms', true);
        SELECT c.relkind, pg_get_userbyid(c.relowner) AS owner INTO v FROM pg_class c WHERE c.oid = to_regclass(regexp_replace(r, '^ONLY\s+', ''));
        IF v.relkind IN ('v', 'm') AND upper(mode) = 'ACCESS EXCLUSIVE' THEN
          EXECUTE format('ALTER %s %s OWNER TO %I', CASE v.relkind WHEN 'v' THEN 'VIEW' ELSE 'MATERIALIZED VIEW' END, r, v.owner);
        ELSE
          EXECUTE format('LOCK TABLE %s IN %s MODE', r, upper(mode));
        END IF;
      END LOOP;
      EXIT;
    EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
      IF tries > cardinality(ord) THEN
        RAISE;
      END IF;
      RAISE NOTICE 'gave way to other sessions waiting for %: %; trying again with it first', cur, SQLERRM;
      ord := ARRAY[cur] || array_remove(ord, cur);
    END;
  END LOOP;
  PERFORM set_config('lock_timeout', budget::text || 'ms', true);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.script_lock(text[], text) IS
  'takes the locks of a generated script''s step one relation at a time within a budget below the server''s deadlock_timeout, with a short deadlock_timeout when permitted, so that the step, not a client, gives way in a wait cycle (retried with the relation it waited for first)';

-- The statement that calls script_lock for rels in mode, for a step's
-- statement list.
CREATE FUNCTION storagelab_internal.script_lock_sql(rels text[], mode text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('SELECT storagelab_internal.script_lock(%L::text[], %L)', $1, $2)
$$;
COMMENT ON FUNCTION storagelab_internal.script_lock_sql(text[], text) IS
  'the statement of a generated script that takes a step''s locks with storagelab_internal.script_lock';

-- The session settings of a generated script: psql's ON_ERROR_STOP,
-- lock_timeout (setting scripts.lock_timeout), the writer's own settings
-- (lines), then search_path pinned to pg_catalog, pg_temp, the session's
-- own given back afterwards:
--   one_transaction: BEGIN and SET LOCAL (COMMIT or ROLLBACK gives it back);
--   else: the session's saved in psql variable sl_search_path_saved and set
--   again by script_end(false).
CREATE FUNCTION storagelab_internal.script_settings(settings text[], one_transaction boolean)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT E'\\set ON_ERROR_STOP on\n'
      || format(E'SET lock_timeout = %L;\n', storagelab_internal.setting('scripts.lock_timeout'))
      || coalesce((SELECT string_agg(s || E'\n', '' ORDER BY n) FROM unnest($1) WITH ORDINALITY AS u(s, n)), '')
      || CASE WHEN $2
              THEN E'\nBEGIN;\nSET LOCAL search_path = pg_catalog, pg_temp;   -- every name below is schema-qualified; LOCAL: the session keeps its own\n\n'
              ELSE E'-- the session''s search_path, set again at the end (this script sets its own)\n'
                   || E'SELECT current_setting(''search_path'') AS search_path_saved \\gset sl_\n'
                   || E'SET search_path = pg_catalog, pg_temp;\n' END
$$;
COMMENT ON FUNCTION storagelab_internal.script_settings(text[], boolean) IS
  'the session settings of a generated script: ON_ERROR_STOP, lock_timeout, the writer''s own, and search_path pinned (SET LOCAL after BEGIN for one transaction, else saved and set again by script_end)';

-- The one header of the generated scripts (the blocking INT -> BIGINT and
-- the storage scripts): the comment block, then the session settings.
--   title        the first line: '-- storagelab <version>: <title>'
--   paragraphs   what it converts, locks, sizes, hazards, how to run it:
--                plain lines (a final line break ignored), each written
--                as a comment line ('--' when empty; a carriage return
--                becomes a space, so no line can leave the comment),
--                paragraphs separated by a line '--'
--   settings     the session settings (storagelab_internal.script_settings)
CREATE FUNCTION storagelab_internal.script_header(title text, paragraphs text[], settings text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- storagelab %s: %s\n', (SELECT extversion FROM pg_extension WHERE extname = 'storagelab'), $1)
      || (SELECT string_agg(CASE WHEN l = '' THEN E'--\n' ELSE '-- ' || translate(l, E'\r', ' ') || E'\n' END, '' ORDER BY p, n)
            FROM unnest($2) WITH ORDINALITY AS u(para, p),
                 regexp_split_to_table(CASE WHEN p > 1 THEN E'\n' ELSE '' END || regexp_replace(para, E'\n$', ''), E'\n')
                   WITH ORDINALITY AS v(l, n))
      || E'\n' || $3
$$;
COMMENT ON FUNCTION storagelab_internal.script_header(text, text[], text) IS
  'the header of a generated script: a comment block (title; paragraphs saying what it converts, locks, sizes, hazards, how to run it), then its session settings';

-- The end of a generated script, -v dry_run=1 included:
--   one_transaction: COMMIT, or with dry_run ROLLBACK and \quit;
--   else: with dry_run the ROLLBACK of the one transaction the writer began
--   then; the session's search_path set again (script_settings).
CREATE FUNCTION storagelab_internal.script_end(one_transaction boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT E'\\if :{?dry_run}\nROLLBACK;\n\\echo ''dry run: rolled back''\n'
      || CASE WHEN $1 THEN E'\\quit\n\\else\nCOMMIT;\n\\endif\n\n'
              ELSE E'\\endif\n-- The session''s own search_path again.\n'
                   || E'SELECT set_config(''search_path'', :''sl_search_path_saved'', false) AS search_path_restored \\gset sl_\n' END
$$;
COMMENT ON FUNCTION storagelab_internal.script_end(boolean) IS
  'the end of a generated script: COMMIT (ROLLBACK with -v dry_run=1), or for a script of several transactions the dry run''s ROLLBACK and the session''s search_path set back';

-- A comment list of a script header: heading, then each item on a line of
-- its own, indented, made safe for a comment line (no line breaks); empty
-- when there is no item (NULL: nothing).
CREATE FUNCTION storagelab_internal.script_list(heading text, items text[], empty text DEFAULT '(none)')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT $1 || E'\n'
      || coalesce((SELECT string_agg('  ' || translate(i, E'\n\r\t', '   ') || E'\n', '' ORDER BY n)
                     FROM unnest($2) WITH ORDINALITY AS u(i, n)),
                  '  ' || $3 || E'\n', '')
$$;
COMMENT ON FUNCTION storagelab_internal.script_list(text, text[], text) IS
  'lines of a script header: a heading and its items, indented, one a line (empty when there are none)';

-- A text[] of a generated script's statement: elems are SQL expressions,
-- quote_literal'ed text on one line, or [...] rows of a two-dimensional
-- array one a line.
CREATE FUNCTION storagelab_internal.script_array(elems text[])
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN cardinality($1) = 0 THEN '''{}''::text[]'
              WHEN left($1[1], 1) = '[' THEN E'ARRAY[\n    ' || array_to_string($1, E',\n    ') || ']::text[]'
              ELSE 'ARRAY[' || array_to_string($1, ', ') || ']::text[]' END
$$;
COMMENT ON FUNCTION storagelab_internal.script_array(text[]) IS
  'a text[] constructor for a generated script: a list on one line, the rows of a two-dimensional array one a line';

-- The checks of a generated script that fail: each row of checks is a
-- boolean SQL expression (the script's, written from the model) and the
-- problem it names when it is not true (NULL counts as not true).
CREATE FUNCTION storagelab_internal.script_failed(checks text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  c        text[];
  ok       boolean;
  problems text[] := '{}';
BEGIN
  IF cardinality(checks) > 0 THEN   -- (FOREACH ... SLICE refuses an empty array)
    FOREACH c SLICE 1 IN ARRAY checks LOOP
      EXECUTE format('SELECT coalesce(%s, false)', c[1]) INTO ok;
      IF NOT ok THEN
        problems := problems || c[2];
      END IF;
    END LOOP;
  END IF;
  RETURN problems;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.script_failed(text[]) IS
  'the problems named by the checks of a generated script (rows: boolean SQL expression, problem) that are not true';

-- The error of a run-time check of a generated script: message with
-- errcode and hint, the problems as its DETAIL; nothing when there are none.
-- (A function, not a procedure: its arguments may hold subqueries.)
CREATE FUNCTION storagelab_internal.script_check(problems text[], message text, errcode text, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF cardinality(problems) > 0 THEN
    RAISE EXCEPTION '%', message USING ERRCODE = errcode, DETAIL = array_to_string(problems, '; '), HINT = hint;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.script_check(text[], text, text, text) IS
  'raises the error of a generated script''s run-time check (message, errcode, hint) with the problems as detail, when there are any';

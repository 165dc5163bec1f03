-- storagelab install script, part 01: helpers of every generated migration
-- script (INT -> BIGINT, storage): dollar quoting and the one lock-retry
-- loop they all use.

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

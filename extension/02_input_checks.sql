-- storagelab install script, part 02: checks of bad input that several
-- public functions and procedures share (each raises a SQLSTATE with a
-- hint), and reraise(), which raises an error again without the internal
-- query that raised it in its CONTEXT.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- Raises an error with the given SQLSTATE, message, detail and hint (detail
-- and hint left out when empty).  A public function catches an error of its
-- inner query and calls this, so that the user's CONTEXT names the function
-- and not the query's text.
CREATE FUNCTION storagelab_internal.reraise(code text, msg text, det text, hnt text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF coalesce(det, '') = '' AND coalesce(hnt, '') = '' THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg;
  ELSIF coalesce(det, '') = '' THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, HINT = hnt;
  ELSIF coalesce(hnt, '') = '' THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = det;
  END IF;
  RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = det, HINT = hnt;
END
$$;
COMMENT ON FUNCTION storagelab_internal.reraise(text, text, text, text) IS
  'raises an error again from its SQLSTATE, message, detail and hint, without the internal query that raised it';
GRANT EXECUTE ON FUNCTION storagelab_internal.reraise(text, text, text, text) TO PUBLIC;

-- Refuses (0A000) another session's temporary table: its pages are in that
-- session's local buffers, and a script generated for it could run only
-- there.  "what" says what was refused, for the message.
CREATE FUNCTION storagelab_internal.refuse_other_temp(relation oid, what text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF EXISTS (SELECT FROM pg_class c WHERE c.oid = relation AND c.relpersistence = 't'
                AND c.relnamespace IS DISTINCT FROM pg_my_temp_schema()) THEN
    RAISE EXCEPTION 'cannot % another session''s temporary table %', what, relation::regclass
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'A temporary table can be read and altered only by the session that created it.',
            HINT = 'Run it in the session that created the table.';
  END IF;
END
$$;
COMMENT ON FUNCTION storagelab_internal.refuse_other_temp(oid, text) IS
  'raises SQLSTATE 0A000 with a hint for a temporary table of another session';
GRANT EXECUTE ON FUNCTION storagelab_internal.refuse_other_temp(oid, text) TO PUBLIC;

-- The arguments of the copy and replay phases of a copy-and-swap rewrite,
-- checked before they write: on a primary; a migration id; dirs an array
-- (empty: nothing to do) of objects naming, as strings, a source, a target and a change log
-- that exist, the log commented with this migration's id by phase start, and
-- a copy statement; key, when given, an array.
CREATE FUNCTION storagelab_internal.check_online_dirs(what text, migration text, dirs jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  d jsonb;
  k text;
  rel oid;
  usage constant text := 'Run the phase from the script that storagelab generated: it passes the migration id and the tables.';
BEGIN
  PERFORM storagelab_internal.require_primary(what);
  IF coalesce(migration, '') = '' THEN
    RAISE EXCEPTION '% needs a migration id', what USING ERRCODE = 'null_value_not_allowed', HINT = usage;
  END IF;
  IF jsonb_typeof(dirs) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'dirs of % must be a JSON array of tables', what
      USING ERRCODE = 'invalid_parameter_value', DETAIL = format('It is %s.', coalesce(dirs::text, 'NULL')), HINT = usage;
  END IF;
  FOR d IN SELECT x FROM jsonb_array_elements(dirs) x LOOP
    IF jsonb_typeof(d) IS DISTINCT FROM 'object'
       OR EXISTS (SELECT FROM unnest(ARRAY['source', 'target', 'log', 'copy']) f
                   WHERE jsonb_typeof(d->f) IS DISTINCT FROM 'string')
       OR jsonb_typeof(d->'key') NOT IN ('array', 'null') THEN
      RAISE EXCEPTION 'each element of dirs must be an object with the strings source, target, log and copy'
        USING ERRCODE = 'invalid_parameter_value', DETAIL = format('One is %s.', d), HINT = usage;
    END IF;
    FOREACH k IN ARRAY ARRAY['source', 'target', 'log'] LOOP
      BEGIN
        rel := to_regclass(d->>k);
      EXCEPTION WHEN invalid_name THEN
        rel := NULL;
      END;
      IF rel IS NULL THEN
        RAISE EXCEPTION 'table % of migration % does not exist', d->>k, migration
          USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'Phase start creates the change log and the new table.',
                HINT = 'Run phase start of the script first. ' || usage;
      END IF;
    END LOOP;
    IF obj_description(to_regclass(d->>'log'), 'pg_class') IS DISTINCT FROM
       format('storagelab copy-and-swap migration %s', migration) THEN
      RAISE EXCEPTION 'table % is not the change log of migration %', d->>'log', migration
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = 'Phase start comments the change log with its migration id.',
              HINT = 'Check the migration id against the script''s header. ' || usage;
    END IF;
  END LOOP;
END
$$;
COMMENT ON FUNCTION storagelab_internal.check_online_dirs(text, text, jsonb) IS
  'raises a SQLSTATE with a hint unless the arguments of a copy-and-swap copy or replay phase name this migration''s existing tables, on a primary';
GRANT EXECUTE ON FUNCTION storagelab_internal.check_online_dirs(text, text, jsonb) TO PUBLIC;

-- Raises 22023 naming an argument unless ok is true (NULL is false): for
-- the checks of numbers and intervals at the entry of a routine; "what" is
-- the routine's name without the schema, to keep the calls short (they show
-- in the error's CONTEXT).
CREATE FUNCTION storagelab_internal.check_arg(ok boolean, what text, arg text, expected text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'argument % of storagelab.% must be %', arg, what, expected
      USING ERRCODE = 'invalid_parameter_value',
            HINT = format('Pass a value %s for %s; the script that storagelab generated passes valid ones.', expected, arg);
  END IF;
END
$$;
COMMENT ON FUNCTION storagelab_internal.check_arg(boolean, text, text, text) IS
  'raises SQLSTATE 22023 with a hint naming the argument and what it must be, unless ok is true';
GRANT EXECUTE ON FUNCTION storagelab_internal.check_arg(boolean, text, text, text) TO PUBLIC;

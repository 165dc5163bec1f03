-- storagelab install script, part 27: the public INT -> BIGINT script
-- generators.
--
--   storagelab.bigint_migration_script(relation, column_name, mode, function_hazards)
--   storagelab.bigint_migration_group_script(relations[], column_names[], mode, function_hazards)
--       the model of part 22, built once, written by part 24 (mode
--       'blocking') or part 67 (mode 'online': copy and swap; 'copy_swap' is
--       its alias); mode 'shadow' (1.0's shadow-column writer) is refused
--       since 1.1; function_hazards 'refuse' | 'widen' | 'accept': part 28
--   storagelab.bigint_migration_plan(mode, function_hazards)
--       one script per group of columns that int_overflow rates warning or
--       critical

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- Checks the mode argument of the public generators: NULL (22004), mode
-- 'shadow', removed in 1.1 (22023, saying so), anything else unknown (22023).
CREATE FUNCTION storagelab_internal.bigint_migration_check_mode(mode text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF mode IS NULL THEN
    RAISE EXCEPTION 'mode must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use mode => ''blocking''.';
  ELSIF mode = 'shadow' THEN
    RAISE EXCEPTION 'mode "shadow" was removed in storagelab 1.1'
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'The shadow-column writer (1.0''s mode online) is gone; a 1.0 online script already under way still finishes.',
            HINT = 'Use mode ''online'' (copy and swap) or ''blocking''.';
  ELSIF mode NOT IN ('blocking', 'online', 'copy_swap') THEN
    RAISE EXCEPTION 'invalid mode "%"', mode
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Valid modes are ''blocking'' and ''online'' (alias ''copy_swap'').';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_check_mode(text) IS
  'raises 22004 for a NULL mode, 22023 for mode shadow (removed in 1.1) or an unknown mode of the INT->BIGINT generators';

CREATE FUNCTION storagelab.bigint_migration_group_script(relations regclass[], column_names name[], mode text DEFAULT 'blocking',
                                                         function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  PERFORM storagelab_internal.bigint_migration_check_mode(mode);
  RETURN storagelab_internal.bigint_migration_write(
           storagelab_internal.bigint_migration_model(relations, column_names), relations, column_names, mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text, text) IS
  'psql script converting several int columns (and their foreign-key components and everything depending on them) to bigint: mode blocking (one transaction, each table rewritten once) or online (copy and swap, in phases; alias copy_swap); function_hazards refuse, widen or accept';

CREATE FUNCTION storagelab.bigint_migration_script(relation regclass, column_name name, mode text DEFAULT 'blocking',
                                                   function_hazards text DEFAULT 'refuse')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF relation IS NULL OR column_name IS NULL THEN
    RAISE EXCEPTION 'relation and column_name must not be NULL'
      USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Call storagelab.bigint_migration_script(''schema.table'', ''column'').';
  END IF;
  RETURN storagelab.bigint_migration_group_script(ARRAY[relation], ARRAY[column_name], mode, function_hazards);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_script(regclass, name, text, text) IS
  'psql script (run with psql -v ON_ERROR_STOP=1 -f) converting relation.column_name, its whole foreign-key component and every dependent object from int to bigint; mode blocking (one transaction) or online (copy and swap, in phases chosen with -v phase=...; alias copy_swap); function_hazards refuse (default), widen or accept';

-- The script of a model in a mode (checked by the callers), under a choice
-- of function_hazards (checked by the writers, part 28).
CREATE FUNCTION storagelab_internal.bigint_migration_write(objs storagelab.bigint_migration_object[],
                                                           relations regclass[], column_names name[], mode text,
                                                           function_hazards text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- PL/pgSQL: the copy-and-swap writer is created later in the install script (part 67)
  RETURN CASE WHEN mode IN ('online', 'copy_swap') THEN storagelab_internal.bigint_migration_copy_swap_script(objs, relations, column_names, function_hazards)
              ELSE storagelab_internal.bigint_migration_blocking_script(objs, relations, column_names, function_hazards) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write(storagelab.bigint_migration_object[], regclass[], name[], text, text) IS
  'the INT->BIGINT script of a model, in mode blocking or online (copy and swap; alias copy_swap), function_hazards refuse, widen or accept';

-- What the writer of mode 'blocking' or 'online' refuses for a model under
-- a choice of function_hazards, raised as the writer raises it (the
-- blocking mode's blockers, nothing to convert, function hazards; online:
-- the rewrite engine's refusals too, part 67), before anything is written.
-- Returns the model with function_hazards applied.  The writers call it
-- first; bigint_migration_refusal() asks it without writing a script.
CREATE FUNCTION storagelab_internal.bigint_migration_preflight(objs storagelab.bigint_migration_object[], mode text,
                                                               function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF mode IN ('online', 'copy_swap') THEN
    -- PL/pgSQL: part 67 is created later in the install script
    RETURN storagelab_internal.bigint_copy_swap_refuse(objs, function_hazards);
  ELSIF mode = 'blocking' THEN
    PERFORM storagelab_internal.bigint_migration_refuse(objs, '{}', 'blocking');
    RETURN storagelab_internal.bigint_migration_apply_hazards(objs, function_hazards);   -- part 28
  END IF;
  RAISE EXCEPTION 'invalid mode "%"', mode
    USING ERRCODE = 'invalid_parameter_value', HINT = 'The pre-flight knows modes ''blocking'' and ''online''.';
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_preflight(storagelab.bigint_migration_object[], text, text) IS
  'raises what the INT->BIGINT writer of mode blocking or online refuses for a model under a choice of function_hazards, before writing; returns the model with function_hazards applied';

-- The refusal of bigint_migration_preflight() as values instead of an
-- error: NULLs when the writer of that mode accepts the model under that
-- function_hazards.
CREATE FUNCTION storagelab_internal.bigint_migration_refusal(objs storagelab.bigint_migration_object[], mode text,
                                                             function_hazards text,
                                                             OUT code text, OUT message text, OUT detail text, OUT hint text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  PERFORM storagelab_internal.bigint_migration_preflight(objs, mode, function_hazards);
EXCEPTION WHEN OTHERS THEN
  IF SQLSTATE ~ '^(40|53|57|58)' OR SQLSTATE = '55P03' THEN RAISE; END IF;  -- passing: not an answer
  GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
                          hint = PG_EXCEPTION_HINT;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_refusal(storagelab.bigint_migration_object[], text, text) IS
  'what bigint_migration_preflight() raises for a model, mode and function_hazards (SQLSTATE, message, detail, hint), NULLs when the writer accepts it';

-- The plan ------------------------------------------------------------------

-- Columns that storagelab.int_overflow rates warning or critical, grouped so
-- that columns whose components share a table are converted by one script
-- (each table rewritten once): union-find by repeated relaxation.  Critical
-- groups first, then in the view's order.
CREATE FUNCTION storagelab_internal.bigint_migration_plan_groups(
    OUT grp int, OUT critical boolean, OUT relations regclass[], OUT column_names name[])
RETURNS SETOF record
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r        record;
  g        int[];
  rels     regclass[] := '{}';
  cols     name[] := '{}';
  sevs     text[] := '{}';
  tabs     text[] := '{}';    -- per row: its component's tables, comma-joined ('' when it has none)
  i int; j int; changed boolean;
  sevcol   text;
BEGIN
  -- storagelab.int_overflow (another part of storagelab) is resolved when
  -- this runs, not when it is created; its rating column is severity
  -- (risk in storagelab 1.0).
  IF to_regclass('storagelab.int_overflow') IS NULL THEN
    RAISE EXCEPTION 'storagelab.int_overflow does not exist'
      USING ERRCODE = 'undefined_table',
            HINT = 'Install the storagelab version that provides the int_overflow view.';
  END IF;
  sevcol := (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = 'storagelab.int_overflow'::regclass
              AND a.attname IN ('severity', 'risk') AND NOT a.attisdropped ORDER BY a.attname = 'risk' LIMIT 1);
  FOR r IN EXECUTE format(
    'SELECT o.relation::regclass AS relation, o.column_name::name AS column_name, o.%1$I::text AS severity
       FROM storagelab.int_overflow o
      WHERE o.%1$I IN (''warning'', ''critical'')
      ORDER BY (o.%1$I = ''critical'') DESC, o.relation::regclass::text, o.column_name', sevcol)
  LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.relation AND c.relkind IN ('r', 'p')) THEN
      CONTINUE;                                   -- sequences or views, if the view lists them
    END IF;
    rels := rels || r.relation; cols := cols || r.column_name; sevs := sevs || r.severity;
    BEGIN
      tabs := tabs || coalesce((SELECT string_agg(DISTINCT x::text, ',')
                                  FROM unnest((storagelab_internal.bigint_migration_component(ARRAY[r.relation], ARRAY[r.column_name])).crel) x), '');
    EXCEPTION WHEN OTHERS THEN
      tabs := tabs || ''::text;
    END;
  END LOOP;
  g := ARRAY(SELECT generate_series(1, cardinality(rels)));
  LOOP
    changed := false;
    FOR i IN 1 .. cardinality(rels) LOOP
      FOR j IN i + 1 .. cardinality(rels) LOOP
        IF g[i] <> g[j] AND tabs[i] <> '' AND tabs[j] <> ''
           AND string_to_array(tabs[i], ',') && string_to_array(tabs[j], ',') THEN
          g[j] := least(g[i], g[j]); g[i] := g[j]; changed := true;
        END IF;
      END LOOP;
    END LOOP;
    EXIT WHEN NOT changed;
  END LOOP;
  RETURN QUERY
    SELECT u.g, bool_or(u.sev = 'critical'), array_agg(u.rel ORDER BY u.ord), array_agg(u.col ORDER BY u.ord)
      FROM unnest(g, rels, cols, sevs) WITH ORDINALITY AS u(g, rel, col, sev, ord)
     GROUP BY u.g
     ORDER BY bool_or(u.sev = 'critical') DESC, min(u.ord);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_plan_groups() IS
  'the columns storagelab.int_overflow rates warning or critical, grouped by shared tables of their components, critical groups first';

CREATE FUNCTION storagelab.bigint_migration_plan(mode text DEFAULT 'blocking', function_hazards text DEFAULT 'refuse')
RETURNS TABLE (step int, severity text, columns text[], relations regclass[], script text, blockers text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  g    record;
  objs storagelab.bigint_migration_object[];
  msg text; det text; st text;
BEGIN
  PERFORM storagelab_internal.bigint_migration_check_mode(mode);
  PERFORM storagelab_internal.bigint_migration_apply_hazards('{}', function_hazards);   -- checks the value
  step := 0;
  FOR g IN SELECT * FROM storagelab_internal.bigint_migration_plan_groups() LOOP
    step := step + 1;
    severity := CASE WHEN g.critical THEN 'critical' ELSE 'warning' END;
    columns := ARRAY(SELECT format('%s.%I', storagelab_internal.sql_qname(x.r), x.c)
                       FROM unnest(g.relations, g.column_names) AS x(r, c));
    relations := NULL; script := NULL; blockers := NULL;
    BEGIN
      objs := storagelab_internal.bigint_migration_model(g.relations, g.column_names);
      relations := ARRAY(SELECT d.rel FROM (SELECT DISTINCT x.relation AS rel FROM unnest(objs) x WHERE x.kind = 'column') d
                          ORDER BY storagelab_internal.sql_qname(d.rel));
      script := storagelab_internal.bigint_migration_write(objs, g.relations, g.column_names, mode, function_hazards);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, st = RETURNED_SQLSTATE;
      script := NULL;
      blockers := format('%s: %s%s', st, msg, CASE WHEN det <> '' THEN E'\n' || det ELSE '' END);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_plan(text, text) IS
  'one INT->BIGINT migration script (mode blocking or online (alias copy_swap); function_hazards refuse, widen or accept) per group of columns that storagelab.int_overflow rates warning or critical (columns whose foreign-key components share a table are grouped, so each table is rewritten once); critical groups first; blockers instead of a script when none can be produced';

-- storagelab install script, part 28: function hazards of an INT -> BIGINT
-- migration.
--
-- After ALTER COLUMN ... TYPE bigint, a helper declared f(integer) or
-- f(integer[]) called with NEW.key no longer resolves (42883, at once), and
-- a PL/pgSQL variable or a result of integer receiving the key fails with
-- 22003 past 2^31.  This part reads the function sources (PL/pgSQL and SQL)
-- and the view definitions, and adds to the model (part 22) a function_hazard
-- row per finding and a widened_function row per function it can widen.
-- The writers (parts 24 and 67) apply the DBA's choice, function_hazards =>
-- 'refuse' | 'widen' | 'accept' (bigint_migration_apply_hazards), and compare
-- plpgsql_check's errors before and after the change when it is installed
-- (bigint_migration_plpgsql_check_sql).  The reading is textual (no PL/pgSQL
-- parser is callable from SQL): doc/bigint_migration.md, "Function hazards",
-- says what it finds and what it misses.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- Source text with comments and string literals blanked out, lower case.
CREATE FUNCTION storagelab_internal.bigint_migration_scrub(src text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT lower(regexp_replace(regexp_replace(regexp_replace($1,
           '--[^\n]*', ' ', 'g'),
           '/\*[^*]*\*+([^/*][^*]*\*+)*/', ' ', 'g'),
           '''([^'']|'''')*''', '''''', 'g'))
$$;

-- Every call "name(arg, ...)" in a scrubbed source: the called name (maybe
-- schema-qualified), the number of its arguments, each argument's position
-- and text (blanks removed), and the statement (between semicolons) it is in.
CREATE FUNCTION storagelab_internal.bigint_migration_calls(src text)
RETURNS TABLE (stmt int, fname text, nargs int, argno int, arg text)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ch      text[] := string_to_array(src, NULL);
  st      int := 1;
  stack   int[] := '{}';      -- open frames, innermost last
  f_name  text[] := '{}';     -- per frame: called name (NULL: plain parenthesis or bracket)
  f_start int[] := '{}';      --   where its current argument starts
  f_stmt  int[] := '{}';
  f_n     int[] := '{}';      --   arguments closed so far
  a_f     int[] := '{}';      -- per argument: its frame, position, text
  a_no    int[] := '{}';
  a_txt   text[] := '{}';
  top     int;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(ch), 0) LOOP
    IF ch[i] IN ('(', '[') THEN
      f_name := f_name || CASE WHEN ch[i] = '(' THEN
                  substring(substr(src, greatest(1, i - 130), i - greatest(1, i - 130))
                            FROM '([a-z_][a-z0-9_$]*(?:\.[a-z_][a-z0-9_$]*)?)\s*$') END;
      f_start := f_start || (i + 1); f_stmt := f_stmt || st; f_n := f_n || 0;
      stack := stack || cardinality(f_name);
    ELSIF ch[i] IN (',', ')', ']') AND cardinality(stack) > 0 THEN
      top := stack[cardinality(stack)];
      IF f_name[top] IS NOT NULL THEN
        f_n[top] := f_n[top] + 1;
        a_f := a_f || top; a_no := a_no || f_n[top];
        a_txt := a_txt || regexp_replace(substr(src, f_start[top], i - f_start[top]), '[\s"]+', '', 'g');
      END IF;
      f_start[top] := i + 1;
      IF ch[i] <> ',' THEN
        stack := stack[1:cardinality(stack) - 1];
      END IF;
    ELSIF ch[i] = ';' THEN
      st := st + 1;
    END IF;
  END LOOP;
  RETURN QUERY
    SELECT f_stmt[a.f], f_name[a.f], f_n[a.f], a.no, a.txt
      FROM unnest(a_f, a_no, a_txt) AS a(f, no, txt)
     WHERE a.txt <> '' OR f_n[a.f] > 1;
END
$fn$;

-- How an argument carries a converted value: 'bigint' (the value, or
-- arithmetic on it), 'bigint[]' (an ARRAY[...] or array_agg() of it), 'cast'
-- (cast back to a narrower integer by the caller), or NULL (it does not, as
-- far as a textual reading can tell).  carrier is a regular expression that
-- matches the value's spellings (new.col, t.col, a parameter name, $1).
CREATE FUNCTION storagelab_internal.bigint_migration_arg_class(arg text, carrier text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE
    WHEN $1 !~ $2 THEN NULL                                   -- the common case, one test
    WHEN $1 ~ ('^\(*(' || $2 || ')\)*$') THEN 'bigint'
    WHEN $1 ~ ('^\(*(' || $2 || ')\)*::(int|integer|int4|smallint|int2)$')
      OR $1 ~ ('^cast\((' || $2 || ')as(int|integer|int4|smallint|int2)\)$') THEN 'cast'
    WHEN $1 ~ ('^array\[(.*,)?(' || $2 || ')(,.*)?\]$')
      OR $1 ~ ('^array_agg\((distinct)?(' || $2 || ')(orderby.*)?\)$') THEN 'bigint[]'
    WHEN $1 ~ ('^(coalesce|greatest|least|abs)\((' || $2 || '),')
      OR $1 ~ ('^(' || $2 || ')[-+*/%]') OR $1 ~ ('[-+*](' || $2 || ')$') THEN 'bigint'
  END
$$;

-- Whether a parameter (or operand) of type param takes a value of type typ
-- (an array of it when arr) without an explicit cast.
CREATE FUNCTION storagelab_internal.type_change_accepts(param oid, typ oid, arr boolean)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN NOT $3 THEN
           $1 = $2
           OR $1 IN ('anyelement'::regtype, 'anynonarray'::regtype, 'anycompatible'::regtype,
                     'anycompatiblenonarray'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = $1 AND c.castcontext = 'i')
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $2 AND t.typtype = 'd' AND t.typbasetype = $1)
         ELSE
           $1 IN ('anyarray'::regtype, 'anycompatiblearray'::regtype, 'anyelement'::regtype,
                  'anycompatible'::regtype, '"any"'::regtype)
           OR EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = $1 AND t.typelem <> 0 AND t.typsubscript = 'array_subscript_handler'::regproc
                        AND (t.typelem = $2
                             OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = $2 AND c.casttarget = t.typelem AND c.castcontext = 'i')))
         END
$$;

-- Whether storagelab may re-create a function: PL/pgSQL or SQL with a
-- string body, not built in, not a member of an extension.
CREATE FUNCTION storagelab_internal.bigint_migration_widenable(fn oid)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                  WHERE p.oid = $1 AND l.lanname IN ('plpgsql', 'sql') AND p.prokind IN ('f', 'p')
                    AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
                    AND p.prosqlbody IS NULL)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = $1 AND d.deptype = 'e')
$$;

-- One function_hazard row.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_row(fn oid, argno int, target text, caller text, fails text, via text)
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o storagelab.bigint_migration_object;
BEGIN
  o.kind := 'function_hazard'; o.depth := 0;
  o.classid := 'pg_proc'::regclass; o.objid := fn; o.objsubid := argno;
  o.identity := format('function %s, %s', fn::regprocedure, target);
  o.hazard_target := target; o.hazard_caller := caller; o.hazard_fails := fails;
  o.lock := 'none';
  IF fails = 'immediately' THEN
    o.sqlstate := '42883';
    o.handling := format('receives %s from %s: no function matches after the type change, so it fails at once', via, caller);
    o.hint := CASE WHEN storagelab_internal.bigint_migration_widenable(fn)
                   THEN 'function_hazards => ''widen'' re-creates it with bigint; ''accept'' leaves it as it is'
                   ELSE 'storagelab cannot re-create it: cast the argument in the caller, or change the function by hand' END;
  ELSE
    o.sqlstate := '22003';
    o.handling := format('receives %s from %s: works until the values pass 2^31, then fails with integer out of range', via, caller);
    o.hint := CASE WHEN target ~ '^(variable|OUT parameter|result column|return type) ' AND storagelab_internal.bigint_migration_widenable(fn)
                   THEN 'function_hazards => ''widen'' declares it bigint (a result column only when the function declares it: OUT or RETURNS TABLE); or declare it bigint by hand'
                   ELSE 'declare it bigint by hand, or cast the value' END;
  END IF;
  RETURN o;
END
$fn$;

-- The functions a call "fname(...)" with nargs arguments may resolve to
-- (fname maybe schema-qualified; parameters with defaults may be left
-- out), each with the type of its parameter argno, and that parameter's
-- name when the function has no OUT parameters.
CREATE FUNCTION storagelab_internal.bigint_migration_callees(fname text, nargs int, argno int)
RETURNS TABLE (fn oid, typ oid, pname text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN QUERY
    SELECT f.oid, f.proargtypes[argno - 1], CASE WHEN f.proallargtypes IS NULL THEN f.proargnames[argno] END
      FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
     WHERE f.proname = split_part(fname, '.', -1) AND (fname !~ '\.' OR n.nspname = split_part(fname, '.', 1))
       AND f.pronargs >= nargs AND f.pronargs - f.pronargdefaults <= nargs AND f.prokind IN ('f', 'p');
END
$fn$;

-- Hazards in the calls of one source: the value (bigint_migration_arg_class)
-- passed where a function takes smallint or integer (or an array of them)
-- and no function of that name takes it as bigint.  stmt_filter: only the
-- statements that match it (those naming the table) are read.
CREATE FUNCTION storagelab_internal.bigint_migration_call_hazards(src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  stmts text[] := string_to_array(src, ';');
  c     record;
  p     record;
BEGIN
  FOR c IN
    SELECT DISTINCT k.fname, k.nargs, k.argno, storagelab_internal.bigint_migration_arg_class(k.arg, carrier) AS cls
      FROM storagelab_internal.bigint_migration_calls(src) k
     WHERE (stmt_filter IS NULL OR stmts[k.stmt] ~ stmt_filter)
       AND storagelab_internal.bigint_migration_arg_class(k.arg, carrier) IS NOT NULL
  LOOP
    -- some function of that name takes the value as it is: not a hazard
    CONTINUE WHEN c.cls <> 'cast' AND EXISTS (
      SELECT 1 FROM storagelab_internal.bigint_migration_callees(c.fname, c.nargs, c.argno) f
       WHERE storagelab_internal.type_change_accepts(f.typ, 'int8'::regtype, c.cls = 'bigint[]'));
    FOR p IN
      SELECT f.fn, f.typ, f.pname FROM storagelab_internal.bigint_migration_callees(c.fname, c.nargs, c.argno) f
       WHERE f.typ = ANY (CASE WHEN c.cls = 'bigint[]' THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                               ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
       ORDER BY f.fn
    LOOP
      RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
        p.fn, c.argno,
        format('parameter %s%s (%s)', c.argno, coalesce(' ' || quote_ident(nullif(p.pname, '')), ''), format_type(p.typ, NULL)),
        caller, CASE WHEN c.cls = 'cast' THEN 'past 2^31' ELSE 'immediately' END,
        CASE WHEN c.cls = 'cast' THEN via || ' cast to ' || format_type(p.typ, NULL) ELSE via || ' as ' || c.cls END);
    END LOOP;
  END LOOP;
END
$fn$;

-- A list split at its top-level separators (sep: a comma, or a word with
-- a blank on each side, ' and ', ' || '): not those inside parentheses,
-- brackets or quotes.  Each item trimmed; a blank last item left out.
CREATE FUNCTION storagelab_internal.bigint_migration_split(list text, sep text DEFAULT ',')
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ch    text[] := coalesce(string_to_array(list, NULL), '{}');
  items text[] := '{}';
  depth int := 0;
  inq   boolean := false;
  last  int := 1;
BEGIN
  FOR i IN 1 .. cardinality(ch) LOOP
    IF ch[i] = '''' THEN inq := NOT inq;
    ELSIF inq THEN CONTINUE;
    ELSIF ch[i] IN ('(', '[') THEN depth := depth + 1;
    ELSIF ch[i] IN (')', ']') THEN depth := depth - 1;
    ELSIF depth = 0 AND i >= last AND ch[i] = left(sep, 1) AND substr(list, i, length(sep)) = sep THEN
      items := items || btrim(substr(list, last, i - last)); last := i + length(sep);
    END IF;
  END LOOP;
  RETURN items || CASE WHEN btrim(substr(list, last)) <> '' THEN ARRAY[btrim(substr(list, last))] ELSE '{}' END;
END
$fn$;

-- The result columns of function fn, in order: its OUT, INOUT and TABLE
-- parameters; else the attributes of its composite return type when that
-- is a type made by CREATE TYPE ... AS (a table's row type changes with the
-- table); else its return type, as one column with an empty name.
CREATE FUNCTION storagelab_internal.function_result_columns(fn oid)
RETURNS TABLE (pos int, name text, typ oid)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT row_number() OVER (ORDER BY u.ord)::int, coalesce(p.proargnames[u.ord], ''), u.t
    FROM pg_proc p, unnest(p.proallargtypes) WITH ORDINALITY AS u(t, ord)
   WHERE p.oid = $1 AND p.proargmodes[u.ord] IN ('o', 'b', 't')
  UNION ALL
  SELECT row_number() OVER (ORDER BY a.attnum)::int, a.attname::text, a.atttypid
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype JOIN pg_class k ON k.oid = t.typrelid AND k.relkind = 'c'
    JOIN pg_attribute a ON a.attrelid = k.oid AND a.attnum > 0 AND NOT a.attisdropped
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
  UNION ALL
  SELECT 1, '', p.prorettype
    FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
   WHERE p.oid = $1 AND p.proallargtypes IS NULL
     AND NOT EXISTS (SELECT 1 FROM pg_class k WHERE k.oid = t.typrelid AND k.relkind = 'c')
$$;

-- The items of each PL/pgSQL RETURN QUERY SELECT in a scrubbed source, by
-- position (blanks removed, column aliases dropped), with the statement.
CREATE FUNCTION storagelab_internal.return_query_items(src text)
RETURNS TABLE (stmt int, pos int, item text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT s.n::int, i.k::int,
         regexp_replace(regexp_replace(i.item, '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g')
    FROM unnest(string_to_array($1, ';')) WITH ORDINALITY AS s(st, n),
         regexp_match(regexp_replace(s.st, '\s+', ' ', 'g'),
                      '(^|[^a-z0-9_$.])return\s+query\s+(with\M.*?\)\s*)?select\s+(distinct\s+|all\s+)?(.*?)(\s+(from|where|group|order|limit|union|except|intersect)\M.*)?$') AS m,
         unnest(storagelab_internal.bigint_migration_split(m[4])) WITH ORDINALITY AS i(item, k)
$$;

-- The smallint/integer PL/pgSQL variables (arrays too) declared in the
-- DECLARE sections of a scrubbed or tokens-form source, and the OUT/INOUT
-- parameters of function fn: name, 'variable' or 'OUT parameter', type.
CREATE FUNCTION storagelab_internal.bigint_migration_int_variables(fn oid, src text)
RETURNS TABLE (name text, what text, typ text)
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT DISTINCT m1[1], 'variable',
         CASE WHEN m1[3] IN ('smallint', 'int2') THEN 'smallint' ELSE 'integer' END || CASE WHEN m1[4] IS NULL THEN '' ELSE '[]' END
    FROM regexp_matches($2, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
         unnest(string_to_array(blk.b[1], ';')) AS d(decl),
         regexp_match(d.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?(integer|int4|int|smallint|int2)\s*(\[\s*\])?(\s|$|:|not\M|default\M)') AS m1
  UNION
  SELECT lower(c.name), 'OUT parameter', format_type(c.typ, NULL)
    FROM storagelab_internal.function_result_columns($1) c
   WHERE c.name <> '' AND (SELECT p.proallargtypes IS NOT NULL FROM pg_proc p WHERE p.oid = $1)
     AND c.typ IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
$$;

-- Hazards inside one function: smallint/integer PL/pgSQL variables (OUT and
-- INOUT parameters among them) receiving the value (v := value, SELECT or
-- RETURNING ... INTO at the variable's position), and smallint/integer
-- result columns receiving it: the return type (RETURN [NEXT] value), a
-- RETURNS TABLE, OUT or composite (CREATE TYPE ... AS) column at the value's
-- position in a RETURN QUERY or a SQL function's output.  The value: what
-- bigint_migration_arg_class recognises.  Assignments fail past 2^31 (they
-- cast); RETURN QUERY at once (42804: its column types must match exactly).
CREATE FUNCTION storagelab_internal.bigint_migration_value_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  is_plpgsql boolean := (SELECT l.lanname = 'plpgsql' FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = fn);
  st         text[];   -- the statements with the value, blanks made one
  -- the result columns: names and types (one unnamed column for a scalar return type)
  res_name   text[];
  res_type   oid[];
  v          record;
  o          storagelab.bigint_migration_object;
BEGIN
  SELECT array_agg(c.name ORDER BY c.pos), array_agg(c.typ ORDER BY c.pos) INTO res_name, res_type
    FROM storagelab_internal.function_result_columns(fn) c;
  st := ARRAY(SELECT regexp_replace(s.x, '\s+', ' ', 'g') FROM unnest(string_to_array(src, ';')) WITH ORDINALITY AS s(x, n)
               WHERE s.x ~ carrier AND (stmt_filter IS NULL OR s.x ~ stmt_filter) ORDER BY s.n);

  IF is_plpgsql THEN
    -- integer variables assigned the value: v := value, or SELECT items INTO targets [FROM ...]
    -- or ... RETURNING items INTO targets (OUT and INOUT parameters are variables of the function too)
    RETURN QUERY
      SELECT h.* FROM storagelab_internal.bigint_migration_int_variables(fn, src) iv,
             storagelab_internal.bigint_migration_hazard_row(fn, 0, format('%s %s (%s)', iv.what, iv.name, iv.typ), caller, 'past 2^31', via) h
       WHERE EXISTS (
               SELECT 1 FROM unnest(st) s,
                      LATERAL (SELECT m[2], regexp_replace(m[3], '[\s"]+', '', 'g') FROM regexp_match(s, '(^|[^a-z0-9_$.])([a-z_][a-z0-9_$]*)\s*:=\s*(.*)$') m
                               UNION ALL
                               SELECT t.x, regexp_replace(regexp_replace(i.x, '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g')
                                 FROM regexp_match(s, '\m(select|returning)\s+(.*?)\s+into\s+(strict\s+)?(.*?)(\s+from\M.*)?$') m,
                                      unnest(storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''))) WITH ORDINALITY AS i(x, n)
                                      JOIN unnest(storagelab_internal.bigint_migration_split(m[4])) WITH ORDINALITY AS t(x, n) ON t.n = i.n) a(var, val)
                WHERE a.var = iv.name AND storagelab_internal.bigint_migration_arg_class(a.val, carrier) IN ('bigint', 'bigint[]'))
       ORDER BY iv.name;
  END IF;
  -- result columns: an integer column at a position where the output has the value
  FOR v IN
    WITH r AS (   -- what the function returns, statement by statement: its items at their positions
      SELECT s.n, q.pos, q.item AS val, 'query' AS how
        FROM unnest(st) WITH ORDINALITY AS s(x, n), storagelab_internal.return_query_items(s.x) q
       WHERE is_plpgsql AND (regexp_match(s.x, '(^|[^a-z0-9_$.])return\s+(next\s+)?(.*)$'))[3] ~ '^query\M'
      UNION ALL
      SELECT s.n, 1, regexp_replace(m[3], '[\s"]+', '', 'g'), 'assign'
        FROM unnest(st) WITH ORDINALITY AS s(x, n), regexp_match(s.x, '(^|[^a-z0-9_$.])return\s+(next\s+)?(.*)$') m
       WHERE is_plpgsql AND m[3] !~ '^query\M' AND btrim(m[3]) <> ''
      UNION ALL
      SELECT s.n, i.n::int, regexp_replace(regexp_replace(i.x, '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g'), 'assign'
        FROM unnest(st) WITH ORDINALITY AS s(x, n), regexp_match(s.x, '\m(select|returning)\s+(.*?)(\s+(from|where|group|order|limit)\M.*)?$') m,
             unnest(storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''))) WITH ORDINALITY AS i(x, n)
       WHERE NOT is_plpgsql)
    SELECT r.pos, r.how, res_name[r.pos] AS name, res_type[r.pos] AS typ,
           storagelab_internal.bigint_migration_arg_class(r.val, carrier) AS cls
      FROM (SELECT * FROM r ORDER BY r.n, r.pos) r
     WHERE r.pos <= cardinality(res_type)
       AND res_type[r.pos] IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       AND storagelab_internal.bigint_migration_arg_class(r.val, carrier) IS NOT NULL
     ORDER BY r.pos, r.how DESC
  LOOP
    CONTINUE WHEN v.cls = 'bigint[]' AND v.typ NOT IN ('int2[]'::regtype, 'int4[]'::regtype);
    o := storagelab_internal.bigint_migration_hazard_row(
      fn, 0, CASE WHEN cardinality(res_type) = 1 AND res_name[1] = '' THEN format('return type %s', format_type(v.typ, NULL))
                  ELSE format('result column %s%s (%s)', v.pos, coalesce(' ' || quote_ident(nullif(v.name, '')), ''), format_type(v.typ, NULL)) END,
      caller, CASE WHEN v.how = 'query' AND v.cls <> 'cast' THEN 'immediately' ELSE 'past 2^31' END, via);
    IF o.hazard_fails = 'immediately' THEN
      -- not a call that no longer resolves: the query's row no longer matches the declared one
      o.sqlstate := '42804';
      o.handling := format('returns %s from %s in RETURN QUERY where the function declares %s: every call fails at once (structure of query does not match function result type)',
                           via, caller, format_type(v.typ, NULL));
      o.hint := 'declare the result column bigint (its callers then receive bigint), or cast the value in the query; storagelab does not change result types';
    END IF;
    RETURN NEXT o;
  END LOOP;
END
$fn$;

-- Hazards in what one function writes: INSERT INTO t [(cols)] VALUES or
-- SELECT (without cols: t's columns in order), UPDATE t SET col = ..., the
-- value going into a smallint/integer column (or array) of a table outside
-- the migration (an audit or log table without a foreign key): fails past
-- 2^31.  Every table of that name (and schema, when given) is looked at.
CREATE FUNCTION storagelab_internal.bigint_migration_write_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text,
                                                                  objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st    text;
  m     text[];
  tname text;
  cols  text[];
  vals  text[];
  k     int;
  depth int;
  t     record;
  o     storagelab.bigint_migration_object;
BEGIN
  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    cols := NULL; vals := NULL;
    m := regexp_match(st, '\minsert into ([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as [a-z_][a-z0-9_$]*)? ?(\(([^()]*)\))? ?(overriding [a-z]+ value )?(values ?\((.*)|select (.*))$');
    IF m IS NOT NULL THEN
      tname := m[1];
      cols := CASE WHEN m[5] IS NOT NULL THEN storagelab_internal.bigint_migration_split(regexp_replace(m[5], '[\s"]+', '', 'g')) END;
      IF m[8] IS NOT NULL THEN
        -- the first row of VALUES: up to its closing parenthesis
        depth := 1; k := 0;
        WHILE depth > 0 AND k < length(m[8]) LOOP
          k := k + 1;
          depth := depth + CASE substr(m[8], k, 1) WHEN '(' THEN 1 WHEN ')' THEN -1 ELSE 0 END;
        END LOOP;
        vals := storagelab_internal.bigint_migration_split(left(m[8], k - 1));
      ELSE
        vals := storagelab_internal.bigint_migration_split(regexp_replace(
                  (regexp_match(m[9], '^(distinct |all )?(.*?)( (from|where|group|order|limit|on conflict|returning)\M.*)?$'))[2], '\s+as\s+[a-z_0-9$]+(,|$)', '\1', 'g'));
      END IF;
    ELSE
      m := regexp_match(st, '\mupdate (only )?([a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?)( as)?( [a-z_][a-z0-9_$]*)? set (.*?)( (from|where|returning)\M.*)?$');
      IF m IS NOT NULL THEN
        tname := m[2];
        SELECT array_agg(btrim(split_part(x, '=', 1)) ORDER BY n), array_agg(substr(x, strpos(x, '=') + 1) ORDER BY n) INTO cols, vals
          FROM unnest(storagelab_internal.bigint_migration_split(m[6])) WITH ORDINALITY AS u(x, n)
         WHERE x ~ '^[a-z_][a-z0-9_$]*\s*=';
      END IF;
    END IF;
    CONTINUE WHEN vals IS NULL;
    FOR k IN 1 .. cardinality(vals) LOOP
      vals[k] := regexp_replace(vals[k], '[\s"]+', '', 'g');
      CONTINUE WHEN coalesce(storagelab_internal.bigint_migration_arg_class(vals[k], carrier) NOT IN ('bigint', 'bigint[]'), true);
      FOR t IN
        SELECT c.oid AS relid, a.attname, a.atttypid
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relname = split_part(tname, '.', -1) AND (tname !~ '\.' OR n.nspname = split_part(tname, '.', 1))
           AND c.relkind IN ('r', 'p', 'f')
           AND CASE WHEN cols IS NULL
                    THEN a.attnum = (SELECT b.attnum FROM pg_attribute b WHERE b.attrelid = c.oid AND b.attnum > 0 AND NOT b.attisdropped
                                      ORDER BY b.attnum OFFSET k - 1 LIMIT 1)
                    ELSE a.attname = cols[k] END
           -- (a value that is itself an array: a widened integer[] parameter)
           AND a.atttypid = ANY (CASE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) = 'bigint[]'
                                      THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                      ELSE ARRAY['int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype]::oid[] END)
           AND NOT EXISTS (SELECT 1 FROM storagelab_internal.bigint_migration_converted(objs) v WHERE v.relid = c.oid AND v.attname = a.attname)
         ORDER BY 1
      LOOP
        o := storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('writes column %s.%I (%s)', storagelab_internal.sql_qname(t.relid), t.attname, format_type(t.atttypid, NULL)),
          caller, 'past 2^31', via);
        o.hint := format('convert %s.%I to bigint too (in the same script: bigint_migration_group_script() with both columns), or cast in the writer',
                         storagelab_internal.sql_qname(t.relid), t.attname);
        RETURN NEXT o;
      END LOOP;
    END LOOP;
  END LOOP;
END
$fn$;

-- The columns of a model that change type: smallint or integer now.
CREATE FUNCTION storagelab_internal.bigint_migration_converted(objs storagelab.bigint_migration_object[])
RETURNS TABLE (relid oid, attname name)
LANGUAGE sql STABLE STRICT
ROWS 10  -- a component's columns: a few (the default guess, 1000, joined pg_class by a full scan)
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT a.attrelid, a.attname
    FROM unnest($1) x JOIN pg_attribute a ON a.attrelid = x.relation AND a.attname = x.column_name
   WHERE x.kind = 'column' AND a.atttypid IN ('int2'::regtype, 'int4'::regtype)
$$;

-- A word as a regular expression matching it literally.
CREATE FUNCTION storagelab_internal.bigint_migration_re(word text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT regexp_replace(lower($1), '([^a-z0-9_])', '\\\1', 'g') $$;

-- Whether a function source names a table: the name as a word outside
-- comments and strings.  A strpos in the raw source first (most sources do
-- not contain the name; the scrub never makes a match).  PL/pgSQL: a SQL
-- function with SET is planned at every call (15-17), this one once a session.
CREATE FUNCTION storagelab_internal.bigint_migration_names(src text, name text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF strpos(lower(src), lower(name)) = 0 THEN
    RETURN false;
  END IF;
  RETURN storagelab_internal.bigint_migration_scrub(src) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(name) || '($|[^a-z0-9_$])');
END
$fn$;

-- ---------------------------------------------------------------------------
-- Reading with positions: the guards on TG_TABLE_NAME, dynamic SQL, and the
-- widening of declarations need the text of string literals (the scrub
-- above blanks them) and positions in the original source.

-- A source as the readers see it, position for position: lower case,
-- comments blanked (newlines kept), the inside of each string literal
-- ('...', E'...', $tag$...$tag$) blanked, its bounds replaced by a quote;
-- and each literal's text (as written, unescaped) with its start.
CREATE FUNCTION storagelab_internal.bigint_migration_lex(src text, OUT mask text, OUT lit_at int[], OUT lit_txt text[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  s    text := lower(src);
  n    int := length(src);
  i    int := 1;
  j    int;
  c    text;
  tag  text;
  buf  text;
  esc  boolean;
  run  text;
  k    int;
BEGIN
  mask := ''; lit_at := '{}'; lit_txt := '{}';
  WHILE i <= n LOOP
    run := substring(s FROM i FOR 4000);
    c := substr(run, 1, 1);
    IF left(run, 2) = '--' THEN
      j := strpos(substr(s, i), E'\n');
      j := CASE WHEN j = 0 THEN n - i + 1 ELSE j - 1 END;
      mask := mask || repeat(' ', j); i := i + j;
    ELSIF left(run, 2) = '/*' THEN
      j := strpos(substr(s, i + 2), '*/');
      j := CASE WHEN j = 0 THEN n - i + 1 ELSE j + 3 END;
      mask := mask || regexp_replace(substr(s, i, j), '[^\n]', ' ', 'g'); i := i + j;
    ELSIF c = '''' THEN
      esc := i > 1 AND substr(s, i - 1, 1) = 'e' AND (i = 2 OR substr(s, i - 2, 1) !~ '[a-z0-9_$]');
      j := i + 1; buf := '';
      WHILE j <= n LOOP
        IF NOT esc THEN
          -- up to the next quote at once
          k := strpos(substr(s, j), '''');
          IF k = 0 THEN
            buf := buf || substr(src, j); j := n + 1; EXIT;
          END IF;
          buf := buf || substr(src, j, k - 1); j := j + k - 1;
        END IF;
        c := substr(src, j, 1);
        IF esc AND c = '\' THEN
          buf := buf || substr(src, j + 1, 1); j := j + 2;
        ELSIF c = '''' AND substr(s, j + 1, 1) = '''' THEN
          buf := buf || ''''; j := j + 2;
        ELSIF c = '''' THEN
          EXIT;
        ELSE
          buf := buf || c; j := j + 1;
        END IF;
      END LOOP;
      j := least(j, n);
      lit_at := lit_at || i; lit_txt := lit_txt || buf;
      mask := mask || '''' || regexp_replace(substr(s, i + 1, j - i - 1), '[^\n]', ' ', 'g') || CASE WHEN j > i THEN '''' ELSE '' END;
      i := j + 1;
    ELSIF c = '$' AND (i = 1 OR substr(s, i - 1, 1) !~ '[a-z0-9_$]') AND run ~ '^\$([a-z_][a-z0-9_]*)?\$' THEN
      tag := substring(run FROM '^(\$(?:[a-z_][a-z0-9_]*)?\$)');
      j := strpos(substr(s, i + length(tag)), tag);
      buf := CASE WHEN j = 0 THEN substr(src, i + length(tag)) ELSE substr(src, i + length(tag), j - 1) END;
      j := CASE WHEN j = 0 THEN n - i + 1 ELSE 2 * length(tag) + j - 1 END;   -- the literal's length
      lit_at := lit_at || i; lit_txt := lit_txt || buf;
      mask := mask || '''' || regexp_replace(substr(s, i + 1, j - 2), '[^\n]', ' ', 'g') || '''';
      i := i + j;
    ELSE
      run := coalesce(substring(run FROM '^.[^-/''$]*'), c);
      mask := mask || run; i := i + length(run);
    END IF;
  END LOOP;
END
$fn$;

-- The value of an IF condition in a trigger function fired for table rel:
-- true or false when it is a test of TG_TABLE_NAME, TG_TABLE_SCHEMA or
-- TG_RELID against literals with =, <>, LIKE, ILIKE or IN (...), a negation
-- of one (NOT, NOT LIKE, NOT IN), or an AND / OR of such tests that
-- decides; NULL (unknown) for anything else.  cond has its literals
-- quoted.
CREATE FUNCTION storagelab_internal.bigint_migration_guard_value(cond text, rel oid)
RETURNS boolean
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  c     text := btrim(regexp_replace(cond, '\s+', ' ', 'g'));
  parts text[];
  vals  boolean[];
  m     text[];
  subj  text;
  lits  text[];
  d     int;
  shut  int;    -- where the first parenthesis closes
BEGIN
  -- parentheses around the whole condition
  WHILE left(c, 1) = '(' LOOP
    d := 0;
    shut := NULL;
    FOR i IN 1 .. length(c) LOOP
      d := d + CASE substr(c, i, 1) WHEN '(' THEN 1 WHEN ')' THEN -1 ELSE 0 END;
      IF d = 0 THEN shut := i; EXIT; END IF;
    END LOOP;
    EXIT WHEN shut IS DISTINCT FROM length(c);
    c := btrim(substr(c, 2, length(c) - 2));
  END LOOP;
  FOREACH subj IN ARRAY ARRAY['or', 'and'] LOOP
    parts := storagelab_internal.bigint_migration_split(c, ' ' || subj || ' ');
    CONTINUE WHEN cardinality(parts) < 2;
    vals := ARRAY(SELECT storagelab_internal.bigint_migration_guard_value(p, rel) FROM unnest(parts) p);
    RETURN CASE WHEN subj = 'or' THEN (CASE WHEN true = ANY (vals) THEN true WHEN vals <@ ARRAY[false] THEN false END)
                ELSE (CASE WHEN false = ANY (vals) THEN false WHEN vals <@ ARRAY[true] THEN true END) END;
  END LOOP;
  IF c ~ '^not ' THEN
    RETURN NOT storagelab_internal.bigint_migration_guard_value(substr(c, 5), rel);
  END IF;
  -- 'literal' = TG_x: turned round
  m := regexp_match(c, '^(''(?:[^'']|'''')*''(?:::[a-z]+)?) ?(=|<>|!=) ?(tg_table_name|tg_table_schema|tg_relid)((?:::[a-z]+)*)$');
  IF m IS NOT NULL THEN
    c := m[3] || m[4] || ' ' || m[2] || ' ' || m[1];
  END IF;
  m := regexp_match(c, '^(tg_table_name|tg_table_schema|tg_relid)(?:::[a-z]+)* ?(=|<>|!=|not like|like|not ilike|ilike|not in|in) ?(.*)$');
  IF m IS NULL THEN
    RETURN NULL;
  END IF;
  parts := CASE WHEN m[2] ~ 'in$' THEN storagelab_internal.bigint_migration_split(substring(m[3] FROM '^\((.*)\)$')) ELSE ARRAY[m[3]] END;
  IF coalesce(cardinality(parts), 0) = 0 OR EXISTS (SELECT 1 FROM unnest(parts) x WHERE x !~ '^''(?:[^'']|'''')*''(::(regclass|text|name|oid))?$') THEN
    RETURN NULL;   -- not a list of literals
  END IF;
  lits := ARRAY(SELECT replace(substring(x FROM '^''(.*)''(?:::[a-z]+)?$'), '''''', '''') FROM unnest(parts) x);
  SELECT CASE m[1] WHEN 'tg_table_name' THEN k.relname::text WHEN 'tg_table_schema' THEN n.nspname::text
                   ELSE quote_ident(n.nspname) || '.' || quote_ident(k.relname) END
    INTO subj FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace WHERE k.oid = rel;
  IF m[1] = 'tg_relid' THEN
    IF m[2] NOT IN ('=', '<>', '!=', 'in', 'not in') THEN
      RETURN NULL;
    END IF;
    -- 'schema.table'::regclass decides; an unqualified name decides only when it names another table
    vals := ARRAY(SELECT CASE WHEN cardinality(parse_ident(l, false)) = 2 THEN parse_ident(l, false) = parse_ident(subj, false)
                              WHEN (parse_ident(l, false))[1] = (parse_ident(subj, false))[2] THEN NULL
                              ELSE false END
                    FROM unnest(lits) l);
  ELSE
    vals := ARRAY(SELECT CASE WHEN m[2] IN ('=', '<>', '!=', 'in', 'not in') THEN subj = l
                              WHEN m[2] IN ('like', 'not like') THEN subj LIKE l
                              ELSE subj ILIKE l END
                    FROM unnest(lits) l);
  END IF;
  vals := ARRAY[CASE WHEN true = ANY (vals) THEN true WHEN vals <@ ARRAY[false] THEN false END];
  RETURN CASE WHEN m[2] IN ('<>', '!=', 'not like', 'not ilike', 'not in') THEN NOT vals[1] ELSE vals[1] END;
EXCEPTION WHEN invalid_parameter_value OR invalid_name THEN
  RETURN NULL;   -- parse_ident of something that is no name
END
$fn$;

-- The text of mask between positions a and b with its literals (those
-- guard_prune left) written back: quoted again (quote_literal of their
-- text), or as tokens '@k' (k: the number in lit_txt), which keep apart
-- the statements split at semicolons.
CREATE FUNCTION storagelab_internal.bigint_migration_unmask(mask text, lit_at int[], lit_txt text[], a int, b int, tokens boolean)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  res text := '';
  p   int := a;
  e   int;
BEGIN
  FOR k IN 1 .. coalesce(cardinality(lit_at), 0) LOOP
    CONTINUE WHEN lit_at[k] < a OR lit_at[k] > b OR substr(mask, lit_at[k], 1) <> '''';   -- blanked: in a branch that does not run
    e := lit_at[k] + coalesce(nullif(strpos(substr(mask, lit_at[k] + 1), ''''), 0), length(mask) - lit_at[k]);
    res := res || substr(mask, p, lit_at[k] - p) || CASE WHEN tokens THEN format('''@%s''', k) ELSE quote_literal(lit_txt[k]) END;
    p := e + 1;
  END LOOP;
  RETURN res || CASE WHEN p <= b THEN substr(mask, p, b - p + 1) ELSE '' END;
END
$fn$;

-- A trigger function's lexed source (mask) as it runs for table rel: the
-- branches of IF / ELSIF / ELSE that a guard on TG_TABLE_NAME,
-- TG_TABLE_SCHEMA or TG_RELID (bigint_migration_guard_value) keeps from
-- running for rel are blanked.  Any other condition keeps its branch.
CREATE FUNCTION storagelab_internal.bigint_migration_guard_prune(mask text, lit_at int[], lit_txt text[], rel oid)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  kw     text := '\m(end\s+if|end\s+loop|end\s+case|elsif|elseif|else|if|then|case|begin|loop|end)\M';
  pos    int := 1;
  k      int;
  w      text;
  ifs    int[] := '{}';    -- per open if, case, begin, loop: its IF's number (0 for the others)
  n_if   int := 0;
  cond   int[] := '{}';    -- per IF: where its pending condition starts (0: none)
  cur    int[] := '{}';    -- per IF: its open branch
  b_if   int[] := '{}';    -- per branch: its IF, body start and end, condition value (NULL: unknown, or ELSE)
  b_from int[] := '{}';
  b_to   int[] := '{}';
  b_val  boolean[] := '{}';
  id     int;
  seen_true boolean;
BEGIN
  LOOP
    k := regexp_instr(mask, kw, pos);
    EXIT WHEN k = 0;
    w := regexp_substr(mask, kw, pos);
    pos := k + length(w);
    w := regexp_replace(w, '\s+', ' ', 'g');
    id := coalesce(ifs[cardinality(ifs)], 0);
    IF w = 'if' THEN
      n_if := n_if + 1; ifs := ifs || n_if; cond := cond || pos; cur := cur || 0;
    ELSIF w IN ('case', 'begin', 'loop') THEN
      ifs := ifs || 0;
    ELSIF id = 0 AND w IN ('end', 'end case', 'end loop') AND cardinality(ifs) > 0 THEN
      ifs := ifs[1:cardinality(ifs) - 1];
    ELSIF id > 0 AND w = 'then' AND cond[id] > 0 THEN
      b_if := b_if || id; b_from := b_from || pos; b_to := b_to || 0; cur[id] := cardinality(b_if);
      b_val := b_val || storagelab_internal.bigint_migration_guard_value(
                          storagelab_internal.bigint_migration_unmask(mask, lit_at, lit_txt, cond[id], k - 1, false), rel);
      cond[id] := 0;
    ELSIF id > 0 AND w IN ('elsif', 'elseif', 'else', 'end if') THEN
      IF cur[id] > 0 THEN
        b_to[cur[id]] := k - 1;
      END IF;
      IF w = 'else' THEN
        b_if := b_if || id; b_from := b_from || pos; b_to := b_to || 0; b_val := b_val || NULL::boolean;
        cur[id] := cardinality(b_if);
      ELSIF w = 'end if' THEN
        ifs := ifs[1:cardinality(ifs) - 1];
      ELSE
        cond[id] := pos;
      END IF;
    ELSIF (w = 'end if' AND id = 0) OR (w IN ('end', 'end case', 'end loop') AND id > 0) THEN
      RETURN mask;   -- not the structure expected: nothing blanked
    END IF;
  END LOOP;
  -- a branch runs unless its condition is false or an earlier one is true
  FOR id IN 1 .. n_if LOOP
    seen_true := false;
    FOR i IN 1 .. coalesce(cardinality(b_if), 0) LOOP
      CONTINUE WHEN b_if[i] <> id;
      IF b_to[i] > b_from[i] AND (seen_true OR b_val[i] IS FALSE) THEN
        mask := overlay(mask PLACING regexp_replace(substr(mask, b_from[i], b_to[i] - b_from[i] + 1), '[^\n]', ' ', 'g')
                        FROM b_from[i] FOR b_to[i] - b_from[i] + 1);
      END IF;
      seen_true := seen_true OR b_val[i] IS TRUE;
    END LOOP;
  END LOOP;
  RETURN mask;
END
$fn$;

-- The dynamic SQL of a source in tokens form (bigint_migration_unmask; the
-- literals' texts in lit_txt): EXECUTE, RETURN QUERY EXECUTE (kind 'query'),
-- OPEN ... FOR EXECUTE, with the query as far as it can be read: literals,
-- concatenated (||) with other expressions, format() with a literal format
-- (%s, %I, %L filled in from literal arguments), quote_ident of a literal.
-- What cannot be read is a hole, " ?? "; readable: some part is a literal.
-- targets: the INTO targets; using_args: the USING expressions ($1, ...).
CREATE FUNCTION storagelab_internal.bigint_migration_dynamic(tok text, lit_txt text[])
RETURNS TABLE (stmt int, kind text, query text, readable boolean, targets text[], using_args text[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  st    text;
  m     text[];
  rest  text;
  expr  text;
  p_in  int;
  p_us  int;
  part  text;
  args  text[];
  fmt   text;
  i     int;
  a     int;
BEGIN
  lit_txt := ARRAY(SELECT lower(x) FROM unnest(lit_txt) x);   -- read as the rest of the source, in lower case
  stmt := 0;
  FOREACH st IN ARRAY string_to_array(tok, ';') LOOP
    stmt := stmt + 1;
    CONTINUE WHEN st !~ '\mexecute\M';
    st := regexp_replace(st, '\s+', ' ', 'g');
    m := regexp_match(st, '(^|[^a-z0-9_$.])(return query execute|execute|open [a-z_][a-z0-9_$]* (?:no )?(?:scroll )?(?:for|is) execute) (.*)$');
    CONTINUE WHEN m IS NULL OR m[3] ~ '^(function|procedure)\M';
    kind := CASE WHEN m[2] = 'return query execute' THEN 'query' ELSE 'exec' END;
    rest := ' ' || btrim(m[3]) || ' ';
    p_in := strpos(rest, ' into '); p_us := strpos(rest, ' using ');
    expr := btrim(left(rest, least(nullif(p_in, 0), nullif(p_us, 0), length(rest))));
    targets := CASE WHEN p_in > 0 THEN storagelab_internal.bigint_migration_split(regexp_replace(
                 substr(rest, p_in + 6, CASE WHEN p_us > p_in THEN p_us - p_in - 6 ELSE length(rest) END), '^\s*strict\s+', '')) END;
    using_args := CASE WHEN p_us > 0 THEN storagelab_internal.bigint_migration_split(
                    substr(rest, p_us + 7, CASE WHEN p_in > p_us THEN p_in - p_us - 7 ELSE length(rest) END)) END;
    query := ''; readable := false;
    FOREACH part IN ARRAY storagelab_internal.bigint_migration_split(regexp_replace(expr, '\s*\|\|\s*', ' || ', 'g'), ' || ') LOOP
      IF part ~ '^''@[0-9]+''$' THEN
        query := query || lit_txt[substring(part FROM '[0-9]+')::int]; readable := true;
      ELSIF part ~ '^format ?\(.*\)$' THEN
        args := storagelab_internal.bigint_migration_split(substring(part FROM '^format ?\((.*)\)$'));
        IF args[1] !~ '^''@[0-9]+''$' THEN
          query := query || ' ?? '; CONTINUE;
        END IF;
        fmt := lit_txt[substring(args[1] FROM '[0-9]+')::int]; readable := true;
        i := 1; a := 1;
        WHILE i <= length(fmt) LOOP
          m := regexp_match(substr(fmt, i, 20), '^%(?:([0-9]+)\$)?(-?[0-9]*)([sil%])');
          IF substr(fmt, i, 1) <> '%' OR m IS NULL THEN
            query := query || substr(fmt, i, 1); i := i + 1; CONTINUE;
          END IF;
          i := i + length(substring(substr(fmt, i, 20) FROM '^%(?:[0-9]+\$)?-?[0-9]*[sil%]'));
          IF m[3] = '%' THEN
            query := query || '%'; CONTINUE;
          END IF;
          a := coalesce(m[1]::int, a);
          part := args[a + 1]; a := a + 1;
          query := query || CASE WHEN part ~ '^''@[0-9]+''$' THEN
                                   CASE WHEN m[3] = 'l' THEN quote_literal(lit_txt[substring(part FROM '[0-9]+')::int])
                                        ELSE lit_txt[substring(part FROM '[0-9]+')::int] END
                                 ELSE ' ?? ' END;
        END LOOP;
      ELSIF part ~ '^quote_ident ?\(''@[0-9]+''\)$' THEN
        query := query || lit_txt[substring(part FROM '[0-9]+')::int];
      ELSE
        query := query || ' ?? ';
      END IF;
    END LOOP;
    query := btrim(regexp_replace(query, '\s+', ' ', 'g'));
    RETURN NEXT;
  END LOOP;
END
$fn$;

-- Hazards in the dynamic SQL of one function.  The value in a query: a
-- converted column of a converted table the query names (col, alias.col),
-- or $n when USING expression n carries it.  A readable query without holes
-- is read as static SQL (calls, writes); its select list at the position of
-- an integer INTO target or, for RETURN QUERY EXECUTE, of an integer result
-- column decides (the value: past 2^31; RETURN QUERY at once, 42804).  Where
-- the reading cannot decide (a hole in the select or FROM list, SELECT *, no
-- literal at all) the target is listed with hazard_fails 'unknown'.
CREATE FUNCTION storagelab_internal.bigint_migration_dynamic_hazards(fn oid, tok text, lit_txt text[], carrier text, caller text, via text,
                                                                    objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  d     record;
  t     record;
  cols  text;
  anyc  text := (SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') FROM storagelab_internal.bigint_migration_converted(objs) c);
  qcar  text;
  items text[];
  cls   text;
  fails text;
  o     storagelab.bigint_migration_object;
BEGIN
  FOR d IN SELECT * FROM storagelab_internal.bigint_migration_dynamic(tok, lit_txt) LOOP
    SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') INTO cols
      FROM storagelab_internal.bigint_migration_converted(objs) c JOIN pg_class r ON r.oid = c.relid
     WHERE d.query ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(r.relname) || '($|[^a-z0-9_$])');
    qcar := concat_ws('|', '([a-z_][a-z0-9_$]*\.)?(' || cols || ')',
                      (SELECT string_agg('\$' || u.n, '|') FROM unnest(d.using_args) WITH ORDINALITY AS u(a, n)
                        WHERE carrier IS NOT NULL
                          AND storagelab_internal.bigint_migration_arg_class(regexp_replace(u.a, '[\s"]+', '', 'g'), carrier) IN ('bigint', 'bigint[]')));
    IF qcar <> '' AND d.readable AND d.query !~ '\?\?' THEN
      RETURN QUERY SELECT * FROM storagelab_internal.bigint_migration_call_hazards(d.query, qcar, NULL, caller, via || ' in dynamic SQL');
      RETURN QUERY SELECT * FROM storagelab_internal.bigint_migration_write_hazards(fn, d.query, qcar, NULL, caller, via || ' in dynamic SQL', objs);
    END IF;
    items := storagelab_internal.bigint_migration_split(coalesce(
               (regexp_match(d.query, '^(?:with\M.*?\) )?select (?:distinct |all )?(.*?)( (from|where|group|order|limit|union|except|intersect)\M.*)?$'))[1],
               (regexp_match(d.query, '\mreturning (.*)$'))[1], ''));
    FOR t IN
      -- the integer targets: result columns of RETURN QUERY EXECUTE, INTO variables and OUT parameters
      SELECT c.pos, CASE WHEN c.name = '' AND c.pos = 1 AND NOT EXISTS (SELECT 1 FROM pg_proc p WHERE p.oid = fn AND p.proallargtypes IS NOT NULL)
                         THEN format('return type %s', format_type(c.typ, NULL))
                         ELSE format('result column %s%s (%s)', c.pos, coalesce(' ' || quote_ident(nullif(c.name, '')), ''), format_type(c.typ, NULL)) END AS target,
             c.typ IN ('int2[]'::regtype, 'int4[]'::regtype) AS arr
        FROM storagelab_internal.function_result_columns(fn) c
       WHERE d.kind = 'query' AND c.typ IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
      UNION ALL
      SELECT u.n::int, format('%s %s (%s)', v.what, u.x, v.typ), v.typ LIKE '%[]'
        FROM unnest(d.targets) WITH ORDINALITY AS u(x, n)
        JOIN storagelab_internal.bigint_migration_int_variables(fn, tok) v ON v.name = u.x
       WHERE d.kind = 'exec'
       ORDER BY 1
    LOOP
      cls := CASE WHEN qcar <> '' AND items[t.pos] IS NOT NULL THEN storagelab_internal.bigint_migration_arg_class(regexp_replace(regexp_replace(items[t.pos], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g'), qcar) END;
      fails := CASE
        WHEN NOT d.readable OR items[t.pos] IS NULL OR items[t.pos] ~ '\?\?|(^|\.)\*$' THEN
          CASE WHEN NOT d.readable OR cols IS NOT NULL OR d.query ~ '\?\?' OR qcar <> '' THEN 'unknown' END
        WHEN cls IN ('bigint', 'bigint[]') AND (cls = 'bigint[]') = t.arr THEN CASE WHEN d.kind = 'query' THEN 'immediately' ELSE 'past 2^31' END
        WHEN cls = 'cast' THEN 'past 2^31'
        WHEN (regexp_match(d.query, '\mfrom\M(.*?)(\m(where|group|order|limit|union|except|intersect|window)\M|$)'))[1] ~ '\?\?' AND anyc IS NOT NULL
             AND regexp_replace(items[t.pos], '[\s"]+', '', 'g') ~ ('^([a-z_][a-z0-9_$]*\.)?(' || anyc || ')$') THEN 'unknown' END;
      CONTINUE WHEN fails IS NULL;
      o := storagelab_internal.bigint_migration_hazard_row(fn, 0, t.target, caller, CASE WHEN fails = 'unknown' THEN 'past 2^31' ELSE fails END,
             via || CASE WHEN d.kind = 'query' THEN ' through RETURN QUERY EXECUTE' ELSE ' through EXECUTE ... INTO' END);
      IF d.kind = 'query' AND fails <> 'past 2^31' THEN
        o.sqlstate := '42804';
        o.handling := format('returns %s from %s in RETURN QUERY EXECUTE where the function declares %s: every call fails at once (structure of query does not match function result type)',
                             via, caller, regexp_replace(t.target, '^.*\((.*)\)$|^return type ', ''));
        o.hint := 'function_hazards => ''widen'' declares it bigint (its callers then receive bigint); or cast the value in the query';
      END IF;
      IF fails = 'unknown' THEN
        o.hazard_fails := 'unknown';
        o.handling := format('may receive %s from %s through dynamic SQL that storagelab cannot read (%s): listed as unknown, and refused by default',
                             via, caller, coalesce(nullif(d.query, ''), 'a query built at run time'));
        o.hint := CASE WHEN d.kind = 'query'
                       THEN 'check the query: if it returns the converted column here, declare the result column bigint by hand; then generate the script with function_hazards => ''accept'''
                       ELSE 'check the query; function_hazards => ''widen'' declares the target bigint, ''accept'' leaves it as it is' END;
      END IF;
      RETURN NEXT o;
    END LOOP;
  END LOOP;
END
$fn$;

-- What widening does about one hazard row: 'parameter N', 'variable v',
-- 'OUT parameter p', 'result column N' (an OUT or RETURNS TABLE column),
-- 'return type'; NULL when it cannot: a function storagelab does not
-- re-create, a cast in the caller, a column of another table, a variable
-- passed where only smallint/integer is taken, a result that a PL/pgSQL
-- RETURN QUERY casts, a composite type's attribute, or a result dynamic SQL
-- may or may not fill (widening could break the function as surely).
CREATE FUNCTION storagelab_internal.bigint_migration_widen_spec(h storagelab.bigint_migration_object)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE
    WHEN NOT storagelab_internal.bigint_migration_widenable(h.objid) THEN NULL
    WHEN h.hazard_target ~ '^parameter [0-9]+' AND h.hazard_fails = 'immediately' THEN substring(h.hazard_target FROM '^parameter [0-9]+')
    WHEN h.hazard_target ~ '^variable ' AND (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = h.objid) = 'plpgsql'
         -- not when the variable is passed to a function that takes only smallint/integer (or arrays) there:
         -- widened, it would break that call at once
         AND NOT EXISTS (
           SELECT 1 FROM storagelab_internal.bigint_migration_calls(storagelab_internal.bigint_migration_scrub((SELECT prosrc FROM pg_proc WHERE oid = h.objid))) c
            WHERE c.arg = substring(h.hazard_target FROM '^variable ([^ ]+)')
              AND EXISTS (SELECT 1 FROM pg_proc f WHERE f.proname = split_part(c.fname, '.', -1) AND f.pronargs >= c.nargs
                             AND f.proargtypes[c.argno - 1] IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype))
              AND NOT EXISTS (SELECT 1 FROM pg_proc f WHERE f.proname = split_part(c.fname, '.', -1) AND f.pronargs >= c.nargs
                                 AND storagelab_internal.type_change_accepts(f.proargtypes[c.argno - 1], 'int8'::regtype, h.hazard_target LIKE '%[])')))
      THEN substring(h.hazard_target FROM '^variable [^ ]+')
    WHEN h.hazard_target ~ '^OUT parameter ' THEN substring(h.hazard_target FROM '^OUT parameter [^ ]+')
    WHEN h.hazard_fails = 'unknown' THEN NULL
    -- a PL/pgSQL RETURN QUERY that casts the value: the query's column would no longer match a bigint one
    WHEN h.hazard_fails = 'past 2^31' AND h.hazard_target ~ '^(result column|return type) '
         AND (SELECT l.lanname = 'plpgsql' AND p.prosrc ~* '\mreturn\s+query\M' FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = h.objid)
      THEN NULL
    WHEN h.hazard_target ~ '^result column [0-9]+' AND (SELECT p.proallargtypes IS NOT NULL FROM pg_proc p WHERE p.oid = h.objid)
      THEN substring(h.hazard_target FROM '^result column [0-9]+')
    WHEN h.hazard_target ~ '^return type ' THEN 'return type'
  END
$$;

-- A function's source with the declared types of the PL/pgSQL variables
-- named in vars changed from smallint or integer to bigint (an array stays
-- an array), in every DECLARE section; and the variables changed.
CREATE FUNCTION storagelab_internal.bigint_migration_widen_variables(src text, vars text[], OUT body text, OUT done text[])
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mask  text := (storagelab_internal.bigint_migration_lex(src)).mask;
  at    int[] := '{}';
  len   int[] := '{}';
  pos   int := 1;
  k     int;
  e     int;
  j     int;
  n     int;
  v     text;
  pat   text;
BEGIN
  body := src; done := '{}';
  LOOP
    k := regexp_instr(mask, '\mdeclare\M', pos);
    EXIT WHEN k = 0;
    e := regexp_instr(mask, '\mbegin\M', k);
    EXIT WHEN e = 0;
    FOREACH v IN ARRAY vars LOOP
      pat := '(^|[;\s])' || storagelab_internal.bigint_migration_re(v) || '\s+(constant\s+)?(integer|int4|int|smallint|int2)\M';
      n := 1;
      LOOP
        j := regexp_instr(mask, pat, k, n, 0, '', 3);
        EXIT WHEN j = 0 OR j > e;
        at := at || j; len := len || length(regexp_substr(mask, pat, k, n, '', 3));
        done := done || v; n := n + 1;
      END LOOP;
    END LOOP;
    pos := e;
  END LOOP;
  -- from the last to the first, so that positions stay true
  FOR k IN SELECT u.i FROM unnest(at) WITH ORDINALITY AS u(a, i) ORDER BY u.a DESC LOOP
    body := overlay(body PLACING 'bigint' FROM at[k] FOR len[k]);
  END LOOP;
  done := ARRAY(SELECT DISTINCT x FROM unnest(done) x ORDER BY 1);
END
$fn$;

-- A result or argument declaration (from pg_get_function_arguments or a
-- RETURNS TABLE list) with its smallint/integer type made bigint when its
-- name (lower case, unquoted) is in names.
CREATE FUNCTION storagelab_internal.bigint_migration_widen_decl(decl text, names text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN lower(btrim((regexp_match($1, '^(?:OUT |INOUT |VARIADIC )?("(?:[^"]|"")*"|[^ ]+) '))[1], '"')) = ANY ($2)
              THEN regexp_replace($1, '\m(integer|smallint)(\[\])?( DEFAULT .*)?$', 'bigint\2\3')
              ELSE $1 END
$$;

-- The row that widens one function under function_hazards => 'widen': its
-- targets (bigint_migration_widen_spec) made bigint (an array stays an
-- array); body, options, owner, privileges and comment otherwise the same.
-- hazard_target: the new signature; hazard_caller: the targets it widens
-- (one not found is left out: "left as is" in the header).  Only variables
-- changed: CREATE OR REPLACE (drop_sql NULL); else DROP and CREATE, and
-- what depends on the function that the model does not re-create is its
-- blocker (2BP01).
CREATE FUNCTION storagelab_internal.bigint_migration_widened_row(fn oid, targets text[], objs storagelab.bigint_migration_object[])
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  p       record;
  args    text[];
  names   text[];            -- OUT and RETURNS TABLE columns to widen, by name
  w_pos   int[];             -- input positions widened
  res     text;
  head    text;
  def     text;
  tag     text;
  wv      record;
  done    text[];
  newsig  text;
  deps    text;
  kw      text;
BEGIN
  SELECT f.proname, f.prokind, f.proowner, f.proacl, f.proargtypes::oid[] AS types, f.prosrc, n.nspname,
         pg_get_function_arguments(f.oid) AS fargs, pg_get_function_result(f.oid) AS fres, obj_description(f.oid, 'pg_proc') AS descr INTO p
    FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace WHERE f.oid = fn;
  kw := CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END;
  names := ARRAY(SELECT lower(substr(t, 15)) FROM unnest(targets) t WHERE t LIKE 'OUT parameter %'
                 UNION SELECT lower(c.name) FROM storagelab_internal.function_result_columns(fn) c
                        WHERE 'result column ' || c.pos = ANY (targets) AND c.name <> '');
  -- the arguments, those to widen made bigint; w_pos: the input positions widened
  SELECT coalesce(array_agg(u.a ORDER BY u.n), '{}'), coalesce(array_agg(u.pos ORDER BY u.n) FILTER (WHERE u.a <> u.x AND u.x !~ '^OUT '), '{}')
    INTO args, w_pos
    FROM (SELECT v.x, v.n, v.pos,
                 CASE WHEN 'parameter ' || v.pos = ANY (targets) AND v.x !~ '^OUT '
                      THEN regexp_replace(v.x, '\m(integer|smallint)(\[\])?( DEFAULT .*)?$', 'bigint\2\3')
                      ELSE storagelab_internal.bigint_migration_widen_decl(v.x, names) END AS a
            FROM (SELECT w.x, w.n, (count(*) FILTER (WHERE w.x !~ '^OUT ') OVER (ORDER BY w.n))::int AS pos
                    FROM unnest(storagelab_internal.bigint_migration_split(p.fargs)) WITH ORDINALITY AS w(x, n)) v) u;
  res := p.fres;
  IF res ~ '^TABLE\(.*\)$' THEN
    res := 'TABLE(' || (SELECT string_agg(storagelab_internal.bigint_migration_widen_decl(d, names), ', ' ORDER BY k)
                          FROM unnest(storagelab_internal.bigint_migration_split(substring(res FROM '^TABLE\((.*)\)$'))) WITH ORDINALITY AS u(d, k)) || ')';
  ELSIF 'return type' = ANY (targets) THEN
    res := regexp_replace(res, '^(SETOF )?(integer|smallint)(\[\])?$', '\1bigint\3');
  END IF;
  SELECT * INTO wv FROM storagelab_internal.bigint_migration_widen_variables(p.prosrc,
           ARRAY(SELECT substr(t, 10) FROM unnest(targets) t WHERE t LIKE 'variable %'));
  done := ARRAY(SELECT t FROM unnest(targets) t
                 WHERE (t LIKE 'parameter %' AND substr(t, 11)::int = ANY (w_pos))
                    OR (t LIKE 'variable %' AND substr(t, 10) = ANY (wv.done))
                    OR (t LIKE 'OUT parameter %' OR t LIKE 'result column %') AND (array_to_string(args, ', ') <> p.fargs OR res <> p.fres)
                    OR (t = 'return type' AND res <> p.fres)
                 ORDER BY 1);
  newsig := format('%I.%I(%s)', p.nspname, p.proname,
                   (SELECT string_agg(CASE WHEN u.ord = ANY (w_pos) AND u.t IN ('int2'::regtype, 'int4'::regtype) THEN 'bigint'
                                           WHEN u.ord = ANY (w_pos) THEN 'bigint[]'
                                           ELSE format_type(u.t, NULL) END, ', ' ORDER BY u.ord)
                      FROM unnest(p.types) WITH ORDINALITY AS u(t, ord)));
  def := rtrim(pg_get_functiondef(fn), E'\n');
  head := format('CREATE OR REPLACE %s %I.%I(%s)', kw, p.nspname, p.proname, p.fargs)
          || CASE WHEN p.prokind = 'p' THEN '' ELSE E'\n RETURNS ' || p.fres END;
  tag := substring(def FROM '(\$function(x*)\$)$');

  o.kind := 'widened_function'; o.depth := 0;
  o.classid := 'pg_proc'::regclass; o.objid := fn; o.objsubid := 0;
  o.identity := format('%s %s', lower(kw), fn::regprocedure);
  o.hazard_target := newsig;
  o.hazard_caller := array_to_string(done, ', ');
  o.lock := 'ACCESS EXCLUSIVE on the function object';
  o.check_sql := format('to_regprocedure(%L) IS NOT NULL', newsig);
  IF left(def, length(head)) <> head OR tag IS NULL OR right(def, length(p.prosrc) + length(tag)) <> p.prosrc || tag THEN
    o.blocker := format('the definition of %s does not have the expected form (%s ... AS %s)', fn::regprocedure, head, coalesce(tag, '$function$'));
    o.sqlstate := 'XX000';
    RETURN o;
  END IF;
  def := format('CREATE %s %I.%I(%s)', kw, p.nspname, p.proname, array_to_string(args, ', '))
         || CASE WHEN p.prokind = 'p' THEN '' ELSE E'\n RETURNS ' || res END
         || substr(def, length(head) + 1, length(def) - length(head) - length(p.prosrc) - length(tag))
         || wv.body || tag;
  IF array_to_string(args, ', ') = p.fargs AND res = p.fres THEN
    -- the same signature and result: replaced in place, owner, privileges and comment kept
    o.handling := format('with function_hazards => ''widen'': replaced (CREATE OR REPLACE), same signature, with bigint for %s', o.hazard_caller);
    o.create_sql := regexp_replace(def, '^CREATE ', 'CREATE OR REPLACE ') || E';\n';
    RETURN o;
  END IF;
  o.handling := format('with function_hazards => ''widen'': dropped and created again as %s, with bigint for %s; same body otherwise, options, owner, privileges and comment',
                       newsig, o.hazard_caller);
  o.drop_sql := format(E'DROP %s %s;\n', kw, fn::regprocedure);
  o.create_sql := def || E';\n'
                  || format(E'ALTER ROUTINE %s OWNER TO %I;\n', newsig, pg_get_userbyid(p.proowner))
                  || storagelab_internal.sql_acl('ROUTINE', newsig, p.proacl, p.proowner)
                  || CASE WHEN p.descr IS NULL THEN '' ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', newsig, p.descr) END;
  -- newsig separates its arguments with ', ', regprocedure's text with ','
  IF replace(newsig, ', ', ',') <> fn::regprocedure::text THEN
    o.check_sql := format('to_regprocedure(%L) IS NOT NULL AND to_regprocedure(%L) IS NULL', newsig, fn::regprocedure::text);
  END IF;
  -- what depends on the function must be re-created around it: the views
  -- and functions of the model are (dropped before it, created after it);
  -- anything else blocks the widening
  SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), '; ') INTO deps
    FROM pg_depend d
   WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = fn AND d.deptype = 'n'
     AND NOT EXISTS (SELECT 1 FROM unnest(objs) x
                      WHERE x.drop_sql IS NOT NULL
                        AND ((d.classid = 'pg_rewrite'::regclass AND x.kind IN ('view', 'materialized_view')
                              AND x.objid = (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = d.objid))
                             OR (d.classid = 'pg_proc'::regclass AND x.kind = 'function' AND x.objid = d.objid)));
  IF deps IS NOT NULL THEN
    o.blocker := format('%s cannot be widened: %s depend(s) on it and storagelab does not re-create them', fn::regprocedure, deps);
    o.sqlstate := '2BP01';
  END IF;
  RETURN o;
END
$fn$;

-- Where the hazard reading of a model starts, one row per function or view
-- and way the value arrives:
--   PL/pgSQL trigger functions of the converted tables: NEW.col, OLD.col
--     (rel: the trigger's table, whose name decides guards on TG_TABLE_NAME;
--     NULL for a partitioned table, whose partitions fire the trigger);
--   PL/pgSQL and SQL functions whose code names a converted table: col or
--     alias.col in a statement naming it (not NEW.col / OLD.col);
--   PL/pgSQL functions naming one only in a string: src '', only their
--     EXECUTE statements are read;
--   the views of the model.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_entries(objs storagelab.bigint_migration_object[])
RETURNS TABLE (fn oid, src text, car text, filter text, caller text, via text, rel oid)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted($1)),
  tabs AS (
    SELECT c.relid, '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k.relname) || '($|[^a-z0-9_$])' AS rel_re,
           string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) AS cols,
           string_agg(format('%s.%I', storagelab_internal.sql_qname(c.relid), c.attname), ', ' ORDER BY c.attname) AS via
      FROM conv c JOIN pg_class k ON k.oid = c.relid GROUP BY c.relid, k.relname),
  funcs AS MATERIALIZED (   -- each source scrubbed once
    SELECT p.oid, p.prorettype = 'trigger'::regtype AS trig, l.lanname, lower(p.prosrc) AS raw,
           storagelab_internal.bigint_migration_scrub(p.prosrc) AS src
      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
       AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
  SELECT * FROM (
    SELECT t.tgfoid, NULL::text, '(new|old)\.(' || b.cols || ')', NULL::text,
           format('trigger %I on %s', t.tgname, storagelab_internal.sql_qname(t.tgrelid)),
           (SELECT string_agg(format('NEW.%I', c.attname), ', ' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid),
           CASE WHEN k.relkind <> 'p' THEN t.tgrelid END
      FROM pg_trigger t JOIN tabs b ON b.relid = t.tgrelid JOIN pg_class k ON k.oid = t.tgrelid
      JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
     WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
    UNION ALL
    SELECT f.oid, f.src,
           CASE WHEN f.trig THEN '((?!(?:new|old)\.)[a-z_][a-z0-9_$]*\.)?(' ELSE '([a-z_][a-z0-9_$]*\.)?(' END || b.cols || ')',
           b.rel_re, format('function %s', f.oid::regprocedure), b.via, NULL::oid
      FROM funcs f JOIN tabs b ON f.src ~ b.rel_re
    UNION ALL
    SELECT f.oid, '', 'x^', NULL, format('function %s', f.oid::regprocedure), min(b.via), NULL
      FROM funcs f JOIN tabs b ON f.raw ~ b.rel_re
     WHERE f.lanname = 'plpgsql' AND f.raw ~ '\mexecute\M'
       AND NOT EXISTS (SELECT 1 FROM tabs b2 WHERE f.src ~ b2.rel_re)
     GROUP BY f.oid
    UNION ALL
    SELECT NULL, storagelab_internal.bigint_migration_scrub(pg_get_viewdef(x.objid)), '([a-z_][a-z0-9_$]*\.)?(' || t.cols || ')', NULL, x.identity, t.via, NULL
      FROM unnest($1) x
      JOIN LATERAL (SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') AS cols,
                           string_agg(DISTINCT format('%s.%I', storagelab_internal.sql_qname(c.relid), c.attname), ', ') AS via
                      FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                      JOIN conv c ON c.relid = d.refobjid AND c.attname = (SELECT attname FROM pg_attribute WHERE attrelid = d.refobjid AND attnum = d.refobjsubid)
                     WHERE w.ev_class = x.objid) t ON t.cols IS NOT NULL
     WHERE x.kind IN ('view', 'materialized_view')) e(fn, src, car, filter, caller, via, rel)
  ORDER BY e.caller, e.fn, e.via COLLATE "C"   -- via: a function naming two converted tables has an entry for each
$$;

-- Every function hazard of a migration, given the rest of its model: from
-- the entries above, the calls, values and writes of each source, its
-- dynamic SQL, variables declared table.col%TYPE of a converted column; a
-- function that would be widened passes its parameter on (up to 8 levels).
-- Then one widened_function row per function widening can change; one whose
-- widening is blocked is left as is when no hazard fails at once or is unknown.
CREATE FUNCTION storagelab_internal.bigint_migration_function_hazards(objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  res      storagelab.bigint_migration_object[] := '{}';
  h        storagelab.bigint_migration_object;
  e        record;
  lx       record;
  q_fn     oid[] := '{}';   -- work: function (NULL for a view),
  q_src    text[] := '{}';  --   scrubbed text,
  q_car    text[] := '{}';  --   carrier expression,
  q_filter text[] := '{}';  --   statement filter,
  q_caller text[] := '{}';  --   who hands the value over,
  q_via    text[] := '{}';  --   what the value is,
  q_rel    oid[] := '{}';   --   the trigger's table,
  q_var    boolean[] := '{}';  -- the value carried by a variable: only its writes are read
  q_lvl    int[] := '{}';
  seen     text[] := '{}';
  tok      text;
  lits     text[];
  i        int := 0;
BEGIN
  FOR e IN SELECT * FROM storagelab_internal.bigint_migration_hazard_entries(objs) LOOP
    q_fn := q_fn || e.fn; q_src := q_src || e.src; q_car := q_car || e.car; q_filter := q_filter || e.filter;
    q_caller := q_caller || e.caller; q_via := q_via || e.via; q_rel := q_rel || e.rel; q_lvl := q_lvl || 0; q_var := q_var || false;
  END LOOP;
  WHILE i < cardinality(q_fn) AND i < 10000 LOOP
    i := i + 1;
    tok := NULL; lits := NULL;
    IF q_fn[i] IS NOT NULL
       AND (SELECT p.prosrc ~* '\mexecute\M|\mtg_(table_name|table_schema|relid)\M' FROM pg_proc p WHERE p.oid = q_fn[i]) THEN
      -- read with literals: the guards on the trigger's table, the dynamic SQL
      SELECT * INTO lx FROM storagelab_internal.bigint_migration_lex((SELECT prosrc FROM pg_proc WHERE oid = q_fn[i]));
      IF q_rel[i] IS NOT NULL THEN
        lx.mask := storagelab_internal.bigint_migration_guard_prune(lx.mask, lx.lit_at, lx.lit_txt, q_rel[i]);
      END IF;
      IF q_src[i] IS NULL THEN
        q_src[i] := regexp_replace(lx.mask, '''[^'']*''', '''''', 'g');
      END IF;
      tok := storagelab_internal.bigint_migration_unmask(lx.mask, lx.lit_at, lx.lit_txt, 1, length(lx.mask), true); lits := lx.lit_txt;
    ELSIF q_src[i] IS NULL THEN
      q_src[i] := storagelab_internal.bigint_migration_scrub((SELECT prosrc FROM pg_proc WHERE oid = q_fn[i]));
    END IF;
    -- PL/pgSQL variables declared table.column%TYPE of a converted column
    -- become bigint with it: they carry the value too
    q_car[i] := q_car[i] || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                        FROM regexp_matches(q_src[i], '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                                       WHERE ('new.' || m[3]) ~ ('^(' || q_car[i] || ')$')), '');
    FOR h IN
      SELECT * FROM storagelab_internal.bigint_migration_call_hazards(q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
       WHERE NOT q_var[i]
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_value_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
       WHERE q_fn[i] IS NOT NULL AND NOT q_var[i]
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_write_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i], objs)
       WHERE q_fn[i] IS NOT NULL
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_dynamic_hazards(q_fn[i], tok, lits, q_car[i], q_caller[i], q_via[i], objs)
       WHERE tok IS NOT NULL AND NOT q_var[i]
    LOOP
      CONTINUE WHEN format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller) = ANY (seen);
      seen := seen || format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller);
      res := res || h;
      -- a widened function passes its (now bigint) parameter on
      IF h.hazard_fails = 'immediately' AND h.objsubid > 0 AND q_lvl[i] < 8 AND storagelab_internal.bigint_migration_widenable(h.objid)
         AND format('%s:%s', h.objid, h.objsubid) <> ALL (seen) THEN
        seen := seen || format('%s:%s', h.objid, h.objsubid);
        q_fn := q_fn || h.objid; q_src := q_src || NULL::text; q_filter := q_filter || NULL::text; q_rel := q_rel || NULL::oid;
        q_car := q_car || (SELECT '(' || coalesce(storagelab_internal.bigint_migration_re(nullif(p.proargnames[h.objsubid], '')) || '|', '')
                                  || '\$' || h.objsubid || ')'
                             FROM pg_proc p WHERE p.oid = h.objid);
        q_caller := q_caller || format('function %s', h.objid::regprocedure);
        q_via := q_via || format('its parameter %s once widened', h.objsubid);
        q_lvl := q_lvl || (q_lvl[i] + 1); q_var := q_var || false;
      END IF;
      -- a variable that receives the value carries it to what the function
      -- writes (past 2^31 whether or not the variable is widened)
      IF h.hazard_target ~ '^variable ' AND h.objid = q_fn[i] AND q_lvl[i] < 8
         AND format('%s:%s', h.objid, h.hazard_target) <> ALL (seen) THEN
        seen := seen || format('%s:%s', h.objid, h.hazard_target);
        q_fn := q_fn || h.objid; q_src := q_src || q_src[i]; q_filter := q_filter || NULL::text; q_rel := q_rel || q_rel[i];
        q_car := q_car || storagelab_internal.bigint_migration_re(substring(h.hazard_target FROM '^variable ([^ ]+)'));
        q_caller := q_caller || q_caller[i];
        q_via := q_via || format('%s through variable %s', q_via[i], substring(h.hazard_target FROM '^variable ([^ ]+)'));
        q_lvl := q_lvl || (q_lvl[i] + 1); q_var := q_var || true;
      END IF;
    END LOOP;
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(res);
  -- one widening row per function with something widening can change
  RETURN QUERY
    SELECT w.*
      FROM (SELECT x.objid, array_agg(DISTINCT s.spec) AS targets,
                   bool_or(x.hazard_fails IN ('immediately', 'unknown')) AS must
              FROM unnest(res) x, LATERAL (SELECT storagelab_internal.bigint_migration_widen_spec(x) AS spec) s
             WHERE s.spec IS NOT NULL
             GROUP BY x.objid) g,
           LATERAL storagelab_internal.bigint_migration_widened_row(g.objid, g.targets, objs) w
     WHERE w.blocker IS NULL OR g.must;
END
$fn$;

-- The model as a script writer uses it under the DBA's choice:
--   refuse: error when a hazard fails at once or is unknown (the default);
--   widen:  keep the widened_function rows; error when a hazard that fails
--           at once or is unknown is not widened (bigint_migration_widen_spec);
--   accept: drop the widened_function rows, leave the functions as they are.
-- The function_hazard rows stay in every case: the script header lists them.
CREATE FUNCTION storagelab_internal.bigint_migration_apply_hazards(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det  text;
  fns  text;      -- functions widening can change
  rets text;      -- functions it cannot
  unk  boolean;   -- some hazard is unknown
BEGIN
  IF function_hazards IS NULL THEN
    RAISE EXCEPTION 'function_hazards must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use function_hazards => ''refuse'' (the default), ''widen'' or ''accept''.';
  ELSIF function_hazards NOT IN ('refuse', 'widen', 'accept') THEN
    RAISE EXCEPTION 'invalid function_hazards "%"', function_hazards USING ERRCODE = 'invalid_parameter_value',
      HINT = 'Valid values are ''refuse'', ''widen'' and ''accept''.';
  END IF;
  SELECT string_agg(x.identity || ' ' || x.handling, E'\n' ORDER BY x.identity, x.hazard_caller),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE w.spec IS NOT NULL),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE w.spec IS NULL),
         bool_or(x.hazard_fails = 'unknown')
    INTO det, fns, rets, unk
    FROM unnest(objs) x, LATERAL (SELECT storagelab_internal.bigint_migration_widen_spec(x) AS spec) w
   WHERE x.kind = 'function_hazard' AND x.hazard_fails IN ('immediately', 'unknown');
  IF function_hazards = 'refuse' AND det IS NOT NULL THEN
    RAISE EXCEPTION '%', CASE WHEN unk THEN 'the migration would or may break functions that receive the converted values (some are unknown: dynamic SQL storagelab cannot read)'
                              ELSE 'the migration would break functions that receive the converted values' END
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = det,
            HINT = concat_ws(' ',
                     CASE WHEN fns IS NOT NULL
                          THEN format('Generate the script with function_hazards => ''widen'' to re-create %s with bigint in the same transaction, '
                                      'or with function_hazards => ''accept'' to change them yourself.', fns) END,
                     CASE WHEN rets IS NOT NULL
                          THEN format('Declare the result columns of %s bigint (or cast the value in the query) by hand, then generate the script again; '
                                      'or generate it with function_hazards => ''accept'' and change them in the same maintenance window.', rets) END,
                     CASE WHEN unk THEN 'Hazards listed as unknown are in dynamic SQL whose query storagelab cannot read: check each one; '
                                        'when none returns the converted value, function_hazards => ''accept'' is safe for them.' END);
  END IF;
  IF function_hazards = 'widen' THEN
    SELECT string_agg(d, E'\n' ORDER BY d) INTO det FROM (
      SELECT x.identity || ' (' || x.hazard_caller || '): '
             || CASE WHEN NOT storagelab_internal.bigint_migration_widenable(x.objid)
                     THEN 'storagelab cannot re-create it (built in, in an extension, not PL/pgSQL or SQL, or with a SQL-standard body)'
                     WHEN x.hazard_fails = 'unknown' THEN 'storagelab cannot tell whether dynamic SQL returns the converted value here, so it cannot tell which type is right'
                     ELSE 'widening cannot change it (a composite type''s attribute, or a value cast in the caller)' END AS d
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails IN ('immediately', 'unknown')
         AND NOT EXISTS (SELECT 1 FROM unnest(objs) w
                          WHERE w.kind = 'widened_function' AND w.objid = x.objid
                            AND storagelab_internal.bigint_migration_widen_spec(x) = ANY (string_to_array(w.hazard_caller, ', ')))
      UNION ALL
      SELECT x.blocker FROM unnest(objs) x WHERE x.kind = 'widened_function' AND x.blocker IS NOT NULL) y;
    IF det IS NOT NULL THEN
      RAISE EXCEPTION 'cannot widen every function that the converted values would or may break'
        USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
              HINT = 'Cast the value in the caller, or change these functions by hand, then generate the script again; '
                     'or generate it with function_hazards => ''accept'' once they are checked.';
    END IF;
    RETURN objs;
  END IF;
  RETURN ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'widened_function');
END
$fn$;

-- Lines for a script header: every hazard and what the script does about
-- it: "widened" only for what the script's widened_function rows change,
-- "left as is" for everything else.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_header(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- Function hazards (function_hazards => %L): functions the converted values reach with a narrower type:\n', $2)
      || coalesce(string_agg('--   ' || storagelab_internal.sql_comment_text(
                    format('%s <- %s: fails %s; %s', x.identity, x.hazard_caller,
                           CASE WHEN x.hazard_fails = 'unknown' THEN 'unknown (dynamic SQL not read)' ELSE x.hazard_fails END,
                           CASE WHEN storagelab_internal.bigint_migration_widen_spec(x) = ANY (string_to_array(w.hazard_caller, ', '))
                                THEN format('widened: %s made bigint in %s', storagelab_internal.bigint_migration_widen_spec(x), w.hazard_target)
                                ELSE 'left as is' END)) || E'\n',
                  '' ORDER BY x.hazard_fails, x.identity, x.hazard_caller), E'--   (none)\n')
      || E'-- (PL/pgSQL functions that use the converted tables are checked with plpgsql_check, when it is installed, before COMMIT)\n'
    FROM unnest($1) x
    LEFT JOIN unnest($1) w ON w.kind = 'widened_function' AND w.objid = x.objid AND w.blocker IS NULL
   WHERE x.kind = 'function_hazard'
$$;

-- The check, CALLed by a script before its change, that the functions it
-- widens (re-creates from their text) are as they were at generation: rows
-- of functions: signature, md5 of pg_get_functiondef, identity; 55000 if not.
CREATE PROCEDURE storagelab_internal.bigint_widen_unchanged(functions text[])
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  PERFORM storagelab_internal.script_check(
    ARRAY(SELECT functions[i][3] || ' is missing or changed' FROM generate_subscripts(functions, 1) i
           WHERE md5(coalesce(pg_get_functiondef(to_regprocedure(functions[i][1])), '')) <> functions[i][2] ORDER BY i),
    'the database changed since this script was generated', 'object_not_in_prerequisite_state',
    'Generate the script again with storagelab.bigint_migration_script().');
END
$fn$;

-- The plpgsql_check comparison, CALLed by a script: rows of functions: key
-- (the signature at generation), the signature to check (the widened one
-- after the change), the trigger's table (NULL for others).  Phase 'before'
-- records plpgsql_check's errors in a temporary table (dropped at COMMIT);
-- 'after' raises 22000, rolling back, on a new one.  Nothing when
-- plpgsql_check is not installed.  Checked with the sessions' default
-- search_path (pg_settings.reset_val), as the application runs them.
CREATE PROCEDURE storagelab_internal.bigint_plpgsql_check(functions text[], phase text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  nsp  name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'plpgsql_check');
  k    text[];
  st   text[];
  msg  text[];
  bad  text;
BEGIN
  IF nsp IS NULL AND phase = 'before' THEN
    RAISE NOTICE 'plpgsql_check is not installed in this database: functions are not checked';
  END IF;
  IF nsp IS NULL OR (phase = 'after' AND to_regclass('pg_temp.storagelab_plpgsql_check_before') IS NULL) THEN
    RETURN;
  END IF;
  -- the functions run with the sessions' default search_path: check them with it
  PERFORM set_config('search_path', (SELECT reset_val FROM pg_settings WHERE name = 'search_path'), true);
  EXECUTE format('SELECT array_agg($1[i][1]), array_agg(c.sqlstate), array_agg(c.message) FROM generate_subscripts($1, 1) i,'
                 ' LATERAL %I.plpgsql_check_function_tb($1[i][2]::regprocedure, coalesce(to_regclass($1[i][3])::oid, 0)::regclass, fatal_errors => false) c'
                 ' WHERE c.level = ''error''', nsp)
    INTO k, st, msg USING functions;
  PERFORM set_config('search_path', 'pg_catalog, pg_temp', true);
  IF phase = 'before' THEN
    CREATE TEMP TABLE storagelab_plpgsql_check_before ON COMMIT DROP AS
      SELECT * FROM unnest(k, st, msg) AS b(k, sqlstate, message);
    RETURN;
  END IF;
  SELECT string_agg(a.k || ': ' || a.message, '; ' ORDER BY a.k, a.message) INTO bad
    FROM unnest(k, st, msg) AS a(k, sqlstate, message)
   WHERE NOT EXISTS (SELECT 1 FROM pg_temp.storagelab_plpgsql_check_before b
                      WHERE b.k = a.k AND b.sqlstate IS NOT DISTINCT FROM a.sqlstate AND b.message = a.message);
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'plpgsql_check finds new errors in functions that use the converted columns; rolling back'
      USING ERRCODE = 'data_exception', DETAIL = bad,
            HINT = 'Nothing was changed.  Generate the script with function_hazards => ''widen'', or fix these functions first.';
  END IF;
END
$fn$;

-- The CALLs of the checks above for a script: in phase 'before', of
-- bigint_widen_unchanged for the functions to widen; in both phases, of
-- bigint_plpgsql_check for every PL/pgSQL function that uses the converted
-- tables (trigger functions with their table, the functions of the hazard
-- rows, functions naming a converted table).
CREATE FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(objs storagelab.bigint_migration_object[], phase text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  fns  text[];
  pre  text;
BEGIN
  WITH conv AS (
    SELECT DISTINCT x.relation AS relid, k.relname
      FROM unnest(objs) x JOIN pg_class k ON k.oid = x.relation WHERE x.kind = 'column'),
  fns AS (
    SELECT t.tgfoid AS fn, storagelab_internal.sql_qname(t.tgrelid) AS rel
      FROM pg_trigger t JOIN conv ON conv.relid = t.tgrelid WHERE NOT t.tgisinternal AND t.tgparentid = 0
    UNION
    SELECT x.objid, NULL FROM unnest(objs) x WHERE x.kind IN ('function_hazard', 'widened_function')
    UNION
    SELECT p.oid, NULL FROM pg_proc p, conv
     WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql') AND p.prorettype <> 'trigger'::regtype
       AND storagelab_internal.bigint_migration_names(p.prosrc, conv.relname))
  SELECT array_agg(format('[%L, %L, %L]', f.fn::regprocedure::text,
                          CASE WHEN phase = 'after' THEN coalesce(w.hazard_target, f.fn::regprocedure::text) ELSE f.fn::regprocedure::text END,
                          f.rel) ORDER BY f.fn::regprocedure::text, f.rel)
    INTO fns
    FROM fns f JOIN pg_proc p ON p.oid = f.fn JOIN pg_language l ON l.oid = p.prolang
    LEFT JOIN unnest(objs) w ON w.kind = 'widened_function' AND w.objid = f.fn
   WHERE l.lanname = 'plpgsql' AND (p.prorettype <> 'trigger'::regtype OR f.rel IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = f.fn AND d.deptype = 'e');
  IF phase = 'before' THEN
    SELECT E'-- The functions to widen are unchanged since generation (they are re-created from their text then).\n'
           || 'CALL storagelab_internal.bigint_widen_unchanged(' || storagelab_internal.script_array(
                array_agg(format('[%L, %L, %L]', x.objid::regprocedure, md5(pg_get_functiondef(x.objid)), x.identity) ORDER BY x.identity))
           || E');\n\n'
      INTO pre
      FROM unnest(objs) x WHERE x.kind = 'widened_function' HAVING count(*) > 0;
  END IF;
  RETURN coalesce(pre, '') || CASE WHEN fns IS NULL THEN ''
    ELSE CASE WHEN phase = 'before' THEN E'-- plpgsql_check (when installed): the errors of the functions that use these tables, before the change\n'
              ELSE E'-- plpgsql_check (when installed): no function that uses these tables has an error it did not have before\n' END
         || format(E'CALL storagelab_internal.bigint_plpgsql_check(%s, %L);\n\n', storagelab_internal.script_array(fns), phase) END;
END
$fn$;

COMMENT ON FUNCTION storagelab_internal.bigint_migration_scrub(text) IS
  'function or view source with comments and string literals blanked out, lower case';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_calls(text) IS
  'every call name(arg, ...) in a scrubbed source: name, argument count, position and text of each argument, statement number';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_arg_class(text, text) IS
  'whether a call argument carries the converted value: bigint, bigint[], cast (to a narrower integer) or NULL';
COMMENT ON FUNCTION storagelab_internal.type_change_accepts(oid, oid, boolean) IS
  'whether a parameter or operand type takes a value of another type (or an array of it) without an explicit cast: same type, polymorphic, implicit cast, domain over it';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widenable(oid) IS
  'whether storagelab may re-create a function with bigint parameters: PL/pgSQL or SQL with a string body, not built in, not in an extension';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_row(oid, int, text, text, text, text) IS
  'one function_hazard row of the INT->BIGINT dependency model';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_callees(text, int, int) IS
  'the functions a call with a given name and number of arguments may resolve to, with the type (and name) of one parameter';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_call_hazards(text, text, text, text, text) IS
  'function hazards in the calls of one source: the converted value passed to a smallint/integer parameter';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_value_hazards(oid, text, text, text, text, text) IS
  'function hazards inside one function: smallint/integer PL/pgSQL variables, OUT parameters, return types and result columns (RETURNS TABLE, composite types, RETURN QUERY) that receive the converted value';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_write_hazards(oid, text, text, text, text, text, storagelab.bigint_migration_object[]) IS
  'function hazards in what one function writes: the converted value inserted or updated into a smallint/integer column of a table outside the migration';
COMMENT ON FUNCTION storagelab_internal.function_result_columns(oid) IS
  'the result columns of a function in order: OUT/INOUT/TABLE parameters, else the attributes of a CREATE TYPE composite return type, else the return type';
COMMENT ON FUNCTION storagelab_internal.return_query_items(text) IS
  'the select-list items of each PL/pgSQL RETURN QUERY SELECT in a scrubbed source, by position';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_split(text, text) IS
  'a list split at its top-level commas or words (and, or, ||), not inside parentheses, brackets or quotes, items trimmed';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_converted(storagelab.bigint_migration_object[]) IS
  'the columns of an INT->BIGINT model that change type (smallint or integer now)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_re(text) IS
  'a word as a regular expression that matches it literally (lower case)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_names(text, text) IS
  'whether a function source names a table: the name as a word outside comments and strings (a raw strpos first, then the scrub)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widened_row(oid, text[], storagelab.bigint_migration_object[]) IS
  'the widened_function row of the INT->BIGINT model: a function re-created with bigint parameters, variables, OUT/RETURNS TABLE columns or return type';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_lex(text) IS
  'a function source position for position: lower case, comments and the inside of string literals blanked; the literals'' texts and starts';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_guard_value(text, oid) IS
  'the value of an IF condition on TG_TABLE_NAME, TG_TABLE_SCHEMA or TG_RELID for a trigger''s table: true, false or NULL (unknown)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_unmask(text, int[], text[], int, int, boolean) IS
  'a range of a lexed source with its literals quoted again, or as tokens ''@k''';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_guard_prune(text, int[], text[], oid) IS
  'a lexed trigger function source with the IF branches that a guard on TG_TABLE_NAME/TG_TABLE_SCHEMA/TG_RELID keeps from running for a table blanked';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dynamic(text, text[]) IS
  'the EXECUTE, RETURN QUERY EXECUTE and OPEN FOR EXECUTE statements of a source: query text as far as it can be read, INTO targets, USING arguments';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_dynamic_hazards(oid, text, text[], text, text, text, storagelab.bigint_migration_object[]) IS
  'function hazards in the dynamic SQL of one function: calls, writes, INTO targets and RETURN QUERY EXECUTE columns; unknown where the query cannot be read';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_int_variables(oid, text) IS
  'the smallint/integer PL/pgSQL variables and OUT parameters of a function';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widen_spec(storagelab.bigint_migration_object) IS
  'what widening changes for one function_hazard row (parameter N, variable v, OUT parameter p, result column N, return type), or NULL';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widen_variables(text, text[]) IS
  'a PL/pgSQL source with the declared types of some smallint/integer variables made bigint';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widen_decl(text, text[]) IS
  'an argument or RETURNS TABLE declaration with its smallint/integer type made bigint when its name is listed';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_entries(storagelab.bigint_migration_object[]) IS
  'where the function hazard reading of an INT->BIGINT model starts: trigger functions, functions naming a converted table (in code or in dynamic SQL), views';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_function_hazards(storagelab.bigint_migration_object[]) IS
  'function_hazard and widened_function rows of an INT->BIGINT migration, given the rest of its model';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_apply_hazards(storagelab.bigint_migration_object[], text) IS
  'the INT->BIGINT model under function_hazards refuse, widen or accept (refuse and unwidenable hazards raise errors)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_header(storagelab.bigint_migration_object[], text) IS
  'script header lines listing the function hazards and what the script does about them';
COMMENT ON PROCEDURE storagelab_internal.bigint_widen_unchanged(text[]) IS
  'the check of a generated script that the functions it widens are unchanged since generation (55000 otherwise)';
COMMENT ON PROCEDURE storagelab_internal.bigint_plpgsql_check(text[], text) IS
  'the plpgsql_check comparison of a generated script: phase before records the errors of the functions using the converted tables, phase after raises 22000 (rolling back) on a new one';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(storagelab.bigint_migration_object[], text) IS
  'the CALLs of a generated script that check that the functions to widen are unchanged and compare the plpgsql_check errors of the functions using the converted tables before and after';

-- ---------------------------------------------------------------------------
-- Any type change, not only INT -> BIGINT: the layout scripts (part 65)
-- retype columns in every direction.  The same reading, the old and new
-- type as parameters.

-- The function hazards of retyping columns of one table.  changes: the
-- layout plan's [{"column_name", "from", "to"}, ...].  Entry points: the
-- PL/pgSQL trigger functions of the table and of its partitions or children
-- (NEW.col, OLD.col), the PL/pgSQL and SQL functions whose statements name
-- the table (col, x.col, variables declared table.col%TYPE).  A hazard
-- (fails at once): the value passed to a function (or an ARRAY[] of it) or
-- compared (=, <>, <, ...) with a parameter or declared variable where a
-- function or operator took the old type and none takes the new (42883),
-- or returned by RETURN QUERY in a column declared the old type (42804).
-- One row per function reading a changed column, hazard NULL when none.
CREATE FUNCTION storagelab_internal.type_change_function_hazards(relation regclass, changes jsonb)
RETURNS TABLE (fn regprocedure, caller text, column_name text, old_type text, new_type text, hazard text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e      jsonb;
  o_t    oid;
  n_t    oid;
  r      record;
  src    text;
  car    text;
  stmts  text[];
  hz     text[];   -- the hazards found in one function
  ops    text := '(=|<>|!=|<=|>=|<|>)';
  opnd   text := '(\$[0-9]+|[a-z_][a-z0-9_$]*)';
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    o_t := to_regtype(e->>'from'); n_t := to_regtype(e->>'to');
    CONTINUE WHEN o_t IS NULL OR n_t IS NULL OR o_t = n_t;
    column_name := e->>'column_name'; old_type := format_type(o_t, NULL); new_type := format_type(n_t, NULL);
    FOR r IN
      -- trigger functions of the table and of its partitions or children
      SELECT DISTINCT t.tgfoid AS f, format('trigger %I on %s', t.tgname, storagelab_internal.sql_qname(t.tgrelid)) AS who,
             '(?:new|old)\.(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')' AS carrier, NULL::text AS filter
        FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
         AND t.tgrelid IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[relation::oid]) m)
      UNION
      -- functions whose statements name the table
      SELECT p.oid, format('function %s', p.oid::regprocedure),
             '(?:[a-z_][a-z0-9_$]*\.)?(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')',
             '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])'
        FROM pg_proc p, pg_class k2
       WHERE k2.oid = relation AND p.prorettype <> 'trigger'::regtype AND storagelab_internal.bigint_migration_widenable(p.oid)
         AND storagelab_internal.bigint_migration_names(p.prosrc, k2.relname)
      ORDER BY 2
    LOOP
      src := storagelab_internal.bigint_migration_scrub((SELECT p.prosrc FROM pg_proc p WHERE p.oid = r.f));
      -- PL/pgSQL variables declared table.column%TYPE of the column carry the value too
      car := r.carrier || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                      FROM regexp_matches(src, '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                                     WHERE m[3] = lower(e->>'column_name')), '');
      stmts := ARRAY(SELECT s FROM unnest(string_to_array(src, ';')) s WHERE r.filter IS NULL OR s ~ r.filter);
      CONTINUE WHEN NOT EXISTS (SELECT 1 FROM unnest(stmts) s WHERE s ~ ('(^|[^a-z0-9_$.])(' || car || ')($|[^a-z0-9_$])'));
      fn := r.f; caller := r.who;
      hz := ARRAY(
        -- calls: a function of that name took the old type there, none takes the new one
        SELECT format('passes %s (%s) as argument %s of %s: no function of that name takes %s%s', column_name,
                      new_type || CASE WHEN k.arr THEN '[]' ELSE '' END, k.argno, v.fn::regprocedure,
                      new_type, CASE WHEN k.arr THEN '[]' ELSE '' END)
          FROM (SELECT DISTINCT c.fname, c.nargs, c.argno, storagelab_internal.bigint_migration_arg_class(c.arg, car) = 'bigint[]' AS arr
                  FROM storagelab_internal.bigint_migration_calls(array_to_string(stmts, ';')) c
                 WHERE storagelab_internal.bigint_migration_arg_class(c.arg, car) IN ('bigint', 'bigint[]')) k,
               storagelab_internal.bigint_migration_callees(k.fname, k.nargs, k.argno) v
         WHERE storagelab_internal.type_change_accepts(v.typ, o_t, k.arr)
           AND NOT EXISTS (SELECT 1 FROM storagelab_internal.bigint_migration_callees(k.fname, k.nargs, k.argno) w
                            WHERE storagelab_internal.type_change_accepts(w.typ, n_t, k.arr))
        UNION ALL
        -- comparisons with a parameter or a declared variable: an operator took the old type, none takes the new
        SELECT format('compares %s (%s) with %s (%s): no operator %s', column_name, new_type, k.other, format_type(k.t, NULL),
                      CASE WHEN k.value_left THEN format('%s %s %s', new_type, k.op, format_type(k.t, NULL))
                           ELSE format('%s %s %s', format_type(k.t, NULL), k.op, new_type) END)
          FROM (WITH params AS (
                  SELECT '$' || u.n AS name, u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n) WHERE p.oid = r.f
                  UNION ALL
                  SELECT lower(p.proargnames[u.n]), u.t FROM pg_proc p, unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n)
                   WHERE p.oid = r.f AND p.proallargtypes IS NULL AND coalesce(p.proargnames[u.n], '') <> ''
                  UNION ALL
                  SELECT d[1], to_regtype(btrim(d[3]))
                    FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
                         unnest(string_to_array(blk.b[1], ';')) AS x(decl),
                         regexp_match(x.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?([a-z_][a-z0-9_ ]*?(\([0-9, ]+\))?)\s*(:=|default\M|not\s+null\M|$)') AS d
                   WHERE to_regtype(btrim(d[3])) IS NOT NULL),
                cmp AS (
                  SELECT m[3] AS op, m[4] AS other, true AS value_left
                    FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])(' || car || ')\s*' || ops || '\s*' || opnd || '($|[^a-z0-9_$.(:])', 'g') m
                  UNION ALL
                  SELECT m[3], m[2], false
                    FROM unnest(stmts) s, regexp_matches(s, '(^|[^a-z0-9_$.])' || opnd || '\s*' || ops || '\s*(' || car || ')($|[^a-z0-9_$.(:])', 'g') m)
                SELECT DISTINCT c.op, c.other, c.value_left, p.t
                  FROM cmp c JOIN params p ON p.name = c.other
                 WHERE c.other !~ ('^(' || car || ')$')) k
         WHERE k.t IS NOT NULL AND ARRAY[false, true] IS NOT DISTINCT FROM ARRAY(
                 SELECT EXISTS (SELECT 1 FROM pg_operator o
                                 WHERE o.oprname = replace(k.op, '!=', '<>')
                                   AND storagelab_internal.type_change_accepts(o.oprleft, CASE WHEN k.value_left THEN x ELSE k.t END, false)
                                   AND storagelab_internal.type_change_accepts(o.oprright, CASE WHEN k.value_left THEN k.t ELSE x END, false))
                   FROM unnest(ARRAY[n_t, o_t]) WITH ORDINALITY AS u(x, i) ORDER BY u.i)
        UNION ALL
        -- RETURN QUERY: each column of the query must have the declared type exactly
        SELECT format('returns %s (%s) in RETURN QUERY as result column %s%s, declared %s: every call fails (structure of query does not match function result type)',
                      column_name, new_type, k.pos, coalesce(' ' || quote_ident(nullif(k.name, '')), ''), old_type)
          FROM (SELECT DISTINCT q.pos, c.name
                  FROM storagelab_internal.return_query_items(array_to_string(stmts, ';')) q
                  JOIN storagelab_internal.function_result_columns(r.f) c ON c.pos = q.pos
                 WHERE q.item ~ ('^\(*(' || car || ')\)*$') AND c.typ = o_t) k);
      -- one row a hazard, or one without when none was found
      RETURN QUERY SELECT fn, caller, column_name, old_type, new_type, h
                     FROM unnest(CASE WHEN cardinality(hz) > 0 THEN hz ELSE ARRAY[NULL::text] END) h;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.type_change_function_hazards(regclass, jsonb) IS
  'functions reading retyped columns of a table (trigger functions with NEW/OLD, functions naming the table), each with the calls and comparisons that no function or operator takes with the new type and the RETURN QUERY columns declared with the old type (fail at once), hazard NULL when none';

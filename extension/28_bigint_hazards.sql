-- storagelab install script, part 28: function hazards of an INT -> BIGINT
-- migration.
--
-- After ALTER COLUMN ... TYPE bigint, the values of the converted columns
-- reach functions that were written for integer: a helper declared
-- f(integer) or f(integer[]) called with NEW.key no longer resolves
-- ("function f(bigint) does not exist": fails at once, with small ids); a
-- PL/pgSQL variable or a return type of integer receiving the key fails
-- with 22003 once the values pass 2^31.  This part finds them by reading the
-- function sources (PL/pgSQL and SQL) and the view definitions, adds one
-- model row of kind function_hazard per finding, and one row of kind
-- widened_function per function the generator can widen; the model (part
-- 21) appends these rows.  The script writers (parts 23 and 25, through
-- part 27) call bigint_migration_apply_hazards() with the DBA's choice
-- (function_hazards => 'refuse' | 'widen' | 'accept') and, when plpgsql_check
-- is installed in the database, compare its errors before and after the
-- change inside the migration's transaction (bigint_migration_plpgsql_check_sql).
--
-- The reading is textual (no PL/pgSQL parser is callable from SQL):
-- doc/bigint_migration.md, "Function hazards", says what it finds and what
-- it misses; the plpgsql_check comparison in the script is the safety net.

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
  i       int;
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

-- Whether a parameter of type typ accepts a value of class cls.
CREATE FUNCTION storagelab_internal.bigint_migration_accepts(typ oid, cls text)
RETURNS boolean
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE $2
    WHEN 'bigint' THEN $1 IN ('int8'::regtype, 'anyelement'::regtype, 'anynonarray'::regtype, 'anycompatible'::regtype,
                              'anycompatiblenonarray'::regtype, '"any"'::regtype)
                       OR EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = 'int8'::regtype AND c.casttarget = $1 AND c.castcontext = 'i')
    WHEN 'bigint[]' THEN $1 IN ('int8[]'::regtype, 'anyarray'::regtype, 'anycompatiblearray'::regtype, 'anyelement'::regtype,
                                'anycompatible'::regtype, '"any"'::regtype)
    ELSE true
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
    o.hint := 'declare it bigint (not done by storagelab: it changes only signatures)';
  END IF;
  RETURN o;
END
$fn$;

-- Hazards in the calls of one source text: an argument that carries the
-- converted value (see bigint_migration_arg_class) passed to a function
-- whose parameter is smallint or integer (or an array of them), when no
-- function of that name takes the bigint value.  stmt_filter, when given,
-- limits the reading to statements that match it (those naming the table).
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
      SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
       WHERE f.proname = split_part(c.fname, '.', -1) AND (c.fname !~ '\.' OR n.nspname = split_part(c.fname, '.', 1))
         AND f.pronargs >= c.nargs AND f.pronargs - f.pronargdefaults <= c.nargs AND f.prokind IN ('f', 'p')
         AND storagelab_internal.bigint_migration_accepts(f.proargtypes[c.argno - 1], c.cls));
    FOR p IN
      SELECT f.oid, f.proargtypes[c.argno - 1] AS t,
             CASE WHEN f.proallargtypes IS NULL THEN f.proargnames[c.argno] END AS pname
        FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
       WHERE f.proname = split_part(c.fname, '.', -1) AND (c.fname !~ '\.' OR n.nspname = split_part(c.fname, '.', 1))
         AND f.pronargs >= c.nargs AND f.pronargs - f.pronargdefaults <= c.nargs AND f.prokind IN ('f', 'p')
         AND f.proargtypes[c.argno - 1] = ANY (CASE WHEN c.cls = 'bigint[]' THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                                    ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
       ORDER BY f.oid
    LOOP
      RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
        p.oid, c.argno,
        format('parameter %s%s (%s)', c.argno, coalesce(' ' || quote_ident(nullif(p.pname, '')), ''), format_type(p.t, NULL)),
        caller, CASE WHEN c.cls = 'cast' THEN 'past 2^31' ELSE 'immediately' END,
        CASE WHEN c.cls = 'cast' THEN via || ' cast to ' || format_type(p.t, NULL) ELSE via || ' as ' || c.cls END);
    END LOOP;
  END LOOP;
END
$fn$;

-- A list split at its top-level commas (not those inside parentheses or
-- brackets), each item trimmed.
CREATE FUNCTION storagelab_internal.bigint_migration_split(list text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  items text[] := '{}';
  piece text := '';
  depth int := 0;
  ch    text;
BEGIN
  FOREACH ch IN ARRAY coalesce(string_to_array(list, NULL), '{}') LOOP
    depth := depth + CASE WHEN ch IN ('(', '[') THEN 1 WHEN ch IN (')', ']') THEN -1 ELSE 0 END;
    IF ch = ',' AND depth = 0 THEN
      items := items || btrim(piece); piece := '';
    ELSE
      piece := piece || ch;
    END IF;
  END LOOP;
  IF btrim(piece) <> '' THEN items := items || btrim(piece); END IF;
  RETURN items;
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

-- Hazards inside one function: PL/pgSQL variables declared smallint or
-- integer (or arrays of them), OUT/INOUT/TABLE parameters among them, that
-- receive the converted value (v := value, or SELECT/RETURNING ... INTO
-- with the value at the variable's position), and result columns of type
-- smallint or integer receiving it: the return type (RETURN value, RETURN
-- NEXT value), a column of RETURNS TABLE, OUT parameters or a composite
-- type (CREATE TYPE ... AS) at the value's position in a PL/pgSQL RETURN
-- QUERY or a SQL function's output.  "The value" is an expression
-- bigint_migration_arg_class recognises.  Assignments fail only past 2^31
-- (the assignment casts); RETURN QUERY fails at once (42804: the query's
-- column type must match the declared one exactly).
CREATE FUNCTION storagelab_internal.bigint_migration_value_hazards(fn oid, src text, carrier text, stmt_filter text, caller text, via text)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  lang   name := (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = fn);
  -- per statement: the variables assigned, and the values at the same positions
  a_var  text[] := '{}';
  a_val  text[] := '{}';
  -- values at result positions: position, value, 'query' (RETURN QUERY) or 'assign'
  r_pos  int[] := '{}';
  r_val  text[] := '{}';
  r_how  text[] := '{}';
  -- the result columns: names and types (one unnamed column for a scalar return type)
  res_name text[];
  res_type oid[];
  st     text;
  m      text[];
  tg     text[];
  it     text[];
  k      int;
  v      record;
  o      storagelab.bigint_migration_object;
BEGIN
  SELECT array_agg(c.name ORDER BY c.pos), array_agg(c.typ ORDER BY c.pos) INTO res_name, res_type
    FROM storagelab_internal.function_result_columns(fn) c;

  FOREACH st IN ARRAY string_to_array(src, ';') LOOP
    CONTINUE WHEN st !~ carrier OR (stmt_filter IS NOT NULL AND st !~ stmt_filter);
    st := regexp_replace(st, '\s+', ' ', 'g');
    m := regexp_match(st, '(^|[^a-z0-9_$.])([a-z_][a-z0-9_$]*)\s*:=\s*(.*)$');
    IF m IS NOT NULL THEN
      a_var := a_var || m[2]; a_val := a_val || regexp_replace(m[3], '[\s"]+', '', 'g');
    END IF;
    -- SELECT items INTO targets [FROM ...], or ... RETURNING items INTO targets
    m := regexp_match(st, '\m(select|returning)\s+(.*?)\s+into\s+(strict\s+)?(.*?)(\s+from\M.*)?$');
    IF m IS NOT NULL THEN
      it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
      tg := storagelab_internal.bigint_migration_split(m[4]);
      FOR k IN 1 .. least(cardinality(it), cardinality(tg)) LOOP
        a_var := a_var || tg[k]; a_val := a_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
      END LOOP;
    END IF;
    -- what a function returns: the items of its output at their positions
    m := NULL;
    IF lang = 'plpgsql' THEN
      m := regexp_match(st, '(^|[^a-z0-9_$.])return\s+(next\s+)?(.*)$');
      IF m IS NOT NULL AND m[3] ~ '^query\M' THEN
        FOR v IN SELECT q.pos, q.item FROM storagelab_internal.return_query_items(st) q ORDER BY q.pos LOOP
          r_pos := r_pos || v.pos; r_val := r_val || v.item; r_how := r_how || 'query'::text;
        END LOOP;
      ELSIF m IS NOT NULL AND btrim(m[3]) <> '' THEN
        r_pos := r_pos || 1; r_how := r_how || 'assign'::text; r_val := r_val || regexp_replace(m[3], '[\s"]+', '', 'g');
      END IF;
    ELSE
      m := regexp_match(st, '\m(select|returning)\s+(.*?)(\s+(from|where|group|order|limit)\M.*)?$');
      IF m IS NOT NULL THEN
        it := storagelab_internal.bigint_migration_split(regexp_replace(m[2], '^(distinct|all)\s+', ''));
        FOR k IN 1 .. cardinality(it) LOOP
          r_pos := r_pos || k; r_how := r_how || 'assign'::text;
          r_val := r_val || regexp_replace(regexp_replace(it[k], '\s+as\s+[a-z_0-9$]+$', ''), '[\s"]+', '', 'g');
        END LOOP;
      END IF;
    END IF;
  END LOOP;

  IF lang = 'plpgsql' THEN
    FOR v IN
      SELECT DISTINCT m1[1] AS name, m1[3] || CASE WHEN m1[4] IS NULL THEN '' ELSE '[]' END AS typ, false AS param
        FROM regexp_matches(src, 'declare(.*?)\mbegin\M', 'g') AS blk(b),
             unnest(string_to_array(blk.b[1], ';')) AS d(decl),
             regexp_match(d.decl, '^\s*([a-z_][a-z0-9_$]*)\s+(constant\s+)?(integer|int4|int|smallint|int2)\s*(\[\s*\])?(\s|$|:|not\M|default\M)') AS m1
      UNION
      -- OUT and INOUT parameters are variables of the function too
      SELECT lower(u.n), format_type(u.t, NULL), true
        FROM unnest(res_name, res_type) AS u(n, t)
       WHERE u.n <> '' AND (SELECT p.proallargtypes IS NOT NULL FROM pg_proc p WHERE p.oid = fn)
         AND u.t IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       ORDER BY 1
    LOOP
      IF EXISTS (SELECT 1 FROM unnest(a_var, a_val) AS a(var, val)
                  WHERE a.var = v.name AND storagelab_internal.bigint_migration_arg_class(a.val, carrier) IN ('bigint', 'bigint[]')) THEN
        RETURN NEXT storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('%s %s (%s)', CASE WHEN v.param THEN 'OUT parameter' ELSE 'variable' END, v.name,
                        replace(replace(v.typ, 'int4', 'integer'), 'int2', 'smallint')),
          caller, 'past 2^31', via);
      END IF;
    END LOOP;
  END IF;
  -- result columns: an integer column at a position where the output has the value
  FOR v IN
    SELECT r.pos, r.how, res_name[r.pos] AS name, res_type[r.pos] AS typ,
           storagelab_internal.bigint_migration_arg_class(r.val, carrier) AS cls
      FROM unnest(r_pos, r_val, r_how) AS r(pos, val, how)
     WHERE r.pos <= cardinality(res_type)
       AND res_type[r.pos] IN ('int2'::regtype, 'int4'::regtype, 'int2[]'::regtype, 'int4[]'::regtype)
       AND storagelab_internal.bigint_migration_arg_class(r.val, carrier) IS NOT NULL
     ORDER BY r.pos, r.how DESC
  LOOP
    CONTINUE WHEN (v.cls = 'bigint[]') <> (v.typ IN ('int2[]'::regtype, 'int4[]'::regtype));
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

-- Hazards in what one function writes: INSERT INTO t (cols) VALUES (...) or
-- SELECT ..., INSERT INTO t VALUES/SELECT (t's columns in order) and UPDATE
-- t SET col = ..., where the converted value goes into a smallint or integer
-- column (or an array of them) of a table outside the migration: an audit
-- or log table without a foreign key.  The write fails past 2^31 (the
-- assignment cast).  The table is found by name (and schema when the source
-- gives one); every table of that name that has such a column is listed.
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
        SELECT array_agg(split_part(x, '=', 1) ORDER BY n), array_agg(substr(x, strpos(x, '=') + 1) ORDER BY n) INTO cols, vals
          FROM unnest(storagelab_internal.bigint_migration_split(m[6])) WITH ORDINALITY AS u(x, n)
         WHERE x ~ '^[a-z_][a-z0-9_$]*\s*=';
        cols := ARRAY(SELECT btrim(c) FROM unnest(cols) c);
      END IF;
    END IF;
    CONTINUE WHEN vals IS NULL;
    FOR k IN 1 .. cardinality(vals) LOOP
      vals[k] := regexp_replace(vals[k], '[\s"]+', '', 'g');
      CONTINUE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint'
                AND storagelab_internal.bigint_migration_arg_class(vals[k], carrier) IS DISTINCT FROM 'bigint[]';
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
           AND a.atttypid = ANY (CASE WHEN storagelab_internal.bigint_migration_arg_class(vals[k], carrier) = 'bigint[]'
                                      THEN ARRAY['int2[]'::regtype, 'int4[]'::regtype]::oid[]
                                      ELSE ARRAY['int2'::regtype, 'int4'::regtype]::oid[] END)
           AND NOT EXISTS (SELECT 1 FROM storagelab_internal.bigint_migration_converted(objs) v WHERE v.relid = c.oid AND v.attname = a.attname)
         ORDER BY 1
      LOOP
        o := storagelab_internal.bigint_migration_hazard_row(
          fn, 0, format('writes column %s.%I (%s)', storagelab_internal.bigint_migration_qname(t.relid), t.attname, format_type(t.atttypid, NULL)),
          caller, 'past 2^31', via);
        o.hint := format('convert %s.%I to bigint too (in the same script: bigint_migration_group_script() with both columns), or cast in the writer',
                         storagelab_internal.bigint_migration_qname(t.relid), t.attname);
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

-- The row that widens one function: DROP and CREATE with bigint (bigint[])
-- for its smallint/integer parameters at positions argnos, the same body,
-- options, owner, privileges and comment.  Objects depending on the function
-- that the model does not re-create anyway make the widening impossible: the
-- row then carries them in blocker (SQLSTATE 2BP01).
CREATE FUNCTION storagelab_internal.bigint_migration_widened_row(fn oid, argnos int[], objs storagelab.bigint_migration_object[])
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o       storagelab.bigint_migration_object;
  p       record;
  args    text[];            -- pg_get_function_arguments, split at top-level commas
  pos     int := 0;
  i       int;
  head    text;
  def     text;
  newsig  text;
  deps    text;
BEGIN
  SELECT f.proname, f.prokind, f.proowner, f.proacl, f.proargtypes::oid[] AS types, n.nspname,
         pg_get_function_arguments(f.oid) AS fargs, obj_description(f.oid, 'pg_proc') AS descr INTO p
    FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace WHERE f.oid = fn;
  args := storagelab_internal.bigint_migration_split(p.fargs);
  FOR i IN 1 .. cardinality(args) LOOP
    CONTINUE WHEN args[i] ~ '^(OUT|TABLE) ';
    pos := pos + 1;
    IF pos = ANY (argnos) THEN
      args[i] := regexp_replace(args[i], '\m(integer|smallint)(\[\])?( DEFAULT .*)?$', 'bigint\2\3');
    END IF;
  END LOOP;
  newsig := format('%I.%I(%s)', p.nspname, p.proname,
                   (SELECT string_agg(CASE WHEN u.ord = ANY (argnos) AND u.t IN ('int2'::regtype, 'int4'::regtype) THEN 'bigint'
                                           WHEN u.ord = ANY (argnos) THEN 'bigint[]'
                                           ELSE format_type(u.t, NULL) END, ', ' ORDER BY u.ord)
                      FROM unnest(p.types) WITH ORDINALITY AS u(t, ord)));
  head := format('CREATE OR REPLACE %s %I.%I(%s)', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                 p.nspname, p.proname, p.fargs);
  def := rtrim(pg_get_functiondef(fn), E'\n');

  o.kind := 'widened_function'; o.depth := 0;
  o.classid := 'pg_proc'::regclass; o.objid := fn; o.objsubid := 0;
  o.identity := format('%s %s', CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, fn::regprocedure);
  o.hazard_target := newsig;
  o.lock := 'ACCESS EXCLUSIVE on the function object';
  o.handling := format('with function_hazards => ''widen'': dropped and created again as %s, same body, options, owner, privileges and comment', newsig);
  o.drop_sql := format(E'DROP %s %s;\n', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, fn::regprocedure);
  o.create_sql := format('CREATE %s %I.%I(%s)', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                         p.nspname, p.proname, array_to_string(args, ', '))
                  || substr(def, length(head) + 1) || E';\n'
                  || format(E'ALTER ROUTINE %s OWNER TO %I;\n', newsig, pg_get_userbyid(p.proowner))
                  || storagelab_internal.bigint_migration_acl_sql('ROUTINE', newsig, p.proacl, p.proowner)
                  || CASE WHEN p.descr IS NULL THEN '' ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', newsig, p.descr) END;
  o.check_sql := format('to_regprocedure(%L) IS NOT NULL AND to_regprocedure(%L) IS NULL', newsig, fn::regprocedure::text);
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
  ELSIF left(def, length(head)) <> head THEN
    o.blocker := format('the definition of %s does not start as expected (%s)', fn::regprocedure, head);
    o.sqlstate := 'XX000';
  END IF;
  RETURN o;
END
$fn$;

-- Every function hazard of a migration, given the rest of its model: entry
-- points are the trigger functions of the converted tables (NEW.col,
-- OLD.col), PL/pgSQL and SQL functions that name a converted table (col and
-- t.col in statements naming it), and the views of the model; variables
-- declared table.col%TYPE carry the value too; a function that would be
-- widened passes its parameter on (followed up to 8 levels).
CREATE FUNCTION storagelab_internal.bigint_migration_function_hazards(objs storagelab.bigint_migration_object[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  res      storagelab.bigint_migration_object[] := '{}';
  h        storagelab.bigint_migration_object;
  r        record;
  q_fn     oid[] := '{}';   -- work: function (NULL for a view),
  q_src    text[] := '{}';  --   scrubbed text,
  q_car    text[] := '{}';  --   carrier expression,
  q_filter text[] := '{}';  --   statement filter,
  q_caller text[] := '{}';  --   who hands the value over,
  q_via    text[] := '{}';  --   what the value is,
  q_lvl    int[] := '{}';
  seen     text[] := '{}';
  i        int := 0;
BEGIN
  -- (a) trigger functions of the converted tables
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs))
    SELECT t.tgfoid, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS caller,
           (SELECT string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS cols,
           (SELECT string_agg(format('NEW.%I', c.attname), ', ' ORDER BY c.attname) FROM conv c WHERE c.relid = t.tgrelid) AS via
      FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
     WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
       AND t.tgrelid IN (SELECT relid FROM conv)
     ORDER BY 2
  LOOP
    q_fn := q_fn || r.tgfoid; q_src := q_src || NULL::text; q_car := q_car || ('(new|old)\.(' || r.cols || ')');
    q_filter := q_filter || NULL::text; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;
  -- (b) functions that name a converted table, (c) views of the model
  FOR r IN
    WITH conv AS (SELECT * FROM storagelab_internal.bigint_migration_converted(objs)),
    tabs AS (
      SELECT c.relid, storagelab_internal.bigint_migration_re(k.relname) AS rel_re,
             string_agg(storagelab_internal.bigint_migration_re(c.attname), '|' ORDER BY c.attname) AS cols,
             string_agg(format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ' ORDER BY c.attname) AS via
        FROM conv c JOIN pg_class k ON k.oid = c.relid GROUP BY c.relid, k.relname),
    funcs AS MATERIALIZED (   -- each source scrubbed once
      SELECT p.oid, storagelab_internal.bigint_migration_scrub(p.prosrc) AS src
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
    SELECT f.oid AS fn, f.src, t.cols, '(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])' AS filter,
           format('function %s', f.oid::regprocedure) AS caller, t.via
      FROM funcs f JOIN tabs t ON f.src ~ ('(^|[^a-z0-9_$])' || t.rel_re || '($|[^a-z0-9_$])')
    UNION ALL
    SELECT NULL, storagelab_internal.bigint_migration_scrub(pg_get_viewdef(x.objid)), t.cols, NULL, x.identity, t.via
      FROM unnest(objs) x
      JOIN LATERAL (SELECT string_agg(DISTINCT storagelab_internal.bigint_migration_re(c.attname), '|') AS cols,
                           string_agg(DISTINCT format('%s.%I', storagelab_internal.bigint_migration_qname(c.relid), c.attname), ', ') AS via
                      FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                      JOIN conv c ON c.relid = d.refobjid AND c.attname = (SELECT attname FROM pg_attribute WHERE attrelid = d.refobjid AND attnum = d.refobjsubid)
                     WHERE w.ev_class = x.objid) t ON t.cols IS NOT NULL
     WHERE x.kind IN ('view', 'materialized_view')
     ORDER BY 5
  LOOP
    q_fn := q_fn || r.fn; q_src := q_src || r.src; q_car := q_car || ('([a-z_][a-z0-9_$]*\.)?(' || r.cols || ')');
    q_filter := q_filter || r.filter; q_caller := q_caller || r.caller; q_via := q_via || r.via; q_lvl := q_lvl || 0;
  END LOOP;

  WHILE i < cardinality(q_fn) AND i < 10000 LOOP
    i := i + 1;
    IF q_src[i] IS NULL THEN
      q_src[i] := storagelab_internal.bigint_migration_scrub((SELECT prosrc FROM pg_proc WHERE oid = q_fn[i]));
    END IF;
    -- PL/pgSQL variables declared table.column%TYPE of a converted column
    -- become bigint with it: they carry the value too
    q_car[i] := q_car[i] || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                        FROM regexp_matches(q_src[i], '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                                       WHERE ('new.' || m[3]) ~ ('^(' || q_car[i] || ')$')), '');
    FOR h IN
      SELECT * FROM storagelab_internal.bigint_migration_call_hazards(q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_value_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i])
       WHERE q_fn[i] IS NOT NULL
      UNION ALL
      SELECT * FROM storagelab_internal.bigint_migration_write_hazards(q_fn[i], q_src[i], q_car[i], q_filter[i], q_caller[i], q_via[i], objs)
       WHERE q_fn[i] IS NOT NULL
    LOOP
      CONTINUE WHEN format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller) = ANY (seen);
      seen := seen || format('%s:%s:%s:%s', h.objid, h.objsubid, h.hazard_target, h.hazard_caller);
      res := res || h;
      -- a widened function passes its (now bigint) parameter on
      IF h.hazard_fails = 'immediately' AND h.objsubid > 0 AND q_lvl[i] < 8 AND storagelab_internal.bigint_migration_widenable(h.objid)
         AND format('%s:%s', h.objid, h.objsubid) <> ALL (seen) THEN
        seen := seen || format('%s:%s', h.objid, h.objsubid);
        q_fn := q_fn || h.objid; q_src := q_src || NULL::text; q_filter := q_filter || NULL::text;
        q_car := q_car || (SELECT '(' || coalesce(storagelab_internal.bigint_migration_re(nullif(p.proargnames[h.objsubid], '')) || '|', '')
                                  || '\$' || h.objsubid || ')'
                             FROM pg_proc p WHERE p.oid = h.objid);
        q_caller := q_caller || format('function %s', h.objid::regprocedure);
        q_via := q_via || format('its parameter %s once widened', h.objsubid);
        q_lvl := q_lvl || (q_lvl[i] + 1);
      END IF;
    END LOOP;
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(res);
  -- one widening row per function that fails at once and can be re-created
  RETURN QUERY
    SELECT w.*
      FROM (SELECT x.objid, array_agg(DISTINCT x.objsubid) AS argnos FROM unnest(res) x
             WHERE x.hazard_fails = 'immediately' AND x.objsubid > 0 AND storagelab_internal.bigint_migration_widenable(x.objid)
             GROUP BY x.objid) g,
           LATERAL storagelab_internal.bigint_migration_widened_row(g.objid, g.argnos, objs) w;
END
$fn$;

-- The model as a script writer uses it under the DBA's choice:
--   refuse: error when a hazard fails at once (the default);
--   widen:  keep the widened_function rows (error if a function that fails
--           at once cannot be widened);
--   accept: drop the widened_function rows, leave the functions as they are.
-- The function_hazard rows stay in every case: the script header lists them.
CREATE FUNCTION storagelab_internal.bigint_migration_apply_hazards(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det  text;
  fns  text;   -- functions whose parameters must widen
  rets text;   -- functions whose result columns must widen (not done by storagelab)
BEGIN
  IF function_hazards IS NULL THEN
    RAISE EXCEPTION 'function_hazards must not be NULL' USING ERRCODE = 'null_value_not_allowed',
      HINT = 'Use function_hazards => ''refuse'' (the default), ''widen'' or ''accept''.';
  ELSIF function_hazards NOT IN ('refuse', 'widen', 'accept') THEN
    RAISE EXCEPTION 'invalid function_hazards "%"', function_hazards USING ERRCODE = 'invalid_parameter_value',
      HINT = 'Valid values are ''refuse'', ''widen'' and ''accept''.';
  END IF;
  SELECT string_agg(x.identity || ' ' || x.handling, E'\n' ORDER BY x.identity, x.hazard_caller),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid > 0),
         string_agg(DISTINCT x.objid::regprocedure::text, ', ') FILTER (WHERE x.objsubid = 0)
    INTO det, fns, rets
    FROM unnest(objs) x WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately';
  IF function_hazards = 'refuse' AND det IS NOT NULL THEN
    RAISE EXCEPTION 'the migration would break functions that receive the converted values'
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = det,
            HINT = CASE WHEN rets IS NULL
                        THEN format('Generate the script with function_hazards => ''widen'' to re-create %s with bigint parameters in the same transaction, '
                                    'or with function_hazards => ''accept'' to change them yourself.', fns)
                        ELSE format('Declare the result columns of %s bigint (or cast the value in the query) by hand, then generate the script again; '
                                    'or generate it with function_hazards => ''accept'' and change them in the same maintenance window.', rets) END;
  END IF;
  IF function_hazards = 'widen' THEN
    SELECT string_agg(d, E'\n' ORDER BY d) INTO det FROM (
      SELECT x.identity || ' (called by ' || x.hazard_caller || '): storagelab cannot re-create it (built in, in an extension, not PL/pgSQL or SQL, or with a SQL-standard body)' AS d
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid > 0
         AND NOT storagelab_internal.bigint_migration_widenable(x.objid)
      UNION ALL
      SELECT x.identity || ' (' || x.hazard_caller || '): widening changes parameters only, not what a function returns'
        FROM unnest(objs) x
       WHERE x.kind = 'function_hazard' AND x.hazard_fails = 'immediately' AND x.objsubid = 0
      UNION ALL
      SELECT x.blocker FROM unnest(objs) x WHERE x.kind = 'widened_function' AND x.blocker IS NOT NULL) y;
    IF det IS NOT NULL THEN
      RAISE EXCEPTION 'cannot widen every function that the converted values would break'
        USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
              HINT = 'Cast the argument in the caller, or change these functions by hand, then generate the script again.';
    END IF;
    RETURN objs;
  END IF;
  RETURN ARRAY(SELECT x FROM unnest(objs) x WHERE x.kind <> 'widened_function');
END
$fn$;

-- Lines for a script header: every hazard and what the script does about it.
CREATE FUNCTION storagelab_internal.bigint_migration_hazard_header(objs storagelab.bigint_migration_object[], function_hazards text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- Function hazards (function_hazards => %L): functions the converted values reach with a narrower type:\n', $2)
      || coalesce(string_agg('--   ' || storagelab_internal.bigint_migration_comment_text(
                    format('%s <- %s: fails %s; %s', x.identity, x.hazard_caller, x.hazard_fails,
                           CASE WHEN w.hazard_target IS NOT NULL THEN 'widened to ' || w.hazard_target ELSE 'left as it is' END)) || E'\n',
                  '' ORDER BY x.hazard_fails, x.identity, x.hazard_caller), E'--   (none)\n')
      || E'-- (PL/pgSQL functions that use the converted tables are checked with plpgsql_check, when it is installed, before COMMIT)\n'
    FROM unnest($1) x
    LEFT JOIN unnest($1) w ON w.kind = 'widened_function' AND w.objid = x.objid
   WHERE x.kind = 'function_hazard'
$$;

-- DO blocks for the script: phase 'before' checks that the functions to
-- widen are unchanged since generation, and records the errors plpgsql_check
-- reports for every PL/pgSQL function that uses the converted tables (trigger
-- functions with their table, the functions of the hazard rows, functions
-- naming a converted table); phase 'after' (just before COMMIT) checks them
-- again and rolls back on any error that was not there before.  Nothing
-- happens when plpgsql_check is not installed in the database.  The checks
-- run with the sessions' default search_path (pg_settings.reset_val), as the
-- application's sessions would run the functions.
CREATE FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(objs storagelab.bigint_migration_object[], phase text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  vals text;
  q    text;
  pre  text;
BEGIN
  WITH conv AS (
    SELECT DISTINCT x.relation AS relid, k.relname
      FROM unnest(objs) x JOIN pg_class k ON k.oid = x.relation WHERE x.kind = 'column'),
  fns AS (
    SELECT t.tgfoid AS fn, storagelab_internal.bigint_migration_qname(t.tgrelid) AS rel
      FROM pg_trigger t JOIN conv ON conv.relid = t.tgrelid WHERE NOT t.tgisinternal AND t.tgparentid = 0
    UNION
    SELECT x.objid, NULL FROM unnest(objs) x WHERE x.kind IN ('function_hazard', 'widened_function')
    UNION
    SELECT p.oid, NULL FROM pg_proc p, conv
     WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql') AND p.prorettype <> 'trigger'::regtype
       AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(conv.relname) || '($|[^a-z0-9_$])'))
  SELECT string_agg(format('(%L, %L, %L)', f.fn::regprocedure::text,
                           CASE WHEN phase = 'after' THEN coalesce(w.hazard_target, f.fn::regprocedure::text) ELSE f.fn::regprocedure::text END,
                           f.rel), ', ' ORDER BY 1)
    INTO vals
    FROM fns f JOIN pg_proc p ON p.oid = f.fn JOIN pg_language l ON l.oid = p.prolang
    LEFT JOIN unnest(objs) w ON w.kind = 'widened_function' AND w.objid = f.fn
   WHERE l.lanname = 'plpgsql' AND (p.prorettype <> 'trigger'::regtype OR f.rel IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = f.fn AND d.deptype = 'e');
  -- the functions to widen must be as they were when the script was
  -- generated: it re-creates them from that text
  IF phase = 'before' THEN
    SELECT E'-- The functions to widen are unchanged since generation (they are re-created from their text then).\n'
           || 'DO ' || storagelab_internal.dollar_quote(
                E'\nDECLARE\n  problems text[] := ''{}'';\nBEGIN\n'
                || string_agg(format(E'  IF md5(coalesce(pg_get_functiondef(to_regprocedure(%L)), '''')) <> %L THEN\n'
                                     '    problems := problems || %L::text;\n  END IF;\n',
                                     x.objid::regprocedure, md5(pg_get_functiondef(x.objid)), x.identity || ' is missing or changed'),
                              '' ORDER BY x.identity)
                || E'  IF cardinality(problems) > 0 THEN\n'
                || E'    RAISE EXCEPTION ''the database changed since this script was generated''\n'
                || E'      USING ERRCODE = ''object_not_in_prerequisite_state'', DETAIL = array_to_string(problems, ''; ''),\n'
                || E'            HINT = ''Generate the script again with storagelab.bigint_migration_script().'';\n  END IF;\nEND\n')
           || E';\n\n'
      INTO pre
      FROM unnest(objs) x WHERE x.kind = 'widened_function';
  END IF;
  IF vals IS NULL THEN
    RETURN coalesce(pre, '');
  END IF;
  -- %1$I: the schema of plpgsql_check, filled in when the script runs
  q := replace(format('SELECT f.k, c.sqlstate, c.message FROM (VALUES %s) f(k, sig, rel),'
                      ' LATERAL %s.plpgsql_check_function_tb(f.sig::regprocedure, coalesce(to_regclass(f.rel)::oid, 0)::regclass, fatal_errors => false) c'
                      ' WHERE c.level = ''error''', vals, '@@nsp@@'), '%', '%%');
  q := replace(q, '@@nsp@@', '%1$I');
  IF phase = 'before' THEN
    RETURN coalesce(pre, '')
        || E'-- plpgsql_check (when installed): the errors of the functions that use these tables, before the change\n'
        || 'DO ' || storagelab_internal.dollar_quote(format(
             E'\nDECLARE\n  nsp name;\nBEGIN\n'
             '  SELECT n.nspname INTO nsp FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ''plpgsql_check'';\n'
             '  IF nsp IS NULL THEN\n    RAISE NOTICE ''plpgsql_check is not installed in this database: functions are not checked'';\n    RETURN;\n  END IF;\n'
             '  -- the functions run with the sessions'' default search_path: check them with it\n'
             '  PERFORM set_config(''search_path'', (SELECT reset_val FROM pg_settings WHERE name = ''search_path''), true);\n'
             '  EXECUTE format(%L, nsp);\n'
             '  PERFORM set_config(''search_path'', ''pg_catalog, pg_temp'', true);\nEND\n',
             'CREATE TEMP TABLE storagelab_plpgsql_check_before ON COMMIT DROP AS ' || q)) || E';\n\n';
  END IF;
  RETURN E'-- plpgsql_check (when installed): no function that uses these tables has an error it did not have before\n'
      || 'DO ' || storagelab_internal.dollar_quote(format(
           E'\nDECLARE\n  nsp name;\n  bad text;\nBEGIN\n'
           '  SELECT n.nspname INTO nsp FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ''plpgsql_check'';\n'
           '  IF nsp IS NULL OR to_regclass(''pg_temp.storagelab_plpgsql_check_before'') IS NULL THEN\n    RETURN;\n  END IF;\n'
           '  PERFORM set_config(''search_path'', (SELECT reset_val FROM pg_settings WHERE name = ''search_path''), true);\n'
           '  EXECUTE format(%L, nsp) INTO bad;\n'
           '  PERFORM set_config(''search_path'', ''pg_catalog, pg_temp'', true);\n'
           '  IF bad IS NOT NULL THEN\n'
           '    RAISE EXCEPTION ''plpgsql_check finds new errors in functions that use the converted columns; rolling back''\n'
           '      USING ERRCODE = ''data_exception'', DETAIL = bad,\n'
           '            HINT = ''Nothing was changed.  Generate the script with function_hazards => ''''widen'''', or fix these functions first.'';\n'
           '  END IF;\nEND\n',
           'SELECT string_agg(a.k || '': '' || a.message, ''; '' ORDER BY a.k, a.message) FROM (' || q || ') a'
           ' WHERE NOT EXISTS (SELECT 1 FROM pg_temp.storagelab_plpgsql_check_before b'
           ' WHERE b.k = a.k AND b.sqlstate IS NOT DISTINCT FROM a.sqlstate AND b.message = a.message)')) || E';\n\n';
END
$fn$;

COMMENT ON FUNCTION storagelab_internal.bigint_migration_scrub(text) IS
  'function or view source with comments and string literals blanked out, lower case';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_calls(text) IS
  'every call name(arg, ...) in a scrubbed source: name, argument count, position and text of each argument, statement number';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_arg_class(text, text) IS
  'whether a call argument carries the converted value: bigint, bigint[], cast (to a narrower integer) or NULL';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_accepts(oid, text) IS
  'whether a parameter type takes a bigint (or bigint[]) argument without an explicit cast';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widenable(oid) IS
  'whether storagelab may re-create a function with bigint parameters: PL/pgSQL or SQL with a string body, not built in, not in an extension';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_row(oid, int, text, text, text, text) IS
  'one function_hazard row of the INT->BIGINT dependency model';
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
COMMENT ON FUNCTION storagelab_internal.bigint_migration_split(text) IS
  'a list split at its top-level commas, items trimmed';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_converted(storagelab.bigint_migration_object[]) IS
  'the columns of an INT->BIGINT model that change type (smallint or integer now)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_re(text) IS
  'a word as a regular expression that matches it literally (lower case)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_widened_row(oid, int[], storagelab.bigint_migration_object[]) IS
  'the widened_function row of the INT->BIGINT model: DROP and CREATE of a function with bigint parameters';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_function_hazards(storagelab.bigint_migration_object[]) IS
  'function_hazard and widened_function rows of an INT->BIGINT migration, given the rest of its model';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_apply_hazards(storagelab.bigint_migration_object[], text) IS
  'the INT->BIGINT model under function_hazards refuse, widen or accept (refuse and unwidenable hazards raise errors)';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_hazard_header(storagelab.bigint_migration_object[], text) IS
  'script header lines listing the function hazards and what the script does about them';
COMMENT ON FUNCTION storagelab_internal.bigint_migration_plpgsql_check_sql(storagelab.bigint_migration_object[], text) IS
  'DO block of a generated script: plpgsql_check errors of the functions using the converted tables, recorded before and compared after';

-- ---------------------------------------------------------------------------
-- Any type change, not only INT -> BIGINT: the layout scripts (part 61)
-- retype columns in every direction (int -> smallint, text -> uuid,
-- numeric -> integer, int -> bigint).  The same textual reading as above,
-- with the old and the new type as parameters: a call that passes the
-- value to a function no overload of which takes the new type, and a
-- comparison of the value with a parameter or variable for which no
-- operator takes the new type, fail at once after the change.

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
COMMENT ON FUNCTION storagelab_internal.type_change_accepts(oid, oid, boolean) IS
  'whether a parameter or operand type takes a value of another type (or an array of it) without an explicit cast: same type, polymorphic, implicit cast, domain over it';

-- The function hazards of retyping columns of one table.  changes: the
-- layout plan's [{"column_name", "from", "to"}, ...].  Entry points: the
-- PL/pgSQL trigger functions of the table and of its partitions or children
-- (NEW.col, OLD.col), and the PL/pgSQL and SQL functions whose statements
-- name the table (col, x.col; variables declared table.col%TYPE too).  A
-- hazard: the value passed to a function (or an ARRAY[] of it) no overload
-- of which takes the new type while one took the old, or compared (=, <>,
-- <, ...) with a parameter or declared variable when no operator takes the
-- new type with it while one took the old (42883), or returned by a
-- PL/pgSQL RETURN QUERY in a result column declared with the old type
-- (42804).  All fail at once.
-- One row per function that reads a changed column, hazard NULL when none
-- was found in it.
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
  k      record;
  v      record;
  src    text;
  car    text;
  stmts  text[];
  found_one boolean;
  ops    text := '(=|<>|!=|<=|>=|<|>)';
  opnd   text := '(\$[0-9]+|[a-z_][a-z0-9_$]*)';
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    o_t := to_regtype(e->>'from'); n_t := to_regtype(e->>'to');
    CONTINUE WHEN o_t IS NULL OR n_t IS NULL OR o_t = n_t;
    column_name := e->>'column_name'; old_type := format_type(o_t, NULL); new_type := format_type(n_t, NULL);
    FOR r IN
      -- trigger functions of the table and of its partitions or children
      SELECT DISTINCT t.tgfoid AS f, format('trigger %I on %s', t.tgname, storagelab_internal.bigint_migration_qname(t.tgrelid)) AS who,
             '(?:new|old)\.(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')' AS carrier, NULL::text AS filter
        FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND l.lanname = 'plpgsql'
         AND t.tgrelid IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[relation::oid]) m)
      UNION
      -- functions whose statements name the table
      SELECT p.oid, format('function %s', p.oid::regprocedure),
             '(?:[a-z_][a-z0-9_$]*\.)?(?:' || storagelab_internal.bigint_migration_re(e->>'column_name') || ')',
             '(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])'
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k2
       WHERE k2.oid = relation AND l.lanname IN ('plpgsql', 'sql') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
         AND p.prorettype <> 'trigger'::regtype
         AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
         AND storagelab_internal.bigint_migration_scrub(p.prosrc) ~ ('(^|[^a-z0-9_$])' || storagelab_internal.bigint_migration_re(k2.relname) || '($|[^a-z0-9_$])')
      ORDER BY 2
    LOOP
      src := storagelab_internal.bigint_migration_scrub((SELECT p.prosrc FROM pg_proc p WHERE p.oid = r.f));
      car := r.carrier;
      -- PL/pgSQL variables declared table.column%TYPE of the column carry the value too
      car := car || coalesce((SELECT string_agg('|' || storagelab_internal.bigint_migration_re(m[2]), '')
                                FROM regexp_matches(src, '(^|[;\s])([a-z_][a-z0-9_$]*)\s+[a-z_][a-z0-9_$.]*\.([a-z_][a-z0-9_$]*)%type', 'g') AS m
                               WHERE m[3] = lower(e->>'column_name')), '');
      stmts := ARRAY(SELECT s FROM unnest(string_to_array(src, ';')) s WHERE r.filter IS NULL OR s ~ r.filter);
      CONTINUE WHEN NOT EXISTS (SELECT 1 FROM unnest(stmts) s WHERE s ~ ('(^|[^a-z0-9_$.])(' || car || ')($|[^a-z0-9_$])'));
      fn := r.f; caller := r.who; found_one := false;
      -- calls
      FOR k IN
        SELECT DISTINCT c.fname, c.nargs, c.argno, storagelab_internal.bigint_migration_arg_class(c.arg, car) = 'bigint[]' AS arr
          FROM storagelab_internal.bigint_migration_calls(array_to_string(stmts, ';')) c
         WHERE storagelab_internal.bigint_migration_arg_class(c.arg, car) IN ('bigint', 'bigint[]')
         ORDER BY 1, 3
      LOOP
        CONTINUE WHEN EXISTS (
          SELECT 1 FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], n_t, k.arr));
        FOR v IN
          SELECT f.oid::regprocedure AS callee FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
           WHERE f.proname = split_part(k.fname, '.', -1) AND (k.fname !~ '\.' OR n.nspname = split_part(k.fname, '.', 1))
             AND f.pronargs >= k.nargs AND f.pronargs - f.pronargdefaults <= k.nargs AND f.prokind IN ('f', 'p')
             AND storagelab_internal.type_change_accepts(f.proargtypes[k.argno - 1], o_t, k.arr)
           ORDER BY f.oid
        LOOP
          hazard := format('passes %s (%s) as argument %s of %s: no function of that name takes %s%s', column_name,
                           new_type || CASE WHEN k.arr THEN '[]' ELSE '' END, k.argno, v.callee,
                           new_type, CASE WHEN k.arr THEN '[]' ELSE '' END);
          found_one := true;
          RETURN NEXT;
        END LOOP;
      END LOOP;
      -- comparisons with a parameter or a declared variable
      FOR k IN
        WITH params AS (
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
         WHERE c.other !~ ('^(' || car || ')$')
         ORDER BY 2, 1
      LOOP
        CONTINUE WHEN k.t IS NULL OR EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, n_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, n_t, false) END);
        CONTINUE WHEN NOT EXISTS (
          SELECT 1 FROM pg_operator o
           WHERE o.oprname = replace(k.op, '!=', '<>')
             AND CASE WHEN k.value_left THEN storagelab_internal.type_change_accepts(o.oprleft, o_t, false)
                                         AND storagelab_internal.type_change_accepts(o.oprright, k.t, false)
                      ELSE storagelab_internal.type_change_accepts(o.oprleft, k.t, false)
                           AND storagelab_internal.type_change_accepts(o.oprright, o_t, false) END);
        hazard := format('compares %s (%s) with %s (%s): no operator %s', column_name, new_type, k.other, format_type(k.t, NULL),
                         CASE WHEN k.value_left THEN format('%s %s %s', new_type, k.op, format_type(k.t, NULL))
                              ELSE format('%s %s %s', format_type(k.t, NULL), k.op, new_type) END);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      -- RETURN QUERY: each column of the query must have the declared type exactly
      FOR k IN
        SELECT DISTINCT q.pos, c.name
          FROM storagelab_internal.return_query_items(array_to_string(stmts, ';')) q
          JOIN storagelab_internal.function_result_columns(r.f) c ON c.pos = q.pos
         WHERE q.item ~ ('^\(*(' || car || ')\)*$') AND c.typ = o_t
         ORDER BY 1
      LOOP
        hazard := format('returns %s (%s) in RETURN QUERY as result column %s%s, declared %s: every call fails (structure of query does not match function result type)',
                         column_name, new_type, k.pos, coalesce(' ' || quote_ident(nullif(k.name, '')), ''), old_type);
        found_one := true;
        RETURN NEXT;
      END LOOP;
      IF NOT found_one THEN
        hazard := NULL;
        RETURN NEXT;
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.type_change_function_hazards(regclass, jsonb) IS
  'functions reading retyped columns of a table (trigger functions with NEW/OLD, functions naming the table), each with the calls and comparisons that no function or operator takes with the new type and the RETURN QUERY columns declared with the old type (fail at once), hazard NULL when none';

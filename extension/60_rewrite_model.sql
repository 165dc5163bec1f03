-- storagelab install script, part 60: the copy-and-swap rewrite engine,
-- its input and what it refuses.  The engine writes the statements that
-- rebuild a set of tables (a foreign-key component) as new tables beside
-- the old ones, with another column order and other column types, and swap
-- them in; doc/design/rewrite-engine.md is its interface.
--
--   60_rewrite_model.sql      the model's types, input (rewrite_columns), names
--                             (rewrite_name), refusals (rewrite_refuse), the
--                             objects outside the tables that follow them
--                             (rewrite_dependents: the catalog query and the
--                             table of kinds of the INT -> BIGINT model's
--                             walk, part 22)
--   61_rewrite_create.sql     phases create and copy
--   62_rewrite_index.sql      phase index
--   63_rewrite_statements.sql the model built once (rewrite_model), the phase
--                             of a model (rewrite_phase), the entry point
--                             storagelab_internal.rewrite_statements()
--   64_rewrite_swap.sql       phases swap, validate, swap_back, cleanup, discard

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The deterministic name of an object the engine creates or renames: the
-- new table of table t is storagelab_new_<t's OID>, t renamed out of the way
-- storagelab_old_<t's OID>; the same for indexes, constraints, identity
-- sequences and statistics objects (by the old object's OID).  At most 26
-- bytes.
CREATE FUNCTION storagelab_internal.rewrite_name(prefix text, obj oid)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$ SELECT ('storagelab_' || $1 || '_' || $2::text)::name $$;
COMMENT ON FUNCTION storagelab_internal.rewrite_name(text, oid) IS
  'storagelab_<prefix>_<oid>: the name of an object the rewrite engine creates (new) or moves out of the way (old)';

-- The model of a rewrite (rewrite_model, part 63), read from the catalogs
-- once and handed to every phase: the tables given (relids, in the order
-- given), the members of their trees with their columns in the new order
-- (rewrite_members), the foreign keys the swap
-- re-points (rewrite_foreign_keys) and the objects that follow the tables
-- (rewrite_dependents; NULL when the model was built without them).
CREATE TYPE storagelab_internal.rewrite_member AS (
  root oid, relid oid, parent oid, level int, leaf boolean,
  atts int2[], types text[]   -- its attnums in the new order, their new types
);
COMMENT ON TYPE storagelab_internal.rewrite_member IS
  'a table a rewrite rebuilds (rewrite_members) with its attnums in the new order and their new types';
CREATE TYPE storagelab_internal.rewrite_fk AS (
  conoid oid, direction text, conrelid oid, confrelid oid, conname name, qrel text, def text,
  validated boolean, partitioned boolean, descr text
);
COMMENT ON TYPE storagelab_internal.rewrite_fk IS
  'a foreign key the swap re-points (rewrite_foreign_keys), with the table it references and its comment';
CREATE TYPE storagelab_internal.rewrite_dep AS (
  depth int, classid oid, objid oid, identity text, drop_sql text, create_sql text
);
COMMENT ON TYPE storagelab_internal.rewrite_dep IS
  'an object that follows the rewritten tables (rewrite_dependents)';
CREATE TYPE storagelab_internal.rewrite_model AS (
  relids  oid[],
  members storagelab_internal.rewrite_member[],
  fks     storagelab_internal.rewrite_fk[],
  deps    storagelab_internal.rewrite_dep[]
);
COMMENT ON TYPE storagelab_internal.rewrite_model IS
  'the rewrite engine''s model, built once (rewrite_model) and read by every phase: tables, members with their columns, foreign keys, dependents';

-- A type name given by the caller, checked before it is written into DDL:
-- only the characters a type name with a typmod is spelled with (letters,
-- digits, _, $, spaces, a dot, double-quoted names, a parenthesized list of
-- numbers, [] suffixes), and a type that exists.
CREATE FUNCTION storagelab_internal.rewrite_type_text(type_text text, column_name text)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF type_text IS NULL
     OR type_text !~ '^\s*([A-Za-z_][A-Za-z0-9_$ ]*|"[^"]+")(\.([A-Za-z_][A-Za-z0-9_$]*|"[^"]+"))?(\s*\(\s*[0-9]+(\s*,\s*[0-9]+)?\s*\))?(\s+with(out)?\s+time\s+zone)?(\s*\[\s*\])*\s*$'
     OR to_regtype(type_text) IS NULL THEN
    RAISE EXCEPTION 'unknown type for column %', quote_ident(column_name)
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('The type given is %s.', coalesce(quote_literal(type_text), 'NULL')),
            HINT = 'Give a type as format_type() prints it, such as smallint, integer or character varying(20), schema-qualified unless it is built in.';
  END IF;
  -- spelled as format_type() does (schema-qualified where needed), unless a typmod is given
  RETURN CASE WHEN type_text ~ '\(' THEN btrim(type_text) ELSE format_type(to_regtype(type_text), NULL) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_type_text(text, text) IS
  'a caller''s type name, checked (the characters of a type name with typmod, and an existing type) before it goes into DDL; 22023 otherwise';

-- The engine's input, checked: one row per column of every table, in the
-- new order.  tables: [{"relation": "s.t", "columns": [{"column_name": "a",
-- "type": "bigint"}, ...]}, ...]; every live column exactly once.
CREATE FUNCTION storagelab_internal.rewrite_columns(tables jsonb)
RETURNS TABLE (relid oid, table_ord int, pos int, attnum int2, column_name name,
               old_type text, new_type text, changed boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      jsonb;
  tord   int := 0;
  rel    oid;
  c      jsonb;
  cpos   int;
  a      record;
  seen   int2[];
  rels   oid[] := '{}';
  missing text;
BEGIN
  IF jsonb_typeof(tables) IS DISTINCT FROM 'array' OR jsonb_array_length(tables) = 0 THEN
    RAISE EXCEPTION 'tables must be a non-empty JSON array'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Give [{"relation": "schema.table", "columns": [{"column_name": "a", "type": "bigint"}, ...]}].';
  END IF;
  FOR t IN SELECT x FROM jsonb_array_elements(tables) x LOOP
    tord := tord + 1;
    IF jsonb_typeof(t->'relation') IS DISTINCT FROM 'string' OR jsonb_typeof(t->'columns') IS DISTINCT FROM 'array' THEN
      RAISE EXCEPTION 'each table needs a relation and a columns array'
        USING ERRCODE = 'invalid_parameter_value', DETAIL = format('Element %s is %s.', tord, t::text),
              HINT = 'Give {"relation": "schema.table", "columns": [{"column_name": "a", "type": "bigint"}, ...]}.';
    END IF;
    rel := to_regclass(t->>'relation');
    IF rel IS NULL THEN
      RAISE EXCEPTION 'relation % does not exist', t->>'relation'
        USING ERRCODE = 'undefined_table', HINT = 'Give a schema-qualified table name.';
    END IF;
    IF rel = ANY (rels) THEN
      RAISE EXCEPTION 'table % is given twice', rel::regclass
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Give each table of the component once.';
    END IF;
    rels := rels || rel;
    PERFORM storagelab_internal.rewrite_refuse(ARRAY[rel]);
    seen := '{}';
    cpos := 0;
    FOR c IN SELECT x FROM jsonb_array_elements(t->'columns') x LOOP
      cpos := cpos + 1;
      SELECT att.attnum, att.attname, format_type(att.atttypid, att.atttypmod) AS typ INTO a
        FROM pg_attribute att
       WHERE att.attrelid = rel AND att.attname = c->>'column_name' AND att.attnum > 0 AND NOT att.attisdropped;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'column % of % does not exist', coalesce(quote_ident(c->>'column_name'), 'NULL'), rel::regclass
          USING ERRCODE = 'undefined_column', HINT = 'Name every live column of the table once, in the new order.';
      END IF;
      IF a.attnum = ANY (seen) THEN
        RAISE EXCEPTION 'column % of % is given twice', quote_ident(a.attname), rel::regclass
          USING ERRCODE = 'invalid_parameter_value', HINT = 'Name every live column of the table once, in the new order.';
      END IF;
      seen := seen || a.attnum;
      relid := rel; table_ord := tord; pos := cpos; attnum := a.attnum; column_name := a.attname;
      old_type := a.typ;
      new_type := CASE WHEN c ? 'type' THEN storagelab_internal.rewrite_type_text(c->>'type', a.attname) ELSE a.typ END;
      -- the same type spelled otherwise (int8 for bigint) is no change
      changed := to_regtype(new_type) <> to_regtype(old_type)
                 OR coalesce(replace(substring(new_type FROM '\(([0-9 ,]*)\)'), ' ', ''), '')
                    <> coalesce(replace(substring(old_type FROM '\(([0-9 ,]*)\)'), ' ', ''), '');
      IF NOT changed THEN new_type := old_type; END IF;
      RETURN NEXT;
    END LOOP;
    SELECT string_agg(quote_ident(att.attname), ', ' ORDER BY att.attnum) INTO missing
      FROM pg_attribute att
     WHERE att.attrelid = rel AND att.attnum > 0 AND NOT att.attisdropped AND att.attnum <> ALL (seen);
    IF missing IS NOT NULL THEN
      RAISE EXCEPTION 'columns of % are missing from the new order', rel::regclass
        USING ERRCODE = 'invalid_parameter_value', DETAIL = format('Missing: %s.', missing),
              HINT = 'Name every live column of the table once, in the new order.';
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_columns(jsonb) IS
  'the rewrite engine''s input, checked: one row per column of every table, in the new order, with its old and new type; 42P01 unknown table, 42703 unknown column, 22023 a column missing or twice, an unknown type, a malformed argument';

-- The tables a rewrite of relids rebuilds: each table given, and its
-- partitions or inheritance children at every level (pg_inherits),
-- parents before their children.  root: the table given; parent: the table
-- a member inherits from (NULL for a root); leaf: a table that holds rows
-- (a partitioned table holds none; an inheritance parent does).
CREATE FUNCTION storagelab_internal.rewrite_members(relids oid[])
RETURNS TABLE (root oid, relid oid, parent oid, level int, leaf boolean)
LANGUAGE plpgsql STABLE STRICT   -- plpgsql: its plan is kept for the session (called per object)
ROWS 10  -- a table and its partitions: the default guess, 1000, joined pg_class and pg_type by full scans
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN QUERY
  WITH RECURSIVE tree(n, root, relid, parent, level) AS (
    SELECT r.n, r.root, r.root, NULL::oid, 0 FROM unnest(relids) WITH ORDINALITY r(root, n)
    UNION ALL
    SELECT t.n, t.root, i.inhrelid, i.inhparent, t.level + 1
      FROM tree t JOIN pg_inherits i ON i.inhparent = t.relid JOIN pg_class c ON c.oid = i.inhrelid
     WHERE c.relkind IN ('r', 'p', 'f') AND t.level < 100
  )
  SELECT t.root, t.relid, t.parent, t.level, c.relkind <> 'p'
    FROM tree t JOIN pg_class c ON c.oid = t.relid
   ORDER BY t.n, t.level, t.relid;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_members(oid[]) IS
  'the tables a rewrite rebuilds: each table given and its partitions or inheritance children at every level, parents first (root, parent, level, leaf: holds rows)';

-- What the engine cannot rewrite: refused with 0A000 and a message naming
-- the object (42809 for a relation that is not a table).  A partition or
-- inheritance child given alone (it is rebuilt with its parent), multiple
-- inheritance, foreign partitions and children, typed tables, extension members, and
-- tables whose row type is used by another object than a view or a
-- function (a column of another table, a type): the row type of the new
-- table is another type (views and functions are re-created with it).
CREATE FUNCTION storagelab_internal.rewrite_refuse(relids oid[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r record;
  m record;
  x record;
BEGIN
  FOR r IN SELECT c.oid, c.relkind, c.relispartition FROM pg_class c WHERE c.oid = ANY (relids) ORDER BY c.oid LOOP
    IF r.relispartition THEN
      RAISE EXCEPTION 'the rewrite engine rebuilds a partition only with its partitioned table'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s is a partition of %s.', r.oid::regclass, pg_partition_root(r.oid)),
              HINT = format('Give the partitioned table %s: every partition is rebuilt with it.', pg_partition_root(r.oid));
    END IF;
    FOR x IN SELECT i.inhparent FROM pg_inherits i WHERE i.inhrelid = r.oid ORDER BY i.inhseqno LIMIT 1 LOOP
      RAISE EXCEPTION 'the rewrite engine rebuilds an inheritance child only with its parent'
        USING ERRCODE = 'feature_not_supported',
              DETAIL = format('%s inherits from %s.', r.oid::regclass, x.inhparent::regclass),
              HINT = 'Give the topmost parent: its children are rebuilt with it.';
    END LOOP;
    IF r.relkind NOT IN ('r', 'p') THEN
      RAISE EXCEPTION '% is not a table', r.oid::regclass
        USING ERRCODE = 'wrong_object_type', HINT = 'Give an ordinary or partitioned table.';
    END IF;
    FOR m IN
      SELECT c.oid, c.relkind, c.relispartition, c.reloftype, c.reltype, t.typarray AS arraytype, p.root
        FROM storagelab_internal.rewrite_members(ARRAY[r.oid]) p
        JOIN pg_class c ON c.oid = p.relid JOIN pg_type t ON t.oid = c.reltype
    LOOP
      IF m.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION 'the rewrite engine does not rewrite foreign partitions or children'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s, a %s of %s, is a foreign table.', m.oid::regclass,
                                CASE WHEN m.relispartition THEN 'partition' ELSE 'child' END, m.root::regclass),
                HINT = 'Detach it first and attach it to the new table after the rewrite, or change the types with ALTER TABLE.';
      END IF;
      IF (SELECT count(*) FROM pg_inherits i WHERE i.inhrelid = m.oid) > 1 THEN
        RAISE EXCEPTION 'the rewrite engine does not support multiple inheritance'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s inherits from %s.', m.oid::regclass,
                                (SELECT string_agg(i.inhparent::regclass::text, ', ' ORDER BY i.inhseqno) FROM pg_inherits i WHERE i.inhrelid = m.oid)),
                HINT = 'Change the types with ALTER TABLE (it recurses to the children).';
      END IF;
      IF m.reloftype <> 0 THEN
        RAISE EXCEPTION 'the rewrite engine does not support typed tables'
          USING ERRCODE = 'feature_not_supported', DETAIL = format('%s is of type %s.', m.oid::regclass, m.reloftype::regtype),
                HINT = 'Change the types with ALTER TABLE.';
      END IF;
      IF EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = m.oid AND d.deptype = 'e') THEN
        RAISE EXCEPTION 'the rewrite engine does not rewrite tables of extensions'
          USING ERRCODE = 'feature_not_supported', DETAIL = format('%s belongs to an extension.', m.oid::regclass),
                HINT = 'Leave the extension''s tables to the extension.';
      END IF;
      -- the row type (and its array type) in another table's column, a type (functions: rewrite_dependents)
      FOR x IN
        SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, format_type(d.refobjid, NULL) AS typ
          FROM pg_depend d
         WHERE d.refclassid = 'pg_type'::regclass AND d.refobjid IN (m.reltype, m.arraytype)
           AND d.deptype = 'n' AND d.classid NOT IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
         ORDER BY 1 LIMIT 1
      LOOP
        RAISE EXCEPTION 'the rewrite engine cannot rewrite a table whose row type is used elsewhere'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s uses type %s; the new table has a row type of its own.', x.what, x.typ),
                HINT = 'Change the types with ALTER TABLE, or drop that object first and re-create it afterwards.';
      END LOOP;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_refuse(oid[]) IS
  'raises 0A000 naming the object when the rewrite engine cannot rewrite one of the tables (a partition or inheritance child given alone, multiple inheritance, a foreign partition or child, typed table, extension member, row type used by a column or type), 42809 for a relation that is not a table';

-- The parts of a view or materialized view that go when it is dropped:
-- its triggers, rules, column defaults and (materialized) indexes, as
-- statements that re-create them after the view.
CREATE FUNCTION storagelab_internal.rewrite_view_parts(view oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce((SELECT string_agg(format(E'ALTER %s %s ALTER COLUMN %I SET DEFAULT %s;\n',
                                            CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END,
                                            storagelab_internal.sql_qname(c.oid), a.attname,
                                            pg_get_expr(ad.adbin, ad.adrelid)), '' ORDER BY a.attnum)
                    FROM pg_attrdef ad JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
                   WHERE ad.adrelid = c.oid), '')
      || coalesce((SELECT string_agg(storagelab_internal.index_copy_sql(pg_get_indexdef(i.indexrelid), i.indexrelid,
                                       ic.relname, false, '{}', '{}') || E';\n'
                                     || CASE WHEN obj_description(i.indexrelid, 'pg_class') IS NULL THEN ''
                                             ELSE format(E'COMMENT ON INDEX %s IS %L;\n',
                                                         storagelab_internal.sql_qname(i.indexrelid),
                                                         obj_description(i.indexrelid, 'pg_class')) END,
                                     '' ORDER BY i.indexrelid)
                     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = c.oid), '')
      || coalesce((SELECT string_agg((x.o).create_sql, '' ORDER BY t.oid)
                     FROM pg_trigger t,
                          storagelab_internal.dependent_sql('pg_trigger'::regclass, t.oid, 0, 'n',
                            'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false) x
                    WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), '')
      || coalesce((SELECT string_agg((x.o).create_sql, '' ORDER BY w.oid)
                     FROM pg_rewrite w,
                          storagelab_internal.dependent_sql('pg_rewrite'::regclass, w.oid, 0, 'n',
                            'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false) x
                    WHERE w.ev_class = c.oid AND w.rulename <> '_RETURN'), '')
    FROM pg_class c WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_view_parts(oid) IS
  'statements re-creating what a view or materialized view loses when dropped: column defaults, indexes, triggers, rules, with their comments';

-- The objects outside the tables that follow a table by OID and so must be
-- dropped before the swap and re-created after it (their definitions name
-- the table by name, which is the new table's then): views and
-- materialized views (over the tables, and over those, level by level),
-- rules and policies of other tables, functions with an SQL-standard body
-- or taking or returning the rows of a table or view, and the views, rules,
-- policies and SQL-standard functions of other tables over such a function
-- (CREATE VIEW v AS SELECT f(t) FROM t: one level deeper than the function,
-- so dropped before it and re-created after it, as the blocking script does).
-- depth: re-create in ascending order, drop in descending order.  Found
-- through dependent_refs, described by dependent_sql (part 22:
-- the kinds both walks share); moved: the kinds view, materialized_view,
-- rule, policy and function.  Any other object depending on a table is
-- refused (0A000, naming it), and so is any object of the tables
-- themselves over such a function (the old table keeps it, and it would
-- keep the function from being dropped).  The tables'
-- own objects (indexes, constraints, triggers, policies, rules, statistics,
-- publication membership) are the phases' business, not this function's.
CREATE FUNCTION storagelab_internal.rewrite_dependents(relids oid[])
RETURNS TABLE (depth int, classid oid, objid oid, identity text, drop_sql text, create_sql text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  frontier oid[] := relids;
  next_f   oid[];
  fns      oid[] := '{}';   -- functions of the tables' rows found on this level: their dependents are on the next
  next_fns oid[];
  lvl      int := 0;
  d        record;
  own      boolean;
  o        storagelab.bigint_migration_object;
  found_rows storagelab.bigint_migration_object[] := '{}';
BEGIN
  -- the partitions too: objects that follow a partition, and its own objects
  relids := ARRAY(SELECT m.relid FROM storagelab_internal.rewrite_members(relids) m);
  frontier := relids;
  WHILE cardinality(frontier) + cardinality(fns) > 0 LOOP
    lvl := lvl + 1;
    IF lvl > 100 THEN
      RAISE EXCEPTION 'views nested too deep' USING ERRCODE = 'feature_not_supported',
        HINT = 'The engine follows at most 100 levels of views over views.';
    END IF;
    next_f := '{}';
    next_fns := '{}';
    FOR d IN
      SELECT DISTINCT dep.classid, dep.objid, dep.refclassid, dep.refobjid,
             w.ev_class, w.rulename, p.polrelid, c.contype, c.conrelid, c.confrelid
        FROM (SELECT * FROM storagelab_internal.dependent_refs('pg_class'::regclass, frontier, 0) r
               -- of a row type: a function taking or returning a table's or view's rows
               WHERE NOT r.rowtype OR r.classid = 'pg_proc'::regclass
              UNION ALL
              -- what uses such a function (below: refused when it is one of the tables' own)
              SELECT * FROM storagelab_internal.dependent_refs('pg_proc'::regclass, fns, 0)) dep
        LEFT JOIN pg_rewrite w ON dep.classid = 'pg_rewrite'::regclass AND w.oid = dep.objid
        LEFT JOIN pg_policy p ON dep.classid = 'pg_policy'::regclass AND p.oid = dep.objid
        LEFT JOIN pg_constraint c ON dep.classid = 'pg_constraint'::regclass AND c.oid = dep.objid
       WHERE dep.deptype = 'n'
         -- the tables' own objects (defaults and generated columns, constraints,
         -- triggers, indexes, statistics) depending on their columns
         AND (dep.refclassid = 'pg_proc'::regclass OR NOT CASE dep.classid
                   WHEN 'pg_attrdef'::regclass THEN (SELECT x.adrelid FROM pg_attrdef x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_constraint'::regclass THEN c.conrelid = ANY (relids) AND c.contype <> 'f'
                   WHEN 'pg_trigger'::regclass THEN (SELECT x.tgrelid FROM pg_trigger x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_statistic_ext'::regclass THEN (SELECT x.stxrelid FROM pg_statistic_ext x WHERE x.oid = dep.objid) = ANY (relids)
                   WHEN 'pg_class'::regclass THEN (SELECT x.indrelid FROM pg_index x WHERE x.indexrelid = dep.objid) = ANY (relids)
                   WHEN 'pg_publication_rel'::regclass THEN (SELECT x.prrelid FROM pg_publication_rel x WHERE x.oid = dep.objid) = ANY (relids)
                   ELSE false END)
       ORDER BY dep.classid, dep.objid
    LOOP
      own := coalesce(d.ev_class = ANY (relids) OR d.polrelid = ANY (relids), false);
      -- a table's own rule or policy, a view's own query, a foreign key: the phases' business
      CONTINUE WHEN d.refclassid <> 'pg_proc'::regclass
                    AND (own OR coalesce(d.ev_class = d.refobjid, false) OR d.contype IS NOT DISTINCT FROM 'f');
      o := NULL;
      IF NOT own THEN
        -- what the object is and how it is dropped and re-created: the kind's function (part 23)
        o := (storagelab_internal.dependent_sql(d.classid, d.objid, 0, 'n',
                CASE WHEN d.refclassid = 'pg_proc'::regclass THEN 'pg_proc'::regclass ELSE 'pg_class'::regclass END,
                d.refobjid, 0, NULL::storagelab.bigint_migration_object, false)).o;
      END IF;
      IF o.kind IS NULL OR o.kind NOT IN ('view', 'materialized_view', 'rule', 'policy', 'function') THEN
        IF d.refclassid = 'pg_proc'::regclass THEN
          RAISE EXCEPTION 'the rewrite engine cannot move an object over a function of a table''s rows'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('%s uses function %s, which takes or returns the rows of a table the engine rewrites; the function is re-created with the new table''s row type.',
                                  pg_describe_object(d.classid, d.objid, 0), d.refobjid::regprocedure),
                  HINT = format('Drop %s before the script and re-create it afterwards.', pg_describe_object(d.classid, d.objid, 0));
        END IF;
        RAISE EXCEPTION 'the rewrite engine cannot move an object that depends on a table it rewrites'
          USING ERRCODE = 'feature_not_supported',
                DETAIL = format('%s depends on %s.', pg_describe_object(d.classid, d.objid, 0),
                                pg_describe_object(d.refclassid, d.refobjid, 0)),   -- a table, or its row type
                HINT = 'Drop it before the rewrite and re-create it afterwards.';
      END IF;
      -- dropped and re-created: what follows a view is on the next level, and so is
      -- what uses a function (dropped before it, re-created after it)
      IF o.kind IN ('view', 'materialized_view') THEN
        next_f := next_f || d.ev_class;
        o.create_sql := o.create_sql || storagelab_internal.rewrite_view_parts(d.ev_class);
        o.classid := 'pg_class'::regclass; o.objid := d.ev_class;
      ELSE
        o.classid := d.classid; o.objid := d.objid;
      END IF;
      IF d.classid = 'pg_proc'::regclass THEN
        next_fns := next_fns || d.objid;
      END IF;
      o.depth := lvl;
      found_rows := found_rows || o;
    END LOOP;
    frontier := next_f;
    fns := next_fns;
  END LOOP;
  -- an object reached on several levels is re-created after the deepest;
  -- a rule of a view that is re-created goes with its view
  RETURN QUERY
    SELECT max(f.depth), f.classid, f.objid, min(f.identity), min(f.drop_sql), min(f.create_sql)
      FROM unnest(found_rows) f
     WHERE f.kind <> 'rule'
        OR (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = f.objid)
           NOT IN (SELECT v.objid FROM unnest(found_rows) v WHERE v.kind IN ('view', 'materialized_view'))
     GROUP BY f.classid, f.objid
     ORDER BY 1, 2, 3;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_dependents(oid[]) IS
  'objects outside the tables that follow them by OID (views and materialized views over them, level by level, rules and policies of other tables, functions with an SQL-standard body or of the tables'' rows, and the views, rules, policies and functions of other tables over those functions, a level deeper): depth, identity, the SQL that drops and re-creates each; refuses (0A000) any other dependent, and the tables'' own objects over such a function';

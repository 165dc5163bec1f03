-- storagelab install script, part 22: the INT -> BIGINT dependency model.
--
--   storagelab.bigint_migration_group_objects(relations[], column_names[])
--   storagelab.bigint_migration_objects(relation, column_name)
--       every column of the foreign-key component of the requested columns
--       and every object that depends on them, with how a migration handles
--       it: one row per object (storagelab.bigint_migration_object), built
--       by the functions of part 23, one per kind.  The script writers
--       (parts 24 and 67) read only these rows, built once per script.
--   storagelab_internal.dependent_refs, dependent_sql: the
--       catalog query and the table of kinds that this walk and the
--       rewrite engine's (rewrite_dependents, part 60) share.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The requested columns exist and are integer columns of tables.
CREATE FUNCTION storagelab_internal.bigint_migration_check_columns(relations regclass[], column_names name[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  r record;
  i int;
BEGIN
  IF relations IS NULL OR column_names IS NULL OR cardinality(relations) = 0
     OR cardinality(relations) <> cardinality(column_names)
     OR array_position(relations, NULL) IS NOT NULL OR array_position(column_names, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'relations and column names must be non-empty arrays of the same length without NULLs'
      USING ERRCODE = 'null_value_not_allowed',
            HINT = 'Call storagelab.bigint_migration_group_objects(ARRAY[''schema.table''::regclass], ARRAY[''column''::name]).';
  END IF;
  FOR i IN 1 .. cardinality(relations) LOOP
    SELECT c.relkind, a.attnum, format_type(a.atttypid, a.atttypmod) AS typ,
           coalesce(nullif(t.typbasetype, 0), t.oid) IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) AS is_int INTO r
      FROM pg_class c LEFT JOIN pg_attribute a
        ON a.attrelid = c.oid AND a.attname = column_names[i] AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_type t ON t.oid = a.atttypid
     WHERE c.oid = relations[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'relation with OID % does not exist', relations[i]::oid
        USING ERRCODE = 'undefined_table', HINT = 'Pass an existing table, for example ''public.orders''::regclass.';
    ELSIF r.relkind NOT IN ('r', 'p') THEN
      RAISE EXCEPTION '"%" is not a table', relations[i]
        USING ERRCODE = 'wrong_object_type',
              DETAIL = 'Only columns of tables and partitioned tables can be converted to bigint.',
              HINT = 'Pass the table the column belongs to (for a view, its base table).';
    END IF;
    PERFORM storagelab_internal.refuse_other_temp(relations[i], 'convert a column of');
    IF r.attnum IS NULL THEN
      RAISE EXCEPTION 'column "%" of relation "%" does not exist', column_names[i], relations[i]
        USING ERRCODE = 'undefined_column',
              HINT = 'Pass the name of one of the table''s columns, as stored (case-sensitive); system columns cannot be converted.';
    ELSIF NOT r.is_int THEN
      RAISE EXCEPTION 'column "%" of relation "%" is not an integer column', column_names[i], relations[i]
        USING ERRCODE = 'datatype_mismatch', DETAIL = format('Its type is %s.', r.typ),
              HINT = 'Only smallint and integer columns (and their foreign-key components) are converted to bigint.';
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_check_columns(regclass[], name[]) IS
  'raises the error for a requested column that is missing or is not an integer column of a table';

-- The component: closure of the start columns over foreign keys (both
-- directions, composite keys pair by position) and inheritance/partitioning
-- (a column and the same-named column of every parent and child).
CREATE FUNCTION storagelab_internal.bigint_migration_component(relations regclass[], column_names name[],
                                                               OUT crel oid[], OUT catt int2[])
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
  WITH RECURSIVE edges(r1, a1, r2, a2) AS (
    SELECT c.conrelid, k.a1, c.confrelid, k.a2
      FROM pg_constraint c, unnest(c.conkey, c.confkey) AS k(a1, a2)
     WHERE c.contype = 'f'
    UNION ALL
    SELECT i.inhrelid, ca.attnum, i.inhparent, pa.attnum
      FROM pg_inherits i
      JOIN pg_attribute ca ON ca.attrelid = i.inhrelid AND ca.attnum > 0 AND NOT ca.attisdropped
      JOIN pg_attribute pa ON pa.attrelid = i.inhparent AND pa.attname = ca.attname AND NOT pa.attisdropped
  ), und AS (
    SELECT r1, a1, r2, a2 FROM edges UNION SELECT r2, a2, r1, a1 FROM edges
  ), intcols AS (
    -- only integer columns (and domains over them, reported as blockers)
    -- take part: a composite key's text column pairs are left alone
    SELECT a.attrelid, a.attnum
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attnum > 0 AND NOT a.attisdropped
       AND coalesce(nullif(t.typbasetype, 0), t.oid) IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
  ), comp(relid, attnum) AS (
    SELECT s.rel::oid, a.attnum
      FROM unnest(relations, column_names) AS s(rel, col)
      JOIN pg_attribute a ON a.attrelid = s.rel AND a.attname = s.col
    UNION
    SELECT u.r2, u.a2 FROM comp JOIN und u ON u.r1 = comp.relid AND u.a1 = comp.attnum
     WHERE EXISTS (SELECT 1 FROM intcols ic WHERE ic.attrelid = u.r2 AND ic.attnum = u.a2)
  )
  SELECT array_agg(relid ORDER BY relid, attnum), array_agg(attnum ORDER BY relid, attnum) FROM comp
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_component(regclass[], name[]) IS
  'the foreign-key and inheritance component of the given columns, as parallel arrays of relation OIDs and column numbers sorted by both';

-- The one catalog query of both dependency walks (bigint_migration_walk,
-- rewrite_dependents): the pg_depend rows referencing objs of catalog (with
-- subid > 0 only those naming that column), and for relations (subid 0)
-- those referencing their row type or its array type (rowtype: functions
-- taking or returning their rows, columns of that type).  Each walk keeps
-- the dependency types and rows it follows.
CREATE FUNCTION storagelab_internal.dependent_refs(catalog oid, objs oid[], subid int)
RETURNS TABLE (classid oid, objid oid, objsubid int, deptype "char", refclassid oid, refobjid oid, rowtype boolean)
LANGUAGE plpgsql STABLE   -- plpgsql: its plan is kept for the session (called per object)
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN QUERY
  SELECT d.classid, d.objid, d.objsubid, d.deptype, d.refclassid, d.refobjid, false
    FROM pg_depend d
   WHERE d.refclassid = catalog AND d.refobjid = ANY (objs) AND (subid = 0 OR d.refobjsubid = subid)
  UNION ALL
  SELECT d.classid, d.objid, d.objsubid, d.deptype, d.refclassid, d.refobjid, true
    FROM pg_depend d
   WHERE catalog = 'pg_class'::regclass AND subid = 0 AND d.refclassid = 'pg_type'::regclass
     AND d.refobjid IN (SELECT c.reltype FROM pg_class c WHERE c.oid = ANY (objs)
                        UNION ALL
                        SELECT t.typarray FROM pg_class c JOIN pg_type t ON t.oid = c.reltype WHERE c.oid = ANY (objs));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_refs(oid, oid[], int) IS
  'the pg_depend rows referencing these objects (a column of them when subid > 0), and for relations those referencing their row type or its array type: the catalog query of both dependency walks';

-- The dependency walk: objects depending on the component's columns (the
-- level-0 frontier), then on every object that has to be dropped (views,
-- functions, generated columns), level by level.  One function per catalog
-- of the dependent object (part 23) says what it is and how it is handled.
-- prior: the rows found so far (columns, sequences, foreign keys, ...);
-- returns them with the walk's rows appended, and the "child>parent" links
-- between re-created objects that order them (bigint_migration_depths).
CREATE FUNCTION storagelab_internal.bigint_migration_walk(crel oid[], catt int2[], prior storagelab.bigint_migration_object[],
                                                          OUT res storagelab.bigint_migration_object[], OUT links text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o      storagelab.bigint_migration_object;
  r      record;
  dep    record;
  i      int;
  seen   text[];      -- classid:objid:subid of every object already in res
  work   text[];      -- classid:objid:subid of dropped objects whose dependents are still to find
  cur    text;
  wclass oid; wobj oid; wsub int;
  from_component boolean;
  auto   boolean;
  guard  int := 0;
BEGIN
  res := prior;
  links := '{}';
  work := ARRAY(SELECT format('%s:%s:%s', 'pg_class'::regclass::oid, x.r, x.a) FROM unnest(crel, catt) AS x(r, a));
  seen := work || ARRAY(SELECT format('%s:%s:0', p.classid, p.objid) FROM unnest(prior) p WHERE p.kind = 'foreign_key');
  WHILE cardinality(work) > 0 LOOP
    guard := guard + 1;
    IF guard > 10000 THEN
      RAISE EXCEPTION 'dependency walk did not terminate' USING ERRCODE = 'program_limit_exceeded';
    END IF;
    cur := work[1];
    work := work[2:];
    wclass := split_part(cur, ':', 1)::oid; wobj := split_part(cur, ':', 2)::oid; wsub := split_part(cur, ':', 3)::int;
    from_component := wclass = 'pg_class'::regclass AND wsub > 0
                      AND EXISTS (SELECT 1 FROM unnest(crel, catt) AS x(relid, attnum) WHERE x.relid = wobj AND x.attnum = wsub);

    FOR r IN
      SELECT DISTINCT d.classid, d.objid, d.deptype,
             CASE WHEN d.classid = 'pg_class'::regclass THEN d.objsubid ELSE 0 END AS objsubid
        FROM storagelab_internal.dependent_refs(wclass, ARRAY[wobj], wsub) d
       WHERE d.deptype IN ('n', 'a', 'i')
       ORDER BY 1, 2
    LOOP
      CONTINUE WHEN r.classid = 'pg_type'::regclass AND r.deptype = 'i';   -- a view's own row type
      o := NULL; o.depth := 0; o.classid := r.classid; o.objid := r.objid; o.objsubid := r.objsubid;
      auto := CASE WHEN from_component THEN false ELSE r.deptype IN ('a', 'i') END;
      SELECT * INTO dep FROM storagelab_internal.dependent_sql(r.classid, r.objid, r.objsubid, r.deptype, wclass, wobj, wsub, o, auto);
      IF dep.follow IS NOT NULL AND dep.follow <> ALL (work) THEN
        work := work || dep.follow;
      END IF;
      IF dep.link IS NOT NULL THEN
        links := links || dep.link;
      END IF;
      o := dep.o; auto := dep.auto;
      CONTINUE WHEN o.kind IS NULL;                   -- nothing to do with it

      -- A component column's frontier: objects rebuilt in place are info
      -- rows; everything else is dropped and re-created (or a blocker).
      IF o.kind = 'blocker' THEN
        o.identity := coalesce(o.identity, pg_describe_object(r.classid, r.objid, 0));
        o.depth := 0;
        res := res || o;
        CONTINUE;
      END IF;

      -- the object's parent (for depth): the frontier object, if it is a re-created object
      IF NOT from_component THEN
        links := links || format('%s:%s:%s>%s', o.classid, o.objid, coalesce(o.objsubid, 0), cur);
      END IF;

      IF format('%s:%s:%s', o.classid, o.objid, coalesce(o.objsubid, 0)) = ANY (seen) THEN
        -- an index, constraint or statistics object on both a converted
        -- column and a dropped generated column: re-created, not rebuilt
        IF o.create_sql IS NOT NULL AND o.kind IN ('index', 'constraint', 'statistics') THEN
          FOR i IN 1 .. cardinality(res) LOOP
            IF res[i].classid = o.classid AND res[i].objid = o.objid AND res[i].create_sql IS NULL THEN
              o.drop_sql := NULL;
              o.depth := res[i].depth;
              res[i] := o;
            END IF;
          END LOOP;
        END IF;
        CONTINUE;
      END IF;
      seen := seen || format('%s:%s:%s', o.classid, o.objid, coalesce(o.objsubid, 0));
      IF auto AND o.kind NOT IN ('generated_column') THEN
        o.drop_sql := NULL;                           -- removed together with its parent
      END IF;
      res := res || o;
      -- objects that are dropped have dependents of their own
      IF o.kind IN ('view', 'materialized_view', 'function') THEN
        work := work || format('%s:%s:0', o.classid, o.objid);
      ELSIF o.kind = 'generated_column' THEN
        work := work || format('%s:%s:%s', 'pg_class'::regclass::oid, o.relation::oid,
                               (SELECT attnum FROM pg_attribute WHERE attrelid = o.relation AND attname = o.column_name));
      END IF;
    END LOOP;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_walk(oid[], int2[], storagelab.bigint_migration_object[]) IS
  'the dependency walk of the INT->BIGINT model: prior rows plus every object depending on the component, and the links that order re-created objects';

-- The one table of the kinds of dependent objects, asked by both walks and
-- rewrite_view_parts: the function of the object's catalog (part 23) fills
-- in o (kind NULL: nothing to do with it), follow (a further frontier for
-- the walk) and link (a "child>parent" ordering link).  A new kind is one
-- WHEN here and one function in part 23 (CONTRIBUTING.md).
CREATE FUNCTION storagelab_internal.dependent_sql(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  d record;
BEGIN
  CASE p_classid
    WHEN 'pg_class'::regclass THEN d := storagelab_internal.dependent_relation($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_attrdef'::regclass THEN d := storagelab_internal.dependent_default($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_constraint'::regclass THEN d := storagelab_internal.dependent_constraint($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_statistic_ext'::regclass THEN d := storagelab_internal.dependent_statistics($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_rewrite'::regclass THEN d := storagelab_internal.dependent_rewrite($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_trigger'::regclass THEN d := storagelab_internal.dependent_trigger($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_policy'::regclass THEN d := storagelab_internal.dependent_policy($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_proc'::regclass THEN d := storagelab_internal.dependent_function($1, $2, $3, $4, $5, $6, $7, o, auto);
    WHEN 'pg_publication_rel'::regclass THEN d := storagelab_internal.dependent_publication($1, $2, $3, $4, $5, $6, $7, o, auto);
    ELSE
      o.kind := 'blocker';
      o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
      o.sqlstate := '0A000'; o.hint := 'storagelab cannot re-create this kind of object; drop it before the migration and re-create it afterwards.';
      RETURN;
  END CASE;
  o := d.o; auto := d.auto; follow := d.follow; link := d.link;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_sql(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'one object found by the dependency walk, handed to the function of its catalog';

-- Depths: a re-created object comes after everything it was found through
-- (longest path over the walk's links).
CREATE FUNCTION storagelab_internal.bigint_migration_depths(res storagelab.bigint_migration_object[], links text[])
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  i int;
  dep int;
  changed boolean;
  guard int := 0;
BEGIN
  LOOP
    changed := false;
    FOR i IN 1 .. cardinality(res) LOOP
      IF res[i].create_sql IS NULL OR res[i].kind IN ('column', 'sequence', 'identity', 'foreign_key') THEN
        CONTINUE;
      END IF;
      SELECT max(p.depth) + 1 INTO dep
        FROM unnest(links) l, unnest(res) p
       WHERE split_part(l, '>', 1) = format('%s:%s:%s', res[i].classid, res[i].objid, coalesce(res[i].objsubid, 0))
         AND split_part(l, '>', 2) = format('%s:%s:%s', p.classid, p.objid,
                                             CASE WHEN p.kind = 'generated_column'
                                                  THEN (SELECT attnum FROM pg_attribute WHERE attrelid = p.relation AND attname = p.column_name)
                                                  ELSE coalesce(p.objsubid, 0) END);
      dep := greatest(coalesce(dep, 1), 1);
      IF dep > res[i].depth THEN
        res[i].depth := dep;
        changed := true;
      END IF;
    END LOOP;
    EXIT WHEN NOT changed;
    guard := guard + 1;
    IF guard > 20000 THEN
      RAISE EXCEPTION 'dependency depths did not converge' USING ERRCODE = 'program_limit_exceeded';
    END IF;
  END LOOP;
  RETURN res;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_depths(storagelab.bigint_migration_object[], text[]) IS
  'the model rows with the depth of every re-created object set after everything it depends on';

-- The model: every row, built once; the script writers take it as is.
-- Rows come from the producers of part 23, then the walk, then the
-- function hazards (part 28).
CREATE FUNCTION storagelab_internal.bigint_migration_model(relations regclass[], column_names name[])
RETURNS storagelab.bigint_migration_object[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  c    record;
  res  storagelab.bigint_migration_object[];
  w    record;
BEGIN
  PERFORM storagelab_internal.bigint_migration_check_columns(relations, column_names);
  SELECT * INTO c FROM storagelab_internal.bigint_migration_component(relations, column_names);
  res := ARRAY(SELECT x FROM storagelab_internal.bigint_migration_column_rows(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_table_blockers(c.crel, c.catt) x)
      || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_component_objects(c.crel, c.catt) x);
  SELECT * INTO w FROM storagelab_internal.bigint_migration_walk(c.crel, c.catt, res);
  res := storagelab_internal.bigint_migration_depths(w.res, w.links);
  -- functions the converted values reach with a narrower type (part 28)
  RETURN res || ARRAY(SELECT x FROM storagelab_internal.bigint_migration_function_hazards(res) x);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_model(regclass[], name[]) IS
  'the INT->BIGINT dependency model of several columns as one array of rows, built once per script';

-- The model's rows; 22023 when the component has nothing to convert (every
-- column bigint, no sequence to widen, no blocker): the script writers
-- raise their own error for that, per mode.
CREATE FUNCTION storagelab.bigint_migration_group_objects(relations regclass[], column_names name[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  objs storagelab.bigint_migration_object[] := storagelab_internal.bigint_migration_model(relations, column_names);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(objs) x
                  WHERE x.kind = 'blocker' OR (x.kind IN ('column', 'sequence') AND x.create_sql IS NOT NULL)) THEN
    RAISE EXCEPTION 'nothing to convert: every column of the foreign-key component of % is bigint already',
                    (SELECT string_agg(format('%s.%I', u.r, u.c), ', ') FROM unnest(relations, column_names) u(r, c))
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Nothing to do for these columns; storagelab.int_overflow lists the columns that still need a migration.';
  END IF;
  RETURN QUERY SELECT * FROM unnest(objs);
END
$fn$;
COMMENT ON FUNCTION storagelab.bigint_migration_group_objects(regclass[], name[]) IS
  'dependency model of an INT->BIGINT migration of several columns: the union of their foreign-key components and every dependent object, with lock, handling and DDL';

CREATE FUNCTION storagelab.bigint_migration_objects(relation regclass, column_name name)
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM storagelab.bigint_migration_group_objects(ARRAY[$1], ARRAY[$2]) $$;
COMMENT ON FUNCTION storagelab.bigint_migration_objects(regclass, name) IS
  'dependency model of an INT->BIGINT migration: every column of the foreign-key component of relation.column_name and every object depending on it, with kind, lock, handling and the DDL to drop and re-create it';

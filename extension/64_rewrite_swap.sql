-- storagelab install script, part 64: the rewrite engine's phases swap,
-- swap_back, validate, cleanup and discard (see 60_rewrite_model.sql and
-- doc/design/rewrite-engine.md).  The caller runs swap (or swap_back) in
-- one transaction holding ACCESS EXCLUSIVE locks on the tables.
--
-- Every statement is written before the first phase runs, from the
-- catalogs as they are then: names are deterministic, and definitions name
-- the tables by their original names, which after the renames are the new
-- tables' (after swap_back the old ones' again).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The foreign keys the swap re-points: "from" (on a rewritten table; added
-- on the new table) and "to" (on another table, referencing a rewritten
-- one; dropped and added again).  Partition clones go with their parent.
CREATE FUNCTION storagelab_internal.rewrite_foreign_keys(relids oid[])
RETURNS TABLE (conoid oid, direction text, conrelid oid, conname name, qrel text, def text,
               validated boolean, partitioned boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH m AS (SELECT array_agg(x.relid) AS rels FROM storagelab_internal.rewrite_members($1) x)
  SELECT k.oid, CASE WHEN k.conrelid = ANY (m.rels) THEN 'from' ELSE 'to' END, k.conrelid, k.conname,
         storagelab_internal.sql_qname(k.conrelid),
         regexp_replace(pg_get_constraintdef(k.oid), ' NOT VALID$', ''), k.convalidated, c.relkind = 'p' OR fc.relkind = 'p'
    FROM m, pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class fc ON fc.oid = k.confrelid
   WHERE k.contype = 'f' AND k.conparentid = 0 AND (k.conrelid = ANY (m.rels) OR k.confrelid = ANY (m.rels))
   ORDER BY k.conrelid, k.conname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_foreign_keys(oid[]) IS
  'the foreign keys from and to the rewritten tables (and their partitions) that the swap re-points, with their definitions (NOT VALID left out), whether they were validated and whether either side is partitioned (then added valid)';

-- The renames of one table's swap: the table, its indexes and constraints
-- with indexes, its identity sequences (with their position), the old
-- table's statistics objects; back = true gives the renames of swap_back.
CREATE FUNCTION storagelab_internal.rewrite_renames(rel oid, back boolean)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  nspq   text;
  cur    text;   -- the table under the original name after the table renames
  other  text;   -- the other table (old after swap, new after swap_back)
  mine   text;   -- prefix of the objects moved out of the way: old (swap) or new (swap_back)
  theirs text;
  stmts  text[];
BEGIN
  SELECT c.relname, n.nspname INTO t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  nspq := quote_ident(t.nspname);
  mine := CASE WHEN back THEN 'new' ELSE 'old' END;
  theirs := CASE WHEN back THEN 'old' ELSE 'new' END;
  cur := format('%s.%I', nspq, t.relname);
  other := format('%s.%I', nspq, storagelab_internal.rewrite_name(mine, rel));
  stmts := ARRAY[format('ALTER TABLE %s RENAME TO %I', cur, storagelab_internal.rewrite_name(mine, rel)),
                 format('ALTER TABLE %s.%I RENAME TO %I', nspq, storagelab_internal.rewrite_name(theirs, rel), t.relname)];
  -- indexes, and constraints with an index (renaming one renames its index)
  stmts := stmts || ARRAY(
    SELECT x.s
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = rel AND k.contype IN ('p', 'u', 'x'),
           unnest(CASE WHEN k.oid IS NOT NULL
                       THEN ARRAY[format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', other, k.conname, storagelab_internal.rewrite_name(mine, k.oid)),
                                  format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', cur, storagelab_internal.rewrite_name(theirs, k.oid), k.conname)]
                       ELSE ARRAY[format('ALTER INDEX %s.%I RENAME TO %I', nspq, ic.relname, storagelab_internal.rewrite_name(mine, i.indexrelid)),
                                  format('ALTER INDEX %s.%I RENAME TO %I', nspq, storagelab_internal.rewrite_name(theirs, i.indexrelid), ic.relname)] END)
             WITH ORDINALITY x(s, j)
     WHERE i.indrelid = rel AND i.indisvalid
     ORDER BY i.indexrelid, x.j);
  -- identity sequences: renamed, and the one taking over continues where the other stopped
  stmts := stmts || ARRAY(
    SELECT x.s
      FROM pg_depend d JOIN pg_class sc ON sc.oid = d.objid JOIN pg_namespace sn ON sn.oid = sc.relnamespace,
           unnest(ARRAY[format('ALTER SEQUENCE %I.%I RENAME TO %I', sn.nspname, sc.relname, storagelab_internal.rewrite_name(mine, sc.oid)),
                        format('ALTER SEQUENCE %I.%I RENAME TO %I', sn.nspname, storagelab_internal.rewrite_name(theirs, sc.oid), sc.relname),
                        format('SELECT pg_catalog.setval(%L, s.last_value, s.is_called) FROM %I.%I s',
                               format('%I.%I', sn.nspname, sc.relname), sn.nspname, storagelab_internal.rewrite_name(mine, sc.oid))])
             WITH ORDINALITY x(s, j)
     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = rel
       AND d.deptype = 'i' AND sc.relkind = 'S'
     ORDER BY sc.oid, x.j);
  -- sequences owned by a column (serial): owned by the table now under the name
  SELECT stmts || coalesce(array_agg(format('ALTER SEQUENCE %s OWNED BY %s.%I', storagelab_internal.sql_qname(d.objid),
                                            cur, a.attname) ORDER BY d.objid), '{}')
    INTO stmts
    FROM pg_depend d JOIN pg_class sc ON sc.oid = d.objid
    JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = d.refobjsubid
   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = rel
     AND d.deptype = 'a' AND sc.relkind = 'S';
  -- statistics objects of the old table out of the way (their names are the schema's)
  SELECT stmts || coalesce(array_agg(format('ALTER STATISTICS %I.%I RENAME TO %I', sn.nspname,
                                            CASE WHEN back THEN storagelab_internal.rewrite_name('old', x.oid) ELSE x.stxname END,
                                            CASE WHEN back THEN x.stxname ELSE storagelab_internal.rewrite_name('old', x.oid) END) ORDER BY x.oid), '{}')
    INTO stmts FROM pg_statistic_ext x JOIN pg_namespace sn ON sn.oid = x.stxnamespace WHERE x.stxrelid = rel;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_renames(oid, boolean) IS
  'the renames of one table''s swap (or swap_back): table, indexes, constraints with indexes, identity sequences with their position, the old table''s statistics objects; serial sequences re-owned';

-- The table's own objects that the new table gets in the swap (they would
-- fire during the copy, or they are named in their schema): triggers,
-- rules, policies and row security, publication membership, statistics
-- objects, replica identity, CLUSTER ON.  Written for after the renames.
CREATE FUNCTION storagelab_internal.rewrite_own_objects(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  cur    text := storagelab_internal.sql_qname(rel);
  stmts  text[];
BEGIN
  SELECT c.relrowsecurity, c.relforcerowsecurity, c.relreplident INTO t FROM pg_class c WHERE c.oid = rel;
  stmts := ARRAY(
    SELECT x.create_sql FROM (
      -- the kinds' functions of part 23, through dependent_sql (part 22)
      SELECT q.k, q.oid, (d.o).create_sql
        FROM (SELECT 1 AS k, 'pg_trigger'::regclass AS cls, g.oid FROM pg_trigger g WHERE g.tgrelid = rel AND NOT g.tgisinternal AND g.tgparentid = 0
              UNION ALL SELECT 2, 'pg_rewrite'::regclass, w.oid FROM pg_rewrite w WHERE w.ev_class = rel AND w.rulename <> '_RETURN'
              UNION ALL SELECT 3, 'pg_policy'::regclass, p.oid FROM pg_policy p WHERE p.polrelid = rel
              UNION ALL SELECT 4, 'pg_publication_rel'::regclass, pr.oid FROM pg_publication_rel pr WHERE pr.prrelid = rel) q,
             storagelab_internal.dependent_sql(q.cls, q.oid, 0, 'n', 'pg_class'::regclass, 0, 0, NULL::storagelab.bigint_migration_object, false) d
      UNION ALL
      SELECT 5, s.oid, pg_get_statisticsobjdef(s.oid) || E';\n'
             || format(E'ALTER STATISTICS %I.%I OWNER TO %I;\n', sn.nspname, s.stxname, pg_get_userbyid(s.stxowner))
             || CASE WHEN coalesce(s.stxstattarget::int, -1) >= 0
                     THEN format(E'ALTER STATISTICS %I.%I SET STATISTICS %s;\n', sn.nspname, s.stxname, s.stxstattarget) ELSE '' END
             || CASE WHEN obj_description(s.oid, 'pg_statistic_ext') IS NULL THEN ''
                     ELSE format(E'COMMENT ON STATISTICS %I.%I IS %L;\n', sn.nspname, s.stxname,
                                 obj_description(s.oid, 'pg_statistic_ext')) END
        FROM pg_statistic_ext s JOIN pg_namespace sn ON sn.oid = s.stxnamespace WHERE s.stxrelid = rel
    ) x ORDER BY x.k, x.oid);
  IF t.relrowsecurity THEN stmts := stmts || format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', cur); END IF;
  IF t.relforcerowsecurity THEN stmts := stmts || format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', cur); END IF;
  stmts := stmts || CASE t.relreplident
                      WHEN 'f' THEN format('ALTER TABLE %s REPLICA IDENTITY FULL', cur)
                      WHEN 'n' THEN format('ALTER TABLE %s REPLICA IDENTITY NOTHING', cur)
                      WHEN 'i' THEN (SELECT format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', cur, ic.relname)
                                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                      WHERE i.indrelid = rel AND i.indisreplident) END;
  stmts := stmts || (SELECT format('ALTER TABLE %s CLUSTER ON %I', cur, ic.relname)
                       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                      WHERE i.indrelid = rel AND i.indisclustered AND i.indisvalid);
  RETURN array_remove(stmts, NULL);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_own_objects(oid) IS
  'the statements that give the new table, once renamed, the old one''s triggers (enabled state, comments), rules, policies and row security, publication membership (column lists, row filters), statistics objects, replica identity and clustering index';

-- Phase swap (back = false) or swap_back (back = true) of a model (built
-- with its dependents).
CREATE FUNCTION storagelab_internal.rewrite_swap(model storagelab_internal.rewrite_model, back boolean)
RETURNS TABLE (relid oid, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  rel  oid;
  r    record;
  s    text;
  -- the tables and their partitions, parents first
  members oid[] := ARRAY(SELECT m.relid FROM unnest(model.members) m);
BEGIN
  IF model.deps IS NULL THEN
    RAISE EXCEPTION 'rewrite model built without its dependents' USING ERRCODE = 'internal_error';
  END IF;
  -- functions are re-created as they were, without checking their bodies (as pg_dump does)
  relid := NULL; statement := 'SET LOCAL check_function_bodies = off'; RETURN NEXT;
  -- 1. objects that follow the tables by OID, dependents first
  FOR r IN SELECT * FROM unnest(model.deps) d ORDER BY d.depth DESC, d.classid, d.objid LOOP
    relid := NULL; statement := r.drop_sql; RETURN NEXT;
  END LOOP;
  -- 2. foreign keys of other tables referencing the component
  FOR r IN SELECT * FROM unnest(model.fks) f WHERE f.direction = 'to' LOOP
    relid := r.conrelid; statement := format('ALTER TABLE %s DROP CONSTRAINT %I', r.qrel, r.conname); RETURN NEXT;
  END LOOP;
  -- 3. swap_back: what the new tables got in the swap and that is named in
  -- its schema (statistics objects) or lists them (publications)
  IF back THEN
    FOREACH rel IN ARRAY members LOOP
      FOR r IN
        SELECT format('ALTER PUBLICATION %I DROP TABLE %s', p.pubname, storagelab_internal.sql_qname(rel)) AS sql
          FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.prrelid = rel
        UNION ALL
        SELECT format('DROP STATISTICS %I.%I', sn.nspname, s2.stxname)
          FROM pg_statistic_ext s2 JOIN pg_namespace sn ON sn.oid = s2.stxnamespace WHERE s2.stxrelid = rel
      LOOP
        relid := rel; statement := r.sql; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 4. renames
  FOREACH rel IN ARRAY members LOOP
    FOREACH s IN ARRAY storagelab_internal.rewrite_renames(rel, back) LOOP
      relid := rel; statement := s; RETURN NEXT;
    END LOOP;
  END LOOP;
  -- 5. foreign keys: the component's own on the new tables (swap), then
  -- the other tables' again; NOT VALID (phase validate checks them) except
  -- those of or to partitioned tables (rewrite_foreign_keys), added valid.
  -- The old tables keep their foreign keys to each other (a rollback's
  -- replay relies on them), not those to other tables: until cleanup they
  -- would refuse a delete of a row the clients no longer reference (only
  -- the old table does); swap_back gives them back.
  FOR r IN SELECT f.*, f.confrelid <> ALL (members) AS outside FROM unnest(model.fks) f
            WHERE f.direction = 'to' OR NOT back OR f.confrelid <> ALL (members) LOOP
    relid := r.conrelid;
    statement := format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.qrel, r.conname, r.def,
                        CASE WHEN r.partitioned AND r.validated THEN '' ELSE ' NOT VALID' END);
    RETURN NEXT;
    IF r.descr IS NOT NULL THEN
      statement := format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.qrel, r.descr);
      RETURN NEXT;
    END IF;
    IF r.direction = 'from' AND r.outside AND NOT back THEN
      statement := (SELECT format('ALTER TABLE %I.%I DROP CONSTRAINT %I', n.nspname, storagelab_internal.rewrite_name('old', c.oid), r.conname)
                      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = r.conrelid);
      RETURN NEXT;
    END IF;
  END LOOP;
  -- 6. the tables' own objects (swap only: the old tables keep theirs)
  IF NOT back THEN
    FOREACH rel IN ARRAY members LOOP
      FOREACH s IN ARRAY storagelab_internal.rewrite_own_objects(rel) LOOP
        relid := rel; statement := s; RETURN NEXT;
      END LOOP;
    END LOOP;
  END IF;
  -- 7. the objects of step 1 again, on whichever tables now have the names
  FOR r IN SELECT * FROM unnest(model.deps) d ORDER BY d.depth, d.classid, d.objid LOOP
    relid := NULL; statement := r.create_sql; RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_swap(storagelab_internal.rewrite_model, boolean) IS
  'phase swap (or swap_back) of the rewrite engine: dependents dropped, foreign keys of other tables dropped, tables and their indexes, constraints, identity sequences and statistics objects renamed, foreign keys added NOT VALID (the old tables'' foreign keys to other tables moved to the new ones, given back by swap_back), the tables'' own objects given to the new tables (swap), dependents re-created';

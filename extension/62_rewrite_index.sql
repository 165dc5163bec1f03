-- storagelab install script, part 62: the rewrite engine's phase index
-- (see 60_rewrite_model.sql and doc/design/rewrite-engine.md): every valid
-- index of the old table, and its primary key, unique and exclusion
-- constraints, built on the new table under deterministic names
-- (storagelab_new_<OID of the old index or constraint>) that the swap
-- renames to the old ones; CHECK constraints that were NOT VALID; comments.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The DDL of index idx rebuilt on table new_table (schema-qualified,
-- quoted) under new_name, from pg_get_indexdef: every option kept (order,
-- NULLS FIRST/LAST, operator class and its options, collation, INCLUDE,
-- NULLS NOT DISTINCT, storage parameters, predicate, expressions, and the
-- tablespace, which pg_get_indexdef leaves out; see
-- index_copy_sql).  The definition names the old table once,
-- after ON: that name is checked, then replaced.
CREATE FUNCTION storagelab_internal.rewrite_index_def(idx oid, new_name name, new_table text)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix   record;
  def  text;
  head text;
  tail text;
BEGIN
  SELECT i.indisunique, i.indrelid, am.amname, CASE WHEN ic.relkind = 'I' THEN 'ONLY ' ELSE '' END AS only INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  def := storagelab_internal.index_copy_sql(pg_get_indexdef(idx), idx, new_name, false, '{}', '{}');
  head := format('CREATE %sINDEX %I ON %s', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, new_name, ix.only);
  tail := format(' USING %I (', ix.amname);
  IF NOT starts_with(def, head || storagelab_internal.sql_qname(ix.indrelid) || tail) THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  RETURN head || new_table || tail || substr(def, length(head || storagelab_internal.sql_qname(ix.indrelid) || tail) + 1);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_def(oid, name, text) IS
  'DDL of an index rebuilt on another table under another name, every option kept (from pg_get_indexdef, the table name checked and replaced; a partitioned index ON ONLY the table)';

-- The name of the copy of index idx on the new table: storagelab_new_<OID
-- of its primary key, unique or exclusion constraint>, else
-- storagelab_new_<OID of the index>.
CREATE FUNCTION storagelab_internal.rewrite_index_name(idx oid)
RETURNS name
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.rewrite_name('new', coalesce(
           (SELECT k.oid FROM pg_constraint k JOIN pg_index i ON i.indexrelid = $1
             WHERE k.conindid = $1 AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x')), $1))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_name(oid) IS
  'the name of the new copy of an index: storagelab_new_<OID of its constraint, or of the index>';

-- Phase index for one table, or one member of a partitioned tree.  On a
-- partitioned table the indexes are created ON ONLY it (primary keys and
-- unique constraints with ALTER TABLE ONLY), invalid until the indexes of
-- its partitions are attached (rewrite_index).
CREATE FUNCTION storagelab_internal.rewrite_index_table(rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  nspq   text;
  newq   text;
  stmts  text[] := '{}';
  r      record;
  iname  name;
  partitioned boolean;
BEGIN
  SELECT format('%I', n.nspname), format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', c.oid)), c.relkind = 'p'
    INTO nspq, newq, partitioned
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
  FOR r IN
    SELECT i.indexrelid, k.oid AS conoid, k.contype, k.condeferrable, k.condeferred,
           obj_description(i.indexrelid, 'pg_class') AS idescr, obj_description(k.oid, 'pg_constraint') AS cdescr
      FROM pg_index i
      LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = rel AND k.contype IN ('p', 'u', 'x')
     WHERE i.indrelid = rel AND i.indisvalid
     ORDER BY i.indexrelid
  LOOP
    -- (named as the constraint, if any: USING INDEX names the index after it)
    iname := storagelab_internal.rewrite_name('new', coalesce(r.conoid, r.indexrelid));
    IF r.contype = 'x' OR r.contype IS NOT NULL AND partitioned THEN
      -- a partitioned table's key takes no index (USING INDEX): its definition carries every option it can have
      stmts := stmts || format('ALTER TABLE %s%s ADD CONSTRAINT %I %s', CASE WHEN partitioned THEN 'ONLY ' ELSE '' END,
                               newq, iname, pg_get_constraintdef(r.conoid));
    ELSIF r.contype IN ('p', 'u') THEN
      -- the index first, with every option, then the constraint on it (which renames the index to its own name)
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
      stmts := stmts || format('ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I%s', newq, iname,
                               CASE r.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, iname,
                               CASE WHEN r.condeferred THEN ' DEFERRABLE INITIALLY DEFERRED'
                                    WHEN r.condeferrable THEN ' DEFERRABLE' ELSE '' END);
    ELSE
      stmts := stmts || storagelab_internal.rewrite_index_def(r.indexrelid, iname, newq);
    END IF;
    -- statistics targets of expression columns, comments
    SELECT stmts || coalesce(array_agg(format('ALTER INDEX %s.%I ALTER COLUMN %s SET STATISTICS %s',
                                              nspq, iname, a.attnum, a.attstattarget)
                                       ORDER BY a.attnum), '{}')
      INTO stmts
      FROM pg_attribute a WHERE a.attrelid = r.indexrelid AND coalesce(a.attstattarget::int, -1) >= 0;
    IF r.idescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON INDEX %s.%I IS %L', nspq, iname, r.idescr);
    END IF;
    IF r.cdescr IS NOT NULL THEN
      stmts := stmts || format('COMMENT ON CONSTRAINT %I ON %s IS %L', iname, newq, r.cdescr);
    END IF;
  END LOOP;
  -- CHECK constraints that were not valid stay so; comments of the valid ones (created with the table)
  SELECT stmts || coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, k.conname, pg_get_constraintdef(k.oid))
                                     ORDER BY k.conname) FILTER (WHERE NOT k.convalidated AND k.coninhcount = 0), '{}')
               || coalesce(array_agg(format('COMMENT ON CONSTRAINT %I ON %s IS %L', k.conname, newq, obj_description(k.oid, 'pg_constraint'))
                                     ORDER BY k.conname) FILTER (WHERE obj_description(k.oid, 'pg_constraint') IS NOT NULL), '{}')
    INTO stmts
    FROM pg_constraint k WHERE k.conrelid = rel AND k.contype = 'c';
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index_table(oid) IS
  'phase index of the rewrite engine for one table or partition: every valid index and primary key, unique and exclusion constraint of the old table on the new one (storagelab_new_<OID> names; ON ONLY a partitioned table), NOT VALID CHECK constraints, statistics targets and comments';

-- Phase index for one table of a model and, for a partitioned table, its
-- partitions at every level: each one's indexes, then every partition's index
-- attached to its parent's (deepest first: a partitioned index is valid
-- once all its partitions' are attached), as the old ones were.
CREATE FUNCTION storagelab_internal.rewrite_index(model storagelab_internal.rewrite_model, rel oid)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  stmts  text[] := '{}';
  member oid;
BEGIN
  FOR member IN SELECT p.relid FROM unnest(model.members) p WHERE p.root = rel LOOP
    stmts := stmts || storagelab_internal.rewrite_index_table(member);
  END LOOP;
  SELECT stmts || coalesce(array_agg(format('ALTER INDEX %I.%I ATTACH PARTITION %I.%I',
                                            pn.nspname, storagelab_internal.rewrite_index_name(h.inhparent),
                                            cn.nspname, storagelab_internal.rewrite_index_name(h.inhrelid))
                                     ORDER BY m.level DESC, h.inhrelid), '{}')
    INTO stmts
    FROM unnest(model.members) m
    JOIN pg_index i ON i.indrelid = m.relid AND i.indisvalid
    JOIN pg_inherits h ON h.inhrelid = i.indexrelid
    JOIN pg_index pi ON pi.indexrelid = h.inhparent AND pi.indisvalid
    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
    JOIN pg_class pc ON pc.oid = h.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace
   WHERE m.root = rel;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_index(storagelab_internal.rewrite_model, oid) IS
  'phase index of the rewrite engine for one table and its partitions: every valid index and primary key, unique and exclusion constraint on the new tables, partitions'' indexes attached to their parents'' (deepest first), NOT VALID CHECK constraints, statistics targets and comments';

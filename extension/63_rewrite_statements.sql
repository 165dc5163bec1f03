-- storagelab install script, part 63: the rewrite engine's model, read from
-- the catalogs once (rewrite_model), the statements of one phase of a model
-- (rewrite_phase), and the entry point rewrite_statements(tables, phase)
-- (doc/design/rewrite-engine.md).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The model of an engine input (checked: rewrite_columns), with the objects
-- that follow the tables when dependents (phases swap and swap_back read
-- them; the other phases do without the walk).
CREATE FUNCTION storagelab_internal.rewrite_model(tables jsonb, dependents boolean DEFAULT true)
RETURNS storagelab_internal.rewrite_model
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m storagelab_internal.rewrite_model;
BEGIN
  WITH t AS MATERIALIZED (
    SELECT c.relid, c.table_ord, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
      FROM storagelab_internal.rewrite_columns(tables) c GROUP BY c.relid, c.table_ord),
  r AS (SELECT array_agg(t.relid ORDER BY t.table_ord) AS relids FROM t)
  SELECT r.relids, ARRAY(
           SELECT ROW(x.root, x.relid, x.parent, x.level, x.leaf, mc.atts, mc.types)::storagelab_internal.rewrite_member
             FROM storagelab_internal.rewrite_members(r.relids) WITH ORDINALITY x(root, relid, parent, level, leaf, n)
             JOIN t ON t.relid = x.root
            CROSS JOIN LATERAL (
              -- a member's columns matched to its root's by name (a partition or child may order them
              -- otherwise), with the root's new types; then an inheritance child's own, with their types
              SELECT array_agg(y.attnum ORDER BY y.n) AS atts, array_agg(y.typ ORDER BY y.n) AS types
                FROM (SELECT ma.attnum, u.typ, u.n
                        FROM unnest(t.atts, t.types) WITH ORDINALITY u(att, typ, n)
                        JOIN pg_attribute ra ON ra.attrelid = x.root AND ra.attnum = u.att
                        JOIN pg_attribute ma ON ma.attrelid = x.relid AND ma.attname = ra.attname AND NOT ma.attisdropped
                      UNION ALL
                      SELECT a.attnum, format_type(a.atttypid, a.atttypmod), cardinality(t.atts) + a.attnum
                        FROM pg_attribute a
                       WHERE x.relid <> x.root AND a.attrelid = x.relid AND a.attnum > 0 AND NOT a.attisdropped
                         AND NOT EXISTS (SELECT 1 FROM pg_attribute ra WHERE ra.attrelid = x.root AND ra.attname = a.attname
                                           AND ra.attnum > 0 AND NOT ra.attisdropped)) y) mc
            ORDER BY x.n)
    INTO m.relids, m.members FROM r;
  m.fks := ARRAY(
    SELECT ROW(f.conoid, f.direction, f.conrelid, k.confrelid, f.conname, f.qrel, f.def, f.validated, f.partitioned,
               obj_description(f.conoid, 'pg_constraint'))::storagelab_internal.rewrite_fk
      FROM storagelab_internal.rewrite_foreign_keys(m.relids) WITH ORDINALITY f JOIN pg_constraint k ON k.oid = f.conoid
     ORDER BY f.ordinality);
  IF dependents THEN
    m.deps := ARRAY(SELECT ROW(d.depth, d.classid, d.objid, d.identity, d.drop_sql, d.create_sql)::storagelab_internal.rewrite_dep
                      FROM storagelab_internal.rewrite_dependents(m.relids) WITH ORDINALITY d ORDER BY d.ordinality);
  END IF;
  RETURN m;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_model(jsonb, boolean) IS
  'the rewrite engine''s model of an input, read from the catalogs once: the tables, the members of their trees with their columns in the new order and new types, the foreign keys the swap re-points, the objects that follow the tables (unless dependents is false)';

-- The statements of one phase of a model, in order (phase checked by the
-- caller: rewrite_statements).  relation: the table a statement belongs to
-- (copy: the table whose rows it copies; create and index: the table given).
CREATE FUNCTION storagelab_internal.rewrite_phase(model storagelab_internal.rewrite_model, phase text)
RETURNS TABLE (ord int, relation regclass, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  mem storagelab_internal.rewrite_member;
  s   text;
  n   int := 0;
BEGIN
  IF phase IN ('create', 'index') THEN
    -- create: each member (a table given, then its partitions or children); index: each table given, with its tree
    FOREACH mem IN ARRAY model.members LOOP
      CONTINUE WHEN phase = 'index' AND mem.relid <> mem.root;
      FOREACH s IN ARRAY CASE phase WHEN 'create' THEN storagelab_internal.rewrite_create(mem)
                                    ELSE storagelab_internal.rewrite_index(model, mem.root) END LOOP
        n := n + 1; ord := n; relation := mem.root; statement := regexp_replace(s, ';\s*$', ''); RETURN NEXT;
      END LOOP;
    END LOOP;
  ELSIF phase IN ('swap', 'swap_back') THEN
    RETURN QUERY SELECT (row_number() OVER ())::int, x.relid::regclass, regexp_replace(x.statement, ';\s*$', '')
                   FROM storagelab_internal.rewrite_swap(model, phase = 'swap_back') x;
  ELSE
    RETURN QUERY
      -- copy: one statement per table that holds rows (each partition, each table of an inheritance tree)
      SELECT (row_number() OVER (ORDER BY m.n))::int, m.relid::regclass, storagelab_internal.rewrite_copy(m.relid, m.atts, m.types)
        FROM unnest(model.members) WITH ORDINALITY m(root, relid, parent, level, leaf, atts, types, n)
       WHERE phase = 'copy' AND m.leaf
      UNION ALL
      SELECT (row_number() OVER (ORDER BY f.n))::int, f.conrelid::regclass, format('ALTER TABLE %s VALIDATE CONSTRAINT %I', f.qrel, f.conname)
        FROM unnest(model.fks) WITH ORDINALITY f(conoid, direction, conrelid, confrelid, conname, qrel, def, validated, partitioned, descr, n)
       WHERE phase = 'validate' AND f.validated AND NOT f.partitioned
      UNION ALL
      -- every table of a tree: an inheritance child is not dropped with its parent
      SELECT 1, model.relids[1]::regclass,
             format('DROP TABLE %s', string_agg(format('%I.%I', ns.nspname,
                      storagelab_internal.rewrite_name(CASE phase WHEN 'cleanup' THEN 'old' ELSE 'new' END, m.relid)), ', ' ORDER BY m.n))
        FROM unnest(model.members) WITH ORDINALITY m(root, relid, parent, level, leaf, atts, types, n)
        JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace ns ON ns.oid = c.relnamespace
       WHERE phase IN ('cleanup', 'discard')
      HAVING phase IN ('cleanup', 'discard');
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_phase(storagelab_internal.rewrite_model, text) IS
  'the statements of one phase of a rewrite engine model (rewrite_model), in order: create, copy, index, swap, validate, swap_back, cleanup or discard';

CREATE FUNCTION storagelab_internal.rewrite_statements(tables jsonb, phase text)
RETURNS TABLE (ord int, relation regclass, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF phase IS NULL OR phase NOT IN ('create', 'copy', 'index', 'swap', 'validate', 'swap_back', 'cleanup', 'discard') THEN
    RAISE EXCEPTION 'unknown rewrite phase %', coalesce(quote_literal(phase), 'NULL')
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The phases are create, copy, index, swap, validate, swap_back, cleanup and discard.';
  END IF;
  RETURN QUERY SELECT * FROM storagelab_internal.rewrite_phase(
                 storagelab_internal.rewrite_model(tables, phase IN ('swap', 'swap_back')), phase);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_statements(jsonb, text) IS
  'the copy-and-swap rewrite engine: the statements of one phase (create, copy, index, swap, validate, swap_back, cleanup, discard) that rebuild the given tables in a new column order and types beside the old ones and swap them in, in order; write every phase before running the first (doc/design/rewrite-engine.md); one model (rewrite_model) per call: a caller writing several phases builds it once and calls rewrite_phase';

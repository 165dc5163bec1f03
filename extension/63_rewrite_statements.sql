-- storagelab install script, part 63: the rewrite engine's entry point,
-- storagelab_internal.rewrite_statements(tables, phase): the statements of
-- one phase, in order (doc/design/rewrite-engine.md).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

CREATE FUNCTION storagelab_internal.rewrite_statements(tables jsonb, phase text)
RETURNS TABLE (ord int, relation regclass, statement text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  relids oid[] := '{}';
  t      record;
  r      record;
  s      text;
  n      int := 0;
BEGIN
  IF phase IS NULL OR phase NOT IN ('create', 'copy', 'index', 'swap', 'validate', 'swap_back', 'cleanup', 'discard') THEN
    RAISE EXCEPTION 'unknown rewrite phase %', coalesce(quote_literal(phase), 'NULL')
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The phases are create, copy, index, swap, validate, swap_back, cleanup and discard.';
  END IF;
  -- phases create, index and copy table by table; copy: one statement per table that holds rows (each
  -- partition of a partitioned table, each table of an inheritance tree), relation: that table
  FOR t IN
    SELECT c.relid, array_agg(c.attnum ORDER BY c.pos) AS atts, array_agg(c.new_type ORDER BY c.pos) AS types
      FROM storagelab_internal.rewrite_columns(tables) c
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    relids := relids || t.relid;
    IF phase = 'copy' THEN
      FOR r IN
        SELECT m.relid, storagelab_internal.rewrite_copy(m.relid, mc.atts, mc.types) AS statement
          FROM storagelab_internal.rewrite_members(ARRAY[t.relid]) m
         CROSS JOIN LATERAL storagelab_internal.rewrite_member_columns(m.relid, t.relid, t.atts, t.types) mc
         WHERE m.leaf
         ORDER BY m.level, m.relid
      LOOP
        n := n + 1; ord := n; relation := r.relid; statement := r.statement; RETURN NEXT;
      END LOOP;
    ELSIF phase IN ('create', 'index') THEN
      FOREACH s IN ARRAY CASE phase WHEN 'create' THEN storagelab_internal.rewrite_create(t.relid, t.atts, t.types)
                                    ELSE storagelab_internal.rewrite_index(t.relid) END LOOP
        n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(s, ';\s*$', ''); RETURN NEXT;
      END LOOP;
    END IF;
  END LOOP;
  IF phase IN ('swap', 'swap_back') THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_swap(relids, phase = 'swap_back') LOOP
      n := n + 1; ord := n; relation := t.relid; statement := regexp_replace(t.statement, ';\s*$', ''); RETURN NEXT;
    END LOOP;
  ELSIF phase = 'validate' THEN
    FOR t IN SELECT * FROM storagelab_internal.rewrite_foreign_keys(relids) WHERE validated AND NOT partitioned LOOP
      n := n + 1; ord := n; relation := t.conrelid;
      statement := format('ALTER TABLE %s VALIDATE CONSTRAINT %I', t.qrel, t.conname);
      RETURN NEXT;
    END LOOP;
  ELSIF phase IN ('cleanup', 'discard') THEN
    ord := 1; relation := relids[1];
    -- every table of a tree: an inheritance child is not dropped with its parent
    SELECT format('DROP TABLE %s', string_agg(format('%I.%I', ns.nspname,
                    storagelab_internal.rewrite_name(CASE phase WHEN 'cleanup' THEN 'old' ELSE 'new' END, c.oid)), ', ' ORDER BY u.n))
      INTO statement
      FROM storagelab_internal.rewrite_members(relids) WITH ORDINALITY u(root, r, parent, level, leaf, n)
      JOIN pg_class c ON c.oid = u.r JOIN pg_namespace ns ON ns.oid = c.relnamespace;
    RETURN NEXT;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_statements(jsonb, text) IS
  'the copy-and-swap rewrite engine: the statements of one phase (create, copy, index, swap, validate, swap_back, cleanup, discard) that rebuild the given tables in a new column order and types beside the old ones and swap them in, in order; write every phase before running the first (doc/design/rewrite-engine.md)';

-- storagelab install script, part 24: what the online INT -> BIGINT phases
-- (part 25) need, derived once from the model rows of part 21: the
-- converted columns and their shadow columns, the trees of partitions and
-- inheritance children, the indexes and keys to build on the shadow columns,
-- and the reasons the online mode refuses.  Also the new index's DDL, from
-- the old index's definition in the model.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

CREATE TYPE storagelab_internal.bigint_online_model AS (
  objs         storagelab.bigint_migration_object[],  -- the model rows
  relations    regclass[],   -- the requested columns
  column_names name[],
  mid          text,         -- migration id: sl + 12 hex digits of a hash of the converted columns
  c_rel        oid[],        -- per converted column: its table,
  c_att        int2[],       --   column number,
  c_name       name[],       --   name,
  c_new        name[],       --   shadow column,
  c_old        name[],       --   name of the old column after the swap,
  c_nn         boolean[],    --   NOT NULL
  tabs         oid[],        -- tables with converted columns (roots of their trees)
  tree         oid[],        -- those tables, their partitions and inheritance children
  leaves       oid[],        -- members of tree with storage (backfilled one by one)
  targets      oid[],        -- where the sync trigger is created (partitions get clones)
  t_rel        oid[],        -- per member of tree and converted column: relation,
  t_att        int2[],       --   its column number there,
  t_new        name[],       --   the shadow column,
  t_name       name[],       --   the column name,
  t_root       oid[],        --   the root whose ALTER converts it
  late_idx     oid[],        -- indexes using the column in an expression or predicate: re-built after the swap
  late_chk     oid[],        -- CHECK constraints on the column: re-added NOT VALID in the swap, validated in cleanup
  fk_oid       oid[],        -- per new foreign key: the old one (of the component),
  fk_rel       oid[],        --   the table it is added to (each partition, for a key on a partitioned table),
  fk_new       name[],       --   its name until the swap,
  fk_final     name[],       --   its name after the swap
  lock_list    text,         -- every table, for LOCK TABLE
  pre          text          -- PL/pgSQL statements that set "swapped" once the swap has happened
);
COMMENT ON TYPE storagelab_internal.bigint_online_model IS
  'what the phases of an online INT->BIGINT script need, derived once from the model';

-- The online model of mode 'shadow': refuses (with every reason) what the shadow mode cannot do.
CREATE FUNCTION storagelab_internal.bigint_migration_online_model(objs storagelab.bigint_migration_object[],
                                                                  relations regclass[], column_names name[])
RETURNS storagelab_internal.bigint_online_model
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  m            storagelab_internal.bigint_online_model;
  o            storagelab.bigint_migration_object;
  r            record;
  q            record;
  i            int;
  blockers     text[] := '{}';
  all_tables   text[];
  mid          text;
  c_rel        oid[] := '{}';
  c_att        int2[] := '{}';
  c_name       name[] := '{}';
  c_new        name[] := '{}';
  c_old        name[] := '{}';
  c_nn         boolean[] := '{}';
  tabs         oid[] := '{}';
  tree         oid[] := '{}';
  leaves       oid[] := '{}';
  targets      oid[] := '{}';
  t_rel        oid[] := '{}';
  t_att        int2[] := '{}';
  t_new        name[] := '{}';
  t_name       name[] := '{}';
  t_root       oid[] := '{}';
  late_idx     oid[] := '{}';
  late_chk     oid[] := '{}';
  fk_oid       oid[] := '{}';
  fk_rel       oid[] := '{}';
  fk_new       name[] := '{}';
  fk_final     name[] := '{}';
  lock_list    text;
  pre          text;
BEGIN
  -- Blockers of the model itself, then what the online plan cannot do yet.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'blocker' LOOP
    blockers := blockers || format('%s (SQLSTATE %s): %s', o.blocker, o.sqlstate, o.hint);
  END LOOP;
  FOR o IN SELECT * FROM unnest(objs) b
            WHERE b.kind = 'generated_column'
               OR (b.kind = 'identity' AND (EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = b.relation OR h.inhparent = b.relation)
                                            OR (SELECT relkind FROM pg_class WHERE oid = b.relation) <> 'r'))
               OR (b.kind = 'constraint' AND EXISTS (SELECT 1 FROM pg_constraint c WHERE c.oid = b.objid AND c.contype NOT IN ('p', 'u', 'c', 'n')))   -- 'n': NOT NULL, PostgreSQL 18+
  LOOP
    blockers := blockers || format('%s: %s is not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', o.identity, o.kind);
  END LOOP;
  -- Converted columns.
  FOR o IN SELECT * FROM unnest(objs) b WHERE b.kind = 'column' AND b.create_sql IS NOT NULL ORDER BY b.relation::oid, b.objsubid LOOP
    c_rel := c_rel || o.relation::oid; c_att := c_att || o.objsubid::int2; c_name := c_name || o.column_name;
    c_new := c_new || format('storagelab_new_%s', o.objsubid)::name;
    c_old := c_old || format('storagelab_old_%s', o.objsubid)::name;
    c_nn := c_nn || (SELECT attnotnull FROM pg_attribute WHERE attrelid = o.relation AND attnum = o.objsubid);
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = o.relation AND NOT attisdropped
                  AND attname IN (format('storagelab_new_%s', o.objsubid), format('storagelab_old_%s', o.objsubid))) THEN
      -- a previous run of this very migration left them: fine, phases are re-runnable
      NULL;
    END IF;
  END LOOP;
  tabs := ARRAY(SELECT DISTINCT u FROM unnest(c_rel) u ORDER BY 1);
  FOR i IN 1 .. cardinality(c_rel) LOOP
    FOR r IN
      WITH RECURSIVE tr(oid) AS (SELECT c_rel[i] UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
      SELECT tr.oid, a.attnum FROM tr JOIN pg_attribute a ON a.attrelid = tr.oid AND a.attname = c_name[i] AND NOT a.attisdropped
       ORDER BY 1
    LOOP
      t_rel := t_rel || r.oid; t_att := t_att || r.attnum; t_new := t_new || c_new[i]; t_name := t_name || c_name[i];
      t_root := t_root || c_rel[i];
    END LOOP;
  END LOOP;
  tree := ARRAY(SELECT DISTINCT u FROM unnest(t_rel) u ORDER BY 1);
  late_chk := ARRAY(SELECT c.oid FROM pg_constraint c
                     WHERE c.contype = 'c' AND c.conrelid = ANY (tree) AND c.coninhcount = 0
                       AND EXISTS (SELECT 1 FROM unnest(t_rel, t_att) AS cc(r2, a) WHERE cc.r2 = c.conrelid AND cc.a = ANY (c.conkey))
                     ORDER BY 1);
  leaves := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind = 'r' ORDER BY 1);
  targets := ARRAY(SELECT c.oid FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1);
  FOR r IN SELECT c.oid, storagelab_internal.bigint_migration_qname(c.oid) AS qn FROM pg_class c WHERE c.oid = ANY (tree) AND c.relkind NOT IN ('r', 'p') LOOP
    blockers := blockers || format('%s is a foreign table in the tree of a converted table: not supported by the shadow mode (SQLSTATE 0A000): use mode ''blocking''.', r.qn);
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn, storagelab_internal.bigint_migration_qname(c.confrelid) AS fqn
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.confrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') AND t.relkind = 'p'
  LOOP
    blockers := blockers || format('foreign key %I on %s references the partitioned table %s, whose new unique key exists only after the swap: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.conname, r.qn, r.fqn);
  END LOOP;
  -- the new foreign keys: PostgreSQL 15 cannot add one NOT VALID to a partitioned table, so a key
  -- of a partitioned table is added to each partition, and in the swap to the parent, which
  -- attaches the partitions' validated keys without a scan
  FOR r IN
    SELECT c.oid, c.conname, c.conrelid, t.relkind FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     WHERE c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key') ORDER BY 1
  LOOP
    IF r.relkind = 'p' THEN
      FOR q IN
        WITH RECURSIVE tr(oid) AS (SELECT r.conrelid UNION SELECT h.inhrelid FROM pg_inherits h JOIN tr ON h.inhparent = tr.oid)
        SELECT tr.oid, (SELECT cc.conname FROM pg_constraint cc WHERE cc.conrelid = tr.oid AND cc.conparentid = r.oid) AS clone
          FROM tr JOIN pg_class k ON k.oid = tr.oid WHERE k.relkind = 'r' ORDER BY 1
      LOOP
        fk_oid := fk_oid || r.oid; fk_rel := fk_rel || q.oid;
        fk_new := fk_new || format('storagelab_new_%s_%s', r.oid, q.oid)::name; fk_final := fk_final || coalesce(q.clone, r.conname);
      END LOOP;
    ELSE
      fk_oid := fk_oid || r.oid; fk_rel := fk_rel || r.conrelid;
      fk_new := fk_new || format('storagelab_new_%s', r.oid)::name; fk_final := fk_final || r.conname;
    END IF;
  END LOOP;

  -- Indexes containing a converted column: their key columns must be plain
  -- columns (an expression or a predicate using the column cannot be moved
  -- by name).
  FOR r IN
    SELECT DISTINCT i.indexrelid, storagelab_internal.bigint_migration_qname(i.indexrelid) AS qn
      FROM pg_index i
      JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid AND d.refclassid = 'pg_class'::regclass
      JOIN unnest(t_rel, t_att) AS cc(r, a) ON cc.r = d.refobjid AND cc.a = d.refobjsubid
     WHERE i.indrelid = ANY (tree)
  LOOP
    IF (SELECT count(*) FROM pg_depend d, unnest(t_rel, t_att) AS cc(r, a)
         WHERE d.classid = 'pg_class'::regclass AND d.objid = r.indexrelid AND d.refobjid = cc.r AND d.refobjsubid = cc.a)
       > (SELECT count(*) FROM pg_index i, unnest(i.indkey::int2[]) AS kk(v), unnest(t_rel, t_att) AS cc(r, a)
           WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a = kk.v) THEN
      IF (SELECT i.indisunique OR i.indisreplident OR ic.relkind = 'I' FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indexrelid = r.indexrelid) THEN
        blockers := blockers || format('index %s uses a converted column in an expression or predicate and is unique, partitioned or the replica identity: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
      ELSE
        late_idx := late_idx || r.indexrelid;
      END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i, unnest(i.indkey::int2[], i.indclass::oid[]) WITH ORDINALITY AS u(a, opc, n), unnest(t_rel, t_att) AS cc(r, a2)
                WHERE i.indexrelid = r.indexrelid AND cc.r = i.indrelid AND cc.a2 = u.a AND u.n <= i.indnkeyatts
                  AND NOT EXISTS (SELECT 1 FROM pg_opclass oc WHERE oc.oid = u.opc AND oc.opcdefault)) THEN
      blockers := blockers || format('index %s uses a non-default operator class on a converted column: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
    END IF;
    IF EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = r.indexrelid AND c.contype = 'x') THEN
      blockers := blockers || format('index %s backs an exclusion constraint: not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.qn);
    END IF;
  END LOOP;
  FOR r IN
    SELECT c.conname, storagelab_internal.bigint_migration_qname(c.conrelid) AS qn FROM pg_constraint c
     WHERE c.contype = 'f' AND c.oid IN (SELECT b.objid FROM unnest(objs) b WHERE b.kind = 'foreign_key')
       AND c.confdelsetcols IS NOT NULL
  LOOP
    blockers := blockers || format('foreign key %I on %s uses ON DELETE SET NULL/DEFAULT (columns): not supported by the shadow mode (SQLSTATE 0A000): use mode ''online'' or ''blocking''.', r.conname, r.qn);
  END LOOP;

  PERFORM storagelab_internal.bigint_migration_refuse(objs, blockers, 'online');

  mid := 'sl' || left(md5(array_to_string(ARRAY(SELECT format('%s.%s', a, b) FROM unnest(c_rel, c_att) AS u(a, b) ORDER BY 1), ',')), 12);
  all_tables := ARRAY(SELECT DISTINCT storagelab_internal.bigint_migration_qname(x1.relation)
                        FROM unnest(objs) x1 JOIN pg_class c ON c.oid = x1.relation
                       WHERE c.relkind IN ('r', 'p') ORDER BY 1);
  lock_list := array_to_string(all_tables, ', ');

  -- a state check used by several phases: has the swap happened?
  pre := '';
  FOR i IN 1 .. cardinality(c_rel) LOOP
    pre := pre || format(E'  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped) THEN swapped := true; END IF;\n',
                         storagelab_internal.bigint_migration_qname(c_rel[i]), c_old[i]);
  END LOOP;
  m := ROW(objs, relations, column_names, mid, c_rel, c_att, c_name, c_new, c_old, c_nn, tabs, tree, leaves, targets, t_rel, t_att, t_new, t_name, t_root, late_idx, late_chk, fk_oid, fk_rel, fk_new, fk_final, lock_list, pre);
  RETURN m;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_online_model(storagelab.bigint_migration_object[], regclass[], name[]) IS
  'derives what the online phases need from the model rows; refuses, listing every reason, what the shadow mode cannot do';

-- The elements of a parenthesized, comma-separated list that starts at
-- position pos of def (just after its "("), as PostgreSQL's deparsers print
-- it: commas inside parentheses, quoted identifiers and string literals do
-- not separate elements.  Returns the elements and the position just after
-- the closing ")".
CREATE FUNCTION storagelab_internal.bigint_migration_split_list(def text, pos int, OUT elems text[], OUT next_pos int)
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  depth int := 0;
  quote text := NULL;      -- '"' or '''' while inside one
  ch text;
  start int := pos;
  i int := pos;
BEGIN
  elems := '{}';
  WHILE i <= length(def) LOOP
    ch := substr(def, i, 1);
    IF quote IS NOT NULL THEN
      IF ch = quote THEN
        IF substr(def, i + 1, 1) = quote THEN
          i := i + 1;               -- a doubled quote inside the quoted text
        ELSE
          quote := NULL;
        END IF;
      END IF;
    ELSIF ch IN ('"', '''') THEN
      quote := ch;
    ELSIF ch = '(' OR ch = '[' THEN
      depth := depth + 1;
    ELSIF (ch = ')' OR ch = ']') AND depth > 0 THEN
      depth := depth - 1;
    ELSIF ch = ')' THEN
      elems := elems || substr(def, start, i - start);
      next_pos := i + 1;
      RETURN;
    ELSIF ch = ',' AND depth = 0 THEN
      elems := elems || substr(def, start, i - start);
      start := i + 2;               -- ", "
      i := i + 1;
    END IF;
    i := i + 1;
  END LOOP;
  RAISE EXCEPTION 'cannot read the column list of an index definition'
    USING ERRCODE = 'internal_error', DETAIL = def;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_split_list(text, int) IS
  'the top-level elements of a parenthesized list in a deparsed definition, and the position after it';

-- The DDL of a copy of index idx under the name new_name, from its
-- definition def (pg_get_indexdef, from the model): every column keeps its
-- ordering, NULLS FIRST/LAST, operator class, collation; INCLUDE columns,
-- NULLS NOT DISTINCT, storage parameters and the predicate are kept as
-- printed; the columns numbered renamed_atts become new_names.  With
-- concurrent, CREATE INDEX CONCURRENTLY.  The tablespace is added
-- (pg_get_indexdef does not print it).
CREATE FUNCTION storagelab_internal.bigint_migration_index_copy(def text, idx oid, new_name name, concurrent boolean,
                                                                renamed_atts int2[], new_names name[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix      record;
  head    text;
  mid     text;
  pos     int;
  keys    record;
  incl    record;
  elems   text[];
  k       int;
  att     int2;
  j       int;
  rest    text;
  pred    text;
BEGIN
  SELECT i.indisunique, i.indnkeyatts, i.indnatts, string_to_array(i.indkey::text, ' ')::int2[] AS indkey,
         ic.relname, ic.relkind, ic.reltablespace, am.amname, i.indrelid,
         pg_get_expr(i.indpred, i.indrelid) AS pred
    INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  head := format('CREATE %sINDEX %I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, ix.relname);
  -- "[ONLY ]table USING am (": the table is schema-qualified (search_path is
  -- pg_catalog, pg_temp here), except a temporary one; its name may contain
  -- anything, so it is matched whole where it can be
  mid := format('%s%s USING %I (', CASE WHEN ix.relkind = 'I' THEN 'ONLY ' ELSE '' END,
                storagelab_internal.bigint_migration_qname(ix.indrelid), ix.amname);
  IF substr(def, length(head) + 1, length(mid)) = mid THEN
    pos := length(head) + length(mid) + 1;
  ELSE
    pos := strpos(substr(def, length(head) + 1), format(' USING %I (', ix.amname));
    pos := CASE WHEN pos = 0 THEN 0 ELSE length(head) + pos + length(format(' USING %I (', ix.amname)) END;
  END IF;
  IF left(def, length(head)) <> head OR pos = 0 THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  SELECT * INTO keys FROM storagelab_internal.bigint_migration_split_list(def, pos);
  elems := keys.elems;
  rest := substr(def, keys.next_pos);
  IF starts_with(rest, ' INCLUDE (') THEN
    SELECT * INTO incl FROM storagelab_internal.bigint_migration_split_list(def, keys.next_pos + length(' INCLUDE ('));
    elems := elems || incl.elems;
    rest := substr(def, incl.next_pos);
  END IF;
  IF cardinality(elems) <> ix.indnatts THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  -- rename the plain columns that are converted: each element starts with the column's name
  FOR k IN 1 .. ix.indnatts LOOP
    att := ix.indkey[k];
    j := array_position(renamed_atts, att);
    CONTINUE WHEN att = 0 OR j IS NULL;
    pred := quote_ident((SELECT attname FROM pg_attribute WHERE attrelid = ix.indrelid AND attnum = att));
    IF NOT (elems[k] = pred OR starts_with(elems[k], pred || ' ')) THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    elems[k] := quote_ident(new_names[j]) || substr(elems[k], length(pred) + 1);
  END LOOP;
  -- the tablespace goes before the predicate
  IF ix.reltablespace <> 0 THEN
    pred := CASE WHEN ix.pred IS NULL THEN '' ELSE ' WHERE ' || ix.pred END;
    IF right(rest, length(pred)) <> pred THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    rest := left(rest, length(rest) - length(pred))
            || format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = ix.reltablespace)) || pred;
  END IF;
  RETURN format('CREATE %sINDEX %s%I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END,
                CASE WHEN concurrent THEN 'CONCURRENTLY ' ELSE '' END, new_name)
      || substr(def, length(head) + 1, pos - length(head) - 1)
      || array_to_string(elems[1:ix.indnkeyatts], ', ') || ')'
      || CASE WHEN ix.indnatts > ix.indnkeyatts
              THEN ' INCLUDE (' || array_to_string(elems[ix.indnkeyatts + 1:], ', ') || ')' ELSE '' END
      || rest;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_index_copy(text, oid, name, boolean, int2[], name[]) IS
  'DDL of a copy of an index under a new name, with some of its columns renamed, from its definition: every option of every column kept';

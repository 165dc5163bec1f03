-- storagelab install script, part 23: the rows of the INT -> BIGINT model,
-- one function per kind of object (part 22 calls them).  Each fills in
-- storagelab.bigint_migration_object: what the object is, the lock and
-- handling of a migration, the SQL that drops, re-creates and checks it, or
-- why it blocks a migration.
--
-- Producers (from the component), their rows built by bigint_migration_row:
--   bigint_migration_column_rows, _table_blockers, _component_objects
--   (sequences, foreign keys, trigger functions).  Queries, but in plpgsql, whose
--   plans are kept for the session (an SQL function with SET search_path is
--   planned at every call on 15-17).
-- Dependents (one per catalog of an object the walk finds): dependent_relation,
--   _default, _constraint, _statistics, _rewrite, _trigger, _policy,
--   _function, _publication; sql_enable_state: a re-created trigger's or rule's state.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit


-- One row of the model from its named fields, the others NULL and depth 0:
-- what the producers below return for each object they find.
CREATE FUNCTION storagelab_internal.bigint_migration_row(
    kind text, identity text, relation regclass DEFAULT NULL, column_name name DEFAULT NULL,
    lock text DEFAULT NULL, handling text DEFAULT NULL, drop_sql text DEFAULT NULL, create_sql text DEFAULT NULL,
    check_sql text DEFAULT NULL, blocker text DEFAULT NULL, sqlstate text DEFAULT NULL, hint text DEFAULT NULL,
    classid oid DEFAULT NULL, objid oid DEFAULT NULL, objsubid int DEFAULT NULL)
RETURNS storagelab.bigint_migration_object
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o storagelab.bigint_migration_object;
BEGIN
  -- the type's fields in order: depth 0; post_sql, definition and the hazard fields NULL
  o := ROW(kind, identity, relation, column_name, 0, lock, handling, drop_sql, create_sql, NULL,
           check_sql, blocker, sqlstate, hint, classid, objid, objsubid, NULL, NULL, NULL, NULL);
  RETURN o;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_row(text, text, regclass, name, text, text, text, text, text, text, text, text, oid, oid, int) IS
  'one row of the INT->BIGINT model from its named fields, the others NULL and depth 0';

-- The ALTER TABLE giving a re-created trigger or rule its state (tgenabled, ev_enabled) from
-- the one it is created in (was: O, enabled; a partition's clone: its parent's); '' if the same.
CREATE FUNCTION storagelab_internal.sql_enable_state(tbl text, what text, obj name, state "char", was "char" DEFAULT 'O')
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN CASE WHEN state = was THEN ''
              ELSE format(E'ALTER TABLE %s %s %s %I;\n', tbl,
                          CASE state WHEN 'D' THEN 'DISABLE' WHEN 'R' THEN 'ENABLE REPLICA' WHEN 'A' THEN 'ENABLE ALWAYS' ELSE 'ENABLE' END,
                          what, obj) END;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.sql_enable_state(text, text, name, "char", "char") IS
  'ALTER TABLE ... DISABLE | ENABLE [REPLICA | ALWAYS] TRIGGER | RULE giving a re-created trigger or rule its state, or '''' when it is created in it';

-- One row per component column: ALTER COLUMN TYPE, or already bigint, or a blocker (another type).
CREATE FUNCTION storagelab_internal.bigint_migration_column_rows(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN QUERY
  SELECT m.*
    FROM (SELECT c.oid AS relid, a.attnum, a.attname, t.typtype, format_type(a.atttypid, a.atttypmod) AS typ,
                 storagelab_internal.sql_qname(c.oid) AS qn,
                 CASE WHEN a.atttypid = 'int8'::regtype THEN 'bigint'
                      WHEN a.atttypid NOT IN ('int2'::regtype, 'int4'::regtype) THEN 'other type'
                      WHEN a.attinhcount > 0 THEN 'inherited' ELSE 'convert' END AS how,
                 -- a default "nextval(...)::integer" would keep failing past 2^31
                 -- after the type change: it is set again without the cast
                 (SELECT substring(pg_get_expr(ad.adbin, ad.adrelid) FROM '^\((nextval\(''.*''::regclass\))\)::(?:integer|smallint)$')
                    FROM pg_attrdef ad WHERE ad.adrelid = c.oid AND ad.adnum = a.attnum) AS seq_default
            FROM unnest(crel, catt) AS x(relid, attnum)
            JOIN pg_class c ON c.oid = x.relid
            JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum
            JOIN pg_type t ON t.oid = a.atttypid) r,
         storagelab_internal.bigint_migration_row(
             kind => CASE WHEN r.how = 'other type' THEN 'blocker' ELSE 'column' END,
             relation => r.relid, column_name => r.attname, identity => format('%s.%I', r.qn, r.attname),
             classid => 'pg_class'::regclass, objid => r.relid, objsubid => r.attnum,
             lock => CASE r.how WHEN 'inherited' THEN 'ACCESS EXCLUSIVE (through the parent)' WHEN 'convert' THEN 'ACCESS EXCLUSIVE'
                                WHEN 'bigint' THEN 'ACCESS EXCLUSIVE (held while its foreign keys are re-added)' END,
             handling => CASE r.how
                           WHEN 'inherited' THEN format('%s -> bigint: converted by the ALTER TABLE of its parent (recursive)', r.typ)
                           WHEN 'convert' THEN format('%s -> bigint: ALTER COLUMN TYPE (rewrites the table and its indexes)', r.typ)
                                               || CASE WHEN r.seq_default IS NULL THEN '' ELSE '; its default drops the cast to ' || r.typ END
                           WHEN 'bigint' THEN 'already bigint: unchanged' END,
             create_sql => CASE WHEN r.how = 'convert' THEN format('ALTER COLUMN %I TYPE bigint', r.attname)
                                  || CASE WHEN r.seq_default IS NULL THEN ''
                                          ELSE format(E',\n  ALTER COLUMN %I SET DEFAULT %s', r.attname, r.seq_default) END END,
             check_sql => CASE WHEN r.how <> 'bigint' THEN
                            format('(SELECT atttypid = %L::regtype FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L)',
                                   'bigint', r.qn, r.attname) END,
             blocker => CASE WHEN r.how = 'other type' THEN
                          format('column %s.%I has type %s, not smallint, integer or bigint', r.qn, r.attname, r.typ) END,
             sqlstate => CASE WHEN r.how = 'other type' THEN '0A000' END,
             hint => CASE WHEN r.how <> 'other type' THEN NULL
                          WHEN r.typtype = 'd' THEN 'Converting a domain-typed column would drop the domain and its constraints; change the domain or the column by hand.'
                          ELSE 'Convert this column by hand.' END) m
   ORDER BY r.relid, r.attnum;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_column_rows(oid[], int2[]) IS
  'One row per component column: ALTER COLUMN TYPE, or already bigint, or a blocker (another type).';

-- Blockers on the tables themselves: typed tables, extensions' tables, row types stored elsewhere, partition keys,
-- multiple inheritance.
CREATE FUNCTION storagelab_internal.bigint_migration_table_blockers(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN QUERY
  WITH RECURSIVE t AS (
    SELECT DISTINCT c.oid AS relid, c.reloftype, c.reltype, storagelab_internal.sql_qname(c.oid) AS qn
      FROM unnest(crel) AS x(relid) JOIN pg_class c ON c.oid = x.relid
  ), col AS (
    SELECT x.relid, x.attnum, a.attname, a.attinhcount, storagelab_internal.sql_qname(x.relid) AS qn
      FROM unnest(crel, catt) AS x(relid, attnum) JOIN pg_attribute a ON a.attrelid = x.relid AND a.attnum = x.attnum
  ), up(child, anc) AS (
    SELECT i.inhrelid, i.inhparent FROM pg_inherits i WHERE i.inhrelid IN (SELECT x.relid FROM unnest(crel) AS x(relid))
    UNION
    SELECT up.child, i.inhparent FROM up JOIN pg_inherits i ON i.inhrelid = up.anc
  ), b(relid, qn, attname, blocker, hint, handling) AS (
    SELECT t.relid, t.qn, NULL::name, format('table %s is a typed table (OF %s); its column types come from the type', t.qn, t.reloftype::regtype),
           'Detach it from the type (ALTER TABLE ... NOT OF), convert, and change the type by hand.', NULL::text
      FROM t WHERE t.reloftype <> 0
    UNION ALL
    -- an extension's table: pg_dump writes CREATE EXTENSION, whose script re-creates it with the old types
    SELECT t.relid, t.qn, NULL,
           format('table %s belongs to extension %s; a dump and restore re-creates it from the extension''s script, with its old column types',
                  t.qn, quote_ident(e.extname)),
           'Leave the table to the extension (a newer version of it), or make it yours first (ALTER EXTENSION ... DROP TABLE).', NULL
      FROM t JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = t.relid AND d.refclassid = 'pg_extension'::regclass
                             AND d.deptype = 'e'
      JOIN pg_extension e ON e.oid = d.refobjid
    UNION ALL
    -- the columns of the row type, its array type or a domain over it, by
    -- their pg_depend rows (a column depends on its type; an index lookup,
    -- where pg_attribute has no index on atttypid: one scan of every
    -- column per table was most of findings' time at 10,000 tables)
    SELECT t.relid, t.qn, NULL, format('the row type of %s is used by column %s.%I', t.qn, storagelab_internal.sql_qname(a.attrelid), a.attname),
           'PostgreSQL cannot change a row type that is stored in another table or view column; drop or change that column first.', NULL
      FROM t, LATERAL (SELECT t.reltype UNION SELECT ty.typarray FROM pg_type ty WHERE ty.oid = t.reltype
                       UNION SELECT ty.oid FROM pg_depend td JOIN pg_type ty ON ty.oid = td.objid
                              WHERE td.classid = 'pg_type'::regclass AND td.refclassid = 'pg_type'::regclass
                                AND td.refobjid = t.reltype AND ty.typbasetype = t.reltype) AS rt(typ)
      JOIN pg_depend d ON d.refclassid = 'pg_type'::regclass AND d.refobjid = rt.typ AND d.classid = 'pg_class'::regclass AND d.objsubid > 0
      JOIN pg_attribute a ON a.attrelid = d.objid AND a.attnum = d.objsubid AND NOT a.attisdropped
    UNION ALL
    SELECT col.relid, col.qn, col.attname, format('column %s.%I is part of the partition key of %s', col.qn, col.attname, col.qn),
           'A partition-key column cannot be converted in place: use mode ''online'', which builds a new partitioned table with a bigint key and moves the data into it.',
           'partition key'   -- a blocker of ALTER COLUMN TYPE only: copy and swap builds new tables
      FROM col
     WHERE EXISTS (SELECT 1 FROM pg_partitioned_table p WHERE p.partrelid = col.relid AND col.attnum = ANY (p.partattrs::int2[]))
        OR EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = col.relid AND d.objsubid = col.attnum
                      AND d.refclassid = 'pg_class'::regclass AND d.refobjid = col.relid AND d.refobjsubid = 0 AND d.deptype = 'i')
    UNION ALL
    -- A column inherited from parents in separate inheritance trees
    -- (multiple inheritance): ALTER COLUMN TYPE on one parent fails with
    -- "cannot alter inherited column", whatever the order.
    SELECT col.relid, col.qn, col.attname,
           format('column %s.%I is inherited from several inheritance trees (%s); ALTER COLUMN TYPE on one parent cannot change it',
                  col.qn, col.attname, string_agg(DISTINCT storagelab_internal.sql_qname(up.anc), ', ')),
           'Detach the table from all but one parent (ALTER TABLE ... NO INHERIT), convert, and attach it again (INHERIT).', NULL
      FROM col JOIN up ON up.child = col.relid AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = up.anc)
     WHERE col.attinhcount > 1
     GROUP BY col.relid, col.qn, col.attname
    HAVING count(DISTINCT up.anc) > 1
  )
  SELECT m.*
    FROM b, storagelab_internal.bigint_migration_row(kind => 'blocker', relation => b.relid, column_name => b.attname,
              identity => CASE WHEN b.attname IS NULL THEN b.qn ELSE format('%s.%I', b.qn, b.attname) END,
              blocker => b.blocker, sqlstate => '0A000', hint => b.hint, handling => b.handling) m;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_table_blockers(oid[], int2[]) IS
  'Blockers on the tables themselves: typed tables, extensions'' tables, row types stored elsewhere, partition keys, multiple inheritance.';

-- The objects of the component that its type change alters, after its
-- columns and blockers: sequences, foreign keys, trigger functions.
CREATE FUNCTION storagelab_internal.bigint_migration_component_objects(crel oid[], catt int2[])
RETURNS SETOF storagelab.bigint_migration_object
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  -- Sequences feeding the columns: serial (OWNED BY), plain nextval() defaults, identity.
  RETURN QUERY
  WITH seqs AS (
    -- OWNED BY (serial, deptype a) and identity (deptype i): the sequence depends on the column
    SELECT d.objid AS seq, x.relid, x.attnum, d.deptype
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = x.relid
                      AND d.refobjsubid = x.attnum AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
    UNION ALL
    -- a nextval() default: the default expression depends on the sequence
    SELECT d.refobjid, x.relid, x.attnum, 'n'
      FROM unnest(crel, catt) AS x(relid, attnum)
      JOIN pg_attrdef ad ON ad.adrelid = x.relid AND ad.adnum = x.attnum
      JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                      AND d.refclassid = 'pg_class'::regclass
  )
  SELECT m.*
    FROM (SELECT s.seq, min(s.deptype) AS deptype,
                 (array_agg(s.relid ORDER BY s.relid, s.attnum))[1] AS relid,
                 (array_agg(a.attname ORDER BY s.relid, s.attnum))[1] AS attname,
                 sq.seqtypid, sq.seqmax, storagelab_internal.sql_qname(s.seq) AS sqn
            FROM seqs s
            JOIN pg_sequence sq ON sq.seqrelid = s.seq
            JOIN pg_attribute a ON a.attrelid = s.relid AND a.attnum = s.attnum
           GROUP BY s.seq, sq.seqtypid, sq.seqmax) r,
         storagelab_internal.bigint_migration_row(
             kind => CASE WHEN r.deptype = 'i' THEN 'identity' ELSE 'sequence' END,
             relation => r.relid, column_name => r.attname, identity => format('sequence %s', r.sqn),
             classid => 'pg_class'::regclass, objid => r.seq, objsubid => 0,
             lock => 'SHARE ROW EXCLUSIVE on the sequence',
             handling => CASE WHEN r.seqtypid = 'int8'::regtype AND r.deptype = 'i' THEN 'identity sequence, already bigint'
                              WHEN r.seqtypid = 'int8'::regtype THEN 'already bigint'
                              ELSE format(CASE WHEN r.deptype = 'i' THEN 'identity sequence: ALTER COLUMN TYPE makes it bigint (MAXVALUE %s)'
                                               ELSE 'ALTER SEQUENCE ... AS bigint (MAXVALUE %s)' END,
                                          CASE WHEN r.seqmax IN (32767, 2147483647) THEN 'raised to the bigint maximum' ELSE 'kept at ' || r.seqmax END) END,
             -- an identity sequence follows its column's ALTER COLUMN TYPE
             create_sql => CASE WHEN r.deptype <> 'i' AND r.seqtypid <> 'int8'::regtype THEN format(E'ALTER SEQUENCE %s AS bigint;\n', r.sqn) END,
             check_sql => format('(SELECT seqtypid = %L::regtype FROM pg_sequence WHERE seqrelid = to_regclass(%L))', 'bigint', r.sqn)) m
   ORDER BY r.sqn;
  -- Foreign keys: dropped before the type change and re-added after it, so
  -- that each is validated exactly once.
  RETURN QUERY
  SELECT m.*
    FROM (SELECT c.oid, c.conname, c.conrelid, c.convalidated,
                 pg_get_constraintdef(c.oid) AS def, obj_description(c.oid, 'pg_constraint') AS descr,
                 storagelab_internal.sql_qname(c.conrelid) AS qn, storagelab_internal.sql_qname(c.confrelid) AS fqn
            FROM pg_constraint c
           WHERE c.contype = 'f' AND c.conparentid = 0
             AND EXISTS (SELECT 1 FROM unnest(c.conkey) k, unnest(crel, catt) AS x(relid, attnum)
                          WHERE x.relid = c.conrelid AND x.attnum = k)
             -- only keys with a column that changes type (ALTER TYPE leaves the others alone)
             AND EXISTS (SELECT 1 FROM unnest(c.conkey, c.confkey) AS k(a1, a2), pg_attribute a
                          WHERE ((a.attrelid = c.conrelid AND a.attnum = k.a1) OR (a.attrelid = c.confrelid AND a.attnum = k.a2))
                            AND a.atttypid IN ('int2'::regtype, 'int4'::regtype))) r,
         storagelab_internal.bigint_migration_row(
             kind => 'foreign_key', relation => r.conrelid, identity => format('constraint %I on %s', r.conname, r.qn),
             classid => 'pg_constraint'::regclass, objid => r.oid,
             lock => 'ACCESS EXCLUSIVE on both tables (drop), SHARE ROW EXCLUSIVE (re-add)',
             handling => format('dropped before the type change, re-added after it (%s)',
                                CASE WHEN r.convalidated THEN 'validated once: one scan of ' || r.qn || ' joined to ' || r.fqn
                                     ELSE 'NOT VALID, as it was' END),
             drop_sql => format(E'ALTER TABLE %s DROP CONSTRAINT %I;\n', r.qn, r.conname),
             create_sql => format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', r.qn, r.conname, r.def)
                           || CASE WHEN (r.descr) IS NULL THEN '' ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', r.conname, r.qn, r.descr) END,
             check_sql => format('EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%L) AND conname = %L AND contype = %L AND convalidated = %L)',
                                 r.qn, r.conname, 'f', r.convalidated)) m
   ORDER BY r.qn, r.conname;
  -- Trigger functions of the converted tables, in languages that cache
  -- plans (PL/pgSQL and others): a no-op ALTER FUNCTION makes every session
  -- re-plan them, instead of failing with "type of parameter N (bigint) does
  -- not match that when preparing the plan (integer)".  COST is set to its
  -- current value: RESET ALL would drop a SET search_path.
  RETURN QUERY
  SELECT m.*
    FROM (SELECT DISTINCT p.oid, p.oid::regprocedure::text AS sig, p.procost, l.lanname
            FROM pg_trigger t
            JOIN pg_proc p ON p.oid = t.tgfoid
            JOIN pg_language l ON l.oid = p.prolang
           WHERE t.tgrelid IN (SELECT DISTINCT x.r FROM unnest(crel) AS x(r))
             AND NOT t.tgisinternal AND l.lanname NOT IN ('c', 'internal', 'sql')) r,
         storagelab_internal.bigint_migration_row(
             kind => 'trigger_function', identity => format('function %s', r.sig),
             classid => 'pg_proc'::regclass, objid => r.oid, objsubid => 0,
             lock => 'none on tables (updates its pg_proc row)',
             handling => format('ALTER FUNCTION ... COST %s (unchanged) after the type change, so that sessions re-plan its cached %s statements', r.procost, r.lanname),
             create_sql => format(E'ALTER FUNCTION %s COST %s;\n', r.sig, r.procost)) m
   ORDER BY r.sig;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_component_objects(oid[], int2[]) IS
  'the sequences, foreign keys and trigger functions of an INT->BIGINT component, as model rows';

-- an index of a converted column or of a re-created object (pg_class); other relations are blockers
CREATE FUNCTION storagelab_internal.dependent_relation(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
  v_ops  text;
  v_ops8 text;
BEGIN
  SELECT c.relkind, c.relname, storagelab_internal.sql_qname(c.oid) AS qn, i.indrelid, i.indisprimary OR i.indisunique AS uniq,
         i.indisclustered, i.indisreplident, t.relkind AS tkind, storagelab_internal.sql_qname(i.indrelid) AS tqn, sp.spcname,
         h.inhparent, storagelab_internal.sql_qname(h.inhparent) AS pqn INTO q
    FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
    LEFT JOIN pg_tablespace sp ON sp.oid = c.reltablespace LEFT JOIN pg_inherits h ON h.inhrelid = i.indexrelid
   WHERE c.oid = p_objid;
  IF q.relkind = 'S' THEN
    o := NULL; RETURN;                                   -- sequences: step 4
  ELSIF q.relkind = 't' AND p_deptype = 'i' THEN
    o := NULL; RETURN;                                   -- the TOAST table of a dropped materialized view
  ELSIF p_objid = wobj AND wclass = 'pg_class'::regclass THEN
    o := NULL; RETURN;                                   -- a relation's own parts (partition key: step 3)
  ELSIF q.relkind IN ('i', 'I') AND NOT (wclass = 'pg_class'::regclass AND q.indrelid = wobj AND wsub > 0
                                         AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = wobj AND a.attnum = wsub AND a.attgenerated = '')
                                         AND NOT EXISTS (SELECT 1 FROM pg_class v WHERE v.oid = wobj AND v.relkind = 'm')) THEN
    -- an index on a matview or on a generated column being re-created
    IF q.uniq AND EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = p_objid AND contype IN ('p', 'u', 'x')) THEN
      o.kind := 'blocker';
      o.blocker := format('constraint index %s would be dropped with a re-created column', q.qn);
      o.sqlstate := '0A000'; o.hint := 'Convert this table by hand.';
    ELSE
      o.kind := 'index'; o.relation := q.indrelid; o.identity := format('index %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on its table';
      o.handling := 're-created with its table or column';
      -- a partition's index is attached to its parent's, which is
      -- re-created first (ON ONLY, as pg_get_indexdef prints it, and
      -- valid again once every partition's index is attached)
      link := CASE WHEN q.inhparent IS NOT NULL
                   THEN format('%s:%s:0>%s:%s:0', 'pg_class'::regclass::oid, p_objid, 'pg_class'::regclass::oid, q.inhparent) END;
      o.create_sql := pg_get_indexdef(p_objid) || E';\n'
                      || CASE WHEN q.inhparent IS NULL THEN '' ELSE format(E'ALTER INDEX %s ATTACH PARTITION %s;\n', q.pqn, q.qn) END
                      -- CLUSTER ON and REPLICA IDENTITY USING INDEX go with the index
                      || CASE WHEN q.indisclustered THEN format(E'ALTER %s %s CLUSTER ON %I;\n',
                                   CASE q.tkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END, q.tqn, q.relname) ELSE '' END
                      || CASE WHEN q.indisreplident THEN format(E'ALTER TABLE %s REPLICA IDENTITY USING INDEX %I;\n', q.tqn, q.relname) ELSE '' END
                      || CASE WHEN q.spcname IS NULL THEN '' ELSE format(E'ALTER INDEX %s SET TABLESPACE %I;\n', q.qn, q.spcname) END
                      || CASE WHEN (obj_description(p_objid, 'pg_class')) IS NULL THEN '' ELSE format(E'COMMENT ON INDEX %s IS %L;\n', q.qn, obj_description(p_objid, 'pg_class')) END;
      o.check_sql := format('EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%L) AND indisvalid)', q.qn);
      o.definition := pg_get_indexdef(p_objid);
      auto := true;
    END IF;
  ELSIF q.relkind IN ('i', 'I') THEN
    o.relation := q.indrelid; o.identity := format('index %s', q.qn);
    -- ALTER COLUMN TYPE rebuilds the index with its explicit operator classes
    -- on the column (int4_minmax_multi_ops, int4_bloom_ops, ...): those that
    -- do not accept bigint (v_ops) make it fail; v_ops8: their bigint siblings
    SELECT string_agg(DISTINCT format('%I', oc.opcname), ', '), string_agg(DISTINCT format('%I', o8.opcname), ', ')
      INTO v_ops, v_ops8
      FROM pg_index i, generate_series(0, i.indnkeyatts - 1) k, pg_opclass oc
      LEFT JOIN pg_opclass o8 ON o8.opcfamily = oc.opcfamily AND o8.opcmethod = oc.opcmethod AND o8.opcintype = 'int8'::regtype
     WHERE i.indexrelid = p_objid AND oc.oid = i.indclass[k] AND (i.indkey[k] = wsub OR i.indkey[k] = 0)
       AND oc.opcintype IN ('int2'::regtype, 'int4'::regtype) AND NOT oc.opcdefault;
    IF v_ops IS NOT NULL THEN
      o.kind := 'blocker';
      o.blocker := format('index %s uses operator class %s on %s, which does not accept bigint', q.qn, v_ops,
                          pg_describe_object(wclass, wobj, wsub));
      o.sqlstate := '0A000';
      o.hint := format('Drop the index before the migration and create it again afterwards with the bigint operator class (%s).',
                       coalesce(v_ops8, 'one in the same operator family'));
    ELSE
      o.kind := 'index';
      o.lock := 'ACCESS EXCLUSIVE (with its table)';
      o.handling := 'rebuilt by ALTER COLUMN TYPE, definition kept';
      o.check_sql := format('to_regclass(%L) IS NOT NULL', q.qn);
      o.definition := pg_get_indexdef(p_objid);
    END IF;
  ELSE
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, p_objsubid), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'storagelab cannot re-create this object; drop it before the migration and re-create it afterwards.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_relation(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'an index of a converted column or of a re-created object (pg_class); other relations are blockers';

-- a column default or generated column expression (pg_attrdef) that uses the column
CREATE FUNCTION storagelab_internal.dependent_default(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT ad.adrelid, ad.adnum, a.attname, a.attgenerated, a.attinhcount, a.attnotnull, a.attstattarget,
         a.atttypid, a.atttypmod, a.attcollation, t.typcollation, a.attacl,
         pg_get_expr(ad.adbin, ad.adrelid) AS expr, c.relkind,
         storagelab_internal.sql_qname(ad.adrelid) AS qn,
         col_description(ad.adrelid, ad.adnum) AS descr
    INTO q
    FROM pg_attrdef ad
    JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
    JOIN pg_type t ON t.oid = a.atttypid
    JOIN pg_class c ON c.oid = ad.adrelid
   WHERE ad.oid = p_objid;
  IF q.adrelid = wobj AND q.adnum = wsub THEN
    o := NULL; RETURN;                                   -- the column's own default: kept by ALTER TYPE
  ELSIF q.attgenerated = 's' AND q.attinhcount > 0 THEN
    -- a partition's (or inheritance child's) copy: dropped and re-added
    -- by its parent's ALTER TABLE, which also drops the partition's own
    -- indexes and statistics objects on it: find those too
    follow := format('%s:%s:%s', 'pg_class'::regclass::oid, q.adrelid, q.adnum);
    o := NULL; RETURN;
  ELSIF q.attgenerated = 's' AND q.relkind IN ('r', 'p') THEN
    o.kind := 'generated_column'; o.relation := q.adrelid; o.column_name := q.attname;
    o.identity := format('generated column %s.%I', q.qn, q.attname);
    o.lock := 'ACCESS EXCLUSIVE (with its table)';
    o.handling := 'dropped and re-added in the same ALTER TABLE as the type change (no extra rewrite); it moves to the last column position';
    o.drop_sql := format('DROP COLUMN %I', q.attname);
    o.create_sql := format('ADD COLUMN %I %s%s GENERATED ALWAYS AS (%s) STORED%s',
                           q.attname, format_type(q.atttypid, q.atttypmod),
                           CASE WHEN q.attcollation <> q.typcollation AND q.attcollation <> 0
                                THEN ' COLLATE ' || (SELECT format('%I.%I', n.nspname, co.collname) FROM pg_collation co
                                                      JOIN pg_namespace n ON n.oid = co.collnamespace WHERE co.oid = q.attcollation)
                                ELSE '' END,
                           q.expr, CASE WHEN q.attnotnull THEN ' NOT NULL' ELSE '' END);
    -- statements to run after the ALTER TABLE: comment, statistics target, column privileges
    o.post_sql := CASE WHEN (q.descr) IS NULL THEN '' ELSE format(E'COMMENT ON COLUMN %s.%I IS %L;\n', q.qn, q.attname, q.descr) END
              || CASE WHEN q.attstattarget >= 0 THEN format(E'ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s;\n', q.qn, q.attname, q.attstattarget) ELSE '' END
              || coalesce((SELECT string_agg(storagelab_internal.sql_grant(format('%s (%I)', x.privilege_type, q.attname), 'TABLE ' || q.qn,
                                                                           x.grantee, x.is_grantable), '')
                             FROM aclexplode(q.attacl) x), '');
    o.check_sql := format('(SELECT attgenerated = %L FROM pg_attribute WHERE attrelid = to_regclass(%L) AND attname = %L AND NOT attisdropped)',
                          's', q.qn, q.attname);
    auto := false;
  ELSIF q.relkind = 'v' THEN
    o.kind := 'default'; o.relation := q.adrelid; o.column_name := q.attname;
    o.identity := format('default of view column %s.%I', q.qn, q.attname);
    o.lock := 'ACCESS EXCLUSIVE on the view';
    o.handling := 're-created with its view';
    o.create_sql := format(E'ALTER VIEW %s ALTER COLUMN %I SET DEFAULT %s;\n', q.qn, q.attname, q.expr);
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_attrdef WHERE adrelid = to_regclass(%L) AND adnum = %s)', q.qn, q.adnum);
    auto := true;
  ELSE
    o.kind := 'blocker';
    o.blocker := format('the default of %s.%I uses %s', q.qn, q.attname, pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop the default before the migration and set it again afterwards.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_default(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a column default or generated column expression (pg_attrdef) that uses the column';

-- a constraint (pg_constraint) on the column: rebuilt in place, re-added, or a blocker; foreign keys are foreign_key rows
CREATE FUNCTION storagelab_internal.dependent_constraint(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT c.conname, c.contype, c.conrelid, c.conparentid, c.coninhcount, storagelab_internal.sql_qname(c.conrelid) AS qn,
         (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1]) AS attname,
         pg_get_constraintdef(c.oid) AS def INTO q
    FROM pg_constraint c WHERE c.oid = p_objid;
  IF q.contype = 'f' OR q.conparentid <> 0 THEN
    o := NULL; RETURN;                                   -- foreign keys: step 5
  ELSIF q.contype = 'n' AND (auto OR NOT (wclass = 'pg_class'::regclass AND wsub > 0)) THEN
    o := NULL; RETURN;                                   -- NOT NULL of a re-created generated column: its ADD COLUMN has NOT NULL
  ELSIF NOT (q.contype = 'n' OR (wclass = 'pg_class'::regclass AND wsub > 0 AND auto = false) OR (q.contype = 'c' AND auto)) THEN
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop the constraint before the migration and re-create it afterwards.';
    RETURN;
  END IF;
  o.kind := 'constraint'; o.relation := q.conrelid;
  o.identity := format('constraint %I on %s', q.conname, q.qn);
  o.lock := 'ACCESS EXCLUSIVE (with its table)';
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%L) AND conname = %L)', q.qn, q.conname);
  IF q.contype = 'n' THEN
    -- PostgreSQL 18+: a NOT NULL constraint (see sql_not_null_name)
    o.handling := CASE WHEN q.coninhcount > 0 THEN 'NOT NULL kept; inherited, so it takes the name of its parent''s NOT NULL constraint'
                       ELSE 'NOT NULL kept, with its name' END;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]'
                          ' WHERE c.conrelid = to_regclass(%L) AND c.contype = %L AND a.attname = %L AND a.attnotnull%s)',
                          q.qn, 'n', q.attname,
                          CASE WHEN q.coninhcount > 0 THEN '' ELSE format(' AND c.conname = %L', q.conname) END);
  ELSIF wclass = 'pg_class'::regclass AND wsub > 0 AND auto = false THEN
    o.handling := 'rebuilt by ALTER COLUMN TYPE, name and definition kept';
  ELSE
    o.handling := 're-added after its generated column';
    o.create_sql := format(E'ALTER TABLE %s ADD CONSTRAINT %I %s;\n', q.qn, q.conname, q.def)
                    || CASE WHEN obj_description(p_objid, 'pg_constraint') IS NULL THEN ''
                            ELSE format(E'COMMENT ON CONSTRAINT %I ON %s IS %L;\n', q.conname, q.qn, obj_description(p_objid, 'pg_constraint')) END;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_constraint(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a constraint (pg_constraint) on the column: rebuilt in place, re-added, or a blocker; foreign keys are foreign_key rows';

-- an extended statistics object (pg_statistic_ext) on the column
CREATE FUNCTION storagelab_internal.dependent_statistics(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT s.stxname, s.stxrelid, format('%I.%I', n.nspname, s.stxname) AS qn, s.stxstattarget, s.stxowner INTO q
    FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE s.oid = p_objid;
  o.kind := 'statistics'; o.relation := q.stxrelid; o.identity := format('statistics object %s', q.qn);
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE format(%L, n.nspname, s.stxname) = %L)',
                        '%I.%I', q.qn);
  o.lock := 'ACCESS EXCLUSIVE (with its table)';
  IF wclass = 'pg_class'::regclass AND wsub > 0 AND auto = false THEN
    o.handling := 'rebuilt by ALTER COLUMN TYPE, definition kept';
  ELSE
    o.handling := 're-created after its table or column';
    o.create_sql := pg_get_statisticsobjdef(p_objid) || E';\n'
                    || format(E'ALTER STATISTICS %s OWNER TO %I;\n', q.qn, pg_get_userbyid(q.stxowner))
                    || CASE WHEN q.stxstattarget >= 0 THEN format(E'ALTER STATISTICS %s SET STATISTICS %s;\n', q.qn, q.stxstattarget) ELSE '' END
                    || CASE WHEN (obj_description(p_objid, 'pg_statistic_ext')) IS NULL THEN '' ELSE format(E'COMMENT ON STATISTICS %s IS %L;\n', q.qn, obj_description(p_objid, 'pg_statistic_ext')) END;
    auto := true;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_statistics(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'an extended statistics object (pg_statistic_ext) on the column';

-- a rule (pg_rewrite): the view or materialized view it defines, or a rule of a table
CREATE FUNCTION storagelab_internal.dependent_rewrite(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT w.rulename, w.ev_class, w.ev_enabled, c.relkind, c.relispopulated, c.relam, c.reltablespace,
         -- a view's options as CREATE VIEW takes them; NULL: none
         ' WITH (' || (SELECT string_agg(format('%I = %L', split_part(opt, '=', 1), substr(opt, strpos(opt, '=') + 1)), ', ')
                         FROM unnest(c.reloptions) opt) || ')' AS with_options,
         storagelab_internal.sql_qname(w.ev_class) AS qn INTO q
    FROM pg_rewrite w JOIN pg_class c ON c.oid = w.ev_class WHERE w.oid = p_objid;
  IF q.rulename = '_RETURN' AND q.ev_class = wobj AND wclass = 'pg_class'::regclass AND wsub = 0 THEN
    o := NULL; RETURN;                                   -- the view's own query
  ELSIF q.rulename = '_RETURN' AND q.relkind IN ('v', 'm') THEN
    -- the object to drop is the view itself
    o.classid := 'pg_class'::regclass; o.objid := q.ev_class; o.objsubid := 0;
    o.relation := q.ev_class;
    auto := false;
    IF q.relkind = 'v' THEN
      o.kind := 'view'; o.identity := format('view %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on the view';
      o.handling := 'dropped and re-created with the same definition, options, owner, privileges and comments';
      o.drop_sql := format(E'DROP VIEW %s;\n', q.qn);
      o.create_sql := format(E'CREATE VIEW %s%s AS\n%s\n', q.qn, q.with_options, pg_get_viewdef(q.ev_class))
                      || storagelab_internal.bigint_migration_relation_extras(q.ev_class);
      o.check_sql := format('(SELECT relkind = %L FROM pg_class WHERE oid = to_regclass(%L))', 'v', q.qn);
    ELSE
      o.kind := 'materialized_view'; o.identity := format('materialized view %s', q.qn);
      o.lock := 'ACCESS EXCLUSIVE on the materialized view';
      -- created WITH NO DATA and populated by REFRESH once it has its
      -- owner, as pg_dump does: the query then runs as the owner (row
      -- security, current_user), not as the role running the script
      o.handling := CASE WHEN q.relispopulated THEN 'dropped and re-created with the same definition, options, owner, privileges and comments; re-populated by REFRESH as its owner'
                         ELSE 'dropped and re-created WITH NO DATA, as it was' END;
      o.drop_sql := format(E'DROP MATERIALIZED VIEW %s;\n', q.qn);
      o.create_sql := format(E'CREATE MATERIALIZED VIEW %s%s%s%s AS\n%s\n  WITH %s;\n', q.qn,
                             CASE WHEN q.relam <> (SELECT oid FROM pg_am WHERE amname = 'heap')
                                  THEN format(' USING %I', (SELECT amname FROM pg_am WHERE oid = q.relam)) ELSE '' END,
                             q.with_options,
                             CASE WHEN q.reltablespace <> 0
                                  THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = q.reltablespace)) ELSE '' END,
                             regexp_replace(pg_get_viewdef(q.ev_class), ';\s*$', ''),
                             'NO DATA')
                      || storagelab_internal.bigint_migration_relation_extras(q.ev_class)
                      || CASE WHEN q.relispopulated THEN format(E'REFRESH MATERIALIZED VIEW %s;\n', q.qn) ELSE '' END;
      o.check_sql := format('(SELECT relkind = %L AND relispopulated = %L FROM pg_class WHERE oid = to_regclass(%L))',
                            'm', q.relispopulated, q.qn);
    END IF;
  ELSE
    o.kind := 'rule'; o.relation := q.ev_class;
    o.identity := format('rule %I on %s', q.rulename, q.qn);
    o.lock := 'ACCESS EXCLUSIVE on its table';
    o.handling := 'dropped and re-created with the same definition';
    o.drop_sql := format(E'DROP RULE %I ON %s;\n', q.rulename, q.qn);
    o.create_sql := pg_get_ruledef(p_objid) || E'\n'
                    || storagelab_internal.sql_enable_state(q.qn, 'RULE', q.rulename, q.ev_enabled)
                    || CASE WHEN (obj_description(p_objid, 'pg_rewrite')) IS NULL THEN '' ELSE format(E'COMMENT ON RULE %I ON %s IS %L;\n', q.rulename, q.qn, obj_description(p_objid, 'pg_rewrite')) END;
    o.check_sql := format('EXISTS (SELECT 1 FROM pg_rewrite WHERE ev_class = to_regclass(%L) AND rulename = %L)', q.qn, q.rulename);
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_rewrite(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a rule (pg_rewrite): the view or materialized view it defines, or a rule of a table';

-- a trigger (pg_trigger) whose column list or WHEN clause uses the column
CREATE FUNCTION storagelab_internal.dependent_trigger(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT t.tgname, t.tgrelid, t.tgenabled, t.tgparentid, t.tgisinternal, storagelab_internal.sql_qname(t.tgrelid) AS qn INTO q
    FROM pg_trigger t WHERE t.oid = p_objid;
  IF q.tgparentid <> 0 OR q.tgisinternal THEN
    o := NULL; RETURN;                                   -- partition clones and FK triggers go with their parent
  END IF;
  o.kind := 'trigger'; o.relation := q.tgrelid;
  o.identity := format('trigger %I on %s', q.tgname, q.qn);
  o.lock := 'SHARE ROW EXCLUSIVE on its table (held ACCESS EXCLUSIVE anyway)';
  o.handling := 'dropped and re-created with the same definition and enabled state';
  o.drop_sql := format(E'DROP TRIGGER %I ON %s;\n', q.tgname, q.qn);
  o.create_sql := pg_get_triggerdef(p_objid) || E';\n'
                  || storagelab_internal.sql_enable_state(q.qn, 'TRIGGER', q.tgname, q.tgenabled)
                  || CASE WHEN (obj_description(p_objid, 'pg_trigger')) IS NULL THEN '' ELSE format(E'COMMENT ON TRIGGER %I ON %s IS %L;\n', q.tgname, q.qn, obj_description(p_objid, 'pg_trigger')) END
                  -- the clones on partitions that were enabled or disabled on their own
                  -- (was: the state of the clone's parent, which it is created in)
                  || coalesce((WITH RECURSIVE cl(oid, tgrelid, tgname, tgenabled, was, lvl) AS (
                                 SELECT t.oid, t.tgrelid, t.tgname, t.tgenabled, q.tgenabled, 1 FROM pg_trigger t WHERE t.tgparentid = p_objid
                                 UNION ALL
                                 SELECT t.oid, t.tgrelid, t.tgname, t.tgenabled, cl.tgenabled, cl.lvl + 1 FROM pg_trigger t JOIN cl ON t.tgparentid = cl.oid)
                               SELECT string_agg(storagelab_internal.sql_enable_state(storagelab_internal.sql_qname(cl.tgrelid), 'TRIGGER',
                                                                                      cl.tgname, cl.tgenabled, cl.was),
                                                 '' ORDER BY cl.lvl, cl.tgrelid)
                                 FROM cl WHERE cl.tgenabled <> cl.was), '');
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%L) AND tgname = %L AND tgenabled = %L)',
                        q.qn, q.tgname, q.tgenabled);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_trigger(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a trigger (pg_trigger) whose column list or WHEN clause uses the column';

-- a row-level security policy (pg_policy) using the column
CREATE FUNCTION storagelab_internal.dependent_policy(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT p.polname, p.polrelid, p.polpermissive, p.polcmd, p.polroles,
         pg_get_expr(p.polqual, p.polrelid) AS qual, pg_get_expr(p.polwithcheck, p.polrelid) AS wcheck,
         storagelab_internal.sql_qname(p.polrelid) AS qn INTO q
    FROM pg_policy p WHERE p.oid = p_objid;
  o.kind := 'policy'; o.relation := q.polrelid;
  o.identity := format('policy %I on %s', q.polname, q.qn);
  o.lock := 'ACCESS EXCLUSIVE on its table';
  o.handling := 'dropped and re-created with the same roles, command and expressions';
  o.drop_sql := format(E'DROP POLICY %I ON %s;\n', q.polname, q.qn);
  o.create_sql := format(E'CREATE POLICY %I ON %s AS %s FOR %s TO %s%s%s;\n',
                         q.polname, q.qn,
                         CASE WHEN q.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END,
                         CASE q.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
                                       WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                         (SELECT string_agg(CASE WHEN x = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x)) END, ', ' ORDER BY ord)
                            FROM unnest(q.polroles) WITH ORDINALITY AS u(x, ord)),
                         ' USING (' || q.qual || ')', ' WITH CHECK (' || q.wcheck || ')')
                  || CASE WHEN (obj_description(p_objid, 'pg_policy')) IS NULL THEN '' ELSE format(E'COMMENT ON POLICY %I ON %s IS %L;\n', q.polname, q.qn, obj_description(p_objid, 'pg_policy')) END;
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = to_regclass(%L) AND polname = %L)', q.qn, q.polname);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_policy(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a row-level security policy (pg_policy) using the column';

-- a function or procedure (pg_proc) whose SQL-standard body uses the column
CREATE FUNCTION storagelab_internal.dependent_function(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT p.oid, p.prokind, p.proowner, p.proacl, p.oid::regprocedure::text AS sig,
         obj_description(p.oid, 'pg_proc') AS descr INTO q
    FROM pg_proc p WHERE p.oid = p_objid;
  IF q.prokind NOT IN ('f', 'p') THEN
    o.kind := 'blocker';
    o.blocker := format('%s depends on %s', pg_describe_object(p_classid, p_objid, 0), pg_describe_object(wclass, wobj, wsub));
    o.sqlstate := '0A000'; o.hint := 'Drop it before the migration and re-create it afterwards.';
  ELSE
    o.kind := 'function';
    o.identity := format('%s %s', CASE q.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, q.sig);
    o.lock := 'ACCESS EXCLUSIVE on the function object';
    o.handling := 'dropped and re-created with the same definition, owner, privileges and comment';
    o.drop_sql := format(E'DROP %s %s;\n', CASE q.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, q.sig);
    o.create_sql := rtrim(pg_get_functiondef(p_objid), E'\n') || E';\n'
                    || format(E'ALTER %s %s OWNER TO %I;\n', CASE q.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                              q.sig, pg_get_userbyid(q.proowner))
                    || storagelab_internal.sql_acl('ROUTINE', q.sig, q.proacl, q.proowner)
                    || CASE WHEN (q.descr) IS NULL THEN '' ELSE format(E'COMMENT ON ROUTINE %s IS %L;\n', q.sig, q.descr) END;
    o.check_sql := format('to_regprocedure(%L) IS NOT NULL', q.sig);
    o.objsubid := 0;
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_function(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a function or procedure (pg_proc) whose SQL-standard body uses the column';

-- a publication's row filter or column list (pg_publication_rel) naming the column
CREATE FUNCTION storagelab_internal.dependent_publication(
    p_classid oid, p_objid oid, p_objsubid int, p_deptype "char", wclass oid, wobj oid, wsub int,
    INOUT o storagelab.bigint_migration_object, INOUT auto boolean, OUT follow text, OUT link text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  q      record;
BEGIN
  SELECT p.pubname, pr.prrelid, pr.prattrs, pg_get_expr(pr.prqual, pr.prrelid) AS qual,
         storagelab_internal.sql_qname(pr.prrelid) AS qn INTO q
    FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE pr.oid = p_objid;
  o.kind := 'publication_table'; o.relation := q.prrelid;
  o.identity := format('table %s in publication %I', q.qn, q.pubname);
  o.lock := 'SHARE UPDATE EXCLUSIVE on the table';
  o.handling := 'dropped from the publication and added back with the same column list and row filter';
  o.drop_sql := format(E'ALTER PUBLICATION %I DROP TABLE %s;\n', q.pubname, q.qn);
  o.create_sql := format(E'ALTER PUBLICATION %I ADD TABLE %s%s%s;\n', q.pubname, q.qn,
                         CASE WHEN q.prattrs IS NOT NULL THEN
                           ' (' || (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY u.ord)
                                      FROM unnest(q.prattrs::int2[]) WITH ORDINALITY AS u(n, ord)
                                      JOIN pg_attribute a ON a.attrelid = q.prrelid AND a.attnum = u.n) || ')' ELSE '' END,
                         ' WHERE (' || q.qual || ')');
  o.check_sql := format('EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE p.pubname = %L AND pr.prrelid = to_regclass(%L))',
                        q.pubname, q.qn);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.dependent_publication(oid, oid, int, "char", oid, oid, int, storagelab.bigint_migration_object, boolean) IS
  'a publication''s row filter or column list (pg_publication_rel) naming the column';

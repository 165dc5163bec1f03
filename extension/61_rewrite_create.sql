-- storagelab install script, part 61: the rewrite engine's phases create
-- and copy (see 60_rewrite_model.sql and doc/design/rewrite-engine.md).
--
--   create  the new table beside the old, storagelab_new_<OID>, in the new
--           column order and types, with everything a table has that does
--           not fire or constrain other tables: defaults, NOT NULL, valid
--           CHECK constraints, identity (own sequence, same options),
--           generated columns, collation, compression, storage, statistics
--           targets, column options, reloptions (TOAST's too), access
--           method, tablespace, persistence, owner, privileges, comments;
--           no indexes, foreign keys, triggers, rules or policies.
--           A partitioned table: with its partition key, then each
--           partition (PARTITION OF the new parent, the same bound); an
--           inheritance parent, then each child (INHERITS the new parent).
--   copy    INSERT ... SELECT FROM ONLY the old table in the new order
--           (for a partitioned table: one per partition that holds rows;
--           for an inheritance parent: one per table of the tree).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- A reloptions array as the list inside WITH (...), each key prefixed.
CREATE FUNCTION storagelab_internal.rewrite_options(opts text[], prefix text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT string_agg(format('%s%I = %L', $2, split_part(o, '=', 1), substr(o, strpos(o, '=') + 1)), ', ' ORDER BY n)
    FROM unnest($1) WITH ORDINALITY u(o, n)
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_options(text[], text) IS
  'a reloptions or attoptions array as the quoted list inside WITH (...) or SET (...), keys prefixed (toast.)';

-- The identity clause of a column of the new table: its own sequence,
-- named storagelab_new_<old sequence OID>, with the old one's options;
-- bounds that are the old type's defaults are left to the new type's.
CREATE FUNCTION storagelab_internal.rewrite_identity_clause(rel oid, att int2, identity "char", old_type oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(' GENERATED %s AS IDENTITY (SEQUENCE NAME %I.%I INCREMENT BY %s%s%s START WITH %s CACHE %s %s)',
                CASE $3 WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END,
                n.nspname, storagelab_internal.rewrite_name('new', s.seqrelid), s.seqincrement,
                CASE WHEN s.seqmin = CASE WHEN s.seqincrement > 0 THEN 1 ELSE lim.lo END THEN ''
                     ELSE ' MINVALUE ' || s.seqmin END,
                CASE WHEN s.seqmax = CASE WHEN s.seqincrement > 0 THEN lim.hi ELSE -1 END THEN ''
                     ELSE ' MAXVALUE ' || s.seqmax END,
                s.seqstart, s.seqcache, CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END)
    FROM pg_depend d
    JOIN pg_sequence s ON s.seqrelid = d.objid
    JOIN pg_class sc ON sc.oid = s.seqrelid
    JOIN pg_namespace n ON n.oid = sc.relnamespace
   CROSS JOIN LATERAL (SELECT CASE $4 WHEN 'int2'::regtype THEN -32768 WHEN 'int4'::regtype THEN -2147483648
                                      ELSE -9223372036854775808 END::int8 AS lo,
                              CASE $4 WHEN 'int2'::regtype THEN 32767 WHEN 'int4'::regtype THEN 2147483647
                                      ELSE 9223372036854775807 END::int8 AS hi) lim
   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
     AND d.refobjid = $1 AND d.refobjsubid = $2 AND d.deptype = 'i'
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_identity_clause(oid, int2, "char", oid) IS
  'GENERATED ... AS IDENTITY clause of a column of the new table: a sequence of its own (storagelab_new_<old sequence OID>) with the old one''s increment, bounds, start, cache and cycle';

-- One column of the new table: name, type, collation, compression,
-- generated expression, identity or default, NOT NULL.
CREATE FUNCTION storagelab_internal.rewrite_column_def(rel oid, att int2, new_type text)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('%I %s', a.attname, $3)
      || CASE WHEN a.attcollation <> 0 AND nt.typcollation <> 0 AND a.attcollation <> nt.typcollation
              THEN (SELECT format(' COLLATE %I.%I', cn.nspname, co.collname)
                      FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                     WHERE co.oid = a.attcollation) ELSE '' END
      || CASE a.attcompression WHEN 'p' THEN ' COMPRESSION pglz' WHEN 'l' THEN ' COMPRESSION lz4' ELSE '' END
      || CASE WHEN a.attgenerated IN ('s', 'v')
              THEN format(' GENERATED ALWAYS AS (%s) %s', pg_get_expr(ad.adbin, ad.adrelid),
                          CASE a.attgenerated WHEN 's' THEN 'STORED' ELSE 'VIRTUAL' END)
              WHEN a.attidentity IN ('a', 'd')
              THEN storagelab_internal.rewrite_identity_clause($1, $2, a.attidentity, a.atttypid)
              WHEN ad.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid)
              ELSE '' END
      || CASE WHEN a.attnotnull
              THEN coalesce(' CONSTRAINT ' || quote_ident(storagelab_internal.sql_not_null_name($1, $2)), '')
                   || ' NOT NULL' ELSE '' END
    FROM pg_attribute a
    JOIN pg_type nt ON nt.oid = to_regtype($3)
    LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
   WHERE a.attrelid = $1 AND a.attnum = $2
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_column_def(oid, int2, text) IS
  'the definition of one column of the new table: type, collation, compression, generated expression, identity or default, NOT NULL (named as it is on PostgreSQL 18)';

-- What a new table (newq, quoted) gets after its CREATE TABLE, from table
-- rel: per column (atts in the new order, types the new types) storage set
-- by hand, statistics target, options, comment; then owner, comment,
-- privileges of the table and of its columns.
CREATE FUNCTION storagelab_internal.rewrite_table_settings(rel oid, newq text, atts int2[], types text[])
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  stmts  text[];
BEGIN
  SELECT c.relowner, c.relacl, obj_description(c.oid, 'pg_class') AS descr INTO t FROM pg_class c WHERE c.oid = rel;
  stmts := ARRAY(
    SELECT x.s
      FROM unnest(atts, types) WITH ORDINALITY u(att, typ, n)
      JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = u.att
      JOIN pg_type ot ON ot.oid = a.atttypid
      JOIN pg_type nt ON nt.oid = to_regtype(u.typ)
      -- the options ALTER COLUMN SET takes (n_distinct, n_distinct_inherited)
     CROSS JOIN LATERAL (SELECT array_agg(o ORDER BY o) AS opts FROM unnest(a.attoptions) o WHERE o ~ '^n_distinct(_inherited)?=') ao
     CROSS JOIN LATERAL unnest(ARRAY[
             CASE WHEN a.attstorage <> ot.typstorage AND nt.typlen = -1 AND nt.typstorage <> 'p'
                  THEN format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE %s', newq, a.attname,
                              CASE a.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL' WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END) END,
             CASE WHEN coalesce(a.attstattarget::int, -1) >= 0
                  THEN format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', newq, a.attname, a.attstattarget::int) END,
             CASE WHEN ao.opts IS NOT NULL
                  THEN format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', newq, a.attname, storagelab_internal.rewrite_options(ao.opts)) END,
             CASE WHEN col_description(rel, a.attnum) IS NOT NULL
                  THEN format('COMMENT ON COLUMN %s.%I IS %L', newq, a.attname, col_description(rel, a.attnum)) END]) WITH ORDINALITY x(s, k)
     WHERE x.s IS NOT NULL
     ORDER BY u.n, x.k);
  stmts := stmts || format('ALTER TABLE %s OWNER TO %I', newq, pg_get_userbyid(t.relowner));
  IF t.descr IS NOT NULL THEN
    stmts := stmts || format('COMMENT ON TABLE %s IS %L', newq, t.descr);
  END IF;
  -- privileges: the table's (the same statements as for a re-created view) and its columns'
  stmts := stmts || array_remove(regexp_split_to_array(rtrim(
             storagelab_internal.sql_acl('TABLE', newq, t.relacl, t.relowner), E';\n'), E';\n'), '');
  SELECT stmts || coalesce(array_agg(format('GRANT %s (%I) ON TABLE %s TO %s%s', x.privilege_type, a.attname, newq,
                                            CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
                                            CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                                     ORDER BY a.attnum, x.grantee, x.privilege_type), '{}')
    INTO stmts
    FROM pg_attribute a, aclexplode(a.attacl) x
   WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL;
  RETURN stmts;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_table_settings(oid, text, int2[], text[]) IS
  'statements giving a new table the old one''s column settings (storage, statistics target, options, comments), owner, comment and privileges (table and columns)';

-- WITH (...) TABLESPACE ... of a new table: the reloptions (TOAST's too)
-- and tablespace of rel.  A partition in the database's default
-- tablespace names it when its parent has another (a partition is created
-- in its parent's tablespace otherwise).
CREATE FUNCTION storagelab_internal.rewrite_storage_clause(rel oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN c.reloptions IS NOT NULL OR tc.reloptions IS NOT NULL
              THEN ' WITH (' || concat_ws(', ', storagelab_internal.rewrite_options(c.reloptions),
                                          storagelab_internal.rewrite_options(tc.reloptions, 'toast.')) || ')'
              ELSE '' END
      || CASE WHEN c.reltablespace <> 0
              THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
              WHEN c.relispartition AND EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                                                 WHERE i.inhrelid = c.oid AND p.reltablespace <> 0)
              THEN format(' TABLESPACE %I', (SELECT s.spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = d.dattablespace
                                              WHERE d.datname = current_database()))
              ELSE '' END
    FROM pg_class c LEFT JOIN pg_class tc ON tc.oid = c.reltoastrelid
   WHERE c.oid = $1
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_storage_clause(oid) IS
  'the WITH (reloptions, toast.reloptions) and TABLESPACE clauses of a new table for an old one (a partition in the default tablespace under a parent in another names it)';

-- Phase create for one table a rewrite rebuilds (m: the model's member,
-- its columns in the new order and types), storagelab_new_<OID>: a table
-- given with its columns and valid CHECK constraints (and partition key); a
-- partition PARTITION OF the new parent with the same bound (and partition
-- key, for a sub-partitioned one); an inheritance child with its own
-- columns, INHERITS (the new parent); each with the old access method,
-- reloptions, tablespace and persistence.  Then what a partition or child
-- has beyond its parent (NOT NULL, another default, CHECK constraints of
-- its own), and its settings (rewrite_table_settings).
CREATE FUNCTION storagelab_internal.rewrite_create(m storagelab_internal.rewrite_member)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  t      record;
  newq   text;
  stmts  text[];
  r      record;
BEGIN
  SELECT c.relkind, c.relpersistence, c.relispartition, n.nspname, am.amname, pn.nspname AS parent_nsp,
         pg_get_expr(c.relpartbound, c.oid) AS bound
    INTO t
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am am ON am.oid = c.relam
    LEFT JOIN pg_class pc ON pc.oid = m.parent LEFT JOIN pg_namespace pn ON pn.oid = pc.relnamespace
   WHERE c.oid = m.relid;
  newq := format('%I.%I', t.nspname, storagelab_internal.rewrite_name('new', m.relid));
  stmts := ARRAY[format('CREATE %sTABLE %s %s%s%s%s',
                        CASE t.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END, newq,
                        CASE WHEN m.parent IS NULL
                             -- valid CHECK constraints under their names (invalid ones: phase index)
                             THEN format(E'(\n    %s\n)', array_to_string(
                                    ARRAY(SELECT storagelab_internal.rewrite_column_def(m.relid, u.att, u.typ)
                                            FROM unnest(m.atts, m.types) WITH ORDINALITY u(att, typ, n) ORDER BY u.n)
                                    || ARRAY(SELECT format('CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid)) FROM pg_constraint k
                                              WHERE k.conrelid = m.relid AND k.contype = 'c' AND k.convalidated ORDER BY k.conname), E',\n    '))
                             WHEN t.relispartition
                             THEN format('PARTITION OF %I.%I %s', t.parent_nsp, storagelab_internal.rewrite_name('new', m.parent), t.bound)
                             -- a child: its own columns, after the inherited ones
                             ELSE format(E'(\n    %s\n) INHERITS (%I.%I)',
                                         coalesce((SELECT string_agg(storagelab_internal.rewrite_column_def(m.relid, a.attnum,
                                                                       format_type(a.atttypid, a.atttypmod)), E',\n    ' ORDER BY a.attnum)
                                                     FROM pg_attribute a WHERE a.attrelid = m.relid AND a.attnum = ANY (m.atts)
                                                      AND NOT EXISTS (SELECT 1 FROM pg_attribute pa WHERE pa.attrelid = m.parent
                                                                        AND pa.attname = a.attname AND NOT pa.attisdropped)), ''),
                                         t.parent_nsp, storagelab_internal.rewrite_name('new', m.parent)) END,
                        CASE WHEN t.relkind = 'p' THEN ' PARTITION BY ' || pg_get_partkeydef(m.relid) ELSE '' END,
                        CASE WHEN (m.parent IS NULL OR t.relkind = 'r') AND t.amname <> 'heap' THEN format(' USING %I', t.amname) ELSE '' END,
                        storagelab_internal.rewrite_storage_clause(m.relid))];
  -- NOT NULL and defaults of its own (a partition or child takes its parent's)
  FOR r IN
    SELECT a.attname, a.attnotnull AND NOT pa.attnotnull AS own_not_null,
           storagelab_internal.sql_not_null_name(m.relid, a.attnum) AS not_null_name,
           pg_get_expr(d.adbin, d.adrelid) AS def, pg_get_expr(pd.adbin, pd.adrelid) AS parent_def
      FROM pg_attribute a
      JOIN pg_attribute pa ON pa.attrelid = m.parent AND pa.attname = a.attname AND NOT pa.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_attrdef pd ON pd.adrelid = pa.attrelid AND pd.adnum = pa.attnum
     WHERE a.attrelid = m.relid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' AND a.attidentity = ''
     ORDER BY a.attnum
  LOOP
    IF r.own_not_null THEN
      -- under its name where NOT NULL is a constraint (PostgreSQL 18)
      stmts := stmts || CASE WHEN r.not_null_name IS NOT NULL
                             THEN format('ALTER TABLE %s ADD CONSTRAINT %I NOT NULL %I', newq, r.not_null_name, r.attname)
                             ELSE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', newq, r.attname) END;
    END IF;
    IF r.def IS DISTINCT FROM r.parent_def THEN
      stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I %s', newq, r.attname,
                               coalesce('SET DEFAULT ' || r.def, 'DROP DEFAULT'));
    END IF;
  END LOOP;
  -- valid CHECK constraints of its own (NOT VALID ones: phase index)
  RETURN stmts || ARRAY(SELECT format('ALTER TABLE %s ADD CONSTRAINT %I %s', newq, k.conname, pg_get_constraintdef(k.oid))
                          FROM pg_constraint k WHERE m.parent IS NOT NULL AND k.conrelid = m.relid AND k.contype = 'c'
                           AND k.convalidated AND k.coninhcount = 0 ORDER BY k.conname)
               || storagelab_internal.rewrite_table_settings(m.relid, newq, m.atts, m.types);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_create(storagelab_internal.rewrite_member) IS
  'phase create of the rewrite engine for one table it rebuilds, storagelab_new_<OID>: a table given in the new column order and types with every property that fires nothing (columns, valid CHECK constraints, partition key), a partition (PARTITION OF the new parent, the old bound) or inheritance child (its own columns, INHERITS the new parent) with what it has of its own; storage options, column settings, owner, comments, privileges';

-- Phase copy for one table: every row of the old table (not its children)
-- into the new one, cast where the type changes; generated columns are
-- computed again, identity values kept (OVERRIDING SYSTEM VALUE).
CREATE FUNCTION storagelab_internal.rewrite_copy(rel oid, atts int2[], types text[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'INSERT INTO %I.%I (%s)%s\nSELECT %s\n  FROM ONLY %s',
                n.nspname, storagelab_internal.rewrite_name('new', $1),
                string_agg(quote_ident(a.attname), ', ' ORDER BY u.n),
                CASE WHEN bool_or(a.attidentity = 'a') THEN ' OVERRIDING SYSTEM VALUE' ELSE '' END,
                string_agg(CASE WHEN format_type(a.atttypid, a.atttypmod) = u.typ THEN quote_ident(a.attname)
                                ELSE format('%I::%s', a.attname, u.typ) END, ', ' ORDER BY u.n),
                storagelab_internal.sql_qname($1))
    FROM unnest($2, $3) WITH ORDINALITY u(att, typ, n)
    JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = u.att
    JOIN pg_class c ON c.oid = $1
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE a.attgenerated = ''
   GROUP BY n.nspname
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_copy(oid, int2[], text[]) IS
  'phase copy of the rewrite engine for one table: INSERT INTO the new table SELECT FROM ONLY the old one, in the new order, cast to the new types, generated columns left out, identity values kept';

-- storagelab install script, part 65: layout migrations, the fix of what
-- column_waste and alignment_padding find.  layout_migration_script(): a
-- psql script rebuilding a table in the planned column order and types
-- (storagelab.table_rewrite_plan, or the caller's) with the rewrite engine
-- of parts 60-64; layout_migration_plan(): the tables whose plan saves at
-- least the threshold (settings layout_migration.*), with their scripts.
-- Also the fingerprint checks both online writers call (rewrite_check_*).

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('layout_migration.min_saved_pct', '10',
   'layout_migration_plan() lists a table whose plan saves this percentage of it (or min_saved_bytes)'),
  ('layout_migration.min_saved_bytes', '1GB',
   'layout_migration_plan() lists a table whose plan saves this much (or min_saved_pct of it)');

-- A boolean SQL expression, true when the value of column col (quoted) does
-- not survive the change from old_type to new_type: out of range, not an
-- integer, not spelled as the new type prints it, too long; else the value
-- cast there and back differs (a value the cast rejects raises its error).
CREATE FUNCTION storagelab_internal.layout_misfit(col text, old_type text, new_type text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
  SELECT CASE WHEN r.bounds IS NOT NULL AND t.o IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN format('%s NOT BETWEEN %s', $1, r.bounds)
              WHEN r.bounds IS NOT NULL AND t.o = 'numeric'::regtype THEN format('(%1$s <> trunc(%1$s) OR %1$s NOT BETWEEN %2$s)', $1, r.bounds)
              WHEN r.bounds IS NOT NULL AND t.o IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
              THEN format($$CASE WHEN %1$s::text ~ '^(0|-?[1-9][0-9]{0,18})$' THEN %1$s::text::numeric NOT BETWEEN %2$s ELSE true END$$, $1, r.bounds)
              WHEN t.n = 'uuid'::regtype AND t.o IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
              THEN format($$%s::text !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'$$, $1)
              WHEN (t.o = 'bpchar'::regtype AND t.n IN ('varchar'::regtype, 'text'::regtype))   -- char(n) compares without its trailing blanks
                   OR (t.o IN ('varchar'::regtype, 'text'::regtype) AND t.n = 'varchar'::regtype AND $3 ~ '\(')
              THEN CASE WHEN $3 ~ '\(' THEN format('length(%s) > %s', $1, substring($3 FROM '\(\s*([0-9]+)')) ELSE 'false' END
              ELSE format('(%1$s::%2$s)::%3$s IS DISTINCT FROM %1$s', $1, $3, $2) END
    FROM (SELECT to_regtype($2)::oid AS o, to_regtype($3)::oid AS n) t,
         LATERAL (SELECT CASE t.n WHEN 'int2'::regtype THEN '-32768 AND 32767' WHEN 'int4'::regtype THEN '-2147483648 AND 2147483647'
                                  WHEN 'int8'::regtype THEN '-9223372036854775808 AND 9223372036854775807' END AS bounds) r
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_misfit(text, text, text) IS
  'SQL boolean expression true when a column''s value would not survive a type change unchanged (range, integrality, UUID or integer spelling, length; else cast there and back)';

-- Why a column is a key whose type a layout migration leaves alone:
-- primary or foreign key (either side; keys false: not asked), identity,
-- fed by or owning a sequence; NULL when it is none of these.
CREATE FUNCTION storagelab_internal.layout_key_reason(rel oid, att int2, keys boolean DEFAULT true)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(
    (SELECT CASE k.contype WHEN 'p' THEN 'primary key' ELSE 'foreign key' END
       FROM pg_constraint k WHERE $3 AND k.contype IN ('p', 'f') AND k.conrelid = $1 AND $2 = ANY (k.conkey) ORDER BY k.contype DESC LIMIT 1),
    (SELECT 'referenced by a foreign key' FROM pg_constraint k WHERE $3 AND k.contype = 'f' AND k.confrelid = $1 AND $2 = ANY (k.confkey) LIMIT 1),
    (SELECT 'identity' FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum = $2 AND a.attidentity <> ''),
    (SELECT 'sequence' FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1 AND d.refobjsubid = $2 LIMIT 1),
    (SELECT 'sequence default' FROM pg_attrdef ad JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
       JOIN pg_class s ON s.oid = d.refobjid AND d.refclassid = 'pg_class'::regclass AND s.relkind = 'S'
      WHERE ad.adrelid = $1 AND ad.adnum = $2 LIMIT 1))
$$;
COMMENT ON FUNCTION storagelab_internal.layout_key_reason(oid, int2, boolean) IS
  'why a column is a key a layout migration does not retype (primary key, foreign key on either side, unless keys is false; identity, sequence); NULL otherwise';

-- The rest of the foreign-key component (bigint_migration_component, part
-- 22) of the primary or foreign key columns a plan retypes: each column of
-- the key's old type linked to one by foreign keys, in a topmost table (its
-- partitions and children follow it), retyped with it.  0A000 when the
-- component holds an identity or sequence-fed column (its sequence's type).
CREATE FUNCTION storagelab_internal.layout_key_component(relation regclass, changes jsonb)
RETURNS TABLE (relid oid, column_name name, old_type text, new_type text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  e     jsonb;
  comp  record;
  bad   text;
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x ORDER BY x->>'column_name' LOOP
    CONTINUE WHEN coalesce((SELECT storagelab_internal.layout_key_reason(relation, a.attnum) FROM pg_attribute a
                             WHERE a.attrelid = relation AND a.attname = e->>'column_name'), '')
                  NOT IN ('primary key', 'foreign key', 'referenced by a foreign key');
    SELECT * INTO comp FROM storagelab_internal.bigint_migration_component(ARRAY[relation], ARRAY[(e->>'column_name')::name]);
    SELECT string_agg(DISTINCT format('%s.%I', u.rel::regclass, a.attname), ', ') INTO bad
      FROM unnest(comp.crel, comp.catt) u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
     WHERE storagelab_internal.layout_key_reason(u.rel, u.att, false) IS NOT NULL;
    IF bad IS NOT NULL THEN
      RAISE EXCEPTION 'layout migrations do not change the type of a key whose foreign-key component holds identity or sequence-fed columns'
        USING ERRCODE = 'feature_not_supported', DETAIL = format('The component of %s.%I holds %s.', relation, e->>'column_name', bad),
              HINT = 'Leave the key out of column_types; storagelab.bigint_migration_script() widens such a component to bigint.';
    END IF;
    RETURN QUERY
      SELECT DISTINCT u.rel, a.attname, e->>'from', e->>'to'
        FROM unnest(comp.crel, comp.catt) u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
       WHERE NOT (u.rel = relation::oid AND a.attname = e->>'column_name')
         AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = u.rel)
         AND to_regtype(format_type(a.atttypid, NULL)) = to_regtype(e->>'from');
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_key_component(regclass, jsonb) IS
  'the other columns of the foreign-key component of the primary or foreign key columns a layout plan retypes (topmost tables only, those of the key''s old type), retyped with them; 0A000 when the component holds an identity or sequence-fed column';

-- The plan of one table, checked: the rewrite engine's input (the table's
-- columns in the new order with their new types, then the other tables of
-- the foreign-key component of a key it retypes), and the types that
-- component gives the table's own columns (self_types).
CREATE FUNCTION storagelab_internal.layout_plan(relation regclass, column_types jsonb, column_order name[], plan jsonb,
                                                OUT tables jsonb, OUT self_types jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  cols    name[] := ARRAY(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = relation AND a.attnum > 0 AND NOT a.attisdropped
                           ORDER BY a.attnum);
  types   jsonb;
  ord     name[];
  changes jsonb;
  comp    jsonb;
  bad     text;
BEGIN
  IF plan IS NULL AND column_types IS NULL AND column_order IS NULL THEN
    RAISE EXCEPTION 'no layout plan for %', $1
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storagelab.table_rewrite_plan has no row for it: a rewrite saves nothing, or the table lacks statistics.',
            HINT = 'Run ANALYZE or storagelab.column_profile() on it, or give column_types or column_order.';
  ELSIF jsonb_typeof(column_types) <> 'object' THEN
    RAISE EXCEPTION 'column_types must be a JSON object'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give {"column_name": "type", ...}.';
  END IF;
  types := coalesce((SELECT jsonb_object_agg(e->>'column_name', e->>'to') FROM jsonb_array_elements(plan->'column_changes') e), '{}')
           || coalesce(column_types, '{}');
  ord := coalesce(column_order, CASE WHEN plan IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(plan->'column_order'))::name[] END, cols);
  SELECT k INTO bad FROM jsonb_object_keys(types) k WHERE k <> ALL (ord) AND k <> ALL (cols) LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'column % of % does not exist', quote_ident(bad), $1
      USING ERRCODE = 'undefined_column', HINT = 'column_types maps existing columns to their new types.';
  END IF;
  tables := jsonb_build_array(jsonb_build_object('relation', storagelab_internal.sql_qname($1),
              'columns', (SELECT jsonb_agg(CASE WHEN types ? c THEN jsonb_build_object('column_name', c, 'type', types->>c)
                                                ELSE jsonb_build_object('column_name', c) END ORDER BY n)
                            FROM unnest(ord) WITH ORDINALITY u(c, n))));
  -- checked by the engine (every column once, known types) and compared with the table
  SELECT coalesce(jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                            ORDER BY c.pos) FILTER (WHERE c.changed), '[]')
    INTO changes
    FROM storagelab_internal.rewrite_columns(tables) c;
  -- keys keep their types, but for an integer primary or foreign key named in
  -- column_types, retyped to another integer type with its foreign-key component
  SELECT string_agg(format('%I (%s)', a.attname, storagelab_internal.layout_key_reason($1, a.attnum)), ', ') INTO bad
    FROM jsonb_array_elements(changes) e
    JOIN pg_attribute a ON a.attrelid = $1 AND a.attname = e->>'column_name'
   WHERE storagelab_internal.layout_key_reason($1, a.attnum) IS NOT NULL
     AND NOT (coalesce(column_types ? (e->>'column_name'), false)
              AND storagelab_internal.layout_key_reason($1, a.attnum) IN ('primary key', 'foreign key', 'referenced by a foreign key')
              AND to_regtype(e->>'from') IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
              AND to_regtype(e->>'to') IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype));
  IF bad <> '' THEN
    RAISE EXCEPTION 'layout migrations do not change the type of these key columns'
      USING ERRCODE = 'feature_not_supported', DETAIL = format('Columns of %s: %s.', $1, bad),
            HINT = 'A primary or foreign key column changes from one integer type to another only when named in column_types (with its whole foreign-key component); identity and sequence-fed columns, and keys of other types, keep their types.';
  ELSIF changes = '[]' AND ord = cols THEN
    RAISE EXCEPTION 'nothing to change: the columns keep their order and types'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give column_types or column_order.';
  END IF;
  -- the rest of a retyped key's component: other tables (in their own order), the table's own columns;
  -- one type per column: two keys named in column_types may share a component
  comp := (SELECT coalesce(jsonb_agg(to_jsonb(k)), '[]') FROM storagelab_internal.layout_key_component(relation, changes) k);
  SELECT string_agg(format('%s.%I (%s)', x.relid::regclass, x.column_name, x.types), ', ' ORDER BY x.relid, x.column_name) INTO bad
    FROM (SELECT y.relid, y.column_name, string_agg(DISTINCT y.new_type, ', ') AS types
            FROM (SELECT k.relid, k.column_name, k.new_type FROM jsonb_to_recordset(comp) k(relid oid, column_name name, new_type text)
                  UNION ALL
                  SELECT relation::oid, e->>'column_name', e->>'to' FROM jsonb_array_elements(changes) e) y
           GROUP BY y.relid, y.column_name HAVING count(DISTINCT to_regtype(y.new_type)) > 1) x;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'column_types gives one foreign-key component two types'
      USING ERRCODE = 'invalid_parameter_value', DETAIL = format('Columns of the component of %s: %s.', $1, bad),
            HINT = 'Give the keys of one foreign-key component the same type, or name only one of them.';
  END IF;
  WITH k AS MATERIALIZED (SELECT * FROM jsonb_to_recordset(comp) k(relid oid, column_name name, old_type text, new_type text)),
       s AS (SELECT jsonb_object_agg(k.column_name, k.new_type) AS ty FROM k WHERE k.relid = relation::oid)
  SELECT s.ty,
         jsonb_set(tables, '{0,columns}',
                   (SELECT jsonb_agg(CASE WHEN s.ty ? (c->>'column_name') AND NOT c ? 'type'
                                          THEN c || jsonb_build_object('type', s.ty->>(c->>'column_name')) ELSE c END ORDER BY n)
                      FROM jsonb_array_elements(tables->0->'columns') WITH ORDINALITY u(c, n)))
         || (SELECT coalesce(jsonb_agg(jsonb_build_object('relation', storagelab_internal.sql_qname(t.relid),
                     'columns', (SELECT jsonb_agg(coalesce((SELECT jsonb_build_object('column_name', a.attname, 'type', k.new_type)
                                                              FROM k WHERE k.relid = t.relid AND k.column_name = a.attname LIMIT 1),
                                                           jsonb_build_object('column_name', a.attname)) ORDER BY a.attnum)
                                   FROM pg_attribute a WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped))
                     ORDER BY storagelab_internal.sql_qname(t.relid)), '[]')
              FROM (SELECT DISTINCT k.relid FROM k WHERE k.relid <> relation::oid) t)
    INTO self_types, tables
    FROM s;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_plan(regclass, jsonb, name[], jsonb) IS
  'the layout plan of one table (its table_rewrite_plan row as jsonb, overridden by column_types and column_order), checked, with the rest of the foreign-key component of a key it retypes: the rewrite engine''s input and the types the component gives the table''s own columns; refuses type changes of key columns (0A000) except integer primary and foreign keys named in column_types, and a plan that changes nothing (22023)';

-- Every changed column's values checked against its new type: 22000 naming
-- column and value for the first that does not fit.  at_run false: the
-- writer's pre-flight; true: a script's check under its locks.
CREATE FUNCTION storagelab_internal.layout_check_values(relation regclass, changes jsonb, at_run boolean)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  qn  text := storagelab_internal.sql_qname(relation);
  e   jsonb;
  v   text;
BEGIN
  FOR e IN SELECT x FROM jsonb_array_elements(changes) x LOOP
    BEGIN
      EXECUTE format('SELECT x.%1$I::text FROM %2$s x WHERE x.%1$I IS NOT NULL AND %3$s LIMIT 1', e->>'column_name', qn,
                     storagelab_internal.layout_misfit('x.' || quote_ident(e->>'column_name'), e->>'from', e->>'to'))
        INTO v;
    EXCEPTION WHEN data_exception THEN
      IF at_run THEN
        RAISE;
      END IF;
      RAISE EXCEPTION 'values of column % of % do not fit type %', quote_ident(e->>'column_name'), relation, e->>'to'
        USING ERRCODE = SQLSTATE, DETAIL = SQLERRM, HINT = 'Give that column its current type in column_types.';
    END;
    IF v IS NOT NULL THEN
      RAISE EXCEPTION '%', CASE WHEN at_run THEN format('a value of column %s.%s does not fit type %s', qn, quote_ident(e->>'column_name'), e->>'to')
                                ELSE format('a value of column %s of %s does not fit type %s', quote_ident(e->>'column_name'), relation, e->>'to') END
        USING ERRCODE = 'data_exception', DETAIL = format('The value %s would not be kept as it is.', quote_literal(v)),
              HINT = CASE WHEN at_run THEN 'Generate the script again: its pre-flight names the columns to leave as they are.'
                          WHEN e ? 'component'
                          THEN 'The column is in the foreign-key component of the key named in column_types: give that key a type that holds every value of its component, or leave it out.'
                          ELSE 'The plan is older than the data: run ANALYZE or storagelab.column_profile() again, or give that column its current type in column_types.' END;
    END IF;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_check_values(regclass, jsonb, boolean) IS
  'checks every changed column''s values against its new type (storagelab_internal.layout_misfit); raises 22000 naming column and value for the first that does not fit: the writer''s pre-flight, or (at_run) a script''s check under its locks';

-- The md5 of everything a rewrite moves from a table to its copy (below),
-- and of the objects that depend on it by identity, not OID (another
-- table's rewrite re-creating them changes nothing).  A script records it
-- when written and compares it under its locks: an object created in
-- between is never dropped silently.
CREATE FUNCTION storagelab_internal.rewrite_fingerprint(relation regclass)
RETURNS text
LANGUAGE plpgsql STABLE   -- plpgsql: its plan is kept for the session (called per table)
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN md5(concat_ws(E'\n',
    -- with the replica identity index and CLUSTER ON (the swap gives them to the new table's)
    (SELECT string_agg(DISTINCT concat_ws(' ', pg_get_indexdef(i.indexrelid), i.indisreplident, i.indisclustered), E'\n')
       FROM pg_index i WHERE i.indrelid = $1),
    (SELECT string_agg(DISTINCT c.conname || ' ' || pg_get_constraintdef(c.oid), E'\n')
       FROM pg_constraint c WHERE c.conrelid = $1 OR c.confrelid = $1),
    (SELECT string_agg(DISTINCT pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text, E'\n') FROM pg_trigger t WHERE t.tgrelid = $1 AND NOT t.tgisinternal),
    (SELECT string_agg(DISTINCT concat_ws(' ', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                 pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)), E'\n')
       FROM pg_policy p WHERE p.polrelid = $1),
    (SELECT concat_ws(' ', c.relacl::text, c.relrowsecurity, c.relforcerowsecurity, c.relreplident, c.reloptions::text,
                      c.relowner, c.relpersistence, c.reltablespace, c.relam)
       FROM pg_class c WHERE c.oid = $1),
    -- the columns with what the new table copies of them (a column added, a default or NOT NULL changed)
    (SELECT string_agg(concat_ws(' ', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, a.attgenerated,
                                 a.attcollation, a.attstorage, a.attcompression, a.attstattarget, pg_get_expr(d.adbin, d.adrelid)),
                       E'\n' ORDER BY a.attnum)
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped),
    (SELECT string_agg(DISTINCT pg_get_ruledef(r.oid), E'\n') FROM pg_rewrite r WHERE r.ev_class = $1 AND r.rulename <> '_RETURN'),
    -- identity sequences' options (the new table gets a new sequence with them)
    (SELECT string_agg(concat_ws(' ', s.seqrelid::regclass, s.seqtypid, s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle),
                       E'\n' ORDER BY s.seqrelid)
       FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1 AND d.deptype = 'i'),
    (SELECT string_agg(DISTINCT a.attname || ' ' || a.attacl::text, E'\n')
       FROM pg_attribute a WHERE a.attrelid = $1 AND a.attacl IS NOT NULL),
    (SELECT string_agg(DISTINCT d.objsubid || ' ' || d.description, E'\n')
       FROM pg_description d WHERE d.objoid = $1 AND d.classoid = 'pg_class'::regclass),
    (SELECT string_agg(DISTINCT p.prpubid::text, E'\n') FROM pg_publication_rel p WHERE p.prrelid = $1),
    (SELECT string_agg(DISTINCT concat_ws(' ', o.type, o.identity, d.deptype), E'\n')
       FROM pg_depend d CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
      WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = $1
        -- foreign keys' own triggers are named by OID; their constraints are counted
        AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE d.classid = 'pg_trigger'::regclass AND t.oid = d.objid AND t.tgisinternal))));
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_fingerprint(regclass) IS
  'md5 of everything a rewrite moves (columns and their properties, owner, persistence, indexes, constraints, triggers, rules, policies, privileges, options, comments, publications, dependent objects): compared under a script''s locks with the value recorded when it was written';

-- The fingerprint of a table and of each of its partitions or children (by
-- name, parents first), and the definitions of the objects its swap
-- re-creates, which a CREATE OR REPLACE keeps under the same identity.
CREATE FUNCTION storagelab_internal.rewrite_tree_fingerprint(relation regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT md5(concat_ws(E'\n',
           (SELECT CASE WHEN count(*) = 1 THEN min(storagelab_internal.rewrite_fingerprint(m.relid::regclass))
                        ELSE md5(string_agg(m.relid::regclass::text || ' ' || storagelab_internal.rewrite_fingerprint(m.relid::regclass), E'\n'
                                            ORDER BY m.level, m.relid::regclass::text)) END
              FROM storagelab_internal.rewrite_members(ARRAY[$1::oid]) m),
           (SELECT string_agg(d.create_sql, E'\n' ORDER BY d.depth, d.identity, d.create_sql)
              FROM storagelab_internal.rewrite_dependents(ARRAY[$1::oid]) d)))
$$;
COMMENT ON FUNCTION storagelab_internal.rewrite_tree_fingerprint(regclass) IS
  'storagelab_internal.rewrite_fingerprint of a table, or of a partitioned table and each of its partitions together, with the definitions of the dependent objects its swap re-creates (storagelab_internal.rewrite_dependents)';

-- The check of an online script's phases start and swap: the table named
-- relation is still relid, with the fingerprint of its tree recorded when
-- the script was written (cleanup drops the old table, and what was added
-- to it since); 55000 otherwise.
CREATE FUNCTION storagelab_internal.rewrite_check_unchanged(relation text, relid oid, fingerprint text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF to_regclass(relation) IS DISTINCT FROM relid::regclass
     OR storagelab_internal.rewrite_tree_fingerprint(relid::regclass) IS DISTINCT FROM fingerprint THEN
    RAISE EXCEPTION 'the columns, indexes, constraints, triggers, policies, privileges or dependent objects of table % (or of its partitions) changed since this script was written', relation
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Run phase rollback of this script, then generate the script again: this one would drop what was added since.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_unchanged(text, oid, text) IS
  'raises 55000 naming the table unless relation is still the table relid and storagelab_internal.rewrite_tree_fingerprint of it is fingerprint: the check of an online script''s phases start and swap';

-- The check after a script has created its tables that nothing else changed
-- them (an event trigger's audit trigger would fire for every copied row):
-- the new tables of relids' members have no trigger, index, rule, policy or
-- row security, and the old table's owner, privileges (grantor aside) and
-- number of columns; the change logs named have no trigger, rule, policy or
-- row security.  0A000 naming what was added.
CREATE FUNCTION storagelab_internal.rewrite_check_created(relids oid[], logs text[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  what text;
BEGIN
  WITH tabs AS (
    SELECT o.oid AS old, to_regclass(format('%I.%I', ns.nspname, storagelab_internal.rewrite_name('new', o.oid)))::oid AS rel
      FROM storagelab_internal.rewrite_members(relids) m JOIN pg_class o ON o.oid = m.relid JOIN pg_namespace ns ON ns.oid = o.relnamespace
    UNION ALL
    SELECT NULL, to_regclass(l)::oid FROM unnest(logs) l
  )
  SELECT string_agg(format('%s: %s', t.rel::regclass, x.w), '; ' ORDER BY t.rel::regclass::text, x.w) INTO what
    FROM tabs t JOIN pg_class c ON c.oid = t.rel LEFT JOIN pg_class o ON o.oid = t.old
   CROSS JOIN LATERAL (
     SELECT format('trigger %I', g.tgname) FROM pg_trigger g WHERE g.tgrelid = t.rel AND NOT g.tgisinternal
     UNION ALL SELECT format('rule %I', r.rulename) FROM pg_rewrite r WHERE r.ev_class = t.rel
     UNION ALL SELECT format('policy %I', p.polname) FROM pg_policy p WHERE p.polrelid = t.rel
     UNION ALL SELECT 'row-level security' WHERE c.relrowsecurity OR c.relforcerowsecurity
     UNION ALL SELECT format('index %s', i.indexrelid::regclass) FROM pg_index i WHERE i.indrelid = t.rel AND t.old IS NOT NULL
     UNION ALL SELECT format('owner %s', c.relowner::regrole) WHERE t.old IS NOT NULL AND c.relowner <> o.relowner
     UNION ALL SELECT 'privileges' WHERE t.old IS NOT NULL
       AND ARRAY(SELECT DISTINCT (a.grantee, a.privilege_type, a.is_grantable)::text FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a ORDER BY 1)
           IS DISTINCT FROM
           ARRAY(SELECT DISTINCT (a.grantee, a.privilege_type, a.is_grantable)::text FROM aclexplode(coalesce(o.relacl, acldefault('r', o.relowner))) a ORDER BY 1)
     UNION ALL SELECT 'columns' WHERE t.old IS NOT NULL
       AND (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = t.rel AND a.attnum > 0 AND NOT a.attisdropped)
           <> (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = t.old AND a.attnum > 0 AND NOT a.attisdropped)
   ) x(w);
  IF what IS NOT NULL THEN
    RAISE EXCEPTION 'objects were added to the tables this script creates, as they were created: %', what
      USING ERRCODE = 'feature_not_supported',
            DETAIL = coalesce('Enabled event triggers: ' || (SELECT string_agg(quote_ident(e.evtname) || ' (' || e.evtevent || ')', ', ' ORDER BY e.evtname)
                                                              FROM pg_event_trigger e WHERE e.evtenabled <> 'D') || '.', 'No event trigger is enabled.'),
            HINT = 'The copy would fire what they add and the swap would give the tables the old ones'' objects too: disable those event triggers while the script runs (ALTER EVENT TRIGGER ... DISABLE), or make them skip tables named storagelab_*; then run the script (or the phase) again.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.rewrite_check_created(oid[], text[]) IS
  'raises 0A000 when the new tables of a rewrite of relids (or the change logs named) got a trigger, rule, policy, row security, index, another owner, other privileges or columns as they were created (an event trigger): a script''s check after it created them';

-- The check a blocking layout script CALLs under its locks: the table named
-- relation is still relid, with the columns, types and tree fingerprint it
-- had when the script was written (55000), and every changed column's
-- values still fit (22000).
CREATE PROCEDURE storagelab_internal.layout_check_unchanged(relation text, relid oid, columns text, fingerprint text,
                                                           changes jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  IF to_regclass(relation) IS DISTINCT FROM relid::regclass
     OR (SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum)
           FROM pg_attribute a WHERE a.attrelid = relid AND a.attnum > 0 AND NOT a.attisdropped) IS DISTINCT FROM columns THEN
    RAISE EXCEPTION 'table % changed since this script was written', relation
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Generate the script again.';
  END IF;
  IF storagelab_internal.rewrite_tree_fingerprint(relid) IS DISTINCT FROM fingerprint THEN
    RAISE EXCEPTION 'the indexes, constraints, triggers, policies, privileges or dependent objects of table % (or of its partitions) changed since this script was written', relation
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Generate the script again: this one would drop what was added since.';
  END IF;
  PERFORM storagelab_internal.layout_check_values(relid, changes, true);
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.layout_check_unchanged(text, oid, text, text, jsonb) IS
  'the check a blocking layout script CALLs under its locks: 55000 unless the table is unchanged since the script was written (OID, columns, types, storagelab_internal.rewrite_tree_fingerprint), 22000 when a changed column''s value no longer fits its new type';

-- Refuses (2BP01, naming them) type changes that break functions reading
-- the columns (type_change_function_hazards, part 28): a call or comparison
-- nothing takes with the new type, a RETURN QUERY column of the old type.
CREATE FUNCTION storagelab_internal.layout_function_check(relation regclass, changes jsonb)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  det text;
BEGIN
  SELECT string_agg(format('%s (%s): %s', h.fn, h.caller, h.hazard), E'\n' ORDER BY h.fn::text, h.hazard) INTO det
    FROM storagelab_internal.type_change_function_hazards(relation, changes) h
   WHERE h.hazard IS NOT NULL;
  IF det IS NOT NULL THEN
    RAISE EXCEPTION 'the type changes would break functions that use the changed columns of %', relation
      USING ERRCODE = 'dependent_objects_still_exist', DETAIL = det,
            HINT = 'Change those functions first (cast the value where it is passed, compared or returned, add an overload for the new type, or declare the result column with it), or give the column its current type in column_types.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_function_check(regclass, jsonb) IS
  'refuses (2BP01, naming them) a layout plan whose type changes break functions that read the changed columns: calls and comparisons no function or operator takes with the new type, RETURN QUERY columns declared with the old type';

-- CALLed by a blocking layout script under its locks: each SQL function of
-- fns (regprocedure text; one dropped since is skipped) validated under the
-- search_path it sets (else the sessions' default).  Phase before records
-- the errors in a temporary table (dropped at COMMIT); phase after raises
-- 2BP01, rolling back, on an error not recorded before.
CREATE PROCEDURE storagelab_internal.layout_check_sql_functions(fns text[], phase text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  f    text;
  fo   oid;
  sp   text;
  errs text[] := '{}';
  bad  text;
BEGIN
  PERFORM set_config('check_function_bodies', 'on', true);
  FOREACH f IN ARRAY fns LOOP
    fo := to_regprocedure(f);
    CONTINUE WHEN fo IS NULL;
    SELECT substring(c FROM '^search_path=(.*)$') INTO sp FROM pg_proc p, unnest(p.proconfig) c
     WHERE p.oid = fo AND c LIKE 'search\_path=%';
    PERFORM set_config('search_path', coalesce(sp, (SELECT reset_val FROM pg_settings WHERE name = 'search_path')), true);
    BEGIN
      PERFORM pg_catalog.fmgr_sql_validator(fo);
    EXCEPTION WHEN OTHERS THEN   -- (everything is schema-qualified while the function's search_path is set)
      errs := pg_catalog.array_append(errs, pg_catalog.concat(f, ': ', SQLERRM));
    END;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  END LOOP;
  PERFORM set_config('check_function_bodies', 'off', true);
  IF phase = 'before' THEN
    CREATE TEMP TABLE storagelab_sql_check_before ON COMMIT DROP AS SELECT unnest(errs) AS e;
    RETURN;
  END IF;
  SELECT string_agg(x.e, '; ' ORDER BY x.e) INTO bad FROM unnest(errs) x(e)
   WHERE NOT EXISTS (SELECT 1 FROM pg_temp.storagelab_sql_check_before b WHERE b.e = x.e);
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'SQL functions that use the table fail to validate after the change; rolling back'
      USING ERRCODE = 'dependent_objects_still_exist', DETAIL = bad,
            HINT = 'Nothing was changed.  Change these functions for the new column types first, or keep the types.';
  END IF;
END
$fn$;
COMMENT ON PROCEDURE storagelab_internal.layout_check_sql_functions(text[], text) IS
  'the check of the SQL functions using a table that a blocking layout script CALLs under its locks: phase before records their validation errors, phase after raises 2BP01 (rolling back) on a new one';

-- A blocking layout script's checks, phase before (after its locks) or
-- after (before COMMIT), of the functions that use the tables changed: the
-- SQL functions naming one (layout_check_sql_functions) and, with
-- plpgsql_check installed, the PL/pgSQL ones (part 28).
CREATE FUNCTION storagelab_internal.layout_function_recheck(relation regclass, changes jsonb, phase text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN $2 IS NULL OR $2 = '[]' THEN '' ELSE
           CASE WHEN f.fns IS NULL THEN '' ELSE format(E'-- The SQL functions that use the table: %s.\nCALL storagelab_internal.layout_check_sql_functions(%L, %L);\n\n',
             CASE $3 WHEN 'before' THEN 'their validation errors before the change' ELSE 'no validation error they did not have before' END, f.fns, $3) END
           -- a model of one column row per table, what the PL/pgSQL check reads
           || storagelab_internal.bigint_migration_plpgsql_check_sql(
                ARRAY(SELECT jsonb_populate_record(NULL::storagelab.bigint_migration_object, jsonb_build_object('kind', 'column', 'relation', x))
                        FROM unnest(r.rels) x), $3) END
    -- the table, and the other tables of its key's component (changes carrying a relation)
    FROM (SELECT ARRAY(SELECT DISTINCT coalesce((e->>'relation')::oid, $1::oid) FROM jsonb_array_elements($2) e) AS rels) r,
         LATERAL (SELECT array_agg(DISTINCT p.oid::regprocedure::text ORDER BY p.oid::regprocedure::text) AS fns
                    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang, pg_class k
                   WHERE k.oid = ANY (r.rels) AND l.lanname = 'sql' AND p.prosqlbody IS NULL AND p.prokind = 'f'
                     AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
                     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
                     AND storagelab_internal.bigint_migration_names(p.prosrc, k.relname)) f
$$;
COMMENT ON FUNCTION storagelab_internal.layout_function_recheck(regclass, jsonb, text) IS
  'the checks of a blocking layout script under its locks: the CALL of storagelab_internal.layout_check_sql_functions for the SQL functions naming the tables (and plpgsql_check''s DO blocks for the PL/pgSQL ones when installed); phase before records their errors, phase after rolls back on a new one';

-- The relations a blocking layout script locks ACCESS EXCLUSIVE before its
-- copy (what the swap would lock later), each with why: the table (with its
-- partitions or children), the tables referencing it or referenced by it
-- (foreign keys and their triggers dropped), the views and materialized
-- views re-created, the tables whose rules or policies are.
CREATE FUNCTION storagelab_internal.layout_lock_targets(relation regclass)
RETURNS TABLE (rel regclass, why text, lock_sql text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH fks AS (SELECT f.direction, f.conrelid, k.confrelid
            FROM storagelab_internal.rewrite_foreign_keys(ARRAY[$1::oid]) f JOIN pg_constraint k ON k.oid = f.conoid),
  deps AS (SELECT d.classid, d.objid FROM storagelab_internal.rewrite_dependents(ARRAY[$1::oid]) d),
  l AS (
    SELECT $1::oid AS rel, 'the table' AS why
    UNION ALL
    SELECT f.conrelid, 'its foreign key to the table is dropped and added again' FROM fks f WHERE f.direction = 'to'
    UNION ALL
    SELECT f.confrelid, 'referenced by the table: the old table''s foreign-key triggers on it are dropped' FROM fks f WHERE f.direction = 'from'
    UNION ALL
    SELECT d.objid, CASE c.relkind WHEN 'm' THEN 'materialized view, dropped and re-created' ELSE 'view, dropped and re-created' END
      FROM deps d JOIN pg_class c ON c.oid = d.objid WHERE d.classid = 'pg_class'::regclass
    UNION ALL
    SELECT w.ev_class, 'its rule naming the table is dropped and re-created'
      FROM deps d JOIN pg_rewrite w ON w.oid = d.objid WHERE d.classid = 'pg_rewrite'::regclass
    UNION ALL
    SELECT p.polrelid, 'its policy naming the table is dropped and re-created'
      FROM deps d JOIN pg_policy p ON p.oid = d.objid WHERE d.classid = 'pg_policy'::regclass)
  SELECT l.rel::regclass, string_agg(DISTINCT l.why, '; '),
         -- LOCK TABLE takes no materialized view, and locks the tables a view reads too: a change
         -- of owner to the owner it has takes ACCESS EXCLUSIVE on the view alone and changes nothing
         CASE c.relkind WHEN 'v' THEN format('ALTER VIEW %s OWNER TO %I', storagelab_internal.sql_qname(c.oid), pg_get_userbyid(c.relowner))
                        WHEN 'm' THEN format('ALTER MATERIALIZED VIEW %s OWNER TO %I', storagelab_internal.sql_qname(c.oid), pg_get_userbyid(c.relowner))
                        ELSE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', storagelab_internal.sql_qname(c.oid)) END
    FROM l JOIN pg_class c ON c.oid = l.rel
   WHERE l.rel = $1::oid OR l.rel NOT IN (SELECT m.relid FROM storagelab_internal.rewrite_members(ARRAY[$1::oid]) m)
   GROUP BY l.rel, c.oid
   ORDER BY l.rel
$$;
COMMENT ON FUNCTION storagelab_internal.layout_lock_targets(regclass) IS
  'the relations a blocking layout script locks ACCESS EXCLUSIVE before its copy, with why and the statement that locks each (LOCK TABLE; for a view or materialized view ALTER ... OWNER TO its owner): the table, tables referencing it or referenced by it, dependent views and materialized views, tables whose rules or policies name it';

-- The header of a layout script: what it changes, what it locks, sizes.
CREATE FUNCTION storagelab_internal.layout_header(relation regclass, tables jsonb, changes jsonb, plan jsonb,
                                                  lock_list text, mid text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- storagelab layout migration of %s (mode %s%s), written %s\n', storagelab_internal.sql_qname($1),
                CASE WHEN $6 IS NULL THEN 'blocking' ELSE 'online' END, ', migration id ' || $6,
                to_char(now(), 'YYYY-MM-DD HH24:MI:SS TZ'))
      || E'--\n-- Rebuilds the table as a new table in this column order, swaps it in and drops the old one:\n'
      || (SELECT string_agg(format(E'--   %s\n', storagelab_internal.sql_comment_text(format('%I %s', c->>'column_name',
                                     coalesce((SELECT format('%s (was %s)', e->>'to', e->>'from') FROM jsonb_array_elements($3) e
                                                WHERE e->>'column_name' = c->>'column_name' AND NOT e ? 'relation'), 'unchanged')))), '' ORDER BY n)
            FROM jsonb_array_elements($2->0->'columns') WITH ORDINALITY u(c, n))
      || coalesce(E'-- With the foreign-key component of its retyped key, each table rebuilt in its own column order in\n'
                  || E'-- the same way (and the same transaction):\n'
                  || (SELECT string_agg(format(E'--   %s\n', storagelab_internal.sql_comment_text(
                                          format('%s.%s %s (was %s)', (e->>'relation')::oid::regclass, quote_ident(e->>'column_name'), e->>'to', e->>'from'))),
                                        '' ORDER BY (e->>'relation')::oid::regclass::text, e->>'column_name')
                        FROM jsonb_array_elements($3) e WHERE e ? 'relation'), '')
      || E'-- Every index, constraint, foreign key (both ways), sequence, trigger, rule, policy, grant,\n'
      || E'-- comment, statistics object and publication membership follows; views and materialized\n'
      || E'-- views over the table are dropped and re-created (materialized views re-populated).\n--\n'
      -- the functions that read the changed columns (part 28), and how the script checks them again
      || CASE WHEN $3 = '[]' THEN '' ELSE
           E'-- Functions that read the changed columns (calls and comparisons checked against the new types;\n'
           || E'-- review them for arithmetic and output: numeric -> integer divides as integers, prints 1.0 as 1):\n'
           || coalesce((SELECT string_agg('--   ' || storagelab_internal.sql_comment_text(
                                            format('%s (%s): %s %s -> %s', h.fn, h.caller, h.column_name, h.old_type, h.new_type)) || E'\n',
                                          '' ORDER BY h.fn::text, h.column_name)
                          FROM (SELECT coalesce((e->>'relation')::oid, $1::oid) AS rel, jsonb_agg(e - 'relation') AS ch
                                  FROM jsonb_array_elements($3) e GROUP BY 1) g,
                               storagelab_internal.type_change_function_hazards(g.rel::regclass, g.ch) h), E'--   (none)\n')
           || E'-- Before COMMIT the script checks them again: SQL functions with their validator, PL/pgSQL functions\n'
           || E'-- with plpgsql_check when it is installed; an error they did not have before rolls everything back.\n--\n'
         END
      || CASE WHEN $6 IS NULL THEN
           E'-- Locks: ACCESS EXCLUSIVE until COMMIT on each of these, taken together before the copy, in this\n'
           || E'-- (OID) order (reads and writes of them wait for the whole run):\n'
           || $5
           || E'-- Disk: a second copy of the table and its indexes until COMMIT.\n'
         ELSE
           E'-- Run one phase at a time, in this order (each can be run again after a failure):\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=start    -f <this file>  -- new table, change log and triggers (brief lock, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=copy     -f <this file>  -- batched copy (reads only); resumes\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=index    -f <this file>  -- indexes of the new table (locks only it), ANALYZE\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=replay   -f <this file>  -- the change log applied until it is small\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=swap     -f <this file>  -- one short transaction under ACCESS EXCLUSIVE (lock_timeout, retried)\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=validate -f <this file>  -- foreign keys added NOT VALID in the swap validated\n'
           || E'--   psql -v ON_ERROR_STOP=1 -v phase=cleanup  -f <this file>  -- drop the old table and the logs\n'
           || E'-- Until cleanup, phase=rollback undoes everything (after the swap: swaps back, with the changes made since).\n'
           || E'-- A value written during the copy that does not fit its new type stops the copy or replay (roll back, or fix it).\n'
           || E'-- Disk: a second copy of the table and its indexes, and the change log, until cleanup.\n'
           || E'-- Monitor: SELECT * FROM storagelab.bigint_migration_progress WHERE migration = ' || quote_literal($6) || E';\n'
         END
      || CASE WHEN $4 IS NOT NULL THEN
           format(E'-- Heap now (freshly written): %s; after: %s (storagelab.table_rewrite_plan, evidence %s).\n',
                  pg_size_pretty(($4->>'estimated_bytes_now')::int8), pg_size_pretty(($4->>'estimated_bytes_after')::int8),
                  $4->>'evidence')
         ELSE E'-- Heap after: not predicted (storagelab.table_rewrite_plan predicts its own plan, not column_types\n'
              || E'-- or column_order): measure pg_relation_size after the run.\n' END
      || format(E'-- Heap now on disk: %s (pg_relation_size%s).\n',
                pg_size_pretty((SELECT sum(pg_relation_size(m.relid)) FROM storagelab_internal.rewrite_members(
                                  ARRAY(SELECT to_regclass(t->>'relation')::oid FROM jsonb_array_elements($2) t)) m)),
                CASE WHEN EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = $1) THEN ', its partitions or children included' ELSE '' END
                || CASE WHEN jsonb_array_length($2) > 1 THEN ', the component''s tables included' ELSE '' END)
      || CASE WHEN $6 IS NULL THEN E'-- Run: psql -v ON_ERROR_STOP=1 -f this.sql   (-v dry_run=1: everything, then ROLLBACK)\n' ELSE '' END
      || E'\n'
$$;
COMMENT ON FUNCTION storagelab_internal.layout_header(regclass, jsonb, jsonb, jsonb, text, text) IS
  'the comment header of a layout script (mid: the online migration id, NULL for blocking): columns in their new order with their type changes, what follows the table, locks or phases, disk, sizes';

-- The blocking script: header, settings, every relation the run locks
-- (layout_lock_targets of the tables rels) locked at once, retried, the
-- checks under the locks (rechecks), the engine's phases each under its
-- comment, the functions checked again, COMMIT, ANALYZE of the new tables.
CREATE FUNCTION storagelab_internal.layout_blocking_script(relation regclass, tabs jsonb, allch jsonb, plan jsonb,
                                                           rels oid[], rechecks text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT storagelab_internal.layout_header($1, $2, $3, $4, k.lock_list, NULL)
         || storagelab_internal.bigint_migration_blocking_settings()
         || storagelab_internal.disk_preflight_sql('blocking', $2)   -- part 68
         || E'-- Lock the table and every relation the run changes (see the header), all or none, in OID order;\n-- retried on lock_timeout.\n'
         || storagelab_internal.retry_block(k.lock_stmt, storagelab_internal.setting('scripts.lock_retries')::int,
                                            'Other sessions keep using these tables: run the script when traffic is lower, or stop the application.')
         || E'\n' || $6
         || storagelab_internal.layout_function_recheck($1, $3, 'before')
         -- the engine's statements, phase by phase, each under its comment
         --   (one model for the six phases: part 63)
         || (WITH md AS MATERIALIZED (SELECT storagelab_internal.rewrite_model($2) AS m)
             SELECT string_agg(u.head || coalesce((SELECT string_agg(r.statement || E';\n', '' ORDER BY r.ord)
                                                     FROM storagelab_internal.rewrite_phase(md.m, u.ph) r), '')
                               || u.tail || E'\n', '' ORDER BY u.n)
               FROM (VALUES (1, 'create', E'-- The new table beside the old one.\n', format(E'DO %s;\n', storagelab_internal.dollar_quote(
                               format('BEGIN PERFORM storagelab_internal.rewrite_check_created(%L); END', $5)))),
                            (2, 'copy', E'-- Every row, in the new column order (row_security off: a policy that would hide\n'
                                        '-- rows from this role stops the script instead of leaving them out).\n'
                                        'SET LOCAL row_security = off;\n', E'SET LOCAL row_security = on;\n'),
                            (3, 'index', E'-- Indexes and constraints, built once on the full table.\n', ''),
                            (4, 'swap', E'-- The swap: dependents, renames, sequences, foreign keys, triggers, rules, policies.\n', ''),
                            (5, 'validate', E'-- Foreign keys re-pointed NOT VALID, validated.\n', ''),
                            (6, 'cleanup', E'-- The old table.\n', '')) u(n, ph, head, tail), md)
         || storagelab_internal.layout_function_recheck($1, $3, 'after')
         || storagelab_internal.script_end(true)   -- COMMIT, or ROLLBACK with -v dry_run=1 (part 01)
         || E'-- Statistics of the new tables (SHARE UPDATE EXCLUSIVE: reads and writes go on).\n'
         || (SELECT string_agg(format(E'ANALYZE %s;\n', t->>'relation'), '' ORDER BY n) FROM jsonb_array_elements($2) WITH ORDINALITY u(t, n))
    -- everything the run takes ACCESS EXCLUSIVE on, locked together before the copy
    FROM (SELECT array_agg(x.lock_sql ORDER BY x.rel::oid) AS lock_stmt,
                 string_agg(format(E'--   %s (%s)\n', storagelab_internal.sql_comment_text(storagelab_internal.sql_qname(x.rel)), x.why),
                            '' ORDER BY x.rel::oid) AS lock_list
            FROM (SELECT l.rel, min(l.lock_sql) AS lock_sql,
                         CASE WHEN l.rel = $1 THEN 'the table'
                              WHEN l.rel = ANY ($5) THEN 'rebuilt with the table: its foreign-key component'
                              ELSE string_agg(DISTINCT l.why, '; ') END AS why
                    FROM unnest($5) r(oid), storagelab_internal.layout_lock_targets(r.oid::regclass) l
                   GROUP BY l.rel) x) k
$$;
COMMENT ON FUNCTION storagelab_internal.layout_blocking_script(regclass, jsonb, jsonb, jsonb, oid[], text) IS
  'the blocking layout script: header, settings, locks taken together (retried), checks under the locks, the rewrite engine''s phases in one transaction, COMMIT (ROLLBACK with -v dry_run=1), ANALYZE';

-- The script of one table; plan: its table_rewrite_plan row as jsonb (NULL:
-- none).  Each table (the table, then the component's it retypes) is
-- checked first: values that would not fit, functions it would break; the
-- blocking script checks again under its locks (layout_check_unchanged).
CREATE FUNCTION storagelab_internal.layout_script(relation regclass, mode text, column_types jsonb,
                                                  column_order name[], plan jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  p        record;              -- the engine's input (the table, then the rest of its key's component), self_types
  tc       record;
  allch    jsonb := '[]';       -- every changed column ("relation": another table's; "component": changed with a key)
  rels     oid[] := '{}';       -- the tables rewritten
  rechecks text := '';          -- the blocking script's checks under its locks
  mid      text;
BEGIN
  IF mode IS NULL OR mode NOT IN ('blocking', 'online') THEN
    RAISE EXCEPTION 'unknown mode %', coalesce(quote_literal(mode), 'NULL')
      USING ERRCODE = 'invalid_parameter_value', HINT = 'The modes are blocking and online.';
  END IF;
  PERFORM storagelab_internal.rewrite_refuse(ARRAY[relation::oid]);
  SELECT * INTO p FROM storagelab_internal.layout_plan(relation, column_types, column_order, plan);
  FOR tc IN
    SELECT c.relid, c.table_ord,
           jsonb_agg(jsonb_build_object('column_name', c.column_name, 'from', c.old_type, 'to', c.new_type)
                     || CASE WHEN c.table_ord > 1 OR (coalesce(p.self_types ? c.column_name, false)
                                                      AND NOT coalesce(column_types ? c.column_name, false))
                             THEN '{"component": true}'::jsonb ELSE '{}' END ORDER BY c.pos) FILTER (WHERE c.changed) AS ch
      FROM storagelab_internal.rewrite_columns(p.tables) c
     GROUP BY c.relid, c.table_ord ORDER BY c.table_ord
  LOOP
    rels := rels || tc.relid;
    -- the table is checked even when only its column order changes; the component's tables when retyped
    CONTINUE WHEN tc.ch IS NULL AND tc.table_ord > 1;
    PERFORM storagelab_internal.layout_check_values(tc.relid::regclass, coalesce(tc.ch, '[]'), false);
    PERFORM storagelab_internal.layout_function_check(tc.relid::regclass, coalesce(tc.ch, '[]'));
    rechecks := rechecks || format(E'-- The table is still as it was when this script was written; every value fits its new type.\n'
                                   'CALL storagelab_internal.layout_check_unchanged(\n  relation => %L,\n  relid => %s,\n  columns => %L,\n'
                                   '  fingerprint => %L,\n  changes => %L);\n\n',
                                   storagelab_internal.sql_qname(tc.relid), tc.relid,
                                   (SELECT string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum)
                                      FROM pg_attribute a WHERE a.attrelid = tc.relid AND a.attnum > 0 AND NOT a.attisdropped),
                                   storagelab_internal.rewrite_tree_fingerprint(tc.relid),
                                   (SELECT coalesce(jsonb_agg(e - 'component' ORDER BY n), '[]') FROM jsonb_array_elements(tc.ch) WITH ORDINALITY u(e, n)));
    allch := allch || CASE WHEN tc.table_ord = 1 THEN coalesce(tc.ch, '[]')
                           ELSE (SELECT jsonb_agg(x || jsonb_build_object('relation', tc.relid::text)) FROM jsonb_array_elements(tc.ch) x) END;
  END LOOP;
  rels := ARRAY(SELECT r FROM unnest(rels) r ORDER BY r);
  plan := CASE WHEN column_types IS NULL AND column_order IS NULL THEN plan END;  -- the header shows the plan's figures
  IF mode = 'online' THEN   -- the online skeleton of part 67 around the engine's statements, after this header
    mid := 'sllm' || substr(md5(p.tables::text || now()::text), 1, 10);
    RETURN storagelab_internal.rewrite_online_script(storagelab_internal.layout_header(relation, p.tables, allch, plan, NULL, mid),
                                                     p.tables, mid);
  END IF;
  RETURN storagelab_internal.layout_blocking_script(relation, p.tables, allch, plan, rels, rechecks);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.layout_script(regclass, text, jsonb, name[], jsonb) IS
  'the layout script of one table (with the rest of the foreign-key component of a key it retypes), given its table_rewrite_plan row (as jsonb; NULL: none), after checking the values and functions the type changes would break: storagelab.layout_migration_script() without looking the plan up';

CREATE FUNCTION storagelab.layout_migration_script(relation regclass, mode text DEFAULT 'blocking',
                                                   column_types jsonb DEFAULT NULL, column_order name[] DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  kind "char" := (SELECT c.relkind FROM pg_class c WHERE c.oid = relation);
  e_detail text; e_hint text;
BEGIN
  IF relation IS NULL THEN
    RETURN NULL;
  ELSIF kind IS NULL THEN
    RAISE EXCEPTION 'relation with OID % does not exist', relation::oid
      USING ERRCODE = 'undefined_table', HINT = 'Pass an existing table, for example ''public.orders''::regclass.';
  ELSIF kind NOT IN ('r', 'p') THEN
    RAISE EXCEPTION '% is not a table', relation
      USING ERRCODE = 'wrong_object_type', HINT = 'Give an ordinary or partitioned table.';
  END IF;
  PERFORM storagelab_internal.refuse_other_temp(relation, 'generate a script for');
  IF NOT has_table_privilege(relation, 'SELECT') THEN
    RAISE EXCEPTION 'permission denied for table %', relation
      USING ERRCODE = 'insufficient_privilege',
            DETAIL = 'The plan is made from the table''s statistics and rows, which this role may not read.',
            HINT = format('Run it as the table''s owner, or GRANT SELECT ON %s TO %I.', relation, current_user);
  END IF;
  RETURN storagelab_internal.layout_script(relation, mode, column_types, column_order,
           (SELECT to_jsonb(r) FROM storagelab.table_rewrite_plan r WHERE r.relation = layout_migration_script.relation));
EXCEPTION WHEN OTHERS THEN   -- raised again from here: the CONTEXT does not show the query
  GET STACKED DIAGNOSTICS e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
  PERFORM storagelab_internal.reraise(SQLSTATE, SQLERRM, e_detail, e_hint);
END
$fn$;
COMMENT ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]) IS
  'a psql script that rebuilds a table in the column order and types of its storagelab.table_rewrite_plan row (column_types and column_order override it) by copy and swap, in one transaction (mode blocking) or in phases beside live traffic (mode online), with every dependent object, a partitioned table with all its partitions, an inheritance parent with its children; retypes an integer primary or foreign key named in column_types with its whole foreign-key component (other keys refused), refuses a partition or child alone, multiple inheritance, type changes that break functions, and values that do not fit (checked before, and again under the locks); NULL relation: NULL';

CREATE FUNCTION storagelab.layout_migration_plan()
RETURNS TABLE (relation regclass, saved_bytes int8, saved_pretty text, saved_pct numeric, table_bytes int8,
               column_changes jsonb, column_order name[], evidence text, advice text, script text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  plan      jsonb;   -- the table_rewrite_plan row
  min_pct   numeric := storagelab_internal.setting('layout_migration.min_saved_pct')::numeric;
  min_bytes int8 := pg_size_bytes(storagelab_internal.setting('layout_migration.min_saved_bytes'));
BEGIN
  FOR relation, saved_bytes, saved_pretty, saved_pct, table_bytes, column_changes, column_order, evidence, plan IN
    SELECT r.relation, r.estimated_saved_bytes, r.estimated_saved_pretty, round(100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0), 1),
           pg_relation_size(r.relation), r.column_changes, r.column_order, r.evidence, to_jsonb(r)
      FROM storagelab.table_rewrite_plan r
     WHERE r.estimated_saved_bytes >= min_bytes
        OR 100.0 * r.estimated_saved_bytes / nullif(r.estimated_bytes_now, 0) >= min_pct
     ORDER BY r.estimated_saved_bytes DESC, r.relation::oid
  LOOP
    BEGIN
      script := storagelab_internal.layout_script(relation, 'blocking', NULL, NULL, plan);
      advice := 'run the script in a maintenance window: it locks the table while it copies';
    EXCEPTION WHEN feature_not_supported OR data_exception OR wrong_object_type OR dependent_objects_still_exist THEN
      script := NULL;
      advice := left(SQLERRM, 100);
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
COMMENT ON FUNCTION storagelab.layout_migration_plan() IS
  'one row per table whose storagelab.table_rewrite_plan saves at least layout_migration.min_saved_pct of the table or layout_migration.min_saved_bytes (settings): the saving, the plan and its blocking layout_migration_script, or in advice why no script can be written';

GRANT EXECUTE ON FUNCTION storagelab.layout_migration_script(regclass, text, jsonb, name[]),
                          storagelab.layout_migration_plan() TO PUBLIC;

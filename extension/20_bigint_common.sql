-- storagelab install script, part 20: INT -> BIGINT migration, what every
-- part of the generator shares: the row type of the model
-- (storagelab.bigint_migration_object) and small text helpers.
--
-- The parts of the generator (20-28, and 67 for mode online) and what
-- each reads and writes: doc/design/engine-map.md.
--
-- Written in PL/pgSQL: the work is catalog queries plus PostgreSQL's own
-- deparsers (pg_get_viewdef, pg_get_triggerdef, pg_get_constraintdef,
-- pg_get_indexdef, pg_get_functiondef, pg_get_ruledef, pg_get_expr), all of
-- which are SQL-callable; C would add nothing but risk.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The public generator functions run as their caller (no SECURITY DEFINER)
-- and call the helpers in storagelab_internal: every role may use them.
GRANT USAGE ON SCHEMA storagelab_internal TO PUBLIC;

-- One row of the dependency model.
CREATE TYPE storagelab.bigint_migration_object AS (
  kind        text,       -- column, sequence, identity, foreign_key, index, constraint,
                          -- default, statistics, view, materialized_view, rule, trigger,
                          -- policy, function, generated_column, publication_table,
                          -- trigger_function, blocker, function_hazard, widened_function (part 28)
  identity    text,       -- human-readable name (pg_describe_object style)
  relation    regclass,   -- table or view the object belongs to (NULL for functions, publications)
  column_name name,       -- the column, for kind column / generated_column / sequence
  depth       int,        -- 0: component columns and objects rebuilt with them; n: re-created objects, n+1 depends on n
  lock        text,       -- lock the blocking plan takes on it
  handling    text,       -- what the script does with it
  drop_sql    text,       -- statement(s) that drop it (NULL: nothing to drop, or dropped with its parent)
  create_sql  text,       -- statement(s) that re-create it exactly as it was (kinds column and
                          -- generated_column: ALTER TABLE clauses, run in one ALTER TABLE per table)
  post_sql    text,       -- statements run after create_sql (generated_column: comment, privileges, statistics target)
  check_sql   text,       -- boolean SQL expression, true when the object is in its expected final state
  blocker     text,       -- why no correct script can be produced (kind blocker only)
  sqlstate    text,       -- SQLSTATE of the blocker
  hint        text,       -- what the DBA can do about the blocker
  classid     oid,        -- catalog of the object (pg_class, pg_trigger, ...)
  objid       oid,        -- its OID
  objsubid    int,        -- column number for columns
  definition  text,       -- the object as PostgreSQL prints it (indexes: pg_get_indexdef), for writers that build a changed copy
  hazard_target text,     -- function_hazard: the parameter, variable or return type; widened_function: its bigint signature
  hazard_caller text,     -- function_hazard: who hands the converted value over (trigger, function, view)
  hazard_fails  text      -- function_hazard: 'immediately' (no function matches) or 'past 2^31' (integer out of range)
);
COMMENT ON TYPE storagelab.bigint_migration_object IS
  'one row of storagelab.bigint_migration_objects(): a column of the foreign-key component or an object depending on it';

-- Helpers --------------------------------------------------------------------

CREATE FUNCTION storagelab_internal.sql_qname(rel oid)
RETURNS text
LANGUAGE plpgsql STABLE STRICT   -- plpgsql: its plan is kept for the session (called per object)
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
  RETURN (SELECT format('%I.%I', n.nspname, c.relname)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.oid = rel);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.sql_qname(oid) IS
  'schema-qualified, quoted name of a relation, for generated scripts';

-- PostgreSQL version differences of the INT -> BIGINT generator, in one place.
--
-- PostgreSQL 18 stores NOT NULL as a constraint: a pg_constraint row with
-- contype 'n', its own name (default <table>_<column>_not_null) and an auto
-- pg_depend entry on its column.  For the generator that means:
--   * ALTER COLUMN TYPE keeps the table's own NOT NULL constraint and its
--     name (blocking mode), but re-creates the inherited copies of the
--     partitions (and inheritance children) under the parent's name: an
--     inherited constraint cannot be renamed, so a partition's NOT NULL
--     name follows its parent's after the migration;
--   * the online mode (copy and swap) gives the new table's column a NOT
--     NULL constraint of the old one's name (parts 60-64).
-- Before PostgreSQL 18, NOT NULL is only pg_attribute.attnotnull: nothing to
-- name, re-create or check beyond it.
CREATE FUNCTION storagelab_internal.sql_not_null_name(rel oid, attnum int2)
RETURNS name
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.conname
    FROM pg_constraint c
   WHERE current_setting('server_version_num')::int >= 180000
     AND c.conrelid = $1 AND c.contype = 'n' AND c.conkey = ARRAY[$2]
$$;
COMMENT ON FUNCTION storagelab_internal.sql_not_null_name(oid, int2) IS
  'name of the NOT NULL constraint of a column (PostgreSQL 18 and later); NULL when the column has none or NOT NULL is not a constraint (PostgreSQL 17 and earlier)';

CREATE FUNCTION storagelab_internal.sql_comment_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$ SELECT translate($1, E'\n\r\t', '   ') $$;
COMMENT ON FUNCTION storagelab_internal.sql_comment_text(text) IS
  'text made safe for a "--" comment line of a generated script (no line breaks)';

-- One GRANT statement of a re-created object: privilege (with its column
-- list, if any) on target (object type and name) to grantee (0: PUBLIC).
CREATE FUNCTION storagelab_internal.sql_grant(privilege text, target text, grantee oid, grantable boolean)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'GRANT %s ON %s TO %s%s;\n', $1, $2,
                CASE WHEN $3 = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid($3)) END,
                CASE WHEN $4 THEN ' WITH GRANT OPTION' ELSE '' END)
$$;
COMMENT ON FUNCTION storagelab_internal.sql_grant(text, text, oid, boolean) IS
  'a GRANT statement restoring one privilege of a re-created object';

CREATE FUNCTION storagelab_internal.sql_acl(objtype text, objname text, acl aclitem[], owner oid)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- objtype is TABLE (views, materialized views) or ROUTINE.  A re-created
  -- object starts with whatever ALTER DEFAULT PRIVILEGES gives the role that
  -- runs the script: every grantee of a default privilege of that object type
  -- is revoked too.  A NULL acl (the built-in default) needs no statement
  -- unless such default privileges exist; then it is restored as acldefault().
  WITH k AS (SELECT CASE WHEN $1 = 'TABLE' THEN 'r' ELSE 'f' END::"char" AS t),
  defs AS (
    SELECT string_agg(DISTINCT ', ' || quote_ident(pg_get_userbyid(x.grantee)), '') AS extra
      FROM k, pg_default_acl d, aclexplode(d.defaclacl) x
     WHERE d.defaclobjtype = k.t AND x.grantee NOT IN (0, $4)
  )
  SELECT CASE WHEN $3 IS NULL AND NOT EXISTS (SELECT 1 FROM k, pg_default_acl d WHERE d.defaclobjtype = k.t) THEN '' ELSE
    format(E'REVOKE ALL ON %s %s FROM PUBLIC, %I%s;\n', $1, $2, pg_get_userbyid($4), coalesce(defs.extra, '')) ||
    coalesce((SELECT string_agg(storagelab_internal.sql_grant(a.privilege_type, $1 || ' ' || $2, a.grantee, a.is_grantable),
                                '' ORDER BY a.grantee, a.privilege_type)
                FROM aclexplode(coalesce($3, acldefault(k.t, $4))) a), '')
  END
    FROM k, defs
$$;
COMMENT ON FUNCTION storagelab_internal.sql_acl(text, text, aclitem[], oid) IS
  'GRANT/REVOKE statements that give a re-created object exactly the privileges in acl';

CREATE FUNCTION storagelab_internal.bigint_migration_relation_extras(rel oid)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
  -- owner, privileges, column privileges, comments of a re-created view or
  -- materialized view (relation-level and column-level)
  SELECT format(E'ALTER %s %s OWNER TO %I;\n', c.what, c.qn, pg_get_userbyid(c.relowner))
      || storagelab_internal.sql_acl('TABLE', c.qn, c.relacl, c.relowner)
      || coalesce((SELECT string_agg(storagelab_internal.sql_grant(format('%s (%I)', x.privilege_type, a.attname), 'TABLE ' || c.qn,
                                                                   x.grantee, x.is_grantable), '' ORDER BY a.attnum, x.grantee, x.privilege_type)
                     FROM pg_attribute a, aclexplode(a.attacl) x
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attacl IS NOT NULL), '')
      || CASE WHEN c.descr IS NULL THEN '' ELSE format(E'COMMENT ON %s %s IS %L;\n', c.what, c.qn, c.descr) END
      || coalesce((SELECT string_agg(format(E'COMMENT ON COLUMN %s.%I IS %L;\n', c.qn, a.attname, d.description), '' ORDER BY a.attnum)
                     FROM pg_attribute a
                     JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
    FROM (SELECT c.oid, c.relowner, c.relacl, storagelab_internal.sql_qname(c.oid) AS qn, obj_description(c.oid, 'pg_class') AS descr,
                 CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END AS what
            FROM pg_class c WHERE c.oid = $1 OFFSET 0) c
$$;
COMMENT ON FUNCTION storagelab_internal.bigint_migration_relation_extras(oid) IS
  'owner, privileges and comments of a view or materialized view, as statements that restore them';

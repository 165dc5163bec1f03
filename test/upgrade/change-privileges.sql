-- A DBA's own privilege changes on every object of the extension, for
-- scripts/upgrade-test.sh (run before ALTER EXTENSION storagelab UPDATE, in
-- a database of its own): on each function, procedure, table, view,
-- sequence and schema, what PUBLIC had is taken away (or, when it had
-- nothing, given), pg_monitor and pg_stat_scan_tables lose what they had,
-- and the role storagelab_upgrade_dba gets the privilege.  An update that
-- ran the install parts' GRANT and REVOKE again over these objects would
-- undo some of it.
\set ON_ERROR_STOP 1
\ir objects.sql
DO $$ BEGIN CREATE ROLE storagelab_upgrade_dba; EXCEPTION WHEN duplicate_object THEN END $$;
DO $$
DECLARE
  o record;
BEGIN
  FOR o IN
    SELECT format('%s %s', k.kind, k.name) AS obj, k.priv,
           EXISTS (SELECT FROM aclexplode(coalesce(k.acl, acldefault(k.defkind, k.owner))) x
                    WHERE x.grantee = 0) AS public_has
      FROM storagelab_objects d
      CROSS JOIN LATERAL (
        SELECT 'ROUTINE' AS kind, p.oid::regprocedure::text AS name, 'EXECUTE' AS priv,
               p.proacl AS acl, 'f'::"char" AS defkind, p.proowner AS owner
          FROM pg_proc p WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid
        UNION ALL
        SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::regclass::text,
               CASE c.relkind WHEN 'S' THEN 'USAGE' ELSE 'SELECT' END,
               c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner
          FROM pg_class c WHERE d.classid = 'pg_class'::regclass AND c.oid = d.objid
           AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
        UNION ALL
        SELECT 'SCHEMA', quote_ident(n.nspname), 'USAGE', n.nspacl, 'n', n.nspowner
          FROM pg_namespace n WHERE d.classid = 'pg_namespace'::regclass AND n.oid = d.objid) k
  LOOP
    IF o.public_has THEN
      EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', o.obj);
    ELSE
      EXECUTE format('GRANT %s ON %s TO PUBLIC', o.priv, o.obj);
    END IF;
    EXECUTE format('REVOKE ALL ON %s FROM pg_monitor, pg_stat_scan_tables', o.obj);
    EXECUTE format('GRANT %s ON %s TO storagelab_upgrade_dba', o.priv, o.obj);
  END LOOP;
END
$$;

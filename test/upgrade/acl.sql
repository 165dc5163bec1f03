-- The privileges of every object of the extension, for
-- scripts/upgrade-test.sh: one line per function, procedure, aggregate,
-- table, view, sequence and schema, "classid:objid|identity|acl" (the ACL's
-- items sorted; "default" when NULL), in identity order.  Run with psql -At.
\ir objects.sql
SELECT d.classid::oid || ':' || d.objid, i.identity,
       coalesce((SELECT string_agg(x::text, ' ' ORDER BY x::text) FROM unnest(a.acl) x), 'default')
  FROM storagelab_objects d
  CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, 0) i
  CROSS JOIN LATERAL (SELECT CASE d.classid
                        WHEN 'pg_proc'::regclass THEN (SELECT p.proacl FROM pg_proc p WHERE p.oid = d.objid)
                        WHEN 'pg_class'::regclass THEN (SELECT c.relacl FROM pg_class c WHERE c.oid = d.objid)
                        WHEN 'pg_namespace'::regclass THEN (SELECT n.nspacl FROM pg_namespace n WHERE n.oid = d.objid)
                      END AS acl) a
 WHERE (d.classid IN ('pg_proc'::regclass, 'pg_namespace'::regclass)
        OR (d.classid = 'pg_class'::regclass
            AND (SELECT c.relkind FROM pg_class c WHERE c.oid = d.objid) IN ('r', 'p', 'v', 'm', 'S')))
 ORDER BY 2;

-- The temporary view storagelab_objects (classid, objid): the objects of the
-- extension, and its schemas by name (schema storagelab is not a member in
-- 1.0).  Included by test/upgrade/acl.sql and change-privileges.sql.
CREATE TEMP VIEW storagelab_objects AS
  SELECT classid, objid FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'storagelab')
  UNION
  SELECT 'pg_namespace'::regclass::oid, oid FROM pg_namespace
   WHERE nspname IN ('storagelab', 'storagelab_internal');

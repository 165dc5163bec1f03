-- The extension installs, drops and re-creates cleanly, documents every
-- public object, and keeps its objects in its own two schemas, which are
-- members of it (the extension object itself lives in pg_catalog, so that
-- pg_dump never writes the schemas apart).
SELECT extname, extversion, extrelocatable, nspname
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'storagelab';

-- Every member object is in schema storagelab (the API) or
-- storagelab_internal (everything else), and both schemas are members.
SELECT count(*) AS members_outside_schemas
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
 WHERE e.extname = 'storagelab' AND d.deptype = 'e'
   AND pg_describe_object(d.classid, d.objid, 0) NOT LIKE '% storagelab.%'
   AND pg_describe_object(d.classid, d.objid, 0) NOT LIKE '% storagelab\_internal.%'
   AND pg_describe_object(d.classid, d.objid, 0) NOT IN ('schema storagelab', 'schema storagelab_internal');

-- Every view, table and function carries a comment.
SELECT pg_describe_object(d.classid, d.objid, 0) AS without_comment
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
 WHERE e.extname = 'storagelab' AND d.deptype = 'e'
   AND d.classid IN ('pg_class'::regclass, 'pg_proc'::regclass)
   AND obj_description(d.objid, d.classid::regclass::name) IS NULL
 ORDER BY 1;

-- Every function pins its search_path (C functions need none).
SELECT p.oid::regprocedure AS unpinned
  FROM pg_proc p
 WHERE p.pronamespace IN ('storagelab'::regnamespace, 'storagelab_internal'::regnamespace)
   AND p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'c')
   AND p.prokind <> 'p'
   AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)
 ORDER BY 1;
-- Procedures that COMMIT cannot have a SET clause (PostgreSQL refuses
-- transaction control under one): they set search_path in each transaction.
-- One that does not COMMIT (an online script's step) pins it.
SELECT p.oid::regprocedure AS procedure, p.proconfig
  FROM pg_proc p
 WHERE p.pronamespace IN ('storagelab'::regnamespace, 'storagelab_internal'::regnamespace)
   AND p.prokind = 'p'
 ORDER BY 1;

-- Settings: defaults, an override, and back.
SELECT name, value, is_default FROM storagelab.setting_values
 WHERE name LIKE 'scripts.%' ORDER BY name;
INSERT INTO storagelab.settings VALUES ('scripts.lock_timeout', '500ms');
SELECT storagelab_internal.setting('scripts.lock_timeout');
DELETE FROM storagelab.settings;
SELECT storagelab_internal.setting('scripts.lock_timeout');
SELECT storagelab_internal.setting('no such setting') IS NULL AS unknown_is_null;

-- Drop and re-create.  Both schemas are members and go with the extension.
DROP EXTENSION storagelab;
SELECT nspname AS schema_left FROM pg_namespace WHERE nspname LIKE 'storagelab%' ORDER BY 1;
CREATE EXTENSION storagelab;
SELECT extversion FROM pg_extension WHERE extname = 'storagelab';

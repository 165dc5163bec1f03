-- storagelab update 1.0 -> 1.1: the steps that running the 1.1 install parts
-- again cannot do.  make builds storagelab--1.0--1.1.sql from this file
-- followed by every install part made re-runnable (scripts/upgrade-script.sh):
-- functions and views are created or replaced, tables, types and indexes
-- created when missing, shipped settings rows inserted or updated.  Here:
-- objects dropped (removed, or whose arguments, result or view columns
-- changed other than appending), moved to another schema, tables altered,
-- rows moved.  scripts/upgrade-test.sh proves that 1.0 plus the built script
-- equals a fresh install of 1.1.  See CONTRIBUTING.md, "Versions and
-- upgrades".

\echo Use "ALTER EXTENSION storagelab UPDATE TO '1.1'" to load this file. \quit

-- 1.0 -> 1.1, first step (before any install part re-runs): schema
-- storagelab becomes a member of the extension, and the extension object
-- moves to pg_catalog, where CREATE EXTENSION puts it since 1.1 (control
-- file: schema = pg_catalog).
--
-- In 1.0, CREATE EXTENSION created schema storagelab from the control
-- file's "schema = storagelab": not a member, so pg_dump wrote it apart and
-- pg_restore into a database with the extension failed ("schema storagelab
-- already exists"; with --single-transaction nothing was restored).
-- PostgreSQL refuses (55000) ALTER EXTENSION ADD SCHEMA of the schema the
-- extension object lives in, and ALTER EXTENSION SET SCHEMA needs a
-- relocatable extension; so the extension's own row is moved: extnamespace
-- set to pg_catalog, and its dependency on schema storagelab dropped (a
-- CREATE EXTENSION into pg_catalog records none: pg_catalog is pinned).
-- The update runs as a superuser (superuser = true), who may write these
-- catalogs.  Then the schema is added.  Re-runnable: each step checks first.
DO $schemas$
DECLARE
  ext oid := (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'storagelab');
BEGIN
  IF (SELECT extnamespace FROM pg_catalog.pg_extension WHERE oid = ext)
     <> 'pg_catalog'::pg_catalog.regnamespace THEN
    DELETE FROM pg_catalog.pg_depend
     WHERE classid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND objid = ext
       AND refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
       AND refobjid = 'storagelab'::pg_catalog.regnamespace AND deptype = 'n';
    UPDATE pg_catalog.pg_extension
       SET extnamespace = 'pg_catalog'::pg_catalog.regnamespace
     WHERE oid = ext;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_depend
                  WHERE classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
                    AND objid = 'storagelab'::pg_catalog.regnamespace
                    AND refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                    AND refobjid = ext AND deptype = 'e') THEN
    ALTER EXTENSION storagelab ADD SCHEMA storagelab;
    -- ADD SCHEMA records the privileges it finds as the schema's initial
    -- ones (pg_init_privs), against which pg_dump writes the changes: a
    -- DBA's GRANT or REVOKE made on 1.0 would count as initial and be lost
    -- by a dump.  The initial ones are those a 1.1 install gives.
    DELETE FROM pg_catalog.pg_init_privs
     WHERE classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
       AND objoid = 'storagelab'::pg_catalog.regnamespace AND objsubid = 0;
    INSERT INTO pg_catalog.pg_init_privs (objoid, classoid, objsubid, privtype, initprivs)
    SELECT n.oid, 'pg_catalog.pg_namespace'::pg_catalog.regclass, 0, 'e',
           pg_catalog.acldefault('n', n.nspowner)
             OPERATOR(pg_catalog.||) pg_catalog.makeaclitem(0, n.nspowner, 'USAGE', false)
      FROM pg_catalog.pg_namespace n WHERE n.nspname = 'storagelab';
  END IF;
END
$schemas$;

-- Schema storagelab_internal: helpers and C entry points (new in 1.1); the
-- moves below need it before the install parts run.
CREATE SCHEMA storagelab_internal;

-- Views whose columns changed (renamed, retyped, reordered): re-created by
-- the install parts.  A view of a user's over one of them makes the update
-- fail with 2BP01 (doc/install.md, "Upgrading").
DROP VIEW storagelab.int_overflow, storagelab.visibility, storagelab.bytea_storage,
          storagelab.column_waste, storagelab.alignment_padding;

-- Functions whose result changed, or that are gone.
DROP FUNCTION storagelab.int_overflow_scan(regclass);
DROP FUNCTION storagelab.toast_profile(regclass, name, integer);
DROP FUNCTION storagelab.heap_visibility(regclass, integer),
              storagelab.heap_visibility_toast(regclass, integer),
              storagelab.visibility_map_count(regclass);
DROP TYPE storagelab.heap_visibility_result;

-- Settings: the defaults table and setting() are internal (the table keeps
-- its rows; the install parts update the shipped ones).
ALTER TABLE storagelab.setting_defaults SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.setting(text) SET SCHEMA storagelab_internal;

-- int_overflow: the probes and the measurements are internal.
ALTER FUNCTION storagelab.int_overflow_sequence_state(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_index_bounds(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_stats_bounds(regclass, smallint) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.int_overflow_measurements() SET SCHEMA storagelab_internal;

-- The history keeps its rows: is_estimate becomes evidence.
ALTER TABLE storagelab.int_overflow_history ADD COLUMN evidence text NOT NULL DEFAULT 'exact';
UPDATE storagelab.int_overflow_history SET evidence = 'estimate' WHERE is_estimate;
ALTER TABLE storagelab.int_overflow_history DROP COLUMN is_estimate;

-- TOAST: the census and the lock probe are internal.
ALTER FUNCTION storagelab.toast_census(regclass, name, integer) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.toast_lock_nowait(regclass) SET SCHEMA storagelab_internal;

-- column_waste: the layout model, the walk, the profiles (with their rows)
-- and the helper views are internal; column_candidates() takes thresholds.
ALTER TYPE storagelab.tuple_layout SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.heap_pages(float8, float8, int4, boolean) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.text_kind(text) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.column_profile_scan(regclass) SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.column_statistics() SET SCHEMA storagelab_internal;
ALTER FUNCTION storagelab.table_layouts() SET SCHEMA storagelab_internal;
ALTER TABLE storagelab.column_profiles SET SCHEMA storagelab_internal;
ALTER VIEW storagelab.protected_columns SET SCHEMA storagelab_internal;
ALTER VIEW storagelab.column_facts SET SCHEMA storagelab_internal;
DROP FUNCTION storagelab.column_candidates(oid[], int2[]);

-- Profiles are kept by pg_dump since 1.1: the table and the type become
-- regclass and regtype (the same OIDs; pg_dump writes them as names), and
-- a trigger (install part) replaces row-level security, with which pg_dump
-- fails for a role without BYPASSRLS.  The policy names relid, so it goes
-- first.  Re-runnable: a column already of the type is left.
DROP POLICY IF EXISTS readable_tables ON storagelab_internal.column_profiles;
ALTER TABLE storagelab_internal.column_profiles DISABLE ROW LEVEL SECURITY;
ALTER TABLE storagelab_internal.column_profiles
  ALTER COLUMN relid TYPE pg_catalog.regclass,
  ALTER COLUMN atttypid TYPE pg_catalog.regtype;

-- Privileges 1.1 changes on objects 1.0 had.  The install parts' GRANT and
-- REVOKE statements apply only to objects the update creates (so that a
-- DBA's own changes survive it; scripts/rerunnable.awk), so each change of
-- an existing object's privileges is a step here.
-- The readers are executable by everyone and check the caller's privileges
-- themselves.
REVOKE EXECUTE ON FUNCTION storagelab_internal.toast_census(regclass, name, integer),
                           storagelab_internal.toast_lock_nowait(regclass),
                           storagelab_internal.column_profile_scan(regclass),
                           storagelab.column_profile(regclass)
  FROM pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION storagelab_internal.toast_census(regclass, name, integer),
                          storagelab_internal.toast_lock_nowait(regclass),
                          storagelab_internal.column_profile_scan(regclass),
                          storagelab.column_profile(regclass),
                          storagelab.snapshot()
  TO PUBLIC;
-- Executable by everyone as in 1.0 (the default), granted by name since 1.1.
GRANT EXECUTE ON FUNCTION storagelab_internal.setting(text),
                          storagelab_internal.int_overflow_measurements(),
                          storagelab_internal.table_layouts()
  TO PUBLIC;
-- Helpers that only storagelab's own objects call.
REVOKE EXECUTE ON FUNCTION storagelab_internal.column_statistics(),
                           storagelab_internal.heap_tuple_bytes(int2[], "char"[], "char"[], float8[], float8[], float8[], int4[], int4, int2, "char", "char", float8, int4),
                           storagelab_internal.heap_pages(float8, float8, int4, boolean),
                           storagelab_internal.text_kind(text),
                           storagelab_internal.int_overflow_sequence_state(regclass),
                           storagelab_internal.int_overflow_index_bounds(regclass),
                           storagelab_internal.int_overflow_stats_bounds(regclass, smallint)
  FROM PUBLIC;
REVOKE ALL ON storagelab_internal.column_facts, storagelab_internal.protected_columns FROM PUBLIC;
-- Members of pg_monitor record snapshots (int_overflow_snapshot()).
GRANT SELECT (taken_at), INSERT, DELETE ON storagelab.int_overflow_history TO pg_monitor;

-- INT -> BIGINT generator: the 1.0 generator is dropped (1.1's is one model
-- built once, its helpers internal); the progress rows are kept.
DROP FUNCTION storagelab.bigint_migration_plan(text);
DROP FUNCTION storagelab.bigint_migration_script(regclass, name, text);
DROP FUNCTION storagelab.bigint_migration_group_script(regclass[], name[], text);
DROP FUNCTION storagelab.bigint_migration_online_script(regclass[], name[]);
DROP FUNCTION storagelab.bigint_migration_retry_block(text[], int);
DROP FUNCTION storagelab.bigint_migration_objects(regclass, name);
DROP FUNCTION storagelab.bigint_migration_group_objects(regclass[], name[]);
DROP FUNCTION storagelab.bigint_migration_relation_extras(oid);
DROP FUNCTION storagelab.bigint_migration_acl_sql(text, text, aclitem[], oid);
DROP FUNCTION storagelab.bigint_migration_dollar_quote(text);
DROP FUNCTION storagelab.bigint_migration_comment_text(text);
DROP FUNCTION storagelab.bigint_migration_not_null_name(oid, int2);
DROP FUNCTION storagelab.bigint_migration_qname(oid);
DROP TYPE storagelab.bigint_migration_object;

-- bigint_migration_progress: the WAL each phase of an online migration
-- wrote (install part 65 records it; part 26 comments the column).
ALTER TABLE storagelab.bigint_migration_progress ADD COLUMN IF NOT EXISTS wal_bytes jsonb;

-- The throttle of online copies (part 29) shows in the progress rows: two
-- columns appended (a 1.0 online script's backfill, still finishing after
-- the update, names its columns and leaves them at their defaults).
ALTER TABLE storagelab.bigint_migration_progress
  ADD COLUMN IF NOT EXISTS status text,
  ADD COLUMN IF NOT EXISTS throttled_seconds numeric NOT NULL DEFAULT 0;

-- after the install parts

-- int_overflow's growth, fitted from the history the database recorded
-- (1.1 keeps it in storagelab_internal.int_overflow_growth).
SELECT storagelab_internal.int_overflow_growth_refit();

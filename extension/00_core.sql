-- storagelab install script, part 00: conventions and settings shared by
-- every capability.  make assembles storagelab--<version>.sql from
-- extension/[0-9]*.sql in name order.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- Schema "storagelab": the public API.  Created here, so that it is a
-- member of the extension: pg_dump writes neither schema apart from CREATE
-- EXTENSION, and a restore into a database where the extension exists
-- works.  The extension object itself lives in pg_catalog (control file),
-- as PostgreSQL cannot make the schema holding it a member.  A database
-- updated from 1.0 has the schema already, not a member: the update makes
-- it one first (doc/install.md, "Where the extension lives").
CREATE SCHEMA storagelab;
COMMENT ON SCHEMA storagelab IS
  'storagelab: storage advisor views and migration-script generators';

-- Schema "storagelab_internal": helpers and C entry points behind the public
-- objects.  No promises: anything in it may change in any version.
CREATE SCHEMA storagelab_internal;
COMMENT ON SCHEMA storagelab_internal IS
  'storagelab internals: helpers behind the public views and functions, no stable API';

-- Everyone may look up names in storagelab_internal: the public views and
-- PL/pgSQL functions, which run as their caller, reach their helpers there.
-- USAGE alone grants nothing: each helper is executable only by the roles
-- the public objects that call it serve (see doc/privileges.md).
GRANT USAGE ON SCHEMA storagelab_internal TO PUBLIC;

-- Settings: defaults ship with the extension; a DBA's overrides go into
-- storagelab.settings, which pg_dump keeps; storagelab.setting_values shows
-- both.
CREATE TABLE storagelab_internal.setting_defaults (
  name          text PRIMARY KEY,
  default_value text NOT NULL,
  description   text NOT NULL
);
COMMENT ON TABLE storagelab_internal.setting_defaults IS
  'storagelab settings with their shipped defaults (read them in storagelab.setting_values)';

CREATE TABLE storagelab.settings (
  name  text PRIMARY KEY REFERENCES storagelab_internal.setting_defaults (name),
  value text NOT NULL
);
COMMENT ON TABLE storagelab.settings IS
  'DBA overrides of storagelab settings (name, value); kept by pg_dump';
SELECT pg_catalog.pg_extension_config_dump('storagelab.settings', '');

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('scripts.lock_timeout', '2s',
   'lock_timeout set by generated migration scripts before each lock-taking step'),
  ('scripts.lock_retries', '30',
   'retries after a script step first hit lock_timeout or a deadlock (pause +0.1 s each, up to 2 s)');

CREATE FUNCTION storagelab_internal.setting(name text)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(s.value, d.default_value)
    FROM storagelab_internal.setting_defaults d
    LEFT JOIN storagelab.settings s USING (name)
   WHERE d.name = $1
$$;
COMMENT ON FUNCTION storagelab_internal.setting(text) IS
  'effective value of a storagelab setting: the override in storagelab.settings, else the default; NULL for an unknown name';

CREATE VIEW storagelab.setting_values AS
  SELECT d.name,
         coalesce(s.value, d.default_value) AS value,
         d.default_value,
         s.value IS NULL AS is_default,
         d.description
    FROM storagelab_internal.setting_defaults d
    LEFT JOIN storagelab.settings s USING (name);
COMMENT ON VIEW storagelab.setting_values IS
  'every storagelab setting: effective value, default, whether overridden, meaning';

GRANT USAGE ON SCHEMA storagelab TO PUBLIC;
GRANT SELECT ON storagelab_internal.setting_defaults, storagelab.settings,
                storagelab.setting_values TO PUBLIC;
-- Every public view and function reads its settings through setting().
GRANT EXECUTE ON FUNCTION storagelab_internal.setting(text) TO PUBLIC;

-- require_primary(what): the first statement of every function that writes
-- (int_overflow_snapshot(), column_profile(), the migration progress
-- writers).  On a hot standby, where the write would fail with a bare
-- "cannot execute INSERT in a read-only transaction", it fails first with
-- the same SQLSTATE and says where to run the call instead.
CREATE FUNCTION storagelab_internal.require_primary(what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF pg_is_in_recovery() THEN
    RAISE EXCEPTION 'cannot run % on a standby', what
      USING ERRCODE = 'read_only_sql_transaction',
            DETAIL = 'It writes into storagelab''s tables, and a standby is read-only.',
            HINT = 'Run it on the primary; the views work on a standby.';
  END IF;
END
$$;
COMMENT ON FUNCTION storagelab_internal.require_primary(text) IS
  'raises SQLSTATE 25006 with a hint when called on a hot standby; "what" names the public function in the message';
GRANT EXECUTE ON FUNCTION storagelab_internal.require_primary(text) TO PUBLIC;

-- check_scan_role(): 42501 with a hint unless the caller has the privileges
-- of pg_stat_scan_tables, which every page reader needs (src/relation.c);
-- for PL/pgSQL functions that must refuse before touching anything.
CREATE FUNCTION storagelab_internal.check_scan_role()
RETURNS void
AS 'MODULE_PATHNAME', 'storagelab_check_scan_role_sql'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.check_scan_role() IS
  'raises SQLSTATE 42501, with a hint naming pg_stat_scan_tables, unless the caller has its privileges';
GRANT EXECUTE ON FUNCTION storagelab_internal.check_scan_role() TO PUBLIC;

-- storagelab install script, part 00: conventions and settings shared by
-- every capability.  make assembles storagelab--<version>.sql from
-- extension/[0-9]*.sql in name order.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The schema "storagelab" is created by CREATE EXTENSION (control file:
-- schema = storagelab, relocatable = false) and belongs to the extension.

COMMENT ON SCHEMA storagelab IS
  'storagelab: storage advisor views and migration-script generators';

-- Schema "storagelab_internal": helpers and C entry points behind the public
-- objects.  No promises: anything in it may change in any version.
CREATE SCHEMA storagelab_internal;
COMMENT ON SCHEMA storagelab_internal IS
  'storagelab internals: helpers behind the public views and functions, no stable API';

-- Settings: defaults ship with the extension; a DBA's overrides go into
-- storagelab.settings, which pg_dump keeps.
CREATE TABLE storagelab.setting_defaults (
  name          text PRIMARY KEY,
  default_value text NOT NULL,
  description   text NOT NULL
);
COMMENT ON TABLE storagelab.setting_defaults IS
  'storagelab settings with their shipped defaults; override them in storagelab.settings';

CREATE TABLE storagelab.settings (
  name  text PRIMARY KEY REFERENCES storagelab.setting_defaults (name),
  value text NOT NULL
);
COMMENT ON TABLE storagelab.settings IS
  'DBA overrides of storagelab settings (name, value); kept by pg_dump';
SELECT pg_catalog.pg_extension_config_dump('storagelab.settings', '');

INSERT INTO storagelab.setting_defaults VALUES
  ('scripts.lock_timeout', '2s',
   'lock_timeout set by generated migration scripts before each lock-taking step'),
  ('scripts.lock_retries', '30',
   'how many more times a generated script tries a step after its first attempt hit lock_timeout or a deadlock (0: one attempt); each retry waits 0.1 s longer, at most 2 s');

CREATE FUNCTION storagelab.setting(name text)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(s.value, d.default_value)
    FROM storagelab.setting_defaults d
    LEFT JOIN storagelab.settings s USING (name)
   WHERE d.name = $1
$$;
COMMENT ON FUNCTION storagelab.setting(text) IS
  'effective value of a storagelab setting: the override in storagelab.settings, else the default';

CREATE VIEW storagelab.setting_values AS
  SELECT d.name,
         coalesce(s.value, d.default_value) AS value,
         d.default_value,
         s.value IS NULL AS is_default,
         d.description
    FROM storagelab.setting_defaults d
    LEFT JOIN storagelab.settings s USING (name);
COMMENT ON VIEW storagelab.setting_values IS
  'every storagelab setting: effective value, default, whether overridden, meaning';

GRANT USAGE ON SCHEMA storagelab TO PUBLIC;
GRANT SELECT ON storagelab.setting_defaults, storagelab.settings, storagelab.setting_values TO PUBLIC;

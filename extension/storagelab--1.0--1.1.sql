-- storagelab upgrade 1.0 -> 1.1.  Each change to the install script
-- (extension/[0-9]*.sql) since 1.0 appears here too; scripts/upgrade-test.sh
-- proves that 1.0 + this script equals a fresh install of 1.1.

\echo Use "ALTER EXTENSION storagelab UPDATE TO '1.1'" to load this file. \quit

CREATE SCHEMA storagelab_internal;
COMMENT ON SCHEMA storagelab_internal IS
  'storagelab internals: helpers behind the public views and functions, no stable API';

-- pgTAP: extension membership, privileges and conventions.
BEGIN;
SELECT plan(6);

SELECT has_schema('storagelab');
SELECT has_function('storagelab_internal', 'setting', ARRAY['text']);
SELECT is(storagelab_internal.setting('scripts.lock_retries'), '30', 'shipped default is visible');

INSERT INTO storagelab.settings VALUES ('scripts.lock_retries', '5');
SELECT is(storagelab_internal.setting('scripts.lock_retries'), '5', 'an override wins over the default');

SELECT throws_ok(
  $$INSERT INTO storagelab.settings VALUES ('no.such.setting', '1')$$,
  '23503', NULL, 'unknown settings are rejected');

SELECT ok(
  (SELECT 'storagelab.settings'::regclass::oid = ANY (extconfig)
     FROM pg_extension WHERE extname = 'storagelab'),
  'DBA overrides are kept by pg_dump (extension configuration table)');

SELECT * FROM finish();
ROLLBACK;

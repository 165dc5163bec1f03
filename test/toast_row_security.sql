-- pgTAP: toast_profile(), bytea_storage and the toast findings under
-- row-level security.  The census reads every row's value from the pages,
-- also the rows a policy hides from the caller; its sizes and content types
-- describe data, so, as pg_stats does, a role for which row-level security
-- is active gets no profile of the table: toast_profile() refuses (42501),
-- bytea_storage and findings leave the table out.  Before, a tenant role
-- (SELECT and pg_stat_scan_tables, a policy showing it a third of the rows)
-- got the sizes and content types of every tenant's values, counted as the
-- rows "a SELECT in the same statement sees".
BEGIN;
SELECT plan(8);

CREATE ROLE storagelab_toast_tenant;
GRANT pg_stat_scan_tables TO storagelab_toast_tenant;
CREATE ROLE storagelab_toast_owner;
GRANT pg_stat_scan_tables TO storagelab_toast_owner;
CREATE SCHEMA toast_rls AUTHORIZATION storagelab_toast_owner;
GRANT USAGE ON SCHEMA toast_rls TO storagelab_toast_tenant;
SET LOCAL ROLE storagelab_toast_owner;
CREATE TABLE toast_rls.files (tenant int NOT NULL, body bytea);
-- tenant 1: text; the others: gzip streams (magic bytes 1f 8b)
INSERT INTO toast_rls.files
  SELECT g % 3, CASE WHEN g % 3 = 1 THEN convert_to(repeat('tenant one text ', 200), 'UTF8')
                     ELSE decode('1f8b0800' || repeat(md5(g::text), 100), 'hex') END
    FROM generate_series(1, 300) g;
CREATE POLICY tenant_one ON toast_rls.files USING (tenant = 1);
ALTER TABLE toast_rls.files ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON toast_rls.files TO storagelab_toast_tenant;
RESET ROLE;

SET LOCAL ROLE storagelab_toast_tenant;
SELECT is((SELECT count(*) FROM toast_rls.files), 100::bigint, 'the tenant sees a third of the rows');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_rls.files', 'body')$$, '42501', NULL,
                 'toast_profile() refuses a role whose policies hide rows (42501)');
SELECT is((SELECT count(*) FROM storagelab.bytea_storage WHERE relation = 'toast_rls.files'::regclass), 0::bigint,
          'bytea_storage leaves the table out for that role');
SELECT lives_ok($$SELECT count(*) FROM storagelab.findings$$, 'findings works for that role');
RESET ROLE;

-- the owner (row-level security not forced) and a superuser profile every row
SET LOCAL ROLE storagelab_toast_owner;
SELECT is((SELECT rows_scanned || ' ' || (content_types ->> 'gzip') FROM storagelab.toast_profile('toast_rls.files', 'body')),
          '300 200', 'the owner profiles every row');
SELECT is((SELECT sample_rows FROM storagelab.bytea_storage WHERE relation = 'toast_rls.files'::regclass), 300::bigint,
          'bytea_storage lists the table for the owner');
RESET ROLE;
SELECT is((SELECT rows_scanned FROM storagelab.toast_profile('toast_rls.files', 'body')), 300::bigint,
          'a superuser profiles every row');

-- FORCE ROW LEVEL SECURITY: the owner's policies apply to it too
ALTER TABLE toast_rls.files FORCE ROW LEVEL SECURITY;
SET LOCAL ROLE storagelab_toast_owner;
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_rls.files', 'body')$$, '42501', NULL,
                 'with FORCE ROW LEVEL SECURITY the owner is refused too');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

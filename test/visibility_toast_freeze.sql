-- pgTAP: storagelab.visibility's freeze ages are those of the table or of
-- its TOAST table, whichever is older.  A table frozen with VACUUM (FREEZE,
-- PROCESS_TOAST false) after transactions were used up keeps its TOAST
-- table's old relfrozenxid: wraparound comes from that one (autovacuum
-- treats TOAST tables on their own), so the view must report it.
\set QUIET 1
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
DROP SCHEMA IF EXISTS vtf CASCADE;
CREATE SCHEMA vtf;
CREATE TABLE vtf.docs (id int PRIMARY KEY, body text);
ALTER TABLE vtf.docs ALTER body SET STORAGE EXTERNAL;
INSERT INTO vtf.docs SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 50) g;
CREATE PROCEDURE vtf.use_xids(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    PERFORM pg_catalog.txid_current();
    COMMIT;
  END LOOP;
END $$;
CALL vtf.use_xids(60);
SELECT c.oid AS toast_oid FROM pg_class c WHERE c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'vtf.docs'::regclass) \gset
-- VACUUM advances relfrozenxid only past what every other snapshot has seen.
-- A session of this database that starts after the wait (an autovacuum
-- ANALYZE of a catalog) can still take a snapshot as old as the oldest
-- transaction then running in any database, and hold the table's
-- relfrozenxid back with it (it failed that way once in a soak, both ages
-- equal).  So: wait and freeze four times (relfrozenxid only moves forward:
-- one try that is not held back is enough); the first test below checks it.
\i test/fixtures/wait_for_snapshots.sql
\o /dev/null
SELECT u.s FROM generate_series(1, 4) try,
       unnest(ARRAY['SELECT pg_temp.wait_for_snapshots()', 'VACUUM (FREEZE, PROCESS_TOAST false) vtf.docs']) WITH ORDINALITY u(s, o)
 ORDER BY try, u.o \gexec
\o

SELECT plan(3);
SELECT cmp_ok(age((SELECT relfrozenxid FROM pg_class WHERE oid = :toast_oid)), '>',
              age((SELECT relfrozenxid FROM pg_class WHERE oid = 'vtf.docs'::regclass)) + 50,
              'the fixture: the TOAST table''s relfrozenxid is at least 50 transactions older than the table''s');
SELECT is((SELECT relfrozenxid_age FROM storagelab.visibility WHERE relation = 'vtf.docs'::regclass),
          age((SELECT relfrozenxid FROM pg_class WHERE oid = :toast_oid)),
          'relfrozenxid_age is the TOAST table''s, the older one');
VACUUM (FREEZE) vtf.docs;
SELECT is((SELECT relfrozenxid_age FROM storagelab.visibility WHERE relation = 'vtf.docs'::regclass),
          greatest(age((SELECT relfrozenxid FROM pg_class WHERE oid = 'vtf.docs'::regclass)),
                   age((SELECT relfrozenxid FROM pg_class WHERE oid = :toast_oid))),
          'after a VACUUM (FREEZE) of both, the greater of the two young ages');
SELECT * FROM finish();
DROP SCHEMA vtf CASCADE;

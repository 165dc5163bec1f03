-- pgTAP: edge cases of the blocking INT -> BIGINT migration
-- (test/fixtures/bigint_migration_edge.sql, one schema per case).  Every
-- generated script is executed with psql -v ON_ERROR_STOP=1 -f in a scratch
-- database; the checks compare the database afterwards with what it was
-- before (data as jsonb, every object definition, privileges, comments) and
-- exercise the re-created objects (foreign-key actions, exclusion
-- constraints, row security, triggers, rules).  What cannot be converted in
-- place must be refused with SQLSTATE 0A000 before anything is touched.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_edge;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_edge TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_edge
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_edge.sql
SET client_min_messages = warning;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
CREATE TABLE snap.before AS SELECT * FROM snap.data();
-- ALTER COLUMN TYPE re-parses expressions: "id % 2" becomes "id % (2)::bigint"
-- in policies, statistics and generated columns, which is the same
-- expression; e_acl is compared separately (its privileges are made explicit)
CREATE FUNCTION snap.catalog_norm() RETURNS TABLE (kind text, name text, def text) LANGUAGE sql AS $$
  SELECT kind, name, regexp_replace(def, '\((\d+)\)::bigint', '\1', 'g') FROM snap.catalog()
   WHERE name NOT LIKE 'e_acl.%' AND name <> 'e_dflt.t.id'
$$;
CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog_norm();
CREATE TABLE snap.runs (tbl text, rc text);
CREATE TABLE snap.mvsec_before AS SELECT count(*) AS n, min(who) AS who FROM e_mvsec.mv;
SET ROLE storagelab_edge_reader;
CREATE TEMP TABLE rls_before AS
  SELECT (SELECT count(*) FROM e_rls.t) AS t_rows, (SELECT count(*) FROM e_rls.other) AS other_rows;
RESET ROLE;

SELECT plan(63);

-- Refused before anything is touched -------------------------------------
SELECT throws_like($$SELECT storagelab.bigint_migration_script('e_block.p', 'id')$$,
  '%1 blocker(s)%', 'a foreign-key column typed with a domain over integer is refused');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('e_block.p', 'id')$$, '0A000', NULL,
  'the domain refusal has SQLSTATE 0A000');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('e_block.q', 'id')$$, '0A000', NULL,
  'a referencing column that is a partition key is refused with 0A000');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('e_block.ex', 'id')$$, '0A000', NULL,
  'a column used in a partition-key expression is refused with 0A000');
SELECT ok((SELECT bool_or(blocker LIKE '%several inheritance trees%') FROM storagelab.bigint_migration_objects('e_block.b1', 'id')),
  'a column inherited from two inheritance trees is a blocker (ALTER TYPE on one parent fails)');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('e_block.b1', 'id')$$, '0A000', NULL,
  'the multiple-inheritance refusal has SQLSTATE 0A000');
SELECT throws_ok($$SELECT storagelab.bigint_migration_script('e_block.opc', 'id')$$, '0A000', NULL,
  'an index with an integer-only operator class (its rebuild would fail) is refused with 0A000');
SELECT ok((SELECT bool_or(hint LIKE '%int8\_minmax\_multi\_ops%') FROM storagelab.bigint_migration_objects('e_block.opc', 'id')),
  'the hint names the bigint operator class');

-- Run every script ---------------------------------------------------------
\set t e_fk.p
\set col id
\set file fk
\i test/fixtures/bigint_migration_run.sql
\set t e_multi.p
\set col id
\set file multi
\i test/fixtures/bigint_migration_run.sql
\set t e_multi.tree
\set col id
\set file tree
\i test/fixtures/bigint_migration_run.sql
\set t e_idx.t
\set col id
\set file idx
\i test/fixtures/bigint_migration_run.sql
\set t e_rls.t
\set col id
\set file rls
\i test/fixtures/bigint_migration_run.sql
\set t e_views.t
\set col id
\set file views
\i test/fixtures/bigint_migration_run.sql
\set t e_mvsec.t
\set col id
\set file mvsec
\i test/fixtures/bigint_migration_run.sql
\set t e_gen.p
\set col id
\set file gen
\i test/fixtures/bigint_migration_run.sql
\set t e_pgen.p
\set col id
\set file pgen
\i test/fixtures/bigint_migration_run.sql
\set t e_dflt.t
\set col id
\set file dflt
\i test/fixtures/bigint_migration_run.sql
\set t e_trg.t
\set col id
\set file trg
\i test/fixtures/bigint_migration_run.sql
\set t e_pub.t
\set col id
\set file pub
\i test/fixtures/bigint_migration_run.sql
\set t '"e ß; --"."Parent"'
\set col id
\set file hostile
\i test/fixtures/bigint_migration_run.sql
\set t e_block.root
\set col id
\set file diamond
\i test/fixtures/bigint_migration_run.sql

SELECT is((SELECT array_agg(tbl || '=' || rc ORDER BY tbl COLLATE "C") FROM snap.runs),
  ARRAY['dflt=0', 'diamond=0', 'fk=0', 'gen=0', 'hostile=0', 'idx=0', 'multi=0', 'mvsec=0', 'pgen=0', 'pub=0', 'rls=0', 'tree=0', 'trg=0', 'views=0'],
  'every generated script ran to COMMIT');
SELECT set_eq('SELECT * FROM snap.data()', 'SELECT * FROM snap.before',
  'row counts and checksums of every table, view and materialized view unchanged');
SELECT set_eq('SELECT * FROM snap.catalog_norm()', 'SELECT * FROM snap.catalog_before',
  'every object kept or re-created exactly: definitions, options, owners, privileges, comments');
SELECT is((SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
            WHERE n.nspname LIKE 'e\_%' AND NOT c.convalidated), 2::bigint,
  'every constraint is valid except the two that were NOT VALID before');

-- e_fk: actions, deferrability, MATCH FULL, NOT VALID
SELECT is((SELECT string_agg(c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, NULL), ', ' ORDER BY c.relname, a.attname)
             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'e_fk'::regnamespace AND c.relkind = 'r' AND a.attname IN ('id', 'pid')),
  'c_cascade.id integer, c_cascade.pid bigint, c_def.pid bigint, c_full.pid bigint, c_nv.pid bigint, '
  'c_setnull.id integer, c_setnull.pid bigint, c_setnull_cols.pid bigint, p.id bigint',
  'e_fk: the key and every referencing column are bigint, the unrelated keys stay integer');
DELETE FROM e_fk.c_def WHERE pid = 2;
DELETE FROM e_fk.p WHERE id = 2;
SELECT is((SELECT (SELECT count(*) FROM e_fk.c_cascade WHERE id = 2) || ' ' || (SELECT count(*) FROM e_fk.c_setnull WHERE id = 2 AND pid IS NULL)
                  || ' ' || (SELECT count(*) FROM e_fk.c_setnull_cols WHERE pid IS NULL AND pv = 'v2')),
  '0 1 1', 'e_fk: ON DELETE CASCADE, SET NULL and SET NULL (pid) still act');
SELECT throws_ok($$INSERT INTO e_fk.c_full VALUES (1, NULL)$$, '23503', NULL, 'e_fk: MATCH FULL still rejects a half-null key');
SELECT is((SELECT condeferred FROM pg_constraint WHERE conname = 'fk_def'), true, 'e_fk: the foreign key is still DEFERRABLE INITIALLY DEFERRED');
SELECT is((SELECT count(*) FROM e_fk.c_nv WHERE pid = 999), 1::bigint, 'e_fk: the NOT VALID foreign key was not validated (its orphan row is kept)');
SELECT is((SELECT seqtypid::regtype::text FROM pg_sequence WHERE seqrelid = 'e_fk.p_id_seq'::regclass), 'bigint', 'e_fk: the serial sequence is bigint');

-- e_multi: composite keys with a bigint or text column, self-reference
SELECT is((SELECT string_agg(c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, NULL), ', ' ORDER BY c.relname, a.attname)
             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'e_multi'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped),
  'c.pid bigint, c.tenant bigint, c2.pid bigint, c2.region text, p.id bigint, p.region text, p.tenant bigint, '
  'tree.id bigint, tree.parent bigint, tree.pid bigint, tree.ptenant bigint',
  'e_multi: the int columns of the composite keys and the self-reference are bigint, the others unchanged');
SELECT lives_ok($$WITH a AS (INSERT INTO e_multi.p VALUES (1, 3000000000, 'r') RETURNING id)
                  INSERT INTO e_multi.c2 SELECT 'r', id FROM a$$,
  'e_multi: a key past 2^31 goes through the composite foreign key with a text column');
SELECT lives_ok($$INSERT INTO e_multi.tree VALUES (3000000000, 1, 3000000000, 1), (3000000001, 3000000000, NULL, NULL)$$,
  'e_multi: keys past 2^31 go through the self-referencing and the composite foreign key with a bigint column');

-- e_idx: exclusion constraints, unique partial and expression indexes
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'e_idx.t'::regclass AND attname = 'id'), 'bigint', 'e_idx: converted');
SELECT throws_ok($$INSERT INTO e_idx.t VALUES (5, tstzrange('2025-01-01', '2025-01-03'), 'new', false)$$, '23P01', NULL,
  'e_idx: the exclusion constraints still reject a duplicate');
SELECT throws_ok($$INSERT INTO e_idx.t VALUES (1001, NULL, 'x', false), (2001, NULL, 'x', false)$$, '23505', NULL,
  'e_idx: the unique expression index still rejects (id % 1000, code) duplicates');
SELECT is((SELECT count(*) FROM pg_index WHERE indrelid = 'e_idx.t'::regclass AND indisvalid), 5::bigint,
  'e_idx: the five indexes (two unique, INCLUDE, two exclusion) are valid');

-- e_rls: policies on the table and on another table, as the role they apply to
SET ROLE storagelab_edge_reader;
SELECT is((SELECT count(*) FROM e_rls.t), (SELECT t_rows FROM rls_before), 'e_rls: the policy on the converted table filters as before');
SELECT is((SELECT count(*) FROM e_rls.other), (SELECT other_rows FROM rls_before), 'e_rls: the policy of another table with a subquery on the key filters as before');
RESET ROLE;
SELECT is((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'e_rls.t'::regclass), 'storagelab_edge_owner', 'e_rls: owner unchanged');

-- e_views: rules, view chain, materialized views
SELECT ok((SELECT relispopulated FROM pg_class WHERE oid = 'e_views.mv'::regclass)
          AND NOT (SELECT relispopulated FROM pg_class WHERE oid = 'e_views.mv_nodata'::regclass),
  'e_views: the materialized view WITH DATA is populated, the WITH NO DATA one is not');
DELETE FROM e_views.t WHERE id = 100;
SELECT is((SELECT count(*) FROM e_views.log WHERE tid = 100), 1::bigint, 'e_views: the re-created rule on the table fires');
SELECT lives_ok($$INSERT INTO e_views.v1 VALUES (3000000000, 'big')$$, 'e_views: the re-created INSTEAD rule of the view inserts past 2^31');
SELECT is((SELECT max(id) FROM e_views.v1), 3000000000::bigint, 'e_views: the view shows it');
SELECT is((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'e_views.mv'::regclass), 'storagelab_edge_owner',
  'e_views: the materialized view keeps its owner');

-- e_mvsec: a materialized view is populated as its owner, not as the role running the script
SELECT is((SELECT count(*) || ' ' || min(who) FROM e_mvsec.mv), (SELECT n || ' ' || who FROM snap.mvsec_before),
  'e_mvsec: the re-created materialized view holds the rows its owner sees (row security, current_user)');

-- e_gen: stored generated columns of the referencing table
SELECT is((SELECT count(*) FROM e_gen.c WHERE bucket <> pid % 10 OR label <> 'p' || pid), 0::bigint,
  'e_gen: the re-added generated columns hold the right values');
SELECT lives_ok($$WITH a AS (INSERT INTO e_gen.p VALUES (3000000001) RETURNING id) INSERT INTO e_gen.c (id, pid) SELECT 21, id FROM a$$,
  'e_gen: insert past 2^31 through the foreign key, with generated columns');

SELECT is((SELECT string_agg(c.relname || CASE WHEN i.indisclustered THEN ' clustered' ELSE '' END
                                        || CASE WHEN i.indisreplident THEN ' replica identity' ELSE '' END, ', ' ORDER BY c.relname)
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid IN ('e_gen.c'::regclass, 'e_views.mv'::regclass)
              AND (i.indisclustered OR i.indisreplident)),
  'c_bucket clustered, c_label replica identity, mv_u clustered',
  'e_gen, e_views: re-created indexes keep CLUSTER ON and REPLICA IDENTITY USING INDEX');

-- e_pgen: a generated column of a partitioned table, with partition indexes and statistics
SELECT is((SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relnamespace = 'e_pgen'::regnamespace AND i.indisvalid), 5::bigint,
  'e_pgen: every index is back and valid (the partitioned one and its 2 partitions, the partition''s own, the primary key of p)');
SELECT is((SELECT string_agg(c.relname || '>' || p.relname, ', ' ORDER BY c.relname)
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE c.relkind = 'i' AND c.relnamespace = 'e_pgen'::regnamespace),
  'ev1_half_idx>ev_half, ev2_half_idx>ev_half', 'e_pgen: the partitions'' indexes are attached to the partitioned index, under their names');
SELECT is((SELECT pg_get_userbyid(stxowner) FROM pg_statistic_ext WHERE stxname = 'st_half'), 'storagelab_edge_owner',
  'e_pgen: the partition''s statistics object is back with its owner');
SELECT lives_ok($$WITH a AS (INSERT INTO e_pgen.p VALUES (3000000000) RETURNING id) INSERT INTO e_pgen.ev SELECT '2025-03-01', id FROM a$$,
  'e_pgen: insert past 2^31 into the partitioned table');

SELECT is((SELECT tgrelid::regclass::text || ' ' || tgenabled::text FROM pg_trigger WHERE tgname = 'ev_of' ORDER BY tgrelid::regclass::text COLLATE "C" LIMIT 1),
  'e_pgen.ev O', 'e_pgen: the trigger on the partitioned table is back, enabled');
SELECT is((SELECT string_agg(tgrelid::regclass::text || ' ' || tgenabled::text, ', ' ORDER BY tgrelid::regclass::text COLLATE "C") FROM pg_trigger WHERE tgname = 'ev_of'),
  'e_pgen.ev O, e_pgen.ev1 D, e_pgen.ev2 O', 'e_pgen: its clone stays disabled on the partition where it was');

-- e_dflt: the default loses its cast to integer, so that it works past 2^31
SELECT is((SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'e_dflt.t'::regclass),
  'nextval(''e_dflt.t_id_seq''::regclass)', 'e_dflt: the nextval() default has no cast to integer any more');
SELECT setval('e_dflt.t_id_seq', 3000000000) \g /dev/null
SELECT lives_ok($$WITH a AS (INSERT INTO e_dflt.t (v) VALUES ('big') RETURNING id) INSERT INTO e_dflt.c SELECT id FROM a$$,
  'e_dflt: the default gives keys past 2^31');

-- e_trg: the re-created triggers fire as before
UPDATE e_trg.t SET id = id + 3000000000 WHERE id = 1;
SELECT is((SELECT string_agg(tg, ',' ORDER BY tg) FROM e_trg.fired), 't_ctrg,t_of,t_stmt,t_when',
  'e_trg: WHEN, UPDATE OF, the deferred constraint trigger and the statement trigger fire; the REPLICA one does not');

-- e_pub
SELECT is((SELECT pg_get_expr(prqual, prrelid) FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE p.pubname = 'e_pub_filter'),
  '(id > 5)', 'e_pub: the row filter is back');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'e_pub2.c'::regclass AND attname = 'pid'), 'bigint',
  'e_pub: the referencing table of a FOR TABLES IN SCHEMA publication is converted');

-- hostile names
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid IN ('"e ß; --"."Parent"'::regclass, '"e ß; DROP TABLE x; --"."Child ""1""; --"'::regclass)
            AND attname IN ('id', 'Parent Id') AND atttypid = 'int8'::regtype), 2::bigint,
  'hostile names: the key and the referencing column in another schema are bigint');
SELECT is((SELECT seqtypid::regtype::text FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('"e ß; --"."Parent"', 'id')::regclass),
  'bigint', 'hostile names: the identity sequence is bigint');

-- e_block: a diamond from one root converts
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'e_block.diamond'::regclass AND attname = 'id'), 'bigint',
  'e_block: a column inherited twice from one root is converted through the root');

-- e_expr: a view that cannot be re-created on bigint: the script fails and changes nothing
\set t e_expr.t
\set col id
\set file expr
\i test/fixtures/bigint_migration_run.sql
SELECT is((SELECT rc FROM snap.runs WHERE tbl = 'expr'), '3', 'e_expr: the script stops (psql exit status 3)');
SELECT is((SELECT format_type(atttypid, NULL) || ' ' || (to_regclass('e_expr.v') IS NOT NULL)
             FROM pg_attribute WHERE attrelid = 'e_expr.t'::regclass AND attname = 'id'), 'integer true',
  'e_expr: nothing changed (one transaction): the column is integer, the view is there');

-- e_late: a view and a foreign key created after generation: the pre-flight check refuses
SELECT storagelab.bigint_migration_script('e_late.p', 'id') \g (format=unaligned tuples_only=on) :tmp/late.sql
CREATE VIEW e_late.v AS SELECT id FROM e_late.p;
CREATE TABLE e_late.c2 (pid int REFERENCES e_late.p);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/late.sql > :tmp/late.out 2>&1; echo $?`
\set out `cat :tmp/late.out`
SELECT is(:'rc'::text, '3', 'e_late: the script stops in its pre-flight check');
SELECT ok(:'out'::text LIKE '%database changed since this script was generated%new objects depend%c2_pid_fkey%view e\_late.v%',
  'e_late: it names the new foreign key and the new view');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'e_late.p'::regclass AND attname = 'id'), 'integer',
  'e_late: nothing changed');

-- e_owner: run as the tables' owner
SELECT storagelab.bigint_migration_script('e_owner.p', 'id') \g (format=unaligned tuples_only=on) :tmp/owner.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET ROLE storagelab_edge_owner' -f :tmp/owner.sql > :tmp/owner.out 2>&1; echo $?`
\set out `cat :tmp/owner.out`
SELECT is(:'rc'::text, '3', 'e_owner: without CREATE on the schema the owner cannot re-create the view: the script stops');
SELECT ok(:'out'::text LIKE '%cannot do every step%schema e\_owner (no CREATE privilege)%', 'e_owner: the pre-flight check says why (42501) before taking locks');
GRANT CREATE ON SCHEMA e_owner TO storagelab_edge_owner;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET ROLE storagelab_edge_owner' -f :tmp/owner.sql > :tmp/owner.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'e_owner: with it, the owner runs the script to COMMIT');
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid IN ('e_owner.p'::regclass, 'e_owner.c'::regclass, 'e_owner.v'::regclass)
            AND attname IN ('id', 'pid') AND atttypid = 'int8'::regtype), 3::bigint, 'e_owner: converted, the view re-created');

-- e_acl: re-created under ALTER DEFAULT PRIVILEGES, objects keep exactly their privileges
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO storagelab_edge_reader;
\set t e_acl.t
\set col id
\set file acl
\i test/fixtures/bigint_migration_run.sql
SELECT is((SELECT rc FROM snap.runs WHERE tbl = 'acl'), '0', 'e_acl: the script ran');
SELECT ok(has_function_privilege('storagelab_edge_reader', 'e_acl.cnt(int)', 'EXECUTE'),
  'e_acl: the re-created function is still executable by PUBLIC');
SELECT ok(NOT has_table_privilege('storagelab_edge_reader', 'e_acl.v', 'SELECT')
          AND NOT has_table_privilege('storagelab_edge_reader', 'e_acl.mv', 'SELECT'),
  'e_acl: the re-created view and materialized view did not gain the default privileges');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_edge;
DROP ROLE storagelab_edge_owner;
DROP ROLE storagelab_edge_reader;
DROP ROLE "storagelab edge ""Own;er""";
\set rc `rm -rf :tmp`

-- pgTAP: what a layout script checks before it takes a lock, what it locks,
-- and what it leaves to the session that runs it.  Every generated script
-- is executed with psql in a scratch database:
--   1. locks: the header lists every relation locked before the copy (the
--      table, tables referencing it and referenced by it, dependent views
--      and materialized views), in OID order; another session holding a
--      lock on a dependent materialized view, or writing to a referenced
--      table, makes the script give up in its lock block (lock_timeout),
--      before the copy, with nothing changed;
--   2. a view over a function returning the table's rows: the script drops
--      it before the function and re-creates it after (its rows checked);
--   3. the session's search_path after a blocking layout script, an online
--      one (phase start, then rollback), an online INT->BIGINT script (the
--      same) and a blocking INT->BIGINT script run with psql -f: as it was;
--   4. the header's sizes: the heap on disk of a plain table, a partitioned
--      table and an inheritance tree (compared with pg_relation_size of the
--      tree read here), the plan's prediction, or none with column_order;
--   5. functions that use a retyped column: a trigger function calling a
--      helper f(integer) with NEW.qty (qty to smallint runs, then INSERTs
--      run the trigger; qty to bigint is refused), SQL functions comparing
--      ref with a text parameter (ref text to uuid refused; a PL/pgSQL
--      function returning qty by RETURN QUERY as integer (qty to smallint
--      refused; the same function made after it fails with 42804); a comparison the
--      textual reading misses caught by the script's validator check under
--      its locks, rolled back; once the functions cast, the script runs and
--      the functions find their rows).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_layout_safety;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_layout_safety TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_layout_safety
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
CREATE EXTENSION dblink;
\i test/fixtures/bigint_migration_helpers.sql
\set tmp `mktemp -d`
INSERT INTO storagelab.settings VALUES ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');

-- an error as text: SQLSTATE, message, detail, hint
CREATE FUNCTION snap.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; hnt text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
  RETURN concat_ws(' | ', st, msg, det, hnt);
END
$$;
-- the columns of a table in order
CREATE FUNCTION snap.cols(rel regclass) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
    FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
$$;

SELECT plan(41);

-- 1. locks
CREATE SCHEMA lk;
CREATE TABLE lk.parent (id int PRIMARY KEY, name text);
INSERT INTO lk.parent SELECT g, 'p' || g FROM generate_series(1, 100) g;
CREATE TABLE lk.t (id int PRIMARY KEY, a boolean, b int8, c boolean, parent_id int REFERENCES lk.parent)
  WITH (autovacuum_enabled = false);   -- no statistics, no plan: the scripts follow column_order alone
INSERT INTO lk.t SELECT g, g % 2 = 0, g, true, g % 100 + 1 FROM generate_series(1, 2000) g;
CREATE TABLE lk.child (id int PRIMARY KEY, t_id int REFERENCES lk.t);
INSERT INTO lk.child SELECT g, g FROM generate_series(1, 100) g;
CREATE TABLE lk.other (x int);
INSERT INTO lk.other VALUES (1);
CREATE VIEW lk.v AS SELECT id, b FROM lk.t;
CREATE MATERIALIZED VIEW lk.mv AS SELECT id, a FROM lk.t;
CREATE VIEW lk.vv AS SELECT v.id, o.x FROM lk.v v, lk.other o;
CREATE TABLE snap.catalog_lk AS SELECT * FROM snap.catalog();

SELECT storagelab.layout_migration_script('lk.t', column_order => '{id,b,parent_id,a,c}') AS script \gset
SELECT is((SELECT array_agg(m[1] ORDER BY n)
             FROM regexp_matches(substring(:'script' FROM '-- Locks:.*?\n(.*?)-- Disk:'), '--   (\S+) \(', 'g') WITH ORDINALITY AS x(m, n)),
          (SELECT array_agg(r::text ORDER BY r::oid)
             FROM unnest('{lk.t,lk.parent,lk.child,lk.v,lk.mv,lk.vv}'::regclass[]) r),
          'the header lists the table, the tables referencing it and referenced by it, and the views and materialized views over it, in OID order');
SELECT is((SELECT array_agg(m[1] ORDER BY n)
             FROM regexp_matches(:'script', 'EXECUTE ''(?:LOCK TABLE|ALTER VIEW|ALTER MATERIALIZED VIEW) (\S+) ', 'g') WITH ORDINALITY AS x(m, n)),
          (SELECT array_agg(r::text ORDER BY r::oid)
             FROM unnest('{lk.t,lk.parent,lk.child,lk.v,lk.mv,lk.vv}'::regclass[]) r),
          'the lock block takes them all, in the same order, before the copy');
SELECT ok(strpos(:'script', 'EXECUTE ''LOCK TABLE') < strpos(:'script', 'INSERT INTO'), 'the locks come before the copy');

-- another session reads the materialized view: the script gives up in its lock block
SELECT format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
              split_part(current_setting('unix_socket_directories'), ',', 1)) AS conninfo \gset
SELECT FROM dblink_connect('holder', :'conninfo');
SELECT FROM dblink_exec('holder', 'BEGIN');
SELECT FROM dblink('holder', 'SELECT count(*) FROM lk.mv') AS x(n int8);
SELECT :'script' \g (format=unaligned tuples_only=on) :tmp/lk.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/lk.sql > :tmp/lk.out 2>&1; echo $?; grep -c 'gave up after 1 lock timeouts or deadlocks' :tmp/lk.out`
SELECT is(:'rc'::text, E'3\n1', 'a session reading the materialized view: the script gives up on lock_timeout in its lock block');
SELECT FROM dblink_exec('holder', 'COMMIT');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_lk', '... and changes nothing');
SELECT is(snap.cols('lk.t'), 'id integer, a boolean, b bigint, c boolean, parent_id integer', '... the table keeps its column order');

-- another session writes to the referenced table: the same
SELECT FROM dblink_exec('holder', 'BEGIN');
SELECT FROM dblink_exec('holder', 'INSERT INTO lk.parent VALUES (1000, ''late'')');
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/lk.sql > :tmp/lk2.out 2>&1; echo $?; grep -c 'gave up after 1 lock timeouts or deadlocks' :tmp/lk2.out`
SELECT is(:'rc'::text, E'3\n1', 'a session writing to the referenced table: the script gives up in its lock block');
SELECT FROM dblink_exec('holder', 'ROLLBACK');
SELECT FROM dblink_disconnect('holder');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_lk', '... and changes nothing');

-- without them the same script runs
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/lk.sql > :tmp/lk3.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'once they are gone, the script runs to COMMIT');
SELECT is(snap.cols('lk.t'), 'id integer, b bigint, parent_id integer, a boolean, c boolean', '... in the new column order');

-- 2. a view over a function of the table's rows: dropped before the
-- function and re-created after it, in the swap
CREATE FUNCTION lk.rows_of_t() RETURNS SETOF lk.t LANGUAGE sql STABLE AS 'SELECT * FROM lk.t';
CREATE VIEW lk.over_rows AS SELECT id FROM lk.rows_of_t();
CREATE TABLE lk.over_rows_before AS SELECT * FROM lk.over_rows;
SELECT storagelab.layout_migration_script('lk.t', column_order => '{id,a,b,parent_id,c}') \g (format=unaligned tuples_only=on) :tmp/rows.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/rows.sql > :tmp/rows.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'a view over a function returning the table''s rows: the script runs (the view moved around the function)');
SELECT set_eq('SELECT * FROM lk.over_rows', 'SELECT * FROM lk.over_rows_before', '... the view is back, with its rows');

-- 3. the session's search_path is its own again after a script
CREATE SCHEMA sp;
CREATE TABLE sp.t (id int PRIMARY KEY, a boolean, b int8, c boolean) WITH (autovacuum_enabled = false);
INSERT INTO sp.t SELECT g, true, g, false FROM generate_series(1, 1000) g;
SELECT storagelab.layout_migration_script('sp.t', column_order => '{id,b,a,c}') \g (format=unaligned tuples_only=on) :tmp/sp1.sql
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET search_path = sp, public' -f :tmp/sp1.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, public', 'blocking layout script: the session''s search_path is as it was');
SELECT storagelab.layout_migration_script('sp.t', 'online', column_order => '{id,a,b,c}') \g (format=unaligned tuples_only=on) :tmp/sp2.sql
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -c 'SET search_path = sp, "$user"' -f :tmp/sp2.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, "$user"', 'online layout script, phase start: the session''s search_path is as it was');
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -c 'SET search_path = sp, "$user"' -f :tmp/sp2.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, "$user"', 'online layout script, phase rollback: the same');
SELECT storagelab.bigint_migration_script('sp.t', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/sp4.sql
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -c 'SET search_path = sp, "$user"' -f :tmp/sp4.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, "$user"', 'online INT->BIGINT script, phase start: the session''s search_path is as it was');
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -c 'SET search_path = sp, "$user"' -f :tmp/sp4.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, "$user"', 'online INT->BIGINT script, phase rollback: the same');
SELECT storagelab.bigint_migration_script('sp.t', 'id') \g (format=unaligned tuples_only=on) :tmp/sp3.sql
\set out `psql -X -q -At -v ON_ERROR_STOP=1 -d :DBNAME -c 'SET search_path = sp, public' -f :tmp/sp3.sql -c 'SHOW search_path' 2>&1 | tail -n 1`
SELECT is(:'out'::text, 'sp, public', 'blocking INT->BIGINT script: the session''s search_path is as it was');
SELECT is(snap.cols('sp.t'), 'id bigint, b bigint, a boolean, c boolean', '... and the scripts ran');

-- 4. the header's sizes
CREATE SCHEMA hs;
CREATE TABLE hs.plain (id int8 PRIMARY KEY, a boolean, b int8, c boolean, d int8, e boolean);
INSERT INTO hs.plain SELECT g, true, g, false, g, true FROM generate_series(1, 20000) g;
CREATE TABLE hs.parted (k int NOT NULL, a boolean, b int8, c boolean) PARTITION BY RANGE (k);
CREATE TABLE hs.parted_1 PARTITION OF hs.parted FOR VALUES FROM (0) TO (5000);
CREATE TABLE hs.parted_2 PARTITION OF hs.parted FOR VALUES FROM (5000) TO (20000) PARTITION BY RANGE (k);
CREATE TABLE hs.parted_2a PARTITION OF hs.parted_2 FOR VALUES FROM (5000) TO (20000);
INSERT INTO hs.parted SELECT g, true, g, false FROM generate_series(1, 19999) g;
CREATE TABLE hs.base (id int, a boolean, b int8);
CREATE TABLE hs.sub (c boolean) INHERITS (hs.base);
CREATE TABLE hs.subsub (d int8) INHERITS (hs.sub);
INSERT INTO hs.base SELECT g, true, g FROM generate_series(1, 3000) g;
INSERT INTO hs.sub SELECT g, true, g, false FROM generate_series(1, 6000) g;
INSERT INTO hs.subsub SELECT g, true, g, false, g FROM generate_series(1, 9000) g;
ANALYZE hs.plain;
SELECT count(*) FROM storagelab.column_profile('hs.plain') \g /dev/null
-- a tree's heap, read here: the table and everything that inherits from it, at any depth
CREATE FUNCTION snap.tree_heap(rel regclass) RETURNS text LANGUAGE sql AS $$
  WITH RECURSIVE tree(oid) AS (SELECT $1::oid UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid)
  SELECT pg_size_pretty(sum(pg_relation_size(oid))) FROM tree
$$;
SELECT is(substring(storagelab.layout_migration_script('hs.plain', column_order => '{id,b,d,a,c,e}') FROM '-- Heap now on disk: ([^(]*) \('),
          snap.tree_heap('hs.plain'), 'header: the heap of a plain table');
SELECT is(substring(storagelab.layout_migration_script('hs.parted', column_types => '{"b": "integer"}', column_order => '{k,b,a,c}')
                    FROM '-- Heap now on disk: ([^(]*) \('),
          snap.tree_heap('hs.parted'), 'header: the heap of a partitioned table is that of its partitions, at every level');
SELECT is(substring(storagelab.layout_migration_script('hs.base', column_types => '{"b": "integer"}') FROM '-- Heap now on disk: ([^(]*) \('),
          snap.tree_heap('hs.base'), 'header: the heap of an inheritance parent includes its children and theirs');
SELECT matches(storagelab.layout_migration_script('hs.plain'),
               '-- Heap now \(freshly written\): [0-9]+ [kMG]?B; after: [0-9]+ [kMG]?B \(storagelab.table_rewrite_plan, evidence [a-z_]+\)\.\n',
               'header: the plan''s prediction when the plan is followed');
SELECT matches(storagelab.layout_migration_script('hs.plain', column_types => '{"b": "integer"}'),
               '-- Heap after: not predicted .*\n-- Heap now on disk: ',
               'header: no prediction, and no empty one, when column_types overrides the plan');

-- 5. functions that use a retyped column: a trigger function calling a
-- helper with NEW.qty, SQL functions comparing ref with their parameters
CREATE SCHEMA fh;
CREATE TABLE fh.orders (id int8 PRIMARY KEY, qty int NOT NULL, ref text, placed timestamptz NOT NULL DEFAULT now())
  WITH (autovacuum_enabled = false);
CREATE TABLE fh.audit (order_id int8, qty int, ref text);
INSERT INTO fh.orders (id, qty, ref) SELECT g, g % 100, md5(g::text)::uuid::text FROM generate_series(1, 5000) g;
CREATE FUNCTION fh.check_qty(q integer) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN q >= 0; END $$;
CREATE FUNCTION fh.orders_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT fh.check_qty(NEW.qty) THEN
    RAISE EXCEPTION 'negative quantity %', NEW.qty;
  END IF;
  INSERT INTO fh.audit VALUES (NEW.id, NEW.qty, NEW.ref);
  RETURN NEW;
END
$$;
CREATE TRIGGER orders_audit BEFORE INSERT OR UPDATE ON fh.orders FOR EACH ROW EXECUTE FUNCTION fh.orders_audit();
CREATE FUNCTION fh.order_by_ref(r text) RETURNS SETOF int8 LANGUAGE sql STABLE AS $$ SELECT id FROM fh.orders WHERE ref = $1 $$;
CREATE FUNCTION fh.orders_by_refs(a text, b text) RETURNS SETOF int8 LANGUAGE sql STABLE
  AS $$ SELECT id FROM fh.orders WHERE ref IN (a, b) ORDER BY id $$;

-- qty integer -> bigint: check_qty(integer) takes no bigint
SELECT matches(snap.error_of($$SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"qty": "bigint"}')$$),
               '^2BP01 \| the type changes would break functions that use the changed columns of fh.orders \| '
               'fh.orders_audit\(\) \(trigger orders_audit on fh.orders\): passes qty \(bigint\) as argument 1 of fh.check_qty\(integer\)',
               'integer -> bigint of a column a trigger function passes to f(integer): refused, naming both functions');
-- ref text -> uuid: ref = $1 with $1 text
SELECT matches(snap.error_of($$SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"ref": "uuid"}')$$),
               '^2BP01 \| [^|]* \| fh.order_by_ref\(text\) \(function fh.order_by_ref\(text\)\): compares ref \(uuid\) with \$1 \(text\): no operator uuid = text',
               'text -> uuid of a column an SQL function compares with a text parameter: refused, naming it');

-- qty integer -> smallint under a PL/pgSQL function returning it by RETURN QUERY as integer: refused
CREATE FUNCTION fh.qty_of(i int8) RETURNS TABLE (order_id int8, q integer) LANGUAGE plpgsql STABLE
  AS $$ BEGIN RETURN QUERY SELECT o.id, o.qty FROM fh.orders o WHERE o.id = i; END $$;
SELECT matches(snap.error_of($$SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"qty": "smallint"}')$$),
               '^2BP01 \| [^|]* \| fh.qty_of\(bigint\) \(function fh.qty_of\(bigint\)\): returns qty \(smallint\) in RETURN QUERY as result column 2 q, declared integer',
               'integer -> smallint of a column a PL/pgSQL function returns by RETURN QUERY in an integer column: refused, naming it');
DROP FUNCTION fh.qty_of(int8);

-- qty integer -> smallint: check_qty(integer) takes a smallint; the script runs and the trigger works
SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"qty": "smallint"}') AS script \gset
SELECT matches(:'script'::text, '-- Functions that read the changed columns [^\n]*\n[^\n]*\n--   fh.orders_audit\(\) \(trigger orders_audit on fh.orders\): qty integer -> smallint\n',
               'integer -> smallint: the header lists the trigger function that reads the column');
SELECT :'script' \g (format=unaligned tuples_only=on) :tmp/fh1.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/fh1.sql > :tmp/fh1.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', '... and the script runs to COMMIT');
SELECT is(snap.cols('fh.orders'), 'id bigint, qty smallint, ref text, placed timestamp with time zone', '... qty is smallint');
SELECT lives_ok($$INSERT INTO fh.orders (id, qty, ref) VALUES (100001, 7, '0b5c4f4c-2d9c-4c4a-9d2e-000000000001')$$,
                '... an INSERT runs the trigger function, which calls check_qty(integer) with the smallint');
SELECT is((SELECT qty FROM fh.audit WHERE order_id = 100001), 7, '... and it wrote its audit row');
SELECT throws_ok($$INSERT INTO fh.orders (id, qty) VALUES (100002, -1)$$, 'P0001', 'negative quantity -1',
                 '... and still refuses a negative quantity');
CREATE FUNCTION fh.qty_of(i int8) RETURNS TABLE (order_id int8, q integer) LANGUAGE plpgsql STABLE
  AS $$ BEGIN RETURN QUERY SELECT o.id, o.qty FROM fh.orders o WHERE o.id = i; END $$;
SELECT throws_ok('SELECT * FROM fh.qty_of(1)', '42804', NULL,
                 '... the refusal above was right: RETURN QUERY of the smallint column in an integer result column fails at every call');
DROP FUNCTION fh.qty_of(int8);

-- ref text -> uuid with IN (a, b), which the reading misses: the script's own check rolls it back
CREATE OR REPLACE FUNCTION fh.order_by_ref(r text) RETURNS SETOF int8 LANGUAGE sql STABLE AS $$ SELECT id FROM fh.orders WHERE ref::text = $1 $$;
SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"ref": "uuid"}') \g (format=unaligned tuples_only=on) :tmp/fh2.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/fh2.sql > :tmp/fh2.out 2>&1; echo $?; grep -c 'fh.orders_by_refs(text,text): operator does not exist: uuid = text' :tmp/fh2.out`
SELECT is(:'rc'::text, E'3\n1', 'a comparison the reading misses (ref IN (a, b)): the SQL function''s validator fails under the locks and the script rolls back, naming it');
SELECT is(snap.cols('fh.orders'), 'id bigint, qty smallint, ref text, placed timestamp with time zone', '... ref is still text');
CREATE OR REPLACE FUNCTION fh.orders_by_refs(a text, b text) RETURNS SETOF int8 LANGUAGE sql STABLE
  AS $$ SELECT id FROM fh.orders WHERE ref::text IN (a, b) ORDER BY id $$;
SELECT storagelab.layout_migration_script('fh.orders', column_types => '{"ref": "uuid"}') \g (format=unaligned tuples_only=on) :tmp/fh3.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/fh3.sql > :tmp/fh3.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'with the functions comparing ref::text, text -> uuid runs to COMMIT');
SELECT is((SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'fh.orders'::regclass AND attname = 'ref'), 'uuid',
          '... ref is uuid (in the order of the plan the first script''s ANALYZE made possible)');
SELECT is((SELECT array_agg(x) FROM fh.order_by_ref(md5('42')::uuid::text) x), '{42}', '... the SQL function finds the row by its text');
SELECT is((SELECT array_agg(x) FROM fh.orders_by_refs(md5('1')::uuid::text, md5('2')::uuid::text) x), '{1,2}', '... and so does the other');
SELECT lives_ok($$INSERT INTO fh.orders (id, qty, ref) VALUES (100003, 3, '0b5c4f4c-2d9c-4c4a-9d2e-000000000003')$$,
                '... the trigger function writes the uuid to the audit table''s text column');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_layout_safety;
\set rc `rm -rf :tmp`

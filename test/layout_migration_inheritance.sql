-- pgTAP: the rewrite engine on an inheritance tree (a parent with a serial
-- key, a child with columns, a key, an index, a CHECK constraint and a
-- default of its own, a grandchild), through both of its users, every
-- generated script executed with psql in a scratch database:
--   1. layout_migration_script() mode blocking on the parent;
--   2. mode online, with writes between the phases, a rollback after the
--      swap, then a second script through cleanup;
--   3. bigint_migration_script(mode => 'copy_swap') of the parent's key,
--      whose component holds the children and tables referencing parent
--      and child.
-- After each: row counts and checksums of every table (FROM ONLY each, and
-- each parent with its children) and view, every object definition
-- (snap.catalog(), the INHERIT links included), the columns of each table
-- in order.  Then what is refused: a child alone, multiple inheritance.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_layout_inh;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_layout_inh TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_layout_inh
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\i test/fixtures/bigint_migration_helpers.sql
\i test/fixtures/rewrite_partitions.sql
\set tmp `mktemp -d`
INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_blocks', '2'), ('bigint_migration.backfill_pause', '0'),
  ('scripts.lock_retries', '0'), ('scripts.lock_timeout', '5s');

CREATE SCHEMA inh;
CREATE TABLE inh.cities (id serial PRIMARY KEY, name text NOT NULL, population int, elevation int CONSTRAINT cities_elevation CHECK (elevation > -500));
COMMENT ON TABLE inh.cities IS 'every city';
CREATE TABLE inh.capitals (state char(2) NOT NULL, since date) INHERITS (inh.cities);
ALTER TABLE inh.capitals ADD PRIMARY KEY (id);
CREATE INDEX capitals_state ON inh.capitals (state DESC) WHERE since IS NOT NULL;
ALTER TABLE inh.capitals ADD CONSTRAINT capitals_state_upper CHECK (state = upper(state));
ALTER TABLE inh.capitals ALTER COLUMN population SET DEFAULT 100000;
ALTER TABLE inh.capitals SET (fillfactor = 80);
COMMENT ON COLUMN inh.capitals.state IS 'two letters';
CREATE TABLE inh.old_capitals (until date NOT NULL) INHERITS (inh.capitals);
CREATE TABLE inh.visits (id int PRIMARY KEY, city_id int NOT NULL REFERENCES inh.cities, at date);
CREATE TABLE inh.capital_notes (capital_id int NOT NULL REFERENCES inh.capitals ON DELETE CASCADE, note text);
CREATE FUNCTION inh.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.name := initcap(NEW.name); RETURN NEW; END $$;
CREATE TRIGGER capitals_touch BEFORE INSERT OR UPDATE ON inh.capitals FOR EACH ROW EXECUTE FUNCTION inh.touch();
CREATE VIEW inh.all_cities AS SELECT name, population FROM inh.cities;
CREATE VIEW inh.plain_cities AS SELECT name FROM ONLY inh.cities;
INSERT INTO inh.cities (name, population, elevation) SELECT 'city ' || g, g * 10, g % 900 FROM generate_series(1, 2000) g;
INSERT INTO inh.capitals (name, elevation, state, since) SELECT 'capital ' || g, g, 'S' || (g % 10), date '1900-01-01' + g FROM generate_series(1, 300) g;
INSERT INTO inh.old_capitals (name, state, until) SELECT 'old ' || g, 'O' || (g % 10), date '1800-01-01' + g FROM generate_series(1, 100) g;
INSERT INTO inh.visits SELECT g, 1 + g % 2000, date '2024-01-01' + g % 300 FROM generate_series(1, 500) g;
INSERT INTO inh.capital_notes SELECT id, 'note ' || id FROM ONLY inh.capitals WHERE id % 3 = 0;
ANALYZE;

CREATE TABLE snap.catalog_before AS SELECT * FROM snap.catalog();
CREATE FUNCTION snap.cols() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(c.relname || ': ' || (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_attribute a
                                           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), E'\n' ORDER BY c.relname)
    FROM pg_class c WHERE c.relnamespace = 'inh'::regnamespace AND c.relkind = 'r' AND c.relname IN ('cities', 'capitals', 'old_capitals')
$$;
-- rows of each table alone, and each with its children (snap.data())
CREATE FUNCTION snap.only_data() RETURNS TABLE (rel text, n bigint, checksum text) LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['inh.cities', 'inh.capitals', 'inh.old_capitals'] LOOP
    rel := r;
    EXECUTE format('SELECT count(*), md5(coalesce(string_agg(to_jsonb(x)::text, E''\n'' ORDER BY to_jsonb(x)::text), '''')) FROM ONLY %s x', r)
      INTO n, checksum;
    RETURN NEXT;
  END LOOP;
END $$;
CREATE FUNCTION snap.all_data() RETURNS TABLE (rel text, n bigint, checksum text) LANGUAGE sql AS $$
  SELECT * FROM snap.data() WHERE rel !~ 'storagelab_' UNION ALL SELECT 'only ' || rel, n, checksum FROM snap.only_data()
$$;
CREATE FUNCTION snap.write(k int) RETURNS void LANGUAGE sql AS $$
  INSERT INTO inh.cities (name, population, elevation) SELECT 'new city ' || k || '/' || g, g, g FROM generate_series(1, 10) g;
  INSERT INTO inh.capitals (name, state, since) SELECT 'new capital ' || k || '/' || g, 'N' || g, now()::date FROM generate_series(1, 5) g;
  INSERT INTO inh.old_capitals (name, state, until) VALUES ('new old ' || k, 'X' || k, now()::date);
  UPDATE inh.cities SET population = population + 1 WHERE id % 37 = k;
  UPDATE inh.capitals SET since = since + 1 WHERE id % 17 = k;
  DELETE FROM inh.cities WHERE id % 41 = k AND NOT EXISTS (SELECT FROM inh.visits v WHERE v.city_id = cities.id);
$$;

SELECT plan(27);

-- 1. blocking
CREATE TABLE snap.d1 AS SELECT * FROM snap.all_data();
SELECT storagelab.layout_migration_script('inh.cities', column_order => '{name,id,elevation,population}')
\g (format=unaligned tuples_only=on) :tmp/blocking.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking.sql > :tmp/blocking.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'blocking: the script ran to COMMIT');
SELECT set_eq('SELECT * FROM snap.all_data()', 'SELECT * FROM snap.d1',
              'blocking: row counts and checksums of every table (alone, and with its children) and view');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'blocking: every object re-created exactly, the children inheriting from the new parents');
SELECT is(snap.cols(), E'capitals: name,id,elevation,population,state,since\ncities: name,id,elevation,population\nold_capitals: name,id,elevation,population,state,since,until',
          'blocking: the parent in the new order, the children with it, their own columns after');
SELECT is((SELECT count(*) FROM pg_constraint WHERE NOT convalidated) + (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'),
          0::int8, 'blocking: every constraint valid, nothing left behind');
SELECT lives_ok($$INSERT INTO inh.old_capitals (name, state, until) VALUES ('late', 'LA', '1999-01-01')$$,
                'blocking: the grandchild takes rows, its serial default goes on');
SELECT throws_ok($$INSERT INTO inh.capital_notes VALUES (-1, 'x')$$, '23503', NULL, 'blocking: the foreign key to the child points to the new child');
SELECT throws_ok($$INSERT INTO inh.visits VALUES (-1, -1, NULL)$$, '23503', NULL, 'blocking: the foreign key to the parent points to the new parent');
SELECT throws_ok($$INSERT INTO inh.capitals (name, state) VALUES ('x', 'lo')$$, '23514', NULL, 'blocking: the child''s own CHECK constraint');

-- 2. online, with writes between the phases, a rollback after the swap
SELECT storagelab.layout_migration_script('inh.cities', 'online', column_order => '{id,name,population,elevation}')
\g (format=unaligned tuples_only=on) :tmp/online.sql
\set rc `for p in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online.sql >> :tmp/online.out 2>&1 || { echo $p; exit; }; psql -X -q -d :DBNAME -c "SELECT snap.write(2)" > /dev/null || { echo write; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: start, copy, index, replay, with writes after each');
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_progress WHERE done), 3::int8, 'online: one copy per table of the tree');
CREATE TABLE snap.d2 AS SELECT * FROM snap.all_data();
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=swap -d :DBNAME -f :tmp/online.sql >> :tmp/online.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'online: swap');
SELECT set_eq('SELECT * FROM snap.all_data()', 'SELECT * FROM snap.d2', 'online: after the swap the data as it was');
SELECT is(snap.cols(), E'capitals: id,name,population,elevation,state,since\ncities: id,name,population,elevation\nold_capitals: id,name,population,elevation,state,since,until',
          'online: the new column order');
SELECT snap.write(3);
CREATE TABLE snap.d3 AS SELECT * FROM snap.all_data();
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/online.sql >> :tmp/online.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'online: rollback after the swap');
SELECT set_eq('SELECT * FROM snap.all_data()', 'SELECT * FROM snap.d3', 'online: the old tables have every change made since the swap');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before',
              'online: after the rollback every object as it was, the foreign keys re-pointed to the old tables validated');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%') + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'storagelab\_%'),
          0::int8, 'online: the rollback leaves nothing behind');
SELECT storagelab.layout_migration_script('inh.cities', 'online', column_order => '{id,name,population,elevation}')
\g (format=unaligned tuples_only=on) :tmp/online2.sql
\set rc `for p in start copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online2.sql >> :tmp/online2.out 2>&1 || { echo $p; exit; }; psql -X -q -d :DBNAME -c "SELECT snap.write(4)" > /dev/null || { echo write; exit; }; done; echo 0`
CREATE TABLE snap.d4 AS SELECT * FROM snap.all_data();
\set rc `for p in swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/online2.sql >> :tmp/online2.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online again: through cleanup');
SELECT set_eq('SELECT * FROM snap.all_data()', 'SELECT * FROM snap.d4', 'online again: the data as it was');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', 'online again: every object re-created exactly');

-- 3. INT -> BIGINT of the parent's key by copy and swap
CREATE TABLE snap.d5 AS SELECT * FROM snap.all_data();
SELECT storagelab.bigint_migration_script('inh.cities', 'id', 'copy_swap') \g (format=unaligned tuples_only=on) :tmp/cs.sql
\set rc `for p in start copy index replay swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/cs.sql >> :tmp/cs.out 2>&1 || { echo $p; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'copy_swap: every phase through cleanup');
SELECT is((SELECT string_agg(format('%s.%s %s', attrelid::regclass, attname, format_type(atttypid, NULL)), ', ' ORDER BY attrelid::regclass::text, attname)
             FROM pg_attribute WHERE attrelid IN ('inh.cities'::regclass, 'inh.capitals'::regclass, 'inh.old_capitals'::regclass,
                                                  'inh.visits'::regclass, 'inh.capital_notes'::regclass)
              AND attname IN ('id', 'city_id', 'capital_id')),
          'inh.capital_notes.capital_id bigint, inh.capitals.id bigint, inh.cities.id bigint, inh.old_capitals.id bigint, inh.visits.city_id bigint, inh.visits.id integer',
          'copy_swap: the key is bigint in the parent, its children and the referencing columns');
SELECT set_eq('SELECT * FROM snap.all_data()', 'SELECT * FROM snap.d5', 'copy_swap: the data as it was');
SELECT set_eq('SELECT * FROM snap.catalog()', 'SELECT * FROM snap.catalog_before', 'copy_swap: every object re-created exactly');

-- 4. refusals
SELECT is(snap.error($$SELECT storagelab.layout_migration_script('inh.capitals', column_order => '{state,since,id,name,population,elevation}')$$),
          '0A000: the rewrite engine rebuilds an inheritance child only with its parent / inh.capitals inherits from inh.cities.',
          'a child alone is refused, naming its parent');
CREATE TABLE inh.tagged (tag text);
CREATE TABLE inh.tagged_cities () INHERITS (inh.cities, inh.tagged);
SELECT is(snap.error($$SELECT storagelab.layout_migration_script('inh.cities', column_order => '{id,name,population,elevation}')$$),
          '0A000: the rewrite engine does not support multiple inheritance / inh.tagged_cities inherits from inh.cities, inh.tagged.',
          'multiple inheritance is refused, naming the table');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_layout_inh;
\set rc `rm -rf :tmp`

-- pgTAP: an online (copy-and-swap) script never swaps in a new table that
-- lacks what was added to the old one after the script was written.  Its
-- new tables are created from the catalogs as they were at generation and
-- cleanup drops the old ones: a column added in between (with its values),
-- an index, a grant, a trigger or a comment would be lost after COMMIT.
-- Phases start and swap (under its locks) compare each table's fingerprint
-- with the one recorded in the script and refuse with 55000 naming the
-- table; phase rollback then undoes the start and keeps everything.
-- Checked for the INT -> BIGINT online script and the online and blocking
-- layout scripts (a default or the owner changed in between).
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_stale_online;
CREATE DATABASE storagelab_tap_stale_online;
\c storagelab_tap_stale_online
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storagelab_stale_reader') THEN
    CREATE ROLE storagelab_stale_reader;
  END IF;
END
$$;
\set tmp `mktemp -d`
CREATE TABLE acct (id serial PRIMARY KEY, name text, v int DEFAULT 0);
CREATE TABLE plain (id int PRIMARY KEY, a int, b text);
INSERT INTO plain SELECT g, g, 'b' || g FROM generate_series(1, 100) g;
INSERT INTO acct (name, v) SELECT 'n' || g, g FROM generate_series(1, 300) g;
CREATE TABLE child (id serial PRIMARY KEY, acct_id int REFERENCES acct, note text);
INSERT INTO child (acct_id, note) SELECT g, 'c' || g FROM generate_series(1, 300) g;
CREATE FUNCTION child_touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE FUNCTION state() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT count(*) || ':' || sum(id) || ':' || sum(v) FROM acct) || ' ' || (SELECT count(*) || ':' || sum(acct_id) FROM child)
$$;
CREATE FUNCTION leftovers() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'
$$;
CREATE TABLE sums AS SELECT state() AS s;

SELECT plan(15);

-- 1. INT -> BIGINT online: a column added (and filled) after phase replay
SELECT storagelab.bigint_migration_script('acct', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online.sql
\set rc `for ph in start copy index replay; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: phases start to replay run');
ALTER TABLE acct ADD COLUMN extra text;
UPDATE acct SET extra = 'e' || id WHERE id <= 10;
\set rc `for ph in swap validate cleanup; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
\set out `cat :tmp/online.out`
SELECT is(:'rc'::text, 'swap 3', 'a column added before the swap: phase swap stops');
SELECT ok(:'out'::text LIKE '%ERROR:  the columns, indexes, constraints, triggers, policies, privileges or dependent objects of table public.acct (or of its partitions) changed since this script was written%',
          '... naming the table (55000)');
\set rc `:run -v phase=rollback > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || leftovers(), '0 0', '... phase rollback runs and leaves nothing of the migration');
SELECT is((SELECT count(extra) || ' ' || format_type(atttypid, NULL) FROM acct, pg_attribute
            WHERE attrelid = 'acct'::regclass AND attname = 'id' GROUP BY atttypid), '10 integer',
          '... the new column keeps its values, the key is integer');

-- 2. INT -> BIGINT online: an index, a grant, a column grant, a trigger and a comment added after start
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -v phase=start -f :tmp/online.sql > :tmp/online2.out 2>&1; echo $?`
SELECT is(:'rc'::text, '3', 'the script written before the column was added: phase start stops');
SELECT storagelab.bigint_migration_script('acct', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online3.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online3.sql
\set rc `for ph in start copy index; do :run -v phase=$ph >> :tmp/online3.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
CREATE INDEX acct_name_idx ON acct (name);
GRANT SELECT ON acct TO storagelab_stale_reader;
GRANT UPDATE (note) ON child TO storagelab_stale_reader;
CREATE TRIGGER child_touch BEFORE UPDATE ON child FOR EACH ROW EXECUTE FUNCTION child_touch();
COMMENT ON COLUMN child.note IS 'a note';
\set rc `for ph in replay swap validate cleanup; do :run -v phase=$ph >> :tmp/online3.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
\set out `cat :tmp/online3.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%ERROR:  the columns, indexes, %changed since this script was written%'), 'swap 3 true',
          'an index, grants, a trigger and a comment added during the copy: phase swap stops');
\set rc `:run -v phase=rollback > :tmp/rollback3.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || leftovers(), '0 0', '... phase rollback runs');
SELECT ok(to_regclass('acct_name_idx') IS NOT NULL AND has_table_privilege('storagelab_stale_reader', 'acct', 'SELECT')
          AND has_column_privilege('storagelab_stale_reader', 'child', 'note', 'UPDATE')
          AND EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'child'::regclass AND tgname = 'child_touch')
          AND col_description('child'::regclass, 3) = 'a note', '... and every object added is still there');

-- 3. a script written after the changes runs and keeps them
SELECT storagelab.bigint_migration_script('acct', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online4.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online4.sql
\set rc `for ph in start copy index replay swap validate cleanup; do :run -v phase=$ph >> :tmp/online4.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text || ' ' || leftovers(), '0 0', 'a script written after the changes: every phase runs');
SELECT is(state() || ' ' || (SELECT count(extra) FROM acct) || ' ' || format_type((SELECT atttypid FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attname = 'id'), NULL),
          (SELECT s FROM sums) || ' 10 bigint', '... every row, the added column''s values, the key bigint');
SELECT ok(to_regclass('acct_name_idx') IS NOT NULL AND has_table_privilege('storagelab_stale_reader', 'acct', 'SELECT')
          AND has_column_privilege('storagelab_stale_reader', 'child', 'note', 'UPDATE')
          AND EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'child'::regclass AND tgname = 'child_touch')
          AND col_description('child'::regclass, 3) = 'a note', '... and every object added before it was written');

-- 4. online layout: a policy created between generation and phase start
SELECT storagelab.layout_migration_script('acct', 'online', column_order => '{v,id,name,extra}') \g (format=unaligned tuples_only=on) :tmp/layout.sql
CREATE POLICY acct_all ON acct USING (true);
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -v phase=start -f :tmp/layout.sql > :tmp/layout.out 2>&1; echo $?`
\set out `cat :tmp/layout.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%ERROR:  the columns, indexes, %of table public.acct %changed since this script was written%') || ' ' || leftovers(),
          '3 true 0', 'online layout, a policy created before phase start: it stops and creates nothing');

-- 5. blocking layout: a column default changed, or the owner, after generation
SELECT storagelab.layout_migration_script('acct', 'blocking', column_order => '{v,id,name,extra}') \g (format=unaligned tuples_only=on) :tmp/blocking.sql
ALTER TABLE acct ALTER COLUMN v SET DEFAULT 7;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking.sql > :tmp/blocking.out 2>&1; echo $?`
\set out `cat :tmp/blocking.out`
SELECT is(:'rc'::text || ' ' || (:'out'::text LIKE '%changed since this script was written%') || ' ' || pg_get_expr(adbin, adrelid),
          '3 true 7', 'blocking layout, a column default changed after generation: the script stops, the default kept')
  FROM pg_attrdef WHERE adrelid = 'acct'::regclass AND adnum = 3;
SELECT storagelab.layout_migration_script('plain', 'blocking', column_order => '{b,id,a}') \g (format=unaligned tuples_only=on) :tmp/blocking2.sql
ALTER TABLE plain OWNER TO storagelab_stale_reader;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/blocking2.sql > :tmp/blocking2.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || (SELECT relowner::regrole::text || ' ' || attname FROM pg_class, pg_attribute
                                  WHERE pg_class.oid = 'plain'::regclass AND attrelid = pg_class.oid AND attnum = 1),
          '3 storagelab_stale_reader id', 'blocking layout, the owner changed after generation: the script stops, the owner kept');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_stale_online;
DROP ROLE storagelab_stale_reader;
\set rc `rm -rf :tmp`

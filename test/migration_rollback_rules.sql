-- pgTAP: a rollback after the swap of an online (copy-and-swap) script does
-- not fire the old table's rules a second time.  Between the swap and
-- cleanup the clients write the new table, which has the table's rules (a
-- DO ALSO rule writing an audit row fires once per change); a rollback
-- replays those changes into the old table.  Its triggers were disabled in
-- the swap for that replay; its rules were not, so every change after the
-- swap was audited twice.  The swap now disables the old table's rules too,
-- and the rollback gives them back their states (a rule ENABLE REPLICA
-- stays so).  Checked for the INT -> BIGINT online script and the online
-- layout script.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_rollback_rules;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_rollback_rules TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_rollback_rules
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 300) g;
CREATE TABLE audit (id int, op text);
CREATE RULE t_ins AS ON INSERT TO t DO ALSO INSERT INTO audit VALUES (new.id, 'ins');
CREATE RULE t_del AS ON DELETE TO t DO ALSO INSERT INTO audit VALUES (old.id, 'del');
CREATE RULE t_upd AS ON UPDATE TO t DO ALSO INSERT INTO audit VALUES (new.id, 'upd');
ALTER TABLE t ENABLE REPLICA RULE t_upd;
CREATE FUNCTION rules() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(ev_class::regclass::text || ' ' || rulename || ' ' || ev_enabled::text, ', ' ORDER BY ev_class::regclass::text, rulename)
    FROM pg_rewrite WHERE rulename LIKE 't\_%'
$$;
CREATE FUNCTION audited() RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(id || ' ' || op, ', ' ORDER BY id, op), '') FROM audit
$$;

SELECT plan(6);

-- 1. INT -> BIGINT online: writes after the swap, then a rollback
SELECT storagelab.bigint_migration_script('t', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/online.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/online.sql
\set rc `for ph in start copy index replay swap; do :run -v phase=$ph >> :tmp/online.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text, '0', 'online: phases start to swap run');
INSERT INTO t VALUES (1001, 1), (1002, 2);
DELETE FROM t WHERE id = 5;
UPDATE t SET v = -1 WHERE id = 6;
\set rc `:run -v phase=rollback > :tmp/rollback.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || audited(), '0 5 del, 1001 ins, 1002 ins',
          '... a rollback after writes: each change audited once (the old table''s rules did not fire in the replay)');
SELECT is((SELECT count(*) || ':' || sum(v) FROM t) || ' ' || rules(), '301:45141 t t_del O, t t_ins O, t t_upd R',
          '... every change is back in the old table, its rules have their states (t_upd ENABLE REPLICA)');
TRUNCATE audit;

-- 2. online layout script: the same
SELECT storagelab.layout_migration_script('t', 'online', column_order => '{v,id}') \g (format=unaligned tuples_only=on) :tmp/layout.sql
\set run 'psql -X -q -v ON_ERROR_STOP=1 -d ' :DBNAME ' -f ' :tmp/layout.sql
\set rc `for ph in start copy index replay swap; do :run -v phase=$ph >> :tmp/layout.out 2>&1 || { echo "$ph $?"; exit; }; done; echo 0`
SELECT is(:'rc'::text || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = 1), '0 v',
          'online layout: phases start to swap run');
INSERT INTO t (id, v) VALUES (2001, 1);
DELETE FROM t WHERE id = 7;
\set rc `:run -v phase=rollback > :tmp/rollback2.out 2>&1; echo $?`
SELECT is(:'rc'::text || ' ' || audited(), '0 7 del, 2001 ins', '... a rollback after writes: each change audited once');
SELECT is((SELECT count(*) || ':' || sum(v) FROM t) || ' ' || rules() || ' ' || (SELECT attname FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = 1),
          '301:45135 t t_del O, t t_ins O, t t_upd R id', '... every change back, the rules'' states, the old column order');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_rollback_rules;
\set rc `rm -rf :tmp`

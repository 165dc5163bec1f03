-- pgTAP: mode online converts what mode blocking converts, and what both
-- refuse they refuse with the same SQLSTATE and message.
--   - a table without a key that has a column named storagelab_seq (the
--     change log's own column), referencing a hub: its log takes whole rows,
--     written between the phases; the online script runs phase by phase, the
--     rows as the application left them;
--   - a partitioned table without partitions referencing a hub: created
--     empty and swapped with the hub, its column bigint; a partition
--     attached after the swap makes a rollback refuse (55000);
--   - an extension's table: both modes refuse it (0A000, the same blocker);
--     so do they a typed table, a row type stored in a column, a column
--     inherited from two trees;
--   - what only online still refuses (docs: "Mode online"): multiple
--     inheritance from one root, foreign partitions and children, a child's
--     own column, a publication FOR TABLES IN SCHEMA, a key column named
--     storagelab_seq (42701), a partitioned table
--     without partitions alone, a table's own index, policy, CHECK, trigger
--     or rule over a function of its rows: the findings' fix is blocking
--     and its message says why online was refused.
-- Data: 20 rows per converted table, keys near 2^31 through setval.  The
-- blocking scripts of the online-only cases are not written: the writer asks
-- the same pre-flight first (test/findings_fix.sql runs such fixes).
-- Own database: the scripts run in other sessions, so the tables are committed.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_online_parity;
CREATE DATABASE storagelab_tap_online_parity;
\c storagelab_tap_online_parity
SET client_min_messages = warning;
CREATE EXTENSION pgtap;
CREATE EXTENSION storagelab;
\set tmp `mktemp -d`
CREATE SCHEMA snap;
CREATE TABLE snap.runs (tbl text, rc text);
-- the SQLSTATE and message a mode's pre-flight refuses a column with (NULL: accepted)
CREATE FUNCTION snap.refusal(rel regclass, col name, mode text) RETURNS text LANGUAGE sql AS $$
  SELECT r.code || ': ' || r.message || coalesce(' / ' || r.detail, '')
    FROM storagelab_internal.bigint_migration_refusal(storagelab_internal.bigint_migration_model(ARRAY[rel], ARRAY[col]), mode, 'refuse') r
$$;

-- a hub referenced by a table without a key that has a column named storagelab_seq
CREATE SCHEMA k;
CREATE TABLE k.hub (id serial PRIMARY KEY);
SELECT setval('k.hub_id_seq', 2147483000) \gset
INSERT INTO k.hub SELECT FROM generate_series(1, 20);
CREATE TABLE k.nokey (storagelab_seq int, hub_id int NOT NULL REFERENCES k.hub, v text);
INSERT INTO k.nokey SELECT row_number() OVER (ORDER BY id), id, 'v' FROM k.hub;
-- a key column named storagelab_seq
CREATE TABLE k.t (storagelab_seq int PRIMARY KEY);
-- a hub referenced by a partitioned table that has no partitions yet
CREATE SCHEMA g;
CREATE TABLE g.hub (id serial PRIMARY KEY);
SELECT setval('g.hub_id_seq', 2147483000) \gset
INSERT INTO g.hub SELECT FROM generate_series(1, 20);
CREATE TABLE g.later (hub_id int NOT NULL REFERENCES g.hub, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE g.alone (id int NOT NULL, day date NOT NULL) PARTITION BY RANGE (day);
-- refused by both
CREATE SCHEMA b;
CREATE TABLE b.ext (id int PRIMARY KEY);
ALTER EXTENSION pgtap ADD TABLE b.ext;
CREATE TYPE b.ty AS (id int);
CREATE TABLE b.typed OF b.ty (PRIMARY KEY (id));
CREATE TABLE b.stored (id int PRIMARY KEY);
CREATE TABLE b.holder (x b.stored);
CREATE TABLE b.root1 (id int);
CREATE TABLE b.root2 (id int);
CREATE TABLE b.both () INHERITS (b.root1, b.root2);
-- refused by online only
CREATE SCHEMA o;
CREATE TABLE o.top (id int);
CREATE TABLE o.left1 () INHERITS (o.top);
CREATE TABLE o.right1 () INHERITS (o.top);
CREATE TABLE o.diamond () INHERITS (o.left1, o.right1);
CREATE FOREIGN DATA WRAPPER storagelab_tap_parity_fdw;
CREATE SERVER storagelab_tap_parity_server FOREIGN DATA WRAPPER storagelab_tap_parity_fdw;
CREATE TABLE o.parted (id int NOT NULL, k int NOT NULL) PARTITION BY LIST (k);
CREATE TABLE o.parted_1 PARTITION OF o.parted FOR VALUES IN (1);
CREATE FOREIGN TABLE o.parted_2 PARTITION OF o.parted FOR VALUES IN (2) SERVER storagelab_tap_parity_server;
CREATE TABLE o.base (id int);
CREATE FOREIGN TABLE o.remote () INHERITS (o.base) SERVER storagelab_tap_parity_server;
CREATE TABLE o.hub (id int PRIMARY KEY);
CREATE TABLE o.parent (note text);
CREATE TABLE o.child (hub_id int REFERENCES o.hub) INHERITS (o.parent);
CREATE SCHEMA pub;
CREATE TABLE pub.t (id int PRIMARY KEY);
SET client_min_messages = error;   -- wal_level need not be logical
CREATE PUBLICATION storagelab_tap_parity_pub FOR TABLES IN SCHEMA pub;
SET client_min_messages = warning;
CREATE TABLE o.idx (id int PRIMARY KEY, v int);
CREATE FUNCTION o.idx_v(o.idx) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1.v';
CREATE INDEX ON o.idx (o.idx_v(idx));
CREATE TABLE o.pol (id int PRIMARY KEY, v int);
CREATE FUNCTION o.pol_ok(o.pol) RETURNS boolean LANGUAGE sql AS 'SELECT $1.v > 0';
CREATE POLICY p ON o.pol USING (o.pol_ok(pol));
CREATE TABLE o.chk (id int PRIMARY KEY, v int);
CREATE FUNCTION o.chk_ok(o.chk) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT $1.v IS NOT NULL';
ALTER TABLE o.chk ADD CHECK (o.chk_ok(chk));
CREATE TABLE o.trg (id int PRIMARY KEY, v int);
CREATE FUNCTION o.trg_ok(o.trg) RETURNS boolean LANGUAGE sql AS 'SELECT $1.v > 0';
CREATE FUNCTION o.trg_fn() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
CREATE TRIGGER t BEFORE UPDATE ON o.trg FOR EACH ROW WHEN (o.trg_ok(NEW)) EXECUTE FUNCTION o.trg_fn();
CREATE TABLE o.rul (id int PRIMARY KEY, v int);
CREATE TABLE o.rul_log (v int);
CREATE FUNCTION o.rul_v(o.rul) RETURNS int LANGUAGE sql AS 'SELECT $1.v';
CREATE RULE r AS ON INSERT TO o.rul DO ALSO INSERT INTO o.rul_log VALUES (o.rul_v(NEW));

SELECT plan(11);

-- online: the hub referenced by the table without a key, written between the phases
\o /dev/null
SELECT storagelab.bigint_migration_script('k.hub', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/k.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=start -d :DBNAME -f :tmp/k.sql > :tmp/k.out 2>&1; echo $?`
INSERT INTO snap.runs VALUES ('k:start', :'rc');
UPDATE k.nokey SET v = v || 'a' WHERE storagelab_seq % 2 = 0;
INSERT INTO k.nokey SELECT 100 + storagelab_seq, hub_id, 'b' FROM k.nokey WHERE storagelab_seq < 4;
DELETE FROM k.nokey WHERE storagelab_seq = 5;
\set rc `for p in copy index replay; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/k.sql > :tmp/k.out 2>&1 || { echo $p; exit; }; done; echo 0`
INSERT INTO snap.runs VALUES ('k:copy..replay', :'rc');
UPDATE k.nokey SET v = v || 'c' WHERE storagelab_seq % 3 = 0;
DELETE FROM k.nokey WHERE storagelab_seq = 7;
INSERT INTO k.nokey VALUES (200, 2147483001, 'd');
CREATE TABLE snap.k_before AS SELECT storagelab_seq, hub_id, v FROM k.nokey;
\set rc `for p in swap validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/k.sql > :tmp/k.out 2>&1 || { echo $p; exit; }; done; echo 0`
INSERT INTO snap.runs VALUES ('k:swap..cleanup', :'rc');
-- online: the hub with the partitioned table without partitions; a partition attached after the
-- swap (rows in it): the rollback refuses, the migration goes on
SELECT storagelab.bigint_migration_script('g.hub', 'id', 'online') \g (format=unaligned tuples_only=on) :tmp/g.sql
\set rc `for p in start copy index replay swap; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/g.sql > :tmp/g.out 2>&1 || { echo $p; exit; }; done; echo 0`
INSERT INTO snap.runs VALUES ('g:start..swap', :'rc');
CREATE TABLE g.later_2025 PARTITION OF g.later FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
INSERT INTO g.later SELECT id, '2025-06-01' FROM g.hub WHERE id < 2147483004;
\set rc `psql -X -q -v ON_ERROR_STOP=1 -v phase=rollback -d :DBNAME -f :tmp/g.sql 2>&1 | grep -o 'partitions or inheritance children were added after the swap: g.later_2025'`
\set rc2 `for p in validate cleanup; do psql -X -q -v ON_ERROR_STOP=1 -v phase=$p -d :DBNAME -f :tmp/g.sql > :tmp/g.out 2>&1 || { echo $p; exit; }; done; echo 0`
INSERT INTO snap.runs VALUES ('g:validate..cleanup', :'rc2');
\o
SELECT is((SELECT string_agg(tbl || '=' || rc, ', ' ORDER BY tbl) FROM snap.runs WHERE rc <> '0'), NULL,
          'online: start, copy, index, replay, swap, validate and cleanup ran for the hub referenced by a table without a key with a column named storagelab_seq, and for the hub referenced by a partitioned table without partitions');
SELECT is(ARRAY(SELECT format('%s.%s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, NULL))
                  FROM pg_attribute a
                 WHERE (a.attrelid, a.attname) IN (('k.hub'::regclass, 'id'), ('k.nokey'::regclass, 'hub_id'),
                                                   ('g.hub'::regclass, 'id'), ('g.later'::regclass, 'hub_id'))
                 ORDER BY 1),
          ARRAY['g.hub.id bigint', 'g.later.hub_id bigint', 'k.hub.id bigint', 'k.nokey.hub_id bigint'],
          'the keys and the columns referencing them are bigint, the partitioned table''s too');
SELECT is(:'rc'::text, 'partitions or inheritance children were added after the swap: g.later_2025',
          'a rollback after the swap refuses while a partition attached since exists (its rows would go with the new table)');
SELECT set_eq('SELECT storagelab_seq, hub_id, v FROM k.nokey', 'SELECT * FROM snap.k_before',
              'the rows of the table without a key are those the application left, its changes between the phases replayed');
SELECT setval('k.hub_id_seq', 3000000000), setval('g.hub_id_seq', 3000000000) \gset
CREATE TABLE g.later_2026 PARTITION OF g.later FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
SELECT lives_ok($$WITH n AS (INSERT INTO k.hub DEFAULT VALUES RETURNING id) INSERT INTO k.nokey SELECT 300, id, 'past' FROM n;
                  WITH h AS (INSERT INTO g.hub DEFAULT VALUES RETURNING id) INSERT INTO g.later SELECT id, '2026-11-28' FROM h$$,
                'keys past 2^31 are written, referenced by the other table and by a partition attached afterwards');
SELECT is((SELECT max(hub_id) || ' ' || count(*) FROM g.later), '3000000001 4', 'the partitions hold their rows, the key past 2^31 too');
SELECT is(snap.refusal('g.alone', 'id', 'online'),
          '0A000: the online rewrite needs a table that holds rows / The partitioned table g.alone has no partitions.',
          'online: a partitioned table without partitions alone is still refused (nothing to copy: blocking converts it at once)');

-- refused by both, with the same SQLSTATE and message
SELECT is(ARRAY(SELECT snap.refusal(x.rel, 'id', 'online') IS NOT DISTINCT FROM snap.refusal(x.rel, 'id', 'blocking')
                       AND snap.refusal(x.rel, 'id', 'blocking') LIKE '0A000: %'
                  FROM unnest(ARRAY['b.ext', 'b.typed', 'b.stored', 'b.both']::regclass[]) x(rel)),
          ARRAY[true, true, true, true],
          'an extension''s table, a typed table, a row type stored in a column, a column of two trees: both modes refuse, 0A000, same message');
SELECT matches(snap.refusal('b.ext', 'id', 'blocking'), 'table b\.ext belongs to extension pgtap; a dump and restore re-creates it',
               'the blocker names the extension and why');
-- refused by online only: the pre-flight says so, findings recommends blocking
CREATE TABLE snap.online_only AS
  SELECT x.rel, x.col, snap.refusal(x.rel, x.col, 'online') AS online, snap.refusal(x.rel, x.col, 'blocking') AS blocking,
         (storagelab_internal.findings_bigint_fix(x.rel, x.col)).*
    FROM (VALUES ('o.top'::regclass, 'id'::name), ('k.t', 'storagelab_seq'), ('o.parted', 'id'), ('o.base', 'id'), ('o.hub', 'id'), ('pub.t', 'id'),
                 ('g.alone', 'id'), ('o.idx', 'id'), ('o.pol', 'id'), ('o.chk', 'id'), ('o.trg', 'id'), ('o.rul', 'id')) x(rel, col);
SELECT is((SELECT string_agg(rel::text, ', ' ORDER BY rel::text) FROM snap.online_only
            WHERE online !~ CASE rel WHEN 'k.t'::regclass THEN '^42701: ' ELSE '^0A000: ' END OR online IS NULL OR blocking IS NOT NULL), NULL,
          'multiple inheritance, a key column named storagelab_seq (42701), a foreign partition or child, a child''s own column, a publication, a partitioned table alone without partitions, a table''s own index, policy, CHECK, trigger and rule over f(t): online refuses (0A000), blocking accepts');
SELECT is((SELECT string_agg(rel::text, ', ' ORDER BY rel::text) FROM snap.online_only
            WHERE fix NOT LIKE '%''blocking''%' OR fix IS NULL OR note NOT LIKE '%online refuses: %'), NULL,
          'for each, findings'' fix is the blocking script and its message says why online was refused');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_online_parity;
\set rc `rm -rf :tmp`

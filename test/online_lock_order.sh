#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): the online phases of the
# generated scripts give way to the application, never the reverse.
#
# Two copies (schemas a and b) of a small component: parent (the key), and
# child1, child2 referencing it, a view of parent and child2.  pgbench (4
# clients, 127.0.0.1, retries off: --max-tries=1, the default) runs
# transactions that read the view, then write parent, then
# child2, then child1 (two rows, the higher key first): the opposite of the
# order in which the scripts lock the tables (by name) and in which a batched
# UPDATE walks the rows.  While it runs, one after the other:
#   a: INT -> BIGINT online phases start, copy, index, replay, swap, validate,
#      cleanup; then rollback (refused: 55000, the migration is final);
#      a layout script (online) of a.child1, every phase; a TOAST storage
#      script of a.child1.note with its rewrite;
#   b: INT -> BIGINT online phases start, copy, index, replay, swap, rollback.
# Then: no client transaction failed (pgbench's "number of failed
# transactions", deadlocks included), every script completed, and the data is
# intact: each committed transaction added 1 to one parent row and to two rows
# of each child, so the sums agree with each other and with the ledger.
# Also: cleanup prints no "does not exist, skipping".
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
export PGDATABASE=storagelab_lock_order
dropdb --if-exists "$PGDATABASE" 2>/dev/null
createdb "$PGDATABASE"
q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }

q -q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE ctl (stop int NOT NULL);
INSERT INTO ctl VALUES (0);
CREATE SCHEMA a;
CREATE SCHEMA b;
DO $$
DECLARE s text;
BEGIN
  FOREACH s IN ARRAY ARRAY['a', 'b'] LOOP
    EXECUTE format('CREATE TABLE %I.parent (id int PRIMARY KEY, v int NOT NULL DEFAULT 0)', s);
    EXECUTE format('CREATE TABLE %I.child1 (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES %I.parent, v int NOT NULL DEFAULT 0, note text)', s, s);
    EXECUTE format('CREATE TABLE %I.child2 (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES %I.parent, v int NOT NULL DEFAULT 0)', s, s);
    EXECUTE format('CREATE INDEX ON %I.child2 (parent_id)', s);
    EXECUTE format('CREATE TABLE %I.ledger (n int)', s);
    EXECUTE format('CREATE VIEW %I.pv AS SELECT p.id, p.v, c.id AS cid FROM %I.parent p JOIN %I.child2 c ON c.parent_id = p.id', s, s, s);
    EXECUTE format('INSERT INTO %I.parent (id) SELECT g FROM generate_series(1, 500) g', s);
    EXECUTE format('INSERT INTO %I.child1 (id, parent_id, note) SELECT g, (g + 1) / 2, repeat(''note '' || g, 400) FROM generate_series(1, 1000) g', s);
    EXECUTE format('INSERT INTO %I.child2 (id, parent_id) SELECT g, (g + 1) / 2 FROM generate_series(1, 1000) g', s);
  END LOOP;
END
$$;
ANALYZE;
SQL
ok $? "fixtures: schemas a and b, parent with child1 and child2 (500 + 1000 + 1000 rows each)"

# The workload: a view of parent and child2 read, then parent, child2 and
# child1's rows 2p and 2p - 1 written (the swap drops and creates the view); a short
# pause between statements keeps the locks held while the others come.
for s in a b; do
	cat >"$work/$s.sql" <<EOF
SELECT 1 / (1 - stop) FROM ctl;
\set p random(1, 500)
BEGIN;
SELECT count(*) FROM $s.pv WHERE id = :p;
UPDATE $s.parent SET v = v + 1 WHERE id = :p;
\sleep 2 ms
UPDATE $s.child2 SET v = v + 1 WHERE parent_id = :p;
\sleep 2 ms
UPDATE $s.child1 SET v = v + 1 WHERE id = 2 * :p;
UPDATE $s.child1 SET v = v + 1 WHERE id = 2 * :p - 1;
INSERT INTO $s.ledger VALUES (1);
END;
EOF
done
pgbench -n -h 127.0.0.1 -c 4 -j 2 -T 900 -l --log-prefix="$work/tx" -f "$work/a.sql" -f "$work/b.sql" >"$work/pgbench" 2>&1 &
bench=$!
deadline=$((SECONDS + 60))
until [ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench' AND datname = current_database()")" = 4 ] \
	|| [ $SECONDS -ge $deadline ]; do :; done

# phase FILE PHASE: runs one phase of a script (output in $work/FILE.PHASE;
# its start and end, in microseconds since the epoch, in $work/windows).
now_us() { date +%s%6N; }
phase() {
	local t0 st
	t0=$(now_us)
	psql -X -q -v ON_ERROR_STOP=1 -v phase="$2" -f "$work/$1" >"$work/$1.$2" 2>&1
	st=$?
	echo "$1:$2 $t0 $(now_us)" >>"$work/windows"
	return $st
}

q -c "SELECT storagelab.bigint_migration_script('a.parent', 'id', mode => 'online')" >"$work/a_online.sql"
ok $? "online INT -> BIGINT script of a.parent.id"
q -c "SELECT storagelab.bigint_migration_script('b.parent', 'id', mode => 'online')" >"$work/b_online.sql"
ok $? "online INT -> BIGINT script of b.parent.id"
for p in start copy index replay swap validate cleanup; do
	phase a_online.sql $p
	ok $? "a: phase $p under load"
done
! grep -q 'does not exist, skipping' "$work/a_online.sql.cleanup"
ok $? "a: cleanup prints no 'does not exist, skipping'"
phase a_online.sql rollback
st=$?
[ $st != 0 ] && grep -q 'is final' "$work/a_online.sql.rollback" && ! grep -q 'does not exist, skipping' "$work/a_online.sql.rollback"
ok $? "a: rollback after cleanup fails, saying the migration is final"
[ "$(q -q -c "DO \$\$BEGIN PERFORM storagelab.bigint_migration_objects('a.parent', 'id'); EXCEPTION WHEN invalid_parameter_value THEN RAISE NOTICE 'ok'; END\$\$" 2>&1)" = "NOTICE:  ok" ]
ok $? "a: bigint_migration_objects() of the converted component raises 22023"

q -c "SELECT storagelab.layout_migration_script('a.child1', 'online', column_order => ARRAY['parent_id', 'id', 'v', 'note']::name[])" >"$work/a_layout.sql"
ok $? "online layout script of a.child1"
for p in start copy index replay swap validate cleanup; do
	phase a_layout.sql $p
	ok $? "a: layout phase $p under load"
done
q -c "SELECT storagelab.storage_migration_script('a.child1', 'note', 'external', rewrite_existing => true)" >"$work/a_toast.sql"
ok $? "TOAST storage script of a.child1.note"
t0=$(now_us)
psql -X -q -v ON_ERROR_STOP=1 -f "$work/a_toast.sql" >"$work/a_toast.sql.run" 2>&1
ok $? "a: TOAST storage script (SET STORAGE, rewrite) under load"
echo "a_toast.sql:run $t0 $(now_us)" >>"$work/windows"

for p in start copy index replay swap rollback; do
	phase b_online.sql $p
	ok $? "b: phase $p under load"
done

q -c "UPDATE ctl SET stop = 1" >/dev/null
wait $bench
cat "$work/pgbench" >&2
processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench")
fails=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench")
[ "${processed:-0}" -gt 0 ] && [ "$fails" = 0 ]
ok $? "no client transaction failed (processed ${processed:-?}, failed ${fails:-?})"
# an error other than a deadlock or serialization failure aborts a client without counting as failed:
# every client must have run until the stop (its division by zero)
[ "$(grep -c 'aborted in command' "$work/pgbench")" = 4 ] && [ "$(grep -c 'aborted in command 0 query 0: ERROR:  division by zero' "$work/pgbench")" = 4 ]
ok $? "every client ran until the end (no other error)"
# diagnostics: the failed client transactions by the phase they ended in,
# and what the scripts retried
cat "$work"/tx.* 2>/dev/null | awk -v W="$work/windows" '
	BEGIN { while ((getline l < W) > 0) { split(l, f, " "); nw++; name[nw] = f[1]; s[nw] = f[2]; e[nw] = f[3] } }
	$3 == "failed" { t = $5 * 1000000 + $6; hit = "between phases"
	                 for (i = 1; i <= nw; i++) if (t >= s[i] && t <= e[i] + 1000000) { hit = name[i]; break }
	                 count[hit]++ }
	$3 != "failed" && $3 > max { max = $3 }
	END { for (h in count) printf "# failed client transactions ending in %s (or within 1 s after it): %d\n", h, count[h]
	      printf "# longest client transaction: %d ms\n", max / 1000 }'
for f in "$work"/*.sql.*; do
	grep -H -E 'ERROR|retrying|WARNING' "$f" | sed 's/^/# /'
	g=$(grep -c 'gave way' "$f")
	[ "$g" = 0 ] || echo "# ${f##*/}: gave way to the clients $g times"
done

types=$(q -c "SELECT string_agg(format('%s.%s.%s %s', table_schema, table_name, column_name, data_type), ', ' ORDER BY table_schema, table_name)
                FROM information_schema.columns WHERE table_schema IN ('a', 'b')
                 AND ((table_name = 'parent' AND column_name = 'id') OR (table_name IN ('child1', 'child2') AND column_name = 'parent_id'))")
[ "$types" = "a.child1.parent_id bigint, a.child2.parent_id bigint, a.parent.id bigint, b.child1.parent_id integer, b.child2.parent_id integer, b.parent.id integer" ]
ok $? "a converted, b rolled back ($types)"
check=$(q <<'SQL'
SELECT string_agg(format('%s:%s', s, ok), ' ' ORDER BY s) FROM (
  SELECT 'a' AS s, (SELECT count(*) FROM a.ledger) = (SELECT sum(v) FROM a.parent)
               AND (SELECT sum(v) FROM a.child1) = 2 * (SELECT sum(v) FROM a.parent)
               AND (SELECT sum(v) FROM a.child2) = 2 * (SELECT sum(v) FROM a.parent)
               AND (SELECT count(*) FROM a.parent) = 500 AND (SELECT count(*) FROM a.child1) = 1000 AND (SELECT count(*) FROM a.child2) = 1000
               AND (SELECT sum(parent_id) FROM a.child1) = (SELECT sum((g + 1) / 2) FROM generate_series(1, 1000) g)
               AND (SELECT bool_and(note = repeat('note ' || id, 400)) FROM a.child1) AS ok
  UNION ALL
  SELECT 'b', (SELECT count(*) FROM b.ledger) = (SELECT sum(v) FROM b.parent)
               AND (SELECT sum(v) FROM b.child1) = 2 * (SELECT sum(v) FROM b.parent)
               AND (SELECT sum(v) FROM b.child2) = 2 * (SELECT sum(v) FROM b.parent)
               AND (SELECT count(*) FROM b.parent) = 500 AND (SELECT count(*) FROM b.child1) = 1000 AND (SELECT count(*) FROM b.child2) = 1000
               AND (SELECT sum(parent_id) FROM b.child2) = (SELECT sum((g + 1) / 2) FROM generate_series(1, 1000) g)) x
SQL
)
[ "$check" = "a:t b:t" ]
ok $? "data intact: every committed transaction counted once in each table, every row and key kept ($check)"
[ "$(q -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%' AND relnamespace IN ('a'::regnamespace, 'b'::regnamespace)")" = 0 ]
ok $? "no storagelab_ table left in a or b"
[ "$(q -c "SELECT count(*) FROM pg_attribute WHERE attrelid = 'a.child1'::regclass AND attname = 'parent_id' AND attnum = 1")" = 1 ]
ok $? "a.child1 in its new column order"

dropdb "$PGDATABASE"
echo "1..$n"
[ $failed = 0 ]

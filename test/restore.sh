#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): pg_dump and pg_restore
# of a database using storagelab.  A seeded database (settings overrides,
# int_overflow history and its fitted growth, a key near 2^31) is dumped
# with pg_dump -Fc and restored four ways: into an empty database, into one
# where CREATE EXTENSION storagelab already ran, and both again with
# --single-transaction.  Each restore must succeed without an error and give
# the same settings, history, growth and int_overflow.overflow_at (read as
# overflow_at - now(), which one statement makes exact) as the original, and
# the settings' shipped defaults once.
# Also: both schemas are members of the extension, so the dump has no
# CREATE SCHEMA of its own, and the extension object lives in pg_catalog.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
bindir=/usr/lib/postgresql/$PG_MAJOR/bin

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
q() { local db=$1; shift; psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"; for d in src r1 r2 r3 r4; do dropdb --if-exists "storagelab_restore_$d" 2>/dev/null; done' EXIT
src=storagelab_restore_src

dropdb --if-exists "$src" 2>/dev/null
createdb "$src"
q "$src" -q -o /dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE public.orders (id serial PRIMARY KEY, qty int);
INSERT INTO public.orders (qty) SELECT g FROM generate_series(1, 100) g;
SELECT setval('public.orders_id_seq', 2100000000);
ANALYZE public.orders;
INSERT INTO storagelab.settings VALUES ('scripts.lock_timeout', '750ms');
-- Two earlier readings, then a snapshot: a growth of 10 million a day.
INSERT INTO storagelab.int_overflow_history
       (taken_at, schema_name, table_name, column_name, sequence_schema, sequence_name, value, evidence)
VALUES (now() - interval '2 days', 'public', 'orders', 'id', 'public', 'orders_id_seq', 2080000000, 'exact'),
       (now() - interval '1 day', 'public', 'orders', 'id', 'public', 'orders_id_seq', 2090000000, 'exact');
SELECT storagelab.int_overflow_snapshot();
-- Profiles: restored tables get new OIDs, so a profile kept by OID would
-- name another table or none.  One of a table renamed after profiling, one
-- with a column of a user-defined type (its OID changes too), one of a
-- table dropped since (its row names no table: left out of the dump).
CREATE TYPE public.mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE public.items (id int, mood public.mood, label text);
INSERT INTO public.items SELECT g, 'ok', 'item ' || g FROM generate_series(1, 50) g;
CREATE TABLE public.gone (id int);
SELECT count(*) FROM storagelab.column_profile('public.gone');
SELECT count(*) FROM storagelab.column_profile('public.orders');
SELECT count(*) FROM storagelab.column_profile('public.items');
ALTER TABLE public.items RENAME TO stock;
DROP TABLE public.gone;
SQL
ok $? "a database with settings, history, growth and profiles is seeded"

# state DB: what a restore must keep, as text.
state() {
	q "$1" <<-'SQL'
		SELECT 'setting', name, value FROM storagelab.settings ORDER BY 2;
		-- shipped with the extension, not dumped: never twice after a restore
		SELECT 'setting defaults', count(*) FROM storagelab_internal.setting_defaults;
		SELECT 'history', taken_at, schema_name, table_name, column_name, value, evidence
		  FROM storagelab.int_overflow_history ORDER BY 2, 3, 4, 5;
		SELECT 'growth', schema_name, table_name, column_name, per_second, snapshots, fitted_at
		  FROM storagelab_internal.int_overflow_growth ORDER BY 2, 3, 4;
		SELECT 'profile', relid::regclass, attnum, attname, atttypid::regtype, atttypmod,
		       row_count, null_count, min_value, max_value, text_kind, profiled_at
		  FROM storagelab_internal.column_profiles
		 WHERE EXISTS (SELECT FROM pg_class c WHERE c.oid = relid) ORDER BY 2::text, 3;
		-- in use: the views take these columns' facts from the profile
		SELECT 'facts', relid::regclass, attname, source, profiled_rows
		  FROM storagelab_internal.column_facts
		 WHERE relid IN ('public.orders'::regclass, 'public.stock'::regclass) AND NOT attisdropped
		 ORDER BY 2::text, 3;
		SELECT 'overflow_at', relation, column_name, overflow_at - now(), growth_per_day
		  FROM storagelab.int_overflow WHERE relation = 'public.orders'::regclass;
		SELECT 'members', string_agg(pg_describe_object(classid, objid, 0), ', ' ORDER BY 1)
		  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'storagelab')
		   AND classid = 'pg_namespace'::regclass;
		SELECT 'extension in', extnamespace::regnamespace FROM pg_extension WHERE extname = 'storagelab';
	SQL
}
state "$src" >"$work/before"
echo "# before: $(grep -c '^setting' "$work/before") settings, $(grep -c '^history' "$work/before") history rows, $(grep -c '^growth' "$work/before") growth rows, $(grep -c '^profile' "$work/before") profile rows"
[ "$(grep -c '^facts|.*|exact|' "$work/before")" = 5 ] && grep -q '^profile|stock|2|mood|mood|' "$work/before"
ok $? "the profiles of orders and of the renamed stock are in use before the dump"
grep -q '^overflow_at|orders|id|[0-9]' "$work/before"
ok $? "overflow_at of the key near 2^31 is known before the dump"
grep -qx 'members|schema storagelab, schema storagelab_internal' "$work/before"
ok $? "both schemas are members of the extension"
grep -qx 'extension in|pg_catalog' "$work/before"
ok $? "the extension object lives in pg_catalog"

"$bindir/pg_dump" -Fc -f "$work/dump" "$src"
ok $? "pg_dump -Fc"
# A backup role: pg_read_all_data, no BYPASSRLS (pg_dump fails on a dumped
# table with row-level security enabled for such a role).
q "$src" -q -c "DROP ROLE IF EXISTS storagelab_restore_backup" \
	-c "CREATE ROLE storagelab_restore_backup LOGIN PASSWORD 'backup' IN ROLE pg_read_all_data"
PGPASSWORD=backup "$bindir/pg_dump" -U storagelab_restore_backup -Fc -f "$work/dump-backup" "$src" 2>"$work/backup.err"
ok $? "pg_dump -Fc as a role in pg_read_all_data$(grep -m 1 error "$work/backup.err" | sed 's/^/: /')"
q "$src" -q -c "DROP ROLE storagelab_restore_backup"
"$bindir/pg_restore" -l "$work/dump" | grep -E ' SCHEMA - storagelab' >"$work/schemas"
[ ! -s "$work/schemas" ]
ok $? "the dump has no CREATE SCHEMA storagelab of its own$(sed 's/^/: /' "$work/schemas")"

# restore NAME WITH_EXTENSION OPTIONS...: restore the dump into a new
# database (where CREATE EXTENSION ran first when WITH_EXTENSION is 1);
# no error, and the same state as the original.
restore() {
	local db=storagelab_restore_$1 with=$2 what
	shift 2
	what="pg_restore${*:+ $*} into a database $([ "$with" = 1 ] && echo "with the extension created" || echo "without the extension")"
	dropdb --if-exists "$db" 2>/dev/null
	createdb "$db"
	[ "$with" = 1 ] && q "$db" -q -c 'CREATE EXTENSION storagelab'
	"$bindir/pg_restore" --exit-on-error "$@" -d "$db" "$work/dump" >"$work/$db.log" 2>&1
	ok $? "$what succeeds$(grep -m 3 -E 'ERROR|error' "$work/$db.log" | sed 's/^/; /' | tr -d '\n')"
	state "$db" >"$work/$db.after"
	diff -u "$work/before" "$work/$db.after" >"$work/$db.diff"
	ok $? "$what keeps settings, history, growth, profiles and overflow_at"
	sed 's/^/# /' "$work/$db.diff"
	[ "$(q "$db" -c 'SELECT count(*) FROM storagelab_internal.column_profiles p
		WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = p.relid)')" = 0 ]
	ok $? "$what restores no profile that names no table"
}
restore r1 0
restore r2 1
restore r3 0 --single-transaction
restore r4 1 --single-transaction

# A schema clause other than pg_catalog is refused, with a clear message.
out=$(q storagelab_restore_r1 -q -c 'DROP EXTENSION storagelab CASCADE' -c 'CREATE EXTENSION storagelab WITH SCHEMA public' 2>&1)
grep -q 'must be installed in schema "pg_catalog"' <<<"$out"
ok $? "CREATE EXTENSION storagelab WITH SCHEMA public is refused: $(grep -m 1 ERROR <<<"$out")"
q storagelab_restore_r1 -q -c 'CREATE EXTENSION storagelab'
ok $? "CREATE EXTENSION storagelab (no schema clause) after DROP EXTENSION"

echo "1..$n"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): no statement that
# storagelab's views and functions run is JIT-compiled.  With jit = on and
# every JIT threshold at 0, any statement planned with jit = on is compiled;
# auto_explain (nested statements, at NOTICE level, so to the client) prints
# every plan with its JIT section.  Only the test's own top-level statements
# may have one: every statement inside storagelab's functions is planned with
# their jit = off (extension/99_jit.sql).  Covers every public view, report(),
# the snapshot, and every script generator in each mode (the *_plan()
# functions call the same generators per component; test/jit.sql checks the
# setting of every function, those included).
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"

echo "1..3"
n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
db=storagelab_jit_nested
dropdb --if-exists "$db" 2>/dev/null
createdb "$db"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE public.parent (id serial PRIMARY KEY, flag bigint, note text, doc bytea);
CREATE TABLE public.child (id serial PRIMARY KEY, parent_id int REFERENCES public.parent, qty int);
INSERT INTO public.parent (flag, note, doc) SELECT g, 'n' || g, '\x00' FROM generate_series(1, 100) g;
INSERT INTO public.child (parent_id, qty) SELECT g, g FROM generate_series(1, 100) g;
-- alignment padding: a layout plan to write scripts for
CREATE TABLE public.padded (a boolean, b bigint, c boolean, d bigint, e boolean, f bigint);
INSERT INTO public.padded SELECT true, g, false, g, true, g FROM generate_series(1, 1000) g;
SELECT FROM setval('public.parent_id_seq', 2000000000);
ANALYZE;
SQL

# The top-level statements: one per public view, then these.
statements=(
	"SELECT count(*) FROM storagelab.report()"
	"SELECT storagelab.int_overflow_snapshot()"
	"SELECT length(storagelab.bigint_migration_script('public.parent', 'id'))"
	"SELECT length(storagelab.bigint_migration_script('public.parent', 'id', 'online'))"
	"SELECT length(storagelab.layout_migration_script('public.padded'))"
	"SELECT length(storagelab.layout_migration_script('public.padded', 'online'))"
	"SELECT length(storagelab.storage_migration_script('public.parent', 'doc'))"
)
views=$(psql -X -At -d "$db" -c "SELECT count(*) FROM pg_class WHERE relnamespace = 'storagelab'::regnamespace AND relkind = 'v'")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# the plans (tens of MB) go to a file, read by grep: not through a shell variable
psql -X -d "$db" >"$out" 2>&1 <<SQL
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;
SET jit = on;
SET jit_above_cost = 0;
SET jit_inline_above_cost = -1;
SET jit_optimize_above_cost = -1;
SELECT format('SELECT count(*) FROM %s', c.oid::regclass)
  FROM pg_class c WHERE c.relnamespace = 'storagelab'::regnamespace AND c.relkind = 'v' \gexec
$(printf '%s;\n' "${statements[@]}")
SQL
plans=$(grep -c '^Query Text:' "$out")
compiled=$(grep -c '^JIT:' "$out")
top=$((views + 1 + ${#statements[@]}))	# + 1: the \gexec query
grep -E -m5 -A2 '^(psql:.*)?ERROR:' "$out" | sed 's/^/# /'
! grep -E -q '^(psql:.*)?ERROR:' "$out"
ok $? "every view and function ran (no error)"
[ "$plans" -gt $((top * 10)) ]
ok $? "their nested statements were planned and logged ($plans plans for $top top-level statements)"
if [ "$(psql -X -At -d "$db" -c 'SELECT pg_jit_available()')" = t ]; then
	[ "$compiled" -eq "$top" ]
	ok $? "only the $top top-level statements were JIT-compiled ($compiled were)"
else
	# Nothing is compiled where the server has no JIT (Debian: the package
	# postgresql-N-jit, 18 and later, which scripts/lib.sh installs when
	# the suite has it): the count would pass whatever storagelab does.
	n=$((n + 1))
	echo "ok $n # SKIP this server has no JIT (pg_jit_available() is false: postgresql-$PG_MAJOR-jit not installed)"
fi

dropdb --if-exists "$db" 2>/dev/null
[ "$failed" -eq 0 ]

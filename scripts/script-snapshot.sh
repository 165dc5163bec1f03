#!/usr/bin/env bash
# scripts/script-snapshot.sh OUTDIR: every migration script the generators
# write for the test fixtures, one file each, to compare two builds
# byte for byte (CONTRIBUTING.md, "Restructuring the generator"):
#
#   scripts/script-snapshot.sh /tmp/before      # on the old build
#   scripts/script-snapshot.sh /tmp/after       # on the new build
#   diff -r /tmp/before /tmp/after
#
# In a throwaway cluster on PostgreSQL $PG_MAJOR (default 15), one database
# per fixture (Pagila when ../shared has it, pgbench, the application
# schema, the object, edge and hazard fixtures, the TOAST forms), each
# loaded before CREATE EXTENSION storagelab so the tables' OIDs, which the
# scripts name, do not depend on the build.  For every int2/int4 column of
# a primary key or unique constraint: bigint_migration_script in modes
# blocking and online, with function_hazards refuse and widen; for every
# table: layout_migration_script in modes blocking and online; for every
# varlena column: storage_migration_script to external, with and without
# rewrite_existing.  A refusal is written as its SQLSTATE and message.
# The generation time, the migration ids derived from it, and sizes (which
# vary with the order the rows were written in) are masked.
# STORAGELAB_SNAPSHOT_ONLY=pgbench,objects limits it to those fixtures (the
# application schema's alone takes minutes: 157 tables).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:-}
[ -n "$out" ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

if [ -z "${STORAGELAB_SNAPSHOT_IN_CLUSTER:-}" ]; then
	build_extension || exit 1
	STORAGELAB_SNAPSHOT_IN_CLUSTER=1 with_cluster -- "$0" "$out"
	exit $?
fi

cd "$REPO" || exit 1
fixtures="pgbench:test/fixtures/pgbench.sql app:test/fixtures/app_schema.sql
objects:test/fixtures/bigint_migration_objects.sql edge:test/fixtures/bigint_migration_edge.sql
hazards:test/fixtures/bigint_migration_hazards.sql dynamic:test/fixtures/bigint_migration_hazards_dynamic.sql
toast:test/fixtures/toast.sql"
[ -f ../shared/datasets/pagila/pagila-schema.sql ] && fixtures="pagila:test/fixtures/pagila.sql $fixtures"

picked() { case ",${STORAGELAB_SNAPSHOT_ONLY:-$1}," in *",$1,"*) return 0 ;; esac; return 1; }
# every fixture first: the OID counter is the cluster's, and CREATE EXTENSION
# takes as many OIDs as the build has objects
for f in $fixtures; do
	db=snap_${f%%:*} file=${f#*:}
	picked "${f%%:*}" || continue
	createdb "$db" || exit 1
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'SET client_min_messages = warning' -f "$file" >/dev/null 2>&1 ||
		{ echo "loading $file failed" >&2; exit 1; }
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'ANALYZE' >/dev/null || exit 1
done
for f in $fixtures; do
	db=snap_${f%%:*}
	picked "${f%%:*}" || continue
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'SET client_min_messages = warning' \
		-c 'CREATE EXTENSION storagelab' >/dev/null || exit 1
	psql -X -At -v ON_ERROR_STOP=1 -d "$db" -f - <<'SQL' >"$out/$db.raw" || exit 1
\set QUIET on
SET client_min_messages = warning;
CREATE TEMP TABLE snap_calls AS
SELECT format('bigint %s.%s.%s %s %s', n.nspname, c.relname, a.attname, m, h) AS name,
       format('SELECT storagelab.bigint_migration_script(%L::regclass, %L, %L, %L)', c.oid::regclass, a.attname, m, h) AS call
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (k.conkey)
  CROSS JOIN unnest('{blocking,online}'::text[]) m CROSS JOIN unnest('{refuse,widen}'::text[]) h
 WHERE k.contype IN ('p', 'u') AND a.atttypid IN ('int2'::regtype, 'int4'::regtype)
   AND n.nspname NOT IN ('storagelab', 'storagelab_internal', 'pg_catalog', 'information_schema')
UNION ALL
SELECT format('layout %s.%s %s', n.nspname, c.relname, m),
       format('SELECT storagelab.layout_migration_script(%L::regclass, %L)', c.oid::regclass, m)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN unnest('{blocking,online}'::text[]) m
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT IN ('storagelab', 'storagelab_internal', 'pg_catalog', 'information_schema')
UNION ALL
SELECT format('storage %s.%s.%s %s', n.nspname, c.relname, a.attname, r),
       format('SELECT storagelab.storage_migration_script(%L::regclass, %L, ''external'', %L)', c.oid::regclass, a.attname, r)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attlen = -1
  CROSS JOIN unnest('{false,true}'::boolean[]) r
 WHERE c.relkind = 'r' AND a.atttypid IN ('bytea'::regtype, 'text'::regtype)
   AND n.nspname NOT IN ('storagelab', 'storagelab_internal', 'pg_catalog', 'information_schema');
CREATE TEMP TABLE snap_out (name text, script text);
DO $$
DECLARE r record; s text;
BEGIN
  FOR r IN SELECT * FROM snap_calls ORDER BY name LOOP
    BEGIN
      EXECUTE r.call INTO s;
    EXCEPTION WHEN OTHERS THEN
      s := format('ERROR %s: %s', SQLSTATE, SQLERRM);
    END;
    INSERT INTO snap_out VALUES (r.name, s);
  END LOOP;
END $$;
SELECT format(E'==== %s\n%s', name, script) FROM snap_out ORDER BY name;
SQL
	# the generation time, and the ids made from it, differ from run to run
	sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}( UTC| [A-Z]+)?/<time>/g' \
		-e 's/\bsl[a-z]*[0-9a-f]{10}\b/<migration id>/g' \
		-e 's/\b[0-9]+(\.[0-9]+)? (bytes|kB|MB|GB|TB)\b/<size>/g' "$out/$db.raw" >"$out/$db.txt" && rm "$out/$db.raw"
	echo "$db: $(grep -c '^==== ' "$out/$db.txt") scripts, $(grep -c '^ERROR ' "$out/$db.txt") refusals" >&2
done

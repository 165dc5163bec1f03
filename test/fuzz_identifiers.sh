#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): hostile identifiers
# through every script generator.
#
# 576 generated names (quotes, backslashes, dollar quotes, semicolons,
# comment starts, newlines, psql meta-commands and variables, unicode,
# reserved words, upper case, 63-byte names) become the tables, columns,
# foreign-key children and views of a scratch schema.  Every generator's
# script for them must run with psql -v ON_ERROR_STOP=1, change what it names,
# and touch nothing else: a bystander schema and a canary table keep their
# catalog checksums, and no psql meta-command hidden in a name runs.
#
# Data sized to the oracle: 144 groups (576 names; 1,000 names, then 756,
# before).  Name i has role i % 4 (table, key, child, foreign key) in group
# i / 4 and joins fragments (i / 4) % 24 and (i / 96 + 6 (i % 4) + 7 (i / 4))
# % 24, 63 bytes long when (i + i / 4 + 2 (i / 96)) % 5 = 0: 144 groups are
# the fewest that give each of the 576 ordered pairs of the 24 fragments
# (here exactly once), and they give every fragment in each position of each
# role at both lengths (all 384 combinations).  The 189 groups of the
# previous naming (fragments i % 24 and (i / 24 + 7 i) % 24, long when
# i % 5 = 0) gave 240 of the 384: the role of name i was i % 4 and so was
# its first fragment's.  The online part's 25 groups: 196 combinations
# instead of 141.  All checked by enumerating the names.  Per-step timings
# go to stderr.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
GROUPS_BLOCKING=${FUZZ_GROUPS:-144}      # 4 names each: 576 names
GROUPS_ONLINE=${FUZZ_GROUPS_ONLINE:-25}  # the online plan is many steps per column

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PGDATABASE=storagelab_fuzz
dropdb --if-exists "$PGDATABASE" 2>/dev/null
createdb "$PGDATABASE"
q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }
step_start=$SECONDS
step() { echo "# step $1: $((SECONDS - step_start)) s" >&2; step_start=$SECONDS; }

q -q <<SQL
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE SCHEMA fuzz;
CREATE SCHEMA bystander;
CREATE TABLE public.canary (id int PRIMARY KEY);
INSERT INTO public.canary VALUES (1);

-- The names: fragments combined so that every kind of hazard appears in
-- every position; i-th name is deterministic.
CREATE FUNCTION fuzz_name(i int) RETURNS text LANGUAGE sql IMMUTABLE AS \$f\$
  WITH frag(k, s) AS (VALUES
    (0, 'x"y'), (1, 'it''s'), (2, 'back\slash'), (3, '\$\$dollar\$\$'), (4, 'semi;colon'),
    (5, 'dash--dash'), (6, E'new\nline'), (7, E'\n\\\\! touch $work/pwned\n'), (8, ':psqlvar'),
    (9, 'Upper Case'), (10, 'select'), (11, 'table'), (12, 'éàü'), (13, '日本語'),
    (14, '🐘'), (15, '/* c */'), (16, '%I%s%L'), (17, E'tab\there'), (18, ' lead'),
    (19, 'x"; DROP TABLE public.canary; --'), (20, '\$storagelab\$'), (21, 'order'),
    (22, E'\\\\set ON_ERROR_STOP off'), (23, ':''v'''))
  SELECT left(format('%s_%s_%s', i, (SELECT s FROM frag WHERE k = (i / 4) % 24),
                     (SELECT s FROM frag WHERE k = (i / 96 + 6 * (i % 4) + 7 * (i / 4)) % 24))
              || CASE WHEN (i + i / 4 + 2 * (i / 96)) % 5 = 0 THEN repeat('z', 63) ELSE '' END, 63)
\$f\$;

-- Bystanders: same shapes, never named by a generator.
CREATE TABLE bystander.parent (id serial PRIMARY KEY, b bytea);
CREATE TABLE bystander.child (id int PRIMARY KEY, p int REFERENCES bystander.parent);
SQL
checksum="SELECT md5(string_agg(format('%s.%s %s %s %s', c.relname, a.attname, a.atttypid, a.attstorage, c.relfilenode), ',' ORDER BY c.relname, a.attnum))
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
 WHERE c.relnamespace IN ('bystander'::regnamespace, 'public'::regnamespace) AND a.attnum > 0"
before=$(q -c "$checksum")

# One group = parent table, its key column, a child table and its FK column
# (4 names), plus a view on the parent and a bytea column.
make_groups() {  # from to
	q -q -c "
	DO \$\$
	DECLARE i int; p text; pk text; c text; fk text;
	BEGIN
	  FOR i IN $1 .. $2 LOOP
	    p := public.fuzz_name(4 * i); pk := public.fuzz_name(4 * i + 1);
	    c := public.fuzz_name(4 * i + 2); fk := public.fuzz_name(4 * i + 3);
	    EXECUTE format('CREATE TABLE fuzz.%I (%I serial PRIMARY KEY, %I bytea)', p, pk, 'b' || pk);
	    EXECUTE format('CREATE TABLE fuzz.%I (id int PRIMARY KEY, %I int REFERENCES fuzz.%I)', c, fk, p);
	    EXECUTE format('CREATE VIEW fuzz.%I AS SELECT %I FROM fuzz.%I', left('v' || p, 63), pk, p);
	    EXECUTE format('INSERT INTO fuzz.%I (%I) SELECT decode(repeat(''ab'', 3000), ''hex'') FROM generate_series(1, 3)', p, 'b' || pk);
	    EXECUTE format('INSERT INTO fuzz.%I SELECT g, g FROM generate_series(1, 3) g', c);
	  END LOOP;
	END \$\$"
}
make_groups 0 $((GROUPS_BLOCKING - 1))
ok $? "$((4 * GROUPS_BLOCKING)) hostile names created as tables, columns and views"
step create

# Generate every script into one file per generator, then run each file.
gen() {  # generator-call-template from to file
	q -c "SELECT string_agg($1, E'\n' ORDER BY i)
	        FROM generate_series($2, $3) i,
	             LATERAL (SELECT format('fuzz.%I', public.fuzz_name(4 * i))::regclass AS rel,
	                             public.fuzz_name(4 * i + 1)::name AS col) x" > "$4"
}
gen "storagelab.storage_migration_script(rel, ('b' || col)::name, 'external', true)" 0 $((GROUPS_BLOCKING - 1)) "$work/storage.sql"
ok $? "storage_migration_script generates for every hostile name"
step storage-generate
q -q -f "$work/storage.sql" >"$work/out" 2>&1
ok $? "the storage scripts run $(grep -m1 'ERROR:' "$work/out" | grep -v NOTICE)"
step storage-run

gen "storagelab.bigint_migration_script(rel, col)" 0 $((GROUPS_BLOCKING - 1)) "$work/blocking.sql"
ok $? "bigint_migration_script (blocking) generates for every hostile name"
step blocking-generate
q -q -f "$work/blocking.sql" >"$work/out" 2>&1
ok $? "the blocking scripts run $(grep -m1 'ERROR:' "$work/out" | grep -v NOTICE)"
step blocking-run

[ "$(q -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'fuzz'::regnamespace AND c.relkind = 'r' AND a.attnum > 0
              AND a.atttypid = 'int4'::regtype AND a.attname <> 'id'")" = 0 ]
ok $? "every named key and foreign-key column is bigint afterwards"
[ "$(q -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'fuzz'::regnamespace AND c.relkind = 'r'
              AND a.atttypid = 'bytea'::regtype AND a.attstorage <> 'e'")" = 0 ]
ok $? "every named bytea column is SET STORAGE EXTERNAL afterwards"
[ "$(q -c "SELECT count(*) FROM pg_class WHERE relnamespace = 'fuzz'::regnamespace AND relkind = 'v'")" = "$GROUPS_BLOCKING" ]
ok $? "every view on a converted key is back"

if q -At -c "SELECT 1 FROM pg_proc WHERE proname = 'bigint_migration_script'" >/dev/null &&
	q -c "SELECT storagelab.bigint_migration_script('bystander.parent', 'id', 'online')" >/dev/null 2>&1; then
	q -q -c "DROP SCHEMA fuzz CASCADE; CREATE SCHEMA fuzz" 2>/dev/null
	make_groups 0 $((GROUPS_ONLINE - 1))
	gen "storagelab.bigint_migration_script(rel, col, 'online')" 0 $((GROUPS_ONLINE - 1)) "$work/online.sql"
	ok $? "bigint_migration_script (online) generates for $((4 * GROUPS_ONLINE)) hostile names"
	step online-create-generate
	rc=0
	for phase in start copy index replay swap validate cleanup; do
		q -q -v phase=$phase -f "$work/online.sql" >"$work/out" 2>&1 || { rc=1; break; }
	done
	ok $rc "the online scripts run, phase by phase $(grep -m1 'ERROR:' "$work/out" | grep -v NOTICE)"
	step online-run
	[ "$(q -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
	            WHERE c.relnamespace = 'fuzz'::regnamespace AND c.relkind = 'r' AND a.attnum > 0
	              AND NOT a.attisdropped AND a.atttypid = 'int4'::regtype AND a.attname <> 'id'")" = 0 ]
	ok $? "online: every named key and foreign-key column is bigint afterwards"
fi

[ "$(q -c "$checksum")" = "$before" ]
ok $? "the bystander schema and the canary table are untouched"
[ ! -e "$work/pwned" ]
ok $? "no psql meta-command hidden in a name ran"

dropdb "$PGDATABASE"
echo "1..$n"
exit $((failed > 0))

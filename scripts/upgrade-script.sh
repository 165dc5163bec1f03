#!/bin/sh
# scripts/upgrade-script.sh FROM TO PART...: writes the upgrade script
# storagelab--FROM--TO.sql to stdout (the Makefile runs it; the file is a
# build output, never committed).  It is
#   1. the update files from FROM to TO in order (extension/updates/
#      FROM--X.sql, X--Y.sql, ..., W--TO.sql): the steps that cannot be run
#      again (drops, renames, ALTER TABLE, rows moved), up to each file's
#      line "-- after the install parts", if it has one;
#   2. the install parts PART... (extension/[0-9]*.sql) made re-runnable by
#      scripts/rerunnable.awk: CREATE OR REPLACE, IF NOT EXISTS, ...;
#   3. what follows "-- after the install parts" in each update file (steps
#      that need the new version's functions, such as refitting derived
#      rows).
# Before 1., the objects that exist (the extension's members and its
# schemas) are listed in the setting storagelab_upgrade.existing: the
# parts' GRANT and REVOKE statements skip them (scripts/rerunnable.awk), so
# the update keeps the privileges a DBA gave or took on them; objects the
# update creates get the parts' privileges.  A privilege change a version
# makes on an object that exists is a step in the update file.
# So a database of any released version reaches exactly what a fresh install
# of TO gives (scripts/upgrade-test.sh proves it).  See CONTRIBUTING.md,
# "Versions and upgrades".
set -eu
from=$1 to=$2
shift 2
here=$(dirname "$0")
updates=$here/../extension/updates

# The chain of update files from FROM to TO.
chain= v=$from n=0
while [ "$v" != "$to" ]; do
	next=
	for f in "$updates/$v--"*.sql; do
		[ -f "$f" ] || continue
		if [ -n "$next" ]; then
			echo "upgrade-script.sh: more than one extension/updates/$v--*.sql" >&2
			exit 1
		fi
		next=$f
	done
	n=$((n + 1))
	if [ -z "$next" ] || [ "$n" -gt 100 ]; then
		echo "upgrade-script.sh: no chain of extension/updates/*.sql from $from to $to (stuck at $v)" >&2
		exit 1
	fi
	chain="$chain $next"
	v=${next##*/"$v"--}
	v=${v%.sql}
done

# before|after FILE: a file's lines up to (before) or after (after) its
# line "-- after the install parts", without "\echo" guard lines.
part_of() {
	awk -v want="$1" '
		$0 == "-- after the install parts" { after = 1; next }
		/^\\echo / { next }
		(want == "after") == (after == 1) { print }
	' "$2"
}

cat <<HEAD
-- storagelab upgrade $from -> $to, built by make (scripts/upgrade-script.sh)
-- from extension/updates/ and the install parts extension/[0-9]*.sql made
-- re-runnable: do not edit it, edit those.

\\echo Use "ALTER EXTENSION storagelab UPDATE TO '$to'" to load this file. \\quit

-- The objects that exist before this update ("classid:objid," each): the
-- install parts' GRANT and REVOKE leave their privileges as they are.
SELECT pg_catalog.set_config('storagelab_upgrade.existing',
  ',' || pg_catalog.string_agg(o.classid || ':' || o.objid, ',') || ',', true)
  FROM (SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
         WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
           AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'storagelab')
        UNION
        SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass::pg_catalog.oid, n.oid FROM pg_catalog.pg_namespace n
         WHERE n.nspname IN ('storagelab', 'storagelab_internal')) o;
HEAD
for f in $chain; do
	printf '\n-- from extension/updates/%s\n' "${f##*/}"
	part_of before "$f"
done
awk -f "$here/rerunnable.awk" "$@"
for f in $chain; do
	if grep -qx -- '-- after the install parts' "$f"; then
		printf '\n-- from extension/updates/%s, after the install parts\n' "${f##*/}"
		part_of after "$f"
	fi
done
printf '\n%s\n' "SELECT pg_catalog.set_config('storagelab_upgrade.existing', '', true);"

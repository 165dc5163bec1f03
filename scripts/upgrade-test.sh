#!/usr/bin/env bash
# scripts/upgrade-test.sh: every released version upgrades to the current one
# exactly (scripts/test.sh runs it after the suites, so "make test" and every
# major of "make matrix" run it).
#
# The released versions are the CHANGELOG.md headings that name a commit
# ("## 1.0 (2026-11-22): commit 45aee7a"): the commit id (there are no
# tags: they do not travel with every clone).  For each of them:
#   1. its source (git archive of that commit) is built for this major and
#      staged, as a package of that release would install it (cached in
#      .build/releases/);
#   2. a throwaway cluster loads that staged release; CREATE EXTENSION
#      storagelab VERSION '<release>' and test/upgrade/seed-<release>.sql give
#      a database the state a user of that release has (settings, history,
#      profiles, migration progress);
#   3. the current build is installed over it (its storagelab.so replaces the
#      release's, as a package upgrade does) and ALTER EXTENSION storagelab
#      UPDATE runs;
#   4. test/upgrade/describe.sql prints the extension's catalog state of that
#      database and of a fresh install of the current version in another
#      database; they must be the same text (a diff is printed otherwise,
#      each hunk headed by the object it is in), and every row the seed left
#      in the extension's tables must still be there (followed by table OID
#      and column number, so renames and type changes keep them).
# Also: extension/updates/*.sql define no function, procedure or view (the
# upgrade scripts make builds get them from the install parts); the update
# path from each release to default_version exists
# (pg_extension_update_paths), and when default_version is itself released,
# its install script built now is the one built at its release commit (a
# change to the install script needs a new version and an upgrade script).
#
# A release commit missing from the clone (shallow, or no git history at
# all, as in a release archive) fails under CI=true and is skipped with the
# reason otherwise.  Prints one "ok"/"not ok" line per check and last
# "N passed, M failed" (", K skipped" when some were).
#
#   scripts/upgrade-test.sh            build what is needed and run the test
#   scripts/upgrade-test.sh --prepare  only extract the releases' sources
#                                      (scripts/matrix.sh runs this on the
#                                      host, where git is, before the chroots)
# Environment: PG_MAJOR (default 15).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RELEASES=$REPO/.build/releases
EXTVERSION=$(extension_version)

git_() { git -c safe.directory='*' -C "$REPO" "$@"; }

# prepare VERSION COMMIT: the source of VERSION in $RELEASES/VERSION/src.
# Prints why not and fails when the commit is not in this clone.
prepare() {
	local v=$1 c=$2 dir=$RELEASES/$1
	[ "$(cat "$dir/src/.commit" 2>/dev/null)" = "$c" ] && return 0
	if ! command -v git >/dev/null; then
		log "installing git (to extract release $v)"
		as_root apt-get install -y -qq --no-install-recommends git >/dev/null 2>&1 ||
			{ as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends git >/dev/null; } ||
			{ echo "git is missing and could not be installed"; return 1; }
	fi
	if ! git_ rev-parse --git-dir >/dev/null 2>&1; then
		echo "this copy of storagelab has no git history"
		return 1
	fi
	if ! git_ cat-file -e "$c^{commit}" 2>/dev/null; then
		echo "commit $c is not in this clone (shallow? fetch with --unshallow)"
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir/src"
	git_ archive "$c" | tar -x -C "$dir/src"
	echo "$c" >"$dir/src/.commit"
}

# build VERSION: VERSION built for this major and staged in
# $RELEASES/VERSION/pg$PG_MAJOR/stage (cached: a release never changes).
build() {
	local v=$1 dir=$RELEASES/$1 out stamp
	out=$dir/pg$PG_MAJOR
	stamp="$(cat "$dir/src/.commit") $("$PG_CONFIG" --version)"
	[ "$(cat "$out/.built" 2>/dev/null)" = "$stamp" ] && return 0
	log "building release $v (commit $(cat "$dir/src/.commit")) for PostgreSQL $PG_MAJOR"
	rm -rf "$out"
	mkdir -p "$out"
	cp -a "$dir/src" "$out/build"
	# as lib.sh's release_build: make -j, no LLVM bitcode (only JIT inlining
	# reads it)
	if ! { make -C "$out/build" -s -j "$(nproc)" PG_CONFIG="$PG_CONFIG" with_llvm=no &&
		make -C "$out/build" -s PG_CONFIG="$PG_CONFIG" with_llvm=no install DESTDIR="$out/stage"; } >"$out/build.log" 2>&1; then
		tail -n 30 "$out/build.log" >&2
		return 1
	fi
	rm -rf "$out/build"
	echo "$stamp" >"$out/.built"
}

# ---------------------------------------------------------------------------
# Inside the throwaway cluster, which loads the extension from UPGRADE_STAGE.
# ---------------------------------------------------------------------------

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
skip() { skipped=$((skipped + 1)); echo "skipped - $*"; }

psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# stage VERSION|current: VERSION's staged release (or the current build,
# over what is there) in $UPGRADE_STAGE (lib.sh's release_stage).
stage() { release_stage "$UPGRADE_STAGE" "$1"; }

# The rows of the extension's tables, one line each: table OID, its name,
# and the row as JSON keyed by "column number:column name".
ROWS_SQL="
CREATE FUNCTION pg_temp.rows(r regclass) RETURNS SETOF jsonb LANGUAGE plpgsql AS \$\$
BEGIN RETURN QUERY EXECUTE format('SELECT to_jsonb(t) FROM %s t', r); END \$\$;
\\copy (SELECT c.oid, c.oid::regclass, (SELECT jsonb_object_agg(a.attnum || ':' || a.attname, j -> a.attname::text) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid, pg_temp.rows(c.oid) j WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'storagelab') AND d.deptype = 'e' AND c.relkind IN ('r', 'p') ORDER BY 1, 3::text) TO STDOUT"

# rows_kept DB BEFORE: every row of BEFORE (ROWS_SQL's output) is in DB's
# table of the same OID (or, when the upgrade re-created the table, the
# extension's table of the same name), with the same values in the columns
# of the same numbers (renamed, retyped and added columns allowed).  Columns
# the upgrade dropped are not compared: a "#" line names each.  Prints what
# is missing, one line each.
rows_kept() {
	psql_ -At -d "$1" <<-EOF
		CREATE TEMP TABLE before (relid oid, relname text, row jsonb);
		\\copy before FROM '$2'
		CREATE FUNCTION pg_temp.rows(r regclass) RETURNS SETOF jsonb LANGUAGE plpgsql AS \$\$
		BEGIN RETURN QUERY EXECUTE format('SELECT to_jsonb(t) FROM %s t', r); END \$\$;
		CREATE TEMP TABLE target AS
		  SELECT DISTINCT b.relid AS old, b.relname,
		         coalesce((SELECT c.oid FROM pg_class c WHERE c.oid = b.relid),
		                  (SELECT c.oid FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
		                    WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
		                      AND d.refclassid = 'pg_extension'::regclass
		                      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'storagelab')
		                      AND c.relname = split_part(b.relname, '.', 2) LIMIT 1)) AS new
		    FROM before b;
		CREATE TEMP TABLE after AS
		  SELECT t.old AS relid,
		         (SELECT jsonb_object_agg(a.attnum, j -> a.attname::text) FROM pg_attribute a
		           WHERE a.attrelid = t.new AND a.attnum > 0 AND NOT a.attisdropped) AS row
		    FROM target t, pg_temp.rows(t.new) j
		   WHERE t.new IS NOT NULL;
		-- Each row by column number, without the columns the upgrade dropped.
		CREATE TEMP TABLE kept AS
		  SELECT b.relname, t.new, b.relid, b.row AS shown,
		         coalesce((SELECT jsonb_object_agg(split_part(k, ':', 1), v) FROM jsonb_each(b.row) e(k, v)
		                    WHERE EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = t.new
		                                     AND a.attnum = split_part(k, ':', 1)::int AND NOT a.attisdropped)),
		                  '{}') AS row
		    FROM before b JOIN target t ON t.old = b.relid
		   WHERE t.new IS NOT NULL;
		SELECT DISTINCT format('# (not compared: column %s of %s, dropped by the upgrade)',
		                       split_part(k, ':', 2), b.relname)
		  FROM before b JOIN target t ON t.old = b.relid, jsonb_object_keys(b.row) k
		 WHERE t.new IS NOT NULL
		   AND NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = t.new
		                      AND a.attnum = split_part(k, ':', 1)::int AND NOT a.attisdropped);
		SELECT format('table %s is gone (no table of that OID or name in the extension)', relname)
		  FROM target WHERE new IS NULL
		UNION ALL
		SELECT format('%s (now %s) lost the row %s', k.relname, k.new::regclass, k.shown)
		  FROM kept k
		 WHERE NOT EXISTS (SELECT FROM after a WHERE a.relid = k.relid AND a.row @> k.row);
	EOF
}

in_cluster() {
	local v c fresh=storagelab_upgrade_fresh created_fresh= tmp db path state
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	while read -r v c; do
		[ -f "$RELEASES/$v/pg$PG_MAJOR/.built" ] || continue
		[ "$v" = "$EXTVERSION" ] && continue	# no upgrade to itself
		db=storagelab_upgrade_from_${v//./_}
		stage "$v"
		createdb "$db"
		psql_ -d "$db" -c "CREATE EXTENSION storagelab VERSION '$v'"
		psql_ -d "$db" <<<"$ROWS_SQL" >"$tmp/rows0"
		if [ ! -f "$REPO/test/upgrade/seed-$v.sql" ]; then
			not_ok "$v: test/upgrade/seed-$v.sql (the state a $v user has) is missing"
		elif ! psql_ -d "$db" -o /dev/null -f "$REPO/test/upgrade/seed-$v.sql"; then
			not_ok "$v: test/upgrade/seed-$v.sql fails"
		fi
		psql_ -d "$db" <<<"$ROWS_SQL" >"$tmp/rows1"
		# The tables the seed wrote to hold a user's data: only the
		# shipped rows of the others are compared with a fresh install.
		grep -vxF -f "$tmp/rows0" "$tmp/rows1" | cut -f1 | sort -u >"$tmp/state-oids" || true
		awk -F'\t' 'NR == FNR { s[$1] = 1; next } ($1 in s)' "$tmp/state-oids" "$tmp/rows1" >"$tmp/before"

		stage current
		if ! psql_ -d "$db" -c 'ALTER EXTENSION storagelab UPDATE' 2>"$tmp/err"; then
			not_ok "$v: ALTER EXTENSION storagelab UPDATE fails"
			sed 's/^/#   /' "$tmp/err"
			continue
		fi
		if [ -z "$created_fresh" ]; then
			createdb "$fresh"
			psql_ -d "$fresh" -c 'CREATE EXTENSION storagelab'
			created_fresh=1
		fi

		path=$(psql_ -At -d "$fresh" -c "SELECT path FROM pg_extension_update_paths('storagelab')
			WHERE source = '$v' AND target = '$EXTVERSION'")
		if [ -n "$path" ]; then
			ok "$v: an update path to $EXTVERSION exists ($path)"
		else
			not_ok "$v: no upgrade script storagelab--$v--$EXTVERSION.sql (make builds one from each extension/updates/$v--*.sql)"
		fi
		v1=$(psql_ -At -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'storagelab'")
		if [ "$v1" = "$EXTVERSION" ]; then
			ok "$v: ALTER EXTENSION storagelab UPDATE gives version $EXTVERSION"
		else
			not_ok "$v: ALTER EXTENSION storagelab UPDATE gives version $v1, not $EXTVERSION"
		fi

		# The state tables by their names after the upgrade.
		state=$(psql_ -At -d "$db" -c "SELECT coalesce(array_agg(c.oid::regclass::text), '{}')
			FROM pg_class c WHERE c.oid IN ($(paste -sd, "$tmp/state-oids" | sed 's/^$/0/'))")
		psql_ -At -d "$fresh" -v state_tables="$state" -f "$REPO/test/upgrade/describe.sql" >"$tmp/fresh"
		psql_ -At -d "$db" -v state_tables="$state" -f "$REPO/test/upgrade/describe.sql" >"$tmp/upgraded"
		if diff -q "$tmp/fresh" "$tmp/upgraded" >/dev/null; then
			ok "$v + ALTER EXTENSION UPDATE: the same catalog state as a fresh install of $EXTVERSION ($(grep -c '^[^ ]' "$tmp/fresh") objects)"
		else
			not_ok "$v + ALTER EXTENSION UPDATE differs from a fresh install of $EXTVERSION"
			echo "# --- fresh install of $EXTVERSION"
			echo "# +++ $v, then ALTER EXTENSION storagelab UPDATE (storagelab--$v--$EXTVERSION.sql, built from extension/updates/ and the install parts)"
			echo "# \"-\" lines: only in the fresh install; \"+\" lines: only after the upgrade;"
			echo "# each hunk is headed (after @@) by the object it is in."
			diff -U 3 -F '^[^ ]' --label "fresh $EXTVERSION" --label "upgraded from $v" \
				"$tmp/fresh" "$tmp/upgraded" | sed 's/^/#   /' || true
		fi

		rows_kept "$db" "$tmp/before" >"$tmp/lost"
		grep '^#' "$tmp/lost" || true
		sed -i '/^#/d' "$tmp/lost"
		if [ ! -s "$tmp/lost" ]; then
			ok "$v + ALTER EXTENSION UPDATE: the $(wc -l <"$tmp/before") rows a $v user had in $(wc -l <"$tmp/state-oids") tables are kept"
		else
			not_ok "$v + ALTER EXTENSION UPDATE loses rows"
			sed 's/^/#   /' "$tmp/lost"
		fi
	done < <(release_list)
	echo "$passed $failed $skipped" >"$UPGRADE_COUNTS"
}

if [ "${1:-}" = --in-cluster ]; then
	in_cluster
	exit 0
fi

# ---------------------------------------------------------------------------
# Outside: sources, builds, the install-script check, then the cluster.
# ---------------------------------------------------------------------------

if [ ! -f "$REPO/CHANGELOG.md" ]; then
	log "CHANGELOG.md is missing: no released versions to test"
	exit 1
fi
if [ "${1:-}" = --prepare ]; then
	while read -r v c; do
		prepare "$v" "$c" >&2 || log "release $v: not prepared"
	done < <(release_list)
	exit 0
fi

# When run on its own (scripts/test.sh has built the current version).
if [ -z "${STORAGELAB_BUILT:-}" ]; then
	ensure_packages
	build_extension
fi

echo "# upgrade test: released versions $(release_list | awk '{print $1}' | paste -sd' '), current $EXTVERSION"
# The update files hold only what cannot be run again: every function,
# procedure and view is defined once, in the install parts, which the
# upgrade scripts run again (CREATE OR REPLACE).
defs=$(grep -HnE '^[[:space:]]*CREATE[[:space:]]+(OR[[:space:]]+REPLACE[[:space:]]+)?(FUNCTION|PROCEDURE|VIEW|AGGREGATE)' \
	"$REPO"/extension/updates/*.sql 2>/dev/null || true)
if [ -z "$defs" ]; then
	ok "extension/updates/ defines no function, procedure or view (the install parts define each once)"
else
	not_ok "extension/updates/ defines functions, procedures or views: define them in extension/[0-9]*.sql only"
	sed "s|^$REPO/|#   |" <<<"$defs"
fi
have=0
while read -r v c; do
	if ! why=$(prepare "$v" "$c"); then
		if [ "${CI:-}" = true ]; then
			not_ok "release $v: $why"
		else
			skip "release $v: $why"
		fi
		continue
	fi
	if ! build "$v"; then
		not_ok "release $v (commit $c) does not build for PostgreSQL $PG_MAJOR"
		rm -rf "$RELEASES/$v/pg$PG_MAJOR"
		continue
	fi
	ok "release $v built from commit $c"
	have=$((have + 1))
	# A released default_version: its install script must not have changed.
	if [ "$v" = "$EXTVERSION" ]; then
		old=$(find "$RELEASES/$v/pg$PG_MAJOR/stage" -name "storagelab--$v.sql" | head -1)
		if cmp -s "$old" "$REPO/storagelab--$v.sql"; then
			ok "$v: the install script is the one released at $c"
		else
			not_ok "$v is released (commit $c) but its install script changed: bump default_version and add extension/updates/$v--<new>.sql"
			diff -u --label "released $v" --label "built now" "$old" "$REPO/storagelab--$v.sql" | head -n 60 | sed 's/^/#   /' || true
		fi
	fi
done < <(release_list)

if [ "$have" -gt 0 ]; then
	upgrade_stage=$(mktemp -d /tmp/storagelab-upgrade.XXXXXX)
	chmod 755 "$upgrade_stage"
	trap 'rm -rf "$upgrade_stage"' EXIT
	export UPGRADE_COUNTS=$upgrade_stage.counts EXTVERSION
	echo "0 1 0" >"$UPGRADE_COUNTS"	# if the cluster never starts
	STAGE=$upgrade_stage UPGRADE_STAGE=$upgrade_stage \
		with_cluster -- "$REPO/scripts/upgrade-test.sh" --in-cluster || true
	read -r cp cf cs <"$UPGRADE_COUNTS"
	rm -f "$UPGRADE_COUNTS"
	passed=$((passed + cp)) failed=$((failed + cf)) skipped=$((skipped + cs))
fi
summary_line "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]

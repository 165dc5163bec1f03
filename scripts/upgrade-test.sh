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
# and the row as JSON keyed by "column number:column name" (a regclass or
# regtype value as its OID, as an oid column of the same data shows it).
ROWS_SQL="
CREATE FUNCTION pg_temp.rows(r regclass) RETURNS SETOF jsonb LANGUAGE plpgsql AS \$\$
BEGIN RETURN QUERY EXECUTE format('SELECT to_jsonb(t) FROM (SELECT %s FROM %s) t', (SELECT string_agg(CASE WHEN a.atttypid IN ('regclass'::regtype, 'regtype'::regtype) THEN format('%I::oid AS %I', a.attname, a.attname) ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = r AND a.attnum > 0 AND NOT a.attisdropped), r); END \$\$;
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
BEGIN RETURN QUERY EXECUTE format('SELECT to_jsonb(t) FROM (SELECT %s FROM %s) t', (SELECT string_agg(CASE WHEN a.atttypid IN ('regclass'::regtype, 'regtype'::regtype) THEN format('%I::oid AS %I', a.attname, a.attname) ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = r AND a.attnum > 0 AND NOT a.attisdropped), r); END \$\$;
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

# privileges_kept VERSION DB PDB: PDB, where test/upgrade/change-privileges.sql
# changed the privileges of every object of VERSION (test/upgrade/acl.sql
# listed them in $tmp/acl-dba0), is updated; each object that is still there
# (same OID) has the privileges it had before, except the objects whose
# privileges the update itself changes (a step in extension/updates/: their
# privileges differ in DB, updated without changes, between $tmp/acl-plain0
# and now), which keep the DBA's grant to a role of their own.  Then pg_dump of PDB restored into a new database gives each of
# these objects the same privileges again (pg_dump writes them against
# pg_init_privs, which the update must leave as they were).
privileges_kept() {
	local v=$1 db=$2 pdb=$3 rdb=$3_restored
	psql_ -At -d "$db" -f "$REPO/test/upgrade/acl.sql" >"$tmp/acl-plain1"
	if ! psql_ -d "$pdb" -c 'ALTER EXTENSION storagelab UPDATE' 2>"$tmp/err"; then
		not_ok "$v with a DBA's privilege changes: ALTER EXTENSION storagelab UPDATE fails"
		sed 's/^/#   /' "$tmp/err"
		return
	fi
	psql_ -At -d "$pdb" -f "$REPO/test/upgrade/acl.sql" >"$tmp/acl-dba1"
	# The identities (after the update) of the objects whose privileges the
	# update changes itself.
	awk -F'|' 'NR == FNR { a[$1] = $3; next } ($1 in a) && a[$1] != $3 { print $2 }' \
		"$tmp/acl-plain0" "$tmp/acl-plain1" >"$tmp/acl-stepped"
	awk -F'|' -v counts="$tmp/acl-counts" '
		FILENAME == ARGV[1] { skip[$0] = 1; next }
		FILENAME == ARGV[2] { before[$1] = $3; next }
		!($1 in before) { next }
		$2 in skip && $3 !~ /(^| )storagelab_upgrade_dba=/ { print $2 ": the grant to storagelab_upgrade_dba is gone (" $3 ")" }
		$2 in skip { s++; next }
		{ n++; print $2 > (counts ".ids") }
		before[$1] != $3 { print $2 ": " before[$1] " before the update, " $3 " after" }
		END { print n + 0, s + 0 > counts }' \
		"$tmp/acl-stepped" "$tmp/acl-dba0" "$tmp/acl-dba1" >"$tmp/acl-changed"
	read -r kept stepped <"$tmp/acl-counts"
	if [ ! -s "$tmp/acl-changed" ] && [ "$kept" -gt 0 ]; then
		ok "$v with a DBA's privilege changes on every object + ALTER EXTENSION UPDATE: the $kept objects still there keep them (the $stepped whose privileges the update changes keep the DBA's grant to a role)"
	else
		not_ok "$v + ALTER EXTENSION UPDATE changes privileges a DBA set ($kept objects compared)"
		sed 's/^/#   /' "$tmp/acl-changed"
	fi
	createdb "$rdb"
	if ! pg_dump -Fc -f "$tmp/privileges.dump" "$pdb" || ! pg_restore --exit-on-error -d "$rdb" "$tmp/privileges.dump"; then
		not_ok "$v with a DBA's privilege changes, updated: pg_dump and pg_restore into an empty database fail"
		return
	fi
	psql_ -At -d "$rdb" -f "$REPO/test/upgrade/acl.sql" >"$tmp/acl-restored"
	awk -F'|' 'FILENAME == ARGV[1] { want[$0] = 1; next }
		FILENAME == ARGV[2] { if ($2 in want) acl[$2] = $3; next }
		($2 in acl) && acl[$2] != $3 { print $2 ": " acl[$2] " in the dumped database, " $3 " restored" }
		($2 in acl) { seen[$2] = 1 }
		END { for (i in acl) if (!(i in seen)) print i ": not restored" }' \
		"$tmp/acl-counts.ids" "$tmp/acl-dba1" "$tmp/acl-restored" >"$tmp/acl-lost"
	if [ ! -s "$tmp/acl-lost" ]; then
		ok "$v with a DBA's privilege changes, updated, then pg_dump and pg_restore: the $kept objects have the same privileges"
	else
		not_ok "$v with a DBA's privilege changes, updated: pg_dump and pg_restore lose them"
		sed 's/^/#   /' "$tmp/acl-lost"
	fi
}

# ---------------------------------------------------------------------------
# A 1.0 online migration under way across the update.  1.0's mode online
# (the shadow-column writer, removed in 1.1) wrote psql files that carry
# their own code: at run time they need of the extension only the table
# storagelab.bigint_migration_progress (its columns and its row security),
# which 1.1 keeps.  A migration begun under 1.0 must finish after ALTER
# EXTENSION storagelab UPDATE: phase expand and one backfill batch run under
# the release, the update, writes through the sync trigger, then the rest
# (backfill, prepare, swap, cleanup) under the current version.  Checked:
# every phase runs, the rows are the same (a checksum by key, taken after the
# writes), the component is bigint, and a key past 2^31 is inserted.  Only
# for releases whose mode online is the shadow writer (1.0).
# ---------------------------------------------------------------------------

# online_start VERSION DB: DB at VERSION with a migration under way (its
# script in $tmp/online.sql).  Nothing for other releases.
online_start() {
	[ "$1" = 1.0 ] || return 0
	createdb "$2"
	psql_ -d "$2" <<-'EOF' >/dev/null
		CREATE EXTENSION storagelab VERSION '1.0';
		CREATE TABLE up_parent (id serial PRIMARY KEY, v text NOT NULL);
		CREATE TABLE up_child (id serial PRIMARY KEY, parent_id int NOT NULL REFERENCES up_parent, n int);
		INSERT INTO up_parent (v) SELECT 'p' || g FROM generate_series(1, 3000) g;
		INSERT INTO up_child (parent_id, n) SELECT 1 + g % 3000, g FROM generate_series(1, 3000) g;
		INSERT INTO storagelab.settings VALUES ('bigint_migration.backfill_batch_time', '0'),
		  ('bigint_migration.backfill_batch_blocks', '2'), ('bigint_migration.backfill_pause', '0');
	EOF
	local rc=0
	{ psql_ -At -d "$2" -c "SELECT storagelab.bigint_migration_script('up_parent', 'id', 'online')" >"$tmp/online.sql" &&
		psql_ -d "$2" -v phase=expand -f "$tmp/online.sql" >"$tmp/online.out" 2>&1 &&
		psql_ -d "$2" -v phase=backfill -v backfill_batches=1 -f "$tmp/online.sql" >>"$tmp/online.out" 2>&1 &&
		[ "$(psql_ -At -d "$2" -c 'SELECT count(*) FILTER (WHERE NOT done) FROM storagelab.bigint_migration_progress')" -gt 0 ]; } || rc=1
	online_ok $rc "$1: an online migration started (phase expand, one backfill batch of two blocks; not done)"
}

# online_finish VERSION DB: after the update, DB's migration finishes.
online_finish() {
	[ "$1" = 1.0 ] || return 0
	local sum rc=0 ph after same=0
	if ! psql_ -d "$2" -c 'ALTER EXTENSION storagelab UPDATE' >>"$tmp/online.out" 2>&1; then
		online_ok 1 "$1: ALTER EXTENSION storagelab UPDATE with an online migration under way"
		return
	fi
	# writes between the phases: through the 1.0 sync trigger, under the new version
	sum=$(psql_ -At -d "$2" <<-'EOF'
		INSERT INTO up_parent (v) SELECT 'new' || g FROM generate_series(1, 20) g;
		INSERT INTO up_child (parent_id, n) SELECT id, -id FROM up_parent WHERE v LIKE 'new%';
		UPDATE up_child SET parent_id = parent_id + 1 WHERE id % 100 = 0;
		DELETE FROM up_child WHERE id % 250 = 0;
		SELECT md5(string_agg(format('%s|%s', id, v), ',' ORDER BY id)) FROM up_parent
		UNION ALL
		SELECT md5(string_agg(format('%s|%s|%s', id, parent_id, n), ',' ORDER BY id)) FROM up_child;
	EOF
	) || sum="the writes failed"
	for ph in backfill prepare swap cleanup; do
		psql_ -d "$2" -v phase=$ph -f "$tmp/online.sql" >>"$tmp/online.out" 2>&1 || { rc=1; break; }
	done
	online_ok $rc "$1: the online migration started under $1 finishes under $EXTVERSION (phases backfill, prepare, swap, cleanup)"
	after=$(psql_ -At -d "$2" <<-'EOF'
		SELECT md5(string_agg(format('%s|%s', id, v), ',' ORDER BY id)) FROM up_parent
		UNION ALL
		SELECT md5(string_agg(format('%s|%s|%s', id, parent_id, n), ',' ORDER BY id)) FROM up_child;
		SELECT string_agg(format('%s.%s %s', attrelid::regclass, attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attrelid::regclass::text, attname)
		  FROM pg_attribute WHERE attrelid IN ('up_parent'::regclass, 'up_child'::regclass) AND attnum > 0 AND NOT attisdropped
		   AND (attname IN ('id', 'parent_id') OR attname LIKE 'storagelab%');
		SELECT setval('up_parent_id_seq', 2147483647);
		INSERT INTO up_parent (v) VALUES ('past 2^31') RETURNING id;
		INSERT INTO up_child (parent_id) SELECT max(id) FROM up_parent RETURNING parent_id;
	EOF
	) || after="failed: $after"
	[ "$after" = "$sum
up_child.id integer, up_child.parent_id bigint, up_parent.id bigint
2147483647
2147483648
2147483648" ] || same=1
	online_ok $same "$1: after it, the same rows, the component bigint, keys past 2^31 inserted"
	[[ "$after" == "$sum"* ]] || printf '#   expected the checksums\n#   %s\n#   got\n#   %s\n' "${sum//$'\n'/ }" "${after//$'\n'/ }"
}

# online_ok STATUS TEXT: ok or not ok, with the phases' output when not.
online_ok() {
	if [ "$1" -eq 0 ]; then
		ok "$2"
	else
		not_ok "$2"
		tail -n 20 "$tmp/online.out" | sed 's/^/#   /'
	fi
}
# --- end of the 1.0 online migration block ---------------------------------

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
		online_start "$v" "${db}_online"
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

		# A second database where a DBA changed the privileges of every
		# object (privileges_kept).
		createdb "$db"_privileges
		psql_ -d "$db"_privileges -c "CREATE EXTENSION storagelab VERSION '$v'"
		psql_ -d "$db"_privileges -o /dev/null -f "$REPO/test/upgrade/change-privileges.sql"
		psql_ -At -d "$db"_privileges -f "$REPO/test/upgrade/acl.sql" >"$tmp/acl-dba0"
		psql_ -At -d "$db" -f "$REPO/test/upgrade/acl.sql" >"$tmp/acl-plain0"

		stage current
		if ! psql_ -d "$db" -c 'ALTER EXTENSION storagelab UPDATE' 2>"$tmp/err"; then
			not_ok "$v: ALTER EXTENSION storagelab UPDATE fails"
			sed 's/^/#   /' "$tmp/err"
			continue
		fi
		online_finish "$v" "${db}_online"
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
		privileges_kept "$v" "$db" "$db"_privileges
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

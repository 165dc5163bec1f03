#!/usr/bin/env bash
# scripts/run-test-file.sh FILE: run one test file of the suites, for prove
# (scripts/run-suites.sh: prove --exec this script).  Prints FILE's TAP.
#
# test/NAME.sql (pgTAP) runs in a database of its own, tap_NAME, made with
# createdb -T from a template that has pgTAP, storagelab and the shared
# fixtures the file loads (STORAGELAB_TAP_TEMPLATES: "fixtures template"
# lines written by run-suites.sh), so that no file depends on another's
# leftovers; the database is dropped afterwards.  The copy uses strategy
# file_copy: about a third of the server CPU of the default wal_log for a
# 34 MB template (doc/design/testing.md).  test/NAME.sh runs as it is.
#
# Fails fast: PGOPTIONS carries a statement_timeout
# (STORAGELAB_STATEMENT_TIMEOUT, seconds) for every session the file opens,
# and the whole file is killed after STORAGELAB_FILE_TIMEOUT seconds, with a
# "not ok" line naming it.  The file's wall time goes to
# $STORAGELAB_TIMES/<FILE with / as ~>.
#
# A fixture that creates roles (cluster-wide: other files' databases see
# them) is used by one file at a time: the file holds an flock per such
# fixture it loads, in name order.
set -uo pipefail
file=$1
: "${STORAGELAB_STATEMENT_TIMEOUT:=300}" "${STORAGELAB_FILE_TIMEOUT:=900}"
export PGOPTIONS="${PGOPTIONS:-} -c statement_timeout=${STORAGELAB_STATEMENT_TIMEOUT}s"
start=$(date +%s%N)

# fixtures_of FILE: the names of the fixtures FILE loads (\i / \ir).
fixtures_of() {
	sed -n 's|^[[:space:]]*\\ir\{0,1\}[[:space:]].*fixtures/\([a-z_]*\)\.sql.*|\1|p' "$1" | sort -u
}

# with_role_locks CMD...: CMD, holding the lock of each role-creating
# fixture that $file loads.
with_role_locks() {
	local f locks=()
	for f in $(fixtures_of "$file"); do
		grep -qiE '^[^-]*CREATE ROLE' "test/fixtures/$f.sql" 2>/dev/null && locks+=("$f")
	done
	if [ ${#locks[@]} -eq 0 ]; then
		"$@"
		return
	fi
	local lockdir=${STORAGELAB_TAP_LOCKS:-/tmp}
	(
		for f in "${locks[@]}"; do
			exec {fd}>"$lockdir/fixture-$f.lock"
			flock "$fd"
		done
		"$@"
	)
}

# template_for FILE: the template database for FILE's fixtures.
template_for() {
	local want
	want=$(fixtures_of "$1" | grep -xE "${STORAGELAB_TEMPLATE_FIXTURES:-pagila|pgbench}" | tr '\n' ' ')
	awk -v want="${want% }" -F'\t' '$1 == want {print $2}' "$STORAGELAB_TAP_TEMPLATES"
}

run_sql() {
	local name db tmpl rc
	name=$(basename "$file" .sql)
	db=tap_$name
	tmpl=$(template_for "$file")
	if [ -z "$tmpl" ]; then
		printf '1..1\nnot ok 1 - %s: no template database for its fixtures\n' "$file"
		return 1
	fi
	dropdb --if-exists --force "$db" 2>/dev/null
	createdb -T "$tmpl" --strategy=file_copy "$db" ||
		{ printf '1..1\nnot ok 1 - %s: createdb -T %s %s failed\n' "$file" "$tmpl" "$db"; return 1; }
	timeout -k 10 "$STORAGELAB_FILE_TIMEOUT" psql --no-psqlrc --no-align --quiet --pset pager=off \
		--pset tuples_only=true --set ON_ERROR_STOP=1 --dbname "$db" --file "$file" 2>&1
	rc=$?
	dropdb --if-exists --force "$db" >/dev/null 2>&1
	return $rc
}

run_sh() {
	timeout -k 10 "$STORAGELAB_FILE_TIMEOUT" bash "$file" 2>&1
}

case "$file" in
*.sql) with_role_locks run_sql ;;
*) with_role_locks run_sh ;;
esac
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "not ok - $file: killed after the per-file limit of $STORAGELAB_FILE_TIMEOUT s (STORAGELAB_FILE_TIMEOUT)"
fi
[ -n "${STORAGELAB_TIMES:-}" ] && echo "$ms" >"$STORAGELAB_TIMES/${file//\//\~}"
exit $rc

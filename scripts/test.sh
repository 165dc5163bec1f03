#!/usr/bin/env bash
# storagelab's test command (README: "make test"; .ci/run runs exactly this).
#
# Installs missing Debian packages, builds with -Werror, stages the
# installation, starts a throwaway cluster and runs both suites in it:
# pg_regress (sql/ + expected/) and pgTAP (test/*.sql through pg_prove).
# Then scripts/upgrade-test.sh (every released version, upgraded with ALTER
# EXTENSION UPDATE, equals a fresh install of this one) and
# scripts/meta-check.py (META.json against the PGXN Meta Spec).
# Prints regression.diffs on failure, exits non-zero on any failure, and
# ends with one line "N passed, M failed" counting all of them
# (", K skipped" appended when tests were skipped).
#
# Environment: PG_MAJOR (default 15).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ensure_packages
build_extension
export SUMMARY=$REPO/.build/summary-$PG_MAJOR
echo "0 passed, 1 failed" > "$SUMMARY"	# if the cluster never starts
rc=0
# STORAGELAB_IN_CLUSTER: a program that runs inside the cluster in the
# suites' stead, given run-suites.sh as its argument (scripts/soak.sh:
# pgbench beside the suites).
with_cluster -- ${STORAGELAB_IN_CLUSTER:+"$STORAGELAB_IN_CLUSTER"} "$REPO/scripts/run-suites.sh" || rc=$?
read -r p f k < <(counts_of "$(cat "$SUMMARY")")

# part CMD...: run one more test script; add the counts of its last line.
part() {
	local out cp cf ck st
	out=$(mktemp)
	set +e
	"$@" 2>&1 | tee "$out"
	st=${PIPESTATUS[0]}
	set -e
	[ "$st" -eq 0 ] || rc=1
	read -r cp cf ck < <(counts_of "$(tail -n 1 "$out")")
	rm -f "$out"
	p=$((p + cp)) f=$((f + cf)) k=$((k + ck))
}
log "upgrade test: every released version to $(extension_version)"
STORAGELAB_BUILT=1 part "$REPO/scripts/upgrade-test.sh"
STORAGELAB_BUILT=1 part "$REPO/scripts/library-mix-test.sh"
log "META.json against the PGXN Meta Spec"
part "$REPO/scripts/meta-check.py"
summary_line "$p" "$f" "$k"
exit $rc

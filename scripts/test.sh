#!/usr/bin/env bash
# storagelab's test command (README: "make test"; .ci/run runs exactly this).
#
# Installs missing Debian packages, builds with -Werror, stages the
# installation, starts a throwaway cluster and runs both suites in it:
# pg_regress (sql/ + expected/), pgTAP (test/*.sql) and the TAP scripts
# (test/*.sh), the last two through prove -j (scripts/run-suites.sh).
# Beside them, scripts/upgrade-test.sh (every released version, upgraded with
# ALTER EXTENSION UPDATE, equals a fresh install of this one; a cluster of its
# own) and scripts/meta-check.py (META.json against the PGXN Meta Spec).
# Ends with the 5 slowest test files and the number of assertions.
# Prints regression.diffs on failure, exits non-zero on any failure, and
# ends with one line "N passed, M failed" counting all of them
# (", K skipped" appended when tests were skipped).
#
# Environment: PG_MAJOR (default 15).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ensure_packages
build_extension
# The major's client programs, not postgresql-common's wrapper (see
# run-suites.sh), for the upgrade and library-mix tests beside the suites too.
export PATH=$PG_BINDIR:$PATH
export SUMMARY=$REPO/.build/summary-$PG_MAJOR
echo "0 passed, 1 failed" > "$SUMMARY"	# if the cluster never starts
rc=0 p=0 f=0 k=0
started=$(date +%s)

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

# part_start NAME CMD...: run CMD (a part) in the background, beside the
# suites, its output kept for part_end.  part_end NAME: wait for it, print
# its output and add its counts, as part does.
declare -A part_pid=()
part_start() {
	local name=$1
	shift
	"$@" >"$REPO/.build/part-$name.log" 2>&1 &
	part_pid[$name]=$!
}
part_end() {
	local st=0
	wait "${part_pid[$1]}" || st=$?
	part cat "$REPO/.build/part-$1.log"
	[ "$st" -eq 0 ] || rc=1
}

# The upgrade test (its own cluster) and the META.json check run beside the
# suites.
STORAGELAB_BUILT=1 part_start upgrade "$REPO/scripts/upgrade-test.sh"
part_start meta "$REPO/scripts/meta-check.py"
# The library-mix test builds the releases in .build/releases as the
# upgrade test does: it starts when the upgrade test has ended.
STORAGELAB_BUILT=1 part_start mix bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done
	exec "$2"' mix "${part_pid[upgrade]}" "$REPO/scripts/library-mix-test.sh"

# STORAGELAB_IN_CLUSTER: a program that runs inside the cluster in the
# suites' stead, given run-suites.sh as its argument (scripts/soak.sh:
# pgbench beside the suites).
with_cluster -- ${STORAGELAB_IN_CLUSTER:+"$STORAGELAB_IN_CLUSTER"} "$REPO/scripts/run-suites.sh" || rc=$?
read -r cp cf ck < <(counts_of "$(cat "$SUMMARY")")
p=$((p + cp)) f=$((f + cf)) k=$((k + ck))

log "upgrade test: every released version to $(extension_version)"
part_end upgrade
log "library mix: each released version's SQL objects with this build's library"
part_end mix
log "META.json against the PGXN Meta Spec"
part_end meta
log "sizes: functions, the generator, duplicates (scripts/size-check.py)"
part "$REPO/scripts/size-check.py"
# More test scripts go here, each as "part CMD..." (after the suites; a
# script that builds the releases as the upgrade test does must not run
# beside it: they share .build/releases), or as part_start NAME CMD... above
# with part_end NAME here when it is independent of the others.

log "the 5 slowest test files (of $(grep -c '' "$REPO/.build/times-$PG_MAJOR" 2>/dev/null || echo 0); all in the log above):"
head -n 5 "$REPO/.build/times-$PG_MAJOR" 2>/dev/null |
	awk -F'\t' '{printf "    %6.1f s  %s\n", $1 / 1000, $2}' >&2 || true	# no times: no run
log "assertions: $((p + f)) ($p passed, $f failed), $k test files skipped; wall time $(($(date +%s) - started)) s"
summary_line "$p" "$f" "$k"
exit $rc

#!/usr/bin/env bash
# Runs inside the throwaway cluster (scripts/test.sh): both test suites,
# then the one summary line.  Not meant to be called directly;
# writes the summary line to $SUMMARY.
set -uo pipefail
cd "$REPO"

. "$REPO/scripts/lib.sh"

# Test fixtures (Pagila, pgbench tables) are loaded by the tests themselves
# through test/fixtures/*.sql.  Pagila is read from ../shared/datasets/pagila
# beside the repository; without it, the tests that load it are skipped,
# each named with the missing folder (the Makefile does the same for
# pg_regress), and counted in the summary's "K skipped".
pagila=$(cd "$REPO/.." && pwd)/shared/datasets/pagila
needs_pagila() { [ ! -f "$pagila/pagila-schema.sql" ] && grep -q 'fixtures/pagila\.sql' "$1"; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Each failing test's output is kept in $FAILURES (one file per test, listed
# in $FAILURES/index as "test<TAB>file") and its first lines are printed at
# the end, so that a log alone (CI) shows why a test failed.
FAILURES=$REPO/.build/failures-${SUMMARY##*/summary-}
rm -rf "$FAILURES"
mkdir -p "$FAILURES"
: >"$FAILURES/index"

# keep_failure TEST FILE: record FILE (in $FAILURES) as TEST's output.
keep_failure() {
	printf '%s\t%s\n' "$1" "$2" >>"$FAILURES/index"
}

# regress_failures DIFFS: one file per failing pg_regress test, its diff.
regress_failures() {
	local name
	for name in $(sed -n 's|^diff .*/results/\(.*\)\.out$|\1|p' "$1"); do
		awk -v want="$name" '/^diff / {on = ($NF ~ ("/results/" want "\\.out$"))} on' \
			"$1" >"$FAILURES/regress-$name.diff"
		keep_failure "sql/$name.sql (pg_regress)" "$FAILURES/regress-$name.diff"
	done
}

# TAP output: TAP::Harness (prove, pg_prove) writes each script's output,
# stderr merged (--merge), to a file of its own under $FAILURES/tap.
export PERL_TEST_HARNESS_DUMP_TAP=$FAILURES/tap

# tap_failures TRANSCRIPT: keep the output of each script that the "Test
# Summary Report" of TRANSCRIPT lists with a failed test, a non-zero exit or
# a parse error (not those with only TODO passes).
tap_failures() {
	local t
	for t in $(awk '/^Test Summary Report/ {s = 1; next}
			s && /^[^ ]+ +\(Wstat: / {f = $1; if ($0 !~ /Wstat: 0 Tests: [0-9]+ Failed: 0\)/) print f; next}
			s && f != "" && /Non-zero|Parse errors|Failed test/ {print f}' "$1" | sort -u); do
		[ -f "$PERL_TEST_HARNESS_DUMP_TAP/$t" ] && keep_failure "$t" "$PERL_TEST_HARNESS_DUMP_TAP/$t"
	done
}

# excerpt FILE: a diff's first 200 lines; a TAP output without its passing
# assertions, and when that is longer than 200 lines (a script that echoes
# its SQL), its failures, diagnostics and errors only, at most 200 lines.
excerpt() {
	case "$1" in
	*.diff)
		head -n 200 "$1"
		[ "$(wc -l <"$1")" -gt 200 ] && echo "(the first 200 lines of $(wc -l <"$1"))"
		return 0
		;;
	esac
	grep -v '^ok [0-9]' "$1" >"$out"
	if [ "$(wc -l <"$out")" -gt 200 ]; then
		echo "(its failures, diagnostics and errors only)"
		grep -E '^(not ok|#|psql:|Dubious|Failed|Bail out|(ERROR|DETAIL|HINT|CONTEXT|LINE [0-9]+|QUERY|WARNING|PANIC|FATAL):)' "$out" |
			head -n 200
	else
		cat "$out"
	fi
}

# pg_regress.  Its result lines are "test name ... ok" (PostgreSQL 15) or
# "ok 1 - name" / "not ok 1 - name" (16 and later).
make -s PG_CONFIG="$PG_CONFIG" installcheck 2>&1 | tee "$out"
regress_rc=${PIPESTATUS[0]}
r_pass=$(grep -cE '\.\.\. ok|^ok [0-9]+ ' "$out" || true)
r_fail=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$out" || true)
skipped=$(grep -c '^skipped: ' "$out" || true)
if [ "$regress_rc" -ne 0 ]; then
	[ -f regression.diffs ] && regress_failures regression.diffs
	[ "$r_fail" -eq 0 ] && r_fail=1
fi

# tap_counts FILE RC: "passed failed" from a prove/pg_prove transcript.
tap_counts() {
	local total failed
	total=$(sed -n 's/.*Tests=\([0-9]*\).*/\1/p' "$1" | tail -1)
	failed=$(sed -n 's/.*Failed: \([0-9]*\)).*/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	total=${total:-0}
	if [ "$2" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
	[ "$failed" -gt "$total" ] && total=$failed
	echo "$((total - failed)) $failed"
}

# pgTAP, in a database of its own; each test file loads its fixtures.
createdb storagelab_tap
psql -X -q -d storagelab_tap -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION storagelab'
# runnable FILE...: RUN becomes the FILEs to run.  STORAGELAB_TAP_EXCLUDE
# (an extended regular expression) leaves out the files whose names match
# (scripts/valgrind.sh's CI scope); a file that loads Pagila while it is
# missing is reported as skipped and counted.
runnable() {
	local f
	RUN=()
	for f in "$@"; do
		[ -e "$f" ] || continue
		if [ -n "${STORAGELAB_TAP_EXCLUDE:-}" ] && grep -qE "$STORAGELAB_TAP_EXCLUDE" <<<"$f"; then
			echo "left out (STORAGELAB_TAP_EXCLUDE): $f"
		elif needs_pagila "$f"; then
			echo "skipped: $f needs $pagila, which is missing"
			skipped=$((skipped + 1))
		else
			RUN+=("$f")
		fi
	done
}
runnable test/*.sql
pg_prove --merge -d storagelab_tap --ext .sql "${RUN[@]}" 2>&1 | tee "$out"
prove_rc=${PIPESTATUS[0]}
read -r t_pass t_fail < <(tap_counts "$out" "$prove_rc")
[ "$t_fail" -gt 0 ] && tap_failures "$out"

# TAP scripts that need more than one server (test/*.sh: the hot standby).
s_pass=0 s_fail=0 sh_rc=0
# STORAGELAB_NO_SCRIPTS=1 leaves them out (scripts/valgrind.sh's CI scope).
if [ -n "${STORAGELAB_NO_SCRIPTS:-}" ]; then
	echo "left out (STORAGELAB_NO_SCRIPTS): test/*.sh"
else
	runnable test/*.sh
	if [ ${#RUN[@]} -gt 0 ]; then
		prove --merge "${RUN[@]}" 2>&1 | tee "$out"
		sh_rc=${PIPESTATUS[0]}
		read -r s_pass s_fail < <(tap_counts "$out" "$sh_rc")
		[ "$s_fail" -gt 0 ] && tap_failures "$out"
	fi
fi
t_pass=$((t_pass + s_pass))
t_fail=$((t_fail + s_fail))
[ "$sh_rc" -ne 0 ] && prove_rc=$sh_rc

# Each failing test's output, bounded, and where the whole of it is kept.
while IFS=$'\t' read -r t file; do
	echo "==== FAILED: $t (the whole output: $file)"
	excerpt "$file"
done <"$FAILURES/index"
echo "pg_regress: $r_pass passed, $r_fail failed; TAP (pgTAP + test/*.sh): $t_pass passed, $t_fail failed; $skipped test files skipped"
# scripts/test.sh prints this as its last line, after the cluster is gone.
summary_line $((r_pass + t_pass)) $((r_fail + t_fail)) "$skipped" > "$SUMMARY"
[ "$regress_rc" -eq 0 ] && [ "$prove_rc" -eq 0 ]

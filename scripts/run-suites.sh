#!/usr/bin/env bash
# Runs inside the throwaway cluster (scripts/test.sh): both test suites,
# then the one summary line.  Not meant to be called directly;
# writes the summary line to $SUMMARY.
set -uo pipefail
cd "$REPO"

. "$REPO/scripts/lib.sh"
# The client programs (psql, createdb, dropdb, pgbench, pg_basebackup) of
# the major under test, run directly: /usr/bin/psql and the others are
# postgresql-common's pg_wrapper, a Perl script that picks the same binary
# (PGVERSION) at about 80 ms of CPU per call, and the suite makes thousands
# of calls (polling loops, one psql per phase of a generated script).
export PATH=$PG_BINDIR:$PATH

# The suite connects through the cluster's Unix socket, trusted: the
# thousands of psql, createdb and dropdb calls of a run skip TCP and the
# SCRAM exchange (about 12 ms of client CPU per connection on the 2-core
# machine).  The files that test TCP clients (pgbench as an application,
# exporters, standbys) name 127.0.0.1 or localhost themselves.  The lines
# are written into the file as it is, keeping its owner and mode.
hba=$(psql -X -Atq -d postgres -c 'SHOW hba_file') &&
	sock=$(psql -X -Atq -d postgres -c 'SHOW unix_socket_directories' | cut -d, -f1) &&
	lines=$(printf 'local all all trust\nlocal replication all trust\n'; cat "$hba") &&
	printf '%s\n' "$lines" >"$hba" &&
	psql -X -Atq -d postgres -c 'SELECT pg_reload_conf()' >/dev/null &&
	export PGHOST=$sock

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
run=${SUMMARY##*/summary-}
FAILURES=$REPO/.build/failures-$run
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

# tap_counts FILE RC: "passed failed" from a prove transcript.
tap_counts() {
	local total failed
	total=$(sed -n 's/.*Tests=\([0-9]*\).*/\1/p' "$1" | tail -1)
	failed=$(sed -n 's/.*Failed: \([0-9]*\)).*/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	total=${total:-0}
	if [ "$2" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
	[ "$failed" -gt "$total" ] && total=$failed
	echo "$((total - failed)) $failed"
}

# runnable FILE...: RUN becomes the FILEs to run.  STORAGELAB_TAP_EXCLUDE
# (an extended regular expression) leaves out the files whose names match
# (scripts/valgrind.sh's CI scope), STORAGELAB_TAP_ONLY keeps only the files
# that match (by hand, to try a few files as the suite runs them); a file that loads Pagila while it is
# missing is reported as skipped and counted.
skipped=0
runnable() {
	local f
	RUN=()
	for f in "$@"; do
		[ -e "$f" ] || continue
		if [ -n "${STORAGELAB_TAP_EXCLUDE:-}" ] && grep -qE "$STORAGELAB_TAP_EXCLUDE" <<<"$f"; then
			echo "left out (STORAGELAB_TAP_EXCLUDE): $f"
		elif [ -n "${STORAGELAB_TAP_ONLY:-}" ] && ! grep -qE "$STORAGELAB_TAP_ONLY" <<<"$f"; then
			: # by hand: STORAGELAB_TAP_ONLY='^test/(a|b)\.' runs only those
		elif needs_pagila "$f"; then
			echo "skipped: $f needs $pagila, which is missing"
			skipped=$((skipped + 1))
		else
			RUN+=("$f")
		fi
	done
}

# Time limits (scripts/run-test-file.sh): a statement_timeout for every
# session of a test file and a limit for the whole file, in seconds, so that
# a hang fails with the file's name.  Generous: a loaded 2-core machine
# meets them many times over.  Off under valgrind (about 55 times slower),
# unless set.
if [[ $SUMMARY == */summary-valgrind-* ]]; then
	: "${STORAGELAB_STATEMENT_TIMEOUT:=0}" "${STORAGELAB_FILE_TIMEOUT:=0}"
fi
export STORAGELAB_STATEMENT_TIMEOUT=${STORAGELAB_STATEMENT_TIMEOUT:-300}
export STORAGELAB_FILE_TIMEOUT=${STORAGELAB_FILE_TIMEOUT:-900}
JOBS=${STORAGELAB_JOBS:-$(nproc)}
TIMES=$REPO/.build/times-$run
export STORAGELAB_TIMES=$FAILURES/times STORAGELAB_TAP_LOCKS=$FAILURES
mkdir -p "$STORAGELAB_TIMES"

# pg_regress, in the background beside the TAP files (its own database,
# contrib_regression).  Its tests run one after the other: they read
# database-wide views (int_overflow, visibility, bytea_storage) in the one
# database pg_regress gives them, so in a parallel group each would see the
# others' tables.  Result lines: "test name ... ok" (PostgreSQL 15) or
# "ok 1 - name" / "not ok 1 - name" (16 and later).
# STORAGELAB_REGRESS (names, space-separated) runs only those of the
# Makefile's REGRESS (scripts/valgrind.sh's CI scope).
regress_out=$FAILURES/regress.log
regress_pid=
[ -n "${STORAGELAB_TEMPLATES_ONLY:-}" ] || {
	(
		s=$(date +%s%N)
		[ "$STORAGELAB_STATEMENT_TIMEOUT" = 0 ] ||
			export PGOPTIONS="${PGOPTIONS:-} -c statement_timeout=${STORAGELAB_STATEMENT_TIMEOUT}s"
		make -s PG_CONFIG="$PG_CONFIG" ${STORAGELAB_REGRESS:+REGRESS="$STORAGELAB_REGRESS"} installcheck >"$regress_out" 2>&1
		echo $? >"$regress_out.rc"
		echo $((($(date +%s%N) - s) / 1000000)) >"$STORAGELAB_TIMES/pg_regress"
	) &
	regress_pid=$!
}

# Template databases for the pgTAP files (scripts/run-test-file.sh): tap_tpl
# with pgTAP and storagelab, and one per combination of the shared fixtures
# (Pagila, the pgbench tables) that files load, made from it.  Each file
# runs in a copy of the template that has what it loads (the fixtures see
# they are loaded and do nothing), so no file sees another's objects.
# template_name FIXTURES...: the template for those fixtures.
template_name() { local IFS=_; echo "tap_tpl${*:+_$*}"; }
# db_exists DB: a template made before (scripts/valgrind.sh makes them with
# the server outside valgrind, STORAGELAB_TEMPLATES_ONLY=1) is used as it is.
db_exists() { [ "$(psql -X -Atq -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$1'")" = 1 ]; }
export STORAGELAB_TAP_TEMPLATES=$FAILURES/templates
: >"$STORAGELAB_TAP_TEMPLATES"
{ db_exists tap_tpl || { createdb tap_tpl &&
	psql -X -q -d tap_tpl -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION storagelab'; }; } &&
	printf '\t%s\n' tap_tpl >>"$STORAGELAB_TAP_TEMPLATES"
runnable test/*.sql
# The fixture combinations the files load (the names run-test-file.sh
# looks for), each built in the background from tap_tpl.
tpl_pids=()
for combo in $(for f in "${RUN[@]}"; do
	sed -n 's#^[[:space:]]*\\ir\{0,1\}[[:space:]].*fixtures/\(pagila\|pgbench\)\.sql.*#\1#p' "$f" |
		sort -u | paste -sd_ -
done | sort -u); do
	(
		db=$(template_name ${combo//_/ })
		{ db_exists "$db" || { createdb -T tap_tpl --strategy=file_copy "$db" &&
			for fx in ${combo//_/ }; do echo "\\i test/fixtures/$fx.sql"; done |
			psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null; }; } &&
			printf '%s\t%s\n' "${combo//_/ }" "$db" >>"$STORAGELAB_TAP_TEMPLATES"
	) &
	tpl_pids+=($!)
done
[ ${#tpl_pids[@]} -eq 0 ] || wait "${tpl_pids[@]}"
[ -z "${STORAGELAB_TEMPLATES_ONLY:-}" ] || exit 0
TAP_FILES=("${RUN[@]}")

# TAP scripts test/*.sh (more than one session or server), unless
# STORAGELAB_NO_SCRIPTS=1 (scripts/valgrind.sh's CI scope).
if [ -n "${STORAGELAB_NO_SCRIPTS:-}" ]; then
	echo "left out (STORAGELAB_NO_SCRIPTS): test/*.sh"
else
	runnable test/*.sh
	TAP_FILES+=("${RUN[@]}")
fi

# The longest files first, so that the last to start are short: by the
# times of the previous run (.build/times-RUN), else by those committed in
# test/times/RUN (a run's .build/times-RUN, copied there: 15 and
# valgrind-15; another major uses 15's), so that a fresh clone starts its
# longest files first too, else (a file new to both) the TAP scripts, then
# the files that load Pagila or pgbench, each group the largest first.
kept=$REPO/test/times/$run
[ -f "$kept" ] || kept=$REPO/test/times/15
ordered=$(for f in "${TAP_FILES[@]}"; do
	t=$(awk -v f="$f" '$2 == f {print $1}' "$TIMES" 2>/dev/null)
	[ -n "$t" ] || t=$(awk -v f="$f" '$2 == f {print $1}' "$kept" 2>/dev/null)
	if [ -z "$t" ]; then
		t=$(wc -c <"$f")
		grep -qE 'fixtures/(pagila|pgbench)\.sql' "$f" && t=$((t + 10000000))
		case $f in *.sh) t=$((t + 20000000)) ;; esac
	fi
	printf '%s\t%s\n' "$t" "$f"
done | sort -k1,1nr -k2 | cut -f2)
mapfile -t TAP_FILES <<<"$ordered"
# A file with a line "-- suite: alone" (or "# suite: alone") runs after the
# others, by itself: it needs the cluster quiet (no other file's CHECKPOINT,
# CREATE or DROP DATABASE between two of its reads).
ALONE=() BESIDE=()
for f in "${TAP_FILES[@]}"; do
	[ -n "$f" ] || continue
	if grep -qE '^(--|#) suite: alone' "$f"; then ALONE+=("$f"); else BESIDE+=("$f"); fi
done

# prove_files JOBS FILE...: run FILEs through run-test-file.sh, JOBS at a
# time; add their counts to t_pass and t_fail, keep their failures.
t_pass=0 t_fail=0 prove_rc=0
prove_files() {
	local jobs=$1 rc p f
	shift
	[ $# -gt 0 ] || return 0
	prove -j "$jobs" --timer --merge --exec "$REPO/scripts/run-test-file.sh" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	read -r p f < <(tap_counts "$out" "$rc")
	[ "$f" -gt 0 ] && tap_failures "$out"
	t_pass=$((t_pass + p)) t_fail=$((t_fail + f))
	[ "$rc" -eq 0 ] || prove_rc=$rc
}

# pgTAP and the TAP scripts together, JOBS files at a time, then the files
# that run alone (after pg_regress too).
prove_files "$JOBS" "${BESIDE[@]}"
wait "$regress_pid"
prove_files 1 "${ALONE[@]}"
cat "$regress_out"
regress_rc=$(cat "$regress_out.rc" 2>/dev/null || echo 1)
r_pass=$(grep -cE '\.\.\. ok|^ok [0-9]+ ' "$regress_out" || true)
r_fail=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$regress_out" || true)
skipped=$((skipped + $(grep -c '^skipped: ' "$regress_out" || true)))
if [ "$regress_rc" -ne 0 ]; then
	[ -f regression.diffs ] && regress_failures regression.diffs
	[ "$r_fail" -eq 0 ] && r_fail=1
fi

# Each file's wall time, the longest first (kept for the next run's order).
for f in "$STORAGELAB_TIMES"/*; do
	[ -f "$f" ] || continue
	n=${f##*/}
	printf '%s\t%s\n' "$(cat "$f")" "${n//\~//}"
done | sort -k1,1nr >"$TIMES"
echo "wall time per test file (ms):"
sed 's/^/    /' "$TIMES"

# Each failing test's output, bounded, and where the whole of it is kept.
while IFS=$'\t' read -r t file; do
	echo "==== FAILED: $t (the whole output: $file)"
	excerpt "$file"
done <"$FAILURES/index"
echo "pg_regress: $r_pass passed, $r_fail failed; TAP (pgTAP + test/*.sh): $t_pass passed, $t_fail failed; $skipped test files skipped"
# scripts/test.sh prints this as its last line, after the cluster is gone.
summary_line $((r_pass + t_pass)) $((r_fail + t_fail)) "$skipped" > "$SUMMARY"
[ "$regress_rc" -eq 0 ] && [ "$prove_rc" -eq 0 ]

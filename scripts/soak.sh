#!/usr/bin/env bash
# scripts/soak.sh N [--load KIND[,KIND...]] [--clients C] [--out DIR]:
# the whole test suite N times in a row, to find the tests that fail by
# chance (CONTRIBUTING.md, "Soak").
#
# Each run is what "make test" runs (scripts/test.sh), with its transcript
# kept in DIR/run-NNN/test.log and each failing test's output (its
# pg_regress diff, its TAP transcript) in DIR/run-NNN/failures/.  Prints one
# line per run, then every test that ever failed with the runs it failed in
# and the files holding its output, then "P passed, F failed" summed over the
# runs, and last "soak: N runs, R failed, ...".  Exits non-zero when a run
# failed.
#
# Load beside the suite (default none; KINDs combine, e.g. pgbench,cpu):
#   pgbench          pgbench in another database of the suite's own
#                    throwaway cluster
#   pgbench-cluster  pgbench against a separate throwaway cluster, for all
#                    the runs
#   cpu              a busy loop on every core
# --clients C: pgbench clients (default 2).  --out DIR: where the runs are
# kept (default .build/soak-MAJOR-TIME in the clone).
#
# Environment: PG_MAJOR (default 15).  Inside the 17/18 chroots:
#   STORAGELAB_MATRIX_COMMAND='scripts/soak.sh 10 --load pgbench' scripts/matrix.sh 17
set -uo pipefail
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '2,3p' "$0" | sed 's/^# //' >&2
	exit 2
}

# Inside the suite's cluster (scripts/test.sh's STORAGELAB_IN_CLUSTER, set
# below): pgbench in a database of its own while the suites ("$@") run.
if [ -n "${STORAGELAB_SOAK_CLIENTS:-}" ]; then
	createdb soak_load && "$PG_BINDIR/pgbench" -q -i -s 1 soak_load >/dev/null 2>&1 ||
		log "could not set up pgbench in the suite's cluster"
	"$PG_BINDIR/pgbench" -n -c "$STORAGELAB_SOAK_CLIENTS" -j 1 -T 86400 soak_load >/dev/null 2>&1 &
	bench=$!
	rc=0
	"$@" || rc=$?
	kill "$bench" 2>/dev/null
	wait "$bench" 2>/dev/null
	exit $rc
fi

runs=${1:-}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || usage
shift
load=none clients=2 out=
while [ $# -gt 0 ]; do
	case "$1" in
	--load) load=${2:-}; shift 2 || usage ;;
	--load=*) load=${1#--load=}; shift ;;
	--clients) clients=${2:-}; shift 2 || usage ;;
	--clients=*) clients=${1#--clients=}; shift ;;
	--out) out=${2:-}; shift 2 || usage ;;
	--out=*) out=${1#--out=}; shift ;;
	*) usage ;;
	esac
done
[[ "$clients" =~ ^[1-9][0-9]*$ ]] || usage
same_cluster= apart_cluster= cpu=
for k in ${load//,/ }; do
	case "$k" in
	none) ;;
	pgbench) same_cluster=1 ;;
	pgbench-cluster) apart_cluster=1 ;;
	cpu) cpu=1 ;;
	*)
		log "unknown load $k (none, pgbench, pgbench-cluster, cpu)"
		exit 2
		;;
	esac
done
out=${out:-$REPO/.build/soak-$PG_MAJOR-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The load's processes and the file that tells the separate cluster's
# pgbench to stop; all ended on exit, by pid.
load_pids=()
stop_file=$out/stop-load
stop_load() {
	touch "$stop_file"
	[ ${#load_pids[@]} -gt 0 ] && kill "${load_pids[@]}" 2>/dev/null
	[ -n "${apart_pid:-}" ] && wait "$apart_pid" 2>/dev/null
	load_pids=()
	apart_pid=
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$cpu" ]; then
	for _ in $(seq "$(nproc)"); do
		(while :; do :; done) &
		load_pids+=($!)
	done
fi
if [ -n "$apart_cluster" ]; then
	rm -f "$stop_file"
	# pg_virtualenv drops its cluster when the command ends: pgbench is
	# stopped by the stop file, not by killing the cluster's owner.
	with_cluster -- bash -c '"$1/pgbench" -q -i -s 5 >/dev/null 2>&1 || exit 1
		"$1/pgbench" -n -c "$2" -j 1 -T 86400 >/dev/null 2>&1 &
		while [ ! -e "$3" ] && kill -0 $! 2>/dev/null; do sleep 1; done
		kill $! 2>/dev/null; wait' _ "$PG_BINDIR" "$clients" "$stop_file" \
		>"$out/pgbench-cluster.log" 2>&1 &
	apart_pid=$!
fi

# The commit under test, also where git is not installed (the chroots).
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) || {
	ref=$(sed -n 's/^ref: //p' "$REPO/.git/HEAD" 2>/dev/null)
	commit=$(cat "$REPO/.git/${ref:-HEAD}" 2>/dev/null ||
		awk -v r="$ref" '$2 == r {print $1}' "$REPO/.git/packed-refs" 2>/dev/null)
	commit=${commit:0:7}
	commit=${commit:-unknown}
}
echo "soak: $runs runs of the suite, PostgreSQL $PG_MAJOR, commit $commit, load: $load" \
	"(pgbench clients: $clients), $(nproc) cores, $(hostname), started $(date -u '+%F %T') UTC;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg); runs kept in $out"

# suite_once LOG: one run of the suite (scripts/test.sh), its transcript in
# LOG; with pgbench in its cluster, this script runs the suites there.
suite_once() {
	if [ -n "$same_cluster" ]; then
		STORAGELAB_IN_CLUSTER=$REPO/scripts/soak.sh STORAGELAB_SOAK_CLIENTS=$clients \
			"$REPO/scripts/test.sh" >"$1" 2>&1
	else
		"$REPO/scripts/test.sh" >"$1" 2>&1
	fi
}

failed_runs=0 all_pass=0 all_fail=0 all_skip=0
declare -A failed_in=()	# test -> " N N ..." (the runs it failed in)
for i in $(seq "$runs"); do
	dir=$out/run-$(printf %03d "$i")
	mkdir -p "$dir"
	start=$(date +%s)
	rc=0
	suite_once "$dir/test.log" || rc=$?
	counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$dir/test.log" | tail -1)
	counts=${counts:-0 passed, 1 failed}
	p=${counts%% passed*}
	f=${counts#*, }
	f=${f%% failed*}
	k=0
	[[ $counts == *skipped ]] && { k=${counts##*failed, }; k=${k%% skipped}; }
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	all_pass=$((all_pass + p))
	all_fail=$((all_fail + f))
	all_skip=$((all_skip + k))
	which=
	if [ "$f" -gt 0 ]; then
		failed_runs=$((failed_runs + 1))
		src=$REPO/.build/failures-$PG_MAJOR
		if [ -s "$src/index" ]; then
			mkdir -p "$dir/failures"
			while IFS=$'\t' read -r t file; do
				copy=$dir/failures/${file##*/}
				[[ $copy == *.diff ]] || copy=$copy.tap
				cp "$file" "$copy"
				printf '%s\t%s\n' "$t" "$copy" >>"$dir/failures/index"
				failed_in[$t]+=" $i"
				which="$which, $t"
			done <"$src/index"
		else
			failed_in["(no test named: the run itself failed, see its test.log)"]+=" $i"
		fi
	fi
	skips=
	[ "$k" -gt 0 ] && skips=", $k skipped"
	echo "run $i/$runs: $p passed, $f failed$skips in $(($(date +%s) - start)) s${which:+: ${which#, }}"
done
stop_load

if [ ${#failed_in[@]} -gt 0 ]; then
	echo
	echo "tests that failed (each failure's output is in the files listed):"
	for t in "${!failed_in[@]}"; do
		echo "  $t: failed in run(s)${failed_in[$t]}"
		for i in ${failed_in[$t]}; do
			dir=$out/run-$(printf %03d "$i")
			file=$(awk -F'\t' -v t="$t" '$1 == t {print $2}' "$dir/failures/index" 2>/dev/null)
			echo "    ${file:-$dir/test.log}"
		done
	done
fi
echo
if [ "$all_skip" -gt 0 ]; then
	echo "$all_pass passed, $all_fail failed, $all_skip skipped"
else
	echo "$all_pass passed, $all_fail failed"
fi
echo "soak: $runs runs, $failed_runs failed ($all_fail failed tests in all; PostgreSQL $PG_MAJOR," \
	"load: $load, finished $(date -u '+%F %T') UTC)"
[ "$failed_runs" -eq 0 ]

#!/usr/bin/env bash
# scripts/valgrind.sh: the test suites (pg_regress + pgTAP, as "make test"
# runs them) against a server whose every process runs under valgrind's
# memcheck.  CONTRIBUTING.md: "make valgrind".
#
# The server is started directly (not through pg_virtualenv, which cannot
# wrap postgres in valgrind) as user postgres in a throwaway data directory,
# with --trace-children=yes and PostgreSQL's own suppression file
# (src/tools/valgrind.supp).  Debian ships that file only in the postgresql-N
# source package: it is fetched once with "apt-get source" (a private apt
# configuration; the host's is not touched) and cached in
# $STORAGELAB_CACHE/valgrind (default /var/cache/storagelab/valgrind).
# scripts/valgrind.supp restates two of its entries for Debian's binaries,
# whose static functions have no symbols (see that file).
#
# Prints each valgrind error report, then the suites' "N passed, M failed"
# line with the valgrind errors counted as failures:
#   valgrind: E errors in P processes
#   N passed, M failed
# Exits non-zero on a test failure or any valgrind error.  Logs are kept in
# .build/valgrind-N/.  Environment: PG_MAJOR (default 15),
# STORAGELAB_VALGRIND_SUPP (a suppression file to use instead of
# PostgreSQL's), STORAGELAB_VALGRIND_ORIGINS=no (no --track-origins: faster,
# what CI runs), STORAGELAB_VALGRIND_SCOPE: "all" (default: every suite) or
# "c" (what CI runs: pg_regress and the pgTAP files below, which run
# storagelab's C functions on every line and branch of src/*.c that the
# pgTAP files reach, as gcov measured; the TAP scripts test/*.sh are left
# out; doc/design/testing.md, "Valgrind's scope", has the rule and how to
# check it again when tests change).
VALGRIND_C_FILES="bad_input|column_waste|column_waste_evidence|column_waste_rules|findings"
VALGRIND_C_FILES+="|findings_partitions|heap_visibility|int_overflow|int_overflow_functions"
VALGRIND_C_FILES+="|int_overflow_index_ends|int_overflow_sessions|output_width|read_stream"
VALGRIND_C_FILES+="|result_check|security_search_path|table_rewrite_plan|toast_profile"
VALGRIND_C_FILES+="|toast_script_types|toast_sessions|report_html"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CACHE=${STORAGELAB_CACHE:-/var/cache/storagelab}/valgrind
LOGS=$REPO/.build/valgrind-$PG_MAJOR

# suppressions: print the path of PostgreSQL's valgrind.supp for PG_MAJOR,
# fetching and caching it when needed; nothing when it cannot be had.
suppressions() {
	local supp=$CACHE/valgrind-$PG_MAJOR.supp tmp
	if [ -n "${STORAGELAB_VALGRIND_SUPP:-}" ]; then
		echo "$STORAGELAB_VALGRIND_SUPP"
		return 0
	fi
	if [ ! -s "$supp" ]; then
		mkdir -p "$CACHE"
		tmp=$(mktemp -d)
		# deb-src lines for the suites and mirrors the host's apt uses.
		apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
			sort -u | awk '{print "deb-src", $1, $2, "main"}' >"$tmp/sources.list"
		mkdir -p "$tmp/lists/partial"
		local apt=(apt-get -qq -o Dir::Etc::SourceList="$tmp/sources.list"
			-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$tmp/lists"
			-o APT::Sandbox::User=root)
		log "fetching postgresql-$PG_MAJOR's source for its valgrind.supp"
		"${apt[@]}" update >/dev/null 2>&1 || true
		# The newest source first, else that of each suite in turn (a
		# mirror may lack the security suite's sources), else the previous
		# major's (a pre-release's source may be missing; the file seldom
		# changes between majors).
		local rel pkg
		for pkg in "postgresql-$PG_MAJOR" "postgresql-$((PG_MAJOR - 1))"; do
			for rel in "" $(awk '{print $3}' "$tmp/sources.list"); do
				(cd "$tmp" && "${apt[@]}" source --download-only \
					"$pkg${rel:+/$rel}" >/dev/null 2>&1) || true
				if tar -xOf "$tmp"/postgresql-*.orig.tar.* --wildcards \
					'*/src/tools/valgrind.supp' >"$supp.tmp" 2>/dev/null &&
					[ -s "$supp.tmp" ]; then
					mv "$supp.tmp" "$supp"
					[ "$pkg" = "postgresql-$PG_MAJOR" ] ||
						log "using $pkg's valgrind.supp for PostgreSQL $PG_MAJOR"
					break 2
				fi
				rm -f "$tmp"/postgresql-*
			done
		done
		rm -rf "$tmp" "$supp.tmp"
	fi
	[ -s "$supp" ] && echo "$supp"
	return 0
}

ensure_packages
# bzip2 and xz-utils unpack the source package (for valgrind.supp).
vg_missing=()
for p in valgrind bzip2 xz-utils; do
	installed "$p" || vg_missing+=("$p")
done
if [ ${#vg_missing[@]} -gt 0 ]; then
	log "installing: ${vg_missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${vg_missing[@]}" >/dev/null
fi
build_extension
supp=$(suppressions)
[ -n "$supp" ] || log "no valgrind.supp for PostgreSQL $PG_MAJOR: running without suppressions"

dir=$(mktemp -d /tmp/storagelab-valgrind.XXXXXX)
rm -rf "$LOGS"
mkdir -p "$LOGS" "$dir/vg"
chown -R postgres: "$dir" "$LOGS"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -n -u postgres "$@"; fi; }

cleanup() {
	if [ -f "$dir/data/postmaster.pid" ]; then
		as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" stop -m immediate -w -t 60 >/dev/null 2>&1 || true
	fi
	cp "$dir"/vg/*.log "$LOGS"/ 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

as_pg "$PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync \
	--locale=C.UTF-8 >"$LOGS/initdb.log" 2>&1
{
	echo "listen_addresses = ''"
	echo "unix_socket_directories = '$dir'"
	echo "port = $(free_port)"
	# JIT compiling under valgrind costs minutes and tests nothing of ours.
	echo "jit = off"
	echo "fsync = off"
	echo "logging_collector = off"
	stage_settings | sed "s/=\(.*\)/ = '\1'/"
} >>"$dir/data/postgresql.conf"
port=$(sed -n 's/^port = //p' "$dir/data/postgresql.conf")

# valgrind runs as postgres: its suppression files are copied where that
# user can read them (the clone may be private to its owner).
cp "$REPO/scripts/valgrind.supp" "$dir/storagelab.supp"
[ -n "$supp" ] && cp "$supp" "$dir/postgresql.supp"
chmod a+r "$dir"/*.supp
# --track-origins=yes says where an uninitialised value came from; it finds
# no more errors and makes memcheck much slower (CI leaves it out:
# STORAGELAB_VALGRIND_ORIGINS=no; rerun a failure with it to read where).
vg=(valgrind --trace-children=yes --track-origins="${STORAGELAB_VALGRIND_ORIGINS:-yes}" --leak-check=no
	--num-callers=30 --error-limit=no --log-file="$dir/vg/%p.log"
	--suppressions="$dir/storagelab.supp")
[ -n "$supp" ] && vg+=(--suppressions="$dir/postgresql.supp")
case "${STORAGELAB_VALGRIND_SCOPE:-all}" in
all) ;;
c)
	export STORAGELAB_TAP_ONLY="^test/($VALGRIND_C_FILES)\\.sql\$" STORAGELAB_NO_SCRIPTS=1
	log "scope c: pg_regress; pgTAP ${VALGRIND_C_FILES//|/, } (doc/design/testing.md: the other pgTAP files reach no line or branch of src/*.c that these do not)"
	;;
*)
	log "STORAGELAB_VALGRIND_SCOPE must be all or c"
	exit 2
	;;
esac
export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
export SUMMARY=$REPO/.build/summary-valgrind-$PG_MAJOR
echo "0 passed, 1 failed" >"$SUMMARY"

# The template databases (pgTAP, storagelab, Pagila, pgbench) are made
# first, with the server outside valgrind: loading them runs SQL, no
# storagelab C function, and under valgrind it took minutes.
log "making the template databases (server outside valgrind)"
as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$LOGS/server-templates.log" start -w -t 120 >/dev/null
STORAGELAB_TEMPLATES_ONLY=1 "$REPO/scripts/run-suites.sh" >"$LOGS/templates.log" 2>&1 ||
	{ cat "$LOGS/templates.log"; log "the template databases could not be made"; exit 1; }
as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" stop -m fast -w -t 120 >/dev/null

log "starting PostgreSQL $PG_MAJOR under valgrind (slow)"
as_pg "${vg[@]}" "$PG_BINDIR/postgres" -D "$dir/data" >"$LOGS/server.log" 2>&1 &
for _ in $(seq 600); do
	"$PG_BINDIR/pg_isready" -q -h "$dir" -p "$port" && break
	sleep 1
done
"$PG_BINDIR/pg_isready" -q -h "$dir" -p "$port" || {
	log "the server did not start under valgrind; see $LOGS/server.log"
	exit 1
}

rc=0
"$REPO/scripts/run-suites.sh" || rc=$?
as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" stop -m fast -w -t 600 >/dev/null || rc=1
cp "$dir"/vg/*.log "$LOGS"/

# A process's log holds its error reports; "ERROR SUMMARY: 0" when clean.
errors=0
with_errors=0
for f in "$LOGS"/[0-9]*.log; do
	n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$f" | tail -1)
	if [ "${n:-0}" -gt 0 ]; then
		errors=$((errors + n))
		with_errors=$((with_errors + 1))
		cat "$f"
	fi
done
nproc_logs=$(find "$LOGS" -name '[0-9]*.log' | wc -l)
echo "valgrind: $errors errors in $with_errors of $nproc_logs server processes (logs: $LOGS)"
[ "$errors" -eq 0 ] || [ "${STORAGELAB_VALGRIND_ORIGINS:-yes}" != no ] ||
	echo "valgrind: run again without STORAGELAB_VALGRIND_ORIGINS=no to see where each uninitialised value came from"
read -r p _ f _ <"$SUMMARY"
[ "$errors" -gt 0 ] && rc=1
echo "$p passed, $((f + with_errors)) failed"
exit $rc

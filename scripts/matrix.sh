#!/usr/bin/env bash
# scripts/matrix.sh [MAJOR ...]: the test suite on every PostgreSQL major
# Debian ships (CONTRIBUTING.md: "make matrix"; no argument = all of 15 17 18 19).
#
#   15  bookworm (the host): scripts/test.sh, as "make test" runs it
#   17  trixie               )
#   18  sid                  ) PG_MAJOR=N scripts/test.sh inside a debootstrap
#   19  experimental         ) chroot of that suite (19 is a pre-release)
#
# Each chroot is built once (debootstrap + that suite's postgresql-N,
# postgresql-server-dev-N, postgresql-N-pgtap, pg_prove, make, gcc, python3,
# and postgresql-N-toastinfo and postgresql-N-plpgsql-check where the suite
# has them) and cached outside the clone in $STORAGELAB_CHROOTS (default
# /var/cache/storagelab/chroots/<suite>);
# "rm -rf" a directory there to rebuild it.  The "experimental" chroot is sid
# with the experimental suite pinned for PostgreSQL 19's packages.
#
# The repository's parent directory is bind-mounted at the same path inside
# the chroot (so ../shared/datasets works), with /proc, /sys, /dev, /dev/pts
# and /dev/shm; every mount is undone on exit, also on failure or ^C.
#
# Prints one line per major and, last, "N passed, M failed" summing them all;
# exits non-zero when any major fails.  Needs root (debootstrap, chroot,
# mount).  Environment: STORAGELAB_CHROOTS, STORAGELAB_MIRROR (default: the
# host's Debian mirror), STORAGELAB_MATRIX_REFRESH=1 (apt-get upgrade each
# chroot before its run), STORAGELAB_MATRIX_COMMAND (what runs for each
# major instead of scripts/test.sh, e.g. scripts/valgrind.sh),
# STORAGELAB_PRERELEASE_ADVISORY=1 (19's test failures are reported but not
# counted; a 19 that does not build or run still fails).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PARENT=$(dirname "$REPO")
CHROOTS=${STORAGELAB_CHROOTS:-/var/cache/storagelab/chroots}
ALL_MAJORS="15 17 18 19"
# What runs for each major, from the repository's top directory.
COMMAND=${STORAGELAB_MATRIX_COMMAND:-scripts/test.sh}

log() { printf '==> %s\n' "$*" >&2; }

# host_mirror: the Debian mirror the host's apt uses (deb822 or one-line
# format), http://deb.debian.org/debian when none is found.
host_mirror() {
	local m
	m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$m" ] || m=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)\/\?[[:space:]].*/\2/p' \
		/etc/apt/sources.list 2>/dev/null | head -1)
	echo "${m:-http://deb.debian.org/debian}"
}
MIRROR=${STORAGELAB_MIRROR:-$(host_mirror)}

# suite_of MAJOR: the chroot (named after its Debian suite) for MAJOR.
suite_of() {
	case "$1" in
	17) echo trixie ;;
	18) echo sid ;;
	19) echo experimental ;;
	*) return 1 ;;
	esac
}

# in_root ROOT CMD...: run CMD in the chroot with a clean environment and
# without the chroot's lock (a server left running must not hold it).
LOCK_FD=
in_root() {
	local root=$1
	shift
	if [ -n "$LOCK_FD" ]; then
		chroot "$root" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
			DEBIAN_FRONTEND=noninteractive "$@" {LOCK_FD}>&-
	else
		chroot "$root" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
			DEBIAN_FRONTEND=noninteractive "$@"
	fi
}

# Mounts made by this run, undone (in reverse) by unmount_all on exit.
MOUNTS=()

mount_into() {	# mount_into TARGET MOUNT-ARGS...
	local target=$1
	shift
	mkdir -p "$target"
	mount "$@" "$target" || return 1
	MOUNTS+=("$target")
}

unmount_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" ||
			log "could not unmount ${MOUNTS[i]}"
	done
	MOUNTS=()
}

# stop_root_processes ROOT: processes left running inside ROOT (a cluster of
# an interrupted run) would keep its mounts busy; end them, by pid.
stop_root_processes() {
	local root=$1 p pids=()
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -eq 0 ] && return 0
	log "stopping processes left in $root: ${pids[*]}"
	kill -QUIT "${pids[@]}" 2>/dev/null	# postgres: immediate shutdown
	sleep 2
	kill -KILL "${pids[@]}" 2>/dev/null
	return 0
}

# recover_root ROOT: undo what a run killed outright (SIGKILL) left behind
# in ROOT, processes and mounts.  Called with ROOT's lock held.
recover_root() {
	local root=$1 m stale=()
	stop_root_processes "$root"
	while read -r m; do
		stale+=("$m")
	done < <(awk -v r="$root" '$5 == r || index($5, r "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
	[ ${#stale[@]} -eq 0 ] && return 0
	log "unmounting what an interrupted run left in $root"
	for m in "${stale[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}

# The chroot in use; cleanup (on any exit of this script, also ^C, SIGTERM
# and SIGHUP) stops what runs in it and undoes its mounts.
CURRENT_ROOT=
cleanup() {
	trap '' PIPE	# the terminal or a pipe reading our output may be gone
	if [ -n "$CURRENT_ROOT" ]; then
		stop_root_processes "$CURRENT_ROOT"
		CURRENT_ROOT=
	fi
	unmount_all
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# mount_root ROOT: the mounts a test run needs inside ROOT.
mount_root() {
	local root=$1
	mount_into "$root/proc" -t proc proc &&
		mount_into "$root/sys" --bind /sys &&
		mount_into "$root/dev" --bind /dev &&
		mount_into "$root/dev/pts" --bind /dev/pts &&
		mount_into "$root/dev/shm" --bind /dev/shm &&
		mount_parent "$root" &&
		cp /etc/resolv.conf "$root/etc/resolv.conf"
}

# mount_parent ROOT: the repository's parent directory at the same path
# inside ROOT.  When that parent is / or a system directory the chroot needs
# its own of (a clone in /var/repo), the clone and ../shared are mounted
# instead.
mount_parent() {
	local root=$1
	case "$PARENT" in
	/ | /bin | /boot | /dev | /etc | /lib | /lib64 | /proc | /run | /sbin | /sys | /usr | /var) ;;
	*)
		mount_into "$root$PARENT" --bind "$PARENT"
		return
		;;
	esac
	mount_into "$root$REPO" --bind "$REPO" || return 1
	[ -d "${PARENT%/}/shared" ] || return 0
	mount_into "$root${PARENT%/}/shared" --bind "${PARENT%/}/shared"
}

# provision_root SUITE ROOT MAJOR BASE: install the test dependencies into
# the mounted ROOT.
provision_root() {
	local suite=$1 tmp=$2 major=$3 base=$4 pgtap_from_source=
	local want="make gcc libc6-dev postgresql-common postgresql-$major
		postgresql-server-dev-$major libtap-parser-sourcehandler-pgtap-perl python3"
	in_root "$tmp" apt-get update -qq || return 1
	# pgTAP: the suite's package, else built from the suite's Debian
	# source package (experimental has no postgresql-19-pgtap).
	if in_root "$tmp" apt-cache policy "postgresql-$major-pgtap" |
		grep 'Candidate: [0-9]' >/dev/null; then
		want="$want postgresql-$major-pgtap"
	else
		log "$suite has no postgresql-$major-pgtap: building pgTAP from source"
		echo "deb-src $MIRROR $base main" >>"$tmp/etc/apt/sources.list"
		in_root "$tmp" apt-get update -qq || return 1
		want="$want dpkg-dev"
		pgtap_from_source=1
	fi
	# shellcheck disable=SC2086
	in_root "$tmp" apt-get install -y -qq --no-install-recommends $want \
		>"$tmp.apt.log" 2>&1 || {
		tail -n 30 "$tmp.apt.log" >&2
		return 1
	}
	if [ -n "$pgtap_from_source" ]; then
		# Only the upstream tarball is needed (some mirrors serve no
		# .dsc), so apt-get source only downloads.
		in_root "$tmp" bash -ec 'rm -rf /usr/src/pgtap && mkdir /usr/src/pgtap
			cd /usr/src/pgtap && { apt-get source --download-only -qq pgtap || true; }
			tar xf pgtap_*.orig.tar.*
			cd pgtap-*/ && make -s PG_CONFIG="$1" && make -s PG_CONFIG="$1" install' \
			_ "/usr/lib/postgresql/$major/bin/pg_config" >>"$tmp.apt.log" 2>&1 || {
			tail -n 30 "$tmp.apt.log" >&2
			return 1
		}
	fi
	# Optional test packages (toastinfo: an oracle; plpgsql_check: the
	# generated INT->BIGINT scripts' function check): the tests skip
	# what needs them where the suite has none for this major.
	local opt
	for opt in toastinfo plpgsql-check; do
		if in_root "$tmp" apt-cache policy "postgresql-$major-$opt" |
			grep 'Candidate: [0-9]' >/dev/null; then
			in_root "$tmp" apt-get install -y -qq --no-install-recommends \
				"postgresql-$major-$opt" >>"$tmp.apt.log" 2>&1 || return 1
		else
			log "$suite has no postgresql-$major-$opt: the tests that need it skip"
		fi
	done
	in_root "$tmp" apt-get clean
}

# create_root SUITE ROOT: debootstrap ROOT and install the test dependencies
# of PostgreSQL MAJOR into it.  Built in ROOT.partial, renamed when complete,
# so an interrupted build is never mistaken for a cached chroot.
create_root() {
	local suite=$1 root=$2 major=$3 base=$1 tmp=$2.partial
	[ "$suite" = experimental ] && base=sid
	command -v debootstrap >/dev/null ||
		apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
		return 1
	if [ ! -x "$tmp/usr/bin/apt-get" ] || [ ! -f "$tmp/.debootstrap-done" ]; then
		rm -rf "$tmp"
		log "debootstrap $base into $tmp (from $MIRROR)"
		debootstrap --variant=minbase "$base" "$tmp" "$MIRROR" >"$tmp.log" 2>&1 || {
			tail -n 20 "$tmp.log" >&2
			return 1
		}
		touch "$tmp/.debootstrap-done"
	fi

	# Never start services inside the chroot (a postgresql package would
	# start a cluster on the host's port 5432), and no default cluster.
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	mkdir -p "$tmp/etc/postgresql-common/createcluster.d"
	echo 'create_main_cluster = false' >"$tmp/etc/postgresql-common/createcluster.d/storagelab.conf"
	echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99storagelab"
	echo "deb $MIRROR $base main" >"$tmp/etc/apt/sources.list"
	if [ "$suite" = experimental ]; then
		echo "deb $MIRROR experimental main" >>"$tmp/etc/apt/sources.list"
		# experimental is never chosen by default; only PostgreSQL 19's
		# packages (and the libpq they need) come from it.
		cat >"$tmp/etc/apt/preferences.d/storagelab" <<-EOF
			Package: postgresql-$major postgresql-$major-* postgresql-client-$major postgresql-server-dev-$major postgresql-plpython3-$major postgresql-plperl-$major postgresql-pltcl-$major libpq5 libpq-dev
			Pin: release a=experimental
			Pin-Priority: 500
		EOF
	fi

	CURRENT_ROOT=$tmp
	local rc=0
	recover_root "$tmp"
	if mount_root "$tmp"; then
		provision_root "$suite" "$tmp" "$major" "$base" || rc=1
	else
		rc=1
	fi
	stop_root_processes "$tmp"
	CURRENT_ROOT=
	unmount_all
	[ "$rc" = 0 ] || return 1
	mv "$tmp" "$root"
	rm -f "$tmp.log" "$tmp.apt.log"
}

# run_major MAJOR: run the suite for one major; prints its summary line
# "PG N (...): X passed, Y failed ..." on stdout.
TOTAL_PASS=0
TOTAL_FAIL=0
TOTAL_SKIP=0
SUMMARIES=()
run_major() {
	local major=$1 suite root out rc=0 start cold="warm" counts where ver
	start=$(date +%s)
	out=$(mktemp)
	if [ "$major" = 15 ]; then
		where="bookworm, host"
		(cd "$REPO" && PG_MAJOR=15 $COMMAND) 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		ver=$(/usr/lib/postgresql/15/bin/postgres -V 2>/dev/null | awk '{print $3}')
	elif suite=$(suite_of "$major"); then
		where=$suite
		root=$CHROOTS/$suite
		mkdir -p "$CHROOTS"
		exec {LOCK_FD}>"$CHROOTS/$suite.lock"
		if ! flock -n "$LOCK_FD"; then
			log "waiting for another run using $root"
			flock "$LOCK_FD"
		fi
		if [ ! -x "$root/usr/bin/apt-get" ]; then
			cold="cold: chroot built"
			create_root "$suite" "$root" "$major" || rc=1
		fi
		if [ "$rc" = 0 ]; then
			CURRENT_ROOT=$root
			recover_root "$root"
			if mount_root "$root"; then
				if [ "${STORAGELAB_MATRIX_REFRESH:-}" = 1 ]; then
					in_root "$root" apt-get update -qq &&
						in_root "$root" apt-get upgrade -y -qq >/dev/null || rc=1
				fi
				if [ "$rc" = 0 ]; then
					in_root "$root" bash -c 'cd "$1" && PG_MAJOR="$2" $3' \
						_ "$REPO" "$major" "$COMMAND" 2>&1 | tee "$out"
					rc=${PIPESTATUS[0]}
				fi
			else
				rc=1
			fi
			stop_root_processes "$root"
			CURRENT_ROOT=
			unmount_all
			ver=$(chroot "$root" "/usr/lib/postgresql/$major/bin/postgres" -V 2>/dev/null |
				awk '{print $3}')
		fi
		exec {LOCK_FD}>&-
		LOCK_FD=
	else
		log "unsupported major $major (supported: $ALL_MAJORS)"
		where="unsupported"
		rc=1
	fi
	counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$out" | tail -1)
	rm -f "$out"
	[ -n "$counts" ] || counts="0 passed, 1 failed"
	local p f k=0
	p=${counts%% passed*}
	f=${counts#*, }
	f=${f%% failed*}
	[[ $counts == *skipped ]] && { k=${counts##*failed, }; k=${k%% skipped}; }
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	local tag=""
	[ "$major" = 19 ] && tag=", pre-release"
	# With STORAGELAB_PRERELEASE_ADVISORY=1 (CI), a pre-release major's test
	# failures are reported on its line but not counted; it must still
	# build and run its tests (no test run at all counts as a failure).
	if [ "${STORAGELAB_PRERELEASE_ADVISORY:-}" = 1 ] && [ "$major" = 19 ] && [ "$p" -gt 0 ]; then
		tag="$tag; reported, not counted"
	else
		TOTAL_PASS=$((TOTAL_PASS + p))
		TOTAL_FAIL=$((TOTAL_FAIL + f))
		TOTAL_SKIP=$((TOTAL_SKIP + k))
	fi
	local skips=""
	[ "$k" -gt 0 ] && skips=", $k skipped"
	SUMMARIES+=("PostgreSQL $major (${ver:-?}, $where$tag): $p passed, $f failed$skips in $(($(date +%s) - start)) s ($cold)")
}

if [ "$(id -u)" != 0 ]; then
	log "scripts/matrix.sh needs root (debootstrap, chroot, mount)"
	exit 1
fi
majors=("$@")
[ ${#majors[@]} -eq 0 ] && read -r -a majors <<<"$ALL_MAJORS"
# The upgrade test (scripts/test.sh runs it) builds old releases from git
# history: their sources are extracted here, on the host, where git is.
if [ "$COMMAND" = scripts/test.sh ]; then
	(cd "$REPO" && scripts/upgrade-test.sh --prepare) || log "release sources not prepared"
fi
for m in "${majors[@]}"; do
	log "PostgreSQL $m"
	run_major "$m"
done
echo
printf '%s\n' "${SUMMARIES[@]}"
if [ "$TOTAL_SKIP" -gt 0 ]; then
	echo "$TOTAL_PASS passed, $TOTAL_FAIL failed, $TOTAL_SKIP skipped"
else
	echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
fi
[ "$TOTAL_FAIL" -eq 0 ]

# scripts/lib.sh: shared by scripts/test.sh, scripts/demo.sh and bench/run.sh.
# Sourced, not run.  Installs what a fresh Debian machine lacks, builds the
# extension, and runs a command inside a throwaway cluster (pg_virtualenv).

: "${PG_MAJOR:=15}"
PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BINDIR/pg_config
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The staged installation the test and bench clusters load the extension
# from (see stage_settings), so that tests never depend on what is
# installed system-wide.  It lives outside the clone, in /tmp, where the
# server's user (postgres, when root runs the tests) can read it whatever
# the clone's permissions and the umask: a clone in root's 0700 home or in a
# mktemp -d directory works as it is.  One per clone (by path) and major.
STAGE=/tmp/storagelab-stage-$(id -u)/$(printf '%s' "$REPO" | md5sum | cut -c1-12)-$PG_MAJOR
export PG_MAJOR PG_CONFIG REPO STAGE

log() { printf '==> %s\n' "$*" >&2; }

# as_root CMD...: run CMD as root (directly, or with sudo when not root).
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n "$@"
	else
		log "need root for: $*"
		return 1
	fi
}

# ensure_packages: install the Debian packages storagelab needs to build,
# test and demo, when any is missing.  apt-get update runs only then.
# postgresql-N-toastinfo (a test oracle) and postgresql-N-plpgsql-check (used
# by the generated INT->BIGINT scripts when installed) are optional: not every
# Debian suite ships them for every major, and the tests that use them skip
# without them.
ensure_packages() {
	local want=(make gcc "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
		"postgresql-$PG_MAJOR-pgtap" libtap-parser-sourcehandler-pgtap-perl
		postgresql-common python3
		# test/monitoring.sh runs the real monitoring tools
		prometheus-postgres-exporter check-postgres curl iproute2
		# test/report_html.sh: an HTML5 parser
		python3-html5lib)
	# On the host's major (15) only, where their tests run (elsewhere they
	# skip, saying so): test/alert_rules.sh needs promtool (package
	# prometheus), test/fleet.sh Prometheus and Alertmanager too, and
	# test/report_html.sh's browser part Chromium.  Their subject is the
	# rules, labels and page, which do not change with the major; the
	# exporter's queries are run on every major by test/monitoring.sh.
	[ "$PG_MAJOR" != 15 ] || want+=(prometheus prometheus-alertmanager chromium)
	# postgresql-N-jit: the LLVM JIT, a package of its own from 18 on in
	# Debian (15 and 17 have it in postgresql-N); test/jit_nested.sh needs it.
	local optional=("postgresql-$PG_MAJOR-toastinfo" "postgresql-$PG_MAJOR-plpgsql-check"
		"postgresql-$PG_MAJOR-jit")
	local missing=() p
	for p in "${want[@]}"; do
		installed "$p" && continue
		# pgTAP built from source (scripts/matrix.sh does that where the
		# suite has no package for this major) will do.
		[ "$p" = "postgresql-$PG_MAJOR-pgtap" ] && [ -x "$PG_CONFIG" ] &&
			[ -f "$("$PG_CONFIG" --sharedir)/extension/pgtap.control" ] && continue
		missing+=("$p")
	done
	install_missing "${missing[@]}"
	# Optional packages: installed when the package lists (refreshed above
	# on a fresh machine) know them; no apt-get update just for them.
	missing=()
	for p in "${optional[@]}"; do
		installed "$p" && continue
		if apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
			missing+=("$p")
		else
			log "$p is not available here: the tests that need it skip"
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# install_missing PACKAGE...: install those of the PACKAGEs that are not
# installed (apt-get update first); nothing when all are.
install_missing() {
	local missing=() p
	for p in "$@"; do
		installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
	stop_services "${missing[@]}"
}

# stop_services PACKAGE...: Debian starts a package's service when it is
# installed: the Prometheus server (port 9090), Alertmanager (9093) and
# postgres_exporter (9187) would keep running on the machine, on all
# interfaces.  The tests start their own on 127.0.0.1 and free ports, so
# those installed here are stopped and disabled (not those installed before).
stop_services() {
	local p
	for p in "$@"; do
		case $p in
		prometheus | prometheus-alertmanager | prometheus-postgres-exporter) ;;
		*) continue ;;
		esac
		if [ -d /run/systemd/system ]; then
			as_root systemctl disable --now "$p" >/dev/null 2>&1
		else
			as_root service "$p" stop >/dev/null 2>&1
			as_root update-rc.d "$p" disable >/dev/null 2>&1
		fi
	done
	return 0
}

# installed PACKAGE: whether dpkg has PACKAGE installed.  A package whose
# triggers are pending (another apt-get run is installing beside us) is
# installed too: apt-get would only wait for that run's lock, and fail.
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null |
		grep -E "install ok (installed|triggers-pending|triggers-awaited)" >/dev/null
}

# stage_settings: the server settings that make a cluster load the staged
# installation: Debian's extension_destdir where the server has it (its
# packages of 15 to 17), else extension_control_path and
# dynamic_library_path (PostgreSQL 18 and later).  Prints nothing when the
# server has neither; build_extension then installs system-wide.
stage_settings() {
	local bin=$PG_BINDIR/postgres
	if grep -qa extension_destdir "$bin"; then
		echo "extension_destdir=$STAGE"
	elif grep -qa extension_control_path "$bin"; then
		echo "extension_control_path=$STAGE$("$PG_CONFIG" --sharedir):\$system"
		echo "dynamic_library_path=$STAGE$("$PG_CONFIG" --pkglibdir):\$libdir"
	fi
}

# build_extension: compile warnings-as-errors and stage the installation.
# Object files built against another major's headers are removed first
# (scripts/matrix.sh builds one source tree for several majors).  When the
# server cannot load a staged installation, it is installed system-wide.
build_extension() {
	log "building storagelab for PostgreSQL $PG_MAJOR"
	clean_other_major
	make -C "$REPO" -s -j "$(nproc)" PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Werror >/dev/null
	if [ -n "$(stage_settings)" ]; then
		make_stage_dir
		make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$STAGE" >/dev/null
		chmod -R a+rX "$STAGE"	# under umask 077, install's mkdir -p made 0700
	else
		log "PostgreSQL $PG_MAJOR cannot load a staged extension: installing system-wide"
		as_root make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
	fi
}

# make_stage_dir: an empty $STAGE, readable by everyone, in a parent
# directory of ours (never one another user made, nor a symlink).
make_stage_dir() {
	local parent=${STAGE%/*}
	mkdir -p "$parent"
	if [ -L "$parent" ] || [ ! -O "$parent" ]; then
		log "$parent is not a directory of user $(id -un): remove it"
		return 1
	fi
	chmod 755 "$parent"
	rm -rf "$STAGE"
	mkdir "$STAGE"
	chmod 755 "$STAGE"
}

# clean_other_major: remove build outputs made with another PG_CONFIG.
clean_other_major() {
	mkdir -p "$REPO/.build"
	if [ "$(cat "$REPO/.build/built-for" 2>/dev/null)" != "$PG_CONFIG" ]; then
		make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
		echo "$PG_CONFIG" >"$REPO/.build/built-for"
	fi
}

# install_extension: install into the system PostgreSQL (the demo does this,
# so that the extension is there to use afterwards).
install_extension() {
	clean_other_major
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Werror >/dev/null
	as_root make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}

# free_port: a TCP port nothing listens on.  pg_virtualenv -t would give
# every concurrent cluster the first port of its private configuration root.
free_port() {
	local p i
	for i in $(seq 100); do
		p=$((20000 + RANDOM % 20000))
		if ! (: >/dev/tcp/127.0.0.1/$p) 2>/dev/null &&
			[ ! -e "/var/run/postgresql/.s.PGSQL.$p" ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# with_cluster [pg_virtualenv options] -- CMD...: run CMD in a throwaway
# cluster that loads the staged extension; PG* variables point at it.
with_cluster() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	local setting
	while read -r setting; do
		[ -n "$setting" ] && opts=(-o "$setting" "${opts[@]}")
	done < <(stage_settings)
	PGPORT=$(free_port) pg_virtualenv -t -v "$PG_MAJOR" "${opts[@]}" "$@"
}

# summary_line PASSED FAILED [SKIPPED]: the summary every test script ends
# with, "N passed, M failed", plus ", K skipped" when K > 0 (.ci/run and
# scripts/matrix.sh parse both forms).
summary_line() {
	if [ "${3:-0}" -gt 0 ]; then
		echo "$1 passed, $2 failed, $3 skipped"
	else
		echo "$1 passed, $2 failed"
	fi
}

# counts_of LINE: "passed failed skipped" from a summary line (summary_line's
# format); "0 1 0" when LINE is none.
counts_of() {
	local re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
	if [[ $1 =~ $re ]]; then
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[4]:-0}"
	else
		echo "0 1 0"
	fi
}

# extension_version: default_version from storagelab.control.
extension_version() {
	sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$REPO/storagelab.control"
}

# ---------------------------------------------------------------------------
# Released versions, built from their commits (scripts/upgrade-test.sh,
# scripts/library-mix-test.sh).  A release is a CHANGELOG.md heading that
# names its commit ("## 1.0 (2026-11-22): commit 45aee7a"); tags do not travel
# with every clone.  Builds are cached in $REPO/.build/releases/VERSION.
# ---------------------------------------------------------------------------

# release_list: "version commit" per released version, from CHANGELOG.md.
release_list() {
	sed -n 's/^## \([0-9][0-9.]*\)[^0-9a-z].*commit \([0-9a-f]\{7,40\}\).*/\1 \2/p' "$REPO/CHANGELOG.md"
}

# release_build VERSION COMMIT: VERSION's source (git archive of COMMIT)
# built for this major and staged in $REPO/.build/releases/VERSION/pgN/stage,
# as its package would install it.  Prints why not and fails when the commit
# is not in this clone or does not build.
release_build() {
	local v=$1 c=$2 dir=$REPO/.build/releases/$1 out stamp
	local git_=(git -c safe.directory='*' -C "$REPO")
	if [ "$(cat "$dir/src/.commit" 2>/dev/null)" != "$c" ]; then
		if ! "${git_[@]}" cat-file -e "$c^{commit}" 2>/dev/null; then
			echo "commit $c of release $v is not in this clone (shallow, or no git history)"
			return 1
		fi
		rm -rf "$dir"
		mkdir -p "$dir/src"
		"${git_[@]}" archive "$c" | tar -x -C "$dir/src"
		echo "$c" >"$dir/src/.commit"
	fi
	out=$dir/pg$PG_MAJOR
	stamp="$c $("$PG_CONFIG" --version)"
	[ "$(cat "$out/.built" 2>/dev/null)" = "$stamp" ] && return 0
	log "building release $v (commit $c) for PostgreSQL $PG_MAJOR"
	rm -rf "$out"
	mkdir -p "$out"
	cp -a "$dir/src" "$out/build"
	# No LLVM bitcode (with_llvm=no): half of the build's CPU, and only JIT
	# inlining reads it, which the tests of a release's SQL objects do not
	# depend on.
	if ! { make -C "$out/build" -s -j "$(nproc)" PG_CONFIG="$PG_CONFIG" with_llvm=no &&
		make -C "$out/build" -s PG_CONFIG="$PG_CONFIG" with_llvm=no install DESTDIR="$out/stage"; } >"$out/build.log" 2>&1; then
		tail -n 30 "$out/build.log"
		echo "release $v (commit $c) does not build for PostgreSQL $PG_MAJOR"
		return 1
	fi
	rm -rf "$out/build"
	echo "$stamp" >"$out/.built"
}

# release_stage DIR VERSION|current: DIR (a stage a cluster loads, see
# stage_settings) holds VERSION's staged release, or the current build
# installed over what DIR holds (as a package upgrade replaces the library),
# readable by the server.
release_stage() {
	if [ "$2" = current ]; then
		make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$1" >/dev/null
	else
		find "$1" -mindepth 1 -delete
		cp -a "$REPO/.build/releases/$2/pg$PG_MAJOR/stage/." "$1/"
	fi
	chmod -R a+rX "$1"
}

# scripts/lib.sh: shared by scripts/test.sh, scripts/demo.sh and bench/run.sh.
# Sourced, not run.  Installs what a fresh Debian machine lacks, builds the
# extension, and runs a command inside a throwaway cluster (pg_virtualenv).

: "${PG_MAJOR:=15}"
PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BINDIR/pg_config
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The staged installation the test and bench clusters load the extension
# from (Debian's extension_destdir), so that tests never depend on what is
# installed system-wide.
STAGE=$REPO/.build/stage-$PG_MAJOR
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
ensure_packages() {
	local want=(make gcc "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
		"postgresql-$PG_MAJOR-pgtap" libtap-parser-sourcehandler-pgtap-perl
		"postgresql-$PG_MAJOR-toastinfo" postgresql-common)
	local missing=() p
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# build_extension: compile warnings-as-errors and stage the installation.
build_extension() {
	log "building storagelab for PostgreSQL $PG_MAJOR"
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Werror >/dev/null
	rm -rf "$STAGE"
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$STAGE" >/dev/null
}

# install_extension: install into the system PostgreSQL (the demo does this,
# so that the extension is there to use afterwards).
install_extension() {
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
	PGPORT=$(free_port) pg_virtualenv -t -v "$PG_MAJOR" \
		-o "extension_destdir=$STAGE" \
		"${opts[@]}" "$@"
}

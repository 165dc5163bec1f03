#!/usr/bin/env bash
# scripts/package-test.sh: the Debian package, built, installed and tested
# as a DBA would, by doc/install.md's own commands (.ci/run runs this).
#
#   1. extracts the commands of doc/install.md's package recipe: the ```sh
#      block after the line "<!-- scripts/package-test.sh runs the next
#      block -->" (not a copy: what the doc says is what runs);
#   2. clones the repository under umask 077 (HEAD: uncommitted changes are
#      not in the clone) into a 0700 directory, and runs those commands
#      there as root, one bash -e script, under umask 077: they install the
#      packages they name, copy the clone where the server's user can read
#      it, build it with dpkg-buildpackage (which runs the regression suite
#      against the package's files) and install the package with dpkg -i;
#   3. checks that the extension's files PostgreSQL loads belong to
#      postgresql-$PG_MAJOR-storagelab, unmodified: the control file, the
#      install script, every upgrade script make builds (one per
#      extension/updates/A--B.sql) and storagelab.so;
#   4. runs the autopkgtest debian/tests/installcheck (pg_buildext
#      installcheck: make installcheck in a fresh cluster that loads the
#      installed files, no staged build) in the build tree, with
#      ../shared/datasets beside it when the clone has it.
# A package that was not installed before the run is purged after it.
# Prints one "ok"/"not ok" line per step and per pg_regress test, and last
# "N passed, M failed" (", K skipped" when tests were skipped).
# Environment: PG_MAJOR (default 15), STORAGELAB_KEEP_PACKAGE=1 (leave the
# package installed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
finish() {
	summary_line "$passed" "$failed" "$skipped"
	[ "$failed" -eq 0 ]
	exit
}

pkg=postgresql-$PG_MAJOR-storagelab
was_installed=
installed "$pkg" && was_installed=1
work=$(mktemp -d /tmp/storagelab-package.XXXXXX)
src=
cleanup() {
	if [ -z "$was_installed" ] && [ -z "${STORAGELAB_KEEP_PACKAGE:-}" ] && installed "$pkg"; then
		as_root dpkg --purge "$pkg" >/dev/null 2>&1 || log "could not remove $pkg"
	fi
	# What the recipe made beside the clone: its copy, the .deb and the
	# build's other files, then the directory if nothing else is in it.
	if [ -n "$src" ] && [ -d "$src/debian" ]; then
		local dir=${src%/*}
		rm -rf "$src"
		rm -f "$dir/shared" "$dir"/*.deb "$dir"/*.buildinfo "$dir"/*.changes
		rmdir "$dir" 2>/dev/null || log "left $dir (files the recipe made there)"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# 1. The recipe, as doc/install.md gives it.
awk '/^<!-- scripts\/package-test.sh runs the next block -->$/ { marked = 1; next }
	marked && /^```sh$/ { on = 1; next }
	on && /^```$/ { exit }
	on { print }' "$REPO/doc/install.md" >"$work/recipe.sh"
if [ ! -s "$work/recipe.sh" ]; then
	not_ok "doc/install.md has no package recipe block (marked <!-- scripts/package-test.sh runs the next block -->)"
	finish
fi
ok "doc/install.md's package recipe: $(grep -c . "$work/recipe.sh") commands"
sed 's/^/#   /' "$work/recipe.sh"
# The packages it names, installed first with lib.sh's care for apt's lock
# (its own apt-get line then finds them installed).
install_missing $(sed -n 's/#.*//; s/^.*apt-get install //p' "$work/recipe.sh" | tr ' ' '\n' | grep -v '^-' | grep .)

# 2. A clone made under umask 077, in a directory only its owner may read
#    (as a clone in root's home), and the recipe run beside it.
(umask 077 && git -c safe.directory='*' clone -q "$REPO" "$work/storagelab")
start=$(date +%s)
log "running doc/install.md's package recipe in $work (umask 077)"
if (cd "$work" && umask 077 &&
	as_root bash -euxo pipefail -c "$(cat "$work/recipe.sh"); pwd >'$work/src'") >"$work/build.log" 2>&1; then
	src=$(cat "$work/src")
	ok "the recipe builds and installs the package from a umask 077 clone in $(($(date +%s) - start)) s ($(cd "${src%/*}" && ls -- *.deb | paste -sd' '))"
	# What the build's own regression suite said (none with nocheck).
	echo "# the build's regression suite: $(grep -hE 'All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed|^skipped: ' "$work/build.log" | paste -sd';' | sed 's/  */ /g; s/^$/not run/')"
else
	tail -n 60 "$work/build.log"
	not_ok "doc/install.md's package recipe fails from a umask 077 clone (log above)"
	[ -f "$work/src" ] && src=$(cat "$work/src")
	finish
fi
deb=$(ls "${src%/*}/${pkg}_"*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	not_ok "no $pkg package was built (is PostgreSQL $PG_MAJOR in debian/pgversions and supported here?)"
	finish
fi

# 3. The server loads the package's files.
if ! installed "$pkg"; then
	not_ok "the recipe left $pkg uninstalled"
	finish
fi
problems=()
sharedir=$("$PG_CONFIG" --sharedir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
version=$(extension_version)
for f in "$sharedir/extension/storagelab.control" "$sharedir/extension/storagelab--$version.sql" \
	"$pkglibdir/storagelab.so"; do
	owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)
	[ "$owner" = "$pkg" ] || problems+=("$f belongs to ${owner:-no package}")
done
for f in "$REPO"/extension/updates/*--*.sql; do
	[ -e "$f" ] || continue
	f=${f##*/}
	f=storagelab--${f%%--*}--$version.sql
	dpkg -S "$sharedir/extension/$f" >/dev/null 2>&1 ||
		problems+=("the package lacks the upgrade script $f")
done
modified=$(dpkg --verify "$pkg" 2>&1 || true)
[ -z "$modified" ] || problems+=("dpkg --verify: $modified")
if [ ${#problems[@]} -eq 0 ]; then
	ok "$pkg owns the control file, the $version install script, every upgrade script and storagelab.so, unmodified"
else
	not_ok "$pkg's files"
	printf '#   %s\n' "${problems[@]}"
fi

# 4. The autopkgtest, against the installed package.
[ -d "$REPO/../shared/datasets" ] && ln -s "$(cd "$REPO/../shared" && pwd)" "${src%/*}/shared"
log "debian/tests/installcheck against the installed $pkg"
rc=0
(cd "$src" && PG_SUPPORTED_VERSIONS=$PG_MAJOR debian/tests/installcheck) 2>&1 | tee "$work/check.log" || rc=$?
r_pass=$(grep -cE '\.\.\. ok|^ok [0-9]+ ' "$work/check.log" || true)
r_fail=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$work/check.log" || true)
skipped=$(grep -c '^skipped: ' "$work/check.log" || true)
[ "$rc" -ne 0 ] && [ "$r_fail" -eq 0 ] && r_fail=1
passed=$((passed + r_pass))
failed=$((failed + r_fail))
echo "installcheck against the installed package: $r_pass passed, $r_fail failed, $skipped skipped"
finish

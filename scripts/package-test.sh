#!/usr/bin/env bash
# scripts/package-test.sh: the Debian package, built, installed and tested
# as a DBA would use it (.ci/run runs this).
#
#   1. installs what building needs (debhelper, dpkg-dev,
#      postgresql-server-dev-all) when missing;
#   2. copies the source tree (without .git and build outputs) into a
#      temporary directory the server's user can read and builds it there
#      with "dpkg-buildpackage -us -uc -b" (DEB_BUILD_OPTIONS=nocheck: the
#      tests run in step 4 against the installed package instead);
#   3. installs postgresql-$PG_MAJOR-storagelab with dpkg -i and checks that
#      the extension's files PostgreSQL loads belong to it, unmodified;
#   4. runs the autopkgtest debian/tests/installcheck (pg_buildext
#      installcheck: make installcheck in a fresh cluster that loads the
#      installed files, no staged build) in that tree, with
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

ensure_packages
install_missing debhelper dpkg-dev postgresql-server-dev-all

pkg=postgresql-$PG_MAJOR-storagelab
was_installed=
installed "$pkg" && was_installed=1
work=$(mktemp -d /tmp/storagelab-package.XXXXXX)
chmod 755 "$work"
cleanup() {
	if [ -z "$was_installed" ] && [ -z "${STORAGELAB_KEEP_PACKAGE:-}" ] && installed "$pkg"; then
		as_root dpkg --purge "$pkg" >/dev/null 2>&1 || log "could not remove $pkg"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# 2. Build, from a copy of the tree as it is (uncommitted changes too).
src=$work/storagelab
mkdir "$src"
tar -C "$REPO" -c --exclude=./.git --exclude=./.build --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' --exclude=./results --exclude='./storagelab-*.zip' --exclude=./debian/.debhelper . |
	tar -C "$src" -x
chmod -R a+rX "$work"
log "building the Debian package in $src"
if (cd "$src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -Pnocheck) >"$work/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b builds $(cd "$work" && ls -- *.deb | paste -sd' ')"
else
	tail -n 40 "$work/build.log"
	not_ok "dpkg-buildpackage -us -uc -b fails (log above)"
	finish
fi
deb=$(ls "$work/${pkg}_"*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	not_ok "no $pkg package was built (is PostgreSQL $PG_MAJOR in debian/pgversions and supported here?)"
	finish
fi

# 3. Install it, and make sure the server will load its files.
if as_root dpkg -i "$deb" >"$work/install.log" 2>&1; then
	ok "dpkg -i $(basename "$deb")"
else
	cat "$work/install.log"
	not_ok "dpkg -i $(basename "$deb") fails"
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
for f in "$REPO"/extension/storagelab--*--*.sql; do
	[ -e "$f" ] || continue
	dpkg -S "$sharedir/extension/$(basename "$f")" >/dev/null 2>&1 ||
		problems+=("the package lacks the upgrade script $(basename "$f")")
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
[ -d "$REPO/../shared/datasets" ] && ln -s "$(cd "$REPO/../shared" && pwd)" "$work/shared"
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

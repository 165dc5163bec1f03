#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): the reference pages in
# doc/ document exactly the public API of the installed extension.
#
# "Documented" means: one of the reference pages doc/*.md (not doc/design/,
# which explains internals) has a heading line
#     ### storagelab.NAME
# optionally followed by the signature, e.g. "### storagelab.heap_visibility(
# relation regclass, ...)".  One heading covers every overload of NAME.
# Checked:
#   - every function, view and table of schema storagelab that belongs to
#     the extension has exactly one such heading;
#   - every such heading names one of them (no page documents a renamed,
#     dropped or moved object);
#   - no heading anywhere in doc/ (design pages included) names an object of
#     schema storagelab_internal ("storagelab_internal." in a heading);
#   - every reference page is installed with the extension (Makefile DOCS);
#   - README.md, the front page, stays at most 15,000 bytes.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
DOC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../doc" && pwd) || { echo "1..0 # no doc/"; exit 1; }

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
export PGDATABASE=storagelab_docs
trap 'rm -rf "$work"; dropdb --if-exists "$PGDATABASE" 2>/dev/null' EXIT
dropdb --if-exists "$PGDATABASE" 2>/dev/null
createdb "$PGDATABASE" || exit 1

# The public objects: members of the extension in schema storagelab.
psql -X -q -At -v ON_ERROR_STOP=1 >"$work/api" <<'SQL' || exit 1
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
SELECT DISTINCT name FROM (
  SELECT p.proname AS name, d.refobjid
    FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
   WHERE p.pronamespace = 'storagelab'::regnamespace AND d.deptype = 'e'
  UNION ALL
  SELECT c.relname, d.refobjid
    FROM pg_class c
    JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
   WHERE c.relnamespace = 'storagelab'::regnamespace AND d.deptype = 'e'
     AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
) o
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'storagelab')
 ORDER BY 1;
SQL
ok $? "the public objects of the installed extension are listed ($(wc -l <"$work/api") found)"

# The headings: "FILE NAME" per "### storagelab.NAME" line of doc/*.md.
for f in "$DOC"/*.md; do
	sed -nE 's/^### +storagelab\.([A-Za-z0-9_]+).*/\1/p' "$f" | sed "s|^|$(basename "$f") |"
done | sort -k2 >"$work/headings"

while read -r name; do
	pages=$(awk -v n="$name" '$2 == n { print $1 }' "$work/headings" | paste -sd, -)
	count=$(awk -v n="$name" '$2 == n' "$work/headings" | wc -l)
	[ "$count" = 1 ]
	ok $? "storagelab.$name is documented once in doc/ (${pages:-no heading})"
done <"$work/api"

stale=$(awk 'NR == FNR { api[$1]; next } !($2 in api) { print $1 ": storagelab." $2 }' \
	"$work/api" "$work/headings" | paste -sd';' -)
[ -z "$stale" ]
ok $? "every '### storagelab.NAME' heading names a public object${stale:+ (not: $stale)}"

internal=$(grep -rnE '^#+ .*storagelab_internal\.' "$DOC" | sed "s|^$DOC/||" | paste -sd';' -)
[ -z "$internal" ]
ok $? "no heading in doc/ presents a storagelab_internal object${internal:+ ($internal)}"

# Installed with the extension: the staged installation (scripts/lib.sh),
# or the system-wide one when the server cannot load a staged one.
docdir=$("$PG_CONFIG" --docdir)/extension/storagelab
[ -d "${STAGE:-}$docdir" ] && docdir=${STAGE:-}$docdir
missing=$(for f in "$DOC"/*.md; do [ -f "$docdir/$(basename "$f")" ] || basename "$f"; done | paste -sd' ' -)
[ -z "$missing" ]
ok $? "every doc/*.md page is installed in $docdir${missing:+ (missing: $missing)}"

readme=$(wc -c <"$DOC/../README.md")
[ "$readme" -le 15000 ]
ok $? "README.md is at most 15,000 bytes ($readme)"

echo "1..$n"
[ "$failed" = 0 ]

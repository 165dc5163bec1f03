#!/bin/sh
# Regenerates a generated section of an upgrade script from the install
# parts: the objects that the upgrade drops and creates again, copied from
# extension/[0-9]*.sql.
#
#   scripts/upgrade-section.sh NAME UPGRADE_SCRIPT PART...
#
# Replaces the lines between "-- BEGIN generated section NAME" and
# "-- END generated section NAME" of UPGRADE_SCRIPT with the PARTs, in the
# order given, without their "\echo ... \quit" guard.  A PART is a file
# (copied whole) or FILE:FUNCTION (only the CREATE FUNCTION or CREATE
# PROCEDURE FUNCTION(...) statement, as CREATE OR REPLACE, and the COMMENT
# on it when that comes next; a file that keeps its comments together
# elsewhere gives the statement alone: CREATE OR REPLACE keeps the comment).
# scripts/upgrade-test.sh proves that the result equals a fresh install.
set -eu
name=$1 up=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for part in "$@"; do
	case $part in
	*:*)
		file=${part%%:*} fn=${part#*:}
		echo "-- from $file: $fn"
		awk -v fn="$fn" '
			index($0, "CREATE FUNCTION " fn "(") == 1 || index($0, "CREATE PROCEDURE " fn "(") == 1 {
				on = 1; sub(/^CREATE /, "CREATE OR REPLACE ")
			}
			# after the body: its COMMENT when it follows (blank lines
			# between), else stop (a file that keeps its comments elsewhere)
			on && body && !comment {
				if ($0 ~ /^$/) { blank = blank "\n"; next }
				if (index($0, "COMMENT ON FUNCTION " fn "(") != 1 && index($0, "COMMENT ON PROCEDURE " fn "(") != 1) exit
				printf "%s", blank
			}
			on { print }
			on && !body && /^\$[A-Za-z_]*\$;$/ { body = 1 }
			on && /^COMMENT ON (FUNCTION|PROCEDURE)/ { comment = 1 }
			on && comment && /;$/ { exit }
		' "$file"
		echo
		;;
	*)
		echo "-- from $part"
		grep -v '^\\echo Use ' "$part"
		echo
		;;
	esac
done > "$out.body"
awk -v name="$name" -v body="$out.body" '
	$0 == "-- BEGIN generated section " name { print; while ((getline line < body) > 0) print line; skip = 1; next }
	$0 == "-- END generated section " name { skip = 0 }
	!skip { print }
' "$up" > "$out"
rm -f "$out.body"
grep -qx -- "-- END generated section $name" "$out" || { echo "no section $name in $up" >&2; exit 1; }
cat "$out" > "$up"

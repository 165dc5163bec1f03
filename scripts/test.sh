#!/usr/bin/env bash
# storagelab's test command (README: "make test"; .ci/run runs exactly this).
#
# Installs missing Debian packages, builds with -Werror, stages the
# installation, starts a throwaway cluster and runs both suites in it:
# pg_regress (sql/ + expected/) and pgTAP (test/*.sql through pg_prove).
# Prints regression.diffs on failure, exits non-zero on any failure, and
# ends with one line "N passed, M failed" counting both suites.
#
# Environment: PG_MAJOR (default 15).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ensure_packages
build_extension
export SUMMARY=$REPO/.build/summary-$PG_MAJOR
echo "0 passed, 1 failed" > "$SUMMARY"	# if the cluster never starts
rc=0
with_cluster -- "$REPO/scripts/run-suites.sh" || rc=$?
cat "$SUMMARY"
exit $rc

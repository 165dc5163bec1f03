#!/usr/bin/env bash
# scripts/run-alone.sh: the test files marked "suite: alone" (a line
# "-- suite: alone" or "# suite: alone": they need a cluster in which no
# other file checkpoints, creates or drops a database between two of their
# reads), in a throwaway cluster of their own, through scripts/run-suites.sh
# (STORAGELAB_SUITE=alone).  scripts/test.sh runs it beside the suites, which
# leave those files out (STORAGELAB_SUITE=beside), instead of after them
# with a core idle.  Ends with the summary line.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ -n "${STORAGELAB_BUILT:-}" ] || build_extension || exit 1
export PATH=$PG_BINDIR:$PATH
export SUMMARY=$REPO/.build/summary-$PG_MAJOR-alone
echo "0 passed, 1 failed" >"$SUMMARY"	# if the cluster never starts
STORAGELAB_SUITE=alone with_cluster -- "$REPO/scripts/run-suites.sh"
rc=$?
cat "$SUMMARY"
exit $rc

#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): storagelab's
# Prometheus alerting rules, doc/monitoring/alerts.yaml.  promtool checks
# them (syntax, PromQL, templates) and runs their unit tests,
# doc/monitoring/alerts_test.yaml (each alert fires, does not fire,
# recovers; the corner cases).  Also: every storagelab_* series the rules
# read is one that doc/monitoring/queries.yaml defines (a query or column
# renamed there would leave its alert silent, and promtool cannot know).
# Needs no server.  Skipped without promtool (Debian package prometheus).
set -uo pipefail
: "${REPO:=$(cd "$(dirname "$0")/.." && pwd)}"
if ! command -v promtool >/dev/null 2>&1; then
	echo "1..0 # SKIP promtool is not installed (Debian package prometheus)"
	exit 0
fi
echo "1..3"
n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
dir=$REPO/doc/monitoring

out=$(timeout 60 promtool check rules "$dir/alerts.yaml" 2>&1)
ok $? "promtool check rules alerts.yaml"
sed 's/^/# /' <<<"$out"

out=$(cd "$dir" && timeout 120 promtool test rules alerts_test.yaml 2>&1)
rc=$?
ok $rc "promtool test rules alerts_test.yaml ($(grep -c 'eval_time:' "$dir/alerts_test.yaml") evaluations)"
[ "$rc" = 0 ] || sed 's/^/# /' <<<"$out" | head -100

# the series queries.yaml makes: <query name>_<column> for each column that
# is not a LABEL
defined=$(awk '
	/^[a-z_]+:$/ { q = substr($1, 1, length($1) - 1); next }
	/^    - [a-z_]+:$/ { c = $2; sub(/:$/, "", c); next }
	/usage: "LABEL"/ { c = ""; next }
	/usage:/ && c != "" { print q "_" c; c = "" }' "$dir/queries.yaml" | sort -u)
used=$(grep -v '^ *#' "$dir/alerts.yaml" | grep -o 'storagelab_[a-z_]*' | sort -u)
missing=$(comm -13 <(echo "$defined") <(echo "$used"))
[ -z "$missing" ] && [ -n "$used" ]
ok $? "every storagelab series the rules read is defined by queries.yaml${missing:+ (not: $(echo $missing))}"

exit $((failed > 0))

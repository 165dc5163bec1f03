#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): storagelab through the
# real monitoring tools, as a role that is a member of pg_monitor and has no
# other grant.  Starts prometheus-postgres-exporter with the queries file of
# doc/monitoring/queries.yaml against the throwaway cluster, listening on
# 127.0.0.1 only, scrapes it once, and checks that a sequence set to 99 %
# shows as 99; then runs check_postgres's custom_query action, which must
# answer CRITICAL for it.  Every wait has a deadline; the exporter is stopped
# on exit.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
. "$REPO/scripts/lib.sh"

echo "1..9"
n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
db=storagelab_monitoring
role=storagelab_monitor
password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
qp() { psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }

dropdb --if-exists "$db" 2>/dev/null
createdb "$db"
qp -q <<SQL
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE public.orders (id serial PRIMARY KEY, note text);
INSERT INTO public.orders (note) VALUES ('a');
SELECT setval('public.orders_id_seq', 2126008810);   -- 99.0 % of 2147483647
DROP ROLE IF EXISTS $role;
CREATE ROLE $role LOGIN PASSWORD '$password' IN ROLE pg_monitor;
SQL

work=$(mktemp -d)
port=$(free_port)
exporter_pid=
cleanup() {
	[ -n "$exporter_pid" ] && kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null
	rm -rf "$work"
	dropdb --if-exists "$db" 2>/dev/null
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS $role" 2>/dev/null
}
trap cleanup EXIT

# a clean environment: the cluster's PG* variables are not the exporter's
# (its driver refuses PGSYSCONFDIR)
env -i PATH="$PATH" \
	DATA_SOURCE_NAME="postgresql://$role:$password@127.0.0.1:$PGPORT/$db?sslmode=disable" \
	prometheus-postgres-exporter --web.listen-address="127.0.0.1:$port" \
	--extend.query-path="$REPO/doc/monitoring/queries.yaml" \
	--disable-default-metrics --disable-settings-metrics >"$work/exporter.log" 2>&1 &
exporter_pid=$!

# one scrape, once the exporter listens (deadline 30 s)
metrics=
for _ in $(seq 1 150); do
	if metrics=$(curl -s --max-time 20 "http://127.0.0.1:$port/metrics") &&
		grep -q '^storagelab_int_overflow_max_used_pct' <<<"$metrics"; then
		break
	fi
	kill -0 "$exporter_pid" 2>/dev/null || break
	sleep 0.2
done
grep -q '^storagelab_int_overflow_max_used_pct' <<<"$metrics"
ok $? "the exporter, on 127.0.0.1 only, serves storagelab's metrics"
[ "$(ss -Htln "sport = :$port" | awk '{print $4}')" = "127.0.0.1:$port" ]
ok $? "it listens on loopback only"
grep -Eq '^storagelab_int_overflow_max_used_pct(\{[^}]*\})? 99$' <<<"$metrics"
ok $? "highest used_pct: the sequence at 99 % shows 99"
grep -Eq '^storagelab_int_overflow_used_pct\{[^}]*column_name="id"[^}]*relation="orders"[^}]*\} 99$' <<<"$metrics"
ok $? "used_pct per column: orders.id shows 99"
grep -Eq '^storagelab_findings_count\{[^}]*category="int_overflow"[^}]*severity="critical"[^}]*\} 1$' <<<"$metrics"
ok $? "findings by severity and category: one critical int_overflow"
grep -Eq '^storagelab_findings_count\{[^}]*category="toast"[^}]*severity="warning"[^}]*\} 0$' <<<"$metrics"
ok $? "findings by severity and category: zeros are series too"
if [ "$failed" -gt 0 ]; then
	sed "s/^/# /" "$work/exporter.log" | head -30
	grep '^storagelab' <<<"$metrics" | sed 's/^/# /' | head -20
fi

# check_postgres: CRITICAL from 90 % on
out=$(PGPASSWORD=$password timeout 60 check_postgres --action=custom_query \
	--host=127.0.0.1 --port="$PGPORT" --dbuser="$role" --dbname="$db" --valtype=integer \
	--query="SELECT round(max(used_pct))::int AS result FROM storagelab.int_overflow" \
	--warning=75 --critical=90 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" = 2 ] && grep -q 'CRITICAL' <<<"$out"
ok $? "check_postgres custom_query on the highest used_pct answers CRITICAL (exit 2)"
out=$(PGPASSWORD=$password timeout 60 check_postgres --action=custom_query \
	--host=127.0.0.1 --port="$PGPORT" --dbuser="$role" --dbname="$db" --valtype=integer \
	--query="SELECT count(*) AS result FROM storagelab.findings WHERE severity = 'critical'" \
	--warning=1 --critical=1 2>&1)
rc=$?
[ "$rc" = 2 ] && grep -q 'CRITICAL' <<<"$out"
ok $? "check_postgres custom_query on critical findings answers CRITICAL"
# the role really has nothing but pg_monitor
[ "$(qp -c "SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member
            WHERE r.rolname = '$role'")" = 1 ] &&
	[ "$(qp -c "SELECT has_table_privilege('$role', 'public.orders', 'SELECT')
	               OR has_sequence_privilege('$role', 'public.orders_id_seq', 'SELECT,USAGE')")" = f ]
ok $? "the monitoring role is a member of pg_monitor only, with no grant on the table or sequence"

exit $((failed > 0))

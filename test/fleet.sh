#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): a fleet of two
# PostgreSQL servers watched by one Prometheus with storagelab's alert rules.
# Server a is the suite's cluster, server b a second one made here (initdb,
# on 127.0.0.1); each has a database with the same table, orders(id serial),
# and its own prometheus-postgres-exporter, connected as a role that is a
# member of pg_monitor only, with doc/monitoring/queries.yaml.  One
# Prometheus scrapes both every 5 s (a scrape took up to 2.8 s on the
# loaded 2-core test machine: 1 s would time out) and evaluates
# doc/monitoring/alerts.yaml every second (its "for" durations set to 0 in a
# copy: the rules themselves are unit-tested by test/alert_rules.sh), and
# sends to an Alertmanager.  orders.id's sequence is set to 99 % on server a only: through
# Prometheus's HTTP API (/api/v1/alerts), StoragelabIntegerKeyCritical and
# StoragelabCriticalFinding fire for server a, relation orders, column id,
# and no storagelab alert for server b; Alertmanager lists the alert too.
# Then the key is migrated with bigint_migration_script()'s script and the
# alerts resolve.  Also prints the scrape durations Prometheus measured.
# Everything listens on 127.0.0.1, on ports free at run time; every wait has
# a deadline and every request a timeout; the processes started here are
# stopped on exit.  Skipped when a program it needs is not installed.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
. "$REPO/scripts/lib.sh"
# python3 parses the JSON answers: the system one, not a shim on PATH
py=/usr/bin/python3; [ -x "$py" ] || py=python3
bindir=/usr/lib/postgresql/$PG_MAJOR/bin

for p in prometheus:prometheus prometheus-alertmanager:prometheus-alertmanager \
	prometheus-postgres-exporter:prometheus-postgres-exporter curl:curl python3:python3; do
	if ! command -v "${p%%:*}" >/dev/null 2>&1; then
		echo "1..0 # SKIP ${p%%:*} is not installed (Debian package ${p#*:})"
		exit 0
	fi
done

echo "1..11"
t0=$(date +%s)
elapsed() { echo "# $(($(date +%s) - t0)) s: $*"; }
n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
db=storagelab_fleet
role=storagelab_fleet_monitor
password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')

work=$(mktemp -d)
chmod 755 "$work"
pids=()
bstarted=
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	[ -n "$bstarted" ] && runuser -u postgres -- "$bindir/pg_ctl" -D "$work/b/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$work"
	dropdb --if-exists "$db" 2>/dev/null
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS $role" 2>/dev/null
}
trap cleanup EXIT

# the database of each server: orders.id at 99 % on a, at 1 % on b
setup_sql() {
	cat <<SQL
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE public.orders (id serial PRIMARY KEY, note text);
INSERT INTO public.orders (note) VALUES ('a');
SELECT setval('public.orders_id_seq', $1);
DROP ROLE IF EXISTS $role;
CREATE ROLE $role LOGIN PASSWORD '$password' IN ROLE pg_monitor;
SQL
}
qa() { psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
# server b's initdb runs meanwhile (its socket and data in $work/b)
mkdir -p "$work/b" && chown postgres "$work/b" && chmod 700 "$work/b"
timeout 120 runuser -u postgres -- "$bindir/initdb" -N -D "$work/b/data" -U postgres \
	--auth-local=trust --auth-host=scram-sha-256 >"$work/b/initdb.log" 2>&1 &
initdb_pid=$!
pids+=("$initdb_pid")
dropdb --if-exists "$db" 2>/dev/null
createdb "$db" && setup_sql 2126008810 | qa -q >/dev/null   # 99.0 % of 2147483647
ok $? "server a (the suite's cluster): orders.id at 99 %, a pg_monitor-only role"

# one exporter per server, as the monitoring role; a clean environment (the
# cluster's PG* variables are not the exporter's: its driver refuses
# PGSYSCONFDIR)
start_exporter() {	# NAME PGPORT PORT
	env -i PATH="$PATH" \
		DATA_SOURCE_NAME="postgresql://$role:$password@127.0.0.1:$2/$db?sslmode=disable" \
		prometheus-postgres-exporter --web.listen-address="127.0.0.1:$3" \
		--extend.query-path="$REPO/doc/monitoring/queries.yaml" \
		--disable-default-metrics --disable-settings-metrics >"$work/exporter-$1.log" 2>&1 &
	pids+=($!)
}
ea=$(free_port)
start_exporter a "$PGPORT" "$ea"
bport=$(free_port)
eb=$(free_port)

# Started before server b, which they wait for. The rules, with every "for" at 0 s; an Alertmanager that keeps what it gets
sed -E 's/^( *for:).*/\1 0s/' "$REPO/doc/monitoring/alerts.yaml" >"$work/alerts.yaml"
amport=$(free_port)
cat >"$work/alertmanager.yml" <<'YAML'
route:
  receiver: none
  group_wait: 1s
receivers:
  - name: none
YAML
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/am" \
	--web.listen-address="127.0.0.1:$amport" --cluster.listen-address= \
	--log.level=warn >"$work/alertmanager.log" 2>&1 &
pids+=($!)
pport=$(free_port)
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 5s
  scrape_timeout: 5s
  evaluation_interval: 1s
rule_files:
  - $work/alerts.yaml
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$amport']
scrape_configs:
  - job_name: postgres
    static_configs:
      - targets: ['127.0.0.1:$ea', '127.0.0.1:$eb']
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
	--web.listen-address="127.0.0.1:$pport" --rules.alert.resend-delay=1s --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)

# server b: a cluster of its own, on 127.0.0.1, its socket in $work/b
wait "$initdb_pid" || {
	sed 's/^/# /' "$work/b/initdb.log"; echo "Bail out! initdb of server b failed"; exit 1; }
{
	echo "port = $bport"
	echo "listen_addresses = '127.0.0.1'"
	echo "unix_socket_directories = '$work/b'"
	echo "fsync = off"
	# how the server loads the staged extension (as test/standby.sh)
	stage_settings | sed "s/^\([a-z_]*\)=\(.*\)$/\1 = '\2'/"
} >>"$work/b/data/postgresql.conf"
bstarted=1
timeout 60 runuser -u postgres -- "$bindir/pg_ctl" -D "$work/b/data" -l "$work/b/log" -w -t 50 start >/dev/null ||
	{ sed 's/^/# /' "$work/b/log"; echo "Bail out! server b does not start"; exit 1; }
qb() { psql -X -At -v ON_ERROR_STOP=1 -h "$work/b" -p "$bport" -U postgres "$@"; }
qb -d postgres -q -c "CREATE DATABASE $db" && setup_sql 21474836 | qb -d "$db" -q >/dev/null   # 1.0 %
ok $? "server b (initdb, 127.0.0.1:$bport): orders.id at 1 %, the same role"
start_exporter b "$bport" "$eb"


api() { curl -sg --max-time 5 "http://127.0.0.1:$pport/api/v1/$1"; }
# value QUERY: the values of an instant query's series, one a line, sorted
value() {
	curl -sG --max-time 5 --data-urlencode "query=$1" "http://127.0.0.1:$pport/api/v1/query" |
		"$py" -c 'import json,sys; print("\n".join(sorted(r["value"][1] for r in json.load(sys.stdin)["data"]["result"])))' 2>/dev/null
}
# alerts [STATE]: the storagelab alerts Prometheus has (firing by default),
# one line each: alertname server relation column_name
alerts() {
	api alerts | "$py" -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if a["state"] == sys.argv[1] and l["alertname"].startswith("Storagelab"):
        print(l["alertname"], l.get("server", "-"), l.get("relation", "-"), l.get("column_name", "-"))
' "${1:-firing}" 2>/dev/null | sort
}
# wait_for SECONDS CMD...: until CMD succeeds, at most SECONDS
wait_for() {
	local deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.5
	done
}
sa=127.0.0.1:$PGPORT
sb=127.0.0.1:$bport
firing() { alerts | grep -qx "$1"; }
# used A B: orders.id's used_pct on server a and on server b, as scraped
used() {
	[ "$(value "storagelab_int_overflow_used_pct{server=\"$sa\",relation=\"orders\",column_name=\"id\"}")" = "$1" ] &&
		[ "$(value "storagelab_int_overflow_used_pct{server=\"$sb\",relation=\"orders\",column_name=\"id\"}")" = "$2" ]
}

both_up() { [ "$(value 'sum(up)')" = 2 ] && used 99 1; }
elapsed "waiting for the scrapes"
wait_for 40 both_up
ok $? "Prometheus (127.0.0.1:$pport) scrapes both exporters (127.0.0.1:$ea, 127.0.0.1:$eb): orders.id at 99 on $sa, 1 on $sb"

elapsed "waiting for the alerts"
wait_for 30 firing "StoragelabIntegerKeyCritical $sa orders id"
ok $? "StoragelabIntegerKeyCritical fires for server $sa, relation orders, column id"
wait_for 20 firing "StoragelabCriticalFinding $sa orders id"
ok $? "StoragelabCriticalFinding fires for the same server, relation and column"
now=$(alerts)
echo "$now" | sed 's/^/# firing: /'
# b's series are there (scraped), and no alert names b
used 99 1 && ! grep -q " $sb " <<<"$now" && ! alerts pending | grep -q " $sb "
ok $? "no storagelab alert fires or is pending for server $sb (its orders.id scraped at 1 %)"
! grep -qE '^StoragelabScrape|^StoragelabIntegerKeyWarning' <<<"$now"
ok $? "no scrape alert, and no warning beside the critical one"
# the series no alert of this test is about are there for both servers
freeze_both() { [ "$(value 'count(count by (server) (storagelab_freeze_age_pct))')" = 2 ]; }
wait_for 20 freeze_both
ok $? "storagelab_freeze_age_pct has series for both servers"

# Alertmanager got it from Prometheus, with its labels and annotations
am_has() {
	curl -s --max-time 5 "http://127.0.0.1:$amport/api/v2/alerts?filter=alertname=%22StoragelabIntegerKeyCritical%22" \
		>"$work/am.json" &&
		"$py" -c '
import json, sys
a = json.load(open(sys.argv[1]))
sys.exit(0 if any(x["labels"].get("server") == sys.argv[2] and x["labels"].get("relation") == "orders"
                  and x["labels"].get("column_name") == "id" and "orders.id" in x["annotations"]["summary"]
                  for x in a) else 1)' "$work/am.json" "$sa"
}
elapsed "waiting for Alertmanager"
wait_for 20 am_has
ok $? "Alertmanager (127.0.0.1:$amport) lists StoragelabIntegerKeyCritical for $sa orders.id"
"$py" -m json.tool "$work/am.json" 2>/dev/null | sed 's/^/# alertmanager: /' | head -40

elapsed "migrating"
# migrate the key on server a with storagelab's script
qa -c "SELECT storagelab.bigint_migration_script('public.orders', 'id')" >"$work/migrate.sql" &&
	qa -q -f "$work/migrate.sql" >"$work/migrate.log" 2>&1 &&
	[ "$(qa -c "SELECT format_type(atttypid, atttypmod) FROM pg_attribute
	            WHERE attrelid = 'public.orders'::regclass AND attname = 'id'")" = bigint ]
ok $? "bigint_migration_script()'s script migrates orders.id on server a"
[ "$failed" -gt 0 ] && tail -20 "$work/migrate.log" | sed 's/^/# /'

# resolved by the migration, not by a failed scrape: the series is there,
# at bigint's scale
resolved() {
	[ "$(value "storagelab_int_overflow_used_pct{server=\"$sa\",relation=\"orders\",column_name=\"id\"} < 0.001")" != "" ] &&
		[ -z "$(alerts)" ] && [ -z "$(alerts pending)" ]
}
wait_for 30 resolved
ok $? "after the migration orders.id is scraped near 0 % on $sa, and no storagelab alert is firing or pending (resolved)"

# what the scrapes cost (not asserted: bench/ holds the goals)
elapsed "done"
curl -sG --max-time 5 --data-urlencode 'query=max_over_time(scrape_duration_seconds[5m])' \
	"http://127.0.0.1:$pport/api/v1/query" | "$py" -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print("# scrape duration of %s: at most %.3f s" % (r["metric"]["instance"], float(r["value"][1])))' 2>/dev/null
echo "# failed scrapes of the two exporters: $(value 'sum(count_over_time(up[5m]) - sum_over_time(up[5m]))')"
if [ "$failed" -gt 0 ]; then
	for f in exporter-a exporter-b prometheus alertmanager; do
		tail -10 "$work/$f.log" | sed "s/^/# $f: /"
	done
fi
exit $((failed > 0))

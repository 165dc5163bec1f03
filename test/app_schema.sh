#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): storagelab.findings on
# a schema in the shape of a real application, acted on as a DBA would.
#
# test/fixtures/app_schema.sql (157 tables, three hub keys near 2^31 with
# 32 to 39 referencing columns each, trigger functions calling integer
# helpers, dynamic SQL, views over row-type functions, a key no script can
# convert) is loaded and analyzed.  Then:
#   - findings: one finding per hub, its integer referencing columns listed in its
#     evidence; the unconvertible key has fix NULL and a message;
#   - every non-NULL fix is executed as written (superuser) and the script it
#     returns run with psql -v ON_ERROR_STOP=1 (online: phase by phase, the
#     phases read from its header), in the order of the findings; the other
#     mode on a copy of the database made before (createdb -T);
#   - every online phase of a hub's migration runs while pgbench (4 clients,
#     127.0.0.1, no retries) writes every table of the component in the
#     order opposite to the migration's (which goes through them by name)
#     and reads the views: start, copy, index, replay, swap, validate and
#     cleanup; no client transaction may fail (the script deletes nothing,
#     so the data checks below still hold).  Before that, each hub's start
#     and rollback, the first one's under pgbench too: rollback after start
#     drops the logs' triggers under the tables' ACCESS EXCLUSIVE, the locks
#     that every hub's cleanup takes under pgbench after it, so the other
#     hubs' rollbacks under load added the same locks on the same tables
#     (and about 5 s).  A rollback after the swap (the swap's locks again)
#     is run under load by test/online_lock_order.sh;
#   - after each mode: the same rows in every table (count and md5 of the
#     rows as jsonb, so column order does not matter), every column of each
#     hub's foreign-key component bigint, and test/fixtures/app_workload.sql
#     (writes through every trigger) runs without error, at ordinary keys and
#     again with the hubs' sequences past 2^31.
# Per-step timings go to stderr.  APP_SCHEMA_CONCURRENCY=0 leaves pgbench out.
# APP_SCHEMA_FIX_EDIT, a sed expression, edits every fix before it runs: on a
# build whose fixes fail, to see what would fail after them, e.g.
# APP_SCHEMA_FIX_EDIT="s/);\$/, function_hazards => 'widen');/".
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
A=storagelab_app_a B=storagelab_app_b
for db in $A $B; do dropdb --if-exists "$db" 2>/dev/null; done
q() { psql -X -At -v ON_ERROR_STOP=1 "$@" </dev/null; }
# the test's own catalog queries, without JIT (the product runs with the defaults)
qt() { PGOPTIONS='-c jit=off' q "$@"; }
step_start=$SECONDS
step() { echo "# step $1: $((SECONDS - step_start)) s" >&2; step_start=$SECONDS; }
firsterr() { grep -m1 -A1 'ERROR:' "$1" | tr '\n' ' ' | cut -c1-400; }
hubs="app.accounts cms.editors web.urls"
BIG=2147483647

createdb $A
q -q -d $A -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION storagelab' \
	-f test/fixtures/app_schema.sql -c 'ANALYZE' >"$work/load" 2>&1
ok $? "the application fixture loads $(firsterr "$work/load")"
[ "$(q -d $A -c "SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p')
                   AND relnamespace::regnamespace::text IN ('common', 'app', 'cms', 'web', 'links', 'billing', 'audit', 'metrics')")" -ge 150 ]
ok $? "it has at least 150 tables"
createdb -T $A --strategy=file_copy $B
step load

# Each hub's foreign-key component (the columns joined to its key through
# foreign keys, both ways) as schema|table|column|direct in $work/comp.HUB,
# direct when the column references the hub's key itself.
qt -d $A -F '|' -c "
WITH RECURSIVE edge AS MATERIALIZED (
  SELECT c.conrelid AS r1, c.conkey[i] AS a1, c.confrelid AS r2, c.confkey[i] AS a2, c.conparentid = 0 AS top
    FROM pg_constraint c, generate_subscripts(c.conkey, 1) i WHERE c.contype = 'f'
), und AS MATERIALIZED (SELECT r1, a1, r2, a2 FROM edge UNION SELECT r2, a2, r1, a1 FROM edge),
comp(hub, r, a) AS (
  SELECT a.attrelid, a.attrelid, a.attnum FROM pg_attribute a
   WHERE a.attrelid IN ($(echo "$hubs" | sed "s/\([^ ]*\)/'\1'::regclass/g; s/ /, /g")) AND a.attname = 'id'
  UNION SELECT comp.hub, u.r2, u.a2 FROM comp JOIN und u ON u.r1 = comp.r AND u.a1 = comp.a)
SELECT comp.hub::regclass, n.nspname, c.relname, a.attname,
       EXISTS (SELECT 1 FROM edge e WHERE e.r1 = comp.r AND e.a1 = comp.a AND e.top AND e.r2 = comp.hub AND e.r1 <> e.r2)
       AND a.atttypid <> 'int8'::regtype
  FROM comp JOIN pg_class c ON c.oid = comp.r JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_attribute a ON a.attrelid = comp.r AND a.attnum = comp.a ORDER BY 1, 2, 3, 4" >"$work/comp"
for hub in $hubs; do
	awk -F'|' -v h="$hub" '$1 == h { print $2 "|" $3 "|" $4 "|" $5 }' "$work/comp" >"$work/comp.$hub"
	[ "$(grep -c '|t$' "$work/comp.$hub")" -ge 20 ]
	ok $? "$hub: $(grep -c '|t$' "$work/comp.$hub") integer columns referencing it, $(wc -l <"$work/comp.$hub") columns in its component"
done
values() { sed "s/^\([^|]*\)|\([^|]*\)|\([^|]*\)|.*/('\1','\2','\3')/" | sort -u | paste -sd,; }
# The columns of every component that are not bigint in a database.
not_bigint() {  # db
	qt -d "$1" -c "SELECT string_agg(format('%s.%s.%s (%s)', s, t, c, coalesce(format_type(a.atttypid, NULL), 'missing')), ', ')
	                 FROM (VALUES $(cat "$work"/comp.*.* | values)) v(s, t, c)
	                 LEFT JOIN pg_attribute a ON a.attrelid = to_regclass(format('%I.%I', s, t)) AND a.attname = c AND NOT a.attisdropped
	                WHERE a.atttypid IS DISTINCT FROM 'int8'::regtype"
}
checksums="SELECT format('%I.%I %s', n.nspname, c.relname,
                  (xpath('/row/x/text()', query_to_xml(format('SELECT count(*) || '' '' || md5(coalesce(string_agg(to_jsonb(t)::text, E''\n'' ORDER BY to_jsonb(t)::text), '''')) AS x FROM %I.%I t', n.nspname, c.relname), false, true, '')))[1])
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND n.nspname IN ('common', 'app', 'cms', 'web', 'links', 'billing', 'audit', 'metrics')
              AND c.relname NOT LIKE 'storagelab\\_%' ORDER BY 1"
qt -d $A -c "$checksums" >"$work/sums.before"
step components

# The findings, read once (with JIT at its defaults).
q -d $A -F '|' -c "SELECT row_number() OVER (), category, relation::text, column_name, coalesce(fix, ''),
                          coalesce(message, ''), coalesce(evidence, '')
                     FROM storagelab.findings" >"$work/findings" 2>"$work/findings.err"
ok $? "storagelab.findings reads $(firsterr "$work/findings.err")"
step findings
for hub in $hubs; do
	# the int_overflow findings on a column of the hub's component
	awk -F'|' -v comp="$work/comp.$hub" 'BEGIN { while ((getline l < comp) > 0) { split(l, f, "|"); c[f[1] "." f[2] "|" f[3]] = 1 } }
		$2 == "int_overflow" && (($3 "|" $4) in c) { print }' "$work/findings" >"$work/found.$hub"
	[ "$(wc -l <"$work/found.$hub")" = 1 ]
	ok $? "$hub: one finding for its component ($(wc -l <"$work/found.$hub") found: $(cut -d'|' -f3,4 "$work/found.$hub" | head -4 | paste -sd' ') ...)"
	missing=$(grep '|t$' "$work/comp.$hub" | while IFS='|' read -r s t c _; do
		cut -d'|' -f7- "$work/found.$hub" | head -1 | grep -qF "$t.$c" || echo "$s.$t.$c"; done | paste -sd' ')
	[ -z "$missing" ]
	ok $? "$hub: the finding's evidence lists every referencing column (missing: $(echo "$missing" | cut -c1-200))"
done
line=$(awk -F'|' '$3 == "metrics.samples" && $4 == "id"' "$work/findings")
[ -n "$line" ] && [ -z "$(echo "$line" | cut -d'|' -f5)" ] && [ -n "$(echo "$line" | cut -d'|' -f6)" ]
ok $? "metrics.samples.id (a BRIN int4_minmax_multi_ops index): a finding with fix NULL and a message ($(echo "$line" | cut -d'|' -f5,6 | cut -c1-200))"

# bench_start DB COMPONENT-FILE: pgbench in the background (its pid in
# $bench_pid) writing every table of the component in the order opposite to
# the migration's, deleting nothing, and reading the views; returns once its
# 4 clients are connected.  Every failed or aborted client transaction is
# printed to $work/bench.err (--verbose-errors).
bench_start() {
	{ echo 'BEGIN;'
	  sort -r "$2" | while IFS='|' read -r s t c _; do echo "DELETE FROM \"$s\".\"$t\" WHERE \"$c\" = -1;"; done
	  echo 'COMMIT;'; } >"$work/reverse.sql"
	echo 'SELECT count(*) FROM app.account_directory; SELECT count(*) FROM web.url_list;
	      SELECT count(*) FROM cms.editor_activity; SELECT count(*) FROM app.open_orders;' >"$work/views.sql"
	PGHOST=127.0.0.1 pgbench -n -c 4 -j 2 -T 900 --verbose-errors -f "$work/reverse.sql@3" -f "$work/views.sql@1" "$1" \
		>"$work/bench.out" 2>"$work/bench.err" </dev/null &
	bench_pid=$!
	local deadline=$((SECONDS + 30))
	while [ $SECONDS -lt $deadline ] &&
		[ "$(qt -d "$1" -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench' AND datname = current_database()")" -lt 4 ]; do
		sleep 0.05
	done
	echo "# pgbench connected: $((SECONDS + 30 - deadline)) s" >&2
}
# bench_stop LABEL: stops pgbench; no client transaction may have failed.
bench_stop() {
	local running errors
	kill -0 $bench_pid 2>/dev/null
	running=$?
	kill $bench_pid 2>/dev/null
	wait $bench_pid 2>/dev/null
	errors=$(grep -c 'error\|abort' "$work/bench.err")
	[ "$running" = 0 ] && [ "$errors" = 0 ]
	ok $? "$1: no client transaction of pgbench failed during the phases ($errors errors$( [ "$running" = 0 ] || echo ', pgbench had stopped'): $(grep -m2 'error\|abort' "$work/bench.err" | cut -c1-200 | paste -sd' '))"
}

# run_fix DB FIX-SQL LABEL [COMPONENT-FILE]: generate the script and run it
# (online: every phase of its header, in order, under pgbench when the
# component is given).
run_fix() {
	local db=$1 fix=$2 label=$3 comp=${4:-} phases p rc=0 t0=$SECONDS
	if ! q -d "$db" -c "$fix" >"$work/script.sql" 2>"$work/err"; then
		ok 1 "$label generates: $(firsterr "$work/err")"
		return 1
	fi
	echo "# generated: $((SECONDS - t0)) s" >&2
	ok 0 "$label generates"
	phases=$(sed -n 's/^--   psql .*-v phase=\([a-z]*\) .*/\1/p' "$work/script.sql" | paste -sd' ')
	if [ -n "$phases" ]; then
		# phase rollback once after start (it drops the logs' triggers under the tables' ACCESS
		# EXCLUSIVE, as cleanup does), under pgbench for the first online migration only (see the
		# head of this file), then the migration from its start under pgbench
		local loaded=
		[ -n "$comp" ] && [ "${APP_SCHEMA_CONCURRENCY:-1}" != 0 ] && loaded=1
		if [ -n "$loaded" ] && [ -z "${rollback_loaded:-}" ]; then
			bench_start "$db" "$comp"
			rollback_loaded=1 loaded=
		fi
		if [ -n "$comp" ] && case " $phases " in *" start "*) true;; *) false;; esac; then
			for p in start rollback; do
				t0=$SECONDS
				q -q -v phase="$p" -d "$db" -f "$work/script.sql" >"$work/err" 2>&1 || { rc=1; break; }
				echo "# phase $p: $((SECONDS - t0)) s" >&2
			done
			[ $rc = 0 ] && [ "$(qt -d "$db" -c "SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%'")" = 0 ] || rc=1
			ok $rc "$label: phases start and rollback run$( [ -n "$loaded" ] && echo ' (before pgbench)'), nothing of the migration is left$( [ $rc = 0 ] || echo ": phase $p: $(firsterr "$work/err")")"
			rc=0
		fi
		[ -n "$loaded" ] && bench_start "$db" "$comp"
		for p in $phases; do
			t0=$SECONDS
			q -q -v phase="$p" -d "$db" -f "$work/script.sql" >"$work/err" 2>&1 || { rc=1; break; }
			echo "# phase $p: $((SECONDS - t0)) s" >&2
		done
		ok $rc "$label: its script runs, phases $phases$( [ $rc = 0 ] || echo ": phase $p failed: $(firsterr "$work/err")")"
		[ -n "$comp" ] && [ "${APP_SCHEMA_CONCURRENCY:-1}" != 0 ] && bench_stop "$label"
		# a failed migration is rolled back, so that the next ones can run
		[ $rc = 0 ] || q -q -v phase=rollback -d "$db" -f "$work/script.sql" >/dev/null 2>&1
	else
		q -q -d "$db" -f "$work/script.sql" >"$work/err" 2>&1
		rc=$?
		ok $rc "$label: its script runs$( [ $rc = 0 ] || echo ": $(firsterr "$work/err")")"
	fi
	return $rc
}

# Each fix once per component: the first finding of a hub's component runs;
# more findings of the same component (see "one finding" above) are not run
# (their component is converted, or its fix failed already).
run_fixes() {  # db sed-expression-on-the-fix label
	local db=$1 sub=$2 label=$3 i cat rel col fix rest hub seen=" " mine
	while IFS='|' read -r i cat rel col fix rest; do
		[ -n "$fix" ] || continue
		mine=""
		for hub in $hubs; do
			awk -F'|' -v r="$rel" -v c="$col" '($1 "." $2) == r && $3 == c { f = 1 } END { exit !f }' "$work/comp.$hub" && mine=$hub
		done
		if [ -n "$mine" ]; then
			case "$seen" in *" $mine "*) continue;; esac
			seen="$seen$mine "
		fi
		[ -n "$sub" ] && fix=$(echo "$fix" | sed "$sub")
		[ -n "${APP_SCHEMA_FIX_EDIT:-}" ] && fix=$(echo "$fix" | sed "$APP_SCHEMA_FIX_EDIT")
		run_fix "$db" "$fix" "$label: finding $i ($cat $rel.$col): $fix" "${mine:+$work/comp.$mine}"
		step "fix-$label-$i"
	done <"$work/findings"
}

# check_after DB MODE: data, types, the workload at ordinary keys and past 2^31.
check_after() {
	local db=$1 mode=$2 bad rc
	qt -d "$db" -c "$checksums" >"$work/sums.after"
	diff "$work/sums.before" "$work/sums.after" >"$work/sums.diff"
	ok $? "$mode: every table has the same rows afterwards $(head -c 300 "$work/sums.diff" | tr '\n' ' ')"
	bad=$(not_bigint "$db")
	[ -z "$bad" ]
	ok $? "$mode: every column of the hubs' components is bigint (not: $(echo "$bad" | cut -c1-300))"
	q -q -d "$db" -f test/fixtures/app_workload.sql >"$work/wl" 2>&1
	ok $? "$mode: the workload runs at ordinary keys $(firsterr "$work/wl")"
	q -d "$db" -c "SELECT setval(pg_get_serial_sequence('app.accounts', 'id'), $BIG::bigint + 1000),
	                      setval(pg_get_serial_sequence('cms.editors', 'id'), $BIG::bigint + 2000),
	                      setval(pg_get_serial_sequence('web.urls', 'id'), $BIG::bigint + 3000)" >"$work/wl" 2>&1
	rc=$?
	ok $rc "$mode: the hubs' sequences move past 2^31 $(firsterr "$work/wl")"
	if [ $rc = 0 ]; then
		q -q -d "$db" -f test/fixtures/app_workload.sql >"$work/wl" 2>&1
		rc=$?
		ok $rc "$mode: the workload runs with keys past 2^31 $(firsterr "$work/wl")"
	else
		ok 1 "$mode: the workload runs with keys past 2^31 (not run: the sequences are not past 2^31)"
	fi
	[ "$(q -d "$db" -c "SELECT (SELECT count(*) FROM app.events WHERE account_id > $BIG)
	                         + (SELECT count(*) FROM cms.edits WHERE editor_id > $BIG AND account_id > $BIG)
	                         + (SELECT count(*) FROM links.l_account_editor WHERE entity0 > $BIG AND entity1 > $BIG)" 2>&1)" = 3 ]
	ok $? "$mode: rows with keys past 2^31 were written through the triggers"
	step "check-$mode"
}

run_fixes $A "" "as written"
check_after $A "as written"
# The other mode, where a fix names one, on the copy made before.
if cut -d'|' -f5 "$work/findings" | grep -q "'online'\|'blocking'"; then
	run_fixes $B "s/'online'/'OTHER'/g; s/'blocking'/'online'/g; s/'OTHER'/'blocking'/g" "other mode"
	check_after $B "other mode"
fi

for db in $A $B; do dropdb --if-exists "$db"; done
echo "1..$n"
exit $((failed > 0))

#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): every reader and view
# under concurrent writes and VACUUM, and DROP / TRUNCATE of a table while a
# page reader is reading it.
#
# pgbench (4 clients) writes for a few seconds while one session runs
# VACUUM in a loop and another runs every storagelab reader and view in a
# loop.  Nothing may fail: no reader error, no failed pgbench transaction.
# Then a heap_visibility() read is started, and DROP TABLE / TRUNCATE are
# issued while it holds its lock: they wait for it (its ACCESS SHARE lock),
# the reader returns its row, and the server keeps running.
#
# Data sized to the oracle: pgbench at scale 1 (100,000 accounts, about
# 1,640 pages: the readers still read far past the 256 kB BAS_BULKREAD ring
# of 32 pages), tables to drop and truncate of 250,000 rows (about 2,100
# pages) instead of 1.5 million.  The DDL no longer needs a read long
# enough to be caught by polling: a session holding ACCESS EXCLUSIVE queues
# the read, then the DDL behind it, and lets go only when both wait, so the
# DDL is always issued while the read is in progress, whatever its length.
# The gate counts only the read's and the DDL's sessions (by their
# application_name), and prints every lock of the database when it fails.
# Setting up (pgbench -i, the tables) is not a test: it bails out.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
SECONDS_OF_LOAD=${CONCURRENCY_SECONDS:-8}

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
export PGDATABASE=storagelab_concurrency
dropdb --if-exists "$PGDATABASE" 2>/dev/null
createdb "$PGDATABASE"
q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }

ROWS=250000
bail() { echo "Bail out! $*"; exit 1; }
pgbench -i -q -s 1 --foreign-keys >"$work/init" 2>&1 ||
	bail "pgbench -i -s 1 --foreign-keys failed: $(head -c 300 "$work/init" | tr '\n' ' ')"
q -q >"$work/init" 2>&1 <<SQL || bail "could not set up the tables: $(head -c 300 "$work/init" | tr '\n' ' ')"
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE blobs (id serial PRIMARY KEY, b bytea);
INSERT INTO blobs (b) SELECT decode(repeat(md5(g::text), 100 + g % 300), 'hex') FROM generate_series(1, 2000) g;
CREATE TABLE victim AS SELECT g AS id, md5(g::text) AS t FROM generate_series(1, $ROWS) g;
CREATE TABLE victim2 AS SELECT * FROM victim;
ANALYZE;
SQL

# Writers: pgbench with 4 clients; VACUUM in a loop; blob updates in a loop.
pgbench -n -c 4 -j 2 -T "$SECONDS_OF_LOAD" >"$work/pgbench" 2>&1 &
bench_pid=$!
( end=$((SECONDS + SECONDS_OF_LOAD)); while [ $SECONDS -lt $end ]; do
	q -q -c 'VACUUM pgbench_accounts, pgbench_branches, pgbench_tellers, blobs' || echo vacuum-failed
  done ) >"$work/vacuum" 2>&1 &
( end=$((SECONDS + SECONDS_OF_LOAD)); while [ $SECONDS -lt $end ]; do
	q -q -c "UPDATE blobs SET b = b || '\x00'::bytea WHERE id % 50 = (random() * 50)::int" || echo update-failed
  done ) >"$work/update" 2>&1 &

# Readers, in a loop for the same time.
readers=(
	"SELECT * FROM storagelab.heap_visibility('pgbench_accounts')"
	"SELECT * FROM storagelab.heap_visibility('pgbench_accounts', 50)"
	"SELECT * FROM storagelab.heap_visibility_toast('blobs')"
	"SELECT * FROM storagelab.toast_profile('blobs', 'b')"
	"SELECT * FROM storagelab.toast_profile('blobs', 'b', 100)"
	"SELECT count(*) FROM storagelab.int_overflow"
	"SELECT * FROM storagelab.int_overflow_scan('pgbench_history')"
	"SELECT count(*) FROM storagelab.visibility"
	"SELECT count(*) FROM storagelab.bytea_storage"
	"SELECT count(*) FROM storagelab.column_waste"
	"SELECT count(*) FROM storagelab.alignment_padding"
	"SELECT storagelab.column_profile('pgbench_tellers')"
	"SELECT length(storagelab.bigint_migration_script('pgbench_accounts', 'aid'))"
)
rounds=0 errors=0
end=$((SECONDS + SECONDS_OF_LOAD))
while [ $SECONDS -lt $end ]; do
	for r in "${readers[@]}"; do
		q -c "$r" >/dev/null 2>>"$work/readers" || errors=$((errors + 1))
	done
	rounds=$((rounds + 1))
done
wait $bench_pid
bench_rc=$?
wait
[ "$errors" = 0 ]
ok $? "$rounds rounds of ${#readers[@]} readers and views under load: $errors errors $(head -c 300 "$work/readers" | tr '\n' ' ')"
[ "$bench_rc" = 0 ] && grep -q "number of failed transactions: 0" "$work/pgbench" ||
	{ [ "$bench_rc" = 0 ] && ! grep -q "number of failed transactions" "$work/pgbench"; }
ok $? "pgbench's 4 clients saw no failed transaction ($(grep -m1 '^tps' "$work/pgbench"))"
! grep -q failed "$work/vacuum" "$work/update"
ok $? "VACUUM and the bytea updates ran beside the readers without error"

# DROP / TRUNCATE while a full heap_visibility() read is in progress.
# The read and the DDL run with application names of their own, so that the
# gate counts their lock waits only (not another database's, not a worker's).
# locks_sql: every lock of this database's sessions (and of shared
# objects), held or waited for, with its session: the failure messages.
locks_sql="SELECT string_agg(format('%s: %s %s %s %s', coalesce(nullif(a.application_name, ''), a.backend_type, l.pid::text), l.mode,
                                    CASE WHEN l.granted THEN 'held' ELSE 'waited for since ' || l.waitstart END, l.locktype,
                                    coalesce(l.relation::regclass::text, l.transactionid::text, l.virtualxid, l.objid::text)),
                             '; ' ORDER BY l.granted, l.waitstart, l.pid)
             FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.pid <> pg_backend_pid() AND l.locktype <> 'virtualxid'
              AND (l.database IS NULL OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
# waiting TABLE APP: returns once the session named APP waits for a lock
# on TABLE (2 minutes at most).
waiting() {
	q -c "DO \$\$ BEGIN
	  FOR i IN 1..12000 LOOP
	    PERFORM pg_stat_clear_snapshot();   -- pg_stat_activity as it is now
	    EXIT WHEN (SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	                WHERE l.relation = '$1'::regclass AND NOT l.granted AND a.application_name = '$2') >= 1;
	    PERFORM pg_sleep(0.01);
	  END LOOP;
	END \$\$" >/dev/null
}
for target in "DROP TABLE victim" "TRUNCATE victim2"; do
	table=${target##* }
	# The gate: ACCESS EXCLUSIVE until the read and then the DDL wait
	# behind it, in that order; released, the read gets its lock first and
	# the DDL waits for the read.
	q -c "BEGIN" -c "LOCK TABLE $table IN ACCESS EXCLUSIVE MODE" -c "SELECT 'locked'" \
		-c "DO \$\$ DECLARE seen text[]; BEGIN
		  -- 90 s at most: less than the DDL's lock_timeout, so that a failure
		  -- shows what the DDL waits for
		  WHILE clock_timestamp() < now() + interval '90 s' LOOP
		    PERFORM pg_stat_clear_snapshot();   -- pg_stat_activity as it is now, not at BEGIN
		    seen := ARRAY(SELECT a.application_name || ' ' || l.mode
		                    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		                   WHERE l.relation = '$table'::regclass AND NOT l.granted
		                     AND a.application_name IN ('hv_read', 'hv_ddl')
		                   ORDER BY l.waitstart NULLS LAST);
		    EXIT WHEN cardinality(seen) >= 2;
		    PERFORM pg_sleep(0.01);
		  END LOOP;
		  IF seen IS DISTINCT FROM '{hv_read AccessShareLock,hv_ddl AccessExclusiveLock}' THEN
		    RAISE EXCEPTION 'the read and then the DDL did not queue for the lock: %', ($locks_sql)
		      USING DETAIL = 'waiting, in order: ' || array_to_string(seen, ', ');
		  END IF;
		END \$\$" -c "COMMIT" >"$work/gate" 2>&1 &
	gate=$!
	deadline=$((SECONDS + 120))
	until grep -q locked "$work/gate" || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
	( t0=$SECONDS; PGAPPNAME=hv_read q -c "SELECT tuples FROM storagelab.heap_visibility('$table')"
	  rc=$?; echo "read: $((SECONDS - t0)) s"; exit $rc ) >"$work/read" 2>&1 &
	reader=$!
	waiting "$table" hv_read 2>>"$work/gate"
	t0=$SECONDS
	PGAPPNAME=hv_ddl q -c "SET lock_timeout = '150s'; $target" >"$work/ddl" 2>&1
	ddl_rc=$?
	echo "DDL: $((SECONDS - t0)) s" >>"$work/ddl"
	[ "$ddl_rc" = 0 ] || q -c "$locks_sql" >>"$work/ddl" 2>&1
	wait $reader
	read_rc=$?
	wait $gate
	gate_rc=$?
	[ "$gate_rc" = 0 ]
	ok $? "$target is issued while a heap_visibility() read of $table holds its lock ($(grep -m1 'ERROR' "$work/gate"))"
	[ "$ddl_rc" = 0 ] && [ "$read_rc" = 0 ] && grep -qx "$ROWS" "$work/read"
	ok $? "$target during a heap_visibility() read: waits for it, the read returns all $ROWS tuples ($(head -c 200 "$work/read" | tr '\n' ' ') $(head -c 600 "$work/ddl" | tr '\n' ' '))"
done
[ "$(q -c 'SELECT 1')" = 1 ]
ok $? "the server is still up"

dropdb "$PGDATABASE"
echo "1..$n"
exit $((failed > 0))

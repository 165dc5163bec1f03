#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): the throttle of the
# online copy and replay (extension/29_throttle.sql).
#
# A private primary (initdb, wal_level = logical for a logical slot) with a
# streaming standby on 127.0.0.1 (pg_basebackup): the suite's cluster has
# wal_level replica, and a paused standby of it would throttle the copies of
# every other test running beside this one.  Two tables of 50 heap blocks
# (3,000 rows), copied one block per batch (copy_batch_time 0,
# backfill_batch_blocks 1): enough batches to watch a copy stop and go on.
#   s1.t1: the standby's replay paused with pg_wal_replay_pause() during the
#          copy (the phase's own CALL, paced 0.2 s between batches, over a
#          replica lag limit of 0.1 s): the copy stops within 2 batches and
#          its progress row shows the reason; after pg_wal_replay_resume() it
#          finishes, and the new table's rows equal the old one's (md5 of
#          the ordered rows);
#   s2.t2: throttle.query true after 3 batches and throttle.max_wait 0.5 s:
#          phase copy fails with 55000 and its progress row says so; run
#          again with a logical slot (test_decoding) nobody consumes, it
#          resumes after batch 3 and waits on the slot's lag; after
#          pg_replication_slot_advance() it goes on, after the slot is
#          dropped it finishes, every block copied once, rows equal.  Phase
#          replay throttled too long fails the same way and resumes; a
#          failing throttle.query fails the phase with its own SQLSTATE.
#   s2.toasty: a storage script's TOAST rewrite throttled too long fails
#          with 55000.
# THROTTLE_DEBUG=1 traces each command with the seconds elapsed, to stderr.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
. "$REPO/scripts/lib.sh"
bindir=/usr/lib/postgresql/$PG_MAJOR/bin

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
work=$(mktemp -d)
chown postgres "$work"
chmod 700 "$work"
pport=$(free_port)
sport=$(free_port)
while [ "$sport" = "$pport" ]; do sport=$(free_port); done
stop_all() {
	kill $(jobs -p) 2>/dev/null
	runuser -u postgres -- "$bindir/pg_ctl" -D "$work/s" -m immediate stop >/dev/null 2>&1
	runuser -u postgres -- "$bindir/pg_ctl" -D "$work/p" -m immediate stop >/dev/null 2>&1
	rm -rf "$work"
}
trap stop_all EXIT
[ -n "${THROTTLE_DEBUG:-}" ] && trap 'echo "# $SECONDS s: $BASH_COMMAND" >&2' DEBUG
bail() { echo "Bail out! $1"; cat "$work"/*log 2>/dev/null | tail -20; exit 1; }

qp() { psql -X -At -v ON_ERROR_STOP=1 -h "$work" -p "$pport" -U postgres -d postgres "$@"; }
qs() { psql -X -At -v ON_ERROR_STOP=1 -h "$work" -p "$sport" -U postgres -d postgres "$@"; }
# wait_for SQL: until the primary answers t to SQL (60 s at most).
wait_for() {
	local deadline=$((SECONDS + 60))
	until [ "$(qp -c "$1" 2>/dev/null)" = t ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
}

runuser -u postgres -- "$bindir/initdb" -D "$work/p" -A trust -U postgres --no-sync >"$work/initdb.log" 2>&1 ||
	bail "initdb failed"
cat >>"$work/p/postgresql.conf" <<CONF
port = $pport
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
wal_level = logical
fsync = off
CONF
stage_settings | sed "s/^\([a-z_]*\)=\(.*\)$/\1 = '\2'/" >>"$work/p/postgresql.conf"
runuser -u postgres -- "$bindir/pg_ctl" -D "$work/p" -l "$work/p.log" -w start >/dev/null || bail "the primary does not start"
runuser -u postgres -- "$bindir/pg_basebackup" -h 127.0.0.1 -p "$pport" -U postgres -D "$work/s" -X stream -R -c fast \
	>"$work/basebackup.log" 2>&1 || bail "pg_basebackup failed"
cat >>"$work/s/postgresql.conf" <<CONF
port = $sport
unix_socket_directories = '$work'
cluster_name = 'throttle_standby'
CONF
runuser -u postgres -- "$bindir/pg_ctl" -D "$work/s" -l "$work/s.log" -w start >/dev/null || bail "the standby does not start"

qp -q <<'SQL' || bail "fixtures"
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
INSERT INTO storagelab.settings VALUES ('bigint_migration.copy_batch_time', '0'), ('bigint_migration.backfill_batch_blocks', '1'),
  ('throttle.check_interval', '20ms'), ('throttle.max_replica_lag', '100ms');
CREATE SCHEMA s1; CREATE SCHEMA s2;
CREATE TABLE s1.t1 (id int PRIMARY KEY, v text NOT NULL);
INSERT INTO s1.t1 SELECT g, repeat(md5(g::text), 3) FROM generate_series(1, 3000) g;
CREATE TABLE s2.t2 AS SELECT * FROM s1.t1;
ALTER TABLE s2.t2 ADD PRIMARY KEY (id);
CREATE TABLE s2.toasty (id int PRIMARY KEY, b bytea);
INSERT INTO s2.toasty SELECT g, decode(repeat(md5(g::text), 200), 'hex') FROM generate_series(1, 50) g;
SQL
for s in 1 2; do
	qp -c "SELECT storagelab.bigint_migration_script('s$s.t$s', 'id', mode => 'online')" >"$work/t$s.sql" &&
		psql -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$pport" -U postgres -d postgres -v phase=start -f "$work/t$s.sql" >/dev/null 2>&1 ||
		bail "online script of s$s.t$s, phase start"
done
wait_for "SELECT count(*) = 1 FROM pg_stat_replication WHERE application_name = 'throttle_standby' AND state = 'streaming'" ||
	bail "the standby does not stream"

# progress SCHEMA COLUMNS: columns of the progress row of SCHEMA's table.
progress() { qp -c "SELECT $2 FROM storagelab.bigint_migration_progress WHERE relation LIKE '$1.%'"; }
# same_rows N: sN.tN and its new table (storagelab_new_...) have the same rows.
same_rows() {
	local new
	new=$(qp -c "SELECT oid::regclass FROM pg_class WHERE relnamespace = 's$1'::regnamespace AND relname LIKE 'storagelab\_new\_%' AND relkind = 'r'")
	[ -n "$new" ] && [ "$(qp -c "SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM s$1.t$1 t)
	                             = (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM $new t)")" = t ]
}

# 1. The standby's replay paused during the copy.
call=$(grep '^CALL storagelab.rewrite_online_copy(' "$work/t1.sql" | sed "s/, '0');\$/, '0.2 s');/")
[ -n "$call" ] || bail "no copy CALL in the script of s1.t1"
qp -c "$call" >"$work/copy1.out" 2>&1 &
copy=$!
wait_for "(SELECT batches >= 2 FROM storagelab.bigint_migration_progress WHERE relation LIKE 's1.%')" || bail "the copy of s1.t1 does not start"
qs -c "SELECT pg_wal_replay_pause()" >/dev/null
deadline=$((SECONDS + 60))
until [ "$(qs -c "SELECT pg_get_wal_replay_pause_state()")" = paused ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
b0=$(progress s1 batches)
wait_for "(SELECT status ~ '^throttled: replica lag [0-9]+\.[0-9] s on standby throttle_standby \(limit 0\.1 s\)$'
                  AND substring(status FROM 'lag ([0-9.]+) s')::numeric >= 1
             FROM storagelab.bigint_migration_progress WHERE relation LIKE 's1.%')"
ok $? "replay paused: the copy's progress row, read by another session, says 'throttled: replica lag ... s on standby throttle_standby (limit 0.1 s)' ($(progress s1 status))"
b1=$(progress s1 batches)
[ $((b1 - b0)) -le 2 ] && [ "$(progress s1 done)" = f ]
ok $? "the copy stopped within 2 batches of the pause ($b0 batches when paused, $b1 throttled)"
qs -c "SELECT pg_wal_replay_resume()" >/dev/null
wait $copy
ok $? "after pg_wal_replay_resume() the copy finishes ($(tr '\n' ' ' <"$work/copy1.out" | cut -c1-300))"
[ "$(progress s1 "done AND status IS NULL AND throttled_seconds > 0")" = t ]
ok $? "its progress row: done, no status, throttled_seconds $(progress s1 throttled_seconds)"
same_rows 1
ok $? "s1.t1 and its new table have the same rows (md5 of the ordered rows)"

# 2. throttle.max_wait: phase copy fails after 3 batches (throttle.query).
phase2() { psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$work" -p "$pport" -U postgres -d postgres -v phase="$1" -f "$work/t2.sql"; }
qp -q -c "UPDATE storagelab.settings SET value = 'off' WHERE name = 'throttle.max_replica_lag'" \
	-c "INSERT INTO storagelab.settings VALUES ('throttle.max_wait', '0.5s'), ('throttle.query',
	      \$\$SELECT batches >= 3 FROM storagelab.bigint_migration_progress WHERE relation LIKE 's2.%'\$\$)"
phase2 copy >"$work/copy2.out" 2>&1
st=$?
[ $st != 0 ] && grep -q "ERROR:  55000: the copy of migration .* was throttled for longer than throttle.max_wait (0.5s)" "$work/copy2.out" &&
	grep -q "HINT:  Run the phase again: it resumes where it stopped" "$work/copy2.out"
ok $? "throttle.query true for longer than throttle.max_wait: phase copy fails with 55000 and the hint ($(grep ERROR "$work/copy2.out"))"
[ "$(progress s2 "batches = 3 AND NOT done AND status = 'stopped: throttled longer than throttle.max_wait: throttle.query returned true'")" = t ]
ok $? "its progress row: 3 batches, not done, '$(progress s2 status)'"

# 3. Run again with a logical slot nobody consumes: it resumes, then waits.
qp -q -c "DELETE FROM storagelab.settings WHERE name = 'throttle.query'" \
	-c "UPDATE storagelab.settings SET value = '30min' WHERE name = 'throttle.max_wait'" \
	-c "INSERT INTO storagelab.settings VALUES ('throttle.max_slot_lag_bytes', '128kB')" || bail "settings"
qp -c "SELECT pg_create_logical_replication_slot('throttle_slot', 'test_decoding')" >/dev/null || bail "logical slot"
phase2 copy >"$work/copy2b.out" 2>&1 &
copy=$!
wait_for "(SELECT status ~ '^throttled: slot lag [0-9]+ kB on logical slot throttle_slot \(limit 128 kB\)$' FROM storagelab.bigint_migration_progress WHERE relation LIKE 's2.%')"
ok $? "run again with a logical slot not consumed: phase copy waits, its progress row says so ($(progress s2 status))"
b0=$(progress s2 batches)
[ "$(progress s2 "NOT done AND batches > 3")" = t ]
ok $? "the copy resumed after batch 3 and is not done ($b0 batches)"
qp -c "SELECT pg_replication_slot_advance('throttle_slot', pg_current_wal_lsn())" >/dev/null
wait_for "(SELECT batches > $b0 FROM storagelab.bigint_migration_progress WHERE relation LIKE 's2.%')"
ok $? "after pg_replication_slot_advance() the copy goes on ($(progress s2 batches) batches)"
qp -c "SELECT pg_drop_replication_slot('throttle_slot')" >/dev/null
wait $copy
ok $? "after the slot is dropped phase copy finishes ($(grep -v '^LOCATION' "$work/copy2b.out" | tr '\n' ' ' | cut -c1-400))"
[ "$(progress s2 "done AND status IS NULL AND batches = max_block + 1")" = t ] && same_rows 2
ok $? "every block copied once ($(progress s2 batches) batches for $(progress s2 max_block) blocks), no status, and s2.t2 and its new table have the same rows"

# Phase replay: throttled too long, it fails; run again, it applies the log.
phase2 index >/dev/null 2>&1 || bail "phase index of s2.t2"
qp -q -c "UPDATE s2.t2 SET v = 'changed' WHERE id <= 10" \
	-c "UPDATE storagelab.settings SET value = '0.5s' WHERE name = 'throttle.max_wait'" \
	-c "INSERT INTO storagelab.settings VALUES ('throttle.query', 'SELECT true')"
phase2 replay >"$work/replay2.out" 2>&1
[ $? != 0 ] && grep -q "ERROR:  55000: the replay of migration .* was throttled for longer than throttle.max_wait" "$work/replay2.out" &&
	[ "$(progress s2 "status LIKE 'stopped: %'")" = t ]
ok $? "phase replay throttled too long: 55000, the progress row says stopped"
qp -q -c "DELETE FROM storagelab.settings WHERE name = 'throttle.query'"
phase2 replay >"$work/replay2b.out" 2>&1 && same_rows 2 && [ "$(progress s2 "status IS NULL")" = t ]
ok $? "run again, phase replay applies the changes (the rows equal again) and clears the status"
qp -q -c "INSERT INTO storagelab.settings VALUES ('throttle.query', 'SELECT 1/0')"
phase2 replay >"$work/replay2c.out" 2>&1
[ $? != 0 ] && grep -q "ERROR:  22012: throttle.query failed: division by zero" "$work/replay2c.out" &&
	grep -q "HINT:  Fix the setting throttle.query" "$work/replay2c.out"
ok $? "a failing throttle.query fails the phase with its SQLSTATE and a hint ($(grep ERROR "$work/replay2c.out"))"

# 4. The TOAST rewrite of a storage migration script.
qp -q -c "UPDATE storagelab.settings SET value = 'SELECT true' WHERE name = 'throttle.query'"
qp -c "SELECT storagelab.storage_migration_script('s2.toasty', 'b', 'external', true)" >"$work/toast.sql"
psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$work" -p "$pport" -U postgres -d postgres -f "$work/toast.sql" >"$work/toast.out" 2>&1
[ $? != 0 ] && grep -q "ERROR:  55000: the rewrite of s2.toasty was throttled for longer than throttle.max_wait" "$work/toast.out"
ok $? "the TOAST rewrite throttled too long fails with 55000 ($(grep ERROR "$work/toast.out"))"

echo "1..$n"
exit $((failed > 0))

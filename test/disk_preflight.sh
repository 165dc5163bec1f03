#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): the disk pre-flight of
# the migration scripts (extension/68_disk_preflight.sql) against a real
# small filesystem, and the WAL figures of the online phases
# (extension/69_online_wal.sql).
#
# As root it mounts an 8 MB tmpfs, gives it to the server's operating-system
# user and makes a tablespace there.  A table of about 4 MB (heap and key
# index; 45,000 short rows) fits, its second copy does not: phase start of
# the online INT -> BIGINT script, the blocking script and the blocking
# layout script refuse with 53100 and the numbers, and leave nothing behind.
# A table of 2,000 rows beside it is migrated online, phase by phase, with
# the WAL each phase wrote in its progress row; a filler table written
# between its copy and index phases makes phase index refuse, and dropping
# it lets index run.  Sizes: the smallest that keep the copy of the big
# table over the free space with every margin of error of the estimate.
# Without root or a mountable tmpfs the whole file is skipped, saying why.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root to mount a small tmpfs for a tablespace"
	exit 0
fi
db=storagelab_disk
spc=storagelab_disk_small
mnt=$(mktemp -d /tmp/storagelab-disk.XXXXXX)
chmod 755 "$mnt"
if ! mount -t tmpfs -o size=8M,mode=755 storagelab_disk "$mnt" 2>"$mnt.err"; then
	echo "1..0 # SKIP cannot mount a tmpfs: $(tr '\n' ' ' <"$mnt.err")"
	rm -rf "$mnt" "$mnt.err"
	exit 0
fi
rm -f "$mnt.err"
work=$(mktemp -d)
drop_role() {
	psql -X -q -c "DO \$\$BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'storagelab_disk_role') THEN
	                 DROP OWNED BY storagelab_disk_role; DROP ROLE storagelab_disk_role; END IF; END\$\$" >/dev/null 2>&1
}
cleanup() {
	dropdb --if-exists "$db" >/dev/null 2>&1
	drop_role
	psql -X -q -c "DROP TABLESPACE IF EXISTS $spc" >/dev/null 2>&1
	umount "$mnt" 2>/dev/null
	rmdir "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
q() { psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
# run a script (phase $2, if any); its output and stderr in $work/out
run() {
	local f=$1; shift
	psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$@" -d "$db" -f "$f" >"$work/out" 2>&1
}
left_behind() {
	q -c "SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE 'storagelab\_%')
	           + (SELECT count(*) FROM storagelab.bigint_migration_progress)
	           + (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'd.big'::regclass AND NOT tgisinternal)"
}

owner=$(stat -c %U "$(psql -X -At -c 'SHOW data_directory')")
mkdir "$mnt/ts" && chown "$owner" "$mnt/ts" && chmod 700 "$mnt/ts" || { echo "Bail out! cannot give $mnt/ts to $owner"; exit 1; }
dropdb --if-exists "$db" >/dev/null 2>&1
createdb "$db" || { echo "Bail out! createdb $db"; exit 1; }
psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLESPACE IF EXISTS $spc" -c "CREATE TABLESPACE $spc LOCATION '$mnt/ts'" ||
	{ echo "Bail out! CREATE TABLESPACE on the tmpfs"; exit 1; }
q -q <<SQL || { echo "Bail out! setup"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE SCHEMA d;
CREATE TABLE d.big (id int PRIMARY KEY USING INDEX TABLESPACE $spc, v text) TABLESPACE $spc;
INSERT INTO d.big SELECT g, md5(g::text) FROM generate_series(1, 45000) g;
CREATE TABLE d.little (id int PRIMARY KEY USING INDEX TABLESPACE $spc, v text) TABLESPACE $spc;
INSERT INTO d.little SELECT g, md5(g::text) FROM generate_series(1, 2000) g;
VACUUM ANALYZE d.big, d.little;
SQL
echo "# tablespace $spc: $(q -c "SELECT pg_size_pretty(free_bytes) || ' free of ' || pg_size_pretty(total_bytes) FROM storagelab_internal.tablespace_space((SELECT oid FROM pg_tablespace WHERE spcname = '$spc'))"), d.big $(q -c "SELECT pg_size_pretty(pg_total_relation_size('d.big'))")"

# statvfs() of the tablespace: the tmpfs's size, and less free than that
q -c "SELECT total_bytes = 8 * 1024 * 1024 AND free_bytes < total_bytes - pg_total_relation_size('d.big')
        FROM storagelab_internal.tablespace_space((SELECT oid FROM pg_tablespace WHERE spcname = '$spc'))" >"$work/r" 2>&1
ok "$([ "$(cat "$work/r")" = t ]; echo $?)" "tablespace_space() reads the tmpfs: 8 MB, the table's bytes used $(cat "$work/r")"

# tablespace_space(): an unknown OID, and pg_tablespace_size()'s privileges
q -c "SELECT storagelab_internal.tablespace_space(0)" -v VERBOSITY=verbose >"$work/r" 2>&1
ok "$(grep -q 'ERROR:  42704: tablespace with OID 0 does not exist' "$work/r" && grep -q HINT "$work/r"; echo $?)" "tablespace_space() of an unknown OID: 42704 with a hint"
drop_role
q -q -c "CREATE ROLE storagelab_disk_role"
sp="SELECT free_bytes > 0 FROM storagelab_internal.tablespace_space((SELECT oid FROM pg_tablespace WHERE spcname = '$spc'))"
q -c "SET ROLE storagelab_disk_role" -c "$sp" -v VERBOSITY=verbose >"$work/r" 2>&1
ok "$(grep -q "ERROR:  42501: permission denied to read the free space of tablespace $spc" "$work/r"; echo $?)" "... 42501 for a role without CREATE on the tablespace"
q -q -c "GRANT CREATE ON TABLESPACE $spc TO storagelab_disk_role"
ok "$([ "$(q -q -c "SET ROLE storagelab_disk_role" -c "$sp" -c "$(echo "$sp" | sed "s/'$spc'/'pg_default'/")" 2>&1)" = "$(printf 't\nt')" ]; echo $?)" \
	"... with CREATE on it a role reads it, and the database's default tablespace too"
drop_role

# online start of the big table: refused, nothing left behind
q -c "SELECT storagelab.bigint_migration_script('d.big', 'id', mode => 'online')" >"$work/big_online.sql"
run "$work/big_online.sql" -v phase=start
rc=$?
ok "$([ $rc != 0 ] && grep -q 'ERROR:  53100: not enough free disk space for phase start' "$work/out"; echo $?)" \
	"online phase start refuses with 53100 $(grep -m1 ERROR "$work/out")"
ok "$(grep -q "DETAIL:  tablespace $spc needs .* (heap copy .*, indexes .*); .* free of 8192 kB, of which 819 kB (preflight.min_free_pct = 10%) is kept free" "$work/out"; echo $?)" \
	"... the detail names the tablespace, what it needs, its free space and the margin $(grep -m1 DETAIL "$work/out")"
ok "$(grep -q 'HINT:  .*preflight.min_free_pct' "$work/out"; echo $?)" "... with a hint"
ok "$([ "$(q -c "SELECT count(*) FROM storagelab_internal.disk_preflight_needs('start', storagelab_internal.disk_preflight_input(
                   storagelab_internal.bigint_copy_swap_tables(ARRAY(SELECT x FROM storagelab.bigint_migration_objects('d.big', 'id') x))))
                 WHERE spc = (SELECT dattablespace FROM pg_database WHERE datname = current_database()) AND part = 'log'")" = 1 ]; echo $?)" \
	"... the change log is counted in the database's default tablespace, where phase start creates it"
ok "$([ "$(left_behind)" = 0 ]; echo $?)" "... nothing left behind: no new table or log, no progress row, no trigger"

# the blocking scripts: refused the same way, the column unchanged
q -c "SELECT storagelab.bigint_migration_script('d.big', 'id')" >"$work/big_blocking.sql"
run "$work/big_blocking.sql"
ok "$(grep -q 'ERROR:  53100: not enough free disk space for the rewrite of this script' "$work/out" &&
	grep -q "DETAIL:  tablespace $spc needs" "$work/out"; echo $?)" "the blocking INT->BIGINT script refuses with 53100 and the numbers"
ok "$([ "$(q -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'd.big'::regclass AND attname = 'id'")" = integer ] &&
	[ "$(left_behind)" = 0 ]; echo $?)" "... the column is still integer, nothing left behind"
q -c "SELECT storagelab.layout_migration_script('d.big', column_order => '{v,id}')" >"$work/big_layout.sql"
run "$work/big_layout.sql"
ok "$(grep -q 'ERROR:  53100: not enough free disk space for the rewrite of this script' "$work/out" &&
	[ "$(q -c "SELECT attname FROM pg_attribute WHERE attrelid = 'd.big'::regclass AND attnum = 1")" = id ]; echo $?)" \
	"the blocking layout script refuses with 53100, the columns keep their order"

# with room: the little table migrated online, phase by phase
q -c "SELECT storagelab.bigint_migration_script('d.little', 'id', mode => 'online')" >"$work/little.sql"
run "$work/little.sql" -v phase=start
ok $? "online phase start of a table that fits runs $(grep -m1 ERROR "$work/out")"
ok "$(grep -q '^WAL written: start .* (this run of start: ' "$work/out"; echo $?)" "... and ends with the WAL it wrote: $(grep '^WAL' "$work/out")"
run "$work/little.sql" -v phase=copy
ok $? "phase copy runs"
ok "$([ "$(q -c "SELECT bool_and((wal_bytes->>'copy')::numeric > 0 AND (wal_bytes->>'start')::numeric > 0 AND started_at IS NOT NULL AND done)
                  FROM storagelab.bigint_migration_progress")" = t ]; echo $?)" \
	"the progress row records the WAL of start and copy (> 0): $(q -c 'SELECT wal_bytes FROM storagelab.bigint_migration_progress')"
ok "$(grep -q '^WAL written: start .*, copy .* (this run of copy: ' "$work/out"; echo $?)" "... and copy's last line reports both: $(grep '^WAL' "$work/out")"

# phase index: refused while a filler leaves no room for the key's index
q -q -c "CREATE TABLE d.filler (b text) TABLESPACE $spc" \
	-c "INSERT INTO d.filler SELECT repeat('x', 1000) FROM generate_series(1, (SELECT (free_bytes - 0.1 * total_bytes - pg_relation_size('d.little_pkey') / 2) / 1100
	      FROM storagelab_internal.tablespace_space((SELECT oid FROM pg_tablespace WHERE spcname = '$spc')))::int)"
run "$work/little.sql" -v phase=index
ok "$([ $? != 0 ] && grep -q 'ERROR:  53100: not enough free disk space for phase index' "$work/out" &&
	grep -q "DETAIL:  tablespace $spc needs .*indexes " "$work/out"; echo $?)" "phase index refuses when the indexes no longer fit $(grep -m1 DETAIL "$work/out")"
q -q -c "DROP TABLE d.filler"
run "$work/little.sql" -v phase=index
ok $? "with room again, phase index runs $(grep -m1 ERROR "$work/out")"
for ph in replay swap validate; do
	run "$work/little.sql" -v phase=$ph || break
done
ok "$([ "$(q -c "SELECT count(*) FILTER (WHERE (wal_bytes->>'index')::numeric > 0 AND (wal_bytes->>'swap')::numeric > 0 AND wal_bytes ? 'replay' AND wal_bytes ? 'validate')
                  FROM storagelab.bigint_migration_progress")" = 1 ]; echo $?)" "replay, swap and validate run, each phase's WAL recorded"
run "$work/little.sql" -v phase=cleanup
ok "$([ $? = 0 ] && grep -q '^WAL written: start .*, cleanup .* (this run of cleanup: ' "$work/out" &&
	[ "$(q -c "SELECT format_type(atttypid, NULL) || ' ' || (SELECT count(*) FROM d.little) FROM pg_attribute WHERE attrelid = 'd.little'::regclass AND attname = 'id'")" = 'bigint 2000' ] &&
	[ "$(left_behind)" = 0 ]; echo $?)" "cleanup reports the WAL of every phase; the column is bigint, 2000 rows, nothing left behind"

echo "1..$n"

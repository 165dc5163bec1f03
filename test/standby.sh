#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): storagelab on a hot
# standby.  Makes a streaming replica of the throwaway cluster on loopback
# with pg_basebackup, then runs every view and reader there, read-only.
# The visibility map is WAL-logged, so VM figures match the primary's; hint
# bits are not, so hint-bit figures may differ and are not compared.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"
. "$REPO/scripts/lib.sh"
bindir=/usr/lib/postgresql/$PG_MAJOR/bin

n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
qp() { psql -X -At -v ON_ERROR_STOP=1 -d storagelab_standby "$@"; }

# Data on the primary: a logged table with bytea, an unlogged table and
# sequence (they exist on a standby only as catalog entries), a serial key.
dropdb --if-exists storagelab_standby 2>/dev/null
createdb storagelab_standby
qp -q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
CREATE TABLE t (id serial PRIMARY KEY, n int, b bytea);
INSERT INTO t (n, b) SELECT g, decode(repeat(md5(g::text), 4 + g % 200), 'hex')
  FROM generate_series(1, 3000) g;
CREATE UNLOGGED TABLE u (id int, b bytea);
INSERT INTO u SELECT g, '\x00' FROM generate_series(1, 10) g;
CREATE UNLOGGED SEQUENCE useq;
CREATE TABLE fed (id int DEFAULT nextval('useq'));
VACUUM (ANALYZE) t;
CHECKPOINT;
SQL

work=$(mktemp -d)
chown postgres "$work"
chmod 700 "$work"
sport=$(free_port)
trap 'runuser -u postgres -- "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1; rm -rf "$work"' EXIT

runuser -u postgres -- env PGPASSWORD="$PGPASSWORD" "$bindir/pg_basebackup" \
	-h localhost -p "$PGPORT" -U "$PGUSER" -D "$work/data" -X stream -R -c fast >/dev/null 2>&1
ok $? "pg_basebackup makes a replica"
cp "$(psql -X -At -c 'SHOW hba_file')" "$work/data/pg_hba.conf"
cat > "$work/data/postgresql.conf" <<CONF
port = $sport
listen_addresses = 'localhost'
unix_socket_directories = '$work'
hot_standby = on
fsync = off
primary_conninfo = 'host=localhost port=$PGPORT user=$PGUSER password=$PGPASSWORD'
CONF
# how the server loads the staged extension: extension_destdir (Debian's
# PostgreSQL 15 and 17) or extension_control_path (18 and later)
stage_settings | sed "s/^\([a-z_]*\)=\(.*\)$/\1 = '\2'/" >> "$work/data/postgresql.conf"
chown postgres "$work/data/postgresql.conf" "$work/data/pg_hba.conf"
runuser -u postgres -- "$bindir/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null
ok $? "the replica starts"

qs() { PGHOST=localhost PGPORT=$sport psql -X -At -v ON_ERROR_STOP=1 -d storagelab_standby "$@"; }
lsn=$(qp -c 'SELECT pg_current_wal_lsn()')
for i in $(seq 100); do
	[ "$(qs -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = t ] && break
	sleep 0.2
done
[ "$(qs -c 'SELECT pg_is_in_recovery()')" = t ]
ok $? "the replica is in recovery and has replayed the primary's data"

for v in $(qs -c "SELECT viewname FROM pg_views WHERE schemaname = 'storagelab' ORDER BY 1"); do
	qs -c "SELECT count(*) FROM storagelab.$v" >/dev/null 2>"$work/err"
	ok $? "view storagelab.$v works on the standby $(tr '\n' ' ' <"$work/err")"
done

vm="SELECT all_visible_pages, all_frozen_pages FROM storagelab.heap_visibility('t')"
[ "$(qs -c "$vm")" = "$(qp -c "$vm")" ]
ok $? "heap_visibility on the standby: the same VM figures as the primary"

tp="SELECT null_values, inline_uncompressed, inline_compressed, external_uncompressed, external_compressed, raw_bytes, stored_bytes FROM storagelab.toast_profile('t', 'b')"
[ "$(qs -c "$tp")" = "$(qp -c "$tp")" ]
ok $? "toast_profile on the standby equals the primary's"

# An unlogged table has no data on a standby: the readers refuse it with
# 55000 (object_not_in_prerequisite_state), as CONTRIBUTING.md says.
qs -v VERBOSITY=verbose -c "SELECT storagelab.heap_visibility('u')" >"$work/out" 2>"$work/err"
st=$?
[ "$st" != 0 ] && grep -q "^ERROR:  55000:" "$work/err"
ok $? "heap_visibility on an unlogged table on the standby: refused with 55000 ($(head -c 200 "$work/err" "$work/out" | tr '\n' ' '))"

[ -n "$(qs -c "SELECT 1 FROM storagelab.int_overflow WHERE relation = 't'::regclass")" ]
ok $? "int_overflow lists the serial key on the standby"

qs -c "SELECT count(*) FROM storagelab.int_overflow" >/dev/null
ok $? "int_overflow does not fail on an unlogged sequence on the standby"

qs -c "SELECT storagelab.bigint_migration_script('t', 'id')" >/dev/null
ok $? "bigint_migration_script generates on the standby"

qs -c "SELECT storagelab.storage_migration_script('t', 'b')" >/dev/null
ok $? "storage_migration_script generates on the standby"

# The writers, the procedures of the migration scripts too, refuse with
# SQLSTATE 25006 and say where to run them.
# writer_refused SQL: the statement fails with 25006 and the hint.
writer_refused() {
	local out
	out=$(PGHOST=localhost PGPORT=$sport psql -X -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d storagelab_standby \
		-c '\set VERBOSITY verbose' -c "$1" 2>&1)
	[ $? -ne 0 ] && grep -q "25006" <<<"$out" &&
		grep -q "HINT:  Run it on the primary; the views work on a standby." <<<"$out"
}
for w in "SELECT storagelab.int_overflow_snapshot()" "SELECT storagelab.snapshot()" \
	"SELECT * FROM storagelab.column_profile('t')" \
	"CALL storagelab.rewrite_online_copy('m', '[]', 0, 1, '0')" \
	"CALL storagelab.rewrite_online_replay('m', '[]', 0, 1, '1 min')"; do
	writer_refused "$w"
	ok $? "$w on the standby: 25006, hint to run it on the primary"
done

echo "1..$n"
exit $((failed > 0))

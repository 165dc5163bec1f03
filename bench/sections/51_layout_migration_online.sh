# Section 51: layout_migration_script() in mode online under load.
# On pgbench -i -s SCALE --foreign-keys data, pgbench_accounts gets a column
# status int (values 0..3, added last, after filler), then is narrowed and
# reordered by one script: status int -> smallint, filler char(84) -> text,
# order aid, bid, abalance, status, filler (status moves before filler).
# pgbench_history references the table (aid) and the table references
# pgbench_branches (bid): both foreign keys are re-pointed by the swap.
#   1. blocking script, no clients: the anchor (time, size, checksum);
#   2. online script (all seven phases), no clients: time against the
#      anchor, pg_total_relation_size and an md5 of every row (ordered by
#      aid) against the blocking script's, the column order;
#   3. online script under 4 pgbench clients running for the whole
#      migration (TPC-B-like, with the account UPDATE also writing status:
#      the clients write both narrowed columns), plus the probe client of
#      bench/lib.sh; scripts.lock_timeout LAYOUT_LOCK_TIMEOUT (default
#      300ms).  Reports phases, failed transactions and aborted clients,
#      the per-second maximum latency from pgbench's aggregate logs, the
#      probe's maximum overall and per phase, pgbench's invariant and, per
#      row, abalance = the sum of its account's history deltas (no update
#      lost or doubled by the copy, replay or swap).
# The budget (copy-and-swap): no failed or aborted transaction, no second
# whose maximum latency exceeds 1 s.
online_tmp=$(mktemp -d)
lay_types='{"status": "smallint", "filler": "text"}'
lay_order='{aid,bid,abalance,status,filler}'
cat >"$online_tmp/tpcb-status.sql" <<'EOF'
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
\set status random(0, 3)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta, status = :status WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
EOF

lay_fresh() {
	bench_db storagelab_bench_layout
	pgbench -i -q -s "$SCALE" --foreign-keys "$PGDATABASE" >/dev/null 2>&1
	psql -X -q -v ON_ERROR_STOP=1 -c 'ALTER TABLE pgbench_accounts ADD COLUMN status int' \
		-c 'ALTER TABLE pgbench_accounts ALTER COLUMN status TYPE int USING aid % 4, ALTER COLUMN status SET NOT NULL' \
		-c 'VACUUM ANALYZE pgbench_accounts'
	online_probe_setup
	psql -X -q -c 'CHECKPOINT'
}
lay_script() {	# lay_script MODE FILE
	psql -X -At -v ON_ERROR_STOP=1 -c "SELECT storagelab.layout_migration_script('pgbench_accounts', '$1', '$lay_types', '$lay_order')" >"$2"
}
lay_online() {	# lay_online FILE: every phase
	local phase
	for phase in start copy index replay swap validate cleanup; do
		online_phase $phase psql -X -q -v ON_ERROR_STOP=1 -v phase=$phase -f "$1"
	done
}
lay_size() { psql -X -At -c "SELECT pg_total_relation_size('pgbench_accounts')"; }
lay_sum() { psql -X -At -c "SELECT md5(string_agg(format('%s|%s|%s|%s|%s', aid, bid, abalance, status, filler), ',' ORDER BY aid)) FROM pgbench_accounts"; }
lay_cols() { psql -X -At -c "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attnum > 0 AND NOT attisdropped"; }
lay_load() { echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }

echo "  -- no clients: blocking (anchor), then online, each on fresh data"
lay_load
phase_ms=
label=blocking
lay_fresh
echo "  before: $(lay_cols); pg_total_relation_size $(lay_size)"
lay_script blocking "$online_tmp/blocking.sql"
phase_total=0
online_phase script psql -X -q -v ON_ERROR_STOP=1 -f "$online_tmp/blocking.sql"
lay_blocking=$phase_total; size_blocking=$(lay_size); sum_blocking=$(lay_sum); cols_blocking=$(lay_cols)
label=online
lay_fresh
lay_script online "$online_tmp/online.sql"
phase_total=0; phase_ms=
lay_online "$online_tmp/online.sql"
lay_online_ms=$phase_total; size_online=$(lay_size); sum_online=$(lay_sum); cols_online=$(lay_cols)
echo "  online phases, no clients (ms):$phase_ms"
bench_row "blocking layout script, no clients" "$lay_blocking" "blocking script" "$lay_blocking"
bench_row "online layout script (7 phases), no clients" "$lay_online_ms" "blocking script" "$lay_blocking"
echo "  after: blocking $cols_blocking"
echo "  after: online   $cols_online (same as blocking: $([ "$cols_online" = "$cols_blocking" ] && echo yes || echo NO))"
echo "  pg_total_relation_size(pgbench_accounts): blocking $size_blocking, online $size_online ($(awk -v a="$size_online" -v b="$size_blocking" 'BEGIN { printf "%.3f", a / b }') x blocking)"
echo "  md5 of every row (ordered by aid) equal to blocking's: $([ "$sum_online" = "$sum_blocking" ] && echo yes || echo NO)"
lay_load

echo "  -- online under 4 clients (TPC-B-like writing abalance and status, saturating) + probe, scripts.lock_timeout ${LAYOUT_LOCK_TIMEOUT:-300ms}"
label=online-load
lay_fresh
psql -X -q -c "INSERT INTO storagelab.settings VALUES ('scripts.lock_timeout', '${LAYOUT_LOCK_TIMEOUT:-300ms}')"
lay_script online "$online_tmp/online.sql"
online_pgbench_args="-s $SCALE -f $online_tmp/tpcb-status.sql"
rm -f "$online_tmp/stop"
online_load "$label" "" &
loadpid=$!
sleep 3
lay_load
phase_ms=
phase_total=0
lay_online "$online_tmp/online.sql"
lay_load
sleep 3
touch "$online_tmp/stop"
wait $loadpid
online_pgbench_args=
echo "  $label: phases (ms):$phase_ms (total $phase_total)"
online_report "$label"
echo "  $label: invariant holds afterwards: $(online_invariant); rows whose abalance differs from the sum of their history deltas: $(psql -X -At -c "
	SELECT count(*) FROM pgbench_accounts a LEFT JOIN (SELECT aid, sum(delta) AS s FROM pgbench_history GROUP BY aid) h USING (aid)
	 WHERE a.abalance <> coalesce(h.s, 0)"); status outside 0..3: $(psql -X -At -c 'SELECT count(*) FROM pgbench_accounts WHERE status NOT BETWEEN 0 AND 3'); rows $(psql -X -At -c 'SELECT count(*) FROM pgbench_accounts')"
echo "  $label: after: $(lay_cols) (as requested: $([ "$(lay_cols)" = "$cols_blocking" ] && echo yes || echo NO)); pg_total_relation_size $(lay_size) ($(awk -v a="$(lay_size)" -v b="$size_blocking" 'BEGIN { printf "%.3f", a / b }') x blocking)"
echo "  $label: lock retries (NOTICE lines in the phases' output): $(cat "$online_tmp/$label".*.out | grep -c 'retrying' || true)"
bench_row "online layout script (7 phases), 4 clients" "$phase_total" "blocking script, no clients" "$lay_blocking"
dropdb storagelab_bench_layout
rm -rf "$online_tmp"

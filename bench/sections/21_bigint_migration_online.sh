# Section 21: INT -> BIGINT online.  pgbench_accounts.aid (and its component,
# pgbench_history.aid) on pgbench -i --foreign-keys -s SCALE data, converted
# while pgbench runs 4 clients (built-in TPC-B-like script) for the whole
# conversion: once with the online script (every phase), once with the
# blocking script, each on freshly initialised data.  Reports each plan's
# total time, the online/blocking ratio, failed transactions, and the
# per-second maximum latency from pgbench's aggregate log (the lock waits
# clients see), plus pgbench's invariant sum(abalance) = sum(tbalance) =
# sum(bbalance) = sum(history.delta) afterwards (no lost or doubled
# transaction).
online_tmp=$(mktemp -d)

online_fresh() {
	bench_db storagelab_bench_online
	pgbench -i -q -s "$SCALE" --foreign-keys storagelab_bench_online >/dev/null 2>&1
	# A probe client beside pgbench: one UPDATE of a random account per
	# transaction (abalance = abalance: no change), its latency measured by the
	# server clock and committed, until bench_stop has a row.  pgbench's own
	# logs miss transactions that straddle its 5-second runs.
	psql -X -q -c "
		CREATE TABLE public.bench_probe (at timestamptz, ms numeric);
		CREATE TABLE public.bench_stop (x int);
		CREATE PROCEDURE public.bench_probe_run() LANGUAGE plpgsql AS \$\$
		DECLARE t0 timestamptz; n bigint := (SELECT count(*) FROM pgbench_branches) * 100000;
		BEGIN
			WHILE NOT EXISTS (SELECT 1 FROM public.bench_stop) LOOP
				t0 := clock_timestamp();
				UPDATE pgbench_accounts SET abalance = abalance WHERE aid = 1 + (random() * (n - 1))::int;
				INSERT INTO public.bench_probe VALUES (t0, extract(epoch FROM clock_timestamp() - t0) * 1000);
				COMMIT;
				PERFORM pg_sleep(0.01);
			END LOOP;
		END \$\$;"
	psql -X -q -c 'CHECKPOINT'
}

# load PREFIX: 4 clients in 5-second runs until $online_tmp/stop exists, plus the probe
online_load() {
	local i=0
	psql -X -q -c 'CALL public.bench_probe_run()' >"$online_tmp/$1.probe.out" 2>&1 &
	while [ ! -f "$online_tmp/stop" ]; do
		pgbench -n -c 4 -j 2 -T 5 -l --aggregate-interval=1 --log-prefix="$online_tmp/$1_$i" \
			storagelab_bench_online >"$online_tmp/$1_$i.summary" 2>&1
		i=$((i + 1))
	done
	psql -X -q -c 'INSERT INTO public.bench_stop VALUES (1)'
	wait
}

# report LABEL: failures and latency from the load's logs
online_report() {
	local failed aborted maxlat slow
	failed=$(cat "$online_tmp/$1"_*.summary | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}')
	aborted=$(cat "$online_tmp/$1"_*.summary | grep -c 'aborted' || true)
	maxlat=$(cat "$online_tmp/$1"_*.[0-9]* 2>/dev/null | awk '{ if ($6 > m) m = $6 } END { printf "%.0f", m / 1000 }')
	slow=$(cat "$online_tmp/$1"_*.[0-9]* 2>/dev/null | awk '$6 > 1000000 { n++ } END { print n + 0 }')
	echo "  $1: pgbench: failed transactions $failed, aborted clients $aborted, max latency ${maxlat} ms, seconds with a latency over 1 s: $slow"
	echo "  $1: probe: $(psql -X -At -c "SELECT format('%s transactions, max latency %s ms, %s over 1 s, %s seconds with one over 200 ms',
		count(*), round(max(ms)), count(*) FILTER (WHERE ms > 1000), count(DISTINCT date_trunc('second', at)) FILTER (WHERE ms > 200))
		FROM public.bench_probe")$(grep -q ERROR "$online_tmp/$1.probe.out" && echo ' (probe failed: see its output)')"
}

online_invariant() {
	psql -X -At -c "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(tbalance) FROM pgbench_tellers)
	                   AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(bbalance) FROM pgbench_branches)
	                   AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
}

# Online.  Clients must not wait on a lock for more than 1 s, so every
# lock-taking step gives up (and retries) after 300 ms.
online_fresh
psql -X -q -c "INSERT INTO storagelab.settings VALUES ('scripts.lock_timeout', '300ms')" 
psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'online')" >"$online_tmp/online.sql"
rm -f "$online_tmp/stop"
online_load online &
loadpid=$!
sleep 3
t0=$(date +%s%N)
for phase in expand backfill prepare swap cleanup; do
	p0=$(date +%s%N)
	psql -X -q -v ON_ERROR_STOP=1 -v phase=$phase -f "$online_tmp/online.sql" >"$online_tmp/online.$phase.out" 2>&1 ||
		{ echo "  online phase $phase failed:"; grep -m3 ERROR "$online_tmp/online.$phase.out"; }
	echo "    phase $phase: $(( ($(date +%s%N) - p0) / 1000000 )) ms"
done
online_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
sleep 3
touch "$online_tmp/stop"
wait $loadpid
online_report online
echo "  online: invariant holds afterwards: $(online_invariant); aid type: $(psql -X -At -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'")"

# Blocking, same load.
online_fresh
psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid')" >"$online_tmp/blocking.sql"
rm -f "$online_tmp/stop"
online_load blocking &
loadpid=$!
sleep 3
t0=$(date +%s%N)
psql -X -q -v ON_ERROR_STOP=1 -f "$online_tmp/blocking.sql" >"$online_tmp/blocking.out" 2>&1 ||
	{ echo "  blocking script failed:"; grep -m3 ERROR "$online_tmp/blocking.out"; }
blocking_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
sleep 3
touch "$online_tmp/stop"
wait $loadpid
online_report blocking
echo "  blocking: invariant holds afterwards: $(online_invariant)"

bench_row "blocking script, 4 clients running" "$blocking_ms" "blocking script" "$blocking_ms"
bench_row "online script (all phases), 4 clients running" "$online_ms" "blocking script" "$blocking_ms"
dropdb storagelab_bench_online
rm -rf "$online_tmp"

# Section 21: INT -> BIGINT online.  pgbench_accounts.aid (and its component,
# pgbench_history.aid) on pgbench -i --foreign-keys -s SCALE data, converted
# while pgbench runs 4 clients (built-in TPC-B-like script) for the whole
# conversion: once with the online script (copy and swap, every phase),
# once with the blocking script, each on freshly initialised data.  (Until
# 1.1 this part ran the shadow-column writer, mode 'shadow', removed in 1.1:
# bench/README.md keeps its results.)  Two loads:
#   saturating    pgbench without -R: the clients take all the CPU they can,
#                 so the online plan competes with them while the blocking
#                 plan runs with the clients stalled behind its lock;
#   rate-limited  pgbench -R at ONLINE_RATE_PCT (default 50) % of the TPS
#                 measured on the fresh data just before (live traffic with
#                 headroom).
# Reports each plan's total time, the online/blocking ratio, failed
# transactions, the per-second maximum latency from pgbench's aggregate log,
# a probe client's longest transaction overall and per phase (the lock waits
# clients see), what the copy did (rows, batches, longest batch, WAL
# written, checkpoints), and pgbench's invariant sum(abalance) =
# sum(tbalance) = sum(bbalance) = sum(history.delta) afterwards (no lost or
# doubled transaction).  ONLINE_LOADS="saturating rate-limited" chooses
# (ONLINE_LOADS=" ": none).
# Then copy and swap without clients and against pg_repack
# (ONLINE_COPY_SWAP=0 skips it), below.
online_tmp=$(mktemp -d)

online_fresh() {
	bench_db storagelab_bench_online
	pgbench -i -q -s "$SCALE" --foreign-keys storagelab_bench_online >/dev/null 2>&1
	online_probe_setup
	psql -X -q -c 'CHECKPOINT'
}

# run LOAD RATE: online, then blocking, each on fresh data under the same load
online_run() {
	local load=$1 rate=$2 label lsn0 ckpt0 online_ms blocking_ms phase_ms phase_total
	# Online.  Clients must not wait on a lock for more than 1 s, so every
	# lock-taking step gives up (and retries) after 300 ms.
	label=online-$load
	online_fresh
	psql -X -q -c "INSERT INTO storagelab.settings VALUES ('scripts.lock_timeout', '300ms')"
	psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'online')" >"$online_tmp/online.sql"
	rm -f "$online_tmp/stop"
	online_load "$label" "$rate" &
	loadpid=$!
	sleep 3
	phase_ms=
	phase_total=0
	for phase in start copy index replay swap validate cleanup; do
		if [ $phase = copy ]; then
			lsn0=$(psql -X -At -c 'SELECT pg_current_wal_lsn()')
			ckpt0=$(psql -X -At -c 'SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter')
		fi
		online_phase $phase psql -X -q -v ON_ERROR_STOP=1 -v phase=$phase -f "$online_tmp/online.sql"
		if [ $phase = copy ]; then
			echo "  $label: copy: $(psql -X -At -c "SELECT string_agg(format('%s: %s rows in %s batches (%s blocks), %s rows/s, longest batch %s ms',
				relation, rows_copied, batches, max_block, round(rows_copied / greatest(extract(epoch FROM updated_at - started_at), 0.001)), max_batch_ms), '; ' ORDER BY relation)
				FROM storagelab.bigint_migration_progress"); WAL $(psql -X -At -c "SELECT pg_size_pretty(pg_current_wal_lsn() - '$lsn0'::pg_lsn)"), checkpoints $(( $(psql -X -At -c 'SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter') - ckpt0 ))"
		fi
	done
	online_ms=$phase_total   # the phases' own times (not the bench's queries between them)
	sleep 3
	touch "$online_tmp/stop"
	wait $loadpid
	echo "  $label: phases (ms):$phase_ms"
	online_report "$label"
	echo "  $label: invariant holds afterwards: $(online_invariant); aid type: $(psql -X -At -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'")"

	# Blocking, same load.
	label=blocking-$load
	online_fresh
	psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid')" >"$online_tmp/blocking.sql"
	rm -f "$online_tmp/stop"
	online_load "$label" "$rate" &
	loadpid=$!
	sleep 3
	phase_ms=
	phase_total=0
	online_phase script psql -X -q -v ON_ERROR_STOP=1 -f "$online_tmp/blocking.sql"
	blocking_ms=$phase_total
	sleep 3
	touch "$online_tmp/stop"
	wait $loadpid
	online_report "$label"
	echo "  $label: invariant holds afterwards: $(online_invariant)"

	bench_row "blocking script, $load load" "$blocking_ms" "blocking script" "$blocking_ms"
	bench_row "online script (all phases), $load load" "$online_ms" "blocking script" "$blocking_ms"
}

for load in ${ONLINE_LOADS:-saturating rate-limited}; do
	echo "  -- $load load"
	if [ "$load" = saturating ]; then
		online_run saturating ""
	else
		online_fresh
		max_tps=$(pgbench -n -c 4 -j 2 -T 10 storagelab_bench_online 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
		rate=$(awk -v t="$max_tps" -v p="${ONLINE_RATE_PCT:-50}" 'BEGIN { printf "%d", t * p / 100 }')
		echo "  rate-limited: max ${max_tps} tps measured on fresh data (10 s, 4 clients); load: pgbench -R $rate (${ONLINE_RATE_PCT:-50} %)"
		online_run rate-limited "$rate"
	fi
done
# Copy and swap (mode copy_swap) against anchors measured here: the blocking
# script and pg_repack's rewrite of
# pgbench_accounts (the floor of any copy and swap: same copy, index build
# and log; pg_repack cannot change a type, and refuses pgbench_history,
# which has no key).  Without clients: total times, pg_total_relation_size
# of the two tables, a checksum of pgbench_accounts (pgbench -i data are
# deterministic), the column order.  With 4 clients: copy_swap and pg_repack,
# failed transactions and the per-second maximum latency.
# ONLINE_COPY_SWAP=0 skips it; it needs the rewrite engine (parts 60-64).
# Last, the floor of copy and swap statement by statement (copy_floor).
cs_size() { psql -X -At -c "SELECT pg_total_relation_size('pgbench_accounts') + pg_total_relation_size('pgbench_history')"; }
cs_sum() { psql -X -At -c "SELECT md5(string_agg(format('%s|%s|%s|%s', aid, bid, abalance, filler), ',' ORDER BY aid)) FROM pgbench_accounts"; }
cs_cols() { psql -X -At -c "SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid IN ('pgbench_accounts'::regclass) AND attnum > 0 AND NOT attisdropped"; }
cs_repack() {
	bench_pg_repack_installed || return 1
	psql -X -q -c 'CREATE EXTENSION IF NOT EXISTS pg_repack'
	"/usr/lib/postgresql/$PG_MAJOR/bin/pg_repack" --no-order --table=public.pgbench_accounts -d "$PGDATABASE"
}
if [ "${ONLINE_COPY_SWAP:-1}" = 1 ]; then
	echo "  -- copy and swap (mode copy_swap): no load, anchors from this run"
	phase_ms=
	label=cs-blocking
	online_fresh
	cols0=$(cs_cols)
	psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid')" >"$online_tmp/blocking.sql"
	phase_total=0
	online_phase script psql -X -q -v ON_ERROR_STOP=1 -f "$online_tmp/blocking.sql"
	cs_blocking=$phase_total; size_blocking=$(cs_size); sum_blocking=$(cs_sum)
	label=cs-copy-swap
	online_fresh
	psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap')" >"$online_tmp/cs.sql"
	phase_total=0; phase_ms=
	for phase in start copy index replay swap validate cleanup; do
		online_phase $phase psql -X -q -v ON_ERROR_STOP=1 -v phase=$phase -f "$online_tmp/cs.sql"
	done
	cs_cs=$phase_total; size_cs=$(cs_size); sum_cs=$(cs_sum)
	echo "  copy_swap phases (ms):$phase_ms"
	label=cs-repack
	online_fresh
	phase_total=0
	online_phase repack cs_repack
	cs_rp=$phase_total
	bench_row "blocking script, no load" "$cs_blocking" "blocking script" "$cs_blocking"
	bench_row "copy_swap script (all phases), no load" "$cs_cs" "blocking script" "$cs_blocking"
	bench_row "pg_repack pgbench_accounts, no load" "$cs_rp" "blocking script" "$cs_blocking"
	bench_row "copy_swap script (all phases), no load" "$cs_cs" "pg_repack" "$cs_rp"
	echo "  sizes after (accounts + history, pg_total_relation_size): blocking $size_blocking, copy_swap $size_cs ($(awk -v a="$size_cs" -v b="$size_blocking" 'BEGIN { printf "%.3f", a / b }') x blocking)"
	echo "  pgbench_accounts checksum equal to blocking's: $([ "$sum_cs" = "$sum_blocking" ] && echo yes || echo NO); column order kept: $([ "$(cs_cols)" = "$cols0" ] && echo yes || echo NO) ($cols0)"

	echo "  -- copy and swap under 4 clients (saturating), and pg_repack under the same load"
	for what in copy_swap repack; do
		label=load-$what
		online_fresh
		[ $what = copy_swap ] && psql -X -At -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'copy_swap')" >"$online_tmp/cs.sql"
		rm -f "$online_tmp/stop"
		online_load "$label" "" &
		loadpid=$!
		sleep 3
		phase_ms=
		phase_total=0
		if [ $what = copy_swap ]; then
			for phase in start copy index replay swap validate cleanup; do
				online_phase $phase psql -X -q -v ON_ERROR_STOP=1 -v phase=$phase -f "$online_tmp/cs.sql"
			done
		else
			online_phase repack cs_repack
		fi
		sleep 3
		touch "$online_tmp/stop"
		wait $loadpid
		echo "  $label: phases (ms):$phase_ms"
		online_report "$label"
		echo "  $label: invariant holds afterwards: $(online_invariant); aid type: $(psql -X -At -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'"); size $(cs_size)"
	done
fi
# The floor of copy and swap, statement by statement, without clients
# (ONLINE_COPY_FLOOR=0 skips it): each piece of work the copy-and-swap
# script must do, timed alone on the same data in ONLINE_FLOOR_ROUNDS (3)
# interleaved rounds, a CHECKPOINT before each, medians; against the
# blocking script's core, ALTER TABLE ... ALTER aid TYPE bigint on a copy of
# pgbench_accounts with its primary key (the rewrite and the index rebuild).
#   insert_select     the copy: one INSERT ... SELECT of every row into an
#                     empty table of the new shape (one session)
#   split_one_table   the same rows in two sessions at once (half the heap
#                     blocks each, TID ranges) into one table
#   split_two_tables  the same, each session into a table of its own (no
#                     contention on one relation)
#   index, analyze    CREATE UNIQUE INDEX and ANALYZE of the copied table
#   validate          ADD FOREIGN KEY (bid) ... NOT VALID, then VALIDATE: what
#                     a new table's foreign keys cost (the ALTER keeps them)
# Shows which parts of the online plan's extra time any copy and swap pays,
# and whether splitting the copy across sessions (cores) helps.
copy_floor() {
	local name=$1 sql=$2 t0
	psql -X -q -c 'CHECKPOINT'
	t0=$(date +%s%N)
	if [ "$name" = split_one_table ] || [ "$name" = split_two_tables ]; then
		local target2=floor_n2 half
		[ "$name" = split_two_tables ] && target2=floor_n3
		half=$(psql -X -At -c "SELECT pg_relation_size('pgbench_accounts') / current_setting('block_size')::int / 2")
		psql -X -q -c "INSERT INTO floor_n2 SELECT aid::bigint, bid, abalance, filler FROM ONLY pgbench_accounts WHERE ctid < '($half,0)'" &
		psql -X -q -c "INSERT INTO $target2 SELECT aid::bigint, bid, abalance, filler FROM ONLY pgbench_accounts WHERE ctid >= '($half,0)'"
		wait
	else
		psql -X -q -v ON_ERROR_STOP=1 -c "$sql" >/dev/null
	fi
	echo "$name $(( ($(date +%s%N) - t0) / 1000000 ))" >>"$online_tmp/floor.times"
}
if [ "${ONLINE_COPY_FLOOR:-1}" = 1 ]; then
	echo "  -- the floor of copy and swap, statement by statement (no load; medians of ${ONLINE_FLOOR_ROUNDS:-3} rounds)"
	online_fresh
	: >"$online_tmp/floor.times"
	for round in $(seq "${ONLINE_FLOOR_ROUNDS:-3}"); do
		psql -X -q -c 'SET client_min_messages = warning' -c 'DROP TABLE IF EXISTS floor_a, floor_n1, floor_n2, floor_n3' \
			-c 'CREATE TABLE floor_a AS SELECT * FROM pgbench_accounts' -c 'ALTER TABLE floor_a ADD PRIMARY KEY (aid)' \
			-c 'CREATE TABLE floor_n1 (aid bigint NOT NULL, bid int, abalance int, filler char(84))' \
			-c 'CREATE TABLE floor_n2 (LIKE floor_n1)' -c 'CREATE TABLE floor_n3 (LIKE floor_n1)' -c 'VACUUM ANALYZE floor_a'
		copy_floor alter 'ALTER TABLE floor_a ALTER aid TYPE bigint'
		copy_floor insert_select 'INSERT INTO floor_n1 SELECT aid::bigint, bid, abalance, filler FROM ONLY pgbench_accounts'
		copy_floor split_one_table ''
		copy_floor split_two_tables ''
		copy_floor index 'CREATE UNIQUE INDEX ON floor_n1 (aid)'
		copy_floor analyze 'ANALYZE floor_n1'
		copy_floor validate 'ALTER TABLE floor_n1 ADD FOREIGN KEY (bid) REFERENCES pgbench_branches NOT VALID; ALTER TABLE floor_n1 VALIDATE CONSTRAINT floor_n1_bid_fkey'
	done
	psql -X -q -c 'DROP TABLE floor_a, floor_n1, floor_n2, floor_n3'
	floor_alter=$(awk '$1 == "alter" { print $2 }' "$online_tmp/floor.times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	for what in alter insert_select split_one_table split_two_tables index analyze validate; do
		ms=$(awk -v w="$what" '$1 == w { print $2 }' "$online_tmp/floor.times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		bench_row "floor: $what" "$ms" "ALTER TYPE (rewrite + index)" "$floor_alter"
	done
	echo "  all rounds (ms): $(awk '{ printf "%s %s; ", $1, $2 }' "$online_tmp/floor.times")"
fi
dropdb storagelab_bench_online
rm -rf "$online_tmp"

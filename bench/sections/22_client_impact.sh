# Section 22: what clients feel during an INT -> BIGINT migration of
# pgbench_accounts.aid, under a fixed-rate load, against pg_repack of the same
# table and the blocking script.  pgbench -i -s SCALE --foreign-keys is built
# once (the recorded run: SCALE >= 50); every run below works on a file copy of
# it (createdb -T, same pages), after a CHECKPOINT.
#   1. the sustainable rate: pgbench -c 8 -j 2 without -R for IMPACT_TPS_S (20) s;
#   2. the load: pgbench -c 8 -j 2 -R (IMPACT_RATE_PCT (70) % of that), with
#      per-transaction logs and --failures-detailed, for the whole run:
#      IMPACT_LEAD_S (10) s before the measured window; after it, until the
#      transactions queued during it have completed (at most
#      IMPACT_DRAIN_MAX_S, 180 s), then IMPACT_TAIL_S (10) s; then stopped
#      with SIGALRM (pgbench ends as at -T: summary and logs complete);
#   3. the windows (IMPACT_RUNS="baseline online repack blocking"):
#        baseline  nothing happens for IMPACT_BASE_S (60) s;
#        online    the online script (copy and swap), its seven phases back to
#                  back, storagelab's default settings;
#        repack    pg_repack --no-order --table=public.pgbench_accounts (the
#                  anchor: the floor of a copy and swap; it cannot change a type);
#        blocking  the blocking script (clients wait behind its locks).
# Per window: wall time; throughput per second (transactions completing in
# each whole second of the window: min and median); p99 and worst latency of
# the transactions scheduled in it (pgbench -R counts latency from the
# schedule, so time spent queued behind a lock is in it; the worst wait also
# counts the tail, where a backlog drains); the same two for the execution
# alone (latency minus pgbench's schedule lag: a lock wait without the time
# queued behind the backlog); failed transactions of the whole
# run (pgbench's count, which --failures-detailed splits into serialization
# and deadlock, plus clients aborted by any other error); WAL written in the
# window (pg_current_wal_lsn() before and after: the clients' WAL too), and
# the part beyond the load (that minus the baseline's WAL per transaction
# times the transactions completed in the window: an estimate).  Ratios:
# time against the blocking script, throughput and p99 against the baseline.
# Each step of the online run is also a window of its own.  Then PASS/FAIL of
# the online mode's targets (0 failed transactions; median throughput per
# second during the copy >= 80 % of the rate; p99 <= 2x the baseline's; worst
# wait <= 1 s), and a warning when the baseline itself did not keep the rate
# (a saturated machine: the runs then measure a queue).  Afterwards pgbench's invariant
# (no lost or doubled transaction) and the type of aid are checked per run.
impact_tmp=$(mktemp -d)
impact_clients=(-c 8 -j 2)

impact_now() { date +%s.%N; }
impact_lsn() { psql -X -At -d impact_run -c 'SELECT pg_current_wal_lsn()'; }

impact_setup() {
	bench_db impact_tpl
	pgbench -i -q -s "$SCALE" --foreign-keys impact_tpl >/dev/null 2>&1
	export PGDATABASE=impact_stats
	dropdb --if-exists impact_stats
	createdb impact_stats
	psql -X -q -v ON_ERROR_STOP=1 <<-'SQL'
		CREATE TABLE impact_log (run text, client int, tx bigint, time text, script int,
		                         epoch bigint, us bigint, lag bigint);
		CREATE TABLE impact_runs (run text PRIMARY KEY, log text, m0 float8, m1 float8, t_end float8,
		                          wal numeric, failed int, aborted int, ok boolean);
		-- One window of a run's log: per-second throughput of the whole
		-- seconds in [a, b) (by completion), latency of the transactions
		-- scheduled in [a, b), the worst of those scheduled in [a, e); the
		-- same for their execution alone (latency minus schedule lag: the
		-- time from the transaction's actual start, so a wait on a lock,
		-- without the time it spent queued behind the clients' backlog).
		CREATE FUNCTION impact_window(r text, a float8, b float8, e float8)
		RETURNS TABLE (seconds int, tps_min numeric, tps_median numeric, tps_mean numeric,
		               done bigint, p99_ms numeric, worst_ms numeric, exec_p99_ms numeric, exec_worst_ms numeric)
		LANGUAGE sql AS $$
			WITH ok AS (
				SELECT epoch + us / 1e6::float8 AS t, time::float8 / 1000 AS ms,
				       (time::float8 - coalesce(lag, 0)) / 1000 AS exec_ms,
				       epoch + us / 1e6::float8 - time::float8 / 1e6 AS s
				  FROM impact_log WHERE run = r AND time ~ '^[0-9]+$'),
			per_sec AS (
				SELECT g, count(ok.t) AS n
				  FROM generate_series(ceil(a)::bigint, floor(b)::bigint - 1) g
				  LEFT JOIN ok ON ok.t >= g AND ok.t < g + 1
				 GROUP BY g)
			SELECT (SELECT count(*) FROM per_sec)::int,
			       (SELECT min(n) FROM per_sec)::numeric,
			       (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY n) FROM per_sec)::numeric,
			       round(((SELECT count(*) FROM ok WHERE t >= a AND t < b) / nullif(b - a, 0))::numeric, 1),
			       (SELECT count(*) FROM ok WHERE t >= a AND t < b),
			       round((SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) FROM ok WHERE s >= a AND s < b)::numeric, 1),
			       round((SELECT max(ms) FROM ok WHERE s >= a AND s < e)::numeric, 1),
			       round((SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY exec_ms) FROM ok WHERE s >= a AND s < b)::numeric, 1),
			       round((SELECT max(exec_ms) FROM ok WHERE s >= a AND s < e)::numeric, 1)
		$$;
	SQL
}

# impact_fresh: database impact_run, a file copy of the template
impact_fresh() {
	dropdb --if-exists impact_run
	createdb -T impact_tpl -S file_copy impact_run
}

# impact_phase NAME FILE [PHASE]: run the psql script FILE (with -v
# phase=PHASE) as step NAME, recording in $impact_tmp/$run.phases its start
# and end time and the WAL position before and after it (read in the same
# session: no query of the bench's between two steps); a failure is printed
# and marks the run (impact_ok=f), the run goes on
impact_phase() {
	local name=$1 t0 o="$impact_tmp/$run.$1" lsn
	t0=$(impact_now)
	if ! psql -X -q -At -v ON_ERROR_STOP=1 ${3:+-v phase=$3} -d impact_run -c 'SELECT pg_current_wal_lsn()' \
		-f "$2" -c 'SELECT pg_current_wal_lsn()' >"$o.out" 2>"$o.err"; then
		impact_ok=f
		echo "  $run: $name failed: $(grep -m2 -E 'ERROR|FATAL' "$o.err" | tr '\n' ' ')"
	fi
	lsn=$(grep -E '^[0-9A-F]+/[0-9A-F]+$' "$o.out" | sed -n '1p;$p' | tr '\n' ' ')
	[ "$(wc -w <<<"$lsn")" = 2 ] || lsn="- -"
	echo "$name $t0 $(impact_now) $lsn" >>"$impact_tmp/$run.phases"
}

# impact_drain T: wait until each pgbench thread's log shows a transaction
# scheduled at T or later (so that those queued behind a lock during the
# window have completed and are logged before pgbench is stopped), at most
# IMPACT_DRAIN_MAX_S (180) s
impact_drain() {
	local f
	for _ in $(seq "${IMPACT_DRAIN_MAX_S:-180}"); do
		sleep 1
		for f in "$impact_tmp/$run".[0-9]*; do
			tail -n 500 "$f" | awk -v t="$1" '$3 ~ /^[0-9]+$/ && $5 + $6 / 1e6 - $3 / 1e6 >= t { f = 1; exit } END { exit !f }' || continue 2
		done
		return 0
	done
	echo "  $run: the backlog did not drain in ${IMPACT_DRAIN_MAX_S:-180} s: transactions still queued are not logged"
}

impact_repack() {
	bench_pg_repack_installed || return 1
	"/usr/lib/postgresql/$PG_MAJOR/bin/pg_repack" --no-order --table=public.pgbench_accounts -d impact_run
}

# impact_run RUN: one run under the load (RUN: baseline, online, repack, blocking)
impact_run() {
	run=$1
	local pid m0 m1 lsn0 lsn1 phase
	impact_ok=t
	impact_fresh
	: >"$impact_tmp/$run.phases"
	case $run in
	online) psql -X -At -d impact_run -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'online')" >"$impact_tmp/online.sql" ;;
	blocking) psql -X -At -d impact_run -c "SELECT storagelab.bigint_migration_script('pgbench_accounts', 'aid')" >"$impact_tmp/blocking.sql" ;;
	repack) bench_pg_repack_installed && psql -X -q -d impact_run -c 'CREATE EXTENSION IF NOT EXISTS pg_repack' ;;
	esac
	psql -X -q -d impact_run -c 'CHECKPOINT'
	# -T: longer than any run; SIGALRM ends it
	pgbench -n "${impact_clients[@]}" -R "$impact_rate" -T 36000 -l --failures-detailed \
		--log-prefix="$impact_tmp/$run" impact_run >"$impact_tmp/$run.out" 2>&1 &
	pid=$!
	sleep "${IMPACT_LEAD_S:-10}"
	lsn0=$(impact_lsn); m0=$(impact_now)
	case $run in
	baseline) sleep "${IMPACT_BASE_S:-60}" ;;
	online)
		for phase in start copy index replay swap validate cleanup; do
			impact_phase "$phase" "$impact_tmp/online.sql" "$phase"
		done ;;
	repack)
		if ! impact_repack >"$impact_tmp/repack.out" 2>&1; then
			impact_ok=f
			echo "  repack failed: $(grep -m2 -E 'ERROR|error' "$impact_tmp/repack.out" | tr '\n' ' ')"
		fi ;;
	blocking) impact_phase script "$impact_tmp/blocking.sql" ;;
	esac
	m1=$(impact_now); lsn1=$(impact_lsn)
	impact_drain "$m1"
	sleep "${IMPACT_TAIL_S:-10}"
	kill -ALRM "$pid"
	wait "$pid" || true
	awk -v r="$run" '{ print r, $1, $2, $3, $4, $5, $6, $7 }' "$impact_tmp/$run".[0-9]* |
		psql -X -q -c "\\copy impact_log FROM STDIN WITH (DELIMITER ' ')"
	psql -X -q -c "INSERT INTO impact_runs VALUES ('$run', '$run', $m0, $m1, $(impact_now),
		pg_wal_lsn_diff('$lsn1', '$lsn0'),
		$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$impact_tmp/$run.out" | head -1 | grep . || echo 0),
		$(grep -c 'aborted in command' "$impact_tmp/$run.out" || true), '$impact_ok')"
	echo "  $run: pgbench (whole run): $(sed -n -e 's/^number of \(failed transactions\|serialization failures\|deadlock failures\): \([0-9]*\).*/\1 \2,/p' \
		-e 's/^\(latency average\|tps\) = \(.*\)/\1 \2,/p' -e 's/^rate limit schedule lag: \(.*\)/schedule lag \1,/p' "$impact_tmp/$run.out" | tr '\n' ' ')$(grep -m3 'aborted' "$impact_tmp/$run.out")"
	echo "  $run: invariant holds afterwards: $(PGDATABASE=impact_run online_invariant); aid type: $(psql -X -At -d impact_run -c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'pgbench_accounts'::regclass AND attname = 'aid'")"
	if [ -s "$impact_tmp/$run.phases" ]; then
		psql -X -At -c "SELECT '  $run: phases, ms (WAL in it, clients included): ' || string_agg(format('%s %s (%s)', p, round((t1 - t0) * 1000),
				coalesce(pg_size_pretty(pg_wal_lsn_diff(nullif(l1, '-')::pg_lsn, nullif(l0, '-')::pg_lsn)), '?')), ', ' ORDER BY o)
			FROM (VALUES $(awk '{ printf "%s(%d, \x27%s\x27, %s, %s, \x27%s\x27, \x27%s\x27)", (NR > 1 ? ", " : ""), NR, $1, $2, $3, $4, $5 }' "$impact_tmp/$run.phases")) v(o, p, t0, t1, l0, l1)"
	fi
	# each step of the online run: a window of its own in the same log
	[ "$run" != online ] || awk '{ printf "INSERT INTO impact_runs SELECT %s, run, %s, %s, t_end, pg_wal_lsn_diff(nullif(%s, %s)::pg_lsn, nullif(%s, %s)::pg_lsn), failed, aborted, ok FROM impact_runs WHERE run = %s;\n", "\x27online: " $1 "\x27", $2, $3, "\x27" $5 "\x27", "\x27-\x27", "\x27" $4 "\x27", "\x27-\x27", "\x27online\x27" }' \
		"$impact_tmp/$run.phases" | psql -X -q
}

impact_report() {
	psql -X -q -v ON_ERROR_STOP=1 -v rate="$impact_rate" <<-'SQL'
		CREATE TEMP TABLE w AS
		SELECT r.run, r.m0, r.ok, r.failed, r.aborted, r.wal, round(((r.m1 - r.m0) * 1000)::numeric) AS wall_ms, x.*
		  FROM impact_runs r,
		       impact_window(r.log, r.m0, r.m1, CASE WHEN r.run LIKE 'online: %' THEN r.m1 ELSE r.t_end END) x;
		\pset footer off
		\pset format aligned
		SELECT w.run, w.wall_ms AS "wall ms",
		       CASE WHEN w.run <> 'baseline' THEN round(w.wall_ms / nullif(bl.wall_ms, 0), 2) END AS "x blocking",
		       w.tps_min AS "tps min", w.tps_median AS "tps median", w.tps_mean AS "tps mean",
		       round(w.tps_median / nullif(b.tps_median, 0), 2) AS "tps x baseline",
		       w.p99_ms AS "p99 ms", round(w.p99_ms / nullif(b.p99_ms, 0), 2) AS "p99 x baseline",
		       w.worst_ms AS "worst ms", w.exec_p99_ms AS "exec p99 ms", w.exec_worst_ms AS "exec worst ms",
		       format('%s (%s)', w.failed, w.aborted) AS "failed (aborted clients)",
		       pg_size_pretty(w.wal) AS "WAL",
		       pg_size_pretty(w.wal - round(b.wal / nullif(b.done, 0) * w.done)) AS "WAL beyond the load",
		       CASE WHEN w.ok THEN '' ELSE 'a step FAILED' END AS "note"
		  FROM w LEFT JOIN w b ON b.run = 'baseline' LEFT JOIN w bl ON bl.run = 'blocking'
		 ORDER BY array_position(ARRAY['baseline', 'online', 'repack', 'blocking'], split_part(w.run, ':', 1)), w.m0;
		\pset format unaligned
		\pset tuples_only on
		SELECT format(E'  online targets (target rate %s tps, baseline p99 %s ms):\n'
		              '    0 failed transactions: %s (%s failed, %s clients aborted)\n'
		              '    throughput during the copy >= 80 %% of the target rate: %s (median %s tps per second = %s %%; min %s)\n'
		              '    p99 <= 2x the baseline''s: %s (%s ms = %sx)\n'
		              '    worst wait <= 1 s: %s (%s ms)',
		              :rate, b.p99_ms,
		              CASE WHEN o.failed + o.aborted = 0 AND o.ok THEN 'PASS' ELSE 'FAIL' END, o.failed, o.aborted,
		              CASE WHEN coalesce(c.tps_median, c.tps_mean) >= 0.8 * :rate THEN 'PASS' ELSE 'FAIL' END,
		              coalesce(c.tps_median::text, c.tps_mean || ' (mean: the copy lasted under a whole second)'),
		              round(100 * coalesce(c.tps_median, c.tps_mean) / :rate), c.tps_min,
		              CASE WHEN o.p99_ms <= 2 * b.p99_ms THEN 'PASS' ELSE 'FAIL' END, o.p99_ms, round(o.p99_ms / b.p99_ms, 2),
		              CASE WHEN o.worst_ms <= 1000 THEN 'PASS' ELSE 'FAIL' END, o.worst_ms)
		  FROM w o, w c, w b WHERE o.run = 'online' AND c.run = 'online: copy' AND b.run = 'baseline';
		SELECT format('  WARNING: the baseline did not keep the rate (%s tps mean against -R %s, p99 %s ms): '
		              'the machine was saturated, so the runs measure a queue, not the migrations; run again on a quieter machine or with a lower IMPACT_RATE_PCT',
		              b.tps_mean, :rate, b.p99_ms)
		  FROM w b WHERE b.run = 'baseline' AND (b.tps_mean < 0.97 * :rate OR b.p99_ms > 1000);
	SQL
}

impact_setup
impact_fresh
tps=$(pgbench -n "${impact_clients[@]}" -T "${IMPACT_TPS_S:-20}" impact_run 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
impact_rate=$(awk -v t="$tps" -v p="${IMPACT_RATE_PCT:-70}" 'BEGIN { printf "%d", t * p / 100 }')
echo "  sustainable: $tps tps (pgbench ${impact_clients[*]}, no -R, ${IMPACT_TPS_S:-20} s); load: pgbench ${impact_clients[*]} -R $impact_rate (${IMPACT_RATE_PCT:-70} %)"
for run in ${IMPACT_RUNS:-baseline online repack blocking}; do
	impact_run "$run"
done
impact_report
bench_row "online script (all phases), fixed-rate load" \
	"$(psql -X -At -c "SELECT (m1 - m0) * 1000 FROM impact_runs WHERE run = 'online'")" "blocking script, same load" \
	"$(psql -X -At -c "SELECT (m1 - m0) * 1000 FROM impact_runs WHERE run = 'blocking'")"
bench_row "pg_repack pgbench_accounts, fixed-rate load" \
	"$(psql -X -At -c "SELECT (m1 - m0) * 1000 FROM impact_runs WHERE run = 'repack'")" "blocking script, same load" \
	"$(psql -X -At -c "SELECT (m1 - m0) * 1000 FROM impact_runs WHERE run = 'blocking'")"
unset PGDATABASE
dropdb impact_run
dropdb impact_tpl
dropdb impact_stats
rm -rf "$impact_tmp"

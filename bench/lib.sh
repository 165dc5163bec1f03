# bench/lib.sh: helpers for bench sections (sourced inside the bench cluster).
#
#   bench_db NAME            create database NAME with storagelab, make it current
#   bench_ms "SQL" [RUNS]    median milliseconds of RUNS executions of SQL,
#                            timed inside the server (no connection overhead)
#   bench_best_ms "SQL" [RUNS]  the same, best (fastest) of RUNS: on a shared
#                            machine the least disturbed run
#   bench_row LABEL MS ANCHOR_LABEL ANCHOR_MS
#                            print one result row with its ratio to the anchor
#   $bench_catalog_anchor_sql  the catalog query behind int_overflow, an anchor
#   bench_pg_repack_installed  true when pg_repack (postgresql-N-repack, an
#                            anchor of sections 21 and 22) is installed, after
#                            installing it as root if need be; else says so

# The plain catalog query behind int_overflow (integer columns joined by
# name to pg_sequences): the anchor of sections 10 and 70.
bench_catalog_anchor_sql="SELECT a.attrelid::regclass, a.attname, a.atttypid::regtype, s.last_value, s.max_value
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_sequences s ON s.schemaname = n.nspname
       AND s.sequencename = c.relname || '_' || a.attname || '_seq'
 WHERE a.attnum > 0 AND NOT a.attisdropped
   AND a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')"

bench_pg_repack_installed() {
	[ -x "/usr/lib/postgresql/$PG_MAJOR/bin/pg_repack" ] && return 0
	{ [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$PG_MAJOR-repack" >/dev/null 2>&1; } ||
		{ echo "  pg_repack not installed (postgresql-$PG_MAJOR-repack)"; return 1; }
}

bench_header() {
	echo "storagelab bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
		"$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
		"$(psql -X -At -d postgres -c 'SHOW server_version')"
}

bench_db() {
	export PGDATABASE=$1
	dropdb --if-exists "$1" 2>/dev/null
	createdb "$1"
	psql -X -q -c 'CREATE EXTENSION storagelab' -c "
		CREATE FUNCTION public.bench_ms(q text, runs int DEFAULT 5) RETURNS numeric
		LANGUAGE plpgsql AS \$\$
		DECLARE t timestamptz; times numeric[] := '{}';
		BEGIN
			FOR i IN 1..runs LOOP
				t := clock_timestamp();
				EXECUTE q;
				times := times || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
			END LOOP;
			RETURN round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(times) x)::numeric, 2);
		END \$\$;
		CREATE FUNCTION public.bench_best(q text, runs int DEFAULT 5) RETURNS numeric
		LANGUAGE plpgsql AS \$\$
		DECLARE t timestamptz; best numeric;
		BEGIN
			FOR i IN 1..runs LOOP
				t := clock_timestamp();
				EXECUTE q;
				best := least(best, (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric);
			END LOOP;
			RETURN round(best, 2);
		END \$\$;"
}

bench_ms() {
	psql -X -At -v ON_ERROR_STOP=1 -v q="$1" -v runs="${2:-5}" <<<'SELECT public.bench_ms(:'"'"'q'"'"', :runs)'
}

bench_best_ms() {
	psql -X -At -v ON_ERROR_STOP=1 -v q="$1" -v runs="${2:-5}" <<<'SELECT public.bench_best(:'"'"'q'"'"', :runs)'
}

bench_row() {
	awk -v l="$1" -v ms="$2" -v al="$3" -v ams="$4" 'BEGIN {
		r = (ams > 0) ? ms / ams : 0
		printf "  %-46s %10.2f ms   %6.2fx  %s (%.2f ms)\n", l, ms, r, al, ams }'
}

# Load under a schema change (sections 21 and 51), on pgbench -i data in the
# current database.  The caller sets online_tmp (a scratch directory) and
# label (names the phase outputs); online_phase adds to phase_ms and
# phase_total.
#
#   online_probe_setup       create the probe, stop flag and phase tables
#   online_load PREFIX [RATE]
#   online_report LABEL      failed/aborted, per-second max latency, probe
#   online_invariant         pgbench's balances agree (t/f)
#   online_phase NAME CMD... run CMD as phase NAME, timed

online_probe_setup() {
	# A probe client beside pgbench: one UPDATE of a random account per
	# transaction (abalance = abalance: no change), its latency measured by the
	# server clock and committed, until bench_stop has a row.  pgbench's own
	# logs miss transactions that straddle its 5-second runs.
	psql -X -q -c "
		CREATE TABLE public.bench_probe (at timestamptz, ms numeric);
		CREATE TABLE public.bench_stop (x int);
		CREATE TABLE public.bench_phase (phase text, t0 timestamptz, t1 timestamptz);
		CREATE PROCEDURE public.bench_probe_run() LANGUAGE plpgsql AS \$\$
		DECLARE t0 timestamptz; n bigint := (SELECT count(*) FROM pgbench_branches) * 100000; a int;
		BEGIN
			WHILE NOT EXISTS (SELECT 1 FROM public.bench_stop) LOOP
				-- the key in a variable (a parameter): random() in the WHERE
				-- clause would make every probe a sequential scan
				a := 1 + (random() * (n - 1))::int;
				t0 := clock_timestamp();
				UPDATE pgbench_accounts SET abalance = abalance WHERE aid = a;
				INSERT INTO public.bench_probe VALUES (t0, extract(epoch FROM clock_timestamp() - t0) * 1000);
				COMMIT;
				PERFORM pg_sleep(0.01);
			END LOOP;
		END \$\$;"
}

# online_load PREFIX [RATE]: 4 clients in 5-second runs until $online_tmp/stop
# exists (pgbench's built-in script, or $online_pgbench_args, e.g. "-f FILE"),
# plus the probe
online_load() {
	local i=0
	psql -X -q -c 'CALL public.bench_probe_run()' >"$online_tmp/$1.probe.out" 2>&1 &
	while [ ! -f "$online_tmp/stop" ]; do
		pgbench -n -c 4 -j 2 -T 5 ${2:+-R "$2"} -l --aggregate-interval=1 --log-prefix="$online_tmp/$1_$i" \
			${online_pgbench_args:-} "$PGDATABASE" >"$online_tmp/$1_$i.summary" 2>&1
		i=$((i + 1))
	done
	psql -X -q -c 'INSERT INTO public.bench_stop VALUES (1)'
	wait
}

# online_report LABEL: failures and latency from the load's logs
online_report() {
	local failed aborted maxlat slow tps
	failed=$(cat "$online_tmp/$1"_*.summary | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}')
	aborted=$(cat "$online_tmp/$1"_*.summary | grep -c 'aborted' || true)
	maxlat=$(cat "$online_tmp/$1"_*.[0-9]* 2>/dev/null | awk '{ if ($6 > m) m = $6 } END { printf "%.0f", m / 1000 }')
	slow=$(cat "$online_tmp/$1"_*.[0-9]* 2>/dev/null | awk '$6 > 1000000 { n++ } END { print n + 0 }')
	tps=$(cat "$online_tmp/$1"_*.[0-9]* 2>/dev/null | awk '{ n += $2; s[$1] = 1 } END { c = length(s); printf "%.0f", c ? n / c : 0 }')
	echo "  $1: pgbench: failed transactions $failed, aborted clients $aborted, max latency ${maxlat} ms, seconds with a latency over 1 s: $slow, mean ${tps} tps"
	echo "  $1: probe: $(psql -X -At -c "SELECT format('%s transactions, max latency %s ms, %s over 1 s, %s seconds with one over 200 ms',
		count(*), round(max(ms)), count(*) FILTER (WHERE ms > 1000), count(DISTINCT date_trunc('second', at)) FILTER (WHERE ms > 200))
		FROM public.bench_probe")$(grep -q ERROR "$online_tmp/$1.probe.out" && echo ' (probe failed: see its output)')"
	echo "  $1: probe max latency per phase (ms): $(psql -X -At -c "SELECT string_agg(format('%s %s', ph.phase, coalesce(round(m.ms), 0)), ', ' ORDER BY ph.t0)
		FROM public.bench_phase ph, LATERAL (SELECT max(p.ms) AS ms FROM public.bench_probe p WHERE p.at >= ph.t0 AND p.at < ph.t1) m")"
}

online_invariant() {
	psql -X -At -c "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(tbalance) FROM pgbench_tellers)
	                   AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(bbalance) FROM pgbench_branches)
	                   AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
}

# online_phase NAME CMD...: run CMD as phase NAME, recording its times in bench_phase
online_phase() {
	local name=$1 p0
	shift
	psql -X -q -c "INSERT INTO public.bench_phase VALUES ('$name', clock_timestamp(), NULL)"
	p0=$(date +%s%N)
	"$@" >"$online_tmp/$label.$name.out" 2>&1 || { echo "  $label phase $name failed:"; grep -m3 ERROR "$online_tmp/$label.$name.out"; }
	psql -X -q -c "UPDATE public.bench_phase SET t1 = clock_timestamp() WHERE phase = '$name'"
	p0=$(( ($(date +%s%N) - p0) / 1000000 ))
	phase_ms="$phase_ms $name $p0"
	phase_total=$((phase_total + p0))
}

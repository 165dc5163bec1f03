# bench/lib.sh: helpers for bench sections (sourced inside the bench cluster).
#
#   bench_db NAME            create database NAME with storagelab, make it current
#   bench_ms "SQL" [RUNS]    median milliseconds of RUNS executions of SQL,
#                            timed inside the server (no connection overhead)
#   bench_row LABEL MS ANCHOR_LABEL ANCHOR_MS
#                            print one result row with its ratio to the anchor

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
		END \$\$;"
}

bench_ms() {
	psql -X -At -v ON_ERROR_STOP=1 -v q="$1" -v runs="${2:-5}" <<<'SELECT public.bench_ms(:'"'"'q'"'"', :runs)'
}

bench_row() {
	awk -v l="$1" -v ms="$2" -v al="$3" -v ams="$4" 'BEGIN {
		r = (ams > 0) ? ms / ams : 0
		printf "  %-46s %10.2f ms   %6.2fx  %s (%.2f ms)\n", l, ms, r, al, ams }'
}

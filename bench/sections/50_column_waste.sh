# Section 50: column_waste, alignment_padding, column_profile.
#
# Views: two catalog sizes, 500 * SCALE and 1,000 * SCALE tables of ten
# columns each (SCALE 10: 5,000 and 10,000 tables, 100,000 columns at the
# larger), 20 analyzed rows per table.  Anchors: a plain read of pg_stats,
# and a cheaper one, count(*) over pg_attribute.  Beside the wall-clock
# median, the backend's CPU time per run (utime + stime from /proc), which
# the other users of a shared machine disturb much less.  The plans are
# printed (node types only) to show one function scan per view: no join,
# no sort.
# column_profile: one table of 50,000 * SCALE rows and nine columns of the
# types the rules look at, against a single-pass aggregate (min and max of
# every column, run as PostgreSQL plans it, in parallel) over the same
# table; seven interleaved runs of each, medians.

bench_tables() {	# bench_tables FIRST LAST: create and analyze tables FIRST..LAST
	psql -X -q -v ON_ERROR_STOP=1 -c "
		CREATE OR REPLACE PROCEDURE public.bench_make(first int, last int) LANGUAGE plpgsql AS \$\$
		BEGIN
			FOR i IN first..last LOOP
				EXECUTE format('CREATE TABLE public.w%s (id int8 PRIMARY KEY, flag bool NOT NULL,
					qty int8 NOT NULL, label text NOT NULL, n4 int4, price numeric(10,2),
					created timestamptz NOT NULL, code varchar(20), s2 int2, note text)', i);
				EXECUTE format('INSERT INTO public.w%s SELECT g, g %% 2 = 0, g %% 50, ''item '' || g, g,
					g * 1.5, now(), ''C'' || g, g, CASE WHEN g %% 3 = 0 THEN ''n'' END
					FROM generate_series(1, 20) g', i);
				EXECUTE format('ANALYZE public.w%s', i);
				IF i % 200 = 0 THEN COMMIT; END IF;
			END LOOP;
		END \$\$;" -c "CALL public.bench_make($1, $2);"
}

bench_cpu_ms() {	# bench_cpu_ms "SQL" [RUNS]: backend CPU ms per run of SQL
	local runs=${2:-3} script
	script="SELECT pg_backend_pid() AS pid \\gset
\\setenv BENCH_PID :pid
\\! awk '{print \"before\", \$14 + \$15}' /proc/\$BENCH_PID/stat"
	for _ in $(seq "$runs"); do script+=$'\n'"$1 \\g /dev/null"; done
	script+=$'\n'"\\! awk '{print \"after\", \$14 + \$15}' /proc/\$BENCH_PID/stat"
	psql -X -q -v ON_ERROR_STOP=1 <<<"$script" |
		awk -v runs="$runs" -v hz="$(getconf CLK_TCK)" \
			'$1 == "before" {b = $2} $1 == "after" {printf "%.0f\n", ($2 - b) * 1000 / hz / runs}'
}

bench_plan() {	# bench_plan "SQL": the plan's node types in order, one line
	psql -X -At -c "EXPLAIN (COSTS OFF) $1" | grep -vE '^ *[A-Z][a-z]+( [A-Za-z]+)*: ' |
		sed -E 's/^ *(->)? *//; s/ (on|using) .*//' | paste -sd ',' | sed 's/,/, /g'
}

bench_views() {	# bench_views N: time the views at N tables
	echo "  ($1 tables, $(psql -X -At -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname LIKE 'w%' AND c.relkind = 'r' AND a.attnum > 0") columns)"
	local stats attr ap cw
	stats=$(bench_ms 'SELECT * FROM pg_catalog.pg_stats' 5)
	attr=$(bench_ms 'SELECT count(*) FROM pg_catalog.pg_attribute' 5)
	ap=$(bench_ms 'SELECT * FROM storagelab.alignment_padding' 5)
	cw=$(bench_ms 'SELECT * FROM storagelab.column_waste' 5)
	bench_row "alignment_padding, $1 tables" "$ap" "SELECT * FROM pg_stats" "$stats"
	bench_row "column_waste, $1 tables" "$cw" "SELECT * FROM pg_stats" "$stats"
	bench_row "alignment_padding, $1 tables" "$ap" "count(*) FROM pg_attribute" "$attr"
	bench_row "column_waste, $1 tables" "$cw" "count(*) FROM pg_attribute" "$attr"
	local cstats cap ccw
	cstats=$(bench_cpu_ms 'SELECT * FROM pg_catalog.pg_stats')
	cap=$(bench_cpu_ms 'SELECT * FROM storagelab.alignment_padding')
	ccw=$(bench_cpu_ms 'SELECT * FROM storagelab.column_waste')
	bench_row "alignment_padding, $1 tables, CPU" "$cap" "pg_stats, CPU" "$cstats"
	bench_row "column_waste, $1 tables, CPU" "$ccw" "pg_stats, CPU" "$cstats"
	eval "ap_$1=$ap cw_$1=$cw stats_$1=$stats cap_$1=$cap ccw_$1=$ccw"
}

small=$((500 * SCALE))
large=$((1000 * SCALE))
bench_db storagelab_bench_waste
bench_tables 1 "$small"
bench_views "$small"
bench_tables $((small + 1)) "$large"
bench_views "$large"
eval "ap1=\$ap_$small cw1=\$cw_$small st1=\$stats_$small cap1=\$cap_$small ccw1=\$ccw_$small"
eval "ap2=\$ap_$large cw2=\$cw_$large st2=\$stats_$large cap2=\$cap_$large ccw2=\$ccw_$large"
bench_row "alignment_padding growth ($large / $small)" "$ap2" "same at $small tables" "$ap1"
bench_row "column_waste growth ($large / $small)" "$cw2" "same at $small tables" "$cw1"
bench_row "alignment_padding CPU growth" "$cap2" "same at $small tables" "$cap1"
bench_row "column_waste CPU growth" "$ccw2" "same at $small tables" "$ccw1"
bench_row "pg_stats growth ($large / $small)" "$st2" "same at $small tables" "$st1"
echo "  plan of alignment_padding: $(bench_plan 'SELECT * FROM storagelab.alignment_padding')"
echo "  plan of column_waste: $(bench_plan 'SELECT * FROM storagelab.column_waste')"

psql -X -q -v ON_ERROR_STOP=1 -c "
	CREATE TABLE public.profiled AS
	SELECT g::int8 AS a, (g % 1000)::int4 AS b, g::numeric AS n, md5(g::text) AS t,
	       md5(g::text)::uuid::text AS u, ('x' || g)::char(20) AS c, now() AS ts,
	       g % 2 = 0 AS bo, (g * 7)::text AS ti
	  FROM generate_series(1, 50000 * $SCALE) g;" -c "VACUUM ANALYZE public.profiled;"
echo "  (profiled: $(psql -X -At -c "SELECT pg_size_pretty(pg_relation_size('public.profiled'))"))"
agg_sql='SELECT min(a), max(a), min(b), max(b), min(n), max(n), min(t), max(t), min(u), max(u), min(c), max(c), min(ts), max(ts), bool_and(bo), bool_or(bo), min(ti), max(ti) FROM public.profiled'
prof_sql="SELECT * FROM storagelab.column_profile('public.profiled')"
# seven interleaved runs of each (after one warm-up run of each), medians
medians=$(psql -X -q -At -v ON_ERROR_STOP=1 -v a="$agg_sql" -v p="$prof_sql" <<'EOF'
CREATE FUNCTION pg_temp.interleaved(a text, p text, runs int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t timestamptz; ta numeric[] := '{}'; tp numeric[] := '{}';
BEGIN
	EXECUTE a; EXECUTE p;
	FOR i IN 1..runs LOOP
		t := clock_timestamp(); EXECUTE a;
		ta := ta || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
		t := clock_timestamp(); EXECUTE p;
		tp := tp || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
	END LOOP;
	RETURN (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(ta) x)
	       || ' ' ||
	       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(tp) x);
END $$;
SELECT pg_temp.interleaved(:'a', :'p', 7);
EOF
)
read -r agg prof <<<"$medians"
bench_row "column_profile (9 columns)" "$prof" "single-pass min/max aggregate" "$agg"
agg_cpu=$(bench_cpu_ms "SET max_parallel_workers_per_gather = 0; $agg_sql" 5)
prof_cpu=$(bench_cpu_ms "$prof_sql" 5)
bench_row "column_profile, CPU" "$prof_cpu" "same aggregate, not parallel, CPU" "$agg_cpu"

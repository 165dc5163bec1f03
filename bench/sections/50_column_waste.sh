# Section 50: column_waste, alignment_padding, column_profile (issue 8).
#
# Views: two catalog sizes, 500 * SCALE and 1,000 * SCALE tables of ten
# columns each (SCALE 10: 5,000 and 10,000 tables, 100,000 columns at the
# larger), 20 analyzed rows per table.  Anchor: a plain read of pg_stats.
# column_profile: one table of 50,000 * SCALE rows and nine columns of the
# types the rules look at, against a single-pass aggregate (min and max of
# every column) over the same table.

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

small=$((500 * SCALE))
large=$((1000 * SCALE))
bench_db storagelab_bench_waste
bench_tables 1 "$small"
echo "  ($small tables, $(psql -X -At -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname LIKE 'w%' AND c.relkind = 'r' AND a.attnum > 0") columns)"
anchor=$(bench_ms 'SELECT * FROM pg_catalog.pg_stats' 3)
ap=$(bench_ms 'SELECT * FROM storagelab.alignment_padding' 3)
cw=$(bench_ms 'SELECT * FROM storagelab.column_waste' 3)
bench_row "alignment_padding, $small tables" "$ap" "SELECT * FROM pg_stats" "$anchor"
bench_row "column_waste, $small tables" "$cw" "SELECT * FROM pg_stats" "$anchor"

bench_tables $((small + 1)) "$large"
echo "  ($large tables, $(psql -X -At -c "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname LIKE 'w%' AND c.relkind = 'r' AND a.attnum > 0") columns)"
anchor2=$(bench_ms 'SELECT * FROM pg_catalog.pg_stats' 3)
ap2=$(bench_ms 'SELECT * FROM storagelab.alignment_padding' 3)
cw2=$(bench_ms 'SELECT * FROM storagelab.column_waste' 3)
bench_row "alignment_padding, $large tables" "$ap2" "SELECT * FROM pg_stats" "$anchor2"
bench_row "column_waste, $large tables" "$cw2" "SELECT * FROM pg_stats" "$anchor2"
bench_row "alignment_padding growth ($large / $small tables)" "$ap2" "same at $small tables" "$ap"
bench_row "column_waste growth ($large / $small tables)" "$cw2" "same at $small tables" "$cw"

psql -X -q -v ON_ERROR_STOP=1 -c "
	CREATE TABLE public.profiled AS
	SELECT g::int8 AS a, (g % 1000)::int4 AS b, g::numeric AS n, md5(g::text) AS t,
	       md5(g::text)::uuid::text AS u, ('x' || g)::char(20) AS c, now() AS ts,
	       g % 2 = 0 AS bo, (g * 7)::text AS ti
	  FROM generate_series(1, 50000 * $SCALE) g;" -c "VACUUM ANALYZE public.profiled;"
echo "  (profiled: $(psql -X -At -c "SELECT pg_size_pretty(pg_relation_size('public.profiled'))"))"
agg=$(bench_ms 'SELECT min(a), max(a), min(b), max(b), min(n), max(n), min(t), max(t), min(u), max(u), min(c), max(c), min(ts), max(ts), bool_and(bo), bool_or(bo), min(ti), max(ti) FROM public.profiled' 5)
prof=$(bench_ms "SELECT * FROM storagelab.column_profile('public.profiled')" 5)
bench_row "column_profile (9 columns)" "$prof" "single-pass min/max aggregate" "$agg"

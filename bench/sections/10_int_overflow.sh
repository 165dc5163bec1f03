# Section 10: storagelab.int_overflow on a database of many small tables.
#
# SCALE 1 = 10,000 tables of 4 columns (40,000 columns: id serial primary key,
# ref int, amount int, note text): 10,000 sequences, and on every fifth table
# an index on ref (2,000 indexed int columns without a sequence).  Three rows
# per table, ANALYZEd.  The goal is <= 500 ms at SCALE 1.
#
# The tables are built in two halves and everything is measured after each,
# so that one run shows how the cost grows (5,000 then 10,000 tables).
# Warm: median of 5 runs in one session (catalog caches filled).  First call:
# median of 3 new sessions, each running the query once (what a DBA's first
# query pays: relation and statistics caches filled on the way).
#
# Anchor: the plain catalog query an existing tool runs -- integer columns
# with their types, joined by name to pg_sequences (last_value, max_value).
bench_db storagelab_bench_int_overflow
ntables=$((10000 * SCALE))

io_build() {	# io_build FROM TO: create tables tFROM .. tTO
	echo "  building tables $1 .. $2 ..." >&2
	psql -X -q -v ON_ERROR_STOP=1 -v from="$1" -v to="$2" <<'SQL'
SET client_min_messages = warning;
SELECT set_config('bench.from', :'from', false), set_config('bench.to', :'to', false) \gset
-- Commit every 500 tables: one transaction would need a lock per object.
DO $$
BEGIN
  FOR i IN current_setting('bench.from')::int .. current_setting('bench.to')::int LOOP
    EXECUTE format('CREATE TABLE public.t%s (id serial PRIMARY KEY, ref int, amount int, note text)', i);
    EXECUTE format('INSERT INTO public.t%s (ref, amount, note) VALUES (1, 10, %L), (2, 20, %L), (%s, 30, %L)',
                   i, 'a', 'b', i, 'c');
    IF i % 5 = 0 THEN
      EXECUTE format('CREATE INDEX ON public.t%s (ref)', i);
    END IF;
    IF i % 500 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
END $$;
-- A few sequences near their limits.
SELECT count(setval(format('public.t%s_id_seq', i), 2100000000)) AS pushed
  FROM generate_series(current_setting('bench.from')::int, current_setting('bench.to')::int, 1000) i \gset
SQL
	vacuumdb -q -z -j 2 "$PGDATABASE"
}

# First call: median of 3 new sessions running the query once.
io_first_call_ms() {
	local i
	for i in 1 2 3; do
		psql -X -At -v ON_ERROR_STOP=1 -v q="$1" <<<'SELECT public.bench_ms(:'"'"'q'"'"', 1)'
	done | sort -n | sed -n 2p
}

anchor_sql=$bench_catalog_anchor_sql

io_measure() {	# io_measure NTABLES
	psql -X -At -c "SELECT 'rows: ' || count(*) || ', sequences: ' || count(sequence) || ', by index: ' || count(*) FILTER (WHERE source = 'index') || ', at risk: ' || count(*) FILTER (WHERE risk <> 'ok') FROM storagelab.int_overflow" | sed "s/^/  $1 tables: /"
	local anchor subject anchor1 subject1
	anchor=$(bench_ms "$anchor_sql" 5)
	subject=$(bench_ms 'SELECT * FROM storagelab.int_overflow' 5)
	bench_row "int_overflow (view), $1 tables, warm" "$subject" "pg_sequences + column types" "$anchor"
	anchor1=$(io_first_call_ms "$anchor_sql")
	subject1=$(io_first_call_ms 'SELECT * FROM storagelab.int_overflow')
	bench_row "int_overflow (view), $1 tables, first call" "$subject1" "same, first call" "$anchor1"
}

io_build 1 $((ntables / 2))
io_measure $((ntables / 2))
io_build $((ntables / 2 + 1)) "$ntables"
io_measure "$ntables"

anchor=$(bench_ms "$anchor_sql" 5)
probes=$(bench_ms 'SELECT count(*) FROM pg_catalog.pg_sequence s, storagelab_internal.int_overflow_sequence_state(s.seqrelid) v' 5)
bench_row "sequence_state() x all sequences" "$probes" "pg_sequences + column types" "$anchor"
snap=$(bench_ms 'SELECT storagelab.int_overflow_snapshot()' 3)
bench_row "snapshot()" "$snap" "pg_sequences + column types" "$anchor"

# With a month of daily snapshots in the history (30 per column, all in the
# default 30-day growth window), as a scheduled snapshot() leaves it: the
# view then also joins a growth line per column, which the snapshot function
# fits (here: the refit it runs, after the history is written at once).
psql -X -q -c "INSERT INTO storagelab.int_overflow_history (taken_at, schema_name, table_name, column_name, value)
  SELECT now() - d * interval '1 day', m.nspname, m.relname, m.attname, m.cur - d * 1000
    FROM storagelab_internal.int_overflow_measurements() m, generate_series(1, 30) d
   WHERE m.cur IS NOT NULL
  ON CONFLICT DO NOTHING" -c "ANALYZE storagelab.int_overflow_history" \
	-c "SELECT storagelab_internal.int_overflow_growth_refit()"
subject=$(bench_ms 'SELECT * FROM storagelab.int_overflow' 3)
bench_row "int_overflow (view), 30 snapshots per column" "$subject" "pg_sequences + column types" "$anchor"

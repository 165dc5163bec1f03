# Section 10: storagelab.int_overflow on a database of many small tables.
#
# SCALE 1 = 10,000 tables of 4 columns (40,000 columns: id serial primary key,
# ref int, amount int, note text): 10,000 sequences, and on every fifth table
# an index on ref (2,000 indexed int columns without a sequence).  Three rows
# per table, ANALYZEd.  Issue 3 asks for <= 500 ms at SCALE 1.
#
# Anchor: the plain catalog query an existing tool runs -- integer columns
# with their types, joined by name to pg_sequences (last_value, max_value).
bench_db storagelab_bench_int_overflow
ntables=$((10000 * SCALE))
echo "  building $ntables tables ..." >&2
psql -X -q -v ON_ERROR_STOP=1 -v n="$ntables" <<'SQL'
SET client_min_messages = warning;
SELECT set_config('bench.n', :'n', false) \gset
-- Commit every 500 tables: one transaction would need a lock per object.
DO $$
DECLARE
  n int := current_setting('bench.n')::int;
BEGIN
  FOR i IN 1 .. n LOOP
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
  FROM generate_series(1, current_setting('bench.n')::int, 1000) i \gset
SQL
vacuumdb -q -z -j 2 "$PGDATABASE"
psql -X -At -c "SELECT 'rows: ' || count(*) || ', sequences: ' || count(sequence) || ', by index: ' || count(*) FILTER (WHERE source = 'index') || ', at risk: ' || count(*) FILTER (WHERE risk <> 'ok') FROM storagelab.int_overflow" | sed 's/^/  /'

anchor=$(bench_ms "SELECT a.attrelid::regclass, a.attname, a.atttypid::regtype, s.last_value, s.max_value
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_sequences s ON s.schemaname = n.nspname
       AND s.sequencename = c.relname || '_' || a.attname || '_seq'
 WHERE a.attnum > 0 AND NOT a.attisdropped
   AND a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')" 5)
subject=$(bench_ms 'SELECT * FROM storagelab.int_overflow' 5)
bench_row "int_overflow (view)" "$subject" "pg_sequences + column types" "$anchor"
probes=$(bench_ms 'SELECT count(*) FROM pg_catalog.pg_sequence s, storagelab.int_overflow_sequence_state(s.seqrelid) v' 5)
bench_row "sequence_state() x all sequences" "$probes" "pg_sequences + column types" "$anchor"
snap=$(bench_ms 'SELECT storagelab.snapshot()' 3)
bench_row "snapshot()" "$snap" "pg_sequences + column types" "$anchor"

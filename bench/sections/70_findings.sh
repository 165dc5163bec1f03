# Section 70: storagelab.findings and report() on a database of many small
# tables with a year of daily int_overflow snapshots.
#
# SCALE 1 = 10,000 tables of 4 columns (id serial primary key, ref int,
# amount int, note text; an index on ref of every fifth table), three rows
# each, ANALYZEd and vacuumed; every 1,000th sequence pushed to 98 %, so that
# findings has rows to rank.  History: 365 daily snapshots of every
# int_overflow column (30,000 columns: about 11 million rows), as a daily
# snapshot leaves it after a year (int_overflow.history_retention is 400
# days).  The goal: findings in at most 1 s at SCALE 1.
#
# Warm: median of 5 runs in one session.  Anchors: the plain catalog query of
# section 10 (integer columns joined to pg_sequences), and pg_stats read
# whole (what the column advice reads instead).
bench_db storagelab_bench_findings
ntables=$((10000 * SCALE))

echo "  building $ntables tables ..." >&2
psql -X -q -v ON_ERROR_STOP=1 -v n="$ntables" <<'SQL'
SET client_min_messages = warning;
SELECT set_config('bench.n', :'n', false) \gset
-- Commit every 500 tables: one transaction would need a lock per object.
DO $$
BEGIN
  FOR i IN 1 .. current_setting('bench.n')::int LOOP
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
SELECT count(setval(format('public.t%s_id_seq', i), 2100000000)) AS pushed
  FROM generate_series(1000, current_setting('bench.n')::int, 1000) i \gset
SQL
vacuumdb -q -z -j 2 "$PGDATABASE"

echo "  recording a year of daily snapshots ..." >&2
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
-- The history as a year of storagelab's daily snapshot leaves it, written
-- at once (the snapshot function maintains whatever summary the view reads).
CREATE TEMP TABLE m AS
  SELECT m.nspname, m.relname, m.attname, m.cur FROM storagelab_internal.int_overflow_measurements() m
   WHERE m.cur IS NOT NULL;
INSERT INTO storagelab.int_overflow_history (taken_at, schema_name, table_name, column_name, value)
  SELECT now() - d * interval '1 day', m.nspname, m.relname, m.attname, greatest(m.cur - d * 1000, 0)
    FROM m, generate_series(1, 365) d
  ON CONFLICT DO NOTHING;
ANALYZE storagelab.int_overflow_history;
SQL
snap_sql='SELECT storagelab.int_overflow_snapshot()'
psql -X -q -c "$snap_sql" >/dev/null
psql -X -At -c "SELECT 'history rows: ' || count(*) FROM storagelab.int_overflow_history" | sed 's/^/  /'
psql -X -At -c "SELECT 'findings: ' || count(*) || ' (' || string_agg(DISTINCT category, ', ') || ')' FROM storagelab.findings" | sed 's/^/  /'

anchor_sql="SELECT a.attrelid::regclass, a.attname, a.atttypid::regtype, s.last_value, s.max_value
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_sequences s ON s.schemaname = n.nspname
       AND s.sequencename = c.relname || '_' || a.attname || '_seq'
 WHERE a.attnum > 0 AND NOT a.attisdropped
   AND a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
anchor=$(bench_ms "$anchor_sql" 5)
stats=$(bench_ms 'SELECT * FROM pg_stats' 5)
findings=$(bench_ms 'SELECT * FROM storagelab.findings' 5)
bench_row "findings, $ntables tables, a year of history" "$findings" "pg_sequences + column types" "$anchor"
bench_row "findings (same)" "$findings" "pg_stats" "$stats"
report=$(bench_ms 'SELECT * FROM storagelab.report()' 5)
bench_row "report()" "$report" "pg_sequences + column types" "$anchor"
io=$(bench_ms 'SELECT * FROM storagelab.int_overflow' 5)
bench_row "  of which int_overflow (view)" "$io" "pg_sequences + column types" "$anchor"
plan=$(bench_ms 'SELECT * FROM storagelab.table_rewrite_plan' 5)
bench_row "  of which table_rewrite_plan" "$plan" "pg_stats" "$stats"
# what the view no longer does per query: the growth fit over the raw
# history in the 30-day window (about 30 rows per column)
fit=$(bench_ms "SELECT schema_name, table_name, column_name,
         regr_slope(value::float8, date_part('epoch', taken_at))
    FROM storagelab.int_overflow_history WHERE taken_at >= now() - interval '30 days'
   GROUP BY 1, 2, 3 HAVING count(*) >= 2" 3)
bench_row "  not done per query: growth fit over the history" "$fit" "pg_sequences + column types" "$anchor"
snap=$(bench_ms "$snap_sql" 3)
bench_row "snapshot() with a year of history" "$snap" "pg_sequences + column types" "$anchor"

# Section 70: storagelab.findings, report() and the monitoring queries
# (every postgres_exporter query of doc/monitoring/queries.yaml, every
# check_postgres query of doc/monitoring.md), each with jit = on
# (PostgreSQL's default, with its default thresholds) and with jit = off, on
# two databases:
#
#   1. Pagila plus pgbench at scale 10 (1,000,000 accounts).  Goal: at most
#      300 ms each with jit = on.  Also the generators (bigint blocking and
#      online, layout, storage) once each, with jit on and off.
#   2. SCALE × 10,000 tables of 4 columns (id serial primary key, ref int,
#      amount int, note text; an index on ref of every fifth table), three
#      rows each, ANALYZEd and vacuumed; every 1,000th sequence pushed to
#      98 %, so that findings has rows to rank.  History: 365 daily
#      snapshots of every int_overflow column (30,000 columns: about 11
#      million rows), as a year of daily snapshots leaves it
#      (int_overflow.history_retention is 400 days).  Goal: at most 1 s each
#      at SCALE 1.
#
# Warm: best (fastest) of BENCH_RUNS runs (default 7) in one session
# (bench_best_ms; a new session per row): the machine is shared, and the
# fastest run is the one least disturbed by the others' work.  The load
# average (/proc/loadavg) is printed before and after each database's rows.
# Anchors: postgres_exporter's own pg_stat_database query, the catalog query
# of section 10 (integer columns joined to pg_sequences: work comparable to
# int_overflow's), and, for the snapshot, a count of pg_class.  Each database also prints the largest top-level plan cost of a
# public view (JIT compiles a plan above jit_above_cost, 100,000 by default)
# and whether each query's own plan was JIT-compiled.

# The monitoring queries, one "name<TAB>query" line each (newlines folded).
monitoring_queries() {
	python3 - "$REPO" <<'PY'
import re, sys
repo = sys.argv[1]
yaml = open(repo + "/doc/monitoring/queries.yaml").read()
for name, body in re.findall(r"\n(\w+):\n  query: \|\n((?:    [^\n]*\n)+)", yaml):
    print("exporter %s\t%s" % (name, " ".join(l.strip() for l in body.splitlines())))
md = open(repo + "/doc/monitoring.md").read()
for i, q in enumerate(re.findall(r'--query="([^"]*)"', md), 1):
    print("check_postgres query %d\t%s" % (i, " ".join(l.strip() for l in q.splitlines())))
PY
}

exporter_db_sql="SELECT datid, datname, numbackends, xact_commit, xact_rollback, blks_read, blks_hit,
  tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, conflicts, temp_files,
  temp_bytes, deadlocks, blk_read_time, blk_write_time, stats_reset FROM pg_stat_database"

# measure_all: anchors, then every query with jit on and off
measure_all() {
	local db_ms cat_ms name sql on off
	psql -X -q -c "
		CREATE OR REPLACE FUNCTION public.bench_jit(q text) RETURNS text LANGUAGE plpgsql AS \$\$
		DECLARE j json;
		BEGIN
			EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO j;
			RETURN CASE WHEN j->0->'JIT' IS NULL THEN 'no' ELSE 'yes, ' || (j->0->'JIT'->>'Functions') || ' functions' END;
		END \$\$;
		CREATE OR REPLACE FUNCTION public.bench_max_view_cost() RETURNS text LANGUAGE plpgsql AS \$\$
		DECLARE v regclass; j json; worst text; c float8; m float8 := 0;
		BEGIN
			FOR v IN SELECT oid FROM pg_class WHERE relnamespace = 'storagelab'::regnamespace AND relkind = 'v' LOOP
				EXECUTE format('EXPLAIN (FORMAT JSON) SELECT * FROM %s', v) INTO j;
				c := (j->0->'Plan'->>'Total Cost')::float8;
				IF c > m THEN m := c; worst := v::text; END IF;
			END LOOP;
			RETURN format('%s (%s)', round(m::numeric), worst);
		END \$\$;"
	local runs=${BENCH_RUNS:-7}
	echo "  largest top-level plan cost of a public view: $(psql -X -At -c 'SELECT public.bench_max_view_cost()'), jit_above_cost $(psql -X -At -c 'SHOW jit_above_cost')"
	echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg); best of $runs runs each"
	db_ms=$(bench_best_ms "$exporter_db_sql" "$runs")
	cat_ms=$(bench_best_ms "$bench_catalog_anchor_sql" "$runs")
	while IFS=$'\t' read -r name sql; do
		on=$(bench_best_ms "$sql" "$runs")
		off=$(PGOPTIONS='-c jit=off' bench_best_ms "$sql" "$runs")
		bench_row "$name, jit on" "$on" "exporter's pg_stat_database" "$db_ms"
		bench_row "  jit off" "$off" "exporter's pg_stat_database" "$db_ms"
		bench_row "  jit on (plan JIT-compiled: $(psql -X -At -v q="$sql" <<<"SELECT public.bench_jit(:'q')"))" "$on" "integer columns + pg_sequences" "$cat_ms"
	done < <(printf 'findings\tSELECT * FROM storagelab.findings\nreport()\tSELECT * FROM storagelab.report()\n'; monitoring_queries)
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# measure_report_html: report_html() with jit on and off, against findings
# (which it reads once) measured in the same run.  Goals: 1 s on Pagila plus
# pgbench at scale 10, 2 s at 10,000 tables with a year of history.
measure_report_html() {
	local on off f
	f=$(bench_ms 'SELECT count(*) FROM storagelab.findings' 5)
	on=$(bench_ms 'SELECT length(storagelab.report_html())' 5)
	off=$(PGOPTIONS='-c jit=off' bench_ms 'SELECT length(storagelab.report_html())' 5)
	bench_row "report_html(), jit on" "$on" "findings, jit on" "$f"
	bench_row "  jit off" "$off" "findings, jit on" "$f"
	echo "  report_html(): $(psql -X -At -c "SELECT pg_size_pretty(length(storagelab.report_html())::int8)")"
}

# --- 1. Pagila plus pgbench scale 10 ---------------------------------------
bench_db storagelab_bench_findings_pagila
pagila_dir=$(cd "$REPO/.." && pwd)/shared/datasets/pagila
if [ -f "$pagila_dir/pagila-schema.sql" ]; then
	echo "  loading Pagila and pgbench -i -s 10 ..." >&2
	psql -X -q -f "$REPO/test/fixtures/pagila.sql" >/dev/null
	pgbench -i -q -s 10 --foreign-keys "$PGDATABASE" >/dev/null 2>&1
	vacuumdb -q -z "$PGDATABASE"
	echo "  Pagila plus pgbench scale 10: $(psql -X -At -c "SELECT count(*) || ' relations, ' || pg_size_pretty(pg_database_size(current_database())) FROM pg_class")"
	measure_all
	measure_report_html
	for g in "SELECT storagelab.bigint_migration_script('public.pgbench_accounts', 'aid')" \
		"SELECT storagelab.bigint_migration_script('public.pgbench_accounts', 'aid', 'online')" \
		"SELECT storagelab.layout_migration_script('public.pgbench_accounts')" \
		"SELECT storagelab.storage_migration_script('public.staff', 'picture')"; do
		on=$(bench_ms "$g" 3)
		off=$(PGOPTIONS='-c jit=off' bench_ms "$g" 3)
		bench_row "${g#SELECT storagelab.}, jit on" "$on" "jit off" "$off"
	done
else
	echo "  skipped: $pagila_dir is missing"
fi
dropdb storagelab_bench_findings_pagila

# --- 2. SCALE × 10,000 tables, a year of history ---------------------------
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

measure_all
measure_report_html
snap=$(bench_ms "$snap_sql" 3)
cls=$(bench_ms 'SELECT count(*) FROM pg_class' 5)
bench_row "snapshot() with a year of history" "$snap" "count(*) FROM pg_class" "$cls"

# Section 90: robustness of the long readers.
#
# (a) Memory: the backend's anonymous memory (RssAnon in /proc/PID/status:
#     its private heap, which palloc draws from; not RSS, which also counts
#     the shared buffers it touched) sampled every 100 ms while one reader
#     reads a table of at least 2 GB (SCALE 1: 8.2 million rows of 30-420
#     bytes, about 2.2 GB): heap_visibility() full, column_profile(),
#     int_overflow_scan(), and toast_profile() on a table with TOAST data
#     (300,000 x SCALE values, half external, half inline compressed).
#     Each reader runs in a fresh session between two 0.5 s sleeps, so
#     "start" is the session before the read and "end" after it; "max" is
#     the highest sample.  Flat means max - start under a few MB.
# (b) statement_timeout = '1s' on each long reader: how long after the
#     statement's start plus 1 s the query_canceled error (57014) reaches the
#     statement (caught by a PL/pgSQL wrapper, timed with clock_timestamp()
#     against statement_timestamp(), which the timeout counts from).
#     5 runs per reader; goal: overshoot <= 100 ms.
# ROBUST_BENCH_ROWS and ROBUST_BENCH_VALUES override the sizes (a dry run).
bench_db storagelab_bench_robust
rows=${ROBUST_BENCH_ROWS:-$((8200000 * SCALE))}
values=${ROBUST_BENCH_VALUES:-$((300000 * SCALE))}
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE rb_big (id bigint, n integer, filler text) WITH (autovacuum_enabled = off);
INSERT INTO rb_big SELECT g, (g % 100000)::int, repeat('x', 30 + (g::bigint * 7919 % 390)::int)
  FROM generate_series(1, $rows) g;
-- 1 MB of random bytes, cut into values.
CREATE TEMP TABLE seed AS
  SELECT decode(string_agg(md5(g::text || 'seed'), ''), 'hex') AS b FROM generate_series(1, 65536) g;
CREATE TABLE rb_toast (id int, v bytea) WITH (autovacuum_enabled = off);
-- odd ids: 4 kB of random bytes (stored external, uncompressed);
-- even ids: 64 kB of a repeated 1 kB pattern (compressed, inline).
INSERT INTO rb_toast
  SELECT g, CASE WHEN g % 2 = 1 THEN int8send(g) || substr(b, 1 + (g * 4099) % 1040000, 4088)
                 ELSE repeat(encode(substr(b, 1 + g % 1000, 512), 'hex'), 64)::bytea END
    FROM seed, generate_series(1, $values) g;
VACUUM (FREEZE, ANALYZE) rb_big;
VACUUM (FREEZE, ANALYZE) rb_toast;
CHECKPOINT;
CREATE FUNCTION public.bench_cancel_ms(q text) RETURNS numeric
LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE q;
  RETURN NULL;	-- finished before the timeout
EXCEPTION WHEN query_canceled THEN
  RETURN round((extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000
                - extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::numeric, 1);
END \$\$;
SQL
psql -X -At -c "SELECT format('  tables: rb_big %s rows, %s; rb_toast %s values, heap %s, TOAST %s',
    (SELECT count(*) FROM rb_big), pg_size_pretty(pg_relation_size('rb_big')),
    (SELECT count(*) FROM rb_toast), pg_size_pretty(pg_relation_size('rb_toast')),
    pg_size_pretty(pg_total_relation_size('rb_toast') - pg_relation_size('rb_toast')))"

# rss_anon_kb PID: the process's RssAnon in kB (empty once it has exited).
rss_anon_kb() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# memory_row LABEL SQL: run SQL in a fresh session between two 0.5 s
# sleeps, sampling the backend's RssAnon every 100 ms; print start, max,
# end, max - start, and end minus the sample a quarter of the way through
# ("last 3/4": what a leak per block would show, after one-time costs such as
# JIT compiling), in MB, with the samples taken and the elapsed time.
memory_row() {
	local out samples pid client t0 t1
	out=$(mktemp)
	samples=$(mktemp)
	psql -X -At -v ON_ERROR_STOP=1 -c 'SELECT pg_backend_pid()' \
		-c 'SELECT pg_sleep(0.5)' -c "$2" -c 'SELECT pg_sleep(0.5)' >"$out" &
	client=$!
	while ! pid=$(head -1 "$out" 2>/dev/null | grep -E '^[0-9]+$'); do sleep 0.01; done
	t0=$(date +%s%N)
	while kill -0 "$client" 2>/dev/null; do
		rss_anon_kb "$pid" >>"$samples"
		sleep 0.1
	done
	t1=$(date +%s%N)
	wait "$client" || { echo "  $1: failed"; rm -f "$out" "$samples"; return 1; }
	awk -v l="$1" -v secs="$(( (t1 - t0) / 1000000 ))" 'NF { v[++n] = $1; if ($1 > max) max = $1 }
		END {
			q = v[int((n + 3) / 4)]
			printf "  %-38s RssAnon start %5.1f MB  max %5.1f MB  end %5.1f MB  growth %5.1f MB  last 3/4 %+5.1f MB  (%d samples, %.1f s)\n",
				l, v[1] / 1024, max / 1024, v[n] / 1024, (max - v[1]) / 1024, (v[n] - q) / 1024, n, secs / 1000 }' "$samples"
	rm -f "$out" "$samples"
}

echo "  (a) backend anonymous memory while reading"
# The OS cache warm, as for every reader in turn.
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT pg_prewarm('rb_big', 'read')" >/dev/null
memory_row "heap_visibility(rb_big) full" "SELECT pages FROM storagelab.heap_visibility('rb_big')"
memory_row "column_profile(rb_big)" "SELECT count(*) FROM storagelab.column_profile('rb_big')"
memory_row "int_overflow_scan(rb_big)" "SELECT count(*) FROM storagelab.int_overflow_scan('rb_big')"
# int_overflow_scan() runs a plain min/max query, which is JIT-compiled (an
# LLVM module loaded once per session): the same without JIT.
memory_row "int_overflow_scan(rb_big), jit = off" "SET jit = off; SELECT count(*) FROM storagelab.int_overflow_scan('rb_big')"
memory_row "toast_profile(rb_toast, v)" "SELECT rows_scanned FROM storagelab.toast_profile('rb_toast', 'v')"
memory_row "toast_profile(rb_big, filler)" "SELECT rows_scanned FROM storagelab.toast_profile('rb_big', 'filler')"

# cancel_row LABEL SQL [SETTING]: 5 runs under statement_timeout = 1s (and
# SETTING, a SET command); overshoot (ms past 1 s) of each, median and max.
cancel_row() {
	local runs=() r i
	for i in 1 2 3 4 5; do
		r=$(psql -X -At -v ON_ERROR_STOP=1 -v q="$2" -c "SET statement_timeout = '1s'" -c "${3:-SELECT}" -f - \
			<<<"SELECT coalesce(public.bench_cancel_ms(:'q')::text, 'finished')" | tail -1)
		runs+=("$r")
	done
	printf '%s\n' "${runs[@]}" | { grep -E '^-?[0-9.]+$' || true; } | sort -g | awk -v l="$1" -v all="${runs[*]}" '
		{ v[++n] = $1 }
		END {
			if (n == 0) { printf "  %-38s finished within 1 s: no cancel measured (%s)\n", l, all; exit }
			printf "  %-38s overshoot median %6.1f ms  max %6.1f ms  (runs: %s)\n",
				l, v[int((n + 1) / 2)], v[n], all }'
}

echo "  (b) statement_timeout = 1s: time from the timeout to the 57014 error"
cancel_row "heap_visibility(rb_big) full" "SELECT * FROM storagelab.heap_visibility('rb_big')"
cancel_row "column_profile(rb_big)" "SELECT * FROM storagelab.column_profile('rb_big')"
cancel_row "int_overflow_scan(rb_big)" "SELECT * FROM storagelab.int_overflow_scan('rb_big')"
cancel_row "toast_profile(rb_toast, v)" "SELECT * FROM storagelab.toast_profile('rb_toast', 'v')"
cancel_row "toast_profile(rb_big, filler)" "SELECT * FROM storagelab.toast_profile('rb_big', 'filler')"
# Anchors: PostgreSQL's own scan, parallel (as int_overflow_scan's query
# runs: the leader waits for its workers to stop) and not.
cancel_row "anchor: SELECT count(*) FROM rb_big" "SELECT count(*) FROM rb_big"
cancel_row "anchor: the same, no parallel workers" "SELECT count(*) FROM rb_big" \
	"SET max_parallel_workers_per_gather = 0"
psql -X -q -c 'DROP TABLE rb_big, rb_toast'

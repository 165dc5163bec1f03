# Section 60: every view over catalogs of 10,000, 40,000 and 100,000 tables.
#
# The catalog of a schema-per-tenant database: schemas tenant_00001, ... of
# 1,000 tables each; every table has 7 columns (id serial primary key, ref
# int, qty int, amount bigint, note text, created timestamptz, flag bool),
# 3 rows, and one table in 5 an index on ref.  Per table: a sequence, a
# TOAST table and its index, the primary key, and 7 pg_statistic rows (each
# batch is ANALYZEd; nothing is VACUUMed, so tables have no visibility map).
# The tables are added in steps (CATALOG_SIZES, default "10000 40000
# 100000"; "2000 8000" for a quick run), 500 per transaction as generated
# DDL, and everything is measured after each step: one run shows how each
# cost grows.  The build of 100,000 tables takes about half an hour on a
# shared 2-core machine and 9 GB of disk.
#
# For each size and each query (the views that exist: SCALE_VIEWS lists
# them, a missing one is skipped; and the anchors: count(*) over
# pg_sequences, over pg_stats and over pg_attribute):
#   - first call: a new session runs the query once; median of
#     SCALE_FIRST_ROUNDS (3) rounds, the queries interleaved within each
#     round; and the backend's private memory (RssAnon of /proc/PID/status,
#     sampled every 20 ms) at its peak, the largest of the rounds;
#   - warm: one session runs every query once, then SCALE_WARM_ROUNDS (5)
#     interleaved rounds; medians.
# Each query runs as COPY (query) TO '/dev/null': every row is converted to
# text by the server, as a client would receive it, and nothing is kept or
# sent.  Printed: milliseconds, microseconds per table, peak MB, the ratio
# to pg_sequences + pg_attribute (the anchor of the int_overflow goals), and
# the growth of the cost per table from the smallest size to the others
# (1.00 = linear).  Building 100,000 tables in one transaction would need
# max_locks_per_transaction raised; the build commits every 500, and the
# views lock one relation at a time (bytea_storage keeps a lock on each
# table with a bytea column to the end of its query: none here), so the
# default is enough.
: "${CATALOG_SIZES:=10000 40000 100000}"
# rounds of first calls (new sessions) and of warm runs; medians
: "${SCALE_FIRST_ROUNDS:=3}" "${SCALE_WARM_ROUNDS:=5}"
# The views measured, in schema storagelab (SELECT * FROM each; one that
# does not exist here is skipped).  Add new views here.
: "${SCALE_VIEWS:=int_overflow column_waste alignment_padding visibility bytea_storage findings table_rewrite_plan}"

# CATALOG_REUSE=1 keeps the database CATALOG_DB (default
# storagelab_bench_catalog) when it exists, and builds only the tables beyond
# those it has: a cluster kept between runs is measured again without the
# build (e.g. CATALOG_REUSE=1 CATALOG_SIZES=100000 to measure 100,000 tables
# built earlier).
export PGDATABASE=${CATALOG_DB:-storagelab_bench_catalog}
if [ -z "${CATALOG_REUSE:-}" ] ||
	[ -z "$(psql -X -At -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$PGDATABASE'")" ]; then
	bench_db "$PGDATABASE"
fi
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
-- scale_build(first, last): tables first..last, 500 per transaction, each
-- batch one generated multi-statement string.
CREATE OR REPLACE PROCEDURE public.scale_build(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
  b int := first;
  e int;
BEGIN
  WHILE b <= last LOOP
    e := least(b + 499, last);
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', 'tenant_' || lpad(((b - 1) / 1000 + 1)::text, 5, '0'));
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', 'tenant_' || lpad(((e - 1) / 1000 + 1)::text, 5, '0'));
    EXECUTE (SELECT string_agg(format(
        'CREATE TABLE %1$I.%2$I (id serial PRIMARY KEY, ref int, qty int, amount bigint, note text, created timestamptz, flag bool);'
        ' INSERT INTO %1$I.%2$I (ref, qty, amount, note, created, flag) VALUES (1, 10, 100, ''a'', now(), true), (2, 20, 200, ''b'', now(), false), (%3$s, 30, 300, NULL, now(), NULL)%4$s',
        'tenant_' || lpad(((i - 1) / 1000 + 1)::text, 5, '0'), 't' || i, i,
        CASE WHEN i % 5 = 0 THEN format('; CREATE INDEX ON %I.%I (ref)', 'tenant_' || lpad(((i - 1) / 1000 + 1)::text, 5, '0'), 't' || i) ELSE '' END),
        '; ')
      FROM generate_series(b, e) i);
    COMMIT;
    EXECUTE 'ANALYZE ' || (SELECT string_agg(format('%I.%I', 'tenant_' || lpad(((i - 1) / 1000 + 1)::text, 5, '0'), 't' || i), ', ')
                             FROM generate_series(b, e) i);
    COMMIT;
    b := e + 1;
  END LOOP;
END $$;

-- scale_run(q): run q once, every row converted to text and written to
-- /dev/null by the server (no client in the timing); ms.
CREATE OR REPLACE FUNCTION public.scale_run(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := clock_timestamp();
BEGIN
  EXECUTE format('COPY (%s) TO %L', q, '/dev/null');
  RETURN round((extract(epoch FROM clock_timestamp() - t) * 1000)::numeric, 1);
END $$;

-- scale_warm(names, queries, rounds): each query once, then rounds
-- interleaved rounds; the median ms of each.
CREATE OR REPLACE FUNCTION public.scale_warm(names text[], queries text[], rounds int)
RETURNS TABLE (name text, ms numeric) LANGUAGE plpgsql AS $$
DECLARE
  times numeric[] := '{}';
  n int := array_length(queries, 1);
BEGIN
  FOR i IN 1..n LOOP
    PERFORM public.scale_run(queries[i]);
  END LOOP;
  FOR r IN 1..rounds LOOP
    FOR i IN 1..n LOOP
      times := times || public.scale_run(queries[i]);
    END LOOP;
  END LOOP;
  RETURN QUERY
    SELECT names[i], round(percentile_cont(0.5) WITHIN GROUP (ORDER BY times[(r - 1) * n + i])::numeric, 1)
      FROM generate_series(1, n) i, generate_series(1, rounds) r
     GROUP BY i ORDER BY i;
END $$;
SQL

# The queries measured: the views that exist, then the anchors.
scale_names=()
scale_queries=()
for v in $SCALE_VIEWS; do
	if psql -X -q -c "EXPLAIN SELECT * FROM storagelab.$v" >/dev/null 2>&1; then
		scale_names+=("$v")
		scale_queries+=("SELECT * FROM storagelab.$v")
	else
		echo "  (storagelab.$v does not exist here: skipped)"
	fi
done
scale_names+=(pg_sequences pg_stats pg_attribute)
scale_queries+=("SELECT count(*) FROM pg_catalog.pg_sequences"
	"SELECT count(*) FROM pg_catalog.pg_stats"
	"SELECT count(*) FROM pg_catalog.pg_attribute")

# scale_first_call QUERY: "ms peak_kB" of QUERY run once in a new session,
# with the backend's peak RssAnon sampled every 20 ms meanwhile.
scale_first_call() {
	local out pid ms peak
	out=$(mktemp)
	psql -X -At -v ON_ERROR_STOP=1 -v q="$1" -v out="$out" <<'EOF' >/dev/null
SELECT pg_backend_pid() AS pid \gset
\setenv SCALE_PID :pid
\setenv SCALE_OUT :out
\! (peak=0; while [ ! -e "$SCALE_OUT.stop" ] && v=$(awk '/^RssAnon/ {print $2}' /proc/$SCALE_PID/status 2>/dev/null) && [ -n "$v" ]; do [ "$v" -gt "$peak" ] && peak=$v; echo "$peak" >"$SCALE_OUT.peak"; sleep 0.02; done) &
SELECT public.scale_run(:'q') AS ms \gset
\! touch "$SCALE_OUT.stop"; sleep 0.05
\setenv SCALE_MS :ms
\! echo "$SCALE_MS" >"$SCALE_OUT"
EOF
	ms=$(cat "$out")
	peak=$(cat "$out.peak" 2>/dev/null || echo 0)
	rm -f "$out" "$out.stop" "$out.peak"
	echo "$ms $peak"
}

scale_median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# scale_measure N: everything at N tables.
scale_measure() {
	local n=$1 i r name
	local -A first peak warm
	echo
	echo "  $n tables: $(psql -X -At -c "SELECT count(*) FILTER (WHERE relkind = 'r') || ' tables, ' ||
		count(*) FILTER (WHERE relkind = 'S') || ' sequences, ' || count(*) FILTER (WHERE relkind = 'i') || ' indexes, ' ||
		count(*) || ' pg_class rows, ' || (SELECT count(*) FROM pg_attribute) || ' pg_attribute rows, ' ||
		(SELECT count(*) FROM pg_statistic) || ' pg_statistic rows' FROM pg_class"), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	# first calls: 3 rounds, queries interleaved
	local tmp
	tmp=$(mktemp -d)
	for r in $(seq "$SCALE_FIRST_ROUNDS"); do
		for i in "${!scale_queries[@]}"; do
			scale_first_call "${scale_queries[$i]}" >>"$tmp/$i"
		done
	done
	for i in "${!scale_queries[@]}"; do
		first[$i]=$(cut -d' ' -f1 "$tmp/$i" | scale_median)
		peak[$i]=$(cut -d' ' -f2 "$tmp/$i" | sort -n | tail -1)
	done
	rm -rf "$tmp"
	# warm: one session, 5 interleaved rounds
	local names queries
	names=$(IFS=$'\x1f'; echo "${scale_names[*]}")
	queries=$(IFS=$'\x1f'; echo "${scale_queries[*]}")
	while IFS='|' read -r name ms; do
		for i in "${!scale_names[@]}"; do
			[ "${scale_names[$i]}" = "$name" ] && warm[$i]=$ms
		done
	done < <(psql -X -At -v ON_ERROR_STOP=1 -v names="$names" -v queries="$queries" <<<"
		SELECT name, ms FROM public.scale_warm(string_to_array(:'names', E'\\x1f'),
			string_to_array(:'queries', E'\\x1f'), $SCALE_WARM_ROUNDS)")
	local k=${#scale_queries[@]}
	local seq=${warm[$((k - 3))]} attr=${warm[$((k - 1))]}
	local seq1=${first[$((k - 3))]} attr1=${first[$((k - 1))]}
	printf '  %-20s %10s %10s %9s %9s %8s %10s %10s\n' query "first ms" "warm ms" "first us/t" "warm us/t" "peak MB" "warm/anch" "first/anch"
	for i in "${!scale_queries[@]}"; do
		awk -v name="${scale_names[$i]}" -v f="${first[$i]}" -v w="${warm[$i]}" -v p="${peak[$i]}" -v n="$n" \
			-v a="$seq" -v b="$attr" -v a1="$seq1" -v b1="$attr1" 'BEGIN {
			printf "  %-20s %10.1f %10.1f %9.1f %9.1f %8.1f %9.2fx %9.2fx\n", name, f, w,
				f * 1000 / n, w * 1000 / n, p / 1024, w / (a + b), f / (a1 + b1) }'
		echo "$n ${scale_names[$i]} $i ${first[$i]} ${warm[$i]} ${peak[$i]}" >>"$scale_results"
	done
	echo "  (anchor of the ratios: pg_sequences + pg_attribute, warm and first call respectively)"
}

scale_results=$(mktemp)
built=$(psql -X -At -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname LIKE 'tenant\\_%' AND c.relkind = 'r'")
for n in $CATALOG_SIZES; do
	if [ "$n" -le "$built" ]; then
		[ "$n" -lt "$built" ] && { echo "  ($PGDATABASE has $built tables: $n skipped)"; continue; }
		scale_measure "$n"
		continue
	fi
	echo "  building tables $((built + 1)) .. $n ..." >&2
	t0=$(date +%s.%N)
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CALL public.scale_build($((built + 1)), $n)"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v k=$((n - built)) 'BEGIN {
		printf "  built and analyzed %d tables in %.1f s (%.2f ms per table)\n", k, b - a, (b - a) * 1000 / k }'
	built=$n
	scale_measure "$n"
done

# Growth of the warm (and first-call) cost per table from the smallest size.
echo
echo "  growth of the cost per table from the smallest size (1.00 = linear):"
awk 'NR == FNR { if (!($2 in base)) {base[$2] = $1; bf[$2] = $4; bw[$2] = $5}; next }
	{ if ($1 != base[$2]) printf "  %-20s %7d tables: warm %.2f, first call %.2f\n", $2, $1,
		($5 / $1) / (bw[$2] / base[$2]), ($4 / $1) / (bf[$2] / base[$2]) }' "$scale_results" "$scale_results" |
	sort -k1,1 -s
rm -f "$scale_results"

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
# cost grows.  The build of 100,000 tables took 15-20 minutes on a shared
# 2-core machine (8-12 ms per table) and 8 GB of disk.
#
# For each size, SCALE_ROUNDS (3) rounds; in each, every query (the views
# that exist: SCALE_VIEWS lists them, a missing one is skipped; then the
# anchors: count(*) over pg_sequences, over pg_stats and over pg_attribute)
# runs twice in a new session of its own, interleaved with the others: the
# first call (the session's caches filled on the way) and the warm second
# one.  Medians of the rounds, wall-clock and the backend's CPU time
# (utime + stime of /proc/PID/stat, which waiting for a core on a shared
# machine does not inflate); and the backend's private memory at its peak
# (RssAnon, sampled every 20 ms; the largest of the rounds).
# SCALE_BASELINE=DIR measures every view with a second build of storagelab
# too (installed under DIR with make install DESTDIR=DIR, loaded through
# extension_destdir), in the same rounds: a change against main, on the
# same catalog and under the same load.
# Each query runs as COPY (query) TO '/dev/null': every row is converted to
# text by the server, as a client would receive it, and nothing is kept or
# sent.  Printed: milliseconds, microseconds per table, peak MB, the ratios
# to pg_sequences + pg_attribute (the anchor of the int_overflow goals), and
# the growth of the cost per table from the smallest size to the others
# (1.00 = linear).  Building 100,000 tables in one transaction would need
# max_locks_per_transaction raised; the build commits every 500, and the
# views lock one relation at a time (bytea_storage keeps a lock on each
# table with a bytea column to the end of its query: none here); the anchor
# over pg_sequences locks every sequence, for which bench/run.sh raises
# max_locks_per_transaction.
: "${CATALOG_SIZES:=10000 40000 100000}"
# rounds (each query in a new session per round); medians
: "${SCALE_ROUNDS:=3}"
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
SQL

# The queries measured: the views that exist, then the anchors.  With
# SCALE_BASELINE (an extension_destdir holding another build of storagelab,
# e.g. main's before a change), each view is measured with that build too,
# in the same rounds, as "view (baseline)".
scale_names=()
scale_queries=()
scale_options=()
for v in $SCALE_VIEWS; do
	if psql -X -q -c "EXPLAIN SELECT * FROM storagelab.$v" >/dev/null 2>&1; then
		scale_names+=("$v")
		scale_queries+=("SELECT * FROM storagelab.$v")
		scale_options+=("${PGOPTIONS:-}")
		if [ -n "${SCALE_BASELINE:-}" ]; then
			scale_names+=("$v (baseline)")
			scale_queries+=("SELECT * FROM storagelab.$v")
			scale_options+=("${PGOPTIONS:-} -c extension_destdir=$SCALE_BASELINE")
		fi
	else
		echo "  (storagelab.$v does not exist here: skipped)"
	fi
done
scale_names+=(pg_sequences pg_stats pg_attribute)
scale_queries+=("SELECT count(*) FROM pg_catalog.pg_sequences"
	"SELECT count(*) FROM pg_catalog.pg_stats"
	"SELECT count(*) FROM pg_catalog.pg_attribute")
scale_options+=("${PGOPTIONS:-}" "${PGOPTIONS:-}" "${PGOPTIONS:-}")

# scale_session QUERY OPTIONS: "first_ms warm_ms peak_kB first_cpu_ms
# warm_cpu_ms": QUERY run twice in a new session (the first call fills the
# session's caches, the second is warm), with the backend's peak RssAnon
# sampled every 20 ms meanwhile, and its CPU time (utime + stime of
# /proc/PID/stat, 10 ms ticks) around each run.
scale_session() {
	local out
	out=$(mktemp)
	PGOPTIONS="$2" psql -X -At -v ON_ERROR_STOP=1 -v q="$1" -v out="$out" <<'EOF' >/dev/null
SELECT pg_backend_pid() AS pid \gset
\setenv SCALE_PID :pid
\setenv SCALE_OUT :out
\! (peak=0; while [ ! -e "$SCALE_OUT.stop" ] && v=$(awk '/^RssAnon/ {print $2}' /proc/$SCALE_PID/status 2>/dev/null) && [ -n "$v" ]; do [ "$v" -gt "$peak" ] && peak=$v; echo "$peak" >"$SCALE_OUT.peak"; sleep 0.02; done) &
\! awk '{print $14 + $15}' /proc/$SCALE_PID/stat >"$SCALE_OUT.cpu"
SELECT public.scale_run(:'q') AS first \gset
\! awk '{print $14 + $15}' /proc/$SCALE_PID/stat >>"$SCALE_OUT.cpu"
SELECT public.scale_run(:'q') AS warm \gset
\! awk '{print $14 + $15}' /proc/$SCALE_PID/stat >>"$SCALE_OUT.cpu"
\! touch "$SCALE_OUT.stop"; sleep 0.05
\setenv SCALE_FIRST :first
\setenv SCALE_WARM :warm
\! echo "$SCALE_FIRST $SCALE_WARM" >"$SCALE_OUT"
EOF
	echo "$(cat "$out") $(cat "$out.peak" 2>/dev/null || echo 0)" \
		"$(awk -v hz="$(getconf CLK_TCK)" 'NR > 1 {printf "%d ", ($1 - p) * 1000 / hz} {p = $1}' "$out.cpu")"
	rm -f "$out" "$out.stop" "$out.peak" "$out.cpu"
}

scale_median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# scale_measure N: everything at N tables.
scale_measure() {
	local n=$1 i r tmp
	local -A first peak warm cfirst cwarm
	echo
	echo "  $n tables: $(psql -X -At -c "SELECT count(*) FILTER (WHERE relkind = 'r') || ' tables, ' ||
		count(*) FILTER (WHERE relkind = 'S') || ' sequences, ' || count(*) FILTER (WHERE relkind = 'i') || ' indexes, ' ||
		count(*) || ' pg_class rows, ' || (SELECT count(*) FROM pg_attribute) || ' pg_attribute rows, ' ||
		(SELECT count(*) FROM pg_statistic) || ' pg_statistic rows' FROM pg_class"), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	tmp=$(mktemp -d)
	for r in $(seq "$SCALE_ROUNDS"); do
		for i in "${!scale_queries[@]}"; do
			scale_session "${scale_queries[$i]}" "${scale_options[$i]}" >>"$tmp/$i"
		done
	done
	for i in "${!scale_queries[@]}"; do
		first[$i]=$(cut -d' ' -f1 "$tmp/$i" | scale_median)
		warm[$i]=$(cut -d' ' -f2 "$tmp/$i" | scale_median)
		peak[$i]=$(cut -d' ' -f3 "$tmp/$i" | sort -n | tail -1)
		cfirst[$i]=$(cut -d' ' -f4 "$tmp/$i" | scale_median)
		cwarm[$i]=$(cut -d' ' -f5 "$tmp/$i" | scale_median)
	done
	rm -rf "$tmp"
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	local k=${#scale_queries[@]}
	local seq=${warm[$((k - 3))]} attr=${warm[$((k - 1))]}
	local seq1=${first[$((k - 3))]} attr1=${first[$((k - 1))]}
	local cseq=${cwarm[$((k - 3))]} cattr=${cwarm[$((k - 1))]}
	local cseq1=${cfirst[$((k - 3))]} cattr1=${cfirst[$((k - 1))]}
	printf '  %-28s %8s %8s %6s %6s %8s %8s %6s %9s %9s %9s %9s\n' "" "first" "warm" "first" "warm" "first" "warm" "peak" "wall" "wall" "CPU" "CPU"
	printf '  %-28s %8s %8s %6s %6s %8s %8s %6s %9s %9s %9s %9s\n' query "ms" "ms" "us/t" "us/t" "CPU ms" "CPU ms" "MB" "warm/anc" "first/anc" "warm/anc" "first/anc"
	for i in "${!scale_queries[@]}"; do
		awk -v name="${scale_names[$i]}" -v f="${first[$i]}" -v w="${warm[$i]}" -v p="${peak[$i]}" -v n="$n" \
			-v cf="${cfirst[$i]}" -v cw="${cwarm[$i]}" \
			-v a="$seq" -v b="$attr" -v a1="$seq1" -v b1="$attr1" \
			-v ca="$cseq" -v cb="$cattr" -v ca1="$cseq1" -v cb1="$cattr1" 'BEGIN {
			printf "  %-28s %8.0f %8.0f %6.0f %6.0f %8.0f %8.0f %6.1f %8.2fx %8.2fx %8.2fx %8.2fx\n", name, f, w,
				f * 1000 / n, w * 1000 / n, cf, cw, p / 1024, w / (a + b), f / (a1 + b1),
				(ca + cb > 0) ? cw / (ca + cb) : 0, (ca1 + cb1 > 0) ? cf / (ca1 + cb1) : 0 }'
		echo "$n|${scale_names[$i]}|${first[$i]}|${warm[$i]}|${cfirst[$i]}|${cwarm[$i]}" >>"$scale_results"
	done
	echo "  (us/t: microseconds per table; ratios: to pg_sequences + pg_attribute, warm to warm, first call to first call)"
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
	# the catalogs' own statistics, as autovacuum keeps them in production:
	# planned with pg_class still at its initial estimate (a few hundred
	# rows), bytea_storage rescanned pg_class once per schema
	psql -X -q -v ON_ERROR_STOP=1 -c "ANALYZE pg_catalog.pg_class, pg_catalog.pg_attribute,
		pg_catalog.pg_namespace, pg_catalog.pg_statistic, pg_catalog.pg_depend, pg_catalog.pg_index,
		pg_catalog.pg_constraint, pg_catalog.pg_attrdef, pg_catalog.pg_sequence, pg_catalog.pg_type,
		pg_catalog.pg_inherits"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v k=$((n - built)) 'BEGIN {
		printf "  built and analyzed %d tables in %.1f s (%.2f ms per table)\n", k, b - a, (b - a) * 1000 / k }'
	built=$n
	scale_measure "$n"
done

# Growth of the warm (and first-call) cost per table from the smallest size.
echo
echo "  growth of the cost per table from the smallest size (1.00 = linear):"
awk -F'|' 'NR == FNR { if (!($2 in base)) {base[$2] = $1; bf[$2] = $3; bw[$2] = $4; cf[$2] = $5; cw[$2] = $6}; next }
	function g(v, b, n) { return (b > 0) ? (v / n) / (b / base[$2]) : 0 }
	{ if ($1 != base[$2]) printf "  %-28s %7d tables: warm %.2f, first call %.2f; CPU warm %.2f, first call %.2f\n", $2, $1,
		g($4, bw[$2], $1), g($3, bf[$2], $1), g($6, cw[$2], $1), g($5, cf[$2], $1) }' "$scale_results" "$scale_results"
rm -f "$scale_results"

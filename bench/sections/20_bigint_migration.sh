# Section 20: INT -> BIGINT.  The seed article's twelve pgbench columns
# (pgbench -i --foreign-keys -s SCALE): its naive per-column ALTERs against
# the script storagelab.bigint_migration_group_script() generates for the same
# columns, each on freshly initialised data.  Reports wall time (ratio to the
# naive ALTERs) and how many foreign-key validation queries each ran, counted
# exactly with auto_explain (log_nested_statements, at NOTICE level: the
# RI_Initial_Check query "SELECT fk... FROM ONLY ... LEFT OUTER JOIN ONLY")
# plus the seq_scan delta of the four tables (rewrites, index builds and
# validation joins together).
bigint_cols="('pgbench_history','tid'),('pgbench_history','bid'),('pgbench_history','aid'),('pgbench_history','delta'),
 ('pgbench_tellers','tid'),('pgbench_tellers','bid'),('pgbench_tellers','tbalance'),
 ('pgbench_accounts','aid'),('pgbench_accounts','bid'),('pgbench_accounts','abalance'),
 ('pgbench_branches','bid'),('pgbench_branches','bbalance')"
bigint_tmp=$(mktemp -d)

bigint_fresh() {
	bench_db storagelab_bench_bigint
	pgbench -i -q -s "$SCALE" --foreign-keys storagelab_bench_bigint >/dev/null 2>&1
	psql -X -q -c 'CHECKPOINT'
}

bigint_scans() {
	psql -X -At -c "SELECT sum(seq_scan) FROM pg_stat_user_tables WHERE relname LIKE 'pgbench%'"
}

# run LABEL FILE: time FILE in one session with auto_explain counting FK validations
bigint_run() {
	local before after t0 t1
	before=$(bigint_scans)
	t0=$(date +%s%N)
	psql -X -q -v ON_ERROR_STOP=1 -c "LOAD 'auto_explain'" -c 'SET auto_explain.log_min_duration = 0' \
		-c 'SET auto_explain.log_nested_statements = on' -c 'SET auto_explain.log_level = notice' \
		-c 'SET client_min_messages = notice' -f "$2" >"$bigint_tmp/$1.out" 2>&1
	t1=$(date +%s%N)
	sleep 1
	after=$(bigint_scans)
	echo "$(( (t1 - t0) / 1000000 )) $(grep -c 'Query Text: SELECT fk\.' "$bigint_tmp/$1.out") $((after - before))"
}

# The seed article: one ALTER per column.
psql -X -At -c "SELECT format('ALTER TABLE %I ALTER COLUMN %I TYPE bigint;', t, c) FROM (VALUES $bigint_cols) v(t, c)" >"$bigint_tmp/naive.sql"
bigint_fresh
read -r naive_ms naive_fk naive_scans < <(bigint_run naive "$bigint_tmp/naive.sql")

# storagelab's script for the same twelve columns.
bigint_fresh
psql -X -At -c "SELECT storagelab.bigint_migration_group_script(array_agg(t::regclass), array_agg(c::name)) FROM (VALUES $bigint_cols) v(t, c)" >"$bigint_tmp/script.sql"
read -r gen_ms gen_fk gen_scans < <(bigint_run generated "$bigint_tmp/script.sql")
grep -q 'ERROR' "$bigint_tmp/generated.out" && { echo "generated script failed:"; grep ERROR "$bigint_tmp/generated.out"; }

bench_row "naive per-column ALTERs (12 statements)" "$naive_ms" "naive per-column ALTERs" "$naive_ms"
bench_row "bigint_migration_group_script (incl. ANALYZE)" "$gen_ms" "naive per-column ALTERs" "$naive_ms"
echo "  FK validation queries: naive $naive_fk, generated $gen_fk (5 foreign keys)"
echo "  seq_scan delta on the 4 tables (rewrites + index builds + validations): naive $naive_scans, generated $gen_scans"
dropdb storagelab_bench_bigint
rm -rf "$bigint_tmp"

# Section 23: how long the INT->BIGINT generator takes on the schema of an
# application: test/fixtures/app_schema.sql (157 tables in 8 schemas; three
# hub keys with 32 to 39 referencing columns each, trigger functions,
# dynamic SQL, views), loaded and ANALYZEd.  For each hub's int_overflow
# finding: its fix as written (mode online) and the same call in mode
# blocking, each call in a new session, as a DBA runs a fix from psql (a
# session's first calls plan the generator's queries).  Median of
# GEN_RUNS (3) calls, wall-clock.  Anchor: pg_dump --schema-only of the same
# database (another program reading the whole catalog), median of 3.
# SCALE is not used: the fixture has one size.
gen_runs=${GEN_RUNS:-3}
bench_db storagelab_bench_gen
psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' \
	-f "$REPO/test/fixtures/app_schema.sql" -c 'ANALYZE' >/dev/null
# gen_median CMD...: median wall-clock milliseconds of gen_runs runs of CMD
gen_median() {
	local i s
	for i in $(seq "$gen_runs"); do
		s=$(date +%s%N)
		"$@" >/dev/null || echo "failed: $*" >&2
		echo $((($(date +%s%N) - s) / 1000000))
	done | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
anchor=$(gen_median pg_dump --schema-only "$PGDATABASE")
psql -X -At -c "SELECT fix FROM storagelab.findings WHERE category = 'int_overflow' AND fix IS NOT NULL ORDER BY 1" |
while read -r fix; do
	hub=$(sed -n "s/.*bigint_migration_script('\([^']*\)'.*/\1/p" <<<"$fix")
	for mode in online blocking; do
		ms=$(gen_median psql -X -At -v ON_ERROR_STOP=1 -c "$(sed "s/'online'/'$mode'/" <<<"$fix")")
		bench_row "$hub $mode" "$ms" "pg_dump --schema-only" "$anchor"
	done
done

# Section 40: TOAST storage (issue 7).
#
# 1. The seed article's claim: 1,000 x 1 MB incompressible values (random
#    bytes behind an 8-byte id) inserted under EXTENDED (default, pglz) and
#    under EXTERNAL, then substr(v, 1, 1000) read from every row of each.
# 2. toast_profile() over each table (1 GB of bytea each) against the SQL
#    equivalent per row: pg_toastinfo + pg_column_size + octet_length + a
#    substr prefix (plain; classified by magic bytes; with the prefix
#    entropy too); and the TOAST blocks each reads per value
#    (pg_stat_get_xact_blocks_fetched of the TOAST table and its index).
#    Those rows print SQL time / toast_profile time.
#
# Values: 1000 x SCALE (TOAST_BENCH_VALUES overrides, e.g. for a dry run).
# The data is built once; INSERTs are timed once, reads are medians of 15
# runs (3 for the slow SQL-with-entropy anchor).
bench_db storagelab_bench_toast
n_values=${TOAST_BENCH_VALUES:-$((1000 * SCALE))}
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION IF NOT EXISTS toastinfo;
-- 1 MB of random bytes (md5 output), made once.
CREATE TABLE toast_seed AS
  SELECT decode(string_agg(md5(g::text || 'seed'), ''), 'hex') AS b FROM generate_series(1, 65536) g;
CREATE TABLE blob_extended (id int PRIMARY KEY, v bytea);
CREATE TABLE blob_external (id int PRIMARY KEY, v bytea);
ALTER TABLE blob_external ALTER COLUMN v SET STORAGE EXTERNAL;
SQL

ins_extended=$(bench_ms "INSERT INTO blob_extended SELECT g, int8send(g) || substr(b, 9) FROM toast_seed, generate_series(1, $n_values) g" 1)
ins_external=$(bench_ms "INSERT INTO blob_external SELECT g, int8send(g) || substr(b, 9) FROM toast_seed, generate_series(1, $n_values) g" 1)
psql -X -q -c 'VACUUM ANALYZE blob_extended' -c 'VACUUM ANALYZE blob_external' -c 'CHECKPOINT'
psql -X -At -c "SELECT format('  data: %s values of %s per table; EXTENDED: %s values compressed, TOAST %s; EXTERNAL: TOAST %s',
    (SELECT count(*) FROM blob_external), pg_size_pretty((SELECT max(octet_length(v)) FROM blob_external)::bigint),
    (SELECT count(*) FROM blob_extended WHERE pg_column_compression(v) IS NOT NULL),
    pg_size_pretty(pg_total_relation_size('blob_extended') - pg_relation_size('blob_extended')),
    pg_size_pretty(pg_total_relation_size('blob_external') - pg_relation_size('blob_external')))"
bench_row "INSERT 1 MB values, EXTENDED (pglz)" "$ins_extended" "INSERT, EXTERNAL" "$ins_external"

sub_extended=$(bench_ms 'SELECT sum(length(substr(v, 1, 1000))) FROM blob_extended' 15)
sub_external=$(bench_ms 'SELECT sum(length(substr(v, 1, 1000))) FROM blob_external' 15)
bench_row "substr(v, 1, 1000) every row, EXTENDED" "$sub_extended" "same, EXTERNAL" "$sub_external"

# The SQL equivalents.  "plain": form, sizes and a 1 kB prefix per row.
# "classified": the same plus the prefix's content type by magic bytes (the
# prefix computed once per row: OFFSET 0 keeps the subquery from being
# flattened into one TOAST fetch per CASE branch).  Neither computes the
# prefix entropy that toast_profile() adds.
sql_plain="SELECT pg_toastinfo(v)::text AS form, count(*), sum(octet_length(v)), sum(pg_column_size(v)), sum(length(substr(v, 1, 1024))) FROM %s GROUP BY 1"
sql_classified="SELECT form, ct, count(*), sum(raw), sum(stored) FROM (SELECT pg_toastinfo(v)::text AS form, octet_length(v) AS raw, pg_column_size(v) AS stored, CASE WHEN substr(p, 1, 3) = decode('ffd8ff', 'hex') THEN 'jpeg' WHEN substr(p, 1, 8) = decode('89504e470d0a1a0a', 'hex') THEN 'png' WHEN substr(p, 1, 4) IN (decode('47494638', 'hex')) THEN 'gif' WHEN substr(p, 1, 4) = decode('52494646', 'hex') AND substr(p, 9, 4) = decode('57454250', 'hex') THEN 'webp' WHEN substr(p, 1, 2) = decode('1f8b', 'hex') THEN 'gzip' WHEN substr(p, 1, 4) = decode('28b52ffd', 'hex') THEN 'zstd' WHEN substr(p, 1, 6) = decode('fd377a585a00', 'hex') THEN 'xz' WHEN substr(p, 1, 3) = decode('425a68', 'hex') THEN 'bzip2' WHEN substr(p, 1, 4) = decode('04224d18', 'hex') THEN 'lz4' WHEN substr(p, 1, 4) = decode('504b0304', 'hex') THEN 'zip' WHEN substr(p, 1, 6) = decode('377abcaf271c', 'hex') THEN '7z' WHEN substr(p, 1, 5) = decode('255044462d', 'hex') THEN 'pdf' WHEN substr(p, 5, 4) = decode('66747970', 'hex') THEN 'mp4' WHEN substr(p, 1, 3) = decode('494433', 'hex') THEN 'mp3' WHEN substr(p, 1, 4) = decode('4f676753', 'hex') THEN 'ogg' ELSE 'other' END AS ct FROM (SELECT v, substr(v, 1, 1024) AS p FROM %s OFFSET 0) s) s2 GROUP BY 1, 2"
# "with entropy": also toast_profile's prefix_entropy, in SQL.
sql_entropy="SELECT pg_toastinfo(v)::text AS form, count(*), sum(octet_length(v)), sum(pg_column_size(v)), avg((SELECT log(2, length(p)) - sum(c * log(2, c)) / length(p) FROM (SELECT count(*)::numeric AS c FROM generate_series(0, length(p) - 1) i GROUP BY get_byte(p, i)) h)) FROM (SELECT v, substr(v, 1, 1024) AS p FROM %s OFFSET 0) s GROUP BY 1"
prof="SELECT * FROM storagelab.toast_profile('%s', 'v')"
# On a shared machine the load changes from one second to the next: each
# SQL anchor and toast_profile are run alternately, and the medians of the
# pairs are compared.
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE FUNCTION public.bench_pair_ms(q1 text, q2 text, runs int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE t timestamptz; a numeric[] := '{}'; b numeric[] := '{}';
BEGIN
	FOR i IN 1..runs LOOP
		t := clock_timestamp(); EXECUTE q1;
		a := a || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
		t := clock_timestamp(); EXECUTE q2;
		b := b || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
	END LOOP;
	RETURN (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(a) x)
	       || ' ' ||
	       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(b) x);
END $$;
SQL
bench_pair_ms() {
	psql -X -At -v ON_ERROR_STOP=1 -v q1="$1" -v q2="$2" -v runs="$3" \
		<<<'SELECT public.bench_pair_ms(:'"'"'q1'"'"', :'"'"'q2'"'"', :runs)'
}
for t in blob_extended blob_external; do
	read -r s_plain s_prof1 <<<"$(bench_pair_ms "$(printf "$sql_plain" "$t")" "$(printf "$prof" "$t")" 15)"
	read -r s_class s_prof2 <<<"$(bench_pair_ms "$(printf "$sql_classified" "$t")" "$(printf "$prof" "$t")" 15)"
	s_entr=$(bench_ms "$(printf "$sql_entropy" "$t")" 3)
	s_prof=$s_prof2
	# Ratio = SQL time / toast_profile time: how many times faster toast_profile is.
	bench_row "SQL equivalent, plain ($t)" "$s_plain" "toast_profile" "$s_prof1"
	bench_row "SQL equivalent, classified ($t)" "$s_class" "toast_profile" "$s_prof"
	bench_row "SQL equivalent, with entropy ($t)" "$s_entr" "toast_profile" "$s_prof"
done

# TOAST blocks read per value, counted by the statistics system in one
# transaction (TOAST heap + TOAST index, hits and reads).
for t in blob_extended blob_external; do
	psql -X -At -v ON_ERROR_STOP=1 <<SQL
SELECT reltoastrelid AS trel, (SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid) AS tidx
  FROM pg_class c WHERE oid = '$t'::regclass \gset
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b0 \gset
$(printf "$sql_classified" "$t") \g /dev/null
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b1 \gset
SELECT * FROM storagelab.toast_profile('$t', 'v') \gset p_
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b2 \gset
SELECT format('  %-46s SQL equivalent %s, toast_profile %s TOAST blocks per value (toast_profile''s own count: %s)',
              '$t', round((:b1 - :b0)::numeric / :p_rows_scanned, 2), round((:b2 - :b1)::numeric / :p_rows_scanned, 2),
              round(:p_toast_buffers_accessed::numeric / nullif(:p_toast_values_fetched, 0), 2));
COMMIT;
SQL
done
psql -X -q -c 'DROP TABLE blob_extended, blob_external, toast_seed'

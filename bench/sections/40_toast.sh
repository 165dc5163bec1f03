# Section 40: TOAST storage.
#
# 1. The seed article's claim: 1,000 x 1 MB incompressible values (random
#    bytes behind an 8-byte id) inserted under EXTENDED (default, pglz) and
#    under EXTERNAL, then substr(v, 1, 1000) read from every row of each.
# 2. toast_profile() over a mixed bytea column against the SQL equivalent
#    per row (pg_toastinfo + pg_column_size + octet_length + a substr
#    prefix), and the TOAST blocks each reads per out-of-line value
#    (pg_stat_get_xact_blocks_fetched of the TOAST table and its index).
#    The column holds 284,100 x SCALE values, 2.1 GB raw / 1.3 GB stored at
#    scale 1, in every form, in random order: small binary and text values
#    (100 B - 2 kB, inline plain), documents (2.5-14 kB JSON-like text,
#    inline or out-of-line pglz), images (2.5-32 kB random bytes behind
#    JPEG/PNG/gzip/zip/MP4 signatures or none, out of line uncompressed),
#    large documents (32-200 kB, out-of-line pglz and lz4) and archives
#    (1-4 MB, out of line uncompressed).  Then the same on a file-like
#    column: the mix's values of 2.5 kB and more, in a table of their own.
#    Rows print SQL time / toast_profile time.
#
# Values: 1000 x SCALE for part 1 (TOAST_BENCH_VALUES overrides, e.g. for a
# dry run), the mix above x SCALE for part 2.  INSERTs are timed once,
# substr reads are medians of 15 runs; part 2 runs each query once to warm
# the caches, then each SQL anchor and toast_profile alternately, 7 pairs
# (5 for the slow substr chain), and compares the medians.
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

psql -X -q -c 'DROP TABLE blob_extended, blob_external, toast_seed'

# Part 2: the mixed column.  4 MB of random bytes and 2.3 MB of JSON-like
# text are made once; values are slices of them at random offsets.
mix=${SCALE}
psql -X -q -v ON_ERROR_STOP=1 -v mix="$mix" <<'SQL'
CREATE TABLE mix_seed AS
  SELECT (SELECT decode(string_agg(md5(g::text || 'mix'), ''), 'hex') FROM generate_series(1, 262144) g) AS rnd,
         (SELECT convert_to(string_agg(format('{"id": %s, "customer": "customer %s", "status": "%s", "amount": %s, "note": "%s"}',
                                              g, g % 997, (ARRAY['active','closed','pending'])[1 + g % 3], (g * 37) % 10000,
                                              repeat(chr(97 + g % 26), 1 + g % 7)), E'\n'), 'UTF8')
            FROM generate_series(1, 25000) g) AS txt;
CREATE TABLE mix_kinds (kind text, n int, lo int, hi int, content text, method text);
INSERT INTO mix_kinds VALUES
  ('small binary',   120000 * :mix,     100,    2000, 'rnd', 'pglz'),
  ('small text',      60000 * :mix,     200,    2000, 'txt', 'pglz'),
  ('document',        60000 * :mix,    2500,   14000, 'txt', 'pglz'),
  ('image',           40000 * :mix,    2500,   32000, 'rnd', 'pglz'),
  ('large doc pglz',   2000 * :mix,   32000,  200000, 'txt', 'pglz'),
  ('large doc lz4',    2000 * :mix,   32000,  200000, 'txt', 'lz4'),
  ('archive',           100 * :mix, 1000000, 4000000, 'rnd', 'pglz');
SELECT setseed(0.7) \g /dev/null
CREATE TABLE mix_plan AS
  SELECT row_number() OVER (ORDER BY random())::int AS id, k.kind, k.content, k.method,
         k.lo + floor(random() * (k.hi - k.lo + 1))::int AS len,
         floor(random() * 1000000)::int AS r
    FROM mix_kinds k, generate_series(1, k.n);
CREATE INDEX ON mix_plan (id);
ANALYZE mix_plan;
CREATE TABLE blob_mix (id int PRIMARY KEY, kind text, v bytea);
-- 100 batches in id order; in each, the lz4 rows go in after the others
-- (default_toast_compression is read when a value is stored).
DO $$
DECLARE nb int := 100; maxid int := (SELECT max(id) FROM mix_plan);
BEGIN
  FOR b IN 0..nb - 1 LOOP
    FOR m IN 1..2 LOOP
      PERFORM set_config('default_toast_compression', CASE m WHEN 1 THEN 'pglz' ELSE 'lz4' END, true);
      INSERT INTO blob_mix
        SELECT p.id, p.kind,
               CASE WHEN p.content = 'txt'
                    THEN substr(s.txt, 1 + p.r % (octet_length(s.txt) - p.len), p.len)
                    ELSE CASE p.r % 6 WHEN 0 THEN '\xffd8ffe0'::bytea WHEN 1 THEN '\x89504e470d0a1a0a'::bytea
                                      WHEN 2 THEN '\x1f8b0800'::bytea WHEN 3 THEN '\x504b0304'::bytea
                                      WHEN 4 THEN '\x0000002066747970'::bytea ELSE '\x'::bytea END
                         || substr(s.rnd, 1 + p.r % (octet_length(s.rnd) - p.len), p.len - 8)
               END
          FROM mix_plan p, mix_seed s
         WHERE p.id > b * maxid / nb AND p.id <= (b + 1) * maxid / nb
           AND (p.method = 'lz4') = (m = 2)
         ORDER BY p.id;
    END LOOP;
  END LOOP;
END $$;
DROP TABLE mix_plan, mix_kinds, mix_seed;
VACUUM ANALYZE blob_mix;
CHECKPOINT;
SQL
psql -X -At -c "SELECT format('  data: %s values, %s raw (octet_length), %s stored (pg_column_size); heap %s, TOAST %s',
    count(*), pg_size_pretty(sum(octet_length(v))), pg_size_pretty(sum(pg_column_size(v))),
    pg_size_pretty(pg_relation_size('blob_mix')),
    pg_size_pretty(pg_table_size('blob_mix') - pg_relation_size('blob_mix'))) FROM blob_mix"
psql -X -At -c "SELECT format('  forms: %s', string_agg(format('%s %s', f, n), ', ' ORDER BY n DESC))
    FROM (SELECT pg_toastinfo(v)::text AS f, count(*) AS n FROM blob_mix GROUP BY 1) s"

# The SQL equivalents (JIT off: its compile time would only inflate them;
# no parallel workers: toast_profile runs in one process, and the on-CPU
# time below is that of the calling backend only).
# "equivalent": what toast_profile() returns, in SQL, written for speed: per
# row pg_toastinfo (the form), octet_length, pg_column_size and the content
# type by magic bytes, dispatched on the first byte of a 12-byte substr
# prefix (no prefix for out-of-line lz4 values, which toast_profile() does
# not read either), hash-aggregated per form and type.  It does not compute
# the prefix entropy or the text test (SQL has no cheap way to), and reads
# 12 bytes where toast_profile() reads 1 kB: the strictest anchor, the main one.
# "prefix unused": the census and substr(v, 1, 1024) per row, the prefix
# only measured (what the previous runs compared against).
# "substr chain": the content type as one first writes it, fifteen
# substr(p, ...) = magic comparisons on a 1 kB prefix.
sql_equiv="SELECT form, ct, count(*), sum(raw), sum(stored) FROM (SELECT form, raw, stored, CASE WHEN h IS NULL THEN 'unsniffed' ELSE CASE get_byte(h, 0) WHEN 255 THEN CASE WHEN get_byte(h, 1) = 216 AND get_byte(h, 2) = 255 THEN 'jpeg' ELSE 'other' END WHEN 137 THEN CASE WHEN substr(h, 1, 8) = '\\x89504e470d0a1a0a'::bytea THEN 'png' ELSE 'other' END WHEN 71 THEN CASE WHEN substr(h, 1, 6) IN ('\\x474946383761'::bytea, '\\x474946383961'::bytea) THEN 'gif' ELSE 'other' END WHEN 82 THEN CASE WHEN substr(h, 1, 4) = '\\x52494646'::bytea AND substr(h, 9, 4) = '\\x57454250'::bytea THEN 'webp' ELSE 'other' END WHEN 31 THEN CASE WHEN get_byte(h, 1) = 139 THEN 'gzip' ELSE 'other' END WHEN 40 THEN CASE WHEN substr(h, 1, 4) = '\\x28b52ffd'::bytea THEN 'zstd' ELSE 'other' END WHEN 253 THEN CASE WHEN substr(h, 1, 6) = '\\xfd377a585a00'::bytea THEN 'xz' ELSE 'other' END WHEN 66 THEN CASE WHEN substr(h, 1, 3) = '\\x425a68'::bytea THEN 'bzip2' ELSE 'other' END WHEN 4 THEN CASE WHEN substr(h, 1, 4) = '\\x04224d18'::bytea THEN 'lz4' ELSE 'other' END WHEN 80 THEN CASE WHEN substr(h, 1, 4) IN ('\\x504b0304'::bytea, '\\x504b0506'::bytea, '\\x504b0708'::bytea) THEN 'zip' ELSE 'other' END WHEN 55 THEN CASE WHEN substr(h, 1, 6) = '\\x377abcaf271c'::bytea THEN '7z' ELSE 'other' END WHEN 37 THEN CASE WHEN substr(h, 1, 5) = '\\x255044462d'::bytea THEN 'pdf' ELSE 'other' END WHEN 73 THEN CASE WHEN substr(h, 1, 3) = '\\x494433'::bytea THEN 'mp3' ELSE 'other' END WHEN 79 THEN CASE WHEN substr(h, 1, 4) = '\\x4f676753'::bytea THEN 'ogg' ELSE 'other' END ELSE CASE WHEN substr(h, 5, 4) = '\\x66747970'::bytea THEN 'mp4' ELSE 'other' END END END AS ct FROM (SELECT form, octet_length(v) AS raw, pg_column_size(v) AS stored, CASE WHEN form <> 'toasted varlena, compressed (lz4)' THEN substr(v, 1, 12) || '\\x000000000000000000000000'::bytea END AS h FROM (SELECT v, pg_toastinfo(v)::text AS form FROM blob_mix OFFSET 0) s0 OFFSET 0) s1) s2 GROUP BY 1, 2"
sql_plain="SELECT form, count(*), sum(raw), sum(stored), sum(plen) FROM (SELECT pg_toastinfo(v)::text AS form, octet_length(v) AS raw, pg_column_size(v) AS stored, length(substr(v, 1, 1024)) AS plen FROM blob_mix OFFSET 0) s GROUP BY 1"
sql_classified="SELECT form, ct, count(*), sum(raw), sum(stored) FROM (SELECT pg_toastinfo(v)::text AS form, octet_length(v) AS raw, pg_column_size(v) AS stored, CASE WHEN substr(p, 1, 3) = '\\xffd8ff'::bytea THEN 'jpeg' WHEN substr(p, 1, 8) = '\\x89504e470d0a1a0a'::bytea THEN 'png' WHEN substr(p, 1, 4) = '\\x47494638'::bytea THEN 'gif' WHEN substr(p, 1, 4) = '\\x52494646'::bytea AND substr(p, 9, 4) = '\\x57454250'::bytea THEN 'webp' WHEN substr(p, 1, 2) = '\\x1f8b'::bytea THEN 'gzip' WHEN substr(p, 1, 4) = '\\x28b52ffd'::bytea THEN 'zstd' WHEN substr(p, 1, 6) = '\\xfd377a585a00'::bytea THEN 'xz' WHEN substr(p, 1, 3) = '\\x425a68'::bytea THEN 'bzip2' WHEN substr(p, 1, 4) = '\\x04224d18'::bytea THEN 'lz4' WHEN substr(p, 1, 4) = '\\x504b0304'::bytea THEN 'zip' WHEN substr(p, 1, 6) = '\\x377abcaf271c'::bytea THEN '7z' WHEN substr(p, 1, 5) = '\\x255044462d'::bytea THEN 'pdf' WHEN substr(p, 5, 4) = '\\x66747970'::bytea THEN 'mp4' WHEN substr(p, 1, 3) = '\\x494433'::bytea THEN 'mp3' WHEN substr(p, 1, 4) = '\\x4f676753'::bytea THEN 'ogg' ELSE 'other' END AS ct FROM (SELECT v, substr(v, 1, 1024) AS p FROM blob_mix OFFSET 0) s) s2 GROUP BY 1, 2"
prof="SELECT * FROM storagelab.toast_profile('blob_mix', 'v')"

# On a shared machine the load changes from one second to the next: each
# query is run once to warm the caches, then the SQL anchor and
# toast_profile alternately; medians of the pairs are compared, and the
# range of the per-pair ratios is printed too.  Besides the elapsed time,
# each run's on-CPU time of the backend is taken from /proc/self/schedstat
# (nanoseconds the process ran): waiting for a CPU that other processes hold
# does not count there, so the CPU ratio moves much less with the load.
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE FUNCTION public.bench_pair_ms(q1 text, q2 text, runs int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz; c bigint;
	a numeric[] := '{}'; b numeric[] := '{}'; ca numeric[] := '{}'; cb numeric[] := '{}';
BEGIN
	EXECUTE q1;
	EXECUTE q2;
	FOR i IN 1..runs LOOP
		c := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
		t := clock_timestamp(); EXECUTE q1;
		a := a || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
		ca := ca || (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - c) / 1e6;
		c := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
		t := clock_timestamp(); EXECUTE q2;
		b := b || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric;
		cb := cb || (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - c) / 1e6;
	END LOOP;
	RETURN concat_ws(' ',
		(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(a) x),
		(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(b) x),
		(SELECT round(min(x / y), 2) || ' ' || round(max(x / y), 2) FROM unnest(a, b) u(x, y)),
		(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(ca) x),
		(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(cb) x),
		(SELECT round(min(x / y), 2) || ' ' || round(max(x / y), 2) FROM unnest(ca, cb) u(x, y)));
END $$;
SQL
bench_pair_ms() {
	PGOPTIONS="-c jit=off -c max_parallel_workers_per_gather=0" psql -X -At -v ON_ERROR_STOP=1 -v q1="$1" -v q2="$2" -v runs="$3" \
		<<<'SELECT public.bench_pair_ms(:'"'"'q1'"'"', :'"'"'q2'"'"', :runs)'
}
pair_row() {
	local label=$1 sql=$2 runs=$3 s p lo hi cs cp clo chi
	read -r s p lo hi cs cp clo chi <<<"$(bench_pair_ms "$sql" "$prof" "$runs")"
	bench_row "$label" "$s" "toast_profile" "$p"
	bench_row "  same, on-CPU time" "$cs" "toast_profile" "$cp"
	echo "    (per-pair ratios: elapsed $lo-${hi}x, CPU $clo-${chi}x)"
}
pair_row "SQL equivalent, with content type (blob_mix)" "$sql_equiv" 7
pair_row "census + 1 kB prefix unused (blob_mix)" "$sql_plain" 7
pair_row "content type by a substr chain (blob_mix)" "$sql_classified" 5

# The same comparison on a file-like column: the mix's values of 2.5 kB and
# more (images, documents, large documents, archives), copied into their own
# table, so that small inline values do not dominate the count.
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE blob_files AS SELECT id, kind, v FROM blob_mix WHERE kind IN ('image', 'document', 'large doc pglz', 'large doc lz4', 'archive') ORDER BY id" \
	-c 'VACUUM ANALYZE blob_files' -c CHECKPOINT
psql -X -At -c "SELECT format('  blob_files: %s values, %s raw, %s stored; forms: %s', count(*), pg_size_pretty(sum(octet_length(v))), pg_size_pretty(sum(pg_column_size(v))),
    (SELECT string_agg(format('%s %s', f, n), ', ' ORDER BY n DESC) FROM (SELECT pg_toastinfo(v)::text AS f, count(*) AS n FROM blob_files GROUP BY 1) s)) FROM blob_files"
prof_mix=$prof
prof="SELECT * FROM storagelab.toast_profile('blob_files', 'v')"
pair_row "SQL equivalent, with content type (blob_files)" "${sql_equiv//FROM blob_mix/FROM blob_files}" 7
prof=$prof_mix
psql -X -q -c 'DROP TABLE blob_files'

# TOAST blocks read, counted by the statistics system in one transaction
# (TOAST heap + TOAST index, hits and reads), per out-of-line value.
psql -X -q -At -v ON_ERROR_STOP=1 <<SQL
SET jit = off;
SELECT reltoastrelid AS trel, (SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid) AS tidx
  FROM pg_class c WHERE oid = 'blob_mix'::regclass \gset
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b0 \gset
$sql_equiv \g /dev/null
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b1 \gset
SELECT * FROM storagelab.toast_profile('blob_mix', 'v') \gset p_
SELECT pg_stat_get_xact_blocks_fetched(:trel) + pg_stat_get_xact_blocks_fetched(:tidx) AS b2 \gset
SELECT format('  TOAST blocks per out-of-line value (%s of them, %s lz4): SQL equivalent %s, toast_profile %s (its own count: %s buffers for %s values fetched)',
              :p_external_uncompressed + :p_external_compressed, :p_unsniffed_values,
              round((:b1 - :b0)::numeric / (:p_external_uncompressed + :p_external_compressed), 2),
              round((:b2 - :b1)::numeric / (:p_external_uncompressed + :p_external_compressed), 2),
              :p_toast_buffers_accessed, :p_toast_values_fetched);
COMMIT;
SQL
psql -X -q -c 'DROP TABLE blob_mix'

-- pgTAP: storagelab.toast_profile() against oracles: pg_toastinfo (the form
-- of each value), octet_length, pg_column_size, pg_column_compression.
-- toastinfo is a test oracle packaged for some majors only (none for 19 yet):
-- without it, the 16 checks that need it are skipped, the others still run.
BEGIN;
SELECT plan(52);
-- The same compression on every major (19 defaults to lz4 where built with it).
SET LOCAL default_toast_compression = pglz;
SELECT NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'toastinfo') AS no_toastinfo \gset
\if :no_toastinfo
\else
CREATE EXTENSION IF NOT EXISTS toastinfo;
\endif
\i test/fixtures/toast.sql

-- The oracle: the same census computed value by value in SQL.
CREATE FUNCTION pg_temp.oracle(rel regclass, col name)
RETURNS TABLE (rows_scanned bigint, null_values bigint, inline_uncompressed bigint,
               inline_short bigint, inline_compressed bigint, external_uncompressed bigint,
               external_compressed bigint, pglz_values bigint, lz4_values bigint,
               raw_bytes bigint, stored_bytes bigint)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    SELECT count(*),
           count(*) FILTER (WHERE info = 'null'),
           count(*) FILTER (WHERE info IN ('short inline varlena', 'long inline varlena, uncompressed')),
           count(*) FILTER (WHERE info = 'short inline varlena'),
           count(*) FILTER (WHERE info LIKE 'long inline varlena, compressed%%'),
           count(*) FILTER (WHERE info = 'toasted varlena, uncompressed'),
           count(*) FILTER (WHERE info LIKE 'toasted varlena, compressed%%'),
           count(*) FILTER (WHERE method = 'pglz'),
           count(*) FILTER (WHERE method = 'lz4'),
           coalesce(sum(octet_length(%1$I)), 0)::bigint,
           coalesce(sum(pg_column_size(%1$I)), 0)::bigint
      FROM (SELECT %1$I, pg_toastinfo(%1$I)::text AS info, pg_column_compression(%1$I) AS method
              FROM %2$s) s $q$, col, rel);
END $$;
CREATE FUNCTION pg_temp.census(rel regclass, col name)
RETURNS TABLE (rows_scanned bigint, null_values bigint, inline_uncompressed bigint,
               inline_short bigint, inline_compressed bigint, external_uncompressed bigint,
               external_compressed bigint, pglz_values bigint, lz4_values bigint,
               raw_bytes bigint, stored_bytes bigint)
LANGUAGE sql AS $$
  SELECT rows_scanned, null_values, inline_uncompressed, inline_short, inline_compressed,
         external_uncompressed, external_compressed, pglz_values, lz4_values,
         raw_bytes, stored_bytes
    FROM storagelab.toast_profile(rel, col)
$$;

CREATE TEMP TABLE p AS SELECT * FROM storagelab.toast_profile('toast_forms', 'v');
\if :no_toastinfo
SELECT skip('toastinfo is not available for this PostgreSQL: no form-by-form oracle', 13);
\else
SELECT is((SELECT count(DISTINCT pg_toastinfo(v)::text) FROM toast_forms), 8::bigint,
          'fixture holds all eight forms (null, short, inline plain/pglz/lz4, toasted plain/pglz/lz4)');

CREATE TEMP TABLE o AS SELECT * FROM pg_temp.oracle('toast_forms', 'v');
SELECT is(p.rows_scanned, o.rows_scanned, 'rows counted = rows visible') FROM p, o;
SELECT is(p.null_values, o.null_values, 'null_values = pg_toastinfo null') FROM p, o;
SELECT is(p.inline_uncompressed, o.inline_uncompressed, 'inline_uncompressed = short + long inline uncompressed') FROM p, o;
SELECT is(p.inline_short, o.inline_short, 'inline_short = short inline varlena') FROM p, o;
SELECT is(p.inline_compressed, o.inline_compressed, 'inline_compressed = long inline compressed') FROM p, o;
SELECT is(p.external_uncompressed, o.external_uncompressed, 'external_uncompressed = toasted uncompressed') FROM p, o;
SELECT is(p.external_compressed, o.external_compressed, 'external_compressed = toasted compressed') FROM p, o;
SELECT is(p.pglz_values, o.pglz_values, 'pglz_values = pg_column_compression pglz') FROM p, o;
SELECT is(p.lz4_values, o.lz4_values, 'lz4_values = pg_column_compression lz4') FROM p, o;
SELECT is(p.raw_bytes, o.raw_bytes, 'raw_bytes = sum(octet_length)') FROM p, o;
SELECT is(p.stored_bytes, o.stored_bytes, 'stored_bytes = sum(pg_column_size)') FROM p, o;
SELECT is(p.unsniffed_values,
          (SELECT count(*) FROM toast_forms WHERE pg_toastinfo(v)::text = 'toasted varlena, compressed (lz4)'),
          'external lz4 values are the ones not sniffed') FROM p;
\endif
SELECT is(p.sniffed_values + p.unsniffed_values + p.null_values, p.rows_scanned,
          'every non-NULL value is sniffed or counted as unsniffed') FROM p;
SELECT is(p.toast_values_fetched, p.external_uncompressed + p.external_compressed - p.unsniffed_values,
          'one TOAST prefix read per sniffed external value') FROM p;
SELECT ok(p.toast_buffers_accessed BETWEEN p.toast_values_fetched AND 4 * p.toast_values_fetched,
          'a prefix read touches a few buffers (TOAST index + first chunk), not the whole value') FROM p;

-- Visibility follows the statement's snapshot: deleted and updated rows, and
-- rows of a rolled-back subtransaction, in this very transaction.
DELETE FROM toast_forms WHERE id IN (1, 5, 9, 20);
UPDATE toast_forms SET v = v || '\x00'::bytea WHERE id IN (2, 12, 17);
SAVEPOINT s;
INSERT INTO toast_forms (v) SELECT pg_temp.noise(5000, g) FROM generate_series(10, 14) g;
ROLLBACK TO SAVEPOINT s;
UPDATE toast_forms SET v = NULL WHERE id = 3;
\if :no_toastinfo
SELECT skip('toastinfo is not available for this PostgreSQL: no form-by-form oracle', 1);
\else
SELECT results_eq('SELECT * FROM pg_temp.census(''toast_forms'', ''v'')',
                  'SELECT * FROM pg_temp.oracle(''toast_forms'', ''v'')',
                  'after DELETE, UPDATE and a rolled-back savepoint, every count still equals the oracle');
\endif

-- text and jsonb columns are profiled the same way.
CREATE TABLE toast_docs (id int PRIMARY KEY, t text, j jsonb, n int);
INSERT INTO toast_docs
  SELECT g, CASE WHEN g % 5 = 0 THEN NULL ELSE repeat('lorem ipsum dolor sit amet ', g * 20) END,
         (SELECT jsonb_agg(jsonb_build_object('k', i, 'v', md5(i::text))) FROM generate_series(1, g * 10) i),
         g
    FROM generate_series(1, 40) g;
\if :no_toastinfo
SELECT skip('toastinfo is not available for this PostgreSQL: no form-by-form oracle', 2);
\else
SELECT results_eq('SELECT * FROM pg_temp.census(''toast_docs'', ''t'')',
                  'SELECT * FROM pg_temp.oracle(''toast_docs'', ''t'')', 'text column: census equals the oracle');
SELECT is((SELECT (c.rows_scanned, c.null_values, c.inline_compressed + c.inline_uncompressed,
                   c.external_compressed + c.external_uncompressed, c.stored_bytes)::text
             FROM pg_temp.census('toast_docs', 'j') c),
          (SELECT (count(*), count(*) FILTER (WHERE j IS NULL),
                   count(*) FILTER (WHERE pg_toastinfo(j)::text LIKE '%inline%'),
                   count(*) FILTER (WHERE pg_toastinfo(j)::text LIKE 'toasted%'),
                   sum(pg_column_size(j))::bigint)::text FROM toast_docs),
          'jsonb column: forms and stored_bytes equal the oracle');
\endif

-- Sampling: stops after about sample_rows rows, pages spread over the table.
CREATE TABLE toast_many (id int, v bytea) WITH (autovacuum_enabled = off);
INSERT INTO toast_many SELECT g, pg_temp.noise(200, g) FROM generate_series(1, 3000) g;
SELECT ok(rows_scanned BETWEEN 100 AND 140 AND evidence = 'sampled' AND pages_scanned < pages_total,
          'sample_rows => 100 reads about 100 rows from a few pages')
  FROM storagelab.toast_profile('toast_many', 'v', 100);
SELECT ok(evidence = 'exact' AND rows_scanned = 3000 AND pages_scanned = pages_total,
          'sample_rows larger than the table: every row, evidence exact')
  FROM storagelab.toast_profile('toast_many', 'v', 100000);

CREATE TABLE toast_halves (id int, v bytea) WITH (autovacuum_enabled = off);
INSERT INTO toast_halves SELECT g, CASE WHEN g > 2000 THEN pg_temp.noise(200, g) END
  FROM generate_series(1, 4000) g;
SELECT ok(null_values > 0 AND inline_uncompressed > 0 AND pages_scanned < pages_total / 4,
          'a sample spreads over the table: NULLs from its first half and values from its second')
  FROM storagelab.toast_profile('toast_halves', 'v', 400);

-- Content types and advice.
CREATE TABLE toast_images (id serial, v bytea);
INSERT INTO toast_images (v)
  SELECT m || pg_temp.noise(8000, g)
    FROM generate_series(1, 10) g,
         (VALUES ('\x89504e470d0a1a0a0000000d49484452'::bytea), ('\x1f8b0800000000000003'::bytea),
                 ('\xffd8ffe000104a464946'::bytea)) AS magic(m);
SELECT is(content_types, '{"png": 10, "gzip": 10, "jpeg": 10}'::jsonb,
          'PNG, gzip and JPEG values recognised by their magic bytes')
  FROM storagelab.toast_profile('toast_images', 'v');
SELECT ok(advice ~* 'external' AND advice ~ '^SET STORAGE EXTERNAL',
          'incompressible images/archives in an EXTENDED column: SET STORAGE EXTERNAL advised')
  FROM storagelab.toast_profile('toast_images', 'v');
SELECT ok(prefix_entropy > 7.2, 'random content has a prefix entropy above 7.2 bits/byte')
  FROM storagelab.toast_profile('toast_images', 'v');
SELECT ok(advice !~* 'external', 'compressible documents are not advised EXTERNAL')
  FROM storagelab.toast_profile('toast_docs', 't');
SELECT ok(prefix_entropy < 6, 'text has a low prefix entropy')
  FROM storagelab.toast_profile('toast_docs', 't');
SELECT ok(advice ~ 'lz4',
          'compressible documents compressed with pglz: SET COMPRESSION lz4 advised')
  FROM storagelab.toast_profile('toast_docs', 't');
ALTER TABLE toast_docs ALTER COLUMN t SET STORAGE EXTERNAL;
UPDATE toast_docs SET t = t || '';
SELECT ok(advice ~ '^SET STORAGE EXTENDED' AND advice !~* 'external',
          'compressible documents stored EXTERNAL: SET STORAGE EXTENDED advised')
  FROM storagelab.toast_profile('toast_docs', 't');
SELECT ok(advice ~ '^keep', 'small values only: keep')
  FROM storagelab.toast_profile('toast_many', 'v');

-- Every signature, plus content without one.
CREATE TABLE toast_magic (kind text, v bytea);
INSERT INTO toast_magic
  SELECT kind, m || pg_temp.noise(600, length(kind))
    FROM (VALUES ('jpeg', '\xffd8ffdb'::bytea), ('png', '\x89504e470d0a1a0a'), ('gif', convert_to('GIF89a', 'SQL_ASCII')),
                 ('webp', '\x52494646000000005745425056503820'), ('gzip', '\x1f8b08'),
                 ('zstd', '\x28b52ffd'), ('xz', '\xfd377a585a00'), ('bzip2', convert_to('BZh9', 'SQL_ASCII')),
                 ('lz4', '\x04224d18'), ('zip', '\x504b0304'), ('7z', '\x377abcaf271c'),
                 ('pdf', convert_to('%PDF-1.7', 'SQL_ASCII')), ('mp4', '\x000000186674797069736f6d'),
                 ('mov', '\x0000001466747970717420200000'), ('mp3', convert_to('ID3', 'SQL_ASCII')),
                 ('ogg', convert_to('OggS', 'SQL_ASCII'))) AS t(kind, m);
INSERT INTO toast_magic VALUES ('high_entropy', pg_temp.noise(3000, 99)),
  ('text', convert_to(repeat('plain text, ', 100), 'UTF8')), ('other', '\x00010203'::bytea || repeat('\x00'::bytea::text, 1)::bytea),
  ('empty', ''::bytea);
SELECT is(content_types,
          (SELECT jsonb_object_agg(kind, 1) FROM toast_magic),
          'every magic signature, high-entropy, text, other and empty values classified')
  FROM storagelab.toast_profile('toast_magic', 'v');

-- Text is printable UTF-8 (tab, newline, CR, form feed allowed; a sequence
-- cut by the end of the 1,024-byte prefix accepted); control bytes and
-- invalid UTF-8 are "other".  The census decides ASCII from its byte counts
-- and walks only prefixes with bytes >= 0x80.
CREATE TABLE toast_text (kind text, v bytea);
INSERT INTO toast_text VALUES
  ('text', convert_to(repeat(E'naïve café, 東京\t', 50), 'UTF8')),
  ('text', convert_to(repeat(E'line\r\n\f', 300), 'UTF8')),
  ('text', convert_to(repeat('x', 1023) || 'é and more', 'UTF8')),
  ('other', convert_to(repeat('x', 500), 'UTF8') || '\x01'::bytea || convert_to(repeat('y', 500), 'UTF8')),
  ('other', convert_to(repeat('x', 100), 'UTF8') || '\x7f'::bytea),
  ('other', convert_to(repeat('x', 100), 'UTF8') || '\xc328'::bytea || convert_to(repeat('y', 100), 'UTF8')),
  ('other', '\xc0af'::bytea || convert_to(repeat('y', 100), 'UTF8'));
SELECT is(content_types, '{"text": 3, "other": 4}'::jsonb,
          'UTF-8 text (multibyte, a sequence cut by the prefix end) is text; control bytes, invalid UTF-8 are other')
  FROM storagelab.toast_profile('toast_text', 'v');

-- prefix_entropy against an oracle: the Shannon entropy of each value's
-- first 1,024 bytes computed in SQL, averaged over the values of at least
-- 64 bytes, for values read in place, decompressed inline, read from the
-- first TOAST chunk and decompressed from it (pglz; no out-of-line lz4 here).
CREATE TABLE toast_entropy (v bytea);
INSERT INTO toast_entropy VALUES (pg_temp.noise(3000, 1)), (pg_temp.noise(500, 2)),
  (convert_to(repeat('compressible text ', 400), 'UTF8')),
  (convert_to((SELECT string_agg(g::text || ' row of compressible text', ' ') FROM generate_series(1, 20000) g), 'UTF8')),
  (convert_to(repeat('abc', 30), 'UTF8')), ('\x0102'::bytea), (NULL);
SELECT cmp_ok(abs(p.prefix_entropy - o.e)::numeric, '<', 0.0001,
              'prefix_entropy = mean Shannon entropy of the 1,024-byte prefixes (SQL oracle)')
  FROM storagelab_internal.toast_census('toast_entropy', 'v') p,
       (SELECT avg((SELECT log(2, length(pr)) - sum(c * log(2, c)) / length(pr)
                      FROM (SELECT count(*)::numeric AS c FROM generate_series(0, length(pr) - 1) i
                             GROUP BY get_byte(pr, i)) h)) AS e
          FROM (SELECT substr(v, 1, 1024) AS pr FROM toast_entropy WHERE octet_length(v) >= 64) s) o;

-- Out-of-line values whose TOAST chunks are not in heap order (rewritten
-- rows): every prefix still comes from the right value, external pglz ones
-- decompressed from their first chunk.
CREATE TABLE toast_shuffled (id int PRIMARY KEY, v bytea);
INSERT INTO toast_shuffled
  SELECT g, CASE WHEN g % 2 = 0 THEN '\x89504e470d0a1a0a'::bytea || pg_temp.noise(6000, g)
                 ELSE convert_to('%PDF-1.4 ', 'UTF8') || pg_temp.numbers(20000, g) END
    FROM generate_series(1, 40) g;
UPDATE toast_shuffled SET v = CASE WHEN id % 2 = 0 THEN convert_to('%PDF-1.4 ', 'UTF8') || pg_temp.numbers(20000, id)
                                   ELSE '\x89504e470d0a1a0a'::bytea || pg_temp.noise(6000, id) END
 WHERE id % 3 = 0;
SELECT is(content_types,
          (SELECT jsonb_object_agg(k, n) FROM (
             SELECT CASE WHEN substr(v, 1, 4) = '\x89504e47'::bytea THEN 'png' ELSE 'pdf' END AS k, count(*) AS n
               FROM toast_shuffled GROUP BY 1) s),
          'TOAST chunks out of heap order: content types equal the SQL classification')
  FROM storagelab.toast_profile('toast_shuffled', 'v');
SELECT ok(external_compressed > 0 AND external_uncompressed > 0 AND unsniffed_values = 0
          AND toast_values_fetched = external_compressed + external_uncompressed,
          'external pglz and uncompressed values both sniffed from their first chunk')
  FROM storagelab.toast_profile('toast_shuffled', 'v');

-- Bad input.
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms', 'nope')$$, '42703', NULL,
                 'nonexistent column: undefined_column');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_docs', 'n')$$, '42804', NULL,
                 'fixed-length column: datatype_mismatch');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms_pkey', 'v')$$, '42809', NULL,
                 'an index: wrong_object_type');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile(NULL, 'v')$$, '22004', NULL,
                 'NULL relation: null_value_not_allowed');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms', 'v', 0)$$, '22023', NULL,
                 'sample_rows 0: invalid_parameter_value');
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms', 'ctid')$$, '0A000', NULL,
                 'system column: feature_not_supported');

-- Privileges.
CREATE ROLE storagelab_toast_plain;
GRANT SELECT ON toast_forms TO storagelab_toast_plain;
SET LOCAL ROLE storagelab_toast_plain;
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms', 'v')$$, '42501',
                 'permission denied to read table pages',
                 'SELECT on the table without pg_stat_scan_tables: refused, the hint names the role');
RESET ROLE;
CREATE ROLE storagelab_toast_scanner IN ROLE pg_stat_scan_tables;
GRANT USAGE ON SCHEMA public TO storagelab_toast_scanner;
SET LOCAL ROLE storagelab_toast_scanner;
SELECT throws_ok($$SELECT * FROM storagelab.toast_profile('toast_forms', 'v')$$, '42501', NULL,
                 'pg_stat_scan_tables without SELECT on the table: insufficient_privilege');
SELECT is((SELECT count(*) FROM storagelab.bytea_storage WHERE relation = 'toast_forms'::regclass), 0::bigint,
          'bytea_storage leaves out tables the caller may not SELECT from');
RESET ROLE;

-- bytea_storage: every bytea column, sampled within the bound.
INSERT INTO storagelab.settings VALUES ('toast.view_sample_rows', '50');
SELECT set_eq($$SELECT relation::text || '.' || column_name FROM storagelab.bytea_storage
                 WHERE relation::text LIKE 'toast\_%'$$,
              ARRAY['toast_forms.v', 'toast_many.v', 'toast_halves.v', 'toast_images.v', 'toast_magic.v', 'toast_shuffled.v', 'toast_text.v', 'toast_entropy.v'],
              'bytea_storage lists every bytea column (and no text/jsonb column)');
SELECT ok(evidence = 'sampled' AND sample_rows BETWEEN 50 AND 50 + 40,
          'bytea_storage profiles about toast.view_sample_rows rows per column')
  FROM storagelab.bytea_storage WHERE relation = 'toast_many'::regclass;
SELECT ok(advice ~ '^SET STORAGE EXTERNAL', 'bytea_storage carries the advice')
  FROM storagelab.bytea_storage WHERE relation = 'toast_images'::regclass;

-- A wide row: three text values of 0.8 to 1.7 kB, over ~2 kB together; the
-- toaster compressed the two biggest although each is under the threshold.
CREATE TABLE toast_wide (id int, title text, body text, summary text);
INSERT INTO toast_wide SELECT g, repeat('title words ' || g, 60), repeat('body text ' || g, 150),
                              repeat('summary ' || g, 100) FROM generate_series(1, 200) g;
SELECT is(large_values || ' ' || large_compressed || ' ' || pglz_values, '200 200 200',
          'values under ~2 kB that the toaster compressed in a wide row count as large')
  FROM storagelab.toast_profile('toast_wide', 'body');
SELECT ok(advice !~ 'no value reaches', 'their advice does not say that no value reaches the threshold: ' || advice)
  FROM storagelab.toast_profile('toast_wide', 'body');

-- Large objects: pg_largeobject holds them in 2 kB bytea pages, compressed;
-- a system catalog cannot be altered, so nothing is advised.
SELECT lo_from_bytea(0, convert_to(repeat('large object text ', 2000), 'UTF8')) IS NOT NULL AS lo_created \gset
SELECT is(advice || ' / ' || expected_effect, 'keep: a system catalog, whose storage and compression cannot be changed / none',
          'a system catalog (pg_largeobject.data, compressed large objects): keep, no ALTER advised')
  FROM storagelab.toast_profile('pg_largeobject', 'data');

-- Once an advice is followed, keep says why (it said "mix" for both).
ALTER TABLE toast_images ALTER COLUMN v SET STORAGE EXTERNAL;
UPDATE toast_images SET v = v || '';
SELECT is(advice, 'keep: most large values are compressed already, and EXTERNAL stores them as they are',
          'images stored EXTERNAL as advised: keep, they are compressed already')
  FROM storagelab.toast_profile('toast_images', 'v');
ALTER TABLE toast_docs ALTER COLUMN t SET STORAGE EXTENDED;
SELECT is(advice, 'keep: the large values are compressible, and the column compresses new ones',
          'compressible documents in an EXTENDED column: keep, new values are compressed')
  FROM storagelab.toast_profile('toast_docs', 't');

SELECT * FROM finish();
ROLLBACK;

-- pgTAP: alignment_padding against real rebuilds.  Each fixture is rebuilt
-- twice with the same rows (CREATE TABLE + INSERT ... SELECT, ANALYZE): once
-- in its current column order, once in the suggested order; the measured
-- pg_relation_size difference is the oracle for saved_bytes
-- (within 10%).  pageinspect gives the real average tuple size.
\set ECHO none
\i test/fixtures/pagila.sql
\set ECHO all
BEGIN;
SELECT plan(24);
CREATE EXTENSION IF NOT EXISTS pageinspect;

-- rebuild(r, cols): a fresh copy of r with the columns cols in that order,
-- same types, NOT NULL and fillfactor, same rows, analyzed.
CREATE FUNCTION pg_temp.rebuild(r regclass, cols name[], suffix text) RETURNS regclass
LANGUAGE plpgsql AS $$
DECLARE
  def text;
  target text := r::text || '_' || suffix;
BEGIN
  SELECT string_agg(format('%I %s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                           CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END), ', ' ORDER BY o.n)
    INTO def
    FROM unnest(cols) WITH ORDINALITY o(name, n)
    JOIN pg_attribute a ON a.attrelid = r AND a.attname = o.name;
  EXECUTE format('CREATE TABLE %s (%s)%s', target, def,
                 coalesce((SELECT ' WITH (' || array_to_string(reloptions, ', ') || ')'
                             FROM pg_class WHERE oid = r AND reloptions IS NOT NULL), ''));
  EXECUTE format('INSERT INTO %s SELECT %s FROM %s', target,
                 (SELECT string_agg(quote_ident(c), ', ') FROM unnest(cols) c), r);
  EXECUTE format('ANALYZE %s', target);
  RETURN target::regclass;
END $$;

-- measured(r): pg_relation_size of a current-order rebuild minus that of a
-- suggested-order rebuild, next to the estimate.
CREATE FUNCTION pg_temp.measured(r regclass, OUT estimated bigint, OUT measured bigint)
LANGUAGE plpgsql AS $$
DECLARE ap record;
BEGIN
  SELECT * INTO STRICT ap FROM storagelab.alignment_padding a WHERE a.relation = r;
  estimated := ap.saved_bytes;
  measured := pg_relation_size(pg_temp.rebuild(r, ap.current_order, 'now'))
            - pg_relation_size(pg_temp.rebuild(r, ap.suggested_order, 'after'));
END $$;

CREATE FUNCTION pg_temp.within(estimated bigint, measured bigint, pct numeric) RETURNS boolean
LANGUAGE sql AS $$ SELECT measured > 0 AND abs(estimated - measured) <= measured * pct / 100 $$;

-- real average bytes per tuple on the pages (MAXALIGN'd lp_len)
CREATE FUNCTION pg_temp.real_row_bytes(r regclass) RETURNS numeric
LANGUAGE sql AS $$
  SELECT avg((lp_len + 7) / 8 * 8)
    FROM generate_series(0, pg_relation_size(r) / current_setting('block_size')::int - 1) b,
         heap_page_items(get_raw_page(r::text, b::int))
   WHERE lp_flags = 1
$$;

-- 1. interleaved bool / int8
CREATE TABLE public.cw_interleaved (b1 bool NOT NULL, i1 int8 NOT NULL, b2 bool NOT NULL,
                                    i2 int8 NOT NULL, b3 bool, i3 int8);
INSERT INTO public.cw_interleaved SELECT true, g, false, g, g % 2 = 0, g FROM generate_series(1, 50000) g;
ANALYZE public.cw_interleaved;
SELECT is((SELECT suggested_order FROM storagelab.alignment_padding WHERE relation = 'cw_interleaved'::regclass),
          '{i1,i2,i3,b1,b2,b3}'::name[], 'interleaved: int8 first, then bool, NOT NULL first within each');
SELECT is((SELECT saved_bytes_per_row FROM storagelab.alignment_padding WHERE relation = 'cw_interleaved'::regclass),
          16.00, 'interleaved: 16 bytes of padding saved per row');
SELECT is((SELECT row_bytes FROM storagelab.alignment_padding WHERE relation = 'cw_interleaved'::regclass),
          round(pg_temp.real_row_bytes('cw_interleaved'), 2), 'interleaved: row size equals pageinspect''s');
SELECT ok(pg_temp.within(estimated, measured, 10), format('interleaved: estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('cw_interleaved');

-- 2. the same with fillfactor 70
CREATE TABLE public.cw_fill (b1 bool NOT NULL, i1 int8 NOT NULL, b2 bool NOT NULL, i2 int8 NOT NULL)
  WITH (fillfactor = 70);
INSERT INTO public.cw_fill SELECT true, g, false, g FROM generate_series(1, 40000) g;
ANALYZE public.cw_fill;
SELECT ok(pg_temp.within(estimated, measured, 10), format('fillfactor 70: estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('cw_fill');
SELECT is((SELECT pages_now FROM storagelab.alignment_padding WHERE relation = 'cw_fill'::regclass),
          pg_relation_size('cw_fill') / current_setting('block_size')::int8, 'fillfactor 70: page count of the table as loaded');

-- 3. mixed varlena and nullable columns, random lengths and NULLs
SELECT setseed(0.42);
CREATE TABLE public.cw_mixed (flag bool, id8 int8 NOT NULL, note text, n4 int4,
                              created timestamptz NOT NULL, code varchar(20), s2 int2,
                              amount numeric(10,2), t2 timestamptz);
INSERT INTO public.cw_mixed
SELECT random() < 0.5, g,
       CASE WHEN random() < 0.8 THEN repeat('n', (random() * 60)::int) END,
       CASE WHEN random() < 0.75 THEN (random() * 1e6)::int END,
       now() - random() * interval '1 year',
       CASE WHEN random() < 0.5 THEN 'C' || (random() * 100000)::int END,
       (random() * 100)::int2, (random() * 10000)::numeric(10,2),
       CASE WHEN random() < 0.33 THEN now() END
  FROM generate_series(1, 60000) g;
ANALYZE public.cw_mixed;
SELECT is((SELECT suggested_order FROM storagelab.alignment_padding WHERE relation = 'cw_mixed'::regclass),
          '{id8,created,t2,n4,s2,flag,note,code,amount}'::name[],
          'mixed: alignment classes descending, NOT NULL first, variable width last');
SELECT ok(pg_temp.within(estimated, measured, 10), format('mixed (statistics): estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('cw_mixed');
SELECT ok(abs((SELECT row_bytes FROM storagelab.alignment_padding WHERE relation = 'cw_mixed'::regclass)
              - pg_temp.real_row_bytes('cw_mixed')) < pg_temp.real_row_bytes('cw_mixed') * 0.02,
          'mixed (statistics): row size within 2% of pageinspect''s');
SELECT ok(count(*) = 9, 'column_profile returns one row per column') FROM storagelab.column_profile('cw_mixed');
SELECT is((SELECT evidence FROM storagelab.alignment_padding WHERE relation = 'cw_mixed'::regclass),
          'exact', 'after column_profile the estimate is exact');
SELECT ok(abs((SELECT row_bytes FROM storagelab.alignment_padding WHERE relation = 'cw_mixed'::regclass)
              - pg_temp.real_row_bytes('cw_mixed')) < 0.5,
          'mixed (exact): row size within half a byte of pageinspect''s');
DROP TABLE public.cw_mixed_now, public.cw_mixed_after;
SELECT ok(pg_temp.within(estimated, measured, 10), format('mixed (exact): estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('cw_mixed');

-- 4. Pagila tables as loaded
SELECT ok(pg_temp.within(estimated, measured, 10), format('pagila rental: estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('public.rental');
SELECT ok(pg_temp.within(estimated, measured, 10), format('pagila customer: estimate %s within 10%% of measured %s', estimated, measured))
  FROM pg_temp.measured('public.customer');
SELECT ok(abs((SELECT row_bytes FROM storagelab.alignment_padding WHERE relation = 'public.rental'::regclass)
              - pg_temp.real_row_bytes('public.rental_now')) < 0.5, 'pagila rental: row size within half a byte of pageinspect''s');

-- 5. a well-ordered table gives no row
CREATE TABLE public.cw_ordered (i8 int8 NOT NULL, ts timestamptz NOT NULL, i4 int4, s2 int2, b bool, t text);
INSERT INTO public.cw_ordered SELECT g, now(), g, 1, true, 'abc' || g FROM generate_series(1, 10000) g;
ANALYZE public.cw_ordered;
SELECT is_empty($$SELECT 1 FROM storagelab.alignment_padding WHERE relation = 'cw_ordered'::regclass$$,
                'a well-ordered table gives no row');

-- 6. dropped columns: never in the suggested order; a rebuild stores them as NULL
CREATE TABLE public.cw_dropped (a bool NOT NULL, gone int8, b int8 NOT NULL, c bool NOT NULL);
INSERT INTO public.cw_dropped SELECT true, g, g, false FROM generate_series(1, 20000) g;
ALTER TABLE public.cw_dropped DROP COLUMN gone;
ANALYZE public.cw_dropped;
SELECT is((SELECT suggested_order FROM storagelab.alignment_padding WHERE relation = 'cw_dropped'::regclass),
          '{b,a,c}'::name[], 'dropped column left out of the suggested order');
SELECT is((SELECT current_order FROM storagelab.alignment_padding WHERE relation = 'cw_dropped'::regclass),
          '{a,b,c}'::name[], 'dropped column left out of the current order');

-- 7. never analyzed: reported as such, numbers NULL
CREATE TABLE public.cw_fresh (b bool, i int8, t text);
INSERT INTO public.cw_fresh SELECT true, g, 'x' FROM generate_series(1, 1000) g;
SELECT is((SELECT (status, advice) FROM storagelab.alignment_padding WHERE relation = 'cw_fresh'::regclass),
          ('not analyzed'::text, 'not analyzed: run ANALYZE or storagelab.column_profile()'::text), 'never analyzed: reported');
SELECT ok((SELECT saved_bytes IS NULL AND saved_bytes_per_row IS NULL
             FROM storagelab.alignment_padding WHERE relation = 'cw_fresh'::regclass),
          'never analyzed: no guessed numbers');
SELECT ok((SELECT bool_and(suggested_type IS NULL) AND count(*) = 2
             FROM storagelab.column_waste WHERE relation = 'cw_fresh'::regclass
              AND advice LIKE 'not analyzed%'),
          'never analyzed: column_waste reports its int8 and text columns as not analyzed');
ANALYZE public.cw_fresh;
SELECT is((SELECT status FROM storagelab.alignment_padding WHERE relation = 'cw_fresh'::regclass),
          'ok', 'after ANALYZE: estimated');

-- 8. the page model alone: 50,000 rows of 72 bytes
SELECT is(storagelab_internal.heap_pages(50000, 72, NULL, false), 468::int8, 'heap_pages: 107 tuples of 72 bytes (plus line pointer) per 8 kB page');

SELECT * FROM finish();
ROLLBACK;

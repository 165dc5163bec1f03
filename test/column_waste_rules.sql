-- pgTAP: column_waste's type rules (from statistics, then exact after
-- column_profile), the columns it must never touch, column_profile against
-- plain aggregates, and an ALTER COLUMN ... TYPE as the size oracle.
\set ECHO none
\i test/fixtures/pagila.sql
\set pgbench_scale 1
SELECT to_regclass('public.pgbench_accounts') IS NOT NULL AS pgbench_loaded \gset
\if :pgbench_loaded
\else
\i test/fixtures/pgbench.sql
\endif
\set ECHO all
BEGIN;
SELECT plan(60);

CREATE TABLE public.cw_parent (id int8 PRIMARY KEY);
INSERT INTO public.cw_parent SELECT g FROM generate_series(1, 100) g;
CREATE TABLE public.cw_rules (
  pk        int8 PRIMARY KEY,
  parent_id int8 NOT NULL REFERENCES public.cw_parent,
  ident     int8 GENERATED ALWAYS AS IDENTITY,
  ser       serial,
  i8_small  int8 NOT NULL,
  i8_mid    int8 NOT NULL,
  i8_half   int8 NOT NULL,
  i8_big    int8 NOT NULL,
  i4_small  int4 NOT NULL,
  n_int     numeric NOT NULL,
  n_frac    numeric(10,2) NOT NULL,
  t_uuid    text NOT NULL,
  t_int     varchar(30),
  t_bool    text,
  t_date    text,
  t_ts      text,
  t_tstz    text,
  c_pad     char(40),
  t_zero    text,
  t_mixed   text,
  c_kind    char(36));
INSERT INTO public.cw_rules (pk, parent_id, i8_small, i8_mid, i8_half, i8_big, i4_small, n_int, n_frac,
                             t_uuid, t_int, t_bool, t_date, t_ts, t_tstz, c_pad, t_zero, t_mixed, c_kind)
SELECT g, g % 100 + 1, g % 1000, g * 1000, 1073741824 + g, g::int8 * 2000000000, g % 100,
       g, g + 0.25,
       md5(g::text)::uuid::text, (g * 3)::text, CASE WHEN g % 2 = 0 THEN 'true' ELSE 'false' END,
       (date '2020-01-01' + g % 1000)::text,
       (timestamp '2020-01-01' + g * interval '1 minute')::text,
       to_char(timestamptz '2020-01-01' + g * interval '1 minute', 'YYYY-MM-DD HH24:MI:SSOF'),
       'abc' || g, lpad(g::text, 6, '0'), CASE WHEN g % 2 = 0 THEN 'x' ELSE '12' END,
       md5(g::text)::uuid::text
  FROM generate_series(1, 20000) g;
ANALYZE public.cw_parent, public.cw_rules;

CREATE FUNCTION pg_temp.suggested(col name) RETURNS text LANGUAGE sql AS $$
  SELECT suggested_type FROM storagelab.column_waste
   WHERE relation = 'public.cw_rules'::regclass AND column_name = col
$$;

-- 1. from statistics
SELECT is(pg_temp.suggested('i8_small'), 'smallint', 'statistics: int8 holding 0..999 -> smallint');
SELECT is(pg_temp.suggested('i8_mid'), 'integer', 'statistics: int8 holding up to 2e7 -> integer');
SELECT is(pg_temp.suggested('i8_half'), NULL, 'statistics: int8 above half the int4 range -> nothing (headroom)');
SELECT is(pg_temp.suggested('i8_big'), NULL, 'statistics: int8 beyond int4 -> nothing');
SELECT is(pg_temp.suggested('i4_small'), 'smallint', 'statistics: int4 holding 0..99 -> smallint');
SELECT is(pg_temp.suggested('n_int'), NULL, 'statistics: integer-only numeric -> nothing until profiled (a cast rounds fractions the sample missed)');
SELECT is(pg_temp.suggested('n_frac'), NULL, 'statistics: numeric with fractions -> nothing');
SELECT is(pg_temp.suggested('t_uuid'), 'uuid', 'statistics: text of UUIDs -> uuid');
SELECT is(pg_temp.suggested('t_int'), 'integer', 'statistics: varchar of integers -> integer');
SELECT is(pg_temp.suggested('t_bool'), 'boolean', 'statistics: text of true/false -> boolean');
SELECT is(pg_temp.suggested('t_date'), 'date', 'statistics: text of dates -> date');
SELECT is(pg_temp.suggested('t_ts'), 'timestamp without time zone', 'statistics: text of timestamps -> timestamp');
SELECT is(pg_temp.suggested('t_tstz'), 'timestamp with time zone', 'statistics: text of timestamps with offsets -> timestamptz');
SELECT is(pg_temp.suggested('c_pad'), 'character varying(40)', 'statistics: blank-padded char(40) -> varchar(40)');
SELECT is(pg_temp.suggested('c_kind'), 'uuid', 'statistics: char(36) of UUIDs -> uuid');
SELECT is(pg_temp.suggested('t_zero'), NULL, 'statistics: integers with leading zeros stay text');
SELECT is(pg_temp.suggested('t_mixed'), NULL, 'statistics: mixed text -> nothing');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_rules'::regclass
                    AND column_name IN ('pk', 'parent_id', 'ident', 'ser')$$,
                'statistics: no suggestion for primary key, foreign key, identity or serial columns');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_parent'::regclass$$,
                'statistics: no suggestion for a key referenced by a foreign key');
SELECT ok((SELECT bool_and(evidence = 'statistics') FROM storagelab.column_waste
            WHERE relation = 'public.cw_rules'::regclass), 'statistics: evidence says so');

-- 2. exact, after one pass
SELECT is((SELECT count(*) FROM storagelab.column_profile('public.cw_rules')), 21::int8,
          'column_profile: one row per column');
SELECT is(pg_temp.suggested('i8_small'), 'smallint', 'exact: int8 holding 0..999 -> smallint');
SELECT is(pg_temp.suggested('i8_mid'), 'integer', 'exact: int8 holding up to 2e7 -> integer');
SELECT is(pg_temp.suggested('i8_half'), NULL, 'exact: headroom respected');
SELECT is(pg_temp.suggested('n_int'), 'integer', 'exact: integer-only numeric -> integer');
SELECT is(pg_temp.suggested('n_frac'), NULL, 'exact: numeric with fractions -> nothing');
SELECT is(pg_temp.suggested('t_uuid'), 'uuid', 'exact: text of UUIDs -> uuid');
SELECT is(pg_temp.suggested('t_tstz'), 'timestamp with time zone', 'exact: timestamptz');
SELECT is(pg_temp.suggested('c_pad'), 'character varying(40)', 'exact: char(40) padding');
SELECT is(pg_temp.suggested('t_zero'), NULL, 'exact: leading zeros stay text');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_rules'::regclass
                    AND column_name IN ('pk', 'parent_id', 'ident', 'ser')$$,
                'exact: still no suggestion for key, identity or serial columns');
SELECT ok((SELECT bool_and(evidence = 'exact') FROM storagelab.column_waste
            WHERE relation = 'public.cw_rules'::regclass), 'exact: evidence says so');

-- 3. column_profile against plain aggregates
SELECT results_eq(
  $$SELECT row_count, null_count, min_value, max_value FROM storagelab_internal.column_profiles
     WHERE relid = 'public.cw_rules'::regclass AND attname IN ('i8_mid', 'n_frac', 't_int') ORDER BY attnum$$,
  $$SELECT * FROM (VALUES
      (20000::int8, 0::int8, (SELECT min(i8_mid) FROM public.cw_rules)::numeric, (SELECT max(i8_mid) FROM public.cw_rules)::numeric),
      (20000, 0, (SELECT min(n_frac) FROM public.cw_rules), (SELECT max(n_frac) FROM public.cw_rules)),
      (20000, (SELECT count(*) FILTER (WHERE t_int IS NULL) FROM public.cw_rules),
       (SELECT min(t_int::int8) FROM public.cw_rules)::numeric, (SELECT max(t_int::int8) FROM public.cw_rules)::numeric)) v$$,
  'column_profile: counts and bounds equal min()/max()');
SELECT is((SELECT round(avg_width::numeric, 6) FROM storagelab_internal.column_profiles
            WHERE relid = 'public.cw_rules'::regclass AND attname = 't_mixed'),
          (SELECT round(avg(pg_column_size(t_mixed)), 6) FROM public.cw_rules),
          'column_profile: average width equals avg(pg_column_size())');

-- 4. an outlier the statistics have not seen: exact data decides
CREATE TABLE public.cw_outlier (v int8 NOT NULL, pad int4 NOT NULL);
INSERT INTO public.cw_outlier SELECT g % 100, g FROM generate_series(1, 10000) g;
ANALYZE public.cw_outlier;
INSERT INTO public.cw_outlier VALUES (9000000000, 0);
SELECT is((SELECT suggested_type FROM storagelab.column_waste WHERE relation = 'public.cw_outlier'::regclass
            AND column_name = 'v'), 'smallint', 'stale statistics suggest smallint');
SELECT is((SELECT max_value FROM storagelab.column_profile('public.cw_outlier') WHERE column_name = 'v'),
          9000000000::numeric, 'column_profile sees the outlier');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_outlier'::regclass
                    AND column_name = 'v'$$, 'exact data: no suggestion');

-- 5. never for a key column anywhere (Pagila, pgbench, the fixtures)
SELECT is_empty($$
  SELECT w.relation, w.column_name
    FROM storagelab.column_waste w
    JOIN pg_attribute a ON a.attrelid = w.relation AND a.attname = w.column_name
    JOIN pg_constraint k ON k.contype IN ('p', 'f')
     AND ((k.conrelid = a.attrelid AND a.attnum = ANY (k.conkey))
          OR (k.confrelid = a.attrelid AND a.attnum = ANY (k.confkey)))$$,
  'no suggestion for any primary-key or foreign-key column in the database');

-- 6. the estimate of an ALTER COLUMN ... TYPE against the rewrite itself
-- (the table was freshly written; the rewrite writes it afresh)
SELECT saved_bytes AS uuid_estimate, pg_relation_size('public.cw_rules') AS size_before
  FROM storagelab.column_waste
 WHERE relation = 'public.cw_rules'::regclass AND column_name = 't_uuid' \gset
ALTER TABLE public.cw_rules ALTER COLUMN t_uuid TYPE uuid USING t_uuid::uuid;
SELECT ok(:size_before - pg_relation_size('public.cw_rules') > 0
          AND abs(:uuid_estimate - (:size_before - pg_relation_size('public.cw_rules')))
              <= (:size_before - pg_relation_size('public.cw_rules')) * 0.10,
          format('ALTER COLUMN t_uuid TYPE uuid: estimate %s within 10%% of measured %s',
                 :uuid_estimate, :size_before - pg_relation_size('public.cw_rules')));
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_rules'::regclass
                    AND column_name = 't_uuid'$$, 'a retyped column drops its stale profile');

-- 7. text_kind: what each kind accepts, and PostgreSQL's input functions agree
SELECT results_eq(
  $$SELECT storagelab_internal.text_kind(v) FROM unnest(ARRAY[
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a0eebc99x9c0b-4ef8-bb6d-6bb9bd380a11',
      '0', '-0', '42', '-9223372036854775808', '007', '+1', '1.0', '',
      't', 'FALSE', 'yes', 'n', 'on',
      '2024-02-29', '2024-13-01', '2024-1-01',
      '2024-02-29 13:45', '2024-02-29T13:45:59.123456', '2024-02-29 13:45:59.1234567', '2024-02-29 24:00',
      '2024-02-29 13:45:59+05:30', '2024-02-29 13:45:59Z', '2024-02-29 13:45-0800', '2024-02-29 13:45:59 UTC']) v$$,
  $$VALUES ('uuid'), ('uuid'), (NULL), ('integer'), ('integer'), ('integer'), ('integer'), (NULL), (NULL), (NULL), (NULL),
           ('boolean'), ('boolean'), ('boolean'), ('boolean'), (NULL),
           ('date'), (NULL), (NULL),
           ('timestamp'), ('timestamp'), (NULL), (NULL),
           ('timestamptz'), ('timestamptz'), ('timestamptz'), (NULL)$$,
  'text_kind classifies values');
SELECT lives_ok($$SELECT v::uuid, w::int8, x::boolean, y::date, z::timestamp, q::timestamptz
                    FROM (VALUES ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '-9223372036854775808', 'FALSE',
                                  '2024-02-29', '2024-02-29T13:45:59.123456', '2024-02-29 13:45-0800')) t(v, w, x, y, z, q)$$,
                'values text_kind accepts cast to their type');

-- 8. errors and privileges
SELECT throws_ok($$SELECT * FROM storagelab.column_profile('pg_catalog.pg_stats')$$, '42809', NULL,
                 'column_profile refuses a view');
SELECT throws_ok($$SELECT * FROM storagelab.column_profile(0)$$, '42P01', NULL,
                 'column_profile refuses a missing relation');
SELECT is_empty($$SELECT * FROM storagelab.column_profile(NULL)$$, 'column_profile(NULL) returns no rows');
CREATE TABLE public.cw_rls (v int8);
INSERT INTO public.cw_rls VALUES (1);
ALTER TABLE public.cw_rls ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE ROLE cw_reader;
GRANT pg_stat_scan_tables TO cw_reader;
GRANT SELECT ON public.cw_rls TO cw_reader;
GRANT SELECT ON storagelab_internal.column_facts TO cw_reader;
GRANT EXECUTE ON FUNCTION storagelab_internal.column_statistics() TO cw_reader;
ANALYZE public.cw_rls;
SELECT count(*) FROM storagelab.column_profile('public.cw_rls');
SET ROLE cw_reader;
SELECT is((SELECT source FROM storagelab_internal.column_facts WHERE relid = 'public.cw_rls'::regclass),
          NULL, 'under active row security neither statistics nor profiles are shown');
SELECT throws_ok($$SELECT * FROM storagelab.column_profile('public.cw_rls')$$, '42501', NULL,
                 'column_profile refuses a table whose row security is active');
SELECT throws_ok($$SELECT * FROM storagelab.column_profile('public.cw_rules')$$, '42501', NULL,
                 'column_profile needs SELECT on the table');
SELECT throws_ok($$SELECT min_value FROM storagelab_internal.column_profiles$$, '42501', NULL,
                 'profiled bounds are not readable directly, only through the views');
RESET ROLE;
GRANT SELECT ON public.cw_outlier TO cw_reader;
SET ROLE cw_reader;
SELECT is((SELECT count(*) FROM storagelab.column_profile('public.cw_outlier')), 2::int8,
          'a pg_stat_scan_tables member profiles a table it may read');
RESET ROLE;
CREATE ROLE cw_nobody;
SET ROLE cw_nobody;
SELECT throws_ok($$SELECT * FROM storagelab.column_profile('public.cw_rules')$$, '42501', NULL,
                 'column_profile is not for PUBLIC');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_rules'::regclass$$,
                'column_waste shows only tables the caller may read');
RESET ROLE;
-- pg_stats's visibility rule, column by column: a role that may not read one
-- column sees nothing of the table (its layout needs every column); with
-- SELECT on every column it sees what the owner sees.
CREATE TEMP TABLE cw_owner_view AS
  SELECT column_name, suggested_type, saved_bytes FROM storagelab.column_waste
   WHERE relation = 'public.cw_rules'::regclass;
CREATE TEMP TABLE cw_owner_padding AS
  SELECT suggested_order, saved_bytes, status FROM storagelab.alignment_padding
   WHERE relation = 'public.cw_rules'::regclass;
CREATE ROLE cw_cols;
GRANT SELECT ON cw_owner_view, cw_owner_padding TO cw_cols;
GRANT SELECT ON storagelab_internal.column_facts TO cw_cols;
GRANT EXECUTE ON FUNCTION storagelab_internal.column_statistics() TO cw_cols;
DO $$ BEGIN
  EXECUTE (SELECT format('GRANT SELECT (%s) ON public.cw_rules TO cw_cols',
                         string_agg(quote_ident(attname), ', '))
             FROM pg_attribute WHERE attrelid = 'public.cw_rules'::regclass AND attnum > 0
              AND NOT attisdropped AND attname <> 'i8_small');
END $$;
SET ROLE cw_cols;
SELECT is((SELECT array_agg(attname::text) FROM pg_stats
            WHERE schemaname = 'public' AND tablename = 'cw_rules' AND attname IN ('i8_small', 'i8_mid')),
          '{i8_mid}', 'oracle: pg_stats hides the one column the role may not read');
SELECT is_empty($$SELECT 1 FROM storagelab_internal.column_facts WHERE relid = 'public.cw_rules'::regclass$$,
                'column_facts: nothing of a table with a column the caller may not read');
SELECT is_empty($$SELECT 1 FROM storagelab.column_waste WHERE relation = 'public.cw_rules'::regclass$$,
                'column_waste: nothing of a table with a column the caller may not read');
SELECT is_empty($$SELECT 1 FROM storagelab.alignment_padding WHERE relation = 'public.cw_rules'::regclass$$,
                'alignment_padding: nothing of a table with a column the caller may not read');
RESET ROLE;
GRANT SELECT (i8_small) ON public.cw_rules TO cw_cols;
SET ROLE cw_cols;
SELECT is((SELECT array_agg(attname::text ORDER BY attname) FROM pg_stats
            WHERE schemaname = 'public' AND tablename = 'cw_rules' AND attname IN ('i8_small', 'i8_mid')),
          '{i8_mid,i8_small}', 'oracle: with SELECT on every column pg_stats shows them all');
SELECT set_eq($$SELECT column_name, suggested_type, saved_bytes FROM storagelab.column_waste
                 WHERE relation = 'public.cw_rules'::regclass$$,
              $$SELECT * FROM cw_owner_view$$,
              'column_waste: SELECT on every column shows what the owner sees');
SELECT set_eq($$SELECT suggested_order, saved_bytes, status FROM storagelab.alignment_padding
                 WHERE relation = 'public.cw_rules'::regclass$$,
              $$SELECT * FROM cw_owner_padding$$,
              'alignment_padding: SELECT on every column shows what the owner sees');
RESET ROLE;
SELECT is((SELECT extcondition[array_position(extconfig, 'storagelab_internal.column_profiles'::regclass::oid)]
             FROM pg_extension WHERE extname = 'storagelab'),
          'WHERE EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = relid AND c.relpersistence <> ''t'')',
          'column_profiles is dumped by pg_dump, without the rows of dropped or temporary tables (test/restore.sh restores them)');

SELECT * FROM finish();
ROLLBACK;

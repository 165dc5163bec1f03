-- pgTAP: table_rewrite_plan judges narrowing per table (changes that only
-- save together, with the order) and column_waste/table_rewrite_plan refuse
-- thin evidence (constants, few rows, bit flags).  Oracle: every plan is
-- carried out (CREATE TABLE ... AS in the planned order and types) and its
-- estimated saving compared with the pg_relation_size difference against
-- the same rows rebuilt as they are.
\set ECHO none
\set pgbench_scale 1
SELECT to_regclass('public.pgbench_accounts') IS NOT NULL AS pgbench_loaded \gset
\if :pgbench_loaded
\else
\i test/fixtures/pgbench.sql
\endif
\set ECHO all
BEGIN;
SELECT plan(24);

-- The table of the "smaller database is faster" article: neither age nor
-- gender saves a byte alone (the next 8-byte column takes it back); both
-- together, reordered, save a MAXALIGN step.
CREATE TABLE public.rp_users (uid bigint PRIMARY KEY, age bigint, gender bigint,
                              lastvisit timestamp);
INSERT INTO public.rp_users
SELECT g, 13 + (g * 7) % 38, g % 3, timestamp '2026-01-01' + g * interval '1 minute'
  FROM generate_series(1, 100000) g;
-- Padding between booleans and bigints, and two bigints that fit integer.
CREATE TABLE public.rp_padded (a boolean, b int8, c boolean, d int8, e boolean, f int4, g int8);
INSERT INTO public.rp_padded
SELECT g % 2 = 0, g::int8 * 3000000000, true, g * 2, g % 3 = 0, g, g FROM generate_series(1, 50000) g;
-- Bit flags (few values, with gaps), a mask never set, an enumeration
-- (0-4, no gaps) and a constant: each alone would save a MAXALIGN step;
-- only the enumeration is evidence enough.
CREATE TABLE public.rp_acl (id int8 PRIMARY KEY, created timestamptz, mask int4 NOT NULL,
                            unset int4 NOT NULL, kind int4 NOT NULL, konst int4 NOT NULL,
                            flag int2);
INSERT INTO public.rp_acl
SELECT g, timestamptz '2026-01-01' + g * interval '1 second',
       (ARRAY[0, 1, 2, 4, 8, 16, 64, 1024])[1 + g % 8], 0, g % 5, 42, 1
  FROM generate_series(1, 30000) g;
-- A mixed table: NULLs, text of several widths, an integral numeric.
CREATE TABLE public.rp_events (id int8 PRIMARY KEY, kind int8 NOT NULL, amount numeric,
                               note text, seen boolean, code int4, at timestamptz NOT NULL);
INSERT INTO public.rp_events
SELECT g, g % 40, CASE WHEN g % 4 <> 0 THEN g % 100000 END,
       CASE WHEN g % 3 <> 0 THEN repeat('x', g % 50) END, g % 2 = 0, g % 30000,
       timestamptz '2026-01-01' + g * interval '1 second'
  FROM generate_series(1, 60000) g;
-- Six rows, privs all 0: a tiny editor table.
CREATE TABLE public.rp_tiny (id int8 PRIMARY KEY, at timestamp, privs int4 NOT NULL,
                             n int4 NOT NULL, s int2);
INSERT INTO public.rp_tiny SELECT g, now(), 0, g, 1 FROM generate_series(1, 6) g;
ANALYZE public.rp_users, public.rp_padded, public.rp_acl, public.rp_events, public.rp_tiny,
        public.pgbench_accounts;

CREATE FUNCTION pg_temp.changed(rel regclass) RETURNS text[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(e->>'column_name' || ':' || (e->>'to') ORDER BY e->>'column_name'),
                  '{}')
    FROM storagelab.table_rewrite_plan p, jsonb_array_elements(p.column_changes) e
   WHERE p.relation = rel
$$;
CREATE FUNCTION pg_temp.waste(rel regclass, col name) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(suggested_type, '-') || ' / ' || advice FROM storagelab.column_waste
   WHERE relation = rel AND column_name = col
$$;

-- 1. the jointly narrowable table
SELECT is(pg_temp.changed('public.rp_users'), '{age:smallint,gender:smallint}',
          'users: age and gender narrowed together');
SELECT is((SELECT format('%s -> %s %s', current_row_bytes, planned_row_bytes, column_order)
             FROM storagelab.table_rewrite_plan WHERE relation = 'public.rp_users'::regclass),
          '56.00 -> 48.00 {uid,lastvisit,age,gender}',
          'users: 56 -> 48 bytes a row, 8-byte columns first');
SELECT is((SELECT count(*) FROM storagelab.column_waste
            WHERE relation = 'public.rp_users'::regclass AND suggested_type IS NOT NULL), 0::int8,
          'users: column_waste, judging each column alone, has no saving to show');

-- 2. thin evidence
SELECT is(pg_temp.changed('public.pgbench_accounts'), '{filler:character varying(84)}',
          'pgbench_accounts: abalance (all 0) is not narrowed, the blank-padded filler is');
SELECT is(pg_temp.waste('public.pgbench_accounts', 'abalance'),
          '- / all values equal: the data shows no range',
          'column_waste: abalance gets what is missing, no type');
SELECT is(pg_temp.changed('public.rp_acl'), '{kind:smallint}',
          'acl: the enumeration is narrowed; bit flags, an unset mask and a constant are not');
SELECT is(pg_temp.waste('public.rp_acl', 'kind'),
          'smallint / values from 0 to 4 fit smallint with headroom (at most half its range)',
          'column_waste: the enumeration (0-4, no gaps) is narrowed');
SELECT is(pg_temp.waste('public.rp_acl', 'mask'),
          '- / few values with gaps: codes or bit flags whose domain the data does not show',
          'column_waste: the bitmask says why it is not narrowed');
SELECT is(pg_temp.waste('public.rp_acl', 'unset'),
          '- / all values equal: the data shows no range', 'column_waste: the unset mask says why');
SELECT is(pg_temp.waste('public.rp_acl', 'konst'),
          '- / all values equal: the data shows no range', 'column_waste: the constant says why');
SELECT is(pg_temp.waste('public.rp_tiny', 'n'),
          '- / too few rows to judge the values (setting column_waste.min_rows)',
          'column_waste: six rows are too few');
SELECT is((SELECT count(*) FROM storagelab.table_rewrite_plan WHERE relation = 'public.rp_tiny'::regclass),
          0::int8, 'tiny: no plan');

-- 3. the gate is the settings: without them the same data is narrowed,
-- except constants (no range at all)
INSERT INTO storagelab.settings VALUES ('column_waste.min_distinct', '0'),
                                       ('column_waste.dense_below', '0'),
                                       ('column_waste.min_rows', '0');
SELECT is(pg_temp.waste('public.rp_acl', 'mask'),
          'smallint / values from 0 to 1024 fit smallint with headroom (at most half its range)',
          'without thresholds the bitmask would be narrowed (so the setting is what refuses it)');
SELECT is(pg_temp.waste('public.rp_acl', 'konst'),
          '- / all values equal: the data shows no range', 'a constant is refused whatever the settings');
SELECT is(pg_temp.changed('public.rp_tiny'), '{n:smallint}',
          'tiny without the row threshold: narrowed');
DELETE FROM storagelab.settings WHERE name LIKE 'column_waste.%';
SELECT is(pg_temp.waste('public.rp_acl', 'mask'),
          '- / few values with gaps: codes or bit flags whose domain the data does not show',
          'thresholds back: the bitmask is refused again');

-- 4. a change the saving does not need is left out
SELECT is(pg_temp.changed('public.rp_padded'), '{d:integer,g:integer}',
          'padded: b (beyond integer) stays, d and g narrowed');

-- 5. oracle: carry each plan out and measure the pages the rows fill
CREATE FUNCTION pg_temp.measured_saving(rel regclass) RETURNS int8 LANGUAGE plpgsql AS $$
DECLARE
  p storagelab.table_rewrite_plan;
  cols text;
  before int8;
  after int8;
BEGIN
  SELECT * INTO STRICT p FROM storagelab.table_rewrite_plan WHERE relation = rel;
  SELECT string_agg(CASE WHEN e IS NULL THEN format('%I', c)
                         ELSE format('%I::%s AS %I', c, e->>'to', c) END, ', ' ORDER BY o)
    INTO cols
    FROM unnest(p.column_order) WITH ORDINALITY u(c, o)
    LEFT JOIN LATERAL (SELECT x FROM jsonb_array_elements(p.column_changes) x
                        WHERE x->>'column_name' = u.c) j(e) ON true;
  EXECUTE format('CREATE TABLE pg_temp.rp_before AS SELECT * FROM %s', rel);
  EXECUTE format('CREATE TABLE pg_temp.rp_after AS SELECT %s FROM %s', cols, rel);
  -- Pages that hold rows, not pg_relation_size: from PostgreSQL 16 on a
  -- bulk load extends the file by many pages at once, and the trailing
  -- empty ones stay until a VACUUM (which cannot run in this transaction).
  SELECT count(DISTINCT (ctid::text::point)[0]) * current_setting('block_size')::int8
    INTO before FROM pg_temp.rp_before;
  SELECT count(DISTINCT (ctid::text::point)[0]) * current_setting('block_size')::int8
    INTO after FROM pg_temp.rp_after;
  DROP TABLE pg_temp.rp_before, pg_temp.rp_after;
  RETURN before - after;
END
$$;
CREATE TEMP TABLE rp_oracle AS
SELECT p.relation, p.estimated_saved_bytes AS estimated,
       pg_temp.measured_saving(p.relation) AS measured
  FROM storagelab.table_rewrite_plan p
 WHERE p.relation IN ('public.rp_users'::regclass, 'public.rp_padded'::regclass,
                      'public.rp_events'::regclass, 'public.pgbench_accounts'::regclass);
SELECT is((SELECT count(*) FROM rp_oracle), 4::int8, 'four plans carried out');
SELECT ok(abs(estimated - measured) <= 0.1 * measured,
          format('%s: estimated %s, measured %s bytes saved (within 10 %%)', relation, estimated, measured))
  FROM rp_oracle ORDER BY relation::text;
SELECT cmp_ok((SELECT measured FROM rp_oracle WHERE relation = 'public.rp_users'::regclass),
              '>', 0::int8, 'users: the rebuild is really smaller');
-- the data survives the types the plan gives (read from its column_changes,
-- not restated here): every row converts to them and back unchanged; a
-- value that does not fit counts as -1, a plan without changes as NULL
CREATE FUNCTION pg_temp.rows_surviving(rel regclass) RETURNS int8 LANGUAGE plpgsql AS $$
DECLARE
  cond text;
  n int8;
BEGIN
  SELECT string_agg(format('(%1$I::%2$s)::%3$s IS NOT DISTINCT FROM %1$I',
                           c->>'column_name', c->>'to', c->>'from'), ' AND ')
    INTO cond
    FROM storagelab.table_rewrite_plan p, jsonb_array_elements(p.column_changes) c
   WHERE p.relation = rel;
  IF cond IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format('SELECT count(*) FROM %s WHERE %s', rel, cond) INTO n;
  RETURN n;
EXCEPTION WHEN data_exception THEN
  RETURN -1;
END
$$;
SELECT is(pg_temp.rows_surviving('public.rp_users'), 100000::int8,
          'users: every row converts to the planned types and back unchanged');

SELECT * FROM finish();
ROLLBACK;

-- src/result_check.c: a C function called through a declaration other than
-- the one its library was built for (an old version's SQL objects after a
-- package upgrade, before ALTER EXTENSION UPDATE) fails with 55000 and says
-- what to do, never builds a row of the wrong types or reads an argument
-- that is not there.  scripts/library-mix-test.sh calls every function of
-- each release with the current library; this checks the errors on every
-- major, with declarations made here.
BEGIN;
SELECT plan(6);

CREATE TABLE rc_t (id int PRIMARY KEY, s text);
INSERT INTO rc_t SELECT g, 'x' FROM generate_series(1, 10) g;

-- 1.0's heap_visibility() result type: pages (bigint) first, advice later.
CREATE FUNCTION pg_temp.hv_old(relation regclass, sample_pages integer DEFAULT NULL,
    OUT pages bigint, OUT scanned_pages bigint, OUT advice text)
RETURNS record AS '$libdir/storagelab', 'storagelab_heap_visibility' LANGUAGE C;
SELECT throws_ok($$SELECT * FROM pg_temp.hv_old('rc_t')$$, '55000',
  'storagelab''s library is newer than its SQL objects',
  'heap_visibility() through a result type of other columns: 55000, no row built');

-- 1.0's column_candidates(): two arguments where the library reads five.
CREATE FUNCTION pg_temp.cand_old(oid[], int2[], OUT relid oid, OUT attnum int2)
RETURNS SETOF record AS '$libdir/storagelab', 'storagelab_column_candidates' LANGUAGE C;
SELECT throws_ok($$SELECT * FROM pg_temp.cand_old('{}', '{}')$$, '55000',
  'storagelab''s library is newer than its SQL objects',
  'column_candidates() declared with fewer arguments: 55000, no argument read past them');

-- An argument of another type (text where the library reads regclass).
CREATE FUNCTION pg_temp.seq_text(text, OUT last_value bigint, OUT is_called boolean, OUT status text)
RETURNS record AS '$libdir/storagelab', 'storagelab_int_overflow_sequence_state' LANGUAGE C;
SELECT throws_ok($$SELECT * FROM pg_temp.seq_text('rc_t')$$, '55000',
  'storagelab''s library is newer than its SQL objects',
  'int_overflow_sequence_state() declared with a text argument: 55000');

-- The detail names the function and the column, the hint says what to do.
CREATE FUNCTION pg_temp.error_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE d text; h text;
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
  RETURN d || ' | ' || h;
END $$;
SELECT matches(pg_temp.error_of($$SELECT * FROM pg_temp.hv_old('rc_t', 10)$$),
  '^heap_visibility\(\) returns 3 columns in the installed SQL objects, and the library builds 24\. .* \| Run ALTER EXTENSION storagelab UPDATE\.$',
  'the detail names the function and what differs; the hint is ALTER EXTENSION storagelab UPDATE');

-- SQL objects newer than the library (a session that loaded the library
-- before an upgrade, running on after ALTER EXTENSION UPDATE): reconnect.
UPDATE pg_extension SET extversion = '99.0' WHERE extname = 'storagelab';
SELECT throws_ok($$SELECT * FROM pg_temp.hv_old('rc_t')$$, '55000',
  'storagelab''s library is older than its SQL objects',
  'SQL objects of a later version than the library: the error says the library is older');
SELECT matches(pg_temp.error_of($$SELECT * FROM pg_temp.hv_old('rc_t')$$),
  ' \| Reconnect: this session loaded the library before the upgrade\.$',
  'and its hint says to reconnect');

SELECT * FROM finish();
ROLLBACK;

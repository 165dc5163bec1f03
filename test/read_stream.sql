-- The read stream API of src/compat.h (PostgreSQL's own from 17 on, a
-- stand-in on 15 and 16), through the test hook in src/read_stream_probe.c,
-- against pageinspect.  scripts/matrix.sh runs it on 15, 17, 18 and 19.
BEGIN;
SELECT plan(8);

CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE FUNCTION pg_temp.rs_probe(regclass, int8[] DEFAULT NULL)
	RETURNS TABLE (blkno int8, tagged_blkno int8, normal_items int4)
	AS '$libdir/storagelab', 'storagelab_read_stream_probe' LANGUAGE C;

-- About 60 blocks, with dead tuples and varying line pointer counts.
CREATE TABLE rs_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO rs_t SELECT g, repeat('x', 50 + g % 300) FROM generate_series(1, 4000) g;
DELETE FROM rs_t WHERE id % 7 = 0;
CREATE TABLE rs_empty (id int);
CREATE VIEW rs_v AS SELECT 1 AS one;

-- pageinspect's count of LP_NORMAL line pointers of one block.
CREATE FUNCTION pg_temp.normal_items(regclass, int8) RETURNS int8
	LANGUAGE sql AS $$
	SELECT count(*) FROM heap_page_items(get_raw_page($1::text, $2::int)) WHERE lp_flags = 1
$$;

SELECT cmp_ok((pg_relation_size('rs_t') / current_setting('block_size')::int)::int, '>', 40,
	'the test table has more than 40 blocks');

SELECT results_eq(
	$$SELECT blkno, normal_items::int8 FROM pg_temp.rs_probe('rs_t')$$,
	$$SELECT b, pg_temp.normal_items('rs_t', b)
	  FROM generate_series(0, pg_relation_size('rs_t') / current_setting('block_size')::int - 1) b
	  ORDER BY b$$,
	'all blocks, in order, with the line pointers pageinspect sees');

SELECT is((SELECT count(*) FROM pg_temp.rs_probe('rs_t') WHERE tagged_blkno IS NOT NULL), 0::int8,
	'a whole-relation stream carries no per-buffer data');

SELECT results_eq(
	$$SELECT blkno, tagged_blkno FROM pg_temp.rs_probe('rs_t', ARRAY[5, 1, 1, 40, 0])$$,
	$$VALUES (5::int8, 5::int8), (1, 1), (1, 1), (40, 40), (0, 0)$$,
	'listed blocks come in the order listed, repeats included, each with its per-buffer data');

SELECT results_eq(
	$$SELECT normal_items::int8 FROM pg_temp.rs_probe('rs_t', ARRAY[40, 2])$$,
	$$VALUES (pg_temp.normal_items('rs_t', 40)), (pg_temp.normal_items('rs_t', 2))$$,
	'listed blocks have the line pointers pageinspect sees');

SELECT is_empty($$SELECT * FROM pg_temp.rs_probe('rs_empty')$$,
	'an empty table gives no blocks');

SELECT throws_ok($$SELECT * FROM pg_temp.rs_probe('rs_t', ARRAY[100000])$$,
	'22023', NULL, 'a block past the end is refused with 22023');

SELECT throws_ok($$SELECT * FROM pg_temp.rs_probe('rs_v')$$,
	'42809', NULL, 'a view is refused by storagelab_open_heap_relation() with 42809');

SELECT * FROM finish();
ROLLBACK;

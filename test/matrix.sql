-- The C module loads into the server under test, whatever its major
-- (scripts/matrix.sh runs this on 15, 17, 18 and 19): the server finds it
-- the way it finds the extension's C functions ('$libdir/storagelab',
-- through load_external_function), its magic block matches the server,
-- and from PostgreSQL 18 on it reports its name and version.
BEGIN;
SELECT plan(3);

-- Validating a C function loads its library first.  The module's only
-- exported symbol, its magic block, has no PG_FUNCTION_INFO_V1 record, so a
-- loaded library ends in 42883 "could not find function information"; a
-- library that is missing (58P01) or built for another major (XX000,
-- "incompatible library") ends otherwise.
SELECT throws_ok(
	$$CREATE FUNCTION pg_temp.storagelab_probe() RETURNS void
	  AS '$libdir/storagelab', 'Pg_magic_func' LANGUAGE C$$,
	'42883', 'could not find function information for function "Pg_magic_func"',
	'storagelab''s shared library loads into this server');

SELECT current_setting('server_version_num')::int >= 180000 AS has_loaded_modules \gset
\if :has_loaded_modules
SELECT is(
	(SELECT version FROM pg_get_loaded_modules() WHERE module_name = 'storagelab'),
	(SELECT extversion FROM pg_extension WHERE extname = 'storagelab'),
	'pg_get_loaded_modules() reports storagelab with the extension''s version');
SELECT is(
	(SELECT count(*)::int FROM pg_get_loaded_modules() WHERE file_name LIKE 'storagelab%'),
	1, 'exactly one storagelab library is loaded');
\else
SELECT skip('pg_get_loaded_modules() exists from PostgreSQL 18 on', 2);
\endif

SELECT * FROM finish();
ROLLBACK;

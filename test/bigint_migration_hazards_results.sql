-- pgTAP: function hazards in what functions return and write, on a shop
-- schema whose API functions return the converted key (customers.id,
-- referenced by orders.customer_id): RETURNS TABLE, OUT parameters, a
-- composite result type, PL/pgSQL RETURN QUERY and RETURN NEXT; and whose
-- audit trigger and statistics job copy it into integer columns of tables
-- without a foreign key (outside the migration).  After ALTER COLUMN TYPE
-- bigint, a PL/pgSQL RETURN QUERY whose column is declared integer fails at
-- every call (42804); the other forms cast, and fail once the values pass
-- 2^31 (22003).  The model must find those and nothing in the functions
-- that stay correct; the generator must refuse by default and say that
-- widening cannot help; the 'accept' script, executed, is the oracle: each
-- hazard fails as the model says, each function it does not list works with
-- a key past 2^31.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_hazards_results;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_hazards_results TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_hazards_results
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
\set tmp `mktemp -d`

CREATE TABLE public.customers (id serial PRIMARY KEY, name text NOT NULL);
CREATE TABLE public.orders (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES public.customers, total numeric NOT NULL);
INSERT INTO public.customers (name) SELECT 'c' || g FROM generate_series(1, 20) g;
INSERT INTO public.orders (customer_id, total) SELECT 1 + g % 20, g FROM generate_series(1, 200) g;
CREATE TYPE public.order_ref AS (order_id int, customer_id int);

-- hazards
CREATE FUNCTION public.orders_of(c int) RETURNS TABLE (order_id int, customer int) LANGUAGE plpgsql AS
$$ BEGIN RETURN QUERY SELECT o.id, o.customer_id FROM public.orders o WHERE o.customer_id = c; END $$;
CREATE FUNCTION public.buyer_ids() RETURNS SETOF int LANGUAGE plpgsql AS
$$ BEGIN RETURN QUERY SELECT DISTINCT customer_id FROM public.orders; END $$;
CREATE FUNCTION public.top_customers(n int) RETURNS TABLE (cid int, spent numeric) LANGUAGE sql AS
$$ SELECT customer_id, sum(total) FROM public.orders GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT n $$;
CREATE FUNCTION public.customer_of(order_no int, OUT cid int, OUT nm text) LANGUAGE plpgsql AS
$$ BEGIN SELECT c.id, c.name INTO cid, nm FROM public.customers c JOIN public.orders o ON o.customer_id = c.id WHERE o.id = order_no; END $$;
CREATE FUNCTION public.refs() RETURNS SETOF public.order_ref LANGUAGE sql AS
$$ SELECT id, customer_id FROM public.orders ORDER BY id $$;
CREATE FUNCTION public.last_buyer() RETURNS SETOF int LANGUAGE plpgsql AS
$$ DECLARE r record; BEGIN FOR r IN SELECT o.customer_id FROM public.orders o ORDER BY o.id DESC LIMIT 1 LOOP RETURN NEXT r.customer_id; END LOOP; END $$;
-- correct after the migration: the table's own row type, bigint columns,
-- a key that is not converted, and an explicit cast (listed past 2^31 only)
-- writers into integer columns outside the migration (past 2^31)
CREATE TABLE public.order_audit (order_id int, customer_id int, note text);
CREATE TABLE public.customer_stats (customer_id int PRIMARY KEY, orders int);
CREATE FUNCTION public.orders_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.order_audit (order_id, customer_id, note) VALUES (NEW.id, NEW.customer_id, format('total %s', NEW.total));
  INSERT INTO public.order_audit (order_id, note) VALUES (NEW.id, 'no customer');
  UPDATE public.customer_stats SET orders = orders + 1 WHERE customer_id = NEW.customer_id;
  RETURN NEW;
END $$;
CREATE TRIGGER orders_audit AFTER INSERT ON public.orders FOR EACH ROW EXECUTE FUNCTION public.orders_audit();
CREATE FUNCTION public.rebuild_stats() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM public.customer_stats;
  INSERT INTO public.customer_stats SELECT o.customer_id, count(*) FROM public.orders o GROUP BY 1;
END $$;
CREATE FUNCTION public.orders_rows(c bigint) RETURNS SETOF public.orders LANGUAGE plpgsql AS
$$ BEGIN RETURN QUERY SELECT * FROM public.orders o WHERE o.customer_id = c; END $$;
CREATE FUNCTION public.orders_wide(c bigint) RETURNS TABLE (order_id int, customer bigint) LANGUAGE plpgsql AS
$$ BEGIN RETURN QUERY SELECT o.id, o.customer_id FROM public.orders o WHERE o.customer_id = c; END $$;
CREATE FUNCTION public.orders_cast(c bigint) RETURNS TABLE (order_id int, customer int) LANGUAGE plpgsql AS
$$ BEGIN RETURN QUERY SELECT o.id, o.customer_id::int FROM public.orders o WHERE o.customer_id = c; END $$;

-- the SQLSTATE and hint of an error, or 'no error'
CREATE FUNCTION public.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; h text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, h = PG_EXCEPTION_HINT;
  RETURN st || ': ' || h;
END $$;

-- a copy for the widen oracle (made while no one else is connected to this database)
\c :origdb
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_hazards_results_w;
CREATE DATABASE storagelab_tap_hazards_results_w TEMPLATE storagelab_tap_hazards_results STRATEGY file_copy;
\c storagelab_tap_hazards_results
SET client_min_messages = warning;
\set wdb storagelab_tap_hazards_results_w

SELECT plan(14);

SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_target, hazard_fails, sqlstate
      FROM storagelab.bigint_migration_objects('public.customers', 'id') WHERE kind = 'function_hazard'$$,
  $$VALUES ('orders_of(integer)', 'result column 2 customer (integer)', 'immediately', '42804'),
           ('buyer_ids()', 'return type integer', 'immediately', '42804'),
           ('top_customers(integer)', 'result column 1 cid (integer)', 'past 2^31', '22003'),
           ('customer_of(integer)', 'OUT parameter cid (integer)', 'past 2^31', '22003'),
           ('refs()', 'result column 2 customer_id (integer)', 'past 2^31', '22003'),
           ('last_buyer()', 'return type integer', 'past 2^31', '22003'),
           ('orders_cast(bigint)', 'result column 2 customer (integer)', 'past 2^31', '22003'),
           ('orders_audit()', 'writes column public.order_audit.customer_id (integer)', 'past 2^31', '22003'),
           ('rebuild_stats()', 'writes column public.customer_stats.customer_id (integer)', 'past 2^31', '22003')$$,
  'the model finds the integer result columns that receive the key: RETURN QUERY (at once), RETURNS TABLE, OUT, a composite type, RETURN NEXT; and the integer columns outside the migration it is written into (past 2^31); nothing in the functions that stay correct');
SELECT set_eq(
  $$SELECT objid::regprocedure::text, hazard_caller FROM storagelab.bigint_migration_objects('public.customers', 'id') WHERE kind = 'widened_function'$$,
  $$VALUES ('orders_of(integer)', 'result column 2'), ('buyer_ids()', 'return type'), ('top_customers(integer)', 'result column 1'),
           ('customer_of(integer)', 'OUT parameter cid'), ('last_buyer()', 'return type')$$,
  'widened_function rows for the result columns and return types it can widen; not the composite type, the casting RETURN QUERY, the writes');
SELECT matches(public.error_of($$SELECT storagelab.bigint_migration_script('public.customers', 'id')$$),
               '^2BP01: Generate the script with function_hazards => ''widen'' to re-create .*buyer_ids\(\).*orders_of\(integer\).*function_hazards => ''accept''',
               'refused by default; the hint names widen (which now declares the result columns bigint) and accept');
SELECT is(public.error_of($$SELECT storagelab.bigint_migration_script('public.customers', 'id', 'online', function_hazards => 'widen')$$),
          'no error', 'widen writes a script (online mode) for RETURN QUERY columns');

-- the widen oracle, in the copy: past 2^31, what is widened works, what is left as is fails
SELECT storagelab.bigint_migration_script('public.customers', 'id', function_hazards => 'widen') \g (format=unaligned tuples_only=on) :tmp/widen.sql
\set left_as_is `grep -c -e '^--   function .* <- .*: fails past 2^31; left as is$' :tmp/widen.sql`
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :wdb -f :tmp/widen.sql > :tmp/widen.out 2>&1; echo $?`
SELECT is(:'rc' || ' ' || :'left_as_is', '0 4', 'widen: the script runs; the header says "left as is" for the four it cannot widen');
\set res `psql -X -q -At -d :wdb -c "DROP TRIGGER orders_audit ON public.orders" -c "INSERT INTO public.customers (id, name) VALUES (3000000000, 'big')" -c "INSERT INTO public.orders (id, customer_id, total) VALUES (1000, 3000000000, 1e9)" -c "SELECT (SELECT max(customer) FROM public.orders_of(5)) || ',' || (SELECT max(b) FROM public.buyer_ids() b) || ',' || (SELECT cid FROM public.top_customers(1)) || ',' || (SELECT cid FROM public.customer_of(1000)) || ',' || (SELECT b FROM public.last_buyer() b)" 2>&1 | tr '\n' ' '`
SELECT is(:'res'::text, '5,3000000000,3000000000,3000000000,3000000000 ',
          'widen: RETURN QUERY works again, and past 2^31 the widened functions return the key (RETURNS SETOF, SQL RETURNS TABLE, OUT, RETURN NEXT)');
\set res `psql -X -q -At -d :wdb -c "SELECT * FROM public.refs()" -c "SELECT * FROM public.orders_cast(3000000000)" 2>&1 | grep -o 'ERROR: .*' | tr '\n' ' '`
SELECT is(:'res'::text, 'ERROR:  integer out of range ERROR:  integer out of range ',
          'widen: what it left as is (a composite type, a casting RETURN QUERY) fails past 2^31, as the header says');

-- the oracle: the accept script, executed
SELECT storagelab.bigint_migration_script('public.customers', 'id', function_hazards => 'accept') \g (format=unaligned tuples_only=on) :tmp/accept.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/accept.sql > :tmp/accept.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'the accept script runs to COMMIT');
SELECT is(ARRAY[public.error_of('SELECT * FROM public.orders_of(5)'), public.error_of('SELECT * FROM public.buyer_ids()')],
          ARRAY['42804: ', '42804: '],
          'the RETURN QUERY hazards fail at every call, with small keys (42804), as the model said');
INSERT INTO public.customers (id, name) VALUES (3000000000, 'big');
SELECT is(public.error_of($$INSERT INTO public.orders (id, customer_id, total) VALUES (1000, 3000000000, 1e9)$$), '22003: ',
          'the audit trigger fails once a key passes 2^31 (22003): order_audit.customer_id is integer');
DROP TRIGGER orders_audit ON public.orders;
INSERT INTO public.orders (id, customer_id, total) VALUES (1000, 3000000000, 1e9);
SELECT is(public.error_of('SELECT public.rebuild_stats()'), '22003: ',
          'so does the statistics job: customer_stats.customer_id is integer');
SELECT is(ARRAY[public.error_of('SELECT * FROM public.top_customers(1)'), public.error_of('SELECT * FROM public.customer_of(1000)'),
                public.error_of('SELECT * FROM public.refs()'), public.error_of('SELECT * FROM public.last_buyer()'),
                public.error_of('SELECT * FROM public.orders_cast(3000000000)')],
          ARRAY['22003: ', '22003: ', '22003: ', '22003: ', '22003: '],
          'the past-2^31 hazards fail once a key passes 2^31 (22003), as the model said');
SELECT is(ARRAY[(SELECT customer_id FROM public.orders_rows(3000000000)), (SELECT customer FROM public.orders_wide(3000000000))],
          ARRAY[3000000000, 3000000000]::bigint[],
          'the functions the model does not list return the key past 2^31');
SELECT is((SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'public.orders'::regclass AND attname = 'customer_id'),
          'bigint', 'orders.customer_id is bigint');

SELECT * FROM finish();
\set rm_tmp `rm -rf :tmp`
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_hazards_results;
DROP DATABASE storagelab_tap_hazards_results_w;

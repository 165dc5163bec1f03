-- pgTAP: bigint_migration_plan() on tables that storagelab.int_overflow
-- rates critical and warning (their sequences set close to 2^31): one
-- critical group, a warning group of two columns whose components share a
-- table, and a warning group with a blocker (a BRIN index with an int4-only
-- operator class).  Checks the groups, their order, their scripts in both
-- modes, and runs the scripts.
\set QUIET 1
\set ON_ERROR_STOP 1
\set origdb :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS storagelab_tap_bigint_plan;
-- a copy of the database this file was given (pgTAP, storagelab and the
-- fixtures it loads, Pagila or pgbench, are there: not installed again)
CREATE DATABASE storagelab_tap_bigint_plan TEMPLATE :"origdb" STRATEGY file_copy;
\c storagelab_tap_bigint_plan
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS storagelab;
-- critical: 88 % of the int range used
CREATE TABLE public.crit_parent (id serial PRIMARY KEY);
CREATE TABLE public.crit_child (id bigserial PRIMARY KEY, parent_id int REFERENCES public.crit_parent);
SELECT setval('public.crit_parent_id_seq', 1900000000);
INSERT INTO public.crit_parent DEFAULT VALUES;
INSERT INTO public.crit_child (parent_id) SELECT id FROM public.crit_parent;
-- warning (56 % and 51 %): warn_b.a_id references warn_a, so warn_a.id and
-- warn_b.id share the table warn_b and are converted by one script
CREATE TABLE public.warn_a (id serial PRIMARY KEY);
CREATE TABLE public.warn_b (id serial PRIMARY KEY, a_id int REFERENCES public.warn_a);
SELECT setval('public.warn_a_id_seq', 1200000000), setval('public.warn_b_id_seq', 1100000000);
INSERT INTO public.warn_a DEFAULT VALUES;
INSERT INTO public.warn_b (a_id) SELECT id FROM public.warn_a;
-- warning, blocked: the BRIN operator class accepts only int4
CREATE TABLE public.blk (id serial PRIMARY KEY);
CREATE INDEX blk_brin ON public.blk USING brin (id int4_minmax_multi_ops);
SELECT setval('public.blk_id_seq', 1200000000);
INSERT INTO public.blk DEFAULT VALUES;
ANALYZE;
\set tmp `mktemp -d`
CREATE TABLE plan AS SELECT * FROM storagelab.bigint_migration_plan();
CREATE TABLE plan_online AS SELECT * FROM storagelab.bigint_migration_plan('online');

SELECT plan(11);
SELECT results_eq($$SELECT step, severity, columns, relations FROM plan ORDER BY step$$,
                  $$VALUES (1, 'critical', ARRAY['public.crit_parent.id'], ARRAY['public.crit_child'::regclass, 'public.crit_parent']),
                           (2, 'warning', ARRAY['public.blk.id'], ARRAY['public.blk'::regclass]),
                           (3, 'warning', ARRAY['public.warn_a.id', 'public.warn_b.id'], ARRAY['public.warn_a'::regclass, 'public.warn_b'])$$,
                  'three groups: the critical one first, then the warnings; the columns whose components share a table in one group');
SELECT ok((SELECT script IS NULL AND blockers LIKE '0A000: cannot generate a correct INT to BIGINT migration: 1 blocker(s)%int4\_minmax\_multi\_ops%'
             FROM plan WHERE step = 2),
          'the blocked group has no script and names its blocker');
SELECT ok((SELECT bool_and(script IS NOT NULL AND blockers IS NULL) FROM plan WHERE step <> 2),
          'the other groups have a script and no blockers');
SELECT ok((SELECT strpos(script, 'ALTER TABLE public.warn_a') > 0 AND strpos(script, 'ALTER TABLE public.warn_b') > 0
                  AND strpos(script, 'crit_') = 0 FROM plan WHERE step = 3),
          'the group''s one script converts both of its tables, and nothing of another group');
SELECT ok(NOT EXISTS (SELECT 1 FROM plan p, plan q WHERE p.step < q.step AND p.severity = 'warning' AND q.severity = 'critical'),
          'no warning group before a critical one');
SELECT results_eq($$SELECT step, severity, columns, relations, script IS NULL, coalesce(strpos(script, E'\\if :ph_swap') > 0, false) FROM plan_online ORDER BY step$$,
                  $$SELECT step, severity, columns, relations, script IS NULL, script IS NOT NULL FROM plan ORDER BY step$$,
                  'in online mode the plan has the same groups, with an online script (with its swap phase) for each unblocked one');
SELECT ok((SELECT blockers LIKE '0A000: %' FROM plan_online WHERE step = 2), 'in online mode too, the blocked group is refused');
-- Run every script of the plan, in order.
SELECT string_agg(script, E'\n' ORDER BY step) FROM plan WHERE script IS NOT NULL \g (format=unaligned tuples_only=on) :tmp/plan.sql
\set rc `psql -X -q -v ON_ERROR_STOP=1 -d :DBNAME -f :tmp/plan.sql > :tmp/plan.out 2>&1; echo $?`
SELECT is(:'rc'::text, '0', 'the plan''s scripts run to COMMIT one after the other');
SELECT is(ARRAY(SELECT format('%s.%I %s', attrelid::regclass, attname, format_type(atttypid, NULL))
                  FROM pg_attribute
                 WHERE attrelid IN ('public.crit_parent'::regclass, 'public.crit_child'::regclass, 'public.warn_a'::regclass,
                                    'public.warn_b'::regclass, 'public.blk'::regclass)
                   AND attnum > 0 AND NOT attisdropped ORDER BY 1),
          ARRAY['blk.id integer', 'crit_child.id bigint', 'crit_child.parent_id bigint',
                'crit_parent.id bigint', 'warn_a.id bigint', 'warn_b.a_id bigint', 'warn_b.id bigint'],
          'every column of the planned groups is bigint afterwards; the blocked one is untouched');
-- (the rating column is risk in 1.0, severity later)
SELECT is((SELECT count(*) FROM storagelab.int_overflow o
            WHERE relation::text NOT LIKE 'blk%' AND coalesce(to_jsonb(o) ->> 'severity', to_jsonb(o) ->> 'risk') IN ('warning', 'critical')),
          0::bigint, 'int_overflow rates none of the converted columns any more');
SELECT is((SELECT count(*) FROM storagelab.bigint_migration_plan()), 1::bigint, 'a new plan has only the blocked group left');

SELECT * FROM finish();
\c :origdb
SET client_min_messages = warning;
DROP DATABASE storagelab_tap_bigint_plan;
\set rc `rm -rf :tmp`

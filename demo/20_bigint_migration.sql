-- INT -> BIGINT: the dependency model and one generated script.
\echo '-- SELECT kind, identity, lock, handling FROM storagelab.bigint_migration_objects(''pgbench_accounts'', ''aid'');'
SELECT kind, identity, lock, handling
  FROM storagelab.bigint_migration_objects('pgbench_accounts', 'aid')
 ORDER BY depth, kind, identity;
SELECT to_regclass('public.film') IS NOT NULL AS have_pagila \gset
\if :have_pagila
\echo '-- SELECT kind, identity, depth, handling FROM storagelab.bigint_migration_objects(''film'', ''film_id'');'
SELECT kind, identity, depth, handling
  FROM storagelab.bigint_migration_objects('film', 'film_id')
 ORDER BY depth, kind, identity;
\echo '-- SELECT storagelab.bigint_migration_script(''film'', ''film_id'');   (run it with psql -v ON_ERROR_STOP=1 -f)'
SELECT storagelab.bigint_migration_script('film', 'film_id') \g (format=unaligned tuples_only=on)
\else
\echo '-- SELECT storagelab.bigint_migration_script(''pgbench_branches'', ''bid'');   (run it with psql -v ON_ERROR_STOP=1 -f)'
SELECT storagelab.bigint_migration_script('pgbench_branches', 'bid') \g (format=unaligned tuples_only=on)
\endif
-- The online plan for a live table: its header (phases, what each locks) and the backfill phase.
\echo '-- SELECT storagelab.bigint_migration_script(''pgbench_accounts'', ''aid'', ''online'');   (header and the backfill phase)'
SELECT string_agg(line, E'\n' ORDER BY n) FILTER (WHERE n <= 20 OR in_backfill)
  FROM (SELECT line, n,
               bool_or(starts_with(line, '\if :ph_backfill')) OVER (ORDER BY n) AND NOT bool_or(starts_with(line, '\if :ph_prepare')) OVER (ORDER BY n) AS in_backfill
          FROM regexp_split_to_table(storagelab.bigint_migration_script('pgbench_accounts', 'aid', 'online'), E'\n') WITH ORDINALITY AS l(line, n)) s
\g (format=unaligned tuples_only=on)

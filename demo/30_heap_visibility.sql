-- heap_visibility (issue 6): hint-bit, freeze and visibility-map state,
-- read from the pages without changing them.
\pset expanded auto

\echo '-- The VM-only overview of every table (no heap page is read):'
\echo '-- SELECT relation, pages, all_visible_pct, all_frozen_pct, inserts_since_vacuum, relfrozenxid_age, advice FROM storagelab.visibility ORDER BY pages DESC LIMIT 10;'
SELECT relation, pages, all_visible_pct, all_frozen_pct, inserts_since_vacuum,
       relfrozenxid_age, advice
  FROM storagelab.visibility ORDER BY pages DESC, relation::text LIMIT 10;

-- A fresh bulk load, as a DBA would do it: never read, never vacuumed.
CREATE TABLE public.demo_bulk_load WITH (autovacuum_enabled = off) AS
  SELECT a.aid, a.bid, a.abalance, a.filler FROM public.pgbench_accounts a;
CHECKPOINT;

\echo '-- A fresh bulk load carries hint-bit debt: the first read will dirty (and write) every page.'
\echo '-- SELECT pages, all_visible_pages, tuples, xmin_unhinted, hint_debt_tuples, hint_debt_pages, oldest_unfrozen_xid_age, advice FROM storagelab.heap_visibility('public.demo_bulk_load');'
SELECT pages, all_visible_pages, tuples, xmin_unhinted, hint_debt_tuples, hint_debt_pages,
       oldest_unfrozen_xid_age, advice
  FROM storagelab.heap_visibility('public.demo_bulk_load');

\echo '-- The same from a 200-page sample, with 95% confidence intervals:'
\echo '-- SELECT pages, scanned_pages, hint_debt_pages, ci95->'hint_debt_pages' AS hint_debt_pages_ci95, tuples, ci95->'tuples' AS tuples_ci95 FROM storagelab.heap_visibility('public.demo_bulk_load', 200);'
SELECT pages, scanned_pages, hint_debt_pages, ci95 -> 'hint_debt_pages' AS hint_debt_pages_ci95,
       tuples, ci95 -> 'tuples' AS tuples_ci95
  FROM storagelab.heap_visibility('public.demo_bulk_load', 200);

\echo '-- After VACUUM: no debt, all-visible; the freeze debt remains for a later aggressive VACUUM.'
VACUUM public.demo_bulk_load;
SELECT pages, all_visible_pages, all_frozen_pages, xmin_committed, hint_debt_pages, advice
  FROM storagelab.heap_visibility('public.demo_bulk_load');
DROP TABLE public.demo_bulk_load;

\echo '-- A Pagila partitioned table (summed over its leaves) and its TOAST relations:'
\echo '-- SELECT relations, pages, tuples, all_visible_pages, hint_debt_pages, advice FROM storagelab.heap_visibility('public.payment');'
SELECT relations, pages, tuples, all_visible_pages, hint_debt_pages, advice
  FROM storagelab.heap_visibility('public.payment');
\echo '-- SELECT relations, pages, tuples, advice FROM storagelab.heap_visibility_toast('public.film');'
SELECT relations, pages, tuples, advice FROM storagelab.heap_visibility_toast('public.film');

-- heap_visibility: hint-bit, freeze and visibility-map state,
-- read from the pages without changing them.
\pset expanded auto
\set ECHO queries

-- The VM-only overview (no heap page is read), largest tables first.
SELECT relation, severity, advice, all_visible_pct, all_frozen_pct, relfrozenxid_age,
       table_pretty
  FROM storagelab.visibility v
 WHERE (SELECT relnamespace FROM pg_class WHERE oid = v.relation) = 'public'::regnamespace
 ORDER BY pages DESC, relation::text LIMIT 8;

-- A fresh bulk load, never read and never vacuumed, written out by a checkpoint.
CREATE TABLE public.demo_bulk_load WITH (autovacuum_enabled = off) AS
  SELECT a.aid, a.bid, a.abalance, a.filler FROM public.pgbench_accounts a;
CHECKPOINT;

-- Its hint-bit debt: the first read will dirty (and write again) every page.
SELECT pages, all_visible_pages, tuples, xmin_unhinted, hint_debt_tuples, hint_debt_pages,
       oldest_unfrozen_xid_age, advice
  FROM storagelab.heap_visibility('public.demo_bulk_load');

-- The same from a 200-page sample, with 95% confidence intervals.
SELECT pages, scanned_pages, hint_debt_pages, ci95 -> 'hint_debt_pages' AS hint_debt_pages_ci95,
       tuples, ci95 -> 'tuples' AS tuples_ci95
  FROM storagelab.heap_visibility('public.demo_bulk_load', 200);

-- After VACUUM: no debt, all-visible; freezing is left to a later aggressive VACUUM.
VACUUM public.demo_bulk_load;
SELECT pages, all_visible_pages, all_frozen_pages, xmin_committed, hint_debt_pages, advice
  FROM storagelab.heap_visibility('public.demo_bulk_load');
DROP TABLE public.demo_bulk_load;

-- Pagila's partitioned payment table (summed over its leaves), and film's TOAST relation.
SELECT relations, pages, tuples, all_visible_pages, hint_debt_pages, advice
  FROM storagelab.heap_visibility('public.payment');
SELECT relations, pages, tuples, advice
  FROM storagelab.heap_visibility_toast('public.film');

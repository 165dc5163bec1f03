-- storagelab install script, part 99 (runs last): no query of storagelab is
-- JIT-compiled.
--
-- storagelab's queries read catalogs and call set-returning functions whose
-- row counts the planner can only guess; its plans' costs pass
-- jit_above_cost (and, for the findings, jit_inline_above_cost and
-- jit_optimize_above_cost) on ordinary databases, and compiling them costs
-- far more than running them (findings with PostgreSQL's default jit = on:
-- 380 functions compiled in 15 s, the query itself 0.1 s).  So every SQL and
-- PL/pgSQL function of the extension runs with jit = off: a function's SET
-- clause holds for every statement planned while it runs, the functions it
-- calls included.  No function loses inlining by it: each already pins
-- search_path, and a SET clause of any kind keeps a SQL function from
-- being inlined.  Procedures are left alone: one with a SET clause cannot
-- COMMIT, and theirs do (batched backfills, whose large UPDATEs may gain
-- from JIT).  A public view's own top-level query is planned with the
-- caller's settings: a costly part of one is read through such a function
-- (findings' layout rows), or the planner gets row counts that keep the plan
-- below jit_above_cost (doc/design/jit.md).
--
-- Applied here, to whatever the parts before created, so that a function
-- added later gets it too and re-running the parts (an upgrade) re-applies
-- it after CREATE OR REPLACE has reset a function's settings.
DO $jit$ -- runs again as it is
DECLARE
  f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid
      FROM pg_catalog.pg_proc p
      JOIN pg_catalog.pg_language l ON l.oid = p.prolang
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
       AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
      JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'storagelab'
     WHERE l.lanname IN ('sql', 'plpgsql') AND p.prokind = 'f'
     ORDER BY p.oid
  LOOP
    EXECUTE pg_catalog.format('ALTER FUNCTION %s SET jit = off', f);
  END LOOP;
END
$jit$;

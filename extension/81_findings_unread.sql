-- storagelab install script, part 81: what storagelab.report() tells a role
-- about the objects it could not read.  The views skip a table or sequence
-- the caller may not read (int_overflow says status 'unreadable'); without
-- this line a role that may read nothing would be told "nothing found".

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The tables, partitioned tables, materialized views and sequences of the
-- user's schemas that the caller may not read (SELECT; for a sequence
-- SELECT or USAGE, or pg_read_all_stats), as report() lines (sequences
-- first: an overflow hides there): none when it may read them all.
CREATE FUNCTION storagelab_internal.report_unreadable()
RETURNS SETOF text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH u AS (
    SELECT c.oid::regclass AS rel, c.relkind = 'S' AS is_seq
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'm', 'S') AND c.relpersistence <> 't'
       AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'storagelab', 'storagelab_internal')
       AND n.nspname NOT LIKE 'pg\_toast%'
       AND CASE WHEN c.relkind = 'S'
                THEN NOT (has_sequence_privilege(c.oid, 'SELECT') OR has_sequence_privilege(c.oid, 'USAGE')
                          OR pg_has_role('pg_read_all_stats', 'USAGE'))
                ELSE NOT has_any_column_privilege(c.oid, 'SELECT') END
  ), s AS (
    SELECT count(*) FILTER (WHERE NOT is_seq) AS tables, count(*) FILTER (WHERE is_seq) AS sequences,
           string_agg(rel::text, ', ' ORDER BY is_seq DESC, rel::text) AS names
      FROM u
  )
  SELECT x FROM s, LATERAL (VALUES
      (left(format('not read by role %s: %s table(s), %s sequence(s); their findings are missing',
                   current_user, s.tables, s.sequences), 100)),
      (left('    ' || s.names, 100)),
      ('    run report() as a role that may read them (SELECT, or pg_read_all_data)')) v(x)
   WHERE s.tables + s.sequences > 0
$$;
COMMENT ON FUNCTION storagelab_internal.report_unreadable() IS
  'report() lines naming the tables and sequences the caller may not read (their findings are missing); no rows when it may read all';
GRANT EXECUTE ON FUNCTION storagelab_internal.report_unreadable() TO PUBLIC;

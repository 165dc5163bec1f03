-- storagelab install script, part 68: the disk pre-flight of the migration
-- scripts.  A rewrite writes a second copy of its tables (heap, TOAST and
-- every index) beside the first, and an online one a change log too; when
-- a tablespace's filesystem cannot hold that, the copy fails hours in with
-- the disk full for every other writer.  So the online scripts (INT ->
-- BIGINT, part 67, and layout, part 65) check before phase start and again
-- before phase index, and the blocking ones before their rewrite: the bytes
-- each tablespace will receive, against the free bytes of its filesystem
-- (storagelab_internal.tablespace_space, C: statvfs()) less a margin
-- (preflight.min_free_pct of the filesystem's size); 53100 (disk_full)
-- with the numbers when it does not fit.  Estimates, by design on the side
-- of more: the old heap's size (dead rows included), widened columns times
-- the estimated rows, the old indexes' sizes, and the change log from the
-- tables' write rate.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('preflight.min_free_pct', '10',
   'disk pre-flight: refuse a rewrite that would leave less than this % of a tablespace''s disk free');

-- Free and total bytes of a tablespace's filesystem (src/tablespace_space.c).
-- EXECUTE for every role: the function checks pg_tablespace_size()'s rule
-- itself (pg_read_all_stats, or CREATE on the tablespace, implicit on the
-- database's default one), which the scripts' runners (table owners) meet
-- wherever a rewrite creates tables.
CREATE FUNCTION storagelab_internal.tablespace_space(spc oid, OUT free_bytes bigint, OUT total_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_tablespace_space'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION storagelab_internal.tablespace_space(oid) IS
  'free bytes (for an unprivileged process) and total bytes of the filesystem holding a tablespace, read with statvfs(); pg_tablespace_size()''s privileges (pg_read_all_stats or CREATE on the tablespace), 42501 otherwise; 42704 for an unknown OID';
GRANT EXECUTE ON FUNCTION storagelab_internal.tablespace_space(oid) TO PUBLIC;

-- The tables of a rewrite as the pre-flight reads them, written into the
-- script when it is generated: each table of the engine's input (parts 60-64:
-- relation and columns, with "type" where it changes) with the bytes a row
-- grows by, the sum of what each column of a fixed width gains (a column
-- that narrows, or changes to or from a variable width, counts 0).
CREATE FUNCTION storagelab_internal.disk_preflight_input(tables jsonb)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('relation', t->>'relation', 'widen',
           coalesce((SELECT sum(greatest(n.typlen - o.typlen, 0))
                       FROM jsonb_array_elements(t->'columns') c
                       JOIN pg_attribute a ON a.attrelid = to_regclass(t->>'relation') AND a.attname = c->>'column_name'
                                           AND a.attnum > 0 AND NOT a.attisdropped
                       JOIN pg_type o ON o.oid = a.atttypid
                       JOIN pg_type n ON n.oid = to_regtype(c->>'type')
                      WHERE c ? 'type' AND o.typlen > 0 AND n.typlen > 0), 0)) ORDER BY u.n), '[]')
    FROM jsonb_array_elements($1) WITH ORDINALITY u(t, n)
$$;
COMMENT ON FUNCTION storagelab_internal.disk_preflight_input(jsonb) IS
  'the tables of a rewrite as the disk pre-flight reads them: relation and the bytes a row grows by (fixed-width columns widened)';

-- The statement of a script that runs the pre-flight: what is 'start' or
-- 'index' (an online script's phase) or 'blocking'; tables the engine's input.
CREATE FUNCTION storagelab_internal.disk_preflight_sql(what text, tables jsonb)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format(E'-- Disk pre-flight: %s must fit, with preflight.min_free_pct kept free (53100 otherwise).\n'
                'SELECT storagelab_internal.disk_preflight(%L, %L::jsonb) AS disk_preflight \\gset sl_\n',
                CASE $1 WHEN 'start' THEN 'a second copy of the tables, their indexes and the change log'
                        WHEN 'index' THEN 'the indexes of the new tables and the change log'
                        ELSE 'a second copy of the tables and their indexes' END,
                $1, storagelab_internal.disk_preflight_input($2))
$$;
COMMENT ON FUNCTION storagelab_internal.disk_preflight_sql(text, jsonb) IS
  'the psql statement of a migration script that runs storagelab_internal.disk_preflight() for its tables (what: start, index or blocking)';

-- What a rewrite will write, per tablespace, as rows (spc, part, bytes):
-- part heap (a leaf's heap and TOAST, plus widen bytes per estimated row),
-- index (each index with storage), log (an online change log: rows written
-- per second since the statistics were reset, over the time the work takes
-- at bigint_migration.rewrite_mb_per_second, 64 bytes plus 8 a key column
-- each, or twice the average row for a table without a key).  what:
-- 'start' counts the members whose new table does not exist yet (so a
-- start that has run asks for nothing), 'index' the indexes not yet built
-- of members whose new table exists, 'blocking' everything (ALTER TABLE
-- rewrites every index too).
CREATE FUNCTION storagelab_internal.disk_preflight_needs(what text, tables jsonb)
RETURNS TABLE (spc oid, part text, bytes numeric)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  dflt    oid := (SELECT dattablespace FROM pg_database WHERE datname = current_database());
  logspc  oid := coalesce((SELECT oid FROM pg_tablespace WHERE spcname = nullif(current_setting('default_tablespace'), '')), dflt);
  rate    numeric := 1048576 * greatest(storagelab_internal.setting('bigint_migration.rewrite_mb_per_second')::numeric, 1);
  since   numeric := greatest(extract(epoch FROM now() - coalesce((SELECT stats_reset FROM pg_stat_database WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())),
                                                                    pg_postmaster_start_time())), 60);
BEGIN
  RETURN QUERY
  WITH m AS MATERIALIZED (
    SELECT m.relid, m.leaf, (t->>'widen')::numeric AS widen, c.reltablespace, c.reltoastrelid, c.reltuples,
           to_regclass(format('%I.%I', n.nspname, storagelab_internal.rewrite_name('new', m.relid))) IS NOT NULL AS copied
      FROM jsonb_array_elements(tables) t
     CROSS JOIN LATERAL storagelab_internal.rewrite_members(ARRAY[to_regclass(t->>'relation')::oid]) m
      JOIN pg_class c ON c.oid = m.relid JOIN pg_namespace n ON n.oid = c.relnamespace),
  w AS (
    SELECT m.relid, 'heap'::text AS part, coalesce(nullif(m.reltablespace, 0), dflt) AS spc,
           pg_relation_size(m.relid)::numeric + CASE WHEN m.reltoastrelid <> 0 THEN pg_total_relation_size(m.reltoastrelid) ELSE 0 END
             + m.widen * greatest(m.reltuples, 0)::numeric AS bytes
      FROM m WHERE m.leaf AND (what = 'blocking' OR (what = 'start' AND NOT m.copied))
    UNION ALL
    SELECT m.relid, 'index', coalesce(nullif(x.reltablespace, 0), dflt), pg_relation_size(i.indexrelid)::numeric
      FROM m JOIN pg_index i ON i.indrelid = m.relid JOIN pg_class x ON x.oid = i.indexrelid AND x.relkind = 'i'
      JOIN pg_namespace xn ON xn.oid = x.relnamespace
     WHERE what = 'blocking'
        OR (i.indisvalid AND ((what = 'start' AND NOT m.copied)
                              OR (what = 'index' AND m.copied
                                  AND to_regclass(format('%I.%I', xn.nspname, storagelab_internal.rewrite_index_name(i.indexrelid))) IS NULL))))
  SELECT w.spc, w.part, round(sum(w.bytes)) FROM w GROUP BY w.spc, w.part
  UNION ALL
  -- the change log: the tables' writes per second over the time this phase's work takes
  SELECT logspc, 'log', round(sum(r.per_s * (SELECT sum(w.bytes) FROM w) / rate
                            * CASE WHEN k.key IS NULL THEN 64 + 2 * pg_relation_size(m.relid) / greatest(m.reltuples, 1)::numeric
                                   ELSE 64 + 8 * cardinality(k.key) END))
    FROM m
    CROSS JOIN LATERAL (SELECT (coalesce(s.n_tup_ins, 0) + coalesce(s.n_tup_upd, 0) + coalesce(s.n_tup_del, 0)) / since AS per_s
                          FROM (SELECT 1) one LEFT JOIN pg_stat_all_tables s ON s.relid = m.relid) r
    CROSS JOIN LATERAL (SELECT storagelab_internal.rewrite_online_key(m.relid) AS key) k
   WHERE m.leaf AND what <> 'blocking' AND EXISTS (SELECT 1 FROM w)
  HAVING count(*) > 0;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.disk_preflight_needs(text, jsonb) IS
  'the bytes a rewrite will write, per tablespace and part (heap copy, indexes, change log estimate) for the disk pre-flight (what: start, index or blocking)';

-- The disk pre-flight: for each tablespace a rewrite writes to, refuses
-- (53100, disk_full) when what it needs is more than its filesystem's free
-- bytes less preflight.min_free_pct of its size; the detail gives the
-- numbers of each such tablespace.  A tablespace whose free space the role
-- may not read (tablespace_space: 42501) is skipped with a notice.  Returns
-- true (the scripts \gset it).
CREATE FUNCTION storagelab_internal.disk_preflight(what text, tables jsonb)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  pct    numeric := storagelab_internal.setting('preflight.min_free_pct')::numeric;
  r      record;
  sp     record;
  margin numeric;
  short  text[] := '{}';
  spcs   text[] := '{}';
BEGIN
  IF what IS NULL OR what NOT IN ('start', 'index', 'blocking') OR jsonb_typeof(tables) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'disk_preflight() needs what (start, index or blocking) and the tables of the rewrite'
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Run the script that storagelab generated: it passes them.';
  END IF;
  IF pct IS NULL OR pct < 0 OR pct >= 100 THEN
    RAISE EXCEPTION 'setting preflight.min_free_pct must be a percentage from 0 to 99'
      USING ERRCODE = 'invalid_parameter_value', DETAIL = format('It is %s.', storagelab_internal.setting('preflight.min_free_pct')),
            HINT = 'Change it in storagelab.settings (10 is the default).';
  END IF;
  FOR r IN SELECT n.spc, t.spcname, sum(n.bytes) AS need,
                  string_agg(format('%s %s', CASE n.part WHEN 'heap' THEN 'heap copy' WHEN 'index' THEN 'indexes' ELSE 'change log about' END,
                                    pg_size_pretty(n.bytes)), ', ' ORDER BY array_position(ARRAY['heap', 'index', 'log'], n.part)) AS parts
             FROM storagelab_internal.disk_preflight_needs(what, tables) n JOIN pg_tablespace t ON t.oid = n.spc
            GROUP BY n.spc, t.spcname ORDER BY t.spcname LOOP
    BEGIN
      SELECT * INTO sp FROM storagelab_internal.tablespace_space(r.spc);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'disk pre-flight: the free space of tablespace % is not checked: %', quote_ident(r.spcname), SQLERRM;
      CONTINUE;
    END;
    margin := sp.total_bytes * pct / 100;
    spcs := spcs || quote_ident(r.spcname);
    IF r.need > sp.free_bytes - margin THEN
      short := short || format('tablespace %s needs %s (%s); %s free of %s, of which %s (preflight.min_free_pct = %s%%) is kept free',
                               quote_ident(r.spcname), pg_size_pretty(r.need), r.parts, pg_size_pretty(sp.free_bytes::numeric),
                               pg_size_pretty(sp.total_bytes::numeric), pg_size_pretty(round(margin)), pct);
    END IF;
  END LOOP;
  IF cardinality(short) > 0 THEN
    RAISE EXCEPTION 'not enough free disk space for %', CASE what WHEN 'blocking' THEN 'the rewrite of this script' ELSE 'phase ' || what END
      USING ERRCODE = 'disk_full', DETAIL = array_to_string(short, '; ') || '.',
            HINT = 'Free space there, or move the tables or indexes to a tablespace with room (ALTER TABLE ... SET TABLESPACE), '
                   || 'or lower preflight.min_free_pct in storagelab.settings; then run it again. Nothing was changed.';
  END IF;
  RETURN true;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.disk_preflight(text, jsonb) IS
  'the disk pre-flight of a migration script (what: online phase start or index, or blocking): 53100 with the numbers when a tablespace''s filesystem cannot hold what the rewrite writes there and keep preflight.min_free_pct of its size free';

-- storagelab install script, part 40: how varlena values are stored in
-- TOAST: toast_profile() over the census storagelab_internal.toast_census()
-- (C, src/toast_profile.c), the bytea_storage view and
-- storage_migration_script().

INSERT INTO storagelab_internal.setting_defaults VALUES
  ('toast.view_sample_rows', '1000',
   'rows storagelab.bytea_storage profiles per column (toast_profile''s sample_rows)');

-- The C census.  Sizes and compression come from varlena headers and TOAST
-- pointers; content types from a prefix of at most 1,024 bytes per value.
CREATE FUNCTION storagelab_internal.toast_census(
    relation regclass, column_name name, sample_rows integer DEFAULT NULL,
    OUT rows_scanned bigint, OUT pages_scanned bigint, OUT pages_total bigint,
    OUT sampled boolean,
    OUT null_values bigint, OUT inline_uncompressed bigint, OUT inline_short bigint,
    OUT inline_compressed bigint, OUT external_uncompressed bigint,
    OUT external_compressed bigint, OUT pglz_values bigint, OUT lz4_values bigint,
    OUT raw_bytes bigint, OUT stored_bytes bigint,
    OUT compressed_raw_bytes bigint, OUT compressed_stored_bytes bigint,
    OUT ratio_le_25 bigint, OUT ratio_le_50 bigint, OUT ratio_le_75 bigint,
    OUT ratio_gt_75 bigint,
    OUT large_values bigint, OUT large_compressed bigint, OUT large_incompressible bigint,
    OUT sniffed_values bigint, OUT unsniffed_values bigint,
    OUT incompressible_values bigint, OUT content_types jsonb,
    OUT prefix_entropy double precision,
    OUT toast_values_fetched bigint, OUT toast_buffers_accessed bigint,
    OUT lz4_available boolean)
RETURNS record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'storagelab_toast_census';
COMMENT ON FUNCTION storagelab_internal.toast_census(regclass, name, integer) IS
  'raw census of how a varlena column''s values are stored (read from heap pages and varlena headers); toast_profile() adds the advice';
-- It checks in C that the caller has the privileges of pg_stat_scan_tables
-- and may SELECT the table (42501 with a hint naming what is missing).
GRANT EXECUTE ON FUNCTION storagelab_internal.toast_census(regclass, name, integer) TO PUBLIC;

-- toast_profile: the census, catalog facts and advice.  The advice and its
-- expected effect are at most 100 characters; the figures they rest on are
-- the columns (large_values, large_incompressible, pglz_values, ...).
CREATE FUNCTION storagelab.toast_profile(
    relation regclass, column_name name, sample_rows integer DEFAULT NULL)
RETURNS TABLE (
    advice text, expected_effect text,
    storage text, compression text, effective_compression text,
    evidence text, rows_scanned bigint, pages_scanned bigint, pages_total bigint,
    large_values bigint, large_compressed bigint, large_incompressible bigint,
    raw_bytes bigint, stored_bytes bigint,
    compressed_raw_bytes bigint, compressed_stored_bytes bigint,
    compression_ratio numeric, compression_ratio_histogram jsonb,
    null_values bigint, inline_uncompressed bigint, inline_short bigint,
    inline_compressed bigint, external_uncompressed bigint, external_compressed bigint,
    pglz_values bigint, lz4_values bigint,
    sniffed_values bigint, unsniffed_values bigint, incompressible_values bigint,
    content_types jsonb, prefix_entropy numeric,
    toast_values_fetched bigint, toast_buffers_accessed bigint,
    toast_relation regclass, toast_table_bytes bigint, toast_index_bytes bigint)
LANGUAGE plpgsql VOLATILE
ROWS 1  -- one row per call: the planner's guess of 1000 made bytea_storage's plan JIT-costly
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
  e_detail text; e_hint text;
BEGIN
  -- plpgsql rather than SQL: the plan of this query is cached per session.
  RETURN QUERY
  WITH cat AS (
    SELECT CASE a.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                             WHEN 'm' THEN 'main' WHEN 'p' THEN 'plain' END AS storage,
           CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END AS compression,
           c.reltoastrelid,
           -- ALTER TABLE refuses system catalogs (pg_largeobject, say)
           c.relnamespace = 'pg_catalog'::regnamespace AS is_catalog
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE a.attrelid = $1 AND a.attname = $2 AND NOT a.attisdropped
  ), p AS (
    SELECT t.*, cat.*,
           coalesce(cat.compression, current_setting('default_toast_compression')) AS eff_compression
      FROM storagelab_internal.toast_census($1, $2, $3) t LEFT JOIN cat ON true
  )
  SELECT a.advice, a.expected_effect,
         p.storage, p.compression, p.eff_compression,
         CASE WHEN p.sampled THEN 'sampled' ELSE 'exact' END,
         p.rows_scanned, p.pages_scanned, p.pages_total,
         p.large_values, p.large_compressed, p.large_incompressible,
         p.raw_bytes, p.stored_bytes,
         p.compressed_raw_bytes, p.compressed_stored_bytes,
         round(p.compressed_raw_bytes::numeric / nullif(p.compressed_stored_bytes, 0), 2),
         jsonb_build_object('<=0.25', p.ratio_le_25, '0.25-0.50', p.ratio_le_50,
                            '0.50-0.75', p.ratio_le_75, '>0.75', p.ratio_gt_75),
         p.null_values, p.inline_uncompressed, p.inline_short,
         p.inline_compressed, p.external_uncompressed, p.external_compressed,
         p.pglz_values, p.lz4_values,
         p.sniffed_values, p.unsniffed_values, p.incompressible_values,
         p.content_types, round(p.prefix_entropy::numeric, 2),
         p.toast_values_fetched, p.toast_buffers_accessed,
         nullif(p.reltoastrelid, 0)::regclass,
         CASE WHEN p.reltoastrelid <> 0 THEN pg_relation_size(p.reltoastrelid) END,
         CASE WHEN p.reltoastrelid <> 0 THEN pg_indexes_size(p.reltoastrelid) END
    FROM p,
    LATERAL (
      -- one ladder: each advice with its expected effect; advice to keep a
      -- setting has none
      SELECT x.ae[1] AS advice, coalesce(x.ae[2], 'none') AS expected_effect FROM (SELECT CASE
        WHEN p.is_catalog THEN
          ARRAY['keep: a system catalog, whose storage and compression cannot be changed']
        WHEN p.large_values = 0 THEN
          ARRAY['keep: no value reaches the ~2 kB TOAST threshold']
        WHEN p.storage IN ('extended', 'main')
             AND p.large_incompressible >= 0.8 * p.large_values THEN
          ARRAY['SET STORAGE EXTERNAL: most large values are compressed already (large_incompressible)',
                'writes skip compressing; substr() reads only its chunks; existing values change when rewritten']
        WHEN p.storage = 'external'
             AND p.large_incompressible <= 0.2 * p.large_values THEN
          ARRAY['SET STORAGE EXTENDED: the large values look compressible but are stored uncompressed',
                'new values are compressed when that pays; substr() on them decompresses from the start']
        WHEN p.storage IN ('extended', 'main') AND p.eff_compression = 'pglz'
             AND p.lz4_available AND p.pglz_values > 0
             AND p.large_compressed >= 0.2 * p.large_values THEN
          ARRAY['SET COMPRESSION lz4: lz4 compresses and decompresses several times faster than pglz',
                'faster writes and reads of compressed values, similar size; existing values keep pglz']
        -- the reasons to keep a setting, the state the advice above leads to
        WHEN p.storage = 'external'
             AND p.large_incompressible >= 0.8 * p.large_values THEN
          ARRAY['keep: most large values are compressed already, and EXTERNAL stores them as they are']
        WHEN p.storage IN ('extended', 'main')
             AND p.large_incompressible <= 0.2 * p.large_values THEN
          ARRAY['keep: the large values are compressible, and the column compresses new ones']
        ELSE
          ARRAY['keep: the large values mix compressed and compressible content']
        END AS ae) x
    ) a;
EXCEPTION WHEN OTHERS THEN   -- raised again from here: the CONTEXT does not show the query
  GET STACKED DIAGNOSTICS e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
  PERFORM storagelab_internal.reraise(SQLSTATE, SQLERRM, e_detail, e_hint);
END
$fn$;
COMMENT ON FUNCTION storagelab.toast_profile(regclass, name, integer) IS
  'how the values of one varlena column are stored (NULL, inline, compressed, out of line, method), sizes, content types by magic bytes, prefix entropy, and storage advice; exact census when sample_rows is NULL; needs pg_stat_scan_tables and SELECT on the table';
-- Executable by everyone: toast_census() checks pg_stat_scan_tables and
-- SELECT on the table, and names what is missing.
GRANT EXECUTE ON FUNCTION storagelab.toast_profile(regclass, name, integer) TO PUBLIC;

-- toast_lock_nowait: ACCESS SHARE on a table, its TOAST table and TOAST
-- index without waiting (bytea_storage skips what it cannot lock).
CREATE FUNCTION storagelab_internal.toast_lock_nowait(relation regclass) RETURNS text
LANGUAGE C STRICT VOLATILE
AS 'MODULE_PATHNAME', 'storagelab_toast_lock_nowait';
COMMENT ON FUNCTION storagelab_internal.toast_lock_nowait(regclass) IS
  'takes ACCESS SHARE on a table, its TOAST table and TOAST index without waiting: ok (held to the end of the transaction), locked (another session holds a conflicting lock; nothing kept) or unavailable (dropped)';
-- Checks pg_stat_scan_tables and SELECT in C, as toast_census() does.
GRANT EXECUTE ON FUNCTION storagelab_internal.toast_lock_nowait(regclass) TO PUBLIC;

-- bytea_storage: every bytea column the caller may read, with catalog facts
-- and a sampled profile.  Cost bound per column: toast_profile(..., N) with
-- N = setting toast.view_sample_rows reads heap pages until N rows are
-- counted (N pages at most when no page is empty) and fetches at most N
-- value prefixes (one TOAST chunk each); the TOAST table is never scanned.
-- A table that another session holds a conflicting lock on (ACCESS
-- EXCLUSIVE) is not waited for: toast_lock_nowait() fails, status says
-- 'locked', and neither the profile nor the sizes are read (OFFSET 0 keeps
-- each lateral subquery a separate plan node, so the WHERE on l.status is a
-- one-time filter that skips the call instead of filtering its result).
CREATE VIEW storagelab.bytea_storage AS
  SELECT c.oid::regclass AS relation,
         a.attname AS column_name,
         p.advice,
         CASE a.attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                           WHEN 'm' THEN 'main' WHEN 'p' THEN 'plain' END AS storage,
         coalesce(CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END,
                  current_setting('default_toast_compression')) AS effective_compression,
         CASE WHEN l.status = 'ok'
              THEN coalesce(p.toast_table_bytes, 0) + coalesce(p.toast_index_bytes, 0) END AS toast_bytes,
         CASE WHEN l.status = 'ok'
              THEN pg_size_pretty(coalesce(p.toast_table_bytes, 0) + coalesce(p.toast_index_bytes, 0)) END AS toast_pretty,
         CASE WHEN l.status = 'ok' THEN pg_relation_size(c.oid) END AS table_bytes,
         CASE WHEN l.status = 'ok' THEN pg_size_pretty(pg_relation_size(c.oid)) END AS table_pretty,
         p.evidence,
         p.rows_scanned AS sample_rows,
         p.large_values,
         p.large_incompressible,
         p.pglz_values,
         p.lz4_values,
         p.compression_ratio,
         p.prefix_entropy,
         l.status,
         CASE a.attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END AS compression,
         c.reltuples::bigint AS estimated_rows,
         nullif(c.reltoastrelid, 0)::regclass AS toast_relation,
         p.content_types
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
   CROSS JOIN LATERAL (SELECT storagelab_internal.toast_lock_nowait(c.oid) AS status OFFSET 0) l
    LEFT JOIN LATERAL (
          SELECT * FROM storagelab.toast_profile(
                   c.oid, a.attname, storagelab_internal.setting('toast.view_sample_rows')::integer)
           WHERE l.status = 'ok'
          OFFSET 0) p ON true
   -- bytea, and domains over it (over those too); an array, so that it
   -- filters the scan of pg_attribute itself and no join order can call
   -- the laterals above for another column
   WHERE a.atttypid = ANY (ARRAY(
           WITH RECURSIVE bt(oid) AS (
             SELECT 'bytea'::regtype::oid
             UNION
             SELECT ty.oid FROM pg_type ty JOIN bt ON ty.typbasetype = bt.oid WHERE ty.typtype = 'd'
           ) SELECT bt.oid FROM bt))
     AND c.relkind IN ('r', 'm')
     AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'heap')
     -- an unlogged table has no data on a standby
     AND NOT (c.relpersistence = 'u' AND pg_is_in_recovery())
     AND (c.relpersistence <> 't' OR c.relnamespace = pg_my_temp_schema())
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
     AND has_table_privilege(c.oid, 'SELECT')
     -- as pg_stats: no profile of rows a policy hides from the caller
     AND NOT (c.relrowsecurity AND row_security_active(c.oid));
COMMENT ON VIEW storagelab.bytea_storage IS
  'every bytea column the caller may SELECT from: advice, sizes and the headline figures of a sampled toast_profile() (at most toast.view_sample_rows rows and value prefixes per column; a table locked by another session has status locked, not waited for; unlogged tables are left out on a standby); needs pg_stat_scan_tables';
COMMENT ON COLUMN storagelab.bytea_storage.relation IS 'the table or materialized view (partitions are listed one by one)';
COMMENT ON COLUMN storagelab.bytea_storage.column_name IS 'the bytea column (or column of a domain over bytea)';
COMMENT ON COLUMN storagelab.bytea_storage.advice IS 'SET STORAGE EXTERNAL / EXTENDED, SET COMPRESSION lz4, or keep, with the reason (figures in the other columns)';
COMMENT ON COLUMN storagelab.bytea_storage.storage IS 'storage strategy: extended, external, main or plain';
COMMENT ON COLUMN storagelab.bytea_storage.effective_compression IS 'method new values get: compression, else default_toast_compression';
COMMENT ON COLUMN storagelab.bytea_storage.toast_bytes IS 'size of the TOAST table and its index in bytes (all columns of the table; NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.toast_pretty IS 'toast_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.table_bytes IS 'size of the table''s main fork in bytes (NULL when status is locked)';
COMMENT ON COLUMN storagelab.bytea_storage.table_pretty IS 'table_bytes, pg_size_pretty';
COMMENT ON COLUMN storagelab.bytea_storage.evidence IS 'sampled (part of the table''s pages read) or exact (all of them)';
COMMENT ON COLUMN storagelab.bytea_storage.sample_rows IS 'rows profiled';
COMMENT ON COLUMN storagelab.bytea_storage.large_values IS 'profiled values of at least ~2 kB (TOAST_TUPLE_THRESHOLD) or stored compressed or out of line, the ones storage settings affect';
COMMENT ON COLUMN storagelab.bytea_storage.large_incompressible IS 'large values whose content is already compressed (magic bytes) or has a high-entropy prefix';
COMMENT ON COLUMN storagelab.bytea_storage.pglz_values IS 'profiled values compressed with pglz';
COMMENT ON COLUMN storagelab.bytea_storage.lz4_values IS 'profiled values compressed with lz4';
COMMENT ON COLUMN storagelab.bytea_storage.compression_ratio IS 'raw / stored bytes of the compressed profiled values';
COMMENT ON COLUMN storagelab.bytea_storage.prefix_entropy IS 'mean Shannon entropy of value prefixes, bits per byte (8 = random)';
COMMENT ON COLUMN storagelab.bytea_storage.status IS 'ok (profiled), locked (another session holds a conflicting lock such as ACCESS EXCLUSIVE: skipped, not waited for; profile and sizes NULL) or unavailable (dropped meanwhile)';
COMMENT ON COLUMN storagelab.bytea_storage.compression IS 'compression method set on the column, NULL when default_toast_compression applies';
COMMENT ON COLUMN storagelab.bytea_storage.estimated_rows IS 'pg_class.reltuples (-1: never analyzed)';
COMMENT ON COLUMN storagelab.bytea_storage.toast_relation IS 'the TOAST table, NULL if none';
COMMENT ON COLUMN storagelab.bytea_storage.content_types IS 'counts per content type detected from magic bytes of the first 1,024 bytes';
-- Everyone may query it; toast_lock_nowait() refuses (42501, with a hint)
-- a caller without the privileges of pg_stat_scan_tables.
GRANT SELECT ON storagelab.bytea_storage TO PUBLIC;

-- storage_script_column: the column a storage migration script is for,
-- checked (an ordinary or partitioned table, not another session's
-- temporary one; a live column of a type the rewrite handles, or of a
-- domain over one; a generated column only when stored and its expression
-- reads other columns), with the SET clause of its rewrite (set_list; the
-- column's names quoted) and its type (typ, for the header).
CREATE FUNCTION storagelab_internal.storage_script_column(
    relation regclass, column_name name, rewrite_existing boolean,
    OUT relkind "char", OUT attstorage "char", OUT attcompression "char",
    OUT typ text, OUT set_list text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  att          pg_attribute;
  base_typ     oid;
  rewrite_expr text;
  col          text := quote_ident(column_name);
BEGIN
  SELECT c.relkind INTO relkind FROM pg_class c WHERE c.oid = relation;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'relation with OID % does not exist', relation::oid
      USING ERRCODE = 'undefined_table',
            HINT = 'Pass an existing table as a regclass, for example ''public.files''::regclass.';
  END IF;
  IF relkind NOT IN ('r', 'p') THEN
    RAISE EXCEPTION '"%" is not a table', relation
      USING ERRCODE = 'wrong_object_type',
            DETAIL = 'storage_migration_script() writes ALTER TABLE and UPDATE statements, which apply to tables and partitioned tables only.',
            HINT = 'For a materialized view, run ALTER MATERIALIZED VIEW ... ALTER COLUMN ... SET STORAGE, then REFRESH MATERIALIZED VIEW.';
  END IF;
  PERFORM storagelab_internal.refuse_other_temp(relation, 'generate a script for');
  SELECT * INTO att FROM pg_attribute a
   WHERE a.attrelid = relation AND a.attname = column_name AND a.attnum > 0 AND NOT a.attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of relation "%" does not exist', column_name, relation
      USING ERRCODE = 'undefined_column',
            HINT = 'Pass the name of one of the table''s columns, as stored (case-sensitive).';
  END IF;
  attstorage := att.attstorage;
  attcompression := att.attcompression;
  typ := format_type(att.atttypid, NULL);
  -- A domain is handled as the type it is built on (domains over domains
  -- too): the rewrite's value is of that type and is assigned back to the
  -- domain column, which checks the domain's constraints.
  WITH RECURSIVE d(oid, base) AS (
    SELECT ty.oid, ty.typbasetype FROM pg_type ty WHERE ty.oid = att.atttypid
    UNION ALL
    SELECT ty.oid, ty.typbasetype FROM pg_type ty JOIN d ON ty.oid = d.base
  )
  SELECT d.oid INTO base_typ FROM d WHERE d.base = 0;
  rewrite_expr := CASE base_typ
    WHEN 'bytea'::regtype   THEN format('%s || ''''::bytea', col)
    WHEN 'text'::regtype    THEN format('%s || ''''::text', col)
    WHEN 'varchar'::regtype THEN format('%s || ''''::text', col)
    WHEN 'jsonb'::regtype   THEN format('%s::text::jsonb', col)
    WHEN 'json'::regtype    THEN format('%s::text::json', col)   -- json keeps its text as it is
    END;
  IF rewrite_expr IS NULL THEN
    RAISE EXCEPTION 'column "%" of relation "%" has type %, which storage_migration_script() does not handle', column_name, relation, typ
      USING ERRCODE = 'datatype_mismatch',
            DETAIL = 'Supported types are bytea, text, character varying, json and jsonb, and domains over them.',
            HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand for other types.';
  END IF;
  set_list := format('%s = %s', col, rewrite_expr);
  IF att.attgenerated <> '' THEN
    -- A generated column cannot be assigned: assigning the columns its
    -- expression reads to themselves makes PostgreSQL compute it anew (a new
    -- value, stored as the new setting says).
    SELECT string_agg(format('%1$I = %1$I', r.attname), ', ' ORDER BY r.attnum) INTO set_list
      FROM pg_attrdef ad
      JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
      JOIN pg_attribute r ON r.attrelid = dep.refobjid AND r.attnum = dep.refobjsubid
     WHERE ad.adrelid = relation AND ad.adnum = att.attnum
       AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = relation
       AND dep.refobjsubid > 0 AND dep.refobjsubid <> att.attnum AND NOT r.attisdropped
       AND r.attidentity <> 'a';  -- GENERATED ALWAYS AS IDENTITY can only be set to DEFAULT
    IF att.attgenerated <> 's' OR (rewrite_existing AND set_list IS NULL) THEN
      RAISE EXCEPTION 'column "%" of relation "%" is a generated column whose values storage_migration_script() cannot rewrite', column_name, relation
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'Only a stored generated column whose expression reads other columns (not identity columns GENERATED ALWAYS) is rewritten: the script assigns those columns to themselves.',
              HINT = 'Write ALTER TABLE ... ALTER COLUMN ... SET STORAGE by hand.';
    END IF;
  END IF;

  -- The DO blocks of the script are dollar-quoted; names must not end them early.
  IF relation::text ~ '\$(step|rewrite)\$' OR col ~ '\$(step|rewrite)\$' THEN
    RAISE EXCEPTION 'relation or column name contains a dollar-quote tag of the generated script'
      USING ERRCODE = 'invalid_name',
            HINT = 'Write the ALTER TABLE statements by hand for this object.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.storage_script_column(regclass, name, boolean) IS
  'the column storage_migration_script() writes a script for, checked: its table''s relkind, its storage, compression and type, and the SET clause that rewrites its values';

-- storage_script_target: the storage argument of storage_migration_script()
-- as a target strategy and a compression method (NULL: unchanged), checked.
CREATE FUNCTION storagelab_internal.storage_script_target(storage text, OUT target text, OUT method text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  words text[] := regexp_split_to_array(lower(btrim(storage)), '\s+');
BEGIN
  IF array_length(words, 1) = 1 AND words[1] IN ('pglz', 'lz4') THEN
    words := ARRAY['extended', words[1]];
  END IF;
  target := words[1];
  method := words[2];
  IF target NOT IN ('external', 'extended', 'main') OR array_length(words, 1) > 2
     OR (method IS NOT NULL AND method NOT IN ('pglz', 'lz4'))
     OR (target = 'external' AND method IS NOT NULL) THEN
    RAISE EXCEPTION 'invalid storage "%"', storage
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'storage is one of external, extended or main, optionally followed by a compression method (pglz or lz4) for extended and main; lz4 alone means extended lz4.',
            HINT = 'PLAIN is not offered: it makes rows with large values fail to insert.';
  END IF;
  IF method = 'lz4' AND NOT (SELECT 'lz4' = ANY (enumvals) FROM pg_settings
                              WHERE name = 'default_toast_compression') THEN
    RAISE EXCEPTION 'this server was built without lz4 support'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Use pglz, or a server built with --with-lz4.';
  END IF;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.storage_script_target(text) IS
  'storage_migration_script()''s storage argument as its target strategy (external, extended, main) and compression method (pglz, lz4; NULL: unchanged), checked';

-- storage_script_rewrite: the DO block of a storage migration script that
-- rewrites the values of one table whose stored form differs from the new
-- setting (rewrite_cond), 1,000 pages per transaction, skipping locked rows,
-- each batch after the throttle (part 29), then its VACUUM; with -v
-- dry_run=1 one UPDATE of those values instead (in the run's one
-- transaction, rolled back at its end).
CREATE FUNCTION storagelab_internal.storage_script_rewrite(r regclass, set_list text, rewrite_cond text,
                                                           retries int)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
  SELECT format(E'\\if :{?dry_run}\nUPDATE ONLY %s SET %s WHERE %s;\n\\else\n', r, set_list, rewrite_cond)
      || format(
      E'DO $rewrite$\nDECLARE\n'
      '  batch_pages constant bigint := 1000;\n'
      '  last_page bigint := pg_catalog.pg_relation_size(%1$L::regclass) / current_setting(''block_size'')::bigint;\n'
      '  first_page bigint := 0;\n'
      '  n bigint;\n'
      '  skipped bigint;\n'
      '  tries int := 0;\n'
      '  total bigint := 0;\n'
      '  left_locked bigint := 0;\n'
      'BEGIN\n'
      '  WHILE first_page <= last_page LOOP\n'
      '    CALL storagelab_internal.throttle_wait(%2$L, NULL, NULL);   -- waits while a standby lags (throttle.*)\n',
      r::text, 'the rewrite of ' || r::text)
      -- rows that other sessions hold locked are skipped (SKIP LOCKED), never waited for: the
      -- batch then waits for no client, so it cannot be in a wait cycle with one; the range is
      -- done again (up to 20 times, 0.1 s apart) while it skipped rows, then they are counted
      || storagelab_internal.retry_loop(format(
           E'        WITH todo AS (SELECT ctid FROM ONLY %1$s\n'
           '                       WHERE ctid >= pg_catalog.format(''(%%s,0)'', first_page)::tid\n'
           '                         AND ctid < pg_catalog.format(''(%%s,0)'', first_page + batch_pages)::tid AND %3$s),\n'
           '             got AS (SELECT ctid FROM ONLY %1$s\n'
           '                      WHERE ctid >= pg_catalog.format(''(%%s,0)'', first_page)::tid\n'
           '                        AND ctid < pg_catalog.format(''(%%s,0)'', first_page + batch_pages)::tid AND %3$s\n'
           '                      FOR UPDATE SKIP LOCKED),\n'
           '             upd AS (UPDATE ONLY %1$s SET %2$s\n'
           '                      WHERE ctid >= pg_catalog.format(''(%%s,0)'', first_page)::tid\n'
           '                        AND ctid < pg_catalog.format(''(%%s,0)'', first_page + batch_pages)::tid\n'
           '                        AND ctid IN (SELECT ctid FROM got) RETURNING 1)\n'
           '        SELECT (SELECT count(*) FROM upd), (SELECT count(*) FROM todo) - (SELECT count(*) FROM got) INTO n, skipped;\n',
           r, set_list, rewrite_cond), retries,
           'Other sessions keep rows of the table locked: run the script again; rewritten values are skipped.')
      || format(
      E'    COMMIT;\n'
      '    total := total + n;\n'
      '    tries := tries + 1;\n'
      '    IF skipped > 0 AND tries < 20 THEN\n'
      '      PERFORM pg_catalog.pg_sleep(0.1);\n'
      '      CONTINUE;\n'
      '    END IF;\n'
      '    left_locked := left_locked + greatest(skipped, 0);\n'
      '    tries := 0;\n'
      '    first_page := first_page + batch_pages;\n'
      '    RAISE NOTICE ''%%: pages < %% done, %% values rewritten'', %1$L, first_page, total;\n'
      '  END LOOP;\n'
      '  IF left_locked > 0 THEN\n'
      '    RAISE WARNING ''%%: %% rows were locked by other sessions each time and were left as they are'', %1$L, left_locked\n'
      '      USING HINT = ''Run this script again: values already rewritten are skipped.'';\n'
      '  END IF;\n'
      'END\n$rewrite$;\n',
      r::text)
      || format(E'\n-- Then: VACUUM %s (SHARE UPDATE EXCLUSIVE; does not block reads or writes)\n'
                '-- marks the old row versions and their TOAST chunks reusable; the files shrink\n'
                '-- only with VACUUM FULL or pg_repack (ACCESS EXCLUSIVE / brief locks).\n'
                'VACUUM (ANALYZE) %s;\n', translate(r::text, E'\n\r', '  '), r)
      || E'\\endif\n'
$fn$;
COMMENT ON FUNCTION storagelab_internal.storage_script_rewrite(regclass, text, text, int) IS
  'the batched, resumable rewrite of one table''s values (a DO block committing every 1,000 pages, locked rows skipped and retried) and its VACUUM, for storage_migration_script()';

-- storage_script_header: the head of a storage migration script
-- (storagelab_internal.script_header: what it changes, how to run it), its
-- session settings (search_path saved, pinned, set back at the end), and
-- with -v dry_run=1 the BEGIN of the one transaction the run is then; the
-- column's facts as storage_script_column() returns them.
CREATE FUNCTION storagelab_internal.storage_script_header(
    relation regclass, column_name name, relkind "char", typ text, attstorage "char", attcompression "char",
    target text, method text, rewrite_existing boolean)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
  -- Names are interpolated into comment lines too: there, line breaks in a
  -- (quoted) name become spaces, so that no name can end a comment.
  SELECT storagelab_internal.script_header('storage migration script', ARRAY[
           format(E'generated %s by storagelab.storage_migration_script()\n'
                  'table:   %s (%s)\n'
                  'column:  %s %s, now STORAGE %s, COMPRESSION %s\n'
                  'target:  STORAGE %s%s; rewrite existing values: %s',
                  to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                  translate(relation::text, E'\n\r', '  '), CASE relkind WHEN 'p' THEN 'partitioned table' ELSE 'table' END,
                  translate(quote_ident(column_name), E'\n\r', '  '), typ,
                  upper(CASE attstorage WHEN 'x' THEN 'extended' WHEN 'e' THEN 'external'
                                        WHEN 'm' THEN 'main' ELSE 'plain' END),
                  coalesce(CASE attcompression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' END,
                           'default (' || current_setting('default_toast_compression') || ')'),
                  upper(target), coalesce(', COMPRESSION ' || method, ''),
                  CASE WHEN rewrite_existing THEN 'yes' ELSE 'no' END),
           E'Run with psql outside a transaction block (each step commits):\n'
           '  psql -v ON_ERROR_STOP=1 -f this_script.sql\n'
           '-v dry_run=1: every step in one transaction, then ROLLBACK (the rewrite as one\n'
           'UPDATE per table, without VACUUM): try it on a copy first.',
           E'ALTER TABLE ... SET STORAGE and SET COMPRESSION change the catalog only.\n'
           'Values already stored keep their form: SET STORAGE does not touch them, nor does\n'
           'UPDATE ... SET c = c (it reuses the same TOAST pointer and carries inline\n'
           'compressed values as they are), nor VACUUM FULL, nor CLUSTER.  Only new or\n'
           'rebuilt values (c = c || ''''), or the rewrite step below, follow the new setting.\n'
           'Plain ALTER TABLE recurses and takes ACCESS EXCLUSIVE on every partition at once;\n'
           'this script alters one table at a time with ALTER TABLE ONLY.'],
           storagelab_internal.script_settings(
             ARRAY['SET row_security = off;   -- a policy hiding rows from this role is an error, never a partial rewrite'], false))
      || E'\\if :{?dry_run}\nBEGIN;\n\\endif\n'
$fn$;
COMMENT ON FUNCTION storagelab_internal.storage_script_header(regclass, name, "char", text, "char", "char", text, text, boolean) IS
  'the head of a storage_migration_script() script (storagelab_internal.script_header): the table, the column with its storage and compression now and as targeted, how to run the script, its settings';

-- storage_migration_script: SET STORAGE (and SET COMPRESSION) per table of
-- an inheritance/partition tree, with lock_timeout and retries, and an
-- optional batched rewrite of the values whose stored form would change.
CREATE FUNCTION storagelab.storage_migration_script(
    relation regclass, column_name name, storage text DEFAULT 'external',
    rewrite_existing boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  c           record;          -- storage_script_column()
  target      text;            -- external | extended | main
  method      text;            -- pglz | lz4 | NULL (unchanged)
  lock_to     text := storagelab_internal.setting('scripts.lock_timeout');
  retries     int  := storagelab_internal.setting('scripts.lock_retries')::int;
  rewrite_cond text;
  col         text := quote_ident(column_name);
  out         text;
  step        int := 0;
  t           record;
  stmt        text;
BEGIN
  SELECT * INTO c FROM storagelab_internal.storage_script_column(relation, column_name, rewrite_existing);
  SELECT * INTO target, method FROM storagelab_internal.storage_script_target(storage);

  rewrite_cond := CASE
    WHEN target = 'external' THEN format('pg_catalog.pg_column_compression(%s) IS NOT NULL', col)
    -- pg_column_size(), not octet_length(): it takes any type (jsonb has no
    -- octet_length) and, like octet_length(), reads a value's header only.
    -- An uncompressed value's stored size is its length plus its header; a
    -- value compressed with the other method differs from the target at
    -- any size.
    WHEN method IS NOT NULL THEN format(
      '(pg_catalog.pg_column_compression(%1$s) IS DISTINCT FROM %2$L AND (pg_catalog.pg_column_compression(%1$s) IS NOT NULL OR pg_catalog.pg_column_size(%1$s) >= %3$s))',
      col, method, 2032)
    ELSE format('(pg_catalog.pg_column_compression(%1$s) IS NULL AND pg_catalog.pg_column_size(%1$s) >= %2$s)', col, 2032)
    END;

  out := storagelab_internal.storage_script_header(relation, column_name, c.relkind, c.typ, c.attstorage,
                                                  c.attcompression, target, method, rewrite_existing);

  -- The tree: the table, its partitions and inheritance children (the
  -- column has the same name in all of them), parents before children.
  FOR t IN
    WITH RECURSIVE tree(relid, depth) AS (
      SELECT relation::oid, 0
      UNION ALL
      SELECT i.inhrelid, tree.depth + 1 FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r, k.relkind, min(tree.depth) AS depth
      FROM tree JOIN pg_class k ON k.oid = tree.relid
     WHERE k.relkind IN ('r', 'p', 'f')
     GROUP BY tree.relid, k.relkind
     ORDER BY min(tree.depth), tree.relid::regclass::text
  LOOP
    CONTINUE WHEN t.relkind = 'f';
    stmt := format('ALTER TABLE ONLY %s ALTER COLUMN %s SET STORAGE %s', t.r, col, upper(target));
    IF method IS NOT NULL THEN
      stmt := stmt || format(', ALTER COLUMN %s SET COMPRESSION %s', col, method);
    END IF;
    step := step + 1;
    out := out || format(E'\n-- Step %s: %s on %s.  Takes ACCESS EXCLUSIVE on %s for a catalog update\n'
                         '-- only (no rewrite); retried up to %s more times when lock_timeout (%s) expires.\n',
                         step,
                         CASE WHEN method IS NULL THEN 'SET STORAGE ' || upper(target)
                              ELSE 'SET STORAGE ' || upper(target) || ' and SET COMPRESSION ' || method END,
                         translate(t.r::text, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), retries, lock_to);
    -- the lock first, through script_lock: a short deadlock_timeout (an autovacuum gives way) and a budget below the server's
    out := out || E'DO $step$\nBEGIN\n'
               || storagelab_internal.retry_loop(format(E'        EXECUTE %L;\n        EXECUTE %L;\n',
                                                        storagelab_internal.script_lock_sql(ARRAY['ONLY ' || t.r::text], 'ACCESS EXCLUSIVE'), stmt), retries,
                                                 'Other sessions keep using the table: run the script again when traffic is lower.')
               || E'END\n$step$;\n';
  END LOOP;

  IF NOT rewrite_existing THEN
    out := out || E'\n-- Existing values are left as they are (rewrite_existing => false).  To see how\n'
               || format(E'-- they are stored: SELECT * FROM storagelab.toast_profile(%L, %L);\n',
                         translate(relation::text, E'\n\r', '  '), translate(column_name::text, E'\n\r', '  '))
               || E'\n' || storagelab_internal.script_end(false);
    RETURN out;
  END IF;

  -- The rewrite: per table that holds rows, walk it in ranges of pages,
  -- COMMIT after each batch; a rerun skips values already rewritten.
  FOR t IN
    WITH RECURSIVE tree(relid) AS (
      SELECT relation::oid
      UNION
      SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
    )
    SELECT tree.relid::regclass AS r
      FROM tree JOIN pg_class k ON k.oid = tree.relid
     WHERE k.relkind = 'r'
     ORDER BY tree.relid::regclass::text
  LOOP
    step := step + 1;
    out := out || format(E'\n-- Step %s: rewrite the values of %s in %s whose stored form differs from the\n'
                         '-- new setting (%s), 1,000 pages per transaction.  Takes ROW EXCLUSIVE on the\n'
                         '-- table and row locks on the rewritten rows; fires UPDATE triggers; writes WAL and\n'
                         '-- dead row versions (the table and its TOAST table grow until VACUUM).  Resumable:\n'
                         '-- run it again and values already rewritten are skipped%s\n',
                         step, translate(col, E'\n\r', '  '), translate(t.r::text, E'\n\r', '  '), translate(rewrite_cond, E'\n\r', '  '),
                         -- a value compression does not shrink is stored uncompressed
                         -- again: it still looks like one to rewrite
                         CASE WHEN target = 'external' THEN '.' ELSE
                           E', except those that stay\n-- uncompressed (content compressed already, or that compression does not shrink):\n'
                           '-- they look unchanged, and every run rewrites them again.' END)
               || storagelab_internal.storage_script_rewrite(t.r, c.set_list, rewrite_cond, retries);
  END LOOP;
  RETURN out || E'\n' || storagelab_internal.script_end(false);
END
$fn$;
COMMENT ON FUNCTION storagelab.storage_migration_script(regclass, name, text, boolean) IS
  'psql script that sets a column''s STORAGE (external, extended, main; optionally with COMPRESSION pglz/lz4) table by table with lock_timeout and retries, and with rewrite_existing a batched, resumable rewrite of the values stored in the old form, then VACUUM';

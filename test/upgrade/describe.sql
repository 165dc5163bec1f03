-- The installed extension storagelab as text, for scripts/upgrade-test.sh,
-- which diffs an upgraded database against a fresh install.
--
-- One header line per object, flush left ("function storagelab.f(x int)"),
-- then its attributes, indented ("  volatility: stable"); bodies and view
-- definitions line by line ("    | ...").  No OIDs, no positions that
-- dropped columns shift, ACLs sorted: two databases print the same text
-- exactly when the extension's catalog state is the same.
--
-- Covered: the extension row (version, schema, config tables); every member
-- object (pg_depend deptype 'e'); pg_init_privs; for every function in the
-- extension's schemas or among its members: identity, arguments with
-- defaults, result, language, kind, volatility, strictness, security,
-- leakproofness, parallel safety, cost, rows, support function, proconfig,
-- owner, ACL, comment, body; for every relation: kind, persistence, owner,
-- options, row security, ACL, comment, columns (type, NOT NULL, default,
-- identity, generated, collation, ACL, comment), constraints, indexes,
-- triggers, rules, policies, view definition, sequence parameters, and the
-- rows of tables the extension fills (not those of :state_tables, which
-- hold a user's data, nor of storagelab_internal.int_overflow_growth, derived
-- from one); every type (enum labels, domain base and checks,
-- range subtype) and schema (owner, ACL, comment).
--
-- psql -X -At -v state_tables='{storagelab.settings,...}' -f describe.sql

\set ON_ERROR_STOP 1
SET search_path = pg_catalog, pg_temp;

-- pg_temp.acl(aclitem[]): an ACL as sorted text; "default" when NULL.
CREATE FUNCTION pg_temp.acl(a aclitem[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN a IS NULL THEN 'default'
              ELSE coalesce((SELECT string_agg(x::text, ' ' ORDER BY x::text) FROM unnest(a) x), '(none)')
         END
$$;

-- pg_temp.body(text): a multi-line text as indented "| " lines.
CREATE FUNCTION pg_temp.body(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('    | ' || l, E'\n' ORDER BY n)
    FROM regexp_split_to_table(rtrim(t, E'\n'), E'\n') WITH ORDINALITY AS s(l, n)
$$;

-- pg_temp.rows(regclass): a table's rows as text, sorted.
CREATE FUNCTION pg_temp.rows(r regclass) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format('SELECT t::text FROM %s t ORDER BY 1', r);
END
$$;

CREATE TEMP TABLE ext AS
  SELECT e.* FROM pg_extension e WHERE e.extname = 'storagelab';
CREATE TEMP TABLE members AS
  SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d, ext
   WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid
     AND d.deptype = 'e';
-- The extension's schema (1.0: storagelab, outside the extension) and its
-- member schemas; not pg_catalog, where the extension object lives since
-- 1.1 (its objects are PostgreSQL's).
CREATE TEMP TABLE schemas AS
  SELECT extnamespace AS oid FROM ext WHERE extnamespace <> 'pg_catalog'::regnamespace
  UNION
  SELECT objid FROM members WHERE classid = 'pg_namespace'::regclass;
CREATE TEMP TABLE state AS
  SELECT to_regclass(t) AS oid FROM unnest(:'state_tables'::text[]) t;

-- Each object: (section, name, text); printed in that order.
CREATE TEMP TABLE out (section int, name text, body text);

-- The extension itself.
INSERT INTO out
SELECT 0, 'extension ' || extname,
       concat_ws(E'\n',
         '  version: ' || extversion,
         '  schema: ' || extnamespace::regnamespace,
         '  relocatable: ' || extrelocatable,
         '  config tables: ' || coalesce((SELECT string_agg(format('%s %L', c::regclass, w), ', ' ORDER BY c::regclass::text)
                                            FROM unnest(extconfig, extcondition) AS x(c, w)), '(none)'))
  FROM ext;

-- Its members, by identity.
INSERT INTO out
SELECT 1, 'members',
       string_agg('  ' || i.type || ' ' || i.identity, E'\n' ORDER BY i.type, i.identity)
  FROM members m, pg_identify_object(m.classid, m.objid, m.objsubid) i;

-- Initial privileges (what pg_dump treats as the extension's own).
INSERT INTO out
SELECT 2, 'initial privileges',
       string_agg(format('  %s %s: %s', i.type, i.identity, pg_temp.acl(p.initprivs)), E'\n'
                  ORDER BY i.type, i.identity)
  FROM pg_init_privs p, pg_identify_object(p.classoid, p.objoid, p.objsubid) i
 WHERE p.privtype = 'e'
   AND (i.schema IN (SELECT oid::regnamespace::text FROM schemas)
        OR (p.classoid, p.objoid) IN (SELECT classid, objid FROM members));

-- Schemas.
INSERT INTO out
SELECT 3, 'schema ' || n.nspname::text,
       concat_ws(E'\n',
         '  owner: ' || pg_get_userbyid(n.nspowner),
         '  acl: ' || pg_temp.acl(n.nspacl),
         '  comment: ' || obj_description(n.oid, 'pg_namespace'))
  FROM pg_namespace n WHERE n.oid IN (SELECT oid FROM schemas);

-- Functions, procedures, aggregates.
INSERT INTO out
SELECT 4, format('%s %s.%s(%s)',
                 CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate'
                                WHEN 'w' THEN 'window function' ELSE 'function' END,
                 p.pronamespace::regnamespace, quote_ident(p.proname),
                 pg_get_function_identity_arguments(p.oid)),
       concat_ws(E'\n',
         '  member: ' || ((p.oid) IN (SELECT objid FROM members WHERE classid = 'pg_proc'::regclass)),
         '  arguments: ' || pg_get_function_arguments(p.oid),
         '  result: ' || pg_get_function_result(p.oid),
         '  language: ' || l.lanname,
         '  volatility: ' || CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable' ELSE 'volatile' END,
         '  strict: ' || p.proisstrict,
         '  security definer: ' || p.prosecdef,
         '  leakproof: ' || p.proleakproof,
         '  parallel: ' || CASE p.proparallel WHEN 's' THEN 'safe' WHEN 'r' THEN 'restricted' ELSE 'unsafe' END,
         '  cost: ' || p.procost,
         '  rows: ' || p.prorows,
         '  support: ' || nullif(p.prosupport, 0)::regproc,
         '  config: ' || coalesce(array_to_string(p.proconfig, ' | '), '(none)'),
         '  owner: ' || pg_get_userbyid(p.proowner),
         '  acl: ' || pg_temp.acl(p.proacl),
         '  comment: ' || coalesce(obj_description(p.oid, 'pg_proc'), '(none)'),
         '  library: ' || p.probin,
         CASE WHEN p.prosqlbody IS NOT NULL
              THEN E'  body (SQL standard):\n' || pg_temp.body(pg_get_function_sqlbody(p.oid))
              ELSE E'  body:\n' || pg_temp.body(p.prosrc) END)
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace IN (SELECT oid FROM schemas)
    OR p.oid IN (SELECT objid FROM members WHERE classid = 'pg_proc'::regclass);

-- Relations: tables, views, materialized views, sequences, composite types.
-- (Indexes and TOAST tables appear under their table.)
INSERT INTO out
SELECT 5, format('%s %s',
                 CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table'
                                WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                WHEN 'S' THEN 'sequence' WHEN 'c' THEN 'composite type'
                                WHEN 'f' THEN 'foreign table' ELSE c.relkind::text END,
                 c.oid::regclass),
       concat_ws(E'\n',
         '  member: ' || (c.oid IN (SELECT objid FROM members WHERE classid = 'pg_class'::regclass)),
         '  persistence: ' || c.relpersistence::text,
         '  owner: ' || pg_get_userbyid(c.relowner),
         '  options: ' || array_to_string(c.reloptions, ', '),
         CASE WHEN c.relrowsecurity OR c.relforcerowsecurity
              THEN format('  row security: %s, forced: %s', c.relrowsecurity, c.relforcerowsecurity) END,
         '  acl: ' || pg_temp.acl(c.relacl),
         '  comment: ' || coalesce(obj_description(c.oid, 'pg_class'), '(none)'),
         -- columns, in the order SELECT * gives them
         (SELECT string_agg(
                   concat_ws(E'\n',
                     format('  column %s %s %s%s%s%s%s%s', a.pos,
                            quote_ident(a.attname), format_type(a.atttypid, a.atttypmod),
                            CASE WHEN a.attnotnull THEN ' not null' END,
                            CASE WHEN a.attgenerated = 's' THEN ' generated always as (' || pg_get_expr(ad.adbin, ad.adrelid) || ') stored'
                                 WHEN ad.adbin IS NOT NULL THEN ' default ' || pg_get_expr(ad.adbin, ad.adrelid) END,
                            CASE a.attidentity WHEN 'a' THEN ' generated always as identity'
                                               WHEN 'd' THEN ' generated by default as identity' END,
                            CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                                 THEN ' collate ' || a.attcollation::regcollation END,
                            CASE WHEN a.attstorage <> t.typstorage THEN ' storage ' || a.attstorage::text END),
                     CASE WHEN a.attacl IS NOT NULL THEN format('  column %s acl: %s', quote_ident(a.attname), pg_temp.acl(a.attacl)) END,
                     format('  column %s comment: %s', quote_ident(a.attname),
                            coalesce(col_description(c.oid, a.attnum), '(none)'))),
                   E'\n' ORDER BY a.attnum)
            FROM (SELECT a.*, row_number() OVER (ORDER BY a.attnum) AS pos
                    FROM pg_attribute a
                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) a
            JOIN pg_type t ON t.oid = a.atttypid
            LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum),
         (SELECT string_agg(format('  constraint %s: %s', quote_ident(k.conname), pg_get_constraintdef(k.oid))
                            || coalesce(E'\n  constraint ' || quote_ident(k.conname) || ' comment: '
                                        || obj_description(k.oid, 'pg_constraint'), ''),
                            E'\n' ORDER BY k.conname)
            FROM pg_constraint k WHERE k.conrelid = c.oid),
         (SELECT string_agg(format('  index %s: %s', quote_ident(i.relname), pg_get_indexdef(i.oid))
                            || coalesce(E'\n  index ' || quote_ident(i.relname) || ' comment: '
                                        || obj_description(i.oid, 'pg_class'), ''),
                            E'\n' ORDER BY i.relname)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid),
         (SELECT string_agg(format('  trigger %s: %s%s', quote_ident(g.tgname), pg_get_triggerdef(g.oid),
                                   CASE g.tgenabled WHEN 'O' THEN '' ELSE ' (enabled: ' || g.tgenabled::text || ')' END),
                            E'\n' ORDER BY g.tgname)
            FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT g.tgisinternal),
         (SELECT string_agg(format(E'  rule %s:\n%s', quote_ident(r.rulename), pg_temp.body(pg_get_ruledef(r.oid))),
                            E'\n' ORDER BY r.rulename)
            FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.rulename <> '_RETURN'),
         (SELECT string_agg(format('  policy %s: %s %s to %s using (%s) with check (%s)', quote_ident(po.polname),
                                   CASE WHEN po.polpermissive THEN 'permissive' ELSE 'restrictive' END, po.polcmd,
                                   (SELECT string_agg(CASE WHEN r = 0 THEN 'public' ELSE pg_get_userbyid(r)::text END, ', ' ORDER BY 1)
                                      FROM unnest(po.polroles) r),
                                   pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid)),
                            E'\n' ORDER BY po.polname)
            FROM pg_policy po WHERE po.polrelid = c.oid),
         CASE WHEN c.relkind IN ('v', 'm') THEN E'  definition:\n' || pg_temp.body(pg_get_viewdef(c.oid)) END,
         (SELECT format('  sequence: %s start %s increment %s min %s max %s cache %s%s%s',
                        format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache,
                        CASE WHEN s.seqcycle THEN ' cycle' END,
                        (SELECT ' owned by ' || d.refobjid::regclass || '.' || quote_ident(a.attname)
                           FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                          WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')
                            AND d.refclassid = 'pg_class'::regclass))
            FROM pg_sequence s WHERE s.seqrelid = c.oid),
         -- the rows the extension itself puts into its tables (not those of
         -- int_overflow_growth either: derived from the history, which the
         -- upgrade refits and a fresh install does not have)
         CASE WHEN c.relkind IN ('r', 'p') AND c.oid NOT IN (SELECT oid FROM state WHERE oid IS NOT NULL)
                   AND c.oid IS DISTINCT FROM to_regclass('storagelab_internal.int_overflow_growth')
              THEN (SELECT coalesce(string_agg('  row: ' || r, E'\n'), '  rows: (none)') FROM pg_temp.rows(c.oid) r) END)
  FROM pg_class c
 WHERE c.relnamespace IN (SELECT oid FROM schemas)
   AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'c', 'f');

-- Types other than relations' row types and arrays.
INSERT INTO out
SELECT 6, format('%s %s', CASE t.typtype WHEN 'e' THEN 'enum' WHEN 'd' THEN 'domain' WHEN 'r' THEN 'range'
                                         WHEN 'm' THEN 'multirange' WHEN 'b' THEN 'base type' ELSE 'type' END,
                 t.oid::regtype),
       concat_ws(E'\n',
         '  member: ' || (t.oid IN (SELECT objid FROM members WHERE classid = 'pg_type'::regclass)),
         '  owner: ' || pg_get_userbyid(t.typowner),
         '  acl: ' || pg_temp.acl(t.typacl),
         '  comment: ' || coalesce(obj_description(t.oid, 'pg_type'), '(none)'),
         '  labels: ' || (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
                            FROM pg_enum e WHERE e.enumtypid = t.oid),
         CASE WHEN t.typtype = 'd' THEN
           concat_ws(E'\n',
             format('  base: %s%s%s', format_type(t.typbasetype, t.typtypmod),
                    CASE WHEN t.typnotnull THEN ' not null' END,
                    ' default ' || t.typdefault),
             (SELECT string_agg(format('  constraint %s: %s', quote_ident(k.conname), pg_get_constraintdef(k.oid)),
                                E'\n' ORDER BY k.conname)
                FROM pg_constraint k WHERE k.contypid = t.oid)) END,
         (SELECT '  subtype: ' || format_type(r.rngsubtype, NULL) FROM pg_range r WHERE r.rngtypid = t.oid))
  FROM pg_type t
 WHERE t.typnamespace IN (SELECT oid FROM schemas)
   AND t.typtype IN ('e', 'd', 'r', 'm', 'b')
   AND NOT (t.typcategory = 'A' AND t.typelem <> 0);

SELECT name || coalesce(E'\n' || nullif(body, ''), '')
  FROM out ORDER BY section, name;

-- storagelab install script, part 25: the DDL of a copy of an index, from
-- its definition as PostgreSQL prints it (pg_get_indexdef), with every
-- option of every column kept and some columns renamed.  The rewrite
-- engine's copies of indexes on the new tables (parts 60-64) use it.

\echo Use "CREATE EXTENSION storagelab" to load this file. \quit

-- The elements of a parenthesized, comma-separated list that starts at
-- position pos of def (just after its "("), as PostgreSQL's deparsers print
-- it: commas inside parentheses, quoted identifiers and string literals do
-- not separate elements.  Returns the elements and the position just after
-- the closing ")".
CREATE FUNCTION storagelab_internal.sql_split_list(def text, pos int, OUT elems text[], OUT next_pos int)
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  depth int := 0;
  quote text := NULL;      -- '"' or '''' while inside one
  ch text;
  start int := pos;
  i int := pos;
BEGIN
  elems := '{}';
  WHILE i <= length(def) LOOP
    ch := substr(def, i, 1);
    IF quote IS NOT NULL THEN
      IF ch = quote THEN
        IF substr(def, i + 1, 1) = quote THEN
          i := i + 1;               -- a doubled quote inside the quoted text
        ELSE
          quote := NULL;
        END IF;
      END IF;
    ELSIF ch IN ('"', '''') THEN
      quote := ch;
    ELSIF ch = '(' OR ch = '[' THEN
      depth := depth + 1;
    ELSIF (ch = ')' OR ch = ']') AND depth > 0 THEN
      depth := depth - 1;
    ELSIF ch = ')' THEN
      elems := elems || substr(def, start, i - start);
      next_pos := i + 1;
      RETURN;
    ELSIF ch = ',' AND depth = 0 THEN
      elems := elems || substr(def, start, i - start);
      start := i + 2;               -- ", "
      i := i + 1;
    END IF;
    i := i + 1;
  END LOOP;
  RAISE EXCEPTION 'cannot read the column list of an index definition'
    USING ERRCODE = 'internal_error', DETAIL = def;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.sql_split_list(text, int) IS
  'the top-level elements of a parenthesized list in a deparsed definition, and the position after it';

-- The DDL of a copy of index idx under the name new_name, from its
-- definition def (pg_get_indexdef, from the model): every column keeps its
-- ordering, NULLS FIRST/LAST, operator class, collation; INCLUDE columns,
-- NULLS NOT DISTINCT, storage parameters and the predicate are kept as
-- printed; the columns numbered renamed_atts become new_names.  With
-- concurrent, CREATE INDEX CONCURRENTLY.  The tablespace is added
-- (pg_get_indexdef does not print it).
CREATE FUNCTION storagelab_internal.index_copy_sql(def text, idx oid, new_name name, concurrent boolean,
                                                                renamed_atts int2[], new_names name[])
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ix      record;
  head    text;
  mid     text;
  pos     int;
  keys    record;
  incl    record;
  elems   text[];
  k       int;
  att     int2;
  j       int;
  rest    text;
  pred    text;
BEGIN
  SELECT i.indisunique, i.indnkeyatts, i.indnatts, string_to_array(i.indkey::text, ' ')::int2[] AS indkey,
         ic.relname, ic.relkind, ic.reltablespace, am.amname, i.indrelid,
         pg_get_expr(i.indpred, i.indrelid) AS pred
    INTO ix
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
   WHERE i.indexrelid = idx;
  head := format('CREATE %sINDEX %I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END, ix.relname);
  -- "[ONLY ]table USING am (": the table is schema-qualified (search_path is
  -- pg_catalog, pg_temp here), except a temporary one; its name may contain
  -- anything, so it is matched whole where it can be
  mid := format('%s%s USING %I (', CASE WHEN ix.relkind = 'I' THEN 'ONLY ' ELSE '' END,
                storagelab_internal.sql_qname(ix.indrelid), ix.amname);
  IF substr(def, length(head) + 1, length(mid)) = mid THEN
    pos := length(head) + length(mid) + 1;
  ELSE
    pos := strpos(substr(def, length(head) + 1), format(' USING %I (', ix.amname));
    pos := CASE WHEN pos = 0 THEN 0 ELSE length(head) + pos + length(format(' USING %I (', ix.amname)) END;
  END IF;
  IF left(def, length(head)) <> head OR pos = 0 THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  SELECT * INTO keys FROM storagelab_internal.sql_split_list(def, pos);
  elems := keys.elems;
  rest := substr(def, keys.next_pos);
  IF starts_with(rest, ' INCLUDE (') THEN
    SELECT * INTO incl FROM storagelab_internal.sql_split_list(def, keys.next_pos + length(' INCLUDE ('));
    elems := elems || incl.elems;
    rest := substr(def, incl.next_pos);
  END IF;
  IF cardinality(elems) <> ix.indnatts THEN
    RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
  END IF;
  -- rename the plain columns that are converted: each element starts with the column's name
  FOR k IN 1 .. ix.indnatts LOOP
    att := ix.indkey[k];
    j := array_position(renamed_atts, att);
    CONTINUE WHEN att = 0 OR j IS NULL;
    pred := quote_ident((SELECT attname FROM pg_attribute WHERE attrelid = ix.indrelid AND attnum = att));
    IF NOT (elems[k] = pred OR starts_with(elems[k], pred || ' ')) THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    elems[k] := quote_ident(new_names[j]) || substr(elems[k], length(pred) + 1);
  END LOOP;
  -- the tablespace goes before the predicate
  IF ix.reltablespace <> 0 THEN
    pred := CASE WHEN ix.pred IS NULL THEN '' ELSE ' WHERE ' || ix.pred END;
    IF right(rest, length(pred)) <> pred THEN
      RAISE EXCEPTION 'unexpected index definition' USING ERRCODE = 'internal_error', DETAIL = def;
    END IF;
    rest := left(rest, length(rest) - length(pred))
            || format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = ix.reltablespace)) || pred;
  END IF;
  RETURN format('CREATE %sINDEX %s%I ON ', CASE WHEN ix.indisunique THEN 'UNIQUE ' ELSE '' END,
                CASE WHEN concurrent THEN 'CONCURRENTLY ' ELSE '' END, new_name)
      || substr(def, length(head) + 1, pos - length(head) - 1)
      || array_to_string(elems[1:ix.indnkeyatts], ', ') || ')'
      || CASE WHEN ix.indnatts > ix.indnkeyatts
              THEN ' INCLUDE (' || array_to_string(elems[ix.indnkeyatts + 1:], ', ') || ')' ELSE '' END
      || rest;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.index_copy_sql(text, oid, name, boolean, int2[], name[]) IS
  'DDL of a copy of an index under a new name, with some of its columns renamed, from its definition: every option of every column kept';

-- storagelab install script, part 82: storagelab.report_html(), the findings
-- as one self-contained HTML page with charts.
--
--   storagelab.report_html(options jsonb)   the page: summary, what the
--        caller could not read, the findings table with each fix, a chart
--        per int_overflow finding (recorded values and the projection to
--        overflow_at), the tables with most bytes to save by cause, and a
--        visibility-map strip per table with a visibility finding
--
-- The page holds no script and fetches nothing: inline CSS and inline SVG
-- only, under a Content-Security-Policy that forbids both.  Every value from
-- the database goes through html_escape().  It reads what findings, the
-- int_overflow view, the history and the visibility map give the caller,
-- with the caller's privileges, and says what it could not read.  Built
-- from small functions, one per part of the page; storagelab.findings is
-- read once and passed to each of them.

-- Text for HTML element content and double- or single-quoted attribute
-- values: the five markup characters as references, and the characters an
-- HTML parser rejects (C0 and C1 controls other than tab, newline and form
-- feed; noncharacters) as U+FFFD.  NULL gives ''.
CREATE FUNCTION storagelab_internal.html_escape(value text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT regexp_replace(
           replace(replace(replace(replace(replace(coalesce($1, ''),
             '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;'),
           '[\u0001-\u0008\u000B\u000D-\u001F\u007F-\u009F\uFDD0-\uFDEF\uFFFE\uFFFF]', U&'\FFFD', 'g')
$$;
COMMENT ON FUNCTION storagelab_internal.html_escape(text) IS
  'text made safe for HTML content and quoted attributes: & < > " '' as character references, control characters and noncharacters as U+FFFD; NULL gives an empty string';

-- report_html()'s options, checked: a JSON object whose keys are among
-- these, each an integer in its range.  Out: the values, defaults filled in.
CREATE FUNCTION storagelab_internal.report_html_options(options jsonb,
  OUT top_tables integer, OUT strip_cells integer, OUT max_points integer,
  OUT max_charts integer)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  spec  constant jsonb := '{"top_tables": [20, 1, 100], "strip_cells": [100, 10, 1000],
                            "max_points": [400, 10, 10000], "max_charts": [20, 0, 1000]}';
  k     text;
  v     jsonb;
  got   jsonb := '{}';
BEGIN
  IF options IS NULL THEN
    options := '{}';
  END IF;
  IF jsonb_typeof(options) <> 'object' THEN
    RAISE EXCEPTION 'report_html() options must be a JSON object, not %', jsonb_typeof(options)
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Pass an object such as ''{"top_tables": 20}'', or nothing for the defaults.';
  END IF;
  FOR k, v IN SELECT e.key, e.value FROM jsonb_each(options) e LOOP
    IF NOT spec ? k THEN
      RAISE EXCEPTION 'unknown report_html() option: %', k
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'The options are ' || (SELECT string_agg(s, ', ' ORDER BY s) FROM jsonb_object_keys(spec) s) || '.';
    END IF;
    IF jsonb_typeof(v) <> 'number' OR v::numeric <> trunc(v::numeric)
       OR v::numeric NOT BETWEEN (spec->k->>1)::numeric AND (spec->k->>2)::numeric THEN
      RAISE EXCEPTION 'report_html() option % must be an integer from % to %: %', k, spec->k->>1, spec->k->>2, v
        USING ERRCODE = 'invalid_parameter_value',
              HINT = format('Pass %s as a JSON number from %s to %s (default %s).', k, spec->k->>1, spec->k->>2, spec->k->>0);
    END IF;
    got := got || jsonb_build_object(k, v);
  END LOOP;
  top_tables := coalesce(got->>'top_tables', spec->'top_tables'->>0)::int;
  strip_cells := coalesce(got->>'strip_cells', spec->'strip_cells'->>0)::int;
  max_points := coalesce(got->>'max_points', spec->'max_points'->>0)::int;
  max_charts := coalesce(got->>'max_charts', spec->'max_charts'->>0)::int;
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.report_html_options(jsonb) IS
  'report_html() options checked (a JSON object of known keys, integers in range; 22023 otherwise) with the defaults filled in';

-- The page's style sheet (inline: the page fetches nothing).
CREATE FUNCTION storagelab_internal.report_html_style()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; width: 100%; } th, td { border: 1px solid #ddd; padding: 4px 6px; vertical-align: top; text-align: left; }
th { background: #f3f3f3; } td { overflow-wrap: anywhere; } table.findings { table-layout: fixed; }
table.findings th { width: 9%; } table.findings th.category { width: 11%; } table.findings th.object { width: 18%; }
table.findings th.todo { width: 31%; } table.findings th.evidence { width: 13%; }
td.num { text-align: right; white-space: nowrap; }
code.fix { display: block; white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border: 1px solid #ddd; padding: 3px; user-select: all; font-size: 12px; }
.sev { font-weight: bold; padding: 1px 5px; border-radius: 3px; }
.sev-critical { background: #c62828; color: #fff; } .sev-warning { background: #f9a825; } .sev-info { background: #90caf9; }
.note { color: #555; font-style: italic; } .unread { background: #fff3e0; border: 1px solid #ffb74d; padding: 6px; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; } dt { font-weight: bold; }
figure { margin: 1em 0; } figcaption { font-weight: bold; }
svg { max-width: 100%; height: auto; font: 11px sans-serif; }
svg .frame { fill: #fafafa; stroke: #ccc; } svg .limit { stroke: #c62828; stroke-dasharray: 4 3; }
svg .history { fill: none; stroke: #1565c0; stroke-width: 1.5; } svg .point { fill: #1565c0; }
svg .fit { stroke: #ef6c00; stroke-width: 1.5; stroke-dasharray: 6 4; } svg .overflow-mark { stroke: #c62828; stroke-width: 2; }
svg .overflow-date { fill: #c62828; font-weight: bold; }
svg .cause-column_width { fill: #6a1b9a; } svg .cause-alignment { fill: #26a69a; }
svg .frozen { fill: #1b5e20; } svg .visible { fill: #81c784; } svg .neither { fill: #e0e0e0; }
footer { margin-top: 2em; color: #666; font-size: 12px; border-top: 1px solid #ccc; }
</style>'
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_style() IS
  'the inline style sheet of report_html()';

-- The summary of report(): database size, bytes to save, nearest overflow,
-- findings per severity.
CREATE FUNCTION storagelab_internal.report_html_summary(fs storagelab.findings[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('<section id="summary"><h2>Summary</h2><dl class="summary">'
                '<dt>database</dt><dd>%s, %s</dd><dt>bytes to save</dt><dd class="saved">%s</dd>'
                '<dt>nearest overflow</dt><dd class="nearest">%s</dd><dt>findings</dt><dd class="counts">%s</dd></dl></section>',
                storagelab_internal.html_escape(current_database()),
                pg_size_pretty(pg_database_size(current_database())),
                pg_size_pretty(coalesce((SELECT sum(f.estimated_saved_bytes) FROM unnest(fs) f), 0)),
                coalesce((SELECT storagelab_internal.html_escape(format('%s.%s (%s %%%s)', f.relation, quote_ident(f.column_name), f.value,
                                   CASE WHEN f.overflow_at < 'infinity' THEN ', ' || to_char(f.overflow_at, 'YYYY-MM-DD') ELSE '' END))
                            FROM unnest(fs) f WHERE f.category = 'int_overflow'
                           ORDER BY f.overflow_at NULLS LAST, f.value DESC LIMIT 1), 'no integer column near its limit'),
                coalesce((SELECT string_agg(format('%s %s', s.n, s.severity), ', ' ORDER BY s.r)
                            FROM (SELECT f.severity, count(*) AS n,
                                         min(CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END) AS r
                                    FROM unnest(fs) f GROUP BY f.severity) s), 'none'))
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_summary(storagelab.findings[]) IS
  'report_html() summary section: database size, bytes to save, nearest overflow, findings per severity';

-- What the caller could not read: report()'s lines, and the sources that
-- need pg_stat_scan_tables (findings leaves them out without a word).
CREATE FUNCTION storagelab_internal.report_html_unread()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN count(*) > 0
              THEN '<section id="unread" class="unread"><h2>Not read</h2><ul>'
                   || string_agg('<li>' || storagelab_internal.html_escape(btrim(l)) || '</li>', '' ORDER BY o) || '</ul></section>'
              ELSE '' END
    FROM (SELECT u.l, u.o FROM storagelab_internal.report_unreadable() WITH ORDINALITY u(l, o)
          UNION ALL
          SELECT format('role %s lacks pg_stat_scan_tables: visibility and TOAST findings and the visibility strips are missing', current_user), 100
           WHERE NOT pg_has_role('pg_stat_scan_tables', 'USAGE')
          UNION ALL
          SELECT format('role %s may not read storagelab.int_overflow_history: the charts show the projection only (pg_read_all_data, or the owner, reads it)', current_user), 101
           WHERE NOT has_table_privilege('storagelab.int_overflow_history', 'SELECT')) x(l, o)
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_unread() IS
  'report_html() section naming what the caller could not read (report()''s lines, pg_stat_scan_tables, the history); empty when nothing is missing';

-- The findings table, in findings' order (by severity): each row with its
-- measure, message, fix (a <code> block to copy) and evidence.  Its data-
-- attributes name the finding (category, relation, column) for tools.
CREATE FUNCTION storagelab_internal.report_html_findings(fs storagelab.findings[])
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<section id="findings"><h2>Findings</h2>'
         || CASE WHEN cardinality(fs) > 0 THEN
              '<table class="findings"><thead><tr><th>severity</th><th class="category">category</th><th class="object">object</th>'
              '<th>measure</th><th>overflow at</th><th class="todo">what to do, and the fix</th><th class="evidence">evidence</th></tr></thead><tbody>'
              || string_agg(format('<tr class="finding" data-category="%s" data-relation="%s" data-column="%s">'
                                   '<td><span class="sev sev-%s">%s</span></td><td>%s</td><td class="object">%s</td>'
                                   '<td class="num">%s</td><td class="num">%s</td>'
                                   '<td>%s<code class="fix">%s</code></td><td>%s</td></tr>',
                                   x.category, x.rel, x.col, x.severity, x.severity, x.category,
                                   storagelab_internal.html_escape(f.relation::text || coalesce('.' || quote_ident(f.column_name), '')),
                                   storagelab_internal.html_escape(CASE f.unit WHEN 'percent' THEN f.value || ' %'
                                                                               WHEN 'bytes' THEN pg_size_pretty(f.value)
                                                                               ELSE f.value || ' ' || f.unit END),
                                   CASE WHEN f.overflow_at < 'infinity' THEN to_char(f.overflow_at, 'YYYY-MM-DD')
                                        WHEN f.overflow_at = 'infinity' THEN 'beyond 100 years' ELSE '' END,
                                   storagelab_internal.html_escape(f.message),
                                   storagelab_internal.html_escape(coalesce(f.fix, '(no fix: see the message)')),
                                   storagelab_internal.html_escape(f.evidence || coalesce(' (' || f.sample_rows || ' rows sampled)', '')))
                            , E'\n' ORDER BY f.ordinality)
              || '</tbody></table>'
            ELSE '<p class="note">Nothing found.</p>' END
         || '</section>'
    FROM unnest(fs) WITH ORDINALITY f
   CROSS JOIN LATERAL (SELECT storagelab_internal.html_escape(f.category) AS category,
                              storagelab_internal.html_escape(f.severity) AS severity,
                              storagelab_internal.html_escape(f.relation::text) AS rel,
                              storagelab_internal.html_escape(f.column_name) AS col) x
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_findings(storagelab.findings[]) IS
  'report_html() findings table: one row per finding, in findings'' order, with measure, message, fix in a <code> block and evidence';

-- One int_overflow chart: the column's recorded values (at most max_points,
-- evenly thinned, the latest always kept) as points joined by a line, the
-- fitted growth from the current value (now) to the limit at overflow_at
-- (the line int_overflow projects on), that date marked, and the limit.
-- Without a finite overflow_at it says why there is no projection.
CREATE FUNCTION storagelab_internal.report_html_overflow_chart(relation regclass, column_name name,
  overflow_at timestamptz, current_value numeric, limit_value numeric, max_points integer)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  readable  constant boolean := has_table_privilege('storagelab.int_overflow_history', 'SELECT');
  t_now     constant float8 := date_part('epoch', now());
  ts        float8[] := '{}';
  vs        numeric[] := '{}';
  n         int8 := 0;
  x0 float8; x1 float8; y0 numeric; y1 numeric;
  finite    constant boolean := overflow_at < 'infinity';
  svg       text;
  note      text;
BEGIN
  IF readable THEN
    SELECT coalesce(array_agg(date_part('epoch', h.taken_at) ORDER BY h.taken_at), '{}'),
           coalesce(array_agg(h.value ORDER BY h.taken_at), '{}'), max(h.total)
      INTO ts, vs, n
      FROM (SELECT hh.taken_at, hh.value, count(*) OVER () AS total,
                   row_number() OVER (ORDER BY hh.taken_at DESC) - 1 AS back
              FROM storagelab.int_overflow_history hh
              JOIN pg_class c ON c.relname = hh.table_name AND c.oid = relation
              JOIN pg_namespace s ON s.oid = c.relnamespace AND s.nspname = hh.schema_name
             WHERE hh.column_name = report_html_overflow_chart.column_name) h
     WHERE h.back % ceil(h.total::numeric / max_points) = 0;
  END IF;
  x0 := least(t_now, ts[1]);
  x1 := CASE WHEN finite THEN date_part('epoch', overflow_at)
             ELSE t_now + greatest((t_now - x0) / 4, 30 * 86400) END;
  x0 := least(x0, x1 - 86400);
  -- the values and the limit, 5 % of their range beyond each
  y0 := least(limit_value, current_value, (SELECT min(v) FROM unnest(vs) v));
  y1 := greatest(limit_value, current_value, (SELECT max(v) FROM unnest(vs) v));
  IF y1 = y0 THEN y1 := y0 + 1; END IF;
  y0 := y0 - (y1 - y0) / 20;
  y1 := y1 + (y1 - y0) / 21;
  -- plot area: x 90..700, y 20..220 (SVG y grows downward)
  svg := format('<svg class="overflow" viewBox="0 0 720 260" role="img" data-points="%1$s">'
                '<rect class="frame" x="90" y="20" width="610" height="200"/>'
                '<line class="limit" x1="90" x2="700" y1="%2$s" y2="%2$s"/><text x="86" y="%2$s" text-anchor="end">%3$s</text>'
                '<text x="86" y="220" text-anchor="end">%4$s</text>'
                '<text x="90" y="238">%5$s</text><text x="700" y="238" text-anchor="end">%6$s</text>',
                cardinality(ts), round(220 - 200 * (limit_value - y0) / (y1 - y0), 1), limit_value,
                round(y0),
                to_char(to_timestamp(x0), 'YYYY-MM-DD'), to_char(to_timestamp(x1), 'YYYY-MM-DD'));
  IF cardinality(ts) > 0 THEN
    SELECT svg || '<polyline class="history" points="' || string_agg(format('%s,%s', q.x, q.y), ' ' ORDER BY q.o) || '"/>'
           || string_agg(format('<circle class="point" cx="%s" cy="%s" r="3"><title>%s: %s</title></circle>',
                                q.x, q.y, to_char(to_timestamp(q.t), 'YYYY-MM-DD HH24:MI'), q.v), '' ORDER BY q.o)
      INTO svg
      FROM (SELECT p.t, p.v, p.o, round((90 + 610 * (p.t - x0) / (x1 - x0))::numeric, 1) AS x,
                   round(220 - 200 * (p.v - y0) / (y1 - y0), 1) AS y
              FROM unnest(ts, vs) WITH ORDINALITY p(t, v, o)) q;
  END IF;
  IF finite THEN
    svg := svg || format('<line class="fit" x1="%s" y1="%s" x2="700" y2="%s"/>'
                         '<line class="overflow-mark" x1="700" x2="700" y1="20" y2="220"/>'
                         '<text class="overflow-date" x="700" y="14" text-anchor="end">overflow %s</text>',
                         round((90 + 610 * (t_now - x0) / (x1 - x0))::numeric, 1),
                         round(220 - 200 * (current_value - y0) / (y1 - y0), 1),
                         round(220 - 200 * (limit_value - y0) / (y1 - y0), 1),
                         to_char(overflow_at, 'YYYY-MM-DD'));
  ELSIF overflow_at = 'infinity' THEN
    note := 'projected overflow beyond 100 years';
  ELSIF NOT readable THEN
    note := 'no projection (the history is not readable by this role)';
  ELSIF n IS NULL OR n < 2 THEN
    note := format('too little history to project: %s snapshot%s recorded (int_overflow_snapshot(), daily)',
                   coalesce(n, 0), CASE WHEN n = 1 THEN '' ELSE 's' END);
  ELSE
    note := 'no projection: the values recorded in int_overflow.growth_window do not grow toward the limit';
  END IF;
  RETURN format('<figure class="overflow-chart" data-relation="%s" data-column="%s" data-overflow-at="%s">'
                '<figcaption>%s</figcaption>%s</svg>%s</figure>',
                storagelab_internal.html_escape(relation::text), storagelab_internal.html_escape(column_name),
                CASE WHEN finite THEN to_char(overflow_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ELSE '' END,
                storagelab_internal.html_escape(format('%s.%s: %s of %s', relation, quote_ident(column_name),
                                                       current_value, limit_value)),
                svg, CASE WHEN note IS NOT NULL THEN '<p class="note">' || storagelab_internal.html_escape(note) || '</p>' ELSE '' END);
END
$fn$;
COMMENT ON FUNCTION storagelab_internal.report_html_overflow_chart(regclass, name, timestamptz, numeric, numeric, integer) IS
  'report_html() chart of one integer column: recorded values, the fitted growth to the limit, the overflow_at date marked; or why there is no projection';

-- A chart per int_overflow finding (at most max_charts, in findings' order),
-- with current and limit values from the int_overflow view.
CREATE FUNCTION storagelab_internal.report_html_overflow(fs storagelab.findings[], max_charts integer,
  max_points integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH f AS (
    SELECT f.relation, f.column_name, f.overflow_at, f.ordinality AS o
      FROM unnest(fs) WITH ORDINALITY f
     WHERE f.category = 'int_overflow'
     ORDER BY f.ordinality LIMIT max_charts
  )
  SELECT '<section id="overflow"><h2>Integer columns near their limit</h2>'
         || coalesce(string_agg(storagelab_internal.report_html_overflow_chart(f.relation, f.column_name, f.overflow_at,
                                                                               i.current_value, i.limit_value, max_points),
                                E'\n' ORDER BY f.o),
                     '<p class="note">No integer column at warning or worse.</p>')
         || '</section>'
    FROM f
    -- the view once, only when there is a chart to draw
    LEFT JOIN (SELECT v.relation, v.column_name, v.current_value, v.limit_value FROM storagelab.int_overflow v
                WHERE EXISTS (SELECT 1 FROM f) AND v.severity IN ('warning', 'critical')) i
      ON i.relation = f.relation AND i.column_name = f.column_name
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_overflow(storagelab.findings[], integer, integer) IS
  'report_html() section of int_overflow charts, one per finding (at most max_charts)';

-- The top_tables tables with the most bytes to save, one bar each, split by
-- the cause findings gives: column_width (narrower types, and the order
-- they allow) and alignment (padding alone).  TOAST and visibility findings
-- save no bytes themselves (estimated_saved_bytes is NULL).
CREATE FUNCTION storagelab_internal.report_html_savings(fs storagelab.findings[], top_tables integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH t AS (
    SELECT f.relation, sum(f.estimated_saved_bytes) AS total,
           jsonb_object_agg(f.category, f.estimated_saved_bytes) AS causes
      FROM (SELECT g.relation, g.category, sum(g.estimated_saved_bytes) AS estimated_saved_bytes
              FROM unnest(fs) g WHERE g.estimated_saved_bytes > 0 GROUP BY g.relation, g.category) f
     GROUP BY f.relation
     ORDER BY total DESC, f.relation::text LIMIT top_tables
  ), r AS (
    SELECT t.*, row_number() OVER (ORDER BY t.total DESC, t.relation::text) - 1 AS i, max(t.total) OVER () AS top
      FROM t
  )
  SELECT '<section id="savings"><h2>Bytes to save, by table and cause</h2>'
         || CASE WHEN count(*) = 0 THEN '<p class="note">No table has bytes to save.</p>'
            ELSE format('<svg class="savings" viewBox="0 0 720 %s" role="img" data-bars="%s">', 34 + 22 * count(*), count(*))
                 || '<rect class="cause-column_width" x="270" y="4" width="10" height="10"/><text x="284" y="13">narrower types (column_width)</text>'
                    '<rect class="cause-alignment" x="470" y="4" width="10" height="10"/><text x="484" y="13">padding (alignment)</text>'
                 || string_agg(format('<g class="bar" data-relation="%1$s" data-bytes="%2$s"><title>%1$s: %3$s</title>'
                                      '<text x="262" y="%4$s" text-anchor="end">%5$s</text>%6$s<text x="%7$s" y="%4$s">%3$s</text></g>',
                                      storagelab_internal.html_escape(r.relation::text), r.total, pg_size_pretty(r.total),
                                      34 + 22 * r.i + 12,
                                      storagelab_internal.html_escape(CASE WHEN length(r.relation::text) > 40
                                                                           THEN left(r.relation::text, 39) || '…'
                                                                           ELSE r.relation::text END),
                                      (SELECT string_agg(format('<rect class="cause-%s" x="%s" y="%s" width="%s" height="16"/>',
                                                                c.cause, round(270 + 380 * (c.before / r.top), 1), 34 + 22 * r.i,
                                                                round(380 * c.bytes / r.top, 1)), '' ORDER BY c.cause)
                                         FROM (SELECT e.key AS cause, e.value::numeric AS bytes,
                                                      coalesce(sum(e.value::numeric) OVER (ORDER BY e.key ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
                                                 FROM jsonb_each_text(r.causes) e) c),
                                      round(274 + 380 * r.total / r.top, 1)), '' ORDER BY r.i)
                 || '</svg>' END
         || '</section>'
    FROM r
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_savings(storagelab.findings[], integer) IS
  'report_html() bar chart of the top_tables tables with the most bytes to save, each bar split by cause (column_width, alignment)';

-- The C reader behind the strips (src/visibility_strip.c): per run of
-- pages, how many map bits were read, and how many all-visible, all-frozen.
-- It checks pg_stat_scan_tables and SELECT on the table itself (42501).
CREATE FUNCTION storagelab_internal.visibility_map_strip(relation regclass, cells integer,
  OUT pages bigint, OUT pages_read integer[], OUT all_visible integer[], OUT all_frozen integer[])
RETURNS record
AS 'MODULE_PATHNAME', 'storagelab_visibility_map_strip'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION storagelab_internal.visibility_map_strip(regclass, integer) IS
  'a table''s pages cut into cells runs: per run, map bits read (at most 256, evenly spaced) and how many all-visible and all-frozen; NULL when the table is locked or cannot be read here';
GRANT EXECUTE ON FUNCTION storagelab_internal.visibility_map_strip(regclass, integer) TO PUBLIC;

-- The visibility map of a table with a visibility finding as a strip of
-- strip_cells runs of pages: per run, the share all-frozen, all-visible only,
-- and neither (visibility_map_strip(): map bits only, at most 256 per run).
CREATE FUNCTION storagelab_internal.report_html_strip(relation regclass, strip_cells integer)
RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('<figure class="strip" data-relation="%s" data-pages="%s" data-cells="%s"><figcaption>%s</figcaption>',
                storagelab_internal.html_escape($1::text), coalesce(s.pages::text, ''), coalesce(cardinality(s.pages_read), 0),
                storagelab_internal.html_escape(format('%s: %s pages', $1, coalesce(s.pages::text, '?'))))
         || CASE WHEN s.pages IS NULL THEN '<p class="note">not read: the table is locked, or cannot be read here</p>'
                 WHEN s.pages = 0 THEN '<p class="note">empty</p>'
            ELSE '<svg class="strip" viewBox="0 0 720 50" role="img"><rect class="neither" x="0" y="0" width="720" height="30"/>'
                 || (SELECT string_agg(format('<g class="cell"><title>pages %1$s to %2$s: %3$s %% all-frozen, %4$s %% all-visible</title>'
                                              '<rect class="visible" x="%5$s" y="%6$s" width="%7$s" height="%8$s"/>'
                                              '<rect class="frozen" x="%5$s" y="%9$s" width="%7$s" height="%10$s"/></g>',
                                              (s.pages * (c.o - 1)) / cardinality(s.pages_read),
                                              (s.pages * c.o) / cardinality(s.pages_read) - 1,
                                              round(100.0 * c.f / c.r), round(100.0 * c.v / c.r),
                                              round(720.0 * (c.o - 1) / cardinality(s.pages_read), 2),
                                              round(30 - 30.0 * c.v / c.r, 2),
                                              round(720.0 / cardinality(s.pages_read), 2), round(30.0 * c.v / c.r, 2),
                                              round(30 - 30.0 * c.f / c.r, 2), round(30.0 * c.f / c.r, 2)), '' ORDER BY c.o)
                       FROM unnest(s.pages_read, s.all_visible, s.all_frozen) WITH ORDINALITY c(r, v, f, o))
                 || '<rect class="frozen" x="0" y="38" width="10" height="10"/><text x="14" y="47">all-frozen</text>'
                    '<rect class="visible" x="100" y="38" width="10" height="10"/><text x="114" y="47">all-visible only</text>'
                    '<rect class="neither" x="230" y="38" width="10" height="10"/><text x="244" y="47">neither</text>'
                    '<text x="720" y="47" text-anchor="end">first page left, last right</text></svg>' END
         || '</figure>'
    FROM (SELECT NULL::int8 AS dummy) d
    LEFT JOIN LATERAL storagelab_internal.visibility_map_strip($1, $2) s ON true
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_strip(regclass, integer) IS
  'report_html() strip of a table''s visibility map: per run of pages, the share all-frozen, all-visible only and neither';

-- A strip per table with a visibility finding (findings has those only for
-- members of pg_stat_scan_tables who may read the table).
CREATE FUNCTION storagelab_internal.report_html_strips(fs storagelab.findings[], strip_cells integer)
RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<section id="visibility"><h2>Visibility map of the tables with a visibility finding</h2>'
         || coalesce(string_agg(storagelab_internal.report_html_strip(v.relation, strip_cells), E'\n' ORDER BY v.o),
                     '<p class="note">No visibility finding.</p>')
         || '</section>'
    FROM (SELECT f.relation, min(f.ordinality) AS o
            FROM unnest(fs) WITH ORDINALITY f
           WHERE f.category = 'visibility' GROUP BY f.relation) v
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_strips(storagelab.findings[], integer) IS
  'report_html() section of visibility-map strips, one per table with a visibility finding';

-- When and where the page was made.
CREATE FUNCTION storagelab_internal.report_html_footer()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT format('<footer>Generated by storagelab %s at <time datetime="%s">%s</time> by role %s, database %s, PostgreSQL %s.</footer>',
                storagelab_internal.html_escape((SELECT e.extversion FROM pg_extension e WHERE e.extname = 'storagelab')),
                to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                storagelab_internal.html_escape(now()::text),
                storagelab_internal.html_escape(current_user), storagelab_internal.html_escape(current_database()),
                storagelab_internal.html_escape(current_setting('server_version')))
$$;
COMMENT ON FUNCTION storagelab_internal.report_html_footer() IS
  'report_html() footer: storagelab version, now(), role, database, server version';

-- The page.
CREATE FUNCTION storagelab.report_html(options jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  o   record;
  fs  storagelab.findings[];
BEGIN
  SELECT * INTO o FROM storagelab_internal.report_html_options(options);
  -- the view once (it samples), in its order
  SELECT array_agg(v) INTO fs FROM storagelab.findings v;
  RETURN concat_ws(E'\n',
    '<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
    -- no script, no fetch: inline style and inline SVG only
    '<meta http-equiv="Content-Security-Policy" content="default-src ''none''; style-src ''unsafe-inline''; img-src data:; base-uri ''none''; form-action ''none''">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    format('<title>storagelab report: %s</title>', storagelab_internal.html_escape(current_database())),
    storagelab_internal.report_html_style(), '</head>', '<body>',
    format('<h1>storagelab report: database %s</h1>', storagelab_internal.html_escape(current_database())),
    storagelab_internal.report_html_summary(fs),
    storagelab_internal.report_html_unread(),
    storagelab_internal.report_html_findings(fs),
    storagelab_internal.report_html_overflow(fs, o.max_charts, o.max_points),
    storagelab_internal.report_html_savings(fs, o.top_tables),
    storagelab_internal.report_html_strips(fs, o.strip_cells),
    storagelab_internal.report_html_footer(),
    '</body>', '</html>');
END
$fn$;
COMMENT ON FUNCTION storagelab.report_html(jsonb) IS
  'storagelab.findings as one self-contained HTML page (inline CSS and SVG, no script): summary, findings with fixes, overflow charts from the history, bytes to save by table and cause, visibility-map strips, what the caller could not read; options: top_tables, strip_cells, max_points, max_charts';

-- pgTAP: storagelab.report_html() without a browser (test/report_html.sh
-- renders it in Chromium): escaping, options, the page's shape, the chart
-- of a column with a recorded history (points, marked date), the chart of
-- one without, and the visibility-map strip against the map's own counts.
-- Data: a hostile-named serial pushed to 2^31 - 10^8 by setval with four
-- back-dated snapshots, a 40-page table frozen in its first quarter only
-- (the smallest that gives a strip of several runs).
\set ECHO none
\o /dev/null
SET client_min_messages = warning;
CREATE SCHEMA "s<&>";
CREATE TABLE "s<&>"."<script>alert(1)</script>""q""'a'&amp;" (id serial PRIMARY KEY, v int);
CREATE TABLE "s<&>".quiet (id serial PRIMARY KEY);
SELECT setval('"s<&>"."<script>alert(1)</script>""q""''a''&amp;_id_seq"', 2047483647);
SELECT setval('"s<&>".quiet_id_seq', 2100000000);
-- four snapshots, a day apart, growing by 10^7 a day
INSERT INTO storagelab.int_overflow_history (taken_at, schema_name, table_name, column_name, value)
SELECT now() - d * interval '1 day', 's<&>', '<script>alert(1)</script>"q"''a''&amp;', 'id', 2047483647 - d * 10000000
  FROM generate_series(1, 4) d;
SELECT storagelab_internal.int_overflow_growth_refit();
-- fillfactor 10: the updates below stay on their pages (HOT)
CREATE TABLE "s<&>".strip WITH (autovacuum_enabled = off, fillfactor = 10) AS
  SELECT g AS id FROM generate_series(1, 2000) g;
DELETE FROM "s<&>".strip WHERE (ctid::text::point)[0] >= 40;
VACUUM (FREEZE) "s<&>".strip;
UPDATE "s<&>".strip SET id = id WHERE (ctid::text::point)[0] >= 10;
INSERT INTO storagelab.settings VALUES ('findings.visibility_min_size', '8kB');
ANALYZE "s<&>".strip;
-- the page and the finding in one transaction: one now()
BEGIN;
SELECT storagelab.report_html() AS page \gset
SELECT to_char(overflow_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS want_at,
       to_char(now() + interval '10 days', 'YYYY-MM-DD') AS want_day
  FROM storagelab.findings WHERE relation = '"s<&>"."<script>alert(1)</script>""q""''a''&amp;"'::regclass \gset
COMMIT;
SELECT storagelab.report_html('{"strip_cells": 10, "max_points": 10}') AS small \gset
\o
SELECT plan(17);

SELECT is(storagelab_internal.html_escape(E'<a href="x">\'&amp;\u0001</a>'),
          '&lt;a href=&quot;x&quot;&gt;&#39;&amp;amp;' || U&'\FFFD' || '&lt;/a&gt;',
          'html_escape: markup characters as references, a control character as U+FFFD');
SELECT is(storagelab_internal.html_escape(NULL), '', 'html_escape(NULL) is empty');
SELECT throws_ok($$SELECT storagelab.report_html('[]')$$, '22023', NULL, 'options must be an object');
SELECT throws_ok($$SELECT storagelab.report_html('{"top": 1}')$$, '22023', 'unknown report_html() option: top',
                 'an unknown option is refused');
SELECT throws_ok($$SELECT storagelab.report_html('{"strip_cells": 5}')$$, '22023', NULL, 'an option out of range is refused');
SELECT ok(:'page' LIKE '<!DOCTYPE html>%</html>' AND :'page' ~ '<meta http-equiv="Content-Security-Policy" content="default-src ''none''; style-src ''unsafe-inline'';',
          'one document, with a Content-Security-Policy forbidding script and fetches');
SELECT ok(:'page' !~* '<script' AND :'page' !~* '(src|href)=' AND :'page' !~* ' on[a-z]+=',
          'no script element, no fetched resource, no event handler');
SELECT ok(strpos(:'page', '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&quot;q&quot;&quot;&#39;a&#39;&amp;amp;') > 0,
          'the hostile name appears escaped');
SELECT is((SELECT count(*) FROM regexp_matches(:'page', '<tr class="finding"', 'g'))::int,
          (SELECT count(*) FROM storagelab.findings)::int, 'one table row per finding');
-- the chart of the hostile column: 4 recorded points and the marked date
SELECT is(substring(:'page' from 'data-column="id" data-overflow-at="([^"]*)"><figcaption>&quot;s&lt;&amp;&gt;'),
          :'want_at', 'the chart marks overflow_at');
SELECT ok(:'page' ~ ('class="overflow-date"[^>]*>overflow ' || :'want_day'),
          'the marked date is 10 days ahead (10^8 left at 10^7 a day)');
SELECT is(substring(:'page' from '&amp;amp;&quot;.id: 2047483647 of 2147483647</figcaption><svg class="overflow"[^>]*data-points="(\d+)"'),
          '4', 'four recorded points');
SELECT is((SELECT count(*) FROM regexp_matches(substring(:'page' from '&#39;a&#39;&amp;amp;&quot;.id: 2047483647 of 2147483647</figcaption>(.*?)</figure>'),
                                               '<circle class="point"', 'g'))::int, 4, 'four circles drawn');
SELECT ok(substring(:'page' from 'quiet\.id: 2100000000 of 2147483647</figcaption>(.*?)</figure>')
            LIKE '%data-points="0"%too little history to project: 0 snapshots%',
          'a column without history says so');
SELECT ok(:'small' ~ '<figure class="strip" data-relation="&quot;s&lt;&amp;&gt;&quot;.strip" data-pages="40" data-cells="10">',
          'the strip has strip_cells runs');
-- pages 10 to 39 lost their bits to the update, pages 0 to 9 are frozen: runs of 4 pages
SELECT is((SELECT (all_visible, all_frozen, pages_read)::text FROM storagelab_internal.visibility_map_strip('"s<&>".strip', 10)),
          '("{4,4,2,0,0,0,0,0,0,0}","{4,4,2,0,0,0,0,0,0,0}","{4,4,4,4,4,4,4,4,4,4}")',
          'visibility_map_strip: per run, the map bits');
SELECT is((SELECT array_length(pages_read, 1) FROM storagelab_internal.visibility_map_strip('"s<&>".strip', 1000)), 40,
          'at most one run per page');

SELECT * FROM finish();

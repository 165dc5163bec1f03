#!/usr/bin/env bash
# TAP test (run by prove from scripts/run-suites.sh): storagelab.report_html()
# of the demo database, validated by an HTML5 parser and rendered in a real
# browser.
#
# The database is the demo's (scripts/demo.sh): pgbench tables (scale 1
# here), Pagila from ../shared/datasets/pagila or else demo/data/shop.sql,
# and demo/10_int_overflow.sql's sequences pushed toward 2^31 (setval).
# Added: two tables with hostile names (markup, quotes, &), one with a
# script that would change the page's title; a week of back-dated daily
# snapshots of three keys; a table frozen in its first quarter only (a strip;
# the rest of the database is vacuumed first, as one in service would be);
# findings' size thresholds lowered to 64 kB so that the small tables have
# column_width, alignment and visibility findings.
#
# Checked: html5lib parses the page in strict mode without an error; then
# headless Chromium (Debian's chromium) loads it once, dumping its DOM and a
# screenshot, and the DOM shows every finding of storagelab.findings, each
# overflow chart with one point per recorded snapshot and overflow_at as its
# marked date, one bar per table with bytes to save, one strip cell per run
# of pages, the hostile names as text, no script element and the title as
# written (no script ran).  Expectations are read in the transaction that
# made the page (one now()).  Without chromium or python3-html5lib (both in
# scripts/lib.sh's packages) their tests are skipped, with the reason.
# STORAGELAB_REPORT_SCREENSHOT=FILE keeps the screenshot (doc/report_html.png
# is one).  Chromium takes 10 to 30 s on a loaded machine: it runs once per
# run, and only on PostgreSQL 15 (the host's make test; the page is built by
# the same SQL on every major, whose html5lib check runs everywhere), unless
# STORAGELAB_BROWSER=1.
set -uo pipefail
: "${PG_MAJOR:?run from scripts/run-suites.sh}"

echo "1..10"
db=storagelab_report_html
work=$(mktemp -d)
chrome_pid=
cleanup() {
	[ -n "$chrome_pid" ] && kill "$chrome_pid" 2>/dev/null
	rm -rf "$work"
	dropdb --if-exists "$db" 2>/dev/null
}
trap cleanup EXIT
qp() { psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }

dropdb --if-exists "$db" 2>/dev/null
createdb "$db" || { echo "Bail out! createdb $db failed"; exit 1; }
pgbench -i -q -s 1 --foreign-keys "$db" >"$work/pgbench.log" 2>&1 ||
	{ echo "Bail out! pgbench -i failed: $(tail -1 "$work/pgbench.log")"; exit 1; }
if [ -f ../shared/datasets/pagila/pagila-schema.sql ]; then
	data=test/fixtures/pagila.sql
else
	data=demo/data/shop.sql
fi
qp -q -f "$data" >/dev/null || { echo "Bail out! loading $data failed"; exit 1; }
# vacuumed, as a database in service would be: the seeded visibility finding stands out
vacuumdb -q "$db" || { echo "Bail out! vacuumdb failed"; exit 1; }

qp -q >/dev/null <<'SQL' || { echo "Bail out! seeding failed"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION storagelab;
-- demo/10_int_overflow.sql's sequences
SELECT setval(s::regclass, v) FROM (VALUES ('public.actor_actor_id_seq', 2140000000),
  ('public.rental_rental_id_seq', 1700000000), ('public.payment_payment_id_seq', 1100000000)) x(s, v)
 WHERE to_regclass(s) IS NOT NULL;
CREATE TABLE public."<script>alert(1)</script>""q""'a'&amp;&" (id serial PRIMARY KEY, note text);
CREATE TABLE public."<script>document.title='ran'</script>" (id serial PRIMARY KEY);
SELECT setval(pg_get_serial_sequence('public."<script>alert(1)</script>""q""''a''&amp;&"', 'id'), 2000000000),
       setval(pg_get_serial_sequence('public."<script>document.title=''ran''</script>"', 'id'), 2100000000);
-- a week of daily snapshots before today's, growing by 10^6 (10^5 for actor) a day
INSERT INTO storagelab.int_overflow_history (taken_at, schema_name, table_name, column_name, value)
SELECT now() - d * interval '1 day', 'public', t, c, v - d * g
  FROM (VALUES ('<script>alert(1)</script>"q"''a''&amp;&', 'id', 2000000000, 1000000),
               ('actor', 'actor_id', 2140000000, 100000),
               ('<script>document.title=''ran''</script>', 'id', 2100000000, 1000000)) x(t, c, v, g),
       generate_series(1, 7) d
 WHERE to_regclass(format('public.%I', t)) IS NOT NULL;
-- frozen in its first quarter (its other pages lose their bits: a visibility
-- finding well past findings.all_visible_warning_pct, and a strip of two colours)
CREATE TABLE public.events WITH (autovacuum_enabled = off, fillfactor = 50) AS
  SELECT g AS id, 'event ' || g AS kind FROM generate_series(1, 20000) g;
VACUUM (FREEZE) public.events;
UPDATE public.events SET kind = kind WHERE id > 5000;
INSERT INTO storagelab.settings VALUES ('findings.min_saved_size', '64kB'),
  ('findings.visibility_min_size', '64kB');
ANALYZE;
SELECT storagelab.int_overflow_snapshot();
SQL

# The page and what it must show, in one transaction.
qp -q >/dev/null <<SQL || { echo "Bail out! report_html() failed"; exit 1; }
SET search_path = pg_catalog, pg_temp;
BEGIN;
SELECT storagelab.report_html() \g $work/report.html
SELECT json_build_object(
  'title', 'storagelab report: ' || current_database(),
  'findings', (SELECT json_agg(json_build_array(f.category, f.relation::text, f.column_name)) FROM storagelab.findings f),
  'charts', (SELECT json_agg(json_build_object('relation', f.relation::text, 'column', f.column_name,
                 'overflow_at', coalesce(to_char(f.overflow_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
                 'day', to_char(f.overflow_at, 'YYYY-MM-DD'),
                 'points', (SELECT count(*) FROM storagelab.int_overflow_history h JOIN pg_class c ON c.oid = f.relation
                             WHERE h.schema_name = c.relnamespace::regnamespace::text AND h.table_name = c.relname
                               AND h.column_name = f.column_name)))
             FROM storagelab.findings f WHERE f.category = 'int_overflow'),
  'bars', (SELECT count(DISTINCT relation) FROM storagelab.findings WHERE estimated_saved_bytes > 0),
  'strips', (SELECT json_object_agg(relation::text, least(100, pg_relation_size(relation) / current_setting('block_size')::int))
               FROM storagelab.findings WHERE category = 'visibility'),
  'hostile', json_build_array(format('public.%I', '<script>alert(1)</script>"q"''a''&amp;&'),
                              format('public.%I', '<script>document.title=''ran''</script>'))) \g $work/expect.json
COMMIT;
SQL

# Chromium, once: the DOM after loading, and a screenshot.  --no-sandbox:
# the suite may run as root, and the page is our own, offline, script-free.
browser=$(command -v chromium || true)
browser_status="chromium is not installed"
if [ "$PG_MAJOR" != 15 ] && [ -z "${STORAGELAB_BROWSER:-}" ]; then
	browser= browser_status="the browser part runs on PostgreSQL 15 only (STORAGELAB_BROWSER=1 runs it here)"
fi
if [ -n "$browser" ]; then
	DBUS_SESSION_BUS_ADDRESS=disabled: timeout 180 "$browser" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --no-first-run --disable-extensions --disable-background-networking \
		--user-data-dir="$work/profile" --window-size=1000,2200 --screenshot="$work/report.png" \
		--dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/chromium.log" &
	chrome_pid=$!
	if wait "$chrome_pid"; then
		browser_status=ok
	else
		browser_status="chromium failed: $(grep -v dbus "$work/chromium.log" | tail -1)"
	fi
	chrome_pid=
	[ -n "${STORAGELAB_REPORT_SCREENSHOT:-}" ] && [ -s "$work/report.png" ] &&
		cp "$work/report.png" "$STORAGELAB_REPORT_SCREENSHOT"
fi

# Debian's python3, where python3-html5lib installs (a python3 of pyenv or
# a virtualenv earlier in PATH would not see it)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
export WORK=$work BROWSER_STATUS=$browser_status
"$py" - <<'PY'
import json, os, sys
work = os.environ["WORK"]
n = 0
def ok(cond, what, diag=None):
    global n
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    if not cond and diag:
        print("\n".join("# " + l for l in str(diag).splitlines()))
def skip(count, why):
    global n
    for _ in range(count):
        n += 1
        print("ok %d # skip %s" % (n, why))
page = open(work + "/report.html", encoding="utf-8").read()
exp = json.load(open(work + "/expect.json"))
ok(page.startswith("<!DOCTYPE html>") and len(exp["findings"]) >= 4,
   "report_html() returned a page; the demo has %d findings" % len(exp["findings"]))
try:
    import html5lib
except ImportError:
    skip(1, "python3-html5lib is not installed")
else:
    try:
        html5lib.HTMLParser(strict=True).parse(page)
        ok(True, "html5lib parses the page without an error (strict)")
    except Exception as e:
        ok(False, "html5lib parses the page without an error (strict)", e)

browser = os.environ["BROWSER_STATUS"]
if browser != "ok" or "html5lib" not in sys.modules:
    skip(8, browser if browser != "ok" else "python3-html5lib is not installed")
    sys.exit(0)
dom = html5lib.parse(open(work + "/dom.html", encoding="utf-8").read(), treebuilder="etree",
                     namespaceHTMLElements=False)
def cls(e, c):
    return c in (e.get("class") or "").split()
def local(e):  # SVG elements are in the SVG namespace
    return e.tag.split("}")[-1] if isinstance(e.tag, str) else ""
def all_of(tag, c, root=dom):
    return [e for e in root.iter() if local(e) == tag and cls(e, c)]
def text(e):
    return "".join(e.itertext())

key = lambda f: [x or "" for x in f]
rows = sorted(([r.get("data-category"), r.get("data-relation"), r.get("data-column") or None]
               for r in all_of("tr", "finding")), key=key)
want = sorted(exp["findings"], key=key)
ok(rows == want, "every finding is a row of the findings table (%d)" % len(want), "rows: %s\nwant: %s" % (rows, want))

figs = {(f.get("data-relation"), f.get("data-column")): f for f in all_of("figure", "overflow-chart")}
bad = []
for c in exp["charts"] or []:
    f = figs.get((c["relation"], c["column"]))
    pts = len(all_of("circle", "point", f)) if f is not None else None
    svg = next((e for e in f.iter() if local(e) == "svg"), None) if f is not None else None
    if pts != c["points"] or svg is None or svg.get("data-points") != str(c["points"]):
        bad.append((c["relation"], c["column"], pts, c["points"]))
ok(exp["charts"] and len(figs) == len(exp["charts"]) and not bad,
   "one chart per int_overflow finding, one point per recorded snapshot", bad)

marked = [c for c in exp["charts"] or [] if c["overflow_at"]]
bad = []
for c in marked:
    f = figs.get((c["relation"], c["column"]))
    dates = [text(t) for t in all_of("text", "overflow-date", f)] if f is not None else []
    if f is None or f.get("data-overflow-at") != c["overflow_at"] or dates != ["overflow " + c["day"]]:
        bad.append((c, f.get("data-overflow-at") if f is not None else None, dates))
ok(len(marked) >= 2 and not bad, "each projected chart marks overflow_at (%d charts)" % len(marked), bad)

bars = all_of("g", "bar")
ok(exp["bars"] > 0 and len(bars) == min(20, exp["bars"]),
   "one bar per table with bytes to save (%d)" % len(bars), "want %s" % exp["bars"])

strips = {f.get("data-relation"): len(all_of("g", "cell", f)) for f in all_of("figure", "strip")}
ok(exp["strips"] and strips == exp["strips"], "one strip cell per run of pages, per visibility finding",
   "got %s\nwant %s" % (strips, exp["strips"]))

objects = [text(td) for td in all_of("td", "object")]
missing = [h for h in exp["hostile"] if not any(o.startswith(h + ".") or o == h for o in objects)]
ok(not missing, "the hostile names show as text", missing)

scripts = [e for e in dom.iter() if local(e) == "script"]
title = text(next(dom.iter("title")))
ok(not scripts and title == exp["title"], "no script element, the title as written (no script ran)",
   "scripts: %d, title: %r" % (len(scripts), title))

png = open(work + "/report.png", "rb").read() if os.path.exists(work + "/report.png") else b""
ok(png.startswith(b"\x89PNG") and len(png) > 10000, "a screenshot (%d bytes)" % len(png))
PY

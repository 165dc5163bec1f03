#!/usr/bin/env bash
# scripts/library-mix-test.sh: the current library serves every released
# version's SQL objects without crashing (scripts/test.sh runs it after the
# suites, so "make test" and every major of "make matrix" run it).
#
# A package upgrade replaces storagelab.so at once; each database keeps its
# old version's SQL objects until ALTER EXTENSION storagelab UPDATE runs
# there.  For each release that CHANGELOG.md lists with its commit (built as
# scripts/upgrade-test.sh builds it, cached in .build/releases/):
#   1. a throwaway cluster loads that release; CREATE EXTENSION storagelab
#      VERSION '<release>' in a small seeded database (a table with a serial
#      key near 2^31, a text column stored out of line, an index);
#   2. the current build is installed over it, without the ALTER;
#   3. every function and procedure of the extension (its members in
#      pg_proc, with valid arguments, and once more with only the required
#      ones when some have defaults) and every view is called, each in a new
#      session (which loads the new library).
# Each call must return, or fail with SQLSTATE 55000 "storagelab's library
# is newer than its SQL objects" (src/result_check.c); any other error fails
# the call, and a crash fails it and the run: a call whose connection is
# lost without an error, or after which the server log says "terminated by
# signal", crashed (pg_postmaster_start_time() does not tell: a crash
# restart keeps the postmaster and its start time).
# Prints one "ok"/"not ok" line per call and last "N passed, M failed"
# (", K skipped" when a release could not be built).
#
# Environment: PG_MAJOR (default 15).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }

psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# The seeded database: the objects the calls name.
SEED_SQL="
CREATE TABLE public.mix_t (id serial PRIMARY KEY, n int, payload text, b bytea);
ALTER TABLE public.mix_t ALTER payload SET STORAGE EXTERNAL;
INSERT INTO public.mix_t (n, payload, b)
  SELECT g, repeat(md5(g::text), 1 + g % 90), decode(md5(g::text), 'hex')
    FROM generate_series(1, 400) g;
SELECT setval('public.mix_t_id_seq', 2000000000);
VACUUM (ANALYZE) public.mix_t;"

# CALLS_SQL: one line per call, 'label<TAB>statement'.  A valid value per
# argument, by argument name and type; a function with defaults is called
# once more with only its required arguments.  Triggers and aggregates are
# left out (they cannot be called).
CALLS_SQL=$(cat <<'SQL'
CREATE FUNCTION pg_temp.arg(fn name, arg text, typ text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN typ = 'regclass' AND arg = 'seq' THEN '''public.mix_t_id_seq''::regclass'
    WHEN typ = 'regclass' AND arg = 'index' THEN '''public.mix_t_pkey''::regclass'
    WHEN typ = 'regclass' THEN '''public.mix_t''::regclass'
    WHEN typ = 'regclass[]' THEN 'ARRAY[''public.mix_t''::regclass]'
    WHEN typ = 'name' AND (fn LIKE '%toast%' OR fn LIKE 'storage%') THEN '''payload''::name'
    WHEN typ = 'name' THEN '''id''::name'
    WHEN typ = 'name[]' THEN 'ARRAY[''id''::name]'
    WHEN typ = 'oid' AND arg = 'owner' THEN '(SELECT relowner FROM pg_class WHERE oid = ''public.mix_t''::regclass)'
    WHEN typ = 'oid' THEN '''public.mix_t''::regclass::oid'
    WHEN typ = 'aclitem[]' THEN '(SELECT relacl FROM pg_class WHERE oid = ''public.mix_t''::regclass)'
    WHEN arg LIKE 'replace\_%' THEN 'NULL::' || typ
    WHEN arg = 'lens' THEN '''{4,-1}''::int2[]'
    WHEN arg = 'aligns' THEN '''{i,i}''::"char"[]'
    WHEN arg = 'storages' THEN '''{p,x}''::"char"[]'
    WHEN arg = 'widths' THEN '''{4,20}''::float8[]'
    WHEN arg = 'null_fracs' THEN '''{0,0.5}''::float8[]'
    WHEN arg = 'width_spreads' THEN '''{-1,-1}''::float8[]'
    WHEN arg = 'sort_keys' THEN '''{1,2}''::int4[]'
    WHEN arg = 'fillfactor' THEN '100'
    WHEN typ = 'smallint' THEN '1::smallint'
    WHEN typ = 'integer' THEN '10'
    WHEN typ = 'bigint' THEN '10::bigint'
    WHEN typ IN ('double precision', 'numeric') THEN '100::' || typ
    WHEN typ = 'boolean' THEN 'false'
    WHEN arg = 'mode' THEN '''blocking'''
    WHEN arg = 'storage' THEN '''external'''
    WHEN arg = 'objtype' THEN '''TABLE'''
    WHEN arg = 'objname' THEN '''public.mix_t'''
    WHEN fn = 'setting' OR arg = 'setting' THEN '''scripts.lock_timeout'''
    WHEN typ = 'text' THEN '''42'''
    WHEN typ = 'text[]' THEN 'ARRAY[''SELECT 1'']'
    WHEN typ LIKE '%[]' THEN '''{}''::' || typ
    WHEN typ = 'jsonb' THEN '''{}''::jsonb'
    ELSE 'NULL::' || typ
  END
$$;
WITH members AS (
  SELECT d.classid, d.objid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
   WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
     AND e.extname = 'storagelab'),
funcs AS (
  SELECT p.oid, p.proname, p.prokind, p.pronargs, p.pronargdefaults,
         (SELECT array_agg(pg_temp.arg(p.proname, coalesce(p.proargnames[o], ''), t::regtype::text) ORDER BY k)
            FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, k),
                 -- the k-th input argument's position among all arguments
                 LATERAL (SELECT o FROM (SELECT o, row_number() OVER (ORDER BY o) AS r
                                           FROM generate_series(1, coalesce(array_length(p.proallargtypes, 1), p.pronargs)) o
                                          WHERE coalesce(p.proargmodes[o], 'i') IN ('i', 'b', 'v')) x
                           WHERE x.r = k) pos) AS args
    FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
   WHERE p.prokind IN ('f', 'p')
     AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)),
calls AS (
  SELECT f.oid::regprocedure::text AS label, f.prokind, f.oid, f.args
    FROM funcs f
  UNION ALL
  SELECT f.oid::regprocedure::text || ' (defaults)', f.prokind, f.oid,
         f.args[1:f.pronargs - f.pronargdefaults]
    FROM funcs f WHERE f.pronargdefaults > 0)
SELECT label || E'\t' ||
       CASE prokind WHEN 'p' THEN 'CALL ' ELSE 'SELECT * FROM ' END ||
       oid::regproc::text || '(' || array_to_string(coalesce(args, '{}'), ', ') || ')'
  FROM calls
UNION ALL
SELECT 'view ' || c.oid::regclass::text || E'\tSELECT * FROM ' || c.oid::regclass::text
  FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
 WHERE c.relkind IN ('v', 'm')
ORDER BY 1;
SQL
)

# server_log: the cluster's log file (pg_lsclusters inside pg_virtualenv).
server_log() { pg_lsclusters -h | awk '{ print $7 }' | head -1; }

# wait_up: the server accepts connections again (after a crash: recovery),
# within a minute.
wait_up() {
	local i
	for i in $(seq 1 120); do
		psql -X -At -c 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

in_cluster() {
	local v c db log logsize label stmt out rc crashed crashes=0
	while read -r v c; do
		[ -f "$REPO/.build/releases/$v/pg$PG_MAJOR/.built" ] || continue
		[ "$v" = "$EXTVERSION" ] && continue
		db=storagelab_mix_${v//./_}
		release_stage "$MIX_STAGE" "$v"
		createdb "$db"
		psql_ -d "$db" -c "CREATE EXTENSION storagelab VERSION '$v'"
		psql_ -d "$db" -o /dev/null <<<"$SEED_SQL"
		release_stage "$MIX_STAGE" current
		echo "# $v's SQL objects, the library of $EXTVERSION: every function and view"
		log=$(server_log)
		logsize=$(stat -c %s "$log" 2>/dev/null || echo 0)
		while IFS=$'\t' read -r label stmt; do
			rc=0
			out=$(PGOPTIONS='-c statement_timeout=120s -c client_min_messages=warning' \
				psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$db" -o /dev/null \
				-c "$stmt" 2>&1) || rc=$?
			# A crash: the connection lost without an error, or the log
			# naming a signal since the call began.
			crashed=
			if [ "$rc" -ne 0 ] && ! grep -qE '^(ERROR|FATAL):' <<<"$out"; then
				crashed=1
			fi
			if [ -f "$log" ] && tail -c +"$((logsize + 1))" "$log" | grep -q 'terminated by signal'; then
				crashed=1
				out+=$'\n'$(tail -c +"$((logsize + 1))" "$log" | grep -A1 'terminated by signal' | head -n 4)
			fi
			if [ -n "$crashed" ]; then
				crashes=$((crashes + 1))
				not_ok "$v: $label crashes the server"
				printf '%s\n' "$stmt" "$out" | sed 's/^/#   /'
				wait_up || true
			elif [ "$rc" -eq 0 ]; then
				ok "$v: $label returns"
			elif grep -q "^ERROR:  55000: storagelab's library is newer than its SQL objects" <<<"$out" &&
				grep -q '^HINT:  Run ALTER EXTENSION storagelab UPDATE\.' <<<"$out"; then
				ok "$v: $label refuses: $(sed -n 's/^DETAIL:  //p' <<<"$out" | head -1)"
			else
				not_ok "$v: $label fails otherwise"
				printf '%s\n' "$stmt" "$out" | head -n 8 | sed 's/^/#   /'
			fi
			logsize=$(stat -c %s "$log" 2>/dev/null || echo 0)
		done < <(psql_ -At -d "$db" <<<"$CALLS_SQL")
		if [ "$crashes" -eq 0 ]; then
			ok "$v: no call crashed the server (no connection lost, no signal in the server log)"
		else
			not_ok "$v: $crashes calls crashed the server"
		fi
	done < <(release_list)
	echo "$passed $failed" >"$MIX_COUNTS"
}

if [ "${1:-}" = --in-cluster ]; then
	in_cluster
	exit 0
fi

EXTVERSION=$(extension_version)
export EXTVERSION
# When run on its own (scripts/test.sh has built the current version).
if [ -z "${STORAGELAB_BUILT:-}" ]; then
	ensure_packages
	build_extension
fi
echo "# library-mix test: released versions' SQL objects served by the library of $EXTVERSION"
have=0
while read -r v c; do
	[ "$v" = "$EXTVERSION" ] && continue
	if why=$(release_build "$v" "$c"); then
		have=$((have + 1))
	elif [ "${CI:-}" = true ]; then
		not_ok "release $v: $why"
	else
		skipped=$((skipped + 1))
		echo "skipped - release $v: $why"
	fi
done < <(release_list)

if [ "$have" -gt 0 ]; then
	mix_stage=$(mktemp -d /tmp/storagelab-mix.XXXXXX)
	chmod 755 "$mix_stage"
	trap 'rm -rf "$mix_stage" "$mix_stage.counts"' EXIT
	export MIX_STAGE=$mix_stage MIX_COUNTS=$mix_stage.counts
	echo "0 1" >"$MIX_COUNTS"	# if the cluster never starts
	STAGE=$mix_stage with_cluster -- "$REPO/scripts/library-mix-test.sh" --in-cluster || true
	read -r cp cf <"$MIX_COUNTS"
	passed=$((passed + cp)) failed=$((failed + cf))
fi
summary_line "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]

# scripts/rerunnable.awk: the install parts (extension/[0-9]*.sql), rewritten
# so that they run again over an older version of the extension.  The
# Makefile appends its output to the hand-written update steps
# (extension/updates/*.sql) to build each upgrade script
# storagelab--A--<version>.sql (scripts/upgrade-script.sh).
#
#   awk -f scripts/rerunnable.awk extension/[0-9]*.sql
#
# Only statements at the top level are rewritten (never text inside a
# function body, a string or a comment); a statement starts at the beginning
# of a line.  Each one becomes:
#   CREATE FUNCTION|PROCEDURE|VIEW|TRIGGER|AGGREGATE   CREATE OR REPLACE ...
#   CREATE TABLE|SCHEMA|[UNIQUE] INDEX|SEQUENCE        ... IF NOT EXISTS
#   CREATE TYPE|DOMAIN name                            created when missing
#                                                      (a DO block)
#   CREATE POLICY p ON t                               DROP POLICY IF EXISTS
#                                                      first, then created
#   INSERT INTO a table in shipped[] below             ON CONFLICT: the
#                                                      shipped row replaces
#                                                      the old one
#   GRANT|REVOKE privileges ON [kind] a, b TO|FROM r   a DO block: run for
#                                                      each object the update
#                                                      created, never for one
#                                                      that was there before
#                                                      it (see below)
#   COMMENT, SELECT, SET, RESET,                       as they are (they
#   ALTER TABLE t ENABLE|FORCE ROW LEVEL SECURITY      run again as they are)
#   DO $tag$ -- runs again as it is                   as it is: the part says
#                                                      so on the DO line
# The guard lines "\echo ... \quit" are left out.  Any other statement is
# an error naming it: it cannot run twice, so it belongs in a table's
# definition, in an update file, or taught to this script.
#
# Privileges: an object that existed before the update keeps the ones it
# has (a DBA's GRANT or REVOKE, and pg_init_privs, against which pg_dump
# writes them); an object the update creates gets the part's.  The upgrade
# script starts by listing the objects that exist ("classid:objid," in the
# setting storagelab_upgrade.existing, scripts/upgrade-script.sh); a
# GRANT or REVOKE runs for each of its objects not in that list.
#
# What a re-run cannot do (the update file's job): change a function's
# argument types or names or its result type (CREATE OR REPLACE refuses or
# makes an overload), change a view's columns other than appending, change a
# table or type that exists, drop anything, change the privileges of an
# object that exists.

BEGIN {
	# Tables the extension ships rows in: the conflict target and what a
	# shipped row updates.
	shipped["storagelab_internal.setting_defaults"] = \
		"ON CONFLICT (name) DO UPDATE SET default_value = EXCLUDED.default_value, description = EXCLUDED.description"
	tag = ""; squote = 0; dquote = 0; bcomment = 0; started = 0
	mode = ""; failed = 0
}

# scan(line): follow quoting through line; sets ended when a top-level ";"
# ends a statement on it (and started when statement text remains after it).
function scan(line,   i, n, c, p, rest) {
	n = length(line); i = 1; ended = 0
	while (i <= n) {
		c = substr(line, i, 1)
		if (tag != "") {
			p = index(substr(line, i), tag)
			if (p == 0) return
			i += p - 1 + length(tag); tag = ""; continue
		}
		if (squote) { if (c == "'") squote = 0; i++; continue }
		if (dquote) { if (c == "\"") dquote = 0; i++; continue }
		if (bcomment) {
			if (substr(line, i, 2) == "*/") { bcomment = 0; i += 2 } else i++
			continue
		}
		if (substr(line, i, 2) == "--") return
		if (substr(line, i, 2) == "/*") { bcomment = 1; i += 2; continue }
		if (c == "'") {
			# an E'' string's backslash escapes (\') are not followed here
			if (substr(line, i - 1, 1) ~ /[Ee]/ && (i == 2 || substr(line, i - 2, 1) !~ /[A-Za-z0-9_$]/))
				fail("an E'' string outside a function body: write it with '' instead")
			squote = 1; started = 1; i++; continue
		}
		if (c == "\"") { dquote = 1; started = 1; i++; continue }
		if (c == "$") {
			rest = substr(line, i)
			if (match(rest, /^\$([A-Za-z_][A-Za-z_0-9]*)?\$/)) {
				tag = substr(rest, 1, RLENGTH); started = 1; i += RLENGTH; continue
			}
		}
		if (c == ";") { ended = 1; started = 0; i++; continue }
		if (c != " " && c != "\t") started = 1
		i++
	}
}

function toplevel() { return tag == "" && !squote && !dquote && !bcomment }

function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
}

# A statement starts on this line: rewrite its first line, or start
# collecting it (mode) when its end needs rewriting too.
function start(line,   w, name) {
	if (line ~ /^\\echo /) return ""
	if (line ~ /^CREATE (FUNCTION|PROCEDURE|VIEW|TRIGGER|AGGREGATE) /) {
		sub(/^CREATE /, "CREATE OR REPLACE ", line); return line
	}
	if (line ~ /^CREATE OR REPLACE (FUNCTION|PROCEDURE|VIEW|TRIGGER|AGGREGATE) /) return line
	if (line ~ /^CREATE (TABLE|SCHEMA|SEQUENCE|INDEX|UNIQUE INDEX) /) {
		if (line ~ /IF NOT EXISTS/) return line
		if (line ~ /^CREATE (UNIQUE )?INDEX (ON|CONCURRENTLY) /) { fail("an index needs a name to be created again: " line); return line }
		sub(/^CREATE (TABLE|SCHEMA|SEQUENCE|INDEX|UNIQUE INDEX) /, "& IF NOT EXISTS ", line)
		sub(/  IF NOT EXISTS/, " IF NOT EXISTS", line)
		return line
	}
	if (line ~ /^CREATE (TYPE|DOMAIN) /) {
		split(line, w, /[ (]+/); name = w[3]
		mode = "type"; buf = line; typename = name; return "\001"
	}
	if (line ~ /^CREATE POLICY /) {
		split(line, w, / +/)
		if (w[4] != "ON") { fail("CREATE POLICY name ON table on one line: " line); return line }
		return "DROP POLICY IF EXISTS " w[3] " ON " w[5] ";\n" line
	}
	if (line ~ /^INSERT INTO /) {
		split(line, w, /[ (]+/); name = w[3]
		if (!(name in shipped)) { fail("INSERT INTO " name ": add the table to shipped[] in scripts/rerunnable.awk"); return line }
		mode = "insert"; conflict = shipped[name]; return "\001" line
	}
	if (line ~ /^DO \$[A-Za-z_]*\$ -- runs again as it is$/) return line
	if (line ~ /^(GRANT|REVOKE) /) {
		mode = "grant"; buf = line; return "\001"
	}
	if (line ~ /^(COMMENT ON|SELECT|SET|RESET) / ||
	    line ~ /^ALTER TABLE [^ ]+ (ENABLE|FORCE) ROW LEVEL SECURITY;/)
		return line
	fail("cannot be run again over an older version (see the head of scripts/rerunnable.awk): " line)
	return line
}

# The last line of a collected statement (its ";" ends the line).
function finish(line,   out) {
	if (line !~ /;[ \t]*$/) { fail("the statement must end with ';' at the end of its line"); return line }
	if (mode == "insert") {
		sub(/;[ \t]*$/, "\n  " conflict ";", line)
		mode = ""; return line
	}
	if (mode == "grant") { mode = ""; return grant_block(buf) }
	# mode == "type": created only when missing
	if (index(buf, "$upgrade_create$") > 0) fail("a type definition containing $upgrade_create$")
	out = "DO $upgrade_once$ BEGIN\n" \
	      "IF pg_catalog.to_regtype('" typename "') IS NULL THEN\n" \
	      "EXECUTE $upgrade_create$\n" buf "\n$upgrade_create$;\n" \
	      "END IF;\nEND $upgrade_once$;"
	mode = ""; return out
}

# grant_block(stmt): the GRANT or REVOKE statement stmt (its lines) as a DO
# block that runs it for each of its objects the update created.
function grant_block(stmt,   verb, on, kind, rest, i, n, c, depth, dq, cut, objs, obj, out, nobj, o, cast, cat) {
	if (stmt ~ /--/) { fail("a comment inside a GRANT or REVOKE statement"); return stmt }
	if (index(stmt, "$") > 0) { fail("a $ inside a GRANT or REVOKE statement"); return stmt }
	gsub(/\n[ \t]*/, " ", stmt)
	sub(/;[ \t]*$/, "", stmt)
	verb = (stmt ~ /^GRANT /) ? "TO" : "FROM"
	on = index(stmt, " ON ")
	if (on == 0) { fail("a GRANT or REVOKE without ON (a role's membership?): " stmt); return stmt }
	rest = substr(stmt, on + 4)
	kind = ""; cast = "regclass"; cat = "pg_class"
	if (match(rest, /^(FUNCTION|PROCEDURE|ROUTINE|SCHEMA|TYPE|DOMAIN|TABLE|SEQUENCE) /)) {
		kind = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
		if (kind ~ /^(FUNCTION|PROCEDURE|ROUTINE)/) { cast = "regprocedure"; cat = "pg_proc" }
		else if (kind ~ /^SCHEMA/) { cast = "regnamespace"; cat = "pg_namespace" }
		else if (kind ~ /^(TYPE|DOMAIN)/) { cast = "regtype"; cat = "pg_type" }
	}
	if (rest ~ /^ALL /) { fail("GRANT or REVOKE ON ALL ... IN SCHEMA: name the objects: " stmt); return stmt }
	# The objects end at " TO " / " FROM " outside parentheses; split at commas.
	n = length(rest); depth = 0; dq = 0; cut = 0; nobj = 0; obj = ""
	for (i = 1; i <= n; i++) {
		c = substr(rest, i, 1)
		if (dq) { if (c == "\"") dq = 0; obj = obj c; continue }
		if (c == "\"") { dq = 1; obj = obj c; continue }
		if (c == "(") depth++
		if (c == ")") depth--
		if (depth == 0 && substr(rest, i, length(verb) + 2) == " " verb " ") { cut = i; break }
		if (depth == 0 && c == ",") { objs[++nobj] = obj; obj = ""; continue }
		obj = obj c
	}
	if (cut == 0) { fail("no " verb " in: " stmt); return stmt }
	objs[++nobj] = obj
	out = "DO $upgrade_grant$ BEGIN\n-- " stmt ";\n-- only on the objects this update created (scripts/rerunnable.awk)"
	for (o = 1; o <= nobj; o++) {
		obj = objs[o]; sub(/^ +/, "", obj); sub(/ +$/, "", obj)
		out = out "\nIF pg_catalog.strpos(coalesce(pg_catalog.current_setting('storagelab_upgrade.existing', true), ''), " \
		      "',' || 'pg_catalog." cat "'::pg_catalog.regclass::pg_catalog.oid || ':' || $o$" obj "$o$::pg_catalog." cast "::pg_catalog.oid || ',') = 0 THEN\n" \
		      "  EXECUTE $s$" substr(stmt, 1, on + 3) kind obj substr(rest, cut) "$s$;\nEND IF;"
	}
	return out "\nEND $upgrade_grant$;"
}

FNR == 1 {
	if (!toplevel() || started) fail("the previous part ends inside a statement")
	tag = ""; squote = 0; dquote = 0; bcomment = 0; started = 0; mode = ""
	printf "\n-- from %s\n", FILENAME
}

{
	line = $0
	if (mode == "" && toplevel() && !started && line !~ /^[ \t]*(--.*)?$/ && line !~ /^\/\*/) {
		line = start(line)
		if (line == "") next
	}
	scan($0)
	if ((mode == "type" || mode == "grant") && line != "\001") buf = buf "\n" $0
	if (mode != "" && ended) {
		if (mode == "insert") { sub(/^\001/, "", line); line = finish(line) }
		else line = finish($0)
	} else if (mode == "type" || mode == "grant") next
	sub(/^\001/, "", line)
	print line
}

END {
	if (mode != "" || !toplevel()) fail("the last part ends inside a statement")
	if (failed) exit 1
}

#!/usr/bin/env bash
# storagelab's demo command (README: "make demo").
#
# Installs missing Debian packages, builds and installs the extension, starts
# a throwaway cluster, loads demo data (pgbench tables, and Pagila from
# ../shared/datasets/pagila beside the repository or, without it, the
# Pagila-shaped shop demo/data/shop.sql builds) and prints what the advisor
# finds: each demo/*.sql in name order, in psql's aligned format.
#
# Environment: PG_MAJOR (default 15), DEMO_SCALE (pgbench scale, default 2).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ensure_packages
build_extension
log "installing storagelab into PostgreSQL $PG_MAJOR"
install_extension
with_cluster -- bash -c '
	set -euo pipefail
	cd "$REPO"
	createdb demo
	pgbench -i -q -s "${DEMO_SCALE:-2}" --foreign-keys demo 2>&1 | tail -1
	if [ -f ../shared/datasets/pagila/pagila-schema.sql ]; then
		psql -X -q -d demo -v ON_ERROR_STOP=1 -f test/fixtures/pagila.sql
		echo "loaded Pagila"
	else
		psql -X -q -d demo -v ON_ERROR_STOP=1 -f demo/data/shop.sql
		echo "loaded demo/data/shop.sql, a Pagila-shaped shop (../shared/datasets/pagila is missing)"
	fi
	psql -X -q -d demo -c "CREATE EXTENSION storagelab"
	for f in demo/*.sql; do
		echo
		echo "######## $f"
		psql -X -d demo -v ON_ERROR_STOP=1 -P pager=off -f "$f"
	done
'

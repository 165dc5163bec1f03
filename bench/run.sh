#!/usr/bin/env bash
# storagelab benchmarks (CONTRIBUTING.md: "make bench SCALE=n").
#
# Builds the extension, starts a throwaway cluster, and runs each
# bench/sections/*.sh in name order (or only those named in SECTIONS, e.g.
# SECTIONS="10_int_overflow").  Each section builds its data at the given
# scale and prints timings as ratios against anchors measured in the same
# run, so that the noise of a shared machine cancels out.
#
#   bench/run.sh [SCALE]          SCALE defaults to 1 (sections say what it means)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
export SCALE=${1:-${SCALE:-1}}
export SECTIONS=${SECTIONS:-}

ensure_packages
build_extension
# max_locks_per_transaction: section 60's anchor count(*) FROM pg_sequences
# locks every sequence (40,000 and more ran out of the default lock table).
with_cluster -o "shared_buffers=1GB" -o "max_wal_size=8GB" -o "checkpoint_timeout=30min" \
	-o "max_locks_per_transaction=1024" \
	-- bash -c '
	set -euo pipefail
	. "$REPO/bench/lib.sh"
	bench_header
	for f in "$REPO"/bench/sections/*.sh; do
		name=$(basename "$f" .sh)
		if [ -n "$SECTIONS" ] && ! grep -qw "$name" <<<"$SECTIONS"; then continue; fi
		echo
		echo "## $name (scale $SCALE)"
		. "$f"
	done
'

# storagelab: PGXS build.
#
#   make                  build the C module and the install script
#   make install          install into the PostgreSQL that PG_CONFIG names
#   make test             install missing packages, build, run pg_regress + pgTAP
#                         in a throwaway cluster (scripts/test.sh)
#   make demo             the same setup, then show the advisor on demo data
#   make bench SCALE=n    benchmarks in a throwaway cluster (bench/run.sh)
#   make matrix [PG_MAJORS="17 18 19"]
#                         the tests on each PostgreSQL major (default: all of
#                         15 17 18 19; Debian chroots, scripts/matrix.sh)
#   make valgrind         the tests against a server running under valgrind

PG_CONFIG ?= pg_config

EXTENSION = storagelab
EXTVERSION = $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" $(EXTENSION).control)

MODULE_big = storagelab
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))

# The install script is assembled from extension/*.sql, in name order
# (one part per capability).  Upgrade scripts live in extension/ too.
INSTALL_PARTS = $(sort $(wildcard extension/[0-9]*.sql))
DATA_built = $(EXTENSION)--$(EXTVERSION).sql
DATA = $(filter-out $(INSTALL_PARTS),$(wildcard extension/$(EXTENSION)--*--*.sql))

# pg_regress tests: sql/NAME.sql against expected/NAME.out, listed explicitly.
REGRESS = \
	extension \
	int_overflow \
	bigint_migration \
	heap_visibility \
	toast \
	column_waste
REGRESS_OPTS = --load-extension=storagelab

# The reference pages (doc/*.md; not doc/design/, which is for developers).
# PGXS installs DOCS flat into $(docdir)/extension/; they go into a
# subdirectory of their own there instead (docmoduledir, below), so that
# generic names such as settings.md cannot clash with another extension's.
DOCS = $(sort $(wildcard doc/*.md))

PG_CPPFLAGS = -I$(srcdir)/src -DSTORAGELAB_VERSION=\"$(EXTVERSION)\"

EXTRA_CLEAN = results regression.diffs regression.out

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies (PostgreSQL built without
# --enable-depend): every object depends on every header of src/, so that a
# pull that changes a header rebuilds the objects compiled against the old
# one (an object with a stale struct layout crashed the server).
$(OBJS): $(wildcard src/*.h)

# After PGXS, which sets it: $(docdir)/extension/storagelab/ for DOCS.
docmoduledir := extension/$(EXTENSION)

$(EXTENSION)--$(EXTVERSION).sql: $(INSTALL_PARTS) $(EXTENSION).control
	cat $(INSTALL_PARTS) > $@

.PHONY: test demo bench matrix valgrind
test:
	scripts/test.sh

demo:
	scripts/demo.sh

bench:
	bench/run.sh $(SCALE)

matrix:
	scripts/matrix.sh $(PG_MAJORS)

valgrind:
	scripts/valgrind.sh

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
#   make installcheck     pg_regress against a running server (PGXS)
#   make dist             storagelab-<version>.zip for PGXN (git archive)

PG_CONFIG ?= pg_config

EXTENSION = storagelab
EXTVERSION = $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" $(EXTENSION).control)

MODULE_big = storagelab
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))

# The install script is assembled from extension/*.sql, in name order
# (one part per capability).
INSTALL_PARTS = $(sort $(wildcard extension/[0-9]*.sql))

# The upgrade scripts are built too, one from each earlier version A that
# has an update file extension/updates/A--B.sql: storagelab--A--<version>.sql
# is the chain of update files from A to <version> (what cannot be run
# again: drops, ALTER TABLE, rows moved) followed by every install part made
# re-runnable (scripts/upgrade-script.sh, scripts/rerunnable.awk).  Neither
# is committed; make install, make dist's users and the Debian package build
# them.  See CONTRIBUTING.md, "Versions and upgrades".
UPDATE_FILES = $(sort $(wildcard extension/updates/*--*.sql))
UPGRADE_FROM = $(foreach f,$(UPDATE_FILES),$(firstword $(subst --, ,$(notdir $(f)))))
UPGRADE_SCRIPTS = $(UPGRADE_FROM:%=$(EXTENSION)--%--$(EXTVERSION).sql)
DATA_built = $(EXTENSION)--$(EXTVERSION).sql $(UPGRADE_SCRIPTS)

# pg_regress tests: sql/NAME.sql against expected/NAME.out, listed explicitly.
REGRESS = \
	extension \
	int_overflow \
	bigint_migration \
	heap_visibility \
	toast \
	column_waste
REGRESS_OPTS = --load-extension=storagelab

# Tests that load the Pagila sample database (test/fixtures/pagila.sql) read
# it from ../shared/datasets/pagila beside the repository.  Without it they
# are left out of installcheck, each reported as skipped with the folder.
PAGILA_DIR = $(abspath ../shared/datasets/pagila)
ifeq ($(wildcard $(PAGILA_DIR)/pagila-schema.sql),)
REGRESS_SKIPPED := $(basename $(notdir $(shell grep -l 'fixtures/pagila\.sql' $(REGRESS:%=sql/%.sql))))
REGRESS := $(filter-out $(REGRESS_SKIPPED),$(REGRESS))
endif

# The reference pages (doc/*.md; not doc/design/, which is for developers).
# PGXS installs DOCS flat into $(docdir)/extension/; they go into a
# subdirectory of their own there instead (docmoduledir, below), so that
# generic names such as settings.md cannot clash with another extension's.
# doc/monitoring/queries.yaml (postgres_exporter) and alerts.yaml (Prometheus
# alerting rules) go beside them.
DOCS = $(sort $(wildcard doc/*.md)) doc/monitoring/queries.yaml doc/monitoring/alerts.yaml

PG_CPPFLAGS = -I$(srcdir)/src -DSTORAGELAB_VERSION=\"$(EXTVERSION)\"

EXTRA_CLEAN = results regression.diffs regression.out $(EXTENSION)--*.sql.tmp

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

$(UPGRADE_SCRIPTS): $(EXTENSION)--%--$(EXTVERSION).sql: $(UPDATE_FILES) $(INSTALL_PARTS) \
		$(EXTENSION).control scripts/upgrade-script.sh scripts/rerunnable.awk
	$(SHELL) scripts/upgrade-script.sh $* $(EXTVERSION) $(INSTALL_PARTS) > $@.tmp
	mv $@.tmp $@

# make dist: the release archive for PGXN, storagelab-<version>.zip, from git
# archive of HEAD (committed files only); <version> is default_version as
# META.json spells it (1.1 -> 1.1.0).
DISTVERSION = $(EXTVERSION)$(if $(word 3,$(subst ., ,$(EXTVERSION))),,.0)
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(DISTVERSION)/ \
		-o $(EXTENSION)-$(DISTVERSION).zip HEAD
	@echo "wrote $(EXTENSION)-$(DISTVERSION).zip"

installcheck: report-skipped
report-skipped:
	@for t in $(REGRESS_SKIPPED); do \
		echo "skipped: sql/$$t.sql needs $(PAGILA_DIR), which is missing"; done

.PHONY: test demo bench matrix valgrind report-skipped dist
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

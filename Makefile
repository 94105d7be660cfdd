# stallscope — one binary, static libraries per folder, tests against real
# PostgreSQL and HTTP. `make help` lists the targets.

CC ?= cc
BUILD ?= build
SANITIZE ?=
PYTHON ?= /usr/bin/python3
# The shared material (Xcode corpus, real payloads) lives beside the
# repository. A clone of a local checkout (CI clones into a temp dir) finds
# it beside the checkout it was cloned from.
SHARED ?= $(firstword $(wildcard ../shared) \
	$(wildcard $(dir $(abspath $(shell git config --get remote.origin.url 2>/dev/null)))shared) ../shared)
export STALLSCOPE_SHARED ?= $(abspath $(SHARED))
export STALLSCOPE_FORMATS ?= $(STALLSCOPE_SHARED)/formats
LLVM_BIN ?= /usr/lib/llvm-14/bin

WARN := -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion \
	-Wmissing-prototypes -Wstrict-prototypes -Wvla -Wwrite-strings \
	-Wformat-security -fno-common
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. -MMD -MP
ALL_LDFLAGS := $(LDFLAGS)
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Why each library: see README.md, "Dependencies".
LIBS := -ldwarf -lz -larchive -lxxhash -ljansson -lmicrohttpd -lpq \
	-lsodium -lcurl -lc++abi -lpthread -lm

# Lowest first: a module includes only headers of modules before it
# (docs/ARCHITECTURE.md; `make check-layers` enforces it). The server is
# four libraries, one per role: server/service → server/http → server/api
# → server/cli.
MODULES := common symbolizer store ingest server/service server/http \
	server/api server/cli
# server/cli/main.c holds main(); everything else is a library too so
# tests can link handlers. A module's sources are its folder's and those of
# its subfolders one level down (server/api/<resource>/, by URL).
lib_srcs = $(filter-out server/cli/main.c,$(wildcard $(1)/*.c $(1)/*/*.c))
lib_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(call lib_srcs,$(1)))
# build/libserver-api.a for server/api.
lib_file = $(BUILD)/lib$(subst /,-,$(1)).a
LIBFILES := $(foreach m,$(MODULES),$(call lib_file,$(m)))
# Link order: dependents first.
LINK_LIBS := $(foreach m,$(shell echo $(MODULES) | tr ' ' '\n' | tac),$(call lib_file,$(m)))

.PHONY: all run test unit asan fuzz bench fixtures clean help style check-layers docs \
	integration oracle deps test-deps check-length FORCE

all: $(BUILD)/stallscope

# Whatever target a newcomer types first on a fresh machine, the packages
# come before the compiler: every object waits for this (order-only, so it
# never forces a rebuild). It costs a dpkg query when nothing is missing.
deps:
	@scripts/install-deps.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The dashboard's files, built into libserver-api (server/api/ops/web_assets.h).
WEB_FILES := $(sort $(wildcard web/*.html web/*.js web/*.css))
extra_objs_server/api := $(BUILD)/obj/gen/web_assets.o
# The list itself is a prerequisite, so a file removed or renamed in web/
# rebuilds too; it is rewritten only when it changes.
$(BUILD)/gen/web_files: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WEB_FILES)' | cmp -s - $@ || echo '$(WEB_FILES)' >$@
$(BUILD)/gen/web_assets.c: scripts/embed-web.sh $(WEB_FILES) $(BUILD)/gen/web_files
	scripts/embed-web.sh $@ $(WEB_FILES)
$(BUILD)/obj/gen/web_assets.o: $(BUILD)/gen/web_assets.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The migrations this build's statements were written for, built into
# libstore (st_schema_versions in store/store.h): `serve` refuses a
# database migrated past them or not up to them. Rewritten only when the
# list of schema/NNN_name.sql files changes.
SCHEMA_FILES := $(sort $(notdir $(wildcard schema/[0-9]*_*.sql)))
extra_objs_store := $(BUILD)/obj/gen/schema_versions.o
$(BUILD)/gen/schema_files: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SCHEMA_FILES)' | cmp -s - $@ || echo '$(SCHEMA_FILES)' >$@
$(BUILD)/gen/schema_versions.c: scripts/schema-versions.sh $(BUILD)/gen/schema_files
	scripts/schema-versions.sh $@ $(SCHEMA_FILES)
$(BUILD)/obj/gen/schema_versions.o: $(BUILD)/gen/schema_versions.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

define module_lib
$(call lib_file,$(1)): $(call lib_objs,$(1)) $(extra_objs_$(1))
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(if $$^,ar rcs $$@ $$^,ar rcs $$@)
endef
$(foreach m,$(MODULES),$(eval $(call module_lib,$(m))))

$(BUILD)/stallscope: $(BUILD)/obj/server/cli/main.o $(LIBFILES)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LINK_LIBS) $(LIBS)

# ---- unit tests (cmocka): tests/unit/test_<module>.c, one binary each ----
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

$(BUILD)/tests/%: tests/unit/%.c $(LIBFILES) | test-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LINK_LIBS) $(LIBS) -lcmocka

# ---- fixtures: real Mach-O/dSYM files built with clang/ld64.lld/dsymutil ----
fixtures: $(BUILD)/fixtures/.stamp
$(BUILD)/fixtures/.stamp: tests/fixtures/build.sh $(wildcard tests/fixtures/src/*) | test-deps
	tests/fixtures/build.sh $(BUILD)/fixtures

unit: $(UNIT_BINS) fixtures
	@set -e; for t in $(UNIT_BINS); do \
		STALLSCOPE_FIXTURES=$(BUILD)/fixtures ./$$t; done

# Oracle comparison (llvm-symbolizer) and HTTP/PostgreSQL integration tests.
oracle: $(BUILD)/stallscope fixtures
	STALLSCOPE_BIN=$(BUILD)/stallscope STALLSCOPE_FIXTURES=$(BUILD)/fixtures \
	LLVM_BIN=$(LLVM_BIN) $(PYTHON) -m pytest -q -p no:cacheprovider tests/oracle

integration: $(BUILD)/stallscope fixtures
	STALLSCOPE_BIN=$(BUILD)/stallscope STALLSCOPE_FIXTURES=$(BUILD)/fixtures \
	LLVM_BIN=$(LLVM_BIN) $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

test-deps:
	@scripts/install-deps.sh --test

# The libraries' order (MODULES) and no include cycle; its own test first
# shows it fails on an upward include and on a cycle.
check-layers:
	$(PYTHON) scripts/check-layers-test.py $(MODULES)
	$(PYTHON) scripts/check-layers.py $(MODULES)

test: test-deps check-layers check-length
	$(MAKE) all $(UNIT_BINS)
	$(MAKE) unit
	$(MAKE) oracle
	$(MAKE) integration

# Unit, oracle and integration tests again, built with ASan + UBSan.
asan:
	$(MAKE) BUILD=build/asan SANITIZE=address,undefined CC=clang \
		CFLAGS="-O1 -g" unit oracle integration

run: all
	@scripts/run.sh

# ---- fuzzing (libFuzzer, clang) ----
FUZZ_SECONDS ?= 60
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
fuzz: test-deps
	$(MAKE) BUILD=build/fuzz CC=clang SANITIZE=address,undefined \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(LIBFILES:$(BUILD)/%=build/fuzz/%)
	@# The Swift demangler's seeds: the names of Swift's own test list,
	@# one file each (not copied into the repository: shared/swift/NOTICE.md).
	@rm -rf build/fuzz/fuzz_swift_demangle-seeds && mkdir -p build/fuzz/fuzz_swift_demangle-seeds
	@sed -ne '/--->/s/ *--->.*$$//p' $(STALLSCOPE_SHARED)/swift/manglings.txt | tr -d ' ' | \
		awk '{ f = "build/fuzz/fuzz_swift_demangle-seeds/" NR; printf "%s", $$0 > f; close(f) }'
	@set -e; for f in $(FUZZ_SRCS); do \
		n=$$(basename $$f .c); \
		clang -std=c11 -D_GNU_SOURCE -I. -O1 -g \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
			-o build/fuzz/$$n $$f $(LINK_LIBS:$(BUILD)/%=build/fuzz/%) $(LIBS); \
		mkdir -p build/fuzz/$$n-corpus; \
		echo "== $$n for $(FUZZ_SECONDS)s"; \
		build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 build/fuzz/$$n-corpus fuzz/corpus/$$n \
			$$(ls -d build/fuzz/$$n-seeds 2>/dev/null); \
	done

bench: test-deps
	$(MAKE) all
	bench/symbolicate.sh
	bench/ingest.sh

# docs/OPERATIONS.md's settings table, from the binary's own table
# (server/service/config.c); a test fails while the two differ.
docs: $(BUILD)/stallscope
	$(PYTHON) scripts/settings-doc.py $(BUILD)/stallscope docs/OPERATIONS.md

# No product function over 80 lines; the check's own test comes first.
check-length:
	$(PYTHON) scripts/check-function-length-test.py
	$(PYTHON) scripts/check-function-length.py

# The C lines changed since the branch left main follow .clang-format
# (docs/STYLE.md; STYLE_BASE=<commit> picks another base).
style:
	$(PYTHON) scripts/check-style.py

clean:
	rm -rf build

help:
	@echo "make            build build/stallscope"
	@echo "make run        install what is missing, start PostgreSQL and serve on 127.0.0.1:8080"
	@echo "make test       layering check, unit, oracle and integration tests (real PostgreSQL, real HTTP)"
	@echo "make asan       the same tests under ASan + UBSan"
	@echo "make fuzz       libFuzzer targets, FUZZ_SECONDS each (default 60)"
	@echo "make bench      benchmarks against llvm-symbolizer / llvm-gsymutil / PostgreSQL"
	@echo "make docs       regenerate docs/OPERATIONS.md's settings table from the code's"
	@echo "make fixtures   build the Mach-O/dSYM test fixtures under build/fixtures"
	@echo "make style      the C lines changed since the branch left main follow .clang-format"
	@echo "make check-length  fail on a product C function over 80 lines (run by make test)"

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

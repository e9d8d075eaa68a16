# lscat — see README.md.
#   make            install missing Debian packages (mk/deps.sh), build every program
#   make run        build, then run the whole pipeline on the bundled sample
#   make test       build and run every unit and end-to-end test (SANITIZE=1: under ASan+UBSan)
#   make test-gpu   the GPU tests (on a machine with a CUDA device; skipped otherwise)
#   make bench      the benchmarks
#   make install PREFIX=/usr/local
# Each stage adds its programs and tests in <stage>/module.mk; this file holds the shared rules.

.DEFAULT_GOAL := all
SHELL := /bin/bash

SANITIZE ?= 0
ifeq ($(SANITIZE),1)
B := build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The tests' leak checks skip third-party libraries' own leaks (each entry says why); the
# rest of the sanitizer options are tests/run.sh's (report files, exit status).
SAN_ENV := LSAN_OPTIONS="$${LSAN_OPTIONS:+$$LSAN_OPTIONS:}suppressions=$(CURDIR)/tests/support/lsan.supp:print_suppressions=0"
else
B := build
SAN_FLAGS :=
SAN_ENV :=
endif

PREFIX ?= /usr/local
CC ?= cc
CUDA_HOME ?= /usr/local/cuda
NVCC := $(wildcard $(CUDA_HOME)/bin/nvcc)
LLVM_DIR ?= /usr/lib/llvm-22

OPT ?= -O2
CFLAGS := -std=c11 $(OPT) -g -Wall -Wextra -Werror -pthread $(SAN_FLAGS) $(EXTRA_CFLAGS)
CPPFLAGS := -I. -I$(B)/gen -D_GNU_SOURCE
LDFLAGS := -pthread $(SAN_FLAGS) $(EXTRA_LDFLAGS)
LDLIBS := -lm

# Packages first: pkg-config and headers must exist before anything else is evaluated.
# NO_DEPS=1 skips the package step (machines that are not Debian, e.g. the GPU hosts).
NO_DEPS_GOALS := clean help
ifeq ($(filter $(NO_DEPS_GOALS),$(MAKECMDGOALS))$(filter 1,$(NO_DEPS)),)
ifneq ($(shell test $(B)/.deps-ok -nt mk/deps.sh && echo ok),ok)
DEPS_RC := $(shell mk/deps.sh >&2; rc=$$?; [ $$rc = 0 ] && mkdir -p $(B) && touch $(B)/.deps-ok; echo $$rc)
ifneq ($(DEPS_RC),0)
$(error missing Debian packages could not be installed (see above))
endif
endif
endif
$(shell mk/version.sh $(B)/gen/version.h)

# PROGRAMS: what a user runs, installed by `make install`. TEST_PROGRAMS: stand-ins, GPU test
# programs and fixture harnesses that only the tests run; built by `make`, never installed.
PROGRAMS :=
TEST_PROGRAMS :=
SKIPPED :=
TEST_DIRS :=

# ---- common: helpers every stage links
COMMON_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard common/*.c))
$(B)/libcommon.a: $(COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
TEST_LIBS_common := $(B)/libcommon.a

# ---- the dispatcher
PROGRAMS += $(B)/bin/lscat
$(B)/bin/lscat: $(B)/lscat.o $(B)/gen/schema.o $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---- schema: migrations embedded into the programs
SCHEMA_SQL := $(sort $(wildcard schema/[0-9][0-9][0-9]_*.sql))
$(B)/gen/schema.c: $(SCHEMA_SQL) mk/embed-sql.sh
	@mkdir -p $(@D)
	mk/embed-sql.sh $@ $(SCHEMA_SQL)

# store/ first: every other room's libraries name $(STORE_LIBS).
include store/module.mk
include $(filter-out store/module.mk,$(sort $(wildcard */module.mk)))

# ---- generic rules
$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/gen/%.o: $(B)/gen/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Test support (tests/support/*.c) is linked into every test program.
TEST_SUPPORT_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard tests/support/*.c))
$(B)/libtest.a: $(TEST_SUPPORT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# Every tests/<dir>/*.c is one test program, linked with TEST_LIBS_<dir> (set by the module).
TEST_DIRS += common
define test_dir_rules
TEST_BINS += $$(patsubst tests/$(1)/%.c,$$(B)/tests/$(1)/%,$$(wildcard tests/$(1)/*.c))
$$(B)/tests/$(1)/%: $$(B)/tests/$(1)/%.o $$(B)/libtest.a $$(filter %.a,$$(TEST_LIBS_$(1)))
	$$(CC) $$(LDFLAGS) -o $$@ $$< $$(B)/libtest.a $$(TEST_LIBS_$(1)) $$(TEST_LDLIBS_$(1)) $$(LDLIBS)
endef
TEST_BINS :=
$(foreach d,$(sort $(TEST_DIRS)),$(eval $(call test_dir_rules,$(d))))

# Every installed program lives in $(B)/bin: a module that lists anything else in PROGRAMS
# (a test program, a fixture) stops `make install` before it installs anything.
STRAY_PROGRAMS := $(filter-out $(B)/bin/%,$(PROGRAMS))
ifneq ($(filter install,$(MAKECMDGOALS)),)
ifneq ($(STRAY_PROGRAMS),)
$(error PROGRAMS lists files outside $(B)/bin: $(STRAY_PROGRAMS) (test programs belong in TEST_PROGRAMS))
endif
endif

.PHONY: all run test test-gpu bench install clean help
all: $(PROGRAMS) $(TEST_PROGRAMS) $(TEST_BINS)
	@$(if $(SKIPPED),printf 'lscat: skipped (not built here): %s\n' "$(SKIPPED)" >&2,true)

run: all
	LSCAT_BIN=$(B)/bin scripts/run-sample.sh

test: all
	$(SAN_ENV) LSCAT_BIN=$(B)/bin LSCAT_TEST_BIN=$(B)/tests SANITIZE=$(SANITIZE) tests/run.sh

test-gpu: all
	$(SAN_ENV) LSCAT_BIN=$(B)/bin LSCAT_TEST_BIN=$(B)/tests SANITIZE=$(SANITIZE) LSCAT_GPU_ONLY=1 tests/run.sh

bench: all
	LSCAT_BIN=$(B)/bin bench/run.sh

# Installs PROGRAMS only and, through the modules' install-* rules, the data they need.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf build build-san

help:
	@sed -n '2,8p' Makefile

# Keep objects of test programs (make would delete them as intermediates).
.SECONDARY:

# Objects wait for the generated headers.
$(COMMON_OBJS) $(B)/lscat.o: | $(B)/gen/schema.c
-include $(shell find $(B) -name '*.d' 2>/dev/null)

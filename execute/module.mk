# execute/: build every isolated kernel's harness with nvcc on all cores, classify and repair
# failures, probe-run in a sandbox. Library libexecute.a, program lscat-execute.
EXECUTE_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out execute/cmd.c,$(wildcard execute/*.c)))
$(B)/libexecute.a: $(EXECUTE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
EXECUTE_LIBS := $(B)/libexecute.a $(STORE_LIBS)

# Where the timing core's and the harness core's sources are found at run time (LSCAT_SHARE_DIR
# overrides; an installed lscat looks in <prefix>/share/lscat first), and which they are
# (tune/module.mk's TIMING_CORE_SRCS, isolate/module.mk's HARNESS_CORE_SRCS, as "a","b", for the
# cores' hash).
$(B)/execute/build.o: CPPFLAGS += -DLSCAT_SOURCE_DIR='"$(CURDIR)"' \
    -DLSCAT_TIMING_CORE_FILES='$(foreach f,$(TIMING_CORE_SRCS),"$(f)",)' \
    -DLSCAT_HARNESS_CORE_FILES='$(foreach f,$(HARNESS_CORE_SRCS),"$(f)",)'
$(B)/execute/build.o: tune/module.mk isolate/module.mk

PROGRAMS += $(B)/bin/lscat-execute
$(B)/bin/lscat-execute: $(B)/execute/cmd.o $(B)/libexecute.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(EXECUTE_LIBS) $(LDLIBS)

TEST_DIRS += execute
$(EXECUTE_OBJS) $(B)/execute/cmd.o: | $(B)/gen/schema.c

# make install ships the timing core's sources, which every harness build compiles.
install: install-execute-share
.PHONY: install-execute-share
install-execute-share: all
	install -d $(DESTDIR)$(PREFIX)/share/lscat/tune
	install -m 0644 $(wildcard $(TIMING_CORE_SRCS)) \
		$(DESTDIR)$(PREFIX)/share/lscat/tune/

# Test support for execute's tests: fixture work folders.
EXECUTE_TEST_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard tests/execute/support/*.c))
$(B)/libexecute_test.a: $(EXECUTE_TEST_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
TEST_LIBS_execute := $(B)/libexecute_test.a $(EXECUTE_LIBS)
$(EXECUTE_TEST_OBJS): | $(B)/gen/schema.c

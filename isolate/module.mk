# isolate/: libclang (LLVM 22) kernel discovery, closure, parameter model and harness generation.
# lscat-isolate links libclang with an rpath so no LD_LIBRARY_PATH is needed.
# The files that include libclang's headers: the extractor (extract, closure, emit), kparams and
# tinst/tuse (template arguments from call sites and from uses), launch (the source's own launch).
ISOLATE_CLANG_OBJS := $(B)/isolate/extract.o $(B)/isolate/closure.o $(B)/isolate/emit.o \
                      $(B)/isolate/kparams.o $(B)/isolate/members.o $(B)/isolate/tinst.o \
                      $(B)/isolate/tuse.o $(B)/isolate/launch.o $(B)/isolate/fixed.o
ISOLATE_OBJS := $(B)/isolate/params.o $(B)/isolate/indexing.o $(ISOLATE_CLANG_OBJS) \
                $(B)/isolate/srctext.o $(B)/isolate/resolve.o $(B)/isolate/sysinc.o \
                $(B)/isolate/harness.o $(B)/isolate/tiles.o $(B)/isolate/kstore.o $(B)/isolate/isolate.o $(B)/gen/isolate_harness_body.o
ISOLATE_CLANG_LIBS := -L$(LLVM_DIR)/lib -lclang -Wl,-rpath,$(LLVM_DIR)/lib
$(B)/libisolate.a: $(ISOLATE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
$(ISOLATE_CLANG_OBJS): CPPFLAGS += -I$(LLVM_DIR)/include

# The part of every harness that is the same text for every kernel and templated on its argument
# types (isolate/harness_kernel.cu.in), embedded as one C string; the rest is the harness core
# (HARNESS_CORE_SRCS), compiled once per run and linked into every harness (execute/build.c).
HARNESS_CORE_SRCS := isolate/harness_core.h isolate/harness_core.cu
$(B)/gen/isolate_harness_body.c: isolate/harness_kernel.cu.in
	@mkdir -p $(@D)
	{ echo '/* generated from $< */'; \
	  echo 'const char harness_body_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

PROGRAMS += $(B)/bin/lscat-isolate
$(B)/bin/lscat-isolate: $(B)/isolate/cmd.o $(B)/libisolate.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/libisolate.a $(STORE_LIBS) $(ISOLATE_CLANG_LIBS) $(LDLIBS)

TEST_DIRS += isolate
TEST_LIBS_isolate := $(B)/libisolate.a $(STORE_LIBS)
TEST_LDLIBS_isolate := $(ISOLATE_CLANG_LIBS)
$(ISOLATE_OBJS) $(B)/isolate/cmd.o: | $(B)/gen/schema.c
$(B)/isolate/sysinc.o: CPPFLAGS += -DLSCAT_SOURCE_DIR='"$(CURDIR)"'

# make install ships lscat's own stand-ins for the CUDA samples' helper headers (isolate/compat)
# and the harness core's sources, which every harness build compiles.
install: install-isolate-share
.PHONY: install-isolate-share
install-isolate-share: all
	install -d $(DESTDIR)$(PREFIX)/share/lscat/isolate/compat
	install -m 0644 $(HARNESS_CORE_SRCS) $(DESTDIR)$(PREFIX)/share/lscat/isolate/
	install -m 0644 $(wildcard isolate/compat/*.h) $(DESTDIR)$(PREFIX)/share/lscat/isolate/compat/

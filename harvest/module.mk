# harvest/: GH Archive scan, repository list import, GitHub search, repository download and
# safe extraction. Links libcurl, jansson, libarchive, libgit2, and ISA-L (zlib when missing).
HARVEST_SRCS := $(filter-out harvest/cmd.c,$(wildcard harvest/*.c))
HARVEST_OBJS := $(patsubst %.c,$(B)/%.o,$(HARVEST_SRCS))
ifneq ($(wildcard /usr/include/isa-l/igzip_lib.h),)
HARVEST_CPPFLAGS := -DLSCAT_HAVE_ISAL
HARVEST_INFLATE_LIB := -lisal
else
HARVEST_CPPFLAGS :=
HARVEST_INFLATE_LIB := -lz
endif
$(HARVEST_OBJS) $(B)/harvest/cmd.o: CPPFLAGS += $(HARVEST_CPPFLAGS)
$(HARVEST_OBJS) $(B)/harvest/cmd.o: | $(B)/gen/schema.c

$(B)/libharvest.a: $(HARVEST_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
HARVEST_LIBS := $(B)/libharvest.a $(STORE_LIBS) -lcurl -ljansson -larchive -lgit2 \
	$(HARVEST_INFLATE_LIB)

PROGRAMS += $(B)/bin/lscat-harvest
$(B)/bin/lscat-harvest: $(B)/harvest/cmd.o $(B)/libharvest.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(HARVEST_LIBS) $(LDLIBS)

TEST_DIRS += harvest
TEST_LIBS_harvest := $(HARVEST_LIBS)

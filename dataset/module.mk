# dataset/: the store (SQLite) and its commands. Later: Parquet/CSV export, merge, report.
STORE_OBJS := $(B)/dataset/store.o $(B)/dataset/status.o $(B)/gen/schema.o
$(B)/libstore.a: $(STORE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
STORE_LIBS := $(B)/libstore.a $(B)/libcommon.a -lsqlite3

PROGRAMS += $(B)/bin/lscat-status $(B)/bin/lscat-init
$(B)/bin/lscat-status: $(B)/dataset/cmd_status.o $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(STORE_LIBS) $(LDLIBS)
$(B)/bin/lscat-init: $(B)/dataset/cmd_init.o $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(STORE_LIBS) $(LDLIBS)

TEST_DIRS += dataset
TEST_LIBS_dataset := $(STORE_LIBS)
$(B)/dataset/store.o: | $(B)/gen/schema.c

# store/: the store API over SQLite (migrations, stage-run bookkeeping, a stage's begin/end,
# status summary) and its two commands, `lscat init` and `lscat status`. Every stage links libstore.a.
STORE_OBJS := $(B)/store/store.o $(B)/store/stage.o $(B)/store/status.o $(B)/gen/schema.o
$(B)/libstore.a: $(STORE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
STORE_LIBS := $(B)/libstore.a $(B)/libcommon.a -lsqlite3

PROGRAMS += $(B)/bin/lscat-status $(B)/bin/lscat-init
$(B)/bin/lscat-status: $(B)/store/cmd_status.o $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(STORE_LIBS) $(LDLIBS)
$(B)/bin/lscat-init: $(B)/store/cmd_init.o $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(STORE_LIBS) $(LDLIBS)


TEST_DIRS += store
TEST_LIBS_store := $(STORE_LIBS)
$(STORE_OBJS) $(B)/store/cmd_init.o $(B)/store/cmd_status.o: | $(B)/gen/schema.c

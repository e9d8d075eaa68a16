# nightly/: `lscat nightly`, the whole regeneration as one command (cron, systemd timer) and the
# dated releases it publishes. It runs the other lscat programs as child processes, so it links
# only the store, common/ and jansson (release.json, index.json).
NIGHTLY_SRCS := lock.c run.c summary.c release.c files.c site.c
NIGHTLY_OBJS := $(patsubst %.c,$(B)/nightly/%.o,$(NIGHTLY_SRCS))
$(B)/libnightly.a: $(NIGHTLY_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
NIGHTLY_LIBS := $(B)/libnightly.a $(STORE_LIBS) -ljansson

PROGRAMS += $(B)/bin/lscat-nightly
$(B)/bin/lscat-nightly: $(B)/nightly/cmd.o $(B)/libnightly.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(NIGHTLY_LIBS) $(LDLIBS)

TEST_DIRS += nightly
TEST_LIBS_nightly := $(NIGHTLY_LIBS)
$(B)/nightly/cmd.o $(NIGHTLY_OBJS): | $(B)/gen/schema.c

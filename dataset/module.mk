# dataset/: the store (SQLite) and its commands: status, init, and `lscat dataset` (Parquet and
# CSV export with a data card, merge of shard stores, the LS-CAT report).
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

# libdataset: the Parquet writer, CSV writer, export, merge and report.
DATASET_SRCS := thrift.c parquet.c parquet_encode.c text.c columns.c csv.c export.c card.c \
                dtoa.c                 merge.c report.c
DATASET_OBJS := $(patsubst %.c,$(B)/dataset/%.o,$(DATASET_SRCS))
$(B)/libdataset.a: $(DATASET_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
DATASET_LIBS := $(B)/libdataset.a $(STORE_LIBS) -lzstd -lz

PROGRAMS += $(B)/bin/lscat-dataset
$(B)/bin/lscat-dataset: $(B)/dataset/cmd.o $(B)/libdataset.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(DATASET_LIBS) $(LDLIBS)

TEST_DIRS += dataset
TEST_LIBS_dataset := $(DATASET_LIBS)
$(B)/dataset/store.o $(B)/dataset/cmd.o $(DATASET_OBJS): | $(B)/gen/schema.c

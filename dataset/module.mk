# dataset/: `lscat dataset`: Parquet and CSV export with a data card, merge of shard stores, the
# LS-CAT report. It reads the store through store/.
# libdataset: the Parquet writer, CSV writer, export, merge and report.
DATASET_SRCS := thrift.c parquet.c parquet_page.c parquet_encode.c text.c columns.c csv.c \
                export.c card.c dtoa.c nested.c place.c merge.c report.c
DATASET_OBJS := $(patsubst %.c,$(B)/dataset/%.o,$(DATASET_SRCS))
$(B)/libdataset.a: $(DATASET_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
DATASET_LIBS := $(B)/libdataset.a $(STORE_LIBS) -lzstd -lz -ljansson -ldl

PROGRAMS += $(B)/bin/lscat-dataset
$(B)/bin/lscat-dataset: $(B)/dataset/cmd.o $(B)/libdataset.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(DATASET_LIBS) $(LDLIBS)

TEST_DIRS += dataset
TEST_LIBS_dataset := $(DATASET_LIBS)
$(B)/dataset/cmd.o $(DATASET_OBJS): | $(B)/gen/schema.c

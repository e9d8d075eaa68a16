# mcts/: `lscat mcts`, Tenzing-style design rules for CUDA+MPI programs (docs/mcts.md): the DAG
# format, synchronisation insertion, enumeration, the search and its back ends, rules. The
# library and lscat-mcts run on any machine; only the SpMV back end links MPI and CUDA.
MCTS_SRCS := dag.c seq.c sync.c keyset.c enumerate.c replay.c search.c results.c run.c \
             features.c
MCTS_OBJS := $(patsubst %.c,$(B)/mcts/%.o,$(MCTS_SRCS))
$(B)/libmcts.a: $(MCTS_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
MCTS_LIBS := $(B)/libmcts.a $(STORE_LIBS) -ljansson

TEST_DIRS += mcts
TEST_LIBS_mcts := $(MCTS_LIBS)
$(MCTS_OBJS): | $(B)/gen/schema.c

PROGRAMS += $(B)/bin/lscat-mcts
$(B)/bin/lscat-mcts: $(B)/mcts/cmd.o $(B)/libmcts.a $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(MCTS_LIBS) $(LDLIBS)
$(B)/mcts/cmd.o: | $(B)/gen/schema.c

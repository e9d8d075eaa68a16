# mcts/: `lscat mcts`, Tenzing-style design rules for CUDA+MPI programs (docs/mcts.md): the DAG
# format, synchronisation insertion, enumeration, the search and its back ends, rules. The
# library and lscat-mcts run on any machine; only the SpMV back end links MPI and CUDA.
MCTS_SRCS := dag.c seq.c sync.c keyset.c enumerate.c replay.c search.c results.c run.c \
             features.c rules_read.c
# `lscat mcts rules` needs learn/ (CART, peak finding), from the learn branch; until it is in
# the tree, lscat-mcts is built without the rules subcommand.
ifneq ($(wildcard learn/tree.h),)
MCTS_SRCS += rules.c cmd_rules.c
MCTS_LEARN := $(B)/liblearn.a
$(B)/mcts/cmd.o: CPPFLAGS += -DMCTS_HAVE_LEARN
endif
MCTS_OBJS := $(patsubst %.c,$(B)/mcts/%.o,$(MCTS_SRCS))
$(B)/libmcts.a: $(MCTS_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
MCTS_LIBS := $(B)/libmcts.a $(MCTS_LEARN) $(STORE_LIBS) -ljansson

TEST_DIRS += mcts
TEST_LIBS_mcts := $(MCTS_LIBS)
$(MCTS_OBJS): | $(B)/gen/schema.c

PROGRAMS += $(B)/bin/lscat-mcts
$(B)/bin/lscat-mcts: $(B)/mcts/cmd.o $(B)/libmcts.a $(MCTS_LEARN) $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(MCTS_LIBS) $(LDLIBS)
$(B)/mcts/cmd.o: | $(B)/gen/schema.c

# ---- the SpMV back end: the only part that links MPI (mpicc) and CUDA (cudart, cuSPARSE).
# Its MPI exchange builds wherever Open MPI is installed and is tested in CI under mpirun
# (tests/e2e/mcts_mpi.sh); lscat-mcts-spmv needs nvcc too.
MPICC ?= $(shell command -v mpicc)
ifneq ($(MPICC),)
SPMV_MPI_OBJS := $(B)/mcts/spmv/problem.o $(B)/mcts/spmv/exchange.o
$(B)/mcts/spmv/%.o: mcts/spmv/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(B)/tests/mcts/mpi/exchange: tests/mcts/mpi/exchange.c $(SPMV_MPI_OBJS) $(B)/libtest.a $(B)/libcommon.a
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(SPMV_MPI_OBJS) $(B)/libtest.a $(B)/libcommon.a -lm
TEST_PROGRAMS += $(B)/tests/mcts/mpi/exchange
ifneq ($(NVCC),)
ifneq ($(SANITIZE),1)
SPMV_GPU_OBJS := $(B)/mcts/spmv/main.o $(B)/mcts/spmv/gpu.o $(B)/mcts/spmv/kernels.o \
                 $(SPMV_MPI_OBJS)
$(B)/mcts/spmv/main.o $(B)/mcts/spmv/gpu.o: CPPFLAGS += -isystem $(CUDA_HOME)/include
$(B)/mcts/spmv/kernels.o: mcts/spmv/kernels.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@
PROGRAMS += $(B)/bin/lscat-mcts-spmv
$(B)/bin/lscat-mcts-spmv: $(SPMV_GPU_OBJS) $(B)/tune/timing.cu.o $(B)/tune/stats.cu-host.o \
                          $(B)/libmcts.a $(MCTS_LEARN) $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(MCTS_LIBS) \
	    -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcusparse -lcudart -lstdc++ -ldl $(LDLIBS)
else
SKIPPED += lscat-mcts-spmv
endif
else
SKIPPED += lscat-mcts-spmv
endif
else
SKIPPED += mcts-mpi-exchange-test lscat-mcts-spmv
endif

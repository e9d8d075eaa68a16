# seer/: `lscat seer` (docs/seer.md): Matrix Market reader, generators and CSR/ELL/COO on the
# host (libseer.a, plain C), the bench driver, train and eval (lscat-seer: no CUDA), and the GPU
# worker lscat-seer-gpu (SpMV + feature kernels, cuSPARSE, the timing core), built only where
# nvcc exists. The runtime sources of seer_select() are embedded so train can write them out.
SEER_HOST_OBJS := $(patsubst %.c,$(B)/seer/%.o,csr.c mtx.c gen.c)
$(B)/libseer.a: $(SEER_HOST_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

SEER_TOOL_OBJS := $(patsubst %.c,$(B)/seer/%.o,db.c table.c bench.c train.c guard.c model.c \
                    eval.c plot.c) $(B)/gen/seer_runtime.o
$(B)/libseertool.a: $(SEER_TOOL_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
SEER_LIBS := $(B)/libseertool.a $(B)/libseer.a $(B)/liblearn.a $(STORE_LIBS) -ljansson -lm

$(B)/gen/seer_runtime.c: seer/seer_select.h seer/seer_select.cu seer/seer_features.cuh \
                         seer/seer_derived.h seer/runtime.mk mk/embed-files.sh
	@mkdir -p $(@D)
	mk/embed-files.sh $@ seer_rt_select_h=seer/seer_select.h seer_rt_select_cu=seer/seer_select.cu \
	    seer_rt_features_cuh=seer/seer_features.cuh seer_rt_derived_h=seer/seer_derived.h \
	    seer_rt_makefile=seer/runtime.mk

PROGRAMS += $(B)/bin/lscat-seer
$(B)/bin/lscat-seer: $(B)/seer/cmd.o $(B)/libseertool.a $(B)/libseer.a $(B)/liblearn.a \
                     $(B)/libstore.a $(B)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(SEER_LIBS) $(LDLIBS)

TEST_DIRS += seer
TEST_LIBS_seer := $(SEER_LIBS)
$(B)/seer/cmd.o $(SEER_TOOL_OBJS): | $(B)/gen/schema.c

# The cost-model fixture generator (tests only; docs/seer.md "The CI fixture").
TEST_PROGRAMS += $(B)/tests/seer/support/seer_costmodel
$(B)/tests/seer/support/seer_costmodel: $(B)/tests/seer/support/costmodel.o $(B)/libseer.a \
                                        $(B)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

ifneq ($(NVCC),)
ifeq ($(SANITIZE),1)
SKIPPED += lscat-seer-gpu seer-gpu-tests
else
# Host objects for nvcc links: without sanitizer flags (CUDA programs are never sanitised).
SEER_CU_HOST := $(patsubst %.c,$(B)/seer/%.cu-host.o,csr.c mtx.c gen.c) \
                $(B)/common/error.cu-host.o $(B)/common/xalloc.cu-host.o
$(B)/seer/%.cu-host.o: seer/%.c
	@mkdir -p $(@D)
	$(NVCC) -O2 -I. -D_GNU_SOURCE -Xcompiler -std=c11 -x c -c $< -o $@
$(B)/common/%.cu-host.o: common/%.c
	@mkdir -p $(@D)
	$(NVCC) -O2 -I. -I$(B)/gen -D_GNU_SOURCE -Xcompiler -std=c11 -x c -c $< -o $@
SEER_GPU_SRCS := seer/gpu_main.cu seer/gpu_kernels.cu
SEER_GPU_HDRS := seer/gpu.h seer/spmv.cuh seer/seer_features.cuh seer/kernels.h tune/timing.h
$(B)/seer/%.cu.o: seer/%.cu $(SEER_GPU_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@
PROGRAMS += $(B)/bin/lscat-seer-gpu
# (tune/module.mk, read after this file, builds the timing core's two objects.)
$(B)/bin/lscat-seer-gpu: $(patsubst seer/%.cu,$(B)/seer/%.cu.o,$(SEER_GPU_SRCS)) $(SEER_CU_HOST) \
                         $(B)/tune/timing.cu.o $(B)/tune/stats.cu-host.o
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $^ -lcusparse -Xlinker -rpath=$(CUDA_HOME)/lib64
# What gathering the features costs, shipped path against one-launch variants
# (scripts/device-seer-features.sh; docs/seer.md "Session 6").
TEST_PROGRAMS += $(B)/tests/seer/support/seer_feature_cost
$(B)/tests/seer/support/seer_feature_cost: tests/seer/support/feature_cost.cu seer/seer_features.cuh
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $< -Xlinker -rpath=$(CUDA_HOME)/lib64
endif
else
SKIPPED += lscat-seer-gpu seer-gpu-tests
endif
